/* A new game from PGN (import.h). pgn_read's callbacks collect the names,
 * the tags a game keeps, the move list ("uci:san" entries; a [%clk] after a
 * move is its clock), the history (the key before each move) and the tree
 * the notes come from. Then the game is given the creation's rules and its
 * ending. */
#include "import.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../rules/base/utf8.h"
#include "../../rules/pgn_comment.h"

/* Bytes the movetext's tree may take while it is read: far above what
 * GAME_NOTES_MAX of notes needs, so the notes' bound is the one met. */
enum { IMPORT_TREE_MAX = 32 * GAME_NOTES_MAX };

/* Whether a tag's value says only that it is not known (or, for Round,
 * that there is none): what chessd writes itself when a game has no value. */
static bool says_unknown(const char *name, const char *value)
{
    return !strcmp(value, "?") || !strcmp(value, "????.??.??") || (!strcmp(name, "Round") && !strcmp(value, "-"));
}

static bool import_tag(void *ctx, int game, const char *name, const char *value, size_t length)
{
    game_import_t *p = ctx;
    (void)game;
    for (int c = 0; c < COLOR_COUNT; c++) {
        /* A name the game could hold; "?" is the PGN's "unknown". */
        if (!strcmp(name, c == WHITE ? "White" : "Black") && length <= GAME_NAME_MAX && strcmp(value, "?")
            && utf8_length(value) <= GAME_NAME_CHARS && game_record_name_ok(value))
            memcpy(p->names[c], value, length + 1);
    }
    if (!says_unknown(name, value)) /* kept if the checks pass and there is room, else left out */
        (void)game_meta_set_tag(&p->tags, name, value, length, NULL, 0);
    return true;
}

/* Writes the move held back to the move list. */
static void flush_move(game_import_t *p)
{
    char entry[GAME_LINE_ENTRY_SIZE + 1];
    if (!p->has_pending)
        return;
    if (p->moves.length)
        buf_putc(&p->moves, ' ');
    buf_append(&p->moves, entry, game_line_entry(&p->pending, entry));
    p->has_pending = false;
}

static bool import_move(void *ctx, int game, const position_t *before, const game_played_t *played)
{
    game_import_t *p = ctx;
    char key[GAME_RECORD_HISTORY_ENTRY];
    (void)game;
    flush_move(p);
    p->pending = *played;
    p->pending.clocked = false; /* a PGN move has a clock only by its [%clk] */
    p->pending.clock_ms = -1;
    p->has_pending = true;
    game_record_history_entry(before->key, key);
    buf_append(&p->history, key, sizeof key);
    return !buf_failed(&p->moves) && !buf_failed(&p->history);
}

/* The tree's calls: a failure (over its bound, out of memory) stops
 * filling it, never the reading; game_import_pgn says what it was. */
static void tree_result(game_import_t *p, bool ok) { p->tree_failed = p->tree_failed || !ok; }

static bool import_node(void *ctx, int game, const pgn_read_node_t *node)
{
    game_import_t *p = ctx;
    (void)game;
    if (!p->tree_failed)
        tree_result(p, pgn_tree_node(&p->tree, node));
    return true;
}

static bool import_nag(void *ctx, int game, int depth, int nag)
{
    game_import_t *p = ctx;
    (void)game;
    if (!p->tree_failed)
        tree_result(p, pgn_tree_nag(&p->tree, depth, nag));
    return true;
}

static bool import_variation(void *ctx, int game, int depth, bool open)
{
    game_import_t *p = ctx;
    (void)game;
    if (!p->tree_failed)
        tree_result(p, pgn_tree_variation(&p->tree, depth, open));
    return true;
}

/* A comment, to the tree; after a mainline move, its [%clk] is the
 * mover's clock after it. */
static bool import_comment(void *ctx, int game, int depth, const char *text, size_t length)
{
    game_import_t *p = ctx;
    (void)game;
    if (!p->tree_failed)
        tree_result(p, pgn_tree_comment(&p->tree, depth, text, length));
    if (depth != 0 || !p->has_pending)
        return true;
    char *rest = malloc(length + 1);
    pgn_comment_t *c = malloc(sizeof *c);
    bool ok = rest && c;
    if (ok) {
        pgn_comment_parse(text, length, c, rest);
        if (c->has_clock) {
            p->pending.clocked = true;
            p->pending.clock_ms = c->clock_ms;
        }
    }
    free(rest);
    free(c);
    return ok;
}

/* The tree's notes into p->tags, when it has any. */
static game_import_status_t take_notes(game_import_t *p)
{
    if (p->tree_failed)
        return p->tree.too_large ? GAME_IMPORT_ENOTES : GAME_IMPORT_ENOMEM;
    if (!pgn_tree_has_notes(&p->tree))
        return GAME_IMPORT_OK;
    jsonw_t w;
    jsonw_init(&w);
    pgn_tree_notes(&p->tree, &w);
    size_t length = 0;
    char *text = jsonw_finish(&w, &length);
    game_import_status_t status = !text                      ? GAME_IMPORT_ENOMEM
                                  : length > GAME_NOTES_MAX ? GAME_IMPORT_ENOTES
                                  : game_meta_set_notes(&p->tags, text, length) ? GAME_IMPORT_OK
                                                                                : GAME_IMPORT_ENOMEM;
    free(text);
    return status;
}

static bool import_game(void *ctx, const pgn_read_game_t *done)
{
    game_import_t *p = ctx;
    flush_move(p);
    p->game = *done->game;
    snprintf(p->result, sizeof p->result, "%s", done->result);
    return true;
}

game_import_status_t game_import_pgn(const char *text, size_t length, int max_plies, game_record_t *r,
                                     game_import_t *p, pgn_read_error_t *error)
{
    pgn_read_limits_t limits;
    pgn_read_default_limits(&limits);
    limits.max_games = 1;
    limits.max_plies = max_plies;
    pgn_read_callbacks_t callbacks = { .tag = import_tag,         .move = import_move,
                                       .game = import_game,       .node = import_node,
                                       .comment = import_comment, .nag = import_nag,
                                       .variation = import_variation };
    pgn_tree_init(&p->tree, IMPORT_TREE_MAX);
    p->tree.no_fens = true;
    if (pgn_read(text, length, &limits, &callbacks, p, error) < 0)
        return GAME_IMPORT_EPGN;
    game_import_status_t notes = take_notes(p);
    if (notes != GAME_IMPORT_OK)
        return notes;
    game_t imported = p->game;
    int64_t now = r->created_at_ms;
    if (game_adopt_rules(&imported, &r->game, now) != GAME_OK)
        return GAME_IMPORT_ECLOCK;
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
    return buf_failed(&p->moves) || buf_failed(&p->history) ? GAME_IMPORT_ENOMEM : GAME_IMPORT_OK;
}

void game_import_free(game_import_t *p)
{
    if (!p)
        return;
    buf_free(&p->moves);
    buf_free(&p->history);
    free(p->tags.metadata); /* none is set: tags and notes only */
    free(p->tags.notes);
    p->tags.metadata = p->tags.notes = NULL;
    pgn_tree_reset(&p->tree);
}
