/* Redis's replies read as this code wrote what they hold (store_private.h):
 * what an error means, a reply of the type expected, a version, and a
 * string copied out. Nothing here sends anything. */
#include "store_private.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

/* What an error reply means. WRONGTYPE is a key this code did not write.
 * OOM (maxmemory reached with noeviction; inside a script Redis 6 wraps it
 * in an ERR) is a full Redis that refuses writes until memory is freed.
 * Anything else (LOADING while Redis reads its data, BUSY, READONLY after a
 * failover) is Redis not being able to serve now. In every case the
 * command did nothing. */
store_status_t store_error_status(const redisReply *r)
{
    if (!strncmp(r->str, "WRONGTYPE", 9))
        return STORE_ECORRUPT;
    if (!strncmp(r->str, "OOM ", 4) || strstr(r->str, "OOM command not allowed"))
        return STORE_EFULL;
    return STORE_EUNAVAILABLE;
}

store_status_t store_reply_status(const redisReply *r, int expected_type)
{
    if (r->type == REDIS_REPLY_ERROR)
        return store_error_status(r);
    return r->type == expected_type ? STORE_OK : STORE_ECORRUPT;
}

bool store_version_read(const char *text, size_t length, uint64_t *version)
{
    /* strtoull alone takes "-3", stops at a NUL and saturates on overflow. */
    enum { VERSION_TEXT = 24 };
    if (length == 0 || length >= VERSION_TEXT || text[0] < '1' || text[0] > '9')
        return false;
    char digits[VERSION_TEXT], *end;
    memcpy(digits, text, length);
    digits[length] = '\0';
    errno = 0;
    unsigned long long v = strtoull(digits, &end, 10);
    if (errno || end != digits + length || v > STORE_VERSION_MAX)
        return false;
    *version = v;
    return true;
}

bool store_reply_version(const redisReply *r, uint64_t *version)
{
    return r->type == REDIS_REPLY_STRING && store_version_read(r->str, r->len, version);
}

bool store_reply_string(const redisReply *r, char **out, size_t *length)
{
    if (r->type != REDIS_REPLY_STRING || !(*out = malloc(r->len + 1)))
        return false;
    memcpy(*out, r->str, r->len);
    (*out)[r->len] = '\0';
    *length = r->len;
    return true;
}
