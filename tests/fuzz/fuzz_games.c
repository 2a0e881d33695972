/* libFuzzer target for the game API with a store that answers: an in-memory
 * store.h (replacing store_redis.c, reset per input) holding four games whose
 * tokens the seeds know. Input: a mode byte (bit 0: writes unavailable, bit 1:
 * changes lose a version race), then up to 16 requests (http_harness.h framing)
 * split by "\n---\n". Stored games must read back, and each changed seeded game
 * must still answer GET and GET .../pgn with 200. */
#include <stdio.h>
#include <string.h>

#include "../../api/config.h"
#include "../../api/tokens.h"
#include "../../rules/rules.h"
#include "../../store/game_record.h"
#include "../../store/store.h"
#include "fuzz.h"
#include "http_harness.h"

enum { GAME_SLOTS = 32, ANSWER_SLOTS = 64, KEY_MAX = 400, REQUESTS_MAX = 16 };
enum { MODE_WRITES_UNAVAILABLE = 1, MODE_WRITES_CONFLICT = 2 };

#define WHITE_TOKEN "whiteTokenForFuzzing01"
#define BLACK_TOKEN "blackTokenForFuzzing01"
#define SEPARATOR "\n---\n"

typedef struct {
    char key[KEY_MAX]; /* game id, or scope "\x1f" client key for a kept answer */
    char *data;        /* malloc'd, NUL-terminated; NULL: slot free */
    size_t length;
    uint64_t version;
} slot_t;

struct store {
    slot_t games[GAME_SLOTS];
    slot_t answers[ANSWER_SLOTS];
    unsigned mode;
    store_stats_t stats;
};

static store_t memory_store;
static config_t config;

typedef struct {
    const char *id, *fen;
    bool chess960;
    const char *moves; /* SAN, space-separated */
    int draw_offer;
} seeded_game_t;

static const seeded_game_t seeded[] = {
    { "fuzzgame0000std1", FEN_START, false, "", -1 },
    { "fuzzgame0000rep1", FEN_START, false, "Nf3 Nf6 Ng1 Ng8 Nf3 Nf6 Ng1", -1 }, /* Ng8 repeats three times */
    { "fuzzgame0000c960", "1rk2r2/pppppppp/8/8/8/8/PPPPPPPP/1RK2R2 w KQkq - 0 1", true, "", -1 },
    { "fuzzgame0000end1", "7k/8/5K2/8/8/8/8/6Q1 w - - 98 80", false, "", BLACK }, /* Qg7#, or 50 moves */
};
enum { SEEDED_COUNT = sizeof seeded / sizeof seeded[0] };
static char *seeded_json[SEEDED_COUNT];
static size_t seeded_length[SEEDED_COUNT];

/* --- the in-memory store --- */

static char *copy_bytes(const char *text, size_t length)
{
    char *out = malloc(length + 1);
    if (out) {
        memcpy(out, text, length);
        out[length] = '\0';
    }
    return out;
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
    clear(store->games, GAME_SLOTS);
    clear(store->answers, ANSWER_SLOTS);
}

store_status_t store_ping(store_t *store)
{
    (void)store;
    return STORE_OK;
}

store_status_t store_game_load(store_t *store, const char *id, char **data, size_t *length, uint64_t *version)
{
    const slot_t *slot = find(store->games, GAME_SLOTS, id);
    if (!slot)
        return STORE_ENOT_FOUND;
    if (!(*data = copy_bytes(slot->data, slot->length)))
        return STORE_EUNAVAILABLE;
    *length = slot->length;
    *version = slot->version;
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

/* The compare-and-set of store_redis.c's Lua script, in the same order. */
store_status_t store_game_write(store_t *store, const char *id, uint64_t expected_version, const char *data,
                                size_t length, unsigned ttl_seconds, const store_idempotency_t *idempotency,
                                uint64_t *current_version, char **replay)
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
    const slot_t *game = find(store->games, GAME_SLOTS, id);
    uint64_t current = game ? game->version : 0;
    if (current_version)
        *current_version = current;
    if (expected_version == 0 && game)
        return STORE_EEXISTS;
    if (expected_version > 0 && !game)
        return STORE_ENOT_FOUND;
    if (expected_version > 0 && (current != expected_version || (store->mode & MODE_WRITES_CONFLICT))) {
        if (current_version && current == expected_version)
            *current_version = current + 1; /* another writer got there first */
        return STORE_ECONFLICT;
    }
    if (!put(store->games, GAME_SLOTS, id, data, length, expected_version + 1))
        return STORE_EUNAVAILABLE;
    if (with_answer && !put(store->answers, ANSWER_SLOTS, k, idempotency->answer, strlen(idempotency->answer), 0))
        return STORE_EUNAVAILABLE;
    if (current_version)
        *current_version = expected_version + 1;
    return STORE_OK;
}

