/* Unit tests for server/keyspace.c. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cf.h"
#include "keyspace.h"

static cf_filter_t *mkfilter(uint64_t capacity)
{
    cf_params_t p;
    cf_params_default(&p);
    p.capacity = capacity;
    cf_filter_t *f = NULL;
    assert_int_equal(cf_create(&p, &f), 0);
    assert_non_null(f);
    return f;
}

static int setup(void **state)
{
    *state = ks_db_new();
    return *state == NULL ? -1 : 0;
}

static int teardown(void **state)
{
    ks_db_free(*state);
    return 0;
}

static void test_add_get_del(void **state)
{
    ks_db_t *db = *state;
    cf_filter_t *f = mkfilter(100);
    assert_null(ks_get(db, "a", 1));
    assert_int_equal(ks_add(db, "a", 1, f), 0);
    assert_ptr_equal(ks_get(db, "a", 1), f);
    assert_int_equal(ks_size(db), 1);

    cf_filter_t *g = mkfilter(100);
    assert_int_equal(ks_add(db, "a", 1, g), -EEXIST);
    assert_ptr_equal(ks_get(db, "a", 1), f); /* g not taken */
    cf_free(g);

    assert_null(ks_get(db, "ab", 2));
    assert_null(ks_get(db, "", 0));
    assert_int_equal(ks_del(db, "b", 1), 0);
    assert_int_equal(ks_del(db, "a", 1), 1);
    assert_int_equal(ks_del(db, "a", 1), 0);
    assert_null(ks_get(db, "a", 1));
    assert_int_equal(ks_size(db), 0);
}

static void test_binary_keys(void **state)
{
    ks_db_t *db = *state;
    const char k1[] = {'x', '\0', 'y'};
    const char k2[] = {'x', '\0', 'z'};
    cf_filter_t *f1 = mkfilter(10), *f2 = mkfilter(10), *f3 = mkfilter(10);
    assert_int_equal(ks_add(db, k1, 3, f1), 0);
    assert_int_equal(ks_add(db, k2, 3, f2), 0);
    assert_int_equal(ks_add(db, "x", 1, f3), 0); /* prefix up to the NUL */
    assert_ptr_equal(ks_get(db, k1, 3), f1);
    assert_ptr_equal(ks_get(db, k2, 3), f2);
    assert_ptr_equal(ks_get(db, "x", 1), f3);
    assert_null(ks_get(db, k1, 2));
    cf_filter_t *e = mkfilter(10);
    assert_int_equal(ks_add(db, "", 0, e), 0); /* the empty key is a key */
    assert_ptr_equal(ks_get(db, "", 0), e);
    assert_int_equal(ks_size(db), 4);
}

static void test_rename(void **state)
{
    ks_db_t *db = *state;
    cf_filter_t *f = mkfilter(100), *g = mkfilter(200);
    assert_int_equal(ks_rename(db, "nope", 4, "x", 1), -ENOENT);
    assert_int_equal(ks_add(db, "src", 3, f), 0);
    assert_int_equal(ks_rename(db, "src", 3, "dst", 3), 0);
    assert_null(ks_get(db, "src", 3));
    assert_ptr_equal(ks_get(db, "dst", 3), f);
    assert_int_equal(ks_size(db), 1);

    /* Renaming onto itself keeps the key. */
    assert_int_equal(ks_rename(db, "dst", 3, "dst", 3), 0);
    assert_ptr_equal(ks_get(db, "dst", 3), f);

    /* Renaming onto an existing key replaces (frees) it; ASan checks g. */
    assert_int_equal(ks_add(db, "other", 5, g), 0);
    uint64_t before = ks_bytes(db);
    assert_int_equal(ks_rename(db, "other", 5, "dst", 3), 0);
    assert_ptr_equal(ks_get(db, "dst", 3), g);
    assert_null(ks_get(db, "other", 5));
    assert_int_equal(ks_size(db), 1);
    assert_true(ks_bytes(db) < before);
}

