/* Multi-game streams (POST /v1/games/events): the ids each stream follows,
 * kept in Redis so that any replica may add to them (game_streams.c). */
#ifndef CHESSD_STORE_GAME_STREAMS_H
#define CHESSD_STORE_GAME_STREAMS_H

#include "store.h"

/* A stream's ids are a set (STORE_STREAM_KEY_PREFIX "{<stream>}"), made by
 * the replica holding the stream, refreshed by it (expiring ttl_seconds
 * after the last touch) and deleted when it closes. An add (any replica)
 * puts ids in the set and publishes on the stream's channel
 * (store_stream_channel) in one atomic step, and the holder reads the set
 * again. Stream ids and game ids are 1 to STORE_ENGINE_ID_SIZE - 1
 * characters of base64url; any other is STORE_ENOT_FOUND, nothing sent. */
#define STORE_STREAM_KEY_PREFIX "chessd:stream:"
enum { STORE_STREAM_IDS_MAX = 500 };
void store_stream_channel(const char *stream, char out[STORE_CHANNEL_SIZE]);
/* Makes the set of stream's count ids (replacing any). */
store_status_t store_stream_ids_put(store_t *store, const char *stream, const char *const *ids, unsigned count,
                                    unsigned ttl_seconds);
/* Adds ids (distinct) to an existing set: STORE_ENOT_FOUND when there is
 * none (no such stream, or it closed), STORE_EFULL with nothing added when
 * the set would pass max ids; *total is the set's size after (or as it is,
 * when refused) and *added how many were new. */
store_status_t store_stream_ids_add(store_t *store, const char *stream, const char *const *ids, unsigned count,
                                    unsigned max, unsigned ttl_seconds, unsigned *added, unsigned *total);
/* Reads up to max of the set's ids into out and refreshes its expiry;
 * STORE_ENOT_FOUND when the set is gone. A member that is no id is left out. */
store_status_t store_stream_ids_read(store_t *store, const char *stream, unsigned ttl_seconds,
                                     char (*out)[STORE_ENGINE_ID_SIZE], unsigned max, unsigned *count);
/* Deletes the set (the stream closed). */
store_status_t store_stream_ids_drop(store_t *store, const char *stream);

#endif
