"""Publish → delivery latency across hubs scaled out over Redis (issue 12, "Measured"): how much a
subscriber on another hub waits beyond one on the hub that took the publish, and both against
one hub with its data-dir journal (no Redis).

Starts its own redis-server (appendonly yes, appendfsync always: docs/scale-out.md "Durability")
and release hubs on loopback, SUBS subscribers per hub (Python websockets, one process per hub;
they only time arrivals), then PUBLISHES publishes through hub A's admin API, paced at RATE per second, each
changing one leaf. A delivery's latency is its arrival minus the moment the PUT was sent.

    .venv/bin/python bench/scaleout/latency.py [--subs 50] [--publishes 300] [--rate 20]

Prints one line per set of subscribers: p50, p99 and max in ms, and the count.
"""
import argparse
import asyncio
import http.client
import json
import multiprocessing
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time

import websockets

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
PUSHHUB = os.environ.get("PUSHHUB", os.path.join(ROOT, ".build", "release", "pushhub"))
TOKEN = "bench-admin-token-0123456789abcdef"


def free_port():
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def start_redis(folder):
    port = free_port()
    process = subprocess.Popen(
        ["redis-server", "--port", str(port), "--bind", "127.0.0.1", "--dir", folder, "--save", "",
         "--appendonly", "yes", "--appendfsync", "always", "--logfile", os.path.join(folder, "redis.log")],
        stdout=subprocess.DEVNULL)
    for _ in range(200):
        if subprocess.run(["redis-cli", "-p", str(port), "PING"], capture_output=True, text=True).stdout.strip() == "PONG":
            return process, port
        time.sleep(0.02)
    raise SystemExit("redis-server did not start")


def start_hub(folder, *flags):
    data = os.path.join(folder, "data")
    os.makedirs(data)
    for name, value in (("admin.token", TOKEN), ("jwt.secret", "bench-secret-0123456789abcdef")):
        with open(os.path.join(data, name), "w") as file:
            file.write(value)
        os.chmod(os.path.join(data, name), 0o600)
    log = os.path.join(folder, "hub.log")
    process = subprocess.Popen([PUSHHUB, "--listen", "127.0.0.1:0", "--admin", "127.0.0.1:0", "--data", data,
                                "--allow-anonymous", *flags],
                               stderr=open(log, "w"))
    for _ in range(500):
        for line in open(log):
            entry = json.loads(line)
            if entry.get("msg") == "listening":
                return process, int(entry["client"].rsplit(":", 1)[1]), int(entry["admin"].rsplit(":", 1)[1])
        time.sleep(0.02)
    raise SystemExit("pushhub did not start: " + open(log).read())


def tree(n):
    return {"n": n, "rows": [{"id": "r%d" % i, "text": "row %d" % i} for i in range(30)]}


async def subscriber(port, device, arrivals, ready):
    async with websockets.connect("ws://127.0.0.1:%d/v1/connect" % port, max_queue=None) as ws:
        await ws.send(json.dumps({"type": "hello", "protocol": 1, "device": device,
                                  "app": {"platform": "ios", "version": "6.0.0"}}))
        await ws.recv()
        await ws.send(json.dumps({"type": "subscribe", "screen": "bench"}))
        await ws.recv()
        ready.set_result(None)
        async for raw in ws:
            now = time.perf_counter()  # CLOCK_MONOTONIC: comparable across processes
            message = json.loads(raw)
            if message["type"] in ("patch", "snapshot"):
                arrivals.append((message["version"], now))


def subscribers_process(port, label, subs, connection):
    """One process per hub's subscribers, so that one hub's deliveries never wait for Python to
    handle another's: it says "ready", then sends its arrivals when told to stop."""

    async def run():
        arrivals = []
        loop = asyncio.get_running_loop()
        waits = [loop.create_future() for _ in range(subs)]
        tasks = [asyncio.create_task(subscriber(port, "%s-%d" % (label, n), arrivals, waits[n])) for n in range(subs)]
        await asyncio.wait_for(asyncio.gather(*waits), 30)
        connection.send("ready")
        await asyncio.to_thread(connection.recv)
        for task in tasks:
            task.cancel()
        connection.send(arrivals)

    asyncio.run(run())


