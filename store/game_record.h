/* A game as stored: everything needed to answer for it and to rebuild its
 * positions by replaying the moves from the initial FEN (which also rebuilds
 * the repetition history). Serialized as JSON into the Redis record; the
 * version lives beside it in Redis, not in the text. */
#ifndef CHESSD_STORE_GAME_RECORD_H
#define CHESSD_STORE_GAME_RECORD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "../rules/rules.h"

enum {
    GAME_ID_SIZE = 24,          /* 16 characters of base64url, terminated */
    GAME_NAME_CHARS = 64,       /* characters of a player's name */
    GAME_NAME_MAX = 256,        /* bytes of a player's name (64 characters of up to 4 bytes) */
    GAME_TOKEN_HASH_SIZE = 65,  /* hex HMAC-SHA256, terminated */
    GAME_MAX_PLIES = 18000,     /* beyond the longest game the 75-move rule allows */
};

/* A move of the game with its notations, made when the move is added (the
 * stored text keeps only the UCI; the SAN is made again on reading). */
typedef struct {
    move_t move;
    char uci[UCI_BUFFER_SIZE];
    char san[SAN_BUFFER_SIZE];
} game_move_t;

typedef struct {
    char name[GAME_NAME_MAX + 1];
    char token_hash[GAME_TOKEN_HASH_SIZE];
} game_player_t;

typedef struct {
    char id[GAME_ID_SIZE];
    uint64_t version;              /* from the store, not the JSON */
    int64_t created_at_ms, updated_at_ms;
    bool chess960;
    char initial_fen[FEN_BUFFER_SIZE];
    char fen[FEN_BUFFER_SIZE];     /* the current position */
    game_move_t *moves;            /* malloc'd, move_count long; owned by the record */
    int move_count, move_capacity;
    char status[16];               /* active, checkmate, stalemate, draw, resigned */
    char result[8];                /* *, 1-0, 0-1, 1/2-1/2 */
    char termination[32];          /* "" while active */
    game_player_t players[COLOR_COUNT];
    int draw_offer;                /* -1, or the colour that offered */
} game_record_t;

/* An empty record (no moves, status active). */
void game_record_init(game_record_t *g);
/* Frees the moves; the record may be re-initialised afterwards. NULL-safe. */
void game_record_free(game_record_t *g);
/* Appends move, legal in `before` (the position it is played in), with its
 * UCI and SAN; false when out of memory or past GAME_MAX_PLIES. */
bool game_record_push_move(game_record_t *g, const position_t *before, move_t move);

/* JSON text of the record (malloc'd, caller frees), or NULL on OOM. */
char *game_record_to_json(const game_record_t *g, size_t *length);
/* Reads text written by game_record_to_json into g (initialised by the call).
 * False when the text is not such a record. */
bool game_record_from_json(game_record_t *g, const char *text, size_t length);

#endif
