/* POST and GET /v1/games/{id}/review: a durable whole-game review
 * (api/game/reviews.h does the work, store/reviews.h keeps it). POST checks
 * the game, the engine and the client's bound, and queues; GET reads what
 * is done so far and judges it with Lichess's arithmetic
 * (engine/review_math.h). The PGN's [%eval] is review_http.c's. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis_http.h"
#include "game_http.h"
#include "handlers.h"
#include "review_http.h"
#include "../app.h"
#include "../config.h"
#include "../engine/review_math.h"
#include "../game/reviews.h"
#include "../input.h"
#include "../problem.h"
#include "../../store/reviews.h"

static review_eval_t eval_of(const review_replay_t *p, int k)
{
    const review_position_t *r = &p->results[k];
    return (review_eval_t){ .is_mate = r->is_mate, .value = r->value,
                            .mated_white = p->positions[k].side_to_move == WHITE };
}

/* --- the answer --- */

static void write_eval(jsonw_t *w, const review_position_t *r)
{
    jsonw_object_begin(w);
    jsonw_kv_int(w, r->is_mate ? "mate" : "cp", r->value);
    jsonw_object_end(w);
}

/* The best move at pos and its line, in UCI and SAN; null without one. */
static void write_best(jsonw_t *w, const position_t *pos, const review_position_t *r)
{
    if (!r->pv_count) {
        jsonw_null(w);
        return;
    }
    char text[SAN_BUFFER_SIZE];
    jsonw_object_begin(w);
    jsonw_kv_string(w, "uci", uci_format(pos, r->pv[0], text));
    jsonw_kv_string(w, "san", san_format(pos, r->pv[0], text));
    for (int san = 0; san < 2; san++) {
        position_t at = *pos;
        jsonw_key(w, san ? "line_san" : "line");
        jsonw_array_begin(w);
        for (int i = 0; i < r->pv_count; i++) {
            jsonw_string(w, san ? san_format(&at, r->pv[i], text) : uci_format(&at, r->pv[i], text));
            position_undo_t undo;
            position_make(&at, r->pv[i], &undo);
        }
        jsonw_array_end(w);
    }
    jsonw_object_end(w);
}

static void write_ply(jsonw_t *w, const review_replay_t *p, int k)
{
    const position_t *before = &p->positions[k - 1];
    char text[SAN_BUFFER_SIZE];
    jsonw_object_begin(w);
    jsonw_kv_int(w, "ply", k);
    jsonw_kv_string(w, "color", before->side_to_move == WHITE ? "white" : "black");
    jsonw_kv_string(w, "uci", uci_format(before, p->moves[k - 1], text));
    jsonw_kv_string(w, "san", san_format(before, p->moves[k - 1], text));
    jsonw_key(w, "eval");
    write_eval(w, &p->results[k]);
    jsonw_key(w, "best");
    if (p->ok[k - 1])
        write_best(w, before, &p->results[k - 1]);
    else
        jsonw_null(w);
    jsonw_key(w, "judgement");
    const char *judgement = NULL;
    if (p->ok[k - 1]) {
        review_eval_t a = eval_of(p, k - 1), b = eval_of(p, k);
        judgement = review_judgement_name(review_judge(&a, &b, before->side_to_move == WHITE));
    }
    if (judgement)
        jsonw_string(w, judgement);
    else
        jsonw_null(w);
    jsonw_kv_string(w, "analysed_by", p->results[k].worker);
    jsonw_object_end(w);
}

static void write_number(jsonw_t *w, const char *key, double value)
{
    char text[32];
    snprintf(text, sizeof text, "%.2f", value);
    jsonw_key(w, key);
    jsonw_raw(w, text);
}

/* Each side's acpl and accuracy, once every position has its result. */
static void write_sides(jsonw_t *w, const review_replay_t *p)
{
    review_eval_t *evals = p->done == p->count + 1 ? malloc(sizeof *evals * ((size_t)p->count + 1)) : NULL;
    review_side_t sides[2];
    if (evals) {
        for (int k = 0; k <= p->count; k++)
            evals[k] = eval_of(p, k);
        review_sides(evals, p->count, p->positions[0].side_to_move == WHITE, sides);
    }
    for (int s = 0; s < 2; s++) {
        jsonw_key(w, s ? "black" : "white");
        if (!evals || !sides[s].moves) {
            jsonw_null(w);
            continue;
        }
        jsonw_object_begin(w);
        write_number(w, "acpl", sides[s].acpl);
        write_number(w, "accuracy", sides[s].accuracy);
        jsonw_kv_int(w, "moves", sides[s].moves);
        jsonw_object_end(w);
    }
    free(evals);
}

