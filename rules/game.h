/* A game under the Laws of Chess beyond the board: whose turn it is, the
 * endings, draw and takeback offers, taking moves back, the clocks.
 * Time is an input: an operation that may touch the clock takes now_ms, on
 * the caller's one clock. A game_t is a fixed-size value with no pointers;
 * the caller keeps the moves played (move-list text, see game_replay). Pure:
 * no malloc, no I/O; every operation succeeds (GAME_OK) or changes nothing. */
#ifndef CHESSD_RULES_GAME_H
#define CHESSD_RULES_GAME_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "legality.h"
#include "opening.h"
#include "position.h"
#include "san.h"
#include "status.h"
#include "uci_move.h"

/* An active game has made fewer than 150 halfmoves since its last irreversible
 * move (the 75-move rule ends it there), so that many keys are all the
 * repetition history it can need. */
enum { GAME_HISTORY_MAX = 150, GAME_MAX_PLIES = 18000 };

typedef enum {
    GAME_ACTIVE = 0,
    GAME_CHECKMATE,
    GAME_STALEMATE,
    GAME_DRAW,
    GAME_RESIGNED,
    GAME_TIMEOUT, /* a flag fell (or a correspondence or idle deadline passed, or the side to move left and its
                   * opponent claimed): lost on time, or drawn when the other side cannot mate or claimed a draw */
    GAME_ABORTED, /* ended before both players had moved: no result */
    GAME_VARIANT_END, /* the variant's own end (its termination says which), won or drawn */
    GAME_STATE_COUNT
} game_state_t;

typedef enum { GAME_RESULT_NONE = 0, GAME_WHITE_WINS, GAME_BLACK_WINS, GAME_DRAWN, GAME_RESULT_COUNT } game_result_t;

typedef enum {
    GAME_TERMINATION_NONE = 0,
    GAME_TERMINATION_CHECKMATE,
    GAME_TERMINATION_STALEMATE,
    GAME_TERMINATION_INSUFFICIENT_MATERIAL,
    GAME_TERMINATION_FIVEFOLD_REPETITION,
    GAME_TERMINATION_SEVENTYFIVE_MOVES,
    GAME_TERMINATION_THREEFOLD_REPETITION,
    GAME_TERMINATION_FIFTY_MOVES,
    GAME_TERMINATION_AGREEMENT,
    GAME_TERMINATION_RESIGNATION,
    GAME_TERMINATION_TIME_FORFEIT,
    GAME_TERMINATION_ABORTED,
    /* The variants' own ends, in variant_end_t's order. */
    GAME_TERMINATION_KING_EXPLODED,
    GAME_TERMINATION_NO_PIECES,
    GAME_TERMINATION_STALEMATE_WIN,
    GAME_TERMINATION_KING_OF_THE_HILL,
    GAME_TERMINATION_THREE_CHECKS,
    GAME_TERMINATION_HORDE_CAPTURED,
    GAME_TERMINATION_RACE_FINISHED,
    GAME_TERMINATION_IDLE_END,  /* no move for the idle end: lost as on time */
    GAME_TERMINATION_DRAW_ODDS, /* drawn, and a draw counts as a win for one side (Armageddon) */
    GAME_TERMINATION_ABANDONMENT, /* the side to move was gone too long: its opponent claimed the win or a draw */
    GAME_TERMINATION_COUNT
} game_termination_t;

/* Who has a draw (or takeback) offer standing. */
typedef enum { GAME_OFFER_NONE = 0, GAME_OFFER_WHITE, GAME_OFFER_BLACK, GAME_OFFER_COUNT } game_offer_t;

/* How moves may be taken back: by the other player's agreement (takeback
 * offers), by the mover alone (undo), or not at all. */
typedef enum { GAME_TAKEBACK_AGREEMENT = 0, GAME_TAKEBACK_FREE, GAME_TAKEBACK_NONE, GAME_TAKEBACK_COUNT } game_takeback_t;

typedef enum { GAME_TAKEBACK_OFFER = 0, GAME_TAKEBACK_ACCEPT, GAME_TAKEBACK_DECLINE, GAME_TAKEBACK_ACTION_COUNT } game_takeback_action_t;

