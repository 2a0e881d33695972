/* Variant FEN suite: fen_parse_variant and fen_format in every variant. Each
 * position read back from the FEN chessd writes is the same position (same
 * key, same text), each input form in use is read (pockets, '~', check
 * counters, gating letters), and each refusal has its fen_error_t. Also the
 * UCI the variants add: drops, gates, gated castling, a king promotion. */
#include <string.h>

#include "../support/random_game.h"
#include "../support/tests.h"

static const unsigned STRICT = 0;
static const unsigned PERFT_FLAGS = FEN_ALLOW_IMPOSSIBLE_CHECK | FEN_DETECT_CHESS960;

/* Parses fen in variant under flags; CU-asserts success, printing why not. */
static bool parse_in(variant_t variant, const char *fen, unsigned flags, position_t *pos)
{
    char message[256];
    fen_error_t err = fen_parse_variant(fen, strlen(fen), variant, flags, pos, message, sizeof message);
    if (err != FEN_OK)
        fprintf(stderr, "\n%s '%s' refused: %s %s\n", variant_rules(variant)->key, fen, fen_error_code(err), message);
    CU_ASSERT_EQUAL(err, FEN_OK);
    return err == FEN_OK;
}

/* fen_format's text of pos read back strictly: the same key, the same text.
 * Returns whether it was. */
static bool reads_back(const position_t *pos)
{
    char first[FEN_BUFFER_SIZE], second[FEN_BUFFER_SIZE];
    position_t again;
    fen_format(pos, first, sizeof first);
    unsigned flags = pos->chess960 ? FEN_CHESS960 : STRICT;
    if (!parse_in((variant_t)pos->variant, first, flags, &again))
        return false;
    fen_format(&again, second, sizeof second);
    bool same = again.key == pos->key && !strcmp(first, second);
    if (!same)
        fprintf(stderr, "\n%s '%s' reads back as '%s'\n", variant_rules((variant_t)pos->variant)->key, first, second);
    CU_ASSERT(same);
    return same;
}

/* Parses fen in variant strictly and asserts the result is `expected`, with a
 * sentence when it is a refusal. */
static void expect_parse(variant_t variant, const char *fen, fen_error_t expected)
{
    position_t pos;
    char message[256] = "";
    fen_error_t got = fen_parse_variant(fen, strlen(fen), variant, STRICT, &pos, message, sizeof message);
    if (got != expected)
        fprintf(stderr, "\n%s '%s': got %s \"%s\", expected %s\n", variant_rules(variant)->key, fen,
                fen_error_code(got), message, fen_error_code(expected));
    CU_ASSERT_EQUAL(got, expected);
    CU_ASSERT(got == FEN_OK || message[0] != '\0');
}

/* Asserts that two texts name the same position in variant, and that
 * fen_format writes it as `canonical` (NULL: not checked). */
static void expect_same_position(variant_t variant, const char *a, const char *b, const char *canonical)
{
    position_t first, second;
    if (!parse_in(variant, a, STRICT, &first) || !parse_in(variant, b, STRICT, &second))
        return;
    CU_ASSERT_EQUAL(first.key, second.key);
    char text[FEN_BUFFER_SIZE];
    fen_format(&second, text, sizeof text);
    if (canonical && strcmp(text, canonical))
        fprintf(stderr, "\n'%s' written '%s', expected '%s'\n", b, text, canonical);
    CU_ASSERT(!canonical || !strcmp(text, canonical));
}

/* ---- round trips ---- */

static void test_each_variant_start_is_written_as_its_row_says_and_reads_back(void)
{
    for (int v = 0; v < VARIANT_COUNT; v++) {
        const char *start = variant_rules((variant_t)v)->start_fen;
        position_t pos;
        char text[FEN_BUFFER_SIZE];
        if (!parse_in((variant_t)v, start, STRICT, &pos))
            continue;
        CU_ASSERT_STRING_EQUAL(fen_format(&pos, text, sizeof text), start);
        reads_back(&pos);
    }
}

/* The variant each file of tests/data/perft/variants is counted in. */
static const struct {
    const char *file;
    variant_t variant;
} perft_files[] = {
    { "3check.perft", VARIANT_THREE_CHECK }, { "antichess.perft", VARIANT_ANTICHESS },
    { "atomic.perft", VARIANT_ATOMIC },      { "crazyhouse.perft", VARIANT_CRAZYHOUSE },
    { "horde.perft", VARIANT_HORDE },        { "racingkings.perft", VARIANT_RACING_KINGS },
    { "seirawan.perft", VARIANT_SEIRAWAN },
};

