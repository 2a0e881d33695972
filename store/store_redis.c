/* Redis under store.h, on hiredis (0.14, synchronous): open and close, one
 * connection per thread and node (dropped after any error, so the next call
 * reconnects), every command routed over a Cluster and timed, the probe,
 * and the token secret. Games are game_write.c's and game_load.c's, and
 * the breaker's state is breaker.c's. */
#include "store.h"
#include "store_private.h"

#include <errno.h>
#include <hiredis/hiredis.h>
#include <openssl/evp.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "../rules/base/hex.h"
#include "breaker.h"
#include "cluster.h"
#include "conn.h"
#include "credentials.h"
#include "fiber.h"
#include "sock.h"
#include "tls.h"
#include "url.h"

enum {
    /* Tries of one command across redirections, reconnections and cluster
     * pauses, all within twice the command timeout (ROUTE_BUDGET). */
    ROUTE_ATTEMPTS = 8,
    ROUTE_PAUSE_FIRST_MS = 20,
    ROUTE_PAUSE_MAX_MS = 200,
    /* A slot map is read again at most this often, however many MOVED come. */
    MAP_REFRESH_MIN_MS = 100,
    CONNECT_LOG_MS = 10000,
    /* Lines remembered for the log: more than the seeds, so a cluster whose
     * nodes all fail keeps one entry per node. */
    LOGGED_LINES = 2 * URL_SEEDS_MAX,
};

/* A line logged, and when (monotonic ms). */
typedef struct {
    char line[512];
    int64_t ms;
} logged_line_t;

/* This thread's connections: one per node it has talked to. */
typedef struct {
    cluster_node_t node;
    conn_t *conn;
} node_conn_t;

typedef struct {
    node_conn_t *items;
    unsigned count, capacity;
} thread_conns_t;

struct store {
    url_t url; /* its password replaced by one given apart (credentials_take_password) */
    unsigned connect_timeout_ms, command_timeout_ms;
    tls_context_t *tls; /* NULL: plain TCP */
    pthread_key_t connection_key; /* thread_conns_t (a fiber's are its own: fiber_conns_t) */
    uint64_t serial;
    atomic_ullong errors, connects, redirects, fast_failures;
    /* Cluster mode: the slot map, replaced whole under map_lock. */
    pthread_mutex_t map_lock;
    cluster_map_t *map;
    int64_t map_read_ms; /* monotonic time of the last attempt to read it */
    unsigned map_turn;   /* which known node a read of the map asks first (after a hint) */
    /* The reasons Redis could not be used logged lately: each new one is
     * logged at once, the same again at most every CONNECT_LOG_MS. A reason
     * names its node, and a cluster's nodes fail in turn, so one entry per
     * line, the oldest replaced when all are taken. */
    pthread_mutex_t log_lock;
    logged_line_t logged[LOGGED_LINES];
    breaker_t *breaker; /* the nodes seen to fail (store_config_t.breaker) */
    /* When Redis last refused a command for lack of memory (an OOM reply;
     * monotonic ms, 0: not since the last write it took). See store_is_full. */
    atomic_llong full_since_ms;
};

/* Set on the thread running store_probe(): its commands pass the breaker. */
static _Thread_local bool probing;
/* This thread's store_set_deadline() (0: none); a fiber keeps its own. */
static _Thread_local int64_t call_deadline_ms;
_Static_assert(sizeof(intptr_t) >= sizeof(int64_t), "a fiber's deadline is kept in a pointer's place");

void store_set_deadline(int64_t deadline_ms)
{
    fiber_t *f = fiber_self();
    if (f)
        *fiber_local(f, FIBER_LOCAL_DEADLINE) = (void *)(intptr_t)deadline_ms;
    else
        call_deadline_ms = deadline_ms;
}

/* The deadline store_set_deadline() set for this fiber or thread. */
static int64_t call_deadline(void)
{
    fiber_t *f = fiber_self();
    return f ? (int64_t)(intptr_t)*fiber_local(f, FIBER_LOCAL_DEADLINE) : call_deadline_ms;
}
int64_t store_now_ms(void) { return clock_now_ms(); }

/* timeout_ms, cut to what is left before this thread's deadline (at least
 * 1 ms; 0 when the deadline has passed). */
static unsigned within_deadline(unsigned timeout_ms)
{
    int64_t deadline_ms = call_deadline();
    if (!deadline_ms)
        return timeout_ms;
    int64_t left = deadline_ms - clock_now_ms();
    return left <= 0 ? 0 : left < (int64_t)timeout_ms ? (unsigned)left : timeout_ms;
}

static const char *const status_names[STORE_STATUS_COUNT] = {
    "ok", "not_found", "conflict", "exists", "replay", "unavailable", "corrupt", "full", "unknown", "late", "damaged",
};

