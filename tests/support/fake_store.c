/* An in-memory store.h for tests that drive the game service without Redis
 * (the games fuzz target, tests/fuzz/fuzz_games.c): games, records of the
 * first format and kept answers in fixed slots, on a Redis clock the test
 * sets. It is linked in place of store/'s Redis code; see fake_store.h. */
#include "fake_store.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../store/bulk.h"
#include "../../store/cluster.h"
#include "../../store/deadlines.h"
#include "../../store/engine_jobs.h"
#include "../../store/finished_feed.h"
#include "../../store/game_streams.h"
#include "../../store/reviews.h"
#include "../../store/store_private.h"
#include "../../store/webhooks.h"

/* Loaded games are freed by the production store_game_clear of
 * store/store_game.c. */

static char *copy_bytes(const char *text, size_t length)
{
    char *out = malloc(length + 1);
    if (out) {
        if (length)
            memcpy(out, text, length);
        out[length] = '\0';
    }
    return out;
}

/* head then tail as one new text; NULL when out of memory. */
static char *joined(const fake_store_text_t *head, size_t head_length, const char *tail, size_t tail_length)
{
    char *out = malloc(head_length + tail_length + 1);
    if (out) {
        if (head_length)
            memcpy(out, head->bytes, head_length);
        if (tail_length)
            memcpy(out + head_length, tail, tail_length);
        out[head_length + tail_length] = '\0';
    }
    return out;
}

static void text_set(fake_store_text_t *t, char *bytes, size_t length)
{
    free(t->bytes);
    t->bytes = bytes;
    t->length = length;
}

static fake_store_slot_t *find(fake_store_slot_t *slots, int count, const char *key)
{
    for (int i = 0; i < count; i++)
        if (slots[i].data && !strcmp(slots[i].key, key))
            return &slots[i];
    return NULL;
}

/* Stores a copy of data under key (replacing any); false when full or too long a key. */
static bool put(fake_store_slot_t *slots, int count, const char *key, const char *data, size_t length, uint64_t version)
{
    fake_store_slot_t *slot = find(slots, count, key);
    for (int i = 0; !slot && i < count; i++)
        if (!slots[i].data)
            slot = &slots[i];
    char *copy = copy_bytes(data, length);
    if (!slot || strlen(key) >= FAKE_STORE_KEY_MAX || !copy) {
        free(copy);
        return false;
    }
    free(slot->data);
    snprintf(slot->key, sizeof slot->key, "%s", key);
    slot->data = copy;
    slot->length = length;
    slot->version = version;
    return true;
}

bool fake_store_put_legacy(store_t *store, const char *id, const char *json, size_t length, uint64_t version)
{
    return put(store->legacy, FAKE_STORE_LEGACY, id, json, length, version);
}

static void clear(fake_store_slot_t *slots, int count)
{
    for (int i = 0; i < count; i++) {
        free(slots[i].data);
        slots[i].data = NULL;
    }
}

fake_store_game_t *fake_store_find_game(store_t *store, const char *id)
{
    for (int i = 0; i < FAKE_STORE_GAMES; i++)
        if (store->games[i].used && !strcmp(store->games[i].id, id))
            return &store->games[i];
    return NULL;
}

static void clear_game(fake_store_game_t *g)
{
    text_set(&g->state, NULL, 0);
    text_set(&g->moves, NULL, 0);
    text_set(&g->history, NULL, 0);
    text_set(&g->meta, NULL, 0);
    memset(g, 0, sizeof *g);
}

static void answer_key(const char *scope, const char *key, char *out)
{
    snprintf(out, FAKE_STORE_KEY_MAX, "%s\x1f%s", scope, key);
}

static store_t the_store;

store_t *store_open(const store_config_t *cfg, char *err, size_t err_size)
{
    (void)cfg;
    (void)err;
    (void)err_size;
    return &the_store;
}

