/*
 * cf_core.h - the filter struct and the inline core every file of the cuckoo
 * core shares (private to filter/): tables, the victim stash, hashing and
 * indexing, and reads of buckets and slots.
 *
 * Layout. A filter is a chain of up to CF_MAX_FILTERS tables ("sub-filters").
 * A table is nbuckets buckets of b slots; slot s (s = bucket * b + j) holds a
 * fingerprint of fp_bits bits at bit offset s * fp_bits of a packed,
 * little-endian byte array. So 12-bit fingerprints take 12 bits, not 16, and
 * a table takes exactly ceil(nbuckets * b * fp_bits / 8) bytes (plus the
 * few bytes of padding its shape needs, never serialised, so that any bucket
 * can be read with one unaligned 64-bit load). Fingerprint 0 marks an empty
 * slot. Semi-sorted buckets are described in cf_ss.h.
 *
 * Memory. Everything filters of one shape have in common (masks, lane
 * tables) is in one read-only table of shapes (cf_shape.h); a filter holds
 * an index into it. A filter that never grew is one allocation: the 40-byte
 * struct, which packs a small table's entry, and the table's bytes (unless
 * the table is large enough to be mapped for huge pages), after any host
 * bytes (cf_resize_extra()). Growth adds an array of table entries and the
 * new tables; the first table's bytes stay where they are (cf_mem.c).
 *
 * Indexing. h = XXH3_64(key, seed). fp = the low fp_bits bits of h (0 is
 * remapped to 1). The primary bucket is i1 = (h * m) >> 64 (Lemire's
 * multiply-shift reduction, any table size m). The alternate bucket is
 * alt(i, fp) = (H(fp) - i) mod m, where H(fp) = (mix(fp) * m) >> 64.
 * alt(alt(i)) = H - (H - i) = i: an involution for every m, so a kicked
 * fingerprint moves without its item, and the table need not be a power of
 * two (xor with a power-of-two mask would waste up to half the memory when
 * the capacity is just above a power of two).
 *
 * Fast path. When a bucket is at most 64 bits and starts on a byte boundary
 * (b*fp_bits in {8,16,24,32,48,64}: b=1,2,4 at 8/16 bits, b=2,4 at 12 bits,
 * b=8 at 8 bits) a bucket is one 64-bit load and all its slots are compared
 * at once with the has-zero-lane trick (SWAR). Other shapes loop over slots.
 *
 * Everything here is static inline: the lookup and insert loops of
 * cf_fixed.c and cf_fixed_batch.c rely on it being inlined into them.
 */
#ifndef CF_CORE_H
#define CF_CORE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "cf.h"
#include "cf_shape.h"
#include "cf_ss.h"
#include "le.h"

/* xxHash compiled into the core (the same algorithm and results as the
 * shared library): a short key hashes in a few instructions inline, and
 * the hot loops keep their state in registers instead of reloading it
 * after an opaque call. */
#define XXH_INLINE_ALL
#include <xxhash.h>

#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
#error "cuckood's filter layout assumes a little-endian host"
#endif

/* Items hashed and prefetched ahead of the one probed in the batched
 * paths. */
#define CF_WINDOW 16

/* A plain 12-bit fingerprint: two share three bytes, read and written
 * with a 16-bit access at byte (3 * s) / 2 and a shift of 4 for odd s. */
#define CF_FP12_MASK 0xFFFu

/* The victim stash of a table, packed into one word: bit 0 set when used,
 * the fingerprint (up to 17 bits) in CF_V_FP_BITS bits from bit 1, the
 * bucket from bit CF_V_INDEX_SHIFT (a table has at most 2^40 buckets:
 * CF_ABS_MAX_BYTES). 0 when empty. */
#define CF_V_USED 1ull
#define CF_V_FP_SHIFT 1
#define CF_V_FP_BITS 18
#define CF_V_FP_MASK 0x3FFFFu /* (1 << CF_V_FP_BITS) - 1 */
#define CF_V_INDEX_SHIFT 19   /* CF_V_FP_SHIFT + CF_V_FP_BITS */
/* The used bit and the fingerprint: the low CF_V_INDEX_SHIFT bits. */
#define CF_V_TAG_MASK 0x7FFFFull
_Static_assert(CF_V_INDEX_SHIFT == CF_V_FP_SHIFT + CF_V_FP_BITS &&
                   CF_V_FP_MASK == (1u << CF_V_FP_BITS) - 1 &&
                   CF_V_TAG_MASK == (1ull << CF_V_INDEX_SHIFT) - 1,
               "victim packing constants disagree");

