"""Raw sockets against pushhub: malformed upgrades get an HTTP answer and a closed socket,
protocol violations get their close code, slow senders time out, nothing leaks, and the hub
keeps serving everyone else throughout."""
import base64
import json
import os
import socket
import struct
import time
import urllib.request

from websockets.exceptions import ConnectionClosed, InvalidHandshake
from websockets.sync.client import connect

from admin import call, metric

GOOD_KEY = base64.b64encode(b"0123456789abcdef").decode()


def started_request(hub):
    """A connection that has sent the first bytes of a request: the client port defers accepts
    until bytes arrive, so this one takes a hub descriptor at once (a silent one would wait about
    a second in the kernel)."""
    s = socket.create_connection(("127.0.0.1", hub.port), timeout=2)
    s.sendall(b"GET ")
    return s


def raw(hub):
    s = socket.create_connection(("127.0.0.1", hub.port), timeout=5)
    return s


def read_all(s):
    """Reads until the hub closes the socket."""
    chunks = []
    while True:
        chunk = s.recv(65536)
        if not chunk:
            return b"".join(chunks)
        chunks.append(chunk)


def upgrade_request(path="/echo", method="GET", version="HTTP/1.1", key=GOOD_KEY, ws_version="13", extra=""):
    return ("%s %s %s\r\nHost: 127.0.0.1\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
            "Sec-WebSocket-Key: %s\r\nSec-WebSocket-Version: %s\r\n%s\r\n"
            % (method, path, version, key, ws_version, extra)).encode()


def status_of(response):
    return int(response.split(b" ", 2)[1])


def masked_frame(opcode, payload, fin=True, mask=True, rsv=0):
    first = (0x80 if fin else 0) | rsv << 4 | opcode
    key = os.urandom(4)
    length = len(payload)
    if length < 126:
        head = struct.pack("!BB", first, (0x80 if mask else 0) | length)
    elif length < 65536:
        head = struct.pack("!BBH", first, (0x80 if mask else 0) | 126, length)
    else:
        head = struct.pack("!BBQ", first, (0x80 if mask else 0) | 127, length)
    if not mask:
        return head + payload
    return head + key + bytes(b ^ key[i % 4] for i, b in enumerate(payload))


def open_raw_websocket(hub, path="/echo"):
    s = raw(hub)
    s.sendall(upgrade_request(path))
    head = b""
    while b"\r\n\r\n" not in head:
        head += s.recv(1)
    assert status_of(head) == 101
    return s


def read_close_code(s):
    """Reads frames until the hub closes the socket; returns the close frame's code."""
    return close_code_in(read_all(s))


def close_code_in(data):
    """The code of the first close frame in `data`, the frames a server sent."""
    while data:
        opcode, length = data[0] & 0x0F, data[1] & 0x7F
        start = 2
        if length == 126:
            length, start = struct.unpack("!H", data[2:4])[0], 4
        if opcode == 0x8:
            return struct.unpack("!H", data[start:start + 2])[0]
        data = data[start + length:]
    raise AssertionError("no close frame before the socket closed")


def test_refused_upgrades_get_status_and_reason_then_close(hub):
    cases = [
        (b"\x16\x03\x01\x02\x00garbage that is not HTTP\r\n\r\n", 400),
        (upgrade_request(path="/nowhere"), 404),
        (upgrade_request(method="POST"), 405),
        (upgrade_request(version="HTTP/1.0"), 400),
        (upgrade_request(ws_version="8"), 426),
        (upgrade_request(key=base64.b64encode(b"fifteen bytes!!").decode()), 400),
        (b"GET /echo HTTP/1.1\r\nHost: x\r\n\r\n", 426),
        (b"GET /echo HTTP/1.1\r\nHost: x\r\nX-Big: " + b"a" * 9000 + b"\r\n\r\n", 431),
    ]
    for request, expected in cases:
        s = raw(hub)
        s.sendall(request)
        response = read_all(s)  # returns only once the hub closed the socket
        assert status_of(response) == expected, (request[:60], response[:200])
        body = response.split(b"\r\n\r\n", 1)[1]
        assert body.strip(), "a refusal carries a one-line reason"
        if expected == 426 and b"Sec-WebSocket-Version: 8" in request:
            assert b"Sec-WebSocket-Version: 13" in response
        s.close()
    hub.wait_for_connections(0)


