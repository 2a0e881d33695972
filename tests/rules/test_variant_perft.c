/* Variant perft suite: every line of the .perft files in tests/data/perft/variants
 * (scalachess's published counts for the Lichess variants, Fairy-Stockfish's
 * for S-chess), at every listed depth, and the divide summing to the count.
 * The files read: "id NAME", "epd FEN", then "perft DEPTH NODES" lines. */
#include <stdlib.h>
#include <string.h>

#include "../support/tests.h"

/* Counts above this are left to `make bench` (under the sanitizers a
 * CHESSD_VARIANT_PERFT_BUDGET lowers it). All lines come to about 2 s. */
#define VARIANT_NODE_BUDGET 100000000ULL

static uint64_t node_budget(void)
{
    const char *text = getenv("CHESSD_VARIANT_PERFT_BUDGET");
    return text && *text ? strtoull(text, NULL, 10) : VARIANT_NODE_BUDGET;
}

/* Checks one file in variant; returns how many counts it compared. */
static int check_file(const char *name, variant_t variant)
{
    char path[512], line[512], fen[520] = "", id[520] = "";
    snprintf(path, sizeof path, "%s/variants/%s", tests_perft_dir(), name);
    FILE *file = fopen(path, "r");
    CU_ASSERT_PTR_NOT_NULL_FATAL(file);
    position_t pos;
    bool parsed = false;
    int compared = 0;
    uint64_t budget = node_budget();
    while (fgets(line, sizeof line, file)) {
        line[strcspn(line, "\r\n")] = '\0';
        if (!strncmp(line, "id ", 3)) {
            snprintf(id, sizeof id, "%.500s", line + 3);
        } else if (!strncmp(line, "epd ", 4)) {
            snprintf(fen, sizeof fen, "%.500s", line + 4);
            char message[256];
            parsed = fen_parse_variant(fen, strlen(fen), variant, FEN_ALLOW_IMPOSSIBLE_CHECK | FEN_DETECT_CHESS960,
                                       &pos, message, sizeof message) == FEN_OK;
            if (!parsed)
                fprintf(stderr, "\n%s %s: '%s' refused: %s\n", name, id, fen, message);
            CU_ASSERT(parsed);
        } else if (!strncmp(line, "perft ", 6) && parsed) {
            int depth = 0;
            unsigned long long want = 0;
            CU_ASSERT_EQUAL_FATAL(sscanf(line + 6, "%d %llu", &depth, &want), 2);
            if (want > budget)
                continue;
            uint64_t got = perft_count(&pos, depth);
            if (got != want)
                fprintf(stderr, "\n%s %s perft %d: %llu, published %llu\n", name, id, depth,
                        (unsigned long long)got, want);
            CU_ASSERT_EQUAL(got, want);
            compared++;
        }
    }
    fclose(file);
    return compared;
}

static void test_crazyhouse_matches_published_counts(void)
{
    CU_ASSERT(check_file("crazyhouse.perft", VARIANT_CRAZYHOUSE) >= 10);
}

static void test_atomic_matches_published_counts(void)
{
    CU_ASSERT(check_file("atomic.perft", VARIANT_ATOMIC) >= 10);
}

static void test_antichess_matches_published_counts(void)
{
    CU_ASSERT(check_file("antichess.perft", VARIANT_ANTICHESS) >= 10);
}

static void test_three_check_matches_published_counts(void)
{
    CU_ASSERT(check_file("3check.perft", VARIANT_THREE_CHECK) >= 6);
}

static void test_horde_matches_published_counts(void)
{
    CU_ASSERT(check_file("horde.perft", VARIANT_HORDE) >= 10);
}

static void test_racing_kings_matches_published_counts(void)
{
    CU_ASSERT(check_file("racingkings.perft", VARIANT_RACING_KINGS) >= 10);
}

static void test_seirawan_matches_fairy_stockfish_counts(void)
{
    CU_ASSERT(check_file("seirawan.perft", VARIANT_SEIRAWAN) >= 20);
}

/* King of the hill has no published file: its start is chess's start
 * until a king can reach the centre, which takes more than four plies. */
static void test_king_of_the_hill_start_counts_as_chess(void)
{
    position_t koth, chess;
    fen_start(VARIANT_KING_OF_THE_HILL, &koth);
    CU_ASSERT_TRUE_FATAL(tests_parse_fen(FEN_START, &chess));
    for (int depth = 1; depth <= 4; depth++)
        CU_ASSERT_EQUAL(perft_count(&koth, depth), perft_count(&chess, depth));
}

/* The divide of every start sums to its count, and every root move is
 * written as UCI the variant reads back to the same move. */
static void test_divide_of_each_start_sums_to_the_count_and_reads_back(void)
{
    for (int v = 1; v < VARIANT_COUNT; v++) {
        position_t pos;
        fen_start((variant_t)v, &pos);
        move_t moves[MOVE_LIST_MAX];
        uint64_t counts[MOVE_LIST_MAX], sum = 0;
        int n = perft_divide(&pos, 3, moves, counts);
        for (int i = 0; i < n; i++) {
            sum += counts[i];
            char uci[UCI_BUFFER_SIZE], message[200];
            move_t back = MOVE_NONE;
            uci_format(&pos, moves[i], uci);
            CU_ASSERT_EQUAL(notation_parse_move(&pos, uci, strlen(uci), &back, message, sizeof message),
                            LEGALITY_OK);
            CU_ASSERT_EQUAL(back, moves[i]);
        }
        CU_ASSERT_EQUAL(sum, perft_count(&pos, 3));
    }
}

int test_variant_perft_register(void)
{
    CU_pSuite suite = CU_add_suite("variant_perft", NULL, NULL);
    if (!suite)
        return CU_get_error();
    CU_ADD_TEST(suite, test_crazyhouse_matches_published_counts);
    CU_ADD_TEST(suite, test_atomic_matches_published_counts);
    CU_ADD_TEST(suite, test_antichess_matches_published_counts);
    CU_ADD_TEST(suite, test_three_check_matches_published_counts);
    CU_ADD_TEST(suite, test_horde_matches_published_counts);
    CU_ADD_TEST(suite, test_racing_kings_matches_published_counts);
    CU_ADD_TEST(suite, test_seirawan_matches_fairy_stockfish_counts);
    CU_ADD_TEST(suite, test_king_of_the_hill_start_counts_as_chess);
    CU_ADD_TEST(suite, test_divide_of_each_start_sums_to_the_count_and_reads_back);
    return CU_get_error();
}
