/* libFuzzer target for the game API with a store that answers: an in-memory
 * store.h in place of store/'s Redis code, reset per input, holding seeded games
 * whose tokens the seeds know, on a Redis clock the input moves. Whatever
 * the requests, stored games must read back whole and consistent, and
 * nothing but a flag's fall may be written over a game whose flag has
 * fallen. The input and every check: LLVMFuzzerTestOneInput. */
#include <stdio.h>
#include <string.h>

#include "../../api/config.h"
#include "../../api/game/game_events.h"
#include "../../api/game/tokens.h"
#include "../../rules/rules.h"
#include "../../store/engine_jobs.h"
#include "../../store/game_record.h"
#include "../../store/game_streams.h"
#include "../../store/store.h"
#include "../../store/store_private.h"
#include "../../api/game/game_cache.h"
#include "fuzz.h"
#include "http_harness.h"

enum { GAME_SLOTS = 32, LEGACY_SLOTS = 4, ANSWER_SLOTS = 64, KEY_MAX = 400, REQUESTS_MAX = 16 };
enum { MODE_WRITES_UNAVAILABLE = 1, MODE_WRITES_CONFLICT = 2, MODE_CLOCK_MOVES = 4 };

/* Redis's clock at the start of each input (Unix ms), how far it moves at
 * each load and write under MODE_CLOCK_MOVES, and how far from a change's
 * time a write may come (store/game_write.c's script: a second). */
#define CLOCK_START_MS INT64_C(1732800000000)
#define CLOCK_STEP_MS 700
#define WRITE_TOLERANCE_MS 1000

#define WHITE_TOKEN "whiteTokenForFuzzing01"
#define BLACK_TOKEN "blackTokenForFuzzing01"
#define SEPARATOR "\n---\n"

/* A malloc'd byte string (NULL: none yet, read as empty). */
typedef struct {
    char *bytes;
    size_t length;
} text_t;

/* A game as store/ keeps it: the hash (version, state, hlen), the
 * move list and the history. */
typedef struct {
    char id[KEY_MAX];
    bool used;
    uint64_t version;
    text_t state, moves, history;
    unsigned history_count;
    char write_id[STORE_WRITE_ID_SIZE];
    int64_t written_at_ms; /* Redis's clock when it was last written */
} game_slot_t;

/* A kept answer (key: scope "\x1f" client key) or a record of the first format (key: id). */
typedef struct {
    char key[KEY_MAX];
    char *data; /* malloc'd, NUL-terminated; NULL: slot free */
    size_t length;
    uint64_t version;
} slot_t;

struct store {
    game_slot_t games[GAME_SLOTS];
    slot_t legacy[LEGACY_SLOTS];
    slot_t answers[ANSWER_SLOTS];
    unsigned mode;
    int64_t now_ms; /* Redis's clock (TIME) */
    store_stats_t stats;
};

static store_t memory_store;
static config_t config;

typedef struct {
    const char *id, *fen;
    bool chess960;
    const char *moves; /* SAN, space-separated, all played at CLOCK_START_MS */
    int draw_offer, takeback_offer; /* -1: none, else the colour that made it */
    int64_t initial_ms, increment_ms; /* the clock (0: untimed) */
    game_takeback_t takeback;
} seeded_game_t;

static const seeded_game_t seeded[] = {
    /* Free takebacks: the seeds that undo were written for it. */
    { "fuzzgame0000std1", FEN_START, false, "", -1, -1, 0, 0, GAME_TAKEBACK_FREE },
    { "fuzzgame0000rep1", FEN_START, false, "Nf3 Nf6 Ng1 Ng8 Nf3 Nf6 Ng1", -1, -1, 0, 0, GAME_TAKEBACK_AGREEMENT },
    { "fuzzgame0000c960", "1rk2r2/pppppppp/8/8/8/8/PPPPPPPP/1RK2R2 w KQkq - 0 1", true, "", -1, -1, 0, 0,
      GAME_TAKEBACK_AGREEMENT },
    { "fuzzgame0000end1", "7k/8/5K2/8/8/8/8/6Q1 w - - 98 80", false, "", BLACK, -1, 0, 0,
      GAME_TAKEBACK_AGREEMENT }, /* Qg7#, or 50 moves */
    /* On a clock: Black to move with a minute, White's takeback offer standing. */
    { "fuzzgame0000tim1", FEN_START, false, "e4 e5 Nf3", -1, WHITE, 60000, 1000, GAME_TAKEBACK_AGREEMENT },
    /* White to move with its last second, no takebacks. */
    { "fuzzgame0000tim2", FEN_START, false, "e4 e5", -1, -1, 1000, 0, GAME_TAKEBACK_NONE },
    /* One ply: the clock not yet running, the game still abortable. */
    { "fuzzgame0000tim3", FEN_START, false, "e4", -1, -1, 300000, 5000, GAME_TAKEBACK_FREE },
};
enum { SEEDED_COUNT = sizeof seeded / sizeof seeded[0] };

