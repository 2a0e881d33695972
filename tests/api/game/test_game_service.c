/* Tests for api/game/service.c through its own API, against a private
 * redis-server (redis_server.h): a stale version is a conflict that writes
 * nothing; a move's ply is not made stale by offers; tokens decide who may
 * change a game; a retry under its Idempotency-Key gets the first answer;
 * resignation, abort, a fallen flag and a claim against a gone opponent end
 * the game. The suite fails, never skips, without redis-server. */
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cjson/cJSON.h>

#include "../../../api/game/idempotency.h"
#include "../../../api/game/service.h"
#include "../../../api/game/tokens.h"
#include "../../../store/store.h"
#include "../../support/redis_server.h"
#include "../../support/tests.h"

enum { TIMEOUT_MS = 1000 };

static redis_server_t server;
static game_svc_config_t service;
static struct sigaction saved_sigpipe_action;

static int suite_init(void)
{
    struct sigaction ignore = { .sa_handler = SIG_IGN };
    sigemptyset(&ignore.sa_mask);
    sigaction(SIGPIPE, &ignore, &saved_sigpipe_action);
    if (!tokens_ready())
        tokens_init("game service suite secret: 32 bytes and more, for tokens");
    if (!tokens_ready())
        return 1;
    redis_server_init(&server);
    if (!redis_server_start(&server)) {
        fprintf(stderr, "\ngame service suite: cannot start a private redis-server: %s\n", server.error);
        return 1;
    }
    char url[64];
    redis_server_url(&server, url, sizeof url);
    service = (game_svc_config_t){ .store = redis_server_open_store(url, TIMEOUT_MS), .max_game_plies = 600,
                                   .idempotency_ttl_seconds = 60, .game_cache_slots = 64 };
    if (!service.store) {
        redis_server_stop(&server);
        return 1;
    }
    return 0;
}

static int suite_cleanup(void)
{
    store_close(service.store);
    service.store = NULL;
    redis_server_stop(&server);
    sigaction(SIGPIPE, &saved_sigpipe_action, NULL);
    return 0;
}

/* A created game: its id and the players' tokens. */
typedef struct {
    char id[TOKENS_ID_SIZE];
    char tokens[COLOR_COUNT][TOKENS_TOKEN_SIZE];
} created_t;

/* Creates a game from the standard start (initial_ms 0: untimed); CU-asserts it worked. */
static bool create(int64_t initial_ms, created_t *game)
{
    game_svc_new_t *spec = calloc(1, sizeof *spec);
    CU_ASSERT_PTR_NOT_NULL_FATAL(spec);
    char message[200];
    CU_ASSERT_EQUAL_FATAL(fen_parse(FEN_START, strlen(FEN_START), 0, &spec->start, message, sizeof message), FEN_OK);
    if (initial_ms)
        for (int side = 0; side < COLOR_COUNT; side++)
            spec->controls[side] = (game_control_t){ .periods = { { 0, initial_ms } }, .period_count = 1 };
    spec->takeback = GAME_TAKEBACK_FREE;
    game_svc_request_t rq = { .answer_status = 201, .location_prefix = "/games/" };
    game_svc_result_t out = { 0 };
    game_svc_status_t status = game_svc_create(&service, &rq, spec, &out);
    free(spec);
    CU_ASSERT_EQUAL(status, GAME_SVC_OK);
    CU_ASSERT_EQUAL(out.answer_status, 201);
    CU_ASSERT_EQUAL(out.version, 1);
    cJSON *root = out.body ? cJSON_ParseWithLength(out.body, out.body_length) : NULL;
    const cJSON *id = cJSON_GetObjectItemCaseSensitive(root, "id");
    const cJSON *tokens = cJSON_GetObjectItemCaseSensitive(root, "tokens");
    const cJSON *white = cJSON_GetObjectItemCaseSensitive(tokens, "white");
    const cJSON *black = cJSON_GetObjectItemCaseSensitive(tokens, "black");
    bool ok = cJSON_IsString(id) && cJSON_IsString(white) && cJSON_IsString(black)
              && strlen(id->valuestring) < sizeof game->id && strlen(white->valuestring) < TOKENS_TOKEN_SIZE
              && strlen(black->valuestring) < TOKENS_TOKEN_SIZE;
    CU_ASSERT_TRUE(ok);
    if (ok) {
        snprintf(game->id, sizeof game->id, "%s", id->valuestring);
        snprintf(game->tokens[WHITE], TOKENS_TOKEN_SIZE, "%s", white->valuestring);
        snprintf(game->tokens[BLACK], TOKENS_TOKEN_SIZE, "%s", black->valuestring);
        char location[64];
        snprintf(location, sizeof location, "/games/%s", game->id);
        CU_ASSERT_STRING_EQUAL(out.location, location);
    }
    cJSON_Delete(root);
    game_svc_result_free(&out);
    return ok;
}

