/* FEN suite: fen_format(fen_parse(x)) is the canonical form of x for every
 * perft data position (expected forms computed here: X-FEN castling, en
 * passant square only when a capture is legal, counters "0 1" for EPD); every
 * rejection of fen_error_t with its code and a message naming the culprit;
 * whitespace, the input length contract, and the error names. */
#include <ctype.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "../support/epd.h"
#include "../support/tests.h"

/* Parses fen (strlen bytes) and asserts it is refused with `expected` and a
 * message containing every '|'-separated token of `tokens`. */
static void expect_rejected(const char *fen, unsigned flags, fen_error_t expected, const char *tokens)
{
    position_t pos;
    char message[256] = "(untouched)";
    fen_error_t got = fen_parse(fen, strlen(fen), flags, &pos, message, sizeof message);
    bool mentions = message[0] != '\0';
    char copy[128];
    snprintf(copy, sizeof copy, "%s", tokens);
    for (char *save, *token = strtok_r(copy, "|", &save); token; token = strtok_r(NULL, "|", &save))
        mentions = mentions && strstr(message, token) != NULL;
    if (got != expected || !mentions)
        fprintf(stderr, "\n'%s': got %s \"%s\", expected %s mentioning %s\n", fen, fen_error_code(got), message,
                fen_error_code(expected), tokens);
    CU_ASSERT_EQUAL(got, expected);
    CU_ASSERT(mentions);
}

static bool parses(const char *fen, unsigned flags, position_t *pos)
{
    char message[256];
    fen_error_t err = fen_parse(fen, strlen(fen), flags, pos, message, sizeof message);
    if (err != FEN_OK)
        fprintf(stderr, "\n'%s' refused: %s\n", fen, message);
    return err == FEN_OK;
}

static void expect_accepted(const char *fen, unsigned flags)
{
    position_t pos;
    CU_ASSERT(parses(fen, flags, &pos));
}

/* ---- Expected canonical FEN, computed from the text alone ---- */

/* Fills board[sq] (a1 = 0) with the letters of a FEN board field, '.' for
 * empty; false when the field is not 8 ranks of 8 squares. */
static bool board_of(const char *field, char board[SQ_COUNT])
{
    int rank = 7, file = 0;
    memset(board, '.', SQ_COUNT);
    for (const char *p = field; *p && *p != ' '; p++) {
        if (*p == '/') {
            if (file != 8 || rank == 0)
                return false;
            rank--;
            file = 0;
        } else if (*p >= '1' && *p <= '8') {
            file += *p - '0';
        } else if (file < 8 && strchr("pnbrqkPNBRQK", *p)) {
            board[square_make(file++, rank)] = *p;
        } else {
            return false;
        }
        if (file > 8)
            return false;
    }
    return rank == 0 && file == 8;
}

/* File of the rook farthest from the king on one side of it, or -1. */
static int outermost_rook_file(const char board[SQ_COUNT], int rank, int king_file, char rook, bool king_side)
{
    int found = -1;
    for (int f = king_side ? king_file + 1 : king_file - 1; f >= 0 && f < 8; f += king_side ? 1 : -1)
        if (board[square_make(f, rank)] == rook)
            found = f;
    return found;
}

/* X-FEN castling field for the given rights (K/Q when the rook is the
 * outermost on its side, else its file), in the order K Q k q. */
static bool canonical_castling(const char board[SQ_COUNT], const char *field, char *out)
{
    int rook_file[CASTLE_RIGHT_COUNT] = { -1, -1, -1, -1 };
    int king_file[COLOR_COUNT] = { -1, -1 };
    for (int f = 0; f < 8; f++) {
        if (board[square_make(f, 0)] == 'K')
            king_file[WHITE] = f;
        if (board[square_make(f, 7)] == 'k')
            king_file[BLACK] = f;
    }
    for (const char *p = field; *p && *p != ' ' && *p != '-'; p++) {
        color_t c = isupper((unsigned char)*p) ? WHITE : BLACK;
        int rank = c == WHITE ? 0 : 7, kf = king_file[c];
        char lower = (char)tolower((unsigned char)*p), rook = c == WHITE ? 'R' : 'r';
        if (kf < 0)
            return false;
        int file = lower == 'k' ? outermost_rook_file(board, rank, kf, rook, true)
                 : lower == 'q' ? outermost_rook_file(board, rank, kf, rook, false)
                                : lower - 'a';
        if (file < 0 || file > 7)
            return false;
        rook_file[c * 2 + (file > kf ? 0 : 1)] = file;
    }
    char *o = out;
    for (int i = 0; i < CASTLE_RIGHT_COUNT; i++) {
        if (rook_file[i] < 0)
            continue;
        color_t c = (color_t)(i / 2);
        bool king_side = i % 2 == 0;
        int rank = c == WHITE ? 0 : 7;
        char letter = outermost_rook_file(board, rank, king_file[c], c == WHITE ? 'R' : 'r', king_side) == rook_file[i]
                          ? (king_side ? 'K' : 'Q')
                          : (char)('A' + rook_file[i]);
        *o++ = c == WHITE ? letter : (char)tolower((unsigned char)letter);
    }
    if (o == out)
        *o++ = '-';
    *o = '\0';
    return true;
}

/* Whether some pawn of the side to move may capture en passant on ep: it
 * takes the pawn in front of ep, and its own king must not be attacked after. */
