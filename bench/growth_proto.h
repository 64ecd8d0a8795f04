/*
 * growth_proto.h - a prototype of a cuckoo filter that grows in place, one
 * bucket at a time (linear hashing), for bench_growth.c. Not part of the
 * core: the design is in docs/growth.md and is to be settled before any of
 * it moves into filter/.
 *
 * Shape. Buckets of 4 slots of 16 bits (one 64-bit word). A slot holds
 * a 5-bit tag (top) that is never consumed, and an 11-bit variable part:
 * up to GP_LMAX bits of the item's hash stream followed, above them, by a
 * 1 (the marker), so an entry's length L is the position of its highest
 * set bit. 0 is an empty slot; a used slot has a marker, so it is never 0.
 *
 * Addressing. The item's 128-bit hash gives a base bucket j in a base table
 * of n0 buckets, the tag t, and a stream S of address bits. A bucket is
 * beta = j + n0 * D, where D is the low lambda bits of the stream of its
 * side: lambda = level for buckets from the split pointer up to N = n0 <<
 * level, level + 1 below it and from N on. The pair of an item is side 0
 * (j, S) and side 1 (alt0(j, t), S ^ G(t)); both alt0 and the xor are
 * involutions, so an entry finds its partner bucket from its bucket, its
 * tag and the stream bits it holds. An entry's known stream is its bucket's
 * D (lambda bits) followed by its L stored bits.
 *
 * Splitting bucket p (p < N) moves every entry whose next stream bit is 1
 * to bucket p + N and shifts that bit out of the slot; an entry with no bit
 * left (a "void") is copied into both. Lookups read the two buckets of the
 * item at every size and compare, in each slot, the tag and the L stored
 * bits. A delete takes the matching entry whose known stream is longest.
 */
#ifndef GROWTH_PROTO_H
#define GROWTH_PROTO_H

#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>

#define XXH_INLINE_ALL
#include <xxhash.h>

#define GP_B 4
#define GP_TAG_BITS 5
#define GP_VAR_BITS 11
#define GP_LMAX (GP_VAR_BITS - 1)
#define GP_VAR_MASK ((1u << GP_VAR_BITS) - 1)
#define GP_MAX_KICKS 500
#define GP_MAX_FORCED 64 /* rounds of 16 forced splits per insert */
#define GP_PRIME 0x9E3779B97F4A7C15ull

typedef struct gp {
    uint16_t *slot; /* nb * GP_B, mapped for the largest size up front */
    uint64_t n0;    /* base buckets */
    uint64_t nb;    /* buckets in use: (n0 << level) + split */
    uint64_t split; /* the split pointer */
    uint64_t max_nb;
    unsigned level;
    double target;    /* a split starts once entries pass target * slots */
    uint64_t entries; /* used slots (a void copied in a split counts twice) */
    uint64_t rng;     /* kick choices; saved with the filter in a real one */
    uint64_t seed;
    /* counters for the benchmark */
    uint64_t reads;  /* buckets read by lookups (gp_count_reads) */
    uint64_t voids;  /* void entries copied by splits */
    uint64_t truncs; /* bits dropped moving an entry to a lower level */
    uint64_t forced; /* splits done because an insert found no room */
    uint64_t kicks;  /* entries moved on by inserts */
    /* The victim stash: an entry left homeless by an insert that found no
     * room even after GP_MAX_FORCED rounds of splits (more than 2b copies
     * of one item), in the struct: lookups need no read for it. */
    uint64_t vb;
    uint32_t vv;         /* 0: empty */
    uint64_t stash_lost; /* a void victim whose copy found no room */
    /* Per tag: the base table's alternate offset H(t) and the stream mask
     * G(t) of side 1, so that no lookup mixes them again. */
    uint64_t h0[1u << GP_TAG_BITS];
    uint64_t g[1u << GP_TAG_BITS];
} gp_t;

typedef struct gp_item {
    uint64_t j[2]; /* base buckets, side 0 and 1 */
    uint64_t s[2]; /* streams */
    uint32_t tag;
} gp_item_t;

static inline uint64_t gp_mulhi(uint64_t a, uint64_t b)
{
    return (uint64_t)(((unsigned __int128)a * b) >> 64);
}

static inline uint64_t gp_mix(uint64_t x)
{
    x ^= x >> 31;
    x *= 0xBF58476D1CE4E5B9ull;
    x ^= x >> 29;
    x *= 0x94D049BB133111EBull;
    return x ^ (x >> 32);
}

