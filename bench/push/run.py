"""Silent pushes (issue 30, DESIGN §17), measured on loopback: how fast one hub hands a sync's pushes
to a provider over one HTTP/2 connection, what that costs it (CPU per push, the queue's memory),
and whether socket deliveries made meanwhile suffer.

    .venv/bin/python bench/push/run.py [--devices 100000] [--only apns|mixed] [--runs 2] [--tokens K]
                                       [--perf PREFIX] [--keep]

Per scenario (**apns**: every device on APNs; **mixed**: even devices on APNs, odd ones on FCM),
one release hub (`--dev`, `--loops 1`, its own data dir) and one sink:

- The sink is Debian's `nghttpd` (C, one event loop) over TLS with ALPN h2, serving files to the
  hub's POSTs (bench/push/sink.py): `3/device/<token>` for each APNs token (200, empty body),
  FCM's `v1/projects/<id>/messages:send` and the OAuth `token` (the service account's token_uri).
  `--max-concurrent-streams` is `--streams` (1,000, as APNs allows). nghttpd is checked with
  `curl --http2` first; if it cannot be used, the end-to-end tests' Python stand-in is (slower:
  the figures then say so). The hub trusts the sink's self-signed certificate with `--push-ca`.
- 1,000 (`--clients`) clients, anonymous devices held by `bench/loadgen/loadgen drive` (C),
  subscribed to one screen, connect first; they get the publishes measured below.
- Registration: `--devices` N devices, device d-<i> each in a short WebSocket session of its own
  (hello with an app, `push_token`, close; bench/push/register.py, in a child process),
  `--concurrency` at once; every APNs token distinct (64 hex digits; `--tokens K`: K tokens
  shared in turn), FCM tokens ~150 characters. Meanwhile publishes go on as in **push +
  deliveries** below. Figures: sessions/s and hub CPU per session, by tenths; the data dir's
  files; then `GET /v1/devices?limit=1` until its `count` is N, the time of that GET (and of
  `?user=nobody`), and a dry run of the sync (how many devices it would push).
- **idle**: `--rounds` publishes of the screen (one changed leaf, `--pause` between): p50/p99 of
  PUT sent → each client's patch (both stamps CLOCK_MONOTONIC).
- **push** (`--runs` times): `POST /v1/syncs {"target":{"all":true},"push":"always",...}` and
  `GET /v1/syncs/<id>` every 10 ms from another connection until the receipts' pushed +
  push_failed reach N. Figures: the POST's own time (the hub queues every push before it answers),
  time to the last push answered, pushes/s (N ÷ that), hub CPU per push (/proc/<pid>/stat
  utime+stime, and its control-plane thread alone from schedstat: the pushes are sent from there),
  the hub's VmRSS just before the POST and at its answer, its highest VmRSS sampled every 10 ms
  and VmHWM (reset before the POST through /proc/<pid>/clear_refs), the sink's CPU (is it the
  bottleneck?), the TCP connections to the sink, `pushhub_pushes_total` per provider and outcome.
  `--perf PREFIX` records the hub (`perf record -g`) over the registration and the first run of
  each window.
- **push + deliveries**: one more push run; publishes go on one after another (`--pause` apart,
  on an admin connection of their own) from 0.3 s before the POST until the last push is
  answered: p50/p99 of those whose PUT was in the hub while it took the POST (it queues every
  push before it answers), and of those sent after its answer, while the pushes drain.
- The push runs are made for each of `--sink-window-bits` (16,24): nghttpd's connection-level
  receive window, 64 KiB (RFC 9113's initial window, nghttpd's default) and then 16 MiB, nghttpd
  restarted in between (the hub reconnects at the next push). With 64 KiB one connection is
  bounded by flow control (the hub waits for WINDOW_UPDATEs), with 16 MiB by the hub.

The hub's warnings and errors are printed at the end of each scenario. Every wait is bounded
(`--timeout`); the hub, the sink and the generator are stopped on exit, the work folder removed
(unless `--keep`).
"""
import argparse
import hashlib
import http.client
import json
import multiprocessing
import os
import subprocess
import sys
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.abspath(os.path.join(HERE, "..", ".."))
sys.path.insert(0, os.path.join(ROOT, "bench", "lib"))
sys.path.insert(0, HERE)
from benchlib import (  # noqa: E402 (bench/lib is found through ROOT)
    AdminConnection, BenchHub, DrivePool, HubCPU, Others, add_quiet_arguments, cpu_seconds, free_port, percentile,
    proc_status, record, say, started, stop, stop_recording, wait_quiet, work_folder)
