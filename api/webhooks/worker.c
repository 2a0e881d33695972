/* See worker.h. One thread at a time claims due outboxes, as many as
 * threads wait idle, into a queue the others take from (thread_main).
 * Each delivery follows store/webhooks.h's step 3: head, send, done,
 * settle, in that order, so a replica that dies anywhere leaves the event
 * to be sent again, with the same webhook-id. A claim's thread goes on
 * with the outbox's next events while its lease has room (work). */
#include "worker.h"

#include <inttypes.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "../../rules/base/clock.h"
#include "../../store/webhooks.h"
#include "../game/webhook_kinds.h"
#include "sign.h"

enum {
    THREADS_DEFAULT = 8,
    THREADS_MAX = 64,
    LEASE_MARGIN_MS = 2000, /* a claim outlives an attempt's deadline by this */
    LOG_TTL_SECONDS = 7 * 86400,
    SWEEP_PAGE = 100,
    SUB_CACHE_SLOTS = 256, /* subscriptions kept here (a slot each, by hash) */
    SUB_CACHE_MS = 5000,
    OWNER_OF_SLOTS = 4096, /* subscriptions whose key is remembered (a slot each, by hash) */
    OWNERS_MAX = THREADS_MAX,    /* owners with deliveries under way: at most one a thread */
    OWNER_BUSY_RETRY_MS = 250,   /* when a key's share stays busy, its next outbox waits this long */
    OWNER_WAIT_MS = 50,          /* how long a thread holding a claim waits for a slot of its key's share */
    EVENTS_PER_CLAIM = STORE_WEBHOOK_LOG_LINES_MAX, /* a claim's events delivered in turn, at most */
    CLAIM_WINDOW_MS = LEASE_MARGIN_MS / 4, /* a next event starts this soon after the claim, or waits for another */
};

/* A claimed entry and when: Redis's clock then, and this replica's just before. */
typedef struct {
    store_webhook_due_t due;
    int64_t redis_ms, local_ms;
} claimed_t;

/* A subscription as read (fetched_ms 0: none). */
typedef struct {
    store_webhook_sub_t sub;
    int64_t fetched_ms;
} sub_copy_t;

struct webhook_worker {
    webhook_worker_config_t config;
    pthread_t threads[THREADS_MAX];
    unsigned started;
    pthread_mutex_t lock;
    pthread_cond_t wake;
    bool stopping, polling; /* under lock: one thread polls at a time */
    unsigned idle;          /* under lock: threads waiting for work */
    claimed_t queue[THREADS_MAX]; /* under lock: claimed, not yet taken */
    unsigned queued;
    int64_t next_sweep_ms;  /* under lock */
    uint64_t sweep_cursor;  /* under lock: where the sweep's next page starts (SSCAN) */
    _Atomic uint64_t attempts[WEBHOOK_OUTCOME_COUNT], dropped, swept;
    pthread_mutex_t subs_lock;
    sub_copy_t subs[SUB_CACHE_SLOTS]; /* under subs_lock */
    struct {
        char sub[STORE_WEBHOOK_ID_SIZE], owner[STORE_WEBHOOK_OWNER_SIZE];
    } owner_of[OWNER_OF_SLOTS]; /* under subs_lock: a subscription's key, which never changes */
    pthread_mutex_t owners_lock;
    struct {
        char name[STORE_WEBHOOK_OWNER_SIZE];
        unsigned busy; /* its deliveries under way (0: a free slot) */
        pthread_cond_t freed; /* with owners_lock: one of them ended (a waiter for this key takes its place) */
    } owners[OWNERS_MAX]; /* under owners_lock */
};

/* An outbox entry as the game's write made it (service.c): "<event>
 * <kinds>\n<version> <ended> <at_ms> <deadline> change\n<json>". */
typedef struct {
    char event[32];
    unsigned kinds;
    uint64_t version;
    bool ended;
    int64_t at_ms;
    const char *json;
    size_t json_length;
} entry_t;

