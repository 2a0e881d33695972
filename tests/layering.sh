#!/usr/bin/env bash
# The layers point one way (STYLE.md): run from the repository root after a
# build, `tests/layering.sh BUILD` fails, printing each cycle or wrong-way
# edge, when
#   - the quoted #includes among api/ store/ rules/ files form a cycle, or a
#     rules/ file includes outside rules/, or a store/ file outside store/ and rules/;
#   - the objects under BUILD/{api,store,rules} form a link cycle (object A uses
#     a symbol that object B defines, by nm, and B reaches A again), or a
#     rules/ or store/ object uses a symbol of a layer above it;
#   - a file or object of the transport (api/http/) includes or uses anything
#     outside api/http/ and the base room (the rest of api/, store/, rules/);
#   - a file or object of the base room (rules/base/: text, numbers, hex,
#     UTF-8, the one clock) includes or uses anything outside it;
#   - a rules/ object calls a libc function that is not pure: anything but
#     the mem* and str* functions, snprintf and the compiler's own helpers
#     (no malloc, no I/O, no clock; the base room's clock is header-only, so
#     only an object that reads it names clock_gettime);
#   - a file outside api/http/ includes <microhttpd.h>;
#   - a server file (anything in api/ but api/play/ and api/chessd.c, main's
#     subcommand table) includes or uses api/play/, the terminal client;
#   - the terminal client includes or uses the game service (api/game/, its
#     tokens' randomness) or the server's settings (api/config.*): it has its own;
#   - a room of api/ uses one above it: api/http/ (the transport) is below
#     api/render/ (output formats), below api/engine/ (the UCI driver), below
#     api/game/ (the game service), below api/live/ (the event hub), below the
#     rest of api/ (settings, routes, handlers, start-up).
# Files are found, never listed, so new ones are checked as they come. It first
# runs itself on a small tree with one of each fault, and fails unless all are
# found: a check that cannot fail would pass silently.
set -euo pipefail

# Reads "from to why" lines; prints each cycle ("a -> b (why) -> a") once per
# strongly connected component of more than one node and exits 1 if any.
# Reachability by a search from every node: the graphs have at most a few
# hundred nodes.
find_cycles() {
    awk -v kind="$1" '
    $1 != $2 && !(($1, $2) in why) {
        why[$1, $2] = $3
        if (!($1 in outs)) { outs[$1] = ""; order[++n] = $1 }
        if (!($2 in outs)) { outs[$2] = ""; order[++n] = $2 }
        outs[$1] = outs[$1] " " $2
    }
    # Breadth-first from s: reach[s, v] for every v reachable in one step or
    # more; parent[s, v] the node before v on a shortest path.
    function search(s,    queue, head, tail, u, k, m, next_nodes, v) {
        head = 1; tail = 0
        queue[++tail] = s
        while (head <= tail) {
            u = queue[head++]
            m = split(outs[u], next_nodes, " ")
            for (k = 1; k <= m; k++) {
                v = next_nodes[k]
                if ((s, v) in reach) continue
                reach[s, v] = 1; parent[s, v] = u
                if (v != s) queue[++tail] = v
            }
        }
    }
    END {
        for (i = 1; i <= n; i++) search(order[i])
        found = 0
        for (i = 1; i <= n; i++) {
            a = order[i]
            if (!((a, a) in reach) || (a in reported)) continue
            found = 1
            members = ""
            for (j = 1; j <= n; j++) {
                b = order[j]
                if ((a, b) in reach && (b, a) in reach) { reported[b] = 1; members = members " " b }
            }
            # The shortest cycle through a, walked back from a to a.
            path = a; v = a
            do { u = parent[a, v]; path = u " -(" why[u, v] ")-> " path; v = u } while (v != a)
            printf "%s cycle among%s:\n    %s\n", kind, members, path
        }
        exit found
    }'
}

# Reads "from to why" lines; prints each edge that points up a layer (rules/
# below store/ below api/) and exits 1 if any.
check_layers() {
    awk -v kind="$1" '
    function layer(path,    top) {
        top = substr(path, 1, index(path, "/") - 1)
        return top == "rules" ? 1 : top == "store" ? 2 : top == "api" ? 3 : 99
    }
    layer($1) < layer($2) {
        printf "%s against the layers: %s uses %s (%s); rules/ uses only rules/, store/ only store/ and rules/\n",
            kind, $1, $2, $3
        bad = 1
    }
    END { exit bad }'
}

