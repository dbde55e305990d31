"""hubctl's components and app profiles (issue 28, DESIGN §16) against a real hub with real
clients: `component put | get | list | delete`, `app components set | get | list | delete`, and
`screen get --platform --app-version --components`. What hubctl prints is checked against the
admin API's own answer and against the clients the test holds: the counts `component list` shows
are the clients that can render each version, and the tree `screen get` shows for a build is the
tree a real client of that build is sent. The hub's refusals (409 screens_violate, 422
invalid_tree) are printed one `pointer: message` per line."""
import json
import os
import subprocess

import pytest

from admin import call, publish
from component_clients import CAROUSEL, HOME, TEXT, App, expected_counts
from conftest import BIN


def hubctl(hub, *args, input=None):
    return subprocess.run([os.path.join(BIN, "hubctl"), *args], capture_output=True, text=True, timeout=20, cwd="/",
                          input=input, env={**os.environ, "HUBCTL_URL": "http://127.0.0.1:%d" % hub.admin_port,
                                            "HUBCTL_TOKEN": hub.token})


def ok(hub, *args, input=None):
    result = hubctl(hub, *args, input=input)
    assert result.returncode == 0, (args, result.stdout, result.stderr)
    return result.stdout


def fields(text):
    """The `key: value` rows of hubctl's human output (until the first line that is not one)."""
    rows = {}
    for line in text.splitlines():
        if line.startswith(" ") or ": " not in line:
            break
        key, value = line.split(":", 1)
        rows[key.strip()] = value.strip()
    return rows


def error_lines(refusal):
    """The hub's listed errors, as hubctl prints them: `pointer: message`, the root as `(root)`."""
    return ["%s: %s" % (e["pointer"] or "(root)", e["message"]) for e in refusal]


@pytest.fixture
def hub(hub_factory):
    return hub_factory("--dev")


@pytest.fixture
def files(tmp_path):
    carousel, text = tmp_path / "carousel.json", tmp_path / "text.json"
    carousel.write_text(json.dumps(CAROUSEL))
    text.write_text(json.dumps(TEXT))
    return carousel, text


def test_components_registered_and_counted_by_the_clients_that_can_render_them(hub, files, tmp_path):
    carousel, text = files
    put = ok(hub, "component", "put", "Carousel", str(carousel))
    assert (fields(put)["component"], fields(put)["versions"]) == ("Carousel", "1, 2"), put
    assert json.loads(ok(hub, "--json", "component", "put", "Text", str(text)))["name"] == "Text"
    assert call(hub, "GET", "/v1/components/Carousel")[1]["versions"]["2"]["schema"] == CAROUSEL["versions"]["2"]["schema"]
    assert ok(hub, "app", "components", "set", "android", "4.0.0", "Text:1").strip()
    assert ok(hub, "app", "components", "set", "ios", "5.0.0", "Carousel:1,Text:1").strip()

    apps = [
        App(hub, "u-new-1", ("ios", "6.0.0"), components={"Carousel": 2, "Text": 1}),
        App(hub, "u-new-2", ("web", "1.0.0"), components={"Carousel": 2, "Text": 1}),
        App(hub, "u-old", ("ios", "5.2.0"), components={"Carousel": 1, "Text": 1}),
        App(hub, "u-none", ("ios", "6.0.0"), components={}),
        App(hub, "u-profile-ios", ("ios", "5.1.0"), profile={"Carousel": 1, "Text": 1}),
        App(hub, "u-profile-android", ("android", "4.2.0"), profile={"Text": 1}),
        App(hub, "u-everything", ("android", "3.9.0")),  # below every android profile: renders everything
        App(hub, "u-no-app"),
    ]
    try:
        expected = expected_counts(apps, {"Carousel": CAROUSEL, "Text": TEXT})
        assert expected == {("Carousel", 1): 6, ("Carousel", 2): 4, ("Text", 1): 7}, expected
        listed = call(hub, "GET", "/v1/components")[1]
        assert listed["clients"] == len(apps), listed
        assert {(c["name"], v["version"]): v["clients"] for c in listed["components"] for v in c["versions"]} == expected

        # component list: a header, then one row per version: its clients and the total connected.
        lines = ok(hub, "component", "list").splitlines()
        assert lines[0].split() == ["component", "version", "can", "render", "it", "connected"], lines
        rows = [line.split() for line in lines[1:]]
        assert rows == [[name, str(version), str(count), str(len(apps))]
                        for (name, version), count in sorted(expected.items())], rows
        assert json.loads(ok(hub, "--json", "component", "list")) == call(hub, "GET", "/v1/components")[1]

        # component get: the versions, each with its clients and its schema as registered.
        shown = ok(hub, "component", "get", "Carousel")
        assert fields(shown)["versions"] == "1, 2"
        for version in (1, 2):
            heading = "version %d: %d connected clients can render it:" % (version, expected[("Carousel", version)])
            assert heading in shown.splitlines(), shown
            block = shown.split(heading + "\n", 1)[1].split("\nversion ", 1)[0]
            assert json.loads(block) == CAROUSEL["versions"][str(version)]["schema"], block
        assert json.loads(ok(hub, "--json", "component", "get", "Text")) == call(hub, "GET", "/v1/components/Text")[1]
    finally:
        for app in apps:
            app.close()

    # delete: gone from the list; a second delete and a get are refused (404).
    assert fields(ok(hub, "component", "delete", "Text")) == {"deleted": "Text", "sent": "0 connected clients"}
    assert [c["name"] for c in call(hub, "GET", "/v1/components")[1]["components"]] == ["Carousel"]
    for args in (("component", "delete", "Text"), ("component", "get", "Text")):
        refused = hubctl(hub, *args)
        assert refused.returncode == 1 and "(404)" in refused.stderr, refused.stderr


