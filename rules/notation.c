/* Move text to legal move. */
#include "notation.h"

#include <stdio.h>

#include "movegen.h"
#include "uci.h"

legality_reason_t notation_parse_move(const position_t *pos, const char *text, size_t length, move_t *move,
                                      char *message, size_t message_size)
{
    uci_text_t uci;
    if (uci_read(text, length, &uci)) {
        *move = uci_to_move(pos, &uci);
        if (movegen_is_legal(pos, *move))
            return LEGALITY_OK;
        snprintf(message, message_size, "illegal");
        return LEGALITY_CANNOT_MOVE_SO;
    }
    snprintf(message, message_size, "unparseable");
    return LEGALITY_UNPARSEABLE;
}
