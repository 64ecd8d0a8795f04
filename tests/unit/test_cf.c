/* Unit tests of the cuckoo filter core (filter/cf.h). */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <xxhash.h>

#include "cf.h"
#include "cf_items.h"
#include "cf_serial.h"
#include "cf_ss_table.h"
#include "cf_v1_fixture.h"

/* Items i are members, items i | 1 << 63 were never added. */

static cf_filter_t *make(uint64_t cap, uint32_t b, uint32_t fp,
                         uint32_t expansion)
{
    cf_params_t p = params_of(cap, expansion, 42);
    p.bucket_size = b;
    p.fp_bits = fp;
    p.encoding = enc_of(fp);
    cf_filter_t *f = NULL;
    assert_int_equal(cf_create(&p, &f), 0);
    assert_non_null(f);
    return f;
}

/* cf_add() of item i through the batched call with a growth room. */
static int add_many_u64(cf_filter_t *f, uint64_t i, uint64_t *room)
{
    uint64_t k = key_of(i);
    const void *p = &k;
    size_t len = sizeof(k);
    int rc = 1;
    cf_add_many(f, 1, &p, &len, false, room, &rc);
    return rc;
}

static void test_params(void **state)
{
    (void)state;
    cf_params_t p;
    cf_filter_t *f = (cf_filter_t *)1;
    cf_params_default(&p);
    assert_int_equal(p.bucket_size, 4);
    assert_int_equal(p.fp_bits, 12);
    assert_int_equal(p.max_kicks, 500);
    assert_int_equal(p.expansion, 1);
    assert_int_equal(cf_params_check(&p), 0);

    cf_params_t bad = p;
    bad.bucket_size = 0;
    assert_int_equal(cf_create(&bad, &f), -EINVAL);
    assert_null(f);
    bad = p;
    bad.bucket_size = 256;
    assert_int_equal(cf_params_check(&bad), -EINVAL);
    bad = p;
    bad.fp_bits = 10;
    assert_int_equal(cf_params_check(&bad), -EINVAL);
    /* semi-sorted: b = 4 and 9, 13 or 17 bits only; plain: 8, 12, 16 */
    assert_int_equal(p.encoding, CF_ENC_PLAIN);
    bad = p;
    bad.fp_bits = 13;
    assert_int_equal(cf_params_check(&bad), -EINVAL);
    bad.encoding = CF_ENC_SEMISORTED;
    assert_int_equal(cf_params_check(&bad), 0);
    bad.bucket_size = 2;
    assert_int_equal(cf_params_check(&bad), -EINVAL);
    bad.bucket_size = 4;
    bad.fp_bits = 12;
    assert_int_equal(cf_params_check(&bad), -EINVAL);
    bad.fp_bits = 17;
    assert_int_equal(cf_params_check(&bad), 0);
    bad.encoding = 2;
    assert_int_equal(cf_params_check(&bad), -EINVAL);
    bad = p;
    bad.max_kicks = 0;
    assert_int_equal(cf_params_check(&bad), -EINVAL);
    bad = p;
    bad.max_kicks = 65536;
    assert_int_equal(cf_params_check(&bad), -EINVAL);
    bad = p;
    bad.expansion = 32769;
    assert_int_equal(cf_params_check(&bad), -EINVAL);
    bad = p;
    bad.capacity = 0;
    assert_int_equal(cf_params_check(&bad), -EINVAL);
    bad = p;
    bad.max_filters = CF_MAX_FILTERS + 1;
    assert_int_equal(cf_params_check(&bad), -EINVAL);

    /* Absurd capacities are refused without allocating. */
    bad = p;
    bad.capacity = UINT64_MAX;
    assert_int_equal(cf_create(&bad, &f), -ENOMEM);
    assert_int_equal(cf_params_table_bytes(&bad), 0);
    /* A byte cap refuses a table larger than it. */
    bad = p;
    bad.capacity = 1000000;
    bad.max_bytes = 4096;
    assert_int_equal(cf_create(&bad, &f), -ENOMEM);

    /* 12-bit, b=4, 95% load: about 12.6 bits per item. */
    p.capacity = 1000000;
    uint64_t bytes = cf_params_table_bytes(&p);
    assert_true(bytes * 8.0 / 1e6 < 13.0);
    assert_true(bytes * 8.0 / 1e6 > 12.0);
    /* Semi-sorted 9/13/17 bits take what plain 8/12/16 take: 32, 48 and
     * 64-bit buckets. */
    for (uint32_t fp = 9; fp <= 17; fp += 4) {
        cf_params_t q = p, r = p;
        q.fp_bits = fp;
        q.encoding = CF_ENC_SEMISORTED;
        r.fp_bits = fp - 1;
        assert_int_equal(cf_params_table_bytes(&q), cf_params_table_bytes(&r));
        assert_int_equal(cf_slot_bits(CF_ENC_SEMISORTED, fp), fp - 1);
    }
    p.fp_bits = 13;
    p.encoding = CF_ENC_SEMISORTED;
    assert_true(cf_params_table_bytes(&p) * 8.0 / 1e6 <= 12.7);
    assert_string_equal(cf_encoding_name(CF_ENC_PLAIN), "plain");
    assert_string_equal(cf_encoding_name(CF_ENC_SEMISORTED), "semi-sorted");
}

/* The tables of cf_ss_table.h, against an enumeration of their own: every
 * sorted multiset of four prefixes has one rank below 3,876, the ranks
 * cover that range, and unrank inverts rank; the rest decodes as zeros. */
static void test_ss_tables(void **state)
{
    (void)state;
    static bool seen[4096];
    unsigned count = 0;
    memset(seen, 0, sizeof(seen));
    for (unsigned d = 0; d < 16; d++)
        for (unsigned c = 0; c <= d; c++)
            for (unsigned b = 0; b <= c; b++)
                for (unsigned a = 0; a <= b; a++) {
                    unsigned r = ss_rank[0][a] + ss_rank[1][b] + ss_rank[2][c] +
                                 ss_rank[3][d];
                    assert_true(r < CF_SS_MULTISETS);
                    assert_false(seen[r]);
                    seen[r] = true;
                    assert_int_equal(ss_unrank[r],
                                     a | b << 4 | c << 8 | d << 12);
                    count++;
                }
    assert_int_equal(count, CF_SS_MULTISETS);
    assert_int_equal(ss_unrank[0], 0); /* the empty bucket is all zeros */
    for (unsigned r = CF_SS_MULTISETS; r < 4096; r++)
        assert_int_equal(ss_unrank[r], 0);
}

