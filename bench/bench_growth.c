/*
 * bench_growth.c - measures the growable prototype of growth_proto.h (one
 * table split a bucket at a time, docs/growth.md) against tables reserved
 * at the final size from the start.
 *
 *   bench_growth grow  [N [C [TARGET]]]   reserve C, add N distinct items
 *   bench_growth fuzz  [OPS [C [SEED [grow-first]]]]  random adds and
 *                                         deletes against an exact multiset
 *                                         (grow-first: adds only for the
 *                                         first half, so that entries run
 *                                         out of bits before deletes come)
 *   bench_growth block [N [C [B]]]        both candidates in an aligned
 *                                         block of B buckets: the load it
 *                                         reaches before it must grow
 *
 * grow prints, for the grown filter: buckets read per lookup (counted),
 * splits forced by a full pair, void entries, the false-positive rate on
 * 1M items never added, bits per item at the end and the most over the
 * run; then inserts and batched lookups (50% present) per second for the
 * grown filter, the same prototype reserved at the grown filter's final
 * size (target load 1: it never splits), and the core (filter/, 16-bit
 * fingerprints, b = 4, reserved for N), with ratios (the lookups in 5
 * alternated rounds). Times are thread CPU time.
 * Defaults: N = 100000000, C = 100000, TARGET = 0.85. fuzz grows at a
 * 0.94 target, to drive the forced splits and the stash.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "cf.h"
#include "growth_proto.h"

/* Thread CPU time: the machine is shared, and a wall clock would count
 * the time other processes held the core. */
static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

#define ABSENT (1ull << 63)
#define QN 4000000 /* lookups per timed round */

static uint64_t gp_nb_for(uint64_t items, double target)
{
    return (uint64_t)((double)items / (target * GP_B)) + 1;
}

static int fill_gp(gp_t *f, uint64_t n, double *max_bpi, uint64_t c)
{
    for (uint64_t i = 0; i < n; i++) {
        if (gp_add(f, &i, 8) != 0) {
            fprintf(stderr, "add %" PRIu64 " failed\n", i);
            return -1;
        }
        if (max_bpi != NULL && i >= c && (i & 0xFFFF) == 0) {
            double b = (double)gp_bytes(f) * 8 / (double)(i + 1);
            if (b > *max_bpi)
                *max_bpi = b;
        }
    }
    return 0;
}

static int fill_cf(cf_filter_t *f, uint64_t n)
{
    for (uint64_t i = 0; i < n; i++)
        if (cf_add(f, &i, 8) != 0) {
            fprintf(stderr, "core add %" PRIu64 " failed\n", i);
            return -1;
        }
    return 0;
}

