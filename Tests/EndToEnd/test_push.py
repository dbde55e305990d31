"""Silent pushes to offline devices (DESIGN §17, issue 30) end to end: a real hub, its own HTTP/2
client, and a local stand-in for APNs, FCM and Google's OAuth endpoint (push_provider.py) that
verifies the ES256 provider token and the RS256 assertion with the public keys and checks every
header and body as the providers document them."""
import json
import random
import re
import threading
import time

import pytest

from admin import call
from conftest import drop_all
from push_provider import PushProvider
from redis_server import RedisServer
from test_syncs import drain, hello, token

IPHONE_TOKEN = "a1" * 32
IPAD_TOKEN = "b2" * 32
PIXEL_TOKEN = "fcm-token-pixel:APA91b" + "x" * 40
TOPIC = "com.example.app"


@pytest.fixture
def provider():
    stand_in = PushProvider()
    yield stand_in
    stand_in.close()


@pytest.fixture
def connections():
    opened = []
    yield opened
    drop_all(opened)


def register(hub, connections, user, device, provider_name, push_token, platform=None):
    """A device of `user` signs in and registers its push token; returns its socket."""
    platform = platform or ("ios" if provider_name == "apns" else "android")
    ws, welcome = hello(hub, token(hub, user), device=device, platform=platform)
    assert welcome["type"] == "welcome", welcome
    message = {"type": "push_token", "provider": provider_name, "token": push_token}
    if provider_name == "apns":
        message["topic"] = TOPIC
    ws.send(json.dumps(message))
    connections.append(ws)
    return ws


def devices(hub, user):
    status, answer = call(hub, "GET", "/v1/devices?user=" + user)
    assert status == 200, answer
    return answer


def wait_for_devices(hub, user, count, timeout=5.0):
    deadline = time.time() + timeout
    while True:
        answer = devices(hub, user)
        if answer["count"] == count:
            return answer
        assert time.time() < deadline, "expected %d devices of %s, the hub lists %r" % (count, user, answer)
        time.sleep(0.05)


def leave(ws, connections):
    """The app goes to the background: its socket closes."""
    connections.remove(ws)
    drop_all([ws])


def send_sync(hub, **body):
    status, answer = call(hub, "POST", "/v1/syncs", {"reason": "hotfix", "scope": "bundle", **body})
    assert status == 200, answer
    return answer


def receipts(hub, sync_id):
    return call(hub, "GET", "/v1/syncs/" + sync_id)[1]["receipts"]


def wait_for_receipts(hub, sync_id, timeout=10.0, **expected):
    deadline = time.time() + timeout
    while True:
        got = receipts(hub, sync_id)
        if all(got[name] == value for name, value in expected.items()):
            return got
        assert time.time() < deadline, "expected %r, the receipts say %r" % (expected, got)
        time.sleep(0.05)


def labelled(hub, name, **labels):
    """The value of one labelled series of /metrics."""
    text = call(hub, "GET", "/metrics")[1]
    wanted = ",".join('%s="%s"' % item for item in sorted(labels.items()))
    for line in text.splitlines():
        match = re.match(r"^%s\{(.*)\} (\S+)$" % name, line)
        if match and ",".join(sorted(match.group(1).split(","))) == wanted:
            return int(float(match.group(2)))
    raise AssertionError("no series %s{%s} in /metrics" % (name, wanted))