void store_close(store_t *store)
{
    if (!store)
        return;
    for (int i = 0; i < FAKE_STORE_GAMES; i++)
        clear_game(&store->games[i]);
    clear(store->legacy, FAKE_STORE_LEGACY);
    clear(store->answers, FAKE_STORE_ANSWERS);
}

store_status_t store_ping(store_t *store)
{
    (void)store;
    return STORE_OK;
}

/* The load script of store/game_load.c: the state and the last hlen history
 * entries (GETRANGE keeps what there is), the move list in full; a record of
 * the first format when there is no game hash. */
store_status_t store_game_load(store_t *store, const char *id, store_load_t what, store_game_t *out)
{
    memset(out, 0, sizeof *out);
    const fake_store_game_t *g = fake_store_find_game(store, id);
    if (!g) {
        const fake_store_slot_t *old = find(store->legacy, FAKE_STORE_LEGACY, id);
        if (!old)
            return STORE_ENOT_FOUND;
        out->version = old->version;
        out->legacy_length = old->length;
        return (out->legacy = copy_bytes(old->data, old->length)) ? STORE_OK : STORE_EUNAVAILABLE;
    }
    size_t tail = (size_t)g->history_count * STORE_HISTORY_ENTRY_SIZE;
    if (tail > g->history.length)
        tail = g->history.length;
    if (store->mode & FAKE_STORE_CLOCK_MOVES)
        store->now_ms += FAKE_STORE_CLOCK_STEP_MS;
    out->version = g->version;
    out->now_ms = store->now_ms;
    memcpy(out->write_id, g->write_id, sizeof out->write_id);
    out->state_length = g->state.length;
    out->history_length = tail;
    out->state = copy_bytes(g->state.bytes, g->state.length);
    out->history = copy_bytes(g->history.bytes + g->history.length - tail, tail);
    bool meta = what == STORE_LOAD_FULL && g->meta.length;
    if (what == STORE_LOAD_FULL) {
        out->moves_length = g->moves.length;
        out->moves = copy_bytes(g->moves.bytes, g->moves.length);
    }
    if (meta) {
        out->meta_length = g->meta.length;
        out->meta = copy_bytes(g->meta.bytes, g->meta.length);
    }
    if (!out->state || !out->history || (what == STORE_LOAD_FULL && !out->moves) || (meta && !out->meta)) {
        store_game_clear(out);
        return STORE_EUNAVAILABLE;
    }
    return STORE_OK;
}

/* Keeps no presence: every player reads as never seen. */
store_status_t store_game_load_present(store_t *store, const char *id, unsigned present, store_game_t *out)
{
    (void)present;
    return store_game_load(store, id, STORE_LOAD_CHANGE, out);
}

store_status_t store_idempotency_get(store_t *store, const char *scope, const char *key, char **answer)
{
    char k[FAKE_STORE_KEY_MAX];
    answer_key(scope, key, k);
    const fake_store_slot_t *slot = find(store->answers, FAKE_STORE_ANSWERS, k);
    if (!slot)
        return STORE_ENOT_FOUND;
    return (*answer = copy_bytes(slot->data, slot->length)) ? STORE_OK : STORE_EUNAVAILABLE;
}

/* One part of the line (move list or history) after op: a new text, or
 * NULL when out of memory. */
static char *line_after(const fake_store_text_t *old, store_line_op_t op, const char *text, size_t length, size_t keep,
                        size_t *new_length)
{
    switch (op) {
    case STORE_LINE_APPEND:
        *new_length = old->length + length;
        return joined(old, old->length, text, length);
    case STORE_LINE_SET:
        *new_length = length;
        return copy_bytes(text ? text : "", length);
    case STORE_LINE_TRUNCATE:
        *new_length = keep < old->length ? keep : old->length;
        return joined(old, *new_length, NULL, 0);
    default:
        *new_length = old->length;
        return joined(old, old->length, NULL, 0);
    }
}

