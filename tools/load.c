/*
 * load.c - cuckood-load: items from a file or standard input into a
 * cuckoo filter with pipelined CF.INSERT batches (load_args.h has the
 * command line, load_input.h the formats, load_conn.h the connection).
 *
 * The one error a guard must not make is a false negative, so nothing is
 * taken on trust: every batch's reply is read and every item's answer
 * checked, and the line of each item is kept until its batch is answered,
 * so a refusal names the line. At most --window batches are in flight.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "check.h"
#include "load_args.h"
#include "load_conn.h"
#include "load_input.h"

/* A batch sent and not yet answered. */
struct batch {
    uint64_t *lines; /* each item's input line */
    unsigned n;
};

struct loader {
    struct load_opts o;
    struct load_conn *conn;
    struct load_input *in;
    const char *target; /* KEY, or the temporary key of --swap */
    char *tmp_key;
    char capacity[24]; /* "" when CF.INSERT gets no CAPACITY */
    /* the batch being filled: its items as RESP bulk strings */
    char *body;
    size_t body_len, body_cap;
    /* ring of batches in flight; ring[(head + i) % window] */
    struct batch *ring;
    unsigned head, inflight;
    uint64_t sent, acked, skipped;
    /* --verify's reservoir sample */
    char **sample;
    size_t *sample_len;
    uint64_t seen, rng;
    /* progress */
    int tty;
    uint64_t in_bytes, in_size;
    double t0, last_progress;
};

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void die_oom(void)
{
    fprintf(stderr, "cuckood-load: out of memory\n");
    exit(1);
}

static void *xrealloc(void *p, size_t n)
{
    p = realloc(p, n);
    if (p == NULL)
        die_oom();
    return p;
}

static void clear_progress(struct loader *l)
{
    if (l->tty)
        fprintf(stderr, "\r\033[K");
}

/* Says how far the load got; the temporary key of --swap is dropped. */
static void fail(struct loader *l, const char *fmt, ...)
    __attribute__((format(printf, 2, 3), noreturn));

static void fail(struct loader *l, const char *fmt, ...)
{
    va_list ap;
    clear_progress(l);
    fprintf(stderr, "cuckood-load: ");
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fprintf(stderr,
            "\ncuckood-load: %llu items acknowledged by the server "
            "into %s, %llu sent\n",
            (unsigned long long)l->acked, l->target,
            (unsigned long long)l->sent);
    if (l->tmp_key != NULL && l->conn != NULL) {
        const char *del[] = {"DEL", l->tmp_key};
        redisReply *r = load_conn_command(l->conn, 2, del, NULL);
        if (r != NULL) {
            fprintf(stderr,
                    "cuckood-load: --swap: %s dropped, %s left as "
                    "it was\n",
                    l->tmp_key, l->o.key_name);
            freeReplyObject(r);
        }
    }
    exit(1);
}

static void progress(struct loader *l, int final)
{
    if (!l->tty)
        return;
    double t = now();
    if (!final && t - l->last_progress < 0.25)
        return;
    l->last_progress = t;
    double el = t - l->t0, rate = el > 0 ? (double)l->acked / el : 0;
    double left = -1;
    if (l->o.count > l->acked && rate > 0)
        left = (double)(l->o.count - l->acked) / rate;
    else if (l->in_size > 0 && l->in_bytes > 0 && el > 0)
        left = el * (double)(l->in_size - l->in_bytes) / (double)l->in_bytes;
    fprintf(stderr, "\r\033[K%llu items  %.0f items/s",
            (unsigned long long)l->acked, rate);
    if (left >= 0 && !final)
        fprintf(stderr, "  ETA %.0f s", left);
}

/* A decimal into p, returning its length. */
static size_t utoa(char *p, uint64_t v)
{
    char tmp[24];
    size_t n = 0;
    do {
        tmp[n++] = (char)('0' + v % 10);
        v /= 10;
    } while (v);
    for (size_t i = 0; i < n; i++)
        p[i] = tmp[n - 1 - i];
    return n;
}

static uint64_t next_rand(struct loader *l)
{
    uint64_t x = l->rng; /* xorshift64 */
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    return l->rng = x;
}

/* Algorithm R: every item loaded is in the sample with the same chance. */
static void sample_item(struct loader *l, const char *item, size_t len)
{
    uint64_t k = l->o.verify, slot;
    if (k == 0)
        return;
    if (l->seen < k) {
        slot = l->seen;
    } else {
        slot = next_rand(l) % (l->seen + 1);
        if (slot >= k) {
            l->seen++;
            return;
        }
        free(l->sample[slot]);
    }
    l->seen++;
    l->sample[slot] = xrealloc(NULL, len ? len : 1);
    memcpy(l->sample[slot], item, len);
    l->sample_len[slot] = len;
}

