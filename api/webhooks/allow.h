/* Where webhooks may go: the --webhook-allow policy (CIDR ranges, host names
 * and *.suffixes), the destination URL a subscription gives, and host names
 * resolved within a time bound. A policy is a value read once at start-up and
 * shared read-only by every thread; nothing here keeps global state but the
 * count of resolver threads still running (at most WEBHOOK_RESOLVERS_MAX). */
#ifndef CHESSD_API_WEBHOOKS_ALLOW_H
#define CHESSD_API_WEBHOOKS_ALLOW_H

#include <stdbool.h>
#include <stddef.h>

enum {
    WEBHOOK_ALLOW_MAX = 64,      /* entries in --webhook-allow */
    WEBHOOK_ALLOW_TEXT_MAX = 4096, /* bytes of the whole setting */
    WEBHOOK_HOST_MAX = 253,      /* a host name's bytes (RFC 1035), without a trailing dot */
    WEBHOOK_URL_MAX = 2048,      /* bytes of a destination URL */
    WEBHOOK_ADDRS_MAX = 16,      /* addresses kept from one resolution */
    WEBHOOK_RESOLVERS_MAX = 64,  /* resolver threads at once, abandoned ones included */
    WEBHOOK_DETAIL_MAX = 256,    /* room for a refusal's sentence */
};

/* An address, IPv4 (family 4, bytes[0..3]) or IPv6 (family 6). */
typedef struct {
    unsigned char family;
    unsigned char bytes[16];
} webhook_addr_t;

typedef struct {
    webhook_addr_t base; /* the host bits are zero */
    unsigned prefix;     /* 0..32 or 0..128 */
    bool non_public;     /* wholly inside one range of the non-public table */
} webhook_cidr_t;

typedef struct {
    int cidr_count, name_count;
    webhook_cidr_t cidrs[WEBHOOK_ALLOW_MAX];
    /* Lower case, no trailing dot; a suffix entry is stored with its leading
     * dot (".example.com") and matches names below it, never itself. */
    char names[WEBHOOK_ALLOW_MAX][WEBHOOK_HOST_MAX + 2];
} webhook_allow_t;

/* Why a destination is refused; every one has a stable code (its text in
 * webhook_refusal_code) that the API can show to a subscriber. */
typedef enum {
    WEBHOOK_ALLOWED = 0,
    WEBHOOK_REFUSE_URL,       /* "url": not a URL of the accepted form (syntax, characters) */
    WEBHOOK_REFUSE_TOO_LONG,  /* "too_long": over WEBHOOK_URL_MAX bytes */
    WEBHOOK_REFUSE_SCHEME,    /* "scheme": not http or https */
    WEBHOOK_REFUSE_USERINFO,  /* "userinfo": user or password before the host */
    WEBHOOK_REFUSE_HOST,      /* "host": not a host name, IPv4 or [IPv6] address */
    WEBHOOK_REFUSE_PORT,      /* "port": not 1..65535 */
    WEBHOOK_REFUSE_FRAGMENT,  /* "fragment": a #fragment */
    WEBHOOK_REFUSE_NOT_ALLOWED, /* "not_allowed": neither the name nor the address is listed */
    WEBHOOK_REFUSE_PRIVATE,   /* "private_address": a non-public address not opened by a non-public range */
    WEBHOOK_REFUSE_UNRESOLVED, /* "unresolved": the name has no address, or none in time */
    WEBHOOK_REFUSAL_COUNT
} webhook_refusal_t;

const char *webhook_refusal_code(webhook_refusal_t refusal);

/* Reads text, comma-separated entries (blanks around each ignored):
 *   - a CIDR range "10.0.0.0/8", "::1/128", or a bare address (a /32 or /128);
 *     its host bits must be zero;
 *   - a host name "hooks.example.com" (letters, digits, '-', dots; a trailing
 *     dot dropped), matched whole, without case;
 *   - a suffix "*.example.com", matching every name below example.com.
 * Empty (or blanks only): a policy that allows nothing, webhooks off. False
 * with a sentence naming the entry in err on the first bad one, or when there
 * are over WEBHOOK_ALLOW_MAX entries or WEBHOOK_ALLOW_TEXT_MAX bytes. */
bool webhook_allow_parse(const char *text, webhook_allow_t *out, char *err, size_t err_size);

/* Whether the policy allows anything at all. */
bool webhook_allow_enabled(const webhook_allow_t *allow);

