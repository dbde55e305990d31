"""Experiment results an experimenter can trust (DESIGN §6 "Goals and results", issue 26): real
clients are served variants, confirm them and `track` goals; the hub's results equal a
recomputation from the clients' own records, with the statistics from scipy and statsmodels;
they survive a restart, cover every hub over Redis, and the sample-ratio check fires on a
skewed split and not on a fair one."""
import json
import math
import time

import pytest
from scipy import stats
from statsmodels.stats.proportion import confint_proportions_2indep, proportion_confint
from statsmodels.stats.weightstats import CompareMeans, DescrStatsW
from websockets.sync.client import connect

from admin import call, publish
from conftest import Hub
from test_scale_out import cluster, redis, shared_secrets  # noqa: F401 (cluster, redis: fixtures)

SCREEN = "shop/home"
BASE = {"type": "screen", "children": [{"id": "title", "type": "text", "text": "Shop"},
                                        {"id": "cta", "type": "button", "text": "Buy"}]}


def definition(**extra):
    body = {"key": "checkout", "salt": "s1", "status": "running",
            "variants": [{"key": "A", "weight": 1}, {"key": "B", "weight": 1}],
            "screens": {SCREEN: {"B": {"+title": "new"}}}}
    body.update(extra)
    return body


class Device:
    """One app: connects, subscribes, and remembers what it was served and what it reported."""

    def __init__(self, hub, name):
        self.name = name
        self.ws = connect(hub.url + "/v1/connect")
        self.ws.send(json.dumps({"type": "hello", "protocol": 1, "device": name}))
        assert json.loads(self.ws.recv(timeout=5))["type"] == "welcome"
        self.variant = None
        self.confirmed = False
        self.purchases = []

    def subscribe(self):
        self.ws.send(json.dumps({"type": "subscribe", "screen": SCREEN}))
        snapshot = json.loads(self.ws.recv(timeout=5))
        assert snapshot["type"] == "snapshot", snapshot
        self.variant = snapshot.get("variants", {}).get("checkout")
        self.version = snapshot["version"]

    def rendered(self):
        self.ws.send(json.dumps({"type": "rendered", "screen": SCREEN, "version": self.version}))
        self.confirmed = True

    def track(self, value=None, counts=True):
        message = {"type": "track", "event": "purchase"}
        if value is not None:
            message["value"] = value
        self.ws.send(json.dumps(message))
        if counts:
            self.purchases.append(value or 0)

    def settle(self):
        """Returns once the hub's loop handled everything sent before (it answers in order)."""
        self.ws.send(json.dumps({"type": "unsubscribe", "screen": "no/such/screen"}))
        assert json.loads(self.ws.recv(timeout=5))["code"] == "not_subscribed"


def expected_results(devices, weights):
    """The results recomputed from the devices' records, statistics by scipy and statsmodels."""
    z = stats.norm.ppf(0.975)
    variants = list(weights)
    served = {v: [d for d in devices if d.variant == v] for v in variants}
    rows = {v: {"served": len(served[v]), "confirmed": sum(d.confirmed for d in served[v])} for v in variants}
    observed = [rows[v]["served"] for v in variants]
    total = sum(observed)
    chi = stats.chisquare(observed, [total * weights[v] / sum(weights.values()) for v in variants])
    goal = {}
    values = {v: [sum(d.purchases) for d in served[v]] for v in variants}
    units = {v: sum(1 for d in served[v] if d.purchases) for v in variants}
    for v in variants:
        n = len(served[v])
        low, high = proportion_confint(units[v], n, alpha=0.05, method="wilson")
        described = DescrStatsW(values[v])
        row = {"units": units[v], "rate": units[v] / n, "rate_ci": [low, high],
               "value_mean": described.mean, "value_ci": list(described.zconfint_mean(alpha=0.05))}
        if v == variants[0]:
            row.update(diff_rate=None, diff_rate_ci=None, diff_value=None, diff_value_ci=None)
        else:
            control = variants[0]
            row["diff_rate"] = units[v] / n - units[control] / len(served[control])
            row["diff_rate_ci"] = list(confint_proportions_2indep(
                units[v], n, units[control], len(served[control]), method="wald", compare="diff"))
            compared = CompareMeans(DescrStatsW(values[v]), DescrStatsW(values[control]))
            row["diff_value"] = described.mean - DescrStatsW(values[control]).mean
            row["diff_value_ci"] = list(compared.zconfint_diff(alpha=0.05, usevar="unequal"))
        goal[v] = row
    assert abs(z - 1.959963984540054) < 1e-12
    return rows, (chi.statistic, chi.pvalue), goal


