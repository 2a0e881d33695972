/* A webhook subscription as a request gives it (webhook_input.c): the body
 * of POST /v1/webhooks, or an entry of a creation's "webhooks", read into
 * webhook_sub_ask_t. Pure: no store, no resolving; the destination is
 * judged later (api/webhooks/subscriptions.h). */
#ifndef CHESSD_API_HANDLERS_WEBHOOK_INPUT_H
#define CHESSD_API_HANDLERS_WEBHOOK_INPUT_H

#include <cjson/cJSON.h>
#include <stdbool.h>

#include "../http/request.h"
#include "../webhooks/subscriptions.h"

/* Reads object {"url": text, "events": [kind...]} (named path in
 * problems; "": a request's body, its members checked already) into *ask, url pointing into the tree. events is optional
 * (every kind); when given, 1 to 5 kinds, each once. False with res filled
 * (400 invalid_field or unknown_field) otherwise. */
bool webhook_input_ask(const cJSON *object, const char *path, webhook_sub_ask_t *ask, api_response_t *res);

/* Reads root's optional "webhooks", an array of 1 to WEBHOOK_SUB_PER_REQUEST
 * entries, into asks; *count is 0 when it is absent. False with res filled
 * (400, or 422 too_many_webhooks) otherwise. */
bool webhook_input_list(const cJSON *root, webhook_sub_ask_t asks[WEBHOOK_SUB_PER_REQUEST], unsigned *count,
                        api_response_t *res);

#endif
