/* See fen_checks.h. */
#include "fen_checks.h"

#include <string.h>

#include "fuzz.h"

unsigned fen_checks_flags(const position_t *pos, unsigned flags)
{
    return (flags & ~(unsigned)(FEN_DETECT_CHESS960 | FEN_CHESS960)) | (pos->chess960 ? FEN_CHESS960 : 0);
}

const char *fen_checks_difference(const position_t *a, const position_t *b)
{
    if (memcmp(a->board, b->board, sizeof a->board))
        return "board";
    if (memcmp(a->by_type, b->by_type, sizeof a->by_type) || memcmp(a->by_color, b->by_color, sizeof a->by_color))
        return "bitboards";
    if (memcmp(a->castle_rook, b->castle_rook, sizeof a->castle_rook))
        return "castle_rook";
    if (memcmp(a->king_square, b->king_square, sizeof a->king_square))
        return "king_square";
    if (a->side_to_move != b->side_to_move)
        return "side_to_move";
    if (a->en_passant != b->en_passant)
        return "en_passant";
    if (a->halfmove_clock != b->halfmove_clock || a->fullmove_number != b->fullmove_number)
        return "counters";
    if (a->chess960 != b->chess960)
        return "chess960";
    if (a->variant != b->variant || a->promoted != b->promoted || a->gates != b->gates
        || memcmp(a->checks, b->checks, sizeof a->checks) || memcmp(a->pocket, b->pocket, sizeof a->pocket))
        return "variant state";
    if (a->key != b->key)
        return "key";
    return "reserved bytes";
}

void fen_checks_round_trip(const position_t *pos, unsigned flags, const char *origin)
{
    char fen[FEN_BUFFER_SIZE], again[FEN_BUFFER_SIZE], message[256];
    position_t back;
    fen_format(pos, fen, sizeof fen);
    unsigned reparse = fen_checks_flags(pos, flags);
    const char *variant = variant_rules((variant_t)pos->variant)->key;
    fen_error_t err = fen_parse_variant(fen, strlen(fen), (variant_t)pos->variant, reparse, &back, message,
                                        sizeof message);
    FUZZ_CHECK(err == FEN_OK, "%s: fen_format wrote \"%s\" (%s), which fen_parse (flags %u) refuses: %s (%s)", origin,
               fen, variant, reparse, fen_error_code(err), message);
    FUZZ_CHECK(!memcmp(&back, pos, sizeof back), "%s: \"%s\" (%s) parses back to another position_t (%s differs)",
               origin, fen, variant, fen_checks_difference(pos, &back));
    fen_format(&back, again, sizeof again);
    FUZZ_CHECK(!strcmp(fen, again), "%s: fen_format is not stable: \"%s\" then \"%s\"", origin, fen, again);
}
