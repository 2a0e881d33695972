/* Tests for api/http/cors.c: an origin list is read whole or refused with a
 * reason; an origin is matched whole (no prefix, no other scheme or port);
 * a preflight is granted only for a listed origin, one of the path's
 * methods and headers chessd reads, and its refusals echo nothing unsafe. */
#include <string.h>

#include "../../../api/http/cors.h"
#include "../../support/tests.h"

static bool parse(const char *list, cors_t *c)
{
    char err[200] = "";
    bool ok = cors_parse(list, c, err, sizeof err);
    if (!ok)
        CU_ASSERT(err[0] != '\0'); /* every refusal says why */
    return ok;
}

static void test_a_list_is_read_in_lower_case_without_default_ports(void)
{
    cors_t c;
    CU_ASSERT_FATAL(parse(" https://App.Example , http://localhost:5173,https://a.example:443,http://[::1]:8080", &c));
    CU_ASSERT_FALSE(c.any);
    CU_ASSERT_EQUAL_FATAL(c.count, 4);
    CU_ASSERT_STRING_EQUAL(c.origins[0], "https://app.example");
    CU_ASSERT_STRING_EQUAL(c.origins[1], "http://localhost:5173");
    CU_ASSERT_STRING_EQUAL(c.origins[2], "https://a.example");
    CU_ASSERT_STRING_EQUAL(c.origins[3], "http://[::1]:8080");
    CU_ASSERT_FATAL(parse(" * ", &c));
    CU_ASSERT_TRUE(c.any);
}

static void test_what_is_not_an_origin_is_refused(void)
{
    static const char *const bad[] = {
        "app.example",                  /* no scheme */
        "ftp://app.example",            /* another scheme */
        "https://app.example/",         /* a path */
        "https://app.example?x=1",      /* a query */
        "https://user@app.example",     /* a user */
        "https://*.app.example",        /* a pattern */
        "https://app..example",         /* an empty label */
        "https://app.example:0",        /* port 0 */
        "https://app.example:65536",    /* past the last port */
        "https://app.example:080",      /* a leading zero */
        "https://[::1",                 /* an open bracket */
        "https://app.example,",         /* an empty origin */
        "https://a.example, *",         /* '*' in a list */
        "https://app.example\x01",      /* a control */
        "",                             /* nothing */
    };
    cors_t c;
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        CU_ASSERT_FALSE(parse(bad[i], &c));
    }
    char err[200];
    CU_ASSERT_FALSE(cors_parse("https://*.app.example", &c, err, sizeof err));
    CU_ASSERT_PTR_NOT_NULL(strstr(err, "pattern"));
}

static void test_a_list_has_a_bound_on_origins_and_bytes(void)
{
    char list[CORS_ORIGINS_MAX * 32 + 64] = "";
    size_t used = 0;
    for (int i = 0; i <= CORS_ORIGINS_MAX; i++)
        used += (size_t)snprintf(list + used, sizeof list - used, "%shttps://h%d.example", i ? "," : "", i);
    cors_t c;
    CU_ASSERT_FALSE(parse(list, &c)); /* one too many */
    *strrchr(list, ',') = '\0';
    CU_ASSERT_TRUE(parse(list, &c));
    CU_ASSERT_EQUAL(c.count, CORS_ORIGINS_MAX);

    char origin[CORS_ORIGIN_MAX + 16] = "https://";
    memset(origin + 8, 'a', CORS_ORIGIN_MAX - 8 + 1);
    origin[CORS_ORIGIN_MAX + 1] = '\0'; /* a byte too long */
    CU_ASSERT_FALSE(parse(origin, &c));
    origin[CORS_ORIGIN_MAX] = '\0';
    CU_ASSERT_TRUE(parse(origin, &c));
}

static void test_an_origin_is_matched_whole(void)
{
    cors_t c;
    CU_ASSERT_FATAL(parse("https://app.example,http://localhost:5173", &c));
    CU_ASSERT_STRING_EQUAL(cors_allow_origin(&c, "https://app.example"), "https://app.example");
    CU_ASSERT_STRING_EQUAL(cors_allow_origin(&c, "HTTPS://APP.example"), "https://app.example");
    CU_ASSERT_PTR_NULL(cors_allow_origin(&c, "https://app.example.evil"));
    CU_ASSERT_PTR_NULL(cors_allow_origin(&c, "https://evil.app.example"));
    CU_ASSERT_PTR_NULL(cors_allow_origin(&c, "http://app.example"));
    CU_ASSERT_PTR_NULL(cors_allow_origin(&c, "http://localhost:5174"));
    CU_ASSERT_PTR_NULL(cors_allow_origin(&c, "null"));
    CU_ASSERT_PTR_NULL(cors_allow_origin(&c, NULL));
    CU_ASSERT_PTR_NULL(cors_allow_origin(NULL, "https://app.example"));
    CU_ASSERT_FATAL(parse("*", &c));
    CU_ASSERT_STRING_EQUAL(cors_allow_origin(&c, "https://anything.example"), "*");
    char longer[CORS_ORIGIN_MAX + 2];
    memset(longer, 'a', sizeof longer - 1);
    longer[sizeof longer - 1] = '\0';
    CU_ASSERT_PTR_NULL(cors_allow_origin(&c, longer)); /* never, even with '*' */
}

