/*
 * bench_cf - speed and space of the cuckoo core, against the memory floor
 * measured in the same run.
 *
 *   bench_cf [n ...]        (default: 1000000 50000000)
 *
 * For each n and each encoding at b = 4 (plain 8, 12, 16 bits; semi-sorted
 * 9, 13, 17 bits): a filter reserved for n is filled with n random 64-bit
 * keys (95% load), one at a time (cf_add) and, in a second filter, batched
 * (cf_add_many); then lookups run with 0%, 50% and 100% of the queried keys
 * present, one at a time (cf_exists) and batched (cf_exists_many). The floor
 * is what the memory system allows: 2 independent random cache-line reads
 * per query, batch-prefetched, over an array as large as the filter.
 *
 * The machine may be shared, so times are the thread's CPU time, every
 * lookup figure and the floor are the fastest of ROUNDS rounds that
 * interleave them, and the figures are compared as ratios taken in the
 * same run. At the end each target (lookup cost against the floor, bits
 * per item, false-positive bound) is printed beside its figure with "ok"
 * or "MISSED".
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
#define MAXLOAD_N 1000000u
#define MAXLOAD_SEEDS 3
#define BATCH 512u
#define ROUNDS 3

/* The thread's CPU time, not the wall clock: on a shared machine the time
 * the benchmark spends descheduled is not the filter's. */
static double now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
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

typedef struct floor_mem {
    uint64_t *mem;
    size_t lines;
} floor_mem_t;

/* An array as large as the filter, of the same kind of memory the
 * filter's tables get. */
static floor_mem_t floor_alloc(uint64_t bytes)
{
    floor_mem_t m = {.lines = (size_t)(bytes / 64) + 1};
    m.mem = mmap(NULL, m.lines * 64, PROT_READ | PROT_WRITE,
                 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (m.mem == MAP_FAILED) {
        fprintf(stderr, "out of memory\n");
        exit(1);
    }
#ifdef MADV_HUGEPAGE
    madvise(m.mem, m.lines * 64, MADV_HUGEPAGE);
#endif
    for (size_t i = 0; i < m.lines * 8; i++)
        m.mem[i] = i;
    return m;
}

/* ns per query for 2 random cache-line reads per query, prefetched in
 * windows of 16 queries. */
static double floor_ns(const floor_mem_t *m, const uint64_t *q, size_t nq)
{
    const uint64_t *mem = m->mem;
    size_t lines = m->lines;
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
    return dt / (double)nq;
}

static double lookup_single(const cf_filter_t *f, const uint64_t *q, size_t nq,
                            uint64_t *hits)
{
    uint64_t n = 0;
    double t0 = now_ns();
    for (size_t i = 0; i < nq; i++)
        n += cf_exists(f, &q[i], sizeof(q[i]));
    double dt = now_ns() - t0;
    *hits = n;
    return dt / (double)nq;
}

static double lookup_batched(const cf_filter_t *f, const uint64_t *q, size_t nq,
                             uint64_t *hits)
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

static double min2(double a, double b)
{
    return a < b ? a : b;
}

typedef struct enc {
    uint32_t encoding, fp_bits;
    const char *name;
} enc_t;

static const enc_t encs[] = {
    {CF_ENC_PLAIN, 8, "plain-8"},   {CF_ENC_SEMISORTED, 9, "ss-9"},
    {CF_ENC_PLAIN, 12, "plain-12"}, {CF_ENC_SEMISORTED, 13, "ss-13"},
    {CF_ENC_PLAIN, 16, "plain-16"}, {CF_ENC_SEMISORTED, 17, "ss-17"},
};
#define NENC (sizeof(encs) / sizeof(encs[0]))
#define PLAIN12 2
#define SS13 3

static const int pct[] = {0, 50, 100};

typedef struct result {
    double bits, fpr, bound, ins1, insb, floor, single[3], batched[3];
    double versus[3];  /* ss-13 only: batched / plain-12 batched, head to
                          head */
    double maxload[2]; /* lowest and mean load at the first failure */
    bool ran;
    cf_filter_t *f; /* kept for the head-to-head of plain-12 and ss-13 */
} result_t;

static void run(uint64_t n, const enc_t *e, const uint64_t *keys, uint64_t *q,
                result_t *r)
{
    cf_params_t p;
    cf_params_default(&p);
    p.capacity = n;
    p.fp_bits = e->fp_bits;
    p.encoding = e->encoding;
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
    r->ins1 = (now_ns() - t0) / (double)n;
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
        cf_add_many(f, w, ptr, len, false, NULL, rc);
        for (size_t j = 0; j < w; j++)
            if (rc[j] != 0) {
                fprintf(stderr, "batched insert failed\n");
                exit(1);
            }
    }
    r->insb = (now_ns() - t0) / (double)n;
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
    r->fpr = (double)fpos / (double)nq;
    r->bound = cf_error_bound(4, e->fp_bits);
    r->bits = table * 8.0 / (double)n;

    floor_mem_t fm = floor_alloc(table);
    r->floor = 1e30;
    for (int k = 0; k < 3; k++) {
        /* query set: pct% members (even ids = inserted keys) */
        for (size_t i = 0; i < nq; i++) {
            bool member = (mix(i ^ 0xABCD) % 100) < (uint64_t)pct[k];
            q[i] = member ? keys[mix(i) % n]
                          : mix(2 * (uint64_t)i + 1 + (1ull << 62));
        }
        r->single[k] = r->batched[k] = 1e30;
        for (int round = 0; round < ROUNDS; round++) {
            uint64_t h1, h2;
            r->floor = min2(r->floor, floor_ns(&fm, q, nq));
            r->single[k] = min2(r->single[k], lookup_single(f, q, nq, &h1));
            r->batched[k] = min2(r->batched[k], lookup_batched(f, q, nq, &h2));
            if (h1 != h2) {
                fprintf(stderr, "single and batched lookups disagree\n");
                exit(1);
            }
        }
    }
    munmap(fm.mem, fm.lines * 64);

    printf("n=%-9llu %-8s b=4  load %.3f  %.2f bits/item  fpr %.5f%%  "
           "(bound %.5f%%)\n  insert to 95%% load: single %.1f ns/item, "
           "batched %.1f ns/item\n",
           (unsigned long long)n, e->name, load, r->bits, r->fpr * 100,
           r->bound * 100, r->ins1, r->insb);
    printf("  floor (2 random lines/query, prefetched): %.2f ns\n", r->floor);
    for (int k = 0; k < 3; k++)
        printf("  lookup %3d%% positive: single %6.2f ns (%.2fx floor)  "
               "batched %6.2f ns (%.2fx floor)\n",
               pct[k], r->single[k], r->single[k] / r->floor, r->batched[k],
               r->batched[k] / r->floor);
    fflush(stdout);
    r->f = f;
}