def test_offline_devices_of_a_user_get_one_push_each_and_the_connected_one_none(hub_factory, provider, connections):
    hub = hub_factory(*provider.hub_flags())
    iphone = register(hub, connections, "u1", "iphone", "apns", IPHONE_TOKEN)
    pixel = register(hub, connections, "u1", "pixel", "fcm", PIXEL_TOKEN)
    ipad = register(hub, connections, "u1", "ipad", "apns", IPAD_TOKEN)
    listed = wait_for_devices(hub, "u1", 3)
    assert {d["device"]: d["provider"] for d in listed["devices"]} == {"iphone": "apns", "pixel": "fcm", "ipad": "apns"}
    assert all(IPHONE_TOKEN not in json.dumps(d) and PIXEL_TOKEN not in json.dumps(d) for d in listed["devices"])
    assert {d["device"]: d["token_suffix"] for d in listed["devices"]}["iphone"] == "…" + IPHONE_TOKEN[-6:]
    leave(iphone, connections)
    leave(pixel, connections)
    hub.wait_for_connections(1)

    answer = send_sync(hub, target={"user": "u1"}, push="offline", collapse="bundle", ttl="1h", mandatory=True,
                       hint={"build": 412})
    assert answer["targeted_online"] == 1 and answer["push_queued"] == 2, answer
    apns = provider.wait_for_requests(1, provider="apns")
    fcm = provider.wait_for_requests(1, provider="fcm")
    wait_for_receipts(hub, answer["id"], pushed=2, push_failed=0)
    assert [m["id"] for m in drain(ipad, 0.5) if m["type"] == "sync"] == [answer["id"]]
    time.sleep(1.0)
    assert len(provider.recorded("apns")) == 1 and len(provider.recorded("fcm")) == 1, provider.requests
    assert len(provider.recorded("oauth")) == 1, "one access token, cached"

    status = call(hub, "GET", "/v1/syncs/" + answer["id"])[1]
    push = apns[0]
    assert push.token == IPHONE_TOKEN and push.path == "/3/device/" + IPHONE_TOKEN
    assert push.headers["apns-push-type"] == "background" and push.headers["apns-priority"] == "5"
    assert push.headers["apns-topic"] == TOPIC and push.headers["apns-collapse-id"] == "bundle"
    assert int(push.headers["apns-expiration"]) == status["expires_at"] // 1000
    assert push.json["aps"] == {"content-available": 1}
    expected_sync = {"type": "sync", "id": answer["id"], "seq": answer["seq"], "reason": "hotfix", "scope": "bundle",
                     "hint": {"build": 412}, "mandatory": True}
    assert push.sync == expected_sync
    message = fcm[0].json["message"]
    assert message["token"] == PIXEL_TOKEN and fcm[0].sync == expected_sync
    assert message["android"]["priority"] == "normal" and message["android"]["collapse_key"] == "bundle"
    assert 3590 <= int(message["android"]["ttl"].rstrip("s")) <= 3600
    assert labelled(hub, "pushhub_pushes_total", provider="apns", outcome="pushed") == 1
    assert labelled(hub, "pushhub_pushes_total", provider="fcm", outcome="pushed") == 1

    # "always" pushes the connected device too.
    again = send_sync(hub, target={"user": "u1"}, push="always")
    assert again["push_queued"] == 3
    provider.wait_for_requests(1, token=IPAD_TOKEN)
    wait_for_receipts(hub, again["id"], pushed=3)


def test_a_dead_token_is_removed_after_one_410_and_never_pushed_again(hub_factory, provider, connections):
    hub = hub_factory(*provider.hub_flags())
    leave(register(hub, connections, "u2", "iphone", "apns", IPHONE_TOKEN), connections)
    wait_for_devices(hub, "u2", 1)
    provider.script(IPHONE_TOKEN, (410, "Unregistered"))
    first = send_sync(hub, target={"user": "u2"}, push="offline")
    assert first["push_queued"] == 1
    provider.wait_for_requests(1, token=IPHONE_TOKEN)
    wait_for_receipts(hub, first["id"], pushed=0, push_failed=1)
    wait_for_devices(hub, "u2", 0)
    second = send_sync(hub, target={"user": "u2"}, push="offline")
    assert second["push_queued"] == 0
    time.sleep(0.5)
    assert len(provider.recorded(token=IPHONE_TOKEN)) == 1
    assert labelled(hub, "pushhub_pushes_total", provider="apns", outcome="invalid_token") == 1
    # Registering again brings the device back; the removal survives a restart meanwhile.
    hub.stop()
    restarted = hub_factory(*provider.hub_flags(), data=hub.data)
    assert devices(restarted, "u2")["count"] == 0
    register(restarted, connections, "u2", "iphone", "apns", IPHONE_TOKEN)
    wait_for_devices(restarted, "u2", 1)


