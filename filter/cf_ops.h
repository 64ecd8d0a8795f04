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

#endif /* CF_OPS_H */
