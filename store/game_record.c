/* The state text of a stored game, and the conversion of records of the
 * first format. The text is one "name value" line a field, in a fixed order
 * (see "The state text" below). Reading is strict (every line, in order,
 * nothing after) and checks the game with game_restore(), so a record this
 * code did not write is refused, never trusted. */
#include "game_record.h"

#include <cjson/cJSON.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../rules/base/decimal.h"
#include "../rules/base/hex.h"
#include "../rules/game_view.h"

/* The state text, after its first line (format_line), one line a field:
 *   created / updated / chess960 / initial / fen / plies / state / result /
 *   termination / offer / takeback / takeback.offer / clock / white.token /
 *   black.token / white.name / black.name
 * The clock is "none" or "<initial> <increment> <white> <black> <turn
 * started>" in milliseconds. " <imported plies>" follows for a game
 * imported with moves that earned no increment (game_clock_t.imported_plies).
 * It is written only when not 0, so texts of games played from their start
 * are as before it existed, and earlier chessd versions still read them.
 * A clock line without it reads as 0: every move from the third ply on
 * earned its increment, true of every game played here from its start. A
 * game imported from PGN before the field existed then has a takeback of
 * its imported moves cost the increments they never earned (never below
 * zero): the rule can only take time away, never mint it.
 * A line "variant <name>" (the API's name) follows chess960 in a game of a
 * variant, and only there, so a standard game's text is as before. A chessd
 * older than it refuses such a text (see k8s/README.md, "Games in Redis").
 * Two lines may follow the names, each only when it says something, so
 * that a game between two people has the same text as before they existed.
 * First "engine <color> level <1-8>" or "engine <color> elo <rating>": the
 * computer plays that side (game_engine_t). Then "analysis 1": a game made
 * with hints allowed. A chessd older than them refuses a text with them
 * (strict reading): only games against the computer have them, which it
 * could not play anyway.
 * Then "first_move <ms>", a timed game's first-move grace
 * (game_clock_t.first_move_ms) when it has one. Last, "opening <key>" (16
 * hex digits) when the game is in a named opening (game_t.opening_key). A
 * chessd older than these two refuses such a text, so every replica runs
 * this version before games are written with them (see k8s/README.md,
 * "Games in Redis").
 * Last of all, "spectator_delay <plies>" (1 to 20) for a game whose
 * spectators see it behind; a chessd older than it refuses such a text.
 * Texts of format 2 (no takeback and clock lines) are read as untimed games
 * with free takebacks, as they were made. They are refused when they end on
 * time or by an abort, which format 2 had not. */
static const char format_line[] = "chessd-game 3";
static const char format_line_2[] = "chessd-game 2";

static unsigned fen_flags(bool chess960) { return chess960 ? FEN_CHESS960 : 0; }

/* A state text being written into a fixed buffer; full once something did
 * not fit (every later put is then a no-op). */
typedef struct {
    char *out;
    size_t size, length;
    bool full;
} text_t;

static void put(text_t *t, const char *s, size_t n)
{
    if (t->full || n >= t->size - t->length) {
        t->full = true;
        return;
    }
    memcpy(t->out + t->length, s, n);
    t->length += n;
}

static void put_text(text_t *t, const char *s) { put(t, s, strlen(s)); }

/* "\n<name> " then value: a line of the state text. */
static void put_line(text_t *t, const char *name_with_space, const char *value)
{
    put(t, "\n", 1);
    put_text(t, name_with_space);
    put_text(t, value);
}

static void put_i64(text_t *t, int64_t v)
{
    char digits[1 + DECIMAL_U64_MAX];
    put(t, digits, decimal_write_signed(v, digits));
}

/* Whether g's clock is one Fischer control for both sides, all its clock
 * line says (no control lines then). */
static bool plain_controls(const game_t *g)
{
    const game_control_t *white = &g->clock.control[WHITE];
    return white->period_count == 1 && !white->delay_ms
           && !memcmp(white, &g->clock.control[BLACK], sizeof *white);
}

/* "\n<name> <moves>/<ms>[,<moves>/<ms>...] <increment> <delay> <mode>" */
static void put_control(text_t *t, const char *name, const game_control_t *c)
{
    put(t, "\n", 1);
    put_text(t, name);
    for (int64_t i = 0; i < c->period_count; i++) {
        put(t, i ? "," : " ", 1);
        put_i64(t, c->periods[i].moves);
        put(t, "/", 1);
        put_i64(t, c->periods[i].ms);
    }
    put(t, " ", 1);
    put_i64(t, c->increment_ms);
    put(t, " ", 1);
    put_i64(t, c->delay_ms);
    put(t, " ", 1);
    put_text(t, game_delay_mode_name((game_delay_mode_t)c->delay_mode));
}

