/* What the review routes, the PGN route and the event streams share
 * (review_http.c): a stored review replayed from its game's start, and
 * whether one is under way. A finished review gives the [%eval] texts of
 * the moves it reviewed, when they are the game's moves now. */
#ifndef CHESSD_API_HANDLERS_REVIEW_HTTP_H
#define CHESSD_API_HANDLERS_REVIEW_HTTP_H

#include <stdbool.h>

#include "../../store/reviews.h"
#include "../game/reviews.h"
#include "../game/service.h"
#include "../http/request.h"

/* A review as read, replayed: the moves, the position before each, and
 * each position's parsed result (ok[k]). */
typedef struct {
    int count;
    move_t *moves;
    position_t *positions; /* count + 1 */
    review_position_t *results;
    bool *ok;
    int done;
} review_replay_t;

/* Replays rv from initial into p. False when it cannot be read (or memory
 * runs out). Free p with review_replay_free either way. */
bool review_replay(const store_review_t *rv, const position_t *initial, review_replay_t *p);
void review_replay_free(review_replay_t *p);

/* evals[k] for ply k + 1 (NULL: none), *count of them; NULL when the game
 * has no such review. Free with review_pgn_evals_free. */
char **review_pgn_evals(const api_request_t *req, const game_svc_game_t *g, int *count);
void review_pgn_evals_free(char **evals, int count);

/* Whether game id's review of its version is queued or running (false too
 * when it cannot be read). */
bool review_under_way(const api_request_t *req, const char *id, uint64_t version);

#endif
