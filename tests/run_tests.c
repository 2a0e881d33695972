/* CUnit runner for every suite, or for the suites named on the command line
 * (`run_tests [-v] [suite...]`, e.g. `run_tests -v tls store`). Exits non-zero
 * when any assertion fails or a suite cannot be set up, so `make test` and CI
 * fail with it. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <CUnit/Basic.h>

#include "../api/http/buf.h"
#include "tests.h"

const char *tests_perft_dir(void)
{
    const char *dir = getenv("CHESSD_PERFT_DIR");
    return dir && *dir ? dir : "tests/data/perft";
}

bool tests_parse_fen(const char *fen, position_t *pos)
{
    char message[256];
    fen_error_t err = fen_parse(fen, strlen(fen), FEN_ALLOW_IMPOSSIBLE_CHECK | FEN_DETECT_CHESS960, pos, message,
                                sizeof message);
    if (err != FEN_OK)
        fprintf(stderr, "\nFEN rejected: %s: %s\n", fen, message);
    CU_ASSERT_EQUAL_FATAL(err, FEN_OK);
    return err == FEN_OK;
}

bool tests_play(position_t *pos, const char *moves, uint64_t *history, size_t *history_count)
{
    const char *p = moves;
    while (*p) {
        while (*p == ' ')
            p++;
        size_t len = strcspn(p, " ");
        if (len == 0)
            break;
        move_t move;
        char message[256];
        legality_reason_t r = notation_parse_move(pos, p, len, &move, message, sizeof message);
        if (r != LEGALITY_OK)
            fprintf(stderr, "\nmove '%.*s' refused: %s\n", (int)len, p, message);
        CU_ASSERT_EQUAL_FATAL(r, LEGALITY_OK);
        if (history)
            history[(*history_count)++] = pos->key;
        position_undo_t undo;
        position_make(pos, move, &undo);
        p += len;
    }
    return true;
}

static long allocations_left, allocation_calls;
static size_t last_allocation_size;

static void *failing_realloc(void *ptr, size_t size)
{
    allocation_calls++;
    last_allocation_size = size;
    if (allocations_left == 0)
        return NULL;
    allocations_left--;
    return realloc(ptr, size);
}

void tests_fail_allocations_after(long successes)
{
    allocations_left = successes;
    allocation_calls = 0;
    last_allocation_size = 0;
    buf_set_realloc(failing_realloc);
}

void tests_allocations_work(void) { buf_set_realloc(NULL); }

long tests_allocation_calls(void) { return allocation_calls; }

size_t tests_last_allocation_size(void) { return last_allocation_size; }

long tests_monotonic_ms(void)
{
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    return (long)now.tv_sec * 1000 + now.tv_nsec / 1000000;
}

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
        test_perft_register, test_position_register, test_fen_register, test_san_register,
        test_legality_register, test_status_register, test_game_register, test_stockfish_register,
        test_oracle_register, test_store_register, test_game_record_register, test_target_register,
        test_wire_register, test_tokens_register, test_buf_register, test_jsonw_register,
        /* after tokens, whose first test needs no secret set yet */
        test_pgn_register, test_idempotency_register, test_events_register, test_game_events_register,
        test_game_service_register,
        test_http_register, test_subscriber_register, test_tls_register, test_config_register,
        test_cluster_register, test_store_cluster_register, test_board_svg_register,
        test_chess960_register, test_pgn_read_register, test_play_register, test_sendq_register,
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
