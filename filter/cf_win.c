/*
 * cf_win.c - the window kind: its clock, lookups, adds (a present item's
 * entry refreshed), deletes, the sweep, stats and memory; see cf_win.h.
 */
#include <errno.h>

#include "cf_alloc.h"
#include "cf_ss_table.h"
#include "cf_win.h"
#include "check.h"

#define mem (*cf_mem_allocator())

#define W(f) ((f)->u.win)

/* Lanes of a bucket word: 4 x 16 bits. */
#define LANE_ONES 0x0001000100010001ull
#define LANE_FPS 0x0FFF0FFF0FFF0FFFull   /* the fingerprints */
#define LANE_LOW 0x7FFF7FFF7FFF7FFFull   /* all but each lane's top bit */
#define LANE_HIGHS 0x8000800080008000ull /* each lane's top bit */
#define FP_MASK 0x0FFFu
#define STAMP_SHIFT CF_WIN_FP_BITS

/* Target load of a full window's entries, per 100 slots. */
#define WIN_LOAD 95
/* Buckets swept after each write, beside the host's cron, and reclaimed
 * after each write while a reclaim pass runs. */
#define WIN_SWEEP_PER_WRITE 1
#define WIN_RECLAIM_PER_WRITE 4

_Static_assert(CF_WIN_FP_BITS + CF_WIN_STAMP_BITS == 16, "a slot is 16 bits");
_Static_assert(CF_WIN_SLICES + 1 < CF_WIN_STAMPS,
               "a stamp must tell a stale entry from a live one");

/* The top bit of every lane whose fingerprint bits are zero, exactly: the
 * masked lane is below 2^12, so adding LANE_LOW sets its top bit unless it
 * is zero, and never carries into the next lane. */
static inline uint64_t fp_zero(uint64_t x)
{
    x &= LANE_FPS;
    return ~((x + LANE_LOW) | x) & LANE_HIGHS;
}

static inline uint64_t lanes_matching(uint64_t w, uint32_t fp)
{
    return fp_zero(w ^ (LANE_ONES * fp));
}

static inline uint32_t lane_of(uint64_t w, unsigned j)
{
    return (uint32_t)(w >> (16 * j)) & 0xFFFFu;
}

static inline unsigned stamp_of(uint32_t lane)
{
    return lane >> STAMP_SHIFT;
}

static inline bool lane_used(uint32_t lane)
{
    return (lane & FP_MASK) != 0;
}

static inline uint64_t lane_set(uint64_t w, unsigned j, uint32_t lane)
{
    return (w & ~(0xFFFFull << (16 * j))) | (uint64_t)lane << (16 * j);
}

/* ---- the table's two layouts ----
 *
 * Everything above and below reads a bucket as four 16-bit lanes (a
 * 12-bit fingerprint, its stamp above it). Version 1 stores those lanes as
 * they are, one 64-bit word a bucket. Version 2 stores a bucket in 60
 * bits, buckets packed end to end (bucket b at bit 60 b): the 12-bit rank
 * of the multiset of the four fingerprints' 4-bit prefixes (their top
 * bits; cf_ss_table.h), then per slot, in order of prefix, the 8 low bits
 * of its fingerprint and its stamp (12 bits). 15 bits a slot, the same
 * fingerprints. */

#define BITS60 ((1ull << 60) - 1)

/* The four lanes of a version-2 bucket, in order of prefix (empty slots,
 * prefix and suffix 0, first). */
static inline uint64_t unpack(uint64_t x)
{
    uint64_t p = x >> 12, l, pre = ss_unrank[x & 0xFFF];
    /* 12-bit slots to 16-bit lanes: suffix in bits 0-7, stamp in 8-11 */
    l = (p & 0xFFF) | (p & 0xFFF000) << 4 | (p & 0xFFF000000ull) << 8 |
        (p & 0xFFF000000000ull) << 12;
    /* the stamp up to bits 12-15, the prefix into bits 8-11 */
    l = (l & 0x00FF00FF00FF00FFull) | (l & 0x0F000F000F000F00ull) << 4;
    pre = (pre & 0xF) | (pre & 0xF0) << 12 | (pre & 0xF00) << 24 |
          (pre & 0xF000) << 36;
    return l | pre << 8;
}

