#!/usr/bin/env bash
# Issue 12, "Measured": hubs scaled out over Redis, each with HUB_CLIENTS connections (default 3 ×
# 19,000 = 57,000, past one process's descriptor limit), one C load generator per hub
# (bench/loadgen, --group: the one on hub A triggers through A's admin API, the others listen and
# report when their clients have each round). A publish of one leaf to all and a sync to all:
# deliveries/s over every client (clients × rounds / Σ over rounds of the slowest hub's
# last delivery), and each hub's p50/p99; then one hub alone with HUB_CLIENTS for comparison.
#
#   bench/scaleout/fanout.sh            HUBS=3 HUB_CLIENTS=19000 ROUNDS=5 LOOPS=1
set -u
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)
PUSHHUB=${PUSHHUB:-$repo/.build/release/pushhub}
HUBS=${HUBS:-3}
HUB_CLIENTS=${HUB_CLIENTS:-19000}
ROUNDS=${ROUNDS:-5}
LOOPS=${LOOPS:-1}
LOADGEN=$repo/bench/loadgen/loadgen
make -s -C "$repo/bench/loadgen" loadgen >&2 || exit 2
[ -x "$PUSHHUB" ] || { echo "no pushhub at $PUSHHUB (swift build -c release)" >&2; exit 2; }
command -v redis-server >/dev/null || { echo "redis-server is not installed (make redis)" >&2; exit 2; }

