/* Unit tests of what filter/cf.h promises a host that replicates or counts
 * memory: the allocator hook sees every byte, and a filter's relocations
 * depend on its serialised state only. */
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

/* A counting allocator: a size header in front of every block. */
static size_t live_bytes, live_blocks;

static void *count_malloc(size_t n)
{
    size_t *p = malloc(n + sizeof(size_t));
    if (p == NULL)
        return NULL;
    *p = n;
    live_bytes += n;
    live_blocks++;
    return p + 1;
}

static void *count_calloc(size_t n, size_t size)
{
    if (size != 0 && n > SIZE_MAX / size - 1)
        return NULL;
    void *p = count_malloc(n * size);
    if (p != NULL)
        memset(p, 0, n * size);
    return p;
}

static void count_free(void *p)
{
    if (p == NULL)
        return;
    size_t *h = (size_t *)p - 1;
    live_bytes -= *h;
    live_blocks--;
    free(h);
}

static void *count_realloc(void *p, size_t n)
{
    if (p == NULL)
        return count_malloc(n);
    size_t old = ((size_t *)p)[-1];
    void *q = count_malloc(n);
    if (q == NULL)
        return NULL;
    memcpy(q, p, old < n ? old : n);
    count_free(p);
    return q;
}

static const cf_allocator_t counting = {count_malloc, count_calloc,
                                        count_realloc, count_free};

static cf_filter_t *make(uint64_t cap, uint32_t expansion)
{
    cf_params_t p = params_of(cap, expansion, 7);
    cf_filter_t *f = NULL;
    assert_int_equal(cf_create(&p, &f), 0);
    return f;
}

/* Every table, the large (otherwise mapped) ones included, comes from the
 * host's allocator, and cf_free() gives all of it back. */
static void test_allocator_sees_everything(void **state)
{
    (void)state;
    cf_set_allocator(&counting);
    cf_filter_t *f = make(4000000, 2); /* about 6.7 MB: past the map size */
    assert_true(live_bytes >= 6000000);
    assert_true(live_bytes <= cf_size_bytes(f));
    /* 4.2M items: past the first table's maximum load (above 97%) */
    for (uint64_t i = 0; i < 4200000; i++) {
        assert_int_equal(item_add(f, i), 0);
    }
    cf_stats_t st;
    cf_stats(f, &st);
    assert_int_equal(st.nfilters, 2); /* grew, through the hook too */
    assert_true(live_bytes >= 3 * 6000000);
    assert_true(live_bytes <= cf_size_bytes(f));
    cf_free(f);
    assert_int_equal(live_bytes, 0);
    assert_int_equal(live_blocks, 0);
    cf_set_allocator(NULL);
    f = make(1000, 1);
    assert_int_equal(live_blocks, 0); /* libc again */
    cf_free(f);
}

/* With cf_set_map_min() a host's allocator gets the small tables and the
 * core maps the large ones itself; cf_set_allocator() resets it to 0. */
static void test_map_min_splits_by_size(void **state)
{
    (void)state;
    cf_set_allocator(&counting);
    cf_set_map_min((size_t)2 << 20);
    cf_filter_t *small = make(100000, 1); /* about 160 KB */
    size_t small_bytes = live_bytes;
    assert_true(small_bytes >= 150000);
    cf_filter_t *big = make(4000000, 1);          /* about 6.7 MB: mapped */
    assert_true(live_bytes < small_bytes + 4096); /* only its struct */
    assert_true(cf_size_bytes(big) >= 6000000);
    for (uint64_t i = 0; i < 100000; i++) {
        assert_int_equal(item_add(big, i), 0);
        assert_true(item_has(big, i));
    }
    cf_free(big);
    cf_free(small);
    assert_int_equal(live_bytes, 0);
    assert_int_equal(live_blocks, 0);
    /* A new allocator sees every table again. */
    cf_set_allocator(&counting);
    big = make(4000000, 1);
    assert_true(live_bytes >= 6000000);
    cf_free(big);
    assert_int_equal(live_bytes, 0);
    cf_set_allocator(NULL);
}

