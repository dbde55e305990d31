#!/usr/bin/env bash
# Soak and chaos runs against a release pushhub (issue 9, item 4). See bench/soak/README.md.
#   bench/soak/run.sh soak  [--minutes 30] [soak.py options...]
#   bench/soak/run.sh chaos [--minutes 6]  [soak.py options...]
# Builds pushhub in its own scratch dir (.build-soak, never .build) at low priority, then runs the
# driver; output in bench/soak/out/MODE-TIMESTAMP/ (summary.txt, samples.csv, events.log, hub logs).
# SOAK_SKIP_BUILD=1 reuses the existing binary; SOAK_NICE (default 5) is the driver's and hub's niceness;
# SOAK_HEAPSTATS=0 leaves out the allocator's in-use/free bytes (heapstats.c, LD_PRELOAD) from the samples.
set -euo pipefail
cd "$(dirname "$0")/../.."
mode="${1:-}"
case "$mode" in
  soak|chaos) shift ;;
  *) echo "usage: bench/soak/run.sh soak|chaos [--minutes M] [options]   (--help for options)" >&2
     [ "$mode" = "--help" ] || [ "$mode" = "-h" ] && exec .venv/bin/python bench/soak/soak.py --help
     exit 2 ;;
esac
bash scripts/ensure-python-venv.sh
pkg-config --exists openssl 2>/dev/null || {
  echo "installing libssl-dev"; apt-get update -qq && apt-get install -y -qq libssl-dev pkg-config; }
if [ "${SOAK_SKIP_BUILD:-0}" != 1 ]; then
  nice -n 10 swift build -c release --scratch-path .build-soak --product pushhub
fi
extra=()
if [ "${SOAK_HEAPSTATS:-1}" = 1 ]; then
  # The allocator's in-use and free bytes per second, from a thread LD_PRELOADed into the hub.
  mkdir -p .build-soak
  cc -O2 -shared -fPIC -o .build-soak/heapstats.so bench/soak/heapstats.c -lpthread
  extra+=(--heapstats "$PWD/.build-soak/heapstats.so")
fi
exec nice -n "${SOAK_NICE:-5}" .venv/bin/python bench/soak/soak.py "$mode" \
  --bin "$PWD/.build-soak/release/pushhub" "${extra[@]}" "$@"
