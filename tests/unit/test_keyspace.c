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
#include "moving_alloc.h"

#define KS_MODEL_CHECK(c) assert_true(c)
#include "ks_model.h"

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

/* A new filter of capacity stored under key: the stored address. */
static cf_filter_t *add_new(ks_db_t *db, const void *key, size_t len,
                            uint64_t capacity)
{
    cf_filter_t *f = mkfilter(capacity);
    assert_int_equal(ks_add(db, key, len, &f), 0);
    assert_ptr_equal(ks_get(db, key, len), f);
    return f;
}

/* Finishes every resize the load asks for. */
static void settle(ks_db_t *db)
{
    while (ks_rehash(db, SIZE_MAX))
        ;
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
    assert_int_equal(ks_add(db, "a", 1, &f), 0);
    assert_ptr_equal(ks_get(db, "a", 1), f);
    assert_int_equal(ks_size(db), 1);

    cf_filter_t *g = mkfilter(100);
    assert_int_equal(ks_add(db, "a", 1, &g), -EEXIST);
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
    assert_int_equal(ks_add(db, k1, 3, &f1), 0);
    assert_int_equal(ks_add(db, k2, 3, &f2), 0);
    assert_int_equal(ks_add(db, "x", 1, &f3), 0); /* prefix up to the NUL */
    assert_ptr_equal(ks_get(db, k1, 3), f1);
    assert_ptr_equal(ks_get(db, k2, 3), f2);
    assert_ptr_equal(ks_get(db, "x", 1), f3);
    assert_null(ks_get(db, k1, 2));
    cf_filter_t *e = mkfilter(10);
    assert_int_equal(ks_add(db, "", 0, &e), 0); /* the empty key is a key */
    assert_ptr_equal(ks_get(db, "", 0), e);
    assert_int_equal(ks_size(db), 4);
}

/* The filter under key holds item (it is the one item was added to). */
static void assert_holds(ks_db_t *db, const void *key, size_t len,
                         const char *item)
{
    const cf_filter_t *f = ks_get(db, key, len);
    assert_non_null(f);
    assert_true(cf_exists(f, item, strlen(item)));
}

static void test_rename(void **state)
{
    ks_db_t *db = *state;
    cf_filter_t *f = mkfilter(100), *g = mkfilter(200);
    assert_int_equal(cf_add(f, "of-f", 4), 0);
    assert_int_equal(cf_add(g, "of-g", 4), 0);
    assert_int_equal(ks_rename(db, "nope", 4, "x", 1), -ENOENT);
    assert_int_equal(ks_add(db, "src", 3, &f), 0);
    assert_int_equal(ks_rename(db, "src", 3, "dst", 3), 0);
    assert_null(ks_get(db, "src", 3));
    assert_holds(db, "dst", 3, "of-f"); /* f itself may have moved */
    assert_int_equal(ks_size(db), 1);

    /* Renaming onto itself keeps the key. */
    f = ks_get(db, "dst", 3);
    assert_int_equal(ks_rename(db, "dst", 3, "dst", 3), 0);
    assert_ptr_equal(ks_get(db, "dst", 3), f);

    /* Renaming onto an existing key replaces (frees) it; ASan checks g. */
    assert_int_equal(ks_add(db, "other", 5, &g), 0);
    uint64_t before = ks_bytes(db);
    assert_int_equal(ks_rename(db, "other", 5, "dst", 3), 0);
    assert_holds(db, "dst", 3, "of-g");
    assert_false(cf_exists(ks_get(db, "dst", 3), "of-f", 4));
    assert_null(ks_get(db, "other", 5));
    assert_int_equal(ks_size(db), 1);
    assert_true(ks_bytes(db) < before);

    /* ks_rename_take hands the replaced filter over, uncounted. */
    cf_filter_t *h = mkfilter(300), *replaced = NULL;
    assert_int_equal(cf_add(h, "of-h", 4), 0);
    assert_int_equal(ks_add(db, "third", 5, &h), 0);
    before = ks_bytes(db);
    uint64_t dst_bytes = ks_removed_bytes(ks_get(db, "dst", 3));
    assert_int_equal(ks_rename_take(db, "third", 5, "dst", 3, &replaced), 0);
    assert_non_null(replaced);
    assert_true(cf_exists(replaced, "of-g", 4));
    assert_int_equal(ks_removed_bytes(replaced), dst_bytes);
    assert_holds(db, "dst", 3, "of-h");
    assert_int_equal(ks_size(db), 1);
    assert_true(ks_bytes(db) <= before - dst_bytes + 64);
    ks_free_removed(replaced);
    /* Onto a free name (or itself) it hands over nothing. */
    replaced = h;
    assert_int_equal(ks_rename_take(db, "dst", 3, "free", 4, &replaced), 0);
    assert_null(replaced);
    assert_int_equal(ks_rename_take(db, "nope", 4, "free", 4, &replaced),
                     -ENOENT);
    assert_null(replaced);
}

