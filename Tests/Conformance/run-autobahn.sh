#!/usr/bin/env bash
# Runs the Autobahn|Testsuite against WSProtocol on both sides:
#   server: fuzzingclient against `pushhub --echo-path /echo` on a free loopback port;
#   client: fuzzingserver on loopback against ws-testee (WSProtocol's client side).
# Fails unless every case is OK, NON-STRICT or INFORMATIONAL (or listed in expected-failures.txt).
# With `both`, the two sides run at the same time (each is one busy Python process).
#
#   run-autobahn.sh BIN_DIR [server|client|both] [quick|full]
#
# quick (make test): groups 1-10, and of the permessage-deflate groups 12 and 13 every data set
#   (12.1-12.5) and every parameter combination (13.1-13.7) at the sizes 16 B to 8 KiB and
#   8 KiB in 256-byte fragments (cases .1-.6 and .11 of each): 84 cases, about a minute;
# full (make conformance-full): every case of groups 1-13 — sizes up to 128 KiB, a thousand
#   messages each, compressed by both sides: about 40 minutes on two cores.
# AUTOBAHN_CASES='["12.*"]' overrides either.
set -euo pipefail
cd "$(dirname "$0")/../.."
bin=${1:?usage: run-autobahn.sh BIN_DIR [server|client|both] [quick|full]}
which=${2:-both}
scope=${3:-quick}
here=Tests/Conformance
wstest=.autobahn/py27/bin/wstest
python27=.autobahn/py27/bin/python
work=$(mktemp -d /tmp/pushhub-autobahn.XXXXXX)
deflate_quick() {  # exact case ids: a pattern such as 12.*.1 would match 12.1.10 too
  local ids=() group size
  for group in 1 2 3 4 5; do for size in 1 2 3 4 5 6 11; do ids+=("\"12.$group.$size\""); done; done
  for group in 1 2 3 4 5 6 7; do for size in 1 2 3 4 5 6 11; do ids+=("\"13.$group.$size\""); done; done
  local IFS=,
  echo "${ids[*]}"
}
case $scope in
  quick) default_cases='["1.*","2.*","3.*","4.*","5.*","6.*","7.*","9.*","10.*",'"$(deflate_quick)"']' ;;
  full) default_cases='["1.*","2.*","3.*","4.*","5.*","6.*","7.*","9.*","10.*","12.*","13.*"]' ;;
  *) echo "scope is quick or full, not $scope"; exit 2 ;;
esac
cases=${AUTOBAHN_CASES:-$default_cases}
pids=()
cleanup() { for p in "${pids[@]:-}"; do kill "$p" 2>/dev/null || true; done; }
trap cleanup EXIT

bash scripts/ensure-autobahn.sh >/dev/null
expected=$("$python27" "$here/autobahn_cases.py" "$cases")

run_server() {
  "$bin/pushhub" --listen 127.0.0.1:0 --admin 127.0.0.1:0 --data "$work/data" --echo-path /echo --loops 2 \
    2>"$work/hub.log" &
  local hub_pid=$!
  for _ in $(seq 100); do grep -q '"listening"' "$work/hub.log" 2>/dev/null && break; sleep 0.1; done
  local port
  port=$(grep -o '"client":"[^"]*"' "$work/hub.log" | head -1 | sed 's/.*:\([0-9]*\)"$/\1/' || true)
  [ -n "$port" ] || { echo "pushhub did not start:"; cat "$work/hub.log"; kill "$hub_pid" 2>/dev/null; return 1; }
  cat > "$work/server-spec.json" <<JSON
{"outdir": "$work/server-report", "servers": [{"agent": "pushhub", "url": "ws://127.0.0.1:$port/echo"}],
 "cases": $cases, "exclude-cases": [], "exclude-agent-cases": {}}
JSON
  (cd "$work" && "$OLDPWD/$wstest" -m fuzzingclient -s server-spec.json >"$work/server-wstest.log" 2>&1) || true
  local status=0
  kill -0 "$hub_pid" 2>/dev/null || { echo "FAILED pushhub died during the run"; status=1; }
  python3 "$here/autobahn_report.py" "$work/server-report" pushhub "$expected" "$here/expected-failures.txt" || status=1
  kill "$hub_pid" 2>/dev/null || true
  return $status
}

run_client() {
  local port
  port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
  cat > "$work/client-spec.json" <<JSON
{"url": "ws://127.0.0.1:$port", "outdir": "$work/client-report", "cases": $cases, "exclude-cases": [],
 "exclude-agent-cases": {}}
JSON
  # exec: the pid is the server itself, so it can be stopped (not just the subshell).
  (cd "$work" && exec "$OLDPWD/$python27" "$OLDPWD/$here/wstest_loopback.py" -m fuzzingserver -u 0 -s client-spec.json \
     >"$work/client-wstest.log" 2>&1) &
  local server_pid=$!
  for _ in $(seq 100); do
    python3 -c "import socket; socket.create_connection(('127.0.0.1',$port),0.2)" 2>/dev/null && break; sleep 0.1
  done
  local status=0
  "$bin/ws-testee" "127.0.0.1:$port" pushhub-client || status=1
  python3 "$here/autobahn_report.py" "$work/client-report" pushhub-client "$expected" "$here/expected-failures.txt" || status=1
  kill "$server_pid" 2>/dev/null || true
  return $status
}

status=0
case $which in
  server) run_server || status=1 ;;
  client) run_client || status=1 ;;
  both)
    run_server >"$work/server.out" 2>&1 &
    pids+=($!)
    run_client >"$work/client.out" 2>&1 &
    pids+=($!)
    wait "${pids[0]}" || status=1
    wait "${pids[1]}" || status=1
    cat "$work/server.out" "$work/client.out"
    ;;
  *) echo "which side: server, client or both, not $which"; exit 2 ;;
esac

if [ $status -eq 0 ]; then rm -rf "$work"; else echo "reports and logs kept in $work"; fi
exit $status
