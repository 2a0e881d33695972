/* The finished-games feed of finished_feed.h: the add (one script over the
 * stream, its ids and the deadline index, all of the {games} slot), the
 * read (XRANGE from a cursor) and the length. Entries are read by their
 * field names, so a field added later is skipped by an older reader. */
#include "finished_feed.h"
#include "store_private.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cluster.h"
#include "deadlines.h"

enum { NUMBER_SIZE = 24, CURSOR_DIGITS_MAX = 20 };

/* Add: KEYS[1] the stream, KEYS[2] its ids, KEYS[3] the deadline index;
 * ARGV[1] the id, ARGV[2] the retention (ms), ARGV[3] the index score to
 * clear ('0': none), then the entry's other fields and values. {added,
 * cursor}: 1 and the new entry's id, or 0 and '' when it was there. A
 * script's first write is the one Redis checks against maxmemory: the XADD,
 * before anything else is written. */
static const char finished_script[] =
    "local t = redis.call('TIME')\n"
    "local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)\n"
    "local added, entry = 0, ''\n"
    "if not redis.call('ZSCORE', KEYS[2], ARGV[1]) then\n"
    "  local cut = math.max(now - tonumber(ARGV[2]), 0)\n"
    "  entry = redis.call('XADD', KEYS[1], 'MINID', '~', cut, '*', 'id', ARGV[1], unpack(ARGV, 4))\n"
    "  redis.call('ZADD', KEYS[2], now, ARGV[1])\n"
    "  redis.call('ZREMRANGEBYSCORE', KEYS[2], '-inf', '(' .. cut)\n"
    "  added = 1\n"
    "end\n"
    "if ARGV[3] ~= '0' then\n"
    "  local s = redis.call('ZSCORE', KEYS[3], ARGV[1])\n"
    "  if s and tonumber(s) == tonumber(ARGV[3]) then redis.call('ZREM', KEYS[3], ARGV[1]) end\n"
    "end\n"
    "return {added, entry}\n";

static unsigned feed_slot(void) { return cluster_key_slot(STORE_FEED_KEY, sizeof STORE_FEED_KEY - 1); }

/* Whether text is a word the feed keeps: 1 to STORE_FEED_WORD_SIZE - 1
 * characters of a-z, 0-9, '_', '-' and '/' (results are "1-0", "1/2-1/2"). */
static bool word_ok(const char *text, bool empty_ok)
{
    size_t length = strlen(text);
    if ((!length && !empty_ok) || length >= STORE_FEED_WORD_SIZE)
        return false;
    for (size_t i = 0; i < length; i++)
        if (!((text[i] >= 'a' && text[i] <= 'z') || (text[i] >= 'A' && text[i] <= 'Z')
              || (text[i] >= '0' && text[i] <= '9') || strchr("_-/*", text[i])))
            return false;
    return true;
}

store_status_t store_game_finished(store_t *store, const store_feed_entry_t *game, uint64_t retention_ms,
                                   int64_t index_score, bool *added)
{
    if (added)
        *added = false;
    if (!store_id_ok(game->id, strlen(game->id)) || !word_ok(game->status, false) || !word_ok(game->result, false)
        || !word_ok(game->termination, true))
        return STORE_ENOT_FOUND;
    char retention[NUMBER_SIZE], score[NUMBER_SIZE], ended[NUMBER_SIZE];
    snprintf(retention, sizeof retention, "%llu", (unsigned long long)(retention_ms ? retention_ms : 1));
    snprintf(score, sizeof score, "%lld", (long long)(index_score > 0 ? index_score : 0));
    snprintf(ended, sizeof ended, "%lld", (long long)game->ended_at_ms);
    static const char *const keys[] = { STORE_FEED_KEY, STORE_FEED_IDS_KEY, STORE_DEADLINES_KEY };
    const char *values[] = { game->id, retention, score, "status", game->status, "result", game->result,
                             "termination", game->termination, "ended_at", ended };
    redisReply *r = store_script_texts(store, feed_slot(), finished_script, 3, keys, 11, values);
    store_status_t status = r ? store_reply_status(r, REDIS_REPLY_ARRAY) : STORE_EUNAVAILABLE;
    if (status == STORE_OK && (r->elements != 2 || r->element[0]->type != REDIS_REPLY_INTEGER))
        status = STORE_ECORRUPT;
    if (status == STORE_OK && added)
        *added = r->element[0]->integer == 1;
    if (r)
        freeReplyObject(r);
    return status;
}

/* Whether the length bytes at text are 1 to 20 digits within 64 bits. */
static bool number_ok(const char *text, size_t length)
{
    if (!length || length > CURSOR_DIGITS_MAX || strspn(text, "0123456789") < length)
        return false;
    return length < CURSOR_DIGITS_MAX || memcmp(text, "18446744073709551615", CURSOR_DIGITS_MAX) <= 0;
}

