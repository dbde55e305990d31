"""Releases (issue 27, DESIGN §15), measured on loopback: how fast the guard sends the exposed
clients back to the base tree, and what a release costs the clients it does not expose.

    .venv/bin/python bench/releases/run.py [--clients 10000] [--runs 5] [--only guard|fanout|redis]
                                           [--loops 1] [--keep]

Clients: `bench/loadgen/loadgen drive` (C, one thread, one epoll loop; see "mode: drive" there),
each signed in as its own user u<i> with an HS256 JWT minted from the hub's data-dir `jwt.secret`
(so a release's unit is the user, DESIGN §6), all subscribed to the released screen A (and, for the
fan-out, to a second screen B). Each part starts its own hubs and clients. This script tells the
clients what to send and reads what they received; both stamp CLOCK_MONOTONIC
(`time.monotonic_ns()` here), so a client's arrival minus the moment a report or an admin request
was sent is a latency.

- **guard** (one hub, `--loops` 1, data-dir journal): a release of A at 10 % with the guard
  `{"max_error_rate": 0.1, "min_units": 100}`. Who is exposed is recomputed here from the
  documented bucket (u64(SHA-256("release/{screen}/{id}/{unit}")) % 10000 < percent × 100) and
  checked against the hub's `sent` and against who got the candidate. Then 100 exposed clients
  send `rendered` (the hub's health shows reported 100: the guard cannot trip on 0 errors), then
  exposed clients send `render_error` one after another: the guard trips at the first error after
  which errored ÷ reported > 0.1, the 12th (12 ÷ 112); the first 11 are sent and seen folded
  (errored 11, still rolling) before the 12th is sent and stamped. Measured: from that report to
  each exposed client holding the base tree at the revert version (a patch or a snapshot whose
  hash is the base's, version = candidate + 1): p50, p99, max; and the hub's halt time (`halt.at`,
  its wall clock in ms) against the report, which splits it into judging and sending back. Every
  client then answers a probe: nobody but the exposed got anything. Each run is a new release
  (a new bucket) on the same hub and clients; the guard ends it.
- **redis**: the same with three hubs over one redis-server (`appendfsync always`, as
  docs/scale-out.md recommends), each `--loops 1 --redis`, sharing `admin.token` and `jwt.secret`
  (docs/scale-out.md); the clients spread over the three (a generator each), the release started
  on hub 0, the `rendered` reports and errors sent by clients of every hub in turn, and the
  crossing report from hub 1, 2, 0, … in successive runs.
- **fanout** (one hub, `--loops` 1, data-dir journal): `--runs` rounds, each of
  (a) a publish of B (one changed leaf) to every client: time from the PUT to the last delivery,
      deliveries/s (= deliveries ÷ that time), p50/p99 of PUT → each delivery, PUT → first, first
      → last, the hub's CPU per delivery (its threads' schedstat, ns: all, the client loop, the
      control plane) and the generator's;
  (b) a release of A at 0 %: the admin call's latency and the hub's CPU for it (from before the
      POST to 0.2 s after its answer), against the same on a screen nobody subscribes to (E), and
      the same for its halt; a probe then shows that no client got anything;
  (c) a release of A at 50 %: the same figures as (a) over the exposed half (the deliveries are
      checked against the bucket), compared with (a);
  (d) a publish of B while (c) rolls: the same figures as (a), compared with (a);
  then the halt of (c) (the exposed half sent the base back: figures as (c)) and a probe (nobody
  else got anything).

Before each run (or round) the script waits (at most `--quiet-wait` s) until the machine is at
most `--quiet-pct` % busy; each guard run, and each fan-out round, says what other processes used
of the machine during it.
Every wait is bounded (`--timeout`, 60 s); the hubs, generators and redis-server it started are
stopped on exit.
"""
import argparse
import hashlib
import os
import statistics
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.abspath(os.path.join(HERE, "..", ".."))
PUSHHUB = os.environ.get("PUSHHUB", os.path.join(ROOT, ".build", "release", "pushhub"))
LOADGEN = os.path.join(ROOT, "bench", "loadgen", "loadgen")

