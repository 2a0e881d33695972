/* Tests for api/metrics.c: every row of the table is written with HELP and
 * TYPE; each value kept here moves by one on its own sample, for every label
 * value; requests count by route and status into a cumulative histogram.
 * Values are compared before and after: other suites count into this process. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../api/config.h"
#include "../../api/engine/pool.h"
#include "../../api/game/service.h"
#include "../../api/http/acceptor.h"
#include "../../api/metrics.h"
#include "../../api/routes.h"
#include "../../api/webhooks/worker.h"
#include "../../store/store.h"
#include "../support/redis_server.h"
#include "../support/tests.h"

enum { LABEL_PROBES = 16 }; /* more label values than any row has */

static const char *fake_name(int route) { return route == 0 ? "GET /a" : "POST /b"; }

/* The value of the sample line that starts with `sample ` in text, or -1. */
static long long sample(const char *text, const char *sample_name)
{
    size_t n = strlen(sample_name);
    for (const char *p = text; p && *p; p = strchr(p, '\n'), p = p ? p + 1 : NULL)
        if (!strncmp(p, sample_name, n) && p[n] == ' ')
            return atoll(p + n + 1);
    return -1;
}

/* How many lines of text start with prefix. */
static int lines_starting(const char *text, const char *prefix)
{
    size_t n = strlen(prefix);
    int count = 0;
    for (const char *p = text; p && *p; p = strchr(p, '\n'), p = p ? p + 1 : NULL)
        count += !strncmp(p, prefix, n);
    return count;
}

static bool has_line(const char *text, const char *prefix) { return lines_starting(text, prefix) > 0; }

static char *render_with(struct store *store, struct engine_pool *engines)
{
    size_t length = 0;
    char *text = metrics_render(store, engines, &length);
    CU_ASSERT_PTR_NOT_NULL_FATAL(text);
    CU_ASSERT_EQUAL(strlen(text), length);
    return text;
}

static char *render(void) { return render_with(NULL, NULL); }

/* The samples of after whose values differ from before's (or are new), as
 * "name{labels}" lines in out, each with how far it moved. */
typedef struct {
    char name[160];
    long long moved;
} change_t;

static int changes(const char *before, const char *after, change_t *out, int max)
{
    int n = 0;
    for (const char *line = after; *line; line = strchr(line, '\n') + 1) {
        size_t len = strcspn(line, "\n"); /* then back to the space before the value (labels may hold spaces) */
        while (len > 0 && line[len] != ' ')
            len--;
        if (*line != '#' && line[len] == ' ' && len < sizeof out->name) {
            char name[sizeof out->name];
            snprintf(name, sizeof name, "%.*s", (int)len, line);
            long long was = sample(before, name), now = atoll(line + len + 1);
            if (was != now && n < max) {
                snprintf(out[n].name, sizeof out[n].name, "%s", name);
                out[n++].moved = now - (was < 0 ? 0 : was);
            }
        }
        if (!strchr(line, '\n'))
            break;
    }
    return n;
}

static void test_requests_are_counted_by_route_and_status(void)
{
    metrics_init(2, fake_name);
    char *before = render();
    metrics_request(1, 201, 1500);
    metrics_request(1, 201, 2500);
    metrics_request(0, 299, 10);  /* not a status of the table: "other" */
    metrics_request(-1, 404, 10); /* no route matched */
    char *after = render();
    const char *b201 = "chessd_http_requests_total{route=\"POST /b\",status=\"201\"}";
    const char *other = "chessd_http_requests_total{route=\"GET /a\",status=\"other\"}";
    const char *unmatched = "chessd_http_requests_total{route=\"unmatched\",status=\"404\"}";
    CU_ASSERT_EQUAL(sample(after, b201) - (sample(before, b201) < 0 ? 0 : sample(before, b201)), 2);
    CU_ASSERT_EQUAL(sample(after, other) - (sample(before, other) < 0 ? 0 : sample(before, other)), 1);
    CU_ASSERT_EQUAL(sample(after, unmatched) - (sample(before, unmatched) < 0 ? 0 : sample(before, unmatched)), 1);
    free(before);
    free(after);
    metrics_init(routes_count(), routes_name); /* as the server has it, for the suites after this one */
}

