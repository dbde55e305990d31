"""Webhooks (issue 31, DESIGN §18), measured on loopback: how many events per second one hub
delivers to a local receiver, the delay from an event to its delivery, and the hub's CPU per
delivery.

    .venv/bin/python bench/webhooks/run.py [--events 10000] [--subjects 1000] [--serial 2000]
                                           [--rates 100,1000] [--seconds 5] [--backlog 10000]
                                           [--only screens|syncs|serial|delay|backlog]…
                                           [--perf PREFIX] [--keep]

One release hub (`--dev`, `--loops 1`, its own data dir: every change and every delivery's
outcome is journaled with an fsync, as in production; `--webhook-queue` raised so nothing is
dropped) with one webhook, `w`, wanting `screen.published` and `sync.created`, to the receiver
(bench/webhooks/receiver.py: one asyncio process, keep-alive HTTP/1.1, 200 at once; its own
ceiling is measured first with h2load, 8 keep-alive connections, one request in flight each, as
the hub opens at most 8 to one origin).

- **ceiling**: the receiver alone, `h2load --h1` with 20,000 POSTs of a 300-byte body.
- **throughput, many subjects**: the receiver holds its answers (reads requests, answers none)
  while `--events` screen publishes go in (`--subjects` screens in turn, 8 admin connections in
  parallel), so they queue: at most 16 are in flight per webhook, the rest wait. Then the
  receiver answers the held ones and everything after at once: deliveries/s = events ÷ (the
  answer → the last event received), with the hub's CPU per delivery (schedstat: all threads,
  and the control plane's, where deliveries are made and their outcomes journaled) over it.
  The same with `--events` syncs (`POST /v1/syncs`, each its own subject `sync:<id>`).
- **throughput, one subject**: `--serial` publishes of one screen. In order per subject, an event
  is sent only once the previous one's outcome is durable (journaled): one at a time.
- **delay**: publishes at a steady rate (each of `--rates` per second, for `--seconds`, screens
  in turn), the receiver answering at once: per event, the receiver's CLOCK_REALTIME minus the
  event's `time` (Unix ms, stamped by the hub when it applies the change, before its fsync), and
  the receiver's CLOCK_MONOTONIC minus the moment the PUT was sent (same machine, same clock):
  p50/p99/max of each. Each rate runs first with the webhook wanting another event type (the
  publishes' own cost: hub CPU per publish, PUT time), then wanting them: the difference is the
  webhook's CPU per event.
- **backlog**: the receiver holds while `--backlog` syncs queue (a receiver that is down), then
  publishes at the first rate for `--seconds`: PUT p50/p99 and hub CPU per publish with a full
  queue, to set beside the delay part's. Then the receiver answers and the queue drains.
- Each throughput part also says how fast its events were made, in its first and last tenth.
- After each part: `pushhub_webhook_delivery_seconds` from /metrics (its buckets' growth over the
  part) and the webhook's counters (`GET /v1/webhooks/w`: delivered, retried, dropped).

If the publishes of a throughput part take longer than the hub's 10 s attempt timeout, the held
events are retried later (backoff): they are left out of the rate, and that is said. `--perf
PREFIX` records the hub (`perf record -g`) over each throughput part (making the events, then
delivering them) and the backlog's publishes. Every wait is bounded (`--timeout`); processes are
stopped on exit, the work folder removed (unless `--keep`).
"""
import argparse
import http.client
import json
import os
import re
import shutil
import subprocess
import sys
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.abspath(os.path.join(HERE, "..", ".."))
sys.path.insert(0, os.path.join(ROOT, "bench", "lib"))
from benchlib import (  # noqa: E402 (bench/lib is found through ROOT)
    AdminConnection, BenchHub, HubCPU, Others, add_quiet_arguments, cpu_seconds, percentile, record, say, started,
    stop, stop_recording, wait_quiet, work_folder)

PUSHHUB = os.environ.get("PUSHHUB", os.path.join(ROOT, ".build", "release", "pushhub"))
SECRET = "whsec_bench_secret_0123456789abcdef"
PARALLEL = 8  # admin connections publishing at once while events queue


def tree(k):
    return {"type": "screen", "title": "Webhook bench", "children": [{"id": "v", "type": "text", "text": "v%d" % k}]}


