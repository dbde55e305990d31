"""Experiment results with many units (issue 26, "Measured"): what the hub holds in memory for an
experiment with N units (default 1,000,000), how long `GET /v1/experiments/{key}/results` takes,
and how long the hub needs at start to rebuild the tally from the results log.

    .venv/bin/python bench/results/run.py [--n 1000000] [--only data-dir|redis] [--gets 20]

What it does, for each place results are kept:

- **data-dir**: a release hub (`--dev`, its own data dir) gets a screen and a running 50/50
  experiment touching it through the admin API and is stopped (SIGTERM). It is started again
  (the baseline: same state, no results log) and stopped; then `exposures.jsonl` is written with
  N units: a `served` line each, a `confirmed` line for 9 units in 10, a `track` purchase line
  with a value for 1 in 3. The hub is started once more and reads the log back at start,
  synchronously, before it logs "listening".
- **redis**: its own redis-server (`--save "" --appendonly no`) on a free port; the same set-up
  through a hub with `--redis`; the baseline start; then the same lines appended to the stream
  `pushhub:results` as entries of `--entry-lines` lines (1,000), each `hub=<id> events=<JSONL>`
  as a hub writes them, one per control-plane tick. A hub reads the stream after it starts
  listening; `GET …/results` waits until it has caught up.

Lines are written with their members in the order the hub writes them (sorted: the JSON reader
sorts an object's members, so another order costs the rebuild ~10 % more). Each unit's variant is
the one the documented assignment gives (docs/assignment.md: the bucket
of SHA-256("{salt}/{key}/{unit}/variant"), traffic 1.0), so the results answer can be checked
against the counts the script wrote (served, confirmed and purchase units per variant).

Figures, one line each: the log's size; the time from the process's start to "listening", with
and without the log (the rebuild is the difference); for Redis the time from the start until
`GET …/results` shows N units served; the hub's VmRSS (and VmHWM, its peak) a second after it is
ready, with and without the results, and the difference per unit; the median and max of `--gets`
GETs of the results on one keep-alive connection; the hub's CPU time until ready.

Everything is bounded in time (`--timeout`, 600 s per wait); the hubs and redis-server it
started are stopped on exit.
"""
import argparse
import hashlib
import http.client
import os
import socket
import statistics
import subprocess
import sys
import threading
import time

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
sys.path.insert(0, os.path.join(ROOT, "bench", "lib"))
from benchlib import (  # noqa: E402 (bench/lib is found through ROOT)
    BenchHub, Others, add_quiet_arguments, cpu_seconds, free_port, proc_status, say, started, stop, wait_quiet,
    work_folder)
PUSHHUB = os.environ.get("PUSHHUB", os.path.join(ROOT, ".build", "release", "pushhub"))
KEY, SALT, SCREEN = "bench-results", "s1", "bench/results"
VARIANTS = ("a", "b")
DEFINITION = {"key": KEY, "salt": SALT, "status": "running",
              "variants": [{"key": "a", "weight": 1}, {"key": "b", "weight": 1}],
              "screens": {SCREEN: {"b": {"title": "B"}}}}
TREE = {"type": "screen", "title": "A", "children": [{"id": "cta", "type": "button", "text": "Buy"}]}


class Hub(BenchHub):
    """A release pushhub with its data dir (`--dev`, one loop); `ready_s` is the time from just
    before its start to its "listening"."""

    def __init__(self, data, *flags, timeout):
        self.data = data
        super().__init__(
            PUSHHUB, ["--dev", "--listen", "127.0.0.1:0", "--admin", "127.0.0.1:0", "--data", data, "--loops", "1",
                      "--log-level", "info", *flags],
            data + ".log-%d" % time.monotonic_ns(), os.path.join(data, "admin.token"), timeout)

    def results(self):
        status, body, _, _ = self.call("GET", "/v1/experiments/%s/results" % KEY)
        if status != 200:
            raise SystemExit("GET results: %d %s" % (status, body))
        return body

    def rss(self):
        return proc_status(self.process.pid, "VmRSS"), proc_status(self.process.pid, "VmHWM")

    def cpu(self):
        return cpu_seconds(self.process.pid)

    def errors(self):
        return [line.strip() for line in open(self.log) if '"level":"error"' in line or '"level":"warning"' in line]