/* The compare-and-set of store/game_write.c's Lua script, in the same order. */
store_status_t store_game_write(store_t *store, const char *id, uint64_t expected_version,
                                const store_game_change_t *change, unsigned ttl_seconds,
                                const store_idempotency_t *idempotency, uint64_t *current_version, char **replay)
{
    (void)ttl_seconds;
    if (store->mode & FAKE_STORE_WRITES_UNAVAILABLE) {
        store->stats.errors++;
        return STORE_EUNAVAILABLE;
    }
    char k[FAKE_STORE_KEY_MAX];
    bool with_answer = idempotency && idempotency->key;
    if (with_answer) {
        answer_key(idempotency->scope, idempotency->key, k);
        const fake_store_slot_t *prior = find(store->answers, FAKE_STORE_ANSWERS, k);
        if (prior)
            return (*replay = copy_bytes(prior->data, prior->length)) ? STORE_EREPLAY : STORE_EUNAVAILABLE;
    }
    fake_store_game_t *game = fake_store_find_game(store, id);
    fake_store_slot_t *old = change->replaces_legacy ? find(store->legacy, FAKE_STORE_LEGACY, id) : NULL;
    uint64_t current = game ? game->version : old ? old->version : 0;
    if (current_version)
        *current_version = current;
    if (expected_version == 0 && current)
        return STORE_EEXISTS;
    if (expected_version > 0 && !current)
        return STORE_ENOT_FOUND;
    if (expected_version > 0 && (current != expected_version || (store->mode & FAKE_STORE_WRITES_CONFLICT))) {
        if (current_version && current == expected_version)
            *current_version = current + 1; /* another writer got there first */
        return STORE_ECONFLICT;
    }
    if (game && change->expected_write_id && *change->expected_write_id
        && strcmp(game->write_id, change->expected_write_id))
        return STORE_ECONFLICT; /* the same version, written by another write */
    if (store->mode & FAKE_STORE_CLOCK_MOVES)
        store->now_ms += FAKE_STORE_CLOCK_STEP_MS;
    if (change->time_from_ms > 0 /* a timed change: Redis's clock decides */
        && (store->now_ms - change->time_from_ms > FAKE_STORE_WRITE_TOLERANCE_MS
            || change->time_from_ms - store->now_ms > FAKE_STORE_WRITE_TOLERANCE_MS
            || (change->deadline_ms > 0 && store->now_ms >= change->deadline_ms)))
        return STORE_ELATE;
    for (int i = 0; !game && i < FAKE_STORE_GAMES; i++)
        if (!store->games[i].used)
            game = &store->games[i];
    if (!game || strlen(id) >= FAKE_STORE_KEY_MAX)
        return STORE_EUNAVAILABLE;
    size_t moves_length, history_length;
    char *state = copy_bytes(change->state, change->state_length);
    char *moves = line_after(&game->moves, change->line_op, change->moves, change->moves_length, change->moves_keep,
                             &moves_length);
    char *history = line_after(&game->history, change->line_op, change->history, change->history_length,
                               change->history_keep, &history_length);
    if (state && game->used && store->before_write)
        store->before_write(store->check_ctx, game, state, change->state_length, store->now_ms);
    char *meta = change->meta_length ? copy_bytes(change->meta, change->meta_length) : NULL;
    if (!state || !moves || !history || (change->meta_length && !meta)) {
        free(state);
        free(moves);
        free(history);
        free(meta);
        return STORE_EUNAVAILABLE;
    }
    game->used = true;
    snprintf(game->id, sizeof game->id, "%s", id);
    game->version = expected_version + 1;
    game->written_at_ms = store->now_ms;
    game->history_count = change->history_count;
    snprintf(game->write_id, sizeof game->write_id, "%s", change->write_id ? change->write_id : "");
    text_set(&game->state, state, change->state_length);
    text_set(&game->moves, moves, moves_length);
    text_set(&game->history, history, history_length);
    if (meta)
        text_set(&game->meta, meta, change->meta_length);
    if (store->after_write)
        store->after_write(store->check_ctx, game, change);
    if (old) {
        free(old->data);
        old->data = NULL;
    }
    if (with_answer && !put(store->answers, FAKE_STORE_ANSWERS, k, idempotency->answer, strlen(idempotency->answer), 0))
        return STORE_EUNAVAILABLE;
    if (current_version)
        *current_version = expected_version + 1;
    return STORE_OK;
}

