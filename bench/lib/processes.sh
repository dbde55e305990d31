# Shared by the bench scripts (bench/loadgen/run.sh, bench/restart/run.sh, bench/results/track.sh):
# how busy the machine is, starting and stopping a hub, running loadgen units on a quiet machine,
# and stopping what a run started. Source
# it; it defines functions only (loadgen_bench_settings sets the settings they share).

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

# The settings every loadgen bench shares, from the environment or their defaults: QUIET_PCT,
# QUIET_WAIT, OTHERS_MAX, RETRIES (see wait_quiet and unit), HUB_PORT and ADMIN_PORT (BASE_PORT
# + 1 and + 2), LOADGEN, built here; then checks that PUSHHUB is a binary (the message says how
# to build one). Needs repo and BASE_PORT.
loadgen_bench_settings() {
    QUIET_PCT=${QUIET_PCT:-10}
    QUIET_WAIT=${QUIET_WAIT:-300}
    OTHERS_MAX=${OTHERS_MAX:-15}
    RETRIES=${RETRIES:-2}
    HUB_PORT=$((BASE_PORT + 1)) ADMIN_PORT=$((BASE_PORT + 2))
    LOADGEN=$repo/bench/loadgen/loadgen
    make -s -C "$repo/bench/loadgen" loadgen >&2 || exit 2
    [ -x "$PUSHHUB" ] || { echo "no pushhub binary at $PUSHHUB (${1:-swift build -c release}, or set PUSHHUB=...)" >&2; exit 2; }
}

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

# Runs $LOADGEN with a label; the figures line goes to stdout (and $work/unit.txt), progress to stderr.
# An argument @DATA@ stands for the data dir of the hub started last.
lg() {
    local label=$1 line a args=()
    shift
    for a in "$@"; do [ "$a" = @DATA@ ] && args+=("$HUB_DATA") || args+=("$a"); done
    line=$("$LOADGEN" "${args[@]}" --label "$label") || line="$line   [loadgen exited non-zero]"
    say "$line" | tee -a "$work/unit.txt"
}

# Runs a unit (a function that starts fresh servers, measures, stops them) after waiting for a
# quiet machine; measures it again when other processes disturbed it.
unit() {
    local attempt=0 worst
    while :; do
        wait_quiet
        : >"$work/unit.txt"
        "$@"
        worst=$(grep -o 'others [0-9]*% CPU' "$work/unit.txt" | tr -dc '0-9\n' | sort -n | tail -1)
        [ -z "$worst" ] || [ "$worst" -le "$OTHERS_MAX" ] && return 0
        if [ "$attempt" -ge "$RETRIES" ]; then
            say "# NOTE: other processes used up to ${worst}% of the machine during the unit above (after $((attempt + 1)) attempts)"
            return 0
        fi
        attempt=$((attempt + 1))
        say "# disturbed (others up to ${worst}%): measuring the unit above again"
    done
}

# Starts $PUSHHUB on 127.0.0.1:$HUB_PORT (admin $ADMIN_PORT) with a fresh data dir under $work,
# quiet timers and the extra flags given; sets HUB_PID and HUB_DATA, waits for "listening".
start_hub_with() {
    stop_hub
    HUB_DATA=$work/hub-data-$RANDOM
    HUB_LOG=$HUB_DATA.log
    "$PUSHHUB" --dev --listen "127.0.0.1:$HUB_PORT" --admin "127.0.0.1:$ADMIN_PORT" --data "$HUB_DATA" \
        --log-level warning --ping-interval 10m --idle-timeout 10m --hello-timeout 10m "$@" \
        2>"$HUB_LOG" &
    HUB_PID=$!
    wait_listening && sleep 0.2
}

# Waits (up to 10 s) for the hub of $HUB_PID to log "listening" in $HUB_LOG; exits if it does not.
wait_listening() {
    for _ in $(seq 1 200); do
        grep -q '"listening"' "$HUB_LOG" 2>/dev/null && return 0
        kill -0 "$HUB_PID" 2>/dev/null || break
        sleep 0.05
    done
    echo "pushhub did not start:" >&2; cat "$HUB_LOG" >&2; exit 1
}

# SIGTERM to the hub ($HUB_PID, its log $HUB_LOG), up to 15 s, then SIGKILL; STOP_MS is how long
# it took (a hub closes every client with 1001 first); says when it exited badly or logged errors.
stop_hub() {
    [ -n "${HUB_PID:-}" ] || return 0
    local t0=${EPOCHREALTIME/./} rc
    kill -TERM "$HUB_PID" 2>/dev/null
    for _ in $(seq 1 750); do kill -0 "$HUB_PID" 2>/dev/null || break; sleep 0.02; done
    if kill -0 "$HUB_PID" 2>/dev/null; then say "# NOTE: pushhub did not exit 15 s after SIGTERM; killed"; kill -KILL "$HUB_PID"; fi
    wait "$HUB_PID" 2>/dev/null
    rc=$?
    STOP_MS=$(( (${EPOCHREALTIME/./} - t0) / 1000 ))
    [ "$rc" -ne 0 ] && [ "$rc" -ne 143 ] && say "# NOTE: pushhub exited with status $rc (log: $(tail -c 300 "$HUB_LOG"))"
    grep -q '"level":"error"' "$HUB_LOG" 2>/dev/null && say "# NOTE: pushhub logged errors: $(grep '"level":"error"' "$HUB_LOG" | head -3)"
    HUB_PID=""
}
