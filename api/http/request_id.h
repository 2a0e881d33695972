/* Request ids: the X-Request-Id every answer and log line carries. A
 * client's own id is kept when it is short and plain; otherwise one is made:
 * unique, not secret. */
#ifndef CHESSD_API_HTTP_REQUEST_ID_H
#define CHESSD_API_HTTP_REQUEST_ID_H

enum { REQUEST_ID_MAX = 64 };

/* A fresh id into out (REQUEST_ID_MAX + 1 bytes): 32 hex digits. */
void request_id_make(char *out);
/* given (the client's X-Request-Id, or NULL) into out when it is 1 to
 * REQUEST_ID_MAX letters, digits and "-_.:"; else a fresh id. */
void request_id_choose(const char *given, char *out);

#endif
