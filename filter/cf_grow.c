/*
 * cf_grow.c - the growable shape: inserts with splits and kicks, deletes
 * that take the longest match. Lookups are cf_grow_look.c's, memory
 * cf_grow_mem.c's, serialisation cf_grow_dump.c's. Why each rule keeps
 * every item findable is docs/growth.md's argument; the comments here say where
 * the code relies on it.
 */
#include "cf_grow_int.h"

#include <errno.h>

#define mem (*cf_mem_allocator())

/* Kicks before an insert splits buckets ahead of the load target: the
 * table grows instead of failing, so MAXITERATIONS does not bound it. */
#define GROW_KICKS 500
/* Rounds of 16 forced splits one insert may make, and the load under
 * which none is made (an item added more than 2b times does not fit
 * however far the table grows: the stash takes it instead). */
#define GROW_FORCED_ROUNDS 4
#define GROW_FORCED_BATCH 16
#define GROW_FORCE_MIN 5000 /* per GR_LOAD_SCALE slots */
/* Splits one add makes at most to bring the load under the target. */
#define GROW_CATCHUP 8

/* ---- creation ---- */

uint64_t cf_grow_initial_bytes(const cf_params_t *p)
{
    if (p->capacity > CF_MAX_CAPACITY)
        return 0;
    uint64_t n0 = gr_base_buckets(p->capacity);
    if (n0 * 8 > CF_ABS_MAX_BYTES)
        return 0;
    return gr_cmp_bytes(n0);
}

/* The filter struct's own fields, inline or not. */
static void set_fields(cf_filter_t *f, const gr_init_t *in)
{
    f->kind = CF_KIND_GROW;
    f->nfilters = 1;
    f->seed = in->seed;
    f->max_kicks = (uint16_t)in->max_kicks;
    f->expansion = (uint16_t)in->expansion;
    f->max_filters = (uint8_t)in->max_filters;
}

/* An inline filter (GR_SHAPE_INLINE) from in. */
static int new_inline(const gr_init_t *in, cf_filter_t **out)
{
    cf_filter_t *f =
        mem.calloc_fn(1, sizeof(*f) + (size_t)gr_cmp_bytes(in->n0));
    if (f == NULL)
        return -ENOMEM;
    set_fields(f, in);
    f->shape = GR_SHAPE_INLINE;
    f->n.s.capacity = (uint32_t)in->capacity;
    f->u.one = in->rng;
    *out = f;
    return 0;
}

int gr_new(const gr_init_t *in, cf_filter_t **out)
{
    *out = NULL;
    /* inline when the view would make the same state (n0 from the
     * capacity, the target and the remap of a filter made now) */
    if (in->inl && in->phase == GR_COMPACT && in->n0 <= GR_INLINE_MAX &&
        in->capacity <= UINT32_MAX && in->n0 == gr_base_buckets(in->capacity) &&
        in->target == CF_GROW_TARGET && in->remap)
        return new_inline(in, out);
    cf_filter_t *f = mem.calloc_fn(1, sizeof(*f) + in->tail);
    struct cf_grow *g = mem.calloc_fn(1, sizeof(*g));
    if (f == NULL || g == NULL) {
        mem.free_fn(f);
        mem.free_fn(g);
        return -ENOMEM;
    }
    set_fields(f, in);
    f->u.gr = g;
    g->n0 = in->n0;
    g->level = in->level;
    g->split = in->split;
    g->target = in->target;
    g->capacity = in->capacity;
    g->rng = in->rng;
    g->phase = (uint8_t)in->phase;
    g->remap = (uint8_t)in->remap;
    g->conv = in->conv;
    g->tail = in->tail;
    g->conv_at[0] = g->conv_at[1] = GR_EV_BEFORE;
    gr_constants(g, in->seed);
    g->nb = g->nbig + g->split;
    /* the capacity the steps from n0 reach first at nb: what the filter
     * that was saved holds, so that a loaded copy holds (and CF.INFO
     * reports) the same bytes as the original, and a replica as much as
     * its master; a compact filter has no 16-bit table yet */
    uint64_t cap = g->n0, steps = 0;
    while (cap < g->nb) {
        cap = gr_next_cap(cap);
        steps++;
    }
    if ((g->phase != GR_WHOLE && gr_cmp_alloc(g) < 0) ||
        (g->phase != GR_COMPACT && gr_alloc_to(g, cap) < 0)) {
        gr_free(g);
        mem.free_fn(f);
        return -ENOMEM;
    }
    g->cap_init = g->n0;
    g->steps = steps;
    *out = f;
    return 0;
}

int cf_grow_create(const cf_params_t *p, cf_filter_t **out)
{
    *out = NULL;
    uint64_t bytes = cf_grow_initial_bytes(p);
    if (bytes == 0)
        return -ENOMEM;
    uint64_t n0 = gr_base_buckets(p->capacity);
    uint64_t own =
        n0 <= GR_INLINE_MAX ? sizeof(cf_filter_t) : gr_size_of_cap(0);
    if (p->max_bytes && own + bytes > p->max_bytes)
        return -ENOMEM;
    gr_init_t in = {
        .n0 = n0,
        .target = CF_GROW_TARGET,
        .capacity = p->capacity,
        .rng = gr_mix64(p->seed ^ CF_GOLDEN) | 1,
        .seed = p->seed,
        .max_kicks = p->max_kicks,
        .expansion = p->expansion,
        .max_filters = p->max_filters,
        .phase = GR_COMPACT,
        .remap = 1,
        .inl = p->growable != CF_GROWABLE_PAIR,
    };
    return gr_new(&in, out);
}

