/* The UCI driver (uci.h): fork+exec of the engine with two close-on-exec
 * pipes, non-blocking reads split into bounded lines by us, every wait a
 * sock_wait() (store/sock.h) against a clock_now_ms() deadline. Commands are
 * checked byte by byte before they are written (engine_command_ok), and what
 * the engine writes is read by uci_lines.c. After a timeout, a crash or a
 * protocol error the engine is dead until restarted. */
#define _GNU_SOURCE /* pipe2 */
#include "uci.h"
#include "uci_lines.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../../store/sock.h"
#include "../../rules/base/clock.h"

enum {
    DEFAULT_THREADS = 1,
    DEFAULT_HASH_MB = 16,
    DEFAULT_HANDSHAKE_TIMEOUT_MS = 5000,
    DEFAULT_STOP_GRACE_MS = 200,
    /* Added to movetime (or the clock time) when the caller gives no deadline. */
    DEADLINE_MARGIN_MS = 1000,
    QUIT_WAIT_MS = 100,
    ENGINE_NICENESS = 10, /* steps below the caller's priority */
};

struct engine {
    engine_options_t options; /* options.path points at path */
    char *path;
    pid_t pid;                /* -1 when not running */
    int to_engine, from_engine;
    char name[ENGINE_NAME_MAX];
    bool has_wdl, has_chess960, has_multipv;
    bool has_variant;         /* it announced UCI_Variant */
    unsigned variants;        /* engine_variants() */
    int variant;              /* the UCI_Variant set (a variant_t): -1 unknown */
    int chess960;             /* the UCI_Chess960 value set: -1 unknown, 0, 1 */
    int multipv;              /* the MultiPV value set */
    strength_option_t skill, limit_strength, elo; /* Skill Level, UCI_LimitStrength, UCI_Elo */
    char line[ENGINE_LINE_MAX];
    size_t line_length;       /* bytes buffered in line */
    size_t consumed;          /* bytes of the line last returned, to drop on the next read */
};

typedef enum { READ_LINE, READ_TIMEOUT, READ_EOF, READ_TOO_LONG } read_result_t;

static const char *const status_names[ENGINE_STATUS_COUNT] = {
    [ENGINE_OK] = "ok",           [ENGINE_ESTART] = "start",         [ENGINE_ETIMEOUT] = "timeout",
    [ENGINE_ECRASHED] = "crashed", [ENGINE_EGARBAGE] = "garbage",    [ENGINE_ENO_MOVES] = "no_moves",
    [ENGINE_EINVALID] = "invalid", [ENGINE_EBUSY] = "busy",           [ENGINE_EDOWN] = "down",
};

const char *engine_status_name(engine_status_t status)
{
    return (unsigned)status < ENGINE_STATUS_COUNT ? status_names[status] : "unknown";
}

static engine_status_t fail(engine_status_t status, char *err, size_t err_size, const char *format, ...)
    __attribute__((format(printf, 4, 5)));
static engine_status_t fail(engine_status_t status, char *err, size_t err_size, const char *format, ...)
{
    if (err && err_size) {
        va_list ap;
        va_start(ap, format);
        vsnprintf(err, err_size, format, ap);
        va_end(ap);
    }
    return status;
}

bool engine_option_ok(const char *value, size_t length)
{
    if (!value || length == 0)
        return false;
    for (size_t i = 0; i < length; i++) {
        if (value[i] < 0x20 || value[i] > 0x7e)
            return false;
    }
    return true;
}

bool engine_command_ok(const char *text, size_t length)
{
    return text && length >= 2 && text[length - 1] == '\n' && engine_option_ok(text, length - 1);
}

bool engine_alive(const engine_t *e)
{
    return e && e->pid > 0;
}

pid_t engine_pid(const engine_t *e)
{
    return e && e->pid > 0 ? e->pid : -1;
}

const char *engine_name(const engine_t *e)
{
    return e ? e->name : "";
}

