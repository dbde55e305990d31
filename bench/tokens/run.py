"""Client-token verification per algorithm (issue 31, DESIGN §18), measured on loopback: hello
round trips per second with tokens signed HS256, RS256 (2048-bit), ES256 and EdDSA (Ed25519),
against HS256 and against anonymous hellos, and the raw verifications per second in a loop.

    .venv/bin/python bench/tokens/run.py [--n 5000] [--inflight 100] [--runs 2] [--seconds 1]
                                         [--perf PREFIX] [--keep]

- Keys and tokens: an RSA 2048, a P-256 and an Ed25519 key pair made with `cryptography`, their
  public halves written as PEM for the hub (`--jwt-public-key`, one per algorithm, no kid) and an
  HS256 secret (the data dir's `jwt.secret`); `--n` tokens per algorithm minted with PyJWT, token
  i for user u<i>, expiring in an hour (the hub requires `exp`).
- **verify**: `tokens-bench` (bench/tokens/verify, a release executable on the hub's `JWTVerifier`,
  holding the same four keys) verifies the first 1,000 tokens of each algorithm in a loop for
  `--seconds` on one core: verifications/s and µs each (split, base64url, both JSON parts, the
  signature through OpenSSL, exp). `openssl speed` of the same primitives is printed beside it
  as a yardstick (the library's own verify rate, no JWT around it).
- **hello**: one release hub (`--loops 1`: one client loop, so its CPU is one core's) with the
  four keys and `--allow-anonymous`; `bench/loadgen/loadgen connect` (C, one epoll thread) opens
  `--n` connections, `--inflight` at a time, each TCP connect → upgrade → hello with its token →
  welcome, held until the last is welcomed: connects/s, p50/p99 of one, the hub's CPU per connect
  (/proc/PID/stat, all threads) — so hellos per second per core = 10⁶ ÷ µs per connect — and the
  generator's own CPU. Per algorithm in turn (and anonymous hellos, no token), `--runs` times,
  interleaved; the hub's `pushhub_jwt_refused_total` must stay 0.

The hub and the generator share the machine (2 cores here): the connects/s are bounded by both;
the CPU per connect is the hub's own. Every wait is bounded; processes are stopped on exit and
the work folder removed (unless `--keep`).
"""
import argparse
import os
import re
import secrets
import shutil
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.abspath(os.path.join(HERE, "..", ".."))
sys.path.insert(0, os.path.join(ROOT, "bench", "lib"))
from benchlib import (  # noqa: E402 (bench/lib is found through ROOT)
    SecretsHub, add_quiet_arguments, record, say, stop_recording, wait_quiet, work_folder)

import jwt  # noqa: E402 (PyJWT, from Tests/requirements.txt)
from cryptography.hazmat.primitives import serialization  # noqa: E402
from cryptography.hazmat.primitives.asymmetric import ec, ed25519, rsa  # noqa: E402

RELEASE = os.path.join(ROOT, ".build", "release")
PUSHHUB = os.environ.get("PUSHHUB", os.path.join(RELEASE, "pushhub"))
TOKENS_BENCH = os.environ.get("TOKENS_BENCH", os.path.join(RELEASE, "tokens-bench"))
LOADGEN = os.path.join(ROOT, "bench", "loadgen", "loadgen")
ADMIN_TOKEN = "bench-admin-token-0123456789abcdef"
ALGORITHMS = ("hs256", "rs256", "es256", "eddsa")
PYJWT_NAME = {"hs256": "HS256", "rs256": "RS256", "es256": "ES256", "eddsa": "EdDSA"}
OPENSSL_SPEED = {"rs256": "rsa2048", "es256": "ecdsap256", "eddsa": "ed25519"}


