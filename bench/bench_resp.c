/*
 * bench_resp - request parsing cost per command, without the network.
 *
 *   bench_resp [commands]      (default 2000000)
 *
 * Builds a pipeline of RESP frames as redis-benchmark sends them (PING,
 * "CF.EXISTS bench <12 digits>" and "CF.MEXISTS bench" with 100 such
 * items, also given per item), feeds it to one parser in reads of
 * 16 KB (the server's read slab) and takes every command out. Prints the
 * best of several repetitions in ns per command, since the machine may be
 * shared.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "resp.h"

#define READ_SIZE 16384
#define REPS 7

static double now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return ts.tv_sec * 1e9 + ts.tv_nsec;
}

/* Builds n frames with frame(i) into a malloc'd buffer. */
static char *build(size_t n, int exists, size_t *len)
{
    size_t cap = n * (exists == 2 ? 2000 : 64), used = 0;
    char *buf = malloc(cap);

    if (buf == NULL)
        return NULL;
    for (size_t i = 0; i < n; i++) {
        int k;
        if (exists == 2) {
            k = snprintf(buf + used, cap - used,
                         "*102\r\n$10\r\nCF.MEXISTS\r\n$5\r\nbench\r\n");
            for (size_t j = 0; j < 100 && k > 0 && (size_t)k < cap - used;
                 j++) {
                int m = snprintf(
                    buf + used + k, cap - used - (size_t)k,
                    "$12\r\n%012llu\r\n",
                    (unsigned long long)((i * 100 + j) * 7919 % 100000000u));
                k = m < 0 ? m : k + m;
            }
        } else if (exists)
            k = snprintf(buf + used, cap - used,
                         "*3\r\n$9\r\nCF.EXISTS\r\n$5\r\nbench\r\n"
                         "$12\r\n%012llu\r\n",
                         (unsigned long long)((i * 7919) % 100000000u));
        else
            k = snprintf(buf + used, cap - used, "*1\r\n$4\r\nPING\r\n");
        if (k < 0 || (size_t)k >= cap - used) {
            free(buf);
            return NULL;
        }
        used += (size_t)k;
    }
    *len = used;
    return buf;
}

/* One pass over buf; returns ns per command or a negative value. */
static double run(const char *buf, size_t len, size_t n)
{
    resp_limits_t lim;
    resp_parser_t *p;
    resp_cmd_t *cmd;
    size_t got = 0, argbytes = 0;
    double t0, dt;

    resp_limits_default(&lim);
    p = resp_parser_new(&lim);
    if (p == NULL)
        return -1;
    t0 = now_ns();
    for (size_t off = 0; off < len; off += READ_SIZE) {
        size_t k = len - off < READ_SIZE ? len - off : READ_SIZE;
        int rc = resp_parser_feed(p, buf + off, k);

        while (rc == 0) {
            rc = resp_parser_next(p, &cmd);
            if (rc != 1)
                break;
            rc = 0;
            got++;
            argbytes += cmd->argv[cmd->argc - 1].len;
        }
        if (rc < 0) {
            fprintf(stderr, "bench_resp: parse error %d\n", rc);
            resp_parser_free(p);
            return -1;
        }
    }
    dt = now_ns() - t0;
    resp_parser_free(p);
    if (got != n || argbytes == 0) {
        fprintf(stderr, "bench_resp: %zu of %zu commands\n", got, n);
        return -1;
    }
    return dt / (double)n;
}

int main(int argc, char **argv)
{
    size_t n = argc > 1 ? strtoull(argv[1], NULL, 10) : 2000000;

    if (n == 0) {
        fprintf(stderr, "usage: bench_resp [commands]\n");
        return 2;
    }
    for (int exists = 0; exists <= 2; exists++) {
        size_t len;
        size_t nc = exists == 2 ? n / 50 : n;
        char *buf = build(nc, exists, &len);
        double best = 0;

        if (buf == NULL)
            return 1;
        for (int r = 0; r < REPS; r++) {
            double v = run(buf, len, nc);
            if (v < 0)
                return 1;
            if (r == 0 || v < best)
                best = v;
        }
        printf("%-28s %7.1f ns/command  (%zu commands, %zu bytes, best "
               "of %d)\n",
               exists == 2   ? "CF.MEXISTS bench <100 items>"
               : exists == 1 ? "CF.EXISTS bench <12 digits>"
                             : "PING",
               best, nc, len, REPS);
        if (exists == 2)
            printf("%-28s %7.1f ns/item\n", "", best / 100);
        free(buf);
    }
    return 0;
}
