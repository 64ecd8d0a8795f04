/*
 * cf_fixed_mem.c - the fixed kind's memory: tables, growth, the inline
 * table that moves with the struct, and sizes.
 */
#include "cf_fixed.h"

#include <errno.h>
#include <sys/mman.h>

#define mem (*cf_mem_allocator())

/* Releases the bytes of table t of f (nothing for the inline one). */
static void table_release(const cf_filter_t *f, const cf_table_t *t)
{
    uint64_t n = tbytes(f, t) + SH(f)->pad;
    if (t->data == NULL || table_inline(f, t))
        return;
    if (cf_table_mapped(n))
        munmap(t->data, (size_t)n);
    else
        mem.free_fn(t->data);
}

/* Appends table number f->nfilters (>= 1) with the given shape: its bytes
 * on their own, its entry in u.arr (made here when the filter was small,
 * from the view tabs[0]). The growth takes at most *room bytes (what is
 * taken comes off it). On failure f is unchanged. */
int cf_table_alloc(cf_filter_t *f, const cf_table_t *tabs, uint64_t nbuckets,
                   uint64_t capacity, uint64_t *room)
{
    const cf_shape_t *sh = SH(f);
    uint64_t bytes = cf_table_bytes(nbuckets, sh->bucket_bits);
    if (bytes == 0 || bytes + sh->pad > SIZE_MAX)
        return -ENOMEM;
    uint64_t n = bytes + sh->pad;
    uint32_t nf = f->nfilters;
    uint64_t entries = (uint64_t)(nf + 1) * sizeof(cf_table_t) -
                       (f->big ? (uint64_t)nf * sizeof(cf_table_t) : 0);
    if (n + entries > *room)
        return -ENOMEM;
    bool mapped = cf_table_mapped(n);
    uint8_t *data =
        mapped ? cf_table_map((size_t)n) : mem.calloc_fn(1, (size_t)n);
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
    arr[nf] =
        (cf_table_t){.data = data, .nbuckets = nbuckets, .capacity = capacity};
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
                                          tabs[0].nbuckets, tabs[0].capacity)))
        return 0;
    return (uint64_t)nt * sizeof(cf_table_t);
}

/* A filter with its first table (nbuckets, capacity; zeroed), inline
 * when small. NULL when out of memory. */
cf_filter_t *cf_filter_new(const cf_params_t *p, uint64_t nbuckets)
{
    const cf_shape_t *sh =
        &cf_shapes[cf_shape_index(p->encoding, p->bucket_size, p->fp_bits)];
    uint64_t bytes = cf_table_bytes(nbuckets, sh->bucket_bits);
    if (bytes == 0 || bytes + sh->pad > SIZE_MAX - sizeof(cf_filter_t))
        return NULL;
    uint64_t n = bytes + sh->pad;
    bool mapped = cf_table_mapped(n);
    cf_filter_t *f =
        mem.calloc_fn(1, (size_t)(sizeof(cf_filter_t) + (mapped ? 0 : n)));
    if (f == NULL)
        return NULL;
    f->shape = (uint16_t)(sh - cf_shapes);
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
    uint8_t *data = arr == NULL ? NULL
                    : mapped    ? cf_table_map((size_t)n)
                                : f->data;
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

int cf_fixed_create(const cf_params_t *p, cf_filter_t **out)
{
    uint64_t nb = cf_buckets_for(p->capacity, p->bucket_size);
    const cf_shape_t *sh =
        &cf_shapes[cf_shape_index(p->encoding, p->bucket_size, p->fp_bits)];
    uint64_t bytes = cf_table_bytes(nb, sh->bucket_bits);
    if (nb == 0 || bytes == 0)
        return -ENOMEM;
    /* a filter too large to be small has an entry of its own */
    uint64_t entry =
        small_fits(!cf_table_mapped(bytes + sh->pad), nb, p->capacity)
            ? 0
            : sizeof(cf_table_t);
    if (p->max_bytes &&
        sizeof(cf_filter_t) + entry + bytes + sh->pad > p->max_bytes)
        return -ENOMEM;
    cf_filter_t *f = cf_filter_new(p, nb);
    if (f == NULL)
        return -ENOMEM;
    /* A filter that grows by more than one table's size grows nested, by
     * the next power of two (as RedisBloom rounds its expansion). */
    if (f->expansion >= 2) {
        uint32_t e = 2;
        while (e < f->expansion)
            e *= 2;
        f->expansion = (uint16_t)e;
        f->nested = 1;
    }
    *out = f;
    return 0;
}

void cf_fixed_free(cf_filter_t *f)
{
    cf_fixed_release(f);
    mem.free_fn(f);
}

void cf_fixed_release(cf_filter_t *f)
{
    cf_table_t one, *tabs = tabs_get(f, &one);
    for (uint32_t k = 0; k < f->nfilters; k++)
        table_release(f, &tabs[k]);
    if (f->big)
        mem.free_fn(f->u.arr);
}

uint64_t cf_fixed_size_bytes_at(const cf_filter_t *f, uint32_t nt)
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

size_t cf_fixed_own_bytes(const cf_filter_t *f)
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

bool cf_fixed_has_inline(const cf_filter_t *f)
{
    cf_table_t one;
    return table_inline(f, tabs_get(f, &one));
}

void cf_fixed_moved(cf_filter_t *f)
{
    /* a small filter's entry has no address to fix */
    if (f->big)
        f->u.arr[0].data = f->data;
}
