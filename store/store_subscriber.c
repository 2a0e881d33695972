/* See subscriber.h. On one node: one connection, SUBSCRIBE, and its socket
 * is the one the caller polls. On a cluster: SSUBSCRIBE, each channel on
 * the master of its slot, one connection per master, all made at open (no
 * later call waits), gathered by one epoll descriptor the caller polls. A
 * PING round is a barrier: answered once every connection has answered. */
#include "subscriber.h"

#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <unistd.h>

#include "store_private.h"

/* A game's channel shares its keys' hash tag, so its messages stay on its
 * shard. Whatever could lose one on a cluster (a node's connection failing,
 * a refusal such as MOVED, or a server-side SUNSUBSCRIBE when a slot moves
 * away) is reported as the connection lost. The caller then subscribes
 * again everywhere, on a fresh map, and reads its games again.
 * Each connection answers a PING in order, after the messages Redis queued
 * for it before, so a caller can wait behind a round: a game's messages
 * stay on the connection its channel is on. */

typedef struct {
    cluster_node_t node;
    conn_t *conn;
    unsigned unsubscribes_owed; /* SUNSUBSCRIBE sent, answer not read yet */
    uint64_t pongs;             /* PONGs read: rounds 1 to pongs are answered here */
    bool watching_write; /* registered for EPOLLOUT */
} node_sub_t;

struct store_subscriber {
    store_t *store;
    bool cluster;
    int epoll_fd;                /* cluster: gathers the nodes' sockets */
    node_sub_t *nodes;           /* cluster: one per master reached at open; else the one */
    unsigned node_count, node_capacity;
    cluster_map_t *map;          /* cluster: where each channel's slot lives */
    uint64_t rounds;             /* PING rounds queued */
    uint64_t answered;           /* rounds answered on every connection (the last PONG reported) */
    bool failed;                 /* a reply said the subscription state is no longer known */
    /* The caller's callback, for the reply handler. */
    store_sub_fn fn;
    void *ctx;
    node_sub_t *reading;
};

static bool add_node(store_subscriber_t *sub, const cluster_node_t *node, conn_t *conn)
{
    void *nodes = sub->nodes;
    bool room = store_array_reserve(&nodes, &sub->node_capacity, sub->node_count, sizeof *sub->nodes);
    sub->nodes = nodes;
    if (!room)
        return false;
    node_sub_t *n = &sub->nodes[sub->node_count];
    memset(n, 0, sizeof *n);
    if (node)
        n->node = *node;
    n->conn = conn;
    if (sub->cluster) {
        struct epoll_event ev = { .events = EPOLLIN, .data.u32 = sub->node_count };
        if (epoll_ctl(sub->epoll_fd, EPOLL_CTL_ADD, conn_fd(conn), &ev) < 0)
            return false;
    }
    sub->node_count++;
    return true;
}

store_subscriber_t *store_subscriber_open(store_t *store, char *err, size_t err_size)
{
    store_subscriber_t *sub = calloc(1, sizeof *sub);
    if (!sub) {
        snprintf(err, err_size, "out of memory");
        return NULL;
    }
    sub->store = store;
    sub->cluster = store_is_cluster(store);
    sub->epoll_fd = -1;
    if (!sub->cluster) {
        conn_t *c = store_connect_node(store, NULL, err, err_size);
        if (!c || !add_node(sub, NULL, c)) {
            conn_free(c);
            store_subscriber_close(sub);
            return NULL;
        }
        return sub;
    }
    sub->epoll_fd = epoll_create1(EPOLL_CLOEXEC);
    sub->map = malloc(sizeof *sub->map);
    if (sub->epoll_fd < 0 || !sub->map) {
        snprintf(err, err_size, "out of memory");
        store_subscriber_close(sub);
        return NULL;
    }
    if (!store_cluster_map(store, sub->map)) {
        snprintf(err, err_size, "no node of the Redis Cluster gives its slot map");
        store_subscriber_close(sub);
        return NULL;
    }
    /* Every master now, while the caller waits anyway (the hub drops its
     * lock for this): later calls only queue and never connect. A master
     * that cannot be reached is left out; a channel it serves cannot be
     * subscribed, which the caller hears as a lost connection (and so it
     * tries again later, from a fresh map). */
    for (unsigned i = 0; i < sub->map->node_count; i++) {
        conn_t *c = store_connect_node(store, &sub->map->nodes[i], NULL, 0);
        if (c && !add_node(sub, &sub->map->nodes[i], c))
            conn_free(c);
    }
    if (sub->node_count == 0) {
        snprintf(err, err_size, "no master of the Redis Cluster can be reached");
        store_subscriber_close(sub);
        return NULL;
    }
    return sub;
}

