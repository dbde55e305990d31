"""Components (issue 28, DESIGN §16): what a fan-out costs when clients render different sets of
components — it should grow with the renditions, not with the clients.

    .venv/bin/python bench/components/run.py [--clients 10000] [--publishes 20]
                                             [--only same|mix4|realistic|many] [--repeat 1] [--loops 1]
                                             [--minors 5] [--perf PREFIX] [--keep]

One hub per scenario (release build, `--loops 1`, data-dir journal, on loopback), five components
registered (Text 1, Image 1, Carousel 1 and 2, Video 1: each version with a schema) and three app
profiles (ios 4.0.0 {Text 1, Image 1, Carousel 1}; ios 5.2.0 {Text 1, Image 1, Carousel 2};
android 5.0.0 {Text 1, Image 1, Carousel 2, Video 1}). One screen of ~200 nodes: a header, four
Carousel v2 with a Carousel v1 fallback that falls back to a Text, two Video with an Image fallback,
ten Section of 17 Text rows each (every node keyed by "id"; 198 nodes, 19.6 KB). `--clients` clients
(`bench/loadgen/loadgen drive`, one process, signed in as users u0…, each hello carrying its
build — `app` and/or `components` — from `--hello-extra-file`) subscribe to it; then
`--publishes` publishes, one after the other (the next once every client has the previous one),
each changing the header's text (a one-op patch that every rendition shows), after one publish not
counted (warm-up).

Scenarios:
- **same**: every client is iOS 5.3.0 (its profile: ios 5.2.0): one rendition.
- **mix4**: four builds, interleaved (client i is build i % 4): iOS 4.3.0 (Carousel v1, Video →
  Image), iOS 5.3.0 (Carousel v2, Video → Image), Android 5.1.0 (everything), web 1.0.0 declaring
  {"Text":1,"Image":1} in its hello (Carousel → Text, Video → Image): four renditions.
- **realistic**: 20 app versions (4.0.0…4.4.0, 5.0.0…5.4.0 on ios and android; newer builds more
  common, 60 % ios), profiles at 3 of them (the three above: android 4.x has none and renders
  everything), and 10 % of the clients declaring one of two sets in their hello ({"Text":1,
  "Image":1}, or everything); how many renditions that gives is computed here and checked against
  the hub's answer.
- **many**: the realistic mix over 200 app versions (4.0.0…4.49.0, 5.0.0…5.49.0 on each platform,
  `--minors 50`): as many renditions, ten times the builds — whether a fan-out's cost per client
  grows with the builds its subscribers run when the renditions do not.

Measured per publish: deliveries/s (= deliveries ÷ PUT sent → last delivery), p50/p99 of PUT →
delivery, the publish answer's `renditions` and `sent`, the deltas of the hub's `/metrics`
counters `pushhub_renders_total`, `pushhub_encodes_total` (of which patches, snapshots) over the
publish, the hub's CPU per delivery (its threads' schedstat: client loop and control plane) and
the generator's; over all the measured publishes, the hub's user and system CPU per delivery
(/proc/PID/stat: per-client work in the hub apart from the kernel's send path). `--perf PREFIX`
records the hub with `perf record -g` over each scenario's measured publishes (perf's own CPU then
shows in "others"). Checked per publish: every client got exactly one patch at the new version whose
hash is the one `GET /v1/screens/{name}?platform=&app_version=&components=` gives for its build;
before the publishes, that every build's tree is the one this script renders from DESIGN §16's
rules (fallback, or removal; a rendered node loses its "fallback"), so each client is known to
get what its build should.

Before each scenario the script waits (at most `--quiet-wait` s) until the machine is at most
`--quiet-pct` % busy and says what other processes used during it ("others"). Every wait is
bounded (`--timeout`, 60 s); the hubs and generators it started are stopped on exit.
"""
import argparse
import json
import os
import random
import signal
import statistics
import subprocess
import sys
import time
import urllib.parse

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.abspath(os.path.join(HERE, "..", ".."))
PUSHHUB = os.environ.get("PUSHHUB", os.path.join(ROOT, ".build", "release", "pushhub"))
LOADGEN = os.path.join(ROOT, "bench", "loadgen", "loadgen")