static void write_limit(jsonw_t *w, const char *text)
{
    review_limit_t limit;
    jsonw_key(w, "limit");
    jsonw_object_begin(w);
    if (review_limit_parse(text, &limit)) {
        if (limit.depth)
            jsonw_kv_int(w, "depth", limit.depth);
        else if (limit.movetime_ms)
            jsonw_kv_int(w, "movetime_ms", limit.movetime_ms);
        else {
            jsonw_key(w, "nodes");
            jsonw_uint(w, limit.nodes);
        }
    }
    jsonw_object_end(w);
}

/* Answers rv, read for the game whose initial position is initial. */
static void respond_review(api_response_t *res, unsigned status_code, const char *id, const store_review_t *rv,
                           const position_t *initial)
{
    review_replay_t p;
    if (!review_replay(rv, initial, &p)) {
        review_replay_free(&p);
        api_problem(res, API_EINTERNAL, "the stored review cannot be read", NULL, NULL);
        return;
    }
    jsonw_t w;
    jsonw_init(&w);
    jsonw_object_begin(&w);
    jsonw_kv_string(&w, "id", id);
    jsonw_key(&w, "game_version");
    jsonw_uint(&w, rv->version);
    jsonw_kv_string(&w, "status", rv->status);
    if (rv->error[0])
        jsonw_kv_string(&w, "error", rv->error);
    write_limit(&w, rv->limit);
    jsonw_kv_int(&w, "positions", p.count + 1);
    jsonw_kv_int(&w, "positions_done", p.done);
    jsonw_key(&w, "start");
    if (p.ok[0]) {
        jsonw_object_begin(&w);
        jsonw_key(&w, "eval");
        write_eval(&w, &p.results[0]);
        jsonw_key(&w, "best");
        write_best(&w, &p.positions[0], &p.results[0]);
        jsonw_kv_string(&w, "analysed_by", p.results[0].worker);
        jsonw_object_end(&w);
    } else {
        jsonw_null(&w);
    }
    jsonw_key(&w, "plies");
    jsonw_array_begin(&w);
    for (int k = 1; k <= p.count; k++)
        if (p.ok[k])
            write_ply(&w, &p, k);
    jsonw_array_end(&w);
    write_sides(&w, &p);
    jsonw_object_end(&w);
    size_t length = 0;
    char *body = jsonw_finish(&w, &length);
    api_response_set(res, status_code, "application/json", body, length);
    review_replay_free(&p);
}

/* --- the routes --- */

/* The search limit of the body: one of depth, nodes or movetime_ms, each
 * within the server's analysis bounds; none: REVIEW_DEFAULT_NODES, cut to
 * --engine-max-nodes. False with res filled. */
static bool read_limit(const api_request_t *req, review_limit_t *limit, api_response_t *res)
{
    static const char *const allowed[] = { "depth", "nodes", "movetime_ms", NULL };
    cJSON *root = input_object(req, allowed, res);
    if (!root)
        return false;
    analysis_request_t rq;
    bool ok = analysis_read_body(req, root, &rq, res);
    cJSON_Delete(root);
    if (!ok)
        return false;
    if (!!rq.depth + !!rq.nodes + !!rq.movetime_ms > 1) {
        api_problem(res, API_ECONFLICTING_FIELDS, "a review takes one of depth, nodes or movetime_ms", NULL, NULL);
        return false;
    }
    uint64_t max_nodes = app_of(req)->config->engine_max_nodes;
    *limit = (review_limit_t){ .depth = rq.depth, .nodes = rq.nodes, .movetime_ms = rq.movetime_ms };
    if (!rq.depth && !rq.nodes && !rq.movetime_ms)
        limit->nodes = REVIEW_DEFAULT_NODES < max_nodes ? REVIEW_DEFAULT_NODES : max_nodes;
    return true;
}

/* Whether the game g may be reviewed here; false with res filled: not over
 * nor open to analysis, too long, or no engine plays it. */