/* The bounds of a clock (milliseconds), of the first-move grace, of a
 * correspondence game's days a move, and of the time a player may give. */
#define GAME_FIRST_MOVE_MAX INT64_C(86400000)
#define GAME_CLOCK_INITIAL_MIN INT64_C(1000)
#define GAME_CLOCK_INITIAL_MAX INT64_C(86400000)
#define GAME_CLOCK_INCREMENT_MAX INT64_C(600000)
#define GAME_CLOCK_DELAY_MAX INT64_C(600000)
#define GAME_CLOCK_PERIOD_MOVES_MAX 200
#define GAME_DAYS_PER_MOVE_MAX 14
#define GAME_DAY_MS_MAX INT64_C(86400000)
#define GAME_GIVE_TIME_MAX INT64_C(60000)
#define GAME_GIVE_TIME_TOTAL_MAX INT64_C(600000)

/* How a delay works: Bronstein gives back, after the move, the time the
 * move took up to the delay; simple (US) delay waits the delay before the
 * clock starts to count down. */
typedef enum { GAME_DELAY_NONE = 0, GAME_DELAY_BRONSTEIN, GAME_DELAY_SIMPLE, GAME_DELAY_MODE_COUNT } game_delay_mode_t;

/* The periods of a time control: the first period's time is initial_ms
 * and lasts `moves` of the side's moves (0: the rest of the game); each
 * later one adds its ms when the moves before it are made. */
enum { GAME_PERIODS_MAX = 4 };
typedef struct {
    int64_t moves; /* the side's moves in the period; 0 (only the last): the rest of the game */
    int64_t ms;    /* the time the period brings */
} game_period_t;

/* One side's time control: its periods (periods[0].ms is the starting
 * time), a Fischer increment and a delay, both from the side's first move
 * on which the clock runs. Untimed when period_count is 0. */
typedef struct {
    game_period_t periods[GAME_PERIODS_MAX];
    int64_t period_count;
    int64_t increment_ms;
    int64_t delay_ms;
    int64_t delay_mode; /* a game_delay_mode_t; GAME_DELAY_NONE when delay_ms is 0 */
} game_control_t;

/* A game's clock. A timed game has a control per side (odds: they may
 * differ). Its clock runs once the second ply has been played (the first
 * two are free), or from start_at_ms when that is set, for the side to
 * move, while the game is active: remaining_ms of the side to move is as
 * of its turn's start (the later of turn_started_ms and start_at_ms); the
 * other side's is exact. A move earns the increment when the clock ran as
 * it was played: a move at ply index p (0: the first move from the initial
 * position) earned it when p >= 2 and p >= imported_plies; it earns a
 * period's time when it completes the period before, at p >=
 * imported_plies. imported_plies counts the first moves of a game whose
 * clock was set after them (a game imported from PGN, its clock full at
 * the imported position): they earned nothing. It is kept at 0 when the
 * first two plies are all there are (they never earn an increment anyway),
 * so it is 0 or from 3 to ply_count. A takeback takes back the increments
 * and periods its moves earned, and cuts imported_plies to the moves that
 * stand; a Bronstein delay's refund stays (it gave back time spent).
 *
 * A correspondence game has no control but move_ms, the time for each
 * move (days_per_move days of day_ms): the side to move must move by
 * turn_started_ms + move_ms. Every other game may end idle: idle_ms (the
 * service's setting, never stored) after its side to move's turn began.
 * turn_started_ms is kept for every game. */
typedef struct {
    game_control_t control[COLOR_COUNT];
    int64_t remaining_ms[COLOR_COUNT];
    int64_t turn_started_ms;
    int64_t imported_plies; /* a ply count; 64 bits wide so that the struct has no padding (games compare with memcmp) */
    int64_t first_move_ms;  /* the first-move grace (game_set_first_move); 0: none */
    int64_t start_at_ms;    /* the clocks run from then at the latest; 0: once two plies are played */
    int64_t days_per_move;  /* correspondence: 1..GAME_DAYS_PER_MOVE_MAX; 0: none */
    int64_t move_ms;        /* correspondence: the time for each move; 0: none */
    int64_t given_ms[COLOR_COUNT]; /* the time each side gave the other (game_give_time) */
    int64_t idle_ms;        /* the idle end of a game with no clock (not stored); 0: none */
} game_clock_t;

