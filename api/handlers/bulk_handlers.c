/* The bulk routes: POST /v1/games/bulk (a round of games in one call), its
 * state, its clocks started and its cancel under the bulk's token, and the
 * ids of a bulk for an export or a multi-game stream. A refused pairing's
 * problem names its index, so the organiser knows which game to fix. */
#include "bulk_handlers.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../rules/base/clock.h"
#include "../app.h"
#include "../http/ratelimit.h"
#include "../game/bulk.h"
#include "../input.h"
#include "../problem.h"
#include "../service_keys.h"
#include "game_create_input.h"
#include "game_http.h"
#include "webhook_http.h"
#include "handlers.h"

/* Adds the pairing's index to the problem in res: "index" and "pointer"
 * members, and the detail prefixed with "games[i]: ". */
static void problem_at(api_response_t *res, int index)
{
    cJSON *problem = res->body ? cJSON_ParseWithLength(res->body, res->body_length) : NULL;
    cJSON *detail = problem ? cJSON_GetObjectItemCaseSensitive(problem, "detail") : NULL;
    char text[400], pointer[32];
    snprintf(pointer, sizeof pointer, "/games/%d", index);
    if (cJSON_IsString(detail)) {
        snprintf(text, sizeof text, "games[%d]: %s", index, detail->valuestring);
        cJSON_SetValuestring(detail, text);
    }
    if (problem && cJSON_AddNumberToObject(problem, "index", index) && cJSON_AddStringToObject(problem, "pointer", pointer)) {
        char *body = cJSON_PrintUnformatted(problem);
        if (body)
            api_response_set(res, res->status, res->content_type, body, strlen(body));
    }
    cJSON_Delete(problem);
}

/* One pairing's object, its members checked. */
static bool read_pairing(const cJSON *item, int index, game_bulk_pairing_t *p, api_response_t *res)
{
    static const char *const members[] = { "white", "black", "tags", "metadata" };
    char detail[160];
    if (!cJSON_IsObject(item)) {
        api_problem(res, API_EINVALID_FIELD, "a pairing must be an object: {white, black, tags, metadata}", NULL, NULL);
        problem_at(res, index);
        return false;
    }
    for (const cJSON *m = item->child; m; m = m->next) {
        bool known = false;
        for (size_t k = 0; k < sizeof members / sizeof *members; k++)
            known = known || !strcmp(m->string, members[k]);
        if (!known) {
            snprintf(detail, sizeof detail, "unknown field '%.64s': a pairing has white, black, tags and metadata",
                     m->string);
            api_problem(res, API_EUNKNOWN_FIELD, detail, NULL, NULL);
        }
        if (!known || input_member_repeated(item, "games[]", m, res)) {
            problem_at(res, index);
            return false;
        }
    }
    if (!game_create_input_pairing(item, p->names, &p->meta, res)) {
        problem_at(res, index);
        return false;
    }
    return true;
}

/* "games": 1 to GAME_BULK_MAX pairings into pairings (GAME_BULK_MAX of
 * them, zeroed), *count of them. */
static bool read_pairings(const cJSON *root, game_bulk_pairing_t *pairings, unsigned *count, api_response_t *res)
{
    const cJSON *games = cJSON_GetObjectItemCaseSensitive(root, "games");
    int size = cJSON_IsArray(games) ? cJSON_GetArraySize(games) : -1;
    char detail[160];
    if (size < 1) {
        api_problem(res, API_EINVALID_FIELD, "'games' must be an array of 1 to 500 pairings", NULL, NULL);
        return false;
    }
    if (size > GAME_BULK_MAX) {
        snprintf(detail, sizeof detail, "'games' has %d pairings; a bulk has at most %d", size, GAME_BULK_MAX);
        api_problem_limit(res, API_EBULK_TOO_LARGE, detail, "games", GAME_BULK_MAX);
        return false;
    }
    int index = 0;
    for (const cJSON *item = games->child; item; item = item->next, index++)
        if (!read_pairing(item, index, &pairings[index], res))
            return false;
    *count = (unsigned)size;
    return true;
}

/* The client's bulk games budget (--rate-limit-bulk-games): a bulk is one
 * creation of the per-address limit, but its games cost Redis as many. A
 * service key's holder spends its key's quota bulk-games instead. */
