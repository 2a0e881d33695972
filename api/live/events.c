/* See events.h. Everything the hub shares is under hub->lock (the topics,
 * their queues, the timers, the admission counts); a stream's queued bytes
 * are under its own lock. The order is hub lock, stream lock, then what the
 * connection callbacks take. The hub thread drops the hub lock only to poll
 * and to read or write a game in Redis. One long file on purpose: when the
 * hub takes and drops its one lock is the main invariant, read in one place. */
#include "events.h"

#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <time.h>
#include <unistd.h>

#include "../../store/game_streams.h"
#include "../../store/store.h"
#include "../../store/subscriber.h"
#include "../game/game_events.h"
#include "../../rules/base/clock.h"
#include "../http/membudget.h"
#include "../game/service.h"
#include "timers.h"

_Static_assert((int)EVENTS_MUX_MAX == (int)STORE_STREAM_IDS_MAX, "a mux follows what its id set holds");
_Static_assert((int)STORE_CHANNEL_SIZE == (int)GAME_EVENTS_CHANNEL_SIZE, "a topic holds either channel");

enum {
    PENDING_MAX = 256 * 1024, /* bytes waiting for a stream's client (ours and the kernel's), before it is closed */
    MUX_PENDING_MAX = 1024 * 1024, /* the same for a multi-game stream, whose games' first snapshots come at once */
    FRAME_SSE_NO_ID = EVENTS_FORMAT_COUNT, /* a multi-game stream's games: SSE without id lines */
    FRAME_COUNT,
    FORGETS_PER_ROUND = 32, /* closed streams' id sets deleted between two polls */
    FORGETS_MAX = 1024,     /* more wait for their expiry instead */
    ID_SIZE = 24,
    RESYNCS_PER_ROUND = 32, /* Redis reads between two polls, so timers and messages are not held up */
    FLAG_CHECKS_PER_ROUND = 64,
    PRESENCE_READS_PER_ROUND = 64,
    CLAIM_AT_SLACK_MS = 1000, /* a claim's time that moves less than this is not told again */
    BACKOFF_FIRST_MS = 100,
    BACKOFF_MAX_MS = 2000,
};
#define RESYNC_RETRY_US (1000000ull)      /* a read that failed is tried again after this */
#define FLAG_MARGIN_US (5000ull)          /* a flag is checked this long after its deadline */
#define FLAG_RETRY_US (100000ull)         /* a flag check that failed is tried again after this */
/* Streams are looked at for progress an eighth of the stall time apart, so
 * a stalled one is closed within 9/8 of it; never more often than this
 * (a look is two system calls a stream) nor further apart than that. */
#define STALL_LOOK_MIN_US (100000ull)
/* A stream following a review ends after this long without news of it:
 * the review may have ended before the stream was subscribed. */
#define REVIEW_QUIET_US (60000000ull)
#define STALL_LOOK_MAX_US (5000000ull)
/* A multi-game stream's id set is read (and its expiry pushed back) at
 * least this often. */
#define CONTROL_TOUCH_US (120ull * 1000000u)

/* A topic's waiters and its streams are doubly linked lists headed in the
 * topic: nodes with links prev and next (the hub's muxes: other names), of
 * either type. */
#define DLIST_PUSH_AS(head, node, prev_, next_) \
    do { \
        (node)->prev_ = NULL; \
        (node)->next_ = (head); \
        if (head) \
            (head)->prev_ = (node); \
        (head) = (node); \
    } while (0)
#define DLIST_UNLINK_AS(head, node, prev_, next_) \
    do { \
        if ((node)->prev_) \
            (node)->prev_->next_ = (node)->next_; \
        else \
            (head) = (node)->next_; \
        if ((node)->next_) \
            (node)->next_->prev_ = (node)->prev_; \
    } while (0)
#define DLIST_PUSH(head, node) DLIST_PUSH_AS(head, node, prev, next)
#define DLIST_UNLINK(head, node) DLIST_UNLINK_AS(head, node, prev, next)
#define FLAG_MAX_MS (7ll * 24 * 3600 * 1000) /* a deadline further than this is a wrong one */
#define PING_US (5ull * 1000000u)         /* the subscriber connection is pinged this often... */
                                          /* ...and lost when a ping is unanswered at the next */

typedef struct topic topic_t;
typedef struct waiter waiter_t;

typedef enum { TIMER_TOPIC, TIMER_WAITER } timer_kind_t;

/* A timer entry and what owns it; the first member of its owner. */
typedef struct {
    timers_entry_t entry; /* first: the heap's pointer is this one */
    timer_kind_t kind;
} hub_timer_t;

typedef enum { SUB_WANTED, SUB_SENT, SUB_LIVE } sub_state_t;

struct events_stream {
    /* Taken by the connection's thread to read the queued bytes, and by the
     * hub after its own lock. */
    pthread_mutex_t lock;
    /* under lock */
    buf_t out;   /* queued bytes: out.data[sent, out.length) */
    size_t sent;
    bool suspended; /* conn.suspend was called and conn.resume not yet */
    bool ended;     /* the end is queued */
    bool failed;    /* closed: over PENDING_MAX, stalled, or shed for the buffer budget */
    events_close_t reason; /* why it closed, once known (EVENTS_CLOSE_CLIENT: not yet) */
    bool held;      /* its topic is not known to be live and current for it yet: nothing is read */
    uint64_t taken; /* bytes the connection has read, in all */
    /* set before the stream is shared */
    events_format_t format;
    char id[ID_SIZE];
    events_t *hub; /* NULL until attached */
    /* Its bytes against the buffer budget: a stream's own queue, and a
     * mux's children (their structures and held queues) charged to the mux. */
    membudget_reader_t reader;
    size_t charged; /* out.capacity as charged (under lock; a child's under the hub's) */
    bool counted_first; /* the snapshot it was made with is counted (or there was none) */
    events_conn_t conn;
    unsigned char address[EVENTS_ADDRESS_MAX];
    size_t address_length;
    /* under the hub's lock */
    topic_t *topic; /* NULL for a stream born ended */
    events_stream_t *prev, *next;
    uint64_t last_version; /* what the client has */
    bool finished;         /* nothing more is queued */
    /* the last look for progress (check_stalls) */
    uint64_t progress_us;  /* when it last made progress, or had nothing waiting */
    uint64_t acked_seen, taken_seen;
    /* presence: set before it is shared, then under the hub's lock */
    int player;            /* 1 + the colour whose token opened it; 0: a spectator's (a mux's children too) */
    bool told_gone;        /* opponent_gone: what its client was told last (false: nothing, or back) */
    uint64_t told_claim_at_us;
    /* A multi-game stream (a mux) follows each game through a child, a
     * stream of its own on the game's topic without a connection: what a
     * child queues goes to the mux's client (while it is held, into its own
     * out first). Under the hub's lock, children and all. */
    /* A spectator's stream of a delayed game (events_stream_set_delayed):
     * under the hub's lock once shared; a mux's children take the mux's. */
    bool delayed;
    uint64_t view_sig;             /* what its client's view shows (0: nothing yet) */
    /* A finished game's stream that follows its review (events_stream_follow_review):
     * review events only, ended by the last one or by REVIEW_QUIET_US without one. */
    bool review;
    uint64_t review_heard_us;
    bool mux;
    events_stream_t *parent;       /* a child: its mux */
    bool exact;                    /* a child: its client has last_version, no other (a snapshot if it is not that) */
    events_stream_t **children;    /* a mux: its games, in the order followed */
    unsigned child_count;
    topic_t *control;              /* a mux: the channel on which ids are added */
    events_stream_t *mux_prev, *mux_next; /* a mux: in the hub's list */
};

struct waiter {
    hub_timer_t timer; /* first */
    topic_t *topic;
    waiter_t *prev, *next;
    uint64_t version;
    events_conn_t conn;
    unsigned char address[EVENTS_ADDRESS_MAX];
    size_t address_length;
};

/* One per game with streams or waiters on this replica, found by channel. */
struct topic {
    hub_timer_t timer; /* first */
    char id[ID_SIZE];
    char channel[GAME_EVENTS_CHANNEL_SIZE];
    topic_t *hash_next;
    events_stream_t *control; /* a mux's channel for added ids (then no game, no streams, no waiters) */
    events_stream_t *streams;
    waiter_t *waiters;
    unsigned members; /* streams and waiters */
    unsigned refs;    /* the map, each queue it is in, each hub operation on it */
    bool removed;     /* out of the map: no member left */
    sub_state_t sub;
    bool in_subscribe_queue, in_resync_queue, in_flag_queue, in_settle_queue, in_presence_queue;
    topic_t *subscribe_next, *resync_next, *flag_next, *settle_next, *presence_next;
    uint64_t version;      /* the highest seen */
    uint64_t flag_version; /* the version whose meta set the flag timer */
    uint64_t flag_due_us;  /* 0: no clock running */
    uint64_t check_due_us; /* a re-read: silence, or a failed read */
    /* presence (events_stream_set_player): each player's streams here, the
     * next mark (0: none), and what was last judged for their streams */
    unsigned players[COLOR_COUNT];
    uint64_t presence_due_us;
    bool gone[COLOR_COUNT];
    uint64_t claim_at_us[COLOR_COUNT];
    /* in the settle queue: the game as re-read, applied once PING round
     * settle_round is answered (a later read replaces it) */
    buf_t settle_json;
    buf_t settle_view_json;        /* the spectators' view, when a delayed stream wanted it */
    game_svc_view_t settle_view;
    game_event_meta_t settle_meta;
    uint64_t settle_round;
};

typedef struct unsubscribe {
    struct unsubscribe *next;
    char channel[GAME_EVENTS_CHANNEL_SIZE];
} unsubscribe_t;

typedef struct forget {
    struct forget *next;
    char id[ID_SIZE];
} forget_t;

typedef struct address_count {
    struct address_count *next;
    unsigned char bytes[EVENTS_ADDRESS_MAX];
    size_t length;
    unsigned count;
} address_count_t;

/* A FIFO of topics through one link member of theirs, with a flag member
 * saying whether they are in it. */
typedef struct {
    topic_t *head, *tail;
    size_t link_offset, member_offset;
} topic_queue_t;

enum { ADDRESS_BUCKETS = 1024 };

