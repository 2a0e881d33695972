/* Tests for api/config.c. A boolean flag alone is true and never takes the
 * next argument; --flag=V and the variable take exactly 1, 0, true or false;
 * anything else is an error naming the setting; flags win over the variable.
 * No Redis unless configured; its password from a setting or a file, never
 * shown. Also the default threads, the probe port, a renamed variable, the
 * --help table's columns, the PGN's Event and Site checked as tag values. */
#define _GNU_SOURCE /* sched_setaffinity, CPU_SET */
#include <sched.h>
#include <stdlib.h>
#include <string.h>

#include "../../api/config.h"
#include "../support/tests.h"

#define VARIABLE "CHESSD_READY_REQUIRES_REDIS"

/* Runs config_load on args with the variable set to env (NULL: unset) and
 * CHESSD_REDIS_URL unset; the variables are unset again afterwards. */
static bool load(config_t *cfg, const char *env, int argc, char **argv, char *err, size_t err_size)
{
    unsetenv("CHESSD_REDIS_URL");
    if (env)
        setenv(VARIABLE, env, 1);
    else
        unsetenv(VARIABLE);
    err[0] = '\0';
    bool ok = config_load(cfg, argc, argv, err, err_size);
    unsetenv(VARIABLE);
    return ok;
}

static void test_the_default_is_no_redis_and_readiness_without_it(void)
{
    config_t cfg;
    char err[256];
    CU_ASSERT_TRUE_FATAL(load(&cfg, NULL, 0, NULL, err, sizeof err));
    CU_ASSERT_STRING_EQUAL(cfg.redis_url, CONFIG_REDIS_NONE);
    CU_ASSERT_FALSE(config_redis_enabled(&cfg));
    CU_ASSERT_FALSE(cfg.ready_requires_redis);
    char *args[] = { "--redis", "redis://127.0.0.1:6379/0" };
    CU_ASSERT_TRUE_FATAL(load(&cfg, NULL, 2, args, err, sizeof err));
    CU_ASSERT_TRUE(config_redis_enabled(&cfg));
}

static void test_a_boolean_flag_alone_is_true_and_takes_no_argument(void)
{
    config_t cfg;
    char err[256];
    char *alone[] = { "--ready-requires-redis" };
    CU_ASSERT_TRUE_FATAL(load(&cfg, NULL, 1, alone, err, sizeof err));
    CU_ASSERT_TRUE(cfg.ready_requires_redis);
    /* The next argument stays an argument: here the port's flag. */
    char *before_port[] = { "--ready-requires-redis", "--port", "9000" };
    CU_ASSERT_TRUE_FATAL(load(&cfg, NULL, 3, before_port, err, sizeof err));
    CU_ASSERT_TRUE(cfg.ready_requires_redis);
    CU_ASSERT_EQUAL(cfg.port, 9000);
    char *separate[] = { "--ready-requires-redis", "false" };
    CU_ASSERT_FALSE(load(&cfg, NULL, 2, separate, err, sizeof err));
    CU_ASSERT_PTR_NOT_NULL(strstr(err, "unknown option 'false'"));
}

static void test_a_boolean_takes_exactly_1_0_true_or_false(void)
{
    static const struct {
        const char *text;
        bool value;
    } good[] = { { "1", true }, { "true", true }, { "0", false }, { "false", false } };
    config_t cfg;
    char err[256], arg[64];
    for (size_t i = 0; i < sizeof good / sizeof good[0]; i++) {
        snprintf(arg, sizeof arg, "--ready-requires-redis=%s", good[i].text);
        char *args[] = { arg };
        CU_ASSERT_TRUE(load(&cfg, NULL, 1, args, err, sizeof err));
        CU_ASSERT_EQUAL(cfg.ready_requires_redis, good[i].value);
        CU_ASSERT_TRUE(load(&cfg, good[i].text, 0, NULL, err, sizeof err));
        CU_ASSERT_EQUAL(cfg.ready_requires_redis, good[i].value);
    }
}