static void test_the_latency_histogram_is_cumulative(void)
{
    metrics_request(-1, 200, 100);
    char *text = render();
    long long last = -1, count = sample(text, "chessd_http_request_duration_seconds_count");
    CU_ASSERT(count >= 1);
    int buckets = 0;
    for (const char *p = strstr(text, "chessd_http_request_duration_seconds_bucket{"); p;
         p = strstr(p + 1, "chessd_http_request_duration_seconds_bucket{")) {
        long long v = atoll(strchr(p, ' ') + 1);
        CU_ASSERT(v >= last);
        last = v;
        buckets++;
        if (strstr(p, "le=\"+Inf\"") == strchr(p, '{') + 1)
            CU_ASSERT_EQUAL(v, count);
    }
    CU_ASSERT(buckets > 3);
    free(text);
}

/* A webhook deliverer that has counted nothing, as metrics_webhooks takes it. */
static void no_deliveries(struct webhook_worker *worker, webhook_worker_stats_t *out)
{
    (void)worker;
    memset(out, 0, sizeof *out);
}

/* Registers (or with false, takes back) that deliverer. */
static void deliverer(bool there)
{
    static char stand_in; /* any address: the scrape only passes it back */
    metrics_webhooks(there ? &(metrics_webhooks_t){ (struct webhook_worker *)(void *)&stand_in, no_deliveries,
                                                    webhook_outcome_name }
                           : NULL);
}

/* With every source there (a store, never connected; a Redis check made;
 * both listeners; a webhook deliverer), each row of the table is written: HELP, TYPE and at
 * least one sample, once. But the feed's length, which only the deadline
 * sweep reads (from Redis, in the background), is left out until it has. */
static void test_every_row_is_written_with_help_type_and_a_sample(void)
{
    struct store *store = redis_server_open_store("redis://127.0.0.1:1", 100);
    CU_ASSERT_PTR_NOT_NULL_FATAL(store);
    acceptor_t *main_port = acceptor_new(&(acceptor_config_t){ .max_open = 4 });
    acceptor_t *probe_port = acceptor_new(&(acceptor_config_t){ .max_open = 4 });
    CU_ASSERT_PTR_NOT_NULL_FATAL(main_port);
    CU_ASSERT_PTR_NOT_NULL_FATAL(probe_port);
    metrics_listeners(main_port, probe_port);
    metrics_redis_up(true);
    deliverer(true);
    char *text = render_with(store, NULL);
    deliverer(false);
    int rows = 0, helps = 0, unread = 0;
    for (const char *name; (name = metrics_row_name(rows)); rows++) {
        char help[160], type[160], bare[160], labeled[160], suffixed[160];
        snprintf(help, sizeof help, "# HELP %s ", name);
        if (!strcmp(name, "chessd_finished_feed_length")) {
            CU_ASSERT(!has_line(text, help));
            unread++;
            continue;
        }
        snprintf(type, sizeof type, "# TYPE %s ", name);
        snprintf(bare, sizeof bare, "%s ", name);
        snprintf(labeled, sizeof labeled, "%s{", name);
        snprintf(suffixed, sizeof suffixed, "%s_", name); /* a histogram's _bucket, _sum, _count */
        bool samples = has_line(text, bare) || has_line(text, labeled) || has_line(text, suffixed);
        CU_ASSERT(has_line(text, help) && has_line(text, type) && samples);
        if (!has_line(text, help) || !has_line(text, type) || !samples)
            fprintf(stderr, "row %d, %s: HELP %d TYPE %d samples %d\n", rows, name, has_line(text, help),
                    has_line(text, type), samples);
        CU_ASSERT(lines_starting(text, help) == 1 && lines_starting(text, type) == 1);
    }
    for (const char *p = strstr(text, "# HELP "); p; p = strstr(p + 1, "# HELP "))
        helps++;
    CU_ASSERT(rows > 50);
    CU_ASSERT_EQUAL(helps, rows - unread);
    CU_ASSERT(strstr(text, "\n# TYPE chessd_moves_applied_total counter\n") != NULL);
    CU_ASSERT(strstr(text, "\n# TYPE chessd_open_connections gauge\n") != NULL);
    CU_ASSERT(strstr(text, "\n# TYPE chessd_http_request_duration_seconds histogram\n") != NULL);
    CU_ASSERT_EQUAL(sample(text, "chessd_redis_configured"), 1);
    CU_ASSERT_EQUAL(sample(text, "chessd_redis_up"), 1);
    CU_ASSERT_EQUAL(sample(text, "chessd_accepted_connections{listener=\"main\"}"), 0);
    CU_ASSERT_EQUAL(sample(text, "chessd_accepted_connections{listener=\"probe\"}"), 0);
    free(text);
    metrics_listeners(NULL, NULL);
    acceptor_free(main_port);
    acceptor_free(probe_port);
    store_close(store);
}

