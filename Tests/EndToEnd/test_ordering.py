"""Ordering under concurrency (issue 8; DESIGN §5 continuity, §9 "Who owns what"): three
orders a hub keeps only if one control plane owns hub state and every loop applies what it
sends in one order, whatever the timing.

1. A sync either reaches a signed-in client live or is in its `last_sync` replay, and a
   connection gets syncs in seq order (a client can only resume from the highest seq it saw):
   clients reconnecting in a storm while syncs are posted never miss a seq (duplicates allowed,
   gaps not).
2. A subscriber receives every version after the one it holds, in order, or one catch-up patch
   from exactly its version: under a publish storm every chain applies with `jsonpatch`, every
   hash agrees with `rfc8785`, versions never go back.
3. Layer ranges are checked and stored in one step: of 20 concurrent overlapping PUTs into one
   layer, exactly one is accepted.

Each test is sized so that the hub of commit 6ddde1a (state shared by the loops behind locks)
fails it in most runs; its docstring says how that hub fails. Runtime about 40 s in all.
"""
import asyncio
import hashlib
import http.client
import json
import random
import threading
import time
from concurrent.futures import ThreadPoolExecutor

import jsonpatch
import rfc8785
from websockets.asyncio.client import connect
from websockets.exceptions import ConnectionClosed, InvalidHandshake

from admin import call, publish


def sha(tree):
    return hashlib.sha256(rfc8785.dumps(tree)).hexdigest()


class Admin:
    """One keep-alive HTTP/1.1 connection to the admin API (one per thread)."""

    def __init__(self, hub):
        self.hub = hub
        self.connection = None

    def open(self):
        if self.connection is None:
            self.connection = http.client.HTTPConnection("127.0.0.1", self.hub.admin_port, timeout=10)
            self.connection.connect()
        return self

    def request(self, method, path, body):
        payload = json.dumps(body).encode()
        headers = {"Authorization": "Bearer " + self.hub.token, "Content-Type": "application/json"}
        for attempt in range(2):
            self.open()
            try:
                self.connection.request(method, path, payload, headers)
                response = self.connection.getresponse()
                data = response.read()
                if response.getheader("Connection", "").lower() == "close":
                    self.close()
                return response.status, json.loads(data) if data else None
            except (ConnectionError, http.client.HTTPException):
                # A keep-alive connection the hub closed (idle timeout): one retry on a new one.
                self.close()
                if attempt:
                    raise

    def close(self):
        if self.connection is not None:
            self.connection.close()
            self.connection = None


def hello_message(device, last_sync=None, app_version="6.0.0"):
    message = {"type": "hello", "protocol": 1, "device": device, "app": {"platform": "ios", "version": app_version}}
    if last_sync is not None:
        message["last_sync"] = last_sync
    return json.dumps(message)


async def next_json(ws, timeout=5.0):
    return json.loads(await asyncio.wait_for(ws.recv(), timeout))


def raise_if_failed(tasks):
    """A client task that died of something unexpected fails the test now, not at a deadline."""
    for task in tasks:
        if task.done():
            task.result()


# ---------------------------------------------------------------------------------------------
# 1. Reconnect storm: no lost syncs
# ---------------------------------------------------------------------------------------------

STORM_CLIENTS = 48
STORM_SECONDS = 18.0
SYNC_POSTERS = 4


