#!/usr/bin/env python3
"""Client-loop responsiveness probe, in its own process so that the driver's event loop does not
inflate it: N WebSocket connections (SO_REUSEPORT spreads them over the hub's loops); every second
each sends a subscribe to a screen that does not exist, which the hub answers at once from the
client loop (an `unknown_screen` error). Prints one line per second: `<unix time> <slowest round
trip in ms or -> <answered> <failed>`. Standard library only; reconnects when the hub restarts.

  probe.py PORT [--connections 4]
"""
import base64
import json
import os
import socket
import struct
import sys
import time


class Probe:
    def __init__(self, port, index):
        self.port = port
        self.index = index
        self.sock = None
        self.buffer = b""

    def connect(self):
        sock = socket.create_connection(("127.0.0.1", self.port), timeout=5)
        key = base64.b64encode(os.urandom(16)).decode()
        sock.sendall(("GET /v1/connect HTTP/1.1\r\nHost: 127.0.0.1\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
                      "Sec-WebSocket-Key: %s\r\nSec-WebSocket-Version: 13\r\n\r\n" % key).encode())
        head = b""
        while b"\r\n\r\n" not in head:
            chunk = sock.recv(4096)
            if not chunk:
                raise ConnectionError("closed during the upgrade")
            head += chunk
        if not head.startswith(b"HTTP/1.1 101"):
            raise ConnectionError("upgrade refused")
        self.sock = sock
        self.buffer = head.split(b"\r\n\r\n", 1)[1]
        self.send({"type": "hello", "protocol": 1, "device": "probe-%d" % self.index})
        self.until(lambda m: m.get("type") == "welcome")

    def send(self, message):
        payload = json.dumps(message).encode()
        mask = os.urandom(4)
        n = len(payload)
        head = bytes([0x81, 0x80 | n]) if n < 126 else bytes([0x81, 0x80 | 126]) + struct.pack("!H", n)
        self.sock.sendall(head + mask + bytes(b ^ mask[i % 4] for i, b in enumerate(payload)))

    def read(self, n):
        while len(self.buffer) < n:
            chunk = self.sock.recv(65536)
            if not chunk:
                raise ConnectionError("closed")
            self.buffer += chunk
        data, self.buffer = self.buffer[:n], self.buffer[n:]
        return data

    def until(self, accept):
        """Reads messages (answering pings) until `accept(message)`."""
        while True:
            b0, b1 = self.read(2)
            n = b1 & 0x7F
            if n == 126:
                n = struct.unpack("!H", self.read(2))[0]
            elif n == 127:
                n = struct.unpack("!Q", self.read(8))[0]
            payload = self.read(n)
            opcode = b0 & 0x0F
            if opcode == 9:
                mask = os.urandom(4)
                self.sock.sendall(bytes([0x8A, 0x80 | len(payload)]) + mask +
                                  bytes(b ^ mask[i % 4] for i, b in enumerate(payload)))
                continue
            if opcode == 8:
                raise ConnectionError("closed by the hub")
            if opcode == 1:
                message = json.loads(payload)
                if accept(message):
                    return message

    def round_trip(self):
        if self.sock is None:
            self.connect()
        started = time.monotonic()
        self.send({"type": "subscribe", "screen": "soak/probe"})
        self.until(lambda m: m.get("type") == "error" and m.get("code") == "unknown_screen")
        return (time.monotonic() - started) * 1000

    def reset(self):
        if self.sock is not None:
            self.sock.close()
        self.sock = None
        self.buffer = b""


def main():
    port = int(sys.argv[1])
    count = int(sys.argv[sys.argv.index("--connections") + 1]) if "--connections" in sys.argv else 4
    probes = [Probe(port, i) for i in range(count)]
    while True:
        tick = time.monotonic()
        slowest, ok, failed = None, 0, 0
        for probe in probes:
            try:
                rtt = probe.round_trip()
                slowest = rtt if slowest is None else max(slowest, rtt)
                ok += 1
            except (OSError, ConnectionError, ValueError):
                probe.reset()
                failed += 1
        print("%.3f %s %d %d" % (time.time(), "%.3f" % slowest if slowest is not None else "-", ok, failed),
              flush=True)
        time.sleep(max(0.05, 1 - (time.monotonic() - tick)))


if __name__ == "__main__":
    main()
