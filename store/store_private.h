/* What the files of store/ share and nothing above them sees. From
 * store_redis.c: connections, the slot map, and the way to send a command
 * or a script (routed, under the breaker, timed). From reply.c: replies
 * read as this code writes them. And the checks and names of ids and turns. */
#ifndef CHESSD_STORE_STORE_PRIVATE_H
#define CHESSD_STORE_STORE_PRIVATE_H

#include <stdbool.h>
#include <stdint.h>

#include <hiredis/hiredis.h>

#include "cluster.h"
#include "conn.h"
#include "store.h"

/* --- connections and commands (store_redis.c) --- */

/* Whether the store's URL names a Redis Cluster. */
bool store_is_cluster(const store_t *store);

/* A new connection to node (NULL: the one node of a single-node URL) with
 * the store's timeouts, TLS and credentials, counted in the store's connects
 * (or errors). NULL when it cannot be made, with the reason in err (when
 * err_size is not 0). The caller owns it: conn_free(). */
conn_t *store_connect_node(store_t *store, const cluster_node_t *node, char *err, size_t err_size);

/* A copy of the cluster's slot map, read from the cluster first (the map
 * kept before when no node answers). False when there is none. */
bool store_cluster_map(store_t *store, cluster_map_t *out);

/* Sends one command about a key of slot (cluster_key_slot; any value on one
 * node) as every store call does: on this thread's connection to the node
 * serving the slot, following MOVED and ASK, retried across reconnections
 * and cluster pauses, each reply waited for at most the command timeout cut
 * to this thread's deadline (store_set_deadline), nothing sent to a node the
 * breaker holds down. The reply (freeReplyObject), or NULL when none came;
 * *sent (when not NULL) as for a write: set once an attempt failed after
 * the whole command had left, so Redis may have run it. */
redisReply *store_command(store_t *store, unsigned slot, int argc, const char **argv, const size_t *lengths,
                          bool *sent);

/* The longest a reply may be waited for now: the command timeout, cut to
 * this thread's deadline (0 once it has passed). A command that makes Redis
 * wait (a BLOCK) must ask Redis for less than this. */
unsigned store_command_wait_ms(store_t *store);

/* GET key: STORE_OK with a malloc'd, NUL-terminated copy in *out (caller
 * frees; length in *length), STORE_ENOT_FOUND, STORE_ECORRUPT for a value
 * that is not a string, STORE_EUNAVAILABLE when Redis cannot answer or the
 * copy cannot be made. A secret's bytes are wiped from the reply, so the
 * one copy left is the caller's. */
store_status_t store_get_string(store_t *store, const char *key, char **out, size_t *length, bool secret);

/* A Lua script and its SHA-1, EVALSHA's name for it. */
typedef struct {
    const char *text;
    char sha[41];
} store_script_t;

/* Sets script to text (which must outlive it) and its SHA-1; false when
 * the digest cannot be made. */
bool store_script_init(store_script_t *script, const char *text);

/* Runs script as store_command sends a command, by EVALSHA, then by EVAL
 * when the node does not know it (NOSCRIPT). argv[0] and argv[1] (and their
 * lengths) are the caller's room, set here; the key count, keys and values
 * follow. lengths may not be NULL. */
redisReply *store_script_run(store_t *store, unsigned slot, const store_script_t *script, int argc, const char **argv,
                             size_t *lengths, bool *sent);

/* Runs the script text (its SHA-1 made here: a few microseconds) on the
 * node of slot as store_script_run does: key_count keys, then value_count
 * values, each a NUL-terminated text; at most 29 in all. The reply, or NULL
 * when none came (or the arguments do not fit). For scripts that are not on
 * a hot path; a game's write keeps its script's SHA-1 (game_write.c). */
redisReply *store_script_texts(store_t *store, unsigned slot, const char *text, int key_count,
                               const char *const *keys, int value_count, const char *const *values);

/* Forgets that Redis refused a command for lack of memory (store_is_full),
 * unless it refused one at or after checked_ms (clock_now_ms): a look at
 * Redis's memory begun then found room. */
void store_full_clear(store_t *store, int64_t checked_ms);
/* Forgets it whatever: Redis just took a game write. */
void store_full_reset(store_t *store);

/* --- replies (reply.c) --- */

/* The largest version a client can name (a JSON number: 2^53 - 1). */
#define STORE_VERSION_MAX UINT64_C(9007199254740991)

/* What an error reply means, for a command that did nothing: STORE_ECORRUPT
 * (WRONGTYPE), STORE_EFULL (OOM) or STORE_EUNAVAILABLE (anything else). */
store_status_t store_error_status(const redisReply *r);

/* The reply's status when it is an error (store_error_status) or not of
 * the type expected (STORE_ECORRUPT); STORE_OK otherwise. */
store_status_t store_reply_status(const redisReply *r, int expected_type);

/* A version as this code writes it, in the length bytes at text: a decimal
 * number from 1 to STORE_VERSION_MAX, no sign, no leading zero, nothing
 * after it. *version is set only when true. */
bool store_version_read(const char *text, size_t length, uint64_t *version);
/* The same of a string reply; false for any other type. */
bool store_reply_version(const redisReply *r, uint64_t *version);

/* A string reply copied into *out (malloc'd, NUL added, caller frees) with
 * its length; false when r is no string or memory runs out. */
bool store_reply_string(const redisReply *r, char **out, size_t *length);

/* --- ids and turns (game_streams.c, engine_due.c) --- */

/* Whether id is a game id (or a stream id): 1 to STORE_ENGINE_ID_SIZE - 1
 * characters of base64url (what chessd draws; never ':', the intent's
 * separator). */
bool store_id_ok(const char *id, size_t length);

/* Bytes of a turn's name, "<id>:<version>", and its NUL. */
enum { STORE_ENGINE_MEMBER_SIZE = STORE_ENGINE_ID_SIZE + 24 };

/* "<id>:<version>" into member: a turn's name in the backlog and the
 * intents. False when id is no game id (store_id_ok) or version is not 1 to
 * STORE_VERSION_MAX. */
bool store_engine_member(const char *id, uint64_t version, char member[STORE_ENGINE_MEMBER_SIZE]);

/* --- store_array.c --- */

/* Makes room for one more item in a growable array of item_size-byte
 * items (*items holding count of *capacity; the capacity doubles, from 4).
 * False, with the array unchanged, when memory runs out. */
bool store_array_reserve(void **items, unsigned *capacity, unsigned count, size_t item_size);

#endif
