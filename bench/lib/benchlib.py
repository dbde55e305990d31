"""What the Python benches share: the processes a run started (stopped on the way out), the
machine's load (wait for a quiet machine, and say what other processes used during a run), free
ports, the run's work folder, a hub process with its admin API and its threads' CPU time, clients
held by `loadgen drive`, and the figures' formatting (percentiles, one line of ranges)."""
import contextlib
import http.client
import json
import math
import os
import shutil
import signal
import socket
import subprocess
import tempfile
import time

CLK_TCK = os.sysconf("SC_CLK_TCK")

started = []  # every process the run started and has not stopped; `work_folder` stops them on exit


def say(text):
    print(text, flush=True)


def free_port():
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def stop(process, timeout=30):
    """SIGTERM, then SIGKILL after `timeout` seconds (said); forgets the process."""
    if process.poll() is None:
        process.send_signal(signal.SIGTERM)
        try:
            process.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            say("# NOTE: pid %d did not exit %d s after SIGTERM; killed" % (process.pid, timeout))
            process.kill()
            process.wait(timeout=10)
    if process in started:
        started.remove(process)


def proc_status(pid, field):
    """A `kB` field of /proc/PID/status, in KiB."""
    with open("/proc/%d/status" % pid) as status:
        for line in status:
            if line.startswith(field + ":"):
                return int(line.split()[1])
    return 0


def cpu_seconds(pid):
    fields = open("/proc/%d/stat" % pid).read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / CLK_TCK


def machine_busy():
    """Busy CPU seconds of the whole machine (everything but idle and iowait) and wall seconds."""
    with open("/proc/stat") as stat:
        v = [int(x) for x in stat.readline().split()[1:9]]
    return (v[0] + v[1] + v[2] + v[5] + v[6] + v[7]) / CLK_TCK, time.perf_counter()


class Others:
    """What processes other than ours (the hub, this script, redis-server) used of the machine
    between `__init__` and `pct()`, in % of all cores: a disturbed figure shows."""

    def __init__(self, *pids):
        self.pids = [pid for pid in pids if pid]
        self.busy0, self.wall0 = machine_busy()
        self.ours0 = self.ours()

    def ours(self):
        total = time.process_time()
        for pid in self.pids:
            try:
                total += cpu_seconds(pid)
            except OSError:
                pass  # it exited: its time is no longer ours to count
        return total

    def pct(self):
        busy, wall = machine_busy()
        others = (busy - self.busy0) - (self.ours() - self.ours0)
        return max(0.0, 100 * others / ((wall - self.wall0) * os.cpu_count()))


def wait_quiet(limit_pct, wait_s):
    """Waits until the machine is at most `limit_pct` % busy over a second (at most `wait_s`
    seconds, then goes on and says so); returns the line to print."""
    start = time.perf_counter()
    while True:
        busy0, wall0 = machine_busy()
        time.sleep(1)
        busy1, wall1 = machine_busy()
        pct = 100 * (busy1 - busy0) / ((wall1 - wall0) * os.cpu_count())
        if pct <= limit_pct:
            return "# machine %.0f%% busy before the run (waited %.0f s for at most %d%%)" % (
                pct, time.perf_counter() - start, limit_pct)
        if time.perf_counter() - start > wait_s:
            return "# NOTE: machine busy (%.0f%% after %.0f s of waiting); measuring anyway" % (pct, wait_s)
        time.sleep(4)


def add_quiet_arguments(parser):
    """`--quiet-pct` and `--quiet-wait` (for `wait_quiet`), and `--keep` (for `work_folder`)."""
    parser.add_argument("--quiet-pct", type=int, default=int(os.environ.get("QUIET_PCT", 10)),
                        help="before each run, wait until the machine is at most this %% busy (10) ...")
    parser.add_argument("--quiet-wait", type=int, default=int(os.environ.get("QUIET_WAIT", 300)),
                        help="... for at most this many seconds (300), then measure anyway and say so")
    parser.add_argument("--keep", action="store_true", help="keep the work folder (the processes' logs)")


