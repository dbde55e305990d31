"""Components (DESIGN §16, issue 28): the hub knows what each app build can render and never sends
it more. Real hubs, real clients: what each client should see is computed here by an independent
renderer of the documented rule, every tree a client holds is rebuilt from its snapshot and patches
with `jsonpatch` and its hash checked with `rfc8785` + SHA-256, and the counts the admin API gives
are checked against the clients this test connected."""
import collections
import copy
import hashlib
import json
import time

import jsonpatch
import pytest
import rfc8785
from websockets.sync.client import connect

from admin import call, publish
from conftest import drop_all
from test_fetch import fetch
from test_scale_out import cluster, redis  # noqa: F401 (fixtures)

SCREEN = "shop/home"
CAROUSEL_V1 = {"type": "object", "required": ["items"],
               "properties": {"items": {"type": "array", "items": {"type": "object", "required": ["title"],
                                                                    "properties": {"title": {"type": "string"}}}}},
               "additionalProperties": False}
CAROUSEL_V2 = copy.deepcopy(CAROUSEL_V1)
CAROUSEL_V2["properties"]["autoplay"] = {"type": "boolean"}
CAROUSEL = {"versions": {"1": {"schema": CAROUSEL_V1}, "2": {"schema": CAROUSEL_V2}}}
TEXT = {"versions": {"1": {"schema": {"type": "object", "required": ["text"],
                                      "properties": {"text": {"type": "string", "maxLength": 200}}}}}}


def tree(title, greeting):
    """A Carousel v2 that falls back to a Carousel v1, which falls back to a Text; then a Text,
    and a footer that stays the same (so that a small change is sent as a patch)."""
    return {"type": "Screen", "children": [
        {"type": "Carousel", "v": 2, "autoplay": True, "items": [{"title": title}, {"title": "b"}],
         "fallback": {"type": "Carousel", "items": [{"title": title}],
                      "fallback": {"type": "Text", "text": "See the offers: " + title}}},
        {"type": "Text", "text": greeting},
        {"type": "Footer", "links": [{"type": "Text", "text": "Link number %d of the footer" % i} for i in range(20)]}]}


def tree_hash(value):
    return hashlib.sha256(rfc8785.dumps(value)).hexdigest()


REMOVED = object()


def render(node, renders, registered):
    """The documented rule, written independently of the hub: a node of a registered component the
    client cannot render (absent from `renders`, or there below the node's "v") becomes its
    "fallback" (rendered in turn) or disappears; one it can render loses "fallback"; nodes of other
    types pass as they are. `renders` None: the client renders everything."""
    if isinstance(node, list):
        return [kept for kept in (render(item, renders, registered) for item in node) if kept is not REMOVED]
    if not isinstance(node, dict):
        return node
    judged = False
    kind = node.get("type")
    if isinstance(kind, str) and kind in registered:
        version = node.get("v", 1)
        if renders is not None and renders.get(kind, 0) < version:
            return render(node["fallback"], renders, registered) if "fallback" in node else REMOVED
        judged = True
    out = {}
    for key, value in node.items():
        if judged and key == "fallback":
            continue
        kept = render(value, renders, registered)
        if kept is not REMOVED:
            out[key] = kept
    return out


OPEN = []


@pytest.fixture(autouse=True)
def close_clients(hub_factory):
    """Closes every client a test opened before its hubs stop (`drop_all`)."""
    yield
    drop_all(OPEN)


class Client:
    """One anonymous app build subscribed to SCREEN, holding the tree rebuilt from what it was sent."""

    def __init__(self, hub, device, platform=None, version=None, components=None, subscribe=True):
        self.ws = connect(hub.url + "/v1/connect", close_timeout=0.5)
        OPEN.append(self.ws)
        hello = {"type": "hello", "protocol": 1, "device": device}
        if platform:
            hello["app"] = {"platform": platform, "version": version}
        if components is not None:
            hello["components"] = components
        self.ws.send(json.dumps(hello))
        welcome = json.loads(self.ws.recv(timeout=5))
        assert welcome["type"] == "welcome", welcome
        self.tree, self.version = None, None
        if subscribe:
            self.ws.send(json.dumps({"type": "subscribe", "screen": SCREEN}))
            self.take(json.loads(self.ws.recv(timeout=5)))

    def take(self, message):
        assert message.get("screen") == SCREEN, message
        if message["type"] == "snapshot":
            self.tree = message["tree"]
        else:
            assert message["type"] == "patch" and message["from"] == self.version, (message, self.version)
            self.tree = jsonpatch.apply_patch(self.tree, message["ops"])
        self.version = message["version"]
        assert tree_hash(self.tree) == message["hash"], message

    def updates(self):
        """What the hub sent since the last call, read up to the answer of a probe."""
        self.ws.send(json.dumps({"type": "unsubscribe", "screen": "no/such/screen"}))
        received = []
        while True:
            message = json.loads(self.ws.recv(timeout=5))
            if message.get("code") == "not_subscribed":
                return received
            self.take(message)
            received.append(message)


