/*
 * heap.h - the daemon's memory allocator, chosen at build time, and what it
 * tells about the memory it holds.
 *
 * libc (the default, and every sanitizer build): glibc's malloc with a
 * fixed mmap threshold of 64 KiB, so a table above it is mapped on its own
 * and unmapped when freed instead of landing in the heap, where a
 * long-lived neighbour would pin it; the small rest is trimmed
 * (malloc_trim(), which also returns whole free pages inside the heap).
 *
 * jemalloc (-DCUCKOOD_ALLOCATOR=jemalloc, kept to compare against): the
 * whole process's malloc, as in Redis, dirty pages purged on a 5 s decay
 * driven by the cron.
 *
 * Either way heap_cron() says when to give every freed page back: once the
 * keyspace's size has been still for a second, and once it has fallen to a
 * quarter (FLUSHALL, FLUSHDB) and stopped falling; filter tables of 2 MiB and
 * more are mapped by the core (cf_set_map_min()) with a huge-page hint, and
 * unmapped when freed.
 *
 * Contract: leaf module of the daemon (libc, jemalloc, the filter core's
 * allocator hook). Event loop thread only, apart from heap_rss() and
 * heap_purge(), which any thread may call.
 */
#ifndef HEAP_H
#define HEAP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Installs the allocator as the filter core's (cf_set_allocator()) and
 * applies its settings. Call once in main(), before any filter exists. */
void heap_init(void);

/* "jemalloc-5.3.0" or "libc": INFO's mem_allocator. */
const char *heap_name(void);

typedef struct heap_stats {
    bool known;         /* false: the allocator tells nothing */
    bool has_resident;  /* resident is set (jemalloc only) */
    uint64_t allocated; /* bytes handed out to the program */
    uint64_t active;    /* bytes in pages that hold handed-out memory */
    uint64_t resident;  /* bytes of the allocator's pages in RAM */
} heap_stats_t;

/* The allocator's own figures, fresh (jemalloc refreshes its epoch; glibc's
 * mallinfo2() walks every free chunk under the heap's lock, a pause that
 * grows with the heap's holes): MEMORY STATS and DOCTOR. */
void heap_stats(heap_stats_t *st);
/* The figures heap_take_stats() last took, or taken now the first time:
 * INFO, which clients poll, and DOCTOR. Any thread. */
void heap_stats_recent(heap_stats_t *st);
/* Takes the figures heap_stats_recent() gives (a walk of the heap: run it
 * where a pause does not matter, when heap_cron() says they are due). Any
 * thread. */
void heap_take_stats(void);
#define HEAP_STATS_EVERY_MS 1000

/* The process's resident set size in bytes (/proc/self/statm); 0 when it
 * cannot be read. */
uint64_t heap_rss(void);

/* Returns every freed page the allocator holds to the kernel now
 * (MEMORY PURGE, and the lazy free thread when heap_cron() says so): a
 * walk of the heap's free chunks and an madvise() of their pages, which
 * takes time in proportion to them (20-30 ms for the pages of 2M small
 * filters). */
void heap_purge(void);

/* What heap_cron() finds due, for the caller to run on a thread of its
 * choice. */
#define HEAP_DUE_PURGE 1 /* heap_purge() */
#define HEAP_DUE_STATS 2 /* heap_take_stats() */

/* Called by the cron with the keyspace's size in bytes: HEAP_DUE_* bits.
 * A purge is due once the size has not changed for a second, or once it
 * has fallen below a quarter of its size at the last purge (by 4 MiB at
 * least) and stopped falling; the figures every HEAP_STATS_EVERY_MS when
 * the size held still since the last cron, every 10 s at least.
 * jemalloc's decay advances here. While freeing is true (another thread
 * is freeing memory) nothing is due: both walk the heap under the lock
 * that thread takes for every free; they come once it is done. */
int heap_cron(uint64_t used, bool freeing);

/* The allocator's detailed statistics as text (MEMORY MALLOC-STATS): a
 * malloc()ed NUL-terminated string the caller frees, or NULL when the
 * allocator has none or memory ran out. */
char *heap_malloc_stats(void);

#endif /* HEAP_H */
