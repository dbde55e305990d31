"""The hub's HTTP/1.1 request parser against an independent strict one, Python's h11, on raw
sockets to a real hub's client port and admin port, with nothing in front (issue #24 item 11,
STYLE §9: every parser meets the strictest peer).

For every request of the corpus, valid and hostile:
- h11 refuses it -> the hub answers the status the corpus names (400; 501 for a transfer coding
  it does not decode; 505 for a version it does not speak) with `Connection: close`, answers
  nothing else (not the request pipelined after it) and closes;
- h11 accepts it -> the hub does not refuse it as unparseable (no 400: the target is a path
  neither port serves, so the answer is a 404, 401 or 411) — unless it is in STRICTER, the
  requests we refuse on purpose though h11 reads them, each with its reason (llhttp, the parser
  of Node and of proxies built on it, refuses all of them in its strict mode, or RFC 9112 asks
  for the refusal); then it is refused like the first case.
"""
import socket
import time

import h11
import pytest

from conftest import Hub

TARGET = b"/nowhere"  # served by neither port: a request read as valid is a 404 (or 401, 411)
FOLLOW_UP = b"GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n"  # pipelined after each request


def head(*lines, method=b"GET", target=TARGET, version=b"HTTP/1.1", host=True, body=b""):
    """A request: the request line, Host (unless host is False), `lines`, the blank line, `body`."""
    fields = ([b"Host: 127.0.0.1"] if host else []) + list(lines)
    return method + b" " + target + b" " + version + b"\r\n" + b"".join(f + b"\r\n" for f in fields) + b"\r\n" + body