/* A change (kind, move text or action) by token at expected version
 * (0: none named); out is the caller's to free. */
static game_svc_status_t change(const created_t *game, const char *token, uint64_t expected,
                                game_svc_action_kind_t kind, const char *move, game_svc_result_t *out)
{
    game_svc_request_t rq = { .answer_status = 200 };
    game_svc_version_t version = { .given = expected > 0, .expected = expected };
    game_svc_action_t action = { .kind = kind, .move = move };
    memset(out, 0, sizeof *out);
    return game_svc_change(&service, game->id, token, &rq, &version, &action, out);
}

/* The same, the result dropped. */
static game_svc_status_t change_status(const created_t *game, color_t who, uint64_t expected,
                                       game_svc_action_kind_t kind, const char *move)
{
    game_svc_result_t out;
    game_svc_status_t status = change(game, game->tokens[who], expected, kind, move, &out);
    game_svc_result_free(&out);
    return status;
}

/* Reads game id in full; CU-asserts it reads. */
static bool read_game(const char *id, game_svc_game_t *g)
{
    game_svc_result_t out = { 0 };
    game_svc_status_t status = game_svc_read(&service, id, STORE_LOAD_FULL, g, &out);
    game_svc_result_free(&out);
    CU_ASSERT_EQUAL(status, GAME_SVC_OK);
    return status == GAME_SVC_OK;
}

static void test_a_created_game_reads_back_at_version_1_from_the_start(void)
{
    created_t game;
    CU_ASSERT_TRUE_FATAL(create(0, &game));
    game_svc_game_t g;
    if (read_game(game.id, &g)) {
        CU_ASSERT_EQUAL(g.record.version, 1);
        CU_ASSERT_EQUAL(g.record.game.state, GAME_ACTIVE);
        CU_ASSERT_EQUAL(g.record.game.ply_count, 0);
        CU_ASSERT_STRING_EQUAL(g.record.id, game.id);
        CU_ASSERT_EQUAL(g.moves_length, 0);
    }
    game_svc_game_free(&g);
}

static void test_an_unknown_or_malformed_id_is_not_found(void)
{
    game_svc_game_t g;
    game_svc_result_t out = { 0 };
    CU_ASSERT_EQUAL(game_svc_read(&service, "AAAAAAAAAAAAAAAA", STORE_LOAD_FULL, &g, &out), GAME_SVC_ENOT_FOUND);
    game_svc_game_free(&g);
    CU_ASSERT_EQUAL(game_svc_read(&service, "not an id", STORE_LOAD_FULL, &g, &out), GAME_SVC_ENOT_FOUND);
    game_svc_game_free(&g);
    created_t missing = { .id = "AAAAAAAAAAAAAAAB" };
    CU_ASSERT_EQUAL(change(&missing, "token", 1, GAME_SVC_MOVE, "e4", &out), GAME_SVC_ENOT_FOUND);
    game_svc_result_free(&out);
}

static void test_a_move_at_the_current_version_is_written_and_a_stale_version_conflicts(void)
{
    created_t game;
    CU_ASSERT_TRUE_FATAL(create(0, &game));
    game_svc_result_t out;
    CU_ASSERT_EQUAL(change(&game, game.tokens[WHITE], 1, GAME_SVC_MOVE, "e4", &out), GAME_SVC_OK);
    CU_ASSERT_EQUAL(out.version, 2);
    CU_ASSERT_PTR_NOT_NULL(out.body ? strstr(out.body, "\"san\":\"e4\"") : NULL);
    game_svc_result_free(&out);
    /* Black answers as of version 1: the game is at 2, nothing is written. */
    CU_ASSERT_EQUAL(change(&game, game.tokens[BLACK], 1, GAME_SVC_MOVE, "e5", &out), GAME_SVC_ECONFLICT);
    CU_ASSERT_EQUAL(out.current_version, 2);
    CU_ASSERT_EQUAL(out.expected_version, 1);
    game_svc_result_free(&out);
    game_svc_game_t g;
    if (read_game(game.id, &g)) {
        CU_ASSERT_EQUAL(g.record.version, 2);
        CU_ASSERT_EQUAL(g.record.game.ply_count, 1);
        CU_ASSERT_EQUAL(g.moves_length, strlen("e2e4:e4"));
    }
    game_svc_game_free(&g);
    CU_ASSERT_EQUAL(change_status(&game, BLACK, 2, GAME_SVC_MOVE, "e5"), GAME_SVC_OK);
}

