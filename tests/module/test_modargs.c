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
    arg_t a[16];
    int n = 0;
    for (; w[n] != NULL; n++) {
        a[n].ptr = w[n];
        a[n].len = strlen(w[n]);
    }
    modargs_default(d);
    return modargs_parse(d, n, a, why, 192);
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
    char why[192];
    const char *w[] = {"CF-BUCKET-SIZE",
                       "2",
                       "cf-error-rate",
                       "0.0001",
                       "cf-max-iterations",
                       "20",
                       "cf-expansion-factor",
                       "0",
                       "cf-max-expansions",
                       "64",
                       "cf-initial-size",
                       "4",
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
        {"cf-error-rate", "5e-5", NULL},
        {"cf-bucket-size", "2", "cf-error-rate", "5e-5", NULL},
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
    char why[192];
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        why[0] = '\0';
        assert_int_equal(parse(&d, why, bad[i]), -EINVAL);
        assert_true(strlen(why) > 0);
    }
}

/* The daemon's cf-error-rate rule (server/config.c): any encoding the core
 * may choose for the rate counts, semi-sorted ones included. */
static void test_rate_semisorted(void **state)
{
    (void)state;
    cfcmd_defaults_t d;
    char why[192];
    /* At bucket size 4 only 17-bit semi-sorted fingerprints meet 1e-4
     * (plain 16 bits give 8/65535 = 1.2e-4). */
    const char *w[] = {"cf-error-rate", "0.0001", NULL};
    assert_int_equal(parse(&d, why, w), 0);
    assert_true(d.error_rate == 0.0001);
    assert_int_equal(d.fp_bits, 16); /* the plain fallback width */
    /* 13-bit semi-sorted meets 0.001; the plain fallback is 16. */
    const char *w2[] = {"cf-error-rate", "0.001", NULL};
    assert_int_equal(parse(&d, why, w2), 0);
    assert_int_equal(d.fp_bits, 16);
    const char *w3[] = {"cf-error-rate", "0.01", NULL};
    assert_int_equal(parse(&d, why, w3), 0);
    assert_int_equal(d.fp_bits, 12);
    /* A smaller bucket makes a smaller rate reachable with plain ones. */
    const char *w4[] = {"cf-bucket-size", "1", "cf-error-rate", "5e-5", NULL};
    assert_int_equal(parse(&d, why, w4), 0);
    assert_int_equal(d.fp_bits, 16);
    /* Changing the bucket size afterwards rechecks the rate. */
    const char *w5[] = {"cf-error-rate", "0.0001", "cf-bucket-size", "2", NULL};
    assert_int_equal(parse(&d, why, w5), 0);
    assert_int_equal(d.bucket_size, 2);
    assert_int_equal(d.fp_bits, 16);
}

/* The reasons read as the daemon's for the same directive and value. */
static void test_daemons_words(void **state)
{
    (void)state;
    static const struct {
        const char *w[5];
        const char *why;
    } cases[] = {
        {{"cf-error-rate", "0.00005", NULL},
         "cf-error-rate: rate 5e-05 is below what the finest fingerprints "
         "(17-bit semi-sorted at bucket size 4, else 16-bit) give with "
         "bucket size 4"},
        {{"cf-error-rate", "0.001", "cf-bucket-size", "255", NULL},
         "cf-bucket-size: cf-error-rate 0.001 cannot be met with this bucket "
         "size"},
        {{"cf-error-rate", "1", NULL},
         "cf-error-rate: argument must be 0 (unset) or between 0 and 1"},
        {{"cf-error-rate", "0.1x", NULL},
         "cf-error-rate: argument couldn't be parsed into a number"},
        {{"cf-bucket-size", "256", NULL},
         "cf-bucket-size: argument must be between 1 and 255 inclusive"},
        {{"cf-max-iterations", "0", NULL},
         "cf-max-iterations: argument must be between 1 and 65535 "
         "inclusive"},
        {{"cf-initial-size", "4", "cf-bucket-size", "4", NULL},
         "cf-initial-size: argument must be at least twice cf-bucket-size "
         "(4)"},
        {{"cf-fingerprint-bits", "10", NULL},
         "cf-fingerprint-bits: argument must be 8, 12 or 16"},
        {{"cf-max-expansions", "x", NULL},
         "cf-max-expansions: argument couldn't be parsed into an integer"},
    };
    cfcmd_defaults_t d;
    char why[192];
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        assert_int_equal(parse(&d, why, cases[i].w), -EINVAL);
        assert_string_equal(why, cases[i].why);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_defaults_are_the_daemons),
        cmocka_unit_test(test_good_arguments),
        cmocka_unit_test(test_bad_arguments),
        cmocka_unit_test(test_rate_semisorted),
        cmocka_unit_test(test_daemons_words),
    };
    return cmocka_run_group_tests_name("modargs", tests, NULL, NULL);
}