static void test_error_rate(void **state)
{
    (void)state;
    assert_true(cf_error_bound(4, 8) > 0.031 && cf_error_bound(4, 8) < 0.032);
    assert_int_equal(cf_fp_bits_for_rate(4, 0.05), 8);
    assert_int_equal(cf_fp_bits_for_rate(4, 0.01), 12);
    assert_int_equal(cf_fp_bits_for_rate(4, 0.002), 12);
    assert_int_equal(cf_fp_bits_for_rate(4, 0.001), 16);
    assert_int_equal(cf_fp_bits_for_rate(4, 0.0002), 16);
    assert_int_equal(cf_fp_bits_for_rate(4, 0.0001), 0);
    assert_int_equal(cf_fp_bits_for_rate(4, 0), 0);
    assert_int_equal(cf_fp_bits_for_rate(4, 1.5), 0);

    /* The smallest encoding, plain or semi-sorted, plain among equals. */
    static const struct {
        uint32_t b;
        double rate;
        int rc;
        uint32_t enc, fp;
    } cases[] = {
        {4, 0.05, 0, CF_ENC_PLAIN, 8},         /* 3.1%: plain 8 */
        {4, 0.02, 0, CF_ENC_SEMISORTED, 9},    /* 1.57%: ss 9, 8 bits */
        {4, 0.01, 0, CF_ENC_PLAIN, 12},        /* as before */
        {4, 0.002, 0, CF_ENC_PLAIN, 12},       /* 0.195% */
        {4, 0.001, 0, CF_ENC_SEMISORTED, 13},  /* 0.098%, not plain 16 */
        {4, 0.0002, 0, CF_ENC_PLAIN, 16},      /* 0.0122% */
        {4, 0.0001, 0, CF_ENC_SEMISORTED, 17}, /* 0.0061%: met now */
        {4, 0.00005, -EINVAL, 0, 0},
        {2, 0.001, 0, CF_ENC_PLAIN, 12}, /* no ss at b = 2 */
        {2, 0.0001, 0, CF_ENC_PLAIN, 16},
        {2, 0.00005, -EINVAL, 0, 0},
        {8, 0.001, 0, CF_ENC_PLAIN, 16},
        {8, 0.0001, -EINVAL, 0, 0},
        {4, 0, -EINVAL, 0, 0},
        {4, 1.0, -EINVAL, 0, 0},
        {4, -0.1, -EINVAL, 0, 0},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        cf_params_t p;
        cf_params_default(&p);
        p.bucket_size = cases[i].b;
        assert_int_equal(cf_params_for_error_rate(&p, cases[i].rate),
                         cases[i].rc);
        if (cases[i].rc == 0) {
            assert_int_equal(p.encoding, cases[i].enc);
            assert_int_equal(p.fp_bits, cases[i].fp);
            assert_int_equal(cf_params_check(&p), 0);
            assert_true(cf_error_bound(p.bucket_size, p.fp_bits) <=
                        cases[i].rate);
        } else { /* unchanged */
            assert_int_equal(p.encoding, CF_ENC_PLAIN);
            assert_int_equal(p.fp_bits, 12);
        }
    }
    cf_params_t p;
    cf_params_default(&p);
    p.bucket_size = 0;
    assert_int_equal(cf_params_for_error_rate(&p, 0.01), -EINVAL);
}

/* 1M items: every one found; after deleting half, the rest all found. */
static void no_false_negatives(uint32_t b, uint32_t fp)
{
    const uint64_t n = 1000000;
    cf_filter_t *f = make(n, b, fp, 1);
    for (uint64_t i = 0; i < n; i++)
        assert_int_equal(item_add(f, i), 0);
    for (uint64_t i = 0; i < n; i++)
        if (!item_has(f, i))
            fail_msg("b=%u fp=%u: item %llu lost", b, fp,
                     (unsigned long long)i);
    for (uint64_t i = 0; i < n; i += 2) {
        uint64_t k = key_of(i);
        assert_int_equal(cf_del(f, &k, sizeof(k)), 1);
    }
    for (uint64_t i = 1; i < n; i += 2)
        if (!item_has(f, i))
            fail_msg("b=%u fp=%u: item %llu lost after deletes", b, fp,
                     (unsigned long long)i);
    cf_stats_t st;
    cf_stats(f, &st);
    assert_int_equal(st.items, n / 2);
    assert_int_equal(st.deleted, n / 2);
    cf_free(f);
}

static void test_no_false_negatives(void **state)
{
    (void)state;
    no_false_negatives(4, 12);
    no_false_negatives(4, 8);
    no_false_negatives(4, 16);
    no_false_negatives(2, 12);
    no_false_negatives(3, 12); /* generic path */
    no_false_negatives(4, 9);  /* semi-sorted */
    no_false_negatives(4, 13);
    no_false_negatives(4, 17);
}

/* Batched lookups agree with single ones, over one and several tables. */
static void test_batched(void **state)
{
    (void)state;
    enum { N = 20000, Q = 40000 };
    for (int run = 0; run < 4; run++) {
        int grown = run & 1;
        cf_filter_t *f = make(grown ? 2000 : N, 4, run < 2 ? 12 : 13, 2);
        uint64_t keys[Q];
        const void *ptrs[Q];
        size_t lens[Q];
        bool out[Q];
        int rc[N];
        for (size_t i = 0; i < Q; i++) {
            keys[i] = key_of(i);
            ptrs[i] = &keys[i];
            lens[i] = sizeof(keys[i]);
        }
        cf_add_many(f, N, ptrs, lens, false, NULL, rc);
        for (size_t i = 0; i < N; i++)
            assert_int_equal(rc[i], 0);
        cf_stats_t st;
        cf_stats(f, &st);
        assert_int_equal(st.nfilters > 1, grown);
        cf_exists_many(f, Q, ptrs, lens, out);
        for (size_t i = 0; i < Q; i++) {
            assert_int_equal(out[i], cf_exists(f, ptrs[i], lens[i]));
            if (i < N)
                assert_true(out[i]);
        }
        /* NX: the members exist, so nothing is added. */
        cf_add_many(f, 100, ptrs, lens, true, NULL, rc);
        for (size_t i = 0; i < 100; i++)
            assert_int_equal(rc[i], 0);
        cf_stats(f, &st);
        assert_int_equal(st.items, N);
        cf_free(f);
    }
}

static double measure_fpr(uint32_t b, uint32_t fp)
{
    const uint64_t n = 1000000;
    cf_filter_t *f = make(n, b, fp, 1);
    for (uint64_t i = 0; i < n; i++)
        assert_int_equal(item_add(f, i), 0);
    uint64_t fpos = 0;
    for (uint64_t i = 0; i < n; i++)
        fpos += item_has(f, i | 1ull << 63);
    cf_free(f);
    return (double)fpos / (double)n;
}

