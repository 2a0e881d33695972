/* Tests for api/http/buf.c: appends of every kind keep the text whole and
 * NUL-terminated across growth; a failed allocation or an overflowing size
 * fails the buffer for good (every later call a no-op, buf_finish NULL); and,
 * end to end, an allocation failure anywhere in an answer's text makes a 500
 * without a body, never a 200 with part of one. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "../../../api/http/buf.h"
#include "../../../api/app.h"
#include "../../../api/config.h"
#include "../../../api/http/request.h"
#include "../../../api/metrics.h"
#include "../../../api/routes.h"
#include "../../support/tests.h"

/* The byte at offset i of the test pattern. */
static char pattern(size_t i) { return (char)('a' + i % 23); }

static void test_appends_of_each_kind_are_kept_in_order(void)
{
    buf_t b;
    buf_init(&b);
    buf_append(&b, "ab\0c", 4); /* binary-safe */
    buf_puts(&b, "de");
    buf_putc(&b, 'f');
    buf_printf(&b, "%d-%s", 42, "g");
    CU_ASSERT_FALSE(buf_failed(&b));
    CU_ASSERT_EQUAL_FATAL(b.length, 11);
    CU_ASSERT_EQUAL(memcmp(b.data, "ab\0cdef42-g", 12), 0); /* the NUL after the text included */
    size_t length = 0;
    char *text = buf_finish(&b, &length);
    CU_ASSERT_EQUAL(length, 11);
    CU_ASSERT_PTR_NOT_NULL_FATAL(text);
    CU_ASSERT_EQUAL(memcmp(text, "ab\0cdef42-g", 12), 0);
    free(text);
    /* finishing leaves the buffer empty and ready for another text */
    CU_ASSERT_PTR_NULL(b.data);
    CU_ASSERT_EQUAL(b.length, 0);
    buf_puts(&b, "again");
    text = buf_finish(&b, NULL);
    CU_ASSERT_STRING_EQUAL(text, "again");
    free(text);
}

static void test_an_empty_buffer_finishes_as_an_empty_string(void)
{
    buf_t b;
    buf_init(&b);
    size_t length = 99;
    char *text = buf_finish(&b, &length);
    CU_ASSERT_PTR_NOT_NULL_FATAL(text); /* NULL means failure only */
    CU_ASSERT_STRING_EQUAL(text, "");
    CU_ASSERT_EQUAL(length, 0);
    free(text);
    buf_append(&b, "", 0);
    text = buf_finish(&b, &length);
    CU_ASSERT_STRING_EQUAL(text, "");
    free(text);
}

static void test_appends_of_every_size_survive_growth(void)
{
    /* Chunks of 0 to 700 bytes, so appends land on and around each
     * doubling; the whole text is checked after every append. */
    buf_t b;
    buf_init(&b);
    size_t total = 0;
    char chunk[701];
    for (size_t n = 0; n <= 700; n += 7) {
        for (size_t i = 0; i < n; i++)
            chunk[i] = pattern(total + i);
        buf_append(&b, chunk, n);
        total += n;
        CU_ASSERT_EQUAL_FATAL(b.length, total);
        CU_ASSERT_FATAL(b.capacity > b.length);
        CU_ASSERT_EQUAL_FATAL(b.data[total], '\0');
    }
    for (size_t i = 0; i < total; i++)
        if (b.data[i] != pattern(i)) {
            CU_FAIL("a byte changed as the buffer grew");
            break;
        }
    buf_free(&b);
    CU_ASSERT_PTR_NULL(b.data);
}

static void test_many_single_bytes_are_all_kept(void)
{
    buf_t b;
    buf_init(&b);
    enum { COUNT = 100000 };
    for (size_t i = 0; i < COUNT; i++)
        buf_putc(&b, pattern(i));
    CU_ASSERT_EQUAL_FATAL(b.length, COUNT);
    CU_ASSERT_EQUAL(strlen(b.data), COUNT);
    CU_ASSERT_EQUAL(b.data[0], pattern(0));
    CU_ASSERT_EQUAL(b.data[COUNT - 1], pattern(COUNT - 1));
    buf_free(&b);
}