static void check_batch_reply(struct loader *l, struct batch *b, redisReply *r)
{
    uint64_t first = b->lines[0], last = b->lines[b->n - 1];
    if (r->type == REDIS_REPLY_ERROR)
        fail(l, "lines %llu-%llu: the server answered: %s",
             (unsigned long long)first, (unsigned long long)last, r->str);
    if (r->type != REDIS_REPLY_ARRAY || r->elements != b->n)
        fail(l, "lines %llu-%llu: unexpected reply to CF.INSERT (type %d)",
             (unsigned long long)first, (unsigned long long)last, r->type);
    for (size_t i = 0; i < r->elements; i++) {
        redisReply *e = r->element[i];
        if (e->type != REDIS_REPLY_INTEGER || e->integer != 1) {
            l->acked += i;
            fail(l, "line %llu: the item was not added to %s (answer %lld%s)",
                 (unsigned long long)b->lines[i], l->target,
                 e->type == REDIS_REPLY_INTEGER ? e->integer : 0,
                 e->type == REDIS_REPLY_INTEGER && e->integer == -1
                     ? ": refused, the filter is full or the server's "
                       "memory is"
                     : "");
        }
    }
    l->acked += b->n;
}

/* Reads the reply to the oldest batch in flight. */
static void collect(struct loader *l)
{
    CK_ASSERT(l->inflight > 0);
    struct batch *b = &l->ring[l->head];
    redisReply *r = load_conn_reply(l->conn);
    if (r == NULL)
        fail(l, "%s (input read up to line %llu)", load_conn_error(l->conn),
             (unsigned long long)b->lines[0]);
    check_batch_reply(l, b, r);
    freeReplyObject(r);
    b->n = 0;
    l->head = (l->head + 1) % l->o.window;
    l->inflight--;
    progress(l, 0);
}

/* After a failed write: the replies the server sent before it went away
 * may still be readable, and count as acknowledged. */
static void drain(struct loader *l)
{
    while (l->inflight > 0) {
        struct batch *b = &l->ring[l->head];
        redisReply *r = load_conn_reply(l->conn);
        if (r == NULL)
            return;
        check_batch_reply(l, b, r);
        freeReplyObject(r);
        l->head = (l->head + 1) % l->o.window;
        l->inflight--;
    }
}

/* Sends the batch being filled: its header, then its items. */
static void flush(struct loader *l)
{
    struct batch *b = &l->ring[(l->head + l->inflight) % l->o.window];
    if (b->n == 0)
        return;
    CK_ASSERT(l->inflight < l->o.window); /* collected when it got full */
    char head[256];
    size_t keylen = strlen(l->target), caplen = strlen(l->capacity);
    size_t n = 0, argc = 3 + b->n + (caplen ? 2 : 0);
    n += (size_t)snprintf(head, sizeof(head), "*%zu\r\n$9\r\nCF.INSERT\r\n",
                          argc);
    char *msg = NULL;
    size_t need = n + 64 + keylen + caplen + 64;
    msg = xrealloc(NULL, need);
    memcpy(msg, head, n);
    n += (size_t)sprintf(msg + n, "$%zu\r\n", keylen);
    memcpy(msg + n, l->target, keylen);
    n += keylen;
    if (caplen)
        n += (size_t)sprintf(msg + n, "\r\n$8\r\nCAPACITY\r\n$%zu\r\n%s",
                             caplen, l->capacity);
    n += (size_t)sprintf(msg + n, "\r\n$5\r\nITEMS\r\n");
    if (load_conn_write(l->conn, msg, n) < 0 ||
        load_conn_write(l->conn, l->body, l->body_len) < 0) {
        char why[256];
        snprintf(why, sizeof(why), "%s", load_conn_error(l->conn));
        drain(l);
        fail(l, "%s (input read up to line %llu)", why,
             (unsigned long long)b->lines[b->n - 1]);
    }
    free(msg);
    l->sent += b->n;
    l->body_len = 0;
    l->inflight++;
    if (l->inflight == l->o.window)
        collect(l);
}