/* The involution of the base table: (H(t) - j) mod n0. */
static inline uint64_t gp_alt0(const gp_t *f, uint64_t j, uint32_t t)
{
    uint64_t h = f->h0[t];
    return h >= j ? h - j : h + f->n0 - j;
}

static inline uint64_t gp_mask(unsigned n)
{
    return n >= 64 ? ~0ull : (1ull << n) - 1;
}

static inline gp_item_t gp_hash(const gp_t *f, const void *key, size_t len)
{
    XXH128_hash_t h = XXH3_128bits_withSeed(key, len, f->seed);
    gp_item_t it;
    it.tag = (uint32_t)(h.low64 & ((1u << GP_TAG_BITS) - 1));
    it.j[0] = gp_mulhi(h.low64, f->n0);
    it.j[1] = gp_alt0(f, it.j[0], it.tag);
    it.s[0] = h.high64;
    it.s[1] = h.high64 ^ f->g[it.tag];
    return it;
}

/* The bucket of base j with stream s, and its level in *lev. */
static inline uint64_t gp_bucket(const gp_t *f, uint64_t j, uint64_t s,
                                 unsigned *lev)
{
    uint64_t b = j + f->n0 * (s & gp_mask(f->level));
    if (b < f->split) {
        *lev = f->level + 1;
        return b + ((f->n0 << f->level) & -(s >> f->level & 1));
    }
    *lev = f->level;
    return b;
}

static inline unsigned gp_level_of(const gp_t *f, uint64_t b)
{
    return (b < f->split || b >= (f->n0 << f->level)) ? f->level + 1 : f->level;
}

static inline unsigned gp_len(uint32_t var)
{
    return 31u - (unsigned)__builtin_clz(var);
}

/* Does slot value v match the item whose stream bits from this bucket's
 * level on are q, with tag t? */
static inline bool gp_match(uint32_t v, uint32_t t, uint64_t q)
{
    uint32_t var = v & GP_VAR_MASK;
    if (v == 0 || (v >> GP_VAR_BITS) != t)
        return false;
    return ((var ^ (uint32_t)q) & (uint32_t)gp_mask(gp_len(var))) == 0;
}

static inline uint16_t gp_full(uint32_t t, uint64_t q)
{
    return (uint16_t)(t << GP_VAR_BITS | 1u << GP_LMAX |
                      ((uint32_t)q & (uint32_t)gp_mask(GP_LMAX)));
}

