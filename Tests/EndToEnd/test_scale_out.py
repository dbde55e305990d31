"""Several hubs as one service over a real redis-server (DESIGN §11, issue 12): a publish, a
sync or any other change made through one hub reaches the clients of every hub; versions and
sync seqs are numbered once across hubs; a new hub loads the shared state; while Redis is away
every hub keeps serving its clients and refuses changes with a 503, and afterwards nothing was
lost or repeated."""
import hashlib
import json
import os
import signal
import subprocess
import tempfile
import threading
import time

import jsonpatch
import jwt
import pytest
import rfc8785
from websockets.sync.client import connect

from admin import call, metric
from conftest import BIN
from redis_server import RedisServer

SECRET = "scale-out-test-secret-0123456789abcdef"
ADMIN_TOKEN = "scale-out-admin-token-0123456789abcdef"


def sha(tree):
    return hashlib.sha256(rfc8785.dumps(tree)).hexdigest()


@pytest.fixture
def redis():
    server = RedisServer()
    yield server
    server.stop()


@pytest.fixture
def cluster(hub_factory, redis):
    """start(n) → n hubs over `redis`, sharing the admin token and the JWT secret (an operator
    gives every hub the same two files: docs/scale-out.md)."""

    def start(count=1, *flags):
        return [hub_factory("--allow-anonymous", "--redis", redis.url, *flags, data=shared_secrets())
                for _ in range(count)]

    return start


def shared_secrets():
    """A new hub's folder whose data dir holds the cluster's admin token and JWT secret."""
    folder = tempfile.mkdtemp(prefix="pushhub-e2e-")
    os.makedirs(os.path.join(folder, "data"))
    for name, value in (("admin.token", ADMIN_TOKEN), ("jwt.secret", SECRET)):
        path = os.path.join(folder, "data", name)
        with open(path, "w") as file:
            file.write(value + "\n")
        os.chmod(path, 0o600)
    return folder


def token(user):
    return jwt.encode({"sub": user, "exp": int(time.time()) + 3600}, SECRET, algorithm="HS256")


def hello(hub, user=None, device="d", last_sync=None):
    ws = connect(hub.url + "/v1/connect")
    message = {"type": "hello", "protocol": 1, "device": device, "app": {"platform": "ios", "version": "6.0.0"}}
    if user:
        message["token"] = token(user)
    if last_sync is not None:
        message["last_sync"] = last_sync
    ws.send(json.dumps(message))
    welcome = json.loads(ws.recv(timeout=5))
    assert welcome["type"] == "welcome", welcome
    return ws


def receive(ws, kind, timeout=5.0):
    """The next message of type `kind` (others are skipped)."""
    deadline = time.time() + timeout
    while True:
        message = json.loads(ws.recv(timeout=max(0.01, deadline - time.time())))
        if message["type"] == kind:
            return message


def hubctl_status(hub):
    result = subprocess.run([os.path.join(BIN, "hubctl"), "--url", "http://127.0.0.1:%d" % hub.admin_port,
                             "--token", ADMIN_TOKEN, "status"], capture_output=True, text=True, timeout=10)
    assert result.returncode == 0, result.stderr
    return " ".join(result.stdout.split())


def publish(hub, name, tree):
    status, answer = call(hub, "PUT", "/v1/screens/" + name, tree)
    assert status == 200, answer
    return answer


def tree(n):
    """A screen big enough that a one-leaf change goes as a patch (a hub sends a snapshot when
    that is smaller)."""
    return {"n": n, "rows": [{"id": "r%d" % i, "text": "row %d" % i} for i in range(20)]}


def subscribed(hub, screen, device, version=1):
    """A client on `hub` subscribed to `screen`, holding its snapshot at `version`."""
    ws = hello(hub, device=device)
    ws.send(json.dumps({"type": "subscribe", "screen": screen}))
    assert receive(ws, "snapshot")["version"] == version
    return ws


def wait_until(condition, timeout=10.0, what="condition"):
    deadline = time.time() + timeout
    while time.time() < deadline:
        value = condition()
        if value:
            return value
        time.sleep(0.02)
    raise AssertionError("timed out waiting for " + what)


def latest_version(hub, name):
    status, answer = call(hub, "GET", "/v1/screens/%s/history" % name)
    return answer["versions"][0]["version"] if status == 200 and answer.get("versions") else 0  # newest first