def register(hub, name, body, status=200, query=""):
    code, answer = call(hub, "PUT", "/v1/components/%s%s" % (name, query), body)
    assert code == status, answer
    return answer


def put_profile(hub, platform, version, components):
    code, answer = call(hub, "PUT", "/v1/apps/%s/%s/components" % (platform, version), {"components": components})
    assert code == 200, answer
    return answer


def four_builds(hub):
    """The issue's four clients: declares Carousel 2; declares Carousel 1; declares nothing, an iOS
    5.1.0 build whose 5.0.0 profile lacks Carousel; an Android build with nothing registered.
    Returns (client, what it renders or None for everything) pairs."""
    return [
        (Client(hub, "a", "ios", "6.0.0", {"Carousel": 2, "Text": 1}), {"Carousel": 2, "Text": 1}),
        (Client(hub, "b", "android", "4.0.0", {"Carousel": 1, "Text": 1}), {"Carousel": 1, "Text": 1}),
        (Client(hub, "c", "ios", "5.1.0"), {"Text": 1}),
        (Client(hub, "d", "android", "3.0.0"), None),
    ]


def test_four_builds_each_get_their_rendition_and_later_publishes_as_patches(hub_factory):
    hub = hub_factory("--allow-anonymous")
    register(hub, "Carousel", CAROUSEL)
    register(hub, "Text", TEXT)
    put_profile(hub, "ios", "5.0.0", {"Text": 1})
    first = tree("a", "Hello")
    publish(hub, SCREEN, first)
    builds = four_builds(hub)
    registered = {"Carousel", "Text"}
    renditions = [render(first, renders, registered) for _, renders in builds]
    # Four builds, four different trees: the Carousel v2, the v1, the Text, and v2 again without
    # its fallback for the build with nothing registered.
    assert renditions[0] == renditions[3] and len({json.dumps(r, sort_keys=True) for r in renditions}) == 3
    for (client, _), expected in zip(builds, renditions):
        assert client.version == 1 and client.tree == expected, (client.tree, expected)
    assert "fallback" not in json.dumps(builds[0][0].tree)

    # GET /v1/components counts, per version, the connected clients that can render it.
    code, listing = call(hub, "GET", "/v1/components")
    assert code == 200 and listing["clients"] == 4, listing
    counts = {(c["name"], v["version"]): v["clients"] for c in listing["components"] for v in c["versions"]}
    assert counts == {("Carousel", 1): 3, ("Carousel", 2): 2, ("Text", 1): 4}, counts
    code, one = call(hub, "GET", "/v1/components/Carousel")
    assert code == 200 and one["versions"]["2"]["clients"] == 2 and one["versions"]["1"]["schema"] == CAROUSEL_V1

    # A dry run of the next version says who would get which fallback, by platform and version.
    second = tree("c", "Hello again")
    code, dry = call(hub, "PUT", "/v1/screens/%s?dry_run=true" % SCREEN, second)
    assert code == 200 and dry["components"]["clients"] == 4, dry
    places = {(f["pointer"], f["outcome"]): f for f in dry["components"]["fallbacks"]}
    assert set(places) == {("/children/0", "fallback"), ("/children/0/fallback", "fallback")}, places
    outer = places[("/children/0", "fallback")]
    assert outer["type"] == "Carousel" and outer["v"] == 2 and outer["clients"] == 2, outer
    assert sorted((a["platform"], a["app_version"], a["clients"]) for a in outer["by_app"]) == [
        ("android", "4.0.0", 1), ("ios", "5.1.0", 1)]
    inner = places[("/children/0/fallback", "fallback")]
    assert inner["clients"] == 1 and inner["by_app"] == [{"platform": "ios", "app_version": "5.1.0", "clients": 1}]
    assert all(client.updates() == [] for client, _ in builds), "a dry run sent something"

    # The publish reaches each build as a patch to exactly its rendition.
    publish(hub, SCREEN, second)
    for client, renders in builds:
        got = client.updates()
        assert [m["type"] for m in got] == ["patch"], got
        assert client.version == 2 and client.tree == render(second, renders, registered)


