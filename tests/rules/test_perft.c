/* Perft suite: the move generator against the published node counts of
 * tests/data/perft (standard, tricky and all Chess960 positions), with depths
 * capped so it runs in a few seconds. Also perft_divide() against
 * perft_count(), the node budget, and the output of `chessd perft` (binary
 * from $CHESSD_BIN, default build/chessd). */
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../support/epd.h"
#include "../support/random_game.h"
#include "../support/tests.h"

/* Largest standard.epd count checked (under half a second of perft). */
#define STANDARD_NODE_BUDGET 200000000ULL
/* Largest EPD count compared between perft_count and the budgeted walk. */
#define BUDGETED_COMPARE_NODES 5000000ULL
#define FEN_KIWIPETE "r3k2r/p1ppqpb1/bn2pnp1/3PN3/1p2P3/2N2Q1p/PPPBBPPP/R3K2R w KQkq - 0 1"
/* Queens everywhere: perft(5) is about 1.7e10, ~10 s of CPU unbudgeted. */
#define FEN_QUEENS "3Q2rk/N1Qb2rb/1Q1q4/q4Q2/Q1q4q/3qQ1Qq/BR1nQ1Bq/KR3qqQ w - - 0 1"
/* How far past its limit a stopped budget may end: the last node counted
 * before the check (1 plus at most MOVE_LIST_MAX bulk-counted leaves). */
#define BUDGET_MAX_OVERSHOOT (1 + MOVE_LIST_MAX)
/* Chess960 lines are checked to this depth (all 960 lines: ~560M nodes). */
enum { CHESS960_DEPTH = 4, CHESS960_MIN_LINES = 100, DIVIDE_DEPTH = 3 };

/* Compares perft_count at every listed depth up to max_depth; prints the
 * line on a mismatch so the failing position can be replayed. */
static void check_counts(position_t *pos, const epd_entry_t *entry, int max_depth)
{
    for (int depth = 1; depth <= max_depth; depth++) {
        if (!entry->nodes[depth])
            continue;
        uint64_t got = perft_count(pos, depth);
        if (got != entry->nodes[depth])
            fprintf(stderr, "\nperft(%d) of '%s' (line %d) = %llu, published %llu\n", depth, entry->fen,
                    entry->line_number, (unsigned long long)got, (unsigned long long)entry->nodes[depth]);
        CU_ASSERT_EQUAL(got, entry->nodes[depth]);
    }
}

/* Deepest listed depth whose count stays within budget. */
static int depth_within(const epd_entry_t *entry, uint64_t budget)
{
    int depth = 0;
    for (int d = 1; d <= entry->max_depth; d++)
        if (entry->nodes[d] && entry->nodes[d] <= budget)
            depth = d;
    return depth;
}

/* Runs check_counts on every line of a file, the unreachable ones included;
 * returns the number of lines checked. */
static int check_file(const char *name, uint64_t budget)
{
    epd_reader_t reader;
    epd_entry_t entry;
    int checked = 0;
    if (!epd_open(&reader, name))
        return 0;
    while (epd_next(&reader, &entry)) {
        position_t pos;
        if (!tests_parse_fen(entry.fen, &pos))
            continue;
        check_counts(&pos, &entry, depth_within(&entry, budget));
        checked++;
    }
    epd_close(&reader);
    return checked;
}

static void test_standard_positions_match_published_counts(void)
{
    CU_ASSERT(check_file("standard.epd", STANDARD_NODE_BUDGET) >= 6);
}

static void test_tricky_positions_match_published_counts_at_every_listed_depth(void)
{
    CU_ASSERT(check_file("tricky.epd", UINT64_MAX) >= 10);
}

