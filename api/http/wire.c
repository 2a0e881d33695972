/* See wire.h. One entry per file descriptor, each with its own rules of
 * access (entry_t). Parts: the head and body parser (feed, scan), on_recv
 * and the refusals, the connection's life, on_close and lingering, the
 * deadline thread. on_recv and on_close are the process's recv() and close()
 * while checking runs (interpose.c installs them; wire_start, wire_stop). */
#define _GNU_SOURCE /* POLLRDHUP */
#include "wire.h"
#include "interpose.h"

#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/ioctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "../../rules/base/clock.h"

enum {
    NAME_KEEP = 24,      /* header names this long are compared; longer ones matter to nobody here */
    VALUE_KEEP = 40,     /* Content-Length and Transfer-Encoding values kept for checking */
    ANSWER_MAX = 1024,
    AMPERSANDS_MAX = 64,
    TICK_NS = 100 * 1000 * 1000,
    TABLE_MAX = 1 << 18,
    LINGER_MAX = 256,            /* connections read and dropped at once; more are closed at once */
    LINGER_US = 5 * 1000 * 1000, /* how long a closing connection is read and dropped at most */
    DISCARD_BYTES = 256 * 1024,  /* read and dropped at once before a refusal */
};
/* How much a closing connection may send that is read and dropped. */
#define LINGER_BYTES (16ull << 20)

typedef enum {
    S_REQUEST_START, /* before a request line; empty lines are skipped */
    S_REQUEST_START_LF,
    S_REQUEST_LINE,
    S_REQUEST_LINE_LF,
    S_FIELD_START,
    S_NAME,
    S_VALUE,
    S_VALUE_LF,
    S_HEAD_END_LF,
    S_BODY_FIXED,
    S_CHUNK_SIZE,
    S_CHUNK_EXT,
    S_CHUNK_SIZE_LF,
    S_CHUNK_DATA,
    S_CHUNK_DATA_CR,
    S_CHUNK_DATA_LF,
    S_REFUSED, /* answered (or to be answered) and closing */
} parse_state_t;

typedef enum { FIELD_OTHER, FIELD_HOST, FIELD_CONTENT_LENGTH, FIELD_TRANSFER_ENCODING } field_t;

/* A descriptor's entry. Its parser state is touched only by the thread that
 * serves the connection (inside recv). The deadline and counters are also
 * touched by the deadline thread, under the entry's stripe lock for anything
 * that acts on the descriptor. So a descriptor closed and reused is never
 * shut down by mistake: libmicrohttpd reports the close, which takes the same
 * lock, before it closes the descriptor. A watched descriptor's watcher
 * (closed) is set by the thread that accepted it before anyone else knows
 * the number, and run once by the thread that releases it. */
typedef struct {
    bool active;
    bool http; /* registered since the descriptor was opened: close() may linger */
    /* parser */
    parse_state_t state;
    bool in_trailer;
    unsigned spaces;     /* in the request line */
    unsigned ampersands; /* in the request line: query parameters, roughly */
    char version[9];     /* the request line's last word, when it is 8 characters */
    unsigned version_length;
    char name[NAME_KEEP + 1];
    unsigned name_length;
    char value[VALUE_KEEP + 1];
    unsigned value_length;
    unsigned hosts, lengths, encodings;
    bool chunked;
    uint64_t length, remaining, chunk_digits, body_seen;
    unsigned length_digits; /* of the first Content-Length, leading zeros included */
    char line_head[24];     /* the request line's first bytes */
    unsigned line_head_length;
    bool large;             /* a request of wire_config_t.large_line */
    /* requests whose head went to libmicrohttpd, and those answered */
    atomic_uint heads, answered;
    /* a refusal waiting for earlier answers to go out */
    wire_refusal_t pending_why;
    const char *pending_detail;
    bool pending_owed; /* the refused request's head went on: one answer it will never get */
    atomic_bool pending;
    bool answered_refusal;
    bool peer_closed; /* the client has closed its side */
    /* deadline */
    _Atomic uint64_t deadline_us;
    atomic_bool deadline_is_body;
    /* whom to tell when the descriptor is really closed (wire_watch_close) */
    wire_closed_fn closed;
    void *closed_ctx;
    uint64_t closed_tag;
} entry_t;

typedef struct {
    int fd;
    uint64_t deadline_us;
    uint64_t bytes_left;
} linger_t;

