/*
 * cf_grow_fixture.h - what the growable shape's unit tests share: a
 * generator, a growable filter, its whole serialised form in one buffer
 * and the byte comparison of two filters through it (keys and the calls on
 * item i come from cf_items.h). Include after cmocka.h and cf.h.
 */
#ifndef CF_GROW_FIXTURE_H
#define CF_GROW_FIXTURE_H

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "cf_items.h"

static uint64_t rnd(uint64_t *s)
{
    *s ^= *s << 13;
    *s ^= *s >> 7;
    *s ^= *s << 17;
    return *s;
}

/* A growable filter reserved for cap, expansion 2. */
static cf_filter_t *make(uint64_t cap, uint64_t seed)
{
    cf_params_t p = params_of(cap, 2, seed);
    p.growable = 1;
    cf_filter_t *f = NULL;
    assert_int_equal(cf_create(&p, &f), 0);
    return f;
}

/* The whole serialised form of f, in one buffer (the data read through
 * views of at most 1000 bytes). */
static uint8_t *dump(const cf_filter_t *f, size_t *n)
{
    size_t h = cf_header_len(f);
    uint64_t d = cf_data_len(f);
    uint8_t *buf = malloc(h + (size_t)d);
    assert_non_null(buf);
    cf_header_write(f, buf);
    uint64_t off = 0;
    while (off < d) {
        const void *p;
        size_t got = cf_data_view(f, off, 1000, &p);
        assert_true(got > 0);
        memcpy(buf + h + off, p, got);
        off += got;
    }
    *n = h + (size_t)d;
    return buf;
}

static void assert_same_bytes(const cf_filter_t *a, const cf_filter_t *b)
{
    size_t na, nb;
    uint8_t *da = dump(a, &na), *db = dump(b, &nb);
    assert_int_equal(na, nb);
    assert_memory_equal(da, db, na);
    free(da);
    free(db);
}

#endif