static bool entry_read(const char *text, size_t length, entry_t *e)
{
    const char *end = text + length, *line = memchr(text, '\n', length);
    if (!line || sscanf(text, "%31s %u", e->event, &e->kinds) != 2)
        return false;
    const char *body = memchr(line + 1, '\n', (size_t)(end - line - 1));
    int ended;
    long long at;
    if (!body || sscanf(line + 1, "%" SCNu64 " %d %lld", &e->version, &ended, &at) != 3)
        return false;
    e->ended = ended == 1;
    e->at_ms = at;
    e->json = body + 1;
    e->json_length = (size_t)(end - body - 1);
    return true;
}

/* Takes one of the threads owner's deliveries may hold at once (a share
 * of them: one key whose destinations hang cannot hold every thread),
 * waiting up to wait_ms for one to be given back; false when its share
 * stayed in use. */
static bool owner_take(webhook_worker_t *w, const char *owner, unsigned wait_ms)
{
    unsigned share = (w->started + 1) / 2;
    bool taken = false;
    struct timespec until;
    clock_gettime(CLOCK_REALTIME, &until);
    until.tv_nsec += (long)wait_ms * 1000000L;
    until.tv_sec += until.tv_nsec / 1000000000L;
    until.tv_nsec %= 1000000000L;
    pthread_mutex_lock(&w->owners_lock);
    for (;;) {
        unsigned free_slot = OWNERS_MAX, at = OWNERS_MAX;
        bool found = false;
        for (unsigned i = 0; i < OWNERS_MAX && !found; i++) {
            if (w->owners[i].busy && !strcmp(w->owners[i].name, owner)) {
                found = true;
                at = i;
                if ((taken = w->owners[i].busy < share))
                    w->owners[i].busy++;
            } else if (!w->owners[i].busy && free_slot == OWNERS_MAX) {
                free_slot = i;
            }
        }
        if (!found && free_slot < OWNERS_MAX) { /* there are fewer busy owners than threads: a slot is free */
            snprintf(w->owners[free_slot].name, sizeof w->owners[free_slot].name, "%s", owner);
            w->owners[free_slot].busy = 1;
            taken = true;
        }
        if (taken || !wait_ms || at == OWNERS_MAX
            || pthread_cond_timedwait(&w->owners[at].freed, &w->owners_lock, &until))
            break;
    }
    pthread_mutex_unlock(&w->owners_lock);
    return taken;
}

static void owner_give(webhook_worker_t *w, const char *owner)
{
    pthread_mutex_lock(&w->owners_lock);
    for (unsigned i = 0; i < OWNERS_MAX; i++)
        if (w->owners[i].busy && !strcmp(w->owners[i].name, owner)) {
            w->owners[i].busy--;
            pthread_cond_signal(&w->owners[i].freed); /* its waiters all wait for this key */
            break;
        }
    pthread_mutex_unlock(&w->owners_lock);
}

/* A subscription as the store has it, from this replica's copy when it is
 * younger than SUB_CACHE_MS (a deleted one is so sent to for that long at
 * most). A copy made afresh pushes a game's or bulk's expiry on: it is in use. */
static unsigned sub_hash(const char *id)
{
    unsigned h = 5381;
    for (const char *p = id; *p; p++)
        h = h * 33 + (unsigned char)*p;
    return h;
}

/* Whether the key of subscription id is remembered, into owner. */
static bool owner_known(webhook_worker_t *w, const char *id, char owner[STORE_WEBHOOK_OWNER_SIZE])
{
    unsigned slot = sub_hash(id) % OWNER_OF_SLOTS;
    pthread_mutex_lock(&w->subs_lock);
    bool known = !strcmp(w->owner_of[slot].sub, id);
    if (known)
        memcpy(owner, w->owner_of[slot].owner, STORE_WEBHOOK_OWNER_SIZE);
    pthread_mutex_unlock(&w->subs_lock);
    return known;
}

