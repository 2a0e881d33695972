/* Tests for api/webhooks/allow.c: --webhook-allow's entries, good and bad;
 * the rule, table-driven (0.0.0.0/0 opens public addresses only, a range
 * inside non-public space opens exactly itself, mapped and NAT64 addresses
 * judged as their IPv4); destination URLs and each refusal; the resolver. */
#include <string.h>
#include <unistd.h>

#include "../../../api/webhooks/allow.h"
#include "../../support/tests.h"
#include "webhooks_tests.h"

static webhook_allow_t parsed(const char *text)
{
    webhook_allow_t allow;
    char err[300] = "";
    bool ok = webhook_allow_parse(text, &allow, err, sizeof err);
    CU_ASSERT_TRUE(ok);
    if (!ok)
        fprintf(stderr, "\n'%s': %s\n", text, err);
    return allow;
}

static void test_good_entries_are_read(void)
{
    webhook_allow_t allow = parsed(" 10.0.0.0/8 , ::1/128,127.0.0.2, Hooks.Example.COM., *.example.org,0.0.0.0/0 ");
    CU_ASSERT_EQUAL(allow.cidr_count, 4);
    CU_ASSERT_EQUAL(allow.name_count, 2);
    CU_ASSERT_STRING_EQUAL(allow.names[0], "hooks.example.com");
    CU_ASSERT_STRING_EQUAL(allow.names[1], ".example.org");
    CU_ASSERT_EQUAL(allow.cidrs[2].prefix, 32); /* a bare address is one address */
    CU_ASSERT_TRUE(allow.cidrs[0].non_public);
    CU_ASSERT_TRUE(allow.cidrs[1].non_public);
    CU_ASSERT_FALSE(allow.cidrs[3].non_public);
    CU_ASSERT_TRUE(webhook_allow_enabled(&allow));
    /* A range of mapped addresses is the IPv4 range it holds. */
    allow = parsed("::ffff:10.0.0.0/104");
    CU_ASSERT_EQUAL(allow.cidrs[0].base.family, 4);
    CU_ASSERT_EQUAL(allow.cidrs[0].prefix, 8);
    CU_ASSERT_TRUE(allow.cidrs[0].non_public);
}

static void test_empty_allows_nothing(void)
{
    webhook_allow_t allow = parsed("");
    CU_ASSERT_FALSE(webhook_allow_enabled(&allow));
    allow = parsed("   ");
    CU_ASSERT_FALSE(webhook_allow_enabled(&allow));
    webhook_addr_t addr;
    webhook_addr_parse("8.8.8.8", &addr);
    CU_ASSERT_EQUAL(webhook_allow_check_addr(&allow, NULL, &addr), WEBHOOK_REFUSE_NOT_ALLOWED);
}

static void test_bad_entries_are_refused_naming_them(void)
{
    static const struct {
        const char *text, *says;
    } rows[] = {
        { "10.0.0.1/8", "'10.0.0.1/8' has bits set after its /8 prefix" },
        { "10.0.0.0/33", "'10.0.0.0/33': the prefix length must be a number from 0 to 32" },
        { "::/129", "'::/129': the prefix length must be a number from 0 to 128" },
        { "10.0.0.0/", "the prefix length must be" },
        { "10.0.0.0/08", "the prefix length must be" },
        { "10.0.0.0/-1", "the prefix length must be" },
        { "300.0.0.0/8", "'300.0.0.0/8' is not an IPv4 or IPv6 address" },
        { "127.1", "'127.1' is not an IPv4 or IPv6 address" },
        { "fe80::1%eth0", "is not an IPv4 or IPv6 address" },
        { "hooks_example.com", "'hooks_example.com' is not a range, an address, a host name or *.suffix" },
        { "-hooks.example.com", "is not a range" },
        { "*example.com", "'*example.com': a suffix is written *.example.com" },
        { "*.", "is not a range" },
        { "a..b", "is not a range" },
        { "good.example, ,10.0.0.0/8", "entry 2 is empty" },
        { "good.example,", "entry 2 is empty" },
        { "https://hooks.example.com", "is not an IPv4 or IPv6 address" },
        { "hooks.example.com:443", "is not an IPv4 or IPv6 address" },
    };
    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
        webhook_allow_t allow;
        char err[300] = "";
        CU_ASSERT_FALSE(webhook_allow_parse(rows[i].text, &allow, err, sizeof err));
        if (!strstr(err, rows[i].says)) {
            fprintf(stderr, "\n'%s': said '%s', not '%s'\n", rows[i].text, err, rows[i].says);
            CU_FAIL("the refusal does not say why");
        }
    }
}

