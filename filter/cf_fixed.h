/*
 * cf_fixed.h - the fixed kind (private to filter/): tables of one shape of
 * cf_shape.h, exactly sized, chained when they grow (nested when the
 * expansion is 2 or more). cf_kind.c hands a filter of kind CF_KIND_FIXED to
 * the functions here; their contracts are cf.h's unless said otherwise.
 *
 * cf_fixed.c: one item at a time, stats; cf_fixed_batch.c: many items;
 * cf_fixed_mem.c: tables, growth, host bytes, sizes; cf_fixed_dump.c:
 * the serialised form (versions 1-3).
 */
#ifndef CF_FIXED_H
#define CF_FIXED_H

#include "cf_alloc.h"
#include "cf_core.h"

CF_HIDDEN int cf_fixed_create(const cf_params_t *p, cf_filter_t **out);
/* Frees the tables and the array of their entries (not the struct). */
CF_HIDDEN void cf_fixed_release(cf_filter_t *f);
/* Frees a filter without host bytes, struct included (a half-made one). */
CF_HIDDEN void cf_fixed_free(cf_filter_t *f);

CF_HIDDEN int cf_fixed_add(cf_filter_t *f, const void *key, size_t len);
CF_HIDDEN int cf_fixed_add_nx(cf_filter_t *f, const void *key, size_t len);
CF_HIDDEN bool cf_fixed_exists(const cf_filter_t *f, const void *key,
                               size_t len);
CF_HIDDEN uint64_t cf_fixed_count(const cf_filter_t *f, const void *key,
                                  size_t len);
CF_HIDDEN int cf_fixed_del(cf_filter_t *f, const void *key, size_t len);
CF_HIDDEN void cf_fixed_prefetch(const cf_filter_t *f, const void *key,
                                 size_t len);
CF_HIDDEN void cf_fixed_stats(const cf_filter_t *f, cf_stats_t *st);
CF_HIDDEN void cf_fixed_exists_many(const cf_filter_t *f, size_t n,
                                    const void *const *keys, const size_t *lens,
                                    bool *out);
/* room is never NULL here (cf_kind.c passes its own "no cap"). */
CF_HIDDEN void cf_fixed_add_many(cf_filter_t *f, size_t n,
                                 const void *const *keys, const size_t *lens,
                                 bool nx, uint64_t *room, int *rc);

CF_HIDDEN uint64_t cf_fixed_size_bytes_at(const cf_filter_t *f, uint32_t nt);
/* Bytes of f's own allocation from f on: the struct and, when it is there,
 * the inline table with its pad (cf_resize_extra()). */
CF_HIDDEN size_t cf_fixed_own_bytes(const cf_filter_t *f);
/* Whether f's first table is inline (it moves with the struct). */
CF_HIDDEN bool cf_fixed_has_inline(const cf_filter_t *f);
/* After the struct moved with an inline first table: points the table's
 * entry at its new bytes. */
CF_HIDDEN void cf_fixed_moved(cf_filter_t *f);

CF_HIDDEN size_t cf_fixed_header_len(const cf_filter_t *f);
CF_HIDDEN void cf_fixed_header_write(const cf_filter_t *f, void *buf);
/* The header at buf (magic and a version 1-3 for the caller to check). */
CF_HIDDEN int cf_fixed_load_header(const void *buf, size_t len,
                                   const cf_limits_t *lim, cf_filter_t **out,
                                   size_t *used);
/* Whether len is the length of a header of this kind (1 to
 * CF_MAX_FILTERS tables). */
CF_HIDDEN bool cf_fixed_is_header_len(size_t len);
CF_HIDDEN uint64_t cf_fixed_data_len(const cf_filter_t *f);
CF_HIDDEN size_t cf_fixed_data_view(const cf_filter_t *f, uint64_t off,
                                    size_t max, const void **p);
CF_HIDDEN int cf_fixed_load_data(cf_filter_t *f, uint64_t off, const void *p,
                                 size_t len);

/* Between the files of the kind. */

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

#endif /* CF_FIXED_H */
