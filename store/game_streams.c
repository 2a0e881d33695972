/* The ids of multi-game streams (game_streams.h): one set
 * per stream under the stream's hash tag, so every command about it goes
 * to one node; the add and its announcement are one script. Every command
 * goes through store_command (store_private.h), routed, timed and retried
 * as a game's are. Also store_id_ok, the one check of an id's characters. */
#include "game_streams.h"
#include "store_private.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cluster.h"

enum { KEY_SIZE = sizeof STORE_STREAM_KEY_PREFIX + STORE_ENGINE_ID_SIZE + 2, NUMBER_SIZE = 16 };

bool store_id_ok(const char *id, size_t length)
{
    if (length == 0 || length >= STORE_ENGINE_ID_SIZE)
        return false;
    for (size_t i = 0; i < length; i++) {
        char c = id[i];
        if (!((c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-' || c == '_'))
            return false;
    }
    return true;
}

void store_stream_channel(const char *stream, char out[STORE_CHANNEL_SIZE])
{
    snprintf(out, STORE_CHANNEL_SIZE, "chessd:stream-ids:{%.*s}", STORE_CHANNEL_SIZE - 24, stream);
}

/* The stream's key and its slot; false for a stream id that is none. */
static bool stream_key(const char *stream, char key[KEY_SIZE], unsigned *slot)
{
    if (!store_id_ok(stream, strlen(stream)))
        return false;
    snprintf(key, KEY_SIZE, STORE_STREAM_KEY_PREFIX "{%s}", stream);
    *slot = cluster_key_slot(key, strlen(key));
    return true;
}

static bool ids_ok(const char *const *ids, unsigned count)
{
    for (unsigned i = 0; i < count; i++)
        if (!store_id_ok(ids[i], strlen(ids[i])))
            return false;
    return count <= STORE_STREAM_IDS_MAX;
}

/* Put: KEYS[1] the set; ARGV[1] the expiry (s), then the ids. */
static const char put_script[] = "redis.call('DEL', KEYS[1])\n"
                                 "if #ARGV > 1 then redis.call('SADD', KEYS[1], unpack(ARGV, 2)) end\n"
                                 "redis.call('EXPIRE', KEYS[1], ARGV[1])\n"
                                 "return #ARGV - 1\n";

/* Add: KEYS[1] the set; ARGV[1] the most ids, ARGV[2] the expiry (s),
 * ARGV[3] the channel, ARGV[4] the command that publishes (SPUBLISH on a
 * cluster, where the channel is in the set's slot: one hash tag), then the
 * ids (distinct). {added, total}; added -1:
 * no such set; -2: over the most (nothing added). */
static const char add_script[] = "if redis.call('EXISTS', KEYS[1]) == 0 then return {-1, 0} end\n"
                                 "local new = 0\n"
                                 "for i = 5, #ARGV do\n"
                                 "  if redis.call('SISMEMBER', KEYS[1], ARGV[i]) == 0 then new = new + 1 end\n"
                                 "end\n"
                                 "local size = redis.call('SCARD', KEYS[1])\n"
                                 "if size + new > tonumber(ARGV[1]) then return {-2, size} end\n"
                                 "if new > 0 then\n"
                                 "  redis.call('SADD', KEYS[1], unpack(ARGV, 5))\n"
                                 "  redis.call(ARGV[4], ARGV[3], 'ids')\n"
                                 "end\n"
                                 "redis.call('EXPIRE', KEYS[1], ARGV[2])\n"
                                 "return {new, size + new}\n";

/* Read: KEYS[1] the set; ARGV[1] the expiry. The members, or nil when none. */
static const char read_script[] = "if redis.call('EXPIRE', KEYS[1], ARGV[1]) == 0 then return false end\n"
                                  "return redis.call('SMEMBERS', KEYS[1])\n";

/* Runs one of this file's scripts on key: argv[4..] (fixed values, then
 * count ids) follow the key; argv[0..3] are filled here. */
static redisReply *run(store_t *store, const char *text, const char *key, unsigned slot, const char **argv,
                       int argc)
{
    store_script_t script;
    size_t *lengths = malloc((size_t)argc * sizeof *lengths);
    if (!lengths || !store_script_init(&script, text)) {
        free(lengths);
        return NULL;
    }
    argv[2] = "1";
    argv[3] = key;
    for (int i = 2; i < argc; i++)
        lengths[i] = strlen(argv[i]);
    redisReply *r = store_script_run(store, slot, &script, argc, argv, lengths, NULL);
    free(lengths);
    return r;
}

/* store_reply_status, and STORE_EUNAVAILABLE for no reply. */
static store_status_t reply_status(const redisReply *r, int type)
{
    return r ? store_reply_status(r, type) : STORE_EUNAVAILABLE;
}

/* argv for key, fixed values and the ids (malloc'd; NULL when out of memory). */
static const char **make_argv(const char *const *fixed, int fixed_count, const char *const *ids, unsigned count)
{
    const char **argv = malloc((4 + (size_t)fixed_count + count) * sizeof *argv);
    if (!argv)
        return NULL;
    for (int i = 0; i < fixed_count; i++)
        argv[4 + i] = fixed[i];
    for (unsigned i = 0; i < count; i++)
        argv[4 + fixed_count + i] = ids[i];
    return argv;
}

store_status_t store_stream_ids_put(store_t *store, const char *stream, const char *const *ids, unsigned count,
                                    unsigned ttl_seconds)
{
    char key[KEY_SIZE], ttl[NUMBER_SIZE];
    unsigned slot;
    if (!stream_key(stream, key, &slot) || !ids_ok(ids, count))
        return STORE_ENOT_FOUND;
    snprintf(ttl, sizeof ttl, "%u", ttl_seconds ? ttl_seconds : 1);
    const char *fixed[] = { ttl };
    const char **argv = make_argv(fixed, 1, ids, count);
    if (!argv)
        return STORE_EUNAVAILABLE;
    redisReply *r = run(store, put_script, key, slot, argv, 5 + (int)count);
    free(argv);
    store_status_t status = reply_status(r, REDIS_REPLY_INTEGER);
    if (r)
        freeReplyObject(r);
    return status;
}

store_status_t store_stream_ids_add(store_t *store, const char *stream, const char *const *ids, unsigned count,
                                    unsigned max, unsigned ttl_seconds, unsigned *added, unsigned *total)
{
    char key[KEY_SIZE], most[NUMBER_SIZE], ttl[NUMBER_SIZE], channel[STORE_CHANNEL_SIZE];
    unsigned slot;
    *added = *total = 0;
    if (!stream_key(stream, key, &slot) || !ids_ok(ids, count))
        return STORE_ENOT_FOUND;
    snprintf(most, sizeof most, "%u", max);
    snprintf(ttl, sizeof ttl, "%u", ttl_seconds ? ttl_seconds : 1);
    store_stream_channel(stream, channel);
    const char *fixed[] = { most, ttl, channel, store_is_cluster(store) ? "SPUBLISH" : "PUBLISH" };
    const char **argv = make_argv(fixed, 4, ids, count);
    if (!argv)
        return STORE_EUNAVAILABLE;
    redisReply *r = run(store, add_script, key, slot, argv, 8 + (int)count);
    free(argv);
    store_status_t status = reply_status(r, REDIS_REPLY_ARRAY);
    if (status == STORE_OK) {
        if (r->elements != 2 || r->element[0]->type != REDIS_REPLY_INTEGER
            || r->element[1]->type != REDIS_REPLY_INTEGER || r->element[1]->integer < 0) {
            status = STORE_ECORRUPT;
        } else {
            long long n = r->element[0]->integer;
            *total = (unsigned)r->element[1]->integer;
            status = n == -1 ? STORE_ENOT_FOUND : n == -2 ? STORE_EFULL : n < 0 ? STORE_ECORRUPT : STORE_OK;
            *added = n > 0 ? (unsigned)n : 0;
        }
    }
    if (r)
        freeReplyObject(r);
    return status;
}

store_status_t store_stream_ids_read(store_t *store, const char *stream, unsigned ttl_seconds,
                                     char (*out)[STORE_ENGINE_ID_SIZE], unsigned max, unsigned *count)
{
    char key[KEY_SIZE], ttl[NUMBER_SIZE];
    unsigned slot;
    *count = 0;
    if (!stream_key(stream, key, &slot))
        return STORE_ENOT_FOUND;
    snprintf(ttl, sizeof ttl, "%u", ttl_seconds ? ttl_seconds : 1);
    const char *argv[5] = { [4] = ttl };
    redisReply *r = run(store, read_script, key, slot, argv, 5);
    store_status_t status = !r || r->type != REDIS_REPLY_NIL ? reply_status(r, REDIS_REPLY_ARRAY) : STORE_ENOT_FOUND;
    for (size_t i = 0; status == STORE_OK && i < r->elements && *count < max; i++) {
        const redisReply *m = r->element[i];
        if (m->type == REDIS_REPLY_STRING && store_id_ok(m->str, m->len)) {
            memcpy(out[*count], m->str, m->len);
            out[(*count)++][m->len] = '\0';
        }
    }
    if (r)
        freeReplyObject(r);
    return status;
}

store_status_t store_stream_ids_drop(store_t *store, const char *stream)
{
    char key[KEY_SIZE];
    unsigned slot;
    if (!stream_key(stream, key, &slot))
        return STORE_ENOT_FOUND;
    const char *argv[] = { "DEL", key };
    redisReply *r = store_command(store, slot, 2, argv, NULL, NULL);
    store_status_t status = reply_status(r, REDIS_REPLY_INTEGER);
    if (r)
        freeReplyObject(r);
    return status;
}