/* *a, *b in order. */
static inline void order2(uint32_t *a, uint32_t *b)
{
    uint32_t x = *a, y = *b;
    *a = x < y ? x : y;
    *b = x < y ? y : x;
}

/* The inverse of unpack(): the lanes sorted by prefix (then by stamp and
 * suffix, so that the same lanes always make the same bits) and
 * encoded. */
static inline uint64_t pack(uint64_t l)
{
    /* each lane as its sort key: prefix in bits 12-15 above the stored
     * slot (stamp in 8-11, suffix in 0-7) */
    uint64_t k = (l & 0x00FF00FF00FF00FFull) |
                 (l & 0xF000F000F000F000ull) >> 4 |
                 (l & 0x0F000F000F000F00ull) << 4;
    uint32_t v0 = (uint32_t)k & 0xFFFF, v1 = (uint32_t)(k >> 16) & 0xFFFF,
             v2 = (uint32_t)(k >> 32) & 0xFFFF, v3 = (uint32_t)(k >> 48);
    order2(&v0, &v1);
    order2(&v2, &v3);
    order2(&v0, &v2);
    order2(&v1, &v3);
    order2(&v1, &v2);
    return (uint64_t)(ss_rank[0][v0 >> 12] + ss_rank[1][v1 >> 12] +
                      ss_rank[2][v2 >> 12] + ss_rank[3][v3 >> 12]) |
           (uint64_t)(v0 & 0xFFF) << 12 | (uint64_t)(v1 & 0xFFF) << 24 |
           (uint64_t)(v2 & 0xFFF) << 36 | (uint64_t)(v3 & 0xFFF) << 48;
}

/* false when no slot of version-2 bucket x has fp's prefix (then none
 * holds fp): one read of ss_unrank and a zero-nibble test, which a
 * lookup does before it decodes a bucket. True at times when none has
 * (a borrow), never false when one has. */
static inline bool prefix_in(uint64_t x, uint32_t fp)
{
    uint32_t t = ss_unrank[x & 0xFFF] ^ (0x1111u * (fp >> 8));
    return ((t - 0x1111u) & ~t & 0x8888u) != 0;
}

/* Bytes of data of nb buckets, and allocated: 8 more for version 2, so
 * that the last bucket is read and written as one 64-bit word too. */
static inline uint64_t data_bytes(uint64_t nb, bool wide)
{
    return wide ? nb * 8 : (nb * 15 + 1) / 2;
}

static inline uint64_t alloc_bytes(uint64_t nb, bool wide)
{
    return data_bytes(nb, wide) + (wide ? 0 : 8);
}

static inline uint8_t *bucket_at(const struct cf_win *w, uint64_t b)
{
    return w->t + (w->wide ? b * 8 : (b * 15) >> 1);
}

/* Bucket b as stored, and stored. */
static inline uint64_t raw_get(const struct cf_win *w, uint64_t b)
{
    uint64_t x = le_load64(bucket_at(w, b));
    return w->wide ? x : (x >> ((b & 1) * 4)) & BITS60;
}

static inline void raw_set(struct cf_win *w, uint64_t b, uint64_t x)
{
    uint8_t *q = bucket_at(w, b);
    if (w->wide) {
        le_store64(q, x);
        return;
    }
    unsigned sh = (unsigned)(b & 1) * 4;
    le_store64(q, (le_load64(q) & ~(BITS60 << sh)) | x << sh);
}

/* Bucket b as four lanes, and the lanes stored as bucket b. */
static inline uint64_t get(const struct cf_win *w, uint64_t b)
{
    uint64_t x = raw_get(w, b);
    return w->wide ? x : unpack(x);
}

static inline void set(struct cf_win *w, uint64_t b, uint64_t lanes)
{
    raw_set(w, b, w->wide ? lanes : pack(lanes));
}

/* The slice a stamp names: the newest one with that value at or before
 * newest (cf_win.h: every entry's slice lies within 16 of it). */
static inline uint64_t slice_of(const struct cf_win *w, unsigned v)
{
    return w->newest - ((w->newest - v) & (CF_WIN_STAMPS - 1));
}

/* Recomputes which stamps are alive at the clock. */
static void alive_update(struct cf_win *w)
{
    uint32_t m = 0;
    for (unsigned v = 0; v < CF_WIN_STAMPS; v++)
        if (w->now - slice_of(w, v) <= CF_WIN_SLICES)
            m |= 1u << v;
    w->alive = m;
    w->maybe_stale = true;
}

