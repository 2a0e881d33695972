/* TLS sessions to Redis on OpenSSL 3 (see tls.h). A context is shared by
 * every thread (OpenSSL 3 locks what it shares); a session belongs to one
 * thread at a time. Every failure empties the calling thread's OpenSSL error
 * queue, so a stale error never explains a later call. Sessions write with
 * send(MSG_NOSIGNAL), not OpenSSL's write(): a peer that reset the
 * connection is an error value even where SIGPIPE is not ignored. */
#include "tls.h"

#include <arpa/inet.h>
#include <errno.h>
#include <limits.h>
#include <openssl/err.h>
#include <openssl/ssl.h>
#include <openssl/x509v3.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include "fiber.h"
#include "sock.h"

struct tls_context {
    SSL_CTX *ssl_ctx;
    char *server_name; /* NULL: check the host each session connects to */
    bool insecure_no_verify;
};

struct tls_session {
    SSL *ssl;
    int fd;
};

/* OpenSSL's socket BIO but for its write, which uses send(MSG_NOSIGNAL):
 * made once, never freed (sessions may outlive any context). Kernel TLS,
 * the only other path of the socket BIO's write, is never enabled here. */
static BIO_METHOD *socket_method;
static pthread_once_t socket_method_once = PTHREAD_ONCE_INIT;

static int socket_write_nosignal(BIO *bio, const char *data, int length)
{
    int fd = -1;
    BIO_get_fd(bio, &fd);
    errno = 0;
    int sent = (int)send(fd, data, (size_t)length, MSG_NOSIGNAL);
    BIO_clear_retry_flags(bio);
    if (sent <= 0 && BIO_sock_should_retry(sent))
        BIO_set_retry_write(bio);
    return sent;
}

static void make_socket_method(void)
{
    const BIO_METHOD *base = BIO_s_socket();
    BIO_METHOD *method = BIO_meth_new(BIO_get_new_index() | BIO_TYPE_SOURCE_SINK | BIO_TYPE_DESCRIPTOR,
                                      "socket (MSG_NOSIGNAL)");
    if (!method)
        return;
    if (!BIO_meth_set_write(method, socket_write_nosignal) || !BIO_meth_set_read(method, BIO_meth_get_read(base))
        || !BIO_meth_set_ctrl(method, BIO_meth_get_ctrl(base)) || !BIO_meth_set_create(method, BIO_meth_get_create(base))
        || !BIO_meth_set_destroy(method, BIO_meth_get_destroy(base))) {
        BIO_meth_free(method);
        return;
    }
    socket_method = method;
}

/* A BIO over fd that leaves it open when freed, or NULL. */
static BIO *socket_bio(int fd)
{
    pthread_once(&socket_method_once, make_socket_method);
    BIO *bio = socket_method ? BIO_new(socket_method) : NULL;
    if (bio)
        BIO_set_fd(bio, fd, BIO_NOCLOSE);
    return bio;
}

/* Whether a setting is given (the config treats NULL and "" alike). */
static bool is_set(const char *s) { return s && *s; }

/* OpenSSL's oldest queued error as text (the first failure; later entries
 * only add where it surfaced), or what_else when the queue is empty. Empties
 * the queue. */
static void take_openssl_error(char *out, size_t size, const char *what_else)
{
    unsigned long code = ERR_get_error();
    if (code)
        ERR_error_string_n(code, out, size);
    else
        snprintf(out, size, "%s", what_else);
    ERR_clear_error();
}

/* err = "<what>: <OpenSSL's reason>". */
static void fail_with_openssl(char *err, size_t err_size, const char *what)
{
    char reason[256];
    take_openssl_error(reason, sizeof reason, "no reason given");
    snprintf(err, err_size, "%s: %s", what, reason);
}

/* The passphrase callback: none is ever given. OpenSSL's default asks on the
 * terminal, which would block a server at start; an encrypted key fails to
 * load instead. */
static int no_passphrase(char *buf, int size, int rwflag, void *userdata)
{
    (void)buf;
    (void)size;
    (void)rwflag;
    (void)userdata;
    return 0;
}

/* Whether an OpenSSL error code says a key is not the certificate's. */
static bool is_key_mismatch(unsigned long code)
{
    return ERR_GET_LIB(code) == ERR_LIB_X509
           && (ERR_GET_REASON(code) == X509_R_KEY_VALUES_MISMATCH || ERR_GET_REASON(code) == X509_R_KEY_TYPE_MISMATCH);
}