# Reads "from to why" lines; prints each edge out of the transport (api/http/
# to anything outside it but rules/base/), each edge out of the base room, each edge between a server file and the terminal
# client (api/play/) but the client's use of the rooms below the game
# service, and exits 1 if any.
check_api_rooms() {
    awk -v kind="$1" '
    function in_http(path) { return index(path, "api/http/") == 1 }
    function in_base(path) { return index(path, "rules/base/") == 1 }
    function in_play(path) { return index(path, "api/play/") == 1 }
    function is_main(path) { return path ~ /^api\/chessd\.[cho]$/ }
    in_http($1) && !in_http($2) && !in_base($2) {
        printf "%s out of the transport: %s uses %s (%s); api/http/ knows bytes, headers and limits only\n",
            kind, $1, $2, $3
        bad = 1
    }
    in_base($1) && !in_base($2) {
        printf "%s out of the base room: %s uses %s (%s); rules/base/ knows libc only\n", kind, $1, $2, $3
        bad = 1
    }
    in_play($2) && !in_play($1) && !is_main($1) {
        printf "%s into the terminal client: %s uses %s (%s); no server file knows api/play/\n", kind, $1, $2, $3
        bad = 1
    }
    in_play($1) && (index($2, "api/game/") == 1 || $2 ~ /^api\/config\.[cho]$/) {
        printf "%s from the terminal client into the server: %s uses %s (%s); api/play/ has its own settings and randomness\n",
            kind, $1, $2, $3
        bad = 1
    }
    # The rooms of api/, lowest first; 0 outside api/.
    function room(path) {
        if (index(path, "api/") != 1) return 0
        if (index(path, "api/http/") == 1) return 1
        if (index(path, "api/render/") == 1) return 2
        if (index(path, "api/engine/") == 1) return 3
        if (index(path, "api/game/") == 1) return 4
        if (index(path, "api/live/") == 1) return 5
        if (in_play(path)) return 7
        return 6
    }
    room($1) && room($2) && room($1) < room($2) && !in_play($2) {
        printf "%s against the rooms: %s uses %s (%s); api/http/ < api/render/ < api/engine/ < api/game/ < api/live/ < api/\n",
            kind, $1, $2, $3
        bad = 1
    }
    END { exit bad }'
}

# Every file outside api/http/ that includes <microhttpd.h>: the transport is
# the only place that knows libmicrohttpd.
check_microhttpd() {
    local dirs file bad=0
    dirs=$(existing api store rules)
    [ -n "$dirs" ] || return 0
    while read -r file; do
        case $file in api/http/*) continue ;; esac
        echo "include of <microhttpd.h> outside the transport: $file; only api/http/ knows libmicrohttpd"
        bad=1
    done < <(grep -rlE '^[[:space:]]*#[[:space:]]*include[[:space:]]*<microhttpd\.h>' $dirs --include='*.c' --include='*.h' | sort)
    return $bad
}

# Every libc function a rules/ object calls that is not on the pure list:
# the rules allocate nothing, do no I/O and read no clock (STYLE.md).
# Symbols some rules/ object defines are the rules' own; names that begin
# with two underscores are the compiler's and the sanitizers' helpers.
check_pure() {
    local build=$1
    [ -d "$build/rules" ] || return 0
    find "$build/rules" -name '*.o' | sort | while read -r object; do
        nm -P "$object" | awk -v object="${object#"$build"/}" '{ print object, $1, $2 }'
    done | awk '
    $3 == "U" { uses[++n] = $1 " " $2; next }
    $3 ~ /^[A-TV-Zui]$/ { own[$2] = 1 }
    function pure(name) {
        return name ~ /^(mem|str)[a-z]*$/ || name ~ /^v?snprintf$/ || name ~ /^(qsort|bsearch)$/ \
            || name ~ /^__/ || name == "_GLOBAL_OFFSET_TABLE_"
    }
    END {
        for (i = 1; i <= n; i++) {
            split(uses[i], use, " ")
            if (!(use[2] in own) && !pure(use[2])) {
                printf "impure rules: %s calls %s; rules/ allocates nothing, does no I/O and reads no clock\n",
                    use[1], use[2]
                bad = 1
            }
        }
        exit bad
    }'
}

# The directories among the arguments that exist (a tree may lack a layer).
existing() {
    local dir
    for dir; do
        if [ -d "$dir" ]; then printf '%s\n' "$dir"; fi
    done
}

# "file included-file include" for every quoted #include, paths from the root.
include_edges() {
    local file target dirs
    dirs=$(existing api store rules)
    [ -n "$dirs" ] || return 0
    find $dirs -type f \( -name '*.c' -o -name '*.h' \) | sort | while read -r file; do
        sed -n 's/^[[:space:]]*#[[:space:]]*include[[:space:]]*"\([^"]*\)".*/\1/p' "$file" | while read -r target; do
            printf '%s %s include\n' "$file" "$(realpath -m --relative-to=. "$(dirname "$file")/$target")"
        done
    done
}

