"""The screen store survives `kill -9` at a random moment, drops a torn last record with a
warning, and refuses to start on corruption before the tail, naming the file and offset."""
import json
import os
import random
import signal
import subprocess
import threading
import time

from conftest import BIN, Hub
from admin import call


def restart(hub):
    """A new hub process on the same data dir."""
    return Hub(data=hub.data)


def test_kill_9_loses_no_acknowledged_version(hub_factory):
    hub = hub_factory()
    acknowledged = {}
    stop = threading.Event()

    def publisher():
        for n in range(1, 1001):
            if stop.is_set():
                return
            try:
                status, answer = call(hub, "PUT", "/v1/screens/durable", {"n": n, "text": "version %d" % n})
            except OSError:
                return
            if status != 200:
                return
            acknowledged[answer["version"]] = n

    thread = threading.Thread(target=publisher)
    thread.start()
    time.sleep(random.Random().uniform(0.3, 1.5))
    hub.process.send_signal(signal.SIGKILL)
    hub.process.wait()
    stop.set()
    thread.join()
    assert acknowledged, "nothing was published before the kill"
    last = max(acknowledged)
    again = restart(hub)
    try:
        status, current = call(again, "GET", "/v1/screens/durable")
        assert status == 200
        # Everything acknowledged is there; at most the one in flight at the kill may be too.
        assert current["version"] in (last, last + 1), (current["version"], last)
        status, history = call(again, "GET", "/v1/screens/durable/history")
        kept = [v["version"] for v in history["versions"]]
        assert len(kept) == min(16, current["version"])  # the last 16 versions are kept
        for version in acknowledged:
            if version > current["version"] - 16:
                assert version in kept
        assert current["tree"]["n"] == acknowledged.get(current["version"], current["tree"]["n"])
        answer = call(again, "PUT", "/v1/screens/durable", {"n": "after restart"})[1]
        assert answer["version"] == current["version"] + 1  # numbering goes on, never reused
    finally:
        again.process.kill()


def test_torn_tail_is_dropped_with_a_warning(hub_factory):
    hub = hub_factory()
    for n in range(3):
        call(hub, "PUT", "/v1/screens/torn", {"n": n})
    hub.process.send_signal(signal.SIGKILL)
    hub.process.wait()
    journal = os.path.join(hub.data, "data", "state.journal")
    with open(journal, "ab") as f:
        f.write(b"\x40\x00\x00\x00\x12\x34")  # a header cut short by the crash
    again = restart(hub)
    try:
        status, current = call(again, "GET", "/v1/screens/torn")
        assert status == 200 and current["version"] == 3
        log = open(again.log_path).read()
        assert "torn record" in log
        assert call(again, "PUT", "/v1/screens/torn", {"n": 4})[1]["version"] == 4
    finally:
        again.process.kill()


def test_corruption_before_the_tail_refuses_to_start(hub_factory):
    hub = hub_factory()
    for n in range(3):
        call(hub, "PUT", "/v1/screens/bad", {"n": n, "pad": "x" * 50})
    hub.process.send_signal(signal.SIGKILL)
    hub.process.wait()
    journal = os.path.join(hub.data, "data", "state.journal")
    data = bytearray(open(journal, "rb").read())
    data[20] ^= 0xFF  # inside the first record's payload
    open(journal, "wb").write(bytes(data))
    process = subprocess.run([os.path.join(BIN, "pushhub"), "--listen", "127.0.0.1:0", "--admin", "127.0.0.1:0",
                              "--data", os.path.join(hub.data, "data")], capture_output=True, text=True, timeout=20)
    assert process.returncode != 0
    assert "state.journal is corrupt at byte 0" in process.stderr, process.stderr