static store_status_t sub_get(webhook_worker_t *w, const char *id, store_webhook_sub_t *out)
{
    unsigned h = sub_hash(id);
    sub_copy_t *copy = &w->subs[h % SUB_CACHE_SLOTS];
    int64_t now = clock_now_ms();
    pthread_mutex_lock(&w->subs_lock);
    bool fresh = copy->fetched_ms && now - copy->fetched_ms < SUB_CACHE_MS && !strcmp(copy->sub.id, id);
    if (fresh)
        *out = copy->sub;
    pthread_mutex_unlock(&w->subs_lock);
    if (fresh)
        return STORE_OK;
    store_status_t status = store_webhook_sub_get(w->config.store, id, out);
    if (status != STORE_OK)
        return status;
    (void)store_webhook_sub_touch(w->config.store, id, STORE_WEBHOOK_GAME_SUB_TTL);
    pthread_mutex_lock(&w->subs_lock);
    copy->sub = *out;
    copy->fetched_ms = now;
    memcpy(w->owner_of[h % OWNER_OF_SLOTS].sub, out->id, sizeof out->id);
    memcpy(w->owner_of[h % OWNER_OF_SLOTS].owner, out->owner, sizeof out->owner);
    pthread_mutex_unlock(&w->subs_lock);
    return STORE_OK;
}

/* The Standard Webhooks payload: the type, the time of the event and the
 * data, which holds the subscription (a receiver of several tells their
 * secrets apart by it), the game, its version and the event as streams
 * send it. malloc'd; NULL when out of memory or over the bound. */
static char *payload_make(const char *sub, const char *game, const entry_t *e, size_t *length)
{
    time_t seconds = (time_t)(e->at_ms / 1000);
    struct tm tm;
    gmtime_r(&seconds, &tm);
    char when[40], kinds[80] = "";
    strftime(when, sizeof when, "%Y-%m-%dT%H:%M:%S", &tm);
    for (unsigned i = 0, n = 0; i < WEBHOOK_KIND_COUNT; i++)
        if (e->kinds & 1u << i)
            n += (unsigned)snprintf(kinds + n, sizeof kinds - n, "%s\"%s\"", n ? "," : "", webhook_kind_name(i));
    char head[400];
    int n = snprintf(head, sizeof head,
                     "{\"type\":\"game.%s\",\"timestamp\":\"%s.%03dZ\",\"data\":{\"subscription\":\"%s\",\"game\":\"%s\","
                     "\"version\":%" PRIu64 ",\"ended\":%s,\"kinds\":[%s],\"event\":",
                     e->event, when, (int)(e->at_ms % 1000), sub, game, e->version, e->ended ? "true" : "false", kinds);
    if (n < 0 || (size_t)n >= sizeof head || (size_t)n + e->json_length + 3 > WEBHOOK_BODY_MAX)
        return NULL;
    char *out = malloc((size_t)n + e->json_length + 3);
    if (!out)
        return NULL;
    memcpy(out, head, (size_t)n);
    memcpy(out + n, e->json, e->json_length);
    memcpy(out + n + e->json_length, "}}", 3);
    *length = (size_t)n + e->json_length + 2;
    return out;
}

enum { LOG_LINE_SIZE = 1024 };

