/* Tests for api/http/router.c: routing over a caller's table. A path with
 * routes for other methods answers 405 with the Allow header the table
 * implies (GET brings HEAD); '*' hands one segment to the handler; the query
 * must hold only the parameters the route reads, each once; a request that
 * asks for route flags finds only the routes that carry them; a literal
 * segment wins over '*' for every method; a path's own HEAD route serves HEAD. */
#include <string.h>

#include "../../../api/http/router.h"
#include "../../support/tests.h"

static void handler_a(const api_request_t *req, api_response_t *res) { (void)req, (void)res; }

static const char *const depth_param[] = { "depth", NULL };

static const router_route_t table[] = {
    { "GET /things", "/things", "GET", handler_a, NULL, 1, -1 },
    { "POST /things", "/things", "POST", handler_a, depth_param, 0, 0 },
    { "GET /things/{id}", "/things/*", "GET", handler_a, depth_param, 0, 1 },
    { "DELETE /things/{id}/parts", "/things/*/parts", "DELETE", handler_a, NULL, 0, -1 },
};

/* Finds a route for method and target on r; the detail is never empty on a refusal. */
static router_status_t find(const router_t *r, const char *method, const char *raw, unsigned flags,
                            api_request_t *req, target_t *target, const char **allow)
{
    char detail[160] = "";
    router_status_t status = router_parse_target(raw, strlen(raw), target, detail, sizeof detail);
    if (status != ROUTER_OK) {
        CU_ASSERT(detail[0] != '\0');
        return status;
    }
    *req = (api_request_t){ .method = method, .path = target->path, .target = target, .route_flags = flags };
    status = router_find(r, req, allow, detail, sizeof detail);
    if (status != ROUTER_OK)
        CU_ASSERT(detail[0] != '\0');
    return status;
}

static void test_a_route_is_found_with_its_path_segment(void)
{
    router_t *r = router_new(table, 4, NULL);
    CU_ASSERT_PTR_NOT_NULL_FATAL(r);
    api_request_t req;
    target_t target;
    const char *allow;
    CU_ASSERT_EQUAL(find(r, "GET", "/things/abc123?depth=2", 0, &req, &target, &allow), ROUTER_OK);
    CU_ASSERT_EQUAL(req.route, 2);
    CU_ASSERT_STRING_EQUAL(req.path_param, "abc123");
    CU_ASSERT_EQUAL(router_route(r, req.route)->pool, 1);
    CU_ASSERT_EQUAL(router_count(r), 4);
    CU_ASSERT_PTR_NULL(router_route(r, 4));
    CU_ASSERT_PTR_NULL(router_route(r, -1));
    router_free(r);
}

static void test_head_is_served_where_get_is(void)
{
    router_t *r = router_new(table, 4, NULL);
    api_request_t req;
    target_t target;
    const char *allow;
    CU_ASSERT_EQUAL(find(r, "HEAD", "/things", 0, &req, &target, &allow), ROUTER_OK);
    CU_ASSERT_EQUAL(req.route, 0);
    router_free(r);
}

static void test_allow_is_derived_from_every_route_at_the_path(void)
{
    router_t *r = router_new(table, 4, NULL);
    api_request_t req;
    target_t target;
    const char *allow = NULL;
    CU_ASSERT_EQUAL(find(r, "PUT", "/things", 0, &req, &target, &allow), ROUTER_EMETHOD);
    CU_ASSERT_PTR_NOT_NULL_FATAL(allow);
    CU_ASSERT_STRING_EQUAL(allow, "GET, HEAD, POST");
    CU_ASSERT_EQUAL(find(r, "POST", "/things/x", 0, &req, &target, &allow), ROUTER_EMETHOD);
    CU_ASSERT_STRING_EQUAL(allow, "GET, HEAD");
    CU_ASSERT_EQUAL(find(r, "GET", "/things/x/parts", 0, &req, &target, &allow), ROUTER_EMETHOD);
    CU_ASSERT_STRING_EQUAL(allow, "DELETE");
    router_free(r);
}

static void test_an_unknown_path_is_not_found(void)
{
    router_t *r = router_new(table, 4, NULL);
    api_request_t req;
    target_t target;
    const char *allow = "x";
    CU_ASSERT_EQUAL(find(r, "GET", "/nothing", 0, &req, &target, &allow), ROUTER_ENOT_FOUND);
    CU_ASSERT_PTR_NULL(allow);
    CU_ASSERT_EQUAL(req.route, -1);
    CU_ASSERT_EQUAL(find(r, "GET", "/things/", 0, &req, &target, &allow), ROUTER_ENOT_FOUND); /* '*' needs a segment */
    CU_ASSERT_EQUAL(find(r, "GET", "/things/a/b", 0, &req, &target, &allow), ROUTER_ENOT_FOUND);
    router_free(r);
}