enum { LOCK_STRIPES = 64 };

static struct {
    wire_config_t cfg;
    /* Entry fd is guarded by locks[fd % LOCK_STRIPES]: the table itself is
     * left untouched (zero pages) beyond the descriptors in use. */
    pthread_mutex_t locks[LOCK_STRIPES];
    pthread_mutex_t linger_lock;
    linger_t lingering[LINGER_MAX];
    int linger_count;
    entry_t *table;
    int size;
    atomic_int high; /* one past the highest descriptor seen */
    atomic_bool running;
    pthread_t thread;
    atomic_ullong refused, header_timeouts, body_timeouts;
} wire = { .linger_lock = PTHREAD_MUTEX_INITIALIZER };

static pthread_mutex_t *entry_lock(int fd) { return &wire.locks[fd % LOCK_STRIPES]; }

static entry_t *entry(int fd)
{
    return wire.table && fd >= 0 && fd < wire.size ? &wire.table[fd] : NULL;
}

/* RFC 9110 section 5.6.2: tchar. */
static bool is_tchar(unsigned char c)
{
    if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9'))
        return true;
    return c && strchr("!#$%&'*+-.^_`|~", c) != NULL;
}

/* field-vchar, SP, HTAB, obs-text: anything but controls (NUL, CR, LF ...) and DEL. */
static bool is_value_char(unsigned char c) { return c == '\t' || (c >= 0x20 && c != 0x7f); }

static int hex_digit(unsigned char c)
{
    if (c >= '0' && c <= '9')
        return c - '0';
    c |= 0x20;
    return c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
}

static void start_head(entry_t *e)
{
    e->state = S_REQUEST_START;
    e->in_trailer = false;
    e->spaces = e->ampersands = e->version_length = 0;
    e->hosts = e->lengths = e->encodings = 0;
    e->chunked = false;
    e->length = e->remaining = e->body_seen = 0;
    e->line_head_length = 0;
    e->large = false;
}

/* Whether the request line begins with the large-body requests' words. */
static bool is_large(const entry_t *e)
{
    const char *line = wire.cfg.large_line;
    size_t n = line ? strlen(line) : 0;
    return n && e->line_head_length > n && !memcmp(e->line_head, line, n)
           && (e->line_head[n] == ' ' || e->line_head[n] == '?');
}

static void set_deadline(entry_t *e, uint64_t timeout_us, bool body)
{
    atomic_store(&e->deadline_is_body, body);
    atomic_store(&e->deadline_us, timeout_us ? clock_now_us() + timeout_us : 0);
}

static field_t field_kind(const entry_t *e)
{
    if (e->name_length > NAME_KEEP)
        return FIELD_OTHER;
    if (!strcmp(e->name, "host"))
        return FIELD_HOST;
    if (!strcmp(e->name, "content-length"))
        return FIELD_CONTENT_LENGTH;
    if (!strcmp(e->name, "transfer-encoding"))
        return FIELD_TRANSFER_ENCODING;
    return FIELD_OTHER;
}

/* The value without surrounding whitespace, NUL-terminated in place. */
static const char *trimmed_value(entry_t *e)
{
    unsigned n = e->value_length > VALUE_KEEP ? VALUE_KEEP : e->value_length;
    e->value[n] = '\0';
    while (n > 0 && (e->value[n - 1] == ' ' || e->value[n - 1] == '\t'))
        e->value[--n] = '\0';
    const char *v = e->value;
    while (*v == ' ' || *v == '\t')
        v++;
    return v;
}

