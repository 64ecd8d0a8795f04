/*
 * cf_grow_dump.c - the growable form's serialised form (version 4 of the
 * core's header, docs/growth.md "Serialised form"), validated on load.
 *
 * Header, little-endian, CF_GROW_HDR_LEN bytes:
 *   0  u32 magic "CKF1"      4  u16 version 4     6  u16 header length
 *   8  u32 bucket size (4)  12  u8 tag bits (5)  13  u8 stored bits (10)
 *  14  u8 encoding (0)      15  u8 flags (2: growable)
 *  16  u32 max kicks        20  u32 expansion    24  u32 max filters
 *  28  u32 target load per 10,000
 *  32  u64 seed             40  u64 items        48  u64 deleted
 *  56  u64 n0               64  u32 level        68  u32 overflow slots
 *  72  u64 split            80  u64 entries      88  u64 kick state
 *  96  u64 stash bucket    104  u32 stash entry (0: empty)
 * 108  u32 overflow slots in use
 * 112  u64 capacity (as reserved)
 * 120  u64 XXH3-64 of the 120 bytes before it
 * followed by the data: n0 << level plus split buckets of four
 * little-endian 16-bit slots, bucket 0 first; then the overflow's slots
 * (cf_grow_over.c), each a little-endian u64 hash and u64 copies (0: a
 * free slot). Files written before the overflow existed have 0 for both
 * of its fields (they were reserved as 0) and load as they did.
 *
 * Version 5 (filters made with a compact table, cf_grow_cmp.c): the
 * header is CF_GROW_HDR5_LEN bytes, the same fields and
 *  15  u8 flags: 2 (growable) | 4 (gr_tag_of() remaps) | 8 (compact
 *      phase) or 16 (converting)
 * 120  u64 the conversion pointer (0 unless converting)
 * 128  u32 the tail: bytes of an inline table the filter's block still
 *      holds (0, or the compact table of n0 <= GR_INLINE_MAX buckets of a
 *      filter that was inline), so that a copy holds the same bytes
 * 132  u32 reserved (0)
 * 136  u64 XXH3-64 of the 136 bytes before it
 * and the data: the 16-bit buckets (none in the compact phase), the
 * overflow's slots, then, unless the table is whole, the compact table:
 * n0 semi-sorted buckets (cf_grow_int.h, cmp_expand()) of 6
 * little-endian bytes, bucket 0 first.
 */
#include <errno.h>

#include "cf_grow_int.h"

#define GR_FLAG_GROWABLE 2
#define GR_FLAG_REMAP 4
#define GR_FLAG_COMPACT 8
#define GR_FLAG_CONVERTING 16
#define GR_FLAG_PAIR 32 /* the first table of a pair (cf_pair.h) */
#define GR_MAX_LEVEL 40
#define GR_TARGET_MIN 5000
#define GR_TARGET_MAX 9500

/* Version 5 is written by filters made with a compact table (remap). */
size_t cf_grow_header_len(const cf_filter_t *f)
{
    struct cf_grow vt;
    return gr_get(f, &vt)->remap ? CF_GROW_HDR5_LEN : CF_GROW_HDR_LEN;
}

