/* Request inputs: bodies (the media type check, a nesting-depth guard, and
 * parsing into a cJSON object whose keys are checked against what the
 * endpoint accepts), boolean query parameters, and a body's Chess960 start
 * number. */
#ifndef CHESSD_API_BODY_H
#define CHESSD_API_BODY_H

#include <cjson/cJSON.h>

#include "request.h"

/* Whether a Content-Type value names media type `name` (case-insensitive,
 * parameters after ';' ignored). */
bool body_media_type_is(const char *type, const char *name);

/* Parses req's body as a JSON object whose keys are all in `allowed`
 * (NULL-terminated). An empty body counts as {}. On failure res holds the
 * problem and NULL is returned. The caller owns the tree (cJSON_Delete). */
cJSON *body_parse_object(const api_request_t *req, const char *const *allowed, api_response_t *res);

/* Reads query parameter `name` as true/1 or false/0 into *out (fallback
 * when absent); false with res filled (400) for any other value. */
bool body_query_bool(const api_request_t *req, const char *name, bool fallback, bool *out, api_response_t *res);

/* Reads a body's optional "chess960_position" (a Chess960 start by its
 * number): *number is 0..959, or -1 when absent or null. False with res
 * filled when it is no start number (400 invalid_chess960_position) or comes
 * with a "fen" or "chess960": false (400 conflicting_fields). The types of
 * "fen" and "chess960" are the caller's to check. */
bool body_chess960_position(const cJSON *root, int *number, api_response_t *res);

#endif
