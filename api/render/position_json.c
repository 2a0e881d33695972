/* The Move and Position objects of openapi.yaml, written into a jsonw.
 * Castling's `to` is the king's destination square in both variants, while
 * `uci` follows the variant's convention. */
#include "position_json.h"

#include <string.h>

static void square_name(int sq, char *buf)
{
    buf[0] = (char)('a' + square_file(sq));
    buf[1] = (char)('1' + square_rank(sq));
    buf[2] = '\0';
}

/* A small text built in place: the Move object is written into a stack
 * buffer and handed to jsonw as one raw value, since every part of it is
 * ASCII that needs no escaping (square names, piece letters, UCI, SAN). */
typedef struct {
    char text[256];
    size_t length;
} move_text_t;

static void add_n(move_text_t *t, const char *s, size_t n)
{
    memcpy(t->text + t->length, s, n); /* the longest Move object is well under the buffer */
    t->length += n;
}

static void add(move_text_t *t, const char *s) { add_n(t, s, strlen(s)); }

/* A string literal, its length known when compiled. */
#define ADD(t, literal) add_n((t), "" literal, sizeof literal - 1)

/* "key":"x" for a piece letter, or "key":null (key a literal). */
#define ADD_LETTER(t, key, type) (ADD((t), key), add_letter((t), (type)))
static void add_letter(move_text_t *t, int type)
{
    if (type < 0 || type >= PIECE_TYPE_COUNT) {
        ADD(t, "null");
        return;
    }
    char letter[3] = { '"', piece_type_letter(type), '"' };
    add_n(t, letter, sizeof letter);
}

/* A flag in the flags array (flag a literal). */
#define ADD_FLAG(t, first, flag) add_flag((t), (first), "\"" flag "\"", sizeof flag + 1)
static void add_flag(move_text_t *t, bool *first, const char *quoted, size_t n)
{
    if (!*first)
        ADD(t, ",");
    add_n(t, quoted, n);
    *first = false;
}

void position_json_move(jsonw_t *w, const position_t *pos, const move_list_t *legal, move_t move)
{
    char uci[UCI_BUFFER_SIZE], san[SAN_BUFFER_SIZE], squares[2][2];
    int kind = move_kind(move), from_sq = move_from(move), to_sq = move_to(move);
    piece_t piece = kind == MOVE_DROP ? piece_make((color_t)pos->side_to_move, move_dropped(move)) : pos->board[from_sq];
    int captured = -1;
    if (kind == MOVE_EN_PASSANT)
        captured = PAWN;
    else if (kind != MOVE_CASTLING && kind != MOVE_DROP && pos->board[to_sq] != NO_PIECE)
        captured = piece_type(pos->board[to_sq]);
    uci_format(pos, move, uci);
    san_format_with(pos, legal, move, san);
    int to_name = kind == MOVE_CASTLING ? position_castle_king_to(pos, to_sq) : to_sq;
    squares[0][0] = (char)('a' + square_file(from_sq)), squares[0][1] = (char)('1' + square_rank(from_sq));
    squares[1][0] = (char)('a' + square_file(to_name)), squares[1][1] = (char)('1' + square_rank(to_name));
    size_t san_length = strlen(san);
    char suffix = san_length ? san[san_length - 1] : '\0';

    move_text_t t = { .length = 0 };
    ADD(&t, "{\"uci\":\"");
    add_n(&t, uci, uci[4] ? 5 : 4); /* a UCI move is 4 characters, or 5 with a promotion */
    ADD(&t, "\",\"san\":\"");
    add_n(&t, san, san_length);
    if (kind == MOVE_DROP) {
        ADD(&t, "\",\"from\":null,\"to\":\""); /* a drop comes from the pocket */
    } else {
        ADD(&t, "\",\"from\":\"");
        add_n(&t, squares[0], 2);
        ADD(&t, "\",\"to\":\"");
    }
    add_n(&t, squares[1], 2);
    ADD(&t, "\",");
    ADD_LETTER(&t, "\"piece\":", piece_type(piece));
    ADD(&t, ",\"color\":\"");
    add(&t, color_name(piece_color(piece)));
    ADD(&t, "\",");
    ADD_LETTER(&t, "\"captured\":", captured);
    ADD(&t, ",");
    ADD_LETTER(&t, "\"promotion\":", kind == MOVE_PROMOTION ? (int)move_promotion(move) : -1);
    if (move_gate(move)) {
        ADD(&t, ",");
        ADD_LETTER(&t, "\"gate\":", (int)move_gate(move));
    }
    ADD(&t, ",\"flags\":[");
    bool first = true;
    if (captured >= 0)
        ADD_FLAG(&t, &first, "capture");
    if (kind == MOVE_EN_PASSANT)
        ADD_FLAG(&t, &first, "en_passant");
    if (kind == MOVE_CASTLING)
        ADD_FLAG(&t, &first, "castle");
    if (kind == MOVE_DROP)
        ADD_FLAG(&t, &first, "drop");
    if (kind == MOVE_PROMOTION)
        ADD_FLAG(&t, &first, "promotion");
    if (piece_type(piece) == PAWN && (from_sq ^ to_sq) == 16)
        ADD_FLAG(&t, &first, "double_push");
    if (suffix == '+' || suffix == '#')
        ADD_FLAG(&t, &first, "check");
    if (suffix == '#')
        ADD_FLAG(&t, &first, "checkmate");
    ADD(&t, "]}");
    jsonw_raw_n(w, t.text, t.length);
}

