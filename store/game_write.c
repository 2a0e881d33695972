/* store_game_write of store.h: a game's compare-and-set, with its
 * idempotency record and event, in one Lua script (cas_script). A write is
 * built in steps over one game_write_t (keys, values by the script's names,
 * the command), then run and its reply read; a reply that never came is
 * unknown, never unavailable, once the command had left. */
#include "store.h"
#include "store_private.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../rules/base/decimal.h"
#include "game_keys.h"
#include "webhooks.h"

/* Compare-and-set of a game, with its idempotency record.
 * KEYS[1] the game hash, KEYS[2] its move list, KEYS[3] its history. Then,
 * as the flags say: 'l' the record of the first format this write replaces,
 * 'i' the idempotency record, 'b' the list of the records kept in its scope
 * (only when they are bounded).
 * The values (ARGV) by position, named here once: write_values fills
 * them by these names and the script reads them by the same names
 * (ARG(CAS_TTL) is the text "ARGV[9]"). */
#define CAS_FLAGS 1             /* which of the optional KEYS follow: 'l', 'i', 'b' */
#define CAS_EXPECTED 2          /* expected version (0: create) */
#define CAS_VERSION 3           /* the new version */
#define CAS_STATE 4             /* the state text */
#define CAS_HISTORY_COUNT 5     /* history entries a change load returns (hlen) */
#define CAS_LINE_OP 6           /* keep, append, set or truncate */
#define CAS_MOVES 7             /* the move list text (append, set), or bytes kept (truncate) */
#define CAS_HISTORY 8           /* the history text (append, set), or bytes kept (truncate); CAS_MOVES + 1 */
#define CAS_TTL 9               /* of the game's keys (0: keep) */
#define CAS_IDEM_ANSWER 10      /* the kept answer */
#define CAS_IDEM_TTL 11         /* its ttl */
#define CAS_IDEM_KEEP_MAX 12    /* most records kept in the scope */
#define CAS_EXPECTED_WRITE_ID 13 /* the write id the game must have ('' : any, a creation or a record of the first format) */
#define CAS_WRITE_ID 14         /* this write's id */
#define CAS_TIME_FROM 15        /* the Redis time (ms) the change was computed at ('0': not timed) */
#define CAS_DEADLINE 16         /* the time the mover's flag falls ('0': none) */
#define CAS_CHANNEL 17          /* a channel ... */
#define CAS_EVENT 18            /* ... and a message to publish once written ('' : none) */
#define CAS_PUBLISH 19          /* the command that publishes it: PUBLISH, or SPUBLISH on a cluster */
#define CAS_LEGACY_VERSION 20   /* on a cluster, the version of the record of the first format replaced ('' : none) */
#define CAS_META 21             /* a creation's tags and metadata text ('' : none, the game's stays) */
#define CAS_SEEN 22             /* the player who made the change, marked seen: 'white', 'black' ('' : none) */
#define CAS_ABSENT 23           /* a claim's absent player ('' : none) ... */
#define CAS_ABSENT_SEEN 24      /* ... whose last sign must still be this ('' : never) */
#define CAS_WEBHOOKS 25         /* a creation's subscriptions text ('' : none, the game's stay) */
#define CAS_WH_ENTRY 26         /* the first line of the entry (the event follows) appended to each outbox ... */
#define CAS_WH_MEMBERS 27       /* ... and each one's due member, one a line, marked due when 'd' */
#define CAS_ARG_COUNT 27
#define ARG_NUMBER(name) ARG_NUMBER_(name)
#define ARG_NUMBER_(n) #n
#define ARG(name) "ARGV[" ARG_NUMBER(name) "]"
/* SPUBLISH on a cluster keeps a game's messages on its shard. On a cluster
 * the record of the first format lives in another slot, so the script takes
 * its version from the load (CAS_LEGACY_VERSION) and the caller deletes it
 * afterwards. A timed write is refused as
 * 'late' when Redis's clock has passed the flag or is more than a second
 * away from the time the change was computed at. So one clock, Redis's,
 * decides whether a move was in time, and a change computed long ago is
 * redone. The write id tells two states of one version apart, which only a
 * Redis that lost writes (a restart without its data, a failover) can hold.
 * The bound keeps what one caller can store flat: a client looping a change
 * with fresh keys replaces its own oldest answers.
 * Every key is read or its type checked before the first write: Redis does
 * not undo a script's earlier commands when a later one fails. For the same
 * reason the event is published before the first write: a Redis that lacks
 * the command (SPUBLISH before 7.0) then refuses the write whole.
 * Subscribers get the event only once the script has ended, so the order
 * inside it does not show. And for that reason a full Redis must refuse
 * the write before the publishing: PUBLISH is let through when Redis is out
 * of memory, and only the first write command of a script is checked
 * against maxmemory. So an empty SETRANGE on the move list (which changes
 * nothing) comes first. A game whose keys disagree (keys_disagree, or a
 * hash gone while its lists linger) is 'damaged' and never written: a move
 * appended to a move list that was evicted would make a game whose moves
 * do not lead to its position. */
