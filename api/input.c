/* A request's inputs (input.h): the transport's body and query readers, their
 * statuses turned into problems. */
#include "input.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../rules/chess960.h"
#include "../rules/rules.h"
#include "config.h"
#include "game/tokens.h"
#include "http/body.h"
#include "problem.h"

/* A body status as the problem it is. */
static void body_problem(body_status_t status, const char *detail, api_response_t *res)
{
    static const api_status_t problems[BODY_STATUS_COUNT] = {
        [BODY_EMEDIA_TYPE] = API_EUNSUPPORTED_MEDIA_TYPE,
        [BODY_EINVALID_JSON] = API_EINVALID_JSON,
        [BODY_EUNKNOWN_FIELD] = API_EUNKNOWN_FIELD,
        [BODY_EINVALID_VALUE] = API_EINVALID_PARAMETER,
        [BODY_ENOMEM] = API_EINTERNAL,
    };
    api_problem(res, problems[status], status == BODY_ENOMEM ? "out of memory" : detail, NULL, NULL);
}

cJSON *input_object(const api_request_t *req, const char *const *allowed, api_response_t *res)
{
    char detail[160] = "";
    cJSON *root = NULL;
    body_status_t status = body_parse_object(req->body, req->body_length, api_request_header(req, "Content-Type"),
                                             CONFIG_MAX_JSON_DEPTH, allowed, &root, detail, sizeof detail);
    if (status != BODY_OK)
        body_problem(status, detail, res);
    return root;
}

bool input_query_bool(const api_request_t *req, const char *name, bool fallback, bool *out, api_response_t *res)
{
    char detail[96] = "";
    body_status_t status = body_bool(name, api_request_query(req, name), fallback, out, detail, sizeof detail);
    if (status != BODY_OK)
        body_problem(status, detail, res);
    return status == BODY_OK;
}

bool input_query_uint(const api_request_t *req, const char *name, unsigned min, unsigned max, unsigned fallback,
                      unsigned *out, api_response_t *res)
{
    const char *text = api_request_query(req, name);
    *out = fallback;
    if (!text)
        return true;
    size_t digits = strspn(text, "0123456789");
    unsigned long value = digits && digits <= 9 && !text[digits] ? strtoul(text, NULL, 10) : 0;
    bool ok = digits && !text[digits] && digits <= 9 && value >= min && value <= max;
    if (!ok) {
        char detail[160];
        snprintf(detail, sizeof detail, "query parameter '%.40s' must be a whole number from %u to %u", name, min, max);
        api_problem(res, API_EINVALID_PARAMETER, detail, NULL, NULL);
        return false;
    }
    *out = (unsigned)value;
    return true;
}

bool input_chess960_position(const cJSON *root, int *number, api_response_t *res)
{
    const cJSON *chosen = cJSON_GetObjectItemCaseSensitive(root, "chess960_position");
    *number = -1;
    if (!chosen || cJSON_IsNull(chosen))
        return true;
    double value = cJSON_IsNumber(chosen) ? chosen->valuedouble : -1;
    if (!(value >= 0 && value < CHESS960_COUNT && value == (double)(int)value)) {
        api_problem(res, API_EINVALID_CHESS960_POSITION,
                    "'chess960_position' must be a whole number from 0 to 959 (518 is the standard start)", NULL, NULL);
        return false;
    }
    const cJSON *fen = cJSON_GetObjectItemCaseSensitive(root, "fen");
    if ((fen && !cJSON_IsNull(fen)) || cJSON_IsFalse(cJSON_GetObjectItemCaseSensitive(root, "chess960"))) {
        api_problem(res, API_ECONFLICTING_FIELDS,
                    fen && !cJSON_IsNull(fen)
                        ? "give 'fen' or 'chess960_position', not both"
                        : "'chess960_position' starts a Chess960 game: leave out 'chess960' or set it true",
                    NULL, NULL);
        return false;
    }
    *number = (int)value;
    return true;
}

bool input_variant(const char *name, variant_t *variant, bool *chess960, api_response_t *res)
{
    bool named_960 = false;
    *variant = VARIANT_STANDARD;
    if (name && !variant_from_name(name, strlen(name), variant, &named_960)) {
        char detail[200];
        snprintf(detail, sizeof detail, "'%.32s' is not a variant; use one of standard, chess960, crazyhouse, "
                 "atomic, antichess, kingOfTheHill, threeCheck, horde, racingKings, seirawan", name);
        api_problem(res, API_EINVALID_VARIANT, detail, NULL, NULL);
        return false;
    }
    if (*chess960 && *variant != VARIANT_STANDARD) {
        api_problem(res, API_ECONFLICTING_FIELDS, "chess960 goes with standard chess only, not with a variant",
                    NULL, NULL);
        return false;
    }
    *chess960 = *chess960 || named_960;
    return true;
}

