/*
 * cf_grow_mem.c - the growable form's memory: buckets in segments under a
 * directory, capacity in steps (cf_grow.h says how they grow), and the
 * sizes a host counts, for the present and for a past generation.
 */
#include "cf_grow_int.h"

#include <errno.h>
#include <sys/mman.h>

#define mem (*cf_mem_allocator())

uint64_t gr_size_of_cap(uint64_t cap)
{
    uint64_t nseg = (cap + CF_GROW_SEG - 1) >> CF_GROW_SEG_SHIFT;
    return sizeof(cf_filter_t) + sizeof(struct cf_grow) + nseg * 8 + cap * 8;
}

uint64_t gr_next_cap(uint64_t cap)
{
    if (cap < CF_GROW_SEG) {
        uint64_t step = cap / 8 < 64 ? 64 : cap / 8;
        return cap + step > CF_GROW_SEG ? CF_GROW_SEG : cap + step;
    }
    /* an eighth of a segment at a time, aligned: a step never spans two
     * segments, and a table just past a segment boundary is not a whole
     * segment larger than it needs */
    const uint64_t step = CF_GROW_SEG / 8;
    return (cap / step + 1) * step;
}

/* Buckets segment k holds when cap buckets are allocated. */
static uint64_t seg_len(uint64_t cap, uint64_t k)
{
    uint64_t lo = k << CF_GROW_SEG_SHIFT;
    if (cap <= lo)
        return 0;
    return cap - lo > CF_GROW_SEG ? CF_GROW_SEG : cap - lo;
}

/* A whole segment is mapped from the kernel when the host allows tables
 * that large to be; a partial one always comes from the allocator, so it
 * can grow with realloc. The same answer at free time. */
static bool seg_mapped(uint64_t n)
{
    return n == CF_GROW_SEG && cf_table_mapped(CF_GROW_SEG * 8);
}

static void seg_free(uint64_t *p, uint64_t n)
{
    if (p == NULL)
        return;
    if (seg_mapped(n))
        munmap(p, (size_t)(n * 8));
    else
        mem.free_fn(p);
}

/* Segment k from old to n buckets (n > old), zeroed past old. */
static int seg_resize(struct cf_grow *g, uint64_t k, uint64_t old, uint64_t n)
{
    if (k >= g->dircap) {
        uint64_t **d = mem.realloc_fn(g->seg, (size_t)(k + 1) * sizeof(*d));
        if (d == NULL)
            return -ENOMEM;
        g->seg = d;
        for (uint64_t i = g->dircap; i <= k; i++)
            d[i] = NULL;
        g->dircap = k + 1;
    }
    uint64_t *p;
    if (seg_mapped(n)) {
        p = (uint64_t *)(void *)cf_table_map((size_t)(n * 8));
        if (p == NULL)
            return -ENOMEM;
        if (old > 0) {
            memcpy(p, g->seg[k], (size_t)(old * 8));
            mem.free_fn(g->seg[k]);
        }
    } else if (old == 0) {
        p = mem.calloc_fn((size_t)n, 8);
        if (p == NULL)
            return -ENOMEM;
    } else if (n == CF_GROW_SEG) {
        /* a segment made whole: a new block, copied, rather than a
         * realloc, whose copy would touch the pages before a host that
         * hints its large blocks for huge pages (the module) could */
        p = mem.malloc_fn((size_t)(n * 8));
        if (p == NULL)
            return -ENOMEM;
        memcpy(p, g->seg[k], (size_t)(old * 8));
        memset(p + old, 0, (size_t)((n - old) * 8));
        mem.free_fn(g->seg[k]);
    } else {
        p = mem.realloc_fn(g->seg[k], (size_t)(n * 8));
        if (p == NULL)
            return -ENOMEM;
        memset(p + old, 0, (size_t)((n - old) * 8));
    }
    g->seg[k] = p;
    return 0;
}

int gr_alloc_to(struct cf_grow *g, uint64_t cap)
{
    for (uint64_t k = g->cap >> CF_GROW_SEG_SHIFT;
         (k << CF_GROW_SEG_SHIFT) < cap; k++) {
        uint64_t old = seg_len(g->cap, k), n = seg_len(cap, k);
        if (n > old) {
            int rc = seg_resize(g, k, old, n);
            if (rc < 0)
                return rc;
            g->cap = (k << CF_GROW_SEG_SHIFT) + n;
        }
    }
    return 0;
}

