/*
 * cf_rb.c - the RedisBloom form (cf_rb.h): RedisBloom 2.x's cuckoo filter,
 * answer for answer, written from its documented behaviour and format.
 *
 * Hashing. h = MurmurHash64A(item, seed 0). The fingerprint is
 * h % 255 + 1 (8 bits, never 0). The two candidates are h and
 * h ^ (fp * 0x5bd1e995), each reduced modulo a sub-filter's bucket count
 * (a power of two, so the alternate of the alternate is the first). A
 * bucket's first slot is (index * bucket size) truncated to 32 bits, as
 * RedisBloom computes it, so even a filter past 4 GiB answers as there.
 *
 * Chain. Sub-filter k has numBuckets * expansion^k buckets of bucketSize
 * one-byte slots. Lookups probe every sub-filter; an insert takes the
 * first free slot of either bucket, newest sub-filter first, then kicks
 * (up to maxIterations, rolled back when that fails) in the newest one,
 * then grows. A delete takes the first copy, newest first, and once
 * deletes pass a tenth of the items a chained filter is compacted: the
 * fingerprints of each newer sub-filter move to a free slot of an older
 * one where they can, and an emptied newest sub-filter is freed.
 *
 * RedisBloom's header chunk (38 bytes, packed, little-endian): u64
 * numItems, u64 numBuckets, u64 numDeletes, u64 numFilters, u16
 * bucketSize, u16 maxIterations, u16 expansion. Its data chunks are the
 * sub-filters' slots, oldest first. Loading checks what RedisBloom checks
 * and more: a header whose sizes overflow, that asks for more memory than
 * the caller allows, or whose counts cannot be true is refused before
 * anything is allocated.
 */
#include "cf_rb.h"

#include <errno.h>

#include "cf_alloc.h"

#define RB_ALT_MUL 0x5bd1e995ull
#define RB_MAX_NB 0x00FFFFFFFFFFFFFFull /* 56 bits */
#define RB_MAX_FILTERS 65535u
#define RB_MAX_BUCKET 255u
#define RB_MAX_EXPANSION 32768u
/* Sub-filters past which an insert is refused ("Maximum expansions
 * reached"): RedisBloom's default cap. It checks it once per command;
 * here it is checked per item, so one command cannot chain thousands. */
#define RB_GROW_CAP 32u
/* The struct RedisBloom counts in CF.INFO's Size: its filter struct and
 * one sub-filter entry per sub-filter. */
#define RB_INFO_STRUCT 40u
#define RB_INFO_SUB 16u

typedef struct rb_sub {
    uint64_t nb; /* buckets, a power of two */
    uint8_t *data;
} rb_sub_t;

struct cf_rb {
    uint64_t nb; /* the first sub-filter's buckets */
    uint64_t items, deletes;
    uint32_t nf, cap; /* sub-filters, entries allocated in subs */
    uint16_t bs, max_iter, expansion;
    uint8_t gen;
    rb_sub_t *subs;
    uint64_t sizes[CF_RB_GENS]; /* cf_rb_size_at() */
};

static inline struct cf_rb *RB(const cf_filter_t *f)
{
    return f->u.rb;
}

/* ---- hashing ------------------------------------------------------------ */

/* MurmurHash64A (Austin Appleby's, public domain), little-endian reads. */
static uint64_t murmur64a(const void *key, size_t len, uint64_t seed)
{
    const uint64_t m = 0xc6a4a7935bd1e995ull;
    const int r = 47;
    const uint8_t *p = key;
    uint64_t h = seed ^ ((uint64_t)len * m);
    for (size_t n = len / 8; n > 0; n--, p += 8) {
        uint64_t k = le_load64(p);
        k *= m;
        k ^= k >> r;
        k *= m;
        h ^= k;
        h *= m;
    }
    size_t tail = len & 7;
    if (tail) {
        for (size_t i = tail; i-- > 0;)
            h ^= (uint64_t)p[i] << (8 * i);
        h *= m;
    }
    h ^= h >> r;
    h *= m;
    h ^= h >> r;
    return h;
}

typedef struct rb_key {
    uint64_t h1, h2;
    uint8_t fp;
} rb_key_t;

