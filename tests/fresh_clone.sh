#!/usr/bin/env bash
# The repository carries every file its build and tests read: the tracked
# files, as they are in the work tree, are copied into a fresh temporary
# directory with nothing beside them, chessd and the CUnit runner are built
# there (plain `make`, which installs nothing) and the whole CUnit suite runs
# there. A suite that reads a file outside the repository (a sibling folder, say)
# or one that is not committed fails here. Run by `make test` (not under
# SANITIZE=1: this checks files, not memory). The npm packages the oracle
# suites run come from npm's cache (`make deps` filled it).
set -euo pipefail
cd "$(dirname "$0")/.."
command -v git >/dev/null && git rev-parse --is-inside-work-tree >/dev/null 2>&1 || {
    echo "tests/fresh_clone.sh: not a git work tree; nothing to compare the files against" >&2
    exit 2
}
root=$(mktemp -d "${TMPDIR:-/tmp}/chessd-fresh.XXXXXX")
trap 'rm -rf "$root"' EXIT
clone="$root/chessd"
mkdir "$clone"
# Tracked files only (a file deleted in the work tree but not yet from the index is skipped).
git ls-files -z | tar --null --files-from=- --ignore-failed-read -cf - 2>/dev/null | tar -xf - -C "$clone"
echo "# fresh clone in $clone ($(git ls-files | wc -l) tracked files, nothing beside it)"
for d in "$clone"/tests/*/package-lock.json; do
    dir=$(dirname "$d")
    case "$dir" in */oracle) ;; *) continue ;; esac
    npm ci --prefix "$dir" --prefer-offline --no-audit --no-fund --loglevel=error >/dev/null
done
make -C "$clone" --no-print-directory -j"$(nproc 2>/dev/null || echo 2)" build/chessd build/run_tests >"$root/build.log" 2>&1 || {
    tail -30 "$root/build.log" >&2
    echo "tests/fresh_clone.sh: the build failed in a fresh copy of the repository" >&2
    exit 1
}
cd "$clone"
# CHESSD_PERFT_DIR and the like are left unset: the defaults must point inside the repository.
env -u CHESSD_PERFT_DIR CHESSD_BIN=build/chessd build/run_tests
