# Helpers shared by the benchmarks that start servers (http_bench.sh,
# game_bench.sh). Sourced, not run; the caller defines die().

need() { # need COMMAND DEBIAN_PACKAGE
    command -v "$1" >/dev/null 2>&1 || die "'$1' not found: install the Debian package '$2' (apt-get install $2, or make deps)"
}
stop_pid() { # stop_pid PID SECONDS: SIGTERM, wait, then SIGKILL
    local pid=$1 i
    [[ -n $pid ]] && kill -0 "$pid" 2>/dev/null || return 0
    kill -TERM "$pid" 2>/dev/null
    for ((i = 0; i < $2 * 10; i++)); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
    kill -0 "$pid" 2>/dev/null && kill -KILL "$pid" 2>/dev/null
    wait "$pid" 2>/dev/null
    return 0
}
cpu_ticks() { # CPU ticks (utime + stime) of the given pids, summed
    local total=0 p f
    for p in "$@"; do
        f=$(cat "/proc/$p/stat" 2>/dev/null) || continue
        f=${f##*) }                    # the comm field may hold spaces
        read -r -a a <<<"$f"           # a[0] is field 3 (state)
        total=$((total + a[11] + a[12]))
    done
    echo "$total"
}
# median "N N N": the median of space-separated numbers.
median() { tr ' ' '\n' <<<"$1" | grep . | sort -g | awk '{ v[NR] = $1 } END { if (NR % 2) print v[(NR + 1) / 2]; else print (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
