/* Chess960 start positions by Scharnagl number, and the number of a start
 * (chess960.h). The start is built as a FEN and read by fen_parse(), so it
 * gets the same key, rights and invariants as any position a client sends. */
#include "chess960.h"

#include <stdio.h>

#include "fen.h"

/* The ten ways to put two knights on five free squares, in Scharnagl's order. */
static const uint8_t knight_pairs[10][2] = {
    { 0, 1 }, { 0, 2 }, { 0, 3 }, { 0, 4 }, { 1, 2 }, { 1, 3 }, { 1, 4 }, { 2, 3 }, { 2, 4 }, { 3, 4 },
};

/* Puts piece on the index-th still empty file of rank (0-based). */
static int place_on_free(piece_type_t rank[FILE_COUNT], int index, piece_type_t piece)
{
    for (int file = 0; file < FILE_COUNT; file++) {
        if (rank[file] != NO_PIECE_TYPE)
            continue;
        if (index-- == 0) {
            rank[file] = piece;
            return file;
        }
    }
    return -1;
}

bool chess960_back_rank(int number, piece_type_t rank[FILE_COUNT])
{
    if (number < 0 || number >= CHESS960_COUNT)
        return false;
    piece_type_t out[FILE_COUNT];
    for (int file = 0; file < FILE_COUNT; file++)
        out[file] = NO_PIECE_TYPE;
    out[2 * (number % 4) + 1] = BISHOP; /* light squares of the first rank: b, d, f, h */
    number /= 4;
    out[2 * (number % 4)] = BISHOP;     /* dark squares: a, c, e, g */
    number /= 4;
    (void)place_on_free(out, number % 6, QUEEN);
    number /= 6;
    /* Knights on the pair's free squares: the second index counts after the first knight is down. */
    (void)place_on_free(out, knight_pairs[number][0], KNIGHT);
    (void)place_on_free(out, knight_pairs[number][1] - 1, KNIGHT);
    (void)place_on_free(out, 0, ROOK);
    (void)place_on_free(out, 0, KING);
    (void)place_on_free(out, 0, ROOK);
    for (int file = 0; file < FILE_COUNT; file++)
        rank[file] = out[file];
    return true;
}

bool chess960_start(int number, position_t *pos)
{
    piece_type_t rank[FILE_COUNT];
    if (!chess960_back_rank(number, rank))
        return false;
    char black[FILE_COUNT + 1], white[FILE_COUNT + 1], rights[5];
    int rooks = 0;
    for (int file = 0; file < FILE_COUNT; file++) {
        black[file] = piece_type_letter(rank[file]);
        white[file] = piece_type_capital(rank[file]);
        if (rank[file] == ROOK) /* Shredder-FEN rights: the rooks' files, white's then black's */
            rights[rooks++] = (char)('A' + file);
    }
    black[FILE_COUNT] = white[FILE_COUNT] = '\0';
    rights[2] = (char)(rights[0] - 'A' + 'a');
    rights[3] = (char)(rights[1] - 'A' + 'a');
    rights[4] = '\0';
    char fen[FEN_BUFFER_SIZE], message[8];
    int length = snprintf(fen, sizeof fen, "%s/pppppppp/8/8/8/8/PPPPPPPP/%s w %s - 0 1", black, white, rights);
    position_t start;
    if (fen_parse(fen, (size_t)length, FEN_CHESS960, &start, message, sizeof message) != FEN_OK)
        return false; /* cannot happen: every start is a valid position */
    *pos = start;
    return true;
}

/* The Scharnagl number of a first rank, or -1 when it is not one of the 960. */
static int rank_number(const piece_type_t rank[FILE_COUNT])
{
    int light = -1, dark = -1, queen = -1, knights[2] = { -1, -1 }, free_index = 0, knight_count = 0;
    for (int file = 0; file < FILE_COUNT; file++) {
        if (rank[file] == BISHOP)
            *(file % 2 ? &light : &dark) = file / 2;
    }
    for (int file = 0; file < FILE_COUNT; file++) {
        if (rank[file] == BISHOP)
            continue;
        if (rank[file] == QUEEN)
            queen = free_index;
        free_index++;
    }
    free_index = 0;
    for (int file = 0; file < FILE_COUNT; file++) {
        if (rank[file] == BISHOP || rank[file] == QUEEN)
            continue;
        if (rank[file] == KNIGHT && knight_count < 2)
            knights[knight_count++] = free_index;
        free_index++;
    }
    if (light < 0 || dark < 0 || queen < 0 || knight_count != 2)
        return -1;
    int pair = 0;
    while (pair < 10 && (knight_pairs[pair][0] != knights[0] || knight_pairs[pair][1] != knights[1]))
        pair++;
    if (pair == 10)
        return -1;
    int number = ((pair * 6 + queen) * 4 + dark) * 4 + light;
    /* The digits fit many ranks (two queens, a king outside its rooks...): only the one they build counts. */
    piece_type_t built[FILE_COUNT];
    (void)chess960_back_rank(number, built);
    for (int file = 0; file < FILE_COUNT; file++)
        if (built[file] != rank[file])
            return -1;
    return number;
}

int chess960_number(const position_t *pos)
{
    if (pos->side_to_move != WHITE || pos->en_passant != SQ_NONE || pos->halfmove_clock != 0
        || pos->fullmove_number != 1)
        return -1;
    piece_type_t rank[FILE_COUNT];
    for (int file = 0; file < FILE_COUNT; file++) {
        piece_t piece = pos->board[square_make(file, 0)];
        if (piece == NO_PIECE || piece_color(piece) != WHITE || piece_type(piece) == PAWN)
            return -1;
        rank[file] = piece_type(piece);
    }
    int number = rank_number(rank);
    if (number < 0)
        return -1;
    position_t start;
    (void)chess960_start(number, &start);
    /* The whole board and every castling right, as the start has them. */
    for (int sq = 0; sq < SQ_COUNT; sq++)
        if (pos->board[sq] != start.board[sq])
            return -1;
    for (int right = 0; right < CASTLE_RIGHT_COUNT; right++)
        if (pos->castle_rook[right] != start.castle_rook[right])
            return -1;
    return number;
}
