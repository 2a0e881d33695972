/* The table of variants (names, starts, what each adds) and their hooks
 * for how a game ends: each variant's own end and its insufficient
 * material, as scalachess and chessops have them for Lichess's variants
 * and Fairy-Stockfish for S-chess. Moves are in variant_moves.c. */
#include "variant.h"

#include "fen.h"

static const variant_rules_t table[VARIANT_COUNT] = {
    [VARIANT_STANDARD] = { "standard", "Standard", "chess", FEN_START, 0 },
    [VARIANT_CRAZYHOUSE] = { "crazyhouse", "Crazyhouse", "crazyhouse",
                             "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR[] w KQkq - 0 1",
                             VARIANT_HAS_POCKETS | VARIANT_NO_FIFTY_MOVES },
    [VARIANT_ATOMIC] = { "atomic", "Atomic", "atomic", FEN_START, 0 },
    [VARIANT_ANTICHESS] = { "antichess", "Antichess", "antichess",
                            "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w - - 0 1", VARIANT_NO_CASTLING },
    [VARIANT_KING_OF_THE_HILL] = { "kingOfTheHill", "King of the Hill", "kingofthehill", FEN_START, 0 },
    [VARIANT_THREE_CHECK] = { "threeCheck", "Three-check", "3check",
                              "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 3+3 0 1", VARIANT_HAS_CHECKS },
    [VARIANT_HORDE] = { "horde", "Horde", "horde",
                        "rnbqkbnr/pppppppp/8/1PP2PP1/PPPPPPPP/PPPPPPPP/PPPPPPPP/PPPPPPPP w kq - 0 1", 0 },
    [VARIANT_RACING_KINGS] = { "racingKings", "Racing Kings", "racingkings", "8/8/8/8/8/8/krbnNBRK/qrbnNBRQ w - - 0 1",
                               VARIANT_NO_CASTLING },
    [VARIANT_SEIRAWAN] = { "seirawan", "S-chess", "seirawan",
                           "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR[HEhe] w KQBCDFGkqbcdfg - 0 1",
                           VARIANT_HAS_RESERVES },
};

const variant_rules_t *variant_rules(variant_t v)
{
    return (unsigned)v < VARIANT_COUNT ? &table[v] : NULL;
}

/* Names as read: lower case, without spaces, hyphens and underscores. */
static const struct {
    const char *name;
    variant_t variant;
    bool chess960;
} names[] = {
    { "standard", VARIANT_STANDARD, false },       { "chess", VARIANT_STANDARD, false },
    { "classical", VARIANT_STANDARD, false },      { "normal", VARIANT_STANDARD, false },
    { "fromposition", VARIANT_STANDARD, false },   { "chess960", VARIANT_STANDARD, true },
    { "960", VARIANT_STANDARD, true },             { "fischerandom", VARIANT_STANDARD, true },
    { "fischerrandom", VARIANT_STANDARD, true },   { "crazyhouse", VARIANT_CRAZYHOUSE, false },
    { "house", VARIANT_CRAZYHOUSE, false },        { "zh", VARIANT_CRAZYHOUSE, false },
    { "atomic", VARIANT_ATOMIC, false },           { "atom", VARIANT_ATOMIC, false },
    { "atomicchess", VARIANT_ATOMIC, false },      { "antichess", VARIANT_ANTICHESS, false },
    { "anti", VARIANT_ANTICHESS, false },          { "giveaway", VARIANT_ANTICHESS, false },
    { "giveawaychess", VARIANT_ANTICHESS, false }, { "kingofthehill", VARIANT_KING_OF_THE_HILL, false },
    { "koth", VARIANT_KING_OF_THE_HILL, false },   { "threecheck", VARIANT_THREE_CHECK, false },
    { "3check", VARIANT_THREE_CHECK, false },      { "threecheckchess", VARIANT_THREE_CHECK, false },
    { "horde", VARIANT_HORDE, false },             { "hordechess", VARIANT_HORDE, false },
    { "racingkings", VARIANT_RACING_KINGS, false }, { "racing", VARIANT_RACING_KINGS, false },
    { "race", VARIANT_RACING_KINGS, false },       { "seirawan", VARIANT_SEIRAWAN, false },
    { "schess", VARIANT_SEIRAWAN, false },         { "seirawanchess", VARIANT_SEIRAWAN, false },
};

