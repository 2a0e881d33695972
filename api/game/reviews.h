/* Whole-game reviews: worker threads claim review jobs from Redis
 * (store/reviews.h's protocol) and search every position of the game on
 * the engine pool. Each position's result is written as it is computed, so
 * a worker that dies loses only the position it was on. Also the text forms
 * of a result and of a search limit, shared with the routes. */
#ifndef CHESSD_API_GAME_REVIEWS_H
#define CHESSD_API_GAME_REVIEWS_H

#include <stdbool.h>
#include <stdint.h>

#include "../../rules/rules.h"
#include "../engine/pool.h"
#include "service.h"

typedef struct reviews reviews_t;

typedef struct {
    game_svc_config_t games;        /* its store holds the reviews */
    engine_pool_t *engines;         /* standard chess and Chess960 */
    engine_pool_t *variant_engines; /* the other variants; NULL: none */
    unsigned workers;               /* threads taking jobs (1 at least) */
    unsigned lease_ms;              /* a job not touched this long is another worker's to take */
    int max_think_ms;               /* every search's deadline */
} reviews_config_t;

/* Starts the workers. NULL when threads or memory run out. */
reviews_t *reviews_start(const reviews_config_t *cfg);
/* Stops taking jobs (a search running finishes), joins, frees. NULL is fine. */
void reviews_stop(reviews_t *reviews);

/* A review's search limit for each position: one of depth, nodes or
 * movetime_ms (the others 0). */
typedef struct {
    int depth;
    uint64_t nodes;
    int movetime_ms;
} review_limit_t;

enum { REVIEW_LIMIT_TEXT_SIZE = 48, REVIEW_DEFAULT_NODES = 1000000, REVIEW_MAX_PLIES = 600,
       REVIEW_PV_MAX = 12 };

/* "nodes N", "depth N" or "movetime N" into out. */
void review_limit_format(const review_limit_t *limit, char out[REVIEW_LIMIT_TEXT_SIZE]);
bool review_limit_parse(const char *text, review_limit_t *limit);

/* A position's result: its evaluation from White's point of view (a mate
 * of 0: the side to move there is mated; a variant's own win is +-1000 cp),
 * the best move and its line (none in a finished position), and the
 * worker that computed it. */
typedef struct {
    bool is_mate;
    int value;
    int pv_count;
    move_t pv[REVIEW_PV_MAX];
    char worker[96];
} review_position_t;

/* Reads a stored result of a position pos. False when it is not one this
 * code wrote, or its line is not legal in pos. */
bool review_position_parse(const char *text, const position_t *pos, review_position_t *out);

/* The message a review publishes on its game's event stream: "review"
 * events with its status and how many of its positions are done. */
enum { REVIEW_EVENT_SIZE = 256 };
void review_event_format(uint64_t game_version, const char *status, int positions_done, int positions,
                         char out[REVIEW_EVENT_SIZE]);

#endif
