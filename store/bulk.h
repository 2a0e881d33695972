/* A bulk of games (a tournament round) in the store. Its record and all
 * its games are written by one script, all or nothing: their ids are drawn
 * in the bulk's slot, so that works on a Cluster too. Also the record read
 * and changed, the games' deadlines lowered in one step, and the step a
 * game's end takes (the record goes once none of its games plays). */
#ifndef CHESSD_STORE_BULK_H
#define CHESSD_STORE_BULK_H

#include <stddef.h>
#include <stdint.h>

#include "store.h"

enum { STORE_BULK_GAMES_MAX = 500 };

/* One game of a bulk, as its creation writes it (version 1, with an empty
 * move list and history). */
typedef struct {
    const char *id; /* in the bulk's slot (store_id_fit_slot) */
    const char *state;
    size_t state_length;
    const char *meta; /* its tags and metadata text (NULL: none) */
    size_t meta_length;
    const char *write_id;
    const char *webhooks; /* its subscriptions text, kept as its 'wh' (NULL or "": none) */
} store_bulk_game_t;

/* Writes bulk id's record (info, a text of the caller's, and the games'
 * ids in order), the set of its games in play, and its count games, in one
 * script on the node of id's slot, which every game's id shares. With
 * idem (a key given), a record kept under the key makes it STORE_EREPLAY
 * (*replay: that answer, malloc'd) and idem's answer is kept with the
 * bulk. STORE_EEXISTS when the bulk or any game exists: nothing written. */
store_status_t store_bulk_create(store_t *store, const char *id, const char *info, const store_bulk_game_t *games,
                                 unsigned count, const store_idempotency_t *idem, char **replay);

/* Lowers the deadline index entry (deadlines.h) of each of the count ids
 * to its due time (0: none), in one step before their creation. */
store_status_t store_bulk_deadlines(store_t *store, const char *const *ids, const int64_t *due, unsigned count);

/* Bulk id's info text and its games' ids, space-separated (each malloc'd,
 * NUL-terminated, the caller's). STORE_ENOT_FOUND when it is not stored. */
store_status_t store_bulk_read(store_t *store, const char *id, char **info, char **ids);

/* The state text and version of each of the count games ids of bulk id
 * (all in its slot), read in one script with Redis's clock (*now_ms):
 * states[i] malloc'd and NUL-terminated, or NULL for a game gone (then
 * versions[i] is 0). */
store_status_t store_bulk_states(store_t *store, const char *id, const char *const *ids, unsigned count,
                                 char **states, size_t *lengths, uint64_t *versions, int64_t *now_ms);

/* Replaces bulk id's info text when it is still expected: STORE_ECONFLICT
 * when it is not, STORE_ENOT_FOUND when the bulk is gone. */
store_status_t store_bulk_update(store_t *store, const char *id, const char *expected, const char *info);

/* Game game_id of bulk id is over: it leaves the set in play, and once the
 * set is empty the bulk's record expires in ttl_seconds (0: never). Any
 * number of times. */
store_status_t store_bulk_game_ended(store_t *store, const char *id, const char *game_id, unsigned ttl_seconds);

#endif