void cf_grow_header(const cf_filter_t *f, void *buf)
{
    struct cf_grow vt;
    const struct cf_grow *g = gr_get(f, &vt);
    uint8_t *p = buf;
    size_t hl = cf_grow_header_len(f);
    memset(p, 0, hl);
    le_store32(p, CF_MAGIC);
    le_store16(p + 4, g->remap ? CF_GROW_VERSION5 : CF_GROW_VERSION);
    le_store16(p + 6, (uint16_t)hl);
    le_store32(p + 8, GR_B);
    p[12] = CF_GROW_TAG_BITS;
    p[13] = CF_GROW_STORED_BITS;
    p[14] = CF_ENC_PLAIN;
    p[15] = (uint8_t)(GR_FLAG_GROWABLE | (g->remap ? GR_FLAG_REMAP : 0) |
                      (g->phase == GR_COMPACT ? GR_FLAG_COMPACT : 0) |
                      (g->phase == GR_CONVERTING ? GR_FLAG_CONVERTING : 0) |
                      (f->shape == CF_GROW_SHAPE_PAIR ? GR_FLAG_PAIR : 0));
    le_store32(p + 16, f->max_kicks);
    le_store32(p + 20, f->expansion);
    le_store32(p + 24, f->max_filters);
    le_store32(p + 28, g->target);
    le_store64(p + 32, f->seed);
    le_store64(p + 40, g->items);
    le_store64(p + 48, g->deleted);
    le_store64(p + 56, g->n0);
    le_store32(p + 64, g->level);
    le_store64(p + 72, g->split);
    le_store64(p + 80, g->entries);
    le_store64(p + 88, g->rng);
    le_store64(p + 96, g->stash_entry != 0 ? g->stash_bucket : 0);
    le_store32(p + 104, g->stash_entry);
    if (g->over != NULL) {
        le_store32(p + 68, (uint32_t)g->over->cap);
        le_store32(p + 108, (uint32_t)g->over->used);
    }
    le_store64(p + 112, g->capacity);
    if (hl == CF_GROW_HDR5_LEN) {
        le_store64(p + 120, g->phase == GR_CONVERTING ? g->conv : 0);
        le_store32(p + 128, g->tail);
    }
    le_store64(p + hl - 8, XXH3_64bits(p, hl - 8));
}

bool cf_grow_is_pair_header(const void *buf)
{
    const uint8_t *p = buf;
    return le_load16(p + 4) == CF_GROW_VERSION5 && (p[15] & GR_FLAG_PAIR);
}

int cf_grow_load_header(const void *buf, size_t len, const cf_limits_t *lim,
                        cf_filter_t **out, size_t *used)
{
    return cf_grow_load_part(buf, len, lim, CF_GROW_ALONE, out, used);
}

