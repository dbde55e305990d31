"""hubctl against a real hub: output and the exit codes of DESIGN §8."""
import json
import os
import socket
import time
import subprocess

from conftest import BIN
from websockets.sync.client import connect


def hubctl(*args, env=None):
    return subprocess.run([os.path.join(BIN, "hubctl"), *args], capture_output=True, text=True, timeout=20,
                          env={**os.environ, **(env or {})}, cwd="/")


def test_status_reports_the_hub_and_its_counters(hub):
    url = "http://127.0.0.1:%d" % hub.admin_port
    with connect(hub.url + "/echo"):
        result = hubctl("--url", url, "--token", hub.token, "status")
        assert result.returncode == 0, result.stderr
        assert "hub:" in result.stdout and "ok" in result.stdout
        assert "websocket connections: 1" in " ".join(result.stdout.split())
        as_json = json.loads(hubctl("--url", url, "--token", hub.token, "--json", "status").stdout)
        assert as_json["status"] == "ok" and as_json["stats"]["websocket_connections"] == 1


def test_environment_supplies_url_and_token(hub):
    result = hubctl("status", env={"HUBCTL_URL": "http://127.0.0.1:%d" % hub.admin_port, "HUBCTL_TOKEN": hub.token})
    assert result.returncode == 0, result.stderr


def test_exit_codes(hub):
    url = "http://127.0.0.1:%d" % hub.admin_port
    refused = hubctl("--url", url, "--token", "wrong", "status")
    assert refused.returncode == 1
    assert "Bearer" in refused.stderr
    free = socket.socket()
    free.bind(("127.0.0.1", 0))
    port = free.getsockname()[1]
    free.close()
    unreachable = hubctl("--url", "http://127.0.0.1:%d" % port, "status")
    assert unreachable.returncode == 3
    assert "cannot reach" in unreachable.stderr
    usage = hubctl("frobnicate")
    assert usage.returncode == 2 and "Unknown command" in usage.stderr
    assert hubctl("--url").returncode == 2


def test_help_on_every_command():
    top = hubctl("--help")
    assert top.returncode == 0 and "SUBCOMMANDS:" in top.stdout and "status" in top.stdout
    status = hubctl("status", "--help")
    assert status.returncode == 0 and status.stdout.startswith("OVERVIEW:") and "USAGE:" in status.stdout


def test_screen_commands_and_watch_show_live_patches(hub_factory, tmp_path):
    hub = hub_factory("--dev")
    env = {"HUBCTL_URL": "http://127.0.0.1:%d" % hub.admin_port, "HUBCTL_TOKEN": hub.token}
    rows = [{"id": "r%d" % i, "type": "row", "text": "row %d" % i} for i in range(15)]
    v1, v2, v3 = tmp_path / "v1.json", tmp_path / "v2.json", tmp_path / "v3.json"
    v1.write_text(json.dumps({"type": "screen", "title": "one", "children": rows}))
    v2.write_text(json.dumps({"type": "screen", "title": "two", "children": rows}))
    v3.write_text(json.dumps({"type": "screen", "title": "two", "children": rows[-1:] + rows[:-1]}))
    published = hubctl("screen", "publish", "live/home", str(v1), env=env)
    assert published.returncode == 0, published.stderr
    assert "version:" in published.stdout and "1" in published.stdout
    watch = subprocess.Popen([os.path.join(BIN, "hubctl"), "watch", "live/home", "--count", "3"], stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE, text=True, env={**os.environ, **env})
    deadline = time.time() + 10
    while json.loads(hubctl("--json", "screen", "list", env=env).stdout)["screens"][0]["subscribers"] == 0:
        assert time.time() < deadline, "watch did not subscribe"
        time.sleep(0.05)
    diff = hubctl("screen", "diff", "live/home", str(v2), env=env)
    assert diff.returncode == 0 and "would send to:" in diff.stdout and "1 of 1 subscribers" in diff.stdout
    assert '"path":"/title"' in diff.stdout
    assert hubctl("screen", "publish", "live/home", str(v2), env=env).returncode == 0
    assert hubctl("screen", "publish", "live/home", str(v3), env=env).returncode == 0
    out, err = watch.communicate(timeout=10)
    assert watch.returncode == 0, err
    assert "snapshot live/home v1" in out
    assert "patch live/home v1 -> v2: 1 ops, hash ok" in out
    assert "patch live/home v2 -> v3: 1 ops, hash ok" in out and '"op":"move"' in out
    history = hubctl("screen", "history", "live/home", env=env)
    assert [line.split()[0] for line in history.stdout.splitlines()] == ["v3", "v2", "v1"]
    rolled = hubctl("screen", "rollback", "live/home", "--to", "1", env=env)
    assert rolled.returncode == 0 and "4" in rolled.stdout
    got = hubctl("--json", "screen", "get", "live/home", env=env)
    assert json.loads(got.stdout)["tree"]["title"] == "one"
    assert hubctl("screen", "get", "nothing/here", env=env).returncode == 1
    assert hubctl("screen", "delete", "live/home", env=env).returncode == 0
    assert hubctl("screen", "frobnicate", env=env).returncode == 2
