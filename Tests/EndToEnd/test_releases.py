"""Releases (DESIGN §15, issue 27): a new screen version reaches clients in stages and halts itself
on render errors. Real hubs, real signed-in clients: exposure is recomputed here from the
documented bucket, every tree a client holds is rebuilt with `jsonpatch` and its hash checked
with `rfc8785`, and every client that should be sent nothing is shown to have been sent nothing
(each answers a probe, and the probe's answer is the next thing it reads)."""
import hashlib
import json
import os
import signal
import threading
import time

import jsonpatch
import jwt
import pytest
import rfc8785
from websockets.sync.client import connect

from admin import call, publish
from conftest import Hub, drop_all
from test_fetch import fetch
from test_scale_out import SECRET, cluster, redis, shared_secrets  # noqa: F401 (cluster, redis: fixtures)

SCREEN = "app/home"
BASE = {"type": "screen", "children": [{"id": "title", "type": "text", "text": "Home"},
                                        {"id": "feed", "type": "list", "items": [1, 2, 3]}]}
CANDIDATE = {"type": "screen", "children": [{"id": "title", "type": "text", "text": "Home"},
                                             {"id": "carousel", "type": "carousel", "items": [1, 2, 3]}]}
SECOND = {"type": "screen", "children": [{"id": "title", "type": "text", "text": "Home, again"},
                                          {"id": "feed", "type": "list", "items": [1, 2, 3]}]}
QA_USER = "qa-tester"


def tree_hash(tree):
    return hashlib.sha256(rfc8785.dumps(tree)).hexdigest()


def bucket(release, unit, screen=SCREEN):
    """DESIGN §15: u64(SHA-256("release/{screen}/{id}/{unit}")) % 10000."""
    digest = hashlib.sha256(("release/%s/%s/%s" % (screen, release, unit)).encode()).digest()
    return int.from_bytes(digest[:8], "big") % 10000


def secret(hub):
    return open(os.path.join(hub.data, "data", "jwt.secret")).read().strip()


OPEN_APPS = []


@pytest.fixture(autouse=True)
def close_apps(hub_factory):
    """Closes every app a test opened before its hubs stop (`drop_all`)."""
    yield
    drop_all(OPEN_APPS)


class App:
    """One signed-in app subscribed to SCREEN: holds the tree it was sent, rebuilt from each
    snapshot and patch, and reports what it drew."""

    def __init__(self, hub, user, key=None, have=None, app_version=None):
        self.user = user
        # The sync client holds one unread message and reads nothing behind it, the hub's close
        # frame included: a close while an update is unread waits out close_timeout (10 s by default).
        self.ws = connect(hub.url + "/v1/connect", close_timeout=0.5)
        OPEN_APPS.append(self.ws)
        token = jwt.encode({"sub": user, "exp": int(time.time()) + 3600}, key or secret(hub), algorithm="HS256")
        hello = {"type": "hello", "protocol": 1, "device": "d-" + user, "token": token}
        if app_version:
            hello["app"] = {"platform": "ios", "version": app_version}
        self.ws.send(json.dumps(hello))
        welcome = json.loads(self.ws.recv(timeout=5))
        assert welcome["type"] == "welcome", welcome
        subscribe = {"type": "subscribe", "screen": SCREEN}
        if have:
            subscribe["have"] = have
            self.tree, self.version = have.pop("tree"), have["version"]
        self.ws.send(json.dumps(subscribe))
        self.take(json.loads(self.ws.recv(timeout=5)))

    def take(self, message):
        kind = message["type"]
        assert message["screen"] == SCREEN, message
        if kind == "snapshot":
            self.tree = message["tree"]
        elif kind == "patch":
            assert message["from"] == self.version, (message, self.version)
            self.tree = jsonpatch.apply_patch(self.tree, message["ops"])
        else:
            assert kind == "unchanged", message
        self.version = message["version"]
        assert tree_hash(self.tree) == message["hash"], (self.user, message)

    def updates(self, timeout=5):
        """Everything the hub sent since the last call, read up to the answer of a probe."""
        self.ws.send(json.dumps({"type": "unsubscribe", "screen": "no/such/screen"}))
        received = []
        while True:
            message = json.loads(self.ws.recv(timeout=timeout))
            if message.get("code") == "not_subscribed":
                return received
            self.take(message)
            received.append(message)

    def report(self, failed):
        if failed:
            self.ws.send(json.dumps({"type": "render_error", "screen": SCREEN, "version": self.version,
                                     "hash": tree_hash(self.tree), "component": "Carousel",
                                     "message": "Carousel needs items to be objects"}))
        else:
            self.ws.send(json.dumps({"type": "rendered", "screen": SCREEN, "version": self.version}))


