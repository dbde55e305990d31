"""The hub's state survives `kill -9` at a random moment, drops a torn last record with a
warning, and refuses to start on any other damage, naming the file and offset."""
import json
import os
import random
import shutil
import signal
import struct
import subprocess
import threading
import time
import zlib

from conftest import BIN, Hub
from admin import call

# docs/architecture.md "Durability": journal format 2 starts with this file header; each record is
# length (u32 LE), CRC-32 of the payload, CRC-32 of those 8 bytes, payload. Format 1 (PushHub before
# it) had no file header and 8-byte record headers (length, CRC-32 of the payload).
FILE_HEADER = b"PHJRNL\x02\n"


def restart(hub):
    """A new hub process on the same data dir."""
    return Hub(data=hub.data)


def journal_records(data):
    """[(offset, payload)] of a journal's complete records, read by the documented layout."""
    offset, header = (len(FILE_HEADER), 12) if data.startswith(FILE_HEADER) else (0, 8)
    records = []
    while offset + header <= len(data):
        length = struct.unpack_from("<I", data, offset)[0]
        records.append((offset, data[offset + header:offset + header + length]))
        offset += header + length
    return records


def start_refused(data_dir):
    """Starts pushhub on `data_dir`, which must exit non-zero before listening; returns its stderr."""
    log_path = data_dir + ".log"
    with open(log_path, "w") as log:
        process = subprocess.Popen([os.path.join(BIN, "pushhub"), "--listen", "127.0.0.1:0", "--admin",
                                    "127.0.0.1:0", "--data", data_dir], stderr=log)
    deadline = time.time() + 20
    while process.poll() is None and time.time() < deadline:
        if '"msg":"listening"' in open(log_path).read():
            break
        time.sleep(0.02)
    if process.poll() is None:
        process.kill()
        process.wait()
        raise AssertionError("the hub started on a damaged journal: " + open(log_path).read())
    assert process.returncode != 0, open(log_path).read()
    return open(log_path).read()


def hub_with_every_kind(hub_factory):
    """A killed hub whose journal holds screens, cohorts, an experiment, a sync and a token."""
    hub = hub_factory()
    assert call(hub, "PUT", "/v1/screens/home", {"n": 1})[0] == 200
    assert call(hub, "PUT", "/v1/cohorts/beta", {"users": ["u1", "u2"]})[0] == 200
    assert call(hub, "POST", "/v1/cohorts/beta/users", {"add": ["u3"], "remove": ["u1"]})[0] == 200
    assert call(hub, "PUT", "/v1/cohorts/beta/rule", {"rule": {"platform": "ios"}})[0] == 200
    status, sync = call(hub, "POST", "/v1/syncs", {"target": {"cohort": "beta"}, "reason": "hotfix", "ttl": 86400})
    assert status == 200, sync
    experiment = {"status": "running", "variants": [{"key": "A", "weight": 1}, {"key": "B", "weight": 1}]}
    assert call(hub, "PUT", "/v1/experiments/layout", experiment)[0] == 200
    assert call(hub, "POST", "/v1/tokens", {"name": "ci", "scopes": ["publish"]})[0] == 200
    assert call(hub, "PUT", "/v1/screens/home", {"n": 2})[0] == 200
    hub.process.send_signal(signal.SIGKILL)
    hub.process.wait()
    return hub, sync["id"]


def assert_every_kind_restored(hub, sync_id, home):
    """`hub_with_every_kind`'s records are all there, with `home` as the screen's current tree."""
    assert call(hub, "GET", "/v1/screens/home")[1]["tree"] == home
    cohort = call(hub, "GET", "/v1/cohorts/beta")[1]
    assert cohort["users"] == 2 and sorted(cohort["sample"]) == ["u2", "u3"], cohort
    assert call(hub, "GET", "/v1/syncs/" + sync_id)[0] == 200
    assert call(hub, "GET", "/v1/experiments/layout")[0] == 200
    assert [t["name"] for t in call(hub, "GET", "/v1/tokens")[1]["tokens"]] == ["ci"]


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
    first, payload = journal_records(bytes(data))[0]
    data[data.index(payload, first) + 5] ^= 0xFF  # inside the first record's payload
    open(journal, "wb").write(bytes(data))
    stderr = start_refused(os.path.join(hub.data, "data"))
    assert "state.journal is corrupt at byte %d" % first in stderr, stderr