/* "\n<name> <v>" */
static void put_figure(text_t *t, const char *name, int64_t v)
{
    put(t, "\n", 1);
    put_text(t, name);
    put(t, " ", 1);
    put_i64(t, v);
}

/* The lines after the opening, each only when it says something (see "The
 * state text"): controls, start, correspondence and its turn's start, time
 * given, rules, draw offers' first move, draw odds. */
static void put_clock_rules(text_t *t, const game_t *g)
{
    const game_clock_t *c = &g->clock;
    if (game_is_timed(g) && !plain_controls(g)) {
        put_control(t, "control.white", &c->control[WHITE]);
        put_control(t, "control.black", &c->control[BLACK]);
    }
    if (c->start_at_ms)
        put_figure(t, "start_at", c->start_at_ms);
    if (c->days_per_move) {
        put_figure(t, "correspondence", c->days_per_move);
        put(t, " ", 1);
        put_i64(t, c->move_ms);
    }
    if (c->given_ms[WHITE] || c->given_ms[BLACK]) {
        put_figure(t, "given", c->given_ms[WHITE]);
        put(t, " ", 1);
        put_i64(t, c->given_ms[BLACK]);
    }
    if (game_is_correspondence(g) && c->turn_started_ms)
        put_figure(t, "turn", c->turn_started_ms);
    if (g->rules.flags) {
        put(t, "\nrules", sizeof "\nrules" - 1);
        const char *separator = " ";
        for (int64_t bit = 1; bit <= GAME_RULE_ALL; bit <<= 1) {
            if (g->rules.flags & bit) {
                put_text(t, separator);
                put_text(t, game_rule_name(bit));
                separator = ",";
            }
        }
    }
    if (g->rules.draw_offers_from_move)
        put_figure(t, "draw_offers_from", g->rules.draw_offers_from_move);
    if (g->rules.draw_odds)
        put_line(t, "draw_odds ", color_name((color_t)(g->rules.draw_odds - 1)));
}

size_t game_record_state(const game_record_t *r, char *out, size_t size)
{
    const game_t *g = &r->game;
    char initial[FEN_BUFFER_SIZE], current[FEN_BUFFER_SIZE];
    if (!game_record_engine_ok(&r->engine) || size == 0)
        return 0;
    fen_format(&g->initial, initial, sizeof initial);
    fen_format(&g->pos, current, sizeof current);
    text_t t = { out, size, 0, false };
    put_text(&t, format_line);
    put(&t, "\ncreated ", sizeof "\ncreated " - 1);
    put_i64(&t, r->created_at_ms);
    put(&t, "\nupdated ", sizeof "\nupdated " - 1);
    put_i64(&t, r->updated_at_ms);
    put_line(&t, "chess960 ", g->initial.chess960 ? "1" : "0");
    if (g->initial.variant != VARIANT_STANDARD)
        put_line(&t, "variant ", variant_rules((variant_t)g->initial.variant)->key);
    put_line(&t, "initial ", initial);
    put_line(&t, "fen ", current);
    put(&t, "\nplies ", sizeof "\nplies " - 1);
    put_i64(&t, g->ply_count);
    put_line(&t, "state ", game_state_name(g->state));
    put_line(&t, "result ", game_result_name(g->result));
    put_line(&t, "termination ", game_termination_name(g->termination));
    put_line(&t, "offer ", game_offer_name(g->draw_offer));
    put_line(&t, "takeback ", game_takeback_name(g->takeback));
    put_line(&t, "takeback.offer ", game_offer_name(g->takeback_offer));
    if (game_is_timed(g)) {
        const int64_t figures[] = { g->clock.control[WHITE].periods[0].ms, g->clock.control[WHITE].increment_ms,
                                    g->clock.remaining_ms[WHITE],
                                    g->clock.remaining_ms[BLACK], g->clock.turn_started_ms, g->clock.imported_plies };
        put(&t, "\nclock", sizeof "\nclock" - 1);
        /* the sixth, the plies imported, only when there are some */
        for (size_t i = 0; i < (g->clock.imported_plies ? 6u : 5u); i++) {
            put(&t, " ", 1);
            put_i64(&t, figures[i]);
        }
    } else {
        put_line(&t, "clock ", "none");
    }
    put_line(&t, "white.token ", r->players[WHITE].token_hash);
    put_line(&t, "black.token ", r->players[BLACK].token_hash);
    put_line(&t, "white.name ", r->players[WHITE].name);
    put_line(&t, "black.name ", r->players[BLACK].name);
    if (r->engine.plays) {
        const game_engine_t *e = &r->engine;
        put_line(&t, "engine ", color_name(e->color));
        put_text(&t, e->level ? " level " : " elo ");
        put_i64(&t, e->level ? e->level : e->elo);
    }
    if (r->analysis)
        put_line(&t, "analysis ", "1");
    if (g->clock.first_move_ms) {
        put(&t, "\nfirst_move ", sizeof "\nfirst_move " - 1);
        put_i64(&t, g->clock.first_move_ms);
    }
    if (g->opening_key) {
        char key[GAME_RECORD_HISTORY_ENTRY + 1];
        hex_encode_u64(g->opening_key, key);
        put(&t, "\nopening ", sizeof "\nopening " - 1);
        put(&t, key, GAME_RECORD_HISTORY_ENTRY);
    }
    put_clock_rules(&t, g);
    if (r->bulk[0])
        put_line(&t, "bulk ", r->bulk);
    if (r->spectator_delay_plies)
        put_figure(&t, "spectator_delay", r->spectator_delay_plies);
    if (t.full)
        return 0;
    out[t.length] = '\0';
    return t.length;
}

