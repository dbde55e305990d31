"""Clients of protocol v1 that check what they receive.

`Client` (Python `websockets`): hello (JWT or anonymous), subscribe with `have`, patch chains
(every patch must start at the version held — `from` — and its result must hash to `hash`: JSON
Patch by `jsonpatch`, RFC 8785 by `rfc8785`), versions never going back, syncs recorded and acked,
`last_sync` on reconnect, unsubscribe/resubscribe with a round-trip marker. Steady clients
reconnect for the whole run; short clients (churn, bursts) connect once.

`slow_consumer` (raw socket, tiny receive buffer): subscribes to the big screens, stops reading
for a while, then either reads the backlog and the catch-up (and checks the chain) or vanishes.
"""
import asyncio
import json
import random

import jsonpatch
import websockets
from websockets.asyncio.client import connect as ws_connect

from common import RawWS, jcs_hash, make_jwt, now

CONNECT_ERRORS = (OSError, asyncio.TimeoutError, websockets.exceptions.WebSocketException, EOFError,
                  ConnectionError, asyncio.IncompleteReadError)


class Connection:
    __slots__ = ("hello_t", "welcome_t", "end_t", "last_sync", "welcome_seq", "settled", "first")

    def __init__(self, hello_t, last_sync, first):
        self.hello_t = hello_t
        self.welcome_t = None
        self.end_t = None
        self.last_sync = last_sync
        self.welcome_seq = None
        self.settled = False
        self.first = first


def token_for(drv, identity):
    claims = {"sub": identity.user, "iat": int(drv.wall()), "exp": int(drv.wall()) + 7 * 24 * 3600}
    if identity.claim_cohorts:
        claims["cohorts"] = identity.claim_cohorts
    return make_jwt(drv.hub.secret, claims)


