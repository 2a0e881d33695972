/* POST /v1/pgn: reads PGN (rules/pgn_read.h) and answers, for each game, its
 * tags, its variant, its mainline in UCI and SAN, its final position and its
 * result. Stateless. The body is capped by the server's --max-body like every
 * other; the reader bounds games, plies, tags, lengths and nesting
 * (pgn_read_default_limits). */
#include <stdio.h>
#include <string.h>

#include "../../rules/pgn_read.h"
#include "../../rules/rules.h"
#include "../http/body.h"
#include "../input.h"
#include "handlers.h"
#include "../render/position_json.h"
#include "../problem.h"

/* The answer, written as the reader calls back. */
typedef struct {
    jsonw_t w;
    int open_game;   /* the game whose object is open (-1: none) */
    bool in_tags, in_moves;
    bool with_moves; /* legal moves in each final position */
} answer_t;

/* Opens game index's object (and its tags) if it is not open yet. */
static void open_game(answer_t *a, int index)
{
    if (a->open_game == index)
        return;
    a->open_game = index;
    jsonw_object_begin(&a->w);
    jsonw_kv_int(&a->w, "index", index);
    jsonw_key(&a->w, "tags");
    jsonw_object_begin(&a->w);
    a->in_tags = true;
    a->in_moves = false;
}

static void open_moves(answer_t *a)
{
    if (a->in_tags) {
        jsonw_object_end(&a->w);
        a->in_tags = false;
    }
    if (!a->in_moves) {
        jsonw_key(&a->w, "moves");
        jsonw_array_begin(&a->w);
        a->in_moves = true;
    }
}

static bool on_tag(void *ctx, int game, const char *name, const char *value, size_t value_length)
{
    answer_t *a = ctx;
    open_game(a, game);
    jsonw_key(&a->w, name);
    jsonw_string_len(&a->w, value, value_length);
    return true;
}

static bool on_move(void *ctx, int game, const position_t *before, const game_played_t *played)
{
    (void)before;
    answer_t *a = ctx;
    open_game(a, game);
    open_moves(a);
    jsonw_object_begin(&a->w);
    jsonw_kv_string(&a->w, "uci", played->uci);
    jsonw_kv_string(&a->w, "san", played->san);
    jsonw_object_end(&a->w);
    return true;
}

static bool on_game(void *ctx, const pgn_read_game_t *done)
{
    answer_t *a = ctx;
    const game_t *g = done->game;
    char fen[FEN_BUFFER_SIZE];
    open_game(a, done->index);
    open_moves(a);
    jsonw_array_end(&a->w);
    a->in_moves = false;
    jsonw_kv_string(&a->w, "initial_fen", fen_format(&g->initial, fen, sizeof fen));
    jsonw_kv_bool(&a->w, "chess960", g->initial.chess960);
    jsonw_kv_string(&a->w, "variant", variant_rules((variant_t)g->initial.variant)->key);
    jsonw_key(&a->w, "position");
    position_json_write(&a->w, &g->pos, &g->status, game_opening(g), a->with_moves);
    jsonw_kv_string(&a->w, "result", done->result);
    jsonw_object_end(&a->w);
    a->open_game = -1;
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

void handle_pgn(const api_request_t *req, api_response_t *res)
{
    bool with_moves;
    const char *text;
    size_t length;
    cJSON *root = NULL;
    if (!input_query_bool(req, "legal_moves", false, &with_moves, res))
        return;
    if (!pgn_text(req, &root, &text, &length, res)) {
        cJSON_Delete(root);
        return;
    }
    answer_t a = { .open_game = -1, .with_moves = with_moves };
    jsonw_init(&a.w);
    jsonw_object_begin(&a.w);
    jsonw_key(&a.w, "games");
    jsonw_array_begin(&a.w);
    pgn_read_limits_t limits;
    pgn_read_default_limits(&limits);
    pgn_read_callbacks_t callbacks = { on_tag, on_move, on_game };
    pgn_read_error_t error;
    if (pgn_read(text, length, &limits, &callbacks, &a, &error) < 0) {
        jsonw_discard(&a.w);
        api_problem_pgn(res, &error);
    } else {
        jsonw_array_end(&a.w);
        jsonw_object_end(&a.w);
        size_t body_length = 0;
        char *body = jsonw_finish(&a.w, &body_length);
        api_response_set(res, 200, "application/json", body, body_length);
    }
    cJSON_Delete(root);
}
