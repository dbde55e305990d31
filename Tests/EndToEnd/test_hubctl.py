"""hubctl against a real hub: output and the exit codes of DESIGN §8."""
import json
import os
import socket
import time
import subprocess

from admin import call
from conftest import BIN, ROOT
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


def test_ops_hotfix_to_one_user_with_receipts(hub_factory, tmp_path):
    """The issue's acceptance: `hubctl sync --user u17 --reason hotfix --mandatory`, then
    `hubctl sync status` shows that u17's devices got and acknowledged it."""
    hub = hub_factory()
    env = {"HUBCTL_URL": "http://127.0.0.1:%d" % hub.admin_port, "HUBCTL_TOKEN": hub.token,
           "HUBCTL_JWT_SECRET_FILE": os.path.join(hub.data, "data", "jwt.secret")}
    minted = hubctl("token", "--user", "u17", "--cohort", "beta", env=env)
    assert minted.returncode == 0, minted.stderr
    token = minted.stdout.strip()
    devices = []
    for device in ("phone", "tablet"):
        ws = connect(hub.url + "/v1/connect")
        ws.send(json.dumps({"type": "hello", "protocol": 1, "token": token, "device": device, "app": {"platform": "ios", "version": "5.2.0"}}))
        assert json.loads(ws.recv(timeout=5))["user"] == "u17"
        devices.append(ws)
    clients = hubctl("clients", "--user", "u17", env=env)
    assert clients.returncode == 0 and "2 connected" in clients.stdout and "phone" in clients.stdout
    assert call(hub, "PUT", "/v1/cohorts/beta", {"users": []})[0] == 200  # a claim-only cohort, declared
    dry = hubctl("sync", "--cohort", "beta", "--dry-run", env=env)
    assert dry.returncode == 0 and "would reach:" in dry.stdout and "2 connections" in dry.stdout
    sent = hubctl("sync", "--user", "u17", "--reason", "hotfix", "--mandatory", env=env)
    assert sent.returncode == 0, sent.stderr
    fields = dict(line.split(":", 1) for line in sent.stdout.splitlines())
    sync_id = fields["sync"].strip()
    assert fields["targeted online"].strip() == "2"
    for ws in devices:
        message = json.loads(ws.recv(timeout=5))
        assert message["type"] == "sync" and message["id"] == sync_id and message["mandatory"] is True and message["reason"] == "hotfix"
        ws.send(json.dumps({"type": "ack", "sync": sync_id}))
    deadline = time.time() + 5
    while True:
        status = hubctl("sync", "status", sync_id, env=env)
        assert status.returncode == 0, status.stderr
        receipts = dict((k.strip(), v.strip()) for k, v in (line.split(":", 1) for line in status.stdout.splitlines()))
        if receipts["acked"] == "2" or time.time() > deadline:
            break
        time.sleep(0.05)
    assert receipts["targeted online"] == "2" and receipts["delivered"] == "2" and receipts["acked"] == "2"
    assert receipts["mandatory"] == "yes"
    users = tmp_path / "users.txt"
    users.write_text("u1\nu2\n\nu17\n")
    assert hubctl("cohort", "set", "vip", "--users-file", str(users), env=env).returncode == 0
    shown = hubctl("cohort", "show", "vip", env=env)
    assert "users:" in shown.stdout and "3" in shown.stdout
    assert "vip" in hubctl("cohort", "list", env=env).stdout
    assert hubctl("sync", "--user", "u1", "--all", env=env).returncode == 2
    assert hubctl("sync", "status", "s-424242", env=env).returncode == 1
    assert hubctl("cohort", "delete", "vip", env=env).returncode == 0


