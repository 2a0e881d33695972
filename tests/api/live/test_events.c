/* Tests for the pure parts of api/live/events.c: how an event and a
 * heartbeat are framed in SSE and NDJSON, which Last-Event-ID values are
 * versions, and what a stream not under a hub reads (its first event, then
 * its end). The hub itself is tested over HTTP (tests/e2e/events.test.mjs);
 * its timer heap in test_timers.c. */
#include <stdlib.h>
#include <string.h>

#include "../../../api/live/events.h"
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
    return CU_get_error();
}
