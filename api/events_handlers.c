/* GET /v1/games/{id}/events: the game as it is (a snapshot event), then its
 * changes as they are published, as Server-Sent Events (Accept:
 * text/event-stream) or newline-delimited JSON. The handler reads the game
 * and hands the server a stream holding the first event; the hub
 * (events.c) queues the rest. */
#include <stdlib.h>
#include <string.h>

#include "app.h"
#include "../store/store.h"
#include "live/events.h"
#include "config.h"
#include "game/game_events.h"
#include "game/service.h"
#include "handlers.h"
#include "problem.h"

static const char *const media_types[EVENTS_FORMAT_COUNT] = {
    [EVENTS_NDJSON] = "application/x-ndjson",
    [EVENTS_SSE] = "text/event-stream",
};

void handle_game_events(const api_request_t *req, api_response_t *res)
{
    const char *accept = api_request_header(req, "Accept");
    events_format_t format = accept && strstr(accept, "text/event-stream") ? EVENTS_SSE : EVENTS_NDJSON;
    buf_t snapshot;
    buf_init(&snapshot);
    game_event_meta_t meta;
    game_svc_config_t games;
    config_game_service(app_of(req)->config, app_of(req)->store, &games);
    game_svc_status_t status = game_svc_snapshot(&games, req->path_param, &snapshot, &meta);
    if (status != GAME_SVC_OK) {
        api_problem_store(res, status == GAME_SVC_ENOT_FOUND ? STORE_ENOT_FOUND : STORE_EUNAVAILABLE, app_of(req)->store);
    } else if (buf_failed(&snapshot)) {
        api_problem(res, API_EINTERNAL, "out of memory", NULL, NULL);
    } else {
        /* A client that names the current version has the game: only what
         * follows is sent. Any other Last-Event-ID, however odd, gets the
         * snapshot. */
        uint64_t last;
        bool current = events_last_event_id(api_request_header(req, "Last-Event-ID"), &last) && last == meta.version;
        if (current && meta.ended) {
            /* It has the whole game: 204 tells an EventSource to stop reconnecting. */
            api_response_set(res, 204, media_types[format], calloc(1, 1), 0);
        } else {
            res->stream = events_stream_new(format, req->path_param, meta.version, current ? NULL : snapshot.data,
                                            snapshot.length, meta.ended);
            if (!res->stream) {
                api_problem(res, API_EINTERNAL, "out of memory", NULL, NULL);
            } else {
                res->status = 200;
                res->content_type = media_types[format];
            }
        }
    }
    buf_free(&snapshot);
}
