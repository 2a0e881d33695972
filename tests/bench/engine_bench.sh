#!/usr/bin/env bash
# engine_bench.sh: what chessd adds to the chess engine's own work, in the
# same run: analyses per second through the API against the same Stockfish
# driven directly over its pipes, and how long a computer's reply in a game
# takes to reach the player's event stream beyond the engine's think.
#
#   usage: tests/bench/engine_bench.sh [path/to/chessd]     (run by `make bench`)
#          BENCH_QUICK=1 tests/bench/engine_bench.sh        (a short run, to try it)
#
# Needs stockfish (/usr/games/stockfish, or BENCH_STOCKFISH), node,
# redis-server, redis-cli, curl and jq (Debian packages stockfish, nodejs,
# redis-server, redis-tools, curl, jq); it installs nothing and fails with a
# clear message if one is missing. The client is tests/bench/engine_bench.mjs
# (node, its standard library only), one process, one request at a time.
#
# 1. Analysis overhead. `chessd serve --redis none --engine-workers 1`, and
#    beside it the same Stockfish binary started by the client the way
#    api/engine/uci.c starts chessd's (its own process at nice +10, stderr to
#    /dev/null; uci, setoption Threads 1, Hash 16 (--engine-hash), UCI_ShowWDL
#    true, UCI_Chess960 false, isready). The positions are the 16 of
#    tests/data/engine_bench.fen (the first positions of Stockfish 15.1's own
#    bench list; each is checked by POST /v1/position first). For each node
#    count N of BENCH_NODES (default "20000 200000") the list is analysed
#    one position after another:
#      - directly: "position fen F" and "go nodes N" written to the pipe, timed
#        until the "bestmove" line is read (no ucinewgame: chessd sends none
#        between analyses either);
#      - through chessd: POST /v1/position/analysis {"fen": F, "nodes": N} on
#        one kept-alive connection, timed until the answer's last byte (each
#        answer checked: 200, a bestmove that starts the first line's pv, not
#        stopped by the deadline).
#    Each position once on each target at the smallest N first, unmeasured
#    (the network is loaded, the hash touched); then BENCH_REPS repetitions
#    (default 5) of the list at each N, interleaved position by position:
#    each position goes to both targets one right after the other (which one
#    first alternates), so that the machine's noise, which changes over
#    seconds, falls on both alike. Both engines go through the same commands
#    in the same order, so their hash tables hold the same and the searches
#    should find the same bestmoves: how many agree is printed (a difference
#    is not an error; Stockfish with one thread and a node limit is
#    deterministic, so it would mean the two engines were not given the same).
#    Reported: analyses/s of each (positions / the sum over the positions of
#    each one's median time over the repetitions, so that a spike from
#    elsewhere on the machine in one repetition does not move it), their
#    ratio chessd/direct (goal >= 0.9), p50/p90/p99/max per analysis over
#    every repetition, the median of (chessd - direct) on the same position;
#    and, steadier than any wall time on a shared machine, the CPU time per
#    analysis (schedstat of every thread) of the direct engine, of chessd's
#    engine and of chessd itself (HTTP, JSON, the pool, reading the engine's
#    lines), with the ratio direct engine / (chessd's engine + chessd).
#
# 2. Engine reply latency in a game. A private redis-server; replica A
#    `chessd serve --engine none` (the API the client talks to and streams
#    from) and replica B `chessd engine` (plays the computer's turns: claims
#    the job from the Redis stream, loads the game, searches, writes the move,
#    publishes), both on Redis db 0; and for reference replica C, `chessd
#    serve` with its own engine, doing both, on db 1 (its own job stream, so
#    B never plays C's games nor C A's). Each engine replica has one engine
#    worker. The client plays games at level BENCH_LEVEL (default 1; its
#    settings are read from api/engine/levels.c: UCI_Elo 1350, MultiPV 4,
#    "go depth 1 nodes 20000 movetime 50", and a quarter of its moves at
#    random without any search), the engine black: POST /v1/games {"engine":
#    {"level": L, "color": "black"}}, the game's NDJSON event stream opened,
#    then random legal moves (a fixed-seed generator; the legal moves read by
#    GET /v1/games/{id}, outside the timing) until the game ends or 200 plies.
#    For each engine reply: latency = (when the engine's move event arrived on
#    the stream) - (when the client had read its own move's 200 answer); also
#    from the move's request, which adds the move's own round trip. Every
#    event is checked (the snapshot first, then each version in turn, the
#    engine's a move). BENCH_ENGINE_MOVES replies (default 300) on each set-up,
#    in BENCH_GAME_REPS rounds (default 3) alternating A+B and C. At the end,
#    B's and C's chessd_engine_turns_total{outcome="played"} (/metrics) must
#    be the replies timed on each.
#    The latency includes the engine's think. To take it off, the client then
#    drives Stockfish directly with what level_move sends for the level
#    (setoption UCI_Elo, UCI_LimitStrength true, MultiPV; "position fen
#    <initial FEN> moves ..." and the level's go) on every position the engine
#    replied in, with ucinewgame and isready at each new game as chessd's
#    engine pool does, and times position..bestmove. Reported: p50/p90/p99/max
#    of the latency (raw: an upper bound, it holds the think), of the latency
#    minus the median direct think (goal: p99 < 20 ms), of each game's first
#    reply alone (the engine's pool sends ucinewgame + isready first, the
#    engine having served another game), of the direct think and of
#    ucinewgame+isready. The random moves take no think, so for those taking
#    the median off over-corrects a little; the raw figure is the bound that
#    holds whatever the think. The job is queued when the move is saved,
#    before its answer is written, so part of the engine's path overlaps the
#    answer's delivery; the figure from the move's request holds all of it.
#
# Nothing is pinned: chessd, the engines, redis-server and the client share
# the machine's CPUs, and the client's own time counts in both sides of each
# comparison. There are no absolute-time assertions: the script exits 0
# unless a tool is missing, a server does not start, or an answer or event
# is wrong.
#
# Environment: BENCH_QUICK=1 (4 positions, 1 repetition, 40 replies in 1
# round), BENCH_REPS, BENCH_NODES, BENCH_POSITIONS (a count: the first N of
# the file), BENCH_ENGINE_MOVES, BENCH_GAME_REPS, BENCH_LEVEL (1..8),
# BENCH_STOCKFISH (default /usr/games/stockfish), BENCH_SEED (the client's
# moves, default 1), BENCH_PARTS (default "analysis games": which to run).

