/* Redis Cluster's routing rules, as pure functions: the hash slot of a key
 * (CRC16 of its hash tag), the redirections a node answers (MOVED, ASK), and
 * the slot map read from CLUSTER SLOTS. No I/O: store_redis.c does the
 * talking. */
#ifndef CHESSD_STORE_CLUSTER_H
#define CHESSD_STORE_CLUSTER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <hiredis/hiredis.h>

enum {
    CLUSTER_SLOT_COUNT = 16384,
    CLUSTER_HOST_SIZE = 256,  /* a node's host (name or IP literal, no brackets), NUL included */
    CLUSTER_NODES_MAX = 256,  /* masters a map can hold */
    CLUSTER_NO_NODE = 0xffff, /* a slot no master serves */
};

/* Redis's HASH_SLOT: CRC16 (XMODEM) of the key, or of the text between the
 * first '{' and the first '}' after it when that text is not empty, mod
 * 16384. */
unsigned cluster_key_slot(const char *key, size_t length);

/* Rewrites the last three characters of text (length bytes, no braces),
 * each one of the 64 of alphabet, so that its slot as a key is slot; the
 * rest keeps its bytes. One lookup in a table made on the first call, not
 * a walk: the CRC of a text is linear in its bytes. False, text unchanged,
 * when length < 3 or no such tail exists (the table misses the value). */
bool cluster_fit_slot(char *text, size_t length, const char alphabet[64], unsigned slot);

typedef struct {
    char host[CLUSTER_HOST_SIZE]; /* "" when the node answered ":port" (same host as the one asked) */
    int port;
} cluster_node_t;

typedef enum { CLUSTER_REDIRECT_MOVED = 1, CLUSTER_REDIRECT_ASK } cluster_redirect_kind_t;

typedef struct {
    cluster_redirect_kind_t kind;
    unsigned slot;
    cluster_node_t node;
} cluster_redirect_t;

/* Reads an error reply "MOVED <slot> <host>:<port>" or "ASK <slot>
 * <host>:<port>" (an IPv6 host is split at its last ':'; the host may be
 * empty). False for any other text or one out of range (slot >= 16384, port
 * not 1-65535, host too long). */
bool cluster_parse_redirect(const char *error, size_t length, cluster_redirect_t *out);

/* Which master serves each slot. */
typedef struct {
    uint16_t slot_node[CLUSTER_SLOT_COUNT]; /* index into nodes, or CLUSTER_NO_NODE */
    cluster_node_t nodes[CLUSTER_NODES_MAX];
    unsigned node_count;
} cluster_map_t;

/* Fills map from a CLUSTER SLOTS reply: each range's first node is its
 * master. A master's empty host (or "?") stands for asked_host, the host of
 * the node that answered. False, with the reason in err, for a reply of
 * another shape (not an array, a range out of order or bounds, a bad port,
 * more than CLUSTER_NODES_MAX masters); a reply that covers only some slots
 * is accepted (the rest are CLUSTER_NO_NODE). */
bool cluster_map_from_slots(const redisReply *reply, const char *asked_host, cluster_map_t *map, char *err,
                            size_t err_size);

/* The index of node in map (same host and port), or CLUSTER_NO_NODE. */
unsigned cluster_map_find(const cluster_map_t *map, const char *host, int port);

#endif
