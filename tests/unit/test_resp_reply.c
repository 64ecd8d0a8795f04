/* Unit tests for protocol/resp_reply.c (resp_out.h). */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "resp_out.h"

/* Checks that o holds exactly the n bytes of want, then empties it. */
static void expect_bytes(resp_out_t *o, const char *want, size_t n)
{
    size_t len = 12345;
    char *b;

    assert_false(resp_out_failed(o));
    b = resp_out_take(o, &len);
    assert_int_equal(len, n);
    if (n == 0) {
        assert_null(b);
        return;
    }
    assert_non_null(b);
    assert_memory_equal(b, want, n);
    free(b);
}

#define EXPECT(o, lit) expect_bytes((o), (lit), sizeof(lit) - 1)

static int setup2(void **state)
{
    resp_out_t *o = malloc(sizeof(*o));

    if (o == NULL)
        return -1;
    resp_out_init(o, 2);
    *state = o;
    return 0;
}

static int setup3(void **state)
{
    resp_out_t *o = malloc(sizeof(*o));

    if (o == NULL)
        return -1;
    resp_out_init(o, 3);
    *state = o;
    return 0;
}

static int teardown(void **state)
{
    resp_out_t *o = *state;

    resp_out_release(o);
    free(o);
    return 0;
}

/* ---- encodings shared by both protocols ------------------------------ */

static void test_simple_and_error(void **state)
{
    resp_out_t *o = *state;

    resp_add_simple(o, "OK");
    EXPECT(o, "+OK\r\n");
    resp_add_simple(o, "");
    EXPECT(o, "+\r\n");
    resp_add_error(o, "ERR unknown command 'x'");
    EXPECT(o, "-ERR unknown command 'x'\r\n");
    /* CR and LF would break the framing: they become spaces. */
    resp_add_simple(o, "a\r\nb");
    EXPECT(o, "+a  b\r\n");
    resp_add_error(o, "ERR x\ny");
    EXPECT(o, "-ERR x y\r\n");
}

static void test_errorf(void **state)
{
    resp_out_t *o = *state;
    char big[1000];
    char want[1100];

    resp_add_errorf(o, "ERR wrong number of arguments for '%s' command",
                    "cf.add");
    EXPECT(o, "-ERR wrong number of arguments for 'cf.add' command\r\n");
    resp_add_errorf(o, "ERR %d %s", -5, "x\r\ny");
    EXPECT(o, "-ERR -5 x  y\r\n");
    /* Longer than any stack buffer a formatter might use. */
    memset(big, 'q', sizeof(big) - 1);
    big[sizeof(big) - 1] = '\0';
    resp_add_errorf(o, "ERR %s!", big);
    strcpy(want, "-ERR ");
    strcat(want, big);
    strcat(want, "!\r\n");
    expect_bytes(o, want, strlen(want));
}

/* error_at: where the last error reply starts; only the error replies
 * set it, and the caller may reset it. */
static void test_error_at(void **state)
{
    resp_out_t *o = *state;
    size_t at;

    assert_true(o->error_at == RESP_OUT_NO_ERROR);
    resp_add_simple(o, "OK");
    resp_add_array(o, 2);
    assert_true(o->error_at == RESP_OUT_NO_ERROR);
    at = o->len;
    resp_add_error(o, "ERR one");
    assert_int_equal(o->error_at, at);
    resp_add_int(o, 5);
    assert_int_equal(o->error_at, at);
    at = o->len;
    resp_add_errorf(o, "ERR %d", 2);
    assert_int_equal(o->error_at, at);
    o->error_at = RESP_OUT_NO_ERROR;
    resp_add_bulk(o, "x", 1);
    assert_true(o->error_at == RESP_OUT_NO_ERROR);
}

static void test_int(void **state)
{
    resp_out_t *o = *state;

    resp_add_int(o, 0);
    EXPECT(o, ":0\r\n");
    resp_add_int(o, 7);
    resp_add_int(o, -1);
    resp_add_int(o, 1234567890);
    EXPECT(o, ":7\r\n:-1\r\n:1234567890\r\n");
    resp_add_int(o, INT64_MAX);
    EXPECT(o, ":9223372036854775807\r\n");
    resp_add_int(o, INT64_MIN);
    EXPECT(o, ":-9223372036854775808\r\n");
}