def start_release(hub, body, status=201):
    code, answer = call(hub, "POST", "/v1/screens/%s/releases" % SCREEN, body)
    assert code == status, answer
    return answer


def release_path(release_id, action=""):
    return "/v1/screens/%s/releases/%s%s" % (SCREEN, release_id, "/" + action if action else "")


def wait_release(hub, release_id, done, timeout=10):
    deadline = time.time() + timeout
    while True:
        code, release = call(hub, "GET", release_path(release_id))
        assert code == 200, release
        if done(release):
            return release
        assert time.time() < deadline, release
        time.sleep(0.05)


def labelled_metric(hub, line_start):
    code, text = call(hub, "GET", "/metrics")
    assert code == 200
    for line in text.splitlines():
        if line.startswith(line_start + " "):
            return float(line.split()[-1])
    raise AssertionError("no metric line " + line_start)


def test_a_staged_rollout_exposes_the_bucket_rises_halts_by_itself_and_a_promote_reaches_everyone(hub_factory):
    hub = hub_factory()
    publish(hub, SCREEN, BASE)
    assert call(hub, "PUT", "/v1/cohorts/qa", {"users": [QA_USER]})[0] == 200
    users = ["u%03d" % i for i in range(299)] + [QA_USER]
    apps = [App(hub, user) for user in users]
    assert all(app.version == 1 and app.tree == BASE for app in apps)

    # The dry run counts what 10 % would expose among the connected subscribers.
    def expected(percent, release="r-2"):
        return {app.user for app in apps if app.user == QA_USER or bucket(release, app.user) < percent * 100}

    code, dry = call(hub, "POST", "/v1/screens/%s/releases?dry_run=true" % SCREEN,
                     {"tree": CANDIDATE, "qa_cohort": "qa", "percent": 10})
    assert code == 200 and dry["would_expose"] == len(expected(10)) and dry["subscribers"] == 300, dry
    assert all(app.updates() == [] for app in apps), "a dry run sent something"

    # The guard waits for every unit exposed at 30 % to report, so the numbers it judged are exact
    # (reports that reach the hub after a halt count nowhere).
    started = start_release(hub, {"tree": CANDIDATE, "qa_cohort": "qa", "percent": 10,
                                  "guard": {"max_error_rate": 0.1, "min_units": len(expected(30))},
                                  "message": "new carousel"})
    assert started["release"] == "r-2" and started["base_version"] == 1 and started["version"] == 2, started
    assert started["status"] == "rolling" and started["percent"] == 10 and started["hash"] == tree_hash(CANDIDATE)
    exposed = expected(10)
    assert QA_USER in exposed and bucket("r-2", QA_USER) >= 1000, "the QA user must be in by its cohort alone"
    assert started["sent"] == len(exposed)
    for app in apps:
        got = app.updates()
        if app.user in exposed:
            assert len(got) == 1 and app.version == 2 and app.tree == CANDIDATE, (app.user, got)
        else:
            assert got == [] and app.version == 1, (app.user, got)

    # Raising to 30 % exposes exactly the new bucket and sends the exposed nothing again.
    code, dry = call(hub, "POST", release_path("r-2", "percent") + "?dry_run=true", {"percent": 30})
    assert code == 200 and dry["would_expose"] == len(expected(30)), dry
    assert dry["newly_exposed"] == len(expected(30) - exposed), dry
    code, raised = call(hub, "POST", release_path("r-2", "percent"), {"percent": 30})
    assert code == 200 and raised["percent"] == 30 and raised["sent"] == len(expected(30) - exposed), raised
    for app in apps:
        got = app.updates()
        if app.user in expected(30) - exposed:
            assert len(got) == 1 and app.tree == CANDIDATE, (app.user, got)
        else:
            assert got == [], (app.user, got)
    exposed = expected(30)
    assert call(hub, "POST", release_path("r-2", "percent"), {"percent": 20})[1]["error"]["code"] == "percent_down"

    # While it rolls, a plain publish, a delete and a rollback are refused, naming it.
    for method, path, body in (("PUT", "/v1/screens/" + SCREEN, SECOND), ("DELETE", "/v1/screens/" + SCREEN, None),
                               ("POST", "/v1/screens/%s/rollback" % SCREEN, {})):
        code, answer = call(hub, method, path, body)
        assert code == 409 and answer["error"]["code"] == "release_rolling", answer
        assert answer["error"]["release"] == "r-2" and "r-2" in answer["error"]["message"]
    code, answer = call(hub, "POST", "/v1/screens/%s/releases" % SCREEN, {"tree": SECOND})
    assert code == 409 and answer["error"]["code"] == "release_rolling"

    release = wait_release(hub, "r-2", lambda r: r["health"]["exposed"] == len(exposed))
    assert release["health"]["reported"] == 0 and [s["action"] for s in release["steps"]] == ["start", "percent"]
    assert labelled_metric(hub, 'pushhub_release_exposed_units{screen="%s",release="r-2"}' % SCREEN) == len(exposed)

    # A fifth of the exposed fail to draw it: the guard halts the release by itself.
    exposed_apps = sorted((app for app in apps if app.user in exposed), key=lambda app: app.user)
    failing = {app.user for app in exposed_apps[::5]}
    for app in exposed_apps:
        app.report(app.user in failing)
    # Reports from clients never exposed, or for another version, count nowhere.
    outsider = next(app for app in apps if app.user not in exposed)
    outsider.ws.send(json.dumps({"type": "render_error", "screen": SCREEN, "version": 2}))
    exposed_apps[1].ws.send(json.dumps({"type": "render_error", "screen": SCREEN, "version": 1}))
    halted = wait_release(hub, "r-2", lambda r: r["status"] == "halted")
    assert halted["halt"]["by"] == "guard" and halted["revert_version"] == 3, halted
    assert halted["halt"]["errored"] == len(failing) and halted["halt"]["reported"] == len(exposed), halted
    assert halted["halt"]["exposed"] == len(exposed) and halted["halt"]["error_rate"] > 0.1
    assert "error rate" in halted["halt"]["reason"] and halted["steps"][-1]["actor"] == "guard"
    for app in apps:
        got = app.updates()
        if app.user in exposed:
            # A patch from the candidate, or the snapshot when that is smaller (DESIGN §4).
            assert len(got) == 1 and got[0].get("from", 2) == 2, (app.user, got)
            assert app.version == 3 and app.tree == BASE and got[0]["hash"] == tree_hash(BASE)
        else:
            assert got == [] and app.version == 1, (app.user, got)
    final = call(hub, "GET", release_path("r-2"))[1]
    assert final["health"]["errored"] == len(failing) and final["health"]["exposed"] == len(exposed), final
    assert final["health"]["errors_by_component"] == {"Carousel": len(failing)}
    assert final["health"]["recent_errors"][-1]["message"] == "Carousel needs items to be objects"
    assert labelled_metric(hub, 'pushhub_release_halts_total{reason="guard"}') == 1
    audit = call(hub, "GET", "/v1/audit")[1]["entries"]
    assert [e["path"] for e in audit if e["token"] == "guard"] == [release_path("r-2", "halt")]
    history = call(hub, "GET", "/v1/screens/%s/history" % SCREEN)[1]["versions"]
    assert [v["version"] for v in history] == [3, 2, 1] and history[0]["rollback_of"] == 1

    # A client that comes back holding the candidate gets the patch to the base tree.
    returning = App(hub, exposed_apps[0].user, have={"version": 2, "hash": tree_hash(CANDIDATE), "tree": CANDIDATE})
    assert returning.version == 3 and returning.tree == BASE
    returning.ws.close()
    hub.wait_for_connections(len(apps))

    # A second release, promoted, reaches everyone; those already on it get nothing new.
    second = start_release(hub, {"tree": SECOND, "percent": 50})
    assert second["release"] == "r-4" and second["base_version"] == 3
    on_second = {app.user for app in apps if bucket("r-4", app.user) < 5000}
    for app in apps:
        app.updates()
    code, promoted = call(hub, "POST", release_path("r-4", "promote"))
    assert code == 200 and promoted["status"] == "promoted", promoted
    assert promoted["sent"] == len(apps) - len(on_second)
    for app in apps:
        got = app.updates()
        assert app.version == 4 and app.tree == SECOND, app.user
        assert (got == []) == (app.user in on_second), (app.user, got)
    assert publish(hub, SCREEN, BASE)["version"] == 5, "a plain publish is taken again once it ended"
    listed = call(hub, "GET", "/v1/screens/%s/releases" % SCREEN)[1]["releases"]
    assert [(r["release"], r["status"]) for r in listed] == [("r-4", "promoted"), ("r-2", "halted")]


