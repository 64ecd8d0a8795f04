/*
 * cf.c - the cuckoo filter core.
 *
 * Layout. A filter is a chain of up to CF_MAX_FILTERS tables ("sub-filters").
 * A table is nbuckets buckets of b slots; slot s (s = bucket * b + j) holds a
 * fingerprint of fp_bits bits at bit offset s * fp_bits of a packed,
 * little-endian byte array. So 12-bit fingerprints take 12 bits, not 16, and
 * a table takes exactly ceil(nbuckets * b * fp_bits / 8) bytes (plus the
 * few bytes of padding its shape needs, never serialised, so that any bucket
 * can be read with one unaligned 64-bit load). Fingerprint 0 marks an empty
 * slot.
 *
 * Memory. Everything filters of one shape have in common (masks, lane
 * tables) is in one read-only table of shapes; a filter holds an index
 * into it. A filter that never grew is one allocation: the 40-byte struct,
 * which packs a small table's entry, and the table's bytes (unless the
 * table is large enough to be mapped for huge pages), after any host bytes
 * (cf_resize_extra()). Growth adds an array of table entries and the new
 * tables; the first table's bytes stay where they are.
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
 *
 * Full tables. An insert relocates fingerprints for at most max_kicks steps,
 * looking one step ahead for a slot whose alternate bucket has room. When it
 * gives up, the homeless fingerprint goes into the table's one-entry victim
 * stash, so nothing is lost; the next insert into that table then fails over
 * to growth (a new table expansion times larger) or to -ENOSPC.
 *
 * Serialised form, little-endian, version 2:
 *   0  u32 magic "CKF1"      4  u16 version      6  u16 header length
 *   8  u32 bucket size      12  u8 fp bits      13  u8 nfilters
 *  14  u8 encoding (CF_ENC_*)                    15  u8 0
 *  16  u32 max kicks        20  u32 expansion   24  u32 max filters 28 u32 0
 *  32  u64 seed             40  u64 items       48  u64 deleted
 *  56  per table, 32 bytes: u64 nbuckets, u64 capacity, u64 victim bucket,
 *      u32 victim fingerprint, u8 victim used, 3 bytes 0
 *  ..  u64 XXH3-64 of all the header bytes before it
 * followed by the data: every table's bytes, oldest table first.
 * Version 1 (still read) had byte 14 = 0 (plain, the only encoding then)
 * and per table a u16 victim fingerprint, u8 victim used, 5 bytes 0.
 */
#include "cf.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

/* xxHash compiled into the core (the same algorithm and results as the
 * shared library): a short key hashes in a few instructions inline, and
 * the hot loops keep their state in registers instead of reloading it
 * after an opaque call. */
#define XXH_INLINE_ALL
#include <xxhash.h>

#include "cf_ss_table.h"

#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
#error "cuckood's filter layout assumes a little-endian host"
#endif

#define CF_MAGIC 0x31464B43u /* "CKF1" */
#define CF_VERSION 2
#define CF_HDR_FIXED 56
#define CF_HDR_TABLE 32
/* Nothing we load may ask for more than 1 TiB of tables, whatever the caller
 * allows: sizes beyond it are garbage, and the arithmetic stays far from
 * overflow. */
#define CF_ABS_MAX_BYTES (1ull << 40)
#define CF_WINDOW 16
/* Tables from this size up are mapped directly and marked for huge pages:
 * random probes over a large table otherwise miss the TLB on every access. */
#define CF_MAP_MIN (2u << 20)

typedef struct cf_table {
    uint8_t *data; /* bytes + the shape's pad bytes, zeroed */
    uint64_t nbuckets;
    uint64_t capacity;
    /* The victim stash, packed: bit 0 set when used, the fingerprint in
     * bits 1..18, the bucket from bit 19 (a table has at most 2^40
     * buckets: CF_ABS_MAX_BYTES). 0 when empty. */
    uint64_t victim;
} cf_table_t;

/* What every filter of one shape (bucket size, fingerprint width,
 * encoding) shares: set once at load time (shapes_init()) and read-only
 * after, so a filter carries an index into the table instead of a copy.
 * swar: a plain bucket of one word; ss: semi-sorted; fast: either, so the
 * lanes are set and per-slot marks exist. The lanes are the fingerprints
 * of a plain bucket, the suffixes of a semi-sorted one (in the bucket
 * word shifted right by 12). */
typedef struct cf_shape {
    uint64_t lane_ones, lane_highs, lane_low, bucket_mask, word_mask;
    uint32_t b, fp_bits, encoding, fp_mask;
    uint32_t bucket_bits;  /* b * fp_bits, or 4 * fp_bits - 4 when ss */
    uint32_t bucket_bytes; /* when fast */
    uint32_t pad;          /* zeroed bytes a table needs after its end */
    uint32_t lane_bits, lane_mask;
    bool swar, ss, fast;
    uint8_t lane_of_bit[64]; /* when fast: slot of the lane a bit is in */
} cf_shape_t;

/* Plain shapes at [(fp_bits / 4 - 2) * 256 + b], then the three
 * semi-sorted ones (b = 4; 9, 13, 17 bits). */
#define CF_NSHAPES (3 * 256 + 3)
static cf_shape_t shapes[CF_NSHAPES];

static uint32_t shape_index(uint32_t encoding, uint32_t b, uint32_t fp_bits)
{
    if (encoding == CF_ENC_SEMISORTED)
        return 3 * 256 + (fp_bits - 9) / 4;
    return (fp_bits / 4 - 2) * 256 + b;
}

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
    uint16_t max_kicks;   /* <= CF_MAX_KICKS */
    uint16_t expansion;   /* <= CF_MAX_EXPANSION */
    uint8_t max_filters;  /* <= CF_MAX_FILTERS */
    uint8_t nfilters;
    uint16_t shape : 15;  /* index into shapes[] */
    uint16_t big : 1;     /* the tables' entries are in u.arr */
    union {
        /* small: nbuckets in the low SMALL_BITS bits, the victim (as
         * cf_table_t.victim: its bucket is below nbuckets) above them */
        uint64_t one;
        cf_table_t *arr; /* big */
    } u;
    _Alignas(8) uint8_t data[];
};

#define SMALL_BITS 22
#define SMALL_NB (1ull << SMALL_BITS)

/* A small filter costs this struct and its table, nothing else: keep it
 * from growing unnoticed. */
_Static_assert(sizeof(struct cf_filter) == 40, "cf_filter grew");
/* a small table's victim: used, 18 bits of fingerprint, its bucket */
_Static_assert(1 + 18 + SMALL_BITS + SMALL_BITS <= 64,
               "a small table's entry must fit one word");
_Static_assert(SMALL_NB * CF_MAX_BUCKET_SIZE + 1 < UINT32_MAX,
               "a small table's items must fit 32 bits");

#define SH(f) (&shapes[(f)->shape])

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

_Static_assert(CF_HEADER_MAX ==
                   CF_HDR_FIXED + CF_MAX_FILTERS * CF_HDR_TABLE + 8,
               "cf.h's CF_HEADER_MAX must match the header layout");

/* ---- small helpers ---- */

static inline uint64_t load64(const uint8_t *p)
{
    uint64_t v;
    memcpy(&v, p, sizeof(v));
    return v;
}

static inline uint32_t load32(const uint8_t *p)
{
    uint32_t v;
    memcpy(&v, p, sizeof(v));
    return v;
}

static inline void store64(uint8_t *p, uint64_t v)
{
    memcpy(p, &v, sizeof(v));
}

static inline uint16_t load16(const uint8_t *p)
{
    uint16_t v;
    memcpy(&v, p, sizeof(v));
    return v;
}

static inline void store16(uint8_t *p, uint16_t v)
{
    memcpy(p, &v, sizeof(v));
}

static inline void put_u16(uint8_t *p, uint16_t v)
{
    p[0] = (uint8_t)v;
    p[1] = (uint8_t)(v >> 8);
}

static inline void put_u32(uint8_t *p, uint32_t v)
{
    for (int i = 0; i < 4; i++)
        p[i] = (uint8_t)(v >> (8 * i));
}

static inline void put_u64(uint8_t *p, uint64_t v)
{
    for (int i = 0; i < 8; i++)
        p[i] = (uint8_t)(v >> (8 * i));
}

static inline uint16_t get_u16(const uint8_t *p)
{
    return (uint16_t)(p[0] | (p[1] << 8));
}

