/* See tokens.h. The secret is written once, before any thread starts. */
#include "tokens.h"

#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <openssl/rand.h>
#include <string.h>

static unsigned char secret[64];
static size_t secret_length;

bool tokens_init(const char *text)
{
    if (text && *text) {
        size_t n = strlen(text);
        /* Long secrets are hashed down, as HMAC itself would. */
        if (n > sizeof secret) {
            unsigned len = 0;
            EVP_Digest(text, n, secret, &len, EVP_sha256(), NULL);
            secret_length = len;
        } else {
            memcpy(secret, text, n);
            secret_length = n;
        }
        return true;
    }
    RAND_bytes(secret, 32);
    secret_length = 32;
    return false;
}

static void base64url(const unsigned char *bytes, size_t n, char *out)
{
    static const char alphabet[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
    size_t o = 0;
    unsigned bits = 0, value = 0;
    for (size_t i = 0; i < n; i++) {
        value = (value << 8) | bytes[i];
        bits += 8;
        while (bits >= 6) {
            bits -= 6;
            out[o++] = alphabet[(value >> bits) & 63];
        }
    }
    if (bits)
        out[o++] = alphabet[(value << (6 - bits)) & 63];
    out[o] = '\0';
}

bool tokens_new_id(char out[TOKENS_ID_SIZE])
{
    unsigned char bytes[12];
    if (RAND_bytes(bytes, sizeof bytes) != 1)
        return false;
    base64url(bytes, sizeof bytes, out);
    return true;
}

bool tokens_new_token(char out[TOKENS_TOKEN_SIZE])
{
    unsigned char bytes[16];
    if (RAND_bytes(bytes, sizeof bytes) != 1)
        return false;
    base64url(bytes, sizeof bytes, out);
    return true;
}

bool tokens_hash(const char *token, char out[TOKENS_HASH_SIZE])
{
    unsigned char mac[EVP_MAX_MD_SIZE];
    unsigned length = 0;
    if (!HMAC(EVP_sha256(), secret, (int)secret_length, (const unsigned char *)token, strlen(token), mac, &length))
        return false;
    static const char hex[] = "0123456789abcdef";
    for (unsigned i = 0; i < length && i < 32; i++) {
        out[2 * i] = hex[mac[i] >> 4];
        out[2 * i + 1] = hex[mac[i] & 15];
    }
    out[64] = '\0';
    return true;
}

bool tokens_match(const char *token, const char *stored_hash)
{
    char computed[TOKENS_HASH_SIZE];
    if (strlen(stored_hash) != TOKENS_HASH_SIZE - 1 || !tokens_hash(token, computed))
        return false;
    return CRYPTO_memcmp(computed, stored_hash, TOKENS_HASH_SIZE - 1) == 0;
}

bool tokens_is_id(const char *text)
{
    size_t n = strlen(text);
    if (n != TOKENS_ID_SIZE - 1)
        return false;
    for (size_t i = 0; i < n; i++) {
        char c = text[i];
        if (!((c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-' || c == '_'))
            return false;
    }
    return true;
}
