/*
 * cf.h - the cuckoo filter core: partial-key cuckoo hashing (Fan, Andersen,
 * Kaminsky, Mitzenmacher, CoNEXT 2014) with exactly sized tables, chained
 * growth and a chunked, validated serialisation.
 *
 * Contract:
 *  - C11 with GNU extensions (unsigned __int128, __builtin_prefetch,
 *    __builtin_ctzll: GCC or Clang), xxHash, and anonymous mmap() for large
 *    tables (cf_set_map_min()), hinted with Linux's
 *    madvise(MADV_HUGEPAGE) where it exists. No I/O, no threads; no global
 *    state apart from the allocator (cf_set_allocator(), cf_set_map_min()).
 *    A filter may be
 *    read by several threads at once; writers need exclusive access.
 *  - Allocation happens only in cf_create(), on growth inside the add
 *    functions, and in cf_load_header(). Lookups never allocate.
 *  - int functions return 0 (or a documented positive value) on success and a
 *    negative errno on failure: -EINVAL (bad argument or encoding),
 *    -ENOMEM (allocation failed or a size limit was exceeded),
 *    -ENOSPC (filter full and expansion is 0),
 *    -EOVERFLOW (full and the maximum number of sub-filters is reached).
 *  - Serialised form is little-endian and versioned (see cf_fixed_dump.c and
 * cf_grow_dump.c).
 */
#ifndef CF_H
#define CF_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct cf_filter cf_filter_t; /* opaque */

#define CF_MAX_BUCKET_SIZE 255
#define CF_MAX_KICKS 65535
#define CF_MAX_EXPANSION 32768
#define CF_DEFAULT_MAX_FILTERS 32
#define CF_MAX_FILTERS 64 /* absolute cap on sub-filters, also for loads */

/* Bucket encodings. Plain: every fingerprint stored as it is (8, 12 or 16
 * bits, any bucket size). Semi-sorted (the paper's ss-CF, bucket size 4
 * only): the four 4-bit prefixes of a bucket's fingerprints are kept sorted
 * and stored as one 12-bit index into the 3,876 sorted multisets, beside the
 * four remaining suffixes; with 9, 13 or 17-bit fingerprints a bucket is
 * exactly 32, 48 or 64 bits, one bit per item less than a plain fingerprint
 * of the same width would take. */
#define CF_ENC_PLAIN 0
#define CF_ENC_SEMISORTED 1

typedef struct cf_params {
    uint64_t capacity;    /* items the first table holds; >= 1 */
    uint32_t bucket_size; /* slots per bucket, 1..255 */
    uint32_t fp_bits;     /* fingerprint width: 8, 12 or 16 plain;
                             9, 13 or 17 semi-sorted */
    uint32_t max_kicks;   /* relocations before an insert fails, 1..65535 */
    uint32_t expansion;   /* growth factor; 0 = never grow */
    uint32_t max_filters; /* sub-filter cap, 1..CF_MAX_FILTERS */
    uint64_t seed;        /* hash seed; stored with the filter */
    uint64_t max_bytes;   /* cap on the new filter's memory (cf_create()
                             fails with -ENOMEM past it); 0 = no cap.
                             Growth is capped per call: cf_add_many() */
    uint32_t encoding;    /* CF_ENC_PLAIN (0) or CF_ENC_SEMISORTED (bucket
                             size 4 only) */
    uint32_t growable;    /* 1: the growable shape (docs/growth.md): one
                             table that grows in place a bucket at a time,
                             two buckets per lookup at any size, exact
                             deletes; bucket size 4 only, 16-bit slots
                             (fp_bits and encoding are checked but not
                             used), no sub-filters (max_filters is only
                             reported), grows whatever expansion says
                             (reported too), and relocates up to its own
                             bound of kicks before it splits buckets
                             ahead of time. CF_GROWABLE_PAIR: two such
                             tables with independent hashes, every item in
                             both (a rate one table cannot keep while it
                             grows). 0: the fixed shapes. */
    uint64_t window_ms;   /* 0: items stay until deleted. Else the window
                             kind (docs/design.md): an item is present
                             until at least window_ms after its last add
                             and gone at most the slack (cf_window_info())
                             after that; bucket size 4, 12-bit
                             fingerprints (fp_bits and encoding are checked
                             but not used), never grows (expansion and
                             max_filters are not used), growable 0. At
                             most CF_MAX_WINDOW_MS. */
} cf_params_t;

