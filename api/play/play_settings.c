/* The terminal client's settings (see play_settings.h): a few defaults, and
 * the environment read once at start-up. */
#include "play_settings.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../rules/game.h"
#include "../engine/uci.h"

static const char *nonempty_env(const char *name)
{
    const char *value = getenv(name);
    return value && *value ? value : NULL;
}

bool play_settings_utf8_locale(void)
{
    static const char *const names[] = { "LC_ALL", "LC_CTYPE", "LANG" };
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
        const char *value = nonempty_env(names[i]);
        if (!value)
            continue;
        char lower[64];
        size_t n = 0;
        for (; value[n] && n + 1 < sizeof lower; n++)
            lower[n] = (char)tolower((unsigned char)value[n]);
        lower[n] = '\0';
        return strstr(lower, "utf-8") || strstr(lower, "utf8");
    }
    return false;
}

bool play_settings_color_allowed(void)
{
    const char *term = getenv("TERM");
    return !nonempty_env("NO_COLOR") && !(term && !strcmp(term, "dumb"));
}

bool play_settings_load(play_settings_t *s, char *err, size_t err_size)
{
    *s = (play_settings_t){
        .engine_path = ENGINE_DEFAULT_PATH,
        .variant_engine_path = ENGINE_VARIANT_DEFAULT_PATH,
        .max_plies = PLAY_SETTINGS_MAX_PLIES_DEFAULT,
        .token = nonempty_env("CHESSD_PLAY_TOKEN"),
        .utf8 = play_settings_utf8_locale(),
        .color = play_settings_color_allowed(),
    };
    const char *plies = nonempty_env("CHESSD_MAX_GAME_PLIES");
    if (plies) {
        char *end;
        long n = strtol(plies, &end, 10);
        if (*end || n < 1 || n > GAME_MAX_PLIES) {
            snprintf(err, err_size, "CHESSD_MAX_GAME_PLIES must be a number from 1 to %d", GAME_MAX_PLIES);
            return false;
        }
        s->max_plies = (int)n;
    }
    return true;
}
