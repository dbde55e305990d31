"""The Grafana dashboard (deploy/grafana/pushhub.json) and the Prometheus rules
(deploy/prometheus/pushhub-rules.yml) watch what the hub really exports (issue 32).

A real Prometheus (Debian's `prometheus` package, `make prometheus-tools`; the tests fail saying
so when it is missing, they do not skip) scrapes a standalone hub (with push providers, a JWKS, a
webhook and a rolling release, so every labelled family has series) and a hub scaled out over a
real redis-server, with a read-only token as docs/monitoring.md sets it up, and loads the rules:
every metric named by a dashboard query, a variable query or a rule has series on a live hub
(a histogram's `_bucket`/`_sum`/`_count` are its series; recording-rule names stand for what they
record; `up` is Prometheus's own), every dashboard query runs on that Prometheus without an error, every rule evaluates
without one and none fires on healthy hubs. Prometheus also scrapes itself, another job with the same
`process_*` metrics: the dashboard's process panels and "Hubs up" (whose `$job` "All" matches every
job) must show the two hubs only, with their version, ready, not draining, and not restarted. Without a hub: the dashboard is the JSON Grafana
imports (unique panel ids, a grid that does not overlap, every query on the `${DS_PROMETHEUS}`
input), promtool passes the rules and their unit tests, and every alert has its annotations, a
unit test where it fires and a runbook section in docs/monitoring.md."""
import json
import os
import re
import shutil
import subprocess
import tempfile
import time
import urllib.error
import urllib.parse
import urllib.request

from admin import call
from conftest import BIN, ROOT, terminate
from jwks_server import JWKSServer, SigningKey
from push_provider import PushProvider
from redis_server import RedisServer, free_port
from test_docs import headings
import test_deploy

DASHBOARD = os.path.join(ROOT, "deploy", "grafana", "pushhub.json")
RULES = os.path.join(ROOT, "deploy", "prometheus", "pushhub-rules.yml")
RULE_TESTS = os.path.join(ROOT, "deploy", "prometheus", "pushhub-rules.test.yml")
MONITORING = os.path.join(ROOT, "docs", "monitoring.md")
DATASOURCE = {"type": "prometheus", "uid": "${DS_PROMETHEUS}"}
#: Grafana's own variables a query may use, and what they stand for when the test runs it.
GRAFANA_VARIABLES = {"__rate_interval": "1m", "__interval": "15s", "__range": "1h"}
#: Words of PromQL that are not metric names (functions and aggregations are followed by "(").
PROMQL_WORDS = {"by", "without", "on", "ignoring", "group_left", "group_right", "bool", "and", "or", "unless",
                "offset", "atan2", "inf", "nan"}

#: What the issue asks the dashboard to show, by a metric each panel group must use.
HEADLINES = {
    "connections per hub": "pushhub_websocket_connections", "subscriptions": "pushhub_subscriptions",
    "deliveries": "pushhub_messages_out_total", "bytes out": "pushhub_bytes_out_total",
    "patches": "pushhub_patches_encoded_total", "snapshots": "pushhub_snapshots_encoded_total",
    "coalesced": "pushhub_coalesced_total", "slow-consumer closes": "pushhub_slow_consumer_closes_total",
    "syncs delivered": "pushhub_syncs_delivered_total", "syncs acked": "pushhub_syncs_acked_total",
    "release halts": "pushhub_release_halts_total", "release health": "pushhub_release_errored_units",
    "loop lag": "pushhub_loop_lag_seconds", "fsync": "pushhub_commits_total",
    "group commit": "pushhub_committed_records_total", "TLS": "pushhub_tls_handshakes_total",
    "Redis link": "pushhub_redis_up", "memory": "pushhub_memory_trimmed_bytes_total",
    "webhooks": "pushhub_webhook_queue", "push": "pushhub_push_provider_up",
    "resident memory": "process_resident_memory_bytes", "CPU": "process_cpu_seconds_total",
    "descriptors": "process_open_fds", "descriptor limit": "process_max_fds",
    "uptime and restarts": "process_start_time_seconds", "versions running": "pushhub_build_info",
    "ready": "pushhub_ready", "draining": "pushhub_draining",
}
#: The alerts the issue and the lead name.
REQUIRED_ALERTS = {"PushHubDown", "PushHubLoopLag", "PushHubRedisUnreachable", "PushHubSlowConsumerClosesRising",
                   "PushHubPersistFailures", "PushHubReleaseHalted", "PushHubNotReady", "PushHubDescriptorsNearLimit",
                   "PushHubRestarting"}


