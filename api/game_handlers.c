/* The game API's handlers. Each change reads its request, loads the game
 * (its state and the tail of its history, not its moves), checks the
 * caller's token and the version, calls one operation of rules/game.h and
 * writes the outcome with one compare-and-set (game_save) that also keeps the
 * answer for the caller's Idempotency-Key, publishes the change's event and
 * settles a write whose outcome the store could not report. A move's load,
 * write and answer cost the same at any length of the game; only GET, PGN,
 * undo and takeback read the move list. Time is Redis's: a load brings its
 * clock (TIME), every clock figure and flag is computed from it, and a
 * timed write is refused by the store if Redis's clock has passed the
 * mover's flag meanwhile. Any read that finds a flag fallen records the
 * ending first (a compare-and-set like any change: it happens once). */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include "app.h"
#include "../rules/game.h"
#include "../rules/pgn_read.h"
#include "../rules/rules.h"
#include "../store/game_record.h"
#include "../store/store.h"
#include "board_svg_http.h"
#include "input.h"
#include "config.h"
#include "game/game_cache.h"
#include "game/game_events.h"
#include "handlers.h"
#include "game/idempotency.h"
#include "render/position_json.h"
#include "metrics.h"
#include "render/pgn.h"
#include "problem.h"
#include "game/tokens.h"
#include "http/utf8.h"

static const char *const color_names[COLOR_COUNT] = { "white", "black" };

enum {
    IDEMPOTENCY_KEPT_MAX = 32, /* answers kept per player and game: enough for any retry */
    SCOPE_SIZE = GAME_ID_SIZE + TOKENS_HASH_SIZE + 4,
};

static const char creation_scope[] = "new";

/* A game as loaded. A game of the first format is converted: its move list
 * and history are made here, and its next write stores them whole. */
typedef struct {
    game_record_t record;
    store_game_t stored;
    const char *moves; /* the move list: full loads and converted games */
    size_t moves_length;
    bool legacy;
    char *legacy_moves, *legacy_history;
    size_t legacy_history_length;
    int64_t now_ms; /* Redis's clock when loaded (0: a cached copy, or not read yet) */
} loaded_t;

static void loaded_free(loaded_t *g)
{
    store_game_clear(&g->stored);
    free(g->legacy_moves);
    free(g->legacy_history);
    g->legacy_moves = g->legacy_history = NULL;
}

static int64_t now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* Whether a move list has exactly `plies` entries, each "uci:san". */
static bool line_well_formed(const char *line, size_t length, int plies)
{
    int entries = 0;
    const char *p = line, *end = line + length;
    while (p < end) {
        const char *stop = memchr(p, ' ', (size_t)(end - p));
        if (!stop)
            stop = end;
        const char *colon = memchr(p, ':', (size_t)(stop - p));
        if (!colon || colon == p || colon + 1 == stop)
            return false;
        entries++;
        p = stop < end ? stop + 1 : end;
    }
    return entries == plies;
}

/* Loads game id; fills res with the problem on failure (g is then still to
 * be freed). */
static bool game_load_id(store_t *store, const char *id, store_load_t what, loaded_t *g, api_response_t *res)
{
    memset(g, 0, sizeof *g);
    if (!tokens_is_id(id)) {
        api_problem_store(res, STORE_ENOT_FOUND, store);
        return false;
    }
    store_status_t status = store_game_load(store, id, what, &g->stored);
    if (status != STORE_OK) {
        api_problem_store(res, status, store);
        return false;
    }
    const store_game_t *s = &g->stored;
    bool ok;
    if (s->legacy) {
        size_t moves_length = 0;
        g->legacy = true;
        ok = game_record_from_legacy(&g->record, s->legacy, s->legacy_length, &g->legacy_moves, &moves_length,
                                     &g->legacy_history, &g->legacy_history_length);
        g->moves = g->legacy_moves;
        g->moves_length = moves_length;
    } else {
        ok = game_record_read(&g->record, s->state, s->state_length, s->history, s->history_length);
        g->moves = s->moves;
        g->moves_length = s->moves_length;
        if (ok && what == STORE_LOAD_FULL)
            ok = line_well_formed(g->moves, g->moves_length, g->record.game.ply_count);
    }
    if (!ok) {
        api_problem_game(res, GAME_EBAD_RECORD);
        return false;
    }
    memcpy(g->record.id, id, TOKENS_ID_SIZE); /* tokens_is_id: 16 characters */
    g->record.version = s->version;
    g->now_ms = s->now_ms;
    memcpy(g->record.write_id, s->write_id, sizeof g->record.write_id);
    return true;
}

static bool game_load(const api_request_t *req, store_load_t what, loaded_t *g, api_response_t *res)
{
    return game_load_id(app_of(req)->store, req->path_param, what, g, res);
}

/* --- answers --- */

static void iso_time(int64_t ms, char *buf, size_t size)
{
    time_t seconds = (time_t)(ms / 1000);
    struct tm tm;
    gmtime_r(&seconds, &tm);
    size_t n = strftime(buf, size, "%Y-%m-%dT%H:%M:%S", &tm);
    snprintf(buf + n, size - n, ".%03dZ", (int)(ms % 1000));
}

static void write_time(jsonw_t *w, const char *key, int64_t ms)
{
    char when[40];
    iso_time(ms, when, sizeof when);
    jsonw_kv_string(w, key, when);
}

static void write_optional(jsonw_t *w, const char *key, bool present, const char *value)
{
    jsonw_key(w, key);
    if (present)
        jsonw_string(w, value);
    else
        jsonw_null(w);
}

/* The clock as of now_ms (Unix ms, Redis's clock), or null for an untimed game. */
static void write_clock(jsonw_t *w, const game_t *g, int64_t now_ms)
{
    jsonw_key(w, "clock");
    if (!game_is_timed(g)) {
        jsonw_null(w);
        return;
    }
    jsonw_object_begin(w);
    jsonw_kv_int(w, "initial_ms", (long long)g->clock.initial_ms);
    jsonw_kv_int(w, "increment_ms", (long long)g->clock.increment_ms);
    jsonw_kv_int(w, "white_ms", (long long)game_clock_remaining(g, WHITE, now_ms));
    jsonw_kv_int(w, "black_ms", (long long)game_clock_remaining(g, BLACK, now_ms));
    write_optional(w, "running", game_clock_running(g), color_names[g->pos.side_to_move]);
    jsonw_kv_int(w, "at_ms", (long long)now_ms);
    jsonw_object_end(w);
}

/* The position, the game's ending, offers and clock, common to both answers.
 * Once the game is over, the position's status, result and draw_reason are
 * the game's (a resigned game's position says "resigned", not "active"). */
static void write_state(jsonw_t *w, const game_t *g, bool with_moves, int64_t now_ms)
{
    position_json_ending_t ending = {
        game_state_name(g->state), game_result_name(g->result),
        g->state == GAME_DRAW ? game_termination_name(g->termination) : NULL,
    };
    jsonw_key(w, "position");
    position_json_write_ended(w, &g->pos, &g->status, game_is_over(g) ? &ending : NULL, with_moves && !game_is_over(g));
    jsonw_kv_string(w, "status", game_state_name(g->state));
    jsonw_kv_string(w, "result", game_result_name(g->result));
    write_optional(w, "termination", g->termination != GAME_TERMINATION_NONE, game_termination_name(g->termination));
    write_optional(w, "draw_offer", g->draw_offer != GAME_OFFER_NONE, game_offer_name(g->draw_offer));
    jsonw_kv_string(w, "takeback", game_takeback_name(g->takeback));
    write_optional(w, "takeback_offer", g->takeback_offer != GAME_OFFER_NONE, game_offer_name(g->takeback_offer));
    write_clock(w, g, now_ms);
}

/* The moves of a move list as [{uci, san}] (the list is well formed). */
static void write_moves(jsonw_t *w, const char *line, size_t length)
{
    jsonw_key(w, "moves");
    jsonw_array_begin(w);
    for (const char *p = line, *end = line + length; p < end;) {
        const char *stop = memchr(p, ' ', (size_t)(end - p));
        if (!stop)
            stop = end;
        const char *colon = memchr(p, ':', (size_t)(stop - p));
        jsonw_object_begin(w);
        jsonw_key(w, "uci");
        jsonw_string_len(w, p, (size_t)(colon - p));
        jsonw_key(w, "san");
        jsonw_string_len(w, colon + 1, (size_t)(stop - colon - 1));
        jsonw_object_end(w);
        p = stop < end ? stop + 1 : end;
    }
    jsonw_array_end(w);
}

/* "chess960_position": the Scharnagl number of a Chess960 game's initial
 * position when it is one of the 960 starts, else null. Read from the
 * initial position, so every stored game has it, whatever its record's age. */