def test_reconnect_storm_loses_no_sync(hub_factory):
    """48 anonymous clients reconnect in a loop (hello with `last_sync` = the highest seq seen
    so far, read for 0-200 ms, close) while 4 admin posters send syncs to all (no collapse) back
    to back for 18 s; after posting stops each client reconnects once more with `last_sync` to
    collect the tail. Proven: every client received every seq in (its first welcome's
    `sync_seq`, the last posted seq] at least once, live or replayed.

    How the old hub loses syncs (seen in its runs; the failure message counts the syncs that
    arrived after a higher seq on the same connection):
    - the admin request resolves who is online before it appends the sync, and a hello
      registers before it reads the log: a hello between the two gets neither;
    - live deliveries reach a loop out of seq order: concurrent admin requests post them to the
      loops in whatever order they finish, and a sync without `spread` is put on the loop's
      timer (due "now" by the admin thread's clock, later than the loop's tick) while the next
      one is delivered at once. A client that leaves between the two resumes after the gap."""
    hub = hub_factory("--dev", "--hello-timeout", "5s")
    url = hub.url + "/v1/connect"
    stop_posting = threading.Event()
    posted = []  # the seq of every sync posted, by every poster
    posted_lock = threading.Lock()
    poster_errors = []

    def poster(n):
        admin = Admin(hub).open()
        try:
            while not stop_posting.is_set():
                status, answer = admin.request("POST", "/v1/syncs", {"target": {"all": True}, "reason": "storm-%d" % n})
                if status != 200:
                    poster_errors.append((status, answer))
                    return
                with posted_lock:
                    posted.append(answer["seq"])
        except Exception as error:  # reported by the test, not lost in a thread
            poster_errors.append(repr(error))
        finally:
            admin.close()

    class Client:
        def __init__(self, index):
            self.index = index
            self.device = "storm-%d" % index
            self.rng = random.Random(1000 + index)
            self.first = None  # the first welcome's sync_seq
            self.highest = None  # the highest seq seen (last_sync of the next hello)
            self.seen = set()
            self.sessions = 0
            self.errors = []
            self.session_highest = 0
            self.reordered = 0  # diagnostics: a new seq below one this connection already brought

        def note(self, message):
            if message.get("type") == "sync":
                seq = message["seq"]
                if seq not in self.seen and seq < self.session_highest:
                    self.reordered += 1
                self.seen.add(seq)
                self.session_highest = max(self.session_highest, seq)
                self.highest = max(self.highest, seq)

        async def session(self, duration, until_seq=None):
            """One connection: hello, welcome, read for `duration` s (or until `until_seq`), close."""
            async with connect(url, open_timeout=10, close_timeout=2, max_queue=256) as ws:
                await ws.send(hello_message(self.device, self.highest))
                welcome = await next_json(ws, 10)
                if welcome.get("type") != "welcome":
                    self.errors.append("hello answered %r" % welcome)
                    return
                if self.first is None:
                    self.first = self.highest = welcome["sync_seq"]
                self.sessions += 1
                self.session_highest = 0
                try:
                    async with asyncio.timeout(duration):
                        while until_seq is None or self.highest < until_seq:
                            self.note(json.loads(await ws.recv()))
                except TimeoutError:
                    pass

        async def storm(self, stop):
            while not stop.is_set():
                try:
                    await self.session(self.rng.uniform(0.0, 0.2))
                except (ConnectionClosed, InvalidHandshake, OSError, TimeoutError) as error:
                    self.errors.append(repr(error))  # counted, and the client reconnects
                await asyncio.sleep(0)

    clients = [Client(i) for i in range(STORM_CLIENTS)]

    async def run():
        stop = asyncio.Event()
        tasks = [asyncio.create_task(client.storm(stop)) for client in clients]
        # Every client has its first welcome before the first sync is posted.
        deadline = time.monotonic() + 15
        while any(client.first is None for client in clients):
            raise_if_failed(tasks)
            assert time.monotonic() < deadline, "clients did not get their first welcome in 15 s"
            await asyncio.sleep(0.02)
        threads = [threading.Thread(target=poster, args=(n,), daemon=True) for n in range(SYNC_POSTERS)]
        for thread in threads:
            thread.start()
        started = time.monotonic()
        while time.monotonic() - started < STORM_SECONDS and not poster_errors:
            await asyncio.sleep(0.1)
            raise_if_failed(tasks)
        stop_posting.set()
        await asyncio.to_thread(lambda: [thread.join(15) for thread in threads])
        stop.set()
        await asyncio.gather(*tasks)
        last = max(posted)
        # The tail: one more reconnect each with last_sync, reading until the last seq (the
        # replay is right after welcome) or 10 s.
        await asyncio.gather(*(client.session(10.0, until_seq=last) for client in clients))
        return last, time.monotonic() - started

    last, elapsed = asyncio.run(run())
    assert not poster_errors, poster_errors[:3]
    assert len(posted) == len(set(posted)), "a seq was given out twice"
    failures = []
    for client in clients:
        missed = sorted(set(range(client.first + 1, last + 1)) - client.seen)
        if missed:
            failures.append("client %d missed %d of %d seqs, e.g. %s" % (
                client.index, len(missed), last - client.first, missed[:8]))
    summary = "%d syncs posted in %.1f s, %d sessions, %d connection errors, %d syncs arrived after a higher seq" % (
        len(posted), elapsed, sum(c.sessions for c in clients), sum(len(c.errors) for c in clients),
        sum(c.reordered for c in clients))
    assert not failures, "%d of %d clients lost syncs (%s):\n%s" % (len(failures), len(clients), summary, "\n".join(failures))
    # The storm was one: many syncs, and every client came and went many times while they flowed.
    assert len(posted) >= 500 and min(c.sessions for c in clients) >= 10, summary


