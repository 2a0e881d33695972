/* Tests for api/http/wire.c on real sockets: a socketpair stands for a client and
 * chessd's end of a connection; the test plays libmicrohttpd, calling recv()
 * (wire.c's) on its end and reading what wire.c answered on the client's.
 * Strict heads pass whole, a refused head gets one answer and end of input
 * before any of it is handed on, and deadlines shut connections down. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "../../../api/http/wire.h"
#include "../../support/tests.h"

enum { HEADER_TIMEOUT_MS = 300, MAX_BODY = 100 };

static size_t test_answer(wire_refusal_t why, const char *detail, char *out, size_t size)
{
    int n = snprintf(out, size, "REFUSED %d %s", (int)why, detail);
    return n > 0 ? (size_t)n : 0;
}

static int suite_init(void)
{
    wire_config_t cfg = { .header_timeout_us = HEADER_TIMEOUT_MS * 1000u,
                          .body_timeout_us = HEADER_TIMEOUT_MS * 1000u,
                          .max_body = MAX_BODY,
                          .answer = test_answer };
    return wire_start(&cfg) ? 0 : -1;
}

static int suite_clean(void)
{
    wire_stop();
    return 0;
}

typedef struct {
    int client, server;
} pair_t;

static pair_t open_pair(void)
{
    int fds[2] = { -1, -1 };
    CU_ASSERT_FATAL(socketpair(AF_UNIX, SOCK_STREAM, 0, fds) == 0);
    fcntl(fds[1], F_SETFL, O_NONBLOCK); /* as libmicrohttpd's sockets */
    wire_connection_opened(fds[1]);
    return (pair_t){ fds[0], fds[1] };
}

static void close_pair(pair_t p)
{
    wire_connection_closed(p.server);
    close(p.server);
    close(p.client);
}

static void send_text(pair_t p, const char *text)
{
    /* MSG_NOSIGNAL: a test may write to a connection wire.c has shut down. */
    CU_ASSERT_EQUAL_FATAL(send(p.client, text, strlen(text), MSG_NOSIGNAL), (ssize_t)strlen(text));
}

/* What libmicrohttpd would get from one recv(): the bytes, "" for end of
 * input, "<EAGAIN>" when nothing is to be had yet. */
static const char *server_reads(pair_t p, char *buf, size_t size)
{
    ssize_t n = recv(p.server, buf, size - 1, 0);
    if (n < 0)
        return errno == EAGAIN ? "<EAGAIN>" : "<ERROR>";
    buf[n] = '\0';
    return buf;
}

/* What the client got back (wire.c's answer), without waiting. */
static const char *client_reads(pair_t p, char *buf, size_t size)
{
    ssize_t n = recv(p.client, buf, size - 1, MSG_DONTWAIT);
    buf[n > 0 ? n : 0] = '\0';
    return buf;
}

static void expect_passed_whole(const char *request)
{
    pair_t p = open_pair();
    char buf[4096], answer[512];
    send_text(p, request);
    CU_ASSERT_STRING_EQUAL(server_reads(p, buf, sizeof buf), request);
    CU_ASSERT_STRING_EQUAL(client_reads(p, answer, sizeof answer), "");
    close_pair(p);
}

/* The request is refused before any byte of it reaches libmicrohttpd: end of
 * input, and one answer naming `why` (and `detail`) on the client's side. */
static void expect_refused(const char *request, wire_refusal_t why, const char *detail)
{
    pair_t p = open_pair();
    char buf[4096], answer[512], expected[64];
    send_text(p, request);
    CU_ASSERT_STRING_EQUAL(server_reads(p, buf, sizeof buf), "");
    snprintf(expected, sizeof expected, "REFUSED %d ", (int)why);
    client_reads(p, answer, sizeof answer);
    CU_ASSERT_NSTRING_EQUAL(answer, expected, strlen(expected));
    if (detail && !strstr(answer, detail))
        fprintf(stderr, "\n%s: answer '%s' does not say '%s'\n", request, answer, detail);
    CU_ASSERT(!detail || strstr(answer, detail) != NULL);
    close_pair(p);
}

