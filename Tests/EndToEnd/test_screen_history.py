"""A screen's history says who published each version and why (issue 26): `?message=` on a
publish, the admin token's name as the author (`root` for the root token), rollbacks marked with
the version they republished, and a rollback to the tree the screen already has publishing
nothing. What history shows survives a restart and reaches every hub of a scaled-out group."""
import json
import os
import subprocess
import urllib.parse

from websockets.sync.client import connect

from admin import call
from conftest import BIN, Hub
from test_scale_out import cluster, latest_version, redis, tree, wait_until  # noqa: F401 (fixtures)


def create_token(hub, name, scopes):
    status, created = call(hub, "POST", "/v1/tokens", {"name": name, "scopes": scopes})
    assert status == 200, created
    return created["token"]


def put(hub, name, tree, message=None, token=None):
    query = "?message=" + urllib.parse.quote(message, safe="") if message is not None else ""
    return call(hub, "PUT", "/v1/screens/%s%s" % (name, query), tree, token=token)


def history(hub, name):
    status, answer = call(hub, "GET", "/v1/screens/%s/history" % name)
    assert status == 200, answer
    return [(v["version"], v["author"], v["message"], v["rollback_of"]) for v in answer["versions"]]


def published_history(hub):
    """Publishes v1 (by token ci, with a message), v2 (root, with one), v3 (root, none) and rolls
    back to v1 as ci: the history every test below expects."""
    ci = create_token(hub, "ci", ["publish", "read"])
    assert put(hub, "home", tree(1), message="first cut: spring banner", token=ci)[0] == 200
    assert put(hub, "home", tree(2), message="summer banner — ✓")[0] == 200
    assert put(hub, "home", tree(3))[0] == 200
    status, answer = call(hub, "POST", "/v1/screens/home/rollback", {"to": 1, "message": "v3 broke checkout"},
                          token=ci)
    assert status == 200 and answer["version"] == 4 and "unchanged" not in answer, answer
    return ci


EXPECTED = [
    (4, "ci", "v3 broke checkout", 1),
    (3, "root", None, None),
    (2, "root", "summer banner — ✓", None),
    (1, "ci", "first cut: spring banner", None),
]


def test_history_names_author_message_and_rollback(hub):
    published_history(hub)
    assert history(hub, "home") == EXPECTED
    assert call(hub, "GET", "/v1/screens/home")[1]["tree"] == tree(1)


def test_a_rollback_to_the_tree_the_screen_has_publishes_nothing(hub_factory):
    hub = hub_factory("--dev")
    published_history(hub)  # v4 has v1's tree
    ws = connect(hub.url + "/v1/connect")
    ws.send(json.dumps({"type": "hello", "protocol": 1, "device": "d", "app": {"platform": "ios", "version": "6.0.0"}}))
    assert json.loads(ws.recv(timeout=5))["type"] == "welcome"
    ws.send(json.dumps({"type": "subscribe", "screen": "home"}))
    assert json.loads(ws.recv(timeout=5))["version"] == 4
    for body in ({"to": 1, "message": "again"}, {"to": 4}):
        status, answer = call(hub, "POST", "/v1/screens/home/rollback", body)
        assert status == 200, answer
        assert answer == {"name": "home", "version": 4, "unchanged": True, "sent": 0}
    assert history(hub, "home") == EXPECTED
    # The subscriber was sent nothing: the next thing it gets is the patch from v4 to the next publish.
    assert put(hub, "home", tree(5))[0] == 200
    update = json.loads(ws.recv(timeout=5))
    assert (update["type"], update["from"], update["version"]) == ("patch", 4, 5), update
    ws.close()


def test_a_message_over_500_characters_is_refused_saying_so(hub):
    status, answer = put(hub, "home", tree(1), message="é" * 501)
    assert status == 400 and answer["error"]["code"] == "bad_message"
    assert "501 characters" in answer["error"]["message"] and "at most 500" in answer["error"]["message"]
    assert put(hub, "home", tree(1), message="é" * 500)[0] == 200
    status, answer = call(hub, "POST", "/v1/screens/home/rollback", {"to": 1, "message": "x" * 501})
    assert status == 400 and answer["error"]["code"] == "bad_message"
    assert [v[0] for v in history(hub, "home")] == [1]


def test_author_and_message_survive_a_restart(hub_factory):
    hub = hub_factory()
    published_history(hub)
    assert hub.stop() == 0
    again = Hub(data=hub.data)
    try:
        assert history(again, "home") == EXPECTED
    finally:
        again.stop()
    # Killed before any snapshot: the journal alone replays them.
    killed = Hub(data=hub.data)
    killed.process.kill()
    killed.process.wait()
    again = Hub(data=hub.data)
    try:
        assert history(again, "home") == EXPECTED
    finally:
        again.stop()


def test_every_hub_of_a_group_shows_the_author_and_message(cluster):  # noqa: F811 (the fixture)
    a, b = cluster(2)
    published_history(a)
    wait_until(lambda: latest_version(b, "home") == 4, what="b to apply v4")
    assert history(b, "home") == EXPECTED
    # A hub that joins later loads them with the shared state.
    (c,) = cluster(1)
    assert history(c, "home") == EXPECTED


def hubctl(*args, env):
    return subprocess.run([os.path.join(BIN, "hubctl"), *args], capture_output=True, text=True, timeout=20,
                          env={**os.environ, **env}, cwd="/")


def test_hubctl_publishes_with_a_message_and_shows_history(hub, tmp_path):
    root = {"HUBCTL_URL": "http://127.0.0.1:%d" % hub.admin_port, "HUBCTL_TOKEN": hub.token}
    ci = {**root, "HUBCTL_TOKEN": create_token(hub, "ci", ["publish", "read"])}
    one, two = tmp_path / "one.json", tmp_path / "two.json"
    one.write_text(json.dumps({"n": 1}))
    two.write_text(json.dumps({"n": 2}))
    published = hubctl("screen", "publish", "home", str(one), "--message", "first cut & more?", env=ci)
    assert published.returncode == 0, published.stderr
    assert hubctl("screen", "publish", "home", str(two), env=root).returncode == 0
    rolled = hubctl("screen", "rollback", "home", "--message", "two was wrong", env=ci)
    assert rolled.returncode == 0 and "3" in rolled.stdout, rolled.stderr
    again = hubctl("screen", "rollback", "home", "--to", "3", env=root)
    assert again.returncode == 0, again.stderr
    assert "unchanged" in again.stdout and "3" in again.stdout
    lines = hubctl("screen", "history", "home", env=root).stdout.splitlines()
    assert [line.split()[0] for line in lines] == ["v3", "v2", "v1"]
    assert lines[0].split()[3:] == ["ci", "(rollback", "of", "v1)", "two", "was", "wrong"]
    assert lines[1].split()[3:] == ["root"]
    assert lines[2].split()[3:] == ["ci", "first", "cut", "&", "more?"]
    as_json = json.loads(hubctl("--json", "screen", "history", "home", env=root).stdout)
    assert as_json["versions"][0]["rollback_of"] == 1 and as_json["versions"][2]["message"] == "first cut & more?"
    too_long = hubctl("screen", "publish", "home", str(two), "--message", "x" * 501, env=root)
    assert too_long.returncode == 1 and "at most 500" in too_long.stderr
    assert hubctl("screen", "diff", "home", str(two), "--message", "x", env=root).returncode == 2
    help_text = hubctl("screen", "--help", env=root).stdout
    assert "--message TEXT" in help_text