static void test_chess960_positions_match_published_counts(void)
{
    epd_reader_t reader;
    epd_entry_t entry;
    int checked = 0;
    if (!epd_open(&reader, "chess960.epd"))
        return;
    while (epd_next(&reader, &entry)) {
        position_t pos;
        char message[256];
        fen_error_t err = fen_parse(entry.fen, strlen(entry.fen), FEN_CHESS960, &pos, message, sizeof message);
        if (err != FEN_OK)
            fprintf(stderr, "\nchess960.epd line %d rejected: %s\n", entry.line_number, message);
        CU_ASSERT_EQUAL(err, FEN_OK);
        if (err != FEN_OK)
            continue;
        CU_ASSERT(entry.max_depth >= CHESS960_DEPTH);
        check_counts(&pos, &entry, CHESS960_DEPTH);
        checked++;
    }
    epd_close(&reader);
    CU_ASSERT(checked >= CHESS960_MIN_LINES);
}

/* Sorts moves so two lists can be compared as sets. */
static int compare_moves(const void *a, const void *b)
{
    return (int)*(const move_t *)a - (int)*(const move_t *)b;
}

/* perft_divide lists each legal root move once, each with the perft of the
 * position after it, and its counts add up to perft_count. */
static void check_divide(position_t *pos, int depth)
{
    move_t moves[MOVE_LIST_MAX];
    uint64_t counts[MOVE_LIST_MAX], sum = 0;
    position_t before = *pos;
    int n = perft_divide(pos, depth, moves, counts);
    CU_ASSERT(memcmp(&before, pos, sizeof before) == 0);

    move_list_t legal;
    movegen_legal(pos, &legal);
    CU_ASSERT_EQUAL_FATAL(n, legal.count);
    move_t sorted[MOVE_LIST_MAX];
    memcpy(sorted, moves, (size_t)n * sizeof moves[0]);
    qsort(sorted, (size_t)n, sizeof sorted[0], compare_moves);
    qsort(legal.moves, (size_t)n, sizeof legal.moves[0], compare_moves);
    CU_ASSERT(memcmp(sorted, legal.moves, (size_t)n * sizeof sorted[0]) == 0);

    for (int i = 0; i < n; i++) {
        position_t child = *pos;
        position_undo_t undo;
        position_make(&child, moves[i], &undo);
        CU_ASSERT_EQUAL(counts[i], perft_count(&child, depth - 1));
        sum += counts[i];
    }
    CU_ASSERT_EQUAL(sum, perft_count(pos, depth));
}

static void divide_file(const char *name, bool chess960, int max_lines)
{
    epd_reader_t reader;
    epd_entry_t entry;
    int lines = 0;
    if (!epd_open(&reader, name))
        return;
    while (lines < max_lines && epd_next(&reader, &entry)) {
        position_t pos;
        char message[256];
        bool ok = chess960
                      ? fen_parse(entry.fen, strlen(entry.fen), FEN_CHESS960, &pos, message, sizeof message) == FEN_OK
                      : tests_parse_fen(entry.fen, &pos);
        CU_ASSERT(ok);
        if (!ok)
            continue;
        check_divide(&pos, DIVIDE_DEPTH);
        check_divide(&pos, 1);
        lines++;
    }
    epd_close(&reader);
    CU_ASSERT(lines > 0);
}

static void test_divide_lists_each_legal_move_and_sums_to_perft_count(void)
{
    divide_file("standard.epd", false, 100);
    divide_file("tricky.epd", false, 100);
    divide_file("chess960.epd", true, 20);
}

static void test_perft_of_depth_zero_is_one_and_leaves_position_unchanged(void)
{
    position_t pos, before;
    CU_ASSERT_FATAL(tests_parse_fen(FEN_START, &pos));
    before = pos;
    CU_ASSERT_EQUAL(perft_count(&pos, 0), 1);
    CU_ASSERT_EQUAL(perft_count(&pos, 3), perft_count(&before, 3));
    CU_ASSERT(memcmp(&before, &pos, sizeof pos) == 0);
}