static const char cas_script[] =
    GAME_KEYS_LUA
    "local k = 4\n"
    "local legacy, idem, list\n"
    "if string.find(" ARG(CAS_FLAGS) ", 'l', 1, true) then legacy = KEYS[k]; k = k + 1 end\n"
    "if string.find(" ARG(CAS_FLAGS) ", 'i', 1, true) then idem = KEYS[k]; k = k + 1 end\n"
    "if string.find(" ARG(CAS_FLAGS) ", 'b', 1, true) then list = KEYS[k]; k = k + 1 end\n"
    "local due\n"
    "if string.find(" ARG(CAS_FLAGS) ", 'd', 1, true) then due = KEYS[k]; k = k + 1 end\n"
    "if idem then\n"
    "  local prior = redis.call('GET', idem)\n"
    "  if prior then return {'replay', prior} end\n"
    "end\n"
    "local current = redis.call('HGET', KEYS[1], 'version')\n"
    "local own = current\n"
    "if not current and legacy then current = redis.call('HGET', legacy, 'version') end\n"
    "if not current and " ARG(CAS_LEGACY_VERSION) " ~= '' then current = " ARG(CAS_LEGACY_VERSION) " end\n"
    "if " ARG(CAS_EXPECTED) " == '0' then\n"
    "  if current then return {'exists', current} end\n"
    "elseif not current then\n"
    "  if lingers(KEYS[2]) or lingers(KEYS[3]) then return {'damaged', ''} end\n"
    "  return {'missing', ''}\n"
    "elseif current ~= " ARG(CAS_EXPECTED) " then\n"
    "  return {'conflict', current}\n"
    "end\n"
    "if " ARG(CAS_EXPECTED_WRITE_ID) " ~= '' and redis.call('HGET', KEYS[1], 'wid') ~= " ARG(CAS_EXPECTED_WRITE_ID) " then return {'conflict', current} end\n"
    "if " ARG(CAS_ABSENT) " ~= '' and (redis.call('HGET', KEYS[1], 'seen:' .. " ARG(CAS_ABSENT) ") or '') ~= " ARG(CAS_ABSENT_SEEN) " then\n"
    "  return {'late', current}\n"
    "end\n"
    "local function expect(key, kind)\n"
    "  local t = redis.call('TYPE', key)['ok']\n"
    "  if t ~= 'none' and t ~= kind then return redis.error_reply('WRONGTYPE ' .. key .. ' is not a ' .. kind) end\n"
    "end\n"
    "local wrong = expect(KEYS[2], 'string') or expect(KEYS[3], 'string') or (list and expect(list, 'list'))\n"
    "if wrong then return wrong end\n"
    "if own and keys_disagree(redis.call('HGET', KEYS[1], 'state') or '') then return {'damaged', current} end\n"
    "local now\n"
    "if " ARG(CAS_TIME_FROM) " ~= '0' or " ARG(CAS_SEEN) " ~= '' or due then\n"
    "  local t = redis.call('TIME')\n"
    "  now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)\n"
    "end\n"
    "if " ARG(CAS_TIME_FROM) " ~= '0' then\n"
    "  local from, deadline = tonumber(" ARG(CAS_TIME_FROM) "), tonumber(" ARG(CAS_DEADLINE) ")\n"
    "  if now - from > 1000 or from - now > 1000 or (deadline > 0 and now >= deadline) then\n"
    "    return {'late', current or '0'}\n"
    "  end\n"
    "end\n"
    "redis.call('SETRANGE', KEYS[2], 0, '')\n"
    "if " ARG(CAS_CHANNEL) " ~= '' then redis.call(" ARG(CAS_PUBLISH) ", " ARG(CAS_CHANNEL) ", " ARG(CAS_EVENT) ") end\n"
    "local fields = {'version', " ARG(CAS_VERSION) ", 'state', " ARG(CAS_STATE) ", 'hlen', " ARG(CAS_HISTORY_COUNT) ", 'wid', " ARG(CAS_WRITE_ID) "}\n"
    "if " ARG(CAS_META) " ~= '' then table.insert(fields, 'meta'); table.insert(fields, " ARG(CAS_META) ") end\n"
    "if " ARG(CAS_SEEN) " ~= '' then table.insert(fields, 'seen:' .. " ARG(CAS_SEEN) "); table.insert(fields, string.format('%.0f', now)) end\n"
    "if " ARG(CAS_WEBHOOKS) " ~= '' then table.insert(fields, 'wh'); table.insert(fields, " ARG(CAS_WEBHOOKS) ") end\n"
    "redis.call('HSET', KEYS[1], unpack(fields))\n"
    "local m = k\n"
    "for member in string.gmatch(" ARG(CAS_WH_MEMBERS) ", '[^\\n]+') do\n"
    "  if m > #KEYS then break end\n"
    "  redis.call('RPUSH', KEYS[m], " ARG(CAS_WH_ENTRY) " .. " ARG(CAS_EVENT) ")\n"
    "  if due then redis.call('ZADD', due, 'NX', now, member) end\n"
    "  m = m + 1\n"
    "end\n"
    "local op = " ARG(CAS_LINE_OP) "\n"
    "if op == 'append' then\n"
    "  redis.call('APPEND', KEYS[2], " ARG(CAS_MOVES) ")\n"
    "  redis.call('APPEND', KEYS[3], " ARG(CAS_HISTORY) ")\n"
    "elseif op == 'set' then\n"
    "  redis.call('SET', KEYS[2], " ARG(CAS_MOVES) ")\n"
    "  redis.call('SET', KEYS[3], " ARG(CAS_HISTORY) ")\n"
    "elseif op == 'truncate' then\n"
    "  for i = 2, 3 do\n"
    "    local keep = tonumber(ARGV[" ARG_NUMBER(CAS_MOVES) " - 2 + i])\n" /* i = 2, 3: CAS_MOVES, CAS_HISTORY */
    "    if keep > 0 then redis.call('SET', KEYS[i], redis.call('GETRANGE', KEYS[i], 0, keep - 1))\n"
    "    else redis.call('SET', KEYS[i], '') end\n"
    "  end\n"
    "end\n"
    "if legacy then redis.call('DEL', legacy) end\n"
    "for i = 1, 3 do\n"
    "  if tonumber(" ARG(CAS_TTL) ") > 0 then redis.call('EXPIRE', KEYS[i], " ARG(CAS_TTL) ") else redis.call('PERSIST', KEYS[i]) end\n"
    "end\n"
    "if idem then\n"
    "  if tonumber(" ARG(CAS_IDEM_TTL) ") > 0 then redis.call('SET', idem, " ARG(CAS_IDEM_ANSWER) ", 'EX', " ARG(CAS_IDEM_TTL) ") else redis.call('SET', idem, " ARG(CAS_IDEM_ANSWER) ") end\n"
    "end\n"
    "if list then\n"
    "  redis.call('RPUSH', list, idem)\n"
    "  for i = 1, redis.call('LLEN', list) - tonumber(" ARG(CAS_IDEM_KEEP_MAX) ") do\n"
    "    local oldest = redis.call('LPOP', list)\n"
    "    if oldest then redis.call('DEL', oldest) end\n"
    "  end\n"
    "  if tonumber(" ARG(CAS_IDEM_TTL) ") > 0 then redis.call('EXPIRE', list, " ARG(CAS_IDEM_TTL) ") end\n"
    "end\n"
    "return {'ok', " ARG(CAS_VERSION) "}\n";