int cf_grow_load_part(const void *buf, size_t len, const cf_limits_t *lim,
                      enum cf_grow_role role, cf_filter_t **out, size_t *used)
{
    const uint8_t *p = buf;
    *out = NULL;
    if (len < 8 || le_load32(p) != CF_MAGIC)
        return -EINVAL;
    bool v5 = le_load16(p + 4) == CF_GROW_VERSION5;
    size_t hl = v5 ? CF_GROW_HDR5_LEN : CF_GROW_HDR_LEN;
    if (len < hl || (!v5 && le_load16(p + 4) != CF_GROW_VERSION) ||
        le_load16(p + 6) != hl ||
        le_load64(p + hl - 8) != XXH3_64bits(p, hl - 8))
        return -EINVAL;
    uint8_t flags = p[15];
    if ((role != CF_GROW_ALONE && !v5) ||
        ((flags & GR_FLAG_PAIR) != 0) != (role == CF_GROW_FIRST))
        return -EINVAL;
    flags &= (uint8_t)~GR_FLAG_PAIR;
    uint32_t phase = (flags & GR_FLAG_COMPACT)      ? GR_COMPACT
                     : (flags & GR_FLAG_CONVERTING) ? GR_CONVERTING
                                                    : GR_WHOLE;
    gr_init_t in = {
        .max_kicks = le_load32(p + 16),
        .expansion = le_load32(p + 20),
        .max_filters = le_load32(p + 24),
        .target = le_load32(p + 28),
        .seed = le_load64(p + 32),
        .n0 = le_load64(p + 56),
        .level = le_load32(p + 64),
        .split = le_load64(p + 72),
        .rng = le_load64(p + 88),
        .capacity = le_load64(p + 112),
        .conv = v5 ? le_load64(p + 120) : 0,
        .tail = v5 ? le_load32(p + 128) : 0,
        .phase = phase,
        .remap = (flags & GR_FLAG_REMAP) != 0,
    };
    uint64_t items = le_load64(p + 40), deleted = le_load64(p + 48);
    uint64_t entries = le_load64(p + 80), stash_bucket = le_load64(p + 96);
    uint32_t stash_entry = le_load32(p + 104);
    /* a compact filter loads inline when its counts fit one (gr_new()) */
    in.inl = role == CF_GROW_ALONE && items == entries && items <= UINT32_MAX;
    uint64_t ocap = le_load32(p + 68), oused = le_load32(p + 108);
    if (le_load32(p + 8) != GR_B || p[12] != CF_GROW_TAG_BITS ||
        p[13] != CF_GROW_STORED_BITS || p[14] != CF_ENC_PLAIN)
        return -EINVAL;
    /* version 4 is whole, version 5 made compact (its flags say the
     * phase: one of them, no other bit) */
    if (v5 ? (flags & ~(GR_FLAG_COMPACT | GR_FLAG_CONVERTING)) !=
                     (GR_FLAG_GROWABLE | GR_FLAG_REMAP) ||
                 (flags & GR_FLAG_COMPACT & (flags >> 1)) != 0
           : flags != GR_FLAG_GROWABLE)
        return -EINVAL;
    /* a compact table is the base table: nothing split, and converted
     * below the pointer */
    if ((phase == GR_COMPACT &&
         (in.level != 0 || in.split != 0 || le_load32(p + 104) != 0)) ||
        (phase == GR_CONVERTING ? in.conv >= in.n0 : in.conv != 0))
        return -EINVAL;
    /* the overflow: none, or a power of two of slots at most half used */
    if (ocap == 0 ? oused != 0
                  : (ocap & (ocap - 1)) != 0 || ocap < GR_OVER_MIN ||
                        ocap > (uint64_t)GR_OVER_MIN << (GR_OVER_MAX_DBL - 1) ||
                        oused * 2 > ocap)
        return -EINVAL;
    if (in.max_kicks < 1 || in.max_kicks > CF_MAX_KICKS || in.expansion < 1 ||
        in.expansion > CF_MAX_EXPANSION || in.max_filters < 1 ||
        in.max_filters > CF_MAX_FILTERS || in.target < GR_TARGET_MIN ||
        in.target > GR_TARGET_MAX || in.capacity < 1 ||
        in.capacity > CF_MAX_CAPACITY || in.rng == 0)
        return -EINVAL;
    /* the shape: every size fits the absolute cap before any product */
    const uint64_t max_nb = CF_ABS_MAX_BYTES / 8;
    if (in.n0 < 1 || in.level > GR_MAX_LEVEL || in.n0 > max_nb >> in.level)
        return in.n0 < 1 || in.level > GR_MAX_LEVEL ? -EINVAL : -ENOMEM;
    uint64_t nbig = in.n0 << in.level;
    if (in.split >= nbig)
        return -EINVAL;
    /* the tail a filter that was inline left: its whole compact table,
     * once it is not compact */
    if (v5 && (le_load32(p + 132) != 0 ||
               (in.tail != 0 && (phase == GR_COMPACT || in.n0 > GR_INLINE_MAX ||
                                 in.tail != gr_cmp_bytes(in.n0)))))
        return -EINVAL;
    uint64_t nb = nbig + in.split;
    if (nb > max_nb || ocap * 16 > CF_ABS_MAX_BYTES - nb * 8)
        return -ENOMEM;
    /* items past the entries are copies in the overflow */
    if (entries > nb * GR_B + 1 || (items > entries && ocap == 0))
        return -EINVAL;
    if (stash_entry > 0xFFFFu ||
        (stash_entry == 0
             ? stash_bucket != 0
             : ((stash_entry & GR_VAR_MASK) == 0 || stash_bucket >= nb)))
        return -EINVAL;
    uint64_t cmpb = phase != GR_WHOLE ? gr_cmp_bytes(in.n0) : 0;
    uint64_t tab = phase != GR_COMPACT ? nb * 8 : 0;
    if (cmpb > CF_ABS_MAX_BYTES - nb * 8 - ocap * 16)
        return -ENOMEM;
    if (lim != NULL && lim->max_bytes &&
        tab + ocap * 16 + cmpb > lim->max_bytes)
        return -ENOMEM;
    if (phase == GR_COMPACT && ocap != 0)
        return -EINVAL;
    cf_filter_t *f;
    int rc = gr_new(&in, &f);
    if (rc < 0)
        return rc;
    struct cf_grow vt, *g = gr_get(f, &vt);
    rc = gr_over_load(g, ocap, oused);
    if (rc < 0) {
        cf_grow_free(f);
        return rc;
    }
    g->items = items;
    g->deleted = deleted;
    g->entries = entries;
    g->stash_bucket = stash_bucket;
    g->stash_entry = stash_entry;
    gr_done(f, g);
    gr_check(g); /* what the checks above let through */
    *out = f;
    *used = hl;
    return 0;
}