#define CF_GROWABLE_PAIR 2

#define CF_MAX_WINDOW_MS (1ull << 42) /* about 139 years */

/* The allocator every filter uses for its memory: malloc/calloc/realloc/
 * free-like functions with libc's contracts (calloc zeroes; realloc keeps
 * the contents; free accepts NULL). */
typedef struct cf_allocator {
    void *(*malloc_fn)(size_t size);
    void *(*calloc_fn)(size_t n, size_t size);
    void *(*realloc_fn)(void *p, size_t size);
    void (*free_fn)(void *p);
} cf_allocator_t;

/* Installs a (copied) as the allocator of every filter from now on; NULL
 * restores libc's. With libc's allocator tables of 2 MiB and more are
 * mapped from the kernel directly (huge pages); with a host's allocator
 * every byte, tables included, comes from a, so the host can count it.
 * Process-wide, the one piece of global state of the core: call it once,
 * before any filter exists and from one thread; a filter must be freed
 * under the allocator it was made with. */
void cf_set_allocator(const cf_allocator_t *a);

/* Tables of min bytes and more are mapped from the kernel directly, with a
 * huge-page hint, whatever the allocator; smaller ones come from the
 * allocator. 0 maps none. cf_set_allocator() resets it: to 2 MiB for libc's
 * allocator, to 0 for a host's. A host that counts every byte itself leaves
 * it at 0; one whose allocator keeps its own counts may map large tables so
 * that they keep huge pages and go back to the kernel the moment they are
 * freed. Same rules as cf_set_allocator(): once, before any filter exists. */
void cf_set_map_min(size_t min);

/* Fills *p with the project's defaults: bucket size 4, 12-bit plain
 * fingerprints, 500 kicks, expansion 1, 32 sub-filters, seed 0, no byte
 * cap. The caller sets capacity. */
void cf_params_default(cf_params_t *p);

/* Checks p without allocating. 0 or -EINVAL. */
int cf_params_check(const cf_params_t *p);

/* Bytes the first table of a filter with params p would take (table memory
 * only, rounded as allocated); 0 when p is invalid or the size overflows. */
uint64_t cf_params_table_bytes(const cf_params_t *p);

/* On success returns 0 and stores a new filter in *out; the caller owns it
 * and releases it with cf_free(). Returns -EINVAL or -ENOMEM otherwise. */
int cf_create(const cf_params_t *p, cf_filter_t **out);
void cf_free(cf_filter_t *f); /* NULL is fine */

/* Inserts one copy of key (duplicates are not detected). 0 when stored,
 * -ENOSPC / -EOVERFLOW / -ENOMEM when it was not; the filter is unchanged
 * then apart from an internal relocation that loses nothing. */
int cf_add(cf_filter_t *f, const void *key, size_t len);

/* 1 when added, 0 when key (or a colliding fingerprint) was already present,
 * or a negative errno as cf_add(). */
int cf_add_nx(cf_filter_t *f, const void *key, size_t len);

/* true when key may be present; false when it certainly is not. */
bool cf_exists(const cf_filter_t *f, const void *key, size_t len);

/* Number of stored copies of key's fingerprint in its buckets (an upper bound
 * on the copies of key). */
uint64_t cf_count(const cf_filter_t *f, const void *key, size_t len);

/* Removes one copy: 1 when one was removed, 0 when none was found. */
int cf_del(cf_filter_t *f, const void *key, size_t len);

/* Starts loading the buckets key would probe into the cache and returns at
 * once: a hint for a lookup or insert of key soon after, so that the misses
 * of many items (a pipeline of commands) overlap. */
void cf_prefetch(const cf_filter_t *f, const void *key, size_t len);

/* Starts loading f itself into the cache without reading it: the struct,
 * the line of host bytes before it and, for a small filter, its inline
 * table, so that a host that just found the address reads its record, the
 * struct and the table in one memory round trip instead of one after the
 * other. */
void cf_prefetch_filter(const cf_filter_t *f);

/* Batched lookup: out[i] = cf_exists(f, keys[i], lens[i]) for i < n. Hashes
 * and prefetches a window of items before probing any. */
void cf_exists_many(const cf_filter_t *f, size_t n, const void *const *keys,
                    const size_t *lens, bool *out);

