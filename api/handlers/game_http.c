/* What the game handlers share (game_http.h): the one place a game
 * service status becomes an answer, the service's settings for a request,
 * the ETag of a version, the bearer token and the Idempotency-Key. */
#include "game_http.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "../../rules/base/decimal.h"
#include "../../rules/base/text.h"
#include "../app.h"
#include "../config.h"
#include "../metrics.h"
#include "../problem.h"
#include "../service_keys.h"
#include "../../rules/base/clock.h"
#include "../http/target.h"

void game_http_etag(char *out, uint64_t version)
{
    size_t n = decimal_write(version, out + 1);
    out[0] = out[n + 1] = '"';
    out[n + 2] = '\0';
}

_Static_assert(sizeof ((api_response_t *)0)->etag >= DECIMAL_U64_MAX + 3, "an ETag holds any version");
void game_http_set_etag(api_response_t *res, uint64_t version) { game_http_etag(res->etag, version); }

void game_http_record_etag(char *out, const game_record_t *r)
{
    game_http_etag(out, r->version);
    if (r->view)
        strcpy(out + strlen(out) - 1, "-delayed\"");
}

_Static_assert(sizeof ((api_response_t *)0)->etag >= GAME_HTTP_ETAG_SIZE, "an ETag holds a view's");
_Static_assert(GAME_HTTP_ETAG_SIZE >= DECIMAL_U64_MAX + 3 + 8, "a view's ETag holds any version");

bool game_http_live_key(const api_request_t *req)
{
    service_keys_t *keys = app_of(req)->service_keys;
    char name[SERVICE_KEY_NAME_MAX + 1];
    const char *authorization = api_request_header(req, "Authorization");
    return keys && service_keys_is_key(authorization)
           && service_keys_check(keys, authorization, SERVICE_SCOPE_GAMES_READ_LIVE, (uint64_t)clock_now_us(), name)
                  == SERVICE_KEYS_OK;
}

void game_http_service(const api_request_t *req, game_svc_config_t *c)
{
    config_game_service(app_of(req)->config, app_of(req)->store, c);
}

/* --- the one place a service status becomes an answer --- */

static void write_refusal(jsonw_t *w, const void *ctx)
{
    const webhook_sub_result_t *result = ctx;
    jsonw_kv_string(w, "refusal", webhook_refusal_code(result->refusal));
    jsonw_kv_int(w, "index", result->index);
}

void game_http_webhook_problem(const api_request_t *req, api_response_t *res, webhook_sub_status_t status,
                               const webhook_sub_result_t *result)
{
    switch (status) {
    case WEBHOOK_SUB_EREFUSED:
        api_problem(res, API_EWEBHOOK_DESTINATION_REFUSED, result->detail, write_refusal, result);
        break;
    case WEBHOOK_SUB_ETOO_MANY:
        api_problem_limit(res, API_ETOO_MANY_WEBHOOKS, result->detail, result->limit, result->max);
        break;
    case WEBHOOK_SUB_ENOT_FOUND:
        api_problem(res, API_EWEBHOOK_NOT_FOUND, result->detail, NULL, NULL);
        break;
    case WEBHOOK_SUB_ESTORE:
        api_problem_store(res, result->store == STORE_OK ? STORE_EUNAVAILABLE : result->store, app_of(req)->store);
        break;
    default:
        api_problem(res, API_EINTERNAL, result->detail[0] ? result->detail : NULL, NULL, NULL);
        break;
    }
}

static void write_claim_in(jsonw_t *w, const void *ctx)
{
    jsonw_kv_int(w, "claim_in_ms", *(const long long *)ctx);
}

/* A change rules/ refused; one about the takeback policy names the game's
 * policy, a claim made too early the time left to wait. */
static void answer_refusal(api_response_t *res, const game_svc_result_t *out)
{
    static const char *const allows[GAME_TAKEBACK_COUNT] = {
        "moves are taken back by agreement: POST /takeback with action offer, then the other player accepts",
        "either player may take back their last move with POST /undo, or by agreement with POST /takeback",
        "no move may be taken back",
    };
    if (out->refusal == GAME_EILLEGAL_MOVE) {
        api_problem_move(res, api_status_for_reason(out->move_reason), out->move_message, out->move_index,
                         out->move_text, out->move_reason, out->move_fen);
    } else if (out->refusal == GAME_ETAKEBACK_NOT_ALLOWED && (unsigned)out->takeback < GAME_TAKEBACK_COUNT) {
        char detail[200];
        snprintf(detail, sizeof detail, "this game's takeback policy is '%s': %s", game_takeback_name(out->takeback),
                 allows[out->takeback]);
        api_problem(res, API_ETAKEBACK_NOT_ALLOWED, detail, NULL, NULL);
    } else if (out->refusal == GAME_EOPPONENT_NOT_GONE && out->claim_in_ms > 0) {
        char detail[160];
        long long ms = (long long)out->claim_in_ms;
        snprintf(detail, sizeof detail, "your opponent is gone on their turn; a claim is possible in %lld ms, unless "
                 "they come back", ms);
        api_problem(res, API_EOPPONENT_NOT_GONE, detail, write_claim_in, &ms);
    } else {
        api_problem_game(res, out->refusal);
    }
}

/* Answers a call of the game service: its answer (a write made or
 * replayed), or the problem its status stands for. */
