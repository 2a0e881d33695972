/* The embeddable live board of a stored game (GET /v1/games/{id}/embed): a
 * small HTML page with its style and script inline, showing the board, the
 * players, the clocks counting down, the moves, the opening and the result.
 * The game's event stream keeps it live (an EventSource, which reconnects by
 * itself). It holds no token and no game data: names and moves are read by
 * its script and written as text. */
#ifndef CHESSD_API_RENDER_EMBED_H
#define CHESSD_API_RENDER_EMBED_H

#include <stdbool.h>
#include <stddef.h>

#include "../http/buf.h"

/* The page's Content-Security-Policy, with frame_ancestors (checked sources,
 * the --embed-frame-ancestors setting, the same on every call) as its
 * frame-ancestors: made on the first call, static afterwards; NULL when the
 * hashes could not be made or it does not fit. It allows only the page's own
 * script and style (by hash) and its own server. */
const char *embed_policy(const char *frame_ancestors);

/* Appends the page of game id (a game id: base64url characters only) to out. */
void embed_page(buf_t *out, const char *id);

#endif
