"""permessage-deflate (RFC 7692, issue 11 item 2) against real peers: Python `websockets` (which
offers it by default), raw sockets that inflate with Python's zlib, and headless Chromium. The
hub answers server_ and client_no_context_takeover, compresses a shared frame once per loop and
sends the same bytes to every subscriber, reads compressed client messages, and closes a
deflate bomb with 1009 without its memory growing."""
import base64
import json
import os
import socket
import struct
import time
import zlib

import pytest
from websockets.sync.client import connect

from admin import call, metric, publish

SUBPROTOCOL = "pushhub.v1"


def big_tree(label="first"):
    """A screen of 300 rows (about 20 KB of JSON): well above the 256-byte minimum."""
    return {"type": "screen", "title": "Big", "children": [
        {"id": "row-%d" % i, "type": "text", "text": "%s row %d of a long list" % (label if i == 150 else "plain", i)}
        for i in range(300)]}


def deflate(payload, level=6):
    """A message compressed alone (RFC 7692 §7.2.1): raw DEFLATE, sync flush, tail removed."""
    compressor = zlib.compressobj(level, zlib.DEFLATED, -15)
    data = compressor.compress(payload) + compressor.flush(zlib.Z_SYNC_FLUSH)
    assert data.endswith(b"\x00\x00\xff\xff")
    return data[:-4]


class RawClient:
    """A WebSocket client on a plain socket, so the test sees the frames as they are on the wire."""

    def __init__(self, port, offer="permessage-deflate; client_max_window_bits", path="/v1/connect"):
        self.sock = socket.create_connection(("127.0.0.1", port), timeout=10)
        key = base64.b64encode(os.urandom(16)).decode()
        request = ("GET %s HTTP/1.1\r\nHost: 127.0.0.1\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
                   "Sec-WebSocket-Key: %s\r\nSec-WebSocket-Version: 13\r\nSec-WebSocket-Protocol: %s\r\n"
                   % (path, key, SUBPROTOCOL))
        if offer:
            request += "Sec-WebSocket-Extensions: %s\r\n" % offer
        self.sock.sendall((request + "\r\n").encode())
        self.buffer = b""
        while b"\r\n\r\n" not in self.buffer:
            chunk = self.sock.recv(65536)
            assert chunk, "closed during the handshake"
            self.buffer += chunk
        head, self.buffer = self.buffer.split(b"\r\n\r\n", 1)
        lines = head.decode().split("\r\n")
        assert lines[0].startswith("HTTP/1.1 101"), head
        self.headers = {k.lower(): v.strip() for k, v in (line.split(":", 1) for line in lines[1:])}

    def _take(self, count):
        while len(self.buffer) < count:
            chunk = self.sock.recv(1 << 20)
            if not chunk:
                raise EOFError("the hub closed the connection")
            self.buffer += chunk
        data, self.buffer = self.buffer[:count], self.buffer[count:]
        return data

    def frame(self):
        """(first byte, payload, raw frame bytes) of the next frame."""
        header = self._take(2)
        length = header[1] & 0x7F
        extended = b""
        if length == 126:
            extended = self._take(2)
            length = struct.unpack(">H", extended)[0]
        elif length == 127:
            extended = self._take(8)
            length = struct.unpack(">Q", extended)[0]
        payload = self._take(length)
        return header[0], payload, header + extended + payload

    def message(self):
        """(compressed?, parsed JSON) of the next text message (single-frame, as the hub sends)."""
        first, payload, _ = self.frame()
        assert first & 0x0F == 1 and first & 0x80, hex(first)
        compressed = bool(first & 0x40)
        if compressed:
            payload = zlib.decompressobj(-15).decompress(payload + b"\x00\x00\xff\xff")
        return compressed, json.loads(payload)

    def send(self, payload, opcode=1, rsv1=False):
        mask = os.urandom(4)
        header = bytes([0x80 | (0x40 if rsv1 else 0) | opcode])
        if len(payload) < 126:
            header += bytes([0x80 | len(payload)])
        elif len(payload) < 65536:
            header += bytes([0x80 | 126]) + struct.pack(">H", len(payload))
        else:
            header += bytes([0x80 | 127]) + struct.pack(">Q", len(payload))
        self.sock.sendall(header + mask + bytes(b ^ mask[i % 4] for i, b in enumerate(payload)))

    def send_json(self, message, compress=False):
        payload = json.dumps(message).encode()
        self.send(deflate(payload) if compress else payload, rsv1=compress)

    def close_code(self):
        """Reads until a close frame; returns its code."""
        while True:
            first, payload, _ = self.frame()
            if first & 0x0F == 8:
                return struct.unpack(">H", payload[:2])[0]


