/* The finished-games feed's step of a game's end (finished.h): a bulk's
 * game first leaves its bulk's games in play, then the summary and one
 * store call that adds it once and clears its deadline entry. What a
 * backend reads of it is the export's (export.c). */
#include "finished.h"

#include <string.h>

#include "../../rules/base/text.h"
#include "../../store/bulk.h"

void game_finished_entry(const game_record_t *r, store_feed_entry_t *out)
{
    const game_t *g = &r->game;
    memset(out, 0, sizeof *out);
    text_copy(out->id, sizeof out->id, r->id);
    text_copy(out->status, sizeof out->status, game_state_name(g->state));
    text_copy(out->result, sizeof out->result, game_result_name(g->result));
    if (g->termination != GAME_TERMINATION_NONE)
        text_copy(out->termination, sizeof out->termination, game_termination_name(g->termination));
    out->ended_at_ms = r->updated_at_ms;
}

store_status_t game_finished_record(const game_svc_config_t *c, const game_record_t *r, int64_t index_score)
{
    /* Before the feed: a failure leaves the deadline entry, so a sweep redoes both. */
    if (r->bulk[0]) {
        store_status_t left = store_bulk_game_ended(c->store, r->bulk, r->id, c->finished_game_ttl_seconds);
        if (left != STORE_OK && left != STORE_ENOT_FOUND)
            return left;
    }
    store_feed_entry_t entry;
    game_finished_entry(r, &entry);
    bool added = false;
    uint64_t retention_ms = (uint64_t)c->finished_feed_retention_seconds * 1000;
    store_status_t status = store_game_finished(c->store, &entry, retention_ms, index_score, &added);
    if (added && c->count)
        c->count(GAME_SVC_COUNTER_FEED_ADDED);
    return status;
}
