/* What the files of store/ share and nothing above them sees: fresh Redis
 * connections made with the store's settings, and a cluster's slot map, for
 * a file that keeps connections to itself (store_subscriber.c) rather than
 * the per-thread ones of store_redis.c. */
#ifndef CHESSD_STORE_STORE_PRIVATE_H
#define CHESSD_STORE_STORE_PRIVATE_H

#include <stdbool.h>

#include "cluster.h"
#include "conn.h"
#include "store.h"

/* Whether the store's URL names a Redis Cluster. */
bool store_is_cluster(const store_t *store);

/* A new connection to node (NULL: the one node of a single-node URL) with
 * the store's timeouts, TLS and credentials, counted in the store's connects
 * (or errors). NULL when it cannot be made, with the reason in err (when
 * err_size is not 0). The caller owns it: conn_free(). */
conn_t *store_connect_node(store_t *store, const cluster_node_t *node, char *err, size_t err_size);

/* A copy of the cluster's slot map, read from the cluster first (the map
 * kept before when no node answers). False when there is none. */
bool store_cluster_map(store_t *store, cluster_map_t *out);

/* Makes room for one more item in a growable array of item_size-byte
 * items (*items holding count of *capacity; the capacity doubles, from 4).
 * False, with the array unchanged, when memory runs out. */
bool store_array_reserve(void **items, unsigned *capacity, unsigned count, size_t item_size);

#endif
