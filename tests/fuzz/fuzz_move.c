/* libFuzzer target for move text (notation_parse_move: UCI or SAN). Input:
 * one byte choosing a start position (low bits) and the message buffer size
 * (high bit), then move texts separated by '\n', each read in the position
 * the legal ones before it reached. A move accepted must be one movegen_legal
 * lists, and its SAN and UCI must read back to the same move. */
#include <string.h>

#include "../../rules/rules.h"
#include "fuzz.h"

typedef struct {
    const char *fen;
    unsigned flags;
} start_t;

/* Chosen to reach every kind of move: castling both ways and in Chess960
 * (king or rook not moving), en passant (also pinned), promotions with and
 * without capture, checks and double checks, ambiguous pieces, no moves. */
static const start_t starts[] = {
    { FEN_START, 0 },
    { "r3k2r/p1ppqpb1/bn2pnp1/3PN3/1p2P3/2N2Q1p/PPPBBPPP/R3K2R w KQkq - 0 1", 0 }, /* Kiwipete */
    { "8/2p5/3p4/KP5r/1R3p1k/8/4P1P1/8 w - - 0 1", 0 },
    { "rnbqkbnr/ppppp1pp/8/4Pp2/8/8/PPPP1PPP/RNBQKBNR w KQkq f6 0 3", 0 },
    /* en passant pins from perft suites, whose checks no last move explains */
    { "8/8/8/1k6/3Pp3/8/8/4KQ2 b - d3 0 1", FEN_ALLOW_IMPOSSIBLE_CHECK },
    { "1b1k4/8/8/1rPpK3/8/8/8/8 w - d6 0 1", FEN_ALLOW_IMPOSSIBLE_CHECK },
    { "rnbq1k1r/pp1Pbppp/2p5/8/2B5/8/PPP1NnPP/RNBQK2R w KQ - 1 8", 0 },
    { "n1n5/PPPk4/8/8/8/8/4Kppp/5N1N b - - 0 1", 0 },
    { "bqnb1rkr/pp3ppp/3ppn2/2p5/5P2/P2P4/NPP1P1PP/BQ1BNRKR w HFhf - 2 9", FEN_CHESS960 },
    { "r1k1r2q/p1ppp1pp/8/8/8/8/P1PPP1PP/R1K1R2Q w KQkq - 0 1", FEN_CHESS960 },
    { "1rk2r2/8/8/8/8/8/8/1RK2R2 w KQkq - 0 1", FEN_CHESS960 },
    { "2r5/8/8/8/8/8/6PP/k2KR3 w K - 0 1", FEN_CHESS960 },
    { "r3k2r/8/8/8/8/8/8/R3K2R w KQkq - 0 1", 0 },
    { "r3k2r/8/8/8/8/8/8/R3K2R b KQkq - 0 1", 0 },
    { "4k3/8/8/8/8/3n4/8/4K2r w - - 0 1", 0 },      /* double check */
    { "rnbqkbnr/ppp2ppp/3p4/1B2p3/4P3/8/PPPP1PPP/RNBQK1NR b KQkq - 1 3", 0 }, /* in check */
    { "3R4/8/q4k2/2B5/1NK5/3b4/8/8 w - - 0 1", FEN_ALLOW_IMPOSSIBLE_CHECK },
    { "8/8/6k1/8/Q6Q/8/8/Q3K2Q w - - 0 1", 0 },      /* queens: full disambiguation */
    { "k7/8/8/3N1N2/8/3N1N2/8/K7 w - - 0 1", 0 },    /* knights: file or rank */
    { "rnb1kbnr/pppp1ppp/8/4p3/6Pq/5P2/PPPPP2P/RNBQKBNR w KQkq - 1 3", 0 }, /* mated */
    { "7k/5Q2/6K1/8/8/8/8/8 b - - 0 1", 0 },          /* stalemate */
    { "r3k2r/p1ppqpb1/bn2pnp1/3PN3/1p2P3/2N2Q1p/PPPBBPPP/R3K2R w KQkq - 99 50", 0 },
    { "r2q1rk1/pP1p2pp/Q4n2/bbp1p3/Np6/1B3NBn/pPPP1PPP/R3K2R b KQ - 0 1", 0 },
};
enum { START_COUNT = sizeof starts / sizeof starts[0], MOVE_TEXT_MAX = 64 };

static position_t start_positions[START_COUNT];

static bool listed(const move_list_t *legal, move_t move)
{
    for (int i = 0; i < legal->count; i++)
        if (legal->moves[i] == move)
            return true;
    return false;
}