/* Nodes a complete budgeted perft to `depth` visits: perft(0) + ... + perft(depth). */
static uint64_t tree_nodes(position_t *pos, int depth)
{
    uint64_t sum = 0;
    for (int d = 0; d <= depth; d++)
        sum += perft_count(pos, d);
    return sum;
}

/* Runs perft_count_budgeted with a fresh budget of `limit`; checks pos is
 * restored and, when stopped, that the overshoot is small. */
static perft_status_t count_with_limit(position_t *pos, int depth, uint64_t limit, uint64_t *leaves,
                                       uint64_t *visited)
{
    position_t before = *pos;
    perft_budget_t budget = { .limit = limit, .visited = 0 };
    perft_status_t status = perft_count_budgeted(pos, depth, &budget, leaves);
    CU_ASSERT(memcmp(&before, pos, sizeof before) == 0);
    if (status == PERFT_OVER_BUDGET) {
        CU_ASSERT(budget.visited > limit);
        CU_ASSERT(budget.visited - limit <= BUDGET_MAX_OVERSHOOT);
    }
    *visited = budget.visited;
    return status;
}

/* At exactly the tree's node count the perft completes, one node less stops
 * it, one more changes nothing; for perft_count_budgeted and perft_divide_budgeted. */
static void check_budget_edges(const char *fen, int max_depth)
{
    position_t pos;
    CU_ASSERT_FATAL(tests_parse_fen(fen, &pos));
    for (int depth = 1; depth <= max_depth; depth++) {
        uint64_t need = tree_nodes(&pos, depth), expected = perft_count(&pos, depth), leaves, visited;
        CU_ASSERT_EQUAL(count_with_limit(&pos, depth, need, &leaves, &visited), PERFT_OK);
        CU_ASSERT_EQUAL(leaves, expected);
        CU_ASSERT_EQUAL(visited, need);
        CU_ASSERT_EQUAL(count_with_limit(&pos, depth, need + 1, &leaves, &visited), PERFT_OK);
        CU_ASSERT_EQUAL(leaves, expected);
        CU_ASSERT_EQUAL(count_with_limit(&pos, depth, need - 1, &leaves, &visited), PERFT_OVER_BUDGET);

        move_t moves[MOVE_LIST_MAX];
        uint64_t counts[MOVE_LIST_MAX];
        int root_moves = -1;
        perft_budget_t exact = { .limit = need, .visited = 0 }, short_one = { .limit = need - 1, .visited = 0 };
        CU_ASSERT_EQUAL(perft_divide_budgeted(&pos, depth, &exact, moves, counts, &root_moves), PERFT_OK);
        CU_ASSERT_EQUAL(exact.visited, need);
        uint64_t sum = 0;
        for (int i = 0; i < root_moves; i++)
            sum += counts[i];
        CU_ASSERT_EQUAL(sum, expected);
        CU_ASSERT_EQUAL(perft_divide_budgeted(&pos, depth, &short_one, moves, counts, &root_moves),
                        PERFT_OVER_BUDGET);
    }
}

static void test_budget_of_exactly_the_tree_nodes_completes_and_one_less_stops(void)
{
    check_budget_edges(FEN_START, 4);    /* 1 + 20 + 400 + 8902 + 197281 nodes at depth 4 */
    check_budget_edges(FEN_KIWIPETE, 3); /* 1 + 48 + 2039 + 97862 */
}

