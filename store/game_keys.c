/* See game_keys.h; also store.h's slots (store_id_slot,
 * store_idempotency_slot) and game channel, which are named from the same
 * keys. */
#include "game_keys.h"

#include <openssl/evp.h>
#include <stdio.h>
#include <string.h>

#include "../rules/base/hex.h"
#include "../rules/base/text.h"
#include "cluster.h"
#include "store.h"

bool game_keys_name(const char *id, char keys[GAME_KEY_COUNT][GAME_KEY_SIZE])
{
    static const char *const prefixes[GAME_KEY_COUNT] = { "chessd:game:{", "chessd:moves:{", "chessd:history:{" };
    size_t id_length = strlen(id);
    for (int i = 0; i < GAME_KEY_COUNT; i++) {
        size_t prefix_length = strlen(prefixes[i]);
        if (prefix_length + id_length + 2 > GAME_KEY_SIZE)
            return false;
        memcpy(keys[i], prefixes[i], prefix_length);
        memcpy(keys[i] + prefix_length, id, id_length);
        memcpy(keys[i] + prefix_length + id_length, "}", 2);
    }
    return true;
}

bool game_keys_legacy(const char *id, char *key, size_t size)
{
    const char *parts[] = { "chessd:game:", id };
    return text_join(key, size, parts, 2) < size;
}

bool game_keys_idempotency_list(const char *scope, char *key, size_t size)
{
    const char *parts[] = { "chessd:idemlist:", scope };
    return text_join(key, size, parts, 2) < size;
}

bool game_keys_scope_tagged(const char *scope) { return strchr(scope, '{') != NULL; }

bool game_keys_idempotency(const char *scope, const char *client_key, bool old_name, char *key, size_t size)
{
    unsigned char digest[EVP_MAX_MD_SIZE];
    unsigned length = 0;
    if (!EVP_Digest(client_key, strlen(client_key), digest, &length, EVP_sha256(), NULL))
        return false;
    bool braces = !old_name && !game_keys_scope_tagged(scope);
    int n = snprintf(key, size, "chessd:idem:%s:%s", scope, braces ? "{" : "");
    if (n < 0 || (size_t)n + 2 * length + 2 >= size)
        return false;
    hex_encode(digest, length, key + n);
    n += 2 * (int)length;
    if (braces)
        snprintf(key + n, size - (size_t)n, "}");
    return true;
}

unsigned game_keys_slot(const char *key) { return cluster_key_slot(key, strlen(key)); }

unsigned store_idempotency_slot(const char *scope, const char *key)
{
    char redis_key[GAME_KEYS_IDEMPOTENCY_SIZE];
    return game_keys_idempotency(scope, key, false, redis_key, sizeof redis_key) ? game_keys_slot(redis_key) : 0;
}

unsigned store_id_slot(const char *id)
{
    /* The keys' tag is the id itself unless it holds a brace (ids drawn by
     * chessd never do): the cheap way, for a creation that tries thousands. */
    if (!strpbrk(id, "{}") && *id)
        return cluster_key_slot(id, strlen(id));
    char keys[GAME_KEY_COUNT][GAME_KEY_SIZE];
    return game_keys_name(id, keys) ? game_keys_slot(keys[0]) : 0;
}

bool store_id_fit_slot(char *id, const char alphabet[64], unsigned slot)
{
    size_t length = strlen(id);
    return !strpbrk(id, "{}") && cluster_fit_slot(id, length, alphabet, slot) && store_id_slot(id) == slot;
}

void store_game_channel(const char *id, char *out)
{
    /* "chessd:events:{<id>}", the id cut to fit as "%.*s" would */
    static const char prefix[] = "chessd:events:{";
    size_t id_length = strnlen(id, STORE_CHANNEL_SIZE - 20);
    memcpy(out, prefix, sizeof prefix - 1);
    memcpy(out + sizeof prefix - 1, id, id_length);
    memcpy(out + sizeof prefix - 1 + id_length, "}", 2);
}