static void test_flush(void **state)
{
    ks_db_t *db = *state;
    uint64_t empty = ks_bytes(db);
    char k[32];
    for (int i = 0; i < 1000; i++) {
        int n = snprintf(k, sizeof(k), "key:%d", i);
        assert_int_equal(ks_add(db, k, (size_t)n, mkfilter(8)), 0);
    }
    assert_int_equal(ks_size(db), 1000);
    ks_flush(db);
    assert_int_equal(ks_size(db), 0);
    assert_null(ks_get(db, "key:1", 5));
    assert_int_equal(ks_bytes(db), empty);
    /* Still usable after a flush. */
    assert_int_equal(ks_add(db, "a", 1, mkfilter(8)), 0);
    assert_int_equal(ks_size(db), 1);
}

static void test_growth_many_keys(void **state)
{
    ks_db_t *db = *state;
    enum { N = 50000 };
    char k[32];
    for (int i = 0; i < N; i++) {
        int n = snprintf(k, sizeof(k), "k%d", i);
        assert_int_equal(ks_add(db, k, (size_t)n, mkfilter(2)), 0);
    }
    assert_int_equal(ks_size(db), N);
    for (int i = 0; i < N; i++) {
        int n = snprintf(k, sizeof(k), "k%d", i);
        assert_non_null(ks_get(db, k, (size_t)n));
    }
    assert_null(ks_get(db, "k50000", 6));
    /* Delete most: the table shrinks and the rest stay reachable. */
    for (int i = 0; i < N - 10; i++) {
        int n = snprintf(k, sizeof(k), "k%d", i);
        assert_int_equal(ks_del(db, k, (size_t)n), 1);
    }
    assert_int_equal(ks_size(db), 10);
    for (int i = N - 10; i < N; i++) {
        int n = snprintf(k, sizeof(k), "k%d", i);
        assert_non_null(ks_get(db, k, (size_t)n));
    }
}

typedef struct seen {
    unsigned char *hits; /* per key index */
    int n;
    size_t calls;
} seen_t;

static int on_key(void *ctx, const void *key, size_t len, const cf_filter_t *f)
{
    seen_t *s = ctx;
    char buf[32];
    assert_true(len < sizeof(buf));
    assert_non_null(f);
    memcpy(buf, key, len);
    buf[len] = '\0';
    int i = atoi(buf + 1);
    assert_true(i >= 0 && i < s->n);
    if (s->hits[i] < 255)
        s->hits[i]++;
    s->calls++;
    return 0;
}

static void add_range(ks_db_t *db, int from, int to)
{
    char k[32];
    for (int i = from; i < to; i++) {
        int n = snprintf(k, sizeof(k), "k%d", i);
        assert_int_equal(ks_add(db, k, (size_t)n, mkfilter(2)), 0);
    }
}

static void del_range(ks_db_t *db, int from, int to)
{
    char k[32];
    for (int i = from; i < to; i++) {
        int n = snprintf(k, sizeof(k), "k%d", i);
        assert_int_equal(ks_del(db, k, (size_t)n), 1);
    }
}

static void test_scan_complete(void **state)
{
    ks_db_t *db = *state;
    enum { N = 3000 };
    seen_t s = {calloc(N, 1), N, 0};
    add_range(db, 0, N);
    uint64_t cur = 0;
    int rounds = 0;
    do {
        cur = ks_scan(db, cur, 10, on_key, &s);
        rounds++;
    } while (cur != 0);
    assert_true(rounds > 1);
    for (int i = 0; i < N; i++)
        assert_int_equal(s.hits[i], 1); /* no resize: exactly once */
    free(s.hits);
}

/* Keys present for the whole walk are reported although the table grows
 * (many adds) and then shrinks (many deletes) between calls. */
static void test_scan_across_resize(void **state)
{
    ks_db_t *db = *state;
    enum { STABLE = 500, EXTRA = 20000 };
    seen_t s = {calloc(STABLE + EXTRA, 1), STABLE + EXTRA, 0};
    add_range(db, 0, STABLE);
    uint64_t cur = 0;
    int step = 0;
    do {
        cur = ks_scan(db, cur, 20, on_key, &s);
        step++;
        if (step == 3)
            add_range(db, STABLE, STABLE + EXTRA); /* grows several times */
        if (step == 40)
            del_range(db, STABLE, STABLE + EXTRA); /* shrinks back */
    } while (cur != 0);
    assert_true(step > 40);
    for (int i = 0; i < STABLE; i++)
        assert_true(s.hits[i] >= 1);
    free(s.hits);
}