struct events {
    events_config_t cfg;
    uint64_t silent_us; /* set at start: a topic without a message this long is read again */
    pthread_t thread;
    int wake_fd;
    pthread_mutex_t lock;
    /* under lock */
    bool draining, stopping;
    topic_t **buckets;
    size_t bucket_count, topic_count;
    topic_queue_t subscribes, resyncs, flags, presences;
    topic_queue_t settles; /* re-read topics by PING round, the earliest first */
    unsubscribe_t *unsubscribes;
    timers_t timers;
    address_count_t *addresses[ADDRESS_BUCKETS];
    unsigned open; /* streams and waiters, admitted ones included */
    events_stream_t *muxes; /* the multi-game streams */
    forget_t *forgets;      /* ids of closed muxes, whose sets are to be deleted */
    unsigned forget_count;
    uint64_t heartbeat_due_us;
    uint64_t stall_look_due_us;
    /* the hub thread's alone (the Pub/Sub socket is non-blocking, and used
     * under lock) */
    store_subscriber_t *sub;
    bool ever_connected;
    unsigned backoff_ms;
    uint64_t reconnect_due_us;
    uint64_t ping_due_us;
    uint64_t rounds_sent;     /* PING rounds queued on this connection */
    uint64_t rounds_answered; /* of them, answered */
    uint64_t keepalive_round; /* the last PING_US ping's round: lost if unanswered at the next */
    char (*ids)[STORE_ENGINE_ID_SIZE]; /* a mux's ids as read (EVENTS_MUX_MAX) */
};

/* Tells the caller's count callback (events_config_t) of one change. */
static void hub_count(const events_t *h, events_counter_t counter, int label, long long delta)
{
    if (h->cfg.count)
        h->cfg.count(counter, label, delta);
}

static void wake_hub(events_t *h)
{
    uint64_t one = 1;
    (void)!write(h->wake_fd, &one, sizeof one);
}

/* The buffer budget's hook: the hub thread sheds readers past it. */
static void wake_hub_over(void *arg) { wake_hub(arg); }

/* Charges s's queue (its capacity, what malloc holds) to its reader: a
 * child's to its mux. Under s's lock, or the hub's for a child. */
static void stream_charge(events_stream_t *s)
{
    events_stream_t *owner = s->parent ? s->parent : s;
    membudget_track(&owner->reader, &s->charged, s->out.capacity);
}

/* What a mux holds besides queues: a child's structure, charged while it lives. */
static void child_charge(events_stream_t *c, int sign)
{
    membudget_add(&c->parent->reader, sign * (ptrdiff_t)sizeof *c);
}

const char *events_close_name(events_close_t why)
{
    static const char *const names[EVENTS_CLOSE_COUNT] = {
        [EVENTS_CLOSE_CLIENT] = "client",     [EVENTS_CLOSE_STALLED] = "stalled", [EVENTS_CLOSE_OVERFLOW] = "overflow",
        [EVENTS_CLOSE_IDLE] = "idle",         [EVENTS_CLOSE_BUDGET] = "budget",   [EVENTS_CLOSE_SHUTDOWN] = "shutdown",
        [EVENTS_CLOSE_ENDED] = "ended",       [EVENTS_CLOSE_ERROR] = "error",
    };
    return (unsigned)why < EVENTS_CLOSE_COUNT ? names[why] : "client";
}

/* --- framing --- */

void events_frame(buf_t *out, events_format_t format, const char *type, uint64_t version, const char *json,
                  size_t length)
{
    if (format == EVENTS_SSE || (int)format == FRAME_SSE_NO_ID) {
        if (version && format == EVENTS_SSE)
            buf_printf(out, "id: %llu\n", (unsigned long long)version);
        buf_printf(out, "event: %s\ndata: ", type);
        buf_append(out, json, length);
        buf_puts(out, "\n\n");
        return;
    }
    buf_append(out, json, length);
    buf_putc(out, '\n');
}

void events_frame_heartbeat(buf_t *out, events_format_t format)
{
    buf_puts(out, format == EVENTS_SSE ? ": heartbeat\n\n" : "\n");
}

bool events_last_event_id(const char *text, uint64_t *version)
{
    if (!text || !*text)
        return false;
    uint64_t v = 0;
    for (const char *p = text; *p; p++) {
        if (*p < '0' || *p > '9' || p - text >= 16)
            return false;
        v = v * 10 + (uint64_t)(*p - '0');
    }
    if (v > 9007199254740991ull)
        return false;
    *version = v;
    return true;
}

/* Frames of one event, made once per format at first use. */
typedef struct {
    const char *type;
    uint64_t version;
    const char *json;
    size_t length;
    buf_t frames[FRAME_COUNT];
    bool made[FRAME_COUNT];
} framed_t;

static void framed_init(framed_t *f, const char *type, uint64_t version, const char *json, size_t length)
{
    memset(f, 0, sizeof *f);
    f->type = type;
    f->version = version;
    f->json = json;
    f->length = length;
    for (int i = 0; i < FRAME_COUNT; i++)
        buf_init(&f->frames[i]);
}

static const buf_t *framed_for(framed_t *f, events_format_t format)
{
    if (!f->made[format]) {
        events_frame(&f->frames[format], format, f->type, f->version, f->json, f->length);
        f->made[format] = true;
    }
    return &f->frames[format];
}

static void framed_free(framed_t *f)
{
    for (int i = 0; i < FRAME_COUNT; i++)
        buf_free(&f->frames[i]);
}

/* --- streams --- */

events_stream_t *events_stream_new(events_format_t format, const char *id, uint64_t version, const char *json,
                                   size_t length, bool ended)
{
    events_stream_t *s = calloc(1, sizeof *s);
    if (!s)
        return NULL;
    pthread_mutex_init(&s->lock, NULL);
    buf_init(&s->out);
    s->format = (unsigned)format < EVENTS_FORMAT_COUNT ? format : EVENTS_NDJSON;
    snprintf(s->id, sizeof s->id, "%s", id);
    s->last_version = version;
    s->ended = s->finished = ended;
    if (json)
        events_frame(&s->out, s->format, "game", version, json, length);
    stream_charge(s);
    if (buf_failed(&s->out)) {
        events_stream_release(s);
        return NULL;
    }
    s->counted_first = !json; /* its first event is counted once it is attached to a hub */
    return s;
}

void events_stream_set_delayed(events_stream_t *s, uint64_t sig)
{
    s->delayed = true;
    s->view_sig = sig;
    for (unsigned i = 0; i < s->child_count; i++) /* a mux's games named at its start */
        s->children[i]->delayed = true;
}

void events_stream_follow_review(events_stream_t *s)
{
    s->review = true;
    s->ended = s->finished = false;
    s->review_heard_us = clock_now_us();
}

void events_stream_set_player(events_stream_t *s, color_t player)
{
    s->player = (unsigned)player < COLOR_COUNT ? 1 + (int)player : 0;
}

ssize_t events_stream_read(events_stream_t *s, char *out, size_t max)
{
    ssize_t n;
    pthread_mutex_lock(&s->lock);
    if (s->failed) {
        n = -2;
    } else if (s->sent < s->out.length && !s->held) {
        size_t take = s->out.length - s->sent < max ? s->out.length - s->sent : max;
        memcpy(out, s->out.data + s->sent, take);
        s->sent += take;
        s->taken += take;
        if (s->sent == s->out.length) { /* an idle stream holds no buffer */
            buf_free(&s->out);
            s->sent = 0;
            stream_charge(s);
            membudget_drained(&s->reader);
        }
        n = (ssize_t)take;
    } else if (s->ended && !s->held) {
        n = -1;
    } else if (s->conn.suspend) {
        s->suspended = true;
        s->conn.suspend(s->conn.arg);
        n = 0;
    } else {
        n = -2; /* not attached and not ended: nothing could ever come */
    }
    pthread_mutex_unlock(&s->lock);
    return n;
}

/* The client of s stopped reading (stream lock held): the stream fails, its
 * bytes are dropped and its connection closed. A suspended one is woken by
 * the caller and learns it from its next read. */
static void stream_fail(events_stream_t *s, events_close_t reason)
{
    s->failed = true;
    if (s->reason == EVENTS_CLOSE_CLIENT)
        s->reason = reason;
    buf_free(&s->out);
    s->sent = 0;
    stream_charge(s);
    s->finished = true;
    s->conn.abort(s->conn.arg);
}

/* Queues bytes on s (hub lock held); end: nothing follows them. When
 * unsent bytes wait and these would take them, with what the kernel holds
 * unacknowledged, past PENDING_MAX, the client is not reading: the stream
 * fails; so it does when bytes is NULL (they could not be made) or memory
 * runs out. */
static void child_push(events_stream_t *c, const char *bytes, size_t n, bool end);

static void stream_push(events_stream_t *s, const char *bytes, size_t n, bool end)
{
    if (s->parent) {
        child_push(s, bytes, n, end);
        return;
    }
    if (s->finished)
        return;
    pthread_mutex_lock(&s->lock);
    if (s->failed) { /* shed for the budget by another thread: the hub learns it here */
        s->finished = true;
        pthread_mutex_unlock(&s->lock);
        return;
    }
    /* What waits is bounded, not one event: a long game's snapshot may be
     * larger than the bound by itself. The kernel is asked only when our
     * queue is not empty: a client that keeps up costs no system call. */
    size_t queued = s->out.length - s->sent, unsent = 0;
    if (queued > 0 && s->conn.kernel && !s->conn.kernel(s->conn.arg, &unsent, NULL))
        unsent = 0;
    size_t max = s->mux ? MUX_PENDING_MAX : PENDING_MAX;
    if (bytes && queued > 0 && queued + unsent + n > max) {
        stream_fail(s, EVENTS_CLOSE_OVERFLOW);
        hub_count(s->hub, EVENTS_COUNTER_STALLED, 0, 1);
    } else if (!bytes || !buf_reserve(&s->out, n)) {
        stream_fail(s, EVENTS_CLOSE_ERROR);
    } else {
        membudget_waiting(&s->reader); /* its age counts from its first byte waiting */
        buf_append(&s->out, bytes, n);
        stream_charge(s);
        if (end) {
            if (s->reason == EVENTS_CLOSE_CLIENT)
                s->reason = EVENTS_CLOSE_ENDED;
            s->ended = true;
            s->finished = true;
            s->held = false; /* an ending (the game's, a shutdown) is sent as soon as it is known */
        }
    }
    if (s->suspended && !s->held) {
        s->suspended = false;
        s->conn.resume(s->conn.arg);
    }
    pthread_mutex_unlock(&s->lock);
    /* Past the budget, readers are shed now, not after the round: one
     * snapshot for hundreds of streams would pass it many times over. The
     * hub's lock alone is held here, which shedding may be called under. */
    if (membudget_over())
        membudget_shed();
}

