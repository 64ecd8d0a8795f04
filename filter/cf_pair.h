/*
 * cf_pair.h - the growable pair (private to filter/): a filter whose rate
 * is tighter than one growable table keeps at every size (an ERROR under
 * CF_GROW_MIN_RATE) is two growable tables with independent hashes, every
 * item in both. A lookup is present only when both answer present, so the
 * false-positive rate is the product of theirs: at most 0.25% each after
 * 1000x growth, 6.3e-6 together (docs/growth.md, "Rates under 0.005").
 *
 * The first table is the filter itself (kind CF_KIND_GROW, shape
 * CF_GROW_SHAPE_PAIR, never inline); its state points at the second
 * table and a record of the pair's sizes (cf_nfilters()/cf_size_bytes_at()
 * answer for both). The second table's seed follows from the first's.
 * cf_kind.c hands a pair's filter here instead of to cf_grow.h.
 *
 * Serialised: the first table's version 5 header with the pair flag, then
 * the second table's header (CF_PAIR_HDR_LEN bytes in all), then the
 * first table's data and the second's.
 */
#ifndef CF_PAIR_H
#define CF_PAIR_H

#include "cf_grow.h"

#define CF_PAIR_HDR_LEN (2 * CF_GROW_HDR5_LEN)

static inline bool cf_is_pair(const cf_filter_t *f)
{
    return f->kind == CF_KIND_GROW && f->shape == CF_GROW_SHAPE_PAIR;
}

/* cf_create() for p->growable == CF_GROWABLE_PAIR (p checked). */
CF_HIDDEN int cf_pair_create(const cf_params_t *p, cf_filter_t **out);

CF_HIDDEN int cf_pair_add(cf_filter_t *f, const void *key, size_t len, bool nx,
                          uint64_t *room);
CF_HIDDEN bool cf_pair_exists(const cf_filter_t *f, const void *key,
                              size_t len);
CF_HIDDEN uint64_t cf_pair_count(const cf_filter_t *f, const void *key,
                                 size_t len);
CF_HIDDEN int cf_pair_del(cf_filter_t *f, const void *key, size_t len);
CF_HIDDEN void cf_pair_prefetch(const cf_filter_t *f, const void *key,
                                size_t len);
CF_HIDDEN void cf_pair_exists_many(const cf_filter_t *f, size_t n,
                                   const void *const *keys, const size_t *lens,
                                   bool *out);
CF_HIDDEN void cf_pair_add_many(cf_filter_t *f, size_t n,
                                const void *const *keys, const size_t *lens,
                                bool nx, uint64_t *room, int *rc);
CF_HIDDEN void cf_pair_stats(const cf_filter_t *f, cf_stats_t *st);
CF_HIDDEN uint64_t cf_pair_size_bytes(const cf_filter_t *f);
CF_HIDDEN uint32_t cf_pair_gen(const cf_filter_t *f);
CF_HIDDEN uint64_t cf_pair_size_at(const cf_filter_t *f, uint32_t gen);
/* Frees the second table and the pair's record (then cf_grow_release()
 * frees the first table's state). */
CF_HIDDEN void cf_pair_release(cf_filter_t *f);

CF_HIDDEN void cf_pair_header(const cf_filter_t *f, void *buf);
/* A header whose first part has the pair flag (cf_grow_is_pair_header()). */
CF_HIDDEN int cf_pair_load_header(const void *buf, size_t len,
                                  const cf_limits_t *lim, cf_filter_t **out,
                                  size_t *used);
CF_HIDDEN uint64_t cf_pair_data_len(const cf_filter_t *f);
CF_HIDDEN size_t cf_pair_data_view(const cf_filter_t *f, uint64_t off,
                                   size_t max, const void **p);
CF_HIDDEN int cf_pair_load_data(cf_filter_t *f, uint64_t off, const void *p,
                                size_t len);

/* The second table (for the tests and the benchmarks). */
CF_HIDDEN const cf_filter_t *cf_pair_second(const cf_filter_t *f);

#endif /* CF_PAIR_H */