def test_a_provider_that_answers_429_then_200_gets_the_push_once_it_recovers(hub_factory, provider, connections):
    hub = hub_factory(*provider.hub_flags())
    leave(register(hub, connections, "u3", "iphone", "apns", IPHONE_TOKEN), connections)
    leave(register(hub, connections, "u3", "pixel", "fcm", PIXEL_TOKEN), connections)
    wait_for_devices(hub, "u3", 2)
    provider.script(IPHONE_TOKEN, (429, "TooManyRequests", 1))
    provider.script(PIXEL_TOKEN, 503, 503)
    answer = send_sync(hub, target={"user": "u3"}, push="offline")
    wait_for_receipts(hub, answer["id"], timeout=20, pushed=2, push_failed=0)
    iphone = provider.recorded(token=IPHONE_TOKEN)
    assert [r.status for r in iphone] == [429, 200]
    assert iphone[1].time - iphone[0].time >= 0.9, "retry-after: 1 is honoured"
    assert [r.status for r in provider.recorded(token=PIXEL_TOKEN)] == [503, 503, 200]
    assert labelled(hub, "pushhub_pushes_total", provider="fcm", outcome="retried") == 2


def test_a_device_that_reconnects_before_a_retry_is_not_pushed(hub_factory, provider, connections):
    hub = hub_factory(*provider.hub_flags())
    leave(register(hub, connections, "u4", "iphone", "apns", IPHONE_TOKEN), connections)
    wait_for_devices(hub, "u4", 1)
    provider.script(IPHONE_TOKEN, (503, "ServiceUnavailable", 2))
    answer = send_sync(hub, target={"user": "u4"}, push="offline")
    provider.wait_for_requests(1, token=IPHONE_TOKEN)
    ws, welcome = hello(hub, token(hub, "u4"), device="iphone", last_sync=0)
    connections.append(ws)
    assert answer["id"] in [m.get("id") for m in drain(ws, 0.5)], "the replay brings it"
    time.sleep(3.0)
    assert len(provider.recorded(token=IPHONE_TOKEN)) == 1, "the retry found the device online"
    assert labelled(hub, "pushhub_pushes_total", provider="apns", outcome="online") == 1
    assert receipts(hub, answer["id"])["push_failed"] == 0


def test_expired_credentials_are_renewed_and_refused_ones_stop_only_their_provider(hub_factory, provider, connections):
    hub = hub_factory(*provider.hub_flags())
    leave(register(hub, connections, "u5", "iphone", "apns", IPHONE_TOKEN), connections)
    leave(register(hub, connections, "u5", "pixel", "fcm", PIXEL_TOKEN), connections)
    wait_for_devices(hub, "u5", 2)
    first = send_sync(hub, target={"user": "u5"}, push="offline")
    wait_for_receipts(hub, first["id"], pushed=2)

    # APNs says the provider token expired, FCM the access token: both renew and go again.
    provider.expire_provider_tokens()
    provider.expire_access_tokens()
    time.sleep(1.1)
    second = send_sync(hub, target={"user": "u5"}, push="offline")
    wait_for_receipts(hub, second["id"], pushed=2, push_failed=0)
    assert len(provider.recorded("oauth")) == 2
    apns_tokens = {r.headers["authorization"] for r in provider.recorded("apns")}
    assert len(apns_tokens) == 2, "a new provider token after ExpiredProviderToken"

    # APNs refuses the credentials: APNs stops, FCM and the sockets carry on.
    provider.script(IPHONE_TOKEN, (403, "InvalidProviderToken"))
    third = send_sync(hub, target={"user": "u5"}, push="offline")
    wait_for_receipts(hub, third["id"], pushed=1, push_failed=1)
    assert labelled(hub, "pushhub_push_provider_up", provider="apns") == 0
    assert labelled(hub, "pushhub_push_provider_up", provider="fcm") == 1
    fourth = send_sync(hub, target={"user": "u5"}, push="offline")
    wait_for_receipts(hub, fourth["id"], pushed=1, push_failed=1)
    assert len(provider.recorded("apns")) == 4, "nothing sent to a stopped provider"
    log = open(hub.log_path).read()
    assert "push provider stopped" in log and "InvalidProviderToken" in log
    secrets = [open(provider.credentials.apns_key_file).read().splitlines()[1]] + [t.split()[1] for t in apns_tokens]
    assert not any(secret in log for secret in secrets), "no key or token is logged"