void store_game_channel(const char *id, char *out)
{
    snprintf(out, STORE_CHANNEL_SIZE, "chessd:events:{%.*s}", STORE_CHANNEL_SIZE - 20, id);
}

/* No Redis here: the event hub's subscriber cannot connect. */
bool store_is_cluster(const store_t *store)
{
    (void)store;
    return false;
}

conn_t *store_connect_node(store_t *store, const cluster_node_t *node, char *err, size_t err_size)
{
    (void)store;
    (void)node;
    if (err_size)
        snprintf(err, err_size, "the fake store has no Pub/Sub");
    return NULL;
}

bool store_cluster_map(store_t *store, cluster_map_t *out)
{
    (void)store;
    (void)out;
    return false;
}

/* As one Redis node: the slots are computed but mean nothing. */
unsigned store_id_slot(const char *id) { return cluster_key_slot(id, strlen(id)); }

bool store_id_fit_slot(char *id, const char alphabet[64], unsigned slot)
{
    return cluster_fit_slot(id, strlen(id), alphabet, slot) && store_id_slot(id) == slot;
}

/* No bulk is kept here: a bulk's creation finds the store away (its input
 * is still read and checked first), a read finds none, and a game's end
 * has none to leave. */
store_status_t store_bulk_create(store_t *store, const char *id, const char *info, const store_bulk_game_t *games,
                                 unsigned count, const store_idempotency_t *idem, char **replay)
{
    (void)store, (void)id, (void)info, (void)games, (void)count, (void)idem, (void)replay;
    return STORE_EUNAVAILABLE;
}

store_status_t store_bulk_deadlines(store_t *store, const char *const *ids, const int64_t *due, unsigned count)
{
    (void)store, (void)ids, (void)due, (void)count;
    return STORE_OK;
}

store_status_t store_bulk_read(store_t *store, const char *id, char **info, char **ids)
{
    (void)store, (void)id;
    *info = *ids = NULL;
    return STORE_ENOT_FOUND;
}

store_status_t store_bulk_states(store_t *store, const char *id, const char *const *ids, unsigned count,
                                 char **states, size_t *lengths, uint64_t *versions, int64_t *now_ms)
{
    (void)store, (void)id, (void)ids, (void)lengths, (void)versions, (void)now_ms;
    for (unsigned i = 0; i < count; i++)
        states[i] = NULL;
    return STORE_ENOT_FOUND;
}

store_status_t store_bulk_update(store_t *store, const char *id, const char *expected, const char *info)
{
    (void)store, (void)id, (void)expected, (void)info;
    return STORE_ENOT_FOUND;
}

store_status_t store_bulk_game_ended(store_t *store, const char *id, const char *game_id, unsigned ttl_seconds)
{
    (void)store, (void)id, (void)game_id, (void)ttl_seconds;
    return STORE_ENOT_FOUND;
}

unsigned store_idempotency_slot(const char *scope, const char *key)
{
    (void)scope;
    return cluster_key_slot(key, strlen(key));
}

const char *store_status_name(store_status_t status)
{
    static const char *const names[STORE_STATUS_COUNT] = {
        "ok", "not_found", "conflict", "exists", "replay", "unavailable", "corrupt", "full", "unknown", "late",
    };
    return (unsigned)status < STORE_STATUS_COUNT ? names[status] : "unknown";
}

void store_stats(store_t *store, store_stats_t *out) { *out = store->stats; }

/* Memory never fails: always up, nothing to probe, no deadline to keep. */
void store_health(store_t *store, store_health_t *out)
{
    (void)store;
    memset(out, 0, sizeof *out);
    out->up = true;
}

store_status_t store_probe(store_t *store) { return store_ping(store); }

void store_on_down(store_t *store, void (*fn)(void *ctx), void *ctx)
{
    (void)store;
    (void)fn;
    (void)ctx;
}

