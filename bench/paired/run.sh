#!/usr/bin/env bash
# Paired runs of two hub binaries (a change's before and after), alternating A B A B … so that
# drift of a shared machine falls on both: fan-out (sync and patch to 10,000 clients), admin
# mutations with the data dir's journal, and admin mutations through the shared journal of a
# fresh redis-server. Every unit is bench/loadgen/run.sh's, with HUB_ONLY=1.
#
#   bench/paired/run.sh BEFORE_BIN AFTER_BIN        (ROUNDS=2, SIZES="10000", BLOCKS="fanout admin redis")
#
# Prints each figures line labelled before/after, round by round.
set -u
here=$(cd "$(dirname "$0")" && pwd)
[ $# -eq 2 ] && [ -x "$1" ] && [ -x "$2" ] || { echo "usage: $0 BEFORE_PUSHHUB AFTER_PUSHHUB" >&2; exit 2; }
ROUNDS=${ROUNDS:-2}
BLOCKS=${BLOCKS:-"fanout admin redis"}
export SIZES=${SIZES:-10000} HUB_ONLY=1
REDIS_PORT=${REDIS_PORT:-18409}
# shellcheck source=../lib/processes.sh
. "$here/../lib/processes.sh"
REDIS_PID=""
trap 'stop_processes $REDIS_PID' EXIT

# One run of the loadgen blocks against one binary; "redis" is the admin block scaled out.
measure() { # label binary block
    local label=$1 binary=$2 block=$3 dir
    if [ "$block" = redis ]; then
        dir=$(mktemp -d /tmp/paired-redis.XXXXXX)
        redis-server --port "$REDIS_PORT" --bind 127.0.0.1 --dir "$dir" --save '' --appendonly yes \
            --appendfsync always >"$dir/log" 2>&1 &
        REDIS_PID=$!
        sleep 0.5
        REDIS_URL=redis://127.0.0.1:$REDIS_PORT PUSHHUB=$binary bash "$here/../loadgen/run.sh" admin | sed "s/^/$label  /"
        stop_processes $REDIS_PID
        REDIS_PID=""
        rm -rf "$dir"
    else
        PUSHHUB=$binary bash "$here/../loadgen/run.sh" "$block" | sed "s/^/$label  /"
    fi
}

echo "# paired runs, $(date -u +%Y-%m-%dT%H:%MZ): before = $1, after = $2, $ROUNDS rounds of: $BLOCKS"
for round in $(seq 1 "$ROUNDS"); do
    for block in $BLOCKS; do
        measure "before#$round" "$1" "$block"
        measure "after#$round " "$2" "$block"
    done
done