from register import register  # noqa: E402
from sink import TOPIC, Credentials, Nghttpd, SinkUnusable, python_sink  # noqa: E402

PUSHHUB = os.environ.get("PUSHHUB", os.path.join(ROOT, ".build", "release", "pushhub"))
LOADGEN = os.path.join(ROOT, "bench", "loadgen", "loadgen")
SCREEN = "bench/push"
FIRST_CLIENT = 10_000_000  # the generator's devices d-10000000…: none of them registered
SYNC = {"target": {"all": True}, "push": "always", "reason": "bench", "scope": "bundle"}


def apns_token(i):
    return hashlib.sha256(b"apns-%d" % i).hexdigest()


def fcm_token(i):
    digest = hashlib.sha256(b"fcm-%d" % i).hexdigest()
    return "%s:APA91b%s" % (digest[:22], (digest * 3)[:130])


def devices_of(n, mixed, tokens):
    """[(i, provider, token, topic)]: device d-<i>; with `mixed`, odd devices are on FCM; with
    `tokens`, device i has the token of device i % tokens (registrations are per device)."""
    def token(i):
        return fcm_token(i) if mixed and i % 2 else apns_token(i)
    return [(i, "fcm", token(i % tokens if tokens else i), None) if mixed and i % 2
            else (i, "apns", token(i % tokens if tokens else i), TOPIC) for i in range(n)]


def tree(k):
    return {"type": "screen", "title": "Push bench", "children": [{"id": "round", "type": "text", "text": "r%d" % k}]}


def mib(kib):
    return kib / 1024


class Hub(BenchHub):
    def __init__(self, data, flags, loops, timeout):
        os.makedirs(data)
        self.data = data
        super().__init__(
            PUSHHUB, ["--dev", "--listen", "127.0.0.1:0", "--admin", "127.0.0.1:0", "--data", data, "--loops",
                      str(loops), "--ping-interval", "10m", "--idle-timeout", "10m", "--hello-timeout", "10m",
                      "--log-level", "warning", *flags],
            data + ".log", os.path.join(data, "admin.token"), timeout)

    def must(self, method, path, body=None):
        status, answer, t0, t1 = self.call(method, path, body)
        if status // 100 != 2:
            raise SystemExit("%s %s: %d %s" % (method, path, status, answer))
        return answer, t0, t1

    def rss(self, field="VmRSS"):
        return proc_status(self.pid, field)

    def problems(self):
        return [line.strip()[:400] for line in open(self.log)
                if '"level":"error"' in line or '"level":"warning"' in line]

    def push_metrics(self):
        status, text = self.text("/metrics")
        return {line.split()[0]: float(line.split()[1]) for line in text.splitlines()
                if line.startswith("pushhub_push") and len(line.split()) == 2}


def sink_connections(port):
    """Established TCP connections to the sink's port (the server side of each)."""
    count = 0
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        try:
            lines = open(table).read().splitlines()[1:]
        except OSError:
            continue
        for line in lines:
            fields = line.split()
            if int(fields[1].rsplit(":", 1)[1], 16) == port and fields[3] == "01":
                count += 1
    return count


def publish_round(admin, pool, k, clients, timeout):
    """One publish of the screen through `admin` (a Hub or an AdminConnection): (latencies in ms
    of PUT sent → each client's patch, PUT ms, PUT sent ns, PUT answered ns). Other messages (the
    push sync's own socket delivery) may arrive meanwhile: waited past."""
    pool.mark()
    answer, t0, t1 = admin.must("PUT", "/v1/screens/" + SCREEN, tree(k))
    version, want, deadline = answer["version"], clients, time.monotonic() + timeout
    while True:
        pool.wait(want, max(0.1, deadline - time.monotonic()))
        messages = pool.dump()
        patches = [m for m in messages if m[2] in ("patch", "snapshot") and m[3] == 0 and m[4] == version]
        if len(patches) >= clients or time.monotonic() > deadline:
            break
        want = len(messages) + clients - len(patches)
    if len(patches) != clients or len({m[0] for m in patches}) != clients:
        raise SystemExit("publish %d: %d patches for %d clients" % (k, len(patches), clients))
    return [(m[1] - t0) / 1e6 for m in patches], (t1 - t0) / 1e6, t0, t1