/* Calls check on every "epd" line of a perft file; returns how many. */
static int each_perft_fen(const char *file, variant_t variant, void (*check)(variant_t, const char *))
{
    char path[512], line[512];
    snprintf(path, sizeof path, "%s/variants/%s", tests_perft_dir(), file);
    FILE *in = fopen(path, "r");
    CU_ASSERT_PTR_NOT_NULL_FATAL(in);
    int count = 0;
    while (fgets(line, sizeof line, in)) {
        line[strcspn(line, "\r\n")] = '\0';
        if (strncmp(line, "epd ", 4))
            continue;
        check(variant, line + 4);
        count++;
    }
    fclose(in);
    return count;
}

static void check_reads_back(variant_t variant, const char *fen)
{
    position_t pos;
    if (parse_in(variant, fen, PERFT_FLAGS, &pos))
        reads_back(&pos);
}

/* Every form scalachess writes (EPD, ninth-rank pockets, '~', X-FEN counters,
 * Chess960 castling) and every S-chess line. */
static void test_every_variant_perft_position_reads_back_from_its_written_fen(void)
{
    for (size_t i = 0; i < sizeof perft_files / sizeof perft_files[0]; i++)
        CU_ASSERT(each_perft_fen(perft_files[i].file, perft_files[i].variant, check_reads_back) >= 2);
}

static void check_written_as_is(variant_t variant, const char *fen)
{
    position_t pos;
    char text[FEN_BUFFER_SIZE];
    if (!parse_in(variant, fen, STRICT, &pos))
        return;
    fen_format(&pos, text, sizeof text);
    if (strcmp(text, fen))
        fprintf(stderr, "\nseirawan.perft '%s' is written '%s'\n", fen, text);
    CU_ASSERT_STRING_EQUAL(text, fen);
}

static void test_seirawan_perft_fens_are_in_fen_formats_own_form(void)
{
    CU_ASSERT(each_perft_fen("seirawan.perft", VARIANT_SEIRAWAN, check_written_as_is) >= 8);
}

/* Random games favour what fills a variant's extra fields: captures
 * (pockets, explosions), promotions ('~'), checks (three-check's counters),
 * castling (S-chess gates on the king's and the rook's squares). */
static const random_game_preference_t busy_moves[] = {
    { RANDOM_GAME_PICK_PROMOTION, 90 }, { RANDOM_GAME_PICK_CASTLING, 80 }, { RANDOM_GAME_PICK_EN_PASSANT, 80 },
    { RANDOM_GAME_PICK_CHECK, 30 },     { RANDOM_GAME_PICK_CAPTURE, 50 },
};

typedef struct {
    int positions, failures;
} walk_t;

static bool visit_reads_back(const position_t *pos, const move_list_t *legal, void *context)
{
    (void)legal;
    walk_t *walk = context;
    walk->positions++;
    if (!reads_back(pos))
        walk->failures++;
    return walk->failures < 3; /* a broken variant says so three times, not a thousand */
}

static void test_every_position_of_random_games_reads_back_in_each_variant(void)
{
    random_game_style_t style = { busy_moves, sizeof busy_moves / sizeof busy_moves[0], 160 };
    for (int v = 1; v < VARIANT_COUNT; v++) {
        uint64_t rng = 0x9e3779b97f4a7c15ULL + (uint64_t)v;
        walk_t walk = { 0, 0 };
        const char *start = variant_rules((variant_t)v)->start_fen;
        position_t pos;
        if (!parse_in((variant_t)v, start, STRICT, &pos))
            continue;
        for (int game = 0; game < 12 && !walk.failures; game++)
            random_game_play(pos, &style, &rng, visit_reads_back, &walk);
        CU_ASSERT(walk.positions >= 200);
    }
}

/* ---- the input forms read ---- */

