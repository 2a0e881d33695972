/* Starts, inspects and stops a private Redis Cluster for the tests (see
 * redis_cluster.h). Each node is a redis_server_t with cluster arguments;
 * roles and slot owners are read back from CLUSTER NODES text, independently
 * of store/cluster.c (whose CLUSTER SLOTS parser the tests check against it). */
#include "redis_cluster.h"

#include <errno.h>
#include <dirent.h>
#include <netinet/in.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

enum {
    PORT_LOW = 20000,
    PORT_HIGH = 45000,
    BUS_OFFSET = 10000,
    NODE_START_ATTEMPTS = 8,
    CREATE_TIMEOUT_MS = 60000,
    START_OK_TIMEOUT_MS = 30000,
    POLL_MS = 50,
    FORMING_NODE_TIMEOUT_MS = 15000,
};


/* xorshift64 seeded from the clock and the pid: ports differ between runs. */
static uint64_t next_random(void)
{
    static uint64_t state;
    if (!state) {
        struct timespec now;
        clock_gettime(CLOCK_REALTIME, &now);
        state = ((uint64_t)now.tv_nsec << 20) ^ (uint64_t)now.tv_sec ^ ((uint64_t)getpid() << 40) ^ 0x9e3779b97f4a7c15u;
    }
    state ^= state << 13;
    state ^= state >> 7;
    state ^= state << 17;
    return state;
}

