"""Other implementations agree with the hub: Python's `jsonpatch` turns every old tree plus the
hub's patch into the new tree, and Python's `rfc8785` gives the hub's hash, on 1,000 seeded
random tree pairs with floats, unicode and escapes."""
import hashlib
import json
import random

import jsonpatch
import rfc8785

from admin import call, publish

STRINGS = ["", "a", "κόσμε", "emoji 😀", "quote \" backslash \\ slash /", "tab\tnewline\ncontrol\u0001", "x/y~z", "€", "\u2028"]


def leaf(rng):
    kind = rng.randrange(7)
    if kind == 0:
        return None
    if kind == 1:
        return rng.random() < 0.5
    if kind == 2:
        return rng.randrange(-10**6, 10**6)
    if kind == 3:
        return rng.choice([0.1, 1.5e-7, -2.5e21, 1e21, 123456.789, 5e-324, 1.7976931348623157e308, 0.000001, 1/3])
    return rng.choice(STRINGS)


def tree(rng, depth):
    if depth == 0 or rng.random() < 0.25:
        return leaf(rng)
    kind = rng.randrange(3)
    if kind == 0:
        return {rng.choice(["type", "title", "k1", "k2", "κ", "a/b", "m~n"]): tree(rng, depth - 1) for _ in range(rng.randrange(5))}
    if kind == 1:
        return [tree(rng, depth - 1) for _ in range(rng.randrange(5))]
    ids = ["c%d" % i for i in range(8)]
    rng.shuffle(ids)
    return [{"id": i, "type": "card", "body": tree(rng, depth - 1)} for i in ids[:rng.randrange(7)]]


def mutate(rng, value, depth):
    if rng.random() < 0.15:
        return tree(rng, depth)
    if isinstance(value, dict):
        value = dict(value)
        for key in list(value):
            if rng.random() < 0.3:
                value[key] = mutate(rng, value[key], depth - 1)
        if value and rng.random() < 0.2:
            del value[rng.choice(sorted(value))]
        if rng.random() < 0.2:
            value["new%d" % rng.randrange(3)] = tree(rng, 2)
        return value
    if isinstance(value, list):
        value = list(value)
        for i in range(len(value)):
            if rng.random() < 0.3:
                if isinstance(value[i], dict) and "id" in value[i]:
                    value[i] = dict(value[i], body=mutate(rng, value[i].get("body"), depth - 1))
                else:
                    value[i] = mutate(rng, value[i], depth - 1)
        if rng.random() < 0.3:
            rng.shuffle(value)
        if value and rng.random() < 0.2:
            value.pop(rng.randrange(len(value)))
        return value
    return leaf(rng) if rng.random() < 0.5 else value


def sha(value):
    return hashlib.sha256(rfc8785.dumps(value)).hexdigest()


def test_jsonpatch_and_rfc8785_agree_on_1000_random_pairs(hub_factory):
    hub = hub_factory("--dev")
    rng = random.Random(8785)
    pairs = 0
    for n in range(1000):
        old = {"type": "screen", "body": tree(rng, 5)}
        new = {"type": "screen", "body": mutate(rng, old["body"], 5)}
        name = "random/%d" % n
        answer = publish(hub, name, old)
        assert answer["hash"] == sha(old), json.dumps(old)
        status, dry = call(hub, "PUT", "/v1/screens/%s?dry_run=true" % name, new)
        assert status == 200, dry
        assert jsonpatch.apply_patch(old, dry["ops"]) == new, (json.dumps(old), json.dumps(new), dry["ops"])
        assert dry["hash"] == sha(new)
        pairs += 1
    assert pairs == 1000