static void test_crazyhouse_pocket_reads_in_brackets_and_as_a_ninth_rank(void)
{
    const char *written = "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR[Qn] b KQkq - 0 1";
    expect_same_position(VARIANT_CRAZYHOUSE, written, "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR/Qn b KQkq - 0 1",
                         written);
    expect_same_position(VARIANT_CRAZYHOUSE, "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR[] w KQkq - 0 1",
                         "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR/ w KQkq - 0 1",
                         "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR[] w KQkq - 0 1");
    /* a pocket counts: the same board with another pocket is another position */
    position_t one, other;
    parse_in(VARIANT_CRAZYHOUSE, written, STRICT, &one);
    parse_in(VARIANT_CRAZYHOUSE, "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR[Qb] b KQkq - 0 1", STRICT, &other);
    CU_ASSERT_NOT_EQUAL(one.key, other.key);
}

/* '~' marks a promoted piece: it is kept, written, and a pawn when taken. */
static void test_crazyhouse_promoted_marker_is_kept_and_a_taken_promoted_piece_pockets_a_pawn(void)
{
    position_t pos, plain;
    const char *fen = "4k3/8/8/8/8/8/1q~6/K7[] w - - 0 1";
    if (!parse_in(VARIANT_CRAZYHOUSE, fen, STRICT, &pos)
        || !parse_in(VARIANT_CRAZYHOUSE, "4k3/8/8/8/8/8/1q6/K7[] w - - 0 1", STRICT, &plain))
        return;
    CU_ASSERT_NOT_EQUAL(pos.key, plain.key);
    char text[FEN_BUFFER_SIZE], message[200];
    CU_ASSERT_STRING_EQUAL(fen_format(&pos, text, sizeof text), fen);
    move_t move = MOVE_NONE;
    CU_ASSERT_EQUAL_FATAL(notation_parse_move(&pos, "a1b2", 4, &move, message, sizeof message), LEGALITY_OK);
    position_undo_t undo;
    position_make(&pos, move, &undo);
    CU_ASSERT_EQUAL(pos.pocket[WHITE][PAWN], 1);
    CU_ASSERT_EQUAL(pos.pocket[WHITE][QUEEN], 0);
    CU_ASSERT_STRING_EQUAL(fen_format(&pos, text, sizeof text), "4k3/8/8/8/8/8/1K6/8[P] b - - 0 1");
}

/* X-FEN's checks remaining ("2+1", fifth field, also in EPD) and Lichess's
 * checks given ("+1+2", after the move number) are one position. */
static void test_three_check_counters_read_as_remaining_and_as_given(void)
{
    const char *written = "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 2+1 0 1";
    expect_same_position(VARIANT_THREE_CHECK, written, "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1 +1+2",
                         written);
    expect_same_position(VARIANT_THREE_CHECK, written, "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 2+1",
                         written);
    position_t pos;
    if (parse_in(VARIANT_THREE_CHECK, written, STRICT, &pos)) {
        CU_ASSERT_EQUAL(pos.checks[WHITE], 1);
        CU_ASSERT_EQUAL(pos.checks[BLACK], 2);
    }
    /* no counters: none given */
    expect_same_position(VARIANT_THREE_CHECK, "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1",
                         variant_rules(VARIANT_THREE_CHECK)->start_fen, NULL);
}

/* Fairy-Stockfish 11.1 writes the start with every back-rank file and the
 * reserve in another order; chessd reads it as its own start. */
static void test_schess_start_reads_in_fairy_stockfish_11_form(void)
{
    const char *start = variant_rules(VARIANT_SEIRAWAN)->start_fen;
    expect_same_position(VARIANT_SEIRAWAN, start,
                         "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR[EHeh] w KQABCDEFGHkqabcdefgh - 0 1", start);
    position_t pos;
    if (parse_in(VARIANT_SEIRAWAN, start, STRICT, &pos))
        CU_ASSERT_EQUAL(pos.gates, BB_RANK_1 | BB_RANK_8);
}

/* A gate letter names a back-rank piece that has not moved; gates go with
 * the last reserve piece, and a castling right is a gate on its squares. */
