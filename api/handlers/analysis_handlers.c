/* POST /v1/position/analysis, and what both analysis routes share
 * (analysis_http.h): reading the limits, answering, and turning an engine
 * status into a problem. Runs on the engine route pool's threads, the
 * connection suspended; a game's HEAD, which never searches, on the store's. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "analysis_http.h"
#include "../app.h"
#include "../config.h"
#include "handlers.h"
#include "../input.h"
#include "../metrics.h"
#include "../problem.h"
#include "../render/position_json.h"

/* One limit a client may set: its name, and the server's bound on it. */
typedef struct {
    const char *name;
    unsigned long long min, max;
} limit_t;

static analysis_bounds_t bounds_of(const api_request_t *req)
{
    const config_t *cfg = app_of(req)->config;
    return (analysis_bounds_t){ .max_depth = CONFIG_ENGINE_MAX_DEPTH,
                                .max_nodes = cfg->engine_max_nodes,
                                .max_think_ms = (int)cfg->engine_max_think_ms };
}

/* Checks value against limit: 400 invalid_field below its minimum, 422
 * analysis_limit_too_large above the bound (the bound named). */
static bool check_limit(const limit_t *limit, double value, bool in_query, api_response_t *res)
{
    char detail[200];
    if (value != floor(value) || value < (double)limit->min) {
        snprintf(detail, sizeof detail, "'%s' must be a whole number from %llu", limit->name, limit->min);
        api_problem(res, in_query ? API_EINVALID_PARAMETER : API_EINVALID_FIELD, detail, NULL, NULL);
        return false;
    }
    if (value > (double)limit->max) {
        snprintf(detail, sizeof detail, "'%s' is above this server's bound of %llu", limit->name, limit->max);
        api_problem_limit(res, API_EANALYSIS_LIMIT_TOO_LARGE, detail, limit->name, limit->max);
        return false;
    }
    return true;
}

/* The limits in the order analysis_request_t holds them. */
enum { LIMIT_DEPTH, LIMIT_NODES, LIMIT_MOVETIME, LIMIT_MULTIPV, LIMIT_COUNT };

static void limits_of(const api_request_t *req, limit_t limits[LIMIT_COUNT])
{
    analysis_bounds_t b = bounds_of(req);
    limits[LIMIT_DEPTH] = (limit_t){ "depth", 1, (unsigned long long)b.max_depth };
    limits[LIMIT_NODES] = (limit_t){ "nodes", 1, b.max_nodes };
    limits[LIMIT_MOVETIME] = (limit_t){ "movetime_ms", 1, (unsigned long long)b.max_think_ms };
    limits[LIMIT_MULTIPV] = (limit_t){ "multipv", 1, ENGINE_MULTIPV_MAX };
}

static void set_limit(analysis_request_t *rq, int which, double value)
{
    switch (which) {
    case LIMIT_DEPTH: rq->depth = (int)value; break;
    case LIMIT_NODES: rq->nodes = (uint64_t)value; break;
    case LIMIT_MOVETIME: rq->movetime_ms = (int)value; break;
    default: rq->multipv = (int)value; break;
    }
}

/* The limits of a body; false with res filled. */
bool analysis_read_body(const api_request_t *req, const cJSON *root, analysis_request_t *rq, api_response_t *res)
{
    limit_t limits[LIMIT_COUNT];
    limits_of(req, limits);
    *rq = (analysis_request_t){ 0 };
    for (int i = 0; i < LIMIT_COUNT; i++) {
        const cJSON *item = cJSON_GetObjectItemCaseSensitive(root, limits[i].name);
        if (!item || cJSON_IsNull(item))
            continue;
        if (!cJSON_IsNumber(item)) {
            char detail[96];
            snprintf(detail, sizeof detail, "'%s' must be a number", limits[i].name);
            api_problem(res, API_EINVALID_FIELD, detail, NULL, NULL);
            return false;
        }
        if (!check_limit(&limits[i], item->valuedouble, false, res))
            return false;
        set_limit(rq, i, item->valuedouble);
    }
    const cJSON *wdl = cJSON_GetObjectItemCaseSensitive(root, "wdl");
    if (wdl && !cJSON_IsNull(wdl)) {
        if (!cJSON_IsBool(wdl)) {
            api_problem(res, API_EINVALID_FIELD, "'wdl' must be true or false", NULL, NULL);
            return false;
        }
        rq->wdl = cJSON_IsTrue(wdl);
    }
    return true;
}

