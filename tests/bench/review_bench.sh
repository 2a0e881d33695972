#!/usr/bin/env bash
# review_bench.sh: what a durable whole-game review costs beyond the engine's
# own searches. A 40-move game (80 plies, moves drawn from a fixed seed) is
# reviewed at movetime 1 s a position on one worker, against 80 direct
# Stockfish searches of 1 s of the same positions; prints the ratio (goal:
# at most 1.1; the review searches 81 positions, the start too).
#
#   usage: tests/bench/review_bench.sh [path/to/chessd]     (run by `make bench`)
#          BENCH_MOVETIME_MS=100 tests/bench/review_bench.sh (a short run, to try it)
#
# Needs stockfish (/usr/games/stockfish, or BENCH_STOCKFISH), redis-server,
# redis-cli, curl and jq; it installs nothing and fails with a clear message
# if one is missing. Takes about three minutes at 1 s a position.
set -euo pipefail

HERE=$(cd "$(dirname "$0")" && pwd)
CHESSD=${1:-build/chessd}
STOCKFISH=${BENCH_STOCKFISH:-/usr/games/stockfish}
MOVETIME_MS=${BENCH_MOVETIME_MS:-1000}
PLIES=${BENCH_PLIES:-80}
SEED=${BENCH_SEED:-7}
TOKEN_SECRET=review-bench-secret-0123456789abcdef

die() { echo "review_bench: FAIL: $*" >&2; exit 1; }
note() { echo "review_bench: $*"; }
# shellcheck source=tests/bench/lib.sh
source "$HERE/lib.sh"

[[ -x $CHESSD ]] || die "chessd binary '$CHESSD' not found or not executable (build it first)"
[[ -x $STOCKFISH ]] || die "'$STOCKFISH' not found: install the Debian package 'stockfish'"
need redis-server redis-server
need redis-cli redis-tools
need curl curl
need jq jq
[[ $MOVETIME_MS =~ ^[1-9][0-9]*$ ]] || die "BENCH_MOVETIME_MS must be a positive integer"
[[ $PLIES =~ ^[1-9][0-9]*$ ]] || die "BENCH_PLIES must be a positive integer"

TMP=$(mktemp -d)
PIDS=()
cleanup() {
    local p
    for p in "${PIDS[@]}"; do stop_pid "$p" 5; done
    rm -rf "$TMP"
}
trap cleanup EXIT

start_redis "$TMP"
PIDS+=("$REDIS_PID")
start_chessd "$CHESSD" "$TMP/chessd.err" --redis "redis://127.0.0.1:$REDIS_PORT" --engine "$STOCKFISH" \
    --engine-workers 1 --engine-max-think-ms $((MOVETIME_MS + 2000)) --variant-engine none --rate-limit-create 0
PIDS+=("$CHESSD_PID")

now_ms() { date +%s%3N; }
api() { curl -sS -H 'Content-Type: application/json' "$@"; }

# --------------------------------------------------------------- the game
# Moves drawn among the legal ones (a fixed seed), again from the start when
# a game ends before PLIES (a mate or a draw drawn by chance).
play_game() {
    local game id white black version moves=() turn pick count tries
    for ((tries = 0; tries < 20; tries++)); do
        RANDOM=$((SEED + tries))
        game=$(api "$CHESSD_URL/v1/games" -d '{}')
        id=$(jq -r .id <<<"$game") white=$(jq -r .tokens.white <<<"$game") black=$(jq -r .tokens.black <<<"$game")
        version=$(jq -r .version <<<"$game")
        moves=()
        while ((${#moves[@]} < PLIES)); do
            [[ $(jq -r .position.status <<<"$game") == active ]] || break
            count=$(jq '.position.legal_moves | length' <<<"$game")
            pick=$(jq -r ".position.legal_moves[$((RANDOM % count))].uci" <<<"$game")
            turn=$white; ((${#moves[@]} % 2)) && turn=$black
            game=$(api "$CHESSD_URL/v1/games/$id/moves" -H "Authorization: Bearer $turn" \
                -d "{\"move\": \"$pick\", \"expected_version\": $version}")
            version=$(jq -r .version <<<"$game")
            [[ $version =~ ^[0-9]+$ ]] || die "move $pick refused: $game"
            game=$(api "$CHESSD_URL/v1/games/$id")
            moves+=("$pick")
        done
        if ((${#moves[@]} == PLIES)) && [[ $(jq -r .position.status <<<"$game") == active ]]; then
            turn=$white; ((PLIES % 2)) && turn=$black
            api "$CHESSD_URL/v1/games/$id/resign" -H "Authorization: Bearer $turn" \
                -d "{\"expected_version\": $version}" | jq -e '.version' >/dev/null || die "resign refused"
            GAME_ID=$id GAME_MOVES=("${moves[@]}")
            return 0
        fi
    done
    die "no game of $PLIES plies in 20 tries"
}
play_game
note "game $GAME_ID: $PLIES plies; $(("$PLIES" + 1)) positions to review at movetime $MOVETIME_MS ms"

# --------------------------------------------------------------- the review
start=$(now_ms)
status=$(api "$CHESSD_URL/v1/games/$GAME_ID/review" -d "{\"movetime_ms\": $MOVETIME_MS}" | jq -r .status)
[[ $status == queued || $status == running ]] || die "POST review: $status"
limit_ms=$(((PLIES + 1) * (MOVETIME_MS + 1000) * 3 + 60000))
while :; do
    status=$(api "$CHESSD_URL/v1/games/$GAME_ID/review" | jq -r .status)
    [[ $status == done ]] && break
    [[ $status == failed ]] && die "the review failed"
    (($(now_ms) - start < limit_ms)) || die "the review took more than $limit_ms ms"
    sleep 0.05
done
review_ms=$(($(now_ms) - start))
note "review: ${review_ms} ms"
stop_pid "$CHESSD_PID" 5

# --------------------------------------------------------------- direct
# The same Stockfish, started as chessd starts it (nice +10, one thread,
# 16 MB of hash), each position after a ply searched for MOVETIME_MS.
coproc SF { exec nice -n 10 "$STOCKFISH" 2>/dev/null; }
sf() { echo "$1" >&"${SF[1]}"; }
sf_until() { local line; while read -r line <&"${SF[0]}"; do [[ $line == "$1"* ]] && return 0; done; die "stockfish stopped"; }
sf uci; sf_until uciok
sf "setoption name Threads value 1"; sf "setoption name Hash value 16"; sf isready; sf_until readyok
sf ucinewgame; sf isready; sf_until readyok
start=$(now_ms)
for ((k = 1; k <= PLIES; k++)); do
    sf "position startpos moves ${GAME_MOVES[*]:0:k}"
    sf "go movetime $MOVETIME_MS"
    sf_until bestmove
done
direct_ms=$(($(now_ms) - start))
sf quit
note "direct: ${direct_ms} ms for $PLIES searches"
ratio=$(awk -v a="$review_ms" -v b="$direct_ms" 'BEGIN { printf "%.3f", a / b }')
note "ratio review / direct: $ratio (goal <= 1.1)"
awk -v r="$ratio" 'BEGIN { exit !(r <= 1.1) }' || note "ABOVE GOAL"
