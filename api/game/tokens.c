/* See tokens.h. The secret and the sealing key are written once, under
 * init_lock, then published by the release store to `ready`; readers check
 * `ready` (acquire) before they touch either. */
#include "tokens.h"

#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <openssl/rand.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "../../rules/base/hex.h"

enum { SHA256_SIZE = 32 };

static pthread_mutex_t init_lock = PTHREAD_MUTEX_INITIALIZER;
static atomic_bool ready;
static unsigned char secret[64];
static size_t secret_length;
static unsigned char seal_key[SHA256_SIZE]; /* HMAC(secret, "chessd sealed answers") */
/* SHA-256 after the HMAC key's inner and outer pads (RFC 2104): a token's
 * HMAC starts from copies of these instead of hashing the pads each time. */
static EVP_MD_CTX *inner_pad, *outer_pad;

/* inner_pad and outer_pad for key; false (both freed) on failure. */
static bool pads_init(const unsigned char *key, size_t key_length)
{
    enum { BLOCK = 64 };
    unsigned char ipad[BLOCK], opad[BLOCK];
    for (size_t i = 0; i < BLOCK; i++) {
        unsigned char k = i < key_length ? key[i] : 0;
        ipad[i] = k ^ 0x36;
        opad[i] = k ^ 0x5c;
    }
    EVP_MD_CTX_free(inner_pad);
    EVP_MD_CTX_free(outer_pad);
    inner_pad = EVP_MD_CTX_new();
    outer_pad = EVP_MD_CTX_new();
    bool ok = inner_pad && outer_pad && EVP_DigestInit_ex(inner_pad, EVP_sha256(), NULL)
              && EVP_DigestUpdate(inner_pad, ipad, BLOCK) && EVP_DigestInit_ex(outer_pad, EVP_sha256(), NULL)
              && EVP_DigestUpdate(outer_pad, opad, BLOCK);
    OPENSSL_cleanse(ipad, sizeof ipad);
    OPENSSL_cleanse(opad, sizeof opad);
    if (!ok) {
        EVP_MD_CTX_free(inner_pad);
        EVP_MD_CTX_free(outer_pad);
        inner_pad = outer_pad = NULL;
    }
    return ok;
}

/* HMAC-SHA256 of data under the secret, from the precomputed pads. */
static bool hmac_sha256(const unsigned char *data, size_t length, unsigned char mac[SHA256_SIZE])
{
    unsigned char inner[SHA256_SIZE];
    unsigned n = 0, m = 0;
    EVP_MD_CTX *ctx = EVP_MD_CTX_new();
    bool ok = ctx && EVP_MD_CTX_copy_ex(ctx, inner_pad) && EVP_DigestUpdate(ctx, data, length)
              && EVP_DigestFinal_ex(ctx, inner, &n) && n == SHA256_SIZE && EVP_MD_CTX_copy_ex(ctx, outer_pad)
              && EVP_DigestUpdate(ctx, inner, SHA256_SIZE) && EVP_DigestFinal_ex(ctx, mac, &m) && m == SHA256_SIZE;
    EVP_MD_CTX_free(ctx);
    return ok;
}

/* Fills secret and seal_key from text; on failure leaves both zeroed. */
static bool derive(const char *text)
{
    static const char label[] = "chessd sealed answers";
    size_t n = strlen(text);
    unsigned length = 0;
    bool ok;
    if (n > sizeof secret) { /* long secrets are hashed down, as HMAC itself would */
        ok = EVP_Digest(text, n, secret, &length, EVP_sha256(), NULL) && length == SHA256_SIZE;
        secret_length = length;
    } else {
        memcpy(secret, text, n);
        secret_length = n;
        ok = true;
    }
    ok = ok && HMAC(EVP_sha256(), secret, (int)secret_length, (const unsigned char *)label, sizeof label - 1, seal_key,
                    &length)
         && length == SHA256_SIZE && pads_init(secret, secret_length);
    if (!ok) {
        OPENSSL_cleanse(secret, sizeof secret);
        OPENSSL_cleanse(seal_key, sizeof seal_key);
        secret_length = 0;
    }
    return ok;
}

