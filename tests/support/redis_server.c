/* Starts, pauses and stops a private redis-server for the tests (see
 * redis_server.h). The child gets no inherited descriptors besides stdio
 * (so client sockets of the test runner are never kept open by it), and
 * PR_SET_PDEATHSIG ends it if the runner dies first. */
#include "redis_server.h"

#include "../../store/store.h"

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

long redis_server_now_ms(void)
{
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    return (long)now.tv_sec * 1000 + now.tv_nsec / 1000000;
}

void redis_server_sleep_ms(long ms)
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

bool redis_server_find_program(const char *name, const char *override_env, char *path, size_t size)
{
    const char *override = override_env ? getenv(override_env) : NULL;
    if (override && *override) {
        snprintf(path, size, "%s", override);
        return is_executable(path);
    }
    const char *dirs = getenv("PATH");
    if (!dirs || !*dirs)
        dirs = "/usr/local/bin:/usr/bin:/bin";
    while (*dirs) {
        size_t length = strcspn(dirs, ":");
        int n = snprintf(path, size, "%.*s/%s", (int)length, length ? dirs : ".", name);
        if (n > 0 && (size_t)n < size && is_executable(path))
            return true;
        dirs += length;
        if (*dirs == ':')
            dirs++;
    }
    return false;
}

/* CHESSD_REDIS_SERVER, or the first redis-server on PATH, into path. */
static bool find_redis_server(char *path, size_t size)
{
    return redis_server_find_program("redis-server", "CHESSD_REDIS_SERVER", path, size);
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

/* Forks and execs path with argv; only async-signal-safe calls in the
 * child. Its stdout and stderr go to output_fd when that is >= 0, else
 * stdout to /dev/null and stderr stays the runner's. 0 on failure (error set). */
static pid_t fork_exec(const char *path, char *const argv[], int output_fd, char *error, size_t error_size)
{
    long max_fd = sysconf(_SC_OPEN_MAX);
    if (max_fd < 0 || max_fd > 65536)
        max_fd = 65536;
    pid_t parent = getpid();
    pid_t pid = fork();
    if (pid < 0) {
        snprintf(error, error_size, "fork: %s", strerror(errno));
        return 0;
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
            dup2(output_fd >= 0 ? output_fd : null_fd, STDOUT_FILENO);
        }
        if (output_fd >= 0)
            dup2(output_fd, STDERR_FILENO);
        for (int fd = 3; fd < max_fd; fd++)
            close(fd);
        execv(path, (char *const *)argv);
        _exit(127);
    }
    return pid;
}

enum { EXTRA_ARGS_MAX = 64 };