work=$(mktemp -d /tmp/scaleout-fanout.XXXXXX)
pids=()
cleanup() {
    for pid in "${pids[@]}"; do kill -TERM "$pid" 2>/dev/null; done
    sleep 1
    for pid in "${pids[@]}"; do kill -KILL "$pid" 2>/dev/null; done
    rm -rf "$work"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
token=bench-admin-token-0123456789abcdef
printf '%s\n' "$token" > "$work/token"

start_hub() { # $1 name, then flags; sets HUB_PID CLIENT_PORT ADMIN_PORT
    local name=$1; shift
    mkdir -p "$work/$name/data"
    cp "$work/token" "$work/$name/data/admin.token"
    printf 'bench-secret-0123456789abcdef\n' > "$work/$name/data/jwt.secret"
    chmod 600 "$work/$name/data/"*
    (ulimit -n 20000; exec "$PUSHHUB" --listen 127.0.0.1:0 --admin 127.0.0.1:0 --data "$work/$name/data" --loops "$LOOPS" \
        --allow-anonymous --max-connections 30000 "$@" 2> "$work/$name/log") &
    HUB_PID=$!
    pids+=("$HUB_PID")
    for _ in $(seq 1 300); do
        line=$(grep -m1 '"msg":"listening"' "$work/$name/log" 2>/dev/null) && break
        sleep 0.1
    done
    [ -n "${line:-}" ] || { echo "hub $name did not start: $(cat "$work/$name/log")" >&2; exit 1; }
    CLIENT_PORT=$(sed -E 's/.*"client":"[^"]*:([0-9]+)".*/\1/' <<< "$line")
    ADMIN_PORT=$(sed -E 's/.*"admin":"[^"]*:([0-9]+)".*/\1/' <<< "$line")
}

put_screen() { # $1 admin port: the tree loadgen's round 0 would have (one title, 8 keyed rows)
    local rows="" r
    for r in 0 1 2 3 4 5 6 7; do rows+="${r:+}{\"id\":\"r$r\",\"type\":\"row\",\"text\":\"row number $r\"}"; [ $r -lt 7 ] && rows+=","; done
    curl -sf -X PUT -H "Authorization: Bearer $token" --data "{\"type\":\"screen\",\"title\":\"t0\",\"children\":[$rows]}" \
        "http://127.0.0.1:$1/v1/screens/bench/fanout" > /dev/null || { echo "PUT failed" >&2; exit 1; }
}

# Redis, fsyncing every write (docs/scale-out.md "Durability").
REDIS_PORT=$(free_port)
mkdir -p "$work/redis"
redis-server --port "$REDIS_PORT" --bind 127.0.0.1 --dir "$work/redis" --save "" --appendonly yes --appendfsync always \
    --logfile "$work/redis/log" &
pids+=($!)
for _ in $(seq 1 100); do redis-cli -p "$REDIS_PORT" PING 2>/dev/null | grep -q PONG && break; sleep 0.05; done

declare -a client_ports admin_ports hub_pids
for i in $(seq 0 $((HUBS - 1))); do
    start_hub "hub$i" --redis "redis://127.0.0.1:$REDIS_PORT"
    client_ports[$i]=$CLIENT_PORT admin_ports[$i]=$ADMIN_PORT hub_pids[$i]=$HUB_PID
done
put_screen "${admin_ports[0]}"
sleep 1.5  # every hub applies version 1 (a notice, or its 1 s poll)

run_group() { # $1 trigger (patch|sync)
    local trigger=$1 group="$work/group-$1" k
    local members=()
    mkdir -p "$group"
    for k in $(seq 1 $((HUBS - 1))); do
        (ulimit -n 20000; exec "$LOADGEN" fanout --port "${client_ports[$k]}" --trigger "$trigger" --n "$HUB_CLIENTS" \
            --rounds "$ROUNDS" --admin-port "${admin_ports[$k]}" --token-file "$work/token" --group "$group" --member "$k" \
            --timeout 300 --label "hub$k") > "$group/out.$k" 2> "$group/err.$k" &
        members+=($!)
    done
    (ulimit -n 20000; exec "$LOADGEN" fanout --port "${client_ports[0]}" --trigger "$trigger" --n "$HUB_CLIENTS" \
        --rounds "$ROUNDS" --admin-port "${admin_ports[0]}" --token-file "$work/token" --group "$group" \
        --followers $((HUBS - 1)) --timeout 300 --pid "${hub_pids[0]}" --label "hub0") > "$group/out.0" 2> "$group/err.0"
    wait "${members[@]}"
    cat "$group"/out.*
    # Deliveries/s over every client: each round lasts until the slowest hub's last delivery.
    python3 - "$group" "$HUBS" "$HUB_CLIENTS" "$ROUNDS" "$trigger" <<'PY'
import glob, sys
group, hubs, clients, rounds, trigger = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4]), sys.argv[5]
slowest = {}
got = 0
for path in glob.glob(group + "/result.*"):
    for line in open(path):
        r, took, count = map(int, line.split())
        slowest[r] = max(slowest.get(r, 0), took)
        got += count
total = sum(slowest.values()) / 1e9
print("%s to all %d clients on %d hubs: %.0f deliveries/s (%d of %d delivered), rounds %s ms" % (
    trigger, hubs * clients, hubs, got / total if total else 0, got, hubs * clients * rounds,
    " ".join("%.0f" % (slowest[r] / 1e6) for r in sorted(slowest))))
PY
}

echo "== $HUBS hubs over Redis, $HUB_CLIENTS clients each (loops $LOOPS)"
run_group patch
run_group sync
for pid in "${hub_pids[@]}"; do kill -TERM "$pid" 2>/dev/null; done
sleep 2

echo "== one hub, data-dir journal, $HUB_CLIENTS clients (loops $LOOPS)"
start_hub single
(ulimit -n 20000; "$LOADGEN" fanout --port "$CLIENT_PORT" --trigger patch --n "$HUB_CLIENTS" --rounds "$ROUNDS" \
    --admin-port "$ADMIN_PORT" --token-file "$work/token" --pid "$HUB_PID" --timeout 300 --label single)
(ulimit -n 20000; "$LOADGEN" fanout --port "$CLIENT_PORT" --trigger sync --n "$HUB_CLIENTS" --rounds "$ROUNDS" \
    --admin-port "$ADMIN_PORT" --token-file "$work/token" --pid "$HUB_PID" --timeout 300 --label single)
