/* Reading webhook subscriptions from a request (webhook_input.h). Every
 * refusal names the field by its path ("webhooks[1].events"), never the
 * URL's text. */
#include "webhook_input.h"

#include <stdio.h>
#include <string.h>

#include "../game/webhook_kinds.h"
#include "../input.h"
#include "../problem.h"

static bool invalid(api_response_t *res, const char *path, const char *what)
{
    char detail[160];
    snprintf(detail, sizeof detail, "'%s' %s", path, what);
    api_problem(res, API_EINVALID_FIELD, detail, NULL, NULL);
    return false;
}

/* events, an array of kinds' names, into *kinds. */
static bool read_events(const cJSON *events, const char *path, unsigned *kinds, api_response_t *res)
{
    char where[64];
    snprintf(where, sizeof where, "%s%sevents", path, path[0] ? "." : "");
    if (!cJSON_IsArray(events) || !cJSON_GetArraySize(events))
        return invalid(res, where, "must be an array naming 1 to 5 of move, offer, takeback, clock and end");
    const cJSON *item;
    cJSON_ArrayForEach(item, events) {
        unsigned kind = cJSON_IsString(item) ? webhook_kind_of(item->valuestring, strlen(item->valuestring)) : 0;
        if (!kind)
            return invalid(res, where, "names an event kind that is none of move, offer, takeback, clock and end");
        if (*kinds & kind)
            return invalid(res, where, "names an event kind twice");
        *kinds |= kind;
    }
    return true;
}

bool webhook_input_ask(const cJSON *object, const char *path, webhook_sub_ask_t *ask, api_response_t *res)
{
    static const char *const members[] = { "url", "events", NULL };
    memset(ask, 0, sizeof *ask);
    if (!cJSON_IsObject(object))
        return invalid(res, path, "must be an object with a url and, optionally, events");
    if (path[0] && !input_members(object, path, members, res)) /* a body's: input_object checked them */
        return false;
    const cJSON *url = cJSON_GetObjectItemCaseSensitive(object, "url");
    char where[64];
    snprintf(where, sizeof where, "%s%surl", path, path[0] ? "." : "");
    if (!cJSON_IsString(url) || !url->valuestring[0])
        return invalid(res, where, "must be a destination's http or https URL");
    ask->url = url->valuestring;
    const cJSON *events = cJSON_GetObjectItemCaseSensitive(object, "events");
    if (!events) {
        ask->kinds = WEBHOOK_KIND_ALL;
        return true;
    }
    return read_events(events, path, &ask->kinds, res);
}

bool webhook_input_list(const cJSON *root, webhook_sub_ask_t asks[WEBHOOK_SUB_PER_REQUEST], unsigned *count,
                        api_response_t *res)
{
    *count = 0;
    const cJSON *list = cJSON_GetObjectItemCaseSensitive(root, "webhooks");
    if (!list)
        return true;
    if (!cJSON_IsArray(list) || !cJSON_GetArraySize(list))
        return invalid(res, "webhooks", "must be an array of 1 to 4 subscriptions ({\"url\": ..., \"events\": [...]})");
    int size = cJSON_GetArraySize(list);
    if (size > WEBHOOK_SUB_PER_REQUEST) {
        api_problem_limit(res, API_ETOO_MANY_WEBHOOKS, "'webhooks' has more than 4 subscriptions", "webhooks",
                          WEBHOOK_SUB_PER_REQUEST);
        return false;
    }
    const cJSON *entry;
    cJSON_ArrayForEach(entry, list) {
        char path[32];
        snprintf(path, sizeof path, "webhooks[%u]", *count);
        if (!webhook_input_ask(entry, path, &asks[*count], res))
            return false;
        (*count)++;
    }
    return true;
}