def assert_close(got, want, what):
    if want is None:
        assert got is None, (what, got)
    elif isinstance(want, list):
        assert got is not None and len(got) == len(want), (what, got, want)
        for g, w in zip(got, want):
            assert_close(g, w, what)
    else:
        assert got is not None and math.isclose(got, want, rel_tol=1e-9, abs_tol=1e-12), (what, got, want)


def check(report, devices, weights):
    rows, (chi_square, p_value), goal = expected_results(devices, weights)
    assert {v["variant"]: {"served": v["served"], "confirmed": v["confirmed"]} for v in report["variants"]} == rows
    assert_close(report["srm"]["chi_square"], chi_square, "chi_square")
    assert_close(report["srm"]["p_value"], p_value, "p_value")
    assert report["srm"]["mismatch"] == (p_value < 0.001)
    [purchase] = [g for g in report["goals"] if g["event"] == "purchase"]
    for row in purchase["variants"]:
        want = goal[row["variant"]]
        assert row["units"] == want["units"]
        for field in ("rate", "rate_ci", "value_mean", "value_ci", "diff_rate", "diff_rate_ci", "diff_value",
                      "diff_value_ci"):
            assert_close(row[field], want[field], (row["variant"], field))


def results_when(hub, condition, timeout=5.0):
    """The results once `condition(report)` holds (events reach the tally within milliseconds)."""
    deadline = time.time() + timeout
    while True:
        status, report = call(hub, "GET", "/v1/experiments/checkout/results")
        assert status == 200, report
        if condition(report) or time.time() > deadline:
            return report
        time.sleep(0.05)


def served_total(expected):
    return lambda report: sum(v["served"] for v in report["variants"]) == expected


def run_shop(hubs, count):
    """`count` devices spread over `hubs`: all subscribe; most confirm; a third of B's units buy
    (some twice), and a few of A's; one buys before it is served (that purchase does not count),
    one never subscribes (none of it counts)."""
    devices = []
    for n in range(count):
        device = Device(hubs[n % len(hubs)], "dev-%d" % n)
        if n == 0:
            device.track(99.0, counts=False)  # before exposure: counts nowhere
            device.settle()
        device.subscribe()
        if n % 5:
            device.rendered()
        devices.append(device)
    outsider = Device(hubs[0], "never-served")
    outsider.track(5.0, counts=False)
    for index, device in enumerate(d for d in devices if d.variant == "B"):
        if index % 3 == 0:
            device.track(10.0 + index % 7)
            if index % 2 == 0:
                device.track(2.5)
    for index, device in enumerate(d for d in devices if d.variant == "A"):
        if index % 10 == 0:
            device.track(None)
    for device in devices + [outsider]:
        device.settle()
    return devices, outsider


