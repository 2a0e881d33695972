/* The route table (routes.h). The router over it is built at start-up by
 * routes_init() and lives as long as the process. */
#include "routes.h"

#include <stdio.h>
#include <string.h>

#include "../rules/base/clock.h"
#include "app.h"
#include "game/token_secret.h"
#include "game/tokens.h"
#include "handlers/game_http.h"
#include "handlers/handlers.h"
#include "problem.h"
#include "render/board_svg.h"
#include "service_keys.h"

static const char *const position_get_params[] = { "fen",         "chess960", "chess960_position", "variant", "legal_moves",
                                                    "format",      "orientation", "lastmove",      "check",
                                                    "coordinates", "size",        NULL };
static const char *const board_params[] = { "orientation", "check", "coordinates", "size", "v", NULL };
static const char *const legal_moves_param[] = { "legal_moves", NULL };
static const char *const pgn_params[] = { "legal_moves", "strict", "moves", NULL };
static const char *const perft_params[] = { "depth", "fen", "chess960", "variant", NULL };
static const char *const feed_params[] = { "after", "limit", NULL };
static const char *const limit_param[] = { "limit", NULL };
static const char *const analysis_params[] = { "depth", "nodes", "movetime_ms", "multipv", "wdl", NULL };

enum { PERFT = ROUTES_POOL_PERFT, STORE = ROUTES_POOL_STORE, ENGINE = ROUTES_POOL_ENGINE, INLINE = -1 };

/* The flags of a route whose path names a game, a multi-game stream or a bulk by its id;
 * and of one a player of the game may use without a service key. */
enum {
    GAME = ROUTE_GAME | ROUTE_GAME_ID,
    STREAM_IDS = ROUTE_GAME | ROUTE_STREAM_ID,
    BULK = ROUTE_GAME | ROUTE_BULK_ID,
    PLAYER_ANALYSIS = ROUTE_SCOPE_ANALYSIS | ROUTE_SCOPE_OR_PLAYER,
};

