/*
 * bench_grow_core.c - the growable shape as wired into filter/ (cf.h with
 * cf_params_t.growable), measured for the growth issue's list:
 *
 *   bench_grow_core grow [N [C [Q [R]]]]
 *                                  reserve C, add N distinct items: buckets
 *                                  read per lookup, false-positive rate,
 *                                  bits per item (at the end and the most
 *                                  over the run after the reserve), every
 *                                  item looked up once (false negatives),
 *                                  then batched lookups (50% present)
 *                                  against a fixed filter (the default
 *                                  12-bit shape, b = 4) and a growable one
 *                                  reserved for N from the start, in R
 *                                  (5) alternated rounds of Q (4M) lookups,
 *                                  thread CPU time
 *   bench_grow_core look [N [- [Q [R]]]]
 *                                  lookups only: a growable and a fixed
 *                                  filter reserved for N, as in grow
 *   bench_grow_core ops [OPS [C]]  random adds and deletes against an exact
 *                                  multiset from a reserve of C: false
 *                                  negatives and deletes that found nothing
 *   bench_grow_core insert [N [B [- [R]]]]
 *                                  inserts: a growable and a fixed filter
 *                                  (the default 12-bit shape, b = 4) both
 *                                  reserved for N, each filled to N by
 *                                  cf_add_many() in batches of B (100, as
 *                                  CF.INSERT x100) and by cf_add() one at a
 *                                  time, in R (5) alternated rounds: ns per
 *                                  item to half the capacity and over the
 *                                  second half, thread CPU time
 *   bench_grow_core lines [BYTES [W [R]]]
 *                                  the floor under an insert: random cache
 *                                  lines of a table of BYTES (23.5 MB, a
 *                                  growable filter reserved for 10M),
 *                                  in huge pages and in 4 KiB ones, touched
 *                                  first, each prefetched W (16) lines
 *                                  ahead, then read, or read and written
 *                                  back as an insert's store does; ns per
 *                                  line, the best of R (5) rounds of 20M
 *
 * Defaults: N = 100000000, C = 100000; OPS = 100000000, C = 1000;
 * insert: N = 10000000.
 * Every figure line carries the load average when it was printed.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>

#include "cf.h"
#include "cf_grow.h"

/* Thread CPU time: the machine is shared. */
static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static const char *load_avg(void)
{
    static char buf[64];
    FILE *f = fopen("/proc/loadavg", "r");
    buf[0] = '\0';
    if (f != NULL) {
        if (fgets(buf, sizeof(buf), f) == NULL)
            buf[0] = '\0';
        fclose(f);
    }
    char *sp = buf;
    for (int i = 0; i < 3 && sp != NULL; i++)
        sp = strchr(sp + 1, ' ');
    if (sp != NULL)
        *sp = '\0';
    return buf;
}

static uint64_t mix(uint64_t x)
{
    x ^= x >> 31;
    x *= 0xBF58476D1CE4E5B9ull;
    x ^= x >> 29;
    x *= 0x94D049BB133111EBull;
    return x ^ (x >> 32);
}

#define ABSENT (1ull << 63)
static size_t QN = 4000000; /* lookups per timed round */
#define BATCH 1000
#define MAX_ROUNDS 15
static int rounds = 5; /* alternated timed rounds (odd: a true median) */

/* AnonHugePages and Rss of the process, kB: how much of the tables
 * transparent huge pages back (deltas between filters are theirs). */
static void huge_kb(uint64_t *huge, uint64_t *rss)
{
    char line[256];
    FILE *f = fopen("/proc/self/smaps_rollup", "r");
    *huge = *rss = 0;
    if (f == NULL)
        return;
    while (fgets(line, sizeof(line), f) != NULL) {
        unsigned long long v;
        if (sscanf(line, "AnonHugePages: %llu", &v) == 1)
            *huge = v;
        else if (sscanf(line, "Rss: %llu", &v) == 1)
            *rss = v;
    }
    fclose(f);
}

static cf_filter_t *make(uint64_t cap, bool growable)
{
    cf_params_t p;
    cf_params_default(&p);
    p.capacity = cap;
    p.seed = 42;
    p.growable = growable;
    p.expansion = growable ? 2 : 0;
    cf_filter_t *f;
    if (cf_create(&p, &f) != 0) {
        fprintf(stderr, "cf_create failed\n");
        exit(2);
    }
    return f;
}