def test_an_operators_halt_sends_the_exposed_back_and_nobody_else_anything(hub_factory):
    hub = hub_factory()
    publish(hub, SCREEN, BASE)
    apps = [App(hub, "v%02d" % i) for i in range(40)]
    start_release(hub, {"tree": CANDIDATE, "percent": 50})
    exposed = {app.user for app in apps if bucket("r-2", app.user) < 5000}
    for app in apps:
        app.updates()
    # The HTTP fetch and the admin API's view of a user answer what the socket sends that user.
    assert {app.tree == CANDIDATE for app in apps[:6]} == {True, False}, "both kinds of client are asked"
    for app in apps[:6]:
        token = jwt.encode({"sub": app.user, "exp": int(time.time()) + 60}, secret(hub), algorithm="HS256")
        status, _, body = fetch(hub, "/v1/screens/" + SCREEN, {"Authorization": "Bearer " + token})
        assert status == 200 and json.loads(body)["tree"] == app.tree, app.user
        assert call(hub, "GET", "/v1/screens/%s?user=%s" % (SCREEN, app.user))[1]["tree"] == app.tree
    code, answer = call(hub, "POST", release_path("r-2", "halt"), {})
    assert code == 400 and "reason" in answer["error"]["message"]
    code, halted = call(hub, "POST", release_path("r-2", "halt"), {"reason": "design said no"})
    assert code == 200 and halted["status"] == "halted" and halted["halt"]["reason"] == "design said no"
    assert halted["halt"]["by"] != "guard" and halted["sent"] == len(exposed)
    for app in apps:
        got = app.updates()
        assert (len(got) == 1) == (app.user in exposed) and app.tree == BASE, (app.user, got)
    for action, body in (("percent", {"percent": 90}), ("promote", None), ("halt", {"reason": "again"})):
        code, answer = call(hub, "POST", release_path("r-2", action), body)
        assert code == 409 and answer["error"]["code"] == "release_not_rolling", answer
    assert labelled_metric(hub, 'pushhub_release_halts_total{reason="manual"}') == 1
    assert call(hub, "GET", release_path("r-9"))[0] == 404


