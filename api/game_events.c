/* See game_events.h. game_event_parse and game_events_channel are the wire
 * format shared with the write script. The snapshot and the flag check here
 * read the game as stored and know no clocks: the game side replaces them
 * with versions that record a fallen flag first. */
#include "game_events.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "../rules/game.h"
#include "../store/game_record.h"
#include "../store/store.h"
#include "json_out.h"
#include "jsonw.h"
#include "tokens.h"

/* Reads a decimal number of at most 18 digits (no sign) ending at `stop`;
 * advances *p past the stop character. */
static bool read_number(const char **p, const char *end, char stop, uint64_t *out)
{
    const char *s = *p;
    uint64_t v = 0;
    int digits = 0;
    while (s < end && *s >= '0' && *s <= '9') {
        if (++digits > 18)
            return false;
        v = v * 10 + (uint64_t)(*s++ - '0');
    }
    if (!digits || s >= end || *s != stop)
        return false;
    *p = s + 1;
    *out = v;
    return true;
}

bool game_event_parse(const char *message, size_t length, game_event_meta_t *meta, const char **json,
                      size_t *json_length)
{
    const char *p = message, *end = message + length;
    uint64_t version, ended, at_ms, deadline_ms;
    if (!read_number(&p, end, ' ', &version) || version == 0 || !read_number(&p, end, ' ', &ended) || ended > 1
        || !read_number(&p, end, ' ', &at_ms) || !read_number(&p, end, ' ', &deadline_ms))
        return false;
    size_t type_length = 0;
    while (p + type_length < end && ((p[type_length] >= 'a' && p[type_length] <= 'z') || p[type_length] == '_'))
        type_length++;
    if (type_length == 0 || type_length >= sizeof meta->type || p + type_length >= end || p[type_length] != '\n')
        return false;
    const char *body = p + type_length + 1;
    size_t body_length = (size_t)(end - body);
    /* One object on one line: a newline would break the stream's framing. */
    if (body_length < 2 || body[0] != '{' || body[body_length - 1] != '}' || memchr(body, '\n', body_length)
        || memchr(body, '\r', body_length))
        return false;
    meta->version = version;
    meta->ended = ended == 1;
    meta->at_ms = (int64_t)at_ms;
    meta->deadline_ms = (int64_t)deadline_ms;
    memcpy(meta->type, p, type_length);
    meta->type[type_length] = '\0';
    *json = body;
    *json_length = body_length;
    return true;
}

void game_events_channel(const char *id, char *out)
{
    snprintf(out, GAME_EVENTS_CHANNEL_SIZE, "chessd:events:{%.40s}", id);
}

/* --- the game read as stored (no clocks) --- */

/* A game as read: the stored texts, and the move list (the stored one, or
 * the one made from a record of the first format, malloc'd in converted). */
typedef struct {
    store_game_t stored;
    game_record_t record;
    char *converted;
    const char *moves;
    size_t moves_length;
} loaded_t;

static void loaded_clear(loaded_t *g)
{
    store_game_clear(&g->stored);
    free(g->converted);
    g->converted = NULL;
}

static game_events_status_t load(struct store *store, const char *id, store_load_t what, loaded_t *g)
{
    memset(g, 0, sizeof *g);
    if (!tokens_is_id(id))
        return GAME_EVENTS_NOT_FOUND;
    store_status_t status = store_game_load(store, id, what, &g->stored);
    if (status == STORE_ENOT_FOUND)
        return GAME_EVENTS_NOT_FOUND;
    if (status != STORE_OK)
        return GAME_EVENTS_UNAVAILABLE;
    const store_game_t *s = &g->stored;
    bool ok;
    if (s->legacy) {
        char *history = NULL;
        size_t history_length = 0;
        ok = game_record_from_legacy(&g->record, s->legacy, s->legacy_length, &g->converted, &g->moves_length,
                                     &history, &history_length);
        free(history);
        g->moves = g->converted;
    } else {
        ok = game_record_read(&g->record, s->state, s->state_length, s->history, s->history_length);
        g->moves = s->moves;
        g->moves_length = s->moves_length;
    }
    if (!ok)
        return GAME_EVENTS_UNAVAILABLE;
    snprintf(g->record.id, sizeof g->record.id, "%s", id);
    g->record.version = s->version;
    return GAME_EVENTS_OK;
}

