/*
 * test_cmdarg.c - the one integer parser (Redis's string2ll rules) and the
 * keyword matcher of commands/cmdarg.h.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>
#include <string.h>

#include "cmdarg.h"

static bool ll(const char *s, long long *v)
{
    return cmdarg_ll(s, strlen(s), v);
}

static void test_ll_accepts(void **state)
{
    long long v;
    assert_true(ll("0", &v));
    assert_int_equal(v, 0);
    assert_true(ll("42", &v));
    assert_int_equal(v, 42);
    assert_true(ll("-7", &v));
    assert_int_equal(v, -7);
    assert_true(ll("9223372036854775807", &v));
    assert_true(v == INT64_MAX);
    assert_true(ll("-9223372036854775808", &v));
    assert_true(v == INT64_MIN);
}

static void test_ll_refuses(void **state)
{
    static const char *bad[] = {
        "",
        "-",
        "007",
        "00",
        "-0",
        "-01",
        "+1",
        " 1",
        "1 ",
        "1a",
        "0x10",
        "1.0",
        "1e3",
        "--1",
        "9223372036854775808",
        "-9223372036854775809",
        "99999999999999999999",
        "123456789012345678901",
    };
    long long v = 1234;
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        assert_false(ll(bad[i], &v));
        assert_int_equal(v, 1234); /* untouched on failure */
    }
    /* Binary-safe: an embedded NUL is not the end of the number. */
    assert_false(cmdarg_ll("1\0"
                           "2",
                           3, &v));
}

static void test_u64(void **state)
{
    uint64_t v;
    assert_true(cmdarg_u64("18446744073709551615", 20, &v));
    assert_true(v == UINT64_MAX);
    assert_false(cmdarg_u64("18446744073709551616", 20, &v));
    assert_false(cmdarg_u64("-1", 2, &v));
    assert_false(cmdarg_u64("01", 2, &v));
    assert_true(cmdarg_u64("0", 1, &v));
    assert_true(v == 0);
}

static void test_double(void **state)
{
    double d = 0;
    assert_true(cmdarg_double("0.001", 5, &d));
    assert_true(d == 0.001);
    assert_true(cmdarg_double("1e-3", 4, &d));
    assert_true(cmdarg_double("-2", 2, &d));
    assert_true(d == -2);
    d = 7;
    static const char *bad[] = {"", " 1", "1 ", "1x", "nan", "inf", "1e999",
                                "0x"};
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
        assert_false(cmdarg_double(bad[i], strlen(bad[i]), &d));
    assert_false(cmdarg_double("1\0" "2", 3, &d));
    assert_true(d == 7); /* untouched on failure */
}

static void test_is(void **state)
{
    assert_true(cmdarg_is("ITEMS", 5, "items"));
    assert_true(cmdarg_is("iTeMs", 5, "items"));
    assert_false(cmdarg_is("ITEM", 4, "items"));
    assert_false(cmdarg_is("ITEMSX", 6, "items"));
    assert_false(cmdarg_is("IT\0MS", 5, "items"));
    assert_true(cmdarg_is("", 0, ""));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_ll_accepts),
        cmocka_unit_test(test_ll_refuses),
        cmocka_unit_test(test_u64),
        cmocka_unit_test(test_double),
        cmocka_unit_test(test_is),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
