/* Tests for the game store on one node (store_redis.c, game_write.c,
 * game_load.c, breaker.c, url.c) against a private redis-server, as
 * store.h states it: restarted, stopped, paused, filled, and behind a
 * proxy that loses a reply. It fails when redis-server cannot start. One
 * long file on purpose: one suite for the store's one contract. */
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <stdatomic.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "../../store/fiber.h"
#include "../../store/game_record.h"
#include "../../store/store.h"
#include "../../store/webhooks.h"
#include "../support/legacy_fixture.h"
#include "../support/redis_server.h"
#include "../support/tests.h"

enum { TIMEOUT_MS = 300, SLACK_MS = 500, RACE_THREADS = 32 };

static redis_server_t server;
static store_t *store;
static struct sigaction saved_sigpipe_action;
static unsigned id_sequence;

static store_t *open_store(const char *url) { return redis_server_open_store(url, TIMEOUT_MS); }

static int suite_init(void)
{
    struct sigaction ignore = { .sa_handler = SIG_IGN };
    sigemptyset(&ignore.sa_mask);
    sigaction(SIGPIPE, &ignore, &saved_sigpipe_action); /* as the server does: a dead peer is an error value */
    redis_server_init(&server);
    if (!redis_server_start(&server)) {
        fprintf(stderr, "\nstore suite: cannot start a private redis-server: %s\n", server.error);
        return 1;
    }
    char url[64];
    redis_server_url(&server, url, sizeof url);
    store = open_store(url);
    if (!store) {
        redis_server_stop(&server); /* CUnit runs no cleanup after a failed init */
        return 1;
    }
    return 0;
}

static int suite_cleanup(void)
{
    store_close(store);
    store = NULL;
    redis_server_stop(&server);
    sigaction(SIGPIPE, &saved_sigpipe_action, NULL);
    return 0;
}

/* A game id no other test uses. */
static void new_id(char *id, size_t size)
{
    snprintf(id, size, "t%04u", ++id_sequence);
}

/* The Redis keys of game id: kind "game" (the hash), "moves" or "history". */
static void game_key(const char *kind, const char *id, char *key, size_t size)
{
    snprintf(key, size, "chessd:%s:{%s}", kind, id);
}

/* The key of a record of the first format. */
static void legacy_key(const char *id, char *key, size_t size)
{
    snprintf(key, size, "chessd:game:%s", id);
}

/* A change that writes state and leaves the move list and history as they are. */
static store_game_change_t state_only(const char *state)
{
    return (store_game_change_t){ .state = state, .state_length = strlen(state), .line_op = STORE_LINE_KEEP };
}

/* A change that writes state, history_count and the line op with moves and history texts. */
static store_game_change_t line_change(const char *state, unsigned history_count, store_line_op_t op,
                                       const char *moves, const char *history)
{
    store_game_change_t c = state_only(state);
    c.history_count = history_count;
    c.line_op = op;
    c.moves = moves;
    c.moves_length = strlen(moves);
    c.history = history;
    c.history_length = strlen(history);
    return c;
}

static store_status_t write_change(const char *id, uint64_t expected, const store_game_change_t *change,
                                   unsigned ttl, const store_idempotency_t *idem, uint64_t *current, char **replay)
{
    uint64_t ignored = 0;
    return store_game_write(store, id, expected, change, ttl, idem, current ? current : &ignored, replay);
}

static store_status_t write_game(const char *id, uint64_t expected, const char *state, unsigned ttl,
                                 const store_idempotency_t *idem, uint64_t *current, char **replay)
{
    store_game_change_t change = state_only(state);
    return write_change(id, expected, &change, ttl, idem, current, replay);
}

/* Creates id with state, CU-asserting it became version 1. */
static void create_game(const char *id, const char *state)
{
    uint64_t version = 0;
    CU_ASSERT_EQUAL(write_game(id, 0, state, 0, NULL, &version, NULL), STORE_OK);
    CU_ASSERT_EQUAL(version, 1);
}

static store_status_t load_game(const char *id, store_load_t what)
{
    store_game_t g;
    store_status_t status = store_game_load(store, id, what, &g);
    store_game_clear(&g);
    return status;
}

/* CU-asserts that bytes (length) holds exactly expected. */
static void expect_bytes(const char *what, const char *bytes, size_t length, const char *expected, size_t expected_length)
{
    CU_ASSERT_PTR_NOT_NULL(bytes);
    CU_ASSERT_EQUAL(length, expected_length);
    bool same = bytes && length == expected_length && !memcmp(bytes, expected, length) && bytes[length] == '\0';
    CU_ASSERT(same);
    if (!same)
        fprintf(stderr, "\n%s: '%.*s', not '%.*s'\n", what, bytes ? (int)length : 6, bytes ? bytes : "(null)",
                (int)expected_length, expected);
}

/* CU-asserts that id holds exactly state at version, in the new format. */
static void expect_game(const char *id, const char *state, size_t length, uint64_t version)
{
    store_game_t g;
    CU_ASSERT_EQUAL_FATAL(store_game_load(store, id, STORE_LOAD_CHANGE, &g), STORE_OK);
    CU_ASSERT_EQUAL(g.version, version);
    expect_bytes("state", g.state, g.state_length, state, length);
    CU_ASSERT_PTR_NULL(g.legacy);
    CU_ASSERT_PTR_NULL(g.moves); /* a change load does not read the move list */
    store_game_clear(&g);
}

/* CU-asserts what a load of id returns: the version, the move list (a full
 * load) and the history's tail. */
static void expect_line(const char *id, store_load_t what, uint64_t version, const char *moves, const char *history)
{
    store_game_t g;
    CU_ASSERT_EQUAL_FATAL(store_game_load(store, id, what, &g), STORE_OK);
    CU_ASSERT_EQUAL(g.version, version);
    CU_ASSERT_PTR_NOT_NULL(g.state);
    expect_bytes("history", g.history, g.history_length, history, strlen(history));
    if (what == STORE_LOAD_FULL)
        expect_bytes("moves", g.moves, g.moves_length, moves, strlen(moves));
    else
        CU_ASSERT_PTR_NULL(g.moves);
    store_game_clear(&g);
}

/* Runs one command (argv, each a text) on the test Redis, CU-asserting it
 * answered with a reply of the type. */
static void redis_run(int type, int argc, const char **argv)
{
    redisContext *c = redis_server_connect(&server, NULL);
    CU_ASSERT_PTR_NOT_NULL_FATAL(c);
    redisReply *r = redisCommandArgv(c, argc, argv, NULL);
    CU_ASSERT(r && r->type == type);
    if (r && r->type != type)
        fprintf(stderr, "\n%s %s: reply type %d %s\n", argv[0], argc > 1 ? argv[1] : "", r->type,
                r->type == REDIS_REPLY_ERROR ? r->str : "");
    if (r)
        freeReplyObject(r);
    redisFree(c);
}

#define REDIS_RUN(type, ...)                                                                                           \
    do {                                                                                                               \
        const char *redis_argv_[] = { __VA_ARGS__ };                                                                   \
        redis_run(type, (int)(sizeof redis_argv_ / sizeof redis_argv_[0]), redis_argv_);                               \
    } while (0)

/* The string value of a Redis key as a malloc'd text (NULL: no key or not a string). */
static char *redis_get(const char *key)
{
    redisReply *r = redis_server_command(&server, NULL, "GET %s", key);
    char *value = NULL;
    if (r && r->type == REDIS_REPLY_STRING && (value = malloc(r->len + 1))) {
        memcpy(value, r->str, r->len);
        value[r->len] = '\0';
    }
    if (r)
        freeReplyObject(r);
    return value;
}

/* EXISTS key: 1 or 0; -1 when Redis did not answer. */
static long long key_exists(const char *key)
{
    redisReply *r = redis_server_command(&server, NULL, "EXISTS %s", key);
    long long exists = r && r->type == REDIS_REPLY_INTEGER ? r->integer : -1;
    if (r)
        freeReplyObject(r);
    return exists;
}

/* TTL of a Redis key as Redis reports it (-2: no key, -1: no expiry); -3 when Redis did not answer. */
static long long key_ttl(const char *key)
{
    redisReply *r = redis_server_command(&server, NULL, "TTL %s", key);
    long long ttl = r && r->type == REDIS_REPLY_INTEGER ? r->integer : -3;
    if (r)
        freeReplyObject(r);
    return ttl;
}

static long long game_ttl(const char *kind, const char *id)
{
    char key[96];
    game_key(kind, id, key, sizeof key);
    return key_ttl(key);
}

/* The names of the Redis keys matching pattern (SCAN-free: the test database is tiny). */
static redisReply *keys_matching(const char *pattern)
{
    redisReply *r = redis_server_command(&server, NULL, "KEYS %s", pattern);
    CU_ASSERT_PTR_NOT_NULL(r);
    CU_ASSERT(r && r->type == REDIS_REPLY_ARRAY);
    return r;
}

/* --- versions --- */

static void test_create_with_expected_version_0_makes_version_1(void)
{
    char id[32];
    new_id(id, sizeof id);
    create_game(id, "first");
    expect_game(id, "first", 5, 1);
}

static void test_second_create_of_the_same_id_is_exists(void)
{
    char id[32];
    new_id(id, sizeof id);
    create_game(id, "first");
    uint64_t current = 0;
    CU_ASSERT_EQUAL(write_game(id, 0, "second", 0, NULL, &current, NULL), STORE_EEXISTS);
    CU_ASSERT_EQUAL(current, 1);
    expect_game(id, "first", 5, 1);
}

static void test_load_returns_the_state_byte_for_byte_and_the_version(void)
{
    char id[32];
    new_id(id, sizeof id);
    static const char data[] = "{\"a\":1}\0after a NUL\r\n\xff";
    store_game_change_t change = { .state = data, .state_length = sizeof data - 1 };
    uint64_t version = 0;
    CU_ASSERT_EQUAL(write_change(id, 0, &change, 0, NULL, &version, NULL), STORE_OK);
    CU_ASSERT_EQUAL(version, 1);
    expect_game(id, data, sizeof data - 1, 1);
}

static void test_load_of_an_unknown_id_is_not_found_and_leaves_nothing_to_free(void)
{
    store_game_t g;
    memset(&g, 0xa5, sizeof g); /* the load clears it first */
    CU_ASSERT_EQUAL(store_game_load(store, "no-such-game", STORE_LOAD_FULL, &g), STORE_ENOT_FOUND);
    CU_ASSERT(g.state == NULL && g.history == NULL && g.moves == NULL && g.legacy == NULL && g.version == 0);
    store_game_clear(&g);
    store_game_clear(NULL);
    CU_ASSERT_EQUAL(load_game("no-such-game", STORE_LOAD_CHANGE), STORE_ENOT_FOUND);
}

static void test_write_with_the_expected_version_bumps_it(void)
{
    char id[32];
    new_id(id, sizeof id);
    create_game(id, "v1");
    uint64_t version = 0;
    CU_ASSERT_EQUAL(write_game(id, 1, "v2", 0, NULL, &version, NULL), STORE_OK);
    CU_ASSERT_EQUAL(version, 2);
    CU_ASSERT_EQUAL(write_game(id, 2, "v3", 0, NULL, &version, NULL), STORE_OK);
    CU_ASSERT_EQUAL(version, 3);
    expect_game(id, "v3", 2, 3);
}

static void test_stale_expected_version_is_conflict_and_changes_nothing(void)
{
    char id[32];
    new_id(id, sizeof id);
    store_game_change_t first = line_change("v1", 1, STORE_LINE_SET, "e2e4:e4", "00000000000000a1");
    CU_ASSERT_EQUAL(write_change(id, 0, &first, 0, NULL, NULL, NULL), STORE_OK);
    CU_ASSERT_EQUAL(write_game(id, 1, "v2", 0, NULL, NULL, NULL), STORE_OK);
    uint64_t current = 0;
    store_game_change_t stale = line_change("stale", 2, STORE_LINE_APPEND, " e7e5:e5", "00000000000000a2");
    CU_ASSERT_EQUAL(write_change(id, 1, &stale, 0, NULL, &current, NULL), STORE_ECONFLICT);
    CU_ASSERT_EQUAL(current, 2);
    current = 0;
    store_game_change_t ahead = line_change("ahead", 0, STORE_LINE_TRUNCATE, "", "");
    CU_ASSERT_EQUAL(write_change(id, 99, &ahead, 0, NULL, &current, NULL), STORE_ECONFLICT);
    CU_ASSERT_EQUAL(current, 2);
    expect_game(id, "v2", 2, 2);
    expect_line(id, STORE_LOAD_FULL, 2, "e2e4:e4", "");
}

/* CU-asserts the meta text a full load of id returns (NULL: none). */
static void expect_meta(const char *id, const char *meta)
{
    store_game_t g;
    CU_ASSERT_EQUAL_FATAL(store_game_load(store, id, STORE_LOAD_FULL, &g), STORE_OK);
    if (meta)
        expect_bytes("meta", g.meta, g.meta_length, meta, strlen(meta));
    else
        CU_ASSERT_PTR_NULL(g.meta);
    store_game_clear(&g);
    CU_ASSERT_EQUAL_FATAL(store_game_load(store, id, STORE_LOAD_CHANGE, &g), STORE_OK);
    CU_ASSERT_PTR_NULL(g.meta); /* a change never loads it */
    store_game_clear(&g);
}

static void test_a_creations_meta_text_is_read_by_full_loads_only_and_no_change_moves_it(void)
{
    char id[32], key[64];
    new_id(id, sizeof id);
    static const char meta[] = "{\"tags\":{\"Event\":\"E \\\"x\\\"\"},\"metadata\":{\"a\":[1]}}";
    store_game_change_t create = state_only("v1");
    create.meta = meta;
    create.meta_length = sizeof meta - 1;
    CU_ASSERT_EQUAL(write_change(id, 0, &create, 0, NULL, NULL, NULL), STORE_OK);
    expect_meta(id, meta);
    /* Changes send no meta text: the creation's stays, in the same hash. */
    store_game_change_t move = line_change("v2", 1, STORE_LINE_APPEND, "e2e4:e4", "00000000000000a1");
    CU_ASSERT_EQUAL(write_change(id, 1, &move, 0, NULL, NULL, NULL), STORE_OK);
    store_game_change_t cut = line_change("v3", 0, STORE_LINE_TRUNCATE, "", "");
    CU_ASSERT_EQUAL(write_change(id, 2, &cut, 0, NULL, NULL, NULL), STORE_OK);
    expect_meta(id, meta);
    game_key("game", id, key, sizeof key);
    char *held = NULL;
    redisReply *r = redis_server_command(&server, NULL, "HGET %s meta", key);
    CU_ASSERT_PTR_NOT_NULL_FATAL(r);
    CU_ASSERT_EQUAL(r->type, REDIS_REPLY_STRING);
    if (r->type == REDIS_REPLY_STRING)
        held = strndup(r->str, r->len);
    freeReplyObject(r);
    CU_ASSERT_STRING_EQUAL(held ? held : "", meta);
    free(held);

    /* A game made without one, as every game stored before it existed, has none. */
    new_id(id, sizeof id);
    create_game(id, "v1");
    expect_meta(id, NULL);
}

static void test_write_to_a_missing_id_is_not_found_and_creates_nothing(void)
{
    char id[32];
    new_id(id, sizeof id);
    store_game_change_t change = line_change("data", 1, STORE_LINE_APPEND, "e2e4:e4", "00000000000000a1");
    CU_ASSERT_EQUAL(write_change(id, 3, &change, 0, NULL, NULL, NULL), STORE_ENOT_FOUND);
    CU_ASSERT_EQUAL(load_game(id, STORE_LOAD_FULL), STORE_ENOT_FOUND);
    static const char *const kinds[] = { "game", "moves", "history" };
    for (int i = 0; i < 3; i++)
        CU_ASSERT_EQUAL(game_ttl(kinds[i], id), -2);
}

/* --- the move list and the history --- */

/* History entry n: 16 hex digits. */
static const char *entry(unsigned n, char out[STORE_HISTORY_ENTRY_SIZE + 1])
{
    snprintf(out, STORE_HISTORY_ENTRY_SIZE + 1, "%016x", n);
    return out;
}

/* Entries first..last, concatenated (at most 8). */
static const char *entries(unsigned first, unsigned last, char out[8 * STORE_HISTORY_ENTRY_SIZE + 1])
{
    out[0] = '\0';
    for (unsigned n = first; n <= last && n - first < 8; n++)
        entry(n, out + (n - first) * STORE_HISTORY_ENTRY_SIZE);
    return out;
}

/* Appends one move (its list text and history entry n) with history count hlen. */
static store_status_t append_move(const char *id, uint64_t expected, const char *move, unsigned n, unsigned hlen)
{
    char e[STORE_HISTORY_ENTRY_SIZE + 1];
    store_game_change_t change = line_change("state", hlen, STORE_LINE_APPEND, move, entry(n, e));
    return write_change(id, expected, &change, 0, NULL, NULL, NULL);
}

