"""What the driver knows independently of the hub: screen trees and how they change, the
rendition a client must see (RFC 7386 merge of its variants, then the capability filter), the
documented assignment function, semantic versions, and which clients a sync target reaches.
"""
import copy
import os
import random
import sys

# docs/assignment.md's reference function, the one copy the end-to-end tests use too.
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "Tests", "EndToEnd"))
from assignment_reference import assign, bucket  # noqa: E402,F401

# ---------------------------------------------------------------------------------------------
# Semantic versions and ranges (just the forms the driver uses: "5.3.0", ">=5.0.0 <6.0.0")


def semver(text):
    return tuple(int(x) for x in text.split("-")[0].split("."))


def in_range(version, range_text):
    v = semver(version)
    for comparator in range_text.split():
        for op in (">=", "<=", ">", "<", "="):
            if comparator.startswith(op):
                w = semver(comparator[len(op):])
                ok = {">=": v >= w, "<=": v <= w, ">": v > w, "<": v < w, "=": v == w}[op]
                break
        else:
            ok = v == semver(comparator)
        if not ok:
            return False
    return True


# ---------------------------------------------------------------------------------------------
# Renditions


def merge_patch(target, patch):
    """RFC 7386."""
    if not isinstance(patch, dict):
        return copy.deepcopy(patch)
    result = dict(target) if isinstance(target, dict) else {}
    for key, value in patch.items():
        if value is None:
            result.pop(key, None)
        else:
            result[key] = merge_patch(result.get(key), value)
    return result


_REMOVE = object()


def capability_filter(node, version):
    """DESIGN §4: a node with min_app_version is, below it, its fallback (filtered) or removed;
    at or above it, the node without both keys. `version` None: up to date."""
    if isinstance(node, dict):
        if "min_app_version" in node:
            if version is not None and semver(version) < semver(node["min_app_version"]):
                if "fallback" in node:
                    return capability_filter(node["fallback"], version)
                return _REMOVE
            node = {k: v for k, v in node.items() if k not in ("min_app_version", "fallback")}
        out = {}
        for k, v in node.items():
            f = capability_filter(v, version)
            if f is not _REMOVE:
                out[k] = f
        return out
    if isinstance(node, list):
        out = []
        for v in node:
            f = capability_filter(v, version)
            if f is not _REMOVE:
                out.append(f)
        return out
    return node


def variant_of(definition, client):
    """The variant `client` is served, or None (override first, then audience, then buckets)."""
    unit = client.unit
    override = definition.get("overrides", {}).get(unit)
    if override is not None:
        return override
    audience = definition.get("audience") or {}
    if "platform" in audience and client.platform not in audience["platform"]:
        return None
    if "app_version" in audience and not in_range(client.version, audience["app_version"]):
        return None
    return assign(definition, unit)


def expected_tree(base, screen, experiments, client):
    """The tree `client` must hold for `screen`: base + running variants' merge patches in
    experiment-key order, then the capability filter."""
    tree = base
    for key in sorted(experiments):
        definition = experiments[key]
        if definition is None or definition.get("status") != "running":
            continue
        patches = (definition.get("screens") or {}).get(screen)
        if not patches:
            continue
        variant = variant_of(definition, client)
        if variant is not None and variant in patches:
            tree = merge_patch(tree, patches[variant])
    return capability_filter(tree, client.version)


# ---------------------------------------------------------------------------------------------
# Screens the publisher keeps changing


WORDS = ("alpha bravo charlie delta echo foxtrot golf hotel india juliet kilo lima mike november oscar papa "
         "quebec romeo sierra tango uniform victor whiskey xray yankee zulu").split()


