"""wss:// connects with earlier connections held (issue 24, item 1): 1,000 connects to one hub
with a TLS certificate, spread over six independent client stacks that run at the same time —
Python `websockets` sync and asyncio, Chromium's own WebSocket and the JavaScript client the hub
serves at /v1/client.js (in a page on the hub's origin), `openssl s_client` carrying a
hand-made upgrade and frames, and the Swift client through `hubctl watch`. Every connection is
held open until the end; each connect (TCP + TLS + upgrade + hello → welcome) is timed.

The defect: OpenSSL sent TLS 1.3 session tickets the moment the client's Finished arrived, and a
client that reads on one thread and writes on another through one TLS object (websockets' sync
client) raced on them: 2–5 % of upgrades never left the client, which then waited until its
timeout (14 of 300 here against ef54af6, the hub before the fix).

Bounds. A connect on loopback takes 3–20 ms (the hub's RSA-2048 signature is ~1 ms; the rest is
the client's work on two shared cores). A hung connect waits for the client's own timeout, set
to CLIENT_TIMEOUT (5 s; websockets' default is 10 s, 5 s keeps a failing run short). Every
connect must be welcomed within CONNECT_BOUND (2 s): 100 times the usual connect, so a machine
busy with other work still passes, and a connect that waited for a timeout cannot. For
`s_client` and `hubctl watch` the time runs from starting the process (one per connection), so
it includes its start-up (~10 ms and ~50 ms)."""
import asyncio
import base64
import json
import os
import resource
import select
import ssl
import subprocess
import threading
import time
from dataclasses import dataclass

import pytest
from websockets.asyncio.client import connect as async_connect
from websockets.sync.client import connect as sync_connect

from admin import publish
from chromium import browser_or_skip
from conftest import BIN
from test_tls import make_certificate, spki_hash

CONNECT_BOUND = 2.0
CLIENT_TIMEOUT = 5.0
# Each stack spreads its connects evenly over this window, so at any moment every stack is
# connecting while the earlier connections of all of them are held.
WINDOW = 12.0
# A stack still connecting this long after the first connect is stuck (the test fails saying so).
STACK_DEADLINE = WINDOW + 120
PLAN = {  # 1,000 connects in all
    "websockets sync": 400,
    "websockets asyncio": 300,
    "chromium WebSocket": 100,
    "chromium JS client": 100,
    "openssl s_client": 50,
    "hubctl watch": 50,
}
assert sum(PLAN.values()) == 1000


@dataclass
class Connect:
    stack: str
    index: int
    started: float  # time.time() when the connect began
    seconds: float | None  # to the welcome; None when it failed
    error: str | None = None


def hello(device):
    return json.dumps({"type": "hello", "protocol": 1, "device": device})


def paced(count, start, body):
    """Calls body(i) for each i in 0..<count, the i-th not before start + i × WINDOW / count (a
    connect that ran late is followed at once by the next one due)."""
    for i in range(count):
        due = start + i * WINDOW / count
        if (wait := due - time.time()) > 0:
            time.sleep(wait)
        body(i)


# websockets' sync client reads on a thread of its own and writes from the caller's, through one
# `ssl.SSLSocket`; OpenSSL objects are not safe for that. The hub no longer sends anything the
# reader handles while the caller writes its upgrade (the fix), but the reader still works on
# the welcome while the caller's SSL_write of the hello may be finishing: on a loaded machine,
# about 1 connect in 1,000–2,000 dies inside the client with `SSLError('[SSL] internal error')`
# (its own TLS object broken; the hub sees only the client's EOF). That is the client's fault,
# not a hang: such a connect is made again and counted apart, within MAX_CLIENT_TLS_FAULTS.
MAX_CLIENT_TLS_FAULTS = 4


def websockets_sync(url, context, start, results, held, client_faults):
    """One connection after another from the calling thread; half offer permessage-deflate
    (the issue saw the hang either way)."""
    def one(i):
        began = time.time()
        for attempt in (1, 2):
            ws = None
            try:
                ws = sync_connect(url, ssl=context, open_timeout=CLIENT_TIMEOUT, subprotocols=["pushhub.v1"],
                                  compression="deflate" if i % 2 == 0 else None)
                ws.send(hello("sync-%d" % i))
                welcome = json.loads(ws.recv(timeout=CLIENT_TIMEOUT))
                assert welcome["type"] == "welcome", welcome
                held.append(ws)
                results.append(Connect("websockets sync", i, began, time.time() - began))
                return
            except Exception as error:
                if attempt == 1 and isinstance(error.__cause__, ssl.SSLError) and "internal error" in str(error.__cause__):
                    client_faults.append("websockets sync #%d: %r (cause %r)" % (i, error, error.__cause__))
                    if ws is not None:
                        ws.close()
                    began = time.time()
                    continue
                results.append(Connect("websockets sync", i, began, None, repr(error)))
                return
    paced(PLAN["websockets sync"], start, one)