/* A filter's kind: which code serves it. cf_kind.c dispatches every public
 * function on it, each kind in its own files. */
typedef enum cf_kind {
    CF_KIND_FIXED = 0, /* the fixed shapes and their chain: cf_fixed*.c */
    CF_KIND_GROW = 1,  /* the growable form: cf_grow*.c */
    CF_KIND_RB = 2,    /* imported from RedisBloom: cf_rb.c */
    CF_KIND_WIN = 3,   /* with a window: cf_win*.c */
} cf_kind_t;

/* The magic of the core's own serialised forms (versions 1-3 fixed, 4
 * growable); "CKR1" (cf_rb.h) wraps RedisBloom's. */
#define CF_MAGIC 0x31464B43u /* "CKF1" */
#define CF_GROW_VERSION 4
#define CF_GROW_VERSION5 5

typedef struct cf_table {
    uint8_t *data; /* bytes + the shape's pad bytes, zeroed */
    uint64_t nbuckets;
    uint64_t capacity;
    uint64_t victim; /* the victim stash, packed (CF_V_*) */
} cf_table_t;

/* A small filter (one table, following the struct in its allocation,
 * under SMALL_NB buckets and UINT32_MAX capacity) keeps that table's entry
 * packed into u.one and the struct's counters in 32 bits: with a million
 * filters of capacity 100, each byte of this struct is a megabyte. Every
 * other filter ("big") has its tables' entries in u.arr, oldest first,
 * exactly nfilters of them; a first table that was inline stays where it
 * was when the filter grows. The code works on cf_table_t entries either
 * way: tabs_get() unpacks a small filter's one entry into a local view and
 * tabs_put() packs back what a write changed (its victim). */
struct cf_filter {
    uint64_t seed;
    uint64_t deleted;
    union {
        uint64_t items; /* big */
        struct {
            uint32_t items;    /* < SMALL_NB * CF_MAX_BUCKET_SIZE + 1 */
            uint32_t capacity; /* of the one table */
        } s;                   /* small */
    } n;
    uint16_t max_kicks;  /* <= CF_MAX_KICKS */
    uint16_t expansion;  /* <= CF_MAX_EXPANSION */
    uint8_t max_filters; /* <= CF_MAX_FILTERS */
    uint8_t nfilters;
    uint16_t shape : 12; /* the fixed kind's index into cf_shapes[] */
    uint16_t kind : 2;   /* cf_kind_t: which code serves the filter */
    /* Nested growth: each table has exactly expansion (a power of two)
     * times the buckets of the one before, and its alternates are
     * alt_nested()'s, so that a delete taking the newest match never takes
     * another item's only copy (cf_fixed.c). Filters made before it existed
     * load without it and keep their own sizes. */
    uint16_t nested : 1;
    uint16_t big : 1; /* the tables' entries are in u.arr */
    union {
        /* small: nbuckets in the low SMALL_BITS bits, the victim (as
         * cf_table_t.victim: its bucket is below nbuckets) above them */
        uint64_t one;
        cf_table_t *arr;    /* big */
        struct cf_rb *rb;   /* the RedisBloom form (cf_rb.h) */
        struct cf_grow *gr; /* the growable form (cf_grow.h) */
        struct cf_win *win; /* the window kind (cf_win.h) */
    } u;
    _Alignas(8) uint8_t data[];
};

#define SMALL_BITS 22
#define SMALL_NB (1ull << SMALL_BITS)

/* A small filter costs this struct and its table, nothing else: keep it
 * from growing unnoticed. */
_Static_assert(sizeof(struct cf_filter) == 40, "cf_filter grew");
_Static_assert(CF_NSHAPES <= (1 << 12), "a shape index must fit its field");
/* a small table's victim (used bit, fingerprint, its bucket) above its
 * nbuckets */
_Static_assert(CF_V_INDEX_SHIFT + SMALL_BITS + SMALL_BITS <= 64,
               "a small table's entry must fit one word");
_Static_assert((SMALL_NB * CF_MAX_BUCKET_SIZE) + 1 < UINT32_MAX,
               "a small table's items must fit 32 bits");