static void write_chess960_position(jsonw_t *w, const position_t *initial)
{
    int number = initial->chess960 ? chess960_number(initial) : -1;
    if (number >= 0)
        jsonw_kv_int(w, "chess960_position", number);
    else
        jsonw_kv_null(w, "chess960_position");
}

/* The Game object, with every move; tokens (two strings) only in the
 * creation answer; as an event (type "game") when event is set. */
static char *game_json(const loaded_t *g, bool with_moves, char tokens[COLOR_COUNT][TOKENS_TOKEN_SIZE], bool event,
                       size_t *length)
{
    const game_record_t *r = &g->record;
    char fen[FEN_BUFFER_SIZE];
    jsonw_t w;
    jsonw_init(&w);
    jsonw_object_begin(&w);
    if (event)
        jsonw_kv_string(&w, "type", "game");
    jsonw_kv_string(&w, "id", r->id);
    jsonw_kv_int(&w, "version", (long long)r->version);
    for (int c = 0; c < COLOR_COUNT; c++) {
        jsonw_key(&w, color_names[c]);
        jsonw_object_begin(&w);
        write_optional(&w, "name", r->players[c].name[0] != '\0', r->players[c].name);
        jsonw_object_end(&w);
    }
    jsonw_kv_bool(&w, "chess960", r->game.initial.chess960);
    write_chess960_position(&w, &r->game.initial);
    jsonw_kv_string(&w, "initial_fen", fen_format(&r->game.initial, fen, sizeof fen));
    write_moves(&w, g->moves ? g->moves : "", g->moves ? g->moves_length : 0);
    write_state(&w, &r->game, with_moves, g->now_ms);
    write_time(&w, "created_at", r->created_at_ms);
    write_time(&w, "updated_at", r->updated_at_ms);
    if (tokens) {
        jsonw_key(&w, "tokens");
        jsonw_object_begin(&w);
        jsonw_kv_string(&w, "white", tokens[WHITE]);
        jsonw_kv_string(&w, "black", tokens[BLACK]);
        jsonw_object_end(&w);
    }
    jsonw_object_end(&w);
    return jsonw_finish(&w, length);
}

/* What a change did: the move it played, if any, how the move list
 * changes, and its event's name. */
typedef struct {
    const game_played_t *played;
    store_line_op_t op;
    uint64_t key_before; /* STORE_LINE_APPEND: the position key before the move */
    size_t moves_keep;   /* STORE_LINE_TRUNCATE: bytes of the move list kept */
    const char *line, *history; /* STORE_LINE_SET: the whole move list and history (a game from PGN) */
    size_t line_length, history_length;
    const char *event;   /* "move", "resign", "timeout"... */
    int64_t deadline_ms; /* the mover's flag before the change (0: no running clock) */
} change_t;

/* The GameChange object: the new version and state, the move played; no
 * move list. As an event (with_event: type "change" and the event's name)
 * it is also what streams receive. */
static char *change_json(const game_record_t *r, const change_t *change, bool with_moves, bool with_event,
                         int64_t now_ms, size_t *length)
{
    jsonw_t w;
    jsonw_init(&w);
    jsonw_object_begin(&w);
    if (with_event) {
        jsonw_kv_string(&w, "type", "change");
        jsonw_kv_string(&w, "event", change->event);
    }
    jsonw_kv_string(&w, "id", r->id);
    jsonw_kv_int(&w, "version", (long long)r->version);
    jsonw_key(&w, "move");
    if (change->played) {
        jsonw_object_begin(&w);
        jsonw_kv_string(&w, "uci", change->played->uci);
        jsonw_kv_string(&w, "san", change->played->san);
        jsonw_object_end(&w);
    } else {
        jsonw_null(&w);
    }
    jsonw_kv_int(&w, "move_count", r->game.ply_count);
    write_state(&w, &r->game, with_moves, now_ms);
    write_time(&w, "updated_at", r->updated_at_ms);
    jsonw_object_end(&w);
    return jsonw_finish(&w, length);
}

static void set_etag(api_response_t *res, uint64_t version)
{
    snprintf(res->etag, sizeof res->etag, "\"%" PRIu64 "\"", version);
}

/* --- idempotency --- */

/* Answers a retry from a kept (sealed) answer, or 422 when the key came with another request. */
static void replay_answer(const char *fingerprint, const char *sealed, api_response_t *res)
{
    idem_answer_t kept;
    switch (idem_kept_open(sealed, fingerprint, &kept)) {
    case IDEM_REPLAY_OK:
        api_response_set(res, kept.status, "application/json", kept.body, kept.body_length);
        set_etag(res, kept.version);
        snprintf(res->location, sizeof res->location, "%s", kept.location);
        break;
    case IDEM_REPLAY_OTHER:
        api_problem(res, API_EIDEMPOTENCY_KEY_REUSED, "this Idempotency-Key was used with another request", NULL,
                    NULL);
        break;
    case IDEM_REPLAY_SEALED:
        api_problem(res, API_EINTERNAL, "a kept answer cannot be opened (was the token secret changed?)", NULL, NULL);
        break;
    default:
        api_problem(res, API_EINTERNAL, "a kept answer cannot be read", NULL, NULL);
        break;
    }
}

/* A write request's Idempotency-Key (key NULL: none) and fingerprint. */
typedef struct {
    const char *key;
    char fingerprint[IDEM_FINGERPRINT_SIZE];
    char scope[SCOPE_SIZE];
} idem_request_t;

/* Reads the Idempotency-Key header; false with res filled when it is refused. */
static bool read_idempotency(const api_request_t *req, bool creation, idem_request_t *idem, api_response_t *res)
{
    memset(idem, 0, sizeof *idem);
    idem->key = api_request_header(req, "Idempotency-Key");
    if (!idem->key)
        return true;
    char detail[256];
    idem_key_check_t check = idem_check_key(idem->key, creation, detail, sizeof detail);
    if (check != IDEM_KEY_OK) {
        api_problem(res, check == IDEM_KEY_WEAK ? API_EWEAK_IDEMPOTENCY_KEY : API_EINVALID_PARAMETER, detail, NULL,
                    NULL);
        return false;
    }
    /* The query is part of the request: each parameter as its two lengths and bytes. */
    char query[TARGET_QUERY_TEXT_MAX + TARGET_PARAM_MAX * 48];
    size_t query_length = 0;
    for (int i = 0; i < req->target->param_count; i++) {
        const target_param_t *p = &req->target->params[i];
        int n = snprintf(query + query_length, sizeof query - query_length, "%zu:%zu:", p->name_length,
                         p->value_length);
        if (n < 0 || (size_t)n + p->name_length + p->value_length > sizeof query - query_length)
            break;
        query_length += (size_t)n;
        memcpy(query + query_length, p->name, p->name_length);
        memcpy(query + query_length + p->name_length, p->value, p->value_length);
        query_length += p->name_length + p->value_length;
    }
    if (!idem_fingerprint(req->method, req->path, query, query_length, api_request_header(req, "If-Match"),
                          req->body, req->body_length, idem->fingerprint)) {
        api_problem(res, API_EINTERNAL, "the request's fingerprint cannot be computed", NULL, NULL);
        return false;
    }
    return true;
}

/* Returns true (with res filled) when the request is a retry answered from a kept answer. */
static bool answered_before(const api_request_t *req, const idem_request_t *idem, api_response_t *res)
{
    if (!idem->key)
        return false;
    char *kept = NULL;
    store_status_t status = store_idempotency_get(app_of(req)->store, idem->scope, idem->key, &kept);
    if (status == STORE_ENOT_FOUND)
        return false;
    if (status == STORE_OK)
        replay_answer(idem->fingerprint, kept, res);
    else
        api_problem_store(res, status, app_of(req)->store);
    free(kept);
    return true;
}

/* After STORE_EUNKNOWN, finds out once whether this request's write (state
 * as version expected + 1) was made: the kept answer for the caller's key,
 * else the stored state compared byte for byte (it holds the request's own
 * updated_at). Returns STORE_OK (it was made), STORE_EREPLAY (*replay: the
 * kept answer), STORE_ECONFLICT (another change took that version: this one
 * was not and will not be made) or STORE_EUNKNOWN (Redis still cannot tell). */
static store_status_t settle_unknown_write(const api_request_t *req, const char *id, uint64_t expected,
                                           const char *state, size_t length, const idem_request_t *idem,
                                           uint64_t *current, char **replay)
{
    if (idem->key && store_idempotency_get(app_of(req)->store, idem->scope, idem->key, replay) == STORE_OK)
        return STORE_EREPLAY;
    store_game_t stored;
    if (store_game_load(app_of(req)->store, id, STORE_LOAD_CHANGE, &stored) != STORE_OK)
        return STORE_EUNKNOWN;
    store_status_t status = STORE_EUNKNOWN; /* older: it may still arrive; newer: it may be under another change */
    if (stored.version == expected + 1) {
        *current = stored.version;
        status = stored.state && stored.state_length == length && !memcmp(stored.state, state, length)
                     ? STORE_OK
                     : STORE_ECONFLICT;
    }
    store_game_clear(&stored);
    return status;
}