sys.path.insert(0, os.path.join(ROOT, "bench", "lib"))
from benchlib import (  # noqa: E402 (bench/lib is found through ROOT)
    DrivePool, HubCPU, Others, SecretsHub, add_quiet_arguments, free_port, percentile, say, spread_line, started, stop,
    wait_quiet, work_folder)

TOKEN = "bench-releases-admin-token-0123456789abcdef"
SECRET = "bench-releases-jwt-secret-0123456789abcdef"
A, B, E = "bench/rollout/home", "bench/rollout/other", "bench/rollout/empty"  # no "/releases/" in a name
PROBE_S = 30


def tree(title):
    """A title and 8 keyed rows: a new title is a one-op patch (as loadgen fanout's screen)."""
    return {"type": "screen", "title": title,
            "children": [{"id": "r%d" % r, "type": "row", "text": "row number %d" % r} for r in range(8)]}


BASE, CANDIDATE = tree("Home"), tree("Home, with the new carousel")


def bucket(screen, release, unit):
    """DESIGN §15: u64(SHA-256("release/{screen}/{id}/{unit}")) % 10000."""
    digest = hashlib.sha256(("release/%s/%s/%s" % (screen, release, unit)).encode()).digest()
    return int.from_bytes(digest[:8], "big") % 10000


def ms(ns):
    return ns / 1e6


def wait_until(what, check, timeout, every=0.01):
    deadline = time.monotonic() + timeout
    while True:
        value = check()
        if value:
            return value
        if time.monotonic() > deadline:
            raise SystemExit("timed out after %.0f s waiting for %s" % (timeout, what))
        time.sleep(every)


class Hub(SecretsHub):
    """The releases bench's hub (`SecretsHub`), with a release's reader."""

    def __init__(self, folder, loops, *flags, timeout):
        super().__init__(PUSHHUB, folder, loops, TOKEN, SECRET, *flags, timeout=timeout)

    def release(self, screen, release_id):
        return self.must("GET", "/v1/screens/%s/releases/%s" % (screen, release_id))[0]


class Pool(DrivePool):
    """One `loadgen drive` process: `n` clients of one hub, users u<first>…u<first+n−1>."""

    def __init__(self, hub, n, first, screens, folder, timeout):
        self.hub = hub
        super().__init__(LOADGEN, hub.port, n, first, screens, folder, timeout,
                         ("--jwt-secret-file", os.path.join(hub.data, "jwt.secret")), probe_s=PROBE_S)


class Clients:
    """Every client over its pools: client g (global) is user u<g>, pool k holds a contiguous range."""

    def __init__(self, pools):
        self.pools = pools
        self.where = [(pool, i) for pool in pools for i in range(pool.n)]

    def __len__(self):
        return len(self.where)

    def unit(self, g):
        return "u%d" % g

    def pool_of(self, g):
        return self.where[g][0]

    def send(self, g, message):
        pool, i = self.where[g]
        return pool.send(i, message)

    def mark(self):
        for pool in self.pools:
            pool.mark()

    def wait(self, counts, seconds):
        """counts: {pool: expected messages}; waits on each in turn within one deadline."""
        deadline = time.monotonic() + seconds
        return {pool: pool.wait(want, max(0.0, deadline - time.monotonic())) for pool, want in counts.items()}

    def probe(self):
        for pool in self.pools:
            pool.probe()

    def cpu_ns(self):
        """The generators' own CPU time so far."""
        return sum(pool.cpu_ns() for pool in self.pools)

    def dump(self):
        """The messages since the mark, as (global client, t, type, screen, version, from, hash16, bytes)."""
        out = []
        for pool in self.pools:
            for message in pool.dump():
                out.append((pool.first + message[0],) + message[1:])
        return out


def exposed_units(clients, screen, release_id, percent):
    return sorted(g for g in range(len(clients)) if bucket(screen, release_id, clients.unit(g)) < percent * 100)