static void test_false_positive_rate(void **state)
{
    (void)state;
    static const uint32_t bs[] = {4, 2, 4};
    static const uint32_t widths[][3] = {{8, 12, 16}, {8, 12, 16}, {9, 13, 17}};
    for (size_t i = 0; i < 3; i++)
        for (size_t j = 0; j < 3; j++) {
            const uint32_t *fps = widths[i];
            double rate = measure_fpr(bs[i], fps[j]);
            double bound = cf_error_bound(bs[i], fps[j]);
            /* The bound is for a full table; allow statistical slack:
             * 10% relative plus a few counts out of a million. */
            printf("b=%u fp=%u: fpr %.6f bound %.6f\n", bs[i], fps[j], rate,
                   bound);
            assert_true(rate <= bound * 1.1 + 5e-6);
            /* and it is not trivially zero for the wide-open 8-bit case */
            if (fps[j] <= 9)
                assert_true(rate > bound / 10);
        }
}

/* A filter reserved for N takes N distinct items without growing. */
static void test_reserved_capacity(void **state)
{
    (void)state;
    static const uint64_t ns[] = {1000, 100000, 1000000};
    static const uint32_t bs[] = {2, 4, 8, 4, 4, 4};
    static const uint32_t fps[] = {12, 12, 12, 9, 13, 17};
    for (size_t i = 0; i < 3; i++)
        for (size_t j = 0; j < 6; j++) {
            cf_filter_t *f = make(ns[i], bs[j], fps[j], 0);
            for (uint64_t k = 0; k < ns[i]; k++)
                if (item_add(f, k + 7 * ns[i]) != 0)
                    fail_msg("N=%llu b=%u: insert %llu failed",
                             (unsigned long long)ns[i], bs[j],
                             (unsigned long long)k);
            cf_stats_t st;
            cf_stats(f, &st);
            assert_int_equal(st.nfilters, 1);
            assert_int_equal(st.items, ns[i]);
            cf_free(f);
        }
}

/* At b=4 the table fills past 94% before the first insert fails. */
static void test_load_factor(void **state)
{
    (void)state;
    static const uint32_t fps[] = {8, 12, 16, 9, 13, 17};
    for (size_t j = 0; j < 6; j++) {
        cf_filter_t *f = make(100000, 4, fps[j], 0);
        cf_stats_t st;
        cf_stats(f, &st);
        uint64_t slots = st.nbuckets * 4, i = 0;
        int rc;
        while ((rc = item_add(f, i)) == 0)
            i++;
        assert_int_equal(rc, -ENOSPC);
        double load = (double)i / (double)slots;
        printf("fp=%u: first failure at load %.4f\n", fps[j], load);
        assert_true(load >= 0.94);
        /* Nothing stored before the failure was lost. */
        for (uint64_t k = 0; k < i; k++)
            assert_true(item_has(f, k));
        cf_free(f);
    }
}

static void duplicates_count_delete(uint32_t fp)
{
    cf_filter_t *f = make(1000, 4, fp, 0);
    const char *k = "apple";
    assert_false(cf_exists(f, k, 5));
    assert_int_equal(cf_count(f, k, 5), 0);
    assert_int_equal(cf_del(f, k, 5), 0); /* absent */
    assert_int_equal(cf_add_nx(f, k, 5), 1);
    assert_int_equal(cf_add_nx(f, k, 5), 0);
    assert_int_equal(cf_add(f, k, 5), 0);
    assert_int_equal(cf_add(f, k, 5), 0);
    assert_int_equal(cf_count(f, k, 5), 3);
    /* Two buckets of four: eight copies fit, the ninth goes to the victim
     * stash, the tenth finds the filter full (no expansion). */
    for (int i = 3; i < 9; i++)
        assert_int_equal(cf_add(f, k, 5), 0);
    assert_int_equal(cf_count(f, k, 5), 9);
    assert_int_equal(cf_add(f, k, 5), -ENOSPC);
    assert_int_equal(cf_count(f, k, 5), 9);
    cf_stats_t st;
    cf_stats(f, &st);
    assert_int_equal(st.items, 9);
    for (int i = 9; i > 0; i--) {
        assert_int_equal(cf_del(f, k, 5), 1);
        assert_int_equal(cf_count(f, k, 5), (uint64_t)i - 1);
    }
    assert_int_equal(cf_del(f, k, 5), 0);
    assert_false(cf_exists(f, k, 5));
    cf_stats(f, &st);
    assert_int_equal(st.items, 0);
    assert_int_equal(st.deleted, 9);
    /* Binary-safe keys: embedded NULs and the empty key. */
    assert_int_equal(cf_add(f, "a\0b", 3), 0);
    assert_true(cf_exists(f, "a\0b", 3));
    assert_int_equal(cf_add(f, "", 0), 0);
    assert_true(cf_exists(f, "", 0));
    cf_free(f);
}

static void test_duplicates_count_delete(void **state)
{
    (void)state;
    duplicates_count_delete(16);
    duplicates_count_delete(8);
    duplicates_count_delete(9);
    duplicates_count_delete(13);
    duplicates_count_delete(17);
}

/* Semi-sorted buckets with mixed contents: copies of one item among
 * others whose prefixes sort before and after it, deleted in every order,
 * count exactly and never lose a neighbour. */
static void test_ss_mixed_buckets(void **state)
{
    (void)state;
    for (uint32_t fp = 9; fp <= 17; fp += 4) {
        cf_filter_t *f = make(200, 4, fp, 0);
        for (uint64_t round = 0; round < 50; round++) {
            /* 3 copies of a, 2 of b, 1 of c: at most 6 slots in a pair */
            uint64_t a = key_of(round * 3), b = key_of(round * 3 + 1),
                     c = key_of(round * 3 + 2);
            for (int i = 0; i < 3; i++)
                assert_int_equal(cf_add(f, &a, 8), 0);
            for (int i = 0; i < 2; i++)
                assert_int_equal(cf_add(f, &b, 8), 0);
            assert_int_equal(cf_add(f, &c, 8), 0);
            assert_true(cf_count(f, &a, 8) >= 3);
            assert_true(cf_count(f, &b, 8) >= 2);
            assert_int_equal(cf_del(f, &b, 8), 1);
            assert_true(cf_exists(f, &a, 8) && cf_exists(f, &b, 8) &&
                        cf_exists(f, &c, 8));
            assert_int_equal(cf_del(f, &a, 8), 1);
            assert_int_equal(cf_del(f, &c, 8), 1);
            assert_int_equal(cf_del(f, &a, 8), 1);
            assert_int_equal(cf_del(f, &b, 8), 1);
            assert_true(cf_exists(f, &a, 8));
            assert_int_equal(cf_del(f, &a, 8), 1);
        }
        cf_stats_t st;
        cf_stats(f, &st);
        assert_int_equal(st.items, 0);
        assert_int_equal(st.deleted, 300);
        assert_int_equal(st.encoding, CF_ENC_SEMISORTED);
        /* what stays after deleting everything is an empty table */
        const void *p;
        size_t n = cf_data_view(f, 0, SIZE_MAX, &p);
        assert_int_equal(n, cf_data_len(f));
        for (size_t i = 0; i < n; i++)
            assert_int_equal(((const uint8_t *)p)[i], 0);
        cf_free(f);
    }
}