static void test_schess_gates_read_from_letters_and_go_with_the_reserve(void)
{
    position_t pos;
    if (parse_in(VARIANT_SEIRAWAN, "4k3/8/8/8/8/8/8/RN2K2R[H] w KB - 0 1", STRICT, &pos))
        CU_ASSERT_EQUAL(pos.gates, bb_square(square_make(1, 0)) | bb_square(square_make(4, 0))
                                       | bb_square(square_make(7, 0)));
    /* black has no reserve: its letters set no gate and are not written back */
    expect_same_position(VARIANT_SEIRAWAN, "rn2k3/8/8/8/8/8/8/RN2K3[H] w Bb - 0 1",
                         "rn2k3/8/8/8/8/8/8/RN2K3[H] w B - 0 1", "rn2k3/8/8/8/8/8/8/RN2K3[H] w B - 0 1");
}

/* ---- the refusals ---- */

static void test_unknown_letters_are_refused_where_they_stand(void)
{
    expect_parse(VARIANT_CRAZYHOUSE, "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNX[] w Qkq - 0 1", FEN_EPIECE_LETTER);
    expect_parse(VARIANT_CRAZYHOUSE, "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR[Qx] w KQkq - 0 1", FEN_EPOCKET);
    expect_parse(VARIANT_SEIRAWAN, "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR[HEhe] w KQZkq - 0 1",
                   FEN_ECASTLING_LETTERS);
    expect_parse(VARIANT_THREE_CHECK, "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 3+x 0 1",
                   FEN_ECHECK_COUNT);
}

static void test_horde_refuses_a_white_king_and_a_black_pawn_on_rank_1(void)
{
    expect_parse(VARIANT_HORDE, "rnbqkbnr/pppppppp/8/1PP2PP1/PPPPPPPP/PPPPPPPP/PPPPPPPP/PPPKPPPP w kq - 0 1",
                   FEN_EKING_COUNT);
    expect_parse(VARIANT_HORDE, "4k3/8/8/8/8/8/PPPPPPPP/PPPPPPPp w - - 0 1", FEN_EPAWN_ON_BACK_RANK);
    expect_parse(VARIANT_HORDE, "8/8/8/8/8/8/PPPPPPPP/PPPPPPPP w - - 0 1", FEN_EKING_COUNT);
}

static void test_a_king_in_a_pocket_or_a_reserve_is_refused(void)
{
    expect_parse(VARIANT_CRAZYHOUSE, "4k3/8/8/8/8/8/8/4K3[K] w - - 0 1", FEN_EKING_IN_POCKET);
    expect_parse(VARIANT_CRAZYHOUSE, "4k3/8/8/8/8/8/8/4K3/k w - - 0 1", FEN_EKING_IN_POCKET);
    expect_parse(VARIANT_SEIRAWAN, "4k3/8/8/8/8/8/8/4K3[Hk] w - - 0 1", FEN_EKING_IN_POCKET);
}

/* 16 pieces and a reserve of 2 make 18: a gate only moves one from the
 * reserve to the board, so the bound counts both. */
static void test_schess_counts_the_reserve_in_the_pieces_a_side_may_have(void)
{
    expect_parse(VARIANT_SEIRAWAN,
                 "r1bqk1nr/pppp1ppp/2n5/2B1p3/2B1P3/5N2/PPPP1PPP/RNBQK1HR[Ehe] w KQBCDkqcdg - 4 4",
                 FEN_ETOO_MANY_PIECES);
    expect_parse(VARIANT_SEIRAWAN,
                 "r1bqk1nr/pppp1ppp/2n5/2B1p3/2B1P3/5N2/PPPP1PPP/RNBQK1HR[he] w KQBCDkqcdg - 4 4", FEN_OK);
    expect_parse(VARIANT_SEIRAWAN, "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR[HEhe] w KQBCDFGkqbcdfg - 0 1",
                 FEN_OK);
}

/* S-chess has no Chess960 castling, however its FEN's castling is written
 * (the Lichess variants keep it, as scalachess's atomic perft positions show). */
static void test_chess960_castling_is_refused_in_schess(void)
{
    position_t pos;
    char message[256] = "";
    const char *fen = variant_rules(VARIANT_SEIRAWAN)->start_fen;
    CU_ASSERT_EQUAL(fen_parse_variant(fen, strlen(fen), VARIANT_SEIRAWAN, FEN_CHESS960, &pos, message, sizeof message),
                    FEN_EVARIANT_RULE);
    CU_ASSERT_EQUAL(fen_parse_variant(fen, strlen(fen), VARIANT_SEIRAWAN, FEN_DETECT_CHESS960, &pos, message,
                                      sizeof message),
                    FEN_OK);
    CU_ASSERT_FALSE(pos.chess960);
    fen = "1r2k1r1/8/8/8/8/8/8/1R2K1R1[HEhe] w KQkq - 0 1";
    CU_ASSERT_EQUAL(fen_parse_variant(fen, strlen(fen), VARIANT_SEIRAWAN, FEN_DETECT_CHESS960, &pos, message,
                                      sizeof message),
                    FEN_ECASTLING_NEEDS_CHESS960);
}

