#!/usr/bin/env bash
# Soak test (make soak; not part of make test or CI): one persistent
# redis-server and two chessd replicas on free loopback ports, mixed traffic
# from several client processes (tests/soak/client.mjs) for SOAK_SECONDS, with
# Redis stopped for ten seconds in the middle and one replica sent SIGTERM and
# started again later. At the end tests/soak/summarize.mjs prints the figures,
# writes them to SOAK_SUMMARY (and a .json beside it), and fails the run when
# an invariant breaks: a 5xx other than a 503 while Redis was away, an
# acknowledged move lost, a version going backwards, a replica not exiting 0
# on SIGTERM, and the other checks listed in the summary.
#
# Settings (environment):
#   CHESSD_BIN          the binary (default build/chessd)
#   SOAK_SECONDS        traffic duration, at least 60 (default 180)
#   SOAK_CLIENTS        client processes (default 4)
#   SOAK_LOOPS          concurrent loops per client (default 3)
#   SOAK_THINK_MS       mean pause between a loop's steps (default 10)
#   SOAK_GRACE_MS       how long after Redis is back a 503 still counts as the outage's (default 3000)
#   SOAK_SUMMARY        summary file (default soak-summary.txt beside the binary)
#   SOAK_SEED           seed of the clients' choices (default: the start time; printed in the summary)
#   SOAK_KEEP=1         keep the temporary directory (logs, per-request records) instead of removing it
#   CHESSD_REDIS_SERVER the redis-server binary (default redis-server)
# Everything started here is stopped, and the temporary directory removed, on any exit.
set -euo pipefail
cd "$(dirname "$0")/../.."

CHESSD_BIN="${CHESSD_BIN:-build/chessd}"
SOAK_SECONDS="${SOAK_SECONDS:-180}"
SOAK_CLIENTS="${SOAK_CLIENTS:-4}"
SOAK_LOOPS="${SOAK_LOOPS:-3}"
SOAK_THINK_MS="${SOAK_THINK_MS:-10}"
SOAK_GRACE_MS="${SOAK_GRACE_MS:-3000}"
SOAK_SUMMARY="${SOAK_SUMMARY:-$(dirname "$CHESSD_BIN")/soak-summary.txt}"
REDIS_SERVER="${CHESSD_REDIS_SERVER:-redis-server}"
REDIS_DOWN_SECONDS=10

die() { echo "soak: $*" >&2; exit 2; }
[ -x "$CHESSD_BIN" ] || die "$CHESSD_BIN is not an executable; build it first (make) or set CHESSD_BIN"
command -v "$REDIS_SERVER" >/dev/null || die "$REDIS_SERVER not found (make deps installs redis-server)"
command -v redis-cli >/dev/null || die "redis-cli not found (make deps installs redis-tools)"
command -v node >/dev/null || die "node not found (make deps installs nodejs)"
command -v curl >/dev/null || die "curl not found (make deps installs curl)"
[[ "$SOAK_SECONDS" =~ ^[0-9]+$ ]] && [ "$SOAK_SECONDS" -ge 60 ] || die "SOAK_SECONDS must be a whole number of at least 60"
CHESSD_BIN="$(cd "$(dirname "$CHESSD_BIN")" && pwd)/$(basename "$CHESSD_BIN")"
mkdir -p "$(dirname "$SOAK_SUMMARY")"

TMP="$(mktemp -d "${TMPDIR:-/tmp}/chessd-soak.XXXXXX")"
REDIS_PID=""
CHESSD_PIDS=("" "")
CLIENT_PIDS=()
SAMPLER_PID=""
SLEEP_PID=""

