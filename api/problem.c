/* problem+json documents (RFC 9457). The table below is the single mapping
 * from API outcome to HTTP status; handlers never pick status codes for
 * errors themselves. */
#include "problem.h"

#include <stdio.h>

static const struct {
    const char *code;
    unsigned http;
    const char *title;
} table[API_STATUS_COUNT] = {
    [API_OK] = { "ok", 200, "OK" },
    [API_EINVALID_JSON] = { "invalid_json", 400, "The request body is not valid JSON" },
    [API_EINVALID_FIELD] = { "invalid_field", 400, "A field has the wrong type or value" },
    [API_EUNKNOWN_FIELD] = { "unknown_field", 400, "The request has a field this endpoint does not know" },
    [API_EINVALID_PARAMETER] = { "invalid_parameter", 400, "A query parameter is missing or invalid" },
    [API_EINVALID_FEN] = { "invalid_fen", 400, "The FEN does not describe a valid position" },
    [API_EINVALID_MOVE_TEXT] = { "invalid_move_text", 400, "The move is neither UCI nor SAN" },
    [API_EILLEGAL_MOVE] = { "illegal_move", 422, "The move is not legal in this position" },
    [API_EAMBIGUOUS_MOVE] = { "ambiguous_move", 422, "The move could mean more than one legal move" },
    [API_ETOO_MANY_MOVES] = { "too_many_moves", 413, "Too many moves in one request" },
    [API_EPAYLOAD_TOO_LARGE] = { "payload_too_large", 413, "The request body is too large" },
    [API_EUNSUPPORTED_MEDIA_TYPE] = { "unsupported_media_type", 415, "The request body must be application/json" },
    [API_ENOT_FOUND] = { "not_found", 404, "No such resource" },
    [API_EMETHOD_NOT_ALLOWED] = { "method_not_allowed", 405, "Method not allowed on this resource" },
    [API_EPERFT_DEPTH_TOO_LARGE] = { "perft_depth_too_large", 400, "The perft depth is above the server's limit" },
    [API_EUNAVAILABLE] = { "unavailable", 503, "The service cannot handle the request now" },
    [API_EINTERNAL] = { "internal_error", 500, "Internal error" },
};

const char *api_status_code(api_status_t status)
{
    return (unsigned)status < API_STATUS_COUNT ? table[status].code : table[API_EINTERNAL].code;
}

unsigned api_status_http(api_status_t status)
{
    return (unsigned)status < API_STATUS_COUNT ? table[status].http : 500;
}

void api_problem(api_response_t *res, api_status_t status, const char *detail, api_problem_extra_fn extra,
                 const void *ctx)
{
    if ((unsigned)status >= API_STATUS_COUNT)
        status = API_EINTERNAL;
    char type[96];
    /* A URN: stable and unique, and promises no web page behind it. */
    snprintf(type, sizeof type, "urn:chessd:problem:%s", table[status].code);
    jsonw_t w;
    jsonw_init(&w);
    jsonw_object_begin(&w);
    jsonw_kv_string(&w, "type", type);
    jsonw_kv_string(&w, "title", table[status].title);
    jsonw_kv_int(&w, "status", table[status].http);
    jsonw_kv_string(&w, "detail", detail ? detail : table[status].title);
    jsonw_kv_string(&w, "code", table[status].code);
    if (extra)
        extra(&w, ctx);
    jsonw_object_end(&w);
    size_t length = 0;
    char *body = jsonw_finish(&w, &length);
    api_response_set(res, table[status].http, "application/problem+json", body, length);
    res->allow = NULL;
}