/* Batched insert: rc[i] = cf_add() or cf_add_nx() (nx true) of item i, in
 * order, with the same window of prefetches. The tables the call adds take
 * at most *room bytes in all, and what they take comes off *room (NULL: no
 * cap of the caller's): an item that would need a table past it gets
 * -ENOMEM and changes nothing. A host passes what its memory bound leaves,
 * and the same room to the next call of one command. cf_add() and
 * cf_add_nx() grow without a cap of the caller's. */
void cf_add_many(cf_filter_t *f, size_t n, const void *const *keys,
                 const size_t *lens, bool nx, uint64_t *room, int *rc);

typedef struct cf_stats {
    uint64_t size_bytes; /* memory held: struct + every table */
    uint64_t nbuckets;   /* over every sub-filter */
    uint64_t nfilters;
    uint64_t items;    /* current number of stored fingerprints */
    uint64_t deleted;  /* total successful deletions */
    uint64_t capacity; /* sum of sub-filter capacities */
    uint32_t bucket_size;
    uint32_t fp_bits;
    uint32_t expansion;
    uint32_t max_kicks;
    uint32_t max_filters;
    uint64_t seed;
    uint32_t encoding; /* CF_ENC_* */
    uint32_t form;     /* CF_FORM_* */
} cf_stats_t;

/* A filter's form: the core's own, or one imported from RedisBloom
 * (cf_load_rb_header()). For the RedisBloom form cf_stats() gives
 * RedisBloom's own CF.INFO figures: size_bytes is its Size (its structs
 * and slots), nbuckets the first sub-filter's buckets, capacity the slots
 * of every sub-filter; fp_bits is 8 and seed 0. */
#define CF_FORM_NATIVE 0
#define CF_FORM_REDISBLOOM 1
/* The growable shape (cf_params_t.growable): nfilters is 1, nbuckets the
 * buckets in use, capacity the capacity asked for until the table first
 * splits, then what its buckets hold at the load where it splits, fp_bits 15
 * (the tag and the stream bits a new entry compares; older entries compare
 * fewer). For this form cf_nfilters() is a generation number of the size, as
 * for RedisBloom's form. */
#define CF_FORM_GROWABLE 2
/* The window kind (cf_params_t.window_ms): nfilters 1, items the live
 * entries, fp_bits 12, expansion 0; cf_window_info() tells the rest. */
#define CF_FORM_WINDOW 3
/* The growable pair (CF_GROWABLE_PAIR): the growable form's figures of
 * its first table, but size_bytes and nbuckets of both tables, and fp_bits
 * the sum of both tables' (an absent item must match both). */
#define CF_FORM_GROWABLE_PAIR 4

void cf_stats(const cf_filter_t *f, cf_stats_t *st);

/* stats.size_bytes alone: the struct (40 bytes, which hold a small
 * filter's one table entry, and the table itself unless it is large enough
 * to be mapped on its own), the array of table entries once the filter
 * grew (or was made too large to be small), and every table with its
 * padding. Takes at most CF_MAX_FILTERS steps. */
uint64_t cf_size_bytes(const cf_filter_t *f);

/*
 * Time, for the window kind; every other kind ignores it. A window
 * filter has its own clock, the latest time (unix milliseconds) it was
 * given; lookups and writes answer for that clock, so a host gives the
 * time before each command on a filter. cf_set_time() moves the clock to
 * now_ms (never back: an older now_ms leaves it) and makes add_ms (capped
 * at the clock: UINT64_MAX for the clock itself) the time the following
 * adds give their items, so that a replayed add keeps the time of the
 * original (an add whose time is already more than the window and its
 * slack in the past stores nothing and succeeds). Returns that time (0
 * for other kinds).
 */
uint64_t cf_set_time(cf_filter_t *f, uint64_t now_ms, uint64_t add_ms);

/* true for a filter with a window (one that needs the time). */
bool cf_is_window(const cf_filter_t *f);

typedef struct cf_window_info {
    uint64_t window_ms; /* as created */
    uint64_t slice_ms;  /* the unit of an entry's age */
    uint64_t slack_ms;  /* an item is gone at most this long after its
                           window: (slices + 1) * slice_ms - window_ms */
    uint64_t clock_ms;  /* the filter's clock */
    uint64_t live;      /* entries alive at the clock */
    uint64_t stale;     /* entries past their window, slots not yet
                           reclaimed */
    uint64_t max_visit; /* the most buckets one sweep, write or delete
                           visited since the filter was made or loaded
                           (for tests: no call passes the whole table) */
} cf_window_info_t;