static bool en_passant_capture_legal(const position_t *parsed, int ep)
{
    color_t us = (color_t)parsed->side_to_move, them = (color_t)!us;
    int captured = ep + (us == WHITE ? -8 : 8);
    for (int df = -1; df <= 1; df += 2) {
        int file = square_file(captured) + df;
        if (file < 0 || file > 7)
            continue;
        int from = square_make(file, square_rank(captured));
        if (parsed->board[from] != piece_make(us, PAWN))
            continue;
        position_t after = *parsed;
        position_remove_piece(&after, from);
        position_remove_piece(&after, captured);
        position_put_piece(&after, piece_make(us, PAWN), ep);
        if (!position_attacked_by(&after, after.king_square[us], them, position_occupied(&after)))
            return true;
    }
    return false;
}

/* The canonical FEN of a data line (4 or 6 fields), or false if the line
 * does not fit this reasoning. `parsed` is the line as fen_parse read it,
 * used only for the en passant attack test. */
static bool canonical_fen(const char *fen, const position_t *parsed, char *out, size_t size)
{
    char board_field[80], side[8], castling[8], ep[8], half[8] = "0", full[8] = "1";
    int n = sscanf(fen, "%79s %7s %7s %7s %7s %7s", board_field, side, castling, ep, half, full);
    char board[SQ_COUNT], canonical[8];
    if ((n != 4 && n != 6) || !board_of(board_field, board) || !canonical_castling(board, castling, canonical))
        return false;
    if (strcmp(ep, "-") && !en_passant_capture_legal(parsed, square_make(ep[0] - 'a', ep[1] - '1')))
        strcpy(ep, "-");
    snprintf(out, size, "%s %s %s %s %s %s", board_field, side, canonical, ep, half, full);
    return true;
}

/* Formats pos and checks it against the expected canonical text, then that
 * parsing the output gives the same bytes back. */
static bool check_round_trip(const char *fen, const position_t *pos, unsigned flags)
{
    char expected[FEN_BUFFER_SIZE], formatted[FEN_BUFFER_SIZE];
    if (!canonical_fen(fen, pos, expected, sizeof expected)) {
        fprintf(stderr, "\ncannot work out the canonical form of '%s'\n", fen);
        CU_FAIL("unexpected data line");
        return false;
    }
    fen_format(pos, formatted, sizeof formatted);
    bool same_text = !strcmp(formatted, expected);
    if (!same_text)
        fprintf(stderr, "\n'%s' formats as '%s', expected '%s'\n", fen, formatted, expected);
    CU_ASSERT(same_text);
    position_t again;
    bool reparsed = parses(formatted, flags, &again);
    CU_ASSERT(reparsed && memcmp(&again, pos, sizeof again) == 0);
    return same_text;
}

static void round_trip_file(const char *name, bool chess960)
{
    epd_reader_t reader;
    epd_entry_t entry;
    int lines = 0;
    if (!epd_open(&reader, name))
        return;
    while (epd_next(&reader, &entry)) {
        position_t pos;
        unsigned flags = FEN_ALLOW_IMPOSSIBLE_CHECK | (chess960 ? FEN_CHESS960 : 0);
        if (chess960 ? !parses(entry.fen, flags, &pos) : !tests_parse_fen(entry.fen, &pos)) {
            CU_FAIL("data line refused");
            continue;
        }
        check_round_trip(entry.fen, &pos, flags | (pos.chess960 ? FEN_CHESS960 : 0));
        lines++;
    }
    epd_close(&reader);
    CU_ASSERT(lines > 0);
}

static void test_canonical_fens_of_the_perft_positions_round_trip(void)
{
    round_trip_file("standard.epd", false);
    round_trip_file("tricky.epd", false);
    round_trip_file("chess960.epd", true);
}

/* Hand-checked canonical forms, so the reasoning above is itself pinned. */
static void test_canonical_form_of_sample_positions(void)
{
    static const struct {
        const char *in, *out;
        unsigned flags;
    } cases[] = {
        /* Shredder letters of corner rooks are KQkq, in standard chess too. */
        { "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w HAha - 0 1", FEN_START, 0 },
        { "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w qkQK - 0 1", FEN_START, 0 },
        /* Chess960: rights with the inner rooks keep their files. */
        { "rk4rr/pppppppp/8/8/8/8/PPPPPPPP/RK4RR w GAga - 0 1",
          "rk4rr/pppppppp/8/8/8/8/PPPPPPPP/RK4RR w GQgq - 0 1", FEN_CHESS960 },
        { "rk4rr/pppppppp/8/8/8/8/PPPPPPPP/RK4RR w HAha - 0 1",
          "rk4rr/pppppppp/8/8/8/8/PPPPPPPP/RK4RR w KQkq - 0 1", FEN_CHESS960 },
        { "bqnb1rkr/pp3ppp/3ppn2/2p5/5P2/P2P4/NPP1P1PP/BQ1BNRKR w HFhf - 0 1",
          "bqnb1rkr/pp3ppp/3ppn2/2p5/5P2/P2P4/NPP1P1PP/BQ1BNRKR w KQkq - 0 1", FEN_CHESS960 },
        /* 1.e4: no black pawn can take on e3. */
        { "rnbqkbnr/pppppppp/8/8/4P3/8/PPPP1PPP/RNBQKBNR b KQkq e3 0 1",
          "rnbqkbnr/pppppppp/8/8/4P3/8/PPPP1PPP/RNBQKBNR b KQkq - 0 1", 0 },
        /* exd6 is legal: the square stays. */
        { "rnbqkb1r/ppp1pppp/5n2/3pP3/8/8/PPPP1PPP/RNBQKBNR w KQkq d6 0 3",
          "rnbqkb1r/ppp1pppp/5n2/3pP3/8/8/PPPP1PPP/RNBQKBNR w KQkq d6 0 3", 0 },
        /* bxc3 would open the fourth rank to the rook: the square goes. */
        { "8/8/8/8/kpP4R/8/8/4K3 b - c3 0 1", "8/8/8/8/kpP4R/8/8/4K3 b - - 0 1", 0 },
        /* Four fields: counters 0 and 1. */
        { "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq -", FEN_START, 0 },
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        position_t pos;
        char out[FEN_BUFFER_SIZE];
        CU_ASSERT_FATAL(parses(cases[i].in, cases[i].flags, &pos));
        fen_format(&pos, out, sizeof out);
        if (strcmp(out, cases[i].out))
            fprintf(stderr, "\n'%s' formats as '%s', expected '%s'\n", cases[i].in, out, cases[i].out);
        CU_ASSERT_STRING_EQUAL(out, cases[i].out);
    }
}

