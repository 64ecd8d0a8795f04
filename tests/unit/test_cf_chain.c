/* Unit tests of filters that grow into a chain of tables: a delete never
 * takes another item's only copy (nested growth), the expansion rounding,
 * the nested form's serialisation and its refusals, and that filters made
 * before nesting keep their own table sizes. */
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
#include "cf_v1_fixture.h"

/* splitmix64: distinct, unordered 8-byte keys */
static cf_filter_t *make(uint64_t cap, uint32_t b, uint32_t fp,
                         uint32_t encoding, uint32_t expansion)
{
    cf_params_t p = params_of(cap, expansion, 7);
    p.bucket_size = b;
    p.fp_bits = fp;
    p.encoding = encoding;
    p.max_filters = CF_MAX_FILTERS;
    cf_filter_t *f = NULL;
    assert_int_equal(cf_create(&p, &f), 0);
    return f;
}

/* Adds n distinct items to f, deletes every second one and checks that
 * every delete found its item and that every item kept is still there.
 * Before nested growth, tables of sizes that do not nest made this fail
 * (a delete took the entry of an item that matched in one table only). */
static void add_delete_half(cf_filter_t *f, uint64_t n)
{
    for (uint64_t i = 0; i < n; i++)
        assert_int_equal(item_add(f, i), 0);
    cf_stats_t st;
    cf_stats(f, &st);
    assert_true(st.nfilters >= 4);
    uint64_t missed = 0, lost = 0;
    for (uint64_t i = 0; i < n; i += 2)
        missed += item_del(f, i) != 1;
    for (uint64_t i = 1; i < n; i += 2)
        lost += !item_has(f, i);
    assert_int_equal(missed, 0);
    assert_int_equal(lost, 0);
}

static void deletes_keep_other_items(void **state)
{
    (void)state;
    struct {
        uint32_t b, fp, enc, e;
    } shapes[] = {
        {4, 12, CF_ENC_PLAIN, 2},      {4, 8, CF_ENC_PLAIN, 2},
        {4, 13, CF_ENC_SEMISORTED, 2}, {2, 16, CF_ENC_PLAIN, 4},
        {3, 12, CF_ENC_PLAIN, 2},      {4, 12, CF_ENC_PLAIN, 8},
    };
    for (size_t s = 0; s < sizeof(shapes) / sizeof(shapes[0]); s++) {
        cf_filter_t *f =
            make(1000, shapes[s].b, shapes[s].fp, shapes[s].enc, shapes[s].e);
        add_delete_half(f, 200000);
        cf_free(f);
    }
}

/* Random adds (duplicates included) and deletes of items present, against
 * an exact count of each item, through more than ten doublings: no item
 * added and not deleted is ever absent, and no count is below the truth. */
static void random_ops_against_exact_counts(void **state)
{
    (void)state;
    enum { UNIVERSE = 40000 };
    uint8_t *truth = calloc(UNIVERSE, 1);
    assert_non_null(truth);
    cf_filter_t *f = make(16, 4, 12, CF_ENC_PLAIN, 2);
    uint64_t rng = 12345;
    for (int op = 0; op < 300000; op++) {
        rng = rng * 6364136223846793005ull + 1442695040888963407ull;
        uint64_t i = (rng >> 33) % UNIVERSE;
        if ((rng >> 20) % 3 != 0 || truth[i] == 0) {
            if (truth[i] < 3 && item_add(f, i) == 0)
                truth[i]++;
        } else {
            assert_int_equal(item_del(f, i), 1);
            truth[i]--;
        }
        if (op % 20000 == 19999)
            for (uint64_t j = 0; j < UNIVERSE; j++)
                if (truth[j] > 0) {
                    assert_true(item_has(f, j));
                    assert_true(item_count(f, j) >= truth[j]);
                }
    }
    cf_stats_t st;
    cf_stats(f, &st);
    assert_true(st.nfilters >= 11); /* 16 -> 16 * 2^10 and beyond */
    cf_free(f);
    free(truth);
}

static void expansion_rounds_up_to_a_power_of_two(void **state)
{
    (void)state;
    uint32_t given[] = {2, 3, 5, 8, 9, 1000};
    uint32_t want[] = {2, 4, 8, 8, 16, 1024};
    for (size_t k = 0; k < sizeof(given) / sizeof(given[0]); k++) {
        cf_filter_t *f = make(100, 4, 12, CF_ENC_PLAIN, given[k]);
        cf_stats_t st;
        cf_stats(f, &st);
        assert_int_equal(st.expansion, want[k]);
        cf_free(f);
    }
    /* 0 (never grow) and 1 (equal tables, which nest already) stay */
    for (uint32_t e = 0; e <= 1; e++) {
        cf_filter_t *f = make(100, 4, 12, CF_ENC_PLAIN, e);
        cf_stats_t st;
        cf_stats(f, &st);
        assert_int_equal(st.expansion, e);
        cf_free(f);
    }
}

static int load(const uint8_t *buf, size_t len, cf_filter_t **out)
{
    size_t used;
    int rc = cf_load_header(buf, len, NULL, out, &used);
    if (rc < 0)
        return rc;
    rc = cf_load_data(*out, 0, buf + used, len - used);
    if (rc < 0) {
        cf_free(*out);
        *out = NULL;
    }
    return rc;
}