def test_results_equal_a_recomputation_and_survive_a_restart():
    hub = Hub("--dev")
    publish(hub, SCREEN, BASE)
    status, answer = call(hub, "PUT", "/v1/experiments/checkout", definition())
    assert status == 200, answer
    devices, outsider = run_shop([hub], 200)
    report = results_when(hub, served_total(200))
    assert report["kept"] == "data-dir" and report["salt"] == "s1" and report["control"] == "A"
    assert isinstance(report["since"], (int, float)) and report["since"] <= time.time() * 1000
    report = results_when(hub, lambda r: r == report and r["goals"])  # settled
    check(report, devices, {"A": 1, "B": 1})
    # A fair split does not trip the sample-ratio check.
    assert report["srm"]["mismatch"] is False
    for device in devices + [outsider]:
        device.ws.close()
    # A restart (every deploy) keeps every number.
    assert hub.stop() == 0
    again = Hub("--dev", data=hub.data)
    try:
        assert call(again, "GET", "/v1/experiments/checkout/results")[1] == report
    finally:
        again.process.kill()


def test_two_hubs_over_redis_each_answer_the_sum(cluster):  # noqa: F811
    first, second = cluster(2)
    publish(first, SCREEN, BASE)
    assert call(first, "PUT", "/v1/experiments/checkout", definition())[0] == 200
    deadline = time.time() + 10  # the definition reaches the second hub
    while call(second, "GET", "/v1/experiments/checkout")[0] != 200 and time.time() < deadline:
        time.sleep(0.05)
    devices, outsider = run_shop([first, second], 120)
    assert {d.variant for d in devices} == {"A", "B"}
    one = results_when(first, lambda r: served_total(120)(r) and r["goals"], timeout=10)
    other = results_when(second, lambda r: r == one, timeout=10)
    assert one["kept"] == "redis"
    assert other == one, "either hub answers the results of both"
    check(one, devices, {"A": 1, "B": 1})
    for device in devices + [outsider]:
        device.ws.close()
    # A restarted hub reads the whole results stream back.
    assert second.stop() == 0
    third = Hub("--allow-anonymous", "--redis", redis_url_of(first), data=shared_secrets())
    try:
        assert results_when(third, lambda r: r == one, timeout=10) == one
    finally:
        third.process.kill()


def redis_url_of(hub):
    """The --redis URL `hub` was started with."""
    arguments = hub.process.args
    return arguments[arguments.index("--redis") + 1]


def test_the_sample_ratio_check_fires_on_a_skewed_override_set(hub_factory):
    hub = hub_factory("--dev")
    publish(hub, SCREEN, BASE)
    skewed = {"dev-%d" % n: "B" for n in range(0, 120, 2)}  # half the units forced into B
    assert call(hub, "PUT", "/v1/experiments/checkout", definition(overrides=skewed))[0] == 200
    devices = []
    for n in range(120):
        device = Device(hub, "dev-%d" % n)
        device.subscribe()
        device.settle()
        devices.append(device)
    report = results_when(hub, served_total(120))
    served = {v["variant"]: v["served"] for v in report["variants"]}
    assert served["B"] > 80, served
    assert report["srm"]["mismatch"] is True and report["srm"]["p_value"] < 0.001
    _, (chi_square, p_value), _ = expected_results(devices, {"A": 1, "B": 1})
    assert_close(report["srm"]["p_value"], p_value, "p_value")
    for device in devices:
        device.ws.close()


def test_an_overridden_unit_counts_once_in_its_variant(hub_factory):
    hub = hub_factory("--dev")
    publish(hub, SCREEN, BASE)
    assert call(hub, "PUT", "/v1/experiments/checkout", definition())[0] == 200
    device = Device(hub, "dev-7")
    device.subscribe()
    device.rendered()
    device.track(3.0)
    device.settle()
    first = device.variant
    other = "A" if first == "B" else "B"
    report = results_when(hub, lambda r: r["goals"])
    assert {v["variant"]: v["served"] for v in report["variants"]} == {first: 1, other: 0}
    # hubctl's way: one override, the rest of the definition untouched.
    status, answer = call(hub, "POST", "/v1/experiments/checkout/overrides", {"unit": "dev-7", "variant": other})
    assert status == 200 and answer["unit"] == "dev-7" and answer["variant"] == other, answer
    message = json.loads(device.ws.recv(timeout=5))
    assert message["variants"] == {"checkout": other}, message
    report = results_when(hub, lambda r: {v["variant"]: v["served"] for v in r["variants"]} == {first: 0, other: 1})
    counts = {v["variant"]: (v["served"], v["confirmed"]) for v in report["variants"]}
    assert counts == {first: (0, 0), other: (1, 0)}, "moved whole: its confirmation and purchase stayed behind"
    [purchase] = report["goals"]
    assert {row["variant"]: row["units"] for row in purchase["variants"]} == {first: 0, other: 0}
    device.ws.close()