const char *store_status_name(store_status_t status)
{
    return (unsigned)status < STORE_STATUS_COUNT ? status_names[status] : "unknown";
}

/* A pause; on a fiber it yields to its event loop meanwhile. */
static void sleep_ms(unsigned ms) { (void)fiber_wait(-1, 0, clock_now_ms() + ms); }

static void free_thread_conns(void *p)
{
    thread_conns_t *t = p;
    for (unsigned i = 0; i < t->count; i++)
        conn_free(t->items[i].conn);
    free(t->items);
    free(t);
}

/* A fiber's connections, per store it has used (FIBER_LOCAL_STORE). A
 * store is known by its serial, not its address, which a later one may
 * reuse. A closed store's entry stays until its fiber is freed. */
typedef struct fiber_conns {
    uint64_t serial;
    thread_conns_t *conns;
    struct fiber_conns *next;
} fiber_conns_t;

static atomic_ullong store_serials;

static void free_fiber_conns(void *p)
{
    for (fiber_conns_t *e = p, *next; e; e = next) {
        next = e->next;
        free_thread_conns(e->conns);
        free(e);
    }
}

/* Sets the script and its SHA-1 (EVALSHA's name for it). */
bool store_script_init(store_script_t *script, const char *text)
{
    unsigned char digest[EVP_MAX_MD_SIZE];
    unsigned length = 0;
    script->text = text;
    if (!EVP_Digest(text, strlen(text), digest, &length, EVP_sha1(), NULL) || length != 20)
        return false;
    hex_encode(digest, length, script->sha);
    return true;
}

store_t *store_open(const store_config_t *cfg, char *err, size_t err_size)
{
    store_t *s = calloc(1, sizeof *s);
    if (!s) {
        snprintf(err, err_size, "out of memory");
        return NULL;
    }
    if (!url_parse(cfg->url, &s->url, err, err_size)
        || !credentials_take_password(cfg->password, cfg->password_file, s->url.user_only, s->url.password,
                                      sizeof s->url.password, err, err_size))
        goto fail;
    if (s->url.tls) {
        tls_config_t tls_cfg = { cfg->tls_ca_file, cfg->tls_cert_file, cfg->tls_key_file, cfg->tls_server_name,
                                 cfg->tls_insecure_no_verify };
        if (!(s->tls = tls_context_new(&tls_cfg, err, err_size)))
            goto fail;
    }
    s->connect_timeout_ms = cfg->connect_timeout_ms;
    s->command_timeout_ms = cfg->command_timeout_ms;
    /* EVALSHA names a script by its SHA-1, made on first use (game_write.c,
     * game_load.c): a crypto library without it fails here, at start. */
    store_script_t check;
    if (!store_script_init(&check, "return 0")) {
        snprintf(err, err_size, "cannot hash the store scripts");
        goto fail;
    }
    if (!(s->breaker = breaker_new(cfg->breaker, cfg->breaker_retry_ms))) {
        snprintf(err, err_size, "out of memory");
        goto fail;
    }
    s->serial = atomic_fetch_add(&store_serials, 1) + 1;
    fiber_local_destructor(FIBER_LOCAL_STORE, free_fiber_conns);
    if (pthread_key_create(&s->connection_key, free_thread_conns)) {
        snprintf(err, err_size, "cannot create thread key");
        goto fail;
    }
    pthread_mutex_init(&s->map_lock, NULL);
    pthread_mutex_init(&s->log_lock, NULL);
    return s;
fail:
    breaker_free(s->breaker);
    tls_context_free(s->tls);
    explicit_bzero(s->url.password, sizeof s->url.password);
    free(s);
    return NULL;
}

void store_stats(store_t *store, store_stats_t *out)
{
    out->errors = atomic_load(&store->errors);
    out->connects = atomic_load(&store->connects);
    out->redirects = atomic_load(&store->redirects);
    out->fast_failures = atomic_load(&store->fast_failures);
}

void store_close(store_t *store)
{
    if (!store)
        return;
    thread_conns_t *t = pthread_getspecific(store->connection_key);
    if (t) {
        free_thread_conns(t);
        pthread_setspecific(store->connection_key, NULL);
    }
    pthread_key_delete(store->connection_key);
    pthread_mutex_destroy(&store->map_lock);
    pthread_mutex_destroy(&store->log_lock);
    breaker_free(store->breaker);
    free(store->map);
    tls_context_free(store->tls);
    explicit_bzero(store->url.password, sizeof store->url.password);
    free(store);
}

bool store_is_cluster(const store_t *store) { return store->url.cluster; }

/* Whether line is to be logged at `now`: not logged within CONNECT_LOG_MS.
 * Records it when so. Call under log_lock. */
