/* Analysis of one position on the engine pool, for the analysis routes:
 * the request's limits (each bounded by the server), the search, and the
 * answer. Its members take the names python-chess's InfoDict and Lichess's
 * cloud evaluation use (multipv, depth, seldepth, nodes, nps, time, cp or
 * mate, wdl, pv), every move in UCI and SAN. */
#ifndef CHESSD_API_ENGINE_ANALYSIS_H
#define CHESSD_API_ENGINE_ANALYSIS_H

#include <stdbool.h>
#include <stdint.h>

#include "../../rules/rules.h"
#include "../http/jsonw.h"
#include "pool.h"

/* The search asked for: zero fields are not set (with none set, nodes
 * ANALYSIS_DEFAULT_NODES). multipv 0 means 1. */
typedef struct {
    int depth;
    uint64_t nodes;
    int movetime_ms;
    int multipv;
    bool wdl;
} analysis_request_t;

enum { ANALYSIS_DEFAULT_NODES = 1000000 };

/* The server's bounds on a request. */
typedef struct {
    int max_depth;
    uint64_t max_nodes;
    int max_think_ms; /* a movetime_ms's bound, and every search's deadline */
} analysis_bounds_t;

/* Runs the analysis of the position reached from start by moves (each
 * legal) on pool, waiting for an engine no longer than bounds->max_think_ms.
 * On ENGINE_OK writes into w, an open object, "bestmove", "bestmove_san",
 * "ponder" (when any), "lines", "engine" and "stopped" (the deadline ended
 * the search). Any other status writes nothing. */
engine_status_t analysis_run(engine_pool_t *pool, const position_t *start, const move_t *moves, int move_count,
                             const analysis_request_t *rq, const analysis_bounds_t *bounds, jsonw_t *w, char *err,
                             size_t err_size);

#endif
