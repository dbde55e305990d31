"""Issue 32: a static binary (the Swift runtime linked in: `make dist`) against a dynamic one
(`swift build -c release`, libswiftCore & co. loaded from the toolchain): time from exec to the
hub's `listening` line, and resident memory at idle (1 s after that line, no client).

    python3 bench/dist/startup.py --binary static=dist/stage/bin/pushhub \
        --binary dynamic=/tmp/pushhub-dynamic [--runs 30]

Each run starts a fresh hub (new data dir: admin.token and jwt.secret are made, the journal is
empty) on free loopback ports, 2 loops (benchlib's BenchHub, which reads the log every 2 ms), and
stops it with SIGTERM; runs of the binaries alternate so that both see the same machine. Prints min/median/p90 start time and median RSS per binary,
plus each file's size and its libraries (ldd)."""
import argparse
import os
import statistics
import subprocess
import sys
import time

ROOT = os.path.abspath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
sys.path.insert(0, os.path.join(ROOT, "bench", "lib"))
from benchlib import BenchHub, percentile, proc_status, work_folder  # noqa: E402 (bench/lib is found through ROOT)


def start_once(binary, folder, run):
    """One hub from nothing: (seconds from exec to its `listening` line, idle RSS in KiB)."""
    data = os.path.join(folder, "%s-%d" % (os.path.basename(binary), run))
    hub = BenchHub(binary, ["--listen", "127.0.0.1:0", "--admin", "127.0.0.1:0", "--data", data, "--loops", "2"],
                   data + ".log", os.path.join(data, "admin.token"), timeout=20)
    time.sleep(1.0)
    rss_kib = proc_status(hub.pid, "VmRSS")
    hub.stop()
    return hub.ready_s, rss_kib


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--binary", action="append", required=True, help="NAME=PATH")
    parser.add_argument("--runs", type=int, default=30)
    parser.add_argument("--keep", action="store_true", help="keep the hubs' data dirs and logs")
    arguments = parser.parse_args()
    binaries = [entry.split("=", 1) for entry in arguments.binary]
    results = {name: [] for name, _ in binaries}
    with work_folder("pushhub-startup-", arguments.keep) as folder:
        for run in range(arguments.runs):
            for name, path in binaries:
                results[name].append(start_once(path, folder, run))
    for name, path in binaries:
        times = [t * 1000 for t, _ in results[name]]
        rss = statistics.median(r for _, r in results[name])
        libraries = subprocess.run(["ldd", path], capture_output=True, text=True).stdout.split("\n")
        libraries = sorted(line.split()[0] for line in libraries if line.strip() and "vdso" not in line)
        print("%-8s size %6.1f MiB  start to listening: min %.1f ms, median %.1f ms, p90 %.1f ms  "
              "idle RSS median %.1f MiB  (%d runs)" % (
                  name, os.path.getsize(path) / 1048576, min(times), statistics.median(times),
                  percentile(times, 0.9), rss / 1024, len(times)))
        print("         libraries: %s" % " ".join(libraries))


if __name__ == "__main__":
    main()