bool variant_from_name(const char *name, size_t length, variant_t *variant, bool *chess960)
{
    char folded[32];
    size_t n = 0;
    for (size_t i = 0; i < length; i++) {
        char c = name[i];
        if (c == ' ' || c == '-' || c == '_')
            continue;
        if (n == sizeof folded - 1 || (unsigned char)c < 0x21 || (unsigned char)c > 0x7e)
            return false;
        folded[n++] = (c >= 'A' && c <= 'Z') ? (char)(c | 0x20) : c;
    }
    folded[n] = '\0';
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
        const char *a = names[i].name, *b = folded;
        while (*a && *a == *b)
            a++, b++;
        if (*a == '\0' && *b == '\0') {
            *variant = names[i].variant;
            *chess960 = names[i].chess960;
            return true;
        }
    }
    return false;
}


bitboard_t variant_attackers(const position_t *pos, int sq, color_t by, bitboard_t occupied)
{
    const bitboard_t *t = pos->by_type;
    bitboard_t leapers = t[KNIGHT] | t[HAWK] | t[ELEPHANT];
    bitboard_t diagonal = t[BISHOP] | t[QUEEN] | t[HAWK];
    bitboard_t straight = t[ROOK] | t[QUEEN] | t[ELEPHANT];
    return ((attacks_pawn((color_t)!by, sq) & t[PAWN]) | (attacks_knight(sq) & leapers)
            | (attacks_king(sq) & t[KING]) | (attacks_bishop(sq, occupied) & diagonal)
            | (attacks_rook(sq, occupied) & straight))
           & pos->by_color[by];
}

static const char *const end_names[VARIANT_END_COUNT] = {
    "none", "king_exploded", "no_pieces", "stalemate_win", "king_of_the_hill", "three_checks",
    "horde_captured", "race_finished",
};

const char *variant_end_name(variant_end_t end)
{
    return (unsigned)end < VARIANT_END_COUNT ? end_names[end] : "unknown";
}

#define CENTER (bb_square(27) | bb_square(28) | bb_square(35) | bb_square(36))

/* Racing kings: a king on rank 8 ends the race, unless White got there
 * and Black, to move, can still reach it (a draw if Black does). */
static variant_end_t race_end(const position_t *pos, color_t *winner)
{
    bitboard_t in_goal = pos->by_type[KING] & BB_RANK_8;
    if (!in_goal)
        return VARIANT_END_NONE;
    bool white_in = in_goal & pos->by_color[WHITE], black_in = in_goal & pos->by_color[BLACK];
    if (pos->side_to_move == BLACK && !black_in) {
        int king = pos->king_square[BLACK];
        if (king != SQ_NONE) {
            bitboard_t occupied = position_occupied(pos) ^ bb_square(king);
            for (bitboard_t to = attacks_king(king) & BB_RANK_8 & ~pos->by_color[BLACK]; to;)
                if (!variant_attackers(pos, bb_pop_lsb(&to), WHITE, occupied))
                    return VARIANT_END_NONE;
        }
    }
    *winner = white_in && black_in ? COLOR_COUNT : white_in ? WHITE : BLACK;
    return VARIANT_END_RACE_FINISHED;
}

variant_end_t variant_end(const position_t *pos, color_t *winner)
{
    switch (pos->variant) {
    case VARIANT_ATOMIC:
        for (int c = 0; c < COLOR_COUNT; c++)
            if (!position_pieces(pos, (color_t)c, KING)) {
                *winner = (color_t)!c;
                return VARIANT_END_KING_EXPLODED;
            }
        return VARIANT_END_NONE;
    case VARIANT_ANTICHESS:
        if (pos->by_color[pos->side_to_move])
            return VARIANT_END_NONE;
        *winner = (color_t)pos->side_to_move;
        return VARIANT_END_NO_PIECES;
    case VARIANT_KING_OF_THE_HILL:
        for (int c = 0; c < COLOR_COUNT; c++)
            if (position_pieces(pos, (color_t)c, KING) & CENTER) {
                *winner = (color_t)c;
                return VARIANT_END_KING_OF_THE_HILL;
            }
        return VARIANT_END_NONE;
    case VARIANT_THREE_CHECK:
        for (int c = 0; c < COLOR_COUNT; c++)
            if (pos->checks[c] >= 3) {
                *winner = (color_t)c;
                return VARIANT_END_THREE_CHECKS;
            }
        return VARIANT_END_NONE;
    case VARIANT_HORDE:
        for (int c = 0; c < COLOR_COUNT; c++)
            if (!pos->by_color[c]) {
                *winner = (color_t)!c;
                return VARIANT_END_HORDE_CAPTURED;
            }
        return VARIANT_END_NONE;
    case VARIANT_RACING_KINGS:
        return race_end(pos, winner);
    default:
        return VARIANT_END_NONE;
    }
}