/* Creates id with the move list "e2e4:e4 e7e5:e5 g1f3:Nf3 b8c6:Nc6" and
 * history entries 1..4, all of it kept in the history count. */
static void create_four_moves(const char *id)
{
    static const char *const moves[] = { "e2e4:e4", " e7e5:e5", " g1f3:Nf3", " b8c6:Nc6" };
    for (unsigned i = 0; i < 4; i++)
        CU_ASSERT_EQUAL(append_move(id, i, moves[i], i + 1, i + 1), STORE_OK);
}

static void test_appended_moves_and_history_accumulate_and_a_load_returns_the_last_hlen_entries(void)
{
    char id[32], h[8 * STORE_HISTORY_ENTRY_SIZE + 1], key[96];
    new_id(id, sizeof id);
    CU_ASSERT_EQUAL(append_move(id, 0, "e2e4:e4", 1, 1), STORE_OK); /* the first write creates the keys */
    expect_line(id, STORE_LOAD_CHANGE, 1, NULL, entries(1, 1, h));
    CU_ASSERT_EQUAL(append_move(id, 1, " e7e5:e5", 2, 2), STORE_OK);
    CU_ASSERT_EQUAL(append_move(id, 2, " g1f3:Nf3", 3, 3), STORE_OK);
    expect_line(id, STORE_LOAD_CHANGE, 3, NULL, entries(1, 3, h));
    expect_line(id, STORE_LOAD_FULL, 3, "e2e4:e4 e7e5:e5 g1f3:Nf3", entries(1, 3, h));
    /* A shorter count (after an irreversible move, or the bound) returns only the tail. */
    CU_ASSERT_EQUAL(append_move(id, 3, " b8c6:Nc6", 4, 2), STORE_OK);
    expect_line(id, STORE_LOAD_CHANGE, 4, NULL, entries(3, 4, h));
    expect_line(id, STORE_LOAD_FULL, 4, "e2e4:e4 e7e5:e5 g1f3:Nf3 b8c6:Nc6", entries(3, 4, h));
    CU_ASSERT_EQUAL(append_move(id, 4, " f1b5:Bb5", 5, 0), STORE_OK);
    expect_line(id, STORE_LOAD_CHANGE, 5, NULL, "");
    expect_line(id, STORE_LOAD_FULL, 5, "e2e4:e4 e7e5:e5 g1f3:Nf3 b8c6:Nc6 f1b5:Bb5", "");
    /* Redis keeps every entry; only the load is bounded. */
    game_key("history", id, key, sizeof key);
    char *all = redis_get(key);
    CU_ASSERT_PTR_NOT_NULL_FATAL(all);
    CU_ASSERT_STRING_EQUAL(all, entries(1, 5, h));
    free(all);
}

static void test_keep_leaves_the_move_list_and_history_and_sets_the_count(void)
{
    char id[32], h[8 * STORE_HISTORY_ENTRY_SIZE + 1];
    new_id(id, sizeof id);
    create_four_moves(id);
    store_game_change_t keep = line_change("offer", 3, STORE_LINE_KEEP, " ignored", "ffffffffffffffff");
    CU_ASSERT_EQUAL(write_change(id, 4, &keep, 0, NULL, NULL, NULL), STORE_OK);
    expect_game(id, "offer", 5, 5);
    expect_line(id, STORE_LOAD_FULL, 5, "e2e4:e4 e7e5:e5 g1f3:Nf3 b8c6:Nc6", entries(2, 4, h));
}

static void test_set_replaces_the_move_list_and_history(void)
{
    char id[32], h[8 * STORE_HISTORY_ENTRY_SIZE + 1], key[96];
    new_id(id, sizeof id);
    create_four_moves(id);
    store_game_change_t set = line_change("set", 2, STORE_LINE_SET, "d2d4:d4 d7d5:d5", entries(7, 8, h));
    CU_ASSERT_EQUAL(write_change(id, 4, &set, 0, NULL, NULL, NULL), STORE_OK);
    expect_line(id, STORE_LOAD_FULL, 5, "d2d4:d4 d7d5:d5", entries(7, 8, h));
    game_key("history", id, key, sizeof key);
    char *all = redis_get(key);
    CU_ASSERT_PTR_NOT_NULL_FATAL(all);
    CU_ASSERT_STRING_EQUAL(all, entries(7, 8, h));
    free(all);
    /* Set to nothing: a game back at its start. */
    set = line_change("start", 0, STORE_LINE_SET, "", "");
    CU_ASSERT_EQUAL(write_change(id, 5, &set, 0, NULL, NULL, NULL), STORE_OK);
    expect_line(id, STORE_LOAD_FULL, 6, "", "");
}

static void test_truncate_cuts_the_move_list_and_history_to_the_bytes_kept(void)
{
    char id[32], h[8 * STORE_HISTORY_ENTRY_SIZE + 1];
    new_id(id, sizeof id);
    create_four_moves(id);
    store_game_change_t cut = line_change("undone", 3, STORE_LINE_TRUNCATE, "", "");
    cut.moves_keep = strlen("e2e4:e4 e7e5:e5 g1f3:Nf3");
    cut.history_keep = 3 * STORE_HISTORY_ENTRY_SIZE;
    CU_ASSERT_EQUAL(write_change(id, 4, &cut, 0, NULL, NULL, NULL), STORE_OK);
    expect_line(id, STORE_LOAD_FULL, 5, "e2e4:e4 e7e5:e5 g1f3:Nf3", entries(1, 3, h));
    /* An append after a truncation continues the shorter line. */
    CU_ASSERT_EQUAL(append_move(id, 5, " g8f6:Nf6", 6, 2), STORE_OK);
    expect_line(id, STORE_LOAD_FULL, 6, "e2e4:e4 e7e5:e5 g1f3:Nf3 g8f6:Nf6", "00000000000000030000000000000006");
    /* Truncating to 0 bytes empties both (GETRANGE 0 -1 would keep all). */
    cut = line_change("back to the start", 0, STORE_LINE_TRUNCATE, "", "");
    CU_ASSERT_EQUAL(write_change(id, 6, &cut, 0, NULL, NULL, NULL), STORE_OK);
    expect_line(id, STORE_LOAD_FULL, 7, "", "");
    CU_ASSERT_EQUAL(append_move(id, 7, "d2d4:d4", 9, 1), STORE_OK);
    expect_line(id, STORE_LOAD_FULL, 8, "d2d4:d4", entries(9, 9, h));
}

static void test_truncate_of_a_game_without_a_move_list_leaves_it_empty(void)
{
    char id[32];
    new_id(id, sizeof id);
    create_game(id, "no moves yet"); /* KEEP: no move list or history key */
    store_game_change_t cut = line_change("cut", 0, STORE_LINE_TRUNCATE, "", "");
    cut.moves_keep = 7;
    cut.history_keep = STORE_HISTORY_ENTRY_SIZE;
    CU_ASSERT_EQUAL(write_change(id, 1, &cut, 0, NULL, NULL, NULL), STORE_OK);
    expect_line(id, STORE_LOAD_FULL, 2, "", "");
}

/* --- records of the first format --- */

/* Stores a record of the first format under its old key. */
static void put_legacy(const char *id, const char *version, const char *data)
{
    char key[96];
    legacy_key(id, key, sizeof key);
    REDIS_RUN(REDIS_REPLY_INTEGER, "HSET", key, "version", version, "data", data);
}

static void test_a_record_of_the_first_format_loads_as_legacy(void)
{
    char id[32];
    new_id(id, sizeof id);
    static const char data[] = "{\"id\":\"x\",\"moves\":[\"e2e4\"]}";
    put_legacy(id, "7", data);
    for (int what = STORE_LOAD_CHANGE; what <= STORE_LOAD_FULL; what++) {
        store_game_t g;
        CU_ASSERT_EQUAL_FATAL(store_game_load(store, id, (store_load_t)what, &g), STORE_OK);
        CU_ASSERT_EQUAL(g.version, 7);
        expect_bytes("legacy", g.legacy, g.legacy_length, data, strlen(data));
        CU_ASSERT(g.state == NULL && g.history == NULL && g.moves == NULL);
        store_game_clear(&g);
    }
}

static void test_a_record_of_the_first_format_without_version_or_data_is_corrupt(void)
{
    char id[32], key[96];
    static const char *const bad_versions[] = { "0", "x", "-1", "12abc", "" };
    for (size_t i = 0; i < sizeof bad_versions / sizeof bad_versions[0]; i++) {
        new_id(id, sizeof id);
        put_legacy(id, bad_versions[i], "{}");
        CU_ASSERT_EQUAL(load_game(id, STORE_LOAD_CHANGE), STORE_ECORRUPT);
    }
    new_id(id, sizeof id);
    legacy_key(id, key, sizeof key);
    REDIS_RUN(REDIS_REPLY_INTEGER, "HSET", key, "version", "3");
    CU_ASSERT_EQUAL(load_game(id, STORE_LOAD_CHANGE), STORE_ECORRUPT);
    new_id(id, sizeof id);
    legacy_key(id, key, sizeof key);
    REDIS_RUN(REDIS_REPLY_INTEGER, "HSET", key, "data", "{}");
    CU_ASSERT_EQUAL(load_game(id, STORE_LOAD_FULL), STORE_ECORRUPT);
    new_id(id, sizeof id);
    legacy_key(id, key, sizeof key);
    REDIS_RUN(REDIS_REPLY_STATUS, "SET", key, "a string, not a hash");
    CU_ASSERT_EQUAL(load_game(id, STORE_LOAD_FULL), STORE_ECORRUPT);
}

/* The conversion compares the old record's version and deletes it in the
 * same write; a refused write leaves the old record as it was. */
static void test_replaces_legacy_compares_the_old_version_and_deletes_the_old_key_in_the_same_write(void)
{
    char id[32], key[96], old[96], h[8 * STORE_HISTORY_ENTRY_SIZE + 1];
    new_id(id, sizeof id);
    legacy_key(id, old, sizeof old);
    put_legacy(id, "7", "{}");
    uint64_t current = 0;
    store_game_change_t convert = line_change("converted", 2, STORE_LINE_SET, "e2e4:e4 e7e5:e5", entries(1, 2, h));

    /* Without the flag the old record is not the game's. */
    CU_ASSERT_EQUAL(write_change(id, 7, &convert, 100, NULL, &current, NULL), STORE_ENOT_FOUND);
    convert.replaces_legacy = true;
    CU_ASSERT_EQUAL(write_change(id, 6, &convert, 100, NULL, &current, NULL), STORE_ECONFLICT);
    CU_ASSERT_EQUAL(current, 7);
    CU_ASSERT_EQUAL(write_change(id, 0, &convert, 100, NULL, &current, NULL), STORE_EEXISTS);
    CU_ASSERT_EQUAL(current, 7);
    CU_ASSERT_EQUAL(key_exists(old), 1);
    game_key("game", id, key, sizeof key);
    CU_ASSERT_EQUAL(key_exists(key), 0);

    CU_ASSERT_EQUAL(write_change(id, 7, &convert, 100, NULL, &current, NULL), STORE_OK);
    CU_ASSERT_EQUAL(current, 8);
    CU_ASSERT_EQUAL(key_exists(old), 0);
    expect_game(id, "converted", 9, 8);
    expect_line(id, STORE_LOAD_FULL, 8, "e2e4:e4 e7e5:e5", entries(1, 2, h));
    static const char *const kinds[] = { "game", "moves", "history" };
    for (int i = 0; i < 3; i++) {
        long long ttl = game_ttl(kinds[i], id);
        CU_ASSERT(ttl > 90 && ttl <= 100);
    }

    /* A second converter that loaded the old record finds the new version. */
    CU_ASSERT_EQUAL(write_change(id, 7, &convert, 100, NULL, &current, NULL), STORE_ECONFLICT);
    CU_ASSERT_EQUAL(current, 8);
    /* A converted game's next write may still carry the flag: there is nothing left to delete. */
    CU_ASSERT_EQUAL(write_change(id, 8, &convert, 100, NULL, &current, NULL), STORE_OK);
    CU_ASSERT_EQUAL(current, 9);
}

/* A version is made by one write only, unless Redis lost writes: then two
 * writes of one number differ in their write id, and a write naming the
 * other one is a conflict that changes nothing. */
static void test_a_write_naming_another_write_id_is_a_conflict_and_changes_nothing(void)
{
    char id[32];
    new_id(id, sizeof id);
    store_game_change_t create = state_only("v1");
    create.write_id = "first";
    CU_ASSERT_EQUAL_FATAL(write_change(id, 0, &create, 0, NULL, NULL, NULL), STORE_OK);
    store_game_change_t stale = state_only("v2 on another v1");
    stale.line_op = STORE_LINE_APPEND;
    stale.moves = "e2e4:e4";
    stale.moves_length = 7;
    stale.expected_write_id = "lost";
    stale.write_id = "second";
    uint64_t current = 0;
    CU_ASSERT_EQUAL(write_change(id, 1, &stale, 0, NULL, &current, NULL), STORE_ECONFLICT);
    CU_ASSERT_EQUAL(current, 1);
    store_game_t loaded;
    CU_ASSERT_EQUAL_FATAL(store_game_load(store, id, STORE_LOAD_FULL, &loaded), STORE_OK);
    CU_ASSERT_EQUAL(loaded.version, 1);
    CU_ASSERT_STRING_EQUAL(loaded.write_id, "first");
    CU_ASSERT(loaded.state && !strcmp(loaded.state, "v1"));
    CU_ASSERT_EQUAL(loaded.moves_length, 0);
    store_game_clear(&loaded);
    stale.expected_write_id = "first";
    CU_ASSERT_EQUAL(write_change(id, 1, &stale, 0, NULL, &current, NULL), STORE_OK);
    CU_ASSERT_EQUAL_FATAL(store_game_load(store, id, STORE_LOAD_FULL, &loaded), STORE_OK);
    CU_ASSERT_STRING_EQUAL(loaded.write_id, "second");
    CU_ASSERT(loaded.moves && !strcmp(loaded.moves, "e2e4:e4"));
    store_game_clear(&loaded);
}

/* The legacy fixtures (tests/data/legacy_game*.json, written by chessd
 * c8df95b): each loads as legacy under its old key, converts, and one write
 * with replaces_legacy stores it in the new format as version N + 1. */
