/* Tests for api/http/target.c: the request target is routed as sent. An encoded
 * '/' or NUL inside a path segment is refused, never decoded into another
 * path; absolute-form targets route by their path; the query is decoded into
 * exact, case-sensitive names with every value kept (duplicates included). */
#include <string.h>

#include "../../../api/http/target.h"
#include "../../support/tests.h"

static target_status_t parse(const char *raw, target_t *t)
{
    char detail[160] = "";
    target_status_t status = target_parse(raw, strlen(raw), t, detail, sizeof detail);
    if (status != TARGET_OK)
        CU_ASSERT(detail[0] != '\0'); /* every refusal says why */
    return status;
}

static void test_origin_form_path_and_query_are_split_and_decoded(void)
{
    target_t t;
    CU_ASSERT_EQUAL_FATAL(parse("/v1/perft?depth=3&fen=8%2F8%2F8+w", &t), TARGET_OK);
    CU_ASSERT_STRING_EQUAL(t.path, "/v1/perft");
    CU_ASSERT_EQUAL_FATAL(t.param_count, 2);
    CU_ASSERT_STRING_EQUAL(target_query(&t, "depth"), "3");
    CU_ASSERT_STRING_EQUAL(target_query(&t, "fen"), "8/8/8 w"); /* %2F is fine in a query; '+' is a space */
    CU_ASSERT_PTR_NULL(target_query(&t, "Depth"));            /* names are case-sensitive */
}

static void test_encoded_slash_in_a_segment_is_refused(void)
{
    target_t t;
    CU_ASSERT_EQUAL(parse("/v1/games/abc%2Fresign", &t), TARGET_EPATH_ESCAPE);
    CU_ASSERT_EQUAL(parse("/v1/games/abc%2fresign", &t), TARGET_EPATH_ESCAPE);
}

static void test_encoded_nul_in_a_segment_is_refused(void)
{
    target_t t;
    CU_ASSERT_EQUAL(parse("/healthz%00xyz", &t), TARGET_EPATH_ESCAPE);
    CU_ASSERT_EQUAL(parse("/v1/games/abc/resign%00.png", &t), TARGET_EPATH_ESCAPE);
}

static void test_bad_escapes_and_controls_in_the_path_are_refused(void)
{
    target_t t;
    CU_ASSERT_EQUAL(parse("/healthz%zz", &t), TARGET_EPATH_ESCAPE);
    CU_ASSERT_EQUAL(parse("/healthz%4", &t), TARGET_EPATH_ESCAPE);
    CU_ASSERT_EQUAL(parse("/a%0Ab", &t), TARGET_EPATH_ESCAPE);
    CU_ASSERT_EQUAL(parse("/a%7fb", &t), TARGET_EPATH_ESCAPE);
}

static void test_other_escapes_in_the_path_decode(void)
{
    target_t t;
    CU_ASSERT_EQUAL_FATAL(parse("/%68ealthz", &t), TARGET_OK);
    CU_ASSERT_STRING_EQUAL(t.path, "/healthz");
    CU_ASSERT_EQUAL_FATAL(parse("/a+b", &t), TARGET_OK);
    CU_ASSERT_STRING_EQUAL(t.path, "/a+b"); /* '+' is a space only in a query */
}

static void test_absolute_form_routes_by_its_path(void)
{
    target_t t;
    CU_ASSERT_EQUAL_FATAL(parse("http://example.com/healthz", &t), TARGET_OK);
    CU_ASSERT_STRING_EQUAL(t.path, "/healthz");
    CU_ASSERT_EQUAL_FATAL(parse("HTTPS://example.com:8443/v1/position?legal_moves=false", &t), TARGET_OK);
    CU_ASSERT_STRING_EQUAL(t.path, "/v1/position");
    CU_ASSERT_STRING_EQUAL(target_query(&t, "legal_moves"), "false");
    CU_ASSERT_EQUAL_FATAL(parse("http://example.com", &t), TARGET_OK);
    CU_ASSERT_STRING_EQUAL(t.path, "/");
}

