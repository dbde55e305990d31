"""Webhooks against the real thing (issue 31, DESIGN §18): real hubs on loopback deliver to a local
receiver (webhook_receiver.py) that verifies every request's signature with the documented recipe
and checks it against the contract of the request. A receiver that answers 500 twice sees the same
event again and then takes it; each screen's events arrive in version order under a burst of
publishes, through retries; `kill -9` while events are being retried loses none of them; three
hubs over a real redis-server deliver each event once (and another hub takes over when the one
delivering dies); a full queue drops its oldest events and counts them; the test endpoint sends
one event at once and says what the receiver answered; the deliveries listing shows pending
events first, in queue order, then the most recent finished; every event type is sent with its
data; a webhook's secret is shown once and kept on replace; and bad PUTs are refused naming the
field."""
import json
import re
import threading

import pytest

from admin import call, metric, publish
from release_clients import Device, wait
from test_scale_out import shared_secrets
from redis_server import RedisServer, free_port
from webhook_receiver import WebhookReceiver

SECRET = "whsec_e2e_test_secret_0123456789"
TREE = {"type": "screen", "children": []}


def tree(version_text):
    return {"type": "screen", "children": [{"id": "t", "type": "text", "text": version_text}]}


def put_webhook(hub, receiver, name="w", events=("*",), secret=SECRET):
    body = {"url": receiver.url, "events": list(events)}
    if secret is not None:
        body["secret"] = secret
    status, answer = call(hub, "PUT", "/v1/webhooks/" + name, body)
    assert status in (200, 201), answer  # 201: created
    return answer


def deliveries(hub, name="w", limit=None):
    status, answer = call(hub, "GET", "/v1/webhooks/%s/deliveries%s" % (name, "?limit=%d" % limit if limit else ""))
    assert status == 200, answer
    return answer["deliveries"]


def webhook(hub, name="w"):
    status, answer = call(hub, "GET", "/v1/webhooks/" + name)
    assert status == 200, answer
    return answer


def samples(hub, metric):
    """{labels dict as a sorted tuple: value} of one labelled metric family from /metrics."""
    status, text = call(hub, "GET", "/metrics")
    assert status == 200, text
    found = {}
    for line in text.splitlines():
        match = re.match(r"^%s\{(.*)\} (\S+)$" % re.escape(metric), line)
        if match:
            labels = tuple(sorted(re.findall(r'(\w+)="([^"]*)"', match.group(1))))
            found[labels] = float(match.group(2))
    return found


def events_total(hub, outcome, name="w"):
    return samples(hub, "pushhub_webhook_events_total").get((("outcome", outcome), ("webhook", name)), 0)


@pytest.fixture
def receiver():
    receiver = WebhookReceiver(SECRET)
    yield receiver
    receiver.close()
    assert receiver.problems() == [], "requests that broke the contract: %r" % receiver.problems()


@pytest.fixture
def hub(hub_factory):
    return hub_factory("--dev")


def test_a_receiver_that_fails_twice_gets_the_same_event_again_and_then_takes_it(hub, receiver):
    put_webhook(hub, receiver)
    receiver.script(500, 500)
    published = publish(hub, "home", tree("v1"))
    receiver.wait_for(lambda r: r.delivered(subject="screen:home"), what="the third attempt taken")
    attempts = receiver.recorded(subject="screen:home")
    assert [a.status for a in attempts] == [500, 500, 200], attempts
    assert len({a.id for a in attempts}) == 1 and attempts[0].headers["pushhub-delivery"] == attempts[0].id
    assert len({a.body for a in attempts}) == 1, "a retry sent other bytes"
    assert [a.signed_at for a in attempts] == sorted(a.signed_at for a in attempts)
    event = attempts[0]
    assert event.type == "screen.published" and event.subject == "screen:home"
    assert event.data["screen"] == "home" and event.data["version"] == published["version"]
    assert event.data["hash"] == published["hash"]
    assert abs(event.event_time / 1000 - attempts[0].time) < 5

    # The outcome is journaled after the receiver's answer: wait for it, then read the listing.
    wait("the delivery journaled", lambda: webhook(hub)["queued"] == 0)
    [listed] = [d for d in deliveries(hub) if d["id"] == event.id]
    assert (listed["state"], listed["attempts"], listed["last_status"]) == ("delivered", 3, 200), listed
    assert listed["next_attempt_at"] is None and listed["delivered_at"] >= event.event_time
    state = webhook(hub)
    assert (state["queued"], state["delivered"], state["failed"], state["dropped"]) == (0, 1, 0, 0), state
    assert state["last_status"] == 200 and "secret" not in state
    assert events_total(hub, "retried") == 2 and events_total(hub, "delivered") == 1


