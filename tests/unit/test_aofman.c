/* Unit tests for server/aofman.c: the AOF manifest's parsing (Redis 7's
 * rules and refusals), formatting and the rewrite's bookkeeping. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "aofman.h"

static int parse(const char *text, aofman_t *m, char *err)
{
    return aofman_parse(text, strlen(text), m, err, 256);
}

static void test_parse_redis_layout(void **state)
{
    (void)state;
    aofman_t m;
    char err[256];
    assert_int_equal(parse("file appendonly.aof.2.base.rdb seq 2 type b\n"
                           "file appendonly.aof.1.incr.aof seq 1 type h\n"
                           "# comment\n"
                           "file appendonly.aof.3.incr.aof seq 3 type i\n"
                           "file appendonly.aof.4.incr.aof type i seq 4\n",
                           &m, err),
                     0);
    assert_string_equal(m.base->name, "appendonly.aof.2.base.rdb");
    assert_int_equal(m.base_seq, 2);
    assert_int_equal(m.nhist, 1);
    assert_int_equal(m.nincr, 2);
    assert_int_equal(m.incr_seq, 4);
    assert_string_equal(aofman_last_incr(&m), "appendonly.aof.4.incr.aof");
    char *text = aofman_format(&m);
    assert_string_equal(text, "file appendonly.aof.2.base.rdb seq 2 type b\n"
                              "file appendonly.aof.1.incr.aof seq 1 type h\n"
                              "file appendonly.aof.3.incr.aof seq 3 type i\n"
                              "file appendonly.aof.4.incr.aof seq 4 type i\n");
    free(text);
    aofman_free(&m);
}

static void expect_refusal(const char *text, const char *why)
{
    aofman_t m;
    char err[256] = "";
    assert_int_equal(parse(text, &m, err), -EINVAL);
    if (strstr(err, why) == NULL)
        fail_msg("'%s' gave '%s', expected '%s'", text, err, why);
    assert_null(m.base);
    assert_int_equal(m.nincr, 0);
}

static void test_refusals(void **state)
{
    (void)state;
    expect_refusal("", "Found an empty AOF manifest");
    expect_refusal("file a seq 1\n", "Invalid AOF manifest file format");
    expect_refusal("file a seq 1 type b\nfile b seq 2 type b\n",
                   "Found duplicate base file information");
    expect_refusal("file a seq 2 type i\nfile b seq 2 type i\n",
                   "Found a non-monotonic sequence number");
    expect_refusal("file a seq 1 type x\n", "Unknown AOF file type");
    expect_refusal("file ../a seq 1 type b\n",
                   "File can't be a path, just a filename");
    expect_refusal("file a seq 0 type b\n", "Invalid AOF manifest file format");
    expect_refusal("file a seq x type b\n", "Invalid AOF manifest file format");
    expect_refusal("file \"a seq 1 type b\n",
                   "Invalid AOF manifest file format");
    /* a torn last line (no newline) */
    expect_refusal("file a seq 1 type b", "Invalid AOF manifest file format");
    expect_refusal("   \n", "Invalid AOF manifest file format (line 1)");
    char longline[1100];
    memset(longline, 'a', sizeof(longline));
    memcpy(longline, "file ", 5);
    longline[sizeof(longline) - 2] = '\n';
    longline[sizeof(longline) - 1] = '\0';
    expect_refusal(longline, "too long line");
}

static void test_quoted_names_round_trip(void **state)
{
    (void)state;
    aofman_t m, again;
    char err[256];
    assert_int_equal(
        parse("file \"my aof.1.base.rdb\" seq 1 type b\n", &m, err), 0);
    assert_string_equal(m.base->name, "my aof.1.base.rdb");
    char *text = aofman_format(&m);
    assert_int_equal(parse(text, &again, err), 0);
    assert_string_equal(again.base->name, "my aof.1.base.rdb");
    free(text);
    aofman_free(&m);
    aofman_free(&again);
}

static void test_rewrite_bookkeeping(void **state)
{
    (void)state;
    aofman_t m = {0}, copy;
    assert_int_equal(aofman_new_base(&m, "appendonly.aof"), 0);
    assert_int_equal(aofman_new_incr(&m, "appendonly.aof"), 0);
    assert_int_equal(aofman_new_incr(&m, "appendonly.aof"), 0);
    /* a rewrite forked when increment 2 was opened */
    assert_int_equal(aofman_dup(&m, &copy), 0);
    assert_int_equal(aofman_new_base(&copy, "appendonly.aof"), 0);
    assert_int_equal(aofman_retire_incr(&copy, 1), 0);
    char *text = aofman_format(&copy);
    assert_string_equal(text, "file appendonly.aof.2.base.rdb seq 2 type b\n"
                              "file appendonly.aof.1.base.rdb seq 1 type h\n"
                              "file appendonly.aof.1.incr.aof seq 1 type h\n"
                              "file appendonly.aof.2.incr.aof seq 2 type i\n");
    free(text);
    aofman_clear_history(&copy);
    text = aofman_format(&copy);
    assert_string_equal(text, "file appendonly.aof.2.base.rdb seq 2 type b\n"
                              "file appendonly.aof.2.incr.aof seq 2 type i\n");
    free(text);
    /* the original is untouched */
    assert_int_equal(m.nincr, 2);
    assert_string_equal(m.base->name, "appendonly.aof.1.base.rdb");
    aofman_free(&copy);
    aofman_free(&m);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_parse_redis_layout),
        cmocka_unit_test(test_refusals),
        cmocka_unit_test(test_quoted_names_round_trip),
        cmocka_unit_test(test_rewrite_bookkeeping),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