static void test_strict_requests_pass_whole(void)
{
    expect_passed_whole("GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n");
    expect_passed_whole("GET /a HTTP/1.1\r\nHost: x\r\n\r\nGET /b HTTP/1.1\r\nHost: x\r\n\r\n");
    expect_passed_whole("\r\nGET /healthz HTTP/1.1\r\nHost: x\r\nX-Tab:\ta\tb\r\nX-Utf8: \xc3\xa9\r\n\r\n");
    expect_passed_whole("POST /p HTTP/1.1\r\nHost: x\r\nContent-Length: 3\r\nContent-Length: 3\r\n\r\nabc");
    expect_passed_whole("POST /p HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: Chunked\r\n\r\n"
                        "3;ext=1\r\nabc\r\n0\r\nTrailer: t\r\n\r\nGET / HTTP/1.1\r\nHost: x\r\n\r\n");
}

static void test_body_bytes_are_not_read_as_a_head(void)
{
    /* 13 bytes of body that would be refused as a head. */
    expect_passed_whole("POST /p HTTP/1.1\r\nHost: x\r\nContent-Length: 13\r\n\r\nX : y\nGET /\n\n"
                        "GET / HTTP/1.1\r\nHost: x\r\n\r\n");
}

static void test_whitespace_before_a_colon_is_refused(void)
{
    expect_refused("POST /p HTTP/1.1\r\nHost: x\r\nContent-Length : 34\r\n\r\n", WIRE_REFUSE_MALFORMED, "colon");
    expect_refused("POST /p HTTP/1.1\r\nHost: x\r\nTransfer-Encoding\t: chunked\r\n\r\n", WIRE_REFUSE_MALFORMED,
                   "colon");
    expect_refused("GET / HTTP/1.1\r\nHost: x\r\nContent Length: 3\r\n\r\n", WIRE_REFUSE_MALFORMED, NULL);
}

static void test_obs_fold_is_refused(void)
{
    expect_refused("GET / HTTP/1.1\r\nHost: x\r\nX-A: 1\r\n 2\r\n\r\n", WIRE_REFUSE_MALFORMED, "obs-fold");
    expect_refused("GET / HTTP/1.1\r\nHost: x\r\nX-A: 1\r\n\t2\r\n\r\n", WIRE_REFUSE_MALFORMED, "obs-fold");
}

static void test_bare_lf_and_lone_cr_are_refused(void)
{
    expect_refused("GET /healthz HTTP/1.1\nHost: x\n\n", WIRE_REFUSE_MALFORMED, "bare LF");
    expect_refused("GET / HTTP/1.1\r\nHost: x\nX: y\r\n\r\n", WIRE_REFUSE_MALFORMED, "bare LF");
    expect_refused("GET / HTTP/1.1\r\nHost: x\rX: y\r\n\r\n", WIRE_REFUSE_MALFORMED, "CR without LF");
}

static void test_control_characters_in_a_head_are_refused(void)
{
    pair_t p = open_pair();
    static const char with_nul[] = "GET / HTTP/1.1\r\nHost: x\r\nX-A: a\0b\r\n\r\n";
    char buf[256], answer[256];
    CU_ASSERT_EQUAL_FATAL(write(p.client, with_nul, sizeof with_nul - 1), (ssize_t)(sizeof with_nul - 1));
    CU_ASSERT_STRING_EQUAL(server_reads(p, buf, sizeof buf), "");
    CU_ASSERT(strstr(client_reads(p, answer, sizeof answer), "control character") != NULL);
    close_pair(p);
    expect_refused("GET /\x01 HTTP/1.1\r\nHost: x\r\n\r\n", WIRE_REFUSE_MALFORMED, "request line");
    expect_refused("GET  / HTTP/1.1\r\nHost: x\r\n\r\n", WIRE_REFUSE_MALFORMED, "request line");
    /* Empty lines before it are no request of their own (found by fuzz_wire). */
    expect_refused("\r\n\r\nGET /\x01 HTTP/1.1\r\nHost: x\r\n\r\n", WIRE_REFUSE_MALFORMED, "request line");
}