def latency_line(label, latencies, puts, rounds):
    say("%s: %d publishes × %d clients: p50 %.2f ms, p99 %.2f ms, max %.2f ms; PUT answered in p50 %.2f ms, "
        "max %.2f ms" % (label, rounds, len(latencies) // max(1, rounds), percentile(latencies, 0.5),
                         percentile(latencies, 0.99), max(latencies), percentile(puts, 0.5), max(puts)))


class Publisher(threading.Thread):
    """Publishes one after another (`pause` apart), on an admin connection of its own, until
    `stop`: what socket deliveries get while the pushes drain."""

    def __init__(self, hub, pool, k, args):
        super().__init__(daemon=True)
        self.admin, self.pool, self.k, self.args = AdminConnection(hub, args.timeout), pool, k, args
        self.rounds, self.error, self.halt = [], None, threading.Event()
        self.start()

    def run(self):
        try:
            while not self.halt.is_set():
                self.rounds.append(publish_round(self.admin, self.pool, self.k, self.args.clients, self.args.timeout))
                self.k += 1
                self.halt.wait(self.args.pause)
        except BaseException as error:  # said in `stop`, on the main thread
            self.error = error

    def stop(self):
        self.halt.set()
        self.join()
        self.admin.connection.close()
        if self.error:
            raise SystemExit("publishes during the pushes: %r" % (self.error,))

    def line(self, label, rounds=None):
        """The latency line of `rounds` (default: all)."""
        rounds = self.rounds if rounds is None else rounds
        if rounds:
            latency_line(label, [x for r in rounds for x in r[0]], [r[1] for r in rounds], len(rounds))
        else:
            say("%s: no publish" % label)


class Sampler(threading.Thread):
    """The hub's VmRSS every 10 ms (its highest), until `stop`."""

    def __init__(self, pid):
        super().__init__(daemon=True)
        self.pid, self.peak, self.done = pid, 0, threading.Event()
        self.start()

    def run(self):
        while not self.done.is_set():
            try:
                self.peak = max(self.peak, proc_status(self.pid, "VmRSS"))
            except OSError:
                return
            time.sleep(0.01)

    def stop(self):
        self.done.set()
        self.join()
        return self.peak


class Receipts(threading.Thread):
    """`GET /v1/syncs/<id>` every 10 ms until pushed + push_failed ≥ n: `done_ns` is when it was
    first seen (monotonic), `last` the receipts then."""

    def __init__(self, hub, n, timeout):
        super().__init__(daemon=True)
        self.admin, self.n, self.timeout = AdminConnection(hub, timeout), n, timeout
        self.sync_id, self.ready = None, threading.Event()
        self.done_ns, self.last, self.error = None, None, None
        self.finished = threading.Event()
        self.start()

    def run(self):
        try:
            self.ready.wait()
            deadline = time.monotonic() + self.timeout
            while time.monotonic() < deadline:
                receipts = receipts_of(self.admin.get("/v1/syncs/" + self.sync_id))
                self.last = receipts
                if receipts.get("pushed", 0) + receipts.get("push_failed", 0) >= self.n:
                    self.done_ns = time.monotonic_ns()
                    return
                time.sleep(0.01)
        except (OSError, SystemExit, http.client.HTTPException) as error:
            self.error = error
        finally:
            self.admin.close()
            self.finished.set()

    def follow(self, sync_id):
        self.sync_id = sync_id
        self.ready.set()


def receipts_of(answer):
    keys = ("targeted_online", "delivered", "acked", "pushed", "push_failed")
    found = answer.get("receipts", answer)
    return {key: found.get(key) for key in keys if key in found}