/* A game of the first format (one JSON text), converted by its first change. */
#define LEGACY_ID "fuzzgame0000leg1"

typedef struct {
    char *state, *moves, *history;
    size_t state_length, moves_length, history_length;
    unsigned history_count;
} seeded_parts_t;

static seeded_parts_t seeded_parts[SEEDED_COUNT];
static char *legacy_json;

/* --- the in-memory store --- */

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
static char *joined(const text_t *head, size_t head_length, const char *tail, size_t tail_length)
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

static void text_set(text_t *t, char *bytes, size_t length)
{
    free(t->bytes);
    t->bytes = bytes;
    t->length = length;
}

static slot_t *find(slot_t *slots, int count, const char *key)
{
    for (int i = 0; i < count; i++)
        if (slots[i].data && !strcmp(slots[i].key, key))
            return &slots[i];
    return NULL;
}

/* Stores a copy of data under key (replacing any); false when full or too long a key. */
static bool put(slot_t *slots, int count, const char *key, const char *data, size_t length, uint64_t version)
{
    slot_t *slot = find(slots, count, key);
    for (int i = 0; !slot && i < count; i++)
        if (!slots[i].data)
            slot = &slots[i];
    char *copy = copy_bytes(data, length);
    if (!slot || strlen(key) >= KEY_MAX || !copy) {
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

static void clear(slot_t *slots, int count)
{
    for (int i = 0; i < count; i++) {
        free(slots[i].data);
        slots[i].data = NULL;
    }
}

static game_slot_t *find_game(store_t *store, const char *id)
{
    for (int i = 0; i < GAME_SLOTS; i++)
        if (store->games[i].used && !strcmp(store->games[i].id, id))
            return &store->games[i];
    return NULL;
}

static void clear_game(game_slot_t *g)
{
    text_set(&g->state, NULL, 0);
    text_set(&g->moves, NULL, 0);
    text_set(&g->history, NULL, 0);
    memset(g, 0, sizeof *g);
}

static void answer_key(const char *scope, const char *key, char *out)
{
    snprintf(out, KEY_MAX, "%s\x1f%s", scope, key);
}

store_t *store_open(const store_config_t *cfg, char *err, size_t err_size)
{
    (void)cfg;
    (void)err;
    (void)err_size;
    return &memory_store;
}

void store_close(store_t *store)
{
    if (!store)
        return;
    for (int i = 0; i < GAME_SLOTS; i++)
        clear_game(&store->games[i]);
    clear(store->legacy, LEGACY_SLOTS);
    clear(store->answers, ANSWER_SLOTS);
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
    const game_slot_t *g = find_game(store, id);
    if (!g) {
        const slot_t *old = find(store->legacy, LEGACY_SLOTS, id);
        if (!old)
            return STORE_ENOT_FOUND;
        out->version = old->version;
        out->legacy_length = old->length;
        return (out->legacy = copy_bytes(old->data, old->length)) ? STORE_OK : STORE_EUNAVAILABLE;
    }
    size_t tail = (size_t)g->history_count * STORE_HISTORY_ENTRY_SIZE;
    if (tail > g->history.length)
        tail = g->history.length;
    if (store->mode & MODE_CLOCK_MOVES)
        store->now_ms += CLOCK_STEP_MS;
    out->version = g->version;
    out->now_ms = store->now_ms;
    memcpy(out->write_id, g->write_id, sizeof out->write_id);
    out->state_length = g->state.length;
    out->history_length = tail;
    out->state = copy_bytes(g->state.bytes, g->state.length);
    out->history = copy_bytes(g->history.bytes + g->history.length - tail, tail);
    if (what == STORE_LOAD_FULL) {
        out->moves_length = g->moves.length;
        out->moves = copy_bytes(g->moves.bytes, g->moves.length);
    }
    if (!out->state || !out->history || (what == STORE_LOAD_FULL && !out->moves)) {
        store_game_clear(out);
        return STORE_EUNAVAILABLE;
    }
    return STORE_OK;
}

store_status_t store_idempotency_get(store_t *store, const char *scope, const char *key, char **answer)
{
    char k[KEY_MAX];
    answer_key(scope, key, k);
    const slot_t *slot = find(store->answers, ANSWER_SLOTS, k);
    if (!slot)
        return STORE_ENOT_FOUND;
    return (*answer = copy_bytes(slot->data, slot->length)) ? STORE_OK : STORE_EUNAVAILABLE;
}

/* One part of the line (move list or history) after op: a new text, or
 * NULL when out of memory. */
static char *line_after(const text_t *old, store_line_op_t op, const char *text, size_t length, size_t keep,
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

/* g's state as stored, read back; false when it does not read. */
static bool read_stored(const game_slot_t *g, game_record_t *r)
{
    size_t tail = (size_t)g->history_count * STORE_HISTORY_ENTRY_SIZE;
    if (tail > g->history.length)
        tail = g->history.length;
    return game_record_read(r, g->state.bytes, g->state.length, g->history.bytes + g->history.length - tail, tail);
}

/* The event published with a write tells the version written, whether the
 * game is over, its flag's deadline, and, for a timed change, the time it
 * was made at (see api/game/game_events.h). */
static void check_event(const game_slot_t *g, const store_game_change_t *change)
{
    if (!change->event_length)
        return;
    game_event_meta_t meta;
    const char *json;
    size_t json_length;
    game_record_t r;
    FUZZ_CHECK(game_event_parse(change->event, change->event_length, &meta, &json, &json_length),
               "game %s: the event published does not parse:\n%.*s", g->id, (int)change->event_length, change->event);
    FUZZ_CHECK(read_stored(g, &r), "game %s: the state written does not read back", g->id);
    FUZZ_CHECK(meta.version == g->version && meta.ended == game_is_over(&r.game) && !strcmp(meta.type, "change")
                   && meta.deadline_ms == game_flag_deadline(&r.game)
                   && (change->time_from_ms <= 0 || meta.at_ms == change->time_from_ms),
               "game %s: the event published is not the write's (version %llu):\n%.*s", g->id,
               (unsigned long long)g->version, (int)change->event_length, change->event);
}

/* A write at now_ms over game g, whose new state text is state: when g's
 * clock ran and its side to move's flag had fallen by now_ms on Redis's
 * clock, the only change that may be written is the record of that fall. */
static void check_in_time(const game_slot_t *g, const char *state, int64_t now_ms)
{
    game_record_t before;
    if (!read_stored(g, &before) || !game_clock_running(&before.game) || now_ms < game_flag_deadline(&before.game))
        return;
    FUZZ_CHECK(strstr(state, "\nstate timeout\n"), "game %s: written at %lld, after its flag fell at %lld:\n%s", g->id,
               (long long)now_ms, (long long)game_flag_deadline(&before.game), state);
}

/* The compare-and-set of store/game_write.c's Lua script, in the same order. */
store_status_t store_game_write(store_t *store, const char *id, uint64_t expected_version,
                                const store_game_change_t *change, unsigned ttl_seconds,
                                const store_idempotency_t *idempotency, uint64_t *current_version, char **replay)
{
    (void)ttl_seconds;
    if (store->mode & MODE_WRITES_UNAVAILABLE) {
        store->stats.errors++;
        return STORE_EUNAVAILABLE;
    }
    char k[KEY_MAX];
    bool with_answer = idempotency && idempotency->key;
    if (with_answer) {
        answer_key(idempotency->scope, idempotency->key, k);
        const slot_t *prior = find(store->answers, ANSWER_SLOTS, k);
        if (prior)
            return (*replay = copy_bytes(prior->data, prior->length)) ? STORE_EREPLAY : STORE_EUNAVAILABLE;
    }
    game_slot_t *game = find_game(store, id);
    slot_t *old = change->replaces_legacy ? find(store->legacy, LEGACY_SLOTS, id) : NULL;
    uint64_t current = game ? game->version : old ? old->version : 0;
    if (current_version)
        *current_version = current;
    if (expected_version == 0 && current)
        return STORE_EEXISTS;
    if (expected_version > 0 && !current)
        return STORE_ENOT_FOUND;
    if (expected_version > 0 && (current != expected_version || (store->mode & MODE_WRITES_CONFLICT))) {
        if (current_version && current == expected_version)
            *current_version = current + 1; /* another writer got there first */
        return STORE_ECONFLICT;
    }
    if (game && change->expected_write_id && *change->expected_write_id
        && strcmp(game->write_id, change->expected_write_id))
        return STORE_ECONFLICT; /* the same version, written by another write */
    if (store->mode & MODE_CLOCK_MOVES)
        store->now_ms += CLOCK_STEP_MS;
    if (change->time_from_ms > 0 /* a timed change: Redis's clock decides */
        && (store->now_ms - change->time_from_ms > WRITE_TOLERANCE_MS
            || change->time_from_ms - store->now_ms > WRITE_TOLERANCE_MS
            || (change->deadline_ms > 0 && store->now_ms >= change->deadline_ms)))
        return STORE_ELATE;
    for (int i = 0; !game && i < GAME_SLOTS; i++)
        if (!store->games[i].used)
            game = &store->games[i];
    if (!game || strlen(id) >= KEY_MAX)
        return STORE_EUNAVAILABLE;
    size_t moves_length, history_length;
    char *state = copy_bytes(change->state, change->state_length);
    char *moves = line_after(&game->moves, change->line_op, change->moves, change->moves_length, change->moves_keep,
                             &moves_length);
    char *history = line_after(&game->history, change->line_op, change->history, change->history_length,
                               change->history_keep, &history_length);
    if (state && game->used)
        check_in_time(game, state, store->now_ms);
    if (!state || !moves || !history) {
        free(state);
        free(moves);
        free(history);
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
    check_event(game, change);
    if (old) {
        free(old->data);
        old->data = NULL;
    }
    if (with_answer && !put(store->answers, ANSWER_SLOTS, k, idempotency->answer, strlen(idempotency->answer), 0))
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
        snprintf(err, err_size, "the in-memory store has no Pub/Sub");
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

/* First-move deadlines: the harness runs no sweep (the reads abort a game on time). */
store_status_t store_first_move_due_set(store_t *store, const char *id, uint64_t version, int64_t due_ms)
{
    (void)store, (void)id, (void)version, (void)due_ms;
    return STORE_OK;
}

store_status_t store_first_move_due_clear(store_t *store, const char *id, uint64_t version)
{
    (void)store, (void)id, (void)version;
    return STORE_OK;
}

store_status_t store_first_move_due_scan(store_t *store, int64_t now_ms, unsigned max, store_engine_due_t *out,
                                         unsigned *count)
{
    (void)store, (void)now_ms, (void)max, (void)out;
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

/* --- the seeded games --- */

static void seeded_players(game_record_t *r)
{
    snprintf(r->players[WHITE].name, sizeof r->players[WHITE].name, "White \"W\" \\ Player");
    FUZZ_CHECK(tokens_hash(WHITE_TOKEN, r->players[WHITE].token_hash), "tokens_hash");
    FUZZ_CHECK(tokens_hash(BLACK_TOKEN, r->players[BLACK].token_hash), "tokens_hash");
}

/* The stored parts of g, as game_handlers.c would have written them: the
 * state text, the move list and every history entry. */
static void seed_parts(const seeded_game_t *g, seeded_parts_t *out)
{
    game_record_t r;
    memset(&r, 0, sizeof r);
    r.created_at_ms = CLOCK_START_MS;
    r.updated_at_ms = CLOCK_START_MS;
    seeded_players(&r);
    position_t pos;
    FUZZ_CHECK(fen_parse(g->fen, strlen(g->fen), g->chess960 ? FEN_CHESS960 : 0, &pos, NULL, 0) == FEN_OK, "%s", g->fen);
    game_start(&r.game, &pos);
    FUZZ_CHECK(game_set_rules(&r.game, g->initial_ms, g->increment_ms, g->takeback), "seeded rules of %s", g->id);
    char moves[64 * GAME_LINE_ENTRY_SIZE], history[64 * GAME_RECORD_HISTORY_ENTRY];
    size_t moves_length = 0, history_length = 0;
    for (const char *p = g->moves; *p;) {
        size_t n = strcspn(p, " ");
        game_played_t played;
        uint64_t key_before = r.game.pos.key;
        FUZZ_CHECK(game_move(&r.game, (color_t)r.game.pos.side_to_move, p, n, GAME_MAX_PLIES, CLOCK_START_MS,
                             &played)
                       == GAME_OK,
                   "seeded move %.*s", (int)n, p);
        if (moves_length)
            moves[moves_length++] = ' ';
        moves_length += game_line_entry(&played, moves + moves_length);
        game_record_history_entry(key_before, history + history_length);
        history_length += GAME_RECORD_HISTORY_ENTRY;
        p += n + (p[n] == ' ');
    }
    if (g->draw_offer >= 0)
        FUZZ_CHECK(game_draw(&r.game, (color_t)g->draw_offer, GAME_DRAW_OFFER, CLOCK_START_MS) == GAME_OK,
                   "seeded offer");
    int plies = 0;
    if (g->takeback_offer >= 0)
        FUZZ_CHECK(game_takeback(&r.game, (color_t)g->takeback_offer, GAME_TAKEBACK_OFFER, moves, moves_length,
                                 CLOCK_START_MS, &plies)
                       == GAME_OK,
                   "seeded takeback offer");
    char state[GAME_RECORD_STATE_MAX];
    out->state_length = game_record_state(&r, state, sizeof state);
    FUZZ_CHECK(out->state_length > 0, "game_record_state for %s", g->id);
    out->state = copy_bytes(state, out->state_length);
    out->moves = copy_bytes(moves, moves_length);
    out->moves_length = moves_length;
    out->history = copy_bytes(history, history_length);
    out->history_length = history_length;
    out->history_count = (unsigned)r.game.history_count;
    FUZZ_CHECK(out->state && out->moves && out->history, "out of memory");
}

/* A record of the first format: Italian opening, black's draw offer standing. */
static char *seed_legacy(void)
{
    game_record_t r;
    memset(&r, 0, sizeof r);
    seeded_players(&r);
    char json[2048];
    snprintf(json, sizeof json,
             "{\"id\":\"" LEGACY_ID "\",\"created_at\":1732800000000,\"updated_at\":1732800060000,"
             "\"chess960\":false,\"initial_fen\":\"" FEN_START "\","
             "\"fen\":\"r1bqkb1r/pppp1ppp/2n2n2/4p3/2B1P3/5N2/PPPP1PPP/RNBQK2R w KQkq - 4 4\",\"status\":\"active\","
             "\"result\":\"*\",\"termination\":\"\",\"draw_offer\":1,"
             "\"moves\":[\"e2e4\",\"e7e5\",\"g1f3\",\"b8c6\",\"f1c4\",\"g8f6\"],"
             "\"players\":{\"white\":{\"name\":\"%s\",\"token_hash\":\"%s\"},"
             "\"black\":{\"name\":\"\",\"token_hash\":\"%s\"}}}",
             "Legacy White", r.players[WHITE].token_hash, r.players[BLACK].token_hash);
    char *moves = NULL, *history = NULL;
    size_t moves_length, history_length;
    FUZZ_CHECK(game_record_from_legacy(&r, json, strlen(json), &moves, &moves_length, &history, &history_length),
               "the seeded legacy record does not convert");
    free(moves);
    free(history);
    char *out = copy_bytes(json, strlen(json));
    FUZZ_CHECK(out, "out of memory");
    return out;
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc;
    (void)argv;
    http_harness_init(&config);
    for (int i = 0; i < SEEDED_COUNT; i++)
        seed_parts(&seeded[i], &seeded_parts[i]);
    legacy_json = seed_legacy();
    return 0;
}

static void seed_store(store_t *store)
{
    for (int i = 0; i < SEEDED_COUNT; i++) {
        const seeded_parts_t *p = &seeded_parts[i];
        store_game_change_t change = { .state = p->state,
                                       .state_length = p->state_length,
                                       .history_count = p->history_count,
                                       .line_op = STORE_LINE_SET,
                                       .moves = p->moves,
                                       .moves_length = p->moves_length,
                                       .history = p->history,
                                       .history_length = p->history_length };
        FUZZ_CHECK(store_game_write(store, seeded[i].id, 0, &change, 0, NULL, NULL, NULL) == STORE_OK, "seeding");
    }
    FUZZ_CHECK(put(store->legacy, LEGACY_SLOTS, LEGACY_ID, legacy_json, strlen(legacy_json), 1), "seeding");
}

/* The move list of g replays from r's start to r's position, each entry's
 * SAN is the move's, and the history holds the key before each move. */
static void check_line(const game_slot_t *g, const game_record_t *r)
{
    position_t pos = r->game.initial;
    const char *p = g->moves.bytes ? g->moves.bytes : "", *end = p + g->moves.length;
    int plies = 0;
    while (p < end) {
        const char *stop = memchr(p, ' ', (size_t)(end - p));
        if (!stop)
            stop = end;
        const char *colon = memchr(p, ':', (size_t)(stop - p));
        uci_text_t uci;
        FUZZ_CHECK(colon && uci_read(p, (size_t)(colon - p), &uci), "game %s: move list entry %d: %.*s", g->id, plies,
                   (int)(stop - p), p);
        move_t move = uci_to_move(&pos, &uci);
        FUZZ_CHECK(movegen_is_legal(&pos, move), "game %s: move %d is not legal", g->id, plies);
        char san[SAN_BUFFER_SIZE], entry[GAME_RECORD_HISTORY_ENTRY];
        san_format(&pos, move, san);
        FUZZ_CHECK(strlen(san) == (size_t)(stop - colon - 1) && !memcmp(san, colon + 1, strlen(san)),
                   "game %s: move %d's SAN is %s, not %.*s", g->id, plies, san, (int)(stop - colon - 1), colon + 1);
        game_record_history_entry(pos.key, entry);
        FUZZ_CHECK(g->history.length >= (size_t)(plies + 1) * GAME_RECORD_HISTORY_ENTRY
                       && !memcmp(g->history.bytes + plies * GAME_RECORD_HISTORY_ENTRY, entry, GAME_RECORD_HISTORY_ENTRY),
                   "game %s: history entry %d is not the key before move %d", g->id, plies, plies);
        position_undo_t undo;
        position_make(&pos, move, &undo);
        plies++;
        p = stop < end ? stop + 1 : end;
    }
    FUZZ_CHECK(plies == r->game.ply_count, "game %s: %d moves in the list, %d plies in the state", g->id, plies,
               r->game.ply_count);
    FUZZ_CHECK(g->history.length == (size_t)plies * GAME_RECORD_HISTORY_ENTRY, "game %s: %zu history bytes for %d plies",
               g->id, g->history.length, plies);
    FUZZ_CHECK(!memcmp(&pos, &r->game.pos, sizeof pos), "game %s: the move list does not reach the state's position",
               g->id);
}

/* A running clock was stored with time left to the side to move, and its
 * flag falling after the change's time: a change is computed at a load's
 * time, and written at most WRITE_TOLERANCE_MS from it and before the
 * mover's flag (a flag that fell is recorded first, ending the game). */
static void check_clock(const game_slot_t *g, const game_t *game)
{
    if (!game_clock_running(game))
        return;
    color_t side = game->pos.side_to_move;
    FUZZ_CHECK(game->clock.remaining_ms[side] > 0, "game %s: stored running with no time left to %s", g->id,
               side == WHITE ? "white" : "black");
    FUZZ_CHECK(game_flag_deadline(game) > g->written_at_ms - WRITE_TOLERANCE_MS,
               "game %s: stored at %lld with its flag fallen at %lld", g->id, (long long)g->written_at_ms,
               (long long)game_flag_deadline(game));
}

/* Every game the handlers stored must read back as the store would load it. */
static void check_stored_games(store_t *store)
{
    for (int i = 0; i < GAME_SLOTS; i++) {
        const game_slot_t *g = &store->games[i];
        if (!g->used)
            continue;
        store_game_t loaded;
        FUZZ_CHECK(store_game_load(store, g->id, STORE_LOAD_CHANGE, &loaded) == STORE_OK, "load");
        game_record_t r;
        FUZZ_CHECK(game_record_read(&r, loaded.state, loaded.state_length, loaded.history, loaded.history_length),
                   "stored game %s does not read back:\n%s", g->id, loaded.state);
        store_game_clear(&loaded);
        check_line(g, &r);
        check_clock(g, &r.game);
    }
    for (int i = 0; i < LEGACY_SLOTS; i++) {
        const slot_t *old = &store->legacy[i];
        if (!old->data)
            continue;
        game_record_t r;
        char *moves = NULL, *history = NULL;
        size_t moves_length, history_length;
        FUZZ_CHECK(game_record_from_legacy(&r, old->data, old->length, &moves, &moves_length, &history, &history_length),
                   "record %s of the first format does not read back", old->key);
        free(moves);
        free(history);
    }
}

/* Whether game id was changed: written since the seeding (or converted). */
static bool changed(store_t *store, const char *id)
{
    const game_slot_t *g = find_game(store, id);
    return g && (g->version > 1 || !strcmp(id, LEGACY_ID));
}

/* A request preceded by "+<ms>\n" (at most 9 digits) runs that much later
 * on Redis's clock: returns where the request starts. */
static const char *advance_clock(store_t *store, const char *text, const char *stop)
{
    if (text >= stop || *text != '+')
        return text;
    const char *p = text + 1;
    int64_t ms = 0;
    int digits = 0;
    for (; p < stop && *p >= '0' && *p <= '9' && digits < 9; p++, digits++)
        ms = ms * 10 + (*p - '0');
    if (!digits || p >= stop || *p != '\n')
        return text;
    store->now_ms += ms;
    return p + 1;
}

static const char *find_separator(const char *text, const char *end)
{
    size_t n = strlen(SEPARATOR);
    for (const char *p = text; p + n <= end; p++)
        if (!memcmp(p, SEPARATOR, n))
            return p;
    return NULL;
}

/* The store holds seven games in the new format (untimed and on clocks,
 * under each takeback policy) and one record of the first format. Its
 * Redis clock starts at CLOCK_START_MS; a request preceded by a line
 * "+<ms>" runs that many milliseconds later, and writes are refused as late
 * by the rule of store/game_write.c's script.
 *
 * Input: a mode byte (bit 0: writes unavailable, bit 1: changes lose a
 * version race, bit 2: the clock moves on CLOCK_STEP_MS at each load and
 * each write), then up to 16 requests (http_harness.h framing) split by
 * "\n---\n".
 *
 * Checks:
 *   - stored games read back, their move list replays to the state, and
 *     their history holds the key before each move;
 *   - the event published with a write tells that write;
 *   - nothing but the record of a flag's fall is written over a game whose
 *     flag has fallen on Redis's clock;
 *   - a running clock is stored with time left, its flag after the
 *     change's time;
 *   - each changed seeded game still answers GET and GET .../pgn with 200. */
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1)
        return 0;
    store_t *store = store_open(NULL, NULL, 0);
    store->mode = 0;
    store->now_ms = CLOCK_START_MS;
    seed_store(store);
    /* Each input starts from the seeds: no copy of a game from an earlier input. */
    for (int i = 0; i < SEEDED_COUNT; i++)
        game_cache_drop(seeded[i].id);
    game_cache_drop(LEGACY_ID);
    store->mode = data[0];
    const char *text = (const char *)data + 1, *end = (const char *)data + size;
    for (int n = 0; n < REQUESTS_MAX && text < end; n++) {
        const char *next = find_separator(text, end);
        const char *stop = next ? next : end;
        text = advance_clock(store, text, stop);
        http_harness_run(text, (size_t)(stop - text), &config, store);
        check_stored_games(store);
        if (!next)
            break;
        text = next + strlen(SEPARATOR);
    }
    for (int i = 0; i <= SEEDED_COUNT; i++) {
        const char *id = i < SEEDED_COUNT ? seeded[i].id : LEGACY_ID;
        if (!changed(store, id))
            continue; /* unchanged: the seeds read back by construction */
        char request[96];
        int n = snprintf(request, sizeof request, "GET /v1/games/%s", id);
        unsigned status = http_harness_run(request, (size_t)n, &config, store);
        FUZZ_CHECK(status == 200, "GET of game %s answers %u after the requests", id, status);
        n = snprintf(request, sizeof request, "GET /v1/games/%s/pgn", id);
        status = http_harness_run(request, (size_t)n, &config, store);
        FUZZ_CHECK(status == 200, "GET of game %s's PGN answers %u after the requests", id, status);
    }
    store_close(store);
    return 0;
}