def test_a_damaged_length_mid_journal_refuses_to_start_naming_file_and_offset(hub_factory):
    """Issue #24 item 3: a flipped length byte of a cohort, sync or experiment record made the
    record look like it ran past the end of the file, and the hub dropped it and every later
    acknowledged record as a "torn tail". Each length byte of each such record, damaged alone,
    must stop the start, name the file and that record's offset, and leave the file as it was."""
    hub, sync_id = hub_with_every_kind(hub_factory)
    data_dir = os.path.join(hub.data, "data")
    journal = os.path.join(data_dir, "state.journal")
    intact = open(journal, "rb").read()
    records = journal_records(intact)
    middle = [(offset, json.loads(payload)["kind"]) for offset, payload in records[1:-1]]
    damaged = [(offset, kind) for offset, kind in middle if kind in ("cohort_set", "sync_appended", "experiment_put")]
    assert len(damaged) == 3, middle
    copy = os.path.join(hub.data, "copy")
    for offset, kind in damaged:
        for byte in range(4):
            shutil.rmtree(copy, ignore_errors=True)
            shutil.copytree(data_dir, copy)
            data = bytearray(intact)
            data[offset + byte] ^= 0xFF
            open(os.path.join(copy, "state.journal"), "wb").write(bytes(data))
            stderr = start_refused(copy)
            expected = "%s/state.journal is corrupt at byte %d" % (copy, offset)
            assert expected in stderr, (kind, byte, stderr)
            assert open(os.path.join(copy, "state.journal"), "rb").read() == bytes(data), (kind, byte)
    # The undamaged journal still starts, with everything in it.
    again = restart(hub)
    try:
        assert "torn" not in open(again.log_path).read()
        assert_every_kind_restored(again, sync_id, {"n": 2})
    finally:
        again.process.kill()


def test_a_torn_tail_of_a_journal_with_every_kind_keeps_every_earlier_record(hub_factory):
    """A crash in the middle of the last write (its header whole, its payload cut short) is the one
    damage a hub starts on: the last record is dropped with a warning naming the offset, every
    earlier record is restored, and the file is cut so new records follow the last good one."""
    hub, sync_id = hub_with_every_kind(hub_factory)
    journal = os.path.join(hub.data, "data", "state.journal")
    data = open(journal, "rb").read()
    last, payload = journal_records(data)[-1]
    assert json.loads(payload)["kind"] == "screen_published"
    open(journal, "wb").write(data[:len(data) - len(payload) // 2])
    again = restart(hub)
    try:
        warnings = [json.loads(line) for line in open(again.log_path) if "torn" in line]
        assert len(warnings) == 1 and warnings[0]["offset"] == last, warnings
        assert warnings[0]["file"].endswith("/state.journal")
        assert os.path.getsize(journal) == last
        assert_every_kind_restored(again, sync_id, {"n": 1})
        assert call(again, "PUT", "/v1/screens/home", {"n": 3})[1]["version"] == 2
    finally:
        again.process.kill()


def test_a_journal_of_the_earlier_format_still_opens(hub_factory):
    """A data dir of the PushHub before journal format 2 (no file header, 8-byte record headers)
    opens with every record, and its journal is rewritten in format 2 at that start."""
    hub = hub_factory()
    hub.process.send_signal(signal.SIGKILL)
    hub.process.wait()
    data = b""
    for lsn in (1, 2):
        payload = json.dumps({"kind": "screen_published", "screen": "old", "version": lsn, "at": 0,
                              "tree": {"n": lsn}, "lsn": lsn}).encode()
        data += struct.pack("<II", len(payload), zlib.crc32(payload)) + payload
    journal = os.path.join(hub.data, "data", "state.journal")
    open(journal, "wb").write(data)
    again = restart(hub)
    try:
        status, current = call(again, "GET", "/v1/screens/old")
        assert status == 200 and current["version"] == 2 and current["tree"] == {"n": 2}
        rewritten = open(journal, "rb").read()
        assert rewritten.startswith(FILE_HEADER)
        assert [payload for _, payload in journal_records(rewritten)] == [p for _, p in journal_records(data)]
        assert call(again, "PUT", "/v1/screens/old", {"n": 3})[1]["version"] == 3
    finally:
        again.process.kill()