/* --- writing a change --- */

/* The move list and history a change writes. A game of the first format
 * is written whole (STORE_LINE_SET) and replaces its old record. */
typedef struct {
    store_game_change_t store;
    char entry[GAME_LINE_ENTRY_SIZE + 1];
    char history_entry[GAME_RECORD_HISTORY_ENTRY];
    char *moves, *history; /* converted games: malloc'd */
} line_write_t;

static bool line_write_prepare(const loaded_t *g, const change_t *change, line_write_t *lw)
{
    memset(lw, 0, sizeof *lw);
    store_game_change_t *s = &lw->store;
    const game_t *game = &g->record.game;
    s->line_op = change->op;
    s->history_count = (unsigned)game->history_count;
    if (change->op == STORE_LINE_APPEND) {
        size_t n = 0;
        if (game->ply_count > 1)
            lw->entry[n++] = ' ';
        n += game_line_entry(change->played, lw->entry + n);
        game_record_history_entry(change->key_before, lw->history_entry);
        s->moves = lw->entry;
        s->moves_length = n;
        s->history = lw->history_entry;
        s->history_length = GAME_RECORD_HISTORY_ENTRY;
    } else if (change->op == STORE_LINE_TRUNCATE) {
        s->moves_keep = change->moves_keep;
        s->history_keep = (size_t)game->ply_count * GAME_RECORD_HISTORY_ENTRY;
    } else if (change->op == STORE_LINE_SET) {
        s->moves = change->line;
        s->moves_length = change->line_length;
        s->history = change->history;
        s->history_length = change->history_length;
    }
    if (!g->legacy)
        return true;
    /* The whole line of a converted game, as it is after the change. */
    size_t old_moves = g->moves_length, old_history = g->legacy_history_length;
    if (change->op == STORE_LINE_TRUNCATE) {
        old_moves = s->moves_keep;
        old_history = s->history_keep;
    }
    size_t extra_moves = change->op == STORE_LINE_APPEND ? s->moves_length : 0;
    size_t extra_history = change->op == STORE_LINE_APPEND ? s->history_length : 0;
    lw->moves = malloc(old_moves + extra_moves + 1);
    lw->history = malloc(old_history + extra_history + 1);
    if (!lw->moves || !lw->history)
        return false;
    memcpy(lw->moves, g->moves, old_moves);
    memcpy(lw->history, g->legacy_history, old_history);
    if (change->op == STORE_LINE_APPEND) { /* only a move has texts to add (memcpy from NULL is undefined) */
        memcpy(lw->moves + old_moves, s->moves, extra_moves);
        memcpy(lw->history + old_history, s->history, extra_history);
    }
    s->line_op = STORE_LINE_SET;
    s->moves = lw->moves;
    s->moves_length = old_moves + extra_moves;
    s->history = lw->history;
    s->history_length = old_history + extra_history;
    s->replaces_legacy = true;
    return true;
}

static void line_write_free(line_write_t *lw)
{
    free(lw->moves);
    free(lw->history);
}

/* What became of a write. */
typedef enum {
    SAVE_MADE = 0, /* this request's write was made (or found made) */
    SAVE_STALE,    /* refused because the game is not at the version g has (or is gone): nothing was written */
    SAVE_LATE,     /* refused by Redis's clock (see STORE_ELATE): nothing was written; load again and redo */
    SAVE_FAILED,   /* anything else: res holds the answer */
} save_t;

/* The message a change publishes on its game's channel: a line
 * "<version> <ended 0|1> <at_ms> <flag deadline ms> change", then the
 * change's event object (see api/game/game_events.h). NULL when out of memory. */
static char *event_message(const game_record_t *r, const change_t *change, int64_t now, size_t *length)
{
    size_t json_length;
    char *json = change_json(r, change, false, true, now, &json_length);
    if (!json)
        return NULL;
    buf_t message;
    buf_init(&message);
    buf_printf(&message, "%" PRIu64 " %d %" PRId64 " %" PRId64 " change\n", r->version, game_is_over(&r->game) ? 1 : 0,
               now, game_flag_deadline(&r->game));
    buf_append(&message, json, json_length);
    free(json);
    return buf_finish(&message, length);
}

/* Writes g as version expected + 1 and answers (success_status) with the
 * Game (creation: tokens given) or the GameChange, keeping the answer under
 * the caller's key. An active game expires active_game_ttl_seconds after
 * its last change, a finished one finished_game_ttl_seconds after its end
 * (0: never). A write made is kept in the game cache. */
static save_t game_save(const api_request_t *req, api_response_t *res, loaded_t *g, uint64_t expected,
                      const change_t *change, unsigned success_status, char tokens[COLOR_COUNT][TOKENS_TOKEN_SIZE],
                      const idem_request_t *idem, bool with_moves)
{
    game_record_t *r = &g->record;
    int64_t now = g->now_ms ? g->now_ms : now_ms();
    g->now_ms = now;
    r->updated_at_ms = now;
    r->version = expected + 1;
    char state[GAME_RECORD_STATE_MAX], location[IDEM_LOCATION_SIZE] = "";
    size_t state_length = game_record_state(r, state, sizeof state), body_length = 0, message_length = 0;
    char *body = tokens ? game_json(g, with_moves, tokens, false, &body_length)
                        : change_json(r, change, with_moves, false, now, &body_length);
    char *message = change->event ? event_message(r, change, now, &message_length) : NULL;
    char *kept = NULL, *replay = NULL;
    if (success_status == 201)
        snprintf(location, sizeof location, "/v1/games/%s", r->id);
    if (body && idem->key)
        kept = idem_kept_seal(idem->fingerprint, success_status, r->version, location, body, body_length);
    line_write_t lw;
    bool prepared = line_write_prepare(g, change, &lw);
    if (!state_length || !body || (idem->key && !kept) || !prepared || (change->event && !message)) {
        free(body);
        free(kept);
        free(message);
        line_write_free(&lw);
        api_problem(res, API_EINTERNAL, "out of memory", NULL, NULL);
        return SAVE_FAILED;
    }
    lw.store.state = state;
    lw.store.state_length = state_length;
    char write_id[STORE_WRITE_ID_SIZE];
    if (!tokens_new_write_id(write_id)) {
        free(body);
        free(kept);
        free(message);
        line_write_free(&lw);
        api_problem(res, API_EINTERNAL, "no randomness for a write id", NULL, NULL);
        return SAVE_FAILED;
    }
    lw.store.expected_write_id = r->write_id;
    lw.store.write_id = write_id;
    lw.store.event = message;
    lw.store.event_length = message_length;
    if (game_is_timed(&r->game) && g->stored.now_ms) { /* the time came from Redis: Redis checks it */
        lw.store.time_from_ms = now;
        lw.store.deadline_ms = change->deadline_ms;
    }
    /* In a game a caller's kept answers are bounded, oldest dropped first, so
     * changes looped with fresh keys cannot grow the store; a creation's is
     * not (each comes with a new game, under the per-address creation limit). */
    unsigned keep_max = strcmp(idem->scope, creation_scope) ? IDEMPOTENCY_KEPT_MAX : 0;
    store_idempotency_t store_idem = { idem->scope, idem->key, kept, app_of(req)->config->idempotency_ttl_seconds, keep_max };
    unsigned ttl = game_is_over(&r->game) ? app_of(req)->config->finished_game_ttl_seconds
                                          : app_of(req)->config->active_game_ttl_seconds;
    uint64_t current = 0;
    store_status_t status = store_game_write(app_of(req)->store, r->id, expected, &lw.store, ttl,
                                             idem->key ? &store_idem : NULL, &current, &replay);
    if (status == STORE_EUNKNOWN)
        status = settle_unknown_write(req, r->id, expected, state, state_length, idem, &current, &replay);
    free(kept);
    free(message);
    line_write_free(&lw);
    if (status == STORE_OK) {
        memcpy(r->write_id, write_id, sizeof r->write_id);
        api_response_set(res, success_status, "application/json", body, body_length);
        set_etag(res, r->version);
        snprintf(res->location, sizeof res->location, "%s", location);
        game_cache_put(r);
        return SAVE_MADE;
    }
    free(body);
    game_cache_drop(r->id);
    if (status == STORE_ELATE) {
        api_problem(res, API_EUNAVAILABLE, "the game's clock moved on while the change was made; retry", NULL, NULL);
        res->retry_after = 1;
        return SAVE_LATE;
    }
    if (status == STORE_EREPLAY) {
        replay_answer(idem->fingerprint, replay, res);
        free(replay);
        return SAVE_FAILED;
    }
    if (status == STORE_ECONFLICT) {
        metrics_version_conflict();
        api_problem_conflict(res, current, expected);
        return SAVE_STALE;
    }
    if (status == STORE_EFULL)
        metrics_store_full();
    else if (status == STORE_EUNKNOWN)
        metrics_outcome_unknown();
    api_problem_store(res, status, app_of(req)->store);
    return status == STORE_ENOT_FOUND ? SAVE_STALE : SAVE_FAILED;
}