static void put64(uint8_t *p, uint64_t v)
{
    for (int i = 0; i < 8; i++)
        p[i] = (uint8_t)(v >> (8 * i));
}

static uint64_t get64(const uint8_t *p)
{
    uint64_t v = 0;
    for (int i = 7; i >= 0; i--)
        v = v << 8 | p[i];
    return v;
}

static void resum(uint8_t *buf, size_t hlen)
{
    put64(buf + hlen - 8, XXH3_64bits(buf, hlen - 8));
}

static void nested_form_round_trips(void **state)
{
    (void)state;
    cf_filter_t *f = make(200, 4, 12, CF_ENC_PLAIN, 2);
    for (uint64_t i = 0; i < 20000; i++)
        assert_int_equal(item_add(f, i), 0);
    size_t hlen, len;
    uint8_t *buf = serialised(f, 1 << 20, &hlen, &len);
    assert_int_equal(buf[4], 3); /* version 3: the nested form */
    assert_int_equal(buf[15], 1);
    cf_filter_t *g = NULL;
    assert_int_equal(load(buf, len, &g), 0);
    for (uint64_t i = 0; i < 60000; i++)
        assert_int_equal(item_has(f, i), item_has(g, i));
    /* the copy keeps growing nested: deletes stay exact */
    for (uint64_t i = 20000; i < 80000; i++)
        assert_int_equal(item_add(g, i), 0);
    for (uint64_t i = 0; i < 80000; i += 2)
        assert_int_equal(item_del(g, i), 1);
    for (uint64_t i = 1; i < 80000; i += 2)
        assert_true(item_has(g, i));
    cf_free(g);
    cf_free(f);
    free(buf);
}

static void nested_header_lies_refused(void **state)
{
    (void)state;
    cf_filter_t *f = make(200, 4, 12, CF_ENC_PLAIN, 2);
    for (uint64_t i = 0; i < 3000; i++)
        assert_int_equal(item_add(f, i), 0);
    size_t hlen, len;
    uint8_t *buf = serialised(f, 1 << 20, &hlen, &len);
    assert_true(buf[13] >= 3); /* three tables or more */
    uint8_t *copy = malloc(len);
    cf_filter_t *g = NULL;

    /* table 1 not exactly twice table 0 */
    memcpy(copy, buf, len);
    uint8_t *t1 = copy + 56 + 32;
    put64(t1, get64(t1) + 1);
    resum(copy, hlen);
    assert_int_equal(load(copy, len, &g), -EINVAL);
    /* version 3 without its flag, version 2 with it */
    memcpy(copy, buf, len);
    copy[15] = 0;
    resum(copy, hlen);
    assert_int_equal(load(copy, len, &g), -EINVAL);
    memcpy(copy, buf, len);
    copy[4] = 2;
    resum(copy, hlen);
    assert_int_equal(load(copy, len, &g), -EINVAL);
    /* an expansion that is not a power of two */
    memcpy(copy, buf, len);
    copy[20] = 3;
    resum(copy, hlen);
    assert_int_equal(load(copy, len, &g), -EINVAL);
    /* unknown flags */
    memcpy(copy, buf, len);
    copy[15] = 3;
    resum(copy, hlen);
    assert_int_equal(load(copy, len, &g), -EINVAL);
    /* and the untouched dump loads */
    assert_int_equal(load(buf, len, &g), 0);
    cf_free(g);
    free(copy);
    free(buf);
    cf_free(f);
}

/* A filter of the form before nesting (the version-1 fixture: expansion 2,
 * three tables whose sizes are not exact multiples) loads as it was and
 * keeps growing by its own rule: its header stays version 2. */
static void old_chains_keep_their_sizes(void **state)
{
    (void)state;
    cf_filter_t *g = NULL;
    assert_int_equal(load(v1_grown, sizeof(v1_grown), &g), 0);
    cf_stats_t st;
    cf_stats(g, &st);
    assert_int_equal(st.expansion, 2);
    uint64_t nf = st.nfilters;
    for (uint64_t i = 1000; st.nfilters == nf; i++) {
        assert_int_equal(item_add(g, i), 0);
        cf_stats(g, &st);
    }
    size_t hlen, len;
    uint8_t *buf = serialised(g, 1 << 20, &hlen, &len);
    assert_int_equal(buf[4], 2);
    assert_int_equal(buf[15], 0);
    /* the new table is sized from its capacity, as before */
    uint64_t nb_prev = get64(buf + 56 + 32 * (nf - 1));
    uint64_t nb_new = get64(buf + 56 + 32 * nf);
    assert_true(nb_new != 2 * nb_prev);
    free(buf);
    cf_free(g);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(deletes_keep_other_items),
        cmocka_unit_test(random_ops_against_exact_counts),
        cmocka_unit_test(expansion_rounds_up_to_a_power_of_two),
        cmocka_unit_test(nested_form_round_trips),
        cmocka_unit_test(nested_header_lies_refused),
        cmocka_unit_test(old_chains_keep_their_sizes),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
