#!/usr/bin/env bash
# Goal events (issue 26, "Measured"): `track` messages per second per core of the hub, and what a
# flow of them costs the fan-out's p99. Starts its own release hubs (--loops 1, a fresh one per
# unit) on loopback, drives them with the C load generator (bench/loadgen) and cleans up on exit.
#
#   bench/results/track.sh [rate] [fanout]      (no argument: both)
#
# rate:   TRACK_N clients (1,000) subscribed to a screen a running 50/50 experiment touches, each
#         sending {"type":"track","event":"purchase","value":1} every TRACK_INTERVAL ms (20: 50/s,
#         under the hub's default limit of 100 messages/s per connection), then twice as many
#         clients: messages/s sent, the hub's CPU per message, and so messages/s per core.
# fanout: `loadgen fanout --trigger patch --n FANOUT_N` (10,000) alone, then on a fresh hub with
#         the track load of `rate` running beside it in a second generator process; REPEATS (2)
#         times each, alternating. The two generators and the hub share the machine's cores.
#
# Variables: PUSHHUB (default <repo>/.build/release/pushhub), BASE_PORT (18600: hub +1, admin +2),
# TRACK_N, TRACK_INTERVAL, TRACK_SECONDS (10), FANOUT_N, REPEATS, and as in bench/loadgen/run.sh
# QUIET_PCT (10), QUIET_WAIT (300), OTHERS_MAX (15), RETRIES (2): before each unit wait until the
# machine is at most QUIET_PCT % busy (at most QUIET_WAIT s, then measure anyway and say so), and
# measure a unit again when other processes used more than OTHERS_MAX % of the machine during it.
set -u
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)
PUSHHUB=${PUSHHUB:-$repo/.build/release/pushhub}
BASE_PORT=${BASE_PORT:-18600}
TRACK_N=${TRACK_N:-1000}
TRACK_INTERVAL=${TRACK_INTERVAL:-20}
TRACK_SECONDS=${TRACK_SECONDS:-10}
FANOUT_N=${FANOUT_N:-10000}
REPEATS=${REPEATS:-2}
# shellcheck source=../lib/processes.sh
. "$repo/bench/lib/processes.sh"
loadgen_bench_settings

work=$(mktemp -d /tmp/bench-track.XXXXXX)
HUB_PID="" BG_PID=""
cleanup() {
    # shellcheck disable=SC2086 # empty ones vanish
    stop_processes $BG_PID $HUB_PID
    rm -rf "$work"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

start_hub() { start_hub_with --loops 1; }

track_rate() {
    local n=$1
    start_hub
    lg "track rate" track --port "$HUB_PORT" --admin-port "$ADMIN_PORT" --data "$HUB_DATA" --n "$n" \
        --interval "$TRACK_INTERVAL" --seconds "$TRACK_SECONDS" --pid "$HUB_PID"
    say "# results log after the run: $(wc -c <"$HUB_DATA/exposures.jsonl") bytes"
    stop_hub
}

fanout_alone() {
    start_hub
    lg "fanout alone" fanout --port "$HUB_PORT" --trigger patch --n "$FANOUT_N" --admin-port "$ADMIN_PORT" \
        --data "$HUB_DATA" --pid "$HUB_PID"
    stop_hub
}

fanout_with_track() {
    start_hub
    # the background load: long enough for the fan-out; SIGTERM ends it and it prints its line
    "$LOADGEN" track --port "$HUB_PORT" --admin-port "$ADMIN_PORT" --data "$HUB_DATA" --n "$TRACK_N" \
        --interval "$TRACK_INTERVAL" --seconds 600 --label "background" \
        >"$work/bg.txt" 2>"$work/bg.err" &
    BG_PID=$!
    for _ in $(seq 1 300); do
        grep -q 'subscribed' "$work/bg.err" && break
        kill -0 "$BG_PID" 2>/dev/null || { say "# NOTE: the track load failed: $(cat "$work/bg.err")"; BG_PID=""; stop_hub; return; }
        sleep 0.1
    done
    sleep 2 # its warm-up: tracks flowing before the fan-out's clients connect
    lg "fanout with tracks" fanout --port "$HUB_PORT" --trigger patch --n "$FANOUT_N" --admin-port "$ADMIN_PORT" \
        --data "$HUB_DATA" --pid "$HUB_PID" --exclude-pid "$BG_PID"
    kill -TERM "$BG_PID" 2>/dev/null
    wait "$BG_PID" 2>/dev/null
    BG_PID=""
    # the background's own line (its "others" includes the fan-out generator: not a quiet figure)
    say "$(cat "$work/bg.txt")"
    grep -q 'ERRORS\|FAILED' "$work/bg.txt" && say "# NOTE: the track load saw errors: $(tail -3 "$work/bg.err")"
    stop_hub
}

blocks=("$@")
[ ${#blocks[@]} -eq 0 ] && blocks=(rate fanout)
say "# $(date -u +%FT%TZ) pushhub $("$PUSHHUB" --version 2>/dev/null | head -1), $(nproc) cores; hub --loops 1"
for block in "${blocks[@]}"; do
    case $block in
    rate)
        unit track_rate "$TRACK_N"
        unit track_rate "$((TRACK_N * 2))"
        ;;
    fanout)
        for _ in $(seq 1 "$REPEATS"); do
            unit fanout_alone
            unit fanout_with_track
        done
        ;;
    *) echo "unknown block $block (rate, fanout)" >&2; exit 2 ;;
    esac
done