static inline uint32_t get_u32(const uint8_t *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 |
           (uint32_t)p[3] << 24;
}

static inline uint64_t get_u64(const uint8_t *p)
{
    uint64_t v = 0;
    for (int i = 7; i >= 0; i--)
        v = v << 8 | p[i];
    return v;
}

static inline uint64_t mulhi(uint64_t a, uint64_t b)
{
    return (uint64_t)(((unsigned __int128)a * b) >> 64);
}

static inline uint64_t rng_next(uint64_t *state)
{
    /* xorshift64*: only picks which slot to kick, so quality needs little. */
    uint64_t x = *state;
    x ^= x >> 12;
    x ^= x << 25;
    x ^= x >> 27;
    *state = x;
    return x * 0x2545F4914F6CDD1Dull;
}

/* The relocation walk's random choices are a function of the filter's
 * serialised state (seed, counters) and of the item alone, never of the
 * history of one process: a replica that re-runs the same inserts, or a
 * filter loaded from a dump, makes exactly the same moves. */
static inline uint64_t rng_seed(const cf_filter_t *f, uint64_t i1, uint32_t fp)
{
    uint64_t x = f->seed ^ 0x9E3779B97F4A7C15ull;
    x ^= (items_of(f) + 0x632BE59BD9B4E019ull) * 0xBF58476D1CE4E5B9ull;
    x ^= (f->deleted + f->nfilters) * 0x94D049BB133111EBull;
    x ^= (i1 << 16) ^ fp;
    x ^= x >> 31;
    return x != 0 ? x : 1;
}

/* ---- the victim stash ---- */

static inline bool v_used(const cf_table_t *t)
{
    return t->victim & 1;
}

static inline uint32_t v_fp(const cf_table_t *t)
{
    return (uint32_t)(t->victim >> 1) & 0x3FFFF;
}

static inline uint64_t v_index(const cf_table_t *t)
{
    return t->victim >> 19;
}

