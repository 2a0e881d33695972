/* PGN reading (see pgn_read.h): one pass over the bytes with a cursor that
 * keeps the line and column, a game at a time. A game starts at its first
 * tag, move, move number or result token; its movetext at the first token
 * that is not a tag, where the FEN, SetUp and Variant tags set it up. It
 * ends at a result token outside variations, the next game's '[', or the
 * end of the text. Each open line keeps its position, so variations play. */
#include "pgn_read.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "movegen.h"
#include "notation.h"
#include "san.h"
#include "status.h"
#include "uci_move.h"
#include "variant.h"

enum { TAGS_MAX = 64 };

/* A spot in the text, for errors. */
typedef struct {
    int line, column;
} spot_t;

typedef struct {
    const char *text;
    size_t length, at;
    spot_t spot; /* of text[at] */
    spot_t token; /* where the token being read began */
    int continuations; /* bytes still due in the UTF-8 sequence being passed */
    bool bad_utf8;     /* a byte passed was not UTF-8, at bad_utf8_spot */
    spot_t bad_utf8_spot;
    const pgn_read_limits_t *limits;
    const pgn_read_callbacks_t *callbacks;
    void *ctx;
    pgn_read_error_t *error;
    int games;       /* games begun */
    bool in_game, in_movetext;
    /* the current game's tags */
    int tag_count;
    char tag_names[TAGS_MAX][PGN_READ_TAG_NAME_MAX + 1];
    char value[PGN_READ_TAG_VALUE_MAX + 1];
    char fen[PGN_READ_TAG_VALUE_MAX + 1];
    char variant[PGN_READ_TAG_VALUE_MAX + 1];
    char result_tag[8];
    bool has_fen, has_variant, has_result, setup;
    spot_t fen_spot, variant_spot, result_spot, setup_spot;
    /* variations open, and where each began */
    int depth;
    spot_t open[PGN_READ_DEPTH_MAX];
    game_t game;
    /* each line open: [0] the mainline (its position is game.pos), [d] the
     * variation at depth d */
    struct {
        position_t before, pos; /* before its last move; now */
        int plies;              /* its moves so far */
        int variations;         /* the variations its last move has */
        /* a variation: the move it replaces is the owner_ply-th of the line
         * at owner_depth, and it is that move's var_index-th variation */
        int owner_depth, owner_ply, var_index;
    } line[PGN_READ_DEPTH_MAX + 1];
    int nodes;                  /* the game's moves, its variations' included */
    /* after a game's error, with an error callback: passing the rest of it */
    bool skipping;
    bool skip_break;            /* a blank line or movetext passed since the error */
    bool skip_line_used;        /* the line being passed has more than blanks */
    bool skip_in_tag;           /* inside a '[' ... ']' being passed */
    int skip_depth;             /* parentheses open where the game is passed */
} reader_t;

static const char *const status_codes[PGN_READ_ERROR_COUNT] = {
    [PGN_READ_OK] = "ok",
    [PGN_READ_ENO_GAME] = "no_game",
    [PGN_READ_EUNEXPECTED] = "unexpected_token",
    [PGN_READ_EBAD_UTF8] = "invalid_utf8",
    [PGN_READ_EUNTERMINATED_COMMENT] = "unterminated_comment",
    [PGN_READ_EUNTERMINATED_VARIATION] = "unterminated_variation",
    [PGN_READ_EUNMATCHED_PARENTHESIS] = "unmatched_parenthesis",
    [PGN_READ_EUNTERMINATED_TAG] = "unterminated_tag",
    [PGN_READ_EUNTERMINATED_STRING] = "unterminated_string",
    [PGN_READ_EBAD_TAG] = "bad_tag",
    [PGN_READ_EBAD_ESCAPE] = "bad_escape",
    [PGN_READ_EDUPLICATE_TAG] = "duplicate_tag",
    [PGN_READ_EBAD_RESULT_TAG] = "bad_result_tag",
    [PGN_READ_EBAD_FEN] = "invalid_fen",
    [PGN_READ_ESETUP_WITHOUT_FEN] = "setup_without_fen",
    [PGN_READ_EUNSUPPORTED_VARIANT] = "unsupported_variant",
    [PGN_READ_ENULL_MOVE] = "null_move",
    [PGN_READ_EILLEGAL_MOVE] = "illegal_move",
    [PGN_READ_EVARIATION_WITHOUT_MOVE] = "variation_without_move",
    [PGN_READ_ERESULT_MISMATCH] = "result_tag_mismatch",
    [PGN_READ_ERESULT_CONTRADICTS] = "result_contradicts_position",
    [PGN_READ_ETOO_MANY_GAMES] = "too_many_games",
    [PGN_READ_ETOO_MANY_PLIES] = "too_many_plies",
    [PGN_READ_ETOO_MANY_TAGS] = "too_many_tags",
    [PGN_READ_ETAG_TOO_LONG] = "tag_too_long",
    [PGN_READ_ECOMMENT_TOO_LONG] = "comment_too_long",
    [PGN_READ_ETOO_DEEP] = "variations_too_deep",
    [PGN_READ_ESTOPPED] = "stopped",
};

