/* Tests for rules/base/text.c: text_copy and text_join against snprintf's "%s"
 * and "%s%s%s" at every buffer size around each length, empty and NULL
 * parts, and seeded random texts. */
#include <stdio.h>
#include <string.h>

#include "../../../rules/base/text.h"
#include "../../support/tests.h"

/* text_join of parts into a size-byte buffer writes what snprintf writes,
 * returns its length and touches nothing past size. */
static bool join_as_printf(const char *const parts[3], size_t size)
{
    char ours[64], theirs[64];
    memset(ours, 'x', sizeof ours);
    memset(theirs, 'x', sizeof theirs);
    size_t n = text_join(ours, size, parts, 3);
    int m = snprintf(theirs, size, "%s%s%s", parts[0] ? parts[0] : "", parts[1] ? parts[1] : "",
                     parts[2] ? parts[2] : "");
    return m >= 0 && n == (size_t)m && !memcmp(ours, theirs, sizeof ours);
}

static bool copy_as_printf(const char *text, size_t size)
{
    char ours[64], theirs[64];
    memset(ours, 'x', sizeof ours);
    memset(theirs, 'x', sizeof theirs);
    size_t n = text_copy(ours, size, text);
    int m = snprintf(theirs, size, "%s", text ? text : "");
    return m >= 0 && n == (size_t)m && !memcmp(ours, theirs, sizeof ours);
}

static void test_copies_are_cut_and_terminated_as_printf_does_at_every_size(void)
{
    static const char *const texts[] = { "", "a", "chessd:game:", "0123456789abcdef0123456789", NULL };
    int differing = 0;
    for (size_t t = 0; t < sizeof texts / sizeof texts[0]; t++)
        for (size_t size = 0; size <= 40; size++)
            differing += !copy_as_printf(texts[t], size);
    CU_ASSERT_EQUAL(differing, 0);
}

static void test_joins_are_cut_and_terminated_as_printf_does_at_every_size(void)
{
    static const char *const sets[][3] = {
        { "chessd:game:", "0123456789ab", "" }, { "{", "abc", "}:" }, { "", "", "" },
        { NULL, "x", NULL },                     { "/v1/games/", "", "id" },
    };
    int differing = 0;
    for (size_t s = 0; s < sizeof sets / sizeof sets[0]; s++)
        for (size_t size = 0; size <= 40; size++)
            differing += !join_as_printf(sets[s], size);
    CU_ASSERT_EQUAL(differing, 0);
}

static void test_random_joins_are_written_as_printf_writes_them(void)
{
    uint64_t rng = 0x7e47;
    int differing = 0;
    for (int i = 0; i < 20000; i++) {
        char texts[3][24];
        const char *parts[3];
        for (int p = 0; p < 3; p++) {
            rng ^= rng << 13, rng ^= rng >> 7, rng ^= rng << 17;
            size_t length = rng % sizeof texts[p];
            for (size_t k = 0; k < length; k++)
                texts[p][k] = (char)(' ' + (rng >> (k % 56)) % 95);
            texts[p][length] = '\0';
            parts[p] = texts[p];
        }
        rng ^= rng << 13, rng ^= rng >> 7, rng ^= rng << 17;
        differing += !join_as_printf(parts, rng % 64);
    }
    CU_ASSERT_EQUAL(differing, 0);
}

int test_text_register(void)
{
    CU_pSuite suite = CU_add_suite("text", NULL, NULL);
    if (!suite)
        return CU_get_error();
    CU_ADD_TEST(suite, test_copies_are_cut_and_terminated_as_printf_does_at_every_size);
    CU_ADD_TEST(suite, test_joins_are_cut_and_terminated_as_printf_does_at_every_size);
    CU_ADD_TEST(suite, test_random_joins_are_written_as_printf_writes_them);
    return CUE_SUCCESS;
}