static void test_a_bad_boolean_is_an_error_naming_the_setting(void)
{
    static const char *const bad[] = { "yes", "no", "on", "TRUE", "False", "2", "-1", "01", "true ", " 1", "t", NULL };
    config_t cfg;
    char err[256], arg[64], expected[128];
    for (const char *const *value = bad; *value; value++) {
        snprintf(arg, sizeof arg, "--ready-requires-redis=%s", *value);
        char *args[] = { arg };
        CU_ASSERT_FALSE(load(&cfg, NULL, 1, args, err, sizeof err));
        snprintf(expected, sizeof expected, "--ready-requires-redis: '%s' must be true, false, 1 or 0", *value);
        CU_ASSERT_STRING_EQUAL(err, expected);
        CU_ASSERT_FALSE(load(&cfg, *value, 0, NULL, err, sizeof err));
        snprintf(expected, sizeof expected, VARIABLE ": '%s' must be true, false, 1 or 0", *value);
        CU_ASSERT_STRING_EQUAL(err, expected);
    }
    char *empty[] = { "--ready-requires-redis=" };
    CU_ASSERT_FALSE(load(&cfg, NULL, 1, empty, err, sizeof err));
    CU_ASSERT_STRING_EQUAL(err, "--ready-requires-redis: '' must be true, false, 1 or 0");
}

static void test_a_long_bad_value_is_cut_in_the_message(void)
{
    config_t cfg;
    char err[256], arg[600];
    snprintf(arg, sizeof arg, "--ready-requires-redis=%0500d", 7);
    char *args[] = { arg };
    CU_ASSERT_FALSE(load(&cfg, NULL, 1, args, err, sizeof err));
    CU_ASSERT_PTR_NOT_NULL(strstr(err, "...' must be true, false, 1 or 0"));
    CU_ASSERT(strlen(err) < 120);
}

static void test_the_flag_wins_over_the_variable(void)
{
    config_t cfg;
    char err[256];
    char *off[] = { "--ready-requires-redis=false" };
    CU_ASSERT_TRUE(load(&cfg, "1", 1, off, err, sizeof err));
    CU_ASSERT_FALSE(cfg.ready_requires_redis);
    char *on[] = { "--ready-requires-redis" };
    CU_ASSERT_TRUE(load(&cfg, "0", 1, on, err, sizeof err));
    CU_ASSERT_TRUE(cfg.ready_requires_redis);
    /* An empty variable is no setting, as for every variable. */
    CU_ASSERT_TRUE(load(&cfg, "", 0, NULL, err, sizeof err));
    CU_ASSERT_FALSE(cfg.ready_requires_redis);
}

/* config_usage's text into *text (the caller frees it). */
static void usage_text(char **text)
{
    size_t length = 0;
    *text = NULL;
    FILE *out = open_memstream(text, &length);
    CU_ASSERT_PTR_NOT_NULL_FATAL(out);
    config_usage(out);
    fclose(out);
}

/* Whether the help has a row "  FLAG  ENV  VALUE  ..." (columns apart by spaces). */
static bool help_row(const char *text, const char *flag, const char *env, const char *value)
{
    char row_flag[64], row_env[64], row_value[64];
    for (const char *line = text; line; line = strchr(line, '\n') ? strchr(line, '\n') + 1 : NULL)
        if (sscanf(line, " %63s %63s %63s", row_flag, row_env, row_value) == 3 && !strcmp(row_flag, flag))
            return !strcmp(row_env, env) && !strcmp(row_value, value);
    return false;
}

static void test_the_help_lists_the_boolean_and_its_default(void)
{
    char *text;
    usage_text(&text);
    CU_ASSERT_TRUE(help_row(text, "--ready-requires-redis", "CHESSD_READY_REQUIRES_REDIS", "false"));
    CU_ASSERT_TRUE(help_row(text, "--redis", "CHESSD_REDIS_URL", "none"));
    free(text);
}

/* Every option row's variable, default and help start in the same columns,
 * the longest option's (--redis-tls-insecure-skip-verify) included. Columns
 * are apart by at least two spaces; an empty default leaves three. */