static void test_a_record_saved_by_the_first_format_converts_in_one_write(void)
{
    for (size_t i = 0; i < LEGACY_FIXTURE_COUNT; i++) {
        legacy_fixture_t f;
        CU_ASSERT_FATAL(legacy_fixture_load(legacy_fixture_paths[i], &f));
        char version[24], keys[3][96];
        snprintf(version, sizeof version, "%llu", (unsigned long long)f.version);
        put_legacy(f.id, version, f.data);
        static const char *const kinds[] = { "game", "moves", "history" };
        for (int k = 0; k < 3; k++)
            game_key(kinds[k], f.id, keys[k], sizeof keys[k]);

        store_game_t loaded;
        CU_ASSERT_EQUAL_FATAL(store_game_load(store, f.id, STORE_LOAD_FULL, &loaded), STORE_OK);
        CU_ASSERT_EQUAL(loaded.version, f.version);
        CU_ASSERT_PTR_NULL(loaded.state);
        expect_bytes("legacy", loaded.legacy, loaded.legacy_length, f.data, f.data_length);
        game_record_t r;
        char *moves = NULL, *history = NULL;
        size_t moves_length = 0, history_length = 0;
        CU_ASSERT_FATAL(game_record_from_legacy(&r, loaded.legacy, loaded.legacy_length, &moves, &moves_length,
                                                &history, &history_length));
        store_game_clear(&loaded);
        char state[GAME_RECORD_STATE_MAX];
        size_t state_length = game_record_state(&r, state, sizeof state);
        CU_ASSERT_FATAL(state_length > 0);
        /* Every key and value a write can send at once: the old record, a
         * kept answer bounded in its scope, a write id, an event, a meta
         * text, the mover's presence and the absent player's guard, a
         * subscriptions text and an event for its outbox. */
        static const char *const hook_subs[] = { "wh_AAAAAAAAAAAAAAAA" };
        store_game_change_t convert = { state, state_length, (unsigned)r.game.history_count, STORE_LINE_SET,
                                        moves, moves_length, history, history_length, 0, 0, true, "", "wid-of-convert",
                                        0, 0, "1 0 0 0 change\n{}", 18, "{\"tags\":{}}", 11, 1 + WHITE, 1 + BLACK,
                                        0, "wh_AAAAAAAAAAAAAAAA=31", "move 1\n", 7, hook_subs, 1 };
        char scope[64];
        snprintf(scope, sizeof scope, "{%s}:caller", f.id);
        store_idempotency_t idem = { scope, "convert-key", "the kept answer", 60, 32 };
        uint64_t current = 0;
        CU_ASSERT_EQUAL(write_change(f.id, f.version, &convert, 0, &idem, &current, NULL), STORE_OK);
        char *kept = NULL;
        CU_ASSERT_EQUAL(store_idempotency_get(store, scope, "convert-key", &kept), STORE_OK);
        CU_ASSERT(kept && !strcmp(kept, "the kept answer"));
        free(kept);
        CU_ASSERT_EQUAL(current, f.version + 1);
        CU_ASSERT_EQUAL(key_exists(f.key), 0);
        for (int k = 0; k < 3; k++)
            CU_ASSERT_EQUAL(key_exists(keys[k]), 1);

        /* What a later load reads back is the same game. */
        CU_ASSERT_EQUAL_FATAL(store_game_load(store, f.id, STORE_LOAD_FULL, &loaded), STORE_OK);
        CU_ASSERT_EQUAL(loaded.version, f.version + 1);
        CU_ASSERT_STRING_EQUAL(loaded.write_id, "wid-of-convert");
        CU_ASSERT_PTR_NULL(loaded.legacy);
        CU_ASSERT(loaded.seen_ms[WHITE] > 0 && loaded.seen_ms[BLACK] == 0);
        CU_ASSERT_STRING_EQUAL(loaded.webhooks, "wh_AAAAAAAAAAAAAAAA=31");
        /* The event is in the subscription's outbox, and it is due. */
        char *entry = NULL;
        size_t entry_length = 0;
        unsigned held = 0;
        store_webhook_retry_t retry;
        CU_ASSERT_EQUAL(store_webhook_head(store, f.id, hook_subs[0], &entry, &entry_length, &held, &retry),
                        STORE_OK);
        CU_ASSERT(held == 1 && entry && !strcmp(entry, "move 1\n1 0 0 0 change\n{}") && retry.attempts == 0);
        free(entry);
        store_webhook_due_t due[4];
        unsigned claimed = 0;
        CU_ASSERT_EQUAL(store_webhook_claim(store, 60000, 4, due, &claimed, NULL), STORE_OK);
        bool found = false;
        for (unsigned d = 0; d < claimed; d++)
            found = found || (!strcmp(due[d].game, f.id) && !strcmp(due[d].sub, hook_subs[0]));
        CU_ASSERT(found);
        expect_bytes("state", loaded.state, loaded.state_length, state, state_length);
        expect_bytes("moves", loaded.moves, loaded.moves_length, moves, moves_length);
        size_t tail = (size_t)r.game.history_count * STORE_HISTORY_ENTRY_SIZE;
        CU_ASSERT_FATAL(tail <= history_length);
        expect_bytes("history", loaded.history, loaded.history_length, history + history_length - tail, tail);
        game_record_t back;
        CU_ASSERT(game_record_read(&back, loaded.state, loaded.state_length, loaded.history, loaded.history_length));
        char again[GAME_RECORD_STATE_MAX];
        size_t again_length = game_record_state(&back, again, sizeof again);
        CU_ASSERT(again_length == state_length && !memcmp(again, state, state_length));
        CU_ASSERT_EQUAL(back.game.ply_count, f.plies);
        store_game_clear(&loaded);
        free(moves);
        free(history);
        legacy_fixture_free(&f);
    }
}

/* --- webhook deliveries in turn --- */

static void test_a_webhook_done_reads_the_next_event_and_a_settle_writes_every_line(void)
{
    char id[32], outbox[160];
    new_id(id, sizeof id);
    const char *sub = "wh_BBBBBBBBBBBBBBBB";
    CU_ASSERT_FATAL(store_webhook_outbox_key(id, sub, outbox, sizeof outbox));
    redisReply *r = redis_server_command(&server, NULL, "RPUSH %s %s %s", outbox, "first", "second");
    CU_ASSERT_PTR_NOT_NULL_FATAL(r);
    freeReplyObject(r);
    /* A removal answers with the event after it, as a head would. */
    unsigned left = 0;
    store_webhook_head_t next;
    CU_ASSERT_EQUAL(store_webhook_done(store, id, sub, "first", 5, NULL, &left, &next), STORE_OK);
    CU_ASSERT(left == 1 && next.held == 1 && next.entry && !strcmp(next.entry, "second") && next.length == 6);
    CU_ASSERT_EQUAL(next.retry.attempts, 0);
    /* A retry state set on it comes back with it; the removal of the last leaves none. */
    store_webhook_retry_t retry = { 2, 1000, 5000 };
    store_webhook_head_t same;
    CU_ASSERT_EQUAL(store_webhook_done(store, id, sub, next.entry, next.length, &retry, &left, &same), STORE_OK);
    CU_ASSERT(left == 1 && same.entry && !strcmp(same.entry, "second") && same.retry.attempts == 2
              && same.retry.next_ms == 5000);
    free(same.entry);
    CU_ASSERT_EQUAL(store_webhook_done(store, id, sub, next.entry, next.length, NULL, &left, &same), STORE_OK);
    CU_ASSERT(left == 0 && same.entry == NULL);
    free(next.entry);
    /* A claimed entry settled with three attempts' lines logs them all, the newest first. */
    const char *const subs[] = { sub };
    CU_ASSERT_EQUAL_FATAL(store_webhook_mark_due(store, id, subs, 1, 0), STORE_OK);
    store_webhook_due_t due[64];
    unsigned claimed = 0;
    CU_ASSERT_EQUAL_FATAL(store_webhook_claim(store, 60000, 64, due, &claimed, NULL), STORE_OK);
    int64_t claim_ms = 0;
    for (unsigned d = 0; d < claimed; d++)
        if (!strcmp(due[d].game, id) && !strcmp(due[d].sub, sub))
            claim_ms = due[d].claim_ms;
    CU_ASSERT_FATAL(claim_ms > 0);
    const char *lines[] = { "{\"n\":1}", "", "{\"n\":2}", "{\"n\":3}" };
    bool settled = false;
    CU_ASSERT_EQUAL(store_webhook_settle_log(store, id, sub, claim_ms, 0, lines, 4, 60, &settled), STORE_OK);
    CU_ASSERT_TRUE(settled);
    char **logged = NULL;
    unsigned count = 0;
    CU_ASSERT_EQUAL(store_webhook_log_read(store, sub, 10, &logged, &count), STORE_OK);
    CU_ASSERT(count == 3 && !strcmp(logged[0], "{\"n\":3}") && !strcmp(logged[2], "{\"n\":1}"));
    store_webhook_log_free(logged, count);
    CU_ASSERT_EQUAL(store_webhook_settle_log(store, id, sub, claim_ms, 0, lines, STORE_WEBHOOK_LOG_LINES_MAX + 1, 60,
                                             &settled),
                    STORE_ENOT_FOUND);
}

/* --- presence --- */

/* A player's last sign as the game's hash keeps it (0: none). */
static int64_t hash_seen(const char *id, const char *player)
{
    char key[96], field[16];
    game_key("game", id, key, sizeof key);
    snprintf(field, sizeof field, "seen:%s", player);
    redisReply *r = redis_server_command(&server, NULL, "HGET %s %s", key, field);
    int64_t seen = r && r->type == REDIS_REPLY_STRING ? strtoll(r->str, NULL, 10) : 0;
    if (r)
        freeReplyObject(r);
    return seen;
}

static void test_a_load_marks_players_seen_and_a_write_its_mover(void)
{
    char id[32], key[96];
    new_id(id, sizeof id);
    game_key("game", id, key, sizeof key);
    /* Nothing is marked for a game that is not there. */
    store_game_t g;
    CU_ASSERT_EQUAL(store_game_load_present(store, id, 1u << BLACK, &g), STORE_ENOT_FOUND);
    CU_ASSERT_EQUAL(key_exists(key), 0);
    create_game(id, "v1");
    CU_ASSERT_EQUAL_FATAL(store_game_load(store, id, STORE_LOAD_CHANGE, &g), STORE_OK);
    CU_ASSERT(g.seen_ms[WHITE] == 0 && g.seen_ms[BLACK] == 0);
    store_game_clear(&g);
    /* Black is seen at Redis's time of the load, which reads it back. */
    CU_ASSERT_EQUAL_FATAL(store_game_load_present(store, id, 1u << BLACK, &g), STORE_OK);
    CU_ASSERT(g.seen_ms[BLACK] > 0);
    CU_ASSERT_EQUAL(g.seen_ms[BLACK], g.now_ms);
    CU_ASSERT_EQUAL(g.seen_ms[WHITE], 0);
    CU_ASSERT_EQUAL(hash_seen(id, "black"), g.now_ms);
    store_game_clear(&g);
    /* A change marks its mover; it is still the game it was. */
    store_game_change_t change = state_only("v2");
    change.seen = 1 + WHITE;
    CU_ASSERT_EQUAL(write_change(id, 1, &change, 0, NULL, NULL, NULL), STORE_OK);
    CU_ASSERT_EQUAL_FATAL(store_game_load(store, id, STORE_LOAD_FULL, &g), STORE_OK);
    CU_ASSERT(g.seen_ms[WHITE] > 0 && g.seen_ms[WHITE] <= g.now_ms && g.seen_ms[BLACK] > 0);
    CU_ASSERT_EQUAL(g.version, 2);
    CU_ASSERT_STRING_EQUAL(g.state, "v2");
    store_game_clear(&g);
}

static void test_a_claim_is_late_once_the_absent_player_is_seen_again(void)
{
    char id[32];
    new_id(id, sizeof id);
    create_game(id, "v1");
    store_game_t g;
    CU_ASSERT_EQUAL_FATAL(store_game_load_present(store, id, 1u << BLACK, &g), STORE_OK);
    int64_t seen = g.seen_ms[BLACK];
    store_game_clear(&g);
    /* Judged on a load that found Black never seen: Black is there, nothing is written. */
    store_game_change_t claim = state_only("claimed");
    claim.seen = 1 + WHITE;
    claim.absent = 1 + BLACK;
    uint64_t current = 0;
    CU_ASSERT_EQUAL(write_change(id, 1, &claim, 0, NULL, &current, NULL), STORE_ELATE);
    expect_game(id, "v1", 2, 1);
    CU_ASSERT_EQUAL(hash_seen(id, "white"), 0);
    /* Judged on the presence as it is: written. */
    claim.absent_seen_ms = seen;
    CU_ASSERT_EQUAL(write_change(id, 1, &claim, 0, NULL, &current, NULL), STORE_OK);
    CU_ASSERT_EQUAL(current, 2);
}

/* --- TTL --- */

static void test_ttl_sets_an_expiry_on_every_key_of_the_game_and_ttl_0_removes_it(void)
{
    char id[32];
    new_id(id, sizeof id);
    static const char *const kinds[] = { "game", "moves", "history" };
    CU_ASSERT_EQUAL(append_move(id, 0, "e2e4:e4", 1, 1), STORE_OK);
    store_game_change_t change = line_change("v2", 2, STORE_LINE_APPEND, " e7e5:e5", "0000000000000002");
    CU_ASSERT_EQUAL(write_change(id, 1, &change, 100, NULL, NULL, NULL), STORE_OK);
    for (int i = 0; i < 3; i++) {
        long long ttl = game_ttl(kinds[i], id);
        CU_ASSERT(ttl > 90 && ttl <= 100);
    }
    CU_ASSERT_EQUAL(write_game(id, 2, "v3", 0, NULL, NULL, NULL), STORE_OK); /* KEEP: the line keys too */
    for (int i = 0; i < 3; i++)
        CU_ASSERT_EQUAL(game_ttl(kinds[i], id), -1);
    change = line_change("v4", 0, STORE_LINE_TRUNCATE, "", "");
    CU_ASSERT_EQUAL(write_change(id, 3, &change, 50, NULL, NULL, NULL), STORE_OK);
    for (int i = 0; i < 3; i++) {
        long long ttl = game_ttl(kinds[i], id);
        CU_ASSERT(ttl > 40 && ttl <= 50);
    }
}

/* --- idempotency --- */

static void test_idempotent_write_keeps_its_answer_and_replays_it_for_any_version(void)
{
    char id[32];
    new_id(id, sizeof id);
    create_game(id, "v1");
    store_idempotency_t idem = { id, "key-1", "answer one", 600, 0 };
    uint64_t version = 0;
    char *replay = NULL;
    CU_ASSERT_EQUAL(write_game(id, 1, "v2", 0, &idem, &version, &replay), STORE_OK);
    CU_ASSERT_EQUAL(version, 2);
    CU_ASSERT_PTR_NULL(replay);

    store_idempotency_t again = { id, "key-1", "answer two", 600, 0 };
    const uint64_t expected_versions[] = { 2, 1, 0, 99 };
    for (size_t i = 0; i < sizeof expected_versions / sizeof expected_versions[0]; i++) {
        replay = NULL;
        CU_ASSERT_EQUAL(write_game(id, expected_versions[i], "other", 0, &again, NULL, &replay), STORE_EREPLAY);
        CU_ASSERT_PTR_NOT_NULL(replay);
        if (replay)
            CU_ASSERT_STRING_EQUAL(replay, "answer one");
        free(replay);
    }
    expect_game(id, "v2", 2, 2);

    char *answer = NULL;
    CU_ASSERT_EQUAL(store_idempotency_get(store, id, "key-1", &answer), STORE_OK);
    CU_ASSERT_PTR_NOT_NULL_FATAL(answer);
    CU_ASSERT_STRING_EQUAL(answer, "answer one");
    free(answer);
}

static void test_kept_answers_in_a_bounded_scope_drop_the_oldest(void)
{
    /* A caller that loops changes with fresh keys replaces its own oldest
     * answers: what it can keep in Redis stays flat. */
    char id[32], scope[64], key[32];
    new_id(id, sizeof id);
    snprintf(scope, sizeof scope, "%s:caller", id);
    create_game(id, "v1");
    for (int i = 0; i < 10; i++) {
        snprintf(key, sizeof key, "loop-%d", i);
        store_idempotency_t idem = { scope, key, key, 600, 4 };
        CU_ASSERT_EQUAL(write_game(id, (uint64_t)i + 1, "v", 0, &idem, NULL, NULL), STORE_OK);
    }
    for (int i = 0; i < 10; i++) {
        char *answer = NULL;
        snprintf(key, sizeof key, "loop-%d", i);
        store_status_t status = store_idempotency_get(store, scope, key, &answer);
        CU_ASSERT_EQUAL(status, i < 6 ? STORE_ENOT_FOUND : STORE_OK);
        if (answer)
            CU_ASSERT_STRING_EQUAL(answer, key);
        free(answer);
    }
    char list[128];
    snprintf(list, sizeof list, "chessd:idemlist:%s", scope);
    redisReply *r = redis_server_command(&server, NULL, "LLEN %s", list);
    CU_ASSERT(r && r->type == REDIS_REPLY_INTEGER && r->integer == 4);
    if (r)
        freeReplyObject(r);
    CU_ASSERT(key_ttl(list) > 0 && key_ttl(list) <= 600); /* the list expires with the answers */
}

static void test_idempotent_create_replays_without_creating_a_second_game(void)
{
    char id[32], other[32], key[48];
    new_id(id, sizeof id);
    new_id(other, sizeof other);
    snprintf(key, sizeof key, "create-%s", id);
    store_idempotency_t idem = { "new", key, "created first", 600, 0 };
    CU_ASSERT_EQUAL(write_game(id, 0, "game", 0, &idem, NULL, NULL), STORE_OK);
    char *replay = NULL;
    CU_ASSERT_EQUAL(write_game(other, 0, "game", 0, &idem, NULL, &replay), STORE_EREPLAY);
    CU_ASSERT_PTR_NOT_NULL_FATAL(replay);
    CU_ASSERT_STRING_EQUAL(replay, "created first");
    free(replay);
    CU_ASSERT_EQUAL(load_game(other, STORE_LOAD_CHANGE), STORE_ENOT_FOUND);
}

static void test_idempotency_get_of_an_unknown_key_is_not_found(void)
{
    char *answer = NULL;
    CU_ASSERT_EQUAL(store_idempotency_get(store, "new", "never-used-key", &answer), STORE_ENOT_FOUND);
    CU_ASSERT_PTR_NULL(answer);
}

static void test_idempotency_scope_separates_equal_keys(void)
{
    char a[32], b[32];
    new_id(a, sizeof a);
    new_id(b, sizeof b);
    create_game(a, "a1");
    create_game(b, "b1");
    store_idempotency_t in_a = { a, "same-key", "answer in a", 600, 0 };
    store_idempotency_t in_b = { b, "same-key", "answer in b", 600, 0 };
    CU_ASSERT_EQUAL(write_game(a, 1, "a2", 0, &in_a, NULL, NULL), STORE_OK);
    char *answer = NULL;
    CU_ASSERT_EQUAL(store_idempotency_get(store, b, "same-key", &answer), STORE_ENOT_FOUND);
    CU_ASSERT_EQUAL(write_game(b, 1, "b2", 0, &in_b, NULL, NULL), STORE_OK);
    expect_game(b, "b2", 2, 2);
    CU_ASSERT_EQUAL(store_idempotency_get(store, a, "same-key", &answer), STORE_OK);
    CU_ASSERT_PTR_NOT_NULL_FATAL(answer);
    CU_ASSERT_STRING_EQUAL(answer, "answer in a");
    free(answer);
    answer = NULL;
    CU_ASSERT_EQUAL(store_idempotency_get(store, b, "same-key", &answer), STORE_OK);
    CU_ASSERT_PTR_NOT_NULL_FATAL(answer);
    CU_ASSERT_STRING_EQUAL(answer, "answer in b");
    free(answer);
}