/* cas_script and its SHA-1, made once a process on the first write. */
static store_script_t cas;
static bool cas_ready;
static pthread_once_t cas_once = PTHREAD_ONCE_INIT;

static void cas_init(void) { cas_ready = store_script_init(&cas, cas_script); }

enum {
    NUMBER_SIZE = DECIMAL_U64_MAX + 1,
    ARGS_MAX = 3 + 7 + STORE_WEBHOOKS_PER_GAME + CAS_ARG_COUNT, /* EVALSHA, sha, key count; keys; values */
    OUTBOX_KEY_SIZE = 160,
};

/* One write as it is built: what was asked, the keys, the script's values
 * by their names (CAS_*; 0 unused) with room for those that are numbers,
 * and the command. */
typedef struct {
    const char *id;
    uint64_t expected_version;
    const store_game_change_t *change;
    unsigned ttl_seconds;
    const store_idempotency_t *idempotency;
    char keys[GAME_KEY_COUNT][GAME_KEY_SIZE], legacy[GAME_KEY_SIZE];
    char idem_key[GAME_KEYS_IDEMPOTENCY_SIZE], idem_list[GAME_KEYS_IDEMPOTENCY_SIZE];
    bool with_idem, bounded; /* an idempotency record; a bound on those of its scope */
    bool legacy_apart;       /* on a cluster: the record of the first format replaced is in another slot */
    bool cluster;
    char legacy_version[NUMBER_SIZE];
    char flags[8];
    char outboxes[STORE_WEBHOOKS_PER_GAME][OUTBOX_KEY_SIZE];
    char members[STORE_WEBHOOKS_PER_GAME * (STORE_ENGINE_ID_SIZE + STORE_WEBHOOK_ID_SIZE)];
    char channel[STORE_CHANNEL_SIZE];
    const char *value[CAS_ARG_COUNT + 1];
    size_t value_length[CAS_ARG_COUNT + 1];
    char number[CAS_ARG_COUNT + 1][NUMBER_SIZE];
    const char *argv[ARGS_MAX];
    size_t lengths[ARGS_MAX];
    int argc;
    char key_count[NUMBER_SIZE];
} game_write_t;

