/* Attack tables and their construction: sliding attacks by magic
 * bitboards with fixed multipliers, filled by a ray walk at start-up (under
 * a millisecond). All tables are written only by attacks_init(). */
#include "attacks.h"

attacks_magic_t attacks_rook_magic[SQ_COUNT];
attacks_magic_t attacks_bishop_magic[SQ_COUNT];
bitboard_t attacks_knight_table[SQ_COUNT];
bitboard_t attacks_king_table[SQ_COUNT];
bitboard_t attacks_pawn_table[COLOR_COUNT][SQ_COUNT];
bitboard_t attacks_between_table[SQ_COUNT][SQ_COUNT];
bitboard_t attacks_line_table[SQ_COUNT][SQ_COUNT];
bitboard_t attacks_bishop_empty_table[SQ_COUNT];
bitboard_t attacks_rook_empty_table[SQ_COUNT];

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

/* The multipliers, one per square, found once by a search with a fixed-seed
 * xorshift64* generator (per-rank seeds 728, 10316, 55013, 32803, 12281,
 * 15100, 16645, 255) for the masks below: with them every occupancy of a
 * square's mask indexes a slot holding its attacks, with no two occupancies
 * of different attacks on one slot (tests/rules/test_position.c checks every
 * one against a ray walk). Fixed, they cost nothing at start-up. */
static const uint64_t rook_magics[SQ_COUNT] = {
    0x0a80004000801220ULL, 0x8040004010002008ULL, 0x2080200010008008ULL,
    0x1100100008210004ULL, 0xc200209084020008ULL, 0x2100010004000208ULL,
    0x0400081000822421ULL, 0x0200010422048844ULL, 0x0800800080400024ULL,
    0x0001402000401000ULL, 0x3000801000802001ULL, 0x4400800800100083ULL,
    0x0904802402480080ULL, 0x4040800400020080ULL, 0x0018808042000100ULL,
    0x4040800080004100ULL, 0x0040048001458024ULL, 0x00a0004000205000ULL,
    0x3100808010002000ULL, 0x4825010010000820ULL, 0x5004808008000401ULL,
    0x2024818004000a00ULL, 0x0005808002000100ULL, 0x2100060004806104ULL,
    0x0080400880008421ULL, 0x4062220600410280ULL, 0x010a004a00108022ULL,
    0x0000100080080080ULL, 0x0021000500080010ULL, 0x0044000202001008ULL,
    0x0000100400080102ULL, 0xc020128200040545ULL, 0x0080002000400040ULL,
    0x0000804000802004ULL, 0x0000120022004080ULL, 0x010a386103001001ULL,
    0x9010080080800400ULL, 0x8440020080800400ULL, 0x0004228824001001ULL,
    0x000000490a000084ULL, 0x0080002000504000ULL, 0x200020005000c000ULL,
    0x0012088020420010ULL, 0x0010010080080800ULL, 0x0085001008010004ULL,
    0x0002000204008080ULL, 0x0040413002040008ULL, 0x0000304081020004ULL,
    0x0080204000800080ULL, 0x3008804000290100ULL, 0x1010100080200080ULL,
    0x2008100208028080ULL, 0x5000850800910100ULL, 0x8402019004680200ULL,
    0x0120911028020400ULL, 0x0000008044010200ULL, 0x0020850200244012ULL,
    0x0020850200244012ULL, 0x0000102001040841ULL, 0x140900040a100021ULL,
    0x000200282410a102ULL, 0x000200282410a102ULL, 0x000200282410a102ULL,
    0x4048240043802106ULL,
};
static const uint64_t bishop_magics[SQ_COUNT] = {
    0x40106000a1160020ULL, 0x0020010250810120ULL, 0x2010010220280081ULL,
    0x002806004050c040ULL, 0x0002021018000000ULL, 0x2001112010000400ULL,
    0x0881010120218080ULL, 0x1030820110010500ULL, 0x0000120222042400ULL,
    0x2000020404040044ULL, 0x8000480094208000ULL, 0x0003422a02000001ULL,
    0x000a220210100040ULL, 0x8004820202226000ULL, 0x0018234854100800ULL,
    0x0100004042101040ULL, 0x0004001004082820ULL, 0x0010000810010048ULL,
    0x1014004208081300ULL, 0x2080818802044202ULL, 0x0040880c00a00100ULL,
    0x0080400200522010ULL, 0x0001000188180b04ULL, 0x0080249202020204ULL,
    0x1004400004100410ULL, 0x00013100a0022206ULL, 0x2148500001040080ULL,
    0x4241080011004300ULL, 0x4020848004002000ULL, 0x10101380d1004100ULL,
    0x0008004422020284ULL, 0x01010a1041008080ULL, 0x0808080400082121ULL,
    0x0808080400082121ULL, 0x0091128200100c00ULL, 0x0202200802010104ULL,
    0x8c0a020200440085ULL, 0x01a0008080b10040ULL, 0x0889520080122800ULL,
    0x100902022202010aULL, 0x04081a0816002000ULL, 0x0000681208005000ULL,
    0x8170840041008802ULL, 0x0a00004200810805ULL, 0x0830404408210100ULL,
    0x2602208106006102ULL, 0x1048300680802628ULL, 0x2602208106006102ULL,
    0x0602010120110040ULL, 0x0941010801043000ULL, 0x000040440a210428ULL,
    0x0008240020880021ULL, 0x0400002012048200ULL, 0x00ac102001210220ULL,
    0x0220021002009900ULL, 0x84440c080a013080ULL, 0x0001008044200440ULL,
    0x0004c04410841000ULL, 0x2000500104011130ULL, 0x1a0c010011c20229ULL,
    0x0044800112202200ULL, 0x0434804908100424ULL, 0x0300404822c08200ULL,
    0x48081010008a2a80ULL,
};

static void init_magics(attacks_magic_t magics[SQ_COUNT], const uint64_t multipliers[SQ_COUNT], bitboard_t *storage,
                        const int dirs[4][2])
{
    bitboard_t *next = storage;
    for (int sq = 0; sq < SQ_COUNT; sq++) {
        attacks_magic_t *m = &magics[sq];
        bitboard_t edges = ((BB_RANK_1 | BB_RANK_8) & ~bb_rank(square_rank(sq)))
                           | ((BB_FILE_A | BB_FILE_H) & ~bb_file(square_file(sq)));
        m->mask = slide(dirs, sq, 0) & ~edges;
        m->shift = 64 - (unsigned)bb_count(m->mask);
        m->magic = multipliers[sq];
        m->table = next;
        /* Carry-Rippler enumeration of every subset of the mask. */
        int size = 0;
        bitboard_t b = 0;
        do {
            next[(b * m->magic) >> m->shift] = slide(dirs, sq, b);
            size++;
            b = (b - m->mask) & m->mask;
        } while (b);
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
    init_magics(attacks_rook_magic, rook_magics, rook_attack_storage, rook_dirs);
    init_magics(attacks_bishop_magic, bishop_magics, bishop_attack_storage, bishop_dirs);

    for (int a = 0; a < SQ_COUNT; a++) {
        attacks_bishop_empty_table[a] = attacks_bishop(a, 0);
        attacks_rook_empty_table[a] = attacks_rook(a, 0);
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
    case HAWK: return attacks_bishop(sq, occupied) | attacks_knight(sq);
    case ELEPHANT: return attacks_rook(sq, occupied) | attacks_knight(sq);
    default: return 0;
    }
}