static void test_bulk(void **state)
{
    resp_out_t *o = *state;

    resp_add_bulk(o, "foo", 3);
    EXPECT(o, "$3\r\nfoo\r\n");
    resp_add_bulk(o, "", 0);
    EXPECT(o, "$0\r\n\r\n");
    resp_add_bulk(o, NULL, 0);
    EXPECT(o, "$0\r\n\r\n");
    resp_add_bulk(o, "a\0\r\nb", 5);
    EXPECT(o, "$5\r\na\0\r\nb\r\n");
    resp_add_cstr(o, "hello");
    EXPECT(o, "$5\r\nhello\r\n");
}

static void test_array(void **state)
{
    resp_out_t *o = *state;

    resp_add_array(o, 0);
    EXPECT(o, "*0\r\n");
    resp_add_array(o, 2);
    resp_add_int(o, 1);
    resp_add_cstr(o, "x");
    EXPECT(o, "*2\r\n:1\r\n$1\r\nx\r\n");
}

static void test_raw(void **state)
{
    resp_out_t *o = *state;

    resp_add_raw(o, "+PONG\r\n", 7);
    resp_add_raw(o, "", 0);
    EXPECT(o, "+PONG\r\n");
}

/* ---- RESP2 ---------------------------------------------------------- */

static void test_resp2_degraded_types(void **state)
{
    resp_out_t *o = *state;

    assert_int_equal(o->proto, 2);
    resp_add_null(o);
    EXPECT(o, "$-1\r\n");
    resp_add_cstr(o, NULL);
    EXPECT(o, "$-1\r\n");
    resp_add_null_array(o);
    EXPECT(o, "*-1\r\n");
    resp_add_map(o, 3);
    EXPECT(o, "*6\r\n");
    resp_add_map(o, 0);
    EXPECT(o, "*0\r\n");
    resp_add_set(o, 4);
    EXPECT(o, "*4\r\n");
    resp_add_bool(o, true);
    resp_add_bool(o, false);
    EXPECT(o, ":1\r\n:0\r\n");
    resp_add_verbatim(o, "txt", "hi\r\nthere", 9);
    EXPECT(o, "$9\r\nhi\r\nthere\r\n");
}

static void test_resp2_double(void **state)
{
    resp_out_t *o = *state;

    resp_add_double(o, 1.5);
    EXPECT(o, "$3\r\n1.5\r\n");
    resp_add_double(o, 0.1);
    EXPECT(o, "$3\r\n0.1\r\n");
    resp_add_double(o, 3);
    EXPECT(o, "$1\r\n3\r\n");
    resp_add_double(o, -0.25);
    EXPECT(o, "$5\r\n-0.25\r\n");
    resp_add_double(o, 1e300);
    EXPECT(o, "$6\r\n1e+300\r\n");
    resp_add_double(o, INFINITY);
    EXPECT(o, "$3\r\ninf\r\n");
    resp_add_double(o, -INFINITY);
    EXPECT(o, "$4\r\n-inf\r\n");
    resp_add_double(o, NAN);
    EXPECT(o, "$3\r\nnan\r\n");
}

/* ---- RESP3 ---------------------------------------------------------- */

static void test_resp3_types(void **state)
{
    resp_out_t *o = *state;

    assert_int_equal(o->proto, 3);
    resp_add_null(o);
    EXPECT(o, "_\r\n");
    resp_add_cstr(o, NULL);
    EXPECT(o, "_\r\n");
    resp_add_null_array(o);
    EXPECT(o, "_\r\n");
    resp_add_map(o, 3);
    EXPECT(o, "%3\r\n");
    resp_add_set(o, 4);
    EXPECT(o, "~4\r\n");
    resp_add_array(o, 2);
    EXPECT(o, "*2\r\n");
    resp_add_bool(o, true);
    resp_add_bool(o, false);
    EXPECT(o, "#t\r\n#f\r\n");
    resp_add_int(o, 42);
    EXPECT(o, ":42\r\n");
    resp_add_bulk(o, "ab", 2);
    EXPECT(o, "$2\r\nab\r\n");
    /* Errors stay simple errors in RESP3 too. */
    resp_add_error(o, "ERR no");
    EXPECT(o, "-ERR no\r\n");
}

static void test_resp3_double(void **state)
{
    resp_out_t *o = *state;

    resp_add_double(o, 1.5);
    EXPECT(o, ",1.5\r\n");
    resp_add_double(o, 0.1);
    EXPECT(o, ",0.1\r\n");
    resp_add_double(o, 10);
    EXPECT(o, ",10\r\n");
    resp_add_double(o, 0.30000000000000004);
    EXPECT(o, ",0.30000000000000004\r\n");
    resp_add_double(o, INFINITY);
    EXPECT(o, ",inf\r\n");
    resp_add_double(o, -INFINITY);
    EXPECT(o, ",-inf\r\n");
    resp_add_double(o, NAN);
    EXPECT(o, ",nan\r\n");
}