def test_a_put_that_breaks_screens_lists_them_and_force_registers_it(hub, files, tmp_path):
    carousel, text = files
    # Published before Carousel had a schema: without the items it requires, and a version it lacks.
    publish(hub, "home", {"type": "screen", "children": [{"id": "hero", "type": "Carousel", "slides": ["a"]}]})
    publish(hub, "promo", {"type": "screen", "children": [{"id": "p1", "type": "Carousel", "items": [1]},
                                                          {"id": "p2", "type": "Carousel"},
                                                          {"id": "p3", "type": "Carousel", "v": 3, "items": []}]})
    status, refusal = call(hub, "PUT", "/v1/components/Carousel", CAROUSEL)
    assert status == 409 and refusal["error"]["code"] == "screens_violate", refusal
    screens = refusal["error"]["screens"]
    assert {s["screen"] for s in screens} == {"home", "promo"}, screens

    refused = hubctl(hub, "component", "put", "Carousel", str(carousel))
    assert refused.returncode == 1 and refused.stdout == "", refused
    lines = refused.stderr.splitlines()
    assert lines[0] == "Error: the hub refused (409): " + refusal["error"]["message"], lines
    for screen in screens:  # each screen, then each of its errors indented under it, one per line
        heading = "  %s v%d:" % (screen["screen"], screen["version"])
        start = lines.index(heading)
        assert lines[start + 1:start + 1 + len(screen["errors"])] == ["    " + l for l in error_lines(screen["errors"])]
    assert "--force" in lines[-1], lines
    assert call(hub, "GET", "/v1/components/Carousel")[0] == 404

    forced = ok(hub, "component", "put", "Carousel", str(carousel), "--force")
    answer = call(hub, "GET", "/v1/components/Carousel")[1]
    assert answer["versions"]["1"]["schema"] == CAROUSEL["versions"]["1"]["schema"]
    assert "registered although these screens break it (--force):" in forced.splitlines(), forced
    for screen in screens:
        assert "  %s v%d:" % (screen["screen"], screen["version"]) in forced.splitlines()
        for line in error_lines(screen["errors"]):
            assert "    " + line in forced.splitlines(), (line, forced)

    # A publish that breaks it is 422 invalid_tree: every error on its own line, nothing published.
    bad = {"type": "screen", "children": [{"id": "a", "type": "Carousel"},
                                          {"id": "b", "type": "Carousel", "v": 3, "items": []},
                                          {"id": "c", "type": "Carousel", "items": [1, "ok", 2]},
                                          {"id": "d", "type": "Carousel", "fallback": {"type": "Carousel"}}]}
    (tmp_path / "bad.json").write_text(json.dumps(bad))
    status, invalid = call(hub, "PUT", "/v1/screens/home", bad)
    assert status == 422 and invalid["error"]["code"] == "invalid_tree" and len(invalid["error"]["errors"]) >= 3, invalid
    for args, input in ((("screen", "publish", "home", str(tmp_path / "bad.json")), None),
                        (("screen", "publish", "home", "-"), json.dumps(bad))):
        refused = hubctl(hub, *args, input=input)
        assert refused.returncode == 1, refused
        lines = refused.stderr.splitlines()
        assert lines[0] == "Error: the hub refused (422): " + invalid["error"]["message"], lines
        assert lines[1:] == ["  " + l for l in error_lines(invalid["error"]["errors"])], lines
    assert call(hub, "GET", "/v1/screens/home")[1]["version"] == 1
    # The pointers lead to the offending nodes of the published body, a fallback's too.
    pointers = [e["pointer"] for e in invalid["error"]["errors"]]
    assert {"/children/0", "/children/1", "/children/3/fallback"} <= set(pointers), pointers