/* Fills *wi and returns true for a window filter; false otherwise. */
bool cf_window_info(const cf_filter_t *f, cf_window_info_t *wi);

/* Reclaims the slots of stale entries in the next `buckets` buckets of
 * a window filter (a cursor goes round the table) and returns how many
 * it freed; 0 for every other kind. A host calls it from its cron so
 * that stale slots come back without a pause proportional to the
 * filter; answers never depend on it. */
uint64_t cf_sweep(cf_filter_t *f, uint64_t buckets);

/* Host bytes: room a host may keep right BEFORE a filter, in the filter's
 * own allocation, so that a small filter and the host's record of it (a
 * key, a link) cost one allocation instead of two, and the record shares a
 * cache line with the struct. They end at the filter's address: the host
 * finds them at (uint8_t *)f - n. A filter from cf_create() or
 * cf_load_header() has none. cf_resize_extra() changes have (what f has
 * now) to n, both multiples of CF_EXTRA_ALIGN (-EINVAL otherwise), and may
 * move the filter: on 0, *f is the filter's new address and every pointer
 * to the old one is stale; on -ENOMEM nothing changed. What the host bytes
 * hold afterwards is unspecified: the host writes them again. They are not
 * part of cf_size_bytes() and never serialised. A filter with host bytes
 * is freed with cf_free_extra(f, n), never cf_free(). Growth, lookups and
 * cf_load_data() leave them alone and never move a filter. */
#define CF_EXTRA_ALIGN 8
int cf_resize_extra(cf_filter_t **f, size_t have, size_t n);
void cf_free_extra(cf_filter_t *f, size_t have);

/* Tables f has (1 for a filter that never grew), and what
 * cf_size_bytes() answered when it had only its first n of them
 * (1 <= n <= cf_nfilters(f); tables are only ever added), so that a host
 * can remember what it counted for a filter in a byte. */
uint32_t cf_nfilters(const cf_filter_t *f);
uint64_t cf_size_bytes_at(const cf_filter_t *f, uint32_t n);

/* Upper bound of the false-positive rate for one lookup in one table:
 * 2b / (2^fp_bits - 1), for either encoding (a semi-sorted bucket stores
 * its fingerprints whole, only in fewer bits). */
double cf_error_bound(uint32_t bucket_size, uint32_t fp_bits);

/* Smallest of 8, 12, 16 whose bound meets rate, or 0 if none does or rate is
 * not in (0, 1). Plain encodings only; see cf_params_for_error_rate(). */
uint32_t cf_fp_bits_for_rate(uint32_t bucket_size, double rate);

/* Sets p->fp_bits and p->encoding to the encoding that takes the fewest bits
 * per item among those whose bound (cf_error_bound) meets rate, at bucket
 * size p->bucket_size: plain 8, 12, 16 bits, and at bucket size 4 also
 * semi-sorted 9, 13, 17 bits (8, 12, 16 bits per slot). Of two encodings of
 * the same size the plain one is taken, so a rate that plain fingerprints
 * met before keeps its width; e.g. at b = 4, 0.01 gives plain 12, 0.001
 * semi-sorted 13, 0.0001 semi-sorted 17. Returns 0, or -EINVAL (p
 * unchanged) when rate is not in (0, 1) or nothing meets it. */
int cf_params_for_error_rate(cf_params_t *p, double rate);

/* Bits one slot of an encoding takes in a table: fp_bits plain, fp_bits - 1
 * semi-sorted. */
uint32_t cf_slot_bits(uint32_t encoding, uint32_t fp_bits);

/* "plain" or "semi-sorted" (a static string; "unknown" otherwise). */
const char *cf_encoding_name(uint32_t encoding);

/*
 * Serialisation. A filter is encoded as a header (parameters, counters and
 * the shape of every sub-filter) followed by the data: the raw tables of every
 * sub-filter, concatenated, cf_data_len() bytes in all. Both can be produced
 * and consumed in pieces of any size, so SCANDUMP/LOADCHUNK and snapshots
 * stream them without building a copy.
 */

/* Largest header of any filter (CF_MAX_FILTERS sub-filters), so a caller
 * can write one into a buffer of its own without allocating. */
#define CF_HEADER_MAX (56 + CF_MAX_FILTERS * 32 + 8)

