/* Webhooks on the routes that create games (webhook_handlers.c): the
 * request's "webhooks" read and judged, the caller's key's own
 * subscriptions joined, the records made once the game's (or bulk's) id is
 * known, and forgotten when no game was written. */
#ifndef CHESSD_API_HANDLERS_WEBHOOK_HTTP_H
#define CHESSD_API_HANDLERS_WEBHOOK_HTTP_H

#include <cjson/cJSON.h>
#include <stdbool.h>

#include "../game/service.h"
#include "../http/request.h"
#include "../webhooks/subscriptions.h"

/* One creation's subscriptions. */
typedef struct {
    store_t *store;
    webhook_sub_set_t set;
    char *answer; /* the answer's "webhooks" (malloc'd; NULL: none) */
} webhook_http_games_t;

/* Reads root's "webhooks" and judges them for a creation of scope
 * ("game" or "bulk"), with the key's own joined, into *hooks (zeroed here;
 * free with webhook_http_games_done). False with res filled: webhooks
 * asked for on a server without them (403 webhooks_disabled), a bad entry
 * (400), a refused destination (422) or too many (422). */
bool webhook_http_games_read(const api_request_t *req, api_response_t *res, const cJSON *root, const char *scope,
                             webhook_http_games_t *hooks);

/* Whether the subscriptions read may see games of this spectator delay
 * (plies; 0: none): a delayed game's events are live, so its subscriber's
 * key must see it live (games:read-live, or admin). False with res filled
 * (403 scope_missing) otherwise. */
bool webhook_http_games_see_live(const api_request_t *req, api_response_t *res, const webhook_http_games_t *hooks,
                                 int delay_plies);

/* Gives spec the subscriptions text, the call that records them once the
 * game's id is known, and the answer's "webhooks". */
void webhook_http_games_attach(webhook_http_games_t *hooks, game_svc_new_t *spec);

/* Records hooks' subscriptions for target (a bulk's id); false when the
 * store failed (those made are forgotten). */
bool webhook_http_games_record(webhook_http_games_t *hooks, const char *target);

/* Frees hooks; when written is false (no game was written) the
 * subscriptions made for it are deleted. */
void webhook_http_games_done(webhook_http_games_t *hooks, bool written);

#endif