/* Whether any entry is stale (the per-stamp counts say it exactly); keeps
 * the answer until the live stamps change. */
static bool any_stale(struct cf_win *w)
{
    if (!w->maybe_stale)
        return false;
    for (unsigned v = 0; v < CF_WIN_STAMPS; v++)
        if (!((w->alive >> v) & 1) && w->cnt[v] != 0)
            return true;
    w->maybe_stale = false;
    return false;
}

static inline bool lane_alive(uint32_t alive, uint32_t lane)
{
    return (alive >> stamp_of(lane)) & 1;
}

static inline bool is_owned(const struct cf_win *w, uint64_t b)
{
    return ((w->owned[b >> 6] >> (b & 63)) & 1) == (uint64_t)w->epoch;
}

/* The stamps alive in bucket b: a bucket a reclaim pass has not owned yet
 * may still hold doomed entries, whose stamps say nothing. */
static inline uint32_t alive_in(const struct cf_win *w, uint64_t b)
{
    if (w->reclaiming && !is_owned(w, b))
        return w->alive & ~w->doomed_mask;
    return w->alive;
}

static inline void note_visits(struct cf_win *w, uint64_t n)
{
    if (n > w->max_visit)
        w->max_visit = n;
}

static uint64_t xorshift(struct cf_win *w)
{
    uint64_t x = w->rng;
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    w->rng = x;
    return x;
}

/* ---- sizes ---- */

uint64_t cf_win_buckets_for(uint64_t capacity)
{
    if (capacity == 0 || capacity > CF_MAX_CAPACITY)
        return 0;
    /* a window's items and those of the slice past it (the slack) */
    uint64_t slots = capacity + (capacity + CF_WIN_SLICES - 1) / CF_WIN_SLICES;
    uint64_t nb = (slots * 100 + 4 * WIN_LOAD - 1) / (4 * WIN_LOAD);
    return nb < 1 ? 1 : nb;
}

uint64_t cf_win_table_bytes(const cf_params_t *p)
{
    uint64_t nb = cf_win_buckets_for(p->capacity);
    return nb == 0 || nb > CF_ABS_MAX_BYTES / 8 ? 0 : alloc_bytes(nb, false);
}

uint64_t cf_win_data_len(const cf_filter_t *f)
{
    return data_bytes(W(f)->nbuckets, W(f)->wide);
}

static uint64_t owned_words(const struct cf_win *w)
{
    return (w->nbuckets + 63) / 64;
}

uint64_t cf_win_size_bytes(const cf_filter_t *f)
{
    const struct cf_win *w = W(f);
    return sizeof(*f) + sizeof(struct cf_win) +
           alloc_bytes(w->nbuckets, w->wide) +
           (w->owned != NULL ? owned_words(w) * 8 : 0);
}

/* ---- making and freeing ---- */

static void win_set_window(struct cf_win *w, uint64_t window_ms)
{
    w->window_ms = window_ms;
    w->slice_ms = (window_ms + CF_WIN_SLICES - 1) / CF_WIN_SLICES;
}

int cf_win_new(uint64_t capacity, uint64_t window_ms, uint64_t max_bytes,
               bool wide, cf_filter_t **out)
{
    *out = NULL;
    uint64_t nb = cf_win_buckets_for(capacity);
    if (nb == 0 || nb > CF_ABS_MAX_BYTES / 8 || window_ms == 0 ||
        window_ms > CF_MAX_WINDOW_MS)
        return -ENOMEM;
    uint64_t tb = alloc_bytes(nb, wide);
    uint64_t bytes = sizeof(cf_filter_t) + sizeof(struct cf_win) + tb;
    if (max_bytes != 0 && bytes > max_bytes)
        return -ENOMEM;
    cf_filter_t *f = mem.calloc_fn(1, sizeof(*f));
    struct cf_win *w = mem.calloc_fn(1, sizeof(*w));
    uint8_t *t = cf_bytes_alloc(tb);
    if (f == NULL || w == NULL || t == NULL) {
        if (t != NULL)
            cf_bytes_free(t, tb);
        mem.free_fn(w);
        mem.free_fn(f);
        return -ENOMEM;
    }
    f->kind = CF_KIND_WIN;
    f->u.win = w;
    w->t = t;
    w->wide = wide;
    w->nbuckets = nb;
    w->capacity = capacity;
    win_set_window(w, window_ms);
    w->rng = 1;
    alive_update(w);
    *out = f;
    return 0;
}