/* The rule. One address the destination would connect to is allowed when
 *   1. the URL's host is a listed name or below a listed suffix, or the
 *      address lies in a listed range; and
 *   2. the address is public, or lies in a listed range that is itself
 *      wholly inside non-public space (one row of the table in allow.c).
 * A destination is allowed when it has an address and every one is. So
 * 0.0.0.0/0 opens the public internet but never loopback, while 127.0.0.2/32
 * or 10.0.0.0/8 open exactly those. An IPv4-mapped (::ffff:0:0/96) or NAT64
 * (64:ff9b::/96) address is judged, for both, as the IPv4 address it holds.
 * host is the URL's host as webhook_url_parse left it (NULL: a literal). */
webhook_refusal_t webhook_allow_check_addr(const webhook_allow_t *allow, const char *host,
                                           const webhook_addr_t *addr);

/* Whether addr is public: outside every range of the non-public table. */
bool webhook_addr_is_public(const webhook_addr_t *addr);

/* Reads an IPv4 or IPv6 literal (no brackets, no zone); false otherwise. */
bool webhook_addr_parse(const char *text, webhook_addr_t *out);

/* addr as text (inet_ntop) into out, of at least 46 bytes. */
void webhook_addr_format(const webhook_addr_t *addr, char *out, size_t size);

typedef enum { WEBHOOK_HOST_NAME, WEBHOOK_HOST_IPV4, WEBHOOK_HOST_IPV6 } webhook_host_kind_t;

/* A destination URL, as webhook_url_parse read it. */
typedef struct {
    bool https;
    webhook_host_kind_t host_kind;
    char host[WEBHOOK_HOST_MAX + 1]; /* lower case; IPv6 without its brackets */
    unsigned port;                   /* the URL's, else 80 or 443 */
    char target[WEBHOOK_URL_MAX + 1]; /* the path and query, "/" when the URL has none */
} webhook_url_t;

/* Reads text: http:// or https:// (any case), a host (a name, an IPv4
 * address in four decimal parts, or an [IPv6] address without a zone), an
 * optional :port of 1..65535, then a path and query of the characters
 * RFC 3986 allows, %-escapes well formed. Refused: over WEBHOOK_URL_MAX bytes,
 * userinfo, a fragment, spaces, control or non-ASCII bytes, backslashes, and
 * hosts a resolver would read as a number ("127.1", "0x7f.0.0.1",
 * "2130706433"). WEBHOOK_ALLOWED with *out filled; else the refusal, with a
 * sentence in detail that echoes none of the URL. */
webhook_refusal_t webhook_url_parse(const char *text, webhook_url_t *out, char *detail, size_t detail_size);

/* The check when a subscription is made: url parsed, then its host judged.
 * A literal address is judged by the rule. A name is refused when it is not
 * listed and the policy has no range that could allow an address of it;
 * with resolve_timeout_ms > 0 the name is also resolved (within that time)
 * and every address judged. Delivery checks again (webhooks/send.h). The
 * parsed URL goes to *out when it is not NULL. */
webhook_refusal_t webhook_allow_check_url(const webhook_allow_t *allow, const char *url, unsigned resolve_timeout_ms,
                                          webhook_url_t *out, char *detail, size_t detail_size);

/* Judges every address of a resolved host (see webhook_allow_check_addr):
 * WEBHOOK_ALLOWED when count > 0 and every one is allowed, else the first
 * refusal with a sentence naming the address in detail. */
webhook_refusal_t webhook_allow_check_addrs(const webhook_allow_t *allow, const char *host,
                                            const webhook_addr_t *addrs, size_t count, char *detail,
                                            size_t detail_size);

typedef enum {
    WEBHOOK_RESOLVE_OK = 0,
    WEBHOOK_RESOLVE_ENONAME,  /* no address (or a resolver error) */
    WEBHOOK_RESOLVE_ETIMEOUT, /* no answer within the time given */
    WEBHOOK_RESOLVE_EBUSY,    /* WEBHOOK_RESOLVERS_MAX resolutions already running, or no thread */
    WEBHOOK_RESOLVE_STATUS_COUNT
} webhook_resolve_status_t;

/* The TCP addresses of host (a name, or a literal returned as is), at most
 * max (up to WEBHOOK_ADDRS_MAX), duplicates dropped, into out with their
 * number in *count. getaddrinfo has no timeout, so it runs on a detached
 * thread that the caller waits for at most timeout_ms: past that, the caller
 * returns WEBHOOK_RESOLVE_ETIMEOUT and the thread frees what it shares with
 * the caller when it ends. No port: the caller connects with the URL's. */
webhook_resolve_status_t webhook_resolve(const char *host, unsigned timeout_ms, webhook_addr_t *out, size_t max,
                                         size_t *count);

#endif