static void test_the_help_columns_line_up(void)
{
    char *text;
    usage_text(&text);
    int env_column = -1, value_column = -1, help_column = -1, rows = 0;
    bool aligned = true;
    for (char *line = strstr(text, "\n  --"); line; line = strstr(line + 1, "\n  --")) {
        const char *row = line + 1;
        int starts[8], n = 0;
        for (int i = 2; row[i] && row[i] != '\n' && n < 8; i++)
            if (row[i] != ' ' && row[i - 1] == ' ' && row[i - 2] == ' ')
                starts[n++] = i;
        CU_ASSERT(n == 3 || n == 4);
        if (n < 3)
            continue;
        int columns[3] = { starts[1], n == 4 ? starts[2] : -1, starts[n - 1] };
        int *seen[3] = { &env_column, &value_column, &help_column };
        for (int c = 0; c < 3; c++) {
            if (columns[c] < 0)
                continue;
            if (*seen[c] < 0)
                *seen[c] = columns[c];
            aligned = aligned && *seen[c] == columns[c];
        }
        rows++;
    }
    CU_ASSERT_TRUE(rows > 30);
    CU_ASSERT_TRUE(aligned);
    CU_ASSERT_TRUE(help_row(text, "--redis-tls-insecure-skip-verify", "CHESSD_REDIS_TLS_INSECURE_SKIP_VERIFY", "false"));
    free(text);
}

/* The default is 1 server thread and 4 store threads per core of the
 * process's affinity, at most 256: pinned to one core, 1 and 4; on all of
 * its cores, 1 and 4 each. A flag still wins. */
static void test_the_default_threads_follow_the_cores_this_process_may_use(void)
{
    cpu_set_t all, one;
    CU_ASSERT_EQUAL_FATAL(sched_getaffinity(0, sizeof all, &all), 0);
    int first = -1;
    for (int cpu = 0; cpu < CPU_SETSIZE && first < 0; cpu++)
        if (CPU_ISSET(cpu, &all))
            first = cpu;
    CU_ASSERT_TRUE_FATAL(first >= 0);
    CPU_ZERO(&one);
    CPU_SET(first, &one);

    config_t cfg;
    char err[256];
    unsetenv("CHESSD_THREADS");
    unsetenv("CHESSD_STORE_THREADS");
    CU_ASSERT_EQUAL_FATAL(sched_setaffinity(0, sizeof one, &one), 0);
    bool ok = load(&cfg, NULL, 0, NULL, err, sizeof err);
    CU_ASSERT_EQUAL_FATAL(sched_setaffinity(0, sizeof all, &all), 0);
    CU_ASSERT_TRUE_FATAL(ok);
    CU_ASSERT_EQUAL(cfg.threads, 1);
    CU_ASSERT_EQUAL(cfg.store_threads, 4);

    CU_ASSERT_TRUE_FATAL(load(&cfg, NULL, 0, NULL, err, sizeof err));
    unsigned cores = (unsigned)CPU_COUNT(&all);
    CU_ASSERT_EQUAL(cfg.threads, cores >= 256 ? 256 : cores);
    CU_ASSERT_EQUAL(cfg.store_threads, cores >= 64 ? 256 : 4 * cores);

    char *three[] = { "--threads", "3" };
    CU_ASSERT_TRUE_FATAL(load(&cfg, NULL, 2, three, err, sizeof err));
    CU_ASSERT_EQUAL(cfg.threads, 3);
}

/* The probe port is off unless set; CHESSD_PROBE_PORT sets it, the flag wins. */
static void test_the_probe_port_is_off_unless_set(void)
{
    config_t cfg;
    char err[256];
    unsetenv("CHESSD_PROBE_PORT");
    CU_ASSERT_TRUE_FATAL(load(&cfg, NULL, 0, NULL, err, sizeof err));
    CU_ASSERT_EQUAL(cfg.probe_port, 0);
    setenv("CHESSD_PROBE_PORT", "8081", 1);
    CU_ASSERT_TRUE(load(&cfg, NULL, 0, NULL, err, sizeof err));
    CU_ASSERT_EQUAL(cfg.probe_port, 8081);
    char *flag[] = { "--probe-port", "9091" };
    CU_ASSERT_TRUE(load(&cfg, NULL, 2, flag, err, sizeof err));
    CU_ASSERT_EQUAL(cfg.probe_port, 9091);
    char *over[] = { "--probe-port", "65536" };
    CU_ASSERT_FALSE(load(&cfg, NULL, 2, over, err, sizeof err));
    CU_ASSERT_PTR_NOT_NULL(strstr(err, "--probe-port"));
    unsetenv("CHESSD_PROBE_PORT");
}

/* The Redis password, from its flag or variable or as a file's path; both
 * at once is an error whichever way each came, and no message shows it. */
