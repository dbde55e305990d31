#!/usr/bin/env bash
# The comparison set of issue 8 ("Measured"), driven by the C load generator: PushHub (one loop by
# default) against the bare C epoll server of ../shared/bench-reference, one after the other, with
# the same client. Starts and stops its own servers on loopback and cleans up on exit.
#
#   bench/loadgen/run.sh [fanout] [connect] [admin] [probe]      (no argument: all four)
#
# Variables:
#   PUSHHUB     the hub binary (default <repo>/.build/release/pushhub)
#   LOOPS       hub event loops (1)
#   SIZES       fan-out client counts ("1000 10000 19000")
#   RAWSERVER   the yardstick binary (default: built in ../shared/bench-reference)
#   UWS_PYTHON  optional: a python with PyPI `socketify` (and Debian's libuv1); adds uWebSockets
#               (uws_server.py) to the fan-out and connect blocks
#   HUB_ONLY    1: measure the hub only, without the yardsticks (paired runs, bench/paired/run.sh)
#   REDIS_URL   redis://...: hubs start scaled out over that Redis (their durable write is the
#               shared journal's append instead of the data dir's fsync)
#   BASE_PORT   18400: hub 18401, admin 18402, rawserver 18403, uWebSockets 18404
#   QUIET_PCT   10: before each unit wait until the machine is at most this % busy without us ...
#   QUIET_WAIT  300: ... for at most this many seconds (then measure anyway and say so)
#   OTHERS_MAX  15: a unit during which other processes used more than this % of the machine
#   RETRIES     2:  is measured again (fresh servers), up to RETRIES more times; every attempt is printed
# Every figures line ends with "others N% CPU": what processes other than the generator and the
# server used of the machine meanwhile.
set -u
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)
PUSHHUB=${PUSHHUB:-$repo/.build/release/pushhub}
LOOPS=${LOOPS:-1}
SIZES=${SIZES:-"1000 10000 19000"}
BASE_PORT=${BASE_PORT:-18400}
UWS_PYTHON=${UWS_PYTHON:-}
HUB_ONLY=${HUB_ONLY:-}
REDIS_URL=${REDIS_URL:-}
RAW_PORT=$((BASE_PORT + 3)) UWS_PORT=$((BASE_PORT + 4))
reference=$(cd "$repo/.." && pwd)/shared/bench-reference
# shellcheck source=../lib/processes.sh
. "$here/../lib/processes.sh"
loadgen_bench_settings
if [ -z "${RAWSERVER:-}" ]; then
    make -s -C "$reference" rawserver >&2 || { echo "cannot build $reference/rawserver" >&2; exit 2; }
    RAWSERVER=$reference/rawserver
fi

