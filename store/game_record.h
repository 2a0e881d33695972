/* A game as stored: the game value (rules/game.h) with its players, id and
 * times, kept as a state text beside an append-only move list and history.
 * A change reads the state and the history's tail only, so loading costs
 * the same at any length. Records of the first format (one JSON text with
 * every move) are converted on reading. */
#ifndef CHESSD_STORE_GAME_RECORD_H
#define CHESSD_STORE_GAME_RECORD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "../rules/game.h"
#include "../rules/rules.h"

/* The state text holds everything a change needs: the current position,
 * counters, ending, players. The move list reads "e2e4:e4 e7e5:e5" (see
 * game_line_entry); the history holds the position key before each move,
 * 16 hex digits each. */

enum {
    GAME_ID_SIZE = 24,            /* 16 characters of base64url, terminated */
    GAME_NAME_CHARS = 64,         /* characters of a player's name */
    GAME_NAME_MAX = 256,          /* bytes of a player's name (64 characters of up to 4 bytes) */
    GAME_TOKEN_HASH_SIZE = 65,    /* hex HMAC-SHA256, terminated */
    GAME_RECORD_STATE_MAX = 2048, /* bytes of a state text, always enough */
    GAME_RECORD_HISTORY_ENTRY = 16,
    GAME_WEBHOOKS_TEXT_SIZE = 320, /* STORE_WEBHOOKS_TEXT_SIZE */
};

typedef struct {
    char name[GAME_NAME_MAX + 1]; /* "" when not given */
    char token_hash[GAME_TOKEN_HASH_SIZE];
} game_player_t;

/* The bounds of a computer player's strength as stored (the API takes a
 * narrower range of ratings: the levels' own). */
enum { GAME_ENGINE_LEVEL_MAX = 8, GAME_ENGINE_ELO_MAX = 4000 };

/* The computer's part in a game against it: the side it plays and its
 * strength, a level or a rating (one of the two; the other 0). The zero
 * value is "no computer", so a record made with memset, and every game
 * stored before these fields existed, is a game between two people. */
typedef struct {
    bool plays;    /* the computer plays color; false: the rest is 0 */
    color_t color;
    int level;     /* 1..GAME_ENGINE_LEVEL_MAX, or 0 when elo is set */
    int elo;       /* 1..GAME_ENGINE_ELO_MAX, or 0 when level is set */
} game_engine_t;

typedef struct {
    char id[GAME_ID_SIZE];
    uint64_t version; /* from the store, not the state text */
    char write_id[33]; /* the store's tag of the write that made this version (STORE_WRITE_ID_SIZE) */
    int64_t created_at_ms, updated_at_ms;
    game_player_t players[COLOR_COUNT];
    game_engine_t engine;
    bool analysis; /* created with hints allowed */
    char bulk[GAME_ID_SIZE]; /* the bulk it was created in ("": none) */
    /* Its webhook subscriptions, "<sub>=<kinds> ..." (store/webhooks.h):
     * kept beside the state, not in it; "": none. */
    char webhooks[GAME_WEBHOOKS_TEXT_SIZE];
    int spectator_delay_plies; /* plies a spectator sees the game behind while it is played (0: live) */
    /* Not stored: a spectator's view of the game (api/game/spectator.h), and the plies it hides. */
    bool view;
    int plies_hidden;
    game_t game;
} game_record_t;

/* Whether e is one the state text holds: no computer (all zero), or a side
 * with exactly one of level and elo in its range. */
bool game_record_engine_ok(const game_engine_t *e);

/* Whether the computer is to move: it plays, the game is in progress and
 * it is its side's turn. A record saying so at version v is what an engine
 * job {id, v} (store.h) is for; nothing else in the record marks it. */
bool game_record_engine_to_move(const game_record_t *r);

/* Whether name may be a player's: no C0 control, DEL or C1 control
 * (U+0080..U+009F, C2 80..C2 9F in UTF-8). Checked on creation and again on
 * every stored name read, so a hand-made record cannot put terminal escapes
 * into a PGN or break the state text's lines. */
bool game_record_name_ok(const char *name);

/* Writes r's state text into out (GAME_RECORD_STATE_MAX bytes); returns its
 * length (not terminated), or 0 when it does not fit or r's engine is not
 * game_record_engine_ok. */
size_t game_record_state(const game_record_t *r, char *out, size_t size);

/* Writes the history entry of key (GAME_RECORD_HISTORY_ENTRY bytes, not terminated). */
void game_record_history_entry(uint64_t key, char *out);

/* Reads a state text and the history's tail (the game's last
 * history_count entries) into r, except id and version. False when the
 * text is not a state text or the game it describes is not consistent. */
bool game_record_read(game_record_t *r, const char *state, size_t state_length, const char *history,
                      size_t history_length);

/* Reads a record of the first format into r (except version) by replaying
 * its moves, and makes the move list and the whole history for the new
 * format (*moves and *history malloc'd, caller frees; lengths set). False
 * when the text is not such a record or out of memory. */
bool game_record_from_legacy(game_record_t *r, const char *text, size_t length, char **moves, size_t *moves_length,
                             char **history, size_t *history_length);

#endif
