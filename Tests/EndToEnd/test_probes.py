"""Issue 32: /livez and /readyz, and what /metrics adds for dashboards (process_*, build info).

/readyz answers 503 from the moment the hub handles SIGTERM until it exits, while a client that
never answers the close keeps the drain going, and while a scaled-out hub cannot reach Redis;
/livez answers 200 throughout. The admin listener stays open for the whole drain."""
import http.client
import json
import os
import signal
import socket
import subprocess
import time

from admin import call
from conftest import BIN
from redis_server import RedisServer
from test_raw_abuse import open_raw_websocket
import test_hubctl


def probe(hub, path, method="GET"):
    """(status, parsed body or None) for a request without a token."""
    connection = http.client.HTTPConnection("127.0.0.1", hub.admin_port, timeout=5)
    try:
        connection.request(method, path)
        response = connection.getresponse()
        body = response.read()
        return response.status, json.loads(body) if body else None
    finally:
        connection.close()


def hubctl(hub, *words):
    return test_hubctl.hubctl("--url", "http://127.0.0.1:%d" % hub.admin_port, *words)


def stubborn_client(hub):
    """A WebSocket client that completes the upgrade and then never reads nor closes: the hub's
    close 1001 goes unanswered, so the drain lasts until its timeout."""
    return open_raw_websocket(hub, "/v1/connect")


def metrics_text(hub):
    status, text = call(hub, "GET", "/metrics")
    assert status == 200, text
    return text


def sample(text, name):
    for line in text.splitlines():
        if line.split(" ")[0].split("{")[0] == name:
            return line
    raise AssertionError("no metric %s in /metrics" % name)


def test_probes_answer_without_a_token_and_hubctl_reads_them(hub):
    for path, status in (("/livez", "live"), ("/readyz", "ready")):
        assert probe(hub, path) == (200, {"status": status})
        assert probe(hub, path, "HEAD") == (200, None)
    assert probe(hub, "/readyz", "POST")[0] == 405
    live = hubctl(hub, "probe", "live")
    assert live.returncode == 0 and "200" in live.stdout and '"live"' in live.stdout, live
    ready = hubctl(hub, "--json", "probe", "ready")
    assert ready.returncode == 0 and json.loads(ready.stdout) == {"status": "ready"}, ready
    unknown = hubctl(hub, "probe", "alive")
    assert unknown.returncode == 2 and "live" in unknown.stderr, unknown
    nobody = subprocess.run([os.path.join(BIN, "hubctl"), "--url", "http://127.0.0.1:9", "probe", "live"],
                            capture_output=True, text=True, timeout=30)
    assert nobody.returncode == 3, nobody


def test_metrics_carry_the_process_and_the_build(hub):
    text = metrics_text(hub)
    assert sample(text, "pushhub_ready").endswith(" 1")
    assert sample(text, "pushhub_draining").endswith(" 0")
    resident = float(sample(text, "process_resident_memory_bytes").split()[-1])
    assert 1 << 20 < resident < 1 << 32
    status_kb = next(int(line.split()[1]) for line in open("/proc/%d/status" % hub.process.pid)
                     if line.startswith("VmRSS:"))
    assert abs(resident / 1024 - status_kb) < 0.5 * status_kb  # the same process, measured twice
    started = float(sample(text, "process_start_time_seconds").split()[-1])
    assert abs(started - hub.started_at) < 5, (started, hub.started_at)
    open_fds = int(sample(text, "process_open_fds").split()[-1])
    assert abs(open_fds - len(os.listdir("/proc/%d/fd" % hub.process.pid))) <= 2
    assert int(sample(text, "process_max_fds").split()[-1]) >= open_fds
    assert float(sample(text, "process_cpu_seconds_total").split()[-1]) > 0
    version = subprocess.run([os.path.join(BIN, "pushhub"), "--version"], capture_output=True, text=True,
                             check=True).stdout.split()[1]
    assert sample(text, "pushhub_build_info") .startswith('pushhub_build_info{version="%s",commit="' % version)


def draining_hub(hub_factory, drain):
    """A hub told to stop (SIGTERM) while a client that never answers the close holds its drain
    for `drain`; returns it and that client's socket."""
    hub = hub_factory("--drain-timeout", drain)
    holding = stubborn_client(hub)
    hub.wait_for_connections(1)
    hub.process.send_signal(signal.SIGTERM)
    return hub, holding


