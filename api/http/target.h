/* The request target (RFC 9112 section 3.2) as chessd routes it, read from
 * the bytes the client sent: origin-form or absolute-form. The path is split
 * into segments before percent-decoding, so an encoded '/' (%2F) or NUL (%00)
 * cannot change which route is taken: both are refused. The query becomes
 * decoded name/value pairs ('+' is a space), in order, case-sensitive, duplicates kept (the
 * router refuses them). No allocation: target_t is caller-owned. */
#ifndef CHESSD_API_HTTP_TARGET_H
#define CHESSD_API_HTTP_TARGET_H

#include <stdbool.h>
#include <stddef.h>

enum { TARGET_PATH_MAX = 512, TARGET_PARAM_MAX = 16, TARGET_QUERY_TEXT_MAX = 4096 };

typedef struct {
    const char *name;    /* NUL-terminated, inside target_t.query_text */
    const char *value;   /* NUL-terminated ("" for a name without '=') */
    size_t value_length; /* decoded bytes, a NUL from %00 included */
    size_t name_length;
} target_param_t;

typedef struct {
    char path[TARGET_PATH_MAX + 1]; /* decoded */
    target_param_t params[TARGET_PARAM_MAX];
    int param_count;
    char query_text[TARGET_QUERY_TEXT_MAX];
} target_t;

typedef enum {
    TARGET_OK = 0,
    TARGET_ENOT_PATH,      /* not origin-form or absolute-form */
    TARGET_EPATH_ESCAPE,   /* a bad %XX, %2F, %00 or a control character in the path */
    TARGET_EPATH_TOO_LONG, /* over TARGET_PATH_MAX decoded bytes */
    TARGET_EQUERY_ESCAPE,  /* a bad %XX in the query */
    TARGET_EQUERY_TOO_BIG, /* over TARGET_PARAM_MAX parameters or TARGET_QUERY_TEXT_MAX bytes */
    TARGET_STATUS_COUNT
} target_status_t;

/* Parses raw (length bytes, as sent) into out. On failure returns the reason
 * and, in detail, a sentence for the client. */
target_status_t target_parse(const char *raw, size_t length, target_t *out, char *detail, size_t detail_size);

/* The value of query parameter `name` (exact, case-sensitive), or NULL. */
const char *target_query(const target_t *target, const char *name);

#endif
