/* The webhook routes (/v1/webhooks...) and the webhooks of the routes that
 * create games (webhook_http.h). Every one needs a service key, which owns
 * what it makes; only it, or an admin key, reads or deletes that. A failed
 * call becomes its problem in game_http.c. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../rules/base/clock.h"
#include "../app.h"
#include "../config.h"
#include "../input.h"
#include "../problem.h"
#include "../service_keys.h"
#include "game_http.h"
#include "handlers.h"
#include "webhook_http.h"
#include "webhook_input.h"

enum { DELIVERIES_DEFAULT = 20, DELIVERIES_MAX = 100 };

static const char webhooks_location[] = "/v1/webhooks/";

/* Why a request for webhooks is refused on this server, when it is. */
static const char *disabled_reason(const app_t *app)
{
    if (!webhook_allow_enabled(&app->config->webhook_policy))
        return "this server sends no webhooks: its operator has set no destinations (--webhook-allow)";
    if (!app->service_keys)
        return "webhooks need a service key, and this server has none (--service-keys-file): a webhook sends "
               "requests from the server to the address its subscriber names";
    return NULL;
}

/* The caller's key: its name into owner, *admin when it has the admin
 * scope. False with res filled. */
static bool caller(const api_request_t *req, api_response_t *res, char owner[SERVICE_KEY_NAME_MAX + 1], bool *admin)
{
    const app_t *app = app_of(req);
    const char *reason = disabled_reason(app);
    if (reason) {
        api_problem(res, API_EWEBHOOKS_DISABLED, reason, NULL, NULL);
        return false;
    }
    switch (service_keys_check(app->service_keys, api_request_header(req, "Authorization"), SERVICE_SCOPE_ADMIN,
                               (uint64_t)clock_now_us(), owner)) {
    case SERVICE_KEYS_OK:
        *admin = true;
        return true;
    case SERVICE_KEYS_ESCOPE:
        *admin = false;
        return true;
    case SERVICE_KEYS_ENONE:
        api_problem_scope(res, API_ESERVICE_KEY_REQUIRED,
                          "webhook subscriptions need a service key: send Authorization: Bearer " SERVICE_KEY_PREFIX
                          "... (any key of this server; it owns what it subscribes)",
                          NULL);
        return false;
    default:
        api_problem_key_unknown(res);
        return false;
    }
}

/* res answers with w's text (a JSON document). */
static void answer_json(api_response_t *res, unsigned status, jsonw_t *w)
{
    size_t length = 0;
    char *body = jsonw_finish(w, &length);
    if (!body) {
        api_problem(res, API_EINTERNAL, "out of memory", NULL, NULL);
        return;
    }
    api_response_set(res, status, "application/json", body, length);
}

void handle_webhook_create(const api_request_t *req, api_response_t *res)
{
    static const char *const allowed[] = { "url", "events", NULL };
    char owner[SERVICE_KEY_NAME_MAX + 1];
    bool admin;
    if (!caller(req, res, owner, &admin))
        return;
    cJSON *root = input_object(req, allowed, res);
    if (!root)
        return;
    webhook_sub_ask_t ask;
    if (webhook_input_ask(root, "", &ask, res)) {
        webhook_sub_result_t result = { 0 };
        store_webhook_sub_t *sub = malloc(sizeof *sub);
        webhook_sub_status_t status = sub ? webhook_sub_create(app_of(req)->store, &app_of(req)->config->webhook_policy,
                                                               owner, &ask, &result, sub)
                                          : WEBHOOK_SUB_EINTERNAL;
        if (status == WEBHOOK_SUB_OK) {
            jsonw_t w;
            jsonw_init(&w);
            webhook_sub_json(&w, sub, true);
            answer_json(res, 201, &w);
            snprintf(res->location, sizeof res->location, "%s%s", webhooks_location, sub->id);
        } else {
            game_http_webhook_problem(req, res, status, &result);
        }
        free(sub);
    }
    cJSON_Delete(root);
}

