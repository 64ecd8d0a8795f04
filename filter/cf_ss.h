/*
 * cf_ss.h - the semi-sorted bucket codec (private to filter/).
 *
 * Semi-sorted buckets (b = 4, fp_bits f = 9, 13 or 17; Fan et al., section
 * 5.2). A fingerprint is a 4-bit prefix (its top bits) and a k = f - 4 bit
 * suffix. A bucket keeps its four fingerprints sorted (by value, so by
 * prefix; empty slots, 0, first) and stores, from bit 0: the 12-bit rank of
 * the multiset of the four prefixes among all 3,876 (cf_ss_table.h), then
 * suffix j in bits 12 + k*j. 12 + 4k = 32, 48 or 64 bits: a bucket is one
 * load. A lookup turns the rank into the four prefixes lined up with the
 * suffix lanes (one read of a 16 KiB table for 9 and 13 bits; the 8 KiB
 * ss_unrank and three shifts for 17), ORs the prefix and suffix differences
 * lane by lane and tests the word for a zero lane with SWAR, as a plain
 * bucket is tested. A write decodes the bucket (ss_unrank), changes one
 * slot, sorts the four and encodes them again (ss_rank, 128 bytes): slot
 * numbers of a bucket hold only until the next write to it, which is all
 * the insert, relocation and delete paths need.
 */
#ifndef CF_SS_H
#define CF_SS_H

#include <stdint.h>

#include "cf_shape.h"
#include "cf_ss_table.h"

/* ss_unrank's prefixes with position j in bits k*j..k*j+3 (k = 5, 9),
 * lined up with the suffix lanes of 9 and 13-bit fingerprints, for
 * lookups: 16 KiB each, made from ss_unrank when the program (or the
 * module) is loaded and read-only after. */
extern CF_HIDDEN uint32_t ss_lanes5[1u << CF_SS_IDX_BITS],
    ss_lanes9[1u << CF_SS_IDX_BITS];

/* The four prefixes of semi-sorted bucket word w, prefix j in the low bits
 * of suffix lane j (k bits wide). */
static inline uint64_t ss_prefix_lanes(uint64_t w, uint32_t k)
{
    uint32_t idx = (uint32_t)w & CF_SS_IDX_MASK;
    if (k == 5)
        return ss_lanes5[idx];
    if (k == 9)
        return ss_lanes9[idx];
    /* prefix j moves from bit pb * j (ss_unrank) to bit k * j */
    const uint64_t v = ss_unrank[idx], pm = CF_SS_PREFIX_MASK;
    const uint32_t pb = CF_SS_PREFIX_BITS;
    return (v & pm) | (v & pm << pb) << (k - pb) |
           (v & pm << 2 * pb) << 2 * (k - pb) |
           (v & pm << 3 * pb) << 3 * (k - pb);
}

/* Lookups: nonzero when a slot of semi-sorted bucket word w holds fp. The
 * prefix and suffix differences are OR'd lane by lane, so a lane is zero
 * exactly when its slot holds fp, and the plain has-zero-lane test (exact
 * for "any lane", which is all a lookup asks) finds it. Bits above the
 * four lanes (a neighbour's) only ever receive borrows. */
static inline uint64_t ss_any(uint64_t w, uint32_t fp, uint32_t k,
                              uint64_t ones, uint64_t highs)
{
    uint64_t x = (ss_prefix_lanes(w, k) ^ (ones * (fp >> k))) |
                 ((w >> CF_SS_IDX_BITS) ^ (ones * (fp & ((1u << k) - 1))));
    return (x - ones) & ~x & highs;
}

/* Fingerprint j of semi-sorted bucket word w of shape sh. */
static inline uint32_t ss_slot(const cf_shape_t *sh, uint64_t w, uint32_t j)
{
    uint32_t k = sh->lane_bits;
    uint32_t prefix =
        (uint32_t)(ss_unrank[w & CF_SS_IDX_MASK] >> (CF_SS_PREFIX_BITS * j)) &
        CF_SS_PREFIX_MASK;
    return prefix << k |
           ((uint32_t)(w >> (CF_SS_IDX_BITS + k * j)) & sh->lane_mask);
}

/* Slot j of the semi-sorted bucket of shape sh at p becomes fp; the bucket
 * is sorted and encoded again. Reads and writes the 64-bit word at p, the
 * bytes past the bucket unchanged. */
CF_HIDDEN void cf_ss_set(const cf_shape_t *sh, uint8_t *p, uint32_t j,
                         uint32_t fp);

#endif /* CF_SS_H */