def push_run(label, hub, sink_pid, sink_port, n, pool, args, k0, perf=None):
    """One sync pushed to all N devices; with `pool`, publishes meanwhile; with `perf` (a file),
    the hub recorded by `perf record -g` meanwhile. Returns the next round number."""
    say(wait_quiet(args.quiet_pct, args.quiet_wait))
    others = Others(hub.pid, sink_pid, pool.process.pid if pool else None)
    before = hub.push_metrics()
    with open("/proc/%d/clear_refs" % hub.pid, "w") as clear:
        clear.write("5")  # VmHWM := VmRSS
    rss0 = hub.rss()
    cpu0, sink0, threads = cpu_seconds(hub.pid), cpu_seconds(sink_pid), HubCPU(hub.pid)
    sampler, receipts = Sampler(hub.pid), Receipts(hub, n, args.timeout)
    recorder = record(hub, perf)
    publisher = None
    if pool:
        publisher = Publisher(hub, pool, k0, args)
        time.sleep(0.3)  # publishes under way when the POST comes
    answer, t0, t1 = hub.must("POST", "/v1/syncs", SYNC)
    rss_answered = hub.rss()
    receipts.follow(answer["id"])
    receipts.finished.wait(args.timeout + 5)
    if publisher:
        publisher.stop()
    stop_recording(recorder, label)
    cpu1, sink1, used = cpu_seconds(hub.pid), cpu_seconds(sink_pid), threads.used()
    peak, hwm, rss1 = sampler.stop(), hub.rss("VmHWM"), hub.rss()
    connections = sink_connections(sink_port)
    after = hub.push_metrics()
    k = publisher.k if publisher else k0
    if receipts.done_ns is None:
        say("%s: NOT DONE within %d s: receipts %s (%s)" % (label, args.timeout, receipts.last, receipts.error))
        return k
    seconds = (receipts.done_ns - t0) / 1e9
    say("%s: POST answered in %.1f ms (push_queued %s); last push answered %.2f s after the POST: %.0f pushes/s "
        "(%.0f/s after the POST's answer); receipts %s"
        % (label, (t1 - t0) / 1e6, answer.get("push_queued"), seconds, n / seconds,
           n / ((receipts.done_ns - t1) / 1e9), json.dumps(receipts.last)))
    say("%s: hub CPU %.2f s = %.1f µs per push (control-plane thread %.1f µs, loops %.1f µs); sink CPU %.2f s "
        "(%.0f %% of a core); TCP connections to the sink %d; others used %.0f %% of the machine"
        % (label, cpu1 - cpu0, 1e6 * (cpu1 - cpu0) / n, used["control"] / 1e3 / n, used["loops"] / 1e3 / n,
           sink1 - sink0, 100 * (sink1 - sink0) / seconds, connections, others.pct()))
    say("%s: hub VmRSS %.1f MiB before the POST, %.1f MiB at its answer (every push queued), highest sampled "
        "%.1f MiB (+%.1f MiB = %.0f B per push), VmHWM %.1f MiB, %.1f MiB after"
        % (label, mib(rss0), mib(rss_answered), mib(peak), mib(peak - rss0), 1024 * (peak - rss0) / n, mib(hwm),
           mib(rss1)))
    changed = {key: after[key] - before.get(key, 0) for key in after if after[key] != before.get(key, 0)}
    say("%s: metrics changed: %s" % (label, ", ".join("%s +%g" % (key, value) for key, value in sorted(changed.items())
                                                    if "_total" in key)))
    if publisher:
        # Publishes whose PUT was in the hub while it took the POST, then those sent after its answer.
        publisher.line(label + ", publishes overlapping the POST",
                       [r for r in publisher.rounds if r[2] < t1 and r[3] > t0])
        publisher.line(label + ", publishes after the POST's answer", [r for r in publisher.rounds if r[2] >= t1])
    return k


def register_in_child(hub, devices, concurrency):
    """Registers `devices` from a child process (its asyncio loop would otherwise hold this
    process's GIL against the publishes measured meanwhile). Returns (seconds, failures, tenths:
    [(sessions done, perf_counter, hub CPU s)] at each tenth, as heard here)."""
    context = multiprocessing.get_context("fork")
    receiving, sending = context.Pipe(duplex=False)
    n = len(devices)

    def child():
        told = [0]

        def progress(done):
            if done * 10 // n > told[0]:
                told[0] = done * 10 // n
                sending.send(("tenth", done))

        sending.send(("done", register(hub.port, devices, concurrency, progress)))

    process = context.Process(target=child, daemon=True)
    tenths = [(0, time.perf_counter(), cpu_seconds(hub.pid))]
    process.start()
    sending.close()
    try:
        while True:
            try:
                kind, value = receiving.recv()
            except EOFError:
                raise SystemExit("the registering process ended without an answer (exit %s)" % process.exitcode)
            if kind == "done":
                seconds, failures = value
                return seconds, failures, tenths
            tenths.append((value, time.perf_counter(), cpu_seconds(hub.pid)))
    finally:
        process.join(10)
        if process.is_alive():
            process.kill()


def wait_registered(hub, n, timeout):
    admin = AdminConnection(hub, timeout)
    deadline, count = time.monotonic() + timeout, None
    try:
        while time.monotonic() < deadline:
            count = admin.get("/v1/devices?limit=1")["count"]
            if count >= n:
                return count
            time.sleep(0.5)
    finally:
        admin.close()
    raise SystemExit("GET /v1/devices: count %s, not %d, after %d s" % (count, n, timeout))


