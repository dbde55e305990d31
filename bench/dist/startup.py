"""Issue 32: a static binary (the Swift runtime linked in: `make dist`) against a dynamic one
(`swift build -c release`, libswiftCore & co. loaded from the toolchain): time from exec to the
hub's `listening` line, and resident memory at idle (1 s after that line, no client).

    python3 bench/dist/startup.py --binary static=dist/stage/bin/pushhub \
        --binary dynamic=/tmp/pushhub-dynamic [--runs 30]

Each run starts a fresh hub (new data dir: admin.token and jwt.secret are made, the journal is
empty) on free loopback ports, 2 loops, and stops it with SIGTERM; runs of the binaries alternate
so that both see the same machine. Prints min/median/p90 start time and median RSS per binary,
plus each file's size and its libraries (ldd)."""
import argparse
import json
import os
import shutil
import signal
import statistics
import subprocess
import tempfile
import time


def start_once(binary):
    data = tempfile.mkdtemp(prefix="pushhub-startup-")
    log_path = os.path.join(data, "hub.log")
    with open(log_path, "w") as log:
        began = time.perf_counter()
        process = subprocess.Popen(
            [binary, "--listen", "127.0.0.1:0", "--admin", "127.0.0.1:0", "--data", os.path.join(data, "data"),
             "--loops", "2"], stderr=log, stdout=subprocess.DEVNULL)
        listening = None
        with open(log_path) as reader:
            buffer = ""
            while listening is None:
                chunk = reader.read()
                if chunk:
                    buffer += chunk
                    for line in buffer.splitlines():
                        if line.startswith("{") and json.loads(line).get("msg") == "listening":
                            listening = time.perf_counter() - began
                            break
                    continue
                if process.poll() is not None:
                    raise SystemExit("%s exited: %s" % (binary, open(log_path).read()))
                if time.perf_counter() - began > 20:
                    raise SystemExit("%s did not listen within 20 s" % binary)
                time.sleep(0.0005)
    time.sleep(1.0)
    rss_kib = next(int(line.split()[1]) for line in open("/proc/%d/status" % process.pid)
                   if line.startswith("VmRSS:"))
    process.send_signal(signal.SIGTERM)
    process.wait(timeout=20)
    shutil.rmtree(data, ignore_errors=True)
    return listening, rss_kib


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--binary", action="append", required=True, help="NAME=PATH")
    parser.add_argument("--runs", type=int, default=30)
    arguments = parser.parse_args()
    binaries = [entry.split("=", 1) for entry in arguments.binary]
    results = {name: [] for name, _ in binaries}
    for _ in range(arguments.runs):
        for name, path in binaries:
            results[name].append(start_once(path))
    for name, path in binaries:
        times = sorted(t * 1000 for t, _ in results[name])
        rss = statistics.median(r for _, r in results[name])
        libraries = subprocess.run(["ldd", path], capture_output=True, text=True).stdout.split("\n")
        libraries = sorted(line.split()[0] for line in libraries if line.strip() and "vdso" not in line)
        print("%-8s size %6.1f MiB  start to listening: min %.1f ms, median %.1f ms, p90 %.1f ms  "
              "idle RSS median %.1f MiB  (%d runs)" % (
                  name, os.path.getsize(path) / 1048576, times[0], statistics.median(times),
                  times[int(len(times) * 0.9) - 1], rss / 1024, len(times)))
        print("         libraries: %s" % " ".join(libraries))


if __name__ == "__main__":
    main()
