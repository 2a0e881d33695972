/* http.h's request accessors and response filler. None depends on the HTTP
 * library: headers come through the callback the server (or a test harness)
 * puts in the request. */
#include "http.h"

#include <stdlib.h>
#include <string.h>

const char *api_request_query(const api_request_t *req, const char *name)
{
    return req->target ? target_query(req->target, name) : NULL;
}

const char *api_request_header(const api_request_t *req, const char *name)
{
    return req->header ? req->header(req->header_source, name) : NULL;
}

bool api_request_wants_text(const api_request_t *req)
{
    const char *accept = api_request_header(req, "Accept");
    if (!accept)
        return false;
    const char *text = strstr(accept, "text/plain");
    const char *json = strstr(accept, "application/json");
    return text && (!json || text < json);
}

void api_response_set(api_response_t *res, unsigned status, const char *content_type, char *body, size_t length)
{
    free(res->body);
    res->problem_code = NULL;
    res->status = body ? status : 500;
    res->content_type = content_type;
    res->body = body;
    res->body_length = body ? length : 0;
}
