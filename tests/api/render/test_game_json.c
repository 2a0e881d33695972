/* Tests for api/render/game_json.c. The answer and the event that
 * game_json_change_and_event writes together are byte for byte what
 * game_json_change writes for each alone, along seeded random games to their
 * ends. Its instants (game_json_iso_time) agree with gmtime_r and strftime,
 * at random and on the days a calendar gets wrong. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "../../../api/render/game_json.h"
#include "../../support/random_game.h"
#include "../../support/tests.h"

typedef struct {
    long compared, differing, ended, with_moves;
} pair_count_t;

/* Both ways for r after played, every event name and flag setting. */
static void compare(const game_record_t *r, const game_played_t *played, int64_t now, pair_count_t *c)
{
    static const char *const events[] = { "move", "draw_offer", "resign", "takeback", "a \"quoted\" name" };
    for (size_t e = 0; e < sizeof events / sizeof events[0]; e++) {
        for (unsigned flags = 0; flags <= GAME_JSON_LEGAL_MOVES; flags++) {
            size_t answer_length = 0, event_length = 0, alone_length = 0, alone_event_length = 0;
            char *event = NULL;
            char *answer = game_json_change_and_event(r, played, events[e], flags | GAME_JSON_EVENT, now,
                                                      &answer_length, &event, &event_length);
            char *alone = game_json_change(r, played, events[e], flags, now, &alone_length);
            char *alone_event = game_json_change(r, played, events[e], GAME_JSON_EVENT, now, &alone_event_length);
            CU_ASSERT_PTR_NOT_NULL_FATAL(answer);
            CU_ASSERT_PTR_NOT_NULL_FATAL(event);
            CU_ASSERT_PTR_NOT_NULL_FATAL(alone);
            CU_ASSERT_PTR_NOT_NULL_FATAL(alone_event);
            bool same = answer_length == alone_length && !memcmp(answer, alone, alone_length)
                        && event_length == alone_event_length && !memcmp(event, alone_event, event_length)
                        && answer[answer_length] == '\0' && event[event_length] == '\0';
            c->compared++;
            c->with_moves += strstr(answer, "\"legal_moves\":[{") != NULL;
            if (!same && c->differing++ < 3)
                fprintf(stderr, "\ngame_json: answer\n  %s\n  %s\nevent\n  %s\n  %s\n", answer, alone, event,
                        alone_event);
            free(answer);
            free(event);
            free(alone);
            free(alone_event);
        }
    }
}

/* The answer with the request's flags, the event with GAME_JSON_EVENT:
 * games timed and untimed, standard and Chess960, with draw offers, to
 * mate, stalemate, draws and resignation, each event name and both flag
 * settings. */
static void test_answer_and_event_together_are_each_as_written_alone(void)
{
    uint64_t rng = 0xc4e55d0;
    pair_count_t c = { 0 };
    for (int round = 0; round < 120; round++) {
        static game_record_t r;
        memset(&r, 0, sizeof r);
        snprintf(r.id, sizeof r.id, "G%07d_abcdefgh", round);
        r.created_at_ms = 1700000000123 + round;
        r.updated_at_ms = r.created_at_ms;
        position_t start;
        bool started = round % 4 == 3
                           ? chess960_start(random_game_below(&rng, 960), &start)
                           : tests_parse_fen("rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1", &start);
        CU_ASSERT_FATAL(started);
        game_start(&r.game, &start);
        if (round % 2) {
            CU_ASSERT_FATAL(game_set_rules(&r.game, 180000, 2000, GAME_TAKEBACK_AGREEMENT));
        }
        int64_t now = r.created_at_ms;
        compare(&r, NULL, now, &c);
        for (int ply = 0; ply < 300 && !game_is_over(&r.game); ply++) {
            move_list_t legal;
            movegen_legal(&r.game.pos, &legal);
            char uci[UCI_BUFFER_SIZE];
            uci_format(&r.game.pos, legal.moves[random_game_below(&rng, legal.count)], uci);
            game_played_t played;
            now += 1 + random_game_below(&rng, 3000);
            color_t mover = (color_t)r.game.pos.side_to_move;
            game_status_t status = game_move(&r.game, mover, uci, strlen(uci), GAME_MAX_PLIES, now, &played);
            CU_ASSERT_EQUAL_FATAL(status, GAME_OK);
            r.version++;
            r.updated_at_ms = now;
            if (random_game_below(&rng, 8) == 0 && !game_is_over(&r.game))
                (void)game_draw(&r.game, mover, GAME_DRAW_OFFER, now);
            if (round % 10 == 9 && ply == 40 && !game_is_over(&r.game))
                CU_ASSERT_EQUAL(game_resign(&r.game, (color_t)r.game.pos.side_to_move, now), GAME_OK);
            compare(&r, &played, now + random_game_below(&rng, 500), &c);
        }
        c.ended += game_is_over(&r.game);
    }
    CU_ASSERT_EQUAL(c.differing, 0);
    CU_ASSERT(c.compared > 10000);
    CU_ASSERT(c.with_moves > 1000);
    CU_ASSERT(c.ended > 30);
}