static inline uint64_t rb_alt(uint8_t fp, uint64_t i)
{
    return i ^ ((uint64_t)fp * RB_ALT_MUL);
}

static inline rb_key_t rb_key(const void *key, size_t len)
{
    rb_key_t k;
    uint64_t h = murmur64a(key, len, 0);
    k.fp = (uint8_t)(h % 255 + 1);
    k.h1 = h;
    k.h2 = rb_alt(k.fp, h);
    return k;
}

/* The first slot of the bucket h reaches in s (RedisBloom's index is
 * 32 bits wide). */
static inline uint8_t *rb_bucket(const rb_sub_t *s, uint16_t bs, uint64_t h)
{
    return s->data + (uint32_t)((h & (s->nb - 1)) * bs);
}

static inline uint8_t *slot_find(uint8_t *b, uint16_t bs, uint8_t fp)
{
    for (uint16_t j = 0; j < bs; j++)
        if (b[j] == fp)
            return b + j;
    return NULL;
}

static inline uint32_t slot_count(const uint8_t *b, uint16_t bs, uint8_t fp)
{
    uint32_t n = 0;
    for (uint16_t j = 0; j < bs; j++)
        n += b[j] == fp;
    return n;
}

/* A free slot of either bucket, the first bucket first. */
static uint8_t *pair_free(const rb_sub_t *s, uint16_t bs, uint64_t h1,
                          uint64_t h2)
{
    uint8_t *e = slot_find(rb_bucket(s, bs, h1), bs, 0);
    return e != NULL ? e : slot_find(rb_bucket(s, bs, h2), bs, 0);
}

/* ---- sizes -------------------------------------------------------------- */

static uint64_t data_bytes(const struct cf_rb *rb)
{
    uint64_t n = 0;
    for (uint32_t k = 0; k < rb->nf; k++)
        n += rb->subs[k].nb * rb->bs;
    return n;
}

uint64_t cf_rb_size_bytes(const cf_filter_t *f)
{
    const struct cf_rb *rb = RB(f);
    return sizeof(*f) + sizeof(*rb) + (uint64_t)rb->cap * sizeof(rb_sub_t) +
           data_bytes(rb);
}

/* Records a new size under the next generation (1..CF_RB_GENS-1). */
static void size_note(cf_filter_t *f)
{
    struct cf_rb *rb = RB(f);
    rb->gen = (uint8_t)(rb->gen % (CF_RB_GENS - 1) + 1);
    rb->sizes[rb->gen] = cf_rb_size_bytes(f);
}

uint32_t cf_rb_gen(const cf_filter_t *f)
{
    return RB(f)->gen;
}

uint64_t cf_rb_size_at(const cf_filter_t *f, uint32_t gen)
{
    const struct cf_rb *rb = RB(f);
    return gen >= 1 && gen < CF_RB_GENS ? rb->sizes[gen] : rb->sizes[rb->gen];
}

/* ---- lookups ------------------------------------------------------------ */

bool cf_rb_exists(const cf_filter_t *f, const void *key, size_t len)
{
    const struct cf_rb *rb = RB(f);
    rb_key_t k = rb_key(key, len);
    for (uint32_t i = 0; i < rb->nf; i++) {
        const rb_sub_t *s = &rb->subs[i];
        if (slot_find(rb_bucket(s, rb->bs, k.h1), rb->bs, k.fp) ||
            slot_find(rb_bucket(s, rb->bs, k.h2), rb->bs, k.fp))
            return true;
    }
    return false;
}

uint64_t cf_rb_count(const cf_filter_t *f, const void *key, size_t len)
{
    const struct cf_rb *rb = RB(f);
    rb_key_t k = rb_key(key, len);
    uint64_t n = 0;
    /* Both buckets are counted even when they are one, as RedisBloom
     * does. */
    for (uint32_t i = 0; i < rb->nf; i++) {
        const rb_sub_t *s = &rb->subs[i];
        n += slot_count(rb_bucket(s, rb->bs, k.h1), rb->bs, k.fp) +
             slot_count(rb_bucket(s, rb->bs, k.h2), rb->bs, k.fp);
    }
    return n;
}