static void test_the_list_is_bounded(void)
{
    char text[WEBHOOK_ALLOW_TEXT_MAX + 64] = "";
    for (int i = 0; i <= WEBHOOK_ALLOW_MAX; i++) {
        char entry[32];
        snprintf(entry, sizeof entry, "%s10.0.%d.0/24", i ? "," : "", i);
        strcat(text, entry);
    }
    webhook_allow_t allow;
    char err[300] = "";
    CU_ASSERT_FALSE(webhook_allow_parse(text, &allow, err, sizeof err));
    CU_ASSERT_PTR_NOT_NULL(strstr(err, "more than 64"));
    memset(text, 'a', WEBHOOK_ALLOW_TEXT_MAX + 1);
    text[WEBHOOK_ALLOW_TEXT_MAX + 1] = '\0';
    CU_ASSERT_FALSE(webhook_allow_parse(text, &allow, err, sizeof err));
    CU_ASSERT_PTR_NOT_NULL(strstr(err, "over 4096 bytes"));
    char label[300];
    memset(label, 'a', 260);
    label[260] = '\0';
    CU_ASSERT_FALSE(webhook_allow_parse(label, &allow, err, sizeof err));
}

/* The rule, row by row: a policy, a host (NULL: a literal address), an
 * address, what it gives. */