static void test_resp3_verbatim(void **state)
{
    resp_out_t *o = *state;

    resp_add_verbatim(o, "txt", "Some string", 11);
    EXPECT(o, "=15\r\ntxt:Some string\r\n");
    resp_add_verbatim(o, "mkd", "", 0);
    EXPECT(o, "=4\r\nmkd:\r\n");
    /* A format that is not three characters falls back to txt. */
    resp_add_verbatim(o, "text", "a", 1);
    EXPECT(o, "=5\r\ntxt:a\r\n");
}

/* ---- buffer semantics ----------------------------------------------- */

/* A partly written buffer keeps its unwritten tail and its memory; an
 * emptied large one gives its memory back. */
static void test_consume(void **state)
{
    resp_out_t o;
    (void)state;

    resp_out_init(&o, 2);
    resp_add_simple(&o, "OK");
    resp_add_int(&o, 42);
    char *kept = o.buf;
    resp_out_consume(&o, 2);
    assert_int_equal(o.len, 8);
    assert_memory_equal(o.buf, "K\r\n:42\r\n", 8);
    resp_out_consume(&o, 8);
    assert_int_equal(o.len, 0);
    assert_ptr_equal(o.buf, kept); /* small: reused for the next replies */
    resp_add_simple(&o, "PONG");
    assert_memory_equal(o.buf, "+PONG\r\n", 7);
    resp_out_consume(&o, 100); /* more than there is: just empty */
    assert_int_equal(o.len, 0);

    static char big[RESP_OUT_KEEP * 2];
    memset(big, 'x', sizeof(big));
    resp_add_bulk(&o, big, sizeof(big));
    assert_true(o.cap > RESP_OUT_KEEP);
    resp_out_consume(&o, o.len);
    assert_int_equal(o.len, 0);
    assert_null(o.buf); /* large and empty: freed */
    assert_int_equal(o.cap, 0);
    resp_add_int(&o, 7); /* and encoding goes on */
    assert_memory_equal(o.buf, ":7\r\n", 4);
    resp_out_release(&o);
}

static void test_take_semantics(void **state)
{
    resp_out_t o;
    size_t len = 99;
    char *a, *b;

    resp_out_init(&o, 2);
    assert_false(resp_out_failed(&o));
    /* Nothing yet. */
    assert_null(resp_out_take(&o, &len));
    assert_int_equal(len, 0);

    resp_add_simple(&o, "OK");
    a = resp_out_take(&o, &len);
    assert_non_null(a);
    assert_int_equal(len, 5);
    assert_memory_equal(a, "+OK\r\n", 5);
    /* Emptied: the caller owns a, and encoding goes on in new memory. */
    assert_int_equal(o.len, 0);
    assert_null(resp_out_take(&o, &len));
    assert_int_equal(len, 0);
    resp_add_int(&o, 5);
    b = resp_out_take(&o, &len);
    assert_non_null(b);
    assert_true(a != b);
    assert_int_equal(len, 4);
    assert_memory_equal(b, ":5\r\n", 4);
    assert_memory_equal(a, "+OK\r\n", 5);
    free(a);
    free(b);
    resp_out_release(&o);
    resp_out_release(&o); /* twice is harmless */
    assert_null(o.buf);
    assert_int_equal(o.len, 0);
}

static void test_growth(void **state)
{
    resp_out_t o;
    size_t len;
    char *b;
    int i;

    resp_out_init(&o, 3);
    resp_add_array(&o, 100000);
    for (i = 0; i < 100000; i++)
        resp_add_int(&o, i);
    b = resp_out_take(&o, &len);
    assert_non_null(b);
    assert_memory_equal(b, "*100000\r\n:0\r\n:1\r\n", 17);
    assert_memory_equal(b + len - 8, ":99999\r\n", 8);
    free(b);
    resp_out_release(&o);
}