static const char *const line_ops[] = { "keep", "append", "set", "truncate" };

/* value in decimal, NUL-terminated, into out (NUMBER_SIZE chars); its length. */
static size_t number_text(uint64_t value, char *out)
{
    size_t length = decimal_write(value, out);
    out[length] = '\0';
    return length;
}

/* The outboxes of the change's webhook subscriptions, and their due
 * members ("<game> <sub>", one a line). */
static store_status_t write_webhook_keys(game_write_t *w)
{
    const store_game_change_t *change = w->change;
    if (change->webhook_count > STORE_WEBHOOKS_PER_GAME
        || (change->webhook_count && (!change->webhook_entry_length || !change->event_length)))
        return STORE_ECORRUPT;
    size_t used = 0;
    for (unsigned i = 0; i < change->webhook_count; i++) {
        const char *sub = change->webhook_subs[i];
        if (!store_webhook_outbox_key(w->id, sub, w->outboxes[i], sizeof w->outboxes[i])
            || strlen(sub) >= STORE_WEBHOOK_ID_SIZE || strchr(sub, ' '))
            return STORE_ECORRUPT;
        int n = snprintf(w->members + used, sizeof w->members - used, "%s%s %s", used ? "\n" : "", w->id, sub);
        if (n < 0 || (size_t)n >= sizeof w->members - used)
            return STORE_ECORRUPT;
        used += (size_t)n;
    }
    w->members[used] = '\0';
    return STORE_OK;
}

/* The game's keys, the record of the first format's, and the idempotency
 * record's and its scope's list when there are. */
static store_status_t write_keys(game_write_t *w)
{
    const store_game_change_t *change = w->change;
    if (!game_keys_name(w->id, w->keys) || !game_keys_legacy(w->id, w->legacy, sizeof w->legacy)
        || (unsigned)change->line_op > STORE_LINE_TRUNCATE || (unsigned)change->seen > 2 || (unsigned)change->absent > 2)
        return STORE_ENOT_FOUND;
    const store_idempotency_t *idem = w->idempotency;
    w->with_idem = idem && idem->key;
    if (w->with_idem && !game_keys_idempotency(idem->scope, idem->key, false, w->idem_key, sizeof w->idem_key))
        return STORE_ECORRUPT;
    w->bounded = w->with_idem && idem->keep_max > 0;
    if (w->bounded && !game_keys_idempotency_list(idem->scope, w->idem_list, sizeof w->idem_list))
        return STORE_ECORRUPT;
    return write_webhook_keys(w);
}

