#!/usr/bin/env bash
# Runs the end-to-end HTTP tests (tests/e2e/*.test.mjs) with Node's built-in
# test runner against a built chessd. Installs nothing: the packages come from
# `npm ci --prefix tests/e2e` (make deps). CHESSD_BIN picks the binary
# (default build/chessd, relative to the repository root); extra arguments go
# to node (e.g. --test-name-pattern=keep-alive). The long files (a minute or
# more, mostly waiting) run beside the others, the busy ones after them; then
# the game suites run again on a Redis Cluster. Non-zero when any run failed.
set -uo pipefail
cd "$(dirname "$0")/../.."
export CHESSD_BIN="${CHESSD_BIN:-build/chessd}"
if [ ! -x "$CHESSD_BIN" ]; then
    echo "tests/e2e/run.sh: $CHESSD_BIN is not an executable; build it first (make) or set CHESSD_BIN" >&2
    exit 2
fi
if [ ! -d tests/e2e/node_modules ]; then
    echo "tests/e2e/run.sh: tests/e2e/node_modules is missing; run npm ci --prefix tests/e2e (make deps)" >&2
    exit 2
fi
# A per-test timeout turns a hang into a failure (the flag exists from Node 20.11).
timeout_flag=()
if node --test-timeout=1 -e '' >/dev/null 2>&1; then
    timeout_flag=(--test-timeout=60000)
fi
# node applies --test-timeout to each file as a whole too, so a file longer
# than it runs on its own, with room for its tests' own timeouts. These wait
# most of the time (a clock running out, a lease passing, the computer
# thinking on one engine), so they run beside the rest.
long_files=(tests/e2e/flag_fall.test.mjs tests/e2e/engine_games.test.mjs tests/e2e/engine_fairness.test.mjs
    tests/e2e/engine_variants.test.mjs tests/e2e/review.test.mjs)
long_timeout=()
[ "${#timeout_flag[@]}" -gt 0 ] && long_timeout=(--test-timeout=180000)
long_log=$(mktemp)
node --test "${long_timeout[@]}" "$@" "${long_files[@]}" >"$long_log" 2>&1 &
long_pid=$!
# The busy files compute the whole time (random games against the oracles):
# they run after the rest, alone, with the long timeout, so a loaded machine
# slows them without failing them and they take no CPU from the others.
busy_files=(tests/e2e/variants_differential.test.mjs)
files=()
for f in tests/e2e/*.test.mjs; do
    [[ " ${long_files[*]} ${busy_files[*]} " == *" $f "* ]] || files+=("$f")
done
node --test "${timeout_flag[@]}" "$@" "${files[@]}"
status=$?
node --test "${long_timeout[@]}" "$@" "${busy_files[@]}"
busy_status=$?
[ "$status" -eq 0 ] && status=$busy_status
wait "$long_pid"
long_status=$?
echo "# the long files: ${long_files[*]}"
sed 's/^/[long] /' "$long_log"
rm -f "$long_log"
[ "$status" -eq 0 ] && status=$long_status
# The game suites again, on a Redis Cluster (3 masters with a replica each,
# started by each test process: CHESSD_E2E_REDIS=cluster, see server.mjs).
# Their tests that stop, pause or proxy a Redis keep a single redis-server.
# The long ones among them run beside the rest, with the long timeout.
cluster_suites=(games game_change idempotency game_cache legacy moves errors events pgn board_svg first_move export finished_feed multi_events variant_games tags bulk presence spectator_delay webhooks webhook_subscriptions)
cluster_long_files=(tests/e2e/engine_games.test.mjs)
# CHESSD_E2E_CLUSTER_SUITES names fewer (the sanitizer pass of make test
# keeps those with code of their own on a Cluster), without the long ones.
if [ -n "${CHESSD_E2E_CLUSTER_SUITES:-}" ]; then
    read -ra cluster_suites <<<"$CHESSD_E2E_CLUSTER_SUITES"
    cluster_long_files=()
fi
echo "# the game suites on a Redis Cluster: ${cluster_suites[*]} ${cluster_long_files[*]}"
cluster_long_log=$(mktemp)
if [ "${#cluster_long_files[@]}" -gt 0 ]; then
    CHESSD_E2E_REDIS=cluster node --test "${long_timeout[@]}" "$@" "${cluster_long_files[@]}" >"$cluster_long_log" 2>&1 &
    cluster_long_pid=$!
else
    (exit 0) &
    cluster_long_pid=$!
fi
cluster_files=()
for suite in "${cluster_suites[@]}"; do cluster_files+=("tests/e2e/$suite.test.mjs"); done
CHESSD_E2E_REDIS=cluster node --test "${timeout_flag[@]}" "$@" "${cluster_files[@]}" \
    2>&1 | sed 's/^/[cluster] /'
cluster_status=${PIPESTATUS[0]}
wait "$cluster_long_pid"
cluster_long_status=$?
echo "# on a Redis Cluster, the long files: ${cluster_long_files[*]}"
sed 's/^/[cluster long] /' "$cluster_long_log"
rm -f "$cluster_long_log"
[ "$cluster_status" -eq 0 ] && cluster_status=$cluster_long_status
[ "$status" -ne 0 ] && exit "$status"
exit "$cluster_status"
