/* Routing: one table maps (path, method) to a handler, the query parameters
 * it reads and how the server treats it (probe, work pool, creation limit).
 * Unknown paths get 404, known paths with another method 405 with an Allow
 * header, unknown or repeated query parameters 400. */
#ifndef CHESSD_API_ROUTER_H
#define CHESSD_API_ROUTER_H

#include "request.h"
#include "target.h"

/* What the server does around a route's handler. */
enum {
    ROUTE_PROBE = 1 << 0,  /* health, readiness, metrics: never rate-limited or refused while draining */
    ROUTE_POOL = 1 << 1,   /* long work: runs on the work pool, off the connection threads */
    ROUTE_CREATES = 1 << 2, /* creates stored data: under the per-address creation limit */
    ROUTE_GAME = 1 << 3,    /* a stored game: 404 without a store, 503 while the player-token secret is not known */
    ROUTE_STREAM = 1 << 4   /* an event stream: admitted under the stream bounds before its handler runs */
};

/* Parses the raw request target into *target (req->target should point at it
 * afterwards); false with res filled (400) when it cannot be routed. */
bool router_parse_target(const char *raw, size_t length, target_t *target, api_response_t *res);

/* Finds req's route (req->target set) among those with all of
 * req->route_flags: sets req->route and req->path_param and returns true, or
 * returns false with res filled (404, 405, 400 for the query) and req->route
 * the matched path's route or -1. */
bool router_find(api_request_t *req, api_response_t *res);

/* Runs the handler of req->route (set by router_find); for a ROUTE_GAME
 * route only with a store (req->store NULL, --redis none: 404
 * games_disabled) and once the token secret is known (see token_secret.h),
 * else answers 503 store_unavailable. */
void router_handle(const api_request_t *req, api_response_t *res);

/* router_find, then router_handle when a route was found. */
void router_dispatch(api_request_t *req, api_response_t *res);

/* The ROUTE_* flags of route i (0 for -1). */
unsigned router_route_flags(int route);

/* Number of routes, and a stable label for route i ("GET /v1/games/{id}"). */
int router_route_count(void);
const char *router_route_name(int route);

#endif
