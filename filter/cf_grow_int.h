/*
 * cf_grow_int.h - the growable form's state and its inline addressing,
 * shared by cf_grow.c (inserts, splits, deletes), cf_grow_look.c
 * (lookups, stats), cf_grow_mem.c (memory) and cf_grow_dump.c
 * (serialisation). Private to those files.
 */
#ifndef CF_GROW_INT_H
#define CF_GROW_INT_H

#include "cf_alloc.h"
#include "cf_grow.h"
#include "cf_rb.h"
#include "cf_ss.h"
#include "check.h"

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

#define GR_B 4
/* Loads are counted per GR_LOAD_SCALE slots (the target 8,500: 0.85). */
#define GR_LOAD_SCALE 10000
#define GR_TAGS (1u << CF_GROW_TAG_BITS)
#define GR_VAR_BITS (CF_GROW_STORED_BITS + 1)
#define GR_VAR_MASK ((1u << GR_VAR_BITS) - 1)

/* Lane patterns of a bucket word: 4 lanes of 16 bits. */
#define GR_LO 0x0001000100010001ull
#define GR_LANES_VAR (GR_LO * GR_VAR_MASK)
#define GR_LANES_TAG (GR_LO * (0xFFFFu & ~GR_VAR_MASK))
#define GR_LANES_LOW15 (GR_LO * 0x7FFFu)
#define GR_LANES_HIGH (GR_LO * 0x8000u)

_Static_assert(CF_GROW_TAG_BITS + GR_VAR_BITS == 16, "a slot is 16 bits");

struct cf_grow {
    uint64_t **seg;    /* segment k: buckets [k, k + 1) * CF_GROW_SEG */
    uint64_t dircap;   /* entries of seg */
    uint64_t cap;      /* buckets allocated */
    uint64_t cap_init; /* cap when made or loaded (cf_grow_size_at()) */
    uint64_t steps;    /* capacity steps since */
    uint64_t n0;       /* base buckets */
    uint64_t nbig;     /* n0 << level */
    uint64_t lmask;    /* (1 << level) - 1 */
    uint64_t split;    /* the split pointer, < nbig */
    uint64_t nb;       /* buckets in use: nbig + split */
    uint32_t level;
    uint32_t target;  /* split past this load, per GR_LOAD_SCALE slots */
    uint64_t entries; /* used slots, plus the stash */
    uint64_t items, deleted, capacity;
    uint64_t rng;          /* the kick generator (xorshift64, never 0) */
    uint64_t stash_bucket; /* the stash: bucket and entry (0: empty) */
    uint32_t stash_entry;
    uint32_t nomem; /* a split found no memory in this insert, or in
                       the one that filled the stash */
    uint64_t voids, forced, stashed; /* counters, not serialised */
    /* the seeded words of the per-tag constants (gr_h0(), gr_g()) */
    uint64_t h_seed, g_seed;
    struct gr_over *over; /* copies past an item's buckets; NULL: none */
    /* The compact table (cf_grow_cmp.c): n0 semi-sorted buckets of four
     * 13-bit entries (6 bytes a bucket, 2 bytes of padding after the last),
     * NULL once
     * every bucket is in the 16-bit table. */
    uint8_t *cmp;
    uint64_t conv;        /* buckets below it are converted */
    uint64_t conv_at[2];  /* the size events the conversion's start and end
                             were (cf_grow_size_at()), GR_EV_BEFORE: before
                             the filter was made or loaded */
    uint8_t phase;        /* enum gr_phase */
    uint8_t remap;        /* some items of tag 0 take tag 31 (gr_tag()) */
    uint32_t tail;        /* bytes after the filter's struct in its block
                             (the table it had inline, GR_SHAPE_INLINE) */
    struct cf_pair *pair; /* the first table of a pair: the rest of it
                             (cf_pair.c's, which frees it) */
};

