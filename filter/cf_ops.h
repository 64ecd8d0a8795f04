/*
 * cf_ops.h - what the batched paths (cf_batch.c) take from the one-item
 * paths (private to filter/).
 */
#ifndef CF_OPS_H
#define CF_OPS_H

#include "cf_core.h"

/* cf_add() (nx false: 0 when stored) or cf_add_nx() (1 when added, 0 when
 * present) of a hashed item, or a negative errno. Growth, when the item
 * needs it, takes at most *room bytes. */
CF_HIDDEN int cf_add_hashed(cf_filter_t *f, cf_hash_t hk, bool nx,
                            uint64_t *room);

/* cf_add_many() without nx, for a filter of one table of a fast b = 4
 * shape (CF_WIDTHS): inserts keys[0..) in order as cf_add() would, leaving
 * the filter byte for byte the same, and stores each result in rc[].
 * Returns how many it inserted: n, or fewer when an insert made the filter
 * grow (the caller inserts the rest), or 0 when the filter is not of such
 * a shape. */
CF_HIDDEN size_t cf_add_many_fast(cf_filter_t *f, size_t n,
                                  const void *const *keys, const size_t *lens,
                                  uint64_t *room, int *rc);

#endif /* CF_OPS_H */
