/* Zobrist key tables, filled from splitmix64 with a fixed seed. */
#include "zobrist.h"

uint64_t zobrist_piece_square[16][SQ_COUNT];
uint64_t zobrist_castle_rook[SQ_COUNT];
uint64_t zobrist_en_passant_file[FILE_COUNT];
uint64_t zobrist_black_to_move;
uint64_t zobrist_variant[VARIANT_COUNT];
uint64_t zobrist_pocket[COLOR_COUNT][PIECE_TYPE_COUNT][ZOBRIST_POCKET_MAX];
uint64_t zobrist_checks[COLOR_COUNT][4];
uint64_t zobrist_gate[SQ_COUNT];
uint64_t zobrist_promoted[SQ_COUNT];

static uint64_t splitmix64(uint64_t *state)
{
    uint64_t z = (*state += 0x9E3779B97F4A7C15ULL);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
    return z ^ (z >> 31);
}

void zobrist_init(void)
{
    uint64_t state = 0x63686573736421ULL; /* "chessd!" */
    for (int p = 0; p < 16; p++)
        for (int sq = 0; sq < SQ_COUNT; sq++)
            zobrist_piece_square[p][sq] = splitmix64(&state);
    for (int sq = 0; sq < SQ_COUNT; sq++)
        zobrist_castle_rook[sq] = splitmix64(&state);
    for (int f = 0; f < FILE_COUNT; f++)
        zobrist_en_passant_file[f] = splitmix64(&state);
    zobrist_black_to_move = splitmix64(&state);
    zobrist_variant[VARIANT_STANDARD] = 0;
    for (int v = 1; v < VARIANT_COUNT; v++)
        zobrist_variant[v] = splitmix64(&state);
    for (int c = 0; c < COLOR_COUNT; c++)
        for (int t = 0; t < PIECE_TYPE_COUNT; t++) {
            zobrist_pocket[c][t][0] = 0;
            for (int n = 1; n < ZOBRIST_POCKET_MAX; n++)
                zobrist_pocket[c][t][n] = splitmix64(&state);
        }
    for (int c = 0; c < COLOR_COUNT; c++) {
        zobrist_checks[c][0] = 0;
        for (int n = 1; n < 4; n++)
            zobrist_checks[c][n] = splitmix64(&state);
    }
    for (int sq = 0; sq < SQ_COUNT; sq++)
        zobrist_gate[sq] = splitmix64(&state);
    for (int sq = 0; sq < SQ_COUNT; sq++)
        zobrist_promoted[sq] = splitmix64(&state);
}