def test_a_tree_that_breaks_a_schema_is_refused_with_every_error_and_its_pointer(hub_factory):
    hub = hub_factory("--allow-anonymous")
    register(hub, "Carousel", CAROUSEL)
    register(hub, "Text", TEXT)
    bad = {"type": "Screen", "children": [
        {"type": "Text", "text": "ok"},
        {"type": "Carousel", "v": 2, "autoplay": "yes"},
        {"type": "Carousel", "v": 3, "items": []},
        {"type": "Text", "text": 7, "colour": "red"}]}
    code, answer = call(hub, "PUT", "/v1/screens/" + SCREEN, bad)
    assert code == 422 and answer["error"]["code"] == "invalid_tree", answer
    errors = answer["error"]["errors"]
    pointers = [e["pointer"] for e in errors]
    # Every error, each with where it is: autoplay's type and the missing items (node 1), the
    # unknown version (node 2), text's type (node 3; Text allows other members).
    assert "/children/1/autoplay" in pointers and "/children/1" in pointers, errors
    assert "/children/2" in pointers and "/children/3/text" in pointers, errors
    assert any("items" in e["message"] for e in errors if e["pointer"] == "/children/1"), errors
    assert any("3" in e["message"] for e in errors if e["pointer"] == "/children/2"), errors
    assert call(hub, "GET", "/v1/screens/" + SCREEN)[0] == 404, "a refused tree was published"

    # A release's candidate is checked the same way.
    publish(hub, SCREEN, tree("a", "Hi"))
    code, answer = call(hub, "POST", "/v1/screens/%s/releases" % SCREEN, {"tree": bad, "percent": 5})
    assert code == 422 and answer["error"]["code"] == "invalid_tree", answer

    # Unregistered types pass, unless the hub is strict.
    publish(hub, SCREEN, {"type": "Screen", "children": [{"type": "Map", "pin": 1}]})
    strict = hub_factory("--allow-anonymous", "--strict-components")
    register(strict, "Text", TEXT)
    code, answer = call(strict, "PUT", "/v1/screens/" + SCREEN, {"type": "Text", "text": "x",
                                                                 "children": [{"type": "Map"}]})
    assert code == 422 and [(e["pointer"], "Map" in e["message"]) for e in answer["error"]["errors"]] == [
        ("/children/0", True)], answer
    publish(strict, SCREEN, {"type": "Text", "text": "x"})


def test_registering_a_schema_live_screens_break_is_refused_naming_them_unless_forced(hub_factory):
    hub = hub_factory("--allow-anonymous")
    publish(hub, SCREEN, {"type": "Screen", "children": [{"type": "Text", "text": 5}]})
    code, answer = call(hub, "PUT", "/v1/components/Text", TEXT)
    assert code == 409 and answer["error"]["code"] == "screens_violate", answer
    assert answer["error"]["screens"] == [{"screen": SCREEN, "version": 1, "errors": [
        {"pointer": "/children/0/text", "message": answer["error"]["screens"][0]["errors"][0]["message"]}]}]
    assert call(hub, "GET", "/v1/components/Text")[0] == 404
    code, answer = call(hub, "PUT", "/v1/components/Text?force=yes", TEXT)
    assert code == 400 and answer["error"]["code"] == "bad_query", answer
    forced = register(hub, "Text", TEXT, query="?force=true")
    assert [v["screen"] for v in forced["violations"]] == [SCREEN], forced
    assert call(hub, "GET", "/v1/components/Text")[0] == 200
    # Bad registrations say what to fix.
    code, answer = call(hub, "PUT", "/v1/components/Bad", {"versions": {"1": {"schema": {"type": "strnig"}}}})
    assert code == 400 and answer["error"]["code"] == "bad_schema", answer
    code, answer = call(hub, "PUT", "/v1/components/Bad", {"versions": {"1": {"schema": {"oneOf": []}}}})
    assert code == 400 and "oneOf" in answer["error"]["message"], answer
    assert call(hub, "PUT", "/v1/components/no%20spaces", CAROUSEL)[0] == 422
    assert call(hub, "PUT", "/v1/apps/ios/five/components", {"components": {}})[0] == 422


