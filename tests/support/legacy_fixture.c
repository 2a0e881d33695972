/* Loading of the legacy record fixtures (see legacy_fixture.h) with cJSON. */
#include "legacy_fixture.h"

#include <cjson/cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const char *const legacy_fixture_paths[LEGACY_FIXTURE_COUNT] = {
    "tests/data/legacy_game.json",
    "tests/data/legacy_game_checkmate.json",
    "tests/data/legacy_game_chess960_resigned.json",
};

/* The whole file as a malloc'd, terminated text; NULL when it cannot be read. */
static char *read_file(const char *path, size_t *length)
{
    FILE *file = fopen(path, "rb");
    if (!file)
        return NULL;
    char *text = NULL;
    long size = fseek(file, 0, SEEK_END) == 0 ? ftell(file) : -1;
    if (size >= 0 && fseek(file, 0, SEEK_SET) == 0 && (text = malloc((size_t)size + 1))) {
        if (fread(text, 1, (size_t)size, file) == (size_t)size) {
            text[size] = '\0';
            *length = (size_t)size;
        } else {
            free(text);
            text = NULL;
        }
    }
    fclose(file);
    return text;
}

/* Copies the string member key of object into out (size bytes); a JSON null
 * is "" when null_ok. */
static bool copy_member(const cJSON *object, const char *key, char *out, size_t size, bool null_ok)
{
    const cJSON *item = cJSON_GetObjectItemCaseSensitive(object, key);
    if (null_ok && cJSON_IsNull(item)) {
        out[0] = '\0';
        return true;
    }
    if (!cJSON_IsString(item) || strlen(item->valuestring) >= size)
        return false;
    strcpy(out, item->valuestring);
    return true;
}

/* The value of a name member (as game_*_from_name), -1 when it is none; a
 * JSON null is null_value. */
static int name_member(const cJSON *object, const char *key, int (*from_name)(const char *, size_t), int null_value)
{
    const cJSON *item = cJSON_GetObjectItemCaseSensitive(object, key);
    if (cJSON_IsNull(item))
        return null_value;
    return cJSON_IsString(item) ? from_name(item->valuestring, strlen(item->valuestring)) : -1;
}

static bool read_moves(const cJSON *moves, legacy_fixture_t *f)
{
    if (!cJSON_IsArray(moves) || cJSON_GetArraySize(moves) > LEGACY_FIXTURE_MOVES_MAX)
        return false;
    f->plies = 0;
    for (const cJSON *m = moves->child; m; m = m->next, f->plies++)
        if (!copy_member(m, "uci", f->uci[f->plies], UCI_BUFFER_SIZE, false)
            || !copy_member(m, "san", f->san[f->plies], SAN_BUFFER_SIZE, false))
            return false;
    return true;
}

static bool read_fixture(const cJSON *root, legacy_fixture_t *f)
{
    const cJSON *fields = cJSON_GetObjectItemCaseSensitive(root, "hgetall");
    const cJSON *expected = cJSON_GetObjectItemCaseSensitive(root, "expected");
    const cJSON *data = cJSON_GetObjectItemCaseSensitive(fields, "data");
    const cJSON *chess960 = cJSON_GetObjectItemCaseSensitive(expected, "chess960");
    const cJSON *plies = cJSON_GetObjectItemCaseSensitive(expected, "plies");
    char version[24];
    if (!copy_member(root, "key", f->key, sizeof f->key, false) || strncmp(f->key, "chessd:game:", 12)
        || strlen(f->key + 12) >= sizeof f->id || !copy_member(fields, "version", version, sizeof version, false)
        || !cJSON_IsString(data) || !cJSON_IsBool(chess960) || !cJSON_IsNumber(plies)
        || !copy_member(expected, "initial_fen", f->initial_fen, sizeof f->initial_fen, false)
        || !copy_member(expected, "fen", f->fen, sizeof f->fen, false)
        || !read_moves(cJSON_GetObjectItemCaseSensitive(expected, "moves"), f) || plies->valueint != f->plies
        || !copy_member(expected, "white", f->names[WHITE], sizeof f->names[WHITE], true)
        || !copy_member(expected, "black", f->names[BLACK], sizeof f->names[BLACK], true))
        return false;
    strcpy(f->id, f->key + 12);
    char *end;
    f->version = strtoull(version, &end, 10);
    f->chess960 = cJSON_IsTrue(chess960);
    int state = name_member(expected, "status", game_state_from_name, -1);
    int result = name_member(expected, "result", game_result_from_name, -1);
    int termination = name_member(expected, "termination", game_termination_from_name, GAME_TERMINATION_NONE);
    int offer = name_member(expected, "draw_offer", game_offer_from_name, GAME_OFFER_NONE);
    if (*end || !f->version || state < 0 || result < 0 || termination < 0 || offer < 0)
        return false;
    f->state = (game_state_t)state;
    f->result = (game_result_t)result;
    f->termination = (game_termination_t)termination;
    f->draw_offer = (game_offer_t)offer;
    f->data_length = strlen(data->valuestring);
    f->data = malloc(f->data_length + 1);
    if (!f->data)
        return false;
    memcpy(f->data, data->valuestring, f->data_length + 1);
    return true;
}

bool legacy_fixture_load(const char *path, legacy_fixture_t *f)
{
    memset(f, 0, sizeof *f);
    size_t length = 0;
    char *text = read_file(path, &length);
    if (!text) {
        fprintf(stderr, "\n%s: cannot read it (the tests run from the repository root)\n", path);
        return false;
    }
    cJSON *root = cJSON_ParseWithLengthOpts(text, length, NULL, 0);
    bool ok = root && read_fixture(root, f);
    cJSON_Delete(root);
    free(text);
    if (!ok) {
        fprintf(stderr, "\n%s: not a legacy game fixture\n", path);
        legacy_fixture_free(f);
    }
    return ok;
}

void legacy_fixture_free(legacy_fixture_t *f)
{
    free(f->data);
    f->data = NULL;
    f->data_length = 0;
}
