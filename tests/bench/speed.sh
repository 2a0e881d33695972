#!/usr/bin/env bash
# speed.sh: the three goals of speed, each against its reference measured in
# the same invocation, then set side by side in one block. Runs, in order,
# tests/bench/perft_bench.sh (perft against Stockfish's), http_bench.sh
# (POST /v1/position against nginx serving the same bytes) and
# game_compare.sh (moves against redis-benchmark's compare-and-set on the
# same Redis, one redis-server and a 3-master Cluster, with chessd's CPU per
# move), showing each one's own report as it runs, and ends with:
#
#   speed: perft time, chessd / Stockfish (start-up included): R   (goal <= 0.35)
#   speed: POST /v1/position req/s, chessd / nginx: R; p99 chessd A ms, nginx B ms   (goal >= 0.9, p99 <= nginx's)
#   speed: moves/s / redis-benchmark cas/s: one Redis R, Cluster R   (goal >= 0.4)
#   speed: chessd CPU per move: one Redis U us (user mode V us), Cluster ...   (goal <= 30 us)
#
#   usage: tests/bench/speed.sh [path/to/chessd]     (run by `make bench`)
#
# Every setting of the three scripts applies (BENCH_DURATION, ...).
# Exits non-zero when one of them does or prints no figure; no figure is
# asserted (the machines are noisy: the ratios are the measure).

set -u -o pipefail

CHESSD=${1:-build/chessd}
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
fail() { echo "speed: FAIL: $*" >&2; exit 1; }
TMP=$(mktemp -d "${TMPDIR:-/tmp}/speed.XXXXXX") || fail "mktemp failed"
trap 'rm -rf "$TMP"' EXIT

for bench in perft_bench http_bench game_compare; do
    "$HERE/$bench.sh" "$CHESSD" | tee "$TMP/$bench.out"
    rc=${PIPESTATUS[0]}
    ((rc == 0)) || fail "$bench.sh exited with status $rc"
    echo
done

# value FILE NAME: what FILE's last line "NAME: value ..." says (its first word)
value() {
    awk -v name="$2: " 'index($0, name) == 1 { v = substr($0, length(name) + 1) } END { split(v, w, " "); print w[1] }' "$1"
}
need() { [[ -n $1 ]] || fail "$2 printed no '$3'"; echo "$1"; }
perft=$(need "$(value "$TMP/perft_bench.out" 'ratio perft total, chessd start-up included / stockfish perft work')" \
    perft_bench.sh 'ratio perft total')
http=$(need "$(value "$TMP/http_bench.out" 'ratio chessd/nginx req/s')" http_bench.sh 'ratio chessd/nginx req/s')
http_p99=$(need "$(value "$TMP/http_bench.out" 'chessd p99 ms')" http_bench.sh 'chessd p99 ms')
nginx_p99=$(need "$(value "$TMP/http_bench.out" 'nginx p99 ms')" http_bench.sh 'nginx p99 ms')
declare -A G
for mode in single cluster; do
    for field in 'ratio chessd moves/s / redis-benchmark cas/s' 'cpu us per move chessd' 'cpu us per move chessd user mode'; do
        G[$mode/$field]=$(need "$(value "$TMP/game_compare.out" "$mode $field")" game_compare.sh "$mode $field")
    done
done

echo "speed: the three goals, each against its reference in this run"
echo "speed: perft time, chessd / Stockfish (start-up included): $perft   (goal <= 0.35)"
echo "speed: POST /v1/position req/s, chessd / nginx: $http; p99 chessd $http_p99 ms, nginx $nginx_p99 ms   (goal >= 0.9, p99 <= nginx's)"
echo "speed: moves/s / redis-benchmark cas/s: one Redis ${G[single/ratio chessd moves/s / redis-benchmark cas/s]}," \
    "Cluster ${G[cluster/ratio chessd moves/s / redis-benchmark cas/s]}   (goal >= 0.4)"
echo "speed: chessd CPU per move: one Redis ${G[single/cpu us per move chessd]} us (user mode" \
    "${G[single/cpu us per move chessd user mode]} us), Cluster ${G[cluster/cpu us per move chessd]} us (user mode" \
    "${G[cluster/cpu us per move chessd user mode]} us)   (goal <= 30 us)"
exit 0