# (name, request bytes, the status we refuse it with, or None when we read it as a request)
CORPUS = [
    # -- valid: h11 and the hub read these
    ("plain GET", head(), None),
    ("HTTP/1.0 without Host", head(version=b"HTTP/1.0", host=False), None),
    ("HTTP/1.0 with Host", head(version=b"HTTP/1.0"), None),
    ("obs-text (UTF-8) in a value", head("X-Name: café".encode()), None),
    ("HTAB and spaces inside a value", head(b"X-A: a \t b"), None),
    ("OWS around a value", head(b"X-A: \t v \t "), None),
    ("an empty value", head(b"X-Empty:"), None),
    ("every tchar in a header name", head(b"!#$%&'*+-.^_`|~09azAZ: v"), None),
    ("a lower-case method token", head(method=b"get"), None),
    ("an unknown method token", head(method=b"PURGE"), None),
    ("HEAD", head(method=b"HEAD"), None),
    ("POST with a body", head(b"Content-Length: 5", method=b"POST", body=b"hello"), None),
    ("POST with Content-Length: 0", head(b"Content-Length: 0", method=b"POST"), None),
    ("Content-Length with leading zeros", head(b"Content-Length: 005", method=b"POST", body=b"hello"), None),
    ("a query with percent-encoding", head(target=TARGET + b"?a=%20b&c=d+e&f"), None),
    ("Transfer-Encoding: chunked alone", head(b"Transfer-Encoding: chunked", method=b"POST", body=b"0\r\n\r\n"), None),
    ("Transfer-Encoding: Chunked (case)", head(b"Transfer-Encoding: Chunked", method=b"POST", body=b"0\r\n\r\n"), None),
    ("absolute form", head(target=b"http://127.0.0.1" + TARGET), None),
    ("absolute form, https and a port", head(target=b"HTTPS://127.0.0.1:443" + TARGET + b"?q=1"), None),
    ("a Host with a port", head(b"Host: 127.0.0.1:8080", host=False), None),
    ("a Host that is an IPv6 literal", head(b"Host: [::1]:8080", host=False), None),
    ("an empty Host", head(b"Host:", host=False), None),
    ("a value with colons and quotes", head(b'X-A: "q:1", w/"2"'), None),
    ("fifty headers", head(*[b"X-%d: %d" % (i, i) for i in range(50)]), None),
    ("Connection: close", head(b"Connection: close"), None),
    ("a fragment in the target", head(target=TARGET + b"#top"), None),
    # -- line endings (RFC 9112 §2.2): a CR is only ever the first half of CRLF
    ("bare CR inside a value", head(b"X: a\rb"), 400),
    ("bare CR between two headers", head(b"Foo: 1\rBar: 2"), 400),
    ("bare CR ending the request line", b"GET " + TARGET + b" HTTP/1.1\r\rHost: x\r\n\r\n", 400),
    ("bare CR before a smuggled request line", head(b"\rZGET /evil HTTP/1.1", b"Host: a"), 400),
    ("bare CR in a header name", head(b"Content\rLength: 3", method=b"PUT", body=b"abc"), 400),
    ("bare CR in an empty value hiding a header", head(b"x:\rTransfer-Encoding: chunked", method=b"POST"), 400),
    ("bare CR before the request line", b"\r" + head(), 400),
    ("bare LF before the request line", b"\n" + head(), 400),
    ("an empty line before the request line", b"\r\n" + head(), 400),
    ("bare LF line endings", head().replace(b"\r\n", b"\n"), 400),
    ("bare LF inside a header line", head(b"Dummy: x\nContent-Length: 23", method=b"POST"), 400),
    ("bare LF ending the head", head()[:-2] + b"\n", 400),
    # -- control characters (RFC 9110 §5.5): HTAB is the only one a value may hold
    ("NUL in a value", head(b"X: a\x00b"), 400),
    ("NUL in a name", head(b"X\x00Y: b"), 400),
    ("SOH in a value", head(b"X: a\x01b"), 400),
    ("VT in a value", head(b"X: a\x0bb"), 400),
    ("FF as a value", head(b"Header1: \x0c"), 400),
    ("ESC in a value", head(b"X: \x1b[31mred"), 400),
    ("DEL in a value", head(b"X: a\x7f"), 400),
    # -- header names and folding (RFC 9112 §5.1, §5.2)
    ("whitespace before the colon", head(b"Host : x", host=False), 400),
    ("a tab before the colon", head(b"Content-Length\t: 0"), 400),
    ("'@' in a name", head(b"Fo@: Failure"), 400),
    ("'(' in a name", head(b"X(Y): z"), 400),
    ("a non-ASCII name", head("Café: x".encode()), 400),
    ("an empty name", head(b": Bar"), 400),
    ("obs-fold continuing a value", head(b"X: a", b" b"), 400),
    ("obs-fold hiding a Content-Length", head(b"Foo: bar", b" Content-Length: 38", method=b"POST"), 400),
    ("a first header line starting with a space", head(b" X: y", host=False), 400),
    ("a folded header name", head(b"name", b" : value"), 400),
    # -- the request line (RFC 9112 §3)
    ("'(' in the method", head(method=b"G(T"), 400),
    ("NUL in the method", head(method=b"GE\x00T"), 400),
    ("an empty method", head(method=b""), 400),
    ("a space before the method", head(method=b" GET"), 400),
    ("two spaces after the method", head(method=b"GET "), 400),
    ("a tab for a space", b"GET\t" + TARGET + b" HTTP/1.1\r\nHost: x\r\n\r\n", 400),
    ("a space in the target", head(target=TARGET + b" x"), 400),
    ("a control character in the target", head(target=TARGET + b"\x01"), 400),
    ("a non-ASCII byte in the target", head(target="/nowhére".encode()), 400),
    ("a target in no form", head(target=b"nowhere"), 400),
    ("asterisk form", head(method=b"OPTIONS", target=b"*"), 400),
    ("authority form", head(method=b"CONNECT", target=b"127.0.0.1:443"), 400),
    ("absolute form with userinfo", head(target=b"http://u@127.0.0.1" + TARGET), 400),
    ("no version", b"GET " + TARGET + b"\r\nHost: x\r\n\r\n", 400),
    ("a lower-case HTTP name", head(version=b"http/1.1"), 400),
    ("a mixed-case HTTP name", head(version=b"Http/1.1"), 400),
    ("a two-digit major version", head(version=b"HTTP/11.1"), 400),
    ("a space after the version", head(version=b"HTTP/1.1 "), 400),
    ("HTTP/1.2", head(version=b"HTTP/1.2"), 505),
    ("HTTP/2.0 on a request line", head(version=b"HTTP/2.0"), 505),
    ("HTTP/0.9 spelled out", head(version=b"HTTP/0.9", host=False), 505),
    # -- Host (RFC 9112 §3.2)
    ("HTTP/1.1 without Host", head(host=False), 400),
    ("two Host headers", head(b"Host: other"), 400),
    ("two Host headers in HTTP/1.0", head(b"Host: other", version=b"HTTP/1.0"), 400),
    ("a Host with a space", head(b"Host: a b", host=False), 400),
    ("a Host with userinfo", head(b"Host: u@127.0.0.1", host=False), 400),
    # -- body framing (RFC 9112 §6)
    ("two different Content-Lengths", head(b"Content-Length: 0", b"Content-Length: 44", method=b"POST"), 400),
    ("two equal Content-Lengths", head(b"Content-Length: 2", b"Content-Length: 2", method=b"POST", body=b"{}"), 400),
    ("a Content-Length list", head(b"Content-Length: 2, 2", method=b"POST", body=b"{}"), 400),
    ("a conflicting Content-Length list", head(b"Content-Length: 1, 2", method=b"POST", body=b"{}"), 400),
    ("a signed Content-Length", head(b"Content-Length: +2", method=b"POST", body=b"{}"), 400),
    ("a negative Content-Length", head(b"Content-Length: -1", method=b"POST"), 400),
    ("a hexadecimal Content-Length", head(b"Content-Length: 0x2", method=b"POST", body=b"{}"), 400),
    ("a space inside a Content-Length", head(b"Content-Length: 4 2", method=b"POST"), 400),
    ("an empty Content-Length", head(b"Content-Length:", method=b"POST"), 400),
    ("a 20-digit Content-Length", head(b"Content-Length: 99999999999999999999", method=b"POST"), 400),
    ("a 21-digit Content-Length", head(b"Content-Length: 999999999999999999999", method=b"POST"), 400),
    ("Transfer-Encoding with Content-Length",
     head(b"Transfer-Encoding: chunked", b"Content-Length: 5", method=b"POST", body=b"0\r\n\r\n"), 400),
    ("Content-Length with Transfer-Encoding: identity",
     head(b"Content-Length: 1", b"Transfer-Encoding: identity", method=b"POST", body=b"x"), 400),
    ("Transfer-Encoding: gzip", head(b"Transfer-Encoding: gzip", method=b"POST"), 400),
    ("chunked before another coding", head(b"Transfer-Encoding: chunked, gzip", method=b"POST"), 400),
    ("chunked on two lines", head(b"Transfer-Encoding: chunked", b"Transfer-Encoding: chunked", method=b"POST"), 400),
    ("an empty Transfer-Encoding", head(b"Transfer-Encoding:", method=b"POST"), 400),
    ("Transfer-Encoding in HTTP/1.0",
     head(b"Transfer-Encoding: chunked", method=b"POST", version=b"HTTP/1.0", body=b"0\r\n\r\n"), 400),
    ("a coding before chunked", head(b"Transfer-Encoding: gzip, chunked", method=b"POST"), 501),
    ("a coding before chunked, on two lines",
     head(b"Transfer-Encoding: gzip", b"Transfer-Encoding: chunked", method=b"POST"), 501),
]

