/* Every HTTP handler, grouped by the file that implements it. Each is an
 * api_handler_fn; its row in routes.c says whether a work pool runs it. */
#ifndef CHESSD_API_HANDLERS_HANDLERS_H
#define CHESSD_API_HANDLERS_HANDLERS_H

#include "../http/request.h"

/* meta_handlers.c */
void handle_healthz(const api_request_t *req, api_response_t *res);
void handle_readyz(const api_request_t *req, api_response_t *res);
void handle_version(const api_request_t *req, api_response_t *res);
void handle_openapi(const api_request_t *req, api_response_t *res);
void handle_metrics(const api_request_t *req, api_response_t *res);

/* position_handlers.c */
void handle_position(const api_request_t *req, api_response_t *res);
void handle_position_moves(const api_request_t *req, api_response_t *res);
void handle_perft(const api_request_t *req, api_response_t *res);
void handle_position_analysis(const api_request_t *req, api_response_t *res);
void handle_game_analysis(const api_request_t *req, api_response_t *res);
/* HEAD /v1/games/{id}/analysis: GET's checks and head, never a search. */
void handle_game_analysis_head(const api_request_t *req, api_response_t *res);

/* review_handlers.c */
void handle_game_review_post(const api_request_t *req, api_response_t *res);
void handle_game_review_get(const api_request_t *req, api_response_t *res);

/* pgn_handlers.c */
void handle_pgn(const api_request_t *req, api_response_t *res);

/* game_handlers.c */
void handle_game_create(const api_request_t *req, api_response_t *res);
void handle_bulk_create(const api_request_t *req, api_response_t *res);
void handle_bulk_get(const api_request_t *req, api_response_t *res);
void handle_bulk_start_clocks(const api_request_t *req, api_response_t *res);
void handle_bulk_cancel(const api_request_t *req, api_response_t *res);
void handle_game_get(const api_request_t *req, api_response_t *res);
void handle_games_export(const api_request_t *req, api_response_t *res);
void handle_games_finished(const api_request_t *req, api_response_t *res);
void handle_game_embed(const api_request_t *req, api_response_t *res);
void handle_game_move(const api_request_t *req, api_response_t *res);
void handle_game_undo(const api_request_t *req, api_response_t *res);
void handle_game_resign(const api_request_t *req, api_response_t *res);
void handle_game_draw(const api_request_t *req, api_response_t *res);
void handle_game_pgn(const api_request_t *req, api_response_t *res);
void handle_game_takeback(const api_request_t *req, api_response_t *res);
void handle_game_abort(const api_request_t *req, api_response_t *res);
void handle_game_give_time(const api_request_t *req, api_response_t *res);
void handle_game_start_clocks(const api_request_t *req, api_response_t *res);
void handle_game_claim_victory(const api_request_t *req, api_response_t *res);
void handle_game_claim_draw(const api_request_t *req, api_response_t *res);
void handle_game_board_svg(const api_request_t *req, api_response_t *res);

/* webhook_handlers.c */
void handle_webhook_create(const api_request_t *req, api_response_t *res);
void handle_webhooks_list(const api_request_t *req, api_response_t *res);
void handle_webhook_get(const api_request_t *req, api_response_t *res);
void handle_webhook_delete(const api_request_t *req, api_response_t *res);
void handle_webhook_deliveries(const api_request_t *req, api_response_t *res);
/* events_handlers.c */
void handle_game_events(const api_request_t *req, api_response_t *res);
void handle_games_events(const api_request_t *req, api_response_t *res);
void handle_games_events_add(const api_request_t *req, api_response_t *res);

#endif
