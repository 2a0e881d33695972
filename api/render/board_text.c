/* The text/plain board diagram for terminals: the board from White's side,
 * then FEN, side to move, status and (on request) the legal moves in SAN.
 * Writes into a buf; the returned text is malloc'd. */
#include "board_text.h"

#include "../http/buf.h"
#include "position_json.h"

/* A variant's name, and what it keeps beside the board: pockets or
 * reserves (each side's letters) and three-check's checks given. */
static void write_variant(buf_t *b, const position_t *pos)
{
    if (pos->variant == VARIANT_STANDARD)
        return;
    buf_printf(b, "Variant: %s\n", variant_rules((variant_t)pos->variant)->key);
    if (pos->variant == VARIANT_CRAZYHOUSE || pos->variant == VARIANT_SEIRAWAN) {
        for (int c = 0; c < COLOR_COUNT; c++) {
            buf_printf(b, "%s %s:", color_title((color_t)c), pos->variant == VARIANT_CRAZYHOUSE ? "pocket" : "reserve");
            int shown = 0;
            for (int t = 0; t < PIECE_TYPE_COUNT; t++)
                for (int k = 0; k < pos->pocket[c][t]; k++, shown++)
                    buf_printf(b, " %c", piece_letter(piece_make((color_t)c, (piece_type_t)t)));
            buf_puts(b, shown ? "\n" : " -\n");
        }
    }
    if (pos->variant == VARIANT_THREE_CHECK)
        buf_printf(b, "Checks given: white %d, black %d\n", pos->checks[WHITE], pos->checks[BLACK]);
}

char *board_text_render(const position_t *pos, const status_t *status, bool with_moves, size_t *length)
{
    buf_t b;
    buf_init(&b);
    for (int rank = 7; rank >= 0; rank--) {
        buf_printf(&b, "%d ", rank + 1);
        for (int file = 0; file < 8; file++) {
            piece_t p = pos->board[square_make(file, rank)];
            char c = p == NO_PIECE ? '.' : piece_letter(p);
            buf_putc(&b, ' ');
            buf_putc(&b, c);
        }
        buf_putc(&b, '\n');
    }
    buf_puts(&b, "   a b c d e f g h\n\n");
    write_variant(&b, pos);
    char fen[FEN_BUFFER_SIZE];
    buf_printf(&b, "FEN: %s\n", fen_format(pos, fen, sizeof fen));
    buf_printf(&b, "%s to move%s\n", color_title(pos->side_to_move), status->check ? ", in check" : "");
    buf_printf(&b, "Status: %s", status->state == STATUS_VARIANT_END ? variant_end_name(status->variant_end)
                                                                       : status_state_name(status->state));
    if (status->state == STATUS_DRAW)
        buf_printf(&b, " (%s)", status_draw_reason_name(status->draw_reason));
    buf_printf(&b, ", result %s\n", position_json_result(pos, status));
    if (status->claimable)
        buf_printf(&b, "Draw may be claimed:%s%s\n",
                   status->claimable & STATUS_CLAIM_FIFTY_MOVES ? " fifty_moves" : "",
                   status->claimable & STATUS_CLAIM_THREEFOLD_REPETITION ? " threefold_repetition" : "");
    if (with_moves) {
        move_list_t legal;
        movegen_legal(pos, &legal);
        buf_printf(&b, "Legal moves (%d):", legal.count);
        for (int i = 0; i < legal.count; i++) {
            char san[SAN_BUFFER_SIZE];
            buf_putc(&b, ' ');
            buf_puts(&b, san_format_with(pos, &legal, legal.moves[i], san));
        }
        buf_putc(&b, '\n');
    }
    return buf_finish(&b, length);
}
