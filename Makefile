# PushHub — `make run` starts a hub on its embedded defaults; `make test` runs every test.
# Both install what they need on a fresh Debian machine (libssl-dev, a Python venv in .venv/,
# the Autobahn|Testsuite in .autobahn/).

SWIFT ?= swift
BIN_DEBUG := .build/debug
BIN_RELEASE := .build/release

# make dist and its checks (mk/dist.mk: static binaries, tarball, .deb; mk/oci.mk: the OCI image),
# the Grafana dashboard and Prometheus rules' checks (mk/observe.mk).
include mk/dist.mk mk/oci.mk mk/observe.mk

.PHONY: run test build release deps venv deploy-tools node go redis nghttp2 unit e2e js-client conformance conformance-full bench bench-loadgen bench-scaleout bench-wss bench-restart bench-results bench-releases bench-components bench-components-validate bench-push bench-webhooks bench-tokens tsan asan fuzz soak chaos clean

# OpenSSL's headers and library (the hub links them) and its command line (the TLS tests make
# their certificates with `openssl req`); zlib's headers (permessage-deflate).
deps:
	@pkg-config --exists openssl 2>/dev/null || { \
	  echo "installing libssl-dev"; apt-get update -qq && apt-get install -y -qq libssl-dev pkg-config; }
	@command -v openssl >/dev/null 2>&1 || { \
	  echo "installing openssl"; apt-get update -qq && apt-get install -y -qq openssl; }
	@pkg-config --exists zlib 2>/dev/null || { \
	  echo "installing zlib1g-dev (permessage-deflate)"; apt-get update -qq && apt-get install -y -qq zlib1g-dev; }

venv:
	@bash scripts/ensure-python-venv.sh

build: deps
	$(SWIFT) build

release: deps
	$(SWIFT) build -c release

run: release
	$(BIN_RELEASE)/pushhub --dev --echo-path /v1/echo

# A real redis-server, redis-cli and redis-sentinel (Debian's packages) for the Redis link and
# scale-out tests (DESIGN §11); the tests start their own servers on free loopback ports.
redis:
	@{ command -v redis-server && command -v redis-cli && command -v redis-sentinel; } >/dev/null 2>&1 || { \
	  echo "installing redis-server, redis-sentinel, redis-tools"; apt-get update -qq && \
	  apt-get install -y -qq redis-server redis-sentinel redis-tools; }

# Debian's nghttpd (nghttp2-server), the HTTP/2 server the push link's tests talk to over TLS
# with ALPN h2 (Tests/PushHubTests/HTTP2LinkTests.swift); they start their own on free ports.
nghttp2:
	@{ command -v nghttpd || [ -x /usr/sbin/nghttpd ]; } >/dev/null 2>&1 || { \
	  echo "installing nghttp2-server (nghttpd)"; apt-get update -qq && apt-get install -y -qq nghttp2-server; }

# The regex tests check our `pattern` subset against node's RegExp (ECMA-262). The HTTP/2 link's
# tests need nghttpd and the venv's `h2` (a scripted server for GOAWAY and REFUSED_STREAM).
unit: build redis node nghttp2 venv
	$(SWIFT) test

node:
	@command -v node >/dev/null 2>&1 || { echo "installing nodejs (the JavaScript tests, the pattern tests)"; \
	  apt-get update -qq && apt-get install -y -qq nodejs; }

# Debian's Go (golang-go: 1.19 on bookworm), to run the Go signature recipe of docs/integrations.md
# as printed (Tests/EndToEnd/test_webhook_recipes.py; node runs the JavaScript one).
go:
	@command -v go >/dev/null 2>&1 || { echo "installing golang-go (the webhook signature recipes)"; \
	  apt-get update -qq && apt-get install -y -qq golang-go; }

# What the end-to-end tests need besides Python: Debian's nginx, strace and systemd-analyze
# (deploy/) and headless chromium (the JavaScript client in a browser); node is `node`.
deploy-tools:
	@command -v nginx >/dev/null 2>&1 || [ -x /usr/sbin/nginx ] || { echo "installing nginx, strace"; \
	  apt-get update -qq && apt-get install -y -qq nginx strace openssl; }
	@command -v systemd-analyze >/dev/null 2>&1 || apt-get install -y -qq systemd
	@command -v chromium >/dev/null 2>&1 || { echo "installing chromium (the JavaScript client's tests)"; \
	  apt-get update -qq && apt-get install -y -qq chromium; }

e2e: build venv deploy-tools node redis java go prometheus-tools
	.venv/bin/python -m pytest -q Tests/EndToEnd

