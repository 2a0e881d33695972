/* Service endpoints: liveness, readiness (503 while the server drains; it
 * reports Redis, and is 503 while Redis is down only with
 * --ready-requires-redis), version, metrics, and the OpenAPI document
 * (embedded into the binary at build time from openapi.yaml). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../app.h"
#include "../engine/pool.h"
#include "../game/engine_turns.h"
#include "../config.h"
#include "handlers.h"
#include "../http/jsonw.h"
#include "../metrics.h"
#include "../problem.h"
#include "../readiness.h"
#include "../redis_memory.h"
#include "../version.h"

/* openapi.yaml, linked in by spec.S. */
extern const char chessd_openapi_start[];
extern const char chessd_openapi_end[];

static void small_json(api_response_t *res, unsigned status, const char *text)
{
    size_t length = strlen(text);
    char *body = malloc(length + 1);
    if (body)
        memcpy(body, text, length + 1);
    api_response_set(res, status, "application/json", body, length);
}

void handle_healthz(const api_request_t *req, api_response_t *res)
{
    (void)req;
    small_json(res, 200, "{\"status\":\"ok\"}");
}

/* The members that say what is wrong with Redis (a problem's or the answer's). */
typedef struct {
    readiness_redis_t state;
    store_fault_t fault;
    const char *reason;
    const redis_memory_t *memory; /* NULL: no Redis */
} redis_report_t;

static void write_redis(jsonw_t *w, const void *ctx)
{
    const redis_report_t *r = ctx;
    jsonw_kv_string(w, "redis", readiness_redis_name(r->state));
    if (r->state == READINESS_REDIS_DOWN) {
        if (r->fault == STORE_FAULT_NONE)
            jsonw_kv_null(w, "redis_fault");
        else
            jsonw_kv_string(w, "redis_fault", store_fault_name(r->fault));
        jsonw_kv_string(w, "redis_reason", r->reason);
    }
    if (r->state == READINESS_REDIS_FULL)
        jsonw_kv_string(w, "redis_reason", r->reason);
    if (r->memory) { /* the latest background reading (redis_memory.h) */
        jsonw_key(w, "redis_memory");
        jsonw_object_begin(w);
        jsonw_kv_string(w, "policy", r->memory->policy);
        jsonw_key(w, "maxmemory");
        jsonw_uint(w, r->memory->maxmemory);
        jsonw_kv_bool(w, "eviction_possible", r->memory->eviction_possible);
        jsonw_object_end(w);
    }
}

/* A pool's state, off (none configured), up (every worker running),
 * degraded (some) or down (none), and its counts. */
static void write_pool(jsonw_t *w, const engine_pool_stats_t *st)
{
    const char *state = !st->configured ? "off" : st->up == st->workers ? "up" : st->up ? "degraded" : "down";
    jsonw_kv_string(w, "state", state);
    if (!st->configured)
        return;
    if (st->name[0])
        jsonw_kv_string(w, "name", st->name);
    jsonw_kv_int(w, "workers", st->workers);
    jsonw_kv_int(w, "up", st->up);
    jsonw_kv_int(w, "busy", st->busy);
    jsonw_kv_int(w, "queued", st->waiting);
    jsonw_key(w, "restarts");
    jsonw_uint(w, st->restarts);
    jsonw_key(w, "timeouts");
    jsonw_uint(w, st->timeouts);
}

/* The variants the computer plays here: standard and chess960 with a chess
 * engine, and those the variant engine lists (known once one started). */
static void write_variants(jsonw_t *w, const engine_pool_stats_t *chess, const engine_pool_stats_t *variants)
{
    jsonw_key(w, "variants");
    jsonw_array_begin(w);
    if (chess->configured) {
        jsonw_string(w, variant_rules(VARIANT_STANDARD)->key);
        jsonw_string(w, "chess960");
    }
    for (int v = VARIANT_STANDARD + 1; v < VARIANT_COUNT && variants->configured; v++)
        if (variants->variants & 1u << v)
            jsonw_string(w, variant_rules((variant_t)v)->key);
    jsonw_array_end(w);
}

/* /readyz's "engine" member: the chess engine's pool, the variants the
 * computer plays, the variant engine's pool, and the computer's turns. */