class ScreenGen:
    """One screen's base tree and random edits of it (keyed children: edits, inserts, removes,
    moves; nested lists; capability nodes)."""

    def __init__(self, name, kind, rng):
        self.name = name
        self.kind = kind
        self.rng = rng
        self.next_id = 0
        self.tree = self.fresh()

    def _id(self):
        self.next_id += 1
        return "n%d" % self.next_id

    def _text(self, n=3):
        return " ".join(self.rng.choice(WORDS) for _ in range(n))

    def _card(self, depth=0):
        card = {"id": self._id(), "type": self.rng.choice(["text", "image", "button", "card"]),
                "text": self._text(), "n": self.rng.randint(0, 1000)}
        if depth == 0 and self.rng.random() < 0.3:
            card["children"] = [self._card(depth + 1) for _ in range(self.rng.randint(1, 4))]
        return card

    def _capability_node(self):
        node = self._card(1)
        node["min_app_version"] = self.rng.choice(["5.1.0", "5.3.0", "5.4.0"])
        if self.rng.random() < 0.6:
            node["fallback"] = {"id": node["id"], "type": "text", "text": "update the app"}
        return node

    def fresh(self):
        size = {"small": 8, "medium": 30, "big": 400, "caps": 15, "exp": 10}.get(self.kind, 10)
        if self.kind == "blob":
            return self.blob()
        children = [self._card() for _ in range(size)]
        if self.kind == "caps":
            for i in range(0, len(children), 3):
                children[i] = self._capability_node()
        tree = {"type": "screen", "title": self.name, "children": children}
        if self.kind == "exp":
            tree["banner"] = {"id": "banner", "type": "banner", "text": "base", "color": "grey"}
        return tree

    def blob(self):
        """~60 KB of new content every version: subscribers get a snapshot each time (backlog)."""
        return {"type": "screen", "title": self.name,
                "children": [{"id": self._id(), "type": "text", "text": self._text(20)} for _ in range(400)]}

    def edit(self):
        """Returns the next tree (the previous one is never mutated in place)."""
        if self.kind == "blob":
            self.tree = self.blob()
            return self.tree
        tree = copy.deepcopy(self.tree)
        children = tree["children"]
        for _ in range(self.rng.choice([1, 1, 1, 2, 3])):
            r = self.rng.random()
            if r < 0.45 and children:
                c = self.rng.choice(children)
                if "children" in c and c["children"] and self.rng.random() < 0.5:
                    c["children"][self.rng.randrange(len(c["children"]))]["text"] = self._text()
                else:
                    c["text" if self.rng.random() < 0.7 else "n"] = (
                        self._text() if self.rng.random() < 0.7 else self.rng.randint(0, 10 ** 6))
            elif r < 0.6:
                node = self._capability_node() if self.kind == "caps" and self.rng.random() < 0.5 else self._card()
                children.insert(self.rng.randint(0, len(children)), node)
            elif r < 0.72 and len(children) > 3:
                children.pop(self.rng.randrange(len(children)))
            elif r < 0.85 and len(children) > 2:
                i, j = self.rng.randrange(len(children)), self.rng.randrange(len(children))
                children.insert(j, children.pop(i))
            elif r < 0.92:
                tree["title"] = self._text(2)
            elif self.kind == "exp":
                tree["banner"]["text"] = self._text(2)
            else:
                self.rng.shuffle(children)
        self.tree = tree
        return tree


# ---------------------------------------------------------------------------------------------
# Clients' identities and sync targeting


class Identity:
    def __init__(self, user, device, platform, version, claim_cohorts):
        self.user = user
        self.device = device
        self.platform = platform
        self.version = version
        self.claim_cohorts = list(claim_cohorts)

    @property
    def unit(self):
        return self.user if self.user is not None else self.device


STATIC_LIST = ["u%d" % i for i in range(0, 400, 7)]      # cohort "static-list": never changes
RULE_COHORT = ("ios-rule", {"platform": "ios"})            # cohort by rule: never changes
CLAIM_COHORT = "beta"                                       # from the JWT claim of some users
CHURN_COHORTS = ["churn-a", "churn-b"]                      # changed all the time: not checked


def targets(target, client):
    """True/False when the driver can tell whether `target` reaches `client`; None when it
    depends on state the driver does not pin down (churned cohorts, variants)."""
    if "variant" in target:
        return None
    if "user" in target:
        base = client.user is not None and client.user == target["user"]
    elif "users" in target:
        base = client.user is not None and client.user in target["users"]
    elif "cohort" in target:
        name = target["cohort"]
        if name in client.claim_cohorts:
            base = True
        elif name == "static-list":
            base = client.user in STATIC_LIST
        elif name == RULE_COHORT[0]:
            base = client.platform == RULE_COHORT[1]["platform"]
        elif name == CLAIM_COHORT:
            base = False
        else:
            return None
    elif target.get("all"):
        base = True
    else:
        return None
    if not base:
        return False
    if "platform" in target and client.platform != target["platform"]:
        return False
    if "app_version" in target and not in_range(client.version, target["app_version"]):
        return False
    return True


def random_identity(rng, index, anonymous_share=0.15):
    platform = rng.choice(["ios", "ios", "android", "android", "web"])
    version = rng.choice(["5.0.0", "5.1.0", "5.2.0", "5.2.5", "5.3.0", "5.4.1"])
    if rng.random() < anonymous_share:
        return Identity(None, "dev-anon-%d" % index, platform, version, [])
    user = "u%d" % rng.randrange(400)
    cohorts = [CLAIM_COHORT] if rng.random() < 0.3 else []
    return Identity(user, "dev-%d" % index, platform, version, cohorts)
