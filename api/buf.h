/* A growable byte buffer. A failed allocation sticks: every later append
 * is a no-op and buf_finish() returns NULL, so a writer checks once, at the end. */
#ifndef CHESSD_API_BUF_H
#define CHESSD_API_BUF_H

#include <stdbool.h>
#include <stddef.h>

typedef struct {
    char *data;
    size_t length, capacity;
    bool failed;
} buf_t;

void buf_init(buf_t *b);
void buf_append(buf_t *b, const void *data, size_t length);
void buf_puts(buf_t *b, const char *text);
void buf_putc(buf_t *b, char c);
void buf_printf(buf_t *b, const char *format, ...) __attribute__((format(printf, 2, 3)));
/* The NUL-terminated text (caller frees), or NULL after a failure; b is empty afterwards. */
char *buf_finish(buf_t *b, size_t *length);
void buf_free(buf_t *b);

#endif
