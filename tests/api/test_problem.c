/* Tests for api/problem.c, the one map from outcome to HTTP answer. Every
 * outcome has a unique code (in openapi.yaml's Problem schema), an error
 * status and a title; a document carries them, its detail, extra members and
 * headers. Refused moves, games and store calls map to their outcomes; a
 * spent quota says its limit and when to retry; a document that cannot be
 * written is a 500 without a body. */
#include <cjson/cJSON.h>
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../api/problem.h"
#include "../support/tests.h"

/* Parses res's body as a JSON object (CU-asserted); the caller deletes it. */
static cJSON *problem_body(const api_response_t *res)
{
    CU_ASSERT_PTR_NOT_NULL_FATAL(res->body);
    CU_ASSERT_STRING_EQUAL(res->content_type, "application/problem+json");
    cJSON *root = cJSON_ParseWithLength(res->body, res->body_length);
    CU_ASSERT_FATAL(cJSON_IsObject(root));
    return root;
}

static const char *member_string(const cJSON *root, const char *name)
{
    const cJSON *item = cJSON_GetObjectItemCaseSensitive(root, name);
    return cJSON_IsString(item) ? item->valuestring : NULL;
}

static double member_number(const cJSON *root, const char *name)
{
    const cJSON *item = cJSON_GetObjectItemCaseSensitive(root, name);
    return cJSON_IsNumber(item) ? item->valuedouble : -1;
}

static bool snake_case(const char *code)
{
    if (!code || !islower((unsigned char)code[0]))
        return false;
    for (const char *p = code; *p; p++)
        if (!islower((unsigned char)*p) && !isdigit((unsigned char)*p) && *p != '_')
            return false;
    return code[strlen(code) - 1] != '_';
}

static void test_every_outcome_has_a_unique_code_an_error_status_and_a_title(void)
{
    for (int s = 0; s < API_STATUS_COUNT; s++) {
        const char *code = api_status_code((api_status_t)s);
        CU_ASSERT_TRUE(snake_case(code));
        unsigned http = api_status_http((api_status_t)s);
        if (s == API_OK) {
            CU_ASSERT_EQUAL(http, 200);
        } else {
            CU_ASSERT(http >= 400 && http <= 599);
        }
        for (int t = 0; t < s; t++)
            if (code && !strcmp(code, api_status_code((api_status_t)t))) {
                fprintf(stderr, "\ncode %s is used twice\n", code);
                CU_FAIL("two outcomes share a code");
            }
    }
    CU_ASSERT_STRING_EQUAL(api_status_code(API_EILLEGAL_MOVE), "illegal_move");
    CU_ASSERT_EQUAL(api_status_http(API_EILLEGAL_MOVE), 422);
    CU_ASSERT_EQUAL(api_status_http(API_EVERSION_CONFLICT), 409);
    CU_ASSERT_EQUAL(api_status_http(API_ERATE_LIMITED), 429);
    CU_ASSERT_EQUAL(api_status_http(API_ESTORE_FULL), 507);
    /* Outside the table: an internal error, never a read past it. */
    CU_ASSERT_STRING_EQUAL(api_status_code(API_STATUS_COUNT), "internal_error");
    CU_ASSERT_EQUAL(api_status_http((api_status_t)-1), 500);
}

static void test_every_error_code_is_in_the_openapi_problem_schema_and_no_other(void)
{
    FILE *file = fopen("openapi.yaml", "r");
    CU_ASSERT_PTR_NOT_NULL_FATAL(file);
    static char text[1 << 20];
    size_t length = fread(text, 1, sizeof text - 1, file);
    fclose(file);
    text[length] = '\0';
    const char *schema = strstr(text, "\n    Problem:\n");
    CU_ASSERT_PTR_NOT_NULL_FATAL(schema);
    const char *code = strstr(schema, "\n        code:\n");
    CU_ASSERT_PTR_NOT_NULL_FATAL(code);
    const char *open = strstr(code, "enum: [");
    CU_ASSERT_PTR_NOT_NULL_FATAL(open);
    open += strlen("enum: [");
    const char *close = strchr(open, ']');
    CU_ASSERT_PTR_NOT_NULL_FATAL(close);
    int listed = 0;
    for (const char *p = open; p < close;) {
        while (p < close && (*p == ' ' || *p == ',' || *p == '\n'))
            p++;
        size_t n = strcspn(p, ", \n]");
        if (n == 0)
            break;
        bool known = false;
        for (int s = 1; s < API_STATUS_COUNT && !known; s++) {
            const char *c = api_status_code((api_status_t)s);
            known = strlen(c) == n && !strncmp(c, p, n);
        }
        if (!known)
            fprintf(stderr, "\nopenapi.yaml lists '%.*s', which is no outcome's code\n", (int)n, p);
        CU_ASSERT_TRUE(known);
        listed++;
        p += n;
    }
    for (int s = 1; s < API_STATUS_COUNT; s++) {
        const char *c = api_status_code((api_status_t)s);
        bool found = false;
        for (const char *p = open; p < close && !found; p++)
            found = !strncmp(p, c, strlen(c)) && (p[-1] == ' ' || p[-1] == '[' || p[-1] == '\n')
                 && strchr(", \n]", p[strlen(c)]);
        if (!found)
            fprintf(stderr, "\nopenapi.yaml's Problem code enum lacks '%s'\n", c);
        CU_ASSERT_TRUE(found);
    }
    CU_ASSERT_EQUAL(listed, API_STATUS_COUNT - 1); /* every code but "ok", once each */
}

