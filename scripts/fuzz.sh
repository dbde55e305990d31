#!/usr/bin/env bash
# Builds the libFuzzer targets (Fuzz/FuzzTargets, one binary: pushhub-fuzz) with AddressSanitizer
# and runs each in turn, then prints executions, exec/s, coverage and the outcome per target.
#
#   scripts/fuzz.sh [TARGET...]          every target when none is named
#   FUZZ_RUNS=N       executions per target (default 10,000,000)
#   FUZZ_SECONDS=S    run each target for S seconds instead of a number of executions
#   FUZZ_JOBS_NICE=N  niceness of the fuzzer (default 10: it yields to builds and benchmarks)
#
# Seeds are read from Fuzz/corpus/<target>/ (never written); what the fuzzer adds goes to
# .build-fuzz/corpus/<target>/, crashes to .build-fuzz/artifacts/. A crash becomes a unit test
# by copying its file into Fuzz/corpus/<target>/ (FuzzCorpusTests replays every file there).
set -euo pipefail
cd "$(dirname "$0")/.."

SCRATCH=.build-fuzz
RUNS=${FUZZ_RUNS:-10000000}
SECONDS_PER_TARGET=${FUZZ_SECONDS:-}
NICENESS=${FUZZ_JOBS_NICE:-10}

PUSHHUB_FUZZ=1 swift build -c release --scratch-path "$SCRATCH" --product pushhub-fuzz \
    -Xswiftc -sanitize=fuzzer,address
BIN="$SCRATCH/release/pushhub-fuzz"

# name and -max_len of every target, from the binary itself (FuzzTarget.all)
declare -A MAX_LEN
while read -r name len; do MAX_LEN[$name]=$len; done < <(FUZZ_TARGET=list "$BIN")
TARGETS=("$@")
[ ${#TARGETS[@]} -eq 0 ] && TARGETS=($(FUZZ_TARGET=list "$BIN" | cut -d' ' -f1))

mkdir -p "$SCRATCH/artifacts" "$SCRATCH/logs"
if [ -n "$SECONDS_PER_TARGET" ]; then LIMIT=(-max_total_time="$SECONDS_PER_TARGET"); else LIMIT=(-runs="$RUNS"); fi

# The Swift runtime's crash backtracer would race AddressSanitizer's report; libFuzzer's is enough.
export SWIFT_BACKTRACE=enable=no
# No allocation stacks in ASan's reports: recording one per malloc and free took ~15 % of the
# run. A crash's file replayed by hand (`FUZZ_TARGET=T pushhub-fuzz FILE`) shows them again.
export ASAN_OPTIONS=${ASAN_OPTIONS:-malloc_context_size=0}
SUMMARY=()
FAILED=0
for target in "${TARGETS[@]}"; do
    [ -n "${MAX_LEN[$target]:-}" ] || { echo "unknown target '$target'" >&2; exit 2; }
    mkdir -p "$SCRATCH/corpus/$target"
    log="$SCRATCH/logs/$target.log"
    echo "== $target: ${LIMIT[*]} -max_len=${MAX_LEN[$target]} (log: $log)"
    start=$(date +%s)
    status=0
    FUZZ_TARGET=$target nice -n "$NICENESS" "$BIN" "${LIMIT[@]}" -max_len="${MAX_LEN[$target]}" \
        -timeout=10 -rss_limit_mb=2048 -print_final_stats=1 -artifact_prefix="$SCRATCH/artifacts/$target-" \
        "$SCRATCH/corpus/$target" "Fuzz/corpus/$target" > "$log" 2>&1 || status=$?
    seconds=$(( $(date +%s) - start ))
    units=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1)
    rate=$(sed -n 's/^stat::average_exec_per_sec: *//p' "$log" | tail -1)
    last=$(grep -E '^#[0-9]+' "$log" | tail -1 || true)  # none when the seeds crash
    cov=$(sed -n 's/.* cov: \([0-9]*\).*/\1/p' <<< "$last")
    ft=$(sed -n 's/.* ft: \([0-9]*\).*/\1/p' <<< "$last")
    if [ "$status" -eq 0 ]; then
        outcome="no crash"
    else
        FAILED=1
        artifact=$(sed -n 's/.*Test unit written to \(.*\)$/\1/p' "$log" | tail -1)
        outcome="CRASH (exit $status) ${artifact:-see $log}"
        grep -E 'property violated|ERROR: (AddressSanitizer|LeakSanitizer|libFuzzer)|Fatal error' "$log" | head -3 || true
    fi
    SUMMARY+=("$(printf '%-14s %12s %8s %7s %7s %7ss  %s' "$target" "${units:-?}" "${rate:-?}" "${cov:-?}" "${ft:-?}" "$seconds" "$outcome")")
done

echo
printf '%-14s %12s %8s %7s %7s %8s  %s\n' target executions exec/s cov ft time outcome
printf '%s\n' "${SUMMARY[@]}"
exit $FAILED