/* Rules an organiser switches per game (game_rules_t.flags): no abort, no
 * time given, no win claimed when the opponent leaves. */
enum { GAME_RULE_NO_ABORT = 1, GAME_RULE_NO_GIVE_TIME = 2, GAME_RULE_NO_CLAIM_WIN = 4, GAME_RULE_ALL = 7 };

typedef struct {
    int64_t flags;                 /* GAME_RULE_* */
    int64_t draw_offers_from_move; /* offers and agreements only from this move number on; 0: always */
    int64_t draw_odds;             /* 0: none; 1 + the color a draw counts as a win for (Armageddon) */
} game_rules_t;

typedef enum { GAME_DRAW_OFFER = 0, GAME_DRAW_ACCEPT, GAME_DRAW_DECLINE, GAME_DRAW_CLAIM, GAME_DRAW_ACTION_COUNT } game_draw_action_t;

/* What an operation did: GAME_OK, or why it changed nothing. */
typedef enum {
    GAME_OK = 0,
    GAME_ENOT_YOUR_TURN,        /* a move or a claim by the player not to move */
    GAME_EOVER,                 /* the game is over: nothing changes it */
    GAME_EILLEGAL_MOVE,         /* the move text is not a legal move here (see game_played_t.reason) */
    GAME_ETOO_LONG,             /* the game has as many plies as it may keep */
    GAME_ENOTHING_TO_UNDO,      /* no move, or the last one was not the caller's */
    GAME_ENO_DRAW_OFFER,        /* accept/decline with no offer by the other player */
    GAME_EDRAW_ALREADY_OFFERED, /* the caller's own offer still stands */
    GAME_EDRAW_NOT_CLAIMABLE,   /* neither the 50-move rule nor threefold repetition applies */
    GAME_EBAD_RECORD,           /* a stored game (restore, replay) is not consistent */
    GAME_ETAKEBACK_NOT_ALLOWED, /* the game's takeback policy does not allow this way of taking back */
    GAME_ETAKEBACK_ALREADY_OFFERED, /* the caller's own takeback offer still stands */
    GAME_ENO_TAKEBACK_OFFER,    /* accept/decline with no takeback offer by the other player */
    GAME_EABORT_TOO_LATE,       /* both players have moved: the game can no longer be aborted */
    GAME_EABORT_NOT_ALLOWED,    /* the game's rules allow no abort */
    GAME_EDRAW_TOO_EARLY,       /* the game's rules allow draw offers only from a later move */
    GAME_EGIVE_TIME_NOT_ALLOWED, /* no clock to give time on, or the game's rules forbid it */
    GAME_EGIVE_TIME_TOO_MUCH,   /* beyond what a call or a game may give */
    GAME_ENO_CLOCK,             /* the game has no clock to start */
    GAME_ECLOCK_RUNNING,        /* the clocks run already */
    GAME_ECLAIM_NOT_ALLOWED,    /* no claim against a gone opponent in this game (game_claim) */
    GAME_EOPPONENT_NOT_GONE,    /* the opponent is not to move, or not gone, or not gone long enough */
    GAME_STATUS_COUNT
} game_status_t;

typedef struct {
    position_t initial;                  /* the position the game started from */
    position_t pos;                      /* the position now */
    status_t status;                     /* of pos, with the history */
    uint64_t history[GAME_HISTORY_MAX];  /* keys of the positions since the last irreversible move, oldest first, pos excluded */
    int history_count;
    int ply_count;                       /* moves played from initial */
    game_state_t state;
    game_result_t result;
    game_termination_t termination;      /* GAME_TERMINATION_NONE while active */
    game_offer_t draw_offer;
    game_takeback_t takeback;            /* the policy */
    game_offer_t takeback_offer;
    game_clock_t clock;
    game_rules_t rules;
    uint64_t opening_key;                /* the key of the last named position along the game (opening.h), 0: none */
} game_t;

