/*
 * cf_alloc.c - the allocator every filter uses, and table bytes mapped from
 * the kernel for huge pages (cf_alloc.h).
 */
#include "cf_alloc.h"

#include <stdlib.h>
#include <sys/mman.h>

/* Tables from this size up are mapped directly and marked for huge pages:
 * random probes over a large table otherwise miss the TLB on every access. */
#define CF_MAP_MIN (2u << 20)

/* libc's allocator family unless a host installed its own (cf.h). */
static cf_allocator_t mem = {malloc, calloc, realloc, free};
static size_t map_min = CF_MAP_MIN; /* 0: no table is mapped */

void cf_set_allocator(const cf_allocator_t *a)
{
    if (a == NULL) {
        mem = (cf_allocator_t){malloc, calloc, realloc, free};
        map_min = CF_MAP_MIN;
    } else {
        mem = *a;
        map_min = 0;
    }
}

void cf_set_map_min(size_t min)
{
    map_min = min;
}

const cf_allocator_t *cf_mem_allocator(void)
{
    return &mem;
}

/* Tables of n bytes (pad included) are mapped from the kernel, not taken
 * from the allocator, when the host allows it (cf_set_map_min(); a host
 * whose accounting counts on its allocator must see every table). The
 * allocator and map_min are set once, before any filter exists (cf.h), so
 * this answers the same at free time as at allocation time. */
bool cf_table_mapped(uint64_t n)
{
    return map_min != 0 && n >= map_min;
}

/* Zeroed memory straight from the kernel, hinted for transparent huge
 * pages; NULL on failure. */
uint8_t *cf_table_map(size_t n)
{
    void *p = mmap(NULL, n, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
                   -1, 0);
    if (p == MAP_FAILED)
        return NULL;
#ifdef MADV_HUGEPAGE
    (void)madvise(p, n, MADV_HUGEPAGE);
#endif
    return p;
}

uint8_t *cf_bytes_alloc(uint64_t n)
{
    if (n == 0 || n > SIZE_MAX)
        return NULL;
    return cf_table_mapped(n) ? cf_table_map((size_t)n)
                              : mem.calloc_fn(1, (size_t)n);
}

void cf_bytes_free(uint8_t *p, uint64_t n)
{
    if (p == NULL)
        return;
    if (cf_table_mapped(n))
        munmap(p, (size_t)n);
    else
        mem.free_fn(p);
}
