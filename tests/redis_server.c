/* Starts, pauses and stops a private redis-server for the tests (see
 * redis_server.h). The child gets no inherited descriptors besides stdio
 * (so client sockets of the test runner are never kept open by it), and
 * PR_SET_PDEATHSIG ends it if the runner dies first. */
#include "redis_server.h"

#include "../store/store.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

enum { START_WAIT_MS = 5000, STOP_WAIT_MS = 2000, POLL_MS = 10, START_ATTEMPTS = 3 };

void redis_server_init(redis_server_t *s) { memset(s, 0, sizeof *s); }

static long now_ms(void)
{
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    return (long)now.tv_sec * 1000 + now.tv_nsec / 1000000;
}

static void sleep_ms(long ms)
{
    struct timespec t = { ms / 1000, (ms % 1000) * 1000000 };
    while (nanosleep(&t, &t) && errno == EINTR) {
    }
}

static bool is_executable(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0 && S_ISREG(st.st_mode) && access(path, X_OK) == 0;
}

/* CHESSD_REDIS_SERVER, or the first redis-server on PATH, into path. */
static bool find_redis_server(char *path, size_t size)
{
    const char *override = getenv("CHESSD_REDIS_SERVER");
    if (override && *override) {
        snprintf(path, size, "%s", override);
        return is_executable(path);
    }
    const char *dirs = getenv("PATH");
    if (!dirs || !*dirs)
        dirs = "/usr/local/bin:/usr/bin:/bin";
    while (*dirs) {
        size_t length = strcspn(dirs, ":");
        int n = snprintf(path, size, "%.*s/redis-server", (int)length, length ? dirs : ".");
        if (n > 0 && (size_t)n < size && is_executable(path))
            return true;
        dirs += length;
        if (*dirs == ':')
            dirs++;
    }
    return false;
}

/* A loopback port nobody listens on right now (0 on failure). Another
 * process could take it before redis-server binds it; start retries. */
