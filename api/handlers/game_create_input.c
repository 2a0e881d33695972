/* A creation request's body read into the service's game_svc_new_t
 * (game_create_input.h): the players' names, the start (a FEN, a variant,
 * a Chess960 start or a PGN game), the takeback policy, the computer's
 * side and strength, tags and metadata, the spectator delay; the clock and rules through
 * clock_input.c. Each refusal is the problem that names its field. */
#include "game_create_input.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "../../rules/base/utf8.h"
#include "../../rules/game_view.h"
#include "../../rules/rules.h"
#include "../../store/game_meta.h"
#include "../../store/game_record.h"
#include "../engine/levels.h"
#include "../game/tokens.h"
#include "../input.h"
#include "../problem.h"
#include "clock_input.h"

/* Unix milliseconds now: a creation's start time is judged against it. */
static int64_t wall_ms(void)
{
    struct timespec now;
    clock_gettime(CLOCK_REALTIME, &now);
    return (int64_t)now.tv_sec * 1000 + now.tv_nsec / 1000000;
}

static bool read_name(const cJSON *root, const char *key, char *out, api_response_t *res)
{
    const cJSON *item = cJSON_GetObjectItemCaseSensitive(root, key);
    out[0] = '\0';
    if (!item || cJSON_IsNull(item))
        return true;
    char detail[96];
    if (!cJSON_IsString(item) || utf8_length(item->valuestring) > GAME_NAME_CHARS
        || strlen(item->valuestring) > GAME_NAME_MAX) {
        snprintf(detail, sizeof detail, "'%s' must be a string of at most %d characters", key, GAME_NAME_CHARS);
        api_problem(res, API_EINVALID_FIELD, detail, NULL, NULL);
        return false;
    }
    if (!game_record_name_ok(item->valuestring)) {
        snprintf(detail, sizeof detail, "'%s' must not contain control characters", key);
        api_problem(res, API_EINVALID_FIELD, detail, NULL, NULL);
        return false;
    }
    strcpy(out, item->valuestring);
    return true;
}

/* The creation's takeback policy ("takeback": agreement, free or none;
 * agreement when absent); false with res filled when refused. */
static bool read_takeback_policy(const cJSON *root, game_svc_new_t *spec, api_response_t *res)
{
    const cJSON *policy = cJSON_GetObjectItemCaseSensitive(root, "takeback");
    spec->takeback = GAME_TAKEBACK_AGREEMENT;
    if (policy && !cJSON_IsNull(policy)) {
        int value = cJSON_IsString(policy) ? game_takeback_from_name(policy->valuestring, strlen(policy->valuestring))
                                           : -1;
        if (value < 0) {
            api_problem(res, API_EINVALID_FIELD, "'takeback' must be agreement, free or none", NULL, NULL);
            return false;
        }
        spec->takeback = (game_takeback_t)value;
    }
    return true;
}

/* The Chess960 start a creation request asks for: *number is
 * "chess960_position" (0..959), a random start for "chess960": true without a
 * "fen", or -1 when the request gives its position another way (or none).
 * False with res filled when the number is no start or contradicts "fen" or
 * "chess960": false. Types of "fen" and "chess960" are checked before. */
static bool read_chess960_start(const cJSON *root, int *number, api_response_t *res)
{
    const cJSON *fen = cJSON_GetObjectItemCaseSensitive(root, "fen");
    if (!input_chess960_position(root, number, res))
        return false;
    bool random = cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(root, "chess960")) && !(fen && !cJSON_IsNull(fen));
    if (*number >= 0 || !random)
        return true;
    uint32_t drawn;
    if (!tokens_random_below(CHESS960_COUNT, &drawn)) {
        api_problem(res, API_EINTERNAL, "no randomness for a Chess960 start", NULL, NULL);
        return false;
    }
    *number = (int)drawn;
    return true;
}

/* The game's variant ("variant", standard when absent); chess960 and a
 * Chess960 start go with standard chess only. */