def test_a_typo_in_a_hubctl_command_is_exit_2_with_a_suggestion_and_sends_nothing(hub_factory):
    """Issue 10: `hubctl sync --all --platfrom ios` reached every client. Each command has its own
    options; anything else is exit 2 naming the nearest one, and the hub never hears of it."""
    hub = hub_factory()
    env = {"HUBCTL_URL": "http://127.0.0.1:%d" % hub.admin_port, "HUBCTL_TOKEN": hub.token}
    for args, suggestion in (
        (("sync", "--all", "--platfrom", "ios"), "--platform"),
        (("sync", "--all", "--platfrom=ios", "--dry-run"), "--platform"),
        (("sync", "--user", "u1", "--mandatroy"), "--mandatory"),
        (("screen", "get", "home", "--app-verison", "1.0.0"), "--app-version"),
        (("cohort", "set", "beta", "--rules", "{}"), "--rule"),
        (("sync", "--cohort", "a", "--cohort", "b"), "given twice"),
    ):
        result = hubctl(*args, env=env)
        assert result.returncode == 2 and suggestion in result.stderr, (args, result.stderr)
    assert call(hub, "GET", "/v1/stats")[1]["sync_seq"] == 0, "a sync went out"
    rule = hubctl("cohort", "set", "bad", "--rule", '{"platfrom":"ios"}', env=env)
    assert rule.returncode == 1 and "rule.platfrom" in rule.stderr and "platform" in rule.stderr, rule.stderr
    assert "bad" not in hubctl("--json", "cohort", "list", env=env).stdout


def test_repeated_users_make_a_users_target_and_all_asks_only_on_a_terminal(hub_factory):
    hub = hub_factory()
    env = {"HUBCTL_URL": "http://127.0.0.1:%d" % hub.admin_port, "HUBCTL_TOKEN": hub.token}
    sent = hubctl("--json", "sync", "--user", "u1", "--user", "u2", env=env)
    assert sent.returncode == 0, sent.stderr
    status, answer = call(hub, "GET", "/v1/syncs/" + json.loads(sent.stdout)["id"])
    assert sorted(answer["target"]["users"]) == ["u1", "u2"]
    assert hubctl("sync", "--all", env=env).returncode == 0  # stdin is not a terminal: no question
    import pty
    pid, fd = pty.fork()
    if pid == 0:  # the child runs hubctl on a terminal and answers "n"
        os.execve(os.path.join(BIN, "hubctl"), ["hubctl", "sync", "--all"], {**os.environ, **env})
    output = b""
    deadline = time.time() + 10
    while b"[y/N]" not in output and time.time() < deadline:
        output += os.read(fd, 1024)
    assert b"every client" in output, output
    os.write(fd, b"n\n")
    _, status = os.waitpid(pid, 0)
    assert os.WEXITSTATUS(status) == 1
    assert call(hub, "GET", "/v1/stats")[1]["sync_seq"] == 2, "only the two syncs above went out"


def test_hubctl_reaches_the_hub_by_host_name_and_over_ipv6(hub, tmp_path):
    """Issue 10: `--url http://myhost:8081` failed with an inet_pton error, `[::1]` too."""
    by_name = hubctl("--url", "http://localhost:%d" % hub.admin_port, "--token", hub.token, "status")
    assert by_name.returncode == 0, by_name.stderr
    import http.server
    import threading

    class Answer(http.server.BaseHTTPRequestHandler):
        seen = []

        def do_GET(self):
            Answer.seen.append(self.path)
            body = b'{"status":"ok"}' if self.path == "/healthz" else json.dumps(call(hub, "GET", "/v1/stats")[1]).encode()
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args):
            pass

    class V6Server(http.server.HTTPServer):
        address_family = socket.AF_INET6

    server = V6Server(("::1", 0), Answer)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        over_v6 = hubctl("--url", "http://[::1]:%d" % server.server_address[1], "--token", hub.token, "status")
        assert over_v6.returncode == 0 and "/healthz" in Answer.seen, over_v6.stderr
    finally:
        server.shutdown()


