"""What a client can rely on across time (issue 24, items 7, 8, 10): heartbeats it can see, an
epoch that tells one hub state from another, and subscriptions to screens not published yet.
Each is checked with two independent client stacks (Python `websockets` sync and asyncio)."""
import asyncio
import json
import threading
import time

import pytest
from websockets.asyncio.client import connect as async_connect
from websockets.sync.client import connect

from admin import call, publish


def hello_message(device, **fields):
    return json.dumps({"type": "hello", "protocol": 1, "device": device, "app": {"platform": "ios", "version": "5.2.0"},
                       **fields})


def signed_in(hub, device, **fields):
    ws = connect(hub.url + "/v1/connect")
    ws.send(hello_message(device, **fields))
    welcome = json.loads(ws.recv(timeout=5))
    assert welcome["type"] == "welcome", welcome
    return ws, welcome


def messages_until(ws, seconds):
    """Every message that arrives within `seconds`."""
    got, deadline = [], time.monotonic() + seconds
    while (left := deadline - time.monotonic()) > 0:
        try:
            got.append(json.loads(ws.recv(timeout=left)))
        except TimeoutError:
            break
    return got


# Heartbeats (item 7): a browser cannot see pings, so a client may ask for messages it can see.

def test_a_client_that_asks_gets_a_heartbeat_every_interval_even_while_it_talks(hub_factory):
    hub = hub_factory("--dev", "--ping-interval", "1s", "--idle-timeout", "30s")
    ws, welcome = signed_in(hub, "hb", heartbeat=True)
    assert welcome["heartbeat_s"] == 1
    got, deadline = [], time.monotonic() + 4.5
    # It talks all along (a `rendered` every 200 ms, which the hub answers with nothing): a ping
    # timer counted from its last message would never fire.
    while time.monotonic() < deadline:
        ws.send(json.dumps({"type": "rendered", "screen": "home", "version": 1}))
        got += messages_until(ws, 0.2)
    beats = [m for m in got if m["type"] == "heartbeat"]
    assert got == beats and 3 <= len(beats) <= 6, got
    ws.close()


def test_heartbeats_go_only_to_clients_that_ask_and_keep_an_asyncio_client_live(hub_factory):
    hub = hub_factory("--dev", "--ping-interval", "1s", "--idle-timeout", "30s")
    quiet, _ = signed_in(hub, "quiet")
    assert messages_until(quiet, 2.5) == []  # pings only: the websockets library answers them unseen

    async def asyncio_client():
        async with async_connect(hub.url + "/v1/connect") as ws:
            await ws.send(hello_message("async-hb", heartbeat=True))
            assert json.loads(await ws.recv())["type"] == "welcome"
            arrivals = []
            for _ in range(3):
                message = json.loads(await asyncio.wait_for(ws.recv(), timeout=2.5))
                arrivals.append((message["type"], time.monotonic()))
            return arrivals

    arrivals = asyncio.run(asyncio_client())
    assert [kind for kind, _ in arrivals] == ["heartbeat"] * 3
    gaps = [b - a for (_, a), (_, b) in zip(arrivals, arrivals[1:])]
    assert all(0.5 < gap < 2.0 for gap in gaps), gaps
    quiet.close()


def test_a_reload_never_spaces_heartbeats_wider_than_a_client_was_told(hub_factory, tmp_path):
    """ping_interval is reloadable; a client told heartbeat_s 1 would take a link whose
    heartbeats came every 3 s for dead. A longer interval applies to pings only; a shorter one to
    heartbeats too, and new welcomes say so."""
    import signal
    config = tmp_path / "hub.json"
    config.write_text(json.dumps({"dev": True, "ping_interval": "1s", "idle_timeout": "30s"}))
    hub = hub_factory("--config", str(config))
    ws, welcome = signed_in(hub, "told-1s", heartbeat=True)
    assert welcome["heartbeat_s"] == 1

    def reload(interval):
        config.write_text(json.dumps({"dev": True, "ping_interval": interval, "idle_timeout": "30s"}))
        before = open(hub.log_path).read().count("configuration reloaded")
        hub.process.send_signal(signal.SIGHUP)
        deadline = time.monotonic() + 5
        while open(hub.log_path).read().count("configuration reloaded") == before:
            assert time.monotonic() < deadline, "no reload logged"
            time.sleep(0.05)

    reload("3s")
    beats = [m for m in messages_until(ws, 3.5) if m["type"] == "heartbeat"]
    assert len(beats) >= 3, beats  # still every second
    assert signed_in(hub, "after-3s", heartbeat=True)[1]["heartbeat_s"] == 1
    ws.close()


# Epochs (item 8): sequence numbers count within one hub state.

def sync_to(hub, user_or_all):
    target = {"all": True} if user_or_all is None else {"user": user_or_all}
    status, answer = call(hub, "POST", "/v1/syncs", {"target": target, "reason": "hotfix", "scope": "bundle"})
    assert status == 200, answer
    return answer


def replayed(hub, **hello_fields):
    ws, welcome = signed_in(hub, "d-epoch", **hello_fields)
    syncs = [m["seq"] for m in messages_until(ws, 0.7) if m["type"] == "sync"]
    ws.close()
    return welcome, syncs