static void test_refused_write_keeps_no_idempotency_answer(void)
{
    char id[32];
    new_id(id, sizeof id);
    create_game(id, "v1");
    store_idempotency_t idem = { id, "retry-key", "the answer", 600, 0 };
    CU_ASSERT_EQUAL(write_game(id, 7, "stale", 0, &idem, NULL, NULL), STORE_ECONFLICT);
    char *answer = NULL;
    CU_ASSERT_EQUAL(store_idempotency_get(store, id, "retry-key", &answer), STORE_ENOT_FOUND);
    CU_ASSERT_EQUAL(write_game(id, 1, "v2", 0, &idem, NULL, NULL), STORE_OK);
    expect_game(id, "v2", 2, 2);
}

static void test_idempotency_answer_has_its_ttl_and_the_client_key_is_hashed(void)
{
    char id[32], pattern[64];
    new_id(id, sizeof id);
    create_game(id, "v1");
    store_idempotency_t idem = { id, "secret-looking-client-key", "kept", 77, 0 };
    CU_ASSERT_EQUAL(write_game(id, 1, "v2", 0, &idem, NULL, NULL), STORE_OK);
    snprintf(pattern, sizeof pattern, "chessd:idem:%s:*", id);
    redisReply *keys = keys_matching(pattern);
    CU_ASSERT_FATAL(keys && keys->type == REDIS_REPLY_ARRAY);
    CU_ASSERT_EQUAL(keys->elements, 1);
    if (keys->elements == 1) {
        CU_ASSERT_PTR_NULL(strstr(keys->element[0]->str, "secret-looking-client-key"));
        long long ttl = key_ttl(keys->element[0]->str);
        CU_ASSERT(ttl > 67 && ttl <= 77);
    }
    freeReplyObject(keys);
}

/* --- what Redis holds that the store did not expect --- */

static void test_flushed_script_cache_is_reloaded_by_the_next_write(void)
{
    char id[32];
    new_id(id, sizeof id);
    create_game(id, "v1");
    redisReply *r = redis_server_command(&server, NULL, "SCRIPT FLUSH");
    CU_ASSERT(r && r->type == REDIS_REPLY_STATUS);
    if (r)
        freeReplyObject(r);
    CU_ASSERT_EQUAL(write_game(id, 1, "v2", 0, NULL, NULL, NULL), STORE_OK); /* EVALSHA: NOSCRIPT, then EVAL */
    CU_ASSERT_EQUAL(write_game(id, 2, "v3", 0, NULL, NULL, NULL), STORE_OK);
    expect_game(id, "v3", 2, 3);
}

/* Bug (store_redis.c): any error reply to the script becomes STORE_EUNAVAILABLE,
 * although Redis answered at once; a load of the same key says STORE_ECORRUPT. */
static void test_write_over_a_value_the_store_did_not_write_is_corrupt_not_unavailable(void)
{
    char id[32], key[96];
    new_id(id, sizeof id);
    game_key("game", id, key, sizeof key);
    REDIS_RUN(REDIS_REPLY_STATUS, "SET", key, "not a hash");
    CU_ASSERT_EQUAL(load_game(id, STORE_LOAD_CHANGE), STORE_ECORRUPT);
    CU_ASSERT_EQUAL(load_game(id, STORE_LOAD_FULL), STORE_ECORRUPT);
    CU_ASSERT_EQUAL(write_game(id, 1, "v2", 0, NULL, NULL, NULL), STORE_ECORRUPT);
    CU_ASSERT_EQUAL(write_game(id, 0, "v1", 0, NULL, NULL, NULL), STORE_ECORRUPT);
    CU_ASSERT_EQUAL(store_ping(store), STORE_OK);
}

/* A write checks every key it changes before it changes any: Redis does not
 * undo a script's earlier commands when a later one fails. */
static void test_write_over_a_move_list_or_history_the_store_did_not_write_is_corrupt_and_changes_nothing(void)
{
    static const char *const kinds[] = { "moves", "history" };
    static const store_line_op_t ops[] = { STORE_LINE_APPEND, STORE_LINE_SET, STORE_LINE_TRUNCATE };
    for (int k = 0; k < 2; k++) {
        for (int o = 0; o < 3; o++) {
            char id[32], key[96];
            new_id(id, sizeof id);
            CU_ASSERT_EQUAL(append_move(id, 0, "e2e4:e4", 1, 1), STORE_OK);
            game_key(kinds[k], id, key, sizeof key);
            REDIS_RUN(REDIS_REPLY_INTEGER, "DEL", key);
            REDIS_RUN(REDIS_REPLY_INTEGER, "RPUSH", key, "not a string");
            store_game_change_t change = line_change("v2", 2, ops[o], " e7e5:e5", "0000000000000002");
            change.moves_keep = 4;
            change.history_keep = 16;
            store_status_t status = write_change(id, 1, &change, 0, NULL, NULL, NULL);
            CU_ASSERT_EQUAL(status, STORE_ECORRUPT);
            if (status != STORE_ECORRUPT)
                fprintf(stderr, "\n%s of a %s list: %s\n", ops[o] == STORE_LINE_APPEND ? "append"
                                                             : ops[o] == STORE_LINE_SET  ? "set"
                                                                                         : "truncate",
                        kinds[k], store_status_name(status));
            char game[96];
            game_key("game", id, game, sizeof game);
            redisReply *r = redis_server_command(&server, NULL, "HMGET %s version state", game);
            CU_ASSERT(r && r->type == REDIS_REPLY_ARRAY && r->elements == 2 && r->element[0]->str
                      && !strcmp(r->element[0]->str, "1") && r->element[1]->str && !strcmp(r->element[1]->str, "state"));
            if (r)
                freeReplyObject(r);
        }
    }
}

/* Makes id a game of two plies whose state says so ("plies 2"), as
 * game_record.c writes it, with its move list and history. */
static void create_two_plies(const char *id)
{
    char e[STORE_HISTORY_ENTRY_SIZE + 1];
    store_game_change_t first = line_change("chessd-game 3\nplies 1\nstate active", 1, STORE_LINE_APPEND, "e2e4:e4",
                                            entry(1, e));
    CU_ASSERT_EQUAL(write_change(id, 0, &first, 0, NULL, NULL, NULL), STORE_OK);
    store_game_change_t second = line_change("chessd-game 3\nplies 2\nstate active", 2, STORE_LINE_APPEND,
                                             " e7e5:e5", entry(2, e));
    CU_ASSERT_EQUAL(write_change(id, 1, &second, 0, NULL, NULL, NULL), STORE_OK);
}

/* What an eviction leaves: one of a game's keys gone. A load says so, and
 * the write script refuses any change whatever its kind (a move appended to
 * a lost move list would make a game whose moves do not lead to its state),
 * so nothing is written; keys all gone stay "not found". */
static void test_a_game_that_lost_a_key_is_damaged_on_load_and_write_and_changes_nothing(void)
{
    static const char *const kinds[] = { "moves", "history", "game" };
    static const store_line_op_t ops[] = { STORE_LINE_APPEND, STORE_LINE_KEEP, STORE_LINE_TRUNCATE };
    for (int k = 0; k < 3; k++) {
        for (int o = 0; o < 3; o++) {
            char id[32], key[96];
            new_id(id, sizeof id);
            create_two_plies(id);
            game_key(kinds[k], id, key, sizeof key);
            REDIS_RUN(REDIS_REPLY_INTEGER, "DEL", key);
            CU_ASSERT_EQUAL(load_game(id, STORE_LOAD_CHANGE), STORE_EDAMAGED);
            CU_ASSERT_EQUAL(load_game(id, STORE_LOAD_FULL), STORE_EDAMAGED);
            char e[STORE_HISTORY_ENTRY_SIZE + 1];
            store_game_change_t change = line_change("chessd-game 3\nplies 3\nstate active", 3, ops[o], " g1f3:Nf3",
                                                     entry(3, e));
            change.moves_keep = 7;
            change.history_keep = 16;
            CU_ASSERT_EQUAL(write_change(id, 2, &change, 0, NULL, NULL, NULL), STORE_EDAMAGED);
            CU_ASSERT_EQUAL(key_exists(key), 0); /* nothing written back */
            char game[96];
            game_key("game", id, game, sizeof game);
            char *version = NULL;
            redisReply *r = redis_server_command(&server, NULL, "HGET %s version", game);
            if (r && r->type == REDIS_REPLY_STRING)
                version = strdup(r->str);
            if (r)
                freeReplyObject(r);
            /* the hash gone: none written back; else still version 2 */
            CU_ASSERT(k == 2 ? version == NULL : version && !strcmp(version, "2"));
            free(version);
        }
    }
    /* A game whose keys are all gone (expired, or evicted whole) is not found. */
    char id[32], key[96];
    new_id(id, sizeof id);
    create_two_plies(id);
    for (int k = 0; k < 3; k++) {
        game_key(kinds[k], id, key, sizeof key);
        REDIS_RUN(REDIS_REPLY_INTEGER, "DEL", key);
    }
    CU_ASSERT_EQUAL(load_game(id, STORE_LOAD_CHANGE), STORE_ENOT_FOUND);
}

static void test_write_whose_list_of_kept_answers_is_not_a_list_is_corrupt_and_changes_nothing(void)
{
    char id[32], scope[64], list[128];
    new_id(id, sizeof id);
    snprintf(scope, sizeof scope, "%s:caller", id);
    snprintf(list, sizeof list, "chessd:idemlist:%s", scope);
    create_game(id, "v1");
    REDIS_RUN(REDIS_REPLY_STATUS, "SET", list, "not a list");
    store_idempotency_t idem = { scope, "key", "answer", 600, 4 };
    CU_ASSERT_EQUAL(write_game(id, 1, "v2", 0, &idem, NULL, NULL), STORE_ECORRUPT);
    expect_game(id, "v1", 2, 1);
    char *answer = NULL;
    CU_ASSERT_EQUAL(store_idempotency_get(store, scope, "key", &answer), STORE_ENOT_FOUND);
    free(answer);
}

/* A hash of the new format the store did not write: the load says corrupt,
 * it does not make up a state or a history. */
static void test_load_of_a_game_hash_with_a_bad_hlen_or_version_or_without_state_is_corrupt(void)
{
    static const char *const bad[][6] = {
        { "version", "1", "hlen", "0", NULL },                   /* no state */
        { "version", "1", "state", "s", NULL },                  /* no hlen */
        { "version", "1", "state", "s", "hlen", "abc" },
        { "version", "1", "state", "s", "hlen", "-1" },
        { "version", "1", "state", "s", "hlen", "" },
        { "version", "x", "state", "s", "hlen", "0" },
        { "version", "0", "state", "s", "hlen", "0" },
        { "version", "-3", "state", "s", "hlen", "0" },
        { "version", "99999999999999999999999", "state", "s", "hlen", "0" },
        { "version", "9007199254740992", "state", "s", "hlen", "0" }, /* past 2^53 - 1, the largest a client can name */
        { "version", "1", "state", "s", "hlen", "inf" },
        { "version", "1", "state", "s", "hlen", "1e2" },
        { "version", "1", "state", "s", "hlen", "0x1" },
        { "version", "1", "state", "s", "hlen", "2" }, /* more entries than the (missing) history holds */
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        char id[32], key[96];
        new_id(id, sizeof id);
        game_key("game", id, key, sizeof key);
        const char *argv[8] = { "HSET", key };
        int argc = 2;
        for (int f = 0; f < 6 && bad[i][f]; f++)
            argv[argc++] = bad[i][f];
        redis_run(REDIS_REPLY_INTEGER, argc, argv);
        for (int what = STORE_LOAD_CHANGE; what <= STORE_LOAD_FULL; what++) {
            store_game_t g;
            store_status_t status = store_game_load(store, id, (store_load_t)what, &g);
            CU_ASSERT_EQUAL(status, STORE_ECORRUPT);
            if (status != STORE_ECORRUPT)
                fprintf(stderr, "\ngame hash %zu: %s\n", i, store_status_name(status));
            CU_ASSERT(g.state == NULL && g.history == NULL && g.moves == NULL && g.legacy == NULL);
            store_game_clear(&g);
        }
    }
}

static void test_load_of_a_move_list_or_history_the_store_did_not_write_is_corrupt(void)
{
    char id[32], key[96];
    new_id(id, sizeof id);
    CU_ASSERT_EQUAL(append_move(id, 0, "e2e4:e4", 1, 1), STORE_OK);
    game_key("moves", id, key, sizeof key);
    REDIS_RUN(REDIS_REPLY_INTEGER, "DEL", key);
    REDIS_RUN(REDIS_REPLY_INTEGER, "HSET", key, "a", "b");
    CU_ASSERT_EQUAL(load_game(id, STORE_LOAD_CHANGE), STORE_OK); /* a change does not read the move list */
    CU_ASSERT_EQUAL(load_game(id, STORE_LOAD_FULL), STORE_ECORRUPT);
    new_id(id, sizeof id);
    CU_ASSERT_EQUAL(append_move(id, 0, "e2e4:e4", 1, 1), STORE_OK);
    game_key("history", id, key, sizeof key);
    REDIS_RUN(REDIS_REPLY_INTEGER, "DEL", key);
    REDIS_RUN(REDIS_REPLY_INTEGER, "SADD", key, "a");
    CU_ASSERT_EQUAL(load_game(id, STORE_LOAD_CHANGE), STORE_ECORRUPT);
    CU_ASSERT_EQUAL(load_game(id, STORE_LOAD_FULL), STORE_ECORRUPT);
}

/* Bug (store_redis.c): with an idempotency ttl of 0 the script fails on
 * `SET ... EX 0` after its HSET, so the game is written but the caller gets
 * STORE_EUNAVAILABLE and no answer is kept. Either outcome must be whole. */
static void test_idempotency_ttl_0_never_half_applies_a_write(void)
{
    char id[32];
    new_id(id, sizeof id);
    create_game(id, "v1");
    store_idempotency_t idem = { id, "ttl-0-key", "the answer", 0, 0 };
    uint64_t version = 0;
    store_status_t status = write_game(id, 1, "v2", 0, &idem, &version, NULL);
    char *answer = NULL;
    store_status_t kept = store_idempotency_get(store, id, "ttl-0-key", &answer);
    free(answer);
    if (status == STORE_OK) {
        expect_game(id, "v2", 2, 2);
        CU_ASSERT_EQUAL(kept, STORE_OK);
    } else {
        fprintf(stderr, "\nidempotency ttl 0: write returned %s\n", store_status_name(status));
        expect_game(id, "v1", 2, 1);
        CU_ASSERT_EQUAL(kept, STORE_ENOT_FOUND);
    }
}

/* Bug (store_redis.c): game_key() and idempotency_key() cut keys at 128 and
 * 160 bytes, so long ids (or scopes) that differ only past the cut share one
 * record. A long id must be refused or kept apart, never merged. */
static void test_long_ids_and_scopes_never_share_a_record(void)
{
    char first[200], second[200];
    memset(first, 'L', 150);
    first[150] = '\0';
    snprintf(second, sizeof second, "%s", first);
    first[140] = '1';
    second[140] = '2';
    store_status_t status = write_game(first, 0, "first", 0, NULL, NULL, NULL);
    if (status == STORE_OK) {
        status = write_game(second, 0, "second", 0, NULL, NULL, NULL);
        CU_ASSERT_NOT_EQUAL(status, STORE_EEXISTS);
        expect_game(first, "first", 5, 1);
        if (status == STORE_OK)
            expect_game(second, "second", 6, 1);
    }

    char scope[200];
    memset(scope, 'S', 160);
    scope[160] = '\0';
    char id[32];
    new_id(id, sizeof id);
    create_game(id, "v1");
    store_idempotency_t a = { scope, "key-a", "answer a", 600, 0 }, b = { scope, "key-b", "answer b", 600, 0 };
    if (write_game(id, 1, "v2", 0, &a, NULL, NULL) != STORE_OK)
        return; /* refused: fine */
    char *replay = NULL;
    status = write_game(id, 2, "v3", 0, &b, NULL, &replay);
    CU_ASSERT_NOT_EQUAL(status, STORE_EREPLAY);
    if (replay)
        fprintf(stderr, "\nkey-b in a long scope replayed key-a's answer: %s\n", replay);
    free(replay);
}

