/*
 * cf_grow.h - the growable shape (private to filter/): one table that
 * grows in place a bucket at a time (linear hashing), two buckets per
 * lookup at every size, exact deletes. The design and its arithmetic are
 * docs/growth.md's; the public API is cf.h's (cf_params_t.growable), and
 * cf_kind.c hands a filter of kind CF_KIND_GROW to the functions here.
 *
 * Slots: 4 per bucket, 16 bits each, one bucket one 64-bit word. A slot
 * holds a 5-bit tag (bits 11..15) that is never consumed and an 11-bit
 * variable part: L stream bits (L <= 10) below a 1 (the marker). 0 is an
 * empty slot; a used slot has a non-zero variable part (a void: L = 0).
 *
 * The item's 64-bit XXH3 hash h gives the tag (h & 31), the base bucket
 * j0 = (h * n0) >> 64 and the stream s0 = h >> 5; side 1 is
 * (alt(j0), s0 ^ G(tag)). A side (j, s) lives in bucket j + n0 * (s mod
 * 2^level), plus n0 << level when that is below the split pointer and bit
 * `level` of s is set. The filter's state: n0, level, split, the entry
 * count, the kick generator and a one-entry stash, all serialised, so a
 * filter loaded from a dump (a replica, an AOF replay) makes the same
 * choices as the one that was dumped.
 *
 * Memory: buckets in segments of CF_GROW_SEG buckets under a directory
 * (the host's allocator, or mapped from the kernel for whole segments when
 * cf_set_map_min() allows it). The capacity grows in steps: by an eighth
 * (at least 64 buckets) while the table is under one segment, then by an
 * eighth of a segment; each step changes one segment, so no step copies
 * more than one segment (a whole segment may move from the allocator to
 * a kernel mapping when it fills). Sizes are a function of the number of steps,
 * so cf_size_bytes_at() can answer for a past generation.
 */
#ifndef CF_GROW_H
#define CF_GROW_H

#include "cf_core.h"

#define CF_GROW_TAG_BITS 5
#define CF_GROW_STORED_BITS 10 /* stream bits of a new entry */
#define CF_GROW_TARGET 8500    /* split past this load, per 10,000 slots */
#define CF_GROW_CMP_LOAD 9400  /* the compact table's load at the reserve */
#define CF_GROW_SEG_SHIFT 18   /* 2^18 buckets of 8 bytes: 2 MiB */
#define CF_GROW_SEG (1ull << CF_GROW_SEG_SHIFT)

/* Header of the serialised form, bytes: version 4 (filters made before
 * the compact phase, which write it still) and version 5. */
#define CF_GROW_HDR_LEN 128
#define CF_GROW_HDR5_LEN 144

/* f->shape of a growable filter: 0, GR_SHAPE_INLINE (cf_grow_int.h) or
 * the first table of a pair (cf_pair.h), never inline. */
#define CF_GROW_SHAPE_PAIR 2

/* What a header loads as (cf_grow_load_part()): a filter alone (the pair
 * flag clear, inline when it can be), the first table of a pair (the flag
 * set) or its second (clear; neither of a pair is inline). */
enum cf_grow_role { CF_GROW_ALONE, CF_GROW_FIRST, CF_GROW_SECOND };

static inline bool cf_is_grow(const cf_filter_t *f)
{
    return f->kind == CF_KIND_GROW;
}

/* cf_create() for p->growable (p checked by the caller). */
CF_HIDDEN int cf_grow_create(const cf_params_t *p, cf_filter_t **out);
/* Bytes of a new growable filter made from p (cf_params_table_bytes()). */
CF_HIDDEN uint64_t cf_grow_initial_bytes(const cf_params_t *p);

CF_HIDDEN int cf_grow_add(cf_filter_t *f, const void *key, size_t len, bool nx,
                          uint64_t *room);
CF_HIDDEN bool cf_grow_exists(const cf_filter_t *f, const void *key,
                              size_t len);