static void test_four_field_fen_gets_counters_zero_and_one(void)
{
    position_t four, six;
    CU_ASSERT_FATAL(parses("r3k2r/8/8/8/8/8/8/R3K2R b Kq -", 0, &four));
    CU_ASSERT_FATAL(parses("r3k2r/8/8/8/8/8/8/R3K2R b Kq - 0 1", 0, &six));
    CU_ASSERT_EQUAL(four.halfmove_clock, 0);
    CU_ASSERT_EQUAL(four.fullmove_number, 1);
    CU_ASSERT(memcmp(&four, &six, sizeof four) == 0);
    CU_ASSERT_FATAL(parses("r3k2r/8/8/8/8/8/8/R3K2R b Kq - 7 42", 0, &six));
    CU_ASSERT_EQUAL(six.halfmove_clock, 7);
    CU_ASSERT_EQUAL(six.fullmove_number, 42);
}

static void test_leading_and_trailing_whitespace_is_accepted(void)
{
    position_t plain, padded;
    CU_ASSERT_FATAL(parses(FEN_START, 0, &plain));
    CU_ASSERT_FATAL(parses("  \t" FEN_START " \r\n", 0, &padded));
    CU_ASSERT(memcmp(&plain, &padded, sizeof plain) == 0);
    CU_ASSERT_FATAL(parses("rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR   w  KQkq  -  0  1", 0, &padded));
    CU_ASSERT(memcmp(&plain, &padded, sizeof plain) == 0);
}

/* A page whose successor is unmapped: text copied to its end cannot be read
 * past without a fault. */
typedef struct {
    char *base;
    size_t page;
} guard_t;

static bool guard_open(guard_t *g)
{
    g->page = (size_t)sysconf(_SC_PAGESIZE);
    void *p = mmap(NULL, 2 * g->page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED)
        return false;
    g->base = p;
    return mprotect(g->base + g->page, g->page, PROT_NONE) == 0;
}

static const char *guard_place(guard_t *g, const char *text, size_t length)
{
    char *at = g->base + g->page - length;
    memcpy(at, text, length);
    return at;
}

static void guard_close(guard_t *g) { munmap(g->base, 2 * g->page); }

/* fen_parse reads exactly `length` bytes: every prefix of these inputs sits
 * against an unmapped page, and a cut inside the board is an error. */
static void test_parse_reads_only_length_bytes(void)
{
    static const char *const inputs[] = {
        FEN_START,
        "rnbqkb1r/ppp1pppp/5n2/3pP3/8/8/PPPP1PPP/RNBQKBNR w KQkq d6 0 3",
        "rk4rr/pppppppp/8/8/8/8/PPPPPPPP/RK4RR w GAga - 12 34",
        "rnbqkbnr/pppppppp/44/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1",
    };
    guard_t g = { NULL, 0 };
    CU_ASSERT_FATAL(guard_open(&g));
    for (size_t i = 0; i < sizeof inputs / sizeof inputs[0]; i++) {
        size_t full = strlen(inputs[i]), board_end = strcspn(inputs[i], " ");
        for (size_t length = 0; length <= full; length++) {
            position_t pos;
            char message[256];
            fen_error_t err = fen_parse(guard_place(&g, inputs[i], length), length, FEN_CHESS960, &pos, message,
                                        sizeof message);
            if (length < board_end)
                CU_ASSERT(err != FEN_OK);
            CU_ASSERT(err == FEN_OK || message[0] != '\0');
        }
    }
    guard_close(&g);

    /* Bytes after `length` are not looked at, even a NUL and garbage. */
    static const char with_tail[] = FEN_START "\0 garbage";
    position_t a, b;
    char message[256];
    CU_ASSERT_EQUAL(fen_parse(with_tail, strlen(FEN_START), 0, &a, message, sizeof message), FEN_OK);
    CU_ASSERT_FATAL(parses(FEN_START, 0, &b));
    CU_ASSERT(memcmp(&a, &b, sizeof a) == 0);
    /* Within `length`, a NUL is just a byte that does not belong in a FEN. */
    CU_ASSERT_NOT_EQUAL(fen_parse(with_tail, strlen(FEN_START) + 1, 0, &a, message, sizeof message), FEN_OK);
    CU_ASSERT(message[0] != '\0');
    static const char nul_in_board[] = "rnbqkbnr/pppp\0ppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1";
    CU_ASSERT_EQUAL(fen_parse(nul_in_board, sizeof nul_in_board - 1, 0, &a, message, sizeof message),
                    FEN_EPIECE_LETTER);
    CU_ASSERT(message[0] != '\0');
    /* Cut inside the board of a terminated string. */
    CU_ASSERT_EQUAL(fen_parse(FEN_START, 20, 0, &a, message, sizeof message), FEN_EFIELD_COUNT);
}

