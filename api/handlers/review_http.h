/* What the PGN route takes from the review routes (review_handlers.c): the
 * [%eval] texts of a game's finished review, when it reviewed the moves the
 * game has now. */
#ifndef CHESSD_API_HANDLERS_REVIEW_HTTP_H
#define CHESSD_API_HANDLERS_REVIEW_HTTP_H

#include "../game/service.h"
#include "../http/request.h"

/* evals[k] for ply k + 1 (NULL: none), *count of them; NULL when the game
 * has no such review. Free with review_pgn_evals_free. */
char **review_pgn_evals(const api_request_t *req, const game_svc_game_t *g, int *count);
void review_pgn_evals_free(char **evals, int count);

#endif