bool analysis_read_query(const api_request_t *req, analysis_request_t *rq, api_response_t *res)
{
    limit_t limits[LIMIT_COUNT];
    limits_of(req, limits);
    *rq = (analysis_request_t){ 0 };
    for (int i = 0; i < LIMIT_COUNT; i++) {
        const char *text = api_request_query(req, limits[i].name);
        if (!text)
            continue;
        /* Decimal digits only: a whole number, never a sign, an exponent or hex. */
        size_t digits = strspn(text, "0123456789");
        double value = digits && digits <= 15 && !text[digits] ? strtod(text, NULL) : -1;
        if (value < 0 && digits > 15 && !text[digits])
            value = 1e16; /* a huge whole number: above every bound */
        if (value < 0) {
            char detail[120];
            snprintf(detail, sizeof detail, "query parameter '%s' must be a whole number from %llu", limits[i].name,
                     limits[i].min);
            api_problem(res, API_EINVALID_PARAMETER, detail, NULL, NULL);
            return false;
        }
        if (!check_limit(&limits[i], value, true, res))
            return false;
        set_limit(rq, i, value);
    }
    return input_query_bool(req, "wdl", false, &rq->wdl, res);
}

/* The one place an engine status becomes a problem. configured: the
 * server has an engine path (a pool without one is down for good). */
static void engine_problem(api_response_t *res, engine_status_t status, const char *err, bool configured)
{
    char detail[320];
    switch (status) {
    case ENGINE_EDOWN:
        api_problem(res, API_EENGINE_UNAVAILABLE, err[0] ? err : "no engine is running", NULL, NULL);
        /* configured: it is being restarted, so come back; else a retry is no use (api_problem gave a 503 one) */
        res->retry_after = configured ? 5 : 0;
        break;
    case ENGINE_EBUSY:
        metrics_add(METRIC_ANALYSIS_REFUSED, METRICS_ANALYSIS_REFUSED_BUSY, 1);
        api_problem(res, API_EENGINE_BUSY, "every engine stayed busy for as long as a search may take", NULL, NULL);
        res->retry_after = 1;
        break;
    case ENGINE_ETIMEOUT:
    case ENGINE_ECRASHED:
    case ENGINE_EGARBAGE:
    case ENGINE_ESTART:
        snprintf(detail, sizeof detail, "the engine failed on this search (%s), and a retry did not complete it; "
                 "it is being restarted", engine_status_name(status));
        api_problem(res, API_EENGINE_FAILED, detail, NULL, NULL);
        res->retry_after = 1;
        break;
    default:
        api_problem(res, API_EINTERNAL, err[0] ? err : NULL, NULL, NULL);
        break;
    }
}

static bool variant_engine_configured(const app_t *app)
{
    engine_pool_stats_t st;
    engine_pool_stats(app->variant_engines, &st);
    return st.configured;
}

engine_pool_t *analysis_pool(const app_t *app, variant_t variant, api_response_t *res)
{
    engine_pool_t *pool;
    engine_status_t s = engine_pool_for_variant(app->engines, app->variant_engines, variant, &pool);
    if (s == ENGINE_OK)
        return pool;
    if (variant == VARIANT_STANDARD) /* chess without an engine: the search's own answer */
        return app->engines;
    char detail[160];
    const char *key = variant_rules(variant)->key;
    if (s == ENGINE_EDOWN) {
        snprintf(detail, sizeof detail, "the variant engine has not started yet (it is retried): %s waits for it",
                 key);
        engine_problem(res, ENGINE_EDOWN, detail, true);
    } else {
        snprintf(detail, sizeof detail, "the computer does not play %s here (%s)", key,
                 variant_engine_configured(app) ? "its variant engine does not list it"
                                                : "it runs no variant engine: --variant-engine");
        api_problem(res, API_EVARIANT_NOT_SUPPORTED_BY_ENGINE, detail, NULL, NULL);
    }
    return NULL;
}

