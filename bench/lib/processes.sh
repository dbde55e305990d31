# Shared by the bench scripts (bench/loadgen/run.sh, bench/restart/run.sh): how busy the machine
# is, and stopping what a run started. Source it; it defines functions only.

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