class AsyncioStack:
    """Its own event loop on its own thread, kept running (answering pings) after its connects
    until `release()`."""

    def __init__(self, url, context, start, results):
        self.url, self.context, self.start, self.results = url, context, start, results
        self.held = []
        self.connected = threading.Event()  # every connect has its result
        self.ready = threading.Event()  # self.loop and self.stop exist
        self.thread = threading.Thread(target=lambda: asyncio.run(self.run()))
        self.thread.start()

    async def run(self):
        self.loop, self.stop = asyncio.get_running_loop(), asyncio.Event()
        self.ready.set()
        count = PLAN["websockets asyncio"]
        for i in range(count):
            if (wait := self.start + i * WINDOW / count - time.time()) > 0:
                await asyncio.sleep(wait)
            began = time.time()
            try:
                ws = await async_connect(self.url, ssl=self.context, open_timeout=CLIENT_TIMEOUT,
                                         subprotocols=["pushhub.v1"], compression="deflate" if i % 2 == 0 else None)
                self.held.append(ws)
                await ws.send(hello("asyncio-%d" % i))
                welcome = json.loads(await asyncio.wait_for(ws.recv(), CLIENT_TIMEOUT))
                assert welcome["type"] == "welcome", welcome
                self.results.append(Connect("websockets asyncio", i, began, time.time() - began))
            except Exception as error:
                self.results.append(Connect("websockets asyncio", i, began, None, repr(error)))
        self.connected.set()
        await self.stop.wait()
        for ws in self.held:
            ws.transport.abort()

    def release(self):
        if self.ready.wait(10):
            self.loop.call_soon_threadsafe(self.stop.set)
        self.thread.join(30)


def read_until(process, done, deadline):
    """Reads the process's stdout until done(bytes so far) or the deadline; the bytes."""
    data = b""
    while not done(data):
        left = deadline - time.monotonic()
        if left <= 0 or not select.select([process.stdout], [], [], left)[0]:
            raise TimeoutError("no answer within %.0f s (got %r)" % (CLIENT_TIMEOUT, data[:200]))
        chunk = os.read(process.stdout.fileno(), 65536)
        if not chunk:
            raise ConnectionError("the process closed its output (exit %r; got %r)" % (process.poll(), data[:200]))
        data += chunk
    return data


def masked_text_frame(text):
    payload = text.encode()
    assert len(payload) < 126
    key = os.urandom(4)
    return bytes([0x81, 0x80 | len(payload)]) + key + bytes(b ^ key[n % 4] for n, b in enumerate(payload))


def first_frame(data):
    """The payload of the first complete unmasked frame in data, or None."""
    if len(data) < 2:
        return None
    length, offset = data[1] & 0x7F, 2
    if length == 126:
        if len(data) < 4:
            return None
        length, offset = int.from_bytes(data[2:4], "big"), 4
    return data[offset:offset + length] if len(data) >= offset + length else None


