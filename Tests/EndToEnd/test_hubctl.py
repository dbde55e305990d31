"""hubctl against a real hub: output and the exit codes of DESIGN §8."""
import json
import os
import socket
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