/* The load at which the first insert fails, for a filter that never grows:
 * the lowest and the mean over MAXLOAD_SEEDS seeds. */
static void max_load(const enc_t *e, double out[2])
{
    out[0] = 1;
    out[1] = 0;
    for (uint64_t seed = 1; seed <= MAXLOAD_SEEDS; seed++) {
        cf_params_t p;
        cf_params_default(&p);
        p.capacity = MAXLOAD_N;
        p.fp_bits = e->fp_bits;
        p.encoding = e->encoding;
        p.bucket_size = 4;
        p.expansion = 0;
        p.seed = seed;
        cf_filter_t *f;
        if (cf_create(&p, &f) != 0) {
            fprintf(stderr, "cf_create failed\n");
            exit(1);
        }
        uint64_t i = 0, k = mix(seed << 40);
        while (cf_add(f, &k, sizeof(k)) == 0)
            k = mix((seed << 40) + ++i);
        cf_stats_t st;
        cf_stats(f, &st);
        double load = (double)i / ((double)st.nbuckets * 4);
        out[0] = min2(out[0], load);
        out[1] += load / MAXLOAD_SEEDS;
        cf_free(f);
    }
}

/* Batched lookups of ss-13 against plain-12, in rounds that alternate the
 * two, so that both see the same machine: sizes are the same, so the
 * memory behind them is too. */