static bool bulk_games_allowed(const api_request_t *req, unsigned count, api_response_t *res)
{
    ratelimit_t *limiter = app_of(req)->bulk_games;
    char client[API_CLIENT_SIZE], detail[200];
    unsigned retry_after = 1;
    const unsigned counts[SERVICE_QUOTA_COUNT] = { [SERVICE_QUOTA_BULK_GAMES] = count };
    service_keys_spent_t spent;
    service_keys_t *keys = app_of(req)->service_keys;
    switch (keys ? service_keys_take(keys, api_request_header(req, "Authorization"), counts,
                                     (uint64_t)clock_now_us(), &spent)
                 : SERVICE_KEYS_ENONE) {
    case SERVICE_KEYS_OK:
        return true;
    case SERVICE_KEYS_ESPENT:
        api_problem_quota(res, API_ERATE_LIMITED, spent.detail, spent.limit, spent.max, spent.retry_after);
        return false;
    default: /* no key of the file: counted per address */
        break;
    }
    api_request_client(req, client);
    if (ratelimit_take_n(limiter, client, strlen(client), count, (uint64_t)clock_now_us(), &retry_after))
        return true;
    ratelimit_describe(limiter, "games made by bulks", "from one client address", "rate-limit-bulk-games", detail,
                       sizeof detail);
    api_problem_quota(res, API_ERATE_LIMITED, detail, "rate-limit-bulk-games", ratelimit_rate(limiter), retry_after);
    return false;
}

void handle_bulk_create(const api_request_t *req, api_response_t *res)
{
    static const char *const allowed[] = { "games", "fen", "chess960", "chess960_position", "variant", "clock",
                                           "takeback", "days_per_move", "start_clocks_at", "rules",
                                           "draw_offers_from_move", "draw_odds", "tags", "spectator_delay_plies",
                                           "webhooks", NULL };
    idem_request_t idem;
    if (!game_http_idempotency(req, true, &idem, res))
        return;
    cJSON *root = input_object(req, allowed, res);
    if (!root)
        return;
    game_svc_config_t c;
    game_http_service(req, &c);
    game_svc_request_t rq = { .key = idem.key, .fingerprint = idem.fingerprint, .answer_status = 201 };
    game_svc_result_t out = { 0 };
    game_svc_new_t *spec = calloc(1, sizeof *spec);
    game_bulk_pairing_t *pairings = calloc(GAME_BULK_MAX, sizeof *pairings); /* names: 257 KB, off the stack */
    webhook_http_games_t *hooks = calloc(1, sizeof *hooks);
    unsigned count = 0;
    if (!spec || !pairings || !hooks) {
        api_problem(res, API_EINTERNAL, "out of memory", NULL, NULL);
    } else if (game_create_input_read(root, spec, res) && read_pairings(root, pairings, &count, res)
               && bulk_games_allowed(req, count, res)
               && webhook_http_games_read(req, res, root, STORE_WEBHOOK_SCOPE_BULK, hooks)
               && webhook_http_games_see_live(req, res, hooks,
                                              spec->spectator_delay_plies >= 0 ? spec->spectator_delay_plies
                                                                               : c.spectator_delay_plies)) {
        webhook_http_games_attach(hooks, spec);
        game_svc_status_t status = game_bulk_create(&c, &rq, spec, pairings, count, &out);
        /* No bulk written: the subscriptions made for it go too. */
        webhook_http_games_done(hooks, status == GAME_SVC_OK || status == GAME_SVC_EUNKNOWN);
        game_http_answer(req, res, status, &out);
    } else {
        webhook_http_games_done(hooks, false);
    }
    free(hooks);
    game_svc_result_free(&out);
    for (unsigned i = 0; pairings && i < GAME_BULK_MAX; i++)
        game_meta_free(pairings[i].meta);
    free(pairings);
    if (spec)
        game_meta_free(spec->meta);
    free(spec);
    cJSON_Delete(root);
}

/* The bulk of the path; false with res filled (bulk_not_found...). */
static bool load_bulk(const api_request_t *req, const game_svc_config_t *c, const char *id, game_bulk_t *b,
                      api_response_t *res)
{
    game_svc_result_t out = { 0 };
    game_svc_status_t status = game_bulk_load(c, id, b, &out);
    if (status == GAME_SVC_ENOT_FOUND)
        api_problem(res, API_EBULK_NOT_FOUND, "no bulk has this id (a bulk goes when its last game does)", NULL, NULL);
    else if (status != GAME_SVC_OK)
        game_http_answer(req, res, status, &out);
    game_svc_result_free(&out);
    return status == GAME_SVC_OK;
}

