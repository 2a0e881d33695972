/* Tests for api/webhooks/send.c against real receivers on 127.0.0.2 and
 * 127.0.0.1: a signed 200, a 500, a receiver that hangs, redirects (not
 * followed, followed, refused). Also no connection at all to what the policy
 * refuses, https with a certificate made here, with and without its CA, and
 * kept connections: reused only toward an address checked again. */
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <openssl/pem.h>
#include <openssl/x509v3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <netinet/in.h>
#include <unistd.h>

#include "../../../api/webhooks/send.h"
#include "../../../api/webhooks/sign.h"
#include "../../support/tests.h"
#include "receiver.h"
#include "webhooks_tests.h"

#define SECRET "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"
#define BODY "{\"type\":\"game.moved\",\"game\":\"abc\"}"
#define TIMESTAMP 1700000000

/* Loaded 2-core machines under sanitizers are slow: a margin, never a bound on speed. */
enum { DEADLINE_MS = 3000, HANG_DEADLINE_MS = 400, MARGIN_MS = 4000 };

static receiver_t listed, unlisted, secure;
static char dir[64], ca_path[128];
static bool started;

/* --- a self-signed certificate for 127.0.0.1, made at test time --- */

static bool add_extension(X509 *cert, int nid, const char *value)
{
    X509V3_CTX ctx;
    X509V3_set_ctx_nodb(&ctx);
    X509V3_set_ctx(&ctx, cert, cert, NULL, NULL, 0);
    X509_EXTENSION *ext = X509V3_EXT_conf_nid(NULL, &ctx, nid, value);
    bool ok = ext && X509_add_ext(cert, ext, -1) == 1;
    X509_EXTENSION_free(ext);
    return ok;
}

/* A server context whose certificate (written to ca_path) names IP 127.0.0.1. */
static SSL_CTX *make_server_tls(void)
{
    EVP_PKEY *key = EVP_PKEY_Q_keygen(NULL, NULL, "EC", "P-256");
    X509 *cert = X509_new();
    SSL_CTX *ctx = NULL;
    X509_NAME *name = cert ? X509_get_subject_name(cert) : NULL;
    bool ok = key && cert && X509_set_version(cert, 2) == 1
              && ASN1_INTEGER_set(X509_get_serialNumber(cert), 1) == 1
              && X509_gmtime_adj(X509_getm_notBefore(cert), -3600) && X509_gmtime_adj(X509_getm_notAfter(cert), 3600)
              && X509_NAME_add_entry_by_txt(name, "CN", MBSTRING_ASC, (const unsigned char *)"chessd webhook test",
                                            -1, -1, 0) == 1
              && X509_set_issuer_name(cert, name) == 1 && X509_set_pubkey(cert, key) == 1
              && add_extension(cert, NID_basic_constraints, "critical,CA:TRUE")
              && add_extension(cert, NID_subject_alt_name, "IP:127.0.0.1")
              && X509_sign(cert, key, EVP_sha256()) > 0;
    FILE *f = ok ? fopen(ca_path, "w") : NULL;
    ok = f && PEM_write_X509(f, cert) == 1;
    if (f)
        fclose(f);
    if (ok && (ctx = SSL_CTX_new(TLS_server_method()))
        && (SSL_CTX_use_certificate(ctx, cert) != 1 || SSL_CTX_use_PrivateKey(ctx, key) != 1)) {
        SSL_CTX_free(ctx);
        ctx = NULL;
    }
    X509_free(cert);
    EVP_PKEY_free(key);
    return ctx;
}

int webhooks_send_setup(void)
{
    if (!tests_temp_dir(dir, "webhooks"))
        return -1;
    snprintf(ca_path, sizeof ca_path, "%s/ca.pem", dir);
    SSL_CTX *tls = make_server_tls();
    if (!tls) {
        fprintf(stderr, "\nwebhooks: cannot make a test certificate\n");
        return -1;
    }
    bool ok = receiver_start(&listed, "127.0.0.2", NULL) && receiver_start(&unlisted, "127.0.0.1", NULL)
              && receiver_start(&secure, "127.0.0.1", tls);
    SSL_CTX_free(tls);
    started = ok;
    return ok ? 0 : -1;
}

