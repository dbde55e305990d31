#!/usr/bin/env bash
# Runs the Autobahn|Testsuite against WSProtocol on both sides, groups 1-10 (12-13 are
# permessage-deflate, not negotiated yet):
#   server: fuzzingclient against `pushhub --echo-path /echo` on a free loopback port;
#   client: fuzzingserver on loopback against ws-testee (WSProtocol's client side).
# Fails unless every case is OK, NON-STRICT or INFORMATIONAL (or listed in expected-failures.txt).
#
#   run-autobahn.sh BIN_DIR [server|client|both]
set -euo pipefail
cd "$(dirname "$0")/../.."
bin=${1:?usage: run-autobahn.sh BIN_DIR [server|client|both]}
which=${2:-both}
here=Tests/Conformance
wstest=.autobahn/py27/bin/wstest
python27=.autobahn/py27/bin/python
work=$(mktemp -d /tmp/pushhub-autobahn.XXXXXX)
cases='["1.*","2.*","3.*","4.*","5.*","6.*","7.*","9.*","10.*"]'
status=0
pids=()
cleanup() { for p in "${pids[@]:-}"; do kill "$p" 2>/dev/null || true; done; }
trap cleanup EXIT

bash scripts/ensure-autobahn.sh >/dev/null

if [ "$which" = server ] || [ "$which" = both ]; then
  "$bin/pushhub" --listen 127.0.0.1:0 --admin 127.0.0.1:0 --data "$work/data" --echo-path /echo --loops 2 \
    2>"$work/hub.log" &
  pids+=($!)
  hub_pid=$!
  for _ in $(seq 100); do grep -q '"listening"' "$work/hub.log" 2>/dev/null && break; sleep 0.1; done
  port=$(grep -o '"client":"[^"]*"' "$work/hub.log" | head -1 | sed 's/.*:\([0-9]*\)"$/\1/' || true)
  [ -n "$port" ] || { echo "pushhub did not start:"; cat "$work/hub.log"; exit 1; }
  cat > "$work/server-spec.json" <<JSON
{"outdir": "$work/server-report", "servers": [{"agent": "pushhub", "url": "ws://127.0.0.1:$port/echo"}],
 "cases": $cases, "exclude-cases": [], "exclude-agent-cases": {}}
JSON
  (cd "$work" && "$OLDPWD/$wstest" -m fuzzingclient -s server-spec.json >"$work/server-wstest.log" 2>&1) || true
  kill -0 "$hub_pid" 2>/dev/null || { echo "FAILED pushhub died during the run"; status=1; }
  expected=$("$python27" "$here/autobahn_cases.py" "$cases")
  python3 "$here/autobahn_report.py" "$work/server-report" pushhub "$expected" "$here/expected-failures.txt" || status=1
  kill "$hub_pid" 2>/dev/null || true
fi

if [ "$which" = client ] || [ "$which" = both ]; then
  port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
  cat > "$work/client-spec.json" <<JSON
{"url": "ws://127.0.0.1:$port", "outdir": "$work/client-report", "cases": $cases, "exclude-cases": [],
 "exclude-agent-cases": {}}
JSON
  # exec: the pid is the server itself, so the cleanup stops it (not just the subshell).
  (cd "$work" && exec "$OLDPWD/$python27" "$OLDPWD/$here/wstest_loopback.py" -m fuzzingserver -u 0 -s client-spec.json \
     >"$work/client-wstest.log" 2>&1) &
  pids+=($!)
  for _ in $(seq 100); do
    python3 -c "import socket; socket.create_connection(('127.0.0.1',$port),0.2)" 2>/dev/null && break; sleep 0.1
  done
  "$bin/ws-testee" "127.0.0.1:$port" pushhub-client || status=1
  expected=$("$python27" "$here/autobahn_cases.py" "$cases")
  python3 "$here/autobahn_report.py" "$work/client-report" pushhub-client "$expected" "$here/expected-failures.txt" || status=1
fi

if [ $status -eq 0 ]; then rm -rf "$work"; else echo "reports and logs kept in $work"; fi
exit $status