void handle_webhooks_list(const api_request_t *req, api_response_t *res)
{
    char owner[SERVICE_KEY_NAME_MAX + 1];
    bool admin;
    if (!caller(req, res, owner, &admin))
        return;
    store_webhook_sub_t *subs = calloc(WEBHOOK_SUB_PER_KEY, sizeof *subs);
    unsigned count = 0;
    webhook_sub_result_t result = { 0 };
    webhook_sub_status_t status = subs ? webhook_sub_list(app_of(req)->store, owner, subs, &count, &result)
                                       : WEBHOOK_SUB_EINTERNAL;
    if (status == WEBHOOK_SUB_OK) {
        jsonw_t w;
        jsonw_init(&w);
        jsonw_object_begin(&w);
        jsonw_key(&w, "webhooks");
        jsonw_array_begin(&w);
        for (unsigned i = 0; i < count; i++)
            webhook_sub_json(&w, &subs[i], false);
        jsonw_array_end(&w);
        jsonw_object_end(&w);
        answer_json(res, 200, &w);
    } else {
        game_http_webhook_problem(req, res, status, &result);
    }
    free(subs);
}

/* The route's subscription as the caller may see it into *sub; false with
 * res filled. */
static bool read_sub(const api_request_t *req, api_response_t *res, store_webhook_sub_t *sub)
{
    char owner[SERVICE_KEY_NAME_MAX + 1];
    bool admin;
    if (!caller(req, res, owner, &admin))
        return false;
    webhook_sub_result_t result = { 0 };
    webhook_sub_status_t status = webhook_sub_read(app_of(req)->store, req->path_param, owner, admin, sub, &result);
    if (status != WEBHOOK_SUB_OK)
        game_http_webhook_problem(req, res, status, &result);
    return status == WEBHOOK_SUB_OK;
}

void handle_webhook_get(const api_request_t *req, api_response_t *res)
{
    store_webhook_sub_t *sub = malloc(sizeof *sub);
    if (!sub) {
        api_problem(res, API_EINTERNAL, "out of memory", NULL, NULL);
        return;
    }
    if (read_sub(req, res, sub)) {
        jsonw_t w;
        jsonw_init(&w);
        webhook_sub_json(&w, sub, false);
        answer_json(res, 200, &w);
    }
    free(sub);
}

void handle_webhook_delete(const api_request_t *req, api_response_t *res)
{
    char owner[SERVICE_KEY_NAME_MAX + 1];
    bool admin;
    if (!caller(req, res, owner, &admin))
        return;
    webhook_sub_result_t result = { 0 };
    webhook_sub_status_t status = webhook_sub_delete(app_of(req)->store, req->path_param, owner, admin, &result);
    if (status == WEBHOOK_SUB_OK)
        api_response_set(res, 204, "application/json", calloc(1, 1), 0);
    else
        game_http_webhook_problem(req, res, status, &result);
}

/* The deliverer's log lines (JSON objects) as one array; a line that is
 * not one is left out. */
static void write_deliveries(jsonw_t *w, char **lines, unsigned count)
{
    jsonw_object_begin(w);
    jsonw_key(w, "deliveries");
    jsonw_array_begin(w);
    for (unsigned i = 0; i < count; i++) {
        const char *end = NULL;
        /* the NUL counted: cJSON checks it is there right after the value */
        cJSON *line = cJSON_ParseWithLengthOpts(lines[i], strlen(lines[i]) + 1, &end, 1);
        if (cJSON_IsObject(line))
            jsonw_raw(w, lines[i]);
        cJSON_Delete(line);
    }
    jsonw_array_end(w);
    jsonw_object_end(w);
}

void handle_webhook_deliveries(const api_request_t *req, api_response_t *res)
{
    unsigned limit;
    if (!input_query_uint(req, "limit", 1, DELIVERIES_MAX, DELIVERIES_DEFAULT, &limit, res))
        return;
    store_webhook_sub_t *sub = malloc(sizeof *sub);
    if (!sub) {
        api_problem(res, API_EINTERNAL, "out of memory", NULL, NULL);
        return;
    }
    if (read_sub(req, res, sub)) {
        char **lines = NULL;
        unsigned count = 0;
        store_status_t status = store_webhook_log_read(app_of(req)->store, sub->id, limit, &lines, &count);
        if (status == STORE_OK) {
            jsonw_t w;
            jsonw_init(&w);
            write_deliveries(&w, lines, count);
            answer_json(res, 200, &w);
        } else {
            webhook_sub_result_t result = { .store = status };
            game_http_webhook_problem(req, res, WEBHOOK_SUB_ESTORE, &result);
        }
        store_webhook_log_free(lines, count);
    }
    free(sub);
}

