/* See http_harness.h. The request target goes through the server's own
 * target parser (routes_parse_target); the headers sit in a harness_request_t
 * that the request's header callback (harness_header below, in place of the
 * server's) reads. Each input's strings live in exact-size heap copies, so
 * ASan sees any read past them. */
#include "http_harness.h"

#include <cjson/cJSON.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "../../api/app.h"
#include "../../api/http/buf.h"
#include "../../api/live/events.h"
#include "../../api/http/request.h"
#include "../../api/metrics.h"
#include "../../api/routes.h"
#include "../../api/game/tokens.h"
#include "../../rules/base/utf8.h"
#include "../../rules/rules.h"
#include "fuzz.h"

enum { FIELD_MAX = 64 };

typedef struct {
    const char *name;
    const char *value;
    size_t name_length, value_length;
} field_t;

typedef struct {
    field_t headers[FIELD_MAX];
    int header_count;
} harness_request_t;

static bool print_responses;

void http_harness_init(config_t *cfg)
{
    rules_init();
    print_responses = getenv("FUZZ_HTTP_PRINT") != NULL;
    FUZZ_CHECK(tokens_init("fuzz-secret-that-is-long-enough"), "tokens_init");
    /* The server's defaults (and any CHESSD_* variables), so settings added
     * later get their real values; then limits that keep each input fast. */
    char err[256];
    FUZZ_CHECK(config_load(cfg, 0, NULL, err, sizeof err), "config_load: %s", err);
    FUZZ_CHECK(routes_init(), "routes_init");
    metrics_init(routes_count(), routes_name);
    cfg->max_perft_depth = 2; /* perft within milliseconds; 3 and above take the 400 path */
    snprintf(cfg->redis_url, sizeof cfg->redis_url, "redis://127.0.0.1:1/0");
    cfg->redis_connect_timeout_ms = 50;
    cfg->redis_timeout_ms = 50;
}

/* --- the request's header callback, backed by the parsed input --- */

static const char *harness_header(const void *source, const char *name)
{
    const harness_request_t *parsed = source;
    for (int i = 0; i < parsed->header_count; i++)
        if (!strcasecmp(parsed->headers[i].name, name))
            return parsed->headers[i].value;
    return NULL;
}

/* --- framing --- */

/* Cuts the next line out of [*cursor, end): terminated in place, "\r" dropped. */
static char *next_line(char **cursor, char *end)
{
    if (*cursor >= end)
        return NULL;
    char *line = *cursor;
    char *newline = memchr(line, '\n', (size_t)(end - line));
    char *stop = newline ? newline : end;
    *cursor = newline ? newline + 1 : end;
    *stop = '\0';
    if (stop > line && stop[-1] == '\r')
        stop[-1] = '\0';
    return line;
}

static void parse_header(char *line, harness_request_t *parsed)
{
    char *colon = strchr(line, ':');
    if (!colon || parsed->header_count >= FIELD_MAX)
        return;
    *colon = '\0';
    char *value = colon + 1;
    while (*value == ' ' || *value == '\t')
        value++;
    size_t n = strlen(value);
    while (n > 0 && (value[n - 1] == ' ' || value[n - 1] == '\t'))
        value[--n] = '\0';
    parsed->headers[parsed->header_count++] = (field_t){ line, value, strlen(line), n };
}

/* --- checks on the answer --- */

static bool is_json_type(const char *type)
{
    return !strncmp(type, "application/json", 16) || !strncmp(type, "application/problem+json", 24);
}

