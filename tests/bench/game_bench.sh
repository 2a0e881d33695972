#!/usr/bin/env bash
# game_bench.sh: moves per second through the game API (POST
# /v1/games/{id}/moves, chessd on Redis) against what the same Redis does with
# the same compare-and-set script under redis-benchmark, in the same run.
#
#   usage: [BENCH_REDIS=single|cluster] tests/bench/game_bench.sh [path/to/chessd]
#   (`make bench` runs both through tests/bench/game_compare.sh)
#
# What runs:
#  * a private redis-server on a free loopback port (save "", appendonly no)
#    and `chessd serve` on another (--port 0), with --redis pointing at it
#    and CHESSD_TOKEN_SECRET set.  With BENCH_REDIS=cluster, a private Redis
#    Cluster instead: three redis-servers in cluster mode (the same options,
#    ports below 32000 whose bus port, +10000, is free too), joined by
#    `redis-cli --cluster create --cluster-replicas 0` into three masters,
#    and chessd gets --redis redis+cluster://<the three nodes>
#    (BENCH_CLUSTER_MASTERS sets how many; with 1, one node serves every
#    slot: chessd routes as on any cluster, nothing is spread).  Everything
#    below is the same in both modes; what the cluster changes is said where
#    it does.
#  * BENCH_GAMES games (default 64) are created with curl (POST /v1/games),
#    their ids and tokens kept.  wrk plays moves in all of them at once
#    (-t2 -c32): first BENCH_WARMUP s of warm-up, then BENCH_DURATION s
#    measured, on the same games.  Every move sends the token of the side to
#    move and the expected_version taken from the previous answer's ETag.
#  * The moves come from one fixed legal line of 140 plies: a pawn move for
#    each side, then the knight shuffle Nf3 Nf6 Ng1 Ng8 Nc3 Nc6 Nb1 Nb8, 14
#    times.  Each pawn move makes a position never seen before, so no position
#    occurs more than 3 times (fivefold repetition, automatic, never
#    happens), the halfmove clock never passes 8 (no 75-move rule), and there
#    is no capture, check or mate.  A game that has played BENCH_PLIES plies
#    of it (default: all 140) is replaced by a new game (POST /v1/games,
#    counted apart from the moves).  In the first run each game stops at a
#    random length instead, so the games are out of step afterwards: their
#    lengths stay spread over 0..PLIES, and the measure holds whatever a
#    move's cost has to do with the game's length (a move loads the state and
#    the history's tail, appends one entry and answers with the change only,
#    so it should have none; a game read back with GET has every move).
#
# wrk's Lua has no per-connection state (request() and response() are per
# thread and do not say which connection), so the state is kept per game:
# each wrk thread owns some games and a queue of those ready for their next
# move; request() takes one, response() finds it again by the X-Request-Id
# chessd echoes ("<slot>-<seq>") and puts it back.  A game is never in two
# requests at once, so there are no version conflicts by construction (a
# thread with no game ready, when BENCH_GAMES < BENCH_CONNECTIONS, creates
# one more).  Only 200 answers to moves are counted as moves; any other
# answer is an error (reported, and the game replaced); the goal is 0 (chessd
# gets no CHESSD_* setting from the environment, where a rate limit, say,
# would turn moves into 429s).  Each 200 is checked: the
# game id in the body and the version (ETag and body) must be the ones
# expected, and the change answered (GameChange) the move sent, in SAN, and
# the move count that follows.  After each wrk run every game is read back
# with GET: version and move count must be what the bench played (one more
# for a game whose request was cut off by the end of the run); the next run
# goes on from there.
#
# The Redis reference: redis-benchmark -c 32 EVALSHA of the compare-and-set
# script chessd uses (on a cluster: redis-benchmark --cluster, its 32
# connections spread over the masters).  The script text is extracted from
# store/game_write.c (the C string cas_script), so the two cannot drift;
# that it is the script
# chessd runs is checked by SCRIPT EXISTS on its SHA-1 after chessd wrote a
# game (chessd loads it itself with EVAL on NOSCRIPT), before this bench
# loads anything; the same for the load script (load_script, of
# store/game_load.c) after chessd
# played its first moves.  redis-benchmark cannot send a different expected
# version each time, so the keys are pre-created (BENCH_GAMES games of three
# keys each: the hash with version 1, the state text and hlen, the move list
# and the history, all as chessd stored them for a game of PLIES/2 plies of
# the line) and every call is the compare-and-set of one move with expected
# version 1, new version 1, no ttl: compare, HSET version + state + hlen,
# APPEND one move list entry and an empty history entry (see CAS_ARGS),
# PERSIST the three keys. That is the full success path of a move's write,
# the same work as chessd's write without an Idempotency-Key; only the
# version number does not move (and the move list grows a little over the
# run).  (The create path,
# expected 0 on random keys, would turn into the cheaper 'exists' early
# return as soon as a key repeats.)  A move also needs a read before the
# compare-and-set (the load script in its 'change' form: the hash and the
# history's tail), so that is measured too, and the bound for "one read +
# one compare-and-set per move" is shown: 1 / (1/load + 1/evalsha).  Each
# redis-benchmark run lasts about BENCH_DURATION/2 s (its request count is
# calibrated by a short run).  On a cluster, redis-benchmark puts the keys of
# each master in one slot of its own: it writes that slot's tag over every
# "{tag}" in the command, so the keys (and the events' channel) read
# chessd:bench:game:{tag}:<n>; the tag of each master is learnt first by a
# probe (a SET through redis-benchmark --cluster, then SCAN on each master),
# and the keys are pre-created under it on its master (on one node, and on
# a cluster of one master, which redis-benchmark --cluster refuses and which
# serves every slot, "{tag}" stays as written).  redis-benchmark --cluster
# passes over error answers other than MOVED and ASK in silence, so every
# run is checked to have written: the move list of the first key of each
# tag must grow.
#
# Printed: chessd moves/s, redis-benchmark compare-and-set ops/s, their ratio
# (goal >= 0.4), chessd's move latency (percentiles of the 200 answers, timed
# in the wrk script with LuaJIT's ffi; wrk's own p99 also covers the
# creates), CPU per move of chessd, redis-server and wrk (user + system
# time during the measured run, divided by the moves; on a cluster,
# redis-server is the three together; chessd's user-mode part apart: the
# rest is the kernel's, its sockets and waits), and what chessd asked of Redis during
# that run (INFO commandstats of every master): scripts run per move (one
# compare-and-set when chessd's game cache holds the game, a load before it
# when not, and a little more for the creates) and commands refused before
# they ran (MOVED, ASK: routing that missed).  Nothing is pinned:
# chessd, redis-server, wrk and redis-benchmark share the CPUs.  At the end,
# the games chessd stored (chessd:game:* keys) are counted on each master;
# on a cluster each master must hold some.  The last lines are
# "name: value" figures that tests/bench/game_compare.sh reads.  Exits
# non-zero only when a tool is missing, a server does not start, or chessd's
# answers are wrong (a 200 with the wrong game or version, more than 1% of
# the move answers not 200, or a game read back that does not match), or
# redis-benchmark's writes did not happen, or a master of the cluster got no
# game; no figure is asserted.
#
# Environment: BENCH_REDIS (single, the default, or cluster),
# BENCH_CLUSTER_MASTERS (1 to 9, default 3),
# BENCH_DURATION (s, default 10), BENCH_WARMUP (s, default 2),
# BENCH_CONNECTIONS (32), BENCH_WRK_THREADS (2), BENCH_GAMES (64),
# BENCH_PLIES (plies of the line a game plays before it is replaced, 2..140,
# default 140), BENCH_REPS (default 1; each repetition runs wrk, then
# redis-benchmark, and the median of each figure is reported),
# BENCH_THREADS (chessd --threads; default: chessd's own default, 1 per CPU),
# BENCH_STORE_THREADS (chessd --store-threads, the threads that run game
# requests; default: chessd's own; not for a binary older than the option),
# BENCH_PROFILE=1 (perf, Debian's linux-perf: chessd's system calls are
# counted in the warm-up and the first measured run is sampled, and
# tests/bench/profile_report.sh prints where a move's CPU went; that run's
# figures are then taken under the sampler, a little slower),
# CHESSD_STORE_SRC (default: store/ of this tree, whose game_write.c and
# game_load.c hold the scripts; or one file holding both, as an older tree's
# store/store_redis.c),
# BENCH_VERBOSE=1 prints wrk's and redis-benchmark's own output to stderr,
# BENCH_GAME_BODY (the JSON body games are created with; default {}, untimed:
# tests/bench/clock_bench.sh sets clocks), BENCH_CREATE_KEY (a service key
# games are created with, sent as Authorization; default none),
# BENCH_CHESSD_ARGS (more chessd options, split on blanks;
# tests/bench/webhook_bench.sh gives keys and webhook settings).