/* Never full, and no memory settings to read (store_memory.c's). */
bool store_is_full(store_t *store)
{
    (void)store;
    return false;
}

store_status_t store_memory_read(store_t *store, store_memory_t *out)
{
    (void)store;
    memset(out, 0, sizeof *out);
    return STORE_EUNAVAILABLE;
}

/* No engine workers here: a game against the computer's intent and job go
 * nowhere and no job is ever claimed (the fuzzer drives the game service,
 * not the workers; the server's metrics still link the workers' code). */
store_status_t store_engine_due_set(store_t *store, const char *id, uint64_t version, int64_t due_ms)
{
    (void)store, (void)id, (void)version, (void)due_ms;
    return STORE_OK;
}

store_status_t store_engine_job_add(store_t *store, const char *id, uint64_t version)
{
    (void)store, (void)id, (void)version;
    return STORE_OK;
}

store_status_t store_engine_turn_add(store_t *store, const char *id, uint64_t version, const store_engine_turn_t *turn,
                                     bool *added)
{
    (void)store, (void)id, (void)version, (void)turn;
    if (added)
        *added = true;
    return STORE_OK;
}

store_status_t store_engine_turn_intent(store_t *store, const char *id, uint64_t version, int64_t due_ms,
                                        const char *owner, const store_engine_bounds_t *bounds,
                                        store_engine_bound_t *reached)
{
    (void)store, (void)id, (void)version, (void)due_ms, (void)owner, (void)bounds;
    *reached = STORE_ENGINE_BOUND_NONE;
    return STORE_OK;
}

/* An empty backlog: no bound is ever reached. */
store_status_t store_engine_backlog(store_t *store, const char *owner, store_engine_backlog_t *out)
{
    (void)store, (void)owner;
    *out = (store_engine_backlog_t){ 0 };
    return STORE_OK;
}

store_status_t store_engine_consumer_remove(store_t *store, const char *consumer)
{
    (void)store, (void)consumer;
    return STORE_OK;
}

store_status_t store_engine_consumers_prune(store_t *store, unsigned idle_ms, unsigned max, unsigned *removed)
{
    (void)store, (void)idle_ms, (void)max;
    *removed = 0;
    return STORE_OK;
}

store_engine_bell_t *store_engine_bell_new(store_t *store)
{
    (void)store;
    return NULL;
}

store_status_t store_engine_bell_wait(store_engine_bell_t *bell, unsigned block_ms)
{
    (void)bell, (void)block_ms;
    return STORE_ENOT_FOUND;
}

void store_engine_bell_free(store_engine_bell_t *bell) { (void)bell; }

store_status_t store_engine_job_claim(store_t *store, const char *consumer, unsigned lease_ms, unsigned block_ms,
                                      store_engine_job_t *job)
{
    (void)store, (void)consumer, (void)lease_ms, (void)block_ms, (void)job;
    return STORE_ENOT_FOUND;
}

store_status_t store_engine_job_touch(store_t *store, const char *consumer, const store_engine_job_t *job)
{
    (void)store, (void)consumer, (void)job;
    return STORE_OK;
}

store_status_t store_engine_job_ack(store_t *store, const store_engine_job_t *job)
{
    (void)store, (void)job;
    return STORE_OK;
}

store_status_t store_engine_now(store_t *store, int64_t *now_ms)
{
    (void)store;
    *now_ms = 0;
    return STORE_OK;
}

store_status_t store_engine_due_clear(store_t *store, const char *id, uint64_t version)
{
    (void)store, (void)id, (void)version;
    return STORE_OK;
}

store_status_t store_engine_due_scan(store_t *store, int64_t now_ms, unsigned max, store_engine_due_t *out,
                                     unsigned *count)
{
    (void)store, (void)now_ms, (void)max, (void)out;
    *count = 0;
    return STORE_OK;
}

/* Multi-game streams: no hub runs here, so no stream's ids are kept; an
 * add finds no stream. */