def test_each_screens_events_arrive_in_version_order_under_a_burst_of_publishes(hub, receiver):
    put_webhook(hub, receiver, events=["screen.published"])
    # Failures sprinkled over the burst: each one holds back its screen's later versions.
    receiver.script(*([200, 500, 200, 200, 503, 200, 500] * 6))
    count = 25
    answers = {"a": [], "b": []}

    def burst(screen):
        for i in range(count):
            answers[screen].append(publish(hub, screen, tree("%s %d" % (screen, i))))

    threads = [threading.Thread(target=burst, args=(screen,)) for screen in answers]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    for screen in answers:
        receiver.wait_for(lambda r: len(r.delivered(subject="screen:" + screen)) == count, timeout=60,
                          what="%d versions of %s delivered" % (count, screen))
    for screen, published in answers.items():
        attempts = receiver.recorded(subject="screen:" + screen)
        versions = [a.data["version"] for a in attempts]
        assert versions == sorted(versions), "%s out of order: %s" % (screen, versions)
        delivered = receiver.delivered(subject="screen:" + screen)
        assert [d.data["version"] for d in delivered] == [p["version"] for p in published]
        assert [d.data["hash"] for d in delivered] == [p["hash"] for p in published]
        # Each version was tried again only until it was taken: no event is sent after its successor.
        for earlier, later in zip(delivered, delivered[1:]):
            assert all(a.time <= later.time for a in attempts if a.id == earlier.id)


def test_kill_9_while_events_are_retried_loses_none_of_them(hub_factory, receiver):
    hub = hub_factory("--dev")
    put_webhook(hub, receiver, events=["screen.published", "sync.created"])
    receiver.default = 500
    published = [publish(hub, "home", tree("v%d" % i)) for i in range(8)]
    syncs = []
    for i in range(4):
        status, sync = call(hub, "POST", "/v1/syncs", {"target": {"all": True}, "reason": "r%d" % i})
        assert status == 200, sync
        syncs.append(sync["id"])
    receiver.wait_for(lambda r: len(r.recorded(subject="screen:home")) >= 2, what="home's first event retried")
    pending = deliveries(hub, limit=1000)
    assert len(pending) == 12 and {d["state"] for d in pending} == {"pending"}, pending
    hub.process.kill()  # SIGKILL: no shutdown path runs
    hub.process.wait()
    seen_before = {d.id for d in receiver.recorded()}

    restarted = hub_factory("--dev", data=hub.data)
    # Listed before the receiver takes them: every event is still there, in its place.
    assert [d["id"] for d in deliveries(restarted, limit=1000)][:12] == [d["id"] for d in pending]
    receiver.default = 200
    receiver.wait_for(lambda r: len({d.id for d in r.delivered()}) == 12, timeout=90, what="all 12 events delivered")
    delivered = receiver.delivered()
    assert {d.id for d in delivered} == {d["id"] for d in pending} and seen_before <= {d.id for d in delivered}
    assert [d.data["version"] for d in receiver.delivered(subject="screen:home")] == [p["version"] for p in published]
    assert sorted(d.data["id"] for d in receiver.delivered(type="sync.created")) == sorted(syncs)
    # The last outcome is journaled just after the receiver answered it.
    wait("the queue empty", lambda: webhook(restarted)["queued"] == 0)


@pytest.fixture
def redis():
    server = RedisServer()
    yield server
    server.stop()


