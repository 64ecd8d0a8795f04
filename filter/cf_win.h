/*
 * cf_win.h - the window kind (private to filter/): a filter whose items
 * are forgotten a window after their last add (cf_params_t.window_ms).
 * The design and its arithmetic are docs/design.md's ("Filters with a
 * window"); the public API is cf.h's, and cf_kind.c hands a filter of kind
 * CF_KIND_WIN to the functions here.
 *
 * Slots: 4 per bucket, read as four 16-bit lanes of a 64-bit word. A lane
 * holds a 12-bit fingerprint (bits 0..11; 0 is an empty slot) and a 4-bit
 * stamp (bits 12..15): the slice of the window of the entry's last add,
 * modulo 16. The table stores a bucket in 60 bits, semi-sorted (cf_win.c,
 * "the table's two layouts"). The window is CF_WIN_SLICES slices of slice_ms =
 * ceil(window_ms / CF_WIN_SLICES). A stamp is read against the newest
 * slice the filter stored: the entries' true slices always lie within 16
 * of it, or are doomed by a reclaim pass (cf_win.c, "Reclaim") that a
 * write which would break this starts, so a 4-bit stamp names its slice
 * exactly. An entry is alive while the
 * filter's clock is at most CF_WIN_SLICES slices past its slice; a stale
 * entry answers nothing and its slot is free for the next write that
 * finds it; a sweep reclaims them a few buckets at a time.
 *
 * Indexing: XXH3-64 of the item with the filter's seed; the fingerprint is
 * the hash's low 12 bits (0 taken as 1), the first bucket (h * m) >> 64,
 * the second alt_of() of cf_core.h. A full pair is resolved by a walk of
 * kicks driven by a generator saved with the filter, undone whole when it
 * fails (the filter is then full: -ENOSPC). The filter never grows.
 */
#ifndef CF_WIN_H
#define CF_WIN_H

#include "cf_core.h"

#define CF_WIN_SLICES 8
#define CF_WIN_STAMP_BITS 4
#define CF_WIN_STAMPS (1u << CF_WIN_STAMP_BITS)
#define CF_WIN_FP_BITS 12
/* The longest walk of kicks; its undo log lives on the stack. */
#define CF_WIN_MAX_WALK 512

/* Serialised form: magic "CKW1", version 2 (packed 60-bit buckets), or 1
 * (16-bit lanes as they are) for a filter loaded in that form. */
#define CF_WIN_MAGIC 0x31574B43u
#define CF_WIN_VERSION 2
#define CF_WIN_VERSION_WIDE 1
#define CF_WIN_HDR_LEN 96

/* The kind's state (f->u.win). */
struct cf_win {
    uint8_t *t; /* the buckets (cf_win.c, "the table's two layouts") */
    uint64_t nbuckets, capacity, window_ms, slice_ms;
    uint64_t clock_ms; /* the filter's clock: the latest time it was given */
    uint64_t write_ms; /* the latest time of an add: the clock saved, so
                          that what a replica or a replay rebuilds from
                          the adds' logged times (AT) is the same bytes,
                          and reads, deletes and sweeps change none */
    uint64_t now;      /* clock_ms / slice_ms */
    uint64_t next_ms;  /* where the next slice begins: (now + 1) * slice_ms */
    uint64_t add;      /* the slice the next adds stamp (<= now) */
    uint64_t add_ms;   /* and their time, ms */
    uint64_t newest;   /* the newest slice any entry may have (<= now) */
    uint64_t cursor;   /* the sweep's next bucket */
    /* A reclaim pass (cf_win.c, "reclaim"): after a clock jump past the
     * stamps' range, the entries whose stamps are in doomed_mask are dead
     * in every bucket the pass has not owned yet; owned bit b (the bitmap,
     * allocated at the first pass) equals epoch once bucket b is owned. */
    uint64_t *owned;
    uint64_t reclaim;   /* the pass's next bucket */
    uint64_t doomed;    /* dead entries left in buckets not owned yet */
    uint64_t max_visit; /* the most buckets one call visited */
    uint64_t rng;       /* the kicks' generator */
    uint64_t cnt[CF_WIN_STAMPS]; /* entries by stamp, derived from t */
    uint32_t max_kicks;
    uint32_t alive; /* bit v: stamp v is alive at now */
    uint32_t doomed_mask;
    bool reclaiming;
    bool epoch;
    bool wide; /* version 1's layout: a 64-bit word a bucket */
    /* false once a sweep found no stale entry: none appears before the
     * live stamps change (or data is loaded), so sweeps cost nothing */
    bool maybe_stale;
};