def per_pool(clients, group):
    counts = {pool: 0 for pool in clients.pools}
    for g in group:
        counts[clients.pool_of(g)] += 1
    return counts


def fan_figures(messages, t0, cpu_ns=None, generator_ns=None):
    """Delivery figures for messages sent by one trigger at t0 (ns)."""
    times = sorted(m[1] for m in messages)
    lat = [t - t0 for t in times]
    took = times[-1] - t0
    text = "%d deliveries, trigger → last %.1f ms: %.0f deliveries/s, p50 %.1f ms, p99 %.1f ms, → first %.2f ms, " \
           "first → last %.1f ms" % (len(times), ms(took), len(times) / (took / 1e9), ms(percentile(lat, 0.5)),
                                    ms(percentile(lat, 0.99)), ms(times[0] - t0), ms(times[-1] - times[0]))
    row = {"n": len(times), "rate": len(times) / (took / 1e9), "p50": ms(percentile(lat, 0.5)),
           "p99": ms(percentile(lat, 0.99)), "last": ms(took), "first": ms(times[0] - t0),
           "spread": ms(times[-1] - times[0]), "pace": (times[-1] - times[0]) / 1e3 / max(1, len(times) - 1)}
    text += " (%.2f µs apart)" % row["pace"]
    if cpu_ns is not None:
        row.update({"cpu_us": cpu_ns["all"] / 1e3 / len(times), "loop_us": cpu_ns["loops"] / 1e3 / len(times),
                    "control_us": cpu_ns["control"] / 1e3 / len(times)})
        text += ", hub CPU %.2f µs/delivery (loop %.2f, control plane %.2f)" % (row["cpu_us"], row["loop_us"],
                                                                                row["control_us"])
    if generator_ns is not None:
        row["generator_us"] = generator_ns / 1e3 / len(times)
        text += ", generator %.2f µs/delivery" % row["generator_us"]
    return text, row


def check_delivered(messages, group, screen_index, version, digest, what):
    """Each client of `group` got exactly one message, of that screen, version and hash; no one else
    got anything. Returns a list of problems (empty when all is as it should be)."""
    problems = []
    got = {}
    for m in messages:
        got.setdefault(m[0], []).append(m)
    members = set(group)
    strangers = [g for g in got if g not in members]
    if strangers:
        problems.append("%d clients outside %s got something (client %d: %s)" % (
            len(strangers), what, strangers[0], got[strangers[0]][0]))
    missing = [g for g in group if g not in got]
    if missing:
        problems.append("%d of %s got nothing (client %d)" % (len(missing), what, missing[0]))
    wrong = [got[g] for g in group if g in got and (len(got[g]) != 1 or got[g][0][2] not in ("patch", "snapshot")
                                                   or got[g][0][3] != screen_index or got[g][0][4] != version
                                                   or got[g][0][6] != digest)]
    if wrong:
        problems.append("%d of %s got something else than one message with version %d, hash %s… (e.g. %s)" % (
            len(wrong), what, version, digest, wrong[0]))
    return problems


def crossing_errors(rendered, max_error_rate, min_units):
    """How many render_error reports, after `rendered` rendered ones, trip the guard: the first k
    with rendered + k ≥ min_units and k ÷ (rendered + k) > max_error_rate."""
    k = 1
    while not (rendered + k >= min_units and k / (rendered + k) > max_error_rate):
        k += 1
    return k


# ---------------------------------------------------------------------------------------------
# the guard

