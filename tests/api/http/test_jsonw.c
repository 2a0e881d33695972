/* Tests for api/http/jsonw.c, against the exact text expected (and cJSON
 * reading back what any byte makes). Commas and nesting come out right
 * without the caller's help, and strings are escaped per RFC 8259 and always
 * valid UTF-8 (a bad byte becomes U+FFFD). Integers keep every digit at
 * their extremes; nesting too deep or an allocation failure makes
 * jsonw_finish NULL. */
#include <cjson/cJSON.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../../api/http/jsonw.h"
#include "../../../rules/base/utf8.h"
#include "../../support/tests.h"

/* Finishes w and checks the text is exactly `expected`. */
static void check_text(jsonw_t *w, const char *expected)
{
    size_t length = 0;
    char *text = jsonw_finish(w, &length);
    CU_ASSERT_PTR_NOT_NULL_FATAL(text);
    CU_ASSERT_STRING_EQUAL(text, expected);
    CU_ASSERT_EQUAL(length, strlen(expected));
    free(text);
}

/* The JSON text of one string value s (n bytes). */
static void check_string(const char *s, size_t n, const char *expected)
{
    jsonw_t w;
    jsonw_init(&w);
    jsonw_string_len(&w, s, n);
    check_text(&w, expected);
}

static void test_commas_and_nesting_need_no_help(void)
{
    jsonw_t w;
    jsonw_init(&w);
    jsonw_object_begin(&w);
    jsonw_kv_int(&w, "a", 1);
    jsonw_key(&w, "b");
    jsonw_array_begin(&w);
    jsonw_int(&w, 1);
    jsonw_string(&w, "two");
    jsonw_object_begin(&w);
    jsonw_kv_null(&w, "c");
    jsonw_kv_bool(&w, "d", false);
    jsonw_object_end(&w);
    jsonw_array_begin(&w);
    jsonw_array_end(&w);
    jsonw_bool(&w, true);
    jsonw_array_end(&w);
    jsonw_key(&w, "e");
    jsonw_object_begin(&w);
    jsonw_object_end(&w);
    jsonw_key(&w, "f");
    jsonw_raw(&w, "[1,2]");
    jsonw_kv_string(&w, "g", "h");
    jsonw_object_end(&w);
    check_text(&w, "{\"a\":1,\"b\":[1,\"two\",{\"c\":null,\"d\":false},[],true],\"e\":{},\"f\":[1,2],\"g\":\"h\"}");
}

static void test_top_level_arrays_of_values_are_separated(void)
{
    jsonw_t w;
    jsonw_init(&w);
    jsonw_array_begin(&w);
    for (int i = 0; i < 3; i++) {
        jsonw_array_begin(&w);
        jsonw_int(&w, i);
        jsonw_null(&w);
        jsonw_array_end(&w);
    }
    jsonw_array_end(&w);
    check_text(&w, "[[0,null],[1,null],[2,null]]");
}

static void test_quotes_and_backslashes_are_escaped(void)
{
    check_string("say \"hi\"", 8, "\"say \\\"hi\\\"\"");
    check_string("C:\\dir\\", 7, "\"C:\\\\dir\\\\\"");
    check_string("a/b", 3, "\"a/b\""); /* '/' may stay as it is */
    check_string("", 0, "\"\"");
}

static void test_control_characters_are_escaped(void)
{
    check_string("\n\r\t", 3, "\"\\n\\r\\t\"");
    check_string("\x01\x08\x0c\x1f", 4, "\"\\u0001\\u0008\\u000c\\u001f\"");
    check_string("a\0b", 3, "\"a\\u0000b\""); /* a NUL inside the given length */
    check_string("\x7f", 1, "\"\x7f\"");      /* DEL needs no escape */
}

static void test_valid_utf8_is_copied_as_it_is(void)
{
    const char *s = "caf\xc3\xa9 \xe2\x99\x9e \xf0\x9f\x98\x80"; /* é, ♞, an emoji */
    char expected[64];
    snprintf(expected, sizeof expected, "\"%s\"", s);
    check_string(s, strlen(s), expected);
}

static void test_invalid_utf8_becomes_the_replacement_character(void)
{
    check_string("a\xff" "b", 3, "\"a\\ufffdb\"");
    check_string("\x80", 1, "\"\\ufffd\"");                         /* a lone continuation byte */
    check_string("\xe2\x99", 2, "\"\\ufffd\\ufffd\"");              /* a character cut short */
    check_string("\xc0\xaf", 2, "\"\\ufffd\\ufffd\"");              /* overlong '/' */
    check_string("\xed\xa0\x80", 3, "\"\\ufffd\\ufffd\\ufffd\"");   /* a UTF-16 surrogate */
    check_string("\xf4\x90\x80\x80", 4, "\"\\ufffd\\ufffd\\ufffd\\ufffd\""); /* past U+10FFFF */
    /* whatever the bytes, the text is valid UTF-8 and JSON */
    unsigned char all[256];
    for (int i = 0; i < 256; i++)
        all[i] = (unsigned char)i;
    jsonw_t w;
    jsonw_init(&w);
    jsonw_string_len(&w, (const char *)all, sizeof all);
    size_t length;
    char *text = jsonw_finish(&w, &length);
    CU_ASSERT_PTR_NOT_NULL_FATAL(text);
    CU_ASSERT_TRUE(utf8_valid(text, length));
    cJSON *parsed = cJSON_ParseWithLength(text, length);
    CU_ASSERT_TRUE(cJSON_IsString(parsed));
    cJSON_Delete(parsed);
    free(text);
}