def test_a_rollout_survives_kill_9_at_its_percent_with_its_counts(hub_factory):
    hub = hub_factory()
    publish(hub, SCREEN, BASE)
    start_release(hub, {"tree": CANDIDATE, "percent": 25, "guard": {"max_error_rate": 0.5, "min_units": 5}})
    apps = [App(hub, "k%02d" % i) for i in range(60)]
    exposed = [app for app in apps if bucket("r-2", app.user) < 2500]
    assert exposed and all(app.tree == CANDIDATE for app in exposed)
    for app in exposed:
        app.report(failed=False)
    wait_release(hub, "r-2", lambda r: r["health"]["rendered"] == len(exposed))
    hub.process.send_signal(signal.SIGKILL)
    hub.process.wait()

    again = hub_factory(data=hub.data)
    release = wait_release(again, "r-2", lambda r: True)
    assert release["status"] == "rolling" and release["percent"] == 25, release
    assert release["health"]["exposed"] == len(exposed) and release["health"]["rendered"] == len(exposed)
    for app in [App(again, "k%02d" % i) for i in range(60)]:
        assert app.tree == (CANDIDATE if bucket("r-2", app.user) < 2500 else BASE), app.user
    assert call(again, "PUT", "/v1/screens/" + SCREEN, SECOND)[0] == 409


