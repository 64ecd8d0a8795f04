/*
 * cf_ss.c - writes of semi-sorted buckets.
 */
#define CF_SS_TABLE_DEFINE /* the one copy of the tables */
#include "cf_ss.h"

#include "le.h"

uint32_t ss_lanes5[1u << CF_SS_IDX_BITS], ss_lanes9[1u << CF_SS_IDX_BITS];

/* ss_unrank's prefix j moved from bit 4j to bit kj. */
static uint32_t lanes_of(uint32_t v, uint32_t k)
{
    uint32_t out = 0;
    for (uint32_t j = 0; j < 4; j++)
        out |= ((v >> (CF_SS_PREFIX_BITS * j)) & CF_SS_PREFIX_MASK) << (k * j);
    return out;
}

/* Before any thread could look a bucket up, as the shape table. */
__attribute__((constructor)) static void ss_lanes_init(void)
{
    for (uint32_t i = 0; i < 1u << CF_SS_IDX_BITS; i++) {
        ss_lanes5[i] = lanes_of(ss_unrank[i], 5);
        ss_lanes9[i] = lanes_of(ss_unrank[i], 9);
    }
}

/* a, b = min, max: selects, not branches (the order of fingerprints is
 * random). */
#define CSWAP(a, b)                                                            \
    do {                                                                       \
        uint32_t lo_ = (a) < (b) ? (a) : (b), hi_ = (a) ^ (b) ^ lo_;           \
        (a) = lo_;                                                             \
        (b) = hi_;                                                             \
    } while (0)

/* Sorted by a five-comparator network. */
void cf_ss_set(const cf_shape_t *sh, uint8_t *p, uint32_t j, uint32_t fp)
{
    const uint32_t k = sh->lane_bits, km = sh->lane_mask;
    const uint64_t wm = sh->word_mask;
    const uint32_t pb = CF_SS_PREFIX_BITS, pm = CF_SS_PREFIX_MASK;
    uint64_t old = le_load64(p), w = old & wm, sfx = w >> CF_SS_IDX_BITS;
    uint32_t nib = ss_unrank[w & CF_SS_IDX_MASK];
    uint32_t v0 = (nib & pm) << k | ((uint32_t)sfx & km);
    uint32_t v1 = (nib >> pb & pm) << k | ((uint32_t)(sfx >> k) & km);
    uint32_t v2 = (nib >> 2 * pb & pm) << k | ((uint32_t)(sfx >> 2 * k) & km);
    uint32_t v3 = (nib >> 3 * pb) << k | ((uint32_t)(sfx >> 3 * k) & km);
    v0 = j == 0 ? fp : v0;
    v1 = j == 1 ? fp : v1;
    v2 = j == 2 ? fp : v2;
    v3 = j == 3 ? fp : v3;
    CSWAP(v0, v1);
    CSWAP(v2, v3);
    CSWAP(v0, v2);
    CSWAP(v1, v3);
    CSWAP(v1, v2);
    const uint32_t ib = CF_SS_IDX_BITS;
    uint64_t e = (uint64_t)(ss_rank[0][v0 >> k] + ss_rank[1][v1 >> k] +
                            ss_rank[2][v2 >> k] + ss_rank[3][v3 >> k]) |
                 (uint64_t)(v0 & km) << ib | (uint64_t)(v1 & km) << (ib + k) |
                 (uint64_t)(v2 & km) << (ib + 2 * k) |
                 (uint64_t)(v3 & km) << (ib + 3 * k);
    le_store64(p, (old & ~wm) | e);
}