static void test_the_redis_password_comes_from_a_setting_or_a_file_never_both(void)
{
    config_t cfg;
    char err[256];
    unsetenv("CHESSD_REDIS_PASSWORD");
    unsetenv("CHESSD_REDIS_PASSWORD_FILE");
    char *flag[] = { "--redis-password", "p@ss:w%rd" };
    CU_ASSERT_TRUE(load(&cfg, NULL, 2, flag, err, sizeof err));
    CU_ASSERT_STRING_EQUAL(cfg.redis_password, "p@ss:w%rd");
    CU_ASSERT_STRING_EQUAL(cfg.redis_password_file, "");
    setenv("CHESSD_REDIS_PASSWORD_FILE", "/run/secrets/redis-password", 1);
    CU_ASSERT_TRUE(load(&cfg, NULL, 0, NULL, err, sizeof err));
    CU_ASSERT_STRING_EQUAL(cfg.redis_password_file, "/run/secrets/redis-password");
    CU_ASSERT_STRING_EQUAL(cfg.redis_password, "");
    CU_ASSERT_FALSE(load(&cfg, NULL, 2, flag, err, sizeof err)); /* the file from the variable, the password as a flag */
    CU_ASSERT_PTR_NOT_NULL(strstr(err, "are both set"));
    CU_ASSERT_PTR_NULL(strstr(err, "p@ss"));
    unsetenv("CHESSD_REDIS_PASSWORD_FILE");
    setenv("CHESSD_REDIS_PASSWORD", "SeCrEt", 1);
    char *file[] = { "--redis-password-file=/run/secrets/redis-password" };
    CU_ASSERT_FALSE(load(&cfg, NULL, 1, file, err, sizeof err));
    CU_ASSERT_PTR_NOT_NULL(strstr(err, "are both set"));
    CU_ASSERT_PTR_NULL(strstr(err, "SeCrEt"));
    CU_ASSERT_TRUE(load(&cfg, NULL, 2, flag, err, sizeof err)); /* the flag wins over the variable */
    CU_ASSERT_STRING_EQUAL(cfg.redis_password, "p@ss:w%rd");
    unsetenv("CHESSD_REDIS_PASSWORD");
}

/* A misspelt setting is named without its value: it may be a password. */
static void test_an_unknown_option_is_named_without_its_value(void)
{
    config_t cfg;
    char err[256];
    char *args[] = { "--redis-pasword=SeCrEt" };
    CU_ASSERT_FALSE(load(&cfg, NULL, 1, args, err, sizeof err));
    CU_ASSERT_STRING_EQUAL(err, "unknown option '--redis-pasword' (see chessd serve --help)");
}

/* CHESSD_HEARTBEAT_SECONDS, the old name of CHESSD_HEARTBEAT, still sets
 * --heartbeat when the new name is unset; the new name wins when both are;
 * a bad old value is named by its own variable. */
static void test_the_old_heartbeat_variable_still_works_and_the_new_one_wins(void)
{
    config_t cfg;
    char err[256] = "";
    unsetenv("CHESSD_REDIS_URL");
    unsetenv("CHESSD_HEARTBEAT");
    setenv("CHESSD_HEARTBEAT_SECONDS", "3", 1);
    CU_ASSERT_TRUE(config_load(&cfg, 0, NULL, err, sizeof err));
    CU_ASSERT_EQUAL(cfg.heartbeat_seconds, 3);
    setenv("CHESSD_HEARTBEAT", "7", 1);
    CU_ASSERT_TRUE(config_load(&cfg, 0, NULL, err, sizeof err));
    CU_ASSERT_EQUAL(cfg.heartbeat_seconds, 7);
    unsetenv("CHESSD_HEARTBEAT");
    setenv("CHESSD_HEARTBEAT_SECONDS", "99", 1);
    CU_ASSERT_FALSE(config_load(&cfg, 0, NULL, err, sizeof err));
    CU_ASSERT_STRING_EQUAL(err, "CHESSD_HEARTBEAT_SECONDS: '99' must be a number from 1 to 15");
    unsetenv("CHESSD_HEARTBEAT_SECONDS");
    CU_ASSERT_TRUE(config_load(&cfg, 0, NULL, err, sizeof err));
    CU_ASSERT_EQUAL(cfg.heartbeat_seconds, 10);
}