/* ---- addressing ---- */

static inline uint64_t xorshift(struct cf_grow *g)
{
    uint64_t x = g->rng;
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    g->rng = x;
    return x;
}

/* The level of bucket b: one more below the split pointer and from nbig
 * on (both halves of a split bucket). */
static inline uint32_t level_of(const struct cf_grow *g, uint64_t b)
{
    return g->level + (uint32_t)(b < g->split || b >= g->nbig);
}

/* Places v in bucket b if it has an empty slot (either form). */
static bool bucket_put(struct cf_grow *g, uint64_t b, uint32_t v)
{
    if (g->phase == GR_COMPACT) {
        uint64_t w = cmp_expand(cmp_load(g, b)), e = gr_empty_lanes(w);
        if (e == 0)
            return false;
        cmp_store(g, b, cmp_compress(w | (uint64_t)v << __builtin_ctzll(e)));
        return true;
    }
    uint64_t *p = gr_wbucket(g, b), w = *p;
    uint64_t e = gr_empty_lanes(w);
    CK_ASSERT(b < g->nb && (v & GR_VAR_MASK) != 0 && v <= 0xFFFFu);
    if (e == 0)
        return false;
    *p = w | (uint64_t)v << (uint32_t)__builtin_ctzll(e);
    return true;
}

/* The lane at bit sh of bucket b becomes v (either form). */
static void lane_set(struct cf_grow *g, uint64_t b, uint32_t sh, uint32_t v)
{
    if (g->phase == GR_COMPACT) {
        uint64_t w = cmp_expand(cmp_load(g, b));
        w = (w & ~(0xFFFFull << sh)) | (uint64_t)v << sh;
        cmp_store(g, b, cmp_compress(w));
        return;
    }
    uint64_t *w = gr_wbucket(g, b);
    *w = (*w & ~(0xFFFFull << sh)) | (uint64_t)v << sh;
}

static inline void bucket_prefetch(const struct cf_grow *g, uint64_t b)
{
    if (cmp_has(g, b))
        prefetch(g->cmp + 6 * b);
    if (g->phase != GR_COMPACT)
        prefetch(gr_bucket(g, b));
}

/* The partner of entry v held in bucket b: its bucket and value there.
 * false when the partner's bucket needs a stream bit v no longer has. */
static bool partner(const struct cf_grow *g, uint64_t b, uint32_t v,
                    uint64_t *pb, uint32_t *pv)
{
    uint32_t t = v >> GR_VAR_BITS;
    if (g->phase == GR_COMPACT) { /* level 0, 8 bits known: the involution */
        *pb = gr_alt0(g, b, t);
        *pv = cmp_entry(t, v ^ gr_g(g, t));
        return true;
    }
    uint32_t len = var_len(v);
    uint32_t level = level_of(g, b), known = level + len;
    uint64_t j = b % g->n0, d = b / g->n0;
    uint64_t s = (d | (uint64_t)(v & lowmask(len)) << level) ^ gr_g(g, t);
    uint64_t b2 = gr_alt0(g, j, t) + g->n0 * (s & g->lmask);
    uint32_t lev = g->level;
    if (b2 < g->split) {
        if (known <= g->level)
            return false;
        b2 += g->nbig & -((s >> g->level) & 1);
        lev++;
    }
    uint32_t l2 = known - lev;
    if (l2 > CF_GROW_STORED_BITS)
        l2 = CF_GROW_STORED_BITS; /* a prefix of a prefix: still matched */
    *pb = b2;
    *pv = t << GR_VAR_BITS | 1u << l2 | (uint32_t)((s >> lev) & lowmask(l2));
    return true;
}

/* ---- splits ---- */

/* Splits the bucket at the split pointer into itself and nbig + split:
 * each entry follows its next stream bit, which leaves the slot for the
 * bucket's index (its known stream keeps its length); a void goes to
 * both. -ENOMEM when the memory for the new bucket is not there, -EAGAIN
 * when a void in the stash would find no room in the new bucket (nothing
 * changes then). */
static int split_one(struct cf_grow *g, uint64_t *room)
{
    if (g->nb >= g->cap) {
        int rc = gr_cap_step(g, room);
        if (rc < 0) {
            g->nomem = 1;
            return rc;
        }
    }
    uint64_t p = g->split, hb = p + g->nbig;
    uint64_t *lo = gr_wbucket(g, p), *hi = gr_wbucket(g, hb);
    uint64_t w = *lo, nl = 0, nh = 0;
    uint32_t kl = 0, kh = 0, added = 0, voids = 0;
    for (uint32_t k = 0; k < GR_B; k++) {
        uint32_t v = (uint32_t)(w >> (16 * k)) & 0xFFFFu;
        if (v == 0)
            continue;
        uint32_t var = v & GR_VAR_MASK;
        if (var == 1) { /* its item may be in either half */
            nl |= (uint64_t)v << (16 * kl++);
            nh |= (uint64_t)v << (16 * kh++);
            added++;
            voids++;
            continue;
        }
        uint64_t nv = (v & ~GR_VAR_MASK) | var >> 1;
        if (var & 1)
            nh |= nv << (16 * kh++);
        else
            nl |= nv << (16 * kl++);
    }
    bool stash_here = g->stash_entry != 0 && g->stash_bucket == p;
    if (stash_here && (g->stash_entry & GR_VAR_MASK) == 1) {
        if (kh == GR_B)
            return -EAGAIN;
        nh |= (uint64_t)g->stash_entry << (16 * kh++);
        added++;
        voids++;
    } else if (stash_here) {
        uint32_t var = g->stash_entry & GR_VAR_MASK;
        if (var & 1)
            g->stash_bucket = hb;
        g->stash_entry = (g->stash_entry & ~GR_VAR_MASK) | var >> 1;
    }
    CK_ASSERT(kl <= GR_B && kh <= GR_B);
    *lo = nl;
    *hi = nh;
    g->entries += added;
    g->voids += voids;
    g->nb++;
    if (++g->split == g->nbig) {
        g->level++;
        g->split = 0;
        g->nbig <<= 1;
        g->lmask = lowmask(g->level);
    }
    gr_check(g);
    return 0;
}