void cf_rb_prefetch(const cf_filter_t *f, const void *key, size_t len)
{
    const struct cf_rb *rb = RB(f);
    rb_key_t k = rb_key(key, len);
    for (uint32_t i = rb->nf; i-- > 0;) {
        __builtin_prefetch(rb_bucket(&rb->subs[i], rb->bs, k.h1));
        __builtin_prefetch(rb_bucket(&rb->subs[i], rb->bs, k.h2));
    }
}

/* ---- inserts ------------------------------------------------------------ */

/* Kicks fingerprints around s, the newest sub-filter, to make room for
 * k.fp; undoes every kick when maxIterations are not enough. */
static bool kick_insert(const struct cf_rb *rb, const rb_sub_t *s,
                        const rb_key_t *k)
{
    uint16_t bs = rb->bs;
    uint8_t fp = k->fp, t;
    uint32_t victim = 0, n;
    uint64_t i = k->h1 & (s->nb - 1);

    for (n = 0; n < rb->max_iter; n++) {
        uint8_t *b = s->data + i * bs;
        t = b[victim], b[victim] = fp, fp = t;
        i = rb_alt(fp, i) & (s->nb - 1);
        uint8_t *e = slot_find(s->data + i * bs, bs, 0);
        if (e != NULL) {
            *e = fp;
            return true;
        }
        victim = (victim + 1) % bs;
    }
    for (n = 0; n < rb->max_iter; n++) {
        victim = (victim + bs - 1) % bs;
        i = rb_alt(fp, i) & (s->nb - 1);
        uint8_t *b = s->data + i * bs;
        t = b[victim], b[victim] = fp, fp = t;
    }
    return false;
}

/* Chains one more sub-filter (numBuckets * expansion^nf buckets), taking
 * it off *room. */
static int grow(cf_filter_t *f, uint64_t *room)
{
    struct cf_rb *rb = RB(f);
    const cf_allocator_t *a = cf_mem_allocator();
    if (rb->nf >= RB_MAX_FILTERS)
        return -EOVERFLOW;
    uint64_t nb = rb->nb;
    for (uint32_t k = 0; k < rb->nf; k++) {
        if (rb->expansion != 0 && nb > RB_MAX_NB / rb->expansion)
            return -ENOMEM;
        nb *= rb->expansion;
    }
    uint64_t bytes = nb * rb->bs;
    if (nb == 0 || bytes > CF_ABS_MAX_BYTES || bytes + sizeof(rb_sub_t) > *room)
        return -ENOMEM;
    if (rb->nf == rb->cap) {
        rb_sub_t *subs =
            a->realloc_fn(rb->subs, (rb->cap + 1) * sizeof(rb_sub_t));
        if (subs == NULL)
            return -ENOMEM;
        rb->subs = subs;
        rb->cap++;
    }
    uint8_t *data = cf_bytes_alloc(bytes);
    if (data == NULL)
        return -ENOMEM;
    rb->subs[rb->nf++] = (rb_sub_t){.nb = nb, .data = data};
    *room -= bytes + sizeof(rb_sub_t);
    size_note(f);
    return 0;
}

int cf_rb_add(cf_filter_t *f, const void *key, size_t len, bool nx,
              uint64_t *room)
{
    struct cf_rb *rb = RB(f);
    if (rb->nf >= RB_GROW_CAP)
        return -EOVERFLOW;
    if (nx && cf_rb_exists(f, key, len))
        return 0;
    rb_key_t k = rb_key(key, len);
    for (;;) {
        for (uint32_t i = rb->nf; i-- > 0;) {
            uint8_t *e = pair_free(&rb->subs[i], rb->bs, k.h1, k.h2);
            if (e != NULL) {
                *e = k.fp;
                rb->items++;
                return nx ? 1 : 0;
            }
        }
        if (kick_insert(rb, &rb->subs[rb->nf - 1], &k)) {
            rb->items++;
            return nx ? 1 : 0;
        }
        if (rb->expansion == 0)
            return -ENOSPC;
        int rc = grow(f, room);
        if (rc < 0)
            return rc;
        rb = RB(f);
    }
}