def scenario(name, args, work):
    mixed = name == "mixed"
    folder = os.path.join(work, name)
    os.makedirs(folder)
    devices = devices_of(args.devices, mixed, args.tokens)
    port = free_port()
    credentials = Credentials(folder, "https://127.0.0.1:%d" % port)
    sink_name, flags = "nghttpd", None
    if args.sink == "nghttpd":
        sink = None
        try:
            apns_tokens = sorted({d[2] for d in devices if d[1] == "apns"})
            sink = Nghttpd(folder, credentials, port, apns_tokens, args.streams)
            started.append(sink.start(args.windows[0]))
            sink.check(credentials, devices[0][2])
            sink_pid, sink_port, flags = sink.process.pid, port, credentials.hub_flags(sink.url, mixed)
        except (SinkUnusable, OSError) as error:
            say("# NOTE: nghttpd cannot be used (%s): the Python stand-in instead" % error)
            if sink is not None:
                stop(sink.process)
    if flags is None:
        sink_name = ("the Python stand-in (Tests/EndToEnd/push_provider.py, verifies every JWT: SLOW; its CPU is "
                     "this script's)")
        stand_in = python_sink(ROOT, os.path.join(folder, "stand-in"))
        flags = list(stand_in.hub_flags())
        if not mixed:
            at = flags.index("--fcm-credentials")
            del flags[at:at + 2]
            at = flags.index("--fcm-url")
            del flags[at:at + 2]
        sink_pid, sink_port = os.getpid(), stand_in.port
    say("# %s: %d devices (%s), %d distinct tokens, sink %s, hub %s --loops %d"
        % (name, args.devices, "APNs and FCM alternately" if mixed else "APNs", len({d[2] for d in devices}),
           sink_name + (" --max-concurrent-streams %d" % args.streams if sink_name == "nghttpd" else ""), PUSHHUB,
           args.loops))
    hub = Hub(os.path.join(folder, "data"), flags, args.loops, args.timeout)
    hub.must("PUT", "/v1/screens/" + SCREEN, tree(0))
    pool = DrivePool(LOADGEN, hub.port, args.clients, FIRST_CLIENT, [SCREEN], folder, args.timeout)
    rss_start, cpu_start = hub.rss(), cpu_seconds(hub.pid)
    publisher = Publisher(hub, pool, 1, args)
    recorder = record(hub, "%s.%s-register" % (args.perf, name) if args.perf else None)
    seconds, failures, tenths = register_in_child(hub, devices, args.concurrency)
    publisher.stop()
    stop_recording(recorder, "%s registration" % name)
    t = time.perf_counter()
    count = wait_registered(hub, args.devices - len(failures), args.timeout)
    say("%s: registered %d devices in %.1f s (%.0f sessions/s, %d at once; hub CPU %.0f µs per session), %d failed%s; "
        "GET /v1/devices count %d %.1f s later; hub VmRSS %.1f → %.1f MiB (%.0f B per registration)"
        % (name, args.devices - len(failures), seconds, args.devices / seconds, args.concurrency,
           1e6 * (cpu_seconds(hub.pid) - cpu_start) / args.devices, len(failures),
           (" (first: %s)" % (failures[0],)) if failures else "", count, time.perf_counter() - t, mib(rss_start),
           mib(hub.rss()), 1024 * (hub.rss() - rss_start) / args.devices))
    say("%s: registration by tenths (sessions/s, hub CPU µs per session): %s" % (name, ", ".join(
        "%.0f/%.0f" % ((b[0] - a[0]) / (b[1] - a[1]), 1e6 * (b[2] - a[2]) / max(1, b[0] - a[0]))
        for a, b in zip(tenths, tenths[1:]))))
    publisher.line("%s publishes while registering" % name)
    files = sorted(os.path.join(hub.data, f) for f in os.listdir(hub.data))
    say("%s: data dir: %s" % (name, ", ".join("%s %.1f MB" % (os.path.basename(f), os.path.getsize(f) / 1e6)
                                              for f in files if os.path.isfile(f))))
    timed = {}
    for path in ("/v1/devices?limit=1", "/v1/devices?user=nobody"):
        for _ in range(5):
            _, t0, t1 = hub.must("GET", path)
            timed.setdefault(path, []).append((t1 - t0) / 1e6)
    say("%s: with %d registered, GET /v1/devices?limit=1 %.1f ms (median of 5), ?user=nobody %.1f ms"
        % (name, count, *(sorted(times)[2] for times in timed.values())))
    if failures:
        raise SystemExit("registrations failed")
    dry, _, _ = hub.must("POST", "/v1/syncs", dict(SYNC, dry_run=True))
    say("%s: dry run: %s" % (name, json.dumps(dry)))
    if dry.get("push_devices") != args.devices:
        raise SystemExit("the dry run would push %s devices, not %d" % (dry.get("push_devices"), args.devices))
    say(wait_quiet(args.quiet_pct, args.quiet_wait))
    k, latencies, puts = publisher.k, [], []
    for _ in range(args.rounds):
        lat, put, _, _ = publish_round(hub, pool, k, args.clients, args.timeout)
        latencies += lat
        puts.append(put)
        k += 1
        time.sleep(args.pause)
    latency_line("%s idle" % name, latencies, puts, args.rounds)
    for window in args.windows if sink_name == "nghttpd" else [None]:
        part = name
        if window is not None:
            part = "%s, sink window 2^%d" % (name, window)
            if window != sink.window_bits:  # the hub's link notices and reconnects at the next push
                stop(sink.process)
                started.append(sink.start(window))
                sink_pid = sink.process.pid
                say("# %s: nghttpd restarted with --connection-window-bits %d (run 1 reconnects)" % (name, window))
        for run in range(1, args.runs + 1):
            perf = "%s.%s-w%s" % (args.perf, name, window) if args.perf and run == 1 else None
            k = push_run("%s: push %d" % (part, run), hub, sink_pid, sink_port, args.devices, None, args, k, perf)
        k = push_run("%s: push + deliveries" % part, hub, sink_pid, sink_port, args.devices, pool, args, k)
    for line in hub.problems()[:20]:
        say("# hub: " + line)
    pool.stop()
    hub.stop()
    if sink_name == "nghttpd":
        stop(sink.process)
    else:
        stand_in.close()


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--devices", type=int, default=100_000, help="devices registered and pushed (100,000)")
    parser.add_argument("--concurrency", type=int, default=1000, help="registration sessions at once (1,000; ≤ 2,000)")
    parser.add_argument("--clients", type=int, default=1000, help="connected clients that get the publishes (1,000)")
    parser.add_argument("--rounds", type=int, default=20, help="publishes measured while idle (20)")
    parser.add_argument("--pause", type=float, default=0.05, help="seconds between publishes (0.05)")
    parser.add_argument("--runs", type=int, default=2, help="push runs without publishes, per scenario (2)")
    parser.add_argument("--only", choices=("apns", "mixed"), action="append", help="a scenario (default: both)")
    parser.add_argument("--tokens", type=int, default=0,
                        help="distinct push tokens, devices sharing them in turn (0: one per device)")
    parser.add_argument("--perf", metavar="PREFIX", help="perf record -g the hub over each scenario's first push "
                                                         "run, to PREFIX.<scenario>")
    parser.add_argument("--streams", type=int, default=1000, help="the sink's max concurrent streams (1,000)")
    parser.add_argument("--sink", choices=("nghttpd", "python"), default="nghttpd")
    parser.add_argument("--sink-window-bits", default="16,24", metavar="N[,M…]",
                        help="the push runs with nghttpd's connection window 2**N-1, then 2**M-1… (16,24: 64 KiB "
                             "as RFC 9113's initial window and nghttpd's default, then 16 MiB)")
    parser.add_argument("--loops", type=int, default=1, help="hub event loops (1: the generators need a core)")
    parser.add_argument("--timeout", type=int, default=300, help="bound on every wait, seconds (300)")
    add_quiet_arguments(parser)
    args = parser.parse_args()
    args.windows = [int(bits) for bits in args.sink_window_bits.split(",")]
    if not 1 <= args.concurrency <= 2000:
        raise SystemExit("--concurrency wants 1…2,000 (a process holds at most 20,000 descriptors)")
    if subprocess.run(["make", "-s", "-C", os.path.dirname(LOADGEN), "loadgen"], stdout=sys.stderr).returncode:
        raise SystemExit("could not build bench/loadgen/loadgen")
    if not os.path.exists(PUSHHUB):
        raise SystemExit("no %s: build it with `swift build -c release`" % PUSHHUB)
    say("# bench/push %s, %s" % (" ".join(sys.argv[1:]), time.strftime("%Y-%m-%d %H:%M:%S %Z")))
    with work_folder("pushhub-bench-push-", args.keep) as work:
        for name in args.only or ("apns", "mixed"):
            scenario(name, args, work)


if __name__ == "__main__":
    main()