static uint64_t over_len(const struct cf_grow *g)
{
    return g->over != NULL ? g->over->cap * 16 : 0;
}

/* The data's parts: the 16-bit buckets, the overflow, the compact table. */
static uint64_t tab_len(const struct cf_grow *g)
{
    return g->phase != GR_COMPACT ? g->nb * 8 : 0;
}

static uint64_t cmp_len(const struct cf_grow *g)
{
    return g->cmp != NULL ? g->n0 * 6 : 0;
}

uint64_t cf_grow_data_len(const cf_filter_t *f)
{
    struct cf_grow vt;
    const struct cf_grow *g = gr_get(f, &vt);
    return tab_len(g) + over_len(g) + cmp_len(g);
}

#define SEG_BYTES (CF_GROW_SEG * 8)

size_t cf_grow_data_view(const cf_filter_t *f, uint64_t off, size_t max,
                         const void **p)
{
    struct cf_grow vt;
    const struct cf_grow *g = gr_get(f, &vt);
    uint64_t total = tab_len(g), olen = over_len(g);
    if (off >= total) {
        uint64_t o = off - total, n;
        if (o < olen) {
            *p = (const uint8_t *)g->over->slots + o;
            n = olen - o;
        } else if (o - olen < cmp_len(g)) {
            *p = g->cmp + (o - olen);
            n = cmp_len(g) - (o - olen);
        } else {
            *p = NULL;
            return 0;
        }
        return n < max ? (size_t)n : max;
    }
    uint64_t k = off / SEG_BYTES, in = off % SEG_BYTES;
    uint64_t end = (k + 1) * SEG_BYTES < total ? (k + 1) * SEG_BYTES : total;
    uint64_t n = end - off;
    *p = (const uint8_t *)g->seg[k] + in;
    return n < max ? (size_t)n : max;
}

int cf_grow_load_data(cf_filter_t *f, uint64_t off, const void *p, size_t len)
{
    struct cf_grow vt, *g = gr_get(f, &vt);
    uint64_t total = tab_len(g), olen = over_len(g), clen = cmp_len(g);
    if (off > total + olen + clen || len > total + olen + clen - off)
        return -EINVAL;
    if (off + len > total + olen) {
        /* the compact table: any 12 bits are an entry or an empty slot
         * (the padding after it is not data) */
        uint64_t from = off > total + olen ? off - total - olen : 0;
        memcpy(g->cmp + from, (const uint8_t *)p + (from + total + olen - off),
               (size_t)(off + len - total - olen - from));
        len = off >= total + olen ? 0 : (size_t)(total + olen - off);
    }
    if (off + len > total && olen > 0) {
        /* the overflow's slots: any bytes are safe to hold (a probe stops
         * after every slot; a slot with 0 copies is free) */
        uint64_t from = off > total ? off - total : 0;
        memcpy((uint8_t *)g->over->slots + from,
               (const uint8_t *)p + (from + total - off),
               (size_t)(off + len - total - from));
        len = off >= total ? 0 : (size_t)(total - off);
    }
    const uint8_t *src = p;
    uint64_t at = off;
    size_t left = len;
    while (left > 0) {
        uint64_t k = at / SEG_BYTES, in = at % SEG_BYTES;
        uint64_t n = SEG_BYTES - in;
        if (n > left)
            n = left;
        memcpy((uint8_t *)g->seg[k] + in, src, (size_t)n);
        src += n;
        at += n;
        left -= (size_t)n;
    }
    /* Every slot this range touched: a used slot has a marker. A slot
     * split over two chunks is checked again, whole, by the second one
     * (the bytes not yet loaded are zero). A bad slot is cleared, so the
     * filter stays safe to use whatever the host does with the error. */
    int rc = 0;
    if (len == 0)
        return 0;
    for (uint64_t s = off / 2; s <= (off + len - 1) / 2; s++) {
        uint64_t b = s / GR_B;
        uint64_t *w = gr_bucket(g, b);
        uint32_t sh = (uint32_t)(s % GR_B) * 16;
        uint32_t v = (uint32_t)(*w >> sh) & 0xFFFFu;
        if (v != 0 && (v & GR_VAR_MASK) == 0) {
            *w &= ~(0xFFFFull << sh);
            rc = -EINVAL;
        }
    }
    return rc;
}
