/* A new game's clock, days a move, start time and rules, read from its
 * creation request into the service's game_svc_new_t (clock_input.c). */
#ifndef CHESSD_API_HANDLERS_CLOCK_INPUT_H
#define CHESSD_API_HANDLERS_CLOCK_INPUT_H

#include <cjson/cJSON.h>
#include <stdbool.h>
#include <stdint.h>

#include "../game/service.h"
#include "../http/request.h"

/* Reads root's "clock", "days_per_move", "start_clocks_at" (checked
 * against now_ms, Unix ms), "rules", "draw_offers_from_move" and
 * "draw_odds" into spec; false with res filled (400 invalid_field,
 * unknown_field or conflicting_fields, naming the field) when refused. */
bool clock_input_read(const cJSON *root, int64_t now_ms, game_svc_new_t *spec, api_response_t *res);

#endif