def test_half_finished_handshake_times_out_while_others_are_served(hub):
    slow = raw(hub)
    slow.sendall(b"GET /echo HTTP/1.1\r\nHost: 127.0.0.1\r\nUpgrade: webso")
    with connect(hub.url + "/echo") as ws:  # the hub still serves everyone else
        ws.send("ping me")
        assert ws.recv(timeout=5) == "ping me"
    started = time.time()
    response = read_all(slow)
    assert status_of(response) == 408
    assert time.time() - started < 5
    slow.close()
    hub.wait_for_connections(0)


def test_silent_connection_is_closed_after_the_handshake_timeout(hub):
    s = raw(hub)
    response = read_all(s)
    assert status_of(response) == 408


def test_the_client_port_hands_over_a_connection_once_it_sends(hub):
    """TCP_DEFER_ACCEPT: the kernel keeps a connection that has sent nothing, so the hub is not
    woken for it; its first bytes bring it to the hub, which reads them at once."""
    accepted = metric(hub, "pushhub_accepted_total")  # each /metrics request is an accepted connection too
    s = raw(hub)
    time.sleep(0.4)
    assert metric(hub, "pushhub_accepted_total") == accepted + 1, "accepted before it sent anything"
    s.sendall(b"GET /nowhere HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
    assert status_of(read_all(s)) == 404
    assert metric(hub, "pushhub_accepted_total") == accepted + 3
    s.close()


def test_unmasked_frame_is_a_protocol_error_1002(hub):
    s = open_raw_websocket(hub)
    s.sendall(masked_frame(0x1, b"hello", mask=False))
    assert read_close_code(s) == 1002


def test_reserved_bits_and_opcodes_are_protocol_errors(hub):
    for frame in [masked_frame(0x1, b"x", rsv=0b100), masked_frame(0x3, b"x"), masked_frame(0x9, b"p", fin=False)]:
        s = open_raw_websocket(hub)
        s.sendall(frame)
        assert read_close_code(s) == 1002


def test_invalid_utf8_text_is_closed_with_1007(hub):
    s = open_raw_websocket(hub)
    s.sendall(masked_frame(0x1, b"\xce\xba\xe1\xbd\xb9\xcf\x83\xce\xbc\xce\xb5\xed\xa0\x80"))
    assert read_close_code(s) == 1007


def test_garbage_after_upgrade_does_not_crash_the_hub(hub):
    for seed in range(20):
        s = open_raw_websocket(hub)
        s.sendall(os.urandom(64 + seed * 13))
        s.settimeout(5)
        try:
            read_all(s)
        except (ConnectionResetError, socket.timeout):
            pass
        s.close()
    with connect(hub.url + "/echo") as ws:
        ws.send("alive")
        assert ws.recv(timeout=5) == "alive"
    assert hub.process.poll() is None


def test_no_connection_leaks_after_abuse(hub):
    sockets = []
    for i in range(30):
        s = raw(hub)
        s.sendall([b"GET / HTTP/1.1\r\n", upgrade_request(), b"\x00\xff" * 10][i % 3])
        sockets.append(s)
    for s in sockets[::2]:
        s.close()  # vanish mid-request
    for s in sockets[1::2]:
        s.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
        s.close()  # reset
    stats = hub.wait_for_connections(0)
    assert stats["websocket_connections"] == 0


def test_server_pings_idle_clients_and_drops_dead_ones(hub_factory):
    hub = hub_factory("--ping-interval", "300ms", "--idle-timeout", "1s")
    s = open_raw_websocket(hub)
    s.settimeout(5)
    first = s.recv(2)
    assert first[0] == 0x89, "an unmasked ping frame from the server"
    started = time.time()
    read_all(s)  # we never answer: the hub closes after the idle timeout
    assert time.time() - started < 3
    hub.wait_for_connections(0)


def test_the_descriptor_table_is_sized_for_the_limit_at_start(hub_factory):
    """The kernel grows a process's descriptor table by doubling, and with several threads each
    growth stops the accepting loop for an RCU grace period (10-30 ms, six times in a fresh hub's
    first 10,000 connects). The hub sizes it for its whole limit before the first client."""
    hub = hub_factory("--loops", "1", max_fds=5000)
    status = open("/proc/%d/status" % hub.process.pid).read()
    fd_size = int(next(line.split()[1] for line in status.splitlines() if line.startswith("FDSize:")))
    assert fd_size >= 5000, "descriptor table of %d slots for a limit of 5000" % fd_size


def test_running_out_of_descriptors_pauses_accepts_without_spinning(hub_factory):
    hub = hub_factory("--loops", "1", max_fds=48)
    flood = []
    for _ in range(80):  # more connections than the hub has descriptors for
        try:
            flood.append(started_request(hub))
        except OSError:
            break
    before = hub.cpu_seconds()
    time.sleep(1.0)
    assert hub.cpu_seconds() - before < 0.5, "the hub spun on its listener instead of pausing accepts"
    for s in flood:
        s.close()
    deadline = time.time() + 10
    while True:  # once descriptors are free again, the hub accepts and serves
        try:
            with connect(hub.url + "/echo", open_timeout=2) as ws:
                ws.send("back")
                assert ws.recv(timeout=5) == "back"
                break
        except (OSError, EOFError, TimeoutError, ConnectionClosed, InvalidHandshake):
            # Until the hub has reaped the flood, it refuses new clients (descriptors in reserve).
            assert time.time() < deadline
            time.sleep(0.2)
    assert hub.process.poll() is None


def test_client_that_never_reads_is_paused_then_timed_out(hub_factory):
    hub = hub_factory("--idle-timeout", "1500ms", "--ping-interval", "10s", "--loops", "1")
    s = open_raw_websocket(hub)
    s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
    frame = masked_frame(0x2, b"x" * 60000)
    s.settimeout(0.2)
    sent = 0
    started = time.time()
    try:
        while time.time() - started < 5:
            s.sendall(frame)  # blocks once the hub stops reading from us
            sent += 1
    except (socket.timeout, BlockingIOError):
        pass
    assert sent < 2000, "the hub kept reading from a client that never reads its echoes"
    rss_kib = int([l for l in open("/proc/%d/status" % hub.process.pid) if l.startswith("VmRSS:")][0].split()[1])
    assert rss_kib < 200 * 1024, "outbound data for one client must stay bounded"
    hub.wait_for_connections(0, timeout=10)  # closed by the idle timeout, no reads from us since the pause


def test_a_refused_hello_whose_close_is_never_answered_does_not_spin(hub):
    # Regression: the hello deadline passing while our close frame waited for its answer made
    # the loop re-fire the same timer forever.
    s = open_raw_websocket(hub, "/v1/connect")
    s.sendall(masked_frame(0x1, b'{"type":"hello","protocol":1,"device":"d"}'))  # anonymous: refused
    s.settimeout(5)
    first = s.recv(2)
    assert first[0] == 0x81  # the error message comes first
    before = hub.cpu_seconds()
    time.sleep(1.5)  # past the 700 ms hello timeout; we never answer the close
    assert hub.cpu_seconds() - before < 0.5, "the loop spun"
    with connect(hub.url + "/echo") as ws:
        ws.send("still serving")
        assert ws.recv(timeout=5) == "still serving"
    hub.wait_for_connections(0, timeout=15)


def test_ambiguous_framing_is_refused_at_once(hub):
    """RFC 9112 §6.3 and RFC 6455 §4.2.1: two Content-Length headers, a signed one, two
    Sec-WebSocket-Key headers, or a bare LF line ending are a 400 at once — never a request read
    with one of two lengths, never a 408 after waiting for a CRLF."""
    auth = "Authorization: Bearer %s\r\n" % hub.token
    admin_requests = [
        "POST /v1/syncs HTTP/1.1\r\nHost: x\r\n%sContent-Length: 2\r\nContent-Length: 30\r\n\r\n{}" % auth,
        "POST /v1/syncs HTTP/1.1\r\nHost: x\r\n%sContent-Length: +2\r\n\r\n{}" % auth,
        "GET /healthz HTTP/1.1\nHost: x\n\n",
    ]
    for request in admin_requests:
        s = socket.create_connection(("127.0.0.1", hub.admin_port), timeout=5)
        started = time.time()
        s.sendall(request.encode())
        response = read_all(s)
        assert status_of(response) == 400, (request, response[:200])
        assert time.time() - started < 0.5, request
    s = raw(hub)
    started = time.time()
    s.sendall(upgrade_request(extra="Sec-WebSocket-Key: %s\r\n" % GOOD_KEY))
    response = read_all(s)
    assert status_of(response) == 400 and b"Sec-WebSocket-Key" in response, response[:200]



def rss_kib(pid):
    for line in open("/proc/%d/status" % pid):
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    raise AssertionError("no VmRSS")


def test_a_client_that_pings_without_reading_is_paused_not_buffered(hub_factory):
    """DESIGN §9: what the hub answers by itself (pongs) counts against the watermarks. A client
    that sends pings for 3 s and never reads gets its reading paused above the high watermark,
    so the hub holds about a megabyte for it, not the 64 MiB hard limit (+61 MB RSS before)."""
    hub = hub_factory("--message-rate", "0")  # the watermarks alone (the rate limit would close it)
    before = rss_kib(hub.process.pid)
    s = open_raw_websocket(hub, "/v1/connect")
    s.setblocking(False)
    ping = masked_frame(0x9, b"p" * 125)
    batch = ping * 512
    sent, pending = 0, b""
    deadline = time.time() + 3
    while time.time() < deadline:
        try:
            pending = pending or batch
            n = s.send(pending)
            pending = pending[n:]
            sent += n
        except BlockingIOError:
            time.sleep(0.01)
    grown_mib = (rss_kib(hub.process.pid) - before) / 1024
    s.close()
    assert sent > 4 << 20, "the client could only send %d bytes" % sent
    assert grown_mib < 16, "the hub grew by %.1f MiB for one client that does not read" % grown_mib


def test_operators_reach_healthz_when_clients_take_every_descriptor(hub_factory):
    """DESIGN §9: descriptors are kept in reserve, so the admin listener answers when clients
    have taken every other one (they used to take them all: /healthz then went unanswered)."""
    hub = hub_factory("--loops", "1", max_fds=64)
    flood = []
    for _ in range(120):
        try:
            flood.append(started_request(hub))
        except OSError:
            break
    time.sleep(0.5)
    request = urllib.request.Request("http://127.0.0.1:%d/healthz" % hub.admin_port)
    with urllib.request.urlopen(request, timeout=3) as response:
        assert response.status == 200
    for s in flood:
        s.close()
    assert hub.process.poll() is None


def test_memory_goes_back_to_the_system_after_abusive_clients_leave(hub_factory):
    """Issue 9: RSS stayed 100–300 MB above its start after ping-flooding clients left (glibc
    keeps freed memory in its arenas). 60 clients flood pings without reading beside 3,000
    signed-in clients; all but 30 leave; within a few seconds the hub is back near where it was
    before the flood."""
    hub = hub_factory("--dev", "--message-rate", "0")
    hello = json.dumps({"type": "hello", "protocol": 1, "device": "d", "app": {"platform": "ios", "version": "1.0.0"}}).encode()

    def signed_in():
        s = socket.socket()
        s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)  # before connect: a small window
        s.settimeout(5)
        s.connect(("127.0.0.1", hub.port))
        s.sendall(upgrade_request("/v1/connect"))
        head = b""
        while b"\r\n\r\n" not in head:
            head += s.recv(1)
        assert status_of(head) == 101
        s.sendall(masked_frame(0x1, hello))
        return s

    # A first round of as many clients, signed in and gone, sizes what the hub keeps at its high
    # water on purpose (descriptor-indexed tables, index capacities): "before" is measured after
    # it, so what is compared is what the flood took and gave back.
    for s in [signed_in() for _ in range(3060)]:
        s.close()
    hub.wait_for_connections(0, timeout=10)
    time.sleep(1)
    before = rss_kib(hub.process.pid)
    idle = [signed_in() for _ in range(3000)]
    flooders = [signed_in() for _ in range(60)]
    for s in flooders:
        s.setblocking(False)
    batch = masked_frame(0x9, b"p" * 125) * 512
    # Flood until the hub holds 16 MiB more (each flooder's queue stops near 1 MiB), at most
    # 15 s: on a loaded machine the flooders need longer to get there.
    deadline = time.time() + 15
    while time.time() < deadline and rss_kib(hub.process.pid) - before < 16 << 10:
        for s in flooders:
            try:
                s.send(batch)
            except BlockingIOError:
                pass
    peak = rss_kib(hub.process.pid)
    # Every 100th client stays: what they hold is spread over the heap, as in a real hub.
    stay = idle[::100]
    for s in [c for i, c in enumerate(idle) if i % 100] + flooders:
        s.close()
    hub.wait_for_connections(len(stay), timeout=10)
    after = peak
    deadline = time.time() + 8
    while time.time() < deadline and after - before > 4 << 10:
        time.sleep(0.5)
        after = rss_kib(hub.process.pid)
    assert peak - before > 12 << 10, "the load grew the hub by %d KiB only: not a test" % (peak - before)
    assert after - before <= 4 << 10, "RSS %d KiB before, %d KiB at the peak, still %d KiB after" % (before, peak, after)


