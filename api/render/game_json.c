/* The Game and GameChange objects (game_json.h). Once a game is over its
 * position's status, result and draw_reason are the game's (a resigned
 * game's position says "resigned", not "active"); the clock figures are
 * computed for the instant given, so every answer tells the time it was made
 * at ("at_ms"). */
#include "game_json.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "../http/jsonw.h"
#include "pgn.h"
#include "position_json.h"

/* Writes v as `digits` decimal digits, zeros in front. */
static char *put_digits(char *out, int64_t v, int digits)
{
    for (int i = digits - 1; i >= 0; i--, v /= 10)
        out[i] = (char)('0' + v % 10);
    return out + digits;
}

void game_json_iso_time(int64_t ms, char out[GAME_JSON_TIME_SIZE])
{
    /* 1970-01-01 to 9999-12-31 by hand (every answer carries two or three):
     * the civil date of a day count, counted in 400-year eras of 146,097
     * days from 0000-03-01, so that a leap day ends its year. */
    if (ms < 0 || ms >= INT64_C(253402300800000)) {
        time_t seconds = (time_t)(ms / 1000);
        struct tm tm;
        size_t n = gmtime_r(&seconds, &tm) ? strftime(out, GAME_JSON_TIME_SIZE, "%Y-%m-%dT%H:%M:%S", &tm) : 0;
        snprintf(out + n, GAME_JSON_TIME_SIZE - n, ".%03dZ", (int)((ms % 1000 + 1000) % 1000));
        return;
    }
    int64_t days = ms / 86400000, in_day = ms % 86400000;
    int64_t z = days + 719468; /* days since 0000-03-01 */
    int64_t era = z / 146097, day_of_era = z - era * 146097;
    int64_t year_of_era = (day_of_era - day_of_era / 1460 + day_of_era / 36524 - day_of_era / 146096) / 365;
    int64_t day_of_year = day_of_era - (365 * year_of_era + year_of_era / 4 - year_of_era / 100);
    int64_t month_from_march = (5 * day_of_year + 2) / 153;
    int64_t day = day_of_year - (153 * month_from_march + 2) / 5 + 1;
    int64_t month = month_from_march < 10 ? month_from_march + 3 : month_from_march - 9;
    int64_t year = year_of_era + era * 400 + (month <= 2);
    char *p = put_digits(out, year, 4);
    *p++ = '-';
    p = put_digits(p, month, 2);
    *p++ = '-';
    p = put_digits(p, day, 2);
    *p++ = 'T';
    p = put_digits(p, in_day / 3600000, 2);
    *p++ = ':';
    p = put_digits(p, in_day / 60000 % 60, 2);
    *p++ = ':';
    p = put_digits(p, in_day / 1000 % 60, 2);
    *p++ = '.';
    p = put_digits(p, in_day % 1000, 3);
    *p++ = 'Z';
    *p = '\0';
}