/* --- reading requests --- */

static bool read_name(const cJSON *root, const char *key, char *out, api_response_t *res)
{
    const cJSON *item = cJSON_GetObjectItemCaseSensitive(root, key);
    out[0] = '\0';
    if (!item || cJSON_IsNull(item))
        return true;
    char detail[96];
    if (!cJSON_IsString(item) || utf8_length(item->valuestring) > GAME_NAME_CHARS
        || strlen(item->valuestring) > GAME_NAME_MAX) {
        snprintf(detail, sizeof detail, "'%s' must be a string of at most %d characters", key, GAME_NAME_CHARS);
        api_problem(res, API_EINVALID_FIELD, detail, NULL, NULL);
        return false;
    }
    if (!game_record_name_ok(item->valuestring)) {
        snprintf(detail, sizeof detail, "'%s' must not contain control characters", key);
        api_problem(res, API_EINVALID_FIELD, detail, NULL, NULL);
        return false;
    }
    strcpy(out, item->valuestring);
    return true;
}

/* Which player the bearer token belongs to, with the token's HMAC in hash;
 * -1 with res filled when none. */
static int authenticate(const api_request_t *req, const game_record_t *r, char hash[TOKENS_HASH_SIZE],
                        api_response_t *res)
{
    const char *header = api_request_header(req, "Authorization");
    if (!header || strncasecmp(header, "Bearer ", 7) || !header[7]) {
        api_problem(res, API_EUNAUTHORIZED, "send Authorization: Bearer <player token>", NULL, NULL);
        return -1;
    }
    int who = -1;
    if (!tokens_hash(header + 7, hash)) { /* one HMAC, compared with both players' */
        api_problem(res, API_EINTERNAL, "the token cannot be checked now", NULL, NULL);
        return -1;
    }
    for (int c = 0; c < COLOR_COUNT; c++)
        if (tokens_hash_equal(hash, r->players[c].token_hash))
            who = c;
    if (who < 0)
        api_problem(res, API_EFORBIDDEN, "the token is not a player's of this game", NULL, NULL);
    return who;
}

/* How an If-Match value stands against the current version, best first. */
typedef enum {
    IF_MATCH_FITS,     /* "*", or a strong tag of the current version, alone or in a list */
    IF_MATCH_STALE,    /* well-formed strong tags, none of them the current version */
    IF_MATCH_WEAK,     /* a weak tag (W/"n") among them: RFC 9110 compares If-Match strongly, so it never fits */
    IF_MATCH_UNQUOTED, /* an entry that is no entity-tag (If-Match: 3): never fits either */
} if_match_t;

/* Judges an If-Match value (RFC 9110 13.1.1: "*" or a comma-separated list
 * of entity-tags, compared strongly) against the current version. */
static if_match_t if_match_judge(const char *value, uint64_t current)
{
    if (!strcmp(value, "*"))
        return IF_MATCH_FITS;
    char tag[32];
    snprintf(tag, sizeof tag, "\"%" PRIu64 "\"", current);
    if_match_t worst = IF_MATCH_STALE;
    for (const char *p = value; *p;) {
        while (*p == ' ' || *p == '\t' || *p == ',')
            p++;
        size_t n = strcspn(p, ",");
        while (n > 0 && (p[n - 1] == ' ' || p[n - 1] == '\t'))
            n--;
        if (n == strlen(tag) && !strncmp(p, tag, n))
            return IF_MATCH_FITS;
        bool weak = n >= 2 && p[0] == 'W' && p[1] == '/';
        const char *opaque = weak ? p + 2 : p;
        size_t opaque_length = weak ? n - 2 : n;
        bool quoted = opaque_length >= 2 && opaque[0] == '"' && opaque[opaque_length - 1] == '"'
                      && !memchr(opaque + 1, '"', opaque_length - 2);
        if (n > 0 && !quoted)
            worst = IF_MATCH_UNQUOTED;
        else if (n > 0 && weak && worst == IF_MATCH_STALE)
            worst = IF_MATCH_WEAK;
        p += strcspn(p, ",");
    }
    return worst;
}

/* 412 for an If-Match that does not fit, with the current version (as the
 * 409 of a stale expected_version has it) and what was wrong with it. */
static void if_match_refused(api_response_t *res, const char *if_match, if_match_t judged, uint64_t current)
{
    char detail[200];
    if (judged == IF_MATCH_UNQUOTED)
        snprintf(detail, sizeof detail,
                 "If-Match must be a quoted ETag such as \"%" PRIu64 "\" (the game's version), not %.32s", current,
                 if_match);
    else if (judged == IF_MATCH_WEAK)
        snprintf(detail, sizeof detail,
                 "If-Match %.32s: a weak ETag (W/) never matches, as If-Match compares strongly; the game's ETag is "
                 "\"%" PRIu64 "\"", if_match, current);
    else
        snprintf(detail, sizeof detail, "If-Match %.32s does not match the game's version \"%" PRIu64 "\"", if_match,
                 current);
    api_problem_precondition(res, detail, current);
}

/* The version a change was made against: body expected_version and/or
 * If-Match; every one given must fit. Fills res and returns false on a
 * mismatch (409 for expected_version, 412 for If-Match, both with
 * current_version) or when neither is given (428). */
static bool check_version(const api_request_t *req, const cJSON *root, uint64_t current, uint64_t *expected,
                          api_response_t *res)
{
    const cJSON *item = cJSON_GetObjectItemCaseSensitive(root, "expected_version");
    const char *if_match = api_request_header(req, "If-Match");
    bool has_expected = item != NULL;
    if (!has_expected && !if_match) {
        api_problem(res, API_EPRECONDITION_REQUIRED, "send expected_version (or If-Match) with every change", NULL,
                    NULL);
        return false;
    }
    if (has_expected) {
        if (!cJSON_IsNumber(item) || item->valuedouble < 1 || item->valuedouble > 9007199254740991.0
            || item->valuedouble != (double)(uint64_t)item->valuedouble) {
            api_problem(res, API_EINVALID_FIELD, "'expected_version' must be a whole number from 1", NULL, NULL);
            return false;
        }
        if ((uint64_t)item->valuedouble != current) {
            metrics_version_conflict();
            api_problem_conflict(res, current, (uint64_t)item->valuedouble);
            return false;
        }
    }
    if_match_t judged = if_match ? if_match_judge(if_match, current) : IF_MATCH_FITS;
    if (judged != IF_MATCH_FITS) {
        if_match_refused(res, if_match, judged, current);
        return false;
    }
    *expected = current;
    return true;
}

/* --- one path for every change --- */

/* Applies a change for player `who` to g at g->now_ms, filling *change;
 * false with res filled when refused. */
typedef bool (*change_fn)(const api_request_t *req, const cJSON *root, loaded_t *g, color_t who, change_t *change,
                          game_played_t *played, api_response_t *res);

/* Records the fall of g's flag when it fell by g's load time (Redis's
 * clock): one write, nobody's request (no Idempotency-Key), publishing a
 * "timeout" event. SAVE_MADE also when the flag had not fallen (nothing to
 * write: *fell false). On SAVE_FAILED res holds the problem. */
static save_t record_flag(const api_request_t *req, loaded_t *g, bool *fell, api_response_t *res)
{
    *fell = g->now_ms && game_flag(&g->record.game, g->now_ms);
    if (!*fell)
        return SAVE_MADE;
    change_t change = { .op = STORE_LINE_KEEP, .event = "timeout" };
    idem_request_t nobody;
    memset(&nobody, 0, sizeof nobody);
    api_response_t written = { 0 };
    save_t saved = game_save(req, &written, g, g->record.version, &change, 200, NULL, &nobody, false);
    if (saved == SAVE_FAILED)
        *res = written;
    else
        free(written.body);
    return saved;
}

/* What one attempt at a change came to. */
typedef enum {
    CHANGE_FINAL = 0, /* res is the answer */
    CHANGE_REFUSED,   /* refused on g's content, nothing written: on a cached copy, judge again from the store */
    CHANGE_AGAIN,     /* nothing written, for a reason a fresh load clears (a flag or a change recorded meanwhile) */
} change_outcome_t;

/* A change by player `who` (whose keys live in idem->scope) on the loaded
 * game g. */
