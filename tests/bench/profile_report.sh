#!/usr/bin/env bash
# profile_report.sh: where a server's CPU went, from a perf profile and a
# count of its system calls, per request. game_bench.sh runs it with
# BENCH_PROFILE=1 (chessd's moves); it can be run on any perf data.
#
#   usage: tests/bench/profile_report.sh PERF_DATA SYSCALL_STAT REQUESTS OBJECT_DIR
#
# PERF_DATA: `perf record -F ... -p PID` of the server; SYSCALL_STAT:
# `perf stat -x, -e 'syscalls:sys_enter_*' -p PID` of the same window (or
# an empty file); REQUESTS: the requests served in that window; OBJECT_DIR:
# the build directory whose rules/, store/ and api/ objects (.o) the
# server was linked from, to tell its own functions by layer (by nm).
#
# Prints the samples in the kernel and in user mode, user mode by library
# (the C library split into allocation, memory and string functions, the
# instructions around system calls, locks, printf and the rest) and the
# server's own code by layer (rules/, store/, api/http, api/render,
# api/game, api/live, the rest of api/), the 15 costliest functions, and
# the system calls per request, costliest first. Reads only; asserts nothing.

set -u -o pipefail
DATA=${1:?usage: profile_report.sh PERF_DATA SYSCALL_STAT REQUESTS OBJECT_DIR}
STAT=${2:?}
REQUESTS=${3:?}
OBJECTS=${4:?}
fail() { echo "profile_report: FAIL: $*" >&2; exit 1; }
command -v perf >/dev/null || fail "perf is not installed (Debian package linux-perf)"
[[ -s $DATA ]] || fail "no perf data in $DATA"
[[ $REQUESTS =~ ^[1-9][0-9]*$ ]] || fail "REQUESTS must be a positive whole number, got '$REQUESTS'"
TMP=$(mktemp -d "${TMPDIR:-/tmp}/profile_report.XXXXXX") || fail "mktemp failed"
trap 'rm -rf "$TMP"' EXIT

# symbol -> layer, for the server's own functions
for dir in rules store api/http api/render api/game api/live api/engine api; do
    [[ -d $OBJECTS/$dir ]] || continue
    depth=$([[ $dir == api ]] && echo 1 || echo 9)
    find "$OBJECTS/$dir" -maxdepth "$depth" -name '*.o' -print0 | xargs -0 -r nm --defined-only 2>/dev/null |
        awk -v layer="$dir" '$2 ~ /^[tTi]$/ { sym = $3; sub(/\..*$/, "", sym); print sym, layer }'
done | awk '!seen[$1]++' >"$TMP/layers"

# samples by dso and symbol: "percent dso symbol"
perf report -i "$DATA" --no-children --sort dso,sym --stdio 2>/dev/null |
    awk '$1 ~ /%$/ { p = $1; sub(/%/, "", p); dso = $2; sym = ""; for (i = 4; i <= NF; i++) sym = sym (i > 4 ? " " : "") $i
                     kernel = ($3 == "[k]"); print p "\t" (kernel ? "[kernel]" : dso) "\t" sym }' >"$TMP/samples"
[[ -s $TMP/samples ]] || fail "perf report found no samples in $DATA"

awk -F '\t' -v layers="$TMP/layers" '
    BEGIN { while ((getline line < layers) > 0) { split(line, f, " "); layer[f[1]] = f[2] } }
    # prints title and the shares of a, largest first
    function listed(title, a,    keys, n, i, j, t, k, line) {
        n = 0; for (k in a) keys[++n] = k
        for (i = 1; i <= n; i++) for (j = i + 1; j <= n; j++) if (a[keys[j]] > a[keys[i]]) { t = keys[i]; keys[i] = keys[j]; keys[j] = t }
        line = title
        for (i = 1; i <= n; i++) line = line sprintf(" %s %.1f%%;", keys[i], 100 * a[keys[i]] / total)
        print substr(line, 1, length(line) - 1)
    }
    function libc_part(s) {
        if (s ~ /malloc|free|calloc|realloc|_int_|consolidate|unlink_chunk|tcache/) return "allocation"
        if (s ~ /^(__)?(mem|str|wmem)|mempcpy/) return "memory and strings"
        if (s ~ /printf|_IO_/) return "printf"
        if (s ~ /mutex|cond|__lll|pthread_(spin|rwlock)/) return "locks"
        if (s ~ /^(__)?(libc_)?(poll|epoll_wait|epoll_ctl|read|write|recv|recvfrom|send|sendto|sendmsg|writev|accept4?|close|syscall|futex|getrandom|clock_gettime)|asynccancel|__GI___libc_(read|write|recv|send)/) return "around system calls"
        return "other"
    }
    {
        p = $1 + 0; dso = $2; sym = $3
        total += p
        if (dso == "[kernel]") { kernel += p; next }
        user += p
        base = sym; sub(/\..*$/, "", base)           # function-multiversioned clones, .constprop ...
        if (dso ~ /^libc\.so/) { lib["C library"] += p; part[libc_part(sym)] += p }
        else if (dso ~ /microhttpd/) lib["libmicrohttpd"] += p
        else if (dso ~ /libcrypto|libssl/) lib["OpenSSL"] += p
        else if (dso ~ /hiredis/) lib["hiredis"] += p
        else if (dso ~ /cjson/) lib["cJSON"] += p
        else if (base in layer) { lib["the server"] += p; own[layer[base]] += p }
        else if (dso ~ /^\[vdso\]/) lib["vDSO (clock)"] += p
        else if (sym ~ /@plt$/) { lib["the server"] += p; own["calls into libraries (PLT)"] += p }
        else { lib["the server"] += p; own["(unnamed)"] += p }
    }
    END {
        if (total <= 0) exit 1
        printf "  samples: kernel %.1f%%, user mode %.1f%%\n", 100 * kernel / total, 100 * user / total
        listed("  user mode by library:", lib)
        listed("  the C library:", part)
        listed("  the server by layer:", own)
    }' "$TMP/samples" || fail "no samples to add up"

echo "  costliest functions (share of all samples):"
sort -t $'\t' -k1,1 -g -r "$TMP/samples" | head -15 | awk -F '\t' '{ printf "    %6.2f%%  %-22s %s\n", $1, $2, $3 }'

if [[ -s $STAT ]]; then
    echo "  system calls per request:"
    awk -F, -v n="$REQUESTS" '$3 ~ /^syscalls:sys_enter_/ && $1 ~ /^[0-9]+$/ && $1 > 0 {
            name = $3; sub(/^syscalls:sys_enter_/, "", name); printf "%.2f %s\n", $1 / n, name; sum += $1 / n }
        END { printf "%.2f (all)\n", sum }' "$STAT" | sort -g -r | awk '{ printf "    %6.2f  %s\n", $1, $2 }' | head -16
fi
exit 0