static void test_ambiguous_framing_is_refused(void)
{
    expect_refused("GET / HTTP/1.1\r\nHost: x\r\nHost: y\r\n\r\n", WIRE_REFUSE_MALFORMED, "Host");
    expect_refused("POST /p HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\nTransfer-Encoding: chunked\r\n\r\n",
                   WIRE_REFUSE_MALFORMED, "Transfer-Encoding");
    expect_refused("POST /p HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\nContent-Length: 3\r\n\r\n",
                   WIRE_REFUSE_MALFORMED, "together");
    expect_refused("POST /p HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: gzip, chunked\r\n\r\n", WIRE_REFUSE_MALFORMED,
                   "chunked");
    expect_refused("POST /p HTTP/1.1\r\nHost: x\r\nContent-Length: 3\r\nContent-Length: 4\r\n\r\n",
                   WIRE_REFUSE_MALFORMED, "conflicting");
    expect_refused("POST /p HTTP/1.1\r\nHost: x\r\nContent-Length: +3\r\n\r\n", WIRE_REFUSE_MALFORMED, "decimal");
}

/* What server.c's framing check would refuse past this reader is refused
 * here first, so that check fires only when the reader was bypassed: two
 * Content-Length headers must be the same text (3 and 03 are not), and
 * libmicrohttpd keeps whitespace after "chunked" in the value it shows. */
static void test_what_the_framing_backstop_refuses_is_refused_first(void)
{
    expect_refused("POST /p HTTP/1.1\r\nHost: x\r\nContent-Length: 3\r\nContent-Length: 03\r\n\r\nabc",
                   WIRE_REFUSE_MALFORMED, "conflicting");
    expect_refused("POST /p HTTP/1.1\r\nHost: x\r\nContent-Length: 003\r\nContent-Length: 3\r\n\r\nabc",
                   WIRE_REFUSE_MALFORMED, "conflicting");
    expect_refused("POST /p HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked \r\n\r\n0\r\n\r\n",
                   WIRE_REFUSE_MALFORMED, "chunked");
    expect_refused("POST /p HTTP/1.1\r\nHost: x\r\nTransfer-Encoding:\tchunked\t\r\n\r\n0\r\n\r\n",
                   WIRE_REFUSE_MALFORMED, "chunked");
    /* The same text twice, and whitespace before the value, still pass. */
    expect_passed_whole("POST /p HTTP/1.1\r\nHost: x\r\nContent-Length: 03\r\nContent-Length:  03\r\n\r\nabc");
    expect_passed_whole("POST /p HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: \tchunked\r\n\r\n0\r\n\r\n");
}

static void test_what_libmicrohttpd_would_answer_badly_is_refused_first(void)
{
    expect_refused("GET / HTTP/1.1\r\n\r\n", WIRE_REFUSE_MALFORMED, "Host");
    expect_passed_whole("GET / HTTP/1.0\r\n\r\n");
    expect_passed_whole("GET / HTTP/2.0\r\nHost: x\r\n\r\n"); /* libmicrohttpd answers 505 */
    expect_refused("POST /p HTTP/1.1\r\nHost: x\r\nContent-Length: 18446744073709551616\r\n\r\n",
                   WIRE_REFUSE_TOO_LARGE, NULL);
    expect_refused("POST /p HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n2 \r\nab\r\n0\r\n\r\n",
                   WIRE_REFUSE_MALFORMED, "chunk size");
    char many[512] = "GET /v1/perft?";
    for (int i = 0; i < 70; i++)
        strcat(many, "a&");
    strcat(many, " HTTP/1.1\r\nHost: x\r\n\r\n");
    expect_refused(many, WIRE_REFUSE_MALFORMED, "query parameters");
}

