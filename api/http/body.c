/* Body checks before and around cJSON (body.h). cJSON's own nesting limit is
 * 1000; the caller's is checked first by a scan that skips strings, so a
 * deeply nested body costs one linear pass. */
#include "body.h"

#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "../../rules/base/utf8.h"

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

body_status_t body_parse_object(const char *body, size_t length, const char *content_type, int max_depth,
                                const char *const *allowed, cJSON **out, char *detail, size_t detail_size)
{
    *out = NULL;
    if (length == 0)
        return (*out = cJSON_CreateObject()) ? BODY_OK : BODY_ENOMEM;
    if (content_type && !body_media_type_is(content_type, "application/json")) {
        snprintf(detail, detail_size, "Content-Type is '%.60s'; send application/json", content_type);
        return BODY_EMEDIA_TYPE;
    }
    bool escaped_nul;
    if (nesting_depth(body, length, &escaped_nul) > max_depth) {
        snprintf(detail, detail_size, "JSON nested deeper than %d levels", max_depth);
        return BODY_EINVALID_JSON;
    }
    if (!utf8_valid(body, length)) {
        snprintf(detail, detail_size, "the body is not valid UTF-8");
        return BODY_EINVALID_JSON;
    }
    /* Strings become C strings, which a NUL would silently cut short. */
    if (escaped_nul) {
        snprintf(detail, detail_size, "strings must not contain \\u0000");
        return BODY_EINVALID_JSON;
    }
    if (memchr(body, '\0', length)) {
        snprintf(detail, detail_size, "the body contains a NUL byte");
        return BODY_EINVALID_JSON;
    }
    /* The body is NUL-terminated past length; cJSON wants the terminator
     * inside the length to accept the document as complete. */
    const char *end = NULL;
    cJSON *root = cJSON_ParseWithLengthOpts(body, length + 1, &end, 1);
    if (!root) {
        size_t offset = end && end >= body ? (size_t)(end - body) : 0;
        snprintf(detail, detail_size, "the body is not valid JSON (near byte %zu)", offset);
        return BODY_EINVALID_JSON;
    }
    if (!cJSON_IsObject(root)) {
        cJSON_Delete(root);
        snprintf(detail, detail_size, "the body must be a JSON object");
        return BODY_EINVALID_JSON;
    }
    for (const cJSON *item = root->child; item; item = item->next) {
        bool known = false;
        for (const char *const *a = allowed; *a && !known; a++)
            known = !strcmp(item->string, *a);
        for (const cJSON *other = root->child; other != item && known; other = other->next)
            if (!strcmp(other->string, item->string)) {
                snprintf(detail, detail_size, "field '%.40s' appears twice", item->string);
                cJSON_Delete(root);
                return BODY_EINVALID_JSON;
            }
        if (!known) {
            snprintf(detail, detail_size, "unknown field '%.40s'", item->string);
            cJSON_Delete(root);
            return BODY_EUNKNOWN_FIELD;
        }
    }
    *out = root;
    return BODY_OK;
}

body_status_t body_bool(const char *name, const char *value, bool fallback, bool *out, char *detail,
                        size_t detail_size)
{
    *out = fallback;
    if (!value)
        return BODY_OK;
    if (!strcmp(value, "true") || !strcmp(value, "1")) {
        *out = true;
        return BODY_OK;
    }
    if (!strcmp(value, "false") || !strcmp(value, "0")) {
        *out = false;
        return BODY_OK;
    }
    snprintf(detail, detail_size, "query parameter '%s' must be true or false", name);
    return BODY_EINVALID_VALUE;
}