static void add_item(struct loader *l, const char *item, size_t len,
                     uint64_t line)
{
    struct batch *b = &l->ring[(l->head + l->inflight) % l->o.window];
    size_t need = l->body_len + len + 32;
    if (need > l->body_cap) {
        l->body_cap = need * 2;
        l->body = xrealloc(l->body, l->body_cap);
    }
    char *p = l->body + l->body_len;
    *p++ = '$';
    p += utoa(p, len);
    *p++ = '\r';
    *p++ = '\n';
    memcpy(p, item, len);
    p += len;
    *p++ = '\r';
    *p++ = '\n';
    l->body_len = (size_t)(p - l->body);
    b->lines[b->n++] = line;
    sample_item(l, item, len);
    if (b->n == l->o.batch)
        flush(l);
}

/* Reads the whole input through the parser. */
static void read_input(struct loader *l, int fd, struct load_input *in)
{
    size_t cap = 1 << 20, len = 0, max = LOAD_MAX_RECORD + 2;
    char *buf = xrealloc(NULL, cap);
    int eof = 0;
    for (;;) {
        size_t off = 0;
        for (;;) {
            size_t used;
            const char *item;
            size_t ilen;
            enum load_step s = load_input_next(in, buf + off, len - off, eof,
                                               &used, &item, &ilen);
            if (s == LOAD_MORE || s == LOAD_END)
                break;
            if (s == LOAD_ERROR)
                fail(l, "line %llu: %s",
                     (unsigned long long)load_input_line(in),
                     load_input_error(in));
            off += used;
            if (s == LOAD_ITEM)
                add_item(l, item, ilen, load_input_line(in));
            else
                l->skipped++;
        }
        if (eof)
            break;
        memmove(buf, buf + off, len - off);
        len -= off;
        if (len == cap) {
            if (cap >= max)
                fail(l, "line %llu: record longer than 4 MiB",
                     (unsigned long long)load_input_line(in) + 1);
            cap = cap * 2 > max ? max : cap * 2;
            buf = xrealloc(buf, cap);
        }
        ssize_t n = read(fd, buf + len, cap - len);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0)
            fail(l, "cannot read %s: %s", l->o.file ? l->o.file : "stdin",
                 strerror(errno));
        if (n == 0)
            eof = 1;
        len += (size_t)n;
        l->in_bytes += (uint64_t)n;
    }
    free(buf);
    flush(l);
    while (l->inflight > 0)
        collect(l);
}

/* CF.MEXISTS of the sample, a batch at a time. */
static void verify(struct loader *l)
{
    size_t k = l->seen < l->o.verify ? l->seen : l->o.verify;
    size_t step = l->o.batch, bad = 0;
    const char **argv = xrealloc(NULL, (step + 2) * sizeof(*argv));
    size_t *lens = xrealloc(NULL, (step + 2) * sizeof(*lens));
    for (size_t i = 0; i < k; i += step) {
        size_t m = k - i < step ? k - i : step;
        argv[0] = "CF.MEXISTS";
        lens[0] = 10;
        argv[1] = l->target;
        lens[1] = strlen(l->target);
        for (size_t j = 0; j < m; j++) {
            argv[2 + j] = l->sample[i + j];
            lens[2 + j] = l->sample_len[i + j];
        }
        redisReply *r = load_conn_command(l->conn, (int)(m + 2), argv, lens);
        if (r == NULL)
            fail(l, "--verify: %s", load_conn_error(l->conn));
        if (r->type != REDIS_REPLY_ARRAY || r->elements != m)
            fail(l, "--verify: unexpected reply to CF.MEXISTS%s%s",
                 r->type == REDIS_REPLY_ERROR ? ": " : "",
                 r->type == REDIS_REPLY_ERROR ? r->str : "");
        for (size_t j = 0; j < m; j++)
            if (r->element[j]->type != REDIS_REPLY_INTEGER ||
                r->element[j]->integer != 1)
                bad++;
        freeReplyObject(r);
    }
    free(argv);
    free(lens);
    if (bad)
        fail(l, "--verify: %zu of %zu sampled items are missing from %s", bad,
             k, l->target);
}

/* --swap's key: KEY's hash tag kept, so a cluster puts both in one slot
 * (RENAME needs that). KEY without a tag and without '}' becomes the tag. */
static char *swap_key(const char *key)
{
    const char *open = strchr(key, '{');
    const char *close = open ? strchr(open + 1, '}') : NULL;
    size_t n = strlen(key) + 64;
    char *t = xrealloc(NULL, n);
    if (close != NULL && close > open + 1)
        snprintf(t, n, "%s:load-%ld", key, (long)getpid());
    else if (strchr(key, '}') == NULL)
        snprintf(t, n, "{%s}:load-%ld", key, (long)getpid());
    else
        snprintf(t, n, "%s:load-%ld", key, (long)getpid());
    return t;
}

