/* Unit tests of the growable pair (cf_pair.h, rates under 0.005): random
 * adds, deletes and lookups against exact counts through ten doublings
 * (no false negative), the rate after a 300x growth (the product of two
 * tables' rates, where one table alone is 400 times worse), the serialised
 * form in chunks in every phase, lying headers, the sizes a host counts,
 * and the parameters. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "cf.h"
#include "cf_grow.h"
#include "cf_grow_fixture.h"

static cf_filter_t *make_pair(uint64_t cap, uint64_t seed)
{
    return make_shaped(cap, seed, CF_GROWABLE_PAIR);
}

#define UNIVERSE (1u << 18)

static void random_ops_through_ten_doublings(void **state)
{
    (void)state;
    cf_filter_t *f = make_pair(64, 5);
    uint8_t *cnt = calloc(UNIVERSE, 1);
    assert_non_null(cnt);
    ops_tally_t n = random_ops(f, cnt, UNIVERSE, 80000, 0x7654321);
    cf_stats_t st;
    cf_stats(f, &st);
    assert_int_equal(st.nfilters, 1);
    assert_int_equal(st.items, n.live);
    assert_int_equal(st.deleted, n.dels);
    assert_int_equal(st.form, CF_FORM_GROWABLE_PAIR);
    /* both tables' 15 compared bits once grown */
    assert_int_equal(st.fp_bits, 30);
    /* two tables of about 16 / 0.85 bits an item */
    assert_true(st.size_bytes * 8 > n.live * 30);
    assert_true(st.size_bytes * 8 < n.live * 48);
    for (uint64_t id = 0; id < n.next && id < UNIVERSE; id++)
        while (cnt[id]) {
            assert_int_equal(item_del(f, id), 1);
            cnt[id]--;
        }
    cf_stats(f, &st);
    assert_int_equal(st.items, 0);
    /* a delete of what is not there is refused by both tables */
    assert_int_equal(item_del(f, 1), 0);
    cf_free(f);
    free(cnt);
}

/* Absent items that one table or the other matches, out of 1M, after a
 * filter reserved for 1000 took 300,000: one growable table alone has a
 * rate of about 0.2% there (2,000 of them); the pair's is the product. */
static void rate_after_growth(void **state)
{
    (void)state;
    cf_filter_t *f = make_pair(1000, 9);
    cf_filter_t *one = make(1000, 9);
    for (uint64_t id = 0; id < 300000; id++) {
        assert_int_equal(item_add(f, id), 0);
        assert_int_equal(item_add(one, id), 0);
    }
    uint64_t fp = 0, fp_one = 0;
    for (uint64_t id = 1u << 30; id < (1u << 30) + 1000000; id++) {
        fp += item_has(f, id);
        fp_one += item_has(one, id);
    }
    assert_true(fp_one > 500);
    assert_true(fp <= 50);
    /* and nothing added is missed */
    for (uint64_t id = 0; id < 300000; id++)
        assert_true(item_has(f, id));
    cf_free(one);
    cf_free(f);
}

/* Batched lookups and adds answer as the single ones do. */
static void batches_agree(void **state)
{
    (void)state;
    cf_filter_t *f = make_pair(500, 3), *g = make_pair(500, 3);
    enum { N = 3000 };
    static uint64_t k[N];
    static const void *kp[N];
    static size_t kl[N];
    static int rc[N];
    static bool out[N];
    for (size_t i = 0; i < N; i++) {
        k[i] = key_of(i);
        kp[i] = &k[i];
        kl[i] = sizeof(k[i]);
    }
    cf_add_many(f, N, kp, kl, false, NULL, rc);
    for (size_t i = 0; i < N; i++) {
        assert_int_equal(rc[i], 0);
        assert_int_equal(item_add(g, i), 0);
    }
    assert_same_bytes(f, g);
    /* present and absent items mixed: every second one is absent */
    for (size_t i = 0; i < N; i++)
        k[i] = key_of(i % 2 ? i : i + (1u << 30));
    cf_exists_many(f, N, kp, kl, out);
    for (size_t i = 0; i < N; i++)
        assert_int_equal(out[i], cf_exists(f, kp[i], kl[i]));
    /* NX: the present ones are not added again */
    cf_add_many(f, N, kp, kl, true, NULL, rc);
    for (size_t i = 1; i < N; i += 2)
        assert_int_equal(rc[i], 0);
    assert_int_equal(cf_add_nx(g, kp[1], kl[1]), 0);
    assert_int_equal(cf_add_nx(g, kp[0], kl[0]), 1);
    assert_int_equal(cf_add_nx(g, kp[0], kl[0]), 0);
    cf_free(f);
    cf_free(g);
}

/* In the compact phase, converting, and grown: the dump loads in chunks
 * of any size into the same bytes, answers the same, and goes on as the
 * original does. */