#define SH(f) (&cf_shapes[(f)->shape])

/* The breadth-first search for a relocation path (cf_fixed.c for the fixed
 * shapes, cf_grow.c for the growable one) visits at most this many
 * buckets: both of the item's, then (b = 4) 8, 32 and 128 alternates,
 * and part of the next level. */
#define CF_BFS_NODES 256
#define CF_BFS_ROOT UINT16_MAX

/* A bucket the search reached: fp (the entry as it would be stored
 * here), in slot `slot` of the parent's bucket, can move here. */
typedef struct bfs_node {
    uint64_t bucket;
    uint32_t fp;
    uint16_t parent; /* CF_BFS_ROOT for the item's own buckets */
    uint8_t slot;
} bfs_node_t;

/* Is bucket i on the path from the root to node q (q included)? A path
 * through one bucket twice would move an entry out of a slot that
 * another move of the same path has already refilled. */
static inline bool bfs_on_path(const bfs_node_t *nodes, uint32_t q, uint64_t i)
{
    for (; q != CF_BFS_ROOT; q = nodes[q].parent)
        if (nodes[q].bucket == i)
            return true;
    return false;
}

/* cf_shape_index() of the shape of CF_WIDTHS of encoding enc and fp bits
 * at b = CF_SS_B, as a constant expression (a case label). */
#define CF_SHAPE_B4(enc, fp)                                                   \
    ((enc) == CF_ENC_SEMISORTED ? 3 * CF_PLAIN_STRIDE + ((fp)-9) / 4           \
                                : ((fp) / 4 - 2) * CF_PLAIN_STRIDE + CF_SS_B)

/* The tables of f: its array, or a view of a small filter's one table in
 * *one. */
static inline __attribute__((always_inline)) cf_table_t *
tabs_get(const cf_filter_t *f, cf_table_t *one)
{
    if (f->big)
        return f->u.arr;
    one->data = (uint8_t *)f->data;
    one->nbuckets = f->u.one & (SMALL_NB - 1);
    one->capacity = f->n.s.capacity;
    one->victim = f->u.one >> SMALL_BITS;
    return one;
}

/* Stores back what a write may change in a small filter's view: the
 * victim (its table and size never change). */
static inline void tabs_put(cf_filter_t *f, const cf_table_t *t)
{
    if (!f->big)
        f->u.one = (f->u.one & (SMALL_NB - 1)) | t->victim << SMALL_BITS;
}

static inline uint64_t items_of(const cf_filter_t *f)
{
    return f->big ? f->n.items : f->n.s.items;
}

static inline void items_set(cf_filter_t *f, uint64_t n)
{
    if (f->big)
        f->n.items = n;
    else
        f->n.s.items = (uint32_t)n;
}

static inline uint64_t mulhi(uint64_t a, uint64_t b)
{
    return (uint64_t)(((unsigned __int128)a * b) >> 64);
}

/* ---- the victim stash ---- */

static inline bool v_used(const cf_table_t *t)
{
    return t->victim & CF_V_USED;
}

static inline uint32_t v_fp(const cf_table_t *t)
{
    return (uint32_t)(t->victim >> CF_V_FP_SHIFT) & CF_V_FP_MASK;
}

static inline uint64_t v_index(const cf_table_t *t)
{
    return t->victim >> CF_V_INDEX_SHIFT;
}

static inline void v_set(cf_table_t *t, uint64_t i, uint32_t fp)
{
    t->victim =
        i << CF_V_INDEX_SHIFT | (uint64_t)fp << CF_V_FP_SHIFT | CF_V_USED;
}

/* ---- hashing and indexing ---- */

typedef struct cf_hash {
    uint64_t h;
    uint32_t fp;
} cf_hash_t;

/* XXH3_64bits_withSeed(). Keys of up to 16 bytes (the common case) take
 * xxHash's own short-input routine, which inlines: the call that covers
 * every length does not, and the hot loops would pay for it per item. */
static inline __attribute__((always_inline)) uint64_t
key_hash(const void *key, size_t len, uint64_t seed)
{
#if XXH_VERSION_MAJOR == 0 && XXH_VERSION_MINOR == 8
    if (len <= 16)
        return XXH3_len_0to16_64b((const xxh_u8 *)key, len, XXH3_kSecret, seed);
#endif
    return XXH3_64bits_withSeed(key, len, seed);
}

