/* Tests for store/tls.c against private redis-servers listening with TLS,
 * one per certificate tests/tls/make_certs.sh makes. Good certificates pass
 * by name and by address; each wrong one is refused with its reason unless
 * verification is off; SNI, mutual TLS, the files a context loads, a
 * handshake that never ends, SIGPIPE and the idle checks. Nothing is mocked. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <netinet/in.h>
#include <openssl/ssl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

#include "../../store/tls.h"
#include "../support/redis_server.h"
#include "../support/tests.h"

enum { TIMEOUT_MS = 2000, SILENT_TIMEOUT_MS = 300 };

/* The servers the suite starts, by the certificate each presents. */
typedef enum {
    SERVER_GOOD,       /* server.crt, no client certificate asked */
    SERVER_MUTUAL,     /* server.crt, tls-auth-clients yes */
    SERVER_WRONG_NAME, /* wrong.crt */
    SERVER_EXPIRED,    /* expired.crt */
    SERVER_UNKNOWN_CA, /* unknown-ca.crt */
    SERVER_COUNT
} server_id_t;

static const struct {
    const char *cert;
    bool auth_clients;
} server_kinds[SERVER_COUNT] = {
    [SERVER_GOOD] = { "server", false },      [SERVER_MUTUAL] = { "server", true },
    [SERVER_WRONG_NAME] = { "wrong", false }, [SERVER_EXPIRED] = { "expired", false },
    [SERVER_UNKNOWN_CA] = { "unknown-ca", false },
};

static char cert_dir[64];
static char cert_paths[SERVER_COUNT][2][PATH_MAX]; /* each server's certificate and key */
static redis_server_t servers[SERVER_COUNT];
static struct sigaction saved_sigpipe_action;

/* DIR/name, in one of a few rotating buffers (enough for one call's arguments). */
static const char *cert_file(const char *name)
{
    static char paths[8][PATH_MAX];
    static unsigned next;
    char *path = paths[next++ % 8];
    snprintf(path, PATH_MAX, "%s/%s", cert_dir, name);
    return path;
}

static void remove_cert_dir(void)
{
    DIR *dir = opendir(cert_dir);
    if (!dir)
        return;
    for (struct dirent *entry; (entry = readdir(dir));)
        if (strcmp(entry->d_name, ".") && strcmp(entry->d_name, ".."))
            unlink(cert_file(entry->d_name));
    closedir(dir);
    rmdir(cert_dir);
}

static bool start_tls_server(redis_server_t *server, const char *cert, bool auth_clients, char paths[2][PATH_MAX])
{
    snprintf(paths[0], PATH_MAX, "%s/%s.crt", cert_dir, cert);
    snprintf(paths[1], PATH_MAX, "%s/%s.key", cert_dir, cert);
    redis_server_init(server);
    server->tls = (redis_server_tls_t){ .cert_file = paths[0], .key_file = paths[1],
                                        .ca_file = cert_file("ca.crt"), .auth_clients = auth_clients };
    if (redis_server_start(server))
        return true;
    fprintf(stderr, "\ntls suite: cannot start redis-server with %s.crt: %s\n", cert, server->error);
    return false;
}

static int suite_cleanup(void)
{
    for (int i = 0; i < SERVER_COUNT; i++)
        redis_server_stop(&servers[i]);
    remove_cert_dir();
    sigaction(SIGPIPE, &saved_sigpipe_action, NULL);
    return 0;
}

static int suite_init(void)
{
    struct sigaction ignore = { .sa_handler = SIG_IGN };
    sigemptyset(&ignore.sa_mask);
    sigaction(SIGPIPE, &ignore, &saved_sigpipe_action); /* as the server does (see store/tls.c) */
    snprintf(cert_dir, sizeof cert_dir, "/tmp/chessd-tls-XXXXXX");
    if (!mkdtemp(cert_dir)) {
        fprintf(stderr, "\ntls suite: mkdtemp: %s\n", strerror(errno));
        return 1;
    }
    char command[256];
    snprintf(command, sizeof command, "tests/tls/make_certs.sh %s >/dev/null", cert_dir);
    if (system(command) != 0) {
        fprintf(stderr, "\ntls suite: '%s' failed (is the openssl CLI installed?)\n", command);
        suite_cleanup(); /* CUnit runs no cleanup after a failed init */
        return 1;
    }
    for (int i = 0; i < SERVER_COUNT; i++) {
        if (!start_tls_server(&servers[i], server_kinds[i].cert, server_kinds[i].auth_clients, cert_paths[i])) {
            suite_cleanup();
            return 1;
        }
    }
    return 0;
}