def test_a_publish_on_one_hub_reaches_a_subscriber_on_another(cluster):
    a, b = cluster(2)
    first = {"type": "column", "children": [{"type": "text", "id": "title", "text": "Hello"}]}
    publish(a, "home", first)
    wait_until(lambda: latest_version(b, "home") == 1, what="hub B to learn version 1")
    ws = hello(b, device="on-b")
    ws.send(json.dumps({"type": "subscribe", "screen": "home"}))
    snapshot = receive(ws, "snapshot")
    assert snapshot["version"] == 1 and snapshot["tree"] == first and snapshot["hash"] == sha(first)

    second = {"type": "column", "children": [{"type": "text", "id": "title", "text": "Hello, world"}]}
    answer = publish(a, "home", second)
    patch = receive(ws, "patch")
    assert (patch["from"], patch["version"]) == (1, 2) == (1, answer["version"])
    assert patch["hash"] == answer["hash"] == sha(second)
    assert jsonpatch.apply_patch(first, patch["ops"]) == second


def test_versions_and_seqs_are_numbered_once_across_hubs(cluster):
    a, b, c = cluster(3, "--keep-versions", "200")
    versions, seqs, failures = [], [], []

    def writer(hub, index):
        for n in range(30):
            status, answer = call(hub, "PUT", "/v1/screens/race", {"by": index, "n": n})
            (versions.append(answer["version"]) if status == 200 else failures.append(answer))
            status, answer = call(hub, "POST", "/v1/syncs", {"target": {"all": True}, "reason": "r%d" % index})
            (seqs.append(answer["seq"]) if status == 200 else failures.append(answer))

    threads = [threading.Thread(target=writer, args=(hub, index)) for index, hub in enumerate((a, b, c))]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert failures == []
    # Concurrent writers through three hubs: every answer a different number, none skipped.
    assert sorted(versions) == list(range(1, 91))
    assert sorted(seqs) == list(range(1, 91))
    for hub in (a, b, c):
        wait_until(lambda: latest_version(hub, "race") == 90, what="every hub to reach version 90")
        status, history = call(hub, "GET", "/v1/screens/race/history")
        assert [v["version"] for v in reversed(history["versions"])] == list(range(1, 91))
    # Three writers racing for the next journal entry: some appends lost and were made again.
    assert sum(metric(hub, "pushhub_redis_conflicts_total") for hub in (a, b, c)) > 0


def test_a_publish_is_answered_only_once_durable_even_when_redis_stalls_past_the_gather_timeout(cluster, redis):
    """Redis busy for 3 s (longer than a gather's 2 s) while a publish is appended: the answer waits
    for the append and counts the subscriber, instead of a 200 with nothing sent for a change
    that might still fail."""
    a, b = cluster(2)
    publish(a, "stall", {"n": 0})
    wait_until(lambda: latest_version(b, "stall") == 1, what="hub B to learn version 1")
    ws = hello(b, device="waits")
    ws.send(json.dumps({"type": "subscribe", "screen": "stall"}))
    receive(ws, "snapshot")
    wait_until(lambda: len(hubs_listed(a)) == 2, what="hub A to see hub B")
    sleeper = threading.Thread(target=redis.command, args=("DEBUG", "SLEEP", "3"))
    sleeper.start()
    time.sleep(0.2)
    started = time.time()
    status, answer = call(a, "PUT", "/v1/screens/stall", {"n": 1, "pad": "x" * 200})
    sleeper.join()
    assert status == 200 and answer["version"] == 2, answer
    assert time.time() - started > 2.5 and answer["sent"] == 1, answer


def test_a_sync_made_through_one_hub_reaches_devices_on_every_hub(cluster):
    a, b, c = cluster(3)
    phone = hello(a, user="u1", device="phone")
    tablet = hello(c, user="u1", device="tablet")
    other = hello(b, user="u2", device="other")
    status, answer = call(b, "POST", "/v1/syncs", {"target": {"user": "u1"}, "reason": "hotfix"})
    assert status == 200, answer
    for ws in (phone, tablet):
        message = receive(ws, "sync")
        assert (message["seq"], message["reason"]) == (answer["seq"], "hotfix")
    with pytest.raises(TimeoutError):
        receive(other, "sync", timeout=0.5)
    # A device that was offline gets it from the shared sync log on any hub.
    late = hello(b, user="u1", device="watch", last_sync=0)
    assert receive(late, "sync")["seq"] == answer["seq"]