CF_HIDDEN uint64_t cf_grow_count(const cf_filter_t *f, const void *key,
                                 size_t len);
CF_HIDDEN int cf_grow_del(cf_filter_t *f, const void *key, size_t len);
CF_HIDDEN void cf_grow_prefetch(const cf_filter_t *f, const void *key,
                                size_t len);
CF_HIDDEN void cf_grow_exists_many(const cf_filter_t *f, size_t n,
                                   const void *const *keys, const size_t *lens,
                                   bool *out);
CF_HIDDEN void cf_grow_add_many(cf_filter_t *f, size_t n,
                                const void *const *keys, const size_t *lens,
                                bool nx, uint64_t *room, int *rc);
CF_HIDDEN void cf_grow_stats(const cf_filter_t *f, cf_stats_t *st);

/* Memory held, struct included (host bytes excluded). */
CF_HIDDEN uint64_t cf_grow_size_bytes(const cf_filter_t *f);
/* cf_nfilters() / cf_size_bytes_at() of this form: a generation number of
 * the size (1..127, it changes whenever the size does), and the size a
 * generation had, exact for the last 126 changes. */
CF_HIDDEN uint32_t cf_grow_gen(const cf_filter_t *f);
CF_HIDDEN uint64_t cf_grow_size_at(const cf_filter_t *f, uint32_t gen);
/* The bytes of the filter's own block from its struct on (the struct and
 * what follows it: an inline table, cf_resize_extra()). */
CF_HIDDEN uint64_t cf_grow_own_bytes(const cf_filter_t *f);
/* Frees the state u.gr points to (the struct itself is the caller's). */
CF_HIDDEN void cf_grow_release(cf_filter_t *f);
/* Frees a filter without host bytes, struct included (a half-made one). */
CF_HIDDEN void cf_grow_free(cf_filter_t *f);

CF_HIDDEN size_t cf_grow_header_len(const cf_filter_t *f);
CF_HIDDEN void cf_grow_header(const cf_filter_t *f, void *buf);
/* The header at buf (magic and version 4 or 5 already seen by the
 * caller). */
CF_HIDDEN int cf_grow_load_header(const void *buf, size_t len,
                                  const cf_limits_t *lim, cf_filter_t **out,
                                  size_t *used);
/* cf_grow_load_header() of one role; the pair flag must be as it says. */
CF_HIDDEN int cf_grow_load_part(const void *buf, size_t len,
                                const cf_limits_t *lim, enum cf_grow_role role,
                                cf_filter_t **out, size_t *used);
/* Whether buf (at least 16 bytes of a version 5 header) has the pair flag. */
CF_HIDDEN bool cf_grow_is_pair_header(const void *buf);
/* Where the first table of a pair keeps the rest of it (cf_pair.c). */
CF_HIDDEN struct cf_pair **cf_grow_pair_slot(const cf_filter_t *f);
CF_HIDDEN uint64_t cf_grow_data_len(const cf_filter_t *f);
CF_HIDDEN size_t cf_grow_data_view(const cf_filter_t *f, uint64_t off,
                                   size_t max, const void **p);
/* Copies data; -EINVAL when the range is outside the data or a slot it
 * completes has a tag but no marker (no entry is ever stored so). */
CF_HIDDEN int cf_grow_load_data(cf_filter_t *f, uint64_t off, const void *p,
                                size_t len);

/* For the benchmark and the tests: buckets in use and the counters of the
 * growth (not part of cf.h's contract). */
typedef struct cf_grow_info {
    uint64_t n0, level, split, nbuckets, entries, voids, forced, stashed;
} cf_grow_info_t;
CF_HIDDEN void cf_grow_info(const cf_filter_t *f, cf_grow_info_t *gi);
/* The two buckets a lookup of key reads, in b[0] and b[1]: the only
 * memory of the table it touches. */
CF_HIDDEN void cf_grow_buckets(const cf_filter_t *f, const void *key,
                               size_t len, uint64_t b[2]);

#endif /* CF_GROW_H */
