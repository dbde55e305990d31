"""wss:// connects per second with 1,000 connections held (issue 24, item 1, "Measured").

Starts a release hub with TLS (a self-signed RSA-2048 certificate made by `openssl req`, as the
tests make theirs) on loopback, opens HOLD wss connections that stay open (Python `websockets`
asyncio, 50 at a time, in their own process, which answers the hub's pings), then times CONNECTS
more connects made by CLIENTS processes in parallel, each one connect after another with the
`websockets` sync client (the stack that hung before the fix) and each new connection held too.
A connect is TCP + TLS + upgrade + hello → welcome; one that gets no welcome within --timeout
counts as timed out.

    .venv/bin/python bench/wss/connects.py [--pushhub PATH] [--loops 1] [--hold 1000]
                                          [--connects 2000] [--clients 4] [--timeout 5]

Prints connects/s (welcomed connects over the wall time from the first connect to the last
answer), p50/p99/max connect time, the count that timed out, the hub's CPU per connect and what
the hub holds at the end. Against the hub before the fix a client process may also crash (the
same race on one OpenSSL object can corrupt its memory): each is reported with its signal, and
the connects it did not make are left out of the figures.
"""
import argparse
import asyncio
import faulthandler
import json
import multiprocessing
import multiprocessing.connection
import os
import resource
import shutil
import signal
import ssl
import subprocess
import tempfile
import time
import urllib.request

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
PUSHHUB = os.environ.get("PUSHHUB", os.path.join(ROOT, ".build-wss", "release", "pushhub"))
TOKEN = "bench-admin-token-0123456789abcdef"


def make_certificate(folder):
    cert, key = os.path.join(folder, "hub.pem"), os.path.join(folder, "hub.key")
    subprocess.run(["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", key, "-out", cert,
                    "-days", "2", "-subj", "/CN=localhost", "-addext", "subjectAltName=DNS:localhost,IP:127.0.0.1"],
                   check=True, capture_output=True)
    return cert, key


def start_hub(pushhub, folder, cert, key, loops):
    data = os.path.join(folder, "data")
    os.makedirs(data)
    with open(os.path.join(data, "admin.token"), "w") as file:
        file.write(TOKEN)
    os.chmod(os.path.join(data, "admin.token"), 0o600)
    log = os.path.join(folder, "hub.log")
    process = subprocess.Popen([pushhub, "--listen", "127.0.0.1:0", "--admin", "127.0.0.1:0", "--data", data,
                                "--allow-anonymous", "--loops", str(loops), "--tls-cert", cert, "--tls-key", key],
                               stderr=open(log, "w"))
    for _ in range(500):
        for line in open(log):
            entry = json.loads(line)
            if entry.get("msg") == "listening":
                return process, int(entry["client"].rsplit(":", 1)[1]), int(entry["admin"].rsplit(":", 1)[1])
        if process.poll() is not None:
            break
        time.sleep(0.02)
    raise SystemExit("pushhub did not start: " + open(log).read())


def stats(admin_port):
    request = urllib.request.Request("http://127.0.0.1:%d/v1/stats" % admin_port,
                                     headers={"Authorization": "Bearer " + TOKEN})
    with urllib.request.urlopen(request, timeout=10) as answer:
        return json.load(answer)


def cpu_seconds(pid):
    fields = open("/proc/%d/stat" % pid).read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def hello(device):
    return json.dumps({"type": "hello", "protocol": 1, "device": device})


def holder(url, cert, count, timeout, report):
    """Opens `count` connections (50 at a time), reports (welcomed, failures), then keeps its
    loop running (it answers the hub's pings) until it is terminated."""
    from websockets.asyncio.client import connect

    async def run():
        context = ssl.create_default_context(cafile=cert)
        limit, held, failures = asyncio.Semaphore(50), [], []

        async def one(i):
            async with limit:
                try:
                    ws = await connect(url, ssl=context, open_timeout=timeout, subprotocols=["pushhub.v1"])
                    await ws.send(hello("held-%d" % i))
                    assert json.loads(await asyncio.wait_for(ws.recv(), timeout))["type"] == "welcome"
                    held.append(ws)
                except Exception as error:
                    failures.append(repr(error))

        await asyncio.gather(*(one(i) for i in range(count)))
        report.send((len(held), failures))
        await asyncio.Event().wait()

    asyncio.run(run())


def client(number, url, cert, count, timeout, start, report):
    """`count` connects one after another with the websockets sync client, each held; sends
    (start, end, seconds or None, error) per connect, in CLOCK_MONOTONIC (one clock for every
    process), then "done", and holds them until it is terminated."""
    faulthandler.enable()  # a client that crashes (the race item 1 was about) prints its threads
    from websockets.sync.client import connect
    context = ssl.create_default_context(cafile=cert)
    held = []
    start.wait()  # every client and the parent, once each is ready
    for i in range(count):
        began = time.monotonic()
        try:
            ws = connect(url, ssl=context, open_timeout=timeout, subprotocols=["pushhub.v1"])
            held.append(ws)
            ws.send(hello("bench-%d-%d" % (number, i)))
            assert json.loads(ws.recv(timeout=timeout))["type"] == "welcome"
            ended = time.monotonic()
            report.send((began, ended, ended - began, None))
        except Exception as error:
            report.send((began, time.monotonic(), None, repr(error)))
    report.send("done")
    signal.pause()