/* The client certificate and its key; false with err set. */
static bool load_client_certificate(SSL_CTX *ssl_ctx, const char *cert_file, const char *key_file, char *err,
                                    size_t err_size)
{
    char what[PATH_MAX + 96];
    if (SSL_CTX_use_certificate_chain_file(ssl_ctx, cert_file) != 1) {
        snprintf(what, sizeof what, "cannot load the client certificate %s", cert_file);
        fail_with_openssl(err, err_size, what);
        return false;
    }
    /* Loading the key compares it with the certificate already; the check after it is the contract's. */
    bool loaded = SSL_CTX_use_PrivateKey_file(ssl_ctx, key_file, SSL_FILETYPE_PEM) == 1;
    if (!loaded && !is_key_mismatch(ERR_peek_error())) {
        snprintf(what, sizeof what, "cannot load the client key %s (PEM, without a passphrase)", key_file);
        fail_with_openssl(err, err_size, what);
        return false;
    }
    if (!loaded || SSL_CTX_check_private_key(ssl_ctx) != 1) {
        snprintf(what, sizeof what, "the client key %s does not match the certificate %s", key_file, cert_file);
        fail_with_openssl(err, err_size, what);
        return false;
    }
    return true;
}

/* The trusted CAs: ca_file's, or the system's; false with err set. */
static bool load_trusted_cas(SSL_CTX *ssl_ctx, const char *ca_file, char *err, size_t err_size)
{
    char what[PATH_MAX + 64];
    if (is_set(ca_file)) {
        if (SSL_CTX_load_verify_locations(ssl_ctx, ca_file, NULL) == 1)
            return true;
        snprintf(what, sizeof what, "cannot load the CA file %s", ca_file);
        fail_with_openssl(err, err_size, what);
        return false;
    }
    if (SSL_CTX_set_default_verify_paths(ssl_ctx) == 1)
        return true;
    fail_with_openssl(err, err_size, "cannot load the system's CA certificates");
    return false;
}

tls_context_t *tls_context_new(const tls_config_t *cfg, char *err, size_t err_size)
{
    if (is_set(cfg->cert_file) != is_set(cfg->key_file)) {
        snprintf(err, err_size, "a client certificate needs its key and a key its certificate: %s is set, %s is not",
                 is_set(cfg->cert_file) ? "the certificate" : "the key",
                 is_set(cfg->cert_file) ? "the key" : "the certificate");
        return NULL;
    }
    ERR_clear_error(); /* only this call's errors explain its failure */
    tls_context_t *ctx = calloc(1, sizeof *ctx);
    if (!ctx || (is_set(cfg->server_name) && !(ctx->server_name = strdup(cfg->server_name)))) {
        snprintf(err, err_size, "out of memory");
        free(ctx);
        return NULL;
    }
    ctx->insecure_no_verify = cfg->insecure_no_verify;
    ctx->ssl_ctx = SSL_CTX_new(TLS_client_method());
    if (!ctx->ssl_ctx) {
        fail_with_openssl(err, err_size, "cannot make a TLS context");
        tls_context_free(ctx);
        return NULL;
    }
    SSL_CTX *ssl_ctx = ctx->ssl_ctx;
    SSL_CTX_set_default_passwd_cb(ssl_ctx, no_passphrase);
    SSL_CTX_clear_options(ssl_ctx, SSL_OP_ENABLE_KTLS); /* (the default) writes go through socket_write_nosignal */
    /* A write may take part of a buffer, and a retry may pass the same bytes from another address. */
    SSL_CTX_set_mode(ssl_ctx, SSL_MODE_ENABLE_PARTIAL_WRITE | SSL_MODE_ACCEPT_MOVING_WRITE_BUFFER);
    if (SSL_CTX_set_min_proto_version(ssl_ctx, TLS1_2_VERSION) != 1) {
        fail_with_openssl(err, err_size, "cannot require TLS 1.2 or later");
        tls_context_free(ctx);
        return NULL;
    }
    if (!load_trusted_cas(ssl_ctx, cfg->ca_file, err, err_size)
        || (is_set(cfg->cert_file) && !load_client_certificate(ssl_ctx, cfg->cert_file, cfg->key_file, err, err_size))) {
        tls_context_free(ctx);
        return NULL;
    }
    SSL_CTX_set_verify(ssl_ctx, cfg->insecure_no_verify ? SSL_VERIFY_NONE : SSL_VERIFY_PEER, NULL);
    return ctx;
}

void tls_context_free(tls_context_t *ctx)
{
    if (!ctx)
        return;
    SSL_CTX_free(ctx->ssl_ctx);
    free(ctx->server_name);
    free(ctx);
}