# libc functions that an api/ object replaces for the whole process
# (api/http/interpose.c's recv(2) and close(2): wire.c's strict reader and
# lingering close on libmicrohttpd's sockets, every other descriptor straight
# to the system call): a lower layer that calls them calls libc, not the
# layer above, so they make no edge.
INTERPOSED_LIBC=" recv close "

# "object object symbol" for every symbol an object uses that another
# defines; only objects whose source is still there (a stale object from a
# removed file would add edges the program no longer has).
link_edges() {
    local build=$1 object source dirs
    dirs=$(existing "$build/api" "$build/store" "$build/rules")
    [ -n "$dirs" ] || return 0
    find $dirs -name '*.o' | sort | while read -r object; do
        source=${object#"$build"/}
        source=${source%.o}
        if [ -f "$source.c" ] || [ -f "$source.S" ]; then
            nm -P "$object" | awk -v object="${object#"$build"/}" '{ print object, $1, $2 }'
        fi
    done | awk -v interposed="$INTERPOSED_LIBC" '
    # Defined: an upper-case type other than U (or u, i); used: U.
    index(interposed, " " $2 " ") { next }
    $3 == "U" { uses[++n] = $1 " " $2; next }
    $3 ~ /^[A-TV-Zui]$/ && !($2 in owner) { owner[$2] = $1 }
    END {
        for (i = 1; i <= n; i++) {
            split(uses[i], use, " ")
            if (use[2] in owner) print use[1], owner[use[2]], use[2]
        }
    }' | sort -u
}

check_tree() {
    local build=$1 status=0 edges
    edges=$(include_edges)
    find_cycles include <<<"$edges" || status=1
    check_layers include <<<"$edges" || status=1
    check_api_rooms include <<<"$edges" || status=1
    check_microhttpd || status=1
    edges=$(link_edges "$build")
    if [ -z "$edges" ]; then
        echo "layering: no objects under $build/{api,store,rules}: build first" >&2
        return 1
    fi
    find_cycles link <<<"$edges" || status=1
    check_layers link <<<"$edges" || status=1
    check_api_rooms link <<<"$edges" || status=1
    check_pure "$build" || status=1
    return $status
}

# A tree with an include cycle (a.h <-> b.h), a link cycle (a.o <-> b.o), a
# rules/ file that includes api/, a transport file that includes and uses
# api/ and rules/, a <microhttpd.h> outside the transport, a server file
# that includes and uses the terminal client, and output formats (api/render/)
# that include and use the game service and the UCI driver, and a client
# file that includes and uses the game service: each must be reported.
self_test() (
    script=$(realpath "$0")
    dir=$(mktemp -d)
    trap 'rm -rf "$dir"' EXIT
    mkdir -p "$dir/api/http" "$dir/api/play" "$dir/rules" "$dir/build/api/http" "$dir/build/api/play" \
        "$dir/build/rules"
    printf '#pragma once\n#include "b.h"\nint a_f(int);\n' >"$dir/api/a.h"
    printf '#pragma once\n#include "a.h"\nint b_f(int);\n' >"$dir/api/b.h"
    printf '#include "a.h"\nint a_f(int x) { return x ? b_f(x - 1) : 0; }\n' >"$dir/api/a.c"
    printf '#include "b.h"\nint b_f(int x) { return x ? a_f(x - 1) : 1; }\n' >"$dir/api/b.c"
    printf '#include "../api/a.h"\nint r_f(void);\n' >"$dir/rules/r.h"
    printf '#include "r.h"\nint r_f(void) { return a_f(1); }\n' >"$dir/rules/r.c"
    printf '#include "../a.h"\n#include "../../rules/r.h"\nint t_f(void) { return a_f(2) + r_f(); }\n' \
        >"$dir/api/http/t.c"
    printf '#pragma once\nint p_f(void);\n' >"$dir/api/play/p.h"
    printf '#include "p.h"\nint p_f(void) { return 3; }\n' >"$dir/api/play/p.c"
    printf '#include <microhttpd.h>\n#include "play/p.h"\nint s_f(void) { return p_f(); }\n' >"$dir/api/s.c"
    printf '#include "play/p.h"\nint s_f(void);\nint s_f(void) { return p_f(); }\n' >"$dir/build/s_for_cc.c"
    mkdir -p "$dir/api/render" "$dir/api/game" "$dir/build/api/render" "$dir/build/api/game"
    printf '#pragma once\nint g_f(void);\n' >"$dir/api/game/g.h"
    printf '#include "g.h"\nint g_f(void) { return 4; }\n' >"$dir/api/game/g.c"
    printf '#include "../game/g.h"\nint v_f(void);\nint v_f(void) { return g_f(); }\n' >"$dir/api/render/v.c"
    mkdir -p "$dir/api/engine" "$dir/build/api/engine"
    printf '#pragma once\nint u_f(void);\n' >"$dir/api/engine/u.h"
    printf '#include "u.h"\nint u_f(void) { return 5; }\n' >"$dir/api/engine/u.c"
    printf '#include "../engine/u.h"\nint w_f(void);\nint w_f(void) { return u_f(); }\n' >"$dir/api/render/w.c"
    printf '#include "../game/g.h"\nint q_f(void);\nint q_f(void) { return g_f(); }\n' >"$dir/api/play/q.c"
    mkdir -p "$dir/rules/base" "$dir/build/rules/base"
    printf '#pragma once\nint k_f(void);\n' >"$dir/rules/base/k.h"
    printf '#include "k.h"\n#include "../r.h"\nint k_f(void) { return r_f(); }\n' >"$dir/rules/base/k.c"
    printf '#include "../../rules/base/k.h"\nint h_f(void);\nint h_f(void) { return k_f(); }\n' >"$dir/api/http/h.c"
    printf '#include <stdlib.h>\n#include <time.h>\nlong i_f(void);\nlong i_f(void) {\n' >"$dir/rules/i.c"
    printf '    struct timespec t; clock_gettime(CLOCK_MONOTONIC, &t); free(malloc(1)); return t.tv_sec; }\n' \
        >>"$dir/rules/i.c"
    for f in api/a api/b rules/r api/http/t api/play/p api/play/q api/game/g api/render/v api/engine/u api/render/w \
        rules/base/k api/http/h rules/i; do
        "${CC:-cc}" -c "$dir/$f.c" -o "$dir/build/$f.o"
    done
    # s.c as written needs libmicrohttpd's header; its object is what the
    # same code makes without it.
    "${CC:-cc}" -I"$dir/api" -c "$dir/build/s_for_cc.c" -o "$dir/build/api/s.o"
    rm "$dir/build/s_for_cc.c"
    if output=$(cd "$dir" && "$script" --check-only build 2>&1); then
        echo "layering: the self-test tree passed; the check has stopped finding faults" >&2
        exit 1
    fi
    for expect in "include cycle among api/a.h api/b.h" "link cycle among api/a.o api/b.o" \
        "include against the layers: rules/r.h uses api/a.h" "link against the layers: rules/r.o uses api/a.o" \
        "include out of the transport: api/http/t.c uses api/a.h" \
        "include out of the transport: api/http/t.c uses rules/r.h" \
        "link out of the transport: api/http/t.o uses api/a.o" \
        "link out of the transport: api/http/t.o uses rules/r.o" \
        "include of <microhttpd.h> outside the transport: api/s.c" \
        "include into the terminal client: api/s.c uses api/play/p.h" \
        "link into the terminal client: api/s.o uses api/play/p.o" \
        "include against the rooms: api/render/v.c uses api/game/g.h" \
        "link against the rooms: api/render/v.o uses api/game/g.o" \
        "include against the rooms: api/render/w.c uses api/engine/u.h" \
        "link against the rooms: api/render/w.o uses api/engine/u.o" \
        "include from the terminal client into the server: api/play/q.c uses api/game/g.h" \
        "link from the terminal client into the server: api/play/q.o uses api/game/g.o" \
        "include out of the base room: rules/base/k.c uses rules/r.h" \
        "link out of the base room: rules/base/k.o uses rules/r.o" \
        "impure rules: rules/i.o calls malloc" "impure rules: rules/i.o calls free" \
        "impure rules: rules/i.o calls clock_gettime"; do
        if ! grep -qF "$expect" <<<"$output"; then
            printf 'layering: the self-test did not report "%s"; it said:\n%s\n' "$expect" "$output" >&2
            exit 1
        fi
    done
    # The transport may use the base room: that is no fault.
    if grep -qF "api/http/h." <<<"$output"; then
        printf 'layering: the self-test reported the transport'"'"'s use of rules/base/; it said:\n%s\n' "$output" >&2
        exit 1
    fi
)

if [ "${1:-}" = --check-only ]; then
    check_tree "${2:?usage: tests/layering.sh [--check-only] BUILD}"
    exit
fi
build=${1:?usage: tests/layering.sh [--check-only] BUILD}
self_test
if check_tree "$build"; then
    echo "layering: no include or link cycle; rules/ and store/ use nothing above them; rules/ calls no impure" \
        "libc function; rules/base/ uses nothing outside it; api/http/ uses nothing outside it but rules/base/" \
        "and alone includes <microhttpd.h>; no room of api/ uses one above it; no server file uses api/play/," \
        "nor api/play/ the game service or the server's settings"
else
    exit 1
fi
