/* Move text to legal move: four or five characters of square-square(+piece)
 * are UCI, anything else is read as SAN. */
#include "notation.h"

#include <stdio.h>
#include <string.h>

#include "movegen.h"
#include "san.h"
#include "uci_move.h"

legality_reason_t notation_parse_move(const position_t *pos, const char *text, size_t length, move_t *move,
                                      char *message, size_t message_size)
{
    uci_text_t uci;
    if (!uci_read(text, length, &uci))
        return san_parse(pos, text, length, move, message, message_size);
    legality_reason_t r = uci.drop != NO_PIECE_TYPE
                              ? legality_explain_drop(pos, uci.drop, uci.to, message, message_size)
                              : legality_explain(pos, uci.from, uci.to, uci.promotion, message, message_size);
    if (r != LEGALITY_OK)
        return r;
    *move = uci_to_move(pos, &uci);
    return LEGALITY_OK;
}

bool notation_next_in_list(const char **cursor, const char **move_text, size_t *length)
{
    const char *p = *cursor;
    while (*p == ' ')
        p++;
    size_t n = strcspn(p, " ");
    *cursor = p;
    if (n == 0)
        return false;
    *move_text = p;
    *length = n;
    *cursor = p + n;
    return true;
}