/* A child's bytes (hub lock held): to its mux's client, or kept while the
 * child is held (at most PENDING_MAX, else the mux fails); end: the game
 * is over for the mux, which goes on with its other games. */
static void child_push(events_stream_t *c, const char *bytes, size_t n, bool end)
{
    events_stream_t *m = c->parent;
    if (c->finished || m->finished) /* a mux closed (shed, stalled) keeps nothing for its games */
        return;
    if (!bytes || (c->held && (c->out.length + n > PENDING_MAX || !buf_reserve(&c->out, n)))) {
        stream_push(m, NULL, 0, false); /* fails the mux */
        c->finished = true;
        return;
    }
    if (c->held) {
        buf_append(&c->out, bytes, n);
        stream_charge(c);
    } else if (n)
        stream_push(m, bytes, n, false);
    if (end) {
        c->finished = true;
        if (c->held) { /* an ending is sent as soon as it is known */
            c->held = false;
            if (c->out.length)
                stream_push(m, c->out.data, c->out.length, false);
            buf_free(&c->out);
            stream_charge(c);
        }
    }
}

/* Lets a held stream's client read (hub lock held); first drops the snapshot
 * it was born with when a later one replaces it (drop_first: nothing of it
 * was read, since the stream was held). A child's bytes go to its mux. */
static void stream_unhold(events_stream_t *s, bool drop_first)
{
    if (s->parent) {
        if (drop_first) {
            buf_free(&s->out);
        } else if (s->held) {
            s->held = false;
            if (s->out.length)
                stream_push(s->parent, s->out.data, s->out.length, false);
            buf_free(&s->out);
        }
        stream_charge(s);
        return;
    }
    pthread_mutex_lock(&s->lock);
    if (s->held && drop_first && s->sent == 0) {
        buf_free(&s->out);
        buf_init(&s->out);
        stream_charge(s);
    }
    if (!drop_first) {
        s->held = false;
        if (s->suspended) {
            s->suspended = false;
            s->conn.resume(s->conn.arg);
        }
    }
    pthread_mutex_unlock(&s->lock);
}

static void stream_push_event(events_stream_t *s, framed_t *f, bool end)
{
    const buf_t *frame = framed_for(f, s->format);
    stream_push(s, buf_failed(frame) ? NULL : frame->data, frame->length, end);
    hub_count(s->hub, EVENTS_COUNTER_EVENT, 0, 1);
}

/* --- admission --- */

static size_t address_bucket(const unsigned char *bytes, size_t length)
{
    uint32_t hash = 2166136261u;
    for (size_t i = 0; i < length; i++)
        hash = (hash ^ bytes[i]) * 16777619u;
    return hash % ADDRESS_BUCKETS;
}

static address_count_t **address_find(events_t *h, const unsigned char *bytes, size_t length)
{
    address_count_t **p = &h->addresses[address_bucket(bytes, length)];
    while (*p && ((*p)->length != length || memcmp((*p)->bytes, bytes, length)))
        p = &(*p)->next;
    return p;
}

static size_t address_length(size_t length) { return length < EVENTS_ADDRESS_MAX ? length : EVENTS_ADDRESS_MAX; }

/* Gives back a place (hub lock held). */
static void release_locked(events_t *h, const void *address, size_t length)
{
    length = address_length(length);
    address_count_t **p = address_find(h, address, length);
    if (*p && --(*p)->count == 0) {
        address_count_t *gone = *p;
        *p = gone->next;
        free(gone);
    }
    if (h->open > 0) {
        h->open--;
        hub_count(h, EVENTS_COUNTER_STREAMS_OPEN, 0, -1);
    }
}

events_status_t events_admit(events_t *h, const void *address, size_t length)
{
    length = address_length(length);
    events_status_t status = EVENTS_OK;
    pthread_mutex_lock(&h->lock);
    address_count_t **p = address_find(h, address, length);
    if (h->draining) {
        status = EVENTS_EDRAINING;
    } else if (membudget_full()) {
        status = EVENTS_EBUDGET;
    } else if (h->open >= h->cfg.max_streams
               || (h->cfg.max_per_address && *p && (*p)->count >= h->cfg.max_per_address)) {
        status = EVENTS_ETOO_MANY;
    } else if (!*p && !(*p = calloc(1, sizeof **p))) {
        status = EVENTS_ENOMEM;
    } else {
        memcpy((*p)->bytes, address, length);
        (*p)->length = length;
        (*p)->count++;
        h->open++;
        hub_count(h, EVENTS_COUNTER_STREAMS_OPEN, 0, 1);
    }
    pthread_mutex_unlock(&h->lock);
    return status;
}

void events_release(events_t *h, const void *address, size_t length)
{
    pthread_mutex_lock(&h->lock);
    release_locked(h, address, length);
    pthread_mutex_unlock(&h->lock);
}

/* --- topics --- */

static size_t channel_hash(const char *channel, size_t length)
{
    uint64_t hash = 1469598103934665603ull;
    for (size_t i = 0; i < length; i++)
        hash = (hash ^ (unsigned char)channel[i]) * 1099511628211ull;
    return (size_t)hash;
}

static topic_t *topic_find(events_t *h, const char *channel, size_t length)
{
    if (!h->bucket_count)
        return NULL;
    topic_t *t = h->buckets[channel_hash(channel, length) & (h->bucket_count - 1)];
    while (t && (strlen(t->channel) != length || memcmp(t->channel, channel, length)))
        t = t->hash_next;
    return t;
}

/* Doubles the buckets when the topics outnumber them (a failure leaves longer chains). */
static void topics_grow(events_t *h)
{
    if (h->topic_count < h->bucket_count)
        return;
    size_t count = h->bucket_count ? h->bucket_count * 2 : 64;
    topic_t **buckets = calloc(count, sizeof *buckets);
    if (!buckets)
        return;
    for (size_t i = 0; i < h->bucket_count; i++) {
        for (topic_t *t = h->buckets[i], *next; t; t = next) {
            next = t->hash_next;
            size_t b = channel_hash(t->channel, strlen(t->channel)) & (count - 1);
            t->hash_next = buckets[b];
            buckets[b] = t;
        }
    }
    free(h->buckets);
    h->buckets = buckets;
    h->bucket_count = count;
}

/* Drops a reference; the last frees t. Not inlined: a caller holding its own
 * reference across a call that drops another would otherwise look to the
 * compiler like a use after free. */
__attribute__((noinline)) static void topic_unref(topic_t *t)
{
    if (--t->refs == 0) {
        buf_free(&t->settle_json);
        buf_free(&t->settle_view_json);
        free(t);
    }
}

/* A topic's link and membership flag in queue q. */
static topic_t **queue_link(const topic_queue_t *q, topic_t *t) { return (topic_t **)((char *)t + q->link_offset); }
static bool *queue_member(const topic_queue_t *q, topic_t *t) { return (bool *)((char *)t + q->member_offset); }

/* Appends t unless it is queued already; the queue holds a reference. */
static void queue_push(topic_queue_t *q, topic_t *t)
{
    if (*queue_member(q, t))
        return;
    *queue_member(q, t) = true;
    *queue_link(q, t) = NULL;
    t->refs++;
    if (q->tail)
        *queue_link(q, q->tail) = t;
    else
        q->head = t;
    q->tail = t;
}

/* Pops the first topic; its reference passes to the caller. */
static topic_t *queue_pop(topic_queue_t *q)
{
    topic_t *t = q->head;
    if (!t)
        return NULL;
    q->head = *queue_link(q, t);
    if (!q->head)
        q->tail = NULL;
    *queue_member(q, t) = false;
    return t;
}

static void queue_init(topic_queue_t *q, size_t link_offset, size_t member_offset)
{
    q->head = q->tail = NULL;
    q->link_offset = link_offset;
    q->member_offset = member_offset;
}

static void want_resync(events_t *h, topic_t *t)
{
    if (!t->removed && !t->in_resync_queue) {
        queue_push(&h->resyncs, t);
        wake_hub(h);
    }
}

/* Sets the topic's timer to its earliest due time. */
static void topic_reschedule(events_t *h, topic_t *t)
{
    uint64_t when = t->check_due_us;
    if (t->flag_due_us && t->flag_due_us < when)
        when = t->flag_due_us;
    if (t->presence_due_us && t->presence_due_us < when)
        when = t->presence_due_us;
    if (t->removed || !timers_set(&h->timers, &t->timer.entry, when))
        timers_clear(&h->timers, &t->timer.entry);
}

/* The game's clock, as of meta: the flag is checked just after its deadline. */
static void arm_flag(events_t *h, topic_t *t, const game_event_meta_t *meta, uint64_t now)
{
    if (meta->version < t->flag_version)
        return; /* older news */
    t->flag_version = meta->version;
    if (meta->ended || meta->deadline_ms <= 0) {
        t->flag_due_us = 0;
    } else {
        /* Redis's clock tells how long is left; the local one counts it down. */
        int64_t left_ms = meta->at_ms > 0 ? meta->deadline_ms - meta->at_ms : 0;
        if (left_ms < 0)
            left_ms = 0;
        if (left_ms > FLAG_MAX_MS)
            left_ms = FLAG_MAX_MS;
        t->flag_due_us = now + (uint64_t)left_ms * 1000u + FLAG_MARGIN_US;
    }
    topic_reschedule(h, t);
}

/* A message or a read: the topic is not silent. */
static void topic_heard(events_t *h, topic_t *t, uint64_t now)
{
    t->check_due_us = now + (t->control && h->silent_us > CONTROL_TOUCH_US ? CONTROL_TOUCH_US : h->silent_us);
    topic_reschedule(h, t);
}

/* The topic of game id, made (and queued for SUBSCRIBE) when there is none,
 * for a member whose client has version. NULL when out of memory. */