/* Whether name is an IPv4 or IPv6 literal. */
static bool is_ip_literal(const char *name)
{
    unsigned char address[sizeof(struct in6_addr)];
    return inet_pton(AF_INET, name, address) == 1 || inet_pton(AF_INET6, name, address) == 1;
}

/* The name to check, the SNI to send, and the verification mode of ssl; false with err set. */
static bool set_peer_name(SSL *ssl, const tls_context_t *ctx, const char *name, char *err, size_t err_size)
{
    if (!is_set(name)) {
        if (ctx->insecure_no_verify)
            return true;
        snprintf(err, err_size, "no host name to check the server's certificate against");
        return false;
    }
    bool ip = is_ip_literal(name);
    /* SNI carries host names only (RFC 6066, section 3). */
    if (!ip && SSL_set_tlsext_host_name(ssl, name) != 1) {
        fail_with_openssl(err, err_size, "cannot set the TLS server name (SNI)");
        return false;
    }
    if (ctx->insecure_no_verify)
        return true;
    bool checked = ip ? X509_VERIFY_PARAM_set1_ip_asc(SSL_get0_param(ssl), name) == 1 : SSL_set1_host(ssl, name) == 1;
    if (!checked) {
        char what[320];
        snprintf(what, sizeof what, "cannot check the server's certificate against '%.255s'", name);
        fail_with_openssl(err, err_size, what);
        return false;
    }
    if (!ip)
        SSL_set_hostflags(ssl, X509_CHECK_FLAG_NO_PARTIAL_WILDCARDS);
    return true;
}

/* Why a handshake ended with SSL_get_error() == ssl_error; errno_then is
 * errno right after the call. Certificate failures say what verification
 * found (without verification, its result is recorded but never the reason). */
static void describe_handshake_failure(SSL *ssl, bool verified, int ssl_error, int errno_then, const char *name,
                                       char *err, size_t err_size)
{
    char reason[256];
    long verify = SSL_get_verify_result(ssl);
    if (verified && verify != X509_V_OK) {
        snprintf(err, err_size, "TLS handshake with %.255s: the server's certificate failed verification: %s", name,
                 X509_verify_cert_error_string(verify));
        ERR_clear_error();
        return;
    }
    if (ssl_error == SSL_ERROR_SYSCALL && ERR_peek_error() == 0) {
        if (errno_then)
            snprintf(reason, sizeof reason, "%s", strerror(errno_then));
        else
            snprintf(reason, sizeof reason, "the server closed the connection");
    } else {
        take_openssl_error(reason, sizeof reason, "the handshake failed");
    }
    snprintf(err, err_size, "TLS handshake with %.255s: %s", name, reason);
    ERR_clear_error();
}

tls_session_t *tls_session_new(tls_context_t *ctx, int fd, const char *host, unsigned timeout_ms, char *err,
                               size_t err_size)
{
    const char *name = ctx->server_name ? ctx->server_name : host;
    const char *shown = is_set(name) ? name : "the server";
    int64_t deadline = clock_now_ms() + (int64_t)timeout_ms;
    tls_session_t *s = calloc(1, sizeof *s);
    if (!s) {
        snprintf(err, err_size, "out of memory");
        return NULL;
    }
    s->fd = fd;
    s->ssl = SSL_new(ctx->ssl_ctx);
    if (!s->ssl) {
        fail_with_openssl(err, err_size, "cannot make a TLS session");
        tls_session_free(s);
        return NULL;
    }
    BIO *bio = socket_bio(fd);
    if (!bio) {
        fail_with_openssl(err, err_size, "cannot attach the TLS session to its socket");
        tls_session_free(s);
        return NULL;
    }
    SSL_set_bio(s->ssl, bio, bio); /* the session owns the BIO now */
    if (!set_peer_name(s->ssl, ctx, name, err, err_size)) {
        tls_session_free(s);
        return NULL;
    }
    SSL_set_connect_state(s->ssl);
    for (;;) {
        ERR_clear_error();
        errno = 0;
        int r = SSL_connect(s->ssl);
        if (r == 1)
            return s;
        int errno_then = errno;
        int ssl_error = SSL_get_error(s->ssl, r);
        if (ssl_error != SSL_ERROR_WANT_READ && ssl_error != SSL_ERROR_WANT_WRITE) {
            describe_handshake_failure(s->ssl, !ctx->insecure_no_verify, ssl_error, errno_then, shown, err, err_size);
            tls_session_free(s);
            return NULL;
        }
        /* On a fiber this yields to its event loop; elsewhere it polls. */
        short events = ssl_error == SSL_ERROR_WANT_READ ? POLLIN : POLLOUT;
        bool ready = clock_now_ms() < deadline && fiber_wait(fd, events, deadline);
        if (!ready && clock_now_ms() < deadline)
            continue; /* woken early: try again */
        if (!ready) {
            snprintf(err, err_size, "TLS handshake timed out after %u ms (with %.255s)", timeout_ms, shown);
            tls_session_free(s);
            return NULL;
        }
    }
}

