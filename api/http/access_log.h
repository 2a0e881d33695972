/* The log: one JSON line per answer on stdout, and warnings (libmicrohttpd's
 * messages, the accept thread's) as JSON lines on stderr, at most a few a
 * second. Client text in a line (method, path) is made safe first: anything
 * that could break the JSON line becomes '?'. Each line is one write(2), so
 * lines from different threads never interleave. */
#ifndef CHESSD_API_HTTP_ACCESS_LOG_H
#define CHESSD_API_HTTP_ACCESS_LOG_H

#include <stdarg.h>
#include <stdint.h>

/* {"ts":..,"method":..,"path":..,"status":..,"us":..,"request_id":..} on stdout. */
void access_log_request(const char *method, const char *path, unsigned status, uint64_t micros,
                        const char *request_id);
/* {"level":"warning","source":source,"message":..} on stderr, printf-style. */
void access_log_warning(const char *source, const char *format, va_list ap);

#endif