const char *store_status_name(store_status_t status)
{
    static const char *const names[STORE_STATUS_COUNT] = {
        "ok", "not_found", "conflict", "exists", "replay", "unavailable", "corrupt",
    };
    return (unsigned)status < STORE_STATUS_COUNT ? names[status] : "unknown";
}

void store_stats(store_t *store, store_stats_t *out) { *out = store->stats; }

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

/* A stored record for g, as game_handlers.c would have written it. */
static char *seeded_record(const seeded_game_t *g, size_t *length)
{
    game_record_t r;
    game_record_init(&r);
    snprintf(r.id, sizeof r.id, "%s", g->id);
    r.created_at_ms = 1732800000000;
    r.updated_at_ms = 1732800000000;
    r.chess960 = g->chess960;
    r.draw_offer = g->draw_offer;
    snprintf(r.players[WHITE].name, sizeof r.players[WHITE].name, "White \"W\" \\ Player");
    FUZZ_CHECK(tokens_hash(WHITE_TOKEN, r.players[WHITE].token_hash), "tokens_hash");
    FUZZ_CHECK(tokens_hash(BLACK_TOKEN, r.players[BLACK].token_hash), "tokens_hash");
    position_t pos;
    FUZZ_CHECK(fen_parse(g->fen, strlen(g->fen), g->chess960 ? FEN_CHESS960 : 0, &pos, NULL, 0) == FEN_OK, "%s", g->fen);
    fen_format(&pos, r.initial_fen, sizeof r.initial_fen);
    for (const char *p = g->moves; *p;) {
        size_t n = strcspn(p, " ");
        move_t move = MOVE_NONE;
        FUZZ_CHECK(notation_parse_move(&pos, p, n, &move, NULL, 0) == LEGALITY_OK && game_record_push_move(&r, &pos, move),
                   "seeded move %.*s", (int)n, p);
        position_undo_t undo;
        position_make(&pos, move, &undo);
        p += n + (p[n] == ' ');
    }
    fen_format(&pos, r.fen, sizeof r.fen);
    char *json = game_record_to_json(&r, length);
    FUZZ_CHECK(json != NULL, "game_record_to_json for %s", g->id);
    game_record_free(&r);
    return json;
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc;
    (void)argv;
    http_harness_init(&config);
    for (int i = 0; i < SEEDED_COUNT; i++)
        seeded_json[i] = seeded_record(&seeded[i], &seeded_length[i]);
    return 0;
}

/* Every game the handlers stored must read back as a record. */
static void check_stored_games(const store_t *store)
{
    for (int i = 0; i < GAME_SLOTS; i++) {
        const slot_t *slot = &store->games[i];
        if (!slot->data)
            continue;
        game_record_t r;
        FUZZ_CHECK(game_record_from_json(&r, slot->data, slot->length), "stored game %s does not read back: %s",
                   slot->key, slot->data);
        game_record_free(&r);
    }
}

static const char *find_separator(const char *text, const char *end)
{
    size_t n = strlen(SEPARATOR);
    for (const char *p = text; p + n <= end; p++)
        if (!memcmp(p, SEPARATOR, n))
            return p;
    return NULL;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1)
        return 0;
    store_t *store = store_open(NULL, NULL, 0);
    store->mode = data[0];
    for (int i = 0; i < SEEDED_COUNT; i++)
        FUZZ_CHECK(put(store->games, GAME_SLOTS, seeded[i].id, seeded_json[i], seeded_length[i], 1), "seeding");
    const char *text = (const char *)data + 1, *end = (const char *)data + size;
    for (int n = 0; n < REQUESTS_MAX && text < end; n++) {
        const char *next = find_separator(text, end);
        const char *stop = next ? next : end;
        http_harness_run(text, (size_t)(stop - text), &config, store);
        check_stored_games(store);
        if (!next)
            break;
        text = next + strlen(SEPARATOR);
    }
    for (int i = 0; i < SEEDED_COUNT; i++) {
        const slot_t *slot = find(store->games, GAME_SLOTS, seeded[i].id);
        if (slot && slot->version == 1)
            continue; /* unchanged: the seeds read back by construction */
        char request[96];
        int n = snprintf(request, sizeof request, "GET /v1/games/%s", seeded[i].id);
        unsigned status = http_harness_run(request, (size_t)n, &config, store);
        FUZZ_CHECK(status == 200, "GET of game %s answers %u after the requests", seeded[i].id, status);
        n = snprintf(request, sizeof request, "GET /v1/games/%s/pgn", seeded[i].id);
        status = http_harness_run(request, (size_t)n, &config, store);
        FUZZ_CHECK(status == 200, "GET of game %s's PGN answers %u after the requests", seeded[i].id, status);
    }
    store_close(store);
    return 0;
}
