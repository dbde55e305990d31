"""Operator safety (issue 10): one hub per data dir, one hub per port — a second start fails fast
and says why, instead of two writers on one journal or two hubs answering in turn."""
import json
import os
import signal
import subprocess
import tempfile
import time
import urllib.error
import urllib.request

from websockets.sync.client import connect

from admin import call
from conftest import BIN, Hub


def start_second(*flags):
    """Runs a pushhub that is expected to refuse to start; returns (exit code, stderr)."""
    process = subprocess.run(
        [os.path.join(BIN, "pushhub"), *flags], stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=10, text=True)
    return process.returncode, process.stderr


def test_a_second_hub_on_the_same_data_dir_refuses_to_start_naming_the_first(hub_factory):
    first = hub_factory()
    data = os.path.join(first.data, "data")
    code, err = start_second("--listen", "127.0.0.1:0", "--admin", "127.0.0.1:0", "--data", data)
    assert code != 0 and "pid %d" % first.process.pid in err and "hub.lock" in err, err
    assert first.process.poll() is None
    first.process.send_signal(signal.SIGKILL)  # the kernel drops the lock with the process
    first.process.wait()
    again = Hub(data=first.data)
    try:
        assert again.process.poll() is None
    finally:
        again.process.kill()
        again.process.wait()


def test_a_second_hub_on_the_same_ports_refuses_to_start(hub_factory):
    first = hub_factory()
    other = tempfile.mkdtemp(prefix="pushhub-e2e-")
    for flags, named in (
        (("--listen", "127.0.0.1:%d" % first.port, "--admin", "127.0.0.1:0"), "--listen"),
        (("--listen", "127.0.0.1:0", "--admin", "127.0.0.1:%d" % first.admin_port), "--admin"),
    ):
        code, err = start_second(*flags, "--data", os.path.join(other, "data"))
        assert code != 0 and "already in use" in err and named in err, err
    assert first.process.poll() is None


def test_a_typo_in_an_admin_body_is_refused_naming_the_field_and_nothing_is_sent(hub_factory):
    """DESIGN §14: `{"target":{"all":true,"platfrom":"ios"}}` reached every client (the unknown
    field was ignored). Every body, rule, experiment and query refuses what it does not know,
    naming the field, the nearest known name and the known ones; nothing changes."""
    hub = hub_factory("--dev")
    ws = connect(hub.url + "/v1/connect")
    ws.send(json.dumps({"type": "hello", "protocol": 1, "device": "d1", "app": {"platform": "android", "version": "1.0.0"}}))
    assert json.loads(ws.recv(timeout=5))["type"] == "welcome"
    refused = [
        ("POST", "/v1/syncs", {"target": {"all": True, "platfrom": "ios"}}, 400, "target.platfrom", "platform"),
        ("POST", "/v1/syncs", {"target": {"all": True}, "mandatroy": True}, 400, "mandatroy", "mandatory"),
        ("PUT", "/v1/cohorts/bad", {"rule": {"platfrom": "ios"}}, 400, "rule.platfrom", "platform"),
        ("PUT", "/v1/cohorts/bad", {"user": ["u1"]}, 400, "\"user\"", "users"),
        ("POST", "/v1/cohorts/bad/users", {"add": ["u1"], "remvoe": ["u2"]}, 400, "remvoe", "remove"),
        ("PUT", "/v1/experiments/e1", {"stauts": "running", "variants": [{"key": "A"}]}, 422, "stauts", "status"),
        ("PUT", "/v1/experiments/e1", {"variants": [{"key": "A", "wieght": 2}]}, 422, "variants[0].wieght", "weight"),
        ("PUT", "/v1/experiments/e1", {"variants": [{"key": "A"}], "audience": {"platfrom": "ios"}}, 422,
         "audience.platfrom", "platform"),
        ("PUT", "/v1/experiments/e1", {"variants": [{"key": "A"}], "sticky": "yes"}, 422, "sticky", "true or false"),
        ("GET", "/v1/screens/home?app_verison=1.0.0", None, 400, "app_verison", "app_version"),
        ("GET", "/v1/clients?usr=u1", None, 400, "usr", "user"),
        ("GET", "/v1/stats?verbose=1", None, 400, "verbose", "takes none"),
    ]
    for method, path, body, status, field, suggestion in refused:
        got, answer = call(hub, method, path, body)
        message = answer["error"]["message"]
        assert got == status and field in message and suggestion in message, (method, path, got, answer)
    assert "bad" not in json.dumps(call(hub, "GET", "/v1/cohorts")[1])
    assert call(hub, "GET", "/v1/experiments/e1")[0] == 404
    ws.send(json.dumps({"type": "ping-check"}))  # anything: the first message back must be its error
    assert json.loads(ws.recv(timeout=5))["type"] == "error", "a sync reached the client"
    ws.close()


