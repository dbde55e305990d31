"""Push tokens and syncs from silent pushes through the SDKs against a real hub (DESIGN §17,
docs/clients.md): each client registers its token after the hello and the hub lists it
(`GET /v1/devices?user=U`, admin); a sync handed to `handlePush` and then replayed by the hub
over the socket reaches the app once, and the replay moves last_sync. The Swift client's twin
of these is Tests/PushHubClientTests (ClientAgainstHubTests "a sync handled from a push…")."""
import json
import os
import time

import jwt
import pytest

from admin import call, receipts_once_acked
from java_client import java_clients  # noqa: F401 (a fixture)
from test_js_client import browser, start_client  # noqa: F401 (a fixture)


def user_token(hub, sub):
    secret = open(os.path.join(hub.data, "data", "jwt.secret")).read().strip()
    return jwt.encode({"sub": sub, "exp": int(time.time()) + 3600}, secret, algorithm="HS256")


def devices_of(hub, user, timeout=10):
    """The hub's devices of `user` once it lists at least one (GET /v1/devices, the hub's push registry)."""
    deadline = time.time() + timeout
    while True:
        status, answer = call(hub, "GET", "/v1/devices?user=" + user)
        if status == 404 and "no admin route" in json.dumps(answer):
            pytest.skip("this hub has no GET /v1/devices yet (issue 30's hub side)")
        assert status == 200, answer
        if answer["count"] > 0 or time.time() > deadline:
            return answer
        time.sleep(0.05)


def test_java_registers_its_fcm_token_which_the_hub_lists(hub_factory, java_clients, tmp_path):
    hub = hub_factory("--dev")
    storage = str(tmp_path / "storage")
    client = java_clients(url=hub.url + "/v1/connect", token=user_token(hub, "u-java"), storage=storage)
    client.wait("welcome")
    client.command("push_token", token="fcm-token-0123456789")
    listed = devices_of(hub, "u-java")
    assert listed["count"] == 1, listed
    device = listed["devices"][0]
    assert device["provider"] == "fcm" and "fcm-token-0123456789".endswith(device["token_suffix"].lstrip("…")), device
    assert device["platform"] == "android" and device["device"] == open(os.path.join(storage, "device")).read()


def test_java_hands_a_pushed_sync_over_once_and_the_replay_moves_last_sync(hub_factory, java_clients, tmp_path):
    hub = hub_factory("--dev")
    storage = str(tmp_path / "storage")
    client = java_clients(url=hub.url + "/v1/connect", token=user_token(hub, "u-java"), storage=storage)
    client.wait("welcome")
    client.command("close")
    client.wait("close")

    status, answer = call(hub, "POST", "/v1/syncs", {"target": {"user": "u-java"}, "scope": "bundle"})
    assert status == 200, answer
    sync = {"type": "sync", "id": answer["id"], "seq": answer["seq"], "reason": "", "scope": "bundle"}
    woken = java_clients(url=hub.url + "/v1/connect", token=user_token(hub, "u-java"), storage=storage)
    woken.command("push", data={"pushhub": json.dumps(sync)})
    assert woken.wait("pushed")["ours"] is True
    woken.wait("push_handled", timeout=10)
    woken.wait("welcome")
    assert receipts_once_acked(hub, answer["id"])["acked"] == 1
    deadline = time.time() + 10
    while woken.stats()["last_sync"] != answer["seq"]:
        assert time.time() < deadline, "the replay never moved last_sync"
        time.sleep(0.05)
    stats = woken.stats()["stats"]
    assert stats["pushedSyncs"] == 1 and stats["duplicateSyncs"] == 1, stats
    assert [s["id"] for s in woken.of("sync")] == [answer["id"]]


def test_js_registers_its_apns_token_which_the_hub_lists(browser, hub_factory):  # noqa: F811
    hub = hub_factory("--dev")
    token = user_token(hub, "u-js")
    start_client(browser, hub, "push", token=token)
    browser.wait_for("H.hub.state === 'live'")
    browser.evaluate("H.hub.setPushToken({provider: 'apns', token: 'ab'.repeat(32), topic: 'com.example.app'}), true")
    listed = devices_of(hub, "u-js")
    device = listed["devices"][0]
    assert listed["count"] == 1 and device["provider"] == "apns" and device["topic"] == "com.example.app", listed
    assert device["device"] == browser.evaluate("localStorage.getItem('push:device')"), device


def test_js_hands_a_pushed_sync_over_once_and_the_replay_moves_last_sync(browser, hub_factory):  # noqa: F811
    hub = hub_factory("--dev")
    token = user_token(hub, "u-js")
    start_client(browser, hub, "pushed", token=token)
    browser.wait_for("H.hub.state === 'live'")
    browser.evaluate("H.hub.close(), true")

    status, answer = call(hub, "POST", "/v1/syncs", {"target": {"user": "u-js"}, "scope": "bundle"})
    assert status == 200, answer
    user_info = {"aps": {"content-available": 1},
                 "pushhub": {"type": "sync", "id": answer["id"], "seq": answer["seq"], "reason": "", "scope": "bundle"}}
    # The page again (the app woken by the push), on the same storage: the push first, then the socket.
    start_client(browser, hub, "pushed", token=token)
    assert browser.evaluate("H.hub.handlePush(%s)" % json.dumps(user_info)) is True
    browser.wait_for("H.hub.stats.duplicateSyncs === 1", what="the socket's replay, dropped")
    browser.wait_for("H.hub.lastSync === %d" % answer["seq"], what="last_sync moved by the replay")
    assert browser.evaluate("H.syncs.map((s) => s.id)") == [answer["id"]]
    assert receipts_once_acked(hub, answer["id"])["acked"] == 1