static void test_a_pawn_on_the_last_rank_is_refused_in_every_variant(void)
{
    for (int v = 0; v < VARIANT_COUNT; v++) {
        if (v == VARIANT_RACING_KINGS || v == VARIANT_HORDE)
            continue; /* no pawns at all; horde: a rank 1 of its own, refused above */
        bool hand = variant_rules((variant_t)v)->flags & (VARIANT_HAS_POCKETS | VARIANT_HAS_RESERVES);
        const char *fen = hand ? "P3k3/8/8/8/8/8/8/4K3[] w - - 0 1" : "P3k3/8/8/8/8/8/8/4K3 w - - 0 1";
        expect_parse((variant_t)v, fen, FEN_EPAWN_ON_BACK_RANK);
    }
    expect_parse(VARIANT_RACING_KINGS, "8/8/8/8/8/8/krbnNBRK/qrbnNBRQ w - - 0 1", FEN_OK);
    expect_parse(VARIANT_RACING_KINGS, "8/8/8/8/8/P7/krbnNBRK/qrbnNBRQ w - - 0 1", FEN_EVARIANT_RULE);
}

static void test_check_counters_past_three_or_outside_three_check_are_refused(void)
{
    const char *board = "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - ";
    char fen[160];
    const char *bad[] = { "4+3 0 1", "3+9 0 1", "0 1 +4+0", "0 1 +0+5", "0+0 0 1", "3+3 +0+0" };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        snprintf(fen, sizeof fen, "%s%s", board, bad[i]);
        expect_parse(VARIANT_THREE_CHECK, fen, FEN_ECHECK_COUNT);
    }
    snprintf(fen, sizeof fen, "%s%s", board, "3+3 0 1");
    expect_parse(VARIANT_KING_OF_THE_HILL, fen, FEN_ECHECK_COUNT);
    expect_parse(VARIANT_STANDARD, fen, FEN_EFIELD_COUNT);
}

static void test_promoted_marker_is_refused_outside_crazyhouse_and_after_a_pawn_or_king(void)
{
    expect_parse(VARIANT_ATOMIC, "4k3/8/8/8/8/8/1Q~6/4K3 w - - 0 1", FEN_EPROMOTED_MARKER);
    expect_parse(VARIANT_STANDARD, "4k3/8/8/8/8/8/1Q~6/4K3 w - - 0 1", FEN_EPROMOTED_MARKER);
    expect_parse(VARIANT_SEIRAWAN, "4k3/8/8/8/8/8/1Q~6/4K3[] w - - 0 1", FEN_EPROMOTED_MARKER);
    expect_parse(VARIANT_CRAZYHOUSE, "4k3/8/8/8/8/8/1P~6/4K3[] w - - 0 1", FEN_EPROMOTED_MARKER);
    expect_parse(VARIANT_CRAZYHOUSE, "4k3/8/8/8/8/8/8/4K~3[] w - - 0 1", FEN_EPROMOTED_MARKER);
    expect_parse(VARIANT_CRAZYHOUSE, "~3k3/8/8/8/8/8/8/4K3[] w - - 0 1", FEN_EPROMOTED_MARKER);
}

static void test_hawk_and_elephant_are_refused_outside_schess(void)
{
    for (int v = 0; v < VARIANT_COUNT; v++) {
        if (v == VARIANT_SEIRAWAN)
            continue;
        expect_parse((variant_t)v, "4k3/8/8/8/8/8/8/H3K3 w - - 0 1", FEN_EPIECE_LETTER);
        expect_parse((variant_t)v, "4k3/8/8/8/8/8/8/4K2e w - - 0 1", FEN_EPIECE_LETTER);
    }
    expect_parse(VARIANT_CRAZYHOUSE, "4k3/8/8/8/8/8/8/4K3[H] w - - 0 1", FEN_EPOCKET);
    expect_parse(VARIANT_SEIRAWAN, "4k3/8/8/8/8/8/8/4K3[Q] w - - 0 1", FEN_EPOCKET);
    expect_parse(VARIANT_SEIRAWAN, "4k3/8/8/8/8/8/8/4K3[HH] w - - 0 1", FEN_EPOCKET);
}