/* Length of the header of f, at most CF_HEADER_MAX. */
size_t cf_header_len(const cf_filter_t *f);
/* Writes the header into buf, which has room for cf_header_len(f) bytes. */
void cf_header_write(const cf_filter_t *f, void *buf);
/* Total bytes of data. */
uint64_t cf_data_len(const cf_filter_t *f);
/* Points *p at the data starting at off and returns how many contiguous
 * bytes from there may be read (at most max); 0 at or past the end. */
size_t cf_data_view(const cf_filter_t *f, uint64_t off, size_t max,
                    const void **p);

typedef struct cf_limits {
    uint64_t max_bytes; /* largest total table memory a header may ask for;
                           0 = no cap */
} cf_limits_t;

/* Parses an untrusted header from buf (len bytes). On success stores in *out
 * a new filter whose tables are zeroed (empty) and awaiting data, and in
 * *used the number of header bytes consumed. -EINVAL for a malformed header,
 * -ENOMEM when it asks for more than lim allows or allocation fails. */
int cf_load_header(const void *buf, size_t len, const cf_limits_t *lim,
                   cf_filter_t **out, size_t *used);

/* true when len is the length of some header chunk: RedisBloom's
 * (CF_RB_HEADER_LEN) or one that cf_header_len() gives for some filter.
 * As RedisBloom judges a first chunk by its length alone, a chunk of such
 * a length that does not load is a header whose numbers cannot make a
 * filter, and a chunk of any other length is no header at all. */
bool cf_is_header_len(size_t len);

/* Copies len bytes of data to offset off. -EINVAL if the range does not lie
 * within [0, cf_data_len()). Any bytes are accepted: a filter loaded from
 * garbage answers queries wrongly but safely. */
int cf_load_data(cf_filter_t *f, uint64_t off, const void *p, size_t len);

/*
 * Filters imported from RedisBloom 2.x. RedisBloom's CF.SCANDUMP gives a
 * header chunk of CF_RB_HEADER_LEN bytes, then the slots of its
 * sub-filters; cf_load_rb_header() and cf_load_rb_chunk() build from them
 * a filter of RedisBloom's form, which keeps RedisBloom's hash
 * (MurmurHash64A), fingerprints, buckets, chain of sub-filters, growth and
 * deletes, so it answers every lookup exactly as RedisBloom did. Every
 * function of this header works on it; cf_header_write() and
 * cf_load_header() carry it in the project's own files with its own
 * magic, and the data (cf_data_view()) is RedisBloom's. For this form,
 * cf_nfilters() is a generation number of the filter's size (it changes
 * whenever the size does, compaction shrinking it included) and
 * cf_size_bytes_at() the size a generation had, at most 127 changes back.
 */
#define CF_RB_HEADER_LEN 38
/* Largest data chunk RedisBloom's CF.SCANDUMP returns. */
#define CF_RB_CHUNK_MAX ((size_t)16 << 20)

/* true for a filter of RedisBloom's form. */
bool cf_is_redisbloom(const cf_filter_t *f);

/* Writes f's (RedisBloom's form) header chunk, CF_RB_HEADER_LEN bytes. */
void cf_rb_header(const cf_filter_t *f, void *buf);

/* Builds an empty filter of RedisBloom's form from its header chunk (len
 * must be CF_RB_HEADER_LEN). -EINVAL for a damaged or inconsistent header
 * (RedisBloom's checks, and counts that cannot be true), -ENOMEM when its
 * sizes overflow or need more than lim allows or allocation fails; nothing
 * is allocated then. */
int cf_load_rb_header(const void *buf, size_t len, const cf_limits_t *lim,
                      cf_filter_t **out);

/* Copies a data chunk of RedisBloom's CF.SCANDUMP into f (RedisBloom's
 * form) as RedisBloom places it: pos is the iterator the chunk came with,
 * the chunk ends at data offset pos - 1 and lies within one sub-filter.
 * -EINVAL (nothing copied) otherwise. */
int cf_load_rb_chunk(cf_filter_t *f, long long pos, const void *p, size_t len);

/* RedisBloom's CF.COMPACT: moves fingerprints of newer sub-filters into
 * older ones where they fit and frees emptied newest ones; resets the
 * delete count. Nothing for the core's own form. */
void cf_compact(cf_filter_t *f);

#endif /* CF_H */