/* Kills the process group, reaps the child and closes the pipes. */
static void engine_kill(engine_t *e)
{
    if (e->pid > 0) {
        kill(-e->pid, SIGKILL);
        kill(e->pid, SIGKILL);
        while (waitpid(e->pid, NULL, 0) < 0 && errno == EINTR) {
        }
        e->pid = -1;
    }
    if (e->to_engine >= 0)
        close(e->to_engine);
    if (e->from_engine >= 0)
        close(e->from_engine);
    e->to_engine = e->from_engine = -1;
    e->line_length = e->consumed = 0;
}

/* Writes one command (text must end with its only newline) by the deadline. */
static engine_status_t write_command(engine_t *e, const char *text, size_t length, uint64_t deadline, char *err,
                                     size_t err_size)
{
    if (!engine_command_ok(text, length))
        return fail(ENGINE_EINVALID, err, err_size,
                    "refused to send a command that is not one line of printable ASCII");
    if (!engine_alive(e))
        return fail(ENGINE_ECRASHED, err, err_size, "the engine is not running");
    size_t done = 0;
    while (done < length) {
        ssize_t n = write(e->to_engine, text + done, length - done);
        if (n > 0) {
            done += (size_t)n;
            continue;
        }
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
            if (!sock_wait(e->to_engine, POLLOUT, (int64_t)deadline))
                return fail(ENGINE_ETIMEOUT, err, err_size, "the engine took no input by the deadline");
            continue;
        }
        return fail(ENGINE_ECRASHED, err, err_size, "writing to the engine: %s", strerror(n < 0 ? errno : EPIPE));
    }
    return ENGINE_OK;
}

static engine_status_t send_format(engine_t *e, uint64_t deadline, char *err, size_t err_size, const char *format,
                                   ...) __attribute__((format(printf, 5, 6)));
static engine_status_t send_format(engine_t *e, uint64_t deadline, char *err, size_t err_size, const char *format,
                                   ...)
{
    char text[256];
    va_list ap;
    va_start(ap, format);
    int n = vsnprintf(text, sizeof text - 1, format, ap);
    va_end(ap);
    if (n < 0 || (size_t)n >= sizeof text - 1)
        return fail(ENGINE_EINVALID, err, err_size, "a command too long for the engine");
    text[n] = '\n';
    return write_command(e, text, (size_t)n + 1, deadline, err, err_size);
}

/* "setoption name N value V", V checked by engine_option_ok. */
static engine_status_t set_option(engine_t *e, const char *name, const char *value, uint64_t deadline, char *err,
                                  size_t err_size)
{
    if (!engine_option_ok(name, strlen(name)) || !engine_option_ok(value, strlen(value)))
        return fail(ENGINE_EINVALID, err, err_size, "refused an option name or value that is not printable ASCII");
    return send_format(e, deadline, err, err_size, "setoption name %s value %s", name, value);
}

/* The next line from the engine, NUL-terminated and without its newline (or
 * "\r\n"), valid until the next call. */
static read_result_t read_line(engine_t *e, uint64_t deadline, char **line)
{
    if (e->consumed) {
        memmove(e->line, e->line + e->consumed, e->line_length - e->consumed);
        e->line_length -= e->consumed;
        e->consumed = 0;
    }
    for (;;) {
        char *newline = memchr(e->line, '\n', e->line_length);
        if (newline) {
            e->consumed = (size_t)(newline - e->line) + 1;
            *newline = '\0';
            if (newline > e->line && newline[-1] == '\r')
                newline[-1] = '\0';
            *line = e->line;
            return READ_LINE;
        }
        if (e->line_length >= sizeof e->line)
            return READ_TOO_LONG;
        ssize_t n = read(e->from_engine, e->line + e->line_length, sizeof e->line - e->line_length);
        if (n > 0) {
            e->line_length += (size_t)n;
            continue;
        }
        if (n == 0)
            return READ_EOF;
        if (errno == EINTR)
            continue;
        if (errno != EAGAIN && errno != EWOULDBLOCK)
            return READ_EOF;
        if (!sock_wait(e->from_engine, POLLIN, (int64_t)deadline))
            return READ_TIMEOUT; /* (a poll() error comes back as true: the next read() reports it) */
    }
}

