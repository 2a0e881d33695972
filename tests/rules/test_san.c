/* Tests for rules/san.c: formatting (minimal disambiguation, pinned pieces
 * not counting; captures, promotions, castling, check and mate) and the
 * parsing of lower-case piece letters. On seeded random games, standard and
 * Chess960, the oracle is a plain writer that searches the whole list and
 * plays every move out, without san.c's shortcuts. */
#include <stdio.h>
#include <string.h>

#include "../support/random_game.h"
#include "../support/tests.h"

/* Finds the legal move whose UCI is `uci` in fen and returns its SAN in buf. */
static const char *san_of(const char *fen, const char *uci, char *buf)
{
    position_t pos;
    move_t move;
    char message[256];
    buf[0] = '\0';
    if (!tests_parse_fen(fen, &pos))
        return buf;
    legality_reason_t r = notation_parse_move(&pos, uci, strlen(uci), &move, message, sizeof message);
    CU_ASSERT_EQUAL(r, LEGALITY_OK);
    if (r == LEGALITY_OK)
        san_format(&pos, move, buf);
    return buf;
}

#define EXPECT_SAN(fen, uci, san)                                   \
    do {                                                            \
        char buf_[SAN_BUFFER_SIZE];                                 \
        CU_ASSERT_STRING_EQUAL(san_of(fen, uci, buf_), san);        \
    } while (0)

static void test_plain_moves(void)
{
    EXPECT_SAN(FEN_START, "g1f3", "Nf3");
    EXPECT_SAN(FEN_START, "e2e4", "e4");
    EXPECT_SAN(FEN_START, "b2b3", "b3");
}

static void test_disambiguation_by_file_then_rank_then_square(void)
{
    static const char *three_queens = "6k1/8/8/8/8/Q7/8/Q1Q4K w - - 0 1";
    EXPECT_SAN(three_queens, "c1b2", "Qcb2");  /* the file alone tells c1 apart */
    EXPECT_SAN(three_queens, "a3b2", "Q3b2");  /* a1 shares the file: the rank tells */
    EXPECT_SAN(three_queens, "a1b2", "Qa1b2"); /* a3 shares the file, c1 the rank */
    EXPECT_SAN("4k3/8/8/8/8/5N2/8/1N2K3 w - - 0 1", "b1d2", "Nbd2");
    EXPECT_SAN("4k3/8/8/8/R7/8/8/R3K3 w - - 0 1", "a1a2", "R1a2");
}

static void test_pinned_piece_does_not_force_disambiguation(void)
{
    /* The f3 knight is pinned by the d5 bishop against the king on h1. */
    EXPECT_SAN("4k3/8/8/3b4/8/5N2/8/1N5K w - - 0 1", "b1d2", "Nd2");
}

static void test_captures_and_en_passant(void)
{
    EXPECT_SAN("4k3/8/8/3p4/4P3/8/8/4K3 w - - 0 1", "e4d5", "exd5");
    EXPECT_SAN("4k3/8/8/3pP3/8/8/8/4K3 w - d6 0 1", "e5d6", "exd6");
    EXPECT_SAN("4k3/8/8/3p4/8/5N2/8/4K3 w - - 0 1", "f3d4", "Nd4");
    EXPECT_SAN("4k3/8/8/8/3p4/5N2/8/4K3 w - - 0 1", "f3d4", "Nxd4");
}

static void test_promotions_with_check_and_mate(void)
{
    EXPECT_SAN("8/4P3/8/8/8/8/k7/4K3 w - - 0 1", "e7e8q", "e8=Q");
    EXPECT_SAN("8/4P3/8/8/8/8/k7/4K3 w - - 0 1", "e7e8n", "e8=N");
    EXPECT_SAN("8/4P3/8/8/8/8/8/k3K3 w - - 0 1", "e7e8r", "e8=R");
    EXPECT_SAN("k7/4P3/8/8/8/8/8/4K3 w - - 0 1", "e7e8q", "e8=Q+");
    EXPECT_SAN("3r3k/4P1pp/8/8/8/8/8/4K3 w - - 0 1", "e7d8q", "exd8=Q#");
}

static void test_check_and_mate_suffixes(void)
{
    EXPECT_SAN("rnbqkbnr/pppp1ppp/8/4p3/6P1/5P2/PPPPP2P/RNBQKBNR b KQkq - 0 2", "d8h4", "Qh4#");
    EXPECT_SAN("rnbqkbnr/ppppp1pp/8/5p2/4P3/8/PPPP1PPP/RNBQKBNR w KQkq - 0 2", "d1h5", "Qh5+");
}