/* A header line is complete; NULL or why it is refused. */
static const char *end_field(entry_t *e, wire_refusal_t *why)
{
    if (e->in_trailer)
        return NULL;
    unsigned kept = e->value_length > VALUE_KEEP ? VALUE_KEEP : e->value_length;
    bool trailing_space = kept > 0 && (e->value[kept - 1] == ' ' || e->value[kept - 1] == '\t');
    const char *value = trimmed_value(e);
    switch (field_kind(e)) {
    case FIELD_HOST:
        return ++e->hosts > 1 ? "more than one Host header" : NULL;
    case FIELD_TRANSFER_ENCODING:
        if (++e->encodings > 1)
            return "more than one Transfer-Encoding header";
        /* "chunked " too: libmicrohttpd keeps the trailing whitespace, and
         * httpd.c's framing check would refuse it past this reader. */
        if (e->value_length > VALUE_KEEP || trailing_space || strcasecmp(value, "chunked"))
            return "only the chunked Transfer-Encoding is accepted";
        e->chunked = true;
        return NULL;
    case FIELD_CONTENT_LENGTH: {
        if (e->value_length > VALUE_KEEP || !*value || strspn(value, "0123456789") != strlen(value))
            return "Content-Length must be a decimal number";
        /* A second one must be the same text, as httpd.c's framing check
         * compares them: 2 and 02 are refused here, not past this reader. */
        unsigned digits = (unsigned)strlen(value);
        if (e->lengths && digits != e->length_digits)
            return "conflicting Content-Length headers";
        e->length_digits = digits;
        while (value[0] == '0' && value[1]) /* 0002 is 2, as libmicrohttpd reads it */
            value++;
        /* libmicrohttpd mangles its own answer to a length past 64 bits. */
        if (strlen(value) > 18) {
            *why = WIRE_REFUSE_TOO_LARGE;
            return "the request body is over the limit";
        }
        uint64_t n = strtoull(value, NULL, 10);
        if (e->lengths++ && n != e->length)
            return "conflicting Content-Length headers";
        e->length = n;
        return NULL;
    }
    default:
        return NULL;
    }
}

/* A request is complete: the next byte starts a new one, with no deadline
 * until it comes (the idle timeout covers a quiet connection). */
static void end_body(entry_t *e)
{
    start_head(e);
    set_deadline(e, 0, false);
}

/* The head is complete; NULL or why it is refused. Sets the body state. */
static const char *end_head(entry_t *e)
{
    if (e->chunked && e->lengths)
        return "Content-Length and Transfer-Encoding together";
    if (!e->hosts && e->version_length == 8 && !strcmp(e->version, "HTTP/1.1"))
        return "an HTTP/1.1 request needs a Host header";
    atomic_fetch_add(&e->heads, 1);
    e->large = is_large(e);
    if (e->chunked) {
        e->state = S_CHUNK_SIZE;
        e->chunk_digits = 0;
        e->remaining = 0;
    } else if (e->length > 0) {
        e->state = S_BODY_FIXED;
        e->remaining = e->length;
    } else {
        end_body(e); /* no body */
        return NULL;
    }
    set_deadline(e, e->large ? wire.cfg.large_body_timeout_us : wire.cfg.body_timeout_us, true);
    return NULL;
}