def test_app_profiles_set_from_a_list_a_file_or_stdin_and_a_build_sees_its_profile(hub, files, tmp_path):
    carousel, text = files
    ok(hub, "component", "put", "Carousel", str(carousel))
    ok(hub, "component", "put", "Text", str(text))
    publish(hub, "home", HOME)

    shown = fields(ok(hub, "app", "components", "set", "ios", "5.0", "Carousel:1,Text=1"))
    assert shown["app version"] == "5.0.0" and shown["components"] == "Carousel:1,Text:1", shown  # normalized by the hub
    profile = tmp_path / "android.json"
    profile.write_text(json.dumps({"components": {"Text": 1}}))
    assert fields(ok(hub, "app", "components", "set", "android", "4.0.0", str(profile)))["components"] == "Text:1"
    assert fields(ok(hub, "app", "components", "set", "ios", "6.0.0", "-",
                     input=json.dumps({"components": {"Carousel": 2, "Text": 1}})))["components"] == "Carousel:2,Text:1"

    # get: the profile that applies (the newest at or below), saying which one it is.
    applies = fields(ok(hub, "app", "components", "get", "ios", "5.9.1"))
    assert applies == {"platform": "ios", "app version": "5.9.1", "profile": "5.0.0 (the newest at or below 5.9.1)",
                       "components": "Carousel:1,Text:1"}, applies
    assert fields(ok(hub, "app", "components", "get", "ios", "6.0.0"))["profile"] == "6.0.0"
    below = hubctl(hub, "app", "components", "get", "ios", "4.9.0")
    assert below.returncode == 1 and "(404)" in below.stderr, below.stderr

    # list: every profile, by platform then version, with the same components as the API.
    profiles = call(hub, "GET", "/v1/apps")[1]["profiles"]
    assert [(p["platform"], p["app_version"]) for p in profiles] == [("android", "4.0.0"), ("ios", "5.0.0"), ("ios", "6.0.0")]
    lines = ok(hub, "app", "components", "list").splitlines()
    assert lines[0].split()[:4] == ["platform", "from", "version", "components"], lines
    assert [line.split()[:3] for line in lines[1:]] == [
        [p["platform"], p["app_version"], ",".join("%s:%d" % kv for kv in sorted(p["components"].items()))] for p in profiles]
    assert json.loads(ok(hub, "--json", "app", "components", "list")) == call(hub, "GET", "/v1/apps")[1]

    # A build sees its profile: hubctl shows the tree a real client of that build is sent.
    held = [App(hub, "u-ios-5", ("ios", "5.9.1"), screen="home"), App(hub, "u-android", ("android", "4.1.0"), screen="home"),
            App(hub, "u-ios-6", ("ios", "6.0.0"), screen="home")]
    try:
        for app, (platform, version) in zip(held, [("ios", "5.9.1"), ("android", "4.1.0"), ("ios", "6.0.0")]):
            seen = json.loads(ok(hub, "--json", "screen", "get", "home", "--platform", platform, "--app-version", version))
            assert (seen["hash"], seen["tree"]) == (app.snapshot["hash"], app.snapshot["tree"]), (platform, version)
        five, android, six = (app.snapshot["tree"] for app in held)
        assert five["children"][0] == HOME["children"][0]["fallback"]  # Carousel v2 → its Text fallback
        assert android["children"] == [HOME["children"][0]["fallback"], HOME["children"][2]]  # no Carousel at all
        assert six["children"][0]["type"] == "Carousel" and "fallback" not in six["children"][0]

        # delete: only the profile at exactly that version. Then the 5.9.1 build has none (it
        # renders everything): its tree changed, and it alone is sent the patch.
        refused = hubctl(hub, "app", "components", "delete", "ios", "5.9.1")
        assert refused.returncode == 1 and "(404)" in refused.stderr, refused.stderr
        deleted = fields(ok(hub, "app", "components", "delete", "ios", "5.0.0"))
        assert deleted == {"deleted": "ios 5.0.0", "sent": "1 connected client"}, deleted
        gone = hubctl(hub, "app", "components", "get", "ios", "5.9.1")
        assert gone.returncode == 1 and "(404)" in gone.stderr
    finally:
        for app in held:
            app.close()


