/* Webhook subscriptions (subscriptions.h): judged, made, stored, read and
 * deleted for their owner. A secret leaves here only in a made record and
 * the JSON that shows it once; no detail names a URL or a secret. */
#include "subscriptions.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "../game/tokens.h"
#include "../game/webhook_kinds.h"
#include "../render/game_json.h"
#include "sign.h"

/* The wall clock in Unix ms: when a subscription was made. */
static int64_t wall_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static webhook_sub_status_t store_failed(webhook_sub_result_t *result, store_status_t status)
{
    result->store = status;
    snprintf(result->detail, sizeof result->detail, "the webhook subscriptions could not be read or written");
    return WEBHOOK_SUB_ESTORE;
}

static webhook_sub_status_t too_many(webhook_sub_result_t *result, const char *limit, unsigned max,
                                     const char *detail)
{
    result->limit = limit;
    result->max = max;
    snprintf(result->detail, sizeof result->detail, "%s", detail);
    return WEBHOOK_SUB_ETOO_MANY;
}

/* Ask index's destination judged by allow. */
static webhook_sub_status_t judge(const webhook_allow_t *allow, const webhook_sub_ask_t *ask, unsigned index,
                                  webhook_sub_result_t *result)
{
    char why[WEBHOOK_DETAIL_MAX];
    why[0] = '\0';
    webhook_refusal_t refusal = webhook_allow_check_url(allow, ask->url, WEBHOOK_SUB_RESOLVE_MS, NULL, why,
                                                        sizeof why);
    if (refusal == WEBHOOK_ALLOWED)
        return WEBHOOK_SUB_OK;
    result->refusal = refusal;
    result->index = index;
    snprintf(result->detail, sizeof result->detail, "webhook %u's url is refused (%s)%s%s", index,
             webhook_refusal_code(refusal), why[0] ? ": " : "", why);
    return WEBHOOK_SUB_EREFUSED;
}

/* A new subscription of ask for owner in scope: its id, secret and time. */
static webhook_sub_status_t make(const webhook_sub_ask_t *ask, const char *owner, const char *scope,
                                 store_webhook_sub_t *out, webhook_sub_result_t *result)
{
    memset(out, 0, sizeof *out);
    char id[TOKENS_ID_SIZE];
    if (strlen(ask->url) >= sizeof out->url || strlen(owner) >= sizeof out->owner)
        return too_many(result, "url", STORE_WEBHOOK_URL_SIZE - 1, "the url or the key's name is too long");
    if (!tokens_new_id(id) || !webhook_secret_make(out->secret)) {
        snprintf(result->detail, sizeof result->detail, "no randomness for a webhook's id or secret");
        return WEBHOOK_SUB_EINTERNAL;
    }
    snprintf(out->id, sizeof out->id, "wh_%s", id);
    snprintf(out->url, sizeof out->url, "%s", ask->url);
    snprintf(out->owner, sizeof out->owner, "%s", owner);
    snprintf(out->scope, sizeof out->scope, "%s", scope);
    out->kinds = ask->kinds ? ask->kinds : WEBHOOK_KIND_ALL;
    out->created_ms = wall_ms();
    return WEBHOOK_SUB_OK;
}

/* owner's own subscription ids, at most max. */
static webhook_sub_status_t own_ids(store_t *store, const char *owner, char (*ids)[STORE_WEBHOOK_ID_SIZE],
                                    unsigned max, unsigned *count, webhook_sub_result_t *result)
{
    store_status_t status = store_webhook_subs_of(store, owner, ids, max, count);
    return status == STORE_OK ? WEBHOOK_SUB_OK : store_failed(result, status);
}