static void test_every_problem_document_carries_its_code_status_and_title(void)
{
    for (int s = 1; s < API_STATUS_COUNT; s++) {
        api_response_t res = { 0 };
        api_problem(&res, (api_status_t)s, NULL, NULL, NULL);
        unsigned http = api_status_http((api_status_t)s);
        const char *code = api_status_code((api_status_t)s);
        CU_ASSERT_EQUAL(res.status, http);
        CU_ASSERT_PTR_NOT_NULL(res.problem_code);
        CU_ASSERT_STRING_EQUAL(res.problem_code ? res.problem_code : "", code);
        cJSON *root = problem_body(&res);
        char type[96];
        snprintf(type, sizeof type, "urn:chessd:problem:%s", code);
        CU_ASSERT_STRING_EQUAL(member_string(root, "type") ? member_string(root, "type") : "", type);
        CU_ASSERT_STRING_EQUAL(member_string(root, "code") ? member_string(root, "code") : "", code);
        CU_ASSERT_EQUAL(member_number(root, "status"), (double)http);
        const char *title = member_string(root, "title");
        CU_ASSERT(title && strlen(title) > 3);
        /* Without a detail, the title stands in for it. */
        CU_ASSERT_STRING_EQUAL(member_string(root, "detail") ? member_string(root, "detail") : "", title ? title : "");
        /* 503s say when to come back; only a 401 asks for a token or a key. */
        CU_ASSERT_EQUAL(res.retry_after, http == 503 ? 1u : 0u);
        CU_ASSERT_EQUAL(res.authenticate != NULL, http == 401);
        cJSON_Delete(root);
        free(res.body);
    }
}

static void write_extra(jsonw_t *w, const void *ctx)
{
    jsonw_kv_string(w, "extra", ctx);
}

static void test_a_problem_replaces_the_answer_with_its_detail_and_extra_members(void)
{
    api_response_t res = { 0 };
    api_response_set(&res, 200, "application/json", strdup("{\"was\":1}"), 9);
    snprintf(res.etag, sizeof res.etag, "\"7\"");
    snprintf(res.location, sizeof res.location, "/v1/games/x");
    res.allow = "GET";
    api_problem(&res, API_EINVALID_FIELD, "'moves' must be an array", write_extra, "here");
    CU_ASSERT_EQUAL(res.status, 400);
    CU_ASSERT_PTR_NULL(res.allow);
    CU_ASSERT_STRING_EQUAL(res.etag, "");
    CU_ASSERT_STRING_EQUAL(res.location, "");
    cJSON *root = problem_body(&res);
    CU_ASSERT_STRING_EQUAL(member_string(root, "detail"), "'moves' must be an array");
    CU_ASSERT_STRING_EQUAL(member_string(root, "extra"), "here");
    CU_ASSERT_PTR_NULL(cJSON_GetObjectItemCaseSensitive(root, "was"));
    cJSON_Delete(root);
    free(res.body);
    /* An outcome outside the table is an internal error. */
    res = (api_response_t){ 0 };
    api_problem(&res, API_STATUS_COUNT, "x", NULL, NULL);
    CU_ASSERT_EQUAL(res.status, 500);
    CU_ASSERT_STRING_EQUAL(res.problem_code, "internal_error");
    free(res.body);
}

