/* The game service: a game's load; every change as one compare-and-set
 * write that keeps the answer for the caller's Idempotency-Key, publishes
 * the change's event and settles an outcome the store could not report; a
 * new game (from values or a PGN); the event hub's reads. Any read records a
 * fallen flag first (Redis's clock decides). It knows rules/, store/ and
 * api/game/, and never writes an HTTP answer: a call returns a status. */
#ifndef CHESSD_API_GAME_SERVICE_H
#define CHESSD_API_GAME_SERVICE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "../../rules/game.h"
#include "../../rules/pgn_read.h"
#include "../../store/game_meta.h"
#include "../../store/game_record.h"
#include "../../store/store.h"
#include "../http/buf.h"
#include "game_events.h"
#include "idempotency.h"
#include "precondition.h"
#include "tokens.h"

/* What the service counts, for the caller's metrics: a callback with this
 * enum rather than the server's metrics, which sit above this room. */
typedef enum {
    GAME_SVC_COUNTER_MOVE_APPLIED = 0,
    GAME_SVC_COUNTER_VERSION_CONFLICT,
    GAME_SVC_COUNTER_STORE_FULL,      /* a write refused: the store is full */
    GAME_SVC_COUNTER_OUTCOME_UNKNOWN, /* a write whose outcome is not known */
    GAME_SVC_COUNTER_FEED_ADDED,      /* a finished game put on the finished-games feed */
    GAME_SVC_COUNTER_COUNT
} game_svc_counter_t;
/* Called once for each thing counted, on any thread. */
typedef void (*game_svc_count_fn)(game_svc_counter_t counter);

/* The settings the service runs with (built by the caller from its own). */
typedef struct game_svc_config {
    struct store *store;
    game_svc_count_fn count; /* NULL: nothing is counted */
    unsigned max_game_plies;
    unsigned finished_game_ttl_seconds; /* a finished game expires this long after its end; 0: never (an
                                         * active one never does: it ends by a rule, deadlines.h) */
    unsigned finished_feed_retention_seconds; /* a finished game stays on the feed this long (finished.h) */
    int64_t idle_end_ms;                /* a game with no clock and no days ends this long after a turn began (0: never) */
    int64_t day_ms;                     /* a day of days_per_move */
    unsigned idempotency_ttl_seconds;   /* of a kept answer */
    unsigned game_cache_slots;          /* of the game cache (game_cache.h), on first use */
    unsigned engine_lease_ms;           /* how long the computer's turn may take before another replica takes it */
    unsigned engine_turns_per_client;   /* the computer's turns one client may have waiting (0: no limit) */
    unsigned engine_turns_max;          /* the computer's turns waiting from every client (0: no limit) */
    /* Presence and claims against a gone opponent (game_svc_presence). A
     * player is here while their last sign is younger than presence_ms: a
     * change they made, or a mark by the replica holding a stream opened
     * with their token, which marks them every presence_ms / 3. */
    int64_t gone_after_ms;              /* the claims' base wait (game_claim_wait_ms); 0: no presence, no claims */
    int64_t presence_ms;
    int spectator_delay_plies;          /* a new game's spectator delay when its creation names none */
} game_svc_config_t;

