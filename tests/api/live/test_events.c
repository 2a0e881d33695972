/* Tests for the pure parts of api/live/events.c and api/live/timers.c: how an event
 * and a heartbeat are framed in SSE and NDJSON, which Last-Event-ID values
 * are versions, what a stream not under a hub reads (its first event, then
 * its end), and the timer heap against a sorted model under random arming,
 * moving and disarming. The hub itself is tested over HTTP
 * (tests/e2e/events.test.mjs). */
#include <stdlib.h>
#include <string.h>

#include "../../../api/live/events.h"
#include "../../../api/live/timers.h"
#include "../../support/tests.h"

static void expect_frame(events_format_t format, const char *type, uint64_t version, const char *json,
                         const char *want)
{
    buf_t b;
    buf_init(&b);
    events_frame(&b, format, type, version, json, strlen(json));
    CU_ASSERT_FALSE(buf_failed(&b));
    CU_ASSERT_STRING_EQUAL(b.data, want);
    buf_free(&b);
}

static void test_sse_events_carry_id_event_and_data_lines(void)
{
    expect_frame(EVENTS_SSE, "change", 7, "{\"v\":7}", "id: 7\nevent: change\ndata: {\"v\":7}\n\n");
    expect_frame(EVENTS_SSE, "game", 18014398509481984ull, "{}", "id: 18014398509481984\nevent: game\ndata: {}\n\n");
}

static void test_an_sse_event_without_a_version_has_no_id(void)
{
    expect_frame(EVENTS_SSE, "closing", 0, "{\"type\":\"closing\"}", "event: closing\ndata: {\"type\":\"closing\"}\n\n");
}

static void test_ndjson_events_are_one_line_each(void)
{
    expect_frame(EVENTS_NDJSON, "change", 3, "{\"v\":3}", "{\"v\":3}\n");
    expect_frame(EVENTS_NDJSON, "closing", 0, "{}", "{}\n");
}

static void test_heartbeats_are_a_comment_or_an_empty_line(void)
{
    buf_t b;
    buf_init(&b);
    events_frame_heartbeat(&b, EVENTS_SSE);
    CU_ASSERT_STRING_EQUAL(b.data, ": heartbeat\n\n");
    buf_free(&b);
    events_frame_heartbeat(&b, EVENTS_NDJSON);
    CU_ASSERT_STRING_EQUAL(b.data, "\n");
    buf_free(&b);
}

static void test_last_event_id_is_a_plain_decimal_version(void)
{
    uint64_t v = 99;
    CU_ASSERT_TRUE(events_last_event_id("1", &v));
    CU_ASSERT_EQUAL(v, 1);
    CU_ASSERT_TRUE(events_last_event_id("0", &v));
    CU_ASSERT_EQUAL(v, 0);
    CU_ASSERT_TRUE(events_last_event_id("9007199254740991", &v));
    CU_ASSERT_EQUAL(v, 9007199254740991ull);
    CU_ASSERT_TRUE(events_last_event_id("0012", &v));
    CU_ASSERT_EQUAL(v, 12);
    static const char *const refused[] = { "", " 1", "1 ", "+1", "-1", "1x", "0x10", "1.0", "9007199254740992",
                                           "99999999999999999999999", "18446744073709551617", "１" };
    for (size_t i = 0; i < sizeof refused / sizeof refused[0]; i++) {
        v = 42;
        CU_ASSERT_FALSE(events_last_event_id(refused[i], &v));
        CU_ASSERT_EQUAL(v, 42);
    }
    CU_ASSERT_FALSE(events_last_event_id(NULL, &v));
}

/* Reads everything a stream has now into out; returns the last read's result. */
static ssize_t read_all(events_stream_t *s, buf_t *out)
{
    char chunk[7]; /* small: reads that stop mid-event */
    ssize_t n;
    while ((n = events_stream_read(s, chunk, sizeof chunk)) > 0)
        buf_append(out, chunk, (size_t)n);
    return n;
}

static void test_a_finished_games_stream_reads_its_snapshot_then_ends(void)
{
    events_stream_t *s = events_stream_new(EVENTS_SSE, "AAAAAAAAAAAAAAAA", 4, "{\"type\":\"game\"}", 15, true);
    CU_ASSERT_PTR_NOT_NULL_FATAL(s);
    buf_t got;
    buf_init(&got);
    CU_ASSERT_EQUAL(read_all(s, &got), -1);
    CU_ASSERT_STRING_EQUAL(got.data, "id: 4\nevent: game\ndata: {\"type\":\"game\"}\n\n");
    CU_ASSERT_EQUAL(events_stream_read(s, (char[8]){ 0 }, 8), -1); /* and stays ended */
    buf_free(&got);
    events_stream_release(s);
}