/* ---- deletes and compaction --------------------------------------------- */

/* Moves every fingerprint of sub-filter ix that fits into an older one;
 * frees it when it is the newest and ends up empty. false when some
 * fingerprint found no room. */
static bool compact_one(cf_filter_t *f, uint32_t ix)
{
    struct cf_rb *rb = RB(f);
    const rb_sub_t *s = &rb->subs[ix];
    bool all = true;
    for (uint64_t b = 0; b < s->nb; b++) {
        for (uint16_t j = 0; j < rb->bs; j++) {
            uint8_t *slot = &s->data[b * rb->bs + j];
            if (*slot == 0)
                continue;
            /* Older sub-filters have fewer buckets, a power of two apart:
             * the bucket number and the fingerprint are enough. */
            uint64_t h1 = b, h2 = rb_alt(*slot, b);
            bool moved = false;
            for (uint32_t o = 0; o < ix && !moved; o++) {
                uint8_t *e = pair_free(&rb->subs[o], rb->bs, h1, h2);
                if (e != NULL) {
                    *e = *slot;
                    *slot = 0;
                    moved = true;
                }
            }
            all &= moved;
        }
    }
    if (all && ix == rb->nf - 1) {
        cf_bytes_free(s->data, s->nb * rb->bs);
        rb->nf--;
    }
    return all;
}

/* RedisBloom's compaction; cont: go on past a sub-filter that could not
 * be emptied (CF.COMPACT) rather than stop there (after a delete). */
static void compact(cf_filter_t *f, bool cont)
{
    struct cf_rb *rb = RB(f);
    uint32_t before = rb->nf;
    for (uint32_t ix = rb->nf; --ix > 0;)
        if (!compact_one(f, ix) && !cont)
            break;
    rb->deletes = 0;
    if (rb->nf != before)
        size_note(f);
}

int cf_rb_del(cf_filter_t *f, const void *key, size_t len)
{
    struct cf_rb *rb = RB(f);
    rb_key_t k = rb_key(key, len);
    for (uint32_t i = rb->nf; i-- > 0;) {
        const rb_sub_t *s = &rb->subs[i];
        uint8_t *e = slot_find(rb_bucket(s, rb->bs, k.h1), rb->bs, k.fp);
        if (e == NULL)
            e = slot_find(rb_bucket(s, rb->bs, k.h2), rb->bs, k.fp);
        if (e == NULL)
            continue;
        *e = 0;
        rb->items--;
        rb->deletes++;
        if (rb->nf > 1 && (double)rb->deletes > (double)rb->items * 0.10)
            compact(f, false);
        return 1;
    }
    return 0;
}

/* ---- stats -------------------------------------------------------------- */

void cf_rb_stats(const cf_filter_t *f, cf_stats_t *st)
{
    const struct cf_rb *rb = RB(f);
    uint64_t nb = 0;
    for (uint32_t k = 0; k < rb->nf; k++)
        nb += rb->subs[k].nb;
    memset(st, 0, sizeof(*st));
    st->form = CF_FORM_REDISBLOOM;
    st->size_bytes =
        RB_INFO_STRUCT + (uint64_t)RB_INFO_SUB * rb->nf + nb * rb->bs;
    st->nbuckets = rb->nb;
    st->nfilters = rb->nf;
    st->items = rb->items;
    st->deleted = rb->deletes;
    st->capacity = nb * rb->bs;
    st->bucket_size = rb->bs;
    st->fp_bits = 8;
    st->expansion = rb->expansion;
    st->max_kicks = rb->max_iter;
    st->max_filters = RB_GROW_CAP;
    st->encoding = CF_ENC_PLAIN;
}

/* ---- memory ------------------------------------------------------------- */

void cf_rb_release(cf_filter_t *f)
{
    struct cf_rb *rb = RB(f);
    if (rb == NULL)
        return;
    for (uint32_t k = 0; k < rb->nf; k++)
        cf_bytes_free(rb->subs[k].data, rb->subs[k].nb * rb->bs);
    const cf_allocator_t *a = cf_mem_allocator();
    a->free_fn(rb->subs);
    a->free_fn(rb);
    f->u.rb = NULL;
}