int cf_win_create(const cf_params_t *p, cf_filter_t **out)
{
    int rc = cf_win_new(p->capacity, p->window_ms, p->max_bytes, false, out);
    if (rc != 0)
        return rc;
    (*out)->seed = p->seed;
    W(*out)->max_kicks = p->max_kicks;
    W(*out)->rng = (p->seed ^ CF_GOLDEN) | 1;
    return 0;
}

void cf_win_release(cf_filter_t *f)
{
    struct cf_win *w = W(f);
    if (w == NULL)
        return;
    cf_bytes_free(w->t, alloc_bytes(w->nbuckets, w->wide));
    mem.free_fn(w->owned);
    mem.free_fn(w);
    f->u.win = NULL;
}

/* ---- the clock ---- */

/*
 * Reclaim. A write whose stamp would make an old entry's stamp name the
 * wrong slice (the clock jumped 16 slices or more past it) does not clear
 * the table: it dooms the stamps of every entry stale then (each is
 * stale, none alive) and starts a pass. Until the pass owns a bucket, its
 * entries of a doomed stamp are dead to every reader; the first write,
 * delete or sweep that touches a bucket owns it (clears its doomed
 * entries and flips its bit in the bitmap), and the pass owns the rest in
 * order, a few buckets per write and the host's budget per sweep. A new
 * entry is only ever stored in an owned bucket, so a doomed stamp never
 * hides one. The pass flips the meaning of the bits (epoch), so the next
 * starts with every bucket unowned at no cost. The per-stamp counts hold
 * no doomed entry; `doomed` counts them until they are cleared.
 */

/* Owns bucket b for the pass; returns the entries it cleared. */
static uint64_t own(struct cf_win *w, uint64_t b)
{
    if (!w->reclaiming || is_owned(w, b))
        return 0;
    uint64_t x = get(w, b), freed = 0;
    for (unsigned j = 0; j < 4; j++) {
        uint32_t lane = lane_of(x, j);
        if (lane_used(lane) && ((w->doomed_mask >> stamp_of(lane)) & 1)) {
            x = lane_set(x, j, 0);
            freed++;
        }
    }
    CK_ASSERT(freed <= w->doomed);
    if (freed != 0)
        set(w, b, x);
    w->doomed -= freed;
    w->owned[b >> 6] ^= 1ull << (b & 63);
    return freed;
}

/* Clears the stale lanes of bucket b (owning it first); returns how many. */
static uint64_t sweep_bucket(struct cf_win *w, uint64_t b)
{
    uint64_t freed = own(w, b), x = raw_get(w, b), n = 0;
    if (x == 0)
        return freed;
    x = w->wide ? x : unpack(x);
    for (unsigned j = 0; j < 4; j++) {
        uint32_t lane = lane_of(x, j);
        if (lane_used(lane) && !lane_alive(w->alive, lane)) {
            w->cnt[stamp_of(lane)]--;
            x = lane_set(x, j, 0);
            n++;
        }
    }
    if (n != 0)
        set(w, b, x);
    return freed + n;
}

/* Whether any entry may have a slice more than 15 before s: then a stamp
 * of s would read as one of theirs. */
static bool span_too_wide(const struct cf_win *w, uint64_t s)
{
    for (unsigned v = 0; v < CF_WIN_STAMPS; v++)
        if (w->cnt[v] != 0 && s - slice_of(w, v) >= CF_WIN_STAMPS)
            return true;
    return false;
}

/* Up to n buckets of the pass, in order; ends it at the table's end.
 * Adds the entries freed to *freed; returns the buckets visited. */
static uint64_t reclaim_some(struct cf_win *w, uint64_t n, uint64_t *freed)
{
    uint64_t v = 0;
    while (w->reclaiming && v < n) {
        *freed += sweep_bucket(w, w->reclaim);
        v++;
        if (++w->reclaim == w->nbuckets) {
            CK_ASSERT(w->doomed == 0);
            w->reclaiming = false;
            w->doomed_mask = 0;
        }
    }
    return v;
}