static void test_fen_longer_than_the_input_limit_is_rejected(void)
{
    char text[FEN_INPUT_MAX + 2];
    memset(text, ' ', sizeof text);
    memcpy(text, FEN_START, strlen(FEN_START));
    text[FEN_INPUT_MAX] = '\0'; /* exactly the limit: accepted */
    expect_accepted(text, 0);
    text[FEN_INPUT_MAX] = ' ';
    text[FEN_INPUT_MAX + 1] = '\0';
    char length[16];
    snprintf(length, sizeof length, "%d", FEN_INPUT_MAX + 1);
    expect_rejected(text, 0, FEN_ETOO_LONG, length);
}

static void test_field_count_must_be_four_or_six(void)
{
    expect_rejected("", 0, FEN_EFIELD_COUNT, "0");
    expect_rejected("rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq", 0, FEN_EFIELD_COUNT, "3");
    expect_rejected("rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0", 0, FEN_EFIELD_COUNT, "5");
    expect_rejected("rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1 x", 0, FEN_EFIELD_COUNT, "more than 6");
}

static void test_board_must_have_eight_ranks(void)
{
    expect_rejected("rnbqkbnr/pppppppp/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1", 0, FEN_ERANK_COUNT, "7");
    expect_rejected("rnbqkbnr/pppppppp/8/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1", 0, FEN_ERANK_COUNT, "8");
    expect_rejected("rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR/ w KQkq - 0 1", 0, FEN_ERANK_COUNT, "8");
}

static void test_each_rank_must_have_eight_squares(void)
{
    expect_rejected("rnbqkbnr/ppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1", 0, FEN_ERANK_WIDTH, "rank 7|7");
    expect_rejected("rnbqkbnr/pppppppp1/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1", 0, FEN_ERANK_WIDTH, "rank 7");
    expect_rejected("rnbqkbnr/ppppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1", 0, FEN_ERANK_WIDTH, "rank 7");
    expect_rejected("rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBN w KQkq - 0 1", 0, FEN_ERANK_WIDTH, "rank 1|7");
    expect_rejected("rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR1 w KQkq - 0 1", 0, FEN_ERANK_WIDTH, "rank 1");
}

static void test_two_digits_in_a_row_are_rejected(void)
{
    expect_rejected("rnbqkbnr/pppppppp/44/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1", 0, FEN_ERANK_WIDTH, "rank 6");
    expect_rejected("rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQ11NR w KQkq - 0 1", 0, FEN_ERANK_WIDTH, "rank 1");
}

static void test_unknown_piece_letter_is_rejected(void)
{
    expect_rejected("rnbqkbnr/ppppxppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1", 0, FEN_EPIECE_LETTER, "'x'");
    expect_rejected("rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNX w KQkq - 0 1", 0, FEN_EPIECE_LETTER, "'X'");
    expect_rejected("rnbqkbnr/pppppppp/8/0/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1", 0, FEN_EPIECE_LETTER, "'0'");
    expect_rejected("rnbqkbnr/pppppppp/9/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1", 0, FEN_EPIECE_LETTER, "'9'");
}

static void test_side_to_move_must_be_w_or_b(void)
{
    expect_rejected("rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR W KQkq - 0 1", 0, FEN_ESIDE_TO_MOVE, "'W'");
    expect_rejected("rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR white KQkq - 0 1", 0, FEN_ESIDE_TO_MOVE, "'white'");
    expect_rejected("rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR - KQkq - 0 1", 0, FEN_ESIDE_TO_MOVE, "'-'");
}

static void test_castling_field_accepts_only_castling_letters(void)
{
    expect_rejected("rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KX - 0 1", 0, FEN_ECASTLING_LETTERS, "'X'");
    expect_rejected("rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w K- - 0 1", 0, FEN_ECASTLING_LETTERS, "'-'");
    expect_rejected("rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkqK - 0 1", 0, FEN_ECASTLING_LETTERS,
                    "'KQkqK'");
}

static void test_castling_right_given_twice_is_rejected(void)
{
    expect_rejected("rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KK - 0 1", 0, FEN_ECASTLING_RIGHTS, "'KK'|white");
    /* K and H name the same rook in standard chess. */
    expect_rejected("rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KH - 0 1", 0, FEN_ECASTLING_RIGHTS, "'KH'|white");
    expect_rejected("rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w qa - 0 1", 0, FEN_ECASTLING_RIGHTS, "'qa'|black");
}

static void test_castling_right_needs_a_rook_on_its_square(void)
{
    expect_rejected("rnbqkbn1/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1", 0, FEN_ECASTLING_RIGHTS, "'k'|black");
    expect_rejected("rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/1NBQKBNR w KQkq - 0 1", 0, FEN_ECASTLING_RIGHTS, "'Q'|white");
    /* A file letter names a square that must hold that side's rook. */
    expect_rejected("rk4rr/pppppppp/8/8/8/8/PPPPPPPP/RK4RR w F - 0 1", FEN_CHESS960, FEN_ECASTLING_RIGHTS, "'F'");
    expect_rejected("rk4rr/pppppppp/8/8/8/8/PPPPPPPP/RK4RR w b - 0 1", FEN_CHESS960, FEN_ECASTLING_RIGHTS, "'b'");
}

static void test_castling_right_needs_the_king_on_its_first_rank(void)
{
    expect_rejected("rnbqkbnr/pppppppp/8/8/8/4K3/PPPPPPPP/RNBQ1BNR w KQkq - 0 1", 0, FEN_ECASTLING_RIGHTS,
                    "'K'|white");
    expect_rejected("rnbq1bnr/pppppppp/4k3/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1", 0, FEN_ECASTLING_RIGHTS,
                    "'k'|black");
}