static bool log_due(store_t *s, const char *line, int64_t now)
{
    logged_line_t *entry = &s->logged[0];
    for (unsigned i = 0; i < LOGGED_LINES; i++) {
        logged_line_t *l = &s->logged[i];
        if (!strcmp(l->line, line)) {
            if (now - l->ms < CONNECT_LOG_MS)
                return false;
            entry = l;
            break;
        }
        if (l->ms < entry->ms)
            entry = l; /* the oldest so far (an unused entry: 0) */
    }
    snprintf(entry->line, sizeof entry->line, "%s", line);
    entry->ms = now;
    return true;
}

/* Logs "chessd: <what> <why>", unless that same line was logged less than
 * CONNECT_LOG_MS ago. */
static void log_problem(store_t *s, const char *what, const char *why)
{
    char line[sizeof s->logged[0].line];
    snprintf(line, sizeof line, "%s %s", what, why);
    int64_t now = clock_now_ms();
    pthread_mutex_lock(&s->log_lock);
    if (log_due(s, line, now))
        fprintf(stderr, "chessd: %s\n", line);
    pthread_mutex_unlock(&s->log_lock);
}

/* "host:port" of node, brackets around an IPv6 host. */
static void node_name(const cluster_node_t *node, char *out, size_t size)
{
    bool v6 = strchr(node->host, ':') != NULL;
    snprintf(out, size, "%s%.*s%s:%d", v6 ? "[" : "", (int)strnlen(node->host, sizeof node->host - 1), node->host,
             v6 ? "]" : "", node->port);
}

/* --- what the breaker is told --- */

/* Marks node down (breaker_down), logging it when it was up. */
static void node_down(store_t *s, const cluster_node_t *node, store_fault_t fault, const char *reason,
                      bool refused_quickly)
{
    if (!breaker_down(s->breaker, node, fault, reason, refused_quickly))
        return;
    char what[CLUSTER_HOST_SIZE + 160], name[CLUSTER_HOST_SIZE + 16];
    node_name(node, name, sizeof name);
    snprintf(what, sizeof what, "Redis %s is down (%s); game requests to it fail at once until it answers:", name,
             store_fault_name(fault));
    log_problem(s, what, reason);
}

/* Marks node up (it answered), saying so when it was down. */
static void node_up(store_t *s, const cluster_node_t *node)
{
    if (!breaker_up(s->breaker, node))
        return;
    char name[CLUSTER_HOST_SIZE + 16];
    node_name(node, name, sizeof name);
    fprintf(stderr, "chessd: Redis %s answers again\n", name);
}

/* Whether a command may be sent to node now: always on the probe's thread,
 * else as the breaker says (breaker_allows). A Redis that was away when a
 * background task's connection marked it down is so used as soon as it
 * listens again, not at the probe's next turn. */
static bool may_send(store_t *s, const cluster_node_t *node) { return probing || breaker_allows(s->breaker, node); }

/* Whether node answers a new connection's first round trip (PING, or AUTH)
 * within a short time (10 to 1000 ms). */
static bool node_answers_quickly(store_t *s, const cluster_node_t *node)
{
    /* A quarter of the shorter timeout (a connect, a TLS handshake and a
     * round trip must fit: an operator with a distant Redis raises them). */
    unsigned shorter = s->connect_timeout_ms < s->command_timeout_ms ? s->connect_timeout_ms : s->command_timeout_ms;
    unsigned ms = shorter / 4;
    ms = ms < 10 ? 10 : ms > 1000 ? 1000 : ms;
    conn_settings_t settings = { node->host, node->port, ms, ms, s->tls, s->url.user, s->url.password, s->url.db };
    char why[256];
    conn_t *c = conn_open(&settings, why, sizeof why, NULL); /* a round trip: PING, or AUTH */
    conn_free(c);
    return c != NULL;
}

/* After a command to node got no reply in time: unless node then answers
 * a PING on a new connection at once (confirm; only the one reply was
 * lost, or the one command was slow, and a read-back of a write can still
 * tell what happened), it is marked down. A connection that was closed or
 * reset marks nothing: the next connection tells (at once when refused, or
 * within the connect timeout), and marks it down then if it cannot be made. */
static void no_answer(store_t *s, const cluster_node_t *node, const conn_failure_t *failure, bool confirm)
{
    if (failure->closed || !breaker_is_on(s->breaker))
        return;
    if (confirm && !probing && breaker_is_up(s->breaker, node) && node_answers_quickly(s, node))
        return;
    char name[CLUSTER_HOST_SIZE + 16], reason[CLUSTER_HOST_SIZE + 160];
    node_name(node, name, sizeof name);
    snprintf(reason, sizeof reason, "%s: no answer within %u ms", name, s->command_timeout_ms);
    node_down(s, node, STORE_FAULT_TIMEOUT, reason, false);
}

void store_on_down(store_t *s, void (*fn)(void *ctx), void *ctx) { breaker_on_down(s->breaker, fn, ctx); }

