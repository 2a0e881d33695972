/* Prometheus metrics: request counts by route and status, a latency
 * histogram, game moves applied, version conflicts, writes refused by a full
 * store or left with an unknown outcome, open connections, the store's
 * errors and reconnects, whether Redis answered the latest check, live event
 * streams, the accept threads' connection counts. Counters are lock-free atomics, safe to bump from any server thread. */
#ifndef CHESSD_API_METRICS_H
#define CHESSD_API_METRICS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "live/events.h"

struct store;
struct engine_pool;
struct engine_turns;
struct engine_pool;
struct acceptor;

/* The route labels: route_name(i) for 0 <= i < route_count (static strings).
 * The server calls this once, before its threads start; until then, and for
 * routes past the first 32, requests are counted as "unmatched". */
typedef const char *(*metrics_route_name_fn)(int route);
void metrics_init(int route_count, metrics_route_name_fn route_name);

/* route: an index below metrics_init's route_count, or -1 when no route matched. */
void metrics_request(int route, unsigned status, uint64_t micros);
void metrics_move_applied(void);
void metrics_version_conflict(void);
void metrics_store_full(void);      /* a write answered 507 store_full */
void metrics_outcome_unknown(void); /* a write answered 503 outcome_unknown */
void metrics_connection(int delta);
/* The accept threads (api/http/acceptor.h) whose counts each scrape reads: the
 * main port's and the probe port's (NULL: none). Set once, before either
 * thread starts; both must outlive every scrape. */
void metrics_listeners(const struct acceptor *main_port, const struct acceptor *probe_port);
/* One message from libmicrohttpd itself (an aborted connection, say). */
void metrics_http_library_message(void);
/* A request refused by the server's own framing check (two Content-Length
 * values, a Transfer-Encoding other than chunked, both headers): the strict
 * reader (api/http/wire.c) refuses all of these before libmicrohttpd sees
 * them, so each one counted is a request that got past it. */
void metrics_http_framing_backstop(void);
/* Perft requests waiting for a pool thread: +1 when one is queued, -1 when it starts. */
void metrics_perft_waiting(int delta);
/* Game requests waiting for a store thread (the same), and those refused
 * because the store threads' queue was full or they waited past the Redis
 * timeout. */
void metrics_store_waiting(int delta);
void metrics_analysis_waiting(int delta); /* analyses queued for an engine route thread */
void metrics_analysis_refused(void); /* the queue was full (metrics_analysis_refused_by QUEUE_FULL) */
/* Analyses refused, by why: the engine routes' queue was full, the client
 * had its most (--engine-analyses-per-client), no engine came free within
 * a search's time. */
typedef enum {
    METRICS_ANALYSIS_REFUSED_QUEUE_FULL = 0,
    METRICS_ANALYSIS_REFUSED_PER_CLIENT,
    METRICS_ANALYSIS_REFUSED_BUSY,
    METRICS_ANALYSIS_REFUSED_COUNT
} metrics_analysis_refused_t;
void metrics_analysis_refused_by(metrics_analysis_refused_t why);
/* Moves and creations refused because they would queue a computer's turn
 * past a bound: the client's (--engine-turns-per-client) or everyone's. */
typedef enum { METRICS_TURN_REFUSED_PER_CLIENT = 0, METRICS_TURN_REFUSED_BACKLOG, METRICS_TURN_REFUSED_COUNT } metrics_turn_refused_t;
void metrics_engine_turn_refused(metrics_turn_refused_t why);
/* The computer's turns whose counts /metrics reports (NULL: none). */
void metrics_engine_turns(struct engine_turns *turns);        /* analyses answered 503 engine_busy unrun: the queue was full */
void metrics_store_refused(void);
/* Live events (api/live/events.c): event streams and long-poll waiters held now;
 * events queued on streams (snapshots included); snapshots sent to a stream
 * that fell behind or might have; streams closed because their client took
 * none of their bytes for --stream-stall-timeout; Pub/Sub connections remade
 * after a loss; flag checks made when a clock's deadline came. */
void metrics_streams_open(int delta);
void metrics_stream_event(void);
void metrics_stream_resync(void);
void metrics_stream_stalled(void);
/* A stream released, by why it closed (events.h). */
void metrics_stream_closed(events_close_t why);
/* New readers refused for the buffer budget (buffers_full) or the export
 * cap (too_many_exports). */
typedef enum { METRICS_REFUSED_BUFFERS_FULL = 0, METRICS_REFUSED_TOO_MANY_EXPORTS, METRICS_REFUSED_COUNT } metrics_refused_t;
void metrics_buffer_refused(metrics_refused_t why);
void metrics_pubsub_reconnect(void);
void metrics_flag_check(void);

/* The outcome of the latest Redis check (the readiness watcher,
 * api/readiness.c): up or not. A scrape never asks Redis itself; it reads
 * the store's breaker for chessd_redis_fault. */
void metrics_redis_up(bool up);

/* The exposition text (malloc'd, caller frees), or NULL on OOM. store NULL:
 * no Redis is configured (chessd_redis_configured 0, no chessd_redis_up);
 * chessd_redis_up is also left out until a first check has run. */
char *metrics_render(struct store *store, struct engine_pool *engines, size_t *length);

#endif
