/* Tests for the game store and store/store_subscriber.c on a real Redis
 * Cluster of 3 masters with a replica each (redis_cluster.h). Games on every
 * master, creation idempotency in its own slot, MOVED, ASK, NOSCRIPT,
 * first-format records in another slot, sharded subscriptions, a failover
 * and a killed master. The suite fails (it does not skip) when the cluster
 * cannot be started. */
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../../api/game/tokens.h"
#include "../../store/cluster.h"
#include "../../store/store.h"
#include "../../store/subscriber.h"
#include "../support/redis_cluster.h"
#include "../support/redis_server.h"
#include "../support/tests.h"

enum { TIMEOUT_MS = 500, MASTERS = 3 };

static redis_cluster_t cluster;
static store_t *store;
static struct sigaction saved_sigpipe_action;
static unsigned id_sequence;

static int suite_init(void)
{
    struct sigaction ignore = { .sa_handler = SIG_IGN };
    sigemptyset(&ignore.sa_mask);
    sigaction(SIGPIPE, &ignore, &saved_sigpipe_action);
    redis_cluster_options_t options = { .masters = MASTERS, .replicas_per_master = 1, .node_timeout_ms = 1000 };
    if (!redis_cluster_start(&cluster, &options)) {
        fprintf(stderr, "\nstore_cluster suite: cannot start a Redis Cluster: %s\n", cluster.error);
        return 1;
    }
    char url[512];
    redis_cluster_url(&cluster, url, sizeof url);
    store = redis_server_open_store(url, TIMEOUT_MS);
    if (!store) {
        redis_cluster_stop(&cluster);
        return 1;
    }
    return 0;
}

static int suite_cleanup(void)
{
    store_close(store);
    store = NULL;
    redis_cluster_stop(&cluster);
    sigaction(SIGPIPE, &saved_sigpipe_action, NULL);
    return 0;
}

/* A game id no other test uses. */
static void new_id(char *id, size_t size) { snprintf(id, size, "c%04u-%ld", ++id_sequence, (long)getpid()); }

static store_game_change_t state_only(const char *state)
{
    return (store_game_change_t){ .state = state, .state_length = strlen(state), .line_op = STORE_LINE_KEEP };
}

static store_status_t write_state(const char *id, uint64_t expected, const char *state)
{
    store_game_change_t change = state_only(state);
    uint64_t current = 0;
    return store_game_write(store, id, expected, &change, 0, NULL, &current, NULL);
}

/* Loads id and checks its version and state. */
static void expect_game(const char *id, uint64_t version, const char *state)
{
    store_game_t g;
    CU_ASSERT_EQUAL_FATAL(store_game_load(store, id, STORE_LOAD_FULL, &g), STORE_OK);
    CU_ASSERT_EQUAL(g.version, version);
    CU_ASSERT_STRING_EQUAL(g.state, state);
    store_game_clear(&g);
}

/* The node index of the master serving slot now, or -1. */
static int master_of(unsigned slot)
{
    static int owners[CLUSTER_SLOT_COUNT];
    if (!redis_cluster_refresh(&cluster) || !redis_cluster_slot_owners(&cluster, 0, owners) || !owners[slot])
        return -1;
    return redis_cluster_find_port(&cluster, owners[slot]);
}

/* Another running master than index. */
static int other_master(int index)
{
    for (unsigned i = 0; i < cluster.node_count; i++) {
        if ((int)i != index && cluster.nodes[i].master && cluster.nodes[i].server.pid)
            return (int)i;
    }
    return -1;
}

static long long integer_reply(unsigned node, const char *command)
{
    redisReply *r = redis_cluster_command(&cluster, node, command);
    long long value = r && r->type == REDIS_REPLY_INTEGER ? r->integer : -1;
    if (r)
        freeReplyObject(r);
    return value;
}

static bool ok_reply(redisReply *r)
{
    bool ok = r && r->type == REDIS_REPLY_STATUS;
    if (r)
        freeReplyObject(r);
    return ok;
}

/* Sets slot's owner to node `to` on every master (the end of a move). */
static bool assign_slot(unsigned slot, int to)
{
    bool ok = true;
    for (unsigned i = 0; i < cluster.node_count; i++) {
        if (cluster.nodes[i].master && cluster.nodes[i].server.pid)
            ok = ok_reply(redis_cluster_command(&cluster, i, "CLUSTER SETSLOT %u NODE %s", slot, cluster.nodes[to].id))
                 && ok;
    }
    return ok;
}

