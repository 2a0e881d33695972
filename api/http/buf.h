/* The one growable byte buffer (after Redis's sds): every text of unknown
 * length chessd builds goes through it. It owns its data until buf_finish()
 * hands it to the caller. Failure sticks: once an allocation fails or a size
 * would overflow, appends are no-ops and buf_finish() returns NULL, so a
 * producer appends unchecked and its caller checks once. */
#ifndef CHESSD_API_HTTP_BUF_H
#define CHESSD_API_HTTP_BUF_H

#include <stdbool.h>
#include <stddef.h>
#include <string.h>

typedef struct {
    char *data;      /* NULL until the first append, and after a failure; else data[length] is '\0' */
    size_t length;   /* bytes written, the terminating NUL not counted */
    size_t capacity; /* bytes allocated, the NUL's included */
    bool failed;
} buf_t;

/* An empty buffer; allocates nothing. */
void buf_init(buf_t *b);
/* Frees the data and leaves b empty and usable again, its failure cleared.
 * NULL is fine. */
void buf_free(buf_t *b);

/* buf_reserve's slow path: grows b, or fails it. Call buf_reserve. */
bool buf_grow(buf_t *b, size_t extra);

/* The calls below that run once per byte or per JSON token are inline, so
 * writers such as jsonw pay no call for the common case of enough room. A
 * failed buffer has no data and no capacity, so the room check alone sends
 * it to buf_grow, which refuses. */

/* Makes room for `extra` more bytes (and the NUL) so the appends that follow
 * do not reallocate; false when b has failed or the room cannot be had. */
static inline bool buf_reserve(buf_t *b, size_t extra)
{
    return extra < b->capacity - b->length || buf_grow(b, extra);
}

/* For writing in place: after buf_reserve(b, n) succeeded and n bytes (or
 * fewer) were written at data + length, counts them and terminates. */
static inline void buf_commit(buf_t *b, size_t n)
{
    if (!b->data)
        return;
    b->length += n;
    b->data[b->length] = '\0';
}

static inline void buf_append(buf_t *b, const void *data, size_t n)
{
    if (!buf_reserve(b, n))
        return;
    memcpy(b->data + b->length, data, n);
    buf_commit(b, n);
}

static inline void buf_putc(buf_t *b, char c)
{
    if (!buf_reserve(b, 1))
        return;
    b->data[b->length] = c;
    buf_commit(b, 1);
}

void buf_puts(buf_t *b, const char *s);
void buf_printf(buf_t *b, const char *format, ...) __attribute__((format(printf, 2, 3)));

/* Marks b failed, as an allocation failure would (a producer's own error). */
void buf_fail(buf_t *b);
bool buf_failed(const buf_t *b);

/* Hands the NUL-terminated text (its length in *length when length is not
 * NULL) to the caller, who frees it; an empty buffer gives "". NULL when b
 * has failed or the final allocation fails. Either way b is left empty. */
char *buf_finish(buf_t *b, size_t *length);

/* For tests only: the realloc every buffer uses from now on (NULL restores
 * realloc), so a test can make an allocation fail. What it returns must be
 * freeable by free(). Not to be changed while other threads use buffers. */
typedef void *(*buf_realloc_fn)(void *ptr, size_t size);
void buf_set_realloc(buf_realloc_fn fn);

#endif