def test_three_hubs_over_redis_deliver_each_event_once_and_another_takes_over(hub_factory, redis, receiver):
    # Right after the hubs start, while each still learns of the others: one deliverer already
    # (the Redis lease), so no event goes out twice.
    hubs = [hub_factory("--dev", "--redis", redis.url, data=shared_secrets()) for _ in range(3)]
    put_webhook(hubs[0], receiver)
    for hub in hubs:
        wait("the webhook on every hub", lambda: call(hub, "GET", "/v1/webhooks/w")[0] == 200)
    expected = 0
    for round_ in range(4):
        for i, hub in enumerate(hubs):
            publish(hub, "s%d" % i, tree("round %d" % round_))
            expected += 1
    for hub in hubs:
        assert call(hub, "POST", "/v1/syncs", {"target": {"all": True}, "reason": "scale"})[0] == 200
        expected += 1
    receiver.wait_for(lambda r: len(r.delivered()) >= expected, timeout=60, what="%d events" % expected)
    ids = [d.id for d in receiver.delivered()]
    assert len(ids) == len(set(ids)) == expected, "an event was delivered twice: %s" % ids
    # What each hub sent (its own count): one hub sent them all, once each. The queues' counters
    # come from the shared journal, so every hub reports the cluster's figure.
    # An attempt is counted when its answer is in, just after the receiver recorded it.
    counts = wait("every attempt counted", lambda: (lambda c: c if sum(c) >= expected else None)(
        [metric(hub, "pushhub_webhook_attempts_total") for hub in hubs]))
    assert sorted(counts) == [0, 0, expected], counts
    for hub in hubs:
        wait("the cluster's count on every hub", lambda: events_total(hub, "delivered") == expected)
    for i in range(3):
        versions = [d.data["version"] for d in receiver.delivered(subject="screen:s%d" % i)]
        assert versions == sorted(versions) and len(versions) == 4

    # The delivering hub dies with events pending: another one delivers them, each once.
    delivering = hubs[counts.index(expected)]
    receiver.default = 500
    for i in range(3):
        publish(delivering, "s%d" % i, tree("after"))
    receiver.wait_for(lambda r: len(r.recorded()) > expected, what="an attempt of the new events")
    delivering.process.kill()
    delivering.process.wait()
    receiver.default = 200
    receiver.wait_for(lambda r: len({d.id for d in r.delivered()}) == expected + 3, timeout=90,
                      what="the new events delivered by another hub")
    survivors = [hub for hub in hubs if hub is not delivering]
    assert sum(metric(hub, "pushhub_webhook_attempts_total") for hub in survivors) >= 3
    ids = [d.id for d in receiver.delivered()]
    assert len(ids) == len(set(ids)), "an event was delivered twice: %s" % ids


def test_a_full_queue_drops_its_oldest_events_and_counts_them(hub_factory, receiver):
    hub = hub_factory("--dev", "--webhook-queue", "5")
    put_webhook(hub, receiver, events=["screen.published"])
    receiver.default = 500
    for i in range(20):
        publish(hub, "s%02d" % i, TREE)
    state = wait("15 dropped", lambda: (lambda s: s if s["dropped"] == 15 else None)(webhook(hub)))
    assert state["queued"] == 5, state
    assert events_total(hub, "dropped") == 15
    assert samples(hub, "pushhub_webhook_queue")[(("webhook", "w"),)] == 5
    listed = deliveries(hub, limit=1000)
    assert [d["subject"] for d in listed if d["state"] == "pending"] == ["screen:s%02d" % i for i in range(15, 20)]
    assert {d["subject"] for d in listed if d["state"] == "dropped"} <= {"screen:s%02d" % i for i in range(15)}
    receiver.default = 200
    newest = {"screen:s%02d" % i for i in range(15, 20)}
    receiver.wait_for(lambda r: newest <= {d.subject for d in r.delivered()}, what="the 5 newest delivered")
    # An attempt already on its way when its event was dropped may still land (the receiver then
    # has it); the hub counts as delivered only what its queue held.
    wait("the 5 counted", lambda: webhook(hub)["delivered"] == 5)
    assert webhook(hub)["dropped"] == 15 and webhook(hub)["queued"] == 0