int webhooks_send_teardown(void)
{
    receiver_stop(&listed);
    receiver_stop(&unlisted);
    receiver_stop(&secure);
    tests_remove_dir(dir);
    return 0;
}

/* --- deliveries --- */

static webhook_allow_t policy(const char *text)
{
    webhook_allow_t allow;
    char err[200];
    CU_ASSERT_TRUE(webhook_allow_parse(text, &allow, err, sizeof err));
    return allow;
}

static char signature[WEBHOOK_SIGNATURE_SIZE];

/* A request for url with BODY, signed with SECRET. */
static webhook_send_request_t request(const char *url, const webhook_allow_t *allow)
{
    const char *secrets[] = { SECRET };
    CU_ASSERT_TRUE(webhook_sign(secrets, 1, "msg_test", TIMESTAMP, BODY, strlen(BODY), signature));
    return (webhook_send_request_t){ .url = url, .body = BODY, .body_length = strlen(BODY), .id = "msg_test",
                                     .timestamp = TIMESTAMP, .signature = signature, .allow = allow,
                                     .deadline_ms = DEADLINE_MS };
}

static void url_of(const receiver_t *r, const char *scheme, const char *path, char *out, size_t size)
{
    snprintf(out, size, "%s://%s:%u%s", scheme, r->host, r->port, path);
}

static void script_one(receiver_t *r, int status, const char *location, bool hang)
{
    receiver_reply_t reply = { .status = status, .hang = hang };
    snprintf(reply.location, sizeof reply.location, "%s", location ? location : "");
    receiver_script(r, &reply, 1);
}

/* Whether the signature header verifies the id, timestamp and body the
 * receiver got, by OpenSSL's HMAC directly. */
static bool signature_verifies(receiver_t *r)
{
    char id[128], stamp[32], header[WEBHOOK_SIGNATURE_SIZE];
    receiver_header(r, "webhook-id", id, sizeof id);
    receiver_header(r, "webhook-timestamp", stamp, sizeof stamp);
    receiver_header(r, "webhook-signature", header, sizeof header);
    unsigned char key[32], mac[32];
    int key_length = EVP_DecodeBlock(key, (const unsigned char *)SECRET + 6, (int)strlen(SECRET) - 6);
    char content[512];
    pthread_mutex_lock(&r->lock);
    int n = snprintf(content, sizeof content, "%s.%s.%.*s", id, stamp, (int)r->body_length, r->body);
    pthread_mutex_unlock(&r->lock);
    unsigned int mac_length = 0;
    if (key_length != 24 || !HMAC(EVP_sha256(), key, key_length, (unsigned char *)content, (size_t)n, mac, &mac_length))
        return false;
    char want[64] = "v1,";
    EVP_EncodeBlock((unsigned char *)want + 3, mac, (int)mac_length);
    return !strcmp(header, want);
}

static void test_a_200_is_delivered_signed(void)
{
    CU_ASSERT_TRUE_FATAL(started);
    webhook_allow_t allow = policy("127.0.0.2/32");
    char url[128], value[256];
    url_of(&listed, "http", "/hook?x=1", url, sizeof url);
    script_one(&listed, 200, NULL, false);
    webhook_send_request_t req = request(url, &allow);
    webhook_send_result_t result;
    webhook_send(&req, &result);
    CU_ASSERT_EQUAL(result.outcome, WEBHOOK_DELIVERED);
    CU_ASSERT_EQUAL(result.status, 200);
    CU_ASSERT_EQUAL(receiver_requests(&listed), 1);
    CU_ASSERT_TRUE(strncmp(listed.head, "POST /hook?x=1 HTTP/1.1\r\n", 25) == 0);
    const struct {
        const char *name, *value;
    } headers[] = { { "Content-Type", "application/json" }, { "User-Agent", "chessd-webhooks/1" },
                    { "webhook-id", "msg_test" },           { "webhook-timestamp", "1700000000" },
                    { "Connection", "close" },              { "Content-Length", "34" } };
    for (size_t i = 0; i < sizeof headers / sizeof headers[0]; i++) {
        receiver_header(&listed, headers[i].name, value, sizeof value);
        CU_ASSERT_STRING_EQUAL(value, headers[i].value);
    }
    snprintf(url, sizeof url, "127.0.0.2:%u", listed.port);
    receiver_header(&listed, "Host", value, sizeof value);
    CU_ASSERT_STRING_EQUAL(value, url);
    CU_ASSERT_STRING_EQUAL(listed.body, BODY);
    CU_ASSERT_TRUE(signature_verifies(&listed));
    CU_ASSERT_PTR_NULL(strstr(result.detail, "whsec_"));
}