def test_a_sync_to_a_cohort_that_does_not_exist_is_404_with_a_suggestion(hub_factory):
    hub = hub_factory()
    assert call(hub, "PUT", "/v1/cohorts/beta-testers", {"users": ["u1"]})[0] == 200
    for body in ({"target": {"cohort": "beta-tester"}}, {"target": {"cohort": "beta-tester"}, "dry_run": True}):
        status, answer = call(hub, "POST", "/v1/syncs", body)
        assert status == 404 and answer["error"]["code"] == "unknown_cohort", answer
        assert "beta-testers" in answer["error"]["message"]
    assert call(hub, "POST", "/v1/syncs", {"target": {"cohort": "beta-testers"}})[0] == 200


def test_405_names_the_allowed_methods_in_allow(hub_factory):
    hub = hub_factory()
    request = urllib.request.Request("http://127.0.0.1:%d/v1/stats" % hub.admin_port, method="DELETE",
                                     headers={"Authorization": "Bearer " + hub.token})
    try:
        urllib.request.urlopen(request, timeout=5)
        raise AssertionError("DELETE /v1/stats was accepted")
    except urllib.error.HTTPError as error:
        assert error.code == 405 and error.headers["Allow"] == "GET"


def test_scoped_admin_tokens_and_the_audit_log(hub_factory):
    """DESIGN §14: named tokens with scopes, made with hubctl; a `read` token cannot publish
    (403 naming the scope); the audit log names the token of every change and every refusal,
    never the secret; tokens survive a restart and a revoked one is refused."""
    hub = hub_factory()
    env = {"HUBCTL_URL": "http://127.0.0.1:%d" % hub.admin_port, "HUBCTL_TOKEN": hub.token}
    secrets = {}
    for name, scopes in (("dashboards", ["read"]), ("ci-publisher", ["publish"])):
        args = ["--json", "token", "admin", "create", name]
        for scope in scopes:
            args += ["--scope", scope]
        created = subprocess.run([os.path.join(BIN, "hubctl"), *args], capture_output=True, text=True, timeout=10,
                                 env={**os.environ, **env})
        assert created.returncode == 0, created.stderr
        secrets[name] = json.loads(created.stdout)["token"]
    tree = {"type": "text", "text": "hi"}
    status, answer = call(hub, "PUT", "/v1/screens/home", tree, token=secrets["dashboards"])
    assert status == 403 and "publish" in answer["error"]["message"] and "dashboards" in answer["error"]["message"]
    assert call(hub, "GET", "/v1/stats", token=secrets["dashboards"])[0] == 200
    assert call(hub, "PUT", "/v1/screens/home", tree, token=secrets["ci-publisher"])[0] == 200
    status, answer = call(hub, "POST", "/v1/syncs", {"target": {"all": True}}, token=secrets["ci-publisher"])
    assert status == 403 and "sync" in answer["error"]["message"]
    assert call(hub, "POST", "/v1/tokens", {"name": "x", "scopes": ["admin"]}, token=secrets["ci-publisher"])[0] == 403
    status, answer = call(hub, "POST", "/v1/tokens", {"name": "typo", "scopes": ["pubish"]})
    assert status == 422 and "publish" in answer["error"]["message"]
    time.sleep(0.2)
    audit = [json.loads(line) for line in open(hub.log_path) if '"msg":"admin"' in line.replace(" ", "")]
    seen = {(entry["token"], entry["method"], entry["path"], entry["status"]) for entry in audit}
    assert ("dashboards", "PUT", "/v1/screens/home", 403) in seen, audit
    assert ("ci-publisher", "PUT", "/v1/screens/home", 200) in seen, audit
    assert ("ci-publisher", "POST", "/v1/syncs", 403) in seen, audit
    assert ("root", "POST", "/v1/tokens", 200) in seen, audit
    log = open(hub.log_path).read()
    assert all(secret not in log for secret in secrets.values()), "a secret reached the log"
    hub.stop()
    again = Hub(data=hub.data)
    try:
        assert call(again, "GET", "/v1/stats", token=secrets["dashboards"])[0] == 200
        revoked = subprocess.run([os.path.join(BIN, "hubctl"), "token", "admin", "revoke", "dashboards"],
                                 capture_output=True, text=True, timeout=10,
                                 env={**os.environ, "HUBCTL_URL": "http://127.0.0.1:%d" % again.admin_port,
                                      "HUBCTL_TOKEN": again.token})
        assert revoked.returncode == 0, revoked.stderr
        assert call(again, "GET", "/v1/stats", token=secrets["dashboards"])[0] == 401
    finally:
        again.process.kill()
        again.process.wait()


