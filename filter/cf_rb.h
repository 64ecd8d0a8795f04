/*
 * cf_rb.h - the RedisBloom form of a filter (private to filter/): a filter
 * imported from RedisBloom 2.x's CF.SCANDUMP chunks that keeps its hash,
 * fingerprints, bucket indexing, chain of sub-filters, growth, deletion and
 * compaction, so it answers exactly as it did in RedisBloom. It is not
 * converted to the core's own forms: that would need the items.
 *
 * Such a filter is a cf_filter_t of kind CF_KIND_RB whose u.rb points to
 * the state below; cf_kind.c hands it to the functions here.
 * The contracts are cf.h's unless said otherwise.
 */
#ifndef CF_RB_H
#define CF_RB_H

#include "cf_core.h"

static inline bool cf_is_rb(const cf_filter_t *f)
{
    return f->kind == CF_KIND_RB;
}

CF_HIDDEN int cf_rb_add(cf_filter_t *f, const void *key, size_t len, bool nx,
                        uint64_t *room);
CF_HIDDEN bool cf_rb_exists(const cf_filter_t *f, const void *key, size_t len);
CF_HIDDEN uint64_t cf_rb_count(const cf_filter_t *f, const void *key,
                               size_t len);
CF_HIDDEN int cf_rb_del(cf_filter_t *f, const void *key, size_t len);
CF_HIDDEN void cf_rb_prefetch(const cf_filter_t *f, const void *key,
                              size_t len);
CF_HIDDEN void cf_rb_stats(const cf_filter_t *f, cf_stats_t *st);
/* Memory held, struct included (host bytes excluded). */
CF_HIDDEN uint64_t cf_rb_size_bytes(const cf_filter_t *f);
/* cf_nfilters() / cf_size_bytes_at() of this form: a generation number of
 * its size (1..CF_RB_GENS-1), which changes whenever the size does, and
 * the size a generation had, so that a host's byte keeps its accounting
 * exact although compaction shrinks the chain. */
#define CF_RB_GENS 128
CF_HIDDEN uint32_t cf_rb_gen(const cf_filter_t *f);
CF_HIDDEN uint64_t cf_rb_size_at(const cf_filter_t *f, uint32_t gen);
/* Frees the state u.rb points to (the struct itself is the caller's). */
CF_HIDDEN void cf_rb_release(cf_filter_t *f);
/* cf_compact() of this form. */
CF_HIDDEN void cf_rb_compact(cf_filter_t *f);

/* Serialisation inside the project (snapshots, RDB, DUMP): a header of
 * CF_RB_WRAP_LEN bytes (magic "CKR1", a version, RedisBloom's header, an
 * XXH3-64) followed by the same data as RedisBloom's chunks. */
#define CF_RB_MAGIC 0x31524B43u /* "CKR1" */
#define CF_RB_WRAP_LEN 56
CF_HIDDEN void cf_rb_header_wrap(const cf_filter_t *f, void *buf);
CF_HIDDEN int cf_rb_load_wrap(const void *buf, size_t len,
                              const cf_limits_t *lim, cf_filter_t **out,
                              size_t *used);
CF_HIDDEN uint64_t cf_rb_data_len(const cf_filter_t *f);
CF_HIDDEN size_t cf_rb_data_view(const cf_filter_t *f, uint64_t off, size_t max,
                                 const void **p);
CF_HIDDEN int cf_rb_load_data(cf_filter_t *f, uint64_t off, const void *p,
                              size_t len);

#endif /* CF_RB_H */