void game_http_answer(const api_request_t *req, api_response_t *res, game_svc_status_t status, game_svc_result_t *out)
{
    store_t *store = app_of(req)->store;
    switch (status) {
    case GAME_SVC_OK:
    case GAME_SVC_REPLAY:
        api_response_set(res, out->answer_status, "application/json", out->body, out->body_length);
        out->body = NULL; /* the response's now */
        game_http_set_etag(res, out->version);
        text_copy(res->location, sizeof res->location, out->location);
        break;
    case GAME_SVC_ENOT_FOUND: api_problem_store(res, STORE_ENOT_FOUND, store); break;
    case GAME_SVC_EUNAVAILABLE: api_problem_store(res, STORE_EUNAVAILABLE, store); break;
    case GAME_SVC_EFULL: api_problem_store(res, STORE_EFULL, store); break;
    case GAME_SVC_EUNKNOWN: api_problem_store(res, STORE_EUNKNOWN, store); break;
    case GAME_SVC_ESTORE: api_problem_store(res, STORE_ECORRUPT, store); break;
    case GAME_SVC_EBAD_RECORD: api_problem_game(res, GAME_EBAD_RECORD); break;
    case GAME_SVC_EDAMAGED: api_problem_store(res, STORE_EDAMAGED, store); break;
    case GAME_SVC_EBUSY: api_problem(res, API_EUNAVAILABLE, out->detail, NULL, NULL); break;
    case GAME_SVC_EUNAUTHORIZED:
        api_problem(res, API_EUNAUTHORIZED, "send Authorization: Bearer <player token>", NULL, NULL);
        break;
    case GAME_SVC_EFORBIDDEN:
        api_problem(res, API_EFORBIDDEN, "the token is not a player's of this game", NULL, NULL);
        break;
    case GAME_SVC_EPRECONDITION_REQUIRED:
        api_problem(res, API_EPRECONDITION_REQUIRED,
                    "send expected_version (or If-Match) with every change, or expected_ply with a move", NULL, NULL);
        break;
    case GAME_SVC_ECONFLICT:
        api_problem_conflict(res, out->detail, out->current_version, out->ply_known ? (int64_t)out->current_ply : -1);
        break;
    case GAME_SVC_ECONFLICTING: api_problem(res, API_ECONFLICTING_FIELDS, out->detail, NULL, NULL); break;
    case GAME_SVC_EPRECONDITION: api_problem_precondition(res, out->detail, out->current_version); break;
    case GAME_SVC_ETIMED_OUT: api_problem(res, API_EGAME_OVER, out->detail, NULL, NULL); break;
    case GAME_SVC_EREFUSED: answer_refusal(res, out); break;
    case GAME_SVC_EINVALID: api_problem(res, API_EINVALID_FIELD, out->detail, NULL, NULL); break;
    case GAME_SVC_EKEY_REUSED: api_problem(res, API_EIDEMPOTENCY_KEY_REUSED, out->detail, NULL, NULL); break;
    case GAME_SVC_EPGN: api_problem_pgn(res, &out->pgn); break;
    case GAME_SVC_ENOTES_TOO_LARGE: api_problem_pgn_notes(res, GAME_NOTES_MAX); break;
    case GAME_SVC_ETOO_MANY_TURNS:
        metrics_add(METRIC_ENGINE_TURNS_REFUSED, METRICS_TURN_REFUSED_PER_CLIENT, 1);
        api_problem_quota(res, API_ETOO_MANY_ENGINE_TURNS, out->detail, "engine-turns-per-client", out->limit, 2);
        break;
    case GAME_SVC_EENGINE_BUSY:
        metrics_add(METRIC_ENGINE_TURNS_REFUSED, METRICS_TURN_REFUSED_BACKLOG, 1);
        api_problem_limit(res, API_EENGINE_BUSY, out->detail, "engine-turns-max", out->limit);
        res->retry_after = 5;
        break;
    default: api_problem(res, API_EINTERNAL, out->detail[0] ? out->detail : NULL, NULL, NULL); break;
    }
}

bool game_http_idempotency(const api_request_t *req, bool creation, idem_request_t *idem, api_response_t *res)
{
    memset(idem, 0, sizeof *idem);
    idem->key = api_request_header(req, "Idempotency-Key");
    if (!idem->key)
        return true;
    char detail[256];
    idem_key_check_t check = idem_check_key(idem->key, creation, detail, sizeof detail);
    if (check != IDEM_KEY_OK) {
        api_problem(res, check == IDEM_KEY_WEAK ? API_EWEAK_IDEMPOTENCY_KEY : API_EINVALID_PARAMETER, detail, NULL,
                    NULL);
        return false;
    }
    /* The query is part of the request: each parameter as its two lengths and bytes. */
    char query[TARGET_QUERY_TEXT_MAX + TARGET_PARAM_MAX * 48];
    size_t query_length = 0;
    for (int i = 0; i < req->target->param_count; i++) {
        const target_param_t *p = &req->target->params[i];
        int n = snprintf(query + query_length, sizeof query - query_length, "%zu:%zu:", p->name_length,
                         p->value_length);
        if (n < 0 || (size_t)n + p->name_length + p->value_length > sizeof query - query_length)
            break;
        query_length += (size_t)n;
        memcpy(query + query_length, p->name, p->name_length);
        memcpy(query + query_length + p->name_length, p->value, p->value_length);
        query_length += p->name_length + p->value_length;
    }
    if (!idem_fingerprint(req->method, req->path, query, query_length, api_request_header(req, "If-Match"),
                          req->body, req->body_length, idem->fingerprint)) {
        api_problem(res, API_EINTERNAL, "the request's fingerprint cannot be computed", NULL, NULL);
        return false;
    }
    return true;
}

const char *game_http_bearer(const api_request_t *req)
{
    const char *header = api_request_header(req, "Authorization");
    return header && !strncasecmp(header, "Bearer ", 7) && header[7] ? header + 7 : NULL;
}