static void meta_of(const game_record_t *r, game_event_meta_t *meta)
{
    memset(meta, 0, sizeof *meta);
    meta->version = r->version;
    meta->ended = game_is_over(&r->game);
    snprintf(meta->type, sizeof meta->type, "game");
}

static void write_time(jsonw_t *w, const char *key, int64_t ms)
{
    time_t seconds = (time_t)(ms / 1000);
    struct tm tm;
    char when[40];
    gmtime_r(&seconds, &tm);
    size_t n = strftime(when, sizeof when, "%Y-%m-%dT%H:%M:%S", &tm);
    snprintf(when + n, sizeof when - n, ".%03dZ", (int)(ms % 1000));
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

/* The move list "uci:san uci:san" as [{uci, san}]. */
static void write_moves(jsonw_t *w, const char *line, size_t length)
{
    jsonw_key(w, "moves");
    jsonw_array_begin(w);
    for (const char *p = line, *end = line + length; p < end;) {
        const char *stop = memchr(p, ' ', (size_t)(end - p));
        if (!stop)
            stop = end;
        const char *colon = memchr(p, ':', (size_t)(stop - p));
        if (colon) {
            jsonw_object_begin(w);
            jsonw_key(w, "uci");
            jsonw_string_len(w, p, (size_t)(colon - p));
            jsonw_key(w, "san");
            jsonw_string_len(w, colon + 1, (size_t)(stop - colon - 1));
            jsonw_object_end(w);
        }
        p = stop < end ? stop + 1 : end;
    }
    jsonw_array_end(w);
}

static void write_game(jsonw_t *w, const loaded_t *loaded)
{
    const game_record_t *r = &loaded->record;
    static const char *const colors[COLOR_COUNT] = { "white", "black" };
    char fen[FEN_BUFFER_SIZE];
    const game_t *g = &r->game;
    jsonw_object_begin(w);
    jsonw_kv_string(w, "type", "game");
    jsonw_kv_string(w, "id", r->id);
    jsonw_kv_int(w, "version", (long long)r->version);
    for (int c = 0; c < COLOR_COUNT; c++) {
        jsonw_key(w, colors[c]);
        jsonw_object_begin(w);
        write_optional(w, "name", r->players[c].name[0] != '\0', r->players[c].name);
        jsonw_object_end(w);
    }
    jsonw_kv_bool(w, "chess960", g->initial.chess960);
    jsonw_kv_string(w, "initial_fen", fen_format(&g->initial, fen, sizeof fen));
    write_moves(w, loaded->moves ? loaded->moves : "", loaded->moves ? loaded->moves_length : 0);
    jsonw_key(w, "position");
    json_out_position(w, &g->pos, &g->status, false);
    jsonw_kv_string(w, "status", game_state_name(g->state));
    jsonw_kv_string(w, "result", game_result_name(g->result));
    write_optional(w, "termination", g->termination != GAME_TERMINATION_NONE, game_termination_name(g->termination));
    write_optional(w, "draw_offer", g->draw_offer != GAME_OFFER_NONE, game_offer_name(g->draw_offer));
    write_time(w, "created_at", r->created_at_ms);
    write_time(w, "updated_at", r->updated_at_ms);
    jsonw_object_end(w);
}

game_events_status_t game_events_snapshot(struct store *store, const char *id, buf_t *out, game_event_meta_t *meta)
{
    loaded_t g;
    game_events_status_t status = load(store, id, STORE_LOAD_FULL, &g);
    if (status == GAME_EVENTS_OK) {
        jsonw_t w;
        jsonw_init(&w);
        write_game(&w, &g);
        size_t length = 0;
        char *text = jsonw_finish(&w, &length);
        if (text)
            buf_append(out, text, length);
        else
            buf_fail(out);
        free(text);
        meta_of(&g.record, meta);
    }
    loaded_clear(&g);
    return status;
}

game_events_status_t game_events_check_flag(struct store *store, const char *id, game_event_meta_t *meta)
{
    loaded_t g;
    game_events_status_t status = load(store, id, STORE_LOAD_CHANGE, &g);
    if (status == GAME_EVENTS_OK)
        meta_of(&g.record, meta);
    loaded_clear(&g);
    return status;
}