/* The status a failed read means, the engine killed; err says what failed. */
static engine_status_t read_failure(engine_t *e, read_result_t r, const char *waiting_for, char *err,
                                    size_t err_size)
{
    engine_kill(e);
    switch (r) {
    case READ_TIMEOUT:
        return fail(ENGINE_ETIMEOUT, err, err_size, "no %s from the engine by the deadline", waiting_for);
    case READ_TOO_LONG:
        return fail(ENGINE_EGARBAGE, err, err_size, "a line longer than %d bytes from the engine", ENGINE_LINE_MAX);
    default:
        return fail(ENGINE_ECRASHED, err, err_size, "the engine exited waiting for %s", waiting_for);
    }
}

/* Whether line is word, or starts with word and a space. */
static bool starts_with_word(const char *line, const char *word)
{
    size_t n = strlen(word);
    return !strncmp(line, word, n) && (line[n] == '\0' || line[n] == ' ');
}

/* "isready" and waits for "readyok"; the engine killed on failure. */
static engine_status_t sync_ready(engine_t *e, char *err, size_t err_size)
{
    uint64_t deadline = clock_now_ms() + (uint64_t)e->options.handshake_timeout_ms;
    engine_status_t s = send_format(e, deadline, err, err_size, "isready");
    if (s != ENGINE_OK) {
        engine_kill(e);
        return s;
    }
    for (;;) {
        char *line;
        read_result_t r = read_line(e, deadline, &line);
        if (r != READ_LINE)
            return read_failure(e, r, "readyok", err, err_size);
        if (!strcmp(line, "readyok"))
            return ENGINE_OK;
    }
}

/* Closes every descriptor from first up, in the child (async-signal-safe). */
static void close_descriptors_from(unsigned first)
{
#ifdef SYS_close_range
    if (syscall(SYS_close_range, first, ~0u, 0u) == 0)
        return;
#endif
    long max = sysconf(_SC_OPEN_MAX);
    if (max < 0 || max > 65536)
        max = 65536;
    for (int fd = (int)first; fd < max; fd++)
        close(fd);
}

/* In the child: own process group, pipes on 0 and 1,
 * /dev/null on 2, nothing else open, default signals; then exec. On failure
 * writes errno to report and exits. */
static void child_exec(const char *path, int in, int out, int report)
{
    setpgid(0, 0);
    int null = open("/dev/null", O_WRONLY);
    if (dup2(in, 0) < 0 || dup2(out, 1) < 0 || null < 0 || dup2(null, 2) < 0)
        goto failed;
    if (dup2(report, 3) < 0)
        goto failed;
    /* the close-on-exec report pipe is kept on 3 until exec closes it */
    if (fcntl(3, F_SETFD, FD_CLOEXEC) < 0)
        goto failed;
    close_descriptors_from(4);
    struct sigaction dfl;
    memset(&dfl, 0, sizeof dfl);
    dfl.sa_handler = SIG_DFL;
    sigaction(SIGPIPE, &dfl, NULL);
    sigset_t none;
    sigemptyset(&none);
    sigprocmask(SIG_SETMASK, &none, NULL);
    char *const argv[] = {(char *)path, NULL};
    execv(path, argv);
failed:;
    int code = errno;
    if (write(3, &code, sizeof code) < 0) {
        /* nothing more to do */
    }
    _exit(127);
}

static void close_pair(int fds[2])
{
    for (int i = 0; i < 2; i++) {
        if (fds[i] >= 0)
            close(fds[i]);
        fds[i] = -1;
    }
}

