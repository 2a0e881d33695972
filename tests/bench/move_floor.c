/* move_floor: the CPU a move costs a server that does nothing but a move's
 * I/O, the floor under chessd's CPU per move in tests/bench/game_bench.sh.
 * It answers each HTTP request once one write to Redis is done, with no
 * parsing, log or allocation besides, and waits in one of three ways (loop,
 * threads, handoff: see their sections). Its CPU per request is what
 * the I/O alone costs on this machine; main says how it is run. */
#define _GNU_SOURCE
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <unistd.h>

#define MAX_CONNS 1024
#define REQUEST_MAX 16384

static const char script[] = "redis.call('SET', KEYS[1], ARGV[1]) return 1";
static char command[512];
static size_t command_length;
static char *answer;
static size_t answer_length;
static int redis_port;

static void die(const char *what)
{
    perror(what);
    exit(1);
}

static int connect_redis(void)
{
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons((uint16_t)redis_port),
                             .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
    if (fd < 0 || connect(fd, (struct sockaddr *)&a, sizeof a) < 0)
        die("connect to redis");
    int one = 1;
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    return fd;
}

/* Blocking: one command, then its reply until it ends in \r\n and has at
 * least `least` bytes. */
static size_t redis_call(int fd, const char *cmd, size_t length, char *reply, size_t size, size_t least)
{
    if (write(fd, cmd, length) != (ssize_t)length)
        die("write to redis");
    size_t have = 0;
    while (have < least || have < 2 || memcmp(reply + have - 2, "\r\n", 2)) {
        ssize_t n = read(fd, reply + have, size - 1 - have);
        if (n <= 0)
            die("read from redis");
        have += (size_t)n;
    }
    reply[have] = 0;
    return have;
}

/* Loads the script, builds the EVALSHA command and the answer. */
static void prepare(size_t body_bytes)
{
    char load[256], reply[256], sha[41];
    int n = snprintf(load, sizeof load, "*3\r\n$6\r\nSCRIPT\r\n$4\r\nLOAD\r\n$%zu\r\n%s\r\n", strlen(script), script);
    int fd = connect_redis();
    /* "$40\r\n", the sha1, "\r\n" */
    if (redis_call(fd, load, (size_t)n, reply, sizeof reply, 47) != 47 || strncmp(reply, "$40\r\n", 5))
        fprintf(stderr, "move_floor: SCRIPT LOAD answered %s", reply), exit(1);
    close(fd);
    memcpy(sha, reply + 5, 40);
    sha[40] = 0;
    command_length = (size_t)snprintf(command, sizeof command,
                                      "*5\r\n$7\r\nEVALSHA\r\n$40\r\n%s\r\n$1\r\n1\r\n$16\r\nchessd:floor:key\r\n$32\r\n"
                                      "0123456789abcdef0123456789abcdef\r\n",
                                      sha);
    char head[256];
    int h = snprintf(head, sizeof head,
                     "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: %zu\r\n\r\n", body_bytes);
    answer_length = (size_t)h + body_bytes;
    answer = malloc(answer_length);
    if (!answer)
        die("malloc");
    memcpy(answer, head, (size_t)h);
    memset(answer + h, 'x', body_bytes);
    answer[h] = '{';
    answer[answer_length - 1] = '}';
}

/* Bytes of the first whole request in buf[0..have), or 0 if not yet whole. */
static size_t request_length(const char *buf, size_t have)
{
    const char *end = memmem(buf, have, "\r\n\r\n", 4);
    if (!end)
        return 0;
    size_t head = (size_t)(end - buf) + 4, body = 0;
    for (const char *line = buf; line < end;) {
        if (!strncasecmp(line, "content-length:", 15))
            body = strtoul(line + 15, NULL, 10);
        const char *eol = memchr(line, '\n', (size_t)(end - line));
        if (!eol)
            break;
        line = eol + 1;
    }
    return head + body <= have ? head + body : 0;
}

/* The next client, with TCP_NODELAY, whose descriptor is below limit (an
 * index into the tables by descriptor); others are closed. */