def make_keys(folder):
    """{alg: private key (the HS256 secret as str)}; the public PEMs and the secret in `folder`."""
    keys = {"hs256": secrets.token_hex(32), "rs256": rsa.generate_private_key(public_exponent=65537, key_size=2048),
            "es256": ec.generate_private_key(ec.SECP256R1()), "eddsa": ed25519.Ed25519PrivateKey.generate()}
    with open(os.path.join(folder, "hs256.secret"), "w") as file:
        file.write(keys["hs256"] + "\n")
    for name in ALGORITHMS[1:]:
        with open(os.path.join(folder, name + ".pem"), "wb") as file:
            file.write(keys[name].public_key().public_bytes(
                serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo))
    return keys


def mint(folder, keys, n):
    """`n` tokens per algorithm in `folder`/tokens-<alg>.txt; returns the seconds PyJWT took for each."""
    took = {}
    exp = int(time.time()) + 3600
    for name in ALGORITHMS:
        t = time.perf_counter()
        tokens = [jwt.encode({"sub": "u%d" % i, "exp": exp}, keys[name], algorithm=PYJWT_NAME[name])
                  for i in range(n)]
        took[name] = time.perf_counter() - t
        with open(os.path.join(folder, "tokens-%s.txt" % name), "w") as file:
            file.write("\n".join(tokens) + "\n")
    return took


def openssl_speed():
    """{alg: verifies/s} from `openssl speed -seconds 1` (one core), or {} if it fails."""
    rates = {}
    for name, primitive in OPENSSL_SPEED.items():
        done = subprocess.run(["openssl", "speed", "-seconds", "1", primitive], capture_output=True, text=True)
        # The last line of its table: "... sign verify sign/s verify/s" (rsa, ecdsa), or for EdDSA
        # "... sign verify sign/s verify/s" too; the last number is verify/s.
        rows = [line for line in done.stdout.splitlines() if re.search(r"\d+\.\d+s\s+\d+\.\d+s", line)]
        if done.returncode == 0 and rows:
            rates[name] = float(rows[-1].split()[-1])
    return rates


def hello_run(hub, name, folder, args, perf=None):
    """One `loadgen connect` of `--n` hellos (tokens of `name`, or none: "anonymous") → figures;
    with `perf` (a file), the hub recorded meanwhile."""
    command = [LOADGEN, "connect", "--port", str(hub.port), "--n", str(args.n), "--inflight", str(args.inflight),
               "--pid", str(hub.pid), "--settle", "0", "--timeout", str(args.timeout), "--hello"]
    if name != "anonymous":
        command += ["--user-token-file", os.path.join(folder, "tokens-%s.txt" % name)]
    recorder = record(hub, perf)
    done = subprocess.run(command, capture_output=True, text=True, timeout=args.timeout + 30)
    stop_recording(recorder)
    line = done.stdout.strip()
    match = re.search(r": (\d+) clients, \d+ in flight: (\d+) connects/s \(([\d.]+) s; each p50 ([^,]+), p99 ([^)]+)\); "
                      r"server CPU ([\d.]+) µs/connect.*generator CPU ([\d.]+) µs/connect \((\d+)% of a core\); "
                      r"others (\d+)% CPU", line)
    if done.returncode or not match or int(match.group(1)) != args.n:
        raise SystemExit("loadgen connect (%s): exit %d: %s %s" % (name, done.returncode, line, done.stderr[-500:]))
    time.sleep(0.5)  # the hub closes the generator's connections
    return {"rate": float(match.group(2)), "p50": match.group(4), "p99": match.group(5),
            "cpu_us": float(match.group(6)), "generator_pct": int(match.group(8)), "others": int(match.group(9))}