/* Forks and execs the engine; its pipes into e. */
static engine_status_t spawn(engine_t *e, char *err, size_t err_size)
{
    int in[2] = {-1, -1}, out[2] = {-1, -1}, report[2] = {-1, -1};
    if (pipe2(in, O_CLOEXEC) < 0 || pipe2(out, O_CLOEXEC) < 0 || pipe2(report, O_CLOEXEC) < 0) {
        int code = errno;
        close_pair(in);
        close_pair(out);
        close_pair(report);
        return fail(ENGINE_ESTART, err, err_size, "pipe: %s", strerror(code));
    }
    pid_t pid = fork();
    if (pid < 0) {
        int code = errno;
        close_pair(in);
        close_pair(out);
        close_pair(report);
        return fail(ENGINE_ESTART, err, err_size, "fork: %s", strerror(code));
    }
    if (pid == 0)
        child_exec(e->path, in[0], out[1], report[1]);
    setpgid(pid, pid); /* either side may win the race; both ask for the same */
    /* A lower priority, set from here: the child calls only async-signal-safe
     * functions before exec. (A priority that cannot be lowered is no reason
     * not to run.) */
    errno = 0;
    int priority = getpriority(PRIO_PROCESS, 0);
    if (errno == 0 && setpriority(PRIO_PROCESS, (id_t)pid, priority + ENGINE_NICENESS) < 0) {
        /* ignored, as said */
    }
    close(in[0]);
    close(out[1]);
    close(report[1]);
    e->pid = pid;
    e->to_engine = in[1];
    e->from_engine = out[0];
    int code = 0;
    ssize_t n;
    while ((n = read(report[0], &code, sizeof code)) < 0 && errno == EINTR) {
    }
    close(report[0]);
    if (n > 0) {
        engine_kill(e);
        return fail(ENGINE_ESTART, err, err_size, "cannot run %s: %s", e->path, strerror(code));
    }
    if (fcntl(e->to_engine, F_SETFL, O_NONBLOCK) < 0 || fcntl(e->from_engine, F_SETFL, O_NONBLOCK) < 0) {
        code = errno;
        engine_kill(e);
        return fail(ENGINE_ESTART, err, err_size, "fcntl: %s", strerror(code));
    }
    return ENGINE_OK;
}

unsigned engine_variants(const engine_t *e)
{
    return e ? e->variants : 0;
}

/* Reads "option name X type ..." lines and "id name"; stops at uciok. */
static void note_handshake_line(engine_t *e, const char *line)
{
    static const char skill[] = "option name Skill Level ", limit[] = "option name UCI_LimitStrength ",
                      elo[] = "option name UCI_Elo ";
    if (!strncmp(line, skill, sizeof skill - 1)) {
        uci_lines_strength_option(&e->skill, line + sizeof skill - 1);
    } else if (!strncmp(line, limit, sizeof limit - 1)) {
        uci_lines_strength_option(&e->limit_strength, line + sizeof limit - 1);
    } else if (!strncmp(line, elo, sizeof elo - 1)) {
        uci_lines_strength_option(&e->elo, line + sizeof elo - 1);
    } else if (starts_with_word(line, "id") && !strncmp(line, "id name ", 8)) {
        snprintf(e->name, sizeof e->name, "%s", line + 8);
    } else if (!strncmp(line, "option name UCI_ShowWDL ", 24)) {
        e->has_wdl = true;
    } else if (!strncmp(line, "option name UCI_Chess960 ", 25)) {
        e->has_chess960 = true;
    } else if (!strncmp(line, "option name MultiPV ", 20)) {
        e->has_multipv = true;
    } else if (!strncmp(line, "option name UCI_Variant ", 24)) {
        e->has_variant = true;
        e->variants |= engine_variants_announced(line);
    }
}

