/* libFuzzer target for api/http/wire.c, the strict reading of HTTP bytes in
 * front of libmicrohttpd, whose place this target takes. Input: a byte that
 * picks how the bytes are cut into reads, then what a client sends, sent
 * whole and in pieces over a real socketpair. Whatever the cuts, wire.c hands
 * on a prefix of what was sent and refuses the same inputs at the same byte
 * for the same reason. A refusal is one answer; the reader then sees EOF. */
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "../../api/http/wire.h"
#include "fuzz.h"

enum { INPUT_MAX = 16384, ANSWER_MAX = 512, COMPLETIONS_MAX = 2000 };

static size_t fuzz_answer(wire_refusal_t why, const char *detail, char *out, size_t size)
{
    int n = snprintf(out, size, "REFUSED %d %s", (int)why, detail);
    return n > 0 && (size_t)n < size ? (size_t)n : 0;
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc;
    (void)argv;
    /* Deadlines far away: what is checked here is the reading, not time. */
    wire_config_t cfg = { .header_timeout_us = 3600u * 1000000u,
                          .body_timeout_us = 3600u * 1000000u,
                          .max_body = 1024,
                          .answer = fuzz_answer };
    FUZZ_CHECK(wire_start(&cfg), "wire_start failed");
    return 0;
}

typedef struct {
    unsigned char handed_on[INPUT_MAX];
    size_t handed_on_length;
    bool ended;                /* recv() reported the end of input */
    char answer[ANSWER_MAX];   /* what the client read back */
} outcome_t;

/* Reads everything wire.c hands on now, into o; `cut` bounds each read. */
static void drain(int server, size_t cut, outcome_t *o)
{
    for (;;) {
        unsigned char buf[INPUT_MAX];
        size_t room = sizeof o->handed_on - o->handed_on_length;
        size_t want = cut < room ? cut : room;
        if (want == 0)
            want = 1; /* past the end of the input: only 0 or EAGAIN may come */
        ssize_t n = recv(server, buf, want, 0);
        if (n == 0) {
            o->ended = true;
            return;
        }
        if (n < 0) {
            FUZZ_CHECK(errno == EAGAIN || errno == EWOULDBLOCK || errno == ECONNRESET, "recv: %s", strerror(errno));
            return;
        }
        FUZZ_CHECK(o->handed_on_length + (size_t)n <= sizeof o->handed_on, "more bytes handed on than were sent");
        memcpy(o->handed_on + o->handed_on_length, buf, (size_t)n);
        o->handed_on_length += (size_t)n;
    }
}

/* Sends data in pieces of `cut` bytes (0: whole), playing libmicrohttpd:
 * calling recv() and reporting answered requests. */
static void run(const uint8_t *data, size_t size, size_t cut, outcome_t *o)
{
    memset(o, 0, sizeof *o);
    int fds[2];
    FUZZ_CHECK(socketpair(AF_UNIX, SOCK_STREAM, 0, fds) == 0, "socketpair: %s", strerror(errno));
    int client = fds[0], server = fds[1];
    fcntl(server, F_SETFL, O_NONBLOCK);
    wire_connection_opened(server);
    size_t piece = cut ? cut : size;
    for (size_t sent = 0; sent < size && !o->ended;) {
        size_t n = size - sent < piece ? size - sent : piece;
        FUZZ_CHECK(send(client, data + sent, n, MSG_NOSIGNAL) == (ssize_t)n, "send: %s", strerror(errno));
        sent += n;
        drain(server, cut ? cut : INPUT_MAX, o);
    }
    /* Answer the requests handed on one at a time, until a refusal that was
     * waiting for them goes out (or there is nothing to wait for). */
    size_t got = 0, heads = 1; /* at most one request per blank line, plus one */
    for (size_t i = 0; i + 1 < size; i++)
        heads += data[i] == '\n' && (data[i + 1] == '\n' || (data[i + 1] == '\r' && i + 2 < size && data[i + 2] == '\n'));
    for (size_t i = 0; i <= heads && i < COMPLETIONS_MAX && got == 0; i++) {
        ssize_t n = recv(client, o->answer, sizeof o->answer - 1, MSG_DONTWAIT);
        got = n > 0 ? (size_t)n : 0;
        if (!got)
            wire_request_completed(server);
    }
    o->answer[got] = '\0';
    if (got)
        drain(server, INPUT_MAX, o);
    wire_connection_closed(server);
    close(client);
    close(server);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1 || size > INPUT_MAX)
        return 0;
    size_t cut = 1 + data[0] % 97; /* pieces of 1 to 97 bytes */
    data++;
    size--;
    static outcome_t whole, pieces;
    run(data, size, 0, &whole);
    run(data, size, cut, &pieces);
    for (const outcome_t *o = &whole; o; o = o == &whole ? &pieces : NULL) {
        FUZZ_CHECK(o->handed_on_length <= size && !memcmp(o->handed_on, data, o->handed_on_length),
                   "wire.c handed on bytes that are not a prefix of what was sent (cut %zu)", o == &whole ? 0 : cut);
        bool refused = !strncmp(o->answer, "REFUSED", 7);
        FUZZ_CHECK(refused == (o->answer[0] != '\0'), "an answer that is not a refusal: %s", o->answer);
        FUZZ_CHECK(!refused || o->ended, "refused (%s) but the reader did not see the end of input", o->answer);
    }
    FUZZ_CHECK(!strcmp(whole.answer, pieces.answer), "cut into %zu-byte pieces the answer differs: '%s' whole, '%s' cut",
               cut, whole.answer, pieces.answer);
    /* Cut finer, more of a refused request may have gone on before the byte
     * that refused it arrived; never less. */
    FUZZ_CHECK(whole.handed_on_length <= pieces.handed_on_length, "cut into %zu-byte pieces, less was handed on", cut);
    return 0;
}
