/* What a handler may know of the running service besides its request: the
 * settings, the game store and the service keys. The transport carries it as an opaque pointer
 * (api_request_t.app, set by the server for every request); handlers read it
 * through app_of(). */
#ifndef CHESSD_API_APP_H
#define CHESSD_API_APP_H

#include "http/request.h"

struct config;
struct store;
struct engine_pool;
struct engine_turns;
struct workpool;
struct ratelimit;
struct service_keys;

typedef struct app {
    const struct config *config;
    struct store *store; /* NULL with --redis none: no games */
    struct engine_pool *engines; /* never NULL in a server; a pool without an engine answers ENGINE_EDOWN */
    struct engine_pool *variant_engines; /* the variants' (engine_pool_for_variant); never NULL in a server */
    bool engine_only;            /* `chessd engine`: ready only while an engine runs */
    struct engine_turns *turns;  /* the computer's turns this replica plays (NULL: none) */
    struct workpool *store_pool; /* the game requests' pool (NULL without a store): exports read there too */
    struct ratelimit *bulk_games; /* games made by bulks, per client address (NULL: no limit) */
    struct service_keys *service_keys; /* --service-keys-file's (NULL: none, every route open as ever) */
} app_t;

static inline const app_t *app_of(const api_request_t *req)
{
    return (const app_t *)req->app;
}

#endif
