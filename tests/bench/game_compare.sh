#!/usr/bin/env bash
# game_compare.sh: the cost of Redis Cluster routing for chessd's moves. Runs
# tests/bench/game_bench.sh on one redis-server (BENCH_REDIS=single) and on a
# local Redis Cluster of three masters (BENCH_REDIS=cluster), with the same
# settings, in rounds: each round runs both back to back, the order turning
# from one round to the next (single then cluster, cluster then single, ...),
# so that a machine whose speed drifts (other guests, frequency) weighs on
# both alike. Each run's own report is shown, then one block that sets them
# side by side: per round, moves/s and the round's ratio (cluster over one
# node, measured minutes apart at most); then the medians over the rounds of
# moves/s, CPU per move of chessd, the redis-servers (all of them together)
# and wrk, the load generator, and the Redis scripts run per move. The
# figure compared with the goal (cluster >= 0.9 of one node) is the median
# of the rounds' ratios.
#
#   usage: tests/bench/game_compare.sh [path/to/chessd]     (run by `make bench`)
#
# GAME_COMPARE_ROUNDS (default 3, 1 to 9) sets the rounds.
# GAME_COMPARE_ONE_MASTER=1 adds to each round a run on a cluster of one
# master that serves every slot: chessd routes as on any cluster but nothing
# is spread, which tells the cost of routing (chessd's and Redis's cluster
# mode) from the cost of three redis-servers sharing the machine.
# Every setting of game_bench.sh (BENCH_DURATION, BENCH_GAMES, ...) applies
# to every run. Exits non-zero when a run does (a tool missing, a server
# that does not start, a wrong answer); no figure is asserted.

set -u -o pipefail

CHESSD=${1:-build/chessd}
ROUNDS=${GAME_COMPARE_ROUNDS:-3}
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
fail() { echo "game_compare: FAIL: $*" >&2; exit 1; }
[[ $ROUNDS =~ ^[1-9]$ ]] || fail "GAME_COMPARE_ROUNDS must be 1 to 9, got '$ROUNDS'"
TMP=$(mktemp -d "${TMPDIR:-/tmp}/game_compare.XXXXXX") || fail "mktemp failed"
trap 'rm -rf "$TMP"' EXIT

# The runs of a round: name, BENCH_REDIS, BENCH_CLUSTER_MASTERS, label.
RUNS=('single single 3 one redis-server')
[[ ${GAME_COMPARE_ONE_MASTER:-} == 1 ]] && RUNS+=('cluster1 cluster 1 1-master Redis Cluster')
RUNS+=('cluster cluster 3 3-master Redis Cluster')