static void test_a_change_without_a_version_or_with_a_stale_if_match_is_refused(void)
{
    created_t game;
    CU_ASSERT_TRUE_FATAL(create(0, &game));
    CU_ASSERT_EQUAL(change_status(&game, WHITE, 0, GAME_SVC_MOVE, "e4"), GAME_SVC_EPRECONDITION_REQUIRED);
    game_svc_request_t rq = { .answer_status = 200 };
    game_svc_version_t version = { .if_match = "\"7\"" };
    game_svc_action_t action = { .kind = GAME_SVC_MOVE, .move = "e4" };
    game_svc_result_t out = { 0 };
    CU_ASSERT_EQUAL(game_svc_change(&service, game.id, game.tokens[WHITE], &rq, &version, &action, &out),
                    GAME_SVC_EPRECONDITION);
    CU_ASSERT_EQUAL(out.current_version, 1);
    CU_ASSERT_PTR_NOT_NULL(strstr(out.detail, "\"1\""));
    game_svc_result_free(&out);
    version.if_match = "\"1\"";
    CU_ASSERT_EQUAL(game_svc_change(&service, game.id, game.tokens[WHITE], &rq, &version, &action, &out),
                    GAME_SVC_OK);
    game_svc_result_free(&out);
}

static void test_only_the_players_tokens_may_change_a_game_and_only_on_their_turn(void)
{
    created_t game, other;
    CU_ASSERT_TRUE_FATAL(create(0, &game));
    CU_ASSERT_TRUE_FATAL(create(0, &other));
    game_svc_result_t out;
    CU_ASSERT_EQUAL(change(&game, NULL, 1, GAME_SVC_MOVE, "e4", &out), GAME_SVC_EUNAUTHORIZED);
    game_svc_result_free(&out);
    CU_ASSERT_EQUAL(change(&game, other.tokens[WHITE], 1, GAME_SVC_MOVE, "e4", &out), GAME_SVC_EFORBIDDEN);
    game_svc_result_free(&out);
    CU_ASSERT_EQUAL(change(&game, game.tokens[BLACK], 1, GAME_SVC_MOVE, "e5", &out), GAME_SVC_EREFUSED);
    CU_ASSERT_EQUAL(out.refusal, GAME_ENOT_YOUR_TURN);
    game_svc_result_free(&out);
}

static void test_an_illegal_move_is_refused_with_its_reason_index_and_position(void)
{
    created_t game;
    CU_ASSERT_TRUE_FATAL(create(0, &game));
    game_svc_result_t out;
    CU_ASSERT_EQUAL(change(&game, game.tokens[WHITE], 1, GAME_SVC_MOVE, "e5", &out), GAME_SVC_EREFUSED);
    CU_ASSERT_EQUAL(out.refusal, GAME_EILLEGAL_MOVE);
    CU_ASSERT_EQUAL(out.move_index, 0);
    CU_ASSERT_STRING_EQUAL(out.move_text, "e5");
    CU_ASSERT_STRING_EQUAL(out.move_fen, FEN_START);
    CU_ASSERT_NOT_EQUAL(out.move_message[0], '\0');
    game_svc_result_free(&out);
}

static void test_invalid_request_values_are_refused_with_the_callers_sentence(void)
{
    created_t game;
    CU_ASSERT_TRUE_FATAL(create(0, &game));
    game_svc_request_t rq = { .answer_status = 200 };
    game_svc_version_t version = { .given = true, .expected = 1 };
    game_svc_action_t action = { .kind = GAME_SVC_DRAW, .action = -1, .invalid = "'action' is wrong" };
    game_svc_result_t out = { 0 };
    CU_ASSERT_EQUAL(game_svc_change(&service, game.id, game.tokens[WHITE], &rq, &version, &action, &out),
                    GAME_SVC_EINVALID);
    CU_ASSERT_STRING_EQUAL(out.detail, "'action' is wrong");
    game_svc_result_free(&out);
}