static const router_route_t table[] = {
    { "GET /healthz", "/healthz", "GET", handle_healthz, NULL, ROUTE_PROBE, INLINE },
    { "GET /readyz", "/readyz", "GET", handle_readyz, NULL, ROUTE_PROBE, INLINE },
    { "GET /version", "/version", "GET", handle_version, NULL, 0, INLINE },
    { "GET /openapi.yaml", "/openapi.yaml", "GET", handle_openapi, NULL, 0, INLINE },
    { "GET /v1/position", "/v1/position", "GET", handle_position, position_get_params, 0, INLINE },
    { "POST /v1/position", "/v1/position", "POST", handle_position, legal_moves_param, 0, INLINE },
    { "POST /v1/position/moves", "/v1/position/moves", "POST", handle_position_moves, legal_moves_param, 0, INLINE },
    { "POST /v1/pgn", "/v1/pgn", "POST", handle_pgn, pgn_params, 0, INLINE },
    { "GET /v1/perft", "/v1/perft", "GET", handle_perft, perft_params, 0, PERFT },
    { "POST /v1/position/analysis", "/v1/position/analysis", "POST", handle_position_analysis, NULL,
      ROUTE_SCOPE_ANALYSIS, ENGINE },
    { "POST /v1/games", "/v1/games", "POST", handle_game_create, legal_moves_param,
      ROUTE_CREATES | ROUTE_GAME | ROUTE_SCOPE_CREATE, STORE },
    { "POST /v1/games/bulk", "/v1/games/bulk", "POST", handle_bulk_create, NULL,
      ROUTE_CREATES | ROUTE_GAME | ROUTE_SCOPE_BULK, STORE },
    { "GET /v1/games/bulk/{bulk}", "/v1/games/bulk/*", "GET", handle_bulk_get, NULL, BULK, STORE },
    { "DELETE /v1/games/bulk/{bulk}", "/v1/games/bulk/*", "DELETE", handle_bulk_cancel, NULL, BULK, STORE },
    { "POST /v1/games/bulk/{bulk}/start-clocks", "/v1/games/bulk/*/start-clocks", "POST", handle_bulk_start_clocks,
      NULL, BULK, STORE },
    { "POST /v1/games/export", "/v1/games/export", "POST", handle_games_export, NULL,
      ROUTE_GAME | ROUTE_SCOPE_EXPORT, STORE },
    { "GET /v1/games/finished", "/v1/games/finished", "GET", handle_games_finished, feed_params,
      ROUTE_GAME | ROUTE_SCOPE_EXPORT, STORE },
    { "POST /v1/games/events", "/v1/games/events", "POST", handle_games_events, NULL, ROUTE_GAME | ROUTE_STREAM,
      STORE },
    { "POST /v1/games/events/{stream}/ids", "/v1/games/events/*/ids", "POST", handle_games_events_add, NULL,
      STREAM_IDS, STORE },
    { "GET /v1/games/{id}", "/v1/games/*", "GET", handle_game_get, legal_moves_param, GAME, STORE },
    { "POST /v1/games/{id}/moves", "/v1/games/*/moves", "POST", handle_game_move, legal_moves_param, GAME,
      STORE },
    { "POST /v1/games/{id}/undo", "/v1/games/*/undo", "POST", handle_game_undo, legal_moves_param, GAME, STORE },
    { "POST /v1/games/{id}/resign", "/v1/games/*/resign", "POST", handle_game_resign, legal_moves_param, GAME,
      STORE },
    { "POST /v1/games/{id}/draw", "/v1/games/*/draw", "POST", handle_game_draw, legal_moves_param, GAME, STORE },
    { "POST /v1/games/{id}/takeback", "/v1/games/*/takeback", "POST", handle_game_takeback, legal_moves_param,
      GAME, STORE },
    { "POST /v1/games/{id}/abort", "/v1/games/*/abort", "POST", handle_game_abort, legal_moves_param, GAME,
      STORE },
    { "POST /v1/games/{id}/clock/add-time", "/v1/games/*/clock/add-time", "POST", handle_game_give_time,
      legal_moves_param, GAME, STORE },
    { "POST /v1/games/{id}/clock/start", "/v1/games/*/clock/start", "POST", handle_game_start_clocks,
      legal_moves_param, GAME, STORE },
    { "POST /v1/games/{id}/claim-victory", "/v1/games/*/claim-victory", "POST", handle_game_claim_victory,
      legal_moves_param, GAME, STORE },
    { "POST /v1/games/{id}/claim-draw", "/v1/games/*/claim-draw", "POST", handle_game_claim_draw, legal_moves_param,
      GAME, STORE },
    { "GET /v1/games/{id}/pgn", "/v1/games/*/pgn", "GET", handle_game_pgn, NULL, GAME, STORE },
    { "GET /v1/games/{id}/embed", "/v1/games/*/embed", "GET", handle_game_embed, NULL, GAME, STORE },
    { "GET /v1/games/{id}/board.svg", "/v1/games/*/board.svg", "GET", handle_game_board_svg, board_params, GAME,
      STORE },
    { "GET /v1/games/{id}/analysis", "/v1/games/*/analysis", "GET", handle_game_analysis, analysis_params,
      GAME | PLAYER_ANALYSIS, ENGINE },
    /* HEAD never searches: on the store's threads, it takes no place in the engines' queue */
    { "HEAD /v1/games/{id}/analysis", "/v1/games/*/analysis", "HEAD", handle_game_analysis_head, analysis_params,
      GAME | PLAYER_ANALYSIS, STORE },
    { "POST /v1/games/{id}/review", "/v1/games/*/review", "POST", handle_game_review_post, NULL,
      GAME | PLAYER_ANALYSIS, STORE },
    { "GET /v1/games/{id}/review", "/v1/games/*/review", "GET", handle_game_review_get, NULL,
      GAME | PLAYER_ANALYSIS, STORE },
    { "GET /v1/games/{id}/events", "/v1/games/*/events", "GET", handle_game_events, NULL, GAME | ROUTE_STREAM,
      STORE },
    /* Any service key (webhook_handlers.c checks it): each owns its own. */
    { "POST /v1/webhooks", "/v1/webhooks", "POST", handle_webhook_create, NULL, ROUTE_GAME, STORE },
    { "GET /v1/webhooks", "/v1/webhooks", "GET", handle_webhooks_list, NULL, ROUTE_GAME, STORE },
    { "GET /v1/webhooks/{subscription}", "/v1/webhooks/*", "GET", handle_webhook_get, NULL, ROUTE_GAME, STORE },
    { "DELETE /v1/webhooks/{subscription}", "/v1/webhooks/*", "DELETE", handle_webhook_delete, NULL, ROUTE_GAME,
      STORE },
    { "GET /v1/webhooks/{subscription}/deliveries", "/v1/webhooks/*/deliveries", "GET", handle_webhook_deliveries,
      limit_param, ROUTE_GAME, STORE },
    { "GET /metrics", "/metrics", "GET", handle_metrics, NULL, ROUTE_PROBE, INLINE },
};

