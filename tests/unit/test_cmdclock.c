/*
 * test_cmdclock.c - the command clock: its scaling, and that it never goes
 * backwards, before and after it switches to the time-stamp counter.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>
#include <uv.h>

#include "cmdclock.h"

static void test_scale(void **state)
{
    (void)state;
    assert_int_equal(cmdclock_scale(0, 1ull << 32), 0);
    assert_int_equal(cmdclock_scale(12345, 1ull << 32), 12345);
    /* 0.5 ns per tick, and 2.5 */
    assert_int_equal(cmdclock_scale(1000, 1ull << 31), 500);
    assert_int_equal(cmdclock_scale(1000, 5ull << 31), 2500);
    /* no overflow of the 128-bit product: 3 * 2^40 ticks at 2^8 ns */
    assert_int_equal(cmdclock_scale(3ull << 40, 1ull << 40), 3ull << 48);
}

/* Many readings, across calibrations (the first one records its start;
 * after CMDCLOCK_SPAN_NS the counter takes over): never backwards, and
 * moving on over a sleep. */
static void test_monotonic(void **state)
{
    (void)state;
    uint64_t prev = cmdclock_now();
    cmdclock_calibrate();
    for (int round = 0; round < 3; round++) {
        uv_sleep((unsigned)(CMDCLOCK_SPAN_NS / 1000000 / 2 + 10));
        cmdclock_calibrate();
        for (int i = 0; i < 100000; i++) {
            uint64_t v = cmdclock_now();
            assert_true(v >= prev);
            prev = v;
        }
    }
    uint64_t before = cmdclock_now();
    uv_sleep(20);
    assert_true(cmdclock_now() > before);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_scale),
        cmocka_unit_test(test_monotonic),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