#define EXPECT_CONTAINS(text, part)                                                                                    \
    do {                                                                                                               \
        bool found_ = strstr((text), (part)) != NULL;                                                                  \
        if (!found_)                                                                                                   \
            fprintf(stderr, "\n\"%s\" does not contain \"%s\"\n", (text), (part));                                     \
        CU_ASSERT(found_);                                                                                             \
    } while (0)

/* A socket connected to 127.0.0.1:port and made non-blocking, or -1. */
static int connect_loopback(int port)
{
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in addr = { .sin_family = AF_INET, .sin_port = htons((uint16_t)port),
                                .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
    if (fd < 0 || connect(fd, (struct sockaddr *)&addr, sizeof addr) || fcntl(fd, F_SETFL, O_NONBLOCK)) {
        fprintf(stderr, "\nconnect to port %d: %s\n", port, strerror(errno));
        if (fd >= 0)
            close(fd);
        return -1;
    }
    return fd;
}

/* One TLS connection of a test: its context, socket and session. */
typedef struct {
    tls_context_t *ctx;
    int fd;
    tls_session_t *session;
    char err[512];
} client_t;

/* Makes the context, connects and shakes hands with host at port; true when
 * all worked, else the reason is in c->err. Close with client_close() either way. */
static bool client_open(client_t *c, const tls_config_t *cfg, int port, const char *host, unsigned timeout_ms)
{
    memset(c, 0, sizeof *c);
    c->fd = -1;
    if (!(c->ctx = tls_context_new(cfg, c->err, sizeof c->err)))
        return false;
    if ((c->fd = connect_loopback(port)) < 0) {
        snprintf(c->err, sizeof c->err, "cannot connect");
        return false;
    }
    c->session = tls_session_new(c->ctx, c->fd, host, timeout_ms, c->err, sizeof c->err);
    return c->session != NULL;
}

static void client_close(client_t *c)
{
    tls_session_free(c->session);
    if (c->fd >= 0)
        close(c->fd);
    tls_context_free(c->ctx);
    memset(c, 0, sizeof *c);
    c->fd = -1;
}

/* Waits up to the deadline for the socket to be ready for want; false on timeout. */
static bool wait_for(int fd, tls_want_t want, long deadline)
{
    long left = deadline - tests_monotonic_ms();
    struct pollfd p = { .fd = fd, .events = want == TLS_WANT_WRITE ? POLLOUT : POLLIN };
    return left > 0 && poll(&p, 1, (int)left) > 0;
}

/* Writes all of data within the deadline; counts the writes that moved less
 * than asked or had to wait. False on an error or timeout. */
static bool write_all(client_t *c, const char *data, size_t n, long deadline, int *short_writes)
{
    while (n > 0) {
        tls_want_t want = 0;
        ssize_t moved = tls_write(c->session, data, n, &want);
        if (moved == TLS_IO_WAIT) {
            (*short_writes)++;
            if (!wait_for(c->fd, want, deadline))
                return false;
            continue;
        }
        if (moved <= 0)
            return false;
        if ((size_t)moved < n)
            (*short_writes)++;
        data += moved;
        n -= (size_t)moved;
    }
    return true;
}

/* Reads exactly n bytes within the deadline; the last tls_read result when it fails. */
static ssize_t read_exactly(client_t *c, char *buf, size_t n, long deadline)
{
    size_t got = 0;
    while (got < n) {
        tls_want_t want = 0;
        ssize_t r = tls_read(c->session, buf + got, n - got, &want);
        if (r == TLS_IO_WAIT) {
            if (!wait_for(c->fd, want, deadline))
                return TLS_IO_WAIT;
            continue;
        }
        if (r <= 0)
            return r;
        got += (size_t)r;
    }
    return (ssize_t)got;
}

/* Sends `command` (RESP) and reads back exactly `reply`; true when it came. */
static bool round_trip(client_t *c, const char *command, size_t command_length, const char *reply)
{
    if (!c->session)
        return false;
    long deadline = tests_monotonic_ms() + TIMEOUT_MS;
    int short_writes = 0;
    if (!write_all(c, command, command_length, deadline, &short_writes))
        return false;
    char got[64];
    size_t n = strlen(reply);
    return n < sizeof got && read_exactly(c, got, n, deadline) == (ssize_t)n && !memcmp(got, reply, n);
}

static const char ping_command[] = "*1\r\n$4\r\nPING\r\n";

static bool ping(client_t *c) { return round_trip(c, ping_command, strlen(ping_command), "+PONG\r\n"); }

/* A session to one of the suite's servers with ca.crt trusted (plus what cfg sets). */
static bool open_to(client_t *c, server_id_t id, tls_config_t cfg, const char *host)
{
    if (!cfg.ca_file)
        cfg.ca_file = cert_file("ca.crt");
    return client_open(c, &cfg, servers[id].tls_port, host, TIMEOUT_MS);
}

/* Opens a session as open_to() does, expecting a refusal whose reason contains `reason`. */
static void expect_refused(server_id_t id, tls_config_t cfg, const char *host, const char *reason)
{
    client_t c;
    bool opened = open_to(&c, id, cfg, host);
    CU_ASSERT_FALSE(opened);
    CU_ASSERT_PTR_NOT_NULL(c.ctx); /* the context was fine: the handshake refused */
    EXPECT_CONTAINS(c.err, reason);
    client_close(&c);
}

/* Opens a session as open_to() does, expecting it to work and a PING to be answered. */
static void expect_ping(server_id_t id, tls_config_t cfg, const char *host)
{
    client_t c;
    bool opened = open_to(&c, id, cfg, host);
    if (!opened)
        fprintf(stderr, "\nhandshake with %s refused: %s\n", host, c.err);
    CU_ASSERT_TRUE(opened);
    CU_ASSERT_TRUE(ping(&c));
    client_close(&c);
}

static void test_a_good_certificate_is_accepted_by_host_name(void)
{
    expect_ping(SERVER_GOOD, (tls_config_t){ 0 }, "localhost");
}

static void test_a_good_certificate_is_accepted_by_ip_address(void)
{
    expect_ping(SERVER_GOOD, (tls_config_t){ 0 }, "127.0.0.1");
}

static void test_the_server_name_replaces_the_host(void)
{
    expect_ping(SERVER_GOOD, (tls_config_t){ .server_name = "localhost" }, "127.0.0.1");
    expect_refused(SERVER_GOOD, (tls_config_t){ .server_name = "other.example" }, "localhost", "hostname mismatch");
}

static void test_a_certificate_for_another_name_is_refused(void)
{
    expect_refused(SERVER_WRONG_NAME, (tls_config_t){ 0 }, "localhost", "hostname mismatch");
    expect_refused(SERVER_WRONG_NAME, (tls_config_t){ 0 }, "127.0.0.1", "IP address mismatch");
}

static void test_a_certificate_from_an_unknown_ca_is_refused(void)
{
    expect_refused(SERVER_UNKNOWN_CA, (tls_config_t){ 0 }, "localhost", "unable to get local issuer certificate");
    /* The system's CAs (no CA file) do not know the test CA either (redis-server sends it along). */
    expect_refused(SERVER_GOOD, (tls_config_t){ .ca_file = "" }, "localhost", "self-signed certificate in certificate chain");
}

static void test_an_expired_certificate_is_refused(void)
{
    expect_refused(SERVER_EXPIRED, (tls_config_t){ 0 }, "localhost", "certificate has expired");
}

static void test_insecure_no_verify_accepts_any_certificate(void)
{
    tls_config_t insecure = { .insecure_no_verify = true };
    expect_ping(SERVER_WRONG_NAME, insecure, "localhost");
    expect_ping(SERVER_UNKNOWN_CA, insecure, "localhost");
    expect_ping(SERVER_EXPIRED, insecure, "127.0.0.1");
    expect_ping(SERVER_GOOD, (tls_config_t){ .insecure_no_verify = true, .server_name = "other.example" }, "localhost");
}

static void test_mutual_tls_needs_the_client_certificate(void)
{
    client_t c;
    /* TLS 1.3: the client may finish its handshake before the server refuses; the PING must fail either way. */
    bool answered = open_to(&c, SERVER_MUTUAL, (tls_config_t){ 0 }, "localhost") && ping(&c);
    CU_ASSERT_FALSE(answered);
    client_close(&c);
    expect_ping(SERVER_MUTUAL,
                (tls_config_t){ .cert_file = cert_file("client.crt"), .key_file = cert_file("client.key") },
                "localhost");
}

/* tls_context_new(cfg) must fail with an err that contains each of parts (NULL-terminated). */
static void expect_context_refused(tls_config_t cfg, const char *const *parts)
{
    char err[512] = "";
    tls_context_t *ctx = tls_context_new(&cfg, err, sizeof err);
    CU_ASSERT_PTR_NULL(ctx);
    tls_context_free(ctx);
    for (; *parts; parts++)
        EXPECT_CONTAINS(err, *parts);
    CU_ASSERT_PTR_NULL(strstr(err, "-----BEGIN")); /* no key material, ever */
}

static void test_a_key_that_does_not_match_the_certificate_is_refused(void)
{
    char key[PATH_MAX];
    snprintf(key, sizeof key, "%s", cert_file("server.key"));
    expect_context_refused((tls_config_t){ .cert_file = cert_file("client.crt"), .key_file = key },
                           (const char *[]){ key, "does not match", "client.crt", NULL });
}

static void test_a_certificate_and_a_key_go_together(void)
{
    expect_context_refused((tls_config_t){ .cert_file = cert_file("client.crt") },
                           (const char *[]){ "the certificate is set, the key is not", NULL });
    expect_context_refused((tls_config_t){ .cert_file = "", .key_file = cert_file("client.key") },
                           (const char *[]){ "the key is set, the certificate is not", NULL });
}

static void test_a_missing_file_is_named(void)
{
    char missing[PATH_MAX];
    snprintf(missing, sizeof missing, "%s", cert_file("missing.crt"));
    expect_context_refused((tls_config_t){ .ca_file = missing }, (const char *[]){ "CA file", missing, NULL });
    expect_context_refused((tls_config_t){ .cert_file = missing, .key_file = cert_file("client.key") },
                           (const char *[]){ "client certificate", missing, NULL });
    expect_context_refused((tls_config_t){ .cert_file = cert_file("client.crt"), .key_file = missing },
                           (const char *[]){ "client key", missing, NULL });
    /* A file that is there but holds no certificate. */
    expect_context_refused((tls_config_t){ .ca_file = cert_file("ca.key") }, (const char *[]){ "ca.key", NULL });
}

static void test_an_encrypted_key_is_refused_without_asking_for_its_passphrase(void)
{
    expect_context_refused(
        (tls_config_t){ .cert_file = cert_file("client.crt"), .key_file = cert_file("client-encrypted.key") },
        (const char *[]){ "client-encrypted.key", NULL });
}

static void test_a_handshake_nobody_answers_times_out(void)
{
    /* A listener that never accepts: the kernel completes the connection, nobody reads the ClientHello. */
    int listener = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in addr = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
    socklen_t length = sizeof addr;
    CU_ASSERT_FATAL(listener >= 0 && !bind(listener, (struct sockaddr *)&addr, sizeof addr)
                    && !listen(listener, 4) && !getsockname(listener, (struct sockaddr *)&addr, &length));
    client_t c;
    long start = tests_monotonic_ms();
    bool opened = client_open(&c, &(tls_config_t){ .ca_file = cert_file("ca.crt") }, ntohs(addr.sin_port),
                              "localhost", SILENT_TIMEOUT_MS);
    long elapsed = tests_monotonic_ms() - start;
    CU_ASSERT_FALSE(opened);
    EXPECT_CONTAINS(c.err, "TLS handshake timed out");
    CU_ASSERT(elapsed >= SILENT_TIMEOUT_MS - 5);
    CU_ASSERT(elapsed < 5 * SILENT_TIMEOUT_MS);
    client_close(&c);
    close(listener);
}

/* A TLS server of one connection on a thread (OpenSSL's server side, with
 * server.crt), to see the SNI a client sends: redis-server does not tell. */
typedef struct {
    int listener;
    char cert[PATH_MAX], key[PATH_MAX];
    bool handshake_done;
    char sni[256]; /* "" when none came */
} sni_server_t;

static void *sni_server_accept(void *arg)
{
    sni_server_t *server = arg;
    int fd = accept(server->listener, NULL, NULL);
    if (fd < 0)
        return NULL;
    struct timeval limit = { TIMEOUT_MS / 1000, 0 };
    setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &limit, sizeof limit);
    SSL_CTX *ctx = SSL_CTX_new(TLS_server_method());
    SSL *ssl = NULL;
    if (ctx && SSL_CTX_use_certificate_chain_file(ctx, server->cert) == 1
        && SSL_CTX_use_PrivateKey_file(ctx, server->key, SSL_FILETYPE_PEM) == 1 && (ssl = SSL_new(ctx))
        && SSL_set_fd(ssl, fd) == 1 && SSL_accept(ssl) == 1) {
        const char *name = SSL_get_servername(ssl, TLSEXT_NAMETYPE_host_name);
        snprintf(server->sni, sizeof server->sni, "%s", name ? name : "");
        server->handshake_done = true;
    }
    SSL_free(ssl);
    SSL_CTX_free(ctx);
    close(fd);
    return NULL;
}

