"""The webhook bench's receiver: a keep-alive HTTP/1.1 server on loopback that answers every POST
with 200 at once and stamps it, so that the hub and not the receiver is what is measured.

    python bench/webhooks/receiver.py PORT

One asyncio loop in one thread with `asyncio.Protocol` (no streams, no HTTP library): a request
is split by its head's end and `Content-Length`, stamped with CLOCK_REALTIME and CLOCK_MONOTONIC
(ns) and kept as bytes; nothing is parsed or verified while the bench runs (`dump` hands the
bodies to the bench, which reads them afterwards). Its own ceiling (h2load, 8 keep-alive
connections as the hub opens at most, one request in flight each) is measured by run.py.

Commands on stdin, one a line, each answered by one line on stdout (`dump`: lines, then `end`):
- `hold`: read requests but answer none (they wait); `go`: answer every held request, in order
  on each connection, and from now on answer at once; answered `ok N` (how many were held);
- `count`: `count N` requests received since the last `reset`;
- `dump`: `r <realtime ns> <monotonic ns> <body>` per request since the last `reset`, then `end`;
- `reset`: forget the requests received (`ok`);
- `quit`.
"""
import asyncio
import sys
import time

ANSWER = b"HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n"

received = []  # (realtime ns, monotonic ns, body bytes)
holding = False
held = []  # connections with answers owed, one entry per held request, in arrival order


class Receiver(asyncio.Protocol):
    def connection_made(self, transport):
        self.transport = transport
        self.buffer = b""

    def data_received(self, data):
        buffer = self.buffer + data if self.buffer else data
        answers = 0
        while True:
            end = buffer.find(b"\r\n\r\n")
            if end < 0:
                break
            head = buffer[:end]
            length, at = 0, head.lower().find(b"\r\ncontent-length:")
            if at >= 0:
                stop = head.find(b"\r\n", at + 2)
                length = int(head[at + 17:stop if stop >= 0 else len(head)])
            if len(buffer) < end + 4 + length:
                break
            received.append((time.time_ns(), time.monotonic_ns(), buffer[end + 4:end + 4 + length]))
            buffer = buffer[end + 4 + length:]
            answers += 1
        self.buffer = buffer
        if answers:
            if holding:
                held.extend([self.transport] * answers)
            else:
                self.transport.write(ANSWER * answers)


async def commands(loop):
    global holding
    reader = asyncio.StreamReader()
    await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(reader), sys.stdin)
    out = sys.stdout
    while True:
        line = (await reader.readline()).decode().strip()
        if line in ("", "quit"):
            return
        if line == "hold":
            holding = True
            out.write("ok 0\n")
        elif line == "go":
            holding = False
            count = len(held)
            for transport in held:
                if not transport.is_closing():
                    transport.write(ANSWER)
            held.clear()
            out.write("ok %d\n" % count)
        elif line == "count":
            out.write("count %d\n" % len(received))
        elif line == "reset":
            received.clear()
            out.write("ok\n")
        elif line == "dump":
            for wall, mono, body in received:
                out.write("r %d %d %s\n" % (wall, mono, body.decode(errors="replace")))
            out.write("end\n")
        else:
            out.write("error unknown command %r\n" % line)
        out.flush()


async def main(port):
    loop = asyncio.get_running_loop()
    server = await loop.create_server(Receiver, "127.0.0.1", port, backlog=1024)
    print("listening %d" % server.sockets[0].getsockname()[1], flush=True)
    await commands(loop)
    server.close()


if __name__ == "__main__":
    asyncio.run(main(int(sys.argv[1]) if len(sys.argv) > 1 else 0))