/* The subscription's log line of an attempt (a JSON object), into line. */
static void log_attempt(char line[LOG_LINE_SIZE], const store_webhook_due_t *due, const char *message_id,
                        const entry_t *e, unsigned attempt, int64_t now_ms, const webhook_send_result_t *sent,
                        int64_t next_ms, bool dropped)
{
    char detail[2 * sizeof sent->detail] = "", next[32] = "null";
    /* The detail is the sender's own sentence: quotes and backslashes escaped. */
    for (size_t i = 0, j = 0; sent->detail[i] && j + 2 < sizeof detail; i++) {
        char c = sent->detail[i];
        if (c == '"' || c == '\\')
            detail[j++] = '\\';
        detail[j++] = (unsigned char)c < 0x20 ? ' ' : c;
        detail[j] = '\0';
    }
    if (next_ms)
        snprintf(next, sizeof next, "%lld", (long long)next_ms);
    snprintf(line, LOG_LINE_SIZE,
             "{\"at\":%lld,\"webhook_id\":\"%s\",\"game\":\"%s\",\"version\":%" PRIu64 ",\"type\":\"game.%s\","
             "\"attempt\":%u,\"outcome\":\"%s\",\"status\":%d,\"elapsed_ms\":%u,\"next_attempt_at\":%s,"
             "\"dropped\":%s,\"detail\":\"%s\"}",
             (long long)now_ms, message_id, due->game, e->version, e->event, attempt,
             webhook_outcome_code(sent->outcome), sent->status, sent->elapsed_ms, next, dropped ? "true" : "false",
             detail);
}

/* The wait after the attempts-th failure: retry_ms doubling, capped at a day. */
static int64_t backoff_ms(const webhook_worker_config_t *c, unsigned attempts)
{
    int64_t wait = c->retry_ms ? c->retry_ms : 5000;
    for (unsigned i = 1; i < attempts && wait < 86400000; i++)
        wait *= 2;
    return wait < 86400000 ? wait : 86400000;
}

/* Removes the first event (delivered or dropped), the outbox's next one
 * read into head in the same step (*popped); says when the outbox is next
 * due: now when more wait, else never (0). */
static int64_t pop(webhook_worker_t *w, const store_webhook_due_t *due, store_webhook_head_t *head, int64_t now_ms,
                   bool *popped)
{
    unsigned left = 0;
    store_webhook_head_t next;
    store_status_t status = store_webhook_done(w->config.store, due->game, due->sub, head->entry, head->length, NULL,
                                               &left, &next);
    free(head->entry);
    *head = next;
    if (status != STORE_OK) { /* Redis away: the claim's lease brings it back, and the event goes again. */
        free(head->entry);
        *head = (store_webhook_head_t){ 0 };
        return now_ms + LEASE_MARGIN_MS;
    }
    *popped = true;
    return left ? now_ms : 0;
}

/* One delivery of the claimed outbox's first event (head, not empty), to
 * the subscription as sub_get found it (found, found_sub), its key's share
 * taken by the caller;
 * when it is next due, and the log's line of what happened in line ("":
 * nothing to log). Once the event is removed (*popped), head holds the
 * next one; else head is as it was. */