static void head_to_head(uint64_t n, const uint64_t *keys, uint64_t *q,
                         result_t *res)
{
    size_t nq = n < QUERIES ? (size_t)n : QUERIES;
    for (int k = 0; k < 3; k++) {
        for (size_t i = 0; i < nq; i++) {
            bool member = (mix(i ^ 0xABCD) % 100) < (uint64_t)pct[k];
            q[i] = member ? keys[mix(i) % n]
                          : mix(2 * (uint64_t)i + 1 + (1ull << 62));
        }
        double pl = 1e30, ss = 1e30;
        for (int round = 0; round < ROUNDS; round++) {
            uint64_t h;
            pl = min2(pl, lookup_batched(res[PLAIN12].f, q, nq, &h));
            ss = min2(ss, lookup_batched(res[SS13].f, q, nq, &h));
        }
        res[SS13].versus[k] = ss / pl;
    }
}

static int missed;

/* One line per target: the figure, the target, and whether it holds. */
static void target(const char *what, double v, const char *unit, double lim)
{
    bool ok = v <= lim;
    missed += !ok;
    printf("  %-54s %8.3f%-2s  target <= %.3f%-2s  %s\n", what, v, unit, lim,
           unit, ok ? "ok" : "MISSED");
}

static void targets(uint64_t n, const result_t *res)
{
    const result_t *pl = &res[PLAIN12], *ss = &res[SS13];
    char what[96];
    printf("targets at n=%llu (ratios within this run; lookups and floor "
           "the best of %d rounds):\n",
           (unsigned long long)n, ROUNDS);
    if (!pl->ran)
        goto space;
    for (int k = 0; k < 3; k++) {
        snprintf(what, sizeof(what), "plain-12 batched lookup %d%% / floor",
                 pct[k]);
        target(what, pl->batched[k] / pl->floor, "x", 1.3);
    }
    target("plain-12 batched lookup 50% / 0%", pl->batched[1] / pl->batched[0],
           "x", 1.1);
    if (n >= 50000000) {
        target("plain-12 insert to 95%, batched", pl->insb, "ns", 60);
        target("plain-12 insert to 95%, one at a time", pl->ins1, "ns", 90);
    } else {
        printf("  plain-12 insert to 95%%: batched %.1f ns, one at a time "
               "%.1f ns (targets at 50M: <= 60, <= 90)\n",
               pl->insb, pl->ins1);
    }
    if (ss->ran)
        for (int k = 0; k < 3; k++) {
            snprintf(what, sizeof(what),
                     "ss-13 / plain-12 batched lookup, %d%% (alternated)",
                     pct[k]);
            target(what, ss->versus[k], "x", 1.25);
        }
space:
    if (ss->ran) {
        target("ss-13 bits/item", ss->bits, "", 12.7);
        target("ss-13 false-positive rate (%)", ss->fpr * 100, "", 0.1);
    }
    printf("  space, false positives (b=4, 95%% load) and the load of the "
           "first failure (capacity %u, no growth, %d seeds):\n",
           MAXLOAD_N, MAXLOAD_SEEDS);
    for (size_t i = 0; i < NENC; i++)
        if (res[i].ran)
            printf("    %-8s %6.2f bits/item  fpr %.5f%%  bound %.5f%%  "
                   "max load %.4f (lowest %.4f)\n",
                   encs[i].name, res[i].bits, res[i].fpr * 100,
                   res[i].bound * 100, res[i].maxload[1], res[i].maxload[0]);
    fflush(stdout);
}

/* In CF_ENCODINGS (a comma-separated list of names), or every encoding
 * when it is unset. */
static bool selected(const enc_t *e)
{
    const char *list = getenv("CF_ENCODINGS");
    if (list == NULL || *list == '\0')
        return true;
    size_t len = strlen(e->name);
    for (const char *p = list; (p = strstr(p, e->name)) != NULL; p += len)
        if ((p == list || p[-1] == ',') && (p[len] == ',' || p[len] == '\0'))
            return true;
    return false;
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
        result_t res[NENC];
        memset(res, 0, sizeof(res));
        for (size_t e = 0; e < NENC; e++)
            if (selected(&encs[e])) {
                run(n, &encs[e], keys, q, &res[e]);
                max_load(&encs[e], res[e].maxload);
                res[e].ran = true;
            }
        if (res[PLAIN12].ran && res[SS13].ran)
            head_to_head(n, keys, q, res);
        for (size_t e = 0; e < NENC; e++)
            cf_free(res[e].f);
        targets(n, res);
        free(keys);
        free(q);
    }
    printf("%s\n", missed ? "some targets missed" : "all targets met");
    return 0;
}
