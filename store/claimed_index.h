/* A claimed index (claimed_index.c): a sorted set of members scored by the
 * Redis time they are due, which any replica claims (each member moved to
 * now + a lease, in one step) and whose claimer settles what it took. The
 * deadline index (deadlines.h) and the webhooks' due index (webhooks.h). */
#ifndef CHESSD_STORE_CLAIMED_INDEX_H
#define CHESSD_STORE_CLAIMED_INDEX_H

#include <stdbool.h>
#include <stdint.h>

#include "store_private.h"

/* Claims up to max members of key due by Redis's clock, the most overdue
 * first, each moved to now + lease_ms. On STORE_OK *reply is Redis's
 * {now, claim, member...}, its first two checked to be integers (free it
 * with freeReplyObject). */
store_status_t store_index_claim(store_t *store, const char *key, unsigned lease_ms, unsigned max,
                                 redisReply **reply);

/* Removes a member that is none the caller can read, so that it does not
 * stand first for ever. */
void store_index_drop(store_t *store, const char *key, const redisReply *member);

/* Settles a claimed member: due again at due_ms, or removed (0), only while
 * it still holds its claim (*settled, when not NULL, says whether it did). */
store_status_t store_index_settle(store_t *store, const char *key, const char *member, int64_t claim_ms,
                                  int64_t due_ms, bool *settled);

/* The settle as a Lua chunk over KEYS[1] (the index) and ARGV[1..3] (the
 * member, the claim, the new score, '0': remove), setting `held`: for a
 * script that settles and does more in the same step. */
#define STORE_INDEX_SETTLE_LUA \
    "local s = redis.call('ZSCORE', KEYS[1], ARGV[1])\n" \
    "local held = s and tonumber(s) == tonumber(ARGV[2])\n" \
    "if held then\n" \
    "  if ARGV[3] == '0' then redis.call('ZREM', KEYS[1], ARGV[1])\n" \
    "  else redis.call('ZADD', KEYS[1], ARGV[3], ARGV[1]) end\n" \
    "end\n"

#endif
