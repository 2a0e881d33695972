#!/usr/bin/env bash
# Runs e2e test files again and again, to show that they pass every time and
# not by luck of timing: `tests/e2e/repeat.sh [COUNT] [FILE...]` (default 20
# runs of tests/e2e/live.test.mjs) against CHESSD_BIN (default build/chessd).
# Every run is a fresh node --test process (fresh redis-server, replicas and
# nginx). Prints one line a run (its result, duration and the figures the
# tests print, the "# " lines of their output) and stops at the first failed
# run, whose whole output it prints. Exits 0 only when every run passed.
set -uo pipefail
cd "$(dirname "$0")/../.."
count=${1:-20}
shift || true
files=("$@")
((${#files[@]})) || files=(tests/e2e/live.test.mjs)
[[ $count =~ ^[1-9][0-9]*$ ]] || { echo "repeat.sh: COUNT must be a positive integer, got '$count'" >&2; exit 2; }
export CHESSD_BIN="${CHESSD_BIN:-build/chessd}"
[[ -x $CHESSD_BIN ]] || { echo "repeat.sh: $CHESSD_BIN is not an executable; build it first (make) or set CHESSD_BIN" >&2; exit 2; }
out=$(mktemp "${TMPDIR:-/tmp}/chessd-repeat.XXXXXX") || exit 2
trap 'rm -f "$out"' EXIT
for ((run = 1; run <= count; run++)); do
    start=$(date +%s.%N)
    node --test --test-timeout=120000 "${files[@]}" >"$out" 2>&1
    status=$?
    took=$(awk -v s="$start" -v e="$(date +%s.%N)" 'BEGIN { printf "%.1f", e - s }')
    summary=$(grep -E '^# (pass|fail) ' "$out" | tr '\n' ' ')
    echo "run $run/$count: $([[ $status == 0 ]] && echo passed || echo FAILED) in ${took} s; ${summary}"
    grep -E '^# (fan-out|kill:|redis restart:|flag announced|long-poll woken|[0-9]+ streams:)' "$out" | sed 's/^/    /'
    if ((status != 0)); then
        echo "---- output of the failed run $run ----"
        cat "$out"
        exit 1
    fi
done
echo "all $count runs passed"