/* A small filter made compact (n0 <= GR_INLINE_MAX) is inline: no struct
 * cf_grow, its compact table right after the filter's struct in the same
 * block, its state in the struct's own fields (f->shape GR_SHAPE_INLINE;
 * items, which are its entries, and the capacity in f->n.s, the kick
 * generator in f->u.one, n0 from the capacity). The code reads it through
 * a view (gr_get(), a struct cf_grow on the stack); a write puts the
 * view's counts back (gr_done()). The add that starts its conversion
 * makes the struct and converts the whole table at once (at most
 * GR_INLINE_MAX buckets); the inline bytes stay, counted, as the tail. */
#define GR_SHAPE_INLINE 1
#define GR_INLINE_MAX 1024

/* A filter made compact starts as GR_COMPACT: its entries are 13-bit
 * fingerprints, a 5-bit tag and 8 stream bits, semi-sorted in 12 bits a
 * slot (cmp_expand()), in the compact table alone, no
 * 16-bit table yet (cap 0); it is what a fixed table costs. The first
 * add that needs room past the reserve starts the conversion
 * (GR_CONVERTING): the 16-bit table's first n0 buckets are allocated,
 * and a bucket moves into it when a write touches it (gr_wbucket()) or
 * when the conversion pointer passes it (a few buckets per write); a
 * lookup reads both forms of the buckets not yet passed (gr_word()).
 * Then the compact table is freed (GR_WHOLE). */
enum gr_phase { GR_WHOLE = 0, GR_COMPACT = 1, GR_CONVERTING = 2 };
#define GR_EV_BEFORE UINT64_MAX
#define GR_CMP_BITS 13
#define GR_CMP_STREAM 8 /* stream bits of a compact entry */

/* The overflow (cf_grow_over.c): (hash, copies) slots, open-addressed. */
#define GR_OVER_MIN 16
#define GR_OVER_MAX_DBL 27 /* at most GR_OVER_MIN << 26 slots (16 GiB) */
struct gr_over {
    uint64_t *slots; /* cap pairs: the item's hash, its copies (0: free) */
    uint64_t cap;    /* GR_OVER_MIN << (ndbl - 1) */
    uint64_t used;   /* slots with copies */
    uint32_t ndbl;   /* doublings so far (the first table is one) */
    /* the size change each doubling was, numbered with the capacity
     * steps: steps + doublings before it */
    uint64_t at[GR_OVER_MAX_DBL];
};

/* The shared per-tag words (cf_grow.c). */
extern CF_HIDDEN const uint64_t gr_tag_h[GR_TAGS];
extern CF_HIDDEN const uint64_t gr_tag_g[GR_TAGS];

/* Per tag t: H(t), the base table's alternate offset (< n0), and G(t),
 * side 1's stream mask; from the seed (through h_seed, g_seed) and n0. */
static inline uint64_t gr_h0(const struct cf_grow *g, uint32_t t)
{
    return mulhi(gr_tag_h[t] ^ g->h_seed, g->n0);
}

static inline uint64_t gr_g(const struct cf_grow *g, uint32_t t)
{
    return gr_tag_g[t] ^ g->g_seed;
}

CF_HIDDEN void gr_view(const cf_filter_t *f, struct cf_grow *vt);

/* The filter's growable state: its own, or an inline filter's view built
 * in *vt. */
static inline struct cf_grow *gr_get(const cf_filter_t *f, struct cf_grow *vt)
{
    if (__builtin_expect(f->shape != GR_SHAPE_INLINE, 1))
        return f->u.gr;
    gr_view(f, vt);
    return vt;
}

static inline bool gr_inline(const cf_filter_t *f)
{
    return f->shape == GR_SHAPE_INLINE;
}

/* The state of a filter that is not inline. */
static inline struct cf_grow *GR(const cf_filter_t *f)
{
    CK_ASSERT(!gr_inline(f));
    return f->u.gr;
}

/* After a write through g: an inline filter takes the view's counts and
 * kick state back. */