int gr_cap_step(struct cf_grow *g, uint64_t *room)
{
    uint64_t n = gr_next_cap(g->cap);
    uint64_t add = gr_size_of_cap(n) - gr_size_of_cap(g->cap);
    if (n * 8 > CF_ABS_MAX_BYTES || add > *room)
        return -ENOMEM;
    int rc = gr_alloc_to(g, n);
    if (rc < 0)
        return rc;
    *room -= add;
    g->steps++;
    return 0;
}

void gr_free(struct cf_grow *g)
{
    if (g == NULL)
        return;
    gr_over_free(g);
    if (g->cmp != NULL)
        cf_bytes_free(g->cmp, gr_cmp_bytes(g->n0));
    for (uint64_t k = 0; k < g->dircap; k++)
        seg_free(g->seg[k], seg_len(g->cap, k));
    mem.free_fn(g->seg);
    mem.free_fn(g);
}

void cf_grow_release(cf_filter_t *f)
{
    if (gr_inline(f)) /* nothing but the block the caller frees */
        return;
    gr_free(f->u.gr);
    f->u.gr = NULL;
}

struct cf_pair **cf_grow_pair_slot(const cf_filter_t *f)
{
    return &GR(f)->pair;
}

uint64_t cf_grow_own_bytes(const cf_filter_t *f)
{
    struct cf_grow vt;
    const struct cf_grow *g = gr_get(f, &vt);
    return sizeof(*f) + (gr_inline(f) ? gr_cmp_bytes(g->n0) : g->tail);
}

void cf_grow_free(cf_filter_t *f)
{
    cf_grow_release(f);
    mem.free_fn(f);
}

uint64_t cf_grow_size_bytes(const cf_filter_t *f)
{
    struct cf_grow vt;
    const struct cf_grow *g = gr_get(f, &vt);
    if (gr_inline(f))
        return sizeof(*f) + gr_cmp_bytes(g->n0);
    return gr_size_of_cap(g->cap) + gr_over_bytes(gr_over_ndbl(g)) +
           (g->cmp != NULL ? gr_cmp_bytes(g->n0) : 0) + g->tail;
}

uint32_t cf_grow_gen(const cf_filter_t *f)
{
    struct cf_grow vt;
    return (uint32_t)(gr_size_events(gr_get(f, &vt)) % (CF_RB_GENS - 1)) + 1;
}

/* Whether conversion event k (0: start, 1: end) is among the first e. */
static bool conv_by(const struct cf_grow *g, int k, uint64_t e)
{
    return g->conv_at[k] != GR_EV_BEFORE && g->conv_at[k] < e;
}

uint64_t cf_grow_size_at(const cf_filter_t *f, uint32_t gen)
{
    struct cf_grow vt;
    const struct cf_grow *g = gr_get(f, &vt);
    const uint64_t m = CF_RB_GENS - 1;
    if (gen < 1 || gen > m)
        return cf_grow_size_bytes(f);
    /* the latest step whose generation was gen, replayed from the first
     * capacity: a few hundred steps at most for any size */
    uint64_t ev = gr_size_events(g);
    uint64_t back = (ev % m + m - (gen - 1)) % m;
    /* the current generation (what a host asks after every write) without
     * replaying every step */
    if (back == 0 || back > ev)
        return cf_grow_size_bytes(f);
    uint64_t e = ev - back;
    uint32_t d = gr_over_dbl_before(g, e);
    bool started = g->conv_at[0] == GR_EV_BEFORE ? g->phase != GR_COMPACT
                                                 : conv_by(g, 0, e);
    bool cmp =
        g->conv_at[1] == GR_EV_BEFORE ? g->cmp != NULL : !conv_by(g, 1, e);
    if (!started && g->tail != 0) /* it was inline */
        return sizeof(cf_filter_t) + g->tail;
    uint64_t cap = started ? g->cap_init : 0;
    uint64_t steps = e - d - conv_by(g, 0, e) - conv_by(g, 1, e);
    for (uint64_t s = 0; s < steps; s++)
        cap = gr_next_cap(cap);
    return gr_size_of_cap(cap) + gr_over_bytes(d) +
           (cmp ? gr_cmp_bytes(g->n0) : 0) + g->tail;
}