static void test_a_length_with_leading_zeros_is_read_as_libmicrohttpd_reads_it(void)
{
    /* 0000000000000000002 is 2: the next request starts after two bytes, and
     * is checked like the first. */
    pair_t p = open_pair();
    char buf[512], answer[256];
    const char *first = "POST /p HTTP/1.1\r\nHost: x\r\nContent-Length: 0000000000000000002\r\n\r\nab";
    snprintf(buf, sizeof buf, "%sGET / HTTP/1.1\r\nHost: x\r\nHost: y\r\n\r\n", first);
    send_text(p, buf);
    CU_ASSERT_STRING_EQUAL(server_reads(p, buf, sizeof buf), first);
    wire_request_completed(p.server);
    CU_ASSERT(strstr(client_reads(p, answer, sizeof answer), "Host") != NULL);
    CU_ASSERT_STRING_EQUAL(server_reads(p, buf, sizeof buf), "");
    close_pair(p);
    expect_passed_whole("POST /p HTTP/1.1\r\nHost: x\r\nContent-Length: 00003\r\n\r\nabc"
                        "GET / HTTP/1.1\r\nHost: x\r\n\r\n");
}

static void test_a_bad_trailer_is_refused_at_once(void)
{
    expect_refused("POST /p HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n0\r\nX : y\r\n\r\n",
                   WIRE_REFUSE_MALFORMED, "colon");
    pair_t p = open_pair();
    char buf[512], answer[256];
    send_text(p, "POST /p HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n");
    CU_ASSERT_NSTRING_EQUAL(server_reads(p, buf, sizeof buf), "POST", 4);
    send_text(p, "T: 1\r\n x\r\n\r\n"); /* obs-fold in the trailer, a packet later */
    CU_ASSERT_STRING_EQUAL(server_reads(p, buf, sizeof buf), "");
    CU_ASSERT_NSTRING_EQUAL(client_reads(p, answer, sizeof answer), "REFUSED", 7);
    close_pair(p);
}

static void test_a_chunked_body_is_cut_off_as_soon_as_it_passes_the_cap(void)
{
    /* The head went on before the body was refused: the answer goes out at
     * once, and the bytes of the refused chunk are never handed on. */
    pair_t p = open_pair();
    char buf[512], answer[256];
    send_text(p, "POST /p HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n");
    CU_ASSERT_NSTRING_EQUAL(server_reads(p, buf, sizeof buf), "POST", 4);
    send_text(p, "40\r\n");
    CU_ASSERT_STRING_EQUAL(server_reads(p, buf, sizeof buf), "40\r\n"); /* 64 bytes: under the cap */
    send_text(p, "0123456789012345678901234567890123456789012345678901234567890123\r\n41\r\n");
    CU_ASSERT_STRING_EQUAL(server_reads(p, buf, sizeof buf), ""); /* 64 + 65 > 100 */
    char expected[32];
    snprintf(expected, sizeof expected, "REFUSED %d ", (int)WIRE_REFUSE_TOO_LARGE);
    CU_ASSERT_NSTRING_EQUAL(client_reads(p, answer, sizeof answer), expected, strlen(expected));
    close_pair(p);
}

static void test_a_refused_request_after_a_good_one_waits_for_its_answer(void)
{
    pair_t p = open_pair();
    char buf[512], answer[256];
    const char *good = "GET /a HTTP/1.1\r\nHost: x\r\n\r\n";
    char both[256];
    snprintf(both, sizeof both, "%sGET /b HTTP/1.1\r\nHost: x\r\nX : y\r\n\r\n", good);
    send_text(p, both);
    /* Only the good request goes on; the refusal waits for its answer. */
    CU_ASSERT_STRING_EQUAL(server_reads(p, buf, sizeof buf), good);
    CU_ASSERT_STRING_EQUAL(client_reads(p, answer, sizeof answer), "");
    CU_ASSERT_STRING_EQUAL(server_reads(p, buf, sizeof buf), "<EAGAIN>");
    wire_request_completed(p.server); /* libmicrohttpd has answered GET /a */
    CU_ASSERT_NSTRING_EQUAL(client_reads(p, answer, sizeof answer), "REFUSED", 7);
    CU_ASSERT_STRING_EQUAL(server_reads(p, buf, sizeof buf), "");
    close_pair(p);
}

