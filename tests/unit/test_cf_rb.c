/* Unit tests of the RedisBloom form of the cuckoo core (filter/cf_rb.c,
 * through cf.h): its header checks, its own encoding's round trip, and
 * RedisBloom's placement of data chunks. The recorded fixtures check its
 * answers (tests/integ/test_import.py). */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "cf.h"

typedef struct rb_hdr {
    uint64_t items, nb, deletes, nf;
    uint16_t bs, max_iter, expansion;
} rb_hdr_t;

static void put64(uint8_t *p, uint64_t v)
{
    for (int i = 0; i < 8; i++)
        p[i] = (uint8_t)(v >> (8 * i));
}

static void put16(uint8_t *p, uint16_t v)
{
    p[0] = (uint8_t)v;
    p[1] = (uint8_t)(v >> 8);
}

/* RedisBloom's packed, little-endian header chunk. */
static void hdr_make(const rb_hdr_t *h, uint8_t out[CF_RB_HEADER_LEN])
{
    put64(out, h->items);
    put64(out + 8, h->nb);
    put64(out + 16, h->deletes);
    put64(out + 24, h->nf);
    put16(out + 32, h->bs);
    put16(out + 34, h->max_iter);
    put16(out + 36, h->expansion);
}

static int load(const rb_hdr_t *h, cf_filter_t **f)
{
    uint8_t buf[CF_RB_HEADER_LEN];
    hdr_make(h, buf);
    cf_limits_t lim = {.max_bytes = 64u << 20};
    return cf_load_rb_header(buf, sizeof(buf), &lim, f);
}

static const rb_hdr_t good = {.items = 10,
                              .nb = 512,
                              .deletes = 1,
                              .nf = 2,
                              .bs = 2,
                              .max_iter = 20,
                              .expansion = 1};

static void test_header_checks(void **state)
{
    (void)state;
    cf_filter_t *f = NULL;
    assert_int_equal(load(&good, &f), 0);
    assert_true(cf_is_redisbloom(f));
    cf_stats_t st;
    cf_stats(f, &st);
    assert_int_equal(st.form, CF_FORM_REDISBLOOM);
    assert_int_equal(st.nbuckets, 512);
    assert_int_equal(st.nfilters, 2);
    assert_int_equal(st.size_bytes, 40 + 2 * 16 + 2 * 512 * 2);
    assert_int_equal(cf_data_len(f), 2 * 512 * 2);
    uint8_t back[CF_RB_HEADER_LEN], want[CF_RB_HEADER_LEN];
    cf_rb_header(f, back);
    hdr_make(&good, want);
    assert_memory_equal(back, want, CF_RB_HEADER_LEN);
    cf_free(f);

    rb_hdr_t bad[] = {good, good, good, good, good, good, good, good, good};
    bad[0].bs = 0;
    bad[1].bs = 256;
    bad[2].nb = 500; /* not a power of two */
    bad[3].nf = 0;
    bad[4].nf = 70000; /* past RedisBloom's 16 bits */
    bad[5].max_iter = 0;
    bad[6].expansion = 0; /* a chain that could not have grown */
    bad[7].expansion = 3;
    bad[8].items = 2049; /* more than the slots */
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        f = (cf_filter_t *)&f;
        assert_int_equal(load(&bad[i], &f), -EINVAL);
        assert_null(f);
    }
    /* sizes that overflow, or more than the limit allows */
    rb_hdr_t big = good;
    big.nb = 1ull << 50;
    big.nf = 40;
    big.expansion = 32768;
    assert_int_equal(load(&big, &f), -ENOMEM);
    big = good;
    big.nb = 1ull << 30;
    assert_int_equal(load(&big, &f), -ENOMEM);
    assert_null(f);
    /* a header of the wrong length */
    uint8_t buf[CF_RB_HEADER_LEN + 1] = {0};
    hdr_make(&good, buf);
    assert_int_equal(cf_load_rb_header(buf, sizeof(buf), NULL, &f), -EINVAL);
}

/* Data chunks are placed as RedisBloom places them: ending at iterator - 1,
 * inside one sub-filter. */
