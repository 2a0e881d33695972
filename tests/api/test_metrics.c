/* Tests for api/metrics.c: the Prometheus text of /metrics. A request is
 * counted under its route's label and status (an unknown status as "other",
 * no route as "unmatched"); the latency histogram is cumulative; event
 * counters move by one; the engine series exist without an engine; every
 * sample has HELP and TYPE. Values are compared before and after, as other
 * suites count into the same process. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../api/engine/pool.h"
#include "../../api/metrics.h"
#include "../../api/routes.h"
#include "../support/tests.h"

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

static char *render_with(struct engine_pool *engines)
{
    size_t length = 0;
    char *text = metrics_render(NULL, engines, &length);
    CU_ASSERT_PTR_NOT_NULL_FATAL(text);
    CU_ASSERT_EQUAL(strlen(text), length);
    return text;
}

static char *render(void) { return render_with(NULL); }

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

static void test_event_counters_move_by_one(void)
{
    static const struct {
        void (*count)(void);
        const char *name;
    } counters[] = {
        { metrics_move_applied, "chessd_moves_applied_total" },
        { metrics_version_conflict, "chessd_version_conflicts_total" },
        { metrics_http_framing_backstop, "chessd_http_framing_backstop_total" },
        { metrics_http_library_message, "chessd_http_library_messages_total" },
        { metrics_analysis_refused, "chessd_analysis_refused_total" },
    };
    for (size_t i = 0; i < sizeof counters / sizeof counters[0]; i++) {
        char *before = render();
        counters[i].count();
        char *after = render();
        long long was = sample(before, counters[i].name), now = sample(after, counters[i].name);
        CU_ASSERT(was >= 0);
        CU_ASSERT_EQUAL(now - was, 1);
        if (now - was != 1)
            fprintf(stderr, "%s went from %lld to %lld\n", counters[i].name, was, now);
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
        char *text = render_with(pools[p]);
        for (size_t i = 0; i < sizeof zero / sizeof zero[0]; i++) {
            CU_ASSERT_EQUAL(sample(text, zero[i]), 0);
            if (sample(text, zero[i]) != 0)
                fprintf(stderr, "%s is %lld\n", zero[i], sample(text, zero[i]));
        }
        free(text);
    }
    engine_pool_free(none);
    char *before = render();
    metrics_analysis_waiting(1);
    char *during = render();
    metrics_analysis_waiting(-1);
    char *after = render();
    CU_ASSERT_EQUAL(sample(during, "chessd_analysis_waiting") - sample(before, "chessd_analysis_waiting"), 1);
    CU_ASSERT_EQUAL(sample(after, "chessd_analysis_waiting"), sample(before, "chessd_analysis_waiting"));
    free(before);
    free(during);
    free(after);
}

static void test_every_sample_has_help_and_type(void)
{
    char *text = render();
    for (const char *line = text; *line; line = strchr(line, '\n') + 1) {
        if (*line != '#') {
            char name[128];
            size_t n = strcspn(line, "{ ");
            snprintf(name, sizeof name, "%.*s", (int)(n < sizeof name ? n : sizeof name - 1), line);
            /* a histogram's samples carry suffixes of its name */
            char *suffix = strstr(name, "_bucket");
            if (!suffix)
                suffix = strstr(name, "_count");
            if (!suffix)
                suffix = strstr(name, "_sum");
            if (suffix && strstr(name, "duration"))
                *suffix = '\0';
            char help[160], type[160];
            snprintf(help, sizeof help, "# HELP %s ", name);
            snprintf(type, sizeof type, "# TYPE %s ", name);
            CU_ASSERT_PTR_NOT_NULL(strstr(text, help));
            CU_ASSERT_PTR_NOT_NULL(strstr(text, type));
            if (!strstr(text, help) || !strstr(text, type))
                fprintf(stderr, "no HELP or TYPE for %s\n", name);
        }
        if (!strchr(line, '\n'))
            break;
    }
    free(text);
}

int test_metrics_register(void)
{
    CU_pSuite suite = CU_add_suite("metrics", NULL, NULL);
    if (!suite)
        return CU_get_error();
    CU_ADD_TEST(suite, test_requests_are_counted_by_route_and_status);
    CU_ADD_TEST(suite, test_the_latency_histogram_is_cumulative);
    CU_ADD_TEST(suite, test_event_counters_move_by_one);
    CU_ADD_TEST(suite, test_the_engine_series_are_zero_without_an_engine);
    CU_ADD_TEST(suite, test_every_sample_has_help_and_type);
    return CU_get_error();
}
