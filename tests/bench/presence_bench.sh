#!/usr/bin/env bash
# presence_bench.sh: what presence costs Redis per move. The same moves are
# played on games of a chessd with presence off (--gone-after 0) and one with
# the default, each on a private redis-server, and INFO commandstats (which
# counts the commands scripts run too) is read before and after the moves.
#
#   usage: tests/bench/presence_bench.sh [path/to/chessd]     (run by `make bench`)
#
# Prints, for untimed and timed games, the commands per move of each and the
# difference, command by command; what each replica sends while idle, for
# as long as the moves took, is taken off. Commands inside a move's script
# (TIME) are shown, not judged: they add no round trip. PRESENCE_BENCH_GAMES
# (default 40) games of ten plies each. No time is asserted; exits non-zero
# when a run fails or presence changes the EVALSHA count per move by more
# than 0.05 (the goal: no Redis command per move beyond the one a move
# already makes).

set -u -o pipefail

CHESSD=${1:-build/chessd}
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
GAMES=${PRESENCE_BENCH_GAMES:-40}
die() { echo "presence_bench: FAIL: $*" >&2; exit 1; }
# shellcheck source=lib.sh
source "$HERE/lib.sh"
need redis-server redis-server
need redis-cli redis-tools
need node nodejs
[[ $GAMES =~ ^[1-9][0-9]{0,3}$ ]] || die "PRESENCE_BENCH_GAMES must be 1 to 9999, got '$GAMES'"
[[ -x $CHESSD ]] || die "chessd binary '$CHESSD' not found"
TMP=$(mktemp -d "${TMPDIR:-/tmp}/presence_bench.XXXXXX") || die "mktemp failed"
TOKEN_SECRET=presence-bench-secret-0123456789abcdef
CHESSD_PID='' REDIS_PID=''
cleanup() { stop_pid "$CHESSD_PID" 5; stop_pid "$REDIS_PID" 5; rm -rf "$TMP"; }
trap cleanup EXIT

# stats FILE: "command calls" a line, from INFO commandstats.
stats() {
    redis-cli -h 127.0.0.1 -p "$REDIS_PORT" INFO commandstats | tr -d '\r' |
        sed -n 's/^cmdstat_\([^:]*\):calls=\([0-9]*\),.*/\1 \2/p' | sort >"$1" || die "INFO commandstats failed"
}

# measure NAME TIMED [ARGS...]: plays the moves on a fresh redis-server and
# chessd (ARGS added); writes "command calls-per-move" lines to $TMP/NAME.per
# (TOTAL the sum, INFO left out) and the number of moves to $TMP/NAME.moves.
measure() {
    local name=$1 timed=$2 moves
    shift 2
    mkdir -p "$TMP/$name"
    start_redis "$TMP/$name"
    start_chessd "$CHESSD" "$TMP/$name/chessd.err" --redis "redis://127.0.0.1:$REDIS_PORT" --engine none \
        --variant-engine none --rate-limit-create 0 --rate-limit-ip 0 --rate-limit-token 0 --shutdown-grace 1 "$@"
    node "$HERE/presence_client.mjs" create "$CHESSD_URL" "$GAMES" "$timed" >"$TMP/$name/games.json" ||
        die "$name: creating the games failed"
    sleep 0.5 # whatever the creations set off settles before the count starts
    stats "$TMP/$name/before"
    local start=$EPOCHREALTIME
    moves=$(node "$HERE/presence_client.mjs" play "$CHESSD_URL" "$TMP/$name/games.json") || die "$name: a move failed"
    stats "$TMP/$name/after"
    # What the replica sends without moves (sweeps, timers) in as long again is taken off.
    sleep "$(awk -v a="$start" -v b="$EPOCHREALTIME" 'BEGIN { printf "%.3f", b - a }')"
    stats "$TMP/$name/idle"
    stop_pid "$CHESSD_PID" 5
    stop_pid "$REDIS_PID" 5
    CHESSD_PID='' REDIS_PID=''
    [[ $moves =~ ^[1-9][0-9]*$ ]] || die "$name: no moves counted ('$moves')"
    echo "$moves" >"$TMP/$name.moves"
    join -a 1 -a 2 -e 0 -o 0,1.2,2.2 "$TMP/$name/before" "$TMP/$name/after" >"$TMP/$name/moved"
    join -a 1 -a 2 -e 0 -o 0,1.2,1.3,2.2 "$TMP/$name/moved" "$TMP/$name/idle" |
        awk -v moves="$moves" '$1 != "info" { d = ($3 - $2 - ($4 - $3)) / moves }
            $1 != "info" && d != 0 { total += d; printf "%s %.3f\n", $1, d } END { printf "TOTAL %.3f\n", total }' \
            >"$TMP/$name.per"
}

per() { awk -v c="$2" '$1 == c { v = $2 } END { printf "%.3f", v + 0 }' "$TMP/$1.per"; }

status=0
for timed in 0 1; do
    kind=untimed
    ((timed)) && kind='timed (10 min)'
    echo "presence_bench: $kind games, $GAMES x 10 plies, presence off (--gone-after 0) and on (the default)"
    measure off "$timed" --gone-after 0
    measure on "$timed"
    printf '  %-16s %12s %12s %12s\n' 'command' 'off /move' 'on /move' 'difference'
    for command in $(cat "$TMP/off.per" "$TMP/on.per" | awk '$1 != "TOTAL" { print $1 }' | sort -u) TOTAL; do
        off=$(per off "$command") on=$(per on "$command")
        printf '  %-16s %12s %12s %12s\n' "$command" "$off" "$on" "$(awk -v a="$off" -v b="$on" 'BEGIN { printf "%+.3f", b - a }')"
    done
    # A clock's move lowers the game's deadline (a script of one ZSCORE) only when
    # it came earlier, which depends on the moves' timing: those are taken off.
    off=$(awk -v a="$(per off evalsha)" -v b="$(per off zscore)" 'BEGIN { printf "%.3f", a - b }')
    on=$(awk -v a="$(per on evalsha)" -v b="$(per on zscore)" 'BEGIN { printf "%.3f", a - b }')
    echo "  EVALSHA per move but the deadline lowerings: $off off, $on on"
    if awk -v a="$off" -v b="$on" 'BEGIN { d = b - a; exit !(d > 0.05 || d < -0.05) }'; then
        echo "presence_bench: FAIL: $kind: EVALSHA per move $off without presence, $on with it" >&2
        status=1
    fi
done
exit "$status"
