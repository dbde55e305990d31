"""Registers many devices for silent pushes, each in a short WebSocket session of its own (DESIGN
§17): connect, upgrade, `hello` with a device id and an app, wait for the `welcome`, send
`push_token`, send a close frame and read until the hub closes the connection (so the hub has read
the `push_token` before the session ends, and the TIME_WAIT stays on the hub's side).

A minimal asyncio WebSocket client of its own (RFC 6455: masked client frames, unfragmented text,
the close handshake), no dependency. Sessions come from 127.0.0.2…127.0.0.251 in turn so the
client side never runs short of ephemeral ports."""
import asyncio
import base64
import json
import os
import struct
import time


class Refused(Exception):
    pass


def frame(opcode, payload):
    """One masked, final client frame."""
    key = os.urandom(4)
    n = len(payload)
    if n < 126:
        head = struct.pack("!BB", 0x80 | opcode, 0x80 | n)
    elif n < 65536:
        head = struct.pack("!BBH", 0x80 | opcode, 0x80 | 126, n)
    else:
        head = struct.pack("!BBQ", 0x80 | opcode, 0x80 | 127, n)
    mask = int.from_bytes((key * (n // 4 + 1))[:n], "big")
    masked = (int.from_bytes(payload, "big") ^ mask).to_bytes(n, "big") if n else b""
    return head + key + masked


async def read_frame(reader):
    """(opcode, payload) of the next server frame (servers do not mask)."""
    b0, b1 = await reader.readexactly(2)
    n = b1 & 0x7F
    if n == 126:
        n = struct.unpack("!H", await reader.readexactly(2))[0]
    elif n == 127:
        n = struct.unpack("!Q", await reader.readexactly(8))[0]
    return b0 & 0x0F, await reader.readexactly(n)


async def session(port, source, hello, push_token, timeout):
    """One device's session; raises `Refused` when the hub answers anything but a welcome."""
    reader, writer = await asyncio.wait_for(
        asyncio.open_connection("127.0.0.1", port, local_addr=(source, 0)), timeout)
    try:
        key = base64.b64encode(os.urandom(16)).decode()
        writer.write(("GET /v1/connect HTTP/1.1\r\nHost: 127.0.0.1:%d\r\nUpgrade: websocket\r\n"
                      "Connection: Upgrade\r\nSec-WebSocket-Key: %s\r\nSec-WebSocket-Version: 13\r\n\r\n"
                      % (port, key)).encode())
        head = await asyncio.wait_for(reader.readuntil(b"\r\n\r\n"), timeout)
        if not head.startswith(b"HTTP/1.1 101"):
            raise Refused(head.split(b"\r\n", 1)[0].decode(errors="replace"))
        writer.write(frame(0x1, hello))
        opcode, payload = await asyncio.wait_for(read_frame(reader), timeout)
        if opcode != 0x1 or b'"welcome"' not in payload[:40]:
            raise Refused("hello answered with %r" % payload[:200])
        writer.write(frame(0x1, push_token) + frame(0x8, struct.pack("!H", 1000)))
        while True:  # the hub answers an error before its close if it refused the push_token
            opcode, payload = await asyncio.wait_for(read_frame(reader), timeout)
            if opcode == 0x8:
                break
            if b'"error"' in payload[:40]:
                raise Refused("push_token answered with %r" % payload[:300])
        await asyncio.wait_for(reader.read(), timeout)  # the hub closes the TCP connection first
    finally:
        writer.close()


def messages(i, provider, token, topic):
    """Device d-<i>'s hello and push_token, as bytes."""
    platform = "ios" if provider == "apns" else "android"
    hello = {"type": "hello", "protocol": 1, "device": "d-%d" % i, "app": {"platform": platform, "version": "5.2.0"}}
    push = {"type": "push_token", "provider": provider, "token": token}
    if topic:
        push["topic"] = topic
    return json.dumps(hello, separators=(",", ":")).encode(), json.dumps(push, separators=(",", ":")).encode()


async def register_all(port, devices, concurrency, timeout, progress, attempts=3):
    """`devices`: [(i, provider, token, topic)]. At most `concurrency` sessions at once; a failed
    session is tried again (up to `attempts` times); `progress(done)` is called after each session.
    Returns (seconds, failures [(i, error)])."""
    queue = list(reversed(devices))
    failures = []
    done = 0
    t0 = time.perf_counter()

    async def worker():
        while queue:
            i, provider, token, topic = queue.pop()
            hello, push = messages(i, provider, token, topic)
            for attempt in range(attempts):
                try:
                    await session(port, "127.0.0.%d" % (2 + i % 250), hello, push, timeout)
                    break
                except (OSError, asyncio.TimeoutError, asyncio.IncompleteReadError, asyncio.LimitOverrunError,
                        Refused) as error:
                    if attempt == attempts - 1:
                        failures.append((i, repr(error)))
                    else:
                        await asyncio.sleep(0.05 * (attempt + 1))
            nonlocal done
            done += 1
            progress(done)

    await asyncio.gather(*(worker() for _ in range(min(concurrency, len(devices)))))
    return time.perf_counter() - t0, failures


def register(port, devices, concurrency, progress=lambda done: None, timeout=30):
    return asyncio.run(register_all(port, devices, concurrency, timeout, progress))
