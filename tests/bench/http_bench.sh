#!/usr/bin/env bash
# http_bench.sh: benchmark chessd's HTTP throughput and latency against nginx
# serving the same answer bytes from a file, in the same run, with the same
# load generator.
#
#   usage: tests/bench/http_bench.sh [path/to/chessd]     (run by `make bench`)
#
# Needs wrk, nginx and curl (Debian packages wrk, nginx, curl; taskset from
# util-linux with BENCH_PIN=1); it installs nothing and fails with a clear
# message if one is missing.
#
# What is measured (wrk, same settings for every target: BENCH_CONNECTIONS=32
# connections, BENCH_WRK_THREADS=2 threads, BENCH_DURATION=10 s, --latency,
# keep-alive connections):
#  * chessd  POST /v1/position, body `{}`, Content-Type application/json: the
#    start position with its full legal-move list, SAN included (~2.8 KB of
#    JSON).  The response is checked once with curl (200, "legal_moves", 20
#    moves) before any load.
#  * nginx   the same POST against a private nginx (own prefix/config in a
#    mktemp dir, worker_processes = server cores, access_log to /dev/null, one
#    write per request as chessd's log) answering
#    the bytes chessd answered, from a file (compared with chessd's answer
#    before the load): the cost of HTTP and of sending that answer, with no
#    work to make it.  keepalive_requests is raised so that nginx, like
#    chessd, keeps every connection for the whole run.
#  * chessd  GET /healthz, for reference (chessd's HTTP cost without the rules).
# Before each measured run the target gets a short unmeasured warm-up
# (BENCH_WARMUP seconds).  chessd's request log (stdout) goes to /dev/null;
# chessd still formats and write(2)s each line, and so does nginx.
#
# Reported: req/s of each, the ratio chessd/nginx req/s (goal >= 0.9, with
# chessd's p99 no worse than nginx's), p50/p90/
# p99/max latency (goal: chessd p99 < 2 ms at 32 connections), server CPU time
# per request (utime+stime of the server processes over the run: less
# sensitive to machine noise than req/s), and chessd's peak RSS (VmHWM from
# /proc/PID/status after the load; goal < 50 MiB).  With BENCH_REPS > 1 the
# chessd and nginx runs are interleaved and each figure is the median.
# There are no absolute-time assertions: the script exits 0 unless a tool is
# missing, a server fails to start or answers wrongly, or wrk fails.
#
# CPU pinning (BENCH_PIN, default 0: not pinned).  The machine has few cores
# (2 here), is shared with other work, and wrk itself needs most of a core.
# Pinning (BENCH_PIN=1: the server on the first half of the allowed CPUs, wrk
# on the other half, the server's threads/workers = its CPU count) gives each
# server the same fixed budget and keeps wrk off its core, which is the better
# setting on a quiet machine with >= 4 cores.  Here it was not chosen because,
# measured on this 2-core shared machine:
#  * a pinned server cannot move away from a core that another tenant's job is
#    using, so noise from the rest of the machine hits it harder, not less;
#  * wrk's 2 threads squeezed onto one core wait for each other's time slices,
#    and wrk counts that wait as server latency: p99 went up for both servers
#    (nginx's p99 ~12-16 ms pinned vs ~6-9 ms unpinned under the same noise),
#    so the p99 figure would mostly measure wrk;
#  * either way nginx is limited by wrk, not by its own CPU (it used about half
#    a core), so pinning does not make the nginx baseline any truer, and the
#    req/s ratio came out about the same (0.37-0.46 pinned vs 0.36-0.49 not).
# So by default everything floats over all cores, with threads = workers =
# number of cores, chessd's own default, and the same for both servers.  The
# CPU-time-per-request figures (and their ratio) do not depend on this choice
# nor on wrk, and are the steadiest measure of server efficiency here.
#
# Environment: BENCH_DURATION (s, default 10), BENCH_WARMUP (s, default 2),
# BENCH_CONNECTIONS (32), BENCH_WRK_THREADS (2), BENCH_REPS (1), BENCH_PIN
# (0 or 1, default 0), BENCH_THREADS (server threads/workers; default: the server's CPUs),
# NGINX (default: nginx from PATH or /usr/sbin/nginx), BENCH_VERBOSE=1 prints
# wrk's own output to stderr.

