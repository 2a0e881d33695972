/* The log: one JSON line per answer on stdout, and warnings (libmicrohttpd's
 * messages, the accept thread's) as JSON lines on stderr, at most a few a
 * second. Client text in a line (method, path) is made safe first: anything
 * that could break the JSON line becomes '?'. Whole lines go in each
 * write(2), so lines from different threads never interleave. */
#ifndef CHESSD_API_HTTP_ACCESS_LOG_H
#define CHESSD_API_HTTP_ACCESS_LOG_H

#include <stdarg.h>
#include <stdint.h>

/* {"ts":..,"method":..,"path":..,"status":..,"us":..,"request_id":..} on stdout.
 * On a thread that called access_log_hold, kept until access_log_flush. */
void access_log_request(const char *method, const char *path, unsigned status, uint64_t micros,
                        const char *request_id);
/* Keeps this thread's request lines from now on, written together by
 * access_log_flush (an event loop's, at the end of each turn) or once
 * ACCESS_LOG_HELD_MAX bytes are held. */
enum { ACCESS_LOG_HELD_MAX = 16384 };
void access_log_hold(void);
/* Writes the lines this thread holds, in one write(2). */
void access_log_flush(void);
/* Writes them, and holds no more (before the thread ends). */
void access_log_release(void);
/* {"level":"warning","source":source,"message":..} on stderr, printf-style. */
void access_log_warning(const char *source, const char *format, va_list ap);

#endif