static void test_printf_writes_long_texts_whole(void)
{
    enum { LONG = 20000 };
    char *s = malloc(LONG + 1);
    CU_ASSERT_PTR_NOT_NULL_FATAL(s);
    for (size_t i = 0; i < LONG; i++)
        s[i] = pattern(i);
    s[LONG] = '\0';
    buf_t b;
    buf_init(&b);
    buf_printf(&b, "<%s|%d>", s, -7);
    CU_ASSERT_EQUAL_FATAL(b.length, LONG + 5);
    CU_ASSERT_EQUAL(b.data[0], '<');
    CU_ASSERT_EQUAL(memcmp(b.data + 1, s, LONG), 0);
    CU_ASSERT_STRING_EQUAL(b.data + 1 + LONG, "|-7>");
    buf_free(&b);
    free(s);
}

static void test_printf_fits_exactly_at_every_room_left(void)
{
    /* Twenty bytes printed after 220 to 260 bytes already there: the text
     * fits, fits but for its NUL, or does not fit the room left, around the
     * first capacity; each must come out whole. */
    for (size_t before = 220; before <= 260; before++) {
        buf_t b;
        buf_init(&b);
        for (size_t i = 0; i < before; i++)
            buf_putc(&b, 'x');
        buf_printf(&b, "%s%08d", "0123456789ab", 12345678);
        CU_ASSERT_EQUAL_FATAL(b.length, before + 20);
        CU_ASSERT_STRING_EQUAL(b.data + before, "0123456789ab12345678");
        CU_ASSERT_EQUAL(b.data[before - 1], 'x');
        buf_free(&b);
    }
}

static void test_reserve_then_commit_writes_in_place(void)
{
    buf_t b;
    buf_init(&b);
    buf_puts(&b, "ab");
    CU_ASSERT_TRUE_FATAL(buf_reserve(&b, 1000));
    CU_ASSERT_TRUE(b.capacity >= b.length + 1001);
    char *before = b.data;
    memcpy(b.data + b.length, "cdef", 4);
    buf_commit(&b, 4);
    CU_ASSERT_STRING_EQUAL(b.data, "abcdef");
    for (int i = 0; i < 990; i++)
        buf_putc(&b, 'g');
    CU_ASSERT_PTR_EQUAL(b.data, before); /* reserved: no reallocation */
    buf_free(&b);
}

static void test_free_accepts_null_and_leaves_an_empty_buffer(void)
{
    buf_free(NULL);
    buf_t b;
    buf_init(&b);
    buf_free(&b); /* nothing allocated */
    buf_puts(&b, "x");
    buf_free(&b);
    CU_ASSERT_PTR_NULL(b.data);
    CU_ASSERT_EQUAL(b.length, 0);
    CU_ASSERT_EQUAL(b.capacity, 0);
    CU_ASSERT_FALSE(buf_failed(&b));
}

/* b has failed: every call must leave it as it is and finishing gives NULL,
 * even with allocations working again. */
static void check_failure_sticks(buf_t *b)
{
    tests_allocations_work();
    CU_ASSERT_TRUE(buf_failed(b));
    CU_ASSERT_PTR_NULL(b->data); /* what it held is freed at once */
    buf_append(b, "abc", 3);
    buf_puts(b, "def");
    buf_putc(b, 'g');
    buf_printf(b, "%s %d", "h", 1);
    CU_ASSERT_FALSE(buf_reserve(b, 1));
    buf_commit(b, 0);
    CU_ASSERT_PTR_NULL(b->data);
    CU_ASSERT_EQUAL(b->length, 0);
    CU_ASSERT_TRUE(buf_failed(b));
    size_t length = 123;
    CU_ASSERT_PTR_NULL(buf_finish(b, &length));
    CU_ASSERT_EQUAL(length, 0);
    /* finishing resets: the buffer can be used again */
    CU_ASSERT_FALSE(buf_failed(b));
    buf_puts(b, "new");
    char *text = buf_finish(b, NULL);
    CU_ASSERT_STRING_EQUAL(text, "new");
    free(text);
}