/* ---- inserts ---- */

/* A record of the bucket words kicks overwrote, to put them back. */
typedef struct kick_log {
    uint64_t *at[GROW_KICKS];
    uint64_t was[GROW_KICKS];
    int n;
} kick_log_t;

/* Puts back the words log recorded, newest first. */
static void undo_kicks(kick_log_t *log)
{
    while (log->n > 0) {
        log->n--;
        *log->at[log->n] = log->was[log->n];
    }
}

/* Places v in bucket b, kicking entries on to their partners; on failure
 * the homeless entry is left in *b, *v. With a log, the words it
 * overwrites are recorded there (undo_kicks() puts them back). */
static bool place(struct cf_grow *g, uint64_t *b, uint32_t *v, kick_log_t *log)
{
    for (int n = 0; n < GROW_KICKS; n++) {
        if (bucket_put(g, *b, *v))
            return true;
        uint64_t *p = gr_wbucket(g, *b), w = *p, nb = 0;
        if (log != NULL) {
            log->at[log->n] = p;
            log->was[log->n++] = w;
        }
        uint32_t k0 = (uint32_t)(xorshift(g) % GR_B), nv = 0, k;
        for (k = 0; k < GR_B; k++) {
            uint32_t kk = (k0 + k) % GR_B;
            uint32_t e = (uint32_t)(w >> (16 * kk)) & 0xFFFFu;
            if (partner(g, *b, e, &nb, &nv)) {
                *p = (w & ~(0xFFFFull << (16 * kk))) | (uint64_t)*v
                                                           << (16 * kk);
                break;
            }
        }
        if (k == GR_B)
            return false;
        *b = nb;
        *v = nv;
    }
    return false;
}

/* Whether entry v, homeless in bucket b, is one copy too many of an
 * item: both buckets of its pair hold entries it matches. Splits cannot
 * help that (the copies move together); they can help an entry that only
 * ran out of kicks. */
static bool is_overflow(const struct cf_grow *g, uint64_t b, uint32_t v)
{
    uint32_t t = v >> GR_VAR_BITS, pv;
    uint64_t pb;
    uint64_t m = gr_match(gr_word(g, b), gr_want(t, v));
    if (__builtin_popcountll(m) < GR_B || !partner(g, b, v, &pb, &pv))
        return false;
    return pb == b || __builtin_popcountll(
                          gr_match(gr_word(g, pb), gr_want(t, pv))) == GR_B;
}

/* Whether forced splits may help the homeless entry v of bucket b: when
 * the table is at least half full, or when v is not a copy too many. A
 * small table can fill a bucket pair while half empty (its few buckets
 * cover large ranges of the hash until they are split): refusing the
 * splits there refused adds of items added once, in about 2% of filters
 * reserved at 64 under random adds and deletes. */
static bool force_ok(const struct cf_grow *g, uint64_t b, uint32_t v)
{
    return gr_at_load(g, g->entries, GROW_FORCE_MIN) || !is_overflow(g, b, v);
}

/* Places entry v of bucket b, splitting ahead of the load target while it
 * finds no room (a homeless entry whose bucket is split follows its next
 * stream bit) when force allows. 0 when placed, 1 when the homeless entry
 * went to the stash (empty on entry). */
static int insert_entry(struct cf_grow *g, uint64_t b, uint32_t v,
                        uint64_t *room, bool force)
{
    for (int round = 0; !place(g, &b, &v, NULL); round++) {
        bool split = force && round < GROW_FORCED_ROUNDS && force_ok(g, b, v);
        for (int i = 0; split && i < GROW_FORCED_BATCH; i++) {
            uint64_t n = g->nbig;
            bool mine = g->split == b;
            /* a homeless void would need a home in both halves: it waits
             * in the stash instead */
            if (mine && (v & GR_VAR_MASK) == 1)
                break;
            if (split_one(g, room) < 0) {
                split = false;
                break;
            }
            g->forced++;
            if (mine) {
                uint32_t var = v & GR_VAR_MASK;
                if (var & 1)
                    b += n;
                v = (v & ~GR_VAR_MASK) | var >> 1;
            }
        }
        if (!split || (v & GR_VAR_MASK) == 1) {
            g->stash_bucket = b;
            g->stash_entry = v;
            g->stashed++;
            return 1;
        }
    }
    return 0;
}

static inline uint32_t entry_full(uint32_t t, uint64_t q)
{
    return t << GR_VAR_BITS | 1u << CF_GROW_STORED_BITS |
           (uint32_t)(q & lowmask(CF_GROW_STORED_BITS));
}

/* One of an add's two buckets as read: its address, its word, its empty
 * lanes (gr_empty_lanes()) and the stream the item's entry stores there. */
typedef struct gr_cand {
    uint64_t *p;
    uint64_t w, e, rest;
} gr_cand_t;

