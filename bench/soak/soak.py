#!/usr/bin/env python3
"""PushHub soak and chaos driver (issue 9, item 4). See bench/soak/README.md.

  soak.py soak  [--minutes 30] ...   mixed load against one release hub; RSS, descriptors and loop
                                     lag sampled every second; verdict "flat" or not
  soak.py chaos [--minutes 6]  ...   the same load while the hub is killed (-9) and restarted on
                                     the same data dir every 5–15 s; every acknowledged mutation
                                     checked after each restart

Exit status: 0 when the verdict is flat (soak) / nothing was lost (chaos) and no correctness
error was seen, 1 otherwise, 2 when the run could not be made.
"""
import argparse
import asyncio
import collections
import csv
import json
import logging
import os
import random
import resource
import shutil
import signal
import statistics
import sys
import tempfile
import time
import traceback

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import badinputs  # noqa: E402
from clients import Client, slow_consumer  # noqa: E402
from common import Admin, HubDown, HubProcess, die_with_parent, jcs_hash, now, parse_metrics, loop_tick_seconds, proc_cpu_seconds, proc_fds, \
    proc_rss_kb, proc_rss_split_kb, proc_threads  # noqa: E402
from model import (CHURN_COHORTS, CLAIM_COHORT, RULE_COHORT, STATIC_LIST, Identity, ScreenGen,  # noqa: E402
                   capability_filter, expected_tree, random_identity, targets)

ROOT = os.path.abspath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))

# Screens: name -> (kind, seconds between publishes)
SCREENS = {
    "home": ("small", 2.0),
    "feed/0": ("medium", 3.0), "feed/1": ("medium", 3.0), "feed/2": ("medium", 4.0), "feed/3": ("medium", 5.0),
    "caps": ("caps", 3.0),
    "exp/a": ("exp", 4.0), "exp/b": ("exp", 5.0),
    "big": ("big", 4.0),
    "blob": ("blob", 1.0),
}
DELETABLE = ("ephemeral",)


class Mutation:
    """One admin mutation; `state`: inflight → acked | uncertain → applied | absent."""
    counter = 0

    def __init__(self, kind, name, method, path, body, **extra):
        Mutation.counter += 1
        self.id = Mutation.counter
        self.kind = kind
        self.name = name
        self.method = method
        self.path = path
        self.body = body
        self.state = "inflight"
        self.t_send = now()
        self.__dict__.update(extra)


class SyncRecord:
    __slots__ = ("seq", "id", "target", "reason", "scope", "collapse", "mandatory", "spread", "ttl", "t_send",
                 "t_ack", "hint", "verified")

    def __init__(self, seq, sid, body, t_send, t_ack):
        self.seq = seq
        self.id = sid
        self.target = body["target"]
        self.reason = body.get("reason", "sync")
        self.scope = body.get("scope", "bundle")
        self.collapse = body.get("collapse")
        self.mandatory = bool(body.get("mandatory"))
        self.spread = parse_seconds(body.get("spread", 0))
        self.ttl = parse_seconds(body.get("ttl", 24 * 3600))
        self.hint = body.get("hint")
        self.t_send = t_send
        self.t_ack = t_ack
        self.verified = False


def parse_seconds(value):
    if isinstance(value, (int, float)):
        return float(value)
    units = {"s": 1, "m": 60, "h": 3600}
    return float(value[:-1]) * units[value[-1]]


class ScreenModel:
    def __init__(self, name):
        self.name = name
        self.exists = False
        self.last_number = 0          # the last version number ever given (deletes included)
        self.version = 0              # the current version when it exists
        self.hashes = {}              # version -> hash (acked)
        self.trees = {}               # version -> tree (the last few)
        self.generation_start = 1     # first version since the last (re)creation
        self.verified = set()         # versions seen in the hub's history with their hash
        self.acked = 0

    def publish(self, version, digest, tree):
        self.exists = True
        if version != self.last_number + 1:
            raise AssertionError("version %d after %d" % (version, self.last_number))
        self.last_number = version
        self.version = version
        self.hashes[version] = digest
        self.trees[version] = tree
        for old in [v for v in self.trees if v <= version - 20]:
            del self.trees[old]

    def delete(self):
        self.exists = False
        self.version = 0
        self.generation_start = self.last_number + 1


