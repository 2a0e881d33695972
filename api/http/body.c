/* Body checks before and around cJSON. cJSON's own nesting limit is 1000;
 * ours is CONFIG_MAX_JSON_DEPTH and is checked first by a scan that skips
 * strings, so a deeply nested body costs one linear pass. */
#include "body.h"

#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "../../rules/chess960.h"
#include "../config.h"
#include "../problem.h"
#include "utf8.h"

/* Deepest nesting of [ and { in text, ignoring string contents; sets
 * *escaped_nul when a string holds \u0000. */
static int nesting_depth(const char *text, size_t length, bool *escaped_nul)
{
    int depth = 0, deepest = 0;
    bool in_string = false;
    *escaped_nul = false;
    for (size_t i = 0; i < length; i++) {
        char c = text[i];
        if (in_string) {
            if (c == '\\') {
                if (i + 5 < length && text[i + 1] == 'u' && !strncmp(text + i + 2, "0000", 4))
                    *escaped_nul = true;
                i++;
            } else if (c == '"') {
                in_string = false;
            }
        } else if (c == '"') {
            in_string = true;
        } else if (c == '[' || c == '{') {
            if (++depth > deepest)
                deepest = depth;
        } else if (c == ']' || c == '}') {
            depth--;
        }
    }
    return deepest;
}

bool body_media_type_is(const char *type, const char *name)
{
    size_t n = strcspn(type, ";");
    while (n > 0 && (type[n - 1] == ' ' || type[n - 1] == '\t'))
        n--;
    return n == strlen(name) && !strncasecmp(type, name, n);
}

cJSON *body_parse_object(const api_request_t *req, const char *const *allowed, api_response_t *res)
{
    char detail[160];
    if (req->body_length == 0)
        return cJSON_CreateObject();
    const char *type = api_request_header(req, "Content-Type");
    if (type && !body_media_type_is(type, "application/json")) {
        snprintf(detail, sizeof detail, "Content-Type is '%.60s'; send application/json", type);
        api_problem(res, API_EUNSUPPORTED_MEDIA_TYPE, detail, NULL, NULL);
        return NULL;
    }
    bool escaped_nul;
    if (nesting_depth(req->body, req->body_length, &escaped_nul) > CONFIG_MAX_JSON_DEPTH) {
        snprintf(detail, sizeof detail, "JSON nested deeper than %d levels", CONFIG_MAX_JSON_DEPTH);
        api_problem(res, API_EINVALID_JSON, detail, NULL, NULL);
        return NULL;
    }
    if (!utf8_valid(req->body, req->body_length)) {
        api_problem(res, API_EINVALID_JSON, "the body is not valid UTF-8", NULL, NULL);
        return NULL;
    }
    /* Strings become C strings, which a NUL would silently cut short. */
    if (escaped_nul) {
        api_problem(res, API_EINVALID_JSON, "strings must not contain \\u0000", NULL, NULL);
        return NULL;
    }
    if (memchr(req->body, '\0', req->body_length)) {
        api_problem(res, API_EINVALID_JSON, "the body contains a NUL byte", NULL, NULL);
        return NULL;
    }
    /* The body is NUL-terminated past body_length; cJSON wants the terminator
     * inside the length to accept the document as complete. */
    const char *end = NULL;
    cJSON *root = cJSON_ParseWithLengthOpts(req->body, req->body_length + 1, &end, 1);
    if (!root) {
        size_t offset = end && end >= req->body ? (size_t)(end - req->body) : 0;
        snprintf(detail, sizeof detail, "the body is not valid JSON (near byte %zu)", offset);
        api_problem(res, API_EINVALID_JSON, detail, NULL, NULL);
        return NULL;
    }
    if (!cJSON_IsObject(root)) {
        cJSON_Delete(root);
        api_problem(res, API_EINVALID_JSON, "the body must be a JSON object", NULL, NULL);
        return NULL;
    }
    for (const cJSON *item = root->child; item; item = item->next) {
        bool known = false;
        for (const char *const *a = allowed; *a && !known; a++)
            known = !strcmp(item->string, *a);
        for (const cJSON *other = root->child; other != item && known; other = other->next)
            if (!strcmp(other->string, item->string)) {
                snprintf(detail, sizeof detail, "field '%.40s' appears twice", item->string);
                cJSON_Delete(root);
                api_problem(res, API_EINVALID_JSON, detail, NULL, NULL);
                return NULL;
            }
        if (!known) {
            snprintf(detail, sizeof detail, "unknown field '%.40s'", item->string);
            cJSON_Delete(root);
            api_problem(res, API_EUNKNOWN_FIELD, detail, NULL, NULL);
            return NULL;
        }
    }
    return root;
}

bool body_query_bool(const api_request_t *req, const char *name, bool fallback, bool *out, api_response_t *res)
{
    const char *v = api_request_query(req, name);
    *out = fallback;
    if (!v)
        return true;
    if (!strcmp(v, "true") || !strcmp(v, "1")) {
        *out = true;
        return true;
    }
    if (!strcmp(v, "false") || !strcmp(v, "0")) {
        *out = false;
        return true;
    }
    char detail[96];
    snprintf(detail, sizeof detail, "query parameter '%s' must be true or false", name);
    api_problem(res, API_EINVALID_PARAMETER, detail, NULL, NULL);
    return false;
}

bool body_chess960_position(const cJSON *root, int *number, api_response_t *res)
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
