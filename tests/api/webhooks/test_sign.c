/* Tests for api/webhooks/sign.c: the Standard Webhooks libraries' published
 * vector (standard-webhooks/standard-webhooks, libraries' "sign function
 * works" tests), a rotation's two signatures, made secrets and their keys,
 * bad secrets and ids refused, message ids repeated for one seed. */
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <string.h>

#include "../../../api/webhooks/sign.h"
#include "../../support/tests.h"
#include "webhooks_tests.h"

/* The published vector: every library of the specification signs it so. */
#define VECTOR_SECRET "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"
#define VECTOR_ID "msg_p5jXN8AQM9LWM0D4loKWxJek"
#define VECTOR_TIMESTAMP 1614265330
#define VECTOR_BODY "{\"test\": 2432232314}"
#define VECTOR_SIGNATURE "v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE="

static void test_the_published_vector_is_reproduced(void)
{
    const char *secrets[] = { VECTOR_SECRET };
    char out[WEBHOOK_SIGNATURE_SIZE];
    CU_ASSERT_TRUE(webhook_sign(secrets, 1, VECTOR_ID, VECTOR_TIMESTAMP, VECTOR_BODY, strlen(VECTOR_BODY), out));
    CU_ASSERT_STRING_EQUAL(out, VECTOR_SIGNATURE);
}

static void test_a_rotation_gives_one_signature_per_secret(void)
{
    char second[WEBHOOK_SECRET_SIZE];
    CU_ASSERT_TRUE_FATAL(webhook_secret_make(second));
    const char *secrets[] = { VECTOR_SECRET, second };
    char both[WEBHOOK_SIGNATURE_SIZE], alone[WEBHOOK_SIGNATURE_SIZE];
    CU_ASSERT_TRUE(webhook_sign(secrets, 2, VECTOR_ID, VECTOR_TIMESTAMP, VECTOR_BODY, strlen(VECTOR_BODY), both));
    CU_ASSERT_TRUE(webhook_sign(secrets + 1, 1, VECTOR_ID, VECTOR_TIMESTAMP, VECTOR_BODY, strlen(VECTOR_BODY), alone));
    char want[2 * WEBHOOK_SIGNATURE_SIZE];
    snprintf(want, sizeof want, "%s %s", VECTOR_SIGNATURE, alone);
    CU_ASSERT_STRING_EQUAL(both, want);
    CU_ASSERT_EQUAL(strlen(alone), WEBHOOK_SIGNATURE_ONE);
    /* Four secrets fill the header's room exactly; a fifth is refused. */
    const char *four[] = { VECTOR_SECRET, second, VECTOR_SECRET, second, second };
    char out[WEBHOOK_SIGNATURE_SIZE];
    CU_ASSERT_TRUE(webhook_sign(four, 4, VECTOR_ID, 1, "", 0, out));
    CU_ASSERT_EQUAL(strlen(out), WEBHOOK_SIGNATURE_SIZE - 1);
    CU_ASSERT_FALSE(webhook_sign(four, 5, VECTOR_ID, 1, "", 0, out));
    CU_ASSERT_STRING_EQUAL(out, "");
}

static void test_a_made_secret_is_whsec_and_32_bytes_of_base64(void)
{
    char a[WEBHOOK_SECRET_SIZE], b[WEBHOOK_SECRET_SIZE];
    CU_ASSERT_TRUE_FATAL(webhook_secret_make(a));
    CU_ASSERT_TRUE_FATAL(webhook_secret_make(b));
    CU_ASSERT_EQUAL(strncmp(a, "whsec_", 6), 0);
    CU_ASSERT_EQUAL(strlen(a), 6 + 44);
    CU_ASSERT_EQUAL(a[strlen(a) - 1], '='); /* 32 bytes: one '=' of padding */
    CU_ASSERT_STRING_NOT_EQUAL(a, b);
    unsigned char key[WEBHOOK_KEY_MAX];
    size_t length = 0;
    CU_ASSERT_TRUE(webhook_secret_key(a, key, &length));
    CU_ASSERT_EQUAL(length, WEBHOOK_SECRET_BYTES);
    /* The same key read back from standard base64, as a subscriber's library would. */
    unsigned char decoded[48];
    CU_ASSERT_EQUAL(EVP_DecodeBlock(decoded, (const unsigned char *)a + 6, 44), 33);
    CU_ASSERT_EQUAL(memcmp(decoded, key, 32), 0);
}