bool game_record_engine_ok(const game_engine_t *e)
{
    if (!e->plays)
        return e->color == WHITE && e->level == 0 && e->elo == 0;
    bool by_level = e->level >= 1 && e->level <= GAME_ENGINE_LEVEL_MAX && e->elo == 0;
    bool by_elo = e->elo >= 1 && e->elo <= GAME_ENGINE_ELO_MAX && e->level == 0;
    return (e->color == WHITE || e->color == BLACK) && (by_level || by_elo);
}

bool game_record_engine_to_move(const game_record_t *r)
{
    return r->engine.plays && r->game.state == GAME_ACTIVE && r->game.pos.side_to_move == r->engine.color;
}

/* A history entry is one position key's 16 hex digits (hex_encode_u64). */
_Static_assert(GAME_RECORD_HISTORY_ENTRY == 16, "a history entry is a 64-bit key in hex");

void game_record_history_entry(uint64_t key, char *out)
{
    hex_encode_u64(key, out);
}

/* A cursor over the state text's lines. */
typedef struct {
    const char *p, *end;
    bool finished; /* the last line was read */
} lines_t;

/* The value of the next line, which must start with name and a space (or be
 * exactly name when value is NULL). */
static bool next_line(lines_t *l, const char *name, const char **value, size_t *length)
{
    if (l->finished)
        return false;
    const char *stop = memchr(l->p, '\n', (size_t)(l->end - l->p));
    if (!stop)
        stop = l->end;
    size_t line = (size_t)(stop - l->p), name_length = strlen(name);
    bool ok;
    if (!value) {
        ok = line == name_length && !memcmp(l->p, name, name_length);
    } else {
        ok = line > name_length && !memcmp(l->p, name, name_length) && l->p[name_length] == ' ';
        if (ok) {
            *value = l->p + name_length + 1;
            *length = line - name_length - 1;
        }
    }
    if (stop == l->end)
        l->finished = true;
    else
        l->p = stop + 1;
    return ok;
}

static bool read_text(lines_t *l, const char *name, char *out, size_t size)
{
    const char *value;
    size_t length;
    if (!next_line(l, name, &value, &length) || length >= size || memchr(value, '\0', length))
        return false;
    memcpy(out, value, length);
    out[length] = '\0';
    return true;
}

/* A line whose value may be empty ("white.name " for no name). */
static bool read_optional_text(lines_t *l, const char *name, char *out, size_t size)
{
    size_t name_length = strlen(name);
    if (!l->finished && (size_t)(l->end - l->p) >= name_length + 1 && !memcmp(l->p, name, name_length)
        && l->p[name_length] == ' ' && (l->p + name_length + 1 == l->end || l->p[name_length + 1] == '\n')) {
        if (l->p + name_length + 1 == l->end)
            l->finished = true;
        else
            l->p += name_length + 2;
        out[0] = '\0';
        return true;
    }
    return read_text(l, name, out, size);
}