typedef enum {
    GAME_SVC_OK = 0,
    GAME_SVC_REPLAY,                 /* a retry: the answer is the one kept for its key */
    GAME_SVC_ENOT_FOUND,             /* no game has this id */
    GAME_SVC_EUNAVAILABLE,           /* the store cannot be reached (nothing was changed) */
    GAME_SVC_EFULL,                  /* the store is out of memory (nothing was changed) */
    GAME_SVC_EUNKNOWN,               /* the write was sent, no answer came: it may have been made */
    GAME_SVC_ESTORE,                 /* the store answered something unexpected */
    GAME_SVC_EBAD_RECORD,            /* the stored game cannot be read */
    GAME_SVC_EDAMAGED,               /* the game's keys in the store disagree (some were evicted or lost): it can
                                      * be neither read nor changed (nothing was changed) */
    GAME_SVC_EBUSY,                  /* the game changed meanwhile too often: retry (detail) */
    GAME_SVC_EUNAUTHORIZED,          /* no player token */
    GAME_SVC_EFORBIDDEN,             /* the token is not a player's of this game */
    GAME_SVC_EPRECONDITION_REQUIRED, /* a change names no version (nor a move its ply) */
    GAME_SVC_ECONFLICT,              /* the game is not at the version or ply named (detail, current_version,
                                      * current_ply when ply_known, expected_version) */
    GAME_SVC_EPRECONDITION,          /* If-Match names other versions (detail, current_version) */
    GAME_SVC_ECONFLICTING,           /* the change's guards contradict each other (detail) */
    GAME_SVC_ETIMED_OUT,             /* the flag fell before the change: the game is over on time (detail) */
    GAME_SVC_EREFUSED,               /* rules/ refuses the change (refusal; an illegal move: move_*) */
    GAME_SVC_EINVALID,               /* a value of the change is invalid (detail: the caller's sentence) */
    GAME_SVC_EKEY_REUSED,            /* the Idempotency-Key came with another request */
    GAME_SVC_EPGN,                   /* the creation's PGN cannot be read or played (pgn) */
    GAME_SVC_ENOTES_TOO_LARGE,       /* the creation's PGN has more notes than a game keeps (GAME_NOTES_MAX) */
    GAME_SVC_EINTERNAL,              /* out of memory, no randomness... (detail) */
    GAME_SVC_ETOO_MANY_TURNS,        /* the client has engine_turns_per_client of the computer's turns waiting */
    GAME_SVC_EENGINE_BUSY,           /* engine_turns_max of the computer's turns wait: nothing was changed */
    GAME_SVC_STATUS_COUNT
} game_svc_status_t;

enum { GAME_SVC_DETAIL_SIZE = 256 };

/* What a call came to besides its status. The caller owns it: zero it
 * before the call, game_svc_result_free() after. */
typedef struct {
    char detail[GAME_SVC_DETAIL_SIZE];
    unsigned limit; /* GAME_SVC_ETOO_MANY_TURNS, GAME_SVC_EENGINE_BUSY: the bound reached */
    uint64_t current_version, expected_version; /* ECONFLICT; EPRECONDITION: current_version */
    bool ply_known;                             /* ECONFLICT: current_ply is the game's */
    uint64_t current_ply;
    game_status_t refusal;                      /* EREFUSED */
    int64_t claim_in_ms;                        /* EREFUSED opponent_not_gone: ms until a claim (0: none known) */
    game_takeback_t takeback;                   /* EREFUSED: the game's takeback policy */
    /* EREFUSED with GAME_EILLEGAL_MOVE: the rules' reason and explanation,
     * the move's text (the caller's), its index and the position's FEN. */
    legality_reason_t move_reason;
    char move_message[200];
    const char *move_text;
    int move_index;
    char move_fen[FEN_BUFFER_SIZE];
    pgn_read_error_t pgn; /* EPGN */
    /* OK and REPLAY of a write: the answer as it is kept for a retry. */
    unsigned answer_status;
    uint64_t version;
    char location[IDEM_LOCATION_SIZE];
    char *body; /* malloc'd; the caller may take it (then set it NULL) */
    size_t body_length;
} game_svc_result_t;

/* Frees what r holds and zeroes it. */
void game_svc_result_free(game_svc_result_t *r);

/* A game as loaded. A game of the first format is converted: its move list
 * and history are made here, and its next write stores them whole. Free
 * with game_svc_game_free (also after a failed call). */
typedef struct {
    game_record_t record;
    store_game_t stored;
    game_meta_t *meta; /* its tags and metadata: full reads (game_svc_read) and creations; NULL: none */
    const char *moves; /* the move list ("uci:san" entries): full loads, converted games, imports */
    size_t moves_length;
    bool legacy;
    char *legacy_moves, *legacy_history;
    size_t legacy_history_length;
    int64_t now_ms; /* Redis's clock when loaded (0: a cached copy, or not read yet) */
} game_svc_game_t;