static bool reviewable(const api_request_t *req, const game_svc_game_t *g, api_response_t *res)
{
    const game_record_t *r = &g->record;
    if (!game_analysis_allowed(r)) {
        api_problem(res, API_EREVIEW_NOT_ALLOWED,
                    "this game between two people is still being played; it can be reviewed once it is over, or "
                    "while it is played when it was created with \"analysis\": true",
                    NULL, NULL);
        return false;
    }
    if (r->game.ply_count > REVIEW_MAX_PLIES) {
        char detail[120];
        snprintf(detail, sizeof detail, "the game has %d plies; a review takes at most %d", r->game.ply_count,
                 REVIEW_MAX_PLIES);
        api_problem_limit(res, API_EREVIEW_TOO_LONG, detail, "plies", REVIEW_MAX_PLIES);
        return false;
    }
    engine_pool_t *pool = analysis_pool(app_of(req), (variant_t)r->game.initial.variant, res);
    if (!pool)
        return false;
    engine_pool_stats_t st;
    engine_pool_stats(pool, &st);
    if (!st.configured) {
        api_problem(res, API_EENGINE_UNAVAILABLE, "this server runs no engine", NULL, NULL);
        return false;
    }
    return true;
}

/* Queues the review of g at its version (or finds it there): the answer. */
static void begin_review(const api_request_t *req, api_response_t *res, const game_svc_game_t *g,
                         const review_limit_t *limit)
{
    game_svc_config_t c;
    game_http_service(req, &c);
    const game_record_t *r = &g->record;
    char owner[API_CLIENT_SIZE], limit_text[REVIEW_LIMIT_TEXT_SIZE];
    api_request_client(req, owner);
    review_limit_format(limit, limit_text);
    const char *line = g->moves ? g->moves : "";
    bool kept = false, reached = false;
    store_review_t rv;
    store_status_t s = store_review_begin(c.store, r->id, r->version, limit_text, owner, line, strlen(line),
                                          r->game.ply_count, &kept);
    if (s == STORE_OK)
        s = store_review_read(c.store, r->id, &rv);
    else
        memset(&rv, 0, sizeof rv);
    bool done = s == STORE_OK && !strcmp(rv.status, "done");
    if (s == STORE_OK && !done)
        s = store_review_enqueue(c.store, r->id, r->version, owner, app_of(req)->config->engine_analyses_per_client,
                                 &reached);
    if (s != STORE_OK) {
        api_problem_store(res, s, c.store);
    } else if (reached) {
        if (!kept)
            (void)store_review_drop(c.store, r->id, r->version);
        unsigned max = app_of(req)->config->engine_analyses_per_client;
        char text[200];
        snprintf(text, sizeof text, "this client has %u reviews queued or running, its most "
                 "(--engine-analyses-per-client); nothing was queued", max);
        api_problem_quota(res, API_ETOO_MANY_ANALYSES, text, "engine-analyses-per-client", max, 5);
    } else {
        respond_review(res, done ? 200 : 202, r->id, &rv, &r->game.initial);
        snprintf(res->location, sizeof res->location, "/v1/games/%s/review", r->id);
    }
    store_review_free(&rv);
}

/* POST /v1/games/{id}/review: the review of the game at its version,
 * queued (202), or the one done already (200). */
void handle_game_review_post(const api_request_t *req, api_response_t *res)
{
    review_limit_t limit;
    if (!read_limit(req, &limit, res))
        return;
    game_svc_game_t g;
    if (game_read_for_analysis(req, res, &g) && reviewable(req, &g, res))
        begin_review(req, res, &g, &limit);
    game_svc_game_free(&g);
}

/* GET /v1/games/{id}/review: the review as it stands. */
void handle_game_review_get(const api_request_t *req, api_response_t *res)
{
    game_svc_game_t g;
    if (game_read_for_analysis(req, res, &g)) {
        game_svc_config_t c;
        game_http_service(req, &c);
        store_review_t rv;
        store_status_t s = store_review_read(c.store, g.record.id, &rv);
        if (s == STORE_ENOT_FOUND)
            api_problem(res, API_EREVIEW_NOT_FOUND, "this game has no review: POST /v1/games/{id}/review asks for one",
                        NULL, NULL);
        else if (s != STORE_OK)
            api_problem_store(res, s, c.store);
        else
            respond_review(res, 200, g.record.id, &rv, &g.record.game.initial);
        store_review_free(&rv);
    }
    game_svc_game_free(&g);
}
