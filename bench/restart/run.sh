#!/usr/bin/env bash
# Issue 24, "Measured": a rolling restart. 19,000 clients that hold every screen (version + hash)
# and their last sync reconnect at once to a restarted hub; how long until every one is current,
# how many snapshot bytes that costs (goal: none, every answer `unchanged`), and the hub's CPU per
# resume against a plain connect after the same restart (goal: at most 1.2×).
#
#   bench/restart/run.sh            (make bench-restart)
#
# It builds nothing but bench/loadgen (gcc); the hub is a release build:
#   swift build -c release --product pushhub --scratch-path .build-resume
# One hub (--dev, one data dir kept across its restarts, --loops 1 by default) and one load
# generator (bench/loadgen `resume` mode, one thread) on loopback. The generator publishes 3
# screens (2, 5 and 10 KB trees, 3 versions each) and 2 syncs, then runs four phases; between
# them this script stops the hub with SIGTERM (a 1001 close to every client) and starts it again
# on the same port and data dir, talking to the generator through files in a control directory:
#   1 plain connect + subscribes (recorded)   -> stop, start
#   2 RESUME: hello {last_sync, epoch}, subscribe with have
#   3 plain connect again, same hub process    -> stop, start
#   4 plain connect after a restart: the baseline for 2 (same conditions, no have/last_sync)
# Times in 2 and 4 count from the moment the new hub's port took a TCP connection (the generator
# probes every 2 ms; the kernel completes the handshake once the hub has called listen()), and
# also from the moment this script started the hub process. The hub's CPU (user + system, read
# through its process CPU clock: /proc/PID/stat's utime + stime at ns resolution) is read before
# and after each phase. Every figures line ends with "others N% CPU": what other processes used of
# the machine during that phase.
#
# Variables:
#   PUSHHUB     the hub binary (default <repo>/.build-resume/release/pushhub)
#   CLIENTS     19000 (one process may hold 20,000 descriptors)
#   SCREENS     3 screens per client (1..8)
#   INFLIGHT    0: every client connects at once; N: at most N handshakes at a time
#   LOOPS       hub event loops (1: the generator needs the other core)
#   BASE_PORT   18700: hub 18701, admin 18702
#   QUIET_PCT   10: before the run wait until the machine is at most this % busy without us ...
#   QUIET_WAIT  300: ... for at most this many seconds (then measure anyway and say so)
#   OTHERS_MAX  15: a run during whose phases other processes used more than this % of the machine
#   RETRIES     2:  is measured again, up to RETRIES more times; every attempt is printed
set -u
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)
PUSHHUB=${PUSHHUB:-$repo/.build-resume/release/pushhub}
CLIENTS=${CLIENTS:-19000}
SCREENS=${SCREENS:-3}
INFLIGHT=${INFLIGHT:-0}
LOOPS=${LOOPS:-1}
BASE_PORT=${BASE_PORT:-18700}
# shellcheck source=../lib/processes.sh
. "$here/../lib/processes.sh"
loadgen_bench_settings "swift build -c release --product pushhub --scratch-path .build-resume"

work=$(mktemp -d /tmp/restart-run.XXXXXX)
HUB_PID="" LG_PID=""
cleanup() {
    # shellcheck disable=SC2086 # empty ones vanish
    stop_processes $LG_PID $HUB_PID
    rm -rf "$work"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# Starts the hub on the run's data dir; START_NS is CLOCK_REALTIME in ns just before the process
# starts (bash's EPOCHREALTIME, no fork in between). Log: $DATA.log.K for the K-th start.
HUB_STARTS=0
start_hub() {
    HUB_STARTS=$((HUB_STARTS + 1))
    HUB_LOG=$DATA.log.$HUB_STARTS
    START_NS=${EPOCHREALTIME/./}000
    "$PUSHHUB" --dev --listen "127.0.0.1:$HUB_PORT" --admin "127.0.0.1:$ADMIN_PORT" --data "$DATA" \
        --loops "$LOOPS" --log-level warning --ping-interval 10m --idle-timeout 10m --hello-timeout 1m 2>"$HUB_LOG" &
    HUB_PID=$!
}

# Waits for the generator's CTL/NAME (or its exit).
wait_for() {
    local deadline=$((SECONDS + 300))
    while [ ! -e "$CTL/$1" ]; do
        kill -0 "$LG_PID" 2>/dev/null || { say "# the load generator exited before $1"; return 1; }
        [ "$SECONDS" -ge "$deadline" ] && { say "# NOTE: no $1 from the load generator in 300 s"; return 1; }
        sleep 0.1 # not faster: this loop runs during phases 2 and 3
    done
}

# The stop between two phases, then a new start announced to the generator as CTL/go.NEXT.
restart() {
    local next=$1
    stop_hub
    say "hub stop after phase $((next - 1)): SIGTERM -> exit ${STOP_MS} ms" >>"$OUT"
    start_hub
    printf '%s %s\n' "$HUB_PID" "$START_NS" >"$CTL/go.$next.tmp" && mv "$CTL/go.$next.tmp" "$CTL/go.$next"
}

scenario() {
    DATA=$work/data-$RANDOM CTL=$work/ctl-$RANDOM HUB_STARTS=0 OUT=$work/out.txt
    mkdir -p "$CTL"
    : >"$OUT"
    start_hub
    wait_listening
    "$LOADGEN" resume --port "$HUB_PORT" --admin-port "$ADMIN_PORT" --data "$DATA" --control "$CTL" --pid "$HUB_PID" \
        --clients "$CLIENTS" --screens "$SCREENS" --inflight "$INFLIGHT" --label "pushhub(loops=$LOOPS)" \
        >>"$OUT" 2>"$work/err.txt" &
    LG_PID=$!
    if wait_for phase1.done; then
        restart 2
        wait_for phase3.done && restart 4
    fi
    wait "$LG_PID"
    local rc=$?
    LG_PID=""
    stop_hub
    tee "$work/unit.txt" <"$OUT"
    grep -v '^loadgen: published' "$work/err.txt" | sed 's/^/# /'
    [ "$rc" -ne 0 ] && say "# the load generator exited with status $rc"
    rm -rf "$DATA" "$DATA".log.* "$CTL"
    return 0
}

say "# rolling restart (issue 24), $(date -u +%Y-%m-%dT%H:%MZ), $(nproc) cores, pushhub: $PUSHHUB ($("$PUSHHUB" --version 2>&1 | head -1), --loops $LOOPS), $CLIENTS clients x $SCREENS screens, in flight: ${INFLIGHT/#0/all}"
attempt=0
while :; do
    wait_quiet
    scenario
    worst=$(grep -o 'others [0-9]*% CPU' "$work/unit.txt" | tr -dc '0-9\n' | sort -n | tail -1)
    [ -z "$worst" ] || [ "$worst" -le "$OTHERS_MAX" ] && break
    if [ "$attempt" -ge "$RETRIES" ]; then
        say "# NOTE: other processes used up to ${worst}% of the machine during a phase above (after $((attempt + 1)) attempts)"
        break
    fi
    attempt=$((attempt + 1))
    say "# disturbed (others up to ${worst}%): measuring again"
done