static void check_response(const api_request_t *req, const api_response_t *res)
{
    FUZZ_CHECK(res->status >= 100 && res->status <= 599, "%s %s: status %u", req->method, req->path, res->status);
    FUZZ_CHECK(res->status != 500, "%s %s: 500 with body %.*s", req->method, req->path, (int)res->body_length,
               res->body ? res->body : "");
    FUZZ_CHECK(res->body && res->content_type, "%s %s: no body or content type", req->method, req->path);
    if (res->status == 405)
        FUZZ_CHECK(res->allow != NULL, "%s %s: 405 without Allow", req->method, req->path);
    if (res->status == 401)
        FUZZ_CHECK(res->authenticate, "%s %s: 401 without WWW-Authenticate", req->method, req->path);
    if (res->status == 304) {
        FUZZ_CHECK(res->body_length == 0, "%s %s: 304 with a body", req->method, req->path);
        return;
    }
    if (!is_json_type(res->content_type))
        return;
    FUZZ_CHECK(utf8_valid(res->body, res->body_length), "%s %s: JSON body is not UTF-8: %.*s", req->method,
               req->path, (int)res->body_length, res->body);
    const char *end = NULL;
    cJSON *root = cJSON_ParseWithLengthOpts(res->body, res->body_length, &end, 0);
    FUZZ_CHECK(root != NULL, "%s %s: %u %s body is not JSON: %.*s", req->method, req->path, res->status,
               res->content_type, (int)res->body_length, res->body);
    FUZZ_CHECK(end == res->body + res->body_length, "%s %s: bytes after the JSON document: %.*s", req->method,
               req->path, (int)res->body_length, res->body);
    if (!strncmp(res->content_type, "application/problem+json", 24)) {
        const cJSON *status = cJSON_GetObjectItemCaseSensitive(root, "status");
        const cJSON *code = cJSON_GetObjectItemCaseSensitive(root, "code");
        FUZZ_CHECK(cJSON_IsNumber(status) && status->valuedouble == res->status && cJSON_IsString(code),
                   "%s %s: problem document disagrees with status %u: %.*s", req->method, req->path, res->status,
                   (int)res->body_length, res->body);
    }
    cJSON_Delete(root);
}

unsigned http_harness_run(const char *data, size_t size, const config_t *cfg, store_t *store)
{
    char *storage = malloc(size + 1);
    if (!storage)
        return 0;
    memcpy(storage, data, size);
    storage[size] = '\0';
    char *cursor = storage, *end = storage + size;
    harness_request_t parsed = { .header_count = 0 };

    char *line = next_line(&cursor, end);
    if (!line) {
        free(storage);
        return 0;
    }
    char *method = line, *target = strchr(line, ' ');
    if (target) {
        *target++ = '\0';
        target[strcspn(target, " ")] = '\0';
    } else {
        target = method + strlen(method); /* "" */
    }
    while ((line = next_line(&cursor, end)) && *line)
        parse_header(line, &parsed);

    /* The server hands over a NUL-terminated body; the copy is exact-size. */
    size_t body_length = (size_t)(end - cursor);
    char *body = body_length <= cfg->max_body ? malloc(body_length + 1) : NULL;
    if (!body) { /* over the limit the server answers 413 before routing */
        free(storage);
        return 0;
    }
    memcpy(body, cursor, body_length);
    body[body_length] = '\0';

    target_t parsed_target;
    app_t app = { .config = cfg, .store = store };
    api_request_t req = {
        .method = method,
        .path = parsed_target.path,
        .target = &parsed_target,
        .body = body,
        .body_length = body_length,
        .request_id = "fuzz-request",
        .app = &app,
        .header = harness_header,
        .header_source = &parsed,
    };
    api_response_t res = { 0 };
    if (routes_parse_target(target, strlen(target), &parsed_target, &res))
        routes_dispatch(&req, &res);
    if (res.stream) {
        /* An event stream: what it holds before any live event stands for its body. */
        buf_t first;
        buf_init(&first);
        char chunk[4096];
        for (ssize_t n; (n = events_stream_read(res.stream, chunk, sizeof chunk)) > 0;)
            buf_append(&first, chunk, (size_t)n);
        events_stream_release(res.stream);
        res.stream = NULL;
        res.body = buf_finish(&first, &res.body_length);
    }
    if (print_responses)
        fprintf(stderr, "%s %s -> %u %s\n%.*s\n", method, target, res.status, res.content_type ? res.content_type : "",
                (int)res.body_length, res.body ? res.body : "");
    check_response(&req, &res);
    metrics_request(req.route, res.status, 1);
    unsigned status = res.status;
    free(res.body);
    free(body);
    free(storage);
    return status;
}
