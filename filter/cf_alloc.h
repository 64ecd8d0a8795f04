/*
 * cf_alloc.h - the allocator every filter uses (private to filter/; the
 * setters are cf.h's cf_set_allocator() and cf_set_map_min()), and table
 * bytes mapped from the kernel for huge pages.
 */
#ifndef CF_ALLOC_H
#define CF_ALLOC_H

#include <stdbool.h>
#include <stdint.h>

#include "cf.h"
#include "cf_shape.h"

/* The allocator every filter uses (cf_set_allocator()). */
CF_HIDDEN const cf_allocator_t *cf_mem_allocator(void);

/* Whether a table of n bytes is mapped from the kernel rather than taken
 * from the allocator (cf_set_map_min()); the same answer at free time as at
 * allocation time. */
CF_HIDDEN bool cf_table_mapped(uint64_t n);

/* n zeroed bytes straight from the kernel, hinted for transparent huge
 * pages; NULL on failure. */
CF_HIDDEN uint8_t *cf_table_map(size_t n);

/* n zeroed bytes of table, mapped from the kernel when cf_table_mapped(n),
 * else from the allocator; NULL when out of memory. Released with
 * cf_bytes_free() and the same n. */
CF_HIDDEN uint8_t *cf_bytes_alloc(uint64_t n);
CF_HIDDEN void cf_bytes_free(uint8_t *p, uint64_t n);

#endif /* CF_ALLOC_H */
