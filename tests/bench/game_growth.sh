#!/usr/bin/env bash
# game_growth.sh: how the cost of a move grows with the length of the game.
# chessd CPU, bytes sent to Redis, answer bytes and latency per move in plies
# 551-600 of a 600-ply game against plies 1-50 (goal: late/early <= 1.2 for
# CPU, Redis bytes and answer bytes).
#
#   usage: tests/bench/game_growth.sh [path/to/chessd]     (run by `make bench`)
#
# What runs:
#  * a private redis-server on a free loopback port (save "", appendonly no)
#    and `chessd serve --port 0 --rate-limit-create 0` on another, with
#    CHESSD_TOKEN_SECRET set and no other CHESSD_* setting (so the default
#    --max-game-plies, 1000, applies).
#  * The line: tests/bench/game_growth.line, 600 plies in UCI, written by
#    game_growth_line.mjs (a seeded random walk over chess.js: no capture,
#    promotion or check, no position more than 3 times, halfmove clock below
#    140), so the game never ends by itself.  It is checked first through
#    chessd's stateless API: POST /v1/position/moves with all 600 moves (the
#    limit is 1000 per request) must answer 200, status "active", 600 moves
#    and the end FEN recorded in the file.
#  * One client, game_growth_client.mjs (node, its standard library only),
#    plays request after request on one keep-alive connection (an http.Agent
#    with one socket; the connections it used are counted and printed):
#    POST /v1/games {}, then each ply as POST /v1/games/{id}/moves
#    {"move": ..., "expected_version": N} with the token of the side to move.
#    The status and the ETag of a move's answer are checked: each answer
#    must be 200 with ETag "N+1" and a body of its Content-Length.  The body
#    is counted, and so is the part of it that is the position's legal-move
#    list (position.legal_moves, as JSON): that list grows with the mobility
#    of the pieces, not with the game's length, so the answer's size is
#    shown with and without it, beside the mean number of legal moves.  (A bash
#    client on /dev/tcp was tried: bash writes a request line by line, so
#    every request waited ~40 ms for Nagle and delayed ACKs.)
#
# Windows: early = plies 1-50, late = plies 551-600; plies 51-550 are played
# unmeasured.  Around each window the client samples chessd's utime+stime
# (/proc/PID/stat), the on-CPU nanoseconds of chessd's and redis-server's
# threads (/proc/PID/task/*/schedstat) and Redis's INFO stats
# total_net_input_bytes (bytes sent to Redis: the commands and the records
# they write) and total_net_output_bytes (bytes Redis answered: the records
# read back).  The INFO command's own bytes, measured by two INFOs in a row
# before the games, are taken off; INFO runs outside the CPU samples.
#
# utime+stime come in clock ticks (10 ms) and a window of 50 moves is a few
# ticks or less, so the windows are summed over many games: rounds of one
# game of 600 plies (one early and one late window) and BENCH_EARLY_REPLAYS
# games of 50 plies (the early window again, in a new game: the same
# requests on the same records), until at least BENCH_GAMES rounds are done
# and each window kind has counted BENCH_MIN_TICKS ticks of chessd CPU (the
# rounding then costs about 1%), or no new round once BENCH_MAX_SECONDS have
# passed.  Replaying only the early window keeps the late window, which needs
# 550 plies of lead-in, from being the only one with few ticks; interleaving
# the two puts them under the same machine noise.  schedstat is printed
# beside utime+stime as a cross-check that does not round (it stays exact when
# a faster chessd makes the ticks few).  After each 600-ply game a GET must
# show version 601, 600 moves and status active.
#
# Printed for each window kind, per move: chessd CPU (ticks, and schedstat),
# redis-server CPU (schedstat), bytes sent to and received from Redis, answer
# body bytes, latency (p50, p90, mean: from the call to the last byte of the
# answer, in the client) and the ratio late/early; the size in Redis of a
# game's record (every key naming the game: MEMORY USAGE, and the value
# bytes: STRLEN, or HSTRLEN of each hash field) after ply 50 and after ply
# 600; the windows, moves and ticks counted.  Nothing is pinned: chessd,
# redis-server and the client share the CPUs.  No figure is asserted: the
# script exits non-zero only when a tool is missing, a server does not start,
# or chessd answers wrongly (the line check, a create that is not 201 with
# ETag "1", a move that is not 200 with the expected ETag, a short body, a
# game read back that does not match).
#
# Environment: BENCH_GAMES (rounds at least, default 8), BENCH_EARLY_REPLAYS
# (50-ply games per round, default 4), BENCH_MIN_TICKS (ticks each window
# kind must count, default 100), BENCH_MAX_SECONDS (no new round after this,
# default 90), BENCH_THREADS (chessd --threads; default chessd's own).

