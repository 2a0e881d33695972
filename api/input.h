/* A request's inputs as handlers read them: the JSON body (through the
 * transport's strict reader, http/body.h, with chessd's depth bound), boolean
 * query parameters, and a body's Chess960 start number; a refusal is the
 * problem it becomes, written into res. */
#ifndef CHESSD_API_INPUT_H
#define CHESSD_API_INPUT_H

#include <cjson/cJSON.h>
#include <stdbool.h>

#include "../rules/opening.h"
#include "../rules/rules.h"
#include "http/request.h"

/* Parses req's body as a JSON object whose keys are all in `allowed`
 * (NULL-terminated). An empty body counts as {}. On failure res holds the
 * problem and NULL is returned. The caller owns the tree (cJSON_Delete). */
cJSON *input_object(const api_request_t *req, const char *const *allowed, api_response_t *res);

/* Whether every member of object (named `path` in problems, "clock" or
 * "clock.white") is one of `allowed` (NULL-terminated) and none repeats
 * an earlier one's name; false with res filled (400 unknown_field, or
 * invalid_json for a repeat, which cJSON would hide) when not. */
bool input_members(const cJSON *object, const char *path, const char *const *allowed, api_response_t *res);

/* Whether member of object repeats an earlier member's name (object named
 * `path` in the problem); true with res filled (400 invalid_json) when so.
 * For objects whose names are the client's own (a game's tags). */
bool input_member_repeated(const cJSON *object, const char *path, const cJSON *member, api_response_t *res);

/* Reads object's member key (absent: fallback; null is refused) as a whole number
 * in [min, max] into *out; false with res filled (400 invalid_field naming
 * "path.key" and the range) when it is anything else. */
bool input_whole(const cJSON *object, const char *path, const char *key, int64_t min, int64_t max, int64_t fallback,
                 int64_t *out, api_response_t *res);

/* Reads root's "ids", an array of 1 to max game ids, into list (pointers
 * into root), each once, in the order first named; *count how many. False,
 * with the problem in res, for anything else. */
bool input_game_ids(const cJSON *root, int max, const char **list, int *count, api_response_t *res);

/* Reads query parameter `name` as true/1 or false/0 into *out (fallback
 * when absent); false with res filled (400) for any other value. */
bool input_query_bool(const api_request_t *req, const char *name, bool fallback, bool *out, api_response_t *res);

/* Reads query parameter `name` as a whole number from min to max into *out
 * (fallback when absent): decimal digits only, no sign; false with res
 * filled (400 invalid_parameter, naming the bounds) otherwise. */
bool input_query_uint(const api_request_t *req, const char *name, unsigned min, unsigned max, unsigned fallback,
                      unsigned *out, api_response_t *res);

/* Reads a body's optional "chess960_position" (a Chess960 start by its
 * number): *number is 0..959, or -1 when absent or null. False with res
 * filled when it is no start number (400 invalid_chess960_position) or comes
 * with a "fen" or "chess960": false (400 conflicting_fields). The types of
 * "fen" and "chess960" are the caller's to check. */
bool input_chess960_position(const cJSON *root, int *number, api_response_t *res);

/* Reads a variant's name (NULL: standard chess) into *variant, setting
 * *chess960 for "chess960"; then checks it against a "chess960" flag the
 * request also gave (*chess960 on entry): Chess960 goes with standard
 * chess only. False with res filled: 400 invalid_variant for an unknown
 * name, 400 conflicting_fields for a variant with chess960. */
bool input_variant(const char *name, variant_t *variant, bool *chess960, api_response_t *res);
/* input_variant for a query's "variant" and "chess960" parameters. */
bool input_query_variant(const api_request_t *req, variant_t *variant, bool *chess960, api_response_t *res);
/* Reads a body's optional "variant" (string), "fen" (string), "chess960"
 * (bool) and "chess960_position" into *pos: the variant's start when no
 * FEN is given. False with res filled when they are wrong or the FEN is
 * not valid in the variant. */
bool input_position(const cJSON *root, position_t *pos, api_response_t *res);
/* Parses fen (NULL: the variant's start) into *pos; false with res filled. */
bool input_fen(const char *fen, bool chess960, variant_t variant, position_t *pos, api_response_t *res);

/* Moves read and played: moves[i] was played in the position whose key is
 * history[i]; count of them. Both arrays malloc'd (input_played_free). */
typedef struct {
    move_t *moves;
    uint64_t *history;
    int count;
    const opening_t *opening; /* the opening the line is in at its end (rules/opening.h), NULL: none */
} input_played_t;

/* Called for each move before it is played, with the position it is played in. */
typedef void (*input_move_fn)(void *ctx, const position_t *before, move_t move);

/* Reads a body's "moves" (an array of UCI or SAN strings, at most
 * CONFIG_MAX_MOVES; absent allowed unless required) and plays them on
 * *pos, each checked in turn (a move after the game ended is refused).
 * False with res filled (and nothing in *out) on the first bad one. */
bool input_play_moves(const cJSON *root, bool required, position_t *pos, input_played_t *out, input_move_fn fn,
                      void *ctx, api_response_t *res);
void input_played_free(input_played_t *played);

#endif