def test_a_registry_or_profile_change_re_renders_connected_clients_within_their_version(hub_factory):
    hub = hub_factory("--allow-anonymous")
    first = tree("a", "Hello")
    publish(hub, SCREEN, first)
    old = Client(hub, "old", "ios", "5.1.0")
    new = Client(hub, "new", "android", "6.0.0")
    assert old.tree == first and new.tree == first, "nothing registered: everyone gets the tree as it is"

    # Registering Carousel judges its nodes: every client loses the fallback it renders past.
    answer = register(hub, "Carousel", CAROUSEL)
    assert answer["sent"] == 2, answer
    for client in (old, new):
        got = client.updates()
        assert [(m["type"], m["version"]) for m in got] == [("patch", 1)], got
        assert client.tree == render(first, None, {"Carousel"})

    # A profile for ios 5.0.0 without Carousel reaches the ios build only, as a patch to the Text.
    put_profile(hub, "ios", "5.0.0", {"Text": 1})
    assert new.updates() == []
    got = old.updates()
    assert len(got) == 1 and old.tree == render(first, {"Text": 1}, {"Carousel"}), old.tree
    code, applies = call(hub, "GET", "/v1/apps/ios/5.1.0/components")
    assert code == 200 and applies["profile_version"] == "5.0.0", applies
    assert call(hub, "GET", "/v1/apps/ios/4.9.0/components")[0] == 404

    # The admin read shows the screen as a given build sees it.
    code, seen = call(hub, "GET", "/v1/screens/%s?platform=ios&app_version=5.2.0" % SCREEN)
    assert code == 200 and seen["tree"] == old.tree and seen["hash"] == tree_hash(old.tree), seen
    code, seen = call(hub, "GET", "/v1/screens/%s?components=Carousel:1" % SCREEN)
    assert code == 200 and seen["tree"] == render(first, {"Carousel": 1}, {"Carousel"}), seen
    # So does an app's HTTP fetch, by its profile or by the components it names.
    code, _, body = fetch(hub, "/v1/screens/%s?device=w&platform=ios&app_version=5.1.0" % SCREEN)
    assert code == 200 and json.loads(body)["tree"] == old.tree, body
    code, _, body = fetch(hub, "/v1/screens/%s?device=w&platform=ios&app_version=5.1.0&components=Carousel:1" % SCREEN)
    assert code == 200 and json.loads(body)["tree"] == render(first, {"Carousel": 1}, {"Carousel"}), body
    code, _, body = fetch(hub, "/v1/screens/%s?device=w&components=Carousel:x" % SCREEN)
    assert code == 400 and json.loads(body)["error"]["code"] == "bad_components", body

    # Deleting the profile, then the component, gives the old build the whole tree back.
    assert call(hub, "DELETE", "/v1/apps/ios/5.0.0/components")[0] == 200
    assert old.updates() and old.tree == new.tree
    assert call(hub, "DELETE", "/v1/components/Carousel")[0] == 200
    assert old.updates() and old.tree == first and new.updates() and new.tree == first
    # A new connection of that build gets the whole tree too.
    again = Client(hub, "again", "ios", "5.1.0")
    assert again.tree == first


def test_the_registry_and_profiles_survive_a_restart(hub_factory):
    hub = hub_factory("--allow-anonymous")
    register(hub, "Carousel", CAROUSEL)
    put_profile(hub, "ios", "5.0", {"Text": 1})
    publish(hub, SCREEN, tree("a", "Hello"))
    assert hub.stop() == 0
    again = hub_factory("--allow-anonymous", data=hub.data)
    code, one = call(again, "GET", "/v1/components/Carousel")
    assert code == 200 and one["versions"]["2"]["schema"] == CAROUSEL_V2, one
    code, profiles = call(again, "GET", "/v1/apps")
    assert code == 200 and [(p["platform"], p["app_version"], p["components"]) for p in profiles["profiles"]] == [
        ("ios", "5.0.0", {"Text": 1})], profiles
    client = Client(again, "c", "ios", "5.0.1")
    assert client.tree == render(tree("a", "Hello"), {"Text": 1}, {"Carousel"})