bool tokens_init(const char *text)
{
    if (!text || !*text)
        return false;
    pthread_mutex_lock(&init_lock);
    bool ok = !atomic_load_explicit(&ready, memory_order_relaxed) && derive(text);
    if (ok)
        atomic_store_explicit(&ready, true, memory_order_release);
    pthread_mutex_unlock(&init_lock);
    return ok;
}

bool tokens_ready(void) { return atomic_load_explicit(&ready, memory_order_acquire); }

static const char alphabet[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";

static void base64url(const unsigned char *bytes, size_t n, char *out)
{
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

/* n random bytes from OpenSSL, written as base64url into out; on failure
 * out is the empty string. */
static bool random_text(size_t n, char *out)
{
    unsigned char bytes[32];
    out[0] = '\0';
    if (n > sizeof bytes || RAND_bytes(bytes, (int)n) != 1)
        return false;
    base64url(bytes, n, out);
    OPENSSL_cleanse(bytes, sizeof bytes);
    return true;
}

bool tokens_new_secret(char out[TOKENS_SECRET_TEXT_SIZE]) { return random_text(32, out); }

bool tokens_random_below(uint32_t bound, uint32_t *out)
{
    if (bound == 0)
        return false;
    uint32_t limit = UINT32_MAX - (uint32_t)(((uint64_t)UINT32_MAX + 1) % bound); /* last draw kept */
    for (;;) {
        uint32_t draw;
        if (RAND_bytes((unsigned char *)&draw, sizeof draw) != 1)
            return false;
        if (draw <= limit) {
            *out = draw % bound;
            return true;
        }
    }
}

bool tokens_new_id(char out[TOKENS_ID_SIZE]) { return random_text(12, out); }

const char *tokens_id_alphabet(void) { return alphabet; }

bool tokens_new_id_where(char out[TOKENS_ID_SIZE], bool (*fits)(const char *id, void *ctx), void *ctx)
{
    enum { TAIL = 3, TAILS = 1 << (6 * TAIL) };
    for (int draw = 0; draw < 4; draw++) {
        if (!tokens_new_id(out))
            return false;
        /* The last characters walk through all their values from the drawn
         * ones: the id keeps the rest of its random bits. */
        char *tail = out + TOKENS_ID_SIZE - 1 - TAIL;
        unsigned start = 0;
        for (int i = 0; i < TAIL; i++)
            start = start << 6 | (unsigned)(strchr(alphabet, tail[i]) - alphabet);
        for (unsigned k = 0; k < TAILS; k++) {
            unsigned value = (start + k) % TAILS;
            for (int i = TAIL - 1; i >= 0; i--, value >>= 6)
                tail[i] = alphabet[value & 63];
            if (fits(out, ctx))
                return true;
        }
    }
    out[0] = '\0';
    return false;
}

bool tokens_new_token(char out[TOKENS_TOKEN_SIZE]) { return random_text(16, out); }

/* Write ids need to differ, not to be secret: each thread draws them from
 * splitmix64 over a 64-bit state seeded once from RAND_bytes, which costs
 * as much as the rest of a move's work when asked each time. */
static uint64_t splitmix64(uint64_t *state)
{
    uint64_t z = (*state += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

bool tokens_new_write_id(char out[TOKENS_ID_SIZE])
{
    static _Thread_local uint64_t state;
    static _Thread_local bool seeded;
    out[0] = '\0';
    if (!seeded) {
        if (RAND_bytes((unsigned char *)&state, sizeof state) != 1)
            return false;
        seeded = true;
    }
    uint64_t a = splitmix64(&state), b = splitmix64(&state);
    unsigned char bytes[12];
    memcpy(bytes, &a, 8);
    memcpy(bytes + 8, &b, 4);
    base64url(bytes, sizeof bytes, out);
    return true;
}

bool tokens_hash(const char *token, char out[TOKENS_HASH_SIZE])
{
    unsigned char mac[SHA256_SIZE];
    out[0] = '\0';
    if (!tokens_ready() || !hmac_sha256((const unsigned char *)token, strlen(token), mac))
        return false;
    hex_encode(mac, SHA256_SIZE, out);
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
    bool ok = tokens_ready() && raw && out && ctx && length <= INT32_MAX && RAND_bytes(raw, SEAL_NONCE) == 1
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
    if (!tokens_ready() || sealed_length % 4 || sealed_length > (size_t)INT32_MAX)
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
