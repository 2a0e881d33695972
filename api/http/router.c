/* The route table. A '*' segment in a path matches one path segment (an id)
 * and is handed to the handler in path_param. HEAD is served wherever GET is
 * (the server sends no body). Each route lists the query parameters it reads;
 * any other, or one given twice, is refused before the handler runs. */
#include "../app.h"
#include "router.h"

#include <stdio.h>
#include <string.h>

#include "../handlers.h"
#include "../problem.h"
#include "../game/token_secret.h"

typedef struct {
    const char *name; /* the metrics label */
    const char *path;
    const char *method;
    api_handler_fn handler;
    const char *allow;              /* the Allow header for this path */
    const char *const *params;      /* the query parameters the handler reads (NULL: none) */
    unsigned flags;                 /* ROUTE_* */
} route_t;

static const char *const position_get_params[] = { "fen",         "chess960", "chess960_position", "legal_moves",
                                                    "format",      "orientation", "lastmove",      "check",
                                                    "coordinates", "size",        NULL };
static const char *const board_params[] = { "orientation", "check", "coordinates", "size", NULL };
static const char *const legal_moves_param[] = { "legal_moves", NULL };
static const char *const perft_params[] = { "depth", "fen", "chess960", NULL };

static const route_t routes[] = {
    { "GET /healthz", "/healthz", "GET", handle_healthz, "GET, HEAD", NULL, ROUTE_PROBE },
    { "GET /readyz", "/readyz", "GET", handle_readyz, "GET, HEAD", NULL, ROUTE_PROBE },
    { "GET /version", "/version", "GET", handle_version, "GET, HEAD", NULL, 0 },
    { "GET /openapi.yaml", "/openapi.yaml", "GET", handle_openapi, "GET, HEAD", NULL, 0 },
    { "GET /v1/position", "/v1/position", "GET", handle_position, "GET, HEAD, POST", position_get_params, 0 },
    { "POST /v1/position", "/v1/position", "POST", handle_position, "GET, HEAD, POST", legal_moves_param, 0 },
    { "POST /v1/position/moves", "/v1/position/moves", "POST", handle_position_moves, "POST", legal_moves_param, 0 },
    { "POST /v1/pgn", "/v1/pgn", "POST", handle_pgn, "POST", legal_moves_param, 0 },
    { "GET /v1/perft", "/v1/perft", "GET", handle_perft, "GET, HEAD", perft_params, ROUTE_POOL },
    { "POST /v1/games", "/v1/games", "POST", handle_game_create, "POST", legal_moves_param, ROUTE_CREATES | ROUTE_GAME },
    { "GET /v1/games/{id}", "/v1/games/*", "GET", handle_game_get, "GET, HEAD", legal_moves_param, ROUTE_GAME },
    { "POST /v1/games/{id}/moves", "/v1/games/*/moves", "POST", handle_game_move, "POST", legal_moves_param, ROUTE_GAME },
    { "POST /v1/games/{id}/undo", "/v1/games/*/undo", "POST", handle_game_undo, "POST", legal_moves_param, ROUTE_GAME },
    { "POST /v1/games/{id}/resign", "/v1/games/*/resign", "POST", handle_game_resign, "POST", legal_moves_param,
      ROUTE_GAME },
    { "POST /v1/games/{id}/draw", "/v1/games/*/draw", "POST", handle_game_draw, "POST", legal_moves_param, ROUTE_GAME },
    { "POST /v1/games/{id}/takeback", "/v1/games/*/takeback", "POST", handle_game_takeback, "POST", legal_moves_param,
      ROUTE_GAME },
    { "POST /v1/games/{id}/abort", "/v1/games/*/abort", "POST", handle_game_abort, "POST", legal_moves_param,
      ROUTE_GAME },
    { "GET /v1/games/{id}/pgn", "/v1/games/*/pgn", "GET", handle_game_pgn, "GET, HEAD", NULL, ROUTE_GAME },
    { "GET /v1/games/{id}/board.svg", "/v1/games/*/board.svg", "GET", handle_game_board_svg, "GET, HEAD", board_params,
      ROUTE_GAME },
    { "GET /v1/games/{id}/events", "/v1/games/*/events", "GET", handle_game_events, "GET, HEAD", NULL,
      ROUTE_GAME | ROUTE_STREAM },
    { "GET /metrics", "/metrics", "GET", handle_metrics, "GET, HEAD", NULL, ROUTE_PROBE },
};

/* Whether path fits pattern; the segment under '*' goes to param. */
static bool path_matches(const char *pattern, const char *path, char *param, size_t param_size)
{
    while (*pattern && *path) {
        if (*pattern == '*') {
            size_t n = strcspn(path, "/");
            if (n == 0 || n >= param_size)
                return false;
            memcpy(param, path, n);
            param[n] = '\0';
            path += n;
            pattern++;
            continue;
        }
        if (*pattern++ != *path++)
            return false;
    }
    return *pattern == '\0' && *path == '\0';
}