def test_render_error_is_checked_and_screen_names_keep_the_release_paths_unambiguous(hub):
    publish(hub, SCREEN, BASE)
    app = App(hub, "checker", key=secret(hub))
    for message, fault in (({"screen": SCREEN}, "version"), ({"version": 1}, "screen"),
                           ({"screen": SCREEN, "version": 1, "message": "x" * 1001}, "1000"),
                           ({"screen": SCREEN, "version": 1, "component": 7}, "component")):
        app.ws.send(json.dumps({"type": "render_error", **message}))
        error = json.loads(app.ws.recv(timeout=5))
        assert error["type"] == "error" and error["code"] == "bad_render_error" and fault in error["message"], error
    for name in ("home/releases", "home/releases/r-1", "home/diff"):
        app.ws.send(json.dumps({"type": "subscribe", "screen": name}))
        error = json.loads(app.ws.recv(timeout=5))
        assert error["code"] == "invalid_screen_name", (name, error)
    # The screen named "releases" and one with the word inside a segment are fine.
    for name in ("releases", "home/releases-2"):
        assert publish(hub, name, BASE)["version"] == 1
    assert call(hub, "GET", "/v1/screens/home%2Freleases")[0] == 404  # the releases of "home": no such screen
    code, answer = call(hub, "POST", "/v1/screens/%s/releases" % SCREEN, {"tree": BASE})
    assert code == 422 and answer["error"]["code"] == "same_as_base"
    code, answer = call(hub, "POST", "/v1/screens/none/releases", {"tree": BASE})
    assert code == 404
    for body, code_name in (({"tree": CANDIDATE, "percent": 101}, "bad_percent"),
                            ({"tree": CANDIDATE, "guard": {"max_error_rate": 2}}, "bad_guard"),
                            ({"tree": CANDIDATE, "guard": {"min": 3}}, "bad_guard"),
                            ({"percent": 5}, "bad_request")):
        code, answer = call(hub, "POST", "/v1/screens/%s/releases" % SCREEN, body)
        assert code == 400 and answer["error"]["code"] == code_name, (body, answer)


def test_three_hubs_judge_reports_from_all_of_them_and_halt_once(cluster):
    hubs = cluster(3)
    publish(hubs[0], SCREEN, BASE)
    # The guard waits for all 90 units, a third on each hub, so the numbers it judged are exact.
    start_release(hubs[0], {"tree": CANDIDATE, "percent": 100, "guard": {"max_error_rate": 0.2, "min_units": 90}})
    apps = [App(hubs[i % 3], "c%03d" % i, key=SECRET) for i in range(90)]
    assert all(app.tree == CANDIDATE for app in apps)
    # Every hub counts the units served on all three.
    for hub in hubs:
        wait_release(hub, "r-2", lambda r: r["health"]["exposed"] == len(apps), timeout=15)
        gauge = 'pushhub_release_exposed_units{screen="%s",release="r-2"}' % SCREEN
        assert labelled_metric(hub, gauge) == len(apps)
    # Half fail, on every hub.
    failing = {app.user for i, app in enumerate(apps) if i % 2 == 0}
    for app in apps:
        app.report(failed=app.user in failing)
    for hub in hubs:
        halted = wait_release(hub, "r-2", lambda r: r["status"] == "halted", timeout=15)
        assert (halted["halt"]["reported"], halted["halt"]["errored"]) == (len(apps), len(failing)), halted["halt"]
    for hub in hubs:
        health = wait_release(hub, "r-2", lambda r: r["health"]["reported"] == len(apps))["health"]
        assert (health["exposed"], health["rendered"], health["errored"]) == (
            len(apps), len(apps) - len(failing), len(failing)), health
    for app in apps:
        app.updates()
        assert app.version == 3 and app.tree == BASE, app.user
    time.sleep(1.5)  # every hub has read the whole results stream and judged it
    for hub in hubs:
        release = call(hub, "GET", release_path("r-2"))[1]
        assert [s["action"] for s in release["steps"]].count("halt") == 1, release
        assert call(hub, "GET", "/v1/screens/%s/history" % SCREEN)[1]["versions"][0]["version"] == 3
    halts = sum(labelled_metric(hub, 'pushhub_release_halts_total{reason="guard"}') for hub in hubs)
    assert halts == 1
    audited = sum(1 for hub in hubs for e in call(hub, "GET", "/v1/audit")[1]["entries"] if e["token"] == "guard")
    assert audited == 1