/* One item added over and over grows the filter up to the sub-filter cap,
 * checked per insert: 140,000 copies never pass it. */
static void test_growth_cap(void **state)
{
    (void)state;
    cf_filter_t *f = make(8, 4, 12, 1);
    int rc = 0;
    uint64_t i;
    for (i = 0; i < 140000; i++)
        if ((rc = cf_add(f, "x", 1)) != 0)
            break;
    assert_int_equal(rc, -EOVERFLOW);
    cf_stats_t st;
    cf_stats(f, &st);
    assert_int_equal(st.nfilters, CF_DEFAULT_MAX_FILTERS);
    /* each table holds its two buckets' copies plus one in its victim
     * stash; small tables may have both candidates in one bucket */
    assert_true(st.items >= (uint64_t)CF_DEFAULT_MAX_FILTERS * 5);
    assert_true(st.items <= (uint64_t)CF_DEFAULT_MAX_FILTERS * 9);
    assert_int_equal(cf_count(f, "x", 1), st.items);
    cf_free(f);

    /* Expansion 2 doubles each new table. */
    for (uint32_t fp = 12; fp <= 13; fp++) {
        f = make(1000, 4, fp, 2);
        for (i = 0; i < 10000; i++)
            assert_int_equal(item_add(f, i), 0);
        cf_stats(f, &st);
        assert_true(st.nfilters >= 3);
        assert_int_equal(st.capacity, 1000ull * ((1ull << st.nfilters) - 1));
        for (i = 0; i < 10000; i++)
            assert_true(item_has(f, i));
        cf_free(f);
    }

    /* A room per call stops growth with -ENOMEM and keeps what is stored;
     * what a call's growth takes comes off its room. */
    f = make(1000, 4, 12, 4);
    uint64_t room = 16384, size = cf_size_bytes(f);
    for (i = 0; (rc = add_many_u64(f, i, &room)) == 0; i++)
        ;
    assert_int_equal(rc, -ENOMEM);
    assert_true(cf_size_bytes(f) > size); /* one 4x table fitted */
    assert_int_equal(room, 16384 - (cf_size_bytes(f) - size));
    for (uint64_t k = 0; k < i; k++)
        assert_true(item_has(f, k));
    size = cf_size_bytes(f);
    cf_stats(f, &st);
    uint64_t items = st.items, tables = st.nfilters;

    /* No room refuses growth the same way and leaves the filter as it
     * was; more room lets growth go on. */
    room = 0;
    assert_int_equal(add_many_u64(f, i, &room), -ENOMEM);
    assert_int_equal(cf_size_bytes(f), size);
    cf_stats(f, &st);
    assert_int_equal(st.items, items);
    assert_int_equal(st.nfilters, tables);
    assert_int_equal(add_many_u64(f, i, NULL), 0);
    assert_true(cf_size_bytes(f) > size);
    for (uint64_t k = 0; k <= i; k++)
        assert_true(item_has(f, k));
    cf_free(f);

    /* The create-time cap. */
    cf_params_t p;
    cf_params_default(&p);
    p.capacity = 1000;
    p.max_bytes = cf_params_table_bytes(&p);
    assert_int_equal(cf_create(&p, &f), -ENOMEM);
    p.max_bytes += 64;
    assert_int_equal(cf_create(&p, &f), 0);
    cf_free(f);
}

/* Unusual shapes go through the generic path and still work. */
/* The memory a filter reports is its struct (with the entry of its first
 * table), the array of entries once it grew, and the tables: a small
 * filter stays small, each growth adds exactly one table and one entry
 * (the first, two), and a full chain's header fits CF_HEADER_MAX. */
static void test_size_tracks_tables(void **state)
{
    (void)state;
    cf_params_t p;
    cf_params_default(&p);
    p.capacity = 100;
    p.max_filters = CF_MAX_FILTERS;
    uint64_t tb = cf_params_table_bytes(&p);
    cf_filter_t *f = NULL;
    assert_int_equal(cf_create(&p, &f), 0);
    uint64_t size1 = cf_size_bytes(f);
    cf_stats_t st;
    cf_stats(f, &st);
    assert_int_equal(st.size_bytes, size1);
    /* The struct (with the one table's entry inside), nothing else: not
     * CF_MAX_FILTERS entries, no copy of the shape's constants. */
    assert_true(size1 > tb);
    assert_true(size1 - tb <= 80);

    uint64_t i = 0, entry = 0;
    for (uint32_t n = 2; n <= CF_MAX_FILTERS; n++) {
        uint64_t before = cf_size_bytes(f);
        for (;;) {
            assert_int_equal(item_add(f, i++), 0);
            cf_stats(f, &st);
            if (st.nfilters == n)
                break;
            assert_int_equal(cf_size_bytes(f), before);
        }
        uint64_t delta = cf_size_bytes(f) - before;
        assert_true(delta > tb); /* expansion 1: the same table again */
        /* The first growth moves the one table's entry out of the struct
         * into an array of two; each later one adds one entry. */
        if (entry == 0)
            entry = (delta - tb) / 2;
        assert_int_equal(delta - tb, n == 2 ? 2 * entry : entry);
        assert_int_equal(cf_size_bytes(f), size1 + (n - 1) * tb + n * entry);
    }
    assert_true(entry >= 32 && entry <= 128);
    /* Fill the last table: the chain ends there, the size stays. */
    uint64_t full = cf_size_bytes(f);
    int rc;
    while ((rc = item_add(f, i)) == 0)
        i++;
    assert_int_equal(rc, -EOVERFLOW);
    assert_int_equal(cf_size_bytes(f), full);
    assert_int_equal(cf_header_len(f), CF_HEADER_MAX);
    assert_true(cf_is_header_len(CF_HEADER_MAX));
    for (uint64_t k = 0; k < i; k++)
        assert_true(item_has(f, k));
    cf_free(f);
}