/* insert_entry()'s first bucket_put() for an item of tag t whose buckets
 * are c0 and c1 (empty lanes not both 0): its entry (entry_full()) into
 * the emptier bucket (the first when they tie), its lowest empty lane.
 * Chosen with masks, not a branch (which bucket is emptier is a coin
 * toss); the empty lanes are counted by a multiply that sums the four
 * lane bits into the top lane (without -mpopcnt a popcount is a library
 * call). Every add that does not meet two full buckets ends here, single
 * or batched, so both place alike. */
static inline __attribute__((always_inline)) void
put_emptier(uint32_t t, gr_cand_t c0, gr_cand_t c1)
{
    uint64_t sel = -(uint64_t)((c0.e * GR_LO) >> 48 >= (c1.e * GR_LO) >> 48);
    uint64_t e = (c0.e & sel) | (c1.e & ~sel);
    uint64_t rest = (c0.rest & sel) | (c1.rest & ~sel);
    uint64_t *p =
        (uint64_t *)(((uintptr_t)c0.p & sel) | ((uintptr_t)c1.p & ~sel));
    *p = ((c0.w & sel) | (c1.w & ~sel)) | (uint64_t)entry_full(t, rest)
                                              << __builtin_ctzll(e);
}

/* Looks for the shortest path of kicks from the full buckets b0 and b1
 * (for the item's entries v0 and v1) to a bucket with a free slot, level
 * by level: every bucket of a level is prefetched before any is read, so
 * a level costs one round trip to memory, where the random walk pays one
 * per kick. Within a level the first bucket in order wins: the choice is
 * a function of the table. On success every entry of the path moves one
 * step and the item's entry takes the freed slot of its bucket; on
 * failure nothing was written. */
static bool bfs_place(struct cf_grow *g, uint64_t b0, uint32_t v0, uint64_t b1,
                      uint32_t v1)
{
    bfs_node_t nodes[CF_BFS_NODES];
    uint64_t words[CF_BFS_NODES]; /* each node's bucket as read once */
    uint32_t n = 0;
    words[n] = gr_word(g, b0);
    nodes[n++] = (bfs_node_t){.bucket = b0, .fp = v0, .parent = CF_BFS_ROOT};
    if (b1 != b0) {
        words[n] = gr_word(g, b1);
        nodes[n++] =
            (bfs_node_t){.bucket = b1, .fp = v1, .parent = CF_BFS_ROOT};
    }
    uint32_t lo = 0, hi = n; /* the level last found full */
    while (n < CF_BFS_NODES) {
        for (uint32_t q = lo; q < hi && n < CF_BFS_NODES; q++) {
            uint64_t w = words[q];
            for (uint32_t k = 0; k < GR_B && n < CF_BFS_NODES; k++) {
                uint32_t e = (uint32_t)(w >> (16 * k)) & 0xFFFFu;
                uint64_t pb;
                uint32_t pv;
                if (!partner(g, nodes[q].bucket, e, &pb, &pv) ||
                    bfs_on_path(nodes, q, pb))
                    continue;
                bucket_prefetch(g, pb);
                nodes[n++] = (bfs_node_t){.bucket = pb,
                                          .fp = pv,
                                          .parent = (uint16_t)q,
                                          .slot = (uint8_t)k};
            }
        }
        if (n == hi)
            return false;
        for (uint32_t q = hi; q < n; q++) {
            words[q] = gr_word(g, nodes[q].bucket);
            if (gr_empty_lanes(words[q]) == 0)
                continue;
            /* from the free slot back to the root: each bucket of the path
             * is written once, so the lanes read above still hold */
            (void)bucket_put(g, nodes[q].bucket, nodes[q].fp);
            for (; nodes[q].parent != CF_BFS_ROOT; q = nodes[q].parent) {
                const bfs_node_t *p = &nodes[nodes[q].parent];
                lane_set(g, p->bucket, 16u * nodes[q].slot, p->fp);
            }
            return true;
        }
        lo = hi;
        hi = n;
    }
    return false;
}

/* The end of add_item() for an item whose two buckets are both full,
 * after the stash and the splits: s0 and s1 its sides, stashed whether
 * the stash is still taken, full what a refusal returns. */