# ---------------------------------------------------------------------------------------------
# 2. Subscribe storm: no skipped versions
# ---------------------------------------------------------------------------------------------

SUBSCRIBERS = 10
SCREEN_POSTERS = 2
SCREEN_SECONDS = 12.0
SCREEN = "storm/board"


def test_subscribe_storm_chains_apply_and_never_go_back(hub_factory):
    """A screen of keyed children is republished as fast as the admin API answers by 2 posters
    for 12 s; a PUT changes a leaf, or adds, removes or moves keyed children, or changes only a
    component that half of the clients do not see (`min_app_version` above their app), or
    republishes the same tree. Meanwhile 10 clients keep resubscribing (unsubscribe, then
    subscribe alternately with `have` = the version and hash they hold and without; a second
    unsubscribe's `not_subscribed` marks where the old subscription's messages end) and now and
    then reconnect. Proven, for every message: a `patch` starts from exactly the version the
    client holds and `jsonpatch` applies it; the tree's RFC 8785 SHA-256 equals the message's
    `hash`; `unchanged` confirms the hash held; versions never go back (across resubscribes and
    reconnects too). A client that sees a violation counts it, drops its tree and resubscribes
    without `have`, as a real client would.

    How the old hub fails: a version that does not change a subscriber's rendition (same tree,
    or a change it does not see) moves its subscription on without a message, and the next
    patch starts from a version the client never had (`from: 20` to a client holding 13, the
    issue's report). That happens whatever the timing, every run, for every client; with only
    versions that change every rendition the old hub kept the chains intact under this storm."""
    hub = hub_factory("--dev", "--hello-timeout", "5s")
    rows = [{"id": "k%d" % i, "type": "row", "n": i, "tags": ["t%d" % i]} for i in range(8)]
    beta = {"id": "beta", "type": "beta", "min_app_version": "7.0.0", "n": 0}
    shared = {"tree": {"type": "screen", "title": "board", "rev": "start", "children": rows[:4] + [beta] + rows[4:]},
              "next_id": 8}
    publish(hub, SCREEN, shared["tree"])
    tree_lock = threading.Lock()
    stop_posting = threading.Event()
    published = []
    poster_errors = []

    def mutate(rng, poster, n):
        """The next tree: a visible change (with a new `rev`), a change only 7.x clients see, or
        the same tree again."""
        with tree_lock:
            tree = shared["tree"]
            children = tree["children"]
            roll = rng.random()
            if roll < 0.15:
                return json.dumps(tree)  # the same tree: a version no client's rendition changes by
            if roll < 0.3:
                next(c for c in children if c["id"] == "beta")["n"] += 1  # 6.x clients do not see it
                return json.dumps(tree)
            tree["rev"] = "p%d-%d" % (poster, n)
            if roll < 0.5 and len(children) < 16:
                children.insert(rng.randrange(len(children) + 1),
                                {"id": "k%d" % shared["next_id"], "type": "row", "n": shared["next_id"], "tags": []})
                shared["next_id"] += 1
            elif roll < 0.6 and len(children) > 5:
                victim = rng.choice([i for i, c in enumerate(children) if c["id"] != "beta"])
                children.pop(victim)
            elif roll < 0.8:
                children.insert(rng.randrange(len(children)), children.pop(rng.randrange(len(children))))
            else:
                child = rng.choice([c for c in children if c["id"] != "beta"])
                child["n"] += 1
                child["tags"] = child["tags"][-2:] + ["x%d" % n]
            return json.dumps(tree)

    def poster(n):
        rng = random.Random(n)
        admin = Admin(hub).open()
        try:
            count = 0
            while not stop_posting.is_set():
                count += 1
                body = mutate(rng, n, count)
                status, answer = admin.request("PUT", "/v1/screens/" + SCREEN, json.loads(body))
                if status != 200:
                    poster_errors.append((status, answer))
                    return
                published.append(answer["version"])
        except Exception as error:
            poster_errors.append(repr(error))
        finally:
            admin.close()

    class Subscriber:
        def __init__(self, index):
            self.index = index
            self.rng = random.Random(2000 + index)
            self.app_version = "6.0.0" if index % 2 else "7.1.0"  # without or with the beta component
            self.tree = None
            self.version = None
            self.hash = None
            self.highest = 0  # the highest version ever held: versions never go back
            self.messages = 0
            self.patches = 0
            self.resubscribes = 0
            self.violations = []
            self.lost = False  # holding nothing after a violation, until the next snapshot

        def violation(self, text):
            """Counts it; the client then does what a real one does: drops what it holds and
            resubscribes without `have` (until then, patches are ignored, not counted again)."""
            self.violations.append(text)
            self.tree = self.version = self.hash = None
            self.lost = True

        def hold(self, tree, version, digest, message):
            if version < self.highest:
                self.violation("%s went back to version %d after %d" % (message["type"], version, self.highest))
                return
            self.tree, self.version, self.hash = tree, version, digest
            self.highest = version

        def receive(self, message):
            self.messages += 1
            kind = message.get("type")
            if self.lost and kind in ("patch", "unchanged"):
                return  # still the chain it gave up on
            if kind == "snapshot":
                self.lost = False
                if sha(message["tree"]) != message["hash"]:
                    self.violation("snapshot %d: hash %s is not the tree's" % (message["version"], message["hash"][:12]))
                    return
                self.hold(message["tree"], message["version"], message["hash"], message)
            elif kind == "patch":
                self.patches += 1
                if self.tree is None:
                    self.violation("patch %d->%d while holding nothing" % (message["from"], message["version"]))
                elif message["from"] != self.version:
                    self.violation("patch from %d to %d while holding version %d" % (
                        message["from"], message["version"], self.version))
                elif message["version"] <= message["from"]:
                    self.violation("patch from %d to %d goes back" % (message["from"], message["version"]))
                else:
                    try:
                        tree = jsonpatch.apply_patch(self.tree, message["ops"], in_place=True)
                    except (jsonpatch.JsonPatchException, jsonpatch.JsonPointerException) as error:
                        self.violation("patch %d->%d does not apply: %s" % (message["from"], message["version"], error))
                        return
                    if sha(tree) != message["hash"]:
                        self.violation("after patch %d->%d the hash differs" % (message["from"], message["version"]))
                        return
                    self.hold(tree, message["version"], message["hash"], message)
            elif kind == "unchanged":
                if self.tree is None or message["hash"] != self.hash:
                    self.violation("unchanged at %d with a hash not held" % message["version"])
                else:
                    self.hold(self.tree, message["version"], message["hash"], message)
            else:
                self.violation("unexpected message %r" % message)

        def subscribe_message(self):
            self.resubscribes += 1
            message = {"type": "subscribe", "screen": SCREEN}
            if self.tree is not None and self.resubscribes % 2 == 0:
                message["have"] = {"version": self.version, "hash": self.hash}
            return json.dumps(message)

        async def read_until_barrier(self, ws):
            """After an unsubscribe: what the old subscription still had on the wire, then the
            `not_subscribed` answer to a second unsubscribe, which comes after all of it."""
            while True:
                message = await next_json(ws)
                if message.get("type") == "error" and message.get("code") == "not_subscribed":
                    return
                self.receive(message)

        async def connection(self, stop):
            async with connect(url, open_timeout=10, close_timeout=2, max_queue=256) as ws:
                await ws.send(hello_message("sub-%d" % self.index, app_version=self.app_version))
                assert (await next_json(ws))["type"] == "welcome"
                await ws.send(self.subscribe_message())
                while not stop.is_set():
                    try:
                        async with asyncio.timeout(self.rng.uniform(0.05, 0.4)):
                            while not self.lost:
                                self.receive(json.loads(await ws.recv()))
                    except TimeoutError:
                        pass
                    if not self.lost and self.rng.random() < 0.2:
                        return  # reconnect
                    await ws.send(json.dumps({"type": "unsubscribe", "screen": SCREEN}))
                    await ws.send(json.dumps({"type": "unsubscribe", "screen": SCREEN}))
                    await self.read_until_barrier(ws)
                    await ws.send(self.subscribe_message())

        async def run(self, stop):
            while not stop.is_set():
                await self.connection(stop)

    url = hub.url + "/v1/connect"
    subscribers = [Subscriber(i) for i in range(SUBSCRIBERS)]

    async def run():
        stop = asyncio.Event()
        tasks = [asyncio.create_task(s.run(stop)) for s in subscribers]
        threads = [threading.Thread(target=poster, args=(n,), daemon=True) for n in range(SCREEN_POSTERS)]
        for thread in threads:
            thread.start()
        started = time.monotonic()
        while time.monotonic() - started < SCREEN_SECONDS and not poster_errors:
            await asyncio.sleep(0.1)
            raise_if_failed(tasks)
        stop_posting.set()
        await asyncio.to_thread(lambda: [thread.join(15) for thread in threads])
        stop.set()
        await asyncio.gather(*tasks)
        return time.monotonic() - started

    elapsed = asyncio.run(run())
    assert not poster_errors, poster_errors[:3]
    summary = "%d publishes in %.1f s (last version %d), %d messages, %d patches, %d resubscribes" % (
        len(published), elapsed, max(published), sum(s.messages for s in subscribers),
        sum(s.patches for s in subscribers), sum(s.resubscribes for s in subscribers))
    failures = ["client %d: %d violations, first: %s" % (s.index, len(s.violations), "; ".join(s.violations[:3]))
                for s in subscribers if s.violations]
    assert not failures, "%d of %d clients saw violations (%s):\n%s" % (
        len(failures), len(subscribers), summary, "\n".join(failures))
    # The storm was one: many versions, and patches and resubscribes for every client.
    assert len(published) >= 500 and all(s.patches > 0 and s.resubscribes >= 5 for s in subscribers), summary


