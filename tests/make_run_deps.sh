#!/usr/bin/env bash
# `make run` installs what running needs and nothing of the tests: its dry
# run in a fresh build directory (as on a fresh machine, where it would run
# `make deps-run`) must install every package of RUN_PACKAGES and none of
# TEST_PACKAGES, and run no `npm ci` and no Kubernetes client install. Run
# from the repository root; the same dry run of `make test` must install the
# test packages, or this check could pass by finding no install at all.
# RUN_PACKAGES must hold what chessd runs beside itself: the redis-server
# that tests/run-local.sh starts and the engines (--engine defaults to
# /usr/games/stockfish, Debian's stockfish; --variant-engine to
# /usr/games/fairy-stockfish, Debian's fairy-stockfish), not only the build's
# packages.
set -euo pipefail
build=$(mktemp -d)
trap 'rm -rf "$build"' EXIT
run_pkgs=$(make --no-print-directory -s print-RUN_PACKAGES)
test_pkgs=$(make --no-print-directory -s print-TEST_PACKAGES)
# The packages a dry run would install: the words of each "for p in ...;" list.
installs() {
    make --no-print-directory -n "$1" BUILD="$build/$1" SANITIZE= 2>/dev/null |
        sed -n 's/.*for p in \([^;]*\);.*/\1/p' | tr ' ' '\n' | grep -v '^$' | sort -u
}
run_installs=$(installs run)
test_installs=$(installs test)
dry_run=$(make --no-print-directory -n run BUILD="$build/run" 2>/dev/null)
status=0
for p in redis-server stockfish fairy-stockfish; do
    grep -qxF "$p" <<<"$(tr ' ' '\n' <<<"$run_pkgs")" || { echo "make run: $p is not in RUN_PACKAGES; chessd runs it" >&2; status=1; }
done
for p in $run_pkgs; do
    grep -qxF "$p" <<<"$run_installs" || { echo "make run: does not install $p, which running needs" >&2; status=1; }
done
for p in $test_pkgs; do
    if grep -qxF "$p" <<<"$run_installs"; then
        echo "make run: installs $p, a test package (TEST_PACKAGES)" >&2
        status=1
    fi
    grep -qxF "$p" <<<"$test_installs" || { echo "make test: does not install $p" >&2; status=1; }
done
for word in "npm ci" "kubernetes-client"; do
    if grep -qF "$word" <<<"$dry_run"; then
        echo "make run: runs $word, which only the tests need" >&2
        status=1
    fi
done
[ "$status" -eq 0 ] && echo "make run installs the $(wc -w <<<"$run_pkgs") packages running needs, none of the tests'"
exit "$status"