void game_svc_game_free(game_svc_game_t *g);

/* Loads game id for a read (what: in full, with its tags and metadata, or
 * its state), recording a fallen flag first (then *g is the ended game). */
game_svc_status_t game_svc_read(const game_svc_config_t *c, const char *id, store_load_t what, game_svc_game_t *g,
                                game_svc_result_t *out);

/* Keeps a copy of a game just read in the game cache (untimed games of
 * the current format only: a timed one is always read for Redis's clock). */
void game_svc_keep(const game_svc_config_t *c, const game_svc_game_t *g);

/* A write request: its Idempotency-Key (NULL: none) with the request's
 * fingerprint (idem_fingerprint), whether its answer lists legal moves,
 * and what a retry is answered with besides the body: answer_status, and a
 * creation's location (location_prefix followed by the new id; NULL: none);
 * and the client, whose queue a computer's turn it makes waits in. */
typedef struct {
    const char *key;
    const char *fingerprint;
    bool legal_moves;
    unsigned answer_status;
    const char *location_prefix;
    const char *client; /* who asks: the owner of a computer's turn the change makes (NULL or "": none) */
} game_svc_request_t;

/* What a change is made against (precondition.h): expected_version
 * and/or If-Match, every one given naming the current version, or for a
 * move expected_ply, the plies played before it. */
typedef precondition_t game_svc_version_t;

typedef enum {
    GAME_SVC_MOVE = 0,
    GAME_SVC_UNDO,
    GAME_SVC_RESIGN,
    GAME_SVC_ABORT,
    GAME_SVC_DRAW,
    GAME_SVC_TAKEBACK,
    GAME_SVC_GIVE_TIME,
    GAME_SVC_START_CLOCKS,
    GAME_SVC_CLAIM,
    GAME_SVC_ACTION_COUNT
} game_svc_action_kind_t;

/* A change: a move (its UCI or SAN text), an undo, a resignation, an abort,
 * a draw action (game_draw_action_t), a takeback action
 * (game_takeback_action_t), time given to the opponent (give_ms), the
 * clocks started by both players (other_token) or a claim against a gone
 * opponent (game_claim_t; judged on the game as stored, never a copy). A move with offer_draw leaves the mover's draw
 * offer standing after it, in the same write, unless the move ended the
 * game (the offer is then moot); a standing offer by the other player lapses
 * with the move as always (moving declines it). invalid, when set, is the sentence refusing the
 * request's values (GAME_SVC_EINVALID), said once the game is found ready
 * for a change. */
typedef struct {
    game_svc_action_kind_t kind;
    const char *move;
    bool offer_draw; /* a move: the mover offers a draw with it (one change) */
    int action;
    int64_t give_ms; /* GAME_SVC_GIVE_TIME: the time given */
    const char *other_token; /* GAME_SVC_START_CLOCKS: the other player's token, which must agree */
    const char *invalid;
} game_svc_action_t;

/* Makes a change to game id for the holder of token (NULL: none given), as
 * one compare-and-set on the version loaded; on a copy from the cache
 * first, judged again on the stored game when refused or redone. A move
 * guarded by its ply whose write found the version moved (an offer, say)
 * is judged again on a fresh load, a few times at most (then
 * GAME_SVC_EBUSY). The answer (GameChange) is in out. */
game_svc_status_t game_svc_change(const game_svc_config_t *c, const char *id, const char *token,
                                  const game_svc_request_t *rq, const game_svc_version_t *version,
                                  const game_svc_action_t *action, game_svc_result_t *out);

/* A new game: its players' names ("" : none), start, clock (or days a
 * move), rules and takeback policy (within the rules' bounds), its tags and
 * metadata (checked), and the text of one PGN game (NULL: none) whose tags
 * and mainline set the start, the moves, the names not given, the ending
 * and the tags not given (those game_meta.h keeps: others are left out,
 * not refused). */
/* A timed game's first-move grace when its creation names none. */
enum { GAME_SVC_FIRST_MOVE_DEFAULT_MS = 30000 };

