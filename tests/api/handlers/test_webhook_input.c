/* Tests for api/handlers/webhook_input.c: a subscription's url and kinds
 * read from a body or a creation's "webhooks", every kind by default, and
 * each malformed entry refused as the problem that names its path. */
#include <cjson/cJSON.h>
#include <stdlib.h>
#include <string.h>

#include "../../../api/game/webhook_kinds.h"
#include "../../../api/handlers/webhook_input.h"
#include "../../support/tests.h"

/* Reads text's "webhooks"; the count, or -1 with the problem's code in code. */
static int read_list(const char *text, webhook_sub_ask_t asks[WEBHOOK_SUB_PER_REQUEST], char code[64])
{
    cJSON *root = cJSON_Parse(text);
    CU_ASSERT_PTR_NOT_NULL_FATAL(root);
    api_response_t res = { 0 };
    unsigned count = 0;
    bool ok = webhook_input_list(root, asks, &count, &res);
    code[0] = '\0';
    if (!ok && res.problem_code)
        strncpy(code, res.problem_code, 63);
    free(res.body);
    cJSON_Delete(root);
    return ok ? (int)count : -1;
}

static void test_a_webhook_without_events_wants_every_kind(void)
{
    webhook_sub_ask_t asks[WEBHOOK_SUB_PER_REQUEST];
    char code[64];
    cJSON *root = cJSON_Parse("{\"webhooks\":[{\"url\":\"http://a/\"},{\"url\":\"http://b/\",\"events\":[\"end\",\"move\"]}]}");
    api_response_t res = { 0 };
    unsigned count = 0;
    CU_ASSERT_TRUE(webhook_input_list(root, asks, &count, &res));
    CU_ASSERT_EQUAL(count, 2);
    CU_ASSERT_STRING_EQUAL(asks[0].url, "http://a/");
    CU_ASSERT_EQUAL(asks[0].kinds, WEBHOOK_KIND_ALL);
    CU_ASSERT_EQUAL(asks[1].kinds, WEBHOOK_KIND_END | WEBHOOK_KIND_MOVE);
    cJSON_Delete(root);
    CU_ASSERT_EQUAL(read_list("{}", asks, code), 0);
}

static void test_malformed_webhooks_are_refused_as_invalid_fields(void)
{
    static const char *const bad[] = {
        "{\"webhooks\":{}}",
        "{\"webhooks\":[]}",
        "{\"webhooks\":[\"http://a/\"]}",
        "{\"webhooks\":[{}]}",
        "{\"webhooks\":[{\"url\":\"\"}]}",
        "{\"webhooks\":[{\"url\":7}]}",
        "{\"webhooks\":[{\"url\":\"http://a/\",\"events\":[]}]}",
        "{\"webhooks\":[{\"url\":\"http://a/\",\"events\":\"move\"}]}",
        "{\"webhooks\":[{\"url\":\"http://a/\",\"events\":[\"moves\"]}]}",
        "{\"webhooks\":[{\"url\":\"http://a/\",\"events\":[\"end\",\"end\"]}]}",
        "{\"webhooks\":[{\"url\":\"http://a/\",\"events\":[1]}]}",
    };
    webhook_sub_ask_t asks[WEBHOOK_SUB_PER_REQUEST];
    char code[64];
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        CU_ASSERT_EQUAL(read_list(bad[i], asks, code), -1);
        CU_ASSERT_STRING_EQUAL(code, "invalid_field");
    }
}

static void test_an_entry_with_an_unknown_member_is_an_unknown_field(void)
{
    webhook_sub_ask_t asks[WEBHOOK_SUB_PER_REQUEST];
    char code[64];
    CU_ASSERT_EQUAL(read_list("{\"webhooks\":[{\"url\":\"http://a/\",\"secret\":\"whsec_x\"}]}", asks, code), -1);
    CU_ASSERT_STRING_EQUAL(code, "unknown_field");
}

static void test_more_than_four_webhooks_are_too_many(void)
{
    webhook_sub_ask_t asks[WEBHOOK_SUB_PER_REQUEST];
    char code[64];
    CU_ASSERT_EQUAL(read_list("{\"webhooks\":[{\"url\":\"http://a/\"},{\"url\":\"http://a/\"},{\"url\":\"http://a/\"},"
                              "{\"url\":\"http://a/\"}]}", asks, code), 4);
    CU_ASSERT_EQUAL(read_list("{\"webhooks\":[{\"url\":\"http://a/\"},{\"url\":\"http://a/\"},{\"url\":\"http://a/\"},"
                              "{\"url\":\"http://a/\"},{\"url\":\"http://a/\"}]}", asks, code), -1);
    CU_ASSERT_STRING_EQUAL(code, "too_many_webhooks");
}

static void test_a_body_is_read_as_one_subscription(void)
{
    cJSON *root = cJSON_Parse("{\"url\":\"https://h.example/x\",\"events\":[\"offer\",\"takeback\",\"clock\"]}");
    webhook_sub_ask_t ask;
    api_response_t res = { 0 };
    CU_ASSERT_TRUE(webhook_input_ask(root, "", &ask, &res));
    CU_ASSERT_STRING_EQUAL(ask.url, "https://h.example/x");
    CU_ASSERT_EQUAL(ask.kinds, WEBHOOK_KIND_OFFER | WEBHOOK_KIND_TAKEBACK | WEBHOOK_KIND_CLOCK);
    cJSON_Delete(root);
}

int test_webhook_input_register(void)
{
    CU_pSuite suite = CU_add_suite("webhook_input", NULL, NULL);
    if (!suite)
        return CU_get_error();
    CU_ADD_TEST(suite, test_a_webhook_without_events_wants_every_kind);
    CU_ADD_TEST(suite, test_malformed_webhooks_are_refused_as_invalid_fields);
    CU_ADD_TEST(suite, test_an_entry_with_an_unknown_member_is_an_unknown_field);
    CU_ADD_TEST(suite, test_more_than_four_webhooks_are_too_many);
    CU_ADD_TEST(suite, test_a_body_is_read_as_one_subscription);
    return CU_get_error();
}