def tool(name):
    path = test_deploy.tool(name)
    assert path, "%s is not installed: `make prometheus-tools` installs it (Debian's prometheus)" % name
    return path


def dashboard():
    with open(DASHBOARD) as file:
        return json.load(file)


def panels(board):
    """Every panel, those inside collapsed rows too."""
    for panel in board["panels"]:
        yield panel
        yield from panel.get("panels", [])


def dashboard_queries(board):
    """(panel title, expr) of every panel query."""
    return [(panel["title"], target["expr"]) for panel in panels(board) for target in panel.get("targets", [])]


def variable_selectors(board):
    """The series selector of each `label_values(SELECTOR, label)` variable query."""
    selectors = []
    for variable in board["templating"]["list"]:
        query = variable["query"]["query"] if isinstance(variable["query"], dict) else variable["query"]
        match = re.fullmatch(r"label_values\((.*),\s*(\w+)\)", query.strip())
        assert match, "variable %s: not a label_values query: %s" % (variable["name"], query)
        selectors.append(match.group(1))
    return selectors


def grafana_free(expr):
    """The expr as Prometheus runs it: `$job`-style variables match anything."""
    for name, value in GRAFANA_VARIABLES.items():
        expr = expr.replace("$" + name, value).replace("${%s}" % name, value)
    return re.sub(r"\$\{?\w+\}?", ".*", expr)


def metric_names(expr):
    """The metric names an expression selects (a PromQL tokenizer, enough for ours: strings,
    label matchers, ranges and grouping clauses removed; words before "(" are functions)."""
    expr = re.sub(r'"(?:[^"\\]|\\.)*"|\'(?:[^\'\\]|\\.)*\'', '""', expr)
    expr = re.sub(r"\{[^}]*\}", " ", expr)
    expr = re.sub(r"\[[^\]]*\]", " ", expr)
    expr = re.sub(r"\b(?:by|without|on|ignoring|group_left|group_right)\s*\([^)]*\)", " ", expr)
    expr = re.sub(r"\$\{?\w+\}?", " ", expr)
    names = set()
    for match in re.finditer(r"(?<![\w:.])([a-zA-Z_:][\w:]*)(\s*\()?", expr):
        if not match.group(2) and match.group(1).lower() not in PROMQL_WORDS:
            names.add(match.group(1))
    return names


def test_metric_names_reads_promql():
    assert metric_names('sum by (instance) (rate(pushhub_bytes_out_total{job=~"$job"}[$__rate_interval]))') == {
        "pushhub_bytes_out_total"}
    assert metric_names('histogram_quantile(0.95, sum by (le) (rate(a_bucket{x="y"}[5m]))) / 1e9 > bool 0.5') == {
        "a_bucket"}
    assert metric_names("a and on (job) b offset 5m unless c:rec:mean5m") == {"a", "b", "c:rec:mean5m"}
    assert metric_names('up{job=~"pushhub.*"} == 0') == {"up"}


def rule_texts():
    """(kind, name, block of text) per rule of the rules file, in order."""
    text = open(RULES).read()
    starts = [(m.start(), m.group(1), m.group(2)) for m in re.finditer(r"^\s*- (alert|record): (\S+)$", text, re.M)]
    ends = [start for start, _, _ in starts[1:]] + [len(text)]
    return [(kind, name, text[start:end]) for (start, kind, name), end in zip(starts, ends)]


