/* Tests for rules/base/utf8.c (RFC 3629): the sequence lengths of valid UTF-8,
 * and the refusal of everything else: overlong forms, surrogates, code points
 * past U+10FFFF, stray continuation bytes and sequences cut short. */
#include <string.h>

#include "../../../rules/base/utf8.h"
#include "../../support/tests.h"

static size_t seq(const char *bytes) { return utf8_sequence_length((const unsigned char *)bytes, strlen(bytes)); }

static void test_each_valid_form_has_its_length(void)
{
    CU_ASSERT_EQUAL(seq("a"), 1);
    CU_ASSERT_EQUAL(seq("\xc3\xa9"), 2);         /* é */
    CU_ASSERT_EQUAL(seq("\xe2\x99\x94"), 3);     /* ♔ */
    CU_ASSERT_EQUAL(seq("\xf0\x9f\x98\x80"), 4); /* 😀 */
    CU_ASSERT_EQUAL(seq("\xf4\x8f\xbf\xbf"), 4); /* U+10FFFF, the last code point */
    CU_ASSERT_EQUAL(seq("\xed\x9f\xbf"), 3);     /* U+D7FF, just below the surrogates */
}

static void test_overlong_surrogate_and_out_of_range_forms_are_refused(void)
{
    CU_ASSERT_EQUAL(seq("\xc0\xaf"), 0);         /* '/' written in two bytes */
    CU_ASSERT_EQUAL(seq("\xc1\xbf"), 0);
    CU_ASSERT_EQUAL(seq("\xe0\x80\xaf"), 0);     /* overlong three bytes */
    CU_ASSERT_EQUAL(seq("\xf0\x80\x80\xaf"), 0); /* overlong four bytes */
    CU_ASSERT_EQUAL(seq("\xed\xa0\x80"), 0);     /* U+D800, a surrogate */
    CU_ASSERT_EQUAL(seq("\xed\xbf\xbf"), 0);     /* U+DFFF */
    CU_ASSERT_EQUAL(seq("\xf4\x90\x80\x80"), 0); /* U+110000 */
    CU_ASSERT_EQUAL(seq("\xf5\x80\x80\x80"), 0);
    CU_ASSERT_EQUAL(seq("\xff"), 0);
}

static void test_stray_and_cut_short_sequences_are_refused(void)
{
    CU_ASSERT_EQUAL(seq("\x80"), 0);             /* a continuation byte alone */
    CU_ASSERT_EQUAL(seq("\xc3"), 0);             /* cut short */
    CU_ASSERT_EQUAL(seq("\xe2\x99"), 0);
    CU_ASSERT_EQUAL(seq("\xc3\x28"), 0);         /* a lead byte followed by ASCII */
    /* Only the n bytes given count: a valid sequence cut by n is refused. */
    CU_ASSERT_EQUAL(utf8_sequence_length((const unsigned char *)"\xe2\x99\x94", 2), 0);
}

static void test_whole_strings_are_checked_and_counted(void)
{
    const char *text = "K\xc3\xb6nig \xe2\x99\x94!";
    CU_ASSERT_TRUE(utf8_valid(text, strlen(text)));
    CU_ASSERT_EQUAL(utf8_length(text), 8); /* K ö n i g, a space, ♔, ! */
    CU_ASSERT_TRUE(utf8_valid("", 0));
    CU_ASSERT_FALSE(utf8_valid("ok\xc3", 3));
    CU_ASSERT_FALSE(utf8_valid("a\xed\xa0\x80z", 5));
    /* A NUL is valid UTF-8 (U+0000): refusing it is the body reader's job. */
    CU_ASSERT_TRUE(utf8_valid("a\0b", 3));
}

int test_utf8_register(void)
{
    CU_pSuite suite = CU_add_suite("utf8", NULL, NULL);
    if (!suite)
        return CU_get_error();
    CU_ADD_TEST(suite, test_each_valid_form_has_its_length);
    CU_ADD_TEST(suite, test_overlong_surrogate_and_out_of_range_forms_are_refused);
    CU_ADD_TEST(suite, test_stray_and_cut_short_sequences_are_refused);
    CU_ADD_TEST(suite, test_whole_strings_are_checked_and_counted);
    return CU_get_error();
}