static bool read_variant(const cJSON *root, variant_t *variant, bool *chess960, api_response_t *res)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(root, "variant");
    const cJSON *c = cJSON_GetObjectItemCaseSensitive(root, "chess960");
    const cJSON *number = cJSON_GetObjectItemCaseSensitive(root, "chess960_position");
    *chess960 = cJSON_IsTrue(c);
    if (v && !cJSON_IsNull(v) && !cJSON_IsString(v)) {
        api_problem(res, API_EINVALID_FIELD, "'variant' must be a string", NULL, NULL);
        return false;
    }
    bool named = v && cJSON_IsString(v);
    if (!input_variant(named ? v->valuestring : NULL, variant, chess960, res))
        return false;
    if (*variant != VARIANT_STANDARD && number && !cJSON_IsNull(number)) {
        api_problem(res, API_ECONFLICTING_FIELDS, "'chess960_position' is a Chess960 start, not a variant's", NULL,
                    NULL);
        return false;
    }
    if (named && *chess960 && cJSON_IsFalse(c)) {
        api_problem(res, API_ECONFLICTING_FIELDS, "'variant' chess960 with 'chess960': false", NULL, NULL);
        return false;
    }
    return true;
}

/* The start position: a Chess960 start, "fen" (in the variant), or the
 * variant's start. */
static bool read_start(const cJSON *root, position_t *pos, api_response_t *res)
{
    const cJSON *fen = cJSON_GetObjectItemCaseSensitive(root, "fen");
    variant_t variant;
    bool chess960;
    int number;
    if (!read_variant(root, &variant, &chess960, res) || !read_chess960_start(root, &number, res))
        return false;
    if (number < 0 && chess960 && !cJSON_IsString(fen)) { /* "variant": "chess960" alone: a random start */
        uint32_t drawn;
        if (!tokens_random_below(CHESS960_COUNT, &drawn)) {
            api_problem(res, API_EINTERNAL, "no randomness for a Chess960 start", NULL, NULL);
            return false;
        }
        number = (int)drawn;
    }
    if (number >= 0) {
        (void)chess960_start(number, pos); /* in range: read_chess960_start() checked */
        return true;
    }
    return input_fen(cJSON_IsString(fen) ? fen->valuestring : NULL, chess960, variant, pos, res);
}

/* A creation's "pgn" (one game; absent or null: none). It sets the start
 * through its FEN and Variant tags, so no start field may come with it. */
static bool read_pgn(const cJSON *root, game_svc_new_t *spec, api_response_t *res)
{
    const cJSON *pgn = cJSON_GetObjectItemCaseSensitive(root, "pgn");
    if (!pgn || cJSON_IsNull(pgn))
        return true;
    if (!cJSON_IsString(pgn)) {
        api_problem(res, API_EINVALID_FIELD, "'pgn' must be a string holding one game", NULL, NULL);
        return false;
    }
    static const char *const start_fields[] = { "fen", "chess960", "chess960_position", "variant" };
    for (size_t i = 0; i < sizeof start_fields / sizeof start_fields[0]; i++) {
        const cJSON *field = cJSON_GetObjectItemCaseSensitive(root, start_fields[i]);
        if (field && !cJSON_IsNull(field)) {
            char detail[160];
            snprintf(detail, sizeof detail,
                     "give 'pgn' or '%s', not both: the PGN's FEN and Variant tags set the start", start_fields[i]);
            api_problem(res, API_ECONFLICTING_FIELDS, detail, NULL, NULL);
            return false;
        }
    }
    spec->pgn = pgn->valuestring;
    spec->pgn_length = strlen(pgn->valuestring);
    return true;
}

/* The new game a creation request asks for; false with res filled when refused. */
/* A whole number in [min, max] under key in object (absent: *out stays 0);
 * false with res filled when it is not. */
static bool read_int_field(const cJSON *object, const char *key, int min, int max, int *out, api_response_t *res)
{
    const cJSON *item = cJSON_GetObjectItemCaseSensitive(object, key);
    if (!item || cJSON_IsNull(item))
        return true;
    if (!cJSON_IsNumber(item) || item->valuedouble != (double)(int)item->valuedouble || item->valuedouble < min
        || item->valuedouble > max) {
        char detail[120];
        snprintf(detail, sizeof detail, "'engine.%s' must be a whole number from %d to %d", key, min, max);
        api_problem(res, API_EINVALID_FIELD, detail, NULL, NULL);
        return false;
    }
    *out = (int)item->valuedouble;
    return true;
}

/* "engine": {"level": 1..8 | "elo": N, "color": "white" | "black" |
 * "random"} (the side the computer plays; random by default) and
 * "analysis": true|false. The computer's side is named for its strength. */