void store_health(store_t *s, store_health_t *out) { breaker_health(s->breaker, out); }

conn_t *store_connect_node(store_t *s, const cluster_node_t *node, char *err, size_t err_size)
{
    if (!node)
        node = &s->url.seeds[0];
    unsigned connect_ms = within_deadline(s->connect_timeout_ms), command_ms = within_deadline(s->command_timeout_ms);
    if (!connect_ms || !command_ms) {
        if (err_size)
            snprintf(err, err_size, "the request's time is up");
        return NULL; /* nothing tried: says nothing of the node */
    }
    conn_settings_t settings = { node->host, node->port, connect_ms,      command_ms,
                                 s->tls,     s->url.user, s->url.password, s->url.db };
    char why[256];
    store_fault_t fault = STORE_FAULT_NONE;
    int64_t started = clock_now_ms();
    conn_t *c = conn_open(&settings, why, sizeof why, &fault);
    atomic_fetch_add(c ? &s->connects : &s->errors, 1);
    if (c) {
        node_up(s, node);
        return c;
    }
    bool quick = (clock_now_ms() - started) * 10 <= (int64_t)connect_ms;
    node_down(s, node, fault, why, fault == STORE_FAULT_UNREACHABLE && quick);
    if (err_size)
        snprintf(err, err_size, "%s", why);
    /* Why Redis cannot be reached (refused, a certificate that fails, AUTH)
     * goes to the log; the reason holds no password. */
    log_problem(s, "cannot connect to Redis", why);
    return NULL;
}

static bool same_node(const cluster_node_t *a, const cluster_node_t *b)
{
    return a->port == b->port && !strcmp(a->host, b->host);
}

/* This fiber's or thread's connections, made when make and there are none. */
static thread_conns_t *thread_conns(store_t *s, bool make)
{
    fiber_t *f = fiber_self();
    if (!f) {
        thread_conns_t *t = pthread_getspecific(s->connection_key);
        if (!t && make && (t = calloc(1, sizeof *t)) && pthread_setspecific(s->connection_key, t)) {
            free(t);
            t = NULL;
        }
        return t;
    }
    void **slot = fiber_local(f, FIBER_LOCAL_STORE);
    for (fiber_conns_t *e = *slot; e; e = e->next)
        if (e->serial == s->serial)
            return e->conns;
    fiber_conns_t *e = make ? calloc(1, sizeof *e) : NULL;
    thread_conns_t *t = e ? calloc(1, sizeof *t) : NULL;
    if (!t) {
        free(e);
        return NULL;
    }
    *e = (fiber_conns_t){ s->serial, t, *slot };
    *slot = e;
    return t;
}

/* Forgets this thread's connection to node after a failure; the next call reconnects. */
static void drop_connection(store_t *s, const cluster_node_t *node)
{
    thread_conns_t *t = thread_conns(s, false);
    for (unsigned i = 0; t && i < t->count; i++) {
        if (same_node(&t->items[i].node, node)) {
            conn_free(t->items[i].conn);
            t->items[i] = t->items[--t->count];
            return;
        }
    }
}

/* This thread's connection to node, made when there is none or the kept one
 * was closed while idle; *reused tells which. */
static conn_t *connection(store_t *s, const cluster_node_t *node, bool *reused)
{
    *reused = false;
    thread_conns_t *t = thread_conns(s, true);
    if (!t)
        return NULL;
    for (unsigned i = 0; i < t->count; i++) {
        if (same_node(&t->items[i].node, node)) {
            if (!conn_closed_while_idle(t->items[i].conn)) {
                *reused = true;
                return t->items[i].conn;
            }
            drop_connection(s, node);
            break;
        }
    }
    void *items = t->items;
    bool room = store_array_reserve(&items, &t->capacity, t->count, sizeof *t->items);
    t->items = items;
    if (!room)
        return NULL;
    conn_t *c = store_connect_node(s, node, NULL, 0);
    if (c)
        t->items[t->count++] = (node_conn_t){ *node, c };
    return c;
}

/* Reads the slot map from the first node that gives one: hint (a node that
 * just redirected), then the masters known and the seeds, each read starting
 * one further along them, so reads cut short by deadline_ms (no node is
 * tried past it) do not ask the same silent nodes first every time. At most
 * once per MAP_REFRESH_MIN_MS unless force. */