static void test_long_strings_are_written_whole(void)
{
    enum { LONG = 50000 };
    char *s = malloc(LONG + 1), *expected = malloc(LONG + 3);
    CU_ASSERT_PTR_NOT_NULL_FATAL(s);
    CU_ASSERT_PTR_NOT_NULL_FATAL(expected);
    for (size_t i = 0; i < LONG; i++)
        s[i] = (char)('a' + i % 26);
    s[LONG] = '\0';
    snprintf(expected, LONG + 3, "\"%s\"", s);
    check_string(s, LONG, expected);
    free(s);
    free(expected);
}

static void test_integers_keep_every_digit_at_their_extremes(void)
{
    jsonw_t w;
    jsonw_init(&w);
    jsonw_array_begin(&w);
    jsonw_int(&w, INT64_MIN);
    jsonw_int(&w, INT64_MAX);
    jsonw_int(&w, 0);
    jsonw_int(&w, -1);
    jsonw_uint(&w, UINT64_MAX);
    jsonw_uint(&w, 0);
    jsonw_array_end(&w);
    check_text(&w, "[-9223372036854775808,9223372036854775807,0,-1,18446744073709551615,0]");
}

/* n arrays inside each other, then closed. */
static char *nested(int n)
{
    jsonw_t w;
    jsonw_init(&w);
    for (int i = 0; i < n; i++)
        jsonw_array_begin(&w);
    jsonw_int(&w, 1);
    for (int i = 0; i < n; i++)
        jsonw_array_end(&w);
    return jsonw_finish(&w, NULL);
}

static void test_nesting_deeper_than_the_limit_fails(void)
{
    char *text = nested(JSONW_MAX_DEPTH - 1);
    CU_ASSERT_PTR_NOT_NULL_FATAL(text);
    CU_ASSERT_EQUAL(strlen(text), 2 * (JSONW_MAX_DEPTH - 1) + 1);
    free(text);
    CU_ASSERT_PTR_NULL(nested(JSONW_MAX_DEPTH));
    CU_ASSERT_PTR_NULL(nested(JSONW_MAX_DEPTH + 10));
}

static void test_an_allocation_failure_makes_finish_null(void)
{
    jsonw_t w;
    jsonw_init(&w);
    tests_fail_allocations_after(0);
    jsonw_object_begin(&w);
    tests_allocations_work();
    jsonw_kv_string(&w, "later", "calls do nothing");
    jsonw_object_end(&w);
    CU_ASSERT_PTR_NULL(jsonw_finish(&w, NULL));
}

static void test_discard_frees_an_unfinished_writer(void)
{
    jsonw_t w;
    jsonw_init(&w);
    jsonw_array_begin(&w);
    jsonw_string(&w, "never finished");
    jsonw_discard(&w); /* LeakSanitizer would catch a leak here */
    jsonw_discard(&w); /* and twice is fine */
}

int test_jsonw_register(void)
{
    CU_pSuite suite = CU_add_suite_with_setup_and_teardown("jsonw", NULL, NULL, NULL, tests_allocations_work);
    if (!suite)
        return -1;
    CU_add_test(suite, "commas and nesting need no help", test_commas_and_nesting_need_no_help);
    CU_add_test(suite, "top-level arrays of values are separated", test_top_level_arrays_of_values_are_separated);
    CU_add_test(suite, "quotes and backslashes are escaped", test_quotes_and_backslashes_are_escaped);
    CU_add_test(suite, "control characters are escaped", test_control_characters_are_escaped);
    CU_add_test(suite, "valid UTF-8 is copied as it is", test_valid_utf8_is_copied_as_it_is);
    CU_add_test(suite, "invalid UTF-8 becomes U+FFFD", test_invalid_utf8_becomes_the_replacement_character);
    CU_add_test(suite, "long strings are written whole", test_long_strings_are_written_whole);
    CU_add_test(suite, "integers keep every digit at their extremes",
                test_integers_keep_every_digit_at_their_extremes);
    CU_add_test(suite, "nesting deeper than the limit fails", test_nesting_deeper_than_the_limit_fails);
    CU_add_test(suite, "an allocation failure makes finish NULL", test_an_allocation_failure_makes_finish_null);
    CU_add_test(suite, "discard frees an unfinished writer", test_discard_frees_an_unfinished_writer);
    return 0;
}
