"""Shared pieces of the soak/chaos driver: the hub process, a keep-alive admin HTTP client, a raw
WebSocket client (for slow consumers and bad inputs), tokens and the JCS hash.

Everything talks to one hub on loopback. Nothing here keeps unbounded state.
"""
import asyncio
import base64
import hashlib
import hmac
import json
import os
import re
import signal
import socket
import struct
import subprocess
import time

import rfc8785


def now():
    return time.monotonic()


def jcs_hash(tree):
    """DESIGN §4: lowercase hex SHA-256 of the RFC 8785 form."""
    return hashlib.sha256(rfc8785.dumps(tree)).hexdigest()


def compact(value):
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False).encode()


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


# ---------------------------------------------------------------------------------------------
# Tokens (HS256, built by hand so that bad ones can be built the same way)


def b64url(data):
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def make_jwt(secret, claims, header=None, sign=True, alg="HS256"):
    header = header or {"alg": alg, "typ": "JWT"}
    signing_input = b64url(compact(header)) + "." + b64url(compact(claims))
    if not sign:
        return signing_input + "."
    signature = hmac.new(secret, signing_input.encode(), hashlib.sha256).digest()
    return signing_input + "." + b64url(signature)


# ---------------------------------------------------------------------------------------------
# The hub process


def die_with_parent():
    """preexec_fn: the child gets SIGKILL when the driver dies (no orphaned hub after a kill -9)."""
    import ctypes
    ctypes.CDLL("libc.so.6", use_errno=True).prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG


class HubDown(Exception):
    """The hub did not answer (connection refused/reset, timeout): the mutation is uncertain."""


class HubProcess:
    """One `pushhub` on fixed loopback ports and one data dir; restarted in place by chaos."""

    def __init__(self, binary, data_dir, out_dir, flags=(), env=None):
        self.env = env
        self.binary = binary
        self.data_dir = data_dir
        self.out_dir = out_dir
        self.flags = list(flags)
        self.port = free_port()
        self.admin_port = free_port()
        self.process = None
        self.starts = 0
        self.token = None
        self.secret = None
        self.up = asyncio.Event()
        self.log_paths = []

    @property
    def pid(self):
        return self.process.pid if self.process and self.process.poll() is None else None

    @property
    def ws_url(self):
        return "ws://127.0.0.1:%d/v1/connect" % self.port

    async def start(self, timeout=30.0):
        """Starts the hub and waits for its `listening` line; retries a bind failure (a port the
        previous process still held for a moment) a few times."""
        for attempt in range(20):
            self.starts += 1
            log_path = os.path.join(self.out_dir, "hub-%03d.log" % self.starts)
            self.log_paths.append(log_path)
            log = open(log_path, "w")
            self.process = subprocess.Popen(
                [self.binary, "--listen", "127.0.0.1:%d" % self.port, "--admin", "127.0.0.1:%d" % self.admin_port,
                 "--data", self.data_dir, *self.flags],
                stdout=subprocess.DEVNULL, stderr=log, stdin=subprocess.DEVNULL, preexec_fn=die_with_parent,
                env=dict(os.environ, **self.env) if self.env else None)
            log.close()
            deadline = now() + timeout
            while now() < deadline:
                with open(log_path, errors="replace") as f:
                    text = f.read()
                if '"listening"' in text:
                    self.token = open(os.path.join(self.data_dir, "admin.token")).read().strip()
                    self.secret = open(os.path.join(self.data_dir, "jwt.secret"), "rb").read().strip()
                    self.up.set()
                    return now()
                if self.process.poll() is not None:
                    break
                await asyncio.sleep(0.02)
            if self.process.poll() is None:
                raise RuntimeError("pushhub did not log 'listening' within %.0f s (log %s)" % (timeout, log_path))
            text = open(log_path, errors="replace").read()
            if "in use" in text.lower() or "address" in text.lower() and "bind" in text.lower():
                await asyncio.sleep(0.25)
                continue
            raise RuntimeError("pushhub exited with %s at start:\n%s" % (self.process.returncode, text[-3000:]))
        raise RuntimeError("pushhub could not bind its ports after 20 attempts")

    def kill9(self):
        self.up.clear()
        if self.process and self.process.poll() is None:
            self.process.send_signal(signal.SIGKILL)
            self.process.wait()

    async def terminate(self, timeout=20.0):
        """SIGTERM; returns (exit code, seconds) — exit code None when it did not exit in time."""
        self.up.clear()
        if not self.process or self.process.poll() is not None:
            return (self.process.returncode if self.process else None, 0.0)
        started = now()
        self.process.send_signal(signal.SIGTERM)
        while now() - started < timeout:
            if self.process.poll() is not None:
                return self.process.returncode, now() - started
            await asyncio.sleep(0.05)
        self.process.kill()
        self.process.wait()
        return None, now() - started

    def alive(self):
        return self.process is not None and self.process.poll() is None

    def log_tail(self, chars=3000):
        if not self.log_paths:
            return ""
        with open(self.log_paths[-1], errors="replace") as f:
            return f.read()[-chars:]