CF_HIDDEN void gr_done(cf_filter_t *f, const struct cf_grow *g);
/* An inline filter whose add needs room past its reserve: its struct and
 * 16-bit table made (-ENOMEM past *room, nothing changed) and every
 * bucket converted; *gp is then the filter's own state. */
CF_HIDDEN int gr_promote(cf_filter_t *f, struct cf_grow **gp, uint64_t *room);

typedef struct gr_item {
    uint64_t j[2]; /* base buckets of side 0 and 1 */
    uint64_t s[2]; /* their streams */
    uint32_t t;    /* the tag */
    uint64_t h;    /* the hash (the overflow's key) */
} gr_item_t;

typedef struct gr_side {
    uint64_t b;     /* bucket */
    uint64_t rest;  /* the stream from the bucket's level on */
    uint32_t level; /* the bucket's level */
} gr_side_t;

/* The involution of the base table: (H(t) - j) mod n0. */
static inline uint64_t gr_alt0(const struct cf_grow *g, uint64_t j, uint32_t t)
{
    uint64_t h = gr_h0(g, t);
    return h >= j ? h - j : h + g->n0 - j;
}

/* The tag of hash h: its low 5 bits. In a filter made compact (remap) an
 * item of tag 0 whose compact entry would be 0, an empty slot, on either
 * side (8 stream bits of 0 there; g0 is G(0)) takes tag 31: 1 item in
 * 4,096, which changes the false-positive rate by about 0.05% of itself. */
static inline uint32_t gr_tag_of(uint64_t h, uint64_t g0, uint32_t remap)
{
    uint32_t t = (uint32_t)h & (GR_TAGS - 1);
    uint64_t s = h >> CF_GROW_TAG_BITS, m = (1u << GR_CMP_STREAM) - 1;
    uint32_t zero = ((s & m) == 0) | (((s ^ g0) & m) == 0);
    return t | ((GR_TAGS - 1) & -(uint32_t)((t == 0) & zero & remap));
}

static inline uint32_t gr_tag(const struct cf_grow *g, uint64_t h)
{
    return gr_tag_of(h, gr_g(g, 0), g->remap);
}

/* One 64-bit hash split as the fixed shapes split theirs: the tag from
 * the low bits, the base bucket from the product with n0 (the high bits),
 * the stream above the tag. */
static inline __attribute__((always_inline)) gr_item_t
gr_item(const struct cf_grow *g, uint64_t seed, const void *key, size_t len)
{
    uint64_t h = key_hash(key, len, seed);
    gr_item_t it;
    it.h = h;
    it.t = gr_tag(g, h);
    it.j[0] = mulhi(h, g->n0);
    it.j[1] = gr_alt0(g, it.j[0], it.t);
    it.s[0] = h >> CF_GROW_TAG_BITS;
    it.s[1] = it.s[0] ^ gr_g(g, it.t);
    return it;
}

/* The bucket of base j and stream s; no branch on the split pointer. */
static inline __attribute__((always_inline)) gr_side_t
gr_side(const struct cf_grow *g, uint64_t j, uint64_t s)
{
    uint64_t b = j + g->n0 * (s & g->lmask);
    uint64_t lt = b < g->split;
    gr_side_t r;
    r.b = b + (g->nbig & -(lt & (s >> g->level)));
    r.level = g->level + (uint32_t)lt;
    r.rest = s >> r.level;
    return r;
}

static inline uint64_t *gr_bucket(const struct cf_grow *g, uint64_t b)
{
    return g->seg[b >> CF_GROW_SEG_SHIFT] + (b & (CF_GROW_SEG - 1));
}

/* ---- the compact table ---- */

static inline uint64_t cmp_load(const struct cf_grow *g, uint64_t b)
{
    uint64_t w;
    memcpy(&w, g->cmp + 6 * b, 8);
    return w & 0xFFFFFFFFFFFFull;
}