static topic_t *topic_make(events_t *h, const char *id, const char *channel, uint64_t version)
{
    topic_t *t = topic_find(h, channel, strlen(channel));
    if (t)
        return t;
    topics_grow(h);
    if (!h->bucket_count || !(t = calloc(1, sizeof *t)))
        return NULL;
    t->timer.kind = TIMER_TOPIC;
    snprintf(t->id, sizeof t->id, "%s", id);
    snprintf(t->channel, sizeof t->channel, "%s", channel);
    t->refs = 1;
    t->sub = SUB_WANTED;
    t->version = version;
    size_t b = channel_hash(channel, strlen(channel)) & (h->bucket_count - 1);
    t->hash_next = h->buckets[b];
    h->buckets[b] = t;
    h->topic_count++;
    topic_heard(h, t, clock_now_us());
    queue_push(&h->subscribes, t);
    wake_hub(h);
    return t;
}

static topic_t *topic_get(events_t *h, const char *id, uint64_t version)
{
    char channel[GAME_EVENTS_CHANNEL_SIZE];
    game_events_channel(id, channel);
    return topic_make(h, id, channel, version);
}

/* Drops a topic without members: out of the map, UNSUBSCRIBE queued. */
static void topic_maybe_remove(events_t *h, topic_t *t)
{
    if (t->members || t->removed)
        return;
    size_t b = channel_hash(t->channel, strlen(t->channel)) & (h->bucket_count - 1);
    topic_t **p = &h->buckets[b];
    while (*p != t)
        p = &(*p)->hash_next;
    *p = t->hash_next;
    h->topic_count--;
    t->removed = true;
    timers_clear(&h->timers, &t->timer.entry);
    if (t->sub != SUB_WANTED) {
        unsubscribe_t *u = calloc(1, sizeof *u);
        if (u) { /* else the subscription stays until the connection is remade: harmless */
            memcpy(u->channel, t->channel, sizeof u->channel);
            u->next = h->unsubscribes;
            h->unsubscribes = u;
            wake_hub(h);
        }
    }
    topic_unref(t);
}

/* --- waiters --- */

static void waiter_wake(events_t *h, waiter_t *w)
{
    topic_t *t = w->topic;
    DLIST_UNLINK(t->waiters, w);
    t->members--;
    timers_clear(&h->timers, &w->timer.entry);
    w->conn.resume(w->conn.arg);
    release_locked(h, w->address, w->address_length);
    free(w);
    topic_maybe_remove(h, t);
}

/* Wakes the topic's waiters whose client has less than version. */
static void wake_waiters(events_t *h, topic_t *t, uint64_t version)
{
    t->refs++; /* the last waiter may take the topic with it */
    for (waiter_t *w = t->waiters, *next; w; w = next) {
        next = w->next;
        if (w->version < version)
            waiter_wake(h, w);
    }
    topic_unref(t);
}

events_status_t events_wait(events_t *h, const char *id, uint64_t version, unsigned seconds, const void *address,
                            size_t length, const events_conn_t *conn)
{
    pthread_mutex_lock(&h->lock);
    waiter_t *w = h->draining ? NULL : calloc(1, sizeof *w);
    topic_t *t = w ? topic_get(h, id, version) : NULL;
    if (!t) {
        events_status_t status = h->draining ? EVENTS_EDRAINING : EVENTS_ENOMEM;
        release_locked(h, address, length);
        pthread_mutex_unlock(&h->lock);
        free(w);
        return status;
    }
    w->timer.kind = TIMER_WAITER;
    w->topic = t;
    w->version = version;
    w->conn = *conn;
    w->address_length = address_length(length);
    memcpy(w->address, address, w->address_length);
    DLIST_PUSH(t->waiters, w);
    t->members++;
    if (!timers_set(&h->timers, &w->timer.entry, clock_now_us() + (uint64_t)seconds * 1000000u)
        || (t->sub == SUB_LIVE && t->version > version))
        waiter_wake(h, w); /* no timer: answered now rather than never; or already behind */
    pthread_mutex_unlock(&h->lock);
    return EVENTS_OK;
}

/* --- multi-game streams --- */

events_stream_t *events_mux_new(events_format_t format, const char *stream_id, const char *const *ids,
                                const uint64_t *since, unsigned count)
{
    if (count > EVENTS_MUX_MAX)
        return NULL;
    events_stream_t *m = events_stream_new(format, stream_id, 0, NULL, 0, false);
    if (!m)
        return NULL;
    m->mux = true;
    m->children = calloc(EVENTS_MUX_MAX, sizeof *m->children);
    if (m->children)
        membudget_add(&m->reader, EVENTS_MUX_MAX * (ptrdiff_t)sizeof *m->children);
    char opening[96];
    int n = snprintf(opening, sizeof opening, "{\"type\":\"stream\",\"stream\":\"%s\"}", m->id);
    events_frame(&m->out, m->format, "stream", 0, opening, (size_t)n);
    stream_charge(m);
    if (!m->children || buf_failed(&m->out)) {
        events_stream_release(m);
        return NULL;
    }
    /* the games are followed once attached: until then, kept as children without a topic */
    for (unsigned i = 0; i < count; i++) {
        events_stream_t *c = calloc(1, sizeof *c);
        if (!c) {
            events_stream_release(m);
            return NULL;
        }
        pthread_mutex_init(&c->lock, NULL);
        buf_init(&c->out);
        c->format = m->format == EVENTS_SSE ? (events_format_t)FRAME_SSE_NO_ID : m->format;
        snprintf(c->id, sizeof c->id, "%s", ids[i]);
        c->last_version = since ? since[i] : 0;
        c->exact = c->last_version > 0;
        c->parent = m;
        c->counted_first = true;
        child_charge(c, 1);
        m->children[m->child_count++] = c;
    }
    return m;
}

/* Puts child c of a mux on its game's topic (hub lock held); false when
 * out of memory. Held until the topic is live and the child's client has
 * what the topic has (exact: that version and no other), as a stream is. */
static bool child_attach(events_t *h, events_stream_t *c)
{
    /* Not with the client's version: a version named by a client is not
     * one this replica has seen, and would wake the game's long polls. */
    topic_t *t = topic_get(h, c->id, 0);
    if (!t)
        return false;
    c->hub = h;
    c->topic = t;
    DLIST_PUSH(t->streams, c);
    t->members++;
    bool behind = !c->exact || t->version != c->last_version; /* no version: it wants the state, or to hear there is none */
    c->held = t->sub != SUB_LIVE || behind;
    if (t->sub == SUB_LIVE && behind)
        want_resync(h, t);
    return true;
}

static void child_free(events_stream_t *c)
{
    buf_free(&c->out);
    stream_charge(c);
    child_charge(c, -1);
    pthread_mutex_destroy(&c->lock);
    free(c);
}

/* Follows game id on mux m too (hub lock held), unless it does already or
 * follows EVENTS_MUX_MAX games: an id added on another replica. */
static void mux_follow(events_t *h, events_stream_t *m, const char *id)
{
    if (m->child_count >= EVENTS_MUX_MAX || m->finished)
        return;
    for (unsigned i = 0; i < m->child_count; i++)
        if (!strcmp(m->children[i]->id, id))
            return;
    events_stream_t *c = calloc(1, sizeof *c);
    if (!c)
        return; /* read again at the next touch */
    pthread_mutex_init(&c->lock, NULL);
    buf_init(&c->out);
    c->format = m->format == EVENTS_SSE ? (events_format_t)FRAME_SSE_NO_ID : m->format;
    snprintf(c->id, sizeof c->id, "%s", id);
    c->parent = m;
    c->delayed = m->delayed;
    c->counted_first = true;
    child_charge(c, 1);
    if (!child_attach(h, c)) {
        child_free(c);
        return;
    }
    m->children[m->child_count++] = c;
}

/* Attaches a mux (hub lock held): its channel for added ids, then its games. */
static bool mux_attach(events_t *h, events_stream_t *m)
{
    char channel[STORE_CHANNEL_SIZE];
    store_stream_channel(m->id, channel);
    topic_t *t = topic_make(h, m->id, channel, 0);
    if (!t)
        return false;
    t->control = m;
    t->members++;
    m->control = t;
    unsigned attached = 0;
    while (attached < m->child_count && child_attach(h, m->children[attached]))
        attached++;
    if (attached < m->child_count) { /* out of memory: the rest are dropped */
        for (unsigned i = attached; i < m->child_count; i++)
            child_free(m->children[i]);
        m->child_count = attached;
    }
    DLIST_PUSH_AS(h->muxes, m, mux_prev, mux_next);
    return true;
}

/* Detaches a mux and frees its children (hub lock held); its id set is to be deleted. */
static void mux_detach(events_t *h, events_stream_t *m)
{
    for (unsigned i = 0; i < m->child_count; i++) {
        events_stream_t *c = m->children[i];
        if (c->topic) {
            DLIST_UNLINK(c->topic->streams, c);
            c->topic->members--;
            topic_maybe_remove(h, c->topic);
        }
        child_free(c);
    }
    m->child_count = 0;
    if (m->control) {
        topic_t *t = m->control;
        t->control = NULL;
        t->members--;
        topic_maybe_remove(h, t);
        m->control = NULL;
        DLIST_UNLINK_AS(h->muxes, m, mux_prev, mux_next);
        forget_t *f = h->forget_count < FORGETS_MAX ? calloc(1, sizeof *f) : NULL;
        if (f) { /* else its set expires by itself */
            memcpy(f->id, m->id, ID_SIZE);
            f->next = h->forgets;
            h->forgets = f;
            h->forget_count++;
            wake_hub(h);
        }
    }
}

/* --- presence (events_stream_set_player) --- */

/* A player's stream joins topic t (hub lock held): its player is marked
 * here at once, then every presence_mark_ms while a player's stream stays. */
static void presence_join(events_t *h, topic_t *t, const events_stream_t *s)
{
    if (!s->player || !h->cfg.presence_mark_ms)
        return;
    t->players[s->player - 1]++;
    t->presence_due_us = clock_now_us();
    topic_reschedule(h, t);
}

static void presence_leave(events_t *h, topic_t *t, const events_stream_t *s)
{
    if (!s->player || !t->players[s->player - 1])
        return;
    if (--t->players[s->player - 1] == 0 && !t->players[!(s->player - 1)]) {
        t->presence_due_us = 0;
        topic_reschedule(h, t);
    }
}