enum { TABLE_SIZE = sizeof table / sizeof table[0] };

/* A token or key in the URL ends up in logs: the refusal says where it
 * goes (never echoing it). */
static const char *parameter_hint(const char *name)
{
    if (!strcmp(name, "token") || !strcmp(name, "access_token"))
        return ": a player token goes in the Authorization header (Authorization: Bearer TOKEN), never in the URL";
    if (!strcmp(name, "key") || !strcmp(name, "api_key") || !strcmp(name, "service_key"))
        return ": a service key goes in the Authorization header (Authorization: Bearer " SERVICE_KEY_PREFIX
               "...), never in the URL";
    return NULL;
}

/* Built once by routes_init() at start-up, before any thread serves. */
static router_t *router;

bool routes_init(void)
{
    if (!router)
        router = router_new(table, TABLE_SIZE, parameter_hint);
    return router != NULL;
}

int routes_count(void) { return TABLE_SIZE; }

const char *routes_name(int route) { return route >= 0 && route < TABLE_SIZE ? table[route].name : "unmatched"; }

unsigned routes_flags(int route) { return route >= 0 && route < TABLE_SIZE ? table[route].flags : 0; }

int routes_pool(int route) { return route >= 0 && route < TABLE_SIZE ? table[route].pool : -1; }

/* A router status as the problem it is. */
static void router_problem(router_status_t status, const char *detail, api_response_t *res)
{
    static const api_status_t problems[ROUTER_STATUS_COUNT] = {
        [ROUTER_ENOT_FOUND] = API_ENOT_FOUND,
        [ROUTER_EMETHOD] = API_EMETHOD_NOT_ALLOWED,
        [ROUTER_EUNKNOWN_PARAMETER] = API_EUNKNOWN_PARAMETER,
        [ROUTER_EINVALID_PARAMETER] = API_EINVALID_PARAMETER,
        [ROUTER_EBAD_TARGET] = API_EBAD_REQUEST,
    };
    api_problem(res, problems[status], detail, NULL, NULL);
}

bool routes_parse_target(const char *raw, size_t length, target_t *target, api_response_t *res)
{
    char detail[192];
    router_status_t status = router_parse_target(raw, length, target, detail, sizeof detail);
    if (status != ROUTER_OK)
        router_problem(status, detail, res);
    return status == ROUTER_OK;
}

bool routes_find(api_request_t *req, api_response_t *res)
{
    char detail[192];
    const char *allow;
    router_status_t status = router_find(router, req, &allow, detail, sizeof detail);
    if (status == ROUTER_OK)
        return true;
    router_problem(status, detail, res);
    if (status == ROUTER_EMETHOD)
        res->allow = allow;
    return false;
}

/* What a route's path id names, for the 404 of an id that is none. */
typedef struct {
    unsigned flag;
    api_status_t code;
    const char *what, *answered_by;
} path_id_kind_t;

static const path_id_kind_t path_id_kinds[] = {
    { ROUTE_GAME_ID, API_EGAME_NOT_FOUND, "game", "POST /v1/games answers it" },
    { ROUTE_STREAM_ID, API_ESTREAM_NOT_FOUND, "multi-game stream", "the stream's first event (type stream) names it" },
    { ROUTE_BULK_ID, API_EBULK_NOT_FOUND, "bulk", "POST /v1/games/bulk answers it" },
};

/* Whether req's path holds an id that could be one, as its route's flags
 * say it should; false with res filled (404, saying what an id is). */
static bool path_id_ok(const router_route_t *route, const api_request_t *req, api_response_t *res)
{
    for (size_t i = 0; i < sizeof path_id_kinds / sizeof *path_id_kinds; i++) {
        const path_id_kind_t *kind = &path_id_kinds[i];
        if (!(route->flags & kind->flag) || tokens_is_id(req->path_param))
            continue;
        char detail[200];
        snprintf(detail, sizeof detail, "no %s has this id: an id is " TOKENS_ID_FORM ", as %s", kind->what,
                 kind->answered_by);
        api_problem(res, kind->code, detail, NULL, NULL);
        return false;
    }
    return true;
}