static void test_chess960_castling_right_needs_the_chess960_flag(void)
{
    static const char *const fens[] = {
        "bqnb1rkr/pp3ppp/3ppn2/2p5/5P2/P2P4/NPP1P1PP/BQ1BNRKR w HFhf - 0 1", /* king on g1 */
        "bqnb1rkr/pp3ppp/3ppn2/2p5/5P2/P2P4/NPP1P1PP/BQ1BNRKR w KQkq - 0 1",
        "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBRR w G - 0 1",            /* king e1, inner rook */
        "r3k2r/8/8/8/8/8/8/1R2K2R w B - 0 1",                               /* rook not in the corner */
    };
    static const char *const letters[] = { "'H'", "'K'", "'G'", "'B'" };
    for (size_t i = 0; i < sizeof fens / sizeof fens[0]; i++) {
        expect_rejected(fens[i], 0, FEN_ECASTLING_NEEDS_CHESS960, letters[i]);
        position_t pos;
        CU_ASSERT(parses(fens[i], FEN_CHESS960, &pos));
        CU_ASSERT(pos.chess960);
    }
}

static void test_xfen_and_shredder_fen_describe_the_same_chess960_position(void)
{
    static const char *const pairs[][2] = {
        { "bqnb1rkr/pp3ppp/3ppn2/2p5/5P2/P2P4/NPP1P1PP/BQ1BNRKR w HFhf - 0 1",
          "bqnb1rkr/pp3ppp/3ppn2/2p5/5P2/P2P4/NPP1P1PP/BQ1BNRKR w KQkq - 0 1" },
        { "rk4rr/pppppppp/8/8/8/8/PPPPPPPP/RK4RR w HAha - 0 1", "rk4rr/pppppppp/8/8/8/8/PPPPPPPP/RK4RR w KQkq - 0 1" },
        { "rk4rr/pppppppp/8/8/8/8/PPPPPPPP/RK4RR w GAga - 0 1", "rk4rr/pppppppp/8/8/8/8/PPPPPPPP/RK4RR w GQgq - 0 1" },
    };
    for (size_t i = 0; i < sizeof pairs / sizeof pairs[0]; i++) {
        position_t shredder, xfen;
        CU_ASSERT_FATAL(parses(pairs[i][0], FEN_CHESS960, &shredder));
        CU_ASSERT_FATAL(parses(pairs[i][1], FEN_CHESS960, &xfen));
        CU_ASSERT(memcmp(&shredder, &xfen, sizeof xfen) == 0);
    }
    /* K and G are different rooks when both stand on the king side. */
    position_t outer, inner;
    CU_ASSERT_FATAL(parses("rk4rr/pppppppp/8/8/8/8/PPPPPPPP/RK4RR w K - 0 1", FEN_CHESS960, &outer));
    CU_ASSERT_FATAL(parses("rk4rr/pppppppp/8/8/8/8/PPPPPPPP/RK4RR w G - 0 1", FEN_CHESS960, &inner));
    CU_ASSERT_EQUAL(outer.castle_rook[WHITE * 2 + CASTLE_KING_SIDE], square_make(7, 0));
    CU_ASSERT_EQUAL(inner.castle_rook[WHITE * 2 + CASTLE_KING_SIDE], square_make(6, 0));
}

/* Base position for the en passant cases: after 1.e4, black to move. */
#define AFTER_E4 "rnbqkbnr/pppppppp/8/8/4P3/8/PPPP1PPP/RNBQKBNR b KQkq "

static void test_en_passant_field_must_be_a_square(void)
{
    expect_accepted(AFTER_E4 "e3 0 1", 0);
    expect_rejected(AFTER_E4 "e9 0 1", 0, FEN_EEN_PASSANT_SQUARE, "'e9'");
    expect_rejected(AFTER_E4 "z3 0 1", 0, FEN_EEN_PASSANT_SQUARE, "'z3'");
    expect_rejected(AFTER_E4 "E3 0 1", 0, FEN_EEN_PASSANT_SQUARE, "'E3'");
    expect_rejected(AFTER_E4 "e33 0 1", 0, FEN_EEN_PASSANT_SQUARE, "'e33'");
}

static void test_en_passant_square_must_be_on_the_capturing_rank(void)
{
    expect_rejected("rnbqkbnr/pppppppp/8/8/4P3/8/PPPP1PPP/RNBQKBNR w KQkq e3 0 1", 0, FEN_EEN_PASSANT_RANK,
                    "e3|6");
    expect_rejected(AFTER_E4 "e6 0 1", 0, FEN_EEN_PASSANT_RANK, "e6|3");
}

static void test_en_passant_square_needs_pawn_that_just_moved(void)
{
    expect_rejected("rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR b KQkq e3 0 1", 0, FEN_EEN_PASSANT_NO_PAWN,
                    "e3|e4");
    /* A knight on e4 is not a pawn that moved two squares. */
    expect_rejected("rnbqkbnr/pppppppp/8/8/4N3/8/PPPPPPPP/R1BQKBNR b KQkq e3 0 1", 0, FEN_EEN_PASSANT_NO_PAWN,
                    "e4");
}

static void test_en_passant_square_needs_empty_squares_behind_the_pawn(void)
{
    expect_rejected("rnbqkbnr/pppppppp/8/8/4P3/8/PPPPBPPP/RNBQK1NR b KQkq e3 0 1", 0, FEN_EEN_PASSANT_BLOCKED, "e2");
    expect_rejected("rnbqkbnr/pppppppp/8/8/4P3/4N3/PPPP1PPP/RNBQKB1R b KQkq e3 0 1", 0, FEN_EEN_PASSANT_BLOCKED,
                    "e3|e2");
}