static bool read_int(lines_t *l, const char *name, int64_t min, int64_t max, int64_t *out)
{
    char text[24], *end;
    if (!read_text(l, name, text, sizeof text) || !text[0] || (text[0] == '-' ? !text[1] : text[0] < '0'))
        return false;
    long long v = strtoll(text, &end, 10);
    if (*end || v < min || v > max)
        return false;
    *out = v;
    return true;
}

/* Whether the next line is named name (followed by a space); reads nothing. */
static bool line_is(const lines_t *l, const char *name)
{
    size_t name_length = strlen(name);
    return !l->finished && (size_t)(l->end - l->p) > name_length && !memcmp(l->p, name, name_length)
           && l->p[name_length] == ' ';
}

/* The engine line's value, "<color> level <n>" or "<color> elo <n>", into e. */
static bool read_engine(lines_t *l, game_engine_t *e)
{
    char text[48], *end;
    if (!read_text(l, "engine", text, sizeof text))
        return false;
    memset(e, 0, sizeof *e);
    const char *p = NULL;
    for (int c = 0; c < COLOR_COUNT && !p; c++) {
        size_t n = strlen(color_name((color_t)c));
        if (!strncmp(text, color_name((color_t)c), n) && text[n] == ' ') {
            e->color = (color_t)c;
            p = text + n + 1;
        }
    }
    if (!p)
        return false;
    bool level = !strncmp(p, "level ", 6), elo = !strncmp(p, "elo ", 4);
    if (!level && !elo)
        return false;
    p += level ? 6 : 4;
    if (*p < '1' || *p > '9')
        return false;
    long v = strtol(p, &end, 10);
    if (*end || v > GAME_ENGINE_ELO_MAX)
        return false;
    e->plays = true;
    *(level ? &e->level : &e->elo) = (int)v;
    return game_record_engine_ok(e);
}

/* A figure of a line's value at *p: digits (bounded), then *p past them. */
static bool read_figure(const char **p, const char *end, int64_t *out)
{
    const char *q = *p;
    int64_t v = 0;
    for (; q < end && *q >= '0' && *q <= '9'; q++) {
        if (v > INT64_C(900000000000000))
            return false;
        v = v * 10 + (*q - '0');
    }
    if (q == *p)
        return false;
    *out = v;
    *p = q;
    return true;
}

/* A figure, then the separator c (or the end when c is 0). */
static bool read_figure_then(const char **p, const char *end, char c, int64_t *out)
{
    if (!read_figure(p, end, out))
        return false;
    if (!c)
        return *p == end;
    if (*p == end || **p != c)
        return false;
    (*p)++;
    return true;
}

/* A control line's value, as put_control writes it, into c; its bounds are
 * game_restore_rules's. */
static bool read_control(lines_t *l, const char *name, game_control_t *c)
{
    const char *value, *p, *end;
    size_t length;
    if (!next_line(l, name, &value, &length))
        return false;
    memset(c, 0, sizeof *c);
    p = value;
    end = value + length;
    for (;;) {
        if (c->period_count == GAME_PERIODS_MAX)
            return false;
        game_period_t *period = &c->periods[c->period_count++];
        if (!read_figure_then(&p, end, '/', &period->moves) || !read_figure(&p, end, &period->ms) || p == end)
            return false;
        if (*p++ == ' ')
            break;
        if (p[-1] != ',')
            return false;
    }
    const char *mode = NULL;
    if (!read_figure_then(&p, end, ' ', &c->increment_ms) || !read_figure_then(&p, end, ' ', &c->delay_ms))
        return false;
    mode = p;
    c->delay_mode = game_delay_mode_from_name(mode, (size_t)(end - mode));
    return c->delay_mode >= 0;
}

/* "<name> <a> <b>": two figures. */
static bool read_pair(lines_t *l, const char *name, int64_t *a, int64_t *b)
{
    const char *value, *p;
    size_t length;
    if (!next_line(l, name, &value, &length))
        return false;
    p = value;
    return read_figure_then(&p, value + length, ' ', a) && read_figure_then(&p, value + length, 0, b);
}

/* The rules line's value: rule names, comma-separated, each once. */
static bool read_rules_line(lines_t *l, game_rules_t *rules)
{
    const char *value;
    size_t length;
    if (!next_line(l, "rules", &value, &length))
        return false;
    const char *p = value, *end = value + length;
    while (p < end) {
        const char *stop = memchr(p, ',', (size_t)(end - p));
        if (!stop)
            stop = end;
        int64_t bit = game_rule_from_name(p, (size_t)(stop - p));
        if (!bit || (rules->flags & bit) || (stop < end && stop + 1 == end))
            return false;
        rules->flags |= bit;
        p = stop < end ? stop + 1 : end;
    }
    return rules->flags != 0;
}