/* What game_move() played, or why not. */
typedef struct {
    move_t move;
    char uci[UCI_BUFFER_SIZE];
    char san[SAN_BUFFER_SIZE];
    legality_reason_t reason; /* GAME_EILLEGAL_MOVE: the rules' reason */
    char message[200];        /* GAME_EILLEGAL_MOVE: the rules' explanation */
    bool clocked;             /* a timed game: clock_ms is the mover's time left after the move */
    int64_t clock_ms;
} game_played_t;

/* A new game from initial (a legal position), untimed, takebacks by
 * agreement. It is already over when the position is (mate, stalemate, an
 * automatic draw). */
void game_start(game_t *g, const position_t *initial);

/* Sets a new game's clock, the same Fischer clock for both sides
 * (initial_ms 0: untimed), and its takeback policy. False, changing
 * nothing, when the clock is out of the GAME_CLOCK bounds. */
bool game_set_rules(game_t *g, int64_t initial_ms, int64_t increment_ms, game_takeback_t takeback);

/* Whether c is a time control within the bounds: 1 to GAME_PERIODS_MAX
 * periods, each of moves 1..GAME_CLOCK_PERIOD_MOVES_MAX but the last (0),
 * the first's ms within the GAME_CLOCK_INITIAL bounds and each later one's
 * at most GAME_CLOCK_INITIAL_MAX; increment and delay within theirs, a
 * delay with its mode and no mode without one. */
bool game_control_ok(const game_control_t *c);

/* Sets a new game's controls, one a side (they may differ, but both are
 * timed), each side's time its first period's. False, changing nothing,
 * when one is not game_control_ok. */
bool game_set_controls(game_t *g, const game_control_t *white, const game_control_t *black);

/* Makes a new untimed game a correspondence game: days (1..
 * GAME_DAYS_PER_MOVE_MAX) of day_ms (1..GAME_DAY_MS_MAX; a day, but a
 * shorter one for a demonstration or a test) for each move, the first
 * turn starting at now_ms. False, changing nothing, when out of bounds or
 * the game is timed. */
bool game_set_correspondence(game_t *g, int64_t days, int64_t day_ms, int64_t now_ms);

/* Sets when a new timed game's clocks start at the latest (the first two
 * plies may start them sooner): no first-move grace then, and a flag that
 * falls before both players moved loses on time. False, changing nothing,
 * when the game is untimed or start_at_ms is not positive. */
bool game_set_start_at(game_t *g, int64_t start_at_ms);

/* Starts the clocks of an active timed game now (a start time of now_ms):
 * the side to move's runs whether or not anyone has moved. GAME_ENO_CLOCK
 * without a clock, GAME_ECLOCK_RUNNING once they run (two plies played, or
 * a start time passed). */
game_status_t game_start_clocks(game_t *g, int64_t now_ms);

/* Sets a new game's rules; false, changing nothing, when a flag is unknown,
 * draw_offers_from_move is outside 0..GAME_MAX_PLIES, or draw_odds is not
 * 0, 1 + WHITE or 1 + BLACK. */
bool game_set_game_rules(game_t *g, const game_rules_t *rules);

bool game_is_timed(const game_t *g);
bool game_is_correspondence(const game_t *g);

/* The opening the game is in (opening.h: the last named position along it,
 * its initial position included), or NULL. */
const opening_t *game_opening(const game_t *g);

/* Sets the opening of a restored game (game_restore) to the named position
 * with this key, as its record keeps it (0, or a key the table no longer
 * names: none). */
void game_restore_opening(game_t *g, uint64_t key);
/* Whether the clock runs (timed, active, and two plies played or a start
 * time set: before that time nothing is charged). */
