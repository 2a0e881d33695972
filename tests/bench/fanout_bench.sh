#!/usr/bin/env bash
# fanout_bench.sh: benchmark how fast a move reaches the event streams held
# on other replicas, and what an idle stream costs, against Redis Pub/Sub
# alone fanning the same messages out, in the same run.
#
#   usage: tests/bench/fanout_bench.sh [path/to/chessd]     (run by `make bench`)
#
# Needs redis-server, redis-cli, curl, jq and node (Debian packages
# redis-server, redis-tools, curl, jq, nodejs); it installs nothing and fails
# with a clear message if one is missing.
#
# Set-up: one private redis-server, three chessd replicas on it (A, B, C),
# reached directly on their ports (no balancer: its hop is not what is
# measured). B and C allow the streams (--max-streams and
# --max-streams-per-address, --max-connections and --per-ip-connections
# raised: every stream comes from 127.0.0.1).
#
# Method (tests/bench/fanout_client.mjs, one node process):
#  1. chessd: one game created on A; BENCH_STREAMS event streams on it, half
#     on B and half on C, half NDJSON and half SSE, each on its own
#     connection. VmRSS and Threads of B and C (/proc/PID/status) are read
#     before the streams open and once they have all had their snapshot and
#     half a second has passed: (RSS after - RSS before) / streams per
#     replica is the memory of an idle stream. Then BENCH_MOVES moves of the
#     line of game_growth.line are played on A, one at a time: each move's
#     request waits until every stream has its event, and each stream's
#     arrival time is taken from the request's start. A raw Redis subscriber
#     on the game's channel times when Redis hands chessd's own publication
#     out (the part of the latency before any replica's fan-out), and a second
#     one keeps the published messages.
#  2. reference: BENCH_SUBSCRIBERS raw Redis subscribers (default: as many
#     as streams) on another channel, and the same messages PUBLISHed to it
#     one at a time by a raw connection, timed the same way (PUBLISH sent ->
#     each subscriber's arrival). This is Redis Pub/Sub fanning out the same
#     bytes to as many connections, with nothing of chessd in the way; Redis's
#     used_memory growth per subscriber is printed beside chessd's RSS per
#     stream.
# Both phases are received by the same node process, so its own time to read
# a thousand sockets weighs on both alike. Nothing is pinned: chessd,
# redis-server and the client share the CPUs.
#
# Reported: move -> event p50/p99/max over every (move, stream) pair and for
# the last stream of each move (goal: p99 < 50 ms), move -> answer on A, move
# -> raw subscriber, the reference's figures, the ratios chessd/reference of
# p50 and p99, memory per idle stream, and threads before/after (a stream
# holds no thread). No figure is asserted: the script exits non-zero only when
# a tool is missing, a server does not start, or chessd answers wrongly (a
# move not 200 with the next version, a stream that skips a version or
# closes, an event that does not arrive within 10 s).
#
# Environment: BENCH_STREAMS (default 1000), BENCH_MOVES (default 200, at
# most 600 a game), BENCH_SUBSCRIBERS (default BENCH_STREAMS), BENCH_THREADS
# (chessd --threads; default chessd's own), BENCH_GAMES (default 1; more:
# every stream is one multi-game stream, POST /v1/games/events, following
# that many games, at most 500, and the moves go round the games, so each
# move's event reaches every stream through one of its games; the
# reference publishes the same messages in the same order). `make bench`
# runs it twice: 1000 single-game streams, then 100 streams of 500 games.

set -u -o pipefail

CHESSD=${1:-build/chessd}
STREAMS=${BENCH_STREAMS:-1000}
MOVES=${BENCH_MOVES:-200}
SUBSCRIBERS=${BENCH_SUBSCRIBERS:-$STREAMS}
GAMES=${BENCH_GAMES:-1}
THREADS=${BENCH_THREADS:-}
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
TOKEN_SECRET=fanout-bench-secret-0123456789abcdef

die() { echo "fanout_bench: FAIL: $*" >&2; exit 1; }
note() { echo "fanout_bench: $*"; }
# shellcheck source=tests/bench/lib.sh
source "$HERE/lib.sh"

