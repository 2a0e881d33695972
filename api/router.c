/* The route table. HEAD is served wherever GET is (the server sends no body). */
#include "router.h"

#include <string.h>

#include "handlers.h"
#include "problem.h"

typedef struct {
    const char *path;
    const char *method;
    api_handler_fn handler;
    const char *allow; /* the Allow header for this path */
} route_t;

static const route_t routes[] = {
    { "/healthz", "GET", handle_healthz, "GET, HEAD" },
    { "/readyz", "GET", handle_readyz, "GET, HEAD" },
    { "/version", "GET", handle_version, "GET, HEAD" },
    { "/openapi.yaml", "GET", handle_openapi, "GET, HEAD" },
    { "/v1/position", "GET", handle_position, "GET, HEAD, POST" },
    { "/v1/position", "POST", handle_position, "GET, HEAD, POST" },
    { "/v1/position/moves", "POST", handle_position_moves, "POST" },
    { "/v1/perft", "GET", handle_perft, "GET, HEAD" },
};

void router_dispatch(const api_request_t *req, api_response_t *res)
{
    const char *method = strcmp(req->method, "HEAD") ? req->method : "GET";
    const char *allow = NULL;
    for (size_t i = 0; i < sizeof routes / sizeof routes[0]; i++) {
        if (strcmp(routes[i].path, req->path))
            continue;
        if (!strcmp(routes[i].method, method)) {
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