set -u -o pipefail

CHESSD=${1:-build/chessd}
GAMES=${BENCH_GAMES:-8}
REPLAYS=${BENCH_EARLY_REPLAYS:-4}
MIN_TICKS=${BENCH_MIN_TICKS:-100}
MAX_SECONDS=${BENCH_MAX_SECONDS:-90}
THREADS=${BENCH_THREADS:-}
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
LINE_FILE=$HERE/game_growth.line
TOKEN_SECRET=game-growth-secret-0123456789abcdef
PLIES=600 WINDOW=50
LATE=$((PLIES - WINDOW + 1))

die() { echo "game_growth: FAIL: $*" >&2; exit 1; }
note() { echo "game_growth: $*"; }
# shellcheck source=tests/bench/lib.sh
source "$HERE/lib.sh"

# ---------------------------------------------------------------- tools
[[ -x $CHESSD ]] || die "chessd binary '$CHESSD' not found or not executable (build it first)"
need redis-server redis-server
need redis-cli redis-tools
need curl curl
need jq jq
need awk gawk
need node nodejs
for v in GAMES REPLAYS MIN_TICKS MAX_SECONDS; do
    [[ ${!v} =~ ^[0-9]+$ ]] || die "$v must be a non-negative integer, got '${!v}'"
done
((GAMES >= 1)) || die "BENCH_GAMES must be >= 1"
[[ -z $THREADS || $THREADS =~ ^[1-9][0-9]*$ ]] || die "BENCH_THREADS must be a positive integer, got '$THREADS'"

