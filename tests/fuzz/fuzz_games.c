/* libFuzzer target for the game API with a store that answers: the fake
 * store of tests/support/fake_store.c, reset per input, holding seeded games
 * whose tokens the seeds know, on a Redis clock the input moves. Whatever
 * the requests, stored games must read back whole and consistent, and
 * nothing but a flag's fall may be written over a game whose flag has
 * fallen. The input and every check: LLVMFuzzerTestOneInput. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../api/config.h"
#include "../../api/game/game_events.h"
#include "../../api/game/tokens.h"
#include "../../rules/rules.h"
#include "../../store/game_record.h"
#include "../../store/store.h"
#include "../../api/game/game_cache.h"
#include "../support/fake_store.h"
#include "fuzz.h"
#include "http_harness.h"

enum { REQUESTS_MAX = 16 };

/* Redis's clock at the start of each input (Unix ms). */
#define CLOCK_START_MS INT64_C(1732800000000)

#define WHITE_TOKEN "whiteTokenForFuzzing01"
#define BLACK_TOKEN "blackTokenForFuzzing01"
#define SEPARATOR "\n---\n"

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

/* --- what every write must be --- */

/* g's state as stored, read back; false when it does not read. */
static bool read_stored(const fake_store_game_t *g, game_record_t *r)
{
    size_t tail = (size_t)g->history_count * STORE_HISTORY_ENTRY_SIZE;
    if (tail > g->history.length)
        tail = g->history.length;
    return game_record_read(r, g->state.bytes, g->state.length, g->history.bytes + g->history.length - tail, tail);
}

/* The event published with a write tells the version written, whether the
 * game is over, its flag's deadline, and, for a timed change, the time it
 * was made at (see api/game/game_events.h). */
static void check_event(void *ctx, const fake_store_game_t *g, const store_game_change_t *change)
{
    (void)ctx;
    if (!change->event_length)
        return;
    game_event_meta_t meta;
    const char *json;
    size_t json_length;
    game_record_t r;
    FUZZ_CHECK(game_event_parse(change->event, change->event_length, &meta, &json, &json_length),
               "game %s: the event published does not parse:\n%.*s", g->id, (int)change->event_length, change->event);
    FUZZ_CHECK(read_stored(g, &r), "game %s: the state written does not read back", g->id);
    /* A game with neither clock nor days ends idle --idle-end after its
     * last change, as the service has it (never stored). */
    if (!game_is_timed(&r.game) && !game_is_correspondence(&r.game)) {
        r.game.clock.idle_ms = (int64_t)config.idle_end_seconds * 1000;
        r.game.clock.turn_started_ms = r.updated_at_ms;
    }
    FUZZ_CHECK(meta.version == g->version && meta.ended == game_is_over(&r.game) && !strcmp(meta.type, "change")
                   && meta.deadline_ms == game_flag_deadline(&r.game)
                   && (change->time_from_ms <= 0 || meta.at_ms == change->time_from_ms),
               "game %s: the event published is not the write's (version %llu):\n%.*s", g->id,
               (unsigned long long)g->version, (int)change->event_length, change->event);
}

/* A write at now_ms over game g, whose new state text is state: when g's
 * clock ran and its side to move's flag had fallen by now_ms on Redis's
 * clock, the only change that may be written is the record of that fall. */
static void check_in_time(void *ctx, const fake_store_game_t *g, const char *state, size_t state_length,
                          int64_t now_ms)
{
    (void)ctx;
    (void)state_length;
    game_record_t before;
    if (!read_stored(g, &before) || !game_clock_running(&before.game) || now_ms < game_flag_deadline(&before.game))
        return;
    FUZZ_CHECK(strstr(state, "\nstate timeout\n"), "game %s: written at %lld, after its flag fell at %lld:\n%s", g->id,
               (long long)now_ms, (long long)game_flag_deadline(&before.game), state);
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
    out->state = strndup(state, out->state_length);
    out->moves = strndup(moves, moves_length);
    out->moves_length = moves_length;
    out->history = strndup(history, history_length);
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
    char *out = strdup(json);
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
    FUZZ_CHECK(fake_store_put_legacy(store, LEGACY_ID, legacy_json, strlen(legacy_json), 1), "seeding");
}

/* The move list of g replays from r's start to r's position, each entry's
 * SAN is the move's, and the history holds the key before each move. */
static void check_line(const fake_store_game_t *g, const game_record_t *r)
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
        /* The SAN, then the mover's clock after the move in a game on a clock. */
        const char *clock = memchr(colon + 1, ':', (size_t)(stop - colon - 1)), *san_end = clock ? clock : stop;
        FUZZ_CHECK(strlen(san) == (size_t)(san_end - colon - 1) && !memcmp(san, colon + 1, strlen(san)),
                   "game %s: move %d's SAN is %s, not %.*s", g->id, plies, san, (int)(san_end - colon - 1), colon + 1);
        FUZZ_CHECK(!clock == !game_is_timed(&r->game) || plies < r->game.clock.imported_plies,
                   "game %s: move %d has %s clock in a game %s one", g->id, plies, clock ? "a" : "no",
                   clock ? "without" : "with");
        for (const char *d = clock ? clock + 1 : stop; d < stop; d++)
            FUZZ_CHECK(*d >= '0' && *d <= '9' && clock + 1 < stop, "game %s: move %d's clock is not a figure", g->id,
                       plies);
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
 * time, and written at most FAKE_STORE_WRITE_TOLERANCE_MS from it and before the
 * mover's flag (a flag that fell is recorded first, ending the game). */
static void check_clock(const fake_store_game_t *g, const game_t *game)
{
    if (!game_clock_running(game))
        return;
    color_t side = game->pos.side_to_move;
    FUZZ_CHECK(game->clock.remaining_ms[side] > 0, "game %s: stored running with no time left to %s", g->id,
               side == WHITE ? "white" : "black");
    FUZZ_CHECK(game_flag_deadline(game) > g->written_at_ms - FAKE_STORE_WRITE_TOLERANCE_MS,
               "game %s: stored at %lld with its flag fallen at %lld", g->id, (long long)g->written_at_ms,
               (long long)game_flag_deadline(game));
}

/* Every game the handlers stored must read back as the store would load it. */
static void check_stored_games(store_t *store)
{
    for (int i = 0; i < FAKE_STORE_GAMES; i++) {
        const fake_store_game_t *g = &store->games[i];
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
    for (int i = 0; i < FAKE_STORE_LEGACY; i++) {
        const fake_store_slot_t *old = &store->legacy[i];
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
    const fake_store_game_t *g = fake_store_find_game(store, id);
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
 * version race, bit 2: the clock moves on FAKE_STORE_CLOCK_STEP_MS at each load and
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
    store->before_write = check_in_time;
    store->after_write = check_event;
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