static void test_castling(void)
{
    EXPECT_SAN("r3k2r/8/8/8/8/8/8/R3K2R w KQkq - 0 1", "e1g1", "O-O");
    EXPECT_SAN("r3k2r/8/8/8/8/8/8/R3K2R w KQkq - 0 1", "e1c1", "O-O-O");
    EXPECT_SAN("r3k2r/8/8/8/8/8/8/R3K2R b KQkq - 0 1", "e8h8", "O-O");
    /* Castling that gives check through the rook. */
    EXPECT_SAN("5k2/8/8/8/8/8/8/4K2R w K - 0 1", "e1g1", "O-O+");
    /* Chess960: king b1 takes its rook on e1; the rook lands on f1. */
    EXPECT_SAN("7k/8/8/8/8/8/8/RK2R3 w EA - 0 1", "b1e1", "O-O");
    EXPECT_SAN("7k/8/8/8/8/8/8/RK2R3 w EA - 0 1", "b1a1", "O-O-O");
}

static void test_every_legal_move_formats_and_parses_back(void)
{
    static const char *fens[] = {
        FEN_START,
        "r3k2r/p1ppqpb1/bn2pnp1/3PN3/1p2P3/2N2Q1p/PPPBBPPP/R3K2R w KQkq - 0 1",
        "r2q1rk1/pP1p2pp/Q4n2/bbp1p3/Np6/1B3NBn/pPPP1PPP/R3K2R b KQ - 0 1",
        "6k1/8/8/8/8/Q7/8/Q1Q4K w - - 0 1",
        "7k/8/8/8/8/8/8/RK2R3 w EA - 0 1",
    };
    for (size_t i = 0; i < sizeof fens / sizeof fens[0]; i++) {
        position_t pos;
        if (!tests_parse_fen(fens[i], &pos))
            continue;
        move_list_t list;
        movegen_legal(&pos, &list);
        CU_ASSERT_TRUE(list.count > 0);
        for (int m = 0; m < list.count; m++) {
            char san[SAN_BUFFER_SIZE], message[256];
            move_t back = MOVE_NONE;
            san_format(&pos, list.moves[m], san);
            CU_ASSERT_EQUAL(san_parse(&pos, san, strlen(san), &back, message, sizeof message), LEGALITY_OK);
            CU_ASSERT_EQUAL(back, list.moves[m]);
        }
    }
}

/* san_parse's answer for `text` in fen, with its move's UCI in uci (empty when refused). */
static legality_reason_t parse(const char *fen, const char *text, char *uci, char *message, size_t size)
{
    position_t pos;
    move_t move = MOVE_NONE;
    uci[0] = '\0';
    if (!tests_parse_fen(fen, &pos))
        return LEGALITY_UNPARSEABLE;
    legality_reason_t r = san_parse(&pos, text, strlen(text), &move, message, size);
    if (r == LEGALITY_OK)
        uci_format(&pos, move, uci);
    return r;
}

#define EXPECT_PARSE(fen, text, reason, uci_or_message)                                         \
    do {                                                                                        \
        char uci_[8], message_[256] = "";                                                       \
        CU_ASSERT_EQUAL(parse(fen, text, uci_, message_, sizeof message_), reason);             \
        CU_ASSERT_STRING_EQUAL((reason) == LEGALITY_OK ? uci_ : message_, uci_or_message);     \
    } while (0)

