/* libFuzzer target for the variants' FEN, moves and ends. Input: one byte
 * choosing the variant (modulo VARIANT_COUNT) and the FEN flags, then lines:
 * a FEN read in that variant (an empty line: the variant's start) and move
 * texts played from it. Whatever is accepted must round-trip through FEN,
 * every accepted move must be listed, read back from its SAN and UCI, and
 * every listed move must make and unmake back to the same position. */
#include <string.h>

#include "../../rules/rules.h"
#include "fen_checks.h"
#include "fuzz.h"

enum { PLIES_MAX = 64 };

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc;
    (void)argv;
    rules_init();
    return 0;
}

/* Every listed move is legal by movegen_is_legal, listed once, makes a
 * sound position that round-trips, and unmakes back to pos byte for byte;
 * its SAN and UCI read back to it. The status is computed once. */
static void check_moves(const position_t *start, unsigned flags)
{
    position_t pos = *start;
    status_t status;
    status_evaluate(&pos, NULL, 0, &status);
    move_list_t legal;
    int count = movegen_legal(&pos, &legal);
    FUZZ_CHECK(count == legal.count && count >= 0 && count <= MOVE_LIST_MAX, "movegen_legal returned %d, list has %d",
               count, legal.count);
    FUZZ_CHECK(movegen_count(&pos) == count, "movegen_count %d but movegen_legal %d", movegen_count(&pos), count);
    for (int i = 0; i < count; i++) {
        move_t move = legal.moves[i];
        char uci[UCI_BUFFER_SIZE], san[SAN_BUFFER_SIZE], before[FEN_BUFFER_SIZE], message[256];
        uci_format(&pos, move, uci);
        san_format_with(&pos, &legal, move, san);
        fen_format(&pos, before, sizeof before);
        FUZZ_CHECK(movegen_is_legal(&pos, move), "movegen_is_legal denies listed move %s in \"%s\"", uci, before);
        for (int j = 0; j < i; j++)
            FUZZ_CHECK(legal.moves[j] != move, "move %s listed twice in \"%s\"", uci, before);
        const char *texts[2] = { uci, san };
        for (int t = 0; t < 2; t++) {
            move_t back = MOVE_NONE;
            legality_reason_t r = notation_parse_move(&pos, texts[t], strlen(texts[t]), &back, message, sizeof message);
            FUZZ_CHECK(r == LEGALITY_OK && back == move, "\"%s\" reads back as %s (%#x, not %#x) in \"%s\": %s",
                       texts[t], legality_reason_code(r), back, move, before, message);
        }
        position_undo_t undo;
        position_make(&pos, move, &undo);
        FUZZ_CHECK(position_ok(&pos), "position_ok fails after %s in \"%s\"", uci, before);
        char origin[FEN_BUFFER_SIZE + 32];
        snprintf(origin, sizeof origin, "after %s in \"%s\"", uci, before);
        fen_checks_round_trip(&pos, fen_checks_flags(start, flags), origin);
        position_unmake(&pos, move, &undo);
        FUZZ_CHECK(!memcmp(&pos, start, sizeof pos), "unmake of %s in \"%s\" leaves another position (%s differs)", uci,
                   before, fen_checks_difference(start, &pos));
    }
}

/* Reads one move text in pos and plays it when legal; false when it names no legal move. */
static bool read_and_play(position_t *pos, const char *text, size_t length)
{
    char message[256], fen[FEN_BUFFER_SIZE];
    move_t move = MOVE_NONE;
    legality_reason_t r = notation_parse_move(pos, text, length, &move, message, sizeof message);
    fen_format(pos, fen, sizeof fen);
    FUZZ_CHECK((unsigned)r < LEGALITY_REASON_COUNT, "notation_parse_move(\"%.*s\") returned %d in \"%s\"",
               (int)length, text, (int)r, fen);
    FUZZ_CHECK(memchr(message, '\0', sizeof message), "message left unterminated for \"%.*s\"", (int)length, text);
    if (r != LEGALITY_OK)
        return false;
    move_list_t legal;
    movegen_legal(pos, &legal);
    bool listed = false;
    for (int i = 0; i < legal.count; i++)
        listed |= legal.moves[i] == move;
    FUZZ_CHECK(listed, "\"%.*s\" accepted as %#x, which movegen_legal does not list in \"%s\"", (int)length, text,
               move, fen);
    position_undo_t undo;
    position_make(pos, move, &undo);
    FUZZ_CHECK(position_ok(pos), "position_ok fails after \"%.*s\" in \"%s\"", (int)length, text, fen);
    return true;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1)
        return 0;
    variant_t variant = (variant_t)((data[0] & 0x0f) % VARIANT_COUNT);
    unsigned flags = (data[0] >> 4) & (FEN_CHESS960 | FEN_ALLOW_IMPOSSIBLE_CHECK | FEN_DETECT_CHESS960);
    const char *text = (const char *)data + 1, *end = (const char *)data + size;
    const char *newline = memchr(text, '\n', (size_t)(end - text));
    size_t length = (size_t)((newline ? newline : end) - text);
    position_t pos;
    if (length == 0) {
        fen_start(variant, &pos);
        flags = 0;
    } else {
        /* The FEN in its own exact-size buffer, so ASan sees any read past it. */
        char *copy = malloc(length);
        if (!copy)
            return 0;
        memcpy(copy, text, length);
        char message[256];
        memset(message, 'x', sizeof message);
        fen_error_t err = fen_parse_variant(copy, length, variant, flags, &pos, message, sizeof message);
        free(copy);
        FUZZ_CHECK((unsigned)err < FEN_ERROR_COUNT, "fen_parse_variant returned %d", (int)err);
        FUZZ_CHECK(memchr(message, '\0', sizeof message), "fen_parse_variant left the message unterminated");
        if (err != FEN_OK)
            return 0;
        FUZZ_CHECK(pos.variant == variant, "read in %s, the position says variant %d", variant_rules(variant)->key,
                   pos.variant);
    }
    FUZZ_CHECK(position_ok(&pos), "position_ok fails on an accepted FEN");
    fen_checks_round_trip(&pos, flags, "accepted FEN");
    for (int ply = 0; newline && ply < PLIES_MAX; ply++) {
        text = newline + 1;
        newline = memchr(text, '\n', (size_t)(end - text));
        length = (size_t)((newline ? newline : end) - text);
        char *copy = malloc(length ? length : 1);
        if (!copy)
            return 0;
        memcpy(copy, text, length);
        bool played = read_and_play(&pos, copy, length);
        free(copy);
        if (!played)
            break;
    }
    check_moves(&pos, flags);
    return 0;
}