class Client:
    marker_counter = 0

    def __init__(self, drv, name, identity, screens, steady=True):
        self.drv = drv
        self.name = name
        self.id = identity
        self.want = list(screens)
        self.steady = steady
        self.held = {}              # screen -> [version, hash, tree]
        self.subscribed = set()     # answered subscriptions on the current connection
        self.pending = []           # subscribes sent, in order, not answered yet
        self.detached = set()       # unsubscribed, stale messages may still arrive
        self.marker_events = {}
        self.received = {}          # sync id -> [seq, mandatory]
        self.collapse_max = {}      # collapse key -> highest seq received
        self.max_seq = 0
        self.last_sync = None
        self.connections = []
        self.ws = None
        self.conn = None
        self.rng = random.Random(hash((drv.seed, name)))
        self.connected = False

    # -------------------------------------------------------------------------------------

    async def run(self, initial_delay=0.0, once_hold=None):
        await asyncio.sleep(initial_delay)
        backoff = 0.25
        while not self.drv.stop_clients.is_set():
            try:
                await self.session(once_hold)
                backoff = 0.25
            except CONNECT_ERRORS as error:
                self.drv.note_disconnect(self, error)
            except Exception as error:  # a driver bug: count it, keep going
                self.drv.driver_exception("client %s" % self.name, error)
            finally:
                self.end_connection()
            if once_hold is not None:
                return
            if self.drv.stop_clients.is_set():
                break
            await asyncio.sleep(self.rng.uniform(0.05, backoff))
            backoff = min(backoff * 2, 3.0)

    def end_connection(self):
        if self.conn is not None and self.conn.end_t is None:
            self.conn.end_t = now()
        if self.connected:
            self.connected = False
            self.drv.live_clients -= 1
        if self.ws is not None:
            ws, self.ws = self.ws, None
            try:
                ws.transport.abort()
            except Exception:
                pass
        self.subscribed.clear()
        self.pending.clear()
        self.detached.clear()
        for event in self.marker_events.values():
            event.set()
        self.marker_events.clear()

    async def session(self, once_hold):
        drv = self.drv
        if not drv.hub.up.is_set():
            await asyncio.wait_for(drv.hub.up.wait(), 60)
        self.ws = ws = await ws_connect(drv.hub.ws_url, compression=None, max_size=None, ping_interval=None,
                                        open_timeout=10, close_timeout=2, max_queue=64)
        self.connected = True
        drv.live_clients += 1
        drv.count("connects")
        hello = {"type": "hello", "protocol": 1, "device": self.id.device,
                 "app": {"platform": self.id.platform, "version": self.id.version}}
        if self.id.user is not None:
            hello["token"] = token_for(drv, self.id)
        first = not self.connections
        conn = Connection(now(), None if first else self.last_sync, first)
        if conn.last_sync is not None:
            hello["last_sync"] = conn.last_sync
        self.connections.append(conn)
        self.conn = conn
        await ws.send(json.dumps(hello))
        welcome = json.loads(await asyncio.wait_for(ws.recv(), 15))
        if welcome.get("type") != "welcome":
            drv.error("welcome_expected", "%s got %s" % (self.name, str(welcome)[:200]))
            return
        conn.welcome_t = now()
        conn.welcome_seq = welcome["sync_seq"]
        if welcome["sync_seq"] < self.max_seq:
            drv.error("sync_seq_regressed", "%s: welcome sync_seq %d < %d already received" % (
                self.name, welcome["sync_seq"], self.max_seq))
        if welcome.get("user") != self.id.user:
            drv.error("welcome_user", "%s: user %r, expected %r" % (self.name, welcome.get("user"), self.id.user))
        for screen in self.want:
            self.subscribe(screen)
        if once_hold is not None:
            planned_end = now() + once_hold
        else:
            planned_end = now() + self.rng.uniform(*drv.session_seconds)
        next_action = now() + self.rng.uniform(20, 90)
        while True:
            if drv.stop_clients.is_set():
                await self.close_gracefully()
                return
            frozen = drv.freeze.is_set()
            deadline = min(next_action, planned_end, now() + 2.0) if not frozen else now() + 1.0
            try:
                raw = await asyncio.wait_for(ws.recv(), max(0.01, deadline - now()))
            except asyncio.TimeoutError:
                if frozen or now() < min(next_action, planned_end):
                    continue
                if now() >= planned_end:
                    if self.rng.random() < 0.5:
                        await self.close_gracefully()
                    else:
                        drv.count("aborts")
                    return
                next_action = now() + self.rng.uniform(20, 90)
                if self.steady and self.subscribed and not self.detached:
                    asyncio.ensure_future(self.resubscribe_action())
                continue
            self.handle(json.loads(raw))

    async def close_gracefully(self):
        try:
            await asyncio.wait_for(self.ws.close(), 3)
        except CONNECT_ERRORS:
            pass
        self.drv.count("graceful_closes")

    def send(self, message):
        if self.ws is not None:
            asyncio.ensure_future(self._send(self.ws, json.dumps(message)))

    async def _send(self, ws, text):
        try:
            await ws.send(text)
        except CONNECT_ERRORS:
            pass

    def subscribe(self, screen):
        message = {"type": "subscribe", "screen": screen}
        held = self.held.get(screen)
        if held is not None:
            message["have"] = {"version": held[0], "hash": held[1]}
        self.pending.append(screen)
        self.send(message)

    async def resubscribe_action(self):
        """Unsubscribe one screen, wait for a round trip (a subscribe to a screen that does not
        exist: its error comes after every message sent before the unsubscribe was read), then
        subscribe again with `have` (or to another screen)."""
        ws = self.ws
        screen = self.rng.choice(sorted(self.subscribed))
        self.subscribed.discard(screen)
        self.detached.add(screen)
        self.send({"type": "unsubscribe", "screen": screen})
        Client.marker_counter += 1
        marker = "soak/marker-%d" % Client.marker_counter
        event = asyncio.Event()
        self.marker_events[marker] = event
        self.pending.append(marker)
        self.send({"type": "subscribe", "screen": marker})
        try:
            await asyncio.wait_for(event.wait(), 15)
        except asyncio.TimeoutError:
            if self.ws is ws:
                self.drv.error("marker_timeout", "%s: no answer to a subscribe within 15 s" % self.name)
            return
        if self.ws is not ws:
            return
        self.detached.discard(screen)
        self.drv.count("resubscribes")
        if self.rng.random() < 0.3:
            choices = [s for s in self.drv.subscribable if s not in self.want]
            if choices:
                self.want.remove(screen)
                screen = self.rng.choice(choices)
                self.want.append(screen)
        self.subscribe(screen)

    # -------------------------------------------------------------------------------------

    def handle(self, m):
        drv = self.drv
        kind = m.get("type")
        if kind in ("snapshot", "patch", "unchanged"):
            screen = m["screen"]
            answering = screen in self.pending
            if answering:
                self.pending.remove(screen)
                self.subscribed.add(screen)
                self.answered()
            elif screen in self.detached:
                drv.count("stale_after_unsubscribe")
                return
            elif screen not in self.subscribed:
                drv.error("unsolicited_screen", "%s: %s for %s, not subscribed" % (self.name, kind, screen))
                return
            held = self.held.get(screen)
            if kind == "snapshot":
                drv.count("snapshots")
                if held is not None and m["version"] < held[0]:
                    drv.error("version_regressed", "%s: %s snapshot v%d after v%d" % (
                        self.name, screen, m["version"], held[0]))
                digest = jcs_hash(m["tree"])
                if digest != m["hash"]:
                    drv.error("snapshot_hash", "%s: %s v%d hash %s, tree hashes to %s" % (
                        self.name, screen, m["version"], m["hash"], digest))
                self.held[screen] = [m["version"], m["hash"], m["tree"]]
            elif kind == "patch":
                drv.count("patches")
                if held is None:
                    drv.error("patch_without_base", "%s: %s patch from %d, nothing held" % (
                        self.name, screen, m["from"]))
                    self.drop(screen)
                    return
                if m["from"] != held[0]:
                    drv.error("patch_from_mismatch", "%s: %s patch from %d to %d, holding v%d" % (
                        self.name, screen, m["from"], m["version"], held[0]))
                    self.drop(screen)
                    return
                if m["version"] < held[0]:
                    drv.error("version_regressed", "%s: %s patch to v%d from v%d" % (
                        self.name, screen, m["version"], held[0]))
                try:
                    tree = jsonpatch.apply_patch(held[2], m["ops"], in_place=True)
                except (jsonpatch.JsonPatchException, jsonpatch.JsonPointerException, KeyError, IndexError,
                        TypeError) as error:
                    drv.error("patch_apply", "%s: %s %d->%d: %r ops=%s" % (
                        self.name, screen, m["from"], m["version"], error, str(m["ops"])[:300]))
                    self.drop(screen)
                    return
                digest = jcs_hash(tree)
                if digest != m["hash"]:
                    drv.error("patch_hash_mismatch", "%s: %s %d->%d hash %s, result hashes to %s" % (
                        self.name, screen, m["from"], m["version"], m["hash"], digest))
                    self.drop(screen)
                    return
                self.held[screen] = [m["version"], m["hash"], tree]
            else:
                drv.count("unchanged")
                if held is None or held[1] != m["hash"]:
                    drv.error("unchanged_mismatch", "%s: %s unchanged %s, holding %s" % (
                        self.name, screen, m["hash"], held and held[1]))
                    self.drop(screen)
                    return
                if m["version"] < held[0]:
                    drv.error("version_regressed", "%s: %s unchanged v%d after v%d" % (
                        self.name, screen, m["version"], held[0]))
                held[0] = m["version"]
            if self.steady and answering is False and screen.startswith("exp/") and self.rng.random() < 0.3:
                self.send({"type": "rendered", "screen": screen, "version": m["version"]})
        elif kind == "sync":
            drv.count("syncs_received")
            seq = m["seq"]
            entry = self.received.get(m["id"])
            if entry is None:
                self.received[m["id"]] = [seq, bool(m.get("mandatory"))]
            else:
                entry[1] = entry[1] or bool(m.get("mandatory"))
                drv.count("sync_duplicates")
            if m["id"] != "s-%d" % seq:
                drv.error("sync_id", "%s: id %s seq %d" % (self.name, m["id"], seq))
            self.max_seq = max(self.max_seq, seq)
            record = drv.syncs.get(seq)
            if record is not None and record.collapse:
                self.collapse_max[record.collapse] = max(self.collapse_max.get(record.collapse, 0), seq)
            if self.conn is not None and self.conn.settled:
                self.last_sync = max(self.last_sync or 0, seq)
            if self.rng.random() < 0.8:
                self.send({"type": "ack", "sync": m["id"]})
        elif kind == "gone":
            drv.count("gone")
            screen = m["screen"]
            if screen in self.detached:
                return
            self.held.pop(screen, None)
            self.subscribed.discard(screen)
        elif kind == "error":
            code = m.get("code")
            if m.get("ref") == "subscribe" and self.pending:
                screen = self.pending.pop(0)
                self.answered()
                event = self.marker_events.pop(screen, None)
                if event is not None:
                    event.set()
                    return
                if code == "unknown_screen" and screen in self.drv.deletable:
                    drv.count("unknown_screen_expected")
                    self.held.pop(screen, None)
                    return
            if code == "not_subscribed":
                drv.count("not_subscribed")  # an unsubscribe crossing a `gone`
                return
            if code == "unknown_sync":
                drv.count("unknown_sync")  # an ack for a sync that expired meanwhile
                return
            drv.error("client_error_" + str(code), "%s: %s" % (self.name, str(m)[:300]))
        else:
            drv.error("unexpected_message", "%s: %s" % (self.name, str(m)[:200]))

    def answered(self):
        conn = self.conn
        if conn is not None and not conn.settled and not any(not p.startswith("soak/marker-") for p in self.pending):
            conn.settled = True
            # Every replayed sync came before the subscribe answers (one ordered stream): from now
            # on, last_sync can move to the welcome's sequence number.
            self.last_sync = max(self.last_sync or 0, conn.welcome_seq or 0, self.max_seq)

    def drop(self, screen):
        """The held state is wrong: forget it and resubscribe from nothing (after a marker)."""
        self.held.pop(screen, None)
        if self.ws is not None:
            self.subscribed.discard(screen)
            self.detached.add(screen)
            self.send({"type": "unsubscribe", "screen": screen})

            async def again(ws=self.ws):
                Client.marker_counter += 1
                marker = "soak/marker-%d" % Client.marker_counter
                event = asyncio.Event()
                self.marker_events[marker] = event
                self.pending.append(marker)
                self.send({"type": "subscribe", "screen": marker})
                try:
                    await asyncio.wait_for(event.wait(), 15)
                except asyncio.TimeoutError:
                    return
                if self.ws is ws:
                    self.detached.discard(screen)
                    self.subscribe(screen)
            asyncio.ensure_future(again())