static void test_budget_counts_every_position_visited_not_only_leaves(void)
{
    position_t pos;
    uint64_t leaves, visited;
    CU_ASSERT_FATAL(tests_parse_fen(FEN_START, &pos));
    /* 400 leaves, but the root and its 20 children are visited too. */
    CU_ASSERT_EQUAL(count_with_limit(&pos, 2, 400, &leaves, &visited), PERFT_OVER_BUDGET);
    CU_ASSERT_EQUAL(count_with_limit(&pos, 2, 421, &leaves, &visited), PERFT_OK);
    CU_ASSERT_EQUAL(visited, 421);
    CU_ASSERT_EQUAL(count_with_limit(&pos, 0, 0, &leaves, &visited), PERFT_OVER_BUDGET);
    CU_ASSERT_EQUAL(count_with_limit(&pos, 0, 1, &leaves, &visited), PERFT_OK);
    CU_ASSERT_EQUAL(leaves, 1);
    /* A side with no legal move still costs its move generation: black is
     * mated, so perft(1) = 0 leaves, yet the root is one node. */
    CU_ASSERT_FATAL(tests_parse_fen("rnb1kbnr/pppp1ppp/8/4p3/6Pq/5P2/PPPPP2P/RNBQKBNR w KQkq - 1 3", &pos));
    CU_ASSERT_EQUAL(count_with_limit(&pos, 3, 0, &leaves, &visited), PERFT_OVER_BUDGET);
    CU_ASSERT_EQUAL(count_with_limit(&pos, 3, 1, &leaves, &visited), PERFT_OK);
    CU_ASSERT_EQUAL(leaves, 0);
}

static void test_budget_stops_each_limit_with_a_small_overshoot(void)
{
    position_t pos;
    CU_ASSERT_FATAL(tests_parse_fen(FEN_KIWIPETE, &pos));
    uint64_t need = tree_nodes(&pos, 3);
    for (uint64_t limit = 0; limit < need; limit += 997) {
        uint64_t leaves, visited;
        CU_ASSERT_EQUAL(count_with_limit(&pos, 3, limit, &leaves, &visited), PERFT_OVER_BUDGET);
    }
}

static void test_budget_stops_queen_storm_depth_5_just_past_the_limit(void)
{
    position_t pos, before;
    CU_ASSERT_FATAL(tests_parse_fen(FEN_QUEENS, &pos));
    before = pos;
    const uint64_t limits[] = { 1, 1000, 1000000, 20000000 };
    for (size_t i = 0; i < sizeof limits / sizeof limits[0]; i++) {
        move_t moves[MOVE_LIST_MAX];
        uint64_t counts[MOVE_LIST_MAX], leaves, visited;
        int root_moves;
        long started = tests_monotonic_ms();
        CU_ASSERT_EQUAL(count_with_limit(&pos, 5, limits[i], &leaves, &visited), PERFT_OVER_BUDGET);
        perft_budget_t budget = { .limit = limits[i], .visited = 0 };
        CU_ASSERT_EQUAL(perft_divide_budgeted(&pos, 5, &budget, moves, counts, &root_moves), PERFT_OVER_BUDGET);
        CU_ASSERT(budget.visited > limits[i] && budget.visited - limits[i] <= BUDGET_MAX_OVERSHOOT);
        CU_ASSERT(memcmp(&before, &pos, sizeof pos) == 0);
        /* 2e7 nodes take ~20 ms here; the whole tree would take ~10 s. */
        long elapsed = tests_monotonic_ms() - started;
        if (elapsed >= 2000)
            fprintf(stderr, "\nqueen storm, budget %llu: stopped after %ld ms\n", (unsigned long long)limits[i],
                    elapsed);
        CU_ASSERT(elapsed < 2000);
    }
}

/* Budgeted count and divide against perft_count and perft_divide, with a
 * budget too large to stop them; the nodes visited are the published counts summed. */