# ---------------------------------------------------------------------------------------------
# Admin HTTP/1.1 (keep-alive, one request at a time per connection)


async def read_http_response(reader):
    head = await reader.readuntil(b"\r\n\r\n")
    lines = head.decode("latin-1").split("\r\n")
    parts = lines[0].split(" ", 2)
    status = int(parts[1])
    headers = {}
    for line in lines[1:]:
        if ":" in line:
            name, value = line.split(":", 1)
            headers[name.strip().lower()] = value.strip()
    if "content-length" in headers:
        body = await reader.readexactly(int(headers["content-length"]))
    elif headers.get("transfer-encoding", "").lower() == "chunked":
        body = b""
        while True:
            size = int((await reader.readuntil(b"\r\n")).strip(), 16)
            chunk = await reader.readexactly(size + 2)
            if size == 0:
                break
            body += chunk[:-2]
    else:
        body = await reader.read()
    return status, headers, body


class Admin:
    """A keep-alive admin connection to the current hub (it follows the hub across restarts)."""

    def __init__(self, hub, timeout=20.0):
        self.hub = hub
        self.timeout = timeout
        self.reader = self.writer = None
        self.start_seen = None

    def close(self):
        if self.writer is not None:
            try:
                self.writer.transport.abort()
            except Exception:
                pass
        self.reader = self.writer = None

    async def request(self, method, path, body=None, raw=None, token=None, timeout=None):
        """(status, parsed JSON or text). Raises HubDown when the hub did not answer."""
        data = raw if raw is not None else (compact(body) if body is not None else None)
        try:
            if self.writer is None or self.start_seen != self.hub.starts or self.writer.is_closing():
                self.close()
                self.reader, self.writer = await asyncio.wait_for(
                    asyncio.open_connection("127.0.0.1", self.hub.admin_port), 5)
                self.start_seen = self.hub.starts
            head = "%s %s HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer %s\r\n" % (
                method, path, token if token is not None else self.hub.token)
            if data is not None:
                head += "Content-Type: application/json\r\nContent-Length: %d\r\n" % len(data)
            self.writer.write(head.encode() + b"\r\n" + (data or b""))
            status, headers, payload = await asyncio.wait_for(read_http_response(self.reader),
                                                              timeout or self.timeout)
            if headers.get("connection", "").lower() == "close":
                self.close()
        except (OSError, asyncio.IncompleteReadError, asyncio.LimitOverrunError, asyncio.TimeoutError,
                ConnectionError, ValueError, IndexError) as error:
            self.close()
            raise HubDown("%s %s: %r" % (method, path, error)) from None
        try:
            return status, json.loads(payload)
        except ValueError:
            return status, payload.decode(errors="replace")


