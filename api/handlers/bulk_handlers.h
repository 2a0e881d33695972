/* The bulk routes' handlers (bulk_handlers.c), and the reading of a body's
 * games by "ids" or by "bulk" that the export and the multi-game stream share. */
#ifndef CHESSD_API_HANDLERS_BULK_HANDLERS_H
#define CHESSD_API_HANDLERS_BULK_HANDLERS_H

#include <cjson/cJSON.h>
#include <stdbool.h>

#include "../http/request.h"

/* The games of root: its "ids" (at most max, duplicates dropped) or the
 * games of its "bulk" (list has room for GAME_BULK_MAX). The texts stay
 * valid while root and *held do: free *held with bulk_ids_free. False with
 * res filled when they cannot be had. */
bool bulk_ids_read(const api_request_t *req, const cJSON *root, const char **list, int max, int *count,
                   void **held, api_response_t *res);
void bulk_ids_free(void *held);

#endif
