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
#include <time.h>

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
    assert_int_equal(heap_cron(300 * MiB, true), 0);
    assert_int_equal(heap_cron(2 * MiB, true), 0);
    /* Freed: the size fell below a quarter, but it is still falling (an
     * expiry sweep): no purge yet. */
    assert_false(heap_cron(2 * MiB, false) & HEAP_DUE_PURGE);
    assert_false(heap_cron(1 * MiB, false) & HEAP_DUE_PURGE);
    /* Still for one cron: the purge is due, once. */
    assert_true(heap_cron(1 * MiB, false) & HEAP_DUE_PURGE);
    assert_false(heap_cron(1 * MiB, false) & HEAP_DUE_PURGE);
}

static void test_small_fall_waits_for_quiet(void **state)
{
    (void)state;
    (void)heap_cron(100 * MiB, false);
    (void)heap_cron(100 * MiB, false);
    /* Down to a half, not a quarter: only a second of stillness purges,
     * which these calls, a moment apart, do not reach. */
    assert_false(heap_cron(50 * MiB, false) & HEAP_DUE_PURGE);
    assert_false(heap_cron(50 * MiB, false) & HEAP_DUE_PURGE);
    /* Under a quarter, by more than 4 MiB: due once still. */
    assert_false(heap_cron(5 * MiB, false) & HEAP_DUE_PURGE);
    assert_true(heap_cron(5 * MiB, false) & HEAP_DUE_PURGE);
    /* Under a quarter of that, but by less than 4 MiB: not worth one. */
    assert_false(heap_cron(2 * MiB, false) & HEAP_DUE_PURGE);
    assert_false(heap_cron(1 * MiB + 1, false) & HEAP_DUE_PURGE);
    assert_false(heap_cron(1 * MiB + 1, false) & HEAP_DUE_PURGE);
}

static void test_recent_stats(void **state)
{
    (void)state;
    heap_stats_t a, b;
    heap_stats_recent(&a); /* the first call takes them */
    /* libc under a sanitizer and jemalloc alike say they know. */
    assert_true(a.known);
    /* An allocation does not show until they are taken again (by the
     * lazy free thread, when the cron says they are due). */
    void *p = malloc(4 << 20);
    assert_non_null(p);
    heap_stats_recent(&b);
    assert_int_equal(a.allocated, b.allocated);
    heap_take_stats();
    heap_stats_recent(&b);
    assert_true(b.allocated >= a.allocated);
    free(p);
    heap_purge(); /* any thread may; here, the only one */
}

static void test_stats_due_when_still(void **state)
{
    (void)state;
    /* Some time after the last figures: due at the next still cron. */
    (void)heap_cron(10 * MiB, false);
    int due = 0;
    for (int i = 0; i < 30 && !(due & HEAP_DUE_STATS); i++) {
        struct timespec ts = {0, 50 * 1000 * 1000};
        nanosleep(&ts, NULL);
        due = heap_cron(10 * MiB, false);
    }
    assert_true(due & HEAP_DUE_STATS);
    /* Not again within HEAP_STATS_EVERY_MS, nor while the thread frees. */
    assert_false(heap_cron(10 * MiB, false) & HEAP_DUE_STATS);
    assert_int_equal(heap_cron(10 * MiB, true), 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_fall_purges_once_still),
        cmocka_unit_test(test_small_fall_waits_for_quiet),
        cmocka_unit_test(test_recent_stats),
        cmocka_unit_test(test_stats_due_when_still),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
