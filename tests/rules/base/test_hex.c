/* Tests for rules/base/hex.c: bytes are written as lower-case hex, first byte
 * first and terminated; a 64-bit key as exactly 16 digits, most significant
 * first, read back unchanged; a digit outside 0-9a-f (upper case, the end of
 * the text) refuses the whole key; hex_span stops at the first non-digit. */
#include <string.h>

#include "../../../rules/base/hex.h"
#include "../../support/tests.h"

static void test_bytes_are_written_lower_case_first_byte_first_and_terminated(void)
{
    const uint8_t bytes[] = { 0x00, 0x01, 0x7f, 0x80, 0xab, 0xff };
    char out[2 * sizeof bytes + 2];
    memset(out, 'x', sizeof out);
    CU_ASSERT_PTR_EQUAL(hex_encode(bytes, sizeof bytes, out), out);
    CU_ASSERT_STRING_EQUAL(out, "00017f80abff");
    CU_ASSERT_EQUAL(out[sizeof out - 1], 'x'); /* nothing past the terminator */
    CU_ASSERT_STRING_EQUAL(hex_encode(bytes, 0, out), "");
}

static void test_a_key_round_trips_through_sixteen_digits(void)
{
    const uint64_t keys[] = { 0, 1, 0x0123456789abcdefULL, 0xfedcba9876543210ULL, UINT64_MAX };
    for (size_t i = 0; i < sizeof keys / sizeof keys[0]; i++) {
        char text[17];
        text[16] = '\0';
        hex_encode_u64(keys[i], text);
        CU_ASSERT_EQUAL(strlen(text), 16);
        uint64_t back = 42;
        CU_ASSERT_TRUE(hex_decode_u64(text, &back));
        CU_ASSERT_EQUAL(back, keys[i]);
    }
    char text[17] = "";
    hex_encode_u64(0x0123456789abcdefULL, text);
    CU_ASSERT_STRING_EQUAL(text, "0123456789abcdef");
}

static void test_a_key_with_a_digit_outside_lower_case_hex_is_refused(void)
{
    const char *const bad[] = { "0123456789ABCDEF", "0123456789abcdeg", "0123456789abcde", "",
                                "0123456789abcd f", "-123456789abcdef" };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        uint64_t key = 42;
        CU_ASSERT_FALSE(hex_decode_u64(bad[i], &key));
        CU_ASSERT_EQUAL(key, 42);
    }
}

static void test_hex_span_counts_leading_lower_case_digits(void)
{
    CU_ASSERT_EQUAL(hex_span("09af 1"), 4);
    CU_ASSERT_EQUAL(hex_span("0A"), 1);
    CU_ASSERT_EQUAL(hex_span(""), 0);
    CU_ASSERT_EQUAL(hex_span("g"), 0);
}

int test_hex_register(void)
{
    CU_pSuite suite = CU_add_suite("hex", NULL, NULL);
    if (!suite)
        return CU_get_error();
    CU_ADD_TEST(suite, test_bytes_are_written_lower_case_first_byte_first_and_terminated);
    CU_ADD_TEST(suite, test_a_key_round_trips_through_sixteen_digits);
    CU_ADD_TEST(suite, test_a_key_with_a_digit_outside_lower_case_hex_is_refused);
    CU_ADD_TEST(suite, test_hex_span_counts_leading_lower_case_digits);
    return CU_get_error();
}
