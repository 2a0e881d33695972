/* Attack tables and their construction. Magic multipliers are searched at
 * start-up with a fixed-seed generator, so the tables are identical on every
 * run; the search takes some tens of milliseconds. All tables are written only by
 * attacks_init(). */
#include "attacks.h"

attacks_magic_t attacks_rook_magic[SQ_COUNT];
attacks_magic_t attacks_bishop_magic[SQ_COUNT];
bitboard_t attacks_knight_table[SQ_COUNT];
bitboard_t attacks_king_table[SQ_COUNT];
bitboard_t attacks_pawn_table[COLOR_COUNT][SQ_COUNT];
bitboard_t attacks_between_table[SQ_COUNT][SQ_COUNT];
bitboard_t attacks_line_table[SQ_COUNT][SQ_COUNT];

static bitboard_t rook_attack_storage[0x19000];
static bitboard_t bishop_attack_storage[0x1480];

static const int rook_dirs[4][2] = { { 1, 0 }, { -1, 0 }, { 0, 1 }, { 0, -1 } };
static const int bishop_dirs[4][2] = { { 1, 1 }, { 1, -1 }, { -1, 1 }, { -1, -1 } };

static bool on_board(int file, int rank) { return file >= 0 && file < 8 && rank >= 0 && rank < 8; }

/* Slow ray walk used only to build the tables. */
static bitboard_t slide(const int dirs[4][2], int sq, bitboard_t occupied)
{
    bitboard_t result = 0;
    for (int d = 0; d < 4; d++) {
        int f = square_file(sq) + dirs[d][0], r = square_rank(sq) + dirs[d][1];
        while (on_board(f, r)) {
            int s = square_make(f, r);
            result |= bb_square(s);
            if (bb_has(occupied, s))
                break;
            f += dirs[d][0];
            r += dirs[d][1];
        }
    }
    return result;
}

static bitboard_t step_attacks(const int steps[][2], int count, int sq)
{
    bitboard_t result = 0;
    for (int i = 0; i < count; i++) {
        int f = square_file(sq) + steps[i][0], r = square_rank(sq) + steps[i][1];
        if (on_board(f, r))
            result |= bb_square(square_make(f, r));
    }
    return result;
}

/* xorshift64*: the fixed-seed generator for the magic search. */
static uint64_t next_random(uint64_t *state)
{
    *state ^= *state >> 12;
    *state ^= *state << 25;
    *state ^= *state >> 27;
    return *state * 2685821657736338717ULL;
}

static void init_magics(attacks_magic_t magics[SQ_COUNT], bitboard_t *storage, const int dirs[4][2])
{
    static bitboard_t occupancy[4096], reference[4096];
    static int epoch[4096];
    /* Per-rank seeds known to find magics in few tries (the same as Stockfish's). */
    static const uint64_t seeds[8] = { 728, 10316, 55013, 32803, 12281, 15100, 16645, 255 };
    static int attempt; /* shared with the epoch marks, so never reset */
    bitboard_t *next = storage;

    for (int sq = 0; sq < SQ_COUNT; sq++) {
        attacks_magic_t *m = &magics[sq];
        bitboard_t edges = ((BB_RANK_1 | BB_RANK_8) & ~bb_rank(square_rank(sq)))
                           | ((BB_FILE_A | BB_FILE_H) & ~bb_file(square_file(sq)));
        m->mask = slide(dirs, sq, 0) & ~edges;
        m->shift = 64 - (unsigned)bb_count(m->mask);
        m->table = next;
        /* Carry-Rippler enumeration of every subset of the mask. */
        int size = 0;
        bitboard_t b = 0;
        do {
            occupancy[size] = b;
            reference[size] = slide(dirs, sq, b);
            size++;
            b = (b - m->mask) & m->mask;
        } while (b);

        bitboard_t *table = next;
        uint64_t state = seeds[square_rank(sq)];
        for (int i = 0; i < size;) {
            do
                m->magic = next_random(&state) & next_random(&state) & next_random(&state);
            while (bb_count((m->magic * m->mask) >> 56) < 6);
            attempt++;
            for (i = 0; i < size; i++) {
                unsigned idx = (unsigned)((occupancy[i] * m->magic) >> m->shift);
                if (epoch[idx] < attempt) {
                    epoch[idx] = attempt;
                    table[idx] = reference[i];
                } else if (table[idx] != reference[i]) {
                    break;
                }
            }
        }
        next += size;
    }
}

void attacks_init(void)
{
    static const int knight_steps[8][2] = { { 1, 2 }, { 2, 1 }, { 2, -1 }, { 1, -2 },
                                            { -1, -2 }, { -2, -1 }, { -2, 1 }, { -1, 2 } };
    static const int king_steps[8][2] = { { 1, 0 }, { 1, 1 }, { 0, 1 }, { -1, 1 },
                                          { -1, 0 }, { -1, -1 }, { 0, -1 }, { 1, -1 } };
    static const int white_pawn_steps[2][2] = { { -1, 1 }, { 1, 1 } };
    static const int black_pawn_steps[2][2] = { { -1, -1 }, { 1, -1 } };

    for (int sq = 0; sq < SQ_COUNT; sq++) {
        attacks_knight_table[sq] = step_attacks(knight_steps, 8, sq);
        attacks_king_table[sq] = step_attacks(king_steps, 8, sq);
        attacks_pawn_table[WHITE][sq] = step_attacks(white_pawn_steps, 2, sq);
        attacks_pawn_table[BLACK][sq] = step_attacks(black_pawn_steps, 2, sq);
    }
    init_magics(attacks_rook_magic, rook_attack_storage, rook_dirs);
    init_magics(attacks_bishop_magic, bishop_attack_storage, bishop_dirs);

    for (int a = 0; a < SQ_COUNT; a++) {
        for (int b = 0; b < SQ_COUNT; b++) {
            attacks_between_table[a][b] = 0;
            attacks_line_table[a][b] = 0;
            if (a == b)
                continue;
            bitboard_t ab = bb_square(a) | bb_square(b);
            if (bb_has(attacks_rook(a, 0), b)) {
                attacks_line_table[a][b] = (attacks_rook(a, 0) & attacks_rook(b, 0)) | ab;
                attacks_between_table[a][b] = attacks_rook(a, ab) & attacks_rook(b, ab);
            } else if (bb_has(attacks_bishop(a, 0), b)) {
                attacks_line_table[a][b] = (attacks_bishop(a, 0) & attacks_bishop(b, 0)) | ab;
                attacks_between_table[a][b] = attacks_bishop(a, ab) & attacks_bishop(b, ab);
            }
        }
    }
}

bitboard_t attacks_of(piece_type_t type, int sq, bitboard_t occupied)
{
    switch (type) {
    case KNIGHT: return attacks_knight(sq);
    case BISHOP: return attacks_bishop(sq, occupied);
    case ROOK: return attacks_rook(sq, occupied);
    case QUEEN: return attacks_queen(sq, occupied);
    case KING: return attacks_king(sq);
    default: return 0;
    }
}