static int64_t deliver(webhook_worker_t *w, const store_webhook_due_t *due, int64_t now_ms,
                       store_status_t found, const store_webhook_sub_t *found_sub, store_webhook_head_t *head,
                       webhook_conn_t *conn, char line[LOG_LINE_SIZE], bool *popped)
{
    line[0] = '\0';
    *popped = false;
    const webhook_worker_config_t *c = &w->config;
    const store_webhook_sub_t *sub = found_sub; /* read only when found is STORE_OK */
    const char *text = head->entry;
    size_t length = head->length;
    store_webhook_retry_t retry = head->retry;
    int64_t next = 0;
    entry_t e;
    int64_t give_up = c->give_up_ms ? c->give_up_ms : 86400000;
    if (retry.next_ms > now_ms) {
        next = retry.next_ms; /* marked by a newer event: not yet time to try again */
    } else if (found == STORE_ENOT_FOUND || !entry_read(text, length, &e) || now_ms - e.at_ms > give_up) {
        atomic_fetch_add(&w->dropped, 1); /* its subscription gone, unreadable, or a day old */
        if (found == STORE_OK && entry_read(text, length, &e)) {
            webhook_send_result_t none = { .outcome = WEBHOOK_TIMEOUT };
            snprintf(none.detail, sizeof none.detail, "dropped: the event is older than --webhook-give-up");
            log_attempt(line, due, "", &e, retry.attempts, now_ms, &none, 0, true);
        }
        next = pop(w, due, head, now_ms, popped);
    } else {
        char id[WEBHOOK_MESSAGE_ID_SIZE], seed[160], signature[WEBHOOK_SIGNATURE_SIZE];
        snprintf(seed, sizeof seed, "%s:%s:%" PRIu64 ":%s", due->sub, due->game, e.version, e.event);
        size_t body_length = 0;
        char *body = payload_make(due->sub, due->game, &e, &body_length);
        int64_t timestamp = now_ms / 1000; /* Redis's clock: Unix time, the same on every replica */
        const char *secrets[] = { sub->secret };
        webhook_send_result_t sent;
        memset(&sent, 0, sizeof sent);
        if (!body || !webhook_message_id(seed, id)
            || !webhook_sign(secrets, 1, id, timestamp, body, body_length, signature)) {
            sent.outcome = WEBHOOK_INVALID_REQUEST;
            snprintf(sent.detail, sizeof sent.detail, "the payload could not be made or signed");
        } else {
            webhook_send_request_t req = { .url = sub->url, .body = body, .body_length = body_length, .id = id,
                                           .timestamp = timestamp, .signature = signature, .allow = c->allow,
                                           .deadline_ms = c->timeout_ms, .redirects = c->redirects,
                                           .ca_file = c->ca_file, .conn = conn };
            webhook_send(&req, &sent);
        }
        free(body);
        atomic_fetch_add(&w->attempts[sent.outcome < WEBHOOK_OUTCOME_COUNT ? sent.outcome : 0], 1);
        unsigned attempt = retry.attempts + 1;
        if (sent.outcome == WEBHOOK_DELIVERED) {
            log_attempt(line, due, id, &e, attempt, now_ms, &sent, 0, false);
            next = pop(w, due, head, now_ms, popped);
        } else {
            store_webhook_retry_t again = { attempt, retry.first_failed_ms ? retry.first_failed_ms : now_ms,
                                            now_ms + backoff_ms(c, attempt) };
            if (again.next_ms - e.at_ms > give_up) { /* the next try would come too late: dropped now */
                atomic_fetch_add(&w->dropped, 1);
                log_attempt(line, due, id, &e, attempt, now_ms, &sent, 0, true);
                next = pop(w, due, head, now_ms, popped);
            } else {
                log_attempt(line, due, id, &e, attempt, now_ms, &sent, again.next_ms, false);
                unsigned left = 0;
                next = store_webhook_done(c->store, due->game, due->sub, text, length, &again, &left, NULL) == STORE_OK
                           ? again.next_ms
                           : now_ms + LEASE_MARGIN_MS;
            }
        }
    }
    return next;
}

/* One page of the sweep (SWEEP_PAGE games), when it is time and this
 * replica holds it; the next page continues where this one stopped, so
 * the sweep's load on Redis stays flat however many games have webhooks. */
static void sweep_if_due(webhook_worker_t *w)
{
    int64_t now = clock_now_ms();
    unsigned every = w->config.sweep_ms ? w->config.sweep_ms : 5000;
    pthread_mutex_lock(&w->lock);
    bool due = now >= w->next_sweep_ms;
    if (due)
        w->next_sweep_ms = now + every;
    uint64_t cursor = w->sweep_cursor;
    pthread_mutex_unlock(&w->lock);
    bool held = false;
    if (!due || store_webhook_sweep_lock(w->config.store, every, &held) != STORE_OK || !held)
        return;
    unsigned marked = 0;
    if (store_webhook_sweep(w->config.store, cursor, SWEEP_PAGE, &cursor, &marked) != STORE_OK)
        return;
    atomic_fetch_add(&w->swept, marked);
    pthread_mutex_lock(&w->lock);
    w->sweep_cursor = cursor; /* 0: the pass is over, the next begins */
    pthread_mutex_unlock(&w->lock);
}