static void test_scan_empty(void **state)
{
    ks_db_t *db = *state;
    seen_t s = {calloc(1, 1), 1, 0};
    assert_int_equal(ks_scan(db, 0, 10, on_key, &s), 0);
    assert_int_equal(s.calls, 0);
    free(s.hits);
}

static int stop_at_two(void *ctx, const void *key, size_t len,
                       const cf_filter_t *f)
{
    int *n = ctx;
    return ++*n == 2 ? 42 : 0;
}

static void test_foreach(void **state)
{
    ks_db_t *db = *state;
    enum { N = 100 };
    seen_t s = {calloc(N, 1), N, 0};
    add_range(db, 0, N);
    assert_int_equal(ks_foreach(db, on_key, &s), 0);
    for (int i = 0; i < N; i++)
        assert_int_equal(s.hits[i], 1);
    int n = 0;
    assert_int_equal(ks_foreach(db, stop_at_two, &n), 42);
    assert_int_equal(n, 2);
    free(s.hits);
}

/* A stored filter that grows: recounting adds the growth; a delete takes off
 * what was counted, whether or not the growth was recounted, so the sum
 * comes back to the empty table's and cannot wrap below it. */
static void test_growth_accounting(void **state)
{
    ks_db_t *db = *state;
    uint64_t empty = ks_bytes(db);
    for (int round = 0; round < 2; round++) {
        cf_filter_t *f = mkfilter(64);
        uint64_t fb = cf_size_bytes(f);
        assert_int_equal(ks_add(db, "g", 1, f), 0);
        uint64_t counted = ks_bytes(db);
        char item[32];
        for (int i = 0; i < 10000 && cf_size_bytes(f) == fb; i++) {
            int n = snprintf(item, sizeof(item), "item-%d", i);
            assert_true(cf_add(f, item, (size_t)n) == 0);
        }
        uint64_t grown = cf_size_bytes(f);
        assert_true(grown > fb);                 /* it did grow */
        assert_int_equal(ks_bytes(db), counted); /* not yet recounted */
        if (round == 1) {
            ks_recount(db, "g", 1);
            assert_int_equal(ks_bytes(db), counted + (grown - fb));
        }
        assert_int_equal(ks_del(db, "g", 1), 1);
        assert_int_equal(ks_bytes(db), empty);
    }
}

static void test_bytes_accounting(void **state)
{
    ks_db_t *db = *state;
    uint64_t empty = ks_bytes(db);
    assert_true(empty > 0);
    cf_filter_t *f = mkfilter(100000);
    uint64_t fb = cf_size_bytes(f);
    assert_true(fb > 0);
    assert_int_equal(ks_add(db, "big", 3, f), 0);
    uint64_t one = ks_bytes(db);
    assert_true(one >= empty + fb + 3);
    assert_true(one < empty + fb + 1024); /* entry overhead is small */

    ks_recount(db, "big", 3); /* unchanged size: no change */
    assert_int_equal(ks_bytes(db), one);
    ks_recount(db, "none", 4); /* absent: no-op */
    assert_int_equal(ks_bytes(db), one);

    /* The sum follows renames and deletes exactly. */
    assert_int_equal(ks_rename(db, "big", 3, "b", 1), 0);
    assert_int_equal(ks_bytes(db), one - 2);
    assert_int_equal(ks_del(db, "b", 1), 1);
    assert_int_equal(ks_bytes(db), empty);

    /* Growth of the bucket array is counted, and given back on shrink. */
    add_range(db, 0, 5000);
    del_range(db, 0, 5000);
    assert_int_equal(ks_bytes(db), empty);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_add_get_del, setup, teardown),
        cmocka_unit_test_setup_teardown(test_binary_keys, setup, teardown),
        cmocka_unit_test_setup_teardown(test_rename, setup, teardown),
        cmocka_unit_test_setup_teardown(test_flush, setup, teardown),
        cmocka_unit_test_setup_teardown(test_growth_many_keys, setup, teardown),
        cmocka_unit_test_setup_teardown(test_scan_complete, setup, teardown),
        cmocka_unit_test_setup_teardown(test_scan_across_resize, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_scan_empty, setup, teardown),
        cmocka_unit_test_setup_teardown(test_foreach, setup, teardown),
        cmocka_unit_test_setup_teardown(test_bytes_accounting, setup, teardown),
        cmocka_unit_test_setup_teardown(test_growth_accounting, setup,
                                        teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
