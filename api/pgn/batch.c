/* A batch of PGN games (see batch.h): the reader's events build one game's
 * tree at a time (render/pgn_tree.h); at the game's end, or its error, the game is
 * written out and the tree emptied, so a batch holds one game at most. */
#include "batch.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../rules/rules.h"
#include "../http/jsonw.h"
#include "../problem.h"
#include "../render/position_json.h"
#include "../render/pgn_tree.h"

/* A game's tree may hold this much (a move costs about 250 bytes with its FEN). */
enum { TREE_MAX_BYTES = 32u << 20 };

struct pgn_batch {
    pgn_batch_options_t options;
    pgn_tree_t tree;
    int tree_game;    /* the game the tree holds (-1: none) */
    int games_before; /* in the pieces read before this one */
    int first_line;   /* of this piece, in the batch */
    int read, failed;
    buf_t *out;       /* this piece's */
};

pgn_batch_t *pgn_batch_new(const pgn_batch_options_t *options)
{
    pgn_batch_t *b = calloc(1, sizeof *b);
    if (!b)
        return NULL;
    b->options = *options;
    b->tree_game = -1;
    pgn_tree_init(&b->tree, TREE_MAX_BYTES);
    b->tree.no_fens = options->format == PGN_OUT_PGN;
    return b;
}

void pgn_batch_free(pgn_batch_t *b)
{
    if (!b)
        return;
    pgn_tree_reset(&b->tree);
    free(b);
}

int pgn_batch_games(const pgn_batch_t *b) { return b->read + b->failed; }

void pgn_batch_begin(pgn_batch_t *b, buf_t *out)
{
    if (b->options.format == PGN_OUT_JSON)
        buf_puts(out, "{\"games\":[");
}

void pgn_batch_end(pgn_batch_t *b, buf_t *out)
{
    if (b->options.format == PGN_OUT_JSON)
        buf_printf(out, "],\"read\":%d,\"failed\":%d}", b->read, b->failed);
}

/* The tree, emptied when it held an earlier game. */
static pgn_tree_t *tree_for(pgn_batch_t *b, int game)
{
    if (b->tree_game != game) {
        pgn_tree_reset(&b->tree);
        b->tree_game = game;
    }
    return &b->tree;
}

static bool on_tag(void *ctx, int game, const char *name, const char *value, size_t value_length)
{
    return pgn_tree_tag(tree_for(ctx, game), name, value, value_length);
}

static bool on_node(void *ctx, int game, const pgn_read_node_t *node)
{
    pgn_batch_t *b = ctx;
    return !b->options.moves || pgn_tree_node(tree_for(b, game), node);
}

static bool on_comment(void *ctx, int game, int depth, const char *text, size_t length)
{
    pgn_batch_t *b = ctx;
    return !b->options.moves || pgn_tree_comment(tree_for(b, game), depth, text, length);
}

static bool on_nag(void *ctx, int game, int depth, int nag)
{
    pgn_batch_t *b = ctx;
    return !b->options.moves || pgn_tree_nag(tree_for(b, game), depth, nag);
}

static bool on_variation(void *ctx, int game, int depth, bool open)
{
    pgn_batch_t *b = ctx;
    return !b->options.moves || pgn_tree_variation(tree_for(b, game), depth, open);
}

/* Appends one game's JSON object (w's text), with its separator. */
static void emit(pgn_batch_t *b, jsonw_t *w)
{
    size_t length = 0;
    char *text = jsonw_finish(w, &length);
    if (!text) {
        buf_fail(b->out);
        return;
    }
    if (b->options.format == PGN_OUT_JSON && b->read + b->failed > 1)
        buf_putc(b->out, ',');
    buf_append(b->out, text, length);
    if (b->options.format == PGN_OUT_NDJSON)
        buf_putc(b->out, '\n');
    free(text);
}

static bool on_game(void *ctx, const pgn_read_game_t *done)
{
    pgn_batch_t *b = ctx;
    const game_t *g = done->game;
    pgn_tree_t *t = tree_for(b, done->index);
    b->read++;
    if (b->options.format == PGN_OUT_PGN) {
        if (b->read > 1)
            buf_putc(b->out, '\n');
        pgn_tree_write(t, done->result, b->out);
        return true;
    }
    char fen[FEN_BUFFER_SIZE];
    jsonw_t w;
    jsonw_init(&w);
    jsonw_object_begin(&w);
    jsonw_kv_int(&w, "index", b->games_before + done->index);
    if (b->options.moves) {
        pgn_tree_json(t, &w);
    } else {
        jsonw_key(&w, "tags");
        jsonw_object_begin(&w);
        pgn_tree_tags_json(t, &w);
        jsonw_object_end(&w);
    }
    jsonw_kv_string(&w, "initial_fen", fen_format(&g->initial, fen, sizeof fen));
    jsonw_kv_bool(&w, "chess960", g->initial.chess960);
    jsonw_kv_string(&w, "variant", variant_rules((variant_t)g->initial.variant)->key);
    jsonw_key(&w, "position");
    position_json_write(&w, &g->pos, &g->status, game_opening(g), b->options.legal_moves);
    jsonw_kv_string(&w, "result", done->result);
    jsonw_object_end(&w);
    emit(b, &w);
    return true;
}