void store_stream_channel(const char *stream, char out[STORE_CHANNEL_SIZE])
{
    snprintf(out, STORE_CHANNEL_SIZE, "chessd:stream-ids:{%.40s}", stream);
}

store_status_t store_stream_ids_put(store_t *store, const char *stream, const char *const *ids, unsigned count,
                                    unsigned ttl_seconds)
{
    (void)store, (void)stream, (void)ids, (void)count, (void)ttl_seconds;
    return STORE_OK;
}

store_status_t store_stream_ids_add(store_t *store, const char *stream, const char *const *ids, unsigned count,
                                    unsigned max, unsigned ttl_seconds, unsigned *added, unsigned *total)
{
    (void)store, (void)stream, (void)ids, (void)count, (void)max, (void)ttl_seconds;
    *added = *total = 0;
    return STORE_ENOT_FOUND;
}

store_status_t store_stream_ids_read(store_t *store, const char *stream, unsigned ttl_seconds,
                                     char (*out)[STORE_ENGINE_ID_SIZE], unsigned max, unsigned *count)
{
    (void)store, (void)stream, (void)ttl_seconds, (void)out, (void)max;
    *count = 0;
    return STORE_ENOT_FOUND;
}

store_status_t store_stream_ids_drop(store_t *store, const char *stream)
{
    (void)store, (void)stream;
    return STORE_OK;
}

/* The deadline index and the feed: the harness runs no sweep (the reads
 * end a game on time), and keeps no feed. */
store_status_t store_deadline_lower(store_t *store, const char *id, int64_t due_ms, int64_t *score)
{
    (void)store, (void)id;
    if (score)
        *score = due_ms;
    return STORE_OK;
}

/* Webhooks: the fuzzed games carry no subscriptions. */
store_status_t store_webhook_game_add(store_t *store, const char *id)
{
    (void)store, (void)id;
    return STORE_OK;
}

store_status_t store_webhook_games_add(store_t *store, const char *const *ids, unsigned count)
{
    (void)store, (void)ids, (void)count;
    return STORE_OK;
}

/* The subscription routes, linked with the handlers: no subscription is
 * ever made here (the fuzzed server has no service keys). */
store_status_t store_webhook_sub_put(store_t *store, const store_webhook_sub_t *sub, unsigned ttl_seconds)
{
    (void)store, (void)sub, (void)ttl_seconds;
    return STORE_EUNAVAILABLE;
}

store_status_t store_webhook_sub_get(store_t *store, const char *id, store_webhook_sub_t *out)
{
    (void)store, (void)id, (void)out;
    return STORE_ENOT_FOUND;
}

store_status_t store_webhook_sub_delete(store_t *store, const char *id, const char *owner)
{
    (void)store, (void)id, (void)owner;
    return STORE_ENOT_FOUND;
}

store_status_t store_webhook_subs_of(store_t *store, const char *owner, char (*out)[STORE_WEBHOOK_ID_SIZE],
                                     unsigned max, unsigned *count)
{
    (void)store, (void)owner, (void)out, (void)max;
    *count = 0;
    return STORE_OK;
}

store_status_t store_webhook_log_read(store_t *store, const char *sub, unsigned max, char ***lines,
                                      unsigned *count)
{
    (void)store, (void)sub, (void)max;
    *lines = NULL;
    *count = 0;
    return STORE_ENOT_FOUND;
}

void store_webhook_log_free(char **lines, unsigned count)
{
    for (unsigned i = 0; lines && i < count; i++)
        free(lines[i]);
    free(lines);
}

store_status_t store_game_finished(store_t *store, const store_feed_entry_t *game, uint64_t retention_ms,
                                   int64_t index_score, bool *added)
{
    (void)store, (void)game, (void)retention_ms, (void)index_score;
    if (added)
        *added = true;
    return STORE_OK;
}