static __attribute__((noinline)) int
add_crowded(struct cf_grow *g, const gr_item_t *it, gr_side_t s0, gr_side_t s1,
            bool stashed, int full, bool nx, uint64_t *room)
{
    uint32_t v0 = entry_full(it->t, s0.rest), v1 = entry_full(it->t, s1.rest);
    uint64_t w0 = gr_word(g, s0.b), w1 = gr_word(g, s1.b);
    uint64_t e0 = gr_empty_lanes(w0), e1 = gr_empty_lanes(w1);
    /* Both buckets full, and the item already there (another copy): kicks
     * mostly swap its own copies between the two buckets, and when the
     * pair holds nothing else no split can part them either. A copy the
     * table cannot take goes to the overflow, as RedisBloom takes it into
     * a new sub-filter; left homeless in the stash, it would hold up the
     * adds of every other item. */
    bool copy = (e0 | e1) == 0 && (gr_match(w0, gr_want(it->t, s0.rest)) |
                                   gr_match(w1, gr_want(it->t, s1.rest))) != 0;
    if (copy && is_overflow(g, s0.b, v0))
        goto overflow;
    /* both full: the shortest path of kicks from either, when the search
     * reaches one */
    if ((e0 | e1) == 0 && bfs_place(g, s0.b, v0, s1.b, v1)) {
        g->entries++;
        g->items++;
        return nx ? 1 : 0;
    }
    /* the emptier bucket; when both are full, a side chosen by the
     * filter's own generator */
    bool first;
    if ((e0 | e1) == 0)
        first = (xorshift(g) & 1) == 0;
    else
        first = __builtin_popcountll(e0) >= __builtin_popcountll(e1);
    uint64_t b = first ? s0.b : s1.b;
    uint32_t v = first ? v0 : v1;
    if (stashed || copy) {
        /* While the stash is still taken (a bucket pair full of entries
         * of several items that only a split of that pair can part, until
         * the split pointer gets there), the item is placed by kicks only
         * if they find room: otherwise they are undone (a second homeless
         * entry would have nowhere to wait) and it is refused. A copy is
         * placed the same way, or goes to the overflow. */
        kick_log_t log; /* 8 KB of the caller's stack */
        log.n = 0;
        if (!place(g, &b, &v, &log)) {
            undo_kicks(&log);
            if (copy)
                goto overflow;
            return full;
        }
    } else {
        (void)insert_entry(g, b, v, room, true);
    }
    g->entries++; /* placed, or its last homeless entry is in the stash */
    g->items++;
    return nx ? 1 : 0;
overflow:;
    int rc = gr_over_add(g, it->h, room);
    if (rc < 0)
        return rc == -ENOMEM ? rc : full;
    g->items++;
    return nx ? 1 : 0;
}

/* The stash before an add: back into the table if it can go, with forced
 * splits again unless the entry is a copy too many of an item (and memory
 * was not what stopped them): every refused add would grow the table for
 * nothing. true when it is still taken. */
static __attribute__((noinline)) bool stash_first(struct cf_grow *g,
                                                  uint64_t *room)
{
    uint64_t b = g->stash_bucket;
    uint32_t v = g->stash_entry;
    bool force =
        g->nomem != 0 || !is_overflow(g, g->stash_bucket, g->stash_entry);
    g->stash_entry = 0;
    g->nomem = 0;
    return insert_entry(g, b, v, room, force) != 0;
}

/* Splits ahead of the target load for one more entry (over the target,
 * not full, when a split finds no memory). */
static __attribute__((noinline)) void split_for_one(struct cf_grow *g,
                                                    uint64_t *room)
{
    /* a converted table starts past the target (its compact load): it
     * gets there a few splits per add, not all at once */
    for (int n = 0;
         n < GROW_CATCHUP && gr_past_load(g, g->entries + 1, g->target); n++)
        if (split_one(g, room) < 0)
            break;
}

/* A hashed item and its two sides as the table was split when they were
 * computed (at nb buckets). The sides are a function of
 * n0 and nb alone, so they hold as long as nb does. */
typedef struct gr_staged {
    gr_item_t it;
    gr_side_t s[2];
    uint64_t nb;
} gr_staged_t;

static inline __attribute__((always_inline)) void
stage_sides(const struct cf_grow *g, gr_staged_t *st)
{
    st->s[0] = gr_side(g, st->it.j[0], st->it.s[0]);
    st->s[1] = gr_side(g, st->it.j[1], st->it.s[1]);
    st->nb = g->nb;
}

/* One add of a hashed item: the nx test, the stash first, the splits
 * the load needs, then the emptier of the item's two buckets. The common
 * case (no stash, a free slot) is inline in both callers, cf_grow_add()
 * and the batched loop, so that the two place every item alike. */
static inline __attribute__((always_inline)) int
add_item(struct cf_grow *g, gr_staged_t *st, bool nx, uint64_t *room)
{
    const gr_item_t *it = &st->it;
    if (nx && has_item(g, it))
        return 0;
    bool stashed = g->stash_entry != 0 && stash_first(g, room);
    int full = g->nomem ? -ENOMEM : -EOVERFLOW;
    g->nomem = 0;
    if (gr_past_load(g, g->entries + 1, g->target))
        split_for_one(g, room);
    if (st->nb != g->nb)
        stage_sides(g, st);
    gr_side_t s0 = st->s[0], s1 = st->s[1];
    uint64_t *p0 = gr_wbucket(g, s0.b), *p1 = gr_wbucket(g, s1.b);
    uint64_t w0 = *p0, w1 = *p1;
    uint64_t e0 = gr_empty_lanes(w0), e1 = gr_empty_lanes(w1);
    if ((e0 | e1) == 0 || stashed)
        return add_crowded(g, it, s0, s1, stashed, full, nx, room);
    put_emptier(it->t, (gr_cand_t){p0, w0, e0, s0.rest},
                (gr_cand_t){p1, w1, e1, s1.rest});
    g->entries++;
    g->items++;
    return nx ? 1 : 0;
}

/* The compact phase's random walk of kicks from bucket b with entry v
 * (after the breadth-first search found no path), undone when it finds no
 * room within GROW_KICKS. */
static bool cmp_walk(struct cf_grow *g, uint64_t b, uint32_t v)
{
    uint64_t at[GROW_KICKS], was[GROW_KICKS];
    int n = 0;
    for (;;) {
        uint64_t c = cmp_load(g, b), w = cmp_expand(c);
        uint64_t e = gr_empty_lanes(w);
        if (e != 0) {
            cmp_store(g, b,
                      cmp_compress(w | (uint64_t)v << __builtin_ctzll(e)));
            return true;
        }
        if (n == GROW_KICKS) {
            while (n > 0) {
                n--;
                cmp_store(g, at[n], was[n]);
            }
            return false;
        }
        at[n] = b;
        was[n++] = c;
        uint32_t sh = 16 * (uint32_t)(xorshift(g) % GR_B);
        uint32_t out = (uint32_t)(w >> sh) & 0xFFFFu, t = out >> GR_VAR_BITS;
        w = (w & ~(0xFFFFull << sh)) | (uint64_t)v << sh;
        cmp_store(g, b, cmp_compress(w));
        /* the partner at level 0: the involution of the base table, the
         * stream xored with G(t) */
        b = gr_alt0(g, b, t);
        v = cmp_entry(t, out ^ gr_g(g, t));
    }
}