bool game_clock_running(const game_t *g);
/* Time left to color at now_ms (never below 0). */
int64_t game_clock_remaining(const game_t *g, color_t color, int64_t now_ms);
/* Sets a timed game's first-move grace: while the first two plies are
 * unplayed (the clock does not run for them), the side to move must move
 * within grace_ms of its turn's start, or the game is aborted by itself
 * (game_flag). The turn starts at now_ms (a new game's creation). False,
 * changing nothing, when the game is untimed (unless grace_ms is 0) or
 * grace_ms is out of 0..GAME_FIRST_MOVE_MAX (0: no grace, never aborted). */
bool game_set_first_move(game_t *g, int64_t grace_ms, int64_t now_ms);
/* When the game ends by itself on time: the flag of the side to move falls,
 * or, before the clock runs, the first-move grace of the side to move ends;
 * a correspondence game's move is due; a game with neither reaches its
 * idle end (0: none of these, or the game is over). */
int64_t game_flag_deadline(const game_t *g);
/* The first-move grace's end alone (0: none pending). */
int64_t game_first_move_deadline(const game_t *g);
/* The time the move at ply index `ply` (0: the first move from the
 * initial position; below ply_count) earned by the clock's rules: its
 * mover's increment when the clock ran as it was played, and the next
 * period's time when it completed a period (see game_clock_t). */
int64_t game_clock_earned(const game_t *g, int ply);
/* The moves side has left to make in its clock's current period, its next
 * one counted, before the next period's time is added (UCI's movestogo);
 * 0 in a last period, untimed or sudden death. */
int game_clock_moves_to_go(const game_t *g, color_t side);

/* Ends the game on time when the flag of the side to move has fallen by
 * now_ms: lost, or drawn when the other side has no material to mate with
 * (status_insufficient_material_for: a safe under-approximation of "cannot
 * mate by any series of legal moves"); or aborted (no result) when the
 * first-move grace of the side to move has passed by now_ms. A
 * correspondence move or an idle end that is overdue ends it the same way:
 * aborted before both players moved, else lost (termination idle_end for
 * the idle end). True when it ended the game. */
bool game_flag(game_t *g, int64_t now_ms);

/* Operations at now_ms on a game whose flag has not fallen by then (the
 * caller runs game_flag first): the clock is charged, the operation done.
 * They refuse nothing on time. */

/* Plays the move in text (UCI or SAN, length bytes) for `who`. Standing
 * draw and takeback offers by the other player lapse when `who` moves
 * instead of answering them. The mover's clock is charged and, once the clock
 * runs, the increment added. The game ends by itself on mate, stalemate and
 * the automatic draws. max_plies (at most GAME_MAX_PLIES) bounds ply_count. */
game_status_t game_move(game_t *g, color_t who, const char *text, size_t length, int max_plies, int64_t now_ms,
                        game_played_t *out);

/* Takes back the last move; only its player may, before the reply, and only
 * under the free takeback policy. line is the game's move-list text (see
 * game_replay), all ply_count moves: the game_t holds no moves, so the
 * takebacks are the only operations that need them back.
 *
 * The clock after a takeback (here and in game_takeback): the time that
 * elapsed stays spent (the side to move is charged up to now_ms, and the
 * side to move in the position gone back to starts its turn then), and
 * each move taken back loses the increment it earned
 * (game_clock_increment_earned), so a player holds what the clock's rules
 * give for the moves that stand, never more, however often moves are made
 * and taken back. A player whose time without that increment is gone
 * (they thought longer than they had before the move) is left at 0: when
 * that is the side to move, its flag falls at once and the takeback ends
 * the game on time, as game_flag would. */
game_status_t game_undo(game_t *g, color_t who, const char *line, size_t length, int64_t now_ms);

/* Takebacks by agreement (policy agreement or free): an offer by `who`, who
 * must have a move to take back (an offer crossing the other player's is an
 * acceptance of it); accepting goes back to the last position in which the
 * proposer was to move (one or two plies); declining drops the offer. line
 * as for game_undo. *plies_back is the count of plies taken back (0 unless
 * accepted). */
game_status_t game_takeback(game_t *g, color_t who, game_takeback_action_t action, const char *line, size_t length,
                            int64_t now_ms, int *plies_back);

/* The plies a takeback proposed by `who` would take back now (0: none). */
int game_takeback_plies(const game_t *g, color_t who);

