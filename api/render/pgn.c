/* PGN export (see pgn.h). The tags: the roster, the game's known ones, the
 * server's own (variant, set-up, opening, ending, clock), the game's custom
 * ones. */
#include "pgn.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "../../rules/fen.h"
#include "../http/buf.h"

enum { PGN_LINE_MAX = 80 };

/* A tag pair, its value escaped as the standard asks (\" and \\). */
static void write_tag(buf_t *out, const char *name, const char *value)
{
    buf_printf(out, "[%s \"", name);
    for (const char *p = value; *p; p++) {
        if (*p == '"' || *p == '\\')
            buf_putc(out, '\\');
        buf_putc(out, *p);
    }
    buf_puts(out, "\"]\n");
}

/* A tag of the roster the game's tags may give (Event, Site, Date, Round),
 * else fallback. */
static void write_roster_tag(buf_t *out, const game_meta_t *tags, const char *name, const char *fallback)
{
    const char *value = game_meta_tag(tags, name);
    write_tag(out, name, value ? value : fallback);
}

/* The game's tags that are not the roster's: the known ones (in their
 * table's order), or the custom ones (by name), as tags keeps them. */
static void write_own_tags(buf_t *out, const game_meta_t *tags, bool custom)
{
    for (int i = 0; tags && i < tags->count; i++) {
        const game_tag_t *tag = &tags->tags[i];
        if ((tag->rank == GAME_TAGS_KNOWN) == custom && tag->rank >= GAME_TAGS_ROSTER)
            write_tag(out, tag->name, tag->value);
    }
}

/* Appends a movetext token, breaking the line before it would pass 80 characters. */
static void write_token(buf_t *out, size_t *line_start, const char *token, size_t length)
{
    size_t line = out->length - *line_start;
    if (line > 0 && line + 1 + length > PGN_LINE_MAX) {
        buf_putc(out, '\n');
        *line_start = out->length;
    } else if (line > 0) {
        buf_putc(out, ' ');
    }
    buf_append(out, token, length);
}

/* "{ [%eval e] [%clk h:mm:ss] }" for a move's evaluation (NULL: none)
 * and the clock digits of its move-list entry (ms; NULL: none), as Lichess
 * writes them: the clock in whole seconds (the JSON's clocks are exact). */
static int move_comment(const char *eval, const char *digits, size_t length, char *out, size_t size)
{
    int n = snprintf(out, size, "{ ");
    if (eval)
        n += snprintf(out + n, size - (size_t)n, "[%%eval %s] ", eval);
    if (digits) {
        int64_t ms = 0;
        for (size_t i = 0; i < length && i < 18; i++)
            ms = ms * 10 + (digits[i] - '0');
        int64_t seconds = ms / 1000;
        n += snprintf(out + n, size - (size_t)n, "[%%clk %lld:%02d:%02d] ", (long long)(seconds / 3600),
                      (int)(seconds / 60 % 60), (int)(seconds % 60));
    }
    n += snprintf(out + n, size - (size_t)n, "}");
    return n < (int)size ? n : (int)size - 1;
}

char *pgn_write(const pgn_game_t *game, size_t *length)
{
    buf_t out;
    buf_init(&out);
    char date[16] = "????.??.??", fen[FEN_BUFFER_SIZE];
    time_t seconds = (time_t)(game->created_at_ms / 1000);
    struct tm tm;
    if (gmtime_r(&seconds, &tm))
        strftime(date, sizeof date, "%Y.%m.%d", &tm);
    fen_format(game->initial, fen, sizeof fen);
    write_roster_tag(&out, game->tags, "Event", game->defaults.event ? game->defaults.event : "?");
    write_roster_tag(&out, game->tags, "Site", game->defaults.site ? game->defaults.site : "?");
    write_roster_tag(&out, game->tags, "Date", date);
    write_roster_tag(&out, game->tags, "Round", "-");
    write_tag(&out, "White", game->white[0] ? game->white : "?");
    write_tag(&out, "Black", game->black[0] ? game->black : "?");
    write_tag(&out, "Result", game->result);
    write_own_tags(&out, game->tags, false);
    const variant_rules_t *variant = variant_rules((variant_t)game->initial->variant);
    if (game->initial->chess960)
        write_tag(&out, "Variant", "Chess960");
    else if (game->initial->variant != VARIANT_STANDARD)
        write_tag(&out, "Variant", variant->title); /* Lichess's names */
    if (game->initial->chess960 || strcmp(fen, variant->start_fen)) {
        write_tag(&out, "SetUp", "1");
        write_tag(&out, "FEN", fen);
    }
    if (game->opening) {
        write_tag(&out, "ECO", game->opening->eco);
        write_tag(&out, "Opening", game->opening->name);
    }
    write_tag(&out, "Termination", game->termination ? game->termination : game->over ? "normal" : "unterminated");
    if (game->time_control)
        write_tag(&out, "TimeControl", game->time_control);
    if (game->black_time_control) /* odds: White's is the TimeControl */
        write_tag(&out, "BlackTimeControl", game->black_time_control);
    write_own_tags(&out, game->tags, true);
    buf_putc(&out, '\n');

    size_t line_start = out.length;
    unsigned number = game->initial->fullmove_number;
    bool white = game->initial->side_to_move == WHITE, first = true;
    int ply = 0;
    for (const char *p = game->moves, *end = game->moves + game->moves_length; p < end;) {
        const char *stop = memchr(p, ' ', (size_t)(end - p));
        if (!stop)
            stop = end;
        const char *colon = memchr(p, ':', (size_t)(stop - p));
        const char *san = colon ? colon + 1 : p;
        const char *clock = colon ? memchr(san, ':', (size_t)(stop - san)) : NULL;
        const char *san_end = clock ? clock : stop;
        char token[48];
        int n;
        if (white)
            n = snprintf(token, sizeof token, "%u. %.*s", number, (int)(san_end - san), san);
        else if (first)
            n = snprintf(token, sizeof token, "%u... %.*s", number, (int)(san_end - san), san);
        else
            n = snprintf(token, sizeof token, "%.*s", (int)(san_end - san), san);
        if (n > 0)
            write_token(&out, &line_start, token, (size_t)n < sizeof token ? (size_t)n : sizeof token - 1);
        /* The review's evaluation and the mover's clock after the move, as
         * Lichess writes them; a black move after a comment takes its number again. */
        const char *eval = ply < game->eval_count && game->evals ? game->evals[ply] : NULL;
        ply++;
        first = clock != NULL || eval != NULL;
        if (first) {
            char comment[96];
            n = move_comment(eval, clock ? clock + 1 : NULL, clock ? (size_t)(stop - clock - 1) : 0, comment,
                             sizeof comment);
            write_token(&out, &line_start, comment, (size_t)n);
        }
        if (!white)
            number++;
        white = !white;
        p = stop < end ? stop + 1 : end;
    }
    write_token(&out, &line_start, game->result, strlen(game->result));
    buf_putc(&out, '\n');
    return buf_finish(&out, length);
}