def set_up(hub):
    status, body, _, _ = hub.call("PUT", "/v1/screens/" + SCREEN, TREE)
    if status // 100 != 2:
        raise SystemExit("PUT screen: %d %s" % (status, body))
    status, body, _, _ = hub.call("PUT", "/v1/experiments/" + KEY, DEFINITION)
    if status // 100 != 2:
        raise SystemExit("PUT experiment: %d %s" % (status, body))


def bucket(text):
    return int.from_bytes(hashlib.sha256(text.encode()).digest()[:8], "big") % 10000


def result_lines(n, start_ms):
    """Yields blocks of log lines (one str each) for units d-0…d-(n−1), 1,000 units a block: their
    served lines, then their confirmed lines, then their purchases; and fills `expected`."""
    expected = {v: {"served": 0, "confirmed": 0, "units": 0, "value": 0.0} for v in VARIANTS}
    blocks = []
    ts = start_ms
    for first in range(0, n, 1000):
        served, confirmed, tracked = [], [], []
        for i in range(first, min(first + 1000, n)):
            unit = "d-%d" % i
            # docs/assignment.md: 50/50 at traffic 1.0: variant a owns buckets [0, 5000)
            variant = "a" if bucket("%s/%s/%s/variant" % (SALT, KEY, unit)) < 5000 else "b"
            # members in the order the hub writes them (sorted, as JSONWriter does)
            exposure = '"experiment":"%s","salt":"%s","screen":"%s","ts":%%d,"unit":"%s","variant":"%s","version":1}\n' % (
                KEY, SALT, SCREEN, unit, variant)
            served.append('{"event":"served",' + exposure % ts)
            expected[variant]["served"] += 1
            if i % 10 != 9:
                confirmed.append('{"event":"confirmed",' + exposure % (ts + 50))
                expected[variant]["confirmed"] += 1
            if i % 3 == 0:
                value = 5 + (i * 7919) % 100 / 4  # 5 … 29.75
                tracked.append('{"event":"track","goal":"purchase","ts":%d,"unit":"%s","value":%s}\n'
                               % (ts + 900, unit, ("%d" % value) if value == int(value) else repr(value)))
                expected[variant]["units"] += 1
                expected[variant]["value"] += value
            ts += 1
        blocks.append("".join(served) + "".join(confirmed) + "".join(tracked))
    return blocks, expected


def check(report, expected, n):
    """Whether the results answer counts what was written; returns a short verdict."""
    got = {v["variant"]: v for v in report["variants"]}
    problems = []
    for variant in VARIANTS:
        row = got.get(variant, {})
        for field in ("served", "confirmed"):
            if row.get(field) != expected[variant][field]:
                problems.append("%s %s %s != %s" % (variant, field, row.get(field), expected[variant][field]))
    purchase = [g for g in report.get("goals", []) if g["event"] == "purchase"]
    if not purchase:
        problems.append("no purchase goal")
    else:
        rows = {r["variant"]: r for r in purchase[0]["variants"]}
        for variant in VARIANTS:
            want_units = expected[variant]["units"]
            want_mean = expected[variant]["value"] / max(1, expected[variant]["served"])
            row = rows.get(variant, {})
            if row.get("units") != want_units:
                problems.append("%s purchase units %s != %s" % (variant, row.get("units"), want_units))
            elif abs(row.get("value_mean", 0) - want_mean) > 1e-9 * max(1, want_mean):
                problems.append("%s value_mean %s != %s" % (variant, row.get("value_mean"), want_mean))
    served = sum(v["served"] for v in report["variants"])
    if served != n:
        problems.append("served %d != %d" % (served, n))
    return "matches what was written" if not problems else "MISMATCH: " + "; ".join(problems)