static void refresh_map(store_t *s, const cluster_node_t *hint, bool force, int64_t deadline_ms)
{
    int64_t now = clock_now_ms();
    pthread_mutex_lock(&s->map_lock);
    bool due = force || !s->map || now - s->map_read_ms >= MAP_REFRESH_MIN_MS;
    unsigned known = 0;
    cluster_node_t *candidates = NULL;
    if (due) {
        s->map_read_ms = now;
        unsigned masters = s->map ? s->map->node_count : 0;
        candidates = malloc((1 + masters + s->url.seed_count) * sizeof *candidates);
        if (candidates) {
            if (hint)
                candidates[known++] = *hint;
            unsigned others = masters + s->url.seed_count, turn = s->map_turn++;
            for (unsigned j = 0; j < others; j++) {
                unsigned i = (turn + j) % others;
                candidates[known++] = i < masters ? s->map->nodes[i] : s->url.seeds[i - masters];
            }
        }
    }
    pthread_mutex_unlock(&s->map_lock);
    cluster_map_t *map = known ? malloc(sizeof *map) : NULL;
    bool read = false;
    for (unsigned i = 0; map && i < known && !read && (i == 0 || clock_now_ms() < deadline_ms); i++) {
        if (!may_send(s, &candidates[i]))
            continue;
        bool reused;
        conn_t *c = connection(s, &candidates[i], &reused);
        if (!c)
            continue;
        const char *argv[] = { "CLUSTER", "SLOTS" };
        conn_failure_t failure;
        unsigned wait_ms = within_deadline(s->command_timeout_ms);
        conn_set_timeout(c, wait_ms);
        redisReply *r = conn_command(c, 2, argv, NULL, &failure);
        if (!r) {
            drop_connection(s, &candidates[i]);
            atomic_fetch_add(&s->errors, 1);
            if (wait_ms == s->command_timeout_ms)
                no_answer(s, &candidates[i], &failure, false);
            continue;
        }
        node_up(s, &candidates[i]);
        char err[256] = "";
        read = cluster_map_from_slots(r, candidates[i].host, map, err, sizeof err) && map->node_count > 0;
        freeReplyObject(r);
        if (!read) {
            /* A node that is no cluster (a redis+cluster:// URL naming a
             * single Redis) or serves no slot: said, or every request is a
             * 503 nobody can explain. */
            char why[CLUSTER_HOST_SIZE + 300];
            const char *host = candidates[i].host;
            bool v6 = strchr(host, ':') != NULL;
            snprintf(why, sizeof why, "%s%s%s:%d: %s", v6 ? "[" : "", host, v6 ? "]" : "", candidates[i].port,
                     err[0] ? err : "CLUSTER SLOTS names no master");
            log_problem(s, "cannot read the Redis Cluster's slot map from", why);
        }
    }
    free(candidates);
    if (!read) {
        free(map);
        return;
    }
    pthread_mutex_lock(&s->map_lock);
    cluster_map_t *old = s->map;
    s->map = map;
    pthread_mutex_unlock(&s->map_lock);
    free(old);
}

/* The node serving slot (any node for STORE_ANY_SLOT); false when the map
 * has none. */
static bool node_for_slot(store_t *s, int slot, cluster_node_t *out)
{
    if (!s->url.cluster) {
        *out = s->url.seeds[0];
        return true;
    }
    pthread_mutex_lock(&s->map_lock);
    bool found = false;
    if (s->map) {
        unsigned index = slot >= 0 ? s->map->slot_node[slot] : 0;
        if (slot < 0 && s->map->node_count == 0)
            index = CLUSTER_NO_NODE;
        if (index != CLUSTER_NO_NODE) {
            *out = s->map->nodes[index];
            found = true;
        }
    }
    pthread_mutex_unlock(&s->map_lock);
    return found;
}

bool store_cluster_map(store_t *s, cluster_map_t *out)
{
    refresh_map(s, NULL, true, clock_now_ms() + 2 * (int64_t)s->command_timeout_ms);
    pthread_mutex_lock(&s->map_lock);
    bool copied = s->map != NULL;
    if (copied)
        memcpy(out, s->map, sizeof *out);
    pthread_mutex_unlock(&s->map_lock);
    return copied;
}

enum { STORE_ANY_SLOT = -1 };

static bool error_starts(const redisReply *r, const char *prefix)
{
    return r->type == REDIS_REPLY_ERROR && !strncmp(r->str, prefix, strlen(prefix));
}

/* ASKING, for the one command that follows it on c. */
static bool send_asking(conn_t *c, unsigned timeout_ms)
{
    const char *argv[] = { "ASKING" };
    conn_set_timeout(c, timeout_ms);
    redisReply *r = conn_command(c, 1, argv, NULL, NULL);
    bool ok = r && r->type == REDIS_REPLY_STATUS;
    if (r)
        freeReplyObject(r);
    return ok;
}

/* Waits before the next try of a routed command, doubling *pause_ms up to
 * ROUTE_PAUSE_MAX_MS; false when that would pass give_up_ms (then no try is
 * left). */
static bool route_pause(unsigned *pause_ms, int64_t give_up_ms)
{
    if (clock_now_ms() + *pause_ms >= give_up_ms)
        return false;
    sleep_ms(*pause_ms);
    *pause_ms = *pause_ms * 2 < ROUTE_PAUSE_MAX_MS ? *pause_ms * 2 : ROUTE_PAUSE_MAX_MS;
    return true;
}