/* Spawns the engine and runs "uci" ... "uciok", the options, "isready". */
static engine_status_t boot(engine_t *e, char *err, size_t err_size)
{
    e->name[0] = '\0';
    e->has_wdl = e->has_chess960 = e->has_multipv = e->has_variant = false;
    e->variants = 1u << VARIANT_STANDARD; /* every UCI engine plays chess */
    e->variant = -1;
    e->chess960 = -1;
    e->multipv = 1;
    e->skill = e->limit_strength = e->elo = (strength_option_t){.announced = false};
    e->line_length = e->consumed = 0;
    engine_status_t s = spawn(e, err, err_size);
    if (s != ENGINE_OK)
        return s;
    uint64_t deadline = clock_now_ms() + (uint64_t)e->options.handshake_timeout_ms;
    s = send_format(e, deadline, err, err_size, "uci");
    for (;;) {
        if (s != ENGINE_OK)
            break;
        char *line;
        read_result_t r = read_line(e, deadline, &line);
        if (r != READ_LINE) {
            read_failure(e, r, "uciok", err, err_size);
            return ENGINE_ESTART;
        }
        if (!strcmp(line, "uciok"))
            break;
        note_handshake_line(e, line);
    }
    char value[32];
    snprintf(value, sizeof value, "%d", e->options.threads);
    if (s == ENGINE_OK)
        s = set_option(e, "Threads", value, deadline, err, err_size);
    snprintf(value, sizeof value, "%d", e->options.hash_mb);
    if (s == ENGINE_OK)
        s = set_option(e, "Hash", value, deadline, err, err_size);
    if (s == ENGINE_OK && e->has_wdl)
        s = set_option(e, "UCI_ShowWDL", "true", deadline, err, err_size);
    if (s == ENGINE_OK) /* an engine whose defaults are weaker starts at full strength too */
        s = engine_set_strength(e, &(engine_strength_t){0}, err, err_size);
    if (s == ENGINE_OK)
        s = sync_ready(e, err, err_size);
    if (s != ENGINE_OK) {
        engine_kill(e);
        return ENGINE_ESTART;
    }
    return ENGINE_OK;
}

engine_t *engine_start(const engine_options_t *opt, engine_status_t *status, char *err, size_t err_size)
{
    engine_status_t ignored;
    if (!status)
        status = &ignored;
    if (!opt || !opt->path || !*opt->path) {
        *status = fail(ENGINE_EINVALID, err, err_size, "no engine path");
        return NULL;
    }
    engine_options_t o = *opt;
    if (o.threads == 0)
        o.threads = DEFAULT_THREADS;
    if (o.hash_mb == 0)
        o.hash_mb = DEFAULT_HASH_MB;
    if (o.handshake_timeout_ms == 0)
        o.handshake_timeout_ms = DEFAULT_HANDSHAKE_TIMEOUT_MS;
    if (o.stop_grace_ms == 0)
        o.stop_grace_ms = DEFAULT_STOP_GRACE_MS;
    if (o.threads < 1 || o.threads > ENGINE_THREADS_MAX || o.hash_mb < 1 || o.hash_mb > ENGINE_HASH_MAX_MB ||
        o.handshake_timeout_ms < 1 || o.stop_grace_ms < 1) {
        *status = fail(ENGINE_EINVALID, err, err_size, "engine options out of range");
        return NULL;
    }
    engine_t *e = calloc(1, sizeof *e);
    char *path = strdup(o.path);
    if (!e || !path) {
        free(e);
        free(path);
        *status = fail(ENGINE_ESTART, err, err_size, "out of memory");
        return NULL;
    }
    e->path = path;
    e->options = o;
    e->options.path = e->path;
    e->pid = -1;
    e->to_engine = e->from_engine = -1;
    *status = boot(e, err, err_size);
    if (*status != ENGINE_OK) {
        engine_free(e);
        return NULL;
    }
    return e;
}

engine_status_t engine_restart(engine_t *e, char *err, size_t err_size)
{
    if (!e)
        return fail(ENGINE_EINVALID, err, err_size, "no engine");
    engine_kill(e);
    return boot(e, err, err_size);
}