def time_gets(hub, count):
    times = []
    for _ in range(count):
        t0 = time.perf_counter()
        hub.results()
        times.append(time.perf_counter() - t0)
    return statistics.median(times), max(times)


def report_memory(label, base, loaded, n):
    (rss0, _), (rss1, hwm1) = base, loaded
    say("%s: hub VmRSS %.1f MiB without results, %.1f MiB with %d units (peak VmHWM %.1f MiB): +%.1f MiB = %.1f B per unit"
        % (label, rss0 / 1024, rss1 / 1024, n, hwm1 / 1024, (rss1 - rss0) / 1024, (rss1 - rss0) * 1024 / n))


def run_data_dir(args, work, blocks, expected):
    label = "data-dir"
    data = os.path.join(work, "dd", "data")
    os.makedirs(os.path.dirname(data))
    hub = Hub(data, timeout=args.timeout)
    set_up(hub)
    hub.stop()
    # the baseline: the same data dir (journal, screen, experiment), no results log
    log = os.path.join(data, "exposures.jsonl")
    if os.path.exists(log):
        os.remove(log)
    hub = Hub(data, timeout=args.timeout)
    base_ready = hub.ready_s
    time.sleep(args.settle)
    base_mem = hub.rss()
    empty = hub.results()
    hub.stop()
    if sum(v["served"] for v in empty["variants"]):
        raise SystemExit("the baseline hub already counts units: %s" % empty)
    with open(log, "w") as out:
        for block in blocks:
            out.write(block)
    size = os.path.getsize(log)
    lines = sum(block.count("\n") for block in blocks)
    say("%s: results log %s: %d lines, %.1f MB (%.0f B per unit)" % (label, log.rsplit("/", 1)[1], lines, size / 1e6,
                                                                     size / args.n))
    for attempt in range(args.starts):
        subprocess.run(["sync"], check=False)
        say(wait_quiet(args.quiet_pct, args.quiet_wait))
        others = Others()
        hub = Hub(data, timeout=args.timeout)
        ready, cpu = hub.ready_s, hub.cpu()
        others.pids.append(hub.process.pid)
        others_pct = others.pct()
        t0 = time.perf_counter()
        report = hub.results()
        first_get = time.perf_counter() - t0
        time.sleep(args.settle)
        mem = hub.rss()
        median, worst = time_gets(hub, args.gets)
        warnings = hub.errors()
        hub.stop()
        say("%s: start -> listening %.3f s with %d units (hub CPU %.2f s), %.3f s without: rebuild %.2f s; %s; "
            "others %.0f%% CPU" % (label, ready, args.n, cpu, base_ready, ready - base_ready, check(report, expected, args.n),
                                   others_pct))
        report_memory(label, base_mem, mem, args.n)
        say("%s: GET /v1/experiments/%s/results: first %.2f ms, then %d on one keep-alive connection: median %.2f ms, max %.2f ms"
            % (label, KEY, first_get * 1e3, args.gets, median * 1e3, worst * 1e3))
        if warnings:
            say("# NOTE: the hub logged: %s" % " | ".join(w[:200] for w in warnings[:3]))


