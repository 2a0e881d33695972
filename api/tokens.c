/* See tokens.h. The secret is written once, before any thread starts. */
#include "tokens.h"

#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <openssl/rand.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

static unsigned char secret[64];
static size_t secret_length;
static unsigned char seal_key[32]; /* HMAC(secret, "chessd sealed answers") */

static void derive_seal_key(void)
{
    static const char label[] = "chessd sealed answers";
    unsigned length = 0;
    HMAC(EVP_sha256(), secret, (int)secret_length, (const unsigned char *)label, sizeof label - 1, seal_key, &length);
}

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
        derive_seal_key();
        return true;
    }
    RAND_bytes(secret, 32);
    secret_length = 32;
    derive_seal_key();
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

/* n random bytes from OpenSSL, written as base64url into out. */
static bool random_text(size_t n, char *out)
{
    unsigned char bytes[16];
    if (n > sizeof bytes || RAND_bytes(bytes, (int)n) != 1)
        return false;
    base64url(bytes, n, out);
    return true;
}

bool tokens_new_id(char out[TOKENS_ID_SIZE]) { return random_text(12, out); }

bool tokens_new_token(char out[TOKENS_TOKEN_SIZE]) { return random_text(16, out); }

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

bool tokens_hash_equal(const char *hash, const char *stored_hash)
{
    return strlen(stored_hash) == TOKENS_HASH_SIZE - 1 && strlen(hash) == TOKENS_HASH_SIZE - 1
           && CRYPTO_memcmp(hash, stored_hash, TOKENS_HASH_SIZE - 1) == 0;
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

enum { SEAL_NONCE = 12, SEAL_TAG = 16 };

char *tokens_seal(const char *text, size_t length)
{
    size_t raw_length = SEAL_NONCE + SEAL_TAG + length;
    unsigned char *raw = malloc(raw_length);
    char *out = malloc(4 * ((raw_length + 2) / 3) + 1);
    EVP_CIPHER_CTX *ctx = EVP_CIPHER_CTX_new();
    int n = 0, final = 0;
    bool ok = raw && out && ctx && length <= INT32_MAX && RAND_bytes(raw, SEAL_NONCE) == 1
              && EVP_EncryptInit_ex(ctx, EVP_aes_256_gcm(), NULL, seal_key, raw) == 1
              && EVP_EncryptUpdate(ctx, raw + SEAL_NONCE + SEAL_TAG, &n, (const unsigned char *)text, (int)length) == 1
              && EVP_EncryptFinal_ex(ctx, raw + SEAL_NONCE + SEAL_TAG + n, &final) == 1
              && EVP_CIPHER_CTX_ctrl(ctx, EVP_CTRL_GCM_GET_TAG, SEAL_TAG, raw + SEAL_NONCE) == 1;
    if (ok)
        EVP_EncodeBlock((unsigned char *)out, raw, (int)raw_length);
    EVP_CIPHER_CTX_free(ctx);
    free(raw);
    if (!ok) {
        free(out);
        return NULL;
    }
    return out;
}

char *tokens_open(const char *sealed)
{
    size_t sealed_length = strlen(sealed);
    if (sealed_length % 4 || sealed_length > (size_t)INT32_MAX)
        return NULL;
    unsigned char *raw = malloc(sealed_length / 4 * 3 + 1);
    if (!raw)
        return NULL;
    int raw_length = EVP_DecodeBlock(raw, (const unsigned char *)sealed, (int)sealed_length);
    /* EVP_DecodeBlock counts the padding as zero bytes. */
    if (raw_length >= 0 && sealed_length >= 1 && sealed[sealed_length - 1] == '=')
        raw_length -= sealed_length >= 2 && sealed[sealed_length - 2] == '=' ? 2 : 1;
    char *out = NULL;
    EVP_CIPHER_CTX *ctx = NULL;
    if (raw_length < SEAL_NONCE + SEAL_TAG)
        goto done;
    int length = raw_length - SEAL_NONCE - SEAL_TAG, n = 0, final = 0;
    out = malloc((size_t)length + 1);
    ctx = EVP_CIPHER_CTX_new();
    bool ok = out && ctx && EVP_DecryptInit_ex(ctx, EVP_aes_256_gcm(), NULL, seal_key, raw) == 1
              && EVP_DecryptUpdate(ctx, (unsigned char *)out, &n, raw + SEAL_NONCE + SEAL_TAG, length) == 1
              && EVP_CIPHER_CTX_ctrl(ctx, EVP_CTRL_GCM_SET_TAG, SEAL_TAG, raw + SEAL_NONCE) == 1
              && EVP_DecryptFinal_ex(ctx, (unsigned char *)out + n, &final) == 1;
    if (ok) {
        out[n + final] = '\0';
    } else {
        free(out);
        out = NULL;
    }
done:
    EVP_CIPHER_CTX_free(ctx);
    free(raw);
    return out;
}
