/*
 * cf_grow_look.c - the growable shape's lookups (one item, a count, a
 * batch with a window of prefetches) and its statistics. Inserts, splits
 * and deletes are cf_grow.c's.
 */
#include "cf_grow_int.h"

bool cf_grow_exists(const cf_filter_t *f, const void *key, size_t len)
{
    struct cf_grow vt;
    const struct cf_grow *g = gr_get(f, &vt);
    gr_item_t it = gr_item(g, f->seed, key, len);
    return has_item(g, &it);
}

void cf_grow_buckets(const cf_filter_t *f, const void *key, size_t len,
                     uint64_t b[2])
{
    struct cf_grow vt;
    const struct cf_grow *g = gr_get(f, &vt);
    gr_item_t it = gr_item(g, f->seed, key, len);
    b[0] = gr_side(g, it.j[0], it.s[0]).b;
    b[1] = gr_side(g, it.j[1], it.s[1]).b;
}

void cf_grow_prefetch(const cf_filter_t *f, const void *key, size_t len)
{
    struct cf_grow vt;
    const struct cf_grow *g = gr_get(f, &vt);
    gr_item_t it = gr_item(g, f->seed, key, len);
    for (int k = 0; k < 2; k++) {
        uint64_t b = gr_side(g, it.j[k], it.s[k]).b;
        if (cmp_has(g, b))
            prefetch(g->cmp + 6 * b);
        if (g->phase != GR_COMPACT)
            prefetch(gr_bucket(g, b));
    }
}

uint64_t cf_grow_count(const cf_filter_t *f, const void *key, size_t len)
{
    struct cf_grow vt;
    const struct cf_grow *g = gr_get(f, &vt);
    gr_item_t it = gr_item(g, f->seed, key, len);
    gr_side_t s0 = gr_side(g, it.j[0], it.s[0]);
    gr_side_t s1 = gr_side(g, it.j[1], it.s[1]);
    uint64_t w0 = gr_word(g, s0.b), w1 = gr_word(g, s1.b);
    uint64_t m0 = gr_match(w0, gr_want(it.t, s0.rest));
    uint64_t m1 = gr_match(w1, gr_want(it.t, s1.rest));
    /* both sides in one bucket (with different streams): a slot matching
     * either is one entry */
    uint64_t n =
        s1.b == s0.b
            ? (uint64_t)__builtin_popcountll(m0 | m1)
            : (uint64_t)(__builtin_popcountll(m0) + __builtin_popcountll(m1));
    return n + (stash_matches(g, &s0, it.t) || stash_matches(g, &s1, it.t)) +
           gr_over_get(g, it.h);
}

/* The batched lookup's view of a filter: its numbers in locals (the
 * stores to out may alias the filter, bool being a character type, which
 * would reload them for every item), and a window of items hashed and
 * prefetched ahead of the one compared. */
typedef struct gr_look {
    uint64_t *const *seg;
    uint64_t h0[GR_TAGS], g[GR_TAGS]; /* gr_h0(), gr_g() of every tag */
    uint64_t seed, n0, nbig, lmask, split;
    uint32_t level, remap;
    const uint64_t *p0[CF_WINDOW], *p1[CF_WINDOW];
    uint32_t wp[CF_WINDOW]; /* side 0's want | side 1's << 16 */
} gr_look_t;

/* gr_item(), gr_side(), gr_want() and gr_bucket() of one item into slot r
 * of the window, and its two buckets prefetched. */
static inline __attribute__((always_inline)) void
look_stage(gr_look_t *L, size_t r, const void *key, size_t len)
{
    uint64_t h = key_hash(key, len, L->seed);
    uint32_t t = gr_tag_of(h, L->g[0], L->remap);
    uint64_t n0 = L->n0, j0 = mulhi(h, n0), hh = L->h0[t];
    uint64_t j1 = hh >= j0 ? hh - j0 : hh + n0 - j0;
    uint64_t s0 = h >> CF_GROW_TAG_BITS, s1 = s0 ^ L->g[t];
    uint64_t b0 = j0 + n0 * (s0 & L->lmask);
    uint64_t b1 = j1 + n0 * (s1 & L->lmask);
    uint64_t l0 = b0 < L->split, l1 = b1 < L->split;
    uint64_t u0 = s0 >> L->level, u1 = s1 >> L->level;
    b0 += L->nbig & -(l0 & u0);
    b1 += L->nbig & -(l1 & u1);
    uint32_t tw = t << GR_VAR_BITS;
    uint32_t want0 = tw | ((uint32_t)(u0 >> l0) & (GR_VAR_MASK >> 1));
    uint32_t want1 = tw | ((uint32_t)(u1 >> l1) & (GR_VAR_MASK >> 1));
    L->wp[r] = want0 | want1 << 16;
    const uint64_t *p0 =
        L->seg[b0 >> CF_GROW_SEG_SHIFT] + (b0 & (CF_GROW_SEG - 1));
    const uint64_t *p1 =
        L->seg[b1 >> CF_GROW_SEG_SHIFT] + (b1 & (CF_GROW_SEG - 1));
    L->p0[r] = p0;
    L->p1[r] = p1;
    prefetch(p0);
    prefetch(p1);
}

static inline __attribute__((always_inline)) bool look_probe(const gr_look_t *L,
                                                             size_t r)
{
    return gr_match2(*L->p0[r], *L->p1[r], L->wp[r]);
}

/* The compact phase's batch: the table is the base table (level 0), its
 * buckets 6 bytes apart, semi-sorted; an item's entry there is the 13-bit
 * fingerprint t << 8 | stream (never 0, gr_tag_of()), compared in the
 * bucket's own encoding as the fixed semi-sorted shape compares it
 * (ss_any(), 9-bit suffix lanes). */
