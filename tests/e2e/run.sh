#!/usr/bin/env bash
# Runs the end-to-end HTTP tests (tests/e2e/*.test.mjs) with Node's built-in
# test runner against a built chessd. Installs nothing: the packages come from
# `npm ci --prefix tests/e2e` (make deps). CHESSD_BIN picks the binary
# (default build/chessd, relative to the repository root); extra arguments go
# to node (e.g. --test-name-pattern=keep-alive). Exits with node's status.
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
node --test "${timeout_flag[@]}" "$@" tests/e2e/
exit $?