def test_a_hanging_provider_does_not_delay_socket_deliveries(hub_factory, provider, connections):
    hub = hub_factory(*provider.hub_flags())
    for index in range(50):
        provider.script("%064x" % index, *["hang"] * 5)
        leave(register(hub, connections, "offline-%d" % index, "phone", "apns", "%064x" % index), connections)
    online = [hello(hub, token(hub, "on-%d" % index), device="d")[0] for index in range(20)]
    connections.extend(online)
    deadline = time.time() + 5
    while devices(hub, "offline-49")["count"] == 0:
        assert time.time() < deadline
        time.sleep(0.05)
    slowest = 0.0
    for _ in range(5):
        started = time.time()
        answer = send_sync(hub, target={"all": True}, push="offline")
        assert answer["push_queued"] == 50
        for ws in online:
            while True:
                message = json.loads(ws.recv(timeout=5))
                if message.get("id") == answer["id"]:
                    break
        slowest = max(slowest, time.time() - started)
    # As many as the stand-in's stream limit (h2: 100) hang in flight; the others wait their turn.
    provider.wait_for_requests(100)
    assert all(r.status is None for r in provider.recorded("apns")), "the stand-in hangs"
    assert slowest < 1.0, "a sync took %.2f s to reach 20 sockets while the provider hung" % slowest
    assert call(hub, "GET", "/v1/stats")[0] == 200


def test_a_sync_may_ask_for_a_push_only_of_a_hub_with_a_provider_and_a_token_needs_a_device(hub):
    status, answer = call(hub, "POST", "/v1/syncs", {"target": {"all": True}, "push": "offline"})
    assert status == 400 and answer["error"]["code"] == "push_not_configured", answer
    status, answer = call(hub, "POST", "/v1/syncs", {"target": {"all": True}, "push": "sometimes"})
    assert status == 400 and answer["error"]["code"] == "bad_push", answer
    ws, _ = hello(hub, token(hub, "u6"), device=None)
    try:
        ws.send(json.dumps({"type": "push_token", "provider": "fcm", "token": "t"}))
        error = json.loads(ws.recv(timeout=5))
        assert error["type"] == "error" and error["code"] == "bad_message" and "device" in error["message"]
        ws.send(json.dumps({"type": "push_token", "provider": "apns", "token": "ab"}))
        error = json.loads(ws.recv(timeout=5))
        assert error["code"] == "bad_message" and "topic" in error["message"], error
    finally:
        drop_all([ws])
    assert devices(hub, "u6")["count"] == 0


def test_a_device_signing_out_removes_its_registration(hub_factory, provider, connections):
    hub = hub_factory(*provider.hub_flags())
    ws = register(hub, connections, "u7", "iphone", "apns", IPHONE_TOKEN)
    wait_for_devices(hub, "u7", 1)
    register(hub, connections, "u7", "iphone", "apns", IPAD_TOKEN)
    listed = wait_for_devices(hub, "u7", 1)
    deadline = time.time() + 5
    while listed["devices"][0]["token_suffix"] != "…" + IPAD_TOKEN[-6:]:
        assert time.time() < deadline, listed
        listed = devices(hub, "u7")
    ws.send(json.dumps({"type": "push_token", "token": None}))
    wait_for_devices(hub, "u7", 0)


def test_spread_applies_to_pushes(hub_factory, provider, connections):
    hub = hub_factory(*provider.hub_flags())
    tokens = ["%064x" % (0xC0 + index) for index in range(5)]
    for index, push_token in enumerate(tokens):
        leave(register(hub, connections, "u8", "phone-%d" % index, "apns", push_token), connections)
    wait_for_devices(hub, "u8", 5)
    send_sync(hub, target={"user": "u8"}, push="offline", spread="2s")
    pushes = provider.wait_for_requests(5, provider="apns", timeout=10)
    times = sorted(r.time for r in pushes)
    assert times[-1] - times[0] >= 1.2, "five pushes spread over 2 s arrived within %.2f s" % (times[-1] - times[0])