static void test_targets_that_are_not_paths_are_refused(void)
{
    target_t t;
    CU_ASSERT_EQUAL(parse("*", &t), TARGET_ENOT_PATH);
    CU_ASSERT_EQUAL(parse("example.com:443", &t), TARGET_ENOT_PATH);
    CU_ASSERT_EQUAL(parse("", &t), TARGET_ENOT_PATH);
    CU_ASSERT_EQUAL(parse("/healthz#top", &t), TARGET_ENOT_PATH);
}

static void test_duplicate_and_empty_parameters_are_kept_as_sent(void)
{
    target_t t;
    CU_ASSERT_EQUAL_FATAL(parse("/v1/perft?depth=1&&depth=2&flag", &t), TARGET_OK);
    CU_ASSERT_EQUAL_FATAL(t.param_count, 3); /* the empty piece between && is skipped */
    CU_ASSERT_STRING_EQUAL(t.params[0].name, "depth");
    CU_ASSERT_STRING_EQUAL(t.params[1].value, "2");
    CU_ASSERT_STRING_EQUAL(t.params[2].name, "flag");
    CU_ASSERT_STRING_EQUAL(t.params[2].value, "");
}

static void test_an_encoded_nul_in_a_query_value_is_kept_with_its_length(void)
{
    target_t t;
    CU_ASSERT_EQUAL_FATAL(parse("/v1/position?fen=a%00b", &t), TARGET_OK);
    CU_ASSERT_EQUAL(t.params[0].value_length, 3); /* the router refuses it */
}

static void test_query_bounds(void)
{
    target_t t;
    char raw[TARGET_QUERY_TEXT_MAX + 64] = "/x?";
    for (int i = 0; i < TARGET_PARAM_MAX + 1; i++)
        strcat(raw, "a=1&");
    CU_ASSERT_EQUAL(parse(raw, &t), TARGET_EQUERY_TOO_BIG);
    strcpy(raw, "/x?v=");
    memset(raw + 5, 'x', TARGET_QUERY_TEXT_MAX);
    raw[5 + TARGET_QUERY_TEXT_MAX] = '\0';
    CU_ASSERT_EQUAL(parse(raw, &t), TARGET_EQUERY_TOO_BIG);
    CU_ASSERT_EQUAL(parse("/x?v=%g1", &t), TARGET_EQUERY_ESCAPE);
}

static void test_path_bound(void)
{
    target_t t;
    char raw[TARGET_PATH_MAX + 16] = "/";
    memset(raw + 1, 'a', TARGET_PATH_MAX);
    raw[TARGET_PATH_MAX + 1] = '\0';
    CU_ASSERT_EQUAL(parse(raw, &t), TARGET_EPATH_TOO_LONG);
    raw[TARGET_PATH_MAX] = '\0'; /* exactly TARGET_PATH_MAX bytes */
    CU_ASSERT_EQUAL(parse(raw, &t), TARGET_OK);
}

int test_target_register(void)
{
    CU_pSuite suite = CU_add_suite("target", NULL, NULL);
    if (!suite)
        return -1;
    CU_add_test(suite, "origin-form path and query are split and decoded",
                test_origin_form_path_and_query_are_split_and_decoded);
    CU_add_test(suite, "an encoded slash in a segment is refused", test_encoded_slash_in_a_segment_is_refused);
    CU_add_test(suite, "an encoded NUL in a segment is refused", test_encoded_nul_in_a_segment_is_refused);
    CU_add_test(suite, "bad escapes and controls in the path are refused",
                test_bad_escapes_and_controls_in_the_path_are_refused);
    CU_add_test(suite, "other escapes in the path decode", test_other_escapes_in_the_path_decode);
    CU_add_test(suite, "absolute-form routes by its path", test_absolute_form_routes_by_its_path);
    CU_add_test(suite, "targets that are not paths are refused", test_targets_that_are_not_paths_are_refused);
    CU_add_test(suite, "duplicate and empty parameters are kept as sent",
                test_duplicate_and_empty_parameters_are_kept_as_sent);
    CU_add_test(suite, "an encoded NUL in a query value is kept with its length",
                test_an_encoded_nul_in_a_query_value_is_kept_with_its_length);
    CU_add_test(suite, "query bounds", test_query_bounds);
    CU_add_test(suite, "path bound", test_path_bound);
    return 0;
}