def test_cohorts_and_experiments_made_on_one_hub_apply_on_another(cluster):
    a, b = cluster(2)
    status, answer = call(a, "PUT", "/v1/cohorts/beta", {"users": ["u7"]})
    assert status == 200, answer
    wait_until(lambda: call(b, "GET", "/v1/cohorts/beta")[0] == 200, what="hub B to learn the cohort")
    member = hello(b, user="u7", device="member")
    outsider = hello(b, user="u8", device="outsider")
    status, answer = call(a, "POST", "/v1/syncs", {"target": {"cohort": "beta"}, "reason": "beta-fix"})
    assert status == 200, answer
    assert receive(member, "sync")["reason"] == "beta-fix"
    with pytest.raises(TimeoutError):
        receive(outsider, "sync", timeout=0.5)


def test_a_hub_started_later_loads_the_shared_state(cluster):
    (a,) = cluster(1)
    for n in range(5):
        publish(a, "later", {"n": n})
    status, sync_answer = call(a, "POST", "/v1/syncs", {"target": {"all": True}, "reason": "before"})
    assert status == 200
    (b,) = cluster(1)
    assert latest_version(b, "later") == 5
    ws = hello(b, device="fresh", last_sync=0)
    assert receive(ws, "sync")["seq"] == sync_answer["seq"]
    ws.send(json.dumps({"type": "subscribe", "screen": "later"}))
    snapshot = receive(ws, "snapshot")
    assert snapshot["version"] == 5 and snapshot["tree"] == {"n": 4}


def test_while_redis_is_away_clients_stay_and_changes_get_503(cluster, redis):
    """Redis stopped for 10 s under load: clients on both hubs stay connected, every change is
    refused with 503 (none half-made), and afterwards a publish reaches everyone once."""
    a, b = cluster(2)
    publish(a, "steady", tree(0))
    wait_until(lambda: latest_version(b, "steady") == 1, what="hub B to learn version 1")
    clients = []
    for hub in (a, b):
        for n in range(10):
            ws = hello(hub, device="stays-%d-%d" % (hub.port, n))
            ws.send(json.dumps({"type": "subscribe", "screen": "steady"}))
            assert receive(ws, "snapshot")["version"] == 1
            clients.append(ws)
    ws = clients[-1]  # on hub B

    redis.kill()
    outage_started = time.time()
    wait_until(lambda: call(a, "GET", "/healthz")[1]["status"] == "degraded", what="hub A to say degraded")
    assert "hub: degraded" in hubctl_status(a) and "(unreachable)" in hubctl_status(a)
    refused, accepted = [], []

    def writer(hub):
        n = 100
        while time.time() - outage_started < 10:
            n += 1
            status, answer = call(hub, "PUT", "/v1/screens/steady", tree(n))
            (accepted if status == 200 else refused).append((status, answer))
            status, answer = call(hub, "POST", "/v1/syncs", {"target": {"all": True}, "reason": "during"})
            (accepted if status == 200 else refused).append((status, answer))
            time.sleep(0.05)

    writers = [threading.Thread(target=writer, args=(hub,)) for hub in (a, b)]
    for thread in writers:
        thread.start()
    # Reads and connected clients go on from memory meanwhile.
    assert call(b, "GET", "/v1/screens/steady/history")[0] == 200
    ws.send(json.dumps({"type": "subscribe", "screen": "steady", "have": {"version": 1, "hash": sha(tree(0))}}))
    assert receive(ws, "unchanged")["version"] == 1
    for thread in writers:
        thread.join()
    assert accepted == [] and len(refused) > 20
    assert all(status == 503 and answer["error"]["code"] == "redis_unavailable" for status, answer in refused)
    assert "Redis is unreachable" in refused[0][1]["error"]["message"]
    for client in clients:
        client.send(json.dumps({"type": "subscribe", "screen": "steady", "have": {"version": 1, "hash": sha(tree(0))}}))
        assert receive(client, "unchanged")["version"] == 1  # still connected, still at version 1

    redis.start()
    for hub in (a, b):
        wait_until(lambda: call(hub, "GET", "/healthz")[1]["status"] == "ok", what="the hubs to reconnect")
    answer = publish(a, "steady", tree(2))
    assert answer["version"] == 2  # the refused changes took no number
    for client in clients:
        patch = receive(client, "patch")
        assert (patch["from"], patch["version"], patch["hash"]) == (1, 2, sha(tree(2)))
        with pytest.raises(TimeoutError):
            receive(client, "patch", timeout=0.2)  # once, not again
    status, history = call(b, "GET", "/v1/screens/steady/history")
    assert [v["version"] for v in history["versions"]] == [2, 1]
    assert call(b, "GET", "/v1/stats")[1]["sync_seq"] == 0  # no refused sync was half-made