static void test_lower_case_piece_letters_are_read_as_pieces(void)
{
    EXPECT_PARSE(FEN_START, "nf3", LEGALITY_OK, "g1f3");
    EXPECT_PARSE(FEN_START, "nc3+", LEGALITY_OK, "b1c3");
    EXPECT_PARSE("rnbqkbnr/pppp1ppp/8/4p3/4P3/8/PPPP1PPP/RNBQKBNR w KQkq - 0 2", "qh5", LEGALITY_OK, "d1h5");
    EXPECT_PARSE("rnbqkbnr/pppp1ppp/8/4p3/4P3/8/PPPP1PPP/RNBQKBNR w KQkq - 0 2", "ke2", LEGALITY_OK, "e1e2");
    EXPECT_PARSE("4k3/8/8/8/8/8/8/R3K3 w - - 0 1", "rxa8+", LEGALITY_OK, "a1a8");
    /* The bishop when no b-pawn move fits. */
    EXPECT_PARSE("rnbqkbnr/pppp1ppp/8/4p3/4P3/8/PPPP1PPP/RNBQKBNR w KQkq - 0 2", "bc4", LEGALITY_OK, "f1c4");
    /* Read as the piece, refused for the piece's reason. */
    EXPECT_PARSE(FEN_START, "nf4", LEGALITY_CANNOT_MOVE_SO, "no white knight can move to f4");
    EXPECT_PARSE(FEN_START, "ke2", LEGALITY_OWN_PIECE_ON_TARGET, "e2 holds a white piece");
    /* Not a piece letter, or only a letter: still not SAN. */
    EXPECT_PARSE(FEN_START, "pe4", LEGALITY_UNPARSEABLE, "'pe4' is neither UCI (e2e4) nor SAN (e4, Nf3, O-O)");
    EXPECT_PARSE(FEN_START, "n3", LEGALITY_UNPARSEABLE, "'n3' is neither UCI (e2e4) nor SAN (e4, Nf3, O-O)");
}

static void test_lower_case_b_is_the_b_pawn_first(void)
{
    /* A white pawn on b3 and a bishop on f1 can both take on c4: bxc4 is the pawn's, as SAN says. */
    static const char *both = "4k3/8/8/8/2p5/1P6/8/4KB2 w - - 0 1";
    EXPECT_PARSE(both, "bxc4", LEGALITY_OK, "b3c4");
    EXPECT_PARSE(both, "bc4", LEGALITY_OK, "b3c4");
    EXPECT_PARSE(both, "Bxc4", LEGALITY_OK, "f1c4");
    /* No b-pawn can: the bishop. */
    EXPECT_PARSE("4k3/8/8/8/2p5/8/8/4KB2 w - - 0 1", "bxc4", LEGALITY_OK, "f1c4");
    /* Neither can: the reason is the pawn's, as written. */
    EXPECT_PARSE("4k3/8/8/8/8/8/8/4K3 w - - 0 1", "bxc4", LEGALITY_NO_PIECE, "white has no pawn that could move to c4");
}

static void test_lower_case_piece_that_fits_two_pieces_is_ambiguous(void)
{
    EXPECT_PARSE("4k3/8/8/8/8/5N2/8/1N2K3 w - - 0 1", "nd2", LEGALITY_AMBIGUOUS,
                 "'nd2' is ambiguous: it could be Nbd2, Nfd2");
    EXPECT_PARSE("4k3/8/8/8/8/5N2/8/1N2K3 w - - 0 1", "nbd2", LEGALITY_OK, "b1d2");
    /* b, with no b-pawn move: the two bishops that reach e3. */
    EXPECT_PARSE("4k3/8/8/8/8/8/8/2B1K1B1 w - - 0 1", "be3", LEGALITY_AMBIGUOUS,
                 "'be3' is ambiguous: it could be Bce3, Bge3");
}

/* The plain writer: every other legal move compared for disambiguation,
 * every move made to see whether it checks or mates. It has none of
 * san.c's shortcuts (no other piece of the kind reaches the target, a move
 * that cannot give check). */
static void reference_san(const position_t *pos, const move_list_t *legal, move_t move, char *buf)
{
    int n = 0, from = move_from(move), to = move_to(move), kind = move_kind(move);
    piece_t piece = pos->board[from];
    if (kind == MOVE_CASTLING) {
        strcpy(buf, square_file(to) > square_file(from) ? "O-O" : "O-O-O");
        n = (int)strlen(buf);
    } else {
        bool capture = pos->board[to] != NO_PIECE || kind == MOVE_EN_PASSANT;
        if (piece_type(piece) == PAWN) {
            if (capture)
                buf[n++] = (char)('a' + square_file(from));
        } else {
            buf[n++] = piece_type_capital(piece_type(piece));
            bool ambiguous = false, same_file = false, same_rank = false;
            for (int i = 0; i < legal->count; i++) {
                move_t other = legal->moves[i];
                int other_from = move_from(other);
                if (other == move || other_from == from || move_to(other) != to
                    || move_kind(other) == MOVE_CASTLING || pos->board[other_from] != piece)
                    continue;
                ambiguous = true;
                same_file |= square_file(other_from) == square_file(from);
                same_rank |= square_rank(other_from) == square_rank(from);
            }
            if (ambiguous && !same_file) {
                buf[n++] = (char)('a' + square_file(from));
            } else if (ambiguous && !same_rank) {
                buf[n++] = (char)('1' + square_rank(from));
            } else if (ambiguous) {
                buf[n++] = (char)('a' + square_file(from));
                buf[n++] = (char)('1' + square_rank(from));
            }
        }
        if (capture)
            buf[n++] = 'x';
        buf[n++] = (char)('a' + square_file(to));
        buf[n++] = (char)('1' + square_rank(to));
        if (kind == MOVE_PROMOTION) {
            buf[n++] = '=';
            buf[n++] = piece_type_capital(move_promotion(move));
        }
    }
    position_t after = *pos;
    position_undo_t undo;
    position_make(&after, move, &undo);
    if (position_in_check(&after))
        buf[n++] = movegen_count(&after) == 0 ? '#' : '+';
    buf[n] = '\0';
}