def test_hubctl_finds_a_deployed_hubs_token_reads_stdin_and_explains_itself(hub_factory, tmp_path):
    """Issue 10: --data DIR / HUBCTL_TOKEN_FILE find the token, `-` is standard input, --version
    names the commit, `help`, `completion`, and a missing file is named as missing."""
    hub = hub_factory()
    url = "http://127.0.0.1:%d" % hub.admin_port
    data = os.path.join(hub.data, "data")
    assert hubctl("--url", url, "--data", data, "screen", "list").returncode == 0
    by_file = hubctl("--url", url, "screen", "list", env={"HUBCTL_TOKEN_FILE": os.path.join(data, "admin.token")})
    assert by_file.returncode == 0, by_file.stderr
    missing = hubctl("--url", url, "--data", str(tmp_path / "nowhere"), "screen", "list")
    assert missing.returncode == 2 and "admin.token" in missing.stderr and "no such file" in missing.stderr
    published = subprocess.run([os.path.join(BIN, "hubctl"), "--url", url, "--data", data, "screen", "publish", "home", "-"],
                               input='{"type":"text","text":"from stdin"}', capture_output=True, text=True, timeout=20)
    assert published.returncode == 0, published.stderr
    assert call(hub, "GET", "/v1/screens/home")[1]["tree"]["text"] == "from stdin"
    absent = hubctl("--url", url, "--data", data, "experiment", "apply", str(tmp_path / "nope.json"))
    assert absent.returncode == 2 and "no such file" in absent.stderr and "key" not in absent.stderr, absent.stderr
    repo = os.path.dirname(os.path.abspath(__file__))
    in_git = subprocess.run(["git", "rev-parse", "HEAD"], capture_output=True, cwd=repo).returncode == 0
    for binary in ("hubctl", "pushhub"):
        version = subprocess.run([os.path.join(BIN, binary), "--version"], capture_output=True, text=True, timeout=10)
        assert version.returncode == 0 and "commit " in version.stdout, version
        built_from = version.stdout.split("commit ")[1][:12]
        if in_git:  # the commit it names is one of this repository's (the one built; HEAD in CI)
            assert subprocess.run(["git", "rev-parse", "--verify", "--quiet", built_from + "^{commit}"],
                                  capture_output=True, cwd=repo).returncode == 0, version.stdout
            head = subprocess.run(["git", "rev-parse", "HEAD"], capture_output=True, text=True, cwd=repo).stdout
            if head.startswith(built_from):  # built from HEAD: the version is scripts/version.sh's (issue 32)
                expected = subprocess.run(["sh", os.path.join(ROOT, "scripts", "version.sh")],
                                          capture_output=True, text=True, check=True).stdout.strip()
                assert version.stdout.split()[:2] == [binary, expected], (version.stdout, expected)
    helped = hubctl("help", "sync")
    assert helped.returncode == 0 and "--platform" in helped.stdout
    script = hubctl("completion", "bash").stdout
    completed = subprocess.run(
        ["bash", "-c", script + '\nCOMP_WORDS=(hubctl sync --plat); COMP_CWORD=2; _hubctl; echo "${COMPREPLY[@]}"'],
        capture_output=True, text=True, timeout=10)
    assert completed.stdout.split() == ["--platform"], completed


def test_experiments_start_stop_and_delete_from_hubctl(hub_factory, tmp_path):
    hub = hub_factory()
    env = {"HUBCTL_URL": "http://127.0.0.1:%d" % hub.admin_port, "HUBCTL_TOKEN": hub.token}
    definition = tmp_path / "e.json"
    definition.write_text(json.dumps({"key": "e1", "variants": [{"key": "A"}, {"key": "B"}]}))
    assert hubctl("experiment", "apply", str(definition), env=env).returncode == 0
    assert call(hub, "GET", "/v1/experiments/e1")[1].get("status", "draft") == "draft"
    assert hubctl("experiment", "start", "e1", env=env).returncode == 0
    assert call(hub, "GET", "/v1/experiments/e1")[1]["status"] == "running"
    assert hubctl("experiment", "stop", "e1", env=env).returncode == 0
    assert call(hub, "GET", "/v1/experiments/e1")[1]["status"] == "stopped"
    assert hubctl("experiment", "delete", "e1", env=env).returncode == 0
    assert call(hub, "GET", "/v1/experiments/e1")[0] == 404
    assert hubctl("experiment", "start", "e1", env=env).returncode == 1