/* Feeds one byte; NULL or why the connection is refused (*why says how). */
static const char *feed(entry_t *e, unsigned char c, wire_refusal_t *why)
{
    *why = WIRE_REFUSE_MALFORMED;
    switch (e->state) {
    case S_REQUEST_START:
        if (c == '\r') {
            e->state = S_REQUEST_START_LF;
            return NULL;
        }
        if (c == '\n')
            return "a line ends in a bare LF; HTTP lines end in CRLF";
        set_deadline(e, wire.cfg.header_timeout_us, false);
        e->state = S_REQUEST_LINE;
        /* fall through */
    case S_REQUEST_LINE:
        if (e->line_head_length < sizeof e->line_head)
            e->line_head[e->line_head_length++] = (char)c;
        if (c == '\r') {
            if (e->spaces != 2)
                return "the request line must be: method, target and version, one space apart";
            /* Other versions are libmicrohttpd's to refuse (505). */
            e->version[e->version_length < sizeof e->version ? e->version_length : 0] = '\0';
            e->state = S_REQUEST_LINE_LF;
            return NULL;
        }
        if (c == ' ') {
            e->spaces++;
            return NULL;
        }
        if (c == '\n')
            return "a line ends in a bare LF; HTTP lines end in CRLF";
        if (c < 0x21 || c == 0x7f)
            return "a control character in the request line";
        /* libmicrohttpd runs out of its per-connection memory on a few
         * hundred parameters and then answers nothing; chessd reads 16. */
        if (c == '&' && ++e->ampersands > AMPERSANDS_MAX)
            return "too many query parameters";
        if (e->spaces == 2 && e->version_length++ < sizeof e->version - 1)
            e->version[e->version_length - 1] = (char)c;
        return NULL;
    case S_REQUEST_START_LF:
        e->state = S_REQUEST_START;
        return c == '\n' ? NULL : "a CR without LF";
    case S_REQUEST_LINE_LF:
    case S_VALUE_LF:
        if (c != '\n')
            return "a CR without LF";
        if (e->state == S_VALUE_LF) {
            const char *problem = end_field(e, why);
            if (problem)
                return problem;
        }
        e->state = S_FIELD_START;
        return NULL;
    case S_FIELD_START:
        if (c == '\r') {
            e->state = S_HEAD_END_LF;
            return NULL;
        }
        if (c == ' ' || c == '\t')
            return "a header line starts with whitespace (obs-fold, RFC 9112 section 5.2)";
        if (!is_tchar(c))
            return c == '\n' ? "a line ends in a bare LF; HTTP lines end in CRLF" : "a header name has a character "
                                                                                     "that is not allowed";
        e->name_length = 0;
        e->value_length = 0;
        e->state = S_NAME;
        /* fall through */
    case S_NAME:
        if (c == ':') {
            if (e->name_length <= NAME_KEEP)
                e->name[e->name_length] = '\0';
            e->state = S_VALUE;
            return NULL;
        }
        if (!is_tchar(c))
            return c == ' ' || c == '\t' ? "whitespace in a header name or before its colon"
                                         : "a header name has a character that is not allowed";
        if (e->name_length < NAME_KEEP)
            e->name[e->name_length] = (char)(c >= 'A' && c <= 'Z' ? c | 0x20 : c);
        e->name_length++;
        return NULL;
    case S_VALUE:
        if (c == '\r') {
            e->state = S_VALUE_LF;
            return NULL;
        }
        if (!is_value_char(c))
            return c == '\n' ? "a line ends in a bare LF; HTTP lines end in CRLF"
                             : "a header value has a control character (NUL, CR, LF ...)";
        if (e->value_length < VALUE_KEEP)
            e->value[e->value_length] = (char)c;
        e->value_length++;
        return NULL;
    case S_HEAD_END_LF:
        if (c != '\n')
            return "a CR without LF";
        if (e->in_trailer) {
            end_body(e);
            return NULL;
        }
        return end_head(e);
    case S_BODY_FIXED:
        /* handled in bulk by scan() */
        return NULL;
    case S_CHUNK_SIZE: {
        int digit = hex_digit(c);
        if (digit >= 0) {
            if (++e->chunk_digits > 15)
                return "a chunk size is too long";
            e->remaining = e->remaining * 16 + (uint64_t)digit;
            return NULL;
        }
        if (!e->chunk_digits)
            return "a chunk size must be hexadecimal digits";
        if (e->body_seen + e->remaining > (e->large ? wire.cfg.max_large_body : wire.cfg.max_body)) {
            *why = WIRE_REFUSE_TOO_LARGE;
            return "the request body is over the limit";
        }
        e->body_seen += e->remaining;
        if (c == ';') {
            e->state = S_CHUNK_EXT;
            return NULL;
        }
        if (c != '\r')
            return "a chunk size line is malformed";
        e->state = S_CHUNK_SIZE_LF;
        return NULL;
    }
    case S_CHUNK_EXT:
        if (c == '\r')
            e->state = S_CHUNK_SIZE_LF;
        else if (!is_value_char(c))
            return "a chunk extension has a control character";
        return NULL;
    case S_CHUNK_SIZE_LF:
        if (c != '\n')
            return "a CR without LF";
        if (e->remaining == 0) {
            /* The last chunk: trailer fields, then an empty line. */
            e->in_trailer = true;
            e->state = S_FIELD_START;
        } else {
            e->state = S_CHUNK_DATA;
        }
        return NULL;
    case S_CHUNK_DATA:
        return NULL; /* handled in bulk by scan() */
    case S_CHUNK_DATA_CR:
        e->state = S_CHUNK_DATA_LF;
        return c == '\r' ? NULL : "chunk data is not followed by CRLF";
    case S_CHUNK_DATA_LF:
        e->state = S_CHUNK_SIZE;
        e->chunk_digits = 0;
        e->remaining = 0;
        return c == '\n' ? NULL : "chunk data is not followed by CRLF";
    case S_REFUSED:
        return NULL;
    }
    return NULL;
}

/* Runs the parser over data. Returns n when all is well; else the number of
 * bytes before the refused request (to hand on: earlier requests, complete),
 * with *problem set, and *owed true when the refused request's head has
 * already gone to libmicrohttpd (its body was refused). */