/* ---- Insufficient material ---- */

static bool atomic_insufficient(const position_t *pos, color_t color)
{
    const bitboard_t *t = pos->by_type;
    bitboard_t own = pos->by_color[color], theirs = pos->by_color[!color];
    if (!(theirs & t[KING]))
        return false;
    if (!(own & ~t[KING]))
        return true;
    if (theirs & ~t[KING]) {
        /* Only bishops that can never meet: no explosion can reach a king. */
        if (position_occupied(pos) == (t[BISHOP] | t[KING])) {
            bitboard_t white = t[BISHOP] & pos->by_color[WHITE], black = t[BISHOP] & pos->by_color[BLACK];
            if (!(white & BB_DARK_SQUARES))
                return !(black & ~BB_DARK_SQUARES);
            if (!(white & ~BB_DARK_SQUARES))
                return !(black & BB_DARK_SQUARES);
        }
        return false;
    }
    if (t[QUEEN] | t[PAWN])
        return false;
    if (bb_count(t[KNIGHT] | t[BISHOP] | t[ROOK]) == 1)
        return true;
    if (position_occupied(pos) == (t[KNIGHT] | t[KING]))
        return bb_count(t[KNIGHT]) <= 2;
    return false;
}

static bool antichess_insufficient(const position_t *pos, color_t color)
{
    const bitboard_t *t = pos->by_type;
    bitboard_t own = pos->by_color[color], theirs = pos->by_color[!color], occupied = position_occupied(pos);
    if (!own)
        return false;
    if (!theirs)
        return true;
    if (occupied == t[BISHOP]) {
        bool we_light = own & ~BB_DARK_SQUARES, we_dark = own & BB_DARK_SQUARES;
        bool they_all_dark = !(theirs & ~BB_DARK_SQUARES), they_all_light = !(theirs & BB_DARK_SQUARES);
        return (we_light && they_all_dark) || (we_dark && they_all_light);
    }
    if (occupied == t[KNIGHT] && bb_count(occupied) == 2) {
        bool white_light = pos->by_color[WHITE] & ~BB_DARK_SQUARES, black_dark = pos->by_color[BLACK] & BB_DARK_SQUARES;
        return (white_light != black_dark) != (pos->side_to_move == color);
    }
    return false;
}

/* Horde, for the side without a king (the other always can win by taking
 * the horde): the cases in which its pieces can still mate, following the
 * analysis behind scalachess's and chessops's rule. */
typedef struct {
    int pawn, knight, bishop, rook, queen, light_bishops, dark_bishops, total;
} material_t;

static material_t material_of(const position_t *pos, color_t c)
{
    const bitboard_t *t = pos->by_type;
    bitboard_t own = pos->by_color[c];
    material_t m = { bb_count(own & t[PAWN]), bb_count(own & t[KNIGHT]), bb_count(own & t[BISHOP]),
                     bb_count(own & t[ROOK]), bb_count(own & t[QUEEN]), bb_count(own & t[BISHOP] & ~BB_DARK_SQUARES),
                     bb_count(own & t[BISHOP] & BB_DARK_SQUARES), bb_count(own) };
    return m;
}

static int min2(int a) { return a < 2 ? a : 2; }