def test_the_test_endpoint_sends_one_event_now_and_says_what_the_receiver_answered(hub, receiver):
    put_webhook(hub, receiver, events=["sync.created"])
    status, answer = call(hub, "POST", "/v1/webhooks/w/test")
    assert status == 200, answer
    assert answer["status"] == 200 and answer["error"] is None and answer["duration_ms"] >= 0, answer
    [sent] = receiver.recorded(type="webhook.test")
    assert sent.id == answer["id"] and sent.data == {"webhook": "w"} and sent.verified

    receiver.script(500)
    status, answer = call(hub, "POST", "/v1/webhooks/w/test")
    assert status == 200 and answer["status"] == 500, answer
    assert answer["error"].startswith("the receiver answered 500"), answer
    # Not queued, not retried: the listing never shows test events, nothing waits.
    assert all(d["type"] != "webhook.test" for d in deliveries(hub)) and webhook(hub)["queued"] == 0

    closed = free_port()
    put = call(hub, "PUT", "/v1/webhooks/nobody", {"url": "http://127.0.0.1:%d/x" % closed, "events": ["*"]})
    assert put[0] == 201, put
    status, answer = call(hub, "POST", "/v1/webhooks/nobody/test")
    assert status == 200 and answer["status"] is None and answer["error"], answer
    assert call(hub, "POST", "/v1/webhooks/missing/test")[0] == 404
    assert len(receiver.recorded(type="webhook.test")) == 2


def test_deliveries_list_pending_events_in_queue_order_then_the_most_recent_finished(hub, receiver):
    put_webhook(hub, receiver, events=["screen.published"])
    for text in ("a1", "a2"):
        publish(hub, "a", tree(text))
    receiver.wait_for(lambda r: len(r.delivered()) == 2, what="a's two versions")
    wait("a's outcomes journaled", lambda: webhook(hub)["queued"] == 0)
    receiver.default = 500
    for text in ("h1", "h2", "h3"):
        publish(hub, "home", tree(text))
    receiver.wait_for(lambda r: r.recorded(subject="screen:home"), what="home's first attempt")
    listed = wait("home's first attempt listed", lambda: (lambda l: l if l[0]["attempts"] >= 1 else None)(deliveries(hub)))
    assert [(d["subject"], d["state"]) for d in listed] == [
        ("screen:home", "pending")] * 3 + [("screen:a", "delivered")] * 2, listed
    home = [d for d in listed if d["subject"] == "screen:home"]
    assert [d["attempts"] for d in home] == [home[0]["attempts"], 0, 0] and home[0]["last_status"] == 500
    assert home[0]["next_attempt_at"] and all(d["delivered_at"] is None for d in home)
    finished = listed[3:]
    assert finished[0]["delivered_at"] >= finished[1]["delivered_at"], "the most recent finished first"
    assert all(d["next_attempt_at"] is None and d["attempts"] == 1 and d["last_status"] == 200 for d in finished)
    assert [d["id"] for d in deliveries(hub, limit=2)] == [d["id"] for d in listed[:2]]
    for bad in ("0", "1001", "x", "-1"):
        status, answer = call(hub, "GET", "/v1/webhooks/w/deliveries?limit=" + bad)
        assert status == 400 and "limit" in answer["error"]["message"], (bad, answer)
    assert call(hub, "GET", "/v1/webhooks/nope/deliveries")[0] == 404