void store_subscriber_close(store_subscriber_t *sub)
{
    if (!sub)
        return;
    for (unsigned i = 0; i < sub->node_count; i++)
        conn_free(sub->nodes[i].conn);
    free(sub->nodes);
    free(sub->map);
    if (sub->epoll_fd >= 0)
        close(sub->epoll_fd);
    free(sub);
}

int store_subscriber_fd(const store_subscriber_t *sub)
{
    return sub->cluster ? sub->epoll_fd : conn_fd(sub->nodes[0].conn);
}

bool store_subscriber_wants_write(const store_subscriber_t *sub)
{
    /* On a cluster the epoll descriptor turns readable for a node's writes too. */
    return !sub->cluster && (conn_poll_events(sub->nodes[0].conn) & POLLOUT);
}

/* The connection serving channel: the one node, or its slot's master (connected on first use). */
static node_sub_t *node_for(store_subscriber_t *sub, const char *channel)
{
    if (!sub->cluster)
        return &sub->nodes[0];
    unsigned index = sub->map->slot_node[cluster_key_slot(channel, strlen(channel))];
    if (index == CLUSTER_NO_NODE)
        return NULL;
    const cluster_node_t *node = &sub->map->nodes[index];
    for (unsigned i = 0; i < sub->node_count; i++) {
        if (sub->nodes[i].node.port == node->port && !strcmp(sub->nodes[i].node.host, node->host))
            return &sub->nodes[i];
    }
    return NULL; /* a master that could not be reached at open: never connected here */
}

static store_status_t queue(node_sub_t *n, const char *command, const char *channel)
{
    const char *argv[] = { command, channel };
    return n && conn_append(n->conn, channel ? 2 : 1, argv, NULL) ? STORE_OK : STORE_EUNAVAILABLE;
}

store_status_t store_subscriber_subscribe(store_subscriber_t *sub, const char *channel)
{
    return queue(node_for(sub, channel), sub->cluster ? "SSUBSCRIBE" : "SUBSCRIBE", channel);
}

store_status_t store_subscriber_unsubscribe(store_subscriber_t *sub, const char *channel)
{
    node_sub_t *n = node_for(sub, channel);
    store_status_t status = queue(n, sub->cluster ? "SUNSUBSCRIBE" : "UNSUBSCRIBE", channel);
    if (status == STORE_OK)
        n->unsubscribes_owed++;
    return status;
}

/* A PING on every connection, whatever each still owes: a connection answers
 * in order, so its k-th PONG answers round k. */
store_status_t store_subscriber_ping(store_subscriber_t *sub)
{
    for (unsigned i = 0; i < sub->node_count; i++)
        if (queue(&sub->nodes[i], "PING", NULL) != STORE_OK)
            return STORE_EUNAVAILABLE;
    sub->rounds++;
    return STORE_OK;
}

/* A PONG read on n: reported when it completes a round on every connection. */
static void on_pong(store_subscriber_t *sub, node_sub_t *n)
{
    if (n->pongs >= sub->rounds)
        return; /* not one of ours */
    n->pongs++;
    uint64_t answered = n->pongs;
    for (unsigned i = 0; i < sub->node_count; i++)
        if (sub->nodes[i].pongs < answered)
            answered = sub->nodes[i].pongs;
    if (answered <= sub->answered)
        return;
    sub->answered = answered;
    store_sub_reply_t reply = { .kind = STORE_SUB_PONG, .round = answered };
    sub->fn(sub->ctx, &reply);
}

/* Writes what each socket takes; on a cluster, watches for writability
 * while bytes wait. */