/* Starts moving slot from -> to (IMPORTING on to, MIGRATING on from). */
static bool start_move(unsigned slot, int from, int to)
{
    return ok_reply(redis_cluster_command(&cluster, (unsigned)to, "CLUSTER SETSLOT %u IMPORTING %s", slot,
                                          cluster.nodes[from].id))
           && ok_reply(redis_cluster_command(&cluster, (unsigned)from, "CLUSTER SETSLOT %u MIGRATING %s", slot,
                                             cluster.nodes[to].id));
}

/* MIGRATEs the three keys of game id from -> to. */
static bool migrate_game(const char *id, int from, int to)
{
    char keys[3][96];
    static const char *const kinds[3] = { "game", "moves", "history" };
    for (int i = 0; i < 3; i++)
        snprintf(keys[i], sizeof keys[i], "chessd:%s:{%s}", kinds[i], id);
    redisReply *r = redis_cluster_command(&cluster, (unsigned)from, "MIGRATE 127.0.0.1 %d %s 0 5000 KEYS %s %s %s",
                                          cluster.nodes[to].server.port, "", keys[0], keys[1], keys[2]);
    return ok_reply(r);
}

static void test_games_spread_over_every_master_and_read_back(void)
{
    enum { GAMES = 60 };
    char ids[GAMES][32];
    for (int i = 0; i < GAMES; i++) {
        new_id(ids[i], sizeof ids[i]);
        CU_ASSERT_EQUAL(write_state(ids[i], 0, "first"), STORE_OK);
        CU_ASSERT_EQUAL(write_state(ids[i], 1, "second"), STORE_OK);
    }
    for (int i = 0; i < GAMES; i++)
        expect_game(ids[i], 2, "second");
    CU_ASSERT_TRUE_FATAL(redis_cluster_refresh(&cluster));
    unsigned masters_with_games = 0;
    for (unsigned i = 0; i < cluster.node_count; i++) {
        if (cluster.nodes[i].master && integer_reply(i, "DBSIZE") > 0)
            masters_with_games++;
    }
    CU_ASSERT_EQUAL(masters_with_games, MASTERS);
    CU_ASSERT_EQUAL(store_ping(store), STORE_OK);
}

static bool in_slot(const char *id, void *slot) { return store_id_slot(id) == *(unsigned *)slot; }

static void test_a_creation_key_has_a_slot_of_its_own_and_its_game_is_drawn_there(void)
{
    char key[] = "creation-key-0123456789abcdef", id[TOKENS_ID_SIZE], again[TOKENS_ID_SIZE];
    unsigned slot = store_idempotency_slot("new", key);
    CU_ASSERT_TRUE_FATAL(tokens_new_id_where(id, in_slot, &slot));
    CU_ASSERT_EQUAL(store_id_slot(id), slot);
    store_game_change_t change = state_only("created");
    store_idempotency_t idem = { "new", key, "first answer", 60, 0 };
    uint64_t current = 0;
    char *replay = NULL;
    CU_ASSERT_EQUAL(store_game_write(store, id, 0, &change, 0, &idem, &current, &replay), STORE_OK);
    /* A retry draws another id, in the same slot: it gets the first answer. */
    CU_ASSERT_TRUE_FATAL(tokens_new_id_where(again, in_slot, &slot));
    CU_ASSERT_EQUAL(store_game_write(store, again, 0, &change, 0, &idem, &current, &replay), STORE_EREPLAY);
    CU_ASSERT_PTR_NOT_NULL_FATAL(replay);
    CU_ASSERT_STRING_EQUAL(replay, "first answer");
    free(replay);
    char *kept = NULL;
    CU_ASSERT_EQUAL(store_idempotency_get(store, "new", key, &kept), STORE_OK);
    CU_ASSERT_STRING_EQUAL(kept ? kept : "", "first answer");
    free(kept);
    /* The slot of an id is its keys' slot, as Redis computes it (an id with
     * braces too, though chessd never draws one). */
    const char *const ids[] = { id, again, "a{b}c", "{}x", "plain-id" };
    for (size_t i = 0; i < sizeof ids / sizeof ids[0]; i++) {
        redisReply *r = redis_cluster_command(&cluster, 0, "CLUSTER KEYSLOT chessd:game:{%s}", ids[i]);
        CU_ASSERT_TRUE(r && r->type == REDIS_REPLY_INTEGER && (unsigned)r->integer == store_id_slot(ids[i]));
        if (r)
            freeReplyObject(r);
    }
    /* A game's scope shares the game's tag. */
    char scope[64];
    snprintf(scope, sizeof scope, "{%s}:caller", id);
    CU_ASSERT_EQUAL(store_idempotency_slot(scope, "any-key"), store_id_slot(id));
}