/* The castling field (the third) of a canonical FEN, into buf. */
static const char *castling_field(const char *fen, char *buf)
{
    const char *field = strchr(strchr(fen, ' ') + 1, ' ') + 1;
    size_t n = strcspn(field, " ");
    memcpy(buf, field, n);
    buf[n] = '\0';
    return buf;
}

const char *position_json_result(const position_t *pos, const status_t *status)
{
    switch (status->state) {
    case STATUS_VARIANT_END:
        return status->winner == WHITE ? "1-0" : status->winner == BLACK ? "0-1" : "1/2-1/2";
    case STATUS_CHECKMATE: return pos->side_to_move == WHITE ? "0-1" : "1-0";
    case STATUS_STALEMATE:
    case STATUS_DRAW: return "1/2-1/2";
    default: return "*";
    }
}

/* {"white":{"pawn":0,...},"black":{...}}: pocket or reserve counts of types first..last. */
static void write_hands(jsonw_t *w, const position_t *pos, piece_type_t first, piece_type_t last)
{
    jsonw_object_begin(w);
    for (int c = 0; c < COLOR_COUNT; c++) {
        jsonw_key(w, color_name((color_t)c));
        jsonw_object_begin(w);
        for (int t = first; t <= (int)last; t++)
            jsonw_kv_int(w, piece_type_name(t), pos->pocket[c][t]);
        jsonw_object_end(w);
    }
    jsonw_object_end(w);
}

/* The variant's state beside the FEN, so no client has to parse it:
 * crazyhouse's pockets, three-check's checks given, S-chess's reserves
 * and the squares a reserve piece may still be gated on. */
static void write_variant_state(jsonw_t *w, const position_t *pos)
{
    switch (pos->variant) {
    case VARIANT_CRAZYHOUSE:
        jsonw_key(w, "pockets");
        write_hands(w, pos, PAWN, QUEEN);
        break;
    case VARIANT_THREE_CHECK:
        jsonw_key(w, "checks_given");
        jsonw_object_begin(w);
        jsonw_kv_int(w, "white", pos->checks[WHITE]);
        jsonw_kv_int(w, "black", pos->checks[BLACK]);
        jsonw_object_end(w);
        break;
    case VARIANT_SEIRAWAN:
        jsonw_key(w, "reserves");
        write_hands(w, pos, HAWK, ELEPHANT);
        jsonw_key(w, "gates");
        jsonw_array_begin(w);
        for (bitboard_t b = pos->gates; b;) {
            char name[3];
            square_name(bb_pop_lsb(&b), name);
            jsonw_string(w, name);
        }
        jsonw_array_end(w);
        break;
    default:
        break;
    }
}

