/* The HTTP side of analysis (engine/analysis.h): the search limits read
 * from a body or a query (each checked against the server's bounds), the
 * answer for a position, and the one place an engine status becomes a
 * problem. Both analysis routes use it: POST /v1/position/analysis here
 * and GET /v1/games/{id}/analysis (game_handlers.c). */
#ifndef CHESSD_API_HANDLERS_ANALYSIS_HTTP_H
#define CHESSD_API_HANDLERS_ANALYSIS_HTTP_H

#include <cjson/cJSON.h>
#include <stdbool.h>

#include "../../rules/rules.h"
#include "../app.h"
#include "../engine/analysis.h"
#include "../game/service.h"
#include "../http/request.h"

/* The limits of a GET's query (depth, nodes, movetime_ms, multipv, wdl);
 * false with res filled (400, or 422 analysis_limit_too_large) when one is bad. */
bool analysis_read_query(const api_request_t *req, analysis_request_t *rq, api_response_t *res);

/* The limits of a JSON body's members (depth, nodes, movetime_ms,
 * multipv, wdl); false with res filled as analysis_read_query does. */
bool analysis_read_body(const api_request_t *req, const cJSON *root, analysis_request_t *rq, api_response_t *res);

/* From game_handlers.c, for the review routes: whether a game may be
 * analysed now (over, against the computer, or created with analysis
 * open), and the game of the request's path read for a caller who may
 * analyse it (false with res filled). */
bool game_analysis_allowed(const game_record_t *record);
bool game_read_for_analysis(const api_request_t *req, api_response_t *res, game_svc_game_t *g);

/* The engines that play variant (engine_pool_for_variant): Stockfish's
 * pool for standard chess, whatever its state (a search then answers for
 * it), --variant-engine's for a variant it lists; NULL with res filled
 * else: 422 variant_not_supported_by_engine, or 503 engine_unavailable
 * (Retry-After) while the variant engine has not started. */
engine_pool_t *analysis_pool(const app_t *app, variant_t variant, api_response_t *res);

/* Answers the analysis of the position reached from start by moves
 * (history: the keys of the positions they were played in, for the
 * position's status): the position and its status, and, unless the game
 * is over there, the engine's lines (of the engine analysis_pool gives; its
 * refusal otherwise). head: a HEAD, which never searches
 * nor waits for an engine: where GET would search it answers GET's head
 * (200, no Content-Length), or 503 when the server runs no engine. */
void analysis_respond(const api_request_t *req, api_response_t *res, const position_t *start, const move_t *moves,
                      int move_count, const uint64_t *history, const analysis_request_t *rq, bool head);

#endif