def test_websockets_negotiates_and_reads_compressed_snapshots_and_patches(hub_factory):
    hub = hub_factory("--dev")
    publish(hub, "big", big_tree())
    with connect(hub.url + "/v1/connect", subprotocols=[SUBPROTOCOL]) as ws:
        answered = ws.response.headers["Sec-WebSocket-Extensions"]
        assert answered == "permessage-deflate; server_no_context_takeover; client_no_context_takeover"
        ws.send(json.dumps({"type": "hello", "protocol": 1, "device": "d-1"}))
        assert json.loads(ws.recv())["type"] == "welcome"
        ws.send(json.dumps({"type": "subscribe", "screen": "big"}))
        snapshot = json.loads(ws.recv())
        assert snapshot["type"] == "snapshot" and snapshot["tree"] == big_tree()
        publish(hub, "big", big_tree("second"))
        patch = json.loads(ws.recv())
        assert patch["type"] == "patch" and patch["from"] == snapshot["version"]
        # A client message websockets compressed (it compresses what it sends) is read too.
        ws.send(json.dumps({"type": "subscribe", "screen": "big", "have": {"version": patch["version"],
                                                                           "hash": patch["hash"]},
                            "padding": "x" * 2000}))
        assert metric(hub, "pushhub_compressed_connections") == 1
        assert metric(hub, "pushhub_compressed_messages_in_total") >= 1
        assert metric(hub, "pushhub_compressed_messages_out_total") >= 1  # the snapshot (the patch is small)


def test_one_compressed_frame_for_every_subscriber_and_small_messages_go_plain(hub_factory):
    """Three raw subscribers on one loop get byte-identical compressed snapshot frames (RSV1 set),
    compressed once; the welcome, under 256 bytes, goes uncompressed."""
    hub = hub_factory("--dev", "--loops", "1")
    publish(hub, "big", big_tree())
    clients = [RawClient(hub.port) for _ in range(3)]
    for client in clients:
        assert client.headers["sec-websocket-extensions"] == \
            "permessage-deflate; server_no_context_takeover; client_no_context_takeover"
        client.send_json({"type": "hello", "protocol": 1, "device": "raw"})
        compressed, welcome = client.message()
        assert welcome["type"] == "welcome" and not compressed
    before = metric(hub, "pushhub_compressions_total")
    frames = []
    for client in clients:
        client.send_json({"type": "subscribe", "screen": "big"}, compress=True)  # a compressed client message
        first, payload, raw = client.frame()
        assert first == 0x80 | 0x40 | 0x1, hex(first)  # FIN, RSV1, text
        tree = json.loads(zlib.decompressobj(-15).decompress(payload + b"\x00\x00\xff\xff"))
        assert tree["type"] == "snapshot" and tree["tree"] == big_tree()
        plain_size = len(json.dumps(tree, separators=(",", ":")))
        assert len(raw) * 5 < plain_size, (len(raw), plain_size)
        frames.append(raw)
    assert frames[0] == frames[1] == frames[2]
    assert metric(hub, "pushhub_compressions_total") - before == 1


def test_compression_off_and_a_declined_offer(hub_factory):
    off = hub_factory("--dev", "--compression", "off")
    client = RawClient(off.port)
    assert "sec-websocket-extensions" not in client.headers
    on = hub_factory("--dev")
    # server_max_window_bits=8 cannot be honoured (zlib): declined, the next offer is taken.
    client = RawClient(on.port, offer="permessage-deflate; server_max_window_bits=8, "
                                      "permessage-deflate; server_max_window_bits=10")
    assert client.headers["sec-websocket-extensions"] == \
        "permessage-deflate; server_no_context_takeover; client_no_context_takeover; server_max_window_bits=10"
    client = RawClient(on.port, offer="x-webkit-deflate-frame, permessage-deflate; unknown_parameter")
    assert "sec-websocket-extensions" not in client.headers
    # RSV1 without the extension is a protocol error.
    plain = RawClient(on.port, offer=None)
    plain.send(deflate(b'{"type":"hello","protocol":1}'), rsv1=True)
    assert plain.close_code() == 1002