static void test_the_rule(void)
{
    static const struct {
        const char *policy, *host, *addr;
        webhook_refusal_t want;
    } rows[] = {
        { "0.0.0.0/0", NULL, "93.184.216.34", WEBHOOK_ALLOWED },
        { "0.0.0.0/0", NULL, "127.0.0.1", WEBHOOK_REFUSE_PRIVATE },
        { "0.0.0.0/0", NULL, "127.0.0.2", WEBHOOK_REFUSE_PRIVATE },
        { "0.0.0.0/0", NULL, "169.254.169.254", WEBHOOK_REFUSE_PRIVATE }, /* cloud metadata */
        { "0.0.0.0/0", NULL, "10.1.2.3", WEBHOOK_REFUSE_PRIVATE },
        { "0.0.0.0/0", NULL, "172.31.255.255", WEBHOOK_REFUSE_PRIVATE },
        { "0.0.0.0/0", NULL, "172.32.0.1", WEBHOOK_ALLOWED },
        { "0.0.0.0/0", NULL, "192.168.1.1", WEBHOOK_REFUSE_PRIVATE },
        { "0.0.0.0/0", NULL, "100.100.100.200", WEBHOOK_REFUSE_PRIVATE }, /* a metadata address in CGN space */
        { "0.0.0.0/0", NULL, "0.0.0.0", WEBHOOK_REFUSE_PRIVATE },
        { "0.0.0.0/0", NULL, "224.0.0.1", WEBHOOK_REFUSE_PRIVATE },
        { "0.0.0.0/0", NULL, "255.255.255.255", WEBHOOK_REFUSE_PRIVATE },
        { "0.0.0.0/0", NULL, "198.51.100.7", WEBHOOK_REFUSE_PRIVATE },
        { "0.0.0.0/0", NULL, "2606:4700::1111", WEBHOOK_REFUSE_NOT_ALLOWED }, /* IPv4 ranges list no IPv6 */
        { "0.0.0.0/0", NULL, "::ffff:8.8.8.8", WEBHOOK_ALLOWED },             /* mapped: judged as 8.8.8.8 */
        { "0.0.0.0/0", NULL, "::ffff:127.0.0.1", WEBHOOK_REFUSE_PRIVATE },
        { "0.0.0.0/0", NULL, "::ffff:169.254.169.254", WEBHOOK_REFUSE_PRIVATE },
        { "0.0.0.0/0", NULL, "64:ff9b::a9fe:a9fe", WEBHOOK_REFUSE_PRIVATE }, /* NAT64 of 169.254.169.254 */
        { "0.0.0.0/0", NULL, "64:ff9b::808:808", WEBHOOK_ALLOWED },
        { "::/0", NULL, "2606:4700::1111", WEBHOOK_ALLOWED },
        { "::/0", NULL, "::1", WEBHOOK_REFUSE_PRIVATE },
        { "::/0", NULL, "::", WEBHOOK_REFUSE_PRIVATE },
        { "::/0", NULL, "fe80::1", WEBHOOK_REFUSE_PRIVATE },
        { "::/0", NULL, "fd00:ec2::254", WEBHOOK_REFUSE_PRIVATE }, /* a unique-local metadata address */
        { "::/0", NULL, "ff02::1", WEBHOOK_REFUSE_PRIVATE },
        { "::/0", NULL, "2001:db8::1", WEBHOOK_REFUSE_PRIVATE },
        { "::/0", NULL, "::ffff:8.8.8.8", WEBHOOK_REFUSE_NOT_ALLOWED }, /* judged as IPv4, not listed */
        { "::/0", NULL, "::7f00:1", WEBHOOK_REFUSE_PRIVATE },           /* IPv4-compatible */
        { "127.0.0.2/32", NULL, "127.0.0.2", WEBHOOK_ALLOWED },
        { "127.0.0.2/32", NULL, "127.0.0.1", WEBHOOK_REFUSE_NOT_ALLOWED },
        { "127.0.0.2/32", NULL, "::ffff:127.0.0.2", WEBHOOK_ALLOWED },
        { "0.0.0.0/0,127.0.0.2/32", NULL, "127.0.0.1", WEBHOOK_REFUSE_PRIVATE },
        { "0.0.0.0/0,127.0.0.2/32", NULL, "127.0.0.2", WEBHOOK_ALLOWED },
        { "10.0.0.0/8", NULL, "10.200.0.1", WEBHOOK_ALLOWED },
        { "10.0.0.0/8", NULL, "11.0.0.1", WEBHOOK_REFUSE_NOT_ALLOWED },
        { "8.0.0.0/6", NULL, "10.0.0.1", WEBHOOK_REFUSE_PRIVATE }, /* a range partly public opens no private part */
        { "8.0.0.0/6", NULL, "9.9.9.9", WEBHOOK_ALLOWED },
        { "::1", NULL, "::1", WEBHOOK_ALLOWED },
        { "169.254.169.254/32", NULL, "169.254.169.254", WEBHOOK_ALLOWED }, /* opened on purpose */
        { "hooks.example.com", "hooks.example.com", "93.184.216.34", WEBHOOK_ALLOWED },
        { "hooks.example.com", "hooks.example.com", "2606:4700::1111", WEBHOOK_ALLOWED },
        { "hooks.example.com", "hooks.example.com", "10.0.0.5", WEBHOOK_REFUSE_PRIVATE }, /* a name opens no private space */
        { "hooks.example.com", "hooks.example.com", "169.254.169.254", WEBHOOK_REFUSE_PRIVATE },
        { "hooks.example.com,10.0.0.0/8", "hooks.example.com", "10.0.0.5", WEBHOOK_ALLOWED },
        { "hooks.example.com", "other.example.com", "93.184.216.34", WEBHOOK_REFUSE_NOT_ALLOWED },
        { "hooks.example.com", "a.hooks.example.com", "93.184.216.34", WEBHOOK_REFUSE_NOT_ALLOWED },
        { "*.example.com", "a.example.com", "93.184.216.34", WEBHOOK_ALLOWED },
        { "*.example.com", "a.b.example.com", "93.184.216.34", WEBHOOK_ALLOWED },
        { "*.example.com", "example.com", "93.184.216.34", WEBHOOK_REFUSE_NOT_ALLOWED },
        { "*.example.com", "badexample.com", "93.184.216.34", WEBHOOK_REFUSE_NOT_ALLOWED },
        { "*.example.com", "a.example.com", "127.0.0.1", WEBHOOK_REFUSE_PRIVATE },
    };
    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
        webhook_allow_t allow = parsed(rows[i].policy);
        webhook_addr_t addr;
        CU_ASSERT_TRUE_FATAL(webhook_addr_parse(rows[i].addr, &addr));
        webhook_refusal_t got = webhook_allow_check_addr(&allow, rows[i].host, &addr);
        if (got != rows[i].want) {
            fprintf(stderr, "\n%s on %s (%s): %s, not %s\n", rows[i].policy, rows[i].addr,
                    rows[i].host ? rows[i].host : "literal", webhook_refusal_code(got),
                    webhook_refusal_code(rows[i].want));
            CU_FAIL("the rule");
        }
    }
}