/* ---- RedisBloom's chunks ------------------------------------------------ */

typedef struct rb_hdr {
    uint64_t items, nb, deletes, nf;
    uint16_t bs, max_iter, expansion;
} rb_hdr_t;

static void hdr_read(const uint8_t *p, rb_hdr_t *h)
{
    h->items = le_load64(p);
    h->nb = le_load64(p + 8);
    h->deletes = le_load64(p + 16);
    h->nf = le_load64(p + 24);
    h->bs = le_load16(p + 32);
    h->max_iter = le_load16(p + 34);
    h->expansion = le_load16(p + 36);
}

void cf_rb_header(const cf_filter_t *f, void *buf)
{
    const struct cf_rb *rb = RB(f);
    uint8_t *p = buf;
    le_store64(p, rb->items);
    le_store64(p + 8, rb->nb);
    le_store64(p + 16, rb->deletes);
    le_store64(p + 24, rb->nf);
    le_store16(p + 32, rb->bs);
    le_store16(p + 34, rb->max_iter);
    le_store16(p + 36, rb->expansion);
}

static bool pow2(uint64_t x)
{
    return x != 0 && (x & (x - 1)) == 0;
}

/* Checks h without allocating: 0, -EINVAL (damaged or inconsistent) or
 * -ENOMEM (sizes overflow, or more than lim allows). *bytes: the data.
 * An import (strict) must also have counts that can be true; the
 * project's own encoding loads whatever counts the filter had, since
 * RedisBloom's counters drift from the slots (a delete of a colliding
 * fingerprint, data loaded over a header), and a saved filter must always
 * load back. */
static int hdr_check(const rb_hdr_t *h, const cf_limits_t *lim, bool strict,
                     uint64_t *bytes)
{
    if (h->bs < 1 || h->bs > RB_MAX_BUCKET || h->max_iter == 0 ||
        !pow2(h->nb) || h->nb > RB_MAX_NB || h->nf < 1 ||
        h->nf > RB_MAX_FILTERS || h->expansion > RB_MAX_EXPANSION ||
        (h->expansion != 0 && !pow2(h->expansion)) ||
        (h->expansion == 0 && h->nf > 1))
        return -EINVAL;
    uint64_t total = 0, nb = h->nb;
    for (uint64_t k = 0; k < h->nf; k++) {
        if (k > 0) {
            if (nb > RB_MAX_NB / h->expansion)
                return -ENOMEM;
            nb *= h->expansion;
        }
        total += nb * h->bs;
        if (total > CF_ABS_MAX_BYTES)
            return -ENOMEM;
    }
    if (strict && h->items > total)
        return -EINVAL;
    uint64_t need = total + h->nf * sizeof(rb_sub_t) + sizeof(struct cf_rb);
    if (lim != NULL && lim->max_bytes && need > lim->max_bytes)
        return -ENOMEM;
    *bytes = total;
    return 0;
}

static int rb_new(const rb_hdr_t *h, const cf_limits_t *lim, bool strict,
                  cf_filter_t **out)
{
    uint64_t bytes;
    int rc = hdr_check(h, lim, strict, &bytes);
    *out = NULL;
    if (rc < 0)
        return rc;
    const cf_allocator_t *a = cf_mem_allocator();
    cf_filter_t *f = a->calloc_fn(1, sizeof(*f));
    struct cf_rb *rb = a->calloc_fn(1, sizeof(*rb));
    rb_sub_t *subs = a->calloc_fn((size_t)h->nf, sizeof(rb_sub_t));
    if (f == NULL || rb == NULL || subs == NULL) {
        a->free_fn(subs);
        a->free_fn(rb);
        a->free_fn(f);
        return -ENOMEM;
    }
    f->kind = CF_KIND_RB;
    f->nfilters = 1;
    f->u.rb = rb;
    *rb = (struct cf_rb){.nb = h->nb,
                         .items = h->items,
                         .deletes = h->deletes,
                         .cap = (uint32_t)h->nf,
                         .bs = h->bs,
                         .max_iter = h->max_iter,
                         .expansion = h->expansion,
                         .subs = subs};
    uint64_t nb = h->nb;
    for (uint32_t k = 0; k < h->nf; k++, nb *= h->expansion) {
        uint8_t *d = cf_bytes_alloc(nb * h->bs);
        if (d == NULL) {
            cf_rb_release(f);
            a->free_fn(f);
            return -ENOMEM;
        }
        subs[k] = (rb_sub_t){.nb = nb, .data = d};
        rb->nf++;
    }
    size_note(f);
    *out = f;
    return 0;
}

