#!/usr/bin/env bash
# perft_bench.sh: benchmark chessd's perft against Stockfish's on the same
# positions, in the same run, single-threaded.
#
#   usage: tests/bench/perft_bench.sh [path/to/chessd]     (run by `make bench`)
#
# Positions: start position perft 6 (119060324 nodes) and Kiwipete perft 5
# (193690690 nodes).  Both engines' node counts are checked against these
# published numbers; any mismatch (or a missing tool) exits non-zero.
#
# Fairness:
#  * chessd: each run is a fresh process (`chessd perft N FEN`), which includes
#    start-up (table building) and printing.  That overhead is measured by
#    `chessd perft 1 FEN` on the same position and subtracted.
#  * Stockfish: process start-up includes loading its NNUE net, which is not
#    perft work.  Stockfish is kept running as one long-lived process (a bash
#    coprocess); the script timestamps around `go perft N` until the
#    "Nodes searched" line arrives.  The small pipe round-trip overhead,
#    measured the same way with `go perft 1`, is subtracted.  Raw figures
#    (a fresh `stockfish` process per run, start-up included) are also shown.
#  * Each measurement is repeated BENCH_REPS times (default 5), chessd and
#    Stockfish interleaved so machine noise hits both alike, and summarised by
#    the minimum (default; noise on a shared machine only ever adds time) or,
#    with BENCH_STAT=median, the median.
# The ratio chessd_time / stockfish_time uses the start-up-corrected figures
# (goal <= 1.0); the last line puts chessd's raw time (start-up included)
# against Stockfish's corrected time, both positions summed (goal <= 0.35).
# There are no absolute-time assertions.
#
# Environment: BENCH_REPS (default 5), BENCH_STAT (min or median, default min),
# STOCKFISH (default /usr/games/stockfish),
# BENCH_VERBOSE=1 prints every sample (ms) to stderr.

set -u -o pipefail

CHESSD=${1:-build/chessd}
STOCKFISH=${STOCKFISH:-/usr/games/stockfish}
REPS=${BENCH_REPS:-5}
STAT=${BENCH_STAT:-min}
READ_TIMEOUT=600   # seconds to wait for any single Stockfish output line

STARTPOS_FEN='rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1'
KIWIPETE_FEN='r3k2r/p1ppqpb1/bn2pnp1/3PN3/1p2P3/2N2Q1p/PPPBBPPP/R3K2R w KQkq - 0 1'

# name | depth | expected nodes | chessd FEN | stockfish position command
CASES=(
    "startpos|6|119060324|$STARTPOS_FEN|position startpos"
    "kiwipete|5|193690690|$KIWIPETE_FEN|position fen $KIWIPETE_FEN"
)
# perft 1 node counts, used to sanity-check the start-up runs.
declare -A PERFT1=([startpos]=20 [kiwipete]=48)

die() { echo "perft_bench: FAIL: $*" >&2; exit 1; }

# ---------------------------------------------------------------- tools
[[ -x $CHESSD ]] || die "chessd binary '$CHESSD' not found or not executable (build it first)"
[[ -x $STOCKFISH ]] || die "stockfish '$STOCKFISH' not found or not executable (apt-get install stockfish)"
command -v awk >/dev/null || die "awk not found"
[[ $REPS =~ ^[1-9][0-9]*$ ]] || die "BENCH_REPS must be a positive integer, got '$REPS'"
[[ $STAT == min || $STAT == median ]] || die "BENCH_STAT must be min or median, got '$STAT'"