void position_json_write(jsonw_t *w, const position_t *pos, const status_t *status, const opening_t *opening,
                         bool with_moves)
{
    position_json_write_ended(w, pos, status, NULL, opening, with_moves, NULL);
}

void position_json_opening(jsonw_t *w, const opening_t *opening)
{
    if (!opening) {
        jsonw_null(w);
        return;
    }
    jsonw_object_begin(w);
    jsonw_kv_string(w, "eco", opening->eco);
    jsonw_kv_string(w, "name", opening->name);
    jsonw_object_end(w);
}

void position_json_write_ended(jsonw_t *w, const position_t *pos, const status_t *status,
                               const position_json_ending_t *ending, const opening_t *opening, bool with_moves,
                               size_t moves_span[2])
{
    char fen[FEN_BUFFER_SIZE], castling[24], ep[3];
    jsonw_object_begin(w);
    fen_format(pos, fen, sizeof fen);
    jsonw_kv_string(w, "fen", fen);
    jsonw_kv_string(w, "turn", color_name(pos->side_to_move));
    jsonw_kv_bool(w, "check", status->check);
    const char *draw_reason = status->state == STATUS_DRAW ? status_draw_reason_name(status->draw_reason) : NULL;
    jsonw_kv_string(w, "variant", variant_rules((variant_t)pos->variant)->key);
    jsonw_kv_string(w, "status", ending                                ? ending->status
                                 : status->state == STATUS_VARIANT_END ? variant_end_name(status->variant_end)
                                                                       : status_state_name(status->state));
    jsonw_kv_string(w, "result", ending ? ending->result : position_json_result(pos, status));
    if (ending)
        draw_reason = ending->draw_reason;
    jsonw_key(w, "draw_reason");
    if (draw_reason)
        jsonw_string(w, draw_reason);
    else
        jsonw_null(w);
    jsonw_key(w, "claimable_draws");
    jsonw_array_begin(w);
    if (!ending && (status->claimable & STATUS_CLAIM_FIFTY_MOVES))
        jsonw_string(w, "fifty_moves");
    if (!ending && (status->claimable & STATUS_CLAIM_THREEFOLD_REPETITION))
        jsonw_string(w, "threefold_repetition");
    jsonw_array_end(w);
    jsonw_kv_int(w, "halfmove_clock", pos->halfmove_clock);
    jsonw_kv_int(w, "fullmove_number", pos->fullmove_number);
    jsonw_kv_string(w, "castling_rights", castling_field(fen, castling));
    jsonw_key(w, "en_passant");
    if (pos->en_passant != SQ_NONE) {
        square_name(pos->en_passant, ep);
        jsonw_string(w, ep);
    } else {
        jsonw_null(w);
    }
    jsonw_kv_bool(w, "chess960", pos->chess960);
    write_variant_state(w, pos);
    jsonw_kv_int(w, "repetitions", status->repetitions);
    jsonw_key(w, "opening");
    position_json_opening(w, opening);
    size_t moves_at = jsonw_length(w);
    if (with_moves) {
        move_list_t legal;
        movegen_legal(pos, &legal);
        jsonw_key(w, "legal_moves");
        jsonw_array_begin(w);
        for (int i = 0; i < legal.count; i++)
            position_json_move(w, pos, &legal, legal.moves[i]);
        jsonw_array_end(w);
    }
    if (moves_span) {
        moves_span[0] = moves_at;
        moves_span[1] = jsonw_length(w);
    }
    jsonw_object_end(w);
}
