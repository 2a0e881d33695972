/* Tests for api/play/http_client.c, the HTTP client of `chessd play
 * --server`: URL parsing, and one request against a scripted server on
 * loopback: chunked decoding, the size bound and the deadline. */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "../../../api/play/http_client.h"
#include "../../support/tests.h"

static void test_url_parsing(void)
{
    http_client_url_t url;
    char err[256];
    CU_ASSERT_TRUE(http_client_parse_url("http://127.0.0.1:8080", &url, err, sizeof err));
    CU_ASSERT_STRING_EQUAL(url.host, "127.0.0.1");
    CU_ASSERT_STRING_EQUAL(url.port, "8080");
    CU_ASSERT_STRING_EQUAL(url.base_path, "");
    CU_ASSERT_TRUE(http_client_parse_url("http://[::1]/chess/", &url, err, sizeof err));
    CU_ASSERT_STRING_EQUAL(url.host, "::1");
    CU_ASSERT_STRING_EQUAL(url.port, "80");
    CU_ASSERT_STRING_EQUAL(url.host_header, "[::1]");
    CU_ASSERT_STRING_EQUAL(url.base_path, "/chess");
    CU_ASSERT_TRUE(http_client_parse_url("https://example.com", &url, err, sizeof err));
    CU_ASSERT_TRUE(url.https);
    CU_ASSERT_STRING_EQUAL(url.port, "443");
    CU_ASSERT_STRING_EQUAL(url.host_header, "example.com");
    CU_ASSERT_TRUE(http_client_parse_url("https://example.com:8443", &url, err, sizeof err));
    CU_ASSERT_STRING_EQUAL(url.host_header, "example.com:8443");
    CU_ASSERT_FALSE(http_client_parse_url("ftp://example.com", &url, err, sizeof err));
    CU_ASSERT_FALSE(http_client_parse_url("http://user:pw@example.com", &url, err, sizeof err));
    CU_ASSERT_FALSE(http_client_parse_url("http://example.com:99999", &url, err, sizeof err));
    CU_ASSERT_FALSE(http_client_parse_url("http://example.com/a?b", &url, err, sizeof err));
    CU_ASSERT_FALSE(http_client_parse_url("http://", &url, err, sizeof err));
}

/* A one-connection server on loopback that reads the request head and sends `answer` (NULL: never answers). */
typedef struct {
    int listener;
    const char *answer;
    char request[4096];
} scripted_t;

static void *scripted_serve(void *arg)
{
    scripted_t *s = arg;
    int fd = accept(s->listener, NULL, NULL);
    if (fd < 0)
        return NULL;
    size_t n = 0;
    while (n + 1 < sizeof s->request && !strstr(s->request, "\r\n\r\n")) {
        ssize_t got = read(fd, s->request + n, sizeof s->request - 1 - n);
        if (got <= 0)
            break;
        n += (size_t)got;
        s->request[n] = '\0';
    }
    if (s->answer)
        (void)!write(fd, s->answer, strlen(s->answer));
    else
        usleep(600 * 1000);
    close(fd);
    return NULL;
}

/* Runs one GET against a scripted answer. */
static bool scripted_get(const char *answer, size_t max_body, http_client_response_t *res, char *err, size_t err_size,
                         scripted_t *s)
{
    memset(s, 0, sizeof *s);
    s->answer = answer;
    s->listener = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in addr = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
    socklen_t size = sizeof addr;
    CU_ASSERT_FATAL(s->listener >= 0 && bind(s->listener, (struct sockaddr *)&addr, sizeof addr) == 0
                    && listen(s->listener, 1) == 0
                    && getsockname(s->listener, (struct sockaddr *)&addr, &size) == 0);
    char text[64];
    snprintf(text, sizeof text, "http://127.0.0.1:%d/base", ntohs(addr.sin_port));
    http_client_url_t url;
    CU_ASSERT_FATAL(http_client_parse_url(text, &url, err, err_size));
    pthread_t thread;
    CU_ASSERT_FATAL(pthread_create(&thread, NULL, scripted_serve, s) == 0);
    bool ok = http_client_request(&url, "GET", "/x", "Authorization: Bearer secret\r\n", NULL, 0, 300, max_body, res,
                                  err, err_size);
    pthread_join(thread, NULL);
    close(s->listener);
    return ok;
}

static void test_client_decodes_a_chunked_answer(void)
{
    http_client_response_t res;
    char err[256];
    scripted_t s;
    bool ok = scripted_get("HTTP/1.1 422 Unprocessable\r\nContent-Type: application/problem+json\r\n"
                           "Transfer-Encoding: chunked\r\n\r\n5;ext=1\r\n{\"a\":\r\n3\r\n12}\r\n0\r\nX-T: 1\r\n\r\n",
                           1024, &res, err, sizeof err, &s);
    CU_ASSERT_TRUE(ok);
    CU_ASSERT_EQUAL(res.status, 422);
    CU_ASSERT_STRING_EQUAL(res.content_type, "application/problem+json");
    CU_ASSERT_EQUAL(res.body_length, 8);
    CU_ASSERT_STRING_EQUAL(res.body ? res.body : "", "{\"a\":12}");
    CU_ASSERT_EQUAL(strncmp(s.request, "GET /base/x HTTP/1.1\r\n", 22), 0);
    CU_ASSERT_PTR_NOT_NULL(strstr(s.request, "\r\nAuthorization: Bearer secret\r\n"));
    http_client_response_free(&res);
}

static void test_client_bounds_the_answer_and_the_wait(void)
{
    http_client_response_t res;
    char err[256];
    scripted_t s;
    CU_ASSERT_FALSE(scripted_get("HTTP/1.1 200 OK\r\nContent-Length: 2000\r\n\r\n", 1024, &res, err, sizeof err, &s));
    CU_ASSERT_PTR_NOT_NULL(strstr(err, "over 1024 bytes"));
    CU_ASSERT_FALSE(scripted_get("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n", 1024, &res, err,
                                 sizeof err, &s));
    CU_ASSERT_PTR_NOT_NULL(strstr(err, "malformed"));
    long start = tests_monotonic_ms();
    CU_ASSERT_FALSE(scripted_get(NULL, 1024, &res, err, sizeof err, &s));
    CU_ASSERT_PTR_NOT_NULL(strstr(err, "in time"));
    CU_ASSERT(tests_monotonic_ms() - start < 2000);
}

int test_http_client_register(void)
{
    CU_pSuite suite = CU_add_suite("http_client", NULL, NULL);
    if (!suite)
        return -1;
    CU_add_test(suite, "url_parsing", test_url_parsing);
    CU_add_test(suite, "client_decodes_a_chunked_answer", test_client_decodes_a_chunked_answer);
    CU_add_test(suite, "client_bounds_the_answer_and_the_wait", test_client_bounds_the_answer_and_the_wait);
    return 0;
}