store_status_t store_deadline_claim(store_t *store, unsigned lease_ms, unsigned max, store_deadline_t *out,
                                    unsigned *count, int64_t *now_ms)
{
    (void)lease_ms, (void)max, (void)out;
    *count = 0;
    if (now_ms)
        *now_ms = store->now_ms;
    return STORE_OK;
}

store_status_t store_deadline_settle(store_t *store, const char *id, int64_t claim_ms, int64_t due_ms,
                                     bool *settled)
{
    (void)store, (void)id, (void)claim_ms, (void)due_ms;
    if (settled)
        *settled = true;
    return STORE_OK;
}

store_status_t store_feed_length(store_t *store, uint64_t *length)
{
    (void)store;
    *length = 0;
    return STORE_OK;
}

/* The feed read is empty: a cursor is never one. */
bool store_feed_cursor_ok(const char *text)
{
    (void)text;
    return false;
}

store_status_t store_feed_read(store_t *store, const char *after, unsigned max, store_feed_entry_t *out,
                               unsigned *count)
{
    (void)store, (void)after, (void)max, (void)out;
    *count = 0;
    return STORE_OK;
}

void store_set_deadline(int64_t deadline_ms) { (void)deadline_ms; }

int64_t store_now_ms(void) { return 0; }

/* The harness sets CHESSD_TOKEN_SECRET's stand-in, so this is never asked. */
store_status_t store_token_secret(store_t *store, const char *candidate, char **secret, size_t *length,
                                  bool *created)
{
    (void)store;
    (void)candidate;
    *secret = NULL;
    *length = 0;
    *created = false;
    return STORE_EUNAVAILABLE;
}

/* Reviews: none is ever kept (the fuzzer drives the game service, not the
 * review workers; the server's routes still link their code). */
store_status_t store_review_read(store_t *store, const char *id, store_review_t *out)
{
    (void)store, (void)id;
    memset(out, 0, sizeof *out);
    return STORE_ENOT_FOUND;
}

void store_review_free(store_review_t *review)
{
    if (review)
        memset(review, 0, sizeof *review);
}

store_status_t store_review_begin(store_t *store, const char *id, uint64_t version, const char *limit,
                                  const char *owner, const char *line, size_t line_length, int count, bool *kept)
{
    (void)store, (void)id, (void)version, (void)limit, (void)owner, (void)line, (void)line_length, (void)count;
    *kept = false;
    return STORE_EUNAVAILABLE;
}

store_status_t store_review_drop(store_t *store, const char *id, uint64_t version)
{
    (void)store, (void)id, (void)version;
    return STORE_OK;
}

store_status_t store_review_enqueue(store_t *store, const char *id, uint64_t version, const char *owner,
                                    unsigned per_owner, bool *reached)
{
    (void)store, (void)id, (void)version, (void)owner, (void)per_owner;
    *reached = false;
    return STORE_EUNAVAILABLE;
}

store_status_t store_review_claim(store_t *store, const char *consumer, unsigned lease_ms, store_review_job_t *job)
{
    (void)store, (void)consumer, (void)lease_ms, (void)job;
    return STORE_ENOT_FOUND;
}

store_status_t store_review_touch(store_t *store, const char *consumer, unsigned lease_ms,
                                  const store_review_job_t *job)
{
    (void)store, (void)consumer, (void)lease_ms, (void)job;
    return STORE_ENOT_FOUND;
}

store_status_t store_review_ack(store_t *store, const store_review_job_t *job)
{
    (void)store, (void)job;
    return STORE_OK;
}

store_status_t store_review_position_set(store_t *store, const char *id, uint64_t version, int index,
                                         const char *text, bool *current)
{
    (void)store, (void)id, (void)version, (void)index, (void)text;
    *current = false;
    return STORE_OK;
}

store_status_t store_review_status_set(store_t *store, const char *id, uint64_t version, const char *status,
                                       const char *error)
{
    (void)store, (void)id, (void)version, (void)status, (void)error;
    return STORE_OK;
}

store_status_t store_review_publish(store_t *store, const char *id, const char *message)
{
    (void)store, (void)id, (void)message;
    return STORE_OK;
}
