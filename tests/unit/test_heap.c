/* Unit tests for server/heap.c: when the cron asks for a purge and when it
 * takes the allocator's figures (neither while another thread frees, nor
 * while the keyspace is still shrinking), and that the recent figures are
 * the allocator's. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <stdlib.h>

#include "heap.h"

#define MiB ((uint64_t)1 << 20)

static void test_fall_purges_once_still(void **state)
{
    (void)state;
    heap_init();
    /* The keyspace at 400 MiB: the peak purges are measured against. */
    (void)heap_cron(400 * MiB, false);
    (void)heap_cron(400 * MiB, false);
    /* A FLUSHALL ASYNC: the thread frees, and nothing is due while it
     * does, however far the size falls. */
    assert_false(heap_cron(300 * MiB, true));
    assert_false(heap_cron(2 * MiB, true));
    /* Freed: the size fell below a quarter, but it is still falling (an
     * expiry sweep): no purge yet. */
    assert_false(heap_cron(2 * MiB, false));
    assert_false(heap_cron(1 * MiB, false));
    /* Still for one cron: the purge is due, once. */
    assert_true(heap_cron(1 * MiB, false));
    assert_false(heap_cron(1 * MiB, false));
}

static void test_small_fall_waits_for_quiet(void **state)
{
    (void)state;
    (void)heap_cron(100 * MiB, false);
    (void)heap_cron(100 * MiB, false);
    /* Down to a half, not a quarter: only a second of stillness purges,
     * which these calls, a moment apart, do not reach. */
    assert_false(heap_cron(50 * MiB, false));
    assert_false(heap_cron(50 * MiB, false));
    /* Under a quarter, by more than 4 MiB: due once still. */
    assert_false(heap_cron(5 * MiB, false));
    assert_true(heap_cron(5 * MiB, false));
    /* Under a quarter of that, but by less than 4 MiB: not worth one. */
    assert_false(heap_cron(2 * MiB, false));
    assert_false(heap_cron(1 * MiB + 1, false));
    assert_false(heap_cron(1 * MiB + 1, false));
}

static void test_recent_stats(void **state)
{
    (void)state;
    heap_stats_t a, b;
    heap_stats_recent(&a);
    /* libc under a sanitizer and jemalloc alike say they know. */
    assert_true(a.known);
    /* Taken at most once a second: an allocation does not show until
     * the next cron that may take them. */
    void *p = malloc(4 << 20);
    assert_non_null(p);
    heap_stats_recent(&b);
    assert_int_equal(a.allocated, b.allocated);
    free(p);
    heap_purge(); /* any thread may; here, the only one */
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_fall_purges_once_still),
        cmocka_unit_test(test_small_fall_waits_for_quiet),
        cmocka_unit_test(test_recent_stats),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
