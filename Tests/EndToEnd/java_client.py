"""The Java client (clients/java/) under test: a `Driver` process (clients/java/test/io/pushhub/
client/e2e/Driver.java) that takes commands on stdin and prints the client's events as JSON lines,
which a reader thread collects. `make java-test` (or clients/java/build.sh test) builds it."""
import json
import os
import subprocess
import threading
import time

import pytest

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
BUILD = os.path.join(ROOT, "clients", "java", "build")
OKHTTP = "/usr/share/java/okhttp.jar:/usr/share/java/okio.jar"
CLASSPATH = ":".join([os.path.join(BUILD, "pushhub-client.jar"), os.path.join(BUILD, "pushhub-client-okhttp.jar"),
                      os.path.join(BUILD, "test-classes"), OKHTTP])


def require_build():
    """Builds the jars and the test classes once per session when they are missing or older than the sources."""
    sources = [os.path.join(d, f) for base in ("src", "okhttp/src", "test")
               for d, _, files in os.walk(os.path.join(ROOT, "clients", "java", base)) for f in files]
    newest = max(os.path.getmtime(f) for f in sources)
    driver = os.path.join(BUILD, "test-classes", "io", "pushhub", "client", "e2e", "Driver.class")
    if not os.path.exists(driver) or os.path.getmtime(driver) < newest:
        result = subprocess.run(["sh", os.path.join(ROOT, "clients", "java", "build.sh"), "test", "NoTestMatchesThis"],
                                capture_output=True, text=True)
        # The runner exits 2 when the filter matches no test: the build itself succeeded.
        if not os.path.exists(driver) or result.returncode not in (0, 2):
            pytest.fail("building the Java client failed:\n" + result.stdout + result.stderr)


class JavaClient:
    """One Driver process running one PushHub; `events` are its JSON lines as they come."""

    def __init__(self, **start):
        require_build()
        self.process = subprocess.Popen(["java", "-cp", CLASSPATH, "io.pushhub.client.e2e.Driver"],
                                        stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                        text=True, encoding="utf-8")
        self.events = []
        self.lock = threading.Condition()
        threading.Thread(target=self._read, daemon=True).start()
        self.command("start", **start)
        self.wait("started", timeout=20)

    def _read(self):
        for line in self.process.stdout:
            event = json.loads(line)
            with self.lock:
                self.events.append(event)
                self.lock.notify_all()

    def command(self, cmd, **fields):
        self.process.stdin.write(json.dumps({"cmd": cmd, **fields}) + "\n")
        self.process.stdin.flush()

    def of(self, kind, **match):
        """The events of `kind` whose fields equal `match`, in order."""
        with self.lock:
            return [e for e in self.events if e["event"] == kind and all(e.get(k) == v for k, v in match.items())]

    def wait(self, kind, timeout=10.0, count=1, **match):
        """Waits for the `count`-th event of `kind` matching `match` (deadline, no sleeps) and returns it."""
        deadline = time.time() + timeout
        with self.lock:
            while True:
                found = [e for e in self.events if e["event"] == kind and all(e.get(k) == v for k, v in match.items())]
                if len(found) >= count:
                    return found[count - 1]
                left = deadline - time.time()
                if left <= 0 or self.process.poll() is not None:
                    raise AssertionError("no %s %r within %.0f s; events: %s; stderr: %s" % (
                        kind, match, timeout, self.events[-20:], self._stderr()))
                self.lock.wait(left)

    def stats(self):
        before = len(self.of("stats"))
        self.command("stats")
        return self.wait("stats", count=before + 1)

    def wait_stats(self, predicate, timeout=10.0):
        """Asks for the client's stats until `predicate(stats)` holds (deadline); returns them."""
        deadline = time.time() + timeout
        while True:
            stats = self.stats()["stats"]
            if predicate(stats):
                return stats
            if time.time() > deadline:
                raise AssertionError("stats never matched: %r" % stats)
            time.sleep(0.05)

    def _stderr(self):
        if self.process.poll() is None:
            return "(running)"
        return self.process.stderr.read()

    def stop(self):
        if self.process.poll() is None:
            try:
                self.process.stdin.close()
                self.process.wait(timeout=5)
            except (subprocess.TimeoutExpired, BrokenPipeError, OSError):
                self.process.kill()
                self.process.wait()


@pytest.fixture
def java_clients():
    """Starts JavaClients; every one is stopped at the end of the test."""
    clients = []

    def start(**options):
        client = JavaClient(**options)
        clients.append(client)
        return client

    yield start
    for client in clients:
        client.stop()
