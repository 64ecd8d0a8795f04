/*
 * bench_tagload.c - how full a partial-key cuckoo table gets before its
 * first failed insert, when an item's alternate bucket depends on only t
 * bits of its fingerprint: the question under a fixed table that can turn
 * into the growable one in place (docs/growth.md): the growable shape's
 * base table takes the alternate from a 5-bit tag, the fixed shapes from
 * the whole 12-bit fingerprint.
 *
 *   bench_tagload [BUCKETS [KICKS [SEEDS]]]
 *
 * For tag widths 5, 8 and 12 and BUCKETS buckets of 4 slots (default
 * 2,500,000: a 10M-item table), inserts random items with the alternate
 * (H(t) - i) mod BUCKETS into the first of their two buckets with a free
 * slot, else by a random walk of at most KICKS kicks (default 500), until
 * an insert fails; prints the load it reached, for SEEDS seeds (default
 * 3). A model of the placement only (no breadth-first
 * search, no stash): the filter core's own inserts reach at least this.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

static uint64_t rng_state;

static uint64_t rnd(void)
{
    rng_state ^= rng_state << 13;
    rng_state ^= rng_state >> 7;
    rng_state ^= rng_state << 17;
    return rng_state;
}

static uint64_t mulhi(uint64_t a, uint64_t b)
{
    return (uint64_t)(((unsigned __int128)a * b) >> 64);
}

static uint64_t alt(const uint64_t *h, uint64_t n, uint64_t i, uint32_t t)
{
    return h[t] >= i ? h[t] - i : h[t] + n - i;
}

static int put(uint32_t *b, uint64_t i, uint32_t v)
{
    for (int s = 0; s < 4; s++)
        if (b[i * 4 + s] == 0) {
            b[i * 4 + s] = v;
            return 1;
        }
    return 0;
}

/* The load of the first failed insert. */
static double fill(uint64_t n, int bits, int kicks)
{
    uint32_t ntags = 1u << bits;
    uint64_t *h = malloc(ntags * sizeof(*h));
    uint32_t *b = calloc(n * 4, sizeof(*b)); /* slot: tag + 1 */
    if (h == NULL || b == NULL) {
        fprintf(stderr, "out of memory\n");
        exit(1);
    }
    for (uint32_t t = 0; t < ntags; t++)
        h[t] = mulhi(rnd(), n);
    uint64_t items = 0;
    for (; items < n * 4; items++) {
        uint64_t r = rnd();
        uint32_t t = (uint32_t)r & (ntags - 1);
        uint64_t i = mulhi(r, n), j = alt(h, n, i, t);
        if (put(b, i, t + 1) || put(b, j, t + 1))
            continue;
        uint64_t at = rnd() & 1 ? i : j;
        uint32_t v = t + 1;
        int placed = 0;
        for (int k = 0; k < kicks && !placed; k++) {
            uint32_t *slot = &b[at * 4 + (rnd() & 3)];
            uint32_t out = *slot;
            *slot = v;
            v = out;
            at = alt(h, n, at, v - 1);
            placed = put(b, at, v);
        }
        if (!placed)
            break;
    }
    free(h);
    free(b);
    return (double)items / (double)(n * 4);
}

int main(int argc, char **argv)
{
    uint64_t n = argc > 1 ? strtoull(argv[1], NULL, 10) : 2500000;
    int kicks = argc > 2 ? atoi(argv[2]) : 500;
    int seeds = argc > 3 ? atoi(argv[3]) : 3;
    static const int widths[] = {5, 8, 12};
    if (n < 2 || kicks < 1 || seeds < 1) {
        fprintf(stderr, "usage: bench_tagload [BUCKETS [KICKS [SEEDS]]]\n");
        return 2;
    }
    printf("buckets %llu of 4 slots, %d kicks\n", (unsigned long long)n, kicks);
    for (size_t w = 0; w < sizeof(widths) / sizeof(widths[0]); w++) {
        printf("alternate from %2d bits: load at the first failure", widths[w]);
        for (int s = 0; s < seeds; s++) {
            rng_state = 0x9E3779B97F4A7C15ull * (uint64_t)(s + 1);
            printf(" %.4f", fill(n, widths[w], kicks));
            fflush(stdout);
        }
        printf("\n");
    }
    return 0;
}
