/* libFuzzer target for the PGN reader (rules/pgn_read.c). Input: PGN text,
 * read under small limits, then again reading on past bad games. The reader
 * must stop with a status in range and a place inside the text; every move,
 * variations' too, legal and its SAN read back; tags within bounds; each
 * game reported once, in order; comments' commands read (pgn_comment.h). */
#include <string.h>

#include "../../rules/pgn_comment.h"
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

/* The second reading: every game ends once, read or failed, in order. */
typedef struct {
    int next_game; /* the index the next game must have */
    int read, failed;
    int max_depth;
} tree_seen_t;

static bool tree_node(void *ctx, int game, const pgn_read_node_t *node)
{
    tree_seen_t *s = ctx;
    FUZZ_CHECK(game == s->next_game, "node of game %d while reading game %d", game, s->next_game);
    FUZZ_CHECK(node->depth >= 0 && node->depth <= s->max_depth, "depth %d", node->depth);
    if (node->played->move != MOVE_NONE)
        FUZZ_CHECK(movegen_is_legal(node->before, node->played->move), "move %s is not legal", node->played->uci);
    else
        FUZZ_CHECK(node->depth > 0 && !strcmp(node->played->san, "--"), "a null move at depth %d", node->depth);
    return true;
}

static bool tree_comment(void *ctx, int game, int depth, const char *text, size_t length)
{
    tree_seen_t *s = ctx;
    (void)depth;
    FUZZ_CHECK(game == s->next_game, "comment of game %d while reading game %d", game, s->next_game);
    char out[128];
    pgn_comment_t c;
    FUZZ_CHECK(length < sizeof out, "a comment of %zu bytes", length);
    size_t n = pgn_comment_parse(text, length, &c, out);
    FUZZ_CHECK(n <= length && out[n] == '\0' && c.shape_count <= PGN_COMMENT_SHAPES_MAX, "comment text of %zu", n);
    char commands[PGN_COMMENT_COMMANDS_MAX];
    size_t k = pgn_comment_commands(&c, commands);
    pgn_comment_t again;
    char rest[PGN_COMMENT_COMMANDS_MAX];
    FUZZ_CHECK(pgn_comment_parse(commands, k, &again, rest) == 0, "commands written back leave text: '%s'", rest);
    FUZZ_CHECK(again.has_clock == c.has_clock && again.clock_ms == c.clock_ms && again.has_eval == c.has_eval
                   && again.eval == c.eval && again.shape_count == c.shape_count,
               "commands '%s' do not read back", commands);
    return true;
}

static bool tree_game(void *ctx, const pgn_read_game_t *done)
{
    tree_seen_t *s = ctx;
    FUZZ_CHECK(done->index == s->next_game, "game %d ended, %d expected", done->index, s->next_game);
    s->next_game++;
    s->read++;
    return true;
}

static bool tree_error(void *ctx, const pgn_read_error_t *e)
{
    tree_seen_t *s = ctx;
    FUZZ_CHECK(e->game == s->next_game, "game %d failed, %d expected", e->game, s->next_game);
    FUZZ_CHECK(e->status != PGN_READ_OK && e->message[0], "failed without a reason");
    FUZZ_CHECK(e->path_length >= 0 && e->path_length <= 2 * s->max_depth + 1, "a path of %d", e->path_length);
    s->next_game++;
    s->failed++;
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
    tree_seen_t tree = { 0, 0, 0, limits.max_depth };
    pgn_read_callbacks_t reading_on = { .game = tree_game, .node = tree_node, .comment = tree_comment,
                                        .error = tree_error };
    games = pgn_read((const char *)data, size, &limits, &reading_on, &tree, &error);
    if (games >= 0)
        FUZZ_CHECK(games == tree.read + tree.failed, "%d games, %d read and %d failed", games, tree.read, tree.failed);
    else
        FUZZ_CHECK(error.status == PGN_READ_ETOO_MANY_GAMES || error.status == PGN_READ_ENO_GAME,
                   "reading on stopped: %s", pgn_read_status_code(error.status));
    return 0;
}
