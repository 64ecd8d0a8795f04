/*
 * cf_mem.h - a filter's memory (private to filter/): the allocator, tables
 * mapped from the kernel, and growth.
 */
#ifndef CF_MEM_H
#define CF_MEM_H

#include "cf_alloc.h"
#include "cf_core.h"

/* A filter with its first table (nbuckets, capacity; zeroed), inline
 * when small. NULL when out of memory. */
CF_HIDDEN cf_filter_t *cf_filter_new(const cf_params_t *p, uint64_t nbuckets);

/* Appends table number f->nfilters (>= 1) with the given shape: its bytes
 * on their own, its entry in u.arr (made here when the filter was small,
 * from the view tabs[0]). The growth takes at most *room bytes (what is
 * taken comes off it). On failure (-ENOMEM) f is unchanged. */
CF_HIDDEN int cf_table_alloc(cf_filter_t *f, const cf_table_t *tabs,
                             uint64_t nbuckets, uint64_t capacity,
                             uint64_t *room);

#endif /* CF_MEM_H */