webhook_sub_status_t webhook_sub_create(store_t *store, const webhook_allow_t *allow, const char *owner,
                                        const webhook_sub_ask_t *ask, webhook_sub_result_t *result,
                                        store_webhook_sub_t *out)
{
    char ids[WEBHOOK_SUB_PER_KEY + 1][STORE_WEBHOOK_ID_SIZE];
    unsigned count = 0;
    webhook_sub_status_t status = judge(allow, ask, 0, result);
    if (status == WEBHOOK_SUB_OK)
        status = own_ids(store, owner, ids, WEBHOOK_SUB_PER_KEY + 1, &count, result);
    if (status == WEBHOOK_SUB_OK && count >= WEBHOOK_SUB_PER_KEY)
        return too_many(result, "webhooks per service key", WEBHOOK_SUB_PER_KEY,
                        "this service key has as many webhook subscriptions as a key may: delete one first");
    if (status == WEBHOOK_SUB_OK)
        status = make(ask, owner, STORE_WEBHOOK_SCOPE_KEY, out, result);
    if (status == WEBHOOK_SUB_OK) {
        snprintf(out->target, sizeof out->target, "%s", owner);
        store_status_t written = store_webhook_sub_put(store, out, 0);
        if (written != STORE_OK)
            status = store_failed(result, written);
    }
    return status;
}

/* Adds sub to set and its text; false when the game cannot carry one more. */
static bool set_add(webhook_sub_set_t *set, const store_webhook_sub_t *sub)
{
    if (set->count >= STORE_WEBHOOKS_PER_GAME || !webhook_subs_text_add(set->text, sizeof set->text, sub->id, sub->kinds))
        return false;
    set->subs[set->count++] = *sub;
    return true;
}

webhook_sub_status_t webhook_sub_plan(store_t *store, const webhook_allow_t *allow, const char *owner,
                                      const char *scope, const webhook_sub_ask_t *asks, unsigned count,
                                      webhook_sub_set_t *set, webhook_sub_result_t *result)
{
    memset(set, 0, sizeof *set);
    if (count > WEBHOOK_SUB_PER_REQUEST)
        return too_many(result, "webhooks", WEBHOOK_SUB_PER_REQUEST, "a creation asks for at most 4 webhooks");
    for (unsigned i = 0; i < count; i++) {
        webhook_sub_status_t status = judge(allow, &asks[i], i, result);
        if (status != WEBHOOK_SUB_OK)
            return status;
    }
    store_webhook_sub_t sub;
    for (unsigned i = 0; i < count; i++) {
        webhook_sub_status_t status = make(&asks[i], owner ? owner : "", scope, &sub, result);
        if (status != WEBHOOK_SUB_OK)
            return status;
        (void)set_add(set, &sub); /* count <= WEBHOOK_SUB_PER_REQUEST: it fits */
    }
    set->made = set->count;
    if (!owner)
        return WEBHOOK_SUB_OK;
    char ids[WEBHOOK_SUB_PER_KEY][STORE_WEBHOOK_ID_SIZE];
    unsigned own = 0;
    webhook_sub_status_t status = own_ids(store, owner, ids, WEBHOOK_SUB_PER_KEY, &own, result);
    for (unsigned i = 0; status == WEBHOOK_SUB_OK && i < own; i++) {
        store_status_t read = store_webhook_sub_get(store, ids[i], &sub);
        if (read == STORE_ENOT_FOUND)
            continue; /* deleted meanwhile */
        if (read != STORE_OK)
            return store_failed(result, read);
        if (!set_add(set, &sub))
            return too_many(result, "webhooks per game", STORE_WEBHOOKS_PER_GAME,
                            "the webhooks asked for and the service key's own subscriptions are more than a game "
                            "carries (8)");
    }
    return status;
}

bool webhook_sub_record(store_t *store, webhook_sub_set_t *set, const char *target)
{
    for (unsigned i = 0; i < set->made; i++) {
        snprintf(set->subs[i].target, sizeof set->subs[i].target, "%s", target);
        if (store_webhook_sub_put(store, &set->subs[i], STORE_WEBHOOK_GAME_SUB_TTL) != STORE_OK) {
            webhook_sub_forget(store, set);
            return false;
        }
    }
    return true;
}

