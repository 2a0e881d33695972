#!/usr/bin/env bash
# sleeping_bench.sh: what a correspondence game nobody plays costs. Creates
# SLEEPING_GAMES (default 100000) games of 14 days a move on a private
# redis-server, then reports Redis's memory per game (used_memory before
# and after, over the count) and chessd's CPU while nothing happens
# (SLEEPING_IDLE seconds, default 10): the goal is memory only, no CPU.
#
#   usage: tests/bench/sleeping_bench.sh [path/to/chessd]     (run by `make bench`)
#
# The games are made by POST /v1/games/bulk, 500 a call, or one by one
# with SLEEPING_BULK=0 (default 1); a bulk's record counts in the memory.
# No figure is asserted; exits non-zero when a game cannot be created.

set -u -o pipefail

CHESSD=${1:-build/chessd}
COUNT=${SLEEPING_GAMES:-100000}
IDLE=${SLEEPING_IDLE:-10}
BULK=${SLEEPING_BULK:-1}
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
die() { echo "sleeping_bench: FAIL: $*" >&2; exit 1; }
[[ $BULK == [01] ]] || die "SLEEPING_BULK must be 0 or 1, got '$BULK'"
# shellcheck source=tests/bench/lib.sh
. "$HERE/lib.sh"
need redis-server redis-server
need node nodejs
TMP=$(mktemp -d "${TMPDIR:-/tmp}/sleeping_bench.XXXXXX") || die "mktemp failed"
TOKEN_SECRET=$(head -c 32 /dev/urandom | od -An -tx1 | tr -d ' \n')
cleanup() {
    [[ -n ${CHESSD_PID:-} ]] && stop_pid "$CHESSD_PID" 5
    [[ -n ${REDIS_PID:-} ]] && stop_pid "$REDIS_PID" 5
    rm -rf "$TMP"
}
trap cleanup EXIT

start_redis "$TMP"
start_chessd "$CHESSD" "$TMP/chessd.err" --redis "redis://127.0.0.1:$REDIS_PORT/0" --rate-limit-create 0 --rate-limit-bulk-games 0 \
    --engine none --variant-engine none
memory() { redis-cli -p "$REDIS_PORT" INFO memory | tr -d '\r' | sed -n 's/^used_memory://p'; }
before=$(memory)
start=$(date +%s.%N)
# Four bulks at a time: more gained nothing here (2 cores), as each bulk's
# script holds Redis alone while it runs.
if ((BULK)); then how=(4 500) made='in bulks of 500'; else how=(32 0) made='one by one'; fi
node "$HERE/sleeping_client.mjs" "$CHESSD_URL" "$COUNT" "${how[0]}" '{"days_per_move":14}' "${how[1]}" ||
    die "creating the games failed"
took=$(awk -v s="$start" -v e="$(date +%s.%N)" 'BEGIN { printf "%.1f", e - s }')
after=$(memory)
keys=$(redis-cli -p "$REDIS_PORT" DBSIZE | tr -d '\r')
sleep 1
ticks_before=$(cpu_ticks "$CHESSD_PID")
sleep "$IDLE"
ticks_after=$(cpu_ticks "$CHESSD_PID")
hz=$(getconf CLK_TCK)
echo "sleeping_bench: $COUNT correspondence games created $made in $took s; Redis holds $keys keys"
echo "sleeping_bench: Redis memory per sleeping game: $(( (after - before) / COUNT )) bytes ($(( (after - before) / 1048576 )) MiB for all)"
echo "sleeping_bench: chessd CPU over $IDLE s with nothing happening: $(awk -v t=$((ticks_after - ticks_before)) -v hz="$hz" -v s="$IDLE" 'BEGIN { printf "%.1f ms a second", t * 1000 / hz / s }')   (goal: memory only, no CPU)"