# The one-file JavaScript client as a file, clients/js/pushhub-client.js (not tracked), from its
# modules in clients/js/src/: the same bundle the hub's build embeds and serves at /v1/client.js.
js-client:
	sh clients/js/bundle.sh --write

# The Java client (clients/java/, DESIGN §12): build/pushhub-client.jar (no dependencies) and
# build/pushhub-client-okhttp.jar (the Android transport, compiled against Debian's
# libokhttp-java so it cannot rot); `java-test` runs its unit tests (our own TestRunner). The JDK
# is Debian's openjdk-17-jdk-headless, building Java 11 bytecode (`javac --release 11`).
.PHONY: java java-test java-deps bench-java
java-deps:
	@command -v javac >/dev/null 2>&1 || { echo "installing openjdk-17-jdk-headless (the Java client)"; \
	  apt-get update -qq && apt-get install -y -qq openjdk-17-jdk-headless; }
	@{ [ -f /usr/share/java/okhttp.jar ] && [ -f /usr/share/java/okio.jar ]; } || { \
	  echo "installing libokhttp-java (the Java client's OkHttp transport)"; \
	  apt-get update -qq && apt-get install -y -qq libokhttp-java; }

java: java-deps
	sh clients/java/build.sh jar

java-test: java-deps
	sh clients/java/build.sh test

