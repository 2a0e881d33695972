/* http.h's request accessors and response filler. None depends on the HTTP
 * library: headers come through the callback the server (or a test harness)
 * puts in the request. */
#include "request.h"

#include <stdlib.h>
#include <string.h>
#include <strings.h>

const char *api_request_query(const api_request_t *req, const char *name)
{
    return req->target ? target_query(req->target, name) : NULL;
}

const char *api_request_header(const api_request_t *req, const char *name)
{
    return req->header ? req->header(req->header_source, name) : NULL;
}

void api_request_client(const api_request_t *req, char out[API_CLIENT_SIZE])
{
    out[0] = '\0';
    if (req->client)
        req->client(req->header_source, out, API_CLIENT_SIZE);
}

/* RFC 9110 tchar. */
static bool is_token_char(char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9')
           || (c && strchr("!#$%&'*+-.^_`|~", c));
}

static const char *skip_space(const char *p)
{
    while (*p == ' ' || *p == '\t')
        p++;
    return p;
}

/* Past a token or a quoted string (value and length of its content in
 * *word, *length); NULL when neither is there or a quote is not closed. */
static const char *read_word(const char *p, const char **word, size_t *length)
{
    if (*p == '"') {
        const char *start = ++p;
        while (*p && *p != '"')
            p += p[0] == '\\' && p[1] ? 2 : 1;
        if (*p != '"')
            return NULL;
        *word = start;
        *length = (size_t)(p - start);
        return p + 1;
    }
    *word = p;
    while (is_token_char(*p))
        p++;
    *length = (size_t)(p - *word);
    return *length ? p : NULL;
}

/* Past the rest of a preference (its parameters), at ',' or the end; NULL
 * when it is malformed. */
static const char *skip_preference(const char *p)
{
    for (;;) {
        p = skip_space(p);
        if (!*p || *p == ',')
            return p;
        if (*p != ';')
            return NULL;
        p = skip_space(p + 1);
        const char *word;
        size_t length;
        if (is_token_char(*p) && !(p = read_word(p, &word, &length)))
            return NULL;
        p = skip_space(p);
        if (*p == '=' && !(p = read_word(skip_space(p + 1), &word, &length)))
            return NULL;
    }
}

unsigned api_prefer_wait(const char *prefer, unsigned max)
{
    for (const char *p = prefer; p && *p;) {
        p = skip_space(p);
        if (*p == ',') {
            p++;
            continue;
        }
        const char *name, *value = NULL;
        size_t name_length, value_length = 0;
        if (!is_token_char(*p) || !(p = read_word(p, &name, &name_length)))
            return 0; /* the list cannot be read past here */
        p = skip_space(p);
        if (*p == '=' && !(p = read_word(skip_space(p + 1), &value, &value_length)))
            return 0;
        bool wait = name_length == 4 && !strncasecmp(name, "wait", 4);
        if (!(p = skip_preference(p)))
            return 0;
        if (!wait)
            continue;
        /* The first wait counts (RFC 7240 section 2): a non-negative integer. */
        unsigned long long n = 0;
        if (!value || !value_length)
            return 0;
        for (size_t i = 0; i < value_length; i++) {
            if (value[i] < '0' || value[i] > '9')
                return 0;
            if (n <= max)
                n = n * 10 + (unsigned)(value[i] - '0');
        }
        return n < max ? (unsigned)n : max;
    }
    return 0;
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
