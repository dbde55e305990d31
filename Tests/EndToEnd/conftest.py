"""Starts real pushhub processes on loopback for the end-to-end tests."""
import json
import os
import resource
import signal
import socket
import subprocess
import tempfile
import time
import urllib.request

import pytest

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
BIN = os.environ.get("PUSHHUB_BIN_DIR", os.path.join(ROOT, ".build", "debug"))


class Hub:
    """A pushhub process; `port`/`admin_port` are its bound ports, `token` its admin token."""

    def __init__(self, *flags, max_fds=None, data=None, launcher=()):
        """Starts a hub; `data` reuses another hub's directory (a restart); `launcher` runs it
        (`sh -c '…; exec "$0" "$@"'` gets pushhub's path and flags)."""
        self.data = data or tempfile.mkdtemp(prefix="pushhub-e2e-")
        self.started_at = time.time()
        self.log_path = os.path.join(self.data, "hub-%d.log" % time.monotonic_ns())
        self.log = open(self.log_path, "w")
        self.process = subprocess.Popen(
            [*launcher, os.path.join(BIN, "pushhub"), "--listen", "127.0.0.1:0", "--admin", "127.0.0.1:0",
             "--data", os.path.join(self.data, "data"), "--echo-path", "/echo", *flags],
            stderr=self.log,
            preexec_fn=(lambda: resource.setrlimit(resource.RLIMIT_NOFILE, (max_fds, max_fds))) if max_fds else None)
        deadline = time.time() + 10
        while time.time() < deadline:
            for line in open(self.log_path):
                entry = json.loads(line)
                if entry.get("msg") == "listening":
                    self.port = int(entry["client"].rsplit(":", 1)[1])
                    self.admin_port = int(entry["admin"].rsplit(":", 1)[1])
                    self.token = open(os.path.join(self.data, "data", "admin.token")).read().strip()
                    return
            assert self.process.poll() is None, "pushhub exited: " + open(self.log_path).read()
            time.sleep(0.05)
        raise AssertionError("pushhub did not log 'listening' within 10 s")

    @property
    def url(self):
        return "ws://127.0.0.1:%d" % self.port

    def stats(self):
        request = urllib.request.Request("http://127.0.0.1:%d/v1/stats" % self.admin_port,
                                         headers={"Authorization": "Bearer " + self.token})
        with urllib.request.urlopen(request, timeout=5) as response:
            return json.load(response)

    def wait_for_connections(self, expected, timeout=5.0):
        """Waits until the hub counts `expected` open connections besides the stats request."""
        deadline = time.time() + timeout
        while True:
            stats = self.stats()
            # The stats request's own connection is open while it is answered.
            if stats["connections"] - 1 == expected:
                return stats
            if time.time() > deadline:
                raise AssertionError("expected %d connections, hub reports %r" % (expected, stats))
            time.sleep(0.05)

    def cpu_seconds(self):
        fields = open("/proc/%d/stat" % self.process.pid).read().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")

    def stop(self):
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
            return self.process.wait(timeout=15)
        return self.process.returncode


def terminate(process, timeout=10):
    """SIGTERM, then SIGKILL if `process` has not exited within `timeout` s; waits for it."""
    if process.poll() is None:
        process.terminate()
        try:
            process.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


def drop_all(connections):
    """Closes every sync client in `connections` (emptying it) without the close handshake. A
    test's clients must be closed before its hubs stop: a sync client's socket and reading thread
    live on otherwise, and hundreds of them push later tests' descriptors past what select()
    takes (test_wss_connects failed so). No handshake: a client with an update it did not read
    waits for the hub's close frame behind it (close_timeout), and the test is done with them."""
    while connections:
        ws = connections.pop()
        try:
            ws.socket.shutdown(socket.SHUT_RDWR)
        except OSError:
            continue  # the test closed it already
        ws.close()


@pytest.fixture
def hub_factory():
    hubs = []

    def start(*flags, **options):
        hub = Hub(*flags, **options)
        hubs.append(hub)
        return hub

    yield start
    for hub in hubs:
        if hub.process.poll() is None:
            hub.process.kill()
            hub.process.wait()


@pytest.fixture
def hub(hub_factory):
    return hub_factory("--handshake-timeout", "700ms", "--hello-timeout", "700ms")
