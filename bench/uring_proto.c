/*
 * uring_proto.c - the -P 1 experiment: does batching the socket I/O of many
 * clients in one loop iteration (io_uring) cut the server's CPU per request?
 *
 * A RESP server that answers PING with +PONG and every other command with
 * :0, served one of two ways:
 *
 *   epoll  one epoll_wait per loop iteration, then for each ready client
 *          one read and one write, as cuckood's libuv loop does;
 *   uring  io_uring: a multishot accept, a multishot recv per client into
 *          a ring of provided buffers, and all replies of one iteration
 *          queued as sends and submitted with the next wait, so one
 *          io_uring_enter serves every client of the iteration.
 *
 * Same parser and replies on both, so the difference is the I/O path alone.
 * Not part of the server: it measures before anything is built into it.
 *
 *   uring_proto PORT epoll|uring [WAIT_NR [TIMEOUT_US]]
 *
 * WAIT_NR (uring only, default 1) is how many completions a wait asks for;
 * above 1 the wait also times out after TIMEOUT_US (default 50), which
 * batches more at the price of latency (a lone client waits the timeout
 * for each reply). On SIGINT or SIGTERM it prints its counters to stderr:
 * loop iterations, requests, and (epoll) ready clients or (uring)
 * completions per iteration.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <liburing.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/epoll.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <unistd.h>

#define NBUF 1024 /* provided receive buffers (a power of two) */
#define BUFSZ 4096
#define BGID 7

enum { OP_ACCEPT = 1, OP_RECV = 2, OP_SEND = 3 };

typedef struct conn {
    int fd;
    bool recv_armed, sending, dead, dirty;
    char *in; /* an incomplete command kept between reads */
    size_t inlen, incap;
    char *out, *sbuf; /* replies being gathered, replies in flight */
    size_t outlen, outcap, slen, soff, scap;
} conn_t;

static volatile sig_atomic_t stop;
static uint64_t n_iter, n_req, n_ready, n_cqe;

static void on_signal(int sig)
{
    (void)sig;
    stop = 1;
}

static void *xrealloc(void *p, size_t n)
{
    p = realloc(p, n);
    if (p == NULL) {
        perror("realloc");
        exit(1);
    }
    return p;
}

static void out_add(conn_t *c, const char *s, size_t n)
{
    if (c->outlen + n > c->outcap) {
        c->outcap = (c->outlen + n) * 2;
        c->out = xrealloc(c->out, c->outcap);
    }
    memcpy(c->out + c->outlen, s, n);
    c->outlen += n;
}

static void reply(conn_t *c, const char *name, size_t len)
{
    n_req++;
    if (len == 4 && strncasecmp(name, "PING", 4) == 0)
        out_add(c, "+PONG\r\n", 7);
    else
        out_add(c, ":0\r\n", 4);
}

/* A decimal number ending in \r\n at p[*i]; -2 when incomplete. */
static long num(const char *p, size_t n, size_t *i)
{
    long v = 0;
    size_t j = *i;
    while (j < n && p[j] >= '0' && p[j] <= '9')
        v = v * 10 + (p[j++] - '0');
    if (j + 1 >= n)
        return -2;
    if (p[j] != '\r' || p[j + 1] != '\n')
        return -1;
    *i = j + 2;
    return v;
}

/* Answers every complete command in p[0..n); returns the bytes used, or
 * SIZE_MAX on a protocol error. */
static size_t parse(conn_t *c, const char *p, size_t n)
{
    size_t off = 0;
    while (off < n) {
        size_t i = off;
        if (p[i] != '*') {
            const char *nl = memchr(p + i, '\n', n - i);
            if (nl == NULL)
                break;
            size_t e = (size_t)(nl - p), k = i;
            while (k < e && p[k] != ' ' && p[k] != '\r')
                k++;
            if (k > i)
                reply(c, p + i, k - i);
            off = e + 1;
            continue;
        }
        i++;
        long argc = num(p, n, &i);
        if (argc == -2)
            break;
        if (argc < 1)
            return SIZE_MAX;
        const char *name = NULL;
        size_t namelen = 0;
        bool whole = true;
        for (long a = 0; a < argc; a++) {
            if (i >= n) {
                whole = false;
                break;
            }
            if (p[i] != '$')
                return SIZE_MAX;
            i++;
            long len = num(p, n, &i);
            if (len == -2 || i + (size_t)len + 2 > n) {
                whole = false;
                break;
            }
            if (len < 0)
                return SIZE_MAX;
            if (a == 0) {
                name = p + i;
                namelen = (size_t)len;
            }
            i += (size_t)len + 2;
        }
        if (!whole)
            break;
        reply(c, name, namelen);
        off = i;
    }
    return off;
}

