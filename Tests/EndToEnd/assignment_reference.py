"""DESIGN §6 assignment, as an analyst recomputes it (the same code is in docs/assignment.md).

u64(x) is the first 8 bytes of x read big-endian. Audience checks (platform, app version,
cohort) come before step 2 and are left to the analyst's own data.
"""
import hashlib


def bucket(text):
    return int.from_bytes(hashlib.sha256(text.encode("utf-8")).digest()[:8], "big") % 10000


def assign(definition, unit):
    """The variant key of `unit`, or None when it is not in the experiment."""
    key, salt = definition["key"], definition.get("salt", definition["key"])
    override = definition.get("overrides", {}).get(unit)
    if override is not None:
        return override
    if "layer" in definition:
        start, end = definition["layer_range"]
        if not start <= bucket("layer/%s/%s" % (definition["layer"], unit)) < end:
            return None
    elif not bucket("%s/%s/%s" % (salt, key, unit)) < int(definition.get("traffic", 1) * 10000):
        return None
    v = bucket("%s/%s/%s/variant" % (salt, key, unit))
    weights = [variant.get("weight", 1) for variant in definition["variants"]]
    total, cumulative = sum(weights), 0
    for variant, weight in zip(definition["variants"], weights):
        low = 10000 * cumulative // total
        cumulative += weight
        if low <= v < 10000 * cumulative // total:
            return variant["key"]
