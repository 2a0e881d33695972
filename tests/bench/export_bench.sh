#!/usr/bin/env bash
# export_bench.sh: POST /v1/games/export of 300 games against the same 300
# games fetched one by one with GET /v1/games/{id}/pgn on one kept-alive
# connection, in the same run (goal: the export at least 3x the games per
# second of the single GETs).
#
#   usage: tests/bench/export_bench.sh [path/to/chessd]     (run by `make bench`)
#
# What runs: a private redis-server and `chessd serve
# --rate-limit-create 0`; 300 games imported from a 40-ply PGN (the same
# line each, so every game costs the same); then ROUNDS rounds (default 5),
# each timing, in turn, the 300 GETs (python3's http.client on one
# connection, each answer read whole and checked to be 200) and one export
# of the 300 ids as PGN (read whole, its trailers checked: 300 exported, 0
# missing). The best round of each is kept (noise only adds time), and the
# text of the export is checked to be the 300 GETs' texts joined by blank
# lines.
set -u -o pipefail

CHESSD=${1:-build/chessd}
ROUNDS=${BENCH_ROUNDS:-5}
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
TOKEN_SECRET=export-bench-secret-0123456789abcdef

die() { echo "export_bench: FAIL: $*" >&2; exit 1; }
note() { echo "export_bench: $*"; }
source "$HERE/lib.sh"

[[ -x $CHESSD ]] || die "chessd binary '$CHESSD' not found or not executable (build it first)"
need redis-server redis-server
need python3 python3
[[ $ROUNDS =~ ^[1-9][0-9]*$ ]] || die "BENCH_ROUNDS must be a positive integer, got '$ROUNDS'"

TMP=$(mktemp -d "${TMPDIR:-/tmp}/export_bench.XXXXXX") || die "mktemp failed"
CHESSD_PID='' REDIS_PID=''
cleanup() {
    stop_pid "$CHESSD_PID" 5
    stop_pid "$REDIS_PID" 5
    rm -rf "$TMP"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

start_redis "$TMP"
start_chessd "$CHESSD" "$TMP/chessd.err" --shutdown-grace 1 --rate-limit-create 0 \
    --redis "redis://127.0.0.1:$REDIS_PORT/0"

python3 - "$CHESSD_URL" "$ROUNDS" <<'PY' || die "the measurement failed"
import http.client, json, sys, time, urllib.parse

url, rounds = urllib.parse.urlparse(sys.argv[1]), int(sys.argv[2])
LINE = ("1. e4 c5 2. Nf3 d6 3. d4 cxd4 4. Nxd4 Nf6 5. Nc3 a6 6. Be3 e5 7. Nb3 Be6 8. f3 Be7 9. Qd2 O-O "
        "10. O-O-O Nbd7 11. g4 b5 12. g5 b4 13. Ne2 Ne8 14. f4 a5 15. f5 a4 16. Nbd4 exd4 17. Nxd4 b3 "
        "18. Kb1 bxc2+ 19. Nxc2 Bb3 20. axb3 axb3 *")

def connect():
    return http.client.HTTPConnection(url.hostname, url.port, timeout=30)

c = connect()
ids = []
for _ in range(300):
    c.request("POST", "/v1/games", json.dumps({"pgn": LINE}), {"Content-Type": "application/json"})
    r = c.getresponse()
    body = r.read()
    if r.status != 201:
        sys.exit(f"create: {r.status} {body[:200]!r}")
    ids.append(json.loads(body)["id"])

def singles():
    conn = connect()
    texts = []
    t0 = time.perf_counter()
    for i in ids:
        conn.request("GET", f"/v1/games/{i}/pgn")
        r = conn.getresponse()
        body = r.read()
        if r.status != 200:
            sys.exit(f"GET pgn: {r.status}")
        texts.append(body)
    dt = time.perf_counter() - t0
    conn.close()
    return dt, texts

def export():
    conn = connect()
    t0 = time.perf_counter()
    conn.request("POST", "/v1/games/export", json.dumps({"ids": ids}),
                 {"Content-Type": "application/json", "Accept": "application/x-chess-pgn"})
    r = conn.getresponse()
    body = r.read()
    dt = time.perf_counter() - t0
    if r.status != 200:
        sys.exit(f"export: {r.status}")
    conn.close()
    return dt, body

best_singles = best_export = float("inf")
for _ in range(rounds):
    dt, texts = singles()
    best_singles = min(best_singles, dt)
    dt, body = export()
    best_export = min(best_export, dt)
    if body != b"\n".join(texts):
        sys.exit("the export is not the single GETs' texts joined by blank lines")
singles_rate, export_rate = 300 / best_singles, 300 / best_export
ratio = export_rate / singles_rate
print(f"export_bench: 300 games ({len(body)} bytes of PGN), best of {rounds} rounds: "
      f"single GETs {singles_rate:.0f} games/s ({best_singles * 1000:.1f} ms), "
      f"export {export_rate:.0f} games/s ({best_export * 1000:.1f} ms): ratio {ratio:.2f} (goal >= 3)")
PY