/* Starts redis-server on s->port with the defaults and then s->extra_args. */
static bool spawn(redis_server_t *s, const char *path)
{
    char port[16], tls_port[16];
    snprintf(port, sizeof port, "%d", s->port);
    snprintf(tls_port, sizeof tls_port, "%d", s->tls_port);
    char *const defaults[] = {
        (char *)"redis-server", (char *)"--port", port, (char *)"--bind", (char *)"127.0.0.1",
        (char *)"--save", (char *)"", (char *)"--appendonly", (char *)"no", (char *)"--daemonize", (char *)"no",
        (char *)"--dir", (char *)"/tmp", (char *)"--loglevel", (char *)"warning", NULL,
    };
    char *const tls[] = {
        (char *)"--tls-port", tls_port, (char *)"--tls-cert-file", (char *)s->tls.cert_file,
        (char *)"--tls-key-file", (char *)s->tls.key_file, (char *)"--tls-ca-cert-file", (char *)s->tls.ca_file,
        (char *)"--tls-auth-clients", (char *)(s->tls.auth_clients ? "yes" : "no"),
    };
    enum { DEFAULTS = sizeof defaults / sizeof defaults[0] - 1, TLS_ARGS = sizeof tls / sizeof tls[0] };
    char *argv[DEFAULTS + TLS_ARGS + EXTRA_ARGS_MAX + 1];
    size_t argc = 0;
    for (; argc < DEFAULTS; argc++)
        argv[argc] = defaults[argc];
    for (size_t i = 0; s->tls.cert_file && i < TLS_ARGS; i++)
        argv[argc++] = tls[i];
    for (size_t i = 0; s->extra_args && s->extra_args[i]; i++) {
        if (i == EXTRA_ARGS_MAX) {
            snprintf(s->error, sizeof s->error, "more than %d extra redis-server arguments", EXTRA_ARGS_MAX);
            return false;
        }
        argv[argc++] = (char *)s->extra_args[i];
    }
    argv[argc] = NULL;
    pid_t pid = fork_exec(path, argv, -1, s->error, sizeof s->error);
    if (!pid)
        return false;
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
    long deadline = redis_server_now_ms() + START_WAIT_MS;
    while (redis_server_now_ms() < deadline) {
        if (reaped(s))
            return false;
        if (answers_ping(s))
            return true;
        redis_server_sleep_ms(POLL_MS);
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
    long start = redis_server_now_ms();
    bool terminated = false;
    while (!reaped(s)) {
        long elapsed = redis_server_now_ms() - start;
        if (elapsed >= STOP_WAIT_MS) {
            kill(s->pid, SIGKILL);
            waitpid(s->pid, NULL, 0);
            break;
        }
        if (!terminated && (r || elapsed >= STOP_WAIT_MS / 4)) {
            kill(s->pid, SIGTERM); /* with --save "" it exits without writing */
            terminated = true;
        }
        redis_server_sleep_ms(POLL_MS);
    }
    s->pid = 0;
    s->paused = false;
}

void redis_server_kill(redis_server_t *s)
{
    if (!s->pid)
        return;
    kill(s->pid, SIGKILL);
    waitpid(s->pid, NULL, 0);
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

redisReply *redis_server_vcommand(const redis_server_t *s, const char *password, const char *format, va_list args)
{
    redisContext *c = redis_server_connect(s, password);
    if (!c)
        return NULL;
    redisReply *r = redisvCommand(c, format, args);
    redisFree(c);
    return r;
}

redisReply *redis_server_command(const redis_server_t *s, const char *password, const char *format, ...)
{
    va_list args;
    va_start(args, format);
    redisReply *r = redis_server_vcommand(s, password, format, args);
    va_end(args);
    return r;
}

bool redis_server_run_program(const char *path, char *const argv[], const char *output_path, unsigned timeout_ms,
                              char *error, size_t error_size)
{
    int output_fd = -1;
    if (output_path && (output_fd = open(output_path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0600)) < 0) {
        snprintf(error, error_size, "%s: %s", output_path, strerror(errno));
        return false;
    }
    pid_t pid = fork_exec(path, argv, output_fd, error, error_size);
    if (output_fd >= 0)
        close(output_fd);
    if (!pid)
        return false;
    long deadline = redis_server_now_ms() + (long)timeout_ms;
    int status;
    pid_t r;
    while ((r = waitpid(pid, &status, WNOHANG)) == 0 && redis_server_now_ms() < deadline)
        redis_server_sleep_ms(POLL_MS);
    if (r == 0) {
        kill(pid, SIGKILL);
        waitpid(pid, NULL, 0);
        snprintf(error, error_size, "%s did not finish within %u ms", argv[0], timeout_ms);
        return false;
    }
    if (r < 0) {
        snprintf(error, error_size, "waitpid: %s", strerror(errno));
        return false;
    }
    if (WIFEXITED(status) && WEXITSTATUS(status) == 0)
        return true;
    if (WIFEXITED(status))
        snprintf(error, error_size, "%s exited with status %d%s", argv[0], WEXITSTATUS(status),
                 WEXITSTATUS(status) == 127 ? " (exec failed)" : "");
    else
        snprintf(error, error_size, "%s died of signal %d", argv[0], WIFSIGNALED(status) ? WTERMSIG(status) : 0);
    return false;
}

store_t *redis_server_open_store(const char *url, unsigned timeout_ms)
{
    return redis_server_open_store_with_breaker(url, timeout_ms, false);
}

store_t *redis_server_open_store_with_breaker(const char *url, unsigned timeout_ms, bool breaker)
{
    store_config_t cfg = { .connect_timeout_ms = timeout_ms, .command_timeout_ms = timeout_ms, .breaker = breaker };
    snprintf(cfg.url, sizeof cfg.url, "%s", url);
    char err[256] = "";
    store_t *s = store_open(&cfg, err, sizeof err);
    if (!s)
        fprintf(stderr, "\nstore_open(%s): %s\n", url, err);
    return s;
}
