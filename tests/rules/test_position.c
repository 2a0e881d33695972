/* Position suite: position_make()/position_unmake() are exact inverses and
 * keep every invariant, three plies deep from every perft data position.
 * The Zobrist key means "same position": transpositions agree with
 * fen_parse; side to move, castling rights and a legal en passant capture
 * (only a legal one) change it. The oracle of the attack tables is a ray
 * walk, for every occupancy that matters. */
#include <stdlib.h>
#include <string.h>

#include "../support/epd.h"
#include "../support/tests.h"
#include "../../rules/zobrist.h"

enum { WALK_PLIES = 3, CHESS960_LINES = 200, FAILURES_SHOWN = 5 };

/* Parses a FEN that must be valid; strict unless flags say otherwise. */
static position_t parse(const char *fen, unsigned flags)
{
    position_t pos;
    char message[256];
    fen_error_t err = fen_parse(fen, strlen(fen), flags, &pos, message, sizeof message);
    if (err != FEN_OK)
        fprintf(stderr, "\nFEN rejected: %s: %s\n", fen, message);
    CU_ASSERT_EQUAL_FATAL(err, FEN_OK);
    return pos;
}

static uint64_t key_of(const char *fen) { return parse(fen, 0).key; }

/* The legal move whose UCI text is uci, or MOVE_NONE. */
static move_t find_move(const position_t *pos, const char *uci)
{
    move_list_t list;
    movegen_legal(pos, &list);
    for (int i = 0; i < list.count; i++) {
        char text[UCI_BUFFER_SIZE];
        if (!strcmp(uci_format(pos, list.moves[i], text), uci))
            return list.moves[i];
    }
    return MOVE_NONE;
}

/* Plays space-separated UCI moves, each of which must be legal. */
static void play(position_t *pos, const char *moves)
{
    char copy[512];
    snprintf(copy, sizeof copy, "%s", moves);
    for (char *save, *uci = strtok_r(copy, " ", &save); uci; uci = strtok_r(NULL, " ", &save)) {
        move_t move = find_move(pos, uci);
        if (move == MOVE_NONE)
            fprintf(stderr, "\nmove %s is not legal here\n", uci);
        CU_ASSERT_FATAL(move != MOVE_NONE);
        position_undo_t undo;
        position_make(pos, move, &undo);
    }
}

static position_t after(const char *fen, const char *moves)
{
    position_t pos = parse(fen, 0);
    play(&pos, moves);
    return pos;
}

/* What the recursive walk saw, so the test can insist every kind of move
 * was made and report the first failures without flooding the output. */
typedef struct {
    long made;
    long kinds[4];
    long captures;
    int failures;
    const char *fen;
} walk_t;

static void walk_fail(walk_t *walk, const position_t *pos, move_t move, const char *what)
{
    if (walk->failures++ < FAILURES_SHOWN) {
        char uci[UCI_BUFFER_SIZE], fen[FEN_BUFFER_SIZE];
        fprintf(stderr, "\n%s: move %s in %s (root %s)\n", what, uci_format(pos, move, uci),
                fen_format(pos, fen, sizeof fen), walk->fen);
    }
}

/* Every remaining castling right has its rook on the first rank, on its side
 * of a king that has not left that rank. */
static bool castling_rights_consistent(const position_t *pos)
{
    for (int i = 0; i < CASTLE_RIGHT_COUNT; i++) {
        int rook = pos->castle_rook[i];
        if (rook == SQ_NONE)
            continue;
        color_t c = (color_t)(i / 2);
        int king = pos->king_square[c], first_rank = c == WHITE ? 0 : 7;
        bool king_side = i % 2 == CASTLE_KING_SIDE;
        if (pos->board[rook] != piece_make(c, ROOK) || square_rank(rook) != first_rank
            || square_rank(king) != first_rank || (square_file(rook) > square_file(king)) != king_side)
            return false;
    }
    return true;
}

/* Makes every legal move of pos, checks the position after it, recurses
 * plies - 1 deeper, unmakes, and checks the bytes came back. */