static void test_a_500_is_an_http_status(void)
{
    webhook_allow_t allow = policy("127.0.0.2/32");
    char url[128];
    url_of(&listed, "http", "/", url, sizeof url);
    script_one(&listed, 500, NULL, false);
    webhook_send_request_t req = request(url, &allow);
    webhook_send_result_t result;
    webhook_send(&req, &result);
    CU_ASSERT_EQUAL(result.outcome, WEBHOOK_HTTP_STATUS);
    CU_ASSERT_EQUAL(result.status, 500);
    CU_ASSERT_STRING_EQUAL(webhook_outcome_code(result.outcome), "http_status");
}

static void test_a_receiver_that_never_answers_times_out(void)
{
    webhook_allow_t allow = policy("127.0.0.2/32");
    char url[128];
    url_of(&listed, "http", "/", url, sizeof url);
    script_one(&listed, 200, NULL, true);
    webhook_send_request_t req = request(url, &allow);
    req.deadline_ms = HANG_DEADLINE_MS;
    webhook_send_result_t result;
    long start = tests_monotonic_ms();
    webhook_send(&req, &result);
    long took = tests_monotonic_ms() - start;
    CU_ASSERT_EQUAL(result.outcome, WEBHOOK_TIMEOUT);
    CU_ASSERT_TRUE(took >= HANG_DEADLINE_MS - 1);
    CU_ASSERT_TRUE(took < HANG_DEADLINE_MS + MARGIN_MS);
    CU_ASSERT_TRUE(result.elapsed_ms >= HANG_DEADLINE_MS - 1);
    CU_ASSERT_EQUAL(receiver_requests(&listed), 1);
}

static void test_a_302_is_not_followed_by_default(void)
{
    webhook_allow_t allow = policy("127.0.0.2/32");
    char url[128], location[128];
    url_of(&listed, "http", "/", url, sizeof url);
    url_of(&listed, "http", "/moved", location, sizeof location);
    script_one(&listed, 302, location, false);
    webhook_send_request_t req = request(url, &allow);
    webhook_send_result_t result;
    webhook_send(&req, &result);
    CU_ASSERT_EQUAL(result.outcome, WEBHOOK_REDIRECT_NOT_FOLLOWED);
    CU_ASSERT_EQUAL(result.status, 302);
    CU_ASSERT_EQUAL(result.hops, 0);
    CU_ASSERT_EQUAL(receiver_connections(&listed), 1);
}

static void test_a_302_is_followed_with_a_budget_of_one(void)
{
    webhook_allow_t allow = policy("127.0.0.2/32");
    char url[128];
    url_of(&listed, "http", "/", url, sizeof url);
    receiver_reply_t replies[] = { { .status = 302, .location = "/moved?y=2" }, { .status = 204 } };
    receiver_script(&listed, replies, 2);
    webhook_send_request_t req = request(url, &allow);
    req.redirects = 1;
    webhook_send_result_t result;
    webhook_send(&req, &result);
    CU_ASSERT_EQUAL(result.outcome, WEBHOOK_DELIVERED);
    CU_ASSERT_EQUAL(result.status, 204);
    CU_ASSERT_EQUAL(result.hops, 1);
    CU_ASSERT_EQUAL(receiver_requests(&listed), 2);
    CU_ASSERT_TRUE(strncmp(listed.head, "POST /moved?y=2 HTTP/1.1\r\n", 26) == 0);
    CU_ASSERT_STRING_EQUAL(listed.body, BODY); /* the same POST, body and signature */
    CU_ASSERT_TRUE(signature_verifies(&listed));
    /* A second redirect with one hop allowed is not followed. */
    receiver_reply_t twice[] = { { .status = 307, .location = "/a" }, { .status = 308, .location = "/b" } };
    receiver_script(&listed, twice, 2);
    webhook_send(&req, &result);
    CU_ASSERT_EQUAL(result.outcome, WEBHOOK_REDIRECT_NOT_FOLLOWED);
    CU_ASSERT_EQUAL(result.status, 308);
}