static void test_chunks(void **state)
{
    (void)state;
    cf_filter_t *f;
    assert_int_equal(load(&good, &f), 0);
    uint8_t d[1025];
    memset(d, 7, sizeof(d));
    assert_int_equal(cf_load_rb_chunk(f, 1025, d, 1024), 0);
    assert_int_equal(cf_load_rb_chunk(f, 2049, d, 1024), 0);
    assert_int_equal(cf_load_rb_chunk(f, 1026, d, 1024), -EINVAL);
    assert_int_equal(cf_load_rb_chunk(f, 2049 + 1, d, 1), -EINVAL);
    assert_int_equal(cf_load_rb_chunk(f, 1026, d, 1025), -EINVAL);
    assert_int_equal(cf_load_rb_chunk(f, 1100, d, 100), -EINVAL);
    assert_int_equal(cf_load_rb_chunk(f, 0, d, 1), -EINVAL);
    assert_int_equal(cf_load_rb_chunk(f, -5, d, 1), -EINVAL);
    assert_int_equal(cf_load_rb_chunk(f, 1025, d, 0), -EINVAL);
    assert_int_equal(cf_load_rb_chunk(f, 2, d, 1), 0);
    const void *p;
    assert_int_equal(cf_data_view(f, 0, 1u << 20, &p), 1024);
    assert_memory_equal(p, d, 1024);
    cf_free(f);
}

/* The project's own encoding loads back whatever the counts became: a
 * filter whose items passed its slots (RedisBloom's counters drift when
 * data is loaded over a header) still saves and loads (found by
 * fuzz_rbchunk). */
static void test_own_encoding_round_trip(void **state)
{
    (void)state;
    cf_filter_t *f, *g;
    rb_hdr_t h = good;
    h.items = 0;
    assert_int_equal(load(&h, &f), 0);
    uint8_t d[1024];
    memset(d, 9, sizeof(d));
    assert_int_equal(cf_load_rb_chunk(f, 2049, d, 1024), 0);
    int n = 0;
    for (int i = 0; i < 3000; i++) /* deletes of fingerprint 9 */
        n += cf_del(f, &i, sizeof(i));
    assert_true(n > 0);
    cf_stats_t st;
    cf_stats(f, &st);
    assert_true(st.items > 2 * 512 * 2); /* counted below zero, as there */
    cf_compact(f);
    uint8_t hdr[CF_HEADER_MAX];
    size_t hlen = cf_header_len(f), used = 0;
    assert_true(cf_is_header_len(hlen));
    cf_header_write(f, hdr);
    assert_int_equal(cf_load_header(hdr, hlen, NULL, &g, &used), 0);
    assert_int_equal(used, hlen);
    assert_true(cf_is_redisbloom(g));
    cf_stats_t a, b;
    cf_stats(f, &a);
    cf_stats(g, &b);
    assert_memory_equal(&a, &b, sizeof(a));
    const void *p;
    for (uint64_t off = 0; off < cf_data_len(f); off += 512) {
        assert_int_equal(cf_data_view(f, off, 512, &p), 512);
        assert_int_equal(cf_load_data(g, off, p, 512), 0);
    }
    const void *q;
    for (uint64_t off = 0; off < cf_data_len(f); off += 512) {
        cf_data_view(f, off, 512, &p);
        cf_data_view(g, off, 512, &q);
        assert_memory_equal(p, q, 512);
    }
    cf_free(g);
    /* a damaged checksum is refused */
    hdr[20] ^= 1;
    assert_int_equal(cf_load_header(hdr, hlen, NULL, &g, &used) < 0, 1);
    assert_null(g);
    cf_free(f);
}

/* Growth, delete and the memory a host counts by generation. */
static void test_growth_and_sizes(void **state)
{
    (void)state;
    rb_hdr_t h = good;
    h.items = 0;
    h.nf = 1;
    h.nb = 2;
    cf_filter_t *f;
    assert_int_equal(load(&h, &f), 0);
    uint32_t g0 = cf_nfilters(f);
    uint64_t s0 = cf_size_bytes(f);
    assert_int_equal(cf_size_bytes_at(f, g0), s0);
    for (uint32_t i = 0; i < 40; i++)
        assert_int_equal(cf_add(f, &i, sizeof(i)), 0);
    cf_stats_t st;
    cf_stats(f, &st);
    assert_true(st.nfilters > 1);
    assert_int_equal(st.items, 40);
    assert_true(cf_nfilters(f) != g0);
    assert_int_equal(cf_size_bytes_at(f, g0), s0); /* still remembered */
    assert_int_equal(cf_size_bytes_at(f, cf_nfilters(f)), cf_size_bytes(f));
    for (uint32_t i = 0; i < 40; i++)
        assert_true(cf_exists(f, &i, sizeof(i)));
    uint32_t k = 3;
    assert_int_equal(cf_add_nx(f, &k, sizeof(k)), 0);
    for (uint32_t i = 0; i < 40; i++)
        assert_int_equal(cf_del(f, &i, sizeof(i)), 1);
    cf_stats(f, &st);
    assert_int_equal(st.items, 0);
    assert_int_equal(st.nfilters, 1); /* compacted as it emptied */
    cf_free(f);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_header_checks),
        cmocka_unit_test(test_chunks),
        cmocka_unit_test(test_own_encoding_round_trip),
        cmocka_unit_test(test_growth_and_sizes),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