# ---------------------------------------------------------------- the line
[[ -r $LINE_FILE ]] || die "cannot read $LINE_FILE"
mapfile -t LINE < <(grep -v -e '^#' -e '^$' "$LINE_FILE")
LINE_END_FEN=$(sed -n 's/^# end: //p' "$LINE_FILE")
((${#LINE[@]} == PLIES)) || die "$LINE_FILE holds ${#LINE[@]} moves, expected $PLIES"
[[ -n $LINE_END_FEN ]] || die "$LINE_FILE has no '# end: FEN' line"

# ---------------------------------------------------------------- cleanup
TMP=$(mktemp -d "${TMPDIR:-/tmp}/game_growth.XXXXXX") || die "mktemp failed"
CHESSD_PID='' REDIS_PID='' CLIENT_PID=''
# shellcheck disable=SC2317  # invoked by the trap
cleanup() {
    stop_pid "$CLIENT_PID" 2
    stop_pid "$CHESSD_PID" 5
    stop_pid "$REDIS_PID" 5
    rm -rf "$TMP"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

# ---------------------------------------------------------------- servers
start_redis "$TMP"
rcli() { redis-cli -h 127.0.0.1 -p "$REDIS_PORT" "$@"; }
chessd_args=(--shutdown-grace 1 --rate-limit-create 0 --redis "redis://127.0.0.1:$REDIS_PORT/0")
[[ -n $THREADS ]] && chessd_args+=(--threads "$THREADS")
start_chessd "$CHESSD" "$TMP/chessd.err" "${chessd_args[@]}"
hz=$(curl -sS -m 5 -o /dev/null -w '%{http_code}' "$CHESSD_URL/healthz") || die "curl GET $CHESSD_URL/healthz failed"
[[ $hz == 200 ]] || die "chessd GET /healthz: expected 200, got $hz"

# ---------------------------------------------------------------- check the line
moves_json=$(printf '"%s",' "${LINE[@]}")
r=$(curl -sS -m 10 -X POST -H 'Content-Type: application/json' --data "{\"moves\":[${moves_json%,}]}" \
    "$CHESSD_URL/v1/position/moves?legal_moves=false") || die "curl POST /v1/position/moves failed"
got=$(jq -r '"\(.position.status)|\(.moves | length)|\(.position.fen)"' <<<"$r" 2>/dev/null)
[[ $got == "active|$PLIES|$LINE_END_FEN" ]] ||
    die "the line of $LINE_FILE is not a $PLIES-ply active game ending at '$LINE_END_FEN' for chessd: ${r:0:400}"

# ---------------------------------------------------------------- play
note "chessd=$CHESSD ($CHESSD_URL, $CHESSD_THREADS threads)  redis-server $(redis-server --version | awk '{ print $3 }' | sed 's/^v=//') (127.0.0.1:$REDIS_PORT)"
note "line: $PLIES plies from $LINE_FILE (POST /v1/position/moves: active, the recorded end FEN)"
note "node $(node --version) client, one connection; not pinned: chessd, redis-server and the client share CPUs $(awk '/^Cpus_allowed_list:/ { print $2 }' /proc/self/status)"
config=$(jq -nc --arg url "$CHESSD_URL" --arg lineFile "$LINE_FILE" \
    --argjson chessdPid "$CHESSD_PID" --argjson redisPid "$REDIS_PID" --argjson redisPort "$REDIS_PORT" \
    --argjson plies "$PLIES" --argjson window "$WINDOW" --argjson games "$GAMES" --argjson replays "$REPLAYS" \
    --argjson minTicks "$MIN_TICKS" --argjson maxSeconds "$MAX_SECONDS" '$ARGS.named') || die "jq cannot build the client's configuration"
node "$HERE/game_growth_client.mjs" "$config" >"$TMP/client.out" 2>"$TMP/client.err" &
CLIENT_PID=$!
wait "$CLIENT_PID" || die "the client stopped: $(head -c 2000 "$TMP/client.err")"
CLIENT_PID=''
declare -A G
read -r -a kvs <<<"$(grep '^GROWTH ' "$TMP/client.out")"
for kv in "${kvs[@]}"; do [[ $kv == *=* ]] && G[${kv%%=*}]=${kv#*=}; done
((${G[late_moves]:-0} > 0 && ${G[early_moves]:-0} > 0)) || die "the client printed no figures: $(head -c 2000 "$TMP/client.out" "$TMP/client.err")"

# The record's size: every key naming the game, MEMORY USAGE and the value
# bytes (STRLEN, or HSTRLEN of each field of a hash), summed -> "memory value".
key_sizes() {
    local key mem=0 val=0 m f
    while IFS= read -r key; do
        [[ -n $key ]] || continue
        m=$(rcli MEMORY USAGE "$key" SAMPLES 0)
        mem=$((mem + ${m:-0}))
        case $(rcli TYPE "$key") in
        string) val=$((val + $(rcli STRLEN "$key"))) ;;
        hash)
            while IFS= read -r f; do
                [[ -n $f ]] && val=$((val + $(rcli HSTRLEN "$key" "$f")))
            done < <(rcli --raw HKEYS "$key")
            ;;
        esac
    done < <(rcli --scan --pattern "*$1*")
    echo "$mem $val"
}
read -r m50 v50 <<<"$(key_sizes "${G[game_short]}")"
read -r m600 v600 <<<"$(key_sizes "${G[game_full]}")"

# ---------------------------------------------------------------- report
CLK_TCK=$(getconf CLK_TCK 2>/dev/null || echo 100)
US_TICK=$((1000000 / CLK_TCK))
per_move() { awk -v x="$1" -v n="$2" -v f="${3:-1}" 'BEGIN { printf "%.1f", x * f / n }'; }
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (b > 0) printf "%.2f", a / b; else print "n/a" }'; }
declare -A F   # F[kind_figure], kind early or late
for k in early late; do
    n=${G[${k}_moves]}
    F[${k}_cd]=$(per_move "${G[${k}_chessd_ticks]}" "$n" "$US_TICK")
    F[${k}_ns]=$(per_move "${G[${k}_chessd_ns]}" "$n" 0.001)
    F[${k}_rd]=$(per_move "${G[${k}_redis_ns]}" "$n" 0.001)
    F[${k}_in]=$(per_move "${G[${k}_redis_in]}" "$n")
    F[${k}_out]=$(per_move "${G[${k}_redis_out]}" "$n")
    F[${k}_bytes]=$(per_move "${G[${k}_answer_bytes]}" "$n")
    F[${k}_rest]=$(per_move "$((G[${k}_answer_bytes] - G[${k}_legal_bytes]))" "$n")
    F[${k}_legal]=$(per_move "${G[${k}_legal_moves]}" "$n")
    for q in p50 p90 mean; do F[${k}_$q]=$(awk -v us="${G[${k}_${q}_us]}" 'BEGIN { printf "%.3f", us / 1000 }'); done
done
row() { printf '  %-34s %12s %14s %11s\n' "$1" "${F[early_$2]}" "${F[late_$2]}" "$(ratio "${F[late_$2]}" "${F[early_$2]}")"; }

echo
printf '  %-34s %12s %14s %11s\n' 'per move' "plies 1-$WINDOW" "plies $LATE-$PLIES" 'late/early'
row 'chessd CPU (us)' cd
row '  the same from schedstat (us)' ns
row 'redis-server CPU, schedstat (us)' rd
row 'bytes sent to Redis' in
row 'bytes received from Redis' out
row 'answer body bytes (mean)' bytes
row '  without the legal-move list' rest
row '  legal moves in the position' legal
row 'latency p50 (ms)' p50
row 'latency p90 (ms)' p90
row 'latency mean (ms)' mean
echo
echo "  ${G[rounds]} games of $PLIES plies and $((G[rounds] * REPLAYS)) of $WINDOW plies in ${G[elapsed]} s, one client, ${G[connections]} connection(s)"
echo "  early: ${G[early_windows]} windows, ${G[early_moves]} moves, ${G[early_chessd_ticks]} chessd ticks;" \
    "late: ${G[late_windows]} windows, ${G[late_moves]} moves, ${G[late_chessd_ticks]} chessd ticks (1 tick = $US_TICK us)"
echo "  the game record in Redis after ply $WINDOW: $v50 bytes of value, MEMORY USAGE $m50;" \
    "after ply $PLIES: $v600 bytes of value, MEMORY USAGE $m600 (value ratio $(ratio "$v600" "$v50"))"
((G[early_chessd_ticks] < MIN_TICKS || G[late_chessd_ticks] < MIN_TICKS)) &&
    echo "  warning: a window kind counted fewer than $MIN_TICKS chessd ticks within ${MAX_SECONDS} s: its CPU figure is coarse"
echo
echo "goal: late/early <= 1.2 for chessd CPU, bytes sent to Redis and answer bytes per move"
echo "chessd CPU per move us: ${F[early_cd]} -> ${F[late_cd]}"
echo "bytes sent to Redis per move: ${F[early_in]} -> ${F[late_in]}"
echo "answer bytes per move: ${F[early_bytes]} -> ${F[late_bytes]}"
echo "ratio chessd CPU late/early: $(ratio "${F[late_cd]}" "${F[early_cd]}")"
echo "ratio bytes sent to Redis late/early: $(ratio "${F[late_in]}" "${F[early_in]}")"
echo "ratio answer bytes late/early: $(ratio "${F[late_bytes]}" "${F[early_bytes]}")"
echo "ratio answer bytes without the legal-move list late/early: $(ratio "${F[late_rest]}" "${F[early_rest]}")"
echo "ratio legal moves in the position late/early: $(ratio "${F[late_legal]}" "${F[early_legal]}")"
echo "ratio latency p50 late/early: $(ratio "${F[late_p50]}" "${F[early_p50]}")"
exit 0
