/* Tests for api/http/mhd_version.c: only a version in the tested list is
 * supported, exactly as libmicrohttpd spells it, and the libmicrohttpd this
 * runner is linked against is a tested one. So this test fails when the
 * machine's library changes, as chessd would then refuse to start. */
#include <string.h>

#include <microhttpd.h>

#include "../../../api/http/mhd_version.h"
#include "../../support/tests.h"

static void test_the_tested_version_is_supported(void)
{
    CU_ASSERT_TRUE(http_mhd_version_supported("0.9.75"));
}

static void test_any_other_version_is_not_supported(void)
{
    static const char *const others[] = { "0.9.76", "0.9.74", "0.9.7", "0.9.750", "0.9.75 ", " 0.9.75", "0.9.75.1",
                                          "1.0.0", "0.9", "", "0.9.75-6", "v0.9.75", NULL };
    for (const char *const *v = others; *v; v++)
        CU_ASSERT_FALSE(http_mhd_version_supported(*v));
    CU_ASSERT_FALSE(http_mhd_version_supported(NULL));
}

static void test_the_linked_libmicrohttpd_passes_the_check_with_nothing_to_say(void)
{
    char err[512] = "x";
    CU_ASSERT_TRUE(http_mhd_version_supported(MHD_get_version()));
    CU_ASSERT_TRUE(http_mhd_version_check(false, err, sizeof err));
    CU_ASSERT_STRING_EQUAL(err, "");
    CU_ASSERT_TRUE(http_mhd_version_check(true, err, sizeof err));
    CU_ASSERT_STRING_EQUAL(err, "");
}

int test_mhd_version_register(void)
{
    CU_pSuite suite = CU_add_suite("mhd_version", NULL, NULL);
    if (!suite)
        return CU_get_error();
    CU_add_test(suite, "the tested version is supported", test_the_tested_version_is_supported);
    CU_add_test(suite, "any other version is not supported", test_any_other_version_is_not_supported);
    CU_add_test(suite, "the linked libmicrohttpd passes the check with nothing to say",
                test_the_linked_libmicrohttpd_passes_the_check_with_nothing_to_say);
    return CUE_SUCCESS;
}