static void write_engine(jsonw_t *w, const app_t *app)
{
    engine_pool_stats_t st, variant_st;
    engine_pool_stats(app->engines, &st);
    engine_pool_stats(app->variant_engines, &variant_st);
    jsonw_key(w, "engine");
    jsonw_object_begin(w);
    write_pool(w, &st);
    struct engine_turns *turns = app->turns;
    engine_turns_stats_t t;
    engine_turns_stats(turns, &t);
    if (turns && t.backlog_known) { /* the computer's turns, from every replica, as last read */
        jsonw_key(w, "turns");
        jsonw_object_begin(w);
        jsonw_key(w, "queued");
        jsonw_uint(w, t.queued);
        jsonw_key(w, "in_flight");
        jsonw_uint(w, t.in_flight);
        jsonw_key(w, "clients");
        jsonw_uint(w, t.owners);
        jsonw_key(w, "oldest_ms");
        jsonw_uint(w, t.oldest_age_ms);
        jsonw_object_end(w);
    }
    if (st.configured || variant_st.configured) { /* no computer at all: nothing to list */
        write_variants(w, &st, &variant_st);
        jsonw_key(w, "variant_engine");
        jsonw_object_begin(w);
        write_pool(w, &variant_st);
        jsonw_object_end(w);
    }
    jsonw_object_end(w);
}

/* Ready while the stateless API can be served: Redis only reported (up, down
 * with its fault and reason, or off), unless --ready-requires-redis makes
 * its outage a 503 too. Never waits for Redis (readiness.h). */
void handle_readyz(const api_request_t *req, api_response_t *res)
{
    if (req->draining) {
        api_problem(res, API_EUNAVAILABLE, "shutting down", NULL, NULL);
        return;
    }
    if (app_of(req)->engine_only) {
        engine_pool_stats_t st;
        engine_pool_stats(app_of(req)->engines, &st);
        if (!st.up) {
            api_problem(res, API_EENGINE_UNAVAILABLE, "no engine is running (each is restarted after a backoff)", NULL,
                        NULL);
            res->retry_after = 1;
            return;
        }
    }
    char reason[400] = "";
    redis_memory_t memory;
    redis_memory_get(&memory);
    redis_report_t report = { READINESS_REDIS_OFF, STORE_FAULT_NONE, reason, app_of(req)->store ? &memory : NULL };
    report.state = readiness_check(app_of(req)->store, reason, sizeof reason, &report.fault);
    const config_t *cfg = app_of(req)->config;
    if (report.state == READINESS_REDIS_DOWN && cfg && cfg->ready_requires_redis) {
        api_problem(res, API_ESTORE_UNAVAILABLE, reason, write_redis, &report);
        return;
    }
    /* Not ready while Redis may evict games, with --require-noeviction. A
     * full Redis stays ready: every replica shares it, so taking them all
     * out of rotation would only stop the reads that still work. */
    if (app_of(req)->store && memory.eviction_possible && cfg && cfg->require_noeviction) {
        char detail[200];
        snprintf(detail, sizeof detail,
                 memory.read ? "Redis's maxmemory-policy is %s, not noeviction: it may evict games "
                               "(--require-noeviction)"
                             : "Redis's maxmemory-policy has not been read yet (%s) (--require-noeviction)",
                 memory.policy);
        api_problem(res, API_ESTORE_MAY_EVICT, detail, write_redis, &report);
        return;
    }
    jsonw_t w;
    jsonw_init(&w);
    jsonw_object_begin(&w);
    jsonw_kv_string(&w, "status", "ready");
    write_redis(&w, &report);
    write_engine(&w, app_of(req));
    jsonw_object_end(&w);
    size_t length = 0;
    char *body = jsonw_finish(&w, &length);
    api_response_set(res, 200, "application/json", body, length);
}

void handle_version(const api_request_t *req, api_response_t *res)
{
    (void)req;
    small_json(res, 200, "{\"name\":\"chessd\",\"version\":\"" CHESSD_VERSION "\"}");
}

void handle_openapi(const api_request_t *req, api_response_t *res)
{
    (void)req;
    size_t length = (size_t)(chessd_openapi_end - chessd_openapi_start);
    char *body = malloc(length + 1);
    if (body) {
        memcpy(body, chessd_openapi_start, length);
        body[length] = '\0';
    }
    api_response_set(res, 200, "application/yaml", body, length);
}

void handle_metrics(const api_request_t *req, api_response_t *res)
{
    size_t length = 0;
    (void)readiness_check(app_of(req)->store, NULL, 0, NULL); /* chessd_redis_up as of now (it never waits) */
    char *text = metrics_render(app_of(req)->store, app_of(req)->engines, &length);
    api_response_set(res, 200, "text/plain; version=0.0.4; charset=utf-8", text, length);
}