def test_a_registration_on_one_hub_re_renders_and_counts_the_clients_of_another(cluster):
    first, second = cluster(2)
    publish(first, SCREEN, tree("a", "Hello"))
    time.sleep(0.2)
    # Builds on both hubs: (hub, device, platform, version, declared, what it renders once the
    # registry and profile below are in).
    builds = [
        (first, "f1", "ios", "5.1.0", None, {}), (first, "f2", "android", "2.0.0", {"Carousel": 2}, {"Carousel": 2}),
        (first, "f3", "web", "1.0.0", None, None),
        (second, "s1", "ios", "5.1.0", None, {}), (second, "s2", "android", "1.0.0", {"Carousel": 1}, {"Carousel": 1}),
        (second, "s3", "ios", "4.0.0", None, None), (second, "s4", "ios", "6.0.0", None, {}),
    ]
    clients = [(Client(hub, device, platform, version, declared), renders)
               for hub, device, platform, version, declared, renders in builds]
    register(first, "Carousel", CAROUSEL)
    put_profile(first, "ios", "5.0.0", {})
    deadline = time.time() + 5
    for client, renders in clients:
        expected = render(tree("a", "Hello"), renders, {"Carousel"})
        while client.tree != expected:
            assert time.time() < deadline, (client.tree, expected)
            client.updates()

    # Every hub counts every hub's clients: the sums computed here from the clients themselves.
    def can_render(renders, version):
        return renders is None or renders.get("Carousel", 0) >= version
    expected_counts = [(v, sum(can_render(renders, v) for _, renders in clients)) for v in (1, 2)]
    assert expected_counts == [(1, 4), (2, 3)]
    second_tree = tree("b", "Hello")
    falls_back = [b for b in builds if not can_render(b[5], 2)]
    for hub in (first, second):
        code, listing = call(hub, "GET", "/v1/components")
        assert code == 200 and listing["clients"] == len(clients), listing
        assert [(v["version"], v["clients"]) for v in listing["components"][0]["versions"]] == expected_counts, listing
        code, dry = call(hub, "PUT", "/v1/screens/%s?dry_run=true" % SCREEN, second_tree)
        assert code == 200 and dry["components"]["clients"] == len(clients), dry
        outer = next(f for f in dry["components"]["fallbacks"] if f["pointer"] == "/children/0")
        assert outer["clients"] == len(falls_back), outer
        by_app = sorted((a["platform"], a["app_version"], a["clients"]) for a in outer["by_app"])
        per_app = collections.Counter((b[2], b[3]) for b in falls_back)
        assert by_app == sorted((platform, version, n) for (platform, version), n in per_app.items()), by_app


def test_bad_component_declarations_in_hello_are_errors(hub):
    ws = connect(hub.url + "/v1/connect", close_timeout=0.5)
    try:
        for components, needle in (([], "object"), ({"Carousel": 0}, "Carousel"), ({"Carousel": "2"}, "Carousel"),
                                   ({"bad name": 1}, "bad name")):
            ws.send(json.dumps({"type": "hello", "protocol": 1, "device": "x", "components": components}))
            error = json.loads(ws.recv(timeout=5))
            assert error["type"] == "error" and error["code"] == "bad_message" and needle in error["message"], error
    finally:
        ws.close()


def test_an_experiment_variant_that_would_send_a_bad_node_is_refused_like_a_publish(hub_factory):
    hub = hub_factory("--allow-anonymous")
    register(hub, "Carousel", CAROUSEL)
    base = {"type": "Screen", "title": "Shop"}
    publish(hub, SCREEN, base)
    bad_variant = {"key": "promo", "status": "running",
                   "variants": [{"key": "A"}, {"key": "B"}],
                   "screens": {SCREEN: {"B": {"+promo": {"type": "Carousel", "bogus": 1}}}}}
    code, answer = call(hub, "PUT", "/v1/experiments/promo", bad_variant)
    assert code == 422 and answer["error"]["code"] == "invalid_tree", answer
    errors = answer["error"]["errors"]
    assert len(errors) == 2 and {(e["experiment"], e["variant"], e["pointer"]) for e in errors} == {
        ("promo", "B", "/promo")}, errors  # "bogus" not allowed, "items" missing

    # A valid variant is taken: B turns the base's banner into a Carousel. A base whose banner
    # would make a bad Carousel in B is then refused, naming the variant.
    publish(hub, SCREEN, {"type": "Screen", "hero": {"type": "Banner", "items": []}})
    good_variant = dict(bad_variant, screens={SCREEN: {"B": {"hero": {"type": "Carousel"}}}})
    code, answer = call(hub, "PUT", "/v1/experiments/promo", good_variant)
    assert code == 200, answer
    code, answer = call(hub, "PUT", "/v1/screens/" + SCREEN, {"type": "Screen", "hero": {"type": "Banner", "image": "x"}})
    assert code == 422 and {(e.get("variant"), e["pointer"]) for e in answer["error"]["errors"]} == {("B", "/hero")}, answer
    # Registering a schema the variant breaks names the variant.
    code, answer = call(hub, "PUT", "/v1/components/Carousel", {"versions": {"1": {"schema": {
        "type": "object", "required": ["items", "title"]}}}})
    assert code == 409 and answer["error"]["screens"][0]["variant"] == "B", answer