static change_outcome_t game_change_by(const api_request_t *req, api_response_t *res, const cJSON *root,
                                       loaded_t *g, color_t who, const idem_request_t *idem, change_fn apply,
                                       bool with_moves)
{
    uint64_t expected = 0;
    change_t change = { .op = STORE_LINE_KEEP };
    game_played_t played;
    change_outcome_t outcome = CHANGE_FINAL;
    bool fell = false;
    save_t flagged = SAVE_MADE;
    if (answered_before(req, idem, res)) {
        /* a kept answer */
    } else if ((flagged = record_flag(req, g, &fell, res)) != SAVE_MADE) {
        outcome = flagged == SAVE_FAILED ? CHANGE_FINAL : CHANGE_AGAIN;
        if (outcome == CHANGE_AGAIN) { /* the answer if no attempt is left */
            api_problem(res, API_EUNAVAILABLE, "the game changed while its fallen flag was being recorded; retry",
                        NULL, NULL);
            res->retry_after = 1;
        }
    } else if (fell) {
        api_problem(res, API_EGAME_OVER, "the flag fell before this request: the game is over on time", NULL, NULL);
    } else if (!check_version(req, root, g->record.version, &expected, res)) {
        outcome = CHANGE_REFUSED;
    } else if (game_is_over(&g->record.game)) {
        api_problem_game(res, GAME_EOVER);
        outcome = CHANGE_REFUSED;
    } else {
        change.deadline_ms = game_flag_deadline(&g->record.game);
        if (!apply(req, root, g, who, &change, &played, res)) {
            outcome = CHANGE_REFUSED;
        } else {
            save_t saved = game_save(req, res, g, expected, &change, 200, NULL, idem, with_moves);
            if (saved == SAVE_MADE && change.played)
                metrics_move_applied();
            outcome = saved == SAVE_STALE ? CHANGE_REFUSED : saved == SAVE_LATE ? CHANGE_AGAIN : CHANGE_FINAL;
        }
    }
    /* A retry racing its own first attempt can see the version that attempt
     * made: its answer is the kept one, not a conflict. */
    if (idem->key && res->problem_code && !strcmp(res->problem_code, "version_conflict")) {
        api_response_t kept = { 0 };
        if (answered_before(req, idem, &kept)) {
            free(res->body);
            *res = kept;
            outcome = CHANGE_FINAL;
        } else {
            free(kept.body);
        }
    }
    return outcome;
}

/* The game for a change: the cached copy when there is one (*from_copy),
 * else the game as stored. A timed game is always read from the store,
 * which brings Redis's clock. False with res filled when it cannot be loaded. */
static bool change_load(const api_request_t *req, store_load_t what, bool use_copy, loaded_t *g, bool *from_copy,
                        api_response_t *res)
{
    memset(g, 0, sizeof *g);
    game_cache_setup(app_of(req)->config->game_cache_slots);
    *from_copy = use_copy && what == STORE_LOAD_CHANGE && tokens_is_id(req->path_param)
                 && game_cache_get(req->path_param, &g->record) && !game_is_timed(&g->record.game);
    if (!*from_copy)
        memset(g, 0, sizeof *g);
    return *from_copy || game_load(req, what, g, res);
}

enum { CHANGE_ATTEMPTS = 4 }; /* loads for one change: a copy, then the store again after a flag or a late write */

static void game_change(const api_request_t *req, api_response_t *res, const char *const *allowed,
                        store_load_t what, change_fn apply)
{
    idem_request_t idem;
    bool with_moves;
    if (!input_query_bool(req, "legal_moves", true, &with_moves, res) || !read_idempotency(req, false, &idem, res))
        return;
    cJSON *root = input_object(req, allowed, res);
    if (!root)
        return;
    loaded_t g;
    bool from_copy, use_copy = true;
    for (int attempt = 1; change_load(req, what, use_copy, &g, &from_copy, res); attempt++) {
        /* Only a player of this game may see a kept answer, and only their
         * own: the token is checked before a retry is answered from it. */
        char caller[TOKENS_HASH_SIZE];
        /* Refused on a copy, even for the token, the answer is the stored
         * game's: the game may be gone (expired) since the copy was made. */
        int who = authenticate(req, &g.record, caller, res);
        change_outcome_t outcome = from_copy ? CHANGE_REFUSED : CHANGE_FINAL;
        if (who >= 0) {
            snprintf(idem.scope, sizeof idem.scope, "{%s}:%s", g.record.id, caller);
            outcome = game_change_by(req, res, root, &g, (color_t)who, &idem, apply, with_moves);
        }
        loaded_free(&g);
        if (outcome == CHANGE_FINAL || (outcome == CHANGE_REFUSED && !from_copy) || attempt == CHANGE_ATTEMPTS)
            break;
        /* Refused on a copy, or to be redone: judged again on the game as stored. */
        game_cache_drop(req->path_param);
        free(res->body);
        memset(res, 0, sizeof *res);
        use_copy = false;
    }
    loaded_free(&g);
    cJSON_Delete(root);
}

static bool apply_move(const api_request_t *req, const cJSON *root, loaded_t *g, color_t who, change_t *change,
                       game_played_t *played, api_response_t *res)
{
    const cJSON *item = cJSON_GetObjectItemCaseSensitive(root, "move");
    if (!cJSON_IsString(item)) {
        api_problem(res, API_EINVALID_FIELD, "'move' must be a string (UCI or SAN)", NULL, NULL);
        return false;
    }
    game_t *game = &g->record.game;
    uint64_t key_before = game->pos.key;
    game_status_t status = game_move(game, who, item->valuestring, strlen(item->valuestring),
                                     (int)app_of(req)->config->max_game_plies, g->now_ms, played);
    if (status == GAME_EILLEGAL_MOVE) {
        char fen[FEN_BUFFER_SIZE];
        fen_format(&game->pos, fen, sizeof fen);
        api_problem_move(res, api_status_for_reason(played->reason), played->message, game->ply_count,
                         item->valuestring, played->reason, fen);
        return false;
    }
    if (status != GAME_OK) {
        api_problem_game(res, status);
        return false;
    }
    change->played = played;
    change->op = STORE_LINE_APPEND;
    change->key_before = key_before;
    change->event = "move";
    return true;
}

/* A refusal; one about the takeback policy names the game's policy. */
static void refuse(api_response_t *res, const game_t *game, game_status_t status)
{
    if (status != GAME_ETAKEBACK_NOT_ALLOWED) {
        api_problem_game(res, status);
        return;
    }
    static const char *const allows[GAME_TAKEBACK_COUNT] = {
        "moves are taken back by agreement: POST /takeback with action offer, then the other player accepts",
        "either player may take back their last move with POST /undo, or by agreement with POST /takeback",
        "no move may be taken back",
    };
    char detail[200];
    snprintf(detail, sizeof detail, "this game's takeback policy is '%s': %s", game_takeback_name(game->takeback),
             allows[game->takeback]);
    api_problem(res, API_ETAKEBACK_NOT_ALLOWED, detail, NULL, NULL);
}


static bool apply_undo(const api_request_t *req, const cJSON *root, loaded_t *g, color_t who, change_t *change,
                       game_played_t *played, api_response_t *res)
{
    (void)req;
    (void)root;
    (void)played;
    game_status_t status = game_undo(&g->record.game, who, g->moves, g->moves_length, g->now_ms);
    if (status != GAME_OK) {
        refuse(res, &g->record.game, status);
        return false;
    }
    /* The move list loses its last entry and the space before it. */
    change->op = STORE_LINE_TRUNCATE;
    change->moves_keep = game_line_keep(g->moves, g->moves_length, 1);
    change->event = "undo";
    return true;
}

static bool apply_takeback(const api_request_t *req, const cJSON *root, loaded_t *g, color_t who, change_t *change,
                           game_played_t *played, api_response_t *res)
{
    static const char *const actions[GAME_TAKEBACK_ACTION_COUNT] = { "offer", "accept", "decline" };
    static const char *const events[GAME_TAKEBACK_ACTION_COUNT] = { "takeback_offer", "takeback_accept",
                                                                     "takeback_decline" };
    (void)req;
    (void)played;
    const cJSON *item = cJSON_GetObjectItemCaseSensitive(root, "action");
    int action = -1;
    for (int i = 0; i < GAME_TAKEBACK_ACTION_COUNT && cJSON_IsString(item); i++)
        if (!strcmp(item->valuestring, actions[i]))
            action = i;
    if (action < 0) {
        api_problem(res, API_EINVALID_FIELD, "'action' must be offer, accept or decline", NULL, NULL);
        return false;
    }
    int plies = 0;
    game_status_t status = game_takeback(&g->record.game, who, (game_takeback_action_t)action, g->moves,
                                         g->moves_length, g->now_ms, &plies);
    if (status != GAME_OK) {
        refuse(res, &g->record.game, status);
        return false;
    }
    change->event = events[action];
    if (plies > 0) { /* accepted: the move list and history lose the plies taken back */
        change->op = STORE_LINE_TRUNCATE;
        change->moves_keep = game_line_keep(g->moves, g->moves_length, plies);
        change->event = "takeback_accept";
    }
    return true;
}