/* A HEAD where GET would search: GET's head without the search (HEAD must
 * not cost an engine), so of unknown length; only an engine that is off
 * (GET's answer at once) is known without one. */
static void respond_head(engine_pool_t *pool, api_response_t *res)
{
    engine_pool_stats_t st;
    engine_pool_stats(pool, &st);
    if (!st.configured) {
        engine_problem(res, ENGINE_EDOWN, "this server runs no engine", false);
        return;
    }
    api_response_set(res, 200, "application/json", calloc(1, 1), 0);
    res->head_unknown_length = true;
}

void analysis_respond(const api_request_t *req, api_response_t *res, const position_t *start, const move_t *moves,
                      int move_count, const uint64_t *history, const analysis_request_t *rq, bool head)
{
    position_t pos = *start;
    const opening_t *opening = opening_at(&pos);
    for (int i = 0; i < move_count; i++) {
        position_undo_t undo;
        position_make(&pos, moves[i], &undo);
        opening_follow(&opening, &pos);
    }
    status_t status;
    status_evaluate(&pos, history, (size_t)move_count, &status);
    jsonw_t w;
    jsonw_init(&w);
    jsonw_object_begin(&w);
    jsonw_key(&w, "position");
    position_json_write(&w, &pos, &status, opening, false);
    /* A finished position is answered without an engine, in any variant:
     * it never reaches one (a finished three-check kills Fairy-Stockfish 11.1). */
    engine_pool_t *pool = status.state == STATUS_ACTIVE ? analysis_pool(app_of(req), (variant_t)pos.variant, res) : NULL;
    if (status.state != STATUS_ACTIVE) {
        jsonw_key(&w, "lines");
        jsonw_array_begin(&w);
        jsonw_array_end(&w);
    } else if (!pool) {
        jsonw_discard(&w);
        return;
    } else if (head) {
        jsonw_discard(&w);
        respond_head(pool, res);
        return;
    } else {
        char err[256] = "";
        analysis_bounds_t bounds = bounds_of(req);
        engine_status_t s = analysis_run(pool, start, moves, move_count, rq, &bounds, &w, err, sizeof err);
        if (s != ENGINE_OK) {
            jsonw_discard(&w);
            engine_pool_stats_t st;
            engine_pool_stats(pool, &st);
            engine_problem(res, s, err, st.configured);
            return;
        }
    }
    jsonw_object_end(&w);
    size_t length = 0;
    char *body = jsonw_finish(&w, &length);
    api_response_set(res, 200, "application/json", body, length);
}

/* POST /v1/position/analysis: what /v1/position/moves takes (moves
 * optional), and the search's limits. */
void handle_position_analysis(const api_request_t *req, api_response_t *res)
{
    static const char *const allowed[] = { "fen",         "chess960", "chess960_position", "variant", "moves", "depth",
                                            "nodes",       "movetime_ms", "multipv",         "wdl",   NULL };
    position_t start, pos;
    input_played_t played = { 0 };
    analysis_request_t rq;
    cJSON *root = input_object(req, allowed, res);
    if (!root)
        return;
    if (analysis_read_body(req, root, &rq, res) && input_position(root, &start, res)) {
        pos = start;
        if (input_play_moves(root, false, &pos, &played, NULL, NULL, res))
            analysis_respond(req, res, &start, played.moves, played.count, played.history, &rq, false);
    }
    input_played_free(&played);
    cJSON_Delete(root);
}
