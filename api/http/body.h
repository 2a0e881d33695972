/* Request bodies and query values, read strictly: the media type check, a
 * nesting-depth guard, UTF-8 and NUL checks, and parsing into a cJSON object
 * whose keys are all ones the endpoint accepts, each once. Outcomes are
 * statuses with a detail text; the caller turns them into answers. */
#ifndef CHESSD_API_HTTP_BODY_H
#define CHESSD_API_HTTP_BODY_H

#include <cjson/cJSON.h>
#include <stdbool.h>
#include <stddef.h>

typedef enum {
    BODY_OK = 0,
    BODY_EMEDIA_TYPE,    /* a Content-Type other than application/json */
    BODY_EINVALID_JSON,  /* too deep, not UTF-8, a NUL, not JSON, not an object, a key twice */
    BODY_EUNKNOWN_FIELD, /* a key the endpoint does not accept */
    BODY_EINVALID_VALUE, /* a query value that is not what it should be */
    BODY_ENOMEM,
    BODY_STATUS_COUNT
} body_status_t;

/* Whether a Content-Type value names media type `name` (case-insensitive,
 * parameters after ';' ignored). */
bool body_media_type_is(const char *type, const char *name);

/* Parses body[0..length) (NUL-terminated at length) as a JSON object whose
 * keys are all in `allowed` (NULL-terminated) and nested at most max_depth
 * deep; content_type is the request's (NULL: not given). An empty body
 * counts as {}. On BODY_OK *out is the tree, the caller's to cJSON_Delete;
 * otherwise *out is NULL and detail says what is wrong. */
body_status_t body_parse_object(const char *body, size_t length, const char *content_type, int max_depth,
                                const char *const *allowed, cJSON **out, char *detail, size_t detail_size);

/* Reads value (NULL: absent) as true/1 or false/0 into *out (fallback when
 * absent); BODY_EINVALID_VALUE for anything else, with detail naming name. */
body_status_t body_bool(const char *name, const char *value, bool fallback, bool *out, char *detail,
                        size_t detail_size);

#endif
