#!/usr/bin/env bash
# game_compare.sh: the cost of Redis Cluster routing for chessd's moves. Runs
# tests/bench/game_bench.sh twice, back to back, with the same settings: on
# one redis-server (BENCH_REDIS=single), then on a local Redis Cluster of
# three masters (BENCH_REDIS=cluster); shows each run's own report, then one
# block that sets them side by side: moves/s, their ratio (goal: cluster >=
# 0.9 of one node), CPU per move of chessd, the redis-servers (all of them
# together) and wrk, the load generator, and the Redis scripts run per move.
#
#   usage: tests/bench/game_compare.sh [path/to/chessd]     (run by `make bench`)
#
# Every setting of game_bench.sh (BENCH_DURATION, BENCH_GAMES, ...) applies
# to both runs. Exits non-zero when either run does (a tool missing, a
# server that does not start, a wrong answer); no figure is asserted.

set -u -o pipefail

CHESSD=${1:-build/chessd}
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
TMP=$(mktemp -d "${TMPDIR:-/tmp}/game_compare.XXXXXX") || { echo "game_compare: FAIL: mktemp failed" >&2; exit 1; }
trap 'rm -rf "$TMP"' EXIT

# value MODE NAME: the figure game_bench.sh printed as "NAME: value" in MODE's run
value() { awk -v name="$2: " 'index($0, name) == 1 { v = substr($0, length(name) + 1) } END { print v }' "$TMP/$1.out"; }

for mode in single cluster; do
    echo "game_compare: game_bench.sh with BENCH_REDIS=$mode"
    BENCH_REDIS=$mode "$HERE/game_bench.sh" "$CHESSD" | tee "$TMP/$mode.out"
    rc=${PIPESTATUS[0]}
    ((rc == 0)) || { echo "game_compare: FAIL: game_bench.sh with BENCH_REDIS=$mode exited with status $rc" >&2; exit "$rc"; }
    echo
done

declare -A F
for mode in single cluster; do
    for name in 'chessd moves/s' 'cpu us per move chessd' 'cpu us per move redis' 'cpu us per move wrk' 'games per master' \
        'redis scripts per move' 'redis commands refused'; do
        v=$(value "$mode" "$name")
        [[ -n $v ]] || { echo "game_compare: FAIL: the $mode run printed no '$name'" >&2; exit 1; }
        F[$mode/$name]=$v
    done
    F[$mode/total]=$(awk -v a="${F[$mode/cpu us per move chessd]}" -v b="${F[$mode/cpu us per move redis]}" \
        -v c="${F[$mode/cpu us per move wrk]}" 'BEGIN { printf "%.1f", a + b + c }')
done
ratio=$(awk -v c="${F[cluster/chessd moves/s]}" -v s="${F[single/chessd moves/s]}" 'BEGIN { printf "%.2f", c / s }')

row() { printf '  %-28s %10s %10s %10s %10s %10s\n' "$@"; }
echo "game_compare: chessd moves on one redis-server and on a 3-master Redis Cluster (same bench, back to back)"
row '' moves/s 'chessd' 'redis' 'wrk' 'total'
row '' '' 'us/move' 'us/move' 'us/move' 'us/move'
for mode in single cluster; do
    label='one redis-server'
    [[ $mode == cluster ]] && label='3-master Redis Cluster'
    row "$label" "$(awk -v x="${F[$mode/chessd moves/s]}" 'BEGIN { printf "%.0f", x }')" \
        "${F[$mode/cpu us per move chessd]}" "${F[$mode/cpu us per move redis]}" "${F[$mode/cpu us per move wrk]}" \
        "${F[$mode/total]}"
done
row 'cluster - one node' '' \
    "$(awk -v a="${F[cluster/cpu us per move chessd]}" -v b="${F[single/cpu us per move chessd]}" 'BEGIN { printf "%+.1f", a - b }')" \
    "$(awk -v a="${F[cluster/cpu us per move redis]}" -v b="${F[single/cpu us per move redis]}" 'BEGIN { printf "%+.1f", a - b }')" \
    "$(awk -v a="${F[cluster/cpu us per move wrk]}" -v b="${F[single/cpu us per move wrk]}" 'BEGIN { printf "%+.1f", a - b }')" \
    "$(awk -v a="${F[cluster/total]}" -v b="${F[single/total]}" 'BEGIN { printf "%+.1f", a - b }')"
echo "  games stored per master: one redis-server ${F[single/games per master]}; cluster ${F[cluster/games per master]}"
echo "  Redis scripts per move: one redis-server ${F[single/redis scripts per move]}; cluster ${F[cluster/redis scripts per move]} (commands refused, MOVED or ASK: ${F[cluster/redis commands refused]})"
echo
echo "goal: cluster moves/s >= 0.9 x one node's"
echo "single moves/s: ${F[single/chessd moves/s]}"
echo "cluster moves/s: ${F[cluster/chessd moves/s]}"
echo "ratio cluster / single: $ratio"
exit 0
