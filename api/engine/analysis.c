/* Analysis on the engine pool (analysis.h). The search runs as a pool job,
 * each try (a retry after an engine failed too) with its own deadline; its
 * result is written as JSON only after the job, on the caller's thread. */
#include "analysis.h"

#include <stdio.h>
#include <string.h>

#include "../../rules/base/clock.h"

enum { DEADLINE_MARGIN_MS = 500 };

typedef struct {
    const position_t *start;
    const move_t *moves;
    int move_count;
    engine_limits_t limits;
    int budget_ms; /* each try's deadline, from its start: the think time and a margin for a movetime */
    engine_result_t result;
    char name[ENGINE_NAME_MAX];
} job_t;

static engine_status_t run_search(engine_t *e, void *ctx, char *err, size_t err_size)
{
    job_t *job = ctx;
    static const engine_strength_t full = { 0 };
    job->limits.deadline_ms = clock_now_ms() + (uint64_t)job->budget_ms;
    engine_status_t s = engine_set_strength(e, &full, err, err_size);
    if (s == ENGINE_OK)
        s = engine_search(e, job->start, job->moves, job->move_count, &job->limits, &job->result, err, err_size);
    snprintf(job->name, sizeof job->name, "%s", engine_name(e));
    return s;
}

/* Writes the moves of a line, from pos, as an array named key: UCI, or SAN when san. */
static void write_pv(jsonw_t *w, const char *key, bool san, const position_t *from, const move_t *pv, int count)
{
    position_t pos = *from;
    char text[SAN_BUFFER_SIZE];
    jsonw_key(w, key);
    jsonw_array_begin(w);
    for (int i = 0; i < count; i++) {
        jsonw_string(w, san ? san_format(&pos, pv[i], text) : uci_format(&pos, pv[i], text));
        position_undo_t undo;
        position_make(&pos, pv[i], &undo);
    }
    jsonw_array_end(w);
}

static void write_line(jsonw_t *w, const position_t *pos, const engine_line_t *line, bool wdl)
{
    jsonw_object_begin(w);
    jsonw_kv_int(w, "multipv", line->multipv);
    jsonw_kv_int(w, line->is_mate ? "mate" : "cp", line->value);
    if (line->bound != ENGINE_BOUND_EXACT)
        jsonw_kv_bool(w, line->bound == ENGINE_BOUND_LOWER ? "lowerbound" : "upperbound", true);
    if (wdl && line->has_wdl) {
        jsonw_key(w, "wdl");
        jsonw_array_begin(w);
        for (int i = 0; i < 3; i++)
            jsonw_int(w, line->wdl[i]);
        jsonw_array_end(w);
    }
    jsonw_kv_int(w, "depth", line->depth);
    jsonw_kv_int(w, "seldepth", line->seldepth);
    jsonw_key(w, "nodes");
    jsonw_uint(w, line->nodes);
    jsonw_key(w, "nps");
    jsonw_uint(w, line->nps);
    char seconds[32];
    snprintf(seconds, sizeof seconds, "%.3f", (double)line->time_ms / 1000.0);
    jsonw_key(w, "time");
    jsonw_raw(w, seconds);
    write_pv(w, "pv", false, pos, line->pv, line->pv_count);
    write_pv(w, "pv_san", true, pos, line->pv, line->pv_count);
    jsonw_object_end(w);
}

engine_status_t analysis_run(engine_pool_t *pool, const position_t *start, const move_t *moves, int move_count,
                             const analysis_request_t *rq, const analysis_bounds_t *bounds, jsonw_t *w, char *err,
                             size_t err_size)
{
    job_t job = { .start = start, .moves = moves, .move_count = move_count };
    job.limits.depth = rq->depth;
    job.limits.nodes = rq->nodes;
    job.limits.movetime_ms = rq->movetime_ms;
    if (!rq->depth && !rq->nodes && !rq->movetime_ms)
        job.limits.nodes = ANALYSIS_DEFAULT_NODES;
    job.limits.multipv = rq->multipv ? rq->multipv : 1;
    uint64_t now = clock_now_ms();
    int think = rq->movetime_ms && rq->movetime_ms < bounds->max_think_ms ? rq->movetime_ms : bounds->max_think_ms;
    job.budget_ms = think + (rq->movetime_ms ? DEADLINE_MARGIN_MS : 0);
    engine_status_t s = engine_pool_run(pool, NULL, start->chess960, run_search, &job, now + (uint64_t)bounds->max_think_ms,
                                        err, err_size);
    if (s != ENGINE_OK)
        return s;
    position_t pos;
    position_t reached = *start;
    for (int i = 0; i < move_count; i++) {
        position_undo_t undo;
        position_make(&reached, moves[i], &undo);
    }
    pos = reached;
    char text[SAN_BUFFER_SIZE];
    jsonw_kv_string(w, "bestmove", job.result.bestmove_uci);
    jsonw_kv_string(w, "bestmove_san", san_format(&pos, job.result.bestmove, text));
    if (job.result.ponder != MOVE_NONE)
        jsonw_kv_string(w, "ponder", job.result.ponder_uci);
    jsonw_key(w, "lines");
    jsonw_array_begin(w);
    for (int i = 0; i < job.result.line_count; i++)
        write_line(w, &pos, &job.result.lines[i], rq->wdl);
    jsonw_array_end(w);
    jsonw_key(w, "engine");
    jsonw_object_begin(w);
    jsonw_kv_string(w, "name", job.name);
    jsonw_object_end(w);
    jsonw_kv_bool(w, "stopped", job.result.stopped);
    return ENGINE_OK;
}
