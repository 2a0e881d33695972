/* The clock's steps that game.c takes inside its operations (the public
 * clock functions are game.h's): charging a move, settling the side to
 * move, taking back what moves earned, and what an overdue deadline means. */
#ifndef CHESSD_RULES_GAME_CLOCK_H
#define CHESSD_RULES_GAME_CLOCK_H

#include "game.h"

enum { CLOCK_FREE_PLIES = 2 }; /* the first two plies: the clock starts with the second */

/* What a deadline that passed does to a game (clock_due). */
typedef enum { CLOCK_DUE_NONE = 0, CLOCK_DUE_ABORT, CLOCK_DUE_FLAG, CLOCK_DUE_IDLE } clock_due_t;

/* Whether g's deadline (game_flag_deadline) has passed by now_ms, and
 * whether that aborts it (no first moves), loses it on time or at the idle end. */
clock_due_t clock_due(const game_t *g, int64_t now_ms);

/* imported_plies as a clock keeps it: 0 when none of the first `plies`
 * moves could have earned an increment anyway (the free plies never do). */
int64_t clock_imported_kept(int64_t plies);

/* Charges the running side with the time since its turn started; the
 * clock then reads as of now_ms. turn_started_ms moves to now_ms and the
 * remaining time loses as much, so the flag's deadline stays where it was.
 * A clock that is not running is left. */
void clock_settle(game_t *g, int64_t now_ms);

/* The side to move's turn starts now. */
void clock_restart(game_t *g, int64_t now_ms);

/* Charges the side to move for the move it is making at now_ms (before
 * the move is played): settled, then given what the move earns (the
 * increment, a period's time, a Bronstein refund). The mover's time after
 * it, or -1 for a game with no clock. */
int64_t clock_charge_move(game_t *g, int64_t now_ms);

/* Takes back from clock, g's clock settled at the takeback, what each of
 * g's moves from ply index `from` on earned (game_clock_earned), never
 * below 0, and cuts imported_plies to the moves that stand. */
void clock_take_back(game_clock_t *clock, const game_t *g, int from);

/* Whether clock, as a record keeps it, fits g (its ply count): within the
 * bounds, one kind of clock (controls, correspondence or none), its parts
 * only where they belong. */
bool clock_fits(const game_t *g, const game_clock_t *clock);

#endif