static void test_a_failed_first_allocation_sticks(void)
{
    buf_t b;
    buf_init(&b);
    tests_fail_allocations_after(0);
    buf_puts(&b, "hello");
    CU_ASSERT_EQUAL(tests_allocation_calls(), 1);
    check_failure_sticks(&b);
}

static void test_a_failed_growth_sticks_and_drops_what_was_written(void)
{
    buf_t b;
    buf_init(&b);
    tests_fail_allocations_after(1);
    buf_puts(&b, "kept until growth fails");
    CU_ASSERT_FALSE(buf_failed(&b));
    char big[1000];
    memset(big, 'z', sizeof big);
    buf_append(&b, big, sizeof big);
    CU_ASSERT_EQUAL(tests_allocation_calls(), 2);
    check_failure_sticks(&b);
}

static void test_a_failed_printf_growth_sticks(void)
{
    buf_t b;
    buf_init(&b);
    tests_fail_allocations_after(1);
    buf_printf(&b, "%d", 1);
    buf_printf(&b, "%0500d", 2);
    check_failure_sticks(&b);
}

static void test_a_failure_the_producer_declares_sticks(void)
{
    buf_t b;
    buf_init(&b);
    buf_puts(&b, "partial");
    buf_fail(&b);
    check_failure_sticks(&b);
}

static void test_sizes_that_would_wrap_fail_without_allocating(void)
{
    buf_t b;
    buf_init(&b);
    buf_puts(&b, "0123456789");
    tests_fail_allocations_after(0);
    CU_ASSERT_FALSE(buf_reserve(&b, SIZE_MAX - 10)); /* 10 + that + the NUL wraps */
    CU_ASSERT_EQUAL(tests_allocation_calls(), 0);
    check_failure_sticks(&b);

    /* The largest size that does not wrap is asked for as it is, never as a
     * wrapped or doubled-past-the-top smaller one. */
    buf_puts(&b, "0123456789");
    tests_fail_allocations_after(0);
    CU_ASSERT_FALSE(buf_reserve(&b, SIZE_MAX - 11));
    CU_ASSERT_EQUAL(tests_allocation_calls(), 1);
    CU_ASSERT_EQUAL(tests_last_allocation_size(), SIZE_MAX);
    check_failure_sticks(&b);
}

/* --- end to end: the answers built on buf --- */

static const char *accept_text(const void *source, const char *name)
{
    (void)source;
    return !strcasecmp(name, "Accept") ? "text/plain" : NULL;
}

/* Runs GET target through the router as the server would. */
static api_response_t answer(const char *target, bool text)
{
    static config_t cfg;
    static app_t app = { .config = &cfg };
    char err[256];
    CU_ASSERT_TRUE_FATAL(config_load(&cfg, 0, NULL, err, sizeof err));
    CU_ASSERT_TRUE_FATAL(routes_init());
    target_t parsed;
    api_request_t req = { .method = "GET", .path = parsed.path, .target = &parsed, .body = "",
                          .request_id = "test", .app = &app, .header = text ? accept_text : NULL };
    api_response_t res = { 0 };
    if (routes_parse_target(target, strlen(target), &parsed, &res))
        routes_dispatch(&req, &res);
    return res;
}

/* With the k-th allocation failing, for every k until none fails: the answer
 * is the whole 200 or a 500 with no body, never a 200 with part of it. */