static bool apply_abort(const api_request_t *req, const cJSON *root, loaded_t *g, color_t who, change_t *change,
                        game_played_t *played, api_response_t *res)
{
    (void)req;
    (void)root;
    (void)played;
    game_status_t status = game_abort(&g->record.game, who, g->now_ms);
    if (status != GAME_OK)
        api_problem_game(res, status);
    change->event = "abort";
    return status == GAME_OK;
}

static bool apply_resign(const api_request_t *req, const cJSON *root, loaded_t *g, color_t who, change_t *change,
                         game_played_t *played, api_response_t *res)
{
    (void)req;
    (void)root;
    (void)change;
    (void)played;
    game_status_t status = game_resign(&g->record.game, who, g->now_ms);
    if (status != GAME_OK)
        api_problem_game(res, status);
    change->event = "resign";
    return status == GAME_OK;
}

static bool apply_draw(const api_request_t *req, const cJSON *root, loaded_t *g, color_t who, change_t *change,
                       game_played_t *played, api_response_t *res)
{
    static const char *const actions[GAME_DRAW_ACTION_COUNT] = { "offer", "accept", "decline", "claim" };
    static const char *const events[GAME_DRAW_ACTION_COUNT] = { "draw_offer", "draw_accept", "draw_decline",
                                                                 "draw_claim" };
    (void)req;
    (void)played;
    const cJSON *item = cJSON_GetObjectItemCaseSensitive(root, "action");
    int action = -1;
    for (int i = 0; i < GAME_DRAW_ACTION_COUNT && cJSON_IsString(item); i++)
        if (!strcmp(item->valuestring, actions[i]))
            action = i;
    if (action < 0) {
        api_problem(res, API_EINVALID_FIELD, "'action' must be offer, accept, decline or claim", NULL, NULL);
        return false;
    }
    game_status_t status = game_draw(&g->record.game, who, (game_draw_action_t)action, g->now_ms);
    if (status != GAME_OK)
        api_problem_game(res, status);
    change->event = events[action];
    return status == GAME_OK;
}

void handle_game_move(const api_request_t *req, api_response_t *res)
{
    static const char *const allowed[] = { "move", "expected_version", NULL };
    game_change(req, res, allowed, STORE_LOAD_CHANGE, apply_move);
}

void handle_game_undo(const api_request_t *req, api_response_t *res)
{
    static const char *const allowed[] = { "expected_version", NULL };
    game_change(req, res, allowed, STORE_LOAD_FULL, apply_undo);
}

void handle_game_resign(const api_request_t *req, api_response_t *res)
{
    static const char *const allowed[] = { "expected_version", NULL };
    game_change(req, res, allowed, STORE_LOAD_CHANGE, apply_resign);
}

void handle_game_draw(const api_request_t *req, api_response_t *res)
{
    static const char *const allowed[] = { "action", "expected_version", NULL };
    game_change(req, res, allowed, STORE_LOAD_CHANGE, apply_draw);
}

void handle_game_takeback(const api_request_t *req, api_response_t *res)
{
    static const char *const allowed[] = { "action", "expected_version", NULL };
    game_change(req, res, allowed, STORE_LOAD_FULL, apply_takeback);
}

void handle_game_abort(const api_request_t *req, api_response_t *res)
{
    static const char *const allowed[] = { "expected_version", NULL };
    game_change(req, res, allowed, STORE_LOAD_CHANGE, apply_abort);
}

/* A whole number of milliseconds in [min, max] under key in object, or
 * fallback when absent; false with res filled (naming the field) when not. */
static bool read_ms_field(const cJSON *object, const char *key, int64_t min, int64_t max, int64_t fallback,
                          int64_t *out, api_response_t *res)
{
    const cJSON *item = cJSON_GetObjectItemCaseSensitive(object, key);
    *out = fallback;
    if (!item)
        return true;
    if (cJSON_IsNumber(item) && item->valuedouble >= (double)min && item->valuedouble <= (double)max
        && item->valuedouble == (double)(int64_t)item->valuedouble) {
        *out = (int64_t)item->valuedouble;
        return true;
    }
    char detail[128];
    snprintf(detail, sizeof detail, "'clock.%s' must be a whole number of milliseconds from %lld to %lld", key,
             (long long)min, (long long)max);
    api_problem(res, API_EINVALID_FIELD, detail, NULL, NULL);
    return false;
}

/* The creation's clock ({"initial_ms", "increment_ms"}, or absent/null:
 * untimed) and takeback policy; false with res filled when refused. */
static bool read_rules(const cJSON *root, int64_t *initial_ms, int64_t *increment_ms, game_takeback_t *takeback,
                       api_response_t *res)
{
    const cJSON *clock = cJSON_GetObjectItemCaseSensitive(root, "clock");
    const cJSON *policy = cJSON_GetObjectItemCaseSensitive(root, "takeback");
    *initial_ms = *increment_ms = 0;
    *takeback = GAME_TAKEBACK_AGREEMENT;
    if (clock && !cJSON_IsNull(clock)) {
        for (const cJSON *member = cJSON_IsObject(clock) ? clock->child : NULL; member; member = member->next) {
            if (strcmp(member->string, "initial_ms") && strcmp(member->string, "increment_ms")) {
                char detail[160];
                snprintf(detail, sizeof detail, "unknown field 'clock.%.64s': a clock has only 'initial_ms' and 'increment_ms'",
                         member->string);
                api_problem(res, API_EUNKNOWN_FIELD, detail, NULL, NULL);
                return false;
            }
        }
        if (!cJSON_IsObject(clock) || !cJSON_GetObjectItemCaseSensitive(clock, "initial_ms")) {
            api_problem(res, API_EINVALID_FIELD,
                        "'clock' must be an object with 'initial_ms' (and optionally 'increment_ms')", NULL, NULL);
            return false;
        }
        if (!read_ms_field(clock, "initial_ms", GAME_CLOCK_INITIAL_MIN, GAME_CLOCK_INITIAL_MAX, 0, initial_ms, res)
            || !read_ms_field(clock, "increment_ms", 0, GAME_CLOCK_INCREMENT_MAX, 0, increment_ms, res))
            return false;
    }
    if (policy && !cJSON_IsNull(policy)) {
        int value = cJSON_IsString(policy) ? game_takeback_from_name(policy->valuestring, strlen(policy->valuestring))
                                           : -1;
        if (value < 0) {
            api_problem(res, API_EINVALID_FIELD, "'takeback' must be agreement, free or none", NULL, NULL);
            return false;
        }
        *takeback = (game_takeback_t)value;
    }
    return true;
}

/* The Chess960 start a creation request asks for: *number is
 * "chess960_position" (0..959), a random start for "chess960": true without a
 * "fen", or -1 when the request gives its position another way (or none).
 * False with res filled when the number is no start or contradicts "fen" or
 * "chess960": false. Types of "fen" and "chess960" are checked before. */
static bool read_chess960_start(const cJSON *root, int *number, api_response_t *res)
{
    const cJSON *fen = cJSON_GetObjectItemCaseSensitive(root, "fen");
    if (!input_chess960_position(root, number, res))
        return false;
    bool random = cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(root, "chess960")) && !(fen && !cJSON_IsNull(fen));
    if (*number >= 0 || !random)
        return true;
    uint32_t drawn;
    if (!tokens_random_below(CHESS960_COUNT, &drawn)) {
        api_problem(res, API_EINTERNAL, "no randomness for a Chess960 start", NULL, NULL);
        return false;
    }
    *number = (int)drawn;
    return true;
}

/* Sets up a new game from the creation request; false with res filled when refused. */
static bool new_game(const cJSON *root, loaded_t *g, char tokens[COLOR_COUNT][TOKENS_TOKEN_SIZE],
                     api_response_t *res)
{
    game_record_t *r = &g->record;
    const cJSON *fen = cJSON_GetObjectItemCaseSensitive(root, "fen");
    const cJSON *chess960 = cJSON_GetObjectItemCaseSensitive(root, "chess960");
    if ((fen && !cJSON_IsNull(fen) && !cJSON_IsString(fen))
        || (chess960 && !cJSON_IsNull(chess960) && !cJSON_IsBool(chess960))) {
        api_problem(res, API_EINVALID_FIELD, "'fen' must be a string and 'chess960' true or false", NULL, NULL);
        return false;
    }
    if (!read_name(root, "white", r->players[WHITE].name, res) || !read_name(root, "black", r->players[BLACK].name, res))
        return false;
    int64_t initial_ms, increment_ms;
    game_takeback_t takeback;
    if (!read_rules(root, &initial_ms, &increment_ms, &takeback, res))
        return false;
    const char *fen_text = cJSON_IsString(fen) ? fen->valuestring : FEN_START;
    position_t pos;
    char message[200];
    int number;
    if (!read_chess960_start(root, &number, res))
        return false;
    fen_error_t fe = FEN_OK;
    if (number >= 0)
        (void)chess960_start(number, &pos); /* in range: read_chess960_start() checked */
    else
        fe = fen_parse(fen_text, strlen(fen_text), cJSON_IsTrue(chess960) ? FEN_CHESS960 : 0, &pos, message,
                       sizeof message);
    if (fe != FEN_OK) {
        api_problem_fen(res, fe, message);
        return false;
    }
    game_start(&r->game, &pos);
    (void)game_set_rules(&r->game, initial_ms, increment_ms, takeback); /* within bounds: read_rules checked */
    r->created_at_ms = now_ms();
    if (!tokens_new_id(r->id)) {
        api_problem(res, API_EINTERNAL, "no randomness for an id", NULL, NULL);
        return false;
    }
    for (int c = 0; c < COLOR_COUNT; c++) {
        if (!tokens_new_token(tokens[c]) || !tokens_hash(tokens[c], r->players[c].token_hash)) {
            api_problem(res, API_EINTERNAL, "no randomness for a token", NULL, NULL);
            return false;
        }
    }
    return true;
}