static inline bool cf_is_win(const cf_filter_t *f)
{
    return f->kind == CF_KIND_WIN;
}

/* cf_create() for p->window_ms != 0 (p checked by the caller). */
CF_HIDDEN int cf_win_create(const cf_params_t *p, cf_filter_t **out);
/* An empty window filter (seed 0, no clock yet; wide: version 1's
 * layout), or -ENOMEM when the
 * sizes are out of range or pass max_bytes (0: no cap) or allocation
 * fails. */
CF_HIDDEN int cf_win_new(uint64_t capacity, uint64_t window_ms,
                         uint64_t max_bytes, bool wide, cf_filter_t **out);
/* Buckets and bytes of a window filter of capacity items. */
CF_HIDDEN uint64_t cf_win_buckets_for(uint64_t capacity);
CF_HIDDEN uint64_t cf_win_table_bytes(const cf_params_t *p);

CF_HIDDEN uint64_t cf_win_set_time(cf_filter_t *f, uint64_t now_ms,
                                   uint64_t add_ms);
CF_HIDDEN int cf_win_add(cf_filter_t *f, const void *key, size_t len, bool nx);
CF_HIDDEN bool cf_win_exists(const cf_filter_t *f, const void *key, size_t len);
CF_HIDDEN uint64_t cf_win_count(const cf_filter_t *f, const void *key,
                                size_t len);
CF_HIDDEN int cf_win_del(cf_filter_t *f, const void *key, size_t len);
CF_HIDDEN void cf_win_prefetch(const cf_filter_t *f, const void *key,
                               size_t len);
CF_HIDDEN void cf_win_exists_many(const cf_filter_t *f, size_t n,
                                  const void *const *keys, const size_t *lens,
                                  bool *out);
CF_HIDDEN void cf_win_add_many(cf_filter_t *f, size_t n,
                               const void *const *keys, const size_t *lens,
                               bool nx, int *rc);
CF_HIDDEN uint64_t cf_win_sweep(cf_filter_t *f, uint64_t buckets);
/* Ends a running reclaim pass at once (cf_win.c, "Reclaim"): what the
 * serialised form needs, which has no place for one. The filter answers
 * the same after it; it is const as a value, not as bytes. */
CF_HIDDEN void cf_win_settle(const cf_filter_t *f);
/* Adds (sign 1) or takes off (-1) the entries of the buckets that data
 * bytes [off, off + len) touch from the per-stamp counts. */
CF_HIDDEN void cf_win_count_bytes(cf_filter_t *f, uint64_t off, uint64_t len,
                                  int sign);
CF_HIDDEN void cf_win_stats(const cf_filter_t *f, cf_stats_t *st);
CF_HIDDEN void cf_win_info(const cf_filter_t *f, cf_window_info_t *wi);
CF_HIDDEN uint64_t cf_win_size_bytes(const cf_filter_t *f);
/* Frees the state u.win points to (the struct itself is the caller's). */
CF_HIDDEN void cf_win_release(cf_filter_t *f);

CF_HIDDEN void cf_win_header(const cf_filter_t *f, void *buf);
/* The header at buf (the magic already seen by the caller). */
CF_HIDDEN int cf_win_load_header(const void *buf, size_t len,
                                 const cf_limits_t *lim, cf_filter_t **out,
                                 size_t *used);
CF_HIDDEN uint64_t cf_win_data_len(const cf_filter_t *f);
CF_HIDDEN size_t cf_win_data_view(const cf_filter_t *f, uint64_t off,
                                  size_t max, const void **p);
/* Copies data (any bytes: a slot whose fingerprint is 0 is empty whatever
 * its stamp); -EINVAL when the range is outside the data. */
CF_HIDDEN int cf_win_load_data(cf_filter_t *f, uint64_t off, const void *p,
                               size_t len);

#endif /* CF_WIN_H */