static void test_query_parameters_must_be_read_by_the_route_and_given_once(void)
{
    router_t *r = router_new(table, 4, NULL);
    api_request_t req;
    target_t target;
    const char *allow;
    CU_ASSERT_EQUAL(find(r, "GET", "/things?depth=1", 0, &req, &target, &allow), ROUTER_EUNKNOWN_PARAMETER);
    CU_ASSERT_EQUAL(find(r, "POST", "/things?Depth=1", 0, &req, &target, &allow), ROUTER_EUNKNOWN_PARAMETER);
    CU_ASSERT_EQUAL(find(r, "POST", "/things?depth=1&depth=2", 0, &req, &target, &allow), ROUTER_EINVALID_PARAMETER);
    CU_ASSERT_EQUAL(find(r, "POST", "/things?depth=%00", 0, &req, &target, &allow), ROUTER_EINVALID_PARAMETER);
    CU_ASSERT_EQUAL(find(r, "POST", "/things?depth=3", 0, &req, &target, &allow), ROUTER_OK);
    CU_ASSERT_EQUAL(req.route, 1);
    router_free(r);
}

static const char *hint_for_secret(const char *name) { return strcmp(name, "secret") ? NULL : ": send it elsewhere"; }

static void test_the_callers_hint_is_added_to_an_unknown_parameter(void)
{
    router_t *r = router_new(table, 4, hint_for_secret);
    api_request_t req;
    target_t target;
    const char *allow;
    char detail[160] = "";
    CU_ASSERT_EQUAL_FATAL(router_parse_target("/things?secret=abc", 18, &target, detail, sizeof detail), ROUTER_OK);
    req = (api_request_t){ .method = "GET", .path = target.path, .target = &target };
    CU_ASSERT_EQUAL(router_find(r, &req, &allow, detail, sizeof detail), ROUTER_EUNKNOWN_PARAMETER);
    CU_ASSERT_STRING_EQUAL(detail, "unknown query parameter 'secret': send it elsewhere");
    CU_ASSERT_PTR_NULL(strstr(detail, "abc")); /* the value is never echoed */
    CU_ASSERT_EQUAL(find(r, "GET", "/things?other=1", 0, &req, &target, &allow), ROUTER_EUNKNOWN_PARAMETER);
    router_free(r);
}

static void test_required_flags_hide_the_other_routes(void)
{
    router_t *r = router_new(table, 4, NULL);
    api_request_t req;
    target_t target;
    const char *allow;
    CU_ASSERT_EQUAL(find(r, "GET", "/things", 1, &req, &target, &allow), ROUTER_OK);
    CU_ASSERT_EQUAL(find(r, "GET", "/things/x", 1, &req, &target, &allow), ROUTER_ENOT_FOUND);
    router_free(r);
}

/* A literal path that is also a shape of '*', in either order in the table. */
static const router_route_t games_literal_first[] = {
    { "POST /games/export", "/games/export", "POST", handler_a, NULL, 0, -1 },
    { "GET /games/{id}", "/games/*", "GET", handler_a, NULL, 0, -1 },
    { "GET /games/{id}/analysis", "/games/*/analysis", "GET", handler_a, NULL, 0, 2 },
    { "HEAD /games/{id}/analysis", "/games/*/analysis", "HEAD", handler_a, NULL, 0, 1 },
};
static const router_route_t games_literal_last[] = {
    { "GET /games/{id}", "/games/*", "GET", handler_a, NULL, 0, -1 },
    { "GET /games/{id}/analysis", "/games/*/analysis", "GET", handler_a, NULL, 0, 2 },
    { "HEAD /games/{id}/analysis", "/games/*/analysis", "HEAD", handler_a, NULL, 0, 1 },
    { "POST /games/export", "/games/export", "POST", handler_a, NULL, 0, -1 },
};

static void check_literal_wins(const router_route_t *routes, int literal, int by_id)
{
    static const char *const others[] = { "GET", "HEAD", "PUT", "DELETE", "PATCH", "OPTIONS", "BREW" };
    router_t *r = router_new(routes, 4, NULL);
    CU_ASSERT_PTR_NOT_NULL_FATAL(r);
    api_request_t req;
    target_t target;
    const char *allow;
    for (size_t i = 0; i < sizeof others / sizeof others[0]; i++) {
        allow = NULL;
        CU_ASSERT_EQUAL(find(r, others[i], "/games/export", 0, &req, &target, &allow), ROUTER_EMETHOD);
        CU_ASSERT_EQUAL(req.route, -1);
        CU_ASSERT_PTR_NOT_NULL_FATAL(allow);
        CU_ASSERT_STRING_EQUAL(allow, "POST");
    }
    CU_ASSERT_EQUAL(find(r, "POST", "/games/export", 0, &req, &target, &allow), ROUTER_OK);
    CU_ASSERT_EQUAL(req.route, literal);
    CU_ASSERT_STRING_EQUAL(req.path_param, "");
    /* a segment that only starts like the literal is an id */
    CU_ASSERT_EQUAL(find(r, "GET", "/games/exports", 0, &req, &target, &allow), ROUTER_OK);
    CU_ASSERT_EQUAL(req.route, by_id);
    CU_ASSERT_STRING_EQUAL(req.path_param, "exports");
    CU_ASSERT_EQUAL(find(r, "POST", "/games/exports", 0, &req, &target, &allow), ROUTER_EMETHOD);
    CU_ASSERT_STRING_EQUAL(allow, "GET, HEAD");
    /* a deeper path under the literal is an id's */
    CU_ASSERT_EQUAL(find(r, "GET", "/games/export/analysis", 0, &req, &target, &allow), ROUTER_OK);
    CU_ASSERT_STRING_EQUAL(req.path_param, "export");
    router_free(r);
}

