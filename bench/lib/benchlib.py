"""What the Python benches share: the processes a run started (stopped on the way out), the
machine's load (wait for a quiet machine, and say what other processes used during a run), free
ports, and the run's work folder."""
import contextlib
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