static void test_sticky_failure(void **state)
{
    resp_out_t o;
    size_t len = 7;

    resp_out_init(&o, 2);
    resp_add_simple(&o, "OK");
    /* An append too large for any allocator fails and sticks. */
    resp_add_raw(&o, "", SIZE_MAX - 2);
    assert_true(resp_out_failed(&o));
    resp_add_int(&o, 1);
    resp_add_bulk(&o, "x", 1);
    assert_true(resp_out_failed(&o));
    resp_add_error(&o, "ERR x");
    assert_true(o.error_at == RESP_OUT_NO_ERROR); /* no error was added */
    assert_int_equal(o.len, 5); /* nothing appended after the failure */
    assert_null(resp_out_take(&o, &len));
    assert_int_equal(len, 0);
    resp_out_release(&o);

    /* A huge bulk fails the same way rather than overflowing. */
    resp_out_init(&o, 3);
    resp_add_bulk(&o, "", SIZE_MAX - 10);
    assert_true(resp_out_failed(&o));
    resp_out_release(&o);
}

static void test_init_proto(void **state)
{
    resp_out_t o;

    resp_out_init(&o, 3);
    assert_int_equal(o.proto, 3);
    resp_out_release(&o);
    resp_out_init(&o, 2);
    assert_int_equal(o.proto, 2);
    /* Switching in place, as HELLO does. */
    o.proto = 3;
    resp_add_bool(&o, true);
    EXPECT(&o, "#t\r\n");
    o.proto = 2;
    resp_add_bool(&o, true);
    EXPECT(&o, ":1\r\n");
    resp_out_release(&o);
}

/* resp_add_bools() writes exactly what as many resp_add_bool() calls
 * write, in either protocol, for none, few and many values. */
static void test_bools(void **state)
{
    enum { N = 700 };
    static bool v[N];
    (void)state;
    for (size_t i = 0; i < N; i++)
        v[i] = (i * 7919) % 3 == 0;
    for (int proto = 2; proto <= 3; proto++) {
        size_t counts[] = {0, 1, 2, 5, 64, 129, N};
        for (size_t k = 0; k < sizeof(counts) / sizeof(counts[0]); k++) {
            resp_out_t one, many;
            resp_out_init(&one, proto);
            resp_out_init(&many, proto);
            resp_add_int(&many, 7); /* appends after what is there */
            resp_add_int(&one, 7);
            for (size_t i = 0; i < counts[k]; i++)
                resp_add_bool(&one, v[i]);
            resp_add_bools(&many, v, counts[k]);
            assert_false(resp_out_failed(&many));
            assert_int_equal(many.len, one.len);
            assert_memory_equal(many.buf, one.buf, one.len);
            resp_out_release(&one);
            resp_out_release(&many);
        }
    }
    resp_out_t o;
    resp_out_init(&o, 2);
    resp_add_bools(&o, v, 3);
    EXPECT(&o, ":1\r\n:0\r\n:0\r\n");
    o.proto = 3;
    resp_add_bools(&o, v, 4);
    EXPECT(&o, "#t\r\n#f\r\n#f\r\n#t\r\n");
    resp_out_release(&o);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_simple_and_error, setup2,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_simple_and_error, setup3,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_errorf, setup2, teardown),
        cmocka_unit_test_setup_teardown(test_errorf, setup3, teardown),
        cmocka_unit_test_setup_teardown(test_error_at, setup2, teardown),
        cmocka_unit_test_setup_teardown(test_error_at, setup3, teardown),
        cmocka_unit_test_setup_teardown(test_int, setup2, teardown),
        cmocka_unit_test_setup_teardown(test_int, setup3, teardown),
        cmocka_unit_test_setup_teardown(test_bulk, setup2, teardown),
        cmocka_unit_test_setup_teardown(test_bulk, setup3, teardown),
        cmocka_unit_test_setup_teardown(test_array, setup2, teardown),
        cmocka_unit_test_setup_teardown(test_array, setup3, teardown),
        cmocka_unit_test_setup_teardown(test_raw, setup2, teardown),
        cmocka_unit_test_setup_teardown(test_raw, setup3, teardown),
        cmocka_unit_test_setup_teardown(test_resp2_degraded_types, setup2,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_resp2_double, setup2, teardown),
        cmocka_unit_test_setup_teardown(test_resp3_types, setup3, teardown),
        cmocka_unit_test_setup_teardown(test_resp3_double, setup3, teardown),
        cmocka_unit_test_setup_teardown(test_resp3_verbatim, setup3, teardown),
        cmocka_unit_test(test_take_semantics),
        cmocka_unit_test(test_growth),
        cmocka_unit_test(test_consume),
        cmocka_unit_test(test_sticky_failure),
        cmocka_unit_test(test_init_proto),
        cmocka_unit_test(test_bools),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
