/*
 * lazyfree.h - freeing filters off the event loop (Redis's lazyfree and
 * its bio thread): FLUSHALL/FLUSHDB ASYNC hand over a whole taken
 * database, UNLINK (and DEL, FLUSHALL, FLUSHDB under the lazyfree-lazy-*
 * directives) the filters big enough for freeing to take time; one thread
 * of ours frees them in the order given, and returns freed pages to the
 * kernel and takes the allocator's figures when the cron asks
 * (lazyfree_heap()).
 *
 * Contract: one queue per process. lazyfree_start() and lazyfree_stop()
 * from the thread that owns the server; the hand-overs and counters from
 * the event loop thread; what is handed over is no longer the caller's and
 * is reachable from nothing else. Until started (unit tests, a start that
 * failed) and after stopping, a hand-over frees at once. The counters are
 * read without a lock (atomics).
 */
#ifndef LAZYFREE_H
#define LAZYFREE_H

#include <stdbool.h>
#include <stdint.h>

#include "cf.h"
#include "keyspace.h"

/* Filters smaller than this are freed at once even by UNLINK: a free()
 * that cheap costs less than the hand-over (Redis's LAZYFREE_THRESHOLD
 * plays this part for its objects). */
#define LAZYFREE_MIN_BYTES (64u * 1024u)

/* Starts the thread: 0 or a negative errno (then hand-overs free at once). */
int lazyfree_start(void);
/* Waits until everything handed over is freed, then ends the thread. */
void lazyfree_stop(void);

/* Frees db (from ks_take_all()) and every filter in it. */
void lazyfree_db(ks_db_t *db);
/* Frees f (from ks_remove()): on the thread when it takes at least
 * LAZYFREE_MIN_BYTES, else at once. true when it went to the thread. */
bool lazyfree_filter(cf_filter_t *f);

/* Frees p, a block of bytes from malloc() (a keyspace's bucket array left
 * by a resize), on the thread when it takes at least LAZYFREE_MIN_BYTES,
 * else at once: unmapping a large array costs milliseconds. Counted in
 * lazyfree_pending_bytes() until freed; not an object. */
void lazyfree_block(void *p, uint64_t bytes);

/* Holds the thread (on) before its next job, or lets it go on: what is
 * handed over meanwhile waits, counted as pending (DEBUG LAZYFREE-HOLD, for
 * tests). lazyfree_stop() frees everything, held or not. */
void lazyfree_hold(bool on);

/* Runs the heap's work that heap_cron() found due (HEAP_DUE_* bits) on
 * the thread, after what was handed over before: the walks of the heap
 * (heap_purge()'s and its madvise() of every free page, heap_take_stats())
 * run there, not on the loop. Work asked while a job of it waits joins
 * that job. */
void lazyfree_heap(int due);

/* The longest a job (a database or a filter freed) and a purge took on
 * the thread (ms) since the last call, which zeroes them: the cron's
 * LATENCY events "lazyfree-job" and "lazyfree-purge". A job that ran when
 * there was no thread is in neither. */
void lazyfree_take_slowest(uint64_t *job_ms, uint64_t *purge_ms);

/* Filters handed over and not yet freed (INFO lazyfree_pending_objects). */
uint64_t lazyfree_pending_objects(void);
/* The bytes they take, counted by ks_bytes() before they were taken: a
 * part of used_memory until freed, so maxmemory counts them. */
uint64_t lazyfree_pending_bytes(void);
/* Filters the thread has freed (INFO lazyfreed_objects). */
uint64_t lazyfree_freed_objects(void);
/* Zeroes lazyfreed_objects (CONFIG RESETSTAT). */
void lazyfree_reset_stats(void);

#endif /* LAZYFREE_H */
