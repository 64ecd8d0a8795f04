/*
 * cf_fixed_batch.c - the fixed kind, many items in one call: the window
 * of hashes and prefetches that lets the DRAM misses of many items
 * overlap.
 */
#include "cf_fixed.h"

/* cf_exists_many() on one table of a fast shape: b slots in lanes of
 * lane bits, buckets of bits bits, semi-sorted or not. The callers pass
 * constants for the common shapes, so each instantiation is straight-line
 * code whose masks are immediates and whose state stays in registers; the
 * fallback passes the filter's own values. No branch depends on the data:
 * hits and misses cost the same. */
static inline __attribute__((always_inline)) void
exists_many_fast(const cf_filter_t *f, size_t n, const void *const *keys,
                 const size_t *lens, bool *out, bool ss, uint32_t b,
                 uint32_t lane, uint32_t bits)
{
    cf_table_t one;
    const cf_table_t *t = tabs_get(f, &one);
    const uint8_t *const data = t->data;
    const uint64_t nb = t->nbuckets, seed = f->seed;
    /* CF_PREFETCH_TAIL unless buckets are aligned words (see
     * prefetch_bucket()) */
    const uint32_t tail = (bits == 32 || bits == 64) ? 0 : CF_PREFETCH_TAIL;
    const uint32_t fp_mask = SH(f)->fp_mask;
    uint64_t ones = 0;
    for (uint32_t j = 0; j < b; j++)
        ones |= 1ull << (j * lane);
    const uint64_t highs = ones << (lane - 1);
    const uint64_t mask = b * lane == 64 ? ~0ull : (1ull << (b * lane)) - 1;
    /* the victim, as a byte offset: offsets are one-to-one with buckets */
    const bool vused = v_used(t);
    const uint64_t voff = (v_index(t) * bits) >> 3;
    const uint32_t vfp = v_fp(t);
    uint64_t o1[CF_WINDOW], o2[CF_WINDOW];
    uint32_t fpw[CF_WINDOW];

    for (size_t i = 0; i < n + CF_WINDOW; i++) {
        size_t r = i % CF_WINDOW;
        if (i >= CF_WINDOW) {
            const uint8_t *p1 = data + o1[r], *p2 = data + o2[r];
            uint64_t w1 = bits == 32 ? le_load32(p1) : le_load64(p1);
            uint64_t w2 = bits == 32 ? le_load32(p2) : le_load64(p2);
            uint32_t fp = fpw[r];
            uint64_t m;
            if (ss) {
                m = ss_any(w1, fp, lane, ones, highs) |
                    ss_any(w2, fp, lane, ones, highs);
            } else {
                uint64_t x1 = (w1 & mask) ^ (ones * fp);
                uint64_t x2 = (w2 & mask) ^ (ones * fp);
                m = (((x1 - ones) & ~x1) | ((x2 - ones) & ~x2)) & highs;
            }
            bool hit = m != 0;
            if (vused) /* the same way for every item of the call */
                hit |= (fp == vfp) & ((o1[r] == voff) | (o2[r] == voff));
            out[i - CF_WINDOW] = hit;
        }
        if (i < n) {
            uint64_t h = key_hash(keys[i], lens[i], seed);
            uint32_t fp = fp_of(h, fp_mask);
            uint64_t i1 = mulhi(h, nb), i2 = alt_of(nb, i1, fp);
            uint64_t a = (i1 * bits) >> 3, c = (i2 * bits) >> 3;
            fpw[r] = fp;
            o1[r] = a;
            o2[r] = c;
            prefetch(data + a);
            prefetch(data + a + tail);
            prefetch(data + c);
            prefetch(data + c + tail);
        }
    }
}