# Requests h11 reads but the hub refuses, and why. Each is refused by llhttp without lenient
# flags too, or by a rule of RFC 9112 that lets (or tells) a server refuse it.
STRICTER = {
    "bare LF line endings": "RFC 9112 §2.2 lets a server refuse bare LF; llhttp: 'Expected CRLF after version'",
    "bare LF inside a header line": "the line a proxy that splits on CRLF only reads as one header (llhttp refuses)",
    "bare LF ending the head": "bare LF, as above",
    "SOH in a value": "RFC 9110 §5.5: no control character but HTAB in a value; llhttp: 'Invalid header value char'",
    "ESC in a value": "control character, as above",
    "DEL in a value": "DEL is no field-vchar (RFC 9110 §5.5); llhttp refuses it",
    "obs-fold continuing a value": "RFC 9112 §5.2: reject obs-fold with 400 (or unfold it); llhttp refuses it",
    "obs-fold hiding a Content-Length": "obs-fold, as above: a folded 'Content-Length' is a header to a lenient peer",
    "two equal Content-Lengths": "llhttp: 'Duplicate Content-Length'; RFC 9112 §6.3 allows refusing",
    "a Content-Length list": "one run of digits only: llhttp: 'Invalid character in Content-Length'",
    "a 20-digit Content-Length": "past the largest length the hub can count (Int64); llhttp stops at 2^64 - 1",
    "Transfer-Encoding with Content-Length": "RFC 9112 §6.1 lets a server refuse it (and MUST close); llhttp refuses it",
    "Transfer-Encoding in HTTP/1.0": "RFC 9112 §6.1: faulty framing in HTTP/1.0, even with Content-Length",
    "HTTP/1.2": "only HTTP/1.1 and HTTP/1.0 are spoken (505, RFC 9110 §15.6.6); llhttp refuses 1.2",
    "HTTP/2.0 on a request line": "HTTP/2 has no request line; 505 as above",
    "HTTP/0.9 spelled out": "HTTP/0.9 has no version on its request line; 505 as above",
    "a Host with a space": "RFC 9112 §3.2: 400 for a Host with an invalid value (not host[:port])",
    "a Host with userinfo": "invalid Host as above (RFC 9110 §7.2: uri-host [':' port], no userinfo)",
    "asterisk form": "OPTIONS * asks about the server as a whole; the hub serves no such request",
    "authority form": "CONNECT is for proxies (RFC 9112 §3.2.3); the hub is none",
    "a target in no form": "neither origin, absolute, authority nor asterisk form (RFC 9112 §3.2)",
    "absolute form with userinfo": "RFC 9110 §4.2.4: userinfo in an http URI is an error",
}