static bool read_engine(const cJSON *root, game_svc_new_t *spec, api_response_t *res)
{
    static const char *const members[] = { "level", "elo", "color", NULL };
    const cJSON *analysis = cJSON_GetObjectItemCaseSensitive(root, "analysis");
    if (analysis && !cJSON_IsNull(analysis) && !cJSON_IsBool(analysis)) {
        api_problem(res, API_EINVALID_FIELD, "'analysis' must be true or false", NULL, NULL);
        return false;
    }
    spec->analysis = cJSON_IsTrue(analysis);
    const cJSON *engine = cJSON_GetObjectItemCaseSensitive(root, "engine");
    if (!engine || cJSON_IsNull(engine))
        return true;
    if (!cJSON_IsObject(engine)) {
        api_problem(res, API_EINVALID_FIELD, "'engine' must be an object: {\"level\": 1..8, \"color\": \"black\"}",
                    NULL, NULL);
        return false;
    }
    if (!input_members(engine, "engine", members, res))
        return false;
    int level = 0, elo = 0;
    if (!read_int_field(engine, "level", LEVEL_MIN, LEVEL_MAX, &level, res)
        || !read_int_field(engine, "elo", level_elo_min, level_elo_max, &elo, res))
        return false;
    if ((level != 0) == (elo != 0)) {
        api_problem(res, level ? API_ECONFLICTING_FIELDS : API_EINVALID_FIELD,
                    "'engine' takes one of 'level' (1 to 8) and 'elo'", NULL, NULL);
        return false;
    }
    const cJSON *color = cJSON_GetObjectItemCaseSensitive(engine, "color");
    const char *side = cJSON_IsString(color) ? color->valuestring : color && !cJSON_IsNull(color) ? "" : "random";
    color_t plays;
    bool drawn = !strcmp(side, "random");
    if (drawn) {
        uint32_t coin;
        if (!tokens_random_below(2, &coin)) {
            api_problem(res, API_EINTERNAL, "no randomness for the colour", NULL, NULL);
            return false;
        }
        plays = coin ? WHITE : BLACK;
    } else if (!strcmp(side, "white") || !strcmp(side, "black")) {
        plays = !strcmp(side, "white") ? WHITE : BLACK;
    } else {
        api_problem(res, API_EINVALID_FIELD, "'engine.color' must be white, black or random", NULL, NULL);
        return false;
    }
    /* With a colour drawn, a name given for either side could be the
     * computer's: refused whatever the draw, not on the toss of a coin. */
    if (spec->names[plays][0] || (drawn && spec->names[(color_t)!plays][0])) {
        api_problem(res, API_ECONFLICTING_FIELDS,
                    drawn ? "the computer's colour is drawn at random and its side is named by its strength: name "
                            "neither side, or give 'engine.color'"
                          : "the computer's side is named by its strength: leave out its name",
                    NULL, NULL);
        return false;
    }
    level_t lv;
    if (!(level ? level_of(level, &lv) : level_of_elo(elo, &lv))) {
        api_problem(res, API_EINVALID_FIELD, "no such strength", NULL, NULL);
        return false;
    }
    level_name(&lv, spec->names[plays], sizeof spec->names[plays]);
    spec->engine = (game_engine_t){ .plays = true, .color = plays, .level = level, .elo = elo };
    return true;
}

/* A tag the checks refused: too_many_tags for one past the bound, else
 * invalid_tag naming it. */
static void tag_problem(api_response_t *res, game_tag_status_t status, const char *name, const char *detail)
{
    if (status == GAME_TAG_ETOO_MANY)
        api_problem_limit(res, API_ETOO_MANY_TAGS, detail, "tags", GAME_TAGS_CUSTOM_MAX);
    else
        api_problem_tag(res, detail, name);
}

/* "tags": an object of tag names to strings (absent or null: none), each
 * checked as game_meta.h says, into meta. */
static bool read_tags(const cJSON *root, game_meta_t *meta, api_response_t *res)
{
    const cJSON *tags = cJSON_GetObjectItemCaseSensitive(root, "tags");
    if (!tags || cJSON_IsNull(tags))
        return true;
    if (!cJSON_IsObject(tags)) {
        api_problem(res, API_EINVALID_FIELD, "'tags' must be an object of PGN tag names to strings", NULL, NULL);
        return false;
    }
    char detail[200];
    for (const cJSON *tag = tags->child; tag; tag = tag->next) {
        if (input_member_repeated(tags, "tags", tag, res))
            return false;
        if (!cJSON_IsString(tag)) {
            snprintf(detail, sizeof detail, "tag '%.40s' must be a string", tag->string);
            api_problem_tag(res, detail, tag->string);
            return false;
        }
        game_tag_status_t status = game_meta_set_tag(meta, tag->string, tag->valuestring,
                                                     strlen(tag->valuestring), detail, sizeof detail);
        if (status != GAME_TAG_OK) {
            tag_problem(res, status, tag->string, detail);
            return false;
        }
    }
    return true;
}

