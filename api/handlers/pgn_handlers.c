/* POST /v1/pgn: reads PGN (rules/pgn_read.h) into a tree a game at a time
 * (api/pgn/tree.h) and answers, for each game, its tags, its mainline and
 * variations with their comments, NAGs and commands, its final position and
 * result; or an error of that game, the others read on. Stateless. With
 * strict, the first error answers as a problem; with Accept:
 * application/x-chess-pgn the games read are written back as PGN. */
#include <stdio.h>
#include <string.h>

#include "../../rules/pgn_read.h"
#include "../../rules/rules.h"
#include "../http/body.h"
#include "../input.h"
#include "handlers.h"
#include "../pgn/tree.h"
#include "../render/position_json.h"
#include "../problem.h"

/* A game's tree may hold this much, its text's bound aside (a move costs
 * about 250 bytes with its FEN). */
enum { TREE_MAX_BYTES = 32u << 20 };

/* The answer, written as the reader calls back. */
typedef struct {
    jsonw_t w;
    buf_t pgn;        /* the PGN answer */
    bool as_pgn;
    bool with_moves;  /* legal moves in each final position */
    pgn_tree_t tree;
    int tree_game;    /* the game the tree holds (-1: none) */
    int read, failed;
} answer_t;

/* The tree, emptied when it held an earlier game. */
static pgn_tree_t *tree_for(answer_t *a, int game)
{
    if (a->tree_game != game) {
        pgn_tree_reset(&a->tree);
        a->tree_game = game;
    }
    return &a->tree;
}

static bool on_tag(void *ctx, int game, const char *name, const char *value, size_t value_length)
{
    answer_t *a = ctx;
    return pgn_tree_tag(tree_for(a, game), name, value, value_length);
}

static bool on_node(void *ctx, int game, const pgn_read_node_t *node)
{
    answer_t *a = ctx;
    return pgn_tree_node(tree_for(a, game), node);
}

static bool on_comment(void *ctx, int game, int depth, const char *text, size_t length)
{
    answer_t *a = ctx;
    return pgn_tree_comment(tree_for(a, game), depth, text, length);
}

static bool on_nag(void *ctx, int game, int depth, int nag)
{
    answer_t *a = ctx;
    return pgn_tree_nag(tree_for(a, game), depth, nag);
}

static bool on_variation(void *ctx, int game, int depth, bool open)
{
    answer_t *a = ctx;
    return pgn_tree_variation(tree_for(a, game), depth, open);
}

static bool on_game(void *ctx, const pgn_read_game_t *done)
{
    answer_t *a = ctx;
    const game_t *g = done->game;
    pgn_tree_t *t = tree_for(a, done->index);
    a->read++;
    if (a->as_pgn) {
        if (a->read > 1)
            buf_putc(&a->pgn, '\n');
        pgn_tree_write(t, done->result, &a->pgn);
        return true;
    }
    char fen[FEN_BUFFER_SIZE];
    jsonw_object_begin(&a->w);
    jsonw_kv_int(&a->w, "index", done->index);
    pgn_tree_json(t, &a->w);
    jsonw_kv_string(&a->w, "initial_fen", fen_format(&g->initial, fen, sizeof fen));
    jsonw_kv_bool(&a->w, "chess960", g->initial.chess960);
    jsonw_kv_string(&a->w, "variant", variant_rules((variant_t)g->initial.variant)->key);
    jsonw_key(&a->w, "position");
    position_json_write(&a->w, &g->pos, &g->status, game_opening(g), a->with_moves);
    jsonw_kv_string(&a->w, "result", done->result);
    jsonw_object_end(&a->w);
    return true;
}

/* A game that failed: its index, the tags read before the error, the error. */
static bool on_error(void *ctx, const pgn_read_error_t *e)
{
    answer_t *a = ctx;
    pgn_tree_t *t = tree_for(a, e->game);
    a->failed++;
    if (a->as_pgn)
        return true;
    jsonw_object_begin(&a->w);
    jsonw_kv_int(&a->w, "index", e->game);
    jsonw_key(&a->w, "tags");
    jsonw_object_begin(&a->w);
    pgn_tree_tags_json(t, &a->w);
    jsonw_object_end(&a->w);
    jsonw_key(&a->w, "errors");
    jsonw_array_begin(&a->w);
    jsonw_object_begin(&a->w);
    jsonw_kv_string(&a->w, "code", api_status_code(api_pgn_status(e)));
    jsonw_kv_string(&a->w, "message", e->message);
    api_pgn_error_fields(&a->w, e);
    jsonw_object_end(&a->w);
    jsonw_array_end(&a->w);
    jsonw_object_end(&a->w);
    return true;
}