def test_screen_get_as_a_user_is_exactly_what_that_client_receives_and_diff_between_versions(hub_factory):
    """Issue 10: `screen get home --user u17` ignored the user. Now it renders that client's
    variants and app version: the hash matches what a real client of u17 is sent. `screen diff
    --from 1 --to 2` gives the ops between two kept versions (applied with jsonpatch)."""
    import jsonpatch
    hub = hub_factory("--dev")
    env = {"HUBCTL_URL": "http://127.0.0.1:%d" % hub.admin_port, "HUBCTL_TOKEN": hub.token}
    v1 = {"type": "screen", "children": [{"key": "a", "type": "text", "text": "one"}]}
    v2 = {"type": "screen", "title": "new", "children": [{"key": "a", "type": "text", "text": "two"},
                                                         {"key": "b", "type": "text", "text": "b", "min_app_version": "6.0.0"}]}
    assert call(hub, "PUT", "/v1/screens/home", v1)[0] == 200
    assert call(hub, "PUT", "/v1/screens/home", v2)[0] == 200
    experiment = {"key": "look", "status": "running", "variants": [{"key": "A"}, {"key": "B"}],
                  "screens": {"home": {"A": {"title": "variant A"}, "B": {"title": "variant B"}}}}
    assert call(hub, "PUT", "/v1/experiments/look", experiment)[0] == 200
    for user in ("u1", "u2", "u3", "u4"):
        got = hubctl("--json", "screen", "get", "home", "--user", user, "--platform", "ios", "--app-version", "5.0.0", env=env)
        assert got.returncode == 0, got.stderr
        answer = json.loads(got.stdout)
        variant = call(hub, "GET", "/v1/experiments/look/assignment?unit=" + user)[1]["variant"]
        assert answer["tree"]["title"] == "variant " + variant and len(answer["tree"]["children"]) == 1
        ws = connect(hub.url + "/v1/connect")
        ws.send(json.dumps({"type": "hello", "protocol": 1, "device": user, "app": {"platform": "ios", "version": "5.0.0"}}))
        assert json.loads(ws.recv(timeout=5))["type"] == "welcome"
        ws.send(json.dumps({"type": "subscribe", "screen": "home"}))
        snapshot = json.loads(ws.recv(timeout=5))
        ws.close()
        # An anonymous device's unit is its device id, so it gets the variant `user` would.
        assert snapshot["hash"] == answer["hash"], (user, snapshot, answer)
    diff = hubctl("--json", "screen", "diff", "home", "--from", "1", "--to", "2", env=env)
    assert diff.returncode == 0, diff.stderr
    ops = json.loads(diff.stdout)["ops"]
    base = call(hub, "GET", "/v1/screens/home?app_version=99.0.0")[1]["tree"]
    assert jsonpatch.apply_patch(v1, ops) == base
    missing = hubctl("screen", "diff", "home", "--from", "7", env=env)
    assert missing.returncode == 1 and "keeps versions" in missing.stderr


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_watch_is_a_real_client_piped_to_a_file(hub_factory, tmp_path):
    """Issue 10: `hubctl watch` exited after 60 s (it never answered pings), lost its output when
    piped, and `--token` was taken as the admin token. With pings every 1 s and a 3 s idle
    timeout, watch stays connected for 8 s, writes each patch line to a file as it happens,
    appears under its user, prints and acks a sync, and resumes after the hub restarts."""
    from conftest import Hub
    port, admin = free_port(), free_port()
    flags = ("--listen", "127.0.0.1:%d" % port, "--admin", "127.0.0.1:%d" % admin, "--ping-interval", "1s",
             "--idle-timeout", "3s")
    hub = hub_factory(*flags)
    env = {"HUBCTL_URL": "http://127.0.0.1:%d" % admin, "HUBCTL_TOKEN": hub.token,
           "HUBCTL_JWT_SECRET_FILE": os.path.join(hub.data, "data", "jwt.secret")}
    def tree(n):  # rows enough that a one-field change goes out as a patch, not a snapshot
        return {"type": "screen", "n": n, "children": [{"key": "k%d" % i, "text": "row %d" % i} for i in range(20)]}

    assert call(hub, "PUT", "/v1/screens/home", tree(0))[0] == 200
    token = hubctl("token", "--user", "u42", env=env).stdout.strip()
    out = open(tmp_path / "watch.out", "w")
    watch = subprocess.Popen([os.path.join(BIN, "hubctl"), "watch", "home", "--client-token", token, "--device", "w1"],
                             stdout=out, stderr=subprocess.PIPE, env={**os.environ, **env}, text=True)
    try:
        def lines():
            return open(tmp_path / "watch.out").read().splitlines()

        deadline = time.time() + 5
        while not any(l.startswith("snapshot home v1") for l in lines()) and time.time() < deadline:
            time.sleep(0.05)
        assert any(l.startswith("snapshot home v1") for l in lines()), lines()
        for n in range(1, 5):
            time.sleep(2)
            assert call(hub, "PUT", "/v1/screens/home", tree(n))[0] == 200
            deadline = time.time() + 3
            while not any(l.startswith("patch home v%d -> v%d" % (n, n + 1)) for l in lines()) and time.time() < deadline:
                time.sleep(0.05)
            assert any(l.startswith("patch home v%d -> v%d" % (n, n + 1)) and "hash ok" in l for l in lines()), lines()
        assert watch.poll() is None, "watch exited"
        clients = call(hub, "GET", "/v1/clients?user=u42")[1]
        assert clients["count"] == 1 and clients["clients"][0]["device"] == "w1"
        sync = call(hub, "POST", "/v1/syncs", {"target": {"user": "u42"}, "reason": "hotfix"})[1]
        deadline = time.time() + 3
        while call(hub, "GET", "/v1/syncs/" + sync["id"])[1]["receipts"]["acked"] < 1 and time.time() < deadline:
            time.sleep(0.05)
        assert call(hub, "GET", "/v1/syncs/" + sync["id"])[1]["receipts"]["acked"] == 1
        assert any(l.startswith("sync " + sync["id"]) for l in lines())
        hub.process.kill()
        hub.process.wait()
        again = Hub(*flags, data=hub.data)
        try:
            assert call(again, "PUT", "/v1/screens/home", tree(99))[0] == 200
            deadline = time.time() + 10
            while not any("-> v6" in l for l in lines()) and time.time() < deadline:
                time.sleep(0.1)
            assert any(l.startswith("patch home v5 -> v6") for l in lines()), lines()  # resumed with have
            assert watch.poll() is None
        finally:
            again.process.kill()
            again.process.wait()
    finally:
        watch.kill()
        watch.wait()
        out.close()