static void round_trip_every_phase(void **state)
{
    (void)state;
    cf_filter_t *f = make_pair(2000, 21);
    static const uint64_t at[] = {10, 1900, 2100, 2600, 9000, 40000};
    static const size_t chunks[] = {1, 7, 100, 4096};
    uint64_t next = 0;
    for (size_t a = 0; a < sizeof(at) / sizeof(at[0]); a++) {
        for (; next < at[a]; next++)
            assert_int_equal(item_add(f, next), 0);
        size_t hl, n;
        uint8_t *buf = serialised(f, 333, &hl, &n);
        assert_int_equal(hl, 288);
        cf_filter_t *g = loaded_in_chunks(buf, n, chunks[a % 4]);
        assert_same_bytes(f, g);
        for (uint64_t id = 0; id < next; id++)
            assert_true(item_has(g, id));
        for (uint64_t id = next; id < next + 500; id++) {
            assert_int_equal(item_add(f, id), 0);
            assert_int_equal(item_add(g, id), 0);
        }
        next += 500;
        assert_same_bytes(f, g);
        cf_free(g);
        free(buf);
    }
    cf_free(f);
}

static int try_load(const uint8_t *buf, size_t n)
{
    cf_filter_t *f = NULL;
    size_t used = 0;
    int rc = cf_load_header(buf, n, NULL, &f, &used);
    if (rc == 0 && used != 288)
        rc = 1; /* loaded as something else */
    cf_free(f);
    return rc;
}

static void lying_headers_refused(void **state)
{
    (void)state;
    cf_filter_t *f = make_pair(100, 2);
    for (uint64_t id = 0; id < 50; id++)
        assert_int_equal(item_add(f, id), 0);
    size_t hl, n;
    uint8_t *buf = serialised(f, 1 << 20, &hl, &n);
    uint8_t *b = malloc(n);
    assert_non_null(b);
    assert_int_equal(try_load(buf, n), 0);
    /* cut short */
    assert_int_equal(try_load(buf, 287), -EINVAL);
    /* the second part claims to be a first */
    memcpy(b, buf, n);
    b[144 + 15] |= 32;
    set_header_sum(b + 144, 144);
    assert_int_equal(try_load(b, n), -EINVAL);
    /* the second part's seed is not the first's twin */
    memcpy(b, buf, n);
    b[144 + 32] ^= 1;
    set_header_sum(b + 144, 144);
    assert_int_equal(try_load(b, n), -EINVAL);
    /* a bit of either part changed without its checksum */
    memcpy(b, buf, n);
    b[144 + 40] ^= 1;
    assert_int_equal(try_load(b, n), -EINVAL);
    memcpy(b, buf, n);
    b[40] ^= 1;
    assert_int_equal(try_load(b, n), -EINVAL);
    /* the flag on a version 4 header */
    memcpy(b, buf, n);
    b[4] = 4;
    b[15] = 2 | 32;
    set_header_sum(b, 144);
    assert_int_equal(try_load(b, n), -EINVAL);
    /* a data chunk past the end of the second table */
    cf_filter_t *g = NULL;
    size_t used;
    assert_int_equal(cf_load_header(buf, n, NULL, &g, &used), 0);
    assert_int_not_equal(cf_load_data(g, cf_data_len(g), buf + used, 8), 0);
    cf_free(g);
    /* the memory cap is the pair's */
    cf_limits_t lim = {.max_bytes = 100};
    assert_int_equal(cf_load_header(buf, n, &lim, &g, &used), -ENOMEM);
    free(b);
    free(buf);
    cf_free(f);
}

/* The generation changes with the size, and the size of an earlier
 * generation is what it was (what a host counts its memory with). */
static void sizes_a_host_counts(void **state)
{
    (void)state;
    cf_filter_t *f = make_pair(100, 4);
    cf_stats_t st;
    cf_stats(f, &st);
    assert_int_equal(st.size_bytes, cf_size_bytes(f));
    uint32_t gen = cf_nfilters(f);
    uint64_t size = cf_size_bytes(f), changes = 0;
    for (uint64_t id = 0; id < 20000; id++) {
        assert_int_equal(item_add(f, id), 0);
        if (cf_size_bytes(f) != size) {
            assert_int_not_equal(cf_nfilters(f), gen);
            assert_int_equal(cf_size_bytes_at(f, gen), size);
            gen = cf_nfilters(f);
            size = cf_size_bytes(f);
            changes++;
        } else {
            assert_int_equal(cf_nfilters(f), gen);
        }
    }
    assert_true(changes > 10);
    cf_free(f);
}

static void params(void **state)
{
    (void)state;
    cf_params_t p = params_of(1000, 1, 1);
    p.growable = CF_GROWABLE_PAIR;
    assert_int_equal(cf_params_check(&p), 0);
    uint64_t two = cf_params_table_bytes(&p);
    p.growable = 1;
    assert_int_equal(two, 2 * cf_params_table_bytes(&p));
    p.growable = CF_GROWABLE_PAIR;
    p.bucket_size = 2;
    assert_int_equal(cf_params_check(&p), -EINVAL);
    p.bucket_size = 4;
    p.growable = 3;
    assert_int_equal(cf_params_check(&p), -EINVAL);
    /* a cap on the new filter's memory is the pair's */
    p.growable = CF_GROWABLE_PAIR;
    p.max_bytes = two / 2 + 1;
    cf_filter_t *f = NULL;
    assert_int_equal(cf_create(&p, &f), -ENOMEM);
    assert_null(f);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(random_ops_through_ten_doublings),
        cmocka_unit_test(rate_after_growth),
        cmocka_unit_test(batches_agree),
        cmocka_unit_test(round_trip_every_phase),
        cmocka_unit_test(lying_headers_refused),
        cmocka_unit_test(sizes_a_host_counts),
        cmocka_unit_test(params),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
