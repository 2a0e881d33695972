/* Tests for api/http/acceptor.c's listening sockets and counts, on real
 * loopback sockets: the socket options and promises acceptor.h makes, each
 * a test's name. The admission limits themselves, which need libmicrohttpd
 * serving, are tested over HTTP (tests/e2e/attacks_*.test.mjs). */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "../../../api/http/acceptor.h"
#include "../../support/tests.h"

static struct sockaddr_in loopback(unsigned port)
{
    return (struct sockaddr_in){ .sin_family = AF_INET, .sin_port = htons((uint16_t)port),
                                 .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
}

static int connect_to(unsigned port)
{
    struct sockaddr_in addr = loopback(port);
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    CU_ASSERT_FATAL(fd >= 0);
    if (connect(fd, (struct sockaddr *)&addr, sizeof addr) != 0) {
        close(fd);
        return -1;
    }
    return fd;
}

/* Accepts one connection on the non-blocking listener within a second. */
static int accept_one(int listener)
{
    struct pollfd p = { .fd = listener, .events = POLLIN };
    if (poll(&p, 1, 1000) != 1)
        return -1;
    return accept(listener, NULL, NULL);
}

static void test_a_socket_on_port_0_names_its_port_and_takes_connections(void)
{
    struct sockaddr_in addr = loopback(0);
    unsigned port = 0;
    int listener = acceptor_listen((struct sockaddr *)&addr, sizeof addr, &port);
    CU_ASSERT_FATAL(listener >= 0);
    CU_ASSERT(port > 0 && port < 65536);
    int client = connect_to(port);
    CU_ASSERT(client >= 0);
    int served = accept_one(listener);
    CU_ASSERT(served >= 0);
    /* Bytes pass both ways: it is the connection the client made. */
    CU_ASSERT_EQUAL(write(client, "hi", 2), 2);
    char text[2] = { 0 };
    CU_ASSERT_EQUAL(read(served, text, 2), 2);
    CU_ASSERT_EQUAL(memcmp(text, "hi", 2), 0);
    close(served);
    close(client);
    close(listener);
}

static void test_a_second_server_on_a_bound_port_is_an_error(void)
{
    struct sockaddr_in addr = loopback(0);
    unsigned port = 0, again = 0;
    int listener = acceptor_listen((struct sockaddr *)&addr, sizeof addr, &port);
    CU_ASSERT_FATAL(listener >= 0);
    addr = loopback(port);
    errno = 0;
    int second = acceptor_listen((struct sockaddr *)&addr, sizeof addr, &again);
    CU_ASSERT_EQUAL(second, -1);
    CU_ASSERT_EQUAL(errno, EADDRINUSE);
    if (second >= 0)
        close(second);
    close(listener);
}

static void test_a_restart_binds_at_once_over_a_connection_in_time_wait(void)
{
    struct sockaddr_in addr = loopback(0);
    unsigned port = 0, again = 0;
    int listener = acceptor_listen((struct sockaddr *)&addr, sizeof addr, &port);
    CU_ASSERT_FATAL(listener >= 0);
    int client = connect_to(port);
    CU_ASSERT_FATAL(client >= 0);
    int served = accept_one(listener);
    CU_ASSERT_FATAL(served >= 0);
    close(served); /* the server closes first: its end of the port goes to TIME_WAIT */
    char byte;
    CU_ASSERT_EQUAL(read(client, &byte, 1), 0);
    close(client);
    close(listener);
    addr = loopback(port);
    int restarted = acceptor_listen((struct sockaddr *)&addr, sizeof addr, &again);
    CU_ASSERT(restarted >= 0);
    CU_ASSERT_EQUAL(again, port);
    if (restarted >= 0)
        close(restarted);
}

static void test_an_ipv6_socket_takes_ipv6_only(void)
{
    struct sockaddr_in6 addr = { .sin6_family = AF_INET6, .sin6_addr = IN6ADDR_ANY_INIT };
    unsigned port = 0;
    int listener = acceptor_listen((struct sockaddr *)&addr, sizeof addr, &port);
    if (listener < 0 && (errno == EAFNOSUPPORT || errno == EADDRNOTAVAIL)) {
        fprintf(stderr, "\n  (no IPv6 on this machine: only the refusal is checked)\n");
        return;
    }
    CU_ASSERT_FATAL(listener >= 0);
    int only = 0;
    socklen_t size = sizeof only;
    CU_ASSERT_EQUAL(getsockopt(listener, IPPROTO_IPV6, IPV6_V6ONLY, &only, &size), 0);
    CU_ASSERT_EQUAL(only, 1);
    /* So the same port is still free for IPv4. */
    struct sockaddr_in v4 = loopback(port);
    unsigned v4_port = 0;
    int v4_listener = acceptor_listen((struct sockaddr *)&v4, sizeof v4, &v4_port);
    CU_ASSERT(v4_listener >= 0);
    CU_ASSERT_EQUAL(v4_port, port);
    if (v4_listener >= 0)
        close(v4_listener);
    close(listener);
}

static void test_new_counts_are_zero_and_what_never_started_stops_as_nothing(void)
{
    acceptor_config_t cfg = { .max_open = 100, .per_address = 8 };
    acceptor_t *a = acceptor_new(&cfg);
    CU_ASSERT_PTR_NOT_NULL_FATAL(a);
    acceptor_stats_t stats = { 1, 1, 1 };
    acceptor_stats(a, &stats);
    CU_ASSERT_EQUAL(stats.open, 0);
    CU_ASSERT_EQUAL(stats.waiting, 0);
    CU_ASSERT_EQUAL(stats.refused, 0);
    acceptor_stop(a);
    acceptor_stop(a);
    acceptor_free(a);
    cfg.per_address = 0; /* no per-address table */
    a = acceptor_new(&cfg);
    CU_ASSERT_PTR_NOT_NULL(a);
    acceptor_free(a);
    acceptor_stop(NULL);
    acceptor_free(NULL);
}

int test_acceptor_register(void)
{
    CU_pSuite suite = CU_add_suite("acceptor", NULL, NULL);
    if (!suite)
        return CU_get_error();
    CU_ADD_TEST(suite, test_a_socket_on_port_0_names_its_port_and_takes_connections);
    CU_ADD_TEST(suite, test_a_second_server_on_a_bound_port_is_an_error);
    CU_ADD_TEST(suite, test_a_restart_binds_at_once_over_a_connection_in_time_wait);
    CU_ADD_TEST(suite, test_an_ipv6_socket_takes_ipv6_only);
    CU_ADD_TEST(suite, test_new_counts_are_zero_and_what_never_started_stops_as_nothing);
    return CU_get_error();
}