static int accept_client(int listener, int limit)
{
    for (;;) {
        int client = accept4(listener, NULL, NULL, SOCK_CLOEXEC);
        if (client < 0)
            continue;
        if (client >= limit) {
            close(client);
            continue;
        }
        int one = 1;
        setsockopt(client, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
        return client;
    }
}

/* ------------------------------------------------------------ threads */

/* One thread per client connection, blocking reads and writes on the client
 * and on its own Redis connection: each wait puts the thread to sleep and a
 * readable socket wakes it, which is how chessd's store threads wait for
 * Redis. */

static void *serve_blocking(void *arg)
{
    int client = (int)(intptr_t)arg, redis = connect_redis();
    char buf[REQUEST_MAX], reply[64];
    size_t have = 0;
    for (;;) {
        size_t length;
        while (!(length = request_length(buf, have))) {
            ssize_t n = read(client, buf + have, sizeof buf - have);
            if (n <= 0 || have + (size_t)n == sizeof buf)
                goto done;
            have += (size_t)n;
        }
        redis_call(redis, command, command_length, reply, sizeof reply, 0);
        if (write(client, answer, answer_length) != (ssize_t)answer_length)
            goto done;
        memmove(buf, buf + length, have - length);
        have -= length;
    }
done:
    close(client);
    close(redis);
    return NULL;
}

/* --------------------------------------------------------------- loop */

/* One thread, epoll over every client and Redis socket (level triggered),
 * one Redis connection per client connection: what an event-driven server
 * such as Redis itself or nginx does. */

typedef struct {
    int client, redis;
    char buf[REQUEST_MAX];
    size_t have;
    size_t pending; /* bytes of the request whose Redis reply is awaited, 0 if none */
    char reply[64];
    size_t reply_have;
} peer_t;

static peer_t *peers[MAX_CONNS * 2 + 16]; /* by fd, client and redis alike */

static void drop(int epoll_fd, peer_t *p)
{
    epoll_ctl(epoll_fd, EPOLL_CTL_DEL, p->client, NULL);
    epoll_ctl(epoll_fd, EPOLL_CTL_DEL, p->redis, NULL);
    peers[p->client] = peers[p->redis] = NULL;
    close(p->client);
    close(p->redis);
    free(p);
}

/* Sends the Redis command for the next whole request, if one is there. */
static bool next_request(peer_t *p)
{
    if (p->pending || !(p->pending = request_length(p->buf, p->have)))
        return true;
    return write(p->redis, command, command_length) == (ssize_t)command_length;
}

static void serve_loop(int listener)
{
    int ep = epoll_create1(EPOLL_CLOEXEC);
    struct epoll_event ev = { .events = EPOLLIN, .data.fd = listener };
    epoll_ctl(ep, EPOLL_CTL_ADD, listener, &ev);
    struct epoll_event events[64];
    for (;;) {
        int n = epoll_wait(ep, events, 64, -1);
        for (int i = 0; i < n; i++) {
            int fd = events[i].data.fd;
            if (fd == listener) {
                int client = accept_client(listener, (int)(sizeof peers / sizeof *peers)), redis = connect_redis();
                if (redis >= (int)(sizeof peers / sizeof *peers)) {
                    close(client);
                    close(redis);
                    continue;
                }
                peer_t *p = calloc(1, sizeof *p);
                if (!p)
                    die("calloc");
                p->client = client;
                p->redis = redis;
                peers[client] = peers[redis] = p;
                ev.data.fd = client;
                epoll_ctl(ep, EPOLL_CTL_ADD, client, &ev);
                ev.data.fd = redis;
                epoll_ctl(ep, EPOLL_CTL_ADD, redis, &ev);
                continue;
            }
            peer_t *p = peers[fd];
            if (!p)
                continue;
            if (fd == p->client) {
                ssize_t r = read(fd, p->buf + p->have, sizeof p->buf - p->have);
                if (r <= 0 || p->have + (size_t)r == sizeof p->buf) {
                    drop(ep, p);
                    continue;
                }
                p->have += (size_t)r;
                if (!next_request(p))
                    drop(ep, p);
                continue;
            }
            ssize_t r = read(fd, p->reply + p->reply_have, sizeof p->reply - p->reply_have);
            if (r <= 0 || p->reply_have + (size_t)r == sizeof p->reply) {
                drop(ep, p);
                continue;
            }
            p->reply_have += (size_t)r;
            if (memcmp(p->reply + p->reply_have - 2, "\r\n", 2) || !p->pending)
                continue;
            p->reply_have = 0;
            if (write(p->client, answer, answer_length) != (ssize_t)answer_length) {
                drop(ep, p);
                continue;
            }
            memmove(p->buf, p->buf + p->pending, p->have - p->pending);
            p->have -= p->pending;
            p->pending = 0;
            if (!next_request(p))
                drop(ep, p);
        }
    }
}

/* ------------------------------------------------------------ handoff */

/* chessd's own shape: 2 connection threads, each an epoll loop over its
 * clients, hand each whole request to a pool of 8 store threads (a queue
 * under a mutex, a condition variable). A store thread does the Redis round
 * trip blocking on a connection of its own, and hands the request back
 * through the connection thread's eventfd, which writes the answer. */

#define CONN_THREADS 2
#define STORE_THREADS 8

typedef struct job job_t;
typedef struct side side_t;
struct job {
    int client;
    side_t *side;
    char buf[REQUEST_MAX];
    size_t have, length;
    job_t *next;
};
struct side { /* a connection thread */
    int epoll_fd, wake_fd;
    pthread_mutex_t lock;
    job_t *done; /* handed back by the store threads */
};

static side_t sides[CONN_THREADS];
static pthread_mutex_t queue_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t queue_ready = PTHREAD_COND_INITIALIZER;
static job_t *queue_head, *queue_tail;
static job_t *jobs[MAX_CONNS * 2 + 16]; /* by client fd */

static void *store_thread(void *arg)
{
    (void)arg;
    int redis = connect_redis();
    char reply[64];
    for (;;) {
        pthread_mutex_lock(&queue_lock);
        while (!queue_head)
            pthread_cond_wait(&queue_ready, &queue_lock);
        job_t *j = queue_head;
        queue_head = j->next;
        if (!queue_head)
            queue_tail = NULL;
        pthread_mutex_unlock(&queue_lock);
        redis_call(redis, command, command_length, reply, sizeof reply, 0);
        side_t *s = j->side;
        pthread_mutex_lock(&s->lock);
        j->next = s->done;
        s->done = j;
        pthread_mutex_unlock(&s->lock);
        uint64_t one = 1;
        if (write(s->wake_fd, &one, sizeof one) != sizeof one)
            die("eventfd");
    }
    return NULL;
}

static void hand_over(job_t *j)
{
    j->next = NULL;
    pthread_mutex_lock(&queue_lock);
    if (queue_tail)
        queue_tail->next = j;
    else
        queue_head = j;
    queue_tail = j;
    pthread_mutex_unlock(&queue_lock);
    pthread_cond_signal(&queue_ready);
}

/* Reads what the client sent; a whole request goes to the store threads
 * with the client out of the epoll set until its answer is written. */
static void client_readable(job_t *j)
{
    ssize_t r = read(j->client, j->buf + j->have, sizeof j->buf - j->have);
    if (r <= 0 || j->have + (size_t)r == sizeof j->buf) {
        epoll_ctl(j->side->epoll_fd, EPOLL_CTL_DEL, j->client, NULL);
        jobs[j->client] = NULL;
        close(j->client);
        free(j);
        return;
    }
    j->have += (size_t)r;
    if ((j->length = request_length(j->buf, j->have))) {
        epoll_ctl(j->side->epoll_fd, EPOLL_CTL_DEL, j->client, NULL);
        hand_over(j);
    }
}

static void *conn_thread(void *arg)
{
    side_t *s = arg;
    struct epoll_event events[64];
    for (;;) {
        int n = epoll_wait(s->epoll_fd, events, 64, -1);
        for (int i = 0; i < n; i++) {
            if (events[i].data.fd != s->wake_fd) {
                job_t *j = jobs[events[i].data.fd];
                if (j)
                    client_readable(j);
                continue;
            }
            uint64_t count;
            if (read(s->wake_fd, &count, sizeof count) != sizeof count)
                continue;
            pthread_mutex_lock(&s->lock);
            job_t *done = s->done;
            s->done = NULL;
            pthread_mutex_unlock(&s->lock);
            while (done) {
                job_t *j = done;
                done = j->next;
                bool ok = write(j->client, answer, answer_length) == (ssize_t)answer_length;
                memmove(j->buf, j->buf + j->length, j->have - j->length);
                j->have -= j->length;
                j->length = 0;
                if (ok && (j->length = request_length(j->buf, j->have))) {
                    hand_over(j); /* a pipelined request already read */
                    continue;
                }
                struct epoll_event ev = { .events = EPOLLIN, .data.fd = j->client };
                if (ok && !epoll_ctl(s->epoll_fd, EPOLL_CTL_ADD, j->client, &ev))
                    continue;
                jobs[j->client] = NULL;
                close(j->client);
                free(j);
            }
        }
    }
    return NULL;
}

static void serve_handoff(int listener)
{
    pthread_t t;
    for (int i = 0; i < CONN_THREADS; i++) {
        side_t *s = &sides[i];
        s->epoll_fd = epoll_create1(EPOLL_CLOEXEC);
        s->wake_fd = eventfd(0, EFD_CLOEXEC);
        pthread_mutex_init(&s->lock, NULL);
        struct epoll_event ev = { .events = EPOLLIN, .data.fd = s->wake_fd };
        epoll_ctl(s->epoll_fd, EPOLL_CTL_ADD, s->wake_fd, &ev);
        if (pthread_create(&t, NULL, conn_thread, s))
            die("pthread_create");
    }
    for (int i = 0; i < STORE_THREADS; i++)
        if (pthread_create(&t, NULL, store_thread, NULL))
            die("pthread_create");
    for (unsigned next = 0;; next++) {
        int client = accept_client(listener, (int)(sizeof jobs / sizeof *jobs));
        job_t *j = calloc(1, sizeof *j);
        if (!j)
            die("calloc");
        j->client = client;
        j->side = &sides[next % CONN_THREADS];
        jobs[client] = j;
        struct epoll_event ev = { .events = EPOLLIN, .data.fd = client };
        epoll_ctl(j->side->epoll_fd, EPOLL_CTL_ADD, client, &ev);
    }
}

/*   usage: move_floor loop|threads|handoff LISTEN_PORT REDIS_PORT ANSWER_BYTES
 *   (LISTEN_PORT 0: one the kernel picks, printed as "listening on port N")
 *
 * Serves HTTP/1.1 keep-alive on 127.0.0.1:LISTEN_PORT. Each request, read
 * whole (headers, then Content-Length bytes of body), sends one command to
 * the redis-server on 127.0.0.1:REDIS_PORT: EVALSHA of a script that sets a
 * key and answers an integer, so Redis does a write per request as it does
 * for a move. Once its reply is read, the request is answered 200 with
 * ANSWER_BYTES of JSON-looking body.
 *
 * The script that runs it reads its CPU (utime + stime) from /proc. That is
 * loopback TCP both ways (a send on loopback also runs the receiver's side
 * of the stack on the sender's CPU), the waits and the wake-ups. */
int main(int argc, char **argv)
{
    if (argc != 5 || (strcmp(argv[1], "loop") && strcmp(argv[1], "threads") && strcmp(argv[1], "handoff"))) {
        fprintf(stderr, "usage: move_floor loop|threads|handoff LISTEN_PORT REDIS_PORT ANSWER_BYTES\n");
        return 2;
    }
    signal(SIGPIPE, SIG_IGN);
    redis_port = atoi(argv[3]);
    prepare(strtoul(argv[4], NULL, 10) < 2 ? 2 : strtoul(argv[4], NULL, 10));
    int listener = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0), one = 1;
    setsockopt(listener, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons((uint16_t)atoi(argv[2])),
                             .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
    if (listener < 0 || bind(listener, (struct sockaddr *)&a, sizeof a) < 0 || listen(listener, 512) < 0)
        die("listen");
    socklen_t length = sizeof a;
    if (getsockname(listener, (struct sockaddr *)&a, &length) < 0)
        die("getsockname");
    printf("move_floor: listening on port %u\n", ntohs(a.sin_port));
    fflush(stdout);
    if (!strcmp(argv[1], "loop")) {
        serve_loop(listener);
        return 0;
    }
    if (!strcmp(argv[1], "handoff")) {
        serve_handoff(listener);
        return 0;
    }
    for (;;) {
        int client = accept_client(listener, INT32_MAX);
        pthread_t t;
        if (pthread_create(&t, NULL, serve_blocking, (void *)(intptr_t)client))
            die("pthread_create");
        pthread_detach(t);
    }
}
