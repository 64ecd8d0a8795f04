/*
 * test_dump.c - the DUMP/RESTORE payload and filter copies: round trips,
 * every truncation and flipped bit of a payload refused, a wrong version or
 * tag behind a right checksum refused, oversized filters refused, and
 * copies that share nothing with their source.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <xxhash.h>

#include "cf_serial.h"
#include "dump.h"

static cf_filter_t *make_filter(uint64_t capacity, int items)
{
    cf_params_t p;
    cf_filter_t *f;
    cf_params_default(&p);
    p.capacity = capacity;
    p.seed = 42;
    assert_int_equal(cf_create(&p, &f), 0);
    for (int i = 0; i < items; i++) {
        char key[16];
        int n = snprintf(key, sizeof(key), "item%d", i);
        assert_int_equal(cf_add(f, key, (size_t)n), 0);
    }
    return f;
}

/* The checksum of p recomputed, as a forger would. */
static void reseal(uint8_t *p, size_t len)
{
    uint64_t h = XXH64(p, len - 8, 0);
    for (int i = 0; i < 8; i++)
        p[len - 8 + i] = (uint8_t)(h >> (8 * i));
}

static void test_round_trip(void **state)
{
    (void)state;
    cf_filter_t *f = make_filter(1000, 300), *g;
    uint8_t *p;
    size_t len;
    assert_int_equal(dump_encode(f, &p, &len), 0);
    assert_true(dump_verify(p, len));
    cf_limits_t lim = {0};
    assert_int_equal(dump_decode(p, len, &lim, &g), 0);
    assert_same_bytes(f, g);
    assert_true(cf_exists(g, "item7", 5));
    cf_free(g);
    /* A cap under the tables' size refuses before allocating. */
    lim.max_bytes = 64;
    g = NULL;
    assert_int_equal(dump_decode(p, len, &lim, &g), -ENOMEM);
    assert_null(g);
    free(p);
    cf_free(f);
}

static void test_damaged_payloads(void **state)
{
    (void)state;
    cf_filter_t *f = make_filter(8, 3), *g = NULL;
    uint8_t *p;
    size_t len;
    cf_limits_t lim = {.max_bytes = 1 << 20};
    assert_int_equal(dump_encode(f, &p, &len), 0);
    for (size_t n = 0; n < len; n++) {
        uint8_t *cut = malloc(n > 0 ? n : 1);
        memcpy(cut, p, n);
        assert_int_equal(dump_decode(cut, n, &lim, &g), -EPROTO);
        free(cut);
    }
    for (size_t bit = 0; bit < len * 8; bit++) {
        p[bit / 8] ^= (uint8_t)(1u << (bit % 8));
        assert_int_equal(dump_decode(p, len, &lim, &g), -EPROTO);
        p[bit / 8] ^= (uint8_t)(1u << (bit % 8));
    }
    assert_null(g);
    /* A wrong version behind a right checksum. */
    uint8_t *q = malloc(len);
    memcpy(q, p, len);
    q[len - 10] = DUMP_VERSION + 1;
    reseal(q, len);
    assert_false(dump_verify(q, len));
    assert_int_equal(dump_decode(q, len, &lim, &g), -EPROTO);
    /* A wrong checksum, everything else right. */
    memcpy(q, p, len);
    q[len - 1] ^= 0x80;
    assert_int_equal(dump_decode(q, len, &lim, &g), -EPROTO);
    /* Sealed but not ours inside: a foreign tag, a cut body, a long one. */
    memcpy(q, p, len);
    q[0] = 0x00;
    reseal(q, len);
    assert_int_equal(dump_decode(q, len, &lim, &g), -EINVAL);
    memcpy(q, p, len);
    memmove(q + len - 11, q + len - 10, 10);
    reseal(q, len - 1);
    assert_int_equal(dump_decode(q, len - 1, &lim, &g), -EINVAL);
    uint8_t *r = malloc(len + 1);
    memcpy(r, p, len - 10);
    r[len - 10] = 0;
    memcpy(r + len - 9, p + len - 10, 10);
    reseal(r, len + 1);
    assert_int_equal(dump_decode(r, len + 1, &lim, &g), -EINVAL);
    /* Every byte of the header corrupted and sealed again: refused or a
     * filter, never a crash (the sanitizer build watches). */
    for (size_t i = 1; i < len - 10; i++) {
        memcpy(q, p, len);
        q[i] ^= 0xFF;
        reseal(q, len);
        int rc = dump_decode(q, len, &lim, &g);
        assert_true(rc == 0 || rc == -EINVAL || rc == -ENOMEM);
        if (rc == 0) {
            (void)cf_exists(g, "item1", 5);
            cf_free(g);
        }
        g = NULL;
    }
    free(r);
    free(q);
    free(p);
    cf_free(f);
}

static void test_clone_independent(void **state)
{
    (void)state;
    cf_filter_t *f = make_filter(100, 50), *g;
    cf_limits_t lim = {0};
    assert_int_equal(dump_clone(f, &lim, &g), 0);
    assert_same_bytes(f, g);
    assert_ptr_not_equal(f, g);
    assert_false(cf_exists(f, "only-g", 6));
    assert_int_equal(cf_add(g, "only-g", 6), 0);
    assert_true(cf_exists(g, "only-g", 6));
    assert_false(cf_exists(f, "only-g", 6));
    assert_int_equal(cf_del(f, "item3", 5), 1);
    assert_true(cf_exists(g, "item3", 5));
    cf_free(f);
    assert_true(cf_exists(g, "item4", 5));
    /* Grown filters (several tables) copy whole too. */
    cf_filter_t *h = make_filter(8, 100), *k;
    assert_true(cf_nfilters(h) > 1);
    assert_int_equal(dump_clone(h, &lim, &k), 0);
    assert_same_bytes(h, k);
    lim.max_bytes = 16;
    cf_filter_t *none = NULL;
    assert_int_equal(dump_clone(h, &lim, &none), -ENOMEM);
    assert_null(none);
    cf_free(h);
    cf_free(k);
    cf_free(g);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_round_trip),
        cmocka_unit_test(test_damaged_payloads),
        cmocka_unit_test(test_clone_independent),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
