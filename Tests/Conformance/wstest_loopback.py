# Python 2.7 (runs in the Autobahn env): wstest whose server modes bind 127.0.0.1 only.
# wstest has no flag for the interface; every listenTCP call gets interface="127.0.0.1".
import sys

from twisted.internet import reactor

_listen_tcp = reactor.listenTCP


def listen_on_loopback(port, factory, backlog=50, interface=""):
    return _listen_tcp(port, factory, backlog, interface or "127.0.0.1")


reactor.listenTCP = listen_on_loopback

from autobahntestsuite.wstest import run

sys.argv[0] = "wstest"
sys.exit(run())
