/* A new game as its creation request gives it, read into the game
 * service's game_svc_new_t (game_create_input.c). */
#ifndef CHESSD_API_HANDLERS_GAME_CREATE_INPUT_H
#define CHESSD_API_HANDLERS_GAME_CREATE_INPUT_H

#include <cjson/cJSON.h>
#include <stdbool.h>

#include "../game/service.h"
#include "../http/request.h"

/* Reads root (its keys already checked against the route's) into spec:
 * names, takeback, clock and rules, start, PGN, engine, tags and metadata.
 * False with res filled (a 400 or 413 problem naming the field) when one
 * is refused. */
bool game_create_input_read(const cJSON *root, game_svc_new_t *spec, api_response_t *res);

/* Reads a bulk's pairing, entry: its "white" and "black" names and its
 * "tags" and "metadata" (*meta made when either is given; the caller
 * frees it). False with res filled when one is refused. */
bool game_create_input_pairing(const cJSON *entry, char names[COLOR_COUNT][GAME_NAME_MAX + 1], game_meta_t **meta,
                               api_response_t *res);

#endif