static void test_refused_moves_map_to_their_outcome_and_name_the_move(void)
{
    CU_ASSERT_EQUAL(api_status_for_reason(LEGALITY_UNPARSEABLE), API_EINVALID_MOVE_TEXT);
    CU_ASSERT_EQUAL(api_status_for_reason(LEGALITY_AMBIGUOUS), API_EAMBIGUOUS_MOVE);
    CU_ASSERT_EQUAL(api_status_for_reason(LEGALITY_CANNOT_MOVE_SO), API_EILLEGAL_MOVE);
    CU_ASSERT_EQUAL(api_status_for_reason(LEGALITY_NO_PIECE), API_EILLEGAL_MOVE);
    api_response_t res = { 0 };
    api_problem_move(&res, API_EILLEGAL_MOVE, "no piece there", 3, "e3e4", LEGALITY_NO_PIECE, FEN_START);
    CU_ASSERT_EQUAL(res.status, 422);
    cJSON *root = problem_body(&res);
    CU_ASSERT_EQUAL(member_number(root, "move_index"), 3);
    CU_ASSERT_STRING_EQUAL(member_string(root, "move"), "e3e4");
    CU_ASSERT_STRING_EQUAL(member_string(root, "reason"), legality_reason_code(LEGALITY_NO_PIECE));
    CU_ASSERT_STRING_EQUAL(member_string(root, "fen"), FEN_START);
    /* the move named as a chess player would: by its number and side in the FEN it was tried in */
    CU_ASSERT_STRING_EQUAL(member_string(root, "detail"), "1. e3e4: no piece there");
    cJSON_Delete(root);
    free(res.body);
    res = (api_response_t){ 0 };
    api_problem_fen(&res, FEN_EFIELD_COUNT, "a FEN has six fields");
    CU_ASSERT_EQUAL(res.status, 400);
    root = problem_body(&res);
    CU_ASSERT_STRING_EQUAL(member_string(root, "code"), "invalid_fen");
    CU_ASSERT_STRING_EQUAL(member_string(root, "fen_error"), fen_error_code(FEN_EFIELD_COUNT));
    cJSON_Delete(root);
    free(res.body);
}

static void test_refused_game_operations_and_store_calls_map_to_their_outcome(void)
{
    static const struct {
        game_status_t game;
        api_status_t api;
    } games[] = {
        { GAME_ENOT_YOUR_TURN, API_ENOT_YOUR_TURN },     { GAME_EOVER, API_EGAME_OVER },
        { GAME_ETOO_LONG, API_EGAME_TOO_LONG },          { GAME_ENOTHING_TO_UNDO, API_ENOTHING_TO_UNDO },
        { GAME_ENO_DRAW_OFFER, API_ENO_DRAW_OFFER },     { GAME_EDRAW_NOT_CLAIMABLE, API_EDRAW_NOT_CLAIMABLE },
        { GAME_EABORT_TOO_LATE, API_EABORT_TOO_LATE },   { GAME_EBAD_RECORD, API_EINTERNAL },
        { GAME_OK, API_EINTERNAL }, /* a success reported as a refusal is our error */
    };
    for (size_t i = 0; i < sizeof games / sizeof games[0]; i++) {
        api_response_t res = { 0 };
        api_problem_game(&res, games[i].game);
        CU_ASSERT_EQUAL(res.status, api_status_http(games[i].api));
        CU_ASSERT_STRING_EQUAL(res.problem_code ? res.problem_code : "", api_status_code(games[i].api));
        cJSON *root = problem_body(&res);
        /* A detail of its own, not the title again. */
        CU_ASSERT_STRING_NOT_EQUAL(member_string(root, "detail"), member_string(root, "title"));
        cJSON_Delete(root);
        free(res.body);
    }
    static const struct {
        store_status_t store;
        api_status_t api;
    } stores[] = {
        { STORE_ENOT_FOUND, API_EGAME_NOT_FOUND }, { STORE_EUNAVAILABLE, API_ESTORE_UNAVAILABLE },
        { STORE_EFULL, API_ESTORE_FULL },          { STORE_EUNKNOWN, API_EOUTCOME_UNKNOWN },
        { STORE_ECORRUPT, API_EINTERNAL },
    };
    for (size_t i = 0; i < sizeof stores / sizeof stores[0]; i++) {
        api_response_t res = { 0 };
        api_problem_store(&res, stores[i].store, NULL);
        CU_ASSERT_EQUAL(res.status, api_status_http(stores[i].api));
        CU_ASSERT_STRING_EQUAL(res.problem_code ? res.problem_code : "", api_status_code(stores[i].api));
        cJSON *root = problem_body(&res);
        /* With no store to ask, no fault is named. */
        CU_ASSERT_PTR_NULL(cJSON_GetObjectItemCaseSensitive(root, "store_fault"));
        cJSON_Delete(root);
        free(res.body);
    }
    api_response_t res = { 0 };
    api_problem_conflict(&res, "the game is at version 12, not 9", 12, 7);
    CU_ASSERT_EQUAL(res.status, 409);
    cJSON *root = problem_body(&res);
    CU_ASSERT_EQUAL(member_number(root, "current_version"), 12);
    CU_ASSERT_EQUAL(member_number(root, "current_ply"), 7);
    CU_ASSERT_STRING_EQUAL(member_string(root, "detail"), "the game is at version 12, not 9");
    cJSON_Delete(root);
    free(res.body);
    /* A conflict found by the store's compare-and-set alone knows no ply. */
    res = (api_response_t){ 0 };
    api_problem_conflict(&res, "the game is at version 3, not 2", 3, -1);
    root = problem_body(&res);
    CU_ASSERT_EQUAL(member_number(root, "current_version"), 3);
    CU_ASSERT_PTR_NULL(cJSON_GetObjectItemCaseSensitive(root, "current_ply"));
    cJSON_Delete(root);
    free(res.body);
}