static int cmp_d(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static int grow(uint64_t n, uint64_t c, double target)
{
    uint64_t n0 = gp_nb_for(c, target), maxnb = gp_nb_for(n, target) * 4;
    gp_t g, r;
    double max_bpi = 0;
    if (gp_init(&g, n0, maxnb, target, 42) != 0)
        return 2;
    double t0 = now();
    if (fill_gp(&g, n, &max_bpi, c) != 0)
        return 1;
    double t_grow = now() - t0;
    /* The same prototype reserved at the grown size: never splits. */
    if (gp_init(&r, g.nb, g.nb, 1.0, 42) != 0)
        return 2;
    t0 = now();
    if (fill_gp(&r, n, NULL, 0) != 0)
        return 1;
    double t_res = now() - t0;
    cf_params_t p;
    cf_params_default(&p);
    p.capacity = n;
    p.fp_bits = 16;
    p.bucket_size = 4;
    p.expansion = 0;
    cf_filter_t *cf;
    if (cf_create(&p, &cf) != 0)
        return 2;
    t0 = now();
    if (fill_cf(cf, n) != 0)
        return 1;
    double t_cf = now() - t0;

    uint64_t reads = 0, fp = 0, lost = 0;
    for (uint64_t i = 0; i < 1000000; i++) {
        uint64_t k = ABSENT | i;
        fp += gp_contains(&g, &k, 8, &reads);
    }
    double reads_per = (double)reads / 1e6;
    for (uint64_t i = 0; i < n; i += n / 1000000 + 1)
        lost += !gp_contains(&g, &i, 8, NULL);
    uint64_t fp_r = 0, fp_c = 0;
    for (uint64_t i = 0; i < 1000000; i++) {
        uint64_t k = ABSENT | i;
        fp_r += gp_contains(&r, &k, 8, NULL);
        fp_c += cf_exists(cf, &k, 8);
    }
    printf("grow: reserve %" PRIu64 " (%" PRIu64 " buckets), %" PRIu64
           " adds, target load %.2f\n",
           c, n0, n, target);
    printf("  buckets %" PRIu64 " (level %u, split %" PRIu64
           "), load %.4f, forced splits %" PRIu64 ", voids %" PRIu64
           ", kicks per add: grown %.3f, reserved %.3f\n",
           g.nb, g.level, g.split, (double)g.entries / (double)(g.nb * GP_B),
           g.forced, g.voids, (double)g.kicks / (double)n,
           (double)r.kicks / (double)n);
    printf("  buckets read per lookup %.3f (counted), present items "
           "missed %" PRIu64 " of a sample\n",
           reads_per, lost);
    printf("  FPR grown %.4f%%, reserved proto %.4f%%, core 16-bit "
           "%.4f%%\n",
           (double)fp / 1e4, (double)fp_r / 1e4, (double)fp_c / 1e4);
    printf("  bits/item at end %.2f (max over the run after the reserve "
           "%.2f); reserved proto %.2f; core %.2f\n",
           (double)gp_bytes(&g) * 8 / (double)n, max_bpi,
           (double)gp_bytes(&r) * 8 / (double)n,
           (double)cf_size_bytes(cf) * 8 / (double)n);
    printf("  inserts/s: grown %.2fM, reserved proto %.2fM (grown/reserved "
           "%.2f), core %.2fM (grown/core %.2f)\n",
           (double)n / t_grow / 1e6, (double)n / t_res / 1e6, t_res / t_grow,
           (double)n / t_cf / 1e6, t_cf / t_grow);

    /* Batched lookups, half present: the three alternated, 5 rounds. */
    uint64_t *keys = malloc(QN * sizeof(*keys));
    bool *out = malloc(QN);
    const void **kp = malloc(QN * sizeof(*kp));
    size_t *lens = malloc(QN * sizeof(*lens));
    if (keys == NULL || out == NULL || kp == NULL || lens == NULL)
        return 2;
    uint64_t x = 12345;
    for (size_t i = 0; i < QN; i++) {
        x = gp_mix(x + i);
        keys[i] = (i & 1) ? (x % n) : (ABSENT | x);
        kp[i] = &keys[i];
        lens[i] = 8;
    }
    double rg[5], rr[5], rc[5], sum = 0;
    for (int round = 0; round < 5; round++) {
        t0 = now();
        for (size_t i = 0; i < QN; i += 1000)
            gp_contains_many(&g, 1000, keys + i, out + i);
        rg[round] = now() - t0;
        for (size_t i = 0; i < QN; i++)
            sum += out[i];
        t0 = now();
        for (size_t i = 0; i < QN; i += 1000)
            gp_contains_many(&r, 1000, keys + i, out + i);
        rr[round] = now() - t0;
        for (size_t i = 0; i < QN; i++)
            sum += out[i];
        t0 = now();
        for (size_t i = 0; i < QN; i += 1000)
            cf_exists_many(cf, 1000, kp + i, lens + i, out + i);
        rc[round] = now() - t0;
        for (size_t i = 0; i < QN; i++)
            sum += out[i];
    }
    double ratio_r[5], ratio_c[5];
    for (int i = 0; i < 5; i++) {
        ratio_r[i] = rg[i] / rr[i];
        ratio_c[i] = rg[i] / rc[i];
    }
    qsort(rg, 5, sizeof(double), cmp_d);
    qsort(rr, 5, sizeof(double), cmp_d);
    qsort(rc, 5, sizeof(double), cmp_d);
    qsort(ratio_r, 5, sizeof(double), cmp_d);
    qsort(ratio_c, 5, sizeof(double), cmp_d);
    printf("  batched lookups/s (median of 5, 50%% present): grown %.2fM, "
           "reserved proto %.2fM, core %.2fM\n",
           QN / rg[2] / 1e6, QN / rr[2] / 1e6, QN / rc[2] / 1e6);
    printf("  lookup time grown/reserved proto: median %.2f (range "
           "%.2f-%.2f); grown/core: median %.2f (range %.2f-%.2f) "
           "[%.0f hits]\n",
           ratio_r[2], ratio_r[0], ratio_r[4], ratio_c[2], ratio_c[0],
           ratio_c[4], sum);
    free(keys);
    free(out);
    free(kp);
    free(lens);
    cf_free(cf);
    gp_destroy(&r);
    gp_destroy(&g);
    return lost != 0;
}

/* Random adds (some of items already in), deletes of items in, and checks,
 * against an exact multiset: every delete of an item in must find an entry,
 * and every item in must be found. Deletes of items never added are not
 * made: they may take another item's entry in any cuckoo filter. */
static int fuzz(uint64_t ops, uint64_t c, uint64_t seed, bool grow_first)
{
    gp_t g;
    uint64_t *live = malloc(ops * sizeof(*live)), nlive = 0, next = 0;
    uint64_t x = seed | 1, fn = 0, delmiss = 0, checks = 0, maxlive = 0;
    uint64_t refused = 0;
    if (live == NULL || gp_init(&g, gp_nb_for(c, 0.94), gp_nb_for(ops, 0.5) * 2,
                                0.94, seed) != 0)
        return 2;
    unsigned start_level = g.level;
    for (uint64_t op = 0; op < ops; op++) {
        x = gp_mix(x + op);
        unsigned r = (unsigned)(x % 100);
        if (grow_first && op < ops / 2 && r < 97)
            r = 5; /* new items only: old entries live on to run out of bits */
        if (r < 60 || nlive == 0) {
            uint64_t k = (r < 3 && nlive) ? live[(x >> 8) % nlive] : next++;
            int rc = gp_add(&g, &k, 8);
            if (rc == -ENOSPC && g.nb < g.max_nb) {
                refused++; /* "full" while the stash is held: not added */
                continue;
            }
            if (rc != 0) {
                fprintf(stderr,
                        "fuzz: add failed (%d) at op %" PRIu64 ", %" PRIu64
                        " buckets, level %u, voids %" PRIu64 "\n",
                        rc, op, g.nb, g.level, g.voids);
                return 1;
            }
            live[nlive++] = k;
        } else if (r < 97) {
            uint64_t i = (x >> 8) % nlive, k = live[i];
            delmiss += gp_del(&g, &k, 8) != 1;
            live[i] = live[--nlive];
        } else {
            uint64_t k = live[(x >> 8) % nlive];
            fn += !gp_contains(&g, &k, 8, NULL);
            checks++;
        }
        if (nlive > maxlive)
            maxlive = nlive;
        if ((op & (op - 1)) == 0 || op == ops - 1) {
            for (uint64_t i = 0; i < nlive; i++)
                fn += !gp_contains(&g, &live[i], 8, NULL);
            checks += nlive;
        }
    }
    printf("fuzz: %" PRIu64 " ops from a reserve of %" PRIu64 ": %" PRIu64
           " items in at the end (most %" PRIu64
           "), doublings %u, voids %" PRIu64 ", forced splits %" PRIu64
           ", %" PRIu64 " lookups of items in checked: %" PRIu64
           " false negatives, %" PRIu64 " deletes of items in found "
           "nothing, %" PRIu64 " adds refused as full\n",
           ops, c, nlive, maxlive, g.level - start_level, g.voids, g.forced,
           checks, fn, delmiss, refused);
    free(live);
    gp_destroy(&g);
    return fn != 0 || delmiss != 0;
}

/* The direction of keeping both candidates in an aligned block of B
 * buckets (the alternate's offset from never-consumed tag bits), grown by
 * splitting one block at a time (linear hashing) only when an insert finds
 * no room. Slots keep the item's whole hash: placement is the same as with
 * fingerprints, and only the load is measured. */
typedef struct blk {
    uint64_t *s;
    uint64_t n0, nblk, split, items, rng;
    unsigned level, b;
} blk_t;

static uint64_t blk_of(const blk_t *t, uint64_t h)
{
    uint64_t st = gp_mix(h), j = gp_mulhi(h, t->n0);
    uint64_t a = j + t->n0 * (st & gp_mask(t->level));
    if (a < t->split)
        a += (t->n0 << t->level) & -(st >> t->level & 1);
    return a;
}

static unsigned blk_off(const blk_t *t, uint64_t h)
{
    return 1 + (unsigned)((h & 511) % (t->b - 1));
}

static void blk_split(blk_t *t)
{
    uint64_t n = t->n0 << t->level, w = (uint64_t)t->b * 4;
    uint64_t *lo = t->s + t->split * w, *hi = t->s + (t->split + n) * w;
    for (uint64_t k = 0; k < w; k++)
        if (lo[k] != 0 && (gp_mix(lo[k]) >> t->level & 1)) {
            hi[k] = lo[k];
            lo[k] = 0;
        }
    t->nblk++;
    if (++t->split == n) {
        t->level++;
        t->split = 0;
    }
}

/* Places *h, kicking within its block; false with the homeless one in
 * *h. */
static bool blk_place(blk_t *t, uint64_t *hp)
{
    uint64_t h = *hp, *blk = t->s + blk_of(t, h) * t->b * 4;
    unsigned i = (unsigned)(h >> 12) & (t->b - 1);
    for (int n = 0; n < GP_MAX_KICKS; n++) {
        uint64_t *bk = blk + i * 4, *ak = blk + (i ^ blk_off(t, h)) * 4;
        for (int k = 0; k < 4; k++)
            if (bk[k] == 0 || ak[k] == 0) {
                *(bk[k] == 0 ? &bk[k] : &ak[k]) = h;
                return true;
            }
        t->rng = gp_mix(t->rng);
        int k = (int)(t->rng & 3);
        if (t->rng & 4) {
            i ^= blk_off(t, h);
            bk = ak;
        }
        uint64_t v = bk[k];
        bk[k] = h;
        h = v;
        i ^= blk_off(t, h);
    }
    *hp = h;
    return false;
}

static int block(uint64_t n, uint64_t c, unsigned b)
{
    blk_t t = {0};
    t.b = b;
    t.n0 = c / (b * 4) + 1;
    t.nblk = t.n0;
    t.rng = 7;
    uint64_t maxblk = (n / (b * 4) + 1) * 8 + 1;
    size_t bytes = (size_t)(maxblk * b * 4 + 1) * 8;
    t.s = mmap(NULL, bytes, PROT_READ | PROT_WRITE,
               MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (t.s == MAP_FAILED)
        return 2;
    double first = -1, minl = 2, sum = 0;
    unsigned samples = 0;
    uint64_t splits = 0;
    for (uint64_t i = 0; i < n; i++) {
        uint64_t h = gp_mix(i ^ 0xABCDEF) | 1;
        while (!blk_place(&t, &h)) {
            if (first < 0)
                first = (double)t.items / (double)(t.nblk * b * 4);
            for (int s = 0; s < 4; s++, splits++)
                blk_split(&t);
        }
        t.items++;
        if (i > c && (i & 0x3FFF) == 0) {
            double l = (double)t.items / (double)(t.nblk * b * 4);
            sum += l;
            samples++;
            if (l < minl)
                minl = l;
        }
    }
    double end = (double)t.items / (double)(t.nblk * b * 4);
    printf("block B=%u buckets (%u bytes at 16-bit slots): reserve %" PRIu64
           ", %" PRIu64 " adds: load at the first full block %.3f; "
           "load over the growth: mean %.3f, min %.3f, end %.3f; bits/item "
           "at 16-bit slots: mean %.1f, worst %.1f, end %.1f\n",
           b, b * 8, c, n, first, sum / samples, minl, end,
           16 / (sum / samples), 16 / minl, 16 / end);
    munmap(t.s, bytes);
    return 0;
}

int main(int argc, char **argv)
{
    const char *mode = argc > 1 ? argv[1] : "grow";
    uint64_t a = argc > 2 ? strtoull(argv[2], NULL, 10) : 0;
    uint64_t b = argc > 3 ? strtoull(argv[3], NULL, 10) : 0;
    if (strcmp(mode, "grow") == 0)
        return grow(a ? a : 100000000, b ? b : 100000,
                    argc > 4 ? atof(argv[4]) : 0.85);
    if (strcmp(mode, "fuzz") == 0)
        return fuzz(a ? a : 10000000, b ? b : 1000,
                    argc > 4 ? strtoull(argv[4], NULL, 10) : 1,
                    argc > 5 && strcmp(argv[5], "grow-first") == 0);
    if (strcmp(mode, "block") == 0)
        return block(a ? a : 10000000, b ? b : 100000,
                     argc > 4 ? (unsigned)atoi(argv[4]) : 8);
    fprintf(stderr, "usage: bench_growth grow|fuzz|block ...\n");
    return 2;
}
