/* A webhook receiver for the send tests: one thread accepting on a loopback
 * address and an ephemeral port, plain or TLS. It answers each connection by
 * a script (a status, a Location, or hanging until the client leaves), and
 * records how many connections came and the last request whole. */
#ifndef CHESSD_TESTS_API_WEBHOOKS_RECEIVER_H
#define CHESSD_TESTS_API_WEBHOOKS_RECEIVER_H

#include <openssl/ssl.h>
#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>

enum { RECEIVER_SCRIPT_MAX = 8, RECEIVER_HEAD_MAX = 16384, RECEIVER_BODY_MAX = 70000 };

typedef struct {
    int status;           /* the answer's status */
    char location[256];   /* a Location header; "" : none */
    bool hang;            /* read the request, then answer nothing until the client leaves */
    bool keep_alive;      /* no Connection: close in the answer */
    bool serve_more;      /* with keep_alive: the connection's next requests answered alike */
} receiver_reply_t;

typedef struct {
    char host[64];
    unsigned port;
    int listen_fd, stop_pipe[2];
    SSL_CTX *tls; /* NULL: plain HTTP */
    pthread_t thread;
    pthread_mutex_t lock;
    /* Under lock: */
    receiver_reply_t script[RECEIVER_SCRIPT_MAX]; /* one a connection; the last repeats */
    int script_count;
    int connections, requests;
    char head[RECEIVER_HEAD_MAX + 1]; /* the last request's head */
    char body[RECEIVER_BODY_MAX + 1];
    size_t body_length;
} receiver_t;

/* Listens on host (an IPv4 literal) at a free port, with TLS when tls is not
 * NULL (the receiver takes a reference); false with a reason on stderr. */
bool receiver_start(receiver_t *r, const char *host, SSL_CTX *tls);
void receiver_stop(receiver_t *r);

/* Replaces the script and zeroes the counts and the last request. */
void receiver_script(receiver_t *r, const receiver_reply_t *replies, int count);

int receiver_connections(receiver_t *r);
int receiver_requests(receiver_t *r);

/* The value of header name in the last request's head into out ("" when
 * absent). */
void receiver_header(receiver_t *r, const char *name, char *out, size_t size);

#endif