static void walk(position_t *pos, int plies, walk_t *walk_state)
{
    move_list_t list;
    movegen_legal(pos, &list);
    for (int i = 0; i < list.count; i++) {
        move_t move = list.moves[i];
        int kind = move_kind(move);
        color_t us = (color_t)pos->side_to_move;
        bool capture = kind == MOVE_EN_PASSANT
                       || (kind != MOVE_CASTLING && pos->board[move_to(move)] != NO_PIECE);
        bool pawn = piece_type(pos->board[move_from(move)]) == PAWN;
        position_t before;
        memcpy(&before, pos, sizeof before);
        position_undo_t undo;
        position_make(pos, move, &undo);
        walk_state->made++;
        walk_state->kinds[kind]++;
        walk_state->captures += capture;

        if (!position_ok(pos))
            walk_fail(walk_state, &before, move, "position_ok fails after make");
        if (pos->key != position_compute_key(pos))
            walk_fail(walk_state, &before, move, "incremental key differs from computed key");
        if (pos->side_to_move != (uint8_t)!us)
            walk_fail(walk_state, &before, move, "side to move not switched");
        if (position_attacked_by(pos, pos->king_square[us], (color_t)!us, position_occupied(pos)))
            walk_fail(walk_state, &before, move, "mover's king left in check");
        if (pos->en_passant != SQ_NONE && !position_any_en_passant_legal(pos, pos->en_passant))
            walk_fail(walk_state, &before, move, "en passant square kept without a legal capture");
        if (!castling_rights_consistent(pos))
            walk_fail(walk_state, &before, move, "castling right kept without its king and rook at home");
        if (pos->halfmove_clock != (capture || pawn ? 0 : before.halfmove_clock + 1))
            walk_fail(walk_state, &before, move, "halfmove clock not reset or advanced");
        if (pos->fullmove_number != before.fullmove_number + (us == BLACK))
            walk_fail(walk_state, &before, move, "fullmove number wrong");

        if (plies > 1)
            walk(pos, plies - 1, walk_state);
        position_unmake(pos, move, &undo);
        if (memcmp(&before, pos, sizeof before) != 0)
            walk_fail(walk_state, &before, move, "unmake does not restore every byte");
    }
}

/* Walks the first max_lines lines of a data file; adds to *total. Standard
 * files go through tests_parse_fen (Chess960 castling when needed). */
static void walk_file(const char *name, bool chess960, int max_lines, walk_t *total)
{
    epd_reader_t reader;
    epd_entry_t entry;
    int lines = 0;
    if (!epd_open(&reader, name))
        return;
    while (lines < max_lines && epd_next(&reader, &entry)) {
        position_t pos;
        if (chess960) {
            pos = parse(entry.fen, FEN_CHESS960);
        } else if (!tests_parse_fen(entry.fen, &pos)) {
            continue;
        }
        walk_t one = { .fen = entry.fen };
        walk(&pos, WALK_PLIES, &one);
        CU_ASSERT_EQUAL(one.failures, 0);
        total->made += one.made;
        total->captures += one.captures;
        for (int k = 0; k < 4; k++)
            total->kinds[k] += one.kinds[k];
        lines++;
    }
    epd_close(&reader);
    CU_ASSERT(lines > 0);
}

static void test_make_unmake_restores_every_byte_and_keeps_invariants(void)
{
    walk_t total = { 0 };
    walk_file("standard.epd", false, INT32_MAX, &total);
    walk_file("tricky.epd", false, INT32_MAX, &total);
    walk_file("chess960.epd", true, CHESS960_LINES, &total);
    /* The walk must have exercised every kind of move. */
    CU_ASSERT(total.kinds[MOVE_NORMAL] > 0);
    CU_ASSERT(total.kinds[MOVE_PROMOTION] > 0);
    CU_ASSERT(total.kinds[MOVE_EN_PASSANT] > 0);
    CU_ASSERT(total.kinds[MOVE_CASTLING] > 0);
    CU_ASSERT(total.captures > 0);
}