/* --- concurrency --- */

typedef struct {
    const char *id;
    uint64_t expected;
    pthread_barrier_t *start;
    int index;
    store_status_t status;
    uint64_t current;
} racer_t;

static void *race(void *arg)
{
    racer_t *r = arg;
    char data[32];
    snprintf(data, sizeof data, "written by %d", r->index);
    pthread_barrier_wait(r->start);
    store_game_change_t change = state_only(data);
    r->status = store_game_write(store, r->id, r->expected, &change, 0, NULL, &r->current, NULL);
    return NULL;
}

static void test_32_threads_writing_the_same_version_make_exactly_one_winner(void)
{
    char id[32];
    new_id(id, sizeof id);
    create_game(id, "v1");
    CU_ASSERT_EQUAL(write_game(id, 1, "v2", 0, NULL, NULL, NULL), STORE_OK);
    const uint64_t expected = 2;
    pthread_barrier_t start;
    pthread_barrier_init(&start, NULL, RACE_THREADS);
    racer_t racers[RACE_THREADS];
    pthread_t threads[RACE_THREADS];
    int started = 0;
    for (int i = 0; i < RACE_THREADS; i++) {
        racers[i] = (racer_t){ .id = id, .expected = expected, .start = &start, .index = i,
                               .status = STORE_STATUS_COUNT };
        if (pthread_create(&threads[i], NULL, race, &racers[i]) == 0)
            started++;
    }
    CU_ASSERT_EQUAL_FATAL(started, RACE_THREADS); /* otherwise the barrier never opens */
    for (int i = 0; i < RACE_THREADS; i++)
        pthread_join(threads[i], NULL);
    pthread_barrier_destroy(&start);

    int ok = 0, conflicts = 0, winner = -1;
    for (int i = 0; i < RACE_THREADS; i++) {
        if (racers[i].status == STORE_OK) {
            ok++;
            winner = i;
            CU_ASSERT_EQUAL(racers[i].current, expected + 1);
        } else if (racers[i].status == STORE_ECONFLICT) {
            conflicts++;
            CU_ASSERT_EQUAL(racers[i].current, expected + 1);
        } else {
            fprintf(stderr, "\nracer %d: %s\n", i, store_status_name(racers[i].status));
        }
    }
    CU_ASSERT_EQUAL(ok, 1);
    CU_ASSERT_EQUAL(conflicts, RACE_THREADS - 1);
    if (winner >= 0) {
        char data[32];
        snprintf(data, sizeof data, "written by %d", winner);
        expect_game(id, data, strlen(data), expected + 1);
    }
}

static long long connected_clients(void)
{
    redisReply *r = redis_server_command(&server, NULL, "INFO clients");
    long long count = -1;
    const char *field = r && r->type == REDIS_REPLY_STRING ? strstr(r->str, "connected_clients:") : NULL;
    if (field)
        count = strtoll(field + strlen("connected_clients:"), NULL, 10);
    if (r)
        freeReplyObject(r);
    return count;
}

typedef struct {
    pthread_barrier_t *pinged, *release;
    store_status_t status;
} pinger_t;

/* Pings on this thread's connection, then holds it until the main thread has counted. */
static void *ping_and_hold(void *arg)
{
    pinger_t *p = arg;
    p->status = store_ping(store);
    pthread_barrier_wait(p->pinged);
    pthread_barrier_wait(p->release);
    return NULL;
}

/* Polls INFO for up to a second until at most `expected` clients remain. */
static long long settled_client_count(long long expected)
{
    long long count = connected_clients();
    for (long deadline = tests_monotonic_ms() + 1000; count > expected && tests_monotonic_ms() < deadline;) {
        struct timespec pause = { 0, 10 * 1000000 };
        nanosleep(&pause, NULL);
        count = connected_clients();
    }
    return count;
}

static void test_each_thread_has_its_own_connection_closed_when_the_thread_exits(void)
{
    enum { THREADS = 8 };
    CU_ASSERT_EQUAL_FATAL(store_ping(store), STORE_OK);
    long long before = settled_client_count(2); /* the main thread's, and the one counting */
    CU_ASSERT_FATAL(before >= 2);
    pthread_barrier_t pinged, release;
    pthread_barrier_init(&pinged, NULL, THREADS + 1);
    pthread_barrier_init(&release, NULL, THREADS + 1);
    pthread_t threads[THREADS];
    pinger_t pingers[THREADS];
    for (int i = 0; i < THREADS; i++) {
        pingers[i] = (pinger_t){ &pinged, &release, STORE_STATUS_COUNT };
        CU_ASSERT_EQUAL_FATAL(pthread_create(&threads[i], NULL, ping_and_hold, &pingers[i]), 0);
    }
    pthread_barrier_wait(&pinged);
    CU_ASSERT_EQUAL(connected_clients(), before + THREADS);
    pthread_barrier_wait(&release);
    for (int i = 0; i < THREADS; i++) {
        pthread_join(threads[i], NULL);
        CU_ASSERT_EQUAL(pingers[i].status, STORE_OK);
    }
    pthread_barrier_destroy(&pinged);
    pthread_barrier_destroy(&release);
    long long after = settled_client_count(before);
    CU_ASSERT(after >= 0 && after <= before);
}

/* --- Redis going away --- */

static void test_restarted_redis_fails_at_most_one_call_then_writes_again(void)
{
    CU_ASSERT_EQUAL_FATAL(store_ping(store), STORE_OK); /* a connection to the old server */
    if (!redis_server_restart(&server))
        fprintf(stderr, "\nrestart: %s\n", server.error);
    CU_ASSERT_FATAL(server.pid != 0);

    /* The new server knows no script: a write that succeeds went through the NOSCRIPT fallback. */
    char id[32];
    new_id(id, sizeof id);
    int failures = 0;
    store_status_t status = STORE_EUNAVAILABLE;
    for (int attempt = 0; attempt < 3 && status == STORE_EUNAVAILABLE; attempt++) {
        status = write_game(id, 0, "after restart", 0, NULL, NULL, NULL);
        if (status == STORE_EUNAVAILABLE)
            failures++;
    }
    CU_ASSERT_EQUAL(status, STORE_OK);
    CU_ASSERT(failures <= 1);
    CU_ASSERT_EQUAL(write_game(id, 1, "second", 0, NULL, NULL, NULL), STORE_OK);
    expect_game(id, "second", 6, 2);

    /* Once more with a read first, and a write on the fresh connection. */
    if (!redis_server_restart(&server))
        fprintf(stderr, "\nrestart: %s\n", server.error);
    CU_ASSERT_FATAL(server.pid != 0);
    status = load_game(id, STORE_LOAD_CHANGE);
    if (status == STORE_EUNAVAILABLE)
        status = load_game(id, STORE_LOAD_CHANGE);
    CU_ASSERT_EQUAL(status, STORE_ENOT_FOUND); /* no persistence: the restart lost it */
    CU_ASSERT_EQUAL(write_game(id, 0, "recreated", 0, NULL, NULL, NULL), STORE_OK);
    expect_game(id, "recreated", 9, 1);
}

static void test_stopped_redis_is_unavailable_promptly_and_the_next_start_works(void)
{
    CU_ASSERT_EQUAL_FATAL(store_ping(store), STORE_OK);
    redis_server_stop(&server);
    CU_ASSERT_FATAL(server.pid == 0);
    char id[32];
    new_id(id, sizeof id);
    for (int round = 0; round < 2; round++) { /* with the stale connection, then with none */
        long start = tests_monotonic_ms();
        CU_ASSERT_EQUAL(write_game(id, 0, "x", 0, NULL, NULL, NULL), STORE_EUNAVAILABLE);
        char *answer = NULL;
        CU_ASSERT_EQUAL(append_move(id, 0, "e2e4:e4", 1, 1), STORE_EUNAVAILABLE);
        CU_ASSERT_EQUAL(load_game(id, STORE_LOAD_CHANGE), STORE_EUNAVAILABLE);
        CU_ASSERT_EQUAL(load_game(id, STORE_LOAD_FULL), STORE_EUNAVAILABLE);
        CU_ASSERT_EQUAL(store_idempotency_get(store, id, "k", &answer), STORE_EUNAVAILABLE);
        CU_ASSERT_EQUAL(store_ping(store), STORE_EUNAVAILABLE);
        long elapsed = tests_monotonic_ms() - start;
        CU_ASSERT(elapsed < TIMEOUT_MS + SLACK_MS);
        if (elapsed >= TIMEOUT_MS + SLACK_MS)
            fprintf(stderr, "\nsix calls to a stopped Redis took %ld ms\n", elapsed);
    }
    if (!redis_server_start(&server))
        fprintf(stderr, "\nstart: %s\n", server.error);
    CU_ASSERT_FATAL(server.pid != 0);
    CU_ASSERT_EQUAL(store_ping(store), STORE_OK); /* the failed connection was not kept */
    CU_ASSERT_EQUAL(write_game(id, 0, "x", 0, NULL, NULL, NULL), STORE_OK);
}

/* Runs one call against the paused server and CU-asserts it gives up within
 * the command timeout with `expected`. */
static void expect_prompt_failure(const char *what, store_status_t (*call)(const char *id), const char *id,
                                  store_status_t expected)
{
    long start = tests_monotonic_ms();
    store_status_t status = call(id);
    CU_ASSERT_EQUAL(status, expected);
    if (status != expected)
        fprintf(stderr, "\n%s on a paused Redis: %s, not %s\n", what, store_status_name(status),
                store_status_name(expected));
    long elapsed = tests_monotonic_ms() - start;
    CU_ASSERT(elapsed < TIMEOUT_MS + SLACK_MS);
    if (elapsed >= TIMEOUT_MS + SLACK_MS)
        fprintf(stderr, "\n%s on a paused Redis took %ld ms\n", what, elapsed);
}

static store_status_t load_call(const char *id)
{
    return load_game(id, STORE_LOAD_FULL);
}

/* Appends a move: the timed-out write is applied after the resume. */
static store_status_t write_call(const char *id)
{
    return append_move(id, 1, " e7e5:e5", 2, 2);
}

static store_status_t ping_call(const char *id)
{
    (void)id;
    return store_ping(store);
}

static void test_paused_redis_is_unavailable_within_the_command_timeout_and_works_after(void)
{
    char id[32];
    new_id(id, sizeof id);
    CU_ASSERT_EQUAL(append_move(id, 0, "e2e4:e4", 1, 1), STORE_OK);
    CU_ASSERT_FATAL(redis_server_pause(&server));
    /* The write went out whole on the open connection: Redis runs it when it
     * resumes, so it is not "unavailable". */
    expect_prompt_failure("write (open connection)", write_call, id, STORE_EUNKNOWN);
    /* A new connection is not made until Redis answers its PING: nothing is sent. */
    expect_prompt_failure("load (new connection)", load_call, id, STORE_EUNAVAILABLE);
    expect_prompt_failure("ping (new connection)", ping_call, id, STORE_EUNAVAILABLE);
    CU_ASSERT_FATAL(redis_server_resume(&server));
    CU_ASSERT_EQUAL(store_ping(store), STORE_OK);
    char h[8 * STORE_HISTORY_ENTRY_SIZE + 1];
    expect_line(id, STORE_LOAD_FULL, 2, "e2e4:e4 e7e5:e5", entries(1, 2, h)); /* made after all */
    CU_ASSERT_EQUAL(append_move(id, 1, " d7d5:d5", 3, 2), STORE_ECONFLICT);
    CU_ASSERT_EQUAL(write_game(id, 2, "after resume", 0, NULL, NULL, NULL), STORE_OK);
    expect_game(id, "after resume", 12, 3);
}


/* --- fibers: store calls that wait by yielding to a loop (store/fiber.h) --- */

typedef struct {
    fiber_t *fiber;
    bool waiting;
    unsigned rounds;
    int64_t deadline_ms; /* store_set_deadline's (0: none) */
    store_status_t status;
    unsigned pinged;
    int64_t ended_ms;
} ping_job_t;

static void ping_job(void *arg)
{
    ping_job_t *job = arg;
    store_set_deadline(job->deadline_ms);
    job->status = STORE_OK;
    for (job->pinged = 0; job->pinged < job->rounds && job->status == STORE_OK; job->pinged++)
        job->status = store_ping(store);
    store_set_deadline(0);
    job->ended_ms = redis_server_now_ms();
}

/* A small event loop on this thread: runs each job on its fiber, polls what
 * the waiting ones wait for (at most 10 ms at a time), goes on with those
 * ready or late. Returns how many times it went round; *most says the most
 * fibers waiting at once. */
static unsigned run_fibers(ping_job_t *jobs, unsigned count, unsigned *most)
{
    unsigned waiting = 0, rounds = 0;
    *most = 0;
    for (unsigned i = 0; i < count; i++) {
        jobs[i].waiting = fiber_start(jobs[i].fiber, ping_job, &jobs[i]) == FIBER_WAITING;
        waiting += jobs[i].waiting;
    }
    while (waiting) {
        if (waiting > *most)
            *most = waiting;
        struct pollfd polled[16];
        int timeout = 10;
        for (unsigned i = 0; i < count; i++) {
            const fiber_wait_t *w = fiber_waits_for(jobs[i].fiber);
            polled[i] = (struct pollfd){ .fd = jobs[i].waiting ? w->fd : -1, .events = w->events };
            int64_t left = w->deadline_ms - redis_server_now_ms();
            if (jobs[i].waiting && left < timeout)
                timeout = left < 0 ? 0 : (int)left;
        }
        CU_ASSERT_FATAL(poll(polled, count, timeout) >= 0);
        rounds++;
        for (unsigned i = 0; i < count; i++) {
            if (!jobs[i].waiting)
                continue;
            bool ready = polled[i].revents != 0;
            if (!ready && redis_server_now_ms() < fiber_waits_for(jobs[i].fiber)->deadline_ms)
                continue;
            jobs[i].waiting = fiber_continue(jobs[i].fiber, ready) == FIBER_WAITING;
            waiting -= !jobs[i].waiting;
        }
    }
    return rounds;
}

static void test_fibers_on_one_thread_wait_on_redis_at_once_each_on_its_own_connection(void)
{
    enum { FIBERS = 8 };
    ping_job_t jobs[FIBERS];
    for (unsigned i = 0; i < FIBERS; i++) {
        jobs[i] = (ping_job_t){ .fiber = fiber_new(256 * 1024), .rounds = 20 };
        CU_ASSERT_PTR_NOT_NULL_FATAL(jobs[i].fiber);
    }
    store_stats_t before, after;
    store_stats(store, &before);
    unsigned most;
    run_fibers(jobs, FIBERS, &most);
    store_stats(store, &after);
    for (unsigned i = 0; i < FIBERS; i++) {
        CU_ASSERT_EQUAL(jobs[i].status, STORE_OK);
        CU_ASSERT_EQUAL(jobs[i].pinged, 20);
    }
    CU_ASSERT_EQUAL(most, FIBERS); /* every first ping waited at once */
    CU_ASSERT_EQUAL(after.connects - before.connects, FIBERS);
    /* A second round reuses each fiber's connection. */
    run_fibers(jobs, FIBERS, &most);
    store_stats(store, &before);
    CU_ASSERT_EQUAL(before.connects, after.connects);
    for (unsigned i = 0; i < FIBERS; i++)
        fiber_free(jobs[i].fiber);
}

static void test_fibers_waiting_on_a_frozen_redis_end_at_their_own_deadlines_and_the_loop_runs_on(void)
{
    enum { FIBERS = 3 };
    ping_job_t jobs[FIBERS];
    for (unsigned i = 0; i < FIBERS; i++) {
        jobs[i] = (ping_job_t){ .fiber = fiber_new(256 * 1024), .rounds = 1 };
        CU_ASSERT_PTR_NOT_NULL_FATAL(jobs[i].fiber);
    }
    unsigned most;
    run_fibers(jobs, FIBERS, &most); /* each fiber's connection made */
    CU_ASSERT_FATAL(redis_server_pause(&server));
    int64_t start = redis_server_now_ms();
    for (unsigned i = 0; i < FIBERS; i++)
        jobs[i].deadline_ms = start + 60 * (int64_t)(i + 1); /* within the 300 ms command timeout */
    unsigned rounds = run_fibers(jobs, FIBERS, &most);
    CU_ASSERT_FATAL(redis_server_resume(&server));
    for (unsigned i = 0; i < FIBERS; i++) {
        CU_ASSERT_EQUAL(jobs[i].status, STORE_EUNAVAILABLE);
        CU_ASSERT(jobs[i].ended_ms >= jobs[i].deadline_ms);
        CU_ASSERT(jobs[i].ended_ms < jobs[i].deadline_ms + SLACK_MS);
    }
    CU_ASSERT_EQUAL(most, FIBERS);
    CU_ASSERT(rounds >= 10); /* the loop went round meanwhile: no wait held the thread */
    for (unsigned i = 0; i < FIBERS; i++)
        jobs[i].deadline_ms = 0;
    run_fibers(jobs, FIBERS, &most);
    for (unsigned i = 0; i < FIBERS; i++) {
        CU_ASSERT_EQUAL(jobs[i].status, STORE_OK);
        fiber_free(jobs[i].fiber);
    }
}

