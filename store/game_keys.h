/* The names of a game's keys in Redis, of its idempotency records and of
 * its channel, and the Lua check both game scripts open with. A game's keys
 * share the hash tag {id}, so one script may touch them all on any Redis;
 * the record of the first format lived under chessd:game:<id>. */
#ifndef CHESSD_STORE_GAME_KEYS_H
#define CHESSD_STORE_GAME_KEYS_H

#include <stdbool.h>
#include <stddef.h>

enum {
    GAME_KEY_HASH = 0,
    GAME_KEY_MOVES,
    GAME_KEY_HISTORY,
    GAME_KEY_COUNT,
    GAME_KEY_SIZE = 96,
    /* Room for chessd:idem:<scope>:<sha256 hex>, a scope being a game id
     * and a caller's token HMAC (see store_idempotency_t). */
    GAME_KEYS_IDEMPOTENCY_SIZE = 256,
};

/* "chessd:<kind>:{<id>}" for each key of a game (a write builds them on
 * every move: no printf); false when they would not fit. */
bool game_keys_name(const char *id, char keys[GAME_KEY_COUNT][GAME_KEY_SIZE]);

/* "chessd:game:<id>", the record of the first format; false when it would
 * not fit size. */
bool game_keys_legacy(const char *id, char *key, size_t size);

/* The idempotency record of client_key within scope: the client's key is
 * hashed, so any text is safe. A scope with a hash tag (a game's:
 * "{<id>}:<caller>") lends it to the key. Any other (creation's) is tagged
 * by the hash itself, so on a cluster the record has a slot of its own.
 * old_name: the name records of untagged scopes had before that tag existed
 * (no braces). False when the name cannot be made or would not fit. */
bool game_keys_idempotency(const char *scope, const char *client_key, bool old_name, char *key, size_t size);

/* The list of the idempotency records kept within scope (when bounded). */
bool game_keys_idempotency_list(const char *scope, char *key, size_t size);

/* Whether a scope carries a hash tag (a game's scopes: "{<id>}:<caller>"). */
bool game_keys_scope_tagged(const char *scope);

/* A key's slot: the one a cluster serves it from (unused on one node). */
unsigned game_keys_slot(const char *key);

/* Whether a game's keys agree, for both scripts. The history holds one
 * 16-digit entry per ply of the state; the move list at least the shortest
 * entries (a UCI move, a space between) for as many plies, and none when
 * there are none. Redis evicts (or a failover loses) whole keys, and a
 * missing key reads as empty, so a game that lost its move list or history
 * fails this. A state without a plies line is left to the record's reader.
 * `lingers`: a key that is not about to expire. A game's keys get one TTL
 * in one script, so they expire together (a millisecond apart at most); a
 * hash gone while its lists linger was evicted or lost, not expired. */
#define GAME_KEYS_LUA \
    "local function keys_disagree(state)\n" \
    "  local plies = tonumber(string.match(state, '\\nplies (%d+)\\n') or '')\n" \
    "  if not plies then return false end\n" \
    "  local moves, history = redis.call('STRLEN', KEYS[2]), redis.call('STRLEN', KEYS[3])\n" \
    "  if history ~= plies * 16 then return true end\n" \
    "  if plies == 0 then return moves ~= 0 end\n" \
    "  return moves < plies * 5 - 1\n" \
    "end\n" \
    "local function lingers(key)\n" \
    "  local t = redis.call('PTTL', key)\n" \
    "  return t == -1 or t > 1000\n" \
    "end\n"

#endif
