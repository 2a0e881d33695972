/* Standard Webhooks signatures on OpenSSL 3 (see sign.h). Base64 is
 * OpenSSL's (EVP_EncodeBlock, EVP_DecodeBlock), never a table of our own;
 * the HMAC streams the id, timestamp and body, so the body is never copied.
 * Keys live on the stack and are wiped with OPENSSL_cleanse. */
#include "sign.h"

#include <inttypes.h>
#include <openssl/core_names.h>
#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/rand.h>
#include <stdio.h>
#include <string.h>

#include "../../rules/base/text.h"

enum { HMAC_SHA256_BYTES = 32, MESSAGE_ID_BYTES = 16 };

bool webhook_secret_make(char out[WEBHOOK_SECRET_SIZE])
{
    unsigned char bytes[WEBHOOK_SECRET_BYTES];
    out[0] = '\0';
    if (RAND_bytes(bytes, sizeof bytes) != 1) {
        OPENSSL_cleanse(bytes, sizeof bytes);
        return false;
    }
    memcpy(out, WEBHOOK_SECRET_PREFIX, sizeof WEBHOOK_SECRET_PREFIX - 1);
    EVP_EncodeBlock((unsigned char *)out + sizeof WEBHOOK_SECRET_PREFIX - 1, bytes, sizeof bytes);
    OPENSSL_cleanse(bytes, sizeof bytes);
    return true;
}

static bool is_base64_char(char c)
{
    return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '+' || c == '/';
}

bool webhook_secret_key(const char *secret, unsigned char key[WEBHOOK_KEY_MAX], size_t *key_length)
{
    *key_length = 0;
    size_t prefix = sizeof WEBHOOK_SECRET_PREFIX - 1;
    if (strncmp(secret, WEBHOOK_SECRET_PREFIX, prefix))
        return false;
    const char *text = secret + prefix;
    size_t length = strnlen(text, WEBHOOK_SECRET_SIZE);
    size_t padding = 0;
    while (padding < 2 && length > padding && text[length - 1 - padding] == '=')
        padding++;
    size_t digits = length - padding;
    if (digits % 4 == 1 || (padding && (digits + padding) % 4))
        return false;
    for (size_t i = 0; i < digits; i++)
        if (!is_base64_char(text[i]))
            return false;
    /* EVP_DecodeBlock takes whole quads: the padding put back when it was left off. */
    char quads[WEBHOOK_SECRET_SIZE + 4];
    size_t missing = (4 - digits % 4) % 4;
    if (digits + missing >= sizeof quads)
        return false;
    memcpy(quads, text, digits);
    memset(quads + digits, '=', missing);
    unsigned char decoded[sizeof quads];
    int n = EVP_DecodeBlock(decoded, (const unsigned char *)quads, (int)(digits + missing));
    bool ok = n >= 0 && (size_t)n >= missing;
    size_t bytes = ok ? (size_t)n - missing : 0;
    ok = ok && bytes >= WEBHOOK_KEY_MIN && bytes <= WEBHOOK_KEY_MAX;
    if (ok) {
        memcpy(key, decoded, bytes);
        *key_length = bytes;
    }
    OPENSSL_cleanse(decoded, sizeof decoded);
    OPENSSL_cleanse(quads, sizeof quads);
    return ok;
}

/* Whether id may be signed and sent in a header: 1 to 256 letters, digits,
 * '_' or '-' (webhook_message_id's form); a '.' would blur the content's parts. */
static bool id_ok(const char *id)
{
    size_t length = strnlen(id, 257);
    if (length == 0 || length > 256)
        return false;
    for (size_t i = 0; i < length; i++) {
        char c = id[i];
        if (!((c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_' || c == '-'))
            return false;
    }
    return true;
}

/* HMAC-SHA256(key, "id.timestamp.body") into mac; false when OpenSSL fails. */
static bool hmac_content(const unsigned char *key, size_t key_length, const char *id, const char *timestamp,
                         const void *body, size_t body_length, unsigned char mac[HMAC_SHA256_BYTES])
{
    EVP_MAC *hmac = EVP_MAC_fetch(NULL, "HMAC", NULL);
    EVP_MAC_CTX *ctx = hmac ? EVP_MAC_CTX_new(hmac) : NULL;
    OSSL_PARAM params[] = { OSSL_PARAM_construct_utf8_string(OSSL_MAC_PARAM_DIGEST, "SHA256", 0),
                            OSSL_PARAM_construct_end() };
    size_t written = 0;
    bool ok = ctx && EVP_MAC_init(ctx, key, key_length, params) == 1
              && EVP_MAC_update(ctx, (const unsigned char *)id, strlen(id)) == 1
              && EVP_MAC_update(ctx, (const unsigned char *)".", 1) == 1
              && EVP_MAC_update(ctx, (const unsigned char *)timestamp, strlen(timestamp)) == 1
              && EVP_MAC_update(ctx, (const unsigned char *)".", 1) == 1
              && (body_length == 0 || EVP_MAC_update(ctx, body, body_length) == 1)
              && EVP_MAC_final(ctx, mac, &written, HMAC_SHA256_BYTES) == 1 && written == HMAC_SHA256_BYTES;
    EVP_MAC_CTX_free(ctx);
    EVP_MAC_free(hmac);
    return ok;
}

bool webhook_sign(const char *const *secrets, size_t secret_count, const char *id, int64_t timestamp,
                  const void *body, size_t body_length, char out[WEBHOOK_SIGNATURE_SIZE])
{
    out[0] = '\0';
    if (secret_count == 0 || secret_count > WEBHOOK_SIGNATURES_MAX || !id_ok(id) || (!body && body_length))
        return false;
    char stamp[24];
    snprintf(stamp, sizeof stamp, "%" PRId64, timestamp);
    size_t used = 0;
    for (size_t i = 0; i < secret_count; i++) {
        unsigned char key[WEBHOOK_KEY_MAX], mac[HMAC_SHA256_BYTES];
        size_t key_length;
        bool ok = webhook_secret_key(secrets[i], key, &key_length)
                  && hmac_content(key, key_length, id, stamp, body, body_length, mac);
        OPENSSL_cleanse(key, sizeof key);
        if (!ok) {
            out[0] = '\0';
            return false;
        }
        /* Each signature takes WEBHOOK_SIGNATURE_ONE + 1 bytes at most (a space or the NUL). */
        used += text_copy(out + used, WEBHOOK_SIGNATURE_SIZE - used, i ? " v1," : "v1,");
        used += (size_t)EVP_EncodeBlock((unsigned char *)out + used, mac, sizeof mac);
    }
    return true;
}

bool webhook_message_id(const char *seed, char out[WEBHOOK_MESSAGE_ID_SIZE])
{
    unsigned char digest[EVP_MAX_MD_SIZE];
    unsigned int digest_length = 0;
    char encoded[28]; /* 16 bytes are 24 base64 characters with 2 of padding, and a NUL */
    out[0] = '\0';
    if (EVP_Digest(seed, strlen(seed), digest, &digest_length, EVP_sha256(), NULL) != 1
        || digest_length < MESSAGE_ID_BYTES)
        return false;
    EVP_EncodeBlock((unsigned char *)encoded, digest, MESSAGE_ID_BYTES);
    memcpy(out, "msg_", 4);
    for (int i = 0; i < 22; i++)
        out[4 + i] = encoded[i] == '+' ? '-' : encoded[i] == '/' ? '_' : encoded[i];
    out[26] = '\0';
    return true;
}