@contextlib.contextmanager
def work_folder(prefix, keep):
    """A folder for the run's files. On the way out, however the run ends (SIGTERM included: it
    is turned into an exit), every process still in `started` is stopped and the folder removed,
    unless `keep`."""
    signal.signal(signal.SIGTERM, lambda *_: exit(130))
    work = tempfile.mkdtemp(prefix=prefix)
    try:
        yield work
    finally:
        for process in list(started):
            stop(process)
        if keep:
            say("# work folder kept: " + work)
        else:
            shutil.rmtree(work, ignore_errors=True)


class BenchHub:
    """A pushhub process on loopback (its stderr in `log`), up once it logs "listening"
    (`ready_s` after its start at `t0`, `time.perf_counter`), with one keep-alive connection to
    its admin API. The admin token
    is read from `token_file` once it listens (the hub writes one unless the bench did)."""

    def __init__(self, pushhub, arguments, log, token_file, timeout):
        self.log = log
        self.t0 = t0 = time.perf_counter()
        self.process = subprocess.Popen([pushhub, *arguments], stderr=open(log, "w"))
        started.append(self.process)
        self.pid = self.process.pid
        listening = self._listening(t0 + timeout, timeout)
        self.ready_s = time.perf_counter() - t0
        self.port = int(listening["client"].rsplit(":", 1)[1])
        self.admin_port = int(listening["admin"].rsplit(":", 1)[1])
        self.token = open(token_file).read().strip()
        self.connection = http.client.HTTPConnection("127.0.0.1", self.admin_port, timeout=timeout)

    def _listening(self, deadline, timeout):
        """The "listening" line, read as the log grows."""
        offset, buffered = 0, ""
        while True:
            with open(self.log) as log:
                log.seek(offset)
                chunk = log.read()
                offset += len(chunk.encode())
            buffered += chunk
            *lines, buffered = buffered.split("\n")
            for line in lines:
                try:
                    entry = json.loads(line)
                except ValueError:
                    continue  # not a log line of the hub's (a crash's text): the exit below says it
                if entry.get("msg") == "listening":
                    return entry
            if self.process.poll() is not None:
                raise SystemExit("pushhub exited (%s): %s" % (self.process.returncode, open(self.log).read()[-2000:]))
            if time.perf_counter() > deadline:
                raise SystemExit("pushhub did not log 'listening' within %d s" % timeout)
            time.sleep(0.002)

    def call(self, method, path, body=None):
        """One admin request → (status, answer, sent ns, answered ns)."""
        headers = {"Authorization": "Bearer " + self.token}
        payload = None
        if body is not None:
            payload = json.dumps(body).encode()
            headers["Content-Type"] = "application/json"
        t0 = time.monotonic_ns()
        self.connection.request(method, path, body=payload, headers=headers)
        response = self.connection.getresponse()
        data = response.read()
        return response.status, (json.loads(data) if data else None), t0, time.monotonic_ns()

    def text(self, path):
        """One admin GET whose answer is not JSON (`/metrics`) → (status, text)."""
        self.connection.request("GET", path, headers={"Authorization": "Bearer " + self.token})
        response = self.connection.getresponse()
        return response.status, response.read().decode()

    def metrics(self):
        """`/metrics` as {name: value} (samples without labels only)."""
        status, text = self.text("/metrics")
        if status != 200:
            raise SystemExit("GET /metrics: %d %s" % (status, text[:300]))
        values = {}
        for line in text.splitlines():
            parts = line.split()
            if len(parts) == 2 and not line.startswith("#") and "{" not in parts[0]:
                values[parts[0]] = float(parts[1])
        return values

    def stop(self):
        self.connection.close()
        stop(self.process)