def test_screen_get_and_diff_as_builds_that_declare_their_components(hub, files, tmp_path):
    carousel, text = files
    ok(hub, "component", "put", "Carousel", str(carousel))
    ok(hub, "component", "put", "Text", str(text))
    publish(hub, "home", HOME)
    ok(hub, "app", "components", "set", "ios", "1.0.0", "Text:1")  # a declaration wins over the profile
    builds = [({"Carousel": 2, "Text": 1}, "Carousel:2,Text:1"), ({"Carousel": 1, "Text": 1}, "Carousel=1, Text=1"),
              ({"Text": 1}, "Text:1"), ({"Carousel": 5}, "Carousel:5")]
    held = [App(hub, "u-%d" % n, ("ios", "2.0.0"), components=declared, screen="home") for n, (declared, _) in enumerate(builds)]
    try:
        trees = set()
        for app, (_, typed) in zip(held, builds):
            shown = ok(hub, "screen", "get", "home", "--platform", "ios", "--app-version", "2.0.0", "--components", typed)
            assert fields(shown)["hash"] == app.snapshot["hash"], (typed, shown)
            assert json.loads(shown.split("\n", 3)[3]) == app.snapshot["tree"], shown
            trees.add(app.snapshot["hash"])
        assert len(trees) == 4, "each build sees another tree"
        assert held[0].snapshot["tree"]["children"][0]["autoplay"] is True
        assert held[2].snapshot["tree"]["children"] == [HOME["children"][0]["fallback"], HOME["children"][2]]
        assert held[3].snapshot["tree"]["children"][:2] == [
            {k: v for k, v in HOME["children"][0].items() if k != "fallback"}, HOME["children"][1]]

        # screen diff (a publish's dry run) says who cannot render which node: the hub's report, a row each.
        status, dry = call(hub, "PUT", "/v1/screens/home?dry_run=true", HOME)
        assert status == 200, dry
        report = dry["components"]
        assert report["clients"] == 4
        assert {(f["pointer"], f["type"], f["v"], f["outcome"], f["clients"]) for f in report["fallbacks"]} == {
            ("/children/0", "Carousel", 2, "fallback", 2),  # Carousel:1,Text:1 and Text:1 get the Text
            ("/children/1", "Carousel", 1, "removed", 1),   # Text:1
            ("/children/2", "Text", 1, "removed", 1)}, report  # Carousel:5
        assert all(f["by_app"] == [{"platform": "ios", "app_version": "2.0.0", "clients": f["clients"]}]
                   for f in report["fallbacks"]), report
        (tmp_path / "home.json").write_text(json.dumps(HOME))
        lines = ok(hub, "screen", "diff", "home", str(tmp_path / "home.json")).splitlines()
        start = lines.index("components: who cannot render a node, of 4 clients connected:")
        rows = [line.split() for line in lines[start + 1:start + 1 + len(report["fallbacks"])]]
        assert rows == [[f["pointer"], f["type"], "v%d" % f["v"], f["outcome"], str(f["clients"]),
                         "client" if f["clients"] == 1 else "clients", "ios", "2.0.0:", str(f["clients"])]
                        for f in report["fallbacks"]], rows
    finally:
        for app in held:
            app.close()