/* The rest of a running pass at once: for a second jump within one pass
 * (its doomed stamps are one set), and before the table is read whole. */
static void reclaim_finish(struct cf_win *w)
{
    uint64_t freed = 0;
    if (w->reclaiming)
        note_visits(w, reclaim_some(w, w->nbuckets, &freed));
}

/* Starts a pass that dooms every stale stamp (see "Reclaim"). Without
 * memory for the bitmap, reclaims every stale slot at once instead. */
static void reclaim_start(struct cf_win *w)
{
    reclaim_finish(w);
    if (w->owned == NULL) {
        w->owned = mem.calloc_fn(owned_words(w), 8);
        if (w->owned == NULL) {
            for (uint64_t b = 0; b < w->nbuckets; b++)
                sweep_bucket(w, b);
            note_visits(w, w->nbuckets);
            return;
        }
    }
    uint32_t mask = 0;
    for (unsigned v = 0; v < CF_WIN_STAMPS; v++) {
        if (((w->alive >> v) & 1) || w->cnt[v] == 0)
            continue;
        mask |= 1u << v;
        w->doomed += w->cnt[v];
        w->cnt[v] = 0;
    }
    if (w->doomed == 0)
        return;
    /* every bucket was owned by the last pass: flipping the meaning of
     * the bits makes every one unowned */
    w->doomed_mask = mask;
    w->epoch = !w->epoch;
    w->reclaim = 0;
    w->reclaiming = true;
}

uint64_t cf_win_set_time(cf_filter_t *f, uint64_t now_ms, uint64_t add_ms)
{
    struct cf_win *w = W(f);
    if (now_ms > w->clock_ms) {
        w->clock_ms = now_ms;
        /* the slice, and the stamps alive, change once a slice */
        if (now_ms >= w->next_ms) {
            w->now = now_ms / w->slice_ms;
            w->next_ms = (w->now + 1) * w->slice_ms;
            alive_update(w);
        }
    }
    if (add_ms >= w->clock_ms) {
        w->add = w->now;
        w->add_ms = w->clock_ms;
    } else {
        w->add = add_ms / w->slice_ms;
        w->add_ms = add_ms;
    }
    return w->add_ms;
}

/* Makes slice a (alive at the clock) storable: at most 15 slices after
 * every entry's, newest the latest of them. */
static void win_stamp_ready(struct cf_win *w, uint64_t a)
{
    uint64_t nw = a > w->newest ? a : w->newest;
    if (nw == w->newest)
        return;
    if (span_too_wide(w, nw))
        reclaim_start(w);
    w->newest = nw;
    alive_update(w);
}

/* ---- lookups ---- */

typedef struct win_hash {
    uint64_t i1, i2;
    uint32_t fp;
} win_hash_t;

static inline win_hash_t win_hash(const cf_filter_t *f, const void *key,
                                  size_t len)
{
    const struct cf_win *w = W(f);
    win_hash_t r;
    uint64_t h = key_hash(key, len, f->seed);
    r.fp = (uint32_t)h & FP_MASK;
    r.fp += r.fp == 0;
    r.i1 = mulhi(h, w->nbuckets);
    r.i2 = alt_of(w->nbuckets, r.i1, r.fp);
    return r;
}

/* The top bit of every lane of bucket b holding fp alive. */
/* The same, of bucket b already read as lanes x. */
static inline uint64_t live_in(const struct cf_win *w, uint64_t b, uint64_t x,
                               uint32_t fp)
{
    uint64_t m = lanes_matching(x, fp), live = 0;
    uint32_t alive = alive_in(w, b);
    while (m != 0) {
        unsigned bit = (unsigned)__builtin_ctzll(m);
        if (lane_alive(alive, lane_of(x, bit / 16)))
            live |= 1ull << bit;
        m &= m - 1;
    }
    return live;
}

static inline uint64_t live_matches(const struct cf_win *w, uint64_t b,
                                    uint32_t fp)
{
    uint64_t x = raw_get(w, b);
    if (w->wide)
        return live_in(w, b, x, fp);
    return prefix_in(x, fp) ? live_in(w, b, unpack(x), fp) : 0;
}

