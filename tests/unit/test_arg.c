/*
 * test_arg.c - the argument parsers of common/arg.h (Redis's string2ll
 * rules, the double and keyword matchers) and the owned command copy of
 * common/argv.h.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>
#include <string.h>

#include "arg.h"
#include "argv.h"

static bool ll(const char *s, long long *v)
{
    return arg_ll(&(arg_t){s, strlen(s)}, v);
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
    assert_false(arg_ll(&(arg_t){"1\0"
                                 "2",
                                 3},
                        &v));
}

static void test_u64(void **state)
{
    uint64_t v;
    assert_true(arg_u64(&(arg_t){"18446744073709551615", 20}, &v));
    assert_true(v == UINT64_MAX);
    assert_false(arg_u64(&(arg_t){"18446744073709551616", 20}, &v));
    assert_false(arg_u64(&(arg_t){"-1", 2}, &v));
    assert_false(arg_u64(&(arg_t){"01", 2}, &v));
    assert_true(arg_u64(&(arg_t){"0", 1}, &v));
    assert_true(v == 0);
}

static void test_double(void **state)
{
    double d = 0;
    assert_true(arg_double(&(arg_t){"0.001", 5}, &d));
    assert_true(d == 0.001);
    assert_true(arg_double(&(arg_t){"1e-3", 4}, &d));
    assert_true(arg_double(&(arg_t){"-2", 2}, &d));
    assert_true(d == -2);
    d = 7;
    static const char *bad[] = {"",    " 1",  "1 ",    "1x",
                                "nan", "inf", "1e999", "0x"};
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
        assert_false(arg_double(&(arg_t){bad[i], strlen(bad[i])}, &d));
    assert_false(arg_double(&(arg_t){"1\0"
                                     "2",
                                     3},
                            &d));
    assert_true(d == 7); /* untouched on failure */
}

static void test_is(void **state)
{
    assert_true(arg_is(&(arg_t){"ITEMS", 5}, "items"));
    assert_true(arg_is(&(arg_t){"iTeMs", 5}, "items"));
    assert_false(arg_is(&(arg_t){"ITEM", 4}, "items"));
    assert_false(arg_is(&(arg_t){"ITEMSX", 6}, "items"));
    assert_false(arg_is(&(arg_t){"IT\0MS", 5}, "items"));
    assert_true(arg_is(&(arg_t){"", 0}, ""));
}

/* One allocation holds the views and the bytes: the copy outlives the
 * source buffer, keeps embedded NULs, and ends each argument with a NUL. */
static void test_argv_copy(void **state)
{
    char src[] = "SET\0k\0v\0x";
    arg_t in[4] = {{src, 3}, {src + 4, 1}, {src + 6, 3}, {src, 0}};
    argv_t *a = argv_copy(4, in);
    assert_non_null(a);
    memset(src, 'Z', sizeof(src)); /* the source may go */
    assert_int_equal(a->argc, 4);
    assert_int_equal(a->v[0].len, 3);
    assert_memory_equal(a->v[0].ptr, "SET", 4);
    assert_memory_equal(a->v[1].ptr, "k", 2);
    assert_int_equal(a->v[2].len, 3);
    assert_memory_equal(a->v[2].ptr, "v\0x", 4); /* binary-safe, NUL after */
    assert_int_equal(a->v[3].len, 0);
    assert_int_equal(a->v[3].ptr[0], '\0');
    /* Every view points inside the one block the size accounts for. */
    for (int i = 0; i < a->argc; i++) {
        assert_true(a->v[i].ptr >= (const char *)a);
        assert_true(a->v[i].ptr + a->v[i].len < (const char *)a + a->size);
    }
    assert_int_equal(a->size, argv_size(4, in));
    assert_int_equal(a->size,
                     sizeof(argv_t) + 4 * sizeof(arg_t) + 4 + 2 + 4 + 1);
    argv_free(a);
    argv_free(NULL);
}

static void test_argv_copy_every_length(void **state)
{
    /* Each length from 0 to 40 (the short ones are copied by fixed-size
     * moves), at every offset of a source of distinct bytes. */
    char src[64];
    for (size_t i = 0; i < sizeof(src); i++)
        src[i] = (char)(i * 7 + 1);
    for (size_t len = 0; len <= 40; len++)
        for (size_t off = 0; off + len <= sizeof(src) && off < 8; off++) {
            arg_t in[2] = {{src + off, len}, {src, 1}};
            argv_t *a = argv_copy(2, in);
            assert_non_null(a);
            assert_int_equal(a->v[0].len, len);
            assert_memory_equal(a->v[0].ptr, src + off, len);
            assert_int_equal(a->v[0].ptr[len], '\0');
            assert_int_equal(a->v[1].ptr[0], src[0]);
            assert_int_equal(a->v[1].ptr[1], '\0');
            argv_free(a);
        }
}

static void test_argv_empty_and_overflow(void **state)
{
    argv_t *a = argv_copy(0, NULL);
    assert_non_null(a);
    assert_int_equal(a->argc, 0);
    assert_int_equal(a->size, sizeof(argv_t));
    argv_free(a);
    /* Sizes that cannot be allocated are refused before any copy. */
    arg_t huge[2] = {{"x", SIZE_MAX - 8}, {"y", 1}};
    assert_int_equal(argv_size(2, huge), 0);
    assert_null(argv_copy(2, huge));
    assert_int_equal(argv_size(-1, NULL), 0);
    assert_null(argv_copy(-1, NULL));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_ll_accepts),
        cmocka_unit_test(test_ll_refuses),
        cmocka_unit_test(test_u64),
        cmocka_unit_test(test_double),
        cmocka_unit_test(test_is),
        cmocka_unit_test(test_argv_copy),
        cmocka_unit_test(test_argv_copy_every_length),
        cmocka_unit_test(test_argv_empty_and_overflow),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