class Hub(BenchHub):
    def __init__(self, data, timeout):
        os.makedirs(data)
        super().__init__(
            PUSHHUB, ["--dev", "--listen", "127.0.0.1:0", "--admin", "127.0.0.1:0", "--data", data, "--loops", "1",
                      "--webhook-queue", "1000000", "--log-level", "warning"],
            data + ".log", os.path.join(data, "admin.token"), timeout)

    def again(self, request, *arguments):
        """`request`, once more on a new connection if the hub closed the idle one meanwhile."""
        try:
            return request(*arguments)
        except (http.client.RemoteDisconnected, ConnectionError):
            self.connection.close()  # http.client connects again on the next request
            return request(*arguments)

    def must(self, method, path, body=None):
        status, answer, t0, t1 = self.again(self.call, method, path, body)
        if status // 100 != 2:
            raise SystemExit("%s %s: %d %s" % (method, path, status, answer))
        return answer, t0, t1

    def problems(self):
        return [line.strip()[:400] for line in open(self.log)
                if '"level":"error"' in line or '"level":"warning"' in line]

    def histogram(self):
        """`pushhub_webhook_delivery_seconds`: ({le: cumulative count}, count, sum)."""
        status, text = self.again(self.text, "/metrics")
        buckets = {m.group(1): int(float(m.group(2))) for m in re.finditer(
            r'^pushhub_webhook_delivery_seconds_bucket\{le="([^"]+)"\} (\S+)$', text, re.M)}
        count = float(re.search(r"^pushhub_webhook_delivery_seconds_count (\S+)$", text, re.M).group(1))
        total = float(re.search(r"^pushhub_webhook_delivery_seconds_sum (\S+)$", text, re.M).group(1))
        return buckets, count, total


class Receiver:
    """bench/webhooks/receiver.py in a process of its own, driven through its stdin."""

    def __init__(self, folder):
        self.process = subprocess.Popen(
            [sys.executable, os.path.join(HERE, "receiver.py"), "0"], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
            stderr=open(os.path.join(folder, "receiver.log"), "w"), text=True, bufsize=1)
        started.append(self.process)
        self.port = int(self.process.stdout.readline().split()[1])
        self.url = "http://127.0.0.1:%d/hook" % self.port

    def command(self, text):
        self.process.stdin.write(text + "\n")
        return self.process.stdout.readline().split()

    def count(self):
        return int(self.command("count")[1])

    def wait(self, predicate, timeout, what):
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if predicate(self.count()):
                return
            time.sleep(0.02)
        raise SystemExit("the receiver did not see %s within %d s (it has %d)" % (what, timeout, self.count()))

    def dump(self):
        """[(realtime ns, monotonic ns, event)] since the last reset."""
        self.process.stdin.write("dump\n")
        received = []
        for line in self.process.stdout:
            if line.startswith("end"):
                return received
            _, wall, mono, body = line.rstrip("\n").split(" ", 3)
            received.append((int(wall), int(mono), json.loads(body)))
        raise SystemExit("the receiver exited during a dump")

    def stop(self):
        if self.process.poll() is None:
            self.process.stdin.write("quit\n")
            self.process.stdin.flush()
        stop(self.process)


def ceiling(receiver, folder):
    """The receiver's own requests/s under h2load (None if there is no h2load)."""
    if not shutil.which("h2load"):
        say("ceiling: no h2load (Debian's nghttp2-client); the receiver's ceiling is not measured")
        return None
    body = os.path.join(folder, "body.json")
    with open(body, "w") as file:
        file.write(json.dumps({"id": "ev-0000000000000", "type": "screen.published", "time": 0,
                               "subject": "screen:x", "data": {"hash": "0" * 64, "screen": "x" * 100}}))
    done = subprocess.run(["h2load", "--h1", "-n", "20000", "-c", "8", "-m", "1", "-d", body, receiver.url],
                          capture_output=True, text=True)
    rate = re.search(r"finished in \S+, ([\d.]+) req/s", done.stdout)
    ok = re.search(r"status codes: (\d+) 2xx", done.stdout)
    if not rate or not ok or int(ok.group(1)) != 20000:
        say("ceiling: h2load failed: %s" % (done.stdout + done.stderr)[-400:])
        return None
    receiver.command("reset")
    say("ceiling: the receiver alone answers %.0f POSTs/s (h2load --h1, 8 keep-alive connections, "
        "one request in flight each)" % float(rate.group(1)))
    return float(rate.group(1))


def counters(hub):
    answer = hub.must("GET", "/v1/webhooks/w")[0]
    return {key: answer[key] for key in ("queued", "delivered", "retried", "dropped", "failed")}