static inline void cmp_store(struct cf_grow *g, uint64_t b, uint64_t c)
{
    uint64_t w;
    memcpy(&w, g->cmp + 6 * b, 8);
    w = (w & ~0xFFFFFFFFFFFFull) | c;
    memcpy(g->cmp + 6 * b, &w, 8);
}

/* A compact bucket is semi-sorted (cf_ss.h): four 13-bit fingerprints
 * (t << 8 | stream, 0 an empty slot) in 48 bits, the 12-bit rank of the
 * multiset of their 4-bit prefixes, then their 9-bit suffixes in order.
 * cmp_expand() reads it as the four 16-bit lanes holding the same entries
 * (t << 11 | marker at bit 8 | stream), empty slots empty lanes.
 *
 * The four 13-bit fingerprints of compact bucket c, one per 16-bit lane,
 * ascending (the empty slots, 0, first). */
static inline uint64_t cmp_fps(uint64_t c)
{
    uint64_t nib = ss_unrank[c & 0xFFF], sfx = c >> 12;
    return ((nib & 0xF) | (nib & 0xF0) << 12 | (nib & 0xF00) << 24 |
            (nib & 0xF000) << 36)
               << 9 |
           (sfx & 0x1FF) | (sfx & 0x3FE00) << 7 | (sfx & 0x7FC0000) << 14 |
           (sfx & 0xFF8000000ull) << 21;
}

static inline uint64_t cmp_expand(uint64_t c)
{
    uint64_t y = cmp_fps(c);
    uint64_t used = ((y + GR_LO * 0x1FFF) & (GR_LO << 13)) >> 5;
    return (y & (GR_LO * 0x1F00)) << 3 | (y & (GR_LO * 0xFF)) | used;
}

/* The empty slots among fingerprints y (cmp_fps()). */
static inline uint32_t cmp_empties(uint64_t y)
{
    uint64_t used = ((y + GR_LO * 0x1FFF) & (GR_LO << 13)) >> 13;
    return GR_B - (uint32_t)((used * GR_LO) >> 48);
}

/* Four ascending 13-bit fingerprints encoded. */
static inline uint64_t cmp_encode(uint32_t v0, uint32_t v1, uint32_t v2,
                                  uint32_t v3)
{
    return (uint64_t)(ss_rank[0][v0 >> 9] + ss_rank[1][v1 >> 9] +
                      ss_rank[2][v2 >> 9] + ss_rank[3][v3 >> 9]) |
           (uint64_t)(v0 & 0x1FF) << 12 | (uint64_t)(v1 & 0x1FF) << 21 |
           (uint64_t)(v2 & 0x1FF) << 30 | (uint64_t)(v3 & 0x1FF) << 39;
}

/* The bucket of fingerprints y (cmp_fps(), at least one empty: the first
 * lane) with fp in an empty slot: fp goes in among the other three,
 * already ascending, and the four are encoded. */
static inline uint64_t cmp_put(uint64_t y, uint32_t fp)
{
    uint32_t v1 = (uint32_t)(y >> 16) & 0xFFFF,
             v2 = (uint32_t)(y >> 32) & 0xFFFF;
    uint32_t v3 = (uint32_t)(y >> 48);
    return cmp_encode(fp < v1 ? fp : v1, fp < v1 ? v1 : (fp < v2 ? fp : v2),
                      fp < v2 ? v2 : (fp < v3 ? fp : v3), fp < v3 ? v3 : fp);
}

/* The inverse of cmp_expand(), for lanes whose entries have 8 stream
 * bits: the four fingerprints sorted (empty ones first) and encoded. */
