/* Tests for the published event message of api/game/game_events.c: what
 * game_event_parse takes (every field, the JSON on one line) and refuses,
 * and the channel name of a game. */
#include <string.h>

#include "../../../api/game/game_events.h"
#include "../../support/tests.h"

static bool parse(const char *message, game_event_meta_t *meta, const char **json, size_t *length)
{
    return game_event_parse(message, strlen(message), meta, json, length);
}

static void test_a_message_gives_its_meta_and_json(void)
{
    game_event_meta_t meta;
    const char *json;
    size_t length;
    const char *message = "12 1 1700000000123 1700000060123 change\n{\"type\":\"change\",\"version\":12}";
    CU_ASSERT_TRUE_FATAL(parse(message, &meta, &json, &length));
    CU_ASSERT_EQUAL(meta.version, 12);
    CU_ASSERT_TRUE(meta.ended);
    CU_ASSERT_EQUAL(meta.at_ms, 1700000000123ll);
    CU_ASSERT_EQUAL(meta.deadline_ms, 1700000060123ll);
    CU_ASSERT_STRING_EQUAL(meta.type, "change");
    CU_ASSERT_EQUAL(length, strlen("{\"type\":\"change\",\"version\":12}"));
    CU_ASSERT_EQUAL(memcmp(json, "{\"type\":\"change\",\"version\":12}", length), 0);
    CU_ASSERT_TRUE(parse("2 0 0 0 change\n{}", &meta, &json, &length));
    CU_ASSERT_FALSE(meta.ended);
    CU_ASSERT_EQUAL(meta.at_ms, 0);
    CU_ASSERT_EQUAL(meta.deadline_ms, 0);
}

static void test_anything_else_is_not_a_message(void)
{
    static const char *const refused[] = {
        "",
        "2 0 0 0 change",                  /* no JSON line */
        "2 0 0 0 change\n",                /* empty JSON */
        "0 0 0 0 change\n{}",              /* version 0 */
        "2 2 0 0 change\n{}",              /* ended not 0 or 1 */
        "-2 0 0 0 change\n{}",             /* signs */
        "2 0 -1 0 change\n{}",
        "2  0 0 0 change\n{}",             /* two spaces */
        "2 0 0 0  change\n{}",
        "2 0 0 change\n{}",                /* a field missing */
        "2 0 0 0 Change\n{}",              /* the type is lower case */
        "2 0 0 0 change\r\n{}",
        "2 0 0 0 a_type_far_too_long\n{}", /* longer than the meta holds */
        "2 0 0 0 change\n{\"a\":\n1}",     /* a newline inside */
        "2 0 0 0 change\n{\"a\":1}\n",
        "2 0 0 0 change\n[1]",             /* not an object */
        "1234567890123456789 0 0 0 change\n{}", /* past 18 digits */
        "2 0 0 0 change {}",
        "2 0 0 0 change\n{not json}",     /* what reaches a client is JSON */
        "2 0 0 0 change\n{\"a\":1}}",
        "2 0 0 0 change\n{\"a\":1,}",
        "2 0 0 0 change\n{\"a\":\"\t\"}",  /* a control character */
        "2 0 0 0 change\n{\"a\":\"\xff\"}", /* not UTF-8 */
        "2 0 0 0 change\n{\"a\":\"\xc0\xaf\"}",
    };
    for (size_t i = 0; i < sizeof refused / sizeof refused[0]; i++) {
        game_event_meta_t meta;
        const char *json;
        size_t length;
        CU_ASSERT_FALSE(parse(refused[i], &meta, &json, &length));
    }
    /* Bytes after a NUL count: the length is the message's. */
    game_event_meta_t meta;
    const char *json;
    size_t length;
    CU_ASSERT_FALSE(game_event_parse("2 0 0 0 change\n{}\0x", 19, &meta, &json, &length));
    CU_ASSERT_FALSE(game_event_parse("2 0 0 0 change\n{\0}", 18, &meta, &json, &length));
    /* Valid UTF-8 beyond ASCII passes. */
    CU_ASSERT_TRUE(parse("2 0 0 0 change\n{\"white\":{\"name\":\"Jos\xc3\xa9 \xe2\x99\x94\"}}", &meta, &json, &length));
}

static void test_a_games_channel_carries_its_id_as_the_hash_tag(void)
{
    char channel[GAME_EVENTS_CHANNEL_SIZE];
    game_events_channel("2Yq0ZK1oNwJc9u3f", channel);
    CU_ASSERT_STRING_EQUAL(channel, "chessd:events:{2Yq0ZK1oNwJc9u3f}");
    char long_id[200];
    memset(long_id, 'a', sizeof long_id - 1);
    long_id[sizeof long_id - 1] = '\0';
    game_events_channel(long_id, channel); /* cut, never overflowed */
    CU_ASSERT_TRUE(strlen(channel) < GAME_EVENTS_CHANNEL_SIZE);
}

int test_game_events_register(void)
{
    CU_pSuite suite = CU_add_suite("game_events", NULL, NULL);
    if (!suite)
        return CU_get_error();
    CU_add_test(suite, "a message gives its meta and JSON", test_a_message_gives_its_meta_and_json);
    CU_add_test(suite, "anything else is not a message", test_anything_else_is_not_a_message);
    CU_add_test(suite, "a game's channel carries its id as the hash tag",
                test_a_games_channel_carries_its_id_as_the_hash_tag);
    return CU_get_error();
}