static int free_port(void)
{
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    if (fd < 0)
        return 0;
    struct sockaddr_in addr = { .sin_family = AF_INET, .sin_port = 0, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
    socklen_t length = sizeof addr;
    int port = 0;
    if (bind(fd, (struct sockaddr *)&addr, sizeof addr) == 0
        && getsockname(fd, (struct sockaddr *)&addr, &length) == 0)
        port = ntohs(addr.sin_port);
    close(fd);
    return port;
}

enum { ARGV_MAX = 64 };

/* redis-server's arguments for s into argv (ARGV_MAX entries, NULL-terminated;
 * port and tls_port hold the numbers' text); false when they do not fit. */
static bool build_argv(const redis_server_t *s, const char *argv[ARGV_MAX], char port[16], char tls_port[16])
{
    snprintf(port, 16, "%d", s->port);
    snprintf(tls_port, 16, "%d", s->tls_port);
    const char *fixed[] = {
        "redis-server", "--port", port, "--bind", "127.0.0.1", "--save", "", "--appendonly", "no",
        "--daemonize", "no", "--dir", "/tmp", "--loglevel", "warning",
    };
    size_t n = 0;
    for (size_t i = 0; i < sizeof fixed / sizeof fixed[0]; i++)
        argv[n++] = fixed[i];
    if (s->tls.cert_file) {
        const char *tls[] = {
            "--tls-port", tls_port, "--tls-cert-file", s->tls.cert_file, "--tls-key-file", s->tls.key_file,
            "--tls-ca-cert-file", s->tls.ca_file, "--tls-auth-clients", s->tls.auth_clients ? "yes" : "no",
        };
        for (size_t i = 0; i < sizeof tls / sizeof tls[0]; i++)
            argv[n++] = tls[i];
    }
    for (const char *const *extra = s->extra_args; extra && *extra; extra++) {
        if (n + 1 >= ARGV_MAX)
            return false;
        argv[n++] = *extra;
    }
    argv[n] = NULL;
    return true;
}

/* Forks and execs redis-server on s->port; only async-signal-safe calls in the child. */
static bool spawn(redis_server_t *s, const char *path)
{
    char port[16], tls_port[16];
    const char *argv[ARGV_MAX];
    if (!build_argv(s, argv, port, tls_port)) {
        snprintf(s->error, sizeof s->error, "more than %d redis-server arguments", ARGV_MAX - 1);
        return false;
    }
    long max_fd = sysconf(_SC_OPEN_MAX);
    if (max_fd < 0 || max_fd > 65536)
        max_fd = 65536;
    pid_t parent = getpid();
    pid_t pid = fork();
    if (pid < 0) {
        snprintf(s->error, sizeof s->error, "fork: %s", strerror(errno));
        return false;
    }
    if (pid == 0) {
        prctl(PR_SET_PDEATHSIG, SIGKILL);
        if (getppid() != parent)
            _exit(126);
        sigset_t none;
        sigemptyset(&none);
        sigprocmask(SIG_SETMASK, &none, NULL);
        signal(SIGPIPE, SIG_DFL);
        int null_fd = open("/dev/null", O_RDWR);
        if (null_fd >= 0) {
            dup2(null_fd, STDIN_FILENO);
            dup2(null_fd, STDOUT_FILENO);
        }
        for (int fd = 3; fd < max_fd; fd++)
            close(fd);
        execv(path, (char *const *)argv);
        _exit(127);
    }
    s->pid = pid;
    s->paused = false;
    return true;
}

/* True when the child has exited (and is reaped); its status is described in s->error. */
static bool reaped(redis_server_t *s)
{
    int status;
    pid_t r = waitpid(s->pid, &status, WNOHANG);
    if (r == 0)
        return false;
    if (r == s->pid && WIFEXITED(status))
        snprintf(s->error, sizeof s->error, "redis-server on port %d exited with status %d%s", s->port,
                 WEXITSTATUS(status), WEXITSTATUS(status) == 127 ? " (exec failed)" : " (port taken?)");
    else if (r == s->pid && WIFSIGNALED(status))
        snprintf(s->error, sizeof s->error, "redis-server on port %d died of signal %d", s->port, WTERMSIG(status));
    s->pid = 0;
    s->paused = false;
    return true;
}

static bool answers_ping(const redis_server_t *s)
{
    redisReply *r = redis_server_command(s, NULL, "PING");
    bool ok = r && r->type == REDIS_REPLY_STATUS && !strcmp(r->str, "PONG");
    if (r)
        freeReplyObject(r);
    return ok;
}

static bool wait_ready(redis_server_t *s)
{
    long deadline = now_ms() + START_WAIT_MS;
    while (now_ms() < deadline) {
        if (reaped(s))
            return false;
        if (answers_ping(s))
            return true;
        sleep_ms(POLL_MS);
    }
    snprintf(s->error, sizeof s->error, "redis-server on port %d did not answer PING within %d ms", s->port,
             START_WAIT_MS);
    kill(s->pid, SIGKILL);
    waitpid(s->pid, NULL, 0);
    s->pid = 0;
    return false;
}

bool redis_server_start(redis_server_t *s)
{
    s->error[0] = '\0';
    if (s->pid) {
        snprintf(s->error, sizeof s->error, "redis-server already running (pid %d)", (int)s->pid);
        return false;
    }
    char path[PATH_MAX];
    if (!find_redis_server(path, sizeof path)) {
        const char *override = getenv("CHESSD_REDIS_SERVER");
        if (override && *override)
            snprintf(s->error, sizeof s->error, "CHESSD_REDIS_SERVER=%s is not an executable file", override);
        else
            snprintf(s->error, sizeof s->error,
                     "redis-server is not on PATH: install the redis-server package (or set CHESSD_REDIS_SERVER)");
        return false;
    }
    if (s->tls.cert_file && (!s->tls.key_file || !s->tls.ca_file)) {
        snprintf(s->error, sizeof s->error, "redis-server with TLS needs a key file and a CA file");
        return false;
    }
    bool pick_port = s->port == 0, pick_tls_port = s->tls.cert_file && s->tls_port == 0;
    for (int attempt = 0; attempt < (pick_port || pick_tls_port ? START_ATTEMPTS : 1); attempt++) {
        if ((pick_port && !(s->port = free_port())) || (pick_tls_port && !(s->tls_port = free_port()))) {
            snprintf(s->error, sizeof s->error, "no free loopback port: %s", strerror(errno));
            return false;
        }
        if (s->port == s->tls_port) /* free_port() may give the same one twice */
            snprintf(s->error, sizeof s->error, "the plain and TLS ports are both %d", s->port);
        else if (spawn(s, path) && wait_ready(s))
            return true;
        if (pick_port)
            s->port = 0;
        if (pick_tls_port)
            s->tls_port = 0;
    }
    return false;
}

void redis_server_stop(redis_server_t *s)
{
    if (!s->pid)
        return;
    if (s->paused)
        redis_server_resume(s);
    redisReply *r = redis_server_command(s, NULL, "SHUTDOWN NOSAVE");
    if (r)
        freeReplyObject(r); /* an answer means it refused (e.g. NOAUTH): SIGTERM at once */
    long start = now_ms();
    bool terminated = false;
    while (!reaped(s)) {
        long elapsed = now_ms() - start;
        if (elapsed >= STOP_WAIT_MS) {
            kill(s->pid, SIGKILL);
            waitpid(s->pid, NULL, 0);
            break;
        }
        if (!terminated && (r || elapsed >= STOP_WAIT_MS / 4)) {
            kill(s->pid, SIGTERM); /* with --save "" it exits without writing */
            terminated = true;
        }
        sleep_ms(POLL_MS);
    }
    s->pid = 0;
    s->paused = false;
}

bool redis_server_restart(redis_server_t *s)
{
    redis_server_stop(s);
    return redis_server_start(s);
}

bool redis_server_pause(redis_server_t *s)
{
    if (!s->pid || kill(s->pid, SIGSTOP)) {
        snprintf(s->error, sizeof s->error, "cannot pause redis-server: %s", s->pid ? strerror(errno) : "not running");
        return false;
    }
    s->paused = true;
    return true;
}

bool redis_server_resume(redis_server_t *s)
{
    if (!s->pid || kill(s->pid, SIGCONT)) {
        snprintf(s->error, sizeof s->error, "cannot resume redis-server: %s", s->pid ? strerror(errno) : "not running");
        return false;
    }
    s->paused = false;
    return true;
}

void redis_server_url(const redis_server_t *s, char *buf, size_t size)
{
    snprintf(buf, size, "redis://127.0.0.1:%d", s->port);
}

void redis_server_tls_url(const redis_server_t *s, char *buf, size_t size)
{
    snprintf(buf, size, "rediss://127.0.0.1:%d", s->tls_port);
}

redisContext *redis_server_connect(const redis_server_t *s, const char *password)
{
    struct timeval timeout = { 1, 0 };
    redisContext *c = redisConnectWithTimeout("127.0.0.1", s->port, timeout);
    if (!c || c->err || redisSetTimeout(c, timeout) != REDIS_OK) {
        redisFree(c);
        return NULL;
    }
    if (password) {
        redisReply *r = redisCommand(c, "AUTH %s", password);
        bool ok = r && r->type == REDIS_REPLY_STATUS;
        if (r)
            freeReplyObject(r);
        if (!ok) {
            redisFree(c);
            return NULL;
        }
    }
    return c;
}

redisReply *redis_server_command(const redis_server_t *s, const char *password, const char *format, ...)
{
    redisContext *c = redis_server_connect(s, password);
    if (!c)
        return NULL;
    va_list args;
    va_start(args, format);
    redisReply *r = redisvCommand(c, format, args);
    va_end(args);
    redisFree(c);
    return r;
}

store_t *redis_server_open_store(const char *url, unsigned timeout_ms)
{
    store_config_t cfg = { .connect_timeout_ms = timeout_ms, .command_timeout_ms = timeout_ms };
    snprintf(cfg.url, sizeof cfg.url, "%s", url);
    char err[256] = "";
    store_t *s = store_open(&cfg, err, sizeof err);
    if (!s)
        fprintf(stderr, "\nstore_open(%s): %s\n", url, err);
    return s;
}