static void test_make_advances_and_resets_move_counters(void)
{
    position_t pos = after(FEN_START, "g1f3");
    CU_ASSERT_EQUAL(pos.halfmove_clock, 1);
    CU_ASSERT_EQUAL(pos.fullmove_number, 1);
    play(&pos, "g8f6");
    CU_ASSERT_EQUAL(pos.halfmove_clock, 2);
    CU_ASSERT_EQUAL(pos.fullmove_number, 2);
    play(&pos, "e2e4");
    CU_ASSERT_EQUAL(pos.halfmove_clock, 0);
    play(&pos, "b8c6 f1c4 f6e4");
    CU_ASSERT_EQUAL(pos.halfmove_clock, 0); /* a knight capture resets it too */
    CU_ASSERT_EQUAL(pos.fullmove_number, 4);
}

/* 1.Nf3 Nf6 2.Nc3 Nc6 and 1.Nc3 Nc6 2.Nf3 Nf6 reach the position of this
 * FEN, counters included, so all three are the same bytes. */
static void test_transposed_move_orders_reach_the_same_key(void)
{
    position_t a = after(FEN_START, "g1f3 g8f6 b1c3 b8c6");
    position_t b = after(FEN_START, "b1c3 b8c6 g1f3 g8f6");
    position_t parsed = parse("r1bqkb1r/pppppppp/2n2n2/8/8/2N2N2/PPPPPPPP/R1BQKB1R w KQkq - 4 3", 0);
    CU_ASSERT_EQUAL(a.key, b.key);
    CU_ASSERT_EQUAL(a.key, parsed.key);
    CU_ASSERT(memcmp(&a, &parsed, sizeof a) == 0);
    CU_ASSERT(memcmp(&b, &parsed, sizeof b) == 0);
    /* Knights out and back: the start position again, keyed as at the start. */
    position_t back = after(FEN_START, "g1f3 g8f6 f3g1 f6g8");
    CU_ASSERT_EQUAL(back.key, key_of(FEN_START));
    CU_ASSERT_NOT_EQUAL(a.key, key_of(FEN_START));
}

static void test_side_to_move_changes_the_key(void)
{
    CU_ASSERT_NOT_EQUAL(key_of("rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1"),
                        key_of("rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR b KQkq - 0 1"));
    CU_ASSERT_NOT_EQUAL(key_of("4k3/8/8/8/8/8/8/4K2R w K - 0 1"), key_of("4k3/8/8/8/8/8/8/4K2R b K - 0 1"));
}

static void test_castling_rights_change_the_key(void)
{
    static const char *const rights[] = { "KQkq", "KQk", "KQq", "Kkq", "Qkq", "KQ", "kq", "K", "q", "-" };
    enum { N = sizeof rights / sizeof rights[0] };
    uint64_t keys[N];
    for (int i = 0; i < N; i++) {
        char fen[FEN_BUFFER_SIZE];
        snprintf(fen, sizeof fen, "r3k2r/pppppppp/8/8/8/8/PPPPPPPP/R3K2R w %s - 0 1", rights[i]);
        keys[i] = key_of(fen);
    }
    for (int i = 0; i < N; i++)
        for (int j = i + 1; j < N; j++)
            CU_ASSERT_NOT_EQUAL(keys[i], keys[j]);

    /* Rooks out and back lose the king-side rights but nothing else. */
    position_t danced = after(FEN_START, "g1f3 g8f6 h1g1 h8g8 g1h1 g8h8");
    position_t parsed = parse("rnbqkb1r/pppppppp/5n2/8/8/5N2/PPPPPPPP/RNBQKB1R w Qq - 6 4", 0);
    CU_ASSERT(memcmp(&danced, &parsed, sizeof danced) == 0);
    CU_ASSERT_NOT_EQUAL(danced.key, key_of("rnbqkb1r/pppppppp/5n2/8/8/5N2/PPPPPPPP/RNBQKB1R w KQkq - 6 4"));
    CU_ASSERT_EQUAL(danced.key, key_of("rnbqkb1r/pppppppp/5n2/8/8/5N2/PPPPPPPP/RNBQKB1R w Qq - 0 1"));
}

/* In Chess960 the right is tied to one rook: with rooks on f1 and h1 and the
 * king on e1, a right with the f1 rook is another position than with h1. */