def test_the_dashboard_is_a_grafana_dashboard():
    board = dashboard()
    assert board["uid"] == "pushhub" and board["title"] and board["schemaVersion"] >= 36
    assert board["id"] is None, "an exported dashboard has no database id"
    inputs = {entry["name"]: entry for entry in board["__inputs"]}
    assert inputs["DS_PROMETHEUS"]["type"] == "datasource" and inputs["DS_PROMETHEUS"]["pluginId"] == "prometheus"
    required = {(entry["type"], entry["id"]) for entry in board["__requires"]}
    assert ("datasource", "prometheus") in required and ("grafana", "grafana") in required
    for kind in {panel["type"] for panel in panels(board)} - {"row"}:
        assert ("panel", kind) in required, "panel type %s is not in __requires" % kind

    variables = {variable["name"]: variable for variable in board["templating"]["list"]}
    assert {"job", "instance"} <= set(variables)
    for variable in variables.values():
        assert variable["type"] == "query" and variable["datasource"] == DATASOURCE
    ids, cells = set(), {}
    for panel in panels(board):
        assert isinstance(panel["id"], int) and panel["id"] not in ids, "panel id %r twice" % panel["id"]
        ids.add(panel["id"])
        grid = panel["gridPos"]
        assert all(isinstance(grid[key], int) for key in ("h", "w", "x", "y")), panel["title"]
        assert grid["w"] > 0 and grid["h"] > 0 and grid["x"] >= 0 and grid["x"] + grid["w"] <= 24, panel["title"]
        for x in range(grid["x"], grid["x"] + grid["w"]):
            for y in range(grid["y"], grid["y"] + grid["h"]):
                assert (x, y) not in cells, "%r overlaps %r" % (panel["title"], cells.get((x, y)))
                cells[(x, y)] = panel["title"]
        if panel["type"] == "row":
            continue
        assert panel["title"] and panel.get("description"), "panel %d has no title or description" % panel["id"]
        assert panel["datasource"] == DATASOURCE, panel["title"]
        assert panel["targets"], panel["title"]
        refs = [target["refId"] for target in panel["targets"]]
        assert len(refs) == len(set(refs)), panel["title"]
        for target in panel["targets"]:
            assert target["datasource"] == DATASOURCE and target["expr"].strip(), panel["title"]
            for name in re.findall(r"\$\{?(\w+)\}?", target["expr"]):
                assert name in variables or name in GRAFANA_VARIABLES, "%s: unknown variable $%s" % (panel["title"],
                                                                                                    name)
            if "pushhub_" in target["expr"]:
                assert re.search(r'job=~"\$job",instance=~"\$instance"', target["expr"]), (
                    "%s: a query not filtered by $job and $instance: %s" % (panel["title"], target["expr"]))

    used = set().union(*(metric_names(expr) for _, expr in dashboard_queries(board)))
    missing = {headline: name for headline, name in HEADLINES.items() if name not in used}
    assert not missing, "the dashboard does not show: %s" % missing


def test_promtool_passes_the_rules_and_their_unit_tests():
    promtool = tool("promtool")
    checked = subprocess.run([promtool, "check", "rules", RULES], capture_output=True, text=True, timeout=60)
    assert checked.returncode == 0, checked.stdout + checked.stderr
    assert "SUCCESS: %d rules found" % len(rule_texts()) in checked.stdout, checked.stdout
    tested = subprocess.run([promtool, "test", "rules", RULE_TESTS], capture_output=True, text=True, timeout=60)
    assert tested.returncode == 0 and "SUCCESS" in tested.stdout, tested.stdout + tested.stderr


def test_every_alert_is_explained_tested_and_has_a_runbook():
    anchors = headings(MONITORING)
    tests = open(RULE_TESTS).read()
    # The alerts a test expects to fire (an alert_rule_test whose exp_alerts is not empty).
    fired = set(re.findall(r"alertname: (\w+)\n\s+exp_alerts:\n\s+- exp_labels", tests))
    alerts = [(name, text) for kind, name, text in rule_texts() if kind == "alert"]
    assert REQUIRED_ALERTS <= {name for name, _ in alerts}
    for name, text in alerts:
        assert re.search(r"^\s+severity: (critical|warning)$", text, re.M), name
        assert re.search(r"^\s+summary: ", text, re.M) and re.search(r"^\s+description: ", text, re.M), name
        runbook = re.search(r'^\s+runbook_url: "docs/monitoring\.md#([\w-]+)"$', text, re.M)
        assert runbook, "%s has no runbook_url into docs/monitoring.md" % name
        assert runbook.group(1) == name.lower() and runbook.group(1) in anchors, (
            "%s: docs/monitoring.md has no section #%s" % (name, runbook.group(1)))
        assert name in fired, "%s: no unit test in pushhub-rules.test.yml makes it fire" % name