def test_kill_9_of_a_hub_loses_nothing_acknowledged_and_its_clients_resume_on_another(cluster, redis):
    a, b = cluster(2)
    publish(a, "live", tree(0))
    wait_until(lambda: latest_version(b, "live") == 1, what="hub B to learn version 1")
    ws = hello(b, user="u1", device="moves")
    ws.send(json.dumps({"type": "subscribe", "screen": "live"}))
    held = receive(ws, "snapshot")
    # Writers through B while it dies: whatever B acknowledged must be on A afterwards.
    acknowledged_versions, acknowledged_syncs = [], []

    def writer():
        for n in range(1, 10_000):
            try:
                status, answer = call(b, "PUT", "/v1/screens/live", tree(n))
                if status == 200:
                    acknowledged_versions.append(answer["version"])
                status, answer = call(b, "POST", "/v1/syncs", {"target": {"user": "u1"}, "reason": "r%d" % n})
                if status == 200:
                    acknowledged_syncs.append(answer["seq"])
            except OSError:
                return

    thread = threading.Thread(target=writer)
    thread.start()
    wait_until(lambda: len(acknowledged_syncs) >= 20, what="B to acknowledge some writes")
    b.process.kill()
    b.process.wait()
    thread.join()
    assert acknowledged_versions and acknowledged_syncs

    wait_until(lambda: latest_version(a, "live") >= max(acknowledged_versions), what="A to apply B's last entries")
    # B may have appended an entry it died before acknowledging (durable, so A applies it too):
    # wait until A has applied the stream's last entry, so that `newest` is the final version.
    last_entry = int(redis.command("XREVRANGE", "pushhub:journal", "+", "-", "COUNT", "1").split()[0].split("-")[1])
    wait_until(lambda: call(a, "GET", "/v1/stats")[1]["cluster"]["entry"] >= last_entry,
               what="A to apply the journal's last entry")
    status, history = call(a, "GET", "/v1/screens/live/history")
    newest = history["versions"][0]
    status, syncs = call(a, "GET", "/v1/syncs?limit=1000")
    assert set(acknowledged_syncs) <= {sync["seq"] for sync in syncs["syncs"]}

    # The client moves to A and resumes from what it held: a patch (or snapshot) to the newest
    # version, and every sync after its last_sync — the acknowledged ones among them.
    moved = hello(a, user="u1", device="moves", last_sync=0)
    replayed = set()
    moved.send(json.dumps({"type": "subscribe", "screen": "live",
                           "have": {"version": held["version"], "hash": held["hash"]}}))
    deadline = time.time() + 5
    update = None
    while update is None or not set(acknowledged_syncs) <= replayed:
        message = json.loads(moved.recv(timeout=max(0.01, deadline - time.time())))
        if message["type"] == "sync":
            replayed.add(message["seq"])
        elif message["type"] in ("patch", "snapshot"):
            update = message
    assert update["version"] == newest["version"] and update["hash"] == newest["hash"]
    if update["type"] == "patch":
        assert update["from"] == held["version"]
        assert sha(jsonpatch.apply_patch(held["tree"], update["ops"])) == newest["hash"]


def test_the_shared_snapshot_lets_a_new_hub_start_from_it(cluster, redis):
    import http.client
    (a,) = cluster(1)
    connection = http.client.HTTPConnection("127.0.0.1", a.admin_port, timeout=10)
    headers = {"Authorization": "Bearer " + ADMIN_TOKEN, "Content-Type": "application/json"}
    for n in range(1005):
        connection.request("POST", "/v1/syncs", json.dumps({"target": {"all": True}, "reason": "s%d" % n}), headers)
        response = connection.getresponse()
        assert response.status == 200, response.read()
        response.read()
    connection.close()
    wait_until(lambda: redis.command("HGET", "pushhub:snapshot", "lsn") == "1000", what="the snapshot at entry 1000")
    # A hub that starts now reads the snapshot and the 5 entries after it.
    (b,) = cluster(1)
    log = [json.loads(line) for line in open(b.log_path)]
    loaded = next(entry for entry in log if entry["msg"] == "loaded the shared state from Redis")
    assert loaded["entry"] == 1005
    status, stats = call(b, "GET", "/v1/stats")
    assert stats["sync_seq"] == 1005 and stats["cluster"]["entry"] == 1005
    # Shrunk to the snapshot, the history still rebuilds the same state: delete the entries the
    # snapshot covers and start a third hub.
    redis.command("XTRIM", "pushhub:journal", "MINID", "0-1001")
    (c,) = cluster(1)
    assert call(c, "GET", "/v1/stats")[1]["sync_seq"] == 1005


def hubs_listed(hub):
    return {entry["hub"] for entry in call(hub, "GET", "/v1/stats")[1]["cluster"]["hubs"]}