typedef struct cmp_look {
    const uint8_t *c0[CF_WINDOW], *c1[CF_WINDOW];
    uint32_t fp0[CF_WINDOW], fp1[CF_WINDOW];
} cmp_look_t;

static inline __attribute__((always_inline)) void
cmp_stage(const struct cf_grow *g, uint64_t seed, cmp_look_t *C, size_t r,
          const void *key, size_t len)
{
    gr_item_t it = gr_item(g, seed, key, len);
    uint32_t tw = it.t << GR_CMP_STREAM, sm = 0xFF;
    C->fp0[r] = tw | ((uint32_t)it.s[0] & sm);
    C->fp1[r] = tw | ((uint32_t)it.s[1] & sm);
    C->c0[r] = g->cmp + 6 * it.j[0];
    C->c1[r] = g->cmp + 6 * it.j[1];
    prefetch(C->c0[r]);
    prefetch(C->c1[r]);
}

static inline __attribute__((always_inline)) bool cmp_probe(const cmp_look_t *C,
                                                            size_t r)
{
    uint64_t w0, w1;
    memcpy(&w0, C->c0[r], 8);
    memcpy(&w1, C->c1[r], 8);
    const uint64_t m = 0xFFFFFFFFFFFFull;
    return (ss_any(w0 & m, C->fp0[r], 9, GR_CMP_ONES, GR_CMP_ONES << 8) |
            ss_any(w1 & m, C->fp1[r], 9, GR_CMP_ONES, GR_CMP_ONES << 8)) != 0;
}

static void exists_many_cmp(const struct cf_grow *g, uint64_t seed, size_t n,
                            const void *const *keys, const size_t *lens,
                            bool *out)
{
    cmp_look_t C;
    const size_t W = CF_WINDOW, head = n < W ? n : W;
    size_t i = 0;
    for (; i < head; i++)
        cmp_stage(g, seed, &C, i, keys[i], lens[i]);
    for (; i < n; i++) {
        size_t r = i % W;
        out[i - W] = cmp_probe(&C, r);
        cmp_stage(g, seed, &C, r, keys[i], lens[i]);
    }
    for (size_t k = n - head; k < n; k++)
        out[k] = cmp_probe(&C, k % W);
}

void cf_grow_exists_many(const cf_filter_t *f, size_t n,
                         const void *const *keys, const size_t *lens, bool *out)
{
    struct cf_grow vt;
    const struct cf_grow *g = gr_get(f, &vt);
    if (g->phase == GR_COMPACT) {
        exists_many_cmp(g, f->seed, n, keys, lens, out);
        return;
    }
    /* the stash is rare, and so is a conversion under way: one item at a
     * time */
    if (g->stash_entry != 0 || g->cmp != NULL) {
        for (size_t i = 0; i < n; i++) {
            gr_item_t it = gr_item(g, f->seed, keys[i], lens[i]);
            out[i] = has_item(g, &it);
        }
        return;
    }
    gr_look_t L;
    L.seg = g->seg;
    /* the per-tag words once per call (the filter keeps only their seeded
     * parts), not a multiply per item */
    for (uint32_t t = 0; t < GR_TAGS; t++) {
        L.h0[t] = gr_h0(g, t);
        L.g[t] = gr_g(g, t);
    }
    L.seed = f->seed;
    L.n0 = g->n0;
    L.nbig = g->nbig;
    L.lmask = g->lmask;
    L.split = g->split;
    L.level = g->level;
    L.remap = g->remap;
    const size_t W = CF_WINDOW, head = n < W ? n : W;
    size_t i = 0;
    for (; i < head; i++)
        look_stage(&L, i, keys[i], lens[i]);
    for (; i < n; i++) {
        size_t r = i % W;
        out[i - W] = look_probe(&L, r);
        look_stage(&L, r, keys[i], lens[i]);
    }
    for (size_t k = n - head; k < n; k++)
        out[k] = look_probe(&L, k % W);
    if (g->over != NULL && g->over->used != 0) /* what the table missed */
        for (size_t k = 0; k < n; k++)
            if (!out[k])
                out[k] = gr_over_get(g, key_hash(keys[k], lens[k], f->seed));
}

/* ---- stats ---- */

void cf_grow_stats(const cf_filter_t *f, cf_stats_t *st)
{
    struct cf_grow vt;
    const struct cf_grow *g = gr_get(f, &vt);
    memset(st, 0, sizeof(*st));
    st->size_bytes = cf_grow_size_bytes(f);
    st->nbuckets = g->nb;
    st->nfilters = 1;
    st->items = g->items;
    st->deleted = g->deleted;
    /* the reserve until the table first splits (as a fixed table reports
     * what was asked for), then what the buckets in use hold at the
     * target load */
    uint64_t held = gr_target_entries(g);
    st->capacity = g->nb > g->n0 && held > g->capacity ? held : g->capacity;
    st->bucket_size = GR_B;
    st->fp_bits = g->phase == GR_COMPACT
                      ? GR_CMP_BITS
                      : CF_GROW_TAG_BITS + CF_GROW_STORED_BITS;
    st->expansion = f->expansion;
    st->max_kicks = f->max_kicks;
    st->max_filters = f->max_filters;
    st->seed = f->seed;
    st->encoding = CF_ENC_PLAIN;
    st->form = CF_FORM_GROWABLE;
}

void cf_grow_info(const cf_filter_t *f, cf_grow_info_t *gi)
{
    struct cf_grow vt;
    const struct cf_grow *g = gr_get(f, &vt);
    *gi = (cf_grow_info_t){.n0 = g->n0,
                           .level = g->level,
                           .split = g->split,
                           .nbuckets = g->nb,
                           .entries = g->entries,
                           .voids = g->voids,
                           .forced = g->forced,
                           .stashed = g->stashed};
}