/* The SNI a session to host (server_name replacing it when set) sends, into sni; false when the handshake failed. */
static bool sni_sent(const char *host, const char *server_name, char *sni, size_t size)
{
    sni_server_t server = { .listener = socket(AF_INET, SOCK_STREAM, 0) };
    snprintf(server.cert, sizeof server.cert, "%s/server.crt", cert_dir);
    snprintf(server.key, sizeof server.key, "%s/server.key", cert_dir);
    struct sockaddr_in addr = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
    socklen_t length = sizeof addr;
    pthread_t thread;
    if (server.listener < 0 || bind(server.listener, (struct sockaddr *)&addr, sizeof addr)
        || listen(server.listener, 1) || getsockname(server.listener, (struct sockaddr *)&addr, &length)
        || pthread_create(&thread, NULL, sni_server_accept, &server)) {
        if (server.listener >= 0)
            close(server.listener);
        return false;
    }
    client_t c;
    bool opened = client_open(&c, &(tls_config_t){ .ca_file = cert_file("ca.crt"), .server_name = server_name },
                              ntohs(addr.sin_port), host, TIMEOUT_MS);
    if (!opened)
        fprintf(stderr, "\nhandshake with %s refused: %s\n", host, c.err);
    client_close(&c);
    pthread_join(thread, NULL);
    close(server.listener);
    snprintf(sni, size, "%s", server.sni);
    return opened && server.handshake_done;
}