def test_a_client_over_the_message_rate_is_warned_then_closed_while_others_are_served(hub_factory):
    """Issue 9: 20,000 messages were answered in 0.29 s. Past the bucket (here 20 at once, 10/s)
    the client gets one `rate_limited` error, and the next message over closes it with 1008;
    a client beside it that stays under the rate is served throughout."""
    hub = hub_factory("--dev", "--message-rate", "10/s", "--message-burst", "20")
    polite = connect(hub.url + "/v1/connect")
    polite.send(json.dumps({"type": "hello", "protocol": 1, "device": "polite", "app": {"platform": "ios", "version": "1.0.0"}}))
    assert json.loads(polite.recv(timeout=5))["type"] == "welcome"
    flood = open_raw_websocket(hub, "/v1/connect")
    flood.sendall(masked_frame(0x1, json.dumps({"type": "hello", "protocol": 1, "device": "flood", "app": {"platform": "ios", "version": "1.0.0"}}).encode()))
    subscribe = masked_frame(0x1, json.dumps({"type": "subscribe", "screen": "nope"}).encode())
    try:
        flood.sendall(subscribe * 20_000)
    except (BrokenPipeError, ConnectionResetError):
        pass  # closed while sending: what we want
    # This raw client never answers the close frame, so the hub ends the TCP connection only at
    # its 5 s close timeout: a 5 s receive timeout raced it (failed once in a loaded make test).
    flood.settimeout(15)
    data = read_all(flood)
    assert b'"rate_limited"' in data, data[:300]
    assert data.count(b'"pending"') <= 20, "answered %d subscribes" % data.count(b'"pending"')
    assert close_code_in(data) == 1008
    polite.send(json.dumps({"type": "subscribe", "screen": "nope"}))
    assert json.loads(polite.recv(timeout=5))["type"] == "pending"
    status, metrics = call(hub, "GET", "/metrics")
    assert "pushhub_rate_limit_closes_total 1" in metrics