def test_a_last_sync_from_another_hub_state_replays_what_this_state_kept(hub_factory):
    old = hub_factory("--dev")
    for _ in range(5):
        sync_to(old, None)
    welcome_old, _ = replayed(old)
    assert welcome_old["epoch"].startswith("e-") and welcome_old["sync_seq"] == 5
    fresh = hub_factory("--dev")  # a new data dir: a new state
    sync_to(fresh, None)
    sync_to(fresh, None)
    welcome, _ = replayed(fresh)
    assert welcome["epoch"] != welcome_old["epoch"] and welcome["sync_seq"] == 2
    # The client's storage says last_sync 5, counted in the old state: above this state's
    # sync_seq, and from another epoch. Trusting it would skip s-1 and s-2.
    assert replayed(fresh, last_sync=5, epoch=welcome_old["epoch"])[1] == [1, 2]
    assert replayed(fresh, last_sync=1, epoch=welcome_old["epoch"])[1] == [1, 2]
    assert replayed(fresh, last_sync=5)[1] == [1, 2]  # an older client sends no epoch: the bound still holds
    assert replayed(fresh, last_sync=1, epoch=welcome["epoch"])[1] == [2]
    assert replayed(fresh, last_sync=2, epoch=welcome["epoch"])[1] == []


def test_the_epoch_survives_a_restart_and_changes_when_the_state_is_wiped(hub_factory):
    import os
    import shutil
    first = hub_factory("--dev")
    sync_to(first, None)
    epoch = replayed(first)[0]["epoch"]
    assert first.stop() == 0
    again = hub_factory("--dev", data=first.data)
    assert replayed(again)[0]["epoch"] == epoch
    assert again.stop() == 0
    for name in ("state.journal", "state.snapshot"):
        path = os.path.join(first.data, "data", name)
        if os.path.exists(path):
            os.remove(path)
    wiped = hub_factory("--dev", data=first.data)  # state.epoch stayed behind; the state did not
    welcome = replayed(wiped)[0]
    assert welcome["epoch"] != epoch and welcome["sync_seq"] == 0
    shutil.rmtree(first.data, ignore_errors=True)


# Pending subscriptions (item 10): a subscription to a screen not published yet stays.

def test_a_subscription_before_the_first_publish_gets_the_snapshot_with_both_stacks(hub_factory):
    hub = hub_factory("--dev", "--max-subscriptions", "2")
    ws, _ = signed_in(hub, "early")
    ws.send(json.dumps({"type": "subscribe", "screen": "later"}))
    assert json.loads(ws.recv(timeout=5)) == {"type": "pending", "screen": "later"}
    ws.send(json.dumps({"type": "subscribe", "screen": "other"}))
    assert json.loads(ws.recv(timeout=5))["type"] == "pending"
    ws.send(json.dumps({"type": "subscribe", "screen": "third"}))
    assert json.loads(ws.recv(timeout=5))["code"] == "too_many_subscriptions"  # waiting ones count

    async def asyncio_subscriber(ready):
        async with async_connect(hub.url + "/v1/connect") as client:
            await client.send(hello_message("early-async"))
            assert json.loads(await client.recv())["type"] == "welcome"
            await client.send(json.dumps({"type": "subscribe", "screen": "later"}))
            assert json.loads(await client.recv()) == {"type": "pending", "screen": "later"}
            ready.set()
            return json.loads(await asyncio.wait_for(client.recv(), timeout=10))

    ready = threading.Event()
    result = {}
    thread = threading.Thread(target=lambda: result.setdefault("snapshot", asyncio.run(asyncio_subscriber(ready))))
    thread.start()
    assert ready.wait(10)
    answer = publish(hub, "later", {"type": "screen", "children": [{"id": "t", "type": "text", "text": "hi"}]})
    assert answer["sent"] == 2, answer  # both waiting clients were sent the first version
    snapshot = json.loads(ws.recv(timeout=5))
    assert snapshot["type"] == "snapshot" and snapshot["version"] == 1 and snapshot["tree"]["children"][0]["text"] == "hi"
    thread.join(10)
    assert result["snapshot"]["type"] == "snapshot" and result["snapshot"]["version"] == 1
    # The subscription is a real one now: the next publish is a patch from version 1.
    publish(hub, "later", {"type": "screen", "children": [{"id": "t", "type": "text", "text": "hello"}]})
    patch = json.loads(ws.recv(timeout=5))
    assert patch["type"] == "patch" and patch["from"] == 1 and patch["version"] == 2
    # Unsubscribing a waiting screen stops the wait.
    ws.send(json.dumps({"type": "unsubscribe", "screen": "other"}))
    publish(hub, "other", {"type": "screen"})
    assert messages_until(ws, 0.5) == []
    ws.close()


def test_clients_that_subscribe_and_reconnect_while_the_first_publish_fires_all_end_with_it(hub_factory):
    """The subscribe and the publish race on the loop; whichever comes first, the client ends
    holding version 1 (a snapshot after `pending`, or at once), never stuck in `pending`."""
    hub = hub_factory("--dev", "--loops", "2")
    outcomes, stop = [], threading.Event()

    def client(index):
        rounds = 0
        while not stop.is_set() or rounds == 0:
            rounds += 1
            ws, _ = signed_in(hub, "racer-%d-%d" % (index, rounds))
            ws.send(json.dumps({"type": "subscribe", "screen": "race"}))
            first = json.loads(ws.recv(timeout=5))
            if first["type"] == "pending":
                first = json.loads(ws.recv(timeout=5))  # the snapshot must follow once published
            outcomes.append((first["type"], first.get("version")))
            ws.close()

    threads = [threading.Thread(target=client, args=(i,)) for i in range(8)]
    for thread in threads:
        thread.start()
    time.sleep(0.3)
    publish(hub, "race", {"type": "screen", "v": 1})
    time.sleep(0.3)
    stop.set()
    for thread in threads:
        thread.join(20)
    assert outcomes and all(outcome == ("snapshot", 1) for outcome in outcomes), outcomes
