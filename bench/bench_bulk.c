/*
 * bench_bulk - the core's batched cost per item for the server's bulk
 * commands, the reference bench/bench_server.sh divides the server's CPU
 * per item by.
 *
 *   bench_bulk [fill] [batch]     (default: 5000000 100)
 *
 * Items are what redis-benchmark's __rand_int__ makes with -r 100000000:
 * 12 decimal digits, zero-padded, of a number below 10^8. Two figures, in
 * ns of thread CPU time per item, each the fastest of ROUNDS rounds:
 *
 *   exists  cf_exists_many() in calls of `batch` random items on a filter
 *           reserved for `fill` with the defaults and holding `fill` items
 *           (what CF.MEXISTS bench item x batch does on bench_server.sh's
 *           `bench` filter);
 *   insert  cf_add_many() in calls of `batch` random items into a fresh
 *           filter reserved for `fill`, until it holds `fill` items (what
 *           CF.INSERT ... ITEMS item x batch does there).
 *
 * Prints "exists NS" and "insert NS", one per line.
 */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "cf.h"

#define ITEM_LEN 12
#define QUERIES 4000000u
#define ROUNDS 3

static double now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return ts.tv_sec * 1e9 + ts.tv_nsec;
}

static uint64_t rng = 0x2545F4914F6CDD1Dull;

static uint64_t next_rand(void)
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return rng;
}

/* n items of ITEM_LEN digits each, back to back; item i is at i*ITEM_LEN. */
static char *make_items(size_t n, bool random, uint64_t mult)
{
    char *s = malloc(n * ITEM_LEN + 1);
    if (s == NULL) {
        fprintf(stderr, "out of memory\n");
        exit(1);
    }
    for (size_t i = 0; i < n; i++) {
        uint64_t v =
            random ? next_rand() % 100000000u : (uint64_t)i * mult % 100000000u;
        snprintf(s + i * ITEM_LEN, ITEM_LEN + 1, "%012llu",
                 (unsigned long long)v);
    }
    return s;
}

static cf_filter_t *new_filter(uint64_t capacity)
{
    cf_params_t p;
    cf_filter_t *f;
    cf_params_default(&p);
    p.capacity = capacity;
    if (cf_create(&p, &f) != 0) {
        fprintf(stderr, "cf_create failed\n");
        exit(1);
    }
    return f;
}

/* The ns per item of one pass over n items in calls of batch. */
static double pass(cf_filter_t *f, const char *items, size_t n, size_t batch,
                   bool insert)
{
    const void **keys = malloc(batch * sizeof(*keys));
    size_t *lens = malloc(batch * sizeof(*lens));
    bool *found = malloc(batch * sizeof(*found));
    int *rcs = malloc(batch * sizeof(*rcs));
    size_t hits = 0;
    if (keys == NULL || lens == NULL || found == NULL || rcs == NULL) {
        fprintf(stderr, "out of memory\n");
        exit(1);
    }
    for (size_t j = 0; j < batch; j++)
        lens[j] = ITEM_LEN;
    double t0 = now_ns();
    for (size_t i = 0; i < n; i += batch) {
        size_t m = n - i < batch ? n - i : batch;
        for (size_t j = 0; j < m; j++)
            keys[j] = items + (i + j) * ITEM_LEN;
        if (insert) {
            cf_add_many(f, m, keys, lens, false, NULL, rcs);
            for (size_t j = 0; j < m; j++)
                hits += rcs[j] == 0;
        } else {
            cf_exists_many(f, m, keys, lens, found);
            for (size_t j = 0; j < m; j++)
                hits += found[j];
        }
    }
    double t = now_ns() - t0;
    free(keys);
    free(lens);
    free(found);
    free(rcs);
    if (insert && hits != n)
        fprintf(stderr, "note: %zu of %zu inserts failed\n", n - hits, n);
    return t / (double)n;
}

int main(int argc, char **argv)
{
    size_t fill = argc > 1 ? strtoull(argv[1], NULL, 10) : 5000000;
    size_t batch = argc > 2 ? strtoull(argv[2], NULL, 10) : 100;
    if (fill == 0 || batch == 0) {
        fprintf(stderr, "usage: bench_bulk [fill] [batch]\n");
        return 2;
    }
    size_t nq = QUERIES;
    char *members = make_items(fill, false, 7919);
    char *queries = make_items(nq, true, 0);
    char *inserts = make_items(fill, true, 0);

    cf_filter_t *f = new_filter(fill);
    pass(f, members, fill, 1000, true);
    double exists = 1e30, insert = 1e30;
    for (int r = 0; r < ROUNDS; r++) {
        double e = pass(f, queries, nq, batch, false);
        exists = e < exists ? e : exists;
        cf_filter_t *g = new_filter(fill);
        double a = pass(g, inserts, fill, batch, true);
        insert = a < insert ? a : insert;
        cf_free(g);
    }
    cf_free(f);
    free(members);
    free(queries);
    free(inserts);
    printf("exists %.1f\ninsert %.1f\n", exists, insert);
    return 0;
}