def guard_run(args, hubs, clients, run, crossing_pool):
    """One release at --percent with the guard; returns its figures."""
    hub = hubs[0]
    others = Others(*[h.pid for h in hubs], *[p.process.pid for p in clients.pools], *args.more_pids)
    guard = {"max_error_rate": args.max_error_rate, "min_units": args.min_units}
    body = {"tree": CANDIDATE, "percent": args.percent, "guard": guard, "message": "bench run %d" % run}
    release, _, _ = hub.must("POST", "/v1/screens/%s/releases" % A, body)
    rid, version = release["release"], release["version"]
    candidate16 = release["hash"][:16]
    exposed = exposed_units(clients, A, rid, args.percent)
    k = crossing_errors(args.rendered, args.max_error_rate, args.min_units)
    if len(exposed) < args.rendered + k:
        raise SystemExit("%d exposed units: too few for %d rendered and %d errors" % (len(exposed), args.rendered, k))
    clients.wait(per_pool(clients, exposed), args.timeout)
    clients.probe()
    problems = check_delivered(clients.dump(), exposed, 0, version, candidate16, "the exposed (candidate)")
    if release["sent"] != len(exposed) and len(hubs) == 1:
        problems.append("the hub sent the candidate to %d clients, the bucket exposes %d"
                        % (release["sent"], len(exposed)))
    clients.mark()

    # Reports from clients of every hub in turn: the exposed ordered so that consecutive ones
    # sit on different pools.
    ordered = interleave([[g for g in exposed if clients.pool_of(g) is pool] for pool in clients.pools])
    renderers, errors = ordered[:args.rendered], ordered[args.rendered:args.rendered + k - 1]
    crossing = next(g for g in ordered[args.rendered + k - 1:] if clients.pool_of(g) is crossing_pool)
    for g in renderers:
        clients.send(g, {"type": "rendered", "screen": A, "version": version})
    wait_until("the hub to count %d rendered" % len(renderers),
               lambda: hub.release(A, rid)["health"]["reported"] >= len(renderers), args.timeout)
    for g in errors:
        clients.send(g, {"type": "render_error", "screen": A, "version": version, "component": "Carousel",
                         "message": "bench: a render error that does not cross the guard"})
    wait_until("the hub to count %d errors" % len(errors),
               lambda: hub.release(A, rid)["health"]["errored"] >= len(errors), args.timeout)
    state = hub.release(A, rid)
    if state["status"] != "rolling":
        raise SystemExit("the release halted before the crossing report: %s" % state["halt"])
    for other in hubs[1:]:  # every hub has folded them (the crossing report then decides on every hub)
        wait_until("hub %d to count %d errors" % (hubs.index(other), len(errors)),
                   lambda: other.release(A, rid)["health"]["errored"] >= len(errors), args.timeout)
    offset = time.time_ns() - time.monotonic_ns()
    t_cross = clients.send(crossing, {"type": "render_error", "screen": A, "version": version, "component": "Carousel",
                                      "message": "bench: the report that crosses the guard"})
    clients.wait(per_pool(clients, exposed), args.timeout)
    others_pct = others.pct()
    clients.probe()
    messages = clients.dump()
    halted = hub.release(A, rid)
    revert = version + 1
    problems += check_delivered(messages, exposed, 0, revert, args.base16, "the exposed (revert)")
    halt = halted.get("halt") or {}
    if halted["status"] != "halted" or halt.get("by") != "guard" or halted.get("revert_version") != revert:
        problems.append("release %s: status %s, halt %s, revert_version %s" % (rid, halted["status"], halt,
                                                                              halted.get("revert_version")))
    if halt.get("reported") != args.rendered + k or halt.get("errored") != k:
        problems.append("the guard judged reported %s, errored %s; expected %d, %d" % (
            halt.get("reported"), halt.get("errored"), args.rendered + k, k))
    arrivals = [(m[0], m[1]) for m in messages if m[0] in set(exposed)]
    kinds = {kind: sum(1 for m in messages if m[2] == kind) for kind in sorted({m[2] for m in messages})}
    lat = [t - t_cross for _, t in arrivals]
    decision = (halt.get("at", 0) - (t_cross + offset) // 1_000_000) * 1_000_000  # halt.at is in whole ms
    row = {"p50": ms(percentile(lat, 0.5)), "p99": ms(percentile(lat, 0.99)), "max": ms(max(lat)),
           "decision": ms(decision), "first": ms(min(lat)), "exposed": len(exposed), "others": others_pct}
    per_hub = ""
    if len(clients.pools) > 1:
        parts = []
        for n, pool in enumerate(clients.pools):
            mine = [t - t_cross for g, t in arrivals if clients.pool_of(g) is pool]
            parts.append("hub %d: %d, p50 %.1f, max %.1f ms" % (n, len(mine), ms(percentile(mine, 0.5)), ms(max(mine))))
        per_hub = " [%s]" % "; ".join(parts)
    say("guard run %d: %s at %g %%: %d exposed (hub's sent %d); %d rendered, then errors: no. %d (from hub %d) "
        "crosses (%d/%d = %.3f > %g); report → halt.at %.0f ms (the hub's wall clock, whole ms); report → base "
        "tree at v%d on every exposed client: p50 %.1f ms, p99 %.1f ms, max %.1f ms (first %.1f ms; %s)%s; %s; "
        "others %.0f%% CPU" % (
            run, rid, args.percent, len(exposed), release["sent"], args.rendered, k, clients.pools.index(crossing_pool),
            k, args.rendered + k, k / (args.rendered + k), args.max_error_rate, row["decision"], revert, row["p50"],
            row["p99"], row["max"], row["first"], ", ".join("%d %s" % (n, kind) for kind, n in kinds.items()), per_hub,
            "checked: the exposed got the candidate and then the base tree, nobody else got anything" if not problems
            else "PROBLEMS: " + "; ".join(problems), others_pct))
    clients.mark()
    return row, problems


def interleave(lists):
    """The first of each list, then the second of each, …"""
    return [row[i] for i in range(max(map(len, lists))) for row in lists if i < len(row)]


def guard(args, hubs, clients, label):
    rows, failures = [], 0
    for run in range(1, args.runs + 1):
        say(wait_quiet(args.quiet_pct, args.quiet_wait))
        row, problems = guard_run(args, hubs, clients, run, clients.pools[run % len(clients.pools)])
        rows.append(row)
        failures += bool(problems)
    spread_line("%s, %d runs, report → exposed client holds the base tree" % (label, len(rows)), rows,
                (("p50", "p50", " ms"), ("p99", "p99", " ms"), ("max", "max", " ms"),
                 ("decision", "report → halt.at", " ms"), ("others", "others", " % CPU")))
    worst = max(row["max"] for row in rows)
    say("%s: goal under 1 s at every exposed client: %s (worst %.0f ms)%s" % (
        label, "met" if worst < 1000 else "NOT MET", worst, "; %d runs with problems" % failures if failures else ""))


# ---------------------------------------------------------------------------------------------
# the cost for the unexposed

def fanout(args, hub, clients):
    n = len(clients)
    rows = {"a": [], "c": [], "d": [], "halt": [], "b": [], "others": []}
    for rnd in range(1, args.runs + 1):
        say(wait_quiet(args.quiet_pct, args.quiet_wait))
        others = Others(hub.pid, *[p.process.pid for p in clients.pools])

        def publish_b(key, what):
            """A publish of B to everyone, measured as row `key`."""
            clients.mark()
            generator = clients.cpu_ns()
            cpu = HubCPU(hub.pid)
            answer, t0, _ = hub.must("PUT", "/v1/screens/" + B, tree("other %d.%s" % (rnd, key)))
            clients.wait({pool: pool.n for pool in clients.pools}, args.timeout)
            cpu, generator = cpu.used(), clients.cpu_ns() - generator
            messages = clients.dump()
            problems = check_delivered(messages, range(n), 1, answer["version"], answer["hash"][:16], "every client")
            text, row = fan_figures(messages, t0, cpu, generator)
            rows[key].append(row)
            say("round %d (%s) %s: %s%s" % (rnd, key, what, text, "; PROBLEMS: " + "; ".join(problems) if problems else ""))

        # (a) a publish of B to everyone
        publish_b("a", "publish of B to %d subscribers" % n)

        # (b) a release at 0 %, then its halt: on A (every client subscribes) and on E (nobody does)
        parts = []
        brow = {}
        for screen, name in ((A, "A, %d subscribers" % n), (E, "E, no subscribers")):
            clients.mark()
            time.sleep(0.2)
            cpu = HubCPU(hub.pid)
            release, t0, t1 = hub.must("POST", "/v1/screens/%s/releases" % screen, {"tree": CANDIDATE, "percent": 0})
            time.sleep(0.2)
            start_cpu = cpu.used()
            cpu = HubCPU(hub.pid)
            halted, h0, h1 = hub.must("POST", "/v1/screens/%s/releases/%s/halt" % (screen, release["release"]),
                                      {"reason": "bench: 0 % release"})
            time.sleep(0.2)
            halt_cpu = cpu.used()
            clients.probe()
            got = clients.dump()
            key = "A" if screen == A else "E"
            brow.update({key + " call": ms(t1 - t0), key + " cpu": start_cpu["all"] / 1e6,
                         key + " loop": start_cpu["loops"] / 1e6, key + " halt call": ms(h1 - h0),
                         key + " halt cpu": halt_cpu["all"] / 1e6, key + " halt loop": halt_cpu["loops"] / 1e6})
            parts.append("%s: start %.2f ms (hub CPU %.2f ms: loop %.2f, control plane %.2f), sent %d; halt %.2f ms "
                         "(hub CPU %.2f ms: loop %.2f, control plane %.2f), sent %d; clients got %d messages" % (
                             name, ms(t1 - t0), start_cpu["all"] / 1e6, start_cpu["loops"] / 1e6,
                             start_cpu["control"] / 1e6, release["sent"], ms(h1 - h0), halt_cpu["all"] / 1e6,
                             halt_cpu["loops"] / 1e6, halt_cpu["control"] / 1e6, halted["sent"], len(got)))
            if got or release["sent"] or halted["sent"]:
                parts[-1] += " (PROBLEM: something was sent: %s)" % (got[:2],)
        rows["b"].append(brow)
        say("round %d (b) release at 0 %%: %s" % (rnd, "; ".join(parts)))

        # (c) a release of A at 50 %
        clients.mark()
        generator = clients.cpu_ns()
        cpu = HubCPU(hub.pid)
        release, t0, _ = hub.must("POST", "/v1/screens/%s/releases" % A, {"tree": CANDIDATE, "percent": 50})
        exposed = exposed_units(clients, A, release["release"], 50)
        clients.wait(per_pool(clients, exposed), args.timeout)
        cpu, generator = cpu.used(), clients.cpu_ns() - generator
        messages = clients.dump()
        problems = check_delivered(messages, exposed, 0, release["version"], release["hash"][:16], "the exposed half")
        if release["sent"] != len(exposed):
            problems.append("sent %d, the bucket exposes %d" % (release["sent"], len(exposed)))
        text, row = fan_figures(messages, t0, cpu, generator)
        rows["c"].append(row)
        say("round %d (c) release of A at 50 %% (%s, %d of %d exposed): %s%s" % (
            rnd, release["release"], len(exposed), n, text, "; PROBLEMS: " + "; ".join(problems) if problems else ""))

        # (d) a publish of B while it rolls
        publish_b("d", "publish of B while %s rolls at 50 %%" % release["release"])

        # the halt of (c): the exposed half gets the base tree back
        clients.mark()
        generator = clients.cpu_ns()
        cpu = HubCPU(hub.pid)
        halted, t0, _ = hub.must("POST", "/v1/screens/%s/releases/%s/halt" % (A, release["release"]),
                                 {"reason": "bench: end of round %d" % rnd})
        clients.wait(per_pool(clients, exposed), args.timeout)
        cpu, generator = cpu.used(), clients.cpu_ns() - generator
        clients.probe()
        messages = clients.dump()
        problems = check_delivered(messages, exposed, 0, halted["revert_version"], args.base16, "the exposed half")
        text, row = fan_figures(messages, t0, cpu, generator)
        rows["halt"].append(row)
        say("round %d halt of %s: %s; %s" % (
            rnd, release["release"], text,
            "checked: the exposed half got the base tree, nobody else got anything" if not problems
            else "PROBLEMS: " + "; ".join(problems)))
        rows["others"].append({"others": others.pct()})
        say("round %d: others %.0f%% CPU over the round" % (rnd, rows["others"][-1]["others"]))
    keys = (("rate", "", " deliveries/s"), ("p50", "p50", " ms"), ("p99", "p99", " ms"), ("last", "→ last", " ms"),
            ("first", "→ first", " ms"), ("spread", "first → last", " ms"),
            ("pace", "deliveries", " µs apart"), ("cpu_us", "hub CPU", " µs/delivery"),
            ("loop_us", "loop", " µs"), ("control_us", "control plane", " µs"), ("generator_us", "generator", " µs"))
    spread_line("(a) publish of B, %d subscribers, %d rounds" % (n, args.runs), rows["a"], keys)
    spread_line("(c) release of A at 50 %%, %d rounds" % args.runs, rows["c"], keys)
    spread_line("(d) publish of B while A's release rolls at 50 %%, %d rounds" % args.runs, rows["d"], keys)
    spread_line("halt of (c), %d rounds" % args.runs, rows["halt"], keys)
    spread_line("other processes over each round", rows["others"], (("others", "", " % CPU"),))
    spread_line("(b) release at 0 %%, %d rounds: admin call / hub CPU" % args.runs, rows["b"], (
        ("A call", "start on A (%d subscribers)" % n, " ms"), ("A cpu", "/", " ms"), ("A loop", "(loop", " ms)"),
        ("E call", "on E (none)", " ms"), ("E cpu", "/", " ms"), ("A halt call", "halt on A", " ms"),
        ("A halt cpu", "/", " ms"), ("A halt loop", "(loop", " ms)"), ("E halt call", "on E", " ms"),
        ("E halt cpu", "/", " ms")))

    def median(part, key):
        return statistics.median(row[key] for row in rows[part])

    say("medians over the rounds: deliveries/s (a) %.0f, (c) %.0f, (d) %.0f; hub CPU per delivery (a) %.2f, (c) %.2f, "
        "(d) %.2f µs; deliveries (a) %.2f, (c) %.2f, (d) %.2f µs apart; p50 (a) %.1f, (c) %.1f, (d) %.1f ms; "
        "p99 (a) %.1f, (c) %.1f, (d) %.1f ms" % (
            median("a", "rate"), median("c", "rate"), median("d", "rate"), median("a", "cpu_us"), median("c", "cpu_us"),
            median("d", "cpu_us"), median("a", "pace"), median("c", "pace"), median("d", "pace"), median("a", "p50"),
            median("c", "p50"), median("d", "p50"), median("a", "p99"), median("c", "p99"), median("d", "p99")))


# ---------------------------------------------------------------------------------------------

def set_up(args, work, name, hub_count, screens, redis_url=None):
    """Hubs, the screens published on hub 0, and the clients spread over the hubs."""
    hubs = []
    for k in range(hub_count):
        flags = ("--redis", redis_url) if redis_url else ()
        hubs.append(Hub(os.path.join(work, "%s-hub%d" % (name, k)), args.loops, *flags, timeout=args.timeout))
    base, _, _ = hubs[0].must("PUT", "/v1/screens/" + A, BASE)
    args.base16 = base["hash"][:16]
    for screen in screens[1:]:
        hubs[0].must("PUT", "/v1/screens/" + screen, tree("other 0"))
    hubs[0].must("PUT", "/v1/screens/" + E, BASE)
    if redis_url:
        for k, hub in enumerate(hubs[1:], 1):  # every hub applies the first versions (a notice, or its 1 s poll)
            wait_until("hub %d to have %s" % (k, A), lambda: hub.call("GET", "/v1/screens/" + A)[0] == 200,
                       args.timeout)
    pools, first = [], 0
    for k, hub in enumerate(hubs):
        n = args.clients // hub_count + (1 if k < args.clients % hub_count else 0)
        pools.append(Pool(hub, n, first, screens, work, args.timeout))
        first += n
    say("# %s: %d hub(s) with --loops %d%s; %d clients signed in as u0…u%d, subscribed to %s, connected in %s s" % (
        name, hub_count, args.loops, " over Redis (appendfsync always)" if redis_url else ", data-dir journal",
        args.clients, args.clients - 1, " and ".join(screens), ", ".join("%.1f" % p.connect_s for p in pools)))
    return hubs, Clients(pools)


def tear_down(hubs, clients):
    for pool in clients.pools:
        pool.stop()
    for n, hub in enumerate(hubs):
        problems = hub.problems()
        hub.stop()
        if problems:
            say("# NOTE: hub %d logged errors: %s" % (n, " | ".join(problems[:3])))


def start_redis(folder):
    port = free_port()
    os.makedirs(folder)
    process = subprocess.Popen(
        ["redis-server", "--port", str(port), "--bind", "127.0.0.1", "--dir", folder, "--save", "",
         "--appendonly", "yes", "--appendfsync", "always", "--logfile", os.path.join(folder, "redis.log")],
        stdout=subprocess.DEVNULL)
    started.append(process)
    def pong():
        answer = subprocess.run(["redis-cli", "-p", str(port), "PING"], capture_output=True, text=True)
        return answer.stdout.strip() == "PONG"

    wait_until("redis-server to answer PING", pong, 10, every=0.05)
    return process, "redis://127.0.0.1:%d" % port


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--clients", type=int, default=10000, help="clients in all (10,000)")
    parser.add_argument("--runs", type=int, default=5, help="guard runs, and fan-out rounds (5)")
    parser.add_argument("--only", choices=("guard", "redis", "fanout"), action="append",
                        help="one part; repeat for more (default: all three)")
    parser.add_argument("--loops", type=int, default=1, help="each hub's event loops (1: the generators need a core)")
    parser.add_argument("--percent", type=float, default=10, help="the guard runs' release percent (10)")
    parser.add_argument("--max-error-rate", type=float, default=0.1, help="the guard's max_error_rate (0.1)")
    parser.add_argument("--min-units", type=int, default=100, help="the guard's min_units (100)")
    parser.add_argument("--rendered", type=int, default=None, help="exposed clients that render before the errors "
                                                                       "(default: min-units)")
    parser.add_argument("--timeout", type=int, default=60, help="bound on every wait, seconds (60)")
    add_quiet_arguments(parser)
    args = parser.parse_args()
    args.rendered = args.min_units if args.rendered is None else args.rendered
    args.more_pids = []
    parts = args.only or ["guard", "fanout", "redis"]
    if subprocess.run(["make", "-s", "-C", os.path.dirname(LOADGEN), "loadgen"], stdout=sys.stderr).returncode:
        raise SystemExit("could not build %s" % LOADGEN)
    if not os.access(PUSHHUB, os.X_OK):
        raise SystemExit("no pushhub binary at %s (swift build -c release, or PUSHHUB=...)" % PUSHHUB)
    with work_folder("bench-releases-", args.keep) as work:
        say("# %s; load average %s; pushhub %s" % (time.strftime("%Y-%m-%d %H:%M:%S %Z"),
                                                  " ".join("%.2f" % x for x in os.getloadavg()), PUSHHUB))
        try:
            if "guard" in parts:
                hubs, clients = set_up(args, work, "guard", 1, [A])
                try:
                    guard(args, hubs, clients, "guard, one hub")
                finally:
                    tear_down(hubs, clients)
            if "fanout" in parts:
                hubs, clients = set_up(args, work, "fanout", 1, [A, B])
                try:
                    fanout(args, hubs[0], clients)
                finally:
                    tear_down(hubs, clients)
            if "redis" in parts:
                redis, url = start_redis(os.path.join(work, "redis"))
                args.more_pids = [redis.pid]
                hubs, clients = set_up(args, work, "redis", 3, [A], url)
                try:
                    guard(args, hubs, clients, "guard, three hubs over Redis")
                finally:
                    tear_down(hubs, clients)
                    stop(redis)
        finally:
            say("# load average at the end %s" % " ".join("%.2f" % x for x in os.getloadavg()))

if __name__ == "__main__":
    main()