/* The compact phase's add: into the emptier of the item's two base
 * buckets, else by the shortest path of kicks (bfs_place(), which reads
 * and writes either form), else by a random walk. GR_CMP_FULL when the
 * entry needs room past the reserve or neither finds any: the conversion
 * comes first. */
static int cmp_add(struct cf_grow *g, const gr_item_t *it, bool nx)
{
    CK_ASSERT(g->phase == GR_COMPACT);
    if (nx && has_item(g, it))
        return 0;
    if (g->entries >= g->capacity)
        return GR_CMP_FULL;
    uint64_t b0 = it->j[0], b1 = it->j[1];
    uint64_t y0 = cmp_fps(cmp_load(g, b0)), y1 = cmp_fps(cmp_load(g, b1));
    uint32_t e0 = cmp_empties(y0), e1 = cmp_empties(y1);
    if ((e0 | e1) != 0) {
        /* the emptier bucket (the first when they tie), the entry put in
         * the encoding */
        bool first = e0 >= e1;
        uint32_t tw = it->t << GR_CMP_STREAM;
        cmp_store(
            g, first ? b0 : b1,
            cmp_put(first ? y0 : y1, tw | ((uint32_t)it->s[!first] & 0xFF)));
    } else {
        uint32_t v0 = cmp_entry(it->t, it->s[0]);
        uint32_t v1 = cmp_entry(it->t, it->s[1]);
        if (!bfs_place(g, b0, v0, b1, v1)) {
            bool side = (xorshift(g) & 1) != 0;
            if (!cmp_walk(g, side ? b1 : b0, side ? v1 : v0))
                return GR_CMP_FULL;
        }
    }
    g->entries++;
    g->items++;
    return nx ? 1 : 0;
}

/* An add while a compact table is there: into it (GR_COMPACT), or after
 * the conversion's next steps (GR_CONVERTING); an inline filter's first
 * add past its reserve makes it whole at once (gr_promote()), and *gp is
 * then its own state. */
static __attribute__((noinline)) int add_cmp(cf_filter_t *f,
                                             struct cf_grow **gp,
                                             const gr_item_t *it, bool nx,
                                             uint64_t *room)
{
    struct cf_grow *g = *gp;
    if (g->phase == GR_COMPACT) {
        int rc = cmp_add(g, it, nx);
        if (rc != GR_CMP_FULL)
            return rc;
        rc = gr_inline(f) ? gr_promote(f, gp, room) : gr_conv_start(g, room);
        if (rc < 0)
            return rc;
        g = *gp;
    }
    if (g->cmp != NULL)
        gr_conv_steps(g, room);
    gr_staged_t st;
    st.it = *it;
    stage_sides(g, &st);
    return add_item(g, &st, nx, room);
}

int cf_grow_add(cf_filter_t *f, const void *key, size_t len, bool nx,
                uint64_t *room)
{
    struct cf_grow vt, *g = gr_get(f, &vt);
    gr_staged_t st;
    st.it = gr_item(g, f->seed, key, len);
    int rc;
    if (__builtin_expect(g->cmp != NULL, 0)) {
        rc = add_cmp(f, &g, &st.it, nx, room);
        gr_done(f, g);
    } else {
        stage_sides(g, &st);
        rc = add_item(g, &st, nx, room);
    }
    gr_check(g);
    return rc;
}

/* Items hashed and their buckets prefetched ahead of the one added. An
 * add costs more than a lookup, so fewer are needed in flight. */
#define GROW_ADD_WINDOW 16

/* Hashes item i into st and prefetches its buckets. */
static inline __attribute__((always_inline)) void
add_stage(const struct cf_grow *g, uint64_t seed, gr_staged_t *st,
          const void *key, size_t len)
{
    st->it = gr_item(g, seed, key, len);
    stage_sides(g, st);
    prefetch(gr_bucket(g, st->s[0].b));
    prefetch(gr_bucket(g, st->s[1].b));
}

/* How add_fast_run() computes an item's buckets: gr_side() (a split
 * under way), without the split pointer's test (none under way), or the
 * base buckets themselves (a table that never split: level 0). */
enum fast_addr { FAST_ANY, FAST_WHOLE, FAST_BASE };

/* add_fast_run()'s window: item i's two bucket pointers, its streams
 * there and its tag, at i % GROW_ADD_WINDOW. */
typedef struct fast_win {
    uint64_t *p0[GROW_ADD_WINDOW], *p1[GROW_ADD_WINDOW];
    uint64_t q0[GROW_ADD_WINDOW], q1[GROW_ADD_WINDOW];
    uint32_t t[GROW_ADD_WINDOW];
} fast_win_t;