typedef struct {
    char names[COLOR_COUNT][GAME_NAME_MAX + 1];
    position_t start;
    game_control_t controls[COLOR_COUNT]; /* both period_count 0: no clock */
    int64_t first_move_ms; /* a timed game's first-move grace (game_set_first_move; 0: none) */
    int64_t start_at_ms;   /* a timed game's clocks start by then (0: when both moved) */
    int64_t days_per_move; /* a correspondence game (0: none) */
    game_rules_t rules;
    game_takeback_t takeback;
    const char *pgn;
    size_t pgn_length;
    game_engine_t engine; /* the side the computer plays (engine.plays false: none) */
    bool analysis;        /* hints allowed while the game is played */
    int spectator_delay_plies; /* plies a spectator sees the game behind (0..GAME_VIEW_DELAY_MAX; -1: the default) */
    game_meta_t *meta;    /* the caller's, checked (NULL: none) */
    /* Its webhook subscriptions, made beforehand ("<sub>=<kinds> ...",
     * api/game/webhook_kinds.h; "": none). */
    char webhooks[GAME_WEBHOOKS_TEXT_SIZE];
    /* Called once the game's id is final, before its write: records the
     * subscriptions made for it (false: the creation fails as the store
     * unavailable). NULL: nothing to call. */
    bool (*on_id)(void *ctx, const char *id);
    void *on_id_ctx;
    /* A JSON array the creation's answer (and its replay) carries as
     * "webhooks" (NULL: none): the only place a secret is shown. */
    const char *answer_webhooks;
} game_svc_new_t;

/* Whether token (NULL: none) is a player's of r: one HMAC, compared in
 * constant time with both players'. False too when it cannot be checked
 * now (no secret). */
bool game_svc_is_player(const game_record_t *r, const char *token);

/* Whether the computer has something to do in r: it plays, the game goes
 * on, and it is to move, or the other player's takeback offer waits for
 * its answer. Every write that leaves a game so records the intent and
 * queues the job (store/engine_jobs.h's protocol). */
bool game_svc_engine_has_turn(const game_record_t *r);

/* Chooses the computer's move in r, whose move list is line (length
 * bytes), at Redis time now_ms: its UCI into uci. False when no move could
 * be had (the engine failed). */
typedef bool (*game_svc_choose_fn)(void *ctx, const game_record_t *r, const char *line, size_t length, int64_t now_ms,
                                   char uci[UCI_BUFFER_SIZE]);

/* The computer's turn in game id at version: it accepts a takeback
 * offered to it, else plays the move choose gives, as one compare-and-set
 * on version. GAME_SVC_OK: done. GAME_SVC_ECONFLICT: the turn is gone (a
 * later version, the game over, a duplicate job): nothing to do.
 * GAME_SVC_ETIMED_OUT: its flag fell first. GAME_SVC_EBUSY: no move was
 * chosen. Any other: the store failed; the turn is still to be played. */
game_svc_status_t game_svc_engine_turn(const game_svc_config_t *c, const char *id, uint64_t version,
                                       game_svc_choose_fn choose, void *ctx, game_svc_result_t *out);

/* --- for a bulk of games (bulk.h) --- */

/* GAME_SVC_REPLAY (out: the kept answer) when rq's key has one kept within
 * scope, GAME_SVC_OK when it has none (or no key is given), else why it
 * cannot be told. */
game_svc_status_t game_svc_kept(const game_svc_config_t *c, const char *scope, const game_svc_request_t *rq,
                                game_svc_result_t *out);

/* A kept answer (sealed) for a retry with this fingerprint: GAME_SVC_REPLAY
 * with it in out, or why it cannot answer (the key came with another request...). */
game_svc_status_t game_svc_open_kept(const char *fingerprint, const char *sealed, game_svc_result_t *out);

/* Sets up *g (zeroed here; free it after) as a new game of spec (its PGN
 * and computer ignored) with a new id and the players' tokens, unwritten. */
