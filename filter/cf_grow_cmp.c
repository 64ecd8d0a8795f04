/*
 * cf_grow_cmp.c - the growable shape's compact phase and its conversion
 * (cf_grow_int.h, enum gr_phase). A filter made growable starts with its
 * n0 base buckets semi-sorted: 13-bit entries, a 5-bit tag and the 8 low
 * bits of the side's stream with no marker (every entry of a table that
 * never split knows the same 8 bits; 0 is an empty slot, so an item whose
 * entry would be 0 takes tag 31, gr_tag_of()), in 12 bits a slot. Its
 * addressing is the 16-bit table's at level 0, so a compact entry is the
 * 16-bit entry with 8 stored bits: the conversion moves bits, not items,
 * and an item is found in either form at every moment of it.
 */
#include "cf_grow_int.h"

#include <errno.h>

#define mem (*cf_mem_allocator())

/* Buckets the conversion pointer passes per write. */
#define CONV_STEP 32

int gr_cmp_alloc(struct cf_grow *g)
{
    g->cmp = cf_bytes_alloc(gr_cmp_bytes(g->n0));
    return g->cmp == NULL ? -ENOMEM : 0;
}

/* Puts entry v into an empty lane of word w (e its empty lanes). */
static inline uint64_t lane_put(uint64_t w, uint64_t e, uint32_t v)
{
    return w | (uint64_t)v << __builtin_ctzll(e);
}

int gr_cmp_del(struct cf_grow *g, const gr_item_t *it)
{
    CK_ASSERT(g->phase == GR_COMPACT);
    for (int k = 0; k < 2; k++) {
        uint64_t b = it->j[k], w = cmp_expand(cmp_load(g, b));
        uint64_t m = gr_match(w, gr_want(it->t, it->s[k]));
        if (m == 0)
            continue;
        w &= ~(0xFFFFull << __builtin_ctzll(m));
        cmp_store(g, b, cmp_compress(w));
        if (g->entries > 0)
            g->entries--;
        if (g->items > 0)
            g->items--;
        g->deleted++;
        return 1;
    }
    return 0;
}

int gr_conv_start(struct cf_grow *g, uint64_t *room)
{
    CK_ASSERT(g->phase == GR_COMPACT && g->cap == 0);
    uint64_t add = gr_size_of_cap(g->n0) - gr_size_of_cap(0);
    if (g->n0 * 8 > CF_ABS_MAX_BYTES || add > *room)
        return -ENOMEM;
    int rc = gr_alloc_to(g, g->n0);
    if (rc < 0)
        return rc;
    *room -= add;
    g->cap_init = g->n0;
    g->conv_at[0] = gr_size_events(g);
    g->phase = GR_CONVERTING;
    g->conv = 0;
    return 0;
}

void gr_conv_bucket(struct cf_grow *g, uint64_t b, uint64_t *p)
{
    uint64_t c = cmp_load(g, b);
    if (c == 0)
        return;
    uint64_t w = cmp_expand(c);
    if (*p == 0) {
        *p = w;
    } else {
        /* both forms hold entries only in a damaged load: the compact
         * ones take the free lanes, the rest are dropped */
        for (uint32_t k = 0; k < GR_B; k++) {
            uint32_t v = (uint32_t)(w >> (16 * k)) & 0xFFFFu;
            uint64_t e = gr_empty_lanes(*p);
            if (v != 0 && e != 0)
                *p = lane_put(*p, e, v);
        }
    }
    cmp_store(g, b, 0);
}

void gr_conv_steps(struct cf_grow *g, uint64_t *room)
{
    CK_ASSERT(g->phase == GR_CONVERTING);
    uint64_t end = g->conv + CONV_STEP < g->n0 ? g->conv + CONV_STEP : g->n0;
    for (uint64_t b = g->conv; b < end; b++)
        gr_conv_bucket(g, b, gr_bucket(g, b));
    g->conv = end;
    if (end < g->n0)
        return;
    cf_bytes_free(g->cmp, gr_cmp_bytes(g->n0));
    g->cmp = NULL;
    if (room != NULL) /* what the 16-bit table took is partly given back */
        *room += gr_cmp_bytes(g->n0);
    g->phase = GR_WHOLE;
    g->conv_at[1] = gr_size_events(g);
}

/* ---- inline filters (GR_SHAPE_INLINE) ---- */

int gr_promote(cf_filter_t *f, struct cf_grow **gp, uint64_t *room)
{
    const struct cf_grow *vt = *gp;
    uint64_t n0 = vt->n0;
    uint64_t add = gr_size_of_cap(n0) - sizeof(cf_filter_t);
    if (add > *room)
        return -ENOMEM;
    struct cf_grow *g = mem.malloc_fn(sizeof(*g));
    if (g == NULL)
        return -ENOMEM;
    *g = *vt;
    g->cmp = NULL;
    if (gr_alloc_to(g, n0) < 0) {
        gr_free(g);
        return -ENOMEM;
    }
    for (uint64_t b = 0; b < n0; b++)
        *gr_bucket(g, b) = cmp_expand(cmp_load(vt, b));
    g->phase = GR_WHOLE;
    g->tail = (uint32_t)gr_cmp_bytes(n0);
    /* the start and the end of a conversion, in one add */
    g->conv_at[0] = 0;
    g->conv_at[1] = 1;
    f->u.gr = g;
    f->shape = 0;
    *room -= add;
    *gp = g;
    return 0;
}