static bool id_in_slot(const char *id, void *slot) { return store_id_slot(id) == *(unsigned *)slot; }

/* A creation under an Idempotency-Key writes its game and the key's record in
 * one step, so on a Redis Cluster both must live in one hash slot: the new
 * id is drawn in the record's slot (store.h). */
static bool id_for_key(const idem_request_t *idem, loaded_t *g, api_response_t *res)
{
    if (!idem->key)
        return true;
    unsigned slot = store_idempotency_slot(idem->scope, idem->key);
    if (!tokens_new_id_where(g->record.id, id_in_slot, &slot)) {
        api_problem(res, API_EINTERNAL, "no randomness for an id", NULL, NULL);
        return false;
    }
    return true;
}

/* --- a new game from PGN --- */

/* What the "pgn" of a creation holds: the move list and history texts as
 * the store keeps them, the game its movetext leaves, its players' names. */
typedef struct {
    buf_t moves, history;
    game_t game;
    char result[8];
    char names[COLOR_COUNT][GAME_NAME_MAX + 1];
} pgn_import_t;

static bool pgn_import_tag(void *ctx, int game, const char *name, const char *value, size_t length)
{
    pgn_import_t *p = ctx;
    (void)game;
    for (int c = 0; c < COLOR_COUNT; c++) {
        /* A name the game could hold; "?" is the PGN's "unknown". */
        if (!strcmp(name, c == WHITE ? "White" : "Black") && length <= GAME_NAME_MAX && strcmp(value, "?")
            && utf8_length(value) <= GAME_NAME_CHARS && game_record_name_ok(value))
            memcpy(p->names[c], value, length + 1);
    }
    return true;
}

static bool pgn_import_move(void *ctx, int game, const position_t *before, const game_played_t *played)
{
    pgn_import_t *p = ctx;
    char entry[GAME_LINE_ENTRY_SIZE + 1], key[GAME_RECORD_HISTORY_ENTRY];
    (void)game;
    if (p->moves.length)
        buf_putc(&p->moves, ' ');
    buf_append(&p->moves, entry, game_line_entry(played, entry));
    game_record_history_entry(before->key, key);
    buf_append(&p->history, key, sizeof key);
    return !buf_failed(&p->moves) && !buf_failed(&p->history);
}

static bool pgn_import_game(void *ctx, const pgn_read_game_t *done)
{
    pgn_import_t *p = ctx;
    p->game = *done->game;
    snprintf(p->result, sizeof p->result, "%s", done->result);
    return true;
}

/* Turns a creation's "pgn" (one game) into g's game and the change that
 * stores its moves: the start position from its FEN/Variant tags, its
 * mainline played as moves are, the clock and takeback policy new_game()
 * read (a clock starts full for both sides at the imported position, see
 * game_adopt_rules), the
 * names from the White/Black tags unless given. A result the final position
 * does not decide ends the game as the PGN says: 1-0 or 0-1 as a
 * resignation by the loser, 1/2-1/2 as a draw by agreement; "*" leaves it
 * active. No "pgn": true with nothing changed. */
static bool game_from_pgn(const api_request_t *req, const cJSON *root, loaded_t *g, pgn_import_t *p, change_t *change,
                          api_response_t *res)
{
    const cJSON *pgn = cJSON_GetObjectItemCaseSensitive(root, "pgn");
    if (!pgn || cJSON_IsNull(pgn))
        return true;
    if (!cJSON_IsString(pgn)) {
        api_problem(res, API_EINVALID_FIELD, "'pgn' must be a string holding one game", NULL, NULL);
        return false;
    }
    static const char *const start_fields[] = { "fen", "chess960", "chess960_position" };
    for (size_t i = 0; i < sizeof start_fields / sizeof start_fields[0]; i++) {
        const cJSON *field = cJSON_GetObjectItemCaseSensitive(root, start_fields[i]);
        if (field && !cJSON_IsNull(field)) {
            char detail[160];
            snprintf(detail, sizeof detail,
                     "give 'pgn' or '%s', not both: the PGN's FEN and Variant tags set the start", start_fields[i]);
            api_problem(res, API_ECONFLICTING_FIELDS, detail, NULL, NULL);
            return false;
        }
    }
    pgn_read_limits_t limits;
    pgn_read_default_limits(&limits);
    limits.max_games = 1;
    limits.max_plies = app_of(req)->config->max_game_plies < GAME_MAX_PLIES ? (int)app_of(req)->config->max_game_plies : GAME_MAX_PLIES;
    pgn_read_callbacks_t callbacks = { pgn_import_tag, pgn_import_move, pgn_import_game };
    pgn_read_error_t error;
    if (pgn_read(pgn->valuestring, strlen(pgn->valuestring), &limits, &callbacks, p, &error) < 0) {
        api_problem_pgn(res, &error);
        return false;
    }
    game_record_t *r = &g->record;
    game_t imported = p->game;
    int64_t now = r->created_at_ms;
    /* The imported moves earned no increment: taking them back gives none back. */
    if (game_adopt_rules(&imported, &r->game, now) != GAME_OK) {
        api_problem(res, API_EINTERNAL, "the imported game does not take the clock", NULL, NULL);
        return false;
    }
    color_t to_move = (color_t)imported.pos.side_to_move;
    if (!strcmp(p->result, "1-0") || !strcmp(p->result, "0-1")) {
        (void)game_resign(&imported, !strcmp(p->result, "1-0") ? BLACK : WHITE, now); /* GAME_EOVER: mate said so */
    } else if (!strcmp(p->result, "1/2-1/2") && !game_is_over(&imported)) {
        (void)game_draw(&imported, to_move, GAME_DRAW_OFFER, now);
        (void)game_draw(&imported, (color_t)!to_move, GAME_DRAW_ACCEPT, now);
    }
    r->game = imported;
    for (int c = 0; c < COLOR_COUNT; c++)
        if (!r->players[c].name[0])
            memcpy(r->players[c].name, p->names[c], sizeof p->names[c]);
    if (buf_failed(&p->moves) || buf_failed(&p->history)) {
        api_problem(res, API_EINTERNAL, "out of memory", NULL, NULL);
        return false;
    }
    g->moves = p->moves.data ? p->moves.data : "";
    g->moves_length = p->moves.length;
    change->op = STORE_LINE_SET;
    change->line = g->moves;
    change->line_length = g->moves_length;
    change->history = p->history.data ? p->history.data : "";
    change->history_length = p->history.length;
    return true;
}

void handle_game_create(const api_request_t *req, api_response_t *res)
{
    static const char *const allowed[] = { "fen", "chess960", "chess960_position", "white", "black", "clock",
                                           "takeback", "pgn", NULL };
    idem_request_t idem;
    bool with_moves;
    if (!input_query_bool(req, "legal_moves", true, &with_moves, res) || !read_idempotency(req, true, &idem, res))
        return;
    snprintf(idem.scope, sizeof idem.scope, "%s", creation_scope);
    cJSON *root = input_object(req, allowed, res);
    if (!root)
        return;
    loaded_t g;
    memset(&g, 0, sizeof g);
    char tokens[COLOR_COUNT][TOKENS_TOKEN_SIZE];
    change_t change = { .op = STORE_LINE_KEEP };
    pgn_import_t *pgn = calloc(1, sizeof *pgn); /* a game_t and two buffers: off the stack */
    if (!pgn)
        api_problem(res, API_EINTERNAL, "out of memory", NULL, NULL);
    else if (!answered_before(req, &idem, res) && new_game(root, &g, tokens, res)
             && game_from_pgn(req, root, &g, pgn, &change, res) && id_for_key(&idem, &g, res))
        (void)game_save(req, res, &g, 0, &change, 201, tokens, &idem, with_moves);
    if (pgn) {
        buf_free(&pgn->moves);
        buf_free(&pgn->history);
        free(pgn);
    }
    loaded_free(&g);
    cJSON_Delete(root);
}