def test_data_dir_finds_the_jwt_secret_and_a_missing_secret_says_how_to_name_it(hub_factory, tmp_path):
    """Issue 24 item 12: `--data DIR` (and `HUBCTL_DATA`) found `admin.token` but not `jwt.secret`
    (`token`, `watch --user`), and the error named neither `--secret-file` nor
    `HUBCTL_JWT_SECRET_FILE`. hubctl runs in / here: no ./data beside it."""
    import jwt
    hub = hub_factory("--dev")
    url = "http://127.0.0.1:%d" % hub.admin_port
    data = os.path.join(hub.data, "data")
    secret = open(os.path.join(data, "jwt.secret")).read().strip()
    for args, env in ((("--data", data), {}), ((), {"HUBCTL_DATA": data})):
        minted = hubctl("--url", url, *args, "token", "--user", "u24", env=env)
        assert minted.returncode == 0, minted.stderr
        assert jwt.decode(minted.stdout.strip(), secret, algorithms=["HS256"])["sub"] == "u24"
    assert call(hub, "PUT", "/v1/screens/home", {"type": "screen", "children": []})[0] == 200
    watched = hubctl("--url", url, "--data", data, "--json", "watch", "home", "--user", "u24", "--count", "1")
    assert watched.returncode == 0, watched.stderr
    assert json.loads(watched.stdout.splitlines()[0])["user"] == "u24"  # the welcome
    (tmp_path / "no-secret").mkdir()
    (tmp_path / "no-secret" / "admin.token").write_text(hub.token)
    for args in (("token", "--user", "u24"), ("watch", "home", "--user", "u24")):
        for where in (("--token", hub.token), ("--data", str(tmp_path / "no-secret"))):
            refused = hubctl("--url", url, *where, *args)
            assert refused.returncode == 2, refused
            first = refused.stderr.splitlines()[0]
            assert "--secret-file" in first and "HUBCTL_JWT_SECRET_FILE" in first and "--data" in first, refused.stderr


