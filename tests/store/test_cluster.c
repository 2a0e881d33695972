/* Tests for store/cluster.c. Suite "cluster rules": hash slots of the
 * documented examples, MOVED/ASK texts and CLUSTER SLOTS replies built by
 * hand, good and malformed. Suite "cluster live": the same functions against
 * a real 3-master, 3-replica cluster (tests/support/redis_cluster.c), its
 * redirections, a failover and a crashed master. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../store/cluster.h"
#include "../support/redis_cluster.h"
#include "../support/tests.h"

static unsigned slot_of(const char *key) { return cluster_key_slot(key, strlen(key)); }

/* ---- hash slots ---- */

static void test_slot_is_crc16_xmodem_of_the_key_mod_16384(void)
{
    /* The check value of CRC16/XMODEM ("123456789" -> 0x31c3) and Redis's documented CLUSTER KEYSLOT answers. */
    CU_ASSERT_EQUAL(slot_of("123456789"), 0x31c3);
    CU_ASSERT_EQUAL(slot_of(""), 0);
    CU_ASSERT_EQUAL(slot_of("somekey"), 11058);
    CU_ASSERT_EQUAL(slot_of("foo"), 12182);
    CU_ASSERT_EQUAL(slot_of("bar"), 5061);
}

/* A fitted tail gives any slot asked, for texts of any prefix, in one
 * lookup, and changes nothing but the last three characters. */