/* Moves the slot of game id, with the game, to another master, as
 * redis-cli --cluster reshard does; the master it went to. */
static int move_game_slot(const char *id)
{
    unsigned slot = store_id_slot(id);
    int from = master_of(slot), to = other_master(from);
    CU_ASSERT_FATAL(from >= 0 && to >= 0);
    CU_ASSERT_TRUE_FATAL(start_move(slot, from, to));
    CU_ASSERT_TRUE_FATAL(migrate_game(id, from, to));
    CU_ASSERT_TRUE_FATAL(assign_slot(slot, to));
    return to;
}

static void test_a_slot_moved_to_another_master_is_followed_by_moved(void)
{
    char id[32];
    new_id(id, sizeof id);
    CU_ASSERT_EQUAL_FATAL(write_state(id, 0, "before"), STORE_OK);
    int to = move_game_slot(id);
    store_stats_t before, after;
    store_stats(store, &before);
    expect_game(id, 1, "before");
    CU_ASSERT_EQUAL(write_state(id, 1, "after"), STORE_OK);
    expect_game(id, 2, "after");
    store_stats(store, &after);
    CU_ASSERT(after.redirects > before.redirects);
    CU_ASSERT_EQUAL(master_of(store_id_slot(id)), to);
}

static void test_a_slot_being_moved_is_followed_by_ask_for_the_games_already_moved(void)
{
    char moved[32], staying[32];
    new_id(moved, sizeof moved);
    CU_ASSERT_EQUAL_FATAL(write_state(moved, 0, "moved"), STORE_OK);
    unsigned slot = store_id_slot(moved);
    /* A second game in the same slot, left behind. */
    char base[32];
    for (unsigned n = 0;; n++) {
        snprintf(base, sizeof base, "stay%u", n);
        if (store_id_slot(base) == slot)
            break;
    }
    snprintf(staying, sizeof staying, "%s", base);
    CU_ASSERT_EQUAL_FATAL(write_state(staying, 0, "staying"), STORE_OK);
    int from = master_of(slot), to = other_master(from);
    CU_ASSERT_FATAL(from >= 0 && to >= 0);
    CU_ASSERT_TRUE_FATAL(start_move(slot, from, to));
    CU_ASSERT_TRUE_FATAL(migrate_game(moved, from, to));
    store_stats_t before, after;
    store_stats(store, &before);
    expect_game(moved, 1, "moved");                     /* ASK to the importing node */
    CU_ASSERT_EQUAL(write_state(moved, 1, "moved again"), STORE_OK);
    expect_game(moved, 2, "moved again");
    expect_game(staying, 1, "staying");                 /* still where it was */
    CU_ASSERT_EQUAL(write_state(staying, 1, "staying again"), STORE_OK);
    store_stats(store, &after);
    CU_ASSERT(after.redirects >= before.redirects + 2);
    /* The map was kept: the slot is still the old master's. */
    CU_ASSERT_TRUE(migrate_game(staying, from, to));
    CU_ASSERT_TRUE(assign_slot(slot, to));
    expect_game(staying, 2, "staying again");
    expect_game(moved, 2, "moved again");
}

static void test_a_master_that_lost_its_scripts_runs_them_by_eval(void)
{
    char id[32];
    new_id(id, sizeof id);
    CU_ASSERT_EQUAL_FATAL(write_state(id, 0, "one"), STORE_OK);
    CU_ASSERT_TRUE_FATAL(redis_cluster_refresh(&cluster));
    for (unsigned i = 0; i < cluster.node_count; i++) {
        if (cluster.nodes[i].master)
            CU_ASSERT_TRUE(ok_reply(redis_cluster_command(&cluster, i, "SCRIPT FLUSH")));
    }
    expect_game(id, 1, "one");
    CU_ASSERT_EQUAL(write_state(id, 1, "two"), STORE_OK);
    expect_game(id, 2, "two");
}