bool store_feed_cursor_ok(const char *text)
{
    const char *dash = strchr(text, '-');
    return dash && number_ok(text, (size_t)(dash - text)) && number_ok(dash + 1, strlen(dash + 1));
}

/* A reply string equal to text. */
static bool reply_is(const redisReply *r, const char *text)
{
    return r->type == REDIS_REPLY_STRING && r->len == strlen(text) && !memcmp(r->str, text, r->len);
}

/* Copies a string reply into out (size bytes); false when it does not fit. */
static bool copy_reply(const redisReply *r, char *out, size_t size)
{
    if (r->type != REDIS_REPLY_STRING || r->len >= size)
        return false;
    memcpy(out, r->str, r->len);
    out[r->len] = '\0';
    return true;
}

/* One field of an entry into e; false for a value this code did not write. */
static bool read_field(const redisReply *name, const redisReply *value, store_feed_entry_t *e)
{
    char ended[NUMBER_SIZE];
    if (reply_is(name, "id"))
        return copy_reply(value, e->id, sizeof e->id) && store_id_ok(e->id, strlen(e->id));
    if (reply_is(name, "status"))
        return copy_reply(value, e->status, sizeof e->status) && word_ok(e->status, false);
    if (reply_is(name, "result"))
        return copy_reply(value, e->result, sizeof e->result) && word_ok(e->result, false);
    if (reply_is(name, "termination"))
        return copy_reply(value, e->termination, sizeof e->termination) && word_ok(e->termination, true);
    if (reply_is(name, "ended_at")) {
        char *end;
        if (!copy_reply(value, ended, sizeof ended))
            return false;
        e->ended_at_ms = strtoll(ended, &end, 10);
        return end != ended && !*end;
    }
    return true; /* a field of a later version */
}

/* An entry [cursor, [field, value...]] into e; false for one this code did
 * not write (no id, a status or result missing, a value out of form). */
static bool read_entry(const redisReply *entry, store_feed_entry_t *e)
{
    memset(e, 0, sizeof *e);
    if (entry->type != REDIS_REPLY_ARRAY || entry->elements != 2
        || !copy_reply(entry->element[0], e->cursor, sizeof e->cursor))
        return false;
    const redisReply *fields = entry->element[1];
    if (fields->type != REDIS_REPLY_ARRAY || fields->elements % 2)
        return false;
    for (size_t i = 0; i + 1 < fields->elements; i += 2)
        if (!read_field(fields->element[i], fields->element[i + 1], e))
            return false;
    return e->id[0] && e->status[0] && e->result[0];
}

/* Deletes the entry at cursor (one this code cannot read), so that a
 * reader is not stopped by it for ever. */
static void drop_entry(store_t *store, const char *cursor)
{
    const char *argv[] = { "XDEL", STORE_FEED_KEY, cursor };
    redisReply *r = store_command(store, feed_slot(), 3, argv, NULL, NULL);
    if (r)
        freeReplyObject(r);
}

store_status_t store_feed_read(store_t *store, const char *after, unsigned max, store_feed_entry_t *out,
                               unsigned *count)
{
    *count = 0;
    if (after && !store_feed_cursor_ok(after))
        return STORE_ENOT_FOUND;
    if (max > STORE_FEED_READ_MAX)
        max = STORE_FEED_READ_MAX;
    if (!max)
        return STORE_OK;
    char start[STORE_FEED_CURSOR_SIZE + 1], most[NUMBER_SIZE];
    snprintf(start, sizeof start, "%s%s", after ? "(" : "", after ? after : "-");
    snprintf(most, sizeof most, "%u", max);
    const char *argv[] = { "XRANGE", STORE_FEED_KEY, start, "+", "COUNT", most };
    redisReply *r = store_command(store, feed_slot(), 6, argv, NULL, NULL);
    store_status_t status = r ? store_reply_status(r, REDIS_REPLY_ARRAY) : STORE_EUNAVAILABLE;
    for (size_t i = 0; status == STORE_OK && i < r->elements && *count < max; i++) {
        if (read_entry(r->element[i], &out[*count]))
            (*count)++;
        else if (out[*count].cursor[0])
            drop_entry(store, out[*count].cursor);
    }
    if (r)
        freeReplyObject(r);
    return status;
}

store_status_t store_feed_length(store_t *store, uint64_t *length)
{
    const char *argv[] = { "XLEN", STORE_FEED_KEY };
    redisReply *r = store_command(store, feed_slot(), 2, argv, NULL, NULL);
    store_status_t status = r ? store_reply_status(r, REDIS_REPLY_INTEGER) : STORE_EUNAVAILABLE;
    if (status == STORE_OK)
        *length = r->integer > 0 ? (uint64_t)r->integer : 0;
    if (r)
        freeReplyObject(r);
    return status;
}
