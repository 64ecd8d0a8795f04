/*
 * bench_cf - speed and space of the cuckoo core, against the memory floor
 * measured in the same run.
 *
 *   bench_cf [n ...]        (default: 1000000 50000000)
 *
 * For each n and each fingerprint width (8, 12, 16 bits, b = 4): a filter
 * reserved for n is filled with n random 64-bit keys (95% load), then
 * lookups run with 0%, 50% and 100% of the queried keys present, one at a
 * time (cf_exists) and batched (cf_exists_many). The floor is what the
 * memory system allows: 2 independent random cache-line reads per query,
 * batch-prefetched, over an array as large as the filter. Every lookup figure
 * is printed with its ratio to that floor.
 */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>

#include "cf.h"

#define QUERIES 4000000u
#define BATCH 512u

static double now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e9 + ts.tv_nsec;
}

static uint64_t mix(uint64_t z)
{
    z += 0x9E3779B97F4A7C15ull;
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

static volatile uint64_t sink;

/* ns per query for 2 random cache-line reads per query, prefetched in
 * windows of 16 queries, over bytes of memory. */
static double floor_ns(uint64_t bytes, const uint64_t *q, size_t nq)
{
    size_t lines = (size_t)(bytes / 64) + 1;
    /* the same kind of memory the filter's tables get */
    uint64_t *mem = mmap(NULL, lines * 64, PROT_READ | PROT_WRITE,
                         MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (mem == MAP_FAILED)
        return 0;
#ifdef MADV_HUGEPAGE
    madvise(mem, lines * 64, MADV_HUGEPAGE);
#endif
    for (size_t i = 0; i < lines * 8; i++)
        mem[i] = i;
    uint64_t acc = 0;
    double t0 = now_ns();
    for (size_t base = 0; base < nq; base += 16) {
        size_t a[16], b[16];
        size_t w = nq - base < 16 ? nq - base : 16;
        for (size_t j = 0; j < w; j++) {
            uint64_t h = mix(q[base + j]);
            a[j] = (size_t)(((unsigned __int128)h * lines) >> 64);
            b[j] = (size_t)(((unsigned __int128)(h * 31 + 7) * lines) >> 64);
            __builtin_prefetch(&mem[a[j] * 8]);
            __builtin_prefetch(&mem[b[j] * 8]);
        }
        for (size_t j = 0; j < w; j++)
            acc += mem[a[j] * 8] ^ mem[b[j] * 8];
    }
    double dt = now_ns() - t0;
    sink = acc;
    munmap(mem, lines * 64);
    return dt / (double)nq;
}

static double lookup_single(const cf_filter_t *f, const uint64_t *q,
                            size_t nq, uint64_t *hits)
{
    uint64_t n = 0;
    double t0 = now_ns();
    for (size_t i = 0; i < nq; i++)
        n += cf_exists(f, &q[i], sizeof(q[i]));
    double dt = now_ns() - t0;
    *hits = n;
    return dt / (double)nq;
}

static double lookup_batched(const cf_filter_t *f, const uint64_t *q,
                             size_t nq, uint64_t *hits)
{
    const void *ptr[BATCH];
    size_t len[BATCH];
    bool out[BATCH];
    uint64_t n = 0;
    for (size_t j = 0; j < BATCH; j++)
        len[j] = sizeof(uint64_t);
    double t0 = now_ns();
    for (size_t base = 0; base < nq; base += BATCH) {
        size_t w = nq - base < BATCH ? nq - base : BATCH;
        for (size_t j = 0; j < w; j++)
            ptr[j] = &q[base + j];
        cf_exists_many(f, w, ptr, len, out);
        for (size_t j = 0; j < w; j++)
            n += out[j];
    }
    double dt = now_ns() - t0;
    *hits = n;
    return dt / (double)nq;
}

static void run(uint64_t n, uint32_t fp_bits, const uint64_t *keys,
                uint64_t *q)
{
    cf_params_t p;
    cf_params_default(&p);
    p.capacity = n;
    p.fp_bits = fp_bits;
    p.bucket_size = 4;
    p.seed = 1;
    cf_filter_t *f, *g;
    if (cf_create(&p, &f) != 0 || cf_create(&p, &g) != 0) {
        fprintf(stderr, "cf_create failed\n");
        exit(1);
    }
    /* one filter filled by single inserts, one by batched inserts */
    double t0 = now_ns();
    for (uint64_t i = 0; i < n; i++)
        if (cf_add(g, &keys[i], sizeof(keys[i])) != 0) {
            fprintf(stderr, "insert %llu failed\n", (unsigned long long)i);
            exit(1);
        }
    double ins = (now_ns() - t0) / (double)n;
    cf_free(g);
    const void *ptr[BATCH];
    size_t len[BATCH];
    int rc[BATCH];
    for (size_t j = 0; j < BATCH; j++)
        len[j] = sizeof(uint64_t);
    t0 = now_ns();
    for (uint64_t base = 0; base < n; base += BATCH) {
        size_t w = n - base < BATCH ? (size_t)(n - base) : BATCH;
        for (size_t j = 0; j < w; j++)
            ptr[j] = &keys[base + j];
        cf_add_many(f, w, ptr, len, false, rc);
        for (size_t j = 0; j < w; j++)
            if (rc[j] != 0) {
                fprintf(stderr, "batched insert failed\n");
                exit(1);
            }
    }
    double insb = (now_ns() - t0) / (double)n;
    cf_stats_t st;
    cf_stats(f, &st);
    uint64_t table = cf_data_len(f);
    double load = (double)n / ((double)st.nbuckets * 4);

    /* false positives: QUERIES keys never inserted (odd ids) */
    size_t nq = n < QUERIES ? (size_t)n : QUERIES;
    for (size_t i = 0; i < nq; i++)
        q[i] = mix(2 * (uint64_t)i + 1 + (1ull << 62));
    uint64_t fpos;
    lookup_batched(f, q, nq, &fpos);
    double fpr = (double)fpos / (double)nq;
    double fl = floor_ns(table, q, nq);

    printf("n=%-9llu fp=%-2u b=4  load %.3f  %.2f bits/item  fpr %.5f%%  "
           "(bound %.5f%%)\n  insert to 95%% load: single %.1f ns/item, "
           "batched %.1f ns/item\n",
           (unsigned long long)n, fp_bits, load, table * 8.0 / (double)n,
           fpr * 100, cf_error_bound(4, fp_bits) * 100, ins, insb);
    printf("  floor (2 random lines/query, prefetched): %.2f ns\n", fl);
    static const int pct[] = {0, 50, 100};
    for (int k = 0; k < 3; k++) {
        /* query set: pct% members (even ids = inserted keys) */
        for (size_t i = 0; i < nq; i++) {
            bool member = (mix(i ^ 0xABCD) % 100) < (uint64_t)pct[k];
            q[i] = member ? keys[mix(i) % n]
                          : mix(2 * (uint64_t)i + 1 + (1ull << 62));
        }
        uint64_t h1, h2;
        double s = lookup_single(f, q, nq, &h1);
        double b = lookup_batched(f, q, nq, &h2);
        if (h1 != h2) {
            fprintf(stderr, "single and batched lookups disagree\n");
            exit(1);
        }
        printf("  lookup %3d%% positive: single %6.2f ns (%.2fx floor)  "
               "batched %6.2f ns (%.2fx floor)\n",
               pct[k], s, s / fl, b, b / fl);
    }
    cf_free(f);
}

int main(int argc, char **argv)
{
    uint64_t sizes[8] = {1000000, 50000000};
    int nsizes = 2;
    if (argc > 1) {
        nsizes = 0;
        for (int i = 1; i < argc && nsizes < 8; i++)
            sizes[nsizes++] = strtoull(argv[i], NULL, 10);
    }
    for (int s = 0; s < nsizes; s++) {
        uint64_t n = sizes[s];
        uint64_t *keys = malloc(n * sizeof(*keys));
        uint64_t *q = malloc((n < QUERIES ? n : QUERIES) * sizeof(*q));
        if (keys == NULL || q == NULL) {
            fprintf(stderr, "out of memory\n");
            return 1;
        }
        for (uint64_t i = 0; i < n; i++)
            keys[i] = mix(2 * i); /* even ids are members */
        for (uint32_t fp = 8; fp <= 16; fp += 4)
            run(n, fp, keys, q);
        free(keys);
        free(q);
    }
    return 0;
}
