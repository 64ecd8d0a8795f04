/*
 * heap.h - the daemon's memory allocator, chosen at build time, and what it
 * tells about the memory it holds.
 *
 * jemalloc (the default build): the whole process's malloc, as in Redis.
 * Freed pages go back to the kernel by themselves: jemalloc's background
 * thread purges dirty pages on a short decay (HEAP_DECAY_MS), so the
 * resident size follows what is in use within about a second with no
 * command running. heap_cron() purges at once after a large drop
 * (FLUSHALL, FLUSHDB, deleting many filters).
 *
 * libc (builds with sanitizers, which replace malloc, or
 * -DCUCKOOD_ALLOCATOR=libc): glibc's malloc with a fixed mmap threshold,
 * so that no table above it lives in the heap, and malloc_trim() after a
 * large drop.
 *
 * Either way filter tables of 2 MiB and more are mapped by the core
 * (cf_set_map_min()) with a huge-page hint, and unmapped when freed.
 *
 * Contract: leaf module of the daemon (libc, jemalloc, the filter core's
 * allocator hook). Event loop thread only, apart from heap_rss().
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

/* The allocator's own figures, fresh (jemalloc refreshes its epoch). */
void heap_stats(heap_stats_t *st);

/* The process's resident set size in bytes (/proc/self/statm); 0 when it
 * cannot be read. */
uint64_t heap_rss(void);

/* Returns every freed page the allocator holds to the kernel now
 * (MEMORY PURGE). */
void heap_purge(void);

/* Called by the cron with the keyspace's size in bytes: after a drop of
 * HEAP_PURGE_DROP bytes or an eighth since the last purge, purges. */
void heap_cron(uint64_t used);

/* The allocator's detailed statistics as text (MEMORY MALLOC-STATS): a
 * malloc()ed NUL-terminated string the caller frees, or NULL when the
 * allocator has none or memory ran out. */
char *heap_malloc_stats(void);

#endif /* HEAP_H */