static void test_a_literal_segment_wins_over_a_parameter_for_every_method(void)
{
    check_literal_wins(games_literal_first, 0, 1);
    check_literal_wins(games_literal_last, 3, 0);
}

static void test_a_paths_own_head_route_serves_head(void)
{
    router_t *r = router_new(games_literal_first, 4, NULL);
    api_request_t req;
    target_t target;
    const char *allow = NULL;
    CU_ASSERT_EQUAL(find(r, "HEAD", "/games/g1/analysis", 0, &req, &target, &allow), ROUTER_OK);
    CU_ASSERT_EQUAL(req.route, 3);
    CU_ASSERT_STRING_EQUAL(req.path_param, "g1");
    CU_ASSERT_EQUAL(find(r, "GET", "/games/g1/analysis", 0, &req, &target, &allow), ROUTER_OK);
    CU_ASSERT_EQUAL(req.route, 2);
    /* HEAD is named once in Allow, however many rows bring it */
    CU_ASSERT_EQUAL(find(r, "POST", "/games/g1/analysis", 0, &req, &target, &allow), ROUTER_EMETHOD);
    CU_ASSERT_STRING_EQUAL(allow, "GET, HEAD");
    /* a path without a HEAD route still serves HEAD by its GET */
    CU_ASSERT_EQUAL(find(r, "HEAD", "/games/g1", 0, &req, &target, &allow), ROUTER_OK);
    CU_ASSERT_EQUAL(req.route, 1);
    router_free(r);
}

static void test_options_is_refused_with_the_paths_allow(void)
{
    router_t *r = router_new(table, 4, NULL);
    api_request_t req;
    target_t target;
    const char *allow = NULL;
    CU_ASSERT_EQUAL(find(r, "OPTIONS", "/things", 0, &req, &target, &allow), ROUTER_EMETHOD);
    CU_ASSERT_STRING_EQUAL(allow, "GET, HEAD, POST");
    CU_ASSERT_EQUAL(find(r, "OPTIONS", "/things/x/parts", 0, &req, &target, &allow), ROUTER_EMETHOD);
    CU_ASSERT_STRING_EQUAL(allow, "DELETE");
    CU_ASSERT_EQUAL(find(r, "OPTIONS", "/nothing", 0, &req, &target, &allow), ROUTER_ENOT_FOUND);
    router_free(r);
}

static void test_a_target_that_cannot_be_routed_is_refused(void)
{
    target_t target;
    char detail[160] = "";
    CU_ASSERT_EQUAL(router_parse_target("/a%2Fb", 6, &target, detail, sizeof detail), ROUTER_EBAD_TARGET);
    CU_ASSERT(detail[0] != '\0');
    char long_path[600];
    long_path[0] = '/';
    memset(long_path + 1, 'a', sizeof long_path - 2);
    long_path[sizeof long_path - 1] = '\0';
    CU_ASSERT_EQUAL(router_parse_target(long_path, strlen(long_path), &target, detail, sizeof detail),
                    ROUTER_ENOT_FOUND);
}

int test_router_register(void)
{
    CU_pSuite suite = CU_add_suite("router", NULL, NULL);
    if (!suite)
        return CU_get_error();
    CU_ADD_TEST(suite, test_a_route_is_found_with_its_path_segment);
    CU_ADD_TEST(suite, test_head_is_served_where_get_is);
    CU_ADD_TEST(suite, test_allow_is_derived_from_every_route_at_the_path);
    CU_ADD_TEST(suite, test_an_unknown_path_is_not_found);
    CU_ADD_TEST(suite, test_query_parameters_must_be_read_by_the_route_and_given_once);
    CU_ADD_TEST(suite, test_the_callers_hint_is_added_to_an_unknown_parameter);
    CU_ADD_TEST(suite, test_required_flags_hide_the_other_routes);
    CU_ADD_TEST(suite, test_a_target_that_cannot_be_routed_is_refused);
    CU_ADD_TEST(suite, test_a_literal_segment_wins_over_a_parameter_for_every_method);
    CU_ADD_TEST(suite, test_a_paths_own_head_route_serves_head);
    CU_ADD_TEST(suite, test_options_is_refused_with_the_paths_allow);
    return CU_get_error();
}