def test_watch_help_has_one_token_and_the_client_token_is_client_token(hub_factory):
    """Issue 24 item 12: `watch --help` listed `--token` twice with two meanings. `--token` is the
    admin token wherever it stands; the client's JWT is `--client-token`. The old `watch … --token
    JWT` still signs in with the JWT (an admin token is never a JWT), with a note."""
    hub = hub_factory("--dev")
    url = "http://127.0.0.1:%d" % hub.admin_port
    helped = hubctl("watch", "--help")
    assert helped.returncode == 0
    assert [line.split()[0] for line in helped.stdout.splitlines() if line.strip().startswith("--token")] == ["--token"]
    assert "--client-token" in helped.stdout
    assert call(hub, "PUT", "/v1/screens/home", {"type": "screen", "children": []})[0] == 200
    env = {"HUBCTL_JWT_SECRET_FILE": os.path.join(hub.data, "data", "jwt.secret")}
    client_token = hubctl("--url", url, "token", "--user", "u7", env=env).stdout.strip()

    def welcome(*args):
        result = hubctl("--url", url, "--json", *args, "--count", "1")
        assert result.returncode == 0, (args, result.stderr)
        return json.loads(result.stdout.splitlines()[0]), result.stderr

    signed_in, note = welcome("--token", hub.token, "watch", "home", "--client-token", client_token)
    assert signed_in["user"] == "u7" and note == ""
    signed_in, note = welcome("--token", hub.token, "watch", "home", "--token", client_token)
    assert signed_in["user"] == "u7" and "--client-token" in note
    # After the command, an admin token is the admin token (it reads /v1/stats); dev: anonymous.
    signed_in, _ = welcome("watch", "home", "--token", hub.token)
    assert signed_in["type"] == "welcome" and signed_in.get("user") != "u7"
    twice = hubctl("--url", url, "--token", hub.token, "watch", "home", "--token", hub.token)
    assert twice.returncode == 2 and "given twice" in twice.stderr


def test_durations_take_days_and_the_limit_is_said_in_days(hub_factory):
    """Issue 24 item 12: `--ttl 1d` and `30d` were refused though the docs say "at most 30 days",
    and the refusal said "2592000.0 seconds"."""
    import jwt
    hub = hub_factory()
    env = {"HUBCTL_URL": "http://127.0.0.1:%d" % hub.admin_port, "HUBCTL_TOKEN": hub.token,
           "HUBCTL_JWT_SECRET_FILE": os.path.join(hub.data, "data", "jwt.secret")}
    for ttl, seconds in (("1d", 86400), ("30d", 30 * 86400), ("1h30m", 5400), ("1d12h", 129600)):
        minted = hubctl("token", "--user", "u1", "--ttl", ttl, env=env)
        assert minted.returncode == 0, (ttl, minted.stderr)
        claims = jwt.decode(minted.stdout.strip(), options={"verify_signature": False})
        assert claims["exp"] - claims["iat"] == seconds, ttl
    assert hubctl("token", "--user", "u1", "--ttl", "1x", env=env).returncode == 2
    sent = hubctl("--json", "sync", "--user", "u1", "--ttl", "30d", "--spread", "1m30s", env=env)
    assert sent.returncode == 0, sent.stderr
    kept = call(hub, "GET", "/v1/syncs/" + json.loads(sent.stdout)["id"])[1]
    assert kept["expires_at"] - kept["created_at"] == 30 * 86400 * 1000, kept
    too_long = hubctl("sync", "--user", "u1", "--ttl", "31d", env=env)
    assert too_long.returncode == 1 and "at most 30 days (30d)" in too_long.stderr, too_long.stderr
    assert "2592000" not in too_long.stderr
    spread = hubctl("sync", "--user", "u1", "--spread", "2h", env=env)
    assert spread.returncode == 1 and "at most 1 hour (1h)" in spread.stderr, spread.stderr