static void test_a_pocket_is_refused_in_a_variant_without_one(void)
{
    expect_parse(VARIANT_STANDARD, "4k3/8/8/8/8/8/8/4K3[Q] w - - 0 1", FEN_EPOCKET);
    expect_parse(VARIANT_STANDARD, "4k3/8/8/8/8/8/8/4K3[] w - - 0 1", FEN_EPOCKET);
    expect_parse(VARIANT_ATOMIC, "4k3/8/8/8/8/8/8/4K3[Q] w - - 0 1", FEN_EPOCKET);
    /* without the pocket flag a ninth rank is only a rank too many */
    expect_parse(VARIANT_STANDARD, "4k3/8/8/8/8/8/8/4K3/Q w - - 0 1", FEN_ERANK_COUNT);
    expect_parse(VARIANT_CRAZYHOUSE, "4k3/8/8/8/8/8/8/4K3[Q w - - 0 1", FEN_EPOCKET);
}

static void test_castling_rights_are_refused_where_there_is_no_castling(void)
{
    expect_parse(VARIANT_ANTICHESS, "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1",
                   FEN_ECASTLING_RIGHTS);
    expect_parse(VARIANT_ANTICHESS, "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w - - 0 1", FEN_OK);
    expect_parse(VARIANT_RACING_KINGS, "8/8/8/8/8/8/krbnNBRK/qrbnNBRQ w K - 0 1", FEN_ECASTLING_RIGHTS);
}

/* ---- UCI ---- */

/* Reads text as a move of pos: LEGALITY_OK expected, and uci_format writing
 * `written` back. Returns the move (MOVE_NONE on failure). */
static move_t read_move(const position_t *pos, const char *text, const char *written)
{
    move_t move = MOVE_NONE;
    char message[200], uci[UCI_BUFFER_SIZE];
    legality_reason_t reason = notation_parse_move(pos, text, strlen(text), &move, message, sizeof message);
    if (reason != LEGALITY_OK)
        fprintf(stderr, "\n'%s' refused: %s %s\n", text, legality_reason_code(reason), message);
    CU_ASSERT_EQUAL(reason, LEGALITY_OK);
    if (reason != LEGALITY_OK)
        return MOVE_NONE;
    CU_ASSERT_STRING_EQUAL(uci_format(pos, move, uci), written);
    return move;
}

static void expect_move_refused(const position_t *pos, const char *text, legality_reason_t expected)
{
    move_t move = MOVE_NONE;
    char message[200] = "";
    legality_reason_t got = notation_parse_move(pos, text, strlen(text), &move, message, sizeof message);
    if (got != expected)
        fprintf(stderr, "\n'%s': got %s \"%s\", expected %s\n", text, legality_reason_code(got), message,
                legality_reason_code(expected));
    CU_ASSERT_EQUAL(got, expected);
}

static void test_drops_read_in_either_case_and_are_written_with_a_capital(void)
{
    position_t pos, standard;
    if (!parse_in(VARIANT_CRAZYHOUSE, "2k5/8/8/8/8/8/8/4K3[Nq] w - - 0 1", STRICT, &pos))
        return;
    move_t upper = read_move(&pos, "N@f3", "N@f3"), lower = read_move(&pos, "n@f3", "N@f3");
    CU_ASSERT_EQUAL(upper, lower);
    CU_ASSERT_EQUAL(move_kind(upper), MOVE_DROP);
    CU_ASSERT_EQUAL(move_from(upper), move_to(upper));
    CU_ASSERT_EQUAL(move_dropped(upper), KNIGHT);
    expect_move_refused(&pos, "Q@f3", LEGALITY_DROP_INVALID); /* black's queen, not white's */
    CU_ASSERT_TRUE_FATAL(tests_parse_fen("2k5/8/8/8/8/8/8/4K3 w - - 0 1", &standard));
    expect_move_refused(&standard, "N@f3", LEGALITY_DROP_INVALID);
}