const char *pgn_read_status_code(pgn_read_status_t status)
{
    return (unsigned)status < PGN_READ_ERROR_COUNT ? status_codes[status] : "unknown";
}

void pgn_read_default_limits(pgn_read_limits_t *limits)
{
    limits->max_games = 100;
    limits->max_plies = 1000;
    limits->max_tags = 64; /* a PGN chessd writes has up to 41: the roster, 11 known, 7 of its own, 16 custom */
    limits->max_tag_value = 255;
    limits->max_depth = 16;
    limits->max_comment = 4096;
    limits->max_nodes = 20000;
}

/* --- the cursor --- */

static bool at_end(const reader_t *r) { return r->at >= r->length; }
static char peek(const reader_t *r) { return at_end(r) ? '\0' : r->text[r->at]; }

/* Length of the well-formed UTF-8 sequence at s (n bytes there; RFC 3629:
 * no overlong forms, no surrogates, nothing past U+10FFFF), or 0. */
static size_t utf8_sequence(const unsigned char *s, size_t n)
{
    if (s[0] < 0x80)
        return 1;
    size_t length = s[0] >= 0xc2 && s[0] <= 0xdf ? 2 : s[0] >= 0xe0 && s[0] <= 0xef ? 3
                    : s[0] >= 0xf0 && s[0] <= 0xf4 ? 4 : 0;
    if (length == 0 || n < length)
        return 0;
    for (size_t i = 1; i < length; i++)
        if ((s[i] & 0xc0) != 0x80)
            return 0;
    if ((s[0] == 0xe0 && s[1] < 0xa0) || (s[0] == 0xed && s[1] > 0x9f) || (s[0] == 0xf0 && s[1] < 0x90)
        || (s[0] == 0xf4 && s[1] > 0x8f))
        return 0;
    return length;
}

/* Steps over one byte, keeping the line and column, and noting the first
 * byte that is not UTF-8 (comments and tag values pass bytes unread). */
static void advance(reader_t *r)
{
    const unsigned char *at = (const unsigned char *)r->text + r->at;
    if (*at >= 0x80 && !r->bad_utf8) {
        if (r->continuations > 0) {
            r->continuations--;
        } else {
            size_t n = utf8_sequence(at, r->length - r->at);
            if (n == 0) {
                r->bad_utf8 = true;
                r->bad_utf8_spot = r->spot;
            }
            r->continuations = n > 0 ? (int)n - 1 : 0;
        }
    }
    unsigned char c = (unsigned char)r->text[r->at++];
    if (c == '\n' || (c == '\r' && peek(r) != '\n')) { /* LF, CRLF or a lone CR (old Mac files) */
        r->spot.line++;
        r->spot.column = 1;
    } else if ((c & 0xc0) != 0x80) { /* a character's first byte: its continuation bytes do not count */
        r->spot.column++;
    }
}

static void skip_line(reader_t *r)
{
    while (!at_end(r) && peek(r) != '\n' && peek(r) != '\r')
        advance(r);
}