/* Seconds of ms as the TimeControl tag writes them: whole, or with the
 * fraction's trailing zeros dropped ("300", "0.5"). */
static size_t put_seconds(char *out, size_t size, int64_t ms)
{
    size_t n = (size_t)snprintf(out, size, "%lld", (long long)(ms / 1000));
    if (ms % 1000 && n < size) {
        char fraction[8];
        snprintf(fraction, sizeof fraction, "%03d", (int)(ms % 1000));
        for (int k = 2; k > 0 && fraction[k] == '0'; k--)
            fraction[k] = '\0';
        n += (size_t)snprintf(out + n, size - n, ".%s", fraction);
    }
    return n < size ? n : size - 1;
}

void pgn_control_text(const game_control_t *c, char *out, size_t size)
{
    size_t n = 0;
    out[0] = '\0';
    for (int64_t i = 0; i < c->period_count && n + 1 < size; i++) {
        if (i)
            out[n++] = ':';
        if (c->periods[i].moves)
            n += (size_t)snprintf(out + n, size - n, "%lld/", (long long)c->periods[i].moves);
        if (n < size)
            n += put_seconds(out + n, size - n, c->periods[i].ms);
        /* "+0" for one period without a delay, as Lichess writes "60+0". */
        if ((c->increment_ms || (c->period_count == 1 && !c->delay_ms)) && n + 1 < size) {
            out[n++] = '+';
            n += put_seconds(out + n, size - n, c->increment_ms);
        }
        if (c->delay_ms && n + 1 < size) {
            out[n++] = 'd';
            n += put_seconds(out + n, size - n, c->delay_ms);
        }
        out[n < size ? n : size - 1] = '\0';
    }
}

void pgn_time_control(const game_t *g, char *out, size_t size)
{
    if (!game_is_timed(g))
        snprintf(out, size, "-");
    else
        pgn_control_text(&g->clock.control[WHITE], out, size);
}

/* The Termination tag of an ended game's record (NULL: none, a normal end). */
static const char *termination_tag(const game_t *g)
{
    if (g->termination == GAME_TERMINATION_IDLE_END || g->termination == GAME_TERMINATION_ABANDONMENT
        || g->state == GAME_ABORTED)
        return "abandoned";
    return g->state == GAME_TIMEOUT ? "time forfeit" : NULL;
}

char *pgn_write_record(const game_record_t *r, const game_meta_t *tags, const char *moves, size_t moves_length,
                       const pgn_defaults_t *defaults, size_t *length)
{
    return pgn_write_record_evals(r, tags, moves, moves_length, defaults, NULL, 0, length);
}

char *pgn_write_record_evals(const game_record_t *r, const game_meta_t *tags, const char *moves, size_t moves_length,
                             const pgn_defaults_t *defaults, const char *const *evals, int eval_count, size_t *length)
{
    char control[PGN_TIME_CONTROL_SIZE], black[PGN_TIME_CONTROL_SIZE];
    pgn_time_control(&r->game, control, sizeof control);
    pgn_control_text(&r->game.clock.control[BLACK], black, sizeof black);
    pgn_game_t pgn = {
        .white = r->players[WHITE].name,
        .black = r->players[BLACK].name,
        .created_at_ms = r->created_at_ms,
        .tags = tags,
        .defaults = defaults ? *defaults : (pgn_defaults_t){ NULL, NULL },
        .initial = &r->game.initial,
        .result = game_result_name(r->game.result),
        .over = game_is_over(&r->game),
        .termination = termination_tag(&r->game),
        .time_control = control,
        .black_time_control = game_is_timed(&r->game) && strcmp(control, black) ? black : NULL,
        .opening = game_opening(&r->game),
        .moves = moves ? moves : "",
        .moves_length = moves ? moves_length : 0,
        .evals = evals,
        .eval_count = evals ? eval_count : 0,
    };
    return pgn_write(&pgn, length);
}
