/* The review's reading shared by the review routes, the PGN route and the
 * event streams (review_http.h): a stored review replayed from its game's
 * start, the [%eval] texts of a finished one, whether one is under way. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "game_http.h"
#include "review_http.h"

void review_replay_free(review_replay_t *p)
{
    free(p->moves);
    free(p->positions);
    free(p->results);
    free(p->ok);
}

bool review_replay(const store_review_t *rv, const position_t *initial, review_replay_t *p)
{
    *p = (review_replay_t){ 0 };
    p->moves = malloc(sizeof *p->moves * REVIEW_MAX_PLIES);
    p->positions = malloc(sizeof *p->positions * ((size_t)rv->count + 1));
    p->results = calloc((size_t)rv->count + 1, sizeof *p->results);
    p->ok = calloc((size_t)rv->count + 1, sizeof *p->ok);
    if (!p->moves || !p->positions || !p->results || !p->ok)
        return false;
    p->count = game_line_moves(initial, rv->line, rv->line_length, p->moves, NULL, REVIEW_MAX_PLIES);
    if (p->count != rv->count)
        return false;
    p->positions[0] = *initial;
    for (int k = 0; k <= p->count; k++) {
        if (k > 0) {
            p->positions[k] = p->positions[k - 1];
            position_undo_t undo;
            position_make(&p->positions[k], p->moves[k - 1], &undo);
        }
        p->ok[k] = rv->positions[k] && review_position_parse(rv->positions[k], &p->positions[k], &p->results[k]);
        p->done += p->ok[k];
    }
    return true;
}

/* "[%eval]"'s text of a result, as Lichess writes it: pawns with two
 * decimals, or "#N" (none for a mated position, which has no eval). */
static char *eval_text(const review_position_t *r)
{
    char text[24];
    if (r->is_mate && r->value == 0)
        return NULL;
    if (r->is_mate)
        snprintf(text, sizeof text, "#%d", r->value);
    else
        snprintf(text, sizeof text, "%.2f", r->value / 100.0);
    return strdup(text);
}

char **review_pgn_evals(const api_request_t *req, const game_svc_game_t *g, int *count)
{
    game_svc_config_t c;
    game_http_service(req, &c);
    *count = 0;
    store_review_t rv;
    if (!c.store || store_review_read(c.store, g->record.id, &rv) != STORE_OK)
        return NULL;
    const char *line = g->moves ? g->moves : "";
    char **evals = NULL;
    review_replay_t p = { 0 };
    /* Only a finished review of the moves the game has now. */
    if (!strcmp(rv.status, "done") && rv.line_length == strlen(line) && !memcmp(rv.line, line, rv.line_length)
        && review_replay(&rv, &g->record.game.initial, &p) && p.count > 0
        && (evals = calloc((size_t)p.count, sizeof *evals))) {
        for (int k = 1; k <= p.count; k++)
            evals[k - 1] = p.ok[k] ? eval_text(&p.results[k]) : NULL;
        *count = p.count;
    }
    review_replay_free(&p);
    store_review_free(&rv);
    return evals;
}

void review_pgn_evals_free(char **evals, int count)
{
    for (int i = 0; evals && i < count; i++)
        free(evals[i]);
    free(evals);
}

bool review_under_way(const api_request_t *req, const char *id, uint64_t version)
{
    game_svc_config_t c;
    game_http_service(req, &c);
    store_review_t rv;
    if (!c.store || store_review_read(c.store, id, &rv) != STORE_OK)
        return false;
    bool under_way = rv.version == version && (!strcmp(rv.status, "queued") || !strcmp(rv.status, "running"));
    store_review_free(&rv);
    return under_way;
}
