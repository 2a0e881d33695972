#!/usr/bin/env bash
# Runs chessd for a newcomer: when CHESSD_REDIS_URL is not set, starts a
# private redis-server on a free loopback port (data under build/run/redis),
# points chessd at it, and stops it again when chessd exits.
#   usage: tests/run-local.sh path/to/chessd [serve options...]
set -euo pipefail
chessd=${1:?usage: tests/run-local.sh path/to/chessd [options]}
shift

if [ -n "${CHESSD_REDIS_URL:-}" ]; then
    exec "$chessd" serve "$@"
fi

command -v redis-server >/dev/null || { echo "redis-server is missing: run 'make deps'" >&2; exit 1; }
run_dir="$(dirname "$chessd")/run/redis"
mkdir -p "$run_dir"
run_dir=$(cd "$run_dir" && pwd) # redis-server resolves paths after moving into --dir
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])' 2>/dev/null \
       || echo 6380)
redis-server --bind 127.0.0.1 --port "$port" --dir "$run_dir" --save 60 1 --appendonly no \
    --daemonize yes --pidfile "$run_dir/redis.pid" --logfile "$run_dir/redis.log"
for _ in $(seq 50); do
    redis-cli -p "$port" ping >/dev/null 2>&1 && break
    sleep 0.1
done
stop_redis() { redis-cli -p "$port" shutdown nosave >/dev/null 2>&1 || true; }
trap stop_redis EXIT
echo "chessd: local redis-server on 127.0.0.1:$port (data in $run_dir)" >&2
export CHESSD_REDIS_URL="redis://127.0.0.1:$port/0"
"$chessd" serve "$@" &
pid=$!
trap 'kill -TERM $pid 2>/dev/null' INT TERM
wait $pid || true
wait $pid 2>/dev/null || true