typedef struct {
    long moves, differing, checks, disambiguated;
} san_compare_t;

static bool compare_every_move(const position_t *pos, const move_list_t *legal, void *context)
{
    san_compare_t *c = context;
    for (int i = 0; i < legal->count; i++) {
        char ours[SAN_BUFFER_SIZE], theirs[SAN_BUFFER_SIZE];
        san_format_with(pos, legal, legal->moves[i], ours);
        reference_san(pos, legal, legal->moves[i], theirs);
        c->moves++;
        c->checks += strchr(theirs, '+') || strchr(theirs, '#');
        c->disambiguated += random_game_move_is(pos, legal, legal->moves[i], RANDOM_GAME_PICK_DISAMBIGUATED);
        if (strcmp(ours, theirs) && c->differing++ < 5) {
            char fen[FEN_BUFFER_SIZE];
            fen_format(pos, fen, sizeof fen);
            fprintf(stderr, "san: %s: %s, the plain writer %s\n", fen, ours, theirs);
        }
    }
    return true;
}

static void test_every_legal_move_is_written_as_the_plain_writer_writes_it_on_random_games(void)
{
    static const random_game_preference_t preferences[] = {
        { RANDOM_GAME_PICK_PROMOTION, 60 }, { RANDOM_GAME_PICK_EN_PASSANT, 60 },
        { RANDOM_GAME_PICK_DOUBLE_STEP_BESIDE_PAWN, 30 }, { RANDOM_GAME_PICK_DISAMBIGUATED, 40 },
        { RANDOM_GAME_PICK_CASTLING, 50 }, { RANDOM_GAME_PICK_CHECK, 25 },
    };
    const random_game_style_t style = { preferences, sizeof preferences / sizeof preferences[0], 200 };
    san_compare_t c = { 0 };
    uint64_t rng = 0x5a17c0ffee;
    for (int game = 0; game < 300; game++) {
        position_t start;
        if (game % 3 == 2) {
            CU_ASSERT_FATAL(chess960_start(random_game_below(&rng, 960), &start));
        } else {
            CU_ASSERT_FATAL(tests_parse_fen("rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1", &start));
        }
        random_game_play(start, &style, &rng, compare_every_move, &c);
    }
    CU_ASSERT_EQUAL(c.differing, 0);
    /* The games reach what the shortcuts skip or keep. */
    CU_ASSERT(c.moves > 100000);
    CU_ASSERT(c.checks > 1000);
    CU_ASSERT(c.disambiguated > 100);
}

int test_san_register(void)
{
    CU_pSuite suite = CU_add_suite("san", NULL, NULL);
    if (!suite)
        return CU_get_error();
    CU_ADD_TEST(suite, test_plain_moves);
    CU_ADD_TEST(suite, test_disambiguation_by_file_then_rank_then_square);
    CU_ADD_TEST(suite, test_pinned_piece_does_not_force_disambiguation);
    CU_ADD_TEST(suite, test_captures_and_en_passant);
    CU_ADD_TEST(suite, test_promotions_with_check_and_mate);
    CU_ADD_TEST(suite, test_check_and_mate_suffixes);
    CU_ADD_TEST(suite, test_castling);
    CU_ADD_TEST(suite, test_every_legal_move_formats_and_parses_back);
    CU_ADD_TEST(suite, test_lower_case_piece_letters_are_read_as_pieces);
    CU_ADD_TEST(suite, test_lower_case_b_is_the_b_pawn_first);
    CU_ADD_TEST(suite, test_lower_case_piece_that_fits_two_pieces_is_ambiguous);
    CU_ADD_TEST(suite, test_every_legal_move_is_written_as_the_plain_writer_writes_it_on_random_games);
    return CUE_SUCCESS;
}