/* Sends a command about slot (STORE_ANY_SLOT: any node) and returns its
 * reply; NULL (the connection dropped) when no reply came. A connection kept
 * from earlier that turns out closed (Redis restarted, an idle timeout) is
 * remade once at once, so only a Redis that stays away costs a failure. A
 * timeout is not retried: it would double the wait. *sent (when not NULL)
 * is set true once an attempt failed after the whole command had left: Redis
 * may have run it, so a write's caller must not treat that failure, or the
 * resend's refusal, as "not written", and nothing is sent again after a
 * timeout.
 * On a cluster the command goes to the slot's master. MOVED: the map is read
 * again and the command sent where it points. ASK: ASKING and the command to
 * the node named, once, the map kept. TRYAGAIN and CLUSTERDOWN (a slot moving
 * or a failover) and a node that cannot be reached (before the command was
 * sent): a short wait, the map read again, another try. All within
 * ROUTE_ATTEMPTS tries and twice the command timeout; then NULL. Those
 * refusals say the command did nothing. */
static redisReply *command(store_t *s, int slot, int argc, const char **argv, const size_t *lengths, bool *sent)
{
    cluster_node_t target;
    bool redirected = false, asking = false, reopened = false, breaker_refused = false;
    unsigned pause_ms = ROUTE_PAUSE_FIRST_MS;
    int64_t give_up_ms = clock_now_ms() + 2 * (int64_t)s->command_timeout_ms;
    int64_t deadline_ms = call_deadline();
    if (deadline_ms && deadline_ms < give_up_ms)
        give_up_ms = deadline_ms;
    for (int attempt = 0; attempt < ROUTE_ATTEMPTS; attempt++) {
        if ((attempt > 0 || deadline_ms) && clock_now_ms() >= give_up_ms)
            return NULL; /* no new try starts past the budget, or the request's deadline */
        if (!redirected && !node_for_slot(s, slot, &target)) {
            refresh_map(s, NULL, false, give_up_ms);
            if (!node_for_slot(s, slot, &target)) {
                if (!route_pause(&pause_ms, give_up_ms))
                    return NULL;
                continue;
            }
        }
        redirected = false;
        if (!may_send(s, &target)) {
            /* Known down: nothing is sent. On a cluster the slot may have
             * moved to a node that answers (a failover): the map once more. */
            if (!s->url.cluster || breaker_refused) {
                atomic_fetch_add(&s->fast_failures, 1);
                return NULL;
            }
            breaker_refused = true;
            refresh_map(s, NULL, false, give_up_ms);
            continue;
        }
        bool reused;
        conn_t *c = connection(s, &target, &reused);
        if (!c || (asking && !send_asking(c, within_deadline(s->command_timeout_ms)))) {
            if (c)
                drop_connection(s, &target);
            atomic_fetch_add(&s->errors, 1);
            if (!s->url.cluster || !route_pause(&pause_ms, give_up_ms))
                return NULL;
            asking = false;
            refresh_map(s, NULL, false, give_up_ms);
            continue;
        }
        asking = false;
        unsigned wait_ms = within_deadline(s->command_timeout_ms);
        if (!wait_ms)
            return NULL; /* the request's time is up: not sent */
        conn_set_timeout(c, wait_ms);
        conn_failure_t failure;
        redisReply *r = conn_command(c, argc, argv, lengths, &failure);
        if (!r) {
            if (sent && failure.sent)
                *sent = true;
            drop_connection(s, &target);
            atomic_fetch_add(&s->errors, 1);
            if (reused && failure.closed && !reopened) {
                reopened = true; /* the kept connection was dead: once more on a new one */
                redirected = true;
                continue;
            }
            if (wait_ms == s->command_timeout_ms) /* a wait cut short by the deadline says nothing of Redis */
                no_answer(s, &target, &failure, true);
            if (!s->url.cluster || failure.sent || !route_pause(&pause_ms, give_up_ms))
                return NULL;
            refresh_map(s, NULL, false, give_up_ms);
            continue;
        }
        node_up(s, &target);
        if (r->type == REDIS_REPLY_ERROR && store_error_status(r) == STORE_EFULL)
            atomic_store(&s->full_since_ms, clock_now_ms() | 1); /* never 0 */
        if (!s->url.cluster || r->type != REDIS_REPLY_ERROR)
            return r;
        cluster_redirect_t redirect;
        if (cluster_parse_redirect(r->str, r->len, &redirect)) {
            freeReplyObject(r);
            atomic_fetch_add(&s->redirects, 1);
            if (!redirect.node.host[0])
                snprintf(redirect.node.host, sizeof redirect.node.host, "%s", target.host);
            target = redirect.node;
            redirected = true;
            asking = redirect.kind == CLUSTER_REDIRECT_ASK;
            if (!asking)
                refresh_map(s, &target, false, give_up_ms);
            continue;
        }
        if (error_starts(r, "TRYAGAIN") || error_starts(r, "CLUSTERDOWN")) {
            if (!route_pause(&pause_ms, give_up_ms))
                return r; /* the refusal itself: unavailable, nothing done */
            freeReplyObject(r);
            refresh_map(s, NULL, false, give_up_ms);
            continue;
        }
        return r;
    }
    return NULL;
}