static void test_sni_is_sent_for_names_not_for_addresses(void)
{
    char sni[256];
    CU_ASSERT_TRUE(sni_sent("localhost", NULL, sni, sizeof sni));
    CU_ASSERT_STRING_EQUAL(sni, "localhost");
    CU_ASSERT_TRUE(sni_sent("127.0.0.1", NULL, sni, sizeof sni));
    CU_ASSERT_STRING_EQUAL(sni, "");
    CU_ASSERT_TRUE(sni_sent("127.0.0.1", "localhost", sni, sizeof sni));
    CU_ASSERT_STRING_EQUAL(sni, "localhost");
}

/* Waits up to TIMEOUT_MS for fd to be readable. */
static bool becomes_readable(int fd)
{
    struct pollfd p = { .fd = fd, .events = POLLIN };
    return poll(&p, 1, TIMEOUT_MS) > 0;
}

static int local_port(int fd)
{
    struct sockaddr_in addr;
    socklen_t length = sizeof addr;
    return getsockname(fd, (struct sockaddr *)&addr, &length) ? 0 : ntohs(addr.sin_port);
}

/* Kills the server's side of c's connection (CLIENT KILL by its address) and waits for the news. */
static void kill_connection(client_t *c)
{
    redisReply *r = redis_server_command(&servers[SERVER_GOOD], NULL, "CLIENT KILL ADDR 127.0.0.1:%d",
                                         local_port(c->fd));
    CU_ASSERT(r && r->type == REDIS_REPLY_INTEGER && r->integer == 1); /* clients killed */
    if (r)
        freeReplyObject(r);
    CU_ASSERT_TRUE(becomes_readable(c->fd));
}

