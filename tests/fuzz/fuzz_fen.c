/* libFuzzer target for the FEN reader and writer. Input: one byte of
 * fen_parse flags (low three bits), then the FEN text. Whatever fen_parse
 * accepts must come back byte-identical through fen_format and a second
 * fen_parse, and every legal move must make and unmake back to the same
 * position; each position one move on must also round-trip through FEN. */
#include <string.h>

#include "../../rules/rules.h"
#include "fen_checks.h"
#include "fuzz.h"

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc;
    (void)argv;
    rules_init();
    return 0;
}

/* Every legal move: position_ok after make, a FEN round trip one move on,
 * and unmake restoring pos byte for byte. */
static void check_moves(const position_t *start, unsigned flags)
{
    position_t pos = *start;
    move_list_t legal;
    int count = movegen_legal(&pos, &legal);
    FUZZ_CHECK(count == legal.count && count >= 0 && count <= MOVE_LIST_MAX, "movegen_legal returned %d, list has %d",
               count, legal.count);
    FUZZ_CHECK(movegen_count(&pos) == count, "movegen_count %d but movegen_legal %d", movegen_count(&pos), count);
    for (int i = 0; i < count; i++) {
        move_t move = legal.moves[i];
        char uci[UCI_BUFFER_SIZE], before[FEN_BUFFER_SIZE];
        uci_format(&pos, move, uci);
        fen_format(&pos, before, sizeof before);
        FUZZ_CHECK(movegen_is_legal(&pos, move), "movegen_is_legal denies listed move %s in \"%s\"", uci, before);
        for (int j = 0; j < i; j++)
            FUZZ_CHECK(legal.moves[j] != move, "move %s listed twice in \"%s\"", uci, before);
        position_undo_t undo;
        position_make(&pos, move, &undo);
        FUZZ_CHECK(position_ok(&pos), "position_ok fails after %s in \"%s\"", uci, before);
        FUZZ_CHECK(!position_attacked_by(&pos, pos.king_square[!pos.side_to_move], (color_t)pos.side_to_move,
                                         position_occupied(&pos)),
                   "%s in \"%s\" leaves the mover's king in check", uci, before);
        char origin[FEN_BUFFER_SIZE + 32];
        snprintf(origin, sizeof origin, "after %s in \"%s\"", uci, before);
        fen_checks_round_trip(&pos, fen_checks_flags(start, flags), origin);
        position_unmake(&pos, move, &undo);
        FUZZ_CHECK(!memcmp(&pos, start, sizeof pos), "unmake of %s in \"%s\" leaves another position (%s differs)",
                   uci, before, fen_checks_difference(start, &pos));
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1)
        return 0;
    unsigned flags = data[0] & (FEN_CHESS960 | FEN_ALLOW_IMPOSSIBLE_CHECK | FEN_DETECT_CHESS960);
    const char *text = (const char *)data + 1;
    size_t length = size - 1;
    position_t pos;
    char message[256];
    /* message_size 1 and 0 exercise the truncation paths now and then. */
    size_t message_size = (data[0] & 0x80) ? (data[0] & 0x40 ? 1 : 0) : sizeof message;
    memset(message, 'x', sizeof message);
    fen_error_t err = fen_parse(text, length, flags, &pos, message_size ? message : NULL, message_size);
    FUZZ_CHECK((unsigned)err < FEN_ERROR_COUNT, "fen_parse returned %d", (int)err);
    if (message_size)
        FUZZ_CHECK(memchr(message, '\0', message_size), "fen_parse left the message unterminated");
    if (err != FEN_OK) {
        FUZZ_CHECK(message_size <= 1 || message[0] != '\0', "fen_parse error %s without a sentence",
                   fen_error_code(err));
        return 0;
    }
    FUZZ_CHECK(position_ok(&pos), "position_ok fails on an accepted FEN");
    FUZZ_CHECK(!(flags & FEN_CHESS960) || pos.chess960, "FEN_CHESS960 given but pos.chess960 is 0");
    fen_checks_round_trip(&pos, flags, "accepted FEN");
    check_moves(&pos, flags);
    return 0;
}