/* Bytes of the entry of a key of len bytes: next, tables, LEB128 length,
 * key, rounded up to the 8 bytes the filter's alignment needs. */
static uint64_t entry_of(size_t len)
{
    uint64_t v = 1;
    for (size_t l = len; l >= 128; l >>= 7)
        v++;
    return (8 + 1 + v + len + 7) / 8 * 8;
}

/* A key of len bytes made of NULs and other bytes, different per tag. */
static unsigned char *mkkey(size_t len, unsigned char tag)
{
    unsigned char *k = malloc(len > 0 ? len : 1);
    assert_non_null(k);
    for (size_t i = 0; i < len; i++)
        k[i] = (i % 3 == 0) ? 0 : (unsigned char)(tag + i);
    return k;
}

/* Renames to longer and shorter keys resize the entry (moving the filter)
 * and count exactly the new entry; renaming over an existing key of another
 * length frees that one. The figures come back to the empty one. */
static void test_rename_resizes_entry(void **state)
{
    ks_db_t *db = *state;
    uint64_t empty = ks_bytes(db);
    const size_t lens[] = {1, 200, 0, 20000, 5, 127, 128, 3};
    unsigned char *keys[8];
    for (int i = 0; i < 8; i++)
        keys[i] = mkkey(lens[i], (unsigned char)(i * 16));
    cf_filter_t *f = mkfilter(100);
    assert_int_equal(cf_add(f, "item", 4), 0);
    uint64_t fb = cf_size_bytes(f);
    assert_int_equal(ks_add(db, keys[0], lens[0], &f), 0);
    for (int i = 1; i < 8; i++) {
        assert_int_equal(
            ks_rename(db, keys[i - 1], lens[i - 1], keys[i], lens[i]), 0);
        assert_null(ks_get(db, keys[i - 1], lens[i - 1]));
        assert_holds(db, keys[i], lens[i], "item");
        assert_int_equal(ks_size(db), 1);
        assert_int_equal(ks_bytes(db), empty + fb + entry_of(lens[i]));
        assert_int_equal(ks_usage(db, keys[i], lens[i]),
                         fb + entry_of(lens[i]) + sizeof(void *));
    }
    /* Onto an existing key of another length: that filter is freed. */
    cf_filter_t *g = mkfilter(1000);
    uint64_t gb = cf_size_bytes(g);
    assert_int_equal(ks_add(db, keys[3], lens[3], &g), 0);
    assert_int_equal(ks_bytes(db),
                     empty + fb + entry_of(lens[7]) + gb + entry_of(lens[3]));
    assert_int_equal(ks_rename(db, keys[7], lens[7], keys[3], lens[3]), 0);
    assert_holds(db, keys[3], lens[3], "item");
    assert_null(ks_get(db, keys[7], lens[7]));
    assert_int_equal(ks_size(db), 1);
    assert_int_equal(ks_bytes(db), empty + fb + entry_of(lens[3]));
    assert_int_equal(ks_del(db, keys[3], lens[3]), 1);
    assert_int_equal(ks_bytes(db), empty);
    for (int i = 0; i < 8; i++)
        free(keys[i]);
}

/* The edges of the length's encoding (one byte below 128, two below 16384,
 * three below 2^21), the empty key and a 1 MB key, all binary with NULs,
 * and keys that differ only in their last byte or their length. */
static void test_key_lengths(void **state)
{
    ks_db_t *db = *state;
    uint64_t empty = ks_bytes(db);
    const size_t lens[] = {0, 1, 127, 128, 16383, 16384, 1u << 20};
    enum { N = sizeof(lens) / sizeof(lens[0]) };
    unsigned char *keys[N], *twins[N];
    uint64_t sum = 0;
    for (size_t i = 0; i < N; i++) {
        /* All keys share their bytes: they differ by length alone. */
        keys[i] = mkkey(lens[i], 7);
        twins[i] = mkkey(lens[i], 7);
        if (lens[i] > 0)
            twins[i][lens[i] - 1] ^= 0x5A;
        cf_filter_t *f = mkfilter(10 + i);
        char item[16];
        snprintf(item, sizeof(item), "item-%zu", i);
        assert_int_equal(cf_add(f, item, strlen(item)), 0);
        uint64_t fb = cf_size_bytes(f);
        assert_int_equal(ks_add(db, keys[i], lens[i], &f), 0);
        assert_int_equal(ks_usage(db, keys[i], lens[i]),
                         fb + entry_of(lens[i]) + sizeof(void *));
        sum += fb + entry_of(lens[i]);
    }
    assert_int_equal(entry_of(127), 144);     /* 9 + 1 + 127 = 137 */
    assert_int_equal(entry_of(128), 144);     /* 9 + 2 + 128 = 139 */
    assert_int_equal(entry_of(16384), 16400); /* 9 + 3 + 16384 */
    for (size_t i = 0; i < N; i++) {
        char item[16];
        snprintf(item, sizeof(item), "item-%zu", i);
        assert_holds(db, keys[i], lens[i], item);
        if (lens[i] > 0)
            assert_null(ks_get(db, twins[i], lens[i]));
        assert_int_equal(ks_add(db, keys[i], lens[i], &(cf_filter_t *){NULL}),
                         -EEXIST);
    }
    assert_int_equal(ks_size(db), N);
    /* The bucket array grew with the keys; the rest is exactly theirs. */
    assert_true(ks_bytes(db) >= empty + sum);
    assert_true(ks_bytes(db) <= empty + sum + 64 * sizeof(void *));
    for (size_t i = 0; i < N; i++) {
        assert_int_equal(ks_del(db, keys[i], lens[i]), 1);
        free(keys[i]);
        free(twins[i]);
    }
    settle(db); /* the shrink ends incrementally */
    assert_int_equal(ks_bytes(db), empty);
}