static void test_halfmove_clock_must_be_a_small_number(void)
{
    char fen[FEN_BUFFER_SIZE];
    snprintf(fen, sizeof fen, "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - %d 1", FEN_COUNTER_MAX);
    expect_accepted(fen, 0);
    expect_rejected("rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - -1 1", 0, FEN_EHALFMOVE_CLOCK, "'-1'");
    expect_rejected("rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - x 1", 0, FEN_EHALFMOVE_CLOCK, "'x'");
    expect_rejected("rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 99999 1", 0, FEN_EHALFMOVE_CLOCK,
                    "'99999'");
    snprintf(fen, sizeof fen, "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - %d 1", FEN_COUNTER_MAX + 1);
    expect_rejected(fen, 0, FEN_EHALFMOVE_CLOCK, "'10000'");
}

static void test_fullmove_number_must_be_a_positive_small_number(void)
{
    expect_rejected("rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 0", 0, FEN_EFULLMOVE_NUMBER, "'0'");
    expect_rejected("rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 abc", 0, FEN_EFULLMOVE_NUMBER, "'abc'");
    expect_rejected("rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 -3", 0, FEN_EFULLMOVE_NUMBER, "'-3'");
}

static void test_each_side_needs_exactly_one_king(void)
{
    expect_rejected("rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQ1BNR w kq - 0 1", 0, FEN_EKING_COUNT, "white|0");
    expect_rejected("rnbqkbnr/pppppppp/4k3/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1", 0, FEN_EKING_COUNT, "black|2");
    expect_rejected("8/8/8/8/8/8/8/8 w - - 0 1", 0, FEN_EKING_COUNT, "0");
}

static void test_pawns_cannot_stand_on_the_first_or_last_rank(void)
{
    expect_rejected("rnbqkbnr/pppppppp/8/8/8/8/PPPPPPP1/RNBQKBNP w Qkq - 0 1", 0, FEN_EPAWN_ON_BACK_RANK, "h1");
    expect_rejected("pnbqkbnr/1ppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQk - 0 1", 0, FEN_EPAWN_ON_BACK_RANK, "a8");
    expect_rejected("4k2P/8/8/8/8/8/8/4K3 w - - 0 1", 0, FEN_EPAWN_ON_BACK_RANK, "h8");
}

static void test_a_side_has_at_most_sixteen_pieces_and_eight_pawns(void)
{
    expect_rejected("rnbqkbnr/pppppppp/8/8/8/N7/PPPPPPPP/RNBQKBNR w KQkq - 0 1", 0, FEN_ETOO_MANY_PIECES, "white|17");
    expect_rejected("rnbqkbnr/pppppppp/8/8/8/P7/PPPPPPPP/RNBQKBN1 w Qkq - 0 1", 0, FEN_ETOO_MANY_PAWNS, "white|9");
    expect_rejected("4k3/pppppppp/p7/8/8/8/8/4K3 w - - 0 1", 0, FEN_ETOO_MANY_PAWNS, "black|9");
    expect_accepted("4k3/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQ - 0 1", 0);
}

static void test_side_not_to_move_cannot_be_in_check(void)
{
    expect_rejected("4k3/8/8/8/8/8/8/4R1K1 w - - 0 1", 0, FEN_EOPPOSITE_CHECK, "black");
    expect_rejected("4k3/8/8/8/8/8/3p4/4K3 b - - 0 1", 0, FEN_EOPPOSITE_CHECK, "white");
    /* Not even with the flag for perft positions. */
    expect_rejected("4k3/8/8/8/8/8/8/4R1K1 w - - 0 1", FEN_ALLOW_IMPOSSIBLE_CHECK, FEN_EOPPOSITE_CHECK, "black");
}

static void test_more_than_two_checkers_are_rejected(void)
{
    /* Re8, Bb4 and Nd3 all attack Ke1. */
    expect_rejected("4r2k/8/8/8/1b6/3n4/8/4K3 w - - 0 1", 0, FEN_ETOO_MANY_CHECKERS, "white|3");
}

static void test_double_check_from_both_sides_of_one_line_is_rejected(void)
{
    expect_rejected("7k/8/8/8/8/8/8/r3K2r w - - 0 1", 0, FEN_EIMPOSSIBLE_CHECK, "white");
    expect_rejected("7k/8/8/8/8/8/8/r3K2r w - - 0 1", FEN_CHESS960, FEN_EIMPOSSIBLE_CHECK, "white");
    /* Re8 and Re1 on the e-file, Ke4 between them. */
    expect_rejected("4r2k/8/8/8/4K3/8/8/4r3 w - - 0 1", 0, FEN_EIMPOSSIBLE_CHECK, "white");
    /* Bb2 and Bf6 on the a1-h8 diagonal, Kd4 between them. */
    expect_rejected("7k/8/5b2/8/3K4/8/1b6/8 w - - 0 1", 0, FEN_EIMPOSSIBLE_CHECK, "white");
}

static void test_double_check_without_a_slider_is_rejected(void)
{
    expect_rejected("7k/8/8/8/8/3n1n2/8/4K3 w - - 0 1", 0, FEN_EIMPOSSIBLE_CHECK, "white");
    expect_rejected("7k/8/8/8/8/3n4/5p2/4K3 w - - 0 1", 0, FEN_EIMPOSSIBLE_CHECK, "white");
}

static void test_possible_double_check_is_accepted(void)
{
    /* Nd3+ uncovering the e-file: Re8 and Nd3 both check Ke1. */
    expect_accepted("4r2k/8/8/8/8/3n4/8/4K3 w - - 0 1", 0);
    /* Be7-b4+ uncovering the e-file: Re8 and Bb4 both check Ke1. */
    expect_accepted("4r2k/8/8/8/1b6/8/8/4K3 w - - 0 1", 0);
}