/* Wakes a suspended stream, whose connection then reads it (hub lock held). */
static void stream_wake(events_stream_t *s)
{
    pthread_mutex_lock(&s->lock);
    if (s->suspended) {
        s->suspended = false;
        s->conn.resume(s->conn.arg);
    }
    pthread_mutex_unlock(&s->lock);
}

/* The players of t's streams whose clients are still there, as a bit
 * mask (hub lock held). A stream whose client left is woken: its
 * connection finds that out and releases it now, not at a heartbeat, and
 * it marks no one meanwhile. */
static unsigned present_players(topic_t *t)
{
    unsigned players = 0;
    for (events_stream_t *s = t->streams; s; s = s->next) {
        if (!s->player || s->finished)
            continue;
        if (s->conn.gone && s->conn.gone(s->conn.arg))
            stream_wake(s);
        else
            players |= 1u << (s->player - 1);
    }
    return players;
}

/* Tells the streams of the players in `judged` what was judged for them
 * (t->gone, t->claim_at_us), unless their clients were told it already
 * (hub lock held). A held stream hears it at the next mark. */
static void tell_presence(topic_t *t, unsigned judged, uint64_t now)
{
    for (int c = 0; c < COLOR_COUNT; c++) {
        if (!(judged & (1u << c)))
            continue;
        char json[96];
        unsigned long long in_ms = t->claim_at_us[c] > now ? (t->claim_at_us[c] - now) / 1000 : 0;
        int n = t->gone[c] ? snprintf(json, sizeof json, "{\"type\":\"opponent_gone\",\"gone\":true,\"claim_in_ms\":%llu}",
                                      in_ms)
                           : snprintf(json, sizeof json, "{\"type\":\"opponent_gone\",\"gone\":false}");
        framed_t event;
        framed_init(&event, "opponent_gone", 0, json, (size_t)n);
        for (events_stream_t *s = t->streams; s; s = s->next) {
            if (s->player != c + 1 || s->finished || s->held)
                continue;
            /* A time to wait that moved is told again; one that has passed is not, whatever it was. */
            uint64_t told = s->told_claim_at_us, at = t->claim_at_us[c], slack = CLAIM_AT_SLACK_MS * 1000ull;
            bool moved = t->gone[c] && (at > told + slack || told > at + slack) && (at > now || told > now);
            if (t->gone[c] == s->told_gone && !moved)
                continue;
            stream_push_event(s, &event, false);
            s->told_gone = t->gone[c];
            s->told_claim_at_us = at;
        }
        framed_free(&event);
    }
}

/* --- attaching and releasing streams --- */

/* The buffer budget's close (membudget.h), from the hub thread under the
 * hub's lock and the budget's: s's bytes are dropped and its connection
 * closed, as a stalled stream's; the hub learns it at its next push. */
static void stream_shed(void *arg)
{
    events_stream_t *s = arg;
    pthread_mutex_lock(&s->lock);
    if (!s->failed) {
        s->failed = true;
        s->reason = EVENTS_CLOSE_BUDGET;
        buf_free(&s->out);
        s->sent = 0;
        stream_charge(s);
        s->conn.abort(s->conn.arg);
        if (s->suspended) {
            s->suspended = false;
            s->conn.resume(s->conn.arg);
        }
    }
    pthread_mutex_unlock(&s->lock);
}

events_status_t events_stream_attach(events_t *h, events_stream_t *s, const void *address, size_t length,
                                     const events_conn_t *conn)
{
    pthread_mutex_lock(&h->lock);
    topic_t *t = NULL;
    /* The budget again: admitted before its handler ran, a stream now holds
     * its first bytes (a mux, its games' structures), and many admitted at
     * once would pass the budget together before any is read. */
    bool over = membudget_over();
    if (h->draining || over
        || (s->mux ? !mux_attach(h, s) : !s->finished && !(t = topic_get(h, s->id, s->last_version)))) {
        events_status_t status = h->draining ? EVENTS_EDRAINING : over ? EVENTS_EBUDGET : EVENTS_ENOMEM;
        release_locked(h, address, length);
        pthread_mutex_unlock(&h->lock);
        return status;
    }
    s->hub = h;
    s->conn = *conn;
    if (!s->counted_first) {
        s->counted_first = true;
        hub_count(h, EVENTS_COUNTER_EVENT, 0, 1);
    }
    s->progress_us = clock_now_us();
    s->address_length = address_length(length);
    memcpy(s->address, address, s->address_length);
    if (s->out.length) /* its first event waits for its client */
        membudget_waiting(&s->reader);
    membudget_register(&s->reader, stream_shed, s);
    if (t) {
        s->topic = t;
        DLIST_PUSH(t->streams, s);
        t->members++;
        /* Until the topic is subscribed (its acknowledgement re-reads the
         * game) and has no news the stream lacks (it read the game before
         * news the topic has: re-read), its client reads nothing. */
        s->held = t->sub != SUB_LIVE || t->version > s->last_version;
        if (t->sub == SUB_LIVE && t->version > s->last_version)
            want_resync(h, t);
        presence_join(h, t, s);
    }
    pthread_mutex_unlock(&h->lock);
    return EVENTS_OK;
}

void events_stream_idle(events_stream_t *s)
{
    pthread_mutex_lock(&s->lock);
    bool idle = s->hub && !s->failed && !s->ended && s->reason == EVENTS_CLOSE_CLIENT;
    if (idle)
        s->reason = EVENTS_CLOSE_IDLE;
    pthread_mutex_unlock(&s->lock);
    if (idle)
        hub_count(s->hub, EVENTS_COUNTER_STALLED, 0, 1);
}

void events_stream_release(events_stream_t *s)
{
    if (!s)
        return;
    membudget_unregister(&s->reader); /* first: no shedding reaches it any more */
    events_t *h = s->hub;
    if (h) {
        pthread_mutex_lock(&h->lock);
        if (s->mux)
            mux_detach(h, s);
        topic_t *t = s->topic;
        if (t) {
            DLIST_UNLINK(t->streams, s);
            t->members--;
            presence_leave(h, t, s);
            topic_maybe_remove(h, t);
        }
        pthread_mutex_lock(&s->lock);
        events_close_t reason = s->reason;
        pthread_mutex_unlock(&s->lock);
        hub_count(h, EVENTS_COUNTER_CLOSED, (int)reason, 1);
        release_locked(h, s->address, s->address_length);
        pthread_mutex_unlock(&h->lock);
    }
    for (unsigned i = 0; i < s->child_count; i++) /* never attached: no topic */
        child_free(s->children[i]);
    if (s->children)
        membudget_add(&s->reader, -EVENTS_MUX_MAX * (ptrdiff_t)sizeof *s->children);
    free(s->children);
    buf_free(&s->out);
    stream_charge(s);
    pthread_mutex_destroy(&s->lock);
    free(s);
}

/* --- what the hub does to a topic's streams --- */

/* A topic knows the highest version it has seen; each stream the last
 * version its client has. A message one past a stream's version is sent as
 * it is; further past (a gap) the topic is re-read and the stream gets the
 * snapshot instead. The game is also re-read on every SUBSCRIBE
 * acknowledgement, a stream that joins behind the topic, a topic silent for
 * --resync-seconds, and a reconnection.
 *
 * A re-read is applied only once a PING round sent after it is answered
 * (settle_later), so every message published before the read has come
 * first, as a change event: a change the read saw, a fallen flag the read
 * itself recorded. Then every stream still behind the game as read gets it,
 * so the snapshot goes only to a stream that really missed one.
 *
 * A new stream is held (its client reads nothing) until its topic is
 * subscribed and has no news it lacks. A later snapshot that comes while it
 * is held replaces its first one (stream_unhold), so a client never gets a
 * snapshot for a change made after its first event: every later change
 * comes as a change event. */

/* Whether length bytes of text hold word. */
static bool holds(const char *text, size_t length, const char *word)
{
    size_t n = strlen(word);
    for (size_t i = 0; i + n <= length; i++)
        if (!memcmp(text + i, word, n))
            return true;
    return false;
}

/* News beside the game's changes (a review's progress: api/game/reviews.h),
 * hub lock held: it names the game's version but makes none, arms no flag,
 * and goes only to the streams following the game live now (a held,
 * delayed or finished stream misses it; GET of the review has it all).
 * A stream following the review ends with its last event. */
static void deliver_beside(topic_t *t, const game_event_meta_t *meta, const char *json, size_t length)
{
    framed_t event;
    framed_init(&event, meta->type, meta->version, json, length);
    /* The review's last event: done or failed (review_event_format's JSON). */
    bool last = !strcmp(meta->type, "review")
                && (holds(json, length, "\"status\":\"done\"") || holds(json, length, "\"status\":\"failed\""));
    uint64_t now = clock_now_us();
    for (events_stream_t *s = t->streams; s; s = s->next) {
        if (!s->finished && !s->delayed && !s->held)
            stream_push_event(s, &event, s->review && last);
        if (s->review)
            s->review_heard_us = now;
    }
    framed_free(&event);
}

/* A published message (hub lock held). */
static void deliver(events_t *h, topic_t *t, const game_event_meta_t *meta, const char *json, size_t length)
{
    uint64_t now = clock_now_us();
    topic_heard(h, t, now);
    if (!strcmp(meta->type, "review")) {
        deliver_beside(t, meta, json, length);
        return;
    }
    arm_flag(h, t, meta, now);
    if (meta->version > t->version)
        t->version = meta->version;
    framed_t event;
    framed_init(&event, meta->type, meta->version, json, length);
    for (events_stream_t *s = t->streams; s; s = s->next) {
        if (s->finished || s->review) /* a review's stream has the finished game: no change follows */
            continue;
        if (s->delayed) {
            want_resync(h, t); /* its view is made from the game as read, never from a change */
            continue;
        }
        if (meta->version <= s->last_version) {
            if (s->exact)
                want_resync(h, t); /* a client's version that may not be the game's: read it */
            continue;
        }
        if (meta->version != s->last_version + 1) {
            want_resync(h, t); /* it missed one: a snapshot instead */
            continue;
        }
        stream_push_event(s, &event, meta->ended);
        s->last_version = meta->version;
        s->exact = false;
        if (s->held && t->sub == SUB_LIVE) /* a message comes only on a live subscription, and follows what it has */
            stream_unhold(s, false);
    }
    framed_free(&event);
    wake_waiters(h, t, meta->version);
}