def refused(hub):
    status, text = hub.text("/metrics")
    return sum(float(line.split()[-1]) for line in text.splitlines() if line.startswith("pushhub_jwt_refused_total{"))


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--n", type=int, default=5000, help="hellos per run (and tokens per algorithm)")
    parser.add_argument("--inflight", type=int, default=100, help="connections opening at once")
    parser.add_argument("--runs", type=int, default=2, help="hello runs per algorithm, interleaved")
    parser.add_argument("--seconds", type=float, default=1, help="length of each raw verification loop")
    parser.add_argument("--timeout", type=int, default=60, help="bound of each generator run, seconds")
    parser.add_argument("--perf", metavar="PREFIX", help="perf record -g the hub over each algorithm's first run "
                        "(PREFIX.<alg>; perf's own CPU counts in the hub's figures then)")
    add_quiet_arguments(parser)
    parser.set_defaults(quiet_wait=int(os.environ.get("QUIET_WAIT", 20)))
    args = parser.parse_args()
    for path, how in ((PUSHHUB, "swift build -c release"), (TOKENS_BENCH, "swift build -c release --product "
                      "tokens-bench"), (LOADGEN, "make -C bench/loadgen")):
        if not os.path.exists(path):
            raise SystemExit("no %s: build it first (%s)" % (path, how))

    with work_folder("pushhub-tokens-", args.keep) as folder:
        keys = make_keys(folder)
        took = mint(folder, keys, args.n)
        say("# %d tokens per algorithm minted with PyJWT %s: %s" % (args.n, jwt.__version__, ", ".join(
            "%s %.1f s" % (PYJWT_NAME[name], took[name]) for name in ALGORITHMS)))
        say(wait_quiet(args.quiet_pct, args.quiet_wait))

        done = subprocess.run([TOKENS_BENCH, folder, str(args.seconds)], capture_output=True, text=True)
        if done.returncode:
            raise SystemExit("tokens-bench: %s %s" % (done.stdout, done.stderr))
        for line in done.stdout.splitlines():
            say(line)
        speed = openssl_speed() if shutil.which("openssl") else {}
        if speed:
            say("openssl speed (one core, the primitive alone): " + ", ".join(
                "%s %.0f verify/s" % (OPENSSL_SPEED[name], speed[name]) for name in OPENSSL_SPEED if name in speed))

        flags = ["--allow-anonymous"]
        for name in ALGORITHMS[1:]:
            flags += ["--jwt-public-key", os.path.join(folder, name + ".pem")]
        hub = SecretsHub(PUSHHUB, folder, 1, ADMIN_TOKEN, keys["hs256"], *flags, timeout=args.timeout)
        say("# hub %s, pid %d, 1 loop; loadgen connect --n %d --inflight %d" % (PUSHHUB, hub.pid, args.n,
                                                                                args.inflight))
        results = {name: [] for name in ("anonymous",) + ALGORITHMS}
        for run in range(args.runs):
            for name in results:
                perf = "%s.%s" % (args.perf, name) if args.perf and run == 0 else None
                figures = hello_run(hub, name, folder, args, perf)
                results[name].append(figures)
                say("hello %s (run %d): %.0f hellos/s, each p50 %s, p99 %s; hub CPU %.1f µs per hello → %.0f per "
                    "second per core; generator %d%% of a core; others %d%%" % (
                        name, run + 1, figures["rate"], figures["p50"], figures["p99"], figures["cpu_us"],
                        1e6 / figures["cpu_us"], figures["generator_pct"], figures["others"]))
        base = min(f["cpu_us"] for f in results["hs256"])
        anonymous = min(f["cpu_us"] for f in results["anonymous"])
        for name in ALGORITHMS:
            cpu = min(f["cpu_us"] for f in results[name])
            say("summary %s: %.0f–%.0f hellos/s; hub %.1f µs per hello (best run) = %.0f per second per core, %.2f × "
                "HS256's; %+.1f µs over HS256, %+.1f µs over an anonymous hello" % (
                    name, min(f["rate"] for f in results[name]), max(f["rate"] for f in results[name]), cpu,
                    1e6 / cpu, base / cpu, cpu - base, cpu - anonymous))
        count = refused(hub)
        say("pushhub_jwt_refused_total: %d; hub warnings and errors: %s" % (
            count, ", ".join(hub.problems()[:2]) or "none"))
        if count:
            raise SystemExit("the hub refused %d tokens" % count)
        hub.stop()


if __name__ == "__main__":
    main()