class Driver:
    def __init__(self, args):
        self.args = args
        self.chaos = args.mode == "chaos"
        self.seed = args.seed
        self.rng = random.Random(args.seed)
        stamp = time.strftime("%Y%m%d-%H%M%S")
        self.out_dir = os.path.abspath(args.out or os.path.join(os.path.dirname(os.path.abspath(__file__)), "out",
                                                                "%s-%s" % (args.mode, stamp)))
        os.makedirs(self.out_dir, exist_ok=True)
        self.data_dir = os.path.join(self.out_dir, "data")
        if os.path.exists(self.data_dir):
            shutil.rmtree(self.data_dir)
        flags = ["--dev", "--log-level", args.log_level] + (["--loops", str(args.loops)] if args.loops else [])
        self.heapstats_file = os.path.join(self.out_dir, "heapstats.txt") if args.heapstats else None
        env = {"LD_PRELOAD": os.path.abspath(args.heapstats), "HEAPSTATS_FILE": self.heapstats_file} \
            if args.heapstats else None
        self.hub = HubProcess(args.bin, self.data_dir, self.out_dir, flags, env=env)
        self.counters = collections.Counter()
        self.errors = collections.Counter()
        self.error_details = collections.defaultdict(list)
        self.bad_results = collections.defaultdict(lambda: [0, 0])
        self.bad_details = collections.defaultdict(list)
        self.events = open(os.path.join(self.out_dir, "events.log"), "w")
        self.stop_clients = asyncio.Event()
        self.stop_mutations = asyncio.Event()
        self.freeze = asyncio.Event()
        self.mutable = asyncio.Event()      # mutations may be sent (cleared from a kill to the end of its check)
        self.live_clients = 0
        self.session_seconds = (args.session_min, args.session_max)
        self.subscribable = list(SCREENS) + list(DELETABLE)
        self.deletable = set(DELETABLE)
        hot = ["hot/%d" % i for i in range(args.hammers or 0)] if args.hammers else []
        self.screens = {name: ScreenModel(name) for name in list(SCREENS) + list(DELETABLE) + hot}
        self.generators = {name: ScreenGen(name, kind, random.Random(self.rng.random()))
                           for name, (kind, _) in SCREENS.items()}
        self.generators["ephemeral"] = ScreenGen("ephemeral", "small", random.Random(self.rng.random()))
        for name in hot:
            self.generators[name] = ScreenGen(name, "small", random.Random(self.rng.random()))
        self.syncs = {}                     # seq -> SyncRecord (acknowledged or adopted)
        self.max_seq = 0
        self.seq_floor = 0                  # every seq up to it was looked at by a verification
        self.cohorts = {}                   # name -> (set(users), rule) or None (deleted)
        self.cohort_ops = collections.defaultdict(list)
        self.experiments = {}               # key -> definition or None
        self.experiment_ops = collections.defaultdict(list)
        self.inflight = {}                  # Mutation.id -> Mutation
        self.uncertain = []
        self.late_acks = []
        self.steady = []
        self.tasks = []
        self.phase = "setup"
        self.load_started = None
        self.restarts = 0
        self.restart_seconds = []
        self.verify_rounds = 0
        self.verify_checks = 0
        self.lost = []
        self.adopted = 0
        self.absent = 0
        self.crashed = None
        self.samples = []
        self.probe_max = None

    # --- bookkeeping ------------------------------------------------------------------------

    def wall(self):
        return time.time()

    def count(self, name, n=1):
        self.counters[name] += n

    def error(self, kind, detail):
        self.errors[kind] += 1
        if len(self.error_details[kind]) < 20:
            self.error_details[kind].append(detail)
        self.note_event("ERROR %s: %s" % (kind, detail))

    def note_event(self, text):
        t = now() - self.load_started if self.load_started else 0.0
        self.events.write("%8.1f %s\n" % (t, text))
        self.events.flush()

    def driver_exception(self, where, error):
        self.count("driver_exceptions")
        self.note_event("DRIVER EXCEPTION in %s: %s" % (where, "".join(
            traceback.format_exception(type(error), error, error.__traceback__))[-2000:]))

    def note_disconnect(self, client, error):
        self.count("unplanned_disconnects")
        if not self.chaos and not self.stop_clients.is_set():
            self.note_event("client %s disconnected: %r" % (client.name, error))
            self.count("unplanned_disconnects_soak")

    async def admin_once(self, method, path, body=None, raw=None, token=None, timeout=10):
        admin = Admin(self.hub, timeout=timeout)
        try:
            return await admin.request(method, path, body=body, raw=raw, token=token)
        finally:
            admin.close()

    def screen_version(self, name):
        model = self.screens.get(name)
        return model.version if model and model.exists else 0

    def spawn(self, coroutine, name):
        async def guarded():
            try:
                await coroutine
            except asyncio.CancelledError:
                raise
            except Exception as error:
                self.driver_exception(name, error)
        task = asyncio.ensure_future(guarded())
        self.tasks.append(task)
        return task

    # --- admin mutations --------------------------------------------------------------------

    async def mutate(self, admin, mutation):
        """Sends one mutation; returns (status, answer) or None when its outcome is uncertain (the
        hub died with it in flight: the verifier decides after the restart)."""
        if not self.mutable.is_set():
            await self.mutable.wait()
        mutation.t_send = now()
        self.inflight[mutation.id] = mutation
        try:
            status, answer = await admin.request(mutation.method, mutation.path, body=mutation.body)
        except HubDown as error:
            self.inflight.pop(mutation.id, None)
            if mutation.state == "inflight":
                # Not taken by a kill (the hub answered nothing and was not killed): a real failure.
                if not self.chaos or self.hub.alive():
                    self.error("admin_unanswered", "%s %s: %s" % (mutation.method, mutation.path, error))
                mutation.state = "uncertain"
                self.uncertain.append(mutation)
            await self.mutable.wait()
            return None
        self.inflight.pop(mutation.id, None)
        mutation.t_ack = now()
        if mutation.state == "absent" and status < 300:
            self.lost.append("%s %s answered %d after the verifier found it absent" % (
                mutation.method, mutation.path, status))
            self.error("lost_mutation", self.lost[-1])
        if mutation.state in ("uncertain", "applied", "absent"):
            # Answered after the kill was noted (the answer was already in our socket buffer).
            self.late_acks.append(mutation)
            if mutation.state == "uncertain":
                self.uncertain.remove(mutation)
        mutation.state = "acked" if status < 300 else "refused"
        return status, answer

    def snapshot_inflight(self):
        """At a kill: every mutation in flight is uncertain."""
        for mutation in list(self.inflight.values()):
            if mutation.state == "inflight":
                mutation.state = "uncertain"
                self.uncertain.append(mutation)
        self.inflight.clear()

    # --- setup ------------------------------------------------------------------------------

    async def setup(self):
        admin = Admin(self.hub)
        for name, cohort in (("static-list", {"users": STATIC_LIST}), (CLAIM_COHORT, {"users": []}),
                             (RULE_COHORT[0], {"rule": RULE_COHORT[1]}), ("churn-a", {"users": ["u1", "u2"]}),
                             ("churn-b", {"users": ["u3"]}), ("churn-rule", {"rule": {"platform": "android"}})):
            status, answer = await admin.request("PUT", "/v1/cohorts/" + name, body=cohort)
            if status != 200:
                raise RuntimeError("cohort %s: %s %s" % (name, status, answer))
            self.cohorts[name] = (set(cohort.get("users", [])), cohort.get("rule"))
            self.cohort_ops[name].append(False)
            self.count("acked_cohort_ops")
        for name in list(SCREENS) + ["ephemeral"]:
            await self.publish(admin, name)
        for key in EXPERIMENTS:
            self.exp_state[key] = {"exists": False}
        for key in EXPERIMENTS:
            await self.experiment_step(admin, key, force="create_running")
        admin.close()

    # --- publishers -------------------------------------------------------------------------

    async def publish(self, admin, name, rollback_to=None):
        model = self.screens[name]
        if rollback_to is not None:
            tree = model.trees[rollback_to]
            mutation = Mutation("rollback", name, "POST", "/v1/screens/%s/rollback" % name, {"to": rollback_to},
                                tree=tree)
        else:
            tree = self.generators[name].edit()
            mutation = Mutation("publish", name, "PUT", "/v1/screens/" + name, tree, tree=tree)
        result = await self.mutate(admin, mutation)
        if result is None:
            return
        status, answer = result
        if status != 200:
            self.error("publish_refused", "%s %s: %s %s" % (mutation.method, mutation.path, status, str(answer)[:200]))
            return
        self.acked_screen(mutation, answer)

    def acked_screen(self, mutation, answer):
        model = self.screens[mutation.name]
        if mutation.state == "applied" or getattr(mutation, "adopted", False):
            return  # the verifier adopted it already
        version = answer["version"]
        if version != model.last_number + 1:
            self.error("version_numbering", "%s: answer version %d, the last given was %d" % (
                mutation.name, version, model.last_number))
            model.last_number = version - 1
        model.publish(version, answer["hash"], mutation.tree)
        model.acked += 1
        expected = jcs_hash(capability_filter(mutation.tree, None))
        if answer["hash"] != expected:
            self.error("publish_hash", "%s v%d: hub hash %s, JCS of the tree %s" % (
                mutation.name, version, answer["hash"], expected))
        self.count("acked_publishes")

    async def publisher(self, name, interval):
        admin = Admin(self.hub)
        rng = random.Random(self.rng.random())
        await asyncio.sleep(rng.uniform(0, interval))
        while not self.stop_mutations.is_set():
            model = self.screens[name]
            kept = [v for v in model.trees if v >= max(model.generation_start, model.version - 15) and v < model.version]
            if name == "home" and kept and rng.random() < 0.1:
                await self.publish(admin, name, rollback_to=rng.choice(kept))
            else:
                await self.publish(admin, name)
            await asyncio.sleep(rng.uniform(0.5, 1.5) * interval)
        admin.close()

    async def ephemeral(self):
        """Published a few times, deleted (subscribers get `gone`), published again: the version
        numbers go on."""
        admin = Admin(self.hub)
        rng = random.Random(self.rng.random())
        while not self.stop_mutations.is_set():
            model = self.screens["ephemeral"]
            if model.exists and rng.random() < 0.25:
                mutation = Mutation("delete", "ephemeral", "DELETE", "/v1/screens/ephemeral", None)
                result = await self.mutate(admin, mutation)
                if result is not None:
                    status, answer = result
                    if status == 200 and mutation.state == "acked":
                        if answer.get("last_version") != model.version:
                            self.error("delete_answer", "ephemeral: %s, expected last_version %d" % (
                                answer, model.version))
                        model.delete()
                        model.acked += 1
                        self.count("acked_deletes")
                    elif status != 200:
                        self.error("delete_refused", "%s %s" % (status, answer))
            else:
                await self.publish(admin, "ephemeral")
            await asyncio.sleep(rng.uniform(2, 6))
        admin.close()

    async def hammer(self, index):
        """Back-to-back mutations (each sent when the previous one is answered): a publish of its
        own screen, then a sync to a user nobody is (ttl 60 s, so the set to check stays bounded).
        Under chaos this keeps several mutations in flight at every kill."""
        admin = Admin(self.hub)
        name = "hot/%d" % index
        rng = random.Random(self.rng.random())
        while not self.stop_mutations.is_set():
            if rng.random() < 0.5:
                await self.publish(admin, name)
            else:
                body = {"target": {"user": "nobody-%d" % index}, "reason": "hammer", "ttl": 60,
                        "hint": {"i": rng.randrange(10 ** 9)}}
                mutation = Mutation("sync", None, "POST", "/v1/syncs", body)
                result = await self.mutate(admin, mutation)
                if result is not None:
                    status, answer = result
                    if status != 200:
                        self.error("sync_refused", "%s %s for %s" % (status, str(answer)[:200], body))
                    elif mutation.state == "acked":
                        self.acked_sync(mutation, answer)
        admin.close()

    # --- syncs ------------------------------------------------------------------------------

    def sync_body(self, rng):
        r = rng.random()
        if r < 0.2:
            target = {"all": True}
        elif r < 0.35:
            target = {"user": "u%d" % rng.randrange(400)}
        elif r < 0.45:
            target = {"users": ["u%d" % rng.randrange(400) for _ in range(rng.randint(2, 30))]}
        elif r < 0.55:
            target = {"cohort": CLAIM_COHORT}
        elif r < 0.62:
            target = {"cohort": "static-list"}
        elif r < 0.69:
            target = {"cohort": RULE_COHORT[0]}
        elif r < 0.76:
            target = {"cohort": rng.choice(CHURN_COHORTS + ["churn-rule"])}
        elif r < 0.84:
            target = {"all": True, "platform": rng.choice(["ios", "android", "web"])}
        elif r < 0.92:
            target = {"all": True, "app_version": rng.choice(["<5.3.0", ">=5.2.0", ">=5.1.0 <5.4.0"])}
        elif r < 0.96:
            target = {"cohort": CLAIM_COHORT, "platform": rng.choice(["ios", "android"])}
        else:
            target = {"all": True, "variant": {"exp-a": "B"}}
        body = {"target": target, "reason": rng.choice(["hotfix", "config", "sync"]),
                "scope": rng.choice(["bundle", "config", "screen:home"])}
        if rng.random() < 0.15:
            body["collapse"] = rng.choice(["k1", "k2", "k3"])
        if rng.random() < 0.1:
            body["mandatory"] = True
        if rng.random() < 0.3:
            body["hint"] = {"n": rng.randrange(1000), "url": "https://cdn.example/bundle/%d" % rng.randrange(99)}
        # Soak: TTLs of at most 4 min, so the sync log reaches its working size within the warm-up
        # (the reference window starts at minute 5) and what the RSS rule then sees growing is not
        # state. Chaos keeps long TTLs (up to the 24 h default): what it checks is persistence.
        r = rng.random()
        if r < 0.4:
            body["ttl"] = 30
        elif r < 0.8:
            body["ttl"] = "2m" if not self.chaos else "10m"
        elif r < 0.95 or not self.chaos:
            body["ttl"] = "4m" if not self.chaos else "1h"
        if rng.random() < 0.05:
            body["spread"] = rng.choice(["3s", 5])
        return body

    async def syncer(self):
        admin = Admin(self.hub)
        rng = random.Random(self.rng.random())
        while not self.stop_mutations.is_set():
            body = self.sync_body(rng)
            mutation = Mutation("sync", None, "POST", "/v1/syncs", body)
            result = await self.mutate(admin, mutation)
            if result is not None:
                status, answer = result
                if (status == 404 and isinstance(answer, dict) and answer.get("error", {}).get("code") ==
                        "unknown_cohort" and body["target"].get("cohort") in CHURN_COHORTS):
                    self.count("syncs_to_deleted_cohort")  # the cohort changer deleted it meanwhile
                elif status != 200:
                    self.error("sync_refused", "%s %s for %s" % (status, str(answer)[:200], body))
                elif mutation.state == "acked":
                    self.acked_sync(mutation, answer)
            await asyncio.sleep(rng.uniform(0.3, 1.7) / self.args.sync_rate)
        admin.close()

    def acked_sync(self, mutation, answer):
        seq = answer["seq"]
        if seq in self.syncs:
            if getattr(mutation, "adopted", False):
                return
            self.error("sync_seq_reused", "seq %d given twice (%s and %s)" % (
                seq, self.syncs[seq].target, mutation.body["target"]))
            return
        if seq <= self.max_seq:
            self.error("sync_seq_order", "seq %d after %d" % (seq, self.max_seq))
        if answer.get("id") != "s-%d" % seq:
            self.error("sync_id", "answer %s" % answer)
        self.max_seq = max(self.max_seq, seq)
        self.syncs[seq] = SyncRecord(seq, answer["id"], mutation.body, mutation.t_send, now())
        self.count("acked_syncs")

    # --- cohorts ----------------------------------------------------------------------------

    async def cohort_changer(self):
        admin = Admin(self.hub)
        rng = random.Random(self.rng.random())
        users = ["u%d" % i for i in range(400)]
        while not self.stop_mutations.is_set():
            name = rng.choice(CHURN_COHORTS + ["churn-rule"])
            current = self.cohorts.get(name)
            r = rng.random()
            if name == "churn-rule":
                rule = {"platform": rng.choice(["ios", "android", "web"])}
                if rng.random() < 0.3:
                    rule["app_version"] = rng.choice([">=5.2.0", "<5.3.0"])
                mutation = Mutation("cohort_put", name, "PUT", "/v1/cohorts/" + name, {"rule": rule},
                                    after=(set(), rule))
            elif current is None or r < 0.3:
                members = set(rng.sample(users, rng.randint(0, 60)))
                mutation = Mutation("cohort_put", name, "PUT", "/v1/cohorts/" + name, {"users": sorted(members)},
                                    after=(members, None))
            elif r < 0.85:
                add = rng.sample(users, rng.randint(0, 8))
                remove = rng.sample(sorted(current[0]), min(len(current[0]), rng.randint(0, 8))) if current[0] else []
                members = (current[0] | set(add)) - set(remove)
                mutation = Mutation("cohort_edit", name, "POST", "/v1/cohorts/%s/users" % name,
                                    {"add": add, "remove": remove}, after=(members, current[1]))
            else:
                mutation = Mutation("cohort_delete", name, "DELETE", "/v1/cohorts/" + name, None, after=None)
            result = await self.mutate(admin, mutation)
            if result is not None:
                status, answer = result
                if status != 200:
                    self.error("cohort_refused", "%s %s: %s %s" % (mutation.method, mutation.path, status, answer))
                elif mutation.state == "acked":
                    self.acked_cohort(mutation, answer)
            await asyncio.sleep(rng.uniform(1, 5))
        admin.close()

    def acked_cohort(self, mutation, answer):
        if getattr(mutation, "adopted", False):
            return
        self.cohorts[mutation.name] = mutation.after
        self.cohort_ops[mutation.name].append(False)
        self.count("acked_cohort_ops")
        if mutation.after is not None and isinstance(answer, dict) and "users" in answer:
            if answer["users"] != len(mutation.after[0]):
                self.error("cohort_answer", "%s: answer %s, expected %d users" % (
                    mutation.name, answer, len(mutation.after[0])))

    # --- experiments ------------------------------------------------------------------------

    def experiment_definition(self, key, state):
        spec = EXPERIMENTS[key]
        definition = {"key": key, "salt": spec.get("salt", key), "status": state["status"],
                      "variants": [{"key": v, "weight": w} for v, w in zip(spec["variants"], state["weights"])]}
        if "layer" in spec:
            definition["layer"] = spec["layer"]
            definition["layer_range"] = spec["layer_range"]
        else:
            definition["traffic"] = state["traffic"]
        if "audience" in spec:
            definition["audience"] = spec["audience"]
        if state.get("overrides"):
            definition["overrides"] = dict(state["overrides"])
        screens = {}
        for screen, variants in spec["screens"].items():
            screens[screen] = {variant: make_patch(state["generation"], variant, screen) for variant in variants}
        definition["screens"] = screens
        return definition

    async def experiment_step(self, admin, key, force=None, rng=None):
        rng = rng or self.rng
        state = dict(self.exp_state[key])
        spec = EXPERIMENTS[key]
        if not state["exists"] or force == "create_running":
            state = {"exists": True, "status": "running" if force or rng.random() < 0.7 else "draft",
                     "traffic": rng.choice([0.1, 0.5, 1.0]), "weights": [1] * len(spec["variants"]),
                     "generation": rng.randrange(10 ** 6), "overrides": {}}
            action = "create"
        else:
            action = rng.choice(["start", "stop", "ramp", "ramp", "weights", "content", "override", "delete"])
            if action == "start":
                state["status"] = "running"
            elif action == "stop":
                state["status"] = "stopped"
            elif action == "ramp":
                state["traffic"] = rng.choice([0.05, 0.1, 0.25, 0.5, 0.75, 1.0])
            elif action == "weights":
                state["weights"] = [rng.randint(0, 5) for _ in spec["variants"]]
                if sum(state["weights"]) == 0:
                    state["weights"][0] = 1
            elif action == "content":
                state["generation"] = rng.randrange(10 ** 6)
            elif action == "override":
                overrides = dict(state.get("overrides") or {})
                overrides["u%d" % rng.randrange(400)] = rng.choice(spec["variants"])
                state["overrides"] = overrides
        if action == "delete":
            mutation = Mutation("experiment_delete", key, "DELETE", "/v1/experiments/" + key, None, after=None,
                                state_after={"exists": False})
        else:
            definition = self.experiment_definition(key, state)
            mutation = Mutation("experiment_put", key, "PUT", "/v1/experiments/" + key, definition,
                                after=definition, state_after=state)
        result = await self.mutate(admin, mutation)
        if result is None:
            return
        status, answer = result
        if status != 200:
            self.error("experiment_refused", "%s %s: %s %s" % (mutation.method, mutation.path, status,
                                                               str(answer)[:300]))
            return
        if mutation.state == "acked":
            self.acked_experiment(mutation)

    def acked_experiment(self, mutation):
        if getattr(mutation, "adopted", False):
            return
        self.experiments[mutation.name] = mutation.after
        self.exp_state[mutation.name] = mutation.state_after
        self.experiment_ops[mutation.name].append(False)
        self.count("acked_experiment_ops")

    async def experimenter(self):
        admin = Admin(self.hub)
        rng = random.Random(self.rng.random())
        while not self.stop_mutations.is_set():
            await asyncio.sleep(rng.uniform(3, 9))
            if self.stop_mutations.is_set():
                break
            await self.experiment_step(admin, rng.choice(sorted(EXPERIMENTS)), rng=rng)
        admin.close()

    # --- load: clients ----------------------------------------------------------------------

    def pick_screens(self, rng, steady=True):
        screens = ["home"] if rng.random() < 0.8 else []
        pool = ["feed/0", "feed/1", "feed/2", "feed/3", "caps", "exp/a", "exp/b", "ephemeral"]
        screens += rng.sample(pool, rng.randint(1, 3))
        if rng.random() < 0.08:
            screens.append("big")
        if steady and rng.random() < 0.015:
            screens.append("blob")
        return screens

    async def churn(self):
        rng = random.Random(self.rng.random())
        index = 0
        while not self.stop_clients.is_set() and not self.freeze.is_set():
            index += 1
            # Devices come back (a real app's population is bounded): a pool of --device-pool ids,
            # so the sticky assignments the hub keeps for them reach their working size early.
            identity = random_identity(rng, 100000 + index % self.args.device_pool, anonymous_share=0.4)
            client = Client(self, "churn-%d" % index, identity, self.pick_screens(rng, steady=False), steady=False)
            self.spawn(client.run(once_hold=rng.uniform(1, 10)), "churn client")
            await asyncio.sleep(rng.uniform(0.5, 1.5) / self.args.churn_rate)

    async def bursts(self):
        rng = random.Random(self.rng.random())
        # In the middle of each summary window (so that every window holds one burst).
        interval = self.burst_interval
        burst = 0
        while True:
            await asyncio.sleep(interval / 2 if burst == 0 else interval)
            if self.stop_clients.is_set() or self.freeze.is_set():
                return
            burst += 1
            self.note_event("burst %d: %d clients" % (burst, self.args.burst))
            self.count("bursts")
            for i in range(self.args.burst):
                identity = random_identity(rng, 200000 + i, anonymous_share=0.5)  # the same devices each burst
                client = Client(self, "burst-%d-%d" % (burst, i), identity, ["home"], steady=False)
                self.spawn(client.run(initial_delay=rng.uniform(0, 5), once_hold=rng.uniform(15, 40)), "burst client")

    async def slow_consumers(self):
        rng = random.Random(self.rng.random())
        index = 0
        while not self.stop_clients.is_set() and not self.freeze.is_set():
            await asyncio.sleep(rng.uniform(10, 30))
            for _ in range(rng.randint(1, 2)):
                index += 1
                identity = random_identity(rng, 300000 + index, anonymous_share=0.5)
                # Half stall long enough to fill the kernel's buffers (several MB on loopback) and
                # pass the hub's 1 MiB high watermark: coalescing and the catch-up are exercised.
                stall = rng.uniform(20, 50) if rng.random() < 0.5 else rng.uniform(90, 150)
                self.spawn(slow_consumer(self, identity, stall, rng.random() < 0.6), "slow consumer")

    async def bad_inputs(self):
        rng = random.Random(self.rng.random())
        cases = badinputs.CLIENT_CASES + badinputs.ADMIN_CASES
        weights = [badinputs.WEIGHTS.get(case, 1.0) for case in cases]
        running = set()
        while not self.stop_clients.is_set() and not self.freeze.is_set():
            await asyncio.sleep(rng.uniform(0.5, 1.5) * self.args.bad_interval)
            if not self.hub.up.is_set() or len(running) > 6:
                continue
            case = rng.choices(cases, weights)[0]
            task = self.spawn(self.bad_case(case), "bad input")
            running.add(task)
            task.add_done_callback(running.discard)

    async def bad_case(self, case):
        starts = self.hub.starts
        name = case.__name__
        started = now()
        try:
            problem = await asyncio.wait_for(case(self), 40)
        except (asyncio.TimeoutError, OSError, ConnectionError, EOFError, HubDown, ValueError, KeyError) as error:
            problem = "exception %r" % (error,)
        if self.hub.starts != starts or not self.hub.up.is_set():
            self.count("bad_inputs_during_kill")
            return
        self.bad_results[name][0 if problem is None else 1] += 1
        self.note_event("bad input %s: %s (%.1f s)" % (name, "as documented" if problem is None else "NOT as documented",
                                                      now() - started))
        if problem is not None:
            if len(self.bad_details[name]) < 5:
                self.bad_details[name].append(problem)
            self.note_event("bad input %s: %s" % (name, problem))

    async def probes(self, count=4):
        """Client-loop responsiveness as a client sees it, measured by probe.py in its own process
        (so the driver's event loop does not inflate it): the slowest of `count` round trips per
        second goes into the CSV (probe_ms)."""
        process = await asyncio.create_subprocess_exec(
            sys.executable, os.path.join(os.path.dirname(os.path.abspath(__file__)), "probe.py"),
            str(self.hub.port), "--connections", str(count), stdout=asyncio.subprocess.PIPE,
            preexec_fn=die_with_parent)
        try:
            while not self.stop_clients.is_set():
                try:
                    line = await asyncio.wait_for(process.stdout.readline(), 2)
                except asyncio.TimeoutError:
                    continue
                if not line:
                    break
                _, slowest, ok, failed = line.decode().split()
                if slowest != "-":
                    self.probe_max = max(self.probe_max or 0.0, float(slowest))
                if int(failed) and self.hub.up.is_set() and self.hub.alive() and not self.chaos:
                    self.count("probe_failures", int(failed))
                    self.note_event("probe: %s round trips failed" % failed)
        finally:
            process.kill()
            await process.wait()

    # --- sampling ---------------------------------------------------------------------------

    async def sampler(self):
        path = os.path.join(self.out_dir, "samples.csv")
        admin = Admin(self.hub, timeout=5)
        fields = ["t", "phase", "pid", "rss_kb", "rss_anon_kb", "rss_file_kb", "heap_inuse_kb", "heap_free_kb", "fds", "threads", "lag_ms", "control_ms", "probe_ms", "driver_lag_ms", "scrape_ms",
                  "hub_cpu_s", "driver_cpu_s",
                  "connections", "ws_connections", "sessions", "subscriptions", "messages_out", "coalesced",
                  "slow_closes", "protocol_closes", "timeout_closes", "rejected", "commits", "driver_clients"]
        with open(path, "w", newline="") as f:
            writer = csv.writer(f)
            writer.writerow(fields)
            started = now()
            tick = 0
            while True:
                tick += 1
                await asyncio.sleep(max(0, started + tick - now()))
                driver_lag = (now() - (started + tick)) * 1000
                pid = self.hub.pid
                row = {"t": "%.1f" % (now() - (self.load_started or started)), "phase": self.phase, "pid": pid or "",
                       "driver_clients": self.live_clients, "driver_lag_ms": "%.1f" % driver_lag,
                       "probe_ms": "%.2f" % self.probe_max if self.probe_max is not None else "",
                       "driver_cpu_s": "%.1f" % sum(resource.getrusage(resource.RUSAGE_SELF)[:2])}
                metrics = {}
                if pid and self.hub.up.is_set():
                    anon, mapped = proc_rss_split_kb(pid)
                    if self.heapstats_file:
                        try:
                            inuse, free, _ = open(self.heapstats_file).read().split()
                            row.update(heap_inuse_kb=int(inuse) // 1024, heap_free_kb=int(free) // 1024)
                        except (OSError, ValueError):
                            pass
                    row.update(rss_kb=proc_rss_kb(pid), rss_anon_kb=anon, rss_file_kb=mapped, fds=proc_fds(pid),
                               threads=proc_threads(pid), hub_cpu_s=proc_cpu_seconds(pid))
                    t0 = now()
                    try:
                        status, text = await admin.request("GET", "/metrics", timeout=5)
                        if status == 200:
                            metrics = parse_metrics(text)
                            row["scrape_ms"] = "%.1f" % ((now() - t0) * 1000)
                    except HubDown as error:
                        if self.hub.up.is_set() and self.hub.alive():
                            self.count("metrics_timeouts")
                            self.note_event("metrics scrape failed: %s" % error)
                            row["scrape_ms"] = "%.1f" % ((now() - t0) * 1000)
                if metrics:
                    row.update(
                        lag_ms="%.2f" % (loop_tick_seconds(metrics, "client") * 1000),
                        control_ms="%.2f" % (loop_tick_seconds(metrics, "control") * 1000),
                        connections=int(metrics.get("pushhub_connections", 0)),
                        ws_connections=int(metrics.get("pushhub_websocket_connections", 0)),
                        sessions=int(metrics.get("pushhub_sessions", 0)),
                        subscriptions=int(metrics.get("pushhub_subscriptions", 0)),
                        messages_out=int(metrics.get("pushhub_messages_out_total", 0)),
                        coalesced=int(metrics.get("pushhub_coalesced_total", 0)),
                        slow_closes=int(metrics.get("pushhub_slow_consumer_closes_total", 0)),
                        protocol_closes=int(metrics.get("pushhub_protocol_closes_total", 0)),
                        timeout_closes=int(metrics.get("pushhub_timeout_closes_total", 0)),
                        rejected=int(metrics.get("pushhub_handshakes_rejected_total", 0)),
                        commits=int(metrics.get("pushhub_commits_total", 0)))
                self.probe_max = None
                writer.writerow([row.get(k, "") for k in fields])
                f.flush()
                self.samples.append(row)
                if self.hub.up.is_set() and not self.hub.alive() and self.crashed is None:
                    # Not one of our kills (kill9 and terminate clear `up` first).
                    self.crashed = "pushhub exited with %s during %s:\n%s" % (
                        self.hub.process.returncode, self.phase, self.hub.log_tail())
                    self.error("hub_crashed", self.crashed[-1500:])
                    self.hub.up.clear()

    # --- chaos ------------------------------------------------------------------------------

    async def killer(self):
        rng = random.Random(self.rng.random())
        while not self.stop_mutations.is_set():
            await asyncio.sleep(rng.uniform(self.args.kill_min, self.args.kill_max))
            if self.stop_mutations.is_set():
                break
            self.mutable.clear()
            self.hub.kill9()
            self.snapshot_inflight()
            killed = now()
            self.restarts += 1
            self.note_event("kill -9 #%d (%d mutations in flight)" % (self.restarts, len(self.uncertain)))
            await asyncio.sleep(rng.uniform(0, 0.5))
            listening = await self.hub.start()
            self.restart_seconds.append(listening - killed)
            await self.verify("restart %d" % self.restarts)
            self.mutable.set()

    # --- verification of acknowledged mutations ---------------------------------------------

    async def verify(self, label):
        """Checks through the admin API that every acknowledged mutation is in the hub's state;
        resolves the uncertain ones (applied: adopted as acknowledged; absent: dropped)."""
        self.verify_rounds += 1
        admins = [Admin(self.hub) for _ in range(4)]
        checks_before = self.verify_checks
        uncertain = {(entity_of(m.kind), m.name): m for m in self.uncertain if m.kind != "sync"}
        uncertain_syncs = [m for m in self.uncertain if m.kind == "sync"]
        try:
            for name, model in self.screens.items():
                await self.verify_screen(admins[0], model, uncertain.pop(("screen", name), None))
            for name in sorted(self.cohorts):
                await self.verify_cohort(admins[0], name, uncertain.pop(("cohort", name), None))
            for key in sorted(EXPERIMENTS):
                await self.verify_experiment(admins[0], key, uncertain.pop(("experiment", key), None))
            for mutation in uncertain.values():
                self.error("verifier", "uncertain mutation not resolved: %s %s" % (mutation.method, mutation.path))
            await self.verify_syncs(admins, uncertain_syncs)
        except HubDown as error:
            self.error("verify_unreachable", "%s: %s" % (label, error))
        finally:
            for admin in admins:
                admin.close()
        self.uncertain = [m for m in self.uncertain if m.state == "uncertain"]
        self.note_event("verified after %s: %d checks" % (label, self.verify_checks - checks_before))

    def lose(self, what):
        self.lost.append(what)
        self.error("lost_mutation", what)

    def resolve(self, mutation, applied):
        if mutation is None:
            return
        if applied:
            mutation.state = "applied"
            mutation.adopted = True
            self.adopted += 1
        else:
            mutation.state = "absent"
            self.absent += 1

    async def verify_screen(self, admin, model, mutation):
        name = model.name
        status, current = await admin.request("GET", "/v1/screens/" + name)
        self.verify_checks += 1

        def matches_acked():
            if not model.exists:
                return status == 404
            return (status == 200 and current["version"] == model.version
                    and current["hash"] == model.hashes[model.version]
                    and current["tree"] == capability_filter(model.trees[model.version], None))

        if matches_acked():
            self.resolve(mutation, False)
        elif mutation is not None and mutation.kind == "delete" and status == 404:
            self.resolve(mutation, True)
            model.delete()
        elif (mutation is not None and mutation.kind in ("publish", "rollback") and status == 200
              and current["version"] == model.last_number + 1
              and current["tree"] == capability_filter(mutation.tree, None)):
            self.resolve(mutation, True)
            model.publish(current["version"], current["hash"], mutation.tree)
        else:
            self.lose("screen %s: hub has %s %s, acknowledged: %s v%d (uncertain: %s)" % (
                name, status, {k: current.get(k) for k in ("version", "hash")} if status == 200 else current,
                "exists" if model.exists else "deleted", model.version,
                mutation and "%s %s" % (mutation.method, mutation.path)))
            return
        if not model.exists:
            return
        status, history = await admin.request("GET", "/v1/screens/%s/history" % name)
        self.verify_checks += 1
        if status != 200:
            self.lose("screen %s history: %s %s" % (name, status, history))
            return
        kept = {v["version"]: v["hash"] for v in history["versions"]}
        low = max(model.generation_start, model.version - self.args.keep_versions + 1)
        for version in range(low, model.version + 1):
            if version not in model.hashes:
                continue  # a version given to an uncertain publish that was dropped
            if kept.get(version) != model.hashes[version]:
                self.lose("screen %s v%d (hash %s) missing from the history %s" % (
                    name, version, model.hashes[version], sorted(kept)))
            else:
                model.verified.add(version)
        if max(kept) != model.version:
            self.lose("screen %s: history goes to v%d, current v%d" % (name, max(kept), model.version))

    async def verify_cohort(self, admin, name, mutation):
        status, answer = await admin.request("GET", "/v1/cohorts/" + name)
        self.verify_checks += 1

        def matches(expected):
            if expected is None:
                return status == 404
            users, rule = expected
            return (status == 200 and answer["users"] == len(users) and answer["sample"] == sorted(users)[:100]
                    and normalize_rule(answer.get("rule")) == normalize_rule(rule))

        if matches(self.cohorts[name]):
            self.resolve(mutation, False)
        elif mutation is not None and matches(mutation.after):
            self.resolve(mutation, True)
            self.cohorts[name] = mutation.after
            self.cohort_ops[name].append(False)
        else:
            self.lose("cohort %s: hub has %s %s, acknowledged %s (uncertain: %s)" % (
                name, status, str(answer)[:300], self.cohorts[name], mutation and mutation.body))
            return
        ops = self.cohort_ops[name]
        self.cohort_ops[name] = [True] * len(ops)
        self.counters["verified_cohort_ops"] += ops.count(False)

    async def verify_experiment(self, admin, key, mutation):
        status, answer = await admin.request("GET", "/v1/experiments/" + key)
        self.verify_checks += 1

        def matches(expected):
            if expected is None:
                return status == 404
            return status == 200 and normalize(answer) == normalize(expected)

        if matches(self.experiments.get(key)):
            self.resolve(mutation, False)
        elif mutation is not None and matches(mutation.after):
            self.resolve(mutation, True)
            self.experiments[key] = mutation.after
            self.exp_state[key] = mutation.state_after
            self.experiment_ops[key].append(False)
        else:
            self.lose("experiment %s: hub has %s %s, acknowledged %s (uncertain: %s)" % (
                key, status, str(answer)[:400], str(self.experiments.get(key))[:400],
                mutation and mutation.method))
            return
        ops = self.experiment_ops[key]
        self.experiment_ops[key] = [True] * len(ops)
        self.counters["verified_experiment_ops"] += ops.count(False)

    async def verify_syncs(self, admins, uncertain):
        # Uncertain syncs first: a committed one holds a number no acknowledged sync has, above
        # the last round's highest (gaps below the highest acknowledged one, then the next ones).
        pending = list(uncertain)
        gaps = [seq for seq in range(self.seq_floor + 1, self.max_seq + 1) if seq not in self.syncs]
        seq = self.max_seq
        while pending and (gaps or seq is not None):
            probe = gaps.pop(0) if gaps else seq + 1
            status, answer = await admins[0].request("GET", "/v1/syncs/s-%d" % probe)
            self.verify_checks += 1
            if status != 200:
                if probe > self.max_seq:
                    break
                continue
            match = next((m for m in pending if same_sync(answer, m.body)), None)
            if match is None:
                # Not one of ours in flight (a bad input the hub should have refused?): say so.
                self.error("verifier_unknown_sync", "s-%d matches no request in flight: %s" % (probe, str(answer)[:300]))
                if probe > self.max_seq:
                    self.max_seq = seq = probe
                continue
            pending.remove(match)
            self.resolve(match, True)
            self.syncs[probe] = SyncRecord(probe, "s-%d" % probe, match.body, match.t_send, now())
            if probe > self.max_seq:
                self.max_seq = seq = probe
        for mutation in pending:
            self.resolve(mutation, False)
        self.seq_floor = self.max_seq
        # Every acknowledged, unexpired sync.
        t = now()
        records = [r for r in self.syncs.values() if r.t_send + r.ttl > t + 3]

        async def check(admin, chunk):
            for record in chunk:
                status, answer = await admin.request("GET", "/v1/syncs/" + record.id)
                self.verify_checks += 1
                if status != 200 or not same_sync(answer, sync_as_body(record)) or answer.get("seq") != record.seq:
                    if record.t_send + record.ttl > now() + 3:
                        self.lose("sync %s (%s): hub answers %s %s" % (record.id, record.target, status,
                                                                       str(answer)[:300]))
                else:
                    if not record.verified:
                        record.verified = True
                        self.counters["verified_syncs"] += 1

        await asyncio.gather(*(check(admins[i], records[i::len(admins)]) for i in range(len(admins))))

    # --- end-of-run checks ------------------------------------------------------------------

    async def converge(self):
        """With mutations stopped and clients frozen: every steady client holds exactly the tree
        the model says it must see, for every screen it is subscribed to."""
        deadline = now() + 40
        while now() < deadline:
            ready = [c for c in self.steady if c.connected and c.conn and c.conn.settled and not c.pending
                     and not c.detached]
            if len(ready) == len(self.steady):
                break
            await asyncio.sleep(0.5)
        await asyncio.sleep(3)
        checked = diverged = 0
        for client in self.steady:
            if not (client.connected and client.conn and client.conn.settled):
                self.count("converge_skipped_not_connected")
                continue
            for screen in sorted(client.subscribed):
                model = self.screens[screen]
                held = client.held.get(screen)
                checked += 1
                if not model.exists:
                    diverged += 1
                    self.error("converge_deleted", "%s still subscribed to deleted %s" % (client.name, screen))
                    continue
                expected = expected_tree(model.trees[model.version], screen, self.experiments, client.id)
                digest = jcs_hash(expected)
                # The version may be older: a version that does not change what this client sees
                # is not sent (docs/protocol.md), the hash must match.
                if held is None or held[1] != digest or held[2] != expected or held[0] > model.version:
                    diverged += 1
                    self.error("converge_diverged", "%s (%s %s %s) %s: holds v%s %s, expected v%d %s" % (
                        client.name, client.id.unit, client.id.platform, client.id.version, screen,
                        held and held[0], held and held[1], model.version, digest))
        self.count("converge_checked", checked)
        return checked, diverged

    def check_sync_delivery(self):
        """Per steady client and acknowledged sync it is targeted by (as far as the driver can
        tell): delivered, unless it was neither connected for the live delivery nor replayed."""
        t_end = now()
        required = delivered = lost = misdelivered = 0
        for client in self.steady:
            received_by_seq = {seq: (sid, mandatory) for sid, (seq, mandatory) in client.received.items()}
            collapse_max = collections.defaultdict(int)
            for seq in received_by_seq:
                record = self.syncs.get(seq)
                if record is not None and record.collapse:
                    collapse_max[record.collapse] = max(collapse_max[record.collapse], seq)
            for record in self.syncs.values():
                reach = targets(record.target, client.id)
                got = record.seq in received_by_seq
                if reach is False:
                    if got:
                        misdelivered += 1
                        self.error("sync_misdelivered", "%s (%s %s %s) got %s for %s" % (
                            client.name, client.id.user, client.id.platform, client.id.version, record.id,
                            record.target))
                    continue
                if reach is None:
                    continue
                if got:
                    if record.mandatory and not received_by_seq[record.seq][1]:
                        self.error("sync_mandatory", "%s got %s without mandatory" % (client.name, record.id))
                satisfied = got or (record.collapse and collapse_max[record.collapse] > record.seq)
                if not self.sync_required(client, record, t_end):
                    if not satisfied and record.spread and any(
                            c.welcome_t and c.welcome_t < record.t_send and (c.end_t or t_end) > record.t_ack
                            for c in client.connections):
                        # Online when a spread sync was sent, gone before its turn, back with a
                        # last_sync past it (it had received a later sync): DESIGN §5 leaves this open.
                        self.count("spread_gap")
                    continue
                required += 1
                if satisfied:
                    delivered += 1
                else:
                    lost += 1
                    self.error("sync_lost", "%s (%s %s %s) never got %s (%s, collapse %s, spread %s, ttl %s); "
                               "connections %s" % (client.name, client.id.user, client.id.platform,
                                                   client.id.version, record.id, record.target, record.collapse,
                                                   record.spread, record.ttl, describe_connections(client, record)))
        return required, delivered, lost, misdelivered

    @staticmethod
    def sync_required(client, record, t_end):
        for conn in client.connections:
            end = conn.end_t or t_end
            if conn.welcome_t is not None and conn.welcome_t < record.t_send and end > record.t_ack + record.spread + 5:
                return True
            if (conn.settled and conn.hello_t > record.t_ack and conn.hello_t < record.t_send + record.ttl - 2):
                if conn.last_sync is not None and conn.last_sync < record.seq:
                    return True
                if conn.last_sync is None and client.id.user is not None and (
                        record.target.get("user") == client.id.user or client.id.user in record.target.get("users", ())):
                    return True
        return False

    # --- run --------------------------------------------------------------------------------

    async def run(self):
        args = self.args
        self.exp_state = {}
        started = now()
        await self.hub.start()
        self.mutable.set()
        self.spawn(self.sampler(), "sampler")
        await self.setup()
        self.phase = "baseline"
        await asyncio.sleep(args.baseline)
        self.phase = "load"
        self.load_started = now()
        load_seconds = args.minutes * 60
        self.burst_interval = min(300.0, load_seconds / 6)
        self.note_event("load: %d steady clients, %.1f min" % (args.clients, args.minutes))
        rng = random.Random(self.rng.random())
        for i in range(args.clients):
            identity = random_identity(rng, i)
            client = Client(self, "steady-%d" % i, identity, self.pick_screens(rng))
            self.steady.append(client)
            self.spawn(client.run(initial_delay=rng.uniform(0, min(20, load_seconds / 10))), "steady client")
        mutators = [self.spawn(self.publisher(name, interval / args.publish_rate), "publisher")
                    for name, (_, interval) in SCREENS.items()]
        mutators += [self.spawn(self.hammer(i), "hammer") for i in range(args.hammers)]
        mutators += [self.spawn(self.ephemeral(), "ephemeral"), self.spawn(self.syncer(), "syncer"),
                     self.spawn(self.cohort_changer(), "cohorts"), self.spawn(self.experimenter(), "experiments")]
        if self.chaos:
            mutators.append(self.spawn(self.killer(), "killer"))
        self.spawn(self.probes(), "probes")
        self.spawn(self.churn(), "churn")
        self.spawn(self.slow_consumers(), "slow consumers")
        if args.burst:
            self.spawn(self.bursts(), "bursts")
        if args.bad_interval > 0:
            self.spawn(self.bad_inputs(), "bad inputs")
        while now() - self.load_started < load_seconds and self.crashed is None:
            await asyncio.sleep(1)
            if (now() - self.load_started) % 60 < 1:
                self.progress()
        # Settle: no more mutations or disconnects; every steady client must converge.
        self.phase = "settle"
        self.stop_mutations.set()
        self.freeze.set()
        await asyncio.wait(mutators, timeout=30)
        if not self.mutable.is_set() and self.crashed is None:
            await self.mutable.wait()
        await asyncio.sleep(max(5.0, max((r.spread for r in self.syncs.values()), default=0) + 2))
        results = {}
        if self.crashed is None:
            results["converge"] = await self.converge()
            results["delivery"] = self.check_sync_delivery()
        # Drain: clients leave; descriptors must come back to the baseline.
        self.phase = "drain"
        self.stop_clients.set()
        drain_started = now()
        while now() - drain_started < 60 and self.crashed is None:
            await asyncio.sleep(1)
            last = self.samples[-1] if self.samples else {}
            if self.live_clients == 0 and last.get("connections") in (1, 0):
                break
        results["drain_seconds"] = now() - drain_started
        self.phase = "after"
        await asyncio.sleep(args.after)
        # A clean stop, a restart on the same data, and every acknowledged mutation checked.
        if self.crashed is None:
            code, seconds = await self.hub.terminate()
            results["sigterm"] = (code, seconds)
            if code != 0:
                self.error("sigterm_exit", "exit code %s after %.1f s" % (code, seconds))
            await self.hub.start()
            # The same state in a fresh process: what the drained hub holds beyond it is a leak.
            self.phase = "restarted"
            await asyncio.sleep(args.after)
            await self.verify("final restart")
            await self.hub.terminate()
        for task in self.tasks:
            task.cancel()
        await asyncio.gather(*self.tasks, return_exceptions=True)
        results["elapsed"] = now() - started
        return results

    def progress(self):
        last = self.samples[-1] if self.samples else {}
        line = ("[%s %4.0f s] hub rss %s kB fds %s lag %s ms conns %s | clients %d | publishes %d syncs %d "
                "cohort %d exp %d | errors %d%s" % (
                    self.args.mode, now() - self.load_started, last.get("rss_kb"), last.get("fds"),
                    last.get("lag_ms"), last.get("connections"), self.live_clients, self.counters["acked_publishes"],
                    self.counters["acked_syncs"], self.counters["acked_cohort_ops"],
                    self.counters["acked_experiment_ops"], sum(self.errors.values()),
                    " | restarts %d lost %d" % (self.restarts, len(self.lost)) if self.chaos else ""))
        print(line, flush=True)


# Experiments the driver changes; their variant patches come from `make_patch`.
EXPERIMENTS = {
    "exp-a": {"variants": ["control", "B"], "screens": {"exp/a": ["B"], "home": ["B"]}},
    "exp-b": {"variants": ["control", "compact", "wide"], "audience": {"platform": ["ios", "android"],
                                                                        "app_version": ">=5.1.0"},
              "screens": {"exp/b": ["compact", "wide"]}},
    "exp-l1": {"variants": ["x", "y"], "layer": "L1", "layer_range": [0, 5000], "screens": {"exp/a": ["x", "y"]}},
    "exp-l2": {"variants": ["p", "q"], "layer": "L1", "layer_range": [5000, 10000], "screens": {"exp/b": ["q"]}},
}


def make_patch(generation, variant, screen):
    if screen == "home":
        return {"title": "home %s %d" % (variant, generation % 100)}
    patch = {"banner": {"text": "%s-%d" % (variant, generation), "color": ["red", "blue", "green"][generation % 3]}}
    if generation % 4 == 0:
        patch["promo"] = {"id": "promo", "type": "promo", "text": "new %s" % variant, "min_app_version": "5.3.0",
                          "fallback": {"id": "promo", "type": "text", "text": "old %s" % variant}}
    if generation % 5 == 1:
        patch["banner"] = None
    return patch


def entity_of(kind):
    return "screen" if kind in ("publish", "rollback", "delete") else kind.split("_")[0]


def normalize(value):
    """JSON values compared as the hub writes them (1.0 == 1)."""
    return json.loads(json.dumps(value)) if value is not None else None


def sync_as_body(record):
    body = {"target": record.target, "reason": record.reason, "scope": record.scope, "ttl": record.ttl,
            "spread": record.spread}
    if record.collapse:
        body["collapse"] = record.collapse
    if record.mandatory:
        body["mandatory"] = True
    if record.hint is not None:
        body["hint"] = record.hint
    return body


def normalize_target(target):
    target = dict(target)
    if "users" in target:
        target["users"] = sorted(set(target["users"]))
    return normalize(target)


def normalize_rule(rule):
    if rule is None:
        return None
    rule = dict(rule)
    if isinstance(rule.get("platform"), str):
        rule["platform"] = [rule["platform"]]
    return normalize(rule)


def same_sync(answer, body):
    """The hub's record of a sync (GET /v1/syncs/ID) says what the request said."""
    if not isinstance(answer, dict):
        return False
    if normalize_target(answer.get("target")) != normalize_target(body["target"]):
        return False
    ttl_ms = int(parse_seconds(body.get("ttl", 24 * 3600)) * 1000)
    if answer.get("expires_at", 0) - answer.get("created_at", 0) != ttl_ms:
        return False
    if answer.get("spread_ms", 0) != int(parse_seconds(body.get("spread", 0)) * 1000):
        return False
    if answer.get("reason") != body.get("reason", "sync") or answer.get("scope") != body.get("scope", "bundle"):
        return False
    if answer.get("collapse") != body.get("collapse"):
        return False
    if bool(answer.get("mandatory")) != bool(body.get("mandatory")):
        return False
    if normalize(answer.get("hint")) != normalize(body.get("hint")):
        return False
    return True


def describe_connections(client, record):
    parts = []
    for conn in client.connections[-6:]:
        parts.append("[hello %.1f welcome %s end %s last_sync %s welcome_seq %s settled %s]" % (
            conn.hello_t - record.t_ack, "%.1f" % (conn.welcome_t - record.t_ack) if conn.welcome_t else None,
            "%.1f" % (conn.end_t - record.t_ack) if conn.end_t else None, conn.last_sync, conn.welcome_seq,
            conn.settled))
    return "relative to the ack (seq %d): %s" % (record.seq, " ".join(parts))


# ---------------------------------------------------------------------------------------------
# Summary


def median(values):
    values = [v for v in values if v is not None]
    return statistics.median(values) if values else None


def p99(values):
    """The 99th percentile (nearest rank) of `values`, None when there are none."""
    return sorted(values)[int(len(values) * 0.99)] if values else None


def window(samples, key, start, end):
    out = []
    for row in samples:
        if row["phase"] != "load":
            continue
        t = float(row["t"])
        if start <= t < end and row.get(key) not in (None, ""):
            out.append(float(row[key]))
    return out


def summarize(drv, results):
    args = drv.args
    load = args.minutes * 60
    w = min(300.0, load / 6)
    samples = drv.samples
    lines = []

    def fmt(v, unit="", scale=1.0, digits=1):
        return "n/a" if v is None else ("%.*f%s" % (digits, v / scale, unit))

    base_fds = median([float(r["fds"]) for r in samples if r["phase"] == "baseline" and r.get("fds")])
    base_rss = median([float(r["rss_kb"]) for r in samples if r["phase"] == "baseline" and r.get("rss_kb")])
    after = [r for r in samples if r["phase"] == "after" and r.get("fds")]
    after_fds = median([float(r["fds"]) for r in after])
    after_rss = median([float(r["rss_kb"]) for r in after])
    first = {k: median(window(samples, k, 0, w)) for k in ("rss_kb", "fds", "lag_ms", "connections")}
    ref = {k: median(window(samples, k, w, 2 * w)) for k in ("rss_kb", "fds", "lag_ms", "connections")}
    last = {k: median(window(samples, k, load - w, load + 1)) for k in ("rss_kb", "fds", "lag_ms", "connections")}
    lags = window(samples, "lag_ms", 0, load + 1)
    max_lag = max(lags) if lags else None
    p99_lag = p99(lags)
    rss_all = window(samples, "rss_kb", 0, load + 1)
    peak_rss = max(rss_all) if rss_all else None
    fds_all = window(samples, "fds", 0, load + 1)
    peak_fds = max(fds_all) if fds_all else None
    conns_all = window(samples, "connections", 0, load + 1)

    lines.append("== PushHub %s: %.1f min of load, seed %d, %d steady clients, output %s" % (
        args.mode, args.minutes, args.seed, args.clients, drv.out_dir))
    lines.append("windows (load time): first [0,%.0f) s, reference [%.0f,%.0f) s, last [%.0f,%.0f) s" % (
        w, w, 2 * w, load - w, load))
    lines.append("RSS     baseline %s  first %s  ref %s  last %s  peak %s  after-drain %s" % (
        fmt(base_rss, " MB", 1024), fmt(first["rss_kb"], " MB", 1024), fmt(ref["rss_kb"], " MB", 1024),
        fmt(last["rss_kb"], " MB", 1024), fmt(peak_rss, " MB", 1024), fmt(after_rss, " MB", 1024)))
    anon = {k: median(window(samples, "rss_anon_kb", a, b)) for k, (a, b) in
            (("first", (0, w)), ("ref", (w, 2 * w)), ("last", (load - w, load + 1)))}
    mapped_last = median(window(samples, "rss_file_kb", load - w, load + 1))
    lines.append("  anon  first %s  ref %s  last %s   (RssAnon: heap; the rest is RssFile, code and libraries "
                 "paged in, last %s)" % (fmt(anon["first"], " MB", 1024), fmt(anon["ref"], " MB", 1024),
                                         fmt(anon["last"], " MB", 1024), fmt(mapped_last, " MB", 1024)))
    if any(r.get("heap_inuse_kb") for r in samples):
        heap = {k: median(window(samples, "heap_inuse_kb", a, b)) for k, (a, b) in
                (("first", (0, w)), ("ref", (w, 2 * w)), ("last", (load - w, load + 1)))}
        held = median(window(samples, "heap_free_kb", load - w, load + 1))
        heap_after = median([float(r["heap_inuse_kb"]) for r in samples if r["phase"] == "after"
                             and r.get("heap_inuse_kb")])
        heap_base = median([float(r["heap_inuse_kb"]) for r in samples if r["phase"] == "baseline"
                            and r.get("heap_inuse_kb")])
        lines.append("  heap  in use (mallinfo2) baseline %s  first %s  ref %s  last %s  after-drain %s;  freed but "
                     "held by the allocator, last %s" % (
                         fmt(heap_base, " MB", 1024), fmt(heap["first"], " MB", 1024), fmt(heap["ref"], " MB", 1024),
                         fmt(heap["last"], " MB", 1024), fmt(heap_after, " MB", 1024), fmt(held, " MB", 1024)))
    restarted = [r for r in samples if r["phase"] == "restarted"][3:]  # the new process's own figures
    if restarted:
        # What the drained hub holds beyond a fresh process loaded with the same state (the restart
        # on the same data dir) is what the load left behind: a leak, or caches kept on purpose.
        fresh_rss = median([float(r["rss_kb"]) for r in restarted if r.get("rss_kb")])
        fresh_heap = median([float(r["heap_inuse_kb"]) for r in restarted if r.get("heap_inuse_kb")])
        drained_heap = median([float(r["heap_inuse_kb"]) for r in samples if r["phase"] == "after"
                               and r.get("heap_inuse_kb")])
        lines.append("state   the same state restarted in a fresh process: RSS %s, heap in use %s; the drained hub "
                     "held %s more RSS and %s more heap" % (
                         fmt(fresh_rss, " MB", 1024), fmt(fresh_heap, " MB", 1024),
                         fmt(after_rss - fresh_rss if after_rss and fresh_rss else None, " MB", 1024),
                         fmt(drained_heap - fresh_heap if drained_heap and fresh_heap else None, " MB", 1024)))
    lines.append("fds     baseline %s  first %s  ref %s  last %s  peak %s  after-drain %s" % (
        fmt(base_fds, digits=0), fmt(first["fds"], digits=0), fmt(ref["fds"], digits=0), fmt(last["fds"], digits=0),
        fmt(peak_fds, digits=0), fmt(after_fds, digits=0)))
    lines.append("lag     client loops: first %s  ref %s  last %s (medians)  p99 %s  max %s" % (
        fmt(first["lag_ms"], " ms", digits=2), fmt(ref["lag_ms"], " ms", digits=2),
        fmt(last["lag_ms"], " ms", digits=2), fmt(p99_lag, " ms", digits=1), fmt(max_lag, " ms", digits=1)))
    control = window(samples, "control_ms", 0, load + 1)
    if control:
        lines.append("  control plane (its ticks hold the group-commit fsync; a stall there shows as a failed "
                     "scrape): median %s  p99 %s  max %s" % (
                         fmt(median(control), " ms", digits=2), fmt(p99(control), " ms", digits=1),
                         fmt(max(control), " ms", digits=1)))
    probes = window(samples, "probe_ms", 0, load + 1)
    dlag = window(samples, "driver_lag_ms", 0, load + 1)
    lines.append("probe   client round trip (subscribe -> error, slowest of 4 per second): first %s  ref %s  last %s "
                 "(medians)  p99 %s  max %s;  driver's own scheduling delay p99 %s max %s" % (
                     fmt(median(window(samples, "probe_ms", 0, w)), " ms", digits=2),
                     fmt(median(window(samples, "probe_ms", w, 2 * w)), " ms", digits=2),
                     fmt(median(window(samples, "probe_ms", load - w, load + 1)), " ms", digits=2),
                     fmt(p99(probes), " ms"),
                     fmt(max(probes) if probes else None, " ms"),
                     fmt(p99(dlag), " ms"),
                     fmt(max(dlag) if dlag else None, " ms")))
    lines.append("conns   first %s  ref %s  last %s (medians)  peak %s" % (
        fmt(first["connections"], digits=0), fmt(ref["connections"], digits=0), fmt(last["connections"], digits=0),
        fmt(max(conns_all) if conns_all else None, digits=0)))
    c = drv.counters
    lines.append("load    connects %d (bursts %d), slow consumers %d (caught up %d), publishes %d, deletes %d, "
                 "syncs %d, cohort ops %d, experiment ops %d; client messages: snapshots %d patches %d unchanged %d "
                 "syncs %d" % (c["connects"], c["bursts"], c["slow_consumers"], c["slow_consumers_caught_up"],
                               c["acked_publishes"], c["acked_deletes"], c["acked_syncs"], c["acked_cohort_ops"],
                               c["acked_experiment_ops"], c["snapshots"], c["patches"], c["unchanged"],
                               c["syncs_received"]))
    ok = sum(v[0] for v in drv.bad_results.values())
    bad = sum(v[1] for v in drv.bad_results.values())
    lines.append("bad inputs: %d cases run, %d answered as documented, %d not%s" % (
        ok + bad, ok, bad, (": " + ", ".join("%s %d/%d" % (k, v[1], v[0] + v[1])
                                              for k, v in sorted(drv.bad_results.items()) if v[1])) if bad else ""))
    if "converge" in results:
        checked, diverged = results["converge"]
        required, delivered, lost, misdelivered = results["delivery"]
        lines.append("correctness: patch chains: %d patches + %d snapshots hash-checked; convergence %d subscriptions "
                     "checked, %d diverged; syncs: %d required deliveries, %d delivered, %d lost, %d misdelivered" % (
                         c["patches"], c["snapshots"], checked, diverged, required, delivered, lost, misdelivered))
    total_errors = sum(drv.errors.values())
    lines.append("errors: %d%s; driver exceptions %d; unplanned client disconnects %d" % (
        total_errors, (" (" + ", ".join("%s %d" % kv for kv in sorted(drv.errors.items())) + ")") if total_errors else "",
        c["driver_exceptions"], c["unplanned_disconnects_soak"] if not drv.chaos else c["unplanned_disconnects"]))
    if "sigterm" in results:
        lines.append("SIGTERM: exit %s after %.1f s; restart + verification of every acknowledged mutation: %s" % (
            results["sigterm"][0], results["sigterm"][1], "no loss" if not drv.lost else "%d LOST" % len(drv.lost)))

    acked = (c["acked_publishes"] + c["acked_deletes"] + c["acked_syncs"] + c["acked_cohort_ops"]
             + c["acked_experiment_ops"])
    if drv.chaos:
        versions = sum(len(m.hashes) for m in drv.screens.values())
        verified_versions = sum(len(m.verified) for m in drv.screens.values())
        rs = sorted(drv.restart_seconds)
        lines.append("chaos: restarts %d (kill -9 every %.0f-%.0f s; restart to listening median %s s, max %s s); "
                     "acknowledged mutations %d (of which %d answered just before a kill, read after it; "
                     "+%d in flight at a kill and found applied, %d found absent); "
                     "verification rounds %d, %d checks; screen versions verified in history %d/%d, syncs verified "
                     "%d/%d, cohort ops %d/%d, experiment ops %d/%d; LOST %d" % (
                         drv.restarts, args.kill_min, args.kill_max, fmt(median(rs), digits=2),
                         fmt(rs[-1] if rs else None, digits=2), acked, len(drv.late_acks), drv.adopted, drv.absent,
                         drv.verify_rounds,
                         drv.verify_checks, verified_versions, versions, c["verified_syncs"], len(drv.syncs),
                         c["verified_cohort_ops"], c["acked_cohort_ops"], c["verified_experiment_ops"],
                         c["acked_experiment_ops"], len(drv.lost)))

    # What the hub itself logged at warning or error level (msg: count), over every process.
    logged = collections.Counter()
    for path in drv.hub.log_paths:
        try:
            for line in open(path, errors="replace"):
                try:
                    entry = json.loads(line)
                except ValueError:
                    logged["(not JSON) " + line.strip()[:80]] += 1
                    continue
                if entry.get("level") in ("warning", "error"):
                    logged["%s: %s" % (entry["level"], entry.get("msg"))] += 1
        except OSError:
            pass
    lines.append("hub logs: %d processes; warnings/errors: %s" % (
        len(drv.hub.log_paths), ", ".join("%s x%d" % kv for kv in logged.most_common(8)) or "none"))

    # Verdicts.
    reasons = []
    if drv.crashed:
        reasons.append("the hub crashed")
    if ref["rss_kb"] and last["rss_kb"] and last["rss_kb"] > ref["rss_kb"] * 1.10:
        reasons.append("RSS last-window median %.1f MB > 110%% of the reference %.1f MB" % (
            last["rss_kb"] / 1024, ref["rss_kb"] / 1024))
    if base_fds is not None and (after_fds is None or after_fds > base_fds + 2):
        reasons.append("descriptors after drain %s > baseline %s + 2" % (after_fds, base_fds))
    if max_lag is not None and max_lag > args.max_lag_ms:
        reasons.append("max loop lag %.0f ms > %d ms" % (max_lag, args.max_lag_ms))
    if ref["lag_ms"] is not None and last["lag_ms"] is not None and \
            last["lag_ms"] > max(2 * ref["lag_ms"], ref["lag_ms"] + 5):
        reasons.append("lag last-window median %.2f ms > max(2 x ref, ref + 5 ms)" % last["lag_ms"])
    if c["metrics_timeouts"] > 0:
        reasons.append("%d /metrics scrapes failed (a stall)" % c["metrics_timeouts"])
    if not drv.chaos:
        lines.append("verdict: %s" % ("flat" if not reasons else "NOT flat: " + "; ".join(reasons)))
    else:
        lines.append("chaos verdict: %s" % ("PASS (nothing acknowledged was lost)" if not drv.lost and not drv.crashed
                                             else "FAIL: %d lost" % len(drv.lost)))
        if reasons:
            lines.append("resources under chaos (informative): " + "; ".join(reasons))
    correctness_ok = total_errors == 0 and c["driver_exceptions"] == 0
    lines.append("correctness verdict: %s" % ("clean" if correctness_ok else "ERRORS (see events.log)"))
    flat = not reasons if not drv.chaos else (not drv.lost and not drv.crashed)
    return lines, flat and correctness_ok


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("mode", choices=["soak", "chaos"])
    parser.add_argument("--minutes", type=float, default=None, help="load duration (soak 30, chaos 6)")
    parser.add_argument("--bin", default=os.path.join(ROOT, ".build-soak", "release", "pushhub"))
    parser.add_argument("--out", default=None, help="output dir (default bench/soak/out/MODE-TIMESTAMP)")
    parser.add_argument("--seed", type=int, default=None)
    parser.add_argument("--clients", type=int, default=300, help="steady clients (reconnect all run long)")
    parser.add_argument("--burst", type=int, default=800, help="short-lived clients per burst (0: none)")
    parser.add_argument("--churn-rate", type=float, default=1.0, help="short-lived clients per second")
    parser.add_argument("--publish-rate", type=float, default=1.0, help="multiplier of the publish rates")
    parser.add_argument("--sync-rate", type=float, default=1.0, help="syncs per second")
    parser.add_argument("--hammers", type=int, default=None,
                        help="back-to-back mutators on their own screens (chaos 4, soak 0)")
    parser.add_argument("--bad-interval", type=float, default=1.5, help="seconds between bad inputs (0: none)")
    parser.add_argument("--session-min", type=float, default=20.0)
    parser.add_argument("--session-max", type=float, default=240.0)
    parser.add_argument("--kill-min", type=float, default=5.0)
    parser.add_argument("--kill-max", type=float, default=15.0)
    parser.add_argument("--baseline", type=float, default=10.0)
    parser.add_argument("--after", type=float, default=15.0)
    parser.add_argument("--max-lag-ms", type=int, default=1000)
    parser.add_argument("--device-pool", type=int, default=400,
                        help="device ids the churn clients reuse (bursts reuse their own --burst ids)")
    parser.add_argument("--keep-versions", type=int, default=16)
    parser.add_argument("--loops", type=int, default=0)
    parser.add_argument("--heapstats", default=None,
                        help="LD_PRELOAD this heapstats.so into the hub: allocator in-use/free bytes per second")
    parser.add_argument("--log-level", default="warning")
    args = parser.parse_args()
    if args.minutes is None:
        args.minutes = 30.0 if args.mode == "soak" else 6.0
    if args.hammers is None:
        args.hammers = 4 if args.mode == "chaos" else 0
    if args.seed is None:
        args.seed = random.randrange(10 ** 6)
    if not os.access(args.bin, os.X_OK):
        print("no pushhub binary at %s (build: swift build -c release --scratch-path .build-soak)" % args.bin,
              file=sys.stderr)
        return 2
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
    # A client killed mid-write makes asyncio warn per write ("socket.send() raised exception").
    logging.getLogger("asyncio").setLevel(logging.ERROR)
    drv = Driver(args)

    async def go():
        try:
            return await drv.run()
        finally:
            if drv.hub.alive():
                drv.hub.kill9()

    def stop(signum, frame):
        if drv.hub.alive():
            drv.hub.kill9()
        os._exit(2)

    signal.signal(signal.SIGTERM, stop)
    signal.signal(signal.SIGINT, stop)
    try:
        results = asyncio.run(go())
    except KeyboardInterrupt:
        return 2
    lines, ok = summarize(drv, results)
    text = "\n".join(lines)
    print(text, flush=True)
    with open(os.path.join(drv.out_dir, "summary.txt"), "w") as f:
        f.write(text + "\n")
        for kind, details in sorted(drv.error_details.items()):
            f.write("\n[%s]\n" % kind)
            for detail in details:
                f.write("  %s\n" % detail)
        for name, details in sorted(drv.bad_details.items()):
            f.write("\n[bad input %s]\n" % name)
            for detail in details:
                f.write("  %s\n" % detail)
        f.write("\ncounters: %s\n" % json.dumps(dict(sorted(drv.counters.items()))))
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
