/* API outcomes and their RFC 9457 problem+json form. api_status_t is the one
 * list of what can go wrong at the HTTP layer; problem.c is the one place
 * that maps it to HTTP status codes, titles and stable `code` strings. */
#ifndef CHESSD_API_PROBLEM_H
#define CHESSD_API_PROBLEM_H

#include "http.h"
#include "jsonw.h"

typedef enum {
    API_OK = 0,
    API_EINVALID_JSON,
    API_EINVALID_FIELD,
    API_EUNKNOWN_FIELD,
    API_EINVALID_PARAMETER,
    API_EINVALID_FEN,
    API_EINVALID_MOVE_TEXT,
    API_EILLEGAL_MOVE,
    API_EAMBIGUOUS_MOVE,
    API_ETOO_MANY_MOVES,
    API_EPAYLOAD_TOO_LARGE,
    API_EUNSUPPORTED_MEDIA_TYPE,
    API_ENOT_FOUND,
    API_EMETHOD_NOT_ALLOWED,
    API_EPERFT_DEPTH_TOO_LARGE,
    API_EUNAVAILABLE,
    API_EINTERNAL,
    API_STATUS_COUNT
} api_status_t;

/* Stable machine-readable code, e.g. "illegal_move". */
const char *api_status_code(api_status_t status);
/* The HTTP status code for an outcome. */
unsigned api_status_http(api_status_t status);

/* Extra members for a problem document, written by the caller into w (inside
 * the open object). */
typedef void (*api_problem_extra_fn)(jsonw_t *w, const void *ctx);

/* Fills res with a problem+json document for status, with `detail` and, when
 * extra is not NULL, the members it writes. */
void api_problem(api_response_t *res, api_status_t status, const char *detail, api_problem_extra_fn extra,
                 const void *ctx);

#endif