/* --pgn-event and --pgn-site are "?" by default, and checked as a game's
 * Event and Site would be: a control character stops the start. */
static void test_the_pgn_event_and_site_are_question_marks_unless_set_and_checked_as_tag_values(void)
{
    config_t cfg;
    char err[256];
    unsetenv("CHESSD_PGN_SITE");
    unsetenv("CHESSD_PGN_EVENT");
    CU_ASSERT_TRUE_FATAL(load(&cfg, NULL, 0, NULL, err, sizeof err));
    CU_ASSERT_STRING_EQUAL(cfg.pgn_event, "?");
    CU_ASSERT_STRING_EQUAL(cfg.pgn_site, "?");
    setenv("CHESSD_PGN_SITE", "https://chess.example/ \"Caf\xc3\xa9\"", 1);
    char *event[] = { "--pgn-event", "Club night" };
    CU_ASSERT_TRUE_FATAL(load(&cfg, NULL, 2, event, err, sizeof err));
    CU_ASSERT_STRING_EQUAL(cfg.pgn_event, "Club night");
    CU_ASSERT_STRING_EQUAL(cfg.pgn_site, "https://chess.example/ \"Caf\xc3\xa9\"");
    setenv("CHESSD_PGN_SITE", "two\nlines", 1);
    CU_ASSERT_FALSE(load(&cfg, NULL, 0, NULL, err, sizeof err));
    CU_ASSERT_PTR_NOT_NULL(strstr(err, "--pgn-site (CHESSD_PGN_SITE)"));
    unsetenv("CHESSD_PGN_SITE");
    char *bad_event[] = { "--pgn-event=a\x1b[2J" };
    CU_ASSERT_FALSE(load(&cfg, NULL, 1, bad_event, err, sizeof err));
    CU_ASSERT_PTR_NOT_NULL(strstr(err, "--pgn-event (CHESSD_PGN_EVENT)"));
    char long_value[300];
    memset(long_value, 'x', sizeof long_value - 1);
    long_value[sizeof long_value - 1] = '\0';
    char *too_long[] = { "--pgn-event", long_value };
    CU_ASSERT_FALSE(load(&cfg, NULL, 2, too_long, err, sizeof err));
}

int test_config_register(void)
{
    CU_pSuite suite = CU_add_suite("config", NULL, NULL);
    if (!suite)
        return -1;
    CU_add_test(suite, "the default is no Redis and readiness without it",
                test_the_default_is_no_redis_and_readiness_without_it);
    CU_add_test(suite, "a boolean flag alone is true and takes no argument",
                test_a_boolean_flag_alone_is_true_and_takes_no_argument);
    CU_add_test(suite, "a boolean takes exactly 1, 0, true or false", test_a_boolean_takes_exactly_1_0_true_or_false);
    CU_add_test(suite, "a bad boolean is an error naming the setting",
                test_a_bad_boolean_is_an_error_naming_the_setting);
    CU_add_test(suite, "a long bad value is cut in the message", test_a_long_bad_value_is_cut_in_the_message);
    CU_add_test(suite, "the flag wins over the variable", test_the_flag_wins_over_the_variable);
    CU_add_test(suite, "the probe port is off unless set", test_the_probe_port_is_off_unless_set);
    CU_add_test(suite, "the help lists the boolean and its default", test_the_help_lists_the_boolean_and_its_default);
    CU_add_test(suite, "the help columns line up", test_the_help_columns_line_up);
    CU_add_test(suite, "the default threads follow the cores this process may use",
                test_the_default_threads_follow_the_cores_this_process_may_use);
    CU_add_test(suite, "the Redis password comes from a setting or a file, never both",
                test_the_redis_password_comes_from_a_setting_or_a_file_never_both);
    CU_add_test(suite, "an unknown option is named without its value", test_an_unknown_option_is_named_without_its_value);
    CU_add_test(suite, "the old heartbeat variable still works and the new one wins",
                test_the_old_heartbeat_variable_still_works_and_the_new_one_wins);
    CU_add_test(suite, "the PGN Event and Site are question marks unless set, and checked as tag values",
                test_the_pgn_event_and_site_are_question_marks_unless_set_and_checked_as_tag_values);
    return 0;
}