game_svc_status_t game_svc_prepare(const game_svc_config_t *c, const game_svc_new_t *spec, game_svc_game_t *g,
                                   char tokens[COLOR_COUNT][TOKENS_TOKEN_SIZE], game_svc_result_t *out);

typedef enum { GAME_SVC_BULK_START_CLOCKS = 0, GAME_SVC_BULK_CANCEL } game_svc_bulk_action_t;

/* The organiser's change to game id of bulk, as one compare-and-set (a
 * few attempts when the game moves meanwhile): its clocks started now, or
 * the game cancelled before anyone moved (game_cancel). dry_run: judged,
 * not written. GAME_SVC_EFORBIDDEN when the game is not the bulk's. */
game_svc_status_t game_svc_organize(const game_svc_config_t *c, const char *id, const char *bulk,
                                    game_svc_bulk_action_t action, bool dry_run, game_svc_result_t *out);

/* GAME_SVC_REPLAY (out: the kept answer) when a creation's key has one,
 * GAME_SVC_OK when it has none (or no key is given), else why it cannot be told. */
game_svc_status_t game_svc_created_before(const game_svc_config_t *c, const game_svc_request_t *rq,
                                          game_svc_result_t *out);

/* Creates a game; the answer (the Game with both tokens) is in out. */
game_svc_status_t game_svc_create(const game_svc_config_t *c, const game_svc_request_t *rq,
                                  const game_svc_new_t *spec, game_svc_result_t *out);

/* For the event hub (any thread): appends the whole game as an event
 * object ({"type": "game", ...}: the Game without tokens or legal moves) to
 * out and fills meta (type "game"), a fallen flag recorded first. */
game_svc_status_t game_svc_snapshot(const game_svc_config_t *c, const char *id, buf_t *out,
                                    game_event_meta_t *meta);

/* How a spectator sees a game in a snapshot (spectator.h): live (it is
 * over, or has no delay), or a view of it, sig telling what the view shows
 * (a view that shows other moves has another sig; never 0). */
typedef struct {
    bool live;
    uint64_t sig;
} game_svc_view_t;

/* game_svc_snapshot for a stream opened with a player's token (NULL:
 * none) or a key that reads live (live_key): *player is 1 + the token's
 * colour, 0 without a token; a token not a player's of this game is
 * GAME_SVC_EFORBIDDEN. The snapshot is what the caller sees: a spectator's
 * view unless view->live. */
game_svc_status_t game_svc_snapshot_for(const game_svc_config_t *c, const char *id, const char *token, bool live_key,
                                        buf_t *out, game_event_meta_t *meta, int *player, game_svc_view_t *view);

/* For the event hub: game_svc_snapshot (out, meta) and in the same read,
 * when view_out is not NULL and a spectator does not see the game live
 * (view->live false), the spectator's view as an event onto view_out. */
game_svc_status_t game_svc_snapshot_views(const game_svc_config_t *c, const char *id, buf_t *out, buf_t *view_out,
                                          game_event_meta_t *meta, game_svc_view_t *view);

/* What game_svc_presence judged, for the streams of each player. */
typedef struct {
    bool gone[COLOR_COUNT];           /* their opponent is gone on their turn, and a claim will come first */
    int64_t claim_in_ms[COLOR_COUNT]; /* then: the ms until a claim is possible (0: now) */
} game_svc_presence_t;

/* For the event hub, at each of its marks: marks the players of bit mask
 * `players` (bit c: colour c) here, then judges for each whether their
 * opponent is gone on their turn: absent (no sign for presence_ms) in an
 * active game where a claim applies (game_claim_at), and not about to
 * lose on time before the claim would be possible. One read. */
game_svc_status_t game_svc_presence(const game_svc_config_t *c, const char *id, unsigned players,
                                    game_svc_presence_t *out);

/* Records the end of game id on time when its flag has fallen by Redis's
 * clock (the write publishes its "timeout" event); *meta is the game's
 * state after (type "change"), so a caller whose timer fired early can arm
 * it again. */
game_svc_status_t game_svc_check_flag(const game_svc_config_t *c, const char *id, game_event_meta_t *meta);

#endif