static void test_a_retry_with_its_key_gets_the_first_answer_and_another_request_is_refused(void)
{
    created_t game;
    CU_ASSERT_TRUE_FATAL(create(0, &game));
    char print_a[IDEM_FINGERPRINT_SIZE], print_b[IDEM_FINGERPRINT_SIZE];
    CU_ASSERT_TRUE_FATAL(idem_fingerprint("POST", "/a", "", 0, NULL, "{}", 2, print_a));
    CU_ASSERT_TRUE_FATAL(idem_fingerprint("POST", "/b", "", 0, NULL, "{}", 2, print_b));
    game_svc_request_t rq = { .key = "retry-1", .fingerprint = print_a, .answer_status = 200 };
    game_svc_version_t version = { .given = true, .expected = 1 };
    game_svc_action_t action = { .kind = GAME_SVC_MOVE, .move = "d4" };
    game_svc_result_t first = { 0 }, again = { 0 }, other = { 0 };
    CU_ASSERT_EQUAL_FATAL(game_svc_change(&service, game.id, game.tokens[WHITE], &rq, &version, &action, &first),
                          GAME_SVC_OK);
    CU_ASSERT_EQUAL(game_svc_change(&service, game.id, game.tokens[WHITE], &rq, &version, &action, &again),
                    GAME_SVC_REPLAY);
    CU_ASSERT_EQUAL(again.version, 2);
    CU_ASSERT_EQUAL(again.answer_status, 200);
    CU_ASSERT_TRUE(again.body && again.body_length == first.body_length
                   && !memcmp(again.body, first.body, first.body_length));
    rq.fingerprint = print_b;
    CU_ASSERT_EQUAL(game_svc_change(&service, game.id, game.tokens[WHITE], &rq, &version, &action, &other),
                    GAME_SVC_EKEY_REUSED);
    game_svc_result_free(&first);
    game_svc_result_free(&again);
    game_svc_result_free(&other);
    game_svc_game_t g;
    if (read_game(game.id, &g))
        CU_ASSERT_EQUAL(g.record.version, 2); /* one move written */
    game_svc_game_free(&g);
}

static void test_resignation_ends_the_game_and_nothing_changes_it_after(void)
{
    created_t game;
    CU_ASSERT_TRUE_FATAL(create(0, &game));
    CU_ASSERT_EQUAL(change_status(&game, BLACK, 1, GAME_SVC_RESIGN, NULL), GAME_SVC_OK);
    game_svc_game_t g;
    if (read_game(game.id, &g)) {
        CU_ASSERT_EQUAL(g.record.game.state, GAME_RESIGNED);
        CU_ASSERT_EQUAL(g.record.game.result, GAME_WHITE_WINS);
    }
    game_svc_game_free(&g);
    game_svc_result_t out;
    CU_ASSERT_EQUAL(change(&game, game.tokens[WHITE], 2, GAME_SVC_MOVE, "e4", &out), GAME_SVC_EREFUSED);
    CU_ASSERT_EQUAL(out.refusal, GAME_EOVER);
    game_svc_result_free(&out);
}

static void test_abort_ends_a_game_before_both_have_moved_and_is_too_late_after(void)
{
    created_t early, late;
    CU_ASSERT_TRUE_FATAL(create(0, &early));
    CU_ASSERT_TRUE_FATAL(create(0, &late));
    CU_ASSERT_EQUAL(change_status(&early, WHITE, 1, GAME_SVC_MOVE, "e4"), GAME_SVC_OK);
    CU_ASSERT_EQUAL(change_status(&early, BLACK, 2, GAME_SVC_ABORT, NULL), GAME_SVC_OK);
    game_svc_game_t g;
    if (read_game(early.id, &g))
        CU_ASSERT_EQUAL(g.record.game.state, GAME_ABORTED);
    game_svc_game_free(&g);
    CU_ASSERT_EQUAL(change_status(&late, WHITE, 1, GAME_SVC_MOVE, "e4"), GAME_SVC_OK);
    CU_ASSERT_EQUAL(change_status(&late, BLACK, 2, GAME_SVC_MOVE, "e5"), GAME_SVC_OK);
    game_svc_result_t out;
    CU_ASSERT_EQUAL(change(&late, late.tokens[WHITE], 3, GAME_SVC_ABORT, NULL, &out), GAME_SVC_EREFUSED);
    CU_ASSERT_EQUAL(out.refusal, GAME_EABORT_TOO_LATE);
    game_svc_result_free(&out);
}

/* A game on a one-second clock whose first two moves are played, so the
 * clock runs for white from then. */
static bool running_clock(created_t *game)
{
    return create(GAME_CLOCK_INITIAL_MIN, game) && change_status(game, WHITE, 1, GAME_SVC_MOVE, "e4") == GAME_SVC_OK
           && change_status(game, BLACK, 2, GAME_SVC_MOVE, "e5") == GAME_SVC_OK;
}

static void test_a_read_after_the_flag_fell_records_the_loss_on_time_once(void)
{
    created_t game;
    CU_ASSERT_TRUE_FATAL(running_clock(&game));
    usleep((GAME_CLOCK_INITIAL_MIN + 300) * 1000);
    game_svc_game_t g;
    if (read_game(game.id, &g)) {
        CU_ASSERT_EQUAL(g.record.game.state, GAME_TIMEOUT);
        CU_ASSERT_EQUAL(g.record.game.result, GAME_BLACK_WINS);
        CU_ASSERT_EQUAL(g.record.version, 4); /* the fall is a write of its own */
    }
    game_svc_game_free(&g);
    if (read_game(game.id, &g))
        CU_ASSERT_EQUAL(g.record.version, 4); /* and only one */
    game_svc_game_free(&g);
}