bool cf_win_exists(const cf_filter_t *f, const void *key, size_t len)
{
    const struct cf_win *w = W(f);
    win_hash_t h = win_hash(f, key, len);
    return live_matches(w, h.i1, h.fp) != 0 || live_matches(w, h.i2, h.fp) != 0;
}

uint64_t cf_win_count(const cf_filter_t *f, const void *key, size_t len)
{
    const struct cf_win *w = W(f);
    win_hash_t h = win_hash(f, key, len);
    uint64_t n = (uint64_t)__builtin_popcountll(live_matches(w, h.i1, h.fp));
    if (h.i2 != h.i1)
        n += (uint64_t)__builtin_popcountll(live_matches(w, h.i2, h.fp));
    return n;
}

void cf_win_prefetch(const cf_filter_t *f, const void *key, size_t len)
{
    win_hash_t h = win_hash(f, key, len);
    __builtin_prefetch(bucket_at(W(f), h.i1), 0, 3);
    __builtin_prefetch(bucket_at(W(f), h.i2), 0, 3);
}

void cf_win_exists_many(const cf_filter_t *f, size_t n, const void *const *keys,
                        const size_t *lens, bool *out)
{
    const struct cf_win *w = W(f);
    win_hash_t h[CF_WINDOW];
    for (size_t i = 0; i < n; i += CF_WINDOW) {
        size_t m = n - i < CF_WINDOW ? n - i : CF_WINDOW;
        for (size_t j = 0; j < m; j++) {
            h[j] = win_hash(f, keys[i + j], lens[i + j]);
            __builtin_prefetch(bucket_at(w, h[j].i1), 0, 3);
            __builtin_prefetch(bucket_at(w, h[j].i2), 0, 3);
        }
        for (size_t j = 0; j < m; j++)
            out[i + j] = live_matches(w, h[j].i1, h[j].fp) != 0 ||
                         live_matches(w, h[j].i2, h[j].fp) != 0;
    }
}

/* ---- writes ---- */

/* The first free lane of an owned bucket read as lanes x (empty, or
 * stale: its count comes off), or -1. An empty lane is found with one test
 * of the word; only a bucket without one has its stamps read. */
static int free_in(struct cf_win *w, uint64_t x)
{
    uint64_t e = fp_zero(x);
    if (e != 0)
        return (int)((unsigned)__builtin_ctzll(e) / 16);
    for (unsigned j = 0; j < 4; j++) {
        uint32_t lane = lane_of(x, j);
        if (!lane_alive(w->alive, lane)) {
            w->cnt[stamp_of(lane)]--;
            return (int)j;
        }
    }
    return -1;
}

/* free_in() of bucket b, owned first; its lanes in *x. */
static int free_lane(struct cf_win *w, uint64_t b, uint64_t *x)
{
    own(w, b);
    *x = get(w, b);
    return free_in(w, *x);
}

/* A walk of kicks from the pair (i1, i2) until some entry lands in a free
 * lane; undone whole (the table as before: each bucket's stored bits put
 * back, last first, since a write may reorder a bucket's lanes) when it
 * does not within the bound. 0 or -ENOSPC. */
static int kick(struct cf_win *w, const win_hash_t *h, uint32_t lane)
{
    uint64_t log_b[CF_WIN_MAX_WALK], log_x[CF_WIN_MAX_WALK];
    uint32_t n =
        w->max_kicks < CF_WIN_MAX_WALK ? w->max_kicks : CF_WIN_MAX_WALK;
    uint64_t b = (xorshift(w) & 1) ? h->i2 : h->i1;
    uint32_t cur = lane, k;
    for (k = 0; k < n; k++) {
        unsigned j = (unsigned)(xorshift(w) >> 62);
        uint64_t was = raw_get(w, b), lanes = w->wide ? was : unpack(was);
        uint32_t victim = lane_of(lanes, j);
        set(w, b, lane_set(lanes, j, cur));
        log_b[k] = b;
        log_x[k] = was;
        cur = victim;
        b = alt_of(w->nbuckets, b, cur & FP_MASK);
        uint64_t x;
        int fj = free_lane(w, b, &x);
        if (fj >= 0) {
            set(w, b, lane_set(x, (unsigned)fj, cur));
            return 0;
        }
    }
    /* Undo: each kicked entry back where it was, the new one out. */
    while (k-- > 0)
        raw_set(w, log_b[k], log_x[k]);
    return -ENOSPC;
}