class SecretsHub(BenchHub):
    """A release pushhub on loopback for the benches that sign clients in: its own data dir holds
    the admin token and JWT secret the bench chose (docs/scale-out.md: every hub of a cluster gets
    the same two files), timeouts long enough not to close idle generator clients, warnings only.
    `must` is a call that must answer `status`."""

    def __init__(self, pushhub, folder, loops, token, secret, *flags, timeout):
        self.data = os.path.join(folder, "data")
        os.makedirs(self.data)
        for name, value in (("admin.token", token), ("jwt.secret", secret)):
            path = os.path.join(self.data, name)
            with open(path, "w") as file:
                file.write(value + "\n")
            os.chmod(path, 0o600)
        super().__init__(
            pushhub, ["--listen", "127.0.0.1:0", "--admin", "127.0.0.1:0", "--data", self.data, "--loops", str(loops),
                      "--ping-interval", "10m", "--idle-timeout", "10m", "--hello-timeout", "10m", "--log-level",
                      "warning", *flags],
            os.path.join(folder, "hub.log"), os.path.join(self.data, "admin.token"), timeout)

    def must(self, method, path, body=None, status=(200, 201)):
        code, answer, t0, t1 = self.call(method, path, body)
        if code not in status:
            raise SystemExit("%s %s: %d %s" % (method, path, code, answer))
        return answer, t0, t1

    def problems(self):
        """The hub's error lines so far."""
        return [line.strip()[:300] for line in open(self.log) if '"level":"error"' in line]


class HubCPU:
    """CPU time of a hub's threads, in ns (schedstat's time on CPU; /proc/PID/stat counts clock
    ticks, 10 ms, too coarse for one admin call), split as loadgen's track mode splits it: the
    main thread (tid = pid), the client loops, the control plane (LoopGroup starts it last: the
    highest tid)."""

    def __init__(self, pid):
        self.pid = pid
        self.start = self.read()

    def read(self):
        times = {}
        for task in os.listdir("/proc/%d/task" % self.pid):
            try:
                with open("/proc/%d/task/%s/schedstat" % (self.pid, task)) as stat:
                    times[int(task)] = int(stat.read().split()[0])
            except OSError:
                pass
        return times

    def used(self):
        """{"all", "loops", "control"} ns since the start."""
        now = self.read()
        delta = {tid: ns - self.start.get(tid, 0) for tid, ns in now.items()}
        control = max(delta)
        return {"all": sum(delta.values()), "control": delta[control],
                "loops": sum(ns for tid, ns in delta.items() if tid not in (self.pid, control))}


def percentile(values, fraction):
    """Nearest rank, as loadgen's."""
    ordered = sorted(values)
    if not ordered:
        return float("nan")
    rank = max(1, min(len(ordered), math.ceil(fraction * len(ordered) - 1e-9)))
    return ordered[rank - 1]


def spread_line(label, rows, keys):
    """One line: for each (key, name, unit), the smallest and largest value over the rows."""
    def figure(x):
        return "%.*f" % (0 if abs(x) >= 100 else 1 if abs(x) >= 10 else 2, x)

    parts = []
    for key, name, unit in keys:
        values = [row[key] for row in rows if row.get(key) is not None]
        if values:
            parts.append("%s %s–%s%s" % (name, figure(min(values)), figure(max(values)), unit))
    say("%s: %s" % (label, ", ".join(parts)))


