/* Tests for api/play/play_settings.c: the terminal client's defaults (the
 * length of a game agrees with the server's --max-game-plies default), and
 * what it reads of the environment: CHESSD_MAX_GAME_PLIES, CHESSD_PLAY_TOKEN,
 * the locale, NO_COLOR (set and not empty) and TERM=dumb. */
#include <stdlib.h>
#include <string.h>

#include "../../../api/config.h"
#include "../../../api/engine/uci.h"
#include "../../../api/play/play_settings.h"
#include "../../support/tests.h"

/* The variables these tests change, saved before and put back after each. */
static const char *const names[] = { "CHESSD_MAX_GAME_PLIES", "CHESSD_PLAY_TOKEN", "LC_ALL", "LC_CTYPE", "LANG",
                                     "NO_COLOR", "TERM" };
enum { NAMES = sizeof names / sizeof names[0] };
static char *saved[NAMES];

static void save_env(void)
{
    for (int i = 0; i < NAMES; i++) {
        const char *value = getenv(names[i]);
        saved[i] = value ? strdup(value) : NULL;
        unsetenv(names[i]);
    }
}

static void restore_env(void)
{
    for (int i = 0; i < NAMES; i++) {
        if (saved[i])
            setenv(names[i], saved[i], 1);
        else
            unsetenv(names[i]);
        free(saved[i]);
        saved[i] = NULL;
    }
}

static void test_defaults_are_the_servers(void)
{
    save_env();
    play_settings_t s;
    char err[256];
    CU_ASSERT_TRUE_FATAL(play_settings_load(&s, err, sizeof err));
    CU_ASSERT_STRING_EQUAL(s.engine_path, ENGINE_DEFAULT_PATH);
    CU_ASSERT_STRING_EQUAL(s.variant_engine_path, ENGINE_VARIANT_DEFAULT_PATH);
    CU_ASSERT_PTR_NULL(s.token);
    config_t cfg;
    CU_ASSERT_TRUE(config_load(&cfg, 0, NULL, err, sizeof err));
    CU_ASSERT_EQUAL(s.max_plies, (int)cfg.max_game_plies);
    CU_ASSERT_EQUAL(s.max_plies, PLAY_SETTINGS_MAX_PLIES_DEFAULT);
    restore_env();
}

static void test_max_game_plies_is_read_and_checked(void)
{
    save_env();
    play_settings_t s;
    char err[256];
    setenv("CHESSD_MAX_GAME_PLIES", "40", 1);
    CU_ASSERT_TRUE(play_settings_load(&s, err, sizeof err));
    CU_ASSERT_EQUAL(s.max_plies, 40);
    static const char *const bad[] = { "0", "18001", "12x", "-5" };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        setenv("CHESSD_MAX_GAME_PLIES", bad[i], 1);
        CU_ASSERT_FALSE(play_settings_load(&s, err, sizeof err));
        CU_ASSERT_PTR_NOT_NULL(strstr(err, "CHESSD_MAX_GAME_PLIES must be a number from 1 to 18000"));
    }
    setenv("CHESSD_MAX_GAME_PLIES", "", 1); /* empty: as unset */
    CU_ASSERT_TRUE(play_settings_load(&s, err, sizeof err));
    CU_ASSERT_EQUAL(s.max_plies, PLAY_SETTINGS_MAX_PLIES_DEFAULT);
    restore_env();
}

static void test_token_from_the_environment_when_not_empty(void)
{
    save_env();
    play_settings_t s;
    char err[256];
    setenv("CHESSD_PLAY_TOKEN", "", 1);
    CU_ASSERT_TRUE(play_settings_load(&s, err, sizeof err));
    CU_ASSERT_PTR_NULL(s.token);
    setenv("CHESSD_PLAY_TOKEN", "abc", 1);
    CU_ASSERT_TRUE(play_settings_load(&s, err, sizeof err));
    CU_ASSERT_STRING_EQUAL(s.token, "abc");
    restore_env();
}

static void test_no_color_set_and_not_empty_or_a_dumb_terminal_turns_colours_off(void)
{
    save_env();
    CU_ASSERT_TRUE(play_settings_color_allowed()); /* neither set */
    setenv("TERM", "xterm-256color", 1);
    CU_ASSERT_TRUE(play_settings_color_allowed());
    setenv("NO_COLOR", "", 1); /* no-color.org: an empty value does not count */
    CU_ASSERT_TRUE(play_settings_color_allowed());
    setenv("NO_COLOR", "1", 1);
    CU_ASSERT_FALSE(play_settings_color_allowed());
    play_settings_t s;
    char err[256];
    CU_ASSERT_TRUE(play_settings_load(&s, err, sizeof err));
    CU_ASSERT_FALSE(s.color);
    unsetenv("NO_COLOR");
    setenv("TERM", "dumb", 1);
    CU_ASSERT_FALSE(play_settings_color_allowed());
    restore_env();
}

static void test_locale_decides_utf8(void)
{
    save_env();
    CU_ASSERT_FALSE(play_settings_utf8_locale());
    setenv("LANG", "en_US.UTF-8", 1);
    CU_ASSERT_TRUE(play_settings_utf8_locale());
    setenv("LC_CTYPE", "C", 1); /* LC_CTYPE before LANG */
    CU_ASSERT_FALSE(play_settings_utf8_locale());
    setenv("LC_ALL", "C.utf8", 1); /* LC_ALL first */
    CU_ASSERT_TRUE(play_settings_utf8_locale());
    setenv("LC_ALL", "", 1); /* empty: the next one decides */
    CU_ASSERT_FALSE(play_settings_utf8_locale());
    restore_env();
}

int test_play_settings_register(void)
{
    CU_pSuite suite = CU_add_suite("play_settings", NULL, NULL);
    if (!suite)
        return -1;
    CU_add_test(suite, "defaults_are_the_servers", test_defaults_are_the_servers);
    CU_add_test(suite, "max_game_plies_is_read_and_checked", test_max_game_plies_is_read_and_checked);
    CU_add_test(suite, "token_from_the_environment_when_not_empty", test_token_from_the_environment_when_not_empty);
    CU_add_test(suite, "no_color_set_and_not_empty_or_a_dumb_terminal_turns_colours_off",
                test_no_color_set_and_not_empty_or_a_dumb_terminal_turns_colours_off);
    CU_add_test(suite, "locale_decides_utf8", test_locale_decides_utf8);
    return 0;
}