/* Rewrites a live match's stamp to slice a when that is newer; true when
 * a live match exists. */
static bool refresh(struct cf_win *w, uint64_t b, uint64_t x, uint32_t fp,
                    uint64_t a)
{
    uint64_t m = live_in(w, b, x, fp);
    if (m == 0)
        return false;
    unsigned j = (unsigned)__builtin_ctzll(m) / 16;
    uint32_t lane = lane_of(x, j);
    unsigned v = stamp_of(lane), nv = (unsigned)(a & (CF_WIN_STAMPS - 1));
    if ((int64_t)(a - slice_of(w, v)) > 0) {
        w->cnt[v]--;
        w->cnt[nv]++;
        set(w, b, lane_set(x, j, fp | nv << STAMP_SHIFT));
    }
    return true;
}

/* Sweeps up to `buckets` buckets, or reclaims up to `reclaim` while a
 * pass runs; returns the slots freed. */
static uint64_t sweep_some(struct cf_win *w, uint64_t buckets, uint64_t reclaim)
{
    uint64_t freed = 0, i;
    if (w->reclaiming) {
        note_visits(w, reclaim_some(w, reclaim, &freed));
        return freed;
    }
    if (!any_stale(w))
        return 0;
    for (i = 0; i < buckets && i < w->nbuckets; i++) {
        freed += sweep_bucket(w, w->cursor);
        w->cursor = w->cursor + 1 < w->nbuckets ? w->cursor + 1 : 0;
    }
    note_visits(w, i);
    return freed;
}

/* 0 stored or refreshed (nx: 1 stored, 0 refreshed), or -ENOSPC. */
static int win_add(cf_filter_t *f, const win_hash_t *h, bool nx)
{
    struct cf_win *w = W(f);
    uint64_t a = w->add;
    if (w->add_ms > w->write_ms)
        w->write_ms = w->add_ms;
    if (w->now - a > CF_WIN_SLICES) /* forgotten already: nothing to store */
        return nx ? live_matches(w, h->i1, h->fp) == 0 &&
                        live_matches(w, h->i2, h->fp) == 0
                  : 0;
    win_stamp_ready(w, a);
    own(w, h->i1);
    own(w, h->i2);
    /* each bucket read once, and a version-2 bucket decoded only when
     * its prefixes may hold fp or its lanes are written: the same lanes
     * serve the refresh, the free lane and the write */
    uint64_t r1 = raw_get(w, h->i1), r2 = raw_get(w, h->i2), x1 = 0, x2 = 0;
    bool d1 = w->wide || prefix_in(r1, h->fp);
    bool d2 = w->wide || prefix_in(r2, h->fp);
    if (d1) {
        x1 = w->wide ? r1 : unpack(r1);
        if (refresh(w, h->i1, x1, h->fp, a))
            return 0;
    }
    if (d2) {
        x2 = w->wide ? r2 : unpack(r2);
        if (refresh(w, h->i2, x2, h->fp, a))
            return 0;
    }
    unsigned v = (unsigned)(a & (CF_WIN_STAMPS - 1));
    uint32_t lane = h->fp | v << STAMP_SHIFT;
    if (!d1)
        x1 = unpack(r1);
    int j = free_in(w, x1);
    uint64_t b = h->i1, x = x1;
    if (j < 0) {
        if (!d2)
            x2 = unpack(r2);
        j = free_in(w, x2);
        b = h->i2;
        x = x2;
    }
    int rc = 0;
    if (j >= 0)
        set(w, b, lane_set(x, (unsigned)j, lane));
    else
        rc = kick(w, h, lane);
    if (rc != 0)
        return rc;
    w->cnt[v]++;
    return nx ? 1 : 0;
}

int cf_win_add(cf_filter_t *f, const void *key, size_t len, bool nx)
{
    win_hash_t h = win_hash(f, key, len);
    int rc = win_add(f, &h, nx);
    sweep_some(W(f), WIN_SWEEP_PER_WRITE, WIN_RECLAIM_PER_WRITE);
    return rc;
}