def h11_reads(data):
    """Whether h11, as a server, reads a request head from `data` (False: it refuses it)."""
    connection = h11.Connection(h11.SERVER)
    connection.receive_data(data)
    try:
        event = connection.next_event()
    except h11.RemoteProtocolError:
        return False
    assert isinstance(event, h11.Request), "h11 wants more bytes of %r: the corpus must hold whole heads" % data
    return True


def first_response(s):
    """The status, the head and the bytes after the first response (its Content-Length body)."""
    data = b""
    while b"\r\n\r\n" not in data:
        chunk = s.recv(65536)
        assert chunk, "the hub closed without answering (got %r)" % data
        data += chunk
    response_head, rest = data.split(b"\r\n\r\n", 1)
    length = 0
    for line in response_head.split(b"\r\n")[1:]:
        name, _, value = line.partition(b":")
        if name.strip().lower() == b"content-length":
            length = int(value)
    while len(rest) < length:
        chunk = s.recv(65536)
        assert chunk, "the hub closed in the middle of a body"
        rest += chunk
    return int(response_head.split(b" ", 2)[1]), response_head, rest[length:]


def rest_until_close(s, deadline):
    """What the hub sends until it closes the connection, which it must do before the deadline."""
    data = b""
    while True:
        s.settimeout(max(0.01, deadline - time.time()))
        try:
            chunk = s.recv(65536)
        except socket.timeout:
            raise AssertionError("the hub kept the connection open after a refusal (then sent %r)" % data)
        except ConnectionResetError:
            return data
        if not chunk:
            return data
        data += chunk


@pytest.fixture(scope="module")
def strict_hub():
    hub = Hub("--handshake-timeout", "3s")
    yield hub
    hub.stop()


def port_of(hub, which):
    return hub.port if which == "client" else hub.admin_port


def test_the_corpus_is_classified_against_h11():
    """At least 40 requests; STRICTER names exactly the ones h11 reads and the hub refuses, and
    every one h11 refuses has a refusal status the hub documents (docs/security.md)."""
    assert len(CORPUS) >= 40
    names = [name for name, _, _ in CORPUS]
    assert len(set(names)) == len(names)
    stricter = {name for name, data, refused in CORPUS if refused is not None and h11_reads(data)}
    assert stricter == set(STRICTER), "h11 reads these, refused without a reason: %r; listed but h11 refuses: %r" % (
        stricter - set(STRICTER), set(STRICTER) - stricter)
    for name, data, refused in CORPUS:
        if not h11_reads(data):
            assert refused in (400, 501, 505), "h11 refuses %r; the hub must too" % name


@pytest.mark.parametrize("which", ["client", "admin"])
@pytest.mark.parametrize("name,data,refused", CORPUS, ids=[name for name, _, _ in CORPUS])
def test_the_hub_refuses_what_h11_refuses_and_reads_what_it_reads(strict_hub, which, name, data, refused):
    """One request and a pipelined GET on a fresh connection to the port, with nothing in front."""
    s = socket.create_connection(("127.0.0.1", port_of(strict_hub, which)), timeout=5)
    try:
        s.sendall(data + FOLLOW_UP)
        status, response_head, after = first_response(s)
        if refused is None:
            assert h11_reads(data)
            assert status != 400, "%s port answered a request h11 reads with %r" % (which, response_head + after)
            return
        assert status == refused, "%s port: %r" % (which, response_head)
        assert b"\r\nConnection: close" in response_head, response_head
        # Nothing after the refusal is read as a request: the pipelined GET is not answered.
        after += rest_until_close(s, time.time() + 2)
        assert after == b"", "%s port answered bytes after a refused head: %r" % (which, after[:200])
    finally:
        s.close()


def test_the_hub_serves_on_after_the_corpus(strict_hub):
    """The refusals closed only their own connections: both ports still answer."""
    for which in ("client", "admin"):
        s = socket.create_connection(("127.0.0.1", port_of(strict_hub, which)), timeout=5)
        s.sendall(b"GET /healthz HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
        status, _, _ = first_response(s)
        assert status in (200, 404), which
        s.close()