static void test_a_head_split_across_reads_is_checked_whole(void)
{
    pair_t p = open_pair();
    char buf[512], answer[256];
    send_text(p, "GET / HTTP/1.1\r\nHo");
    CU_ASSERT_STRING_EQUAL(server_reads(p, buf, sizeof buf), "GET / HTTP/1.1\r\nHo");
    send_text(p, "st: x\r\nX-A: 1\r\n 2\r\n\r\n");
    CU_ASSERT_STRING_EQUAL(server_reads(p, buf, sizeof buf), "");
    CU_ASSERT_NSTRING_EQUAL(client_reads(p, answer, sizeof answer), "REFUSED", 7);
    close_pair(p);
}

static void wait_ms(long ms)
{
    struct timespec pause = { ms / 1000, (ms % 1000) * 1000000L };
    nanosleep(&pause, NULL);
}

static void test_a_head_that_comes_too_slowly_is_shut_down(void)
{
    wire_stats_t before, after;
    wire_stats(&before);
    pair_t p = open_pair();
    char buf[512];
    send_text(p, "GET / HTTP/1.1\r\n");
    CU_ASSERT_STRING_EQUAL(server_reads(p, buf, sizeof buf), "GET / HTTP/1.1\r\n");
    /* A byte every 50 ms: never idle, but the head is never done either. */
    long start = tests_monotonic_ms();
    bool shut = false;
    while (!shut && tests_monotonic_ms() - start < 10 * HEADER_TIMEOUT_MS) {
        if (send(p.client, "X", 1, MSG_NOSIGNAL) != 1)
            break; /* shut down */
        wait_ms(50);
        shut = !strcmp(server_reads(p, buf, sizeof buf), "");
    }
    shut = shut || !strcmp(server_reads(p, buf, sizeof buf), "");
    CU_ASSERT(shut);
    wire_stats(&after);
    CU_ASSERT_EQUAL(after.header_timeouts, before.header_timeouts + 1);
    close_pair(p);
}

static void test_a_finished_request_has_no_deadline(void)
{
    pair_t p = open_pair();
    char buf[512];
    send_text(p, "GET / HTTP/1.1\r\nHost: x\r\n\r\n");
    CU_ASSERT_NSTRING_EQUAL(server_reads(p, buf, sizeof buf), "GET", 3);
    wait_ms(3 * HEADER_TIMEOUT_MS);
    CU_ASSERT_STRING_EQUAL(server_reads(p, buf, sizeof buf), "<EAGAIN>"); /* still open: answering takes its time */
    close_pair(p);
}

static void test_closing_mid_request_lingers_so_the_client_can_read_the_answer(void)
{
    pair_t p = open_pair();
    char buf[512];
    send_text(p, "POST /p HTTP/1.1\r\nHost: x\r\nContent-Length: 50\r\n\r\nab");
    CU_ASSERT_NSTRING_EQUAL(server_reads(p, buf, sizeof buf), "POST", 4);
    CU_ASSERT_EQUAL(write(p.server, "413", 3), 3);
    wire_connection_closed(p.server);
    CU_ASSERT_EQUAL(close(p.server), 0); /* half-closed and read for a while, not closed */
    CU_ASSERT_EQUAL(write(p.client, "more body", 9), 9); /* no reset: the other end still reads */
    CU_ASSERT_EQUAL(recv(p.client, buf, sizeof buf, 0), 3);
    CU_ASSERT_EQUAL(recv(p.client, buf, sizeof buf, 0), 0); /* then the end of the answer */
    close(p.client);
}