/* The lengths of a header chunk (commands/ tells one apart by it):
 * RedisBloom's and cf_header_len()'s (encode() checks those of every
 * filter serialised here), none between or past them. */
static void test_header_lengths(void **state)
{
    (void)state;
    static const size_t yes[] = {CF_RB_HEADER_LEN, 56, 96, 128, 160,
                                 CF_HEADER_MAX};
    static const size_t no[] = {0,  1,  37,  39,  55,  57,  64,
                                95, 97, 127, 129, 200, 4096};
    for (size_t i = 0; i < sizeof(yes) / sizeof(yes[0]); i++)
        assert_true(cf_is_header_len(yes[i]));
    for (size_t i = 0; i < sizeof(no) / sizeof(no[0]); i++)
        assert_false(cf_is_header_len(no[i]));
    assert_false(cf_is_header_len(CF_HEADER_MAX - 31));
    assert_false(cf_is_header_len(CF_HEADER_MAX + 32));
}

static void test_generic_shapes(void **state)
{
    (void)state;
    static const uint32_t bs[] = {1, 3, 5, 8, 16, 255};
    static const uint32_t fps[] = {8, 12, 16};
    for (size_t i = 0; i < 6; i++)
        for (size_t j = 0; j < 3; j++) {
            cf_filter_t *f = make(3000, bs[i], fps[j], 2);
            for (uint64_t k = 0; k < 3000; k++)
                assert_int_equal(item_add(f, k), 0);
            for (uint64_t k = 0; k < 3000; k++)
                assert_true(item_has(f, k));
            uint64_t fpos = 0;
            for (uint64_t k = 0; k < 3000; k++)
                fpos += item_has(f, k | 1ull << 63);
            /* bounded by the per-table bound times the tables probed */
            cf_stats_t st;
            cf_stats(f, &st);
            assert_true((double)fpos / 3000 <=
                        cf_error_bound(bs[i], fps[j]) * st.nfilters * 1.5 +
                            0.01);
            for (uint64_t k = 0; k < 3000; k += 3) {
                uint64_t key = key_of(k);
                assert_int_equal(cf_del(f, &key, 8), 1);
            }
            for (uint64_t k = 1; k < 3000; k += 3)
                assert_true(item_has(f, k));
            cf_free(f);
        }
}

/* Serialises f into one buffer: header then data. */
static uint8_t *encode(const cf_filter_t *f, size_t *len)
{
    size_t h = cf_header_len(f);
    assert_true(cf_is_header_len(h));
    uint64_t d = cf_data_len(f);
    uint8_t *buf = malloc(h + d);
    assert_non_null(buf);
    cf_header_write(f, buf);
    /* read the data through views of at most 1000 bytes, as SCANDUMP does */
    uint64_t off = 0;
    while (off < d) {
        const void *p;
        size_t n = cf_data_view(f, off, 1000, &p);
        assert_true(n > 0 && n <= 1000);
        memcpy(buf + h + off, p, n);
        off += n;
    }
    const void *p;
    assert_int_equal(cf_data_view(f, d, 1000, &p), 0);
    *len = h + d;
    return buf;
}

/* Loads an encoding; chunks of 777 bytes. */
static int decode(const uint8_t *buf, size_t len, cf_filter_t **out)
{
    size_t used;
    cf_limits_t lim = {.max_bytes = 64u << 20};
    int rc = cf_load_header(buf, len, &lim, out, &used);
    if (rc < 0)
        return rc;
    uint64_t d = cf_data_len(*out);
    if (len - used != d) {
        cf_free(*out);
        *out = NULL;
        return -EINVAL;
    }
    for (uint64_t off = 0; off < d; off += 777) {
        size_t n = d - off < 777 ? (size_t)(d - off) : 777;
        assert_int_equal(cf_load_data(*out, off, buf + used + off, n), 0);
    }
    return 0;
}

static void assert_same_answers(const cf_filter_t *a, const cf_filter_t *b,
                                uint64_t n)
{
    for (uint64_t i = 0; i < n; i++) {
        assert_int_equal(item_has(a, i), item_has(b, i));
        assert_int_equal(item_has(a, i | 1ull << 63),
                         item_has(b, i | 1ull << 63));
    }
    cf_stats_t sa, sb;
    cf_stats(a, &sa);
    cf_stats(b, &sb);
    assert_memory_equal(&sa, &sb, sizeof(sa));
}

/* A filter that never grew keeps its one table in its own allocation; the
 * first growth moves the tables' entries to a chained array, and lookups,
 * deletes and the reported size follow. A filter made again with the same
 * parameters (a deleted key reserved anew) is small again, and so is one
 * loaded from the dump of a one-table filter. */
static void test_inline_table_grows_and_shrinks(void **state)
{
    (void)state;
    cf_filter_t *f = make(100, 4, 12, 2);
    uint64_t small = cf_size_bytes(f);
    cf_params_t p;
    cf_params_default(&p);
    p.capacity = 100;
    uint64_t tb = cf_params_table_bytes(&p);
    assert_true(small >= tb && small - tb <= 80);

    size_t len;
    uint8_t *buf = encode(f, &len);
    cf_filter_t *g = NULL;
    assert_int_equal(decode(buf, len, &g), 0);
    assert_int_equal(cf_size_bytes(g), small);
    free(buf);
    cf_free(g);

    cf_stats_t st;
    uint64_t n = 0;
    do {
        assert_int_equal(item_add(f, n++), 0);
        cf_stats(f, &st);
    } while (st.nfilters == 1);
    /* grow well into the second table, then further */
    for (uint64_t k = 0; k < 300; k++)
        assert_int_equal(item_add(f, n++), 0);
    cf_stats(f, &st);
    assert_true(st.nfilters >= 2);
    assert_true(cf_size_bytes(f) > small + tb);
    /* what the size was at each number of tables */
    assert_int_equal(cf_nfilters(f), st.nfilters);
    assert_int_equal(cf_size_bytes_at(f, 1), small);
    assert_int_equal(cf_size_bytes_at(f, cf_nfilters(f)), cf_size_bytes(f));
    uint64_t at2 = cf_size_bytes_at(f, 2);
    for (;;) {
        uint32_t nf = cf_nfilters(f);
        uint64_t before = cf_size_bytes(f);
        assert_int_equal(item_add(f, n++), 0);
        if (cf_nfilters(f) != nf) {
            assert_int_equal(cf_size_bytes_at(f, nf), before);
            break;
        }
    }
    assert_int_equal(cf_size_bytes_at(f, 2), at2);
    for (uint64_t k = 0; k < n; k++)
        assert_true(item_has(f, k));
    buf = encode(f, &len);
    assert_int_equal(decode(buf, len, &g), 0);
    assert_same_answers(f, g, n);
    free(buf);
    cf_free(g);
    uint64_t gone = 0;
    for (uint64_t k = 0; k < n; k++) {
        uint64_t key = key_of(k);
        gone += (uint64_t)cf_del(f, &key, sizeof(key));
    }
    assert_int_equal(gone, n);
    cf_stats(f, &st);
    assert_int_equal(st.items, 0);
    cf_free(f);

    f = make(100, 4, 12, 2);
    assert_int_equal(cf_size_bytes(f), small);
    cf_free(f);
}