/* The lines put_clock_rules writes, each optional, in its order. */
static bool read_clock_rules(lines_t *l, game_clock_t *clock, game_rules_t *rules)
{
    const int64_t ms_max = INT64_C(9000000000000000);
    if (line_is(l, "control.white")) {
        if (!read_control(l, "control.white", &clock->control[WHITE])
            || !read_control(l, "control.black", &clock->control[BLACK]) || clock->control[WHITE].period_count == 0)
            return false;
    }
    if (line_is(l, "start_at") && !read_int(l, "start_at", 1, ms_max, &clock->start_at_ms))
        return false;
    if (line_is(l, "correspondence") && !read_pair(l, "correspondence", &clock->days_per_move, &clock->move_ms))
        return false;
    if (line_is(l, "given") && !read_pair(l, "given", &clock->given_ms[WHITE], &clock->given_ms[BLACK]))
        return false;
    if (line_is(l, "turn") && !read_int(l, "turn", 1, ms_max, &clock->turn_started_ms))
        return false;
    if (line_is(l, "rules") && !read_rules_line(l, rules))
        return false;
    if (line_is(l, "draw_offers_from")
        && !read_int(l, "draw_offers_from", 1, GAME_MAX_PLIES, &rules->draw_offers_from_move))
        return false;
    if (line_is(l, "draw_odds")) {
        char side[8];
        if (!read_text(l, "draw_odds", side, sizeof side))
            return false;
        for (int c = 0; c < COLOR_COUNT; c++)
            if (!strcmp(side, color_name((color_t)c)))
                rules->draw_odds = 1 + c;
        if (!rules->draw_odds)
            return false;
    }
    return true;
}

/* The lines that may follow the names (format 3): engine, then analysis,
 * then first_move (the first-move grace in ms, into clock), then opening
 * (its key, 16 hex digits, into *opening_key; 0 when absent), then the
 * clock's and the rules' lines (read_clock_rules), then bulk (its id), then
 * spectator_delay (plies). */
static bool read_optional_lines(lines_t *l, game_record_t *r, game_clock_t *clock, game_rules_t *rules,
                                uint64_t *opening_key)
{
    if (line_is(l, "engine") && !read_engine(l, &r->engine))
        return false;
    int64_t analysis;
    if (line_is(l, "analysis")) {
        if (!read_int(l, "analysis", 1, 1, &analysis))
            return false;
        r->analysis = true;
    }
    int64_t grace;
    if (line_is(l, "first_move")) {
        if (!read_int(l, "first_move", 1, GAME_FIRST_MOVE_MAX, &grace))
            return false;
        clock->first_move_ms = grace;
    }
    *opening_key = 0;
    if (line_is(l, "opening")) {
        char text[GAME_RECORD_HISTORY_ENTRY + 1];
        if (!read_text(l, "opening", text, sizeof text) || strlen(text) != GAME_RECORD_HISTORY_ENTRY
            || !hex_decode_u64(text, opening_key) || *opening_key == 0)
            return false;
    }
    if (!read_clock_rules(l, clock, rules))
        return false;
    if (line_is(l, "bulk")
        && !(read_text(l, "bulk", r->bulk, sizeof r->bulk) && r->bulk[0] && !strpbrk(r->bulk, " {}")))
        return false;
    int64_t delay;
    if (line_is(l, "spectator_delay")) {
        if (!read_int(l, "spectator_delay", 1, GAME_VIEW_DELAY_MAX, &delay))
            return false;
        r->spectator_delay_plies = (int)delay;
    }
    return true;
}

static int read_name(lines_t *l, const char *name, int (*from_name)(const char *, size_t))
{
    const char *value;
    size_t length;
    return next_line(l, name, &value, &length) ? from_name(value, length) : -1;
}

static bool read_fen(lines_t *l, const char *name, bool chess960, variant_t variant, position_t *pos)
{
    char fen[FEN_BUFFER_SIZE];
    return read_text(l, name, fen, sizeof fen)
           && fen_parse_variant(fen, strlen(fen), variant, fen_flags(chess960), pos, NULL, 0) == FEN_OK;
}