set -u -o pipefail

CHESSD=${1:-build/chessd}
MODE=${BENCH_REDIS:-single}
CLUSTER_MASTERS=${BENCH_CLUSTER_MASTERS:-3}
DURATION=${BENCH_DURATION:-10}
WARMUP=${BENCH_WARMUP:-2}
CONNS=${BENCH_CONNECTIONS:-32}
WRK_THREADS=${BENCH_WRK_THREADS:-2}
GAMES=${BENCH_GAMES:-64}
PLIES=${BENCH_PLIES:-140}
REPS=${BENCH_REPS:-1}
THREADS=${BENCH_THREADS:-}
STORE_THREADS=${BENCH_STORE_THREADS:-}
VERBOSE=${BENCH_VERBOSE:-}
GAME_BODY=${BENCH_GAME_BODY:-'{}'}
CREATE_KEY=${BENCH_CREATE_KEY:-}
read -r -a EXTRA_ARGS <<<"${BENCH_CHESSD_ARGS:-}"
PROFILE=${BENCH_PROFILE:-}
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
STORE_SRC=${CHESSD_STORE_SRC:-$HERE/../../store}
if [[ -d $STORE_SRC ]]; then
    STORE_FILES=("$STORE_SRC/game_write.c" "$STORE_SRC/game_load.c")
else
    STORE_FILES=("$STORE_SRC")
fi
TOKEN_SECRET=game-bench-secret-0123456789abcdef

die() { echo "game_bench: FAIL: $*" >&2; exit 1; }
note() { echo "game_bench: $*"; }
# shellcheck source=tests/bench/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

# ---------------------------------------------------------------- tools
[[ -x $CHESSD ]] || die "chessd binary '$CHESSD' not found or not executable (build it first)"
need wrk wrk
need redis-server redis-server
need redis-cli redis-tools
need redis-benchmark redis-tools
need curl curl
need jq jq
need awk gawk
[[ $PROFILE == 1 ]] && need perf linux-perf
need sha1sum coreutils
[[ $MODE == single || $MODE == cluster ]] || die "BENCH_REDIS must be single or cluster, got '$MODE'"
[[ $CLUSTER_MASTERS =~ ^[1-9]$ ]] || die "BENCH_CLUSTER_MASTERS must be 1 to 9, got '$CLUSTER_MASTERS'"
if [[ $MODE == cluster ]]; then
    redis-benchmark --help 2>&1 | grep -q -- '--cluster' ||
        die "this redis-benchmark has no --cluster option (Redis 6 or later needed: the Debian package redis-tools)"
fi
for f in "${STORE_FILES[@]}"; do
    [[ -r $f ]] || die "cannot read $f (set CHESSD_STORE_SRC)"
done
for v in DURATION WARMUP CONNS WRK_THREADS GAMES PLIES REPS; do
    [[ ${!v} =~ ^[0-9]+$ ]] || die "$v must be a non-negative integer, got '${!v}'"
done
((DURATION >= 1 && CONNS >= 1 && WRK_THREADS >= 1 && GAMES >= 1 && REPS >= 1)) ||
    die "duration, connections, threads, games and reps must be >= 1"
((CONNS >= WRK_THREADS)) || die "BENCH_CONNECTIONS must be >= BENCH_WRK_THREADS"
((PLIES >= 2 && PLIES <= 140)) || die "BENCH_PLIES must be 2 to 140, got $PLIES"
[[ -z $THREADS || $THREADS =~ ^[1-9][0-9]*$ ]] || die "BENCH_THREADS must be a positive integer, got '$THREADS'"

# ---------------------------------------------------------------- the line
# 14 x (white pawn, black pawn, Nf3 Nf6 Ng1 Ng8 Nc3 Nc6 Nb1 Nb8) = 140 plies.
# The c- and f-pawns go two squares at once, so c3/c6/f3/f6 stay free.
WHITE_PAWNS=(a3 a4 b3 b4 c4 d3 d4 e3 e4 f4 g3 g4 h3 h4)
BLACK_PAWNS=(a6 a5 b6 b5 c5 d6 d5 e6 e5 f5 g6 g5 h6 h5)
LINE=()
for i in "${!WHITE_PAWNS[@]}"; do
    LINE+=("${WHITE_PAWNS[i]}" "${BLACK_PAWNS[i]}" Nf3 Nf6 Ng1 Ng8 Nc3 Nc6 Nb1 Nb8)
done
LINE_END_FEN='rnbqkbnr/8/8/pppppppp/PPPPPPPP/8/8/RNBQKBNR w KQkq - 8 71'

