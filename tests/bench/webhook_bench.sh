#!/usr/bin/env bash
# webhook_bench.sh: what webhooks cost, in two parts, each against a
# reference in the same run.
#  1. A move's CPU in chessd with three webhook subscriptions on its game
#     against the same move without: tests/bench/game_bench.sh run in
#     rounds, the two kinds of game turn about, on replicas that queue the
#     events but deliver none (--webhook-workers 0), so the figure is the
#     move's own. Reported: the medians of "cpu us per move chessd" and
#     their ratio (the goal: at most 1.1).
#  2. Deliveries a second: WEBHOOK_BENCH_GAMES games with three
#     subscriptions each play WEBHOOK_BENCH_PLIES plies on a replica that
#     delivers nothing; then one that does (--webhook-workers
#     WEBHOOK_BENCH_WORKERS) starts, and the time until a local receiver
#     (node, every signature checked) has every event is measured. Reported:
#     deliveries/s (the goal: at least 2,000) and chessd's CPU per delivery.
#
#   usage: tests/bench/webhook_bench.sh [path/to/chessd]     (run by `make bench`)
#
# WEBHOOK_BENCH_ROUNDS (default 3), WEBHOOK_BENCH_GAMES (200),
# WEBHOOK_BENCH_PLIES (20), WEBHOOK_BENCH_WORKERS (32), WEBHOOK_BENCH_PARTS
# ("1 2"; "2" runs part 2 alone); BENCH_DURATION and the rest of
# game_bench.sh's settings apply to part 1. No figure is
# asserted; a run that fails (a missing event, a bad signature) exits non-zero.

set -u -o pipefail

CHESSD=${1:-build/chessd}
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
ROUNDS=${WEBHOOK_BENCH_ROUNDS:-3}
GAMES=${WEBHOOK_BENCH_GAMES:-200}
PLIES=${WEBHOOK_BENCH_PLIES:-20}
WORKERS=${WEBHOOK_BENCH_WORKERS:-32}
PARTS=${WEBHOOK_BENCH_PARTS:-1 2}
fail() { echo "webhook_bench: FAIL: $*" >&2; exit 1; }
[[ $ROUNDS =~ ^[1-9]$ ]] || fail "WEBHOOK_BENCH_ROUNDS must be 1 to 9"
[[ $PARTS =~ ^(1|2|1\ 2)$ ]] || fail "WEBHOOK_BENCH_PARTS must be \"1\", \"2\" or \"1 2\""
part() { [[ " $PARTS " == *" $1 "* ]]; }
[[ -x $CHESSD ]] || fail "chessd binary '$CHESSD' not found"
TMP=$(mktemp -d "${TMPDIR:-/tmp}/webhook_bench.XXXXXX") || fail "mktemp failed"
PIDS=()
cleanup() { for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null; done; rm -rf "$TMP"; }
trap cleanup EXIT

value() { awk -v name="$2: " 'index($0, name) == 1 { v = substr($0, length(name) + 1) } END { print v }' "$1"; }
median() { printf '%s\n' "$@" | sort -g | awk '{ v[NR] = $1 } END { if (NR % 2) printf "%.1f", v[(NR + 1) / 2]; else printf "%.1f", (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }

# A service key that may create games, and its file.
"$CHESSD" keys new bench games:create games:read-live >"$TMP/key.out" || fail "chessd keys new failed"
KEY=$(sed -n 1p "$TMP/key.out")
# Its line, with no quota: the bench creates games as fast as it can.
sed -n 2p "$TMP/key.out" | awk '{ $3 = "requests=0/s,creates=0/s,bulk-games=0/s"; print }' >"$TMP/keys"

# ------------------------------------------------------------ part 1
# The subscriptions point at a port nobody listens on: nothing is delivered
# (no replica delivers), so the URL only has to pass --webhook-allow.
HOOK='{"url":"http://127.0.0.2:9/hook"}'
WITH="{\"webhooks\":[$HOOK,$HOOK,$HOOK]}"
ARGS="--service-keys-file $TMP/keys --webhook-allow 127.0.0.2/32 --webhook-workers 0"
declare -A CPU
part 1 || ROUNDS=0
for ((round = 1; round <= ROUNDS; round++)); do
    order=(plain hooked)
    ((round % 2 == 0)) && order=(hooked plain)
    for kind in "${order[@]}"; do
        body='{}'
        [[ $kind == hooked ]] && body=$WITH
        label='no subscriptions'
        [[ $kind == hooked ]] && label='3 subscriptions'
        echo "webhook_bench: round $round of $ROUNDS: moves in games with $label"
        BENCH_GAME_BODY=$body BENCH_CREATE_KEY=$KEY BENCH_CHESSD_ARGS=$ARGS "$HERE/game_bench.sh" "$CHESSD" \
            >"$TMP/$kind.$round.out" || { cat "$TMP/$kind.$round.out"; fail "game_bench.sh ($kind) failed"; }
        CPU[$kind/$round]=$(value "$TMP/$kind.$round.out" 'cpu us per move chessd')
        [[ -n ${CPU[$kind/$round]} ]] || fail "game_bench.sh ($kind) printed no CPU per move"
        echo "  cpu us per move chessd: ${CPU[$kind/$round]}"
    done
done
plain=() hooked=()
for ((round = 1; round <= ROUNDS; round++)); do plain+=("${CPU[plain/$round]}") hooked+=("${CPU[hooked/$round]}"); done
P='' H=''
part 1 && P=$(median "${plain[@]}") H=$(median "${hooked[@]}")

# ------------------------------------------------------------ part 2
if part 2; then
    CHESSD_BIN="$CHESSD" node "$HERE/webhook_deliveries.mjs" "$CHESSD" "$TMP/keys" "$KEY" "$GAMES" "$PLIES" "$WORKERS" | tee "$TMP/deliveries.out"
    ((PIPESTATUS[0] == 0)) || fail "the deliveries run failed"
fi

echo
part 1 && echo "webhook_bench: summary (medians of $ROUNDS rounds; goals in brackets)"
part 1 || echo "webhook_bench: summary (goals in brackets)"
if part 1; then
    echo "  cpu us per move chessd, no subscriptions: $P"
    echo "  cpu us per move chessd, 3 subscriptions: $H"
    awk -v p="$P" -v h="$H" 'BEGIN { printf "  ratio (3 subscriptions / none): %.2f [<= 1.1]\n", h / p }'
fi
if part 2; then
    echo "  deliveries/s: $(value "$TMP/deliveries.out" 'deliveries/s') [>= 2000]"
    echo "  chessd cpu us per delivery: $(value "$TMP/deliveries.out" 'chessd cpu us per delivery')"
fi