static size_t scan(entry_t *e, const unsigned char *data, size_t n, const char **problem, wire_refusal_t *why,
                   bool *owed)
{
    size_t request_start = 0;
    bool started_here = false;
    *problem = NULL;
    for (size_t i = 0; i < n; i++) {
        if (e->state == S_BODY_FIXED || e->state == S_CHUNK_DATA) {
            uint64_t take = e->remaining < n - i ? e->remaining : n - i;
            e->remaining -= take;
            i += take - 1;
            if (e->remaining == 0) {
                if (e->state == S_BODY_FIXED) {
                    end_body(e);
                    request_start = i + 1;
                    started_here = false;
                } else {
                    e->state = S_CHUNK_DATA_CR;
                }
            }
            continue;
        }
        bool at_start = e->state == S_REQUEST_START;
        bool in_body = e->state >= S_BODY_FIXED || e->in_trailer; /* its head went on */
        *problem = feed(e, data[i], why);
        if (*problem) {
            *owed = in_body && !started_here;
            if (in_body && started_here)
                atomic_fetch_sub(&e->heads, 1); /* its head is not handed on after all */
            return request_start;
        }
        if (at_start && e->state != S_REQUEST_START && e->state != S_REQUEST_START_LF) {
            request_start = i;
            started_here = true;
        }
        if (e->state == S_REQUEST_START && !at_start) {
            request_start = i + 1; /* a request without a body ended here */
            started_here = false;
        }
    }
    return n;
}

/* Reads and drops what the client has sent so far, at most *budget bytes
 * (taken off it), so that closing does not reset the connection before the
 * client reads its answer. True when there is no more to wait for: the
 * client's end, an error, or the budget used up. */
static bool drop_input(int fd, uint64_t *budget)
{
    char sink[16384];
    for (;;) {
        ssize_t n = interpose_system_recv(fd, sink, sizeof sink, MSG_DONTWAIT);
        if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
            return false;
        if (n <= 0 || (uint64_t)n >= *budget)
            return true;
        *budget -= (uint64_t)n;
    }
}

/* drop_input for a connection about to be refused: what is already there. */
static void discard_input(int fd)
{
    uint64_t budget = DISCARD_BYTES;
    drop_input(fd, &budget);
}

/* Writes the refusal and half-closes; the caller then reports end of input. */
static void answer_refusal(entry_t *e, int fd, wire_refusal_t why, const char *detail)
{
    char answer[ANSWER_MAX];
    size_t n = wire.cfg.answer ? wire.cfg.answer(why, detail, answer, sizeof answer) : 0;
    discard_input(fd);
    if (n)
        (void)!send(fd, answer, n, MSG_NOSIGNAL | MSG_DONTWAIT);
    shutdown(fd, SHUT_WR);
    e->answered_refusal = true;
    atomic_store(&e->pending, false);
    set_deadline(e, 0, false);
    atomic_fetch_add(&wire.refused, 1);
}

bool wire_client_gone(int fd)
{
    char probe;
    if (fd < 0)
        return false;
    ssize_t n = interpose_system_recv(fd, &probe, 1, MSG_PEEK | MSG_DONTWAIT);
    /* 0: the client closed its side; an error other than "nothing yet": it
     * reset the connection (ECONNRESET), which is as gone. */
    return n == 0 || (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR);
}

static bool mid_request(const entry_t *e) { return e->state != S_REQUEST_START && e->state != S_REQUEST_START_LF; }

/* After a short read: has the client closed its side? libmicrohttpd 0.9.75
 * reads once per readiness edge, so an end of input that came with the last
 * bytes would go unnoticed until the idle timeout. A request that can no
 * longer be completed ends the connection now; otherwise it ends once the
 * requests already read are answered (the client may still be reading). */
static void check_peer_closed(entry_t *e, int fd)
{
    if (e->peer_closed || !wire_client_gone(fd))
        return;
    e->peer_closed = true;
    if (mid_request(e) || atomic_load(&e->heads) == atomic_load(&e->answered))
        shutdown(fd, SHUT_RDWR); /* libmicrohttpd sees the hang-up and closes */
}

/* The process's recv(2) (interpose.c), libmicrohttpd's among them: every
 * byte of a registered connection goes through the parser first. A call
 * with flags passes unchecked: libmicrohttpd 0.9.75 passes none. */
