/* Tests for api/http/body.c: a request body is read strictly before and
 * around cJSON. The media type is checked by its name alone; nesting past the
 * caller's bound, invalid UTF-8, a NUL (raw or \u0000), anything but an
 * object, a key twice or a key the endpoint does not accept are each refused
 * with their own status and a detail; an empty body is {}. Boolean query
 * values are true/1 and false/0 only. */
#include <string.h>

#include "../../../api/http/body.h"
#include "../../support/tests.h"

static const char *const allowed[] = { "fen", "moves", NULL };

/* Parses text (a C string) as a body of type content_type, depth bound 4. */
static body_status_t parse(const char *text, const char *content_type, cJSON **out)
{
    char detail[160] = "";
    body_status_t status = body_parse_object(text, strlen(text), content_type, 4, allowed, out, detail, sizeof detail);
    if (status != BODY_OK) {
        CU_ASSERT(detail[0] != '\0'); /* every refusal says why */
        CU_ASSERT_PTR_NULL(*out);
    }
    return status;
}

static void test_an_object_with_accepted_keys_is_parsed(void)
{
    cJSON *root = NULL;
    CU_ASSERT_EQUAL_FATAL(parse("{\"fen\": \"x\", \"moves\": [\"e2e4\"]}", "application/json; charset=utf-8", &root),
                          BODY_OK);
    CU_ASSERT_STRING_EQUAL(cJSON_GetObjectItemCaseSensitive(root, "fen")->valuestring, "x");
    cJSON_Delete(root);
}

static void test_an_empty_body_is_an_empty_object(void)
{
    cJSON *root = NULL;
    CU_ASSERT_EQUAL_FATAL(parse("", "text/html", &root), BODY_OK); /* no body: its type does not matter */
    CU_ASSERT_TRUE(cJSON_IsObject(root));
    CU_ASSERT_PTR_NULL(root->child);
    cJSON_Delete(root);
}

static void test_another_media_type_is_refused(void)
{
    cJSON *root = NULL;
    CU_ASSERT_EQUAL(parse("{}", "text/plain", &root), BODY_EMEDIA_TYPE);
    CU_ASSERT_EQUAL(parse("{}", "application/jsonx", &root), BODY_EMEDIA_TYPE);
    CU_ASSERT_EQUAL(parse("{}", NULL, &root), BODY_OK); /* none given: taken as JSON */
    cJSON_Delete(root);
    CU_ASSERT_TRUE(body_media_type_is("Application/JSON ; charset=utf-8", "application/json"));
    CU_ASSERT_FALSE(body_media_type_is("application/json-seq", "application/json"));
}

static void test_nesting_past_the_bound_is_refused_before_parsing(void)
{
    cJSON *root = NULL;
    CU_ASSERT_EQUAL(parse("{\"moves\": [[[[1]]]]}", NULL, &root), BODY_EINVALID_JSON); /* depth 5 > 4 */
    CU_ASSERT_EQUAL(parse("{\"moves\": [[[1]]]}", NULL, &root), BODY_OK);              /* depth 4 */
    cJSON_Delete(root);
    root = NULL;
    CU_ASSERT_EQUAL(parse("{\"fen\": \"[[[[[[[[\"}", NULL, &root), BODY_OK); /* brackets inside a string do not count */
    cJSON_Delete(root);
}

static void test_bytes_a_c_string_would_cut_or_misread_are_refused(void)
{
    cJSON *root = NULL;
    CU_ASSERT_EQUAL(parse("{\"fen\": \"a\\u0000b\"}", NULL, &root), BODY_EINVALID_JSON);
    CU_ASSERT_EQUAL(parse("{\"fen\": \"\xc3\x28\"}", NULL, &root), BODY_EINVALID_JSON); /* invalid UTF-8 */
    char detail[160] = "";
    const char with_nul[] = "{\"fen\": \"a\0b\"}";
    CU_ASSERT_EQUAL(body_parse_object(with_nul, sizeof with_nul - 1, NULL, 4, allowed, &root, detail, sizeof detail),
                    BODY_EINVALID_JSON);
    CU_ASSERT_PTR_NOT_NULL(strstr(detail, "NUL"));
}

static void test_anything_but_one_object_of_known_keys_once_is_refused(void)
{
    cJSON *root = NULL;
    CU_ASSERT_EQUAL(parse("[1, 2]", NULL, &root), BODY_EINVALID_JSON);
    CU_ASSERT_EQUAL(parse("{\"fen\": ", NULL, &root), BODY_EINVALID_JSON);
    CU_ASSERT_EQUAL(parse("{} {}", NULL, &root), BODY_EINVALID_JSON); /* one document only */
    CU_ASSERT_EQUAL(parse("{\"fen\": \"a\", \"fen\": \"b\"}", NULL, &root), BODY_EINVALID_JSON);
    CU_ASSERT_EQUAL(parse("{\"Fen\": \"a\"}", NULL, &root), BODY_EUNKNOWN_FIELD);
}

static void test_boolean_values_are_true_1_false_0_only(void)
{
    char detail[96] = "";
    bool value = false;
    CU_ASSERT_EQUAL(body_bool("check", NULL, true, &value, detail, sizeof detail), BODY_OK);
    CU_ASSERT_TRUE(value); /* absent: the fallback */
    CU_ASSERT_EQUAL(body_bool("check", "0", true, &value, detail, sizeof detail), BODY_OK);
    CU_ASSERT_FALSE(value);
    CU_ASSERT_EQUAL(body_bool("check", "true", false, &value, detail, sizeof detail), BODY_OK);
    CU_ASSERT_TRUE(value);
    CU_ASSERT_EQUAL(body_bool("check", "yes", false, &value, detail, sizeof detail), BODY_EINVALID_VALUE);
    CU_ASSERT_PTR_NOT_NULL(strstr(detail, "'check'"));
    CU_ASSERT_EQUAL(body_bool("check", "TRUE", false, &value, detail, sizeof detail), BODY_EINVALID_VALUE);
}

int test_body_register(void)
{
    CU_pSuite suite = CU_add_suite("body", NULL, NULL);
    if (!suite)
        return CU_get_error();
    CU_ADD_TEST(suite, test_an_object_with_accepted_keys_is_parsed);
    CU_ADD_TEST(suite, test_an_empty_body_is_an_empty_object);
    CU_ADD_TEST(suite, test_another_media_type_is_refused);
    CU_ADD_TEST(suite, test_nesting_past_the_bound_is_refused_before_parsing);
    CU_ADD_TEST(suite, test_bytes_a_c_string_would_cut_or_misread_are_refused);
    CU_ADD_TEST(suite, test_anything_but_one_object_of_known_keys_once_is_refused);
    CU_ADD_TEST(suite, test_boolean_values_are_true_1_false_0_only);
    return CU_get_error();
}