def test_token_admin_create_prints_json_for_scripts(hub_factory):
    """Issue 24 item 12: scripts scraped "secret: …" from `token admin create`. Its usage names
    `--json`, which prints the hub's answer: {name, scopes, token}, `token` being the secret."""
    hub = hub_factory()
    env = {"HUBCTL_URL": "http://127.0.0.1:%d" % hub.admin_port, "HUBCTL_TOKEN": hub.token}
    helped = hubctl("token", "--help")
    assert any("admin create" in line and "--json" in line for line in helped.stdout.splitlines()), helped.stdout
    for args in (("token", "admin", "create", "ci", "--scope", "publish", "--json"),
                 ("--json", "token", "admin", "create", "ci2", "--scope", "read")):
        created = hubctl(*args, env=env)
        assert created.returncode == 0, created.stderr
        answer = json.loads(created.stdout)
        assert answer["name"] == args[args.index("create") + 1] and len(answer["scopes"]) == 1
        assert call(hub, "GET", "/v1/stats", token=answer["token"])[0] == 200


def test_an_unknown_command_or_subcommand_is_named_with_the_nearest_one():
    """Issue 24 item 12: `hubctl snyc --user u1` was reported as an unknown option '--user'."""
    for args, message in (
        (("snyc", "--user", "u1", "--reason", "x"), "Unknown command 'snyc'. Did you mean 'sync'?"),
        (("--json", "statsu"), "Unknown command 'statsu'. Did you mean 'status'?"),
        (("screen", "publsh", "home", "home.json"), "Unknown command 'screen publsh'. Did you mean 'screen publish'?"),
        (("sync", "stats", "s-1"), "Unknown command 'sync stats'. Did you mean 'sync status'?"),
        (("token", "admin", "lst"), "Unknown command 'token admin lst'. Did you mean 'token admin list'?"),
        (("experiment", "strat", "e1"), "Unknown command 'experiment strat'. Did you mean 'experiment start'?"),
        (("help", "scren"), "Unknown command 'scren'. Did you mean 'screen'?"),
        (("frobnicate",), "Unknown command 'frobnicate'."),
    ):
        result = hubctl(*args, env={"HUBCTL_URL": "http://127.0.0.1:9"})  # nothing may be sent
        assert result.returncode == 2 and result.stderr.splitlines()[0] == "Error: " + message, (args, result.stderr)


def test_watch_waits_for_a_screen_that_is_not_published_yet(hub_factory):
    """Issue 24 item 10: a subscription to a screen with no version stays; watch says it waits
    (it used to exit with unknown_screen) and prints the snapshot of the first publish."""
    hub = hub_factory("--dev")
    env = {"HUBCTL_URL": "http://127.0.0.1:%d" % hub.admin_port, "HUBCTL_TOKEN": hub.token}
    watch = subprocess.Popen([os.path.join(BIN, "hubctl"), "watch", "later", "--count", "1"],
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, env={**os.environ, **env}, text=True)
    try:
        import select
        ready, _, _ = select.select([watch.stderr], [], [], 5)
        assert ready, "watch said nothing within 5 s"
        assert "later is not published yet; waiting for its first version" in watch.stderr.readline()
        assert call(hub, "PUT", "/v1/screens/later", {"type": "screen", "n": 1})[0] == 200
        out, _ = watch.communicate(timeout=10)
        assert watch.returncode == 0 and out.startswith("snapshot later v1"), out
    finally:
        if watch.poll() is None:
            watch.kill()
