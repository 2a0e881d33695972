#!/usr/bin/env bash
# move_floor.sh: the floor under chessd's CPU per move. Runs
# tests/bench/move_floor.c (a server that does a move's I/O and nothing
# else: read the HTTP request, one EVALSHA round trip to Redis, answer
# BENCH_FLOOR_ANSWER bytes) in each of its three shapes against a private
# redis-server, under the load game_bench.sh puts on chessd (wrk -t2 -c32,
# a POST of a move's size), and prints each shape's requests/s and CPU per
# request (user + system time from /proc, over the requests wrk counted).
# "handoff" is chessd's shape (connection threads hand requests to store
# threads that wait on Redis); its figure is what a move costs before any
# of chessd's own work. No figure is asserted.
#
#   usage: tests/bench/move_floor.sh path/to/move_floor     (run by `make bench`)
#
# BENCH_DURATION (s, default 5), BENCH_FLOOR_ANSWER (bytes, default 600).

set -u -o pipefail

FLOOR=${1:?usage: move_floor.sh path/to/move_floor}
DURATION=${BENCH_DURATION:-5}
ANSWER=${BENCH_FLOOR_ANSWER:-600}
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
die() { echo "move_floor: FAIL: $*" >&2; exit 1; }
# shellcheck source=lib.sh
source "$HERE/lib.sh"
need wrk wrk
need redis-server redis-server
[[ -x $FLOOR ]] || die "$FLOOR is not an executable (make build/move_floor)"
[[ $DURATION =~ ^[1-9][0-9]*$ ]] || die "BENCH_DURATION must be a whole number of seconds"

TMP=$(mktemp -d "${TMPDIR:-/tmp}/move_floor.XXXXXX") || die "mktemp failed"
FLOOR_PID=''
trap 'stop_pid "$FLOOR_PID" 2; stop_pid "$REDIS_PID" 2; rm -rf "$TMP"' EXIT
start_redis "$TMP"
CLK_TCK=$(getconf CLK_TCK)

cat >"$TMP/post.lua" <<'LUA'
wrk.method = "POST"
wrk.body = '{"move":"Nf3","expected_version":12}'
wrk.headers["Content-Type"] = "application/json"
wrk.headers["Authorization"] = "Bearer v1.0123456789abcdef0123456789abcdef0123456789abcdef0123456789ab"
LUA

echo "move_floor: HTTP request in, one EVALSHA round trip to redis-server $(redis-server --version | awk '{ print $3 }' | sed 's/^v=//'), $ANSWER bytes out; wrk -t2 -c32 -d${DURATION}s"
printf '  %-9s %10s %14s\n' shape req/s 'cpu us/req'
for mode in handoff threads loop; do
    "$FLOOR" "$mode" 0 "$REDIS_PORT" "$ANSWER" >"$TMP/floor.log" 2>&1 &
    FLOOR_PID=$!
    port=''
    for ((i = 0; i < 50 && !port; i++)); do
        port=$(sed -n 's/^move_floor: listening on port \([0-9][0-9]*\)$/\1/p' "$TMP/floor.log")
        [[ -n $port ]] || sleep 0.1
    done
    [[ -n $port ]] || die "move_floor $mode did not start: $(cat "$TMP/floor.log")"
    curl -fs -o /dev/null -X POST -d '{}' "http://127.0.0.1:$port/" || die "move_floor $mode does not answer: $(cat "$TMP/floor.log")"
    t0=$(cpu_ticks "$FLOOR_PID")
    out=$(wrk -t2 -c32 -d"${DURATION}s" -s "$TMP/post.lua" "http://127.0.0.1:$port/v1/games/x/moves") || die "wrk failed: $out"
    t1=$(cpu_ticks "$FLOOR_PID")
    stop_pid "$FLOOR_PID" 2
    FLOOR_PID=''
    n=$(awk '/requests in/ { print $1 }' <<<"$out")
    grep -q 'Non-2xx\|Socket errors' <<<"$out" && die "$mode: wrk saw errors: $out"
    [[ $n =~ ^[0-9]+$ && $n -gt 0 ]] || die "$mode: no request counted: $out"
    printf '  %-9s %10.0f %14.1f\n' "$mode" "$(awk -v n="$n" -v d="$DURATION" 'BEGIN { print n / d }')" \
        "$(awk -v t="$((t1 - t0))" -v n="$n" -v hz="$CLK_TCK" 'BEGIN { print t / hz * 1e6 / n }')"
done
