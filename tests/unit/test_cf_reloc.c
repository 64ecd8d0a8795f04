/* Unit tests of the cuckoo core's relocations (filter/cf_fixed.c): the
 * breadth-first search for a path to a free slot, the walk behind it, what
 * a full table does, and that the moves are a function of the filter's
 * state alone. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "cf.h"
#include "cf_items.h"
#include "cf_serial.h"

/* The encodings at bucket size 4: plain 8, 12, 16 and semi-sorted 9, 13,
 * 17 bits. */
static const uint32_t fps4[] = {8, 12, 16, 9, 13, 17};
#define NFPS4 (sizeof(fps4) / sizeof(fps4[0]))

static cf_filter_t *make(uint64_t cap, uint32_t b, uint32_t fp, uint32_t kicks,
                         uint32_t expansion, uint64_t seed)
{
    cf_params_t p = params_of(cap, expansion, seed);
    p.bucket_size = b;
    p.fp_bits = fp;
    p.encoding = enc_of(fp);
    p.max_kicks = kicks;
    cf_filter_t *f = NULL;
    assert_int_equal(cf_create(&p, &f), 0);
    return f;
}

/* Items i0.. added until the first failure (expansion 0); their count. */
static uint64_t fill(cf_filter_t *f, uint64_t i0, int *rc)
{
    uint64_t i = 0;
    while ((*rc = item_add(f, i0 + i)) == 0)
        i++;
    return i;
}

static double load_of(const cf_filter_t *f, uint64_t items)
{
    cf_stats_t st;
    cf_stats(f, &st);
    return (double)items / ((double)st.nbuckets * st.bucket_size);
}

static bool all_zero(const cf_filter_t *f)
{
    uint64_t off = 0;
    const void *p;
    size_t n;
    while ((n = cf_data_view(f, off, 1 << 20, &p)) > 0) {
        for (size_t i = 0; i < n; i++)
            if (((const unsigned char *)p)[i] != 0)
                return false;
        off += n;
    }
    return true;
}

/* Every item of a table filled to its first failure is still found, and
 * deleting each of them once leaves every slot empty: each relocation
 * path moved every fingerprint to its own other bucket (a fingerprint
 * moved anywhere else, or overwritten, would make a delete fail or leave
 * a slot behind). At b = 4 the table passes 97% before the first failure,
 * which takes paths of three and four moves. */
static void check_fill_and_empty(uint32_t b, uint32_t fp, uint64_t cap,
                                 double min_load)
{
    cf_filter_t *f = make(cap, b, fp, 500, 0, 3);
    int rc;
    uint64_t n = fill(f, 0, &rc);
    assert_int_equal(rc, -ENOSPC);
    double load = load_of(f, n);
    if (load < min_load)
        fail_msg("b=%u fp=%u: first failure at load %.4f, below %.4f", b, fp,
                 load, min_load);
    for (uint64_t i = 0; i < n; i++) {
        if (!item_has(f, i))
            fail_msg("b=%u fp=%u: item %llu lost", b, fp,
                     (unsigned long long)i);
    }
    for (uint64_t i = 0; i < n; i++) {
        if (item_del(f, i) != 1)
            fail_msg("b=%u fp=%u: item %llu not deleted", b, fp,
                     (unsigned long long)i);
    }
    assert_true(all_zero(f));
    cf_stats_t st;
    cf_stats(f, &st);
    assert_int_equal(st.items, 0);
    cf_free(f);
}

static void test_fill_and_empty_b4(void **state)
{
    (void)state;
    for (size_t j = 0; j < NFPS4; j++)
        check_fill_and_empty(4, fps4[j], 20000, 0.965);
}

/* The other bucket sizes the search serves (b <= 8), through the generic
 * slot loops for 3 and 6; the loads are what these sizes reach. */
static void test_fill_and_empty_other_sizes(void **state)
{
    (void)state;
    check_fill_and_empty(1, 8, 4000, 0.40);
    check_fill_and_empty(2, 16, 8000, 0.80);
    check_fill_and_empty(3, 12, 8000, 0.90);
    check_fill_and_empty(6, 8, 8000, 0.97);
    check_fill_and_empty(8, 12, 8000, 0.98);
}

/* The search goes more than one move deep even with the fewest kicks: with
 * MAXITERATIONS 1 a walk of one kick filled these tables to 77-83%, the
 * search (at most two moves) past 88%. */
static void test_one_kick_goes_two_deep(void **state)
{
    (void)state;
    for (size_t j = 0; j < NFPS4; j++) {
        cf_filter_t *f = make(20000, 4, fps4[j], 1, 0, 5);
        int rc;
        uint64_t n = fill(f, 0, &rc);
        assert_int_equal(rc, -ENOSPC);
        double load = load_of(f, n);
        if (load < 0.87)
            fail_msg("fp=%u: MAXITERATIONS 1 stopped at load %.4f", fps4[j],
                     load);
        for (uint64_t i = 0; i < n; i++) {
            assert_true(item_has(f, i));
        }
        cf_free(f);
    }
}

/* key_of(0 .. n - 1) into a one at a time and into b by cf_add_many(), 64
 * a call; when c is given, *c is a copy of a taken once half the items are
 * in, fed the rest one at a time with a's return codes; all_added: every
 * add of a and of b answers 0. */