set -u -o pipefail

CHESSD=${1:-build/chessd}
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
QUICK=${BENCH_QUICK:-0}
if [[ $QUICK == 1 ]]; then
    d_reps=1 d_positions=4 d_moves=40 d_game_reps=1
else
    d_reps=5 d_positions=0 d_moves=300 d_game_reps=3
fi
REPS=${BENCH_REPS:-$d_reps}
NODES=${BENCH_NODES:-20000 200000}
POSITIONS=${BENCH_POSITIONS:-$d_positions}
ENGINE_MOVES=${BENCH_ENGINE_MOVES:-$d_moves}
GAME_REPS=${BENCH_GAME_REPS:-$d_game_reps}
LEVEL=${BENCH_LEVEL:-1}
SEED=${BENCH_SEED:-1}
STOCKFISH=${BENCH_STOCKFISH:-/usr/games/stockfish}
PARTS=${BENCH_PARTS:-analysis games}
POSITIONS_FILE=$HERE/../data/engine_bench.fen
LEVELS_SRC=$HERE/../../api/engine/levels.c
HASH_MB=16        # chessd's default --engine-hash
MAX_PLIES=200     # a game is left after this many plies
TOKEN_SECRET=engine-bench-secret-0123456789abcdef

die() { echo "engine_bench: FAIL: $*" >&2; exit 1; }
note() { echo "engine_bench: $*"; }
# shellcheck source=tests/bench/lib.sh
source "$HERE/lib.sh"

# ---------------------------------------------------------------- tools
[[ -x $CHESSD ]] || die "chessd binary '$CHESSD' not found or not executable (build it first)"
[[ -x $STOCKFISH ]] || die "'$STOCKFISH' not found: install the Debian package 'stockfish' (apt-get install stockfish, or make deps)"
need node nodejs
need redis-server redis-server
need redis-cli redis-tools
need curl curl
need jq jq
need nice coreutils
need pgrep procps
[[ $QUICK == 0 || $QUICK == 1 ]] || die "BENCH_QUICK must be 0 or 1, got '$QUICK'"
for v in REPS ENGINE_MOVES GAME_REPS SEED; do
    [[ ${!v} =~ ^[1-9][0-9]*$ ]] || die "BENCH_$v must be a positive integer, got '${!v}'"
