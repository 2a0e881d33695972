/* A streaming JSON writer into one buf: answers are written straight out,
 * commas placed automatically, several times faster than cJSON trees (see
 * "Why not cJSON trees" below). Out of memory is sticky: every later call is
 * a no-op and jsonw_finish() returns NULL. The finished text is malloc'd and
 * owned by the caller. */
#ifndef CHESSD_API_HTTP_JSONW_H
#define CHESSD_API_HTTP_JSONW_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "buf.h"

/* Why not cJSON trees (chessd still parses requests with cJSON): a tree
 * costs an allocation and a free per value and key, plus a second pass to
 * print. tests/bench/jsonw_bench.c renders the full Kiwipete Position (48
 * legal moves, 6.2 KB) both ways, rules work included. With a jsonw call a
 * member it takes 12 us against 48-67 us with a tree and
 * cJSON_PrintUnformatted, 4-5x (callgrind: 144 K against 692 K
 * instructions). With each Move object written in one piece
 * (api/render/position_json.c, jsonw_raw): 6.7 us against 78 us, 11x. */

enum { JSONW_MAX_DEPTH = 32 };

typedef struct {
    buf_t out;
    int depth;
    bool need_comma[JSONW_MAX_DEPTH];
} jsonw_t;

void jsonw_init(jsonw_t *w);
/* Frees the buffer of an unfinished writer (safe after jsonw_finish too). */
void jsonw_discard(jsonw_t *w);
/* Returns the NUL-terminated text (length in *length) and hands it to the
 * caller, or NULL after an allocation failure. */
char *jsonw_finish(jsonw_t *w, size_t *length);
/* The bytes written so far: an offset into the text jsonw_finish returns. */
static inline size_t jsonw_length(const jsonw_t *w) { return w->out.length; }

void jsonw_object_begin(jsonw_t *w);
void jsonw_object_end(jsonw_t *w);
void jsonw_array_begin(jsonw_t *w);
void jsonw_array_end(jsonw_t *w);
/* Writes a key inside an object; the next value call supplies its value.
 * Keys are written as given: they must be literals that need no escaping. */
void jsonw_key(jsonw_t *w, const char *key);
void jsonw_string(jsonw_t *w, const char *s);
void jsonw_string_len(jsonw_t *w, const char *s, size_t length);
void jsonw_int(jsonw_t *w, long long v);
void jsonw_uint(jsonw_t *w, uint64_t v);
void jsonw_bool(jsonw_t *w, bool v);
void jsonw_null(jsonw_t *w);
/* Appends raw text as a value (must be valid JSON). */
void jsonw_raw(jsonw_t *w, const char *json);
/* The same, for the first length bytes of json. */
void jsonw_raw_n(jsonw_t *w, const char *json, size_t length);

/* key + value shorthands */
void jsonw_kv_string(jsonw_t *w, const char *key, const char *s);
void jsonw_kv_int(jsonw_t *w, const char *key, long long v);
void jsonw_kv_bool(jsonw_t *w, const char *key, bool v);
void jsonw_kv_null(jsonw_t *w, const char *key);

#endif