/* Takes in received bytes; false on a protocol error. */
static bool feed(conn_t *c, const char *p, size_t n)
{
    if (c->inlen == 0) {
        size_t used = parse(c, p, n);
        if (used == SIZE_MAX)
            return false;
        p += used;
        n -= used;
        if (n == 0)
            return true;
    }
    if (c->inlen + n > c->incap) {
        c->incap = (c->inlen + n) * 2;
        c->in = xrealloc(c->in, c->incap);
    }
    memcpy(c->in + c->inlen, p, n);
    c->inlen += n;
    size_t used = parse(c, c->in, c->inlen);
    if (used == SIZE_MAX)
        return false;
    memmove(c->in, c->in + used, c->inlen - used);
    c->inlen -= used;
    return true;
}

static conn_t *conn_new(int fd)
{
    conn_t *c = calloc(1, sizeof(*c));
    if (c == NULL) {
        perror("calloc");
        exit(1);
    }
    c->fd = fd;
    int one = 1;
    (void)setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
    return c;
}

static void conn_free(conn_t *c)
{
    close(c->fd);
    free(c->in);
    free(c->out);
    free(c->sbuf);
    free(c);
}

static int listen_on(int port)
{
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK, 0);
    int one = 1;
    struct sockaddr_in a = {.sin_family = AF_INET,
                            .sin_port = htons((uint16_t)port),
                            .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    if (fd < 0 ||
        setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)) < 0 ||
        bind(fd, (struct sockaddr *)&a, sizeof(a)) < 0 || listen(fd, 511) < 0) {
        perror("listen");
        exit(1);
    }
    return fd;
}

/* ---- epoll: one read and one write per ready client ---- */

static void run_epoll(int lfd)
{
    int ep = epoll_create1(0);
    struct epoll_event ev = {.events = EPOLLIN, .data.ptr = NULL};
    epoll_ctl(ep, EPOLL_CTL_ADD, lfd, &ev);
    static char rbuf[65536];
    struct epoll_event evs[1024];
    while (!stop) {
        int k = epoll_wait(ep, evs, 1024, -1);
        if (k < 0)
            continue;
        n_iter++;
        n_ready += (uint64_t)k;
        for (int e = 0; e < k; e++) {
            conn_t *c = evs[e].data.ptr;
            if (c == NULL) {
                int fd;
                while ((fd = accept4(lfd, NULL, NULL, SOCK_NONBLOCK)) >= 0) {
                    conn_t *nc = conn_new(fd);
                    struct epoll_event ce = {.events = EPOLLIN, .data.ptr = nc};
                    epoll_ctl(ep, EPOLL_CTL_ADD, fd, &ce);
                }
                continue;
            }
            if (evs[e].events & EPOLLOUT) {
                ssize_t w = write(c->fd, c->out, c->outlen);
                if (w > 0) {
                    memmove(c->out, c->out + w, c->outlen - (size_t)w);
                    c->outlen -= (size_t)w;
                }
                if (c->outlen == 0) {
                    struct epoll_event ce = {.events = EPOLLIN, .data.ptr = c};
                    epoll_ctl(ep, EPOLL_CTL_MOD, c->fd, &ce);
                }
                continue;
            }
            ssize_t r = read(c->fd, rbuf, sizeof(rbuf));
            if (r < 0 && (errno == EAGAIN || errno == EINTR))
                continue;
            if (r <= 0 || !feed(c, rbuf, (size_t)r)) {
                epoll_ctl(ep, EPOLL_CTL_DEL, c->fd, NULL);
                conn_free(c);
                continue;
            }
            if (c->outlen > 0) {
                ssize_t w = write(c->fd, c->out, c->outlen);
                if (w > 0) {
                    memmove(c->out, c->out + w, c->outlen - (size_t)w);
                    c->outlen -= (size_t)w;
                }
                if (c->outlen > 0) {
                    struct epoll_event ce = {.events = EPOLLOUT, .data.ptr = c};
                    epoll_ctl(ep, EPOLL_CTL_MOD, c->fd, &ce);
                }
            }
        }
    }
    close(ep);
}