/* True when nothing is bound to 127.0.0.1:port right now. */
static bool port_is_free(int port)
{
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    if (fd < 0)
        return false;
    struct sockaddr_in addr = { .sin_family = AF_INET, .sin_port = htons((uint16_t)port),
                                .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
    bool ok = bind(fd, (struct sockaddr *)&addr, sizeof addr) == 0;
    close(fd);
    return ok;
}

/* A port for node `index` whose bus port is free too and which clashes with
 * no port of nodes[0..index) (neither theirs nor their bus ports); 0 if none. */
static int pick_port(const redis_cluster_t *c, unsigned index)
{
    for (int attempt = 0; attempt < 1000; attempt++) {
        int port = PORT_LOW + (int)(next_random() % (PORT_HIGH - PORT_LOW + 1));
        bool clash = false;
        for (unsigned j = 0; j < index && !clash; j++) {
            int other = c->nodes[j].server.port;
            clash = port == other || port == other + BUS_OFFSET || port + BUS_OFFSET == other;
        }
        if (!clash && port_is_free(port) && port_is_free(port + BUS_OFFSET))
            return port;
    }
    return 0;
}

static void set_error(redis_cluster_t *c, const char *format, ...)
{
    va_list args;
    va_start(args, format);
    vsnprintf(c->error, sizeof c->error, format, args);
    va_end(args);
}

/* Fills node's paths and redis-server arguments under c->dir. */
static bool prepare_node(redis_cluster_t *c, unsigned index, unsigned node_timeout_ms)
{
    redis_cluster_node_t *node = &c->nodes[index];
    redis_server_init(&node->server);
    node->master_index = -1;
    char dir[REDIS_CLUSTER_PATH_SIZE]; /* a copy: gcc's -Wrestrict sees node->dir as overlapping node */
    int n1 = snprintf(dir, sizeof dir, "%s/node%u", c->dir, index);
    int n2 = snprintf(node->config_file, sizeof node->config_file, "%s/nodes.conf", dir);
    int n3 = snprintf(node->log_file, sizeof node->log_file, "%s/redis.log", dir);
    memcpy(node->dir, dir, sizeof dir);
    if (n1 < 0 || n2 < 0 || n3 < 0 || (size_t)n2 >= sizeof node->config_file || (size_t)n3 >= sizeof node->log_file) {
        set_error(c, "temporary directory path too long: %s", c->dir);
        return false;
    }
    if (mkdir(node->dir, 0700) && errno != EEXIST) {
        set_error(c, "mkdir %s: %s", node->dir, strerror(errno));
        return false;
    }
    snprintf(node->node_timeout, sizeof node->node_timeout, "%u", node_timeout_ms);
    const char *args[] = {
        "--cluster-enabled", "yes", "--cluster-config-file", node->config_file,
        "--cluster-node-timeout", node->node_timeout, "--dir", node->dir,
        "--logfile", node->log_file, "--loglevel", "notice",
        /* A replica's first sync starts at once, not after 5 s of waiting for more replicas. */
        "--repl-diskless-sync-delay", "0", NULL,
    };
    _Static_assert(sizeof args <= sizeof node->args, "redis_cluster_node_t.args is too small");
    memcpy(node->args, args, sizeof args);
    node->server.extra_args = node->args;
    return true;
}

/* Starts node `index` on a fresh port, trying others when one is taken. */
static bool start_node(redis_cluster_t *c, unsigned index)
{
    redis_cluster_node_t *node = &c->nodes[index];
    for (int attempt = 0; attempt < NODE_START_ATTEMPTS; attempt++) {
        unlink(node->config_file); /* a failed start may have written one for its port */
        node->server.port = pick_port(c, index);
        if (!node->server.port) {
            set_error(c, "no free port pair (port, port + %d) in %d-%d", BUS_OFFSET, PORT_LOW, PORT_HIGH);
            return false;
        }
        if (redis_server_start(&node->server))
            return true;
    }
    set_error(c, "cannot start cluster node %u: %s", index, node->server.error);
    node->server.port = 0;
    return false;
}

/* The last bytes of the file at path, control characters but newlines made spaces, into out. */
static void file_tail(const char *path, char *out, size_t size)
{
    out[0] = '\0';
    FILE *f = fopen(path, "rb");
    if (!f)
        return;
    long want = (long)size - 1;
    if (fseek(f, 0, SEEK_END) == 0) {
        long length = ftell(f);
        fseek(f, length > want ? length - want : 0, SEEK_SET);
    }
    size_t n = fread(out, 1, size - 1, f);
    fclose(f);
    out[n] = '\0';
    for (size_t i = 0; i < n; i++) {
        if ((unsigned char)out[i] < ' ' && out[i] != '\n')
            out[i] = ' ';
    }
}

/* redis-cli --cluster create over every node, masters first. */
static bool create_cluster(redis_cluster_t *c, unsigned replicas_per_master)
{
    char cli[512];
    if (!redis_server_find_program("redis-cli", "CHESSD_REDIS_CLI", cli, sizeof cli)) {
        set_error(c, "redis-cli is not on PATH: install the redis-tools package (or set CHESSD_REDIS_CLI)");
        return false;
    }
    char endpoints[REDIS_CLUSTER_NODES_MAX][32];
    char replicas[16];
    snprintf(replicas, sizeof replicas, "%u", replicas_per_master);
    char *argv[REDIS_CLUSTER_NODES_MAX + 8];
    size_t argc = 0;
    argv[argc++] = (char *)"redis-cli";
    argv[argc++] = (char *)"--cluster";
    argv[argc++] = (char *)"create";
    for (unsigned i = 0; i < c->node_count; i++) {
        snprintf(endpoints[i], sizeof endpoints[i], "127.0.0.1:%d", c->nodes[i].server.port);
        argv[argc++] = endpoints[i];
    }
    argv[argc++] = (char *)"--cluster-replicas";
    argv[argc++] = replicas;
    argv[argc++] = (char *)"--cluster-yes";
    argv[argc] = NULL;
    char log[REDIS_CLUSTER_PATH_SIZE + 32];
    snprintf(log, sizeof log, "%s/redis-cli.log", c->dir);
    char why[256];
    if (redis_server_run_program(cli, argv, log, CREATE_TIMEOUT_MS, why, sizeof why))
        return true;
    char tail[600];
    file_tail(log, tail, sizeof tail);
    set_error(c, "redis-cli --cluster create: %s; its output ends: %s", why, tail);
    return false;
}

bool redis_cluster_start(redis_cluster_t *c, const redis_cluster_options_t *options)
{
    memset(c, 0, sizeof *c);
    unsigned masters = options && options->masters ? options->masters : 3;
    unsigned replicas = options ? options->replicas_per_master : 0;
    unsigned timeout = options && options->node_timeout_ms ? options->node_timeout_ms : 1000;
    if (masters > REDIS_CLUSTER_NODES_MAX / (replicas + 1)) {
        set_error(c, "%u masters with %u replicas each is more than %d nodes", masters, replicas,
                  REDIS_CLUSTER_NODES_MAX);
        return false;
    }
    snprintf(c->dir, sizeof c->dir, "/tmp/chessd-cluster-XXXXXX");
    if (!mkdtemp(c->dir)) {
        set_error(c, "mkdtemp: %s", strerror(errno));
        c->dir[0] = '\0';
        return false;
    }
    c->node_count = masters * (replicas + 1);
    /* Formed with a long node timeout: Redis drops a bus handshake that takes
     * longer than it and never retries (a cluster that never forms, on a
     * loaded machine). The asked-for timeout is set once it is up. */
    for (unsigned i = 0; i < c->node_count; i++) {
        if (!prepare_node(c, i, timeout > FORMING_NODE_TIMEOUT_MS ? timeout : FORMING_NODE_TIMEOUT_MS)
            || !start_node(c, i))
            goto fail;
    }
    if (!create_cluster(c, replicas) || !redis_cluster_wait_ok(c, START_OK_TIMEOUT_MS))
        goto fail;
    for (unsigned i = 0; i < c->node_count; i++) {
        redisReply *r = redis_cluster_command(c, i, "CONFIG SET cluster-node-timeout %u", timeout);
        bool ok = r && r->type == REDIS_REPLY_STATUS;
        if (r)
            freeReplyObject(r);
        if (!ok) {
            set_error(c, "CONFIG SET cluster-node-timeout on %d failed", c->nodes[i].server.port);
            goto fail;
        }
    }
    return true;
fail:;
    char error[sizeof c->error];
    memcpy(error, c->error, sizeof error);
    redis_cluster_stop(c);
    memcpy(c->error, error, sizeof error);
    return false;
}

/* Removes path and, when it is a directory, everything under it (no symlink is followed). */
static void remove_tree(const char *path)
{
    struct stat st;
    if (lstat(path, &st))
        return;
    if (S_ISDIR(st.st_mode)) {
        DIR *dir = opendir(path);
        for (struct dirent *entry; dir && (entry = readdir(dir));) {
            if (!strcmp(entry->d_name, ".") || !strcmp(entry->d_name, ".."))
                continue;
            char child[REDIS_CLUSTER_PATH_SIZE * 2];
            if ((size_t)snprintf(child, sizeof child, "%s/%s", path, entry->d_name) < sizeof child)
                remove_tree(child);
        }
        if (dir)
            closedir(dir);
    }
    remove(path);
}

void redis_cluster_stop(redis_cluster_t *c)
{
    for (unsigned i = 0; i < c->node_count && i < REDIS_CLUSTER_NODES_MAX; i++)
        redis_server_kill(&c->nodes[i].server);
    if (c->dir[0])
        remove_tree(c->dir);
    c->dir[0] = '\0';
    c->node_count = 0;
}

redisReply *redis_cluster_command(const redis_cluster_t *c, unsigned index, const char *format, ...)
{
    if (index >= c->node_count || !c->nodes[index].server.pid)
        return NULL;
    va_list args;
    va_start(args, format);
    redisReply *r = redis_server_vcommand(&c->nodes[index].server, NULL, format, args);
    va_end(args);
    return r;
}

int redis_cluster_find_port(const redis_cluster_t *c, int port)
{
    for (unsigned i = 0; i < c->node_count; i++) {
        if (c->nodes[i].server.port == port)
            return (int)i;
    }
    return -1;
}

/* One line of CLUSTER NODES: "<id> <ip:port@cport[,host]> <flags> <master>
 * <ping> <pong> <epoch> <link> <slot>...". */
typedef struct {
    char id[REDIS_CLUSTER_ID_SIZE];
    char master_id[REDIS_CLUSTER_ID_SIZE]; /* "" for a master */
    int port;
    bool master, myself, failed;
    const char *slots; /* the rest of the line: slot ranges, space-separated */
    size_t slots_length;
} nodes_line_t;

/* The next space-separated field of [*p, end) into field/length. */
static bool next_field(const char **p, const char *end, const char **field, size_t *length)
{
    while (*p < end && **p == ' ')
        (*p)++;
    if (*p == end)
        return false;
    *field = *p;
    while (*p < end && **p != ' ')
        (*p)++;
    *length = (size_t)(*p - *field);
    return true;
}

static bool has_flag(const char *flags, size_t length, const char *flag)
{
    size_t n = strlen(flag);
    for (const char *p = flags, *end = flags + length; p < end;) {
        const char *comma = memchr(p, ',', (size_t)(end - p));
        size_t item = comma ? (size_t)(comma - p) : (size_t)(end - p);
        if (item == n && !memcmp(p, flag, n))
            return true;
        p += item + 1;
    }
    return false;
}

static bool parse_nodes_line(const char *line, size_t length, nodes_line_t *out)
{
    const char *p = line, *end = line + length, *f[8];
    size_t n[8];
    for (int i = 0; i < 8; i++) {
        if (!next_field(&p, end, &f[i], &n[i]))
            return false;
    }
    if (n[0] != REDIS_CLUSTER_ID_SIZE - 1 || (n[3] != 1 && n[3] != REDIS_CLUSTER_ID_SIZE - 1))
        return false;
    memset(out, 0, sizeof *out);
    memcpy(out->id, f[0], n[0]);
    if (n[3] != 1)
        memcpy(out->master_id, f[3], n[3]);
    const char *at = memchr(f[1], '@', n[1]);
    if (!at)
        return false;
    const char *colon = at;
    while (colon > f[1] && colon[-1] != ':')
        colon--;
    out->port = atoi(colon);
    out->master = has_flag(f[2], n[2], "master");
    out->myself = has_flag(f[2], n[2], "myself");
    out->failed = has_flag(f[2], n[2], "fail") || has_flag(f[2], n[2], "fail?");
    out->slots = p;
    out->slots_length = (size_t)(end - p);
    return true;
}

/* Calls visit(line, ctx) for each line of node `index`'s CLUSTER NODES. */
static bool for_each_nodes_line(const redis_cluster_t *c, unsigned index,
                                void (*visit)(const nodes_line_t *line, void *ctx), void *ctx)
{
    redisReply *r = redis_cluster_command(c, index, "CLUSTER NODES");
    bool ok = r && r->type == REDIS_REPLY_STRING;
    for (const char *p = ok ? r->str : NULL, *end = ok ? r->str + r->len : NULL; ok && p < end;) {
        const char *newline = memchr(p, '\n', (size_t)(end - p));
        size_t length = newline ? (size_t)(newline - p) : (size_t)(end - p);
        nodes_line_t line;
        if (length && parse_nodes_line(p, length, &line))
            visit(&line, ctx);
        p += length + 1;
    }
    if (r)
        freeReplyObject(r);
    return ok;
}

/* What one node's CLUSTER NODES says: who serves each slot, and the role
 * of each node of the cluster (by its index in c->nodes). */
typedef struct {
    const redis_cluster_t *c;
    int owner_port[CLUSTER_SLOT_COUNT]; /* 0: no one */
    bool listed[REDIS_CLUSTER_NODES_MAX];
    bool master[REDIS_CLUSTER_NODES_MAX];
    char id[REDIS_CLUSTER_NODES_MAX][REDIS_CLUSTER_ID_SIZE];
    char master_id[REDIS_CLUSTER_NODES_MAX][REDIS_CLUSTER_ID_SIZE]; /* "" for a master */
} view_t;

static void record_line(const nodes_line_t *line, void *ctx)
{
    view_t *view = ctx;
    const char *p = line->slots, *end = line->slots + line->slots_length, *field;
    size_t length;
    while (next_field(&p, end, &field, &length)) {
        if (field[0] == '[') /* "[slot->-id]" or "[slot-<-id]": a migration, not an owner */
            continue;
        char text[32];
        snprintf(text, sizeof text, "%.*s", (int)(length < 31 ? length : 31), field);
        char *dash;
        long first = strtol(text, &dash, 10), last = *dash == '-' ? strtol(dash + 1, NULL, 10) : first;
        for (long s = first; s <= last && s >= 0 && s < CLUSTER_SLOT_COUNT; s++)
            view->owner_port[s] = line->port;
    }
    int index = redis_cluster_find_port(view->c, line->port);
    if (index < 0)
        return;
    view->listed[index] = true;
    view->master[index] = line->master;
    memcpy(view->id[index], line->id, REDIS_CLUSTER_ID_SIZE);
    memcpy(view->master_id[index], line->master_id, REDIS_CLUSTER_ID_SIZE);
}

/* A new view of node `index` (caller frees), or NULL. */
static view_t *read_view(const redis_cluster_t *c, unsigned index)
{
    view_t *view = calloc(1, sizeof *view);
    if (!view)
        return NULL;
    view->c = c;
    if (!for_each_nodes_line(c, index, record_line, view)) {
        free(view);
        return NULL;
    }
    return view;
}

bool redis_cluster_slot_owners(const redis_cluster_t *c, unsigned index, int owner_port[CLUSTER_SLOT_COUNT])
{
    view_t *view = read_view(c, index);
    if (view)
        memcpy(owner_port, view->owner_port, sizeof view->owner_port);
    free(view);
    return view != NULL;
}

bool redis_cluster_refresh(redis_cluster_t *c)
{
    view_t *view = NULL;
    for (unsigned i = 0; i < c->node_count && !view; i++) {
        if (c->nodes[i].server.pid)
            view = read_view(c, i);
    }
    if (!view) {
        set_error(c, "no running node answers CLUSTER NODES");
        return false;
    }
    for (unsigned i = 0; i < c->node_count; i++) {
        if (!view->listed[i])
            continue;
        redis_cluster_node_t *node = &c->nodes[i];
        memcpy(node->id, view->id[i], sizeof node->id);
        node->master = view->master[i];
        node->master_index = -1;
        for (unsigned j = 0; j < c->node_count && !node->master; j++) {
            if (view->listed[j] && !strcmp(view->id[j], view->master_id[i]))
                node->master_index = (int)j;
        }
    }
    free(view);
    return true;
}

void redis_cluster_url(const redis_cluster_t *c, char *buf, size_t size)
{
    size_t used = (size_t)snprintf(buf, size, "redis+cluster://");
    const char *separator = "";
    for (unsigned i = 0; i < c->node_count && used < size; i++) {
        if (!c->nodes[i].master || !c->nodes[i].server.pid)
            continue;
        used += (size_t)snprintf(buf + used, size - used, "%s127.0.0.1:%d", separator, c->nodes[i].server.port);
        separator = ",";
    }
}

void redis_cluster_kill(redis_cluster_t *c, unsigned index)
{
    if (index < c->node_count)
        redis_server_kill(&c->nodes[index].server);
}

/* True when reply is the text of CLUSTER INFO / INFO holding `line` as a whole line. */
static bool reply_has_line(const redisReply *r, const char *line)
{
    if (!r || r->type != REDIS_REPLY_STRING)
        return false;
    size_t n = strlen(line);
    for (const char *p = r->str, *end = r->str + r->len; p < end;) {
        const char *newline = memchr(p, '\n', (size_t)(end - p));
        size_t length = newline ? (size_t)(newline - p) : (size_t)(end - p);
        if (length && p[length - 1] == '\r')
            length--;
        if (length == n && !memcmp(p, line, n))
            return true;
        p = newline ? newline + 1 : end;
    }
    return false;
}

static bool node_has_line(const redis_cluster_t *c, unsigned index, const char *command, const char *line)
{
    redisReply *r = redis_cluster_command(c, index, command);
    bool ok = reply_has_line(r, line);
    if (r)
        freeReplyObject(r);
    return ok;
}

/* True when view and first agree on every slot's owner and on the role
 * and master of every running node. */
static bool views_agree(const redis_cluster_t *c, const view_t *view, const view_t *first)
{
    if (memcmp(view->owner_port, first->owner_port, sizeof view->owner_port))
        return false;
    for (unsigned j = 0; j < c->node_count; j++) {
        if (c->nodes[j].server.pid
            && (!view->listed[j] || !first->listed[j] || view->master[j] != first->master[j]
                || strcmp(view->master_id[j], first->master_id[j])))
            return false;
    }
    return true;
}

/* One look at every running node; the first thing not yet right into why. */
static bool cluster_is_ok(redis_cluster_t *c, view_t **first, char *why, size_t size)
{
    for (unsigned i = 0; i < c->node_count; i++) {
        int port = c->nodes[i].server.port;
        if (!c->nodes[i].server.pid)
            continue;
        if (!node_has_line(c, i, "CLUSTER INFO", "cluster_state:ok")) {
            snprintf(why, size, "node %d does not report cluster_state:ok", port);
            return false;
        }
        if (node_has_line(c, i, "INFO replication", "role:slave")
            && !node_has_line(c, i, "INFO replication", "master_link_status:up")) {
            snprintf(why, size, "replica %d has no link to its master", port);
            return false;
        }
        view_t *view = read_view(c, i);
        if (!view) {
            snprintf(why, size, "node %d does not answer CLUSTER NODES", port);
            return false;
        }
        if (!*first) {
            *first = view;
            continue;
        }
        bool agree = views_agree(c, view, *first);
        free(view);
        if (!agree) {
            snprintf(why, size, "node %d sees other slot owners or roles than the first running node", port);
            return false;
        }
    }
    if (!*first) {
        snprintf(why, size, "no node is running");
        return false;
    }
    for (int s = 0; s < CLUSTER_SLOT_COUNT; s++) {
        int owner = redis_cluster_find_port(c, (*first)->owner_port[s]);
        if ((*first)->owner_port[s] && (owner < 0 || !c->nodes[owner].server.pid)) {
            snprintf(why, size, "slot %d is served by node %d, which is not running", s, (*first)->owner_port[s]);
            return false;
        }
    }
    return true;
}

/* Works around a Redis bug fixed in 7.4 (redis/redis#12564; 7.0 runs here),
 * as tests/e2e/cluster.mjs's repairForgottenSlots does: a replica promoted
 * soon after slots moved to its master may drop one of them from its own
 * view (cluster_state:fail for good) while every other node gives it to the
 * new master. When exactly that is seen, the new master takes those slots
 * back with CLUSTER ADDSLOTSRANGE. True when it repaired something. */
static bool repair_forgotten_slots(redis_cluster_t *c)
{
    int (*owners)[CLUSTER_SLOT_COUNT] = calloc(REDIS_CLUSTER_NODES_MAX, sizeof *owners);
    bool seen[REDIS_CLUSTER_NODES_MAX] = { false }, repaired = false;
    unsigned views = 0;
    for (unsigned i = 0; owners && i < c->node_count; i++) {
        seen[i] = c->nodes[i].server.pid && redis_cluster_slot_owners(c, i, owners[i]);
        views += seen[i];
    }
    for (unsigned i = 0; owners && views >= 2 && i < c->node_count; i++) {
        if (!seen[i] || !node_has_line(c, i, "INFO replication", "role:master"))
            continue;
        int port = c->nodes[i].server.port;
        for (unsigned slot = 0; slot < CLUSTER_SLOT_COUNT;) {
            bool forgotten = owners[i][slot] == 0;
            for (unsigned j = 0; forgotten && j < c->node_count; j++)
                forgotten = j == i || !seen[j] || owners[j][slot] == port;
            if (!forgotten) {
                slot++;
                continue;
            }
            unsigned last = slot;
            while (last + 1 < CLUSTER_SLOT_COUNT && owners[i][last + 1] == 0) {
                bool next = true;
                for (unsigned j = 0; next && j < c->node_count; j++)
                    next = j == i || !seen[j] || owners[j][last + 1] == port;
                if (!next)
                    break;
                last++;
            }
            redisReply *r = redis_cluster_command(c, i, "CLUSTER ADDSLOTSRANGE %u %u", slot, last);
            if (r)
                freeReplyObject(r);
            fprintf(stderr, "\nredis_cluster: Redis 7.0 made master %d forget slots %u-%u; given back\n", port, slot, last);
            repaired = true;
            slot = last + 1;
        }
    }
    free(owners);
    return repaired;
}

bool redis_cluster_wait_ok(redis_cluster_t *c, unsigned timeout_ms)
{
    long deadline = redis_server_now_ms() + (long)timeout_ms;
    char why[256] = "";
    for (;;) {
        view_t *first = NULL;
        bool ok = cluster_is_ok(c, &first, why, sizeof why);
        free(first);
        if (ok)
            return redis_cluster_refresh(c);
        if (redis_server_now_ms() >= deadline)
            break;
        if (!repair_forgotten_slots(c))
            redis_server_sleep_ms(POLL_MS);
    }
    set_error(c, "cluster not ok after %u ms: %s", timeout_ms, why);
    return false;
}

bool redis_cluster_failover(redis_cluster_t *c, unsigned index, unsigned timeout_ms)
{
    if (index >= c->node_count || !c->nodes[index].server.pid
        || !node_has_line(c, index, "INFO replication", "role:slave")) {
        set_error(c, "node %u is not a running replica", index);
        return false;
    }
    long deadline = redis_server_now_ms() + (long)timeout_ms;
    redisReply *r = redis_cluster_command(c, index, "CLUSTER FAILOVER");
    bool sent = r && r->type == REDIS_REPLY_STATUS;
    if (!sent)
        set_error(c, "CLUSTER FAILOVER on %d: %s", c->nodes[index].server.port,
                  r && r->type == REDIS_REPLY_ERROR ? r->str : "no answer");
    if (r)
        freeReplyObject(r);
    if (!sent)
        return false;
    while (!node_has_line(c, index, "INFO replication", "role:master")) {
        if (redis_server_now_ms() >= deadline) {
            set_error(c, "replica %d is not a master %u ms after CLUSTER FAILOVER", c->nodes[index].server.port,
                      timeout_ms);
            return false;
        }
        redis_server_sleep_ms(POLL_MS);
    }
    long left = deadline - redis_server_now_ms();
    return redis_cluster_wait_ok(c, left > 0 ? (unsigned)left : 1);
}
