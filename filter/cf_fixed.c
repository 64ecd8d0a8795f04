/*
 * cf_fixed.c - the fixed kind one item at a time: lookups, inserts,
 * deletes, and the stats.
 *
 * Full tables. When both of an item's buckets are full, a breadth-first
 * search looks for the shortest path of moves to a bucket with room (every
 * bucket of a level prefetched at once: a round trip per level, not per
 * move). Past the search's reach a random walk relocates fingerprints for
 * at most max_kicks steps, looking one step ahead for a slot whose
 * alternate bucket has room. When it gives up, the homeless fingerprint
 * goes into the table's one-entry victim stash, so nothing is lost; the
 * next insert into that table that needs a relocation then fails over to
 * growth (a new table expansion times larger) or to -ENOSPC.
 */
#include "cf_fixed.h"

#include <errno.h>

#include "check.h"

/* xorshift64*'s multiplier (Vigna), after its shifts 12, 25, 27. */
#define CF_XS_MUL 0x2545F4914F6CDD1Dull
/* Mixing the filter's state into a seed: an odd offset (so that an empty
 * filter's counters still change the word) and the two multipliers of
 * splitmix64's finaliser. */
#define CF_MIX_ADD 0x632BE59BD9B4E019ull
#define CF_MIX_MUL1 0xBF58476D1CE4E5B9ull
#define CF_MIX_MUL2 0x94D049BB133111EBull

static inline uint64_t rng_next(uint64_t *state)
{
    /* xorshift64*: only picks which slot to kick, so quality needs little. */
    uint64_t x = *state;
    x ^= x >> 12;
    x ^= x << 25;
    x ^= x >> 27;
    *state = x;
    return x * CF_XS_MUL;
}

/* The relocation walk's random choices are a function of the filter's
 * serialised state (seed, counters) and of the item alone, never of the
 * history of one process: a replica that re-runs the same inserts, or a
 * filter loaded from a dump, makes exactly the same moves. */
static inline uint64_t rng_seed(const cf_filter_t *f, uint64_t i1, uint32_t fp)
{
    uint64_t x = f->seed ^ CF_GOLDEN;
    x ^= (items_of(f) + CF_MIX_ADD) * CF_MIX_MUL1;
    x ^= (f->deleted + f->nfilters) * CF_MIX_MUL2;
    x ^= (i1 << 16) ^ fp;
    x ^= x >> 31;
    return x != 0 ? x : 1;
}

/* ---- slots ---- */