/* Host bytes before the filter (cf_resize_extra): a move, growth into
 * more tables and a mapped first table leave the filter answering the
 * same; the host bytes are the host's to write (they end at the filter's
 * address, and the sanitizers watch their bounds); the filter's size does
 * not count them; cf_free_extra() frees the whole block. */
static void check_extra(cf_filter_t *f, uint64_t fill)
{
    uint64_t size = cf_size_bytes(f);
    assert_int_equal(cf_resize_extra(&f, 0, 13), -EINVAL); /* unaligned */
    assert_int_equal(cf_resize_extra(&f, 0, 16), 0);
    memset((uint8_t *)f - 16, 'a', 16);
    assert_int_equal(cf_size_bytes(f), size);
    for (uint64_t k = 0; k < fill; k++)
        assert_int_equal(item_add(f, k), 0);
    /* growth and inserts leave the host bytes alone */
    for (int i = 1; i <= 16; i++)
        assert_int_equal(((uint8_t *)f)[-i], 'a');
    /* bigger (usually a move), then smaller again, then none */
    assert_int_equal(cf_resize_extra(&f, 16, 4096), 0);
    memset((uint8_t *)f - 4096, 'b', 4096);
    for (uint64_t k = 0; k < fill; k++)
        assert_true(item_has(f, k));
    assert_int_equal(item_add(f, fill), 0);
    assert_true(item_has(f, fill));
    assert_int_equal(((uint8_t *)f)[-4096], 'b');
    assert_int_equal(cf_resize_extra(&f, 4096, 8), 0);
    memset((uint8_t *)f - 8, 'c', 8);
    for (uint64_t k = 0; k <= fill; k++)
        assert_true(item_has(f, k));
    uint64_t key = key_of(0);
    assert_int_equal(cf_del(f, &key, sizeof(key)), 1);
    assert_int_equal(((uint8_t *)f)[-8], 'c');
    assert_int_equal(cf_resize_extra(&f, 8, 24), 0);
    for (uint64_t k = 1; k <= fill; k++)
        assert_true(item_has(f, k));
    cf_free_extra(f, 24);
}

static void test_host_bytes(void **state)
{
    (void)state;
    check_extra(make(100, 4, 12, 1), 50);       /* inline, one table */
    check_extra(make(100, 4, 12, 2), 400);      /* inline, grown */
    check_extra(make(100, 4, 13, 1), 400);      /* semi-sorted, grown */
    check_extra(make(100, 3, 12, 1), 250);      /* generic shape, grown */
    check_extra(make(2000000, 4, 12, 1), 1000); /* mapped first table */
}

/* Every fast shape, and a few generic ones, filled until full in a table
 * of its own allocation and emptied again: the pad after the table is
 * what the shape's widest access needs (the sanitizers watch the end of
 * the allocation). */
static void test_inline_every_shape(void **state)
{
    (void)state;
    static const uint32_t widths[] = {8, 12, 16};
    for (uint32_t b = 1; b <= 9; b++)
        for (size_t w = 0; w < 4; w++) {
            uint32_t fp = w < 3 ? widths[w] : 13;
            if (w == 3 && b != 4)
                continue;
            cf_filter_t *f = make(2 * b, b, fp, 0);
            uint64_t n = 0;
            while (item_add(f, n) == 0)
                n++;
            assert_true(n >= 1);
            for (uint64_t k = 0; k < n; k++)
                assert_true(item_has(f, k));
            for (uint64_t k = 0; k < n; k++) {
                uint64_t key = key_of(k);
                assert_int_equal(cf_del(f, &key, sizeof(key)), 1);
            }
            cf_free(f);
        }
}

static void test_serialise_round_trip(void **state)
{
    (void)state;
    static const uint32_t bs[] = {4, 2, 3, 4};
    static const uint32_t widths[][3] = {
        {8, 12, 16}, {8, 12, 16}, {8, 12, 16}, {9, 13, 17}};
    for (size_t i = 0; i < 4; i++)
        for (size_t j = 0; j < 3; j++)
            for (int grown = 0; grown < 2; grown++) {
                const uint32_t *fps = widths[i];
                uint64_t n = 5000;
                cf_filter_t *f = make(grown ? 500 : n, bs[i], fps[j], 2);
                for (uint64_t k = 0; k < n; k++)
                    assert_int_equal(item_add(f, k), 0);
                /* In a chain of tables a delete may take a colliding
                 * fingerprint from another table than its item's, so a
                 * later delete can miss: only one table promises all. */
                for (uint64_t k = 0; k < n; k += 5) {
                    uint64_t key = key_of(k);
                    if (cf_del(f, &key, 8) != 1 && !grown)
                        fail_msg("b=%u fp=%u: %llu not deleted", bs[i], fps[j],
                                 (unsigned long long)k);
                }
                size_t len;
                uint8_t *buf = encode(f, &len);
                cf_filter_t *g = NULL;
                assert_int_equal(decode(buf, len, &g), 0);
                assert_same_answers(f, g, n);
                /* and the copy keeps working as a filter */
                assert_int_equal(item_add(g, n + 1), 0);
                assert_true(item_has(g, n + 1));
                free(buf);
                cf_free(g);
                cf_free(f);
            }
}

/* A filter whose victim stash is in use survives the round trip, also
 * with a fingerprint wider than 16 bits. */
