"""A real redis-server (Debian's package) on a free loopback port for the scale-out tests
(DESIGN §11). Without redis-server installed the tests fail saying how to install it; they do
not skip."""
import os
import shutil
import signal
import socket
import subprocess
import tempfile
import time


def free_port():
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


class RedisServer:
    """redis-server with an append-only file fsynced on every write (`appendfsync always`, what
    docs/operations.md says the no-loss guarantee assumes), so a restart keeps what it had."""

    def __init__(self, *arguments, tls=None):
        """`tls`: (certificate, key) PEM files: the server then speaks TLS only."""
        executable = shutil.which("redis-server") or "/usr/bin/redis-server"
        if not os.path.exists(executable):
            raise AssertionError("redis-server is not installed: `make test` installs it "
                                 "(apt-get install -y redis-server redis-tools); the scale-out tests need it")
        self.executable = executable
        self.port = free_port()
        self.directory = tempfile.mkdtemp(prefix="pushhub-redis-")
        self.arguments = arguments
        self.tls = tls
        self.process = None
        self.start()

    @property
    def url(self):
        return "%s://127.0.0.1:%d" % ("rediss" if self.tls else "redis", self.port)

    def start(self):
        self.process = subprocess.Popen(
            [self.executable, "--port", str(self.port), "--bind", "127.0.0.1", "--dir", self.directory,
             "--save", "", "--appendonly", "yes", "--appendfsync", "always", "--enable-debug-command", "yes",
             "--logfile", os.path.join(self.directory, "redis.log"), *self.tls_arguments(), *self.arguments],
            stdout=subprocess.DEVNULL)
        deadline = time.time() + 10
        while time.time() < deadline:
            try:
                if self.command("PING") == "PONG":
                    return
            except OSError:
                pass
            assert self.process.poll() is None, "redis-server exited: " + self.log()
            time.sleep(0.02)
        raise AssertionError("redis-server did not answer PING within 10 s: " + self.log())

    def tls_arguments(self):
        if not self.tls:
            return []
        certificate, key = self.tls
        return ["--port", "0", "--tls-port", str(self.port), "--tls-cert-file", certificate, "--tls-key-file", key,
                "--tls-ca-cert-file", certificate, "--tls-auth-clients", "no"]

    def log(self):
        path = os.path.join(self.directory, "redis.log")
        return open(path).read()[-2000:] if os.path.exists(path) else ""

    def command(self, *words):
        """Runs one command through redis-cli; its output, stripped."""
        tls = ["--tls", "--cacert", self.tls[0]] if self.tls else []
        result = subprocess.run(["redis-cli", "-p", str(self.port), *tls, *words], capture_output=True, text=True,
                                timeout=10)
        if result.returncode != 0 or "Could not connect" in result.stdout + result.stderr:
            raise OSError(result.stdout + result.stderr)
        return result.stdout.strip()

    def kill(self):
        """SIGKILL: what a crash looks like to the hubs."""
        if self.process and self.process.poll() is None:
            self.process.send_signal(signal.SIGKILL)
            self.process.wait()

    def stop(self):
        self.kill()
        shutil.rmtree(self.directory, ignore_errors=True)


class RedisSentinel:
    """redis-sentinel monitoring one master as `name` (quorum 1), quick to fail over: the master
    is down after 1 s without answers."""

    def __init__(self, master_port, name="pushhub"):
        executable = shutil.which("redis-sentinel") or "/usr/bin/redis-sentinel"
        if not os.path.exists(executable):
            raise AssertionError("redis-sentinel is not installed: `make test` installs it "
                                 "(apt-get install -y redis-sentinel)")
        self.port = free_port()
        self.directory = tempfile.mkdtemp(prefix="pushhub-sentinel-")
        config = os.path.join(self.directory, "sentinel.conf")
        with open(config, "w") as file:
            file.write("port %d\nbind 127.0.0.1\ndir %s\nlogfile %s\n"
                       "sentinel monitor %s 127.0.0.1 %d 1\n"
                       "sentinel down-after-milliseconds %s 1000\n"
                       "sentinel failover-timeout %s 5000\n" % (
                           self.port, self.directory, os.path.join(self.directory, "sentinel.log"),
                           name, master_port, name, name))
        self.process = subprocess.Popen([executable, config], stdout=subprocess.DEVNULL)
        deadline = time.time() + 10
        while time.time() < deadline:
            result = subprocess.run(["redis-cli", "-p", str(self.port), "PING"], capture_output=True, text=True)
            if result.stdout.strip() == "PONG":
                return
            time.sleep(0.02)
        raise AssertionError("redis-sentinel did not answer PING within 10 s")

    def master(self, name="pushhub"):
        result = subprocess.run(["redis-cli", "-p", str(self.port), "SENTINEL", "get-master-addr-by-name", name],
                                capture_output=True, text=True, timeout=10)
        return result.stdout.split()

    def stop(self):
        if self.process.poll() is None:
            self.process.kill()
            self.process.wait()
        shutil.rmtree(self.directory, ignore_errors=True)
