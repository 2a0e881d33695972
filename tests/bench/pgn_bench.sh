#!/usr/bin/env bash
# pgn_bench.sh: reading and checking a large PGN (50,000 games, about 150
# MB, Lichess export style) with POST /v1/pgn against Debian's pgn-extract
# reading and checking the same file, in the same run (goal: chessd at most
# 1.0x pgn-extract's time, and at most 16 MiB of memory above idle).
#
#   usage: tests/bench/pgn_bench.sh [path/to/chessd]     (run by `make bench`)
#
# Like with like: pgn-extract replays every move to check it and writes
# every game back (`-s -o FILE`); chessd is timed twice, writing every game
# back as PGN (Accept: application/x-chess-pgn, its tree with comments and
# commands) and checking only (NDJSON, moves=false: each game's tags, final
# position and errors). Both read the file from the page cache; chessd's
# time is the whole request over loopback (the upload to its spool file
# included). The median of ROUNDS (default 3) of each; chessd's peak RSS
# (VmHWM) over its idle RSS is reported.
set -u -o pipefail

CHESSD=${1:-build/chessd}
ROUNDS=${BENCH_ROUNDS:-3}
GAMES=${BENCH_PGN_GAMES:-50000}
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
TOKEN_SECRET=pgn-bench-secret-0123456789abcdef

die() { echo "pgn_bench: FAIL: $*" >&2; exit 1; }
note() { echo "pgn_bench: $*"; }
source "$HERE/lib.sh"

[[ -x $CHESSD ]] || die "chessd binary '$CHESSD' not found or not executable (build it first)"
PGN_EXTRACT=$(command -v pgn-extract || echo /usr/games/pgn-extract)
[[ -x $PGN_EXTRACT ]] || die "pgn-extract is not installed (apt-get install pgn-extract; make bench installs it)"
need curl curl
need node nodejs
need bc bc

TMP=$(mktemp -d "${TMPDIR:-/tmp}/pgn_bench.XXXXXX") || die "mktemp failed"
CHESSD_PID=''
cleanup() {
    stop_pid "$CHESSD_PID" 5
    rm -rf "$TMP"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

node "$HERE/pgn_corpus.mjs" "$TMP/corpus.pgn" "$GAMES" 2000 || die "the corpus could not be written"
note "corpus: $GAMES games, $(($(stat -c %s "$TMP/corpus.pgn") / 1048576)) MiB"
cat "$TMP/corpus.pgn" >/dev/null # into the page cache

start_chessd "$CHESSD" "$TMP/chessd.err" --redis none --spool-dir "$TMP" --max-spool-bytes 4294967296
rss_kb() { sed -n "s/^$1:[[:space:]]*\([0-9]*\) kB/\1/p" "/proc/$CHESSD_PID/status"; }
sleep 0.5
IDLE_KB=$(rss_kb VmRSS)

seconds() { # seconds COMMAND...: the wall time of COMMAND
    local t0 t1
    t0=$(date +%s.%N)
    "$@" || die "failed: $*"
    t1=$(date +%s.%N)
    echo "$t1 - $t0" | bc -l
}
post() { # post ACCEPT QUERY OUT
    curl -sf -XPOST -T "$TMP/corpus.pgn" -H 'Content-Type: application/x-chess-pgn' -H "Accept: $1" \
        "$CHESSD_URL/v1/pgn$2" -o "$3"
}

extract=() pgn_out=() check=()
for ((r = 0; r < ROUNDS; r++)); do
    extract+=("$(seconds "$PGN_EXTRACT" -s -o "$TMP/extract.pgn" "$TMP/corpus.pgn" 2>/dev/null)")
    pgn_out+=("$(seconds post application/x-chess-pgn '' "$TMP/chessd.pgn")")
    check+=("$(seconds post application/x-ndjson '?moves=false' "$TMP/chessd.ndjson")")
done
games_extract=$(grep -c '^\[Event ' "$TMP/extract.pgn")
games_pgn=$(grep -c '^\[Event ' "$TMP/chessd.pgn")
games_check=$(wc -l <"$TMP/chessd.ndjson")
failed=$(grep -c '"errors"' "$TMP/chessd.ndjson")
[[ $games_extract == "$GAMES" && $games_pgn == "$GAMES" && $games_check == "$GAMES" && $failed == 0 ]] ||
    die "games: pgn-extract $games_extract, chessd PGN $games_pgn, NDJSON $games_check ($failed failed); $GAMES expected"
PEAK_KB=$(rss_kb VmHWM)

e=$(median "${extract[*]}") p=$(median "${pgn_out[*]}") c=$(median "${check[*]}")
note "pgn-extract -s -o (reads, checks, writes): $(printf %.2f "$e") s"
note "chessd, PGN written back:                  $(printf %.2f "$p") s = $(printf %.2f "$(echo "$p / $e" | bc -l)") x pgn-extract"
note "chessd, checked only (NDJSON, moves=false): $(printf %.2f "$c") s = $(printf %.2f "$(echo "$c / $e" | bc -l)") x pgn-extract"
note "chessd RSS: idle $((IDLE_KB / 1024)) MiB, peak $((PEAK_KB / 1024)) MiB: $(((PEAK_KB - IDLE_KB) / 1024)) MiB above idle (goal: 16)"