void cf_win_add_many(cf_filter_t *f, size_t n, const void *const *keys,
                     const size_t *lens, bool nx, int *rc)
{
    win_hash_t h[CF_WINDOW];
    for (size_t i = 0; i < n; i += CF_WINDOW) {
        size_t m = n - i < CF_WINDOW ? n - i : CF_WINDOW;
        for (size_t j = 0; j < m; j++) {
            h[j] = win_hash(f, keys[i + j], lens[i + j]);
            __builtin_prefetch(bucket_at(W(f), h[j].i1), 1, 3);
            __builtin_prefetch(bucket_at(W(f), h[j].i2), 1, 3);
        }
        for (size_t j = 0; j < m; j++) {
            rc[i + j] = win_add(f, &h[j], nx);
            sweep_some(W(f), WIN_SWEEP_PER_WRITE, WIN_RECLAIM_PER_WRITE);
        }
    }
}

int cf_win_del(cf_filter_t *f, const void *key, size_t len)
{
    struct cf_win *w = W(f);
    win_hash_t h = win_hash(f, key, len);
    uint64_t bs[2] = {h.i1, h.i2};
    int rc = 0;
    for (int k = 0; k < 2 && rc == 0; k++) {
        uint64_t x = get(w, bs[k]), m = live_in(w, bs[k], x, h.fp);
        if (m == 0)
            continue;
        unsigned j = (unsigned)__builtin_ctzll(m) / 16;
        w->cnt[stamp_of(lane_of(x, j))]--;
        set(w, bs[k], lane_set(x, j, 0));
        f->deleted++;
        rc = 1;
    }
    sweep_some(w, WIN_SWEEP_PER_WRITE, WIN_RECLAIM_PER_WRITE);
    return rc;
}

uint64_t cf_win_sweep(cf_filter_t *f, uint64_t buckets)
{
    return sweep_some(W(f), buckets, buckets);
}

void cf_win_count_bytes(cf_filter_t *f, uint64_t off, uint64_t len, int sign)
{
    struct cf_win *w = W(f);
    uint64_t bits = w->wide ? 64 : 60;
    uint64_t b0 = off * 8 / bits, b1 = ((off + len) * 8 + bits - 1) / bits;
    if (b1 > w->nbuckets)
        b1 = w->nbuckets;
    for (uint64_t b = b0; b < b1; b++) {
        uint64_t x = get(w, b);
        for (unsigned j = 0; j < 4; j++) {
            uint32_t lane = lane_of(x, j);
            if (lane_used(lane))
                w->cnt[stamp_of(lane)] += (uint64_t)(int64_t)sign;
        }
    }
}

void cf_win_settle(const cf_filter_t *f)
{
    /* a pass changes no answer: the filter is the same value after it */
    reclaim_finish((struct cf_win *)(uintptr_t)W(f));
}

/* ---- stats ---- */

static void counts(const struct cf_win *w, uint64_t *live, uint64_t *stale)
{
    *live = *stale = 0;
    for (unsigned v = 0; v < CF_WIN_STAMPS; v++) {
        if ((w->alive >> v) & 1)
            *live += w->cnt[v];
        else
            *stale += w->cnt[v];
    }
    *stale += w->doomed;
}

void cf_win_stats(const cf_filter_t *f, cf_stats_t *st)
{
    const struct cf_win *w = W(f);
    uint64_t live, stale;
    counts(w, &live, &stale);
    memset(st, 0, sizeof(*st));
    st->size_bytes = cf_win_size_bytes(f);
    st->nbuckets = w->nbuckets;
    st->nfilters = 1;
    st->items = live;
    st->deleted = f->deleted;
    st->capacity = w->capacity;
    st->bucket_size = 4;
    st->fp_bits = CF_WIN_FP_BITS;
    st->expansion = 0;
    st->max_kicks = w->max_kicks;
    st->max_filters = 1;
    st->seed = f->seed;
    st->encoding = CF_ENC_PLAIN;
    st->form = CF_FORM_WINDOW;
}

void cf_win_info(const cf_filter_t *f, cf_window_info_t *wi)
{
    const struct cf_win *w = W(f);
    wi->window_ms = w->window_ms;
    wi->slice_ms = w->slice_ms;
    wi->slack_ms = (CF_WIN_SLICES + 1) * w->slice_ms - w->window_ms;
    wi->clock_ms = w->clock_ms;
    counts(w, &wi->live, &wi->stale);
    wi->max_visit = w->max_visit;
}