static void test_chess960_castling_right_keys_name_the_rook(void)
{
    position_t outer = parse("4k3/8/8/8/8/8/8/4KR1R w H - 0 1", FEN_CHESS960);
    position_t inner = parse("4k3/8/8/8/8/8/8/4KR1R w F - 0 1", FEN_CHESS960);
    position_t none = parse("4k3/8/8/8/8/8/8/4KR1R w - - 0 1", FEN_CHESS960);
    CU_ASSERT_NOT_EQUAL(outer.key, inner.key);
    CU_ASSERT_NOT_EQUAL(outer.key, none.key);
    CU_ASSERT_NOT_EQUAL(inner.key, none.key);
}

/* After 1.e4 no black pawn can take on e3: the key is that of the FEN with
 * '-', and a FEN naming e3 is read as the same position. */
static void test_en_passant_square_without_a_capturer_leaves_the_key_alone(void)
{
    position_t played = after(FEN_START, "e2e4");
    position_t dash = parse("rnbqkbnr/pppppppp/8/8/4P3/8/PPPP1PPP/RNBQKBNR b KQkq - 0 1", 0);
    position_t named = parse("rnbqkbnr/pppppppp/8/8/4P3/8/PPPP1PPP/RNBQKBNR b KQkq e3 0 1", 0);
    CU_ASSERT_EQUAL(played.en_passant, SQ_NONE);
    CU_ASSERT_EQUAL(played.key, dash.key);
    CU_ASSERT_EQUAL(named.key, dash.key);
    CU_ASSERT(memcmp(&played, &dash, sizeof played) == 0);
}

/* 1.e4 Nf6 2.e5 d5: exd6 is legal, so d6 is part of the position. */
static void test_legal_en_passant_capture_changes_the_key(void)
{
    position_t played = after(FEN_START, "e2e4 g8f6 e4e5 d7d5");
    position_t named = parse("rnbqkb1r/ppp1pppp/5n2/3pP3/8/8/PPPP1PPP/RNBQKBNR w KQkq d6 0 3", 0);
    position_t dash = parse("rnbqkb1r/ppp1pppp/5n2/3pP3/8/8/PPPP1PPP/RNBQKBNR w KQkq - 0 3", 0);
    CU_ASSERT_EQUAL(played.en_passant, square_make(3, 5));
    CU_ASSERT_EQUAL(played.key, named.key);
    CU_ASSERT_NOT_EQUAL(played.key, dash.key);
    CU_ASSERT(memcmp(&played, &named, sizeof played) == 0);
    CU_ASSERT_NOT_EQUAL(find_move(&played, "e5d6"), MOVE_NONE);

    /* The same push with a free black pawn on b4: c2-c4 allows bxc3. */
    position_t free_pawn = after("8/8/8/8/kp6/8/2P5/4K3 w - - 0 1", "c2c4");
    CU_ASSERT_EQUAL(free_pawn.en_passant, square_make(2, 2));
    CU_ASSERT_NOT_EQUAL(free_pawn.key, key_of("8/8/8/8/kpP5/8/8/4K3 b - - 0 1"));
    CU_ASSERT_EQUAL(free_pawn.key, key_of("8/8/8/8/kpP5/8/8/4K3 b - c3 0 1"));
}

/* An en passant capture that would expose the king is no capture at all: the
 * key and the FEN are those of the position without the square. */
static void test_en_passant_square_with_only_a_pinned_capturer_leaves_the_key_alone(void)
{
    /* Along the rank: bxc3 would take b4 and c4 off the a4-h4 line. */
    position_t rank_pin = after("8/8/8/8/kp5R/8/2P5/4K3 w - - 0 1", "c2c4");
    CU_ASSERT_EQUAL(rank_pin.en_passant, SQ_NONE);
    CU_ASSERT_EQUAL(rank_pin.key, key_of("8/8/8/8/kpP4R/8/8/4K3 b - - 0 1"));
    CU_ASSERT_EQUAL(rank_pin.key, key_of("8/8/8/8/kpP4R/8/8/4K3 b - c3 0 1"));

    /* Along a diagonal: d4 is pinned by Bb2 against Kf6 and dxe3 leaves the line. */
    position_t diagonal_pin = after("8/8/5k2/8/3p4/8/1B2P3/4K3 w - - 0 1", "e2e4");
    CU_ASSERT_EQUAL(diagonal_pin.en_passant, SQ_NONE);
    CU_ASSERT_EQUAL(diagonal_pin.key, key_of("8/8/5k2/8/3pP3/8/1B6/4K3 b - - 0 1"));
    CU_ASSERT_EQUAL(diagonal_pin.key, key_of("8/8/5k2/8/3pP3/8/1B6/4K3 b - e3 0 1"));
    CU_ASSERT_EQUAL(find_move(&diagonal_pin, "d4e3"), MOVE_NONE);
}

