/* TLS for the connections to Redis (rediss://), on OpenSSL: one context per
 * store (trusted CAs, an optional client certificate for mutual TLS), and a
 * session per connection over a non-blocking socket the caller connected.
 * The server's certificate is verified unless an explicit insecure setting
 * turns that off. No call blocks past the time it is given. */
#ifndef CHESSD_STORE_TLS_H
#define CHESSD_STORE_TLS_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

/* A certificate is verified against the system CAs or a CA file, and its
 * name checked against the host (or a fixed server name), which is also
 * sent as SNI. */

typedef struct tls_context tls_context_t;
typedef struct tls_session tls_session_t;

typedef struct {
    const char *ca_file;     /* PEM CAs to trust; NULL or "": the system's CAs */
    const char *cert_file;   /* PEM client certificate (mutual TLS); NULL or "": none */
    const char *key_file;    /* its PEM private key; set exactly when cert_file is */
    const char *server_name; /* the name checked and sent as SNI; NULL or "": the host connected to */
    bool insecure_no_verify; /* accept any certificate (the name too): for tests and emergencies only */
} tls_config_t;

/* Loads the CAs and the client certificate. NULL, with a sentence naming the
 * file and OpenSSL's reason in err, when one cannot be read or the key does
 * not match the certificate. Free with tls_context_free() (NULL is fine). */
tls_context_t *tls_context_new(const tls_config_t *cfg, char *err, size_t err_size);
void tls_context_free(tls_context_t *ctx);

/* The handshake on fd (connected, O_NONBLOCK) to host (a name or an IP
 * literal, checked against the certificate's DNS or IP names unless
 * cfg->server_name replaces it; SNI is sent for a name, not for an IP),
 * within timeout_ms. NULL with a sentence in err on a timeout, a refused
 * handshake or a certificate that fails verification (err then says why:
 * "certificate has expired", "unable to get local issuer certificate",
 * "hostname mismatch", ...). The fd stays the caller's: tls_session_free()
 * does not close it. */
tls_session_t *tls_session_new(tls_context_t *ctx, int fd, const char *host, unsigned timeout_ms, char *err,
                               size_t err_size);
void tls_session_free(tls_session_t *s);

/* What a read or write that returned TLS_IO_WAIT waits for. */
typedef enum { TLS_WANT_READ = 1, TLS_WANT_WRITE = 2 } tls_want_t;
enum { TLS_IO_CLOSED = 0, TLS_IO_ERROR = -1, TLS_IO_WAIT = -2 };

/* Never block. > 0: bytes moved. TLS_IO_CLOSED (read only): the peer closed
 * the session (close_notify or EOF). TLS_IO_WAIT: nothing can move now; poll
 * the fd for *want (a read may need the socket writable, and a write
 * readable, during a renegotiation or key update). TLS_IO_ERROR: the session
 * is broken. A write of n bytes that returned k < n must be retried with the
 * rest. */
ssize_t tls_read(tls_session_t *s, void *buf, size_t n, tls_want_t *want);
ssize_t tls_write(tls_session_t *s, const void *buf, size_t n, tls_want_t *want);

/* Whether decrypted bytes wait inside the session (poll() cannot see them). */
bool tls_pending(const tls_session_t *s);

/* Whether the session, with nothing owed by the peer, was closed or broken
 * while idle: reads what arrived without waiting; records that carry no data
 * (TLS 1.3 session tickets) do not count. */
bool tls_closed_while_idle(tls_session_t *s);

#endif
