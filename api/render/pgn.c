/* PGN export (see pgn.h). The tags: the roster, the game's known ones, the
 * server's own (variant, set-up, opening, ending, clock), the game's custom
 * ones. The movetext: each move with its notes, review eval and clock. */
#include "pgn.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include <cjson/cJSON.h>

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

/* Appends a movetext token, breaking the line where python-chess breaks
 * it: before a token that, with a space after it, would pass 80
 * characters (UTF-8's continuation bytes do not count). */
static void write_token(buf_t *out, size_t *line_start, const char *token, size_t length)
{
    size_t line = 0, width = 0;
    for (size_t i = *line_start; i < out->length; i++)
        line += ((unsigned char)out->data[i] & 0xc0) != 0x80;
    for (size_t i = 0; i < length; i++)
        width += ((unsigned char)token[i] & 0xc0) != 0x80;
    if (line > 0 && line + width + 2 > PGN_LINE_MAX) {
        buf_putc(out, '\n');
        *line_start = out->length;
    } else if (line > 0) {
        buf_putc(out, ' ');
    }
    buf_append(out, token, length);
}

/* "{ text }" as one token. */
static void write_comment(buf_t *out, size_t *line_start, const char *text)
{
    buf_t b;
    buf_init(&b);
    buf_puts(&b, "{ ");
    buf_puts(&b, text);
    buf_puts(&b, " }");
    if (b.failed)
        buf_fail(out);
    else
        write_token(out, line_start, b.data, b.length);
    buf_free(&b);
}

/* "[%clk h:mm:ss]" of the clock digits of a move-list entry (ms), in whole
 * seconds as Lichess writes it (the JSON's clocks are exact). */
static int clock_command(const char *digits, size_t length, char *out, size_t size)
{
    int64_t ms = 0;
    for (size_t i = 0; i < length && i < 18; i++)
        ms = ms * 10 + (digits[i] - '0');
    int64_t seconds = ms / 1000;
    int n = snprintf(out, size, "[%%clk %lld:%02d:%02d]", (long long)(seconds / 3600), (int)(seconds / 60 % 60),
                     (int)(seconds % 60));
    return n < (int)size ? n : (int)size - 1;
}

/* --- the notes of an imported PGN (api/render/pgn_tree.h's pgn_tree_notes) --- */

/* A comment's text: anything but the '}' that would end it. */
static bool comment_ok(const cJSON *x) { return cJSON_IsString(x) && !strchr(x->valuestring, '}'); }

static bool comments_ok(const cJSON *a)
{
    if (!a)
        return true;
    if (!cJSON_IsArray(a))
        return false;
    for (const cJSON *x = a->child; x; x = x->next)
        if (!comment_ok(x))
            return false;
    return true;
}

/* A command's text: "[%...]" with no brace. */
static bool command_ok(const cJSON *x)
{
    return !x
           || (cJSON_IsString(x) && !strncmp(x->valuestring, "[%", 2) && !strpbrk(x->valuestring, "{}")
               && x->valuestring[strlen(x->valuestring) - 1] == ']');
}

/* A variation's tokens: "(" and ")" balanced, comments, and words of SAN,
 * move numbers and NAGs; nothing a PGN reader could take for more. */