void tls_session_free(tls_session_t *s)
{
    /* No close_notify: the caller may have closed the fd already, and its
     * number may belong to another connection by now. */
    if (!s)
        return;
    SSL_free(s->ssl);
    free(s);
}

/* Whether the error that just ended a read is the peer's unannounced EOF
 * (OpenSSL 3 reports it as SSL_R_UNEXPECTED_EOF_WHILE_READING; older
 * versions as a SSL_ERROR_SYSCALL with nothing queued and errno 0). */
static bool is_eof(int ssl_error, int errno_then)
{
    if (ssl_error == SSL_ERROR_SYSCALL)
        return ERR_peek_error() == 0 && errno_then == 0;
    unsigned long code = ERR_peek_error();
    return ssl_error == SSL_ERROR_SSL && ERR_GET_LIB(code) == ERR_LIB_SSL
           && ERR_GET_REASON(code) == SSL_R_UNEXPECTED_EOF_WHILE_READING;
}

/* What an I/O call that returned r <= 0 means (r as SSL_read/SSL_write
 * return it); reading tells whether it was a read. */
static ssize_t io_outcome(tls_session_t *s, int r, int errno_then, bool reading, tls_want_t *want)
{
    int ssl_error = SSL_get_error(s->ssl, r);
    ssize_t outcome = TLS_IO_ERROR;
    if (ssl_error == SSL_ERROR_WANT_READ || ssl_error == SSL_ERROR_WANT_WRITE) {
        if (want)
            *want = ssl_error == SSL_ERROR_WANT_READ ? TLS_WANT_READ : TLS_WANT_WRITE;
        outcome = TLS_IO_WAIT;
    } else if (reading && (ssl_error == SSL_ERROR_ZERO_RETURN || is_eof(ssl_error, errno_then))) {
        outcome = TLS_IO_CLOSED;
    }
    ERR_clear_error();
    return outcome;
}

/* A read of nothing is a caller's mistake: TLS_IO_ERROR, the session untouched. */
ssize_t tls_read(tls_session_t *s, void *buf, size_t n, tls_want_t *want)
{
    if (n == 0)
        return TLS_IO_ERROR;
    size_t moved = 0;
    ERR_clear_error();
    errno = 0;
    int r = SSL_read_ex(s->ssl, buf, n > (size_t)SSIZE_MAX ? (size_t)SSIZE_MAX : n, &moved);
    if (r == 1)
        return (ssize_t)moved;
    return io_outcome(s, r, errno, true, want);
}

/* A write of nothing returns 0 (nothing moved, nothing wrong). After
 * TLS_IO_WAIT, the retry passes the same bytes again (from any address:
 * SSL_MODE_ACCEPT_MOVING_WRITE_BUFFER), possibly followed by more. */
ssize_t tls_write(tls_session_t *s, const void *buf, size_t n, tls_want_t *want)
{
    if (n == 0)
        return 0;
    size_t moved = 0;
    ERR_clear_error();
    errno = 0;
    int r = SSL_write_ex(s->ssl, buf, n > (size_t)SSIZE_MAX ? (size_t)SSIZE_MAX : n, &moved);
    if (r == 1)
        return (ssize_t)moved;
    return io_outcome(s, r, errno, false, want);
}

bool tls_pending(const tls_session_t *s) { return SSL_pending(s->ssl) > 0; }

bool tls_closed_while_idle(tls_session_t *s)
{
    if (tls_pending(s))
        return true; /* bytes nobody asked for */
    struct pollfd p = { .fd = s->fd, .events = POLLIN };
    int ready = poll(&p, 1, 0);
    if (ready == 0 || (ready < 0 && errno == EINTR))
        return false;
    if (ready < 0)
        return true;
    unsigned char peek[16];
    size_t seen = 0;
    ERR_clear_error();
    int r = SSL_peek_ex(s->ssl, peek, sizeof peek, &seen);
    if (r == 1)
        return true; /* data nobody asked for: the session no longer matches its replies */
    int ssl_error = SSL_get_error(s->ssl, r);
    ERR_clear_error();
    /* Only records without data came (session tickets, a key update). */
    return ssl_error != SSL_ERROR_WANT_READ && ssl_error != SSL_ERROR_WANT_WRITE;
}
