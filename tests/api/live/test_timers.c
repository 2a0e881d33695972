/* Tests for api/live/timers.c, the event hub's timer heap: the earliest
 * armed entry against a sorted model under random arming, moving and
 * disarming, entries popped in order, and freeing the heap disarms what it
 * held. */
#include <stdint.h>
#include <string.h>

#include "../../../api/live/timers.h"
#include "../../support/tests.h"

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

int test_timers_register(void)
{
    CU_pSuite suite = CU_add_suite("timers", NULL, NULL);
    if (!suite)
        return CU_get_error();
    CU_add_test(suite, "the timer heap gives the earliest under random changes",
                test_the_timer_heap_gives_the_earliest_under_random_changes);
    CU_add_test(suite, "freeing the heap disarms what was armed", test_freeing_the_heap_disarms_what_was_armed);
    return CU_get_error();
}