/* Sleeps up to ms on the wake condition (lock held). */
static void nap(webhook_worker_t *w, unsigned ms)
{
    struct timespec until;
    clock_gettime(CLOCK_REALTIME, &until);
    until.tv_nsec += (long)(ms % 1000) * 1000000L;
    until.tv_sec += ms / 1000 + until.tv_nsec / 1000000000L;
    until.tv_nsec %= 1000000000L;
    pthread_cond_timedwait(&w->wake, &w->lock, &until);
}

/* Delivers a claimed entry's events in turn and settles it (no lock
 * held), a slot of its key's share of the threads held throughout. When
 * that share stays busy OWNER_WAIT_MS, nothing is read and the entry waits
 * OWNER_BUSY_RETRY_MS. A next event starts only within CLAIM_WINDOW_MS of
 * the claim, so its attempt and the settle end well inside the lease and no
 * other replica claims the outbox meanwhile; at most EVENTS_PER_CLAIM, so
 * outboxes take turns. */
static void work(webhook_worker_t *w, const claimed_t *claimed, webhook_conn_t *conn)
{
    const webhook_worker_config_t *c = &w->config;
    const store_webhook_due_t *due = &claimed->due;
    char lines[EVENTS_PER_CLAIM][LOG_LINE_SIZE];
    const char *logged[EVENTS_PER_CLAIM];
    unsigned count = 0;
    int64_t next = 0;
    store_webhook_head_t head = { 0 };
    store_webhook_sub_t sub;
    char owner[STORE_WEBHOOK_OWNER_SIZE];
    /* A key remembered is waited for before any read of Redis; a key read afresh, after. */
    bool known = owner_known(w, due->sub, owner), owned = known && owner_take(w, owner, OWNER_WAIT_MS);
    store_status_t found = known && !owned ? STORE_OK : sub_get(w, due->sub, &sub);
    if (owned && (found != STORE_OK || strcmp(sub.owner, owner))) { /* gone, or (never so far) another key's */
        owner_give(w, owner);
        owned = known = false;
    }
    if (found == STORE_OK && !known)
        owned = owner_take(w, sub.owner, OWNER_WAIT_MS);
    if (found == STORE_EUNAVAILABLE || found == STORE_ECORRUPT)
        next = claimed->redis_ms + LEASE_MARGIN_MS;
    else if (found == STORE_OK && !owned)
        next = claimed->redis_ms + OWNER_BUSY_RETRY_MS; /* its key's share of the threads stayed busy: later */
    else if (store_webhook_head(c->store, due->game, due->sub, &head.entry, &head.length, &head.held, &head.retry)
             != STORE_OK)
        next = claimed->redis_ms + LEASE_MARGIN_MS;
    while (head.entry) {
        int64_t elapsed = clock_now_ms() - claimed->local_ms;
        bool popped = false;
        next = deliver(w, due, claimed->redis_ms + elapsed, found, &sub, &head, conn, lines[count], &popped);
        logged[count] = lines[count];
        count++;
        elapsed = clock_now_ms() - claimed->local_ms;
        if (!popped || count == EVENTS_PER_CLAIM || elapsed >= CLAIM_WINDOW_MS)
            break;
    }
    free(head.entry);
    if (owned)
        owner_give(w, sub.owner);
    bool settled = false, marked = false;
    if (store_webhook_settle_log(c->store, due->game, due->sub, due->claim_ms, next, logged, count, LOG_TTL_SECONDS,
                                 &settled)
            == STORE_OK
        && settled && !next)
        (void)store_webhook_recheck(c->store, due->game, due->sub, &marked);
}

/* Each thread takes a claimed entry from the shared queue when there is
 * one. Else one thread at a time claims as many entries as threads wait
 * idle (and one for itself), so a claim's lease is not spent waiting here.
 * An idle replica so asks Redis once a poll_ms; a busy one claims in
 * batches. */
