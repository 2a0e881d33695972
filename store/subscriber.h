/* A Redis Pub/Sub subscriber, made with the game store's settings and owned
 * by the one thread that polls it (api/live/events.c's hub). One connection
 * to a single Redis, or on a Cluster sharded subscriptions on the masters
 * serving the channels' slots, behind one descriptor to poll. It never
 * waits once made, and any failure loses the connection and its channels. */
#ifndef CHESSD_STORE_SUBSCRIBER_H
#define CHESSD_STORE_SUBSCRIBER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "store.h"

/* Commands are queued and written as the sockets take them, and replies are
 * read as they arrive and handed to a callback. Any failure (on a cluster,
 * also a slot moving away) means the connection is lost: close it and open
 * another (its subscriptions went with it). */

typedef struct store_subscriber store_subscriber_t;

typedef enum {
    STORE_SUB_MESSAGE,      /* a message published on channel: payload */
    STORE_SUB_SUBSCRIBED,   /* SUBSCRIBE channel took effect: later messages will come */
    STORE_SUB_UNSUBSCRIBED, /* UNSUBSCRIBE channel took effect */
    STORE_SUB_PONG,         /* store_subscriber_ping's round `round` answered on every connection */
    STORE_SUB_KIND_COUNT
} store_sub_kind_t;

/* One reply; its texts are valid during the callback only. */
typedef struct {
    store_sub_kind_t kind;
    const char *channel; /* not terminated; NULL for PONG */
    size_t channel_length;
    const char *payload; /* MESSAGE: not terminated */
    size_t payload_length;
    uint64_t round; /* PONG: every round up to this one is answered */
} store_sub_reply_t;

typedef void (*store_sub_fn)(void *ctx, const store_sub_reply_t *reply);

/* Connects (blocking, within the store's connect timeout; AUTH and SELECT
 * done); on a cluster reads the slot map and connects to every master (the
 * only call that waits). NULL with the reason in err when Redis cannot be
 * reached. */
store_subscriber_t *store_subscriber_open(store_t *store, char *err, size_t err_size);
/* NULL is fine. */
void store_subscriber_close(store_subscriber_t *sub);

/* The socket, for poll(): POLLIN always, POLLOUT while
 * store_subscriber_wants_write is true. */
int store_subscriber_fd(const store_subscriber_t *sub);
bool store_subscriber_wants_write(const store_subscriber_t *sub);

/* Queue a command (written by store_subscriber_flush). STORE_EUNAVAILABLE
 * when the connection is lost or out of memory. channel: NUL-terminated. */
store_status_t store_subscriber_subscribe(store_subscriber_t *sub, const char *channel);
store_status_t store_subscriber_unsubscribe(store_subscriber_t *sub, const char *channel);
/* Queues a PING on every connection: the next round of them (rounds are
 * 1, 2, ... in call order from open). A PONG reply with round n comes once
 * every connection has answered round n, and so after every message
 * published on a subscribed channel before round n was queued: a barrier
 * behind which nothing published earlier is still on its way. Rounds are
 * answered in order; one PONG may answer several. */
store_status_t store_subscriber_ping(store_subscriber_t *sub);

/* Writes what the socket takes of the queued commands, without waiting. */
store_status_t store_subscriber_flush(store_subscriber_t *sub);

/* Reads what has arrived (one read, without waiting) and calls fn for every
 * complete reply, in order; replies of other kinds are dropped.
 * STORE_EUNAVAILABLE when the connection is lost (closed, reset, a protocol
 * error). */
store_status_t store_subscriber_read(store_subscriber_t *sub, store_sub_fn fn, void *ctx);

#endif