/* Loads game id for a read (what: in full, or its state), recording a
 * fallen flag first (then g is the ended game). False with res filled when
 * it cannot be read. */
static bool read_load(const api_request_t *req, const char *id, store_load_t what, loaded_t *g, api_response_t *res)
{
    for (int attempt = 1;; attempt++) {
        if (!game_load_id(app_of(req)->store, id, what, g, res))
            return false;
        bool fell;
        save_t saved = record_flag(req, g, &fell, res);
        if (saved == SAVE_MADE)
            return true;
        loaded_free(g);
        if (saved == SAVE_FAILED)
            return false;
        if (attempt == CHANGE_ATTEMPTS) { /* the game keeps changing under this read */
            api_problem(res, API_EUNAVAILABLE, "the game is changing too fast to be read; retry", NULL, NULL);
            res->retry_after = 1;
            return false;
        }
        free(res->body);
        memset(res, 0, sizeof *res);
    }
}

/* A GET that found the client's copy current (304) and says "Prefer:
 * wait=N": the server is asked to hold it until the game passes version or N
 * seconds pass, then to run this handler again (req->waited_seconds set). */
static void long_poll(const api_request_t *req, api_response_t *res, uint64_t version)
{
    unsigned wait = api_prefer_wait(api_request_header(req, "Prefer"), API_WAIT_MAX_SECONDS);
    if (wait && !req->waited_seconds && !req->draining) {
        res->wait_seconds = wait;
        res->wait_version = version;
    }
}

/* Whether the request's If-None-Match names version (or is "*"). */
static bool client_copy_current(const api_request_t *req, uint64_t version)
{
    char etag[32];
    snprintf(etag, sizeof etag, "\"%" PRIu64 "\"", version);
    const char *if_none_match = api_request_header(req, "If-None-Match");
    return if_none_match && (strstr(if_none_match, etag) || !strcmp(if_none_match, "*"));
}

void handle_game_get(const api_request_t *req, api_response_t *res)
{
    bool with_moves;
    loaded_t g;
    memset(&g, 0, sizeof g);
    if (!input_query_bool(req, "legal_moves", true, &with_moves, res))
        return;
    if (read_load(req, req->path_param, STORE_LOAD_FULL, &g, res)) {
        if (client_copy_current(req, g.record.version)) {
            api_response_set(res, 304, "application/json", calloc(1, 1), 0);
            long_poll(req, res, g.record.version);
        } else {
            size_t length = 0;
            char *body = game_json(&g, with_moves, NULL, false, &length);
            api_response_set(res, 200, "application/json", body, length);
        }
        set_etag(res, g.record.version);
        if (req->waited_seconds)
            snprintf(res->preference_applied, sizeof res->preference_applied, "wait=%u", req->waited_seconds);
        if (!g.legacy && !game_is_timed(&g.record.game)) {
            game_cache_setup(app_of(req)->config->game_cache_slots);
            game_cache_put(&g.record);
        }
    }
    loaded_free(&g);
}

/* The squares of the last move in a move list (well formed), or SQ_NONE. */
static void last_move_squares(const char *line, size_t length, board_svg_options_t *options)
{
    options->lastmove_from = options->lastmove_to = SQ_NONE;
    const char *entry = line + length;
    while (entry > line && entry[-1] != ' ')
        entry--;
    const char *colon = memchr(entry, ':', (size_t)(line + length - entry));
    uci_text_t move;
    if (colon && uci_read(entry, (size_t)(colon - entry), &move)) {
        options->lastmove_from = move.from;
        options->lastmove_to = move.to;
    }
}

/* GET /v1/games/{id}/board.svg: the current position with the last move
 * and a check marked, the version as ETag (304 when If-None-Match names it). */
void handle_game_board_svg(const api_request_t *req, api_response_t *res)
{
    board_svg_options_t options;
    loaded_t g;
    memset(&g, 0, sizeof g);
    if (!board_svg_read_query(req, false, &options, res))
        return;
    if (read_load(req, req->path_param, STORE_LOAD_FULL, &g, res)) {
        if (client_copy_current(req, g.record.version)) {
            api_response_set(res, 304, BOARD_SVG_CONTENT_TYPE, calloc(1, 1), 0);
        } else {
            last_move_squares(g.moves ? g.moves : "", g.moves ? g.moves_length : 0, &options);
            board_svg_respond(res, &g.record.game.pos, &options);
        }
        set_etag(res, g.record.version);
    }
    loaded_free(&g);
}

/* The PGN TimeControl of a clock: seconds and increment ("300+2", "0.5"
 * written as such), "-" for an untimed game. */
static void time_control(const game_t *g, char *out, size_t size)
{
    if (!game_is_timed(g)) {
        snprintf(out, size, "-");
        return;
    }
    int64_t parts[2] = { g->clock.initial_ms, g->clock.increment_ms };
    size_t n = 0;
    for (int i = 0; i < 2 && n < size; i++) {
        int64_t ms = parts[i];
        n += (size_t)snprintf(out + n, size - n, i ? "+%lld" : "%lld", (long long)(ms / 1000));
        if (ms % 1000 && n < size) { /* a fraction of a second, its trailing zeros dropped */
            char fraction[8];
            snprintf(fraction, sizeof fraction, "%03d", (int)(ms % 1000));
            for (int k = 2; k > 0 && fraction[k] == '0'; k--)
                fraction[k] = '\0';
            n += (size_t)snprintf(out + n, size - n, ".%s", fraction);
        }
    }
}

void handle_game_pgn(const api_request_t *req, api_response_t *res)
{
    loaded_t g;
    memset(&g, 0, sizeof g);
    if (read_load(req, req->path_param, STORE_LOAD_FULL, &g, res)) {
        const game_record_t *r = &g.record;
        char control[48];
        time_control(&r->game, control, sizeof control);
        pgn_game_t pgn = {
            .white = r->players[WHITE].name,
            .black = r->players[BLACK].name,
            .created_at_ms = r->created_at_ms,
            .initial = &r->game.initial,
            .result = game_result_name(r->game.result),
            .over = game_is_over(&r->game),
            .termination = r->game.state == GAME_TIMEOUT   ? "time forfeit"
                           : r->game.state == GAME_ABORTED ? "abandoned"
                                                           : NULL,
            .time_control = control,
            .moves = g.moves ? g.moves : "",
            .moves_length = g.moves ? g.moves_length : 0,
        };
        size_t length = 0;
        char *text = pgn_write(&pgn, &length);
        api_response_set(res, 200, "application/x-chess-pgn", text, length);
        set_etag(res, r->version);
    }
    loaded_free(&g);
}

/* --- the event side's reads (api/game/game_events.h) --- */

static game_events_status_t events_status(const api_response_t *res)
{
    return res->problem_code && !strcmp(res->problem_code, "game_not_found") ? GAME_EVENTS_NOT_FOUND
                                                                             : GAME_EVENTS_UNAVAILABLE;
}

static void event_meta(const loaded_t *g, const char *type, game_event_meta_t *meta)
{
    memset(meta, 0, sizeof *meta);
    meta->version = g->record.version;
    meta->ended = game_is_over(&g->record.game);
    meta->at_ms = g->now_ms;
    meta->deadline_ms = game_flag_deadline(&g->record.game);
    snprintf(meta->type, sizeof meta->type, "%s", type);
}

game_events_status_t game_events_snapshot(store_t *store, const config_t *config, const char *id, buf_t *out,
                                          game_event_meta_t *meta)
{
    app_t app = { .config = config, .store = store };
    api_request_t req = { .app = &app, .request_id = "events" };
    api_response_t res = { 0 };
    loaded_t g;
    memset(&g, 0, sizeof g);
    game_events_status_t status = GAME_EVENTS_OK;
    if (read_load(&req, id, STORE_LOAD_FULL, &g, &res)) {
        size_t length = 0;
        char *json = game_json(&g, false, NULL, true, &length);
        event_meta(&g, "game", meta);
        if (json)
            buf_append(out, json, length);
        else
            status = GAME_EVENTS_UNAVAILABLE;
        free(json);
    } else {
        status = events_status(&res);
    }
    free(res.body);
    loaded_free(&g);
    return status;
}

game_events_status_t game_events_check_flag(store_t *store, const config_t *config, const char *id,
                                            game_event_meta_t *meta)
{
    app_t app = { .config = config, .store = store };
    api_request_t req = { .app = &app, .request_id = "events" };
    api_response_t res = { 0 };
    loaded_t g;
    memset(&g, 0, sizeof g);
    game_events_status_t status = GAME_EVENTS_OK;
    if (read_load(&req, id, STORE_LOAD_CHANGE, &g, &res))
        event_meta(&g, "change", meta);
    else
        status = events_status(&res);
    free(res.body);
    loaded_free(&g);
    return status;
}