static inline uint64_t cmp_compress(uint64_t w)
{
    uint32_t v[GR_B];
    for (uint32_t k = 0; k < GR_B; k++) {
        uint32_t l = (uint32_t)(w >> (16 * k)) & 0xFFFFu;
        v[k] = (l >> GR_VAR_BITS) << GR_CMP_STREAM | (l & 0xFF);
    }
#define CMP_SORT2(a, b)                                                        \
    do {                                                                       \
        uint32_t lo_ = v[a] < v[b] ? v[a] : v[b], hi_ = v[a] ^ v[b] ^ lo_;     \
        v[a] = lo_;                                                            \
        v[b] = hi_;                                                            \
    } while (0)
    CMP_SORT2(0, 1);
    CMP_SORT2(2, 3);
    CMP_SORT2(0, 2);
    CMP_SORT2(1, 3);
    CMP_SORT2(1, 2);
#undef CMP_SORT2
    return cmp_encode(v[0], v[1], v[2], v[3]);
}

/* The 16-bit form of a compact entry: tag t, 8 stream bits of s. */
static inline uint32_t cmp_entry(uint32_t t, uint64_t s)
{
    return t << GR_VAR_BITS | 1u << GR_CMP_STREAM | ((uint32_t)s & 0xFF);
}

static inline bool cmp_has(const struct cf_grow *g, uint64_t b)
{
    return __builtin_expect(g->cmp != NULL, 0) && b >= g->conv && b < g->n0;
}

/* Bucket b's word, in either table. */
static inline uint64_t gr_word(const struct cf_grow *g, uint64_t b)
{
    if (cmp_has(g, b)) {
        uint64_t w = cmp_expand(cmp_load(g, b));
        return g->phase == GR_COMPACT ? w : w | *gr_bucket(g, b);
    }
    return *gr_bucket(g, b);
}

CF_HIDDEN void gr_conv_bucket(struct cf_grow *g, uint64_t b, uint64_t *p);

/* Bucket b of the 16-bit table, to write (not in GR_COMPACT): a bucket
 * still compact moves first. */
static inline uint64_t *gr_wbucket(struct cf_grow *g, uint64_t b)
{
    uint64_t *p = gr_bucket(g, b);
    CK_ASSERT(g->phase != GR_COMPACT);
    if (cmp_has(g, b))
        gr_conv_bucket(g, b, p);
    return p;
}

/* What a lane holding an entry of tag t for stream q compares equal to. */
static inline uint32_t gr_want(uint32_t t, uint64_t q)
{
    return t << GR_VAR_BITS | ((uint32_t)q & (GR_VAR_MASK >> 1));
}

/* Bit 16k set for every lane k of w that matches want: same tag, and the
 * stored bits below the lane's marker equal want's. Per lane, with no
 * borrow out of it: x is the variable part of w ^ want with a guard bit
 * above it, m = x ^ (x - 1) the mask up to its lowest set bit p, and the
 * stored bits agree exactly when p is at or above the marker L, that is
 * when m >= the lane's variable part (whose highest bit is L). The tag
 * and "used" are zero tests of 5 and 11 bits. */
static inline uint64_t gr_match(uint64_t w, uint32_t want)
{
    uint64_t d = w ^ (GR_LO * want);
    uint64_t y = w & GR_LANES_VAR;
    uint64_t x = (d & GR_LANES_VAR) | (GR_LO << 11);
    uint64_t m = x ^ (x - GR_LO);
    uint64_t ge = ((m | (GR_LO << 12)) - y) & (GR_LO << 12);
    uint64_t tz = ((GR_LO << 5) - ((d >> 11) & (GR_LO * 0x1F))) & (GR_LO << 5);
    uint64_t used = ~((GR_LO << 11) - y) & (GR_LO << 11);
    return (ge >> 12) & (tz >> 5) & (used >> 11);
}

/* Whether any lane of bucket w0 matches want0 or any lane of w1 matches
 * want1, given as one word (wp = want0 | want1 << 16): gr_match(w0,
 * want0) | gr_match(w1, want1), non-zero or not. The two buckets sit in
 * the eight 16-bit lanes of one SSE2 register, where each lane has its
 * own borrow and compare, so the lane-zero tests of the SWAR form are not
 * needed. Per lane, with d = lane ^ want: x = d with the guard bit 11 set
 * and m = x ^ (x - 1), the mask up to x's lowest set bit p (bits above
 * the guard do not change it), cut to the 11 bits of the variable part:
 * the stored bits agree when m >= the lane's variable part v (as in
 * gr_match(); when p is 11, m is all ones and v fits). With vt = v under
 * d's tag bits, the saturating vt - m is 0 exactly when the tags agree
 * (else vt > 0x7FF >= m) and the stored bits do; the lane is used when
 * v != 0. */
