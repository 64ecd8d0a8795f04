/*
 * test_load_input.c - cuckood-load's input formats: lines (with \r\n),
 * NUL-separated items, a CSV column by number and by header name (quotes,
 * doubled quotes, newlines in fields), PostgreSQL's COPY text format (its
 * escapes and \N), the line each record starts on, skipped records, and
 * errors. Every input is parsed twice, whole and fed a byte at a time as
 * a reader short of data would, and both must give the same records.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "load_input.h"

/* What a parse gave, as text: "item@line" for items (bytes below 0x20
 * as \xNN), "-@line" for a skip, "!line:error" for an error. */
static void parse(enum load_format f, unsigned column, const char *name,
                  const char *buf, size_t size, int bytewise, char *out,
                  size_t cap)
{
    struct load_input *in = load_input_new(f, column, name);
    assert_non_null(in);
    size_t off = 0, len = bytewise ? 0 : size, n = 0;
    out[0] = '\0';
    for (;;) {
        size_t used;
        const char *item;
        size_t ilen;
        enum load_step s = load_input_next(in, buf + off, len - off,
                                           len == size, &used, &item, &ilen);
        if (s == LOAD_MORE) {
            assert_true(len < size);
            len++;
            continue;
        }
        if (s == LOAD_END)
            break;
        unsigned long long line = load_input_line(in);
        if (s == LOAD_ERROR) {
            n += (size_t)snprintf(out + n, cap - n, "!%llu:%s", line,
                                  load_input_error(in));
            break;
        }
        off += used;
        if (s == LOAD_SKIP) {
            n += (size_t)snprintf(out + n, cap - n, "-@%llu ", line);
            continue;
        }
        for (size_t i = 0; i < ilen; i++) {
            unsigned char c = (unsigned char)item[i];
            n += (size_t)(c < 0x20 || c >= 0x7f
                              ? snprintf(out + n, cap - n, "\\x%02x", c)
                              : snprintf(out + n, cap - n, "%c", c));
        }
        n += (size_t)snprintf(out + n, cap - n, "@%llu ", line);
    }
    load_input_free(in);
}

static void check(enum load_format f, unsigned column, const char *name,
                  const char *buf, size_t size, const char *want)
{
    char whole[2048], bytes[2048];
    parse(f, column, name, buf, size, 0, whole, sizeof(whole));
    parse(f, column, name, buf, size, 1, bytes, sizeof(bytes));
    assert_string_equal(whole, want);
    assert_string_equal(bytes, want);
}

#define CHECK(f, col, name, lit, want)                                         \
    check(f, col, name, lit, sizeof(lit) - 1, want)

static void test_lines(void **state)
{
    (void)state;
    CHECK(LOAD_LINES, 0, NULL, "a\r\nb\n\n\r\n c \nlast",
          "a@1 b@2 -@3 -@4  c @5 last@6 ");
    CHECK(LOAD_LINES, 0, NULL, "", "");
    CHECK(LOAD_LINES, 0, NULL, "\n", "-@1 ");
    CHECK(LOAD_LINES, 0, NULL, "a\rb\n", "a\\x0db@1 ");
}

static void test_nul(void **state)
{
    (void)state;
    CHECK(LOAD_NUL, 0, NULL, "a\0\0b\r\nc\0\xff",
          "a@1 -@2 b\\x0d\\x0ac@3 \\xff@4 ");
}

static void test_csv_by_number(void **state)
{
    (void)state;
    CHECK(LOAD_CSV, 2, NULL,
          "id,name\r\n1,\"Smith, Ann\"\r\n2,\"multi\nline\"\n3,\"q\"\"q\"\n"
          "\n4,\n5,\"\"\n6,x",
          "name@1 Smith, Ann@2 multi\\x0aline@3 q\"q@5 -@6 -@7 -@8 x@9 ");
    CHECK(LOAD_CSV, 1, NULL, "a\r\n\"b\r\nc\"\r\nd", "a@1 b\\x0d\\x0ac@2 d@4 ");
}

static void test_csv_by_name(void **state)
{
    (void)state;
    CHECK(LOAD_CSV, 0, "email", "id,\"email\",x\n1,a@x,y\n2,\"b,c\",z\n",
          "-@1 a@x@2 b,c@3 ");
    CHECK(LOAD_CSV, 0, "email", "id,name\n1,a\n",
          "!1:no column named 'email' in the header");
}

static void test_csv_errors(void **state)
{
    (void)state;
    CHECK(LOAD_CSV, 1, NULL, "a\n\"b\n", "a@1 !2:unterminated quoted field");
    CHECK(LOAD_CSV, 1, NULL, "a\n\"b\"c\n",
          "a@1 !2:a character after a closing quote");
    CHECK(LOAD_CSV, 3, NULL, "a,b,c\nd,e\n",
          "c@1 !2:no column 3 (the record has 2)");
}

static void test_copy(void **state)
{
    (void)state;
    CHECK(LOAD_COPY, 2, NULL,
          "1\tplain\tx\n2\t\\N\n3\t\n4\t\\t\\n\\\\\\101\\x41\\q\\x\n5\tlast",
          "plain@1 -@2 -@3 \\x09\\x0a\\AAqx@4 last@5 ");
    CHECK(LOAD_COPY, 1, NULL, "\\b\\f\\r\\v\\0\\7777\n",
          "\\x08\\x0c\\x0d\\x0b\\x00\\xff7@1 ");
    CHECK(LOAD_COPY, 3, NULL, "1\t2\n", "!1:no column 3 (the row has 2)");
}

static void test_record_too_long(void **state)
{
    (void)state;
    size_t n = LOAD_MAX_RECORD + 1;
    char *buf = malloc(n);
    assert_non_null(buf);
    memset(buf, 'x', n);
    struct load_input *in = load_input_new(LOAD_LINES, 0, NULL);
    size_t used;
    const char *item;
    size_t ilen;
    assert_int_equal(load_input_next(in, buf, n, 0, &used, &item, &ilen),
                     LOAD_ERROR);
    assert_string_equal(load_input_error(in), "record longer than 4 MiB");
    assert_int_equal(load_input_line(in), 1);
    /* One byte less is a record the caller may still complete. */
    assert_int_equal(load_input_next(in, buf, n - 1, 0, &used, &item, &ilen),
                     LOAD_MORE);
    assert_int_equal(load_input_next(in, buf, n - 1, 1, &used, &item, &ilen),
                     LOAD_ITEM);
    assert_int_equal(ilen, n - 1);
    load_input_free(in);
    free(buf);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_lines),
        cmocka_unit_test(test_nul),
        cmocka_unit_test(test_csv_by_number),
        cmocka_unit_test(test_csv_by_name),
        cmocka_unit_test(test_csv_errors),
        cmocka_unit_test(test_copy),
        cmocka_unit_test(test_record_too_long),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