static void test_a_stream_without_a_hub_cannot_wait(void)
{
    /* Nothing could ever wake it: an error, never a hang. */
    events_stream_t *s = events_stream_new(EVENTS_NDJSON, "AAAAAAAAAAAAAAAA", 1, "{}", 2, false);
    CU_ASSERT_PTR_NOT_NULL_FATAL(s);
    buf_t got;
    buf_init(&got);
    CU_ASSERT_EQUAL(read_all(s, &got), -2);
    CU_ASSERT_STRING_EQUAL(got.data, "{}\n");
    buf_free(&got);
    events_stream_release(s);
    /* No first event (the client had the version). */
    s = events_stream_new(EVENTS_SSE, "AAAAAAAAAAAAAAAA", 1, NULL, 0, true);
    CU_ASSERT_EQUAL(events_stream_read(s, (char[8]){ 0 }, 8), -1);
    events_stream_release(s);
    events_stream_release(NULL);
}

/* --- timers.c --- */

static uint64_t rng_state = 0x9e3779b97f4a7c15ull;
static uint64_t next_random(void)
{
    rng_state ^= rng_state << 13;
    rng_state ^= rng_state >> 7;
    rng_state ^= rng_state << 17;
    return rng_state;
}

enum { ENTRIES = 300, STEPS = 20000 };

static void test_the_timer_heap_gives_the_earliest_under_random_changes(void)
{
    timers_t heap;
    timers_init(&heap);
    static timers_entry_t entries[ENTRIES];
    memset(entries, 0, sizeof entries);
    for (int step = 0; step < STEPS; step++) {
        timers_entry_t *e = &entries[next_random() % ENTRIES];
        if (next_random() % 3 == 0) {
            timers_clear(&heap, e);
        } else {
            CU_ASSERT_TRUE(timers_set(&heap, e, next_random() % 1000));
        }
        /* The model: the armed entry with the least due time. */
        uint64_t least = UINT64_MAX;
        size_t armed = 0;
        for (int i = 0; i < ENTRIES; i++) {
            if (timers_armed(&entries[i])) {
                armed++;
                if (entries[i].when_us < least)
                    least = entries[i].when_us;
            }
        }
        CU_ASSERT_EQUAL_FATAL(heap.count, armed);
        timers_entry_t *first = timers_first(&heap);
        if (!armed) {
            CU_ASSERT_PTR_NULL(first);
        } else {
            CU_ASSERT_EQUAL_FATAL(first->when_us, least);
        }
    }
    /* Popping everything comes out in order. */
    uint64_t last = 0;
    for (timers_entry_t *e; (e = timers_first(&heap));) {
        CU_ASSERT_TRUE(e->when_us >= last);
        last = e->when_us;
        timers_clear(&heap, e);
        CU_ASSERT_FALSE(timers_armed(e));
    }
    timers_free(&heap);
}

static void test_freeing_the_heap_disarms_what_was_armed(void)
{
    timers_t heap;
    timers_init(&heap);
    timers_entry_t a = { 0 }, b = { 0 };
    CU_ASSERT_TRUE(timers_set(&heap, &a, 5));
    CU_ASSERT_TRUE(timers_set(&heap, &b, 3));
    CU_ASSERT_PTR_EQUAL(timers_first(&heap), &b);
    CU_ASSERT_TRUE(timers_set(&heap, &b, 9)); /* moved later */
    CU_ASSERT_PTR_EQUAL(timers_first(&heap), &a);
    timers_clear(&heap, &b);
    timers_clear(&heap, &b); /* twice is nothing */
    timers_free(&heap);
    CU_ASSERT_FALSE(timers_armed(&a));
    CU_ASSERT_PTR_NULL(timers_first(&heap));
}

int test_events_register(void)
{
    CU_pSuite suite = CU_add_suite("events", NULL, NULL);
    if (!suite)
        return CU_get_error();
    CU_add_test(suite, "SSE events carry id, event and data lines", test_sse_events_carry_id_event_and_data_lines);
    CU_add_test(suite, "an SSE event without a version has no id", test_an_sse_event_without_a_version_has_no_id);
    CU_add_test(suite, "NDJSON events are one line each", test_ndjson_events_are_one_line_each);
    CU_add_test(suite, "heartbeats are a comment or an empty line", test_heartbeats_are_a_comment_or_an_empty_line);
    CU_add_test(suite, "Last-Event-ID is a plain decimal version", test_last_event_id_is_a_plain_decimal_version);
    CU_add_test(suite, "a finished game's stream reads its snapshot then ends",
                test_a_finished_games_stream_reads_its_snapshot_then_ends);
    CU_add_test(suite, "a stream without a hub cannot wait", test_a_stream_without_a_hub_cannot_wait);
    CU_add_test(suite, "the timer heap gives the earliest under random changes",
                test_the_timer_heap_gives_the_earliest_under_random_changes);
    CU_add_test(suite, "freeing the heap disarms what was armed", test_freeing_the_heap_disarms_what_was_armed);
    return CU_get_error();
}