static void feed_alike(cf_filter_t *a, cf_filter_t *b, uint64_t n,
                       cf_filter_t **c, bool all_added)
{
    const void *ptr[64];
    size_t len[64];
    int rc[64];
    uint64_t keys[64];
    for (uint64_t i = 0; i < n; i += 64) {
        size_t w = n - i < 64 ? (size_t)(n - i) : 64;
        for (size_t m = 0; m < w; m++) {
            keys[m] = key_of(i + m);
            ptr[m] = &keys[m];
            len[m] = sizeof(keys[m]);
            int ra = cf_add(a, &keys[m], sizeof(keys[m]));
            if (all_added)
                assert_int_equal(ra, 0);
            if (c != NULL && *c != NULL)
                assert_int_equal(cf_add(*c, &keys[m], sizeof(keys[m])), ra);
        }
        cf_add_many(b, w, ptr, len, false, NULL, rc);
        for (size_t m = 0; all_added && m < w; m++)
            assert_int_equal(rc[m], 0);
        if (c != NULL && *c == NULL && i + w >= n / 2)
            *c = copy_of(a);
    }
}

/* Two filters fed the same items, one at a time and batched, through loads
 * where every insert relocates, end byte for byte the same; so does a copy
 * taken through the serialised form half way and fed the rest (a replica,
 * a replayed log), and a filter that grew. */
static void test_deterministic(void **state)
{
    (void)state;
    for (size_t j = 0; j < NFPS4; j++) {
        for (uint32_t expansion = 0; expansion <= 2; expansion += 2) {
            cf_filter_t *a = make(10000, 4, fps4[j], 500, expansion, 11);
            cf_filter_t *b = make(10000, 4, fps4[j], 500, expansion, 11);
            uint64_t n = expansion ? 30000 : 10300; /* 98% of the first */
            cf_filter_t *c = NULL;
            feed_alike(a, b, n, &c, false);
            assert_non_null(c);
            assert_true(same_bytes(a, b));
            assert_true(same_bytes(a, c));
            cf_stats_t st;
            cf_stats(a, &st);
            if (expansion)
                assert_true(st.nfilters > 1);
            cf_free(a);
            cf_free(b);
            cf_free(c);
        }
    }
}

/* A table of more than 2^22 buckets keeps its entry out of the filter's
 * struct and its item count in 64 bits: the one-at-a-time insert's fast
 * path reads both from there, and leaves the same bytes and count as the
 * batched path. */
static void test_deterministic_large_table(void **state)
{
    (void)state;
    const uint32_t fps[] = {8, 9}; /* 4-byte buckets: the smallest table */
    const uint64_t cap = 16000000; /* 4.2M buckets */
    const uint64_t n = 200000;
    for (size_t j = 0; j < sizeof(fps) / sizeof(fps[0]); j++) {
        cf_filter_t *a = make(cap, 4, fps[j], 500, 0, 5);
        cf_filter_t *b = make(cap, 4, fps[j], 500, 0, 5);
        cf_stats_t st;
        cf_stats(a, &st);
        assert_true(st.nbuckets > (1u << 22));
        feed_alike(a, b, n, NULL, true);
        assert_true(same_bytes(a, b));
        cf_stats(a, &st);
        assert_int_equal(st.items, n);
        for (uint64_t i = 0; i < n; i += 997) {
            assert_true(item_has(a, i));
        }
        cf_free(a);
        cf_free(b);
    }
}

/* Once the first insert has failed (the victim stash is taken), a later one
 * either finds a free slot in its own buckets or fails and leaves the
 * filter exactly as it was; deletes make room again. */
static void test_full_table_unchanged(void **state)
{
    (void)state;
    for (size_t j = 0; j < NFPS4; j++) {
        cf_filter_t *f = make(5000, 4, fps4[j], 500, 0, 13);
        int rc;
        const uint64_t n0 = fill(f, 0, &rc);
        assert_int_equal(rc, -ENOSPC);
        uint64_t n = n0, failed = 0;
        for (uint64_t i = n0 + 1; i <= n0 + 200; i++) {
            cf_filter_t *before = copy_of(f);
            rc = item_add(f, i);
            if (rc == 0) {
                n++;
            } else {
                assert_int_equal(rc, -ENOSPC);
                assert_true(same_bytes(f, before));
                failed++;
            }
            cf_free(before);
        }
        assert_true(failed > 100); /* at 97%, most need a relocation */
        cf_stats_t st;
        cf_stats(f, &st);
        assert_int_equal(st.items, n);
        /* every item added: 0..n0 - 1 and those of n0 + 1..n0 + 200 that
         * went in */
        for (uint64_t i = 0; i <= n0 + 200; i++) {
            (void)item_del(f, i);
        }
        /* the victim went back into its buckets on the way */
        assert_true(all_zero(f));
        cf_stats(f, &st);
        assert_int_equal(st.items, 0);
        assert_int_equal(item_add(f, 0), 0);
        cf_free(f);
    }
}

/* One bucket: every fingerprint's other bucket is its own, so there is no
 * path anywhere; four items fit, the fifth goes to the victim stash, the
 * sixth fails. */
static void test_one_bucket(void **state)
{
    (void)state;
    cf_filter_t *f = make(1, 4, 12, 500, 0, 17);
    cf_stats_t st;
    cf_stats(f, &st);
    assert_int_equal(st.nbuckets, 1);
    int rc;
    assert_int_equal(fill(f, 0, &rc), 5);
    assert_int_equal(rc, -ENOSPC);
    for (uint64_t i = 0; i < 5; i++)
        assert_true(item_has(f, i));
    cf_free(f);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_fill_and_empty_b4),
        cmocka_unit_test(test_fill_and_empty_other_sizes),
        cmocka_unit_test(test_one_kick_goes_two_deep),
        cmocka_unit_test(test_deterministic),
        cmocka_unit_test(test_deterministic_large_table),
        cmocka_unit_test(test_full_table_unchanged),
        cmocka_unit_test(test_one_bucket),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