# Stops one process we started (by its pid): SIGTERM, then SIGKILL after 5 s.
stop_pid() {
    local pid="$1"
    [ -n "$pid" ] && kill -0 "$pid" 2>/dev/null || return 0
    kill -TERM "$pid" 2>/dev/null || true
    for _ in $(seq 50); do kill -0 "$pid" 2>/dev/null || return 0; sleep 0.1; done
    kill -KILL "$pid" 2>/dev/null || true
}
cleanup() {
    local rc=$?
    trap - EXIT INT TERM
    exec 3>&2 2>/dev/null # no job-status noise from the kills below
    for pid in "$SLEEP_PID" "${CLIENT_PIDS[@]}"; do
        [ -n "$pid" ] && kill -KILL "$pid" 2>/dev/null || true
    done
    [ -n "$SAMPLER_PID" ] && kill -TERM "$SAMPLER_PID" 2>/dev/null || true
    stop_pid "${CHESSD_PIDS[0]}"
    stop_pid "${CHESSD_PIDS[1]}"
    stop_pid "$REDIS_PID"
    wait 2>/dev/null || true
    if [ "${SOAK_KEEP:-0}" = 1 ]; then
        echo "soak: kept $TMP" >&3
    else
        rm -rf "$TMP"
    fi
    exit "$rc"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

now_ms() { date +%s%3N; }
T_START="$(now_ms)"
# event NAME [EXTRA_JSON_FIELDS]: a timestamped line in events.jsonl (and on stderr).
event() {
    local t
    t="$(now_ms)"
    printf '{"t":%s,"event":"%s"%s}\n' "$t" "$1" "${2:+,$2}" >>"$TMP/events.jsonl"
    printf 'soak: [%6.1f s] %s %s\n' "$(awk "BEGIN{print ($t-$T_START)/1000}")" "$1" "${2:-}" >&2
}
# Sleeps in the background and waits, so a SIGTERM or SIGINT is acted on at once.
nap() {
    sleep "$1" &
    SLEEP_PID=$!
    wait "$SLEEP_PID" || true
    SLEEP_PID=""
}
sleep_until() {
    local wait_ms=$(( $1 - $(now_ms) ))
    [ "$wait_ms" -le 0 ] || nap "$(awk "BEGIN{print $wait_ms/1000}")"
}

# Four distinct free loopback ports (held open together while chosen).
read -r REDIS_PORT PORT_A PORT_B _ < <(node -e '
const net = require("net");
const servers = [];
let left = 4;
for (let i = 0; i < 4; i++) {
  const s = net.createServer();
  s.listen(0, "127.0.0.1", () => { servers.push(s); if (--left === 0) {
    console.log(servers.map((x) => x.address().port).join(" ")); servers.forEach((x) => x.close()); } });
}')
PORTS=("$PORT_A" "$PORT_B")
NAMES=(A B)
REDIS_URL="redis://127.0.0.1:$REDIS_PORT/0"
CHESSD_TOKEN_SECRET="$(head -c 32 /dev/urandom | od -An -tx1 | tr -d ' \n')"
export CHESSD_TOKEN_SECRET

# chessd's default Redis timeouts, and Redis as the manifests in k8s/ run it (AOF, fsync every second).
REDIS_TIMEOUT_MS=${SOAK_REDIS_TIMEOUT_MS:-1000}
mkdir -p "$TMP/redis"
start_redis() {
    "$REDIS_SERVER" --port "$REDIS_PORT" --bind 127.0.0.1 --dir "$TMP/redis" --appendonly yes \
        --appendfsync everysec --save '' --daemonize no --logfile "$TMP/redis.log" \
        --latency-monitor-threshold 100 &
    REDIS_PID=$!
    for _ in $(seq 200); do
        [ "$(redis-cli -p "$REDIS_PORT" ping 2>/dev/null)" = PONG ] && return 0
        kill -0 "$REDIS_PID" 2>/dev/null || break
        sleep 0.05
    done
    tail -5 "$TMP/redis.log" >&2 || true
    die "redis-server did not start on port $REDIS_PORT"
}
# Redis's own record of stalls of 100 ms or more (LATENCY LATEST), kept before each stop.
dump_latency() {
    redis-cli -p "$REDIS_PORT" --json latency latest >"$TMP/redis-latency-$1.json" 2>/dev/null || true
}
stop_redis() {
    kill -TERM "$REDIS_PID" 2>/dev/null || true
    local rc=0
    wait "$REDIS_PID" || rc=$?
    REDIS_PID=""
    return "$rc"
}

# start_replica I: starts replica I (0 or 1) on its port and waits for /readyz.
GENERATION=(0 0)
start_replica() {
    local i="$1" gen
    GENERATION[i]=$((GENERATION[i] + 1))
    gen="${GENERATION[i]}"
    # The soak's clients create their games from one address: no creation limit.
    # --ready-requires-redis: "ready" here means games can be played (Redis up).
    "$CHESSD_BIN" serve --bind 127.0.0.1 --port "${PORTS[i]}" --redis "$REDIS_URL" --rate-limit-create 0 \
        --ready-requires-redis \
        --redis-timeout-ms "$REDIS_TIMEOUT_MS" --redis-connect-timeout-ms "$REDIS_TIMEOUT_MS" \
        >"$TMP/access-${NAMES[i]}$gen.log" 2>"$TMP/stderr-${NAMES[i]}$gen.log" &
    CHESSD_PIDS[i]=$!
    echo "${NAMES[i]} ${CHESSD_PIDS[i]}" >"$TMP/pid-${NAMES[i]}"
    for _ in $(seq 200); do
        if [ "$(curl -s -o /dev/null -w '%{http_code}' "http://127.0.0.1:${PORTS[i]}/readyz" 2>/dev/null)" = 200 ]; then
            return 0
        fi
        kill -0 "${CHESSD_PIDS[i]}" 2>/dev/null || break
        sleep 0.05
    done
    cat "$TMP/stderr-${NAMES[i]}$gen.log" >&2 || true
    die "replica ${NAMES[i]} did not become ready on port ${PORTS[i]}"
}
# stop_replica I: SIGTERM, wait, and record the exit status and how long the drain took.
stop_replica() {
    local i="$1" rc=0 t0
    t0="$(now_ms)"
    kill -TERM "${CHESSD_PIDS[i]}" 2>/dev/null || true
    wait "${CHESSD_PIDS[i]}" || rc=$?
    event replica_exited "\"replica\":\"${NAMES[i]}\",\"pid\":${CHESSD_PIDS[i]},\"code\":$rc,\"drain_ms\":$(( $(now_ms) - t0 ))"
    CHESSD_PIDS[i]=""
    rm -f "$TMP/pid-${NAMES[i]}"
}
rss_sample() {
    local tag="$1" name pid kb
    for f in "$TMP"/pid-*; do
        [ -e "$f" ] || continue
        read -r name pid <"$f" || continue
        kb="$(awk '/^VmRSS:/{print $2}' "/proc/$pid/status" 2>/dev/null)" || continue
        [ -n "$kb" ] && printf '{"t":%s,"replica":"%s","pid":%s,"rss_kb":%s,"tag":"%s"}\n' \
            "$(now_ms)" "$name" "$pid" "$kb" "$tag" >>"$TMP/rss.jsonl"
    done
    return 0
}
scrape_metrics() { # scrape_metrics I TAG
    curl -s --max-time 5 "http://127.0.0.1:${PORTS[$1]}/metrics" >"$TMP/metrics-${NAMES[$1]}${GENERATION[$1]}-$2.txt" || true
}
# Waits (up to 30 s) until both replicas answer /readyz 200; records when.
wait_ready_both() {
    local name="$1"
    for _ in $(seq 600); do
        if [ "$(curl -s -o /dev/null -w '%{http_code}' "http://127.0.0.1:$PORT_A/readyz")" = 200 ] &&
           [ "$(curl -s -o /dev/null -w '%{http_code}' "http://127.0.0.1:$PORT_B/readyz")" = 200 ]; then
            event "$name"
            return 0
        fi
        sleep 0.05
    done
    event "${name}_timeout"
}

echo "soak: $SOAK_SECONDS s, $SOAK_CLIENTS clients x $SOAK_LOOPS loops; redis :$REDIS_PORT, replicas A :$PORT_A B :$PORT_B; temp $TMP" >&2
SEED="${SOAK_SEED:-$(( $(now_ms) % 2147483647 ))}"
cat >"$TMP/config.json" <<EOF
{"seconds":$SOAK_SECONDS,"seed":$SEED,"clients":$SOAK_CLIENTS,"loops":$SOAK_LOOPS,"think_ms":$SOAK_THINK_MS,"grace_ms":$SOAK_GRACE_MS,
 "redis_down_seconds":$REDIS_DOWN_SECONDS,"redis_port":$REDIS_PORT,"ports":{"A":$PORT_A,"B":$PORT_B},
 "binary":"$CHESSD_BIN","redis_timeout_ms":$REDIS_TIMEOUT_MS,"redis_connect_timeout_ms":$REDIS_TIMEOUT_MS}
EOF

start_redis
event redis_started
start_replica 0
start_replica 1
event replicas_ready
rss_sample start

# RSS every 2 s while the soak runs.
( trap 'kill "$sleeper" 2>/dev/null; exit 0' TERM
  while :; do rss_sample run; sleep 2 & sleeper=$!; wait "$sleeper"; done ) &
SAMPLER_PID=$!

T0="$(now_ms)"
END_AT=$((T0 + SOAK_SECONDS * 1000))
event traffic_start "\"end_at\":$END_AT"
for c in $(seq 0 $((SOAK_CLIENTS - 1))); do
    node tests/soak/client.mjs --id="$c" --replicas="http://127.0.0.1:$PORT_A,http://127.0.0.1:$PORT_B" \
        --end-at="$END_AT" --out="$TMP" --loops="$SOAK_LOOPS" --seed="$SEED" --think-ms="$SOAK_THINK_MS" \
        2>"$TMP/client-$c.err" &
    CLIENT_PIDS+=($!)
done

# Redis away for ten seconds, a quarter of the way in.
sleep_until $((T0 + SOAK_SECONDS * 250))
rss_sample before_redis_outage
dump_latency 1
event redis_stopping
redis_rc=0
stop_redis || redis_rc=$?
event redis_stopped "\"code\":$redis_rc"
nap "$REDIS_DOWN_SECONDS"
event redis_starting
start_redis
event redis_up
wait_ready_both replicas_ready_after_redis

# Replica B: SIGTERM (must exit 0) and start again on the same port, 60% of the way in.
sleep_until $((T0 + SOAK_SECONDS * 600))
scrape_metrics 1 before_sigterm
rss_sample before_sigterm
event replica_sigterm '"replica":"B"'
stop_replica 1
start_replica 1
event replica_up '"replica":"B"'
rss_sample restarted

# Clients stop by themselves at END_AT, then read back their games; any still
# running two minutes after that is killed (and counted as failed).
sleep_until "$END_AT"
event traffic_end
while [ "$(now_ms)" -lt $((END_AT + 120000)) ]; do
    alive=0
    for pid in "${CLIENT_PIDS[@]}"; do kill -0 "$pid" 2>/dev/null && alive=1; done
    [ "$alive" = 0 ] && break
    sleep 0.5
done
clients_failed=0
for i in "${!CLIENT_PIDS[@]}"; do
    kill -KILL "${CLIENT_PIDS[i]}" 2>/dev/null || true
    rc=0
    wait "${CLIENT_PIDS[i]}" || rc=$?
    if [ "$rc" != 0 ]; then
        clients_failed=$((clients_failed + 1))
        echo "soak: client $i exited $rc:" >&2
        tail -20 "$TMP/client-$i.err" >&2 || true
    fi
    CLIENT_PIDS[i]=""
done
event clients_done "\"failed\":$clients_failed"

kill -TERM "$SAMPLER_PID" 2>/dev/null || true
wait "$SAMPLER_PID" 2>/dev/null || true
SAMPLER_PID=""
rss_sample end
scrape_metrics 0 end
scrape_metrics 1 end
# A game is the hash chessd:game:{<id>} beside chessd:moves:{<id>} and chessd:history:{<id>} (store/store.h).
redis-cli -p "$REDIS_PORT" --scan --pattern 'chessd:game:{*}' >"$TMP/redis-game-keys.txt"
redis-cli -p "$REDIS_PORT" --scan --pattern 'chessd:idem:*' | wc -l >"$TMP/redis-idem-count.txt"
redis-cli -p "$REDIS_PORT" info memory | tr -d '\r' | grep -E '^used_memory(_rss)?:' >"$TMP/redis-memory.txt" || true
ls -l "$TMP/redis/appendonlydir" >"$TMP/redis-aof.txt" 2>/dev/null || true
dump_latency 2
stop_replica 0
stop_replica 1
redis_rc=0
stop_redis || redis_rc=$?
event redis_stopped_final "\"code\":$redis_rc"

node tests/soak/summarize.mjs --dir="$TMP" --summary="$SOAK_SUMMARY" --clients-failed="$clients_failed"