/* Every 429 names its quota (limit, max), says when to retry in its detail
 * and in retry_after_s, and sends the same seconds as Retry-After. */
static void test_a_spent_quota_names_its_limit_and_when_to_retry(void)
{
    api_response_t res = { 0 };
    api_problem_quota(&res, API_ERATE_LIMITED, "game creations from one client address are limited to 10 a second",
                      "rate-limit-create", 10, 3);
    CU_ASSERT_EQUAL(res.status, 429);
    CU_ASSERT_EQUAL(res.retry_after, 3);
    cJSON *root = problem_body(&res);
    CU_ASSERT_STRING_EQUAL(member_string(root, "detail"),
                           "game creations from one client address are limited to 10 a second; retry after 3 s");
    CU_ASSERT_STRING_EQUAL(member_string(root, "limit"), "rate-limit-create");
    CU_ASSERT_EQUAL(member_number(root, "max"), 10);
    CU_ASSERT_EQUAL(member_number(root, "retry_after_s"), 3);
    cJSON_Delete(root);
    free(res.body);
    /* No wait given is a wait of one second: a 429 always says when. */
    res = (api_response_t){ 0 };
    api_problem_quota(&res, API_ETOO_MANY_ANALYSES, "two analyses", "engine-analyses-per-client", 2, 0);
    CU_ASSERT_EQUAL(res.retry_after, 1);
    root = problem_body(&res);
    CU_ASSERT_EQUAL(member_number(root, "retry_after_s"), 1);
    cJSON_Delete(root);
    free(res.body);
}

static void test_a_problem_that_cannot_be_written_is_a_500_without_a_body(void)
{
    for (long k = 0; k < 3; k++) {
        api_response_t res = { 0 };
        tests_fail_allocations_after(k);
        api_problem(&res, API_EGAME_NOT_FOUND, "no game has this id", NULL, NULL);
        bool failed = tests_allocation_calls() > k;
        tests_allocations_work();
        if (!failed) {
            CU_ASSERT(k > 0); /* the document needs at least one allocation */
            CU_ASSERT_EQUAL(res.status, 404);
            free(res.body);
            break;
        }
        CU_ASSERT_EQUAL(res.status, 500); /* not the 404 it would have been */
        CU_ASSERT_PTR_NULL(res.body);
        CU_ASSERT_EQUAL(res.body_length, 0);
        CU_ASSERT_PTR_NULL(res.problem_code);
    }
}

int test_problem_register(void)
{
    CU_pSuite suite = CU_add_suite_with_setup_and_teardown("problem", NULL, NULL, NULL, tests_allocations_work);
    if (!suite)
        return CU_get_error();
    CU_ADD_TEST(suite, test_every_outcome_has_a_unique_code_an_error_status_and_a_title);
    CU_ADD_TEST(suite, test_every_error_code_is_in_the_openapi_problem_schema_and_no_other);
    CU_ADD_TEST(suite, test_every_problem_document_carries_its_code_status_and_title);
    CU_ADD_TEST(suite, test_a_problem_replaces_the_answer_with_its_detail_and_extra_members);
    CU_ADD_TEST(suite, test_refused_moves_map_to_their_outcome_and_name_the_move);
    CU_ADD_TEST(suite, test_refused_game_operations_and_store_calls_map_to_their_outcome);
    CU_ADD_TEST(suite, test_a_spent_quota_names_its_limit_and_when_to_retry);
    CU_ADD_TEST(suite, test_a_problem_that_cannot_be_written_is_a_500_without_a_body);
    return CU_get_error();
}