static void compare_budgeted_file(const char *name, unsigned flags)
{
    epd_reader_t reader;
    epd_entry_t entry;
    int compared = 0;
    if (!epd_open(&reader, name))
        return;
    while (compared < 40 && epd_next(&reader, &entry)) {
        position_t pos;
        char message[256];
        if (fen_parse(entry.fen, strlen(entry.fen), flags, &pos, message, sizeof message) != FEN_OK)
            continue;
        int depth = depth_within(&entry, BUDGETED_COMPARE_NODES);
        if (depth == 0)
            continue;
        uint64_t published_sum = 1; /* 0 when a depth is not listed */
        for (int d = 1; d <= depth; d++)
            published_sum = entry.nodes[d] && published_sum ? published_sum + entry.nodes[d] : 0;
        for (int d = 1; d <= depth; d++) {
            uint64_t leaves, visited;
            CU_ASSERT_EQUAL(count_with_limit(&pos, d, UINT64_MAX, &leaves, &visited), PERFT_OK);
            CU_ASSERT_EQUAL(leaves, perft_count(&pos, d));
            if (d < depth || !published_sum)
                continue;
            if (visited != published_sum)
                fprintf(stderr, "\n%s (line %d): visited %llu, published counts sum to %llu\n", name,
                        entry.line_number, (unsigned long long)visited, (unsigned long long)published_sum);
            CU_ASSERT_EQUAL(visited, published_sum);
        }
        move_t moves[MOVE_LIST_MAX], plain_moves[MOVE_LIST_MAX];
        uint64_t counts[MOVE_LIST_MAX], plain_counts[MOVE_LIST_MAX];
        int root_moves = -1;
        perft_budget_t budget = { .limit = UINT64_MAX, .visited = 0 };
        CU_ASSERT_EQUAL(perft_divide_budgeted(&pos, depth, &budget, moves, counts, &root_moves), PERFT_OK);
        int plain = perft_divide(&pos, depth, plain_moves, plain_counts);
        CU_ASSERT_EQUAL_FATAL(root_moves, plain);
        CU_ASSERT(memcmp(moves, plain_moves, (size_t)plain * sizeof moves[0]) == 0);
        CU_ASSERT(memcmp(counts, plain_counts, (size_t)plain * sizeof counts[0]) == 0);
        compared++;
    }
    epd_close(&reader);
    CU_ASSERT(compared > 0);
}

static void test_budgeted_count_under_budget_equals_perft_count(void)
{
    compare_budgeted_file("standard.epd", FEN_ALLOW_IMPOSSIBLE_CHECK | FEN_DETECT_CHESS960);
    compare_budgeted_file("tricky.epd", FEN_ALLOW_IMPOSSIBLE_CHECK | FEN_DETECT_CHESS960);
    compare_budgeted_file("chess960.epd", FEN_CHESS960);
}

/* Reads one line without its newline; false at end of output. */
static bool read_line(FILE *in, char *line, size_t size)
{
    if (!fgets(line, (int)size, in))
        return false;
    line[strcspn(line, "\n")] = '\0';
    return true;
}

/* Whether line is "<uci> <count>": a UCI move, one space, decimal digits. */
static bool parse_divide_line(const char *line, char *uci, unsigned long long *count)
{
    size_t move_length = strcspn(line, " ");
    uci_text_t text;
    if (!uci_read(line, move_length, &text) || line[move_length] != ' ')
        return false;
    const char *digits = line + move_length + 1;
    if (!*digits || strspn(digits, "0123456789") != strlen(digits))
        return false;
    memcpy(uci, line, move_length);
    uci[move_length] = '\0';
    *count = strtoull(digits, NULL, 10);
    return true;
}