int cf_load_rb_header(const void *buf, size_t len, const cf_limits_t *lim,
                      cf_filter_t **out)
{
    rb_hdr_t h;
    *out = NULL;
    if (len != CF_RB_HEADER_LEN)
        return -EINVAL;
    hdr_read(buf, &h);
    return rb_new(&h, lim, true, out);
}

int cf_load_rb_chunk(cf_filter_t *f, long long pos, const void *p, size_t len)
{
    if (!cf_is_rb(f) || len == 0 || pos <= 0 ||
        (unsigned long long)(pos - 1) < len)
        return -EINVAL;
    const struct cf_rb *rb = RB(f);
    uint64_t off = (uint64_t)pos - 1 - len;
    for (uint32_t k = 0; k < rb->nf; k++) {
        uint64_t n = rb->subs[k].nb * rb->bs;
        if (off < n) {
            if (len > n - off)
                return -EINVAL;
            memcpy(rb->subs[k].data + off, p, len);
            return 0;
        }
        off -= n;
    }
    return -EINVAL;
}

/* ---- the project's own serialisation of this form ----------------------- */

void cf_rb_header_wrap(const cf_filter_t *f, void *buf)
{
    uint8_t *p = buf;
    memset(p, 0, CF_RB_WRAP_LEN);
    le_store32(p, CF_RB_MAGIC);
    le_store16(p + 4, 1);
    le_store16(p + 6, CF_RB_WRAP_LEN);
    cf_rb_header(f, p + 8);
    le_store64(p + CF_RB_WRAP_LEN - 8, XXH3_64bits(p, CF_RB_WRAP_LEN - 8));
}

int cf_rb_load_wrap(const void *buf, size_t len, const cf_limits_t *lim,
                    cf_filter_t **out, size_t *used)
{
    const uint8_t *p = buf;
    rb_hdr_t h;
    *out = NULL;
    if (len < CF_RB_WRAP_LEN || le_load32(p) != CF_RB_MAGIC ||
        le_load16(p + 4) != 1 || le_load16(p + 6) != CF_RB_WRAP_LEN ||
        p[46] != 0 || p[47] != 0 ||
        le_load64(p + CF_RB_WRAP_LEN - 8) != XXH3_64bits(p, CF_RB_WRAP_LEN - 8))
        return -EINVAL;
    hdr_read(p + 8, &h);
    int rc = rb_new(&h, lim, false, out);
    if (rc == 0)
        *used = CF_RB_WRAP_LEN;
    return rc;
}

uint64_t cf_rb_data_len(const cf_filter_t *f)
{
    return data_bytes(RB(f));
}

size_t cf_rb_data_view(const cf_filter_t *f, uint64_t off, size_t max,
                       const void **p)
{
    const struct cf_rb *rb = RB(f);
    *p = NULL;
    for (uint32_t k = 0; k < rb->nf; k++) {
        uint64_t n = rb->subs[k].nb * rb->bs;
        if (off < n) {
            *p = rb->subs[k].data + off;
            return n - off < max ? (size_t)(n - off) : max;
        }
        off -= n;
    }
    return 0;
}

int cf_rb_load_data(cf_filter_t *f, uint64_t off, const void *p, size_t len)
{
    const uint8_t *src = p;
    uint64_t total = cf_rb_data_len(f);
    if (off > total || len > total - off)
        return -EINVAL;
    while (len > 0) {
        const void *dst;
        size_t n = cf_rb_data_view(f, off, len, &dst);
        memcpy((void *)(uintptr_t)dst, src, n);
        src += n;
        off += n;
        len -= n;
    }
    return 0;
}

void cf_rb_compact(cf_filter_t *f)
{
    compact(f, true);
}