enum { ROUTE_COUNT = sizeof routes / sizeof routes[0] };

int router_route_count(void) { return ROUTE_COUNT; }

const char *router_route_name(int route)
{
    return route >= 0 && route < ROUTE_COUNT ? routes[route].name : "unmatched";
}

unsigned router_route_flags(int route) { return route >= 0 && route < ROUTE_COUNT ? routes[route].flags : 0; }

bool router_parse_target(const char *raw, size_t length, target_t *target, api_response_t *res)
{
    char detail[160];
    target_status_t status = target_parse(raw, length, target, detail, sizeof detail);
    if (status == TARGET_OK)
        return true;
    if (status == TARGET_EPATH_TOO_LONG) /* longer than any route */
        api_problem(res, API_ENOT_FOUND, "no resource at this path", NULL, NULL);
    else if (status == TARGET_EQUERY_ESCAPE || status == TARGET_EQUERY_TOO_BIG)
        api_problem(res, API_EINVALID_PARAMETER, detail, NULL, NULL);
    else
        api_problem(res, API_EBAD_REQUEST, detail, NULL, NULL);
    return false;
}

static bool param_known(const char *const *params, const char *name)
{
    for (; params && *params; params++)
        if (!strcmp(*params, name))
            return true;
    return false;
}

/* Every query parameter must be one the route reads, given once, without NUL. */
static bool query_fits(const route_t *route, const target_t *target, api_response_t *res)
{
    char detail[192];
    for (int i = 0; i < target->param_count; i++) {
        const target_param_t *p = &target->params[i];
        if (memchr(p->name, '\0', p->name_length) || !param_known(route->params, p->name)) {
            /* A token in the URL ends up in logs: say where it goes (never echoing it). */
            bool token = !strcmp(p->name, "token") || !strcmp(p->name, "access_token");
            snprintf(detail, sizeof detail, "unknown query parameter '%.40s'%s", p->name,
                     token            ? ": a player token goes in the Authorization header (Authorization: Bearer "
                                        "TOKEN), never in the URL"
                     : route->params ? " (names are case-sensitive)"
                                     : "; this resource takes none");
            api_problem(res, API_EUNKNOWN_PARAMETER, detail, NULL, NULL);
            return false;
        }
        /* C strings would cut a value with a NUL short: refuse it rather than half-read it. */
        if (memchr(p->value, '\0', p->value_length)) {
            api_problem(res, API_EINVALID_PARAMETER, "a query parameter contains a NUL byte (%00)", NULL, NULL);
            return false;
        }
        for (int j = 0; j < i; j++) {
            if (!strcmp(target->params[j].name, p->name)) {
                snprintf(detail, sizeof detail, "query parameter '%.40s' is given more than once", p->name);
                api_problem(res, API_EINVALID_PARAMETER, detail, NULL, NULL);
                return false;
            }
        }
    }
    return true;
}

bool router_find(api_request_t *req, api_response_t *res)
{
    const char *method = strcmp(req->method, "HEAD") ? req->method : "GET";
    const char *allow = NULL;
    req->route = -1;
    for (int i = 0; i < ROUTE_COUNT; i++) {
        if ((routes[i].flags & req->route_flags) != req->route_flags
            || !path_matches(routes[i].path, req->target->path, req->path_param, sizeof req->path_param))
            continue;
        if (!strcmp(routes[i].method, method)) {
            req->route = i;
            return query_fits(&routes[i], req->target, res);
        }
        allow = routes[i].allow;
    }
    if (!allow) {
        api_problem(res, API_ENOT_FOUND, "no resource at this path", NULL, NULL);
        return false;
    }
    api_problem(res, API_EMETHOD_NOT_ALLOWED, "this resource allows only the methods in the Allow header", NULL,
                NULL);
    res->allow = allow;
    return false;
}

void router_handle(const api_request_t *req, api_response_t *res)
{
    if ((routes[req->route].flags & ROUTE_GAME) && !app_of(req)->store) {
        api_problem(res, API_EGAMES_DISABLED,
                    "games are off: this server runs without Redis (--redis none, the default when no Redis is "
                    "configured), so it keeps no games; the rules API (/v1/position, /v1/perft) works",
                    NULL, NULL);
        return;
    }
    if ((routes[req->route].flags & ROUTE_GAME) && !token_secret_ready(app_of(req)->store)) {
        store_health_t health;
        store_health(app_of(req)->store, &health);
        if (!health.up) { /* the store is what is wrong: say what */
            api_problem_store(res, STORE_EUNAVAILABLE, app_of(req)->store);
            return;
        }
        api_problem(res, API_ESTORE_UNAVAILABLE,
                    "the player-token secret shared through the game store cannot be read yet; nothing was changed",
                    NULL, NULL);
        res->retry_after = 1;
        return;
    }
    routes[req->route].handler(req, res);
}

void router_dispatch(api_request_t *req, api_response_t *res)
{
    if (router_find(req, res))
        router_handle(req, res);
}