def test_answers_that_count_clients_cover_every_live_hub(cluster):
    a, b, c = cluster(3)
    for hub in (a, b, c):
        wait_until(lambda: len(hubs_listed(hub)) == 3, what="every hub to see three in the registry")
    status = hubctl_status(a)
    assert "hub: ok" in status and "hubs: 3 live" in status and "(this hub)" in status
    assert all("127.0.0.1:%d" % hub.port in status for hub in (a, b, c))
    publish(a, "counted", tree(0))
    for hub in (a, b, c):
        wait_until(lambda: latest_version(hub, "counted") == 1, what="every hub to learn version 1")
    subscribers = []
    for hub, count in ((a, 2), (b, 1), (c, 3)):
        for n in range(count):
            ws = hello(hub, device="sub-%d-%d" % (hub.port, n))
            ws.send(json.dumps({"type": "subscribe", "screen": "counted"}))
            receive(ws, "snapshot")
            subscribers.append((hub, ws))
    phone, tablet = hello(a, user="u1", device="phone"), hello(c, user="u1", device="tablet")

    answer = publish(b, "counted", tree(1))
    assert answer["sent"] == 6, answer
    status, answer = call(b, "POST", "/v1/syncs", {"target": {"user": "u1"}, "reason": "counted"})
    assert status == 200 and answer["targeted_online"] == 2, answer
    for ws in (phone, tablet):
        ws.send(json.dumps({"type": "ack", "sync": receive(ws, "sync")["id"]}))
    # Receipts are summed over the hubs the devices are on (A and C), asked through B.
    wait_until(lambda: call(b, "GET", "/v1/syncs/" + answer["id"])[1]["receipts"]
               == {"targeted_online": 2, "delivered": 2, "acked": 2, "pushed": 0, "push_failed": 0}, what="the receipts of both devices")
    status, listing = call(c, "GET", "/v1/syncs")
    assert listing["syncs"][0]["receipts"] == {"targeted_online": 2, "delivered": 2, "acked": 2, "pushed": 0, "push_failed": 0}
    status, answer = call(c, "POST", "/v1/syncs", {"target": {"all": True}, "dry_run": True})
    assert (answer["targeted_online"], answer["users"]) == (8, 1), answer
    status, listing = call(a, "GET", "/v1/clients")
    assert listing["count"] == 8, listing
    status, listing = call(b, "GET", "/v1/clients?user=u1")
    assert sorted(client["device"] for client in listing["clients"]) == ["phone", "tablet"]
    status, screens = call(c, "GET", "/v1/screens")
    assert {s["name"]: s["subscribers"] for s in screens["screens"]}["counted"] == 6
    status, summary = call(a, "GET", "/v1/clients/summary")
    assert summary["count"] == 8
    status, dry = call(a, "PUT", "/v1/screens/counted?dry_run=true", tree(2))
    assert dry["would_send"] == 6 and dry["subscribers"] == 6, dry

    # A hub that stops leaves the registry at once, and counts no longer wait for it.
    for hub, ws in subscribers:
        if hub is b:
            receive(ws, "patch")  # websockets' sync client reads the close only after what came before it
            ws.close()
    assert b.stop() == 0
    wait_until(lambda: len(hubs_listed(a)) == 2, what="hub B to leave the registry")
    started = time.time()
    assert publish(a, "counted", tree(3))["sent"] == 5
    assert time.time() - started < 1.5  # not the 2 s a missing hub's answer would cost


