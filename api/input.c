/* A request's inputs (input.h): the transport's body and query readers, their
 * statuses turned into problems. */
#include "input.h"

#include "../rules/chess960.h"
#include "config.h"
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
