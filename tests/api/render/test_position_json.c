/* Tests for api/render/position_json.c, the position document written with
 * jsonw: with the k-th allocation failing, for every k, a full position is
 * the whole text or NULL, never part of it. */
#include <stdlib.h>
#include <string.h>

#include "../../../api/http/jsonw.h"
#include "../../../api/render/position_json.h"
#include "../../support/tests.h"

static void test_an_allocation_failure_anywhere_in_a_position_makes_finish_null(void)
{
    /* A full Position (Kiwipete, 48 legal moves) with the k-th allocation
     * failing: jsonw_finish gives the whole text or NULL, for every k. */
    position_t pos;
    tests_parse_fen("r3k2r/p1ppqpb1/bn2pnp1/3PN3/1p2P3/2N2Q1p/PPPBBPPP/R3K2R w KQkq - 0 1", &pos);
    status_t status;
    status_evaluate(&pos, NULL, 0, &status);
    jsonw_t w;
    jsonw_init(&w);
    position_json_write(&w, &pos, &status, NULL, true);
    size_t whole_length;
    char *whole = jsonw_finish(&w, &whole_length);
    CU_ASSERT_PTR_NOT_NULL_FATAL(whole);
    CU_ASSERT(whole_length > 4096); /* enough to grow a few times */
    int nulls = 0;
    for (long k = 0; k < 100; k++) {
        tests_fail_allocations_after(k);
        jsonw_init(&w);
        position_json_write(&w, &pos, &status, NULL, true);
        size_t length;
        char *text = jsonw_finish(&w, &length);
        bool failed = tests_allocation_calls() > k;
        tests_allocations_work();
        if (failed) {
            nulls++;
            CU_ASSERT_PTR_NULL(text);
        } else {
            CU_ASSERT_PTR_NOT_NULL_FATAL(text);
            CU_ASSERT_EQUAL(length, whole_length);
            CU_ASSERT_STRING_EQUAL(text, whole);
        }
        free(text);
        if (!failed)
            break;
    }
    CU_ASSERT(nulls >= 2);
    free(whole);
}

int test_position_json_register(void)
{
    CU_pSuite suite =
        CU_add_suite_with_setup_and_teardown("position_json", NULL, NULL, NULL, tests_allocations_work);
    if (!suite)
        return -1;
    CU_add_test(suite, "an allocation failure anywhere in a position makes finish NULL",
                test_an_allocation_failure_anywhere_in_a_position_makes_finish_null);
    return 0;
}