def histogram_line(hub, before):
    """The growth of `pushhub_webhook_delivery_seconds` since `before`, as one line."""
    after = hub.histogram()
    count = after[1] - before[1]
    if count <= 0:
        return "pushhub_webhook_delivery_seconds: no delivery"
    parts, last = [], 0
    for le, cumulative in after[0].items():
        grown = cumulative - before[0].get(le, 0)
        if grown > last:
            parts.append("≤%s s: %d" % (le, grown))
            last = grown
        if grown >= count:
            break
    return "pushhub_webhook_delivery_seconds: %d deliveries, mean %.3f s; cumulative %s" % (
        count, (after[2] - before[2]) / count, ", ".join(parts))


def make_events(hub, kind, n, subjects, k0, timeout):
    """`n` events made through PARALLEL admin connections: screen publishes (screen i % subjects)
    or syncs. Returns the seconds it took and the rates (per second) of its first and last tenth."""
    errors, done = [], []  # done: perf_counter of each answer

    def worker(w):
        admin = AdminConnection(hub, timeout)
        try:
            for i in range(w, n, PARALLEL):
                if kind == "syncs":
                    admin.must("POST", "/v1/syncs", {"target": {"all": True}, "reason": "bench %d" % (k0 + i)})
                else:
                    admin.must("PUT", "/v1/screens/wh%d" % (i % subjects), tree(k0 + i))
                done.append(time.perf_counter())
        except BaseException as error:  # said on the main thread
            errors.append(error)
        finally:
            admin.close()

    t = time.perf_counter()
    threads = [threading.Thread(target=worker, args=(w,)) for w in range(PARALLEL)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    if errors:
        raise SystemExit("making events: %r" % (errors[0],))
    done.sort()
    tenth = max(1, n // 10)
    first, last = tenth / (done[tenth - 1] - t), tenth / (done[-1] - done[-tenth - 1])
    return time.perf_counter() - t, first, last


def throughput(label, hub, receiver, kind, n, subjects, args, k0, perf):
    """Events queued while the receiver holds its answers, then delivered: one line of figures."""
    before, hist0 = counters(hub), hub.histogram()
    receiver.command("reset")
    receiver.command("hold")
    recorder = record(hub, perf and perf + "-make")
    made_s, first_tenth, last_tenth = make_events(hub, kind, n, subjects, k0, args.timeout)
    stop_recording(recorder)
    recorder = record(hub, perf)
    # Every event is in the journal (each PUT answered after its fsync); what the receiver holds
    # now went out before the go.
    others, cpu = Others(hub.pid, receiver.process.pid), HubCPU(hub.pid)
    cpu_receiver = cpu_seconds(receiver.process.pid)
    go = time.monotonic_ns()
    held = int(receiver.command("go")[1])
    receiver.wait(lambda count: count >= n, args.timeout, "%d events" % n)
    used, busy = cpu.used(), others.pct()
    expected, deadline = before["delivered"] + n, time.monotonic() + args.timeout
    while counters(hub)["delivered"] < expected:  # the last outcomes journaled
        if time.monotonic() > deadline:
            raise SystemExit("%s: %s after %d s" % (label, counters(hub), args.timeout))
        time.sleep(0.05)
    receiver_s = cpu_seconds(receiver.process.pid) - cpu_receiver
    stop_recording(recorder)
    received = receiver.dump()
    seen = {}
    for wall, mono, event in received:
        seen.setdefault(event["id"], []).append(mono)
    early = {event["id"] for wall, mono, event in received if mono < go}  # sent before the go
    again = sum(1 for stamps in seen.values() if len(stamps) > 1)
    counted = [min(stamps) for event_id, stamps in seen.items() if event_id not in early or again == 0]
    last = max(counted)
    seconds = (last - go) / 1e9
    rate = len(counted) / seconds
    after = counters(hub)
    say("%s: %d events made in %.2f s (%.0f/s: %.0f/s in the first tenth, %.0f/s in the last; %d held by the "
        "receiver), then %d delivered in %.3f s after the "
        "receiver answered: %.0f deliveries/s; hub CPU %.1f µs per delivery (control plane %.1f µs, loops %.1f µs); "
        "receiver %.0f %% of a core; others %.0f %%" % (
            label, n, made_s, n / made_s, first_tenth, last_tenth, held, len(counted), seconds, rate, used["all"] / 1e3 / n,
            used["control"] / 1e3 / n, used["loops"] / 1e3 / n, 100 * receiver_s / seconds, busy))
    if again:
        say("  %d events were sent more than once (held past the 10 s attempt timeout, then retried): the rate "
            "leaves out the %d sent before the go" % (again, len(early)))
    say("  webhook counters: +%d delivered, +%d retried, +%d dropped, %d queued; %s" % (
        after["delivered"] - before["delivered"], after["retried"] - before["retried"],
        after["dropped"] - before["dropped"], after["queued"], histogram_line(hub, hist0)))
    if len(seen) != n:
        raise SystemExit("%s: the receiver saw %d distinct events, %d were made" % (label, len(seen), n))
    return {"rate": rate, "cpu_us": used["all"] / 1e3 / n, "control_us": used["control"] / 1e3 / n}


def publish_at(hub, rate, seconds, subjects, k0, timeout, others_pids):
    """Publishes at `rate` per second for `seconds` (screens in turn) on an admin connection of its
    own: {n, achieved (per second), sent {(screen, version): PUT sent ns}, put_ms, cpu (HubCPU
    used), others (%)}."""
    admin = AdminConnection(hub, timeout)
    n = int(rate * seconds)
    sent, put_ms = {}, []
    others, cpu = Others(hub.pid, *others_pids), HubCPU(hub.pid)
    start = time.monotonic()
    for i in range(n):
        pause = start + i / rate - time.monotonic()
        if pause > 0:
            time.sleep(pause)
        screen = "wh%d" % (i % subjects)
        answer, t0, t1 = admin.must("PUT", "/v1/screens/" + screen, tree(k0 + i))
        sent[(screen, answer["version"])] = t0
        put_ms.append((t1 - t0) / 1e6)
    achieved = n / (time.monotonic() - start)
    admin.close()
    return {"n": n, "achieved": achieved, "sent": sent, "put_ms": put_ms, "cpu": cpu, "others": others}


def put_webhook(hub, receiver, events):
    hub.must("PUT", "/v1/webhooks/w", {"url": receiver.url, "events": events, "secret": SECRET})


def steady(hub, receiver, rate, seconds, subjects, args, k0):
    """Publishes at `rate` per second for `seconds`, first with the webhook wanting another event
    type (the publishes' own cost), then wanting them, the receiver answering at once."""
    put_webhook(hub, receiver, ["experiment.changed"])
    alone = publish_at(hub, rate, seconds, subjects, k0, args.timeout, [receiver.process.pid])
    alone_cpu = alone["cpu"].used()
    put_webhook(hub, receiver, ["screen.published", "sync.created"])
    before, hist0 = counters(hub), hub.histogram()
    receiver.command("reset")
    run = publish_at(hub, rate, seconds, subjects, k0 + alone["n"], args.timeout, [receiver.process.pid])
    n = run["n"]
    receiver.wait(lambda count: count >= n, args.timeout, "%d events" % n)
    used, busy = run["cpu"].used(), run["others"].pct()
    delays, since_put = [], []
    for wall, mono, event in receiver.dump():
        screen = event["subject"].split(":", 1)[1]
        delays.append(wall / 1e6 - event["time"])
        since_put.append((mono - run["sent"][(screen, event["data"]["version"])]) / 1e6)
    after = counters(hub)
    say("delay at %d/s (%.0f/s achieved, %d publishes): event time → received p50 %.1f ms, p99 %.1f ms, max %.1f ms; "
        "PUT sent → received p50 %.2f ms, p99 %.2f ms, max %.2f ms; others %.0f %%" % (
            rate, run["achieved"], n, percentile(delays, 0.5), percentile(delays, 0.99), max(delays),
            percentile(since_put, 0.5), percentile(since_put, 0.99), max(since_put), busy))
    say("  hub CPU per publish: %.0f µs with its event and delivery, %.0f µs without (webhook wanting another type): "
        "%.0f µs for the webhook; PUT answered p50 %.2f / p99 %.2f ms (without: %.2f / %.2f ms)" % (
            used["all"] / 1e3 / n, alone_cpu["all"] / 1e3 / alone["n"],
            used["all"] / 1e3 / n - alone_cpu["all"] / 1e3 / alone["n"], percentile(run["put_ms"], 0.5),
            percentile(run["put_ms"], 0.99), percentile(alone["put_ms"], 0.5), percentile(alone["put_ms"], 0.99)))
    say("  webhook counters: +%d delivered, +%d retried; %s" % (
        after["delivered"] - before["delivered"], after["retried"] - before["retried"], histogram_line(hub, hist0)))
    return run["n"] + alone["n"]


def backlog(hub, receiver, rate, seconds, subjects, args, k0):
    """Publishes at `rate` while `--backlog` events wait (the receiver holds its answers, as a
    receiver that is down): what a full queue costs the publishes. Then the queue drains."""
    receiver.command("reset")
    receiver.command("hold")
    made_s = make_events(hub, "syncs", args.backlog, args.backlog, k0, args.timeout)[0]
    recorder = record(hub, args.perf and args.perf + ".backlog")
    run = publish_at(hub, rate, seconds, subjects, k0, args.timeout, [receiver.process.pid])
    used, busy, n = run["cpu"].used(), run["others"].pct(), run["n"]
    stop_recording(recorder)
    queued = counters(hub)["queued"]
    receiver.command("go")
    receiver.wait(lambda count: count >= args.backlog + n, args.timeout, "the backlog drained")
    say("backlog: %d syncs queued (made in %.1f s), then %d publishes at %d/s (%.0f/s achieved) with %d events "
        "queued: PUT answered p50 %.2f ms, p99 %.2f ms, max %.2f ms; hub CPU %.0f µs per publish (control plane "
        "%.0f µs); others %.0f %%" % (
            args.backlog, made_s, n, rate, run["achieved"], queued, percentile(run["put_ms"], 0.5),
            percentile(run["put_ms"], 0.99), max(run["put_ms"]), used["all"] / 1e3 / n, used["control"] / 1e3 / n,
            busy))
    return n + args.backlog


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--events", type=int, default=10_000, help="events per many-subject throughput part")
    parser.add_argument("--subjects", type=int, default=1_000, help="screens the publishes go to in turn")
    parser.add_argument("--serial", type=int, default=2_000, help="events of the one-subject throughput part")
    parser.add_argument("--rates", default="100,1000", help="steady publish rates of the delay part, per second")
    parser.add_argument("--seconds", type=float, default=5, help="length of each steady rate")
    parser.add_argument("--backlog", type=int, default=10_000, help="events queued in the backlog part")
    parser.add_argument("--only", choices=("screens", "syncs", "serial", "delay", "backlog"), action="append",
                        help="run only these parts (repeatable)")
    parser.add_argument("--perf", metavar="PREFIX", help="perf record -g the hub over each throughput and backlog part")
    parser.add_argument("--timeout", type=int, default=120, help="bound of every wait, seconds")
    add_quiet_arguments(parser)
    parser.set_defaults(quiet_wait=int(os.environ.get("QUIET_WAIT", 20)))
    args = parser.parse_args()
    parts = args.only or ["screens", "syncs", "serial", "delay", "backlog"]
    if not os.path.exists(PUSHHUB):
        raise SystemExit("no %s: build it first (swift build -c release)" % PUSHHUB)

    with work_folder("pushhub-webhooks-", args.keep) as folder:
        say(wait_quiet(args.quiet_pct, args.quiet_wait))
        receiver = Receiver(folder)
        ceiling(receiver, folder)
        hub = Hub(os.path.join(folder, "data"), args.timeout)
        put_webhook(hub, receiver, ["screen.published", "sync.created"])
        say("# hub %s, pid %d, 1 loop, data dir journal (fsync), webhook w → %s" % (PUSHHUB, hub.pid, receiver.url))
        k = 0
        if "screens" in parts:
            throughput("throughput, %d publishes to %d screens" % (args.events, args.subjects), hub, receiver,
                       "screens", args.events, args.subjects, args, k, args.perf and args.perf + ".screens")
            k += args.events
        if "syncs" in parts:
            throughput("throughput, %d syncs (one subject each)" % args.events, hub, receiver, "syncs", args.events,
                       args.events, args, k, args.perf and args.perf + ".syncs")
            k += args.events
        if "serial" in parts:
            throughput("throughput, one subject: %d publishes of one screen" % args.serial, hub, receiver,
                       "screens", args.serial, 1, args, k, args.perf and args.perf + ".serial")
            k += args.serial
        if "delay" in parts:
            for rate in (float(r) for r in args.rates.split(",")):
                k += steady(hub, receiver, rate, args.seconds, args.subjects, args, k)
        if "backlog" in parts:
            k += backlog(hub, receiver, float(args.rates.split(",")[0]), args.seconds, args.subjects, args, k)
        problems = hub.problems()
        say("hub warnings and errors: %s" % ("none" if not problems else "%d, first: %s" % (len(problems),
                                                                                             problems[0])))
        hub.stop()
        receiver.stop()


if __name__ == "__main__":
    main()