static void test_every_address_must_pass(void)
{
    webhook_allow_t allow = parsed("0.0.0.0/0");
    webhook_addr_t addrs[2];
    webhook_addr_parse("93.184.216.34", &addrs[0]);
    webhook_addr_parse("127.0.0.1", &addrs[1]);
    char detail[WEBHOOK_DETAIL_MAX];
    CU_ASSERT_EQUAL(webhook_allow_check_addrs(&allow, "x.example", addrs, 1, detail, sizeof detail), WEBHOOK_ALLOWED);
    CU_ASSERT_EQUAL(webhook_allow_check_addrs(&allow, "x.example", addrs, 2, detail, sizeof detail),
                    WEBHOOK_REFUSE_PRIVATE);
    CU_ASSERT_PTR_NOT_NULL(strstr(detail, "127.0.0.1"));
    CU_ASSERT_EQUAL(webhook_allow_check_addrs(&allow, "x.example", addrs, 0, detail, sizeof detail),
                    WEBHOOK_REFUSE_UNRESOLVED);
}

static void test_good_urls_are_read(void)
{
    webhook_url_t url;
    char detail[WEBHOOK_DETAIL_MAX];
    CU_ASSERT_EQUAL(webhook_url_parse("HTTPS://Hooks.Example.COM/chess?x=1&y=%2F", &url, detail, sizeof detail),
                    WEBHOOK_ALLOWED);
    CU_ASSERT_TRUE(url.https);
    CU_ASSERT_EQUAL(url.host_kind, WEBHOOK_HOST_NAME);
    CU_ASSERT_STRING_EQUAL(url.host, "hooks.example.com");
    CU_ASSERT_EQUAL(url.port, 443);
    CU_ASSERT_STRING_EQUAL(url.target, "/chess?x=1&y=%2F");
    CU_ASSERT_EQUAL(webhook_url_parse("http://127.0.0.2:8080", &url, detail, sizeof detail), WEBHOOK_ALLOWED);
    CU_ASSERT_EQUAL(url.host_kind, WEBHOOK_HOST_IPV4);
    CU_ASSERT_EQUAL(url.port, 8080);
    CU_ASSERT_STRING_EQUAL(url.target, "/");
    CU_ASSERT_EQUAL(webhook_url_parse("http://[::1]:9/?q", &url, detail, sizeof detail), WEBHOOK_ALLOWED);
    CU_ASSERT_EQUAL(url.host_kind, WEBHOOK_HOST_IPV6);
    CU_ASSERT_STRING_EQUAL(url.host, "::1");
    CU_ASSERT_STRING_EQUAL(url.target, "/?q");
    CU_ASSERT_EQUAL(webhook_url_parse("http://[0:0:0:0:0:ffff:7f00:1]/", &url, detail, sizeof detail),
                    WEBHOOK_ALLOWED);
    CU_ASSERT_STRING_EQUAL(url.host, "::ffff:127.0.0.1"); /* written the one way */
    CU_ASSERT_EQUAL(webhook_url_parse("http://example.com./x", &url, detail, sizeof detail), WEBHOOK_ALLOWED);
    CU_ASSERT_STRING_EQUAL(url.host, "example.com");
}

