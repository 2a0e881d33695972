/* UCI move notation: "e2e4", "e7e8q". Castling is written as the king's two
 * step in standard chess ("e1g1") and as king-takes-rook in Chess960
 * ("e1h1"); both forms are read in standard chess. The variants add drops
 * ("N@f3", upper case written, either case read), antichess's king
 * promotion ("e7e8k") and S-chess's gating ("b1c3h"; castling with a gate
 * on the rook's square is written rook to king, "h1e1h"). */
#ifndef CHESSD_RULES_UCI_MOVE_H
#define CHESSD_RULES_UCI_MOVE_H

#include <stddef.h>

#include "position.h"

enum { UCI_BUFFER_SIZE = 6 };

/* Writes move (legal in pos) into buf, at least UCI_BUFFER_SIZE bytes. Returns buf. */
char *uci_format(const position_t *pos, move_t move, char *buf);

/* The squares and the piece letter of UCI text, before any legality check.
 * A drop has from == to and drop set; the fifth letter (promotion) is a
 * pawn's promotion or, for another piece, S-chess's gate. */
typedef struct {
    int from, to;
    piece_type_t promotion; /* NO_PIECE_TYPE when the text names none */
    piece_type_t drop;      /* the piece a drop puts down, NO_PIECE_TYPE for a move */
} uci_text_t;

/* Reads `length` bytes of UCI syntax; false when the text is not UCI. */
bool uci_read(const char *text, size_t length, uci_text_t *out);

/* Turns UCI squares into the move they mean in pos (castling, en passant,
 * drops and gating recognised), whether or not it is legal. */
move_t uci_to_move(const position_t *pos, const uci_text_t *uci);

#endif
