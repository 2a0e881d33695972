/* What the files of store/ share and nothing above them sees: a fresh Redis
 * connection made with the store's settings, for a file that keeps one to
 * itself (store_subscriber.c) rather than the per-thread ones of
 * store_redis.c. */
#ifndef CHESSD_STORE_STORE_PRIVATE_H
#define CHESSD_STORE_STORE_PRIVATE_H

#include <hiredis/hiredis.h>

#include "store.h"

/* A new blocking connection to the store's Redis: connect timeout, command
 * timeout, AUTH and SELECT as the store's URL says, counted in the store's
 * connects (or errors). NULL when it cannot be made, with the reason in err
 * (when err_size is not 0). The caller owns it: free with redisFree(). */
redisContext *store_connect_raw(store_t *store, char *err, size_t err_size);

#endif
