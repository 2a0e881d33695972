/* The growable buffer of buf.h. */
#include "buf.h"

#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void buf_init(buf_t *b) { memset(b, 0, sizeof *b); }

void buf_free(buf_t *b)
{
    free(b->data);
    buf_init(b);
}

/* Room for extra more bytes and a NUL. */
static bool reserve(buf_t *b, size_t extra)
{
    if (b->failed)
        return false;
    if (extra < b->capacity - b->length)
        return true;
    size_t capacity = b->capacity ? b->capacity : 256;
    while (capacity - b->length <= extra) {
        if (capacity > SIZE_MAX / 2) {
            b->failed = true;
            return false;
        }
        capacity *= 2;
    }
    char *data = realloc(b->data, capacity);
    if (!data) {
        b->failed = true;
        return false;
    }
    b->data = data;
    b->capacity = capacity;
    return true;
}

void buf_append(buf_t *b, const void *data, size_t length)
{
    if (!reserve(b, length))
        return;
    memcpy(b->data + b->length, data, length);
    b->length += length;
}

void buf_puts(buf_t *b, const char *text) { buf_append(b, text, strlen(text)); }

void buf_putc(buf_t *b, char c) { buf_append(b, &c, 1); }

void buf_printf(buf_t *b, const char *format, ...)
{
    va_list args;
    va_start(args, format);
    int n = vsnprintf(NULL, 0, format, args);
    va_end(args);
    if (n < 0) {
        b->failed = true;
        return;
    }
    if (!reserve(b, (size_t)n))
        return;
    va_start(args, format);
    vsnprintf(b->data + b->length, (size_t)n + 1, format, args);
    va_end(args);
    b->length += (size_t)n;
}

char *buf_finish(buf_t *b, size_t *length)
{
    if (b->failed || !reserve(b, 0)) {
        buf_free(b);
        return NULL;
    }
    char *out = b->data;
    out[b->length] = '\0';
    if (length)
        *length = b->length;
    buf_init(b);
    return out;
}
