/*
 * keyspace.h - one database: a hash table from binary-safe key names to
 * cuckoo filters (the only object type cuckood stores).
 *
 * Contract: not thread-safe; owned by the event loop thread. The table owns
 * every filter put into it and frees it on delete, overwrite or flush.
 * A key's entry (its link, its bytes) lives in its filter's host bytes
 * (cf_resize_extra()), so a key costs one allocation. Key bytes are copied
 * in; keys longer than UINT32_MAX bytes are refused with -ENOMEM. The key
 * bytes the walks report are not NUL-terminated, and stay valid until the
 * table next changes (they must not be passed back to a call that changes
 * it).
 *
 * Moves: ks_add and ks_rename may move the filter they store (to make room
 * for the entry); ks_add hands back the new address, and ks_get finds it
 * after a rename. No other call moves a filter. A caller must not keep a
 * cf_filter_t * across either of them.
 */
#ifndef KEYSPACE_H
#define KEYSPACE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "cf.h"

typedef struct ks_db ks_db_t; /* opaque */

/* A new empty database, or NULL when out of memory. */
ks_db_t *ks_db_new(void);
void ks_db_free(ks_db_t *db); /* frees every filter too; NULL is fine */

/* The filter under key, or NULL. */
cf_filter_t *ks_get(const ks_db_t *db, const void *key, size_t len);

/* Stores *f under key; the table takes ownership of it. On 0, *f is the
 * stored filter's address, which may differ from the one passed (the
 * filter was moved to make room for its entry; the old address is stale).
 * *f must have no host bytes (a filter from cf_create() or
 * cf_load_header()). -EEXIST when the key exists, or -ENOMEM: then *f is
 * untouched and the filter is still the caller's. */
int ks_add(ks_db_t *db, const void *key, size_t len, cf_filter_t **f);

/* Removes key and frees its filter: 1 when removed, 0 when absent. */
int ks_del(ks_db_t *db, const void *key, size_t len);

/* Moves the filter from key src to key dst, replacing (freeing) any filter
 * under dst. The filter itself may move (its entry is resized for dst):
 * ks_get(dst) gives its address. 0, -ENOENT when src is absent, or -ENOMEM
 * (nothing changed). */
int ks_rename(ks_db_t *db, const void *src, size_t slen, const void *dst,
              size_t dlen);
/* ks_rename(), but a filter replaced under dst is not freed: it is stored
 * in *replaced (NULL when none) as ks_remove() gives one, for the caller
 * to free (ks_free_removed(), or a lazy free). */
int ks_rename_take(ks_db_t *db, const void *src, size_t slen, const void *dst,
                   size_t dlen, cf_filter_t **replaced);

/* Moves key's filter from database from to database to, under the same
 * name; the filter and its entry stay where they are (no allocation). 0,
 * -ENOENT when key is absent from from, or -EEXIST when it exists in to
 * (nothing changed). */
int ks_move(ks_db_t *from, ks_db_t *to, const void *key, size_t len);

/* A key picked at random (bucket first, then a place in its chain, so not
 * quite uniform, as Redis's dictGetFairRandomKey is not): its bytes in
 * *key and *len, valid as ks_foreach's, drawn with r, a random number of
 * the caller's. false when db is empty. */
bool ks_random(const ks_db_t *db, uint64_t r, const void **key, size_t *len);

size_t ks_size(const ks_db_t *db); /* number of keys */
void ks_flush(ks_db_t *db);        /* removes (frees) every key */

/* Lazy freeing: taking keys out without freeing them. What is taken is
 * the caller's, reachable from nothing in db, and may be freed on any
 * thread (it shares no state with the table, and the filters' allocator
 * is thread-safe). */

/* Moves every key of db into a new database, the caller's (freed with
 * ks_db_free()), and leaves db empty as ks_flush() does (its expiry walk
 * restarted). NULL, with db untouched, when out of memory. O(1). */
ks_db_t *ks_take_all(ks_db_t *db);
/* Takes key out of db without freeing its filter: the filter, with its
 * entry, for ks_free_removed(); NULL when absent. */
cf_filter_t *ks_remove(ks_db_t *db, const void *key, size_t len);
/* What a filter taken by ks_remove() was counted as in ks_bytes(). */
uint64_t ks_removed_bytes(const cf_filter_t *f);
void ks_free_removed(cf_filter_t *f);
/* Filters' cf_size_bytes(), their entries (host bytes) and the table's own
 * memory (bucket array, this struct), kept as a running sum. Each entry
 * remembers the number of tables its filter was counted with, and removal
 * takes exactly what that counted off (cf_size_bytes_at()), so the sum
 * cannot wrap even if a filter grew without being recounted. A caller that
 * changed a stored filter's size recounts it with ks_recount() (no-op for
 * an absent key); ks_rename recounts the filter it moves. */
uint64_t ks_bytes(const ks_db_t *db);
void ks_recount(ks_db_t *db, const void *key, size_t len);
/* What key costs in all: its filter (cf_size_bytes()), its entry (host
 * bytes, key included) and one slot of the bucket array; 0 when absent. */
uint64_t ks_usage(const ks_db_t *db, const void *key, size_t len);

/* Resizing. The bucket array doubles when the load reaches 1 and shrinks
 * to the smallest power of two that holds the keys when it falls under
 * 1/8, incrementally: a new array is made beside the old one and the old
 * one's buckets move a few at a time, on each write (ks_add, ks_del,
 * ks_rename, ks_move, ks_set_expire, ks_clear_expire) and in ks_rehash().
 * The old array, once empty, goes to lazyfree_block() (freed on the lazy
 * free thread when it runs, at once otherwise). Every call is correct
 * while a resize is under way. */

