/* Tests for rules/base/decimal.c: every length from 1 to 20 digits, the powers
 * of ten either side, and seeded random values of every size, against
 * snprintf's "%llu" (and "%lld" for the signed writer, INT64_MIN
 * included). */
#include <stdio.h>
#include <string.h>

#include "../../../rules/base/decimal.h"
#include "../../support/tests.h"

/* decimal_write and decimal_length agree with snprintf on value. */
static bool same_as_printf(uint64_t value)
{
    char ours[DECIMAL_U64_MAX + 1], theirs[DECIMAL_U64_MAX + 1];
    memset(ours, 'x', sizeof ours);
    size_t n = decimal_write(value, ours);
    int m = snprintf(theirs, sizeof theirs, "%llu", (unsigned long long)value);
    return m > 0 && n == (size_t)m && decimal_length(value) == n && !memcmp(ours, theirs, n) && ours[n] == 'x';
}

static void test_powers_of_ten_and_their_neighbours_are_written_as_printf_writes_them(void)
{
    CU_ASSERT(same_as_printf(0));
    CU_ASSERT(same_as_printf(UINT64_MAX));
    CU_ASSERT_EQUAL(decimal_length(UINT64_MAX), DECIMAL_U64_MAX);
    uint64_t power = 1;
    for (int digits = 1; digits < DECIMAL_U64_MAX; digits++, power *= 10) {
        CU_ASSERT(same_as_printf(power));
        CU_ASSERT(same_as_printf(power - 1));
        CU_ASSERT(same_as_printf(power + 1));
        CU_ASSERT_EQUAL(decimal_length(power), (size_t)digits);
    }
}

static void test_random_values_of_every_size_are_written_as_printf_writes_them(void)
{
    uint64_t rng = 0xdec1a1;
    int differing = 0;
    for (int i = 0; i < 100000; i++) {
        rng ^= rng << 13, rng ^= rng >> 7, rng ^= rng << 17;
        uint64_t value = rng >> (rng % 64); /* every magnitude as likely */
        differing += !same_as_printf(value);
    }
    CU_ASSERT_EQUAL(differing, 0);
}

static void test_signed_values_are_written_as_printf_writes_them(void)
{
    static const int64_t values[] = { 0, 1, -1, 9, -9, 10, -10, INT64_MAX, INT64_MIN, INT64_MIN + 1, -1700000000123 };
    for (size_t i = 0; i < sizeof values / sizeof values[0]; i++) {
        char ours[DECIMAL_U64_MAX + 2], theirs[DECIMAL_U64_MAX + 2];
        size_t n = decimal_write_signed(values[i], ours);
        int m = snprintf(theirs, sizeof theirs, "%lld", (long long)values[i]);
        CU_ASSERT_EQUAL(n, (size_t)m);
        CU_ASSERT_EQUAL(memcmp(ours, theirs, n), 0);
    }
}

int test_decimal_register(void)
{
    CU_pSuite suite = CU_add_suite("decimal", NULL, NULL);
    if (!suite)
        return CU_get_error();
    CU_ADD_TEST(suite, test_powers_of_ten_and_their_neighbours_are_written_as_printf_writes_them);
    CU_ADD_TEST(suite, test_random_values_of_every_size_are_written_as_printf_writes_them);
    CU_ADD_TEST(suite, test_signed_values_are_written_as_printf_writes_them);
    return CUE_SUCCESS;
}