/* "metadata": any JSON object of at most GAME_METADATA_MAX bytes as compact
 * JSON (absent or null: none), into meta. */
static bool read_metadata(const cJSON *root, game_meta_t *meta, api_response_t *res)
{
    const cJSON *metadata = cJSON_GetObjectItemCaseSensitive(root, "metadata");
    if (!metadata || cJSON_IsNull(metadata))
        return true;
    char detail[200] = "";
    switch (game_meta_set_metadata(meta, metadata, detail, sizeof detail)) {
    case GAME_METADATA_OK: return true;
    case GAME_METADATA_ETOO_LARGE:
        api_problem_limit(res, API_EMETADATA_TOO_LARGE, detail, "metadata", GAME_METADATA_MAX);
        return false;
    case GAME_METADATA_EREPEATED: api_problem(res, API_EINVALID_JSON, detail, NULL, NULL); return false;
    case GAME_METADATA_ENOMEM: api_problem(res, API_EINTERNAL, "out of memory", NULL, NULL); return false;
    default: api_problem(res, API_EINVALID_METADATA, detail, NULL, NULL); return false;
    }
}

/* The creation's "tags" and "metadata" into spec->meta (made here when
 * either is given; the caller frees it). */
static bool read_meta(const cJSON *root, game_meta_t **meta, api_response_t *res)
{
    const cJSON *tags = cJSON_GetObjectItemCaseSensitive(root, "tags");
    const cJSON *metadata = cJSON_GetObjectItemCaseSensitive(root, "metadata");
    if ((!tags || cJSON_IsNull(tags)) && (!metadata || cJSON_IsNull(metadata)))
        return true;
    if (!(*meta = game_meta_new())) {
        api_problem(res, API_EINTERNAL, "out of memory", NULL, NULL);
        return false;
    }
    return read_tags(root, *meta, res) && read_metadata(root, *meta, res);
}

/* "spectator_delay_plies": 0..GAME_VIEW_DELAY_MAX plies (absent or null:
 * the server's default, -1 here). */
static bool read_spectator_delay(const cJSON *root, game_svc_new_t *spec, api_response_t *res)
{
    const cJSON *item = cJSON_GetObjectItemCaseSensitive(root, "spectator_delay_plies");
    spec->spectator_delay_plies = -1;
    if (!item || cJSON_IsNull(item))
        return true;
    if (!cJSON_IsNumber(item) || item->valuedouble < 0 || item->valuedouble > GAME_VIEW_DELAY_MAX
        || item->valuedouble != (double)(int)item->valuedouble) {
        api_problem(res, API_EINVALID_FIELD, "'spectator_delay_plies' must be a whole number of plies from 0 to 20",
                    NULL, NULL);
        return false;
    }
    spec->spectator_delay_plies = (int)item->valuedouble;
    return true;
}

bool game_create_input_pairing(const cJSON *entry, char names[COLOR_COUNT][GAME_NAME_MAX + 1], game_meta_t **meta,
                               api_response_t *res)
{
    return read_name(entry, "white", names[WHITE], res) && read_name(entry, "black", names[BLACK], res)
           && read_meta(entry, meta, res);
}

bool game_create_input_read(const cJSON *root, game_svc_new_t *spec, api_response_t *res)
{
    const cJSON *fen = cJSON_GetObjectItemCaseSensitive(root, "fen");
    const cJSON *chess960 = cJSON_GetObjectItemCaseSensitive(root, "chess960");
    if ((fen && !cJSON_IsNull(fen) && !cJSON_IsString(fen))
        || (chess960 && !cJSON_IsNull(chess960) && !cJSON_IsBool(chess960))) {
        api_problem(res, API_EINVALID_FIELD, "'fen' must be a string and 'chess960' true or false", NULL, NULL);
        return false;
    }
    return read_name(root, "white", spec->names[WHITE], res) && read_name(root, "black", spec->names[BLACK], res)
           && read_takeback_policy(root, spec, res) && clock_input_read(root, wall_ms(), spec, res)
           && read_start(root, &spec->start, res) && read_pgn(root, spec, res)
           && read_engine(root, spec, res) && read_meta(root, &spec->meta, res)
           && read_spectator_delay(root, spec, res);
}

