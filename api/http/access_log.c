/* The log (access_log.h). */
#include "access_log.h"

#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "buf.h"
#include "clock.h"

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

/* Text of a line made on the stack: most lines fit, and need neither an
 * allocation nor printf. */
typedef struct {
    char text[512];
    size_t length;
} short_line_t;

static void short_put(short_line_t *l, const char *s, size_t n)
{
    memcpy(l->text + l->length, s, n);
    l->length += n;
}

/* Decimal digits of v, at least `width` of them (leading zeros). */
static void short_number(short_line_t *l, unsigned long long v, int width)
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

static void short_safe(short_line_t *l, const char *text, size_t n)
{
    for (size_t i = 0; i < n; i++)
        l->text[l->length++] = log_char((unsigned char)text[i]);
}

#define SHORT_PUT(l, literal) short_put((l), "" literal, sizeof literal - 1)

/* One JSON line per request on stdout. */
void access_log_request(const char *method, const char *path, unsigned status, uint64_t micros,
                     const char *request_id)
{
    struct timespec wall;
    clock_gettime(CLOCK_REALTIME, &wall);
    size_t method_length = strlen(method), path_length = strlen(path), id_length = strlen(request_id);
    /* The fixed text and the numbers take under 128 bytes. */
    if (method_length + path_length + id_length + 128 <= sizeof ((short_line_t *)0)->text) {
        short_line_t l = { .length = 0 };
        SHORT_PUT(&l, "{\"ts\":");
        short_number(&l, (unsigned long long)wall.tv_sec, 1);
        SHORT_PUT(&l, ".");
        short_number(&l, (unsigned long long)(wall.tv_nsec / 1000000), 3);
        SHORT_PUT(&l, ",\"method\":\"");
        short_safe(&l, method, method_length);
        SHORT_PUT(&l, "\",\"path\":\"");
        short_safe(&l, path, path_length);
        SHORT_PUT(&l, "\",\"status\":");
        short_number(&l, status, 1);
        SHORT_PUT(&l, ",\"us\":");
        short_number(&l, (unsigned long long)micros, 1);
        SHORT_PUT(&l, ",\"request_id\":\"");
        short_put(&l, request_id, id_length);
        SHORT_PUT(&l, "\"}\n");
        ssize_t written = write(STDOUT_FILENO, l.text, l.length);
        (void)written;
        return;
    }
    buf_t line;
    buf_init(&line);
    buf_printf(&line, "{\"ts\":%lld.%03ld,\"method\":\"", (long long)wall.tv_sec, wall.tv_nsec / 1000000);
    log_safe(&line, method);
    buf_puts(&line, "\",\"path\":\"");
    log_safe(&line, path);
    buf_printf(&line, "\",\"status\":%u,\"us\":%llu,\"request_id\":\"%s\"}\n", status, (unsigned long long)micros,
               request_id);
    write_line(STDOUT_FILENO, &line);
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