static void test_a_change_after_the_flag_fell_is_refused_as_over_on_time(void)
{
    created_t game;
    CU_ASSERT_TRUE_FATAL(running_clock(&game));
    usleep((GAME_CLOCK_INITIAL_MIN + 300) * 1000);
    game_svc_result_t out;
    CU_ASSERT_EQUAL(change(&game, game.tokens[WHITE], 3, GAME_SVC_MOVE, "Nf3", &out), GAME_SVC_ETIMED_OUT);
    game_svc_result_free(&out);
    game_svc_game_t g;
    if (read_game(game.id, &g)) {
        CU_ASSERT_EQUAL(g.record.game.state, GAME_TIMEOUT);
        CU_ASSERT_EQUAL(g.record.version, 4); /* the fall recorded, the move not */
        CU_ASSERT_EQUAL(g.record.game.ply_count, 2);
    }
    game_svc_game_free(&g);
}

static void test_the_hubs_flag_check_and_snapshot_need_no_request(void)
{
    created_t game;
    CU_ASSERT_TRUE_FATAL(running_clock(&game));
    game_event_meta_t meta;
    CU_ASSERT_EQUAL(game_svc_check_flag(&service, game.id, &meta), GAME_SVC_OK);
    CU_ASSERT_FALSE(meta.ended);
    CU_ASSERT_EQUAL(meta.version, 3);
    CU_ASSERT_TRUE(meta.deadline_ms > meta.at_ms);
    CU_ASSERT_STRING_EQUAL(meta.type, "change");
    usleep((GAME_CLOCK_INITIAL_MIN + 300) * 1000);
    CU_ASSERT_EQUAL(game_svc_check_flag(&service, game.id, &meta), GAME_SVC_OK);
    CU_ASSERT_TRUE(meta.ended);
    CU_ASSERT_EQUAL(meta.version, 4);
    CU_ASSERT_EQUAL(meta.deadline_ms, 0);
    buf_t json;
    buf_init(&json);
    CU_ASSERT_EQUAL(game_svc_snapshot(&service, game.id, &json, &meta), GAME_SVC_OK);
    CU_ASSERT_STRING_EQUAL(meta.type, "game");
    CU_ASSERT_EQUAL(meta.version, 4);
    cJSON *root = json.data ? cJSON_ParseWithLength(json.data, json.length) : NULL;
    const cJSON *type = cJSON_GetObjectItemCaseSensitive(root, "type");
    const cJSON *status = cJSON_GetObjectItemCaseSensitive(root, "status");
    CU_ASSERT_TRUE(cJSON_IsString(type) && !strcmp(type->valuestring, "game"));
    CU_ASSERT_TRUE(cJSON_IsString(status) && !strcmp(status->valuestring, game_state_name(GAME_TIMEOUT)));
    CU_ASSERT_PTR_NULL(cJSON_GetObjectItemCaseSensitive(root, "tokens"));
    cJSON_Delete(root);
    buf_free(&json);
    CU_ASSERT_EQUAL(game_svc_check_flag(&service, "AAAAAAAAAAAAAAAC", &meta), GAME_SVC_ENOT_FOUND);
}

static void test_undo_takes_back_the_callers_last_move_from_the_move_list(void)
{
    created_t game;
    CU_ASSERT_TRUE_FATAL(create(0, &game)); /* takeback policy: free */
    CU_ASSERT_EQUAL(change_status(&game, WHITE, 1, GAME_SVC_MOVE, "e4"), GAME_SVC_OK);
    CU_ASSERT_EQUAL(change_status(&game, BLACK, 2, GAME_SVC_MOVE, "c5"), GAME_SVC_OK);
    CU_ASSERT_EQUAL(change_status(&game, WHITE, 3, GAME_SVC_UNDO, NULL), GAME_SVC_EREFUSED);
    CU_ASSERT_EQUAL(change_status(&game, BLACK, 3, GAME_SVC_UNDO, NULL), GAME_SVC_OK);
    game_svc_game_t g;
    if (read_game(game.id, &g)) {
        CU_ASSERT_EQUAL(g.record.version, 4);
        CU_ASSERT_EQUAL(g.record.game.ply_count, 1);
        CU_ASSERT_TRUE(g.moves_length == strlen("e2e4:e4") && !memcmp(g.moves, "e2e4:e4", g.moves_length));
    }
    game_svc_game_free(&g);
}

/* A change guarded by expected_ply and, when expected > 0, by
 * expected_version too; out is the caller's to free. */
