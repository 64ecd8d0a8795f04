/*
 * cf_grow_over.c - the growable form's overflow: copies of an item past
 * what its two buckets hold (eight entries), counted per item.
 *
 * RedisBloom answers an add of a ninth copy of one item by growing a new
 * sub-filter, so a client that adds the same key again and again (a
 * "seen" filter fed every event) never gets an error there while the
 * filter may grow. A growable table cannot help it: splits move an
 * item's copies together. Those copies are counted here instead, by the
 * item's 64-bit hash, in an open-addressed table of (hash, copies) slots
 * that only a filter with such an item allocates.
 *
 * The rules that keep the answers exact:
 * - an add goes here only when both of the item's buckets are full of
 *   entries it matches (the table cannot take it);
 * - a delete of an item with copies here takes one from here first, so
 *   that its entries in the table stay while it has copies anywhere;
 * - a lookup the table answers "no" asks here too (an item whose copies
 *   all came here while its buckets were full of another item's entries
 *   of the same fingerprint has none in the table).
 *
 * Memory: the slot table doubles (from GR_OVER_MIN slots) past half load
 * and never shrinks, like the table. Each doubling is a size change of
 * the filter, numbered with the capacity steps (cf_grow_gen()), and the
 * number of the event it was is kept in at[], so that cf_grow_size_at()
 * can answer for a past generation.
 */
#include <errno.h>

#include "cf_grow_int.h"

#define mem (*cf_mem_allocator())

static uint64_t home(uint64_t h, uint64_t cap)
{
    /* h is the item's hash; its high bits are the least used elsewhere */
    return (h >> 32 ^ h) & (cap - 1);
}

uint64_t gr_over_bytes(uint32_t ndbl)
{
    if (ndbl == 0)
        return 0;
    return sizeof(struct gr_over) + ((uint64_t)GR_OVER_MIN << (ndbl - 1)) * 16;
}

/* The slot holding h, or the free slot where the probe for it ended;
 * cap probes at most (a loaded table may have no free slot). *found
 * tells which; UINT64_MAX when neither. */
static uint64_t probe(const struct gr_over *o, uint64_t h, bool *found)
{
    uint64_t mask = o->cap - 1, i = home(h, o->cap);
    *found = false;
    for (uint64_t n = 0; n < o->cap; n++, i = (i + 1) & mask) {
        const uint64_t *s = o->slots + 2 * i;
        if (s[1] == 0)
            return i;
        if (s[0] == h) {
            *found = true;
            return i;
        }
    }
    return UINT64_MAX;
}

uint64_t gr_over_copies(const struct gr_over *o, uint64_t h)
{
    bool found;
    uint64_t i = probe(o, h, &found);
    return found ? o->slots[2 * i + 1] : 0;
}

/* A table of cap slots holding o's keys (o may be NULL). */
static int rehash(struct cf_grow *g, uint64_t cap)
{
    struct gr_over *o = g->over;
    uint64_t *slots = mem.calloc_fn((size_t)cap, 16);
    if (slots == NULL)
        return -ENOMEM;
    if (o == NULL) {
        o = mem.calloc_fn(1, sizeof(*o));
        if (o == NULL) {
            mem.free_fn(slots);
            return -ENOMEM;
        }
        g->over = o;
    } else {
        for (uint64_t i = 0; i < o->cap; i++) {
            const uint64_t *s = o->slots + 2 * i;
            if (s[1] == 0)
                continue;
            uint64_t j = home(s[0], cap);
            while (slots[2 * j + 1] != 0)
                j = (j + 1) & (cap - 1);
            slots[2 * j] = s[0];
            slots[2 * j + 1] = s[1];
        }
        mem.free_fn(o->slots);
    }
    o->slots = slots;
    o->cap = cap;
    return 0;
}

int gr_over_add(struct cf_grow *g, uint64_t h, uint64_t *room)
{
    struct gr_over *o = g->over;
    bool found = false;
    uint64_t i = o != NULL ? probe(o, h, &found) : UINT64_MAX;
    if (found) {
        if (o->slots[2 * i + 1] == UINT64_MAX)
            return -EOVERFLOW;
        o->slots[2 * i + 1]++;
        return 0;
    }
    if (o == NULL || (o->used + 1) * 2 > o->cap) {
        uint32_t d = o != NULL ? o->ndbl : 0;
        if (d >= GR_OVER_MAX_DBL)
            return -ENOMEM;
        uint64_t add = gr_over_bytes(d + 1) - gr_over_bytes(d);
        if (add > *room)
            return -ENOMEM;
        int rc = rehash(g, (uint64_t)GR_OVER_MIN << d);
        if (rc < 0)
            return rc;
        *room -= add;
        o = g->over;
        o->at[d] = gr_size_events(g);
        o->ndbl = d + 1;
        i = probe(o, h, &found);
    }
    if (i == UINT64_MAX) /* a loaded table with no free slot */
        return -ENOMEM;
    o->slots[2 * i] = h;
    o->slots[2 * i + 1] = 1;
    o->used++;
    return 0;
}

bool gr_over_take(struct gr_over *o, uint64_t h)
{
    bool found;
    uint64_t i = probe(o, h, &found);
    if (!found)
        return false;
    if (--o->slots[2 * i + 1] != 0)
        return true;
    /* the slot is free: later keys of its probe run move back into it
     * when their home is not in the run between */
    uint64_t mask = o->cap - 1, j = i;
    for (uint64_t n = 0; n < o->cap; n++) {
        j = (j + 1) & mask;
        uint64_t *s = o->slots + 2 * j;
        if (s[1] == 0)
            break;
        uint64_t k = home(s[0], o->cap);
        bool stays = i <= j ? (i < k && k <= j) : (i < k || k <= j);
        if (stays)
            continue;
        o->slots[2 * i] = s[0];
        o->slots[2 * i + 1] = s[1];
        s[0] = s[1] = 0;
        i = j;
    }
    o->slots[2 * i] = 0;
    o->used--;
    return true;
}

uint32_t gr_over_dbl_before(const struct cf_grow *g, uint64_t event)
{
    const struct gr_over *o = g->over;
    uint32_t d = 0;
    while (o != NULL && d < o->ndbl && o->at[d] < event)
        d++;
    return d;
}

int gr_over_load(struct cf_grow *g, uint64_t cap, uint64_t used)
{
    if (cap == 0)
        return 0;
    uint32_t d = 1;
    while (((uint64_t)GR_OVER_MIN << (d - 1)) < cap)
        d++;
    int rc = rehash(g, cap);
    if (rc < 0)
        return rc;
    struct gr_over *o = g->over;
    o->used = used;
    o->ndbl = d;
    /* the order of the doublings among the capacity steps is not saved:
     * as if they came after them (only this process's past sizes are
     * ever asked for, and a loaded filter has none) */
    for (uint32_t k = 0; k < d; k++)
        o->at[k] = g->steps + k;
    return 0;
}

void gr_over_free(struct cf_grow *g)
{
    if (g->over == NULL)
        return;
    mem.free_fn(g->over->slots);
    mem.free_fn(g->over);
    g->over = NULL;
}