/* The walks report each key's own bytes and length (binary, unterminated:
 * a key is followed by nothing the walk promised). */
typedef struct exact {
    const unsigned char *const *keys;
    const size_t *lens;
    int n;
    int hits[8];
} exact_t;

static int on_exact(void *ctx, const void *key, size_t len,
                    const cf_filter_t *f)
{
    exact_t *x = ctx;
    assert_non_null(f);
    for (int i = 0; i < x->n; i++)
        if (x->lens[i] == len &&
            (len == 0 || memcmp(x->keys[i], key, len) == 0)) {
            x->hits[i]++;
            return 0;
        }
    fail_msg("a walk reported a key that was never added (len %zu)", len);
    return 0;
}

static void test_walks_report_exact_keys(void **state)
{
    ks_db_t *db = *state;
    unsigned char *k[5];
    const size_t lens[5] = {0, 3, 130, 3, 20000};
    for (int i = 0; i < 5; i++) {
        k[i] = mkkey(lens[i], (unsigned char)(i * 40));
        assert_non_null(add_new(db, k[i], lens[i], 10));
    }
    exact_t x = {(const unsigned char *const *)k, lens, 5, {0}};
    assert_int_equal(ks_foreach(db, on_exact, &x), 0);
    for (int i = 0; i < 5; i++)
        assert_int_equal(x.hits[i], 1);
    memset(x.hits, 0, sizeof(x.hits));
    uint64_t cur = 0;
    do
        cur = ks_scan(db, cur, 1, on_exact, &x);
    while (cur != 0);
    for (int i = 0; i < 5; i++)
        assert_int_equal(x.hits[i], 1);
    for (int i = 0; i < 5; i++)
        free(k[i]);
}

/* What MEMORY USAGE reports for the workload: a capacity-100
 * filter, its entry for "tenant:999999" (23 bytes, 24 with the pad) and
 * one bucket slot. */
static void test_usage(void **state)
{
    ks_db_t *db = *state;
    cf_filter_t *f = add_new(db, "tenant:999999", 13, 100);
    assert_int_equal(ks_usage(db, "tenant:999999", 13),
                     cf_size_bytes(f) + 24 + sizeof(void *));
    assert_int_equal(ks_usage(db, "tenant:99999", 12), 0);
    assert_int_equal(ks_usage(db, "", 0), 0);
}

/* A timeout costs its key exactly 8 bytes, in ks_bytes and ks_usage, and
 * clearing it (or deleting the key) gives them back; a rename carries it;
 * the filter itself is untouched by the move. */