# ---------------------------------------------------------------- cleanup
TMP=$(mktemp -d "${TMPDIR:-/tmp}/game_bench.XXXXXX") || die "mktemp failed"
CHESSD_PID='' REDIS_PID='' WRK_PID='' RB_PID=''
CLUSTER_PIDS=()
# shellcheck disable=SC2317  # invoked by the trap
cleanup() {
    local p
    stop_pid "$WRK_PID" 2
    stop_pid "$RB_PID" 2
    stop_pid "$CHESSD_PID" 5
    stop_pid "$REDIS_PID" 5
    for p in "${CLUSTER_PIDS[@]}"; do stop_pid "$p" 5; done
    rm -rf "$TMP"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

# ---------------------------------------------------------------- helpers
CLK_TCK=$(getconf CLK_TCK 2>/dev/null || echo 100)
CPUS_ALLOWED=$(awk '/^Cpus_allowed_list:/ { print $2 }' /proc/self/status 2>/dev/null)
ms() { awk -v us="$1" 'BEGIN { printf "%.2f", us / 1000 }'; }
# CHILD_US = CPU time (us) of this shell's waited-for children; `times` must
# run in this shell, not in a $(...) subshell, hence the file.
children_cpu_us() {
    times >"$TMP/times"
    CHILD_US=$(awk 'NR == 2 { t = 0; for (i = 1; i <= 2; i++) { split($i, a, /[ms]/); t += a[1] * 60 + a[2] } printf "%.0f\n", t * 1e6 }' "$TMP/times")
}

# bg_wait VAR COMMAND...: runs COMMAND in the background (pid in VAR, so the
# trap can stop it) and waits for it, so that a signal stops the script at once.
bg_wait() {
    local var=$1 rc
    shift
    "$@" &
    printf -v "$var" '%s' $!
    wait "${!var}"
    rc=$?
    printf -v "$var" '%s' ''
    return "$rc"
}

# ---------------------------------------------------------------- the script text
# extract_script NAME: the C string literal(s) after "NAME[] =" up to the ";", with the C
# escapes \n \t \\ \" \' undone; anything else is refused. Read from the source as
# the C preprocessor leaves it (the script names its ARGV positions with macros).
STORE_SRC_EXPANDED=$(for f in "${STORE_FILES[@]}"; do
    ${CC:-cc} -E -P -D_POSIX_C_SOURCE=200809L -D_DEFAULT_SOURCE \
        $(pkg-config --cflags hiredis libcjson libssl 2>/dev/null) "$f" 2>/dev/null || exit 1
done) || die "cannot run the C preprocessor on ${STORE_FILES[*]}"
extract_script() {
printf '%s\n' "$STORE_SRC_EXPANDED" | awk -v name="$1" '
    BEGIN { state = 0 }   # 0: before, 1: in the initializer, 2: done
    bad || state == 2 { next }   # read to the end: an early exit would end the printf feeding it with SIGPIPE (a failure under pipefail)
    state == 0 && $0 ~ (name "\\[\\][ \t]*=") { state = 1; sub(".*" name "\\[\\][ \t]*=", "") }
    state == 1 {
        line = $0; n = length(line); instr = 0
        for (i = 1; i <= n; i++) {
            c = substr(line, i, 1)
            if (!instr) {
                if (c == "\"") instr = 1
                else if (c == ";") { state = 2; break }
                else if (c != " " && c != "\t") { bad = 1; break }
            } else if (c == "\\") {
                e = substr(line, ++i, 1)
                if (e == "n") out = out "\n"; else if (e == "t") out = out "\t"
                else if (e == "\\" || e == "\"" || e == "\047") out = out e
                else { bad = 1; break }
            } else if (c == "\"") instr = 0
            else out = out c
        }
        if (instr) bad = 1
    }
    END { if (bad || state != 2 || out == "") exit 1; printf "%s", out }
'
}
extract_script cas_script >"$TMP/cas.lua" || die "cannot extract the cas_script string from $STORE_SRC"
extract_script load_script >"$TMP/load.lua" || die "cannot extract the load_script string from $STORE_SRC"
SCRIPT_SHA=$(sha1sum "$TMP/cas.lua" | awk '{ print $1 }')
LOAD_SHA=$(sha1sum "$TMP/load.lua" | awk '{ print $1 }')
# The redis-benchmark call below relies on the argument order.
grep -q "local fields = {'version', ARGV\[3\], 'state', ARGV\[4\], 'hlen', ARGV\[5\], 'wid', ARGV\[14\]}" "$TMP/cas.lua" ||
    die "the script extracted from $STORE_SRC no longer writes version and state as this bench assumes: $(cat "$TMP/cas.lua")"

# ---------------------------------------------------------------- redis
# REDIS_PIDS: every redis-server (their CPU is added up); REDIS_PORTS: the
# masters; REDIS_PORT: the one redis-cli asks first.
if [[ $MODE == cluster ]]; then
    start_cluster "$TMP" "$CLUSTER_MASTERS"
    REDIS_PIDS=("${CLUSTER_PIDS[@]}") REDIS_PORTS=("${CLUSTER_PORTS[@]}")
    REDIS_URL=redis+cluster://$(printf '127.0.0.1:%s,' "${REDIS_PORTS[@]}")
    REDIS_URL=${REDIS_URL%,}
    RCLI_MODE=(-c)          # follow MOVED
    RB_MODE=(--cluster)
    ((CLUSTER_MASTERS > 1)) || RB_MODE=()   # --cluster refuses one node; it holds every slot
else
    start_redis "$TMP"
    REDIS_PIDS=("$REDIS_PID") REDIS_PORTS=("$REDIS_PORT")
    REDIS_URL=redis://127.0.0.1:$REDIS_PORT/0
    RCLI_MODE=() RB_MODE=()
fi
rcli() { redis-cli -h 127.0.0.1 -p "$REDIS_PORT" "${RCLI_MODE[@]}" "$@"; }
# key_port KEY: the port of the master that serves KEY (its slot's range in
# CLUSTER NODES); on one node, that node's.
key_port() {
    local slot
    [[ $MODE == cluster ]] || { echo "$REDIS_PORT"; return 0; }
    slot=$(rcli CLUSTER KEYSLOT "$1")
    [[ $slot =~ ^[0-9]+$ ]] || die "CLUSTER KEYSLOT $1 failed: $slot"
    rcli CLUSTER NODES | awk -v slot="$slot" '
        $3 ~ /master/ { for (i = 9; i <= NF; i++) { n = split($i, r, "-"); if (n == 1) r[2] = r[1]
                        if (r[1] ~ /^[0-9]+$/ && slot >= r[1] + 0 && slot <= r[2] + 0) { sub(/@.*/, "", $2); sub(/.*:/, "", $2); print $2; exit } } }'
}

# ---------------------------------------------------------------- chessd
# The benchmark creates its games from one address: no creation limit.
chessd_args=(--shutdown-grace 1 --rate-limit-create 0 --redis "$REDIS_URL")
[[ -n $THREADS ]] && chessd_args+=(--threads "$THREADS")
[[ -n $STORE_THREADS ]] && chessd_args+=(--store-threads "$STORE_THREADS")
((${#EXTRA_ARGS[@]})) && chessd_args+=("${EXTRA_ARGS[@]}")
create_auth=()
[[ -n $CREATE_KEY ]] && create_auth=(-H "Authorization: Bearer $CREATE_KEY")
# start_chessd passes no CHESSD_* setting from the environment (a rate
# limit, say) to the server under test.
start_chessd "$CHESSD" "$TMP/chessd.err" "${chessd_args[@]}"
hz=$(curl -sS -m 5 -o /dev/null -w '%{http_code}' "$CHESSD_URL/healthz") || die "curl GET $CHESSD_URL/healthz failed"
[[ $hz == 200 ]] || die "chessd GET /healthz: expected 200, got $hz"

# ---------------------------------------------------------------- check chessd's answers
# The line is legal and leaves an active game.
moves_json=$(printf '"%s",' "${LINE[@]}")
r=$(curl -sS -m 10 -X POST -H 'Content-Type: application/json' --data "{\"moves\":[${moves_json%,}]}" \
    "$CHESSD_URL/v1/position/moves") || die "curl POST /v1/position/moves failed"
got=$(jq -r '"\(.position.fen)|\(.position.status)|\(.moves | length)|\(.position.repetitions)"' <<<"$r" 2>/dev/null)
[[ $got == "$LINE_END_FEN|active|140|3" ]] || die "the bench's move line is not what it should be ($got): ${r:0:400}"

# create_game -> "ID WHITE_TOKEN BLACK_TOKEN 1 0" (a games-file line; checks the 201 answer)
create_game() {
    local code etag loc out id tw tb ver st nm
    code=$(curl -sS -m 5 -D "$TMP/h" -o "$TMP/b" -w '%{http_code}' -X POST -H 'Content-Type: application/json' \
           "${create_auth[@]}" --data "$GAME_BODY" "$CHESSD_URL/v1/games") || die "curl POST /v1/games failed"
    [[ $code == 201 ]] || die "POST /v1/games: expected 201, got $code: $(head -c 400 "$TMP/b")"
    etag=$(tr -d '\r' <"$TMP/h" | sed -n 's/^[Ee][Tt][Aa][Gg]: *//p')
    loc=$(tr -d '\r' <"$TMP/h" | sed -n 's/^[Ll]ocation: *//p')
    out=$(jq -r '"\(.id) \(.tokens.white) \(.tokens.black) \(.version) \(.status) \(.moves | length)"' "$TMP/b" 2>/dev/null) ||
        die "POST /v1/games: the answer is not JSON: $(head -c 400 "$TMP/b")"
    read -r id tw tb ver st nm <<<"$out"
    [[ $etag == '"1"' && $ver == 1 && $st == active && $nm == 0 && $loc == "/v1/games/$id" && ${#tw} -ge 16 && ${#tb} -ge 16 ]] ||
        die "POST /v1/games: unexpected answer (ETag $etag, Location $loc): $(head -c 400 "$TMP/b")"
    echo "$id $tw $tb 1 0"
}
# play ID TOKEN MOVE VERSION -> "HTTP_CODE ETAG" (the body in $TMP/b)
play() {
    local code etag
    code=$(curl -sS -m 5 -D "$TMP/h" -o "$TMP/b" -w '%{http_code}' -X POST -H 'Content-Type: application/json' \
           -H "Authorization: Bearer $2" --data "{\"move\":\"$3\",\"expected_version\":$4}" \
           "$CHESSD_URL/v1/games/$1/moves") || die "curl POST /v1/games/$1/moves failed"
    etag=$(tr -d '\r' <"$TMP/h" | sed -n 's/^[Ee][Tt][Aa][Gg]: *//p')
    echo "$code $etag"
}
read -r id tw tb _ <<<"$(create_game)"
[[ -n ${tb:-} ]] || die "POST /v1/games gave no game"
# chessd's own write (EVALSHA, then EVAL on NOSCRIPT) has loaded the script:
# the text extracted above must have the same SHA-1.
GAME_PORT=$(key_port "chessd:game:{$id}")
[[ -n $GAME_PORT ]] || die "no master serves game $id's slot"
[[ $(redis-cli -h 127.0.0.1 -p "$GAME_PORT" SCRIPT EXISTS "$SCRIPT_SHA" 2>/dev/null) == 1 ]] ||
    die "the cas_script text extracted from $STORE_SRC (sha1 $SCRIPT_SHA) is not the script chessd loaded into Redis (extraction out of date, or a different chessd build?)"
r=$(play "$id" "$tb" e5 1); [[ $r == 403* || $r == 409* ]] || die "a move by the player not to move was not refused: '$r'"
r=$(play "$id" "$tw" e4 1); [[ $r == '200 "2"' ]] || die "move 1 (e4, version 1): expected 200 with ETag \"2\", got '$r': $(head -c 300 "$TMP/b")"
r=$(play "$id" "$tb" e5 1); [[ $r == 409* ]] || die "a move with a stale expected_version: expected 409, got '$r'"
r=$(play "$id" "$tb" e5 2); [[ $r == '200 "3"' ]] || die "move 2 (e5, version 2): expected 200 with ETag \"3\", got '$r': $(head -c 300 "$TMP/b")"
[[ $(jq -r '"\(.version) \(.move.uci) \(.move.san) \(.move_count) \(has("moves"))"' "$TMP/b") == "3 e7e5 e5 2 false" ]] ||
    die "the answer to move 2 is not the change e5 at version 3: $(head -c 300 "$TMP/b")"
[[ $(curl -sS -m 5 "$CHESSD_URL/v1/games/$id" | jq -r '[.moves[] | "\(.uci):\(.san)"] | join(" ")') == "e2e4:e4 e7e5:e5" ]] ||
    die "GET /v1/games/$id does not list the two moves played"
# chessd's change loads ran the load script: the text extracted above must be it too.
[[ $(redis-cli -h 127.0.0.1 -p "$GAME_PORT" SCRIPT EXISTS "$LOAD_SHA" 2>/dev/null) == 1 ]] ||
    die "the load_script text extracted from $STORE_SRC (sha1 $LOAD_SHA) is not the script chessd loaded into Redis"

# A game of PLIES/2 plies of the line: its stored record is the data of the
# redis-benchmark keys (the mean length of the games played).
read -r DATA_ID tw tb _ <<<"$(create_game)"
[[ -n ${tb:-} ]] || die "POST /v1/games gave no game"
tok=("$tw" "$tb")
for ((p = 0; p < PLIES / 2; p++)); do
    r=$(play "$DATA_ID" "${tok[p % 2]}" "${LINE[p]}" $((p + 1)))
    [[ $r == "200 \"$((p + 2))\"" ]] || die "ply $((p + 1)) (${LINE[p]}): expected 200 with ETag \"$((p + 2))\", got '$r': $(head -c 300 "$TMP/b")"
done
DATA=$(rcli --raw HGET "chessd:game:{$DATA_ID}" state)
[[ $DATA == 'chessd-game 3'* ]] || die "cannot read game $DATA_ID's state from Redis: ${DATA:0:200}"
DATA_PLY=$(sed -n 's/^plies //p' <<<"$DATA")
((DATA_PLY == PLIES / 2)) || die "game $DATA_ID's state has $DATA_PLY plies, expected $((PLIES / 2))"
DATA_MOVES=$(rcli --raw GET "chessd:moves:{$DATA_ID}")
DATA_HISTORY=$(rcli --raw GET "chessd:history:{$DATA_ID}")
DATA_HLEN=$(rcli --raw HGET "chessd:game:{$DATA_ID}" hlen)
((${#DATA_HISTORY} == 16 * DATA_PLY)) || die "game $DATA_ID's history has ${#DATA_HISTORY} bytes, expected $((16 * DATA_PLY))"

# The games to play: "id white_token black_token version ply" per line.
: >"$TMP/games"
for ((g = 0; g < GAMES; g++)); do
    create_game >>"$TMP/games" || exit 1
done

# ---------------------------------------------------------------- wrk script
line_lua=$(printf '"%s",' "${LINE[@]}")
cat >"$TMP/game.lua" <<EOF
-- Per-game state in each wrk thread; see tests/bench/game_bench.sh.
local LINE = { ${line_lua%,} }
local GAME_BODY = [[${GAME_BODY}]]
local CREATE_KEY = "${CREATE_KEY}"
local plies, slots, queue, qhead, qtail, seq, sent = 0, {}, {}, 1, 0, 0, {}
-- globals, read by done() through thread:get
moves, creates, errors, create_errors, wrong, lost_slots = 0, 0, 0, 0, 0, 0
err_codes, lat, clat = {}, {}, {}
state = {}   -- per slot in play: "id white black version ply inflight"

local ok_ffi, ffi = pcall(require, "ffi")
local now_us
if ok_ffi then
    ffi.cdef[[
        typedef struct { long tv_sec; long tv_nsec; } game_bench_timespec;
        int clock_gettime(int clk, game_bench_timespec *tp);
    ]]
    local ts = ffi.new("game_bench_timespec")
    now_us = function() ffi.C.clock_gettime(1, ts); return tonumber(ts.tv_sec) * 1e6 + tonumber(ts.tv_nsec) / 1e3 end
    timed = 1
else
    now_us = function() return 0 end
    timed = 0
end

local function push(s) qtail = qtail + 1; queue[qtail] = s end
local function pop()
    if qhead > qtail then return nil end
    local s = queue[qhead]; queue[qhead] = nil; qhead = qhead + 1
    return s
end
local function new_slot() slots[#slots + 1] = { create = true }; return #slots end
local function export(s, g, inflight)
    if g.create then state[s] = nil; return end
    state[s] = g.id .. " " .. g.tok[1] .. " " .. g.tok[2] .. " " .. g.version .. " " .. g.ply .. " " .. inflight
end

local threads, nthreads = {}, 0
function setup(thread)
    thread:set("tindex", nthreads)
    nthreads = nthreads + 1
    table.insert(threads, thread)
end

-- args: games file, plies, wrk threads, stagger (1: a game at ply 0 from the
-- file stops at a random length, so that the games get out of step)
function init(args)
    plies = tonumber(args[2])
    local nt, stagger = tonumber(args[3]), args[4] == "1"
    math.randomseed(1000 + tindex)
    local i = 0
    for line in io.lines(args[1]) do
        if i % nt == tindex then
            local id, w, b, v, p = line:match("^(%S+) (%S+) (%S+) (%d+) (%d+)$")
            local g = { id = id, tok = { w, b }, version = tonumber(v), ply = tonumber(p), limit = plies }
            if stagger and g.ply == 0 then g.limit = math.random(1, plies) end
            g.create = g.ply >= g.limit
            slots[#slots + 1] = g
        end
        i = i + 1
    end
    for s = 1, #slots do push(s) end
end

function request()
    local s = pop()
    if not s then s = new_slot(); lost_slots = lost_slots + 1 end  -- an answer never came
    local g = slots[s]
    seq = seq + 1
    local rid = s .. "-" .. seq
    sent[rid] = now_us()
    local h = { ["Content-Type"] = "application/json", ["X-Request-Id"] = rid }
    if g.create then
        if CREATE_KEY ~= "" then h["Authorization"] = "Bearer " .. CREATE_KEY end
        return wrk.format("POST", "/v1/games", h, GAME_BODY)
    end
    export(s, g, 1)
    h["Authorization"] = "Bearer " .. g.tok[g.ply % 2 + 1]
    return wrk.format("POST", "/v1/games/" .. g.id .. "/moves", h,
                      '{"move":"' .. LINE[g.ply + 1] .. '","expected_version":' .. g.version .. '}')
end

local function header(headers, name)
    local v = headers[name]
    if v then return v end
    name = name:lower()
    for k, x in pairs(headers) do if k:lower() == name then return x end end
end

function response(status, headers, body)
    local rid = header(headers, "X-Request-Id")
    local s = rid and tonumber(rid:match("^(%d+)%-%d+$"))
    local g = s and slots[s]
    if not g or not sent[rid] then
        errors = errors + 1; wrong = wrong + 1
        return
    end
    local t0 = sent[rid]; sent[rid] = nil
    local etag = tonumber((header(headers, "ETag") or ""):match('^"(%d+)"$') or -1)
    if g.create then
        if status == 201 then
            local id, v = body:match('^{"id":"([^"]+)","version":(%d+),')
            local w, b = body:match('"tokens":{"white":"([^"]+)","black":"([^"]+)"}')
            if id and w and b and tonumber(v) == 1 and etag == 1 then
                g.id, g.tok, g.version, g.ply, g.limit, g.create = id, { w, b }, 1, 0, plies, false
                creates = creates + 1
                if timed == 1 then clat[#clat + 1] = now_us() - t0 end
            else
                create_errors = create_errors + 1; wrong = wrong + 1
            end
        else
            create_errors = create_errors + 1
            err_codes["create-" .. status] = (err_codes["create-" .. status] or 0) + 1
        end
    elseif status == 200 then
        -- The change: the game, its new version, the move sent (SAN) and the count after it.
        -- (A game on a clock has the mover's clock_ms after the SAN.)
        local id, v, san, count = body:match('^{"id":"([^"]+)","version":(%d+),"move":{"uci":"[^"]+","san":"([^"]+)"[^}]*},"move_count":(%d+),')
        if id ~= g.id or tonumber(v) ~= g.version + 1 or etag ~= g.version + 1 or san ~= LINE[g.ply + 1]
            or tonumber(count) ~= g.ply + 1 then
            wrong = wrong + 1; errors = errors + 1
            g.create = true
        else
            moves = moves + 1
            if timed == 1 then lat[#lat + 1] = now_us() - t0 end
            g.version, g.ply = etag, g.ply + 1
            if g.ply >= g.limit then g.create = true end
        end
    else
        errors = errors + 1
        local code = status .. "-" .. (body:match('"code":"([^"]+)"') or "")
        err_codes[code] = (err_codes[code] or 0) + 1
        g.create = true   -- replace the game: its state is not known for sure
    end
    export(s, g, 0)
    push(s)
end

function done(summary, latency, requests)
    local t = { moves = 0, creates = 0, errors = 0, create_errors = 0, wrong = 0, lost_slots = 0 }
    local all, call, codes, out = {}, {}, {}, {}
    local is_timed = 0
    for _, th in ipairs(threads) do
        for k in pairs(t) do t[k] = t[k] + (th:get(k) or 0) end
        is_timed = th:get("timed") or 0
        for _, x in ipairs(th:get("lat") or {}) do all[#all + 1] = x end
        for _, x in ipairs(th:get("clat") or {}) do call[#call + 1] = x end
        for k, n in pairs(th:get("err_codes") or {}) do codes[k] = (codes[k] or 0) + n end
        for _, x in pairs(th:get("state") or {}) do out[#out + 1] = x end
    end
    table.sort(all)
    table.sort(call)
    local function pct(p, v)
        v = v or all
        if #v == 0 then return 0 end
        return v[math.max(1, math.ceil(#v * p / 100))]
    end
    local e = summary.errors
    io.write(string.format("GAMESTAT requests=%d duration_us=%d moves=%d creates=%d errors=%d create_errors=%d " ..
        "wrong=%d lost=%d timed=%d move_p50_us=%d move_p90_us=%d move_p99_us=%d move_max_us=%d " ..
        "create_p50_us=%d create_p99_us=%d wrk_p50_us=%d wrk_p99_us=%d err_connect=%d err_read=%d err_write=%d err_timeout=%d\n",
        summary.requests, summary.duration, t.moves, t.creates, t.errors, t.create_errors, t.wrong, t.lost_slots,
        is_timed, pct(50), pct(90), pct(99), all[#all] or 0, pct(50, call), pct(99, call), latency:percentile(50),
        latency:percentile(99), e.connect, e.read, e.write, e.timeout))
    for k, n in pairs(codes) do io.write(string.format("GAMEERR %s %d\n", k, n)) end
    for _, x in ipairs(out) do io.write("GAMESTATE " .. x .. "\n") end
end
EOF

# redis_calls -> "SCRIPTS REFUSED MAPS", summed over the masters since they
# started (INFO commandstats): EVALSHA and EVAL calls, commands refused
# before they ran (MOVED, ASK, CROSSSLOT ...: rejected_calls of every
# command), CLUSTER SLOTS calls.
redis_calls() {
    local port
    for port in "${REDIS_PORTS[@]}"; do
        redis-cli -h 127.0.0.1 -p "$port" INFO commandstats || die "INFO commandstats failed on port $port"
    done | tr -d '\r' | awk -F'[:,=]' '
        /^cmdstat_/ {
            calls = 0; refused = 0
            for (i = 2; i < NF; i += 2) {
                if ($i == "calls") calls = $(i + 1)
                if ($i == "rejected_calls") refused = $(i + 1)
            }
            if ($1 == "cmdstat_evalsha" || $1 == "cmdstat_eval") scripts += calls
            if ($1 == "cmdstat_cluster|slots") maps += calls
            refused_all += refused
        }
        END { printf "%d %d %d\n", scripts, refused_all, maps }'
}

# run_wrk DURATION STAGGER -> plays $TMP/games for DURATION s; sets W[...]
# from wrk's summary; reads every game back and writes the games to go on
# with into $TMP/games (topped up to BENCH_GAMES with new games).
declare -A W
run_wrk() {
    local rc kv kvs gid gw gb gver gply infl got v n st sock w0
    children_cpu_us
    w0=$CHILD_US
    local c0 r0 k0 k1
    read -r -a k0 <<<"$(redis_calls)"
    c0=$(cpu_ticks "$CHESSD_PID"); r0=$(cpu_ticks "${REDIS_PIDS[@]}"); local u0=$(user_ticks "$CHESSD_PID")
    local x0=$(ctx_switches "$CHESSD_PID") y0=$(ctx_switches "${REDIS_PIDS[@]}")
    bg_wait WRK_PID wrk -t"$WRK_THREADS" -c"$CONNS" -d"${1}s" --latency -s "$TMP/game.lua" "$CHESSD_URL" \
        -- "$TMP/games" "$PLIES" "$WRK_THREADS" "$2" >"$TMP/wrk.out" 2>&1
    rc=$?
    # CPU of chessd and the redis-servers (ticks) and of wrk (us) during the run
    CHESSD_TICKS=$(($(cpu_ticks "$CHESSD_PID") - c0)) REDIS_TICKS=$(($(cpu_ticks "${REDIS_PIDS[@]}") - r0))
    CHESSD_USER_TICKS=$(($(user_ticks "$CHESSD_PID") - u0))
    CHESSD_CSW=$(($(ctx_switches "$CHESSD_PID") - x0)) REDIS_CSW=$(($(ctx_switches "${REDIS_PIDS[@]}") - y0))
    children_cpu_us
    WRK_CPU_US=$((CHILD_US - w0))
    # what chessd asked of Redis during the run
    read -r -a k1 <<<"$(redis_calls)"
    REDIS_SCRIPTS=$((k1[0] - k0[0])) REDIS_REFUSED=$((k1[1] - k0[1])) REDIS_MAPS=$((k1[2] - k0[2]))
    [[ -n $VERBOSE ]] && { echo "  --- wrk -d${1}s"; grep -v '^GAMESTATE ' "$TMP/wrk.out"; } >&2
    ((rc == 0)) || die "wrk exited with status $rc: $(head -c 2000 "$TMP/wrk.out")"
    grep -q '^GAMESTAT ' "$TMP/wrk.out" || die "wrk printed no summary: $(head -c 2000 "$TMP/wrk.out")"
    kill -0 "$CHESSD_PID" 2>/dev/null || die "chessd exited during the load: $(cat "$TMP/chessd.err")"
    W=()
    read -r -a kvs <<<"$(grep '^GAMESTAT ' "$TMP/wrk.out")"
    for kv in "${kvs[@]}"; do [[ $kv == *=* ]] && W[${kv%%=*}]=${kv#*=}; done
    W[errlist]=$(grep '^GAMEERR ' "$TMP/wrk.out" | cut -d' ' -f2- | paste -sd ',' | sed 's/,/, /g')

    ((W[moves] > 0)) || die "no move was answered 200 (errors: ${W[errlist]:-none}; $(grep -v '^GAME' "$TMP/wrk.out" | head -c 1500))"
    ((W[wrong] == 0)) || die "${W[wrong]} answers were wrong (a 200 for another game or version, or a bad X-Request-Id)"
    ((W[errors] * 100 <= W[moves])) || die "${W[errors]} of $((W[moves] + W[errors])) move answers were not 200 (${W[errlist]})"
    ((W[errors] == 0 && W[create_errors] == 0)) ||
        note "warning: ${W[errors]} move answers and ${W[create_errors]} create answers not 2xx: ${W[errlist]}"
    sock=$((W[err_connect] + W[err_read] + W[err_write] + W[err_timeout]))
    ((sock == 0)) || note "warning: socket errors: connect ${W[err_connect]}, read ${W[err_read]}, write ${W[err_write]}, timeout ${W[err_timeout]}"

    # Every game in play, read back: what the bench played, or one ply more
    # when its last request was still in flight as wrk stopped.
    W[checked]=0
    : >"$TMP/games.next"
    while read -r gid gw gb gver gply infl; do
        got=$(curl -sS -m 5 "$CHESSD_URL/v1/games/$gid" | jq -r '"\(.version) \(.moves | length) \(.status)"' 2>/dev/null) ||
            die "GET /v1/games/$gid failed"
        read -r v n st <<<"$got"
        if ! [[ ($v == "$gver" && $n == "$gply") || ($infl == 1 && $v == $((gver + 1)) && $n == $((gply + 1))) ]] ||
            [[ $st != active || $n != $((v - 1)) ]]; then
            die "game $gid: the bench played $gply plies up to version $gver (in flight: $infl), but GET answers version $v, $n moves, status $st"
        fi
        W[checked]=$((W[checked] + 1))
        echo "$gid $gw $gb $v $n" >>"$TMP/games.next"
    done < <(grep '^GAMESTATE ' "$TMP/wrk.out" | cut -d' ' -f2-)
    for ((g = $(wc -l <"$TMP/games.next"); g < GAMES; g++)); do
        create_game >>"$TMP/games.next" || exit 1
    done
    mv "$TMP/games.next" "$TMP/games"
}

# measure_chessd -> sets C[...] for this repetition
declare -A C
# BENCH_PROFILE=1: the warm-up's system calls are counted (a tracepoint per
# call slows them, so not in the measured run) and the first measured run
# is sampled (perf record, 999 Hz).
PROFILED='' COUNTED=''
# under_perf WHAT DURATION STAGGER: run_wrk under `perf WHAT` (record or stat)
under_perf() {
    local perf_pid
    if [[ $1 == record ]]; then
        perf record -q -F 999 -o "$TMP/perf.data" -p "$CHESSD_PID" >/dev/null 2>&1 &
    else
        perf stat -x, -e 'syscalls:sys_enter_*' -o "$TMP/perf.stat" -p "$CHESSD_PID" >/dev/null 2>&1 &
    fi
    perf_pid=$!
    sleep 0.5 # attached before the load
    run_wrk "$2" "$3"
    kill -INT "$perf_pid" 2>/dev/null
    wait "$perf_pid" 2>/dev/null
}
measure_chessd() {
    if [[ $PROFILE == 1 && -z $PROFILED ]]; then
        under_perf record "$DURATION" "$1"
        PROFILED=${W[moves]}
    else
        run_wrk "$DURATION" "$1"
    fi
    C=()
    for kv in "${!W[@]}"; do C[$kv]=${W[$kv]}; done
    C[dur_s]=$(awk -v us="${W[duration_us]}" 'BEGIN { print us / 1e6 }')
    C[moves_ps]=$(awk -v n="${W[moves]}" -v s="${C[dur_s]}" 'BEGIN { printf "%.1f", n / s }')
    C[creates_ps]=$(awk -v n="${W[creates]}" -v s="${C[dur_s]}" 'BEGIN { printf "%.1f", n / s }')
    # CPU per move (the creates, about 1/PLIES of the requests, are included)
    C[cd_cpu]=$(awk -v t="$CHESSD_TICKS" -v n="${W[moves]}" -v hz="$CLK_TCK" 'BEGIN { printf "%.1f", t / hz * 1e6 / n }')
    C[cd_user]=$(awk -v t="$CHESSD_USER_TICKS" -v n="${W[moves]}" -v hz="$CLK_TCK" 'BEGIN { printf "%.1f", t / hz * 1e6 / n }')
    C[rd_cpu]=$(awk -v t="$REDIS_TICKS" -v n="${W[moves]}" -v hz="$CLK_TCK" 'BEGIN { printf "%.1f", t / hz * 1e6 / n }')
    C[cd_csw]=$(awk -v t="$CHESSD_CSW" -v n="${W[moves]}" 'BEGIN { printf "%.2f", t / n }')
    C[rd_csw]=$(awk -v t="$REDIS_CSW" -v n="${W[moves]}" 'BEGIN { printf "%.2f", t / n }')
    C[wrk_cpu]=$(awk -v t="$WRK_CPU_US" -v n="${W[moves]}" 'BEGIN { printf "%.1f", t / n }')
    C[scripts_pm]=$(awk -v t="$REDIS_SCRIPTS" -v n="${W[moves]}" 'BEGIN { printf "%.3f", t / n }')
    C[refused]=$REDIS_REFUSED C[maps]=$REDIS_MAPS
    if ((W[timed])); then
        C[p50]=${W[move_p50_us]} C[p90]=${W[move_p90_us]} C[p99]=${W[move_p99_us]} C[max]=${W[move_max_us]}
    else   # no LuaJIT ffi in this wrk: wrk's own figures, creates included
        C[p50]=${W[wrk_p50_us]} C[p90]=0 C[p99]=${W[wrk_p99_us]} C[max]=0
    fi
}

# ---------------------------------------------------------------- redis-benchmark
# rb N ARGS... -> "ops/s p99_ms" of redis-benchmark [--cluster] -c CONNS -n N -r GAMES ARGS
rb() {
    local n=$1 rps p99
    shift
    bg_wait RB_PID redis-benchmark "${RB_MODE[@]}" -h 127.0.0.1 -p "$REDIS_PORT" -c "$CONNS" -n "$n" -r "$GAMES" --csv "$@" \
        >"$TMP/rb.out" 2>&1 || die "redis-benchmark $1 failed: $(head -c 1000 "$TMP/rb.out")"
    [[ -n $VERBOSE ]] && { echo "  --- redis-benchmark $1 -n $n"; cut -c 1-160 "$TMP/rb.out"; } >&2
    grep -q -e '^Error' -e '^ERR' -e 'NOSCRIPT' "$TMP/rb.out" && die "redis-benchmark $1 reported errors: $(head -c 1000 "$TMP/rb.out")"
    # the test's title (first field) is the command line, which may hold '","'
    rps=$(awk -F'","' 'NR > 1 && NF >= 8 { v = $(NF - 6) } END { print v + 0 }' "$TMP/rb.out")
    p99=$(awk -F'","' 'NR > 1 && NF >= 8 { v = $(NF - 1) } END { print v + 0 }' "$TMP/rb.out")
    awk -v r="$rps" 'BEGIN { exit !(r > 0) }' || die "redis-benchmark $1 printed no rate: $(head -c 1000 "$TMP/rb.out")"
    echo "$rps $p99"
}
# requests for a run of about DURATION/2 s at RATE ops/s
rb_count() { awk -v r="$1" -v d="$DURATION" 'BEGIN { n = int(r * d / 2); if (n < 10000) n = 10000; print n }'; }

# The key tag redis-benchmark writes over "{tag}" on each master, and that
# master's port: TAGS[i] on TAG_PORTS[i]. On one node "{tag}" stays.
TAGS=() TAG_PORTS=()
if ((${#RB_MODE[@]})); then
    bg_wait RB_PID redis-benchmark --cluster -h 127.0.0.1 -p "$REDIS_PORT" -c "${#REDIS_PORTS[@]}" -n 300 --csv \
        SET 'chessd:bench:probe:{tag}' x >"$TMP/rb.out" 2>&1 || die "redis-benchmark --cluster SET failed: $(head -c 1000 "$TMP/rb.out")"
    for port in "${REDIS_PORTS[@]}"; do
        probe=$(redis-cli -h 127.0.0.1 -p "$port" --scan --pattern 'chessd:bench:probe:*')
        [[ $probe =~ ^chessd:bench:probe:(\{[^$'\n']*)$ ]] ||
            die "redis-benchmark --cluster did not leave one probe key on the master at port $port: '$probe'"
        TAGS+=("${BASH_REMATCH[1]}") TAG_PORTS+=("$port")
        redis-cli -h 127.0.0.1 -p "$port" DEL "$probe" >/dev/null
    done
else
    TAGS=('{tag}') TAG_PORTS=("$REDIS_PORT")
fi
# with_tag I ARGS...: ARGS with "{tag}" read as TAGS[I] and __rand_int__ as key 0
with_tag() {
    local i=$1 a out=()
    shift
    for a in "$@"; do a=${a//'{tag}'/${TAGS[i]}}; out+=("${a//__rand_int__/000000000000}"); done
    printf '%s\0' "${out[@]}"
}

# Our own SCRIPT LOAD (after the SCRIPT EXISTS check above) on each master,
# and the keys, each tag's on its master.
for port in "${REDIS_PORTS[@]}"; do
    [[ $(redis-cli -h 127.0.0.1 -p "$port" -x SCRIPT LOAD <"$TMP/cas.lua") == "$SCRIPT_SHA" ]] ||
        die "SCRIPT LOAD did not answer the script's SHA-1 $SCRIPT_SHA (port $port)"
    [[ $(redis-cli -h 127.0.0.1 -p "$port" -x SCRIPT LOAD <"$TMP/load.lua") == "$LOAD_SHA" ]] ||
        die "SCRIPT LOAD did not answer the load script's SHA-1 $LOAD_SHA (port $port)"
done
for i in "${!TAGS[@]}"; do
    redis-cli -h 127.0.0.1 -p "${TAG_PORTS[i]}" EVAL "for i = 0, tonumber(ARGV[1]) - 1 do local n = ARGV[6] .. ':' .. string.format('%012d', i) redis.call('HSET', 'chessd:bench:game:' .. n, 'version', '1', 'state', ARGV[2], 'hlen', ARGV[5], 'wid', 'benchwriteid0000') redis.call('SET', 'chessd:bench:moves:' .. n, ARGV[3]) redis.call('SET', 'chessd:bench:history:' .. n, ARGV[4]) end return 1" \
        0 "$GAMES" "$DATA" "$DATA_MOVES" "$DATA_HISTORY" "$DATA_HLEN" "${TAGS[i]}" >"$TMP/eval.out" 2>&1
    [[ $(cat "$TMP/eval.out") == 1 ]] || die "cannot pre-create the redis-benchmark keys of tag ${TAGS[i]}: $(head -c 300 "$TMP/eval.out")"
done
# A move's write: the state, one move list entry and an empty history entry
# appended, and its event published (an untimed game: no clock check), of
# the size of a move's event (about 950 bytes), by SPUBLISH on a cluster,
# the mover marked seen (Redis's TIME read, as a move does), no webhooks.
# The history entry is empty because the script checks that the history
# holds one entry per ply of the state (a game whose keys were evicted is
# refused) and the state, the same at every call, never gains a ply: the
# APPEND and the check still run, 16 bytes fewer are copied.
EVENT="2 0 1796000000000 0 change"$'\n'"{\"type\":\"change\",\"event\":\"move\",\"pad\":\"$(printf '%*s' 900 '' | tr ' ' x)\"}"
PUBLISH=PUBLISH
[[ $MODE == cluster ]] && PUBLISH=SPUBLISH
CAS_ARGS=(EVALSHA "$SCRIPT_SHA" 3 'chessd:bench:game:{tag}:__rand_int__' 'chessd:bench:moves:{tag}:__rand_int__' 'chessd:bench:history:{tag}:__rand_int__'
          - 1 1 "$DATA" "$DATA_HLEN" append ' g1f3:Nf3' '' 0 '' 0 0 benchwriteid0000 benchwriteid0000
          0 0 'chessd:events:{tag}' "$EVENT" "$PUBLISH" '' '' white '' '' '' '' '')
# A move's read: the state and the history's tail.
READ_ARGS=(EVALSHA "$LOAD_SHA" 3 'chessd:bench:game:{tag}:__rand_int__' 'chessd:bench:moves:{tag}:__rand_int__' 'chessd:bench:history:{tag}:__rand_int__'
           change 16 '')
# Every ARGV the script reads is given (the script grows; this list must too).
argv_max=$(grep -o 'ARGV\[[0-9]*\]' "$TMP/cas.lua" | tr -dc '0-9\n' | sort -n | tail -n 1)
((${#CAS_ARGS[@]} - 6 == argv_max)) ||
    die "the script extracted from $STORE_SRC reads ARGV[1..$argv_max], this bench gives $((${#CAS_ARGS[@]} - 6)): update CAS_ARGS"
for i in "${!TAGS[@]}"; do
    mapfile -d '' -t args < <(with_tag "$i" "${CAS_ARGS[@]}")
    r=$(redis-cli -h 127.0.0.1 -p "${TAG_PORTS[i]}" "${args[@]}" | paste -sd ' ')
    [[ $r == 'ok 1' ]] || die "EVALSHA on a pre-created key of tag ${TAGS[i]} did not take the success path: '$r'"
done
# moves_lengths -> the length of the move list of key 0 of each tag
moves_lengths() {
    local i
    for i in "${!TAGS[@]}"; do
        redis-cli -h 127.0.0.1 -p "${TAG_PORTS[i]}" STRLEN "chessd:bench:moves:${TAGS[i]}:000000000000"
    done | paste -sd ' '
}

# measure_redis -> sets B[...] for this repetition
declare -A B
measure_redis() {
    local out cal n r0 r1 i before after version
    B=()
    out=$(rb 20000 "${CAS_ARGS[@]}") || exit 1
    cal=${out%% *}
    n=$(rb_count "$cal")
    read -r -a before <<<"$(moves_lengths)"
    r0=$(cpu_ticks "${REDIS_PIDS[@]}")
    out=$(rb "$n" "${CAS_ARGS[@]}") || exit 1
    r1=$(cpu_ticks "${REDIS_PIDS[@]}")
    read -r -a after <<<"$(moves_lengths)"
    for i in "${!TAGS[@]}"; do
        ((after[i] > before[i])) ||
            die "redis-benchmark's EVALSHA did not write the keys of tag ${TAGS[i]} (move list ${before[i]} -> ${after[i]} bytes): error answers?"
    done
    B[cas]=${out%% *} B[cas_p99]=${out#* }
    B[cas_cpu]=$(awk -v t="$((r1 - r0))" -v n="$n" -v hz="$CLK_TCK" 'BEGIN { printf "%.1f", t / hz * 1e6 / n }')
    out=$(rb 20000 "${READ_ARGS[@]}") || exit 1
    cal=${out%% *}
    out=$(rb "$(rb_count "$cal")" "${READ_ARGS[@]}") || exit 1
    B[read]=${out%% *} B[read_p99]=${out#* }
    for i in "${!TAGS[@]}"; do
        version=$(redis-cli -h 127.0.0.1 -p "${TAG_PORTS[i]}" HGET "chessd:bench:game:${TAGS[i]}:000000000000" version)
        [[ $version == 1 ]] || die "the redis-benchmark keys of tag ${TAGS[i]} changed version: '$version'"
    done
    B[bound]=$(awk -v a="${B[cas]}" -v b="${B[read]}" 'BEGIN { printf "%.1f", 1 / (1 / a + 1 / b) }')
}

# ---------------------------------------------------------------- measure
RB_VERSION=$(redis-benchmark --version 2>/dev/null | awk '{ print $2 }')
WRK_VERSION=$(wrk -v 2>&1 | head -n 1 | awk '{ print $1, $2 }')
if [[ $MODE == cluster ]]; then
    REDIS_DESC="a Redis Cluster of ${#REDIS_PORTS[@]} master(s), no replicas (127.0.0.1:$(printf '%s,' "${REDIS_PORTS[@]}" | sed 's/,$//'))"
else
    REDIS_DESC="one redis-server (127.0.0.1:$REDIS_PORT)"
fi
note "chessd=$CHESSD ($CHESSD_URL, $CHESSD_THREADS threads) on $REDIS_DESC, redis-server $(redis-server --version | awk '{ print $3 }' | sed 's/^v=//')"
note "$WRK_VERSION, redis-benchmark $RB_VERSION${RB_MODE[*]:+ ${RB_MODE[*]}}; not pinned: all share CPUs ${CPUS_ALLOWED:-?}"
note "$GAMES games, moves from a fixed $PLIES-ply line, then a new game; wrk -t$WRK_THREADS -c$CONNS -d${DURATION}s after ${WARMUP}s warm-up; redis-benchmark -c$CONNS ~$(((DURATION + 1) / 2))s per command; $REPS repetition(s)$( ((REPS > 1)) && echo ', median reported')"
note "compare-and-set script from $STORE_SRC, sha1 $SCRIPT_SHA (the one chessd loaded)"
echo

stagger=1
if ((WARMUP > 0)); then
    if [[ $PROFILE == 1 ]]; then
        under_perf stat "$WARMUP" "$stagger"
        COUNTED=${W[moves]}
    else
        run_wrk "$WARMUP" "$stagger"
    fi
    stagger=0
fi
declare -A R   # R[field] = space-separated samples, one per repetition
T_MOVES=0 T_ERRS=0 T_CHECKED=0 T_CREATES=0 T_ERRLIST='' T_REFUSED=0 T_MAPS=0
for ((rep = 1; rep <= REPS; rep++)); do
    [[ -t 2 ]] && printf '  run %d/%d\r' "$rep" "$REPS" >&2
    measure_chessd "$stagger"
    stagger=0
    measure_redis
    for f in moves_ps creates_ps cd_cpu cd_user rd_cpu cd_csw rd_csw wrk_cpu scripts_pm p50 p90 p99 max create_p50_us create_p99_us wrk_p99_us; do R[$f]+="${C[$f]} "; done
    for f in cas cas_p99 cas_cpu read read_p99 bound; do R[$f]+="${B[$f]} "; done
    R[ratio]+="$(awk -v a="${C[moves_ps]}" -v b="${B[cas]}" 'BEGIN { printf "%.4f", a / b }') "
    R[ratio_bound]+="$(awk -v a="${C[moves_ps]}" -v b="${B[bound]}" 'BEGIN { printf "%.4f", a / b }') "
    T_MOVES=$((T_MOVES + C[moves])) T_ERRS=$((T_ERRS + C[errors])) T_CHECKED=$((T_CHECKED + C[checked]))
    T_CREATES=$((T_CREATES + C[creates])) T_REFUSED=$((T_REFUSED + C[refused])) T_MAPS=$((T_MAPS + C[maps]))
    [[ -n ${C[errlist]} ]] && T_ERRLIST+="${T_ERRLIST:+, }${C[errlist]}"
done
[[ -t 2 ]] && printf '%*s\r' 20 '' >&2

declare -A M
for f in "${!R[@]}"; do M[$f]=$(median "${R[$f]}"); done

# The games chessd stored, on each master: a cluster must spread them.
GAMES_PER_MASTER=()
for port in "${REDIS_PORTS[@]}"; do
    n=$(redis-cli -h 127.0.0.1 -p "$port" --scan --pattern 'chessd:game:*' | wc -l)
    GAMES_PER_MASTER+=("$n")
    ((n > 0)) || die "the master at port $port holds no game of chessd (games per master: ${GAMES_PER_MASTER[*]})"
done

# ---------------------------------------------------------------- report
fmt0() { awk -v x="$1" 'BEGIN { printf "%.0f", x }'; }
printf '  %-52s %10s %8s\n' '' ops/s p99_ms
printf '  %-52s %10s %8s\n' "chessd POST /v1/games/{id}/moves (200 answers)" "$(fmt0 "${M[moves_ps]}")" "$(ms "${M[p99]}")"
printf '  %-52s %10s %8s\n' "  with POST /v1/games replacing games played out" "$(fmt0 "${M[creates_ps]}")" "$(ms "${M[create_p99_us]}")"
printf '  %-52s %10s %8s\n' "redis-benchmark EVALSHA cas_script (success path)" "$(fmt0 "${M[cas]}")" "${M[cas_p99]}"
printf '  %-52s %10s %8s\n' "redis-benchmark EVALSHA load_script (a change's read)" "$(fmt0 "${M[read]}")" "${M[read_p99]}"
printf '  %-52s %10s\n' "one load + one compare-and-set per move (bound)" "$(fmt0 "${M[bound]}")"
echo
echo "  chessd: $T_MOVES moves, $T_CREATES games created, $T_ERRS move answers not 200${T_ERRLIST:+ ($T_ERRLIST)}; $T_CHECKED games read back and checked"
echo "  games stored per master: ${GAMES_PER_MASTER[*]} (chessd:game:* keys; ports ${REDIS_PORTS[*]})"
echo "  chessd's Redis calls: ${M[scripts_pm]} scripts (EVALSHA, EVAL) per move (creates included); in the measured run(s) $T_REFUSED commands refused (MOVED, ASK ...), $T_MAPS CLUSTER SLOTS"
if ((C[timed])); then
    echo "  chessd move latency (200 answers, timed in the wrk script): p50 $(ms "${M[p50]}") ms, p90 $(ms "${M[p90]}") ms, p99 $(ms "${M[p99]}") ms, max $(ms "${M[max]}") ms"
    echo "  wrk's own p99 (moves and creates): $(ms "${M[wrk_p99_us]}") ms; create p50 $(ms "${M[create_p50_us]}") ms"
else
    echo "  chessd latency from wrk (no LuaJIT ffi, so moves and creates together): p50 $(ms "${M[p50]}") ms, p99 $(ms "${M[p99]}") ms"
fi
echo "  CPU per move: chessd ${M[cd_cpu]} us (user mode ${M[cd_user]} us, the kernel the rest), redis-server${REDIS_PIDS[1]:+s (all)} ${M[rd_cpu]} us, wrk ${M[wrk_cpu]} us; redis-server${REDIS_PIDS[1]:+s} per redis-benchmark EVALSHA: ${M[cas_cpu]} us"
echo "  context switches per move (a thread put to sleep or off its CPU): chessd ${M[cd_csw]}, redis-server${REDIS_PIDS[1]:+s (all)} ${M[rd_csw]}"
if ((REPS > 1)); then
    echo "  samples: chessd moves/s ${R[moves_ps]% }; redis-benchmark cas/s ${R[cas]% }; ratio ${R[ratio]% }"
fi
if [[ -n $PROFILED ]]; then
    echo "  where chessd's CPU went in the first measured run ($PROFILED moves, sampled by perf at 999 Hz;" \
        "system calls counted in the warm-up, ${COUNTED:-no} moves):"
    [[ -n $COUNTED ]] || : >"$TMP/perf.stat"
    "$HERE/profile_report.sh" "$TMP/perf.data" "$TMP/perf.stat" "${COUNTED:-1}" "$(dirname "$CHESSD")" ||
        die "profile_report.sh failed"
fi
echo "  redis-benchmark keys hold the record chessd stored for $DATA_PLY plies of the line (${#DATA} bytes)"
echo
echo "goal: ratio >= 0.4"
echo "redis: $MODE (${#REDIS_PORTS[@]} master(s))"
echo "chessd moves/s: ${M[moves_ps]}"
echo "redis-benchmark cas/s: ${M[cas]}"
echo "redis-benchmark load/s: ${M[read]}"
echo "ratio chessd moves/s / (load + cas bound): $(awk -v x="${M[ratio_bound]}" 'BEGIN { printf "%.2f", x }')"
echo "ratio chessd moves/s / redis-benchmark cas/s: $(awk -v x="${M[ratio]}" 'BEGIN { printf "%.2f", x }')"
echo "chessd move p99 ms: $(ms "${M[p99]}")"
echo "cpu us per move chessd: ${M[cd_cpu]}"
echo "cpu us per move chessd user mode: ${M[cd_user]}"
echo "cpu us per move redis: ${M[rd_cpu]}"
echo "cpu us per move wrk: ${M[wrk_cpu]}"
echo "context switches per move chessd: ${M[cd_csw]}"
echo "context switches per move redis: ${M[rd_csw]}"
echo "redis scripts per move: ${M[scripts_pm]}"
echo "redis commands refused: $T_REFUSED"
echo "games per master: ${GAMES_PER_MASTER[*]}"
exit 0