/* The optional variant line: standard chess without it. */
static bool read_variant(lines_t *l, variant_t *variant)
{
    char name[32];
    bool chess960 = false;
    *variant = VARIANT_STANDARD;
    if (!line_is(l, "variant"))
        return true;
    return read_text(l, "variant", name, sizeof name) && variant_from_name(name, strlen(name), variant, &chess960)
           && *variant != VARIANT_STANDARD && !strcmp(name, variant_rules(*variant)->key);
}

bool game_record_name_ok(const char *name)
{
    for (const unsigned char *p = (const unsigned char *)name; *p; p++)
        if (*p < 0x20 || *p == 0x7f || (*p == 0xC2 && p[1] >= 0x80 && p[1] <= 0x9F))
            return false;
    return true;
}

/* The clock line's value: "none", or five whole numbers, and a sixth
 * (the imported plies, from 1 to GAME_MAX_PLIES; game_restore_rules checks
 * it against the game) when the game has one. */
static bool read_clock(lines_t *l, game_clock_t *clock)
{
    char text[120];
    memset(clock, 0, sizeof *clock);
    if (!read_text(l, "clock", text, sizeof text))
        return false;
    if (!strcmp(text, "none"))
        return true;
    int64_t initial_ms = 0, increment_ms = 0;
    int64_t *fields[] = { &initial_ms, &increment_ms, &clock->remaining_ms[WHITE], &clock->remaining_ms[BLACK],
                          &clock->turn_started_ms };
    const char *p = text;
    for (size_t i = 0; i < sizeof fields / sizeof fields[0]; i++) {
        if (i > 0 && *p++ != ' ')
            return false;
        if (*p < '0' || *p > '9')
            return false;
        char *end;
        long long v = strtoll(p, &end, 10);
        if (v < 0 || v > INT64_C(9000000000000000))
            return false;
        *fields[i] = v;
        p = end;
    }
    if (*p == ' ') {
        p++;
        if (*p < '0' || *p > '9')
            return false;
        char *end;
        long long v = strtoll(p, &end, 10);
        if (v < 1 || v > GAME_MAX_PLIES)
            return false;
        clock->imported_plies = v;
        p = end;
    }
    /* One Fischer control for both sides; control lines, if any, say more. */
    for (int c = 0; c < COLOR_COUNT; c++) {
        clock->control[c].period_count = 1;
        clock->control[c].periods[0].ms = initial_ms;
        clock->control[c].increment_ms = increment_ms;
    }
    return *p == '\0' && initial_ms > 0;
}

static bool is_token_hash(const char *text)
{
    return strlen(text) == GAME_TOKEN_HASH_SIZE - 1 && hex_span(text) == GAME_TOKEN_HASH_SIZE - 1;
}