def test_connection_limit_origins_and_subscriptions(hub_factory):
    """Issue 11 limits: the 1,001st connection over a limit of 1,000 gets 503 (with Retry-After)
    and the others stay; a page from a foreign origin gets 403 while allowed origins and native
    clients (no Origin) connect; past --max-subscriptions a subscribe is refused with an error;
    each counted in /metrics."""
    hub = hub_factory("--dev", "--max-connections", "1000", "--max-subscriptions", "2",
                      "--allowed-origins", "https://app.example.com,http://localhost:3000")
    held = [open_raw_websocket(hub, "/v1/connect") for _ in range(1000)]
    s = raw(hub)
    s.sendall(upgrade_request("/v1/connect"))
    response = read_all(s)
    assert status_of(response) == 503 and b"Retry-After: 5" in response and b"1000" in response, response[:300]
    # The hub half-closed after its answer and keeps the connection (counted) until this end
    # closes too, or for its 5 s close timeout: left open, it raced wait_for_connections' own
    # 5 s below (issue 24 item 5: "expected 999 connections, hub reports 1001" on a fresh clone).
    s.close()
    held.pop().close()
    hub.wait_for_connections(999)
    for origin, status in (("https://evil.example.net", 403), ("HTTPS://APP.example.com", 101), (None, 101),
                           ("http://localhost:3000", 101)):
        s = raw(hub)
        s.sendall(upgrade_request("/v1/connect", extra="Origin: %s\r\n" % origin if origin else ""))
        head = b""
        while b"\r\n\r\n" not in head:
            head += s.recv(1)
        assert status_of(head) == status, (origin, head)
        s.close()
        hub.wait_for_connections(999)  # this one is gone before the next asks for the last place
    for s in held:
        s.close()
    hub.wait_for_connections(0)
    for n in range(3):
        call(hub, "PUT", "/v1/screens/s%d" % n, {"n": n})
    ws = connect(hub.url + "/v1/connect")
    ws.send(json.dumps({"type": "hello", "protocol": 1, "device": "d", "app": {"platform": "ios", "version": "1.0.0"}}))
    assert json.loads(ws.recv(timeout=5))["type"] == "welcome"
    for n in range(3):
        ws.send(json.dumps({"type": "subscribe", "screen": "s%d" % n}))
        answer = json.loads(ws.recv(timeout=5))
        assert answer["type"] == ("snapshot" if n < 2 else "error"), answer
    assert answer["code"] == "too_many_subscriptions"
    ws.close()
    _, metrics = call(hub, "GET", "/metrics")
    for name in ("pushhub_capacity_refusals_total 1", "pushhub_origin_refusals_total 1",
                 "pushhub_subscription_refusals_total 1"):
        assert name in metrics, name