#if defined(__SSE2__)
static inline __attribute__((always_inline)) bool
gr_match2(uint64_t w0, uint64_t w1, uint32_t wp)
{
    const __m128i var = _mm_set1_epi16((short)GR_VAR_MASK);
    const __m128i guard = _mm_set1_epi16((short)(1 << GR_VAR_BITS));
    const __m128i tag = _mm_set1_epi16((short)(0xFFFF & ~GR_VAR_MASK));
    const __m128i zero = _mm_setzero_si128();
    __m128i w = _mm_set_epi64x((long long)w1, (long long)w0);
    __m128i want = _mm_cvtsi32_si128((int)wp);
    want = _mm_unpacklo_epi16(want, want); /* w0 w0 w1 w1 */
    want = _mm_unpacklo_epi32(want, want); /* w0 x4, w1 x4 */
    __m128i x = _mm_or_si128(_mm_xor_si128(w, want), guard);
    __m128i m = _mm_xor_si128(x, _mm_add_epi16(x, _mm_set1_epi16(-1)));
    m = _mm_and_si128(m, var);
    __m128i vt = _mm_xor_si128(w, _mm_and_si128(want, tag));
    __m128i bad = _mm_subs_epu16(vt, m);
    __m128i ok = _mm_andnot_si128(_mm_cmpeq_epi16(_mm_and_si128(w, var), zero),
                                  _mm_cmpeq_epi16(bad, zero));
    return _mm_movemask_epi8(ok) != 0;
}
#else
static inline bool gr_match2(uint64_t w0, uint64_t w1, uint32_t wp)
{
    return (gr_match(w0, wp & 0xFFFFu) | gr_match(w1, wp >> 16)) != 0;
}
#endif

/* Bit 16k set for every empty lane k of w. */
static inline uint64_t gr_empty_lanes(uint64_t w)
{
    return (~(((w & GR_LANES_LOW15) + GR_LANES_LOW15) | w) & GR_LANES_HIGH) >>
           15;
}

/* The length L of an entry's stored stream bits (below its marker). */
static inline uint32_t var_len(uint32_t v)
{
    return 31u - (uint32_t)__builtin_clz(v & GR_VAR_MASK);
}

static inline uint64_t lowmask(uint32_t n)
{
    return (1ull << n) - 1;
}

/* Does entry v (non-zero) match an item of tag t whose stream from the
 * bucket's level on is q? */
static inline bool entry_matches(uint32_t v, uint32_t t, uint64_t q)
{
    return v != 0 && (v >> GR_VAR_BITS) == t &&
           (((v ^ (uint32_t)q) & lowmask(var_len(v))) == 0);
}

/* Items of the stash matching side sd of an item. */
static inline bool stash_matches(const struct cf_grow *g, const gr_side_t *sd,
                                 uint32_t t)
{
    return g->stash_entry != 0 && g->stash_bucket == sd->b &&
           entry_matches(g->stash_entry, t, sd->rest);
}

/* A filter's state as made or loaded. */
typedef struct gr_init {
    uint64_t n0, split, capacity, rng, seed, conv;
    uint32_t level, target, max_kicks, expansion, max_filters;
    uint32_t phase, remap;
    uint32_t inl;  /* may be inline (GR_SHAPE_INLINE): a compact filter of
                      at most GR_INLINE_MAX buckets */
    uint32_t tail; /* bytes after the struct: an inline table left behind */
} gr_init_t;

