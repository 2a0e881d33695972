/* The text/plain board diagram for terminals: the board from White's side,
 * then FEN, side to move, status and (on request) the legal moves in SAN.
 * A variant's lines come between the board and the FEN; standard chess has
 * none, so its text is as it always was. Writes into a buf; the returned
 * text is malloc'd. */
#include "board_text.h"

#include "../http/buf.h"
#include "position_json.h"

/* "White's pocket: P x2, N" (FEN letters, a count after a piece held more
 * than once) or "Black's reserve: empty". */
static void write_pocket(buf_t *b, const position_t *pos, color_t side, const char *what)
{
    int shown = 0;
    buf_printf(b, "%s's %s:", color_title(side), what);
    for (int t = 0; t < PIECE_TYPE_COUNT; t++) {
        int held = pos->pocket[side][t];
        if (!held)
            continue;
        buf_printf(b, "%s %c", shown++ ? "," : "", piece_letter(piece_make(side, (piece_type_t)t)));
        if (held > 1)
            buf_printf(b, " x%d", held);
    }
    buf_puts(b, shown ? "\n" : " empty\n");
}

/* A variant's lines: its name and key, each side's pocket (crazyhouse) or
 * reserve (S-chess), the checks each side has given (three-check). */
static void write_variant(buf_t *b, const position_t *pos)
{
    const variant_rules_t *rules = variant_rules((variant_t)pos->variant);
    if (!rules || pos->variant == VARIANT_STANDARD)
        return;
    buf_printf(b, "Variant: %s (%s)\n", rules->title, rules->key);
    if (rules->flags & (VARIANT_HAS_POCKETS | VARIANT_HAS_RESERVES))
        for (int c = 0; c < COLOR_COUNT; c++)
            write_pocket(b, pos, (color_t)c, rules->flags & VARIANT_HAS_POCKETS ? "pocket" : "reserve");
    if (rules->flags & VARIANT_HAS_CHECKS)
        buf_printf(b, "Checks given: White %d, Black %d (the third wins)\n", pos->checks[WHITE], pos->checks[BLACK]);
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
    buf_printf(&b, "Status: %s", status_state_name(status->state));
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