static void test_a_record_of_the_first_format_in_another_slot_is_read_and_replaced(void)
{
    char id[32], legacy[64];
    new_id(id, sizeof id);
    snprintf(legacy, sizeof legacy, "chessd:game:%s", id);
    int node = master_of(cluster_key_slot(legacy, strlen(legacy)));
    CU_ASSERT_FATAL(node >= 0);
    CU_ASSERT_NOT_EQUAL(cluster_key_slot(legacy, strlen(legacy)), store_id_slot(id));
    redisReply *r = redis_cluster_command(&cluster, (unsigned)node, "HSET %s version 7 data {\"old\":true}", legacy);
    CU_ASSERT_TRUE(r && r->type == REDIS_REPLY_INTEGER);
    if (r)
        freeReplyObject(r);
    store_game_t g;
    CU_ASSERT_EQUAL_FATAL(store_game_load(store, id, STORE_LOAD_FULL, &g), STORE_OK);
    CU_ASSERT_EQUAL(g.version, 7);
    CU_ASSERT_STRING_EQUAL(g.legacy ? g.legacy : "", "{\"old\":true}");
    store_game_clear(&g);
    store_game_change_t change = state_only("converted");
    change.replaces_legacy = true;
    uint64_t current = 0;
    /* A write from a stale read is refused; the converting one is made once. */
    CU_ASSERT_EQUAL(store_game_write(store, id, 6, &change, 0, NULL, &current, NULL), STORE_ECONFLICT);
    CU_ASSERT_EQUAL(store_game_write(store, id, 7, &change, 0, NULL, &current, NULL), STORE_OK);
    CU_ASSERT_EQUAL(store_game_write(store, id, 7, &change, 0, NULL, &current, NULL), STORE_ECONFLICT);
    CU_ASSERT_EQUAL(current, 8);
    expect_game(id, 8, "converted");
    r = redis_cluster_command(&cluster, (unsigned)node, "EXISTS %s", legacy);
    CU_ASSERT_TRUE(r && r->type == REDIS_REPLY_INTEGER && r->integer == 0);
    if (r)
        freeReplyObject(r);
}

/* What a subscriber heard. */
enum { HEARD_MAX = 32 };

typedef struct {
    int messages, subscribed, pongs;
    int messages_at_pong; /* messages heard when the last PONG came */
    uint64_t round;       /* the last PONG's */
    char last[256];
    char payloads[HEARD_MAX][64]; /* the first HEARD_MAX messages */
} heard_t;

static void on_heard(void *ctx, const store_sub_reply_t *reply)
{
    heard_t *h = ctx;
    if (reply->kind == STORE_SUB_MESSAGE) {
        if (h->messages < HEARD_MAX)
            snprintf(h->payloads[h->messages], sizeof h->payloads[0], "%.*s", (int)reply->payload_length,
                     reply->payload);
        h->messages++;
        snprintf(h->last, sizeof h->last, "%.*s", (int)reply->payload_length, reply->payload);
    } else if (reply->kind == STORE_SUB_SUBSCRIBED) {
        h->subscribed++;
    } else if (reply->kind == STORE_SUB_PONG) {
        h->pongs++;
        h->messages_at_pong = h->messages;
        h->round = reply->round;
    }
}

/* Reads for up to ms, or until until() holds; the last read's status. */
static store_status_t listen(store_subscriber_t *sub, heard_t *h, long ms, int messages, int subscribed)
{
    long end = tests_monotonic_ms() + ms;
    store_status_t status = STORE_OK;
    while (tests_monotonic_ms() < end && !(h->messages >= messages && h->subscribed >= subscribed)) {
        struct pollfd p = { .fd = store_subscriber_fd(sub), .events = POLLIN };
        if (store_subscriber_wants_write(sub))
            p.events |= POLLOUT;
        if (poll(&p, 1, 20) > 0) {
            if ((status = store_subscriber_read(sub, on_heard, h)) != STORE_OK)
                return status;
            if ((status = store_subscriber_flush(sub)) != STORE_OK)
                return status;
        }
    }
    return status;
}

/* Writes id (a new game) with an event published on its channel. */
static store_status_t write_with_event(const char *id, uint64_t expected, const char *event)
{
    store_game_change_t change = state_only("evented");
    change.event = event;
    change.event_length = strlen(event);
    uint64_t current = 0;
    return store_game_write(store, id, expected, &change, 0, NULL, &current, NULL);
}