static void test_serialise_victim(void **state)
{
    (void)state;
    static const uint32_t fps[] = {12, 16, 13, 17};
    for (size_t j = 0; j < 4; j++) {
        cf_filter_t *f = make(1000, 4, fps[j], 0);
        /* a key whose fingerprint needs all 17 bits, for the 17-bit run */
        char k[16];
        int klen = 0;
        for (unsigned n = 0;; n++) {
            klen = snprintf(k, sizeof(k), "v%u", n);
            if ((XXH3_64bits_withSeed(k, (size_t)klen, 42) & 0x1FFFF) > 0x10000)
                break;
        }
        for (int i = 0; i < 9; i++)
            assert_int_equal(cf_add(f, k, (size_t)klen), 0);
        size_t len;
        uint8_t *buf = encode(f, &len);
        cf_filter_t *g = NULL;
        assert_int_equal(decode(buf, len, &g), 0);
        assert_int_equal(cf_count(g, k, (size_t)klen), 9);
        assert_int_equal(cf_add(g, k, (size_t)klen), -ENOSPC);
        /* a delete from a bucket lets the victim back in */
        assert_int_equal(cf_del(g, k, (size_t)klen), 1);
        assert_int_equal(cf_count(g, k, (size_t)klen), 8);
        assert_int_equal(cf_add(g, k, (size_t)klen), 0);
        assert_int_equal(cf_count(g, k, (size_t)klen), 9);
        free(buf);
        cf_free(g);
        cf_free(f);
    }
}

/* Loads a possibly hostile encoding; when accepted, queries and writes the
 * filter (ASan/UBSan catch what must not happen) and returns true. */
static bool load_and_use(const uint8_t *buf, size_t len)
{
    cf_filter_t *g = NULL;
    if (decode(buf, len, &g) != 0)
        return false;
    for (uint64_t k = 0; k < 50; k++) {
        (void)item_has(g, k);
        (void)item_add(g, k + 5000);
        uint64_t key = key_of(k);
        (void)cf_count(g, &key, 8);
        (void)cf_del(g, &key, 8);
    }
    cf_free(g);
    return true;
}

static void serialise_hostile(uint32_t fp)
{
    cf_filter_t *f = make(300, 4, fp, 2);
    for (uint64_t k = 0; k < 1000; k++)
        assert_int_equal(item_add(f, k), 0);
    size_t len;
    uint8_t *buf = encode(f, &len);
    cf_filter_t *g = NULL;

    /* Every truncation is rejected. */
    for (size_t cut = 0; cut < len; cut++) {
        uint8_t *copy = malloc(cut + 1);
        memcpy(copy, buf, cut);
        assert_true(decode(copy, cut, &g) < 0);
        assert_null(g);
        free(copy);
    }

    /* Random mutations: rejected, or loaded into a filter that answers
     * queries without crashing (run under ASan/UBSan in CI). */
    srand(7);
    size_t hlen = cf_header_len(f);
    int loaded = 0, refused = 0;
    for (int round = 0; round < 10000; round++) {
        uint8_t *copy = malloc(len);
        memcpy(copy, buf, len);
        int nflips = 1 + rand() % 4;
        for (int k = 0; k < nflips; k++) {
            /* most flips land in the header, where they matter */
            size_t at =
                (rand() % 4) ? (size_t)rand() % hlen : (size_t)rand() % len;
            copy[at] ^= (uint8_t)(1 + rand() % 255);
        }
        if (load_and_use(copy, len))
            loaded++;
        else
            refused++;
        free(copy);
    }
    /* The header checksum rejects header flips; data flips load. */
    assert_true(refused > 5000);
    assert_true(loaded > 100);

    /* The checksum is no defence against a client who computes it: flip
     * header bytes and fix the checksum up, so that the field checks
     * themselves must refuse what they cannot use. */
    loaded = refused = 0;
    for (int round = 0; round < 10000; round++) {
        uint8_t *copy = malloc(len);
        memcpy(copy, buf, len);
        int nflips = 1 + rand() % 3;
        for (int k = 0; k < nflips; k++)
            copy[(size_t)rand() % (hlen - 8)] ^= (uint8_t)(1 + rand() % 255);
        uint64_t sum = XXH3_64bits(copy, hlen - 8);
        for (int i = 0; i < 8; i++)
            copy[hlen - 8 + i] = (uint8_t)(sum >> (8 * i));
        if (load_and_use(copy, len))
            loaded++;
        else
            refused++;
        free(copy);
    }
    /* Most header fields are checked (magic, version, shape, victim,
     * padding), a few are free (counters, seed, kicks): both happen. */
    assert_true(refused > 5000);
    assert_true(loaded > 100);

    /* A well-formed header that asks for 64 TB is refused, not allocated. */
    uint8_t hdr[256];
    cf_filter_t *small = make(10, 4, 12, 1);
    size_t sh = cf_header_len(small);
    cf_header_write(small, hdr);
    uint64_t nb = 1ull << 46;
    for (int i = 0; i < 8; i++)
        hdr[56 + i] = (uint8_t)(nb >> (8 * i));
    /* fix the header checksum so only the size check can refuse it */
    uint64_t sum = XXH3_64bits(hdr, sh - 8);
    for (int i = 0; i < 8; i++)
        hdr[sh - 8 + i] = (uint8_t)(sum >> (8 * i));
    size_t used;
    cf_limits_t lim = {.max_bytes = 0};
    assert_int_equal(cf_load_header(hdr, sh, &lim, &g, &used), -ENOMEM);
    /* and a modest one over the caller's limit too */
    nb = 1ull << 20;
    for (int i = 0; i < 8; i++)
        hdr[56 + i] = (uint8_t)(nb >> (8 * i));
    sum = XXH3_64bits(hdr, sh - 8);
    for (int i = 0; i < 8; i++)
        hdr[sh - 8 + i] = (uint8_t)(sum >> (8 * i));
    lim.max_bytes = 1u << 20;
    assert_int_equal(cf_load_header(hdr, sh, &lim, &g, &used), -ENOMEM);
    lim.max_bytes = 64u << 20;
    assert_int_equal(cf_load_header(hdr, sh, &lim, &g, &used), 0);
    assert_int_equal(used, sh);
    /* data ranges outside the tables are refused */
    uint64_t d = cf_data_len(g);
    assert_int_equal(cf_load_data(g, d, "x", 1), -EINVAL);
    assert_int_equal(cf_load_data(g, UINT64_MAX, "x", 1), -EINVAL);
    assert_int_equal(cf_load_data(g, d - 1, "x", 1), 0);
    cf_free(g);
    cf_free(small);
    free(buf);
    cf_free(f);
}

static void test_serialise_hostile(void **state)
{
    (void)state;
    serialise_hostile(12);
    serialise_hostile(13);
}

/* Fixes up the header checksum of an encoding. */
static void fix_sum(uint8_t *buf)
{
    set_header_sum(buf, (size_t)buf[6] | (size_t)buf[7] << 8);
}

/* The encoding travels in the header and is checked against the shape: a
 * header that names an unknown encoding, semi-sorted at a width or bucket
 * size it has not, or plain at a semi-sorted width, is refused. Tables of
 * any bytes load, and garbage in the 12-bit ranks (3,876..4,095 name no
 * multiset) is answered safely. */