/* The PGN text of the request: the body itself (application/x-chess-pgn,
 * text/plain, or no Content-Type) or the "pgn" string of a JSON object in
 * *root. False with res filled when there is none. *root, when set, is the
 * caller's to delete. */
static bool pgn_text(const api_request_t *req, cJSON **root, const char **text, size_t *length, api_response_t *res)
{
    static const char *const allowed[] = { "pgn", NULL };
    const char *type = api_request_header(req, "Content-Type");
    *root = NULL;
    if (!type || body_media_type_is(type, "application/x-chess-pgn") || body_media_type_is(type, "text/plain")) {
        *text = req->body; /* the reader checks that it is UTF-8 */
        *length = req->body_length;
        return true;
    }
    if (!body_media_type_is(type, "application/json")) {
        char detail[160];
        snprintf(detail, sizeof detail,
                 "Content-Type is '%.60s'; send application/x-chess-pgn, text/plain or application/json", type);
        api_problem(res, API_EUNSUPPORTED_MEDIA_TYPE, detail, NULL, NULL);
        return false;
    }
    if (!(*root = input_object(req, allowed, res)))
        return false;
    const cJSON *pgn = cJSON_GetObjectItemCaseSensitive(*root, "pgn");
    if (!cJSON_IsString(pgn)) {
        api_problem(res, API_EINVALID_FIELD, "'pgn' must be a string holding PGN text", NULL, NULL);
        return false;
    }
    *text = pgn->valuestring;
    *length = strlen(pgn->valuestring);
    return true;
}

/* Whether the client asked for PGN back (Accept names application/x-chess-pgn). */
static bool wants_pgn(const api_request_t *req)
{
    const char *accept = api_request_header(req, "Accept");
    return accept && strstr(accept, "application/x-chess-pgn") != NULL;
}

void handle_pgn(const api_request_t *req, api_response_t *res)
{
    bool with_moves, strict;
    const char *text;
    size_t length;
    cJSON *root = NULL;
    if (!input_query_bool(req, "legal_moves", false, &with_moves, res)
        || !input_query_bool(req, "strict", false, &strict, res))
        return;
    if (!pgn_text(req, &root, &text, &length, res)) {
        cJSON_Delete(root);
        return;
    }
    answer_t a = { .tree_game = -1, .with_moves = with_moves, .as_pgn = wants_pgn(req) };
    pgn_tree_init(&a.tree, TREE_MAX_BYTES);
    jsonw_init(&a.w);
    buf_init(&a.pgn);
    jsonw_object_begin(&a.w);
    jsonw_key(&a.w, "games");
    jsonw_array_begin(&a.w);
    pgn_read_limits_t limits;
    pgn_read_default_limits(&limits);
    pgn_read_callbacks_t callbacks = { .tag = on_tag, .game = on_game, .node = on_node, .comment = on_comment,
                                       .nag = on_nag, .variation = on_variation, .error = strict ? NULL : on_error };
    pgn_read_error_t error;
    int games = pgn_read(text, length, &limits, &callbacks, &a, &error);
    if (games < 0 && error.status == PGN_READ_ESTOPPED && (a.tree.too_large || a.tree.no_memory)) {
        jsonw_discard(&a.w);
        buf_free(&a.pgn);
        if (a.tree.no_memory)
            api_problem(res, API_EUNAVAILABLE, "out of memory reading the PGN; try again later", NULL, NULL);
        else
            api_problem(res, API_EPGN_TOO_LARGE, "a game's tree holds more than the server keeps for one game",
                        NULL, NULL);
    } else if (games < 0) {
        jsonw_discard(&a.w);
        buf_free(&a.pgn);
        api_problem_pgn(res, &error);
    } else if (a.as_pgn) {
        jsonw_discard(&a.w);
        size_t body_length = 0;
        char *body = buf_finish(&a.pgn, &body_length);
        api_response_set(res, 200, "application/x-chess-pgn", body, body_length);
    } else {
        jsonw_array_end(&a.w);
        jsonw_kv_int(&a.w, "read", a.read);
        jsonw_kv_int(&a.w, "failed", a.failed);
        jsonw_object_end(&a.w);
        size_t body_length = 0;
        char *body = jsonw_finish(&a.w, &body_length);
        api_response_set(res, 200, "application/json", body, body_length);
        buf_free(&a.pgn);
    }
    pgn_tree_reset(&a.tree);
    cJSON_Delete(root);
}