static void test_expire_accounting(void **state)
{
    ks_db_t *db = *state;
    uint64_t empty = ks_bytes(db);
    cf_filter_t *f = add_new(db, "k", 1, 100);
    assert_int_equal(cf_add(f, "item", 4), 0);
    uint64_t one = ks_bytes(db), use = ks_usage(db, "k", 1);
    int64_t when;
    assert_ptr_equal(ks_find(db, "k", 1, &when), f);
    assert_int_equal(when, -1);
    assert_int_equal(ks_when(f), -1);
    assert_int_equal(ks_expires(db), 0);

    assert_int_equal(ks_set_expire(db, "nope", 4, 5), -ENOENT);
    assert_int_equal(ks_set_expire(db, "k", 1, 1795616370123), 0);
    assert_int_equal(ks_bytes(db), one + 8);
    assert_int_equal(ks_usage(db, "k", 1), use + 8);
    assert_int_equal(ks_expires(db), 1);
    f = ks_find(db, "k", 1, &when);
    assert_int_equal(when, 1795616370123);
    assert_int_equal(ks_when(f), 1795616370123);
    assert_true(cf_exists(f, "item", 4));
    /* a second time replaces the first in place */
    assert_int_equal(ks_set_expire(db, "k", 1, 7), 0);
    assert_ptr_equal(ks_get(db, "k", 1), f);
    assert_int_equal(ks_when(f), 7);
    assert_int_equal(ks_bytes(db), one + 8);

    /* a rename carries the time; the longer name costs what it costs */
    assert_int_equal(ks_rename(db, "k", 1, "other", 5), 0);
    assert_null(ks_get(db, "k", 1));
    f = ks_get(db, "other", 5);
    assert_int_equal(ks_when(f), 7);
    assert_int_equal(ks_expires(db), 1);
    assert_true(cf_exists(f, "item", 4));
    assert_int_equal(ks_rename(db, "other", 5, "k", 1), 0);
    assert_int_equal(ks_bytes(db), one + 8);
    /* onto a key with a timeout: that one goes with its time */
    add_new(db, "dst", 3, 100);
    assert_int_equal(ks_set_expire(db, "dst", 3, 9), 0);
    assert_int_equal(ks_expires(db), 2);
    assert_int_equal(ks_rename(db, "k", 1, "dst", 3), 0);
    assert_int_equal(ks_expires(db), 1);
    assert_int_equal(ks_when(ks_get(db, "dst", 3)), 7);
    assert_int_equal(ks_rename(db, "dst", 3, "k", 1), 0);
    assert_int_equal(ks_bytes(db), one + 8);

    assert_int_equal(ks_clear_expire(db, "k", 1), 1);
    assert_int_equal(ks_clear_expire(db, "k", 1), 0);
    assert_int_equal(ks_clear_expire(db, "nope", 4), 0);
    assert_int_equal(ks_bytes(db), one);
    assert_int_equal(ks_usage(db, "k", 1), use);
    assert_int_equal(ks_expires(db), 0);
    assert_int_equal(ks_when(ks_get(db, "k", 1)), -1);

    assert_int_equal(ks_set_expire(db, "k", 1, 7), 0);
    assert_int_equal(ks_del(db, "k", 1), 1);
    assert_int_equal(ks_expires(db), 0);
    assert_int_equal(ks_bytes(db), empty);

    add_new(db, "a", 1, 8);
    assert_int_equal(ks_set_expire(db, "a", 1, 7), 0);
    ks_flush(db);
    assert_int_equal(ks_expires(db), 0);
    assert_int_equal(ks_bytes(db), empty);
}

static bool count_expired(void *ctx, const void *key, size_t len,
                          cf_filter_t *f)
{
    (void)key;
    (void)len;
    (*(size_t *)ctx)++;
    if (*(size_t *)ctx % 2 == 0) { /* half taken, as lazy freeing does */
        ks_free_removed(f);
        return true;
    }
    return false;
}

/* Active expiry deletes exactly the keys past their time, in bounded
 * steps, and every byte comes back. */
static void test_expire_step(void **state)
{
    ks_db_t *db = *state;
    enum { N = 3000 };
    uint64_t empty = ks_bytes(db);
    char k[32];
    for (int i = 0; i < N; i++) {
        int n = snprintf(k, sizeof(k), "plain:%d", i);
        add_new(db, k, (size_t)n, 8);
    }
    for (int i = 0; i < N; i++) {
        int n = snprintf(k, sizeof(k), "temp:%d", i);
        add_new(db, k, (size_t)n, 8);
        /* a third still has time to live */
        assert_int_equal(
            ks_set_expire(db, k, (size_t)n, i % 3 == 0 ? 2000 : 1000), 0);
    }
    ks_expire_stats_t st;
    size_t expired = 0, steps = 0;
    do {
        ks_expire_step(db, 1000, 400, 20, count_expired, &expired, &st);
        assert_true(st.buckets <= 400);
        assert_true(st.sampled < 20 + 64); /* whole buckets */
        steps++;
    } while (expired < 2 * N / 3 && steps < 100000);
    assert_int_equal(expired, 2 * N / 3);
    assert_int_equal(ks_size(db), N + N / 3);
    assert_int_equal(ks_expires(db), N / 3);
    assert_true(ks_avg_ttl(db) > 0 && ks_avg_ttl(db) <= 1000);
    /* another pass finds nothing more */
    for (int i = 0; i < 1000; i++)
        ks_expire_step(db, 1000, 400, 20, count_expired, &expired, &st);
    assert_int_equal(expired, 2 * N / 3);
    for (int i = 0; i < N; i++) {
        int n = snprintf(k, sizeof(k), "temp:%d", i);
        assert_true((ks_get(db, k, (size_t)n) != NULL) == (i % 3 == 0));
    }
    /* the rest expires later; the table is back to the plain keys */
    while (ks_expires(db) > 0)
        ks_expire_step(db, 2000, 400, 20, count_expired, &expired, &st);
    assert_int_equal(expired, N);
    assert_int_equal(ks_size(db), N);
    assert_int_equal(ks_avg_ttl(db), 0);
    for (int i = 0; i < N; i++) {
        int n = snprintf(k, sizeof(k), "plain:%d", i);
        assert_int_equal(ks_del(db, k, (size_t)n), 1);
    }
    settle(db); /* the shrink ends incrementally */
    assert_int_equal(ks_bytes(db), empty);
}