# value FILE NAME: the figure game_bench.sh printed as "NAME: value" in FILE
value() { awk -v name="$2: " 'index($0, name) == 1 { v = substr($0, length(name) + 1) } END { print v }' "$1"; }
# median NUMBERS...: their median (the mean of the middle two for an even count)
median() { printf '%s\n' "$@" | sort -g | awk '{ v[NR] = $1 } END { if (NR % 2) printf "%.1f", v[(NR + 1) / 2]; else printf "%.1f", (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
# median2 NUMBERS...: the same, to two decimals (ratios)
median2() { printf '%s\n' "$@" | sort -g | awk '{ v[NR] = $1 } END { if (NR % 2) printf "%.2f", v[(NR + 1) / 2]; else printf "%.2f", (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }

NAMES=()
declare -A LABEL
for run in "${RUNS[@]}"; do
    read -r name _ _ label <<<"$run"
    NAMES+=("$name") LABEL[$name]=$label
done

FIELDS=('chessd moves/s' 'cpu us per move chessd' 'cpu us per move chessd user mode' 'cpu us per move redis'
        'cpu us per move wrk' 'games per master' 'redis scripts per move' 'redis commands refused'
        'ratio chessd moves/s / redis-benchmark cas/s')
declare -A F   # F[name/field/round]
for ((round = 1; round <= ROUNDS; round++)); do
    order=("${RUNS[@]}")
    if ((round % 2 == 0)); then   # every other round runs them in reverse
        order=()
        for ((i = ${#RUNS[@]} - 1; i >= 0; i--)); do order+=("${RUNS[i]}"); done
    fi
    for run in "${order[@]}"; do
        read -r name redis masters _ <<<"$run"
        out=$TMP/$name.$round.out
        echo "game_compare: round $round of $ROUNDS: game_bench.sh with BENCH_REDIS=$redis BENCH_CLUSTER_MASTERS=$masters"
        BENCH_REDIS=$redis BENCH_CLUSTER_MASTERS=$masters "$HERE/game_bench.sh" "$CHESSD" | tee "$out"
        rc=${PIPESTATUS[0]}
        ((rc == 0)) || fail "game_bench.sh with BENCH_REDIS=$redis BENCH_CLUSTER_MASTERS=$masters exited with status $rc"
        echo
        for field in "${FIELDS[@]}"; do
            v=$(value "$out" "$field")
            [[ -n $v ]] || fail "the $name run of round $round printed no '$field'"
            F[$name/$field/$round]=$v
        done
    done
done

# all NAME FIELD: the field's values over the rounds
all() { local r; for ((r = 1; r <= ROUNDS; r++)); do echo "${F[$1/$2/$r]}"; done; }
# ratio NAME ROUND: that round's moves/s of NAME over one node's
ratio() { awk -v c="${F[$1/chessd moves/s/$2]}" -v s="${F[single/chessd moves/s/$2]}" 'BEGIN { printf "%.2f", c / s }'; }
declare -A M RATIOS
for name in "${NAMES[@]}"; do
    for field in 'chessd moves/s' 'cpu us per move chessd' 'cpu us per move chessd user mode' 'cpu us per move redis' \
                 'cpu us per move wrk' 'redis scripts per move' 'redis commands refused'; do
        # shellcheck disable=SC2046
        M[$name/$field]=$(median $(all "$name" "$field"))
    done
    M[$name/total]=$(awk -v a="${M[$name/cpu us per move chessd]}" -v b="${M[$name/cpu us per move redis]}" \
        -v c="${M[$name/cpu us per move wrk]}" 'BEGIN { printf "%.1f", a + b + c }')
    # shellcheck disable=SC2046
    M[$name/cas]=$(median2 $(all "$name" 'ratio chessd moves/s / redis-benchmark cas/s'))
    RATIOS[$name]=
    for ((round = 1; round <= ROUNDS; round++)); do RATIOS[$name]+="$(ratio "$name" "$round") "; done
    # shellcheck disable=SC2086
    M[$name/ratio]=$(median2 ${RATIOS[$name]})
done
# minus NAME FIELD: NAME's median FIELD less one node's, signed
minus() { awk -v a="${M[$1/$2]}" -v b="${M[single/$2]}" 'BEGIN { printf "%+.1f", a - b }'; }

row() { printf '  %-34s %8s %6s %8s %8s %8s %8s\n' "$@"; }
echo "game_compare: chessd moves on one redis-server and on a Redis Cluster ($ROUNDS round(s), each runs both back to back)"
for ((round = 1; round <= ROUNDS; round++)); do
    line="  round $round:"
    for name in "${NAMES[@]}"; do
        line+=" ${LABEL[$name]} $(awk -v x="${F[$name/chessd moves/s/$round]}" 'BEGIN { printf "%.0f", x }') moves/s"
        [[ $name == single ]] || line+=" (ratio $(ratio "$name" "$round"))"
        line+=";"
    done
    echo "${line%;}"
done
echo "  medians over the rounds:"
row '' moves/s ratio chessd redis wrk total
row '' '' '' us/move us/move us/move us/move
for name in "${NAMES[@]}"; do
    row "${LABEL[$name]}" "$(awk -v x="${M[$name/chessd moves/s]}" 'BEGIN { printf "%.0f", x }')" "${M[$name/ratio]}" \
        "${M[$name/cpu us per move chessd]}" "${M[$name/cpu us per move redis]}" "${M[$name/cpu us per move wrk]}" \
        "${M[$name/total]}"
done
for name in "${NAMES[@]}"; do
    [[ $name == single ]] && continue
    row "${LABEL[$name]} - one node" '' '' "$(minus "$name" 'cpu us per move chessd')" \
        "$(minus "$name" 'cpu us per move redis')" "$(minus "$name" 'cpu us per move wrk')" "$(minus "$name" total)"
done
for name in "${NAMES[@]}"; do
    echo "  ${LABEL[$name]}: games stored per master (round $ROUNDS) ${F[$name/games per master/$ROUNDS]}; Redis scripts" \
        "per move ${M[$name/redis scripts per move]}, commands refused (MOVED, ASK) ${M[$name/redis commands refused]}"
done
echo
echo "goal: cluster moves/s >= 0.9 x one node's (the median of the rounds' ratios)"
echo "single moves/s: ${M[single/chessd moves/s]}"
[[ -n ${M[cluster1/chessd moves/s]:-} ]] && echo "cluster of one master moves/s: ${M[cluster1/chessd moves/s]}"
echo "cluster moves/s: ${M[cluster/chessd moves/s]}"
echo "ratios cluster / single by round: ${RATIOS[cluster]% }"
echo "ratio cluster / single: ${M[cluster/ratio]}"
# The move goals of speed (chessd against redis-benchmark's compare-and-set
# on the same Redis in the same run, and chessd's CPU per move), per mode.
for name in "${NAMES[@]}"; do
    echo "$name ratio chessd moves/s / redis-benchmark cas/s: ${M[$name/cas]}"
    echo "$name cpu us per move chessd: ${M[$name/cpu us per move chessd]}"
    echo "$name cpu us per move chessd user mode: ${M[$name/cpu us per move chessd user mode]}"
done
exit 0