static inline uint32_t fp_of(uint64_t h, uint32_t fp_mask)
{
    uint32_t fp = (uint32_t)h & fp_mask;
    return fp + (fp == 0);
}

static inline __attribute__((always_inline)) cf_hash_t
hash_key(const cf_filter_t *f, const void *key, size_t len)
{
    cf_hash_t r;
    r.h = key_hash(key, len, f->seed);
    r.fp = (uint32_t)r.h & SH(f)->fp_mask;
    r.fp += (r.fp == 0);
    return r;
}

static inline uint64_t index1(const cf_table_t *t, uint64_t h)
{
    return mulhi(h, t->nbuckets);
}

/* 2^64 / golden ratio: multiplying by it spreads consecutive values over
 * the whole word (Fibonacci hashing). */
#define CF_GOLDEN 0x9E3779B97F4A7C15ull

static inline uint64_t alt_of(uint64_t nb, uint64_t i, uint32_t fp)
{
    /* fp << 47 puts the fingerprint's bits into the high half too, which
     * the reduction by nb reads */
    uint64_t hf = mulhi((uint64_t)fp * CF_GOLDEN ^ ((uint64_t)fp << 47), nb);
    return hf >= i ? hf - i : hf + nb - i;
}

/* Mixes a fingerprint into the offset of a nested table's low bits. */
#define CF_NEST_MUL 0xD6E8FEB86659FD93ull

/* The alternate of bucket i in a table of a nested filter that has nb0 << s
 * buckets (s >= 1), nb0 being the first table's: the high part is the
 * first table's alternate of i >> s, the low s bits are flipped by bits of
 * the fingerprint. Dropping the low bit of both buckets of a pair gives the
 * pair of the same fingerprint in the table half the size, so a pair in a
 * newer table always lies over one pair in every older table. */
static inline uint64_t alt_nested(uint64_t nb0, unsigned s, uint64_t i,
                                  uint32_t fp)
{
    uint64_t flip = ((uint64_t)fp * CF_NEST_MUL) >> (64 - s);
    return (alt_of(nb0, i >> s, fp) << s) | ((i ^ flip) & ((1ull << s) - 1));
}

/* The alternate of bucket i for fingerprint fp in table t of f. */
static inline uint64_t alt_index(const cf_filter_t *f, const cf_table_t *t,
                                 uint64_t i, uint32_t fp)
{
    if (f->nested && f->big && t != f->u.arr) {
        uint64_t nb0 = f->u.arr[0].nbuckets;
        unsigned s =
            (unsigned)(__builtin_clzll(nb0) - __builtin_clzll(t->nbuckets));
        return alt_nested(nb0, s, i, fp);
    }
    return alt_of(t->nbuckets, i, fp);
}

static inline const uint8_t *bucket_addr(const cf_filter_t *f,
                                         const cf_table_t *t, uint64_t i)
{
    return t->data + ((i * SH(f)->bucket_bits) >> 3);
}

/* ---- bucket reads ---- */

/* The bucket's bits, in the low bits of the word (more may follow above).
 * A 4-byte bucket is read with a 4-byte load: 4-aligned, it never spans
 * two cache lines, as an 8-byte load from it would in one case of 16. */
static inline uint64_t bucket_word(const cf_filter_t *f, const cf_table_t *t,
                                   uint64_t i)
{
    const uint8_t *p = bucket_addr(f, t, i);
    return SH(f)->bucket_bytes == 4 ? le_load32(p) : le_load64(p);
}

/* The top bit of every lane of x that is zero, exactly (no borrow from a
 * lane below): adding the low bits of each lane to themselves sets the
 * lane's top bit unless they are zero, and cannot carry into the next. */
static inline uint64_t lanes_zero(const cf_filter_t *f, uint64_t x)
{
    return ~(((x & SH(f)->lane_low) + SH(f)->lane_low) | x) & SH(f)->lane_highs;
}

/* Semi-sorted bucket word w: the top bit of the lane of every slot holding
 * fp (fp = 0: the empty slots), exactly, from the same OR'd differences. */
static inline uint64_t ss_marks(const cf_filter_t *f, uint64_t w, uint32_t fp)
{
    uint32_t k = SH(f)->lane_bits;
    uint64_t x =
        (ss_prefix_lanes(w, k) ^ (SH(f)->lane_ones * (fp >> k))) |
        ((w >> CF_SS_IDX_BITS) ^ (SH(f)->lane_ones * (fp & SH(f)->lane_mask)));
    return lanes_zero(f, x);
}