def test_connections_per_address(hub_factory):
    """--max-connections-per-ip: the 6th connection from 127.0.0.1 over a limit of 5 gets 429
    (on either loop: the count is hub-wide), 127.0.0.2 is not affected, and a closed connection
    frees its place."""
    hub = hub_factory("--max-connections-per-ip", "5")
    held = [open_raw_websocket(hub, "/v1/connect") for _ in range(5)]

    def upgrade_from(source):
        s = socket.socket()
        s.settimeout(5)
        s.bind((source, 0))
        s.connect(("127.0.0.1", hub.port))
        s.sendall(upgrade_request("/v1/connect"))
        head = b""
        while b"\r\n\r\n" not in head:
            chunk = s.recv(1)
            if not chunk:
                break
            head += chunk
        return s, status_of(head)

    for _ in range(3):
        s, status = upgrade_from("127.0.0.1")
        assert status == 429, status
        s.close()
    other, status = upgrade_from("127.0.0.2")
    assert status == 101
    held.pop().close()
    hub.wait_for_connections(5)
    again, status = upgrade_from("127.0.0.1")
    assert status == 101
    _, metrics = call(hub, "GET", "/metrics")
    assert "pushhub_address_refusals_total 3" in metrics
    for s in held + [other, again]:
        s.close()