async def raw_http(port, request_bytes, timeout=5.0, read_all=True):
    """Sends raw bytes, returns (status or None, the answer bytes, seconds)."""
    started = now()
    reader, writer = await asyncio.wait_for(asyncio.open_connection("127.0.0.1", port), 5)
    try:
        writer.write(request_bytes)
        await writer.drain()
        data = b""
        try:
            while True:
                chunk = await asyncio.wait_for(reader.read(65536), timeout - (now() - started))
                if not chunk:
                    break
                data += chunk
                if not read_all and b"\r\n\r\n" in data:
                    break
        except (asyncio.TimeoutError, ConnectionError, OSError):
            pass
        match = re.match(rb"HTTP/1\.1 (\d{3})", data)
        return (int(match.group(1)) if match else None), data, now() - started
    finally:
        writer.transport.abort()


# ---------------------------------------------------------------------------------------------
# Raw WebSocket client (RFC 6455 client side, just enough)


class RawWS:
    """A hand-driven WebSocket client: it can stop reading, send bad frames, and parse answers."""

    def __init__(self, reader, writer):
        self.reader = reader
        self.writer = writer
        self.buffer = bytearray()

    @classmethod
    async def connect(cls, port, path="/v1/connect", rcvbuf=None, extra_headers=(), timeout=10.0):
        sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        if rcvbuf:
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, rcvbuf)
        sock.setblocking(False)
        loop = asyncio.get_running_loop()
        try:
            await asyncio.wait_for(loop.sock_connect(sock, ("127.0.0.1", port)), timeout)
            reader, writer = await asyncio.open_connection(sock=sock, limit=1 << 16)
        except BaseException:
            sock.close()
            raise
        key = base64.b64encode(os.urandom(16)).decode()
        request = ("GET %s HTTP/1.1\r\nHost: 127.0.0.1:%d\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
                   "Sec-WebSocket-Key: %s\r\nSec-WebSocket-Version: 13\r\n" % (path, port, key))
        for header in extra_headers:
            request += header + "\r\n"
        writer.write((request + "\r\n").encode())
        try:
            head = await asyncio.wait_for(reader.readuntil(b"\r\n\r\n"), timeout)
        except BaseException:
            writer.transport.abort()
            raise
        if not head.startswith(b"HTTP/1.1 101"):
            writer.transport.abort()
            raise ConnectionError("upgrade refused: %r" % head[:200])
        return cls(reader, writer)

    @staticmethod
    def frame(opcode, payload, fin=True, mask=True, rsv=0, length=None):
        first = (0x80 if fin else 0) | (rsv << 4) | opcode
        n = len(payload) if length is None else length
        if n < 126:
            head = bytes([first, (0x80 if mask else 0) | n])
        elif n < 65536:
            head = bytes([first, (0x80 if mask else 0) | 126]) + struct.pack("!H", n)
        else:
            head = bytes([first, (0x80 if mask else 0) | 127]) + struct.pack("!Q", n)
        if not mask:
            return head + payload
        key = os.urandom(4)
        masked = bytes(b ^ key[i % 4] for i, b in enumerate(payload)) if len(payload) < 256 else _mask(payload, key)
        return head + key + masked

    def send(self, opcode, payload, **options):
        self.writer.write(self.frame(opcode, payload, **options))

    def send_json(self, message):
        self.send(1, compact(message))

    async def recv_frame(self, timeout=10.0):
        """(fin, opcode, payload); raises EOFError at end of stream."""
        reader = self.reader
        async def read(n):
            data = await reader.readexactly(n)
            return data
        try:
            b0, b1 = await asyncio.wait_for(read(2), timeout)
            n = b1 & 0x7F
            if n == 126:
                n = struct.unpack("!H", await asyncio.wait_for(read(2), timeout))[0]
            elif n == 127:
                n = struct.unpack("!Q", await asyncio.wait_for(read(8), timeout))[0]
            payload = await asyncio.wait_for(read(n), timeout) if n else b""
        except asyncio.IncompleteReadError:
            raise EOFError("end of stream")
        return bool(b0 & 0x80), b0 & 0x0F, payload

    async def recv_message(self, timeout=10.0):
        """(opcode, payload) of the next data or close message; answers pings."""
        parts = []
        opcode = None
        while True:
            fin, op, payload = await self.recv_frame(timeout)
            if op == 9:
                self.send(10, payload)
                continue
            if op == 10:
                continue
            if op == 8:
                return 8, payload
            if op != 0:
                opcode = op
            parts.append(payload)
            if fin:
                return opcode, b"".join(parts)

    async def recv_json(self, timeout=10.0):
        op, payload = await self.recv_message(timeout)
        if op == 8:
            code = struct.unpack("!H", payload[:2])[0] if len(payload) >= 2 else None
            raise ConnectionAbortedError("close %s %s" % (code, payload[2:].decode(errors="replace")))
        return json.loads(payload)

    async def close_code(self, timeout=10.0):
        """Reads until a close frame; returns its code (None on EOF without one)."""
        deadline = now() + timeout
        while now() < deadline:
            try:
                op, payload = await self.recv_message(max(0.1, deadline - now()))
            except (EOFError, ConnectionError, OSError):
                return None
            if op == 8:
                return struct.unpack("!H", payload[:2])[0] if len(payload) >= 2 else 1005
        raise asyncio.TimeoutError("no close within %.0f s" % timeout)

    def abort(self):
        try:
            self.writer.transport.abort()
        except Exception:
            pass


