/* The terminal client's own settings: its defaults and what it reads of the
 * environment (the token, the game's length, the locale, NO_COLOR and TERM).
 * The client never loads the server's configuration (api/config.h), whose
 * other variables it has no use for. */
#ifndef CHESSD_API_PLAY_PLAY_SETTINGS_H
#define CHESSD_API_PLAY_PLAY_SETTINGS_H

#include <stdbool.h>
#include <stddef.h>

/* The server's --max-game-plies default, so that a game here may be as long
 * as a stored one (test_play_settings.c checks that the two agree). */
enum { PLAY_SETTINGS_MAX_PLIES_DEFAULT = 1000 };

typedef struct {
    const char *engine_path;         /* the computer's and the hints' engine without --engine */
    const char *variant_engine_path; /* the same in a --variant game */
    int max_plies;                   /* CHESSD_MAX_GAME_PLIES, as a server reads it, else the default */
    const char *token;               /* CHESSD_PLAY_TOKEN, NULL when unset or empty */
    bool utf8;                       /* the locale names UTF-8 (play_settings_utf8_locale) */
    bool color;                      /* colours are allowed (play_settings_color_allowed) */
} play_settings_t;

/* Reads the environment into s. False, with a sentence in err, when
 * CHESSD_MAX_GAME_PLIES is set but not a number from 1 to GAME_MAX_PLIES. */
bool play_settings_load(play_settings_t *s, char *err, size_t err_size);

/* Whether the locale asks for UTF-8: the first of LC_ALL, LC_CTYPE and LANG
 * that is set and not empty names UTF-8 ("UTF-8" or "utf8", any case). */
bool play_settings_utf8_locale(void);

/* Whether the environment allows colours: NO_COLOR unset or empty
 * (no-color.org) and TERM not "dumb". Whether stdout is a terminal is the
 * caller's to ask. */
bool play_settings_color_allowed(void);

#endif
