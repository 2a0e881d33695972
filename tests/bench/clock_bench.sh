#!/usr/bin/env bash
# clock_bench.sh: what a move costs chessd on a clock of periods and delay,
# against a move on a Fischer clock, in the same invocation. Runs
# tests/bench/game_bench.sh on one redis-server with games made on each
# clock, in rounds whose order alternates, and prints the median of the
# rounds' ratios of chessd's CPU per move (the goal: at most 1.05).
#
#   usage: tests/bench/clock_bench.sh [path/to/chessd]     (run by `make bench`)
#
# CLOCK_BENCH_ROUNDS (default 3, 1 to 9) sets the rounds; every setting of
# game_bench.sh but BENCH_GAME_BODY applies. Exits non-zero when a run does;
# no figure is asserted.

set -u -o pipefail

CHESSD=${1:-build/chessd}
ROUNDS=${CLOCK_BENCH_ROUNDS:-3}
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
fail() { echo "clock_bench: FAIL: $*" >&2; exit 1; }
[[ $ROUNDS =~ ^[1-9]$ ]] || fail "CLOCK_BENCH_ROUNDS must be 1 to 9, got '$ROUNDS'"
TMP=$(mktemp -d "${TMPDIR:-/tmp}/clock_bench.XXXXXX") || fail "mktemp failed"
trap 'rm -rf "$TMP"' EXIT

# A day each, so that no flag falls in a run; the same line of moves on both.
FISCHER='{"clock":{"initial_ms":86400000,"increment_ms":2000}}'
PERIODS='{"clock":{"periods":[{"moves":40,"ms":43200000},{"moves":20,"ms":21600000},{"ms":21600000}],'
PERIODS+='"delay_ms":5000,"delay_mode":"simple"}}'

# run NAME BODY: one game_bench run; prints its CPU per move of chessd.
run() {
    BENCH_REDIS=single BENCH_GAME_BODY="$2" "$HERE/game_bench.sh" "$CHESSD" >"$TMP/$1.out" 2>&1 ||
        { cat "$TMP/$1.out" >&2; fail "game_bench.sh ($1) failed"; }
    awk -F': ' '/^cpu us per move chessd: / { v = $2 } END { print v }' "$TMP/$1.out"
}

ratios=()
for ((r = 1; r <= ROUNDS; r++)); do
    if ((r % 2)); then
        fischer=$(run "fischer.$r" "$FISCHER")
        periods=$(run "periods.$r" "$PERIODS")
    else
        periods=$(run "periods.$r" "$PERIODS")
        fischer=$(run "fischer.$r" "$FISCHER")
    fi
    [[ -n $fischer && -n $periods ]] || fail "round $r printed no CPU per move"
    ratio=$(awk -v p="$periods" -v f="$fischer" 'BEGIN { printf "%.3f", p / f }')
    echo "clock_bench: round $r: chessd CPU per move, Fischer $fischer us, periods and delay $periods us: $ratio"
    ratios+=("$ratio")
done
median=$(printf '%s\n' "${ratios[@]}" | sort -n | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }')
echo "clock_bench: a move with periods and delay / a Fischer move, chessd CPU (median of $ROUNDS): $median   (goal <= 1.05)"