def collect(clients, deadline):
    """Every client's reports until each says "done" or dies: (results, {number: (exit code,
    connects it reported, of which welcomed)})."""
    results, crashed = [], {}
    reported = {number: 0 for number in clients}  # connects reported
    welcomed = {number: 0 for number in clients}
    pending = dict(clients)
    while pending:
        left = deadline - time.monotonic()
        if left <= 0:
            raise SystemExit("clients %s still connecting at the deadline" % sorted(pending))
        ready = multiprocessing.connection.wait([receive for receive, _ in pending.values()], timeout=left)
        for number, (receive, process) in list(pending.items()):
            if receive not in ready:
                continue
            try:
                message = receive.recv()
            except EOFError:  # it died: its end of the pipe closed
                process.join(10)
                crashed[number] = (process.exitcode, reported[number], welcomed[number])
                del pending[number]
                continue
            if message == "done":
                del pending[number]
            else:
                results.append(message)
                reported[number] += 1
                welcomed[number] += message[2] is not None
    return results, crashed


def percentile(sorted_values, fraction):
    return sorted_values[min(len(sorted_values) - 1, int(len(sorted_values) * fraction))]


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--pushhub", default=PUSHHUB, help="the hub binary (default %(default)s; env PUSHHUB)")
    parser.add_argument("--loops", type=int, default=1, help="hub event loops (default 1: the generator needs a core)")
    parser.add_argument("--hold", type=int, default=1000, help="connections held before the measured connects")
    parser.add_argument("--connects", type=int, default=2000, help="measured connects, all clients together")
    parser.add_argument("--clients", type=int, default=4, help="client processes connecting in parallel")
    parser.add_argument("--timeout", type=float, default=5.0,
                        help="seconds a connect may take before it counts as timed out (default 5)")
    options = parser.parse_args()

    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    need = 2 * (options.hold + options.connects) + 1000  # the hub's sockets; children inherit the limit
    if soft < need:
        resource.setrlimit(resource.RLIMIT_NOFILE, (min(hard, max(need, soft)), hard))
    folder = tempfile.mkdtemp(prefix="pushhub-bench-wss-")
    cert, key = make_certificate(folder)
    hub, port, admin_port = start_hub(options.pushhub, folder, cert, key, options.loops)
    url = "wss://127.0.0.1:%d/v1/connect" % port
    processes = []
    share = [options.connects // options.clients + (1 if n < options.connects % options.clients else 0)
             for n in range(options.clients)]
    start = multiprocessing.Barrier(len(share) + 1)
    try:
        began = time.monotonic()
        receive, send = multiprocessing.Pipe(duplex=False)
        keeper = multiprocessing.Process(target=holder, args=(url, cert, options.hold, options.timeout, send))
        keeper.start()
        processes.append(keeper)
        if not receive.poll(options.hold * options.timeout + 60):
            raise SystemExit("the held connections did not open")
        held, failures = receive.recv()
        print("hub %s (--loops %d), %d wss connections held (websockets asyncio, 50 at a time, %.1f s; %d failed%s)" % (
            options.pushhub, options.loops, held, time.monotonic() - began, len(failures),
            ": " + failures[0] if failures else ""))

        clients = {}
        for number, count in enumerate(share):
            receive, send = multiprocessing.Pipe(duplex=False)
            process = multiprocessing.Process(target=client,
                                              args=(number, url, cert, count, options.timeout, start, send))
            process.start()
            send.close()  # the client's is then the only sending end: its death reads as EOF here
            processes.append(process)
            clients[number] = (receive, process)
        cpu_before = cpu_seconds(hub.pid)
        start.wait(60)
        results, crashed = collect(clients, time.monotonic() + options.connects * options.timeout + 60)
        cpu = cpu_seconds(hub.pid) - cpu_before
        if not results:
            raise SystemExit("no client reported a connect (crashed: %r)" % crashed)
        wall = max(r[1] for r in results) - min(r[0] for r in results)
        times = sorted(r[2] for r in results if r[2] is not None)
        timed_out = [r for r in results if r[3] is not None and "TimeoutError" in r[3]]
        other = [r for r in results if r[3] is not None and "TimeoutError" not in r[3]]
        print("measured: %d connects by %d websockets sync clients in parallel, %.2f s" % (
            len(results), options.clients, wall))
        if times:
            print("connects/s %.0f   p50 %.1f ms   p99 %.1f ms   max %.1f ms" % (
                len(times) / wall, percentile(times, 0.5) * 1e3, percentile(times, 0.99) * 1e3, times[-1] * 1e3))
        print("timed out %d of %d (no welcome within %.0f s); other failures %d%s" % (
            len(timed_out), len(results), options.timeout, len(other), (": " + other[0][3]) if other else ""))
        for number, (code, made, _) in sorted(crashed.items()):
            print("client %d died (%s) after %d connects; its other %d were not made" % (
                number, "signal %d" % -code if code is not None and code < 0 else "exit %r" % code, made,
                share[number] - made))
        print("hub CPU %.2f ms per welcomed connect" % (cpu * 1e3 / max(1, len(times))))
        # The connections of a client that died are closed by the kernel: the hub should drop them.
        expected = held + sum(1 for r in results if r[2] is not None) - sum(
            welcomed for _, _, welcomed in crashed.values())
        deadline = time.monotonic() + 5
        while (answer := stats(admin_port))["websocket_connections"] != expected and time.monotonic() < deadline:
            time.sleep(0.1)
        print("held at the end: hub counts %d WebSocket connections, %d sessions (the clients hold %d)" % (
            answer["websocket_connections"], answer["sessions"], expected))
    finally:
        for process in processes:
            process.terminate()
        hub.terminate()
        hub.wait(timeout=15)
        for process in processes:
            process.join(10)
        shutil.rmtree(folder, ignore_errors=True)


if __name__ == "__main__":
    main()