/* The version of the record of the first format under key, as text ("" when
 * it is gone). */
static store_status_t read_legacy_version(store_t *store, const char *key, char *out, size_t size)
{
    const char *argv[] = { "HGET", key, "version" };
    redisReply *r = store_command(store, game_keys_slot(key), 3, argv, NULL, NULL);
    if (!r)
        return STORE_EUNAVAILABLE;
    uint64_t version;
    store_status_t status = r->type == REDIS_REPLY_ERROR ? store_error_status(r) : STORE_ECORRUPT;
    if (r->type == REDIS_REPLY_NIL) {
        out[0] = '\0';
        status = STORE_OK;
    } else if (store_reply_version(r, &version)) {
        snprintf(out, size, "%llu", (unsigned long long)version);
        status = STORE_OK;
    }
    freeReplyObject(r);
    return status;
}

/* On a cluster the record of the first format replaced is in another slot:
 * its version is read first and handed to the script (CAS_LEGACY_VERSION).
 * Nothing writes such a record any more, so only its conversion (which
 * writes the new keys first) can change what it says meanwhile. */
static store_status_t write_legacy_version(store_t *store, game_write_t *w)
{
    w->legacy_apart = w->change->replaces_legacy && store_is_cluster(store);
    return w->legacy_apart ? read_legacy_version(store, w->legacy, w->legacy_version, sizeof w->legacy_version)
                           : STORE_OK;
}

static void push(game_write_t *w, const char *text, size_t length)
{
    w->argv[w->argc] = text;
    w->lengths[w->argc] = length;
    w->argc++;
}

/* An optional key, named in the flags (CAS_FLAGS) by its letter. */
static void push_key(game_write_t *w, char flag, const char *key)
{
    size_t n = strlen(w->flags);
    w->flags[n] = flag;
    w->flags[n + 1] = '\0';
    push(w, key, strlen(key));
}

/* The command's keys and their count: the game's three, then those the
 * flags name. EVALSHA and the script are store_script_run's to set. */
static void write_command_keys(game_write_t *w)
{
    w->argc = 3;
    for (int i = 0; i < GAME_KEY_COUNT; i++)
        push(w, w->keys[i], strlen(w->keys[i]));
    if (w->change->replaces_legacy && !w->legacy_apart)
        push_key(w, 'l', w->legacy);
    if (w->with_idem)
        push_key(w, 'i', w->idem_key);
    if (w->bounded)
        push_key(w, 'b', w->idem_list);
    if (w->change->webhook_count && !w->cluster)
        push_key(w, 'd', STORE_WEBHOOKS_DUE_KEY);
    for (unsigned i = 0; i < w->change->webhook_count; i++)
        push(w, w->outboxes[i], strlen(w->outboxes[i]));
    w->argv[2] = w->key_count;
    w->lengths[2] = number_text((uint64_t)(w->argc - 3), w->key_count);
}

static void set_value(game_write_t *w, int name, const char *text, size_t length)
{
    w->value[name] = text;
    w->value_length[name] = length;
}

static void set_text(game_write_t *w, int name, const char *text) { set_value(w, name, text, strlen(text)); }

static void set_number(game_write_t *w, int name, uint64_t number)
{
    set_value(w, name, w->number[name], number_text(number, w->number[name]));
}

/* The line op and its move list and history values. A game is made with
 * its move list and history, empty: every script names all three keys, and
 * a cluster refuses one (TRYAGAIN) while its slot moves and only some of
 * them exist on either side. */