def test_hubs_follow_a_sentinel_failover(hub_factory):
    from redis_server import RedisSentinel
    master = RedisServer()
    replica = RedisServer("--replicaof", "127.0.0.1", str(master.port))
    sentinel = RedisSentinel(master.port)
    try:
        wait_until(lambda: "master_link_status:up" in replica.command("INFO", "replication"), what="the replica to sync")
        a, b = [hub_factory("--allow-anonymous", "--redis-sentinel", "127.0.0.1:%d" % sentinel.port,
                            "--redis-master", "pushhub", data=shared_secrets()) for _ in range(2)]
        publish(a, "failover", tree(0))
        wait_until(lambda: latest_version(b, "failover") == 1, what="hub B to learn version 1")
        ws = subscribed(b, "failover", "stays")
        assert call(a, "GET", "/healthz")[1]["cluster"]["redis"].endswith(":%d/0" % master.port)
        # The entry must be on the replica before the master dies (replication is asynchronous:
        # docs/scale-out.md "Durability").
        wait_until(lambda: replica.command("XLEN", "pushhub:journal") == "1", what="the replica to have the entry")

        master.kill()
        wait_until(lambda: sentinel.master() == ["127.0.0.1", str(replica.port)], timeout=30,
                   what="Sentinel to promote the replica")
        for hub in (a, b):
            wait_until(lambda: call(hub, "GET", "/healthz")[1]["cluster"]["redis"].endswith(":%d/0" % replica.port)
                       and call(hub, "GET", "/healthz")[1]["status"] == "ok", timeout=20,
                       what="the hubs to follow the new master")
        answer = publish(b, "failover", tree(1))
        assert answer["version"] == 2
        patch = receive(ws, "patch")
        assert (patch["from"], patch["version"], patch["hash"]) == (1, 2, sha(tree(1)))
        wait_until(lambda: latest_version(a, "failover") == 2, what="hub A to apply version 2 from the new master")
        # A master name Sentinel does not know stops the start at once, saying so (no crash).
        typo = subprocess.run(
            [os.path.join(BIN, "pushhub"), "--listen", "127.0.0.1:0", "--admin", "127.0.0.1:0", "--data",
             tempfile.mkdtemp(prefix="pushhub-e2e-"), "--redis-sentinel", "127.0.0.1:%d" % sentinel.port,
             "--redis-master", "pushub"], capture_output=True, text=True, timeout=60)
        assert typo.returncode == 1, (typo.returncode, typo.stderr[-500:])
        assert "monitors no master named" in typo.stderr and "pushub" in typo.stderr, typo.stderr[-500:]
    finally:
        sentinel.stop()
        replica.stop()
        master.stop()


def test_a_hub_behind_the_trimmed_journal_reloads_the_shared_snapshot(cluster, redis):
    import http.client
    a, b = cluster(2)
    publish(a, "behind", tree(1))
    wait_until(lambda: latest_version(b, "behind") == 1, what="hub B to learn version 1")
    ws = subscribed(b, "behind", "on-b")

    assert call(a, "PUT", "/v1/cohorts/vip", {"users": ["u1"]})[0] == 200
    b.process.send_signal(signal.SIGSTOP)  # B hears nothing while the others go on
    try:
        publish(a, "behind", tree(2))
        assert call(a, "POST", "/v1/cohorts/vip/users", {"add": ["u2", "u3"], "remove": ["u1"]})[0] == 200
        connection = http.client.HTTPConnection("127.0.0.1", a.admin_port, timeout=10)
        headers = {"Authorization": "Bearer " + ADMIN_TOKEN, "Content-Type": "application/json"}
        for n in range(1000):
            connection.request("POST", "/v1/syncs", json.dumps({"target": {"all": True}, "reason": "s%d" % n}), headers)
            response = connection.getresponse()
            assert response.status == 200
            response.read()
        wait_until(lambda: redis.command("HGET", "pushhub:snapshot", "lsn") == "1000", what="the snapshot at entry 1000")
        # What the retention would do once 10,000 more entries came: the entries B needs are gone.
        redis.command("XTRIM", "pushhub:journal", "MINID", "0-1001")
        publish(a, "behind", tree(3))
    finally:
        b.process.send_signal(signal.SIGCONT)

    # B finds the journal trimmed past it, reloads the snapshot (version 2, 1,000 syncs' seqs),
    # then reads the entries after it (version 3); its client is brought along in order.
    seen = []
    while not seen or seen[-1] < 3:
        message = receive(ws, "patch", timeout=10)
        seen.append(message["version"])
        assert message["from"] == (seen[-2] if len(seen) > 1 else 1)
    assert seen in ([2, 3], [3])
    assert metric(b, "pushhub_redis_snapshot_reloads_total") == 1
    wait_until(lambda: call(b, "GET", "/v1/stats")[1]["cluster"]["entry"] == call(a, "GET", "/v1/stats")[1]["cluster"]["entry"],
               what="hub B to catch up with hub A")
    assert call(b, "GET", "/v1/stats")[1]["sync_seq"] == 1000
    # The snapshot left the cohort's users in its set: the reload read them from there.
    assert call(b, "GET", "/v1/cohorts/vip")[1]["users"] == 2
    assert sorted(call(b, "GET", "/v1/cohorts/vip")[1]["sample"]) == ["u2", "u3"]
    assert call(b, "GET", "/healthz")[1]["status"] == "ok"
    # And B can write again: its next change follows on from the others'.
    answer = publish(b, "behind", tree(4))
    assert answer["version"] == 4