/* The SAN and the UCI of a legal move must both read back to it. */
static void check_move_texts(const position_t *pos, const move_list_t *legal, move_t move, const char *origin)
{
    char san[SAN_BUFFER_SIZE], uci[UCI_BUFFER_SIZE], fen[FEN_BUFFER_SIZE], message[256];
    fen_format(pos, fen, sizeof fen);
    san_format_with(pos, legal, move, san);
    char san_again[SAN_BUFFER_SIZE];
    FUZZ_CHECK(!strcmp(san, san_format(pos, move, san_again)), "san_format and san_format_with differ: %s, %s in \"%s\"",
               san, san_again, fen);
    move_t back = MOVE_NONE;
    legality_reason_t r = notation_parse_move(pos, san, strlen(san), &back, message, sizeof message);
    FUZZ_CHECK(r == LEGALITY_OK && back == move, "%s: SAN \"%s\" reads back as %s (move %#x, not %#x) in \"%s\": %s",
               origin, san, legality_reason_code(r), back, move, fen, message);
    uci_format(pos, move, uci);
    back = MOVE_NONE;
    r = notation_parse_move(pos, uci, strlen(uci), &back, message, sizeof message);
    FUZZ_CHECK(r == LEGALITY_OK && back == move, "%s: UCI \"%s\" reads back as %s (move %#x, not %#x) in \"%s\": %s",
               origin, uci, legality_reason_code(r), back, move, fen, message);
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc;
    (void)argv;
    rules_init();
    for (int i = 0; i < START_COUNT; i++) {
        char message[256];
        fen_error_t err = fen_parse(starts[i].fen, strlen(starts[i].fen), starts[i].flags, &start_positions[i],
                                    message, sizeof message);
        FUZZ_CHECK(err == FEN_OK, "start position %d \"%s\": %s", i, starts[i].fen, message);
        move_list_t legal;
        movegen_legal(&start_positions[i], &legal);
        for (int m = 0; m < legal.count; m++)
            check_move_texts(&start_positions[i], &legal, legal.moves[m], "start position move");
    }
    return 0;
}

/* Reads one move text in pos; plays it when legal. Returns false when the
 * text names no legal move (the sequence stops there). */
static bool read_and_play(position_t *pos, const char *text, size_t length, size_t message_size)
{
    char message[256], fen[FEN_BUFFER_SIZE];
    move_t move = MOVE_NONE;
    memset(message, 'x', sizeof message);
    legality_reason_t r = notation_parse_move(pos, text, length, &move, message_size ? message : NULL, message_size);
    fen_format(pos, fen, sizeof fen);
    FUZZ_CHECK((unsigned)r < LEGALITY_REASON_COUNT && r != LEGALITY_GAME_OVER,
               "notation_parse_move(\"%.*s\") returned reason %d in \"%s\"", (int)length, text, (int)r, fen);
    if (message_size)
        FUZZ_CHECK(memchr(message, '\0', message_size), "message left unterminated for \"%.*s\" in \"%s\"",
                   (int)length, text, fen);
    if (r != LEGALITY_OK) {
        FUZZ_CHECK(message_size <= 1 || message[0] != '\0', "reason %s without a sentence for \"%.*s\" in \"%s\"",
                   legality_reason_code(r), (int)length, text, fen);
        return false;
    }
    move_list_t legal;
    movegen_legal(pos, &legal);
    FUZZ_CHECK(listed(&legal, move), "\"%.*s\" accepted as move %#x, which movegen_legal does not list in \"%s\"",
               (int)length, text, move, fen);
    FUZZ_CHECK(movegen_is_legal(pos, move), "movegen_is_legal denies %#x in \"%s\"", move, fen);
    check_move_texts(pos, &legal, move, "accepted move");
    position_undo_t undo;
    position_make(pos, move, &undo);
    FUZZ_CHECK(position_ok(pos), "position_ok fails after \"%.*s\" in \"%s\"", (int)length, text, fen);
    return true;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1)
        return 0;
    position_t pos = start_positions[(data[0] & 0x7f) % START_COUNT];
    size_t message_size = (data[0] & 0x80) ? 0 : 256;
    const char *text = (const char *)data + 1, *end = (const char *)data + size;
    while (text <= end) {
        const char *newline = memchr(text, '\n', (size_t)(end - text));
        size_t length = (size_t)((newline ? newline : end) - text);
        /* Each text goes in its own exact-size buffer, so ASan sees any read past it. */
        char *copy = malloc(length ? length : 1);
        if (!copy)
            return 0;
        memcpy(copy, text, length);
        bool played = read_and_play(&pos, copy, length, message_size);
        free(copy);
        if (!played || !newline)
            break;
        text = newline + 1;
    }
    return 0;
}
