#!/usr/bin/env bash
# Runs the chessd image built by k8s/image/build.sh and checks it:
#   - the image config: User 10001, ENTRYPOINT ["chessd","serve"], port 8080
#   - the entrypoint, started in a buildah working container
#     (buildah run --isolation chroot, host network, on 127.0.0.1:<free port>):
#     GET /healthz is 200, POST /v1/position gives the start position's 20
#     legal moves, GET /readyz is 200 reporting redis "down" with an
#     unreachable Redis (the rules API serves), the process runs as uid
#     and gid 10001, and SIGTERM stops it cleanly
#   - the engines: /usr/games/stockfish (chessd's --engine default) and
#     /usr/games/fairy-stockfish (--variant-engine's), run in the container
#     as its user, answer the UCI handshake
#   - the image's files (buildah mount): no compiler, no /usr/include, no -dev
#     packages, nothing in /var/lib/apt/lists or the apt caches
# and prints the image size. Needs root, buildah, curl and jq.
#   IMAGE  image to test (localhost/chessd:latest)
set -euo pipefail
cd "$(dirname "$0")/../.."

IMAGE=${IMAGE:-localhost/chessd:latest}
export BUILDAH_ISOLATION=${BUILDAH_ISOLATION:-chroot}
START_FEN='rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1'
START_MOVES='a2a3 a2a4 b1a3 b1c3 b2b3 b2b4 c2c3 c2c4 d2d3 d2d4 e2e3 e2e4 f2f3 f2f4 g1f3 g1h3 g2g3 g2g4 h2h3 h2h4'

log() { printf 'image-test: %s\n' "$*" >&2; }
die() { log "error: $*"; exit 1; }
passed=0 failed=0
ok() { passed=$((passed + 1)); printf 'ok    %s\n' "$*"; }
bad() { failed=$((failed + 1)); printf 'FAIL  %s\n' "$*"; }
check() { local what=$1; shift; if "$@"; then ok "$what"; else bad "$what"; fi; }

[ "$(id -u)" = 0 ] || die "run as root (buildah run and mount need it)"
for tool in buildah curl jq ss; do command -v "$tool" >/dev/null || die "$tool is missing"; done
buildah inspect --type image "$IMAGE" >/dev/null 2>&1 || die "no image $IMAGE: run 'make image' first"

ctr="" mnt="" runner_pid="" chessd_pid=""
tmp=$(mktemp -d)