def test_hubs_share_a_redis_over_tls(hub_factory, tmp_path):
    """rediss:// with --redis-ca: the hubs verify Redis's certificate; a hub that does not trust it
    does not start, and says why."""
    from test_tls import make_certificate
    certificate, key = make_certificate(str(tmp_path), "redis")
    server = RedisServer(tls=(certificate, key))
    try:
        a, b = [hub_factory("--allow-anonymous", "--redis", server.url, "--redis-ca", certificate,
                            data=shared_secrets()) for _ in range(2)]
        tree = {"type": "column", "children": [{"type": "text", "id": "t", "text": "over TLS"}]}
        publish(a, "tls", tree)
        wait_until(lambda: latest_version(b, "tls") == 1, what="hub B to learn version 1 over TLS")
        assert "pushhub:" in server.command("CLIENT", "LIST")  # the hubs' links, named, on the TLS port
        # Without the CA the certificate is refused: the hub does not start, and says why.
        untrusting = subprocess.run(
            [os.path.join(BIN, "pushhub"), "--listen", "127.0.0.1:0", "--admin", "127.0.0.1:0",
             "--data", str(tmp_path / "untrusting"), "--redis", server.url],
            capture_output=True, text=True, timeout=60)
        assert untrusting.returncode != 0
        assert "not trusted" in untrusting.stderr and "--redis-ca" in untrusting.stderr, untrusting.stderr[-800:]
    finally:
        server.stop()


def test_a_cohort_of_a_million_lives_in_a_redis_set_and_a_new_hub_reads_it_in_batches(cluster, redis):
    import http.client
    a, b = cluster(2)
    connection = http.client.HTTPConnection("127.0.0.1", a.admin_port, timeout=60)
    headers = {"Authorization": "Bearer " + ADMIN_TOKEN, "Content-Type": "application/json"}

    def admin(method, path, body):
        connection.request(method, path, json.dumps(body), headers)
        response = connection.getresponse()
        answer = json.loads(response.read())
        assert response.status == 200, answer
        return answer

    # 1,000,000 ids in 10 batches of 100,000, as `hubctl cohort set` sends them.
    admin("PUT", "/v1/cohorts/big", {"users": ["u%d" % n for n in range(100_000)]})
    for batch in range(1, 10):
        admin("POST", "/v1/cohorts/big/users", {"add": ["u%d" % n for n in range(batch * 100_000, (batch + 1) * 100_000)]})
    admin("POST", "/v1/cohorts/big/users", {"remove": ["u0"]})
    assert redis.command("SCARD", "pushhub:cohort:big") == "999999"
    wait_until(lambda: call(b, "GET", "/v1/cohorts/big")[1].get("users") == 999_999, what="hub B to apply the batches")
    # Enough entries for a snapshot: it names the cohort and leaves its users in the set.
    for n in range(1000):
        admin("POST", "/v1/syncs", {"target": {"user": "nobody"}, "reason": "s%d" % n})
    wait_until(lambda: int(redis.command("HGET", "pushhub:snapshot", "lsn") or 0) >= 1000, what="a snapshot")
    # The syncs take ~220 KB; the ids would add ~11 MB.
    assert int(redis.command("HSTRLEN", "pushhub:snapshot", "records")) < 1_000_000

    # A hub started now reads the snapshot, then the set in batches (SSCAN), then the entries after.
    (c,) = cluster(1)
    assert call(c, "GET", "/v1/cohorts/big")[1]["users"] == 999_999
    member, former = hello(c, user="u987654", device="member"), hello(c, user="u0", device="former")
    status, answer = call(a, "POST", "/v1/syncs", {"target": {"cohort": "big"}, "reason": "for-the-million"})
    assert status == 200, answer
    assert receive(member, "sync")["reason"] == "for-the-million"
    with pytest.raises(TimeoutError):
        receive(former, "sync", timeout=0.5)
    status, deleted = call(b, "DELETE", "/v1/cohorts/big")
    assert status == 200 and redis.command("EXISTS", "pushhub:cohort:big") == "0"


def test_targeted_online_counts_every_device_on_every_hub(cluster):
    """Issue 24 item 4: a sync through B to a user with devices on A and C answered
    targeted_online 1. The test holds the clients, so it knows the sum: every answer must equal
    it, right after the hubs start (before B's next heartbeat has read that C joined) and later."""
    a, b, c = cluster(3)
    devices = {"phone": hello(a, user="u1", device="phone"), "tablet": hello(c, user="u1", device="tablet")}
    others = [hello(hub, user="u2", device="other-%d" % hub.port) for hub in (a, b, c)]
    for round in range(3):
        if round == 2:
            for hub in (a, b, c):
                wait_until(lambda: len(hubs_listed(hub)) == 3, what="every hub to see three in the registry")
        for via in (b, a, c):
            status, answer = call(via, "POST", "/v1/syncs", {"target": {"user": "u1"}, "reason": "round %d" % round})
            assert status == 200 and answer["targeted_online"] == 2, (via.port, answer)
            for ws in devices.values():
                assert receive(ws, "sync")["seq"] == answer["seq"]
        status, answer = call(b, "POST", "/v1/syncs", {"target": {"all": True}, "reason": "all"})
        assert status == 200 and answer["targeted_online"] == 5, answer
        status, dry = call(a, "POST", "/v1/syncs", {"target": {"user": "u1"}, "dry_run": True})
        assert dry["targeted_online"] == 2 and dry["users"] == 1, dry
        for ws in list(devices.values()) + others:
            receive(ws, "sync")