/* A delayed stream s and the game as read (hub lock held): the view when
 * it shows something new, queued as a snapshot. False when s follows the
 * game live from now on (it is over, or has no delay). */
static bool apply_view(events_t *h, topic_t *t, events_stream_t *s, const game_event_meta_t *meta,
                       framed_t *view_event, const game_svc_view_t *view)
{
    if (view->live) {
        s->delayed = false; /* its exact version, if any, is judged as any stream's */
        return false;
    }
    bool held = s->held;
    if (!view_event) {
        want_resync(h, t); /* read before the stream wanted a view: read again */
    } else if (s->view_sig != view->sig) {
        if (held)
            stream_unhold(s, true);
        stream_push_event(s, view_event, false);
        s->view_sig = view->sig;
        hub_count(h, EVENTS_COUNTER_RESYNC, 0, 1);
    }
    s->last_version = meta->version;
    s->exact = false;
    if (held && t->sub == SUB_LIVE)
        stream_unhold(s, false);
    return true;
}

/* The game as read (hub lock held): every stream behind it gets it, each
 * delayed one the view (view_json; NULL: not read). */
static void apply_snapshot(events_t *h, topic_t *t, const game_event_meta_t *meta, const buf_t *json,
                           const buf_t *view_json, const game_svc_view_t *view)
{
    uint64_t now = clock_now_us();
    topic_heard(h, t, now);
    arm_flag(h, t, meta, now);
    if (meta->version > t->version)
        t->version = meta->version;
    framed_t event, view_event;
    framed_init(&event, "game", meta->version, json->data, json->length);
    if (view_json)
        framed_init(&view_event, "game", meta->version, view_json->data, view_json->length);
    for (events_stream_t *s = t->streams; s; s = s->next) {
        if (s->finished)
            continue;
        if (s->delayed && apply_view(h, t, s, meta, view_json ? &view_event : NULL, view))
            continue;
        bool held = s->held;
        if (s->last_version < meta->version || (s->exact && s->last_version != meta->version)) {
            if (held)
                stream_unhold(s, true); /* its client has seen nothing: this snapshot instead of its first */
            stream_push_event(s, &event, meta->ended && !s->review);
            s->last_version = meta->version;
            s->exact = false;
            hub_count(h, EVENTS_COUNTER_RESYNC, 0, 1);
        } else if (meta->ended && !s->review) {
            stream_push(s, "", 0, true); /* it has the last version; nothing more will come */
        }
        s->exact = false;
        if (held && t->sub == SUB_LIVE)
            stream_unhold(s, false);
    }
    framed_free(&event);
    if (view_json)
        framed_free(&view_event);
    wake_waiters(h, t, meta->version);
}

/* Keeps t's game as re-read, *json taken (left empty), to be applied
 * behind the next PING round (hub lock held): by then every message
 * published before the read has been delivered. A topic queued already
 * keeps its place and waits for the later round with the later read. */
static void settle_later(events_t *h, topic_t *t, const game_event_meta_t *meta, buf_t *json, buf_t *view_json,
                         const game_svc_view_t *view)
{
    buf_free(&t->settle_json);
    t->settle_json = *json;
    buf_init(json);
    buf_free(&t->settle_view_json);
    t->settle_view_json = *view_json;
    buf_init(view_json);
    t->settle_view = *view;
    t->settle_meta = *meta;
    t->settle_round = h->rounds_sent + 1;
    queue_push(&h->settles, t);
}

/* Applies the re-reads whose PING round has been answered (hub lock held). */
static void apply_settled(events_t *h)
{
    for (topic_t *t; (t = h->settles.head) && t->settle_round <= h->rounds_answered;) {
        queue_pop(&h->settles);
        if (!t->removed)
            apply_snapshot(h, t, &t->settle_meta, &t->settle_json,
                           t->settle_view_json.length ? &t->settle_view_json : NULL, &t->settle_view);
        buf_free(&t->settle_json);
        buf_free(&t->settle_view_json);
        topic_unref(t);
    }
}

/* The game is gone (expired, or Redis lost it) or damaged: its streams end, its waiters answer. */
static void end_topic(events_t *h, topic_t *t)
{
    char json[64];
    int n = snprintf(json, sizeof json, "{\"type\":\"not_found\",\"id\":\"%s\"}", t->id);
    framed_t event;
    framed_init(&event, "not_found", 0, json, (size_t)n);
    for (events_stream_t *s = t->streams; s; s = s->next) {
        if (s->parent && !s->finished) /* a mux goes on: it is told, once, that the game is not there */
            stream_push_event(s, &event, true);
        else
            stream_push(s, "", 0, true);
    }
    framed_free(&event);
    wake_waiters(h, t, UINT64_MAX);
}

/* Answers the topic's waiters whose client has left (hub lock held): a long
 * poll sends nothing while it waits, so without this a client that went
 * would keep its place (and its address's) until its wait ran out. */
static void wake_gone_waiters(events_t *h, topic_t *t)
{
    t->refs++; /* the last waiter may take the topic with it */
    for (waiter_t *w = t->waiters, *next; w; w = next) {
        next = w->next;
        if (w->conn.gone && w->conn.gone(w->conn.arg))
            waiter_wake(h, w);
    }
    topic_unref(t);
}

static void send_heartbeats(events_t *h)
{
    static const char *const beats[EVENTS_FORMAT_COUNT] = { [EVENTS_NDJSON] = "\n",
                                                            [EVENTS_SSE] = ": heartbeat\n\n" };
    for (size_t b = 0; b < h->bucket_count; b++) {
        for (topic_t *t = h->buckets[b], *next; t; t = next) {
            next = t->hash_next; /* t may leave the map with its last waiter */
            for (events_stream_t *s = t->streams; s; s = s->next)
                if (!s->held && !s->parent) /* a held stream is released within a round trip to Redis, or ends */
                    stream_push(s, beats[s->format], strlen(beats[s->format]), false);
            wake_gone_waiters(h, t);
        }
    }
    for (events_stream_t *m = h->muxes; m; m = m->mux_next)
        stream_push(m, beats[m->format], strlen(beats[m->format]), false);
}

/* Whether s made progress since the last look (hub lock held): with the
 * kernel's word, the client's side acknowledged bytes; without it, the
 * connection read some. Nothing waiting (or a held stream, whose client is
 * not let read yet) counts as progress. Heartbeats are bytes that wait like
 * any other, so a client that takes none stalls through them. */
static bool stream_progressed(events_stream_t *s)
{
    pthread_mutex_lock(&s->lock);
    size_t queued = s->out.length - s->sent;
    uint64_t taken = s->taken;
    bool held = s->held;
    pthread_mutex_unlock(&s->lock);
    size_t unsent = 0;
    uint64_t acked = 0;
    bool known = s->conn.kernel && s->conn.kernel(s->conn.arg, &unsent, &acked);
    bool progressed = held || (queued == 0 && unsent == 0) || (known ? acked != s->acked_seen : taken != s->taken_seen);
    s->acked_seen = acked;
    s->taken_seen = taken;
    return progressed;
}

/* Closes every stream whose client has taken none of its bytes for the
 * stall time (hub lock held). */
static void check_stall(events_t *h, events_stream_t *s, uint64_t now)
{
    if (s->finished || s->parent)
        return;
    if (s->review && now - s->review_heard_us >= REVIEW_QUIET_US) {
        stream_push(s, "", 0, true);
        return;
    }
    if (stream_progressed(s)) {
        s->progress_us = now;
    } else if (now - s->progress_us >= (uint64_t)h->cfg.stall_seconds * 1000000u) {
        pthread_mutex_lock(&s->lock);
        stream_fail(s, EVENTS_CLOSE_STALLED);
        if (s->suspended) {
            s->suspended = false;
            s->conn.resume(s->conn.arg);
        }
        pthread_mutex_unlock(&s->lock);
        hub_count(h, EVENTS_COUNTER_STALLED, 0, 1);
    }
}

static void check_stalls(events_t *h, uint64_t now)
{
    for (size_t b = 0; b < h->bucket_count; b++)
        for (topic_t *t = h->buckets[b]; t; t = t->hash_next)
            for (events_stream_t *s = t->streams; s; s = s->next)
                check_stall(h, s, now);
    for (events_stream_t *m = h->muxes; m; m = m->mux_next)
        check_stall(h, m, now);
}

/* How long apart check_stalls runs. */
static uint64_t stall_look_us(const events_t *h)
{
    uint64_t us = (uint64_t)h->cfg.stall_seconds * 1000000u / 8;
    return us < STALL_LOOK_MIN_US ? STALL_LOOK_MIN_US : us > STALL_LOOK_MAX_US ? STALL_LOOK_MAX_US : us;
}

/* Why s will close, unless that is known already. */
static void set_reason(events_stream_t *s, events_close_t reason)
{
    pthread_mutex_lock(&s->lock);
    if (s->reason == EVENTS_CLOSE_CLIENT)
        s->reason = reason;
    pthread_mutex_unlock(&s->lock);
}

void events_drain(events_t *h)
{
    static const char closing[] = "{\"type\":\"closing\",\"reason\":\"shutdown\"}";
    framed_t event;
    framed_init(&event, "closing", 0, closing, sizeof closing - 1);
    pthread_mutex_lock(&h->lock);
    h->draining = true;
    for (size_t b = 0; b < h->bucket_count; b++) {
        for (topic_t *t = h->buckets[b], *next; t; t = next) {
            next = t->hash_next;
            for (events_stream_t *s = t->streams; s; s = s->next)
                if (!s->finished && !s->parent) {
                    set_reason(s, EVENTS_CLOSE_SHUTDOWN);
                    stream_push_event(s, &event, true);
                }
            wake_waiters(h, t, UINT64_MAX);
        }
    }
    for (events_stream_t *m = h->muxes; m; m = m->mux_next)
        if (!m->finished) {
            set_reason(m, EVENTS_CLOSE_SHUTDOWN);
            stream_push_event(m, &event, true);
        }
    pthread_mutex_unlock(&h->lock);
    framed_free(&event);
}

/* --- the Pub/Sub connection (hub thread) --- */

/* Queues the next PING round; false when the connection is lost. */
static bool ping_round(events_t *h)
{
    if (store_subscriber_ping(h->sub) != STORE_OK)
        return false;
    h->rounds_sent++;
    return true;
}