# Every process below runner_pid (buildah run, its chroot helper, chessd).
descendants() {
    local child
    for child in $(ps -o pid= --ppid "$1" 2>/dev/null); do
        echo "$child"
        descendants "$child"
    done
}
cleanup() {
    local pids p
    if [ -n "$runner_pid" ] && kill -0 "$runner_pid" 2>/dev/null; then
        pids="$chessd_pid $(descendants "$runner_pid") $runner_pid"
        for p in $pids; do kill -TERM "$p" 2>/dev/null || true; done
        for _ in $(seq 50); do kill -0 "$runner_pid" 2>/dev/null || break; sleep 0.1; done
        for p in $pids; do kill -KILL "$p" 2>/dev/null || true; done
        wait "$runner_pid" 2>/dev/null || true
    fi
    if [ -n "$ctr" ]; then
        if [ -n "$mnt" ]; then buildah umount "$ctr" >/dev/null 2>&1 || true; fi
        buildah rm "$ctr" >/dev/null 2>&1 || true
    fi
    rm -rf "$tmp"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

free_port() {
    local p
    for _ in $(seq 100); do
        p=$(( 20000 + RANDOM % 40000 ))
        [ -z "$(ss -Hltn "sport = :$p")" ] && { echo "$p"; return 0; }
    done
    return 1
}

# --- the image's configuration -------------------------------------------
buildah inspect --type image "$IMAGE" > "$tmp/inspect.json"
user=$(jq -r '.OCIv1.config.User // ""' "$tmp/inspect.json")
entrypoint=$(jq -c '.OCIv1.config.Entrypoint' "$tmp/inspect.json")
ports=$(jq -c '.OCIv1.config.ExposedPorts // {}' "$tmp/inspect.json")
check "config: USER is 10001 ($user)" [ "$user" = 10001 ]
check "config: ENTRYPOINT is [\"chessd\",\"serve\"] ($entrypoint)" \
    [ "$(jq -c . <<<"$entrypoint")" = '["chessd","serve"]' ]
check "config: EXPOSE 8080/tcp ($ports)" [ "$(jq 'has("8080/tcp")' <<<"$ports")" = true ]

# --- run the entrypoint ---------------------------------------------------
ctr=$(buildah from --pull=never --quiet "$IMAGE")
port=$(free_port) || die "no free port"
mapfile -t ep < <(jq -r '.[]' <<<"$entrypoint")
[ ${#ep[@]} -gt 0 ] || die "the image has no entrypoint"
# Redis on port 1 (nothing listens there): /readyz must stay 200 and report it, the rules endpoints must not care.
log "buildah run --isolation $BUILDAH_ISOLATION $ctr -- ${ep[*]} --bind 127.0.0.1 --port $port --redis redis://127.0.0.1:1/0"
buildah run --isolation "$BUILDAH_ISOLATION" "$ctr" -- "${ep[@]}" \
    --bind 127.0.0.1 --port "$port" --redis redis://127.0.0.1:1/0 --threads 2 \
    >"$tmp/server.log" 2>&1 &
runner_pid=$!

for _ in $(seq 300); do
    chessd_pid=$(ss -Hltnp "sport = :$port" | grep -o 'pid=[0-9]*' | head -n1 | cut -d= -f2 || true)
    [ -n "$chessd_pid" ] && break
    kill -0 "$runner_pid" 2>/dev/null || { cat "$tmp/server.log" >&2; die "the container exited before listening"; }
    sleep 0.1
done
[ -n "$chessd_pid" ] || { cat "$tmp/server.log" >&2; die "nothing listens on 127.0.0.1:$port after 30 s"; }
log "chessd is pid $chessd_pid on 127.0.0.1:$port"

base="http://127.0.0.1:$port"
code=$(curl -sS --max-time 5 -o "$tmp/health.json" -w '%{http_code}' "$base/healthz")
what="GET /healthz is 200 (got $code, $(cat "$tmp/health.json"))"
if [ "$code" = 200 ] && jq -e '.status == "ok"' "$tmp/health.json" >/dev/null; then ok "$what"; else bad "$what"; fi

code=$(curl -sS --max-time 5 -o "$tmp/position.json" -w '%{http_code}' \
    -H 'Content-Type: application/json' -d '{}' "$base/v1/position")
nmoves=$(jq '.legal_moves | length' "$tmp/position.json" 2>/dev/null || echo "?")
moves=$(jq -r '[.legal_moves[].uci] | sort | join(" ")' "$tmp/position.json" 2>/dev/null || true)
what="POST /v1/position {} is 200 with the start position's 20 legal moves (got $code, $nmoves moves)"
if [ "$code" = 200 ] && [ "$moves" = "$START_MOVES" ] && [ "$(jq -r .fen "$tmp/position.json")" = "$START_FEN" ]; then
    ok "$what"; else bad "$what"; fi

code=$(curl -sS --max-time 10 -o "$tmp/ready.json" -w '%{http_code}' "$base/readyz")
what="GET /readyz is 200 {\"status\":\"ready\",\"redis\":\"down\"} with no Redis (got $code, $(cat "$tmp/ready.json"))"
if [ "$code" = 200 ] && jq -e '.status == "ready" and .redis == "down"' "$tmp/ready.json" >/dev/null; then
    ok "$what"; else bad "$what"; fi

comm=$(cat "/proc/$chessd_pid/comm")
uids=$(awk '/^Uid:/ { print $2, $3, $4, $5 }' "/proc/$chessd_pid/status")
gids=$(awk '/^Gid:/ { print $2, $3, $4, $5 }' "/proc/$chessd_pid/status")
ps -o user,uid,gid,pid,rss,args -p "$chessd_pid" | sed 's/^/      /'
check "the listening process is chessd ($comm)" [ "$comm" = chessd ]
check "it runs as uid 10001 (real, effective, saved, fs: $uids)" [ "$uids" = "10001 10001 10001 10001" ]
check "and gid 10001 ($gids)" [ "$gids" = "10001 10001 10001 10001" ]
check "its root is the container's file system ($(readlink "/proc/$chessd_pid/root"))" \
    [ "$(readlink "/proc/$chessd_pid/root")" != / ]

kill -TERM "$chessd_pid"
stopped=false
for _ in $(seq 150); do kill -0 "$runner_pid" 2>/dev/null || { stopped=true; break; }; sleep 0.1; done
status="still running"
if $stopped; then status=0; wait "$runner_pid" || status=$?; runner_pid=""; fi
what="SIGTERM stops it cleanly (exit status: $status)"
if [ "$status" = 0 ] && grep -q 'chessd: stopped' "$tmp/server.log"; then ok "$what"; else bad "$what"; fi
[ "$failed" = 0 ] || { log "server log:"; sed 's/^/      /' "$tmp/server.log" >&2; }

# --- the engine -------------------------------------------------------------
# What chessd starts for --engine's default, as the image's user (10001).
sf_out=$(printf 'uci\nisready\nquit\n' |
    timeout 30 buildah run --isolation "$BUILDAH_ISOLATION" "$ctr" -- /usr/games/stockfish 2>&1 || true)
sf_id=$(grep -m1 '^id name ' <<<"$sf_out" | cut -c9- || true)
what="/usr/games/stockfish answers uci with uciok and isready with readyok (${sf_id:-no id name})"
if grep -qx uciok <<<"$sf_out" && grep -qx readyok <<<"$sf_out"; then ok "$what"; else bad "$what"; fi
fsf_out=$(printf 'uci\nisready\nquit\n' |
    timeout 30 buildah run --isolation "$BUILDAH_ISOLATION" "$ctr" -- /usr/games/fairy-stockfish 2>&1 || true)
fsf_id=$(grep -m1 '^id name ' <<<"$fsf_out" | cut -c9- || true)
what="/usr/games/fairy-stockfish answers uci (listing UCI_Variant crazyhouse) and isready (${fsf_id:-no id name})"
if grep -qx uciok <<<"$fsf_out" && grep -qx readyok <<<"$fsf_out" && grep -q '^option name UCI_Variant .* var crazyhouse ' <<<"$fsf_out"
then ok "$what"; else bad "$what"; fi

# --- the image's files ----------------------------------------------------
mnt=$(buildah mount "$ctr")
found=""
for p in usr/bin/gcc usr/bin/cc usr/bin/c++ usr/bin/g++ usr/bin/cpp usr/bin/clang usr/bin/tcc \
         usr/bin/as usr/bin/ld usr/bin/make usr/lib/gcc; do
    if [ -e "$mnt/$p" ] || [ -L "$mnt/$p" ]; then found="$found /$p"; fi
done
found="$found $(find "$mnt/usr/bin" "$mnt/usr/lib" -maxdepth 3 \( -name 'gcc-[0-9]*' -o -name 'x86_64-linux-gnu-gcc*' -o -name cc1 \) -printf ' /%P' 2>/dev/null)"
found=${found// /}
check "no compiler or binutils (found: ${found:-none})" [ -z "$found" ]
# base-files ships /usr/include as an empty directory (so do the official images).
headers=$(find "$mnt/usr/include" -mindepth 1 2>/dev/null | wc -l)
check "no headers: /usr/include is absent or empty ($headers entries)" [ "$headers" = 0 ]
dev=$(awk '/^Package:/ { p = $2 } /^Status: install ok installed/ && p ~ /-dev$/ { printf " %s", p }' "$mnt/var/lib/dpkg/status")
check "no -dev packages installed (found:${dev:- none})" [ -z "$dev" ]
lists=$(find "$mnt/var/lib/apt/lists" -mindepth 1 2>/dev/null | wc -l)
check "nothing in /var/lib/apt/lists ($lists entries)" [ "$lists" = 0 ]
caches=$(find "$mnt/var/cache/apt" \( -name '*.deb' -o -name '*.bin' \) 2>/dev/null | wc -l)
check "no .deb or .bin files in /var/cache/apt ($caches)" [ "$caches" = 0 ]
bin_mode=$(stat -c '%u %A' "$mnt/usr/local/bin/chessd" 2>/dev/null || echo missing)
check "/usr/local/bin/chessd is an executable owned by root, not writable by others ($bin_mode)" \
    [ "$bin_mode" = "0 -rwxr-xr-x" ]
bin_size=$(stat -c %s "$mnt/usr/local/bin/chessd" 2>/dev/null || echo '?')
sf_mode=$(stat -c '%u %A' "$mnt/usr/games/stockfish" 2>/dev/null || echo missing)
check "/usr/games/stockfish is an executable owned by root, not writable by others ($sf_mode)" \
    [ "$sf_mode" = "0 -rwxr-xr-x" ]
sf_version=$(awk '/^Package:/ { p = $2 } /^Version:/ && p == "stockfish" { print $2 }' "$mnt/var/lib/dpkg/status")
sf_pinned=$(sed -n 's/^ARG STOCKFISH_VERSION=//p' Dockerfile)
check "the stockfish package is the Dockerfile's pinned version ($sf_version, pinned $sf_pinned)" \
    [ "${sf_version:-none}" = "$sf_pinned" ]
fsf_version=$(awk '/^Package:/ { p = $2 } /^Version:/ && p == "fairy-stockfish" { print $2 }' "$mnt/var/lib/dpkg/status")
fsf_pinned=$(sed -n 's/^ARG FAIRY_STOCKFISH_VERSION=//p' Dockerfile)
check "the fairy-stockfish package is the Dockerfile's pinned version ($fsf_version, pinned $fsf_pinned)" \
    [ "${fsf_version:-none}" = "$fsf_pinned" ]
check "/etc/passwd has the user 10001" grep -q '^[^:]*:[^:]*:10001:10001:' "$mnt/etc/passwd"

rootfs_size=$(du -sh --apparent-size "$mnt" | cut -f1)
buildah umount "$ctr" >/dev/null; mnt=""

echo
echo "image: $(buildah images --format '{{.Name}}:{{.Tag}} id {{.ID}} size {{.Size}}' "$IMAGE")"
echo "unpacked file system: $rootfs_size; /usr/local/bin/chessd: $bin_size bytes"
echo
echo "$passed passed, $failed failed"
[ "$failed" = 0 ]