CF_HIDDEN int gr_new(const gr_init_t *in, cf_filter_t **out);
/* cf_grow_cmp.c: the compact table of n0 buckets (zeroed), the compact
 * phase's delete (its add is cf_grow.c's, GR_CMP_FULL when the conversion
 * must start first),
 * the conversion's start (-ENOMEM past *room) and its steps (the compact
 * table's bytes back on *room when it is freed, room may be NULL). */
#define GR_CMP_FULL 2
CF_HIDDEN int gr_cmp_alloc(struct cf_grow *g);
CF_HIDDEN int gr_cmp_del(struct cf_grow *g, const gr_item_t *it);
CF_HIDDEN int gr_conv_start(struct cf_grow *g, uint64_t *room);
CF_HIDDEN void gr_conv_steps(struct cf_grow *g, uint64_t *room);

/* The base buckets of a new filter: its compact table holds the reserve
 * at CF_GROW_CMP_LOAD. */
static inline uint64_t gr_base_buckets(uint64_t capacity)
{
    unsigned __int128 slots = (unsigned __int128)capacity * GR_LOAD_SCALE;
    uint64_t per = (uint64_t)GR_B * CF_GROW_CMP_LOAD;
    uint64_t n0 = (uint64_t)((slots + per - 1) / per);
    return n0 < 1 ? 1 : n0;
}

/* Bytes of a compact table of n0 buckets. */
static inline uint64_t gr_cmp_bytes(uint64_t n0)
{
    return n0 * 6 + 2;
}
CF_HIDDEN void gr_free(struct cf_grow *g);
CF_HIDDEN void gr_constants(struct cf_grow *g, uint64_t seed);
CF_HIDDEN uint64_t gr_mix64(uint64_t x);
CF_HIDDEN int gr_alloc_to(struct cf_grow *g, uint64_t cap);
/* One capacity step, taking what it adds off *room: -ENOMEM when it does
 * not fit (nothing changes then). */
CF_HIDDEN int gr_cap_step(struct cf_grow *g, uint64_t *room);
CF_HIDDEN uint64_t gr_size_of_cap(uint64_t cap);
CF_HIDDEN uint64_t gr_next_cap(uint64_t cap);

/* The overflow. gr_over_add() counts one more copy of h (0; -ENOMEM when
 * a larger slot table would pass *room, which it takes off; -EOVERFLOW at
 * 2^64 - 1 copies); gr_over_del() one fewer (false: none here). The
 * lookups and the delete are inline up to "no overflow": what every
 * filter without one pays on a lookup the table answers "no". */
CF_HIDDEN uint64_t gr_over_copies(const struct gr_over *o, uint64_t h);
CF_HIDDEN bool gr_over_take(struct gr_over *o, uint64_t h);
CF_HIDDEN int gr_over_add(struct cf_grow *g, uint64_t h, uint64_t *room);

static inline uint64_t gr_over_get(const struct cf_grow *g, uint64_t h)
{
    return g->over != NULL && g->over->used != 0 ? gr_over_copies(g->over, h)
                                                 : 0;
}

static inline bool gr_over_del(struct cf_grow *g, uint64_t h)
{
    return g->over != NULL && g->over->used != 0 && gr_over_take(g->over, h);
}
/* Bytes of an overflow after ndbl doublings (0: none). */
CF_HIDDEN uint64_t gr_over_bytes(uint32_t ndbl);
/* Doublings among the first `event` size changes. */
CF_HIDDEN uint32_t gr_over_dbl_before(const struct cf_grow *g, uint64_t event);
/* An empty slot table of cap slots (0: none) for a load, used as saved. */
CF_HIDDEN int gr_over_load(struct cf_grow *g, uint64_t cap, uint64_t used);
CF_HIDDEN void gr_over_free(struct cf_grow *g);

static inline uint32_t gr_over_ndbl(const struct cf_grow *g)
{
    return g->over != NULL ? g->over->ndbl : 0;
}

/* Size changes so far: the capacity steps, the overflow's doublings and
 * the conversion's start and end (cf_grow_size_at()). */
