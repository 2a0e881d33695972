/* FEN reading and writing. fen_parse() is strict: it accepts 6-field FEN and
 * 4-field EPD-style FEN, KQkq, X-FEN and Shredder-FEN castling letters, and
 * rejects anything that does not describe a reachable-looking position, with a
 * stable error code and a sentence. It reads exactly `length` bytes and never
 * past them. fen_format() writes the canonical FEN. */
#ifndef CHESSD_RULES_FEN_H
#define CHESSD_RULES_FEN_H

#include <stddef.h>

#include "position.h"

#define FEN_START "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1"
enum { FEN_BUFFER_SIZE = 192, FEN_INPUT_MAX = 256, FEN_COUNTER_MAX = POSITION_COUNTER_MAX };

typedef enum {
    FEN_OK = 0,
    FEN_ETOO_LONG,
    FEN_EFIELD_COUNT,
    FEN_ERANK_COUNT,
    FEN_ERANK_WIDTH,
    FEN_EPIECE_LETTER,
    FEN_ESIDE_TO_MOVE,
    FEN_ECASTLING_LETTERS,
    FEN_ECASTLING_RIGHTS,
    FEN_ECASTLING_NEEDS_CHESS960,
    FEN_EEN_PASSANT_SQUARE,
    FEN_EEN_PASSANT_RANK,
    FEN_EEN_PASSANT_NO_PAWN,
    FEN_EEN_PASSANT_BLOCKED,
    FEN_EHALFMOVE_CLOCK,
    FEN_EFULLMOVE_NUMBER,
    FEN_EKING_COUNT,
    FEN_EPAWN_ON_BACK_RANK,
    FEN_ETOO_MANY_PIECES,
    FEN_ETOO_MANY_PAWNS,
    FEN_EOPPOSITE_CHECK,
    FEN_ETOO_MANY_CHECKERS,
    FEN_EIMPOSSIBLE_CHECK,
    FEN_EPOCKET,          /* a pocket that is malformed, or in a variant without one */
    FEN_EKING_IN_POCKET,
    FEN_EPROMOTED_MARKER, /* '~' outside crazyhouse, or on a pawn or a king */
    FEN_ECHECK_COUNT,     /* three-check's counters: malformed, over 3, or in another variant */
    FEN_EVARIANT_RULE,    /* a position the variant's rules cannot reach (a pawn in racing kings ...) */
    FEN_ERROR_COUNT
} fen_error_t;

/* Flags for fen_parse(). FEN_CHESS960: castling rights may be Chess960's
 * (otherwise king on the e-file, rooks in the corners). FEN_ALLOW_IMPOSSIBLE_CHECK:
 * accept a side to move in check by three pieces or an impossible pair (perft
 * test positions use these; a game must not). FEN_DETECT_CHESS960: read the
 * position as Chess960 when, and only when, its castling rights need it. */
enum { FEN_CHESS960 = 1, FEN_ALLOW_IMPOSSIBLE_CHECK = 2, FEN_DETECT_CHESS960 = 4 };

/* Parses `length` bytes of text (no terminator needed) into *pos, under the
 * FEN_* flags. On failure *pos is unspecified, and a sentence
 * naming the problem is written to message (always terminated, truncated to
 * message_size). Thread-safe and allocation-free. */
fen_error_t fen_parse(const char *text, size_t length, unsigned flags, position_t *pos,
                      char *message, size_t message_size);
/* fen_parse for a variant's position. Reads every form in use: crazyhouse
 * pockets as "[...]" or a ninth rank, '~' after a promoted piece, S-chess
 * reserves and gating letters in the castling field, three-check counters
 * as X-FEN's remaining checks ("3+3", fifth field) or Lichess's checks
 * given ("+1+0", after the move number). */
fen_error_t fen_parse_variant(const char *text, size_t length, variant_t variant, unsigned flags,
                              position_t *pos, char *message, size_t message_size);

/* Sets *pos to the variant's start position (variant.h's start_fen). */
void fen_start(variant_t variant, position_t *pos);

/* Stable snake_case name of an error, e.g. "en_passant_no_pawn". */
const char *fen_error_code(fen_error_t error);

/* Writes the canonical FEN of pos into buf (FEN_BUFFER_SIZE bytes suffice).
 * Castling is KQkq in standard chess and X-FEN in Chess960; the en passant
 * square appears only when an en passant capture is legal. A variant adds
 * its parts as Fairy-Stockfish and chessops write them: the pocket or the
 * reserve in brackets after the board, '~' after a promoted piece, S-chess
 * gates as file letters after the castling rights, and three-check's
 * remaining checks as the fifth field ("3+3"). Returns buf. */
char *fen_format(const position_t *pos, char *buf, size_t buf_size);

#endif