static void test_bad_urls_are_refused_each_for_its_reason(void)
{
    char long_url[WEBHOOK_URL_MAX + 32] = "http://a.example/";
    memset(long_url + strlen(long_url), 'a', WEBHOOK_URL_MAX);
    long_url[WEBHOOK_URL_MAX + 1] = '\0';
    const struct {
        const char *url;
        webhook_refusal_t want;
    } rows[] = {
        { "ftp://a.example/", WEBHOOK_REFUSE_SCHEME },
        { "file:///etc/passwd", WEBHOOK_REFUSE_SCHEME },
        { "gopher://127.0.0.1:6379/_", WEBHOOK_REFUSE_SCHEME },
        { "//a.example/", WEBHOOK_REFUSE_SCHEME },
        { "http://user:pw@a.example/", WEBHOOK_REFUSE_USERINFO },
        { "http://a.example@127.0.0.1/", WEBHOOK_REFUSE_USERINFO },
        { "http://a.example/#top", WEBHOOK_REFUSE_FRAGMENT },
        { "http://a.example/a b", WEBHOOK_REFUSE_URL },
        { "http://a.example/\r\nX: y", WEBHOOK_REFUSE_URL },
        { "http://a.example\\@127.0.0.1/", WEBHOOK_REFUSE_URL },
        { "http://a.example/\xc3\xa9", WEBHOOK_REFUSE_URL },
        { "http://a.example/%zz", WEBHOOK_REFUSE_URL },
        { "http://a.example/<script>", WEBHOOK_REFUSE_URL },
        { long_url, WEBHOOK_REFUSE_TOO_LONG },
        { "http://", WEBHOOK_REFUSE_HOST },
        { "http:///path", WEBHOOK_REFUSE_HOST },
        { "http://a_b.example/", WEBHOOK_REFUSE_HOST },
        { "http://127.1/", WEBHOOK_REFUSE_HOST },
        { "http://0x7f.0.0.1/", WEBHOOK_REFUSE_HOST },
        { "http://2130706433/", WEBHOOK_REFUSE_HOST },
        { "http://0177.0.0.1/", WEBHOOK_REFUSE_HOST },
        { "http://[fe80::1%25eth0]/", WEBHOOK_REFUSE_HOST },
        { "http://[127.0.0.1]/", WEBHOOK_REFUSE_HOST },
        { "http://[::1/", WEBHOOK_REFUSE_HOST },
        { "http://[::1]x/", WEBHOOK_REFUSE_HOST },
        { "http://a.example:0/", WEBHOOK_REFUSE_PORT },
        { "http://a.example:65536/", WEBHOOK_REFUSE_PORT },
        { "http://a.example:/", WEBHOOK_REFUSE_PORT },
        { "http://a.example:8o/", WEBHOOK_REFUSE_PORT },
        { "http://a.example:000080/", WEBHOOK_REFUSE_PORT },
    };
    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
        webhook_url_t url;
        char detail[WEBHOOK_DETAIL_MAX] = "";
        webhook_refusal_t got = webhook_url_parse(rows[i].url, &url, detail, sizeof detail);
        if (got != rows[i].want) {
            fprintf(stderr, "\nurl %zu: %s, not %s (%s)\n", i, webhook_refusal_code(got),
                    webhook_refusal_code(rows[i].want), detail);
            CU_FAIL("a URL's refusal");
        }
        CU_ASSERT_TRUE(detail[0] != '\0');
        CU_ASSERT_PTR_NULL(strstr(detail, "a.example")); /* nothing of the URL echoed */
    }
}