redisReply *store_command(store_t *store, unsigned slot, int argc, const char **argv, const size_t *lengths,
                          bool *sent)
{
    return command(store, (int)slot, argc, argv, lengths, sent);
}

unsigned store_command_wait_ms(store_t *store) { return within_deadline(store->command_timeout_ms); }

bool store_is_full(store_t *store) { return atomic_load(&store->full_since_ms) != 0; }

void store_full_reset(store_t *store) { atomic_store(&store->full_since_ms, 0); }

void store_full_clear(store_t *store, int64_t checked_ms)
{
    long long since = atomic_load(&store->full_since_ms);
    /* Only a refusal older than the look that found room is cleared. */
    while (since && since < checked_ms && !atomic_compare_exchange_weak(&store->full_since_ms, &since, 0)) {
    }
}

store_status_t store_ping(store_t *store)
{
    if (!store->url.cluster) {
        const char *argv[] = { "PING" };
        redisReply *r = command(store, STORE_ANY_SLOT, 1, argv, NULL, NULL);
        if (!r)
            return STORE_EUNAVAILABLE;
        bool ok = r->type == REDIS_REPLY_STATUS;
        freeReplyObject(r);
        return ok ? STORE_OK : STORE_EUNAVAILABLE;
    }
    /* A cluster is up when the node asked says every slot is served. */
    const char *argv[] = { "CLUSTER", "INFO" };
    redisReply *r = command(store, STORE_ANY_SLOT, 2, argv, NULL, NULL);
    if (!r)
        return STORE_EUNAVAILABLE;
    bool ok = r->type == REDIS_REPLY_STRING && strstr(r->str, "cluster_state:ok");
    freeReplyObject(r);
    return ok ? STORE_OK : STORE_EUNAVAILABLE;
}
/* PING to node past the breaker, on this thread's connection. */
static bool ping_node(store_t *s, const cluster_node_t *node)
{
    bool reused;
    conn_t *c = connection(s, node, &reused);
    if (!c)
        return false; /* store_connect_node marked it down */
    const char *argv[] = { "PING" };
    conn_failure_t failure;
    conn_set_timeout(c, s->command_timeout_ms);
    redisReply *r = conn_command(c, 1, argv, NULL, &failure);
    if (!r && reused && failure.closed) { /* a kept connection that died: once more on a new one */
        drop_connection(s, node);
        if (!(c = connection(s, node, &reused)))
            return false;
        r = conn_command(c, 1, argv, NULL, &failure);
    }
    if (!r) {
        drop_connection(s, node);
        atomic_fetch_add(&s->errors, 1);
        no_answer(s, node, &failure, false);
        return false;
    }
    bool pong = r->type == REDIS_REPLY_STATUS;
    freeReplyObject(r);
    if (pong)
        node_up(s, node);
    return pong;
}

/* On a cluster, forgets the nodes held down that are neither a master of
 * the slot map (read again first) nor a seed (breaker_forget_unknown). Runs
 * on the probe's thread. */
static void forget_departed(store_t *s)
{
    if (!s->url.cluster || !breaker_any_down(s->breaker))
        return;
    refresh_map(s, NULL, true, clock_now_ms() + (int64_t)s->command_timeout_ms);
    cluster_map_t *map = malloc(sizeof *map); /* large: not on the stack */
    pthread_mutex_lock(&s->map_lock);
    bool have = map && s->map != NULL;
    if (have)
        memcpy(map, s->map, sizeof *map);
    pthread_mutex_unlock(&s->map_lock);
    if (have)
        breaker_forget_unknown(s->breaker, map->nodes, map->node_count, s->url.seeds, s->url.seed_count);
    free(map);
}

store_status_t store_probe(store_t *s)
{
    probing = true;
    forget_departed(s);
    store_status_t status = store_ping(s);
    /* A Cluster that answers but does not serve every slot (or a node that
     * is no Cluster) is down for games although each node is up. */
    bool cluster_fault = s->url.cluster && status != STORE_OK && !breaker_any_down(s->breaker);
    static const char cluster_reason[] =
        "the Redis Cluster does not serve every slot (CLUSTER INFO: cluster_state is not ok)";
    breaker_set_probe_fault(s->breaker, cluster_fault ? STORE_FAULT_CLUSTER : STORE_FAULT_NONE,
                            cluster_fault ? cluster_reason : "");
    cluster_node_t down[BREAKER_NODES];
    unsigned down_count = breaker_down_nodes(s->breaker, down, BREAKER_NODES);
    for (unsigned i = 0; i < down_count; i++)
        if (!ping_node(s, &down[i]))
            status = STORE_EUNAVAILABLE;
    probing = false;
    return status;
}

