/*
 * moving_alloc.h - a filter allocator for tests whose realloc always moves
 * the block (and can be told to fail), so that a pointer kept across a call
 * that may move a filter is a use after free ASan reports, and a test can
 * check that a failed move changes nothing. Install it with
 * moving_alloc_install() before any filter exists.
 */
#ifndef MOVING_ALLOC_H
#define MOVING_ALLOC_H

#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "cf.h"

/* Each block carries its size in a 16-byte header (keeps malloc's
 * alignment). */
#define MOVING_HDR 16

static int moving_fail_reallocs; /* > 0: that many reallocs fail */
static int moving_fail_mallocs;  /* > 0: that many mallocs fail */
static size_t moving_reallocs;   /* reallocs done (moves) */

static void *moving_malloc(size_t n)
{
    if (moving_fail_mallocs > 0) {
        moving_fail_mallocs--;
        return NULL;
    }
    if (n > SIZE_MAX - MOVING_HDR)
        return NULL;
    unsigned char *p = malloc(n + MOVING_HDR);
    if (p == NULL)
        return NULL;
    memcpy(p, &n, sizeof(n));
    return p + MOVING_HDR;
}

static void *moving_calloc(size_t n, size_t size)
{
    if (size != 0 && n > (SIZE_MAX - MOVING_HDR) / size)
        return NULL;
    void *p = moving_malloc(n * size);
    if (p != NULL)
        memset(p, 0, n * size);
    return p;
}

static void moving_free(void *p)
{
    if (p != NULL)
        free((unsigned char *)p - MOVING_HDR);
}

static void *moving_realloc(void *p, size_t n)
{
    if (p == NULL)
        return moving_malloc(n);
    if (moving_fail_reallocs > 0) {
        moving_fail_reallocs--;
        return NULL;
    }
    size_t old;
    memcpy(&old, (unsigned char *)p - MOVING_HDR, sizeof(old));
    int fail = moving_fail_mallocs; /* a realloc is not a malloc here */
    moving_fail_mallocs = 0;
    void *q = moving_malloc(n);
    moving_fail_mallocs = fail;
    if (q == NULL)
        return NULL;
    memcpy(q, p, old < n ? old : n);
    moving_free(p);
    moving_reallocs++;
    return q;
}

static inline void moving_alloc_install(void)
{
    static const cf_allocator_t a = {moving_malloc, moving_calloc,
                                     moving_realloc, moving_free};
    cf_set_allocator(&a);
}

#endif /* MOVING_ALLOC_H */