static void on_reply(void *ctx, const store_sub_reply_t *reply)
{
    events_t *h = ctx;
    if (reply->kind == STORE_SUB_PONG) {
        h->rounds_answered = reply->round;
        apply_settled(h);
        return;
    }
    topic_t *t = topic_find(h, reply->channel, reply->channel_length);
    if (!t)
        return; /* a game no one here follows any more */
    if (t->control) { /* a mux's ids: read them when subscribed and whenever some are added */
        if (reply->kind == STORE_SUB_SUBSCRIBED && t->sub != SUB_WANTED)
            t->sub = SUB_LIVE;
        if (t->sub == SUB_LIVE)
            want_resync(h, t);
        return;
    }
    if (reply->kind == STORE_SUB_SUBSCRIBED) {
        /* From now on every message comes; what came before is read. (An
         * acknowledgement for a topic not sent yet is an earlier topic's of
         * the same game, which its UNSUBSCRIBE will undo.) */
        if (t->sub == SUB_WANTED)
            return;
        t->sub = SUB_LIVE;
        want_resync(h, t);
    } else if (reply->kind == STORE_SUB_MESSAGE) {
        game_event_meta_t meta;
        const char *json;
        size_t length;
        if (game_event_parse(reply->payload, reply->payload_length, &meta, &json, &length))
            deliver(h, t, &meta, json, length);
    }
}

/* The connection is gone: everything is subscribed again on the next one,
 * and every topic read again once it is. */
static void lose_connection(events_t *h, uint64_t now)
{
    store_subscriber_close(h->sub);
    h->sub = NULL;
    h->reconnect_due_us = now + (uint64_t)h->backoff_ms * 1000u;
    h->backoff_ms = h->backoff_ms * 2 < BACKOFF_MAX_MS ? h->backoff_ms * 2 : BACKOFF_MAX_MS;
    for (unsubscribe_t *u = h->unsubscribes, *next; u; u = next) {
        next = u->next;
        free(u);
    }
    h->unsubscribes = NULL;
    /* Re-reads waiting for the connection's PING round: every topic is read
     * again once it is subscribed again. */
    for (topic_t *t; (t = queue_pop(&h->settles));) {
        buf_free(&t->settle_json);
        buf_free(&t->settle_view_json);
        topic_unref(t);
    }
    for (size_t b = 0; b < h->bucket_count; b++) {
        for (topic_t *t = h->buckets[b]; t; t = t->hash_next) {
            t->sub = SUB_WANTED;
            queue_push(&h->subscribes, t);
        }
    }
}

/* Connects (hub lock dropped meanwhile); true when connected. */
static bool connect_subscriber(events_t *h)
{
    pthread_mutex_unlock(&h->lock);
    char err[256];
    store_subscriber_t *sub = store_subscriber_open(h->cfg.store, err, sizeof err);
    pthread_mutex_lock(&h->lock);
    uint64_t now = clock_now_us();
    if (!sub) {
        h->reconnect_due_us = now + (uint64_t)h->backoff_ms * 1000u;
        h->backoff_ms = h->backoff_ms * 2 < BACKOFF_MAX_MS ? h->backoff_ms * 2 : BACKOFF_MAX_MS;
        return false;
    }
    h->sub = sub;
    if (h->ever_connected)
        hub_count(h, EVENTS_COUNTER_PUBSUB_RECONNECT, 0, 1);
    h->ever_connected = true;
    h->backoff_ms = BACKOFF_FIRST_MS;
    h->ping_due_us = now + PING_US;
    h->rounds_sent = h->rounds_answered = h->keepalive_round = 0;
    return true;
}

/* Queues what changed (UNSUBSCRIBE first, so a game left and followed again
 * ends subscribed), a PING when due, and writes what the socket takes. */
static void send_commands(events_t *h, uint64_t now)
{
    bool ok = true;
    for (unsubscribe_t *u = h->unsubscribes, *next; u; u = next) {
        next = u->next;
        ok = ok && store_subscriber_unsubscribe(h->sub, u->channel) == STORE_OK;
        free(u);
    }
    h->unsubscribes = NULL;
    for (topic_t *t; (t = queue_pop(&h->subscribes));) {
        if (!t->removed && t->sub == SUB_WANTED) {
            ok = ok && store_subscriber_subscribe(h->sub, t->channel) == STORE_OK;
            t->sub = SUB_SENT;
        }
        topic_unref(t);
    }
    if (now >= h->ping_due_us) {
        if (h->rounds_answered < h->keepalive_round) {
            ok = false; /* Redis stopped answering */
        } else if (ok && ping_round(h)) {
            h->keepalive_round = h->rounds_sent;
        } else {
            ok = false;
        }
        h->ping_due_us = now + PING_US;
    }
    if (!ok || store_subscriber_flush(h->sub) != STORE_OK)
        lose_connection(h, now);
}

/* --- timers and Redis reads (hub thread) --- */

static void fire_timers(events_t *h, uint64_t now)
{
    if (now >= h->heartbeat_due_us) {
        send_heartbeats(h);
        h->heartbeat_due_us = now + (uint64_t)h->cfg.heartbeat_seconds * 1000000u;
    }
    if (now >= h->stall_look_due_us) {
        check_stalls(h, now);
        h->stall_look_due_us = now + stall_look_us(h);
    }
    for (timers_entry_t *e; (e = timers_first(&h->timers)) && e->when_us <= now;) {
        hub_timer_t *timer = (hub_timer_t *)e;
        if (timer->kind == TIMER_WAITER) {
            waiter_wake(h, (waiter_t *)timer);
            continue;
        }
        topic_t *t = (topic_t *)timer;
        if (t->flag_due_us && t->flag_due_us <= now) {
            t->flag_due_us = 0;
            if (!t->in_flag_queue)
                queue_push(&h->flags, t);
        }
        if (t->check_due_us <= now) {
            t->check_due_us = now + h->silent_us;
            want_resync(h, t);
        }
        if (t->presence_due_us && t->presence_due_us <= now) {
            t->presence_due_us = 0;
            queue_push(&h->presences, t);
        }
        topic_reschedule(h, t);
    }
}

/* The next topic in q still followed here, its id copied into id (hub
 * lock held), or NULL; the caller drops the queue's reference to it. */
static topic_t *next_followed(topic_queue_t *q, char id[ID_SIZE])
{
    topic_t *t;
    while ((t = queue_pop(q)) && t->removed)
        topic_unref(t);
    if (t)
        memcpy(id, t->id, ID_SIZE);
    return t;
}

/* A mux's ids (hub lock held, dropped for Redis): every one it does not
 * follow yet is followed; a set gone (expired while Redis was away, or
 * lost) is made again from what the mux follows. */
static void read_ids(events_t *h, topic_t *t, const char id[ID_SIZE])
{
    pthread_mutex_unlock(&h->lock);
    unsigned count = 0;
    store_status_t status = store_stream_ids_read(h->cfg.store, id, EVENTS_MUX_IDS_TTL, h->ids, EVENTS_MUX_MAX, &count);
    pthread_mutex_lock(&h->lock);
    events_stream_t *m = t->control;
    if (!m || t->removed)
        return;
    if (status == STORE_ENOT_FOUND) {
        const char *ids[EVENTS_MUX_MAX];
        count = m->child_count;
        for (unsigned i = 0; i < count; i++) {
            memcpy(h->ids[i], m->children[i]->id, ID_SIZE);
            ids[i] = h->ids[i];
        }
        pthread_mutex_unlock(&h->lock);
        status = store_stream_ids_put(h->cfg.store, id, ids, count, EVENTS_MUX_IDS_TTL);
        pthread_mutex_lock(&h->lock);
        count = 0;
        if (!t->control || t->removed)
            return;
    }
    if (status == STORE_OK) {
        for (unsigned i = 0; i < count; i++)
            mux_follow(h, t->control, h->ids[i]);
        topic_heard(h, t, clock_now_us());
    } else {
        t->check_due_us = clock_now_us() + RESYNC_RETRY_US;
        topic_reschedule(h, t);
    }
}

/* Deletes the id sets of closed muxes, a few a round (hub lock held, dropped for Redis). */
static void run_forgets(events_t *h)
{
    for (int i = 0; i < FORGETS_PER_ROUND && h->forgets && h->sub; i++) {
        forget_t *f = h->forgets;
        h->forgets = f->next;
        h->forget_count--;
        pthread_mutex_unlock(&h->lock);
        store_stream_ids_drop(h->cfg.store, f->id);
        free(f);
        pthread_mutex_lock(&h->lock);
    }
}

/* Reads up to RESYNCS_PER_ROUND queued games, then queues the PING round
 * they are applied behind (settle_later). */
static void run_resyncs(events_t *h)
{
    bool settling = false;
    for (int i = 0; i < RESYNCS_PER_ROUND && h->sub; i++) {
        char id[ID_SIZE];
        topic_t *t = next_followed(&h->resyncs, id);
        if (!t)
            break;
        if (t->control) {
            read_ids(h, t, id);
            topic_unref(t);
            continue;
        }
        bool views = false; /* a delayed stream follows it: its view is read too */
        for (events_stream_t *s = t->streams; s && !views; s = s->next)
            views = s->delayed && !s->finished;
        pthread_mutex_unlock(&h->lock);
        buf_t json, view_json;
        buf_init(&json);
        buf_init(&view_json);
        game_event_meta_t meta;
        game_svc_view_t view;
        const game_svc_config_t *games = &h->cfg.games;
        game_svc_status_t status = game_svc_snapshot_views(games, id, &json, views ? &view_json : NULL, &meta, &view);
        pthread_mutex_lock(&h->lock);
        if (!t->removed) {
            if (status == GAME_SVC_OK && !buf_failed(&json) && !buf_failed(&view_json)) {
                settle_later(h, t, &meta, &json, &view_json, &view);
                settling = true;
            } else if (status == GAME_SVC_ENOT_FOUND || status == GAME_SVC_EDAMAGED) {
                end_topic(h, t); /* gone, or damaged for good (410): no read will bring it back */
            } else {
                t->check_due_us = clock_now_us() + RESYNC_RETRY_US;
                topic_reschedule(h, t);
            }
        }
        topic_unref(t);
        buf_free(&json);
        buf_free(&view_json);
    }
    if (settling && !(ping_round(h) && store_subscriber_flush(h->sub) == STORE_OK))
        lose_connection(h, clock_now_us());
}

