/* Unit tests of the module's load arguments (module/modargs.h). */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "modargs.h"

/* Parses the NULL-terminated words into *d, from the defaults. */
static int parse(cfcmd_defaults_t *d, char *why, const char *const *w)
{
    cmdarg_t a[16];
    int n = 0;
    for (; w[n] != NULL; n++) {
        a[n].ptr = w[n];
        a[n].len = strlen(w[n]);
    }
    modargs_default(d);
    return modargs_parse(d, n, a, why, 128);
}

static void test_defaults_are_the_daemons(void **state)
{
    (void)state;
    cfcmd_defaults_t d;
    modargs_default(&d);
    assert_int_equal(d.bucket_size, 4);
    assert_int_equal(d.fp_bits, 12);
    assert_int_equal(d.max_iterations, 500);
    assert_int_equal(d.expansion, 1);
    assert_int_equal(d.max_expansions, 32);
    assert_int_equal(d.initial_size, 1024);
    assert_true(d.error_rate == 0);
}

static void test_good_arguments(void **state)
{
    (void)state;
    cfcmd_defaults_t d;
    char why[128];
    const char *w[] = {"CF-BUCKET-SIZE", "2", "cf-error-rate", "0.0001",
                       "cf-max-iterations", "20", "cf-expansion-factor", "0",
                       "cf-max-expansions", "64", "cf-initial-size", "4",
                       NULL};
    assert_int_equal(parse(&d, why, w), 0);
    assert_int_equal(d.bucket_size, 2);
    assert_int_equal(d.fp_bits, 16); /* from the rate */
    assert_int_equal(d.max_iterations, 20);
    assert_int_equal(d.expansion, 0);
    assert_int_equal(d.max_expansions, 64);
    assert_int_equal(d.initial_size, 4);
    const char *w2[] = {"cf-error-rate", "0.01", "cf-fingerprint-bits", "8",
                        NULL};
    assert_int_equal(parse(&d, why, w2), 0);
    assert_int_equal(d.fp_bits, 8);
    assert_true(d.error_rate == 0); /* a width clears the rate */
}

static void test_bad_arguments(void **state)
{
    (void)state;
    static const char *const bad[][5] = {
        {"cf-bucket-size", NULL},
        {"cf-bucket-size", "0", NULL},
        {"cf-bucket-size", "256", NULL},
        {"cf-bucket-size", "04", NULL},
        {"cf-bucket-size", "600", "cf-initial-size", "2000", NULL},
        {"cf-fingerprint-bits", "13", NULL},
        {"cf-error-rate", "1", NULL},
        {"cf-error-rate", "-0.5", NULL},
        {"cf-error-rate", "abc", NULL},
        {"cf-error-rate", "1e-9", NULL},
        {"cf-max-iterations", "0", NULL},
        {"cf-max-iterations", "65536", NULL},
        {"cf-expansion-factor", "32769", NULL},
        {"cf-max-expansions", "65", NULL},
        {"cf-initial-size", "7", NULL},
        {"cf-initial-size", "4294967297", NULL},
        {"cf-initial-size", "-1", NULL},
        {"port", "6379", NULL},
    };
    cfcmd_defaults_t d;
    char why[128];
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        why[0] = '\0';
        assert_int_equal(parse(&d, why, bad[i]), -EINVAL);
        assert_true(strlen(why) > 0);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_defaults_are_the_daemons),
        cmocka_unit_test(test_good_arguments),
        cmocka_unit_test(test_bad_arguments),
    };
    return cmocka_run_group_tests_name("modargs", tests, NULL, NULL);
}
