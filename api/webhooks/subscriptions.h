/* Webhook subscriptions as the API makes them (subscriptions.c): a
 * destination judged by --webhook-allow, an id and a secret made, the record
 * stored with its owner (a service key's name). A key's own subscriptions
 * (scope "key") join every game it creates; a game's or bulk's are made with
 * it. Only the owner, or an admin key, reads or deletes one. No HTTP here. */
#ifndef CHESSD_API_WEBHOOKS_SUBSCRIPTIONS_H
#define CHESSD_API_WEBHOOKS_SUBSCRIPTIONS_H

#include <stdbool.h>
#include <stdint.h>

#include "../../store/webhooks.h"
#include "../http/jsonw.h"
#include "allow.h"

enum {
    WEBHOOK_SUB_RESOLVE_MS = 1000, /* a destination's name resolved at most this long when subscribing */
    WEBHOOK_SUB_PER_REQUEST = 4,   /* entries of a creation's "webhooks" */
    WEBHOOK_SUB_PER_KEY = 8,       /* a key's own subscriptions */
};

typedef enum {
    WEBHOOK_SUB_OK = 0,
    WEBHOOK_SUB_EREFUSED,   /* a destination --webhook-allow refuses: refusal, index */
    WEBHOOK_SUB_ETOO_MANY,  /* past a bound: limit, max */
    WEBHOOK_SUB_ENOT_FOUND, /* no such subscription, or not the caller's: the same answer */
    WEBHOOK_SUB_ESTORE,     /* the store failed: store */
    WEBHOOK_SUB_EINTERNAL,  /* no randomness for an id or a secret */
    WEBHOOK_SUB_STATUS_COUNT
} webhook_sub_status_t;

/* Why a call failed, for its problem. The detail never holds a URL or a secret. */
typedef struct {
    webhook_refusal_t refusal;
    unsigned index;    /* the refused entry's place in the request */
    const char *limit; /* the bound passed */
    unsigned max;
    store_status_t store;
    char detail[WEBHOOK_DETAIL_MAX + 96];
} webhook_sub_result_t;

/* A subscription asked for: its destination and its kinds (a mask of
 * api/game/webhook_kinds.h's). */
typedef struct {
    const char *url;
    unsigned kinds;
} webhook_sub_ask_t;

/* The subscriptions one creation gives its games: subs[0..made) made by
 * the request (their secrets shown once), subs[made..count) the key's own;
 * text is the games' subscriptions text (api/game/webhook_kinds.h). */
typedef struct {
    unsigned count, made;
    store_webhook_sub_t subs[STORE_WEBHOOKS_PER_GAME];
    char text[STORE_WEBHOOKS_TEXT_SIZE];
} webhook_sub_set_t;

/* POST /v1/webhooks: a subscription of owner's key (scope "key") to ask,
 * stored, into *out (its secret there to be shown once). */
webhook_sub_status_t webhook_sub_create(store_t *store, const webhook_allow_t *allow, const char *owner,
                                        const webhook_sub_ask_t *ask, webhook_sub_result_t *result,
                                        store_webhook_sub_t *out);

/* A creation's subscriptions, unstored, into *set (zeroed here): each of
 * the count asks judged, then owner's own (owner NULL: none, and no ask
 * may be made), all within STORE_WEBHOOKS_PER_GAME, each ask given an id
 * and a secret, owner and scope (target left for webhook_sub_record). */
webhook_sub_status_t webhook_sub_plan(store_t *store, const webhook_allow_t *allow, const char *owner,
                                      const char *scope, const webhook_sub_ask_t *asks, unsigned count,
                                      webhook_sub_set_t *set, webhook_sub_result_t *result);

/* Stores set's made subscriptions with their target (the game or bulk);
 * false when one could not be (those stored are then deleted). */
bool webhook_sub_record(store_t *store, webhook_sub_set_t *set, const char *target);
/* Deletes set's made subscriptions: what a failed creation leaves. */
void webhook_sub_forget(store_t *store, const webhook_sub_set_t *set);

/* Subscription id into *out when owner owns it or admin is set; else
 * WEBHOOK_SUB_ENOT_FOUND, as for an id no one has. */
webhook_sub_status_t webhook_sub_read(store_t *store, const char *id, const char *owner, bool admin,
                                      store_webhook_sub_t *out, webhook_sub_result_t *result);
/* owner's own subscriptions (scope "key"), at most WEBHOOK_SUB_PER_KEY, into out. */
webhook_sub_status_t webhook_sub_list(store_t *store, const char *owner, store_webhook_sub_t *out, unsigned *count,
                                      webhook_sub_result_t *result);
/* Deletes subscription id (and its log) as webhook_sub_read would find it. */
webhook_sub_status_t webhook_sub_delete(store_t *store, const char *id, const char *owner, bool admin,
                                        webhook_sub_result_t *result);

/* A subscription as the API shows it: id, url, events, scope, target (a
 * game's or bulk's), created_at, and the secret when with_secret. */
void webhook_sub_json(jsonw_t *w, const store_webhook_sub_t *sub, bool with_secret);
/* set as a creation's answer shows it (malloc'd JSON array; NULL when out
 * of memory): the made ones with their secrets, the key's own without. */
char *webhook_sub_set_json(const webhook_sub_set_t *set);

#endif