/* Hashes an item into slot r of the window and prefetches its buckets. */
static inline __attribute__((always_inline)) void
fast_stage(const struct cf_grow *a, uint64_t seed, fast_win_t *fw, size_t r,
           const void *key, size_t len, enum fast_addr how)
{
    gr_item_t it = gr_item(a, seed, key, len);
    uint64_t b0, b1, q0, q1;
    if (how == FAST_BASE) {
        b0 = it.j[0], q0 = it.s[0];
        b1 = it.j[1], q1 = it.s[1];
    } else if (how == FAST_WHOLE) {
        b0 = it.j[0] + a->n0 * (it.s[0] & a->lmask);
        b1 = it.j[1] + a->n0 * (it.s[1] & a->lmask);
        q0 = it.s[0] >> a->level;
        q1 = it.s[1] >> a->level;
    } else {
        gr_side_t s0 = gr_side(a, it.j[0], it.s[0]);
        gr_side_t s1 = gr_side(a, it.j[1], it.s[1]);
        b0 = s0.b, q0 = s0.rest;
        b1 = s1.b, q1 = s1.rest;
    }
    fw->p0[r] = gr_bucket(a, b0);
    fw->p1[r] = gr_bucket(a, b1);
    fw->q0[r] = q0;
    fw->q1[r] = q1;
    fw->t[r] = it.t;
    prefetch(fw->p0[r]);
    prefetch(fw->p1[r]);
}

/* Adds item k from slot r of the window: into the emptier bucket, chosen
 * with add_item()'s masks, counted in *added; or through add_crowded().
 * false when the run must end after it. */
static inline __attribute__((always_inline)) bool
fast_place(struct cf_grow *g, const struct cf_grow *a, uint64_t seed,
           const fast_win_t *fw, size_t r, const void *key, size_t len,
           uint64_t *room, int *rc, uint64_t *added)
{
    uint64_t w0 = *fw->p0[r], w1 = *fw->p1[r];
    uint64_t e0 = gr_empty_lanes(w0), e1 = gr_empty_lanes(w1);
    if (__builtin_expect((e0 | e1) == 0, 0)) {
        g->entries += *added;
        g->items += *added;
        *added = 0;
        gr_staged_t st;
        st.it = gr_item(a, seed, key, len);
        stage_sides(a, &st);
        *rc = add_crowded(g, &st.it, st.s[0], st.s[1], false, -EOVERFLOW, false,
                          room);
        return g->nb == a->nb && g->stash_entry == 0 && g->nomem == 0;
    }
    put_emptier(fw->t[r], (gr_cand_t){fw->p0[r], w0, e0, fw->q0[r]},
                (gr_cand_t){fw->p1[r], w1, e1, fw->q1[r]});
    (*added)++;
    *rc = 0;
    return true;
}

/* The batched common case: no NX, an empty stash, no refusal for memory
 * pending, and no split due before the run ends (it is cut where the
 * entries would pass the target load). Then no bucket moves and every add
 * is add_item()'s inline case, put_emptier() (or add_crowded() for an
 * item whose buckets are both full, as add_item() sends it). An item is
 * staged as its two bucket pointers, streams and tag only, from the filter's
 * addressing copied into locals (a store into the table cannot alias them),
 * with the split pointer's test left out when no split is under way; the counts
 * are brought up to date before add_crowded() reads them. When add_crowded()
 * split buckets, left an entry in the stash or found no memory for a split, the
 * run ends after that item. Returns the items done. */
static inline __attribute__((always_inline)) size_t
add_fast_run(struct cf_grow *g, uint64_t seed, size_t n,
             const void *const *keys, const size_t *lens, uint64_t *room,
             int *rc, enum fast_addr how)
{
    enum { W = GROW_ADD_WINDOW };
    const struct cf_grow a = *g;
    fast_win_t fw;
    uint64_t added = 0;
    const size_t head = n < W ? n : W;
    size_t i = 0;
    for (; i < head; i++)
        fast_stage(&a, seed, &fw, i, keys[i], lens[i], how);
    for (; i < n; i++) {
        size_t r = i % W, k = i - W;
        if (!fast_place(g, &a, seed, &fw, r, keys[k], lens[k], room, &rc[k],
                        &added))
            return k + 1;
        fast_stage(&a, seed, &fw, r, keys[i], lens[i], how);
    }
    for (size_t k = n - head; k < n; k++)
        if (!fast_place(g, &a, seed, &fw, k % W, keys[k], lens[k], room, &rc[k],
                        &added))
            return k + 1;
    g->entries += added;
    g->items += added;
    return n;
}

static size_t add_many_fast(struct cf_grow *g, uint64_t seed, size_t n,
                            const void *const *keys, const size_t *lens,
                            uint64_t *room, int *rc)
{
    uint64_t lim = gr_target_entries(g);
    if (g->stash_entry != 0 || g->nomem != 0 || g->entries >= lim)
        return 0;
    if (n > lim - g->entries)
        n = (size_t)(lim - g->entries); /* not past the target */
    if (g->split != 0)
        return add_fast_run(g, seed, n, keys, lens, room, rc, FAST_ANY);
    if (g->level != 0)
        return add_fast_run(g, seed, n, keys, lens, room, rc, FAST_WHOLE);
    return add_fast_run(g, seed, n, keys, lens, room, rc, FAST_BASE);
}

/* While a compact table is there: the compact adds with their items
 * hashed and their buckets fetched a window ahead (no bucket moves while
 * the table is compact), then one at a time while converting. Returns the
 * items done: all of them, or those up to the conversion's end. */
