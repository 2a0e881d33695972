/* Move text to legal move: four or five characters of square-square(+piece)
 * are UCI, anything else is read as SAN; blanks around the text are not
 * part of it, as around a FEN's fields. */
#include "notation.h"

#include <stdio.h>
#include <string.h>

#include "movegen.h"
#include "san.h"
#include "uci_move.h"

static bool is_blank(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; }

legality_reason_t notation_parse_move(const position_t *pos, const char *text, size_t length, move_t *move,
                                      char *message, size_t message_size)
{
    while (length > 0 && is_blank(*text)) {
        text++;
        length--;
    }
    while (length > 0 && is_blank(text[length - 1]))
        length--;
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
