/* Tests for api/http/sendq.c on a real loopback TCP connection whose client
 * end has a 4 KiB receive buffer and reads only when a test says so: the
 * kernel is the oracle. These are its behaviours the event streams' bounds
 * rely on: the cap, the acknowledged counts and the reset-on-close. */
#define _GNU_SOURCE /* POLLRDHUP */
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "../../../api/http/sendq.h"
#include "../../support/tests.h"

enum { CLIENT_RCVBUF = 4096, CAP = 32 * 1024 };

/* A connected pair over 127.0.0.1: *server (non-blocking) and *client. */
static bool tcp_pair(int *server, int *client)
{
    struct sockaddr_in addr = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
    socklen_t length = sizeof addr;
    int listener = socket(AF_INET, SOCK_STREAM, 0);
    *client = socket(AF_INET, SOCK_STREAM, 0);
    int rcvbuf = CLIENT_RCVBUF;
    bool ok = listener >= 0 && *client >= 0 && bind(listener, (struct sockaddr *)&addr, sizeof addr) == 0
              && listen(listener, 1) == 0 && getsockname(listener, (struct sockaddr *)&addr, &length) == 0
              && setsockopt(*client, SOL_SOCKET, SO_RCVBUF, &rcvbuf, sizeof rcvbuf) == 0
              && connect(*client, (struct sockaddr *)&addr, sizeof addr) == 0
              && (*server = accept(listener, NULL, NULL)) >= 0;
    if (listener >= 0)
        close(listener);
    if (ok)
        fcntl(*server, F_SETFL, fcntl(*server, F_GETFL) | O_NONBLOCK);
    return ok;
}

static void sleep_ms(long ms)
{
    struct timespec ts = { ms / 1000, (ms % 1000) * 1000000 };
    nanosleep(&ts, NULL);
}

/* Writes to fd until the kernel takes no more (waiting a little for the last
 * segments to be sent and acknowledged); returns the bytes it took. */
static size_t fill(int fd)
{
    static const char block[4096];
    size_t total = 0;
    for (int quiet = 0; quiet < 3 && total < (64u << 20);) {
        ssize_t n = send(fd, block, sizeof block, MSG_NOSIGNAL);
        if (n > 0) {
            total += (size_t)n;
            quiet = 0;
        } else {
            quiet++;
            sleep_ms(30);
        }
    }
    return total;
}

static void test_a_capped_send_buffer_takes_tens_of_kib_from_a_writer_never_read(void)
{
    int server, client;
    CU_ASSERT_FATAL(tcp_pair(&server, &client));
    CU_ASSERT(sendq_cap(server, CAP));
    size_t taken = fill(server);
    size_t unsent = 0;
    CU_ASSERT(sendq_unsent(server, &unsent));
    /* The cap (doubled by the kernel) and the client's 4 KiB hold it all. */
    CU_ASSERT(taken < 160 * 1024);
    CU_ASSERT(unsent > 0 && unsent <= taken);
    close(server);
    close(client);
}

static void test_acknowledged_bytes_grow_only_as_the_client_reads(void)
{
    int server, client;
    CU_ASSERT_FATAL(tcp_pair(&server, &client));
    CU_ASSERT(sendq_cap(server, CAP));
    fill(server);
    uint64_t before = 0, still = 0, after = 0;
    size_t unsent_before = 0, unsent_after = 0;
    CU_ASSERT_FATAL(sendq_acked(server, &before));
    CU_ASSERT(sendq_unsent(server, &unsent_before));
    sleep_ms(100);
    CU_ASSERT(sendq_acked(server, &still));
    CU_ASSERT_EQUAL(still, before); /* a client that reads nothing acknowledges nothing */
    char sink[8192];
    fcntl(client, F_SETFL, fcntl(client, F_GETFL) | O_NONBLOCK);
    for (int i = 0; i < 20; i++) {
        while (recv(client, sink, sizeof sink, 0) > 0)
            ;
        sleep_ms(5);
    }
    CU_ASSERT(sendq_acked(server, &after));
    CU_ASSERT(sendq_unsent(server, &unsent_after));
    CU_ASSERT(after > before);
    CU_ASSERT(unsent_after < unsent_before);
    close(server);
    close(client);
}

static void test_a_reset_on_close_drops_the_queue_and_resets_the_client(void)
{
    int server, client;
    CU_ASSERT_FATAL(tcp_pair(&server, &client));
    CU_ASSERT(sendq_cap(server, CAP));
    fill(server);
    CU_ASSERT(sendq_reset_on_close(server));
    close(server);
    /* Without the reset, the queued bytes (and a FIN behind them) would wait
     * for a client that never reads: it would see nothing. */
    struct pollfd p = { .fd = client, .events = POLLRDHUP };
    CU_ASSERT_EQUAL(poll(&p, 1, 2000), 1);
    CU_ASSERT(p.revents & POLLERR);
    close(client);
}

int test_sendq_register(void)
{
    CU_pSuite suite = CU_add_suite("sendq", NULL, NULL);
    if (!suite)
        return CU_get_error();
    CU_add_test(suite, "a capped send buffer takes tens of KiB from a writer never read",
                test_a_capped_send_buffer_takes_tens_of_kib_from_a_writer_never_read);
    CU_add_test(suite, "acknowledged bytes grow only as the client reads",
                test_acknowledged_bytes_grow_only_as_the_client_reads);
    CU_add_test(suite, "a reset-on-close drops the queue and resets the client",
                test_a_reset_on_close_drops_the_queue_and_resets_the_client);
    return CUE_SUCCESS;
}
