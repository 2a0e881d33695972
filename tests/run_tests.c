/* CUnit runner for every suite, or for the suites named on the command line
 * (`run_tests [-v] [suite...]`, e.g. `run_tests -v tls store_redis`). Exits non-zero
 * when any assertion fails or a suite cannot be set up, so `make test` and CI
 * fail with it. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <CUnit/Basic.h>

#include "support/tests.h"

/* With names, runs only the suites named (the others inactive, and not
 * counted as failures); false when a name is not a suite's. */
static bool select_suites(int count, char **names)
{
    if (count == 0)
        return true;
    for (int i = 0; i < count; i++) {
        if (!CU_get_suite(names[i])) {
            fprintf(stderr, "no suite named '%s'\n", names[i]);
            return false;
        }
    }
    for (CU_pSuite suite = CU_get_registry()->pSuite; suite; suite = suite->pNext) {
        bool named = false;
        for (int i = 0; i < count && !named; i++)
            named = !strcmp(suite->pName, names[i]);
        CU_set_suite_active(suite, named);
    }
    CU_set_fail_on_inactive(CU_FALSE);
    return true;
}

int main(int argc, char **argv)
{
    int (*const suites[])(void) = {
        test_perft_register, test_variant_perft_register, test_position_register, test_fen_register, test_san_register,
        test_legality_register, test_status_register, test_game_register, test_game_clock_register, test_game_claim_register,
        test_game_view_register,
        test_movegen_register,
        test_oracle_register, test_store_redis_register, test_game_record_register, test_game_meta_register,
        test_conn_register, test_fiber_register, test_fiber_pool_register,
        test_target_register, test_cors_register,
        test_variant_fen_register,
        test_wire_register, test_tokens_register, test_buf_register, test_jsonw_register,
        /* after tokens, whose first test needs no secret set yet */
        test_pgn_register, test_idempotency_register, test_events_register, test_game_events_register,
        test_request_register, test_store_subscriber_register, test_tls_register, test_config_register,
        test_cluster_register, test_store_redis_cluster_register, test_board_svg_register,
        test_board_text_register,
        test_game_service_register, test_precondition_register,
        test_chess960_register, test_pgn_read_register, test_pgn_tree_events_register, test_play_register, test_sendq_register, test_membudget_register,
        test_timers_register, test_http_client_register, test_position_json_register, test_game_json_register,
        test_notation_register,
        test_problem_register, test_ratelimit_register, test_workpool_register, test_acceptor_register,
        test_router_register, test_body_register, test_utf8_register, test_game_cache_register,
        test_metrics_register,
        test_hex_register,
        test_decimal_register,
        test_text_register,
        test_mhd_version_register,
        test_engine_register,
        test_engine_variants_register,
        test_levels_register,
        test_review_math_register,
        test_reviews_register,
        test_engine_jobs_register,
        test_deadlines_register,
        test_pool_register,
        test_play_engine_register,
        test_play_input_register,
        test_play_settings_register,
        test_play_random_register,
        test_opening_register,
        test_service_keys_register,
        test_webhook_input_register,
        test_webhook_kinds_register,
        test_webhooks_register,
    };
    rules_init();
    if (CU_initialize_registry() != CUE_SUCCESS)
        return 2;
    for (size_t i = 0; i < sizeof suites / sizeof suites[0]; i++) {
        if (suites[i]() != CUE_SUCCESS) {
            fprintf(stderr, "suite registration failed: %s\n", CU_get_error_msg());
            CU_cleanup_registry();
            return 2;
        }
    }
    bool verbose = argc > 1 && !strcmp(argv[1], "-v");
    if (!select_suites(argc - 1 - verbose, argv + 1 + verbose)) {
        CU_cleanup_registry();
        return 2;
    }
    CU_basic_set_mode(verbose ? CU_BRM_VERBOSE : CU_BRM_NORMAL);
    CU_basic_run_tests();
    unsigned failures = CU_get_number_of_failures();
    unsigned failed_suites = CU_get_number_of_suites_failed();
    unsigned ran = CU_get_number_of_tests_run();
    CU_cleanup_registry();
    if (ran == 0) {
        fprintf(stderr, "no test ran\n");
        return 1;
    }
    return failures || failed_suites ? 1 : 0;
}
