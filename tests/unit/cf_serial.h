/*
 * cf_serial.h - what the filter unit tests share about the serialised
 * form: a copy of a filter made through it (what a replica or a restart
 * starts from), and whether two filters serialise to the same bytes
 * (header, victim stash included, and every table byte). Include after
 * cmocka.h and cf.h.
 */
#ifndef CF_SERIAL_H
#define CF_SERIAL_H

#include <stdbool.h>
#include <string.h>

static bool same_bytes(const cf_filter_t *a, const cf_filter_t *b)
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

static cf_filter_t *copy_of(const cf_filter_t *f)
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