bool game_record_read(game_record_t *r, const char *state, size_t state_length, const char *history,
                      size_t history_length)
{
    memset(r, 0, sizeof *r);
    lines_t l = { state, state + state_length, false };
    int64_t created, updated, chess960, plies;
    variant_t variant = VARIANT_STANDARD;
    uint64_t opening_key = 0;
    const int64_t ms_max = INT64_C(9000000000000000);
    position_t initial, current;
    lines_t first = l;
    bool format_2 = next_line(&first, format_line_2, NULL, NULL);
    if (format_2)
        l = first;
    if ((!format_2 && !next_line(&l, format_line, NULL, NULL)) || !read_int(&l, "created", -ms_max, ms_max, &created)
        || !read_int(&l, "updated", -ms_max, ms_max, &updated) || !read_int(&l, "chess960", 0, 1, &chess960)
        || (!format_2 && !read_variant(&l, &variant)) || (chess960 && variant != VARIANT_STANDARD)
        || !read_fen(&l, "initial", chess960, variant, &initial) || !read_fen(&l, "fen", chess960, variant, &current)
        || !read_int(&l, "plies", 0, GAME_MAX_PLIES, &plies))
        return false;
    int state_value = read_name(&l, "state", game_state_from_name);
    int result = read_name(&l, "result", game_result_from_name);
    int termination = read_name(&l, "termination", game_termination_from_name);
    int offer = read_name(&l, "offer", game_offer_from_name);
    /* Format 2 games were made when /undo was the only takeback, with no
     * clock and no abort: such a text that ended on time or by an abort is
     * not one this code wrote. */
    if (format_2 && (state_value == GAME_TIMEOUT || state_value == GAME_ABORTED))
        return false;
    int takeback = GAME_TAKEBACK_FREE, takeback_offer = GAME_OFFER_NONE;
    game_clock_t clock = { 0 };
    game_rules_t game_rules = { 0 };
    if (!format_2) {
        takeback = read_name(&l, "takeback", game_takeback_from_name);
        takeback_offer = read_name(&l, "takeback.offer", game_offer_from_name);
        if (!read_clock(&l, &clock))
            return false;
    }
    if (state_value < 0 || result < 0 || termination < 0 || offer < 0 || takeback < 0 || takeback_offer < 0
        || !read_text(&l, "white.token", r->players[WHITE].token_hash, GAME_TOKEN_HASH_SIZE)
        || !read_text(&l, "black.token", r->players[BLACK].token_hash, GAME_TOKEN_HASH_SIZE)
        || !is_token_hash(r->players[WHITE].token_hash) || !is_token_hash(r->players[BLACK].token_hash)
        || !read_optional_text(&l, "white.name", r->players[WHITE].name, sizeof r->players[WHITE].name)
        || !read_optional_text(&l, "black.name", r->players[BLACK].name, sizeof r->players[BLACK].name)
        || (!format_2 && !read_optional_lines(&l, r, &clock, &game_rules, &opening_key))
        || !l.finished /* something after the last line */
        || !game_record_name_ok(r->players[WHITE].name) || !game_record_name_ok(r->players[BLACK].name))
        return false;
    if (history_length % GAME_RECORD_HISTORY_ENTRY || history_length / GAME_RECORD_HISTORY_ENTRY > GAME_HISTORY_MAX)
        return false;
    uint64_t keys[GAME_HISTORY_MAX];
    int count = (int)(history_length / GAME_RECORD_HISTORY_ENTRY);
    for (int i = 0; i < count; i++)
        if (!hex_decode_u64(history + i * GAME_RECORD_HISTORY_ENTRY, &keys[i]))
            return false;
    r->created_at_ms = created;
    r->updated_at_ms = updated;
    if (game_restore(&r->game, &initial, &current, keys, count, (int)plies, (game_state_t)state_value,
                     (game_result_t)result, (game_termination_t)termination, (game_offer_t)offer)
            != GAME_OK
        || game_restore_rules(&r->game, (game_takeback_t)takeback, (game_offer_t)takeback_offer, &clock, &game_rules)
               != GAME_OK)
        return false;
    /* A text with no opening line is a game in none, or one stored before
     * the line existed: that one gets its current position's name, if any,
     * and follows the opening from its next move on. */
    const opening_t *named = opening_key ? NULL : opening_at(&current);
    game_restore_opening(&r->game, opening_key ? opening_key : named ? named->key : 0);
    return true;
}

/* --- the first format: {"id", "created_at", "updated_at", "chess960", "initial_fen", "fen", "status",
 * "result", "termination", "draw_offer" (-1, 0 white, 1 black), "moves": [uci...], "players": {...}} --- */

static const cJSON *member(const cJSON *root, const char *key) { return cJSON_GetObjectItemCaseSensitive(root, key); }

static bool copy_string(const cJSON *root, const char *key, char *out, size_t size)
{
    const cJSON *item = member(root, key);
    if (!cJSON_IsString(item) || strlen(item->valuestring) >= size)
        return false;
    strcpy(out, item->valuestring);
    return true;
}

static bool read_ms(const cJSON *root, const char *key, int64_t *out)
{
    const cJSON *item = member(root, key);
    if (!cJSON_IsNumber(item) || !(item->valuedouble >= -9e15 && item->valuedouble <= 9e15))
        return false;
    *out = (int64_t)item->valuedouble;
    return true;
}

static int legacy_name(const cJSON *root, const char *key, int (*from_name)(const char *, size_t))
{
    const cJSON *item = member(root, key);
    return cJSON_IsString(item) ? from_name(item->valuestring, strlen(item->valuestring)) : -1;
}

/* Plays the UCI moves on initial, writing the move list (with SAN) and every
 * history entry. False when a move is not legal or out of memory. */