static void write_line_values(game_write_t *w)
{
    const store_game_change_t *change = w->change;
    store_line_op_t line_op = change->line_op;
    if (w->expected_version == 0 && line_op == STORE_LINE_KEEP)
        line_op = STORE_LINE_SET;
    set_text(w, CAS_LINE_OP, line_ops[line_op]);
    if (line_op == STORE_LINE_TRUNCATE) {
        set_number(w, CAS_MOVES, change->moves_keep);
        set_number(w, CAS_HISTORY, change->history_keep);
    } else if (line_op == STORE_LINE_KEEP) {
        set_value(w, CAS_MOVES, "", 0);
        set_value(w, CAS_HISTORY, "", 0);
    } else {
        set_value(w, CAS_MOVES, change->moves ? change->moves : "", change->moves ? change->moves_length : 0);
        set_value(w, CAS_HISTORY, change->history ? change->history : "", change->history ? change->history_length : 0);
    }
}

/* The idempotency record's answer and bounds ("" and 0 without one). */
static void write_idempotency_values(game_write_t *w)
{
    const store_idempotency_t *idem = w->with_idem ? w->idempotency : NULL;
    set_text(w, CAS_IDEM_ANSWER, idem ? idem->answer : "");
    set_number(w, CAS_IDEM_TTL, idem ? idem->ttl_seconds : 0);
    set_number(w, CAS_IDEM_KEEP_MAX, idem ? idem->keep_max : 0);
}

/* The event, its channel ("" both: none) and the command that publishes it. */
static void write_event_values(store_t *store, game_write_t *w)
{
    const store_game_change_t *change = w->change;
    if (change->event_length)
        store_game_channel(w->id, w->channel);
    set_text(w, CAS_CHANNEL, w->channel);
    set_value(w, CAS_EVENT, change->event_length ? change->event : "", change->event_length);
    set_text(w, CAS_PUBLISH, store_is_cluster(store) ? "SPUBLISH" : "PUBLISH");
}

/* Every value, by the name the script reads it by. */
static void write_values(store_t *store, game_write_t *w)
{
    const store_game_change_t *change = w->change;
    set_text(w, CAS_FLAGS, w->flags);
    set_number(w, CAS_EXPECTED, w->expected_version);
    set_number(w, CAS_VERSION, w->expected_version + 1);
    set_value(w, CAS_STATE, change->state, change->state_length);
    set_number(w, CAS_HISTORY_COUNT, change->history_count);
    write_line_values(w);
    set_number(w, CAS_TTL, w->ttl_seconds);
    write_idempotency_values(w);
    set_text(w, CAS_EXPECTED_WRITE_ID, change->expected_write_id ? change->expected_write_id : "");
    set_text(w, CAS_WRITE_ID, change->write_id ? change->write_id : "");
    set_number(w, CAS_TIME_FROM, change->time_from_ms > 0 ? (uint64_t)change->time_from_ms : 0);
    set_number(w, CAS_DEADLINE, change->deadline_ms > 0 ? (uint64_t)change->deadline_ms : 0);
    write_event_values(store, w);
    set_text(w, CAS_LEGACY_VERSION, w->legacy_version);
    set_value(w, CAS_META, change->meta_length ? change->meta : "", change->meta_length);
    set_text(w, CAS_WEBHOOKS, change->webhooks ? change->webhooks : "");
    set_value(w, CAS_WH_ENTRY, change->webhook_count ? change->webhook_entry : "",
              change->webhook_count ? change->webhook_entry_length : 0);
    set_text(w, CAS_WH_MEMBERS, w->members);
    static const char *const players[] = { "", "white", "black" }; /* 1 + the colour */
    set_text(w, CAS_SEEN, players[change->seen]);
    set_text(w, CAS_ABSENT, players[change->absent]);
    if (change->absent_seen_ms > 0)
        set_number(w, CAS_ABSENT_SEEN, (uint64_t)change->absent_seen_ms);
    else
        set_text(w, CAS_ABSENT_SEEN, "");
}

/* The values after the keys, in the script's order; STORE_ECORRUPT when
 * one is missing (it would shift the rest). */
static store_status_t write_command_values(game_write_t *w)
{
    for (int name = 1; name <= CAS_ARG_COUNT; name++) {
        if (!w->value[name])
            return STORE_ECORRUPT;
        push(w, w->value[name], w->value_length[name]);
    }
    return STORE_OK;
}