/* ---- io_uring: every client of an iteration in one system call ---- */

static struct io_uring ring;
static struct io_uring_buf_ring *br;
static char *bufs;
static conn_t **dirty;
static size_t ndirty, dirtycap;

static struct io_uring_sqe *sqe_get(void)
{
    struct io_uring_sqe *sqe = io_uring_get_sqe(&ring);
    if (sqe == NULL) {
        io_uring_submit(&ring);
        sqe = io_uring_get_sqe(&ring);
    }
    return sqe;
}

static void *tag(conn_t *c, int op)
{
    return (void *)((uintptr_t)c | (uintptr_t)op);
}

static void arm_recv(conn_t *c)
{
    struct io_uring_sqe *sqe = sqe_get();
    io_uring_prep_recv_multishot(sqe, c->fd, NULL, 0, 0);
    sqe->flags |= IOSQE_BUFFER_SELECT;
    sqe->buf_group = BGID;
    io_uring_sqe_set_data(sqe, tag(c, OP_RECV));
    c->recv_armed = true;
}

static void send_rest(conn_t *c)
{
    struct io_uring_sqe *sqe = sqe_get();
    io_uring_prep_send(sqe, c->fd, c->sbuf + c->soff, c->slen - c->soff,
                       MSG_NOSIGNAL);
    io_uring_sqe_set_data(sqe, tag(c, OP_SEND));
    c->sending = true;
}

/* Moves the gathered replies in flight. */
static void flush(conn_t *c)
{
    if (c->sending || c->outlen == 0 || c->dead)
        return;
    char *b = c->sbuf;
    size_t cap = c->scap;
    c->sbuf = c->out;
    c->scap = c->outcap;
    c->slen = c->outlen;
    c->soff = 0;
    c->out = b;
    c->outcap = cap;
    c->outlen = 0;
    send_rest(c);
}

static void mark_dirty(conn_t *c)
{
    if (c->dirty)
        return;
    if (ndirty == dirtycap) {
        dirtycap = dirtycap ? dirtycap * 2 : 64;
        dirty = xrealloc(dirty, dirtycap * sizeof(*dirty));
    }
    c->dirty = true;
    dirty[ndirty++] = c;
}

static void kill_conn(conn_t *c)
{
    if (!c->dead) {
        c->dead = true;
        shutdown(c->fd, SHUT_RDWR); /* ends the multishot recv */
    }
    if (!c->recv_armed && !c->sending && !c->dirty)
        conn_free(c);
}

static void arm_accept(int lfd)
{
    struct io_uring_sqe *sqe = sqe_get();
    io_uring_prep_multishot_accept(sqe, lfd, NULL, NULL, 0);
    io_uring_sqe_set_data(sqe, (void *)(uintptr_t)OP_ACCEPT);
}

static void on_cqe(int lfd, struct io_uring_cqe *cqe)
{
    uintptr_t ud = (uintptr_t)io_uring_cqe_get_data(cqe);
    int op = (int)(ud & 7);
    conn_t *c = (conn_t *)(ud & ~(uintptr_t)7);
    if (op == OP_ACCEPT) {
        if (cqe->res >= 0)
            arm_recv(conn_new(cqe->res));
        if (!(cqe->flags & IORING_CQE_F_MORE))
            arm_accept(lfd);
        return;
    }
    if (op == OP_RECV) {
        if (cqe->res > 0) {
            unsigned bid = cqe->flags >> IORING_CQE_BUFFER_SHIFT;
            char *b = bufs + (size_t)bid * BUFSZ;
            bool ok = c->dead || feed(c, b, (size_t)cqe->res);
            io_uring_buf_ring_add(br, b, BUFSZ, (unsigned short)bid,
                                  io_uring_buf_ring_mask(NBUF), 0);
            io_uring_buf_ring_advance(br, 1);
            if (!ok)
                kill_conn(c);
            else if (c->outlen > 0)
                mark_dirty(c);
        }
        if (!(cqe->flags & IORING_CQE_F_MORE)) {
            c->recv_armed = false;
            if (cqe->res == -ENOBUFS && !c->dead)
                arm_recv(c);
            else
                kill_conn(c);
        }
        return;
    }
    /* OP_SEND */
    c->sending = false;
    if (cqe->res < 0) {
        kill_conn(c);
        return;
    }
    c->soff += (size_t)cqe->res;
    if (c->dead) {
        kill_conn(c);
    } else if (c->soff < c->slen) {
        send_rest(c);
    } else if (c->outlen > 0) {
        mark_dirty(c);
    }
}

