/* buf.h's growable buffer. Capacity doubles from BUF_MIN_CAPACITY; every size
 * sum is checked, so a length that would wrap size_t fails the buffer rather
 * than writing past it. A failure frees the data at once: under memory
 * pressure a failed answer should not hold on to what it had. */
#include "buf.h"

#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { BUF_MIN_CAPACITY = 256 };

static buf_realloc_fn allocate = realloc;

void buf_set_realloc(buf_realloc_fn fn) { allocate = fn ? fn : realloc; }

void buf_init(buf_t *b) { *b = (buf_t){ NULL, 0, 0, false }; }

void buf_free(buf_t *b)
{
    if (!b)
        return;
    free(b->data);
    buf_init(b);
}

void buf_fail(buf_t *b)
{
    free(b->data);
    *b = (buf_t){ NULL, 0, 0, true };
}

bool buf_failed(const buf_t *b) { return b->failed; }

bool buf_grow(buf_t *b, size_t extra)
{
    if (b->failed)
        return false;
    if (extra < b->capacity - b->length) /* room for extra and the NUL already */
        return true;
    if (extra > SIZE_MAX - 1 - b->length) {
        buf_fail(b);
        return false;
    }
    size_t needed = b->length + extra + 1;
    size_t capacity = b->capacity < BUF_MIN_CAPACITY ? BUF_MIN_CAPACITY : b->capacity;
    while (capacity < needed)
        capacity = capacity > SIZE_MAX / 2 ? needed : capacity * 2;
    char *data = allocate(b->data, capacity);
    if (!data) {
        buf_fail(b);
        return false;
    }
    data[b->length] = '\0';
    b->data = data;
    b->capacity = capacity;
    return true;
}

void buf_puts(buf_t *b, const char *s) { buf_append(b, s, strlen(s)); }

void buf_printf(buf_t *b, const char *format, ...)
{
    if (b->failed)
        return;
    /* First into the room there is; when that is too small, once more into
     * exactly the room the first attempt measured. */
    size_t room = b->capacity - b->length;
    va_list args;
    va_start(args, format);
    int n = vsnprintf(b->data ? b->data + b->length : NULL, room, format, args);
    va_end(args);
    if (n < 0) {
        buf_fail(b);
        return;
    }
    if ((size_t)n >= room) {
        if (!buf_reserve(b, (size_t)n))
            return;
        va_start(args, format);
        vsnprintf(b->data + b->length, (size_t)n + 1, format, args);
        va_end(args);
    }
    b->length += (size_t)n;
}

char *buf_finish(buf_t *b, size_t *length)
{
    if (length)
        *length = 0;
    if (!b->data)
        buf_reserve(b, 0); /* an empty text is "", not NULL */
    if (b->failed) {
        buf_free(b);
        return NULL;
    }
    char *out = b->data;
    if (length)
        *length = b->length;
    buf_init(b);
    return out;
}