set -u -o pipefail

CHESSD=${1:-build/chessd}
DURATION=${BENCH_DURATION:-10}
WARMUP=${BENCH_WARMUP:-2}
CONNS=${BENCH_CONNECTIONS:-32}
WRK_THREADS=${BENCH_WRK_THREADS:-2}
REPS=${BENCH_REPS:-1}
VERBOSE=${BENCH_VERBOSE:-}

die() { echo "http_bench: FAIL: $*" >&2; exit 1; }
note() { echo "http_bench: $*"; }
# shellcheck source=tests/bench/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

# ---------------------------------------------------------------- tools
[[ -x $CHESSD ]] || die "chessd binary '$CHESSD' not found or not executable (build it first)"
need wrk wrk
NGINX=${NGINX:-$(command -v nginx || { [[ -x /usr/sbin/nginx ]] && echo /usr/sbin/nginx; })}
[[ -n $NGINX && -x $NGINX ]] || die "'nginx' not found: install the Debian package 'nginx' (apt-get install nginx, or make deps)"
need curl curl
need awk gawk
need pgrep procps
for v in DURATION WARMUP CONNS WRK_THREADS REPS; do
    [[ ${!v} =~ ^[0-9]+$ ]] || die "$v must be a non-negative integer, got '${!v}'"
done
((DURATION >= 1 && CONNS >= 1 && WRK_THREADS >= 1 && REPS >= 1)) || die "duration, connections, threads and reps must be >= 1"
((CONNS >= WRK_THREADS)) || die "BENCH_CONNECTIONS must be >= BENCH_WRK_THREADS"