static void test_a_redirect_to_an_unlisted_loopback_is_refused(void)
{
    webhook_allow_t allow = policy("0.0.0.0/0,127.0.0.2/32");
    char url[128], location[128];
    url_of(&listed, "http", "/", url, sizeof url);
    url_of(&unlisted, "http", "/", location, sizeof location);
    script_one(&listed, 302, location, false);
    script_one(&unlisted, 200, NULL, false);
    webhook_send_request_t req = request(url, &allow);
    req.redirects = 3;
    webhook_send_result_t result;
    webhook_send(&req, &result);
    CU_ASSERT_EQUAL(result.outcome, WEBHOOK_REFUSED);
    CU_ASSERT_EQUAL(result.refusal, WEBHOOK_REFUSE_PRIVATE);
    CU_ASSERT_EQUAL(result.hops, 1);
    CU_ASSERT_EQUAL(receiver_connections(&unlisted), 0);
    /* A redirect to a scheme that is not http is refused as well. */
    script_one(&listed, 301, "file:///etc/passwd", false);
    webhook_send(&req, &result);
    CU_ASSERT_EQUAL(result.outcome, WEBHOOK_REFUSED);
    CU_ASSERT_EQUAL(result.refusal, WEBHOOK_REFUSE_SCHEME);
}

static void test_a_refused_destination_is_never_connected_to(void)
{
    char url[128];
    url_of(&unlisted, "http", "/", url, sizeof url);
    script_one(&unlisted, 200, NULL, false);
    const struct {
        const char *policy;
        webhook_refusal_t want;
    } rows[] = { { "127.0.0.2/32", WEBHOOK_REFUSE_NOT_ALLOWED },
                 { "0.0.0.0/0", WEBHOOK_REFUSE_PRIVATE },
                 { "localhost", WEBHOOK_REFUSE_NOT_ALLOWED },
                 { "", WEBHOOK_REFUSE_NOT_ALLOWED } };
    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
        webhook_allow_t allow = policy(rows[i].policy);
        webhook_send_request_t req = request(url, &allow);
        webhook_send_result_t result;
        webhook_send(&req, &result);
        CU_ASSERT_EQUAL(result.outcome, WEBHOOK_REFUSED);
        CU_ASSERT_EQUAL(result.refusal, rows[i].want);
    }
    /* A listed name that resolves to loopback is refused after the lookup. */
    webhook_allow_t allow = policy("localhost");
    char named[128];
    snprintf(named, sizeof named, "http://localhost:%u/", unlisted.port);
    webhook_send_request_t req = request(named, &allow);
    webhook_send_result_t result;
    webhook_send(&req, &result);
    CU_ASSERT_EQUAL(result.outcome, WEBHOOK_REFUSED);
    CU_ASSERT_EQUAL(result.refusal, WEBHOOK_REFUSE_PRIVATE);
    CU_ASSERT_EQUAL(receiver_connections(&unlisted), 0);
}

static void test_a_closed_port_fails_to_connect(void)
{
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in address = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(0x7f000002) };
    socklen_t length = sizeof address;
    CU_ASSERT_EQUAL_FATAL(bind(fd, (struct sockaddr *)&address, sizeof address), 0);
    getsockname(fd, (struct sockaddr *)&address, &length);
    close(fd); /* nothing listens there now */
    webhook_allow_t allow = policy("127.0.0.2/32");
    char url[128];
    snprintf(url, sizeof url, "http://127.0.0.2:%u/", ntohs(address.sin_port));
    webhook_send_request_t req = request(url, &allow);
    webhook_send_result_t result;
    webhook_send(&req, &result);
    CU_ASSERT_EQUAL(result.outcome, WEBHOOK_CONNECT_FAILED);
}