def test_clients_that_reconnect_while_a_release_starts_rises_and_halts_end_with_what_their_bucket_says(hub_factory):
    """A subscribe (with `have`) and a release's change race on the loops: whichever comes first,
    each client ends holding what its bucket says, its versions never go back, and every tree it
    rebuilds hashes to what the hub says (docs/architecture.md "Order of events")."""
    hub = hub_factory("--loops", "2")
    publish(hub, SCREEN, BASE)
    key = secret(hub)
    held, problems, stop = {}, [], threading.Event()

    def client(index):
        user = "race-%02d" % index
        state = None
        final = False
        while not final:
            # One more round once the changes are done: the state a client ends with.
            final = stop.is_set()
            try:
                have = dict(state, hash=tree_hash(state["tree"])) if state else None
                app = App(hub, user, key=key, have=have)
                if state and app.version < state["version"]:
                    problems.append((user, "went back", state["version"], app.version))
                for _ in range(3):
                    app.updates()
                state = {"version": app.version, "tree": app.tree}
                app.ws.close()
            except Exception as error:  # noqa: BLE001 (a failure is reported by the main thread)
                problems.append((user, repr(error)))
                return
        held[user] = state

    def while_clients_reconnect(fire):
        """Runs `fire` while 16 clients reconnect in a loop; returns what each ends holding."""
        held.clear()
        stop.clear()
        threads = [threading.Thread(target=client, args=(i,)) for i in range(16)]
        for thread in threads:
            thread.start()
        time.sleep(0.3)
        fire()
        time.sleep(0.3)
        stop.set()
        for thread in threads:
            thread.join(20)
        assert not problems, problems
        return dict(held)

    def start_and_raise():
        start_release(hub, {"tree": CANDIDATE, "percent": 5})
        for percent in (20, 40, 60):
            time.sleep(0.2)
            assert call(hub, "POST", release_path("r-2", "percent"), {"percent": percent})[0] == 200

    for user, state in while_clients_reconnect(start_and_raise).items():
        expected = CANDIDATE if bucket("r-2", user) < 6000 else BASE
        assert state["tree"] == expected, (user, state)

    def halt():
        assert call(hub, "POST", release_path("r-2", "halt"), {"reason": "race"})[0] == 200

    for user, state in while_clients_reconnect(halt).items():
        assert state["tree"] == BASE and state["version"] in ((3,) if bucket("r-2", user) < 6000 else (1, 3)), (
            user, state)


def test_a_unit_once_exposed_keeps_the_candidate_and_one_that_sees_no_change_is_neither_sent_nor_counted(hub_factory):
    """Leaving the QA cohort does not take a client back (versions never go back), and a client
    whose app version does not get the changed component is not sent the candidate, nor counted
    as exposed, whether it subscribed before the release or after."""
    gated = {"id": "promo", "type": "text", "text": "old", "min_app_version": "6.0.0"}
    base = {"type": "screen", "children": [{"id": "title", "type": "text", "text": "Home"}, gated]}
    candidate = {"type": "screen", "children": [{"id": "title", "type": "text", "text": "Home"}, dict(gated, text="new")]}
    hub = hub_factory()
    publish(hub, SCREEN, base)
    assert call(hub, "PUT", "/v1/cohorts/qa", {"users": ["tester"]})[0] == 200
    assert bucket("r-2", "tester") >= 100, "the tester is exposed by the cohort alone"
    tester = App(hub, "tester", app_version="6.1.0")
    before = App(hub, "old-before", app_version="5.0.0")
    start_release(hub, {"tree": candidate, "qa_cohort": "qa", "percent": 0})
    assert len(tester.updates()) == 1 and tester.version == 2
    assert before.updates() == [] and before.version == 1
    assert call(hub, "POST", "/v1/cohorts/qa/users", {"remove": ["tester"]})[0] == 200
    assert call(hub, "POST", release_path("r-2", "percent"), {"percent": 1})[0] == 200
    assert tester.updates() == [] and tester.version == 2, "a client never goes back to the base"
    again = App(hub, "tester", app_version="6.1.0", have={"version": 2, "hash": tree_hash(tester.tree),
                                                           "tree": tester.tree})
    assert again.version == 2 and again.tree == tester.tree

    assert call(hub, "POST", release_path("r-2", "percent"), {"percent": 100})[0] == 200
    assert before.updates() == [] and before.version == 1
    after = App(hub, "old-after", app_version="5.0.0")
    assert after.version == 1, "a candidate it sees as the base is not served"
    current = App(hub, "new-after", app_version="6.0.0")
    assert current.version == 2
    release = wait_release(hub, "r-2", lambda r: r["health"]["exposed"] >= 2)
    time.sleep(0.2)
    release = call(hub, "GET", release_path("r-2"))[1]
    assert release["health"]["exposed"] == 2, release["health"]  # tester and new-after
