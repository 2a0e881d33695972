/* libFuzzer target for the PGN reader (rules/pgn_read.c). Input: PGN text,
 * read under small limits so that every bound is reached. Whatever the
 * text, the reader must stop with a status in range and a place inside the
 * text. Every move it reports must be legal before it and its SAN read back
 * to it; every tag value must fit its bound; games come numbered in order. */
#include <string.h>

#include "../../rules/pgn_read.h"
#include "../../rules/rules.h"
#include "fuzz.h"

typedef struct {
    const pgn_read_limits_t *limits;
    int games, plies;
} seen_t;

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc;
    (void)argv;
    rules_init();
    return 0;
}

static bool on_tag(void *ctx, int game, const char *name, const char *value, size_t length)
{
    seen_t *s = ctx;
    FUZZ_CHECK(game == s->games, "tag of game %d while reading game %d", game, s->games);
    FUZZ_CHECK(length <= (size_t)s->limits->max_tag_value && strlen(value) <= length,
               "tag %s: value of %zu bytes", name, length);
    FUZZ_CHECK(name[0] != '\0' && strlen(name) <= PGN_READ_TAG_NAME_MAX, "tag name '%s'", name);
    return true;
}

static bool on_move(void *ctx, int game, const position_t *before, const game_played_t *played)
{
    seen_t *s = ctx;
    FUZZ_CHECK(game == s->games, "move of game %d while reading game %d", game, s->games);
    FUZZ_CHECK(movegen_is_legal(before, played->move), "move %s is not legal", played->uci);
    move_t again = MOVE_NONE;
    char message[200];
    FUZZ_CHECK(san_parse(before, played->san, strlen(played->san), &again, message, sizeof message) == LEGALITY_OK
                   && again == played->move,
               "SAN %s does not read back: %s", played->san, message);
    FUZZ_CHECK(++s->plies <= s->limits->max_plies, "%d plies", s->plies);
    return true;
}

static bool on_game(void *ctx, const pgn_read_game_t *done)
{
    seen_t *s = ctx;
    FUZZ_CHECK(done->index == s->games, "game %d ended while reading game %d", done->index, s->games);
    FUZZ_CHECK(done->game->ply_count == s->plies, "game of %d plies, %d reported", done->game->ply_count, s->plies);
    s->games++;
    s->plies = 0;
    return true;
}

/* The place reading stopped at: line and column from 1, the line no
 * further than the text has. */
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    pgn_read_limits_t limits;
    pgn_read_default_limits(&limits);
    limits.max_games = 8;
    limits.max_plies = 60;
    limits.max_tags = 6;
    limits.max_tag_value = 40;
    limits.max_depth = 4;
    limits.max_comment = 64;
    seen_t seen = { &limits, 0, 0 };
    pgn_read_callbacks_t callbacks = { .tag = on_tag, .move = on_move, .game = on_game };
    pgn_read_error_t error;
    int games = pgn_read((const char *)data, size, &limits, &callbacks, &seen, &error);
    int lines = 1;
    for (size_t i = 0; i < size; i++) /* a line ends at LF, CRLF or a lone CR */
        lines += data[i] == '\n' || (data[i] == '\r' && (i + 1 == size || data[i + 1] != '\n'));
    FUZZ_CHECK((unsigned)error.status < PGN_READ_ERROR_COUNT, "status %d", (int)error.status);
    FUZZ_CHECK(error.line >= 1 && error.line <= lines && error.column >= 1, "place %d:%d in %d lines", error.line,
               error.column, lines);
    if (games >= 0) {
        FUZZ_CHECK(error.status == PGN_READ_OK && games == seen.games && games >= 1, "%d games, %d seen", games,
                   seen.games);
    } else {
        FUZZ_CHECK(error.status != PGN_READ_OK && error.message[0], "failed without a reason");
        FUZZ_CHECK(error.game >= seen.games && error.game <= limits.max_games, "error in game %d after %d", error.game,
                   seen.games);
    }
    return 0;
}