/* Keys come from a fixed seed: rebuilding the tables gives the same keys,
 * and no two table entries collide (or are zero). */
static void test_zobrist_keys_are_reproducible_and_distinct(void)
{
    static const char *const fens[] = {
        FEN_START,
        "r3k2r/p1ppqpb1/bn2pnp1/3PN3/1p2P3/2N2Q1p/PPPBBPPP/R3K2R w KQkq - 0 1",
        "rnbqkb1r/ppp1pppp/5n2/3pP3/8/8/PPPP1PPP/RNBQKBNR w KQkq d6 0 3",
    };
    enum { N = sizeof fens / sizeof fens[0] };
    uint64_t keys[N];
    for (int i = 0; i < N; i++)
        keys[i] = key_of(fens[i]);
    zobrist_init();
    for (int i = 0; i < N; i++)
        CU_ASSERT_EQUAL(key_of(fens[i]), keys[i]);

    enum { MAX = COLOR_COUNT * PIECE_TYPE_COUNT * SQ_COUNT + SQ_COUNT + FILE_COUNT + 1 };
    uint64_t *all = malloc(MAX * sizeof *all);
    CU_ASSERT_PTR_NOT_NULL_FATAL(all);
    int n = 0;
    for (int c = 0; c < COLOR_COUNT; c++)
        for (int t = 0; t < PIECE_TYPE_COUNT; t++)
            for (int sq = 0; sq < SQ_COUNT; sq++)
                all[n++] = zobrist_piece_square[piece_make((color_t)c, (piece_type_t)t)][sq];
    for (int sq = 0; sq < SQ_COUNT; sq++)
        all[n++] = zobrist_castle_rook[sq];
    for (int f = 0; f < FILE_COUNT; f++)
        all[n++] = zobrist_en_passant_file[f];
    all[n++] = zobrist_black_to_move;
    int duplicates = 0, zeros = 0;
    for (int i = 0; i < n; i++) {
        zeros += all[i] == 0;
        for (int j = i + 1; j < n; j++)
            duplicates += all[i] == all[j];
    }
    free(all);
    CU_ASSERT_EQUAL(n, MAX);
    CU_ASSERT_EQUAL(zeros, 0);
    CU_ASSERT_EQUAL(duplicates, 0);
}

/* position_ok is the invariant the walk relies on: it must notice damage. */
static void test_position_ok_notices_inconsistent_positions(void)
{
    position_t good = parse(FEN_START, 0);
    CU_ASSERT(position_ok(&good));

    position_t bad_key = good;
    bad_key.key ^= 1;
    CU_ASSERT(!position_ok(&bad_key));

    position_t bad_board = good;
    bad_board.board[square_make(4, 3)] = piece_make(WHITE, QUEEN); /* e4, not in the bitboards */
    CU_ASSERT(!position_ok(&bad_board));

    position_t bad_king = good;
    bad_king.king_square[BLACK] = (square_t)square_make(3, 7);
    CU_ASSERT(!position_ok(&bad_king));
}

/* types.h's one table of names: the API's colour values and the capitalised
 * forms sentences start with, and the piece letters FEN, UCI and SAN share. */
static void test_color_names_and_piece_letters_come_from_one_table(void)
{
    CU_ASSERT_STRING_EQUAL(color_name(WHITE), "white");
    CU_ASSERT_STRING_EQUAL(color_name(BLACK), "black");
    CU_ASSERT_STRING_EQUAL(color_title(WHITE), "White");
    CU_ASSERT_STRING_EQUAL(color_title(BLACK), "Black");
    CU_ASSERT_EQUAL(piece_letter(piece_make(WHITE, KNIGHT)), 'N');
    CU_ASSERT_EQUAL(piece_letter(piece_make(BLACK, KNIGHT)), 'n');
    CU_ASSERT_EQUAL(piece_type_capital(KING), 'K');
    CU_ASSERT_EQUAL(piece_type_letter(QUEEN), 'q');
}