static void check_never_truncated(const char *target, bool text)
{
    api_response_t whole = answer(target, text);
    CU_ASSERT_EQUAL_FATAL(whole.status, 200);
    CU_ASSERT_PTR_NOT_NULL_FATAL(whole.body);
    int failures = 0;
    for (long k = 0;; k++) {
        tests_fail_allocations_after(k);
        api_response_t res = answer(target, text);
        bool failed = tests_allocation_calls() > k;
        tests_allocations_work();
        if (failed) {
            failures++;
            CU_ASSERT_EQUAL(res.status, 500);
            CU_ASSERT_PTR_NULL(res.body);
            CU_ASSERT_EQUAL(res.body_length, 0);
        } else {
            CU_ASSERT_EQUAL(res.status, 200);
            CU_ASSERT_EQUAL_FATAL(res.body_length, whole.body_length);
            CU_ASSERT_EQUAL(memcmp(res.body, whole.body, whole.body_length), 0);
        }
        free(res.body);
        if (!failed || k > 1000)
            break;
    }
    CU_ASSERT(failures >= 1); /* the test made at least one answer fail */
    free(whole.body);
}

static void test_an_allocation_failure_in_a_position_is_a_500_never_a_truncated_200(void)
{
    const char *kiwipete = "/v1/position?fen=r3k2r/p1ppqpb1/bn2pnp1/3PN3/1p2P3/2N2Q1p/PPPBBPPP/R3K2R+w+KQkq+-+0+1";
    check_never_truncated(kiwipete, false);
    check_never_truncated(kiwipete, true);
}

static void test_an_allocation_failure_in_metrics_is_a_500_never_a_truncated_200(void)
{
    metrics_init(routes_count(), routes_name);
    metrics_request(0, 200, 10);
    check_never_truncated("/metrics", false);
}

static void test_a_problem_that_cannot_be_written_is_a_500_without_a_body(void)
{
    tests_fail_allocations_after(0);
    api_response_t res = answer("/no/such/path", false);
    tests_allocations_work();
    CU_ASSERT_EQUAL(res.status, 500); /* not the 404 it would have been */
    CU_ASSERT_PTR_NULL(res.body);
    free(res.body);
}

int test_buf_register(void)
{
    CU_pSuite suite = CU_add_suite_with_setup_and_teardown("buf", NULL, NULL, NULL, tests_allocations_work);
    if (!suite)
        return -1;
    CU_add_test(suite, "appends of each kind are kept in order", test_appends_of_each_kind_are_kept_in_order);
    CU_add_test(suite, "an empty buffer finishes as an empty string",
                test_an_empty_buffer_finishes_as_an_empty_string);
    CU_add_test(suite, "appends of every size survive growth", test_appends_of_every_size_survive_growth);
    CU_add_test(suite, "many single bytes are all kept", test_many_single_bytes_are_all_kept);
    CU_add_test(suite, "printf writes long texts whole", test_printf_writes_long_texts_whole);
    CU_add_test(suite, "printf fits exactly at every room left", test_printf_fits_exactly_at_every_room_left);
    CU_add_test(suite, "reserve then commit writes in place", test_reserve_then_commit_writes_in_place);
    CU_add_test(suite, "free accepts NULL and leaves an empty buffer",
                test_free_accepts_null_and_leaves_an_empty_buffer);
    CU_add_test(suite, "a failed first allocation sticks", test_a_failed_first_allocation_sticks);
    CU_add_test(suite, "a failed growth sticks and drops what was written",
                test_a_failed_growth_sticks_and_drops_what_was_written);
    CU_add_test(suite, "a failed printf growth sticks", test_a_failed_printf_growth_sticks);
    CU_add_test(suite, "a failure the producer declares sticks", test_a_failure_the_producer_declares_sticks);
    CU_add_test(suite, "sizes that would wrap fail without allocating",
                test_sizes_that_would_wrap_fail_without_allocating);
    CU_add_test(suite, "an allocation failure in a position is a 500, never a truncated 200",
                test_an_allocation_failure_in_a_position_is_a_500_never_a_truncated_200);
    CU_add_test(suite, "an allocation failure in metrics is a 500, never a truncated 200",
                test_an_allocation_failure_in_metrics_is_a_500_never_a_truncated_200);
    CU_add_test(suite, "a problem that cannot be written is a 500 without a body",
                test_a_problem_that_cannot_be_written_is_a_500_without_a_body);
    return 0;
}