/* Without a store, the rows of a Redis that is not there are left out,
 * HELP and TYPE too; its counts stay, at 0. */
static void test_without_a_store_the_redis_rows_are_left_out(void)
{
    char *text = render();
    CU_ASSERT_EQUAL(sample(text, "chessd_redis_configured"), 0);
    CU_ASSERT_EQUAL(sample(text, "chessd_redis_errors_total"), 0);
    CU_ASSERT_EQUAL(sample(text, "chessd_redis_fast_failures_total"), 0);
    static const char *const absent[] = { "chessd_redis_up", "chessd_redis_fault", "chessd_redis_eviction_possible",
                                          "chessd_redis_maxmemory_policy_info", "chessd_redis_maxmemory_bytes",
                                          "chessd_redis_full", "chessd_accepted_connections" };
    for (size_t i = 0; i < sizeof absent / sizeof absent[0]; i++) {
        char help[160], bare[160], labeled[160];
        snprintf(help, sizeof help, "# HELP %s ", absent[i]);
        snprintf(bare, sizeof bare, "%s ", absent[i]);
        snprintf(labeled, sizeof labeled, "%s{", absent[i]);
        int lines = lines_starting(text, help) + lines_starting(text, bare) + lines_starting(text, labeled);
        CU_ASSERT_EQUAL(lines, 0);
        if (lines)
            fprintf(stderr, "%s is written without a store or a listener\n", absent[i]);
    }
    free(text);
}

/* Bumps metric's label by one and says which samples moved (then undoes it,
 * so the gauges stay as they were). */
static int bump(metric_t metric, int label, change_t *moved, int max)
{
    char *before = render();
    metrics_add(metric, label, 1);
    char *after = render();
    metrics_add(metric, label, -1);
    int n = changes(before, after, moved, max);
    free(before);
    free(after);
    return n;
}

/* Each value kept here, for each label value its row has: one bump moves
 * one sample by one, a sample of its own; every sample its row writes is
 * reached so; a label past the row's moves nothing. The one mirror:
 * chessd_analysis_refused_total follows reason="queue_full". */
