/* Routing: one table maps (path, method) to a handler. Unknown paths get
 * 404, known paths with another method 405 with an Allow header. */
#ifndef CHESSD_API_ROUTER_H
#define CHESSD_API_ROUTER_H

#include "http.h"

/* Runs the handler for req (setting req->path_param and req->route, -1 when
 * no route matched) and fills res. Never fails: errors become problems. */
void router_dispatch(api_request_t *req, api_response_t *res);

/* Number of routes, and a stable label for route i ("GET /v1/games/{id}"). */
int router_route_count(void);
const char *router_route_name(int route);

#endif