def test_a_config_file_starts_a_hub_and_check_config_validates(hub_factory, tmp_path):
    config = tmp_path / "hub.json"
    config.write_text(json.dumps({"keep_versions": 2, "message_rate": "5/s", "dev": True}))
    checked = subprocess.run([os.path.join(BIN, "pushhub"), "--check-config", str(config)], capture_output=True, text=True, timeout=10)
    assert checked.returncode == 0 and "valid" in checked.stdout, checked
    hub = hub_factory("--config", str(config))
    for n in range(4):
        assert call(hub, "PUT", "/v1/screens/s", {"n": n})[0] == 200
    assert len(call(hub, "GET", "/v1/screens/s/history")[1]["versions"]) == 2  # keep_versions from the file
    config.write_text(json.dumps({"keep_verions": 2}))
    refused = subprocess.run([os.path.join(BIN, "pushhub"), "--check-config", str(config)], capture_output=True, text=True, timeout=10)
    assert refused.returncode == 2 and "keep_verions" in refused.stderr and "keep_versions" in refused.stderr


def test_sd_notify_ready_watchdog_reloading_stopping(tmp_path):
    """Issue 11 item 5: the hub speaks systemd's notify protocol over $NOTIFY_SOCKET: READY=1
    once listening, WATCHDOG=1 every half $WATCHDOG_USEC, RELOADING=1 then READY=1 on SIGHUP,
    STOPPING=1 on SIGTERM (the unit runs with Type=notify and WatchdogSec)."""
    import socket as sockets
    listener = sockets.socket(sockets.AF_UNIX, sockets.SOCK_DGRAM)
    path = str(tmp_path / "notify.sock")
    listener.bind(path)
    listener.settimeout(5)
    process = subprocess.Popen(
        [os.path.join(BIN, "pushhub"), "--listen", "127.0.0.1:0", "--admin", "127.0.0.1:0", "--data", str(tmp_path / "data")],
        stderr=subprocess.DEVNULL, env={**os.environ, "NOTIFY_SOCKET": path, "WATCHDOG_USEC": "200000"})
    try:
        def next_message():
            return listener.recv(4096).decode()

        ready = next_message()
        assert ready.startswith("READY=1") and "MAINPID=%d" % process.pid in ready, ready
        started = time.time()
        pings = 0
        while time.time() - started < 1:
            pings += next_message() == "WATCHDOG=1"
        assert pings >= 5, "%d watchdog pings in 1 s at a 200 ms watchdog" % pings
        process.send_signal(signal.SIGHUP)
        seen = [next_message() for _ in range(8)]
        reloading = [m for m in seen if m.startswith("RELOADING=1")]
        assert reloading and "MONOTONIC_USEC=" in reloading[0], seen
        assert "READY=1" in seen[seen.index(reloading[0]):], seen
        process.send_signal(signal.SIGTERM)
        deadline = time.time() + 5
        messages = []
        while "STOPPING=1" not in messages and time.time() < deadline:
            messages.append(next_message())
        assert "STOPPING=1" in messages
        assert process.wait(timeout=15) == 0
    finally:
        if process.poll() is None:
            process.kill()
        listener.close()


