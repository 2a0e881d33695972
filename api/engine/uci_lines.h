/* Reading what a UCI engine writes, line by line: the strength options it
 * announces, the variants its UCI_Variant option lists, and the "info" and
 * "bestmove" lines of a search. Pure parsing over a line's text; every move
 * is checked by the rules that read a client's (uci_lines.c). */
#ifndef CHESSD_API_ENGINE_UCI_LINES_H
#define CHESSD_API_ENGINE_UCI_LINES_H

#include <stdbool.h>

#include "uci.h"

/* A strength option as the engine announced it ("type spin default 20 min 0
 * max 20", or "type check default false": 0 and 1), and the value it holds
 * now: its default after the handshake, then what was last set. */
typedef struct {
    bool announced;
    bool check; /* sent as true/false */
    int min, max, value;
} strength_option_t;

/* The rest of a strength option's line, "type spin default D min A max
 * B" or "type check default true|false", into *o; any other type, or a spin
 * whose range does not hold its default, leaves it unannounced. */
void uci_lines_strength_option(strength_option_t *o, const char *rest);

/* Parses an "info" line searched from pos; keeps it when it has a score and
 * a pv and its multipv is within what was asked. */
void uci_lines_info(const position_t *pos, const char *line, int multipv_asked, engine_result_t *out);

/* Parses "bestmove M [ponder P]" into out; EGARBAGE when M is not legal. */
engine_status_t uci_lines_bestmove(const position_t *pos, const char *line, engine_result_t *out, char *err,
                                   size_t err_size);

#endif