static void test_bad_secrets_and_ids_are_refused(void)
{
    static const char *const bad[] = {
        "MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw",          /* no prefix */
        "whsec_",                                    /* nothing */
        "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLa",      /* 21 bytes: under 24 */
        "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaS",     /* a length base64 never has */
        "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaS=w",   /* padding inside */
        "whsec_MfKQ9r8GKYqrTwjUPD8I-PZIo2LaLaSw",    /* base64url, not base64 */
        "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw===", /* too much padding */
    };
    unsigned char key[WEBHOOK_KEY_MAX];
    size_t length;
    char out[WEBHOOK_SIGNATURE_SIZE];
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        CU_ASSERT_FALSE(webhook_secret_key(bad[i], key, &length));
        CU_ASSERT_FALSE(webhook_sign(&bad[i], 1, VECTOR_ID, 1, "{}", 2, out));
    }
    const char *secrets[] = { VECTOR_SECRET };
    CU_ASSERT_FALSE(webhook_sign(secrets, 1, "", 1, "{}", 2, out));
    CU_ASSERT_FALSE(webhook_sign(secrets, 1, "msg.1", 1, "{}", 2, out));
    CU_ASSERT_FALSE(webhook_sign(secrets, 1, "msg_1\r\nX: y", 1, "{}", 2, out));
    CU_ASSERT_FALSE(webhook_sign(secrets, 0, VECTOR_ID, 1, "{}", 2, out));
    /* Padding may be left off, as the vector's secret has none to show. */
    CU_ASSERT_TRUE(webhook_secret_key("whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSwAA", key, &length)); /* 25 bytes */
    CU_ASSERT_EQUAL(length, 25);
    CU_ASSERT_TRUE(webhook_secret_key("whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSwAA==", key, &length));
    CU_ASSERT_EQUAL(length, 25);
}

static void test_a_message_id_is_the_same_for_the_same_seed(void)
{
    char a[WEBHOOK_MESSAGE_ID_SIZE], b[WEBHOOK_MESSAGE_ID_SIZE], c[WEBHOOK_MESSAGE_ID_SIZE];
    CU_ASSERT_TRUE(webhook_message_id("sub_1:game:abc:v42", a));
    CU_ASSERT_TRUE(webhook_message_id("sub_1:game:abc:v42", b));
    CU_ASSERT_TRUE(webhook_message_id("sub_1:game:abc:v43", c));
    CU_ASSERT_STRING_EQUAL(a, b);
    CU_ASSERT_STRING_NOT_EQUAL(a, c);
    CU_ASSERT_EQUAL(strlen(a), 26);
    CU_ASSERT_EQUAL(strncmp(a, "msg_", 4), 0);
    CU_ASSERT_EQUAL(strspn(a + 4, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"), 22);
    /* SHA-256("abc") starts ba7816bf 8f01cfea 414140de 5dae2223: base64url "ungWv48Bz-pBQUDeXa4iIw". */
    CU_ASSERT_TRUE(webhook_message_id("abc", a));
    CU_ASSERT_STRING_EQUAL(a, "msg_ungWv48Bz-pBQUDeXa4iIw");
    /* An id made here can be signed. */
    const char *secrets[] = { VECTOR_SECRET };
    char out[WEBHOOK_SIGNATURE_SIZE];
    CU_ASSERT_TRUE(webhook_sign(secrets, 1, a, 1, "{}", 2, out));
}

void webhooks_sign_tests_add(CU_pSuite suite)
{
    CU_add_test(suite, "the published vector is reproduced", test_the_published_vector_is_reproduced);
    CU_add_test(suite, "a rotation gives one signature per secret", test_a_rotation_gives_one_signature_per_secret);
    CU_add_test(suite, "a made secret is whsec_ and 32 bytes of base64",
                test_a_made_secret_is_whsec_and_32_bytes_of_base64);
    CU_add_test(suite, "bad secrets and ids are refused", test_bad_secrets_and_ids_are_refused);
    CU_add_test(suite, "a message id is the same for the same seed", test_a_message_id_is_the_same_for_the_same_seed);
}