def test_sighup_reloads_the_limits_from_the_config_file_without_dropping_anyone(hub_factory, tmp_path):
    """Issue 11: SIGHUP reads the config file again: a limit changes at once on every loop, with
    clients staying connected; a setting that needs a restart is logged as such and left alone;
    a file that no longer parses is refused and the hub runs on."""
    config = tmp_path / "hub.json"
    config.write_text(json.dumps({"dev": True, "max_subscriptions": 1, "keep_versions": 4}))
    hub = hub_factory("--config", str(config))
    for n in range(3):
        call(hub, "PUT", "/v1/screens/s%d" % n, {"n": n})
    clients = []
    for n in range(20):
        ws = connect(hub.url + "/v1/connect")
        ws.send(json.dumps({"type": "hello", "protocol": 1, "device": "d%d" % n, "app": {"platform": "ios", "version": "1.0.0"}}))
        assert json.loads(ws.recv(timeout=5))["type"] == "welcome"
        clients.append(ws)

    def subscribe(ws, screen):
        ws.send(json.dumps({"type": "subscribe", "screen": screen}))
        return json.loads(ws.recv(timeout=5))

    assert subscribe(clients[0], "s0")["type"] == "snapshot"
    assert subscribe(clients[0], "s1")["code"] == "too_many_subscriptions"
    config.write_text(json.dumps({"dev": True, "max_subscriptions": 3, "keep_versions": 9}))
    hub.process.send_signal(signal.SIGHUP)
    deadline = time.time() + 5
    while "configuration reloaded" not in open(hub.log_path).read() and time.time() < deadline:
        time.sleep(0.05)
    reloaded = [json.loads(l) for l in open(hub.log_path) if "configuration reloaded" in l][-1]
    assert "max_subscriptions" in reloaded["changed"] and reloaded["need_restart"] == "keep_versions", reloaded
    # Each loop takes the new config at its next tick (after the reads of that tick): retry briefly.
    deadline = time.time() + 2
    while subscribe(clients[0], "s1")["type"] != "snapshot":
        assert time.time() < deadline, "the new limit never applied"
        time.sleep(0.05)
    assert all(subscribe(ws, "s2")["type"] == "snapshot" for ws in clients), "a client was dropped or refused"
    config.write_text("{ not json")
    hub.process.send_signal(signal.SIGHUP)
    deadline = time.time() + 5
    while "configuration is refused" not in open(hub.log_path).read() and time.time() < deadline:
        time.sleep(0.05)
    assert "configuration is refused" in open(hub.log_path).read()
    assert subscribe(clients[1], "s0")["type"] == "snapshot" and hub.process.poll() is None
    for ws in clients:
        ws.close()


def test_metrics_per_loop(hub_factory):
    """Each loop's connections and longest tick, labelled by loop and role: how clients spread
    over the loops and which one is late (the hub-wide lag gauge cannot say)."""
    from websockets.sync.client import connect
    hub = hub_factory("--loops", "2", "--dev")
    sockets = [connect(hub.url + "/v1/connect") for _ in range(6)]
    try:
        status, text = call(hub, "GET", "/metrics")
        assert status == 200
        rows = {}
        for line in text.splitlines():
            if line.startswith("pushhub_loop_connections{") or line.startswith("pushhub_loop_tick_max_seconds{"):
                name, value = line.split(" ")
                rows[name] = float(value)
        client = [rows['pushhub_loop_connections{loop="%d",role="client"}' % i] for i in (0, 1)]
        assert sum(client) == 6, rows  # every client connection is on one of the two client loops
        assert rows['pushhub_loop_connections{loop="2",role="control"}'] >= 1  # this admin request
        for i, role in ((0, "client"), (1, "client"), (2, "control")):
            assert 'pushhub_loop_tick_max_seconds{loop="%d",role="%s"}' % (i, role) in rows
    finally:
        for ws in sockets:
            ws.close()
