/* chessd's route table, over the transport's router (http/router.h): every
 * route, the query parameters it reads, and how the server runs it (probe,
 * work pool, creation limit, stored game). Router statuses become problems
 * here, and a stored-game route runs only with a store and the token secret. */
#ifndef CHESSD_API_ROUTES_H
#define CHESSD_API_ROUTES_H

#include <stdbool.h>
#include <stddef.h>

#include "http/request.h"
#include "http/router.h"
#include "http/target.h"

/* chessd's own route flags, beside the transport's (request.h). */
enum {
    ROUTE_GAME = ROUTE_APP_FIRST << 0, /* a stored game: 404 without a store, 503 while the token secret is not known */
    ROUTE_GAME_ID = ROUTE_APP_FIRST << 1,   /* the path's '*' is a game id: one that is none is 404 at once */
    ROUTE_STREAM_ID = ROUTE_APP_FIRST << 2, /* the path's '*' is a multi-game stream's id: likewise */
    ROUTE_BULK_ID = ROUTE_APP_FIRST << 3,   /* the path's '*' is a bulk's id: likewise */
    /* With service keys (--service-keys-file), a key holding the scope:
     * 401 without one, 403 when it lacks the scope (routes_handle). */
    ROUTE_SCOPE_CREATE = ROUTE_APP_FIRST << 4,   /* games:create */
    ROUTE_SCOPE_BULK = ROUTE_APP_FIRST << 5,     /* games:bulk */
    ROUTE_SCOPE_EXPORT = ROUTE_APP_FIRST << 6,   /* games:export */
    ROUTE_SCOPE_ANALYSIS = ROUTE_APP_FIRST << 7, /* analysis */
    /* ...or a bearer token that is no key, which the handler must find to
     * be a player's of the game before it answers. */
    ROUTE_SCOPE_OR_PLAYER = ROUTE_APP_FIRST << 8,
};

/* The work pools a route runs on (router_route_t.pool), as the server
 * starts them. */
enum { ROUTES_POOL_PERFT = 0, ROUTES_POOL_STORE, ROUTES_POOL_ENGINE, ROUTES_POOL_COUNT };

/* Builds the route table; call once at start-up, before any request is
 * routed (routes_find). False when memory runs out. */
bool routes_init(void);

/* Parses the raw request target into *target (req->target should point at
 * it afterwards); false with res filled (400, 404) when it cannot be routed. */
bool routes_parse_target(const char *raw, size_t length, target_t *target, api_response_t *res);

/* Finds req's route (req->target set) among those with all of
 * req->route_flags: sets req->route and req->path_param and returns true, or
 * returns false with res filled (404, 405 with Allow, 400 for the query) and
 * req->route the matched path's route or -1. */
bool routes_find(api_request_t *req, api_response_t *res);

/* Runs the handler of req->route (set by routes_find); for a route with a
 * scope, with service keys, only for a key holding it (else 401
 * service_key_required or invalid_service_key, 403 scope_missing); for a
 * ROUTE_GAME route only with a store (without: 404 games_disabled), with
 * an id in its path that could be one (else 404, saying what an id looks
 * like), and once the token secret is known (see game/token_secret.h),
 * else 503 store_unavailable. */
void routes_handle(const api_request_t *req, api_response_t *res);

/* routes_find, then routes_handle when a route was found. */
void routes_dispatch(api_request_t *req, api_response_t *res);

/* Route i's flags and pool (0 and -1 outside the table). */
unsigned routes_flags(int route);
int routes_pool(int route);

/* Number of routes, and a stable label for route i ("GET /v1/games/{id}"). */
int routes_count(void);
const char *routes_name(int route);

#endif