static void test_session_tickets_are_not_a_close_but_a_killed_connection_is(void)
{
    client_t c;
    CU_ASSERT_TRUE_FATAL(open_to(&c, SERVER_GOOD, (tls_config_t){ 0 }, "localhost"));
    /* TLS 1.3 servers send session tickets after the handshake: records, but no data. */
    CU_ASSERT_TRUE(becomes_readable(c.fd));
    CU_ASSERT_FALSE(tls_closed_while_idle(c.session));
    CU_ASSERT_FALSE(tls_pending(c.session));
    CU_ASSERT_TRUE(ping(&c));
    CU_ASSERT_FALSE(tls_closed_while_idle(c.session));

    kill_connection(&c);
    CU_ASSERT_TRUE(tls_closed_while_idle(c.session));
    char byte;
    tls_want_t want = 0;
    CU_ASSERT_EQUAL(tls_read(c.session, &byte, 1, &want), TLS_IO_CLOSED);
    client_close(&c);
}

static void test_writing_to_a_reset_connection_raises_no_sigpipe(void)
{
    client_t c;
    CU_ASSERT_TRUE_FATAL(open_to(&c, SERVER_GOOD, (tls_config_t){ 0 }, "localhost"));
    CU_ASSERT_TRUE(ping(&c));
    kill_connection(&c);
    /* SIGPIPE as a process that does not ignore it has it, blocked on this thread so that it waits to be seen. */
    struct sigaction default_action = { .sa_handler = SIG_DFL }, saved_action;
    sigemptyset(&default_action.sa_mask);
    sigaction(SIGPIPE, &default_action, &saved_action);
    sigset_t pipe_signal, saved_mask, pending;
    sigemptyset(&pipe_signal);
    sigaddset(&pipe_signal, SIGPIPE);
    pthread_sigmask(SIG_BLOCK, &pipe_signal, &saved_mask);
    /* The first write reaches a closed socket and draws a reset; the next ones fail with ECONNRESET, then EPIPE. */
    ssize_t last = 0;
    for (int i = 0; i < 50 && last != TLS_IO_ERROR; i++) {
        tls_want_t want = 0;
        last = tls_write(c.session, ping_command, strlen(ping_command), &want);
        struct timespec pause = { 0, 10 * 1000000 };
        nanosleep(&pause, NULL);
    }
    CU_ASSERT_EQUAL(last, TLS_IO_ERROR);
    sigpending(&pending);
    bool raised = sigismember(&pending, SIGPIPE);
    CU_ASSERT_FALSE(raised);
    if (raised)
        sigtimedwait(&pipe_signal, NULL, &(struct timespec){ 0, 0 });
    pthread_sigmask(SIG_SETMASK, &saved_mask, NULL);
    sigaction(SIGPIPE, &saved_action, NULL);
    client_close(&c);
}