static void run_uring(int lfd, unsigned wait_nr, long timeout_us)
{
    struct io_uring_params p = {0};
    p.flags = IORING_SETUP_SINGLE_ISSUER | IORING_SETUP_DEFER_TASKRUN;
    int rc = io_uring_queue_init_params(4096, &ring, &p);
    if (rc < 0) {
        fprintf(stderr, "io_uring_queue_init: %s\n", strerror(-rc));
        exit(2);
    }
    size_t brsz = NBUF * sizeof(struct io_uring_buf);
    br = mmap(NULL, brsz, PROT_READ | PROT_WRITE, MAP_ANONYMOUS | MAP_PRIVATE,
              -1, 0);
    bufs = malloc((size_t)NBUF * BUFSZ);
    if (br == MAP_FAILED || bufs == NULL) {
        perror("buffers");
        exit(1);
    }
    struct io_uring_buf_reg reg = {
        .ring_addr = (uint64_t)(uintptr_t)br,
        .ring_entries = NBUF,
        .bgid = BGID,
    };
    if ((rc = io_uring_register_buf_ring(&ring, &reg, 0)) < 0) {
        fprintf(stderr, "io_uring_register_buf_ring: %s\n", strerror(-rc));
        exit(2);
    }
    io_uring_buf_ring_init(br);
    for (unsigned i = 0; i < NBUF; i++)
        io_uring_buf_ring_add(br, bufs + (size_t)i * BUFSZ, BUFSZ,
                              (unsigned short)i, io_uring_buf_ring_mask(NBUF),
                              (int)i);
    io_uring_buf_ring_advance(br, NBUF);
    arm_accept(lfd);
    struct __kernel_timespec ts = {.tv_sec = timeout_us / 1000000,
                                   .tv_nsec = timeout_us % 1000000 * 1000};
    while (!stop) {
        for (size_t i = 0; i < ndirty; i++) {
            conn_t *c = dirty[i];
            c->dirty = false;
            if (c->dead)
                kill_conn(c);
            else
                flush(c);
        }
        ndirty = 0;
        struct io_uring_cqe *cqe;
        if (wait_nr > 1)
            rc = io_uring_submit_and_wait_timeout(&ring, &cqe, wait_nr, &ts,
                                                  NULL);
        else
            rc = io_uring_submit_and_wait(&ring, 1);
        if (rc < 0 && rc != -ETIME && rc != -EINTR) {
            fprintf(stderr, "io_uring wait: %s\n", strerror(-rc));
            exit(1);
        }
        n_iter++;
        unsigned head, k = 0;
        io_uring_for_each_cqe(&ring, head, cqe)
        {
            on_cqe(lfd, cqe);
            k++;
        }
        io_uring_cq_advance(&ring, k);
        n_cqe += k;
    }
    io_uring_queue_exit(&ring);
}

int main(int argc, char **argv)
{
    if (argc < 3) {
        fprintf(stderr, "usage: %s PORT epoll|uring [WAIT_NR [TIMEOUT_US]]\n",
                argv[0]);
        return 2;
    }
    struct sigaction sa = {.sa_handler = on_signal};
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);
    signal(SIGPIPE, SIG_IGN);
    int lfd = listen_on(atoi(argv[1]));
    bool uring = strcmp(argv[2], "uring") == 0;
    if (uring)
        run_uring(lfd, argc > 3 ? (unsigned)atoi(argv[3]) : 1,
                  argc > 4 ? atol(argv[4]) : 50);
    else
        run_epoll(lfd);
    fprintf(stderr,
            "%s: iterations %llu requests %llu requests/iteration %.2f "
            "%s/iteration %.2f\n",
            argv[2], (unsigned long long)n_iter, (unsigned long long)n_req,
            n_iter ? (double)n_req / (double)n_iter : 0.0,
            uring ? "completions" : "ready",
            n_iter ? (double)(uring ? n_cqe : n_ready) / (double)n_iter : 0.0);
    return 0;
}