static void test_a_url_is_checked_at_subscription(void)
{
    char detail[WEBHOOK_DETAIL_MAX];
    webhook_allow_t names = parsed("hooks.example.com"), ranges = parsed("0.0.0.0/0"), off = parsed("");
    CU_ASSERT_EQUAL(webhook_allow_check_url(&names, "https://hooks.example.com/x", 0, NULL, detail, sizeof detail),
                    WEBHOOK_ALLOWED);
    /* Not listed, and no range could allow it. */
    CU_ASSERT_EQUAL(webhook_allow_check_url(&names, "https://evil.example.net/", 0, NULL, detail, sizeof detail),
                    WEBHOOK_REFUSE_NOT_ALLOWED);
    /* A range might: the name is judged by its addresses at delivery. */
    CU_ASSERT_EQUAL(webhook_allow_check_url(&ranges, "https://evil.example.net/", 0, NULL, detail, sizeof detail),
                    WEBHOOK_ALLOWED);
    CU_ASSERT_EQUAL(webhook_allow_check_url(&ranges, "http://169.254.169.254/latest/meta-data/", 0, NULL, detail,
                                            sizeof detail),
                    WEBHOOK_REFUSE_PRIVATE);
    CU_ASSERT_EQUAL(webhook_allow_check_url(&ranges, "http://[::ffff:169.254.169.254]/", 0, NULL, detail,
                                            sizeof detail),
                    WEBHOOK_REFUSE_PRIVATE);
    CU_ASSERT_EQUAL(webhook_allow_check_url(&names, "http://127.0.0.1/", 0, NULL, detail, sizeof detail),
                    WEBHOOK_REFUSE_NOT_ALLOWED);
    CU_ASSERT_EQUAL(webhook_allow_check_url(&off, "https://hooks.example.com/", 0, NULL, detail, sizeof detail),
                    WEBHOOK_REFUSE_NOT_ALLOWED);
    CU_ASSERT_EQUAL(webhook_allow_check_url(&ranges, "ftp://x/", 0, NULL, detail, sizeof detail),
                    WEBHOOK_REFUSE_SCHEME);
    /* Resolved: localhost is loopback, which 0.0.0.0/0 does not open. */
    CU_ASSERT_EQUAL(webhook_allow_check_url(&ranges, "http://localhost/", 5000, NULL, detail, sizeof detail),
                    WEBHOOK_REFUSE_PRIVATE);
}

static void test_the_resolver_gives_addresses_or_gives_up(void)
{
    webhook_addr_t addrs[WEBHOOK_ADDRS_MAX];
    size_t count = 0;
    CU_ASSERT_EQUAL(webhook_resolve("localhost", 5000, addrs, WEBHOOK_ADDRS_MAX, &count), WEBHOOK_RESOLVE_OK);
    CU_ASSERT_TRUE(count >= 1);
    for (size_t i = 0; i < count; i++)
        CU_ASSERT_FALSE(webhook_addr_is_public(&addrs[i]));
    CU_ASSERT_EQUAL(webhook_resolve("127.0.0.2", 0, addrs, 1, &count), WEBHOOK_RESOLVE_OK); /* a literal: no lookup */
    CU_ASSERT_EQUAL(count, 1);
    webhook_resolve_status_t status = webhook_resolve("name.invalid", 3000, addrs, WEBHOOK_ADDRS_MAX, &count);
    CU_ASSERT_TRUE(status == WEBHOOK_RESOLVE_ENONAME || status == WEBHOOK_RESOLVE_ETIMEOUT);
    CU_ASSERT_EQUAL(count, 0);
    /* Callers that give up at once leave their threads to free what they share. */
    for (int i = 0; i < 20; i++) {
        status = webhook_resolve("localhost", 0, addrs, WEBHOOK_ADDRS_MAX, &count);
        CU_ASSERT_TRUE(status == WEBHOOK_RESOLVE_OK || status == WEBHOOK_RESOLVE_ETIMEOUT);
    }
    usleep(300 * 1000);
}

void webhooks_allow_tests_add(CU_pSuite suite)
{
    CU_add_test(suite, "good entries are read", test_good_entries_are_read);
    CU_add_test(suite, "an empty list allows nothing", test_empty_allows_nothing);
    CU_add_test(suite, "bad entries are refused, naming them", test_bad_entries_are_refused_naming_them);
    CU_add_test(suite, "the list is bounded", test_the_list_is_bounded);
    CU_add_test(suite, "the rule", test_the_rule);
    CU_add_test(suite, "every address must pass", test_every_address_must_pass);
    CU_add_test(suite, "good URLs are read", test_good_urls_are_read);
    CU_add_test(suite, "bad URLs are refused, each for its reason", test_bad_urls_are_refused_each_for_its_reason);
    CU_add_test(suite, "a URL is checked at subscription", test_a_url_is_checked_at_subscription);
    CU_add_test(suite, "the resolver gives addresses or gives up", test_the_resolver_gives_addresses_or_gives_up);
}