void engine_free(engine_t *e)
{
    if (!e)
        return;
    if (engine_alive(e)) {
        int64_t deadline = clock_now_ms() + QUIT_WAIT_MS;
        if (send_format(e, deadline, NULL, 0, "quit") == ENGINE_OK) {
            while (clock_now_ms() < deadline) {
                pid_t done = waitpid(e->pid, NULL, WNOHANG);
                if (done == e->pid) {
                    e->pid = -1;
                    break;
                }
                if (done < 0 && errno != EINTR)
                    break;
                struct timespec pause = {0, 2 * 1000000L};
                nanosleep(&pause, NULL);
            }
        }
    }
    engine_kill(e); /* the whole process group, if quit did not end it */
    free(e->path);
    free(e);
}

engine_status_t engine_new_game(engine_t *e, bool chess960, char *err, size_t err_size)
{
    if (!e)
        return fail(ENGINE_EINVALID, err, err_size, "no engine");
    if (!engine_alive(e))
        return fail(ENGINE_ECRASHED, err, err_size, "the engine is not running");
    uint64_t deadline = clock_now_ms() + (uint64_t)e->options.handshake_timeout_ms;
    engine_status_t s = ENGINE_OK;
    if (e->chess960 != (int)chess960) {
        s = set_option(e, "UCI_Chess960", chess960 ? "true" : "false", deadline, err, err_size);
        if (s == ENGINE_OK)
            e->chess960 = chess960;
    }
    if (s == ENGINE_OK)
        s = send_format(e, deadline, err, err_size, "ucinewgame");
    if (s != ENGINE_OK) {
        engine_kill(e);
        return s;
    }
    return sync_ready(e, err, err_size);
}

/* Sends "setoption name <name> value <value>" unless the engine did not
 * announce the option or already holds that value (clamped to its range). */
static engine_status_t set_strength_option(engine_t *e, strength_option_t *o, const char *name, int value,
                                           uint64_t deadline, char *err, size_t err_size)
{
    if (!o->announced)
        return ENGINE_OK;
    if (value < o->min)
        value = o->min;
    if (value > o->max)
        value = o->max;
    if (o->value == value)
        return ENGINE_OK;
    char text[16];
    snprintf(text, sizeof text, "%d", value);
    engine_status_t s = set_option(e, name, o->check ? (value ? "true" : "false") : text, deadline, err, err_size);
    if (s == ENGINE_OK)
        o->value = value;
    return s;
}

engine_status_t engine_set_strength(engine_t *e, const engine_strength_t *strength, char *err, size_t err_size)
{
    if (!e || !strength)
        return fail(ENGINE_EINVALID, err, err_size, "no engine or strength");
    if (strength->skill_level < 0 || strength->skill_level > ENGINE_SKILL_MAX)
        return fail(ENGINE_EINVALID, err, err_size, "a skill level must be 0..%d", ENGINE_SKILL_MAX);
    if (strength->limit_strength && (strength->uci_elo < 1 || strength->uci_elo > ENGINE_ELO_MAX))
        return fail(ENGINE_EINVALID, err, err_size, "a UCI_Elo must be 1..%d", ENGINE_ELO_MAX);
    if (!engine_alive(e))
        return fail(ENGINE_ECRASHED, err, err_size, "the engine is not running");
    uint64_t deadline = clock_now_ms() + (uint64_t)e->options.handshake_timeout_ms;
    /* full strength is the top of the engine's own range */
    bool full = strength->skill_level == 0 || strength->skill_level == ENGINE_SKILL_MAX;
    int skill = full ? e->skill.max : strength->skill_level;
    engine_status_t s = set_strength_option(e, &e->skill, "Skill Level", skill, deadline, err, err_size);
    if (s == ENGINE_OK && strength->limit_strength)
        s = set_strength_option(e, &e->elo, "UCI_Elo", strength->uci_elo, deadline, err, err_size);
    if (s == ENGINE_OK)
        s = set_strength_option(e, &e->limit_strength, "UCI_LimitStrength", strength->limit_strength, deadline,
                                err, err_size);
    if (s != ENGINE_OK)
        engine_kill(e);
    return s;
}