def openssl_s_client(port, cert, start, results, held):
    """`openssl s_client` per connection: the upgrade request written by hand, then a masked
    hello frame; the 101 and the welcome frame read from its output."""
    def one(i):
        began, clock = time.time(), time.monotonic()
        process = subprocess.Popen(
            ["openssl", "s_client", "-connect", "127.0.0.1:%d" % port, "-servername", "localhost", "-CAfile", cert,
             "-verify_return_error", "-quiet"],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
        held.append(process)
        try:
            key = base64.b64encode(os.urandom(16)).decode()
            process.stdin.write(("GET /v1/connect HTTP/1.1\r\nHost: localhost\r\nUpgrade: websocket\r\n"
                                 "Connection: Upgrade\r\nSec-WebSocket-Key: %s\r\nSec-WebSocket-Version: 13\r\n"
                                 "Sec-WebSocket-Protocol: pushhub.v1\r\n\r\n" % key).encode())
            process.stdin.flush()
            deadline = clock + CLIENT_TIMEOUT
            data = read_until(process, lambda d: b"\r\n\r\n" in d, deadline)
            head, rest = data.split(b"\r\n\r\n", 1)
            assert head.startswith(b"HTTP/1.1 101 "), head
            process.stdin.write(masked_text_frame(hello("s_client-%d" % i)))
            process.stdin.flush()
            rest += read_until(process, lambda d: first_frame(rest + d) is not None, deadline)
            welcome = json.loads(first_frame(rest))
            assert welcome["type"] == "welcome", welcome
            results.append(Connect("openssl s_client", i, began, time.monotonic() - clock))
        except Exception as error:
            results.append(Connect("openssl s_client", i, began, None, repr(error)))
    paced(PLAN["openssl s_client"], start, one)


def hubctl_watch(port, cert, start, results, held):
    """`hubctl --json watch` per connection (the Swift client, PushHubClient over its own TLS);
    with --json it prints each message it receives, the welcome first."""
    def one(i):
        began, clock = time.time(), time.monotonic()
        process = subprocess.Popen(
            [os.path.join(BIN, "hubctl"), "--json", "--cacert", cert, "watch", "home",
             "--ws-url", "wss://127.0.0.1:%d/v1/connect" % port, "--device", "hubctl-%d" % i],
            stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
        held.append(process)
        try:
            line = read_until(process, lambda d: b"\n" in d, clock + CLIENT_TIMEOUT).split(b"\n", 1)[0]
            welcome = json.loads(line)
            assert welcome["type"] == "welcome", welcome
            results.append(Connect("hubctl watch", i, began, time.monotonic() - clock))
        except Exception as error:
            results.append(Connect("hubctl watch", i, began, None, repr(error)))
    paced(PLAN["hubctl watch"], start, one)


# Runs in a page on the hub's origin (https://127.0.0.1:PORT/v1/client.js, so the module is
# same-origin): W.run(kind, …) makes its connects on the same schedule as the Python stacks.
# A JS-client connect that needed a second attempt is a failure (its retry would hide a hang).
HARNESS = r"""
window.W = {
  held: { raw: [], js: [] },
  async load() { W.P = await import("/v1/client.js"); return true; },
  connect(kind, url, i, timeoutMs) {
    return new Promise((resolve) => {
      const began = Date.now(), clock = performance.now();
      let done = false;
      const finish = (error) => {
        if (done) return;
        done = true;
        clearTimeout(timer);
        resolve({ index: i, started: began / 1000, seconds: error ? null : (performance.now() - clock) / 1000, error });
      };
      const timer = setTimeout(() => finish("timeout after " + timeoutMs + " ms"), timeoutMs);
      if (kind === "raw") {
        const ws = new WebSocket(url, "pushhub.v1");
        W.held.raw.push(ws);
        ws.onopen = () => ws.send(JSON.stringify({ type: "hello", protocol: 1, device: "chromium-" + i }));
        ws.onmessage = (event) => {
          const message = JSON.parse(event.data);
          finish(message.type === "welcome" ? null : "first message " + event.data);
        };
        ws.onclose = (event) => finish("closed " + event.code + " before the welcome");
      } else {
        const hub = new W.P.PushHub({ url, device: "js-" + i, storageKey: "wss-" + i,
                                      app: { platform: "web", version: "1.0.0" } });
        W.held.js.push(hub);
        hub.on("welcome", () => finish(
          hub.stats.connects === 1 ? null : "welcomed after " + hub.stats.connects + " attempts"));
        hub.on("close", (event) => finish("closed " + event.code + " before the welcome"));
        hub.on("error", (event) => finish("error " + event.code + ": " + event.message));
      }
    });
  },
  async run(kind, url, count, start, windowMs, timeoutMs) {
    const results = [];
    for (let i = 0; i < count; i++) {
      const wait = start * 1000 + i * windowMs / count - Date.now();
      if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait));
      results.push(await W.connect(kind, url, i, timeoutMs));
    }
    return results;
  },
  open() {
    return { raw: W.held.raw.filter((ws) => ws.readyState === WebSocket.OPEN).length,
             js: W.held.js.filter((hub) => hub.state === "live").length };
  },
};
"""


def chromium_both(browser, port, start, results):
    """Chromium's WebSocket and the JS client, each on its schedule, in one page at once."""
    url = "wss://127.0.0.1:%d/v1/connect" % port
    runs = browser.evaluate(
        "Promise.all([W.run('raw', %s, %d, %r, %d, %d), W.run('js', %s, %d, %r, %d, %d)])" % (
            json.dumps(url), PLAN["chromium WebSocket"], start, WINDOW * 1000, CLIENT_TIMEOUT * 1000,
            json.dumps(url), PLAN["chromium JS client"], start, WINDOW * 1000, CLIENT_TIMEOUT * 1000),
        timeout=STACK_DEADLINE)
    for stack, run in zip(("chromium WebSocket", "chromium JS client"), runs):
        results.extend(Connect(stack, r["index"], r["started"], r["seconds"], r["error"]) for r in run)


def summary(results):
    """One line per stack: count, failures, p50 / p99 / max in ms."""
    lines = []
    for stack in PLAN:
        mine = [r for r in results if r.stack == stack]
        times = sorted(r.seconds for r in mine if r.seconds is not None)
        failed = len(mine) - len(times)
        if times:
            p50, p99 = times[len(times) // 2], times[min(len(times) - 1, len(times) * 99 // 100)]
            lines.append("%-20s %4d connects, %2d failed, p50 %6.1f ms, p99 %6.1f ms, max %7.1f ms" % (
                stack, len(mine), failed, p50 * 1e3, p99 * 1e3, times[-1] * 1e3))
        else:
            lines.append("%-20s %4d connects, %2d failed" % (stack, len(mine), failed))
    return "\n".join(lines)


@pytest.mark.parametrize("loops", [1, 2])
def test_1000_wss_connects_over_six_client_stacks_are_each_welcomed_within_2_s_with_the_earlier_ones_held(
        hub_factory, tmp_path, loops):
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft < 4096:  # ~1,000 sockets and pipes here
        resource.setrlimit(resource.RLIMIT_NOFILE, (min(4096, hard), hard))
    cert, key = make_certificate(str(tmp_path), "hub")
    # s_client cannot answer pings: the idle timeout is lifted past the run (the default 60 s
    # would close its connections only if the machine were very slow).
    hub = hub_factory("--dev", "--loops", str(loops), "--tls-cert", cert, "--tls-key", key, "--idle-timeout", "5m",
                      max_fds=4096)
    publish(hub, "home", {"title": "held"})  # what the hubctl watchers subscribe to
    browser = browser_or_skip("the wss connects test (Chromium stacks)",
                              flags=["--ignore-certificate-errors-spki-list=" + spki_hash(cert)])
    results, sync_held, processes, client_faults = [], [], [], []
    url = "wss://127.0.0.1:%d/v1/connect" % hub.port
    context = ssl.create_default_context(cafile=cert)
    stacks, asyncio_stack = [], None
    try:
        browser.call("Page.navigate", url="https://127.0.0.1:%d/v1/client.js" % hub.port)
        browser.wait_for("location.protocol === 'https:' && document.readyState === 'complete'", what="the hub's page")
        browser.evaluate(HARNESS)
        assert browser.evaluate("W.load()") is True
        start = time.time() + 0.5  # every stack's first connect; each paces its own after it
        stacks = [threading.Thread(target=target, args=args) for target, args in (
            (websockets_sync, (url, context, start, results, sync_held, client_faults)),
            (chromium_both, (browser, hub.port, start, results)),
            (openssl_s_client, (hub.port, cert, start, results, processes)),
            (hubctl_watch, (hub.port, cert, start, results, processes)),
        )]
        for thread in stacks:
            thread.start()
        asyncio_stack = AsyncioStack(url, context, start, results)
        end = start + STACK_DEADLINE
        for thread in stacks:
            thread.join(max(0.0, end - time.time()))
            assert not thread.is_alive(), "a client stack did not finish"
        assert asyncio_stack.connected.wait(max(0.0, end - time.time())), "the asyncio stack did not finish"

        report = summary(results)
        print("\n--loops %d: %d connects, the last begun %.1f s after the first\n%s" % (
            loops, len(results), max(r.started for r in results) - start, report))
        if client_faults:
            print("made again after the client broke its own TLS object:\n  " + "\n  ".join(client_faults))
        assert len(client_faults) <= MAX_CLIENT_TLS_FAULTS, client_faults
        failed = [r for r in results if r.seconds is None]
        assert not failed, "%d connects failed (timed out or refused):\n%s\n%s" % (
            len(failed), "\n".join("  %s #%d: %s" % (r.stack, r.index, r.error) for r in failed[:20]), report)
        slow = [r for r in results if r.seconds > CONNECT_BOUND]
        assert not slow, "%d connects took over %.0f s:\n%s\n%s" % (
            len(slow), CONNECT_BOUND, "\n".join("  %s #%d: %.2f s" % (r.stack, r.index, r.seconds) for r in slow[:20]),
            report)
        assert len(results) == 1000

        # Every connection is still held, by its client and by the hub.
        assert all(ws.protocol.state.name == "OPEN" for ws in sync_held + asyncio_stack.held)
        assert [p.poll() for p in processes] == [None] * 100
        assert browser.evaluate("W.open()") == {"raw": 100, "js": 100}
        deadline = time.time() + 5
        while (stats := hub.stats())["websocket_connections"] != 1000 or stats["sessions"] != 1000:
            assert time.time() < deadline, "the hub holds %r, not 1,000 connections and sessions" % stats
            time.sleep(0.05)
    finally:
        hub.process.kill()  # the clients below then close at once instead of one handshake each
        hub.process.wait()
        for process in processes:
            process.kill()
            process.wait()
        for ws in sync_held:
            ws.socket.close()
        for thread in stacks:
            thread.join(30)
        if asyncio_stack:
            asyncio_stack.release()
        browser.close()
