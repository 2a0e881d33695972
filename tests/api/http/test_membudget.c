/* Tests for api/http/membudget.c: the process-wide count, the limit a new
 * reader is refused at, and shedding, as membudget_shed promises it. The
 * reader with the most bytes times time waited goes first, only as many go
 * as bring the total within the limit, and one with nothing waiting never
 * does. The budget is the process's: each test leaves it as it found it. */
#include <string.h>
#include <time.h>

#include "../../../api/http/membudget.h"
#include "../../support/tests.h"

typedef struct {
    membudget_reader_t reader;
    size_t charged;
    int closes;
} fake_t;

/* A reader's close: drops what it holds, as a stream's does. */
static void fake_close(void *arg)
{
    fake_t *f = arg;
    f->closes++;
    membudget_track(&f->reader, &f->charged, 0);
}

static void pause_ms(long ms)
{
    struct timespec t = { 0, ms * 1000000L };
    nanosleep(&t, NULL);
}

static void fake_start(fake_t *f, size_t bytes, bool waiting)
{
    memset(f, 0, sizeof *f);
    membudget_track(&f->reader, &f->charged, bytes);
    if (waiting)
        membudget_waiting(&f->reader);
    membudget_register(&f->reader, fake_close, f);
}

static void fake_end(fake_t *f)
{
    membudget_unregister(&f->reader);
    membudget_track(&f->reader, &f->charged, 0);
}

static void test_a_new_reader_is_refused_at_the_limit_and_the_count_follows_every_change(void)
{
    size_t before = membudget_used();
    membudget_set_limit(before + 1000);
    fake_t a;
    fake_start(&a, 600, true);
    CU_ASSERT_EQUAL(membudget_used(), before + 600);
    CU_ASSERT_FALSE(membudget_full());
    membudget_track(&a.reader, &a.charged, 1000);
    CU_ASSERT(membudget_full());
    CU_ASSERT_FALSE(membudget_over());
    membudget_track(&a.reader, &a.charged, 1001);
    CU_ASSERT(membudget_over());
    fake_end(&a);
    CU_ASSERT_EQUAL(membudget_used(), before);
    membudget_set_limit(0);
    CU_ASSERT_FALSE(membudget_full());
}

static void test_past_the_limit_the_reader_waiting_longest_goes_first_and_only_as_many_as_needed(void)
{
    size_t before = membudget_used();
    membudget_set_limit(before + 2500);
    fake_t oldest, newer, reading;
    fake_start(&oldest, 1000, true);
    pause_ms(30);
    fake_start(&newer, 1000, true);
    fake_start(&reading, 1000, false); /* as much, but its client takes all it is sent */
    CU_ASSERT_EQUAL(membudget_shed(), 1);
    CU_ASSERT_EQUAL(oldest.closes, 1);
    CU_ASSERT_EQUAL(newer.closes, 0);
    CU_ASSERT_EQUAL(reading.closes, 0);
    CU_ASSERT_FALSE(membudget_over());
    CU_ASSERT_EQUAL(membudget_shed(), 0); /* within the limit: nothing more */
    fake_end(&oldest);
    fake_end(&newer);
    fake_end(&reading);
    membudget_set_limit(0);
}

static void test_more_bytes_outweigh_a_little_more_time(void)
{
    size_t before = membudget_used();
    membudget_set_limit(before + 3000);
    fake_t small, big;
    fake_start(&small, 100, true);
    pause_ms(20);
    fake_start(&big, 3000, true);
    pause_ms(20); /* big: 30 times the bytes, half the time */
    CU_ASSERT_EQUAL(membudget_shed(), 1);
    CU_ASSERT_EQUAL(big.closes, 1);
    CU_ASSERT_EQUAL(small.closes, 0);
    fake_end(&small);
    fake_end(&big);
    membudget_set_limit(0);
}

static void test_a_reader_that_has_drained_or_unregistered_is_never_shed(void)
{
    size_t before = membudget_used();
    membudget_set_limit(before + 10);
    fake_t drained, gone;
    fake_start(&drained, 500, true);
    membudget_drained(&drained.reader);
    fake_start(&gone, 500, true);
    membudget_unregister(&gone.reader);
    CU_ASSERT_EQUAL(membudget_shed(), 0);
    CU_ASSERT_EQUAL(drained.closes + gone.closes, 0);
    fake_end(&drained);
    fake_end(&gone);
    membudget_set_limit(0);
}

int test_membudget_register(void)
{
    CU_pSuite suite = CU_add_suite("membudget", NULL, NULL);
    if (!suite)
        return CU_get_error();
    CU_add_test(suite, "a new reader is refused at the limit and the count follows every change",
                test_a_new_reader_is_refused_at_the_limit_and_the_count_follows_every_change);
    CU_add_test(suite, "past the limit the reader waiting longest goes first and only as many as needed",
                test_past_the_limit_the_reader_waiting_longest_goes_first_and_only_as_many_as_needed);
    CU_add_test(suite, "more bytes outweigh a little more time", test_more_bytes_outweigh_a_little_more_time);
    CU_add_test(suite, "a reader that has drained or unregistered is never shed",
                test_a_reader_that_has_drained_or_unregistered_is_never_shed);
    return CUE_SUCCESS;
}