sys.path.insert(0, os.path.join(ROOT, "bench", "lib"))
from benchlib import (  # noqa: E402 (bench/lib is found through ROOT)
    DrivePool, HubCPU, Others, SecretsHub, add_quiet_arguments, percentile, say, spread_line, started, wait_quiet,
    work_folder)

TOKEN = "bench-components-admin-token-0123456789abcdef"
SECRET = "bench-components-jwt-secret-0123456789abcdef"
SCREEN = "bench/components/home"

# ---------------------------------------------------------------------------------------------
# the registry, the profiles, the screen

TEXT = {"type": "object", "required": ["text"], "properties": {
    "id": {"type": "string"}, "text": {"type": "string", "maxLength": 500},
    "style": {"enum": ["title", "body", "caption"]}}}
IMAGE = {"type": "object", "required": ["src"], "properties": {
    "id": {"type": "string"}, "src": {"type": "string", "pattern": "^https://"}, "alt": {"type": "string"}}}
ITEM = {"type": "object", "required": ["title"], "properties": {
    "title": {"type": "string"}, "image": {"type": "string"}, "link": {"type": "string"}}}
COMPONENTS = {
    "Text": {"1": TEXT},
    "Image": {"1": IMAGE},
    "Carousel": {
        "1": {"type": "object", "required": ["items"], "properties": {
            "id": {"type": "string"}, "items": {"type": "array", "items": ITEM}}},
        "2": {"type": "object", "required": ["items"], "properties": {
            "id": {"type": "string"}, "items": {"type": "array", "items": ITEM}, "autoplay": {"type": "boolean"},
            "interval_ms": {"type": "integer", "minimum": 1000}}}},
    "Video": {"1": {"type": "object", "required": ["src"], "properties": {
        "id": {"type": "string"}, "src": {"type": "string"}, "poster": {"type": "string"},
        "autoplay": {"type": "boolean"}}}},
}
PROFILES = {("ios", "4.0.0"): {"Text": 1, "Image": 1, "Carousel": 1},
            ("ios", "5.2.0"): {"Text": 1, "Image": 1, "Carousel": 2},
            ("android", "5.0.0"): {"Text": 1, "Image": 1, "Carousel": 2, "Video": 1}}
TEXT_ONLY = {"Text": 1, "Image": 1}
EVERYTHING = {"Text": 1, "Image": 1, "Carousel": 2, "Video": 1}
SECTIONS, ROWS = 10, 17