def test_track_is_checked_and_bad_ones_get_an_error(hub_factory):
    hub = hub_factory("--dev")
    ws = connect(hub.url + "/v1/connect")
    ws.send(json.dumps({"type": "hello", "protocol": 1, "device": "d1"}))
    assert json.loads(ws.recv(timeout=5))["type"] == "welcome"
    for bad in ({"type": "track"}, {"type": "track", "event": ""}, {"type": "track", "event": "x" * 65},
                {"type": "track", "event": "buy now"}, {"type": "track", "event": "buy", "value": "12"},
                {"type": "track", "event": "buy", "value": [1]}):
        ws.send(json.dumps(bad))
        answer = json.loads(ws.recv(timeout=5))
        assert answer["type"] == "error" and answer["code"] == "bad_track" and answer["ref"] == "track", (bad, answer)
    ws.send(json.dumps({"type": "track", "event": "buy", "value": 1e13}))  # beyond 1e12: a mistake
    answer = json.loads(ws.recv(timeout=5))
    assert answer["code"] == "bad_track" and "1e12" in answer["message"], answer
    ws.send(json.dumps({"type": "track", "event": "purchase.done:v2-x_y", "value": -1e12}))
    ws.send(json.dumps({"type": "unsubscribe", "screen": "x"}))
    assert json.loads(ws.recv(timeout=5))["code"] == "not_subscribed", "a good track gets no answer"
    ws.close()


def test_amendments_name_what_they_change_and_if_match_refuses_a_stale_definition(hub_factory):
    hub = hub_factory("--dev")
    assert call(hub, "PUT", "/v1/experiments/checkout", definition(traffic=1))[0] == 200
    import urllib.request
    request = urllib.request.Request("http://127.0.0.1:%d/v1/experiments/checkout" % hub.admin_port,
                                     headers={"Authorization": "Bearer " + hub.token})
    with urllib.request.urlopen(request, timeout=5) as response:
        etag = response.headers["ETag"]
        loaded = json.load(response)
    assert etag.startswith('"') and len(etag) == 18
    # The ramp (a named amendment) changes the definition: the form loaded before it is stale.
    status, answer = call(hub, "POST", "/v1/experiments/checkout/traffic", {"traffic": 0.3})
    assert status == 200 and answer["etag"] != etag.strip('"'), answer
    loaded["overrides"] = {"u1": "B"}
    status, answer = put_if_match(hub, loaded, etag)
    assert status == 412 and answer["error"]["code"] == "stale_definition", answer
    assert call(hub, "GET", "/v1/experiments/checkout")[1]["traffic"] == 0.3
    # An override through its own route keeps the ramp.
    status, answer = call(hub, "POST", "/v1/experiments/checkout/overrides", {"unit": "u1", "variant": "B"})
    assert status == 200, answer
    stored = call(hub, "GET", "/v1/experiments/checkout")[1]
    assert stored["traffic"] == 0.3 and stored["overrides"] == {"u1": "B"}
    assert call(hub, "POST", "/v1/experiments/checkout/overrides", {"unit": "u1", "variant": "Z"})[0] == 422
    status, answer = call(hub, "POST", "/v1/experiments/checkout/overrides", {"unit": "u1", "variant": None})
    assert status == 200 and answer["variant"] is None, answer
    stored = call(hub, "GET", "/v1/experiments/checkout")[1]
    assert stored["overrides"] == {}
    # With the current ETag the write goes through; `*` needs the experiment to exist.
    status, answer = put_if_match(hub, dict(stored, status="stopped"), '"%s"' % answer["etag"])
    assert status == 200, answer
    assert put_if_match(hub, definition(key="ghost"), "*", key="ghost")[0] == 412
    # A create must not replace an experiment made meanwhile.
    status, answer = put_if_match(hub, definition(), None, key="checkout", if_none_match="*")
    assert status == 412 and "exists already" in answer["error"]["message"], answer
    assert put_if_match(hub, definition(key="fresh"), None, key="fresh", if_none_match="*")[0] == 200


