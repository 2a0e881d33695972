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
# GAME_COMPARE_ONE_MASTER=1 adds a run in between on a cluster of one master
# that serves every slot: chessd routes as on any cluster but nothing is
# spread, which tells the cost of routing (chessd's and Redis's cluster mode)
# from the cost of three redis-servers sharing the machine.
# Every setting of game_bench.sh (BENCH_DURATION, BENCH_GAMES, ...) applies
# to every run. Exits non-zero when a run does (a tool missing, a server
# that does not start, a wrong answer); no figure is asserted.

set -u -o pipefail

CHESSD=${1:-build/chessd}
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
TMP=$(mktemp -d "${TMPDIR:-/tmp}/game_compare.XXXXXX") || { echo "game_compare: FAIL: mktemp failed" >&2; exit 1; }
trap 'rm -rf "$TMP"' EXIT
fail() { echo "game_compare: FAIL: $*" >&2; exit 1; }

# The runs: name, BENCH_REDIS, BENCH_CLUSTER_MASTERS, label.
RUNS=('single single 3 one redis-server')
[[ ${GAME_COMPARE_ONE_MASTER:-} == 1 ]] && RUNS+=('cluster1 cluster 1 1-master Redis Cluster')
RUNS+=('cluster cluster 3 3-master Redis Cluster')

# value RUN NAME: the figure game_bench.sh printed as "NAME: value" in RUN
value() { awk -v name="$2: " 'index($0, name) == 1 { v = substr($0, length(name) + 1) } END { print v }' "$TMP/$1.out"; }

NAMES=()
declare -A LABEL
for run in "${RUNS[@]}"; do
    read -r name redis masters label <<<"$run"
    NAMES+=("$name") LABEL[$name]=$label
    echo "game_compare: game_bench.sh with BENCH_REDIS=$redis BENCH_CLUSTER_MASTERS=$masters"
    BENCH_REDIS=$redis BENCH_CLUSTER_MASTERS=$masters "$HERE/game_bench.sh" "$CHESSD" | tee "$TMP/$name.out"
    rc=${PIPESTATUS[0]}
    ((rc == 0)) || fail "game_bench.sh with BENCH_REDIS=$redis BENCH_CLUSTER_MASTERS=$masters exited with status $rc"
    echo
done

declare -A F
FIELDS=('chessd moves/s' 'cpu us per move chessd' 'cpu us per move redis' 'cpu us per move wrk' 'games per master'
        'redis scripts per move' 'redis commands refused')
for name in "${NAMES[@]}"; do
    for field in "${FIELDS[@]}"; do
        v=$(value "$name" "$field")
        [[ -n $v ]] || fail "the $name run printed no '$field'"
        F[$name/$field]=$v
    done
    F[$name/total]=$(awk -v a="${F[$name/cpu us per move chessd]}" -v b="${F[$name/cpu us per move redis]}" \
        -v c="${F[$name/cpu us per move wrk]}" 'BEGIN { printf "%.1f", a + b + c }')
done
# ratio RUN: RUN's moves/s over one node's
ratio() { awk -v c="${F[$1/chessd moves/s]}" -v s="${F[single/chessd moves/s]}" 'BEGIN { printf "%.2f", c / s }'; }
# minus RUN FIELD: RUN's FIELD less one node's, signed
minus() { awk -v a="${F[$1/$2]}" -v b="${F[single/$2]}" 'BEGIN { printf "%+.1f", a - b }'; }

row() { printf '  %-34s %8s %6s %8s %8s %8s %8s\n' "$@"; }
echo "game_compare: chessd moves on one redis-server and on a Redis Cluster (same bench, back to back)"
row '' moves/s ratio chessd redis wrk total
row '' '' '' us/move us/move us/move us/move
for name in "${NAMES[@]}"; do
    row "${LABEL[$name]}" "$(awk -v x="${F[$name/chessd moves/s]}" 'BEGIN { printf "%.0f", x }')" "$(ratio "$name")" \
        "${F[$name/cpu us per move chessd]}" "${F[$name/cpu us per move redis]}" "${F[$name/cpu us per move wrk]}" \
        "${F[$name/total]}"
done
for name in "${NAMES[@]}"; do
    [[ $name == single ]] && continue
    row "${LABEL[$name]} - one node" '' '' "$(minus "$name" 'cpu us per move chessd')" \
        "$(minus "$name" 'cpu us per move redis')" "$(minus "$name" 'cpu us per move wrk')" "$(minus "$name" total)"
done
for name in "${NAMES[@]}"; do
    echo "  ${LABEL[$name]}: games stored per master ${F[$name/games per master]}; Redis scripts per move" \
        "${F[$name/redis scripts per move]}, commands refused (MOVED, ASK) ${F[$name/redis commands refused]}"
done
echo
echo "goal: cluster moves/s >= 0.9 x one node's"
echo "single moves/s: ${F[single/chessd moves/s]}"
[[ -n ${F[cluster1/chessd moves/s]:-} ]] && echo "cluster of one master moves/s: ${F[cluster1/chessd moves/s]}"
echo "cluster moves/s: ${F[cluster/chessd moves/s]}"
echo "ratio cluster / single: $(ratio cluster)"
exit 0