static void test_each_kept_value_moves_its_own_sample_by_one(void)
{
    static char seen[METRIC_COUNT * LABEL_PROBES][160];
    int seen_count = 0;
    for (int m = 0; m < METRIC_COUNT; m++) {
        char family[160] = "";
        int labels = 0;
        for (int label = 0; label < LABEL_PROBES; label++) {
            change_t moved[4];
            int n = bump((metric_t)m, label, moved, 4);
            if (m == METRIC_ANALYSIS_REFUSED && label == METRICS_ANALYSIS_REFUSED_QUEUE_FULL) {
                CU_ASSERT(n == 2 && !strcmp(moved[0].name, "chessd_analysis_refused_by_reason_total{reason=\"queue_full\"}")
                          && !strcmp(moved[1].name, "chessd_analysis_refused_total"));
                n = 1;
            }
            if (n == 0)
                break;
            labels++;
            CU_ASSERT_EQUAL(n, 1);
            CU_ASSERT_EQUAL(moved[0].moved, 1);
            if (n != 1 || moved[0].moved != 1)
                fprintf(stderr, "metric %d label %d: %d samples moved, %s by %lld\n", m, label, n, moved[0].name,
                        moved[0].moved);
            /* its family: the name before any label, the same for each label */
            char name[160];
            snprintf(name, sizeof name, "%.*s", (int)strcspn(moved[0].name, "{"), moved[0].name);
            CU_ASSERT(!family[0] || !strcmp(family, name));
            snprintf(family, sizeof family, "%s", name);
            if (label > 0)
                CU_ASSERT(strchr(moved[0].name, '{') != NULL);
            for (int i = 0; i < seen_count; i++)
                CU_ASSERT(strcmp(seen[i], moved[0].name) != 0);
            snprintf(seen[seen_count++], sizeof seen[0], "%s", moved[0].name);
        }
        /* every sample of the family was reached */
        char *text = render();
        char bare[170], labeled[170];
        snprintf(bare, sizeof bare, "%s ", family);
        snprintf(labeled, sizeof labeled, "%s{", family);
        int written = lines_starting(text, bare) + lines_starting(text, labeled);
        CU_ASSERT(labels >= 1);
        CU_ASSERT_EQUAL(labels, written);
        if (labels != written)
            fprintf(stderr, "metric %d (%s): %d labels move, %d samples written\n", m, family, labels, written);
        free(text);
    }
}

static void test_a_metric_or_label_out_of_range_is_ignored(void)
{
    char *before = render();
    metrics_add(METRIC_COUNT, 0, 1);
    metrics_add((metric_t)-1, 0, 1);
    metrics_add(METRIC_MOVES_APPLIED, -1, 1);
    metrics_add(METRIC_MOVES_APPLIED, 1, 1);
    metrics_add(METRIC_STREAMS_CLOSED, 1000, 1);
    char *after = render();
    change_t moved[4];
    CU_ASSERT_EQUAL(changes(before, after, moved, 4), 0);
    free(before);
    free(after);
}

/* A labeled row writes each label value once, named (not empty, not null). */
static void test_labeled_rows_write_every_label_value_once(void)
{
    struct store *store = redis_server_open_store("redis://127.0.0.1:1", 100);
    CU_ASSERT_PTR_NOT_NULL_FATAL(store);
    deliverer(true);
    char *text = render_with(store, NULL);
    deliverer(false);
    for (const char *line = text; *line; line = strchr(line, '\n') + 1) {
        size_t len = strcspn(line, "\n");
        const char *brace = memchr(line, '{', len);
        if (*line != '#' && brace) {
            char name[200]; /* the sample's name and labels (values may hold spaces), and the space after */
            const char *close = strstr(line, "} ");
            CU_ASSERT_FATAL(close && close < line + len);
            snprintf(name, sizeof name, "%.*s ", (int)(close + 1 - line), line);
            CU_ASSERT(!strstr(name, "=\"\"") && !strstr(name, "(null)"));
            CU_ASSERT_EQUAL(lines_starting(text, name), 1);
        }
        if (!line[len])
            break;
    }
    /* the read rows' labels, from their sources */
    for (int f = STORE_FAULT_NONE + 1; f < STORE_FAULT_COUNT; f++) {
        char name[160];
        snprintf(name, sizeof name, "chessd_redis_fault{fault=\"%s\"}", store_fault_name((store_fault_t)f));
        CU_ASSERT(sample(text, name) == 0 || sample(text, name) == 1);
    }
    static const char *const read_labels[] = {
        "chessd_engine_failures_total{kind=\"timeout\"}", "chessd_engine_failures_total{kind=\"crashed\"}",
        "chessd_engine_failures_total{kind=\"garbage\"}", "chessd_engine_turns_total{outcome=\"played\"}",
        "chessd_engine_turns_total{outcome=\"stale\"}", "chessd_engine_turns_total{outcome=\"failed\"}",
        "chessd_engine_turns_total{outcome=\"recovered\"}", "chessd_http_deadline_closes_total{phase=\"head\"}",
        "chessd_http_deadline_closes_total{phase=\"body\"}",
    };
    for (size_t i = 0; i < sizeof read_labels / sizeof read_labels[0]; i++)
        CU_ASSERT(sample(text, read_labels[i]) >= 0);
    CU_ASSERT(strstr(text, "\nchessd_redis_maxmemory_policy_info{policy=\"") != NULL);
    free(text);
    store_close(store);
}