engine_status_t engine_format_position(const position_t *start, const move_t *moves, int move_count,
                                       buf_t *command, position_t *reached, char *err, size_t err_size)
{
    if (!start || !command || move_count < 0 || (move_count > 0 && !moves))
        return fail(ENGINE_EINVALID, err, err_size, "no position");
    position_t pos = *start;
    char fen[FEN_BUFFER_SIZE];
    buf_puts(command, "position fen ");
    buf_puts(command, fen_format(&pos, fen, sizeof fen));
    if (move_count > 0)
        buf_puts(command, " moves");
    for (int i = 0; i < move_count; i++) {
        if (!movegen_is_legal(&pos, moves[i]))
            return fail(ENGINE_EINVALID, err, err_size, "move %d of the list is not legal", i + 1);
        char text[UCI_BUFFER_SIZE];
        buf_putc(command, ' ');
        buf_puts(command, uci_format(&pos, moves[i], text));
        position_undo_t undo;
        position_make(&pos, moves[i], &undo);
    }
    buf_putc(command, '\n');
    if (buf_failed(command))
        return fail(ENGINE_EINVALID, err, err_size, "out of memory");
    if (reached)
        *reached = pos;
    return ENGINE_OK;
}

/* Checks limits and works out the deadline. */
static engine_status_t check_limits(const engine_limits_t *limits, const position_t *pos, int *multipv,
                                    uint64_t *deadline, char *err, size_t err_size)
{
    if (!limits)
        return fail(ENGINE_EINVALID, err, err_size, "no limits");
    if (limits->depth < 0 || limits->depth > 245 || limits->movetime_ms < 0 || limits->multipv < 0 ||
        limits->multipv > ENGINE_MULTIPV_MAX ||
        (limits->has_clock && (limits->wtime_ms < 0 || limits->btime_ms < 0 || limits->winc_ms < 0 ||
                               limits->binc_ms < 0 || limits->movestogo < 0)))
        return fail(ENGINE_EINVALID, err, err_size, "search limits out of range");
    if (!limits->depth && !limits->nodes && !limits->movetime_ms && !limits->has_clock)
        return fail(ENGINE_EINVALID, err, err_size, "a search needs a depth, nodes, movetime or clock");
    *multipv = limits->multipv ? limits->multipv : 1;
    *deadline = limits->deadline_ms;
    if (*deadline == 0) {
        long budget = limits->movetime_ms;
        if (!budget && limits->has_clock)
            budget = pos->side_to_move == WHITE ? limits->wtime_ms : limits->btime_ms;
        if (!budget)
            return fail(ENGINE_EINVALID, err, err_size, "a depth or nodes search needs a deadline");
        *deadline = clock_now_ms() + (uint64_t)budget + DEADLINE_MARGIN_MS;
    }
    return ENGINE_OK;
}

/* Writes "go" with the limits. */
static engine_status_t send_go(engine_t *e, const engine_limits_t *limits, uint64_t deadline, char *err,
                               size_t err_size)
{
    buf_t go;
    buf_init(&go);
    buf_puts(&go, "go");
    if (limits->depth)
        buf_printf(&go, " depth %d", limits->depth);
    if (limits->nodes)
        buf_printf(&go, " nodes %llu", (unsigned long long)limits->nodes);
    if (limits->movetime_ms)
        buf_printf(&go, " movetime %d", limits->movetime_ms);
    if (limits->has_clock)
        buf_printf(&go, " wtime %ld btime %ld winc %ld binc %ld", limits->wtime_ms, limits->btime_ms,
                   limits->winc_ms, limits->binc_ms);
    if (limits->has_clock && limits->movestogo > 0)
        buf_printf(&go, " movestogo %d", limits->movestogo);
    buf_putc(&go, '\n');
    engine_status_t s = buf_failed(&go) ? fail(ENGINE_EINVALID, err, err_size, "out of memory")
                                        : write_command(e, go.data, go.length, deadline, err, err_size);
    buf_free(&go);
    return s;
}

/* Sends "setoption name UCI_Variant value <its engine name>" when v is not
 * the variant the engine holds (an engine without the option plays only
 * chess, which engine_search has checked). */