void webhook_sub_forget(store_t *store, const webhook_sub_set_t *set)
{
    for (unsigned i = 0; i < set->made; i++)
        (void)store_webhook_sub_delete(store, set->subs[i].id, set->subs[i].owner);
}

static webhook_sub_status_t not_found(webhook_sub_result_t *result)
{
    snprintf(result->detail, sizeof result->detail, "this service key has no webhook subscription of this id");
    return WEBHOOK_SUB_ENOT_FOUND;
}

webhook_sub_status_t webhook_sub_read(store_t *store, const char *id, const char *owner, bool admin,
                                      store_webhook_sub_t *out, webhook_sub_result_t *result)
{
    store_status_t status = store_webhook_sub_get(store, id, out);
    if (status == STORE_OK && (admin || !strcmp(out->owner, owner)))
        return WEBHOOK_SUB_OK;
    if (status != STORE_OK && status != STORE_ENOT_FOUND)
        return store_failed(result, status);
    memset(out, 0, sizeof *out);
    return not_found(result);
}

webhook_sub_status_t webhook_sub_list(store_t *store, const char *owner, store_webhook_sub_t *out, unsigned *count,
                                      webhook_sub_result_t *result)
{
    char ids[WEBHOOK_SUB_PER_KEY][STORE_WEBHOOK_ID_SIZE];
    unsigned found = 0;
    *count = 0;
    webhook_sub_status_t status = own_ids(store, owner, ids, WEBHOOK_SUB_PER_KEY, &found, result);
    for (unsigned i = 0; status == WEBHOOK_SUB_OK && i < found; i++) {
        store_status_t read = store_webhook_sub_get(store, ids[i], &out[*count]);
        if (read == STORE_OK)
            (*count)++;
        else if (read != STORE_ENOT_FOUND)
            status = store_failed(result, read);
    }
    return status;
}

webhook_sub_status_t webhook_sub_delete(store_t *store, const char *id, const char *owner, bool admin,
                                        webhook_sub_result_t *result)
{
    store_webhook_sub_t *sub = malloc(sizeof *sub);
    if (!sub)
        return store_failed(result, STORE_EUNAVAILABLE);
    webhook_sub_status_t status = webhook_sub_read(store, id, owner, admin, sub, result);
    if (status == WEBHOOK_SUB_OK) {
        store_status_t deleted = store_webhook_sub_delete(store, id, sub->owner);
        if (deleted == STORE_ENOT_FOUND)
            status = not_found(result); /* deleted meanwhile */
        else if (deleted != STORE_OK)
            status = store_failed(result, deleted);
    }
    free(sub);
    return status;
}

void webhook_sub_json(jsonw_t *w, const store_webhook_sub_t *sub, bool with_secret)
{
    char created[GAME_JSON_TIME_SIZE];
    game_json_iso_time(sub->created_ms, created);
    jsonw_object_begin(w);
    jsonw_kv_string(w, "id", sub->id);
    jsonw_kv_string(w, "url", sub->url);
    jsonw_key(w, "events");
    jsonw_array_begin(w);
    for (unsigned i = 0; i < WEBHOOK_KIND_COUNT; i++)
        if (sub->kinds & (1u << i))
            jsonw_string(w, webhook_kind_name(i));
    jsonw_array_end(w);
    jsonw_kv_string(w, "scope", sub->scope);
    if (strcmp(sub->scope, STORE_WEBHOOK_SCOPE_KEY) && sub->target[0])
        jsonw_kv_string(w, "target", sub->target);
    if (with_secret)
        jsonw_kv_string(w, "secret", sub->secret);
    jsonw_kv_string(w, "created_at", created);
    jsonw_object_end(w);
}

char *webhook_sub_set_json(const webhook_sub_set_t *set)
{
    jsonw_t w;
    jsonw_init(&w);
    jsonw_array_begin(&w);
    for (unsigned i = 0; i < set->count; i++)
        webhook_sub_json(&w, &set->subs[i], i < set->made);
    jsonw_array_end(&w);
    size_t length;
    return jsonw_finish(&w, &length);
}
