/* libFuzzer target for stored games (store/game_record.c, game_meta.c). The
 * input is a state text, then a NUL and the history text (without a NUL all
 * state text): what game_record_read accepts must round-trip to a fixed
 * point. The whole input is also a record of the first format, converted
 * whole when accepted, and a tags and metadata text, whose reading must
 * write a text that reads back the same. */
#include <stdbool.h>
#include <string.h>

#include "../../rules/rules.h"
#include "../../store/game_meta.h"
#include "../../store/game_record.h"
#include "fuzz.h"

enum { HISTORY_TEXT_MAX = GAME_HISTORY_MAX * GAME_RECORD_HISTORY_ENTRY };

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc;
    (void)argv;
    rules_init();
    return 0;
}

/* An exact-size copy, so ASan catches any read past length. */
static char *copy(const uint8_t *data, size_t length)
{
    char *out = malloc(length ? length : 1);
    if (out && length)
        memcpy(out, data, length);
    return out;
}

/* The history text of g: its history_count entries. */
static size_t history_text(const game_t *g, char *out)
{
    for (int i = 0; i < g->history_count; i++)
        game_record_history_entry(g->history[i], out + i * GAME_RECORD_HISTORY_ENTRY);
    return (size_t)g->history_count * GAME_RECORD_HISTORY_ENTRY;
}

/* The first part in which two records differ, or NULL when none does. The
 * id and version are not in the state text; the history entries past
 * history_count are not part of the game. */
static const char *record_difference(const game_record_t *a, const game_record_t *b)
{
    const game_t *x = &a->game, *y = &b->game;
    if (a->created_at_ms != b->created_at_ms || a->updated_at_ms != b->updated_at_ms)
        return "times";
    for (int c = 0; c < COLOR_COUNT; c++)
        if (strcmp(a->players[c].name, b->players[c].name) || strcmp(a->players[c].token_hash, b->players[c].token_hash))
            return c == WHITE ? "white player" : "black player";
    if (a->engine.plays != b->engine.plays || a->engine.color != b->engine.color || a->engine.level != b->engine.level
        || a->engine.elo != b->engine.elo || a->analysis != b->analysis)
        return "computer player or analysis";
    if (memcmp(&x->initial, &y->initial, sizeof x->initial))
        return "initial position";
    if (memcmp(&x->pos, &y->pos, sizeof x->pos))
        return "position";
    if (memcmp(&x->status, &y->status, sizeof x->status))
        return "status";
    if (x->history_count != y->history_count
        || memcmp(x->history, y->history, sizeof x->history[0] * (size_t)x->history_count))
        return "history";
    if (x->ply_count != y->ply_count)
        return "ply_count";
    if (x->state != y->state || x->result != y->result || x->termination != y->termination
        || x->draw_offer != y->draw_offer)
        return "ending or offer";
    return NULL;
}

/* Writes r's state text, reads it back with r's history and checks the
 * result equals r and the text is a fixed point. what names the source. */
static void expect_round_trip(const game_record_t *r, const char *what)
{
    char state[GAME_RECORD_STATE_MAX], again[GAME_RECORD_STATE_MAX], history[HISTORY_TEXT_MAX];
    size_t length = game_record_state(r, state, sizeof state);
    FUZZ_CHECK(length > 0, "game_record_state cannot write a record %s accepted", what);
    size_t history_length = history_text(&r->game, history);
    game_record_t back;
    FUZZ_CHECK(game_record_read(&back, state, length, history, history_length),
               "game_record_read refuses the text of a record %s accepted:\n%.*s", what, (int)length, state);
    const char *part = record_difference(r, &back);
    FUZZ_CHECK(part == NULL, "the %s of a record %s accepted changed through its text:\n%.*s", part, what,
               (int)length, state);
    size_t again_length = game_record_state(&back, again, sizeof again);
    FUZZ_CHECK(again_length == length && !memcmp(again, state, length),
               "game_record_state is not a fixed point:\n%.*s\n--\n%.*s", (int)length, state, (int)again_length,
               again);
}

/* game_record_state of what game_record_read accepts reads back to an
 * equal record, and the text written is a fixed point. */