# ---------------------------------------------------------------- tools
[[ -x $CHESSD ]] || die "chessd binary '$CHESSD' not found or not executable (build it first)"
need redis-server redis-server
need redis-cli redis-tools
need curl curl
need jq jq
need node nodejs
for v in STREAMS MOVES SUBSCRIBERS GAMES; do
    [[ ${!v} =~ ^[1-9][0-9]*$ ]] || die "BENCH_$v must be a positive integer, got '${!v}'"
done
((STREAMS % 4 == 0)) || die "BENCH_STREAMS must be a multiple of 4 (two replicas, two formats), got $STREAMS"
((GAMES <= 500)) || die "BENCH_GAMES must be at most 500 (a multi-game stream's bound), got $GAMES"
((MOVES <= 600 * GAMES)) || die "BENCH_MOVES must be at most 600 a game (the plies of game_growth.line), got $MOVES"
[[ -z $THREADS || $THREADS =~ ^[1-9][0-9]*$ ]] || die "BENCH_THREADS must be a positive integer, got '$THREADS'"
needed_fds=$((STREAMS + SUBSCRIBERS + 256))
(($(ulimit -n) >= needed_fds)) || ulimit -n "$needed_fds" 2>/dev/null ||
    die "ulimit -n is $(ulimit -n); $needed_fds descriptors are needed (lower BENCH_STREAMS or raise the limit)"

# ---------------------------------------------------------------- cleanup
TMP=$(mktemp -d "${TMPDIR:-/tmp}/fanout_bench.XXXXXX") || die "mktemp failed"
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

# ---------------------------------------------------------------- servers
start_redis "$TMP"
chessd_args=(--shutdown-grace 1 --rate-limit-create 0 --redis "redis://127.0.0.1:$REDIS_PORT/0")
[[ -n $THREADS ]] && chessd_args+=(--threads "$THREADS")
stream_args=(--max-connections $((STREAMS + 256)) --per-ip-connections 0
    --max-streams $((STREAMS + 16)) --max-streams-per-address $((STREAMS + 16)))
declare -A URL PID
for r in a b c; do
    args=("${chessd_args[@]}")
    [[ $r != a ]] && args+=("${stream_args[@]}")
    start_chessd "$CHESSD" "$TMP/chessd-$r.err" "${args[@]}"
    PIDS+=("$CHESSD_PID")
    URL[$r]=$CHESSD_URL PID[$r]=$CHESSD_PID
    hz=$(curl -sS -m 5 -o /dev/null -w '%{http_code}' "$CHESSD_URL/healthz") || die "curl GET $CHESSD_URL/healthz failed"
    [[ $hz == 200 ]] || die "chessd $r GET /healthz: expected 200, got $hz"
done

# ---------------------------------------------------------------- run
note "chessd=$CHESSD (A ${URL[a]}, B ${URL[b]}, C ${URL[c]}, $CHESSD_THREADS threads each)" \
    "redis-server $(redis-server --version | awk '{ print $3 }' | sed 's/^v=//') (127.0.0.1:$REDIS_PORT)"
note "node $(node --version) client; not pinned: everything shares CPUs $(awk '/^Cpus_allowed_list:/ { print $2 }' /proc/self/status)"
config=$(jq -nc --arg a "${URL[a]}" --arg b "${URL[b]}" --arg c "${URL[c]}" \
    --argjson bPid "${PID[b]}" --argjson cPid "${PID[c]}" --argjson redisPid "$REDIS_PID" --argjson redisPort "$REDIS_PORT" \
    --arg lineFile "$HERE/game_growth.line" --argjson streams "$STREAMS" --argjson moves "$MOVES" \
    --argjson subscribers "$SUBSCRIBERS" --argjson games "$GAMES" '$ARGS.named') || die "jq cannot build the client's configuration"
node "$HERE/fanout_client.mjs" "$config" >"$TMP/client.out" 2>"$TMP/client.err" &
CLIENT_PID=$!
wait "$CLIENT_PID" || die "the client stopped: $(head -c 2000 "$TMP/client.err")$(tail -c 1000 "$TMP"/chessd-*.err)"
CLIENT_PID=''
cat "$TMP/client.out"
exit 0
