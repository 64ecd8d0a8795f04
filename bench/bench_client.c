/*
 * bench_client.c - a pipelined hiredis client that sends a command prefix
 * followed by batches of generated items, for filling and probing servers
 * in bench/bench_server.sh.
 *
 * Usage:
 *   bench_client [-h host] [-p port] [-n count] [-b batch] [-s start]
 *                [-w window] [-f fmt] [-m mult] word...
 *
 * Item i (start <= i < start + count) is printf(fmt, (i * mult) % mod)
 * with mod = 10^8 when mult is not 1 (to spread items over the key space
 * redis-benchmark's __rand_int__ uses), else plain i. Each command is the
 * given words followed by up to `batch` items; up to `window` commands are
 * in flight at once.
 *
 * Prints one line: commands, items, the sum of integer replies, the count
 * of array elements equal to 1, of other array elements, and of error
 * replies, plus the elapsed time and items per second. Exit status 1 on a
 * connection or protocol failure (error replies are counted, not fatal).
 */
#include <hiredis/hiredis.h>

#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define ITEM_MAX 32

typedef struct totals {
    uint64_t commands;
    uint64_t items;
    long long int_sum;
    uint64_t ones;
    uint64_t others;
    uint64_t errors;
} totals_t;

static double now_sec(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void account(totals_t *t, const redisReply *r)
{
    size_t i;

    switch (r->type) {
    case REDIS_REPLY_INTEGER:
        t->int_sum += r->integer;
        break;
    case REDIS_REPLY_ARRAY:
        for (i = 0; i < r->elements; i++) {
            const redisReply *e = r->element[i];
            if (e->type == REDIS_REPLY_INTEGER && e->integer == 1)
                t->ones++;
            else if (e->type == REDIS_REPLY_ERROR)
                t->errors++;
            else
                t->others++;
        }
        break;
    case REDIS_REPLY_ERROR:
        if (t->errors++ == 0)
            fprintf(stderr, "bench_client: first error: %s\n", r->str);
        break;
    default:
        break;
    }
}

static int read_one(redisContext *c, totals_t *t)
{
    void *reply = NULL;

    if (redisGetReply(c, &reply) != REDIS_OK || reply == NULL) {
        fprintf(stderr, "bench_client: %s\n", c->errstr);
        return -1;
    }
    account(t, reply);
    freeReplyObject(reply);
    return 0;
}

int main(int argc, char **argv)
{
    const char *host = "127.0.0.1", *fmt = "%012" PRIu64;
    int port = 6379, opt, nwords;
    uint64_t count = 1000000, batch = 1000, start = 0, mult = 1;
    uint64_t window = 16, inflight = 0, i;
    totals_t t = {0};
    redisContext *c;
    const char **av = NULL;
    size_t *avlen = NULL;
    char *items = NULL;
    double t0, dt;
    int status = 1;

    while ((opt = getopt(argc, argv, "h:p:n:b:s:w:f:m:")) != -1) {
        switch (opt) {
        case 'h':
            host = optarg;
            break;
        case 'p':
            port = atoi(optarg);
            break;
        case 'n':
            count = strtoull(optarg, NULL, 10);
            break;
        case 'b':
            batch = strtoull(optarg, NULL, 10);
            break;
        case 's':
            start = strtoull(optarg, NULL, 10);
            break;
        case 'w':
            window = strtoull(optarg, NULL, 10);
            break;
        case 'f':
            fmt = optarg;
            break;
        case 'm':
            mult = strtoull(optarg, NULL, 10);
            break;
        default:
            fprintf(stderr, "usage: bench_client [-h host] [-p port] "
                            "[-n count] [-b batch] [-s start] [-w window] "
                            "[-f fmt] [-m mult] word...\n");
            return 2;
        }
    }
    nwords = argc - optind;
    if (nwords < 1 || batch < 1 || batch > 100000 || window < 1) {
        fprintf(stderr, "bench_client: need a command, 1 <= batch <= "
                        "100000, window >= 1\n");
        return 2;
    }
    c = redisConnect(host, port);
    if (c == NULL || c->err) {
        fprintf(stderr, "bench_client: connect: %s\n",
                c ? c->errstr : "out of memory");
        goto out;
    }
    av = malloc((nwords + batch) * sizeof(*av));
    avlen = malloc((nwords + batch) * sizeof(*avlen));
    items = malloc(batch * ITEM_MAX);
    if (av == NULL || avlen == NULL || items == NULL)
        goto out;
    for (opt = 0; opt < nwords; opt++) {
        av[opt] = argv[optind + opt];
        avlen[opt] = strlen(av[opt]);
    }

    t0 = now_sec();
    for (i = 0; i < count;) {
        uint64_t k, n = count - i < batch ? count - i : batch;

        for (k = 0; k < n; k++) {
            uint64_t v = start + i + k;
            char *p = items + k * ITEM_MAX;
            int len;

            if (mult != 1)
                v = (v * mult) % 100000000u;
            len = snprintf(p, ITEM_MAX, fmt, v);
            if (len < 0 || len >= ITEM_MAX) {
                fprintf(stderr, "bench_client: item too long\n");
                status = 2;
                goto out;
            }
            av[nwords + k] = p;
            avlen[nwords + k] = (size_t)len;
        }
        /* hiredis copies the arguments into its output buffer here. */
        if (redisAppendCommandArgv(c, nwords + (int)n, av, avlen) != REDIS_OK)
            goto out;
        t.commands++;
        t.items += n;
        i += n;
        if (++inflight >= window) {
            if (read_one(c, &t) != 0)
                goto out;
            inflight--;
        }
    }
    while (inflight > 0) {
        if (read_one(c, &t) != 0)
            goto out;
        inflight--;
    }
    dt = now_sec() - t0;
    printf("commands=%" PRIu64 " items=%" PRIu64 " int_sum=%lld ones=%" PRIu64
           " others=%" PRIu64 " errors=%" PRIu64
           " seconds=%.3f items_per_sec=%.0f\n",
           t.commands, t.items, t.int_sum, t.ones, t.others, t.errors, dt,
           dt > 0 ? (double)t.items / dt : 0.0);
    status = 0;
out:
    if (c != NULL)
        redisFree(c);
    free(av);
    free(avlen);
    free(items);
    return status;
}