static redisReply *command(struct loader *l, int argc, const char **argv)
{
    redisReply *r = load_conn_command(l->conn, argc, argv, NULL);
    if (r == NULL)
        fail(l, "%s: %s", argv[0], load_conn_error(l->conn));
    if (r->type == REDIS_REPLY_ERROR)
        fail(l, "%s: the server answered: %s", argv[0], r->str);
    return r;
}

int main(int argc, char **argv)
{
    static struct loader l;
    char err[256];
    /* A server that goes away is reported from write's error: OpenSSL
     * writes to the socket without MSG_NOSIGNAL. */
    signal(SIGPIPE, SIG_IGN);
    switch (load_args_parse(argc, argv, &l.o, err, sizeof(err))) {
    case LOAD_ARGS_HELP:
        fputs(load_args_help, stdout);
        return 0;
    case LOAD_ARGS_ERROR:
        fprintf(stderr, "cuckood-load: %s\nTry 'cuckood-load --help'.\n", err);
        return 2;
    case LOAD_ARGS_OK:
        break;
    }
    l.target = l.o.key_name;
    int fd = 0;
    if (l.o.file != NULL) {
        fd = open(l.o.file, O_RDONLY | O_CLOEXEC);
        if (fd < 0) {
            fprintf(stderr, "cuckood-load: cannot open %s: %s\n", l.o.file,
                    strerror(errno));
            return 1;
        }
    }
    struct stat st;
    if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode))
        l.in_size = (uint64_t)st.st_size;
    l.tty = !l.o.quiet && isatty(2);
    /* Everything lives in l (static), so an exit on an error leaks
     * nothing a leak checker could not reach. */
    l.in = load_input_new(l.o.format, l.o.column, l.o.column_name);
    l.ring = calloc(l.o.window, sizeof(*l.ring));
    if (l.in == NULL || l.ring == NULL)
        die_oom();
    for (unsigned i = 0; i < l.o.window; i++)
        l.ring[i].lines = xrealloc(NULL, l.o.batch * sizeof(uint64_t));
    if (l.o.verify) {
        l.sample = calloc(l.o.verify, sizeof(*l.sample));
        l.sample_len = calloc(l.o.verify, sizeof(*l.sample_len));
        if (l.sample == NULL || l.sample_len == NULL)
            die_oom();
    }
    l.rng =
        (uint64_t)time(NULL) * 0x9E3779B97F4A7C15ull ^ (uint64_t)getpid() ^ 1;
    uint64_t cap = l.o.reserve ? l.o.reserve : l.o.count;
    if (cap)
        snprintf(l.capacity, sizeof(l.capacity), "%llu",
                 (unsigned long long)cap);

    l.conn = load_conn_open(&l.o, err, sizeof(err));
    if (l.conn == NULL) {
        fprintf(stderr, "cuckood-load: %s\n", err);
        return 1;
    }
    if (l.o.swap) {
        l.tmp_key = swap_key(l.o.key_name);
        l.target = l.tmp_key;
        const char *del[] = {"DEL", l.tmp_key};
        freeReplyObject(command(&l, 2, del));
    }
    l.t0 = l.last_progress = now();
    read_input(&l, fd, l.in);
    if (l.o.swap && l.sent == 0) {
        /* Nothing to load: the new filter is an empty one. */
        const char *res[] = {"CF.RESERVE", l.tmp_key,
                             cap ? l.capacity : "1024"};
        freeReplyObject(command(&l, 3, res));
    }
    if (l.o.verify)
        verify(&l);
    if (l.o.swap) {
        const char *ren[] = {"RENAME", l.tmp_key, l.o.key_name};
        freeReplyObject(command(&l, 3, ren));
        l.target = l.o.key_name;
        free(l.tmp_key);
        l.tmp_key = NULL;
    }
    double el = now() - l.t0;
    progress(&l, 1);
    clear_progress(&l);
    if (!l.o.quiet)
        fprintf(stderr,
                "cuckood-load: %llu items into %s in %.2f s (%.0f items/s), "
                "%llu empty records skipped%s\n",
                (unsigned long long)l.acked, l.o.key_name, el,
                el > 0 ? (double)l.acked / el : 0.0,
                (unsigned long long)l.skipped,
                l.o.verify ? ", sample verified" : "");
    load_conn_close(l.conn);
    load_input_free(l.in);
    if (fd != 0)
        close(fd);
    return 0;
}
