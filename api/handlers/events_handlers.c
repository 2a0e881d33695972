/* The event streams, as Server-Sent Events or NDJSON. GET
 * /v1/games/{id}/events: the game (a snapshot event), then its changes, or
 * its review's progress once it is over; a player's token keeps that
 * player present, a spectator sees a delayed game behind. POST
 * /v1/games/events: the same for many games on one stream, and POST
 * /v1/games/events/{stream}/ids adds games to an open one, from any replica. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../app.h"
#include "../../store/game_streams.h"
#include "../../store/store.h"
#include "../live/events.h"
#include "../config.h"
#include "../game/game_events.h"
#include "../game/service.h"
#include "../game/tokens.h"
#include "bulk_handlers.h"
#include "game_http.h"
#include "handlers.h"
#include "review_http.h"
#include "../http/jsonw.h"
#include "../input.h"
#include "../problem.h"
#include "../service_keys.h"

static const char *const media_types[EVENTS_FORMAT_COUNT] = {
    [EVENTS_NDJSON] = "application/x-ndjson",
    [EVENTS_SSE] = "text/event-stream",
};

static events_format_t format_of(const api_request_t *req)
{
    const char *accept = api_request_header(req, "Accept");
    return accept && strstr(accept, "text/event-stream") ? EVENTS_SSE : EVENTS_NDJSON;
}

/* Reads the game and hands the server a stream holding the first event;
 * the hub (events.c) queues the rest. A player's token (Authorization:
 * Bearer, never the URL, which logs keep) makes it that player's. */