static engine_status_t set_variant(engine_t *e, variant_t v, uint64_t deadline, char *err, size_t err_size)
{
    if (!e->has_variant || e->variant == (int)v)
        return ENGINE_OK;
    engine_status_t s = set_option(e, "UCI_Variant", variant_rules(v)->engine, deadline, err, err_size);
    if (s == ENGINE_OK)
        e->variant = (int)v;
    return s;
}

/* Reads info lines and the bestmove; on the deadline sends "stop" and waits
 * the grace. */
static engine_status_t read_search(engine_t *e, const position_t *pos, int multipv, uint64_t deadline,
                                   engine_result_t *out, char *err, size_t err_size)
{
    for (;;) {
        char *line;
        read_result_t r = read_line(e, deadline, &line);
        if (r == READ_TIMEOUT && !out->stopped) {
            out->stopped = true;
            deadline = clock_now_ms() + (uint64_t)e->options.stop_grace_ms;
            engine_status_t s = send_format(e, deadline, err, err_size, "stop");
            if (s != ENGINE_OK) {
                engine_kill(e);
                return s;
            }
            continue;
        }
        if (r != READ_LINE)
            return read_failure(e, r, "bestmove", err, err_size);
        if (starts_with_word(line, "info"))
            uci_lines_info(pos, line, multipv, out);
        else if (starts_with_word(line, "bestmove")) {
            engine_status_t s = uci_lines_bestmove(pos, line, out, err, err_size);
            if (s != ENGINE_OK)
                engine_kill(e);
            return s;
        }
    }
}

engine_status_t engine_search(engine_t *e, const position_t *start, const move_t *moves, int move_count,
                              const engine_limits_t *limits, engine_result_t *out, char *err, size_t err_size)
{
    if (!e || !start || !out)
        return fail(ENGINE_EINVALID, err, err_size, "no engine, position or result");
    memset(out, 0, sizeof *out);
    buf_t command;
    buf_init(&command);
    position_t pos;
    engine_status_t s = engine_format_position(start, moves, move_count, &command, &pos, err, err_size);
    int multipv = 1;
    uint64_t deadline = 0;
    if (s == ENGINE_OK)
        s = check_limits(limits, &pos, &multipv, &deadline, err, err_size);
    /* A finished position never reaches the engine (one kills Fairy-Stockfish 11.1). */
    if (s == ENGINE_OK && movegen_count(&pos) == 0)
        s = fail(ENGINE_ENO_MOVES, err, err_size, "the position has no legal move");
    if (s == ENGINE_OK && !(e->variants & (1u << pos.variant)))
        s = fail(ENGINE_EINVALID, err, err_size, "the engine does not play %s", variant_rules((variant_t)pos.variant)->key);
    if (s == ENGINE_OK && !engine_alive(e))
        s = fail(ENGINE_ECRASHED, err, err_size, "the engine is not running");
    if (s != ENGINE_OK) {
        buf_free(&command);
        return s;
    }
    s = set_variant(e, (variant_t)pos.variant, deadline, err, err_size);
    if (s == ENGINE_OK && e->chess960 != (int)pos.chess960) {
        s = set_option(e, "UCI_Chess960", pos.chess960 ? "true" : "false", deadline, err, err_size);
        if (s == ENGINE_OK)
            e->chess960 = pos.chess960;
    }
    if (s == ENGINE_OK && e->multipv != multipv) {
        char value[8];
        snprintf(value, sizeof value, "%d", multipv);
        s = set_option(e, "MultiPV", value, deadline, err, err_size);
        if (s == ENGINE_OK)
            e->multipv = multipv;
    }
    if (s == ENGINE_OK)
        s = write_command(e, command.data, command.length, deadline, err, err_size);
    buf_free(&command);
    if (s == ENGINE_OK)
        s = send_go(e, limits, deadline, err, err_size);
    if (s != ENGINE_OK) {
        engine_kill(e);
        return s;
    }
    return read_search(e, &pos, multipv, deadline, out, err, err_size);
}