store_status_t store_subscriber_flush(store_subscriber_t *sub)
{
    for (unsigned i = 0; i < sub->node_count; i++) {
        node_sub_t *n = &sub->nodes[i];
        if (!conn_flush(n->conn))
            return STORE_EUNAVAILABLE;
        bool want = (conn_poll_events(n->conn) & POLLOUT) != 0;
        if (sub->cluster && want != n->watching_write) {
            struct epoll_event ev = { .events = EPOLLIN | (want ? EPOLLOUT : 0), .data.u32 = i };
            if (epoll_ctl(sub->epoll_fd, EPOLL_CTL_MOD, conn_fd(n->conn), &ev) < 0)
                return STORE_EUNAVAILABLE;
            n->watching_write = want;
        }
    }
    return STORE_OK;
}

static bool element_is(const redisReply *r, const char *text)
{
    size_t n = strlen(text);
    return r->type == REDIS_REPLY_STRING && r->len == n && !memcmp(r->str, text, n);
}

/* A reply of subscribed mode: [kind, channel, payload or count], or [pong, ""]
 * (or +PONG). Anything that leaves the subscriptions unknown marks the
 * subscriber failed. */
static void on_reply(void *ctx, redisReply *r)
{
    store_subscriber_t *sub = ctx;
    node_sub_t *n = sub->reading;
    store_sub_reply_t reply = { 0 };
    if (r->type == REDIS_REPLY_ERROR) {
        sub->failed = true; /* MOVED, CLUSTERDOWN, ...: a subscription was refused */
    } else if ((r->type == REDIS_REPLY_STATUS && !strcmp(r->str, "PONG"))
               || (r->type == REDIS_REPLY_ARRAY && r->elements >= 1 && element_is(r->element[0], "pong"))) {
        on_pong(sub, n);
    } else if (r->type == REDIS_REPLY_ARRAY && r->elements == 3 && r->element[1]->type == REDIS_REPLY_STRING) {
        const redisReply *kind = r->element[0];
        reply.channel = r->element[1]->str;
        reply.channel_length = r->element[1]->len;
        bool deliver = true;
        if ((element_is(kind, "message") || element_is(kind, "smessage")) && r->element[2]->type == REDIS_REPLY_STRING) {
            reply.kind = STORE_SUB_MESSAGE;
            reply.payload = r->element[2]->str;
            reply.payload_length = r->element[2]->len;
        } else if (element_is(kind, "subscribe") || element_is(kind, "ssubscribe")) {
            reply.kind = STORE_SUB_SUBSCRIBED;
        } else if (element_is(kind, "unsubscribe")) {
            reply.kind = STORE_SUB_UNSUBSCRIBED;
        } else if (element_is(kind, "sunsubscribe")) {
            /* Not asked for: the slot moved to another node. */
            if (n->unsubscribes_owed == 0)
                sub->failed = true;
            else
                n->unsubscribes_owed--;
            reply.kind = STORE_SUB_UNSUBSCRIBED;
            deliver = !sub->failed;
        } else {
            deliver = false;
        }
        if (deliver)
            sub->fn(sub->ctx, &reply);
    }
    freeReplyObject(r);
}

static store_status_t read_node(store_subscriber_t *sub, node_sub_t *n)
{
    sub->reading = n;
    bool ok = conn_read(n->conn, on_reply, sub);
    return ok && !sub->failed ? STORE_OK : STORE_EUNAVAILABLE;
}

store_status_t store_subscriber_read(store_subscriber_t *sub, store_sub_fn fn, void *ctx)
{
    sub->fn = fn;
    sub->ctx = ctx;
    if (!sub->cluster)
        return read_node(sub, &sub->nodes[0]);
    struct epoll_event events[16];
    int ready = epoll_wait(sub->epoll_fd, events, 16, 0);
    for (int i = 0; i < ready; i++) {
        unsigned index = events[i].data.u32;
        if (index >= sub->node_count)
            continue;
        node_sub_t *n = &sub->nodes[index];
        if ((events[i].events & (EPOLLIN | EPOLLHUP | EPOLLERR)) && read_node(sub, n) != STORE_OK)
            return STORE_EUNAVAILABLE;
        if ((events[i].events & EPOLLOUT) && store_subscriber_flush(sub) != STORE_OK)
            return STORE_EUNAVAILABLE;
    }
    return STORE_OK;
}