/* For every database of the process: false stops resizes from starting
 * and the one under way from moving on (Redis's DEBUG DICT-RESIZING 0),
 * true lets them go again (the default). */
void ks_set_resizing(bool on);
/* Starts the resize the load asks for, if none is under way, and moves up
 * to n buckets of it (looking at most at 10 n empty ones); when that ends
 * it, starts the next one the load asks for. true when a resize is under
 * way after it: calling it until false with a large n settles the table. */
bool ks_rehash(ks_db_t *db, size_t n);
/* Starts a resize to n buckets (a power of two, at least 4) whatever the
 * load: 0 (also when the table has n buckets already), -EBUSY when one is
 * under way, -EINVAL for a bad n, -ENOMEM. The load rules apply again at
 * the next change. */
int ks_resize(ks_db_t *db, size_t n);

/* One bucket array's shape (DEBUG HTSTATS): table 0 is the main one,
 * table 1 the target of a resize under way. false, with *st zeroed, when
 * that table does not exist. O(buckets). */
#define KS_CHAIN_STATS 50 /* chains[] entries; the last counts the longer */
typedef struct ks_table_stats {
    size_t buckets;   /* the array's size */
    size_t moved;     /* table 0: buckets already moved to table 1 */
    size_t keys;      /* keys in this table */
    size_t used;      /* non-empty buckets */
    size_t max_chain; /* the longest chain */
    size_t chains[KS_CHAIN_STATS]; /* buckets by chain length */
} ks_table_stats_t;
bool ks_table_stats(const ks_db_t *db, int table, ks_table_stats_t *st);

/* Calls fn for every key; stops early and returns fn's value when it is
 * non-zero, else 0. The table must not change during the walk. */
typedef int ks_each_fn(void *ctx, const void *key, size_t len,
                       const cf_filter_t *f);
int ks_foreach(const ks_db_t *db, ks_each_fn *fn, void *ctx);

/* Incremental iteration that survives changes between calls (SCAN): visits
 * some keys starting at cursor, calls fn for each, and returns the next
 * cursor (0 when the walk is complete). Every key present for the whole walk
 * is reported at least once. count is a hint of how many to visit. */
uint64_t ks_scan(const ks_db_t *db, uint64_t cursor, size_t count,
                 ks_each_fn *fn, void *ctx);

/* Expiry times: absolute unix milliseconds, kept in the key's entry (a key
 * without one costs nothing more, a key with one 8 bytes, counted in
 * ks_bytes() and ks_usage()). The keyspace only stores them: deciding that
 * a key is past its time (and deleting it) is the caller's, but for
 * ks_expire_step(). ks_rename carries the source's time to the new name;
 * ks_add stores a key without one; ks_del and ks_flush drop it with the
 * key. */

/* The filter under key, or NULL; *when is its expiry time, -1 when it has
 * none (or is absent). One lookup. */
cf_filter_t *ks_find(const ks_db_t *db, const void *key, size_t len,
                     int64_t *when);
/* The expiry time of f, a filter stored in a keyspace (from ks_get(),
 * ks_find() or a walk), or -1 when it has none. */
int64_t ks_when(const cf_filter_t *f);
/* Sets key's expiry time: 0, -ENOENT when absent, or -ENOMEM (nothing
 * changed). Giving a key its first timeout moves its filter (as ks_add
 * may). */
int ks_set_expire(ks_db_t *db, const void *key, size_t len, int64_t when);
/* Removes key's timeout: 1 when it had one, 0 when it had none or is
 * absent, -ENOMEM (nothing changed). May move the filter. */
int ks_clear_expire(ks_db_t *db, const void *key, size_t len);
/* Number of keys with a timeout. */
size_t ks_expires(const ks_db_t *db);

/* Active expiry: one step of an incremental walk over the keys with a
 * timeout (the cursor is the database's own, kept between calls and
 * restarted by ks_flush). Visits whole buckets until max_buckets were
 * visited, max_sample keys with a timeout were seen, the walk completed a
 * pass, or no key has a timeout left. Deletes every key seen whose time is
 * <= now, calling fn(ctx, key, len, f) for each once it is out of the
 * table (fn must not change the table). fn may take the filter f, as
 * ks_remove() gives it (then it returns true and frees f itself, after its
 * last use of key, which lives in f's entry), or leave it to the step to
 * free (false). */
typedef bool ks_expired_fn(void *ctx, const void *key, size_t len,
                           cf_filter_t *f);
typedef struct ks_expire_stats {
    size_t buckets;   /* visited */
    size_t sampled;   /* keys with a timeout seen */
    size_t expired;   /* of them deleted */
    uint64_t ttl_sum; /* remaining ms of the sampled keys not deleted */
    bool wrapped;     /* the walk completed a pass of the table */
} ks_expire_stats_t;
void ks_expire_step(ks_db_t *db, int64_t now, size_t max_buckets,
                    size_t max_sample, ks_expired_fn *fn, void *ctx,
                    ks_expire_stats_t *st);
/* The running average of the time to live (ms) of the keys that
 * ks_expire_step() sampled (INFO keyspace's avg_ttl); 0 when no key has a
 * timeout. */
uint64_t ks_avg_ttl(const ks_db_t *db);

#endif /* KEYSPACE_H */
