/* The upgrade pass: chessd before the deadline index let an active game
 * expire --active-ttl (7 days) after its last change. On a Redis where that
 * may be so, one replica walks every game key (store/game_upgrade.h),
 * removes the expiry of each active game and indexes its deadline; a second
 * pass an hour later catches what older replicas wrote during the rollout. */
#ifndef CHESSD_API_GAME_UPGRADE_H
#define CHESSD_API_GAME_UPGRADE_H

#include "service.h"

/* The passes over one Redis, and the time between them. */
enum { UPGRADE_PASSES = 2, UPGRADE_GAP_MS = 3600 * 1000 };

/* The pass's generation, followed in Redis by the idle end it ran with
 * (":idle-<seconds>"). A write indexes a deadline only when it moves
 * earlier (store/deadlines.h), so a game whose deadline comes earlier with
 * no write is put right by a pass alone: a shorter --idle-end runs one, and
 * so must a kind of deadline game_flag_deadline did not give before. Bump
 * this with such a change. */
#define UPGRADE_GENERATION "1"

typedef struct upgrade upgrade_t;

/* Starts this replica's thread: it runs a pass when one is due and no
 * other replica holds it, waits while the next is not due, and ends once
 * every pass is done (recorded in Redis: a later start ends at once). NULL
 * when a thread or memory runs out. */
upgrade_t *upgrade_start(const game_svc_config_t *games);

/* Stops and joins the thread (a pass cut short is taken up again by a
 * replica once its lease lapses), frees it. NULL is fine. */
void upgrade_stop(upgrade_t *upgrade);

#endif