/* A filter of under 2^22 buckets in one table is "small" (its table entry
 * packed into the 40-byte struct); one of 2^22 or more keeps a 32-byte
 * entry on its own, even with its table inline (map_min 0). Both count
 * exactly what they allocate, answer the same after a round trip through
 * the serialised form, and keep working after a move (host bytes) and
 * growth. */
static cf_filter_t *make_b1(uint64_t cap, cf_params_t *p)
{
    cf_params_default(p);
    p->capacity = cap;
    p->bucket_size = 1; /* load 0.5: nbuckets = 2 * cap */
    p->fp_bits = 8;
    p->seed = 9;
    cf_filter_t *f = NULL;
    assert_int_equal(cf_create(p, &f), 0);
    return f;
}

static void check_edge(uint64_t cap, bool small)
{
    cf_params_t p;
    cf_filter_t *f = make_b1(cap, &p);
    cf_stats_t st;
    cf_stats(f, &st);
    assert_true(small ? st.nbuckets < (1u << 22) : st.nbuckets >= (1u << 22));
    assert_int_equal(cf_size_bytes(f),
                     40 + (small ? 0 : 32) + cf_params_table_bytes(&p));
    assert_int_equal(live_bytes, cf_size_bytes(f));
    assert_int_equal(live_blocks, small ? 1 : 2);
    for (uint64_t i = 0; i < 1000; i++) {
        assert_int_equal(item_add(f, i), 0);
    }
    size_t hl = cf_header_len(f);
    uint8_t hdr[CF_HEADER_MAX];
    cf_header_write(f, hdr);
    cf_filter_t *g = NULL;
    size_t used = 0;
    assert_int_equal(cf_load_header(hdr, hl, NULL, &g, &used), 0);
    for (uint64_t off = 0; off < cf_data_len(f);) {
        const void *d;
        size_t n = cf_data_view(f, off, 1 << 20, &d);
        assert_int_equal(cf_load_data(g, off, d, n), 0);
        off += n;
    }
    assert_int_equal(cf_size_bytes(g), cf_size_bytes(f));
    assert_int_equal(cf_resize_extra(&g, 0, 104), 0);
    memset((uint8_t *)g - 104, 0x5A, 104);
    for (uint64_t i = 0; i < 2000; i++) {
        assert_int_equal(item_has(g, i), item_has(f, i));
        if (i < 1000)
            assert_true(item_has(g, i));
    }
    cf_free_extra(g, 104);
    cf_free(f);
    assert_int_equal(live_bytes, 0);
    assert_int_equal(live_blocks, 0);
}

static void test_small_form_edge(void **state)
{
    (void)state;
    cf_set_allocator(&counting);
    check_edge((1u << 21) - 1, true);
    check_edge(1u << 21, false);
    cf_set_allocator(NULL);
}

/* A filter loaded from a dump of a nearly full one and the original then
 * take the same inserts (with many relocations, deletes in between): they
 * stay byte for byte the same, as a replica must. */
static void test_relocations_follow_state(void **state)
{
    (void)state;
    cf_filter_t *a = make(20000, 0);
    uint64_t i = 0;
    while (i < 17000) {
        assert_int_equal(item_add(a, i++), 0);
    }
    cf_filter_t *b = copy_of(a);
    assert_true(same_bytes(a, b));
    int ra = 0, rb = 0, fails = 0;
    for (uint64_t n = 0; n < 8000; n++, i++) {
        ra = item_add(a, i);
        rb = item_add(b, i);
        assert_int_equal(ra, rb);
        fails += ra != 0;
        if (n % 7 == 0) {
            assert_int_equal(item_del(a, i - 100), item_del(b, i - 100));
        }
    }
    assert_true(fails > 0); /* the walk ran to the end: full */
    assert_true(same_bytes(a, b));
    cf_free(a);
    cf_free(b);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_allocator_sees_everything),
        cmocka_unit_test(test_map_min_splits_by_size),
        cmocka_unit_test(test_relocations_follow_state),
        cmocka_unit_test(test_small_form_edge),
    };
    return cmocka_run_group_tests_name("cf_host", tests, NULL, NULL);
}