# ---------------------------------------------------------------------------------------------


async def slow_consumer(drv, identity, stall_seconds, resume, screens=("blob", "big")):
    """Subscribes, stops reading for `stall_seconds` (an unsolicited pong every 15 s keeps it from
    looking idle), then reads the backlog and checks the chain, or disappears."""
    try:
        ws = await RawWS.connect(drv.hub.port, rcvbuf=4096)
    except CONNECT_ERRORS:
        return
    drv.live_clients += 1
    drv.count("slow_consumers")
    held = {}
    try:
        hello = {"type": "hello", "protocol": 1, "device": identity.device,
                 "app": {"platform": identity.platform, "version": identity.version}}
        if identity.user:
            hello["token"] = token_for(drv, identity)
        ws.send_json(hello)
        welcome = await ws.recv_json(15)
        if welcome.get("type") != "welcome":
            drv.error("welcome_expected", "slow consumer: %s" % str(welcome)[:200])
            return
        for screen in screens:
            ws.send_json({"type": "subscribe", "screen": screen})
        answers = 0
        while answers < len(screens):
            m = await ws.recv_json(15)
            if m["type"] == "snapshot":
                held[m["screen"]] = [m["version"], m["hash"], m["tree"]]
                answers += 1
            elif m["type"] == "error":
                answers += 1
        stall_end = now() + stall_seconds
        last_pong = now()
        while now() < stall_end and not drv.stop_clients.is_set():
            await asyncio.sleep(min(1, max(0, stall_end - now())))
            if now() - last_pong > 15:
                ws.send(10, b"soak")
                last_pong = now()
        if drv.stop_clients.is_set():
            return
        if not resume:
            drv.count("slow_consumers_vanished")
            return
        # Read everything: the backlog, then the catch-up, until it holds every version published
        # before it resumed (or 3 s without a message; 20 s at most), then leave.
        versions_before = {s: drv.screen_version(s) for s in screens}
        messages = 0
        read_until = now() + 20
        while now() < read_until and not drv.stop_clients.is_set():
            if all(s not in held or held[s][0] >= versions_before[s] for s in screens) and messages:
                break
            try:
                m = await ws.recv_json(3)
            except asyncio.TimeoutError:
                break
            messages += 1
            screen = m.get("screen")
            if m["type"] == "snapshot":
                if jcs_hash(m["tree"]) != m["hash"]:
                    drv.error("snapshot_hash", "slow consumer: %s v%d" % (screen, m["version"]))
                if screen in held and m["version"] < held[screen][0]:
                    drv.error("version_regressed", "slow consumer: %s v%d after v%d" % (
                        screen, m["version"], held[screen][0]))
                held[screen] = [m["version"], m["hash"], m["tree"]]
            elif m["type"] == "patch":
                h = held.get(screen)
                if h is None or m["from"] != h[0]:
                    drv.error("patch_from_mismatch", "slow consumer: %s patch from %d, holding %s" % (
                        screen, m["from"], h and h[0]))
                    return
                tree = jsonpatch.apply_patch(h[2], m["ops"], in_place=True)
                if jcs_hash(tree) != m["hash"]:
                    drv.error("patch_hash_mismatch", "slow consumer: %s %d->%d" % (screen, m["from"], m["version"]))
                    return
                held[screen] = [m["version"], m["hash"], tree]
        drv.count("slow_consumer_messages_after_stall", messages)
        if drv.stop_clients.is_set():
            # The run's drain began while it was still reading: the read loop stopped early, so
            # what it holds says nothing about the catch-up (the 2 no_catch_up of the
            # 2026-11-23 run were this: both at 1818.7 s, in the drain phase).
            drv.count("slow_consumers_cut_short")
            return
        # It must have caught up with everything published before it resumed reading.
        for screen in screens:
            if screen in held and versions_before[screen] and held[screen][0] < versions_before[screen]:
                drv.error("no_catch_up", "slow consumer: %s at v%d, v%d was published before it resumed" % (
                    screen, held[screen][0], versions_before[screen]))
        drv.count("slow_consumers_caught_up")
    except ConnectionAbortedError as error:
        if not drv.chaos:
            drv.error("slow_consumer_closed", "slow consumer closed by the hub: %s" % error)
    except CONNECT_ERRORS as error:
        drv.count("slow_consumer_disconnects")
        if not drv.chaos:
            drv.note_event("slow consumer disconnected: %r" % (error,))
    finally:
        drv.live_clients -= 1
        ws.abort()