# The Java client's patch apply + hash check on the 10,001-node screen (bench/README.md "Java client").
bench-java: java-deps
	rm -rf clients/java/build/bench && mkdir -p clients/java/build/bench
	javac --release 11 -d clients/java/build/bench clients/java/src/io/pushhub/client/*.java clients/java/bench/PatchBench.java
	java -cp clients/java/build/bench io.pushhub.client.PatchBench 5000

# Autobahn|Testsuite on both sides: groups 1-10 and most of 12-13 (permessage-deflate) here;
# conformance-full adds the slow 12.2, 12.3 and 12.5 (~20 minutes). Tests/Conformance/run-autobahn.sh.
conformance: build
	bash Tests/Conformance/run-autobahn.sh $(BIN_DEBUG) both quick

conformance-full: build
	bash Tests/Conformance/run-autobahn.sh $(BIN_DEBUG) both full

test: unit java-test e2e conformance dist-check oci-check

# The Swift test suite under ThreadSanitizer (its own build folder: every object is instrumented).
tsan: deps redis
	$(SWIFT) test --sanitize=thread --scratch-path .build-tsan

# The same under AddressSanitizer, LeakSanitizer included (the toolchain's own leaks are listed in
# scripts/lsan-suppressions.txt). No `ubsan`: swiftc 6.3 refuses -sanitize=undefined on Linux, and
# the package compiles no C of its own (COpenSSL, CLinux are system headers); Swift traps on
# overflow and out-of-bounds access itself, and debug builds check exclusivity.
asan: deps redis
	LSAN_OPTIONS=suppressions=$(CURDIR)/scripts/lsan-suppressions.txt \
	  $(SWIFT) test --sanitize=address --scratch-path .build-asan

# libFuzzer on every parser (Fuzz/FuzzTargets): FUZZ_RUNS (default 10,000,000) executions or
# FUZZ_SECONDS seconds per target; prints executions, exec/s and coverage. scripts/fuzz.sh.
fuzz: deps
	bash scripts/fuzz.sh

# Issue 9's soak (30 minutes of mixed load and bad input; RSS, descriptors, loop lag sampled each
# second) and chaos (kill -9 / restart under load, every acknowledged mutation checked) runs:
# bench/soak/README.md. Not part of `make test`.
soak: deps
	bash bench/soak/run.sh soak

chaos: deps
	bash bench/soak/run.sh chaos

bench: release
	$(BIN_RELEASE)/ws-bench

# Issue 8's comparison set: the C load generator against this hub and the bare C server
# (../shared/bench-reference); UWS_PYTHON=... adds uWebSockets. Figures: bench/README.md.
bench-loadgen: release
	bash bench/loadgen/run.sh

# Issue 12: publish → delivery latency across hubs scaled out over Redis, then 3 hubs × 19,000
# clients (its own redis-server, hubs and load generators). Figures: bench/README.md "Scale-out".
bench-scaleout: release venv redis
	.venv/bin/python bench/scaleout/latency.py --subs 5
	bash bench/scaleout/fanout.sh

# Issue 24: a rolling restart — 19,000 clients resume with have/last_sync on a restarted hub:
# time until all are current, snapshot bytes, hub CPU per resume vs a plain connect. Its own
# release build (.build-resume) and hub on loopback. Figures: bench/README.md "Rolling restart".
bench-restart: deps
	$(SWIFT) build -c release --product pushhub --scratch-path .build-resume
	bash bench/restart/run.sh

# Issue 24 item 1: wss:// connects per second (TCP + TLS + upgrade + hello → welcome) with 1,000
# connections held, websockets sync clients in parallel; its own release build. bench/README.md.
bench-wss: deps venv
	$(SWIFT) build -c release --product pushhub --scratch-path .build-wss
	PUSHHUB=.build-wss/release/pushhub .venv/bin/python bench/wss/connects.py

# Issue 26: an experiment's results with 1,000,000 units (memory, GET …/results, the rebuild at
# start; data dir and Redis), then track messages per second per core and their cost to the
# fan-out's p99 (C load generator). Its own hubs and redis-server. bench/README.md "Experiment results".
bench-results: release venv redis
	.venv/bin/python bench/results/run.py
	bash bench/results/track.sh

# Issue 27: releases — from the render error that trips a release's guard to every exposed client
# holding the base tree again (one hub, then three over Redis), and what a release costs the
# clients it does not expose (fan-out figures beside a plain publish). 10,000 signed-in clients
# (C load generator driven by the script); its own hubs and redis-server. bench/README.md "Releases".
bench-releases: release venv redis
	.venv/bin/python bench/releases/run.py

# Issue 28: components — a publish's fan-out to 10,000 clients that render different sets of
# components (one build; four builds; a realistic mix of 20 app versions with profiles and
# declarations; 200 app versions): deliveries/s, renditions, renders and encodes per publish
# (/metrics), hub CPU per delivery. C load generator driven by the script; its own hubs.
# bench/README.md "Components (issue 28)".
bench-components: release venv
	.venv/bin/python bench/components/run.py

# Issue 28: validating a 10,001-node screen against 20 registered component schemas (DESIGN §16),
# in process: what the check costs a publish. Release build of the bench alone. bench/README.md
# "Component validation".
bench-components-validate: deps
	$(SWIFT) build -c release --product components-bench
	$(BIN_RELEASE)/components-bench

# Issue 30: silent pushes — N devices (100,000) registered over WebSocket sessions, then one sync
# pushes them all through the hub's HTTP/2 client to nghttpd (Debian's nghttp2-server, TLS, on
# loopback): pushes/s over one connection, hub CPU per push, the queue's memory, and socket
# deliveries' p50/p99 meanwhile; APNs alone, then APNs + FCM. BENCH_PUSH_ARGS="--devices 5000" for a
# quick run. bench/README.md "Push (APNs/FCM)".
bench-push: release venv nghttp2
	@command -v curl >/dev/null 2>&1 || { echo "installing curl (checks nghttpd)"; \
	  apt-get update -qq && apt-get install -y -qq curl; }
	.venv/bin/python bench/push/run.py $(BENCH_PUSH_ARGS)

# Issue 31: webhooks — events/s one hub delivers to a local keep-alive receiver (many subjects:
# screen publishes and syncs; one subject: serial by the order rule), the delay from an event to its
# delivery at a steady rate (p50/p99), hub CPU per delivery, pushhub_webhook_delivery_seconds. The
# receiver's own ceiling is measured with h2load (Debian's nghttp2-client). BENCH_WEBHOOKS_ARGS="--events
# 2000" for a quick run. bench/README.md "Webhooks".
bench-webhooks: release venv
	@command -v h2load >/dev/null 2>&1 || { echo "installing nghttp2-client (h2load: the receiver's ceiling)"; \
	  apt-get update -qq && apt-get install -y -qq nghttp2-client; }
	.venv/bin/python bench/webhooks/run.py $(BENCH_WEBHOOKS_ARGS)

# Issue 31: client tokens per algorithm — hello round trips per second (and hub CPU per hello, so
# per core) with HS256, RS256 (2048), ES256 and EdDSA tokens minted by PyJWT, against HS256 and
# anonymous hellos (C load generator, one hub loop), and raw verifications per second on one core
# (tokens-bench, bench/tokens/verify) beside `openssl speed`. bench/README.md "Token verification".
bench-tokens: release venv
	$(MAKE) -C bench/loadgen loadgen
	.venv/bin/python bench/tokens/run.py $(BENCH_TOKENS_ARGS)

clean:
	rm -rf .build .build-tsan .build-asan .build-fuzz .build-dist dist .venv .autobahn