class Prometheus:
    """A real prometheus server on a free loopback port, scraping every second; `SELF` in the
    config is its own address."""

    def __init__(self, config):
        self.directory = tempfile.mkdtemp(prefix="pushhub-prometheus-")
        self.port = free_port()
        config_path = os.path.join(self.directory, "prometheus.yml")
        with open(config_path, "w") as file:
            file.write(config.replace("SELF", "127.0.0.1:%d" % self.port))
        self.log_path = os.path.join(self.directory, "prometheus.log")
        self.process = subprocess.Popen(
            [tool("prometheus"), "--config.file", config_path, "--storage.tsdb.path",
             os.path.join(self.directory, "data"), "--web.listen-address", "127.0.0.1:%d" % self.port],
            stdout=subprocess.DEVNULL, stderr=open(self.log_path, "w"))
        self.wait(lambda: self.get("/-/ready", raw=True), "ready")

    def log(self):
        return open(self.log_path).read()[-3000:]

    def get(self, path, raw=False, **query):
        url = "http://127.0.0.1:%d%s" % (self.port, path)
        if query:
            url += "?" + urllib.parse.urlencode(query)
        try:
            with urllib.request.urlopen(url, timeout=10) as response:
                body = response.read()
        except urllib.error.HTTPError as error:
            body = error.read()
        except OSError:
            return None
        return body if raw else json.loads(body)

    def query(self, expr):
        return self.get("/api/v1/query", query=expr)

    def wait(self, condition, what, timeout=30):
        deadline = time.time() + timeout
        while time.time() < deadline:
            assert self.process.poll() is None, "prometheus exited:\n" + self.log()
            result = condition()
            if result:
                return result
            time.sleep(0.2)
        raise AssertionError("prometheus: not %s within %d s\n%s" % (what, timeout, self.log()))

    def stop(self):
        terminate(self.process)
        shutil.rmtree(self.directory, ignore_errors=True)


def exported(hub):
    """Names of the series a hub's /metrics exports (a family with no series, such as the
    rolling releases' gauges when none rolls, does not count: the hubs here have them all)."""
    status, text = call(hub, "GET", "/metrics")
    assert status == 200, text
    return set(re.findall(r"^([a-zA-Z_:][\w:]*)[ {]", text, re.M))