static void test_cli_perft_prints_root_moves_blank_line_then_total(void)
{
    const char *bin = getenv("CHESSD_BIN");
    if (!bin || !*bin)
        bin = "build/chessd";
    if (access(bin, X_OK) != 0)
        fprintf(stderr, "\n%s is not an executable (build it, or set CHESSD_BIN)\n", bin);
    CU_ASSERT_FATAL(access(bin, X_OK) == 0);
    char command[600];
    snprintf(command, sizeof command, "'%s' perft 3", bin);
    FILE *out = popen(command, "r");
    CU_ASSERT_PTR_NOT_NULL_FATAL(out);

    position_t pos;
    CU_ASSERT_FATAL(tests_parse_fen(FEN_START, &pos));
    move_t moves[MOVE_LIST_MAX];
    uint64_t counts[MOVE_LIST_MAX];
    int expected_moves = perft_divide(&pos, 3, moves, counts);
    bool seen[MOVE_LIST_MAX] = { false };

    char line[256] = "(no output)";
    int root_lines = 0;
    unsigned long long sum = 0;
    while (read_line(out, line, sizeof line) && line[0] != '\0') {
        char uci[UCI_BUFFER_SIZE];
        unsigned long long count;
        bool well_formed = parse_divide_line(line, uci, &count);
        if (!well_formed)
            fprintf(stderr, "\nmalformed divide line: '%s'\n", line);
        CU_ASSERT(well_formed);
        if (!well_formed)
            continue;
        int match = -1;
        for (int i = 0; i < expected_moves; i++) {
            char name[UCI_BUFFER_SIZE];
            if (!strcmp(uci_format(&pos, moves[i], name), uci))
                match = i;
        }
        CU_ASSERT(match >= 0);
        if (match >= 0) {
            CU_ASSERT(!seen[match]);
            seen[match] = true;
            CU_ASSERT_EQUAL(count, counts[match]);
        }
        sum += count;
        root_lines++;
    }
    CU_ASSERT_STRING_EQUAL(line, ""); /* the blank separator was read */
    CU_ASSERT_EQUAL(root_lines, expected_moves);

    bool has_total = read_line(out, line, sizeof line);
    CU_ASSERT(has_total);
    CU_ASSERT(has_total && line[0] && strspn(line, "0123456789") == strlen(line));
    CU_ASSERT_EQUAL(has_total ? strtoull(line, NULL, 10) : 0, sum);
    CU_ASSERT_EQUAL(sum, perft_count(&pos, 3));
    CU_ASSERT(!read_line(out, line, sizeof line)); /* the total is the last line */
    int status = pclose(out);
    CU_ASSERT(WIFEXITED(status) && WEXITSTATUS(status) == 0);
}

