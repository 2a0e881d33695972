/* Tests for store/store_subscriber.c against a private redis-server: a
 * SUBSCRIBE is acknowledged, then messages come in order, binary-safe, until
 * an UNSUBSCRIBE. PING rounds are answered in order, each after every
 * message published before it; nothing waits when nothing has come; a Redis
 * that goes away is reported as a lost connection. */
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../store/store.h"
#include "../../store/subscriber.h"
#include "../support/redis_server.h"
#include "../support/tests.h"

static redis_server_t server;
static store_t *store;

static int suite_init(void)
{
    redis_server_init(&server);
    if (!redis_server_start(&server)) {
        fprintf(stderr, "\nsubscriber suite: cannot start a private redis-server: %s\n", server.error);
        return 1;
    }
    char url[64];
    redis_server_url(&server, url, sizeof url);
    store = redis_server_open_store(url, 500);
    if (!store) {
        redis_server_stop(&server);
        return 1;
    }
    return 0;
}

static int suite_cleanup(void)
{
    store_close(store);
    redis_server_stop(&server);
    return 0;
}

enum { SEEN_MAX = 16 };

typedef struct {
    int count;
    store_sub_kind_t kinds[SEEN_MAX];
    char channels[SEEN_MAX][64];
    char payloads[SEEN_MAX][64];
    size_t payload_lengths[SEEN_MAX];
    uint64_t rounds[SEEN_MAX]; /* PONG: the round answered */
} seen_t;

static void record(void *ctx, const store_sub_reply_t *reply)
{
    seen_t *seen = ctx;
    if (seen->count >= SEEN_MAX)
        return;
    int i = seen->count++;
    seen->kinds[i] = reply->kind;
    snprintf(seen->channels[i], sizeof seen->channels[i], "%.*s", (int)reply->channel_length,
             reply->channel ? reply->channel : "");
    size_t n = reply->payload_length < sizeof seen->payloads[i] ? reply->payload_length : sizeof seen->payloads[i];
    if (reply->payload)
        memcpy(seen->payloads[i], reply->payload, n);
    seen->payload_lengths[i] = reply->payload_length;
    seen->rounds[i] = reply->round;
}

/* Flushes, then reads until `want` replies are seen or 2 s pass. */
static store_status_t pump(store_subscriber_t *sub, seen_t *seen, int want)
{
    store_status_t status = store_subscriber_flush(sub);
    for (int round = 0; status == STORE_OK && seen->count < want && round < 200; round++) {
        struct pollfd p = { .fd = store_subscriber_fd(sub), .events = POLLIN };
        if (poll(&p, 1, 10) > 0)
            status = store_subscriber_read(sub, record, seen);
    }
    return status;
}

static long long publish(const char *channel, const char *payload, size_t length)
{
    redisReply *r = redis_server_command(&server, NULL, "PUBLISH %s %b", channel, payload, length);
    long long receivers = r && r->type == REDIS_REPLY_INTEGER ? r->integer : -1;
    if (r)
        freeReplyObject(r);
    return receivers;
}

static void test_messages_come_after_the_acknowledgement_in_order(void)
{
    char err[256];
    store_subscriber_t *sub = store_subscriber_open(store, err, sizeof err);
    CU_ASSERT_PTR_NOT_NULL_FATAL(sub);
    seen_t seen = { 0 };
    /* Nothing has come: a read returns at once. */
    CU_ASSERT_EQUAL(store_subscriber_read(sub, record, &seen), STORE_OK);
    CU_ASSERT_EQUAL(seen.count, 0);
    CU_ASSERT_EQUAL(store_subscriber_subscribe(sub, "chessd:events:{a}"), STORE_OK);
    CU_ASSERT_EQUAL(store_subscriber_subscribe(sub, "chessd:events:{b}"), STORE_OK);
    CU_ASSERT_TRUE(store_subscriber_wants_write(sub));
    CU_ASSERT_EQUAL(pump(sub, &seen, 2), STORE_OK);
    CU_ASSERT_FALSE(store_subscriber_wants_write(sub));
    CU_ASSERT_EQUAL_FATAL(seen.count, 2);
    CU_ASSERT_EQUAL(seen.kinds[0], STORE_SUB_SUBSCRIBED);
    CU_ASSERT_STRING_EQUAL(seen.channels[0], "chessd:events:{a}");
    CU_ASSERT_STRING_EQUAL(seen.channels[1], "chessd:events:{b}");
    CU_ASSERT_EQUAL(publish("chessd:events:{a}", "1 0 0 0 change\n{}", 18), 1);
    CU_ASSERT_EQUAL(publish("chessd:events:{b}", "x\0y", 3), 1);
    CU_ASSERT_EQUAL(publish("chessd:events:{c}", "nobody", 6), 0);
    CU_ASSERT_EQUAL(pump(sub, &seen, 4), STORE_OK);
    CU_ASSERT_EQUAL_FATAL(seen.count, 4);
    CU_ASSERT_EQUAL(seen.kinds[2], STORE_SUB_MESSAGE);
    CU_ASSERT_STRING_EQUAL(seen.channels[2], "chessd:events:{a}");
    CU_ASSERT_EQUAL(seen.payload_lengths[2], 18);
    CU_ASSERT_EQUAL(memcmp(seen.payloads[2], "1 0 0 0 change\n{}", 18), 0);
    CU_ASSERT_EQUAL(seen.payload_lengths[3], 3);
    CU_ASSERT_EQUAL(memcmp(seen.payloads[3], "x\0y", 3), 0);
    /* UNSUBSCRIBE stops a channel; PING is answered while subscribed. */
    CU_ASSERT_EQUAL(store_subscriber_unsubscribe(sub, "chessd:events:{a}"), STORE_OK);
    CU_ASSERT_EQUAL(store_subscriber_ping(sub), STORE_OK);
    CU_ASSERT_EQUAL(pump(sub, &seen, 6), STORE_OK);
    CU_ASSERT_EQUAL_FATAL(seen.count, 6);
    CU_ASSERT_EQUAL(seen.kinds[4], STORE_SUB_UNSUBSCRIBED);
    CU_ASSERT_EQUAL(seen.kinds[5], STORE_SUB_PONG);
    CU_ASSERT_EQUAL(publish("chessd:events:{a}", "gone", 4), 0);
    store_subscriber_close(sub);
    store_subscriber_close(NULL);
}