class Redis:
    """A redis-server of our own, and one RESP connection to it."""

    def __init__(self, folder):
        self.port = free_port()
        self.process = subprocess.Popen(
            ["redis-server", "--port", str(self.port), "--bind", "127.0.0.1", "--dir", folder, "--save", "",
             "--appendonly", "no", "--logfile", os.path.join(folder, "redis.log")], stdout=subprocess.DEVNULL)
        started.append(self.process)
        deadline = time.time() + 10
        while True:
            try:
                self.socket = socket.create_connection(("127.0.0.1", self.port), timeout=60)
                break
            except OSError:
                if time.time() > deadline or self.process.poll() is not None:
                    raise SystemExit("redis-server did not start")
                time.sleep(0.02)
        self.reader = self.socket.makefile("rb")
        if self.command("PING") != "PONG":
            raise SystemExit("redis-server does not answer PING")

    @staticmethod
    def encode(*parts):
        out = [b"*%d\r\n" % len(parts)]
        for part in parts:
            data = part if isinstance(part, bytes) else str(part).encode()
            out.append(b"$%d\r\n%s\r\n" % (len(data), data))
        return b"".join(out)

    def reply(self):
        line = self.reader.readline()
        kind, rest = line[:1], line[1:-2]
        if kind in (b"+", b"-"):
            if kind == b"-":
                raise SystemExit("redis: " + rest.decode())
            return rest.decode()
        if kind == b":":
            return int(rest)
        if kind == b"$":
            size = int(rest)
            return None if size < 0 else self.reader.read(size + 2)[:-2]
        if kind == b"*":
            return [self.reply() for _ in range(int(rest))]
        raise SystemExit("redis: unexpected reply %r" % line)

    def command(self, *parts):
        self.socket.sendall(self.encode(*parts))
        return self.reply()

    def pipeline(self, commands):
        self.socket.sendall(b"".join(self.encode(*c) for c in commands))
        return [self.reply() for _ in commands]

    def used_memory(self):
        info = self.command("INFO", "memory").decode()
        return int(info.split("used_memory:", 1)[1].split()[0])

    def stop(self):
        self.socket.close()
        stop(self.process)


class Probe(threading.Thread):
    """GETs the experiment's definition every 10 ms on its own keep-alive connection until
    `finish()`; `times` holds each request's seconds."""

    def __init__(self, hub):
        super().__init__(daemon=True)
        self.connection = http.client.HTTPConnection("127.0.0.1", hub.admin_port, timeout=60)
        self.headers = {"Authorization": "Bearer " + hub.token}
        self.times = []
        self.done = threading.Event()

    def run(self):
        while not self.done.is_set():
            t0 = time.perf_counter()
            self.connection.request("GET", "/v1/experiments/" + KEY, headers=self.headers)
            self.connection.getresponse().read()
            self.times.append(time.perf_counter() - t0)
            self.done.wait(0.01)

    def finish(self):
        self.done.set()
        self.join(timeout=70)
        self.connection.close()