static void test_a_client_that_leaves_mid_request_is_noticed_at_once(void)
{
    pair_t p = open_pair();
    char buf[512];
    send_text(p, "POST /p HTTP/1.1\r\nHost: x\r\nContent-Length: 50\r\n\r\nab");
    shutdown(p.client, SHUT_WR); /* the end of input comes with the bytes */
    CU_ASSERT_NSTRING_EQUAL(server_reads(p, buf, sizeof buf), "POST", 4);
    /* The request can never be completed: chessd's end is shut down now, not
     * after a timeout (libmicrohttpd would wait for another readiness edge). */
    CU_ASSERT_EQUAL(send(p.server, "x", 1, MSG_NOSIGNAL), -1);
    close_pair(p);
}

static void test_a_client_that_leaves_after_a_whole_request_still_gets_its_answer(void)
{
    pair_t p = open_pair();
    char buf[512];
    send_text(p, "GET / HTTP/1.0\r\n\r\n");
    shutdown(p.client, SHUT_WR);
    CU_ASSERT_NSTRING_EQUAL(server_reads(p, buf, sizeof buf), "GET", 3);
    CU_ASSERT_EQUAL(send(p.server, "answer", 6, MSG_NOSIGNAL), 6); /* still open for the answer */
    wire_request_completed(p.server);
    CU_ASSERT_EQUAL(send(p.server, "x", 1, MSG_NOSIGNAL), -1); /* then shut down */
    CU_ASSERT_EQUAL(recv(p.client, buf, sizeof buf, 0), 6);
    close_pair(p);
}

/* A close watch that counts the times it ran and keeps the last tag. */
static int watch_runs;
static uint64_t watch_tag;

static void count_close(void *ctx, uint64_t tag)
{
    CU_ASSERT_PTR_EQUAL(ctx, &watch_runs);
    watch_runs++;
    watch_tag = tag;
}

static void test_a_watched_descriptor_is_reported_once_when_it_is_closed(void)
{
    pair_t p = open_pair();
    watch_runs = 0;
    CU_ASSERT_TRUE(wire_watch_close(p.server, count_close, &watch_runs, 42));
    CU_ASSERT_EQUAL(watch_runs, 0);
    int number = p.server;
    close_pair(p);
    CU_ASSERT_EQUAL(watch_runs, 1);
    CU_ASSERT_EQUAL(watch_tag, 42);
    /* The number, taken again by another connection, is not watched. Another
     * thread of the runner (a suite's leftover Redis reconnects) may hold
     * the lowest number for a moment: connections are opened until one
     * gets it, and all closed after. */
    enum { TRIES = 64 };
    pair_t again[TRIES];
    int opened = 0;
    bool reused = false;
    while (opened < TRIES && !reused) {
        again[opened] = open_pair();
        reused = again[opened++].server == number;
    }
    CU_ASSERT_TRUE(reused);
    for (int i = 0; i < opened; i++)
        close_pair(again[i]);
    CU_ASSERT_EQUAL(watch_runs, 1);
}

static void test_a_lingering_descriptor_is_reported_when_its_lingering_ends(void)
{
    pair_t p = open_pair();
    char buf[512];
    watch_runs = 0;
    CU_ASSERT_TRUE(wire_watch_close(p.server, count_close, &watch_runs, 7));
    send_text(p, "POST /p HTTP/1.1\r\nHost: x\r\nContent-Length: 50\r\n\r\nab");
    CU_ASSERT_NSTRING_EQUAL(server_reads(p, buf, sizeof buf), "POST", 4);
    wire_connection_closed(p.server);
    CU_ASSERT_EQUAL(close(p.server), 0);
    CU_ASSERT_EQUAL(watch_runs, 0); /* still open: the client may still be sending */
    close(p.client);
    for (int i = 0; i < 50 && watch_runs == 0; i++) /* the deadline thread's next tick (100 ms) */
        wait_ms(20);
    CU_ASSERT_EQUAL(watch_runs, 1);
    CU_ASSERT_EQUAL(watch_tag, 7);
}