/* The squares a slider on sq reaches along dirs, stopping at the first
 * occupied square: the reference for the magic tables. */
static bitboard_t ray_walk(int sq, bitboard_t occupied, const int dirs[4][2])
{
    bitboard_t result = 0;
    for (int d = 0; d < 4; d++) {
        for (int f = square_file(sq) + dirs[d][0], r = square_rank(sq) + dirs[d][1];
             f >= 0 && f < 8 && r >= 0 && r < 8; f += dirs[d][0], r += dirs[d][1]) {
            result |= bb_square(square_make(f, r));
            if (bb_has(occupied, square_make(f, r)))
                break;
        }
    }
    return result;
}

/* Every subset of every square's mask, each with pieces added outside the
 * mask (which must not matter), looks up what a ray walk finds. */
static void test_sliding_attacks_agree_with_a_ray_walk_for_every_occupancy(void)
{
    static const int rook_dirs[4][2] = { { 1, 0 }, { -1, 0 }, { 0, 1 }, { 0, -1 } };
    static const int bishop_dirs[4][2] = { { 1, 1 }, { 1, -1 }, { -1, 1 }, { -1, -1 } };
    uint64_t state = 0x2545f4914f6cdd1dULL;
    long checked = 0, wrong = 0;
    for (int kind = 0; kind < 2; kind++) {
        const attacks_magic_t *magics = kind ? attacks_bishop_magic : attacks_rook_magic;
        const int(*dirs)[2] = kind ? bishop_dirs : rook_dirs;
        for (int sq = 0; sq < SQ_COUNT; sq++) {
            bitboard_t mask = magics[sq].mask;
            CU_ASSERT_EQUAL(mask & bb_square(sq), 0);
            bitboard_t b = 0;
            do {
                state ^= state << 13, state ^= state >> 7, state ^= state << 17;
                bitboard_t outside = state & ~mask & ~bb_square(sq);
                bitboard_t want = ray_walk(sq, b, dirs);
                bitboard_t got = kind ? attacks_bishop(sq, b) : attacks_rook(sq, b);
                bitboard_t got_outside = kind ? attacks_bishop(sq, b | outside) : attacks_rook(sq, b | outside);
                wrong += got != want;
                wrong += got_outside != ray_walk(sq, b | outside, dirs);
                checked++;
                b = (b - mask) & mask;
            } while (b);
        }
    }
    CU_ASSERT_EQUAL(wrong, 0);
    CU_ASSERT_EQUAL(checked, 0x19000 + 0x1480); /* every slot of the tables */
}

int test_position_register(void)
{
    CU_pSuite suite = CU_add_suite("position", NULL, NULL);
    if (!suite)
        return CU_get_error();
    CU_ADD_TEST(suite, test_make_unmake_restores_every_byte_and_keeps_invariants);
    CU_ADD_TEST(suite, test_make_advances_and_resets_move_counters);
    CU_ADD_TEST(suite, test_transposed_move_orders_reach_the_same_key);
    CU_ADD_TEST(suite, test_side_to_move_changes_the_key);
    CU_ADD_TEST(suite, test_castling_rights_change_the_key);
    CU_ADD_TEST(suite, test_chess960_castling_right_keys_name_the_rook);
    CU_ADD_TEST(suite, test_en_passant_square_without_a_capturer_leaves_the_key_alone);
    CU_ADD_TEST(suite, test_legal_en_passant_capture_changes_the_key);
    CU_ADD_TEST(suite, test_en_passant_square_with_only_a_pinned_capturer_leaves_the_key_alone);
    CU_ADD_TEST(suite, test_zobrist_keys_are_reproducible_and_distinct);
    CU_ADD_TEST(suite, test_position_ok_notices_inconsistent_positions);
    CU_ADD_TEST(suite, test_color_names_and_piece_letters_come_from_one_table);
    CU_ADD_TEST(suite, test_sliding_attacks_agree_with_a_ray_walk_for_every_occupancy);
    return CU_get_error();
}