def run_redis(args, work, blocks, expected):
    label = "redis"
    folder = os.path.join(work, "redis")
    os.makedirs(folder)
    redis = Redis(folder)
    url = "redis://127.0.0.1:%d" % redis.port
    data = os.path.join(work, "rd", "data")
    os.makedirs(os.path.dirname(data))
    hub = Hub(data, "--redis", url, timeout=args.timeout)
    set_up(hub)
    hub.stop()
    redis.command("DEL", "pushhub:results")
    hub = Hub(data, "--redis", url, timeout=args.timeout)
    base_ready = hub.ready_s
    hub.results()  # caught up with an empty stream
    base_caught_up = time.perf_counter() - hub.t0
    time.sleep(args.settle)
    base_mem = hub.rss()
    hub.stop()
    # entries as hubs append them: one per control-plane tick
    text = "".join(blocks)
    lines = text.splitlines(keepends=True)
    del text
    entries = 0
    memory0 = redis.used_memory()
    batch = []
    for first in range(0, len(lines), args.entry_lines):
        batch.append(("XADD", "pushhub:results", "*", "hub", "bench-hub",
                      "events", "".join(lines[first:first + args.entry_lines]).encode()))
        if len(batch) == 50:
            redis.pipeline(batch)
            entries += len(batch)
            batch = []
    if batch:
        redis.pipeline(batch)
        entries += len(batch)
    say("%s: stream pushhub:results: %d entries of %d lines (%d lines), Redis used_memory +%.1f MB"
        % (label, entries, args.entry_lines, len(lines), (redis.used_memory() - memory0) / 1e6))
    del lines
    for attempt in range(args.starts):
        say(wait_quiet(args.quiet_pct, args.quiet_wait))
        others = Others(redis.process.pid)
        hub = Hub(data, "--redis", url, timeout=args.timeout)
        ready = hub.ready_s
        others.pids.append(hub.process.pid)
        # while it reads the stream, the hub serves: another admin request every 10 ms (on a
        # connection of its own) shows how long the control plane is busy at a time
        probe = Probe(hub)
        probe.start()
        # the first GET waits until the hub has read the whole stream
        deadline = time.perf_counter() + args.timeout
        while True:
            report = hub.results()
            if sum(v["served"] for v in report["variants"]) >= args.n or time.perf_counter() > deadline:
                break
            time.sleep(0.01)
        caught_up = time.perf_counter() - hub.t0
        others_pct = others.pct()
        probe.finish()
        cpu = hub.cpu()
        time.sleep(args.settle)
        mem = hub.rss()
        median, worst = time_gets(hub, args.gets)
        warnings = hub.errors()
        hub.stop()
        say("%s: start -> listening %.3f s; start -> GET results shows %d units %.2f s (hub CPU %.2f s); without results: "
            "listening %.3f s, caught up %.3f s: rebuild %.2f s; %s; others %.0f%% CPU"
            % (label, ready, args.n, caught_up, cpu, base_ready, base_caught_up, caught_up - base_caught_up,
               check(report, expected, args.n), others_pct))
        report_memory(label, base_mem, mem, args.n)
        say("%s: during the rebuild, GET /v1/experiments/%s (the definition) every 10 ms: %d answered, median %.2f ms, "
            "max %.0f ms" % (label, KEY, len(probe.times), statistics.median(probe.times) * 1e3 if probe.times else 0,
                            max(probe.times, default=0) * 1e3))
        say("%s: GET /v1/experiments/%s/results (each reads the stream up to date: one XRANGE): %d on one keep-alive "
            "connection: median %.2f ms, max %.2f ms" % (label, KEY, args.gets, median * 1e3, worst * 1e3))
        if warnings:
            say("# NOTE: the hub logged: %s" % " | ".join(w[:200] for w in warnings[:3]))
    redis.stop()


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--n", type=int, default=1_000_000, help="units (default 1,000,000)")
    parser.add_argument("--only", choices=("data-dir", "redis"), help="one of the two (default both)")
    parser.add_argument("--gets", type=int, default=20, help="GETs of the results timed (20)")
    parser.add_argument("--entry-lines", type=int, default=1000, help="lines per stream entry (1,000)")
    parser.add_argument("--starts", type=int, default=1, help="starts with the results measured (1)")
    parser.add_argument("--settle", type=float, default=1.0, help="seconds between ready and reading VmRSS (1)")
    parser.add_argument("--timeout", type=int, default=600, help="bound on every wait, seconds (600)")
    add_quiet_arguments(parser)
    args = parser.parse_args()
    if not os.access(PUSHHUB, os.X_OK):
        raise SystemExit("no pushhub binary at %s (swift build -c release, or PUSHHUB=...)" % PUSHHUB)
    with work_folder("bench-results-", args.keep) as work:
        t0 = time.perf_counter()
        blocks, expected = result_lines(args.n, int(time.time() * 1000) - 3_600_000)
        say("# %d units: %s (written in %.1f s; variants by docs/assignment.md)"
            % (args.n, ", ".join("%s served %d, confirmed %d, purchased %d" % (v, e["served"], e["confirmed"], e["units"])
                                 for v, e in expected.items()), time.perf_counter() - t0))
        if args.only in (None, "data-dir"):
            run_data_dir(args, work, blocks, expected)
        if args.only in (None, "redis"):
            run_redis(args, work, blocks, expected)

if __name__ == "__main__":
    main()
