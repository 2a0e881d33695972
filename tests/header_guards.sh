#!/usr/bin/env bash
# Every header's include guard names its file: api/http/buf.h is guarded by
# CHESSD_API_HTTP_BUF_H, so a guard cannot outlive a move or a rename.
# Run from the repository root: prints each header whose guard differs and
# exits 1. It first checks itself on a small tree with one wrong guard.
set -euo pipefail

# The headers under the given roots whose #ifndef guard is not their path's.
wrong_guards() {
    local root=$1
    (cd "$root" && git ls-files --cached --others --exclude-standard -- '*.h' 2>/dev/null || find . -name '*.h' -printf '%P\n') |
    while read -r header; do
        want="CHESSD_$(echo "${header%.h}" | tr 'a-z/.-' 'A-Z___')_H"
        got=$(grep -m1 -o '^#ifndef [A-Za-z0-9_]*' "$root/$header" | cut -d' ' -f2 || true)
        define=$(grep -m1 -o '^#define [A-Za-z0-9_]*' "$root/$header" | cut -d' ' -f2 || true)
        if [ "$got" != "$want" ] || [ "$define" != "$want" ]; then
            echo "$header: guard ${got:-none}, want $want"
        fi
    done
}

self=$(mktemp -d)
trap 'rm -rf "$self"' EXIT
mkdir -p "$self/api/http"
printf '#ifndef CHESSD_API_HTTP_GOOD_H\n#define CHESSD_API_HTTP_GOOD_H\n#endif\n' > "$self/api/http/good.h"
printf '#ifndef CHESSD_API_BAD_H\n#define CHESSD_API_BAD_H\n#endif\n' > "$self/api/http/bad.h"
found=$(wrong_guards "$self")
if [ "$found" != "api/http/bad.h: guard CHESSD_API_BAD_H, want CHESSD_API_HTTP_BAD_H" ]; then
    echo "header_guards: the self-check found '$found', not the one wrong guard" >&2
    exit 2
fi

found=$(wrong_guards .)
if [ -n "$found" ]; then
    echo "header_guards: guards that do not name their file:" >&2
    echo "$found" >&2
    exit 1
fi
echo "header_guards: every header's guard names its file"