static void fuzz_state(const uint8_t *data, size_t size)
{
    const uint8_t *nul = memchr(data, '\0', size);
    size_t state_length = nul ? (size_t)(nul - data) : size;
    size_t history_length = nul ? size - state_length - 1 : 0;
    char *state = copy(data, state_length), *history = copy(data + size - history_length, history_length);
    if (state && history) {
        game_record_t r;
        if (game_record_read(&r, state, state_length, history, history_length)) {
            FUZZ_CHECK((size_t)r.game.history_count * GAME_RECORD_HISTORY_ENTRY == history_length,
                       "%d history entries kept of %zu bytes", r.game.history_count, history_length);
            expect_round_trip(&r, "game_record_read");
        }
    }
    free(state);
    free(history);
}

/* What game_record_from_legacy accepts comes with a move list and history
 * that fit the game, and gives a state text that reads back to an equal
 * record. */
static void fuzz_legacy(const uint8_t *data, size_t size)
{
    char *text = copy(data, size);
    if (!text)
        return;
    game_record_t r;
    char *moves = NULL, *history = NULL;
    size_t moves_length = 0, history_length = 0;
    bool accepted = game_record_from_legacy(&r, text, size, &moves, &moves_length, &history, &history_length);
    free(text);
    if (!accepted) {
        FUZZ_CHECK(moves == NULL && history == NULL, "a refused record left its move list or history allocated");
        return;
    }
    const game_t *g = &r.game;
    FUZZ_CHECK(history_length == (size_t)g->ply_count * GAME_RECORD_HISTORY_ENTRY,
               "%zu history bytes for %d plies", history_length, g->ply_count);
    FUZZ_CHECK(strlen(moves) == moves_length && strlen(history) == history_length, "lengths do not match the texts");
    char tail[HISTORY_TEXT_MAX];
    size_t tail_length = history_text(g, tail);
    FUZZ_CHECK(tail_length <= history_length && !memcmp(history + history_length - tail_length, tail, tail_length),
               "the game's %d history entries are not the tail of the %d written", g->history_count, g->ply_count);
    game_t replayed;
    FUZZ_CHECK(game_replay(&replayed, &g->initial, moves, moves_length, g->state, g->result, g->termination,
                           g->draw_offer) == GAME_OK,
               "the move list written does not replay: %s", moves);
    FUZZ_CHECK(replayed.ply_count == g->ply_count && !memcmp(&replayed.pos, &g->pos, sizeof g->pos),
               "the move list written does not reach the game's position");
    expect_round_trip(&r, "game_record_from_legacy");
    free(moves);
    free(history);
}

/* What game_meta_read accepts writes a text (game_meta_text) that reads
 * back to the same tags and metadata, and that text is a fixed point. */
static void fuzz_meta(const uint8_t *data, size_t size)
{
    char *text = copy(data, size);
    game_meta_t *meta = game_meta_new(), *back = game_meta_new();
    char *written = NULL, *again = NULL;
    size_t length = 0, again_length = 0;
    if (text && meta && back && game_meta_read(meta, text, size)) {
        FUZZ_CHECK(game_meta_text(meta, &written, &length), "game_meta_text failed");
        FUZZ_CHECK(game_meta_read(back, written ? written : "", length), "its own text is refused:\n%s", written);
        FUZZ_CHECK(back->count == meta->count, "%d tags, then %d", meta->count, back->count);
        for (int i = 0; i < meta->count; i++)
            FUZZ_CHECK(!strcmp(back->tags[i].name, meta->tags[i].name)
                           && !strcmp(back->tags[i].value, meta->tags[i].value),
                       "tag %d changed through its text", i);
        FUZZ_CHECK(!meta->metadata == !back->metadata
                       && (!meta->metadata || !strcmp(meta->metadata, back->metadata)),
                   "the metadata changed through its text:\n%s", written);
        FUZZ_CHECK(game_meta_text(back, &again, &again_length), "game_meta_text failed");
        FUZZ_CHECK(again_length == length && (!length || !memcmp(again, written, length)),
                   "game_meta_text is not a fixed point");
    }
    free(text);
    free(written);
    free(again);
    game_meta_free(meta);
    game_meta_free(back);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    fuzz_state(data, size);
    fuzz_legacy(data, size);
    fuzz_meta(data, size);
    return 0;
}