void handle_bulk_get(const api_request_t *req, api_response_t *res)
{
    game_svc_config_t c;
    game_http_service(req, &c);
    game_bulk_t b;
    if (!load_bulk(req, &c, req->path_param, &b, res))
        return;
    buf_t body;
    buf_init(&body);
    game_svc_result_t out = { 0 };
    game_svc_status_t status = game_bulk_status(&c, &b, &body, &out);
    if (status == GAME_SVC_OK && !body.failed) {
        api_response_set(res, 200, "application/json", body.data, body.length);
        body.data = NULL;
    } else {
        game_http_answer(req, res, status == GAME_SVC_OK ? GAME_SVC_EINTERNAL : status, &out);
    }
    buf_free(&body);
    game_svc_result_free(&out);
    game_bulk_free(&b);
}

static void write_game(jsonw_t *w, const void *ctx)
{
    jsonw_kv_string(w, "game", ctx);
}

/* The organiser's change to every game of the path's bulk. */
static void organize(const api_request_t *req, api_response_t *res, game_svc_bulk_action_t action)
{
    static const char *const none[] = { NULL };
    cJSON *root = input_object(req, none, res); /* no field: an empty body or {} */
    if (!root)
        return;
    cJSON_Delete(root);
    game_svc_config_t c;
    game_http_service(req, &c);
    game_bulk_t b;
    if (!load_bulk(req, &c, req->path_param, &b, res))
        return;
    game_svc_result_t out = { 0 };
    unsigned changed = 0;
    game_svc_status_t status = game_bulk_authorize(&b, game_http_bearer(req), &out);
    if (status == GAME_SVC_OK)
        status = game_bulk_organize(&c, &b, action, &changed, &out);
    if (status == GAME_SVC_OK) {
        char body[160];
        int n = snprintf(body, sizeof body, "{\"id\":\"%s\",\"%s\":%u,\"count\":%u}", b.id,
                         action == GAME_SVC_BULK_CANCEL ? "cancelled" : "started", changed, b.count);
        char *copy = malloc((size_t)n + 1);
        if (copy)
            memcpy(copy, body, (size_t)n + 1);
        api_response_set(res, 200, "application/json", copy, copy ? (size_t)n : 0);
    } else if (status == GAME_SVC_EREFUSED && action == GAME_SVC_BULK_CANCEL) {
        char detail[200];
        snprintf(detail, sizeof detail, "game %.24s has begun (%s): nothing was cancelled", out.detail,
                 api_status_code(out.refusal == GAME_ECLOCK_RUNNING ? API_ECLOCK_RUNNING : API_EABORT_TOO_LATE));
        api_problem(res, API_EBULK_STARTED, detail, write_game, out.detail);
    } else {
        game_http_answer(req, res, status, &out);
    }
    game_svc_result_free(&out);
    game_bulk_free(&b);
}

void handle_bulk_start_clocks(const api_request_t *req, api_response_t *res)
{
    organize(req, res, GAME_SVC_BULK_START_CLOCKS);
}

void handle_bulk_cancel(const api_request_t *req, api_response_t *res) { organize(req, res, GAME_SVC_BULK_CANCEL); }

bool bulk_ids_read(const api_request_t *req, const cJSON *root, const char **list, int max, int *count,
                   void **held, api_response_t *res)
{
    const cJSON *bulk = cJSON_GetObjectItemCaseSensitive(root, "bulk");
    const cJSON *ids = cJSON_GetObjectItemCaseSensitive(root, "ids");
    *held = NULL;
    if (!bulk)
        return input_game_ids(root, max, list, count, res);
    if (ids) {
        api_problem(res, API_ECONFLICTING_FIELDS, "give 'ids' or 'bulk', not both", NULL, NULL);
        return false;
    }
    if (!cJSON_IsString(bulk)) {
        api_problem(res, API_EINVALID_FIELD, "'bulk' must be a bulk's id, as its creation answered it", NULL, NULL);
        return false;
    }
    game_svc_config_t c;
    game_http_service(req, &c);
    game_bulk_t *b = malloc(sizeof *b);
    if (!b) {
        api_problem(res, API_EINTERNAL, "out of memory", NULL, NULL);
        return false;
    }
    if (!load_bulk(req, &c, bulk->valuestring, b, res)) {
        free(b);
        return false;
    }
    for (unsigned i = 0; i < b->count; i++)
        list[i] = b->ids[i];
    *count = (int)b->count;
    *held = b;
    return true;
}

void bulk_ids_free(void *held)
{
    if (held)
        game_bulk_free(held);
    free(held);
}