static ssize_t on_recv(int fd, void *buf, size_t len, int flags)
{
    ssize_t got = interpose_system_recv(fd, buf, len, flags);
    entry_t *e = entry(fd);
    if (!e || !e->active || flags)
        return got;
    if (e->state == S_REFUSED) {
        if (got > 0) /* nothing more is read on a refused connection */
            discard_input(fd);
        if (e->answered_refusal || got == 0)
            return 0;
        errno = EAGAIN;
        return -1;
    }
    if (got <= 0)
        return got;
    const char *problem;
    wire_refusal_t why;
    bool owed = false;
    size_t keep = scan(e, buf, (size_t)got, &problem, &why, &owed);
    if (!problem) {
        if ((size_t)got < len)
            check_peer_closed(e, fd);
        return got;
    }
    e->state = S_REFUSED;
    e->pending_why = why;
    e->pending_detail = problem;
    e->pending_owed = owed;
    /* Answer at once when libmicrohttpd owes no other answer on this
     * connection (what comes before the refused request is then at most empty
     * lines); else once it has sent them (wire_request_completed). */
    if (atomic_load(&e->heads) - atomic_load(&e->answered) == (owed ? 1u : 0u)) {
        answer_refusal(e, fd, why, problem);
        return 0;
    }
    atomic_store(&e->pending, true);
    if (keep > 0)
        return (ssize_t)keep;
    errno = EAGAIN;
    return -1;
}

void wire_connection_opened(int fd)
{
    entry_t *e = entry(fd);
    if (!e)
        return;
    pthread_mutex_lock(entry_lock(fd));
    start_head(e);
    atomic_store(&e->heads, 0);
    atomic_store(&e->answered, 0);
    atomic_store(&e->pending, false);
    e->answered_refusal = false;
    e->peer_closed = false;
    set_deadline(e, wire.cfg.header_timeout_us, false);
    e->active = true;
    e->http = true;
    pthread_mutex_unlock(entry_lock(fd));
    int high = atomic_load(&wire.high);
    while (fd + 1 > high && !atomic_compare_exchange_weak(&wire.high, &high, fd + 1))
        ;
}

void wire_connection_closed(int fd)
{
    entry_t *e = entry(fd);
    if (!e)
        return;
    pthread_mutex_lock(entry_lock(fd));
    e->active = false;
    atomic_store(&e->deadline_us, 0);
    pthread_mutex_unlock(entry_lock(fd));
}

void wire_request_completed(int fd)
{
    entry_t *e = entry(fd);
    if (!e || !e->active)
        return;
    atomic_fetch_add(&e->answered, 1);
    if (e->peer_closed && !mid_request(e) && atomic_load(&e->heads) == atomic_load(&e->answered)) {
        shutdown(fd, SHUT_RDWR); /* all answered; the client is gone */
        return;
    }
    /* A refusal that waited for this answer can go out now; the shutdown
     * wakes libmicrohttpd, whose next read sees the end. */
    if (atomic_load(&e->pending)
        && atomic_load(&e->heads) - atomic_load(&e->answered) == (e->pending_owed ? 1u : 0u)) {
        answer_refusal(e, fd, e->pending_why, e->pending_detail);
        shutdown(fd, SHUT_RD);
    }
}

bool wire_watch_close(int fd, wire_closed_fn fn, void *ctx, uint64_t tag)
{
    entry_t *e = entry(fd);
    if (!e)
        return false;
    e->closed = fn;
    e->closed_ctx = ctx;
    e->closed_tag = tag;
    return true;
}

/* Closes the descriptor for good, its watcher told first (while the number
 * is still taken, so it cannot be another connection's yet). */
static int release(int fd)
{
    entry_t *e = entry(fd);
    if (e && e->closed) {
        wire_closed_fn fn = e->closed;
        e->closed = NULL;
        fn(e->closed_ctx, e->closed_tag);
    }
    return interpose_system_close(fd);
}

/* The process's close(2) (interpose.c): a connection of libmicrohttpd's
 * closed while its client may still be sending (a refused or over-cap
 * request, an unread body) is half-closed and read and dropped for a while
 * first (a lingering close, as nginx does), so the client reads the answer
 * instead of a reset. Any other descriptor is closed at once. */