static void test_check_must_fit_the_double_push_named_by_the_en_passant_square(void)
{
    /* Ra1 checks Ke1; the push d7-d5 could not have done that. */
    expect_rejected("3k4/8/8/3pP3/8/8/8/r3K3 w - d6 0 1", 0, FEN_EIMPOSSIBLE_CHECK, "white|d5");
    /* Bb8 checks Ke5 through d6, a square the pawn only passed over. */
    expect_rejected("1b1k4/8/8/2PpK3/8/8/8/8 w - d6 0 1", 0, FEN_EIMPOSSIBLE_CHECK, "white|d5");
    /* The pushed pawn itself gives check: fine. */
    expect_accepted("3k4/8/8/3p4/4K3/8/8/8 w - d6 0 1", 0);
    /* The push uncovered Bc8 against Kg4: fine. */
    expect_accepted("2bk4/8/8/3p4/6K1/8/8/8 w - d6 0 1", 0);
    /* Without the square the same check is an ordinary one. */
    expect_accepted("3k4/8/8/3pP3/8/8/8/r3K3 w - - 0 1", 0);
}

/* Every data line parses, strictly, except the known unreachable ones, which
 * are refused as impossible checks and accepted only with the perft flag. */
static void test_strict_parse_refuses_only_the_unreachable_perft_positions(void)
{
    static const char *const files[] = { "standard.epd", "tricky.epd", "chess960.epd" };
    int refused = 0;
    for (size_t f = 0; f < sizeof files / sizeof files[0]; f++) {
        epd_reader_t reader;
        epd_entry_t entry;
        if (!epd_open(&reader, files[f]))
            continue;
        while (epd_next(&reader, &entry)) {
            position_t pos;
            char message[256];
            fen_error_t err = fen_parse(entry.fen, strlen(entry.fen), FEN_DETECT_CHESS960, &pos, message,
                                        sizeof message);
            const char *why = NULL;
            fen_error_t expected = epd_known_unreachable(entry.fen, &why) ? FEN_EIMPOSSIBLE_CHECK : FEN_OK;
            if (err != expected)
                fprintf(stderr, "\n%s line %d: got %s (%s), expected %s%s%s\n", files[f], entry.line_number,
                        fen_error_code(err), message, fen_error_code(expected), why ? ": " : "", why ? why : "");
            CU_ASSERT_EQUAL(err, expected);
            if (expected == FEN_EIMPOSSIBLE_CHECK) {
                refused++;
                CU_ASSERT_EQUAL(fen_parse(entry.fen, strlen(entry.fen), FEN_ALLOW_IMPOSSIBLE_CHECK, &pos, message,
                                          sizeof message),
                                FEN_OK);
            }
        }
        epd_close(&reader);
    }
    CU_ASSERT_EQUAL(refused, 6);
}

static void test_message_is_terminated_and_truncated_to_its_buffer(void)
{
    static const char bad[] = "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq e9 0 1";
    position_t pos;
    char message[8];
    memset(message, 'z', sizeof message);
    CU_ASSERT_EQUAL(fen_parse(bad, strlen(bad), 0, &pos, message, 5), FEN_EEN_PASSANT_SQUARE);
    CU_ASSERT(memchr(message, '\0', 5) != NULL);
    CU_ASSERT_EQUAL(message[5], 'z'); /* nothing written past message_size */
    CU_ASSERT(strlen(message) > 0);
    /* No message buffer at all is allowed. */
    CU_ASSERT_EQUAL(fen_parse(bad, strlen(bad), 0, &pos, NULL, 0), FEN_EEN_PASSANT_SQUARE);
    CU_ASSERT_EQUAL(fen_parse(FEN_START, strlen(FEN_START), 0, &pos, NULL, 0), FEN_OK);
    /* Success leaves an empty message. */
    char ok_message[64] = "stale";
    CU_ASSERT_EQUAL(fen_parse(FEN_START, strlen(FEN_START), 0, &pos, ok_message, sizeof ok_message), FEN_OK);
    CU_ASSERT_STRING_EQUAL(ok_message, "");
}

static void test_error_codes_have_distinct_snake_case_names(void)
{
    for (int i = 0; i < FEN_ERROR_COUNT; i++) {
        const char *name = fen_error_code((fen_error_t)i);
        CU_ASSERT_PTR_NOT_NULL_FATAL(name);
        CU_ASSERT(name[0] != '\0');
        CU_ASSERT(strspn(name, "abcdefghijklmnopqrstuvwxyz0123456789_") == strlen(name));
        for (int j = 0; j < i; j++)
            CU_ASSERT(strcmp(name, fen_error_code((fen_error_t)j)) != 0);
    }
    CU_ASSERT_STRING_EQUAL(fen_error_code(FEN_EEN_PASSANT_NO_PAWN), "en_passant_no_pawn"); /* fen.h's example */
    CU_ASSERT_PTR_NOT_NULL(fen_error_code(FEN_ERROR_COUNT));
}

/* The FEN written for a position reached by legal moves must be one the
 * parser accepts, also when a counter starts at the largest accepted value. */
static void test_formatted_fen_of_a_played_position_parses_back(void)
{
    char start[FEN_BUFFER_SIZE];
    snprintf(start, sizeof start, "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR b KQkq - %d %d", FEN_COUNTER_MAX,
             FEN_COUNTER_MAX);
    position_t pos;
    CU_ASSERT_FATAL(parses(start, 0, &pos));
    move_list_t list;
    movegen_legal(&pos, &list);
    position_undo_t undo;
    for (int i = 0; i < list.count; i++) {
        char uci[UCI_BUFFER_SIZE];
        if (!strcmp(uci_format(&pos, list.moves[i], uci), "g8f6"))
            position_make(&pos, list.moves[i], &undo);
    }
    CU_ASSERT_EQUAL_FATAL(pos.side_to_move, WHITE);
    char formatted[FEN_BUFFER_SIZE];
    fen_format(&pos, formatted, sizeof formatted);
    position_t again;
    bool reparsed = parses(formatted, 0, &again);
    CU_ASSERT(reparsed);
}