def test_readyz_is_503_from_sigterm_until_exit_while_a_client_holds_the_drain(hub_factory):
    hub, holding = draining_hub(hub_factory, "4s")
    # The hub logs "shutting down" once /readyz says draining: never a 200 after that line.
    deadline = time.time() + 5
    while not any(json.loads(line).get("msg") == "shutting down" for line in open(hub.log_path)):
        assert time.time() < deadline, open(hub.log_path).read()
        time.sleep(0.01)
    signalled = time.time()
    answers = []
    while hub.process.poll() is None:
        try:
            answers.append((time.time() - signalled, probe(hub, "/readyz"), probe(hub, "/livez")[0]))
        except (ConnectionError, OSError):
            break  # the hub closed its admin listener as it exited
        time.sleep(0.1)
    assert hub.process.wait(timeout=10) == 0
    assert answers, "no /readyz answer during the drain"
    assert all(ready == (503, {"status": "draining"}) and live == 200 for _, ready, live in answers), answers
    assert answers[-1][0] > 3, "the drain (held by the client) should have lasted about 4 s: %r" % answers[-1:]
    holding.close()


def test_a_change_during_the_drain_is_refused_and_the_client_port_is_closed(hub_factory):
    hub, holding = draining_hub(hub_factory, "3s")
    deadline = time.time() + 5
    while probe(hub, "/readyz")[0] != 503:
        assert time.time() < deadline
        time.sleep(0.01)
    status, answer = call(hub, "PUT", "/v1/screens/late", {"type": "column"})
    assert status == 503 and answer["error"]["code"] == "draining", (status, answer)
    assert "another hub" in answer["error"]["message"]
    text = metrics_text(hub)
    assert sample(text, "pushhub_draining").endswith(" 1") and sample(text, "pushhub_ready").endswith(" 0")
    refused = hubctl(hub, "probe", "ready")
    assert refused.returncode == 1 and "draining" in refused.stderr, refused
    try:
        socket.create_connection(("127.0.0.1", hub.port), timeout=2).close()
        raise AssertionError("the client listener still accepts during the drain")
    except ConnectionRefusedError:
        pass
    assert hub.process.wait(timeout=10) == 0
    holding.close()
    # Nothing was made: the restarted hub has no such screen.
    again = hub_factory(data=hub.data)
    assert call(again, "GET", "/v1/screens/late")[0] == 404


def test_readyz_is_503_while_a_scaled_out_hub_cannot_reach_redis(hub_factory):
    redis = RedisServer()
    try:
        hub = hub_factory("--redis", redis.url)
        # The hub connects to Redis before it says "listening": from then on it is ready and takes
        # a change (it used to answer 503 "cannot reach Redis: " until its control loop connected).
        said = [json.loads(line).get("msg") for line in open(hub.log_path)]
        assert said.index("connected to Redis") < said.index("listening"), said
        assert probe(hub, "/readyz") == (200, {"status": "ready"})
        assert call(hub, "PUT", "/v1/screens/first", {"type": "column"})[0] in (200, 201)
        redis.kill()
        deadline = time.time() + 15
        while probe(hub, "/readyz")[0] != 503:
            assert time.time() < deadline, "still ready with Redis gone"
            time.sleep(0.1)
        status, body = probe(hub, "/readyz")
        assert body["status"] == "degraded" and body["message"].startswith("cannot reach Redis"), body
        assert probe(hub, "/livez") == (200, {"status": "live"})
        waited = hubctl(hub, "probe", "ready", "--wait", "600ms")
        assert waited.returncode == 1 and "degraded" in waited.stderr, waited
        redis.start()
        back = hubctl(hub, "probe", "ready", "--wait", "20s")
        assert back.returncode == 0, back
        assert probe(hub, "/readyz") == (200, {"status": "ready"})
    finally:
        redis.stop()


def test_process_metrics_under_the_units_procfs_subset(hub_factory):
    """deploy/pushhub.service sets ProcSubset=pid, which hides /proc/stat (where the boot time
    used to be read): the hub runs here over a /proc mounted with subset=pid in its own mount
    namespace, and every process_* metric is still exported, the start time right."""
    subset = 'mount -t proc -o subset=pid proc /proc && test ! -e /proc/stat && exec "$0" "$@"'
    hub = hub_factory(launcher=("unshare", "--mount", "--propagation", "private", "sh", "-c", subset))
    text = metrics_text(hub)
    for name in ("process_resident_memory_bytes", "process_cpu_seconds_total", "process_open_fds",
                 "process_max_fds", "process_start_time_seconds"):
        sample(text, name)
    assert abs(float(sample(text, "process_start_time_seconds").split()[-1]) - hub.started_at) < 5