game_status_t game_resign(game_t *g, color_t who, int64_t now_ms);

/* Ends the game with no result, by either player, before both have moved
 * (fewer than two plies), unless the game's rules allow no abort. */
game_status_t game_abort(game_t *g, color_t who, int64_t now_ms);

/* Aborts the game by its organiser, whatever its rules: only before
 * anyone moved and while no clock runs (GAME_EABORT_TOO_LATE after a
 * move, GAME_ECLOCK_RUNNING once a start time passed). */
game_status_t game_cancel(game_t *g, int64_t now_ms);

/* `who` gives the other side ms (1..GAME_GIVE_TIME_MAX) of clock time, at
 * most GAME_GIVE_TIME_TOTAL_MAX in a game; only on a clock, in an active
 * game whose rules allow it. */
game_status_t game_give_time(game_t *g, color_t who, int64_t ms, int64_t now_ms);

/* Offer (two crossing offers are an agreement), accept or decline the other
 * player's offer, or claim a draw (by the player to move, under the 50-move
 * rule or threefold repetition). Offers and acceptances before the rules'
 * draw_offers_from_move (the position's move number) are refused; claims
 * are not. A game with draw odds that ends drawn, by any rule, is won by
 * the side with the odds (termination draw_odds). */
game_status_t game_draw(game_t *g, color_t who, game_draw_action_t action, int64_t now_ms);

bool game_is_over(const game_t *g);

/* Claims against an opponent who left: when the side to move has been
 * gone long enough, the other player may end the game, won or drawn. Who
 * is gone is the caller's to know (presence is no rule); these judge the
 * rest. A claim's ending is state timeout, termination abandonment. */
typedef enum { GAME_CLAIM_VICTORY = 0, GAME_CLAIM_DRAW, GAME_CLAIM_COUNT } game_claim_t;

/* How long the side to move must be gone before a claim: base_ms scaled
 * to its time control as Lichess scales it, by the time a game lasts
 * (initial time and 40 increments or delays): 1x under 8 minutes (bullet,
 * blitz), 2x under 25 (rapid), 3x for longer clocks and for games with no
 * clock. 0: no claim in this game (a correspondence game, which its move
 * deadline ends; base_ms 0). */
int64_t game_claim_wait_ms(const game_t *g, int64_t base_ms);

/* When `who` may claim against the opponent, gone since gone_since_ms (the
 * last sign of them; 0: none known; negative: they are here): the turn's
 * start or the sign, whichever is later, and game_claim_wait_ms after.
 * GAME_OK with *at_ms (which may be past). GAME_ECLAIM_NOT_ALLOWED: no
 * wait applies, a win claimed under no_claim_win, or fewer than two plies
 * (abort instead). GAME_EOPPONENT_NOT_GONE: `who` is to move, or the
 * opponent is here (*at_ms 0). GAME_EOVER once over. */
game_status_t game_claim_at(const game_t *g, color_t who, game_claim_t claim, int64_t gone_since_ms,
                            int64_t base_ms, int64_t *at_ms);

/* The claim at now_ms (game_claim_at's checks, then now_ms at or past its
 * time, else GAME_EOPPONENT_NOT_GONE with *at_ms still set): a win for
 * `who`, drawn when `who` cannot mate (as on time), or a draw. */
game_status_t game_claim(game_t *g, color_t who, game_claim_t claim, int64_t gone_since_ms, int64_t base_ms,
                         int64_t now_ms, int64_t *at_ms);

/* Move-list text: one entry a move, separated by single spaces, each entry
 * the move's UCI optionally followed by ':' and its SAN, and then
 * optionally by ':' and the mover's clock after it in ms ("e2e4:e4:299000
 * e7e5:e5:298500"). game_line_entry() writes the entry for a played move
 * into out (at least GAME_LINE_ENTRY_SIZE bytes) and returns its length. */
enum { GAME_LINE_ENTRY_SIZE = UCI_BUFFER_SIZE + SAN_BUFFER_SIZE + 22 };
size_t game_line_entry(const game_played_t *played, char *out);
/* The clocks of move-list text line, one a move into clocks (at most max):
 * the mover's ms after it, or -1 when its entry has none. The count, or -1
 * when the line is not move-list text or holds more than max. */
