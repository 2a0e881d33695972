#!/usr/bin/env bash
# Runs the oracles' own node tests (tests/oracle/*.test.mjs: the variant
# oracles against the published perft counts, ffish against seirawan.perft)
# with Node's built-in test runner. They need no chessd. Installs nothing: the
# packages come from `npm ci --prefix tests/oracle` (make deps); extra
# arguments go to node. Exits non-zero when a test failed.
set -uo pipefail
cd "$(dirname "$0")/../.."
if [ ! -d tests/oracle/node_modules ]; then
    echo "tests/oracle/run.sh: tests/oracle/node_modules is missing; run npm ci --prefix tests/oracle (make deps)" >&2
    exit 2
fi
# A per-test timeout turns a hang into a failure (the flag exists from Node 20.11).
timeout_flag=()
if node --test-timeout=1 -e '' >/dev/null 2>&1; then
    timeout_flag=(--test-timeout=120000)
fi
exec node --test "${timeout_flag[@]}" "$@" tests/oracle/*.test.mjs