done
[[ $POSITIONS =~ ^[0-9]+$ ]] || die "BENCH_POSITIONS must be a count, got '$POSITIONS'"
[[ $LEVEL =~ ^[1-8]$ ]] || die "BENCH_LEVEL must be 1..8, got '$LEVEL'"
for p in $PARTS; do [[ $p == analysis || $p == games ]] || die "BENCH_PARTS: '$p' is neither analysis nor games"; done
read -r -a NODE_COUNTS <<<"$NODES"
((${#NODE_COUNTS[@]} > 0)) || die "BENCH_NODES is empty"
for n in "${NODE_COUNTS[@]}"; do [[ $n =~ ^[1-9][0-9]*$ ]] || die "BENCH_NODES: '$n' is not a node count"; done

# The positions, and the level's settings as levels.c has them (so that the
# direct search cannot drift from what chessd asks).
mapfile -t FENS < <(grep -v '^#' "$POSITIONS_FILE" | grep .) || die "cannot read $POSITIONS_FILE"
((POSITIONS > 0 && POSITIONS < ${#FENS[@]})) && FENS=("${FENS[@]:0:POSITIONS}")
((${#FENS[@]} > 0)) || die "no position in $POSITIONS_FILE"
level_line=$(awk -v start="{.level = $LEVEL," 'index($0, start) { on = 1 } on { printf "%s ", $0 } on && /},/ { exit }' "$LEVELS_SRC")
[[ -n $level_line ]] || die "no '{.level = $LEVEL,' entry in $LEVELS_SRC"
field() { sed -n "s/.*\.$1 = \([0-9][0-9]*\).*/\1/p" <<<"$level_line"; }
LEVEL_ELO=$(sed -n 's/.*LIMITED(\([0-9][0-9]*\)).*/\1/p' <<<"$level_line")
LEVEL_DEPTH=$(field depth) LEVEL_NODES=$(field nodes) LEVEL_MOVETIME=$(field movetime_ms) LEVEL_MULTIPV=$(field multipv)
LEVEL_RANDOM=$(field random_permille)
[[ -n $LEVEL_MOVETIME && -n $LEVEL_MULTIPV ]] || die "cannot read level $LEVEL's settings from: $level_line"

# ---------------------------------------------------------------- cleanup
TMP=$(mktemp -d "${TMPDIR:-/tmp}/engine_bench.XXXXXX") || die "mktemp failed"
PIDS=() REDIS_PID='' CLIENT_PID=''
# shellcheck disable=SC2317  # invoked by the trap
cleanup() {
    local p
    stop_pid "$CLIENT_PID" 2
    for p in "${PIDS[@]}"; do stop_pid "$p" 5; done
    stop_pid "$REDIS_PID" 5
    rm -rf "$TMP"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

# wait_engine_up URL NAME: until /readyz reports every engine worker up.
wait_engine_up() {
    local state='' i
    for ((i = 0; i < 200; i++)); do
        state=$(curl -sS -m 2 "$1/readyz" 2>/dev/null | jq -r '.engine.state // empty' 2>/dev/null)
        [[ $state == up ]] && return 0
        sleep 0.05
    done
    die "$2: the engine did not come up (readyz engine state '$state')"
}

# run_client MODE CONFIG: the node client; its report to stdout.
run_client() {
    node "$HERE/engine_bench.mjs" "$1" "$2" >"$TMP/client.out" 2>"$TMP/client.err" &
    CLIENT_PID=$!
    wait "$CLIENT_PID" || die "the client stopped ($1): $(head -c 2000 "$TMP/client.err")$(tail -c 1000 "$TMP"/*.err 2>/dev/null)"
    CLIENT_PID=''
    cat "$TMP/client.out"
}

common_args=(--shutdown-grace 1 --engine-hash "$HASH_MB")
note "chessd=$CHESSD  $("$STOCKFISH" <<<quit 2>/dev/null | head -n 1 | cut -d' ' -f1-2) ($STOCKFISH)  node $(node --version)"
note "not pinned: everything shares CPUs $(awk '/^Cpus_allowed_list:/ { print $2 }' /proc/self/status)$( [[ $QUICK == 1 ]] && echo '; quick mode')"

# ---------------------------------------------------------------- 1. analysis
analysis_part() {
    start_chessd "$CHESSD" "$TMP/analysis.err" "${common_args[@]}" --redis none --engine "$STOCKFISH" --engine-workers 1
    PIDS+=("$CHESSD_PID")
    ANALYSIS_PID=$CHESSD_PID ANALYSIS_URL=$CHESSD_URL
    wait_engine_up "$ANALYSIS_URL" "chessd serve --redis none"
    ANALYSIS_ENGINE_PID=$(pgrep -P "$ANALYSIS_PID" | head -n 1)
    [[ -n $ANALYSIS_ENGINE_PID ]] || die "chessd serve --redis none: no engine process under pid $ANALYSIS_PID"
    for fen in "${FENS[@]}"; do
        code=$(curl -sS -m 5 -o /dev/null -w '%{http_code}' -H 'Content-Type: application/json' \
            --data "$(jq -nc --arg fen "$fen" '{fen: $fen}')" "$ANALYSIS_URL/v1/position") || die "curl POST /v1/position failed"
        [[ $code == 200 ]] || die "$POSITIONS_FILE: chessd refuses '$fen' ($code)"
    done
    echo
    note "1. analysis: POST /v1/position/analysis on $ANALYSIS_URL against Stockfish over its pipes, nodes ${NODE_COUNTS[*]}"
    fens_json=$(printf '%s\n' "${FENS[@]}" | jq -R . | jq -sc .)
    nodes_json=$(printf '%s\n' "${NODE_COUNTS[@]}" | jq -sc 'map(tonumber)')
    config=$(jq -nc --arg url "$ANALYSIS_URL" --argjson chessdPid "$ANALYSIS_PID" --argjson chessdEnginePid "$ANALYSIS_ENGINE_PID" \
        --arg stockfish "$STOCKFISH" --argjson positions "$fens_json" \
        --argjson nodes "$nodes_json" --argjson reps "$REPS" --argjson warmup 1 --argjson hashMb "$HASH_MB" '$ARGS.named') ||
        die "jq cannot build the client's configuration"
    run_client analysis "$config"
    stop_pid "$ANALYSIS_PID" 5
}

# ---------------------------------------------------------------- 2. games
games_part() {
    start_redis "$TMP"
    redis_url=redis://127.0.0.1:$REDIS_PORT
    game_args=("${common_args[@]}" --rate-limit-create 0)
    start_chessd "$CHESSD" "$TMP/a.err" "${game_args[@]}" --redis "$redis_url/0" --engine none
    PIDS+=("$CHESSD_PID")
    A_URL=$CHESSD_URL
    start_chessd_command engine "$CHESSD" "$TMP/b.err" "${game_args[@]}" --redis "$redis_url/0" --engine "$STOCKFISH" --engine-workers 1
    PIDS+=("$CHESSD_PID")
    B_URL=$CHESSD_URL
    start_chessd "$CHESSD" "$TMP/c.err" "${game_args[@]}" --redis "$redis_url/1" --engine "$STOCKFISH" --engine-workers 1
    PIDS+=("$CHESSD_PID")
    C_URL=$CHESSD_URL
    wait_engine_up "$B_URL" "replica B (chessd engine)"
    wait_engine_up "$C_URL" "replica C (chessd serve with an engine)"
    echo
    note "2. engine replies: level $LEVEL, A $A_URL (serve --engine none) + B $B_URL (chessd engine) on db 0;" \
        "C $C_URL (serve with its engine) on db 1; redis-server $(redis-server --version | awk '{ print $3 }' | sed 's/^v=//')"
    targets=$(jq -nc --arg a "$A_URL" --arg b "$B_URL" --arg c "$C_URL" '[
        {name: "two_replicas", label: "A+B", base: $a, engine: $b},
        {name: "one_replica", label: "C", base: $c, engine: $c}]')
    settings=$(jq -nc --argjson elo "${LEVEL_ELO:-0}" --argjson depth "${LEVEL_DEPTH:-0}" --argjson nodes "${LEVEL_NODES:-0}" \
        --argjson movetime "$LEVEL_MOVETIME" --argjson multipv "$LEVEL_MULTIPV" --argjson random "${LEVEL_RANDOM:-0}" '$ARGS.named')
    config=$(jq -nc --argjson targets "$targets" --arg stockfish "$STOCKFISH" --argjson level "$LEVEL" \
        --argjson levelSettings "$settings" --argjson moves "$ENGINE_MOVES" --argjson reps "$GAME_REPS" \
        --argjson seed "$SEED" --argjson maxPlies "$MAX_PLIES" --argjson hashMb "$HASH_MB" '$ARGS.named') ||
        die "jq cannot build the client's configuration"
    run_client games "$config"
}

[[ " $PARTS " == *" analysis "* ]] && analysis_part
[[ " $PARTS " == *" games "* ]] && games_part
exit 0
