/* The Idempotency-Key protocol (see idempotency.h). */
#include "idempotency.h"

#include <inttypes.h>
#include <openssl/evp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../rules/base/hex.h"
#include "tokens.h"

idem_key_check_t idem_check_key(const char *key, bool creation, char *detail, size_t detail_size)
{
    static const char base64url[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
    size_t length = strlen(key);
    if (!creation) {
        if (length >= 1 && length <= IDEM_KEY_MAX)
            return IDEM_KEY_OK;
        snprintf(detail, detail_size, "Idempotency-Key must be 1 to %d characters", IDEM_KEY_MAX);
        return IDEM_KEY_INVALID;
    }
    size_t valid = strspn(key, base64url);
    if (length < IDEM_CREATION_KEY_MIN || length > IDEM_KEY_MAX)
        snprintf(detail, detail_size, "a creation Idempotency-Key is the secret that guards the new game's "
                 "tokens, so it must be %d to %d characters (128 random bits in base64url, or a UUID); this one "
                 "has %zu", IDEM_CREATION_KEY_MIN, IDEM_KEY_MAX, length);
    else if (valid < length)
        snprintf(detail, detail_size, "a creation Idempotency-Key may hold only A-Z, a-z, 0-9, '-' and '_'; "
                 "character %zu is not one of them", valid + 1);
    else
        return IDEM_KEY_OK;
    return IDEM_KEY_WEAK;
}

bool idem_fingerprint(const char *method, const char *path, const char *query, size_t query_length,
                      const char *if_match, const char *body, size_t body_length, char out[IDEM_FINGERPRINT_SIZE])
{
    unsigned char digest[EVP_MAX_MD_SIZE];
    unsigned length = 0;
    const char *precondition = if_match ? if_match : "";
    EVP_MD_CTX *ctx = EVP_MD_CTX_new();
    bool ok = ctx && EVP_DigestInit_ex(ctx, EVP_sha256(), NULL) && EVP_DigestUpdate(ctx, method, strlen(method))
              && EVP_DigestUpdate(ctx, " ", 1) && EVP_DigestUpdate(ctx, path, strlen(path))
              && EVP_DigestUpdate(ctx, "\n?", 2) && EVP_DigestUpdate(ctx, query, query_length)
              && EVP_DigestUpdate(ctx, if_match ? "\n+" : "\n-", 2)
              && EVP_DigestUpdate(ctx, precondition, strlen(precondition)) && EVP_DigestUpdate(ctx, "\n", 1)
              && EVP_DigestUpdate(ctx, body, body_length) && EVP_DigestFinal_ex(ctx, digest, &length)
              && length == 32;
    EVP_MD_CTX_free(ctx);
    out[0] = '\0';
    if (!ok)
        return false;
    hex_encode(digest, 32, out);
    return true;
}

char *idem_kept_seal(const char *fingerprint, unsigned status, uint64_t version, const char *location,
                     const char *body, size_t body_length)
{
    /* A location idem_kept_open() could not read back is refused here, not found out at a retry. */
    if (strlen(fingerprint) != IDEM_FINGERPRINT_SIZE - 1 || strchr(location, '\n')
        || strlen(location) >= IDEM_LOCATION_SIZE)
        return NULL;
    size_t size = body_length + IDEM_FINGERPRINT_SIZE + IDEM_LOCATION_SIZE + 48;
    char *plain = malloc(size);
    if (!plain)
        return NULL;
    int n = snprintf(plain, size, "%s %u %" PRIu64 "\n%s\n", fingerprint, status, version, location);
    char *sealed = NULL;
    if (n > 0 && (size_t)n + body_length < size) {
        memcpy(plain + n, body, body_length);
        sealed = tokens_seal(plain, (size_t)n + body_length);
    }
    free(plain);
    return sealed;
}

/* Reads the decimal digits at *p, which must end with `stop`, into *value
 * (no sign, no overflow), and moves *p past the stop. */
static bool read_number(const char **p, char stop, uint64_t *value)
{
    const char *s = *p;
    uint64_t v = 0;
    if (*s < '0' || *s > '9')
        return false;
    for (; *s >= '0' && *s <= '9'; s++) {
        unsigned digit = (unsigned)(*s - '0');
        if (v > (UINT64_MAX - digit) / 10)
            return false;
        v = v * 10 + digit;
    }
    if (*s != stop)
        return false;
    *value = v;
    *p = s + 1;
    return true;
}

/* Reads an opened kept answer into *out (the body copied). The first line
 * must be exactly "<64 lowercase hex> <status> <version>", as
 * idem_kept_seal() writes it: anything else is corrupt, not another request. */
static idem_replay_t read_kept(const char *kept, const char *fingerprint, idem_answer_t *out)
{
    size_t hex = hex_span(kept);
    if (hex != IDEM_FINGERPRINT_SIZE - 1 || kept[hex] != ' ')
        return IDEM_REPLAY_CORRUPT;
    const char *p = kept + hex + 1;
    uint64_t status = 0, version = 0;
    if (!read_number(&p, ' ', &status) || !read_number(&p, '\n', &version) || status < 100 || status > 599)
        return IDEM_REPLAY_CORRUPT;
    const char *line3 = strchr(p, '\n');
    if (!line3 || (size_t)(line3 - p) >= sizeof out->location)
        return IDEM_REPLAY_CORRUPT;
    if (memcmp(fingerprint, kept, hex))
        return IDEM_REPLAY_OTHER;
    size_t location_length = (size_t)(line3 - p);
    memcpy(out->location, p, location_length);
    out->location[location_length] = '\0';
    out->body_length = strlen(line3 + 1);
    out->body = malloc(out->body_length + 1);
    if (!out->body)
        return IDEM_REPLAY_CORRUPT;
    memcpy(out->body, line3 + 1, out->body_length + 1);
    out->status = (unsigned)status;
    out->version = version;
    return IDEM_REPLAY_OK;
}

idem_replay_t idem_kept_open(const char *sealed, const char *fingerprint, idem_answer_t *out)
{
    memset(out, 0, sizeof *out);
    if (strlen(fingerprint) != IDEM_FINGERPRINT_SIZE - 1)
        return IDEM_REPLAY_CORRUPT;
    char *kept = tokens_open(sealed);
    if (!kept)
        return IDEM_REPLAY_SEALED;
    idem_replay_t result = read_kept(kept, fingerprint, out);
    free(kept);
    return result;
}