static void test_closing_after_the_client_closed_its_side_takes_no_lingering_place(void)
{
    pair_t p = open_pair();
    char buf[512];
    watch_runs = 0;
    CU_ASSERT_TRUE(wire_watch_close(p.server, count_close, &watch_runs, 1));
    send_text(p, "POST /p HTTP/1.1\r\nHost: x\r\nContent-Length: 50\r\n\r\nab");
    CU_ASSERT_NSTRING_EQUAL(server_reads(p, buf, sizeof buf), "POST", 4);
    send_text(p, "more body");
    shutdown(p.client, SHUT_WR); /* it sends nothing more, but reads on */
    CU_ASSERT_EQUAL(write(p.server, "413", 3), 3);
    wire_connection_closed(p.server);
    CU_ASSERT_EQUAL(close(p.server), 0);
    CU_ASSERT_EQUAL(watch_runs, 1); /* released at once */
    /* What it sent was read first: the answer, then its end, and no reset. */
    CU_ASSERT_EQUAL(recv(p.client, buf, sizeof buf, 0), 3);
    CU_ASSERT_EQUAL(recv(p.client, buf, sizeof buf, 0), 0);
    close(p.client);
}

int test_wire_register(void)
{
    CU_pSuite suite = CU_add_suite("wire", suite_init, suite_clean);
    if (!suite)
        return -1;
    CU_add_test(suite, "strict requests pass whole", test_strict_requests_pass_whole);
    CU_add_test(suite, "body bytes are not read as a head", test_body_bytes_are_not_read_as_a_head);
    CU_add_test(suite, "whitespace before a colon is refused", test_whitespace_before_a_colon_is_refused);
    CU_add_test(suite, "obs-fold is refused", test_obs_fold_is_refused);
    CU_add_test(suite, "bare LF and lone CR are refused", test_bare_lf_and_lone_cr_are_refused);
    CU_add_test(suite, "control characters in a head are refused", test_control_characters_in_a_head_are_refused);
    CU_add_test(suite, "ambiguous framing is refused", test_ambiguous_framing_is_refused);
    CU_add_test(suite, "what the framing backstop refuses is refused first",
                test_what_the_framing_backstop_refuses_is_refused_first);
    CU_add_test(suite, "what libmicrohttpd would answer badly is refused first",
                test_what_libmicrohttpd_would_answer_badly_is_refused_first);
    CU_add_test(suite, "a length with leading zeros is read as libmicrohttpd reads it",
                test_a_length_with_leading_zeros_is_read_as_libmicrohttpd_reads_it);
    CU_add_test(suite, "a bad trailer is refused at once", test_a_bad_trailer_is_refused_at_once);
    CU_add_test(suite, "a chunked body is cut off as soon as it passes the cap",
                test_a_chunked_body_is_cut_off_as_soon_as_it_passes_the_cap);
    CU_add_test(suite, "a refused request after a good one waits for its answer",
                test_a_refused_request_after_a_good_one_waits_for_its_answer);
    CU_add_test(suite, "a head split across reads is checked whole", test_a_head_split_across_reads_is_checked_whole);
    CU_add_test(suite, "a head that comes too slowly is shut down", test_a_head_that_comes_too_slowly_is_shut_down);
    CU_add_test(suite, "a finished request has no deadline", test_a_finished_request_has_no_deadline);
    CU_add_test(suite, "a client that leaves mid-request is noticed at once",
                test_a_client_that_leaves_mid_request_is_noticed_at_once);
    CU_add_test(suite, "a client that leaves after a whole request still gets its answer",
                test_a_client_that_leaves_after_a_whole_request_still_gets_its_answer);
    CU_add_test(suite, "closing mid-request lingers so the client can read the answer",
                test_closing_mid_request_lingers_so_the_client_can_read_the_answer);
    CU_add_test(suite, "a watched descriptor is reported once when it is closed",
                test_a_watched_descriptor_is_reported_once_when_it_is_closed);
    CU_add_test(suite, "a lingering descriptor is reported when its lingering ends",
                test_a_lingering_descriptor_is_reported_when_its_lingering_ends);
    CU_add_test(suite, "closing after the client closed its side takes no lingering place",
                test_closing_after_the_client_closed_its_side_takes_no_lingering_place);
    return 0;
}