void handle_game_events(const api_request_t *req, api_response_t *res)
{
    const char *token = game_http_bearer(req);
    /* A backend's service key follows the game as a spectator does: it is no player's. */
    if (service_keys_is_key(api_request_header(req, "Authorization")))
        token = NULL;
    else if (api_request_header(req, "Authorization") && !token) {
        api_problem(res, API_EUNAUTHORIZED, "send Authorization: Bearer <player token>, or no Authorization to follow "
                    "the game as a spectator", NULL, NULL);
        return;
    }
    events_format_t format = format_of(req);
    buf_t snapshot;
    buf_init(&snapshot);
    game_event_meta_t meta;
    game_svc_config_t games;
    config_game_service(app_of(req)->config, app_of(req)->store, &games);
    int player = 0;
    game_svc_view_t view;
    game_svc_status_t status = game_svc_snapshot_for(&games, req->path_param, token, game_http_live_key(req), &snapshot,
                                                     &meta, &player, &view);
    if (status == GAME_SVC_EFORBIDDEN) {
        api_problem(res, API_EFORBIDDEN, "the token is not a player's of this game", NULL, NULL);
    } else if (status != GAME_SVC_OK) {
        api_problem_store(res, status == GAME_SVC_ENOT_FOUND  ? STORE_ENOT_FOUND
                               : status == GAME_SVC_EDAMAGED ? STORE_EDAMAGED
                                                             : STORE_EUNAVAILABLE,
                          app_of(req)->store);
    } else if (buf_failed(&snapshot)) {
        api_problem(res, API_EINTERNAL, "out of memory", NULL, NULL);
    } else {
        /* A client that names the current version has the game: only what
         * follows is sent. Any other Last-Event-ID, however odd, gets the
         * snapshot. */
        uint64_t last;
        bool current = events_last_event_id(api_request_header(req, "Last-Event-ID"), &last) && last == meta.version;
        /* A finished game's stream follows its review while one is under way. */
        bool review = meta.ended && view.live && review_under_way(req, req->path_param, meta.version);
        if (current && meta.ended && !review) {
            /* It has the whole game: 204 tells an EventSource to stop reconnecting. */
            api_response_set(res, 204, media_types[format], calloc(1, 1), 0);
        } else {
            res->stream = events_stream_new(format, req->path_param, meta.version, current ? NULL : snapshot.data,
                                            snapshot.length, meta.ended);
            if (res->stream && player)
                events_stream_set_player(res->stream, (color_t)(player - 1));
            if (res->stream && !view.live)
                events_stream_set_delayed(res->stream, view.sig);
            if (res->stream && review)
                events_stream_follow_review(res->stream);
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

/* Reads "since" (absent, or an object of game ids, each one of list, to
 * versions 1 to 2^53 - 1) into since[], matching list. */
static bool read_since(const cJSON *root, const char *const *list, int count, uint64_t *since, api_response_t *res)
{
    memset(since, 0, (size_t)count * sizeof *since);
    const cJSON *map = cJSON_GetObjectItemCaseSensitive(root, "since");
    if (!map)
        return true;
    char detail[160];
    if (!cJSON_IsObject(map)) {
        api_problem(res, API_EINVALID_FIELD, "'since' must be an object of game ids to versions", NULL, NULL);
        return false;
    }
    for (const cJSON *item = map->child; item; item = item->next) {
        int k = 0;
        while (k < count && strcmp(list[k], item->string))
            k++;
        if (k == count) {
            snprintf(detail, sizeof detail, "'since' names %.*s, which is not in 'ids'", 24, item->string);
        } else if (!cJSON_IsNumber(item) || item->valuedouble < 1 || item->valuedouble > 9007199254740991.0
                   || item->valuedouble != (double)(uint64_t)item->valuedouble) {
            snprintf(detail, sizeof detail, "since[%s] must be a version: an integer from 1", list[k]);
        } else {
            since[k] = (uint64_t)item->valuedouble;
            continue;
        }
        api_problem(res, API_EINVALID_FIELD, detail, NULL, NULL);
        return false;
    }
    return true;
}

/* The stream's ids are stored under a new stream id, so that any replica
 * can add to them; the hub reads the games. */
void handle_games_events(const api_request_t *req, api_response_t *res)
{
    static const char *const allowed[] = { "ids", "bulk", "since", NULL };
    cJSON *root = input_object(req, allowed, res);
    if (!root)
        return;
    const char *list[EVENTS_MUX_MAX];
    uint64_t since[EVENTS_MUX_MAX];
    int count = 0;
    char stream[TOKENS_ID_SIZE];
    store_status_t status;
    void *bulk = NULL; /* the ids of a bulk, held while they are read */
    if (!bulk_ids_read(req, root, list, EVENTS_MUX_MAX, &count, &bulk, res)
        || !read_since(root, list, count, since, res)) {
        /* the problem is in res */
    } else if (!tokens_new_id(stream)) {
        api_problem(res, API_EINTERNAL, "no random stream id could be drawn", NULL, NULL);
    } else if ((status = store_stream_ids_put(app_of(req)->store, stream, list, (unsigned)count, EVENTS_MUX_IDS_TTL))
               != STORE_OK) {
        api_problem_store(res, status, app_of(req)->store);
    } else {
        events_format_t format = format_of(req);
        res->stream = events_mux_new(format, stream, list, since, (unsigned)count);
        if (res->stream && !game_http_live_key(req))
            events_stream_set_delayed(res->stream, 0); /* its games as a spectator sees them */
        if (!res->stream) {
            api_problem(res, API_EINTERNAL, "out of memory", NULL, NULL);
        } else {
            res->status = 200;
            res->content_type = media_types[format];
        }
    }
    bulk_ids_free(bulk);
    cJSON_Delete(root);
}

typedef struct {
    unsigned total, max;
} ids_bound_t;

static void write_ids_bound(jsonw_t *w, const void *ctx)
{
    const ids_bound_t *bound = ctx;
    jsonw_key(w, "ids");
    jsonw_uint(w, bound->total);
    jsonw_key(w, "max");
    jsonw_uint(w, bound->max);
}

void handle_games_events_add(const api_request_t *req, api_response_t *res)
{
    static const char *const allowed[] = { "ids", NULL };
    cJSON *root = input_object(req, allowed, res);
    if (!root)
        return;
    const char *list[EVENTS_MUX_MAX];
    int count = 0;
    if (input_game_ids(root, EVENTS_MUX_MAX, list, &count, res)) {
        unsigned added = 0, total = 0;
        const char *stream = req->path_param;
        store_status_t status = tokens_is_id(stream) ? store_stream_ids_add(app_of(req)->store, stream, list,
                                                                            (unsigned)count, EVENTS_MUX_MAX,
                                                                            EVENTS_MUX_IDS_TTL, &added, &total)
                                                     : STORE_ENOT_FOUND;
        if (status == STORE_OK) {
            char *body = malloc(96);
            if (!body) {
                api_problem(res, API_EINTERNAL, "out of memory", NULL, NULL);
            } else {
                int n = snprintf(body, 96, "{\"stream\":\"%s\",\"added\":%u,\"ids\":%u}", stream, added, total);
                api_response_set(res, 200, "application/json", body, (size_t)n);
            }
        } else if (status == STORE_ENOT_FOUND) {
            api_problem(res, API_ESTREAM_NOT_FOUND, "no multi-game stream with this id is open", NULL, NULL);
        } else if (status == STORE_EFULL && total > 0) {
            char detail[128];
            snprintf(detail, sizeof detail, "the stream follows %u games; with these it would pass %d", total,
                     EVENTS_MUX_MAX);
            ids_bound_t bound = { total, EVENTS_MUX_MAX };
            api_problem(res, API_ETOO_MANY_IDS, detail, write_ids_bound, &bound);
        } else {
            api_problem_store(res, status, app_of(req)->store);
        }
    }
    cJSON_Delete(root);
}
