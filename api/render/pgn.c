/* PGN export (see pgn.h). */
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
    write_tag(&out, "Event", "?");
    write_tag(&out, "Site", "?");
    write_tag(&out, "Date", date);
    write_tag(&out, "Round", "-");
    write_tag(&out, "White", game->white[0] ? game->white : "?");
    write_tag(&out, "Black", game->black[0] ? game->black : "?");
    write_tag(&out, "Result", game->result);
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
    buf_putc(&out, '\n');

    size_t line_start = out.length;
    unsigned number = game->initial->fullmove_number;
    bool white = game->initial->side_to_move == WHITE, first = true;
    for (const char *p = game->moves, *end = game->moves + game->moves_length; p < end;) {
        const char *stop = memchr(p, ' ', (size_t)(end - p));
        if (!stop)
            stop = end;
        const char *colon = memchr(p, ':', (size_t)(stop - p));
        const char *san = colon ? colon + 1 : p;
        char token[48];
        int n;
        if (white)
            n = snprintf(token, sizeof token, "%u. %.*s", number, (int)(stop - san), san);
        else if (first)
            n = snprintf(token, sizeof token, "%u... %.*s", number, (int)(stop - san), san);
        else
            n = snprintf(token, sizeof token, "%.*s", (int)(stop - san), san);
        if (n > 0)
            write_token(&out, &line_start, token, (size_t)n < sizeof token ? (size_t)n : sizeof token - 1);
        if (!white)
            number++;
        white = !white;
        first = false;
        p = stop < end ? stop + 1 : end;
    }
    write_token(&out, &line_start, game->result, strlen(game->result));
    buf_putc(&out, '\n');
    return buf_finish(&out, length);
}

/* The PGN TimeControl of a clock: seconds and increment ("300+2", "0.5"
 * written as such), "-" for an untimed game. */
static void time_control(const game_t *g, char *out, size_t size)
{
    if (!game_is_timed(g)) {
        snprintf(out, size, "-");
        return;
    }
    int64_t parts[2] = { g->clock.control[WHITE].periods[0].ms, g->clock.control[WHITE].increment_ms };
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

char *pgn_write_record(const game_record_t *r, const char *moves, size_t moves_length, size_t *length)
{
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
        .opening = game_opening(&r->game),
        .moves = moves ? moves : "",
        .moves_length = moves ? moves_length : 0,
    };
    return pgn_write(&pgn, length);
}