static inline void slot_set(const cf_filter_t *f, cf_table_t *t, uint64_t s,
                            uint32_t fp)
{
    if (SH(f)->ss) {
        cf_ss_set(SH(f), t->data + s / CF_SS_B * SH(f)->bucket_bytes,
                  (uint32_t)(s % CF_SS_B), fp);
        return;
    }
    switch (SH(f)->fp_bits) {
    case 8:
        t->data[s] = (uint8_t)fp;
        break;
    case 16:
        le_store16(t->data + 2 * s, (uint16_t)fp);
        break;
    default: {
        uint8_t *p = t->data + ((3 * s) >> 1);
        unsigned sh = (unsigned)(s & 1) * 4;
        uint16_t v = le_load16(p);
        v = (uint16_t)((v & ~(CF_FP12_MASK << sh)) | (fp << sh));
        le_store16(p, v);
    }
    }
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

/* ---- lookups ---- */

static bool table_has(const cf_filter_t *f, const cf_table_t *t, cf_hash_t hk)
{
    uint64_t i1 = index1(t, hk.h);
    uint64_t i2 = alt_index(f, t, i1, hk.fp);
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

void cf_fixed_prefetch(const cf_filter_t *f, const void *key, size_t len)
{
    cf_hash_t hk = hash_key(f, key, len);
    cf_table_t one;
    const cf_table_t *tabs = tabs_get(f, &one);
    for (uint32_t k = f->nfilters; k-- > 0;) {
        const cf_table_t *t = &tabs[k];
        uint64_t i1 = index1(t, hk.h);
        prefetch_bucket(f, t, i1);
        prefetch_bucket(f, t, alt_index(f, t, i1, hk.fp));
    }
}

bool cf_fixed_exists(const cf_filter_t *f, const void *key, size_t len)
{
    cf_table_t one;
    return filter_has(f, tabs_get(f, &one), hash_key(f, key, len));
}

uint64_t cf_fixed_count(const cf_filter_t *f, const void *key, size_t len)
{
    cf_hash_t hk = hash_key(f, key, len);
    cf_table_t one;
    const cf_table_t *tabs = tabs_get(f, &one);
    uint64_t n = 0;
    for (uint32_t k = 0; k < f->nfilters; k++) {
        const cf_table_t *t = &tabs[k];
        uint64_t i1 = index1(t, hk.h);
        uint64_t i2 = alt_index(f, t, i1, hk.fp);
        n += bucket_count(f, t, i1, hk.fp);
        if (i2 != i1)
            n += bucket_count(f, t, i2, hk.fp);
        n += victim_is(t, i1, i2, hk.fp);
    }
    return n;
}

/* ---- inserts ---- */

/* Looks one step ahead from the nb full buckets in[] (1 or 2, b <= 8): a
 * slot whose fingerprint can move to its other bucket right away. On
 * success that slot is freed for fp. Every alternate bucket is prefetched
 * before any is read, so the look costs one memory round trip however
 * many buckets it reads. */
static bool lookahead_place(cf_filter_t *f, cf_table_t *t, const uint64_t *in,
                            uint32_t nb, uint32_t fp)
{
    uint64_t alt[16];
    uint32_t fps[16];
    uint32_t b = SH(f)->b, n = 0;
    for (uint32_t k = 0; k < nb; k++)
        for (uint32_t j = 0; j < b; j++, n++) {
            fps[n] = slot_get(f, t, in[k] * b + j);
            alt[n] = alt_index(f, t, in[k], fps[n]);
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

/* Carries out the path that ends at node q, whose bucket has a free slot:
 * from the free slot back to the root, each fingerprint moves one step
 * (every bucket of the path is written once, so slot numbers read before
 * the first write still hold, semi-sorted buckets included), and fp takes
 * the root's freed slot. */
static void bfs_apply(cf_filter_t *f, cf_table_t *t, const bfs_node_t *nodes,
                      uint32_t q, uint32_t fp)
{
    bool put = bucket_put(f, t, nodes[q].bucket, nodes[q].fp);
    (void)put; /* the search saw a free slot there */
    for (; nodes[q].parent != CF_BFS_ROOT; q = nodes[q].parent) {
        const bfs_node_t *p = &nodes[nodes[q].parent];
        uint32_t in = p->parent == CF_BFS_ROOT ? fp : p->fp;
        slot_set(f, t, p->bucket * SH(f)->b + nodes[q].slot, in);
    }
}

/* Looks for the shortest relocation path from the full buckets i1 and i2
 * to a bucket with a free slot, at most max_depth moves long, level by
 * level: every bucket of a level is prefetched before any is read, so a
 * level costs one memory round trip however many buckets it holds (a
 * random walk pays one per kick). Within a level the first bucket found
 * in order wins, so the choice is a function of the table alone. On
 * success fp is stored; on failure nothing was written. */
static bool bfs_place(cf_filter_t *f, cf_table_t *t, uint64_t i1, uint64_t i2,
                      uint32_t fp, uint32_t max_depth)
{
    bfs_node_t nodes[CF_BFS_NODES];
    const uint32_t b = SH(f)->b;
    uint32_t n = 0;
    nodes[n++] = (bfs_node_t){.bucket = i1, .parent = CF_BFS_ROOT};
    if (i2 != i1)
        nodes[n++] = (bfs_node_t){.bucket = i2, .parent = CF_BFS_ROOT};
    /* [lo, hi) is the level last found full */
    uint32_t lo = 0, hi = n;
    for (uint32_t depth = 1; depth <= max_depth; depth++) {
        for (uint32_t q = lo; q < hi && n < CF_BFS_NODES; q++) {
            uint64_t i = nodes[q].bucket;
            for (uint32_t j = 0; j < b && n < CF_BFS_NODES; j++) {
                uint32_t kfp = slot_get(f, t, i * b + j);
                uint64_t a = alt_index(f, t, i, kfp);
                if (bfs_on_path(nodes, q, a))
                    continue;
                prefetch_bucket(f, t, a);
                nodes[n++] = (bfs_node_t){.bucket = a,
                                          .fp = kfp,
                                          .parent = (uint16_t)q,
                                          .slot = (uint8_t)j};
            }
        }
        if (n == hi)
            return false;
        for (uint32_t q = hi; q < n; q++)
            if (bucket_has(f, t, nodes[q].bucket, 0)) {
                bfs_apply(f, t, nodes, q, fp);
                return true;
            }
        lo = hi;
        hi = n;
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
    /* First the shortest path from both buckets, a round trip per level
     * of the search; the walk below is left for tables so full that the
     * search finds nothing within its reach. No path is longer than the
     * walk's max_kicks kicks plus its last step. */
    bool ahead = SH(f)->b <= 8;
    if (ahead && bfs_place(f, t, i1, i2, fp, (uint32_t)f->max_kicks + 1))
        return true;
    uint64_t rng = rng_seed(f, i1, fp);
    uint64_t i = (rng_next(&rng) & 1) ? i1 : i2;
    for (uint32_t n = 0; n < f->max_kicks; n++) {
        uint64_t s = i * SH(f)->b + rng_next(&rng) % SH(f)->b;
        uint32_t kicked = slot_get(f, t, s);
        slot_set(f, t, s, fp);
        fp = kicked;
        i = alt_index(f, t, i, fp);
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
 * zero, so the empties are the zero lanes of the two OR'd.
 *
 * The one-at-a-time insert runs this for every item, and its cost is
 * counted in instructions (see add_one()): no branch on the buckets'
 * contents but the rare "both full", the emptier bucket chosen with
 * conditional moves, the empty lane found with one bit scan. */
static inline __attribute__((always_inline)) bool
place_fast(const cf_filter_t *f, uint8_t *data, uint64_t i1, uint64_t i2,
           uint32_t fp, bool ss, uint32_t lane, uint32_t bits)
{
    uint64_t ones = 0;
    for (uint32_t j = 0; j < CF_SS_B; j++)
        ones |= 1ull << (j * lane);
    const uint64_t highs = ones << (lane - 1);
    const uint64_t low = ((ones << lane) - ones) & ~highs;
    /* every width of CF_WIDTHS makes whole bytes */
    uint8_t *p1 = data + i1 * (bits / 8);
    uint8_t *p2 = data + i2 * (bits / 8);
    uint64_t w1 = bits == 32 ? le_load32(p1) : le_load64(p1);
    uint64_t w2 = bits == 32 ? le_load32(p2) : le_load64(p2);
    uint64_t x1 = ss ? ss_prefix_lanes(w1, lane) | (w1 >> CF_SS_IDX_BITS) : w1;
    uint64_t x2 = ss ? ss_prefix_lanes(w2, lane) | (w2 >> CF_SS_IDX_BITS) : w2;
    uint64_t m1 = ~(((x1 & low) + low) | x1) & highs;
    uint64_t m2 = ~(((x2 & low) + low) | x2) & highs;
    if (__builtin_expect((m1 | m2) == 0, 0))
        return false;
    /* The emptier bucket, the first on a tie ("two choices"). Its empty
     * lanes are counted as lanes_count() does: the marks moved to the
     * lanes' bottoms and multiplied by the lane pattern sum up in the top
     * lane of CF_SS_B, at most 4 (3 bits). Which bucket wins is a coin
     * toss, so it is chosen without a branch (a predictor would miss half
     * the time, each miss a stall until the buckets arrive). */
    const uint32_t top = (CF_SS_B - 1) * lane, count_mask = 7;
    uint64_t c1 = (((m1 >> (lane - 1)) * ones) >> top) & count_mask;
    uint64_t c2 = (((m2 >> (lane - 1)) * ones) >> top) & count_mask;
    bool first = __builtin_expect_with_probability(c1 >= c2, 1, 0.5);
    uint64_t m = first ? m1 : m2;
    uint8_t *p = first ? p1 : p2;
    if (ss) {
        cf_ss_set(SH(f), p, (uint32_t)__builtin_ctzll(m) / lane, fp);
    } else {
        /* fp into the first empty lane, whose top bit is m's lowest */
        uint64_t w = (first ? w1 : w2) |
                     (uint64_t)fp << (__builtin_ctzll(m) - (lane - 1));
        if (bits == 32)
            le_store32(p, (uint32_t)w);
        else
            le_store64(p, w);
    }
    return true;
}

/* A free slot in either bucket of table t. The emptier of the two buckets
 * is taken ("two choices"), which keeps buckets balanced and puts off
 * relocations to far higher loads. */
static bool place_table(cf_filter_t *f, cf_table_t *t, cf_hash_t hk)
{
    uint64_t i1 = index1(t, hk.h);
    uint64_t i2 = alt_index(f, t, i1, hk.fp);
    uint32_t fpv = hk.fp; /* CF_X's parameter is named fp */
    switch (SH(f)->b == CF_SS_B ? SH(f)->fp_bits : 0) {
#define CF_X(enc, fp, lane, bits)                                              \
    case fp:                                                                   \
        return place_fast(f, t->data, i1, i2, fpv, (enc) == CF_ENC_SEMISORTED, \
                          lane, bits);
        CF_WIDTHS(CF_X)
#undef CF_X
    default:
        break;
    }
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
    if (last->capacity > CF_MAX_CAPACITY / f->expansion)
        return -ENOMEM;
    uint64_t cap = last->capacity * f->expansion;
    /* a nested filter's tables are exact multiples (see cf_core.h) */
    uint64_t nb = f->nested ? (last->nbuckets > UINT64_MAX / f->expansion
                                   ? 0
                                   : last->nbuckets * f->expansion)
                            : cf_buckets_for(cap, SH(f)->b);
    if (nb == 0 || cf_table_bytes(nb, SH(f)->bucket_bits) == 0)
        return -ENOMEM;
    return cf_table_alloc(f, tabs, nb, cap, room);
}

/* Growth, when the item needs it, takes at most *room bytes. */
static int insert_hashed(cf_filter_t *f, cf_hash_t hk, uint64_t *room)
{
    cf_table_t one, *tabs = tabs_get(f, &one);
    if (place_free(f, tabs, hk))
        goto stored;
    cf_table_t *t = &tabs[f->nfilters - 1];
    uint64_t i1 = index1(t, hk.h);
    if (table_insert(f, t, i1, alt_index(f, t, i1, hk.fp), hk.fp)) {
        tabs_put(f, tabs); /* the victim may have changed */
        goto stored;
    }
    int rc = grow(f, tabs, room);
    if (rc < 0)
        return rc;
    tabs = f->u.arr; /* a filter that grew is big */
    t = &tabs[f->nfilters - 1];
    i1 = index1(t, hk.h);
    if (!table_insert(f, t, i1, alt_index(f, t, i1, hk.fp), hk.fp))
        return -ENOSPC; /* unreachable: a new table's victim is free */
stored:
    items_set(f, items_of(f) + 1);
    return 0;
}

/* cf_add() (nx false: 0 when stored) or cf_add_nx() (1 when added, 0 when
 * present) of a hashed item, or a negative errno. */
/* The fixed kind's invariants (checked builds, common/check.h): every
 * table's victim is a fingerprint of the shape in one of its buckets. The
 * item count is not one: a loaded header's count need not match its data
 * (cf_load_data() takes any bytes), and adds count what they store. */
static void fixed_check(const cf_filter_t *f)
{
#ifdef CUCKOOD_CHECKS
    cf_table_t one;
    const cf_table_t *tabs = tabs_get(f, &one);
    CK_ASSERT(f->nfilters >= 1 && f->nfilters <= CF_MAX_FILTERS);
    for (uint32_t k = 0; k < f->nfilters; k++) {
        const cf_table_t *t = &tabs[k];
        CK_ASSERT(!v_used(t) || (v_index(t) < t->nbuckets && v_fp(t) != 0 &&
                                 v_fp(t) <= SH(f)->fp_mask));
    }
#else
    (void)f;
#endif
}

int cf_add_hashed(cf_filter_t *f, cf_hash_t hk, bool nx, uint64_t *room)
{
    cf_table_t one;
    if (nx && filter_has(f, tabs_get(f, &one), hk))
        return 0;
    int rc = insert_hashed(f, hk, room);
    fixed_check(f);
    return rc < 0 ? rc : nx;
}

/* Batched inserts keep a window of CF_ADD_STAGES * CF_ADD_GAP items in
 * flight: an item's buckets are prefetched when it is hashed; CF_ADD_GAP
 * items later, if both are full, the first level of the relocation search
 * below them; CF_ADD_GAP items later again, if all of that level is full
 * too, the second level; then it is inserted. The gap covers a round trip
 * to memory at the time an insert takes. */
#define CF_ADD_GAP 12
#define CF_ADD_STAGES 3

/* Is bucket i full? */
static inline bool bucket_full(const cf_filter_t *f, const cf_table_t *t,
                               uint64_t i)
{
    return !bucket_has(f, t, i, 0);
}

/* Prefetches the buckets the fingerprints of bucket i would move to. */
static void prefetch_below(const cf_filter_t *f, const cf_table_t *t,
                           uint64_t i)
{
    for (uint32_t j = 0; j < SH(f)->b; j++)
        prefetch_bucket(f, t,
                        alt_index(f, t, i, slot_get(f, t, i * SH(f)->b + j)));
}

/* The middle stages of the batch for an item with buckets i1 and i2, whose
 * prefetches (of its buckets, then of the level below) have arrived: the
 * next level of what bfs_place() would read, when it would get there. */
static void prefetch_level(const cf_filter_t *f, const cf_table_t *t,
                           uint64_t i1, uint64_t i2, uint32_t level)
{
    if (!bucket_full(f, t, i1) || !bucket_full(f, t, i2))
        return;
    if (level == 1) {
        prefetch_below(f, t, i1);
        prefetch_below(f, t, i2);
        return;
    }
    uint64_t in[2] = {i1, i2}, alt[16];
    uint32_t n = 0, b = SH(f)->b;
    for (uint32_t k = 0; k < 2; k++)
        for (uint32_t j = 0; j < b; j++, n++) {
            alt[n] = alt_index(f, t, in[k], slot_get(f, t, in[k] * b + j));
            if (!bucket_full(f, t, alt[n]))
                return; /* the search will stop at the first level */
        }
    for (uint32_t m = 0; m < n; m++)
        prefetch_below(f, t, alt[m]);
}

/* cf_add_many_fast() for one fast b = 4 shape given as constants (see
 * place_fast()). Items are placed with place_fast() as insert_hashed()
 * places them in a one-table filter, in order and with the item count
 * brought up to date before any relocation, so the filter ends byte for
 * byte as n cf_add() calls would leave it. */
static inline __attribute__((always_inline)) size_t
add_many_shape(cf_filter_t *f, size_t n, const void *const *keys,
               const size_t *lens, uint64_t *room, int *rc, bool ss,
               uint32_t lane, uint32_t bits)
{
    enum { W = CF_ADD_STAGES * CF_ADD_GAP };
    cf_table_t one, *t = tabs_get(f, &one);
    const uint64_t nb = t->nbuckets, seed = f->seed;
    const uint32_t fp_mask = SH(f)->fp_mask;
    /* CF_PREFETCH_TAIL unless buckets are aligned words (see
     * prefetch_bucket()) */
    const uint32_t tail = (bits == 32 || bits == 64) ? 0 : CF_PREFETCH_TAIL;
    /* Below 3/4 load both buckets are hardly ever full: the middle stages
     * would cost more than they save. */
    const bool ahead = items_of(f) * 4 >= nb * CF_SS_B * 3;
    cf_hash_t hk[W];
    uint64_t b1[W], b2[W], added = 0;
    for (size_t i = 0; i < n + W; i++) {
        size_t r = i % W;
        if (i >= W) {
            if (place_fast(f, t->data, b1[r], b2[r], hk[r].fp, ss, lane,
                           bits)) {
                rc[i - W] = 0;
                added++;
            } else {
                /* the walk's choices read the item count */
                items_set(f, items_of(f) + added);
                added = 0;
                rc[i - W] = cf_add_hashed(f, hk[r], false, room);
                if (f->nfilters != 1)
                    return i - W + 1; /* grew: the caller goes on */
                t = tabs_get(f, &one);
            }
        }
        for (uint32_t s = 1; ahead && s < CF_ADD_STAGES; s++)
            if (i >= s * CF_ADD_GAP && i - s * CF_ADD_GAP < n) {
                size_t q = (i - s * CF_ADD_GAP) % W;
                prefetch_level(f, t, b1[q], b2[q], s);
            }
        if (i < n) {
            uint64_t h = key_hash(keys[i], lens[i], seed);
            uint32_t fp = fp_of(h, fp_mask);
            uint64_t i1 = mulhi(h, nb), i2 = alt_of(nb, i1, fp);
            const uint8_t *p1 = t->data + ((i1 * bits) >> 3);
            const uint8_t *p2 = t->data + ((i2 * bits) >> 3);
            hk[r] = (cf_hash_t){.h = h, .fp = fp};
            b1[r] = i1;
            b2[r] = i2;
            prefetch(p1);
            prefetch(p1 + tail);
            prefetch(p2);
            prefetch(p2 + tail);
        }
    }
    items_set(f, items_of(f) + added);
    return n;
}

size_t cf_add_many_fast(cf_filter_t *f, size_t n, const void *const *keys,
                        const size_t *lens, uint64_t *room, int *rc)
{
    if (f->nfilters != 1)
        return 0;
    switch (SH(f)->b == CF_SS_B ? SH(f)->fp_bits : 0) {
#define CF_X(enc, fp, lane, bits)                                              \
    case fp:                                                                   \
        return add_many_shape(f, n, keys, lens, room, rc,                      \
                              (enc) == CF_ENC_SEMISORTED, lane, bits);
        CF_WIDTHS(CF_X)
#undef CF_X
    default:
        return 0;
    }
}

/* cf_add() of an item whose buckets are both full. Out of line, so that
 * the common case of add_one() stays a short run of instructions. */
static __attribute__((noinline)) int add_slow(cf_filter_t *f, uint64_t h,
                                              uint32_t fp)
{
    uint64_t room = UINT64_MAX;
    return cf_add_hashed(f, (cf_hash_t){.h = h, .fp = fp}, false, &room);
}

/* cf_add() of a filter that add_one() does not serve. */
static __attribute__((noinline)) int add_other(cf_filter_t *f, const void *key,
                                               size_t len)
{
    uint64_t room = UINT64_MAX;
    return cf_add_hashed(f, hash_key(f, key, len), false, &room);
}

/* cf_add() into a filter of one table of a fast b = 4 shape given as
 * constants (see place_fast()): what insert_hashed() does for it, in as
 * few instructions as the item's hash and its two bucket loads allow.
 * Consecutive calls are independent until their buckets arrive, so the
 * processor can start the next call's loads while this call's are still
 * on their way from memory, but only as far ahead as its window of
 * instructions (and of registers to rename) reaches: every instruction
 * between one call's loads and the next's pushes that overlap back. */
static inline __attribute__((always_inline)) int
add_one(cf_filter_t *f, const void *key, size_t len, bool ss, uint32_t fpb,
        uint32_t lane, uint32_t bits)
{
    uint8_t *data = f->big ? f->u.arr->data : f->data;
    uint64_t nb = f->big ? f->u.arr->nbuckets : f->u.one & (SMALL_NB - 1);
    uint64_t h = key_hash(key, len, f->seed);
    uint32_t fp = fp_of(h, (1u << fpb) - 1);
    uint64_t i1 = mulhi(h, nb), i2 = alt_of(nb, i1, fp);
    if (__builtin_expect(!place_fast(f, data, i1, i2, fp, ss, lane, bits), 0))
        return add_slow(f, h, fp);
    if (f->big)
        f->n.items++;
    else
        f->n.s.items++;
    return 0;
}

/* add_one() for each shape of CF_WIDTHS, each a small function of its own
 * (inlined into one big cf_add(), the hash's helpers would stay calls and
 * the registers they clobber would be saved and restored on every
 * insert). */
#define CF_X(enc, fp, lane, bits)                                              \
    static __attribute__((noinline)) int add_##fp(cf_filter_t *f,              \
                                                  const void *key, size_t len) \
    {                                                                          \
        return add_one(f, key, len, (enc) == CF_ENC_SEMISORTED, fp, lane,      \
                       bits);                                                  \
    }
CF_WIDTHS(CF_X)
#undef CF_X

int cf_fixed_add(cf_filter_t *f, const void *key, size_t len)
{
    /* One table of a shape of CF_WIDTHS takes add_one(). */
    if (f->nfilters == 1)
        switch (f->shape) {
#define CF_X(enc, fp, lane, bits)                                              \
    case CF_SHAPE_B4(enc, fp):                                                 \
        return add_##fp(f, key, len);
            CF_WIDTHS(CF_X)
#undef CF_X
        default:
            break;
        }
    return add_other(f, key, len);
}

int cf_fixed_add_nx(cf_filter_t *f, const void *key, size_t len)
{
    uint64_t room = UINT64_MAX;
    return cf_add_hashed(f, hash_key(f, key, len), true, &room);
}

/* ---- delete ---- */

/* After a slot frees up in t, the victim may fit into one of its buckets. */
static void victim_retry(cf_filter_t *f, cf_table_t *t)
{
    if (!v_used(t))
        return;
    uint64_t i = v_index(t);
    uint32_t fp = v_fp(t);
    if (bucket_put(f, t, i, fp) || bucket_put(f, t, alt_index(f, t, i, fp), fp))
        t->victim = 0;
}

int cf_fixed_del(cf_filter_t *f, const void *key, size_t len)
{
    cf_hash_t hk = hash_key(f, key, len);
    cf_table_t one, *tabs = tabs_get(f, &one);
    for (uint32_t k = f->nfilters; k-- > 0;) {
        cf_table_t *t = &tabs[k];
        uint64_t i1 = index1(t, hk.h);
        uint64_t i2 = alt_index(f, t, i1, hk.fp);
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
        fixed_check(f);
        return 1;
    }
    return 0;
}

/* ---- stats ---- */

void cf_fixed_stats(const cf_filter_t *f, cf_stats_t *st)
{
    memset(st, 0, sizeof(*st));
    cf_table_t one;
    const cf_table_t *tabs = tabs_get(f, &one);
    for (uint32_t k = 0; k < f->nfilters; k++) {
        st->nbuckets += tabs[k].nbuckets;
        st->capacity += tabs[k].capacity;
    }
    st->size_bytes = cf_fixed_size_bytes_at(f, f->nfilters);
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