/* The last line chessd perft printed for args (its total) and its exit status. */
static int cli_perft_total(const char *args, unsigned long long *total)
{
    const char *bin = getenv("CHESSD_BIN");
    if (!bin || !*bin)
        bin = "build/chessd";
    char command[600];
    snprintf(command, sizeof command, "'%s' perft %s 2>/dev/null", bin, args);
    FILE *out = popen(command, "r");
    CU_ASSERT_PTR_NOT_NULL_FATAL(out);
    char line[256] = "";
    *total = 0;
    while (read_line(out, line, sizeof line))
        if (line[0])
            *total = strtoull(line, NULL, 10);
    int status = pclose(out);
    return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

/* --variant takes any of a variant's names, reads the FEN in it and starts
 * from its own start without one; the counts are the published ones
 * (tests/data/perft/variants/); an unknown name is refused. */
static void test_cli_perft_variant_counts_the_published_trees(void)
{
    static const struct {
        const char *args;
        unsigned long long total;
    } cases[] = {
        { "--variant racingkings 2", 421 },
        { "--variant Horde 3", 1274 },
        { "--variant seirawan 2", 784 },
        { "--variant crazyhouse 2 '2k5/8/8/8/8/8/8/4K3[Qn] w - -'", 3083 },
        { "--variant zh 1 '4k3/1Q~6/8/8/4b3/8/Kpp5/8/ b - - 0 1'", 20 },
        { "--variant standard 3", 8902 },
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        unsigned long long total;
        int status = cli_perft_total(cases[i].args, &total);
        if (status != 0 || total != cases[i].total)
            fprintf(stderr, "\nchessd perft %s: exit %d, total %llu, not %llu\n", cases[i].args, status, total,
                    cases[i].total);
        CU_ASSERT_EQUAL(status, 0);
        CU_ASSERT_EQUAL(total, cases[i].total);
    }
    unsigned long long total;
    CU_ASSERT_EQUAL(cli_perft_total("--variant bughouse 1", &total), 2);
    CU_ASSERT_EQUAL(cli_perft_total("--variant atomic 1 '8/8/8/8/8/8/8/4K3[Q] w - - 0 1'", &total), 2);
}

/* movegen_count_children, which plays each move on bitboards alone, sums
 * the counts position_make() and movegen_count() give, in every position of
 * random standard and Chess960 games leaning to castling, en passant,
 * promotions and checks. */
static bool count_children_agrees(const position_t *pos, const move_list_t *legal, void *context)
{
    uint64_t expected = 0;
    for (int i = 0; i < legal->count; i++) {
        position_t child = *pos;
        position_undo_t undo;
        position_make(&child, legal->moves[i], &undo);
        expected += (uint64_t)movegen_count(&child);
    }
    uint64_t got = movegen_count_children(pos, legal);
    if (got != expected) {
        char fen[FEN_BUFFER_SIZE];
        fen_format(pos, fen, sizeof fen);
        fprintf(stderr, "\nmovegen_count_children of '%s' = %llu, not %llu\n", fen, (unsigned long long)got,
                (unsigned long long)expected);
    }
    CU_ASSERT_EQUAL(got, expected);
    (*(int *)context)++;
    return got == expected;
}

static void test_count_children_matches_making_each_move(void)
{
    static const random_game_preference_t preferences[] = {
        { RANDOM_GAME_PICK_CASTLING, 60 },   { RANDOM_GAME_PICK_EN_PASSANT, 80 },
        { RANDOM_GAME_PICK_DOUBLE_STEP_BESIDE_PAWN, 50 }, { RANDOM_GAME_PICK_PROMOTION, 80 },
        { RANDOM_GAME_PICK_CHECK, 30 },      { RANDOM_GAME_PICK_PAWN, 30 },
    };
    const random_game_style_t style = { preferences, sizeof preferences / sizeof preferences[0], 200 };
    uint64_t rng = 0x2545f4914f6cdd1dULL;
    int positions = 0;
    for (int game = 0; game < 400; game++) {
        position_t start;
        CU_ASSERT_TRUE_FATAL(chess960_start(game % 2 ? CHESS960_STANDARD : random_game_below(&rng, CHESS960_COUNT),
                                            &start));
        start.chess960 = game % 2 == 0;
        random_game_play(start, &style, &rng, count_children_agrees, &positions);
    }
    CU_ASSERT_TRUE(positions > 20000);
}

int test_perft_register(void)
{
    CU_pSuite suite = CU_add_suite("perft", NULL, NULL);
    if (!suite)
        return CU_get_error();
    CU_ADD_TEST(suite, test_standard_positions_match_published_counts);
    CU_ADD_TEST(suite, test_tricky_positions_match_published_counts_at_every_listed_depth);
    CU_ADD_TEST(suite, test_chess960_positions_match_published_counts);
    CU_ADD_TEST(suite, test_divide_lists_each_legal_move_and_sums_to_perft_count);
    CU_ADD_TEST(suite, test_count_children_matches_making_each_move);
    CU_ADD_TEST(suite, test_perft_of_depth_zero_is_one_and_leaves_position_unchanged);
    CU_ADD_TEST(suite, test_cli_perft_prints_root_moves_blank_line_then_total);
    CU_ADD_TEST(suite, test_cli_perft_variant_counts_the_published_trees);
    CU_ADD_TEST(suite, test_budget_of_exactly_the_tree_nodes_completes_and_one_less_stops);
    CU_ADD_TEST(suite, test_budget_counts_every_position_visited_not_only_leaves);
    CU_ADD_TEST(suite, test_budget_stops_each_limit_with_a_small_overshoot);
    CU_ADD_TEST(suite, test_budget_stops_queen_storm_depth_5_just_past_the_limit);
    CU_ADD_TEST(suite, test_budgeted_count_under_budget_equals_perft_count);
    return CU_get_error();
}