static cors_status_t preflight(const cors_t *c, const char *origin, const char *method, const char *headers,
                               cors_grant_t *grant, char *detail)
{
    return cors_preflight(c, origin, method, headers, "GET, HEAD, POST", grant, detail, 320);
}

static void test_a_preflight_grants_the_method_and_the_headers_asked_for(void)
{
    cors_t c;
    CU_ASSERT_FATAL(parse("https://app.example", &c));
    cors_grant_t g;
    char detail[320] = "";
    CU_ASSERT_EQUAL(preflight(&c, "https://app.example", "POST", "content-type,AUTHORIZATION , if-match", &g, detail),
                    CORS_OK);
    CU_ASSERT_STRING_EQUAL(g.allow_origin, "https://app.example");
    /* In chessd's order and spelling, each once. */
    CU_ASSERT_STRING_EQUAL(g.allow_headers, "Authorization, Content-Type, If-Match");
    CU_ASSERT_EQUAL(preflight(&c, "https://app.example", "GET", NULL, &g, detail), CORS_OK);
    CU_ASSERT_STRING_EQUAL(g.allow_headers, "");
    CU_ASSERT_EQUAL(preflight(&c, "https://app.example", "GET", "", &g, detail), CORS_OK);
    char all[400];
    snprintf(all, sizeof all, "%s, accept", CORS_REQUEST_HEADERS);
    CU_ASSERT_EQUAL(preflight(&c, "https://app.example", "GET", all, &g, detail), CORS_OK);
    CU_ASSERT_STRING_EQUAL(g.allow_headers, CORS_REQUEST_HEADERS);
}

static void test_a_preflight_is_refused_for_an_origin_a_method_or_a_header(void)
{
    cors_t c;
    CU_ASSERT_FATAL(parse("https://app.example", &c));
    cors_grant_t g;
    char detail[320] = "";
    CU_ASSERT_EQUAL(preflight(&c, "https://evil.example", "POST", NULL, &g, detail), CORS_EORIGIN);
    CU_ASSERT_PTR_NULL(strstr(detail, "evil")); /* the origin is not echoed */
    CU_ASSERT_EQUAL(preflight(&c, NULL, "POST", NULL, &g, detail), CORS_EORIGIN);
    CU_ASSERT_EQUAL(preflight(&c, "https://app.example", "DELETE", NULL, &g, detail), CORS_EMETHOD);
    CU_ASSERT_PTR_NOT_NULL(strstr(detail, "DELETE"));
    CU_ASSERT_PTR_NOT_NULL(strstr(detail, "GET, HEAD, POST"));
    CU_ASSERT_EQUAL(preflight(&c, "https://app.example", "post", NULL, &g, detail), CORS_EMETHOD); /* case counts */
    CU_ASSERT_EQUAL(preflight(&c, "https://app.example", "", NULL, &g, detail), CORS_EMETHOD);
    CU_ASSERT_EQUAL(preflight(&c, "https://app.example", "<script>", NULL, &g, detail), CORS_EMETHOD);
    CU_ASSERT_PTR_NULL(strstr(detail, "<script>")); /* not a token: not echoed */
    CU_ASSERT_EQUAL(preflight(&c, "https://app.example", "POST", "content-type, x-secret", &g, detail), CORS_EHEADER);
    CU_ASSERT_PTR_NOT_NULL(strstr(detail, "x-secret"));
    CU_ASSERT_EQUAL(preflight(&c, "https://app.example", "POST", "cookie", &g, detail), CORS_EHEADER);
    CU_ASSERT_EQUAL(preflight(&c, "https://app.example", "POST", "a<b>", &g, detail), CORS_EHEADER);
    CU_ASSERT_PTR_NULL(strstr(detail, "<b>"));
}

int test_cors_register(void)
{
    CU_pSuite suite = CU_add_suite("cors", NULL, NULL);
    if (!suite)
        return -1;
    CU_add_test(suite, "a list is read in lower case without default ports",
                test_a_list_is_read_in_lower_case_without_default_ports);
    CU_add_test(suite, "what is not an origin is refused", test_what_is_not_an_origin_is_refused);
    CU_add_test(suite, "a list has a bound on origins and bytes", test_a_list_has_a_bound_on_origins_and_bytes);
    CU_add_test(suite, "an origin is matched whole", test_an_origin_is_matched_whole);
    CU_add_test(suite, "a preflight grants the method and the headers asked for",
                test_a_preflight_grants_the_method_and_the_headers_asked_for);
    CU_add_test(suite, "a preflight is refused for an origin, a method or a header",
                test_a_preflight_is_refused_for_an_origin_a_method_or_a_header);
    return 0;
}
