/* A private redis-server for test suites: a child process on a free loopback
 * port, without persistence, started by fork/exec (no shell), with a TLS
 * port beside it on request; it can be paused, resumed, stopped and
 * restarted on the same ports. The owner of a redis_server_t must stop it;
 * the child also dies with the test runner. On failure the reason is in
 * s->error. Extra arguments make other kinds of node (redis_cluster.c). */
#ifndef CHESSD_TESTS_SUPPORT_REDIS_SERVER_H
#define CHESSD_TESTS_SUPPORT_REDIS_SERVER_H

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include <hiredis/hiredis.h>

/* TLS for a test server (tests/tls/make_certs.sh makes the files). The
 * strings are the caller's and must outlive the server. */
typedef struct {
    const char *cert_file;   /* the server's certificate (also its client one toward other nodes) */
    const char *key_file;    /* its key */
    const char *ca_file;     /* the CAs it trusts for client certificates (redis-server requires one) */
    bool auth_clients;       /* tls-auth-clients yes: refuse clients without a certificate from ca_file */
} redis_server_tls_t;

typedef struct {
    pid_t pid;        /* 0 when not running */
    int port;         /* plain TCP; 0 before the first start: a free port is picked */
    bool paused;
    char error[256];  /* why the last call failed */
    /* Set before the first start: with tls.cert_file, redis-server also
     * listens with TLS on tls_port (picked free when 0). The plain port stays
     * open, on loopback, for the harness's own commands (readiness, SHUTDOWN)
     * and the tests' setup. */
    redis_server_tls_t tls;
    int tls_port;
    /* More redis-server arguments after the defaults (a later option wins),
     * NULL-terminated; NULL for none. The strings stay the caller's and must
     * outlive every start. */
    const char *const *extra_args;
} redis_server_t;

/* A zeroed server (no process, port to be picked, no TLS). */
void redis_server_init(redis_server_t *s);

/* Starts redis-server (CHESSD_REDIS_SERVER, or redis-server on PATH) on
 * s->port, or on a free port when it is 0, and waits up to 5 s for PING.
 * False, with s->error set, when it is missing or does not answer. */
bool redis_server_start(redis_server_t *s);

/* SHUTDOWN NOSAVE (SIGKILL when that does not end it within 2 s) and reaps
 * the child. Keeps s->port for a restart. Safe when not running. */
void redis_server_stop(redis_server_t *s);

/* SIGKILL at once (no shutdown, like a crash) and reaps the child. Keeps
 * s->port. Safe when not running. */
void redis_server_kill(redis_server_t *s);

/* SHUTDOWN, then a fresh server on the same port: all data and scripts are gone. */
bool redis_server_restart(redis_server_t *s);

/* SIGSTOP / SIGCONT: a paused server keeps accepting TCP connections
 * (the kernel does) but answers nothing. */
bool redis_server_pause(redis_server_t *s);
bool redis_server_resume(redis_server_t *s);

/* redis://127.0.0.1:<port> into buf. */
void redis_server_url(const redis_server_t *s, char *buf, size_t size);

/* rediss://127.0.0.1:<tls_port> into buf (a server started with TLS). */
void redis_server_tls_url(const redis_server_t *s, char *buf, size_t size);

/* A new hiredis connection to the server with 1 s timeouts (caller frees
 * with redisFree), or NULL. When password is not NULL, AUTH is sent first. */
redisContext *redis_server_connect(const redis_server_t *s, const char *password);

/* Runs one command (printf-style, hiredis format) on a new connection and
 * returns its reply (caller frees with freeReplyObject), or NULL. */
redisReply *redis_server_command(const redis_server_t *s, const char *password, const char *format, ...);
/* The same with a va_list (for wrappers such as redis_cluster_command). */
redisReply *redis_server_vcommand(const redis_server_t *s, const char *password, const char *format, va_list args);

/* The program `name` into path: the file named by the environment variable
 * override_env when that is set (NULL: none), else the first executable
 * `name` on PATH. False when there is none. */
bool redis_server_find_program(const char *name, const char *override_env, char *path, size_t size);

/* Runs the program at path (a tool such as redis-cli) with argv (argv[0]
 * its name, NULL-terminated) to its end, its stdout and stderr appended to
 * output_path (NULL: discarded), killing it after timeout_ms. True when it
 * exited with status 0; else the reason is in error. Same child hygiene as
 * the server (no inherited descriptors, dies with the runner). */
bool redis_server_run_program(const char *path, char *const argv[], const char *output_path, unsigned timeout_ms,
                              char *error, size_t error_size);

/* Milliseconds on the monotonic clock, and a sleep that resumes after signals
 * (for this harness and redis_cluster.c). */
long redis_server_now_ms(void);
void redis_server_sleep_ms(long ms);

struct store;

/* store_open() on url with connect and command timeouts of timeout_ms; NULL
 * (the reason on stderr) when refused. Close with store_close(). */
struct store *redis_server_open_store(const char *url, unsigned timeout_ms);
/* The same, with the store's breaker on when breaker (no trials: only
 * store_probe() brings a node held down back). */
struct store *redis_server_open_store_with_breaker(const char *url, unsigned timeout_ms, bool breaker);

#endif