static inline uint64_t gr_size_events(const struct cf_grow *g)
{
    return g->steps + gr_over_ndbl(g) + (g->conv_at[0] != GR_EV_BEFORE) +
           (g->conv_at[1] != GR_EV_BEFORE);
}

/* Whether n entries are past the load per (per GR_LOAD_SCALE slots) of
 * the buckets in use: an add splits first when its entry would pass the
 * target (gr_past_load(g, entries + 1, target)). */
static inline bool gr_past_load(const struct cf_grow *g, uint64_t n,
                                uint64_t per)
{
    return n * GR_LOAD_SCALE > per * g->nb * GR_B;
}

/* Whether n entries reach the load per (at or past it). */
static inline bool gr_at_load(const struct cf_grow *g, uint64_t n, uint64_t per)
{
    return n * GR_LOAD_SCALE >= per * g->nb * GR_B;
}

/* The entries the buckets in use hold at the target load: the most that
 * are not past it. */
static inline uint64_t gr_target_entries(const struct cf_grow *g)
{
    return g->target * g->nb * GR_B / GR_LOAD_SCALE;
}

/* The growable state's invariants (checked builds, common/check.h): the
 * addressing agrees with level and split, the buckets in use are
 * allocated, and a stashed entry has its marker in a bucket of the table.
 * The entry count is not one: a loaded header's need not match its data
 * (any slots with markers load), and adds count what they store. */
static inline void gr_check(const struct cf_grow *g)
{
    CK_ASSERT(g->nbig == g->n0 << g->level);
    CK_ASSERT(g->lmask == (1ull << g->level) - 1);
    CK_ASSERT(g->split < g->nbig && g->nb == g->nbig + g->split);
    CK_ASSERT(g->phase == GR_COMPACT ? g->nb == g->n0 && g->cap == 0
                                     : g->nb <= g->cap);
    CK_ASSERT((g->cmp != NULL) == (g->phase != GR_WHOLE));
    CK_ASSERT(g->conv <= g->n0);
    CK_ASSERT(g->stash_entry <= 0xFFFFu);
    CK_ASSERT(g->stash_entry == 0 ||
              ((g->stash_entry & GR_VAR_MASK) != 0 && g->stash_bucket < g->nb));
    CK_ASSERT(g->rng != 0);
    (void)g;
}

/* Whether compact bucket b holds the entry of tag t for stream s, in the
 * bucket's own encoding (ss_any(), 9-bit suffix lanes; the entry's 13-bit
 * fingerprint is never 0). */
#define GR_CMP_ONES 0x8040201ull /* bit 0 of each 9-bit lane */
static inline bool cmp_holds(const struct cf_grow *g, uint64_t b, uint32_t t,
                             uint64_t s)
{
    uint32_t fp = t << GR_CMP_STREAM | ((uint32_t)s & 0xFF);
    return ss_any(cmp_load(g, b), fp, 9, GR_CMP_ONES, GR_CMP_ONES << 8) != 0;
}

/* Does the table, the stash or the overflow hold the item? */
static inline bool has_item(const struct cf_grow *g, const gr_item_t *it)
{
    if (g->phase == GR_COMPACT) /* the base table alone */
        return cmp_holds(g, it->j[0], it->t, it->s[0]) ||
               cmp_holds(g, it->j[1], it->t, it->s[1]);
    gr_side_t s0 = gr_side(g, it->j[0], it->s[0]);
    gr_side_t s1 = gr_side(g, it->j[1], it->s[1]);
    uint64_t m = gr_match(gr_word(g, s0.b), gr_want(it->t, s0.rest)) |
                 gr_match(gr_word(g, s1.b), gr_want(it->t, s1.rest));
    return m != 0 || stash_matches(g, &s0, it->t) ||
           stash_matches(g, &s1, it->t) || gr_over_get(g, it->h) != 0;
}

#endif /* CF_GROW_INT_H */