/* A game that failed: its index, the tags read before the error, the error. */
static bool on_error(void *ctx, const pgn_read_error_t *error)
{
    pgn_batch_t *b = ctx;
    pgn_tree_t *t = tree_for(b, error->game);
    b->failed++;
    if (b->options.format == PGN_OUT_PGN)
        return true;
    pgn_read_error_t e = *error;
    e.line += b->first_line - 1;
    e.game += b->games_before;
    jsonw_t w;
    jsonw_init(&w);
    jsonw_object_begin(&w);
    jsonw_kv_int(&w, "index", e.game);
    jsonw_key(&w, "tags");
    jsonw_object_begin(&w);
    pgn_tree_tags_json(t, &w);
    jsonw_object_end(&w);
    jsonw_key(&w, "errors");
    jsonw_array_begin(&w);
    jsonw_object_begin(&w);
    jsonw_kv_string(&w, "code", api_status_code(api_pgn_status(&e)));
    jsonw_kv_string(&w, "message", e.message);
    api_pgn_error_fields(&w, &e);
    jsonw_object_end(&w);
    jsonw_array_end(&w);
    jsonw_object_end(&w);
    emit(b, &w);
    return true;
}

pgn_batch_status_t pgn_batch_piece(pgn_batch_t *b, const char *text, size_t length, int first_line, buf_t *out,
                                   pgn_read_error_t *error)
{
    pgn_read_limits_t limits;
    pgn_read_default_limits(&limits);
    int done = pgn_batch_games(b);
    limits.max_games = b->options.max_games > 0 ? b->options.max_games - done : 1 << 30;
    if (limits.max_games < 1)
        limits.max_games = 1; /* the next game is then one too many */
    pgn_read_callbacks_t callbacks = { .tag = on_tag, .game = on_game, .node = on_node, .comment = on_comment,
                                       .nag = on_nag, .variation = on_variation,
                                       .error = b->options.strict ? NULL : on_error };
    b->out = out;
    b->first_line = first_line;
    b->games_before = done;
    b->tree_game = -1;
    pgn_tree_reset(&b->tree);
    int games = pgn_read(text, length, &limits, &callbacks, b, error);
    bool no_memory = b->tree.no_memory || buf_failed(out), too_large = b->tree.too_large;
    pgn_tree_reset(&b->tree);
    b->tree_game = -1;
    if (no_memory)
        return PGN_BATCH_ENO_MEMORY;
    if (games >= 0 || error->status == PGN_READ_ENO_GAME)
        return PGN_BATCH_OK;
    if (error->status == PGN_READ_ESTOPPED && too_large)
        return PGN_BATCH_ETOO_LARGE;
    error->line += first_line - 1;
    error->game += done;
    if (error->status == PGN_READ_ETOO_MANY_GAMES && b->options.max_games > 0)
        snprintf(error->message, sizeof error->message, "more than %d games", b->options.max_games);
    return PGN_BATCH_EREAD;
}

void pgn_batch_oversized(pgn_batch_t *b, buf_t *out, int line, size_t max_bytes)
{
    b->failed++;
    if (b->options.format == PGN_OUT_PGN)
        return;
    char message[96];
    snprintf(message, sizeof message, "a game is longer than %zu bytes", max_bytes);
    jsonw_t w;
    jsonw_init(&w);
    jsonw_object_begin(&w);
    jsonw_kv_int(&w, "index", b->read + b->failed - 1);
    jsonw_key(&w, "tags");
    jsonw_object_begin(&w);
    jsonw_object_end(&w);
    jsonw_key(&w, "errors");
    jsonw_array_begin(&w);
    jsonw_object_begin(&w);
    jsonw_kv_string(&w, "code", api_status_code(API_EPGN_TOO_LARGE));
    jsonw_kv_string(&w, "message", message);
    jsonw_kv_int(&w, "line", line);
    jsonw_kv_int(&w, "column", 1);
    jsonw_kv_string(&w, "pgn_error", "game_too_large");
    jsonw_object_end(&w);
    jsonw_array_end(&w);
    jsonw_object_end(&w);
    b->out = out;
    emit(b, &w);
}