static void test_fit_slot_reaches_every_asked_slot(void)
{
    static const char alphabet[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
    char text[17];
    unsigned fitted = 0;
    for (unsigned slot = 0; slot < CLUSTER_SLOT_COUNT; slot += 7) {
        snprintf(text, sizeof text, "q%07uXYZabAAA", slot * 2654435761u % 10000000u);
        char before[17];
        memcpy(before, text, sizeof before);
        if (cluster_fit_slot(text, 16, alphabet, slot)) {
            fitted++;
            CU_ASSERT_EQUAL(slot_of(text), slot);
            CU_ASSERT_EQUAL(memcmp(text, before, 13), 0);
            CU_ASSERT_PTR_NOT_NULL(strchr(alphabet, text[15]));
        }
    }
    CU_ASSERT_EQUAL(fitted, (CLUSTER_SLOT_COUNT + 6) / 7);
    CU_ASSERT_FALSE(cluster_fit_slot(text, 2, alphabet, 5));
    CU_ASSERT_FALSE(cluster_fit_slot(text, 16, alphabet, CLUSTER_SLOT_COUNT));
}

static void test_documented_hash_tag_examples(void)
{
    /* https://redis.io/docs/reference/cluster-spec/#hash-tags */
    CU_ASSERT_EQUAL(slot_of("{user1000}.following"), 3443);
    CU_ASSERT_EQUAL(slot_of("{user1000}.following"), slot_of("user1000"));
    CU_ASSERT_EQUAL(slot_of("{user1000}.followers"), slot_of("user1000"));
    CU_ASSERT_EQUAL(slot_of("foo{}{bar}"), 8363); /* the whole key: an empty first tag is no tag */
    CU_ASSERT_EQUAL(slot_of("foo{{bar}}zap"), 4015);
    CU_ASSERT_EQUAL(slot_of("foo{{bar}}zap"), slot_of("{bar"));
    CU_ASSERT_EQUAL(slot_of("foo{bar}{zap}"), 5061);
    CU_ASSERT_EQUAL(slot_of("foo{bar}{zap}"), slot_of("bar"));
    CU_ASSERT_EQUAL(slot_of("chessd:game:{abc}"), slot_of("abc"));
    CU_ASSERT_EQUAL(slot_of("chessd:moves:{abc}"), slot_of("chessd:history:{abc}"));
}

static void test_slot_without_a_closing_brace_or_with_an_empty_tag_hashes_the_whole_key(void)
{
    CU_ASSERT_NOT_EQUAL(slot_of("{abc"), slot_of("abc"));
    CU_ASSERT_NOT_EQUAL(slot_of("a}b{c"), slot_of("c"));
    /* Only the first '{' counts: "{}x{y}" has an empty first tag, so no tag at all. */
    CU_ASSERT_EQUAL(slot_of("{}x{y}"), 2166);
    CU_ASSERT_NOT_EQUAL(slot_of("{}x{y}"), slot_of("y"));
}

static void test_slot_reads_the_length_given_and_is_binary_safe(void)
{
    const char key[] = "{a\0b}c";
    CU_ASSERT_EQUAL(cluster_key_slot(key, 6), cluster_key_slot("a\0b", 3));
    CU_ASSERT_NOT_EQUAL(cluster_key_slot("a\0b", 3), slot_of("a"));
    /* The brace past the length is not seen: "{ab" hashed whole. */
    CU_ASSERT_EQUAL(cluster_key_slot("{ab}", 3), cluster_key_slot("{ab", 3));
    CU_ASSERT_EQUAL(cluster_key_slot(NULL, 0), 0);
    const char high[] = { '\xff', '{', '\x80', '}', 0 };
    CU_ASSERT_EQUAL(cluster_key_slot(high, 4), cluster_key_slot("\x80", 1));
    CU_ASSERT(cluster_key_slot(high, 4) < CLUSTER_SLOT_COUNT);
}

/* ---- redirections ---- */

static bool redirect(const char *text, cluster_redirect_t *out) { return cluster_parse_redirect(text, strlen(text), out); }

static void test_moved_and_ask_give_kind_slot_host_and_port(void)
{
    cluster_redirect_t r;
    CU_ASSERT_FATAL(redirect("MOVED 3999 127.0.0.1:6381", &r));
    CU_ASSERT_EQUAL(r.kind, CLUSTER_REDIRECT_MOVED);
    CU_ASSERT_EQUAL(r.slot, 3999);
    CU_ASSERT_STRING_EQUAL(r.node.host, "127.0.0.1");
    CU_ASSERT_EQUAL(r.node.port, 6381);
    CU_ASSERT_FATAL(redirect("ASK 0 redis-0.redis.default.svc.cluster.local:1", &r));
    CU_ASSERT_EQUAL(r.kind, CLUSTER_REDIRECT_ASK);
    CU_ASSERT_EQUAL(r.slot, 0);
    CU_ASSERT_STRING_EQUAL(r.node.host, "redis-0.redis.default.svc.cluster.local");
    CU_ASSERT_EQUAL(r.node.port, 1);
    CU_ASSERT_FATAL(redirect("MOVED 16383 h:65535", &r));
    CU_ASSERT_EQUAL(r.slot, 16383);
    CU_ASSERT_EQUAL(r.node.port, 65535);
}

static void test_redirect_to_an_ipv6_host_splits_at_the_last_colon(void)
{
    cluster_redirect_t r;
    CU_ASSERT_FATAL(redirect("MOVED 12 ::1:7000", &r));
    CU_ASSERT_STRING_EQUAL(r.node.host, "::1");
    CU_ASSERT_EQUAL(r.node.port, 7000);
    CU_ASSERT_FATAL(redirect("ASK 5 2001:db8::a:b:6379", &r));
    CU_ASSERT_STRING_EQUAL(r.node.host, "2001:db8::a:b");
    CU_ASSERT_EQUAL(r.node.port, 6379);
    CU_ASSERT_FATAL(redirect("MOVED 5 fe80::1%eth0:6379", &r));
    CU_ASSERT_STRING_EQUAL(r.node.host, "fe80::1%eth0");
}

static void test_redirect_with_an_empty_or_unknown_host_means_the_host_asked(void)
{
    cluster_redirect_t r;
    CU_ASSERT_FATAL(redirect("MOVED 7 :30001", &r));
    CU_ASSERT_STRING_EQUAL(r.node.host, "");
    CU_ASSERT_EQUAL(r.node.port, 30001);
    /* "?" is what a node preferring host names writes for a node without one. */
    CU_ASSERT_FATAL(redirect("ASK 7 ?:30002", &r));
    CU_ASSERT_STRING_EQUAL(r.node.host, "");
    CU_ASSERT_EQUAL(r.node.port, 30002);
}

static void test_redirect_host_of_255_bytes_is_kept_and_256_refused(void)
{
    char text[400], host[300];
    memset(host, 'h', 255);
    host[255] = '\0';
    snprintf(text, sizeof text, "MOVED 1 %s:80", host);
    cluster_redirect_t r;
    CU_ASSERT_FATAL(redirect(text, &r));
    CU_ASSERT_STRING_EQUAL(r.node.host, host);
    host[255] = 'h';
    host[256] = '\0';
    snprintf(text, sizeof text, "MOVED 1 %s:80", host);
    CU_ASSERT_FALSE(redirect(text, &r));
}

static void test_redirect_reads_only_the_length_given(void)
{
    cluster_redirect_t r;
    const char *text = "MOVED 1 h:6379trailing";
    CU_ASSERT_FATAL(cluster_parse_redirect(text, 14, &r));
    CU_ASSERT_EQUAL(r.node.port, 6379);
    CU_ASSERT_FATAL(cluster_parse_redirect(text, 12, &r));
    CU_ASSERT_EQUAL(r.node.port, 63);
    CU_ASSERT_FALSE(cluster_parse_redirect(text, 10, &r)); /* "MOVED 1 h:" */
    const char unterminated[] = { 'A', 'S', 'K', ' ', '2', ' ', 'h', ':', '9' };
    CU_ASSERT_FATAL(cluster_parse_redirect(unterminated, sizeof unterminated, &r));
    CU_ASSERT_EQUAL(r.node.port, 9);
}

static void test_malformed_redirects_are_refused_and_leave_out_untouched(void)
{
    static const char *const bad[] = {
        "", "MOVED", "MOVED ", "MOVED 1", "MOVED 1 ", "MOVED 1 h", "MOVED 1 h:", "MOVED 1 :",
        "ASK", "ASK 1", "ASK 1 h", "moved 1 h:1", "Moved 1 h:1", "MOVEDX 1 h:1", "MOVED1 h:1",
        "-MOVED 1 h:1", " MOVED 1 h:1", "MOVED  1 h:1", "MOVED 1  h:1", "MOVED 1 h:1 ", "MOVED 1 h:1\r\n",
        "MOVED 1 h:1 extra", "MOVED 16384 h:1", "MOVED 99999 h:1", "MOVED 123456 h:1", "MOVED -1 h:1",
        "MOVED +1 h:1", "MOVED 1x h:1", "MOVED x h:1", "MOVED 0x10 h:1", "MOVED 1 h:0", "MOVED 1 h:65536",
        "MOVED 1 h:99999999999999999999", "MOVED 1 h:-1", "MOVED 1 h:+1", "MOVED 1 h:1x", "MOVED 1 h:x",
        "MOVED 1 h: 1", "MOVED 1 [::1]:6379", "MOVED 1 h\tx:1", "MOVED 1 h\x7f:1", "MOVED 1 h\xc3\xa9:1",
        "TRYAGAIN Multiple keys request during rehashing of slot", "CLUSTERDOWN The cluster is down",
        "ERR unknown command", "ASKING", "MOVED\t1 h:1",
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        cluster_redirect_t r = { .kind = CLUSTER_REDIRECT_ASK, .slot = 77, .node = { "keep", 5 } };
        bool parsed = redirect(bad[i], &r);
        if (parsed)
            fprintf(stderr, "\naccepted: \"%s\"\n", bad[i]);
        CU_ASSERT_FALSE(parsed);
        CU_ASSERT_EQUAL(r.slot, 77);
        CU_ASSERT_STRING_EQUAL(r.node.host, "keep");
    }
    cluster_redirect_t r;
    const char nul_in_host[] = "MOVED 1 a\0b:6379";
    CU_ASSERT_FALSE(cluster_parse_redirect(nul_in_host, sizeof nul_in_host - 1, &r));
    const char nul_in_slot[] = "MOVED 1\0 h:6379";
    CU_ASSERT_FALSE(cluster_parse_redirect(nul_in_slot, sizeof nul_in_slot - 1, &r));
    CU_ASSERT_FALSE(cluster_parse_redirect(NULL, 0, &r));
    CU_ASSERT_FALSE(cluster_parse_redirect("MOVED 1 h:1", 11, NULL));
}

/* ---- CLUSTER SLOTS replies built by hand ---- */

enum { POOL_SIZE = 4096, CHILDREN_SIZE = 8192 };
static redisReply pool[POOL_SIZE];
static redisReply *children[CHILDREN_SIZE];
static size_t pool_used, children_used;
static char long_host[300];

static void pool_reset(void) { pool_used = children_used = 0; }

static redisReply *reply_new(int type)
{
    CU_ASSERT_FATAL(pool_used < POOL_SIZE);
    redisReply *r = &pool[pool_used++];
    memset(r, 0, sizeof *r);
    r->type = type;
    return r;
}

static redisReply *r_int(long long value)
{
    redisReply *r = reply_new(REDIS_REPLY_INTEGER);
    r->integer = value;
    return r;
}

static redisReply *r_bytes(int type, const char *bytes, size_t length)
{
    redisReply *r = reply_new(type);
    r->str = (char *)bytes;
    r->len = length;
    return r;
}

static redisReply *r_str(const char *text) { return r_bytes(REDIS_REPLY_STRING, text, strlen(text)); }

/* An array of n elements, filled later (element[i] NULL until then). */
static redisReply *r_array_of(size_t n)
{
    CU_ASSERT_FATAL(children_used + n <= CHILDREN_SIZE);
    redisReply *r = reply_new(REDIS_REPLY_ARRAY);
    r->elements = n;
    r->element = &children[children_used];
    memset(r->element, 0, n * sizeof *r->element);
    children_used += n;
    return r;
}

static redisReply *r_arr(size_t n, ...)
{
    redisReply *r = r_array_of(n);
    va_list args;
    va_start(args, n);
    for (size_t i = 0; i < n; i++)
        r->element[i] = va_arg(args, redisReply *);
    va_end(args);
    return r;
}

/* [host, port, id] as Redis 6 writes a node; host NULL for a nil host. */
static redisReply *node(const char *host, long long port)
{
    redisReply *h = host ? r_str(host) : reply_new(REDIS_REPLY_NIL);
    return r_arr(3, h, r_int(port), r_str("0123456789012345678901234567890123456789"));
}

static redisReply *range(long long start, long long end, redisReply *master)
{
    return r_arr(3, r_int(start), r_int(end), master);
}

static cluster_map_t map;

static bool map_from(const redisReply *reply, const char *asked_host, char *err, size_t err_size)
{
    return cluster_map_from_slots(reply, asked_host, &map, err, err_size);
}

static void test_slots_map_each_range_to_its_master_and_masters_are_deduplicated(void)
{
    pool_reset();
    /* Out of slot order, a master serving two ranges, replicas with Redis 7's metadata. */
    redisReply *reply = r_arr(3,
        r_arr(4, r_int(100), r_int(199), node("10.0.0.2", 7001),
              r_arr(4, r_str("10.0.0.5"), r_int(7005), r_str("id5"), r_arr(2, r_str("hostname"), r_str("r5")))),
        range(0, 99, r_arr(4, r_str("10.0.0.1"), r_int(7000), r_str("id1"), r_arr(0))),
        range(200, 16383, node("10.0.0.1", 7000)));
    char err[256] = "unset";
    CU_ASSERT_FATAL(map_from(reply, "seed", err, sizeof err));
    CU_ASSERT_STRING_EQUAL(err, "");
    CU_ASSERT_EQUAL_FATAL(map.node_count, 2);
    CU_ASSERT_STRING_EQUAL(map.nodes[0].host, "10.0.0.2");
    CU_ASSERT_EQUAL(map.nodes[0].port, 7001);
    CU_ASSERT_STRING_EQUAL(map.nodes[1].host, "10.0.0.1");
    CU_ASSERT_EQUAL(map.nodes[1].port, 7000);
    CU_ASSERT_EQUAL(map.slot_node[0], 1);
    CU_ASSERT_EQUAL(map.slot_node[99], 1);
    CU_ASSERT_EQUAL(map.slot_node[100], 0);
    CU_ASSERT_EQUAL(map.slot_node[199], 0);
    CU_ASSERT_EQUAL(map.slot_node[200], 1);
    CU_ASSERT_EQUAL(map.slot_node[16383], 1);
    CU_ASSERT_EQUAL(cluster_map_find(&map, "10.0.0.1", 7000), 1);
    CU_ASSERT_EQUAL(cluster_map_find(&map, "10.0.0.2", 7001), 0);
    CU_ASSERT_EQUAL(cluster_map_find(&map, "10.0.0.1", 7001), CLUSTER_NO_NODE);
    CU_ASSERT_EQUAL(cluster_map_find(&map, "10.0.0.5", 7005), CLUSTER_NO_NODE); /* a replica */
    CU_ASSERT_EQUAL(cluster_map_find(&map, NULL, 7000), CLUSTER_NO_NODE);
}

static void test_slots_covering_part_of_the_space_leave_the_rest_to_no_node(void)
{
    pool_reset();
    CU_ASSERT_FATAL(map_from(r_arr(1, range(5, 5, node("h", 1))), "seed", NULL, 0));
    CU_ASSERT_EQUAL(map.node_count, 1);
    CU_ASSERT_EQUAL(map.slot_node[4], CLUSTER_NO_NODE);
    CU_ASSERT_EQUAL(map.slot_node[5], 0);
    CU_ASSERT_EQUAL(map.slot_node[6], CLUSTER_NO_NODE);
    CU_ASSERT_FATAL(map_from(r_arr(0), "seed", NULL, 0));
    CU_ASSERT_EQUAL(map.node_count, 0);
    CU_ASSERT_EQUAL(map.slot_node[0], CLUSTER_NO_NODE);
    CU_ASSERT_EQUAL(map.slot_node[16383], CLUSTER_NO_NODE);
}

static void test_slots_master_with_an_empty_unknown_or_nil_host_is_the_asked_host(void)
{
    pool_reset();
    redisReply *reply = r_arr(3, range(0, 9, node("", 7000)), range(10, 19, node("?", 7001)),
                              range(20, 29, node(NULL, 7002)));
    CU_ASSERT_FATAL(map_from(reply, "seed.example", NULL, 0));
    CU_ASSERT_EQUAL_FATAL(map.node_count, 3);
    for (unsigned i = 0; i < 3; i++) {
        CU_ASSERT_STRING_EQUAL(map.nodes[i].host, "seed.example");
        CU_ASSERT_EQUAL(map.nodes[i].port, 7000 + (int)i);
    }
    /* The asked host and the same host named outright are one master. */
    pool_reset();
    reply = r_arr(2, range(0, 9, node("", 7000)), range(10, 19, node("10.1.1.1", 7000)));
    CU_ASSERT_FATAL(map_from(reply, "10.1.1.1", NULL, 0));
    CU_ASSERT_EQUAL(map.node_count, 1);
    CU_ASSERT_FATAL(map_from(reply, NULL, NULL, 0));
    CU_ASSERT_EQUAL(map.node_count, 2);
    CU_ASSERT_STRING_EQUAL(map.nodes[0].host, "");
}

static void test_slots_with_256_masters_fit_and_257_are_refused(void)
{
    for (unsigned count = 256; count <= 257; count++) {
        pool_reset();
        redisReply *reply = r_array_of(count);
        for (unsigned i = 0; i < count; i++)
            reply->element[i] = range(i * 10, i * 10 + 9, node("h", 10000 + i));
        char err[256] = "";
        bool parsed = map_from(reply, "seed", err, sizeof err);
        CU_ASSERT_EQUAL(parsed, count == 256);
        CU_ASSERT_EQUAL(map.node_count, count == 256 ? 256 : 0);
        if (count == 256) {
            CU_ASSERT_EQUAL(map.slot_node[2559], 255);
        } else {
            CU_ASSERT_PTR_NOT_NULL(strstr(err, "more masters"));
        }
    }
}

typedef redisReply *(*build_fn)(void);

static redisReply *not_an_array(void) { return r_str("0 16383 127.0.0.1 7000"); }
static redisReply *an_error(void) { return r_bytes(REDIS_REPLY_ERROR, "ERR This instance has cluster support disabled", 46); }
static redisReply *a_nil(void) { return reply_new(REDIS_REPLY_NIL); }
static redisReply *an_integer(void) { return r_int(0); }
static redisReply *a_status(void) { return r_bytes(REDIS_REPLY_STATUS, "OK", 2); }
static redisReply *range_not_an_array(void) { return r_arr(1, r_int(0)); }
static redisReply *range_null(void) { return r_array_of(1); }
static redisReply *range_without_node(void) { return r_arr(1, r_arr(2, r_int(0), r_int(10))); }
static redisReply *start_as_string(void) { return r_arr(1, r_arr(3, r_str("0"), r_int(10), node("h", 1))); }
static redisReply *end_as_nil(void) { return r_arr(1, r_arr(3, r_int(0), reply_new(REDIS_REPLY_NIL), node("h", 1))); }
static redisReply *start_negative(void) { return r_arr(1, range(-1, 10, node("h", 1))); }
static redisReply *end_past_the_last_slot(void) { return r_arr(1, range(0, 16384, node("h", 1))); }
static redisReply *start_huge(void) { return r_arr(1, range(1LL << 40, 16383, node("h", 1))); }
static redisReply *start_after_end(void) { return r_arr(1, range(100, 99, node("h", 1))); }
static redisReply *ranges_overlap(void) { return r_arr(2, range(0, 100, node("a", 1)), range(100, 200, node("b", 1))); }
static redisReply *same_range_twice(void) { return r_arr(2, range(0, 100, node("a", 1)), range(0, 100, node("a", 1))); }
static redisReply *master_not_an_array(void) { return r_arr(1, range(0, 10, r_str("127.0.0.1"))); }
static redisReply *master_null(void) { return r_arr(1, range(0, 10, NULL)); }
static redisReply *master_without_port(void) { return r_arr(1, range(0, 10, r_arr(1, r_str("h")))); }
static redisReply *master_host_integer(void) { return r_arr(1, range(0, 10, r_arr(2, r_int(1), r_int(7000)))); }
static redisReply *master_host_status(void)
{
    return r_arr(1, range(0, 10, r_arr(2, r_bytes(REDIS_REPLY_STATUS, "h", 1), r_int(7000))));
}
static redisReply *master_port_string(void) { return r_arr(1, range(0, 10, r_arr(2, r_str("h"), r_str("7000")))); }
static redisReply *master_port_0(void) { return r_arr(1, range(0, 10, node("h", 0))); }
static redisReply *master_port_65536(void) { return r_arr(1, range(0, 10, node("h", 65536))); }
static redisReply *master_port_negative(void) { return r_arr(1, range(0, 10, node("h", -7000))); }
static redisReply *master_host_256_bytes(void) { return r_arr(1, range(0, 10, node(long_host, 7000))); }
static redisReply *master_host_with_a_space(void) { return r_arr(1, range(0, 10, node("a b", 7000))); }
static redisReply *master_host_with_a_nul(void)
{
    return r_arr(1, range(0, 10, r_arr(2, r_bytes(REDIS_REPLY_STRING, "a\0b", 3), r_int(7000))));
}
static redisReply *master_host_in_brackets(void) { return r_arr(1, range(0, 10, node("[::1]", 7000))); }
static redisReply *replica_not_an_array(void) { return r_arr(1, r_arr(4, r_int(0), r_int(10), node("h", 1), r_int(5))); }
static redisReply *replica_port_0(void) { return r_arr(1, r_arr(4, r_int(0), r_int(10), node("h", 1), node("r", 0))); }
static redisReply *second_range_bad(void) { return r_arr(2, range(0, 10, node("h", 1)), r_arr(1, r_int(11))); }

static void test_malformed_slots_replies_are_refused_with_a_reason_and_an_empty_map(void)
{
    memset(long_host, 'h', 256);
    long_host[256] = '\0';
    static const struct {
        const char *name;
        build_fn build;
    } cases[] = {
        { "not an array", not_an_array }, { "an error", an_error }, { "a nil", a_nil },
        { "an integer", an_integer }, { "a status", a_status }, { "range not an array", range_not_an_array },
        { "range null", range_null }, { "range without node", range_without_node },
        { "start as string", start_as_string }, { "end as nil", end_as_nil }, { "start negative", start_negative },
        { "end past the last slot", end_past_the_last_slot }, { "start huge", start_huge },
        { "start after end", start_after_end }, { "ranges overlap", ranges_overlap },
        { "same range twice", same_range_twice }, { "master not an array", master_not_an_array },
        { "master null", master_null }, { "master without port", master_without_port },
        { "master host integer", master_host_integer }, { "master host status", master_host_status },
        { "master port string", master_port_string }, { "master port 0", master_port_0 },
        { "master port 65536", master_port_65536 }, { "master port negative", master_port_negative },
        { "master host 256 bytes", master_host_256_bytes }, { "master host with a space", master_host_with_a_space },
        { "master host with a NUL", master_host_with_a_nul }, { "master host in brackets", master_host_in_brackets },
        { "replica not an array", replica_not_an_array }, { "replica port 0", replica_port_0 },
        { "second range bad", second_range_bad },
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        /* A map left full by a good reply first: a refusal must empty it. */
        pool_reset();
        CU_ASSERT_FATAL(map_from(r_arr(1, range(0, 16383, node("h", 1))), "seed", NULL, 0));
        pool_reset();
        char err[256] = "";
        bool parsed = map_from(cases[i].build(), "seed", err, sizeof err);
        if (parsed || !err[0])
            fprintf(stderr, "\ncase \"%s\": parsed %d, err \"%s\"\n", cases[i].name, parsed, err);
        CU_ASSERT_FALSE(parsed);
        CU_ASSERT(err[0] != '\0');
        CU_ASSERT_EQUAL(map.node_count, 0);
        CU_ASSERT_EQUAL(map.slot_node[0], CLUSTER_NO_NODE);
        CU_ASSERT_EQUAL(map.slot_node[16383], CLUSTER_NO_NODE);
    }
    pool_reset();
    char err[256];
    CU_ASSERT_FALSE(map_from(NULL, "seed", err, sizeof err));
    CU_ASSERT_FALSE(map_from(an_error(), "seed", err, sizeof err));
    CU_ASSERT_PTR_NOT_NULL(strstr(err, "cluster support disabled"));
    CU_ASSERT_FALSE(map_from(start_after_end(), "seed", err, 8)); /* a short err buffer is cut, not overrun */
    CU_ASSERT_EQUAL(strlen(err), 7);
    CU_ASSERT_FALSE(map_from(start_after_end(), "seed", NULL, 0));
    CU_ASSERT_FALSE(cluster_map_from_slots(r_arr(0), "seed", NULL, err, sizeof err));
}

/* ---- against a real cluster ---- */

static redis_cluster_t cluster;

static int live_init(void)
{
    redis_cluster_options_t options = { .masters = 3, .replicas_per_master = 1, .node_timeout_ms = 1000 };
    long start = tests_monotonic_ms();
    if (!redis_cluster_start(&cluster, &options)) {
        fprintf(stderr, "\ncluster live suite: cannot start a 3+3 Redis Cluster: %s\n", cluster.error);
        return 1;
    }
    if (getenv("CHESSD_TEST_TIMINGS"))
        fprintf(stderr, "\ncluster of 6 nodes ready in %ld ms\n", tests_monotonic_ms() - start);
    return 0;
}

static int live_cleanup(void)
{
    redis_cluster_stop(&cluster);
    return 0;
}

/* The first running node's index. */
static unsigned any_node(void)
{
    for (unsigned i = 0; i < cluster.node_count; i++) {
        if (cluster.nodes[i].server.pid)
            return i;
    }
    CU_FAIL_FATAL("no running node");
    return 0;
}

static uint64_t rng_state = 0x2545f4914f6cdd1dULL;

static uint64_t rng(void)
{
    rng_state ^= rng_state << 13;
    rng_state ^= rng_state >> 7;
    rng_state ^= rng_state << 17;
    return rng_state;
}

/* A random key into key (size >= 6000): bytes drawn mostly from braces, NUL,
 * high bytes and a few letters, in shapes that exercise the tag rule. */
static size_t random_key(char *key)
{
    static const char alphabet[] = { '{', '}', '{', '}', 'a', 'b', 'x', '\0', '\xff', '\x80', ':', '\n' };
    uint64_t kind = rng() % 10;
    size_t length = kind == 0 ? 1000 + rng() % 5000 : rng() % 24;
    for (size_t i = 0; i < length; i++)
        key[i] = rng() % 4 == 0 ? (char)(rng() & 0xff) : alphabet[rng() % sizeof alphabet];
    if (kind == 1 && length >= 4) { /* nested: "{{...}}" somewhere */
        size_t at = rng() % (length - 3);
        memcpy(key + at, "{{", 2);
        key[length - 1] = '}';
        key[length - 2] = '}';
    }
    if (kind == 2 && length >= 2) { /* an empty tag first */
        size_t at = rng() % (length - 1);
        memcpy(key + at, "{}", 2);
    }
    return length;
}

static void test_slot_of_4000_random_keys_matches_cluster_keyslot(void)
{
    enum { KEYS = 4000 };
    redisContext *c = redis_server_connect(&cluster.nodes[any_node()].server, NULL);
    CU_ASSERT_PTR_NOT_NULL_FATAL(c);
    static char keys[KEYS][6000];
    static size_t lengths[KEYS];
    for (int i = 0; i < KEYS; i++) {
        lengths[i] = random_key(keys[i]);
        CU_ASSERT_EQUAL_FATAL(redisAppendCommand(c, "CLUSTER KEYSLOT %b", keys[i], lengths[i]), REDIS_OK);
    }
    int mismatches = 0, with_tag = 0;
    for (int i = 0; i < KEYS; i++) {
        void *reply = NULL;
        CU_ASSERT_EQUAL_FATAL(redisGetReply(c, &reply), REDIS_OK);
        redisReply *r = reply;
        CU_ASSERT_EQUAL_FATAL(r->type, REDIS_REPLY_INTEGER);
        unsigned ours = cluster_key_slot(keys[i], lengths[i]);
        if ((long long)ours != r->integer && mismatches++ < 5)
            fprintf(stderr, "\nkey %d (%zu bytes): ours %u, redis %lld\n", i, lengths[i], ours, r->integer);
        if (memchr(keys[i], '{', lengths[i]))
            with_tag++;
        freeReplyObject(r);
    }
    redisFree(c);
    CU_ASSERT_EQUAL(mismatches, 0);
    CU_ASSERT(with_tag > KEYS / 2); /* most keys have a '{' */
}

static void test_documented_examples_match_cluster_keyslot(void)
{
    static const char *const keys[] = {
        "{user1000}.following", "{user1000}.followers", "foo{}{bar}", "foo{{bar}}zap", "foo{bar}{zap}",
        "", "{", "}", "{}", "}{", "{{}}", "{a}", "a{b}c{d}", "123456789", "chessd:game:{x}",
    };
    for (size_t i = 0; i < sizeof keys / sizeof keys[0]; i++) {
        redisReply *r = redis_cluster_command(&cluster, any_node(), "CLUSTER KEYSLOT %b", keys[i], strlen(keys[i]));
        CU_ASSERT_PTR_NOT_NULL_FATAL(r);
        CU_ASSERT_EQUAL(r->type, REDIS_REPLY_INTEGER);
        CU_ASSERT_EQUAL(r->integer, (long long)slot_of(keys[i]));
        freeReplyObject(r);
    }
}

/* The map read from node `index`'s CLUSTER SLOTS, asked as asked_host. */
static bool live_map(unsigned index, const char *asked_host)
{
    redisReply *r = redis_cluster_command(&cluster, index, "CLUSTER SLOTS");
    CU_ASSERT_PTR_NOT_NULL_FATAL(r);
    char err[256] = "";
    bool ok = cluster_map_from_slots(r, asked_host, &map, err, sizeof err);
    if (!ok)
        fprintf(stderr, "\nCLUSTER SLOTS of node %u refused: %s\n", index, err);
    freeReplyObject(r);
    return ok;
}

/* Asserts that map gives every slot to the master CLUSTER NODES of node `index` names. */
static void assert_map_matches_cluster_nodes(unsigned index)
{
    static int owners[CLUSTER_SLOT_COUNT];
    CU_ASSERT_FATAL(redis_cluster_slot_owners(&cluster, index, owners));
    int mismatches = 0;
    for (int s = 0; s < CLUSTER_SLOT_COUNT; s++) {
        unsigned n = map.slot_node[s];
        int port = n == CLUSTER_NO_NODE ? 0 : map.nodes[n].port;
        if (port != owners[s] && mismatches++ < 3)
            fprintf(stderr, "\nslot %d: CLUSTER SLOTS says %d, CLUSTER NODES %d\n", s, port, owners[s]);
    }
    CU_ASSERT_EQUAL(mismatches, 0);
}

static void test_cluster_slots_of_every_node_maps_every_slot_to_one_of_3_masters_as_cluster_nodes_says(void)
{
    for (unsigned i = 0; i < cluster.node_count; i++) {
        CU_ASSERT_FATAL(live_map(i, "127.0.0.1"));
        CU_ASSERT_EQUAL(map.node_count, 3);
        int unmapped = 0;
        for (int s = 0; s < CLUSTER_SLOT_COUNT; s++)
            unmapped += map.slot_node[s] == CLUSTER_NO_NODE;
        CU_ASSERT_EQUAL(unmapped, 0);
        for (unsigned n = 0; n < map.node_count; n++) {
            CU_ASSERT_STRING_EQUAL(map.nodes[n].host, "127.0.0.1");
            int index = redis_cluster_find_port(&cluster, map.nodes[n].port);
            CU_ASSERT_FATAL(index >= 0);
            CU_ASSERT(cluster.nodes[index].master);
        }
        assert_map_matches_cluster_nodes(i);
    }
}

/* The index of a node that does not serve `slot` by map. */
static unsigned node_not_serving(unsigned slot)
{
    for (unsigned i = 0; i < cluster.node_count; i++) {
        if (cluster.nodes[i].server.pid && cluster.nodes[i].master
            && map.nodes[map.slot_node[slot]].port != cluster.nodes[i].server.port)
            return i;
    }
    CU_FAIL_FATAL("every master serves the slot");
    return 0;
}

static void test_moved_from_a_real_node_names_the_slot_and_its_master(void)
{
    CU_ASSERT_FATAL(live_map(any_node(), "127.0.0.1"));
    static const char *const keys[] = { "foo", "chessd:game:{abc}", "{user1000}.following", "x" };
    for (size_t i = 0; i < sizeof keys / sizeof keys[0]; i++) {
        unsigned slot = slot_of(keys[i]);
        redisReply *r = redis_cluster_command(&cluster, node_not_serving(slot), "GET %s", keys[i]);
        CU_ASSERT_PTR_NOT_NULL_FATAL(r);
        CU_ASSERT_EQUAL_FATAL(r->type, REDIS_REPLY_ERROR);
        cluster_redirect_t redirect;
        CU_ASSERT_FATAL(cluster_parse_redirect(r->str, r->len, &redirect));
        CU_ASSERT_EQUAL(redirect.kind, CLUSTER_REDIRECT_MOVED);
        CU_ASSERT_EQUAL(redirect.slot, slot);
        CU_ASSERT_STRING_EQUAL(redirect.node.host, "127.0.0.1");
        CU_ASSERT_EQUAL(cluster_map_find(&map, redirect.node.host, redirect.node.port), map.slot_node[slot]);
        freeReplyObject(r);
    }
}

/* Runs a command on node index and asserts a status reply. */
static void ok_on(unsigned index, const char *format, ...)
{
    redisContext *c = redis_server_connect(&cluster.nodes[index].server, NULL);
    CU_ASSERT_PTR_NOT_NULL_FATAL(c);
    va_list args;
    va_start(args, format);
    redisReply *r = redisvCommand(c, format, args);
    va_end(args);
    if (!r || r->type != REDIS_REPLY_STATUS)
        fprintf(stderr, "\n%s on node %u: %s\n", format, index, r && r->str ? r->str : "no reply");
    CU_ASSERT(r && r->type == REDIS_REPLY_STATUS);
    if (r)
        freeReplyObject(r);
    redisFree(c);
}

static void test_ask_during_a_migration_names_the_slot_and_the_importing_node(void)
{
    CU_ASSERT_FATAL(live_map(any_node(), "127.0.0.1"));
    const char *key = "chessd:game:{ask-test}";
    unsigned slot = slot_of(key);
    int source = redis_cluster_find_port(&cluster, map.nodes[map.slot_node[slot]].port);
    CU_ASSERT_FATAL(source >= 0);
    unsigned target = node_not_serving(slot);
    ok_on(target, "CLUSTER SETSLOT %u IMPORTING %s", slot, cluster.nodes[source].id);
    ok_on((unsigned)source, "CLUSTER SETSLOT %u MIGRATING %s", slot, cluster.nodes[target].id);
    redisReply *r = redis_cluster_command(&cluster, (unsigned)source, "GET %s", key);
    CU_ASSERT_PTR_NOT_NULL_FATAL(r);
    cluster_redirect_t redirect = { 0 };
    CU_ASSERT(r->type == REDIS_REPLY_ERROR && cluster_parse_redirect(r->str, r->len, &redirect));
    CU_ASSERT_EQUAL(redirect.kind, CLUSTER_REDIRECT_ASK);
    CU_ASSERT_EQUAL(redirect.slot, slot);
    CU_ASSERT_STRING_EQUAL(redirect.node.host, "127.0.0.1");
    CU_ASSERT_EQUAL(redirect.node.port, cluster.nodes[target].server.port);
    freeReplyObject(r);
    /* While the slot migrates, CLUSTER SLOTS still names its owner. */
    CU_ASSERT(live_map(target, "127.0.0.1"));
    CU_ASSERT_EQUAL(map.nodes[map.slot_node[slot]].port, cluster.nodes[source].server.port);
    ok_on((unsigned)source, "CLUSTER SETSLOT %u STABLE", slot);
    ok_on(target, "CLUSTER SETSLOT %u STABLE", slot);
}

static void test_unknown_endpoints_give_an_empty_host_and_the_map_uses_the_asked_host(void)
{
    static const char *const types[] = { "unknown-endpoint", "hostname" };
    unsigned asked = any_node();
    for (size_t t = 0; t < 2; t++) {
        ok_on(asked, "CONFIG SET cluster-preferred-endpoint-type %s", types[t]);
        /* unknown-endpoint: nil hosts; hostname without names: "?". */
        CU_ASSERT(live_map(asked, "seed.example"));
        CU_ASSERT_EQUAL(map.node_count, 3);
        for (unsigned n = 0; n < map.node_count; n++)
            CU_ASSERT_STRING_EQUAL(map.nodes[n].host, "seed.example");
        unsigned slot = 0;
        while (map.slot_node[slot] == CLUSTER_NO_NODE
               || map.nodes[map.slot_node[slot]].port == cluster.nodes[asked].server.port)
            slot++;
        char key[32];
        for (int i = 0;; i++) { /* a key of that slot */
            snprintf(key, sizeof key, "k%d", i);
            if (slot_of(key) == slot)
                break;
        }
        redisReply *r = redis_cluster_command(&cluster, asked, "GET %s", key);
        CU_ASSERT_PTR_NOT_NULL_FATAL(r);
        cluster_redirect_t redirect = { 0 };
        CU_ASSERT(r->type == REDIS_REPLY_ERROR && cluster_parse_redirect(r->str, r->len, &redirect));
        if (r->type == REDIS_REPLY_ERROR && getenv("CHESSD_TEST_TIMINGS"))
            fprintf(stderr, "\n%s: %s\n", types[t], r->str);
        CU_ASSERT_STRING_EQUAL(redirect.node.host, "");
        CU_ASSERT_EQUAL(redirect.node.port, map.nodes[map.slot_node[slot]].port);
        freeReplyObject(r);
    }
    ok_on(asked, "CONFIG SET cluster-preferred-endpoint-type ip");
}

static void test_failover_moves_the_slots_of_a_master_to_its_replica(void)
{
    int replica = -1;
    for (unsigned i = 0; i < cluster.node_count && replica < 0; i++) {
        if (!cluster.nodes[i].master && cluster.nodes[i].master_index >= 0)
            replica = (int)i;
    }
    CU_ASSERT_FATAL(replica >= 0);
    int old_master = cluster.nodes[replica].master_index;
    CU_ASSERT_FATAL(live_map(any_node(), "127.0.0.1"));
    unsigned old_index = cluster_map_find(&map, "127.0.0.1", cluster.nodes[old_master].server.port);
    CU_ASSERT_FATAL(old_index != CLUSTER_NO_NODE);
    unsigned slot = 0;
    while (map.slot_node[slot] != old_index)
        slot++;
    long start = tests_monotonic_ms();
    bool ok = redis_cluster_failover(&cluster, (unsigned)replica, 15000);
    if (!ok)
        fprintf(stderr, "\n%s\n", cluster.error);
    CU_ASSERT_FATAL(ok);
    if (getenv("CHESSD_TEST_TIMINGS"))
        fprintf(stderr, "\nfailover in %ld ms\n", tests_monotonic_ms() - start);
    CU_ASSERT(cluster.nodes[replica].master);
    CU_ASSERT_FALSE(cluster.nodes[old_master].master);
    CU_ASSERT_EQUAL(cluster.nodes[old_master].master_index, replica);
    for (unsigned i = 0; i < cluster.node_count; i++) {
        CU_ASSERT_FATAL(live_map(i, "127.0.0.1"));
        CU_ASSERT_EQUAL(map.node_count, 3);
        CU_ASSERT_EQUAL(map.nodes[map.slot_node[slot]].port, cluster.nodes[replica].server.port);
        CU_ASSERT_EQUAL(cluster_map_find(&map, "127.0.0.1", cluster.nodes[old_master].server.port), CLUSTER_NO_NODE);
        assert_map_matches_cluster_nodes(i);
    }
}

static void test_crashed_master_is_replaced_by_its_replica_in_the_map_and_the_url(void)
{
    int victim = -1;
    for (unsigned i = 0; i < cluster.node_count && victim < 0; i++) {
        if (cluster.nodes[i].master)
            victim = (int)i;
    }
    CU_ASSERT_FATAL(victim >= 0);
    int heir = -1;
    for (unsigned i = 0; i < cluster.node_count; i++) {
        if (cluster.nodes[i].master_index == victim)
            heir = (int)i;
    }
    CU_ASSERT_FATAL(heir >= 0);
    int victim_port = cluster.nodes[victim].server.port;
    long start = tests_monotonic_ms();
    redis_cluster_kill(&cluster, (unsigned)victim);
    bool ok = redis_cluster_wait_ok(&cluster, 20000);
    if (!ok)
        fprintf(stderr, "\n%s\n", cluster.error);
    CU_ASSERT_FATAL(ok);
    if (getenv("CHESSD_TEST_TIMINGS"))
        fprintf(stderr, "\nreplica took over a killed master in %ld ms\n", tests_monotonic_ms() - start);
    CU_ASSERT(cluster.nodes[heir].master);
    CU_ASSERT_FATAL(live_map(any_node(), "127.0.0.1"));
    CU_ASSERT_EQUAL(map.node_count, 3);
    CU_ASSERT_EQUAL(cluster_map_find(&map, "127.0.0.1", victim_port), CLUSTER_NO_NODE);
    CU_ASSERT(cluster_map_find(&map, "127.0.0.1", cluster.nodes[heir].server.port) != CLUSTER_NO_NODE);
    char url[512], victim_text[32];
    redis_cluster_url(&cluster, url, sizeof url);
    snprintf(victim_text, sizeof victim_text, ":%d", victim_port);
    CU_ASSERT_EQUAL(strncmp(url, "redis+cluster://127.0.0.1:", 26), 0);
    CU_ASSERT_PTR_NULL(strstr(url, victim_text));
    int commas = 0;
    for (const char *p = url; *p; p++)
        commas += *p == ',';
    CU_ASSERT_EQUAL(commas, 2);
}

int test_cluster_register(void)
{
    CU_pSuite rules = CU_add_suite("cluster rules", NULL, NULL);
    if (!rules)
        return CU_get_error();
    CU_ADD_TEST(rules, test_slot_is_crc16_xmodem_of_the_key_mod_16384);
    CU_ADD_TEST(rules, test_documented_hash_tag_examples);
    CU_ADD_TEST(rules, test_fit_slot_reaches_every_asked_slot);
    CU_ADD_TEST(rules, test_slot_without_a_closing_brace_or_with_an_empty_tag_hashes_the_whole_key);
    CU_ADD_TEST(rules, test_slot_reads_the_length_given_and_is_binary_safe);
    CU_ADD_TEST(rules, test_moved_and_ask_give_kind_slot_host_and_port);
    CU_ADD_TEST(rules, test_redirect_to_an_ipv6_host_splits_at_the_last_colon);
    CU_ADD_TEST(rules, test_redirect_with_an_empty_or_unknown_host_means_the_host_asked);
    CU_ADD_TEST(rules, test_redirect_host_of_255_bytes_is_kept_and_256_refused);
    CU_ADD_TEST(rules, test_redirect_reads_only_the_length_given);
    CU_ADD_TEST(rules, test_malformed_redirects_are_refused_and_leave_out_untouched);
    CU_ADD_TEST(rules, test_slots_map_each_range_to_its_master_and_masters_are_deduplicated);
    CU_ADD_TEST(rules, test_slots_covering_part_of_the_space_leave_the_rest_to_no_node);
    CU_ADD_TEST(rules, test_slots_master_with_an_empty_unknown_or_nil_host_is_the_asked_host);
    CU_ADD_TEST(rules, test_slots_with_256_masters_fit_and_257_are_refused);
    CU_ADD_TEST(rules, test_malformed_slots_replies_are_refused_with_a_reason_and_an_empty_map);

    CU_pSuite live = CU_add_suite("cluster live", live_init, live_cleanup);
    if (!live)
        return CU_get_error();
    CU_ADD_TEST(live, test_slot_of_4000_random_keys_matches_cluster_keyslot);
    CU_ADD_TEST(live, test_documented_examples_match_cluster_keyslot);
    CU_ADD_TEST(live, test_cluster_slots_of_every_node_maps_every_slot_to_one_of_3_masters_as_cluster_nodes_says);
    CU_ADD_TEST(live, test_moved_from_a_real_node_names_the_slot_and_its_master);
    CU_ADD_TEST(live, test_ask_during_a_migration_names_the_slot_and_the_importing_node);
    CU_ADD_TEST(live, test_unknown_endpoints_give_an_empty_host_and_the_map_uses_the_asked_host);
    /* These two change the cluster: last. */
    CU_ADD_TEST(live, test_failover_moves_the_slots_of_a_master_to_its_replica);
    CU_ADD_TEST(live, test_crashed_master_is_replaced_by_its_replica_in_the_map_and_the_url);
    return CUE_SUCCESS;
}