static bool horde_insufficient(const position_t *pos, color_t color)
{
    if (position_pieces(pos, color, KING))
        return false;
    material_t horde = material_of(pos, color), pieces = material_of(pos, (color_t)!color);
    bool horde_light = horde.light_bishops >= 1; /* the colour of the horde's bishops, light if any */
    int same_bishops = horde_light ? pieces.light_bishops : pieces.dark_bishops;
    int other_bishops = horde_light ? pieces.dark_bishops : pieces.light_bishops;
    int horde_num = horde.pawn + horde.knight + horde.rook + horde.queen + min2(horde.dark_bishops)
                    + min2(horde.light_bishops);
    bool horde_pair = horde.light_bishops && horde.dark_bishops;
    bool pieces_pair = pieces.light_bishops && pieces.dark_bishops;
    if (horde_num == 0)
        return true;
    if (horde_num >= 4)
        return false;
    if ((horde.pawn >= 1 || horde.queen >= 1) && horde_num >= 2)
        return false;
    if (horde.rook >= 1 && horde_num >= 2
        && !(horde_num == 2 && horde.rook == 1 && horde.bishop == 1 && pieces.total - same_bishops == 1))
        return false;
    if (horde_num == 1) {
        if (pieces.total == 1)
            return true;
        if (horde.queen == 1)
            return !(pieces.pawn >= 1 || pieces.rook >= 1 || pieces.light_bishops >= 2 || pieces.dark_bishops >= 2);
        if (horde.pawn == 1) {
            /* As a queen or as a knight, whichever it becomes. */
            int sq = bb_msb(position_pieces(pos, color, PAWN));
            position_t as_queen = *pos, as_knight = *pos;
            position_remove_piece(&as_queen, sq);
            position_put_piece(&as_queen, piece_make(color, QUEEN), sq);
            position_remove_piece(&as_knight, sq);
            position_put_piece(&as_knight, piece_make(color, KNIGHT), sq);
            return horde_insufficient(&as_queen, color) && horde_insufficient(&as_knight, color);
        }
        if (horde.rook == 1)
            return !(pieces.pawn >= 2 || (pieces.rook >= 1 && pieces.pawn >= 1)
                     || (pieces.rook >= 1 && pieces.knight >= 1) || (pieces.pawn >= 1 && pieces.knight >= 1));
        if (horde.bishop == 1)
            return !(other_bishops >= 2 || (other_bishops >= 1 && pieces.pawn >= 1) || pieces.pawn >= 2);
        if (horde.knight == 1)
            return !(pieces.total >= 4
                     && (pieces.knight >= 2 || pieces.pawn >= 2 || (pieces.rook >= 1 && pieces.knight >= 1)
                         || (pieces.rook >= 1 && pieces.bishop >= 1) || (pieces.knight >= 1 && pieces.bishop >= 1)
                         || (pieces.rook >= 1 && pieces.pawn >= 1) || (pieces.knight >= 1 && pieces.pawn >= 1)
                         || (pieces.bishop >= 1 && pieces.pawn >= 1) || (pieces_pair && pieces.pawn >= 1))
                     && (pieces.dark_bishops < 2 || pieces.total - pieces.dark_bishops >= 3)
                     && (pieces.light_bishops < 2 || pieces.total - pieces.light_bishops >= 3));
    } else if (horde_num == 2) {
        if (pieces.total == 1)
            return true;
        if (horde.knight == 2)
            return pieces.pawn + pieces.bishop + pieces.knight < 1;
        if (horde_pair)
            return !(pieces.pawn >= 1 || pieces.bishop >= 1
                     || (pieces.knight >= 1 && pieces.rook + pieces.queen >= 1));
        if (horde.bishop >= 1 && horde.knight >= 1)
            return !(pieces.pawn >= 1 || other_bishops >= 1 || pieces.total - same_bishops >= 3);
        return !((pieces.pawn >= 1 && other_bishops >= 1) || (pieces.pawn >= 1 && pieces.knight >= 1)
                 || (other_bishops >= 1 && pieces.knight >= 1) || other_bishops >= 2 || pieces.knight >= 2
                 || pieces.pawn >= 2);
    } else if (horde_num == 3) {
        if ((horde.knight == 2 && horde.bishop == 1) || horde.knight == 3 || horde_pair)
            return false;
        return pieces.total == 1;
    }
    return true;
}

bool variant_insufficient_material_for(const position_t *pos, color_t color)
{
    switch (pos->variant) {
    case VARIANT_ATOMIC:
        return atomic_insufficient(pos, color);
    case VARIANT_ANTICHESS:
        return antichess_insufficient(pos, color);
    case VARIANT_THREE_CHECK:
        return pos->by_color[color] == position_pieces(pos, color, KING);
    case VARIANT_HORDE:
        return horde_insufficient(pos, color);
    default: /* crazyhouse, king of the hill, racing kings: never */
        return false;
    }
}
