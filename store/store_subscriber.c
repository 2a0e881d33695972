/* See subscriber.h. hiredis 0.14 has no non-blocking mode for a context made
 * with a timeout, so the socket is switched to O_NONBLOCK by hand once AUTH
 * and SELECT are done, and REDIS_BLOCK cleared: redisBufferRead and
 * redisBufferWrite then take EAGAIN as "later", and replies are taken with
 * redisGetReplyFromReader (redisGetReply would loop on the socket). */
#include "subscriber.h"

#include <fcntl.h>
#include <hiredis/hiredis.h>
#include <hiredis/sds.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "store_private.h"

struct store_subscriber {
    redisContext *c;
};

store_subscriber_t *store_subscriber_open(store_t *store, char *err, size_t err_size)
{
    store_subscriber_t *sub = calloc(1, sizeof *sub);
    if (!sub) {
        snprintf(err, err_size, "out of memory");
        return NULL;
    }
    sub->c = store_connect_raw(store, err, err_size);
    if (!sub->c) {
        free(sub);
        return NULL;
    }
    int flags = fcntl(sub->c->fd, F_GETFL);
    if (flags < 0 || fcntl(sub->c->fd, F_SETFL, flags | O_NONBLOCK) < 0) {
        snprintf(err, err_size, "cannot make the subscriber's socket non-blocking");
        store_subscriber_close(sub);
        return NULL;
    }
    sub->c->flags &= ~REDIS_BLOCK;
    /* A peer that vanishes without a reset is noticed by the caller's
     * pings; keep-alive covers a connection the caller stopped pinging. */
    (void)redisEnableKeepAlive(sub->c);
    return sub;
}

void store_subscriber_close(store_subscriber_t *sub)
{
    if (!sub)
        return;
    redisFree(sub->c);
    free(sub);
}

int store_subscriber_fd(const store_subscriber_t *sub) { return sub->c->fd; }

bool store_subscriber_wants_write(const store_subscriber_t *sub)
{
    return !sub->c->err && sub->c->obuf && sdslen(sub->c->obuf) > 0;
}

static store_status_t queue_command(store_subscriber_t *sub, const char *command, const char *channel)
{
    const char *argv[] = { command, channel };
    if (sub->c->err || redisAppendCommandArgv(sub->c, channel ? 2 : 1, argv, NULL) != REDIS_OK)
        return STORE_EUNAVAILABLE;
    return STORE_OK;
}

store_status_t store_subscriber_subscribe(store_subscriber_t *sub, const char *channel)
{
    return queue_command(sub, "SUBSCRIBE", channel);
}

store_status_t store_subscriber_unsubscribe(store_subscriber_t *sub, const char *channel)
{
    return queue_command(sub, "UNSUBSCRIBE", channel);
}

store_status_t store_subscriber_ping(store_subscriber_t *sub) { return queue_command(sub, "PING", NULL); }

store_status_t store_subscriber_flush(store_subscriber_t *sub)
{
    int done = 0;
    return redisBufferWrite(sub->c, &done) == REDIS_OK ? STORE_OK : STORE_EUNAVAILABLE;
}

static bool element_is(const redisReply *r, const char *text)
{
    size_t n = strlen(text);
    return r->type == REDIS_REPLY_STRING && r->len == n && !memcmp(r->str, text, n);
}

/* A push of subscribed mode: [kind, channel, payload or count], or [pong, ""]. */
static void deliver(const redisReply *r, store_sub_fn fn, void *ctx)
{
    if (r->type != REDIS_REPLY_ARRAY || r->elements < 2)
        return;
    const redisReply *kind = r->element[0], *channel = r->element[1];
    store_sub_reply_t reply = { 0 };
    if (element_is(kind, "pong")) {
        reply.kind = STORE_SUB_PONG;
        fn(ctx, &reply);
        return;
    }
    if (r->elements != 3 || channel->type != REDIS_REPLY_STRING)
        return;
    reply.channel = channel->str;
    reply.channel_length = channel->len;
    if (element_is(kind, "message") && r->element[2]->type == REDIS_REPLY_STRING) {
        reply.kind = STORE_SUB_MESSAGE;
        reply.payload = r->element[2]->str;
        reply.payload_length = r->element[2]->len;
    } else if (element_is(kind, "subscribe")) {
        reply.kind = STORE_SUB_SUBSCRIBED;
    } else if (element_is(kind, "unsubscribe")) {
        reply.kind = STORE_SUB_UNSUBSCRIBED;
    } else {
        return;
    }
    fn(ctx, &reply);
}

store_status_t store_subscriber_read(store_subscriber_t *sub, store_sub_fn fn, void *ctx)
{
    if (redisBufferRead(sub->c) != REDIS_OK)
        return STORE_EUNAVAILABLE;
    for (;;) {
        void *reply = NULL;
        if (redisGetReplyFromReader(sub->c, &reply) != REDIS_OK)
            return STORE_EUNAVAILABLE;
        if (!reply)
            return STORE_OK;
        deliver(reply, fn, ctx);
        freeReplyObject(reply);
    }
}