/* Runs a script by EVALSHA, loading it with EVAL the first time a Redis
 * sees it (or after a restart). argv[0] and argv[1] are set here; *sent as
 * for command(). */
redisReply *store_script_run(store_t *s, unsigned slot, const store_script_t *script, int argc, const char **argv,
                             size_t *lengths, bool *sent)
{
    argv[0] = "EVALSHA";
    argv[1] = script->sha;
    lengths[0] = 7;
    lengths[1] = 40;
    redisReply *r = command(s, (int)slot, argc, argv, lengths, sent);
    if (r && r->type == REDIS_REPLY_ERROR && !strncmp(r->str, "NOSCRIPT", 8)) {
        freeReplyObject(r);
        argv[0] = "EVAL";
        argv[1] = script->text;
        lengths[0] = 4;
        lengths[1] = strlen(script->text);
        r = command(s, (int)slot, argc, argv, lengths, sent);
    }
    return r;
}

redisReply *store_script_texts(store_t *store, unsigned slot, const char *text, int key_count,
                               const char *const *keys, int value_count, const char *const *values)
{
    enum { ARGS_MAX = 32 };
    store_script_t script;
    if (key_count < 0 || value_count < 0 || 3 + key_count + value_count > ARGS_MAX
        || !store_script_init(&script, text))
        return NULL;
    char count[16];
    snprintf(count, sizeof count, "%d", key_count);
    const char *argv[ARGS_MAX] = { NULL, NULL, count };
    size_t lengths[ARGS_MAX] = { 0, 0, strlen(count) };
    int argc = 3;
    for (int i = 0; i < key_count; i++, argc++) {
        argv[argc] = keys[i];
        lengths[argc] = strlen(keys[i]);
    }
    for (int i = 0; i < value_count; i++, argc++) {
        argv[argc] = values[i];
        lengths[argc] = strlen(values[i]);
    }
    return store_script_run(store, slot, &script, argc, argv, lengths, NULL);
}

store_status_t store_get_string(store_t *store, const char *key, char **out, size_t *length, bool secret)
{
    const char *argv[] = { "GET", key };
    redisReply *r = command(store, (int)cluster_key_slot(key, strlen(key)), 2, argv, NULL, NULL);
    if (!r)
        return STORE_EUNAVAILABLE;
    store_status_t status = r->type == REDIS_REPLY_ERROR ? store_error_status(r) : STORE_ECORRUPT;
    if (r->type == REDIS_REPLY_NIL) {
        status = STORE_ENOT_FOUND;
    } else if (r->type == REDIS_REPLY_STRING) {
        status = store_reply_string(r, out, length) ? STORE_OK : STORE_EUNAVAILABLE;
        if (secret)
            explicit_bzero(r->str, r->len);
    }
    freeReplyObject(r);
    return status;
}

/* GET of the token secret's key: STORE_OK with a copy, STORE_ENOT_FOUND, or a failure. */
static store_status_t token_secret_get(store_t *store, char **secret, size_t *length)
{
    return store_get_string(store, STORE_TOKEN_SECRET_KEY, secret, length, true);
}

store_status_t store_token_secret(store_t *store, const char *candidate, char **secret, size_t *length,
                                  bool *created)
{
    *secret = NULL;
    *length = 0;
    *created = false;
    /* A read first: once the key exists (always, after the first start) no
     * write is sent, so a Redis that refuses writes (full) still serves it. */
    store_status_t status = token_secret_get(store, secret, length);
    if (status != STORE_ENOT_FOUND)
        return status;
    const char *argv[] = { "SET", STORE_TOKEN_SECRET_KEY, candidate, "NX" };
    redisReply *r = command(store, (int)cluster_key_slot(STORE_TOKEN_SECRET_KEY, sizeof STORE_TOKEN_SECRET_KEY - 1), 4,
                            argv, NULL, NULL);
    if (!r)
        return STORE_EUNAVAILABLE; /* maybe stored: the next call reads it */
    status = r->type == REDIS_REPLY_ERROR ? store_error_status(r) : STORE_OK;
    *created = r->type == REDIS_REPLY_STATUS;
    freeReplyObject(r);
    if (status != STORE_OK)
        return status;
    /* Read back even when this call stored it: Redis is the one truth. A key
     * gone again already (deleted, evicted) is for the next call. */
    status = token_secret_get(store, secret, length);
    return status == STORE_ENOT_FOUND ? STORE_EUNAVAILABLE : status;
}