/* The scope each ROUTE_SCOPE_* flag asks for. */
static const struct {
    unsigned flag;
    service_scope_t scope;
} route_scopes[] = {
    { ROUTE_SCOPE_CREATE, SERVICE_SCOPE_GAMES_CREATE },
    { ROUTE_SCOPE_BULK, SERVICE_SCOPE_GAMES_BULK },
    { ROUTE_SCOPE_EXPORT, SERVICE_SCOPE_GAMES_EXPORT },
    { ROUTE_SCOPE_ANALYSIS, SERVICE_SCOPE_ANALYSIS },
};

/* Whether req may use route: always without service keys or a scope;
 * else with a key holding the scope, or for ROUTE_SCOPE_OR_PLAYER with a
 * bearer token that is no key (the handler then checks it is a player's).
 * False with res filled (401, 403). Neither the key nor its hash is ever
 * written into the answer. */
static bool scope_ok(const router_route_t *route, const api_request_t *req, api_response_t *res)
{
    service_keys_t *keys = app_of(req)->service_keys;
    for (size_t i = 0; keys && i < sizeof route_scopes / sizeof *route_scopes; i++) {
        if (!(route->flags & route_scopes[i].flag))
            continue;
        const char *scope = service_scope_name(route_scopes[i].scope);
        const char *authorization = api_request_header(req, "Authorization");
        bool or_player = route->flags & ROUTE_SCOPE_OR_PLAYER;
        char name[SERVICE_KEY_NAME_MAX + 1], detail[300];
        switch (service_keys_check(keys, authorization, route_scopes[i].scope, clock_now_us(), name)) {
        case SERVICE_KEYS_OK:
            return true;
        case SERVICE_KEYS_ENONE:
            if (or_player && game_http_bearer(req))
                return true;
            snprintf(detail, sizeof detail, "%s needs a service key with the scope %s%s: send Authorization: "
                     "Bearer " SERVICE_KEY_PREFIX "... (this server's operator makes keys with chessd keys new)",
                     route->name, scope, or_player ? ", or a player's token of the game" : "");
            api_problem_scope(res, API_ESERVICE_KEY_REQUIRED, detail, scope);
            return false;
        case SERVICE_KEYS_ESCOPE:
            snprintf(detail, sizeof detail, "the service key '%s' lacks the scope %s, which %s needs", name, scope,
                     route->name);
            api_problem_scope(res, API_ESCOPE_MISSING, detail, scope);
            return false;
        default:
            api_problem_key_unknown(res);
            return false;
        }
    }
    return true;
}

void routes_handle(const api_request_t *req, api_response_t *res)
{
    const router_route_t *route = router_route(router, req->route);
    store_t *store = app_of(req)->store;
    if (!scope_ok(route, req, res))
        return;
    if ((route->flags & ROUTE_GAME) && !store) {
        api_problem(res, API_EGAMES_DISABLED,
                    "games are off: this server runs without Redis (--redis none, the default when no Redis is "
                    "configured), so it keeps no games; the rules API (/v1/position, /v1/perft) works",
                    NULL, NULL);
        return;
    }
    if (!path_id_ok(route, req, res))
        return;
    if ((route->flags & ROUTE_GAME) && !token_secret_ready(store)) {
        store_health_t health;
        store_health(store, &health);
        if (!health.up) { /* the store is what is wrong: say what */
            api_problem_store(res, STORE_EUNAVAILABLE, store);
            return;
        }
        api_problem(res, API_ESTORE_UNAVAILABLE,
                    "the player-token secret shared through the game store cannot be read yet; nothing was changed",
                    NULL, NULL);
        res->retry_after = 1;
        return;
    }
    route->handler(req, res);
    /* A picture, drawn (200) or not (304), carries the policy that keeps a
     * browser from running anything in it. */
    if (res->content_type && !strcmp(res->content_type, BOARD_SVG_CONTENT_TYPE))
        res->security_policy = BOARD_SVG_CONTENT_SECURITY_POLICY;
}

void routes_dispatch(api_request_t *req, api_response_t *res)
{
    if (routes_find(req, res))
        routes_handle(req, res);
}