static void test_sharded_subscriptions_hear_games_on_every_master(void)
{
    enum { GAMES = 12 };
    char ids[GAMES][32], channel[STORE_CHANNEL_SIZE];
    char err[256];
    store_subscriber_t *sub = store_subscriber_open(store, err, sizeof err);
    CU_ASSERT_PTR_NOT_NULL_FATAL(sub);
    for (int i = 0; i < GAMES; i++) {
        new_id(ids[i], sizeof ids[i]);
        store_game_channel(ids[i], channel);
        CU_ASSERT_EQUAL(store_subscriber_subscribe(sub, channel), STORE_OK);
    }
    CU_ASSERT_EQUAL(store_subscriber_flush(sub), STORE_OK);
    heard_t h = { 0 };
    CU_ASSERT_EQUAL(listen(sub, &h, 3000, 0, GAMES), STORE_OK);
    CU_ASSERT_EQUAL(h.subscribed, GAMES);
    for (int i = 0; i < GAMES; i++)
        CU_ASSERT_EQUAL(write_with_event(ids[i], 0, ids[i]), STORE_OK);
    CU_ASSERT_EQUAL(listen(sub, &h, 3000, GAMES, GAMES), STORE_OK);
    CU_ASSERT_EQUAL(h.messages, GAMES);
    /* Each game's message, once (their order across masters is not defined). */
    for (int i = 0; i < GAMES; i++) {
        int seen = 0;
        for (int k = 0; k < h.messages && k < HEARD_MAX; k++)
            seen += !strcmp(h.payloads[k], ids[i]);
        CU_ASSERT_EQUAL(seen, 1);
    }
    CU_ASSERT_EQUAL(store_subscriber_ping(sub), STORE_OK);
    CU_ASSERT_EQUAL(store_subscriber_flush(sub), STORE_OK);
    long end = tests_monotonic_ms() + 2000;
    while (h.pongs == 0 && tests_monotonic_ms() < end)
        CU_ASSERT_EQUAL_FATAL(listen(sub, &h, 50, GAMES + 1, GAMES), STORE_OK);
    CU_ASSERT_EQUAL(h.pongs, 1); /* one for all the masters pinged */
    CU_ASSERT_EQUAL(h.round, 1);
    /* A round queued after writes on every master is answered after all their messages. */
    for (int i = 0; i < GAMES; i++)
        CU_ASSERT_EQUAL(write_with_event(ids[i], 1, ids[i]), STORE_OK);
    CU_ASSERT_EQUAL(store_subscriber_ping(sub), STORE_OK);
    CU_ASSERT_EQUAL(store_subscriber_flush(sub), STORE_OK);
    end = tests_monotonic_ms() + 2000;
    while (h.pongs == 1 && tests_monotonic_ms() < end)
        CU_ASSERT_EQUAL_FATAL(listen(sub, &h, 50, 3 * GAMES, GAMES), STORE_OK);
    CU_ASSERT_EQUAL(h.pongs, 2);
    CU_ASSERT_EQUAL(h.round, 2);
    CU_ASSERT_EQUAL(h.messages_at_pong, 2 * GAMES);
    store_subscriber_close(sub);
}

static void test_a_subscribed_slot_that_moves_away_is_a_lost_subscription(void)
{
    char id[32], channel[STORE_CHANNEL_SIZE], err[256];
    new_id(id, sizeof id);
    CU_ASSERT_EQUAL_FATAL(write_state(id, 0, "here"), STORE_OK);
    store_subscriber_t *sub = store_subscriber_open(store, err, sizeof err);
    CU_ASSERT_PTR_NOT_NULL_FATAL(sub);
    store_game_channel(id, channel);
    CU_ASSERT_EQUAL(store_subscriber_subscribe(sub, channel), STORE_OK);
    CU_ASSERT_EQUAL(store_subscriber_flush(sub), STORE_OK);
    heard_t h = { 0 };
    CU_ASSERT_EQUAL(listen(sub, &h, 3000, 0, 1), STORE_OK);
    CU_ASSERT_EQUAL_FATAL(h.subscribed, 1);
    move_game_slot(id);
    /* The old owner drops the subscription; the subscriber says it is lost. */
    CU_ASSERT_EQUAL(listen(sub, &h, 3000, 1, 1), STORE_EUNAVAILABLE);
    store_subscriber_close(sub);
    /* A new one, on the new map, hears the game again. */
    sub = store_subscriber_open(store, err, sizeof err);
    CU_ASSERT_PTR_NOT_NULL_FATAL(sub);
    CU_ASSERT_EQUAL(store_subscriber_subscribe(sub, channel), STORE_OK);
    CU_ASSERT_EQUAL(store_subscriber_flush(sub), STORE_OK);
    memset(&h, 0, sizeof h);
    CU_ASSERT_EQUAL(listen(sub, &h, 3000, 0, 1), STORE_OK);
    CU_ASSERT_EQUAL(write_with_event(id, 1, "after the move"), STORE_OK);
    CU_ASSERT_EQUAL(listen(sub, &h, 3000, 1, 1), STORE_OK);
    CU_ASSERT_STRING_EQUAL(h.last, "after the move");
    store_subscriber_close(sub);
}