def screen(edition):
    """~200 nodes; `edition` is the header's text: one leaf that changes with every publish, and
    that every rendition shows."""
    def carousel(k):
        items = [{"title": "Offer %d.%d" % (k, i), "image": "https://img.example.com/c%d/%d.jpg" % (k, i),
                  "link": "app://offer/%d/%d" % (k, i)} for i in range(5)]
        return {"id": "carousel-%d" % k, "type": "Carousel", "v": 2, "autoplay": True, "interval_ms": 4000,
                "items": items,
                "fallback": {"id": "carousel-%d" % k, "type": "Carousel", "items": items,
                             "fallback": {"id": "carousel-%d" % k, "type": "Text", "style": "body",
                                          "text": "%d offers: see them all" % len(items)}}}

    def video(k):
        return {"id": "video-%d" % k, "type": "Video", "src": "https://video.example.com/%d.m3u8" % k,
                "poster": "https://img.example.com/v%d.jpg" % k, "autoplay": False,
                "fallback": {"id": "video-%d" % k, "type": "Image", "src": "https://img.example.com/v%d.jpg" % k,
                             "alt": "Watch in the app"}}

    def section(s):
        rows = []
        for r in range(ROWS):
            text = "Section %d, row %d: %s" % (s, r, ("kick-off", "possession", "corner", "offside")[(s + r) % 4])
            rows.append({"id": "s%d-r%d" % (s, r), "type": "Text", "style": "body", "text": text})
        return {"id": "section-%d" % s, "type": "Section", "title": "Section %d" % s, "children": rows}

    children = [{"id": "header", "type": "Text", "style": "title", "text": "Today, update %d" % edition},
                carousel(0), video(0)]
    for s in range(SECTIONS):
        children.append(section(s))
        if s in (2, 5, 8):
            children.append(carousel(1 + (s - 2) // 3))
        if s == 6:
            children.append(video(1))
    return {"id": "home", "type": "Screen", "title": "Home", "children": children}


def count_nodes(value):
    if isinstance(value, dict):
        return ("type" in value) + sum(count_nodes(v) for v in value.values())
    if isinstance(value, list):
        return sum(count_nodes(v) for v in value)
    return 0


REMOVED = object()


def render(value, limits):
    """DESIGN §16 as docs/components.md states it, for a client rendering `limits` (component →
    highest version) of the registered COMPONENTS: a node of a registered component the client
    does not render becomes its fallback (judged in turn) or is removed; a node it renders loses
    its "fallback"; other types pass as they are."""
    if isinstance(value, dict):
        node = value
        judged = False
        if isinstance(node.get("type"), str) and node["type"] in COMPONENTS:
            if limits.get(node["type"], 0) < node.get("v", 1):
                return render(node["fallback"], limits) if "fallback" in node else REMOVED
            judged = True
        out = {}
        for key, member in node.items():
            if judged and key == "fallback":
                continue
            rendered = render(member, limits)
            if rendered is not REMOVED:
                out[key] = rendered
        return out
    if isinstance(value, list):
        return [r for r in (render(v, limits) for v in value) if r is not REMOVED]
    return value


# ---------------------------------------------------------------------------------------------
# builds: what each client says in its hello, and what it renders

class Build:
    """One app build as a client presents it: platform and version (`app`), and a declaration."""

    def __init__(self, platform, version, declared=None):
        self.platform, self.version, self.declared = platform, version, declared

    def key(self):
        return (self.platform, self.version, json.dumps(self.declared, sort_keys=True))

    def hello(self):
        """The hello members loadgen pastes in (--hello-extra-file)."""
        parts = []
        if self.platform:
            parts.append('"app":{"platform":"%s","version":"%s"}' % (self.platform, self.version))
        if self.declared is not None:
            parts.append('"components":' + json.dumps(self.declared, separators=(",", ":")))
        return ",".join(parts)

    def query(self):
        """The same client for `GET /v1/screens/{name}?…`."""
        query = {}
        if self.platform:
            query.update(platform=self.platform, app_version=self.version)
        if self.declared is not None:
            query["components"] = ",".join("%s:%d" % kv for kv in sorted(self.declared.items()))
        return urllib.parse.urlencode(query)

    def limits(self):
        """What it renders (DESIGN §16): its declaration, else its platform's newest profile at or
        below its version, else everything."""
        if self.declared is not None:
            return self.declared
        def semver(text):
            return tuple(int(x) for x in text.split("."))
        mine = [(semver(v), p) for (platform, v), p in PROFILES.items()
                if platform == self.platform and semver(v) <= semver(self.version)]
        return max(mine)[1] if mine else EVERYTHING

    def capabilities(self):
        """What the hub's `Capabilities` holds for it (ComponentRegistry.capabilities): its app
        version and, per registered component, the highest version it renders (1000: every one,
        for a client with neither declaration nor profile). Equal ones are one object (interned
        per loop): the render targets of a fan-out."""
        limits = self.limits()
        if limits is EVERYTHING and self.declared is None:
            limits = {name: 1000 for name in COMPONENTS}
        return (self.version if self.platform else None,
                tuple(sorted((name, limits.get(name, 0)) for name in COMPONENTS)))

    def __str__(self):
        text = "%s %s" % (self.platform, self.version) if self.platform else "no app"
        return text + (" declaring %s" % json.dumps(self.declared, separators=(",", ":")) if self.declared else "")


def scenario_builds(name, n, minors=5, seed=28):
    """The build of each of `n` clients (realistic: app versions 4.0.0…4.<minors−1>.0 and
    5.0.0…5.<minors−1>.0 on each platform)."""
    if name == "same":
        return [Build("ios", "5.3.0")] * n
    if name == "many":
        return scenario_builds("realistic", n, 50, seed)
    if name == "mix4":
        four = [Build("ios", "4.3.0"), Build("ios", "5.3.0"), Build("android", "5.1.0"),
                Build("web", "1.0.0", TEXT_ONLY)]
        return [four[i % 4] for i in range(n)]
    # realistic: 20 app versions over 2 platforms, newer ones more common; 10 % declare one of two sets
    rng = random.Random(seed)
    versions = ["%d.%d.0" % (major, minor) for major in (4, 5) for minor in range(minors)]
    weights = [1.35 ** (k * 10 / len(versions)) for k in range(len(versions))]
    builds = []
    for _ in range(n):
        platform = "ios" if rng.random() < 0.6 else "android"
        version = rng.choices(versions, weights)[0]
        roll = rng.random()
        declared = TEXT_ONLY if roll < 0.05 else EVERYTHING if roll < 0.10 else None
        builds.append(Build(platform, version, declared))
    return builds


# ---------------------------------------------------------------------------------------------

class Hub(SecretsHub):
    def __init__(self, folder, loops, timeout):
        super().__init__(PUSHHUB, folder, loops, TOKEN, SECRET, timeout=timeout)


def ms(ns):
    return ns / 1e6


COUNTERS = (("renders", "pushhub_renders_total"), ("encodes", "pushhub_encodes_total"),
            ("patches", "pushhub_patches_encoded_total"), ("snapshots", "pushhub_snapshots_encoded_total"))


def run_scenario(args, work, name, attempt):
    folder = os.path.join(work, "%s-%d" % (name, attempt))
    os.makedirs(folder)
    builds = scenario_builds(name, args.clients, args.minors)
    distinct = {}
    for build in builds:
        distinct.setdefault(build.key(), build)
    # What each build should see, by this script's reading of DESIGN §16; clients grouped by it.
    expected_tree = {key: render(screen(0), build.limits()) for key, build in distinct.items()}
    renditions = {}
    for key, tree in expected_tree.items():
        renditions.setdefault(json.dumps(tree, sort_keys=True), []).append(key)
    group_of = {key: index for index, keys in enumerate(renditions.values()) for key in keys}
    clients_per_group = [0] * len(renditions)
    for build in builds:
        clients_per_group[group_of[build.key()]] += 1

    say(wait_quiet(args.quiet_pct, args.quiet_wait))
    hub = Hub(folder, args.loops, args.timeout)
    pool = None
    try:
        for component, versions in COMPONENTS.items():
            hub.must("PUT", "/v1/components/" + component,
                     {"versions": {v: {"schema": schema} for v, schema in versions.items()}})
        for (platform, version), components in PROFILES.items():
            hub.must("PUT", "/v1/apps/%s/%s/components" % (platform, version), {"components": components})
        tree0 = screen(0)
        hub.must("PUT", "/v1/screens/" + SCREEN, tree0)
        extras = os.path.join(folder, "hello-extras.txt")
        with open(extras, "w") as file:
            for build in builds:
                file.write(build.hello() + "\n")
        # Every build's tree, as the hub renders it, against this script's rendering.
        problems = []
        for key, build in distinct.items():
            got = hub.must("GET", "/v1/screens/%s?%s" % (SCREEN, build.query()))[0]
            if got["tree"] != expected_tree[key]:
                problems.append("%s: the hub's tree differs from DESIGN §16's rendering" % build)
        if problems:
            raise SystemExit("PROBLEMS before the run: " + "; ".join(problems[:5]))
        pool = DrivePool(LOADGEN, hub.port, args.clients, 0, [SCREEN], folder, args.timeout,
                         ("--jwt-secret-file", os.path.join(hub.data, "jwt.secret"), "--hello-extra-file", extras))
        listing = hub.must("GET", "/v1/components")[0]
        per_version = ", ".join("%s v%d: %d" % (c["name"], v["version"], v["clients"])
                                for c in listing["components"] for v in c["versions"])
        dry = hub.must("PUT", "/v1/screens/%s?dry_run=true" % SCREEN, screen(10_000))[0]
        fallbacks = dry.get("components", {}).get("fallbacks", [])
        say("# %s (run %d): %d clients, %d builds, %d distinct capabilities (the hub's render targets: app version "
            "× what it renders), expected renditions %d (clients per rendition %s); screen %d nodes, %d B; "
            "connected in %.1f s; GET /v1/components: %s of %d clients; dry run: renditions %d, would_send %d, "
            "%d fallback pointers" % (
                name, attempt, args.clients, len(distinct), len({b.capabilities() for b in distinct.values()}),
                len(renditions),
                "/".join(str(c) for c in clients_per_group), count_nodes(tree0),
                len(json.dumps(tree0, separators=(",", ":"))), pool.connect_s, per_version, listing["clients"],
                dry["renditions"], dry["would_send"], len(fallbacks)))
        if dry["renditions"] != len(renditions):
            say("# PROBLEM: the dry run says %d renditions, DESIGN §16 gives %d" % (dry["renditions"], len(renditions)))
        representative = [distinct[keys[0]] for keys in renditions.values()]
        group_of_client = [group_of[build.key()] for build in builds]

        rows = []
        others = Others(hub.pid, pool.process.pid)
        recorder = None
        for edition in range(1, args.publishes + 2):
            if edition == 2:
                ticks = user_system_ticks(hub.pid)
            if edition == 2 and args.perf:
                # The measured publishes, profiled (perf's own CPU shows in "others").
                recorder = subprocess.Popen(
                    ["perf", "record", "-q", "-g", "-F", "2000", "-p", str(hub.pid), "-o",
                     "%s.%s-%d" % (args.perf, name, attempt)], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
                started.append(recorder)
                time.sleep(0.5)
            pool.mark()
            before = hub.metrics()
            generator = pool.cpu_ns()
            cpu = HubCPU(hub.pid)
            answer, t0, _ = hub.must("PUT", "/v1/screens/" + SCREEN, screen(edition))
            got = pool.wait(args.clients, args.timeout)
            used, generator = cpu.used(), pool.cpu_ns() - generator
            after = hub.metrics()
            messages = pool.dump()
            version = answer["version"]
            hashes = [hub.must("GET", "/v1/screens/%s?%s" % (SCREEN, build.query()))[0]["hash"][:16]
                      for build in representative]
            problems = check(messages, args.clients, version, hashes, group_of_client)
            if got < args.clients:
                problems.append("%d of %d deliveries within %d s" % (got, args.clients, args.timeout))
            times = sorted(m[1] for m in messages)
            lat = [t - t0 for t in times]
            row = {"n": len(times), "rate": len(times) / ((times[-1] - t0) / 1e9), "p50": ms(percentile(lat, 0.5)),
                   "p99": ms(percentile(lat, 0.99)), "last": ms(times[-1] - t0), "first": ms(times[0] - t0),
                   "renditions": answer["renditions"], "sent": answer["sent"],
                   "hashes": len({m[6] for m in messages}),
                   "bytes": statistics.mean(m[7] for m in messages),
                   "cpu_us": used["all"] / 1e3 / len(times), "loop_us": used["loops"] / 1e3 / len(times),
                   "control_us": used["control"] / 1e3 / len(times), "generator_us": generator / 1e3 / len(times)}
            for key, metric in COUNTERS:
                row[key] = after.get(metric, 0) - before.get(metric, 0)
            say("%s publish %d%s: %d deliveries, PUT → last %.1f ms: %.0f deliveries/s, p50 %.1f ms, p99 %.1f ms, "
                "→ first %.2f ms; renditions %d (answer), %d (distinct hashes received), sent %d; renders %d, "
                "encodes %d (%d patches, %d snapshots); %.0f B per message; hub CPU %.2f µs/delivery (loop %.2f, "
                "control plane %.2f), generator %.2f µs%s" % (
                    name, edition, " (warm-up)" if edition == 1 else "", row["n"], row["last"], row["rate"],
                    row["p50"], row["p99"], row["first"], row["renditions"], row["hashes"], row["sent"],
                    row["renders"], row["encodes"], row["patches"], row["snapshots"], row["bytes"], row["cpu_us"],
                    row["loop_us"], row["control_us"], row["generator_us"],
                    "; PROBLEMS: " + "; ".join(problems) if problems else ""))
            if edition > 1:
                rows.append(row)
            if problems:
                args.failures += 1
        others_pct = others.pct()
        ticks = [b - a for a, b in zip(ticks, user_system_ticks(hub.pid))]
        total = sum(r["n"] for r in rows)
        user_us, system_us = (t / CLK_TCK * 1e6 / total for t in ticks)
        if recorder:
            recorder.send_signal(signal.SIGINT)
            recorder.wait(timeout=args.timeout)
            started.remove(recorder)
            say("# perf record of the measured publishes: %s.%s-%d" % (args.perf, name, attempt))
        keys = (("rate", "", " deliveries/s"), ("p50", "p50", " ms"), ("p99", "p99", " ms"),
                ("renditions", "renditions", ""), ("renders", "renders", ""), ("encodes", "encodes", ""),
                ("cpu_us", "hub CPU", " µs/delivery"), ("loop_us", "loop", " µs"),
                ("control_us", "control plane", " µs"), ("generator_us", "generator", " µs"))
        spread_line("%s (run %d), %d publishes to %d clients" % (name, attempt, len(rows), args.clients), rows, keys)
        stream = total / (sum(r["last"] for r in rows) / 1e3)
        summary = {"scenario": name, "builds": len(distinct),
                   "targets": len({b.capabilities() for b in distinct.values()}), "renditions_expected": len(renditions),
                   "stream_rate": stream, "others": others_pct, "user_us": user_us, "system_us": system_us,
                   **{key: statistics.median(r[key] for r in rows) for key in (
                       "rate", "p50", "p99", "renditions", "renders", "encodes", "patches", "snapshots", "cpu_us",
                       "loop_us", "control_us", "generator_us", "bytes")}}
        say("%s (run %d) medians: %.0f deliveries/s (over the stream: %.0f), p50 %.1f ms, p99 %.1f ms; renditions "
            "%g, renders %g, encodes %g per publish; hub CPU %.2f µs/delivery (loop %.2f, control plane %.2f; over "
            "all the publishes: user %.2f, system %.2f); others %.0f%% CPU over the publishes" % (
                name, attempt, summary["rate"], stream, summary["p50"], summary["p99"], summary["renditions"],
                summary["renders"], summary["encodes"], summary["cpu_us"], summary["loop_us"], summary["control_us"],
                user_us, system_us, others_pct))
        return summary
    finally:
        if pool:
            pool.stop()
        problems = hub.problems()
        hub.stop()
        if problems:
            say("# NOTE: the hub logged errors: %s" % " | ".join(problems[:3]))


CLK_TCK = os.sysconf("SC_CLK_TCK")


def user_system_ticks(pid):
    """The process's user and system CPU time, in clock ticks (/proc/PID/stat)."""
    fields = open("/proc/%d/stat" % pid).read().rsplit(")", 1)[1].split()
    return int(fields[11]), int(fields[12])


def check(messages, n, version, hashes, group_of_client):
    """Every client got one patch at `version` with its rendition's hash."""
    problems = []
    got = {}
    for m in messages:
        got.setdefault(m[0], []).append(m)
    missing = n - len(got)
    if missing:
        problems.append("%d clients got nothing" % missing)
    wrong = [c for c, ms_ in got.items() if len(ms_) != 1 or ms_[0][2] != "patch" or ms_[0][4] != version
             or ms_[0][6] != hashes[group_of_client[c]]]
    if wrong:
        c = wrong[0]
        problems.append("%d clients got something else than one patch at v%d with their rendition's hash "
                        "(client %d: %s, expected %s)" % (len(wrong), version, c, got[c], hashes[group_of_client[c]]))
    return problems


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--clients", type=int, default=10000, help="clients (10,000; one generator process)")
    parser.add_argument("--publishes", type=int, default=20, help="measured publishes per scenario (20)")
    parser.add_argument("--only", choices=("same", "mix4", "realistic", "many"), action="append",
                        help="one scenario; repeat for more (default: all four)")
    parser.add_argument("--repeat", type=int, default=1, help="run the scenarios this many times, in turn (1)")
    parser.add_argument("--loops", type=int, default=1, help="hub event loops (1: the generator needs a core)")
    parser.add_argument("--minors", type=int, default=5,
                        help="realistic: app versions 4.0…4.<minors−1> and 5.0…5.<minors−1> per platform (5: 20 "
                             "versions over 2 platforms; `many` is 50)")
    parser.add_argument("--perf", metavar="PREFIX",
                        help="perf record -g the hub during each scenario's measured publishes, to PREFIX.<scenario>-<run>")
    parser.add_argument("--timeout", type=int, default=60, help="bound on every wait, seconds (60)")
    add_quiet_arguments(parser)
    args = parser.parse_args()
    args.failures = 0
    scenarios = args.only or ["same", "mix4", "realistic", "many"]
    if subprocess.run(["make", "-s", "-C", os.path.dirname(LOADGEN), "loadgen"], stdout=sys.stderr).returncode:
        raise SystemExit("could not build %s" % LOADGEN)
    if not os.access(PUSHHUB, os.X_OK):
        raise SystemExit("no pushhub binary at %s (swift build -c release, or PUSHHUB=...)" % PUSHHUB)
    with work_folder("bench-components-", args.keep) as work:
        say("# %s; load average %s; pushhub %s; --loops %d" % (
            time.strftime("%Y-%m-%d %H:%M:%S %Z"), " ".join("%.2f" % x for x in os.getloadavg()), PUSHHUB,
            args.loops))
        summaries = []
        try:
            for attempt in range(1, args.repeat + 1):
                for name in scenarios:
                    summaries.append(run_scenario(args, work, name, attempt))
        finally:
            say("# load average at the end %s" % " ".join("%.2f" % x for x in os.getloadavg()))
        say("summary (medians over each run's publishes):")
        say("  %-10s %6s %7s %10s %12s %12s %8s %8s %8s %8s %10s %12s %7s" % (
            "scenario", "builds", "targets", "renditions", "deliveries/s", "(stream)", "p99 ms", "renders", "encodes",
            "hub µs", "(loop/cp)", "(user/sys)", "others"))
        for s in summaries:
            say("  %-10s %6d %7d %10s %12.0f %12.0f %8.1f %8g %8g %8.2f %4.2f/%.2f %6.2f/%.2f %6.0f%%" % (
                s["scenario"], s["builds"], s["targets"], "%g (%d)" % (s["renditions"], s["renditions_expected"]), s["rate"],
                s["stream_rate"], s["p99"], s["renders"], s["encodes"], s["cpu_us"], s["loop_us"], s["control_us"],
                s["user_us"], s["system_us"], s["others"]))
        if args.failures:
            raise SystemExit("%d publishes had problems (above)" % args.failures)


if __name__ == "__main__":
    main()
