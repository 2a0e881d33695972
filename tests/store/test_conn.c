/* Tests for store/conn.c's command writer (conn_format_command): byte for
 * byte what hiredis's redisFormatCommandArgv writes for the same arguments
 * (seeded random argument lists: empty, binary and long arguments, with and
 * without lengths). The commands' round trips through a real redis-server
 * are the store suites' (store_redis, store_redis_cluster, tls ...). */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <hiredis/hiredis.h>

#include "../../store/conn.h"
#include "../support/tests.h"

enum { ARGS_MAX = 24, ARG_BYTES_MAX = 70000 };

static uint64_t next(uint64_t *state)
{
    *state ^= *state << 13;
    *state ^= *state >> 7;
    *state ^= *state << 17;
    return *state;
}

/* Both writers on one argument list: same length, same bytes, NUL after. */
static void check_same(int argc, const char **argv, const size_t *lengths)
{
    char *ours = NULL, *theirs = NULL;
    int ours_length = conn_format_command(&ours, argc, argv, lengths);
    int theirs_length = redisFormatCommandArgv(&theirs, argc, argv, lengths);
    CU_ASSERT_FATAL(theirs_length >= 0);
    CU_ASSERT_EQUAL_FATAL(ours_length, theirs_length);
    CU_ASSERT_PTR_NOT_NULL_FATAL(ours);
    CU_ASSERT_EQUAL(memcmp(ours, theirs, (size_t)ours_length), 0);
    CU_ASSERT_EQUAL(ours[ours_length], '\0');
    free(ours);
    redisFreeCommand(theirs);
}

static void test_writes_what_hiredis_writes_for_random_argument_lists(void)
{
    static char bytes[ARGS_MAX][ARG_BYTES_MAX];
    uint64_t state = 0x9e3779b97f4a7c15u;
    for (int round = 0; round < 400; round++) {
        const char *argv[ARGS_MAX];
        size_t lengths[ARGS_MAX];
        int argc = 1 + (int)(next(&state) % ARGS_MAX);
        for (int i = 0; i < argc; i++) {
            uint64_t pick = next(&state) % 10;
            size_t length = pick == 0   ? 0
                            : pick == 1 ? (size_t)(next(&state) % ARG_BYTES_MAX)
                                        : (size_t)(next(&state) % 40);
            for (size_t b = 0; b < length; b++)
                bytes[i][b] = (char)next(&state); /* NULs, CR and LF among them */
            argv[i] = bytes[i];
            lengths[i] = length;
        }
        check_same(argc, argv, lengths);
    }
}

static void test_writes_what_hiredis_writes_for_texts_without_lengths(void)
{
    const char *script[] = { "EVALSHA", "16841100aabffc9cafe5b52d4a300fd211f94e69", "2", "chessd:game:{x}", "" };
    check_same(5, script, NULL);
    const char *ping[] = { "PING" };
    check_same(1, ping, NULL);
    const char *many[12] = { "a", "bb", "ccc", "1234567890", "", "x", "y", "z", "0", "-1", "9", "10" };
    check_same(12, many, NULL);
}

static void test_counts_of_ten_and_more_digits_are_written_whole(void)
{
    /* The array and length headers across a digit boundary. */
    static char big[100001];
    memset(big, 'q', sizeof big - 1);
    const char *argv[11];
    size_t lengths[11];
    for (int i = 0; i < 11; i++) {
        argv[i] = big;
        lengths[i] = i == 0 ? 9 : i == 1 ? 10 : i == 2 ? 99999 : i == 3 ? 100000 : (size_t)i;
    }
    check_same(11, argv, lengths);
    char *out = NULL;
    int n = conn_format_command(&out, 0, argv, lengths);
    CU_ASSERT_EQUAL(n, 4);
    CU_ASSERT_PTR_NOT_NULL_FATAL(out);
    CU_ASSERT_STRING_EQUAL(out, "*0\r\n");
    free(out);
    CU_ASSERT_EQUAL(conn_format_command(&out, -1, argv, lengths), -1);
    CU_ASSERT_PTR_NULL(out);
}

int test_conn_register(void)
{
    CU_pSuite suite = CU_add_suite("conn", NULL, NULL);
    if (!suite)
        return CU_get_error();
    CU_ADD_TEST(suite, test_writes_what_hiredis_writes_for_random_argument_lists);
    CU_ADD_TEST(suite, test_writes_what_hiredis_writes_for_texts_without_lengths);
    CU_ADD_TEST(suite, test_counts_of_ten_and_more_digits_are_written_whole);
    return CUE_SUCCESS;
}