def test_every_event_type_reaches_the_webhooks_that_want_it_with_its_data(hub, receiver):
    put_webhook(hub, receiver)
    only_syncs = WebhookReceiver(SECRET)
    try:
        put_webhook(hub, only_syncs, name="syncs", events=["sync.created"])
        base = publish(hub, "home", tree("base"))
        status, release = call(hub, "POST", "/v1/screens/home/releases", {"tree": tree("candidate"), "percent": 10})
        assert status == 201, release
        assert call(hub, "POST", "/v1/screens/home/releases/%s/percent" % release["release"], {"percent": 50})[0] == 200
        device = Device(hub, "d-webhooks")
        try:
            device.render_error("Carousel", "no such component")
            device.render_error("Carousel", "no such component")
        finally:
            device.close()
        halt = call(hub, "POST", "/v1/screens/home/releases/%s/halt" % release["release"], {"reason": "too many errors"})
        assert halt[0] == 200, halt
        status, sync = call(hub, "POST", "/v1/syncs", {"target": {"all": True}, "reason": "hotfix", "scope": "bundle"})
        assert status == 200, sync
        experiment = {"key": "exp", "salt": "s", "status": "running",
                      "variants": [{"key": "A", "weight": 1}, {"key": "B", "weight": 1}]}
        assert call(hub, "PUT", "/v1/experiments/exp", experiment)[0] == 200
        assert call(hub, "DELETE", "/v1/experiments/exp")[0] in (200, 204)
        assert call(hub, "DELETE", "/v1/screens/home")[0] in (200, 204)

        wanted = {"screen.published", "release.started", "release.percent", "release.halted", "client.render_error",
                  "sync.created", "experiment.changed", "screen.deleted"}
        receiver.wait_for(lambda r: wanted <= {d.type for d in r.delivered()}, timeout=30, what="every type")
        by_type = {}
        for delivered in receiver.delivered():
            by_type.setdefault(delivered.type, []).append(delivered)
        published = by_type["screen.published"][0]
        assert (published.subject, published.data["screen"], published.data["version"], published.data["hash"]) == (
            "screen:home", "home", base["version"], base["hash"])
        started = by_type["release.started"][0]
        assert started.subject == "screen:home"
        assert {k: started.data[k] for k in ("screen", "release", "version", "percent")} == {
            "screen": "home", "release": release["release"], "version": release["version"], "percent": 10}
        assert [d.data["percent"] for d in by_type["release.percent"]] == [50]
        halted = by_type["release.halted"][0]
        assert (halted.data["release"], halted.data["reason"]) == (release["release"], "too many errors")
        # The first report of a screen version is sent at once; the next ones wait for the minute's summary.
        errors = by_type["client.render_error"][0]
        assert errors.subject == "screen:home" and errors.data["errors"] == 1, errors.data
        assert errors.data["since"] <= errors.data["until"] and errors.data["screen"] == "home"
        assert errors.data["samples"] == [{"component": "Carousel", "message": "no such component"}]
        assert len(by_type["client.render_error"]) == 1
        created = by_type["sync.created"][0]
        assert created.subject == "sync:" + sync["id"]
        assert {k: created.data[k] for k in ("id", "seq", "reason", "scope")} == {
            "id": sync["id"], "seq": sync["seq"], "reason": "hotfix", "scope": "bundle"}
        assert created.data["target"] == {"all": True}
        assert [(d.subject, d.data["change"]) for d in by_type["experiment.changed"]] == [
            ("experiment:exp", "put"), ("experiment:exp", "deleted")]
        assert by_type["screen.deleted"][0].data == {"screen": "home"}
        # Per subject, in the order they happened.
        home = [d.type for d in receiver.delivered(subject="screen:home")]
        assert home.index("screen.published") < home.index("release.started") < home.index("release.percent") \
            < home.index("release.halted") < home.index("screen.deleted"), home

        only_syncs.wait_for(lambda r: r.delivered(), what="the sync")
        assert {d.type for d in only_syncs.recorded()} == {"sync.created"}
        assert only_syncs.problems() == []
    finally:
        only_syncs.close()


def test_a_new_webhook_gets_a_secret_shown_once_and_a_replace_keeps_it(hub, receiver):
    created = put_webhook(hub, receiver, secret=None)
    assert call(hub, "GET", "/v1/webhooks/w")[0] == 200
    assert re.fullmatch(r"whsec_[0-9A-Za-z]{32}", created["secret"]), created
    assert {"name", "url", "events", "created_at", "updated_at"} <= set(created)
    receiver.secret = created["secret"]
    publish(hub, "home", tree("one"))
    receiver.wait_for(lambda r: r.delivered(), what="a delivery signed with the made secret")

    replaced = put_webhook(hub, receiver, events=["screen.published"], secret=None)
    assert "secret" not in replaced and replaced["created_at"] == created["created_at"]
    assert replaced["updated_at"] >= created["updated_at"] and replaced["events"] == ["screen.published"]
    for status, answer in (call(hub, "GET", "/v1/webhooks"), call(hub, "GET", "/v1/webhooks/w")):
        assert status == 200 and "whsec_" not in json.dumps(answer), answer
    publish(hub, "home", tree("two"))
    receiver.wait_for(lambda r: len(r.delivered()) == 2, what="a delivery still signed with the kept secret")

    put_webhook(hub, receiver, secret="whsec_a_new_one_0123456789")
    receiver.secret = "whsec_a_new_one_0123456789"
    publish(hub, "home", tree("three"))
    receiver.wait_for(lambda r: len(r.delivered()) == 3, what="a delivery signed with the new secret")

    status, answer = call(hub, "DELETE", "/v1/webhooks/w")
    assert status == 200 and answer == {"name": "w", "deleted": True}, answer
    assert call(hub, "GET", "/v1/webhooks/w")[0] == 404
    assert call(hub, "DELETE", "/v1/webhooks/w")[0] == 404
    assert call(hub, "GET", "/v1/webhooks")[1] == {"webhooks": []}