static inline void v_set(cf_table_t *t, uint64_t i, uint32_t fp)
{
    t->victim = i << 19 | (uint64_t)fp << 1 | 1;
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
        return XXH3_len_0to16_64b((const xxh_u8 *)key, len, XXH3_kSecret,
                                  seed);
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

static inline uint64_t alt_of(uint64_t nb, uint64_t i, uint32_t fp)
{
    uint64_t hf =
        mulhi((uint64_t)fp * 0x9E3779B97F4A7C15ull ^ ((uint64_t)fp << 47), nb);
    return hf >= i ? hf - i : hf + nb - i;
}

static inline uint64_t alt_index(const cf_table_t *t, uint64_t i, uint32_t fp)
{
    return alt_of(t->nbuckets, i, fp);
}

static inline const uint8_t *bucket_addr(const cf_filter_t *f,
                                         const cf_table_t *t, uint64_t i)
{
    return t->data + ((i * SH(f)->bucket_bits) >> 3);
}

/* ---- semi-sorted buckets ---- */

/* The bucket's bits, in the low bits of the word (more may follow above).
 * A 4-byte bucket is read with a 4-byte load: 4-aligned, it never spans
 * two cache lines, as an 8-byte load from it would in one case of 16. */
static inline uint64_t bucket_word(const cf_filter_t *f, const cf_table_t *t,
                                   uint64_t i)
{
    const uint8_t *p = bucket_addr(f, t, i);
    return SH(f)->bucket_bytes == 4 ? load32(p) : load64(p);
}

/* The top bit of every lane of x that is zero, exactly (no borrow from a
 * lane below): adding the low bits of each lane to themselves sets the
 * lane's top bit unless they are zero, and cannot carry into the next. */
static inline uint64_t lanes_zero(const cf_filter_t *f, uint64_t x)
{
    return ~(((x & SH(f)->lane_low) + SH(f)->lane_low) | x) & SH(f)->lane_highs;
}

/* The four prefixes of semi-sorted bucket word w, prefix j in the low bits
 * of suffix lane j (k bits wide). */
static inline uint64_t ss_prefix_lanes(uint64_t w, uint32_t k)
{
    uint32_t idx = (uint32_t)w & 0xFFF;
    if (k == 5)
        return ss_lanes5[idx];
    if (k == 9)
        return ss_lanes9[idx];
    uint64_t v = ss_unrank[idx];
    return (v & 0xF) | (v & 0xF0) << (k - 4) | (v & 0xF00) << (2 * k - 8) |
           (v & 0xF000) << (3 * k - 12);
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
                 ((w >> 12) ^ (ones * (fp & ((1u << k) - 1))));
    return (x - ones) & ~x & highs;
}

/* Semi-sorted bucket word w: the top bit of the lane of every slot holding
 * fp (fp = 0: the empty slots), exactly, from the same OR'd differences. */
static inline uint64_t ss_marks(const cf_filter_t *f, uint64_t w, uint32_t fp)
{
    uint32_t k = SH(f)->lane_bits;
    uint64_t x = (ss_prefix_lanes(w, k) ^ (SH(f)->lane_ones * (fp >> k))) |
                 ((w >> 12) ^ (SH(f)->lane_ones * (fp & SH(f)->lane_mask)));
    return lanes_zero(f, x);
}

static inline uint32_t ss_slot(const cf_filter_t *f, uint64_t w, uint32_t j)
{
    uint32_t k = SH(f)->lane_bits;
    uint32_t prefix = (uint32_t)(ss_unrank[w & 0xFFF] >> (4 * j)) & 0xF;
    return prefix << k | ((uint32_t)(w >> (12 + k * j)) & SH(f)->lane_mask);
}

/* a, b = min, max: selects, not branches (the order of fingerprints is
 * random). */
#define CSWAP(a, b)                                                            \
    do {                                                                       \
        uint32_t lo_ = (a) < (b) ? (a) : (b), hi_ = (a) ^ (b) ^ lo_;           \
        (a) = lo_;                                                             \
        (b) = hi_;                                                             \
    } while (0)

/* Slot j of semi-sorted bucket i becomes fp; the bucket is sorted (by a
 * five-comparator network) and encoded again. */
static void ss_set(const cf_filter_t *f, cf_table_t *t, uint64_t i,
                   uint32_t j, uint32_t fp)
{
    const uint32_t k = SH(f)->lane_bits, km = SH(f)->lane_mask;
    const uint64_t wm = SH(f)->word_mask;
    uint8_t *p = t->data + i * SH(f)->bucket_bytes;
    uint64_t old = load64(p), w = old & wm, sfx = w >> 12;
    uint32_t nib = ss_unrank[w & 0xFFF];
    uint32_t v0 = (nib & 0xF) << k | ((uint32_t)sfx & km);
    uint32_t v1 = (nib >> 4 & 0xF) << k | ((uint32_t)(sfx >> k) & km);
    uint32_t v2 = (nib >> 8 & 0xF) << k | ((uint32_t)(sfx >> 2 * k) & km);
    uint32_t v3 = (nib >> 12) << k | ((uint32_t)(sfx >> 3 * k) & km);
    v0 = j == 0 ? fp : v0;
    v1 = j == 1 ? fp : v1;
    v2 = j == 2 ? fp : v2;
    v3 = j == 3 ? fp : v3;
    CSWAP(v0, v1);
    CSWAP(v2, v3);
    CSWAP(v0, v2);
    CSWAP(v1, v3);
    CSWAP(v1, v2);
    uint64_t e = (uint64_t)(ss_rank[0][v0 >> k] + ss_rank[1][v1 >> k] +
                            ss_rank[2][v2 >> k] + ss_rank[3][v3 >> k]) |
                 (uint64_t)(v0 & km) << 12 | (uint64_t)(v1 & km) << (12 + k) |
                 (uint64_t)(v2 & km) << (12 + 2 * k) |
                 (uint64_t)(v3 & km) << (12 + 3 * k);
    store64(p, (old & ~wm) | e);
}

/* ---- slots ---- */

static inline uint32_t slot_get(const cf_filter_t *f, const cf_table_t *t,
                                uint64_t s)
{
    if (SH(f)->ss)
        return ss_slot(f, bucket_word(f, t, s >> 2), (uint32_t)(s & 3));
    switch (SH(f)->fp_bits) {
    case 8:
        return t->data[s];
    case 16:
        return load16(t->data + 2 * s);
    default: /* 12 */
        return (uint32_t)(load16(t->data + ((3 * s) >> 1)) >> ((s & 1) * 4)) &
               0xFFF;
    }
}

static inline void slot_set(const cf_filter_t *f, cf_table_t *t, uint64_t s,
                            uint32_t fp)
{
    if (SH(f)->ss) {
        ss_set(f, t, s >> 2, (uint32_t)(s & 3), fp);
        return;
    }
    switch (SH(f)->fp_bits) {
    case 8:
        t->data[s] = (uint8_t)fp;
        break;
    case 16:
        store16(t->data + 2 * s, (uint16_t)fp);
        break;
    default: {
        uint8_t *p = t->data + ((3 * s) >> 1);
        unsigned sh = (unsigned)(s & 1) * 4;
        uint16_t v = load16(p);
        v = (uint16_t)((v & ~(0xFFFu << sh)) | (fp << sh));
        store16(p, v);
    }
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
    uint64_t v = t->victim, i = v >> 19;
    return (v & 0x7FFFF) == ((uint64_t)fp << 1 | 1) && (i == i1 || i == i2);
}

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
    prefetch(p + 7);
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

/* How many lanes match_lanes() marked: the marks, moved to the lanes'
 * bottoms and multiplied by the lane pattern, sum up in the top lane
 * (b <= 8 keeps the sum below 2^lane_bits). No popcount instruction. */
static inline uint32_t lanes_count(const cf_filter_t *f, uint64_t marks)
{
    uint64_t e = marks >> (SH(f)->lane_bits - 1);
    return (uint32_t)((e * SH(f)->lane_ones) >>
                      ((SH(f)->b - 1) * SH(f)->lane_bits)) &
           SH(f)->lane_mask;
}

/* Index of the first slot in bucket i holding fp, or -1. */
static int bucket_find(const cf_filter_t *f, const cf_table_t *t, uint64_t i,
                       uint32_t fp)
{
    if (SH(f)->fast) {
        uint64_t m = match_lanes(f, t, i, fp);
        return m ? (int)SH(f)->lane_of_bit[__builtin_ctzll(m)] : -1;
    }
    uint64_t s = i * SH(f)->b;
    for (uint32_t j = 0; j < SH(f)->b; j++)
        if (slot_get(f, t, s + j) == fp)
            return (int)j;
    return -1;
}

static uint64_t bucket_count(const cf_filter_t *f, const cf_table_t *t,
                             uint64_t i, uint32_t fp)
{
    if (SH(f)->fast)
        return lanes_count(f, match_lanes(f, t, i, fp));
    uint64_t n = 0, s = i * SH(f)->b;
    for (uint32_t j = 0; j < SH(f)->b; j++)
        n += slot_get(f, t, s + j) == fp;
    return n;
}

static bool bucket_put(const cf_filter_t *f, cf_table_t *t, uint64_t i,
                       uint32_t fp)
{
    if (SH(f)->fast) {
        uint64_t m = empty_lanes(f, t, i);
        if (m == 0)
            return false;
        slot_set(f, t, i * SH(f)->b + SH(f)->lane_of_bit[__builtin_ctzll(m)],
                 fp);
        return true;
    }
    int j = bucket_find(f, t, i, 0);
    if (j < 0)
        return false;
    slot_set(f, t, i * SH(f)->b + (uint64_t)j, fp);
    return true;
}

/* ---- parameters and sizing ---- */

void cf_params_default(cf_params_t *p)
{
    memset(p, 0, sizeof(*p));
    p->capacity = 1024;
    p->bucket_size = 4;
    p->fp_bits = 12;
    p->max_kicks = 500;
    p->expansion = 1;
    p->max_filters = CF_DEFAULT_MAX_FILTERS;
}

static bool encoding_valid(uint32_t encoding, uint32_t b, uint32_t fp_bits)
{
    switch (encoding) {
    case CF_ENC_PLAIN:
        return fp_bits == 8 || fp_bits == 12 || fp_bits == 16;
    case CF_ENC_SEMISORTED:
        return b == 4 && (fp_bits == 9 || fp_bits == 13 || fp_bits == 17);
    default:
        return false;
    }
}

static uint32_t bucket_bits_of(uint32_t encoding, uint32_t b,
                               uint32_t fp_bits)
{
    return encoding == CF_ENC_SEMISORTED ? 4 * fp_bits - 4 : b * fp_bits;
}

int cf_params_check(const cf_params_t *p)
{
    if (p == NULL || p->capacity < 1 || p->bucket_size < 1 ||
        p->bucket_size > CF_MAX_BUCKET_SIZE ||
        !encoding_valid(p->encoding, p->bucket_size, p->fp_bits) ||
        p->max_kicks < 1 || p->max_kicks > CF_MAX_KICKS ||
        p->expansion > CF_MAX_EXPANSION || p->max_filters < 1 ||
        p->max_filters > CF_MAX_FILTERS)
        return -EINVAL;
    return 0;
}

/* The load a bucket size reaches reliably with max kicks in the hundreds
 * and one-step lookahead (the paper's 50/84/95/98% for b = 1/2/4/8 with a
 * small margin where the walk gets help from the lookahead). */
static double target_load(uint32_t b)
{
    static const double load[] = {0, 0.50, 0.84, 0.90, 0.95,
                                  0.96, 0.965, 0.97, 0.98};
    return b < 9 ? load[b] : 0.98;
}

/* Buckets for capacity items at bucket size b; 0 if absurdly large. */
static uint64_t buckets_for(uint64_t capacity, uint32_t b)
{
    if (capacity > (1ull << 50))
        return 0;
    double nb = ceil((double)capacity / ((double)b * target_load(b)));
    if (nb < 1)
        nb = 1;
    return (uint64_t)nb;
}

/* Serialised bytes of a table of buckets of bucket_bits, or 0 when it
 * passes CF_ABS_MAX_BYTES. */
static uint64_t table_bytes(uint64_t nbuckets, uint32_t bucket_bits)
{
    if (nbuckets == 0 || nbuckets > (CF_ABS_MAX_BYTES * 8) / bucket_bits)
        return 0;
    return (nbuckets * bucket_bits + 7) / 8;
}

uint64_t cf_params_table_bytes(const cf_params_t *p)
{
    if (cf_params_check(p) < 0)
        return 0;
    uint64_t nb = buckets_for(p->capacity, p->bucket_size);
    const cf_shape_t *sh =
        &shapes[shape_index(p->encoding, p->bucket_size, p->fp_bits)];
    uint64_t bytes = table_bytes(nb, sh->bucket_bits);
    return bytes ? bytes + sh->pad : 0;
}

double cf_error_bound(uint32_t bucket_size, uint32_t fp_bits)
{
    if (fp_bits == 0 || fp_bits > 32)
        return 1.0;
    double e = 2.0 * bucket_size / (ldexp(1.0, (int)fp_bits) - 1.0);
    return e > 1.0 ? 1.0 : e;
}

uint32_t cf_fp_bits_for_rate(uint32_t bucket_size, double rate)
{
    static const uint32_t widths[] = {8, 12, 16};
    if (!(rate > 0.0 && rate < 1.0))
        return 0;
    for (size_t i = 0; i < sizeof(widths) / sizeof(widths[0]); i++)
        if (cf_error_bound(bucket_size, widths[i]) <= rate)
            return widths[i];
    return 0;
}

int cf_params_for_error_rate(cf_params_t *p, double rate)
{
    /* by bits per slot, plain first among equals */
    static const struct {
        uint32_t encoding, fp_bits;
    } encs[] = {
        {CF_ENC_PLAIN, 8},  {CF_ENC_SEMISORTED, 9},
        {CF_ENC_PLAIN, 12}, {CF_ENC_SEMISORTED, 13},
        {CF_ENC_PLAIN, 16}, {CF_ENC_SEMISORTED, 17},
    };
    if (!(rate > 0.0 && rate < 1.0) || p->bucket_size < 1 ||
        p->bucket_size > CF_MAX_BUCKET_SIZE)
        return -EINVAL;
    for (size_t i = 0; i < sizeof(encs) / sizeof(encs[0]); i++) {
        if (!encoding_valid(encs[i].encoding, p->bucket_size,
                            encs[i].fp_bits))
            continue;
        if (cf_error_bound(p->bucket_size, encs[i].fp_bits) <= rate) {
            p->fp_bits = encs[i].fp_bits;
            p->encoding = encs[i].encoding;
            return 0;
        }
    }
    return -EINVAL;
}

uint32_t cf_slot_bits(uint32_t encoding, uint32_t fp_bits)
{
    return encoding == CF_ENC_SEMISORTED ? fp_bits - 1 : fp_bits;
}

const char *cf_encoding_name(uint32_t encoding)
{
    switch (encoding) {
    case CF_ENC_PLAIN:
        return "plain";
    case CF_ENC_SEMISORTED:
        return "semi-sorted";
    default:
        return "unknown";
    }
}

/* ---- create / free ---- */

static void shape_setup(cf_shape_t *s, uint32_t encoding, uint32_t b,
                        uint32_t fp_bits)
{
    memset(s, 0, sizeof(*s));
    s->b = b;
    s->fp_bits = fp_bits;
    s->encoding = encoding;
    s->fp_mask = (1u << fp_bits) - 1;
    s->ss = encoding == CF_ENC_SEMISORTED;
    uint32_t bits = bucket_bits_of(encoding, b, fp_bits);
    s->bucket_bits = bits;
    s->swar = !s->ss && bits <= 64 && bits % 8 == 0;
    s->fast = s->swar || s->ss;
    /* Generic shapes: any bucket may cross a line, and the 16-bit slot
     * loads stay inside the table, but keep a word of slack. */
    s->pad = 8;
    if (!s->fast)
        return;
    s->bucket_bytes = bits / 8;
    /* A bucket is read (and a semi-sorted one rewritten) with one 64-bit
     * access at its start: the last bucket needs the rest of the word. */
    s->pad = 8 - (s->bucket_bytes < 8 ? s->bucket_bytes : 8);
    s->word_mask = bits == 64 ? ~0ull : (1ull << bits) - 1;
    uint32_t lane = s->ss ? fp_bits - 4 : fp_bits;
    uint32_t lanes_bits = b * lane;
    s->lane_bits = lane;
    s->lane_mask = (1u << lane) - 1;
    for (uint32_t j = 0; j < b; j++)
        s->lane_ones |= 1ull << (j * lane);
    s->lane_highs = s->lane_ones << (lane - 1);
    s->bucket_mask = lanes_bits == 64 ? ~0ull : (1ull << lanes_bits) - 1;
    s->lane_low = s->bucket_mask & ~s->lane_highs;
    for (uint32_t bit = 0; bit < 64; bit++)
        s->lane_of_bit[bit] = (uint8_t)(bit / lane);
}

/* Runs once when the program (or the module) is loaded, before any
 * thread could ask for a shape; nothing writes the table after it. */
__attribute__((constructor)) static void shapes_init(void)
{
    static const uint32_t plain[] = {8, 12, 16}, semi[] = {9, 13, 17};
    for (uint32_t w = 0; w < 3; w++) {
        for (uint32_t b = 1; b <= CF_MAX_BUCKET_SIZE; b++)
            shape_setup(&shapes[shape_index(CF_ENC_PLAIN, b, plain[w])],
                        CF_ENC_PLAIN, b, plain[w]);
        shape_setup(&shapes[shape_index(CF_ENC_SEMISORTED, 4, semi[w])],
                    CF_ENC_SEMISORTED, 4, semi[w]);
    }
}

/* ---- allocation ---- */

/* libc's allocator family unless a host installed its own (cf.h). */
static cf_allocator_t mem = {malloc, calloc, realloc, free};
static size_t map_min = CF_MAP_MIN; /* 0: no table is mapped */

void cf_set_allocator(const cf_allocator_t *a)
{
    if (a == NULL) {
        mem = (cf_allocator_t){malloc, calloc, realloc, free};
        map_min = CF_MAP_MIN;
    } else {
        mem = *a;
        map_min = 0;
    }
}

void cf_set_map_min(size_t min)
{
    map_min = min;
}

/* Tables of n bytes (pad included) are mapped from the kernel, not taken
 * from the allocator, when the host allows it (cf_set_map_min(); a host
 * whose accounting counts on its allocator must see every table). The
 * allocator and map_min are set once, before any filter exists (cf.h), so
 * this answers the same at free time as at allocation time. */
static bool table_mapped(uint64_t n)
{
    return map_min != 0 && n >= map_min;
}

/* Zeroed memory straight from the kernel, hinted for transparent huge
 * pages; NULL on failure. */
static uint8_t *table_map(size_t n)
{
    void *p = mmap(NULL, n, PROT_READ | PROT_WRITE,
                   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED)
        return NULL;
#ifdef MADV_HUGEPAGE
    (void)madvise(p, n, MADV_HUGEPAGE);
#endif
    return p;
}

/* Serialised bytes of table t of f. */
static uint64_t tbytes(const cf_filter_t *f, const cf_table_t *t)
{
    return table_bytes(t->nbuckets, SH(f)->bucket_bits);
}

static bool table_inline(const cf_filter_t *f, const cf_table_t *t)
{
    return t->data == f->data;
}

/* Releases the bytes of table t of f (nothing for the inline one). */
static void table_release(const cf_filter_t *f, const cf_table_t *t)
{
    uint64_t n = tbytes(f, t) + SH(f)->pad;
    if (t->data == NULL || table_inline(f, t))
        return;
    if (table_mapped(n))
        munmap(t->data, (size_t)n);
    else
        mem.free_fn(t->data);
}

/* Appends table number f->nfilters (>= 1) with the given shape: its bytes
 * on their own, its entry in u.arr (made here when the filter was small,
 * from the view tabs[0]). The growth takes at most *room bytes (what is
 * taken comes off it). On failure f is unchanged. */
static int table_alloc(cf_filter_t *f, const cf_table_t *tabs,
                       uint64_t nbuckets, uint64_t capacity, uint64_t *room)
{
    const cf_shape_t *sh = SH(f);
    uint64_t bytes = table_bytes(nbuckets, sh->bucket_bits);
    if (bytes == 0 || bytes + sh->pad > SIZE_MAX)
        return -ENOMEM;
    uint64_t n = bytes + sh->pad;
    uint32_t nf = f->nfilters;
    uint64_t entries = (uint64_t)(nf + 1) * sizeof(cf_table_t) -
                       (f->big ? (uint64_t)nf * sizeof(cf_table_t) : 0);
    if (n + entries > *room)
        return -ENOMEM;
    bool mapped = table_mapped(n);
    uint8_t *data =
        mapped ? table_map((size_t)n) : mem.calloc_fn(1, (size_t)n);
    if (data == NULL)
        return -ENOMEM;
    /* One entry more, exactly: growth is rare (at most CF_MAX_FILTERS
     * times) and the array's size is part of the filter's size. */
    cf_table_t *arr =
        f->big ? mem.realloc_fn(f->u.arr, (nf + 1) * sizeof(cf_table_t))
               : mem.malloc_fn(2 * sizeof(cf_table_t));
    if (arr == NULL) {
        if (mapped)
            munmap(data, (size_t)n);
        else
            mem.free_fn(data);
        return -ENOMEM;
    }
    if (!f->big) {
        uint64_t items = f->n.s.items;
        arr[0] = tabs[0];
        f->big = 1;
        f->n.items = items;
    }
    f->u.arr = arr;
    arr[nf] = (cf_table_t){.data = data, .nbuckets = nbuckets,
                           .capacity = capacity};
    f->nfilters++;
    *room -= n + entries;
    return 0;
}

/* Whether a first table of nbuckets and capacity whose bytes follow the
 * struct (inline) makes a small filter. */
static bool small_fits(bool inl, uint64_t nbuckets, uint64_t capacity)
{
    return inl && nbuckets < SMALL_NB && capacity <= UINT32_MAX;
}

/* The bytes of f's array of table entries when it had nt tables: a
 * small filter has none until it grows. */
static uint64_t arr_bytes_at(const cf_filter_t *f, const cf_table_t *tabs,
                             uint32_t nt)
{
    if (!f->big || (nt == 1 && small_fits(table_inline(f, &tabs[0]),
                                          tabs[0].nbuckets,
                                          tabs[0].capacity)))
        return 0;
    return (uint64_t)nt * sizeof(cf_table_t);
}

/* A filter with its first table (nbuckets, capacity; zeroed), inline
 * when small. NULL when out of memory. */
static cf_filter_t *filter_new(const cf_params_t *p, uint64_t nbuckets)
{
    const cf_shape_t *sh =
        &shapes[shape_index(p->encoding, p->bucket_size, p->fp_bits)];
    uint64_t bytes = table_bytes(nbuckets, sh->bucket_bits);
    if (bytes == 0 || bytes + sh->pad > SIZE_MAX - sizeof(cf_filter_t))
        return NULL;
    uint64_t n = bytes + sh->pad;
    bool mapped = table_mapped(n);
    cf_filter_t *f = mem.calloc_fn(
        1, (size_t)(sizeof(cf_filter_t) + (mapped ? 0 : n)));
    if (f == NULL)
        return NULL;
    f->shape = (uint16_t)(sh - shapes);
    f->nfilters = 1;
    f->max_kicks = (uint16_t)p->max_kicks;
    f->expansion = (uint16_t)p->expansion;
    f->max_filters = (uint8_t)p->max_filters;
    f->seed = p->seed;
    if (small_fits(!mapped, nbuckets, p->capacity)) {
        f->u.one = nbuckets;
        f->n.s.capacity = (uint32_t)p->capacity;
        return f;
    }
    cf_table_t *arr = mem.malloc_fn(sizeof(cf_table_t));
    uint8_t *data = arr == NULL ? NULL : mapped ? table_map((size_t)n) : f->data;
    if (data == NULL) {
        mem.free_fn(arr);
        mem.free_fn(f);
        return NULL;
    }
    arr[0] = (cf_table_t){
        .data = data, .nbuckets = nbuckets, .capacity = p->capacity};
    f->big = 1;
    f->u.arr = arr;
    return f;
}

int cf_create(const cf_params_t *p, cf_filter_t **out)
{
    *out = NULL;
    if (cf_params_check(p) < 0)
        return -EINVAL;
    uint64_t nb = buckets_for(p->capacity, p->bucket_size);
    const cf_shape_t *sh =
        &shapes[shape_index(p->encoding, p->bucket_size, p->fp_bits)];
    uint64_t bytes = table_bytes(nb, sh->bucket_bits);
    if (nb == 0 || bytes == 0)
        return -ENOMEM;
    /* a filter too large to be small has an entry of its own */
    uint64_t entry = small_fits(!table_mapped(bytes + sh->pad), nb,
                                p->capacity)
                         ? 0
                         : sizeof(cf_table_t);
    if (p->max_bytes &&
        sizeof(cf_filter_t) + entry + bytes + sh->pad > p->max_bytes)
        return -ENOMEM;
    cf_filter_t *f = filter_new(p, nb);
    if (f == NULL)
        return -ENOMEM;
    *out = f;
    return 0;
}

void cf_free_extra(cf_filter_t *f, size_t have)
{
    if (f == NULL)
        return;
    cf_table_t one, *tabs = tabs_get(f, &one);
    for (uint32_t k = 0; k < f->nfilters; k++)
        table_release(f, &tabs[k]);
    if (f->big)
        mem.free_fn(f->u.arr);
    mem.free_fn((uint8_t *)f - have);
}

void cf_free(cf_filter_t *f)
{
    cf_free_extra(f, 0);
}

/* ---- lookups ---- */

static bool table_has(const cf_filter_t *f, const cf_table_t *t,
                      cf_hash_t hk)
{
    uint64_t i1 = index1(t, hk.h);
    uint64_t i2 = alt_index(t, i1, hk.fp);
    prefetch_bucket(f, t, i1);
    prefetch_bucket(f, t, i2);
    /* Both buckets, no short-circuit: whether the first holds the item is
     * a branch a predictor misses as often as hits and misses mix. */
    return (int)bucket_has(f, t, i1, hk.fp) | (int)bucket_has(f, t, i2, hk.fp) |
           (int)victim_is(t, i1, i2, hk.fp);
}

/* Every table is probed: stopping at the first that holds the item would
 * be a branch on it, which mixed hits and misses mispredict. */
static bool filter_has(const cf_filter_t *f, const cf_table_t *tabs,
                       cf_hash_t hk)
{
    int has = 0;
    for (uint32_t k = f->nfilters; k-- > 0;)
        has |= (int)table_has(f, &tabs[k], hk);
    return has;
}

void cf_prefetch(const cf_filter_t *f, const void *key, size_t len)
{
    cf_hash_t hk = hash_key(f, key, len);
    cf_table_t one;
    const cf_table_t *tabs = tabs_get(f, &one);
    for (uint32_t k = f->nfilters; k-- > 0;) {
        const cf_table_t *t = &tabs[k];
        uint64_t i1 = index1(t, hk.h);
        prefetch_bucket(f, t, i1);
        prefetch_bucket(f, t, alt_index(t, i1, hk.fp));
    }
}

void cf_prefetch_filter(const cf_filter_t *f)
{
    /* addresses, not pointers into f: the line before may not be f's */
    uintptr_t p = (uintptr_t)f;
    for (int line = -1; line < 4; line++)
        __builtin_prefetch((const void *)(p + (uintptr_t)(64 * line)));
}

bool cf_exists(const cf_filter_t *f, const void *key, size_t len)
{
    cf_table_t one;
    return filter_has(f, tabs_get(f, &one), hash_key(f, key, len));
}

uint64_t cf_count(const cf_filter_t *f, const void *key, size_t len)
{
    cf_hash_t hk = hash_key(f, key, len);
    cf_table_t one;
    const cf_table_t *tabs = tabs_get(f, &one);
    uint64_t n = 0;
    for (uint32_t k = 0; k < f->nfilters; k++) {
        const cf_table_t *t = &tabs[k];
        uint64_t i1 = index1(t, hk.h);
        uint64_t i2 = alt_index(t, i1, hk.fp);
        n += bucket_count(f, t, i1, hk.fp);
        if (i2 != i1)
            n += bucket_count(f, t, i2, hk.fp);
        n += victim_is(t, i1, i2, hk.fp);
    }
    return n;
}

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
    /* 7 unless buckets are aligned words (see prefetch_bucket()) */
    const uint32_t tail = (bits == 32 || bits == 64) ? 0 : 7;
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
            uint64_t w1 = bits == 32 ? load32(p1) : load64(p1);
            uint64_t w2 = bits == 32 ? load32(p2) : load64(p2);
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

void cf_exists_many(const cf_filter_t *f, size_t n, const void *const *keys,
                    const size_t *lens, bool *out)
{
    if (f->nfilters == 1 && SH(f)->fast) {
        /* the shapes of the encodings ERROR and the defaults choose */
        switch (SH(f)->b == 4 ? SH(f)->fp_bits : 0) {
        case 8:
            exists_many_fast(f, n, keys, lens, out, false, 4, 8, 32);
            return;
        case 12:
            exists_many_fast(f, n, keys, lens, out, false, 4, 12, 48);
            return;
        case 16:
            exists_many_fast(f, n, keys, lens, out, false, 4, 16, 64);
            return;
        case 9:
            exists_many_fast(f, n, keys, lens, out, true, 4, 5, 32);
            return;
        case 13:
            exists_many_fast(f, n, keys, lens, out, true, 4, 9, 48);
            return;
        case 17:
            exists_many_fast(f, n, keys, lens, out, true, 4, 13, 64);
            return;
        default:
            exists_many_fast(f, n, keys, lens, out, SH(f)->ss, SH(f)->b,
                             SH(f)->lane_bits, SH(f)->bucket_bits);
            return;
        }
    }
    if (f->nfilters != 1) {
        for (size_t i = 0; i < n; i++)
            out[i] = cf_exists(f, keys[i], lens[i]);
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
            i2[r] = alt_index(t, i1[r], hk.fp);
            prefetch_bucket(f, t, i1[r]);
            prefetch_bucket(f, t, i2[r]);
        }
    }
}

/* ---- inserts ---- */

/* Looks one step ahead from the nb full buckets in[] (1 or 2, b <= 8): a
 * slot whose fingerprint can move to its other bucket right away. On
 * success that slot is freed for fp. Every alternate bucket is prefetched
 * before any is read, so the look costs one memory round trip however
 * many buckets it reads. */
static bool lookahead_place(cf_filter_t *f, cf_table_t *t,
                            const uint64_t *in, uint32_t nb, uint32_t fp)
{
    uint64_t alt[16];
    uint32_t fps[16];
    uint32_t b = SH(f)->b, n = 0;
    for (uint32_t k = 0; k < nb; k++)
        for (uint32_t j = 0; j < b; j++, n++) {
            fps[n] = slot_get(f, t, in[k] * b + j);
            alt[n] = alt_index(t, in[k], fps[n]);
            prefetch_bucket(f, t, alt[n]);
        }
    for (uint32_t m = 0; m < n; m++) {
        uint64_t i = in[m / b];
        if (alt[m] != i && bucket_put(f, t, alt[m], fps[m])) {
            /* in[] was not written (its buckets are full), so slot m%b
             * still holds fps[m] */
            slot_set(f, t, i * b + m % b, fp);
            return true;
        }
    }
    return false;
}

/* Stores fp in table t, relocating others. false when the table's victim is
 * taken (it is full); otherwise true, with fp or a displaced fingerprint
 * possibly in the victim stash. */
static bool table_insert(cf_filter_t *f, cf_table_t *t, uint64_t i1,
                         uint64_t i2, uint32_t fp)
{
    if (v_used(t))
        return false;
    if (bucket_put(f, t, i1, fp) || bucket_put(f, t, i2, fp))
        return true;
    /* First from both buckets at once: at high load most inserts that get
     * here end after this one round trip, without a kick. */
    bool ahead = SH(f)->b <= 8;
    uint64_t both[2] = {i1, i2};
    if (ahead && lookahead_place(f, t, both, i1 == i2 ? 1 : 2, fp))
        return true;
    uint64_t rng = rng_seed(f, i1, fp);
    uint64_t i = (rng_next(&rng) & 1) ? i1 : i2;
    for (uint32_t n = 0; n < f->max_kicks; n++) {
        uint64_t s = i * SH(f)->b + rng_next(&rng) % SH(f)->b;
        uint32_t kicked = slot_get(f, t, s);
        slot_set(f, t, s, fp);
        fp = kicked;
        i = alt_index(t, i, fp);
        if (bucket_put(f, t, i, fp) ||
            (ahead && lookahead_place(f, t, &i, 1, fp)))
            return true;
    }
    v_set(t, i, fp);
    return true;
}

/* Empty slots in bucket i. */
static uint32_t bucket_free(const cf_filter_t *f, const cf_table_t *t,
                            uint64_t i)
{
    if (SH(f)->fast)
        return lanes_count(f, empty_lanes(f, t, i));
    uint32_t n = 0;
    uint64_t s = i * SH(f)->b;
    for (uint32_t j = 0; j < SH(f)->b; j++)
        n += slot_get(f, t, s + j) == 0;
    return n;
}

/* place_table() for a fast b = 4 shape given as constants (lanes of lane
 * bits, buckets of bits bits), so that the masks are immediates and the
 * filter's fields are read once. Plain: the empty lane is filled in the
 * word already loaded and stored back whole (the bytes of a neighbour
 * that a 64-bit word takes in go back unchanged; writers are exclusive).
 * Semi-sorted: a slot is empty exactly when its prefix and suffix are both
 * zero, so the empties are the zero lanes of the two OR'd. */
static inline __attribute__((always_inline)) bool
place_fast(const cf_filter_t *f, cf_table_t *t, cf_hash_t hk, bool ss,
           uint32_t lane, uint32_t bits)
{
    const uint64_t nb = t->nbuckets;
    uint64_t ones = 0;
    for (uint32_t j = 0; j < 4; j++)
        ones |= 1ull << (j * lane);
    const uint64_t highs = ones << (lane - 1);
    const uint64_t low = ((ones << lane) - ones) & ~highs;
    uint64_t i1 = mulhi(hk.h, nb), i2 = alt_of(nb, i1, hk.fp);
    uint8_t *p1 = t->data + ((i1 * bits) >> 3);
    uint8_t *p2 = t->data + ((i2 * bits) >> 3);
    uint64_t w1 = bits == 32 ? load32(p1) : load64(p1);
    uint64_t w2 = bits == 32 ? load32(p2) : load64(p2);
    uint64_t x1 = ss ? ss_prefix_lanes(w1, lane) | (w1 >> 12) : w1;
    uint64_t x2 = ss ? ss_prefix_lanes(w2, lane) | (w2 >> 12) : w2;
    uint64_t m1 = ~(((x1 & low) + low) | x1) & highs;
    uint64_t m2 = ~(((x2 & low) + low) | x2) & highs;
    if ((m1 | m2) == 0)
        return false;
    /* the emptier bucket, selected with masks (see place_table()) */
    uint32_t c1 = (uint32_t)((((m1 >> (lane - 1)) * ones) >> (3 * lane)) & 7);
    uint32_t c2 = (uint32_t)((((m2 >> (lane - 1)) * ones) >> (3 * lane)) & 7);
    uint64_t sel = -(uint64_t)(c1 >= c2);
    uint64_t m = (m1 & sel) | (m2 & ~sel);
    uint32_t j = (uint32_t)__builtin_ctzll(m) / lane;
    if (ss) {
        ss_set(f, t, (i1 & sel) | (i2 & ~sel), j, hk.fp);
    } else {
        uint8_t *p = (uint8_t *)(((uintptr_t)p1 & sel) | ((uintptr_t)p2 & ~sel));
        uint64_t w = ((w1 & sel) | (w2 & ~sel)) | (uint64_t)hk.fp << (lane * j);
        if (bits == 32) {
            uint32_t v = (uint32_t)w;
            memcpy(p, &v, 4);
        } else {
            store64(p, w);
        }
    }
    return true;
}

/* A free slot in either bucket of table t. The emptier of the two buckets
 * is taken ("two choices"), which keeps buckets balanced and puts off
 * relocations to far higher loads. */
static bool place_table(cf_filter_t *f, cf_table_t *t, cf_hash_t hk)
{
    switch (SH(f)->b == 4 ? SH(f)->fp_bits : 0) {
    case 8:
        return place_fast(f, t, hk, false, 8, 32);
    case 12:
        return place_fast(f, t, hk, false, 12, 48);
    case 16:
        return place_fast(f, t, hk, false, 16, 64);
    case 9:
        return place_fast(f, t, hk, true, 5, 32);
    case 13:
        return place_fast(f, t, hk, true, 9, 48);
    case 17:
        return place_fast(f, t, hk, true, 13, 64);
    default:
        break;
    }
    uint64_t i1 = index1(t, hk.h);
    uint64_t i2 = alt_index(t, i1, hk.fp);
    if (SH(f)->fast) {
        /* the chosen bucket's first empty lane, straight from the marks:
         * no second pass over the slots */
        uint64_t m1 = empty_lanes(f, t, i1), m2 = empty_lanes(f, t, i2);
        if ((m1 | m2) == 0)
            return false;
        /* Selected with masks, not a branch: which bucket is emptier is a
         * coin toss a predictor misses half of the time, and each miss
         * stalls until the buckets arrive from memory. */
        uint64_t sel = -(uint64_t)(lanes_count(f, m1) >= lanes_count(f, m2));
        uint64_t m = (m1 & sel) | (m2 & ~sel);
        uint64_t bi = (i1 & sel) | (i2 & ~sel);
        uint64_t lane = SH(f)->lane_of_bit[__builtin_ctzll(m)];
        slot_set(f, t, bi * SH(f)->b + lane, hk.fp);
        return true;
    }
    uint32_t n1 = bucket_free(f, t, i1), n2 = bucket_free(f, t, i2);
    if (n1 | n2)
        return bucket_put(f, t, n1 >= n2 ? i1 : i2, hk.fp);
    return false;
}

/* A free slot in either bucket of any table, newest first. */
static bool place_free(cf_filter_t *f, cf_table_t *tabs, cf_hash_t hk)
{
    for (uint32_t k = f->nfilters; k-- > 0;)
        if (place_table(f, &tabs[k], hk))
            return true;
    return false;
}

/* Adds a table expansion times the newest one, taking at most *room
 * bytes. */
static int grow(cf_filter_t *f, const cf_table_t *tabs, uint64_t *room)
{
    if (f->expansion == 0)
        return -ENOSPC;
    if (f->nfilters >= f->max_filters)
        return -EOVERFLOW;
    const cf_table_t *last = &tabs[f->nfilters - 1];
    if (last->capacity > (1ull << 50) / f->expansion)
        return -ENOMEM;
    uint64_t cap = last->capacity * f->expansion;
    uint64_t nb = buckets_for(cap, SH(f)->b);
    if (nb == 0)
        return -ENOMEM;
    return table_alloc(f, tabs, nb, cap, room);
}

/* Growth, when the item needs it, takes at most *room bytes. */
static int insert_hashed(cf_filter_t *f, cf_hash_t hk, uint64_t *room)
{
    cf_table_t one, *tabs = tabs_get(f, &one);
    if (place_free(f, tabs, hk))
        goto stored;
    cf_table_t *t = &tabs[f->nfilters - 1];
    uint64_t i1 = index1(t, hk.h);
    if (table_insert(f, t, i1, alt_index(t, i1, hk.fp), hk.fp)) {
        tabs_put(f, tabs); /* the victim may have changed */
        goto stored;
    }
    int rc = grow(f, tabs, room);
    if (rc < 0)
        return rc;
    tabs = f->u.arr; /* a filter that grew is big */
    t = &tabs[f->nfilters - 1];
    i1 = index1(t, hk.h);
    if (!table_insert(f, t, i1, alt_index(t, i1, hk.fp), hk.fp))
        return -ENOSPC; /* unreachable: a new table's victim is free */
stored:
    items_set(f, items_of(f) + 1);
    return 0;
}

/* cf_add() (nx false: 0 when stored) or cf_add_nx() (1 when added, 0 when
 * present) of a hashed item, or a negative errno. */
static int add_hashed(cf_filter_t *f, cf_hash_t hk, bool nx, uint64_t *room)
{
    cf_table_t one;
    if (nx && filter_has(f, tabs_get(f, &one), hk))
        return 0;
    int rc = insert_hashed(f, hk, room);
    return rc < 0 ? rc : nx;
}

int cf_add(cf_filter_t *f, const void *key, size_t len)
{
    uint64_t room = UINT64_MAX;
    return add_hashed(f, hash_key(f, key, len), false, &room);
}

int cf_add_nx(cf_filter_t *f, const void *key, size_t len)
{
    uint64_t room = UINT64_MAX;
    return add_hashed(f, hash_key(f, key, len), true, &room);
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
    in[1] = alt_index(t, in[0], hk.fp);
    if ((empty_lanes(f, t, in[0]) | empty_lanes(f, t, in[1])) != 0)
        return;
    for (uint32_t k = 0; k < 2; k++)
        for (uint32_t j = 0; j < SH(f)->b; j++)
            prefetch_bucket(
                f, t,
                alt_index(t, in[k], slot_get(f, t, in[k] * SH(f)->b + j)));
}

void cf_add_many(cf_filter_t *f, size_t n, const void *const *keys,
                 const size_t *lens, bool nx, uint64_t *room, int *rc)
{
    uint64_t none = UINT64_MAX;
    if (room == NULL)
        room = &none;
    if (n == 1) { /* one command's one item: nothing to overlap */
        rc[0] = add_hashed(f, hash_key(f, keys[0], lens[0]), nx, room);
        return;
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
    bool ahead = SH(f)->fast && SH(f)->b <= 8 &&
                 (f->nfilters > 1 ||
                  items_of(f) * 4 >= last->nbuckets * SH(f)->b * 3);
    for (size_t i = 0; i < n + W; i++) {
        size_t r = i % W;
        if (i >= W)
            rc[i - W] = add_hashed(f, hk[r], nx, room);
        if (ahead && i >= HALF && i - HALF < n)
            prefetch_alternates(f, hk[(i - HALF) % W]);
        if (i < n) {
            const cf_table_t *t = &tabs_get(f, &one)[f->nfilters - 1];
            hk[r] = hash_key(f, keys[i], lens[i]);
            uint64_t i1 = index1(t, hk[r].h);
            prefetch_bucket(f, t, i1);
            prefetch_bucket(f, t, alt_index(t, i1, hk[r].fp));
        }
    }
}

/* ---- delete ---- */

/* After a slot frees up in t, the victim may fit into one of its buckets. */
static void victim_retry(cf_filter_t *f, cf_table_t *t)
{
    if (!v_used(t))
        return;
    uint64_t i = v_index(t);
    uint32_t fp = v_fp(t);
    if (bucket_put(f, t, i, fp) || bucket_put(f, t, alt_index(t, i, fp), fp))
        t->victim = 0;
}

int cf_del(cf_filter_t *f, const void *key, size_t len)
{
    cf_hash_t hk = hash_key(f, key, len);
    cf_table_t one, *tabs = tabs_get(f, &one);
    for (uint32_t k = f->nfilters; k-- > 0;) {
        cf_table_t *t = &tabs[k];
        uint64_t i1 = index1(t, hk.h);
        uint64_t i2 = alt_index(t, i1, hk.fp);
        uint64_t bi = i1;
        int j = bucket_find(f, t, i1, hk.fp);
        if (j < 0) {
            bi = i2;
            j = bucket_find(f, t, i2, hk.fp);
        }
        if (j >= 0) {
            slot_set(f, t, bi * SH(f)->b + (uint64_t)j, 0);
            victim_retry(f, t);
        } else if (victim_is(t, i1, i2, hk.fp)) {
            t->victim = 0;
        } else {
            continue;
        }
        tabs_put(f, tabs);
        uint64_t items = items_of(f);
        if (items > 0)
            items_set(f, items - 1);
        f->deleted++;
        return 1;
    }
    return 0;
}

/* ---- stats ---- */

void cf_stats(const cf_filter_t *f, cf_stats_t *st)
{
    memset(st, 0, sizeof(*st));
    cf_table_t one;
    const cf_table_t *tabs = tabs_get(f, &one);
    for (uint32_t k = 0; k < f->nfilters; k++) {
        st->nbuckets += tabs[k].nbuckets;
        st->capacity += tabs[k].capacity;
    }
    st->size_bytes = cf_size_bytes(f);
    st->nfilters = f->nfilters;
    st->items = items_of(f);
    st->deleted = f->deleted;
    st->bucket_size = SH(f)->b;
    st->fp_bits = SH(f)->fp_bits;
    st->expansion = f->expansion;
    st->max_kicks = f->max_kicks;
    st->max_filters = f->max_filters;
    st->seed = f->seed;
    st->encoding = SH(f)->encoding;
}

uint32_t cf_nfilters(const cf_filter_t *f)
{
    return f->nfilters;
}

uint64_t cf_size_bytes_at(const cf_filter_t *f, uint32_t nt)
{
    cf_table_t one;
    const cf_table_t *t = tabs_get(f, &one);
    if (nt < 1 || nt > f->nfilters)
        nt = f->nfilters;
    uint64_t n = sizeof(*f) + arr_bytes_at(f, t, nt);
    for (uint32_t k = 0; k < nt; k++)
        n += tbytes(f, &t[k]) + SH(f)->pad;
    return n;
}

uint64_t cf_size_bytes(const cf_filter_t *f)
{
    return cf_size_bytes_at(f, f->nfilters);
}

/* Bytes of f's own allocation from f on: the struct and, when
 * it is there, the inline table with its pad. */
static size_t own_bytes(const cf_filter_t *f)
{
    const cf_shape_t *sh = SH(f);
    /* A small table is inline, and its size is a few instructions: a host
     * walking a chain of keys asks this of every filter it passes. */
    if (!f->big)
        return sizeof(*f) +
               (size_t)(((f->u.one & (SMALL_NB - 1)) * sh->bucket_bits + 7) >>
                        3) +
               sh->pad;
    const cf_table_t *t = f->u.arr;
    size_t n = sizeof(*f);
    if (table_inline(f, t))
        n += (size_t)(tbytes(f, t) + sh->pad);
    return n;
}

int cf_resize_extra(cf_filter_t **fp, size_t have, size_t n)
{
    cf_filter_t *f = *fp;
    if (have % CF_EXTRA_ALIGN != 0 || n % CF_EXTRA_ALIGN != 0)
        return -EINVAL;
    if (n == have)
        return 0;
    size_t own = own_bytes(f);
    if (n > SIZE_MAX - own)
        return -ENOMEM;
    cf_table_t one;
    bool inl = table_inline(f, tabs_get(f, &one));
    uint8_t *base = (uint8_t *)f - have, *nb;
    if (n < have) {
        /* A block of its own: shrinking in place would move the struct
         * over the host bytes first, and a failed realloc would leave
         * them overwritten. */
        nb = mem.malloc_fn(n + own);
        if (nb == NULL)
            return -ENOMEM;
        memcpy(nb + n, f, own);
        mem.free_fn(base);
    } else {
        nb = mem.realloc_fn(base, n + own);
        if (nb == NULL)
            return -ENOMEM;
        memmove(nb + n, nb + have, own);
    }
    cf_filter_t *g = (cf_filter_t *)(void *)(nb + n);
    /* The inline table moved with the struct (a small filter's entry has
     * no address to fix). */
    if (inl && g->big)
        g->u.arr[0].data = g->data;
    *fp = g;
    return 0;
}

/* ---- serialisation ---- */

size_t cf_header_len(const cf_filter_t *f)
{
    return CF_HDR_FIXED + (size_t)f->nfilters * CF_HDR_TABLE + 8;
}

void cf_header_write(const cf_filter_t *f, void *buf)
{
    uint8_t *p = buf;
    size_t len = cf_header_len(f);
    memset(p, 0, len);
    put_u32(p, CF_MAGIC);
    put_u16(p + 4, CF_VERSION);
    put_u16(p + 6, (uint16_t)len);
    put_u32(p + 8, SH(f)->b);
    p[12] = (uint8_t)SH(f)->fp_bits;
    p[13] = (uint8_t)f->nfilters;
    p[14] = (uint8_t)SH(f)->encoding;
    put_u32(p + 16, f->max_kicks);
    put_u32(p + 20, f->expansion);
    put_u32(p + 24, f->max_filters);
    put_u64(p + 32, f->seed);
    put_u64(p + 40, items_of(f));
    put_u64(p + 48, f->deleted);
    cf_table_t one;
    const cf_table_t *tabs = tabs_get(f, &one);
    for (uint32_t k = 0; k < f->nfilters; k++) {
        uint8_t *q = p + CF_HDR_FIXED + k * CF_HDR_TABLE;
        const cf_table_t *t = &tabs[k];
        put_u64(q, t->nbuckets);
        put_u64(q + 8, t->capacity);
        put_u64(q + 16, v_index(t));
        put_u32(q + 24, v_fp(t));
        q[28] = v_used(t);
    }
    put_u64(p + len - 8, XXH3_64bits(p, len - 8));
}

uint64_t cf_data_len(const cf_filter_t *f)
{
    cf_table_t one;
    const cf_table_t *tabs = tabs_get(f, &one);
    uint64_t n = 0;
    for (uint32_t k = 0; k < f->nfilters; k++)
        n += tbytes(f, &tabs[k]);
    return n;
}

/* The table of tabs (f's) holding data offset *off; *off becomes the
 * offset inside it. */
static const cf_table_t *table_at(const cf_filter_t *f,
                                  const cf_table_t *tabs, uint64_t *off)
{
    for (uint32_t k = 0; k < f->nfilters; k++) {
        uint64_t n = tbytes(f, &tabs[k]);
        if (*off < n)
            return &tabs[k];
        *off -= n;
    }
    return NULL;
}

size_t cf_data_view(const cf_filter_t *f, uint64_t off, size_t max,
                    const void **p)
{
    cf_table_t one;
    const cf_table_t *t = table_at(f, tabs_get(f, &one), &off);
    if (t == NULL) {
        *p = NULL;
        return 0;
    }
    uint64_t n = tbytes(f, t) - off;
    *p = t->data + off;
    return n < max ? (size_t)n : max;
}

static bool zero(const uint8_t *p, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (p[i])
            return false;
    return true;
}

/* The victim fields of a table entry q of a header of version ver; false
 * when its reserved bytes are not zero. */
static bool victim_fields(const uint8_t *q, uint32_t ver, uint32_t *fp,
                          uint8_t *used)
{
    if (ver == 1) {
        *fp = get_u16(q + 24);
        *used = q[26];
        return zero(q + 27, 5);
    }
    *fp = get_u32(q + 24);
    *used = q[28];
    return zero(q + 29, 3);
}

int cf_load_header(const void *buf, size_t len, const cf_limits_t *lim,
                   cf_filter_t **out, size_t *used)
{
    const uint8_t *p = buf;
    *out = NULL;
    if (len < CF_HDR_FIXED + CF_HDR_TABLE + 8)
        return -EINVAL;
    uint32_t ver = get_u16(p + 4);
    if (get_u32(p) != CF_MAGIC || ver < 1 || ver > CF_VERSION)
        return -EINVAL;
    uint32_t nf = p[13];
    size_t hlen = CF_HDR_FIXED + (size_t)nf * CF_HDR_TABLE + 8;
    if (nf < 1 || nf > CF_MAX_FILTERS || get_u16(p + 6) != hlen ||
        len < hlen)
        return -EINVAL;
    if (get_u64(p + hlen - 8) != XXH3_64bits(p, hlen - 8))
        return -EINVAL;
    cf_params_t prm = {
        .capacity = 1,
        .bucket_size = get_u32(p + 8),
        .fp_bits = p[12],
        .max_kicks = get_u32(p + 16),
        .expansion = get_u32(p + 20),
        .max_filters = get_u32(p + 24),
        .encoding = ver == 1 ? CF_ENC_PLAIN : p[14],
    };
    if (cf_params_check(&prm) < 0 || nf > prm.max_filters ||
        (ver == 1 && p[14] != 0) || p[15] != 0 || get_u32(p + 28) != 0)
        return -EINVAL;

    /* Validate every table before allocating any. */
    uint64_t total = 0, slots = 0;
    uint32_t fpmask = (1u << prm.fp_bits) - 1;
    uint32_t bbits =
        bucket_bits_of(prm.encoding, prm.bucket_size, prm.fp_bits);
    for (uint32_t k = 0; k < nf; k++) {
        const uint8_t *q = p + CF_HDR_FIXED + k * CF_HDR_TABLE;
        uint64_t nb = get_u64(q), cap = get_u64(q + 8);
        uint64_t vi = get_u64(q + 16);
        uint32_t vfp;
        uint8_t vused;
        if (!victim_fields(q, ver, &vfp, &vused) || nb == 0 || cap < 1 ||
            cap > (1ull << 50) || vused > 1)
            return -EINVAL;
        uint64_t bytes = table_bytes(nb, bbits);
        if (bytes == 0)
            return -ENOMEM; /* larger than anything we would allocate */
        if (vused ? (vi >= nb || vfp == 0 || vfp > fpmask)
                  : (vi != 0 || vfp != 0))
            return -EINVAL;
        total += bytes + shapes[shape_index(prm.encoding, prm.bucket_size,
                                            prm.fp_bits)].pad;
        slots += nb * prm.bucket_size + 1;
        if (total > CF_ABS_MAX_BYTES)
            return -ENOMEM;
    }
    if (get_u64(p + 40) > slots)
        return -EINVAL;
    if (lim != NULL && lim->max_bytes && total > lim->max_bytes)
        return -ENOMEM;

    prm.capacity = get_u64(p + CF_HDR_FIXED + 8);
    prm.seed = get_u64(p + 32);
    cf_filter_t *f = filter_new(&prm, get_u64(p + CF_HDR_FIXED));
    if (f == NULL)
        return -ENOMEM;
    /* the whole shape was checked against the limit: no cap while the
     * tables are made */
    uint64_t room = UINT64_MAX;
    cf_table_t one;
    for (uint32_t k = 1; k < nf; k++) {
        const uint8_t *q = p + CF_HDR_FIXED + k * CF_HDR_TABLE;
        if (table_alloc(f, tabs_get(f, &one), get_u64(q), get_u64(q + 8),
                        &room) < 0) {
            cf_free(f);
            return -ENOMEM;
        }
    }
    cf_table_t *tabs = tabs_get(f, &one);
    for (uint32_t k = 0; k < nf; k++) {
        const uint8_t *q = p + CF_HDR_FIXED + k * CF_HDR_TABLE;
        uint32_t vfp;
        uint8_t vused;
        (void)victim_fields(q, ver, &vfp, &vused);
        if (vused)
            v_set(&tabs[k], get_u64(q + 16), vfp);
    }
    tabs_put(f, tabs);
    items_set(f, get_u64(p + 40));
    f->deleted = get_u64(p + 48);
    *out = f;
    *used = hlen;
    return 0;
}

int cf_load_data(cf_filter_t *f, uint64_t off, const void *p, size_t len)
{
    uint64_t total = cf_data_len(f);
    if (off > total || len > total - off)
        return -EINVAL;
    const uint8_t *src = p;
    cf_table_t one;
    const cf_table_t *tabs = tabs_get(f, &one);
    while (len > 0) {
        uint64_t in = off;
        const cf_table_t *t = table_at(f, tabs, &in);
        uint64_t n = tbytes(f, t) - in;
        if (n > len)
            n = len;
        memcpy(t->data + in, src, (size_t)n);
        src += n;
        off += n;
        len -= (size_t)n;
    }
    return 0;
}