static int gp_init(gp_t *f, uint64_t n0, uint64_t max_nb, double target,
                   uint64_t seed)
{
    memset(f, 0, sizeof(*f));
    f->n0 = n0 ? n0 : 1;
    f->nb = f->n0;
    f->max_nb = max_nb < f->n0 ? f->n0 : max_nb;
    f->target = target;
    f->seed = seed;
    f->rng = seed | 1;
    for (uint32_t t = 0; t < (1u << GP_TAG_BITS); t++) {
        f->h0[t] = gp_mulhi(gp_mix(seed ^ (t + 1)), f->n0);
        f->g[t] = gp_mix(seed ^ ((uint64_t)t << 32) ^ GP_PRIME);
    }
    /* Reserved, not committed: pages are touched only as buckets come
     * into use, so the memory held follows nb. */
    void *p = mmap(NULL, f->max_nb * GP_B * 2 + 64, PROT_READ | PROT_WRITE,
                   MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (p == MAP_FAILED)
        return -ENOMEM;
    /* Huge pages, as the core asks for its large tables: random probes
     * over a large table otherwise miss the TLB on every access. */
    (void)madvise(p, f->max_nb * GP_B * 2 + 64, MADV_HUGEPAGE);
    f->slot = p;
    return 0;
}

static void gp_destroy(gp_t *f)
{
    munmap(f->slot, f->max_nb * GP_B * 2 + 64);
}

static inline uint64_t gp_rand(gp_t *f)
{
    f->rng ^= f->rng << 13;
    f->rng ^= f->rng >> 7;
    f->rng ^= f->rng << 17;
    return f->rng;
}

/* Splits the bucket at the split pointer: one bucket's work. */
static int gp_split(gp_t *f)
{
    uint64_t n = f->n0 << f->level;
    if (f->nb >= f->max_nb)
        return -ENOSPC;
    uint16_t *lo = f->slot + f->split * GP_B,
             *hi = f->slot + (f->split + n) * GP_B;
    for (int k = 0; k < GP_B; k++) {
        uint32_t v = lo[k], var = v & GP_VAR_MASK;
        if (v == 0)
            continue;
        if (var == 1) { /* no bit left: the item may be on either side */
            hi[k] = (uint16_t)v;
            f->entries++;
            f->voids++;
            continue;
        }
        uint32_t nv = (v & ~GP_VAR_MASK) | var >> 1;
        if (var & 1) {
            hi[k] = (uint16_t)nv;
            lo[k] = 0;
        } else {
            lo[k] = (uint16_t)nv;
        }
    }
    if (f->vv != 0 && f->vb == f->split) {
        uint32_t var = f->vv & GP_VAR_MASK;
        if (var == 1) {
            uint64_t b = f->split + n;
            uint32_t v = f->vv;
            hi = f->slot + b * GP_B;
            int k = 0;
            while (k < GP_B && hi[k] != 0)
                k++;
            if (k < GP_B)
                hi[k] = (uint16_t)v, f->entries++;
            else
                f->stash_lost++;
        } else {
            if (var & 1)
                f->vb += n;
            f->vv = (f->vv & ~GP_VAR_MASK) | var >> 1;
        }
    }
    f->nb++;
    if (++f->split == n) {
        f->level++;
        f->split = 0;
    }
    return 0;
}

/* The partner of the entry v held in bucket b: its bucket in *pb and its
 * value there in *pv. False when the partner needs a stream bit the entry
 * no longer has. */
static bool gp_partner(const gp_t *f, uint64_t b, uint32_t v, uint64_t *pb,
                       uint32_t *pv)
{
    uint32_t t = v >> GP_VAR_BITS, var = v & GP_VAR_MASK;
    unsigned lam = gp_level_of(f, b), len = gp_len(var);
    uint64_t j = b % f->n0, d = b / f->n0;
    uint64_t s = (d | (uint64_t)(var & gp_mask(len)) << lam) ^ f->g[t];
    unsigned known = lam + len, lev;
    uint64_t j2 = gp_alt0(f, j, t);
    uint64_t b2 = j2 + f->n0 * (s & gp_mask(f->level));
    if (b2 < f->split) {
        if (known <= f->level)
            return false;
        b2 += (f->n0 << f->level) & -(s >> f->level & 1);
        lev = f->level + 1;
    } else {
        lev = f->level;
    }
    unsigned l2 = known - lev;
    if (l2 > GP_LMAX)
        l2 = GP_LMAX;
    *pb = b2;
    *pv = t << GP_VAR_BITS | 1u << l2 | (uint32_t)((s >> lev) & gp_mask(l2));
    return true;
}

/* Places v in bucket b, kicking entries on to their partners. On failure
 * -EAGAIN, with the entry left homeless in *b and *v. */
static int gp_place(gp_t *f, uint64_t *b, uint32_t *v)
{
    for (int n = 0; n < GP_MAX_KICKS; n++) {
        uint16_t *s = f->slot + *b * GP_B;
        for (int k = 0; k < GP_B; k++)
            if (s[k] == 0) {
                s[k] = (uint16_t)*v;
                return 0;
            }
        /* Swap with a slot whose entry can move on. */
        int k0 = (int)(gp_rand(f) % GP_B), k;
        uint64_t nb2 = 0;
        uint32_t nv = 0;
        for (k = 0; k < GP_B; k++) {
            int kk = (k0 + k) % GP_B;
            if (gp_partner(f, *b, s[kk], &nb2, &nv)) {
                s[kk] = (uint16_t)*v;
                break;
            }
        }
        if (k == GP_B)
            return -EAGAIN;
        *b = nb2;
        *v = nv;
        f->kicks++;
    }
    return -EAGAIN;
}

/* Places entry v of bucket b, splitting buckets ahead of the load target
 * while no room is found: a homeless entry whose bucket is split follows
 * its next stream bit (both halves when it has none). 0 when placed, 1
 * when the last homeless entry went to the (empty) stash, -ENOSPC when
 * the table is at its largest. */
static int gp_insert_entry(gp_t *f, uint64_t b, uint32_t v)
{
    /* Bounded: more than 2b copies of one item never fit, however far the
     * table grows (the chain refuses them too). */
    for (int round = 0; gp_place(f, &b, &v) != 0; round++) {
        if (round >= GP_MAX_FORCED && f->vv == 0) {
            f->vb = b; /* gp_add() empties the stash before any insert */
            f->vv = v;
            return 1;
        }
        for (int i = 0; i < 16; i++) {
            uint64_t n = f->n0 << f->level;
            bool mine = f->split == b;
            if (gp_split(f) != 0)
                return -ENOSPC;
            f->forced++;
            if (!mine)
                continue;
            uint32_t var = v & GP_VAR_MASK;
            if (var == 1) {
                f->entries++;
                f->voids++;
                int rc = gp_insert_entry(f, b + n, v);
                if (rc < 0)
                    return rc;
            } else {
                if (var & 1)
                    b += n;
                v = (v & ~GP_VAR_MASK) | var >> 1;
            }
        }
    }
    return 0;
}

static inline unsigned gp_free_slots(const uint16_t *s)
{
    return (s[0] == 0) + (s[1] == 0) + (s[2] == 0) + (s[3] == 0);
}

static bool gp_victim_is(const gp_t *f, const uint16_t *s, uint32_t t,
                         uint64_t q)
{
    if (f->vv == 0 || f->slot + f->vb * GP_B != s)
        return false;
    uint32_t var = f->vv & GP_VAR_MASK;
    return (f->vv >> GP_VAR_BITS) == t &&
           ((var ^ (uint32_t)q) & (uint32_t)gp_mask(gp_len(var))) == 0;
}

static int gp_add(gp_t *f, const void *key, size_t len)
{
    if (f->vv != 0) { /* the stash first: an insert then has room for it */
        uint64_t b = f->vb;
        uint32_t v = f->vv;
        f->vv = 0;
        if (gp_insert_entry(f, b, v) != 0)
            return -ENOSPC; /* it is back in the stash: refused, as full */
    }
    while ((double)(f->entries + 1) > f->target * (double)(f->nb * GP_B) &&
           f->nb < f->max_nb)
        gp_split(f);
    gp_item_t it = gp_hash(f, key, len);
    unsigned l0, l1;
    uint64_t b0 = gp_bucket(f, it.j[0], it.s[0], &l0);
    uint64_t b1 = gp_bucket(f, it.j[1], it.s[1], &l1);
    uint32_t v0 = gp_full(it.tag, it.s[0] >> l0);
    uint32_t v1 = gp_full(it.tag, it.s[1] >> l1);
    unsigned e0 = gp_free_slots(f->slot + b0 * GP_B);
    unsigned e1 = gp_free_slots(f->slot + b1 * GP_B);
    int rc;
    if (e0 == 0 && e1 == 0)
        rc = (gp_rand(f) & 1) ? gp_insert_entry(f, b1, v1)
                              : gp_insert_entry(f, b0, v0);
    else
        rc = e0 >= e1 ? gp_insert_entry(f, b0, v0) : gp_insert_entry(f, b1, v1);
    if (rc < 0)
        return rc;
    f->entries++; /* placed, or its last homeless entry is stashed */
    return 0;
}

/* The two buckets of an item and the stream bits each compares. */
typedef struct gp_probe {
    const uint16_t *s[2];
    uint64_t q[2];
    uint32_t tag;
} gp_probe_t;

static inline gp_probe_t gp_probe(const gp_t *f, const gp_item_t *it)
{
    gp_probe_t p;
    unsigned l;
    for (int side = 0; side < 2; side++) {
        uint64_t b = gp_bucket(f, it->j[side], it->s[side], &l);
        p.s[side] = f->slot + b * GP_B;
        p.q[side] = it->s[side] >> l;
    }
    p.tag = it->tag;
    return p;
}

#define GP_LANES_LO 0x0001000100010001ull
#define GP_LANES_VAR (GP_LANES_LO * GP_VAR_MASK)
#define GP_LANES_TAG (GP_LANES_LO * (0xFFFFu & ~GP_VAR_MASK))
#define GP_LANES_LOW15 (GP_LANES_LO * 0x7FFFu)
#define GP_LANES_HIGH (GP_LANES_LO * 0x8000u)

/* Any slot of bucket s matching tag t and stream bits q, all four at once:
 * smearing each lane's variable part right turns its marker into the mask
 * of the stored bits (and bit 0 into "used"). */
static inline bool gp_has(const uint16_t *s, uint32_t t, uint64_t q)
{
    uint64_t w;
    memcpy(&w, s, 8);
    uint64_t x = w & GP_LANES_VAR;
    x |= (x >> 1) & GP_LANES_VAR;
    x |= (x >> 2) & GP_LANES_VAR;
    x |= (x >> 4) & GP_LANES_VAR;
    x |= (x >> 8) & (GP_LANES_LO * 0xFFu); /* not the lane above */
    uint64_t cmp = ((x >> 1) & GP_LANES_VAR) | GP_LANES_TAG;
    uint64_t want = GP_LANES_LO * (t << GP_VAR_BITS |
                                   ((uint32_t)q & (uint32_t)gp_mask(GP_LMAX)));
    uint64_t d = (w ^ want) & cmp;
    uint64_t zero =
        ~(((d & GP_LANES_LOW15) + GP_LANES_LOW15) | d) & GP_LANES_HIGH;
    return ((zero >> 15) & x & GP_LANES_LO) != 0;
}

/* reads: buckets read are added to it (NULL: not counted). */
static inline bool gp_contains(const gp_t *f, const void *key, size_t len,
                               uint64_t *reads)
{
    gp_item_t it = gp_hash(f, key, len);
    gp_probe_t p = gp_probe(f, &it);
    if (reads != NULL)
        *reads += 2;
    return gp_has(p.s[0], p.tag, p.q[0]) || gp_has(p.s[1], p.tag, p.q[1]) ||
           gp_victim_is(f, p.s[0], p.tag, p.q[0]) ||
           gp_victim_is(f, p.s[1], p.tag, p.q[1]);
}

/* Batched lookups: hashes and prefetches GP_WINDOW items ahead. */
#define GP_WINDOW 16
static void gp_contains_many(const gp_t *f, size_t n, const uint64_t *keys,
                             bool *out)
{
    gp_probe_t ring[GP_WINDOW];
    size_t ahead = n < GP_WINDOW ? n : GP_WINDOW;
    for (size_t i = 0; i < ahead; i++) {
        gp_item_t it = gp_hash(f, &keys[i], 8);
        ring[i] = gp_probe(f, &it);
        __builtin_prefetch(ring[i].s[0]);
        __builtin_prefetch(ring[i].s[1]);
    }
    for (size_t i = 0; i < n; i++) {
        gp_probe_t p = ring[i % GP_WINDOW];
        if (i + GP_WINDOW < n) {
            gp_item_t it = gp_hash(f, &keys[i + GP_WINDOW], 8);
            gp_probe_t *r = &ring[i % GP_WINDOW];
            *r = gp_probe(f, &it);
            __builtin_prefetch(r->s[0]);
            __builtin_prefetch(r->s[1]);
        }
        out[i] = gp_has(p.s[0], p.tag, p.q[0]) ||
                 gp_has(p.s[1], p.tag, p.q[1]) ||
                 gp_victim_is(f, p.s[0], p.tag, p.q[0]) ||
                 gp_victim_is(f, p.s[1], p.tag, p.q[1]);
    }
}

/* Removes one copy: of the matching entries in the item's two buckets,
 * the one whose known stream (bucket level + stored bits) is longest.
 * 1 when one was removed, 0 when none matched. */
static int gp_del(gp_t *f, const void *key, size_t len)
{
    gp_item_t it = gp_hash(f, key, len);
    gp_probe_t p = gp_probe(f, &it);
    uint16_t *best = NULL;
    int best_known = -1;
    for (int side = 0; side < 2; side++) {
        uint64_t b = (uint64_t)(p.s[side] - f->slot) / GP_B;
        unsigned lev = gp_level_of(f, b);
        for (int k = 0; k < GP_B; k++) {
            uint32_t v = p.s[side][k];
            if (!gp_match(v, p.tag, p.q[side]))
                continue;
            int known = (int)(lev + gp_len(v & GP_VAR_MASK));
            if (known > best_known) {
                best_known = known;
                best = (uint16_t *)&p.s[side][k];
            }
        }
    }
    for (int side = 0; side < 2; side++)
        if (gp_victim_is(f, p.s[side], p.tag, p.q[side])) {
            int known =
                (int)(gp_level_of(f, f->vb) + gp_len(f->vv & GP_VAR_MASK));
            if (known > best_known) {
                f->vv = 0;
                f->entries--;
                return 1;
            }
        }
    if (best == NULL)
        return 0;
    *best = 0;
    f->entries--;
    return 1;
}

static inline uint64_t gp_bytes(const gp_t *f)
{
    return f->nb * GP_B * 2 + sizeof(*f);
}

#endif /* GROWTH_PROTO_H */