def test_everything_the_dashboard_and_rules_query_exists_on_live_hubs(hub_factory):
    board = dashboard()
    redis = RedisServer()
    identity = JWKSServer([SigningKey("p256", "e1")])
    provider = PushProvider()
    prometheus = None
    try:
        # Every labelled family with series: push providers, a JWKS, a webhook (to a port nobody
        # listens on) and a rolling release on the standalone hub; the Redis link on the other.
        standalone = hub_factory("--jwt-jwks", identity.url, *provider.hub_flags())
        scaled = hub_factory("--redis", redis.url)
        status, answer = call(standalone, "PUT", "/v1/webhooks/audit",
                              {"url": "http://127.0.0.1:%d/hook" % free_port(), "events": ["*"]})
        assert status in (200, 201), answer
        status, answer = call(standalone, "PUT", "/v1/screens/home", {"type": "screen", "children": []})
        assert status == 200, answer
        status, answer = call(standalone, "POST", "/v1/screens/home/releases", {
            "tree": {"type": "screen", "children": [{"id": "title", "type": "text", "text": "Hi"}]}, "percent": 10})
        assert status == 201, answer
        deadline = time.time() + 10
        while "pushhub_jwks_keys" not in exported(standalone) and time.time() < deadline:
            time.sleep(0.1)  # the first JWKS fetch
        names = exported(standalone) | exported(scaled)

        # Prometheus scrapes each hub's admin listener with a read-only token, as
        # docs/monitoring.md sets it up; both job names start with "pushhub" (PushHubDown's match).
        jobs = []
        for job, hub in (("pushhub", standalone), ("pushhub-scaled", scaled)):
            status, answer = call(hub, "POST", "/v1/tokens", {"name": "prometheus", "scopes": ["read"]})
            assert status in (200, 201), answer
            token_file = os.path.join(hub.data, "prometheus.token")
            with open(token_file, "w") as file:
                file.write(answer["token"] + "\n")
            jobs.append("  - job_name: %s\n    metrics_path: /metrics\n    authorization:\n"
                        "      credentials_file: %s\n    static_configs:\n      - targets: ['127.0.0.1:%d']\n"
                        % (job, token_file, hub.admin_port))
        # And Prometheus itself: another job with process_* metrics, which no hub panel may show.
        jobs.append("  - job_name: prometheus\n    static_configs:\n      - targets: ['SELF']\n")
        prometheus = Prometheus("global:\n  scrape_interval: 1s\n  evaluation_interval: 1s\n"
                                "rule_files:\n  - %s\nscrape_configs:\n%s" % (RULES, "".join(jobs)))
        # Two scrapes of each hub, so rate() has what it needs.
        prometheus.wait(lambda: len([sample for sample in prometheus.query("up == 1")["data"]["result"]]) == 3,
                        "scraping both hubs and itself")
        prometheus.wait(lambda: len(prometheus.query("count_over_time(pushhub_connections[1m]) >= 3")["data"]["result"])
                        == 2, "three scrapes of each hub")

        # The rules as Prometheus read them: every one evaluated, without an error.
        def evaluated():
            rules = [rule for group in prometheus.get("/api/v1/rules")["data"]["groups"] for rule in group["rules"]]
            return rules if all(not rule["lastEvaluation"].startswith("0001") for rule in rules) else None

        rules = prometheus.wait(evaluated, "evaluating every rule")
        assert sorted(rule["name"] for rule in rules) == sorted(name for _, name, _ in rule_texts())
        for rule in rules:
            assert rule["health"] == "ok", "%s: %s" % (rule["name"], rule.get("lastError"))
        firing = [alert for alert in prometheus.get("/api/v1/alerts")["data"]["alerts"] if alert["state"] == "firing"]
        assert not firing, "alerts fire on healthy hubs: %s" % firing

        # Every metric queried is exported (recording rules stand for what they record).
        recorded = {rule["name"]: metric_names(rule["query"]) for rule in rules if rule["type"] == "recording"}
        queries = [("rule " + rule["name"], rule["query"]) for rule in rules]
        queries += dashboard_queries(board)
        queries += [("variable", selector) for selector in variable_selectors(board)]
        unknown = {}
        for where, expr in queries:
            for name in metric_names(expr):
                for resolved in recorded.get(name, {name}):
                    if resolved != "up" and resolved not in names:
                        unknown.setdefault(resolved, []).append(where)
        assert not unknown, "queried, not exported by a live hub: %s" % unknown

        # Every dashboard query runs (as Grafana sends it, its variables meaning "all").
        for title, expr in dashboard_queries(board) + [("variable", s) for s in variable_selectors(board)]:
            answer = prometheus.query(grafana_free(expr))
            assert answer["status"] == "success", "%s: %s: %s" % (title, expr, answer.get("error"))
        # The variables list both jobs, and the overview counts both hubs up.
        jobs_seen = prometheus.query('count by (job) (%s)' % grafana_free(variable_selectors(board)[0]))
        assert {sample["metric"]["job"] for sample in jobs_seen["data"]["result"]} == {"pushhub", "pushhub-scaled"}
        hubs_up = [expr for title, expr in dashboard_queries(board) if title == "Hubs up"][0]
        assert prometheus.query(grafana_free(hubs_up))["data"]["result"][0]["value"][1] == "2"
        redis_up = prometheus.query("pushhub_redis_up")["data"]["result"]
        assert [(sample["metric"]["job"], sample["value"][1]) for sample in redis_up] == [("pushhub-scaled", "1")]

        # The Hubs row and the process panels: the two hubs, not Prometheus's own process.
        hubs = {"127.0.0.1:%d" % hub.admin_port for hub in (standalone, scaled)}
        version = subprocess.run([os.path.join(BIN, "pushhub"), "--version"], capture_output=True, text=True,
                                 timeout=30).stdout.split()[1]

        def shown(title):
            """{(instance, legend-free labels): value} of every query of the panel titled `title`."""
            results = {}
            for name, expr in dashboard_queries(board):
                if name == title:
                    answer = prometheus.query(grafana_free(expr))
                    for sample in answer["data"]["result"]:
                        results.setdefault(sample["metric"]["instance"], []).append(
                            (sample["metric"], float(sample["value"][1])))
            assert set(results) == hubs, "%s shows %s, not the hubs %s" % (title, sorted(results), sorted(hubs))
            return results

        for title in ("Resident memory per hub", "Memory per connection", "CPU per hub", "Uptime per hub",
                      "Restarts in the last hour", "Descriptors in use and limit", "Ready and draining per hub",
                      "Versions running"):
            shown(title)
        for samples in shown("Versions running").values():
            assert [metric["version"] for metric, _ in samples] == [version], samples
        for samples in shown("Ready and draining per hub").values():
            assert sorted((metric["__name__"], value) for metric, value in samples) == [
                ("pushhub_draining", 0), ("pushhub_ready", 1)], samples
        for samples in shown("Uptime per hub").values():
            assert 0 < samples[0][1] < 600, samples
        for samples in shown("Restarts in the last hour").values():
            assert samples[0][1] == 0, samples
        for samples in shown("Descriptors in use and limit").values():
            open_fds, max_fds = sorted(value for _, value in samples)
            assert 0 < open_fds < max_fds, samples
        for samples in shown("Memory per connection").values():
            assert 1 << 20 < samples[0][1] < 1 << 32, samples  # RSS (MiBs) over a few connections
    finally:
        if prometheus:
            prometheus.stop()
        provider.close()
        identity.stop()
        redis.stop()