static void write_time(jsonw_t *w, const char *key, int64_t ms)
{
    char when[GAME_JSON_TIME_SIZE];
    game_json_iso_time(ms, when);
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

/* One side's control: {initial_ms, increment_ms, delay_ms, delay_mode,
 * periods: [{moves, ms}...]} (a period's moves null for the rest of the game). */
static void write_control(jsonw_t *w, const game_control_t *c)
{
    jsonw_object_begin(w);
    jsonw_kv_int(w, "initial_ms", (long long)c->periods[0].ms);
    jsonw_kv_int(w, "increment_ms", (long long)c->increment_ms);
    jsonw_kv_int(w, "delay_ms", (long long)c->delay_ms);
    jsonw_kv_string(w, "delay_mode", game_delay_mode_name((game_delay_mode_t)c->delay_mode));
    jsonw_key(w, "periods");
    jsonw_array_begin(w);
    for (int64_t i = 0; i < c->period_count; i++) {
        jsonw_object_begin(w);
        if (c->periods[i].moves)
            jsonw_kv_int(w, "moves", (long long)c->periods[i].moves);
        else
            jsonw_kv_null(w, "moves");
        jsonw_kv_int(w, "ms", (long long)c->periods[i].ms);
        jsonw_object_end(w);
    }
    jsonw_array_end(w);
    jsonw_object_end(w);
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
    jsonw_kv_int(w, "initial_ms", (long long)g->clock.control[WHITE].periods[0].ms);
    jsonw_kv_int(w, "increment_ms", (long long)g->clock.control[WHITE].increment_ms);
    for (int c = 0; c < COLOR_COUNT; c++) {
        jsonw_key(w, color_name((color_t)c));
        write_control(w, &g->clock.control[c]);
    }
    if (g->clock.start_at_ms)
        jsonw_kv_int(w, "start_at_ms", (long long)g->clock.start_at_ms);
    else
        jsonw_kv_null(w, "start_at_ms");
    jsonw_key(w, "given_ms");
    jsonw_object_begin(w);
    for (int c = 0; c < COLOR_COUNT; c++)
        jsonw_kv_int(w, color_name((color_t)c), (long long)g->clock.given_ms[c]);
    jsonw_object_end(w);
    jsonw_kv_int(w, "first_move_ms", (long long)g->clock.first_move_ms);
    jsonw_key(w, "abort_at_ms");
    if (game_first_move_deadline(g))
        jsonw_int(w, (long long)game_first_move_deadline(g));
    else
        jsonw_null(w);
    jsonw_kv_int(w, "white_ms", (long long)game_clock_remaining(g, WHITE, now_ms));
    jsonw_kv_int(w, "black_ms", (long long)game_clock_remaining(g, BLACK, now_ms));
    /* Whose clock counts down now: none before a start time that is still to come. */
    bool runs = game_clock_running(g) && (g->ply_count >= 2 || g->clock.start_at_ms <= now_ms);
    write_optional(w, "running", runs, color_name(g->pos.side_to_move));
    jsonw_kv_int(w, "at_ms", (long long)now_ms);
    jsonw_object_end(w);
}

/* The position, the game's ending, offers and clock, common to both
 * objects; moves_span as position_json_write_ended's. */
static void write_state(jsonw_t *w, const game_t *g, bool with_moves, int64_t now_ms, size_t moves_span[2])
{
    position_json_ending_t ending = {
        game_state_name(g->state), game_result_name(g->result),
        g->state == GAME_DRAW && g->termination != GAME_TERMINATION_DRAW_ODDS ? game_termination_name(g->termination)
                                                                               : NULL,
    };
    jsonw_key(w, "position");
    position_json_write_ended(w, &g->pos, &g->status, game_is_over(g) ? &ending : NULL, game_opening(g),
                              with_moves && !game_is_over(g), moves_span);
    jsonw_kv_string(w, "status", game_state_name(g->state));
    jsonw_kv_string(w, "result", game_result_name(g->result));
    write_optional(w, "termination", g->termination != GAME_TERMINATION_NONE, game_termination_name(g->termination));
    write_optional(w, "draw_offer", g->draw_offer != GAME_OFFER_NONE, game_offer_name(g->draw_offer));
    jsonw_kv_string(w, "takeback", game_takeback_name(g->takeback));
    write_optional(w, "takeback_offer", g->takeback_offer != GAME_OFFER_NONE, game_offer_name(g->takeback_offer));
    write_clock(w, g, now_ms);
    int64_t deadline = game_flag_deadline(g);
    if (deadline)
        jsonw_kv_int(w, "deadline_ms", (long long)deadline);
    else
        jsonw_kv_null(w, "deadline_ms");
}

/* What a game was created with and never changes: correspondence days,
 * the TimeControl text, the rules switched on, draw offers' first move,
 * draw odds. */
static void write_terms(jsonw_t *w, const game_t *g)
{
    if (g->clock.days_per_move)
        jsonw_kv_int(w, "days_per_move", (long long)g->clock.days_per_move);
    else
        jsonw_kv_null(w, "days_per_move");
    char control[PGN_TIME_CONTROL_SIZE];
    pgn_time_control(g, control, sizeof control);
    jsonw_kv_string(w, "time_control", control);
    jsonw_key(w, "rules");
    jsonw_array_begin(w);
    for (int64_t bit = 1; bit <= GAME_RULE_ALL; bit <<= 1)
        if (g->rules.flags & bit)
            jsonw_string(w, game_rule_name(bit));
    jsonw_array_end(w);
    if (g->rules.draw_offers_from_move)
        jsonw_kv_int(w, "draw_offers_from_move", (long long)g->rules.draw_offers_from_move);
    else
        jsonw_kv_null(w, "draw_offers_from_move");
    write_optional(w, "draw_odds", g->rules.draw_odds != 0,
                   g->rules.draw_odds ? color_name((color_t)(g->rules.draw_odds - 1)) : NULL);
}

/* The moves of a move list as [{uci, san}] and, beside them, "clocks":
 * each mover's time after its move, null where the entry has none (an
 * untimed game, or moves stored before clocks were kept). The list is
 * well formed. */
static void write_moves(jsonw_t *w, const char *line, size_t length)
{
    const char *end = line + length;
    for (int pass = 0; pass < 2; pass++) {
        jsonw_key(w, pass ? "clocks" : "moves");
        jsonw_array_begin(w);
        for (const char *p = line; p < end;) {
            const char *stop = memchr(p, ' ', (size_t)(end - p));
            if (!stop)
                stop = end;
            const char *colon = memchr(p, ':', (size_t)(stop - p));
            const char *clock = memchr(colon + 1, ':', (size_t)(stop - colon - 1));
            if (pass == 0) {
                jsonw_object_begin(w);
                jsonw_key(w, "uci");
                jsonw_string_len(w, p, (size_t)(colon - p));
                jsonw_key(w, "san");
                jsonw_string_len(w, colon + 1, (size_t)((clock ? clock : stop) - colon - 1));
                jsonw_object_end(w);
            } else if (clock) {
                jsonw_raw_n(w, clock + 1, (size_t)(stop - clock - 1));
            } else {
                jsonw_null(w);
            }
            p = stop < end ? stop + 1 : end;
        }
        jsonw_array_end(w);
    }
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

/* "tags", always an object (names need no escaping: PGN symbols), and
 * "metadata", the object as given or null. */
static void write_meta(jsonw_t *w, const game_meta_t *meta)
{
    jsonw_key(w, "tags");
    jsonw_object_begin(w);
    for (int i = 0; meta && i < meta->count; i++)
        jsonw_kv_string(w, meta->tags[i].name, meta->tags[i].value);
    jsonw_object_end(w);
    jsonw_key(w, "metadata");
    if (meta && meta->metadata)
        jsonw_raw_n(w, meta->metadata, meta->metadata_length);
    else
        jsonw_null(w);
}

char *game_json_game(const game_record_t *r, const game_meta_t *meta, const char *moves, size_t moves_length,
                     int64_t now_ms, unsigned flags, const char *const tokens[COLOR_COUNT], size_t *length)
{
    char fen[FEN_BUFFER_SIZE];
    jsonw_t w;
    jsonw_init(&w);
    jsonw_object_begin(&w);
    if (flags & GAME_JSON_EVENT)
        jsonw_kv_string(&w, "type", "game");
    jsonw_kv_string(&w, "id", r->id);
    jsonw_kv_int(&w, "version", (long long)r->version);
    for (int c = 0; c < COLOR_COUNT; c++) {
        jsonw_key(&w, color_name((color_t)c));
        jsonw_object_begin(&w);
        write_optional(&w, "name", r->players[c].name[0] != '\0', r->players[c].name);
        if (r->engine.plays && r->engine.color == (color_t)c) {
            jsonw_key(&w, "engine");
            jsonw_object_begin(&w);
            if (r->engine.level)
                jsonw_kv_int(&w, "level", r->engine.level);
            else
                jsonw_kv_int(&w, "elo", r->engine.elo);
            jsonw_object_end(&w);
        }
        jsonw_object_end(&w);
    }
    /* Hints (GET /analysis) while the game is played: against the computer, or when created so. */
    jsonw_kv_bool(&w, "analysis", r->analysis || r->engine.plays);
    jsonw_kv_bool(&w, "chess960", r->game.initial.chess960);
    jsonw_kv_string(&w, "variant", variant_rules((variant_t)r->game.initial.variant)->key);
    write_chess960_position(&w, &r->game.initial);
    jsonw_kv_string(&w, "initial_fen", fen_format(&r->game.initial, fen, sizeof fen));
    write_moves(&w, moves ? moves : "", moves ? moves_length : 0);
    write_terms(&w, &r->game);
    write_state(&w, &r->game, flags & GAME_JSON_LEGAL_MOVES, now_ms, NULL);
    write_time(&w, "created_at", r->created_at_ms);
    write_time(&w, "updated_at", r->updated_at_ms);
    write_meta(&w, meta);
    write_optional(&w, "bulk", r->bulk[0] != '\0', r->bulk);
    jsonw_kv_int(&w, "spectator_delay_plies", r->spectator_delay_plies);
    jsonw_kv_int(&w, "plies_hidden", r->plies_hidden);
    if (tokens) {
        jsonw_key(&w, "tokens");
        jsonw_object_begin(&w);
        for (int c = 0; c < COLOR_COUNT; c++) /* none for the computer's side */
            if (tokens[c])
                jsonw_kv_string(&w, color_name((color_t)c), tokens[c]);
        jsonw_object_end(&w);
    }
    jsonw_object_end(&w);
    return jsonw_finish(&w, length);
}

/* A GameChange into w (game_json_change); moves_span as
 * position_json_write_ended's. */
static void write_change(jsonw_t *w, const game_record_t *r, const game_played_t *played, const char *event,
                         unsigned flags, int64_t now_ms, size_t moves_span[2])
{
    jsonw_object_begin(w);
    if (flags & GAME_JSON_EVENT) {
        jsonw_kv_string(w, "type", "change");
        jsonw_kv_string(w, "event", event);
    }
    jsonw_kv_string(w, "id", r->id);
    jsonw_kv_int(w, "version", (long long)r->version);
    jsonw_key(w, "move");
    if (played) {
        jsonw_object_begin(w);
        jsonw_kv_string(w, "uci", played->uci);
        jsonw_kv_string(w, "san", played->san);
        if (played->clocked)
            jsonw_kv_int(w, "clock_ms", (long long)played->clock_ms);
        jsonw_object_end(w);
    } else {
        jsonw_null(w);
    }
    jsonw_kv_int(w, "move_count", r->game.ply_count);
    write_state(w, &r->game, flags & GAME_JSON_LEGAL_MOVES, now_ms, moves_span);
    write_time(w, "updated_at", r->updated_at_ms);
    jsonw_object_end(w);
}

char *game_json_change(const game_record_t *r, const game_played_t *played, const char *event, unsigned flags,
                       int64_t now_ms, size_t *length)
{
    jsonw_t w;
    jsonw_init(&w);
    write_change(&w, r, played, event, flags, now_ms, NULL);
    return jsonw_finish(&w, length);
}

char *game_json_change_and_event(const game_record_t *r, const game_played_t *played, const char *event,
                                 unsigned flags, int64_t now_ms, size_t *length, char **event_json,
                                 size_t *event_length)
{
    *event_json = NULL;
    size_t span[2] = { 0, 0 };
    jsonw_t w;
    jsonw_init(&w);
    /* Room for a usual answer at once (a few KiB with the legal moves)
     * rather than doubling up to it. */
    buf_reserve(&w.out, (flags & GAME_JSON_LEGAL_MOVES) && !game_is_over(&r->game) ? 8192 : 1024);
    write_change(&w, r, played, event, flags & ~(unsigned)GAME_JSON_EVENT, now_ms, span);
    char *answer = jsonw_finish(&w, length);
    if (!answer)
        return NULL;
    /* The event: its "type" and "event" members, then the answer's after
     * its opening brace, without the legal moves. */
    jsonw_t e;
    jsonw_init(&e);
    buf_reserve(&e.out, strlen(event) + 40 + *length - (span[1] - span[0]));
    jsonw_object_begin(&e);
    jsonw_kv_string(&e, "type", "change");
    jsonw_kv_string(&e, "event", event);
    buf_append(&e.out, ",", 1);
    buf_append(&e.out, answer + 1, span[0] - 1);
    buf_append(&e.out, answer + span[1], *length - span[1]);
    *event_json = jsonw_finish(&e, event_length);
    if (!*event_json) {
        free(answer);
        return NULL;
    }
    return answer;
}
