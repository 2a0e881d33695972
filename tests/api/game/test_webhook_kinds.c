/* Tests for api/game/webhook_kinds.c: the kind of each event the game
 * service names (an offer and its answer are "offer", a move taken back
 * "takeback", an ending "end" besides). Also which of a game's
 * subscriptions an event of some kinds reaches. */
#include <stdbool.h>
#include <string.h>

#include "../../../api/game/webhook_kinds.h"
#include "../../support/tests.h"

static void test_each_event_has_its_kind(void)
{
    static const struct {
        const char *event;
        unsigned kinds;
    } cases[] = {
        { "move", WEBHOOK_KIND_MOVE },
        { "draw_offer", WEBHOOK_KIND_OFFER },
        { "draw_decline", WEBHOOK_KIND_OFFER },
        { "takeback_offer", WEBHOOK_KIND_OFFER },
        { "takeback_decline", WEBHOOK_KIND_OFFER },
        { "takeback_accept", WEBHOOK_KIND_TAKEBACK },
        { "undo", WEBHOOK_KIND_TAKEBACK },
        { "give_time", WEBHOOK_KIND_CLOCK },
        { "clock_start", WEBHOOK_KIND_CLOCK },
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        CU_ASSERT_EQUAL(webhook_event_kinds(cases[i].event, false), cases[i].kinds);
        CU_ASSERT_EQUAL(webhook_event_kinds(cases[i].event, true), cases[i].kinds | WEBHOOK_KIND_END);
    }
}

static void test_an_ending_is_an_end_whatever_its_name(void)
{
    const char *endings[] = { "resign", "abort", "draw_accept", "draw_claim", "claim_victory", "flag" };
    for (size_t i = 0; i < sizeof endings / sizeof *endings; i++) {
        CU_ASSERT_EQUAL(webhook_event_kinds(endings[i], true), WEBHOOK_KIND_END);
        CU_ASSERT_EQUAL(webhook_event_kinds(endings[i], false), 0);
    }
    CU_ASSERT_EQUAL(webhook_event_kinds(NULL, true), WEBHOOK_KIND_END);
    CU_ASSERT_EQUAL(webhook_event_kinds(NULL, false), 0);
}

static void test_a_name_is_matched_whole(void)
{
    CU_ASSERT_EQUAL(webhook_event_kinds("draw", false), 0);
    CU_ASSERT_EQUAL(webhook_event_kinds("draw_offers", false), 0);
    CU_ASSERT_EQUAL(webhook_event_kinds("MOVE", false), 0);
    CU_ASSERT_EQUAL(webhook_kind_of("offer", 5), WEBHOOK_KIND_OFFER);
    CU_ASSERT_EQUAL(webhook_kind_of("offers", 6), 0);
    CU_ASSERT_EQUAL(webhook_kind_of("offer", 4), 0);
    for (unsigned i = 0; i < WEBHOOK_KIND_COUNT; i++)
        CU_ASSERT_EQUAL(webhook_kind_of(webhook_kind_name(i), strlen(webhook_kind_name(i))), 1u << i);
    CU_ASSERT_STRING_EQUAL(webhook_kind_name(WEBHOOK_KIND_COUNT), "");
}

static void test_an_offer_reaches_only_the_subscriptions_that_ask_for_offers(void)
{
    char text[256] = "";
    char hits[STORE_WEBHOOKS_PER_GAME][STORE_WEBHOOK_ID_SIZE];
    CU_ASSERT_TRUE(webhook_subs_text_add(text, sizeof text, "wh_moves", WEBHOOK_KIND_MOVE | WEBHOOK_KIND_END));
    CU_ASSERT_TRUE(webhook_subs_text_add(text, sizeof text, "wh_offers", WEBHOOK_KIND_OFFER));
    CU_ASSERT_TRUE(webhook_subs_text_add(text, sizeof text, "wh_all", WEBHOOK_KIND_ALL));
    CU_ASSERT_STRING_EQUAL(text, "wh_moves=17 wh_offers=2 wh_all=31");
    CU_ASSERT_EQUAL(webhook_subs_hit(text, webhook_event_kinds("draw_offer", false), hits), 2);
    CU_ASSERT_STRING_EQUAL(hits[0], "wh_offers");
    CU_ASSERT_STRING_EQUAL(hits[1], "wh_all");
    CU_ASSERT_EQUAL(webhook_subs_hit(text, webhook_event_kinds("move", false), hits), 2);
    CU_ASSERT_STRING_EQUAL(hits[0], "wh_moves");
    CU_ASSERT_STRING_EQUAL(hits[1], "wh_all");
    CU_ASSERT_EQUAL(webhook_subs_hit(text, webhook_event_kinds("give_time", false), hits), 1);
    CU_ASSERT_STRING_EQUAL(hits[0], "wh_all");
}

static void test_a_game_takes_as_many_subscriptions_as_it_may_and_no_more(void)
{
    char text[512] = "", hits[STORE_WEBHOOKS_PER_GAME][STORE_WEBHOOK_ID_SIZE];
    for (unsigned i = 0; i < STORE_WEBHOOKS_PER_GAME; i++) {
        char sub[STORE_WEBHOOK_ID_SIZE] = "wh_0";
        sub[3] = (char)('0' + i);
        CU_ASSERT_TRUE(webhook_subs_text_add(text, sizeof text, sub, WEBHOOK_KIND_MOVE));
    }
    char before[512];
    strcpy(before, text);
    CU_ASSERT_FALSE(webhook_subs_text_add(text, sizeof text, "wh_9", WEBHOOK_KIND_MOVE));
    CU_ASSERT_STRING_EQUAL(text, before);
    CU_ASSERT_EQUAL(webhook_subs_hit(text, WEBHOOK_KIND_MOVE, hits), STORE_WEBHOOKS_PER_GAME);
    /* A text too small for the next one is left as it was. */
    char small[12] = "wh_a=1";
    CU_ASSERT_FALSE(webhook_subs_text_add(small, sizeof small, "wh_b", WEBHOOK_KIND_MOVE));
    CU_ASSERT_STRING_EQUAL(small, "wh_a=1");
}

int test_webhook_kinds_register(void)
{
    CU_pSuite suite = CU_add_suite("webhook_kinds", NULL, NULL);
    if (!suite)
        return CU_get_error();
    CU_ADD_TEST(suite, test_each_event_has_its_kind);
    CU_ADD_TEST(suite, test_an_ending_is_an_end_whatever_its_name);
    CU_ADD_TEST(suite, test_a_name_is_matched_whole);
    CU_ADD_TEST(suite, test_an_offer_reaches_only_the_subscriptions_that_ask_for_offers);
    CU_ADD_TEST(suite, test_a_game_takes_as_many_subscriptions_as_it_may_and_no_more);
    return CU_get_error();
}