static void test_a_fiber_reaches_redis_by_a_name_resolved_off_its_thread(void)
{
    char url[64];
    snprintf(url, sizeof url, "redis://localhost:%d", server.port);
    store_t *by_name = open_store(url), *saved = store;
    CU_ASSERT_PTR_NOT_NULL_FATAL(by_name);
    ping_job_t job = { .fiber = fiber_new(256 * 1024), .rounds = 3 };
    CU_ASSERT_PTR_NOT_NULL_FATAL(job.fiber);
    store = by_name;
    unsigned most;
    run_fibers(&job, 1, &most);
    store = saved;
    CU_ASSERT_EQUAL(job.status, STORE_OK);
    CU_ASSERT_EQUAL(job.pinged, 3);
    CU_ASSERT_EQUAL(most, 1); /* it waited (for the name, then for Redis) */
    fiber_free(job.fiber);
    store_close(by_name);
}

/* --- a full Redis --- */

/* Sets a Redis setting with CONFIG SET, CU-asserting Redis took it. */
static void config_set(const char *name, const char *value)
{
    redisReply *r = redis_server_command(&server, NULL, "CONFIG SET %s %s", name, value);
    CU_ASSERT(r && r->type == REDIS_REPLY_STATUS);
    if (r)
        freeReplyObject(r);
}

/* Redis at maxmemory with noeviction answers writes "OOM command not allowed":
 * the store says full (not unavailable: Redis answered at once, and retrying
 * will not help until memory is freed), and nothing is written. */
static void test_write_to_a_redis_out_of_memory_is_full_and_writes_nothing(void)
{
    char id[32], fresh[32];
    new_id(id, sizeof id);
    new_id(fresh, sizeof fresh);
    create_game(id, "v1");
    config_set("maxmemory-policy", "noeviction");
    config_set("maxmemory", "1");
    uint64_t current = 0;
    store_idempotency_t idem = { id, "full-key", "the answer", 600, 0 };
    store_status_t update = write_game(id, 1, "v2", 0, &idem, &current, NULL);
    store_status_t create = write_game(fresh, 0, "new", 0, NULL, NULL, NULL);
    store_status_t append = append_move(id, 1, "e2e4:e4", 1, 1);
    char *answer = NULL;
    store_status_t kept = store_idempotency_get(store, id, "full-key", &answer);
    store_status_t load = load_game(fresh, STORE_LOAD_CHANGE);
    store_status_t read = load_game(id, STORE_LOAD_FULL); /* reads still work on a full Redis */
    config_set("maxmemory", "0");
    CU_ASSERT_EQUAL(update, STORE_EFULL);
    CU_ASSERT_EQUAL(create, STORE_EFULL);
    CU_ASSERT_EQUAL(append, STORE_EFULL);
    CU_ASSERT_STRING_EQUAL(store_status_name(STORE_EFULL), "full");
    CU_ASSERT_EQUAL(kept, STORE_ENOT_FOUND);
    CU_ASSERT_EQUAL(load, STORE_ENOT_FOUND);
    CU_ASSERT_EQUAL(read, STORE_OK);
    free(answer);
    expect_line(id, STORE_LOAD_FULL, 1, "", "");
    CU_ASSERT_EQUAL(write_game(id, 1, "v2", 0, &idem, NULL, NULL), STORE_OK);
    expect_game(id, "v2", 2, 2);
}

/* --- a reply lost on a closing connection --- */

/* A TCP proxy in front of the test Redis, one client connection at a time.
 * When armed, the reply to the next command holding "EVAL" (a store write) is
 * swallowed and the client's connection closed: Redis ran the write, and the
 * connection broke before the answer came back. With a refusal set, the
 * next "EVAL" after that is not passed on but answered with it (as a Redis
 * loading its data after a restart, or a cluster failing over, answers). */
typedef struct {
    int listen_fd, port;
    pthread_t thread;
    atomic_bool armed, stop, refusing;
    const char *refusal; /* a RESP error line, or NULL */
} proxy_t;

static bool holds_eval(const char *buf, size_t n)
{
    for (size_t i = 0; i + 4 <= n; i++)
        if (!memcmp(buf + i, "EVAL", 4))
            return true;
    return false;
}