static void test_serialise_encoding(void **state)
{
    (void)state;
    cf_filter_t *f = make(1000, 4, 13, 0);
    for (uint64_t k = 0; k < 900; k++)
        assert_int_equal(item_add(f, k), 0);
    size_t len;
    uint8_t *buf = encode(f, &len);
    assert_int_equal(buf[4], 2); /* version */
    assert_int_equal(buf[14], CF_ENC_SEMISORTED);
    cf_filter_t *g = NULL;
    assert_int_equal(decode(buf, len, &g), 0);
    cf_stats_t st;
    cf_stats(g, &st);
    assert_int_equal(st.encoding, CF_ENC_SEMISORTED);
    assert_int_equal(st.fp_bits, 13);
    cf_free(g);

    static const struct {
        uint8_t enc, fp;
    } bad[] = {{2, 13}, {255, 13}, {0, 13}, {1, 12}, {1, 16}, {1, 10}};
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        uint8_t *copy = malloc(len);
        memcpy(copy, buf, len);
        copy[14] = bad[i].enc;
        copy[12] = bad[i].fp;
        fix_sum(copy);
        g = (cf_filter_t *)1;
        assert_int_equal(decode(copy, len, &g), -EINVAL);
        assert_null(g);
        free(copy);
    }
    /* bucket size 2 with a semi-sorted encoding; byte 15 reserved */
    uint8_t *copy = malloc(len);
    memcpy(copy, buf, len);
    copy[8] = 2;
    fix_sum(copy);
    assert_int_equal(decode(copy, len, &g), -EINVAL);
    memcpy(copy, buf, len);
    copy[15] = 1;
    fix_sum(copy);
    assert_int_equal(decode(copy, len, &g), -EINVAL);
    /* the same bytes named plain 12-bit (also 48-bit buckets): another
     * filter, but a well-formed one */
    memcpy(copy, buf, len);
    copy[14] = CF_ENC_PLAIN;
    copy[12] = 12;
    fix_sum(copy);
    assert_true(load_and_use(copy, len));

    /* every data byte 0xFF: all ranks invalid (4,095) */
    size_t hlen = cf_header_len(f);
    memcpy(copy, buf, len);
    memset(copy + hlen, 0xFF, len - hlen);
    assert_true(load_and_use(copy, len));
    /* random data bytes */
    srand(11);
    for (int round = 0; round < 20; round++) {
        for (size_t i = hlen; i < len; i++)
            copy[i] = (uint8_t)rand();
        assert_true(load_and_use(copy, len));
    }
    free(copy);
    free(buf);
    cf_free(f);
}

/* Encodings written by version 1 of the serialisation still load, and
 * answer as the filters they were made from (see cf_v1_fixture.h). */
static void test_load_version1(void **state)
{
    (void)state;
    cf_filter_t *g = NULL;
    cf_stats_t st;

    assert_int_equal(decode(v1_grown, sizeof(v1_grown), &g), 0);
    cf_stats(g, &st);
    assert_int_equal(st.nfilters, 3);
    assert_int_equal(st.items, 180);
    assert_int_equal(st.deleted, 20);
    assert_int_equal(st.fp_bits, 12);
    assert_int_equal(st.bucket_size, 4);
    assert_int_equal(st.expansion, 2);
    assert_int_equal(st.seed, 42);
    for (uint64_t k = 0; k < 200; k++)
        if (k % 10 != 0)
            assert_true(item_has(g, k));
    /* and it keeps working: a write, then a round trip */
    assert_int_equal(item_add(g, 1000), 0);
    size_t len;
    uint8_t *buf = encode(g, &len);
    cf_filter_t *h = NULL;
    assert_int_equal(decode(buf, len, &h), 0);
    assert_same_answers(g, h, 1001);
    free(buf);
    cf_free(h);
    cf_free(g);

    assert_int_equal(decode(v1_victim, sizeof(v1_victim), &g), 0);
    cf_stats(g, &st);
    assert_int_equal(st.items, 13);
    assert_int_equal(st.fp_bits, 16);
    assert_int_equal(cf_count(g, "v", 1), 9);
    assert_true(item_has(g, 0) && item_has(g, 2) && item_has(g, 3) &&
                item_has(g, 4));
    cf_free(g);

    assert_int_equal(decode(v1_b3, sizeof(v1_b3), &g), 0);
    cf_stats(g, &st);
    assert_int_equal(st.items, 60);
    assert_int_equal(st.nfilters, 2);
    assert_int_equal(st.bucket_size, 3);
    assert_int_equal(st.fp_bits, 8);
    for (uint64_t k = 0; k < 60; k++)
        assert_true(item_has(g, k));
    cf_free(g);

    /* Version 1 kept its reserved bytes zero; a set one is refused even
     * with the checksum fixed up. */
    uint8_t copy[sizeof(v1_b3)];
    memcpy(copy, v1_b3, sizeof(copy));
    size_t hlen = (size_t)copy[6] | (size_t)copy[7] << 8;
    copy[14] = 1;
    uint64_t sum = XXH3_64bits(copy, hlen - 8);
    for (int i = 0; i < 8; i++)
        copy[hlen - 8 + i] = (uint8_t)(sum >> (8 * i));
    assert_int_equal(decode(copy, sizeof(copy), &g), -EINVAL);
    assert_null(g);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_params),
        cmocka_unit_test(test_error_rate),
        cmocka_unit_test(test_no_false_negatives),
        cmocka_unit_test(test_batched),
        cmocka_unit_test(test_false_positive_rate),
        cmocka_unit_test(test_reserved_capacity),
        cmocka_unit_test(test_load_factor),
        cmocka_unit_test(test_duplicates_count_delete),
        cmocka_unit_test(test_growth_cap),
        cmocka_unit_test(test_size_tracks_tables),
        cmocka_unit_test(test_inline_table_grows_and_shrinks),
        cmocka_unit_test(test_inline_every_shape),
        cmocka_unit_test(test_host_bytes),
        cmocka_unit_test(test_header_lengths),
        cmocka_unit_test(test_generic_shapes),
        cmocka_unit_test(test_serialise_round_trip),
        cmocka_unit_test(test_serialise_victim),
        cmocka_unit_test(test_serialise_hostile),
        cmocka_unit_test(test_load_version1),
        cmocka_unit_test(test_ss_tables),
        cmocka_unit_test(test_ss_mixed_buckets),
        cmocka_unit_test(test_serialise_encoding),
    };
    return cmocka_run_group_tests_name("cf", tests, NULL, NULL);
}