bool input_query_variant(const api_request_t *req, variant_t *variant, bool *chess960, api_response_t *res)
{
    const char *name = api_request_query(req, "variant");
    bool said_960 = api_request_query(req, "chess960") != NULL;
    if (!input_query_bool(req, "chess960", false, chess960, res))
        return false;
    if (said_960 && !*chess960 && name) {
        bool named_960 = false;
        variant_t v;
        if (variant_from_name(name, strlen(name), &v, &named_960) && named_960) {
            api_problem(res, API_ECONFLICTING_FIELDS, "variant chess960 with chess960=false", NULL, NULL);
            return false;
        }
    }
    return input_variant(name, variant, chess960, res);
}

/* Reads optional "fen" (string), "chess960" (bool) and "variant" (string)
 * members of a body. */
static bool body_fen(const cJSON *root, const char **fen, bool *chess960, variant_t *variant, api_response_t *res)
{
    const cJSON *f = cJSON_GetObjectItemCaseSensitive(root, "fen");
    const cJSON *c = cJSON_GetObjectItemCaseSensitive(root, "chess960");
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(root, "variant");
    *fen = NULL;
    *chess960 = false;
    if (f && !cJSON_IsNull(f)) {
        if (!cJSON_IsString(f)) {
            api_problem(res, API_EINVALID_FIELD, "'fen' must be a string", NULL, NULL);
            return false;
        }
        *fen = f->valuestring;
    }
    if (c && !cJSON_IsNull(c)) {
        if (!cJSON_IsBool(c)) {
            api_problem(res, API_EINVALID_FIELD, "'chess960' must be true or false", NULL, NULL);
            return false;
        }
        *chess960 = cJSON_IsTrue(c);
    }
    if (v && !cJSON_IsNull(v) && !cJSON_IsString(v)) {
        api_problem(res, API_EINVALID_FIELD, "'variant' must be a string", NULL, NULL);
        return false;
    }
    const char *name = v && cJSON_IsString(v) ? v->valuestring : NULL;
    bool named_960 = false;
    variant_t named;
    if (cJSON_IsFalse(c) && name && variant_from_name(name, strlen(name), &named, &named_960) && named_960) {
        api_problem(res, API_ECONFLICTING_FIELDS, "'variant' chess960 with 'chess960': false", NULL, NULL);
        return false;
    }
    return input_variant(name, variant, chess960, res);
}

bool input_position(const cJSON *root, position_t *pos, api_response_t *res)
{
    const char *fen;
    bool chess960;
    variant_t variant;
    int number;
    if (!body_fen(root, &fen, &chess960, &variant, res) || !input_chess960_position(root, &number, res))
        return false;
    if (number >= 0) {
        if (variant != VARIANT_STANDARD) {
            api_problem(res, API_ECONFLICTING_FIELDS, "'chess960_position' is a Chess960 start, not a variant's",
                        NULL, NULL);
            return false;
        }
        (void)chess960_start(number, pos); /* in range: input_chess960_position() checked */
        return true;
    }
    return input_fen(fen, chess960, variant, pos, res);
}

/* Each variant's start, parsed once: most requests without a FEN want it. */
static position_t start_positions[VARIANT_COUNT];
static void parse_starts(void)
{
    for (int v = 0; v < VARIANT_COUNT; v++)
        fen_start((variant_t)v, &start_positions[v]);
}

bool input_fen(const char *fen, bool chess960, variant_t variant, position_t *pos, api_response_t *res)
{
    static pthread_once_t once = PTHREAD_ONCE_INIT;
    char message[200];
    if (!fen && !chess960) {
        pthread_once(&once, parse_starts);
        *pos = start_positions[(unsigned)variant < VARIANT_COUNT ? variant : 0];
        return true;
    }
    if (!fen)
        fen = FEN_START;
    fen_error_t err = fen_parse_variant(fen, strlen(fen), variant, chess960 ? FEN_CHESS960 : 0, pos, message,
                                        sizeof message);
    if (err == FEN_OK)
        return true;
    api_problem_fen(res, err, message);
    return false;
}