def test_usage_errors_send_nothing(hub, files, tmp_path):
    carousel, _ = files
    (tmp_path / "broken.json").write_text("{not json")
    for args, message in (
        (("component", "put", "Carousel"), "takes NAME FILE|- [--force]"),
        (("component", "put", "Carousel", str(tmp_path / "broken.json")), "is not JSON"),
        (("component", "put", "Carousel", str(tmp_path / "absent.json")), "no such file"),
        (("component", "get", "Carousel", "--force"), "takes no --force"),
        (("component", "list", "extra"), "'component list' takes nothing"),
        (("component", "lsit"), "Did you mean 'component list'?"),
        (("component",), "Missing a component subcommand"),
        (("component", "put", "Carousel", str(carousel), "--forse"), "Did you mean '--force'?"),
        (("app", "components", "set", "ios", "5.0.0"), "takes PLATFORM VERSION FILE|-|LIST"),
        (("app", "components", "set", "ios", "5.0.0", "Carousel:0"), "from 1 to 1000, not '0'"),
        (("app", "components", "set", "ios", "5.0.0", "Carousel:1001"), "from 1 to 1000"),
        (("app", "components", "set", "ios", "5.0.0", "Carousel:2,Carousel:1"), "Carousel is given twice"),
        (("app", "components", "set", "ios", "5.0.0", "Car ousel:1"), "is not a component name"),
        (("app", "components", "set", "ios", "5.0.0", "Carousel"), "no such file"),
        (("app", "components", "set", "ios", "5.0.0", ""), "LIST is empty"),
        (("app", "components", "set", "ios", "5.0.0", str(tmp_path / "broken.json")), "is not JSON"),
        (("app", "components", "get", "ios"), "takes PLATFORM VERSION"),
        (("app", "componets", "list"), "Did you mean 'app components'?"),
        (("app", "components", "lst"), "Did you mean 'app components list'?"),
        (("app",), "Missing an app subcommand"),
        (("screen", "get", "home", "--components", "Carousel"), "is not NAME:VERSION"),
        (("screen", "get", "home", "--components", "Carousel:x"), "Carousel's version must be a whole number"),
    ):
        result = hubctl(hub, *args)
        assert result.returncode == 2 and message in result.stderr, (args, result.stderr)
    assert call(hub, "GET", "/v1/components")[1]["components"] == []
    assert call(hub, "GET", "/v1/apps")[1]["profiles"] == []
    empty = ok(hub, "component", "list")
    assert empty.strip() == "no components registered"
    assert ok(hub, "app", "components", "list").strip() == "no app profiles"


def test_help_and_completion_name_the_component_commands():
    run = lambda *args: subprocess.run([os.path.join(BIN, "hubctl"), *args], capture_output=True, text=True, timeout=10)
    top = run("--help").stdout
    assert any(line.split()[:1] == ["component"] for line in top.splitlines()), top
    assert any(line.split()[:1] == ["app"] for line in top.splitlines()), top
    helped = run("component", "--help")
    assert helped.returncode == 0 and helped.stdout.startswith("OVERVIEW:")
    assert all(name in helped.stdout.split("SUBCOMMANDS:")[1].split() for name in ("put", "get", "list", "delete"))
    assert "--force" in helped.stdout
    app = run("app", "--help").stdout
    for name in ("components set", "components get", "components list", "components delete"):
        assert "  " + name + " " in app, name
    screen = run("screen", "--help").stdout
    assert "--components LIST" in screen and "[--components LIST]" in screen
    script = run("completion", "bash").stdout
    completed = subprocess.run(
        ["bash", "-c", script + '\nCOMP_WORDS=(hubctl component de); COMP_CWORD=2; _hubctl; echo "${COMPREPLY[@]}"'],
        capture_output=True, text=True, timeout=10)
    assert completed.stdout.split() == ["delete"], completed
    completed = subprocess.run(
        ["bash", "-c", script + '\nCOMP_WORDS=(hubctl screen get home --comp); COMP_CWORD=4; _hubctl; echo "${COMPREPLY[@]}"'],
        capture_output=True, text=True, timeout=10)
    assert completed.stdout.split() == ["--components"], completed