static void test_a_stopped_server_is_a_close_while_idle(void)
{
    redis_server_t server;
    char paths[2][PATH_MAX];
    CU_ASSERT_TRUE_FATAL(start_tls_server(&server, "server", false, paths));
    client_t c;
    CU_ASSERT_TRUE(client_open(&c, &(tls_config_t){ .ca_file = cert_file("ca.crt") }, server.tls_port,
                               "localhost", TIMEOUT_MS));
    CU_ASSERT_TRUE(ping(&c));
    CU_ASSERT_FALSE(c.session && tls_closed_while_idle(c.session));
    redis_server_stop(&server);
    CU_ASSERT_TRUE(becomes_readable(c.fd));
    CU_ASSERT_TRUE(c.session && tls_closed_while_idle(c.session));
    client_close(&c);
}

static void test_bytes_nobody_asked_for_are_pending_and_not_idle(void)
{
    client_t c;
    CU_ASSERT_TRUE_FATAL(open_to(&c, SERVER_GOOD, (tls_config_t){ 0 }, "localhost"));
    long deadline = tests_monotonic_ms() + TIMEOUT_MS;
    int short_writes = 0;
    CU_ASSERT_TRUE(write_all(&c, ping_command, strlen(ping_command), deadline, &short_writes));
    char first;
    CU_ASSERT_EQUAL(read_exactly(&c, &first, 1, deadline), 1);
    CU_ASSERT_EQUAL(first, '+');
    /* "PONG\r\n" came in the same record: decrypted, waiting, and invisible to poll(). */
    CU_ASSERT_TRUE(tls_pending(c.session));
    struct pollfd p = { .fd = c.fd, .events = POLLIN };
    CU_ASSERT_EQUAL(poll(&p, 1, 0), 0);
    CU_ASSERT_TRUE(tls_closed_while_idle(c.session));
    char rest[6];
    CU_ASSERT_EQUAL(read_exactly(&c, rest, sizeof rest, deadline), (ssize_t)sizeof rest);
    CU_ASSERT_EQUAL(memcmp(rest, "PONG\r\n", sizeof rest), 0);
    CU_ASSERT_FALSE(tls_pending(c.session));
    client_close(&c);
}