/* What the script answered: {outcome, version} or {'replay', answer}. */
static store_status_t script_result(const redisReply *r, uint64_t *current_version, char **replay)
{
    if (r->type != REDIS_REPLY_ARRAY || r->elements != 2 || r->element[0]->type != REDIS_REPLY_STRING
        || r->element[1]->type != REDIS_REPLY_STRING)
        return STORE_ECORRUPT;
    const char *outcome = r->element[0]->str;
    const redisReply *value = r->element[1];
    if (!strcmp(outcome, "replay")) {
        size_t length;
        return store_reply_string(value, replay, &length) ? STORE_EREPLAY : STORE_ECORRUPT;
    }
    *current_version = strtoull(value->str, NULL, 10);
    static const struct {
        const char *outcome;
        store_status_t status;
    } outcomes[] = {
        { "ok", STORE_OK },           { "conflict", STORE_ECONFLICT }, { "exists", STORE_EEXISTS },
        { "missing", STORE_ENOT_FOUND }, { "late", STORE_ELATE },      { "damaged", STORE_EDAMAGED },
    };
    for (size_t i = 0; i < sizeof outcomes / sizeof *outcomes; i++)
        if (!strcmp(outcome, outcomes[i].outcome))
            return outcomes[i].status;
    return STORE_ECORRUPT;
}

/* The write's status from the script's reply. After a first send answered
 * by a closing connection (sent), a resend speaks for itself only. Its
 * refusal (LOADING, CLUSTERDOWN, READONLY...) says nothing of the first
 * send, and a version at or past the one this write would have made may be
 * the first send's own: both are unknown. */
static store_status_t write_outcome(const game_write_t *w, const redisReply *r, bool sent, uint64_t *current,
                                    char **replay)
{
    bool refused = r->type == REDIS_REPLY_ERROR;
    store_status_t status = !refused ? script_result(r, current, replay) : store_error_status(r);
    bool past = (status == STORE_ECONFLICT || status == STORE_EEXISTS) && *current > w->expected_version;
    return sent && (refused || past) ? STORE_EUNKNOWN : status;
}

/* After a write taken: Redis has room again, and on a cluster the record
 * of the first format replaced goes (the new keys are found first from now
 * on; a failure here leaves it unseen behind them). */
static void write_taken(store_t *store, const game_write_t *w)
{
    store_full_reset(store);
    if (!w->legacy_apart)
        return;
    const char *del[] = { "DEL", w->legacy };
    redisReply *d = store_command(store, game_keys_slot(w->legacy), 2, del, NULL, NULL);
    if (d)
        freeReplyObject(d);
}

store_status_t store_game_write(store_t *store, const char *id, uint64_t expected_version,
                                const store_game_change_t *change, unsigned ttl_seconds,
                                const store_idempotency_t *idempotency, uint64_t *current_version, char **replay)
{
    game_write_t w = { .id = id, .expected_version = expected_version, .change = change,
                       .ttl_seconds = ttl_seconds, .idempotency = idempotency,
                       .cluster = store_is_cluster(store) };
    store_status_t status = write_keys(&w);
    if (status == STORE_OK)
        status = write_legacy_version(store, &w);
    if (status != STORE_OK)
        return status;
    write_command_keys(&w);
    write_values(store, &w);
    if ((status = write_command_values(&w)) != STORE_OK)
        return status;
    pthread_once(&cas_once, cas_init);
    if (!cas_ready)
        return STORE_EUNAVAILABLE; /* no SHA-1, which store_open checked */
    bool sent = false;
    redisReply *r = store_script_run(store, game_keys_slot(w.keys[GAME_KEY_HASH]), &cas, w.argc, w.argv, w.lengths,
                                     &sent);
    if (!r)
        return sent ? STORE_EUNKNOWN : STORE_EUNAVAILABLE;
    uint64_t current = 0;
    status = write_outcome(&w, r, sent, &current, replay);
    freeReplyObject(r);
    if (current_version)
        *current_version = current;
    if (status == STORE_OK)
        write_taken(store, &w);
    /* On a Cluster the due index is in another slot: marked now, or by the
     * sweep when this fails or the replica dies first (store/webhooks.h). */
    if (status == STORE_OK && w.cluster && change->webhook_count)
        (void)store_webhook_mark_due(store, id, change->webhook_subs, change->webhook_count, 0);
    return status;
}
