/* Service endpoints: liveness, readiness (503 while the server drains),
 * version, metrics, and the OpenAPI document (embedded into the binary at
 * build time from openapi.yaml). */
#include <stdlib.h>
#include <string.h>

#include "../store/store.h"
#include "handlers.h"
#include "jsonw.h"
#include "metrics.h"
#include "problem.h"
#include "token_secret.h"
#include "version.h"

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

void handle_readyz(const api_request_t *req, api_response_t *res)
{
    if (req->draining) {
        api_problem(res, API_EUNAVAILABLE, "shutting down", NULL, NULL);
        return;
    }
    if (store_ping(req->store) != STORE_OK) {
        api_problem(res, API_ESTORE_UNAVAILABLE, "the game store does not answer", NULL, NULL);
        return;
    }
    if (!token_secret_check(req->store)) {
        api_problem(res, API_ESTORE_UNAVAILABLE, "the player-token secret in the game store cannot be used", NULL,
                    NULL);
        return;
    }
    small_json(res, 200, "{\"status\":\"ready\"}");
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
    char *text = metrics_render(req->store, &length);
    api_response_set(res, 200, "text/plain; version=0.0.4; charset=utf-8", text, length);
}
