# Shared by the bench scripts (bench/loadgen/run.sh, bench/restart/run.sh, bench/results/track.sh):
# how busy the machine is, starting and stopping a hub, and stopping what a run started. Source
# it; it defines functions only.

# Percent of the machine's CPU in use over one second (call it while nothing of ours runs).
cpu_busy() {
    local a b c d e f g h t1 i1 t2 i2
    read -r _ a b c d e f g h _ </proc/stat; t1=$((a + b + c + d + e + f + g + h)) i1=$((d + e))
    sleep 1
    read -r _ a b c d e f g h _ </proc/stat; t2=$((a + b + c + d + e + f + g + h)) i2=$((d + e))
    echo $((100 * ((t2 - t1) - (i2 - i1)) / (t2 - t1 > 0 ? t2 - t1 : 1)))
}

# SIGTERM to every pid given, up to 10 s for each to exit, then SIGKILL.
stop_processes() {
    local pid
    for pid in "$@"; do kill -TERM "$pid" 2>/dev/null; done
    for pid in "$@"; do
        for _ in $(seq 1 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.2; done
        kill -KILL "$pid" 2>/dev/null
    done
}

say() { printf '%s\n' "$*"; }

# Waits until the machine is at most QUIET_PCT % busy, for at most QUIET_WAIT seconds (then
# measures anyway and says so); prints how busy it was.
wait_quiet() {
    local start=$SECONDS busy
    while :; do
        busy=$(cpu_busy)
        if [ "$busy" -le "$QUIET_PCT" ]; then
            say "# machine ${busy}% busy before the run (waited $((SECONDS - start)) s for at most ${QUIET_PCT}%)"
            return 0
        fi
        if [ $((SECONDS - start)) -ge "$QUIET_WAIT" ]; then
            say "# NOTE: machine busy (${busy}% CPU used by other processes after ${QUIET_WAIT}s of waiting); measuring anyway"
            return 0
        fi
        sleep 4
    done
}

# Starts $PUSHHUB on 127.0.0.1:$HUB_PORT (admin $ADMIN_PORT) with a fresh data dir under $work,
# quiet timers and the extra flags given; sets HUB_PID and HUB_DATA, waits for "listening".
start_hub_with() {
    stop_hub
    HUB_DATA=$work/hub-data-$RANDOM
    "$PUSHHUB" --dev --listen "127.0.0.1:$HUB_PORT" --admin "127.0.0.1:$ADMIN_PORT" --data "$HUB_DATA" \
        --log-level warning --ping-interval 10m --idle-timeout 10m --hello-timeout 10m "$@" \
        2>"$HUB_DATA.log" &
    HUB_PID=$!
    for _ in $(seq 1 100); do
        grep -q '"listening"' "$HUB_DATA.log" 2>/dev/null && { sleep 0.2; return 0; }
        kill -0 "$HUB_PID" 2>/dev/null || break
        sleep 0.1
    done
    echo "pushhub did not start:" >&2; cat "$HUB_DATA.log" >&2; exit 1
}

# SIGTERM to the hub of start_hub_with, up to 15 s, then SIGKILL; says when it exited badly or
# logged errors.
stop_hub() {
    [ -n "${HUB_PID:-}" ] || return 0
    kill -TERM "$HUB_PID" 2>/dev/null
    for _ in $(seq 1 150); do kill -0 "$HUB_PID" 2>/dev/null || break; sleep 0.1; done
    if kill -0 "$HUB_PID" 2>/dev/null; then say "# NOTE: pushhub did not exit 15 s after SIGTERM; killed"; kill -KILL "$HUB_PID"; fi
    wait "$HUB_PID" 2>/dev/null
    local rc=$?
    [ "$rc" -ne 0 ] && [ "$rc" -ne 143 ] && say "# NOTE: pushhub exited with status $rc (log: $(tail -c 300 "$HUB_DATA.log"))"
    grep -q '"level":"error"' "$HUB_DATA.log" 2>/dev/null && say "# NOTE: pushhub logged errors: $(grep '"level":"error"' "$HUB_DATA.log" | head -3)"
    HUB_PID=""
}