static void *thread_main(void *arg)
{
    webhook_worker_t *w = arg;
    const webhook_worker_config_t *c = &w->config;
    unsigned lease = c->timeout_ms + LEASE_MARGIN_MS, poll = c->poll_ms ? c->poll_ms : 50;
    webhook_conn_t conn; /* this thread's kept connection (send.h) */
    webhook_conn_init(&conn);
    pthread_mutex_lock(&w->lock);
    while (!w->stopping) {
        if (w->queued) {
            claimed_t claimed = w->queue[--w->queued];
            pthread_mutex_unlock(&w->lock);
            work(w, &claimed, &conn);
            pthread_mutex_lock(&w->lock);
            continue;
        }
        webhook_conn_expire(&conn); /* before any wait: no connection is held open unused */
        if (w->polling) {
            w->idle++;
            if (conn.fd >= 0)
                nap(w, WEBHOOK_CONN_IDLE_MS); /* woken or not, the kept connection expires on time */
            else
                pthread_cond_wait(&w->wake, &w->lock);
            w->idle--;
            continue;
        }
        w->polling = true;
        unsigned want = w->idle + 1;
        pthread_mutex_unlock(&w->lock);
        sweep_if_due(w);
        store_webhook_due_t claimed[THREADS_MAX];
        unsigned count = 0;
        int64_t now = 0, local = clock_now_ms(); /* before the claim: an elapsed time is never under-counted */
        if (store_webhook_claim(c->store, lease, want < THREADS_MAX ? want : THREADS_MAX, claimed, &count, &now)
            != STORE_OK)
            count = 0;
        pthread_mutex_lock(&w->lock);
        w->polling = false;
        for (unsigned i = 0; i < count; i++)
            w->queue[w->queued++] = (claimed_t){ claimed[i], now, local };
        if (count)
            pthread_cond_broadcast(&w->wake);
        else
            nap(w, poll); /* nothing due: this thread naps, still the next to poll */
    }
    pthread_mutex_unlock(&w->lock);
    webhook_conn_close(&conn);
    return NULL;
}

webhook_worker_t *webhook_worker_start(const webhook_worker_config_t *config)
{
    webhook_worker_t *w = calloc(1, sizeof *w);
    if (!w)
        return NULL;
    w->config = *config;
    unsigned threads = config->threads ? config->threads : THREADS_DEFAULT;
    if (threads > THREADS_MAX)
        threads = THREADS_MAX;
    pthread_mutex_init(&w->lock, NULL);
    pthread_mutex_init(&w->subs_lock, NULL);
    pthread_mutex_init(&w->owners_lock, NULL);
    for (unsigned i = 0; i < OWNERS_MAX; i++)
        pthread_cond_init(&w->owners[i].freed, NULL);
    pthread_cond_init(&w->wake, NULL);
    for (; w->started < threads; w->started++)
        if (pthread_create(&w->threads[w->started], NULL, thread_main, w)) {
            webhook_worker_stop(w);
            return NULL;
        }
    return w;
}

void webhook_worker_stop(webhook_worker_t *w)
{
    if (!w)
        return;
    pthread_mutex_lock(&w->lock);
    w->stopping = true;
    pthread_cond_broadcast(&w->wake);
    pthread_mutex_unlock(&w->lock);
    for (unsigned i = 0; i < w->started; i++)
        pthread_join(w->threads[i], NULL);
    pthread_cond_destroy(&w->wake);
    pthread_mutex_destroy(&w->subs_lock);
    for (unsigned i = 0; i < OWNERS_MAX; i++)
        pthread_cond_destroy(&w->owners[i].freed);
    pthread_mutex_destroy(&w->owners_lock);
    pthread_mutex_destroy(&w->lock);
    free(w);
}

void webhook_worker_stats(webhook_worker_t *w, webhook_worker_stats_t *out)
{
    memset(out, 0, sizeof *out);
    if (!w)
        return;
    for (int i = 0; i < WEBHOOK_OUTCOME_COUNT; i++)
        out->attempts[i] = atomic_load(&w->attempts[i]);
    out->dropped = atomic_load(&w->dropped);
    out->swept = atomic_load(&w->swept);
}

const char *webhook_outcome_name(int outcome) { return webhook_outcome_code((webhook_outcome_t)outcome); }
