/* The log (access_log.h). */
#include "access_log.h"

#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "buf.h"
#include "../../rules/base/clock.h"

enum { WARNINGS_PER_SECOND = 5 };

/* A byte of client text as a log line has it: anything that could break the
 * JSON line (quotes, backslashes, controls, non-ASCII) becomes '?'. */
static char log_char(unsigned char c) { return (c < 0x20 || c == '"' || c == '\\' || c >= 0x7f) ? '?' : (char)c; }

/* Appends client text (bounded by where it was kept) to a log line. */
static void log_safe(buf_t *line, const char *text)
{
    for (size_t i = 0; text[i]; i++)
        buf_putc(line, log_char((unsigned char)text[i]));
}

/* Writes a log line with a single write(2), so lines from different threads
 * never interleave, and frees it. A line that could not be made is dropped. */
static void write_line(int fd, buf_t *line)
{
    size_t length;
    char *text = buf_finish(line, &length);
    if (text) {
        ssize_t written = write(fd, text, length);
        (void)written;
    }
    free(text);
}

/* A request's line, written into a buffer known to be large enough: on the
 * stack for most lines, allocated for a long path. No printf. */
typedef struct {
    char *text;
    size_t length;
} line_t;

static void line_put(line_t *l, const char *s, size_t n)
{
    memcpy(l->text + l->length, s, n);
    l->length += n;
}

/* Decimal digits of v, at least `width` of them (leading zeros). */
static void line_number(line_t *l, unsigned long long v, int width)
{
    char digits[24];
    int n = 0;
    do {
        digits[n++] = (char)('0' + v % 10);
        v /= 10;
    } while (v || n < width);
    while (n)
        l->text[l->length++] = digits[--n];
}

static void line_safe(line_t *l, const char *text, size_t n)
{
    for (size_t i = 0; i < n; i++)
        l->text[l->length++] = log_char((unsigned char)text[i]);
}

#define LINE_PUT(l, literal) line_put((l), "" literal, sizeof literal - 1)

enum { LINE_FIXED_MAX = 128, LINE_ON_STACK = 512 }; /* the fixed text and the numbers take under 128 bytes */

/* The lines an event loop's thread holds (access_log_hold); text is
 * ACCESS_LOG_HELD_MAX bytes, NULL on any other thread. */
static _Thread_local struct {
    char *text;
    size_t length;
} held;

/* Adds a line to those held, writing them first when it would not fit;
 * false for a line larger than the whole store (written alone). */
static bool hold_line(const char *text, size_t length)
{
    if (length > ACCESS_LOG_HELD_MAX)
        return false;
    if (held.length + length > ACCESS_LOG_HELD_MAX)
        access_log_flush();
    memcpy(held.text + held.length, text, length);
    held.length += length;
    return true;
}

/* One JSON line per request on stdout, with a single write(2), so lines
 * from different threads never interleave. A line that cannot be made (no
 * memory for a long one) is dropped. */
void access_log_request(const char *method, const char *path, unsigned status, uint64_t micros,
                     const char *request_id)
{
    struct timespec wall;
    clock_gettime(CLOCK_REALTIME, &wall);
    size_t method_length = strlen(method), path_length = strlen(path), id_length = strlen(request_id);
    size_t size = method_length + path_length + id_length + LINE_FIXED_MAX;
    char stack[LINE_ON_STACK];
    line_t l = { .text = size <= sizeof stack ? stack : malloc(size), .length = 0 };
    if (!l.text)
        return;
    LINE_PUT(&l, "{\"ts\":");
    line_number(&l, (unsigned long long)wall.tv_sec, 1);
    LINE_PUT(&l, ".");
    line_number(&l, (unsigned long long)(wall.tv_nsec / 1000000), 3);
    LINE_PUT(&l, ",\"method\":\"");
    line_safe(&l, method, method_length);
    LINE_PUT(&l, "\",\"path\":\"");
    line_safe(&l, path, path_length);
    LINE_PUT(&l, "\",\"status\":");
    line_number(&l, status, 1);
    LINE_PUT(&l, ",\"us\":");
    line_number(&l, (unsigned long long)micros, 1);
    LINE_PUT(&l, ",\"request_id\":\"");
    line_put(&l, request_id, id_length);
    LINE_PUT(&l, "\"}\n");
    if (!held.text || !hold_line(l.text, l.length)) {
        ssize_t written = write(STDOUT_FILENO, l.text, l.length);
        (void)written;
    }
    if (l.text != stack)
        free(l.text);
}

void access_log_hold(void)
{
    if (!held.text)
        held.text = malloc(ACCESS_LOG_HELD_MAX); /* without it, lines are written one by one */
}

void access_log_release(void)
{
    access_log_flush();
    free(held.text);
    held.text = NULL;
}

void access_log_flush(void)
{
    if (held.length) {
        ssize_t written = write(STDOUT_FILENO, held.text, held.length);
        (void)written;
    }
    held.length = 0;
}

/* A warning as one JSON line on stderr naming its source; libmicrohttpd's
 * messages and the accept thread's together are logged at most
 * WARNINGS_PER_SECOND a second. */
void access_log_warning(const char *source, const char *format, va_list ap)
{
    static atomic_llong window;
    static atomic_int in_window;
    long long second = (long long)(clock_now_us() / 1000000u);
    long long seen = atomic_load(&window);
    if (seen != second && atomic_compare_exchange_strong(&window, &seen, second))
        atomic_store(&in_window, 0);
    if (atomic_fetch_add(&in_window, 1) >= WARNINGS_PER_SECOND)
        return;
    char message[256];
    vsnprintf(message, sizeof message, format, ap);
    size_t n = strlen(message);
    while (n > 0 && (message[n - 1] == '\n' || message[n - 1] == '\r')) /* the message's own newline */
        message[--n] = '\0';
    buf_t line;
    buf_init(&line);
    buf_puts(&line, "{\"level\":\"warning\",\"source\":\"");
    buf_puts(&line, source);
    buf_puts(&line, "\",\"message\":\"");
    log_safe(&line, message);
    buf_puts(&line, "\"}\n");
    write_line(STDERR_FILENO, &line);
}