static int fill(cf_filter_t *f, uint64_t n, uint64_t c, double *max_bpi)
{
    for (uint64_t i = 0; i < n; i++) {
        int rc = cf_add(f, &i, 8);
        if (rc != 0) {
            fprintf(stderr, "add %" PRIu64 " failed: %d\n", i, rc);
            return -1;
        }
        if (max_bpi != NULL && i >= c && (i & 0xFFFF) == 0) {
            double b = (double)cf_size_bytes(f) * 8 / (double)(i + 1);
            if (b > *max_bpi)
                *max_bpi = b;
        }
    }
    return 0;
}

static int cmp_d(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

/* The QN timed lookups of grow and look: every other one an item in
 * (of the N filled), the rest absent. */
typedef struct queries {
    uint64_t *keys;
    const void **kp;
    size_t *lens;
    bool *out;
} queries_t;

static void queries_free(queries_t *q)
{
    free(q->keys);
    free(q->kp);
    free(q->lens);
    free(q->out);
}

static int queries_make(queries_t *q, uint64_t n)
{
    q->keys = malloc(QN * sizeof(*q->keys));
    q->kp = malloc(QN * sizeof(*q->kp));
    q->lens = malloc(QN * sizeof(*q->lens));
    q->out = malloc(QN);
    if (q->keys == NULL || q->kp == NULL || q->lens == NULL || q->out == NULL) {
        queries_free(q);
        return -1;
    }
    for (size_t i = 0; i < QN; i++) {
        uint64_t x = mix(12345 + i);
        q->keys[i] = (i & 1) ? (x % n) : (ABSENT | x);
        q->kp[i] = &q->keys[i];
        q->lens[i] = 8;
    }
    return 0;
}

static double lookups(const cf_filter_t *f, const void **kp, const size_t *lens,
                      bool *out, double *hits)
{
    double t0 = now();
    for (size_t i = 0; i < QN; i += BATCH)
        cf_exists_many(f, BATCH, kp + i, lens + i, out + i);
    double t = now() - t0;
    for (size_t i = 0; i < QN; i++)
        *hits += out[i];
    return t;
}

static int grow(uint64_t n, uint64_t c)
{
    cf_filter_t *g = make(c, true);
    double max_bpi = 0, t0 = now();
    if (fill(g, n, c, &max_bpi) != 0)
        return 1;
    double t_grow = now() - t0;
    cf_grow_info_t gi;
    cf_grow_info(g, &gi);
    uint64_t hg, rg, hf, rf0, hr, rr0;
    huge_kb(&hg, &rg);
    printf("grow: reserve %" PRIu64 " (%" PRIu64 " buckets), %" PRIu64
           " distinct adds in %.1f s CPU (%.2fM/s) [load %s]\n",
           c, gi.n0, n, t_grow, (double)n / t_grow / 1e6, load_avg());
    printf("  buckets %" PRIu64 " (level %" PRIu64 ", split %" PRIu64
           "), load %.4f, forced splits %" PRIu64 ", voids %" PRIu64
           ", stashed %" PRIu64 "\n",
           gi.nbuckets, gi.level, gi.split,
           (double)gi.entries / (double)(gi.nbuckets * 4), gi.forced, gi.voids,
           gi.stashed);

    /* The buckets a lookup reads are the two cf_grow_buckets() computes
     * (the lookup code reads nothing else of the table): counted, as
     * distinct buckets per item, over 1M absent items. */
    uint64_t reads = 0, most = 0, fp = 0;
    for (uint64_t i = 0; i < 1000000; i++) {
        uint64_t k = ABSENT | i, b[2];
        cf_grow_buckets(g, &k, 8, b);
        uint64_t r = 1 + (b[0] != b[1]);
        reads += r;
        most = r > most ? r : most;
        fp += cf_exists(g, &k, 8);
    }
    /* every item added, looked up once (batched) */
    uint64_t lost = 0;
    enum { LB = 4096 };
    static uint64_t lk[LB];
    static const void *lkp[LB];
    static size_t llen[LB];
    static bool lout[LB];
    for (uint64_t i = 0; i < n; i += LB) {
        size_t m = n - i < LB ? (size_t)(n - i) : LB;
        for (size_t j = 0; j < m; j++) {
            lk[j] = i + j;
            lkp[j] = &lk[j];
            llen[j] = 8;
        }
        cf_exists_many(g, m, lkp, llen, lout);
        for (size_t j = 0; j < m; j++)
            lost += !lout[j];
    }
    double bpi = (double)cf_size_bytes(g) * 8 / (double)n;
    printf("  buckets read per lookup: mean %.3f, most %" PRIu64
           " (counted over 1M lookups)\n",
           (double)reads / 1e6, most);
    printf("  FPR at the end %.4f%% (1M absent items; target <= 0.25%%: %s)\n",
           (double)fp / 1e4, fp <= 2500 ? "met" : "MISSED");
    printf("  bits/item at the end %.2f, most over the run after the reserve "
           "%.2f (target <= 24: %s)\n",
           bpi, max_bpi, bpi <= 24 ? "met" : "MISSED");
    printf("  false negatives: %" PRIu64 " of %" PRIu64 " items added\n", lost,
           n);

    cf_filter_t *fx = make(n, false), *gr = make(n, true);
    t0 = now();
    if (fill(fx, n, 0, NULL) != 0)
        return 1;
    double t_fx = now() - t0;
    huge_kb(&hf, &rf0);
    t0 = now();
    if (fill(gr, n, 0, NULL) != 0)
        return 1;
    double t_gr = now() - t0;
    huge_kb(&hr, &rr0);
    printf("  inserts/s: grown %.2fM, fixed 12-bit reserved %.2fM (%.2fx), "
           "growable reserved %.2fM [load %s]\n",
           (double)n / t_grow / 1e6, (double)n / t_fx / 1e6, t_grow / t_fx,
           (double)n / t_gr / 1e6, load_avg());
    printf("  huge pages (AnonHugePages / Rss, MiB): grown %.0f / %.0f, fixed "
           "12-bit reserved %.0f / %.0f, growable reserved %.0f / %.0f\n",
           hg / 1024.0, rg / 1024.0, (hf - hg) / 1024.0, (rf0 - rg) / 1024.0,
           (hr - hf) / 1024.0, (rr0 - rf0) / 1024.0);

    queries_t qs;
    if (queries_make(&qs, n) != 0)
        return 2;
    const void **kp = qs.kp;
    const size_t *lens = qs.lens;
    bool *out = qs.out;
    double tg[MAX_ROUNDS], tf[MAX_ROUNDS], tr[MAX_ROUNDS], rf[MAX_ROUNDS],
        rr[MAX_ROUNDS], hits = 0;
    const int R = rounds, M = rounds / 2;
    for (int round = 0; round < R; round++) {
        tg[round] = lookups(g, kp, lens, out, &hits);
        tf[round] = lookups(fx, kp, lens, out, &hits);
        tr[round] = lookups(gr, kp, lens, out, &hits);
        rf[round] = tg[round] / tf[round];
        rr[round] = tg[round] / tr[round];
    }
    qsort(tg, (size_t)R, sizeof(double), cmp_d);
    qsort(tf, (size_t)R, sizeof(double), cmp_d);
    qsort(tr, (size_t)R, sizeof(double), cmp_d);
    qsort(rf, (size_t)R, sizeof(double), cmp_d);
    qsort(rr, (size_t)R, sizeof(double), cmp_d);
    printf("  batched lookups/s (median of %d alternated rounds of %zu, 50%% "
           "present): grown %.2fM, fixed 12-bit reserved %.2fM, growable "
           "reserved %.2fM [load %s]\n",
           R, QN, QN / tg[M] / 1e6, QN / tf[M] / 1e6, QN / tr[M] / 1e6,
           load_avg());
    printf("  lookup time grown/fixed: median %.2f (range %.2f-%.2f; target "
           "<= 1.3: %s); grown/growable reserved: median %.2f (range "
           "%.2f-%.2f) [%.0f hits]\n",
           rf[M], rf[0], rf[R - 1], rf[M] <= 1.3 ? "met" : "MISSED", rr[M],
           rr[0], rr[R - 1], hits);
    printf("  bits/item of the fixed 12-bit filter reserved for N: %.2f\n",
           (double)cf_size_bytes(fx) * 8 / (double)n);
    queries_free(&qs);
    cf_free(fx);
    cf_free(gr);
    cf_free(g);
    return lost != 0;
}

/* Lookups only, for tuning: a growable and a fixed filter both reserved
 * for N and filled with N items (growth itself costs the lookups next to
 * nothing: see grow's grown/growable reserved ratio), compared as in
 * grow. */
static int look(uint64_t n)
{
    cf_filter_t *fx = make(n, false), *gr = make(n, true);
    if (fill(fx, n, 0, NULL) != 0 || fill(gr, n, 0, NULL) != 0)
        return 1;
    queries_t qs;
    if (queries_make(&qs, n) != 0)
        return 2;
    const void **kp = qs.kp;
    const size_t *lens = qs.lens;
    bool *out = qs.out;
    double tf[MAX_ROUNDS], tr[MAX_ROUNDS], rf[MAX_ROUNDS], hits = 0;
    const int R = rounds, M = rounds / 2;
    for (int round = 0; round < R; round++) {
        tr[round] = lookups(gr, kp, lens, out, &hits);
        tf[round] = lookups(fx, kp, lens, out, &hits);
        rf[round] = tr[round] / tf[round];
    }
    qsort(tf, (size_t)R, sizeof(double), cmp_d);
    qsort(tr, (size_t)R, sizeof(double), cmp_d);
    qsort(rf, (size_t)R, sizeof(double), cmp_d);
    printf("look %" PRIu64 ": batched lookups/s (median of %d alternated "
           "rounds of %zu): growable reserved %.2fM, fixed 12-bit reserved "
           "%.2fM; time growable/fixed median %.2f (range %.2f-%.2f) [%.0f "
           "hits] [load %s]\n",
           n, R, QN, QN / tr[M] / 1e6, QN / tf[M] / 1e6, rf[M], rf[0],
           rf[R - 1], hits, load_avg());
    queries_free(&qs);
    cf_free(fx);
    cf_free(gr);
    return 0;
}

/* Random adds (a few of items already in), deletes of items in, and
 * lookups, against an exact multiset; every item in is looked up at
 * every power-of-two operation. Deletes of items never added are not
 * made: in any cuckoo filter they may take another item's entry. */
static int ops(uint64_t nops, uint64_t c)
{
    cf_filter_t *f = make(c, true);
    uint64_t *live = malloc(nops * sizeof(*live)), nlive = 0, next = 0;
    uint64_t fn = 0, delmiss = 0, checks = 0, maxlive = 0, refused = 0;
    if (live == NULL)
        return 2;
    double t0 = now();
    for (uint64_t op = 0; op < nops; op++) {
        uint64_t x = mix(op * 0x9E3779B97F4A7C15ull + 7);
        unsigned r = (unsigned)(x % 100);
        if (r < 60 || nlive == 0) {
            uint64_t k = (r < 3 && nlive) ? live[(x >> 8) % nlive] : next++;
            int rc = cf_add(f, &k, 8);
            if (rc == -EOVERFLOW) {
                refused++; /* full while the stash is held: not added */
                continue;
            }
            if (rc != 0) {
                fprintf(stderr, "add failed (%d) at op %" PRIu64 "\n", rc, op);
                return 1;
            }
            live[nlive++] = k;
        } else if (r < 97) {
            uint64_t i = (x >> 8) % nlive, k = live[i];
            delmiss += cf_del(f, &k, 8) != 1;
            live[i] = live[--nlive];
        } else {
            fn += !cf_exists(f, &live[(x >> 8) % nlive], 8);
            checks++;
        }
        maxlive = nlive > maxlive ? nlive : maxlive;
        if ((op & (op - 1)) == 0 || op == nops - 1) {
            for (uint64_t i = 0; i < nlive; i++)
                fn += !cf_exists(f, &live[i], 8);
            checks += nlive;
        }
    }
    double t = now() - t0;
    cf_grow_info_t gi;
    cf_grow_info(f, &gi);
    printf("ops: %" PRIu64 " random adds/deletes/lookups from a reserve of "
           "%" PRIu64 " in %.1f s CPU: %" PRIu64 " items in at the end (most "
           "%" PRIu64 "), level %" PRIu64 ", voids %" PRIu64
           ", forced splits %" PRIu64 "; %" PRIu64
           " lookups of items in: %" PRIu64 " false negatives; %" PRIu64
           " deletes of items in found nothing; %" PRIu64
           " adds refused [load %s]\n",
           nops, c, t, nlive, maxlive, gi.level, gi.voids, gi.forced, checks,
           fn, delmiss, refused, load_avg());
    free(live);
    cf_free(f);
    return fn != 0 || delmiss != 0;
}

/* One fill of a new filter reserved for n: seconds of thread CPU time to
 * n / 2 items and for the rest, batched (b items a call) or one at a
 * time (b = 0). */
static void fill_timed(uint64_t n, bool growable, size_t b, double t[2])
{
    cf_filter_t *f = make(n, growable);
    static uint64_t k[BATCH];
    static const void *kp[BATCH];
    static size_t lens[BATCH];
    static int rc[BATCH];
    uint64_t refused = 0;
    for (size_t j = 0; j < BATCH; j++) {
        kp[j] = &k[j];
        lens[j] = 8;
    }
    for (int half = 0; half < 2; half++) {
        uint64_t lo = half ? n / 2 : 0, hi = half ? n : n / 2;
        double t0 = now();
        if (b == 0) {
            for (uint64_t i = lo; i < hi; i++) {
                uint64_t key = mix(i);
                refused += cf_add(f, &key, 8) != 0;
            }
        } else {
            for (uint64_t i = lo; i < hi; i += b) {
                size_t m = hi - i < b ? (size_t)(hi - i) : b;
                for (size_t j = 0; j < m; j++)
                    k[j] = mix(i + j);
                cf_add_many(f, m, kp, lens, false, NULL, rc);
                for (size_t j = 0; j < m; j++)
                    refused += rc[j] != 0;
            }
        }
        t[half] = now() - t0;
    }
    if (refused != 0)
        fprintf(stderr, "insert: %" PRIu64 " adds refused\n", refused);
    cf_free(f);
}

/* Sorts v (n values) and returns the middle one. */
static double median(double *v, int n)
{
    qsort(v, (size_t)n, sizeof(double), cmp_d);
    return v[n / 2];
}

static int insert(uint64_t n, size_t b)
{
    if (b < 1 || b > BATCH)
        b = 100;
    /* growable batched, fixed batched, growable single, fixed single */
    static const char *name[4] = {"growable batched", "fixed batched",
                                  "growable single", "fixed single"};
    double t[4][2][MAX_ROUNDS], ratio[2][2][MAX_ROUNDS];
    const int R = rounds;
    for (int round = 0; round < R; round++) {
        for (int v = 0; v < 4; v++) {
            double x[2];
            fill_timed(n, v % 2 == 0, v < 2 ? b : 0, x);
            t[v][0][round] = x[0];
            t[v][1][round] = x[1];
        }
        for (int h = 0; h < 2; h++) {
            ratio[0][h][round] = t[0][h][round] / t[1][h][round];
            ratio[1][h][round] = t[2][h][round] / t[3][h][round];
        }
        printf("insert round %d: ns/item (to half | second half):", round + 1);
        for (int v = 0; v < 4; v++)
            printf(" %s %.1f | %.1f;", name[v],
                   t[v][0][round] * 1e9 / (double)(n / 2),
                   t[v][1][round] * 1e9 / (double)(n - n / 2));
        printf(" [load %s]\n", load_avg());
    }
    printf("insert %" PRIu64 " (reserved for N, filled to N; batches of %zu; "
           "median of %d alternated rounds, thread CPU):\n",
           n, b, R);
    for (int v = 0; v < 4; v++) {
        double a = median(t[v][0], R), c = median(t[v][1], R);
        printf("  %-17s %6.1f ns/item to half, %6.1f over the second half, "
               "%6.1f in all\n",
               name[v], a * 1e9 / (double)(n / 2),
               c * 1e9 / (double)(n - n / 2), (a + c) * 1e9 / (double)n);
    }
    for (int k = 0; k < 2; k++) {
        double m0 = median(ratio[k][0], R), m1 = median(ratio[k][1], R);
        printf("  growable/fixed %s: %.2f to half (range %.2f-%.2f), %.2f over "
               "the second half (range %.2f-%.2f)\n",
               k ? "single " : "batched", m0, ratio[k][0][0],
               ratio[k][0][R - 1], m1, ratio[k][1][0], ratio[k][1][R - 1]);
    }
    printf("  [load %s]\n", load_avg());
    return 0;
}

/* One round of lines(): n random lines of t (nl lines of 64 bytes),
 * each prefetched w ahead; store: each word read written back, one bit
 * changed. Returns the sum of the words read (kept live). */
static uint64_t lines_round(uint64_t *t, uint64_t nl, uint64_t n, size_t w,
                            bool store, double *sec)
{
    uint64_t x = 0x9E3779B97F4A7C15ull, sum = 0, ring[64];
    for (size_t k = 0; k < w; k++) {
        x ^= x << 13, x ^= x >> 7, x ^= x << 17;
        ring[k] = (uint64_t)(((unsigned __int128)x * nl) >> 64) * 8;
        __builtin_prefetch(&t[ring[k]], 0, 3);
    }
    double t0 = now();
    for (uint64_t i = 0; i < n; i++) {
        size_t r = (size_t)(i % w);
        uint64_t at = ring[r];
        x ^= x << 13, x ^= x >> 7, x ^= x << 17;
        ring[r] = (uint64_t)(((unsigned __int128)x * nl) >> 64) * 8;
        __builtin_prefetch(&t[ring[r]], 0, 3);
        uint64_t v = t[at];
        sum += v;
        if (store)
            t[at] = v ^ 1;
    }
    *sec = now() - t0;
    return sum;
}

/* lines() on one table: huge pages hinted (MADV_HUGEPAGE) or refused
 * (MADV_NOHUGEPAGE, the 4 KiB pages a table gets where the kernel gives
 * no huge page). best[0]: ns per line read, best[1]: read and written. */
static int lines_on(uint64_t bytes, size_t w, bool huge, double best[2])
{
    uint64_t nl = bytes / 64 ? bytes / 64 : 1;
    size_t len = (size_t)(nl * 64);
    uint64_t *t = mmap(NULL, len, PROT_READ | PROT_WRITE,
                       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (t == MAP_FAILED) {
        perror("mmap");
        return -1;
    }
#if defined(MADV_HUGEPAGE) && defined(MADV_NOHUGEPAGE)
    (void)madvise(t, len, huge ? MADV_HUGEPAGE : MADV_NOHUGEPAGE);
#else
    (void)huge;
#endif
    memset(t, 1, len);
    const uint64_t n = 20000000;
    uint64_t sum = 0;
    best[0] = best[1] = 1e9;
    for (int round = 0; round < rounds; round++)
        for (int st = 0; st < 2; st++) {
            double sec;
            sum += lines_round(t, nl, n, w, st == 1, &sec);
            if (sec * 1e9 / (double)n < best[st])
                best[st] = sec * 1e9 / (double)n;
        }
    munmap(t, len);
    return (int)(sum & 1);
}

static int lines(uint64_t bytes, size_t w)
{
    if (w < 1 || w > 64)
        w = 16;
    for (int huge = 1; huge >= 0; huge--) {
        double best[2];
        if (lines_on(bytes, w, huge, best) < 0)
            return 2;
        printf("lines: %.1f MB in %s pages, %zu ahead, best of %d rounds of "
               "20M random lines: %.1f ns per line read, %.1f read and "
               "written [load %s]\n",
               (double)bytes / 1e6, huge ? "huge" : "4 KiB", w, rounds, best[0],
               best[1], load_avg());
    }
    return 0;
}

int main(int argc, char **argv)
{
    const char *mode = argc > 1 ? argv[1] : "grow";
    uint64_t a = argc > 2 ? strtoull(argv[2], NULL, 10) : 0;
    uint64_t b = argc > 3 ? strtoull(argv[3], NULL, 10) : 0;
    if (argc > 4 && strtoull(argv[4], NULL, 10) >= BATCH)
        QN = (size_t)strtoull(argv[4], NULL, 10) / BATCH * BATCH;
    if (argc > 5) {
        long r = strtol(argv[5], NULL, 10);
        rounds = r < 1 ? 1 : r > MAX_ROUNDS ? MAX_ROUNDS : (int)r;
    }
    if (strcmp(mode, "grow") == 0)
        return grow(a ? a : 100000000, b ? b : 100000);
    if (strcmp(mode, "look") == 0)
        return look(a ? a : 100000000);
    if (strcmp(mode, "ops") == 0)
        return ops(a ? a : 100000000, b ? b : 1000);
    if (strcmp(mode, "insert") == 0)
        return insert(a ? a : 10000000, b ? (size_t)b : 100);
    if (strcmp(mode, "lines") == 0) {
        if (argc > 4) { /* R is the third argument here */
            long r = strtol(argv[4], NULL, 10);
            rounds = r < 1 ? 1 : r > MAX_ROUNDS ? MAX_ROUNDS : (int)r;
        }
        return lines(a ? a : 23500000, b ? (size_t)b : 16);
    }
    fprintf(stderr, "usage: bench_grow_core grow|look|ops|insert|lines ...\n");
    return 2;
}