static int on_close(int fd)
{
    entry_t *e = entry(fd);
    if (!e || !e->http)
        return release(fd);
    e->http = false;
    int unread = 0;
    if (!mid_request(e) && (ioctl(fd, FIONREAD, &unread) != 0 || unread <= 0))
        return release(fd);
    /* A client that has already closed its side sends nothing more: what it
     * sent (no more than the socket's buffer holds) is dropped now and the
     * descriptor closed without a reset, taking no lingering place (a burst
     * of clients gone at once would fill them all). */
    struct pollfd side = { .fd = fd, .events = POLLRDHUP };
    uint64_t budget = LINGER_BYTES;
    if (poll(&side, 1, 0) == 1 && (side.revents & (POLLRDHUP | POLLHUP | POLLERR)) && drop_input(fd, &budget))
        return release(fd);
    pthread_mutex_lock(&wire.linger_lock);
    bool room = atomic_load(&wire.running) && wire.linger_count < LINGER_MAX;
    if (room) {
        /* Before the entry is published: once it is, the deadline thread may
         * close the descriptor and its number may be reused. */
        shutdown(fd, SHUT_WR);
        wire.lingering[wire.linger_count++] = (linger_t){ fd, clock_now_us() + LINGER_US, LINGER_BYTES };
    }
    pthread_mutex_unlock(&wire.linger_lock);
    return room ? 0 : release(fd);
}

/* Reads and drops what lingering connections sent; closes those that are
 * done, out of time or over their byte budget (all of them when stopping). */
static void serve_lingering(bool stopping)
{
    uint64_t now = clock_now_us();
    pthread_mutex_lock(&wire.linger_lock);
    for (int i = 0; i < wire.linger_count;) {
        linger_t *l = &wire.lingering[i];
        if (stopping || now >= l->deadline_us || drop_input(l->fd, &l->bytes_left)) {
            release(l->fd);
            *l = wire.lingering[--wire.linger_count];
        } else {
            i++;
        }
    }
    pthread_mutex_unlock(&wire.linger_lock);
}

static void *deadline_thread(void *arg)
{
    (void)arg;
    while (atomic_load(&wire.running)) {
        struct timespec tick = { 0, TICK_NS };
        nanosleep(&tick, NULL);
        serve_lingering(false);
        uint64_t now = clock_now_us();
        int high = atomic_load(&wire.high);
        for (int fd = 0; fd < high; fd++) {
            entry_t *e = &wire.table[fd];
            uint64_t deadline = atomic_load(&e->deadline_us);
            if (!deadline || now < deadline)
                continue;
            pthread_mutex_lock(entry_lock(fd));
            if (e->active && atomic_load(&e->deadline_us) && now >= atomic_load(&e->deadline_us)) {
                atomic_store(&e->deadline_us, 0);
                /* libmicrohttpd sees the hang-up and closes the connection. */
                shutdown(fd, SHUT_RDWR);
                atomic_fetch_add(atomic_load(&e->deadline_is_body) ? &wire.body_timeouts : &wire.header_timeouts, 1);
            }
            pthread_mutex_unlock(entry_lock(fd));
        }
    }
    return NULL;
}

bool wire_start(const wire_config_t *cfg)
{
    struct rlimit limit;
    rlim_t size = getrlimit(RLIMIT_NOFILE, &limit) == 0 ? limit.rlim_cur : 1024;
    if (size == RLIM_INFINITY || size > TABLE_MAX)
        size = TABLE_MAX;
    entry_t *table = calloc((size_t)size, sizeof *table);
    if (!table)
        return false;
    for (int i = 0; i < LOCK_STRIPES; i++)
        pthread_mutex_init(&wire.locks[i], NULL);
    wire.cfg = *cfg;
    wire.size = (int)size;
    wire.table = table;
    atomic_store(&wire.running, true);
    if (pthread_create(&wire.thread, NULL, deadline_thread, NULL)) {
        atomic_store(&wire.running, false);
        wire.table = NULL;
        free(table);
        return false;
    }
    interpose_install(on_recv, on_close);
    return true;
}

void wire_stop(void)
{
    if (!atomic_load(&wire.running))
        return;
    atomic_store(&wire.running, false);
    pthread_join(wire.thread, NULL);
    serve_lingering(true);
    interpose_install(NULL, NULL);
    entry_t *table = wire.table;
    wire.table = NULL;
    for (int i = 0; i < LOCK_STRIPES; i++)
        pthread_mutex_destroy(&wire.locks[i]);
    free(table);
    wire.size = 0;
}

void wire_stats(wire_stats_t *out)
{
    out->refused = atomic_load(&wire.refused);
    out->header_timeouts = atomic_load(&wire.header_timeouts);
    out->body_timeouts = atomic_load(&wire.body_timeouts);
}