/* --- the webhooks of a creation --- */

bool webhook_http_games_read(const api_request_t *req, api_response_t *res, const cJSON *root, const char *scope,
                             webhook_http_games_t *hooks)
{
    memset(hooks, 0, sizeof *hooks);
    const app_t *app = app_of(req);
    hooks->store = app->store;
    webhook_sub_ask_t asks[WEBHOOK_SUB_PER_REQUEST];
    unsigned count;
    if (!webhook_input_list(root, asks, &count, res))
        return false;
    const char *reason = disabled_reason(app);
    if (reason && count) {
        api_problem(res, API_EWEBHOOKS_DISABLED, reason, NULL, NULL);
        return false;
    }
    if (reason)
        return true; /* no webhooks here, none asked for */
    char owner[SERVICE_KEY_NAME_MAX + 1];
    service_keys_status_t key = service_keys_check(app->service_keys, api_request_header(req, "Authorization"),
                                                   SERVICE_SCOPE_ADMIN, (uint64_t)clock_now_us(), owner);
    bool keyed = key == SERVICE_KEYS_OK || key == SERVICE_KEYS_ESCOPE;
    if (!keyed && count) { /* the route let a creation through without a key: no webhooks for it */
        api_problem_scope(res, API_ESERVICE_KEY_REQUIRED,
                          "webhooks need a service key: send Authorization: Bearer " SERVICE_KEY_PREFIX "...", NULL);
        return false;
    }
    webhook_sub_result_t result = { 0 };
    webhook_sub_status_t status = webhook_sub_plan(app->store, &app->config->webhook_policy, keyed ? owner : NULL,
                                                   scope, asks, count, &hooks->set, &result);
    if (status != WEBHOOK_SUB_OK) {
        game_http_webhook_problem(req, res, status, &result);
        return false;
    }
    if (hooks->set.count && !(hooks->answer = webhook_sub_set_json(&hooks->set))) {
        api_problem(res, API_EINTERNAL, "out of memory", NULL, NULL);
        return false;
    }
    return true;
}

static bool record_for_game(void *ctx, const char *id)
{
    webhook_http_games_t *hooks = ctx;
    return webhook_http_games_record(hooks, id);
}

void webhook_http_games_attach(webhook_http_games_t *hooks, game_svc_new_t *spec)
{
    if (!hooks->set.count)
        return;
    _Static_assert(sizeof spec->webhooks >= sizeof hooks->set.text, "a game holds the subscriptions text");
    memcpy(spec->webhooks, hooks->set.text, sizeof hooks->set.text);
    spec->answer_webhooks = hooks->answer;
    if (hooks->set.made) {
        spec->on_id = record_for_game;
        spec->on_id_ctx = hooks;
    }
}

bool webhook_http_games_record(webhook_http_games_t *hooks, const char *target)
{
    return !hooks->set.made || webhook_sub_record(hooks->store, &hooks->set, target);
}

void webhook_http_games_done(webhook_http_games_t *hooks, bool written)
{
    if (!written && hooks->set.made)
        webhook_sub_forget(hooks->store, &hooks->set);
    free(hooks->answer);
    hooks->answer = NULL;
}

bool webhook_http_games_see_live(const api_request_t *req, api_response_t *res, const webhook_http_games_t *hooks,
                                 int delay_plies)
{
    if (!hooks->set.count || delay_plies <= 0 || game_http_live_key(req))
        return true;
    const char *scope = service_scope_name(SERVICE_SCOPE_GAMES_READ_LIVE);
    char detail[300];
    snprintf(detail, sizeof detail, "webhooks carry a game's events live, and this game shows spectators its moves %d "
             "plies late: the service key that subscribes needs the scope %s; nothing was made", delay_plies, scope);
    api_problem_scope(res, API_ESCOPE_MISSING, detail, scope);
    return false;
}