static void test_a_body_over_the_bound_is_not_sent(void)
{
    webhook_allow_t allow = policy("127.0.0.2/32");
    char url[128];
    url_of(&listed, "http", "/", url, sizeof url);
    script_one(&listed, 200, NULL, false);
    webhook_send_request_t req = request(url, &allow);
    char *big = calloc(1, WEBHOOK_BODY_MAX + 1);
    CU_ASSERT_PTR_NOT_NULL_FATAL(big);
    req.body = big;
    req.body_length = WEBHOOK_BODY_MAX + 1;
    webhook_send_result_t result;
    webhook_send(&req, &result);
    CU_ASSERT_EQUAL(result.outcome, WEBHOOK_INVALID_REQUEST);
    req.signature = "v1,x\r\nX-Injected: 1";
    req.body_length = 2;
    webhook_send(&req, &result);
    CU_ASSERT_EQUAL(result.outcome, WEBHOOK_INVALID_REQUEST);
    CU_ASSERT_EQUAL(receiver_connections(&listed), 0);
    free(big);
}

static void test_https_is_delivered_with_the_ca_file(void)
{
    webhook_allow_t allow = policy("127.0.0.1/32");
    char url[128];
    url_of(&secure, "https", "/tls", url, sizeof url);
    script_one(&secure, 200, NULL, false);
    webhook_send_request_t req = request(url, &allow);
    req.ca_file = ca_path;
    webhook_send_result_t result;
    webhook_send(&req, &result);
    CU_ASSERT_EQUAL(result.outcome, WEBHOOK_DELIVERED);
    if (result.outcome != WEBHOOK_DELIVERED)
        fprintf(stderr, "\nhttps: %s: %s\n", webhook_outcome_code(result.outcome), result.detail);
    CU_ASSERT_EQUAL(receiver_requests(&secure), 1);
    CU_ASSERT_TRUE(signature_verifies(&secure));
}

static void test_https_without_the_ca_file_fails_tls(void)
{
    webhook_allow_t allow = policy("127.0.0.1/32");
    char url[128];
    url_of(&secure, "https", "/tls", url, sizeof url);
    script_one(&secure, 200, NULL, false);
    webhook_send_request_t req = request(url, &allow);
    webhook_send_result_t result;
    webhook_send(&req, &result);
    CU_ASSERT_EQUAL(result.outcome, WEBHOOK_TLS_FAILED);
    CU_ASSERT_PTR_NOT_NULL(strstr(result.detail, "certificate"));
    CU_ASSERT_EQUAL(receiver_requests(&secure), 0);
}

/* --- kept connections --- */

static void script_keep(receiver_t *r, bool serve_more)
{
    receiver_reply_t reply = { .status = 200, .keep_alive = true, .serve_more = serve_more };
    receiver_script(r, &reply, 1);
}

static void test_a_kept_connection_carries_the_next_delivery(void)
{
    webhook_allow_t allow = policy("127.0.0.2/32");
    char url[128], value[64];
    url_of(&listed, "http", "/", url, sizeof url);
    script_keep(&listed, true);
    webhook_conn_t conn;
    webhook_conn_init(&conn);
    webhook_send_request_t req = request(url, &allow);
    req.conn = &conn;
    webhook_send_result_t result;
    for (int i = 0; i < 3; i++) {
        webhook_send(&req, &result);
        CU_ASSERT_EQUAL(result.outcome, WEBHOOK_DELIVERED);
        CU_ASSERT_TRUE(conn.fd >= 0);
    }
    CU_ASSERT_EQUAL(receiver_requests(&listed), 3);
    CU_ASSERT_EQUAL(receiver_connections(&listed), 1);
    receiver_header(&listed, "Connection", value, sizeof value);
    CU_ASSERT_STRING_EQUAL(value, "");
    CU_ASSERT_TRUE(signature_verifies(&listed));
    webhook_conn_close(&conn);
    CU_ASSERT_EQUAL(conn.fd, -1);
}

