/* One webhook delivery: a signed POST to a destination the policy allows,
 * over http or https, bounded in bytes and in time. The host is resolved
 * once a hop and only a checked address is connected to, or reused (a kept
 * plain-http connection, webhook_conn_t), so there is no DNS-rebinding
 * window; redirects are judged again, hop by hop. Thread-safe; the only
 * shared state is the system-CA TLS context. */
#ifndef CHESSD_API_WEBHOOKS_SEND_H
#define CHESSD_API_WEBHOOKS_SEND_H

#include <stddef.h>
#include <stdint.h>

#include "allow.h"

enum {
    WEBHOOK_BODY_MAX = 64 * 1024,       /* bytes of a payload */
    WEBHOOK_RESPONSE_HEAD_MAX = 16384,  /* bytes of an answer's status line and headers read at most */
    WEBHOOK_REDIRECTS_MAX = 5,          /* hops a request may allow */
};

typedef enum {
    WEBHOOK_DELIVERED = 0,             /* a 2xx answer */
    WEBHOOK_HTTP_STATUS,               /* another status (in status) */
    WEBHOOK_REFUSED,                   /* the policy refused a hop (in refusal); nothing was sent there */
    WEBHOOK_REDIRECT_NOT_FOLLOWED,     /* a 3xx with no redirect left to follow */
    WEBHOOK_TIMEOUT,                   /* the deadline passed (resolving, connecting, sending or reading) */
    WEBHOOK_CONNECT_FAILED,            /* no address took the connection */
    WEBHOOK_TLS_FAILED,                /* the handshake or the certificate failed */
    WEBHOOK_BAD_RESPONSE,              /* not an HTTP/1.x answer, or one over the bounds */
    WEBHOOK_INVALID_REQUEST,           /* the caller's request: a body over WEBHOOK_BODY_MAX, a bad header value */
    WEBHOOK_OUTCOME_COUNT
} webhook_outcome_t;

/* One idle plain-http connection kept by a caller (a thread's; never
 * shared) for its next delivery: reused only when its peer, addr:port, is
 * among the addresses that delivery's hop resolved and the policy allowed
 * again, and it has been idle under WEBHOOK_CONN_IDLE_MS. fd -1: none. */
typedef struct {
    int fd;
    webhook_addr_t addr;
    unsigned port;
    int64_t idle_since_ms; /* clock_now_ms() */
} webhook_conn_t;

enum { WEBHOOK_CONN_IDLE_MS = 2000 };

/* An empty slot. */
void webhook_conn_init(webhook_conn_t *conn);
/* Closes the kept connection, if any; the slot is empty after. */
void webhook_conn_close(webhook_conn_t *conn);
/* Closes the kept connection when it has been idle WEBHOOK_CONN_IDLE_MS:
 * for a caller about to wait, so no connection is held open unused. */
void webhook_conn_expire(webhook_conn_t *conn);

/* The outcome's stable name ("delivered", "http_status", ...). */
const char *webhook_outcome_code(webhook_outcome_t outcome);

typedef struct {
    const char *url;                /* checked again here, as webhook_allow_check_url does */
    const void *body;               /* JSON, body_length bytes (at most WEBHOOK_BODY_MAX) */
    size_t body_length;
    const char *id;                 /* the webhook-id header (webhook_message_id) */
    int64_t timestamp;              /* the webhook-timestamp header, Unix seconds */
    const char *signature;          /* the webhook-signature header (webhook_sign) */
    const webhook_allow_t *allow;   /* the policy; never NULL */
    unsigned deadline_ms;           /* for the whole delivery, every hop included */
    unsigned redirects;             /* 3xx hops to follow (0..WEBHOOK_REDIRECTS_MAX); 0 by default */
    const char *ca_file;            /* PEM CAs for https; NULL or "": the system's */
    webhook_conn_t *conn;           /* NULL: each connection closed after its answer */
} webhook_send_request_t;

typedef struct {
    webhook_outcome_t outcome;
    webhook_refusal_t refusal;      /* with WEBHOOK_REFUSED */
    int status;                     /* the last answer's HTTP status; 0: none */
    unsigned elapsed_ms;
    unsigned hops;                  /* redirects followed */
    char detail[WEBHOOK_DETAIL_MAX]; /* a sentence for the subscriber: no secret, no answer body */
} webhook_send_result_t;

/* Delivers req (POST, Content-Type: application/json, User-Agent:
 * chessd-webhooks/1, the three webhook-* headers, Content-Length, and
 * Connection: close unless req->conn may keep it) and fills *result. Every hop: the URL parsed, its host
 * resolved within what is left of the deadline, every address judged by the
 * policy (any refused: WEBHOOK_REFUSED, no connection made), each allowed
 * address tried in turn, TLS with the host's name checked for https. Only
 * the status line and headers are read; a 301, 302, 303, 307 or 308 with a
 * Location (absolute, or a path on the same origin) is followed with the
 * same POST while redirects remain. A 2xx answer over HTTP/1.1 whose whole
 * body (Content-Length) came with its head, not saying Connection: close,
 * leaves its plain-http connection in req->conn. */
void webhook_send(const webhook_send_request_t *req, webhook_send_result_t *result);

#endif