static inline uint32_t slot_get(const cf_filter_t *f, const cf_table_t *t,
                                uint64_t s)
{
    if (SH(f)->ss)
        return ss_slot(SH(f), bucket_word(f, t, s / CF_SS_B),
                       (uint32_t)(s % CF_SS_B));
    switch (SH(f)->fp_bits) {
    case 8:
        return t->data[s];
    case 16:
        return le_load16(t->data + 2 * s);
    default: /* 12 */
        return (uint32_t)(le_load16(t->data + ((3 * s) >> 1)) >>
                          ((s & 1) * 4)) &
               CF_FP12_MASK;
    }
}

/* Any lane of w (b lanes of fp_bits) equal to fp? */
static inline bool word_has(const cf_filter_t *f, uint64_t w, uint32_t fp)
{
    uint64_t x = (w & SH(f)->bucket_mask) ^ (SH(f)->lane_ones * fp);
    return ((x - SH(f)->lane_ones) & ~x & SH(f)->lane_highs) != 0;
}

static inline bool bucket_has(const cf_filter_t *f, const cf_table_t *t,
                              uint64_t i, uint32_t fp)
{
    if (SH(f)->swar)
        return word_has(f, bucket_word(f, t, i), fp);
    if (SH(f)->ss)
        return ss_any(bucket_word(f, t, i), fp, SH(f)->lane_bits,
                      SH(f)->lane_ones, SH(f)->lane_highs) != 0;
    uint64_t s = i * SH(f)->b;
    for (uint32_t j = 0; j < SH(f)->b; j++)
        if (slot_get(f, t, s + j) == fp)
            return true;
    return false;
}

static inline bool victim_is(const cf_table_t *t, uint64_t i1, uint64_t i2,
                             uint32_t fp)
{
    uint64_t v = t->victim, i = v >> CF_V_INDEX_SHIFT;
    return (v & CF_V_TAG_MASK) == ((uint64_t)fp << CF_V_FP_SHIFT | CF_V_USED) &&
           (i == i1 || i == i2);
}

/* The last byte past a bucket's start that its one 8-byte load reads. */
#define CF_PREFETCH_TAIL 7

static inline void prefetch(const void *p)
{
    __builtin_prefetch(p, 0, 3);
}

/* Brings bucket i towards the cache. A bucket whose size is not a power of
 * two (12-bit fingerprints: 6 or 3 bytes) may straddle two cache lines, and
 * the 8-byte load reads up to 7 bytes past its start: fetch that line too,
 * or one probe in nine would wait for a second miss. Always 7 bytes on,
 * whatever the shape: GCC 12 drops every prefetch of the function when the
 * second one is conditional, and an offset read from the shared shape
 * table, whose few values it can see, is turned into just such a branch
 * (the lookups and inserts lost all their prefetches that way). A second
 * prefetch of the same line costs next to nothing. */
static inline void prefetch_bucket(const cf_filter_t *f, const cf_table_t *t,
                                   uint64_t i)
{
    const uint8_t *p = bucket_addr(f, t, i);
    prefetch(p);
    prefetch(p + CF_PREFETCH_TAIL);
}

/* Fast buckets: the top bit of the lane of every slot of bucket i that
 * holds fp (0: the empty ones), exactly. */
static inline uint64_t match_lanes(const cf_filter_t *f, const cf_table_t *t,
                                   uint64_t i, uint32_t fp)
{
    uint64_t w = bucket_word(f, t, i);
    if (SH(f)->ss)
        return ss_marks(f, w, fp);
    return lanes_zero(f, (w & SH(f)->bucket_mask) ^ (SH(f)->lane_ones * fp));
}

static inline uint64_t empty_lanes(const cf_filter_t *f, const cf_table_t *t,
                                   uint64_t i)
{
    return match_lanes(f, t, i, 0);
}

/* Serialised bytes of table t of f. */
static inline uint64_t tbytes(const cf_filter_t *f, const cf_table_t *t)
{
    return cf_table_bytes(t->nbuckets, SH(f)->bucket_bits);
}

static inline bool table_inline(const cf_filter_t *f, const cf_table_t *t)
{
    return t->data == f->data;
}

#endif /* CF_CORE_H */