int game_line_clocks(const char *line, size_t length, int64_t *clocks, int max);
/* The bytes of move-list text line (length bytes) kept when its last
 * `plies` entries, and the spaces before them, are cut. */
size_t game_line_keep(const char *line, size_t length, int plies);

/* The moves of move-list text line from initial, each legal in turn, into
 * moves (at most max), and when keys is not NULL the key of the position
 * each was played in. The count, or -1 when the line is not move-list text
 * of legal moves (or holds more than max). */
int game_line_moves(const position_t *initial, const char *line, size_t length, move_t *moves, uint64_t *keys, int max);

/* Rebuilds g by playing the line on initial, checking every move's legality,
 * and keeping the state as given (the line's automatic ending, if any, must
 * agree with it). GAME_EBAD_RECORD when a move is illegal or the line is
 * not move-list text; g is unchanged then. Costs the line's length. */
game_status_t game_replay(game_t *g, const position_t *initial, const char *line, size_t length, game_state_t state,
                          game_result_t result, game_termination_t termination, game_offer_t offer);

/* Sets g from stored parts without replaying: checks that they are
 * consistent (history no longer than the halfmove clock, the ending and the
 * result belong together, an active game's position is not over by itself)
 * and evaluates the position. GAME_EBAD_RECORD when not. */
game_status_t game_restore(game_t *g, const position_t *initial, const position_t *current, const uint64_t *history,
                           int history_count, int ply_count, game_state_t state, game_result_t result,
                           game_termination_t termination, game_offer_t offer);

/* Sets the policy, takeback offer, clock and rules of a restored or
 * replayed game (its other parts in place); GAME_EBAD_RECORD when they do
 * not fit it (a finished game with an offer, a clock out of bounds or below
 * zero, an imported_plies that is not 0 or from 3 to the ply count, or not
 * 0 on no clock, rules out of bounds, an ending by draw odds without them).
 * The clock's idle_ms is not checked: it is the caller's setting. */
game_status_t game_restore_rules(game_t *g, game_takeback_t takeback, game_offer_t takeback_offer,
                                 const game_clock_t *clock, const game_rules_t *rules);

/* Gives g, a replayed game that goes on from where its moves left it (a
 * game imported from PGN), the takeback policy and the clock of `rules` (a
 * new game's, as game_set_rules made them), with no takeback offer: the
 * clock is full for both sides, the turn of the side to move starts at
 * now_ms (it runs from there when g has two plies or more), and the moves
 * already played count as having earned no increment (imported_plies), so
 * taking them back gives none back. GAME_EBAD_RECORD (g unchanged) when
 * the rules do not fit g. */
game_status_t game_adopt_rules(game_t *g, const game_t *rules, int64_t now_ms);

/* Stable names ("active", "1-0", "threefold_repetition", "white",
 * "not_your_turn") and their reverse (-1 when the name is not one). The
 * offer's names are "none", "white", "black". */
const char *game_state_name(game_state_t state);
const char *game_result_name(game_result_t result);
const char *game_termination_name(game_termination_t termination);
const char *game_offer_name(game_offer_t offer);
const char *game_status_name(game_status_t status);
const char *game_takeback_name(game_takeback_t takeback);
int game_takeback_from_name(const char *name, size_t length);
int game_state_from_name(const char *name, size_t length);
int game_result_from_name(const char *name, size_t length);
int game_termination_from_name(const char *name, size_t length);
int game_offer_from_name(const char *name, size_t length);
/* "none", "bronstein", "simple"; and the rules' flags by name
 * ("no_abort", "no_give_time", "no_claim_win": game_rule_name of one
 * GAME_RULE_* bit; game_rule_from_name gives the bit, 0 when unknown). */
const char *game_delay_mode_name(game_delay_mode_t mode);
int game_delay_mode_from_name(const char *name, size_t length);
const char *game_rule_name(int64_t flag);
int64_t game_rule_from_name(const char *name, size_t length);

#endif
