# Helpers shared by the benchmarks that start servers (http_bench.sh,
# game_bench.sh, game_growth.sh, fanout_bench.sh, engine_bench.sh): one
# redis-server, a local Redis Cluster, chessd. Sourced, not run; the caller
# defines die().

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

user_ticks() { # the user-mode part of cpu_ticks (utime), summed
    local total=0 p f
    for p in "$@"; do
        f=$(cat "/proc/$p/stat" 2>/dev/null) || continue
        f=${f##*) }
        read -r -a a <<<"$f"
        total=$((total + a[11]))
    done
    echo "$total"
}
ctx_switches() { # context switches (voluntary and not) of every thread of the given pids, summed
    local total=0 p f n
    for p in "$@"; do
        for f in /proc/"$p"/task/*/status; do
            while read -r _ n; do total=$((total + n)); done < <(grep -E '^(non)?voluntary_ctxt_switches:' "$f" 2>/dev/null)
        done
    done
    echo "$total"
}
# median "N N N": the median of space-separated numbers.
median() { tr ' ' '\n' <<<"$1" | grep . | sort -g | awk '{ v[NR] = $1 } END { if (NR % 2) print v[(NR + 1) / 2]; else print (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }

# start_redis DIR [ARGS...]: a private redis-server on a free loopback port,
# below the kernel's ephemeral range (no persistence, its files and log in
# DIR, ARGS added to its command line); sets REDIS_PID (for stop_pid) and
# REDIS_PORT, dies when none starts. The port is below 32000, so a cluster
# node's bus port (port + 10000) is below 42000; a bus port in use makes
# redis-server exit like a port in use, and another port is tried.
start_redis() {
    local dir=$1 try port i
    shift
    REDIS_PORT='' REDIS_PID=''
    for ((try = 0; try < 10; try++)); do
        port=$((20000 + RANDOM % 12000))
        redis-server --bind 127.0.0.1 --port "$port" --save '' --appendonly no --dir "$dir" \
            --logfile "$dir/redis.log" --daemonize no "$@" >/dev/null 2>&1 &
        REDIS_PID=$!
        for ((i = 0; i < 100; i++)); do
            kill -0 "$REDIS_PID" 2>/dev/null || break
            [[ $(redis-cli -h 127.0.0.1 -p "$port" ping 2>/dev/null) == PONG ]] && { REDIS_PORT=$port; return 0; }
            sleep 0.05
        done
        stop_pid "$REDIS_PID" 2
        REDIS_PID=''
        grep -q 'Address already in use' "$dir/redis.log" 2>/dev/null || die "redis-server did not start: $(cat "$dir/redis.log" 2>/dev/null)"
        : >"$dir/redis.log"
    done
    die "redis-server did not start: no free port found"
}

# start_cluster DIR N: N private redis-servers in cluster mode (as
# start_redis, each in DIR/node<i>), made one Redis Cluster of N masters and
# no replicas by `redis-cli --cluster create` (which wants 3 or more; one
# node gets every slot by CLUSTER ADDSLOTSRANGE); returns once every node says
# cluster_state:ok and knows the N nodes. Sets CLUSTER_PIDS and
# CLUSTER_PORTS (arrays, in the same order; the caller stops the pids, also
# after a failure here) and REDIS_PORT (the first node); dies on failure.
start_cluster() {
    local dir=$1 n=$2 i out ok port nodes=()
    CLUSTER_PIDS=() CLUSTER_PORTS=()
    for ((i = 0; i < n; i++)); do
        mkdir -p "$dir/node$i" || die "cannot create $dir/node$i"
        start_redis "$dir/node$i" --cluster-enabled yes --cluster-config-file "$dir/node$i/nodes.conf"
        CLUSTER_PIDS+=("$REDIS_PID") CLUSTER_PORTS+=("$REDIS_PORT")
        nodes+=("127.0.0.1:$REDIS_PORT")
    done
    if ((n == 1)); then
        out=$(redis-cli -h 127.0.0.1 -p "${CLUSTER_PORTS[0]}" CLUSTER ADDSLOTSRANGE 0 16383 2>&1)
        [[ $out == OK ]] || die "CLUSTER ADDSLOTSRANGE 0 16383 on ${nodes[0]} failed: $out"
    else
        out=$(redis-cli --cluster create "${nodes[@]}" --cluster-replicas 0 --cluster-yes 2>&1) ||
            die "redis-cli --cluster create ${nodes[*]} failed: $out"
    fi
    for ((i = 0; i < 200; i++)); do
        ok=0
        for port in "${CLUSTER_PORTS[@]}"; do
            out=$(redis-cli -h 127.0.0.1 -p "$port" CLUSTER INFO 2>/dev/null | tr -d '\r')
            grep -qx 'cluster_state:ok' <<<"$out" && grep -qx "cluster_known_nodes:$n" <<<"$out" && ok=$((ok + 1))
        done
        ((ok == n)) && { REDIS_PORT=${CLUSTER_PORTS[0]}; return 0; }
        sleep 0.05
    done
    die "the Redis Cluster ${nodes[*]} did not reach cluster_state:ok in 10 s: $out"
}

# start_chessd CHESSD ERRLOG ARGS...: `CHESSD serve --bind 127.0.0.1 --port 0
# ARGS...` with CHESSD_TOKEN_SECRET=$TOKEN_SECRET and no other CHESSD_*
# variable of the environment (a rate limit there would turn requests into
# 429s); stdout (the request log) to /dev/null, stderr to ERRLOG. Sets
# CHESSD_PID, CHESSD_PORT, CHESSD_THREADS and CHESSD_URL; dies when it does
# not start listening.
start_chessd() { start_chessd_command serve "$@"; }

# start_chessd_command COMMAND CHESSD ERRLOG ARGS...: start_chessd with
# another subcommand that takes serve's options (`engine`).
start_chessd_command() {
    local command=$1 bin=$2 errlog=$3 name i
    shift 3
    local unset_env=()
    while IFS='=' read -r name _; do
        [[ $name == CHESSD_* ]] && unset_env+=(-u "$name")
    done < <(env)
    env "${unset_env[@]}" CHESSD_TOKEN_SECRET="$TOKEN_SECRET" "$bin" "$command" --bind 127.0.0.1 --port 0 "$@" \
        >/dev/null 2>"$errlog" &
    CHESSD_PID=$! CHESSD_PORT=''
    for ((i = 0; i < 100; i++)); do
        CHESSD_PORT=$(sed -n 's/^chessd: listening on .* port \([0-9][0-9]*\) with .*/\1/p' "$errlog" 2>/dev/null)
        [[ -n $CHESSD_PORT ]] && break
        kill -0 "$CHESSD_PID" 2>/dev/null || break
        sleep 0.05
    done
    [[ -n $CHESSD_PORT ]] || die "chessd did not start: $(cat "$errlog")"
    CHESSD_THREADS=$(sed -n 's/^chessd: listening on .* with \([0-9]*\) threads.*/\1/p' "$errlog")
    CHESSD_URL=http://127.0.0.1:$CHESSD_PORT
}
