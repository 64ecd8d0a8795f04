/*
 * cf_serial.h - what the filter unit tests share about the serialised
 * form: the whole form in one buffer, a copy of a filter made through it
 * (what a replica or a restart starts from), and whether two filters
 * serialise to the same bytes (header, victim stash included, and every
 * table byte). Include after cmocka.h.
 */
#ifndef CF_SERIAL_H
#define CF_SERIAL_H

#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <xxhash.h>

#include "cf.h"

/* f's header and data in one buffer of *len bytes, which the caller
 * frees; the header is the first *hlen (when hlen is not NULL). The data
 * is read through views of at most view bytes. */
static inline uint8_t *serialised(const cf_filter_t *f, size_t view,
                                  size_t *hlen, size_t *len)
{
    size_t h = cf_header_len(f);
    uint64_t d = cf_data_len(f);
    uint8_t *buf = malloc(h + (size_t)d);
    assert_non_null(buf);
    cf_header_write(f, buf);
    for (uint64_t off = 0; off < d;) {
        const void *p;
        size_t got = cf_data_view(f, off, view, &p);
        assert_true(got > 0);
        memcpy(buf + h + off, p, got);
        off += got;
    }
    if (hlen != NULL)
        *hlen = h;
    *len = h + (size_t)d;
    return buf;
}

/* Asserts that a and b serialise to the same bytes; a failure shows the
 * first part that differs. */
static inline void assert_same_bytes(const cf_filter_t *a, const cf_filter_t *b)
{
    uint8_t ha[CF_HEADER_MAX], hb[CF_HEADER_MAX];
    assert_int_equal(cf_header_len(a), cf_header_len(b));
    cf_header_write(a, ha);
    cf_header_write(b, hb);
    assert_memory_equal(ha, hb, cf_header_len(a));
    assert_int_equal(cf_data_len(a), cf_data_len(b));
    for (uint64_t off = 0; off < cf_data_len(a);) {
        const void *pa, *pb;
        size_t na = cf_data_view(a, off, 4096, &pa);
        size_t nb = cf_data_view(b, off, na, &pb);
        assert_true(nb > 0 && nb <= na);
        assert_memory_equal(pa, pb, nb);
        off += nb;
    }
}

static inline bool same_bytes(const cf_filter_t *a, const cf_filter_t *b)
{
    unsigned char ha[CF_HEADER_MAX], hb[CF_HEADER_MAX];
    if (cf_header_len(a) != cf_header_len(b) ||
        cf_data_len(a) != cf_data_len(b))
        return false;
    cf_header_write(a, ha);
    cf_header_write(b, hb);
    if (memcmp(ha, hb, cf_header_len(a)) != 0)
        return false;
    uint64_t off = 0;
    const void *pa, *pb;
    size_t n;
    while ((n = cf_data_view(a, off, 1 << 20, &pa)) > 0) {
        assert_int_equal(cf_data_view(b, off, n, &pb), n);
        if (memcmp(pa, pb, n) != 0)
            return false;
        off += n;
    }
    return true;
}

/* Makes a header's checksum right again after a test changed a field:
 * the XXH3-64 of its first hl - 8 bytes, little-endian, in its last 8
 * (every header of the core's own forms ends so). */
static inline void set_header_sum(uint8_t *h, size_t hl)
{
    uint64_t sum = XXH3_64bits(h, hl - 8);
    for (int i = 0; i < 8; i++)
        h[hl - 8 + i] = (uint8_t)(sum >> (8 * i));
}

/* A filter loaded from buf (a dump of n bytes) with data chunks of chunk
 * bytes. */
static inline cf_filter_t *loaded_in_chunks(const uint8_t *buf, size_t n,
                                            size_t chunk)
{
    cf_filter_t *f = NULL;
    size_t used = 0;
    assert_int_equal(cf_load_header(buf, n, NULL, &f, &used), 0);
    assert_int_equal(used, cf_header_len(f));
    assert_int_equal(cf_data_len(f), n - used);
    for (size_t off = 0; off < n - used; off += chunk) {
        size_t len = n - used - off < chunk ? n - used - off : chunk;
        assert_int_equal(cf_load_data(f, off, buf + used + off, len), 0);
    }
    return f;
}

static inline cf_filter_t *copy_of(const cf_filter_t *f)
{
    unsigned char hdr[CF_HEADER_MAX];
    size_t used;
    cf_filter_t *g = NULL;
    cf_header_write(f, hdr);
    assert_int_equal(cf_load_header(hdr, cf_header_len(f), NULL, &g, &used), 0);
    uint64_t off = 0;
    const void *p;
    size_t n;
    while ((n = cf_data_view(f, off, 1 << 20, &p)) > 0) {
        assert_int_equal(cf_load_data(g, off, p, n), 0);
        off += n;
    }
    return g;
}

#endif