static void test_flush(void **state)
{
    ks_db_t *db = *state;
    uint64_t empty = ks_bytes(db);
    char k[32];
    for (int i = 0; i < 1000; i++) {
        int n = snprintf(k, sizeof(k), "key:%d", i);
        assert_non_null(add_new(db, k, (size_t)n, 8));
    }
    assert_int_equal(ks_size(db), 1000);
    ks_flush(db);
    assert_int_equal(ks_size(db), 0);
    assert_null(ks_get(db, "key:1", 5));
    assert_int_equal(ks_bytes(db), empty);
    /* Still usable after a flush. */
    assert_non_null(add_new(db, "a", 1, 8));
    assert_int_equal(ks_size(db), 1);
}

static void test_growth_many_keys(void **state)
{
    ks_db_t *db = *state;
    enum { N = 50000 };
    char k[32];
    for (int i = 0; i < N; i++) {
        int n = snprintf(k, sizeof(k), "k%d", i);
        assert_non_null(add_new(db, k, (size_t)n, 2));
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
        assert_non_null(add_new(db, k, (size_t)n, 2));
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
        assert_int_equal(ks_add(db, "g", 1, &f), 0);
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
    assert_int_equal(ks_add(db, "big", 3, &f), 0);
    uint64_t one = ks_bytes(db);
    assert_true(one >= empty + fb + 3);
    assert_true(one < empty + fb + 1024); /* entry overhead is small */

    ks_recount(db, "big", 3); /* unchanged size: no change */
    assert_int_equal(ks_bytes(db), one);
    ks_recount(db, "none", 4); /* absent: no-op */
    assert_int_equal(ks_bytes(db), one);

    /* The sum follows renames and deletes exactly. */
    assert_int_equal(ks_rename(db, "big", 3, "b", 1), 0);
    assert_int_equal(ks_bytes(db), one - (entry_of(3) - entry_of(1)));
    assert_int_equal(ks_del(db, "b", 1), 1);
    assert_int_equal(ks_bytes(db), empty);

    /* Growth of the bucket array is counted, and given back on shrink. */
    add_range(db, 0, 5000);
    del_range(db, 0, 5000);
    settle(db); /* the shrink ends incrementally */
    assert_int_equal(ks_bytes(db), empty);
}

/* Fills a filter until it grows into a second table. */
static void grow(cf_filter_t *f)
{
    uint32_t n = cf_nfilters(f);
    char item[32];
    for (int i = 0; i < 100000 && cf_nfilters(f) == n; i++) {
        int len = snprintf(item, sizeof(item), "grow-%d", i);
        assert_int_equal(cf_add(f, item, (size_t)len), 0);
    }
    assert_true(cf_nfilters(f) > n);
}

/* Many keys; some filters grow and are recounted, some grow unrecounted,
 * some are renamed: deleting them all, or flushing, gives back exactly the
 * empty figure. */
static void test_accounting_returns_to_empty(void **state)
{
    ks_db_t *db = *state;
    uint64_t empty = ks_bytes(db);
    enum { N = 3000 };
    char k[64];
    for (int round = 0; round < 2; round++) {
        for (int i = 0; i < N; i++) {
            int n = snprintf(k, sizeof(k), "tenant:%d", i);
            cf_filter_t *f = add_new(db, k, (size_t)n, 16);
            if (i % 7 == 0) {
                grow(f);
                if (i % 14 == 0)
                    ks_recount(db, k, (size_t)n);
            }
        }
        for (int i = 0; i < N; i += 5) {
            char d[64];
            int n = snprintf(k, sizeof(k), "tenant:%d", i);
            int m = snprintf(d, sizeof(d), "renamed-to-a-longer-name:%d", i);
            assert_int_equal(ks_rename(db, k, (size_t)n, d, (size_t)m), 0);
        }
        assert_int_equal(ks_size(db), N);
        assert_true(ks_bytes(db) > empty + (uint64_t)N * 100);
        if (round == 0) {
            for (int i = 0; i < N; i++) {
                int n = i % 5 == 0 ? snprintf(k, sizeof(k),
                                              "renamed-to-a-longer-name:%d", i)
                                   : snprintf(k, sizeof(k), "tenant:%d", i);
                assert_int_equal(ks_del(db, k, (size_t)n), 1);
            }
            assert_int_equal(ks_size(db), 0);
        } else {
            ks_flush(db);
        }
        settle(db); /* the shrink ends incrementally */
        assert_int_equal(ks_bytes(db), empty);
    }
}

/* A key past UINT32_MAX bytes is refused before its bytes are read. */
static void test_key_too_long(void **state)
{
    ks_db_t *db = *state;
    if (SIZE_MAX <= UINT32_MAX)
        skip();
    cf_filter_t *f = mkfilter(10), *was = f;
    uint64_t before = ks_bytes(db);
    assert_int_equal(ks_add(db, "x", (size_t)UINT32_MAX + 1, &f), -ENOMEM);
    assert_ptr_equal(f, was);
    assert_int_equal(ks_size(db), 0);
    assert_int_equal(ks_bytes(db), before);
    assert_non_null(add_new(db, "x", 1, 10));
    assert_int_equal(ks_rename(db, "x", 1, "y", (size_t)UINT32_MAX + 1),
                     -ENOMEM);
    assert_non_null(ks_get(db, "x", 1));
    cf_free(f);
}

/* ks_foreach callback: the stored address of the key in ctx. */
typedef struct linked {
    const char *key;
    const cf_filter_t *f;
} linked_t;

static int find_linked(void *ctx, const void *key, size_t len,
                       const cf_filter_t *f)
{
    linked_t *l = ctx;
    if (len == strlen(l->key) && memcmp(key, l->key, len) == 0)
        l->f = f;
    return 0;
}

/* The filter the table holds for key now, found without ks_get(). */
static const cf_filter_t *linked(const ks_db_t *db, const char *key)
{
    linked_t l = {key, NULL};
    assert_int_equal(ks_foreach(db, find_linked, &l), 0);
    return l.f;
}

/* ks_get() remembers the filter it found last; whatever links, unlinks or
 * moves a filter makes it look again (every realloc here moves, so a
 * stale address would be a freed one). */
static void test_get_after_changes(void **state)
{
    ks_db_t *db = *state;
    ks_db_t *other = ks_db_new();
    assert_non_null(other);
    add_new(db, "k", 1, 10);
    assert_ptr_equal(ks_get(db, "k", 1), linked(db, "k"));
    /* An expiry time resizes the entry: the filter moves. */
    assert_int_equal(ks_set_expire(db, "k", 1, 1000), 0);
    assert_ptr_equal(ks_get(db, "k", 1), linked(db, "k"));
    assert_int_equal(ks_clear_expire(db, "k", 1), 1);
    assert_ptr_equal(ks_get(db, "k", 1), linked(db, "k"));
    /* Renamed away, and another key under the old name. */
    assert_int_equal(ks_rename(db, "k", 1, "a-longer-name", 13), 0);
    assert_null(ks_get(db, "k", 1));
    assert_ptr_equal(ks_get(db, "a-longer-name", 13),
                     linked(db, "a-longer-name"));
    cf_filter_t *g = add_new(db, "k", 1, 10);
    assert_ptr_equal(ks_get(db, "k", 1), g);
    assert_int_equal(ks_del(db, "k", 1), 1);
    assert_null(ks_get(db, "k", 1));
    /* Moved to another table. */
    assert_non_null(ks_get(db, "a-longer-name", 13));
    assert_int_equal(ks_move(db, other, "a-longer-name", 13), 0);
    assert_null(ks_get(db, "a-longer-name", 13));
    assert_ptr_equal(ks_get(other, "a-longer-name", 13),
                     linked(other, "a-longer-name"));
    /* Expired by the step, and flushed. */
    add_new(db, "e", 1, 10);
    assert_int_equal(ks_set_expire(db, "e", 1, 5), 0);
    assert_non_null(ks_get(db, "e", 1));
    ks_expire_stats_t st;
    size_t expired = 0;
    for (int i = 0; i < 64 && ks_size(db) > 0; i++)
        ks_expire_step(db, 10, 64, 64, count_expired, &expired, &st);
    assert_int_equal(expired, 1);
    assert_null(ks_get(db, "e", 1));
    assert_non_null(ks_get(other, "a-longer-name", 13));
    ks_flush(other);
    assert_null(ks_get(other, "a-longer-name", 13));
    ks_db_free(other);
}

/* When the filter cannot be resized for its entry, ks_add leaves it to the
 * caller untouched and ks_rename changes nothing. */
static void test_resize_failure_changes_nothing(void **state)
{
    ks_db_t *db = *state;
    cf_filter_t *f = mkfilter(10), *was = f;
    assert_int_equal(cf_add(f, "item", 4), 0);
    uint64_t empty = ks_bytes(db);
    moving_fail_reallocs = 1;
    assert_int_equal(ks_add(db, "a", 1, &f), -ENOMEM);
    assert_int_equal(moving_fail_reallocs, 0);
    assert_ptr_equal(f, was);
    assert_true(cf_exists(f, "item", 4));
    assert_int_equal(ks_size(db), 0);
    assert_int_equal(ks_bytes(db), empty);

    size_t moves = moving_reallocs;
    assert_int_equal(ks_add(db, "a", 1, &f), 0);
    assert_true(moving_reallocs > moves); /* it moved */
    assert_ptr_equal(ks_get(db, "a", 1), f);
    uint64_t one = ks_bytes(db);
    moving_fail_reallocs = 1;
    assert_int_equal(ks_rename(db, "a", 1, "a-longer-key", 12), -ENOMEM);
    assert_ptr_equal(ks_get(db, "a", 1), f);
    assert_null(ks_get(db, "a-longer-key", 12));
    assert_int_equal(ks_size(db), 1);
    assert_int_equal(ks_bytes(db), one);
    assert_int_equal(ks_rename(db, "a", 1, "b", 1), 0);
    assert_null(ks_get(db, "a", 1));
    assert_holds(db, "b", 1, "item");
    assert_int_equal(ks_bytes(db), one);
    /* A failed rename over an existing key keeps both. */
    const char *c = "c-a-key-of-another-entry-size";
    size_t cl = strlen(c);
    assert_non_null(add_new(db, c, cl, 10));
    uint64_t two = ks_bytes(db);
    moving_fail_reallocs = 1;
    assert_int_equal(ks_rename(db, "b", 1, c, cl), -ENOMEM);
    assert_holds(db, "b", 1, "item");
    assert_non_null(ks_get(db, c, cl));
    assert_false(cf_exists(ks_get(db, c, cl), "item", 4));
    assert_int_equal(ks_size(db), 2);
    assert_int_equal(ks_bytes(db), two);
    /* A failed rename to a shorter entry (its own block: a shrink must
     * not overwrite the entry in place) keeps the key and its chain. */
    moving_fail_mallocs = 1;
    assert_int_equal(ks_rename(db, c, cl, "d", 1), -ENOMEM);
    assert_int_equal(moving_fail_mallocs, 0);
    assert_non_null(ks_get(db, c, cl));
    assert_null(ks_get(db, "d", 1));
    assert_holds(db, "b", 1, "item");
    assert_int_equal(ks_bytes(db), two);
    assert_int_equal(ks_rename(db, c, cl, "d", 1), 0);
    assert_non_null(ks_get(db, "d", 1));
    assert_holds(db, "b", 1, "item");
    /* Renames that keep the entry's size need no memory at all. */
    moving_fail_reallocs = 1;
    moving_fail_mallocs = 1;
    assert_int_equal(ks_rename(db, "d", 1, "e", 1), 0);
    assert_non_null(ks_get(db, "e", 1));
    moving_fail_reallocs = 0;
    moving_fail_mallocs = 0;
}

/* A filter too large to be small (its table entry in an array, not in the
 * struct) keeps its entry before the struct too, through rename, recount
 * and delete. */
static void test_large_filter_entry(void **state)
{
    ks_db_t *db = *state;
    uint64_t empty = ks_bytes(db);
    cf_filter_t *f = mkfilter((uint64_t)4 << 22 | 1); /* > 2^22 buckets */
    uint64_t fb = cf_size_bytes(f);
    assert_int_equal(cf_add(f, "item", 4), 0);
    assert_int_equal(ks_add(db, "big", 3, &f), 0);
    assert_int_equal(ks_bytes(db), empty + fb + entry_of(3));
    assert_int_equal(ks_rename(db, "big", 3, "a-much-longer-name", 18), 0);
    assert_holds(db, "a-much-longer-name", 18, "item");
    ks_recount(db, "a-much-longer-name", 18);
    assert_int_equal(ks_bytes(db), empty + fb + entry_of(18));
    assert_int_equal(ks_usage(db, "a-much-longer-name", 18),
                     fb + entry_of(18) + sizeof(void *));
    assert_int_equal(ks_del(db, "a-much-longer-name", 18), 1);
    assert_int_equal(ks_bytes(db), empty);
}

/* MOVE: the filter changes database without moving; each database's sum
 * goes back to where it was when the key leaves, and a grown filter is
 * counted in its new database with the tables it has now. */
static void test_move_between_dbs(void **state)
{
    ks_db_t *a = *state, *b = ks_db_new();
    assert_non_null(b);
    uint64_t ea = ks_bytes(a), eb = ks_bytes(b);
    cf_filter_t *f = add_new(a, "k", 1, 8);
    uint64_t fa = ks_bytes(a) - ea;
    assert_int_equal(ks_move(a, b, "nope", 4), -ENOENT);
    assert_int_equal(ks_move(a, b, "k", 1), 0);
    assert_null(ks_get(a, "k", 1));
    assert_ptr_equal(ks_get(b, "k", 1), f);
    assert_int_equal(ks_bytes(a), ea);
    assert_int_equal(ks_bytes(b), eb + fa);
    assert_int_equal(ks_size(a), 0);
    assert_int_equal(ks_size(b), 1);
    /* grown while stored, not recounted: the move counts it afresh */
    for (int i = 0; i < 64; i++)
        (void)cf_add(f, &i, sizeof(i));
    assert_true(cf_nfilters(f) > 1);
    add_new(a, "k", 1, 8);
    assert_int_equal(ks_move(b, a, "k", 1), -EEXIST);
    assert_int_equal(ks_del(a, "k", 1), 1);
    assert_int_equal(ks_move(b, a, "k", 1), 0);
    assert_int_equal(ks_bytes(b), eb);
    assert_int_equal(ks_del(a, "k", 1), 1);
    assert_int_equal(ks_bytes(a), ea);
    ks_db_free(b);
}

/* RANDOMKEY: nothing from an empty table; every key of a small table is
 * drawn, and only those. */
static void test_random(void **state)
{
    ks_db_t *db = *state;
    const void *key;
    size_t len;
    assert_false(ks_random(db, 12345, &key, &len));
    add_new(db, "a", 1, 8);
    add_new(db, "bb", 2, 8);
    add_new(db, "ccc", 3, 8);
    bool seen[4] = {false};
    uint64_t r = 88172645463325252ull;
    for (int i = 0; i < 1000; i++) {
        r ^= r << 13, r ^= r >> 7, r ^= r << 17;
        assert_true(ks_random(db, r, &key, &len));
        assert_true(len >= 1 && len <= 3);
        assert_non_null(ks_get(db, key, len));
        seen[len] = true;
    }
    assert_true(seen[1] && seen[2] && seen[3]);
}

/* ks_take_all() moves every key into a new table, O(1), and leaves an
 * empty one; ks_remove() takes one key out without freeing it. Both keep
 * the byte counts exact. */
static void test_take_all_and_remove(void **state)
{
    ks_db_t *db = *state;
    uint64_t empty = ks_bytes(db);
    char k[32];
    for (int i = 0; i < 1000; i++) {
        int n = snprintf(k, sizeof(k), "t:%d", i);
        add_new(db, k, (size_t)n, 16);
        if (i % 3 == 0)
            assert_int_equal(ks_set_expire(db, k, (size_t)n, 5000), 0);
    }
    uint64_t full = ks_bytes(db);
    ks_db_t *taken = ks_take_all(db);
    assert_non_null(taken);
    assert_int_equal(ks_size(db), 0);
    assert_int_equal(ks_expires(db), 0);
    assert_int_equal(ks_bytes(db), empty);
    assert_null(ks_get(db, "t:1", 3));
    assert_int_equal(ks_size(taken), 1000);
    assert_int_equal(ks_expires(taken), 334);
    assert_int_equal(ks_bytes(taken), full);
    assert_non_null(ks_get(taken, "t:999", 5));
    /* the emptied table works as a new one */
    add_new(db, "t:1", 3, 16);
    cf_filter_t *f = ks_remove(taken, "t:1", 3);
    assert_non_null(f);
    assert_null(ks_remove(taken, "t:1", 3));
    assert_int_equal(ks_size(taken), 999);
    assert_int_equal(ks_bytes(taken), full - ks_removed_bytes(f));
    ks_free_removed(f);
    ks_db_free(taken);
    assert_int_equal(ks_del(db, "t:1", 3), 1);
    settle(db);
    assert_int_equal(ks_bytes(db), empty);
}

/* Random operation sequences against the exact model (ks_model.h), with
 * resizes forced, paused and moved on between the operations. */
static void test_model_with_resizes(void **state)
{
    (void)state;
    enum { LEN = 60000 };
    uint8_t *in = malloc(LEN);
    assert_non_null(in);
    for (uint64_t seed = 1; seed <= 8; seed++) {
        uint64_t x = seed * 0x9E3779B97F4A7C15ull;
        for (size_t i = 0; i < LEN; i++) {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            in[i] = (uint8_t)(x >> 24);
        }
        ksm_run(in, LEN);
    }
    free(in);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_add_get_del, setup, teardown),
        cmocka_unit_test(test_model_with_resizes),
        cmocka_unit_test_setup_teardown(test_take_all_and_remove, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_move_between_dbs, setup, teardown),
        cmocka_unit_test_setup_teardown(test_random, setup, teardown),
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
        cmocka_unit_test_setup_teardown(test_rename_resizes_entry, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_key_lengths, setup, teardown),
        cmocka_unit_test_setup_teardown(test_walks_report_exact_keys, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_usage, setup, teardown),
        cmocka_unit_test_setup_teardown(test_accounting_returns_to_empty, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_key_too_long, setup, teardown),
        cmocka_unit_test_setup_teardown(test_expire_accounting, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_expire_step, setup, teardown),
        cmocka_unit_test_setup_teardown(test_large_filter_entry, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_get_after_changes, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_resize_failure_changes_nothing,
                                        setup, teardown),
    };
    /* Every resize of host bytes moves the filter: a stale pointer is a
     * use after free under ASan. */
    moving_alloc_install();
    return cmocka_run_group_tests(tests, NULL, NULL);
}