static bool variations_ok(const cJSON *a)
{
    if (!a)
        return true;
    if (!cJSON_IsArray(a))
        return false;
    int depth = 0;
    for (const cJSON *x = a->child; x; x = x->next) {
        if (!cJSON_IsString(x) || !x->valuestring[0])
            return false;
        const char *t = x->valuestring;
        size_t n = strlen(t);
        if (!strcmp(t, "(") || !strcmp(t, ")")) {
            depth += t[0] == '(' ? 1 : -1;
            if (depth < 0)
                return false;
        } else if (t[0] == '{') {
            if (n < 4 || strncmp(t, "{ ", 2) || strcmp(t + n - 2, " }") || memchr(t, '}', n - 1))
                return false;
        } else if (depth == 0 || strspn(t, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789.+#=@$-") != n) {
            return false;
        }
    }
    return depth == 0;
}

/* Whether root is notes as pgn_tree_notes writes them, safe to write into
 * PGN: a hand-made record must not end a comment or a game early. */
static bool notes_ok(const cJSON *root)
{
    const cJSON *moves = cJSON_GetObjectItemCaseSensitive(root, "moves");
    if (!cJSON_IsObject(root) || !cJSON_IsString(cJSON_GetObjectItemCaseSensitive(root, "line"))
        || !comments_ok(cJSON_GetObjectItemCaseSensitive(root, "comments")) || !cJSON_IsArray(moves))
        return false;
    double ply = 0;
    for (const cJSON *m = moves->child; m; m = m->next) {
        const cJSON *p = cJSON_GetObjectItemCaseSensitive(m, "ply"), *text = cJSON_GetObjectItemCaseSensitive(m, "text"),
                    *nags = cJSON_GetObjectItemCaseSensitive(m, "nags");
        if (!cJSON_IsNumber(p) || p->valuedouble <= ply || p->valuedouble > 100000 || (text && !comment_ok(text))
            || !comments_ok(cJSON_GetObjectItemCaseSensitive(m, "before"))
            || !comments_ok(cJSON_GetObjectItemCaseSensitive(m, "more"))
            || !command_ok(cJSON_GetObjectItemCaseSensitive(m, "shapes"))
            || !command_ok(cJSON_GetObjectItemCaseSensitive(m, "eval"))
            || !command_ok(cJSON_GetObjectItemCaseSensitive(m, "emt"))
            || !variations_ok(cJSON_GetObjectItemCaseSensitive(m, "variations")) || (nags && !cJSON_IsArray(nags)))
            return false;
        for (const cJSON *x = nags ? nags->child : NULL; x; x = x->next)
            if (!cJSON_IsNumber(x) || x->valuedouble < 0 || x->valuedouble > 255)
                return false;
        ply = p->valuedouble;
    }
    return true;
}

/* The notes being written: the game's moves agree with the imported
 * mainline up to a ply, and only those moves get theirs. */
typedef struct {
    cJSON *root;         /* NULL: none */
    const char *line;    /* the imported mainline's moves not yet compared */
    const cJSON *next;   /* the next move's notes */
    bool agree;
} notes_t;

/* False when out of memory: the notes were read from JSON cJSON wrote
 * (game_meta_read), so only memory can keep them from being read again. */
static bool notes_open(notes_t *n, const char *text, size_t length)
{
    memset(n, 0, sizeof *n);
    if (!text || !length)
        return true;
    n->root = cJSON_ParseWithLength(text, length);
    if (!n->root)
        return false;
    if (!notes_ok(n->root)) {
        cJSON_Delete(n->root);
        n->root = NULL;
        return true;
    }
    n->line = cJSON_GetObjectItemCaseSensitive(n->root, "line")->valuestring;
    n->next = cJSON_GetObjectItemCaseSensitive(n->root, "moves")->child;
    n->agree = true;
    return true;
}

/* The notes of ply (1 for the first) whose move is uci, or NULL. */
static const cJSON *notes_take(notes_t *n, int ply, const char *uci, size_t uci_length)
{
    if (!n->root || !n->agree)
        return NULL;
    size_t k = strcspn(n->line, " ");
    n->agree = k == uci_length && !memcmp(n->line, uci, k);
    n->line += k + (n->line[k] == ' ');
    if (!n->agree || !n->next || cJSON_GetObjectItemCaseSensitive(n->next, "ply")->valuedouble != ply)
        return NULL;
    const cJSON *m = n->next;
    n->next = m->next;
    return m;
}

static const char *note_string(const cJSON *m, const char *key)
{
    const cJSON *x = m ? cJSON_GetObjectItemCaseSensitive(m, key) : NULL;
    return x ? x->valuestring : NULL;
}

/* Writes the comments of an array (NULL: none); whether there were any. */
static bool write_comments(buf_t *out, size_t *line_start, const cJSON *a)
{
    bool any = false;
    for (const cJSON *x = a ? a->child : NULL; x; x = x->next) {
        write_comment(out, line_start, x->valuestring);
        any = true;
    }
    return any;
}

/* A move's first comment: its text, then its commands in chessops's order
 * (squares and arrows, the eval, the time spent, the clock). The review's
 * eval replaces the imported one. Whether one was written. */
static bool write_move_comment(buf_t *out, size_t *line_start, const cJSON *m, const char *eval,
                               const char *clock_digits, size_t clock_length)
{
    char clock[48], review[40];
    if (clock_digits)
        clock_command(clock_digits, clock_length, clock, sizeof clock);
    if (eval)
        snprintf(review, sizeof review, "[%%eval %s]", eval);
    const char *parts[] = { note_string(m, "text"), note_string(m, "shapes"),
                            eval ? review : note_string(m, "eval"), note_string(m, "emt"),
                            clock_digits ? clock : NULL };
    buf_t b;
    buf_init(&b);
    for (size_t i = 0; i < sizeof parts / sizeof *parts; i++) {
        if (!parts[i] || !parts[i][0])
            continue;
        if (b.length)
            buf_putc(&b, ' ');
        buf_puts(&b, parts[i]);
    }
    bool any = b.length > 0;
    if (b.failed)
        buf_fail(out);
    else if (any)
        write_comment(out, line_start, b.data);
    buf_free(&b);
    return any;
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
    notes_t notes;
    if (!notes_open(&notes, game->notes, game->notes_length))
        buf_fail(&out);
    if (notes.root)
        write_comments(&out, &line_start, cJSON_GetObjectItemCaseSensitive(notes.root, "comments"));
    int ply = 0;
    for (const char *p = game->moves, *end = game->moves + game->moves_length; p < end;) {
        const char *stop = memchr(p, ' ', (size_t)(end - p));
        if (!stop)
            stop = end;
        const char *colon = memchr(p, ':', (size_t)(stop - p));
        const char *san = colon ? colon + 1 : p;
        const char *clock = colon ? memchr(san, ':', (size_t)(stop - san)) : NULL;
        const char *san_end = clock ? clock : stop;
        const cJSON *m = notes_take(&notes, ply + 1, p, colon ? (size_t)(colon - p) : 0);
        if (m && write_comments(&out, &line_start, cJSON_GetObjectItemCaseSensitive(m, "before")))
            first = true;
        char token[48];
        int n = 0;
        if (white || first) { /* the number is a token of its own, as python-chess writes it */
            n = snprintf(token, sizeof token, white ? "%u." : "%u...", number);
            write_token(&out, &line_start, token, (size_t)n);
        }
        write_token(&out, &line_start, san, (size_t)(san_end - san));
        const cJSON *nags = m ? cJSON_GetObjectItemCaseSensitive(m, "nags") : NULL;
        for (const cJSON *x = nags ? nags->child : NULL; x; x = x->next) {
            n = snprintf(token, sizeof token, "$%d", x->valueint);
            write_token(&out, &line_start, token, (size_t)n);
        }
        /* The notes' comment with the review's evaluation and the mover's
         * clock after the move; a black move after a comment or a
         * variation takes its number again. */
        const char *eval = ply < game->eval_count && game->evals ? game->evals[ply] : NULL;
        ply++;
        first = write_move_comment(&out, &line_start, m, eval, clock ? clock + 1 : NULL,
                                   clock ? (size_t)(stop - clock - 1) : 0);
        if (m && write_comments(&out, &line_start, cJSON_GetObjectItemCaseSensitive(m, "more")))
            first = true;
        const cJSON *variations = m ? cJSON_GetObjectItemCaseSensitive(m, "variations") : NULL;
        for (const cJSON *x = variations ? variations->child : NULL; x; x = x->next) {
            write_token(&out, &line_start, x->valuestring, strlen(x->valuestring));
            first = true;
        }
        if (!white)
            number++;
        white = !white;
        p = stop < end ? stop + 1 : end;
    }
    cJSON_Delete(notes.root);
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
        .notes = tags ? tags->notes : NULL,
        .notes_length = tags ? tags->notes_length : 0,
    };
    return pgn_write(&pgn, length);
}