/* A fifth letter or a promotion piece on a move that does not promote is
 * refused in every variant, never read as the plain move (fuzz_variant). */
static void test_a_promotion_letter_on_a_move_that_does_not_promote_is_refused(void)
{
    for (int v = VARIANT_STANDARD; v < VARIANT_COUNT; v++) {
        if (v == VARIANT_HORDE || v == VARIANT_RACING_KINGS)
            continue; /* no pawn on e2 */
        position_t pos;
        fen_start((variant_t)v, &pos);
        const char *texts[] = { "e2e3q", "e2e3p", "e3P", "e3=Q", "e2e4n" };
        for (size_t i = 0; i < sizeof texts / sizeof texts[0]; i++)
            expect_move_refused(&pos, texts[i], LEGALITY_PROMOTION_INVALID);
    }
    position_t schess;
    fen_start(VARIANT_SEIRAWAN, &schess);
    expect_move_refused(&schess, "e2e4h", LEGALITY_GATING_INVALID); /* a pawn leaves no gate */
    expect_move_refused(&schess, "e2e4e", LEGALITY_GATING_INVALID);
}

static void test_a_gate_is_the_fifth_letter_of_the_move_that_leaves_the_square(void)
{
    position_t pos;
    if (!parse_in(VARIANT_SEIRAWAN, variant_rules(VARIANT_SEIRAWAN)->start_fen, STRICT, &pos))
        return;
    move_t plain = read_move(&pos, "b1c3", "b1c3"), hawk = read_move(&pos, "b1c3h", "b1c3h");
    move_t elephant = read_move(&pos, "b1c3e", "b1c3e");
    CU_ASSERT_EQUAL(move_gate(plain), 0);
    CU_ASSERT_EQUAL(move_gate(hawk), HAWK);
    CU_ASSERT_EQUAL(move_gate(elephant), ELEPHANT);
    CU_ASSERT_EQUAL(move_from(hawk), move_from(plain));
    CU_ASSERT_EQUAL(move_to(hawk), move_to(plain));
    position_t moved, hawk_only;
    if (parse_in(VARIANT_SEIRAWAN, "4k3/8/8/8/8/8/8/RN2K3[HE] w A - 0 1", STRICT, &moved))
        expect_move_refused(&moved, "b1c3h", LEGALITY_GATING_INVALID); /* b1 has no gate: the knight has moved */
    if (parse_in(VARIANT_SEIRAWAN, "4k3/8/8/8/8/8/8/RN2K3[H] w B - 0 1", STRICT, &hawk_only))
        expect_move_refused(&hawk_only, "b1c3e", LEGALITY_GATING_INVALID); /* no Elephant left */
    position_t chess;
    CU_ASSERT_TRUE_FATAL(tests_parse_fen(FEN_START, &chess));
    expect_move_refused(&chess, "b1c3h", LEGALITY_GATING_INVALID);
}

/* Castling gates on the king's square ("e1g1h") or on the rook's, written
 * rook to king ("h1e1h"); after it the Hawk stands on e1 or h1. */
static void test_castling_gates_on_the_kings_square_or_the_rooks(void)
{
    const char *fen = "r1bqk1nr/pppp1ppp/2n5/2b1p3/2B1P3/5N2/PPPP1PPP/RNBQK2R[HEhe] w KQBCDkqcdg - 4 4";
    position_t pos;
    if (!parse_in(VARIANT_SEIRAWAN, fen, STRICT, &pos))
        return;
    move_t on_king = read_move(&pos, "e1g1h", "e1g1h"), on_rook = read_move(&pos, "h1e1h", "h1e1h");
    if (on_king == MOVE_NONE || on_rook == MOVE_NONE)
        return;
    CU_ASSERT_EQUAL(move_kind(on_king), MOVE_CASTLING);
    CU_ASSERT_EQUAL(move_kind(on_rook), MOVE_CASTLING);
    CU_ASSERT(!move_gate_on_rook(on_king));
    CU_ASSERT(move_gate_on_rook(on_rook));
    CU_ASSERT_EQUAL(read_move(&pos, "e1h1h", "e1g1h"), on_king); /* king takes rook, read too */
    position_t after_king = pos, after_rook = pos;
    position_undo_t undo;
    position_make(&after_king, on_king, &undo);
    position_make(&after_rook, on_rook, &undo);
    CU_ASSERT_EQUAL(after_king.board[square_make(4, 0)], piece_make(WHITE, HAWK));
    CU_ASSERT_EQUAL(after_rook.board[square_make(7, 0)], piece_make(WHITE, HAWK));
    CU_ASSERT_EQUAL(after_king.board[square_make(6, 0)], piece_make(WHITE, KING));
    CU_ASSERT_EQUAL(after_rook.board[square_make(5, 0)], piece_make(WHITE, ROOK));
    reads_back(&after_king);
    reads_back(&after_rook);
}