work=$(mktemp -d /tmp/loadgen-run.XXXXXX)
HUB_PID="" RAW_PID="" UWS_PID="" BG_PID=""
cleanup() {
    # shellcheck disable=SC2086 # empty ones vanish
    stop_processes $BG_PID $HUB_PID $RAW_PID $UWS_PID
    rm -rf "$work"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

start_hub() {
    start_hub_with --loops "$LOOPS" --echo-path /v1/echo ${REDIS_URL:+--redis "$REDIS_URL"} "$@"
}

start_raw() {
    stop_raw
    "$RAWSERVER" "$RAW_PORT" 2>"$work/raw.log" &
    RAW_PID=$!
    for _ in $(seq 1 50); do grep -q listening "$work/raw.log" && return 0; sleep 0.1; done
    echo "rawserver did not start" >&2; exit 1
}

stop_raw() {
    [ -n "$RAW_PID" ] || return 0
    kill -TERM "$RAW_PID" 2>/dev/null
    wait "$RAW_PID" 2>/dev/null
    RAW_PID=""
}

start_uws() {
    stop_uws
    "$UWS_PYTHON" "$here/uws_server.py" "$UWS_PORT" >"$work/uws.log" 2>&1 &
    UWS_PID=$!
    for _ in $(seq 1 100); do grep -q listening "$work/uws.log" && return 0; sleep 0.1; done
    echo "uws_server.py did not start:" >&2; cat "$work/uws.log" >&2; exit 1
}

stop_uws() {
    [ -n "$UWS_PID" ] || return 0
    kill -TERM "$UWS_PID" 2>/dev/null
    for _ in $(seq 1 50); do kill -0 "$UWS_PID" 2>/dev/null || break; sleep 0.1; done
    kill -KILL "$UWS_PID" 2>/dev/null
    wait "$UWS_PID" 2>/dev/null
    UWS_PID=""
}

hub_name="pushhub(loops=$LOOPS)"

fanout_raw() {
    start_raw
    lg "rawserver" fanout --port "$RAW_PORT" --trigger raw --n "$1" --pid "$RAW_PID"
    lg "rawserver" fanout --port "$RAW_PORT" --trigger raw --body-size 192 --n "$1" --pid "$RAW_PID"
    stop_raw
}

fanout_uws() {
    start_uws
    lg "uWebSockets" fanout --port "$UWS_PORT" --trigger raw --n "$1" --pid "$UWS_PID"
    stop_uws
}

fanout_hub() {
    start_hub
    lg "$hub_name" fanout --port "$HUB_PORT" --trigger sync --n "$1" --admin-port "$ADMIN_PORT" --data "$HUB_DATA" --pid "$HUB_PID"
    lg "$hub_name" fanout --port "$HUB_PORT" --trigger patch --n "$1" --admin-port "$ADMIN_PORT" --data "$HUB_DATA" --pid "$HUB_PID"
    stop_hub
}

block_fanout() {
    say "## fan-out: one broadcast to N clients per round, each round timed to its last delivery"
    for n in $SIZES; do
        [ -z "$HUB_ONLY" ] && unit fanout_raw "$n"
        [ -z "$HUB_ONLY" ] && [ -n "$UWS_PYTHON" ] && unit fanout_uws "$n"
        unit fanout_hub "$n"
    done
}

connect_raw() {
    start_raw
    lg "rawserver" connect --port "$RAW_PORT" --path /ws --n 10000 --inflight "$1" --pid "$RAW_PID"
    stop_raw
}

connect_uws() {
    start_uws
    lg "uWebSockets (subscribed)" connect --port "$UWS_PORT" --path /ws --n 10000 --inflight "$1" --pid "$UWS_PID"
    stop_uws
}

# uWebSockets doing PushHub's round trip after the upgrade (a hello answered by a welcome).
connect_uws_hello() {
    start_uws
    lg "uWebSockets (hello)" connect --port "$UWS_PORT" --path /v1/connect --hello --n 10000 --inflight "$1" --pid "$UWS_PID"
    stop_uws
}

connect_hub() { # K, then extra loadgen options
    local k=$1
    shift
    start_hub
    lg "$hub_name" connect --port "$HUB_PORT" --n 10000 --inflight "$k" --pid "$HUB_PID" "$@"
    stop_hub
}

block_connect() {
    say "## connects/s and server memory per connection (10,000 clients, fresh server each)"
    for k in 100 500; do
        [ -z "$HUB_ONLY" ] && unit connect_raw "$k"
        [ -z "$HUB_ONLY" ] && [ -n "$UWS_PYTHON" ] && unit connect_uws "$k" && unit connect_uws_hello "$k"
        unit connect_hub "$k"
    done
    unit connect_hub 100 --subscribe bench/mem --admin-port "$ADMIN_PORT" --data @DATA@
    unit connect_hub 100 --no-hello
    unit connect_hub 500 --no-hello
}

# An admin run; with perf, also the hub's fsync/fdatasync calls during it (fsyncs/s and mutations
# per fsync: the mean group-commit size).
admin_run() {
    local perf_pid="" line fsyncs
    if command -v perf >/dev/null && perf stat -e syscalls:sys_enter_fsync -p "$HUB_PID" -- true >/dev/null 2>&1; then
        perf stat -x, -e syscalls:sys_enter_fsync,syscalls:sys_enter_fdatasync -p "$HUB_PID" -o "$work/perf.txt" &
        perf_pid=$!
        sleep 0.3
    fi
    lg "$hub_name" admin --admin-port "$ADMIN_PORT" --data "$HUB_DATA" --pid "$HUB_PID" "$@"
    line=$(tail -1 "$work/unit.txt")
    if [ -n "$perf_pid" ]; then
        kill -INT "$perf_pid"
        wait "$perf_pid" 2>/dev/null
        fsyncs=$(awk -F, '/sys_enter_f/ {n += $1} END {print n + 0}' "$work/perf.txt")
        echo "$line" | awk -v f="$fsyncs" '{
            for (i = 1; i <= NF; i++) { if ($(i + 1) == "s:") secs = $i + 0; if ($(i + 1) == "mutations/s,") rate = $i + 0 }
            if (secs > 0 && f > 0) printf "#   fsyncs (perf, whole hub, incl. 0.3 s before): %d = %.0f/s, %.2f mutations per fsync\n", f, f / secs, rate * secs / f
        }'
    fi
}

admin_unit() {
    start_hub
    admin_run "$@"
    stop_hub
}

block_admin() {
    say "## admin mutations (PUT /v1/screens/bench-K, each durable before its 2xx: fsynced, or with REDIS_URL appended to the shared journal), keep-alive connections"
    unit admin_unit --conns 64 --seconds 5
    unit admin_unit --conns 1 --seconds 3
}

# A probe on a fresh hub alone, then again while `admin --rate 500` runs in a second loadgen
# process (left out of "others").
probe_unit() {
    start_hub
    lg "$hub_name, no admin load" "$@" --pid "$HUB_PID"
    "$LOADGEN" admin --admin-port "$ADMIN_PORT" --data "$HUB_DATA" --conns 16 --rate 500 --seconds 120 \
        --label "  (background)" >"$work/bg.txt" 2>&1 &
    BG_PID=$!
    sleep 1
    lg "$hub_name, 500 admin mutations/s" "$@" --pid "$HUB_PID" --exclude-pid "$BG_PID"
    kill -TERM "$BG_PID" 2>/dev/null
    wait "$BG_PID" 2>/dev/null
    BG_PID=""
    sed 's/; others [0-9]*% CPU//' "$work/bg.txt" # its "others" would count the probe
    stop_hub
}

block_probe() {
    say "## no stall: probes among 10,000 connected clients, without and with 500 admin mutations/s"
    unit probe_unit echo --port "$HUB_PORT" --idle 10000 --n 100 --interval 10 --seconds 10
    unit probe_unit echo --port "$HUB_PORT" --idle 10000 --n 100 --seconds 5
    unit probe_unit usersync --port "$HUB_PORT" --admin-port "$ADMIN_PORT" --data @DATA@ --n 10000 --interval 10 --seconds 10
}

blocks=${*:-fanout connect admin probe}
say "# loadgen comparison set, $(date -u +%Y-%m-%dT%H:%MZ), $(nproc) cores, pushhub: $PUSHHUB (--loops $LOOPS${REDIS_URL:+, --redis $REDIS_URL}), rawserver: $RAWSERVER${UWS_PYTHON:+, uWebSockets via $UWS_PYTHON}"
for b in $blocks; do
    case $b in
        fanout | connect | admin | probe) "block_$b" ;;
        *) echo "unknown block $b (fanout, connect, admin, probe)" >&2; exit 2 ;;
    esac
done