/* What the C library writes for ms. */
static void library_time(int64_t ms, char *out, size_t size)
{
    time_t seconds = (time_t)(ms / 1000);
    struct tm tm;
    CU_ASSERT_PTR_NOT_NULL_FATAL(gmtime_r(&seconds, &tm));
    size_t n = strftime(out, size, "%Y-%m-%dT%H:%M:%S", &tm);
    snprintf(out + n, size - n, ".%03dZ", (int)(ms % 1000));
}

static void test_instants_are_written_as_the_c_library_writes_them(void)
{
    static const int64_t edges[] = {
        0, 999, 1000, 86399999, 86400000, 951782400000 /* 2000-02-29 */, 951868800000 /* 2000-03-01 */,
        4107456000000 /* 2100-02-28 */, 4107542400000 /* 2100-03-01 */, 1709164800000 /* 2024-02-29 */,
        1796316722576, 253402300799999 /* 9999-12-31T23:59:59.999 */, 253402300800000, 253402300800001,
    };
    char ours[GAME_JSON_TIME_SIZE], theirs[GAME_JSON_TIME_SIZE];
    for (size_t i = 0; i < sizeof edges / sizeof edges[0]; i++) {
        game_json_iso_time(edges[i], ours);
        library_time(edges[i], theirs, sizeof theirs);
        CU_ASSERT_STRING_EQUAL(ours, theirs);
    }
    game_json_iso_time(951782400000, ours);
    CU_ASSERT_STRING_EQUAL(ours, "2000-02-29T00:00:00.000Z");
    uint64_t rng = 0x71e5;
    int differing = 0;
    for (int i = 0; i < 200000; i++) {
        rng ^= rng << 13, rng ^= rng >> 7, rng ^= rng << 17;
        int64_t ms = (int64_t)(rng % UINT64_C(253402300800000));
        if (i % 2) /* half of them near now, a day's every millisecond as likely */
            ms = 1700000000000 + (int64_t)(rng % UINT64_C(3000000000000));
        game_json_iso_time(ms, ours);
        library_time(ms, theirs, sizeof theirs);
        if (strcmp(ours, theirs) && differing++ < 3)
            fprintf(stderr, "\n%lld: %s, the C library %s\n", (long long)ms, ours, theirs);
    }
    CU_ASSERT_EQUAL(differing, 0);
}

int test_game_json_register(void)
{
    CU_pSuite suite = CU_add_suite("game_json", NULL, NULL);
    if (!suite)
        return CU_get_error();
    CU_ADD_TEST(suite, test_answer_and_event_together_are_each_as_written_alone);
    CU_ADD_TEST(suite, test_instants_are_written_as_the_c_library_writes_them);
    return CUE_SUCCESS;
}