/* Relays one client until either side closes or a reply is swallowed. */
static void proxy_relay(proxy_t *p, int client)
{
    int upstream = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in addr = { .sin_family = AF_INET, .sin_port = htons((uint16_t)server.port),
                                .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
    if (upstream < 0 || connect(upstream, (struct sockaddr *)&addr, sizeof addr)) {
        if (upstream >= 0)
            close(upstream);
        return;
    }
    bool losing = false;
    char buf[65536];
    while (!atomic_load(&p->stop)) {
        struct pollfd fds[2] = { { .fd = client, .events = POLLIN }, { .fd = upstream, .events = POLLIN } };
        if (poll(fds, 2, 50) <= 0)
            continue;
        if (fds[0].revents) {
            ssize_t n = read(client, buf, sizeof buf);
            if (n <= 0)
                break;
            if (atomic_load(&p->refusing) && holds_eval(buf, (size_t)n)) {
                atomic_store(&p->refusing, false);
                if (write(client, p->refusal, strlen(p->refusal)) != (ssize_t)strlen(p->refusal))
                    break;
                continue;
            }
            if (atomic_load(&p->armed) && holds_eval(buf, (size_t)n)) {
                atomic_store(&p->armed, false);
                atomic_store(&p->refusing, p->refusal != NULL);
                losing = true;
            }
            if (write(upstream, buf, (size_t)n) != n)
                break;
        }
        if (fds[1].revents) {
            ssize_t n = read(upstream, buf, sizeof buf);
            if (n <= 0 || losing || write(client, buf, (size_t)n) != n)
                break;
        }
    }
    close(upstream);
}

static void *proxy_run(void *arg)
{
    proxy_t *p = arg;
    while (!atomic_load(&p->stop)) {
        struct pollfd accept_poll = { .fd = p->listen_fd, .events = POLLIN };
        if (poll(&accept_poll, 1, 50) <= 0)
            continue;
        int client = accept(p->listen_fd, NULL, NULL);
        if (client < 0)
            continue;
        proxy_relay(p, client);
        close(client);
    }
    return NULL;
}

static bool proxy_start(proxy_t *p)
{
    memset(p, 0, sizeof *p);
    p->listen_fd = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in addr = { .sin_family = AF_INET, .sin_port = 0, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
    socklen_t length = sizeof addr;
    if (p->listen_fd < 0 || bind(p->listen_fd, (struct sockaddr *)&addr, sizeof addr)
        || listen(p->listen_fd, 8) || getsockname(p->listen_fd, (struct sockaddr *)&addr, &length)
        || pthread_create(&p->thread, NULL, proxy_run, p)) {
        if (p->listen_fd >= 0)
            close(p->listen_fd);
        return false;
    }
    p->port = ntohs(addr.sin_port);
    return true;
}

static void proxy_stop(proxy_t *p)
{
    atomic_store(&p->stop, true);
    pthread_join(p->thread, NULL);
    close(p->listen_fd);
}

/* The write reaches Redis and is made, its reply is lost and the kept
 * connection closes; the store sends it once more on a new connection and
 * finds the version it would have made. That is its own first send as likely
 * as another writer, so the answer is "unknown" (read the record to tell),
 * never "conflict", which would tell the caller the change was not made. */
/* Through a proxy that loses the reply to a game's second write (and, with
 * refusal, answers its resend with it): creates game id at v1, then writes
 * v2; the statuses of both writes and whether the resend was refused. */
static void lost_reply_writes(const char *refusal, const char *id, store_status_t *created, store_status_t *lost,
                              bool *refused)
{
    proxy_t proxy;
    *created = *lost = STORE_STATUS_COUNT;
    CU_ASSERT_FATAL(proxy_start(&proxy));
    proxy.refusal = refusal;
    char url[64];
    snprintf(url, sizeof url, "redis://127.0.0.1:%d", proxy.port);
    store_t *through = open_store(url);
    CU_ASSERT_PTR_NOT_NULL(through);
    uint64_t current = 0;
    if (through) {
        store_game_change_t first = line_change("v1", 1, STORE_LINE_APPEND, "e2e4:e4", "0000000000000001");
        store_game_change_t second = line_change("v2", 2, STORE_LINE_APPEND, " e7e5:e5", "0000000000000002");
        *created = store_game_write(through, id, 0, &first, 0, NULL, &current, NULL); /* a kept connection */
        atomic_store(&proxy.armed, true);
        *lost = store_game_write(through, id, 1, &second, 0, NULL, &current, NULL);
        store_close(through);
    }
    proxy_stop(&proxy);
    CU_ASSERT_FALSE(atomic_load(&proxy.armed)); /* the write did pass through the proxy */
    *refused = !atomic_load(&proxy.refusing);
}

static void test_resend_after_a_lost_reply_finding_its_own_version_is_unknown_not_conflict(void)
{
    char id[32];
    new_id(id, sizeof id);
    store_status_t created, lost;
    bool refused;
    lost_reply_writes(NULL, id, &created, &lost, &refused);
    CU_ASSERT_EQUAL(created, STORE_OK);
    CU_ASSERT_EQUAL(lost, STORE_EUNKNOWN);
    if (lost != STORE_EUNKNOWN)
        fprintf(stderr, "\na resent write that found its own version: %s\n", store_status_name(lost));
    expect_game(id, "v2", 2, 2); /* the first send was made */
    char h[8 * STORE_HISTORY_ENTRY_SIZE + 1];
    expect_line(id, STORE_LOAD_FULL, 2, "e2e4:e4 e7e5:e5", entries(1, 2, h)); /* once, not twice */
}

/* The same lost reply, but the resend is refused (LOADING: Redis came back
 * and reads its data, which may hold the first send). A refusal says the
 * resend did nothing, not the first send: the answer is "unknown", never
 * "unavailable", which would tell the caller the change was not made. */
static void test_resend_after_a_lost_reply_that_is_refused_is_unknown_not_unavailable(void)
{
    char id[32];
    new_id(id, sizeof id);
    store_status_t created, lost;
    bool refused;
    lost_reply_writes("-LOADING Redis is loading the dataset in memory\r\n", id, &created, &lost, &refused);
    CU_ASSERT_EQUAL(created, STORE_OK);
    CU_ASSERT_TRUE(refused); /* the resend was refused */
    CU_ASSERT_EQUAL(lost, STORE_EUNKNOWN);
    if (lost != STORE_EUNKNOWN)
        fprintf(stderr, "\na write whose resend was refused: %s\n", store_status_name(lost));
    expect_game(id, "v2", 2, 2); /* the first send was made */
}

/* --- configuration --- */

static void test_bad_url_is_refused_by_store_open_with_a_message(void)
{
    static const char *const bad[] = {
        "",
        "http://127.0.0.1:6379",
        "redis://",
        "redis://:6379",
        "redis:///0",
        "redis://127.0.0.1:0",
        "redis://127.0.0.1:65536",
        "redis://127.0.0.1:",
        "redis://127.0.0.1:63x79",
        "redis://127.0.0.1:6379/db",
        "redis://127.0.0.1:6379/-1",
        "redis://127.0.0.1:6379/1/2",
        "redis://only-a-password@127.0.0.1:6379",
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        store_config_t cfg = { .connect_timeout_ms = TIMEOUT_MS, .command_timeout_ms = TIMEOUT_MS };
        snprintf(cfg.url, sizeof cfg.url, "%s", bad[i]);
        char err[256] = "";
        store_t *s = store_open(&cfg, err, sizeof err);
        if (s)
            fprintf(stderr, "\naccepted bad URL '%s'\n", bad[i]);
        CU_ASSERT_PTR_NULL(s);
        CU_ASSERT(err[0] != '\0');
        store_close(s);
    }
    store_close(NULL);
}

static void test_store_open_makes_no_connection_and_a_dead_port_is_unavailable(void)
{
    char url[64];
    snprintf(url, sizeof url, "redis://127.0.0.1:%d/2", server.port == 1 ? 2 : 1); /* nothing listens there */
    store_t *s = open_store(url);
    CU_ASSERT_PTR_NOT_NULL_FATAL(s);
    CU_ASSERT_EQUAL(store_ping(s), STORE_EUNAVAILABLE);
    store_close(s);
}

/* A loopback listener whose accept queue is full: new connects hang in SYN
 * retries, as with a host that drops packets. Returns its port (0 on failure);
 * fds[0] is the listener, the rest fill its queue; close them all after. */
static int full_listener(int fds[], int count)
{
    for (int i = 0; i < count; i++)
        fds[i] = -1;
    struct sockaddr_in addr = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
    socklen_t length = sizeof addr;
    fds[0] = socket(AF_INET, SOCK_STREAM, 0);
    if (fds[0] < 0 || bind(fds[0], (struct sockaddr *)&addr, sizeof addr) || listen(fds[0], 0)
        || getsockname(fds[0], (struct sockaddr *)&addr, &length))
        return 0;
    for (int i = 1; i < count; i++) {
        fds[i] = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK, 0);
        if (fds[i] >= 0)
            connect(fds[i], (struct sockaddr *)&addr, sizeof addr); /* EINPROGRESS, or queued */
    }
    struct timespec settle = { 0, 50 * 1000000 };
    nanosleep(&settle, NULL);
    return ntohs(addr.sin_port);
}

static void test_connect_that_is_never_answered_gives_up_within_the_connect_timeout(void)
{
    enum { FDS = 4 };
    int fds[FDS];
    int port = full_listener(fds, FDS);
    CU_ASSERT_FATAL(port != 0);
    char url[64];
    snprintf(url, sizeof url, "redis://127.0.0.1:%d", port);
    store_t *s = open_store(url);
    CU_ASSERT_PTR_NOT_NULL(s);
    for (int attempt = 0; s && attempt < 2; attempt++) {
        long start = tests_monotonic_ms();
        CU_ASSERT_EQUAL(store_ping(s), STORE_EUNAVAILABLE);
        long elapsed = tests_monotonic_ms() - start;
        CU_ASSERT(elapsed < TIMEOUT_MS + SLACK_MS);
        if (elapsed >= TIMEOUT_MS + SLACK_MS)
            fprintf(stderr, "\na connect nobody answers took %ld ms\n", elapsed);
    }
    store_close(s);
    for (int i = 0; i < FDS; i++)
        if (fds[i] >= 0)
            close(fds[i]);
}

/* A loopback listener that never accepts: connects complete (the kernel
 * queues them) and nothing is ever answered, as a stopped Redis. Its port,
 * or 0; *fd is the listener to close. */
static int silent_listener(int *fd)
{
    struct sockaddr_in addr = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
    socklen_t length = sizeof addr;
    *fd = socket(AF_INET, SOCK_STREAM, 0);
    if (*fd < 0 || bind(*fd, (struct sockaddr *)&addr, sizeof addr) || listen(*fd, 64)
        || getsockname(*fd, (struct sockaddr *)&addr, &length))
        return 0;
    return ntohs(addr.sin_port);
}

/* A store of url with the breaker on (no trials: only store_probe brings a node back). */
static store_t *open_breaker_store(const char *url) { return redis_server_open_store_with_breaker(url, TIMEOUT_MS, true); }

static void test_breaker_fails_at_once_after_a_timeout_until_a_probe_sees_redis_again(void)
{
    char url[64];
    redis_server_url(&server, url, sizeof url);
    store_t *s = open_breaker_store(url);
    CU_ASSERT_PTR_NOT_NULL_FATAL(s);
    store_health_t health;
    CU_ASSERT_EQUAL(store_probe(s), STORE_OK);
    store_health(s, &health);
    CU_ASSERT_TRUE(health.up);
    char id[32];
    new_id(id, sizeof id);
    store_game_t game;
    CU_ASSERT_EQUAL(store_game_load(s, id, STORE_LOAD_CHANGE, &game), STORE_ENOT_FOUND);
    CU_ASSERT_FATAL(redis_server_pause(&server));
    long start = tests_monotonic_ms();
    CU_ASSERT_EQUAL(store_game_load(s, id, STORE_LOAD_CHANGE, &game), STORE_EUNAVAILABLE); /* pays the timeout */
    long first = tests_monotonic_ms() - start;
    CU_ASSERT(first >= TIMEOUT_MS - 50 && first < TIMEOUT_MS + SLACK_MS);
    store_health(s, &health);
    CU_ASSERT_FALSE(health.up);
    CU_ASSERT_EQUAL(health.fault, STORE_FAULT_TIMEOUT);
    CU_ASSERT_PTR_NOT_NULL(strstr(health.reason, "no answer within"));
    store_stats_t before, after;
    store_stats(s, &before);
    start = tests_monotonic_ms();
    for (int i = 0; i < 20; i++)
        CU_ASSERT_EQUAL(store_game_load(s, id, STORE_LOAD_CHANGE, &game), STORE_EUNAVAILABLE);
    long twenty = tests_monotonic_ms() - start;
    CU_ASSERT(twenty < TIMEOUT_MS / 2); /* nothing sent, nothing waited for */
    if (twenty >= TIMEOUT_MS / 2)
        fprintf(stderr, "\n20 loads with the node held down took %ld ms\n", twenty);
    store_stats(s, &after);
    CU_ASSERT_EQUAL(after.fast_failures - before.fast_failures, 20);
    CU_ASSERT_EQUAL(store_probe(s), STORE_EUNAVAILABLE); /* past the breaker: still frozen */
    CU_ASSERT_FATAL(redis_server_resume(&server));
    CU_ASSERT_EQUAL(store_game_load(s, id, STORE_LOAD_CHANGE, &game), STORE_EUNAVAILABLE); /* held down until a probe */
    CU_ASSERT_EQUAL(store_probe(s), STORE_OK);
    store_health(s, &health);
    CU_ASSERT_TRUE(health.up);
    CU_ASSERT_EQUAL(health.fault, STORE_FAULT_NONE);
    CU_ASSERT_EQUAL(store_game_load(s, id, STORE_LOAD_CHANGE, &game), STORE_ENOT_FOUND);
    store_close(s);
}

/* A node held down by a refused connection (nothing listens: Redis away,
 * say a background task's connection found it so) is tried again by each
 * command, which fails as fast as the breaker would; once Redis listens
 * again the next command is served, no probe needed. A node held down by a
 * timeout still waits for a probe (the test above). */
static void test_breaker_lets_commands_try_a_node_that_refused_and_uses_it_once_it_listens(void)
{
    char url[64];
    redis_server_url(&server, url, sizeof url);
    store_t *s = open_breaker_store(url);
    CU_ASSERT_PTR_NOT_NULL_FATAL(s);
    char id[32];
    new_id(id, sizeof id);
    store_game_t game;
    CU_ASSERT_EQUAL(store_game_load(s, id, STORE_LOAD_CHANGE, &game), STORE_ENOT_FOUND);
    redis_server_stop(&server);
    CU_ASSERT_EQUAL(store_probe(s), STORE_EUNAVAILABLE); /* refused: marked down */
    store_health_t health;
    store_health(s, &health);
    CU_ASSERT_FALSE(health.up);
    CU_ASSERT_EQUAL(health.fault, STORE_FAULT_UNREACHABLE);
    store_stats_t before, after;
    store_stats(s, &before);
    long start = tests_monotonic_ms();
    for (int i = 0; i < 20; i++)
        CU_ASSERT_EQUAL(store_game_load(s, id, STORE_LOAD_CHANGE, &game), STORE_EUNAVAILABLE);
    long twenty = tests_monotonic_ms() - start;
    CU_ASSERT(twenty < TIMEOUT_MS / 2); /* each refused at once */
    if (twenty >= TIMEOUT_MS / 2)
        fprintf(stderr, "\n20 loads against a refusing node took %ld ms\n", twenty);
    store_stats(s, &after);
    CU_ASSERT_EQUAL(after.fast_failures - before.fast_failures, 0); /* tried, not held */
    CU_ASSERT_FATAL(redis_server_start(&server));
    CU_ASSERT_EQUAL(store_game_load(s, id, STORE_LOAD_CHANGE, &game), STORE_ENOT_FOUND); /* no probe in between */
    store_health(s, &health);
    CU_ASSERT_TRUE(health.up);
    store_close(s);
}

static void test_breaker_names_a_refused_connection_and_a_silent_listener(void)
{
    char url[64];
    snprintf(url, sizeof url, "redis://127.0.0.1:%d", server.port == 1 ? 2 : 1); /* nothing listens there */
    store_t *s = open_breaker_store(url);
    CU_ASSERT_PTR_NOT_NULL_FATAL(s);
    CU_ASSERT_EQUAL(store_probe(s), STORE_EUNAVAILABLE);
    store_health_t health;
    store_health(s, &health);
    CU_ASSERT_FALSE(health.up);
    CU_ASSERT_EQUAL(health.fault, STORE_FAULT_UNREACHABLE);
    CU_ASSERT_STRING_EQUAL(store_fault_name(health.fault), "unreachable");
    CU_ASSERT_FALSE(store_fault_is_setting(health.fault));
    store_close(s);

    int fd;
    int port = silent_listener(&fd);
    CU_ASSERT_FATAL(port != 0);
    snprintf(url, sizeof url, "redis://127.0.0.1:%d", port);
    CU_ASSERT_PTR_NOT_NULL_FATAL(s = open_breaker_store(url));
    CU_ASSERT_EQUAL(store_probe(s), STORE_EUNAVAILABLE);
    store_health(s, &health);
    CU_ASSERT_EQUAL(health.fault, STORE_FAULT_TIMEOUT);
    CU_ASSERT_PTR_NOT_NULL(strstr(health.reason, "no answer to PING"));
    store_close(s);
    close(fd);
}

static void test_breaker_names_a_refused_password_as_a_setting_without_showing_it(void)
{
    redis_server_t locked;
    redis_server_init(&locked);
    CU_ASSERT_FATAL(redis_server_start(&locked));
    redisReply *r = redis_server_command(&locked, NULL, "CONFIG SET requirepass %s", "the-right-one");
    CU_ASSERT_FATAL(r && r->type == REDIS_REPLY_STATUS);
    freeReplyObject(r);
    char url[96];
    snprintf(url, sizeof url, "redis://:a-wrong-one@127.0.0.1:%d", locked.port);
    store_t *s = open_breaker_store(url);
    CU_ASSERT_PTR_NOT_NULL(s);
    if (s) {
        CU_ASSERT_EQUAL(store_probe(s), STORE_EUNAVAILABLE);
        store_health_t health;
        store_health(s, &health);
        CU_ASSERT_EQUAL(health.fault, STORE_FAULT_AUTH);
        CU_ASSERT_TRUE(store_fault_is_setting(health.fault));
        CU_ASSERT_STRING_EQUAL(store_fault_name(health.fault), "auth_refused");
        CU_ASSERT_PTR_NOT_NULL(strstr(health.reason, "AUTH was refused"));
        CU_ASSERT_PTR_NULL(strstr(health.reason, "wrong-one"));
        store_close(s);
    }
    snprintf(url, sizeof url, "redis://127.0.0.1:%d", locked.port); /* no password at all */
    if ((s = open_breaker_store(url))) {
        CU_ASSERT_EQUAL(store_probe(s), STORE_EUNAVAILABLE);
        store_health_t health;
        store_health(s, &health);
        CU_ASSERT_EQUAL(health.fault, STORE_FAULT_AUTH);
        store_close(s);
    }
    if ((r = redis_server_command(&locked, "the-right-one", "CONFIG SET requirepass %s", "")))
        freeReplyObject(r);
    redis_server_stop(&locked);
}

/* Reading a cluster's slot map tries node after node, but within the
 * command's budget (twice the command timeout, and the connection under
 * way): seeds that all went silent cost a request that, not a timeout each. */
static void test_cluster_seeds_that_never_answer_are_unavailable_within_the_command_budget(void)
{
    enum { SEEDS = 8 };
    int fds[SEEDS];
    char url[512];
    int n = snprintf(url, sizeof url, "redis+cluster://");
    for (int i = 0; i < SEEDS; i++) {
        int port = silent_listener(&fds[i]);
        CU_ASSERT_FATAL(port != 0);
        n += snprintf(url + n, sizeof url - (size_t)n, "%s127.0.0.1:%d", i ? "," : "", port);
    }
    store_t *s = open_store(url);
    CU_ASSERT_PTR_NOT_NULL(s);
    for (int attempt = 0; s && attempt < 2; attempt++) {
        long start = tests_monotonic_ms();
        store_game_t g;
        CU_ASSERT_EQUAL(store_game_load(s, "silent", STORE_LOAD_CHANGE, &g), STORE_EUNAVAILABLE);
        long elapsed = tests_monotonic_ms() - start;
        CU_ASSERT(elapsed < 3 * TIMEOUT_MS + SLACK_MS);
        if (elapsed >= 3 * TIMEOUT_MS + SLACK_MS)
            fprintf(stderr, "\na load on a cluster of silent seeds took %ld ms\n", elapsed);
    }
    store_close(s);
    for (int i = 0; i < SEEDS; i++)
        if (fds[i] >= 0)
            close(fds[i]);
}

/* What fn writes to stderr (up to size - 1 bytes), fd 2 being a temporary file meanwhile. */
static void capture_stderr(void (*fn)(void *arg), void *arg, char *out, size_t size)
{
    out[0] = '\0';
    fflush(stderr);
    FILE *file = tmpfile();
    int saved = dup(2);
    if (!file || saved < 0 || dup2(fileno(file), 2) < 0) {
        if (file)
            fclose(file);
        if (saved >= 0)
            close(saved);
        return;
    }
    fn(arg);
    fflush(stderr);
    dup2(saved, 2);
    close(saved);
    rewind(file);
    size_t n = fread(out, 1, size - 1, file);
    out[n] = '\0';
    fclose(file);
}

static void load_once(void *arg)
{
    store_game_t g;
    CU_ASSERT_EQUAL(store_game_load(arg, "no-cluster", STORE_LOAD_CHANGE, &g), STORE_EUNAVAILABLE);
}

/* A cluster URL naming a Redis that is no cluster: every game request is
 * unavailable, and the log says why (the node refused CLUSTER SLOTS) rather
 * than nothing. */
static void test_cluster_url_to_a_redis_without_cluster_logs_why_it_is_unavailable(void)
{
    char url[64], log[2048];
    snprintf(url, sizeof url, "redis+cluster://127.0.0.1:%d", server.port);
    store_t *s = open_store(url);
    CU_ASSERT_PTR_NOT_NULL_FATAL(s);
    capture_stderr(load_once, s, log, sizeof log);
    store_close(s);
    CU_ASSERT_PTR_NOT_NULL(strstr(log, "cluster support disabled"));
    if (!strstr(log, "cluster support disabled"))
        fprintf(stderr, "\nlogged: '%s'\n", log);
}

static store_status_t ping_url(const char *url);

static void test_url_with_a_host_name_is_resolved(void)
{
    char url[64];
    snprintf(url, sizeof url, "redis://localhost:%d/0", server.port);
    CU_ASSERT_EQUAL(ping_url(url), STORE_OK);
}

static bool set_password(const char *current, const char *password)
{
    redisReply *r = redis_server_command(&server, current, "CONFIG SET requirepass %s", password);
    bool ok = r && r->type == REDIS_REPLY_STATUS;
    if (r)
        freeReplyObject(r);
    return ok;
}

/* EXISTS key in database db, through an authenticated connection; -1 when Redis did not answer. */
static long long exists_in_db(const char *password, int db, const char *key)
{
    redisContext *c = redis_server_connect(&server, password);
    if (!c)
        return -1;
    long long exists = -1;
    redisReply *r = redisCommand(c, "SELECT %d", db);
    if (r && r->type == REDIS_REPLY_STATUS) {
        freeReplyObject(r);
        r = redisCommand(c, "EXISTS %s", key);
        if (r && r->type == REDIS_REPLY_INTEGER)
            exists = r->integer;
    }
    if (r)
        freeReplyObject(r);
    redisFree(c);
    return exists;
}

static store_status_t ping_url(const char *url)
{
    store_t *s = open_store(url);
    CU_ASSERT_PTR_NOT_NULL(s);
    store_status_t status = s ? store_ping(s) : STORE_STATUS_COUNT;
    store_close(s);
    return status;
}

static void test_url_with_password_and_database_is_used(void)
{
    static const char password[] = "pw-for-the-store-test";
    CU_ASSERT_FATAL(set_password(NULL, password));
    char url[160], id[32], keys[3][96];
    int port = server.port;
    new_id(id, sizeof id);
    static const char *const kinds[] = { "game", "moves", "history" };
    for (int k = 0; k < 3; k++)
        game_key(kinds[k], id, keys[k], sizeof keys[k]);

    snprintf(url, sizeof url, "redis://:%s@127.0.0.1:%d/5", password, port);
    store_t *s = open_store(url);
    CU_ASSERT_PTR_NOT_NULL(s);
    if (s) {
        CU_ASSERT_EQUAL(store_ping(s), STORE_OK);
        uint64_t version = 0;
        store_game_change_t change = line_change("in db 5", 1, STORE_LINE_APPEND, "e2e4:e4", "0000000000000001");
        CU_ASSERT_EQUAL(store_game_write(s, id, 0, &change, 0, NULL, &version, NULL), STORE_OK);
        store_game_t g;
        CU_ASSERT_EQUAL(store_game_load(s, id, STORE_LOAD_FULL, &g), STORE_OK);
        CU_ASSERT(g.version == 1 && g.moves && !strcmp(g.moves, "e2e4:e4"));
        store_game_clear(&g);
        store_close(s);
    }
    for (int k = 0; k < 3; k++) {
        CU_ASSERT_EQUAL(exists_in_db(password, 5, keys[k]), 1);
        CU_ASSERT_EQUAL(exists_in_db(password, 0, keys[k]), 0);
    }

    snprintf(url, sizeof url, "redis://default:%s@127.0.0.1:%d/5", password, port);
    CU_ASSERT_EQUAL(ping_url(url), STORE_OK);
    snprintf(url, sizeof url, "redis://:wrong-password@127.0.0.1:%d/5", port);
    CU_ASSERT_EQUAL(ping_url(url), STORE_EUNAVAILABLE);
    snprintf(url, sizeof url, "redis://127.0.0.1:%d/5", port);
    CU_ASSERT_EQUAL(ping_url(url), STORE_EUNAVAILABLE);
    snprintf(url, sizeof url, "redis://:%s@127.0.0.1:%d/999", password, port); /* only 16 databases */
    CU_ASSERT_EQUAL(ping_url(url), STORE_EUNAVAILABLE);

    CU_ASSERT_FATAL(set_password(password, ""));
    CU_ASSERT_EQUAL(store_ping(store), STORE_OK);
}

/* Credentials end at the URL's last '@' (a host never holds one): a
 * password with an '@' is used whole, and no part of it is taken for the
 * host, which connection failures print. */
static void test_password_with_an_at_sign_is_used_whole(void)
{
    static const char password[] = "p@ss@word";
    CU_ASSERT_FATAL(set_password(NULL, password));
    char url[160];
    snprintf(url, sizeof url, "redis://:%s@127.0.0.1:%d", password, server.port);
    CU_ASSERT_EQUAL(ping_url(url), STORE_OK);
    snprintf(url, sizeof url, "redis://default:%s@127.0.0.1:%d/3", password, server.port);
    CU_ASSERT_EQUAL(ping_url(url), STORE_OK);
    CU_ASSERT_FATAL(set_password(password, ""));
}

/* A password with every character a URL reserves, a space and a non-ASCII
 * letter: the URLs below spell it percent-encoded. */
static const char decoded_password[] = "p@ss:w%rd /\xc3\xa9#?";

static store_status_t ping_config(const store_config_t *cfg)
{
    char err[256] = "";
    store_t *s = store_open(cfg, err, sizeof err);
    if (!s)
        fprintf(stderr, "\nstore_open(%s): %s\n", cfg->url, err);
    CU_ASSERT_PTR_NOT_NULL(s);
    store_status_t status = s ? store_ping(s) : STORE_STATUS_COUNT;
    store_close(s);
    return status;
}

static store_config_t config_for(const char *url)
{
    store_config_t cfg = { .connect_timeout_ms = TIMEOUT_MS, .command_timeout_ms = TIMEOUT_MS };
    snprintf(cfg.url, sizeof cfg.url, "%s", url);
    return cfg;
}

/* store_open refuses cfg; the reason is there and holds none of secret. */
static void expect_refused(const store_config_t *cfg, const char *secret, const char *must_say)
{
    char err[256] = "";
    store_t *s = store_open(cfg, err, sizeof err);
    if (s)
        fprintf(stderr, "\naccepted '%s'\n", cfg->url);
    CU_ASSERT_PTR_NULL(s);
    store_close(s);
    CU_ASSERT(err[0] != '\0');
    if (secret && strstr(err, secret))
        fprintf(stderr, "\nthe reason holds the password: %s\n", err);
    CU_ASSERT(!secret || !strstr(err, secret));
    if (must_say && !strstr(err, must_say))
        fprintf(stderr, "\nthe reason '%s' does not say '%s'\n", err, must_say);
    CU_ASSERT(!must_say || strstr(err, must_say) != NULL);
}

/* RFC 3986: %XX in the user and password is the byte XX, in either case;
 * the undecoded spelling is another password, which Redis refuses. */
static void test_url_user_and_password_are_percent_decoded(void)
{
    CU_ASSERT_FATAL(set_password(NULL, decoded_password));
    static const char *const credentials[] = {
        "redis://:p%40ss%3Aw%25rd%20%2F%C3%A9%23%3F",
        "redis://:p%40ss%3aw%25rd%20%2f%c3%a9%23%3f",
        "redis://d%65fault:p%40ss%3Aw%25rd%20%2F%C3%A9%23%3F",
        "redis://:p@ss:w%25rd%20/%C3%A9%23%3F", /* '@', ':' and '/' may also stand bare */
    };
    char url[256];
    for (size_t i = 0; i < sizeof credentials / sizeof credentials[0]; i++) {
        snprintf(url, sizeof url, "%s@127.0.0.1:%d%s", credentials[i], server.port, i % 2 ? "/0" : "");
        store_status_t status = ping_url(url);
        if (status != STORE_OK)
            fprintf(stderr, "\n%s was not decoded to the password\n", url);
        CU_ASSERT_EQUAL(status, STORE_OK);
    }
    snprintf(url, sizeof url, "redis://:p%%2540ss@127.0.0.1:%d", server.port); /* decodes to "p%40ss", once */
    CU_ASSERT_EQUAL(ping_url(url), STORE_EUNAVAILABLE);
    CU_ASSERT_FATAL(set_password(decoded_password, "p%40ss"));
    CU_ASSERT_EQUAL(ping_url(url), STORE_OK);
    CU_ASSERT_FATAL(set_password("p%40ss", ""));
}

static void test_a_malformed_escape_or_a_nul_refuses_the_url_and_the_reason_holds_no_password(void)
{
    static const struct {
        const char *url, *says;
    } bad[] = {
        { "redis://:SeCrEt%4@127.0.0.1:6379", "password has a '%'" },
        { "redis://:SeCrEt%@127.0.0.1:6379", "password has a '%'" },
        { "redis://:SeCrEt%g0@127.0.0.1:6379", "password has a '%'" },
        { "redis://:SeCrEt%0g@127.0.0.1:6379", "password has a '%'" },
        { "redis://:SeCrEt%%41@127.0.0.1:6379", "password has a '%'" },
        { "redis://:SeCrEt%00tail@127.0.0.1:6379", "%00" },
        { "redis://u%zz:SeCrEt@127.0.0.1:6379", "user has a '%'" },
        { "redis://u%00:SeCrEt@127.0.0.1:6379", "%00" },
        { "redis://user%3ASeCrEt@127.0.0.1:6379", "user whose password is given apart" }, /* %3A is no separator */
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        store_config_t cfg = config_for(bad[i].url);
        expect_refused(&cfg, "SeCrEt", bad[i].says);
    }
    /* A user of 255 bytes (decoded) and a password given apart of 1023 fit;
     * one byte more does not. */
    char url[1024], err[256] = "";
    snprintf(url, sizeof url, "redis://%%75%0254d:pw@127.0.0.1:6379", 0); /* "u" and 254 zeros */
    store_config_t cfg = config_for(url);
    store_t *s = store_open(&cfg, err, sizeof err);
    CU_ASSERT_PTR_NOT_NULL(s);
    store_close(s);
    snprintf(url, sizeof url, "redis://%%75%0255d:SeCrEt@127.0.0.1:6379", 0);
    cfg = config_for(url);
    expect_refused(&cfg, "SeCrEt", "user is longer than 255 bytes");
    static char long_password[1025];
    memset(long_password, 'A', 1023);
    cfg = config_for("redis://127.0.0.1:6379");
    cfg.password = long_password;
    s = store_open(&cfg, err, sizeof err);
    CU_ASSERT_PTR_NOT_NULL(s);
    store_close(s);
    long_password[1023] = 'A';
    expect_refused(&cfg, "AAAAAAAA", "longer than 1023 bytes");
}

/* The password given apart wins over the URL's, is used as it is (never
 * decoded), and goes with the URL's user. */
static void test_a_password_given_apart_replaces_the_urls_as_it_is(void)
{
    static const char password[] = "apart%40p@ss";
    CU_ASSERT_FATAL(set_password(NULL, password));
    char url[160];
    snprintf(url, sizeof url, "redis://:wrong@127.0.0.1:%d", server.port);
    store_config_t cfg = config_for(url);
    cfg.password = password;
    CU_ASSERT_EQUAL(ping_config(&cfg), STORE_OK);
    snprintf(url, sizeof url, "redis://default@127.0.0.1:%d", server.port);
    cfg = config_for(url);
    cfg.password = password;
    CU_ASSERT_EQUAL(ping_config(&cfg), STORE_OK);
    snprintf(url, sizeof url, "redis://nobody@127.0.0.1:%d", server.port); /* the user is sent */
    cfg = config_for(url);
    cfg.password = password;
    CU_ASSERT_EQUAL(ping_config(&cfg), STORE_EUNAVAILABLE);
    snprintf(url, sizeof url, "redis://:apart%%2540p%%40ss@127.0.0.1:%d", server.port); /* the URL's, decoded */
    CU_ASSERT_EQUAL(ping_url(url), STORE_OK);
    cfg = config_for(url);
    cfg.password = "wrong";
    CU_ASSERT_EQUAL(ping_config(&cfg), STORE_EUNAVAILABLE);
    CU_ASSERT_FATAL(set_password(password, ""));
}

/* Writes length bytes to dir/name; the path goes to path. */
static bool write_file(const char *dir, const char *name, const char *bytes, size_t length, char *path, size_t size)
{
    snprintf(path, size, "%s/%s", dir, name);
    FILE *f = fopen(path, "wb");
    bool ok = f && fwrite(bytes, 1, length, f) == length;
    if (f)
        ok = fclose(f) == 0 && ok;
    return ok;
}

static void test_a_password_file_is_used_with_one_trailing_newline_dropped(void)
{
    char dir[] = "/tmp/chessd-password-XXXXXX";
    CU_ASSERT_FATAL(mkdtemp(dir) != NULL);
    CU_ASSERT_FATAL(set_password(NULL, decoded_password));
    char url[160], path[256];
    snprintf(url, sizeof url, "redis://:wrong@127.0.0.1:%d", server.port);
    static const struct {
        const char *name, *suffix;
        store_status_t want;
    } files[] = {
        { "plain", "", STORE_OK },
        { "newline", "\n", STORE_OK },
        { "crlf", "\r\n", STORE_OK },
        { "two-newlines", "\n\n", STORE_EUNAVAILABLE }, /* the password then ends with a newline */
        { "space", " ", STORE_EUNAVAILABLE },
    };
    for (size_t i = 0; i < sizeof files / sizeof files[0]; i++) {
        char bytes[64];
        int n = snprintf(bytes, sizeof bytes, "%s%s", decoded_password, files[i].suffix);
        CU_ASSERT_FATAL(write_file(dir, files[i].name, bytes, (size_t)n, path, sizeof path));
        store_config_t cfg = config_for(url);
        cfg.password_file = path;
        store_status_t status = ping_config(&cfg);
        if (status != files[i].want)
            fprintf(stderr, "\npassword file '%s': %s, not %s\n", files[i].name, store_status_name(status),
                    store_status_name(files[i].want));
        CU_ASSERT_EQUAL(status, files[i].want);
        unlink(path);
    }
    CU_ASSERT_FATAL(set_password(decoded_password, ""));
    rmdir(dir);
}

static void test_a_password_file_that_cannot_be_used_refuses_to_open_naming_the_file(void)
{
    char dir[] = "/tmp/chessd-password-XXXXXX";
    CU_ASSERT_FATAL(mkdtemp(dir) != NULL);
    char path[256];
    static char long_file[1100];
    memset(long_file, 'S', sizeof long_file);
    static const struct {
        const char *name, *bytes;
        size_t length;
        const char *says;
    } files[] = {
        { "empty", "", 0, "is empty" },
        { "only-a-newline", "\n", 1, "is empty" },
        { "nul", "SeCrEt\0tail", 11, "NUL" },
        { "too-long", long_file, sizeof long_file, "more than 1023 bytes" },
    };
    for (size_t i = 0; i < sizeof files / sizeof files[0]; i++) {
        CU_ASSERT_FATAL(write_file(dir, files[i].name, files[i].bytes, files[i].length, path, sizeof path));
        store_config_t cfg = config_for("redis://127.0.0.1:6379");
        cfg.password_file = path;
        expect_refused(&cfg, files[i].length > 6 ? "SeCrEt" : NULL, files[i].says);
        expect_refused(&cfg, files[i].length > 6 ? "SSSSSSSS" : NULL, path);
        unlink(path);
    }
    store_config_t cfg = config_for("redis://127.0.0.1:6379");
    snprintf(path, sizeof path, "%s/missing", dir);
    cfg.password_file = path;
    expect_refused(&cfg, NULL, "No such file");
    expect_refused(&cfg, NULL, path);
    cfg.password_file = dir; /* a directory */
    expect_refused(&cfg, NULL, dir);
    CU_ASSERT_FATAL(write_file(dir, "fine", "SeCrEt", 6, path, sizeof path));
    cfg.password_file = path;
    cfg.password = "SeCrEt";
    expect_refused(&cfg, "SeCrEt", "both given");
    unlink(path);
    rmdir(dir);
}

int test_store_redis_register(void)
{
    CU_pSuite suite = CU_add_suite("store_redis", suite_init, suite_cleanup);
    if (!suite)
        return CU_get_error();
    CU_ADD_TEST(suite, test_create_with_expected_version_0_makes_version_1);
    CU_ADD_TEST(suite, test_second_create_of_the_same_id_is_exists);
    CU_ADD_TEST(suite, test_a_webhook_done_reads_the_next_event_and_a_settle_writes_every_line);
    CU_ADD_TEST(suite, test_load_returns_the_state_byte_for_byte_and_the_version);
    CU_ADD_TEST(suite, test_load_of_an_unknown_id_is_not_found_and_leaves_nothing_to_free);
    CU_ADD_TEST(suite, test_write_with_the_expected_version_bumps_it);
    CU_ADD_TEST(suite, test_stale_expected_version_is_conflict_and_changes_nothing);
    CU_ADD_TEST(suite, test_write_to_a_missing_id_is_not_found_and_creates_nothing);
    CU_ADD_TEST(suite, test_a_creations_meta_text_is_read_by_full_loads_only_and_no_change_moves_it);
    CU_ADD_TEST(suite, test_appended_moves_and_history_accumulate_and_a_load_returns_the_last_hlen_entries);
    CU_ADD_TEST(suite, test_keep_leaves_the_move_list_and_history_and_sets_the_count);
    CU_ADD_TEST(suite, test_set_replaces_the_move_list_and_history);
    CU_ADD_TEST(suite, test_truncate_cuts_the_move_list_and_history_to_the_bytes_kept);
    CU_ADD_TEST(suite, test_truncate_of_a_game_without_a_move_list_leaves_it_empty);
    CU_ADD_TEST(suite, test_a_record_of_the_first_format_loads_as_legacy);
    CU_ADD_TEST(suite, test_a_record_of_the_first_format_without_version_or_data_is_corrupt);
    CU_ADD_TEST(suite, test_replaces_legacy_compares_the_old_version_and_deletes_the_old_key_in_the_same_write);
    CU_ADD_TEST(suite, test_a_write_naming_another_write_id_is_a_conflict_and_changes_nothing);
    CU_ADD_TEST(suite, test_a_record_saved_by_the_first_format_converts_in_one_write);
    CU_ADD_TEST(suite, test_a_load_marks_players_seen_and_a_write_its_mover);
    CU_ADD_TEST(suite, test_a_claim_is_late_once_the_absent_player_is_seen_again);
    CU_ADD_TEST(suite, test_ttl_sets_an_expiry_on_every_key_of_the_game_and_ttl_0_removes_it);
    CU_ADD_TEST(suite, test_idempotent_write_keeps_its_answer_and_replays_it_for_any_version);
    CU_ADD_TEST(suite, test_kept_answers_in_a_bounded_scope_drop_the_oldest);
    CU_ADD_TEST(suite, test_idempotent_create_replays_without_creating_a_second_game);
    CU_ADD_TEST(suite, test_idempotency_get_of_an_unknown_key_is_not_found);
    CU_ADD_TEST(suite, test_idempotency_scope_separates_equal_keys);
    CU_ADD_TEST(suite, test_refused_write_keeps_no_idempotency_answer);
    CU_ADD_TEST(suite, test_idempotency_answer_has_its_ttl_and_the_client_key_is_hashed);
    CU_ADD_TEST(suite, test_flushed_script_cache_is_reloaded_by_the_next_write);
    CU_ADD_TEST(suite, test_write_over_a_value_the_store_did_not_write_is_corrupt_not_unavailable);
    CU_ADD_TEST(suite, test_write_over_a_move_list_or_history_the_store_did_not_write_is_corrupt_and_changes_nothing);
    CU_ADD_TEST(suite, test_a_game_that_lost_a_key_is_damaged_on_load_and_write_and_changes_nothing);
    CU_ADD_TEST(suite, test_write_whose_list_of_kept_answers_is_not_a_list_is_corrupt_and_changes_nothing);
    CU_ADD_TEST(suite, test_load_of_a_game_hash_with_a_bad_hlen_or_version_or_without_state_is_corrupt);
    CU_ADD_TEST(suite, test_load_of_a_move_list_or_history_the_store_did_not_write_is_corrupt);
    CU_ADD_TEST(suite, test_idempotency_ttl_0_never_half_applies_a_write);
    CU_ADD_TEST(suite, test_long_ids_and_scopes_never_share_a_record);
    CU_ADD_TEST(suite, test_32_threads_writing_the_same_version_make_exactly_one_winner);
    CU_ADD_TEST(suite, test_each_thread_has_its_own_connection_closed_when_the_thread_exits);
    CU_ADD_TEST(suite, test_bad_url_is_refused_by_store_open_with_a_message);
    CU_ADD_TEST(suite, test_store_open_makes_no_connection_and_a_dead_port_is_unavailable);
    CU_ADD_TEST(suite, test_connect_that_is_never_answered_gives_up_within_the_connect_timeout);
    CU_ADD_TEST(suite, test_breaker_fails_at_once_after_a_timeout_until_a_probe_sees_redis_again);
    CU_ADD_TEST(suite, test_breaker_lets_commands_try_a_node_that_refused_and_uses_it_once_it_listens);
    CU_ADD_TEST(suite, test_breaker_names_a_refused_connection_and_a_silent_listener);
    CU_ADD_TEST(suite, test_breaker_names_a_refused_password_as_a_setting_without_showing_it);
    CU_ADD_TEST(suite, test_cluster_seeds_that_never_answer_are_unavailable_within_the_command_budget);
    CU_ADD_TEST(suite, test_cluster_url_to_a_redis_without_cluster_logs_why_it_is_unavailable);
    CU_ADD_TEST(suite, test_url_with_a_host_name_is_resolved);
    CU_ADD_TEST(suite, test_url_with_password_and_database_is_used);
    CU_ADD_TEST(suite, test_url_user_and_password_are_percent_decoded);
    CU_ADD_TEST(suite, test_a_malformed_escape_or_a_nul_refuses_the_url_and_the_reason_holds_no_password);
    CU_ADD_TEST(suite, test_a_password_given_apart_replaces_the_urls_as_it_is);
    CU_ADD_TEST(suite, test_a_password_file_is_used_with_one_trailing_newline_dropped);
    CU_ADD_TEST(suite, test_a_password_file_that_cannot_be_used_refuses_to_open_naming_the_file);
    CU_ADD_TEST(suite, test_password_with_an_at_sign_is_used_whole);
    CU_ADD_TEST(suite, test_restarted_redis_fails_at_most_one_call_then_writes_again);
    CU_ADD_TEST(suite, test_stopped_redis_is_unavailable_promptly_and_the_next_start_works);
    CU_ADD_TEST(suite, test_paused_redis_is_unavailable_within_the_command_timeout_and_works_after);
    CU_ADD_TEST(suite, test_fibers_on_one_thread_wait_on_redis_at_once_each_on_its_own_connection);
    CU_ADD_TEST(suite, test_fibers_waiting_on_a_frozen_redis_end_at_their_own_deadlines_and_the_loop_runs_on);
    CU_ADD_TEST(suite, test_a_fiber_reaches_redis_by_a_name_resolved_off_its_thread);
    CU_ADD_TEST(suite, test_write_to_a_redis_out_of_memory_is_full_and_writes_nothing);
    CU_ADD_TEST(suite, test_resend_after_a_lost_reply_finding_its_own_version_is_unknown_not_conflict);
    CU_ADD_TEST(suite, test_resend_after_a_lost_reply_that_is_refused_is_unknown_not_unavailable);
    return CUE_SUCCESS;
}
