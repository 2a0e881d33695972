/* Bulks of games, a tournament round in one call (bulk.c): every game made
 * and written in one step (store/bulk.h) or none, its answer kept for the
 * Idempotency-Key; a bulk's state, its games' ids, and its organiser's
 * changes (clocks started, the games cancelled) under the bulk's token. */
#ifndef CHESSD_API_GAME_BULK_H
#define CHESSD_API_GAME_BULK_H

#include <stdbool.h>
#include <stdint.h>

#include "../../store/bulk.h"
#include "../http/buf.h"
#include "service.h"

enum { GAME_BULK_MAX = STORE_BULK_GAMES_MAX };

/* One pairing: its players' names ("": none) and its own tags and
 * metadata (NULL: none), over the bulk's shared tags. */
typedef struct {
    char names[COLOR_COUNT][GAME_NAME_MAX + 1];
    game_meta_t *meta;
} game_bulk_pairing_t;

/* Creates count pairings (1..GAME_BULK_MAX) as games of shared's settings
 * (its names, PGN and computer unused; its tags under each pairing's), all
 * or none. The answer (201, kept under rq's key within the bulks' scope)
 * is the bulk: its id and token, and each game's id and players' tokens. */
game_svc_status_t game_bulk_create(const game_svc_config_t *c, const game_svc_request_t *rq,
                                   const game_svc_new_t *shared, const game_bulk_pairing_t *pairings, unsigned count,
                                   game_svc_result_t *out);

/* A bulk as stored: its info and its games' ids, in order. */
typedef struct {
    char id[GAME_ID_SIZE];
    int64_t created_at_ms, start_at_ms, started_at_ms; /* 0: none */
    bool cancelled;
    char token_hash[TOKENS_HASH_SIZE];
    unsigned count;
    char (*ids)[GAME_ID_SIZE]; /* malloc'd */
    char *info;                /* the info text as read, for a compare-and-set */
} game_bulk_t;

void game_bulk_free(game_bulk_t *b);

/* Loads bulk id; GAME_SVC_ENOT_FOUND when there is none (or it expired). */
game_svc_status_t game_bulk_load(const game_svc_config_t *c, const char *id, game_bulk_t *b, game_svc_result_t *out);

/* GAME_SVC_OK when token is the bulk's (GAME_SVC_EUNAUTHORIZED without
 * one, GAME_SVC_EFORBIDDEN for another). */
game_svc_status_t game_bulk_authorize(const game_bulk_t *b, const char *token, game_svc_result_t *out);

/* The bulk's JSON into body: its info and each game's state, all read in
 * one step at Redis's time (a fallen flag shown fallen, left for the sweep
 * to record), "gone" for one expired. */
game_svc_status_t game_bulk_status(const game_svc_config_t *c, const game_bulk_t *b, buf_t *body,
                                   game_svc_result_t *out);

/* The organiser's change to every game: for a cancel, each game is judged
 * first and none changed unless all can be (else the first refusal is the
 * answer, GAME_SVC_EREFUSED with the game's id as detail); clocks started
 * where they do not run yet. *changed counts the
 * games changed; the bulk's info records it. */
game_svc_status_t game_bulk_organize(const game_svc_config_t *c, game_bulk_t *b, game_svc_bulk_action_t action,
                                     unsigned *changed, game_svc_result_t *out);

#endif