void cf_fixed_exists_many(const cf_filter_t *f, size_t n,
                          const void *const *keys, const size_t *lens,
                          bool *out)
{
    if (f->nfilters == 1 && SH(f)->fast) {
        /* the shapes of the encodings ERROR and the defaults choose */
        switch (SH(f)->b == CF_SS_B ? SH(f)->fp_bits : 0) {
#define CF_X(enc, fp, lane, bits)                                              \
    case fp:                                                                   \
        exists_many_fast(f, n, keys, lens, out, (enc) == CF_ENC_SEMISORTED,    \
                         CF_SS_B, lane, bits);                                 \
        return;
            CF_WIDTHS(CF_X)
#undef CF_X
        default:
            exists_many_fast(f, n, keys, lens, out, SH(f)->ss, SH(f)->b,
                             SH(f)->lane_bits, SH(f)->bucket_bits);
            return;
        }
    }
    if (f->nfilters != 1) {
        for (size_t i = 0; i < n; i++)
            out[i] = cf_fixed_exists(f, keys[i], lens[i]);
        return;
    }
    /* One table, software-pipelined: item i is hashed and both its buckets
     * prefetched CF_WINDOW items before it is probed, so that many DRAM
     * misses are always in flight. */
    cf_table_t one;
    const cf_table_t *t = tabs_get(f, &one);
    uint64_t i1[CF_WINDOW], i2[CF_WINDOW];
    uint32_t fp[CF_WINDOW];
    for (size_t i = 0; i < n + CF_WINDOW; i++) {
        size_t r = i % CF_WINDOW;
        if (i >= CF_WINDOW) {
            /* No short-circuit: with mixed hits and misses a branch per
             * item would be mispredicted half of the time. */
            out[i - CF_WINDOW] = (int)bucket_has(f, t, i1[r], fp[r]) |
                                 (int)bucket_has(f, t, i2[r], fp[r]) |
                                 (int)victim_is(t, i1[r], i2[r], fp[r]);
        }
        if (i < n) {
            cf_hash_t hk = hash_key(f, keys[i], lens[i]);
            fp[r] = hk.fp;
            i1[r] = index1(t, hk.h);
            i2[r] = alt_index(f, t, i1[r], hk.fp);
            prefetch_bucket(f, t, i1[r]);
            prefetch_bucket(f, t, i2[r]);
        }
    }
}

/* The middle stage of the batched insert. The buckets of hk were
 * prefetched half a window ago and have arrived: when both are full in the
 * newest table the insert will look ahead from them, so their alternates
 * are fetched now, half a window before they are read. */
static void prefetch_alternates(const cf_filter_t *f, cf_hash_t hk)
{
    cf_table_t one;
    const cf_table_t *t = &tabs_get(f, &one)[f->nfilters - 1];
    uint64_t in[2];
    in[0] = index1(t, hk.h);
    in[1] = alt_index(f, t, in[0], hk.fp);
    if ((empty_lanes(f, t, in[0]) | empty_lanes(f, t, in[1])) != 0)
        return;
    for (uint32_t k = 0; k < 2; k++)
        for (uint32_t j = 0; j < SH(f)->b; j++)
            prefetch_bucket(
                f, t,
                alt_index(f, t, in[k], slot_get(f, t, in[k] * SH(f)->b + j)));
}

void cf_fixed_add_many(cf_filter_t *f, size_t n, const void *const *keys,
                       const size_t *lens, bool nx, uint64_t *room, int *rc)
{
    if (n == 1) { /* one command's one item: nothing to overlap */
        rc[0] = cf_add_hashed(f, hash_key(f, keys[0], lens[0]), nx, room);
        return;
    }
    if (!nx) {
        size_t done = cf_add_many_fast(f, n, keys, lens, room, rc);
        if (done == n)
            return;
        keys += done;
        lens += done;
        rc += done;
        n -= done;
    }
    /* The pipeline of cf_exists_many in three stages: hash and prefetch
     * both buckets; half a window later prefetch what a relocation would
     * read; insert, in order. Growth may add a table mid-batch; prefetches
     * are only hints, so they simply aim at the newest table of the
     * moment. */
    enum { W = 2 * CF_WINDOW, HALF = CF_WINDOW };
    cf_hash_t hk[W];
    /* Below 3/4 load both buckets are hardly ever full (under 1% of inserts
     * at 2/3): the middle stage would cost more than it saves. A chain of
     * tables keeps it on (the newest table's load is not counted). */
    cf_table_t one;
    const cf_table_t *last = &tabs_get(f, &one)[f->nfilters - 1];
    bool ahead =
        SH(f)->fast && SH(f)->b <= 8 &&
        (f->nfilters > 1 || items_of(f) * 4 >= last->nbuckets * SH(f)->b * 3);
    for (size_t i = 0; i < n + W; i++) {
        size_t r = i % W;
        if (i >= W)
            rc[i - W] = cf_add_hashed(f, hk[r], nx, room);
        if (ahead && i >= HALF && i - HALF < n)
            prefetch_alternates(f, hk[(i - HALF) % W]);
        if (i < n) {
            const cf_table_t *t = &tabs_get(f, &one)[f->nfilters - 1];
            hk[r] = hash_key(f, keys[i], lens[i]);
            uint64_t i1 = index1(t, hk[r].h);
            prefetch_bucket(f, t, i1);
            prefetch_bucket(f, t, alt_index(f, t, i1, hk[r].fp));
        }
    }
}