def hub_rss_kib(hub):
    for line in open("/proc/%d/status" % hub.process.pid):
        if line.startswith("VmRSS:"):
            return int(line.split()[1])


def test_a_deflate_bomb_is_closed_1009_and_costs_no_memory(hub_factory):
    """16 MiB of spaces compress to ~16 KB, under the 64 KiB frame limit; inflated they would be
    256 times the message limit. Each is closed 1009; 100 of them leave the hub's RSS where it was."""
    hub = hub_factory("--dev")
    bomb = deflate(b" " * (16 << 20), level=9)
    assert len(bomb) < 64 << 10

    def explode():
        client = RawClient(hub.port)
        client.send(bomb, rsv1=True)
        assert client.close_code() == 1009
        client.sock.close()

    explode()  # the loops' inflaters and buffers exist from here on
    before = hub_rss_kib(hub)
    for _ in range(100):
        explode()
    after = hub_rss_kib(hub)
    assert after - before < 4096, (before, after)
    assert metric(hub, "pushhub_protocol_closes_total") >= 101
    # Corrupt DEFLATE data is 1007; the hub serves on.
    client = RawClient(hub.port)
    client.send(b"\xff\xff\xff\xff", rsv1=True)
    assert client.close_code() == 1007
    client = RawClient(hub.port)
    client.send_json({"type": "hello", "protocol": 1, "device": "after"}, compress=True)
    assert client.message()[1]["type"] == "welcome"


def test_a_reload_switches_compression_for_new_connections_only(hub_factory, tmp_path):
    config = tmp_path / "hub.json"
    config.write_text(json.dumps({"dev": True, "compression": "on"}))
    hub = hub_factory("--config", str(config))
    publish(hub, "big", big_tree())
    old = RawClient(hub.port)
    assert "sec-websocket-extensions" in old.headers
    config.write_text(json.dumps({"dev": True, "compression": "off"}))
    import signal
    hub.process.send_signal(signal.SIGHUP)
    deadline = time.time() + 5
    while "sec-websocket-extensions" in RawClient(hub.port).headers:
        assert time.time() < deadline, "the reload did not turn compression off"
        time.sleep(0.1)
    old.send_json({"type": "hello", "protocol": 1, "device": "old"})
    assert old.message()[1]["type"] == "welcome"
    old.send_json({"type": "subscribe", "screen": "big"})
    compressed, snapshot = old.message()
    assert compressed and snapshot["tree"] == big_tree()  # the open connection kept what it agreed


def test_chromium_negotiates_and_decodes_compressed_frames(hub_factory):
    """The demo page in headless Chromium: its connection agrees permessage-deflate (the page's
    WebSocket says so in `extensions`), and it renders a snapshot and an update that the hub sent
    compressed."""
    from chromium import browser_or_skip
    hub = hub_factory("--dev")
    publish(hub, "home", big_tree())
    browser = browser_or_skip("the compression test with Chromium")
    try:
        browser.call("Page.navigate", url="http://127.0.0.1:%d/" % hub.port)
        browser.wait_for("document.body && document.body.innerText.includes('first row 150')", what="the snapshot")
        assert metric(hub, "pushhub_compressed_connections") == 1
        sent = metric(hub, "pushhub_compressed_messages_out_total")
        assert sent >= 1
        # Every row changes: the update is large, so it goes compressed too.
        publish(hub, "home", {**big_tree(), "children": [dict(row, text=row["text"] + " (updated)")
                                                           for row in big_tree()["children"]]})
        browser.wait_for("document.body.innerText.includes('first row 150 of a long list (updated)')",
                         what="the compressed update")
        assert metric(hub, "pushhub_compressed_messages_out_total") > sent
        extensions = browser.evaluate("""new Promise((resolve, reject) => {
            const ws = new WebSocket('ws://127.0.0.1:%d/v1/connect', 'pushhub.v1');
            ws.onopen = () => { resolve(ws.extensions); ws.close(); };
            ws.onerror = () => reject(new Error('the WebSocket failed'));
        })""" % hub.port)
        assert extensions == "permessage-deflate; server_no_context_takeover; client_no_context_takeover"
        assert not browser.console, browser.console
    finally:
        browser.close()