static void test_a_kept_connection_goes_only_where_the_policy_allows_again(void)
{
    webhook_allow_t allow = policy("127.0.0.2/32"), other = policy("127.0.0.1/32");
    char url[128];
    url_of(&listed, "http", "/", url, sizeof url);
    script_keep(&listed, true);
    webhook_conn_t conn;
    webhook_conn_init(&conn);
    webhook_send_request_t req = request(url, &allow);
    req.conn = &conn;
    webhook_send_result_t result;
    webhook_send(&req, &result);
    CU_ASSERT_EQUAL(result.outcome, WEBHOOK_DELIVERED);
    CU_ASSERT_TRUE_FATAL(conn.fd >= 0);
    /* The same URL under a policy that no longer lists its address: refused, nothing sent on the kept connection. */
    req.allow = &other;
    webhook_send(&req, &result);
    CU_ASSERT_EQUAL(result.outcome, WEBHOOK_REFUSED);
    CU_ASSERT_EQUAL(receiver_requests(&listed), 1);
    /* Another destination: a connection of its own; the kept one is closed, not used. */
    char elsewhere[128];
    url_of(&unlisted, "http", "/", elsewhere, sizeof elsewhere);
    script_one(&unlisted, 200, NULL, false);
    req.url = elsewhere;
    webhook_send(&req, &result);
    CU_ASSERT_EQUAL(result.outcome, WEBHOOK_DELIVERED);
    CU_ASSERT_EQUAL(receiver_connections(&unlisted), 1);
    CU_ASSERT_EQUAL(receiver_requests(&listed), 1);
    CU_ASSERT_EQUAL(conn.fd, -1); /* the answer said Connection: close */
    webhook_conn_close(&conn);
}

static void test_a_kept_connection_its_peer_closed_is_replaced(void)
{
    webhook_allow_t allow = policy("127.0.0.2/32");
    char url[128];
    url_of(&listed, "http", "/", url, sizeof url);
    script_keep(&listed, false); /* says keep-alive, then closes */
    webhook_conn_t conn;
    webhook_conn_init(&conn);
    webhook_send_request_t req = request(url, &allow);
    req.conn = &conn;
    webhook_send_result_t result;
    for (int i = 0; i < 2; i++) {
        webhook_send(&req, &result);
        CU_ASSERT_EQUAL(result.outcome, WEBHOOK_DELIVERED);
    }
    CU_ASSERT_EQUAL(receiver_requests(&listed), 2);
    CU_ASSERT_EQUAL(receiver_connections(&listed), 2);
    webhook_conn_close(&conn);
}

static void test_a_connection_is_not_kept_after_connection_close(void)
{
    webhook_allow_t allow = policy("127.0.0.2/32");
    char url[128];
    url_of(&listed, "http", "/", url, sizeof url);
    script_one(&listed, 200, NULL, false);
    webhook_conn_t conn;
    webhook_conn_init(&conn);
    webhook_send_request_t req = request(url, &allow);
    req.conn = &conn;
    webhook_send_result_t result;
    webhook_send(&req, &result);
    CU_ASSERT_EQUAL(result.outcome, WEBHOOK_DELIVERED);
    CU_ASSERT_EQUAL(conn.fd, -1);
}

void webhooks_send_tests_add(CU_pSuite suite)
{
    CU_add_test(suite, "a 200 is delivered, signed", test_a_200_is_delivered_signed);
    CU_add_test(suite, "a 500 is an http_status", test_a_500_is_an_http_status);
    CU_add_test(suite, "a receiver that never answers times out", test_a_receiver_that_never_answers_times_out);
    CU_add_test(suite, "a 302 is not followed by default", test_a_302_is_not_followed_by_default);
    CU_add_test(suite, "a 302 is followed with a budget of one", test_a_302_is_followed_with_a_budget_of_one);
    CU_add_test(suite, "a redirect to an unlisted loopback is refused",
                test_a_redirect_to_an_unlisted_loopback_is_refused);
    CU_add_test(suite, "a refused destination is never connected to", test_a_refused_destination_is_never_connected_to);
    CU_add_test(suite, "a closed port fails to connect", test_a_closed_port_fails_to_connect);
    CU_add_test(suite, "a body over the bound is not sent", test_a_body_over_the_bound_is_not_sent);
    CU_add_test(suite, "https is delivered with the CA file", test_https_is_delivered_with_the_ca_file);
    CU_add_test(suite, "https without the CA file fails TLS", test_https_without_the_ca_file_fails_tls);
    CU_add_test(suite, "a kept connection carries the next delivery", test_a_kept_connection_carries_the_next_delivery);
    CU_add_test(suite, "a kept connection goes only where the policy allows again",
                test_a_kept_connection_goes_only_where_the_policy_allows_again);
    CU_add_test(suite, "a kept connection its peer closed is replaced",
                test_a_kept_connection_its_peer_closed_is_replaced);
    CU_add_test(suite, "a connection is not kept after Connection: close",
                test_a_connection_is_not_kept_after_connection_close);
}