def test_a_hub_whose_secrets_differ_from_the_clusters_refuses_to_join(cluster, redis):
    """Issue 24 item 9: hubs with different secrets joined one cluster silently; a client's token
    from one was refused by another after a failover. The message names what differs by
    fingerprint, never the secret."""
    a, = cluster(1)
    wait_until(lambda: len(hubs_listed(a)) == 1, what="hub A to register")
    for name, value in (("jwt.secret", "another-secret-" + "x" * 20), ("admin.token", "another-admin-token-" + "y" * 20)):
        folder = shared_secrets()
        with open(os.path.join(folder, "data", name), "w") as file:
            file.write(value + "\n")
        result = subprocess.run(
            [os.path.join(BIN, "pushhub"), "--listen", "127.0.0.1:0", "--admin", "127.0.0.1:0",
             "--data", os.path.join(folder, "data"), "--allow-anonymous", "--redis", redis.url],
            capture_output=True, text=True, timeout=30)
        assert result.returncode != 0, result.stderr
        what = "JWT secret" if name == "jwt.secret" else "admin token"
        assert "refusing to join" in result.stderr and what in result.stderr, result.stderr
        assert value not in result.stderr and SECRET not in result.stderr and ADMIN_TOKEN not in result.stderr
    # The same secrets join.
    b, = cluster(1)
    wait_until(lambda: len(hubs_listed(b)) == 2, what="hub B to join")


def test_redis_up_is_exported_only_when_scaled_out_and_a_clean_stop_logs_no_error(cluster, hub_factory):
    """Issue 24 item 14: a standalone hub exported pushhub_redis_up 0 (an alert on it fired for
    every hub without Redis), and a clean SIGTERM of a scaled-out hub logged level:error about
    losing Redis."""
    standalone = hub_factory("--dev")
    status, text = call(standalone, "GET", "/metrics")
    assert status == 200 and "pushhub_redis_up" not in text
    a, = cluster(1)
    wait_until(lambda: metric(a, "pushhub_redis_up") == 1, what="the Redis link to come up")
    assert a.stop() == 0
    errors = [line for line in open(a.log_path) if json.loads(line).get("level") == "error"]
    assert errors == [], errors


def test_a_running_hub_that_meets_a_hub_with_other_secrets_stops_taking_changes(cluster, redis):
    """Two hubs that load the shared state at the same moment each find no other hub to compare
    secrets with (the start-up check of the test above cannot see them). The first heartbeat
    that lists a hub with other fingerprints stops this one taking changes: 503 naming what
    differs, /healthz degraded — no silent split. Such a hub is written into the registry here
    (a real pair started at once loses the race to the start-up check nearly every time)."""
    a, = cluster(1)
    assert call(a, "PUT", "/v1/screens/split", tree(0))[0] == 200
    other = json.dumps({"hub": "other:1:1", "keys": {"jwt": "0123456789abcdef", "admin": "fedcba9876543210"}})
    expires = int(redis.command("TIME").split()[0]) * 1000 + 60_000
    redis.command("HSET", "pushhub:hubs:info", "other:1:1", other)
    redis.command("ZADD", "pushhub:hubs", str(expires), "other:1:1")
    wait_until(lambda: call(a, "PUT", "/v1/screens/split", tree(1))[0] == 503, what="the split to be seen")
    status, answer = call(a, "PUT", "/v1/screens/split", tree(1))
    assert answer["error"]["code"] == "shared_state_unavailable", answer
    assert "JWT secret" in answer["error"]["message"] and "admin token" in answer["error"]["message"], answer
    status, health = call(a, "GET", "/healthz")
    assert health["status"] == "degraded", health
    hubs = call(a, "GET", "/v1/stats")[1]["cluster"]["hubs"]
    assert len(hubs) == 2 and all("keys" not in hub for hub in hubs + health["cluster"]["hubs"]), hubs
