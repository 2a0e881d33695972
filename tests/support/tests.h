/* Shared declarations for the CUnit test suites: each test_<module>.c file
 * (in tests/rules, tests/store, tests/api ..., mirroring the sources)
 * registers its suite through one function listed here and in run_tests.c.
 * Tests run from the repository root; the perft data lives in tests/data/perft
 * (override with CHESSD_PERFT_DIR). */
#ifndef CHESSD_TESTS_SUPPORT_TESTS_H
#define CHESSD_TESTS_SUPPORT_TESTS_H

#include <CUnit/CUnit.h>

#include "../../rules/rules.h"

int test_perft_register(void);
int test_variant_perft_register(void);
int test_variant_fen_register(void);
int test_position_register(void);
int test_fen_register(void);
int test_san_register(void);
int test_legality_register(void);
int test_status_register(void);
int test_game_register(void);
int test_game_clock_register(void);
int test_game_view_register(void);
int test_game_claim_register(void);
int test_movegen_register(void);
int test_oracle_register(void);
int test_store_redis_register(void);
int test_game_record_register(void);
int test_game_meta_register(void);
int test_conn_register(void);
int test_fiber_register(void);
int test_fiber_pool_register(void);
int test_target_register(void);
int test_cors_register(void);
int test_wire_register(void);
int test_tokens_register(void);
int test_buf_register(void);
int test_jsonw_register(void);
int test_pgn_register(void);
int test_pgn_read_register(void);
int test_pgn_tree_events_register(void);
int test_idempotency_register(void);
int test_events_register(void);
int test_game_events_register(void);
int test_request_register(void);
int test_store_subscriber_register(void);
int test_game_service_register(void);
int test_tls_register(void);
int test_config_register(void);
int test_cluster_register(void);
int test_store_redis_cluster_register(void);
int test_board_svg_register(void);
int test_board_text_register(void);
int test_chess960_register(void);
int test_play_register(void);
int test_play_input_register(void);
int test_play_settings_register(void);
int test_play_random_register(void);
int test_sendq_register(void);
int test_membudget_register(void);
int test_timers_register(void);
int test_http_client_register(void);
int test_position_json_register(void);
int test_game_json_register(void);
int test_notation_register(void);
int test_problem_register(void);
int test_precondition_register(void);
int test_ratelimit_register(void);
int test_workpool_register(void);
int test_acceptor_register(void);
int test_router_register(void);
int test_body_register(void);
int test_utf8_register(void);
int test_game_cache_register(void);
int test_metrics_register(void);
int test_hex_register(void);
int test_decimal_register(void);
int test_text_register(void);
int test_mhd_version_register(void);
int test_engine_register(void);
int test_engine_variants_register(void);
int test_play_engine_register(void);
int test_opening_register(void);
int test_levels_register(void);
int test_review_math_register(void);
int test_reviews_register(void);
int test_engine_jobs_register(void);
int test_deadlines_register(void);
int test_pool_register(void);
int test_service_keys_register(void);
int test_webhook_input_register(void);
int test_webhook_kinds_register(void);
int test_webhooks_register(void);

/* Directory holding standard.epd, tricky.epd and chess960.epd. */
const char *tests_perft_dir(void);

/* Parses fen as standard chess, or as Chess960 when its castling needs it,
 * accepting impossible checks (perft positions have them); CU-asserts success. Returns true when parsed. */
bool tests_parse_fen(const char *fen, position_t *pos);

/* Plays space-separated moves (UCI or SAN) on pos, CU-asserting each is
 * legal. When history is not NULL, the key of each position before a move is
 * appended to history[*history_count]. Returns true when all were played. */
bool tests_play(position_t *pos, const char *moves, uint64_t *history, size_t *history_count);

/* Makes every buf allocation after the next `successes` fail (buf_set_realloc),
 * counting them; tests_allocations_work() restores realloc. Register suites
 * that use it with tests_allocations_work as their per-test teardown, so a
 * failed assertion cannot leave allocations failing for the suites after. */
void tests_fail_allocations_after(long successes);
void tests_allocations_work(void);
/* Allocations asked for since tests_fail_allocations_after(), and the size of the last one. */
long tests_allocation_calls(void);
size_t tests_last_allocation_size(void);

/* Milliseconds on the monotonic clock, for timeouts and timings. */
long tests_monotonic_ms(void);

/* Makes a fresh directory /tmp/chessd-<name>-XXXXXX into dir (64 bytes);
 * false, saying why on stderr, when it cannot. */
bool tests_temp_dir(char dir[64], const char *name);
/* Removes a tests_temp_dir and all in it (nothing when dir is empty). */
void tests_remove_dir(const char *dir);

#endif