/* Every counter the parser accepts is written back as given, and a buffer
 * too small for the FEN gets as much of it as it holds, NUL-terminated. */
static void test_counters_are_written_back_and_a_short_buffer_gets_a_prefix(void)
{
    for (int halfmove = 0; halfmove <= FEN_COUNTER_MAX; halfmove += halfmove < 120 ? 1 : 97) {
        int fullmove = FEN_COUNTER_MAX - halfmove < 1 ? 1 : FEN_COUNTER_MAX - halfmove;
        char fen[FEN_BUFFER_SIZE], formatted[FEN_BUFFER_SIZE];
        snprintf(fen, sizeof fen, "4k3/8/8/8/8/8/8/4K3 w - - %d %d", halfmove, fullmove);
        position_t pos;
        CU_ASSERT_FATAL(parses(fen, 0, &pos));
        CU_ASSERT_STRING_EQUAL(fen_format(&pos, formatted, sizeof formatted), fen);
    }
    position_t pos;
    CU_ASSERT_FATAL(parses("4k3/8/8/8/8/8/8/4K3 w - - 12 345", 0, &pos));
    char small[12];
    memset(small, 'x', sizeof small);
    CU_ASSERT_STRING_EQUAL(fen_format(&pos, small, 10), "4k3/8/8/8");
    CU_ASSERT_EQUAL(small[10], 'x');
    CU_ASSERT_STRING_EQUAL(fen_format(&pos, small, 1), "");
    small[0] = 'y';
    fen_format(&pos, small, 0);
    CU_ASSERT_EQUAL(small[0], 'y');
}

int test_fen_register(void)
{
    CU_pSuite suite = CU_add_suite("fen", NULL, NULL);
    if (!suite)
        return CU_get_error();
    CU_ADD_TEST(suite, test_canonical_fens_of_the_perft_positions_round_trip);
    CU_ADD_TEST(suite, test_canonical_form_of_sample_positions);
    CU_ADD_TEST(suite, test_four_field_fen_gets_counters_zero_and_one);
    CU_ADD_TEST(suite, test_counters_are_written_back_and_a_short_buffer_gets_a_prefix);
    CU_ADD_TEST(suite, test_leading_and_trailing_whitespace_is_accepted);
    CU_ADD_TEST(suite, test_parse_reads_only_length_bytes);
    CU_ADD_TEST(suite, test_fen_longer_than_the_input_limit_is_rejected);
    CU_ADD_TEST(suite, test_field_count_must_be_four_or_six);
    CU_ADD_TEST(suite, test_board_must_have_eight_ranks);
    CU_ADD_TEST(suite, test_each_rank_must_have_eight_squares);
    CU_ADD_TEST(suite, test_two_digits_in_a_row_are_rejected);
    CU_ADD_TEST(suite, test_unknown_piece_letter_is_rejected);
    CU_ADD_TEST(suite, test_side_to_move_must_be_w_or_b);
    CU_ADD_TEST(suite, test_castling_field_accepts_only_castling_letters);
    CU_ADD_TEST(suite, test_castling_right_given_twice_is_rejected);
    CU_ADD_TEST(suite, test_castling_right_needs_a_rook_on_its_square);
    CU_ADD_TEST(suite, test_castling_right_needs_the_king_on_its_first_rank);
    CU_ADD_TEST(suite, test_chess960_castling_right_needs_the_chess960_flag);
    CU_ADD_TEST(suite, test_xfen_and_shredder_fen_describe_the_same_chess960_position);
    CU_ADD_TEST(suite, test_en_passant_field_must_be_a_square);
    CU_ADD_TEST(suite, test_en_passant_square_must_be_on_the_capturing_rank);
    CU_ADD_TEST(suite, test_en_passant_square_needs_pawn_that_just_moved);
    CU_ADD_TEST(suite, test_en_passant_square_needs_empty_squares_behind_the_pawn);
    CU_ADD_TEST(suite, test_halfmove_clock_must_be_a_small_number);
    CU_ADD_TEST(suite, test_fullmove_number_must_be_a_positive_small_number);
    CU_ADD_TEST(suite, test_each_side_needs_exactly_one_king);
    CU_ADD_TEST(suite, test_pawns_cannot_stand_on_the_first_or_last_rank);
    CU_ADD_TEST(suite, test_a_side_has_at_most_sixteen_pieces_and_eight_pawns);
    CU_ADD_TEST(suite, test_side_not_to_move_cannot_be_in_check);
    CU_ADD_TEST(suite, test_more_than_two_checkers_are_rejected);
    CU_ADD_TEST(suite, test_double_check_from_both_sides_of_one_line_is_rejected);
    CU_ADD_TEST(suite, test_double_check_without_a_slider_is_rejected);
    CU_ADD_TEST(suite, test_possible_double_check_is_accepted);
    CU_ADD_TEST(suite, test_check_must_fit_the_double_push_named_by_the_en_passant_square);
    CU_ADD_TEST(suite, test_strict_parse_refuses_only_the_unreachable_perft_positions);
    CU_ADD_TEST(suite, test_message_is_terminated_and_truncated_to_its_buffer);
    CU_ADD_TEST(suite, test_error_codes_have_distinct_snake_case_names);
    CU_ADD_TEST(suite, test_formatted_fen_of_a_played_position_parses_back);
    return CU_get_error();
}