static game_svc_status_t change_at_ply(const created_t *game, color_t who, uint64_t ply, uint64_t expected,
                                       game_svc_action_kind_t kind, const char *move, game_svc_result_t *out)
{
    game_svc_request_t rq = { .answer_status = 200 };
    game_svc_version_t version = { .ply_given = true, .ply = ply, .given = expected > 0, .expected = expected };
    game_svc_action_t action = { .kind = kind, .move = move };
    memset(out, 0, sizeof *out);
    return game_svc_change(&service, game->id, game->tokens[who], &rq, &version, &action, out);
}

/* A move depends on the position, not on offers: guarded by its ply it
 * passes a draw offer made since, and conflicts once a move was made,
 * saying the game's ply and version. */
static void test_a_move_guarded_by_its_ply_passes_an_offer_and_conflicts_after_a_move(void)
{
    created_t game;
    CU_ASSERT_TRUE_FATAL(create(0, &game));
    CU_ASSERT_EQUAL(change_status(&game, WHITE, 1, GAME_SVC_MOVE, "e4"), GAME_SVC_OK);
    game_svc_result_t out;
    game_svc_request_t rq = { .answer_status = 200 };
    game_svc_version_t at_2 = { .given = true, .expected = 2 };
    game_svc_action_t offer = { .kind = GAME_SVC_DRAW, .action = GAME_DRAW_OFFER };
    memset(&out, 0, sizeof out);
    CU_ASSERT_EQUAL(game_svc_change(&service, game.id, game.tokens[WHITE], &rq, &at_2, &offer, &out), GAME_SVC_OK);
    game_svc_result_free(&out);
    /* Black saw the game at version 2, one ply played: the offer moved the version, not the position. */
    CU_ASSERT_EQUAL(change_at_ply(&game, BLACK, 1, 0, GAME_SVC_MOVE, "e5", &out), GAME_SVC_OK);
    CU_ASSERT_EQUAL(out.version, 4);
    game_svc_result_free(&out);
    /* White, still at one ply played, is a move behind. */
    CU_ASSERT_EQUAL(change_at_ply(&game, WHITE, 1, 0, GAME_SVC_MOVE, "Nf3", &out), GAME_SVC_ECONFLICT);
    CU_ASSERT_EQUAL(out.current_version, 4);
    CU_ASSERT_TRUE(out.ply_known);
    CU_ASSERT_EQUAL(out.current_ply, 2);
    CU_ASSERT_STRING_EQUAL(out.detail, "the game has 2 plies played, not 1 (it is at version 4)");
    game_svc_result_free(&out);
    /* A ply beside a version is refused whatever they say: one guard a move. */
    CU_ASSERT_EQUAL(change_at_ply(&game, WHITE, 2, 4, GAME_SVC_MOVE, "Nf3", &out), GAME_SVC_ECONFLICTING);
    game_svc_result_free(&out);
    CU_ASSERT_EQUAL(change_at_ply(&game, WHITE, 2, 0, GAME_SVC_MOVE, "Nf3", &out), GAME_SVC_OK);
    CU_ASSERT_EQUAL(out.version, 5);
    game_svc_result_free(&out);
}

typedef struct {
    const created_t *game;
    atomic_bool done;
    atomic_uint writes;
} offers_t;

/* Black offers a draw and white declines it, over and over, until done:
 * every one a new version of the game, none a move. */
static void *offer_and_decline(void *arg)
{
    offers_t *o = arg;
    game_svc_request_t rq = { .answer_status = 200 };
    game_svc_version_t any = { .if_match = "*" };
    while (!atomic_load(&o->done)) {
        for (int who = BLACK, action = GAME_DRAW_OFFER; who >= WHITE; who--, action = GAME_DRAW_DECLINE) {
            game_svc_action_t a = { .kind = GAME_SVC_DRAW, .action = action };
            game_svc_result_t out = { 0 };
            if (game_svc_change(&service, o->game->id, o->game->tokens[who], &rq, &any, &a, &out) == GAME_SVC_OK)
                atomic_fetch_add(&o->writes, 1);
            game_svc_result_free(&out);
        }
    }
    return NULL;
}

/* Guarded by its ply, a move whose write finds the version moved by an
 * offer since its load is judged again on a fresh load and made: never a
 * conflict. A timed game is loaded from the store every time, so the race
 * is the store's compare-and-set, not a stale cached copy. */
