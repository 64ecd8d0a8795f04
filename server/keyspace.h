/*
 * keyspace.h - one database: a hash table from binary-safe key names to
 * cuckoo filters (the only object type cuckood stores).
 *
 * Contract: not thread-safe; owned by the event loop thread. The table owns
 * every filter put into it and frees it on delete, overwrite or flush.
 * Key bytes are copied in (into the entry); keys longer than UINT32_MAX
 * bytes are refused with -ENOMEM.
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

/* Stores f under key; the table takes ownership of f. 0, -EEXIST when the
 * key exists (f is not taken then), or -ENOMEM (f is not taken). */
int ks_add(ks_db_t *db, const void *key, size_t len, cf_filter_t *f);

/* Removes key and frees its filter: 1 when removed, 0 when absent. */
int ks_del(ks_db_t *db, const void *key, size_t len);

/* Moves the filter from key src to key dst, replacing (freeing) any filter
 * under dst. 0, -ENOENT when src is absent, -ENOMEM. */
int ks_rename(ks_db_t *db, const void *src, size_t slen, const void *dst,
              size_t dlen);

size_t ks_size(const ks_db_t *db); /* number of keys */
void ks_flush(ks_db_t *db);        /* removes (frees) every key */
/* Filters' cf_size_bytes() plus the table's own memory, kept as a running
 * sum. Each entry remembers the bytes it was counted with, and removal
 * takes exactly those off, so the sum cannot wrap even if a filter grew
 * without being recounted. A caller that changed a stored filter's size
 * recounts it with ks_recount() (no-op for an absent key). */
uint64_t ks_bytes(const ks_db_t *db);
void ks_recount(ks_db_t *db, const void *key, size_t len);
/* What key costs in all: its entry (key bytes included), its filter
 * (cf_size_bytes()) and one slot of the bucket array; 0 when absent. */
uint64_t ks_usage(const ks_db_t *db, const void *key, size_t len);

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

#endif /* KEYSPACE_H */
