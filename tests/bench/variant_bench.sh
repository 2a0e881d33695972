#!/usr/bin/env bash
# variant_bench.sh: the variants' speed against references in the same run.
#
#   usage: tests/bench/variant_bench.sh [path/to/chessd]     (run by `make bench`)
#
# 1. Perft from each variant's start (depth 5; horde 6) against
#    Fairy-Stockfish's `go perft` on the same position, both timed as whole
#    processes (start-up included), the minimum of BENCH_REPS runs (default
#    3), node counts compared. Atomic runs against Fairy-Stockfish's chess at
#    the same depth: its 11.1 has no atomic. Goal: chessd at most 0.5 of its
#    time in every variant.
# 2. POST /v1/position/moves?legal_moves=false with the same 30-ply line in
#    crazyhouse and in standard chess (wrk, BENCH_DURATION seconds each,
#    interleaved): goal crazyhouse within 1.2x of standard (req/s ratio >=
#    0.83). Without legal_moves=false the answers differ: the crazyhouse
#    position lists every drop of its full pockets (23 KB against 9 KB).
# No absolute-time assertions: exits non-zero only when a tool is missing,
# a count disagrees or a server fails.
set -u -o pipefail

CHESSD=${1:-build/chessd}
FSF=${FAIRY_STOCKFISH:-/usr/games/fairy-stockfish}
REPS=${BENCH_REPS:-3}
DURATION=${BENCH_DURATION:-5}
HERE=$(cd "$(dirname "$0")" && pwd)
die() { echo "variant_bench: FAIL: $*" >&2; exit 1; }
# shellcheck source=tests/bench/lib.sh
. "$HERE/lib.sh"
[[ -x $CHESSD ]] || die "chessd binary '$CHESSD' not found (build it first)"
[[ -x $FSF ]] || die "'$FSF' not found: apt-get install fairy-stockfish"
need wrk wrk
need curl curl

now_ns() { local t=${EPOCHREALTIME//[!0-9]/}; echo $((10#$t * 1000)); }
min_of() { printf '%s\n' "$@" | sort -n | head -n 1; }

# chessd variant | engine variant | depth
CASES=(
    "crazyhouse|crazyhouse|5" "atomic|chess|5" "antichess|antichess|5" "kingOfTheHill|kingofthehill|5"
    "threeCheck|3check|5" "horde|horde|6" "racingKings|racingkings|5" "seirawan|seirawan|5"
)
echo "variant_bench: chessd=$CHESSD fairy-stockfish=$FSF, min of $REPS whole-process runs"
printf '  %-14s %5s %10s | %8s | %8s | %6s\n' variant depth nodes chessd_s fsf_s ratio
worst=0
for c in "${CASES[@]}"; do
    IFS='|' read -r variant engine depth <<<"$c"
    cd_t=() sf_t=()
    for ((i = 0; i < REPS; i++)); do
        t0=$(now_ns)
        nodes=$("$CHESSD" perft --variant "$variant" "$depth" | tail -n 1) || die "chessd perft --variant $variant"
        t1=$(now_ns)
        cd_t+=($((t1 - t0)))
        t0=$(now_ns)
        sf_nodes=$(printf 'uci\nsetoption name UCI_Variant value %s\nposition startpos\ngo perft %s\nquit\n' \
            "$engine" "$depth" | "$FSF" 2>&1 | sed -n 's/^Nodes searched: *\([0-9]*\).*/\1/p')
        t1=$(now_ns)
        sf_t+=($((t1 - t0)))
    done
    [[ $variant == atomic || $nodes == "$sf_nodes" ]] || die "$variant perft $depth: chessd $nodes, fairy-stockfish $sf_nodes"
    cd_min=$(min_of "${cd_t[@]}") sf_min=$(min_of "${sf_t[@]}")
    ratio=$(awk -v a="$cd_min" -v b="$sf_min" 'BEGIN { printf "%.3f", a / b }')
    worst=$(awk -v a="$ratio" -v b="$worst" 'BEGIN { print (a > b ? a : b) }')
    printf '  %-14s %5s %10s | %8.3f | %8.3f | %6s\n' "$variant" "$depth" "$nodes" \
        "$(awk -v n="$cd_min" 'BEGIN { print n / 1e9 }')" "$(awk -v n="$sf_min" 'BEGIN { print n / 1e9 }')" "$ratio"
done
echo "ratio variant perft worst, chessd / fairy-stockfish: $worst (goal <= 0.5)"

# ---- the moves route, crazyhouse against standard
TMP=$(mktemp -d)
trap 'stop_pid "${CHESSD_PID:-}" 5; rm -rf "$TMP"' EXIT
PORT=$((20000 + RANDOM % 9000))
"$CHESSD" serve --port "$PORT" --engine none >/dev/null 2>"$TMP/chessd.err" &
CHESSD_PID=$!
for ((i = 0; i < 50; i++)); do curl -fs "http://127.0.0.1:$PORT/healthz" >/dev/null && break; sleep 0.1; done
curl -fs "http://127.0.0.1:$PORT/healthz" >/dev/null || die "chessd did not start: $(cat "$TMP/chessd.err")"
LINE='"e4","e5","Nf3","Nc6","Bc4","Bc5","c3","Nf6","d4","exd4","cxd4","Bb4+","Bd2","Bxd2+","Nbxd2","d5",'
LINE+='"exd5","Nxd5","Qb3","Nce7","O-O","O-O","Rfe1","c6","a4","Qb6","Qxb6","axb6","Ne4","Bf5"'
for variant in standard crazyhouse; do
    body="{\"variant\":\"$variant\",\"moves\":[$LINE]}"
    printf 'wrk.method = "POST"\nwrk.body = %s\nwrk.headers["Content-Type"] = "application/json"\n' \
        "$(printf '%s' "$body" | python3 -c 'import json,sys; print(json.dumps(sys.stdin.read()))')" > "$TMP/$variant.lua"
    code=$(curl -s -o "$TMP/$variant.json" -w '%{http_code}' -H 'Content-Type: application/json' -d "$body" \
        "http://127.0.0.1:$PORT/v1/position/moves?legal_moves=false")
    [[ $code == 200 ]] || die "$variant moves: HTTP $code $(head -c 300 "$TMP/$variant.json")"
done
declare -A RPS
for ((i = 0; i < REPS; i++)); do
    for variant in standard crazyhouse; do
        r=$(wrk -t2 -c16 -d"${DURATION}s" -s "$TMP/$variant.lua" \
            "http://127.0.0.1:$PORT/v1/position/moves?legal_moves=false" |
            awk '/^Requests\/sec:/ { print $2 }')
        RPS[$variant]="${RPS[$variant]:-} $r"
    done
done
std=$(median "${RPS[standard]}") zh=$(median "${RPS[crazyhouse]}")
echo "POST /v1/position/moves, 30 plies: standard $std req/s, crazyhouse $zh req/s (median of $REPS)"
echo "ratio crazyhouse/standard moves req/s: $(awk -v a="$zh" -v b="$std" 'BEGIN { printf "%.3f", a / b }') (goal >= 0.83)"