static void test_a_move_guarded_by_its_ply_survives_offers_racing_its_write(void)
{
    static const char *const line[] = { "Nf3", "Nf6", "Ng1", "Ng8" };
    unsigned conflicts = 0, offered = 0;
    for (int round = 0; round < 3; round++) { /* the race is not hit every time: three games of 12 plies */
        created_t game;
        CU_ASSERT_TRUE_FATAL(create(600000, &game));
        offers_t offers = { .game = &game };
        pthread_t thread;
        CU_ASSERT_EQUAL_FATAL(pthread_create(&thread, NULL, offer_and_decline, &offers), 0);
        for (int waited = 0; atomic_load(&offers.writes) == 0 && waited < 2000; waited++)
            usleep(1000); /* the offers under way before the first move */
        for (uint64_t ply = 0; ply < 12; ply++) {
            game_svc_status_t status;
            game_svc_result_t out;
            while ((status = change_at_ply(&game, (color_t)(ply % 2), ply, 0, GAME_SVC_MOVE, line[ply % 4], &out))
                   == GAME_SVC_EBUSY) /* lost the race every time it was judged: retried as a client would */
                game_svc_result_free(&out);
            conflicts += status == GAME_SVC_ECONFLICT;
            CU_ASSERT_EQUAL(status, GAME_SVC_OK);
            game_svc_result_free(&out);
        }
        atomic_store(&offers.done, true);
        pthread_join(thread, NULL);
        offered += atomic_load(&offers.writes);
        game_svc_game_t g;
        if (read_game(game.id, &g))
            CU_ASSERT_EQUAL(g.record.game.ply_count, 12);
        game_svc_game_free(&g);
    }
    CU_ASSERT_EQUAL(conflicts, 0);
    CU_ASSERT_TRUE(offered > 0);
}

/* --- presence and claims --- */

/* Sets a player's last sign (Redis ms) as the game's hash keeps it. */
static void set_seen(const char *id, const char *player, long long ms)
{
    redisReply *r = redis_server_command(&server, NULL, "HSET chessd:game:{%s} seen:%s %lld", id, player, ms);
    CU_ASSERT_TRUE(r && r->type == REDIS_REPLY_INTEGER);
    if (r)
        freeReplyObject(r);
}

static game_svc_status_t claim(const created_t *game, color_t who, uint64_t expected, game_claim_t what,
                               game_svc_result_t *out)
{
    game_svc_request_t rq = { .answer_status = 200 };
    game_svc_version_t version = { .given = true, .expected = expected };
    game_svc_action_t action = { .kind = GAME_SVC_CLAIM, .action = what };
    memset(out, 0, sizeof *out);
    return game_svc_change(&service, game->id, game->tokens[who], &rq, &version, &action, out);
}

static void test_a_claim_waits_for_the_opponent_to_be_gone_long_enough(void)
{
    game_svc_config_t saved = service;
    service.gone_after_ms = 1000; /* no clock: 3 s */
    service.presence_ms = 500;
    created_t game;
    CU_ASSERT_TRUE_FATAL(create(0, &game));
    CU_ASSERT_EQUAL_FATAL(change_status(&game, WHITE, 1, GAME_SVC_MOVE, "e4"), GAME_SVC_OK);
    CU_ASSERT_EQUAL_FATAL(change_status(&game, BLACK, 2, GAME_SVC_MOVE, "e5"), GAME_SVC_OK);
    CU_ASSERT_EQUAL_FATAL(change_status(&game, WHITE, 3, GAME_SVC_MOVE, "Nf3"), GAME_SVC_OK);
    /* Both players' streams marked: no one is gone. */
    game_svc_presence_t judged;
    CU_ASSERT_EQUAL(game_svc_presence(&service, game.id, 3u, &judged), GAME_SVC_OK);
    CU_ASSERT_FALSE(judged.gone[WHITE]);
    CU_ASSERT_FALSE(judged.gone[BLACK]);
    /* Black is here: no claim, and no time to wait for. */
    game_svc_result_t out;
    CU_ASSERT_EQUAL(claim(&game, WHITE, 4, GAME_CLAIM_VICTORY, &out), GAME_SVC_EREFUSED);
    CU_ASSERT_EQUAL(out.refusal, GAME_EOPPONENT_NOT_GONE);
    CU_ASSERT_EQUAL(out.claim_in_ms, 0);
    game_svc_result_free(&out);
    /* Black's last sign long past: gone, the wait counted from Black's turn. */
    set_seen(game.id, "black", 1);
    CU_ASSERT_EQUAL(game_svc_presence(&service, game.id, 1u << WHITE, &judged), GAME_SVC_OK);
    CU_ASSERT_TRUE(judged.gone[WHITE]);
    CU_ASSERT(judged.claim_in_ms[WHITE] > 0 && judged.claim_in_ms[WHITE] <= 3000);
    CU_ASSERT_EQUAL(claim(&game, WHITE, 4, GAME_CLAIM_VICTORY, &out), GAME_SVC_EREFUSED);
    CU_ASSERT_EQUAL(out.refusal, GAME_EOPPONENT_NOT_GONE);
    CU_ASSERT(out.claim_in_ms > 0 && out.claim_in_ms <= 3000);
    game_svc_result_free(&out);
    /* Black, not to move, is never told White is gone; the game's version never moved. */
    CU_ASSERT_FALSE(judged.gone[BLACK]);
    /* With a shorter wait passed, the claim ends the game. */
    service.gone_after_ms = 100;
    usleep(400 * 1000);
    CU_ASSERT_EQUAL(claim(&game, WHITE, 4, GAME_CLAIM_VICTORY, &out), GAME_SVC_OK);
    CU_ASSERT_EQUAL(out.version, 5);
    game_svc_result_free(&out);
    game_svc_game_t g;
    if (read_game(game.id, &g)) {
        CU_ASSERT_EQUAL(g.record.game.state, GAME_TIMEOUT);
        CU_ASSERT_EQUAL(g.record.game.result, GAME_WHITE_WINS);
        CU_ASSERT_EQUAL(g.record.game.termination, GAME_TERMINATION_ABANDONMENT);
        CU_ASSERT(g.stored.seen_ms[WHITE] > 0); /* the claim is a sign of White's */
    }
    game_svc_game_free(&g);
    service = saved;
}

