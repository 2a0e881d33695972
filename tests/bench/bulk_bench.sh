#!/usr/bin/env bash
# bulk_bench.sh: what a round made in one call saves. In each of
# BULK_ROUNDS rounds, times BULK_GAMES single POST /v1/games one after
# another against one POST /v1/games/bulk of as many pairings (the same
# Fischer clock), over one kept-alive connection. Prints each round's
# ratio, their median (the goal: at least 10) and the CPU per game of each.
#
#   usage: tests/bench/bulk_bench.sh [path/to/chessd]     (run by `make bench`)
#
# BULK_ROUNDS (default 3, 1 to 9), BULK_GAMES (default 500, at most 500);
# BULK_CLUSTER=1 (the default) runs it all again on a 3-master Redis
# Cluster, BULK_CLUSTER=0 on one redis-server only. The order of the two
# ways alternates between rounds. No figure is asserted; exits non-zero
# when a request fails.

set -u -o pipefail

CHESSD=${1:-build/chessd}
ROUNDS=${BULK_ROUNDS:-3}
COUNT=${BULK_GAMES:-500}
CLUSTER=${BULK_CLUSTER:-1}
SETTINGS='{"clock":{"initial_ms":300000,"increment_ms":2000}}'
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
die() { echo "bulk_bench: FAIL: $*" >&2; exit 1; }
[[ $ROUNDS =~ ^[1-9]$ ]] || die "BULK_ROUNDS must be 1 to 9, got '$ROUNDS'"
[[ $COUNT =~ ^([1-9][0-9]?|[1-4][0-9][0-9]|500)$ ]] || die "BULK_GAMES must be 1 to 500, got '$COUNT'"
[[ $CLUSTER == [01] ]] || die "BULK_CLUSTER must be 0 or 1, got '$CLUSTER'"
# shellcheck source=tests/bench/lib.sh
. "$HERE/lib.sh"
need redis-server redis-server
need redis-cli redis-tools
need node nodejs
TMP=$(mktemp -d "${TMPDIR:-/tmp}/bulk_bench.XXXXXX") || die "mktemp failed"
TOKEN_SECRET=$(head -c 32 /dev/urandom | od -An -tx1 | tr -d ' \n')
REDIS_PIDS=() CLUSTER_PIDS=()
stop_all() {
    local p
    [[ -n ${CHESSD_PID:-} ]] && stop_pid "$CHESSD_PID" 5
    for p in "${REDIS_PIDS[@]}" "${CLUSTER_PIDS[@]}"; do stop_pid "$p" 5; done
    CHESSD_PID='' REDIS_PIDS=() CLUSTER_PIDS=()
}
trap 'stop_all; rm -rf "$TMP"' EXIT

# measure LABEL REDIS_URL: chessd on REDIS_URL, and the client's rounds.
measure() {
    start_chessd "$CHESSD" "$TMP/chessd.$1.err" --redis "$2" --rate-limit-create 0 --rate-limit-bulk-games 0 \
        --engine none --variant-engine none
    local pids
    pids=$(printf '%s,' "${REDIS_PIDS[@]}")
    node "$HERE/bulk_client.mjs" "{\"url\":\"$CHESSD_URL\",\"label\":\"$1\",\"chessdPid\":$CHESSD_PID,\
\"redisPids\":[${pids%,}],\"rounds\":$ROUNDS,\"count\":$COUNT,\"settings\":$SETTINGS,\
\"clkTck\":$(getconf CLK_TCK)}" || die "the $1 run failed (chessd's log: $(tail -5 "$TMP/chessd.$1.err"))"
    stop_all
}

mkdir -p "$TMP/single" || die "cannot create $TMP/single"
start_redis "$TMP/single"
REDIS_PIDS=("$REDIS_PID")
measure 'one redis-server' "redis://127.0.0.1:$REDIS_PORT/0"

((CLUSTER)) || exit 0
start_cluster "$TMP/cluster" 3
REDIS_PIDS=("${CLUSTER_PIDS[@]}")
url=$(printf '127.0.0.1:%s,' "${CLUSTER_PORTS[@]}")
measure 'Redis Cluster of 3' "redis+cluster://${url%,}"
