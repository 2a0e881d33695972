/* The computer of `chessd play`'s local session: one engine process
 * (api/engine/uci.h) driven directly, no server. It plays a level's moves
 * (api/engine/levels.h level_move) and gives hints (the best move and its
 * score at full strength, within PLAY_HINT_NODES). A search that leaves
 * the engine dead restarts it and is tried once more. The caller ignores
 * SIGPIPE (uci.h). */
#ifndef CHESSD_API_PLAY_PLAY_ENGINE_H
#define CHESSD_API_PLAY_PLAY_ENGINE_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include "../../rules/game.h"
#include "../../rules/rules.h"
#include "../engine/levels.h"
#include "../engine/uci.h"

enum {
    PLAY_HINT_NODES = 300000,  /* a hint's budget, here and asked of a server (GET /analysis?nodes=) */
    PLAY_HINT_MAX_MS = 10000,  /* and the longest it may take on a busy machine */
};

typedef struct play_engine play_engine_t;

/* Starts the engine at path for a game that is Chess960 or not. NULL on
 * failure, a sentence in err. Free with play_engine_free(). */
play_engine_t *play_engine_start(const char *path, bool chess960, char *err, size_t err_size);

/* Stops the engine and frees pe; NULL is fine. */
void play_engine_free(play_engine_t *pe);

/* The engine's "id name", e.g. "Stockfish 15.1". Owned by pe. */
const char *play_engine_name(const play_engine_t *pe);
/* The engine process's id (its process group's too), -1 when it is not running. */
pid_t play_engine_pid(const play_engine_t *pe);

/* The move level plays in g's position; line (length bytes) is g's
 * move-list text (see game_replay). On ENGINE_OK *out is legal there. */
engine_status_t play_engine_move(play_engine_t *pe, const level_t *level, const game_t *g, const char *line,
                                 size_t length, move_t *out, char *err, size_t err_size);

/* The engine's best move in g's position and its score, from the side to
 * move's point of view. */
typedef struct {
    move_t move;
    bool is_mate; /* value is moves to mate (negative: being mated), else centipawns */
    int value;
} play_hint_t;

engine_status_t play_engine_hint(play_engine_t *pe, const game_t *g, const char *line, size_t length,
                                 play_hint_t *out, char *err, size_t err_size);

#endif