# ---------------------------------------------------------------- CPUs
# The CPUs this process may run on (cpusets/containers may allow fewer than
# the machine has), e.g. "0-1" or "0,2-3", expanded to a list.
allowed=$(awk '/^Cpus_allowed_list:/ { print $2 }' /proc/self/status)
CPUS=()
IFS=, read -r -a ranges <<<"${allowed:-0-$(($(nproc) - 1))}"
for r in "${ranges[@]}"; do
    if [[ $r == *-* ]]; then for ((c = ${r%-*}; c <= ${r#*-}; c++)); do CPUS+=("$c"); done; else CPUS+=("$r"); fi
done
NCPU=${#CPUS[@]}
PIN=${BENCH_PIN:-0}
[[ $PIN == 0 || $PIN == 1 ]] || die "BENCH_PIN must be 0 or 1, got '$PIN'"
if ((PIN && NCPU < 2)); then note "only $NCPU CPU allowed: not pinning"; PIN=0; fi
((PIN)) && need taskset util-linux
join() { local IFS=,; echo "$*"; }
if ((PIN)); then
    nsrv=$(((NCPU + 1) / 2))
    SERVER_CPUS=$(join "${CPUS[@]:0:nsrv}")
    WRK_CPUS=$(join "${CPUS[@]:nsrv}")
    SERVER_NCPU=$nsrv
    SERVER_RUN=(taskset -c "$SERVER_CPUS")
    WRK_RUN=(taskset -c "$WRK_CPUS")
else
    SERVER_CPUS=$(join "${CPUS[@]}") WRK_CPUS=$SERVER_CPUS SERVER_NCPU=$NCPU
    SERVER_RUN=() WRK_RUN=()
fi
THREADS=${BENCH_THREADS:-$SERVER_NCPU}
[[ $THREADS =~ ^[1-9][0-9]*$ ]] || die "BENCH_THREADS must be a positive integer, got '$THREADS'"

# ---------------------------------------------------------------- cleanup
TMP=$(mktemp -d "${TMPDIR:-/tmp}/http_bench.XXXXXX") || die "mktemp failed"
CHESSD_PID='' NGINX_PID='' WRK_PID=''
# shellcheck disable=SC2317  # invoked by the trap
cleanup() {
    local workers=''
    [[ -n $NGINX_PID ]] && workers=$(pgrep -P "$NGINX_PID" 2>/dev/null)
    stop_pid "$WRK_PID" 2
    stop_pid "$CHESSD_PID" 5
    stop_pid "$NGINX_PID" 5
    for w in $workers; do stop_pid "$w" 1; done
    rm -rf "$TMP"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

# ---------------------------------------------------------------- helpers
# CPU ticks (utime + stime) of the given pids, summed.
CLK_TCK=$(getconf CLK_TCK 2>/dev/null || echo 100)
vm_kib() { awk -v k="$2:" '$1 == k { print $2 }' "/proc/$1/status" 2>/dev/null; }
mib() { awk -v k="$1" 'BEGIN { printf "%.1f", k / 1024 }'; }

# wrk script: method/body/headers, and a machine-readable summary line.
write_lua() { # write_lua FILE METHOD LUA_BODY_EXPRESSION
    cat >"$1" <<EOF
wrk.method = "$2"
wrk.body = $3
wrk.headers["Content-Type"] = "application/json"
done = function(summary, latency, requests)
    local e = summary.errors
    io.write(string.format("WRKSTAT requests=%d duration_us=%d p50_us=%d p90_us=%d p99_us=%d max_us=%d " ..
        "err_connect=%d err_read=%d err_write=%d err_status=%d err_timeout=%d\n",
        summary.requests, summary.duration, latency:percentile(50), latency:percentile(90),
        latency:percentile(99), latency.max, e.connect, e.read, e.write, e.status, e.timeout))
end
EOF
}
write_lua "$TMP/post.lua" POST '"{}"'
write_lua "$TMP/get.lua" GET nil

# wrk_bg ARGS...: wrk with the common settings, output in $TMP/wrk.out; run in
# the background and waited for, so that a signal stops the script at once.
wrk_bg() {
    "${WRK_RUN[@]}" wrk -t"$WRK_THREADS" -c"$CONNS" "$@" >"$TMP/wrk.out" 2>&1 &
    WRK_PID=$!
    wait "$WRK_PID"
    local rc=$?
    WRK_PID=''
    return "$rc"
}

# run_wrk NAME URL LUA PIDS... -> sets S[NAME,...] for this repetition
declare -A S
run_wrk() {
    local name=$1 url=$2 lua=$3 out t0 t1 rc line
    shift 3
    if ((WARMUP > 0)); then
        wrk_bg -d"${WARMUP}s" -s "$lua" "$url" || die "wrk warm-up against $name ($url) failed: $(cat "$TMP/wrk.out")"
    fi
    t0=$(cpu_ticks "$@")
    wrk_bg -d"${DURATION}s" --latency -s "$lua" "$url"
    rc=$?
    t1=$(cpu_ticks "$@")
    out=$(<"$TMP/wrk.out")
    [[ -n $VERBOSE ]] && printf '  --- wrk %s\n%s\n' "$name" "$out" >&2
    ((rc == 0)) || die "wrk against $name ($url) exited with status $rc: $out"
    line=$(printf '%s\n' "$out" | grep '^WRKSTAT ') || die "wrk against $name printed no summary: $out"
    local kv
    for kv in ${line#WRKSTAT }; do S[$name,${kv%%=*}]=${kv#*=}; done
    S[$name,cpu_ticks]=$((t1 - t0))
    local errs=$((S[$name,err_connect] + S[$name,err_read] + S[$name,err_write] + S[$name,err_timeout]))
    ((errs == 0)) || note "warning: $name: socket errors: connect ${S[$name,err_connect]}, read ${S[$name,err_read]}, write ${S[$name,err_write]}, timeout ${S[$name,err_timeout]}"
    ((S[$name,err_status] == 0)) || note "warning: $name: ${S[$name,err_status]} non-2xx/3xx responses"
    ((S[$name,requests] > 0)) || die "wrk against $name completed no request"
}

# ---------------------------------------------------------------- chessd
"${SERVER_RUN[@]}" "$CHESSD" serve --bind 127.0.0.1 --port 0 --threads "$THREADS" --shutdown-grace 1 \
    >/dev/null 2>"$TMP/chessd.err" &
CHESSD_PID=$!
CHESSD_PORT=''
for ((i = 0; i < 100; i++)); do
    CHESSD_PORT=$(sed -n 's/^chessd: listening on .* port \([0-9][0-9]*\) with .*/\1/p' "$TMP/chessd.err" 2>/dev/null)
    [[ -n $CHESSD_PORT ]] && break
    kill -0 "$CHESSD_PID" 2>/dev/null || break
    sleep 0.05
done
[[ -n $CHESSD_PORT ]] || die "chessd did not start: $(cat "$TMP/chessd.err")"
CHESSD_URL=http://127.0.0.1:$CHESSD_PORT

# Check the answer before loading it.
resp=$(curl -sS -m 5 -o "$TMP/position.json" -w '%{http_code} %{content_type}' -X POST \
       -H 'Content-Type: application/json' --data '{}' "$CHESSD_URL/v1/position") ||
    die "curl POST $CHESSD_URL/v1/position failed"
[[ $resp == "200 application/json"* ]] || die "chessd POST /v1/position: expected 200 application/json, got '$resp'"
body=$(<"$TMP/position.json")
[[ $body == *'"legal_moves":['* ]] || die "chessd POST /v1/position: no \"legal_moves\" array in: ${body:0:300}"
moves=${body#*\"legal_moves\":[}   # the move objects, each starting {"uci":"e2e4","san":"e4",
nmoves=$(grep -o '{"uci":"[a-h][1-8][a-h][1-8][qrbn]\{0,1\}"' <<<"$moves" | wc -l)
nsan=$(grep -o '{"uci":"[a-h1-8qrbn]*","san":"[^"]\{2,7\}"' <<<"$moves" | wc -l)
((nmoves == 20 && nsan == 20)) || die "chessd POST /v1/position: expected 20 legal moves with SAN, found $nmoves (uci) / $nsan (san)"
grep -q '"san":"Nf3"' <<<"$moves" || die "chessd POST /v1/position: SAN 'Nf3' missing from the legal moves"
RESP_BYTES=${#body}
hz=$(curl -sS -m 5 -o /dev/null -w '%{http_code}' "$CHESSD_URL/healthz") || die "curl GET $CHESSD_URL/healthz failed"
[[ $hz == 200 ]] || die "chessd GET /healthz: expected 200, got $hz"

# ---------------------------------------------------------------- nginx
mkdir -p "$TMP/nginx/logs" "$TMP/nginx/tmp" "$TMP/nginx/www/v1"
cp "$TMP/position.json" "$TMP/nginx/www/v1/position"
chmod 755 "$TMP"   # workers run as an unprivileged user when started as root
start_nginx() { # start_nginx PORT -> 0 when nginx answers on PORT
    local port=$1 i
    cat >"$TMP/nginx/nginx.conf" <<EOF
daemon off;
worker_processes $THREADS;
pid $TMP/nginx/nginx.pid;
error_log $TMP/nginx/logs/error.log warn;
events { worker_connections 1024; }
http {
    # Each request logged with one write(2), as chessd logs each: both pay
    # for their log the same way (nginx's default, to /dev/null as chessd's).
    access_log /dev/null combined;
    keepalive_requests 1000000;
    sendfile on;
    open_file_cache max=16;
    open_file_cache_valid 600s;
    client_body_temp_path $TMP/nginx/tmp/body;
    proxy_temp_path $TMP/nginx/tmp/proxy;
    fastcgi_temp_path $TMP/nginx/tmp/fastcgi;
    uwsgi_temp_path $TMP/nginx/tmp/uwsgi;
    scgi_temp_path $TMP/nginx/tmp/scgi;
    server {
        listen 127.0.0.1:$port;
        # chessd's answer, the same bytes, from a file (a POST to a static
        # file is refused with 405, which is turned into the file itself).
        location = /v1/position {
            root $TMP/nginx/www;
            default_type application/json;
            error_page 405 =200 \$uri;
        }
        location / {
            default_type application/json;
            return 200 '{"status":"ok"}';
        }
    }
}
EOF
    "${SERVER_RUN[@]}" "$NGINX" -p "$TMP/nginx/" -c "$TMP/nginx/nginx.conf" -e "$TMP/nginx/logs/error.log" \
        >"$TMP/nginx/stdout" 2>&1 &
    NGINX_PID=$!
    for ((i = 0; i < 100; i++)); do
        kill -0 "$NGINX_PID" 2>/dev/null || { wait "$NGINX_PID" 2>/dev/null; NGINX_PID=''; return 1; }
        [[ $(curl -s -m 1 -o /dev/null -w '%{http_code}' "http://127.0.0.1:$port/") == 200 ]] && return 0
        sleep 0.05
    done
    stop_pid "$NGINX_PID" 2; NGINX_PID=''
    return 1
}
NGINX_PORT=''
for ((try = 0; try < 10; try++)); do
    port=$((20000 + RANDOM % 12000))   # below the kernel's ephemeral range
    [[ $port == "$CHESSD_PORT" ]] && continue
    if start_nginx "$port"; then NGINX_PORT=$port; break; fi
    grep -q 'Address already in use' "$TMP/nginx/logs/error.log" "$TMP/nginx/stdout" 2>/dev/null ||
        die "nginx did not start: $(cat "$TMP/nginx/stdout" "$TMP/nginx/logs/error.log" 2>/dev/null)"
    : >"$TMP/nginx/logs/error.log"
done
[[ -n $NGINX_PORT ]] || die "nginx did not start: no free port found"
NGINX_URL=http://127.0.0.1:$NGINX_PORT
mapfile -t NGINX_PIDS < <(echo "$NGINX_PID"; pgrep -P "$NGINX_PID")
curl -sS -m 5 -X POST -H 'Content-Type: application/json' --data '{}' -o "$TMP/nginx.json" "$NGINX_URL/v1/position" ||
    die "curl POST $NGINX_URL/v1/position failed"
cmp -s "$TMP/nginx.json" "$TMP/position.json" || die "nginx POST /v1/position: not chessd's answer: $(head -c 200 "$TMP/nginx.json")"
r=$(curl -sS -m 5 -w ' %{http_code}' "$NGINX_URL/healthz") || die "curl GET $NGINX_URL/healthz failed"
[[ $r == '{"status":"ok"} 200' ]] || die "nginx GET: unexpected answer '$r'"

# ---------------------------------------------------------------- measure
NGINX_VERSION=$("$NGINX" -v 2>&1 | sed 's/^nginx version: //')
WRK_VERSION=$(wrk -v 2>&1 | head -n 1 | awk '{ print $1, $2 }')
note "chessd=$CHESSD ($CHESSD_URL, $THREADS threads)  nginx=$NGINX_VERSION ($NGINX_URL, $THREADS workers)  $WRK_VERSION"
if ((PIN)); then
    note "pinned: servers on CPU $SERVER_CPUS, wrk on CPU $WRK_CPUS ($NCPU CPUs allowed)"
else
    note "not pinned: servers and wrk share CPUs $SERVER_CPUS"
fi
note "wrk -t$WRK_THREADS -c$CONNS -d${DURATION}s --latency (after ${WARMUP}s warm-up), $REPS repetition(s)$( ((REPS > 1)) && echo ', median reported')"
note "chessd POST /v1/position {} answers $RESP_BYTES bytes of JSON (20 legal moves); nginx answers the same bytes from a file"
echo

declare -A R   # R[name,field] = space-separated samples
TARGETS=(chessd nginx healthz)
for ((rep = 1; rep <= REPS; rep++)); do
    [[ -t 2 ]] && printf '  run %d/%d\r' "$rep" "$REPS" >&2
    run_wrk chessd "$CHESSD_URL/v1/position" "$TMP/post.lua" "$CHESSD_PID"
    run_wrk nginx "$NGINX_URL/v1/position" "$TMP/post.lua" "${NGINX_PIDS[@]}"
    run_wrk healthz "$CHESSD_URL/healthz" "$TMP/get.lua" "$CHESSD_PID"
    kill -0 "$CHESSD_PID" 2>/dev/null || die "chessd exited during the load: $(cat "$TMP/chessd.err")"
    for t in "${TARGETS[@]}"; do
        rps=$(awk -v n="${S[$t,requests]}" -v us="${S[$t,duration_us]}" 'BEGIN { printf "%.1f", n / (us / 1e6) }')
        cpu=$(awk -v t="${S[$t,cpu_ticks]}" -v n="${S[$t,requests]}" -v hz="$CLK_TCK" 'BEGIN { printf "%.1f", t / hz * 1e6 / n }')
        R[$t,rps]+="$rps " R[$t,cpu]+="$cpu "
        for f in p50_us p90_us p99_us max_us; do R[$t,$f]+="${S[$t,$f]} "; done
    done
done
[[ -t 2 ]] && printf '%*s\r' 20 '' >&2

ms() { awk -v us="$1" 'BEGIN { printf "%.2f", us / 1000 }'; }

CHESSD_HWM=$(vm_kib "$CHESSD_PID" VmHWM)
CHESSD_RSS=$(vm_kib "$CHESSD_PID" VmRSS)
nginx_hwm=0
for p in "${NGINX_PIDS[@]}"; do nginx_hwm=$((nginx_hwm + $(vm_kib "$p" VmHWM || echo 0))); done

# ---------------------------------------------------------------- report
printf '  %-28s %10s %8s %8s %8s %8s %12s\n' target req/s p50_ms p90_ms p99_ms max_ms cpu_us/req
label() { case $1 in chessd) echo "chessd POST /v1/position" ;; nginx) echo "nginx POST (same bytes, file)" ;; healthz) echo "chessd GET /healthz" ;; esac; }
declare -A M
for t in "${TARGETS[@]}"; do
    for f in rps cpu p50_us p90_us p99_us max_us; do M[$t,$f]=$(median "${R[$t,$f]}"); done
    printf '  %-28s %10.0f %8s %8s %8s %8s %12s\n' "$(label "$t")" "${M[$t,rps]}" "$(ms "${M[$t,p50_us]}")" \
        "$(ms "${M[$t,p90_us]}")" "$(ms "${M[$t,p99_us]}")" "$(ms "${M[$t,max_us]}")" "${M[$t,cpu]}"
done
echo
echo "  chessd RSS now $(mib "${CHESSD_RSS:-0}") MiB; nginx peak RSS (master + workers) $(mib "$nginx_hwm") MiB"
echo "  cpu_us/req = server CPU time (user + system, all threads/workers) per request"
echo
echo "goals: ratio >= 0.9 with chessd p99 <= nginx p99, chessd p99 < 2 ms at $CONNS connections, chessd peak RSS < 50 MiB"
echo "chessd req/s: ${M[chessd,rps]}"
echo "nginx req/s: ${M[nginx,rps]}"
echo "chessd healthz req/s: ${M[healthz,rps]}"
echo "cpu per request ratio nginx/chessd: $(awk -v a="${M[nginx,cpu]}" -v b="${M[chessd,cpu]}" 'BEGIN { printf "%.2f", (b > 0 ? a / b : 0) }') (server efficiency; 1.0 = as cheap as nginx)"
echo "ratio chessd/nginx req/s: $(awk -v a="${M[chessd,rps]}" -v b="${M[nginx,rps]}" 'BEGIN { printf "%.2f", a / b }')"
echo "nginx p99 ms: $(ms "${M[nginx,p99_us]}")"
echo "chessd p99 ms: $(ms "${M[chessd,p99_us]}")"
echo "chessd peak RSS MiB: $(mib "${CHESSD_HWM:-0}")"
exit 0