static bool legacy_line(const position_t *initial, const cJSON *moves, char **line, size_t *line_length,
                        char **history, size_t *history_length)
{
    int count = cJSON_GetArraySize(moves);
    if (count > GAME_MAX_PLIES)
        return false;
    *line = malloc((size_t)count * GAME_LINE_ENTRY_SIZE + 1);
    *history = malloc((size_t)count * GAME_RECORD_HISTORY_ENTRY + 1);
    if (!*line || !*history)
        return false;
    size_t n = 0, h = 0;
    position_t pos = *initial;
    for (const cJSON *m = moves->child; m; m = m->next) {
        uci_text_t uci;
        if (!cJSON_IsString(m) || !uci_read(m->valuestring, strlen(m->valuestring), &uci))
            return false;
        game_played_t played;
        memset(&played, 0, sizeof played);
        played.move = uci_to_move(&pos, &uci);
        if (!movegen_is_legal(&pos, played.move))
            return false;
        uci_format(&pos, played.move, played.uci);
        san_format(&pos, played.move, played.san);
        if (n)
            (*line)[n++] = ' ';
        n += game_line_entry(&played, *line + n);
        game_record_history_entry(pos.key, *history + h);
        h += GAME_RECORD_HISTORY_ENTRY;
        position_undo_t undo;
        position_make(&pos, played.move, &undo);
    }
    (*line)[n] = '\0';
    (*history)[h] = '\0';
    *line_length = n;
    *history_length = h;
    return true;
}

bool game_record_from_legacy(game_record_t *r, const char *text, size_t length, char **moves, size_t *moves_length,
                             char **history, size_t *history_length)
{
    memset(r, 0, sizeof *r);
    *moves = *history = NULL;
    const char *end = NULL;
    cJSON *root = cJSON_ParseWithLengthOpts(text, length, &end, 0);
    bool ok = false;
    if (!root)
        return false;
    while (end < text + length && (*end == ' ' || *end == '\n' || *end == '\r' || *end == '\t'))
        end++;
    const cJSON *chess960 = member(root, "chess960"), *line = member(root, "moves"), *players = member(root, "players");
    const cJSON *offer = member(root, "draw_offer"), *termination_item = member(root, "termination");
    char initial_fen[FEN_BUFFER_SIZE];
    position_t initial;
    int state = legacy_name(root, "status", game_state_from_name);
    int result = legacy_name(root, "result", game_result_from_name);
    int termination = cJSON_IsString(termination_item) && !termination_item->valuestring[0]
                          ? (int)GAME_TERMINATION_NONE
                          : legacy_name(root, "termination", game_termination_from_name);
    if (end != text + length || !copy_string(root, "id", r->id, sizeof r->id)
        || !read_ms(root, "created_at", &r->created_at_ms) || !read_ms(root, "updated_at", &r->updated_at_ms)
        || !cJSON_IsBool(chess960) || !copy_string(root, "initial_fen", initial_fen, sizeof initial_fen)
        || !cJSON_IsArray(line) || !cJSON_IsObject(players) || !cJSON_IsNumber(offer) || state < 0 || result < 0
        || termination < 0
        || fen_parse(initial_fen, strlen(initial_fen), fen_flags(cJSON_IsTrue(chess960)), &initial, NULL, 0) != FEN_OK)
        goto done;
    /* A player the state text cannot hold (a name is one line, a token hash
     * 64 hex digits) is refused now, not once the conversion is written. */
    for (int c = 0; c < COLOR_COUNT; c++) {
        const cJSON *p = member(players, color_name((color_t)c));
        if (!copy_string(p, "name", r->players[c].name, sizeof r->players[c].name)
            || !copy_string(p, "token_hash", r->players[c].token_hash, sizeof r->players[c].token_hash)
            || !game_record_name_ok(r->players[c].name) || !is_token_hash(r->players[c].token_hash))
            goto done;
    }
    game_offer_t draw_offer = offer->valuedouble == WHITE   ? GAME_OFFER_WHITE
                              : offer->valuedouble == BLACK ? GAME_OFFER_BLACK
                                                            : GAME_OFFER_NONE;
    /* The first format had no clock, no abort and free takebacks (/undo). */
    game_clock_t untimed = { 0 };
    game_rules_t none = { 0 };
    ok = state != GAME_TIMEOUT && state != GAME_ABORTED
         && legacy_line(&initial, line, moves, moves_length, history, history_length)
         && game_replay(&r->game, &initial, *moves, *moves_length, (game_state_t)state, (game_result_t)result,
                        (game_termination_t)termination, draw_offer)
                == GAME_OK
         && game_restore_rules(&r->game, GAME_TAKEBACK_FREE, GAME_OFFER_NONE, &untimed, &none) == GAME_OK;
done:
    cJSON_Delete(root);
    if (!ok) {
        free(*moves);
        free(*history);
        *moves = *history = NULL;
    }
    return ok;
}