static void test_nothing_is_judged_nor_claimed_with_claims_off(void)
{
    created_t game;
    CU_ASSERT_TRUE_FATAL(create(0, &game));
    CU_ASSERT_EQUAL_FATAL(change_status(&game, WHITE, 1, GAME_SVC_MOVE, "e4"), GAME_SVC_OK);
    CU_ASSERT_EQUAL_FATAL(change_status(&game, BLACK, 2, GAME_SVC_MOVE, "e5"), GAME_SVC_OK);
    set_seen(game.id, "white", 1);
    /* The suite's service has --gone-after 0: nothing is judged, nothing may be claimed. */
    game_svc_presence_t judged;
    CU_ASSERT_EQUAL(game_svc_presence(&service, game.id, 3u, &judged), GAME_SVC_OK);
    CU_ASSERT_FALSE(judged.gone[BLACK]);
    game_svc_result_t out;
    CU_ASSERT_EQUAL(claim(&game, BLACK, 3, GAME_CLAIM_DRAW, &out), GAME_SVC_EREFUSED);
    CU_ASSERT_EQUAL(out.refusal, GAME_ECLAIM_NOT_ALLOWED);
    game_svc_result_free(&out);
}

int test_game_service_register(void)
{
    CU_pSuite suite = CU_add_suite("game_service", suite_init, suite_cleanup);
    if (!suite)
        return CU_get_error();
    CU_ADD_TEST(suite, test_a_created_game_reads_back_at_version_1_from_the_start);
    CU_ADD_TEST(suite, test_an_unknown_or_malformed_id_is_not_found);
    CU_ADD_TEST(suite, test_a_move_at_the_current_version_is_written_and_a_stale_version_conflicts);
    CU_ADD_TEST(suite, test_a_change_without_a_version_or_with_a_stale_if_match_is_refused);
    CU_ADD_TEST(suite, test_only_the_players_tokens_may_change_a_game_and_only_on_their_turn);
    CU_ADD_TEST(suite, test_an_illegal_move_is_refused_with_its_reason_index_and_position);
    CU_ADD_TEST(suite, test_invalid_request_values_are_refused_with_the_callers_sentence);
    CU_ADD_TEST(suite, test_a_retry_with_its_key_gets_the_first_answer_and_another_request_is_refused);
    CU_ADD_TEST(suite, test_resignation_ends_the_game_and_nothing_changes_it_after);
    CU_ADD_TEST(suite, test_abort_ends_a_game_before_both_have_moved_and_is_too_late_after);
    CU_ADD_TEST(suite, test_a_read_after_the_flag_fell_records_the_loss_on_time_once);
    CU_ADD_TEST(suite, test_a_change_after_the_flag_fell_is_refused_as_over_on_time);
    CU_ADD_TEST(suite, test_the_hubs_flag_check_and_snapshot_need_no_request);
    CU_ADD_TEST(suite, test_undo_takes_back_the_callers_last_move_from_the_move_list);
    CU_ADD_TEST(suite, test_a_move_guarded_by_its_ply_passes_an_offer_and_conflicts_after_a_move);
    CU_ADD_TEST(suite, test_a_move_guarded_by_its_ply_survives_offers_racing_its_write);
    CU_ADD_TEST(suite, test_a_claim_waits_for_the_opponent_to_be_gone_long_enough);
    CU_ADD_TEST(suite, test_nothing_is_judged_nor_claimed_with_claims_off);
    return CUE_SUCCESS;
}
