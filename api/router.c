/* The route table. A '*' segment in a path matches one path segment (an id)
 * and is handed to the handler in path_param. HEAD is served wherever GET is
 * (the server sends no body). */
#include "router.h"

#include <string.h>

#include "handlers.h"
#include "problem.h"

typedef struct {
    const char *name; /* the metrics label */
    const char *path;
    const char *method;
    api_handler_fn handler;
    const char *allow; /* the Allow header for this path */
    bool reads_query;  /* the handler reads query parameters */
} route_t;

static const route_t routes[] = {
    { "GET /healthz", "/healthz", "GET", handle_healthz, "GET, HEAD", false },
    { "GET /readyz", "/readyz", "GET", handle_readyz, "GET, HEAD", false },
    { "GET /version", "/version", "GET", handle_version, "GET, HEAD", false },
    { "GET /openapi.yaml", "/openapi.yaml", "GET", handle_openapi, "GET, HEAD", false },
    { "GET /v1/position", "/v1/position", "GET", handle_position, "GET, HEAD, POST", true },
    { "POST /v1/position", "/v1/position", "POST", handle_position, "GET, HEAD, POST", true },
    { "POST /v1/position/moves", "/v1/position/moves", "POST", handle_position_moves, "POST", true },
    { "GET /v1/perft", "/v1/perft", "GET", handle_perft, "GET, HEAD", true },
    { "POST /v1/games", "/v1/games", "POST", handle_game_create, "POST", false },
    { "GET /v1/games/{id}", "/v1/games/*", "GET", handle_game_get, "GET, HEAD", false },
    { "POST /v1/games/{id}/moves", "/v1/games/*/moves", "POST", handle_game_move, "POST", false },
    { "POST /v1/games/{id}/undo", "/v1/games/*/undo", "POST", handle_game_undo, "POST", false },
    { "POST /v1/games/{id}/resign", "/v1/games/*/resign", "POST", handle_game_resign, "POST", false },
    { "POST /v1/games/{id}/draw", "/v1/games/*/draw", "POST", handle_game_draw, "POST", false },
    { "GET /v1/games/{id}/pgn", "/v1/games/*/pgn", "GET", handle_game_pgn, "GET, HEAD", false },
    { "GET /metrics", "/metrics", "GET", handle_metrics, "GET, HEAD", false },
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

void router_dispatch(api_request_t *req, api_response_t *res)
{
    const char *method = strcmp(req->method, "HEAD") ? req->method : "GET";
    const char *allow = NULL;
    req->route = -1;
    for (int i = 0; i < ROUTE_COUNT; i++) {
        if (!path_matches(routes[i].path, req->path, req->path_param, sizeof req->path_param))
            continue;
        if (!strcmp(routes[i].method, method)) {
            req->route = i;
            /* C strings would cut a value with a NUL short: refuse it rather than half-read it. */
            if (routes[i].reads_query && api_request_query_has_nul(req)) {
                api_problem(res, API_EINVALID_PARAMETER, "a query parameter contains a NUL byte (%00)", NULL, NULL);
                return;
            }
            routes[i].handler(req, res);
            return;
        }
        allow = routes[i].allow;
    }
    if (!allow) {
        api_problem(res, API_ENOT_FOUND, "no resource at this path", NULL, NULL);
        return;
    }
    api_problem(res, API_EMETHOD_NOT_ALLOWED, "this resource allows only the methods in the Allow header", NULL,
                NULL);
    res->allow = allow;
}
