/* Records of the first storage format saved as test fixtures
 * (tests/data/legacy_game*.json): chessd at c8df95b wrote each one to a
 * private Redis; a fixture holds its key's HGETALL (version and data, byte
 * for byte) and what that chessd answered to GET /v1/games/{id}. The loaded
 * value owns its data text: free it with legacy_fixture_free(). */
#ifndef CHESSD_TESTS_SUPPORT_LEGACY_FIXTURE_H
#define CHESSD_TESTS_SUPPORT_LEGACY_FIXTURE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "../../store/game_record.h"

enum { LEGACY_FIXTURE_COUNT = 3, LEGACY_FIXTURE_MOVES_MAX = 64 };

/* The fixtures, relative to the repository root (where the tests run). */
extern const char *const legacy_fixture_paths[LEGACY_FIXTURE_COUNT];

typedef struct {
    char key[64];                 /* chessd:game:<id> */
    char id[GAME_ID_SIZE];
    uint64_t version;
    char *data;                   /* the record's JSON as stored (malloc'd, terminated) */
    size_t data_length;
    /* What the old chessd answered: */
    bool chess960;
    char initial_fen[FEN_BUFFER_SIZE], fen[FEN_BUFFER_SIZE];
    int plies;
    char uci[LEGACY_FIXTURE_MOVES_MAX][UCI_BUFFER_SIZE];
    char san[LEGACY_FIXTURE_MOVES_MAX][SAN_BUFFER_SIZE];
    game_state_t state;
    game_result_t result;
    game_termination_t termination;
    game_offer_t draw_offer;
    char names[COLOR_COUNT][GAME_NAME_MAX + 1]; /* "" for none */
} legacy_fixture_t;

/* Reads the fixture at path into f; false (with the reason on stderr) when
 * it cannot be read or does not have the expected shape. */
bool legacy_fixture_load(const char *path, legacy_fixture_t *f);

/* Frees f's data; safe on a zeroed or already freed fixture. */
void legacy_fixture_free(legacy_fixture_t *f);

#endif