static bool is_blank(char c) { return c == ' ' || c == '\t' || c == '\r' || c == '\n' || c == '\f' || c == '\v'; }
static bool is_digit(char c) { return c >= '0' && c <= '9'; }
static bool is_alnum(char c) { return is_digit(c) || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'); }
static bool is_word(char c) { return is_alnum(c) || (c && strchr("_+#=:/!?-@", c)); }

/* Records an error at spot and returns false, so callers can `return fail(...)`. */
static bool fail(reader_t *r, pgn_read_status_t status, spot_t spot, const char *format, ...)
    __attribute__((format(printf, 4, 5)));

static bool fail(reader_t *r, pgn_read_status_t status, spot_t spot, const char *format, ...)
{
    pgn_read_error_t *e = r->error;
    e->status = status;
    e->game = r->in_game ? r->games - 1 : r->games; /* between games: the next one */
    e->line = spot.line;
    e->column = spot.column;
    e->path_length = 0;
    va_list args;
    va_start(args, format);
    vsnprintf(e->message, sizeof e->message, format, args);
    va_end(args);
    return false;
}

/* How many bytes of s (at most max) to quote in a message: no more than it
 * has, and never the first bytes of a UTF-8 character without its last. */
static int quoted_length(const char *s, int max)
{
    int n = 0;
    while (n < max && s[n])
        n++;
    while (n > 0 && s[n] && ((unsigned char)s[n] & 0xc0) == 0x80) /* cut inside a character: drop it */
        n--;
    return n;
}

/* --- games --- */

static bool begin_game(reader_t *r)
{
    if (r->in_game)
        return true;
    if (r->games >= r->limits->max_games) {
        return fail(r, PGN_READ_ETOO_MANY_GAMES, r->token, "more than %d game%s", r->limits->max_games,
                    r->limits->max_games == 1 ? "" : "s");
    }
    r->games++;
    r->in_game = true;
    r->in_movetext = false;
    r->tag_count = 0;
    r->has_fen = r->has_variant = r->has_result = r->setup = false;
    r->depth = 0;
    r->nodes = 0;
    r->line[0].plies = r->line[0].variations = 0;
    return true;
}

/* The movetext begins: the start position from the tags. */
static bool begin_movetext(reader_t *r)
{
    if (!begin_game(r))
        return false;
    if (r->in_movetext)
        return true;
    bool chess960 = false;
    variant_t variant = VARIANT_STANDARD;
    if (r->has_variant && !variant_from_name(r->variant, strlen(r->variant), &variant, &chess960))
        return fail(r, PGN_READ_EUNSUPPORTED_VARIANT, r->variant_spot,
                    "variant '%.*s' is not supported: standard chess, Chess960, Crazyhouse, Atomic, Antichess, "
                    "King of the Hill, Three-check, Horde, Racing Kings and S-chess are",
                    quoted_length(r->variant, 60), r->variant);
    unsigned flags = chess960 ? FEN_CHESS960 : r->has_variant ? 0 : FEN_DETECT_CHESS960;
    const char *fen = variant_rules(variant)->start_fen;
    if (r->has_fen)
        fen = r->fen;
    else if (r->setup)
        return fail(r, PGN_READ_ESETUP_WITHOUT_FEN, r->setup_spot, "SetUp is \"1\" but there is no FEN tag");
    position_t start;
    char message[200];
    fen_error_t fe = fen_parse_variant(fen, strlen(fen), variant, flags, &start, message, sizeof message);
    if (fe != FEN_OK) {
        r->error->fen_error = fe;
        return fail(r, PGN_READ_EBAD_FEN, r->fen_spot, "the FEN tag is not a valid position: %s", message);
    }
    game_start(&r->game, &start);
    r->in_movetext = true;
    return true;
}

/* The result a finished position allows ("*" for any), as game_result_name() writes it. */
static const char *forced_result(const game_t *g)
{
    return g->state == GAME_ACTIVE ? "*" : game_result_name(g->result);
}

/* Ends the current game; token is its result token (NULL: none), at spot. */
static bool end_game(reader_t *r, const char *token, spot_t spot)
{
    if (!begin_movetext(r))
        return false;
    if (r->depth > 0)
        return fail(r, PGN_READ_EUNTERMINATED_VARIATION, r->open[r->depth - 1],
                    "this variation is not closed by ')' before the game ends");
    if (token && r->has_result && strcmp(token, r->result_tag))
        return fail(r, PGN_READ_ERESULT_MISMATCH, spot, "the Result tag says %s but the movetext ends with %s",
                    r->result_tag, token);
    const char *result = token ? token : r->has_result ? r->result_tag : "*";
    spot_t where = token ? spot : r->result_spot;
    const char *forced = forced_result(&r->game);
    if (strcmp(result, "*") && strcmp(forced, "*") && strcmp(result, forced)) {
        const char *ending = r->game.state == GAME_CHECKMATE ? "checkmate" : r->game.state == GAME_STALEMATE
                                                                                 ? "stalemate"
                                                                                 : game_termination_name(
                                                                                       r->game.termination);
        return fail(r, PGN_READ_ERESULT_CONTRADICTS, where,
                    "the result is %s but the final position is %s, which makes it %s", result, ending, forced);
    }
    pgn_read_game_t done = { .index = r->games - 1, .game = &r->game, .result = result };
    if (r->callbacks->game && !r->callbacks->game(r->ctx, &done))
        return fail(r, PGN_READ_ESTOPPED, spot, "stopped by the caller");
    r->in_game = r->in_movetext = false;
    return true;
}

/* Fails when a byte passed so far was not UTF-8. */
static bool utf8_checked(reader_t *r)
{
    if (!r->bad_utf8)
        return true;
    return fail(r, PGN_READ_EBAD_UTF8, r->bad_utf8_spot, "the text is not valid UTF-8 here");
}

/* --- tags --- */

static bool is_name_char(char c) { return is_alnum(c) || (c && strchr("_+#=:-", c)); }

static void skip_spaces(reader_t *r)
{
    while (peek(r) == ' ' || peek(r) == '\t')
        advance(r);
}

/* The value of a tag, from its opening '"' to its closing one, unescaped
 * into r->value; its length in *length. */
static bool read_tag_value(reader_t *r, size_t *length)
{
    spot_t quote = r->spot;
    size_t n = 0;
    advance(r);
    for (;;) {
        char c = peek(r);
        if (at_end(r) || c == '\n' || c == '\r')
            return fail(r, PGN_READ_EUNTERMINATED_STRING, quote, "this tag value has no closing '\"' on its line");
        if (c == '"')
            break;
        if (c == '\\') {
            spot_t slash = r->spot;
            advance(r);
            c = peek(r);
            if (c != '"' && c != '\\')
                return fail(r, PGN_READ_EBAD_ESCAPE, slash, "in a tag value '\\' may only come before '\"' or '\\'");
        } else if ((unsigned char)c < 0x20 && c != '\t') {
            return fail(r, PGN_READ_EBAD_TAG, r->spot, "a tag value must not contain control characters");
        }
        if (n >= (size_t)r->limits->max_tag_value)
            return fail(r, PGN_READ_ETAG_TOO_LONG, quote, "a tag value is longer than %d bytes",
                        r->limits->max_tag_value);
        r->value[n++] = c;
        advance(r);
    }
    advance(r);
    r->value[n] = '\0';
    *length = n;
    return true;
}

/* Remembers the tags that set the game up. */
static bool keep_tag(reader_t *r, const char *name, size_t length, spot_t spot)
{
    if (!strcmp(name, "FEN")) {
        memcpy(r->fen, r->value, length + 1);
        r->has_fen = true;
        r->fen_spot = spot;
    } else if (!strcmp(name, "Variant")) {
        memcpy(r->variant, r->value, length + 1);
        r->has_variant = true;
        r->variant_spot = spot;
    } else if (!strcmp(name, "SetUp")) {
        r->setup = !strcmp(r->value, "1");
        r->setup_spot = spot;
    } else if (!strcmp(name, "Result")) {
        if (strcmp(r->value, "1-0") && strcmp(r->value, "0-1") && strcmp(r->value, "1/2-1/2")
            && strcmp(r->value, "*"))
            return fail(r, PGN_READ_EBAD_RESULT_TAG, spot, "the Result tag must be 1-0, 0-1, 1/2-1/2 or *, not '%.*s'",
                        quoted_length(r->value, 40), r->value);
        memcpy(r->result_tag, r->value, length + 1); /* one of the four: at most 8 bytes */
        r->has_result = true;
        r->result_spot = spot;
    }
    return true;
}

static bool read_tag(reader_t *r)
{
    spot_t open = r->spot;
    if (!begin_game(r))
        return false;
    advance(r);
    skip_spaces(r);
    char name[PGN_READ_TAG_NAME_MAX + 1];
    size_t n = 0;
    if (!is_alnum(peek(r)))
        return fail(r, at_end(r) || peek(r) == '\n' ? PGN_READ_EUNTERMINATED_TAG : PGN_READ_EBAD_TAG, open,
                    "a tag pair is [Name \"value\"], its name beginning with a letter or digit");
    while (is_name_char(peek(r))) {
        if (n >= PGN_READ_TAG_NAME_MAX)
            return fail(r, PGN_READ_ETAG_TOO_LONG, open, "a tag name is longer than %d bytes", PGN_READ_TAG_NAME_MAX);
        name[n++] = peek(r);
        advance(r);
    }
    name[n] = '\0';
    skip_spaces(r);
    if (peek(r) != '"')
        return fail(r, at_end(r) || peek(r) == '\n' ? PGN_READ_EUNTERMINATED_TAG : PGN_READ_EBAD_TAG, open,
                    "tag %s: its value must follow as a string in double quotes", name);
    size_t length = 0;
    if (!read_tag_value(r, &length) || !utf8_checked(r))
        return false;
    skip_spaces(r);
    if (peek(r) != ']')
        return fail(r, at_end(r) || peek(r) == '\n' || peek(r) == '\r' ? PGN_READ_EUNTERMINATED_TAG
                                                                          : PGN_READ_EBAD_TAG,
                    open, "tag %s: ']' must follow its value", name);
    advance(r);
    for (int i = 0; i < r->tag_count; i++)
        if (!strcmp(r->tag_names[i], name))
            return fail(r, PGN_READ_EDUPLICATE_TAG, open, "tag %s is given twice", name);
    if (r->tag_count >= r->limits->max_tags || r->tag_count >= TAGS_MAX)
        return fail(r, PGN_READ_ETOO_MANY_TAGS, open, "more than %d tags in one game", r->limits->max_tags);
    memcpy(r->tag_names[r->tag_count++], name, n + 1);
    if (!keep_tag(r, name, length, open))
        return false;
    if (r->callbacks->tag && !r->callbacks->tag(r->ctx, r->games - 1, name, r->value, length))
        return fail(r, PGN_READ_ESTOPPED, open, "stopped by the caller");
    return true;
}

/* --- movetext --- */

static bool read_comment(reader_t *r)
{
    spot_t open = r->spot;
    size_t start = r->at;
    advance(r);
    while (!at_end(r) && peek(r) != '}')
        advance(r);
    if (at_end(r))
        return fail(r, PGN_READ_EUNTERMINATED_COMMENT, open, "this comment is not closed by '}'");
    if (r->at - start - 1 > (size_t)r->limits->max_comment)
        return fail(r, PGN_READ_ECOMMENT_TOO_LONG, open, "a comment is longer than %d bytes", r->limits->max_comment);
    advance(r);
    if (!r->in_game || !r->callbacks->comment || !utf8_checked(r))
        return true;
    if (!r->callbacks->comment(r->ctx, r->games - 1, r->depth, r->text + start + 1, r->at - start - 2))
        return fail(r, PGN_READ_ESTOPPED, open, "stopped by the caller");
    return true;
}

static bool call_nag(reader_t *r, int nag, spot_t spot)
{
    if (r->callbacks->nag && !r->callbacks->nag(r->ctx, r->games - 1, r->depth, nag))
        return fail(r, PGN_READ_ESTOPPED, spot, "stopped by the caller");
    return true;
}

static bool read_nag(reader_t *r)
{
    spot_t dollar = r->spot;
    advance(r);
    int digits = 0, nag = 0;
    while (is_digit(peek(r))) {
        nag = nag * 10 + (peek(r) - '0');
        advance(r);
        if (++digits > 3)
            break;
    }
    if (digits == 0 || digits > 3)
        return fail(r, PGN_READ_EUNEXPECTED, dollar, "a NAG is '$' and a number from 0 to 999");
    return begin_movetext(r) && call_nag(r, nag, dollar);
}

/* Where the move being read stands in the tree (pgn_read_error_t.path),
 * written from its end back to the mainline. */
static void set_path(reader_t *r)
{
    pgn_read_error_t *e = r->error;
    int reversed[2 * PGN_READ_DEPTH_MAX + 1], n = 0;
    reversed[n++] = r->line[r->depth].plies;
    for (int d = r->depth; d > 0; d = r->line[d].owner_depth) {
        reversed[n++] = r->line[d].var_index;
        reversed[n++] = r->line[d].owner_ply;
    }
    for (int i = 0; i < n; i++)
        e->path[i] = reversed[n - 1 - i];
    e->path_length = n;
}

/* Counts a move of the game against max_nodes. */
static bool count_node(reader_t *r, spot_t spot)
{
    if (r->nodes >= r->limits->max_nodes) {
        fail(r, PGN_READ_ETOO_MANY_PLIES, spot, "more than %d moves in one game, its variations' included",
             r->limits->max_nodes);
        set_path(r);
        return false;
    }
    r->nodes++;
    return true;
}

static bool call_node(reader_t *r, const position_t *before, const game_played_t *played, spot_t spot)
{
    pgn_read_node_t node = { r->depth, before, r->depth == 0 ? &r->game.pos : &r->line[r->depth].pos, played };
    if (r->callbacks->node && !r->callbacks->node(r->ctx, r->games - 1, &node))
        return fail(r, PGN_READ_ESTOPPED, spot, "stopped by the caller");
    return true;
}

/* The move's text, for an error (cut to fit). */
static void keep_move_text(pgn_read_error_t *e, const char *word, size_t length)
{
    if (length >= sizeof e->move)
        length = sizeof e->move - 1;
    memcpy(e->move, word, length);
    e->move[length] = '\0';
}

static bool play_move(reader_t *r, const char *word, size_t length, spot_t spot)
{
    game_t *g = &r->game;
    pgn_read_error_t *e = r->error;
    keep_move_text(e, word, length);
    if (g->ply_count >= r->limits->max_plies)
        return fail(r, PGN_READ_ETOO_MANY_PLIES, spot, "more than %d moves (plies) in one game", r->limits->max_plies);
    game_played_t played;
    position_t before = g->pos;
    e->ply = g->ply_count;
    e->position = g->pos;
    if (game_is_over(g)) {
        e->reason = LEGALITY_GAME_OVER;
        return fail(r, PGN_READ_EILLEGAL_MOVE, spot, "'%s': the game is over (%s)", e->move,
                    game_termination_name(g->termination));
    }
    game_status_t status = game_move(g, (color_t)g->pos.side_to_move, word, length, r->limits->max_plies, 0, &played);
    if (status != GAME_OK) {
        e->reason = status == GAME_EILLEGAL_MOVE ? played.reason : LEGALITY_UNPARSEABLE;
        fail(r, PGN_READ_EILLEGAL_MOVE, spot, "%s", played.message);
        set_path(r);
        return false;
    }
    r->line[0].before = before;
    r->line[0].plies++;
    r->line[0].variations = 0;
    if (r->callbacks->move && !r->callbacks->move(r->ctx, r->games - 1, &before, &played))
        return fail(r, PGN_READ_ESTOPPED, spot, "stopped by the caller");
    return call_node(r, &before, &played, spot);
}

/* A null move in a variation: the other side to move, nothing else but the counters. */
static void play_null(position_t *pos)
{
    if (pos->side_to_move == BLACK && pos->fullmove_number < POSITION_COUNTER_MAX)
        pos->fullmove_number++;
    if (pos->halfmove_clock < POSITION_COUNTER_MAX)
        pos->halfmove_clock++;
    pos->side_to_move = (uint8_t)!pos->side_to_move;
    pos->en_passant = SQ_NONE;
    pos->key = position_compute_key(pos);
}

/* A move of a variation, checked in its line's position (no history: a
 * line ends at mate, stalemate or a variant's end, not at a draw). */
static bool play_variation_move(reader_t *r, const char *word, size_t length, bool null_move, spot_t spot)
{
    pgn_read_error_t *e = r->error;
    position_t *pos = &r->line[r->depth].pos;
    keep_move_text(e, word, length);
    e->ply = -1;
    e->position = *pos;
    status_t status;
    status_evaluate(pos, NULL, 0, &status);
    if (status.state == STATUS_CHECKMATE || status.state == STATUS_STALEMATE || status.state == STATUS_VARIANT_END) {
        e->reason = LEGALITY_GAME_OVER;
        fail(r, PGN_READ_EILLEGAL_MOVE, spot, "'%s': the line is over (%s)", e->move, status_state_name(status.state));
        set_path(r);
        return false;
    }
    game_played_t played;
    memset(&played, 0, sizeof played);
    if (null_move) {
        if (position_in_check(pos)) {
            fail(r, PGN_READ_ENULL_MOVE, spot, "'%s': a null move while in check", e->move);
            set_path(r);
            return false;
        }
        played.move = MOVE_NONE;
        memcpy(played.uci, "0000", 5);
        memcpy(played.san, "--", 3);
    } else {
        played.reason = notation_parse_move(pos, word, length, &played.move, played.message, sizeof played.message);
        if (played.reason != LEGALITY_OK) {
            e->reason = played.reason;
            fail(r, PGN_READ_EILLEGAL_MOVE, spot, "%s", played.message);
            set_path(r);
            return false;
        }
        uci_format(pos, played.move, played.uci);
        san_format(pos, played.move, played.san);
    }
    if (!count_node(r, spot))
        return false;
    position_t before = *pos;
    if (null_move) {
        play_null(pos);
    } else {
        position_undo_t undo;
        position_make(pos, played.move, &undo);
    }
    r->line[r->depth].before = before;
    r->line[r->depth].plies++;
    r->line[r->depth].variations = 0;
    return call_node(r, &before, &played, spot);
}

/* The NAG of a suffix annotation (! ? !! ?? !? ?!), or 0. */
static int suffix_nag(const char *glyphs, size_t length)
{
    static const char *const suffixes[] = { "!", "?", "!!", "??", "!?", "?!" };
    for (int i = 0; i < 6; i++)
        if (strlen(suffixes[i]) == length && !memcmp(glyphs, suffixes[i], length))
            return i + 1;
    return 0;
}

static bool is_result(const char *word, size_t length)
{
    return (length == 3 && (!memcmp(word, "1-0", 3) || !memcmp(word, "0-1", 3)))
           || (length == 7 && !memcmp(word, "1/2-1/2", 7));
}

/* A token of letters, digits and "_+#=:/!?-": a move number, a result, an
 * annotation glyph or a move. */
static bool read_word(reader_t *r)
{
    spot_t spot = r->spot;
    const char *word = r->text + r->at;
    size_t length = 0;
    while (is_word(peek(r))) {
        advance(r);
        length++;
    }
    size_t digits = 0;
    while (digits < length && is_digit(word[digits]))
        digits++;
    if (digits == length) { /* a move number; its dots are skipped as they come */
        return begin_movetext(r);
    }
    if (is_result(word, length)) {
        char token[8];
        snprintf(token, sizeof token, "%.*s", (int)length, word);
        if (r->depth > 0)
            return true; /* a result inside a variation says nothing about the game */
        if (!begin_game(r))
            return false;
        return end_game(r, token, spot);
    }
    size_t glyphs = 0; /* a suffix annotation, alone or after the move */
    while (glyphs < length && (word[length - 1 - glyphs] == '!' || word[length - 1 - glyphs] == '?'))
        glyphs++;
    int nag = suffix_nag(word + length - glyphs, glyphs);
    if (glyphs > 0 && nag == 0)
        return fail(r, PGN_READ_EUNEXPECTED, spot, "'%.*s' is not an annotation (! ? !! ?? !? ?!)",
                    glyphs > 8 ? 8 : (int)glyphs, word + length - glyphs);
    if (!begin_movetext(r))
        return false;
    if (glyphs < length) {
        size_t move_length = length - glyphs;
        bool null_move = (move_length == 2 && (!memcmp(word, "--", 2) || !memcmp(word, "Z0", 2)))
                         || (move_length == 4 && (!memcmp(word, "0000", 4)));
        if (null_move && r->depth == 0) {
            fail(r, PGN_READ_ENULL_MOVE, spot, "'%.*s' is a null move, which is not a move of chess", (int)move_length,
                 word);
            set_path(r);
            return false;
        }
        bool played = r->depth > 0 ? play_variation_move(r, word, move_length, null_move, spot)
                                   : play_move(r, word, move_length, spot);
        if (!played)
            return false;
    }
    return nag == 0 || call_nag(r, nag, spot);
}

/* '(': a line that replaces the last move of the line it opens in. */
static bool open_variation(reader_t *r, spot_t spot)
{
    if (!begin_movetext(r))
        return false;
    if (r->depth >= r->limits->max_depth || r->depth >= PGN_READ_DEPTH_MAX)
        return fail(r, PGN_READ_ETOO_DEEP, spot, "variations nested deeper than %d", r->limits->max_depth);
    if (r->line[r->depth].plies == 0)
        return fail(r, PGN_READ_EVARIATION_WITHOUT_MOVE, spot,
                    "a variation must follow the move it replaces, and this line has none yet");
    /* A variation of a variation's first move is one more variation of the
     * move that line replaces, as chessops and python-chess hold it. */
    int d = r->depth;
    int owner_depth = d, owner_ply = r->line[d].plies - 1;
    if (d > 0 && r->line[d].plies == 1) {
        owner_depth = r->line[d].owner_depth;
        owner_ply = r->line[d].owner_ply;
    }
    r->line[d + 1].pos = r->line[d].before;
    r->line[d + 1].plies = r->line[d + 1].variations = 0;
    r->line[d + 1].owner_depth = owner_depth;
    r->line[d + 1].owner_ply = owner_ply;
    r->line[d + 1].var_index = r->line[owner_depth].variations++;
    r->open[r->depth++] = spot;
    advance(r);
    if (r->callbacks->variation && !r->callbacks->variation(r->ctx, r->games - 1, r->depth, true))
        return fail(r, PGN_READ_ESTOPPED, spot, "stopped by the caller");
    return true;
}

/* Ends the game being passed after its error; the next one is read as usual. */
static void end_skipping(reader_t *r)
{
    r->skipping = false;
    r->bad_utf8 = false; /* what the bad game held is its own */
    r->continuations = 0;
    r->in_game = r->in_movetext = false;
    r->depth = 0;
}

/* One token of a game being passed after its error: only its end is looked
 * for, with comments, tag lines and parentheses kept apart. */
static bool skip_token(reader_t *r)
{
    char c = peek(r);
    if (c == '\n' || c == '\r') {
        if (!r->skip_line_used)
            r->skip_break = true;
        r->skip_line_used = r->skip_in_tag = false;
        advance(r);
        return true;
    }
    if (is_blank(c)) {
        advance(r);
        return true;
    }
    bool line_start = r->spot.column == 1;
    r->skip_line_used = true;
    if (r->skip_in_tag) {
        if (c == ']')
            r->skip_in_tag = false;
        advance(r);
        return true;
    }
    switch (c) {
    case '[':
        if (line_start && r->skip_break) {
            end_skipping(r);
            return true;
        }
        r->skip_in_tag = true;
        advance(r);
        return true;
    case '%':
    case ';':
        if (c == ';' || line_start) {
            skip_line(r);
            return true;
        }
        break;
    case '{':
        while (!at_end(r) && peek(r) != '}')
            advance(r);
        r->skip_break = true;
        break;
    case '(':
        r->skip_depth++;
        r->skip_break = true;
        break;
    case ')':
        if (r->skip_depth > 0)
            r->skip_depth--;
        break;
    case '*':
        advance(r);
        if (r->skip_depth == 0)
            end_skipping(r);
        return true;
    default:
        if (is_word(c)) {
            const char *word = r->text + r->at;
            size_t length = 0;
            while (is_word(peek(r))) {
                advance(r);
                length++;
            }
            r->skip_break = true;
            if (r->skip_depth == 0 && is_result(word, length))
                end_skipping(r);
            return true;
        }
        break;
    }
    if (!at_end(r))
        advance(r);
    return true;
}

static bool read_token(reader_t *r)
{
    if (r->skipping)
        return skip_token(r);
    char c = peek(r);
    spot_t spot = r->spot;
    r->token = spot;
    if (c == '%' && spot.column == 1) {
        skip_line(r);
        return true;
    }
    if (is_blank(c) || c == '.') {
        advance(r);
        return true;
    }
    switch (c) {
    case '[':
        if (r->in_movetext) { /* the next game's tags: this game had no result token */
            if (!end_game(r, NULL, spot))
                return false;
        }
        return read_tag(r);
    case '{':
        return read_comment(r);
    case ';':
        skip_line(r);
        return true;
    case '$':
        return read_nag(r);
    case '(':
        return open_variation(r, spot);
    case ')':
        if (r->depth == 0)
            return fail(r, PGN_READ_EUNMATCHED_PARENTHESIS, spot, "')' closes no variation");
        advance(r);
        if (r->callbacks->variation && !r->callbacks->variation(r->ctx, r->games - 1, r->depth, false))
            return fail(r, PGN_READ_ESTOPPED, spot, "stopped by the caller");
        r->depth--;
        return true;
    case '*':
        advance(r);
        if (r->depth > 0)
            return true;
        if (!begin_game(r))
            return false;
        return end_game(r, "*", spot);
    default:
        break;
    }
    if (is_word(c))
        return read_word(r);
    if ((unsigned char)c >= 0x20 && (unsigned char)c < 0x7f)
        return fail(r, PGN_READ_EUNEXPECTED, spot, "unexpected '%c'", c);
    return fail(r, PGN_READ_EUNEXPECTED, spot, "unexpected byte 0x%02x", (unsigned char)c);
}

/* After an error: with an error callback, a game's error is passed to it and
 * the rest of the game is passed over; false when reading must stop. */
static bool recover(reader_t *r)
{
    pgn_read_status_t status = r->error->status;
    if (!r->callbacks->error || status == PGN_READ_ETOO_MANY_GAMES || status == PGN_READ_ESTOPPED
        || status == PGN_READ_ENO_GAME)
        return false;
    if (!r->in_game && !begin_game(r)) /* an error between games is a game of its own */
        return false;
    r->error->game = r->games - 1;
    if (!r->callbacks->error(r->ctx, r->error)) {
        fail(r, PGN_READ_ESTOPPED, r->spot, "stopped by the caller");
        return false;
    }
    r->skipping = true;
    r->skip_break = r->skip_in_tag = false;
    r->skip_line_used = true;
    r->skip_depth = r->depth;
    r->bad_utf8 = false;
    r->continuations = 0;
    return true;
}

int pgn_read(const char *text, size_t length, const pgn_read_limits_t *limits, const pgn_read_callbacks_t *callbacks,
             void *ctx, pgn_read_error_t *error)
{
    reader_t r;
    memset(&r, 0, sizeof r);
    memset(error, 0, sizeof *error);
    r.text = text;
    r.length = length;
    r.spot = (spot_t){ 1, 1 };
    r.limits = limits;
    r.callbacks = callbacks;
    r.ctx = ctx;
    r.error = error;
    if (length >= 3 && !memcmp(text, "\xef\xbb\xbf", 3)) /* a byte order mark */
        r.at = 3;
    for (;;) {
        if (at_end(&r)) {
            if (!r.in_game || r.skipping || end_game(&r, NULL, r.spot))
                break;
        } else if (read_token(&r) && (r.skipping || utf8_checked(&r))) {
            continue;
        }
        if (!recover(&r))
            return -1;
    }
    if (r.games == 0) {
        fail(&r, PGN_READ_ENO_GAME, r.spot, "the text holds no game");
        return -1;
    }
    error->game = r.games - 1; /* the last game read */
    error->line = r.spot.line;
    error->column = r.spot.column;
    return r.games;
}
