/* Tests for api/http/request.c's reading of the Prefer header (RFC 7240): the wait a
 * client asks for, among other preferences and parameters, capped, and
 * nothing for whatever is not a non-negative integer wait. */
#include "../../../api/http/request.h"
#include "../../support/tests.h"

static void test_prefer_wait_is_read_among_other_preferences(void)
{
    CU_ASSERT_EQUAL(api_prefer_wait("wait=10", 60), 10);
    CU_ASSERT_EQUAL(api_prefer_wait("WAIT=10", 60), 10);
    CU_ASSERT_EQUAL(api_prefer_wait("respond-async, wait=5", 60), 5);
    CU_ASSERT_EQUAL(api_prefer_wait("handling=lenient,wait=7,return=minimal", 60), 7);
    CU_ASSERT_EQUAL(api_prefer_wait(" wait = 8 ", 60), 8);
    CU_ASSERT_EQUAL(api_prefer_wait("wait=\"9\"", 60), 9);
    CU_ASSERT_EQUAL(api_prefer_wait("wait=3; foo=bar; baz", 60), 3);
    CU_ASSERT_EQUAL(api_prefer_wait("foo; wait=1, wait=4", 60), 4); /* a parameter of foo, then the wait */
    CU_ASSERT_EQUAL(api_prefer_wait("foo=\"a, wait=2\", wait=6", 60), 6); /* a comma inside quotes */
}

static void test_prefer_wait_is_capped_and_the_first_counts(void)
{
    CU_ASSERT_EQUAL(api_prefer_wait("wait=61", 60), 60);
    CU_ASSERT_EQUAL(api_prefer_wait("wait=999", 60), 60);
    CU_ASSERT_EQUAL(api_prefer_wait("wait=99999999999999999999999999", 60), 60);
    CU_ASSERT_EQUAL(api_prefer_wait("wait=60", 60), 60);
    CU_ASSERT_EQUAL(api_prefer_wait("wait=2, wait=30", 60), 2);
    CU_ASSERT_EQUAL(api_prefer_wait("wait=0, wait=30", 60), 0);
}

static void test_prefer_without_a_good_wait_asks_for_none(void)
{
    static const char *const none[] = { "", "wait", "wait=", "wait=-1", "wait=+1", "wait=1.5", "wait=x",
                                        "wait=1x", "waits=3", "await=3", "respond-async", "wait=\"1", ",,,",
                                        "wait=\"\"", "=3, wait=3", "wait 3", "wait=3 4" };
    for (size_t i = 0; i < sizeof none / sizeof none[0]; i++)
        CU_ASSERT_EQUAL(api_prefer_wait(none[i], 60), 0);
    CU_ASSERT_EQUAL(api_prefer_wait(NULL, 60), 0);
}

int test_request_register(void)
{
    CU_pSuite suite = CU_add_suite("request", NULL, NULL);
    if (!suite)
        return CU_get_error();
    CU_add_test(suite, "Prefer wait is read among other preferences", test_prefer_wait_is_read_among_other_preferences);
    CU_add_test(suite, "Prefer wait is capped and the first counts", test_prefer_wait_is_capped_and_the_first_counts);
    CU_add_test(suite, "Prefer without a good wait asks for none", test_prefer_without_a_good_wait_asks_for_none);
    return CU_get_error();
}