GOOD = {"url": "http://127.0.0.1:9/hooks", "events": ["screen.published"]}


@pytest.mark.parametrize("body, field", [
    ({**GOOD, "url": "ftp://127.0.0.1/hooks"}, "url"),
    ({**GOOD, "url": "http://example.com/hooks"}, "url"),
    ({**GOOD, "url": "https://user:pass@example.com/hooks"}, "url"),
    ({**GOOD, "url": "not a url"}, "url"),
    ({"events": ["screen.published"]}, "url"),
    ({**GOOD, "url": 7}, "url"),
    ({**GOOD, "events": []}, "events"),
    ({**GOOD, "events": ["screen.publish"]}, "events"),
    ({**GOOD, "events": ["webhook.test"]}, "events"),
    ({**GOOD, "events": "screen.published"}, "events"),
    ({**GOOD, "events": [7]}, "events"),
    ({"url": GOOD["url"]}, "events"),
    ({**GOOD, "secret": "short"}, "secret"),
    ({**GOOD, "secret": "x" * 257}, "secret"),
    ({**GOOD, "secret": "has a space in it 0123"}, "secret"),
    ({**GOOD, "secret": "non-ascii-é-0123456789"}, "secret"),
    ({**GOOD, "secret": 1234567890123456}, "secret"),
    ({**GOOD, "retries": 3}, "retries"),
])
def test_a_bad_put_is_refused_naming_the_field(hub, body, field):
    status, answer = call(hub, "PUT", "/v1/webhooks/w", body)
    assert status == 400, answer
    assert field in answer["error"]["message"], answer
    if field == "retries":  # an unknown field: the message names the known ones
        assert all(known in answer["error"]["message"] for known in ("url", "events", "secret")), answer
    assert call(hub, "GET", "/v1/webhooks/w")[0] == 404


def test_other_bad_puts_and_who_may_put(hub):
    assert call(hub, "PUT", "/v1/webhooks/w", raw=b"{not json")[0] == 400
    # A bad name is refused as a bad cohort or screen name is: 422 naming what a name may be.
    for name in ("bad%20name", "x" * 101, "Upper"):
        status, answer = call(hub, "PUT", "/v1/webhooks/" + name, GOOD)
        assert status == 422 and answer["error"]["code"] == "invalid_webhook_name", (name, answer)
    status, reader = call(hub, "POST", "/v1/tokens", {"name": "reader", "scopes": ["read"]})
    assert status == 200, reader
    status, publisher = call(hub, "POST", "/v1/tokens", {"name": "publisher", "scopes": ["publish"]})
    assert status == 200, publisher
    assert call(hub, "PUT", "/v1/webhooks/w", GOOD, token=publisher["token"])[0] == 403
    assert call(hub, "PUT", "/v1/webhooks/w", GOOD)[0] == 201
    # Every webhook call needs the admin scope, reads too: a webhook's URL is where the events go.
    assert call(hub, "GET", "/v1/webhooks/w", token=reader["token"])[0] == 403
    assert call(hub, "POST", "/v1/webhooks/w/test", token=reader["token"])[0] == 403
    assert call(hub, "DELETE", "/v1/webhooks/w", token=publisher["token"])[0] == 403