# ---------------------------------------------------------------------------------------------
# 3. Overlapping layers: exactly one of concurrent PUTs
# ---------------------------------------------------------------------------------------------

LAYER_ROUNDS = 30
LAYER_PUTS = 20
BACKGROUND_EXPERIMENTS = 1000


def test_concurrent_overlapping_layer_puts_accept_exactly_one(hub_factory):
    """A hub holding 1000 running experiments (each in a layer of its own); then 30 rounds; in
    each, 20 threads each holding its own admin connection are released by a barrier to PUT a
    running experiment into one fresh layer with ranges [0,6000) and [4000,10000) alternately
    (every pair overlaps). Proven: in every round exactly one PUT is answered 200 and the other
    19 are 422 naming the overlap, and the layer then holds exactly that one experiment.

    The old hub checks the layer against one snapshot of the experiment set and stores into a
    later one; two PUTs whose checks overlap in time are both accepted. The background
    experiments make the check as long as on a hub in real use (without them 1 round in 12
    breaks; with them 1 in 2 to 1 in 8)."""
    hub = hub_factory("--dev")

    def background(first):
        admin = Admin(hub).open()
        try:
            for i in range(first, BACKGROUND_EXPERIMENTS, 4):
                status, answer = admin.request("PUT", "/v1/experiments/bg-%d" % i, {
                    "status": "running", "layer": "bg-%d" % i, "layer_range": [0, 100], "variants": [{"key": "A"}]})
                assert status == 200, answer
        finally:
            admin.close()

    with ThreadPoolExecutor(4) as pool:
        list(pool.map(background, range(4)))  # re-raises a failed PUT
    results = []
    for round_number in range(LAYER_ROUNDS):
        layer = "layer-r%d" % round_number
        barrier = threading.Barrier(LAYER_PUTS)
        answers = [None] * LAYER_PUTS

        def put(i):
            admin = Admin(hub).open()  # connected before the barrier: only the request races
            definition = {"status": "running", "layer": layer,
                          "layer_range": [0, 6000] if i % 2 == 0 else [4000, 10000],
                          "variants": [{"key": "A", "weight": 1}, {"key": "B", "weight": 1}]}
            try:
                barrier.wait(timeout=10)
                answers[i] = admin.request("PUT", "/v1/experiments/r%d-e%d" % (round_number, i), definition)
            except Exception as error:
                answers[i] = (None, repr(error))
            finally:
                admin.close()

        threads = [threading.Thread(target=put, args=(i,)) for i in range(LAYER_PUTS)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(30)
        statuses = [answer[0] if answer else None for answer in answers]
        accepted = [i for i, status in enumerate(statuses) if status == 200]
        unexpected = [(i, answers[i]) for i, status in enumerate(statuses) if status not in (200, 422)]
        assert not unexpected, unexpected[:3]
        for i, status in enumerate(statuses):
            if status == 422:
                assert "overlaps" in answers[i][1]["error"]["message"], answers[i]
        status, listing = call(hub, "GET", "/v1/experiments")
        assert status == 200
        stored = sorted(e["key"] for e in listing["experiments"] if e["key"].startswith("r%d-" % round_number))
        results.append((round_number, accepted, stored))
    bad = ["round %d: %d accepted (%s), stored %s" % (r, len(a), ", ".join("e%d" % i for i in a), s)
           for r, a, s in results if len(a) != 1 or len(s) != 1]
    assert not bad, "%d of %d rounds broke the layer:\n%s" % (len(bad), LAYER_ROUNDS, "\n".join(bad))


def test_a_spread_sync_is_not_lost_when_a_later_one_arrived_first(hub_factory):
    """Found by the soak (bench/soak/repro_spread_gap.py): a sync spread over 20 s, then a plain
    one; clients whose turn in the spread has not come receive the plain one first, reconnect
    with last_sync = its seq, and must still get the spread one — live or in the replay."""
    import json as _json
    from websockets.sync.client import connect as ws_connect
    hub = hub_factory("--dev", "--loops", "2")
    clients = []
    for i in range(6):
        ws = ws_connect(hub.url + "/v1/connect")
        ws.send(_json.dumps({"type": "hello", "protocol": 1, "device": "d%d" % i, "app": {"platform": "ios", "version": "1.0.0"}}))
        _json.loads(ws.recv(timeout=5))
        clients.append(ws)
    spread = call(hub, "POST", "/v1/syncs", {"target": {"all": True}, "spread": "20s"})[1]
    plain = call(hub, "POST", "/v1/syncs", {"target": {"all": True}})[1]

    def seqs(ws, seconds):
        got, deadline = [], time.time() + seconds
        while True:
            try:
                got.append(_json.loads(ws.recv(timeout=max(0.0, deadline - time.time())))["seq"])
            except TimeoutError:
                return got

    early = 0
    for i, ws in enumerate(clients):
        before = seqs(ws, 0.3)
        ws.close()
        early += spread["seq"] not in before
        again = ws_connect(hub.url + "/v1/connect")
        again.send(_json.dumps({"type": "hello", "protocol": 1, "device": "d%d" % i, "last_sync": max(before),
                                "app": {"platform": "ios", "version": "1.0.0"}}))
        _json.loads(again.recv(timeout=5))
        after = seqs(again, 0.5)
        again.close()
        assert spread["seq"] in before + after, "d%d got %s then %s: the spread sync is lost" % (i, before, after)
        assert plain["seq"] in before
    assert early > 0, "every client had its turn at once: the scenario did not happen"