static void test_a_large_write_goes_in_parts(void)
{
    enum { VALUE_SIZE = 4 << 20 };
    client_t c;
    CU_ASSERT_TRUE_FATAL(open_to(&c, SERVER_GOOD, (tls_config_t){ 0 }, "localhost"));
    int small = 4096; /* the kernel rounds it up a little: records no longer fit at once */
    setsockopt(c.fd, SOL_SOCKET, SO_SNDBUF, &small, sizeof small);
    char head[64];
    int head_length = snprintf(head, sizeof head, "*3\r\n$3\r\nSET\r\n$5\r\nlarge\r\n$%d\r\n", VALUE_SIZE);
    size_t length = (size_t)head_length + VALUE_SIZE + 2;
    char *command = malloc(length);
    CU_ASSERT_PTR_NOT_NULL_FATAL(command);
    memcpy(command, head, (size_t)head_length);
    for (size_t i = 0; i < VALUE_SIZE; i++)
        command[head_length + i] = (char)('a' + i % 26);
    memcpy(command + head_length + VALUE_SIZE, "\r\n", 2);
    long deadline = tests_monotonic_ms() + 10 * TIMEOUT_MS;
    int short_writes = 0;
    CU_ASSERT_TRUE(write_all(&c, command, length, deadline, &short_writes));
    CU_ASSERT(short_writes > 0);
    char reply[5];
    CU_ASSERT_EQUAL(read_exactly(&c, reply, sizeof reply, deadline), (ssize_t)sizeof reply);
    CU_ASSERT_EQUAL(memcmp(reply, "+OK\r\n", sizeof reply), 0);
    redisReply *r = redis_server_command(&servers[SERVER_GOOD], NULL, "STRLEN large");
    CU_ASSERT(r && r->type == REDIS_REPLY_INTEGER && r->integer == VALUE_SIZE);
    if (r)
        freeReplyObject(r);
    free(command);
    client_close(&c);
}

enum { SHARING_THREADS = 4, SESSIONS_PER_THREAD = 5 };

typedef struct {
    tls_context_t *ctx;
    int answered;
} sharing_t;