def _mask(payload, key):
    n = len(payload)
    repeated = (key * (n // 4 + 1))[:n]
    return (int.from_bytes(payload, "little") ^ int.from_bytes(repeated, "little")).to_bytes(n, "little")


# ---------------------------------------------------------------------------------------------
# /proc sampling


def proc_rss_kb(pid):
    try:
        with open("/proc/%d/status" % pid) as f:
            for line in f:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1])
    except OSError:
        return None
    return None


def proc_rss_split_kb(pid):
    """(RssAnon, RssFile): the heap and stacks vs. mapped code and libraries touched so far."""
    anon = file = None
    try:
        with open("/proc/%d/status" % pid) as f:
            for line in f:
                if line.startswith("RssAnon:"):
                    anon = int(line.split()[1])
                elif line.startswith("RssFile:"):
                    file = int(line.split()[1])
    except OSError:
        pass
    return anon, file


def proc_fds(pid):
    try:
        return len(os.listdir("/proc/%d/fd" % pid))
    except OSError:
        return None


def proc_cpu_seconds(pid):
    try:
        fields = open("/proc/%d/stat" % pid).read().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
    except (OSError, IndexError, ValueError):
        return None


def proc_threads(pid):
    try:
        with open("/proc/%d/status" % pid) as f:
            for line in f:
                if line.startswith("Threads:"):
                    return int(line.split()[1])
    except OSError:
        return None
    return None


def parse_metrics(text):
    values = {}
    for line in text.splitlines():
        if not line or line.startswith("#"):
            continue
        parts = line.split()
        if len(parts) >= 2:
            try:
                values[parts[0]] = float(parts[1])
            except ValueError:
                pass
    return values


def loop_tick_seconds(metrics, role):
    """The longest tick of the last 10-20 s over the hub's loops of one role (`client` or
    `control`), from `pushhub_loop_tick_max_seconds{loop=...,role=...}`; the hub-wide
    `pushhub_loop_lag_seconds` for a hub without the per-loop gauge."""
    ticks = [value for name, value in metrics.items()
             if name.startswith("pushhub_loop_tick_max_seconds{") and 'role="%s"' % role in name]
    return max(ticks) if ticks else metrics.get("pushhub_loop_lag_seconds", 0)