/* Creates game id at v1 and waits until its master's replica has it (WAIT);
 * the master's node index. */
static int replicated_game(char *id, size_t size)
{
    new_id(id, size);
    CU_ASSERT_EQUAL_FATAL(write_state(id, 0, "v1"), STORE_OK);
    int master = master_of(store_id_slot(id));
    CU_ASSERT_FATAL(master >= 0);
    CU_ASSERT_EQUAL(integer_reply((unsigned)master, "WAIT 1 2000"), 1);
    return master;
}

static void test_after_a_failover_writes_go_to_the_new_master(void)
{
    char id[32];
    int master = replicated_game(id, sizeof id);
    int replica = -1;
    for (unsigned i = 0; i < cluster.node_count; i++) {
        if (!cluster.nodes[i].master && cluster.nodes[i].master_index == master && cluster.nodes[i].server.pid)
            replica = (int)i;
    }
    CU_ASSERT_FATAL(replica >= 0);
    CU_ASSERT_TRUE_FATAL(redis_cluster_failover(&cluster, (unsigned)replica, 10000));
    expect_game(id, 1, "v1");
    CU_ASSERT_EQUAL(write_state(id, 1, "v2"), STORE_OK);
    expect_game(id, 2, "v2");
    CU_ASSERT_EQUAL(master_of(store_id_slot(id)), replica);
}

static void test_a_killed_master_is_unavailable_within_bounds_until_its_replica_takes_over(void)
{
    char id[32];
    int master = replicated_game(id, sizeof id);
    redis_cluster_kill(&cluster, (unsigned)master);
    /* Each refusal comes back within the routing budget (twice the command timeout, and slack). */
    long start = tests_monotonic_ms();
    store_status_t status = write_state(id, 1, "v2");
    long took = tests_monotonic_ms() - start;
    CU_ASSERT(took < 4 * TIMEOUT_MS + 2000);
    /* Until the replica takes over, the game is out of reach (or already served by it). */
    CU_ASSERT(status == STORE_EUNAVAILABLE || status == STORE_OK);
    long end = tests_monotonic_ms() + 15000;
    while (status != STORE_OK && tests_monotonic_ms() < end) {
        usleep(100 * 1000);
        status = write_state(id, 1, "v2");
    }
    CU_ASSERT_EQUAL_FATAL(status, STORE_OK);
    expect_game(id, 2, "v2");
    CU_ASSERT_TRUE(redis_cluster_wait_ok(&cluster, 10000));
}

int test_store_redis_cluster_register(void)
{
    CU_pSuite suite = CU_add_suite("store_redis_cluster", suite_init, suite_cleanup);
    if (!suite)
        return -1;
    CU_ADD_TEST(suite, test_games_spread_over_every_master_and_read_back);
    CU_ADD_TEST(suite, test_a_creation_key_has_a_slot_of_its_own_and_its_game_is_drawn_there);
    CU_ADD_TEST(suite, test_a_slot_moved_to_another_master_is_followed_by_moved);
    CU_ADD_TEST(suite, test_a_slot_being_moved_is_followed_by_ask_for_the_games_already_moved);
    CU_ADD_TEST(suite, test_a_master_that_lost_its_scripts_runs_them_by_eval);
    CU_ADD_TEST(suite, test_a_record_of_the_first_format_in_another_slot_is_read_and_replaced);
    CU_ADD_TEST(suite, test_sharded_subscriptions_hear_games_on_every_master);
    CU_ADD_TEST(suite, test_a_subscribed_slot_that_moves_away_is_a_lost_subscription);
    CU_ADD_TEST(suite, test_after_a_failover_writes_go_to_the_new_master);
    CU_ADD_TEST(suite, test_a_killed_master_is_unavailable_within_bounds_until_its_replica_takes_over);
    return 0;
}
