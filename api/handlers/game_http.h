/* What the game handlers share (game_http.c): the one place a game
 * service status becomes an answer, the service's settings for a request,
 * the ETag of a version, the bearer token and the Idempotency-Key. */
#ifndef CHESSD_API_HANDLERS_GAME_HTTP_H
#define CHESSD_API_HANDLERS_GAME_HTTP_H

#include <stdbool.h>
#include <stdint.h>

#include "../game/idempotency.h"
#include "../game/service.h"
#include "../http/request.h"
#include "../webhooks/subscriptions.h"

/* A version's entity tag, quoted, into out (room for DECIMAL_U64_MAX +
 * 3), and as res's ETag. */
void game_http_etag(char *out, uint64_t version);
void game_http_set_etag(api_response_t *res, uint64_t version);

/* The entity tag of r as read (ETAG_SIZE bytes): its version's, or for a
 * spectator's view "<version>-delayed", so that a client's copy of one is
 * never taken for a copy of the other. */
enum { GAME_HTTP_ETAG_SIZE = 32 };
void game_http_record_etag(char *out, const game_record_t *r);

/* Whether req holds a service key with games:read-live (or admin): it
 * sees games being played live, as their players do. */
bool game_http_live_key(const api_request_t *req);

/* The game service's settings for req's server. */
void game_http_service(const api_request_t *req, game_svc_config_t *c);

/* Answers a call of the game service: its answer (a write made or
 * replayed), or the problem its status stands for. */
void game_http_answer(const api_request_t *req, api_response_t *res, game_svc_status_t status,
                      game_svc_result_t *out);

/* Answers a webhook subscription call that failed (status not
 * WEBHOOK_SUB_OK) with the problem it stands for. */
void game_http_webhook_problem(const api_request_t *req, api_response_t *res, webhook_sub_status_t status,
                               const webhook_sub_result_t *result);

/* The bearer token of Authorization, or NULL when there is none. */
const char *game_http_bearer(const api_request_t *req);

/* A write request's Idempotency-Key (key NULL: none) and fingerprint. */
typedef struct {
    const char *key;
    char fingerprint[IDEM_FINGERPRINT_SIZE];
} idem_request_t;

/* Reads the Idempotency-Key header (creation: a creation's rules); false
 * with res filled when it is refused. */
bool game_http_idempotency(const api_request_t *req, bool creation, idem_request_t *idem, api_response_t *res);

#endif