static void test_an_antichess_pawn_promotes_to_a_king_which_chess_refuses(void)
{
    position_t pos, chess;
    if (!parse_in(VARIANT_ANTICHESS, "8/P7/8/8/8/8/8/7n w - - 0 1", STRICT, &pos))
        return;
    move_t move = read_move(&pos, "a7a8k", "a7a8k");
    CU_ASSERT_EQUAL(move_kind(move), MOVE_PROMOTION);
    CU_ASSERT_EQUAL(move_promotion(move), KING);
    CU_ASSERT_TRUE_FATAL(tests_parse_fen("4k3/P7/8/8/8/8/8/4K3 w - - 0 1", &chess));
    expect_move_refused(&chess, "a7a8k", LEGALITY_PROMOTION_INVALID);
}

int test_variant_fen_register(void)
{
    CU_pSuite suite = CU_add_suite("variant_fen", NULL, NULL);
    if (!suite)
        return CU_get_error();
    CU_ADD_TEST(suite, test_each_variant_start_is_written_as_its_row_says_and_reads_back);
    CU_ADD_TEST(suite, test_every_variant_perft_position_reads_back_from_its_written_fen);
    CU_ADD_TEST(suite, test_seirawan_perft_fens_are_in_fen_formats_own_form);
    CU_ADD_TEST(suite, test_every_position_of_random_games_reads_back_in_each_variant);
    CU_ADD_TEST(suite, test_crazyhouse_pocket_reads_in_brackets_and_as_a_ninth_rank);
    CU_ADD_TEST(suite, test_crazyhouse_promoted_marker_is_kept_and_a_taken_promoted_piece_pockets_a_pawn);
    CU_ADD_TEST(suite, test_three_check_counters_read_as_remaining_and_as_given);
    CU_ADD_TEST(suite, test_schess_start_reads_in_fairy_stockfish_11_form);
    CU_ADD_TEST(suite, test_schess_gates_read_from_letters_and_go_with_the_reserve);
    CU_ADD_TEST(suite, test_unknown_letters_are_refused_where_they_stand);
    CU_ADD_TEST(suite, test_horde_refuses_a_white_king_and_a_black_pawn_on_rank_1);
    CU_ADD_TEST(suite, test_a_king_in_a_pocket_or_a_reserve_is_refused);
    CU_ADD_TEST(suite, test_schess_counts_the_reserve_in_the_pieces_a_side_may_have);
    CU_ADD_TEST(suite, test_chess960_castling_is_refused_in_schess);
    CU_ADD_TEST(suite, test_a_pawn_on_the_last_rank_is_refused_in_every_variant);
    CU_ADD_TEST(suite, test_check_counters_past_three_or_outside_three_check_are_refused);
    CU_ADD_TEST(suite, test_promoted_marker_is_refused_outside_crazyhouse_and_after_a_pawn_or_king);
    CU_ADD_TEST(suite, test_hawk_and_elephant_are_refused_outside_schess);
    CU_ADD_TEST(suite, test_a_pocket_is_refused_in_a_variant_without_one);
    CU_ADD_TEST(suite, test_castling_rights_are_refused_where_there_is_no_castling);
    CU_ADD_TEST(suite, test_drops_read_in_either_case_and_are_written_with_a_capital);
    CU_ADD_TEST(suite, test_a_promotion_letter_on_a_move_that_does_not_promote_is_refused);
    CU_ADD_TEST(suite, test_a_gate_is_the_fifth_letter_of_the_move_that_leaves_the_square);
    CU_ADD_TEST(suite, test_castling_gates_on_the_kings_square_or_the_rooks);
    CU_ADD_TEST(suite, test_an_antichess_pawn_promotes_to_a_king_which_chess_refuses);
    return CU_get_error();
}