def put_if_match(hub, body, etag, key="checkout", if_none_match=None):
    import urllib.error
    import urllib.request
    headers = {"Authorization": "Bearer " + hub.token}
    if etag is not None:
        headers["If-Match"] = etag
    if if_none_match is not None:
        headers["If-None-Match"] = if_none_match
    request = urllib.request.Request("http://127.0.0.1:%d/v1/experiments/%s" % (hub.admin_port, key),
                                     data=json.dumps(body).encode(), method="PUT", headers=headers)
    try:
        with urllib.request.urlopen(request, timeout=5) as response:
            return response.status, json.load(response)
    except urllib.error.HTTPError as error:
        return error.code, json.load(error)


def test_extreme_values_keep_the_results_finite(hub_factory):
    """Values at the bound, from units on both sides, leave every number finite (a sum of
    unbounded values could overflow and make the results unanswerable)."""
    hub = hub_factory("--dev")
    publish(hub, SCREEN, BASE)
    assert call(hub, "PUT", "/v1/experiments/checkout", definition())[0] == 200
    devices = []
    for n in range(6):
        device = Device(hub, "edge-%d" % n)
        device.subscribe()
        device.track(1e12 if n % 2 else -1e12)
        device.track(1e12 if n % 2 else -1e12)
        device.settle()
        devices.append(device)
    report = results_when(hub, lambda r: r["goals"] and served_total(6)(r))
    check(report, devices, {"A": 1, "B": 1})
    for device in devices:
        device.ws.close()


def test_the_fetch_etag_names_the_variants_so_a_change_of_variants_is_not_a_304(hub_factory):
    """A control unit's tree does not change when the experiment stops, its variants do: the
    fetch must not answer 304 to the ETag it gave while the unit was in the experiment."""
    import hashlib
    import urllib.error
    import urllib.request
    import rfc8785
    hub = hub_factory("--dev")
    publish(hub, SCREEN, BASE)
    assert call(hub, "PUT", "/v1/experiments/checkout", definition())[0] == 200
    unit = next("f-%d" % n for n in range(1000) if
                call(hub, "GET", "/v1/experiments/checkout/assignment?unit=f-%d" % n)[1]["variant"] == "A")

    def fetch(tag=None):
        request = urllib.request.Request("http://127.0.0.1:%d/v1/screens/%s?device=%s" % (hub.port, SCREEN, unit),
                                         headers={"If-None-Match": tag} if tag else {})
        try:
            with urllib.request.urlopen(request, timeout=5) as response:
                return response.status, response.headers["ETag"], json.load(response)
        except urllib.error.HTTPError as error:
            return error.code, error.headers["ETag"], None

    status, tag, body = fetch()
    assert status == 200 and body["variants"] == {"checkout": "A"}
    variants_digest = hashlib.sha256(rfc8785.dumps(body["variants"])).hexdigest()[:16]
    assert tag == '"%s.%s"' % (body["hash"], variants_digest), "the documented formula"
    assert fetch(tag)[0] == 304
    assert fetch('"%s"' % body["hash"])[0] == 200, "the bare hash is another client's ETag"
    assert call(hub, "POST", "/v1/experiments/checkout/status", {"status": "stopped"})[0] == 200
    status, new_tag, body = fetch(tag)
    assert status == 200 and "variants" not in body and new_tag == '"%s"' % body["hash"], (status, new_tag, body)
