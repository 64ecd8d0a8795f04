/*
 * memstat.h - what the process holds beside what the keyspace uses: the
 * INFO memory fields that come from the kernel and the allocator (heap.h),
 * and the MEMORY subcommands that report on them (STATS, DOCTOR, PURGE,
 * MALLOC-STATS, HELP), in the shapes Redis gives them.
 *
 * Figures: used_memory is the keyspace (filters and their tables);
 * used_memory_rss the process's resident set; the allocator_* figures
 * are the allocator's own (jemalloc: allocated, active, resident; libc:
 * allocated and active from mallinfo2), fresh for MEMORY STATS and as the
 * lazy free thread last took them (heap_stats_recent()) for INFO and
 * DOCTOR. Filter tables of 2 MiB and more are
 * mapped outside the allocator: they are in used_memory and in RSS, not in
 * the allocator's figures.
 *
 * Contract: event loop thread only.
 */
#ifndef MEMSTAT_H
#define MEMSTAT_H

#include "cmd.h"
#include "server_int.h"
#include "util.h"

/* Appends the INFO memory fields this module owns to b: used_memory_rss,
 * allocator_*, the fragmentation figures, maxmemory_effective and
 * mem_allocator. */
void memstat_info(server_t *s, sbuf_t *b);

/* MEMORY STATS | DOCTOR | PURGE | MALLOC-STATS | HELP. */
cmd_proc_t memstat_stats_proc;
cmd_proc_t memstat_doctor_proc;
cmd_proc_t memstat_purge_proc;
cmd_proc_t memstat_malloc_stats_proc;
cmd_proc_t memstat_help_proc;

#endif /* MEMSTAT_H */