static size_t add_many_cmp(cf_filter_t *f, struct cf_grow **gp, size_t n,
                           const void *const *keys, const size_t *lens, bool nx,
                           uint64_t *room, int *rc)
{
    enum { W = GROW_ADD_WINDOW };
    gr_item_t it[W];
    size_t i = 0, staged = 0;
    while (i < n && (*gp)->phase == GR_COMPACT) {
        const struct cf_grow *g = *gp;
        for (; staged < n && staged < i + W; staged++) {
            gr_item_t *x = &it[staged % W];
            *x = gr_item(g, f->seed, keys[staged], lens[staged]);
            prefetch(g->cmp + 6 * x->j[0]);
            prefetch(g->cmp + 6 * x->j[1]);
        }
        rc[i] = add_cmp(f, gp, &it[i % W], nx, room);
        i++;
    }
    for (; i < n && (*gp)->cmp != NULL; i++) {
        gr_item_t x = gr_item(*gp, f->seed, keys[i], lens[i]);
        rc[i] = add_cmp(f, gp, &x, nx, room);
    }
    return i;
}

/* In the same order as n cf_grow_add() calls and through the same
 * add_item(), so the filter ends byte for byte as they would leave it and
 * every rc is theirs. An item is hashed once, GROW_ADD_WINDOW items ahead
 * of its add, when its buckets are computed and fetched; they are used
 * unless a split came in between (hashed items keep: their base buckets
 * and streams depend on n0 alone). Runs without NX go through
 * add_many_fast() first, as far as it goes. */
void cf_grow_add_many(cf_filter_t *f, size_t n, const void *const *keys,
                      const size_t *lens, bool nx, uint64_t *room, int *rc)
{
    struct cf_grow vt, *g = gr_get(f, &vt);
    const uint64_t seed = f->seed;
    if (g->cmp != NULL) {
        size_t i = add_many_cmp(f, &g, n, keys, lens, nx, room, rc);
        gr_done(f, g);
        keys += i;
        lens += i;
        rc += i;
        n -= i;
        if (n == 0)
            return;
    }
    if (!nx) {
        size_t done = add_many_fast(g, seed, n, keys, lens, room, rc);
        keys += done;
        lens += done;
        rc += done;
        n -= done;
        if (n == 0)
            return;
    }
    enum { W = GROW_ADD_WINDOW };
    gr_staged_t st[W];
    const size_t head = n < W ? n : W;
    size_t i = 0;
    for (; i < head; i++)
        add_stage(g, seed, &st[i], keys[i], lens[i]);
    for (; i < n; i++) {
        size_t r = i % W;
        rc[i - W] = add_item(g, &st[r], nx, room);
        add_stage(g, seed, &st[r], keys[i], lens[i]);
    }
    for (size_t k = n - head; k < n; k++)
        rc[k] = add_item(g, &st[k % W], nx, room);
    gr_check(g);
}

/* The stash back into the table after a slot freed up, if its bucket or
 * its partner has room now (no kicks). */
static void stash_retry(struct cf_grow *g)
{
    if (g->stash_entry == 0)
        return;
    uint64_t pb;
    uint32_t pv;
    if (bucket_put(g, g->stash_bucket, g->stash_entry) ||
        (partner(g, g->stash_bucket, g->stash_entry, &pb, &pv) &&
         bucket_put(g, pb, pv)))
        g->stash_entry = 0;
}

int cf_grow_del(cf_filter_t *f, const void *key, size_t len)
{
    struct cf_grow vt, *g = gr_get(f, &vt);
    gr_item_t it = gr_item(g, f->seed, key, len);
    if (__builtin_expect(g->cmp != NULL, 0)) {
        if (g->phase == GR_COMPACT) {
            int rc = gr_cmp_del(g, &it);
            gr_done(f, g);
            return rc;
        }
        gr_conv_steps(g, NULL);
    }
    /* the overflow's copies first: the table's entries stay while the
     * item has copies anywhere */
    if (gr_over_del(g, it.h)) {
        if (g->items > 0)
            g->items--;
        g->deleted++;
        return 1;
    }
    gr_side_t sd[2] = {gr_side(g, it.j[0], it.s[0]),
                       gr_side(g, it.j[1], it.s[1])};
    /* InfiniFilter's rule: of the matching entries, the one whose known
     * stream (bucket level + stored bits) is longest; a shorter one may be
     * another item's only entry (docs/growth.md). */
    uint64_t *best = NULL;
    uint32_t best_lane = 0;
    int best_known = -1;
    bool one = sd[1].b == sd[0].b;
    for (int k = 0; k < 2 - one; k++) {
        uint64_t *p = gr_wbucket(g, sd[k].b);
        uint64_t m = gr_match(*p, gr_want(it.t, sd[k].rest));
        if (one) /* both sides in one bucket, with different streams */
            m |= gr_match(*p, gr_want(it.t, sd[1].rest));
        for (; m != 0; m &= m - 1) {
            uint32_t lane = (uint32_t)__builtin_ctzll(m);
            uint32_t v = (uint32_t)(*p >> lane) & 0xFFFFu;
            int known = (int)(sd[k].level + var_len(v));
            if (known > best_known) {
                best_known = known;
                best = p;
                best_lane = lane;
            }
        }
    }
    if (stash_matches(g, &sd[0], it.t) || stash_matches(g, &sd[1], it.t)) {
        int known =
            (int)(level_of(g, g->stash_bucket) + var_len(g->stash_entry));
        if (known > best_known) {
            g->stash_entry = 0;
            best = NULL;
            goto removed;
        }
    }
    if (best == NULL)
        return 0;
    *best &= ~(0xFFFFull << best_lane);
    stash_retry(g);
removed:
    if (g->entries > 0)
        g->entries--;
    if (g->items > 0)
        g->items--;
    g->deleted++;
    gr_check(g);
    return 1;
}