def percentile(values, fraction):
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(fraction * len(ordered)))]


def measure(publish_admin, hubs, subs, publishes, rate):
    """hubs: [(label, client port)]; returns {label: [latency ms]}."""
    children = {}
    for label, port in hubs:
        mine, theirs = multiprocessing.Pipe()
        process = multiprocessing.Process(target=subscribers_process, args=(port, label, subs, theirs))
        process.start()
        children[label] = (process, mine)
    for _, (process, pipe) in children.items():
        assert pipe.recv() == "ready"
    connection = http.client.HTTPConnection("127.0.0.1", publish_admin, timeout=10)
    headers = {"Authorization": "Bearer " + TOKEN, "Content-Type": "application/json"}
    sent = {}
    for n in range(1, publishes + 1):
        body = json.dumps(tree(n))
        started = time.perf_counter()
        connection.request("PUT", "/v1/screens/bench", body, headers)
        answer = json.loads(connection.getresponse().read())
        sent[answer["version"]] = started
        time.sleep(max(0.0, 1.0 / rate - (time.perf_counter() - started)))
    time.sleep(1.0)
    latencies = {}
    for label, (process, pipe) in children.items():
        pipe.send("stop")
        got = pipe.recv()
        process.join()
        latencies[label] = [(at - sent[version]) * 1000 for version, at in got if version in sent]
    return latencies


def report(label, values, expected):
    print("%-34s p50 %6.2f ms   p99 %6.2f ms   max %6.2f ms   (%d of %d deliveries)" % (
        label, percentile(values, 0.5), percentile(values, 0.99), max(values), len(values), expected), flush=True)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--subs", type=int, default=50)
    parser.add_argument("--publishes", type=int, default=300)
    parser.add_argument("--rate", type=float, default=20)
    options = parser.parse_args()
    folder = tempfile.mkdtemp(prefix="pushhub-latency-")
    processes = []
    try:
        # One hub, data-dir journal (fsync per group commit).
        hub, port, admin = start_hub(os.path.join(folder, "single"))
        processes.append(hub)
        seed = http.client.HTTPConnection("127.0.0.1", admin, timeout=10)
        seed.request("PUT", "/v1/screens/bench", json.dumps(tree(0)), {"Authorization": "Bearer " + TOKEN})
        seed.getresponse().read()
        single = measure(admin, [("single", port)], options.subs, options.publishes, options.rate)
        report("one hub, data-dir journal", single["single"], options.subs * options.publishes)
        hub.send_signal(signal.SIGTERM)
        hub.wait()

        os.makedirs(os.path.join(folder, "redis"))
        redis, redis_port = start_redis(os.path.join(folder, "redis"))
        processes.append(redis)
        url = "redis://127.0.0.1:%d" % redis_port
        a, port_a, admin_a = start_hub(os.path.join(folder, "a"), "--redis", url)
        b, port_b, _ = start_hub(os.path.join(folder, "b"), "--redis", url)
        processes += [a, b]
        seed = http.client.HTTPConnection("127.0.0.1", admin_a, timeout=10)
        seed.request("PUT", "/v1/screens/bench", json.dumps(tree(0)), {"Authorization": "Bearer " + TOKEN})
        seed.getresponse().read()
        time.sleep(1.5)  # hub B applies version 1 (a notice, or its 1 s poll)
        two = measure(admin_a, [("A", port_a), ("B", port_b)], options.subs, options.publishes, options.rate)
        report("Redis: subscribers on hub A", two["A"], options.subs * options.publishes)
        report("Redis: subscribers on hub B", two["B"], options.subs * options.publishes)
        print("added by another hub: p50 %+.2f ms, p99 %+.2f ms" % (
            percentile(two["B"], 0.5) - percentile(two["A"], 0.5),
            percentile(two["B"], 0.99) - percentile(two["A"], 0.99)))
    finally:
        for process in processes:
            if process.poll() is None:
                process.kill()
        shutil.rmtree(folder, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