bool input_play_moves(const cJSON *root, bool required, position_t *pos, input_played_t *out, input_move_fn fn,
                      void *ctx, api_response_t *res)
{
    *out = (input_played_t){ 0 };
    const cJSON *moves = cJSON_GetObjectItemCaseSensitive(root, "moves");
    if (!moves && !required)
        moves = NULL;
    else if (!cJSON_IsArray(moves)) {
        api_problem(res, API_EINVALID_FIELD, "'moves' must be an array of strings", NULL, NULL);
        return false;
    }
    int count = moves ? cJSON_GetArraySize(moves) : 0;
    if (count > CONFIG_MAX_MOVES) {
        char detail[96];
        snprintf(detail, sizeof detail, "%d moves sent; at most %d per request", count, CONFIG_MAX_MOVES);
        api_problem(res, API_ETOO_MANY_MOVES, detail, NULL, NULL);
        return false;
    }
    out->history = malloc(sizeof *out->history * (size_t)(count + 1));
    out->moves = malloc(sizeof *out->moves * (size_t)(count + 1));
    if (!out->history || !out->moves) {
        input_played_free(out);
        api_problem(res, API_EINTERNAL, "out of memory", NULL, NULL);
        return false;
    }
    out->opening = opening_at(pos);
    int index = 0;
    for (const cJSON *item = moves ? moves->child : NULL; item; item = item->next, index++) {
        if (!cJSON_IsString(item)) {
            char detail[96];
            snprintf(detail, sizeof detail, "moves[%d] must be a string", index);
            api_problem(res, API_EINVALID_FIELD, detail, NULL, NULL);
            input_played_free(out);
            return false;
        }
        move_t move = MOVE_NONE;
        char message[256], fen_now[FEN_BUFFER_SIZE];
        status_t before;
        status_evaluate(pos, out->history, (size_t)index, &before);
        legality_reason_t reason = LEGALITY_GAME_OVER;
        if (before.state == STATUS_ACTIVE)
            reason = notation_parse_move(pos, item->valuestring, strlen(item->valuestring), &move, message,
                                         sizeof message);
        else
            snprintf(message, sizeof message, "the game is over (%s)",
                     before.state == STATUS_DRAW ? status_draw_reason_name(before.draw_reason)
                                                 : status_state_name(before.state));
        if (reason != LEGALITY_OK) {
            api_problem_move(res, api_status_for_reason(reason), message, index, item->valuestring, reason,
                             fen_format(pos, fen_now, sizeof fen_now));
            input_played_free(out);
            return false;
        }
        if (fn)
            fn(ctx, pos, move);
        out->history[index] = pos->key;
        out->moves[index] = move;
        position_undo_t undo;
        position_make(pos, move, &undo);
        opening_follow(&out->opening, pos);
    }
    out->count = count;
    return true;
}

void input_played_free(input_played_t *played)
{
    free(played->history);
    free(played->moves);
    *played = (input_played_t){ 0 };
}

bool input_game_ids(const cJSON *root, int max, const char **list, int *count, api_response_t *res)
{
    const cJSON *ids = cJSON_GetObjectItemCaseSensitive(root, "ids");
    int size = cJSON_IsArray(ids) ? cJSON_GetArraySize(ids) : -1;
    char detail[128] = "";
    *count = 0;
    if (size < 1 || size > max)
        snprintf(detail, sizeof detail, "'ids' must be an array of 1 to %d game ids", max);
    int index = 0;
    for (const cJSON *item = detail[0] ? NULL : ids->child; item; item = item->next, index++) {
        if (!cJSON_IsString(item) || !tokens_is_id(item->valuestring)) {
            snprintf(detail, sizeof detail, "ids[%d] is not a game id: an id is " TOKENS_ID_FORM, index);
            break;
        }
        bool seen = false;
        for (int k = 0; k < *count && !seen; k++)
            seen = !strcmp(list[k], item->valuestring);
        if (!seen)
            list[(*count)++] = item->valuestring;
    }
    if (detail[0])
        api_problem(res, API_EINVALID_FIELD, detail, NULL, NULL);
    return !detail[0];
}

bool input_member_repeated(const cJSON *object, const char *path, const cJSON *member, api_response_t *res)
{
    for (const cJSON *earlier = object->child; earlier != member; earlier = earlier->next)
        if (!strcmp(earlier->string, member->string)) {
            char detail[256];
            snprintf(detail, sizeof detail, "field '%s.%.64s' appears twice", path, member->string);
            api_problem(res, API_EINVALID_JSON, detail, NULL, NULL);
            return true;
        }
    return false;
}

bool input_members(const cJSON *object, const char *path, const char *const *allowed, api_response_t *res)
{
    for (const cJSON *member = object->child; member; member = member->next) {
        bool known = false;
        for (int i = 0; allowed[i] && !known; i++)
            known = !strcmp(member->string, allowed[i]);
        if (!known) {
            char detail[256];
            int n = snprintf(detail, sizeof detail, "unknown field '%s.%.64s': it has", path, member->string);
            for (int i = 0; allowed[i] && n > 0 && (size_t)n < sizeof detail; i++)
                n += snprintf(detail + n, sizeof detail - (size_t)n, "%s '%s'", i ? "," : "", allowed[i]);
            api_problem(res, API_EUNKNOWN_FIELD, detail, NULL, NULL);
            return false;
        }
        if (input_member_repeated(object, path, member, res))
            return false;
    }
    return true;
}

bool input_whole(const cJSON *object, const char *path, const char *key, int64_t min, int64_t max, int64_t fallback,
                 int64_t *out, api_response_t *res)
{
    const cJSON *item = cJSON_GetObjectItemCaseSensitive(object, key);
    *out = fallback;
    if (!item)
        return true;
    if (cJSON_IsNumber(item) && item->valuedouble >= (double)min && item->valuedouble <= (double)max
        && item->valuedouble == (double)(int64_t)item->valuedouble) {
        *out = (int64_t)item->valuedouble;
        return true;
    }
    char detail[192];
    snprintf(detail, sizeof detail, "'%s%s%s' must be a whole number from %lld to %lld", path, *path ? "." : "", key,
             (long long)min, (long long)max);
    api_problem(res, API_EINVALID_FIELD, detail, NULL, NULL);
    return false;
}
