/* libFuzzer target for stored game records: game_record_from_json on
 * arbitrary bytes. A record it accepts must survive game_record_to_json and
 * a second game_record_from_json with every field the same, and the text
 * written must be a fixed point (writing the re-read record gives it again). */
#include <string.h>

#include "../../rules/rules.h"
#include "../../store/game_record.h"
#include "fuzz.h"

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc;
    (void)argv;
    rules_init();
    return 0;
}

/* The first field in which two records differ, or NULL when none does
 * (version is not part of the JSON and capacity is not part of the value). */
static const char *record_difference(const game_record_t *a, const game_record_t *b)
{
    if (strcmp(a->id, b->id))
        return "id";
    if (a->created_at_ms != b->created_at_ms)
        return "created_at_ms";
    if (a->updated_at_ms != b->updated_at_ms)
        return "updated_at_ms";
    if (a->chess960 != b->chess960)
        return "chess960";
    if (strcmp(a->initial_fen, b->initial_fen))
        return "initial_fen";
    if (strcmp(a->fen, b->fen))
        return "fen";
    if (a->move_count != b->move_count)
        return "move_count";
    if (a->move_count && memcmp(a->moves, b->moves, sizeof *a->moves * (size_t)a->move_count))
        return "moves";
    if (strcmp(a->status, b->status))
        return "status";
    if (strcmp(a->result, b->result))
        return "result";
    if (strcmp(a->termination, b->termination))
        return "termination";
    for (int c = 0; c < COLOR_COUNT; c++)
        if (strcmp(a->players[c].name, b->players[c].name) || strcmp(a->players[c].token_hash, b->players[c].token_hash))
            return c == WHITE ? "players.white" : "players.black";
    if (a->draw_offer != b->draw_offer)
        return "draw_offer";
    return NULL;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    /* An exact-size copy, so ASan catches any read past `size`. */
    char *text = malloc(size ? size : 1);
    if (!text)
        return 0;
    memcpy(text, data, size);
    game_record_t first, second;
    bool accepted = game_record_from_json(&first, text, size);
    free(text);
    if (!accepted) {
        FUZZ_CHECK(first.moves == NULL && first.move_count == 0, "a refused record kept %d moves", first.move_count);
        return 0;
    }
    FUZZ_CHECK(first.move_count >= 0 && first.move_count <= GAME_MAX_PLIES, "move_count %d", first.move_count);
    FUZZ_CHECK(first.draw_offer >= -1 && first.draw_offer <= 1, "draw_offer %d", first.draw_offer);
    size_t length = 0;
    char *json = game_record_to_json(&first, &length);
    FUZZ_CHECK(json != NULL, "game_record_to_json refused an accepted record (initial_fen \"%s\")", first.initial_fen);
    FUZZ_CHECK(length == strlen(json), "length %zu but the text has %zu bytes", length, strlen(json));
    FUZZ_CHECK(game_record_from_json(&second, json, length), "game_record_from_json refuses its own output: %s", json);
    const char *field = record_difference(&first, &second);
    FUZZ_CHECK(field == NULL, "field %s changed through game_record_to_json: %s", field, json);
    size_t length_again = 0;
    char *again = game_record_to_json(&second, &length_again);
    FUZZ_CHECK(again && length_again == length && !memcmp(again, json, length),
               "game_record_to_json is not a fixed point:\n  %s\n  %s", json, again ? again : "(null)");
    free(again);
    free(json);
    game_record_free(&first);
    game_record_free(&second);
    game_record_free(NULL);
    return 0;
}
