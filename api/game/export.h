/* Export of games by id (POST /v1/games/export), and feed pages (GET
 * /v1/games/finished): a body made while it is sent (api_body_ops_t), the
 * games in order as NDJSON (GET /v1/games/{id}?legal_moves=false's JSON) or
 * PGN (GET .../{id}/pgn's). Games are read in batches on the game requests'
 * pool, only while the client takes what was made: little memory held. */
#ifndef CHESSD_API_GAME_EXPORT_H
#define CHESSD_API_GAME_EXPORT_H

#include <stdbool.h>

#include "../../store/finished_feed.h"
#include "../http/request.h"
#include "../http/workpool.h"
#include "../render/pgn.h"
#include "service.h"

/* The bytes made and not yet taken by the client stay under
 * EXPORT_BUFFERED_MAX (a game's own text may pass it). */
enum { EXPORT_IDS_MAX = 300, EXPORT_BUFFERED_MAX = 256 * 1024, EXPORT_RETRY_AFTER = 5 /* seconds, refused */ };

typedef struct game_export game_export_t;

/* A place for one more export while fewer than max run; false else. The
 * export made with it gives it back when freed; game_export_unreserve
 * gives it back when none could be made. */
bool game_export_reserve(unsigned max);
void game_export_unreserve(void);
/* Exports running now, and cut (in all) to keep within the buffer budget. */
void game_export_stats(unsigned *open, unsigned long long *shed);

/* An export of count ids (1..EXPORT_IDS_MAX game ids, checked by the
 * caller, duplicates already dropped), read through games on pool (which
 * must outlive it), on a place reserved (game_export_reserve). NULL when
 * out of memory. It becomes the answer's body_stream with body_ops =
 * &game_export_ops. pgn: PGN, a blank line between games, with defaults'
 * Event and Site (its texts must outlive the export: the settings'); else
 * NDJSON, a game's JSON a line. Each game as the holder of token (NULL:
 * none) and a key that reads live or not (live_key) may see it
 * (spectator.h): live, or a spectator's view. */
game_export_t *game_export_new(const game_svc_config_t *games, workpool_t *pool, const char *const *ids, int count,
                               bool pgn, const pgn_defaults_t *defaults, const char *token, bool live_key);

/* A feed page of count entries (0 to STORE_FEED_READ_MAX, as a read gave
 * them), as game_export_new's: NDJSON, a line an entry, {"cursor", "id",
 * "status", "result", "termination", "ended_at", "game"}, "game" the Game
 * as an export writes it, or null once the game left Redis (counted as
 * missing in the trailers). The entries are copied. */
game_export_t *game_export_feed_new(const game_svc_config_t *games, workpool_t *pool, const store_feed_entry_t *entries,
                                    int count);

extern const api_body_ops_t game_export_ops;

/* The trailers an export's answer ends with (its Trailer header): the games
 * exported, and the ids not found, which are skipped. A read that fails for
 * another reason (Redis down) cuts the answer before them, so a client never
 * takes a partial export for a whole one. */
#define GAME_EXPORT_TRAILERS "X-Games-Exported, X-Games-Missing"

#endif