static void test_a_ping_round_comes_after_the_messages_published_before_it(void)
{
    char err[256];
    store_subscriber_t *sub = store_subscriber_open(store, err, sizeof err);
    CU_ASSERT_PTR_NOT_NULL_FATAL(sub);
    seen_t seen = { 0 };
    CU_ASSERT_EQUAL(store_subscriber_subscribe(sub, "chessd:events:{p}"), STORE_OK);
    CU_ASSERT_EQUAL(pump(sub, &seen, 1), STORE_OK);
    CU_ASSERT_EQUAL_FATAL(seen.count, 1);
    /* Round 1 is out and unanswered when the message is published and
     * round 2 queued: round 2 is sent all the same, and answered after it. */
    CU_ASSERT_EQUAL(store_subscriber_ping(sub), STORE_OK);
    CU_ASSERT_EQUAL(store_subscriber_flush(sub), STORE_OK);
    CU_ASSERT_EQUAL(publish("chessd:events:{p}", "1 0 0 0 change\n{}", 18), 1);
    CU_ASSERT_EQUAL(store_subscriber_ping(sub), STORE_OK);
    int message_at = -1, round2_at = -1;
    uint64_t last_round = 0;
    CU_ASSERT_EQUAL(store_subscriber_flush(sub), STORE_OK);
    for (int tries = 0; round2_at < 0 && tries < 10 && seen.count < SEEN_MAX; tries++) {
        int from = seen.count;
        CU_ASSERT_EQUAL_FATAL(pump(sub, &seen, seen.count + 1), STORE_OK);
        for (int i = from; i < seen.count; i++) {
            if (seen.kinds[i] == STORE_SUB_MESSAGE)
                message_at = i;
            if (seen.kinds[i] != STORE_SUB_PONG)
                continue;
            CU_ASSERT_TRUE(seen.rounds[i] > last_round); /* in order, each once */
            last_round = seen.rounds[i];
            if (last_round == 2)
                round2_at = i;
        }
    }
    CU_ASSERT_TRUE(message_at > 0);
    CU_ASSERT_TRUE(round2_at > message_at);
    CU_ASSERT_EQUAL(last_round, 2);
    /* Two rounds queued at once: answered up to the second. */
    CU_ASSERT_EQUAL(store_subscriber_ping(sub), STORE_OK);
    CU_ASSERT_EQUAL(store_subscriber_ping(sub), STORE_OK);
    int from = seen.count;
    for (int tries = 0; last_round < 4 && tries < 10 && seen.count < SEEN_MAX; tries++) {
        CU_ASSERT_EQUAL_FATAL(pump(sub, &seen, seen.count + 1), STORE_OK);
        for (int i = from; i < seen.count; i++)
            if (seen.kinds[i] == STORE_SUB_PONG)
                last_round = seen.rounds[i];
        from = seen.count;
    }
    CU_ASSERT_EQUAL(last_round, 4);
    store_subscriber_close(sub);
}

static void test_a_redis_that_goes_away_is_a_lost_connection(void)
{
    char err[256];
    store_subscriber_t *sub = store_subscriber_open(store, err, sizeof err);
    CU_ASSERT_PTR_NOT_NULL_FATAL(sub);
    seen_t seen = { 0 };
    CU_ASSERT_EQUAL(store_subscriber_subscribe(sub, "chessd:events:{r}"), STORE_OK);
    CU_ASSERT_EQUAL(pump(sub, &seen, 1), STORE_OK);
    CU_ASSERT_TRUE_FATAL(redis_server_restart(&server));
    CU_ASSERT_EQUAL(pump(sub, &seen, 99), STORE_EUNAVAILABLE);
    store_subscriber_close(sub);
    /* A new one works again; with Redis away, none can be made. */
    sub = store_subscriber_open(store, err, sizeof err);
    CU_ASSERT_PTR_NOT_NULL(sub);
    store_subscriber_close(sub);
    redis_server_stop(&server);
    CU_ASSERT_PTR_NULL(store_subscriber_open(store, err, sizeof err));
    CU_ASSERT_TRUE(strlen(err) > 0);
    CU_ASSERT_TRUE(redis_server_start(&server));
}

int test_store_subscriber_register(void)
{
    CU_pSuite suite = CU_add_suite("store_subscriber", suite_init, suite_cleanup);
    if (!suite)
        return CU_get_error();
    CU_add_test(suite, "messages come after the acknowledgement, in order",
                test_messages_come_after_the_acknowledgement_in_order);
    CU_add_test(suite, "a ping round comes after the messages published before it",
                test_a_ping_round_comes_after_the_messages_published_before_it);
    CU_add_test(suite, "a Redis that goes away is a lost connection", test_a_redis_that_goes_away_is_a_lost_connection);
    return CU_get_error();
}