class DrivePool:
    """One `loadgen drive` process (bench/loadgen/loadgen.c, "mode: drive"): `n` clients of the
    hub at `port`, client i being device d-<first+i> (user u<first+i> with `--jwt-secret-file` in
    `flags`), subscribed to `screens`, held until `stop`. Its stderr goes to
    `folder`/loadgen-<first>.log."""

    def __init__(self, loadgen, port, n, first, screens, folder, timeout, flags=(), probe_s=30):
        self.n, self.first, self.probe_s = n, first, probe_s
        self.process = subprocess.Popen(
            [loadgen, "drive", "--port", str(port), "--n", str(n), "--id-first", str(first),
             "--subscribe", ",".join(screens), "--timeout", str(timeout), *flags],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, bufsize=1,
            stderr=open(os.path.join(folder, "loadgen-%d.log" % first), "w"))
        started.append(self.process)
        ready, failed, seconds = self.expect("ready")[1:]
        if int(ready) != n or int(failed):
            raise SystemExit("loadgen: %s of %d clients ready, %s failed (its log is in the work folder)"
                             % (ready, n, failed))
        self.connect_s = float(seconds)

    def expect(self, word):
        line = self.process.stdout.readline()
        if not line.startswith(word + " ") and line.strip() != word:
            raise SystemExit("loadgen answered %r, expected %s (exit %s)" % (line, word, self.process.poll()))
        return line.split()

    def command(self, text, word):
        self.process.stdin.write(text + "\n")
        return self.expect(word)

    def mark(self):
        self.command("mark", "ok")

    def send(self, client, message):
        """Client `client` (this pool's index) sends `message`; returns the ns just before the write."""
        answer = self.command("send %d %s" % (client, json.dumps(message, separators=(",", ":"))), "sent")
        if len(answer) > 3:
            raise SystemExit("client %d of pool %d is closed" % (client, self.first))
        return int(answer[2])

    def wait(self, count, seconds):
        return int(self.command("wait %d %g" % (count, seconds), "count")[1])

    def probe(self):
        answered = int(self.command("probe %d" % self.probe_s, "probed")[1])
        if answered != self.n:
            raise SystemExit("only %d of %d clients answered the probe in %d s" % (answered, self.n, self.probe_s))

    def dump(self):
        """The messages since the mark: [(client, t, type, screen index, version, from, hash16, bytes)]."""
        self.process.stdin.write("dump\n")
        messages = []
        while True:
            line = self.process.stdout.readline()
            if line.startswith("end "):
                return messages
            if not line.startswith("m "):
                raise SystemExit("loadgen dump: %r" % line)
            _, client, t, kind, screen, version, since, digest, size = line.split()
            messages.append((int(client), int(t), kind, int(screen), int(version), int(since), digest, int(size)))

    def cpu_ns(self):
        return int(self.command("stats", "stats")[3])

    def stop(self):
        if self.process.poll() is None:
            try:
                self.process.stdin.write("quit\n")
                self.process.stdin.flush()
            except BrokenPipeError:
                pass
        stop(self.process)


class AdminConnection:
    """Admin calls on a connection of its own (a thread's)."""

    def __init__(self, hub, timeout):
        self.headers = {"Authorization": "Bearer " + hub.token, "Content-Type": "application/json"}
        self.connection = http.client.HTTPConnection("127.0.0.1", hub.admin_port, timeout=timeout)

    def must(self, method, path, body=None):
        """(answer, sent ns, answered ns); anything but a 2xx ends the run."""
        payload = None if body is None else json.dumps(body).encode()
        t0 = time.monotonic_ns()
        self.connection.request(method, path, body=payload, headers=self.headers)
        response = self.connection.getresponse()
        data = response.read()
        t1 = time.monotonic_ns()
        if response.status // 100 != 2:
            raise SystemExit("%s %s: %d %s" % (method, path, response.status, data[:300]))
        return json.loads(data), t0, t1

    def get(self, path):
        return self.must("GET", path)[0]

    def close(self):
        self.connection.close()


def record(hub, path):
    """`perf record -g` of the hub into `path` (None: nothing), or None. perf's own CPU shows in
    "others"."""
    if not path:
        return None
    recorder = subprocess.Popen(["perf", "record", "-q", "-g", "-F", "2000", "-p", str(hub.pid), "-o", path],
                                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    recorder.path = path
    started.append(recorder)
    time.sleep(0.5)  # perf attached
    return recorder


def stop_recording(recorder, label="the hub"):
    if recorder:
        recorder.send_signal(signal.SIGINT)
        recorder.wait(timeout=60)
        started.remove(recorder)
        say("# perf record of %s: %s" % (label, recorder.path))