# Monotonic-enough wall clock in nanoseconds, without forking when possible.
if [[ -n ${EPOCHREALTIME:-} ]]; then
    now_ns() { local t=${EPOCHREALTIME//[!0-9]/}; echo $((10#$t * 1000)); }
else
    date +%s%N | grep -q '^[0-9]\+$' || die "need bash >= 5 or GNU date with %N"
    now_ns() { date +%s%N; }
fi

# summary statistic of the arguments (integers): minimum, or median (for an
# even count, mean of the middle two)
summary() {
    if [[ $STAT == min ]]; then printf '%s\n' "$@" | sort -n | head -n 1; else median "$@"; fi
}
median() {
    printf '%s\n' "$@" | sort -n | awk '{ v[NR] = $1 }
        END { if (NR % 2) print v[(NR + 1) / 2]; else printf "%d\n", (v[NR / 2] + v[NR / 2 + 1]) / 2 }'
}

# ---------------------------------------------------------------- chessd
# chessd_run DEPTH FEN -> sets ELAPSED_NS and NODES; checks the output format.
chessd_run() {
    local depth=$1 fen=$2 out t0 t1 rc
    t0=$(now_ns)
    out=$("$CHESSD" perft "$depth" "$fen")
    rc=$?
    t1=$(now_ns)
    ((rc == 0)) || die "chessd perft $depth '$fen' exited with status $rc"
    ELAPSED_NS=$((t1 - t0))
    NODES=$(printf '%s\n' "$out" | tail -n 1)
    [[ $NODES =~ ^[0-9]+$ ]] || die "chessd perft $depth '$fen': last line '$NODES' is not a node count"
    local sum
    sum=$(printf '%s\n' "$out" | awk 'NF == 2 && $2 ~ /^[0-9]+$/ { s += $2 } END { printf "%d\n", s }')
    [[ $sum == "$NODES" ]] || die "chessd perft $depth '$fen': per-move counts sum to $sum, total says $NODES"
}

# ---------------------------------------------------------------- stockfish
# One long-lived Stockfish process for the in-process timings.
coproc SF { exec "$STOCKFISH" 2>&1; }
SF_IN=${SF[1]}
SF_OUT=${SF[0]}
SF_PID_SAVED=$SF_PID
cleanup() {
    if [[ -n ${SF_PID_SAVED:-} ]] && kill -0 "$SF_PID_SAVED" 2>/dev/null; then
        echo quit >&"$SF_IN" 2>/dev/null
        sleep 0.1
        kill "$SF_PID_SAVED" 2>/dev/null
    fi
}
trap cleanup EXIT

sf_send() { printf '%s\n' "$*" >&"$SF_IN" || die "cannot write to stockfish"; }
# sf_wait PATTERN -> reads lines until one matches the (bash regex) PATTERN; sets SF_LINE
sf_wait() {
    local line
    while IFS= read -r -t "$READ_TIMEOUT" line <&"$SF_OUT"; do
        line=${line%$'\r'}
        if [[ $line =~ $1 ]]; then SF_LINE=$line; return 0; fi
    done
    die "stockfish: no line matching '$1' (timed out or exited)"
}

sf_send uci
sf_wait '^uciok'
sf_send setoption name Threads value 1
sf_send isready
sf_wait '^readyok'   # NNUE loaded before any timing starts

# sf_inproc DEPTH POSCMD -> sets ELAPSED_NS and NODES (timed inside the long-lived process)
sf_inproc() {
    local depth=$1 poscmd=$2 t0 t1
    sf_send "$poscmd"
    sf_send isready
    sf_wait '^readyok'
    t0=$(now_ns)
    sf_send go perft "$depth"
    sf_wait '^Nodes searched: '
    t1=$(now_ns)
    ELAPSED_NS=$((t1 - t0))
    NODES=${SF_LINE#Nodes searched: }
    NODES=${NODES//[!0-9]/}
}

# sf_fresh DEPTH POSCMD -> sets ELAPSED_NS and NODES (a fresh process, start-up included)
sf_fresh() {
    local depth=$1 poscmd=$2 out t0 t1
    t0=$(now_ns)
    out=$(printf 'uci\nsetoption name Threads value 1\n%s\ngo perft %s\nquit\n' "$poscmd" "$depth" |
          "$STOCKFISH" 2>&1)
    t1=$(now_ns)
    ELAPSED_NS=$((t1 - t0))
    NODES=$(printf '%s\n' "$out" | sed -n 's/^Nodes searched: *\([0-9]*\).*/\1/p' | tail -n 1)
    [[ -n $NODES ]] || die "fresh stockfish printed no 'Nodes searched' line for go perft $depth ($poscmd)"
}

check_nodes() { # engine case depth got want
    [[ $4 == "$5" ]] || die "$1 $2 perft $3: got $4 nodes, expected $5"
}

# ---------------------------------------------------------------- measure
SF_ID=$("$STOCKFISH" <<<quit 2>/dev/null | head -n 1)
echo "perft_bench: chessd=$CHESSD  stockfish=$STOCKFISH ($SF_ID)"
echo "perft_bench: $REPS repetitions per measurement, $STAT reported, Stockfish Threads=1"
echo

ms() { awk -v n="$1" 'BEGIN { printf "%.1f", n / 1e6 }'; }

declare -A R
for c in "${CASES[@]}"; do
    IFS='|' read -r name depth want fen poscmd <<<"$c"
    cd_full=() cd_start=() sf_raw=() sf_rawstart=() sf_in=() sf_in1=()
    for ((i = 1; i <= REPS; i++)); do
        [[ -t 2 ]] && printf '  %s perft %s: run %d/%d\r' "$name" "$depth" "$i" "$REPS" >&2

        chessd_run "$depth" "$fen";        check_nodes chessd "$name" "$depth" "$NODES" "$want"; cd_full+=("$ELAPSED_NS")
        chessd_run 1 "$fen";               check_nodes chessd "$name" 1 "$NODES" "${PERFT1[$name]}"; cd_start+=("$ELAPSED_NS")

        sf_inproc "$depth" "$poscmd";      check_nodes stockfish "$name" "$depth" "$NODES" "$want"; sf_in+=("$ELAPSED_NS")
        sf_inproc 1 "$poscmd";             check_nodes stockfish "$name" 1 "$NODES" "${PERFT1[$name]}"; sf_in1+=("$ELAPSED_NS")

        sf_fresh "$depth" "$poscmd";       check_nodes stockfish "$name" "$depth" "$NODES" "$want"; sf_raw+=("$ELAPSED_NS")
        sf_fresh 1 "$poscmd";              check_nodes stockfish "$name" 1 "$NODES" "${PERFT1[$name]}"; sf_rawstart+=("$ELAPSED_NS")
    done
    [[ -t 2 ]] && printf '%*s\r' 40 '' >&2
    if [[ -n ${BENCH_VERBOSE:-} ]]; then
        {
            echo "  $name samples (ms):"
            for v in cd_full cd_start sf_in sf_in1 sf_raw sf_rawstart; do
                declare -n arr=$v
                printf '    %-12s' "$v"; for x in "${arr[@]}"; do printf ' %8.1f' "$(ms "$x")"; done; echo
                unset -n arr
            done
        } >&2
    fi
    R[$name,depth]=$depth
    R[$name,nodes]=$want
    R[$name,cd_raw]=$(summary "${cd_full[@]}")
    R[$name,cd_startup]=$(summary "${cd_start[@]}")
    R[$name,sf_raw]=$(summary "${sf_raw[@]}")
    R[$name,sf_startup]=$(summary "${sf_rawstart[@]}")
    R[$name,sf_inproc]=$(summary "${sf_in[@]}")
    R[$name,sf_inproc1]=$(summary "${sf_in1[@]}")
done

# ---------------------------------------------------------------- report
s()    { awk -v n="$1" 'BEGIN { printf "%.3f", n / 1e9 }'; }
mnps() { awk -v nodes="$1" -v ns="$2" 'BEGIN { if (ns > 0) printf "%.1f", nodes / ns * 1e3; else printf "inf" }'; }
corr() { local d=$(($1 - $2)); ((d < 1)) && d=1; echo "$d"; }   # clamp: never <= 0

echo "Raw (fresh process per run, start-up included; $STAT of $REPS):"
printf '  %-9s %5s %11s | %9s %8s | %9s %8s | %6s\n' \
    position depth nodes chessd_s Mnps sf_s Mnps ratio
for c in "${CASES[@]}"; do
    name=${c%%|*}
    n=${R[$name,nodes]}
    cr=${R[$name,cd_raw]} sr=${R[$name,sf_raw]}
    printf '  %-9s %5s %11s | %9s %8s | %9s %8s | %6s\n' "$name" "${R[$name,depth]}" "$n" \
        "$(s "$cr")" "$(mnps "$n" "$cr")" "$(s "$sr")" "$(mnps "$n" "$sr")" \
        "$(awk -v a="$cr" -v b="$sr" 'BEGIN { printf "%.2f", a / b }')"
done
echo

echo "Start-up overhead subtracted ($STAT of $REPS):"
for c in "${CASES[@]}"; do
    name=${c%%|*}
    printf '  %-9s chessd perft 1 process: %s ms; stockfish fresh perft 1 process: %s ms (not used);' \
        "$name" "$(ms "${R[$name,cd_startup]}")" "$(ms "${R[$name,sf_startup]}")"
    printf ' stockfish in-process go perft 1 round trip: %s ms\n' "$(ms "${R[$name,sf_inproc1]}")"
done
echo

echo "Corrected (perft work only; chessd = raw - chessd perft 1; stockfish = in-process go perft N - go perft 1):"
printf '  %-9s %5s %11s | %9s %8s | %9s %8s | %6s\n' \
    position depth nodes chessd_s Mnps sf_s Mnps ratio
for c in "${CASES[@]}"; do
    name=${c%%|*}
    n=${R[$name,nodes]}
    cc=$(corr "${R[$name,cd_raw]}" "${R[$name,cd_startup]}")
    sc=$(corr "${R[$name,sf_inproc]}" "${R[$name,sf_inproc1]}")
    R[$name,ratio]=$(awk -v a="$cc" -v b="$sc" 'BEGIN { printf "%.2f", a / b }')
    printf '  %-9s %5s %11s | %9s %8s | %9s %8s | %6s\n' "$name" "${R[$name,depth]}" "$n" \
        "$(s "$cc")" "$(mnps "$n" "$cc")" "$(s "$sc")" "$(mnps "$n" "$sc")" "${R[$name,ratio]}"
done
echo

echo "ratio = chessd_time / stockfish_time on the corrected figures"
cd_total=0 sf_total=0
for c in "${CASES[@]}"; do
    name=${c%%|*}
    echo "ratio $name perft ${R[$name,depth]}: ${R[$name,ratio]}"
    cd_total=$((cd_total + R[$name,cd_raw])) sf_total=$((sf_total + $(corr "${R[$name,sf_inproc]}" "${R[$name,sf_inproc1]}")))
done
# The strict figure: chessd with its start-up (a fresh process each time)
# against Stockfish's perft work alone, both positions together.
echo "ratio perft total, chessd start-up included / stockfish perft work: $(awk -v a="$cd_total" -v b="$sf_total" 'BEGIN { printf "%.3f", a / b }') (goal <= 0.35)"
exit 0