/* The game service's counters (api/config.c's table) each move a row of
 * their own by one. */
static void test_the_game_services_counters_reach_their_rows(void)
{
    config_t cfg = { 0 };
    game_svc_config_t games;
    config_game_service(&cfg, NULL, &games);
    CU_ASSERT_PTR_NOT_NULL_FATAL(games.count);
    char names[GAME_SVC_COUNTER_COUNT][160];
    for (int c = 0; c < GAME_SVC_COUNTER_COUNT; c++) {
        char *before = render();
        games.count((game_svc_counter_t)c);
        char *after = render();
        change_t moved[4];
        CU_ASSERT_EQUAL_FATAL(changes(before, after, moved, 4), 1);
        CU_ASSERT_EQUAL(moved[0].moved, 1);
        snprintf(names[c], sizeof names[c], "%s", moved[0].name);
        for (int i = 0; i < c; i++)
            CU_ASSERT(strcmp(names[i], names[c]) != 0);
        free(before);
        free(after);
    }
}

/* The engine series are there, at 0, with no pool and with a pool without
 * an engine (the counts of a running pool are in tests/e2e/analysis*.mjs). */
static void test_the_engine_series_are_zero_without_an_engine(void)
{
    static const char *const zero[] = {
        "chessd_engine_workers", "chessd_engine_workers_up", "chessd_engine_workers_busy",
        "chessd_engine_jobs_waiting", "chessd_engine_jobs_total", "chessd_engine_jobs_failed_total",
        "chessd_engine_jobs_retried_total", "chessd_engine_restarts_total", "chessd_engine_start_failures_total",
        "chessd_engine_failures_total{kind=\"timeout\"}", "chessd_engine_failures_total{kind=\"crashed\"}",
        "chessd_engine_failures_total{kind=\"garbage\"}",
    };
    engine_pool_t *none = engine_pool_new(&(engine_pool_config_t){ .workers = 2 });
    CU_ASSERT_PTR_NOT_NULL_FATAL(none);
    struct engine_pool *pools[] = { NULL, none };
    for (int p = 0; p < 2; p++) {
        char *text = render_with(NULL, pools[p]);
        for (size_t i = 0; i < sizeof zero / sizeof zero[0]; i++) {
            CU_ASSERT_EQUAL(sample(text, zero[i]), 0);
            if (sample(text, zero[i]) != 0)
                fprintf(stderr, "%s is %lld\n", zero[i], sample(text, zero[i]));
        }
        free(text);
    }
    engine_pool_free(none);
}

int test_metrics_register(void)
{
    CU_pSuite suite = CU_add_suite("metrics", NULL, NULL);
    if (!suite)
        return CU_get_error();
    CU_ADD_TEST(suite, test_requests_are_counted_by_route_and_status);
    CU_ADD_TEST(suite, test_the_latency_histogram_is_cumulative);
    CU_ADD_TEST(suite, test_every_row_is_written_with_help_type_and_a_sample);
    CU_ADD_TEST(suite, test_without_a_store_the_redis_rows_are_left_out);
    CU_ADD_TEST(suite, test_each_kept_value_moves_its_own_sample_by_one);
    CU_ADD_TEST(suite, test_a_metric_or_label_out_of_range_is_ignored);
    CU_ADD_TEST(suite, test_labeled_rows_write_every_label_value_once);
    CU_ADD_TEST(suite, test_the_game_services_counters_reach_their_rows);
    CU_ADD_TEST(suite, test_the_engine_series_are_zero_without_an_engine);
    return CU_get_error();
}