static void *use_shared_context(void *arg)
{
    sharing_t *sharing = arg;
    for (int i = 0; i < SESSIONS_PER_THREAD; i++) {
        client_t c = { .fd = connect_loopback(servers[SERVER_MUTUAL].tls_port) };
        if (c.fd < 0)
            continue;
        c.session = tls_session_new(sharing->ctx, c.fd, i % 2 ? "localhost" : "127.0.0.1", TIMEOUT_MS, c.err,
                                    sizeof c.err);
        if (ping(&c))
            sharing->answered++;
        tls_session_free(c.session);
        close(c.fd);
    }
    return NULL;
}

static void test_threads_share_one_context(void)
{
    tls_config_t cfg = { .ca_file = cert_file("ca.crt"), .cert_file = cert_file("client.crt"),
                         .key_file = cert_file("client.key") };
    char err[512];
    tls_context_t *ctx = tls_context_new(&cfg, err, sizeof err);
    CU_ASSERT_PTR_NOT_NULL_FATAL(ctx);
    pthread_t threads[SHARING_THREADS];
    sharing_t sharing[SHARING_THREADS];
    int started = 0;
    for (; started < SHARING_THREADS; started++) {
        sharing[started] = (sharing_t){ .ctx = ctx };
        if (pthread_create(&threads[started], NULL, use_shared_context, &sharing[started]))
            break;
    }
    CU_ASSERT_EQUAL(started, SHARING_THREADS);
    for (int i = 0; i < started; i++) {
        pthread_join(threads[i], NULL);
        CU_ASSERT_EQUAL(sharing[i].answered, SESSIONS_PER_THREAD);
    }
    tls_context_free(ctx);
}

int test_tls_register(void)
{
    CU_pSuite suite = CU_add_suite("tls", suite_init, suite_cleanup);
    if (!suite)
        return CU_get_error();
    CU_add_test(suite, "a good certificate is accepted by host name", test_a_good_certificate_is_accepted_by_host_name);
    CU_add_test(suite, "a good certificate is accepted by IP address", test_a_good_certificate_is_accepted_by_ip_address);
    CU_add_test(suite, "the server name replaces the host", test_the_server_name_replaces_the_host);
    CU_add_test(suite, "a certificate for another name is refused", test_a_certificate_for_another_name_is_refused);
    CU_add_test(suite, "SNI is sent for names, not for addresses", test_sni_is_sent_for_names_not_for_addresses);
    CU_add_test(suite, "a certificate from an unknown CA is refused", test_a_certificate_from_an_unknown_ca_is_refused);
    CU_add_test(suite, "an expired certificate is refused", test_an_expired_certificate_is_refused);
    CU_add_test(suite, "insecure_no_verify accepts any certificate", test_insecure_no_verify_accepts_any_certificate);
    CU_add_test(suite, "mutual TLS needs the client certificate", test_mutual_tls_needs_the_client_certificate);
    CU_add_test(suite, "a key that does not match the certificate is refused",
                test_a_key_that_does_not_match_the_certificate_is_refused);
    CU_add_test(suite, "a certificate and a key go together", test_a_certificate_and_a_key_go_together);
    CU_add_test(suite, "a missing file is named", test_a_missing_file_is_named);
    CU_add_test(suite, "an encrypted key is refused without asking for its passphrase",
                test_an_encrypted_key_is_refused_without_asking_for_its_passphrase);
    CU_add_test(suite, "a handshake nobody answers times out", test_a_handshake_nobody_answers_times_out);
    CU_add_test(suite, "session tickets are not a close, but a killed connection is",
                test_session_tickets_are_not_a_close_but_a_killed_connection_is);
    CU_add_test(suite, "writing to a reset connection raises no SIGPIPE",
                test_writing_to_a_reset_connection_raises_no_sigpipe);
    CU_add_test(suite, "a stopped server is a close while idle", test_a_stopped_server_is_a_close_while_idle);
    CU_add_test(suite, "bytes nobody asked for are pending and not idle",
                test_bytes_nobody_asked_for_are_pending_and_not_idle);
    CU_add_test(suite, "a large write goes in parts", test_a_large_write_goes_in_parts);
    CU_add_test(suite, "threads share one context", test_threads_share_one_context);
    return CU_get_error();
}