def test_scaled_out_a_sync_made_on_one_hub_pushes_devices_last_seen_on_another_exactly_once(
        hub_factory, provider, connections):
    redis = RedisServer()
    try:
        from test_scale_out import shared_secrets
        a = hub_factory("--redis", redis.url, *provider.hub_flags(), data=shared_secrets())
        b = hub_factory("--redis", redis.url, *provider.hub_flags(), data=shared_secrets())
        leave(register(b, connections, "u9", "iphone", "apns", IPHONE_TOKEN), connections)
        register(b, connections, "u9", "ipad", "apns", IPAD_TOKEN)
        wait_for_devices(a, "u9", 2)
        answer = send_sync(a, target={"user": "u9"}, push="offline")
        assert answer["targeted_online"] == 1 and answer["push_queued"] == 1, answer
        provider.wait_for_requests(1, token=IPHONE_TOKEN)
        wait_for_receipts(b, answer["id"], pushed=1)
        time.sleep(1.5)
        assert len(provider.recorded(token=IPHONE_TOKEN)) == 1 and not provider.recorded(token=IPAD_TOKEN)
        # A dead token reported through A is gone for B too.
        provider.script(IPHONE_TOKEN, 410)
        send_sync(b, target={"user": "u9"}, push="offline")
        wait_for_devices(a, "u9", 1)
        wait_for_devices(b, "u9", 1)
    finally:
        drop_all(connections)
        redis.stop()


def test_devices_that_come_and_go_while_syncs_fire_get_every_sync_by_socket_or_by_push(
        hub_factory, provider, connections):
    """The order argument of docs/architecture.md ("A sync pushed to offline devices and a device
    that connects or leaves"): each targeted device gets each sync at least once, over its socket
    (live or replayed) or as a push, whatever the timing of its connects and disconnects."""
    hub = hub_factory(*provider.hub_flags())
    names = ["phone-%d" % index for index in range(4)]
    tokens = {name: "%064x" % (0xD0 + index) for index, name in enumerate(names)}
    for name in names:
        leave(register(hub, connections, "u10", name, "apns", tokens[name]), connections)
    wait_for_devices(hub, "u10", 4)
    received = {name: set() for name in names}
    last_sync = {name: 0 for name in names}
    stop = threading.Event()
    failures = []

    def device(name):
        rng = random.Random(name)
        try:
            while not stop.is_set():
                ws, welcome = hello(hub, token(hub, "u10"), device=name, last_sync=last_sync[name])
                deadline = time.time() + rng.uniform(0.0, 0.3)
                while time.time() < deadline:
                    for message in drain(ws, 0.02):
                        if message["type"] == "sync":
                            received[name].add(message["id"])
                            last_sync[name] = max(last_sync[name], message["seq"])
                drop_all([ws])
                time.sleep(rng.uniform(0.0, 0.2))
        except Exception as error:  # noqa: BLE001 - reported by the main thread
            failures.append(error)

    threads = [threading.Thread(target=device, args=(name,)) for name in names]
    for thread in threads:
        thread.start()
    fired = []
    for _ in range(20):
        fired.append(send_sync(hub, target={"user": "u10"}, push="offline")["id"])
        time.sleep(0.05)
    stop.set()
    for thread in threads:
        thread.join()
    assert not failures, failures
    # Every device comes back once more and gets what it missed.
    for name in names:
        ws, _ = hello(hub, token(hub, "u10"), device=name, last_sync=last_sync[name])
        connections.append(ws)
        for message in drain(ws, 0.5):
            if message["type"] == "sync":
                received[name].add(message["id"])
    time.sleep(1.0)
    pushed = {name: {r.sync["id"] for r in provider.recorded(token=tokens[name]) if r.status == 200}
              for name in names}
    for name in names:
        missed = set(fired) - received[name] - pushed[name]
        assert not missed, "%s got neither by socket nor by push: %s" % (name, sorted(missed))