/* Checks up to FLAG_CHECKS_PER_ROUND flags whose deadline came. */
static void run_flag_checks(events_t *h)
{
    for (int i = 0; i < FLAG_CHECKS_PER_ROUND; i++) {
        char id[ID_SIZE];
        topic_t *t = next_followed(&h->flags, id);
        if (!t)
            return;
        pthread_mutex_unlock(&h->lock);
        game_event_meta_t meta;
        const game_svc_config_t *games = &h->cfg.games;
        game_svc_status_t status = game_svc_check_flag(games, id, &meta);
        hub_count(h, EVENTS_COUNTER_FLAG_CHECK, 0, 1);
        pthread_mutex_lock(&h->lock);
        uint64_t now = clock_now_us();
        if (status == GAME_SVC_OK) {
            t->flag_version = 0; /* the check's answer is the game as of now */
            arm_flag(h, t, &meta, now);
        } else if (status != GAME_SVC_ENOT_FOUND && status != GAME_SVC_EDAMAGED && !t->removed) {
            /* unavailable: try again */
            t->flag_due_us = now + FLAG_RETRY_US;
            topic_reschedule(h, t);
        }
        topic_unref(t);
    }
}

/* Marks the players of up to PRESENCE_READS_PER_ROUND games' streams here
 * and tells their streams what was judged of their opponents (hub lock
 * held, dropped for Redis): one read a game, whichever players it has. */
static void run_presences(events_t *h)
{
    uint64_t mark_us = (uint64_t)h->cfg.presence_mark_ms * 1000u;
    for (int i = 0; i < PRESENCE_READS_PER_ROUND; i++) {
        char id[ID_SIZE];
        topic_t *t = next_followed(&h->presences, id);
        if (!t)
            return;
        unsigned players = present_players(t);
        game_svc_presence_t judged;
        game_svc_status_t status = GAME_SVC_OK;
        if (players) {
            pthread_mutex_unlock(&h->lock);
            status = game_svc_presence(&h->cfg.games, id, players, &judged);
            hub_count(h, EVENTS_COUNTER_PRESENCE_READ, 0, 1);
            pthread_mutex_lock(&h->lock);
        }
        uint64_t now = clock_now_us();
        if (!t->removed && players && status == GAME_SVC_OK) {
            for (int c = 0; c < COLOR_COUNT; c++) {
                t->gone[c] = judged.gone[c];
                t->claim_at_us[c] = now + (uint64_t)judged.claim_in_ms[c] * 1000u;
            }
            tell_presence(t, players, now);
        }
        /* The next mark, unless a stream that joined meanwhile asked for one sooner. */
        bool gone_for_good = status == GAME_SVC_ENOT_FOUND || status == GAME_SVC_EDAMAGED;
        if (!t->removed && !gone_for_good && (t->players[WHITE] || t->players[BLACK])
            && (!t->presence_due_us || t->presence_due_us > now + mark_us)) {
            t->presence_due_us = now + mark_us;
            topic_reschedule(h, t);
        }
        topic_unref(t);
    }
}

/* How long poll may wait: until the next timer, heartbeat, look for stalls, ping or reconnection. */
static int poll_timeout_ms(events_t *h, uint64_t now)
{
    if (h->resyncs.head && h->sub)
        return 0;
    if (h->flags.head || h->presences.head || (h->forgets && h->sub))
        return 0;
    uint64_t due = h->heartbeat_due_us;
    if (h->stall_look_due_us < due)
        due = h->stall_look_due_us;
    timers_entry_t *first = timers_first(&h->timers);
    if (first && first->when_us < due)
        due = first->when_us;
    if (h->sub && h->ping_due_us < due)
        due = h->ping_due_us;
    if (!h->sub && h->reconnect_due_us < due)
        due = h->reconnect_due_us;
    uint64_t trim_due = membudget_trim_due_us();
    if (trim_due && trim_due < due)
        due = trim_due;
    if (due <= now)
        return 0;
    uint64_t ms = (due - now + 999) / 1000;
    return ms > 60000 ? 60000 : (int)ms;
}

static void *hub_main(void *arg)
{
    events_t *h = arg;
    pthread_mutex_lock(&h->lock);
    while (!h->stopping) {
        uint64_t now = clock_now_us();
        if (!h->sub && now >= h->reconnect_due_us && !connect_subscriber(h))
            continue;
        if (h->sub)
            send_commands(h, now);
        fire_timers(h, now);
        if (membudget_over())
            membudget_shed(); /* the readers that hold the most the longest, past the budget */
        run_flag_checks(h);
        run_presences(h);
        run_resyncs(h);
        run_forgets(h);
        now = clock_now_us();
        struct pollfd fds[2] = { { .fd = h->wake_fd, .events = POLLIN } };
        int nfds = 1;
        if (h->sub) {
            fds[1].fd = store_subscriber_fd(h->sub);
            fds[1].events = POLLIN | (store_subscriber_wants_write(h->sub) ? POLLOUT : 0);
            nfds = 2;
        }
        int timeout = poll_timeout_ms(h, now);
        pthread_mutex_unlock(&h->lock);
        /* Buffers of size freed (readers gone) go back to the system: glibc
         * keeps them, free but fragmented among live allocations, else. */
        membudget_trim();
        int ready = poll(fds, (nfds_t)nfds, timeout);
        pthread_mutex_lock(&h->lock);
        if (ready <= 0)
            continue;
        if (fds[0].revents & POLLIN) {
            uint64_t count;
            (void)!read(h->wake_fd, &count, sizeof count);
        }
        if (nfds == 2 && h->sub && fds[1].revents) {
            store_status_t status = STORE_OK;
            if (fds[1].revents & (POLLIN | POLLHUP | POLLERR))
                status = store_subscriber_read(h->sub, on_reply, h);
            if (status == STORE_OK && (fds[1].revents & POLLOUT))
                status = store_subscriber_flush(h->sub);
            if (status != STORE_OK)
                lose_connection(h, clock_now_us());
        }
    }
    pthread_mutex_unlock(&h->lock);
    return NULL;
}

/* --- the hub's life --- */

events_t *events_start(const events_config_t *cfg, char *err, size_t err_size)
{
    events_t *h = calloc(1, sizeof *h);
    if (!h) {
        snprintf(err, err_size, "out of memory");
        return NULL;
    }
    h->cfg = *cfg;
    h->ids = calloc(EVENTS_MUX_MAX, sizeof *h->ids);
    if (!h->ids) {
        snprintf(err, err_size, "out of memory");
        free(h);
        return NULL;
    }
    if (!h->cfg.heartbeat_seconds)
        h->cfg.heartbeat_seconds = 10;
    if (!h->cfg.stall_seconds)
        h->cfg.stall_seconds = 30;
    h->silent_us = (uint64_t)(h->cfg.resync_seconds ? h->cfg.resync_seconds : 30) * 1000000u;
    h->backoff_ms = BACKOFF_FIRST_MS;
    h->heartbeat_due_us = clock_now_us() + (uint64_t)h->cfg.heartbeat_seconds * 1000000u;
    h->stall_look_due_us = clock_now_us() + stall_look_us(h);
    timers_init(&h->timers);
    queue_init(&h->subscribes, offsetof(topic_t, subscribe_next), offsetof(topic_t, in_subscribe_queue));
    queue_init(&h->resyncs, offsetof(topic_t, resync_next), offsetof(topic_t, in_resync_queue));
    queue_init(&h->flags, offsetof(topic_t, flag_next), offsetof(topic_t, in_flag_queue));
    queue_init(&h->settles, offsetof(topic_t, settle_next), offsetof(topic_t, in_settle_queue));
    queue_init(&h->presences, offsetof(topic_t, presence_next), offsetof(topic_t, in_presence_queue));
    pthread_mutex_init(&h->lock, NULL);
    h->wake_fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
    if (h->wake_fd < 0 || pthread_create(&h->thread, NULL, hub_main, h)) {
        snprintf(err, err_size, "cannot start the event hub: %s", strerror(errno));
        if (h->wake_fd >= 0)
            close(h->wake_fd);
        pthread_mutex_destroy(&h->lock);
        free(h->ids);
        free(h);
        return NULL;
    }
    membudget_on_over(wake_hub_over, h);
    return h;
}

static void free_queue(topic_queue_t *q)
{
    for (topic_t *t; (t = queue_pop(q));)
        topic_unref(t);
}

void events_stop(events_t *h)
{
    if (!h)
        return;
    pthread_mutex_lock(&h->lock);
    h->stopping = true;
    pthread_mutex_unlock(&h->lock);
    wake_hub(h);
    pthread_join(h->thread, NULL);
    membudget_on_over(NULL, NULL);
    store_subscriber_close(h->sub);
    free_queue(&h->subscribes);
    free_queue(&h->resyncs);
    free_queue(&h->flags);
    free_queue(&h->settles);
    free_queue(&h->presences);
    /* Nothing should be left: every connection has gone. What is, is cut
     * loose so that a late release frees only itself. */
    for (size_t b = 0; b < h->bucket_count; b++) {
        for (topic_t *t = h->buckets[b], *next; t; t = next) {
            next = t->hash_next;
            for (events_stream_t *s = t->streams; s; s = s->next) {
                s->hub = NULL;
                s->topic = NULL;
            }
            if (t->control)
                t->control->control = NULL;
            for (waiter_t *w = t->waiters, *wn; w; w = wn) {
                wn = w->next;
                free(w);
            }
            buf_free(&t->settle_json);
            buf_free(&t->settle_view_json);
            free(t);
        }
    }
    for (unsubscribe_t *u = h->unsubscribes, *next; u; u = next) {
        next = u->next;
        free(u);
    }
    for (events_stream_t *m = h->muxes; m; m = m->mux_next)
        m->hub = NULL; /* its children, cut loose above, are freed with it */
    for (forget_t *f = h->forgets, *next; f; f = next) {
        next = f->next;
        free(f);
    }
    free(h->ids);
    for (size_t i = 0; i < ADDRESS_BUCKETS; i++) {
        for (address_count_t *a = h->addresses[i], *next; a; a = next) {
            next = a->next;
            free(a);
        }
    }
    free(h->buckets);
    timers_free(&h->timers);
    close(h->wake_fd);
    pthread_mutex_destroy(&h->lock);
    free(h);
}
