/* Unit tests for protocol/resp_parse.c (resp.h). */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "resp.h"

#if defined(__SANITIZE_ADDRESS__)
#define HAVE_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define HAVE_ASAN 1
#endif
#endif
#ifdef HAVE_ASAN
/* From the sanitizer runtime (its header is not shipped with every GCC). */
size_t __sanitizer_get_current_allocated_bytes(void);
static size_t heap_in_use(void)
{
    return __sanitizer_get_current_allocated_bytes();
}
#else
#include <malloc.h>
static size_t heap_in_use(void)
{
    return mallinfo2().uordblks;
}
#endif

/* ---- helpers -------------------------------------------------------- */

/* A growable byte string: drained commands are serialised into one, so
 * whole runs compare with a single memcmp. */
typedef struct {
    char *b;
    size_t len, cap;
} dstr_t;

static void ds_put(dstr_t *d, const void *p, size_t n)
{
    if (d->cap - d->len < n + 1) {
        size_t cap = d->cap ? d->cap : 256;

        while (cap - d->len < n + 1)
            cap *= 2;
        d->b = realloc(d->b, cap);
        assert_non_null(d->b);
        d->cap = cap;
    }
    memcpy(d->b + d->len, p, n);
    d->len += n;
    d->b[d->len] = '\0';
}

static void ds_printf(dstr_t *d, const char *fmt, ...)
{
    char tmp[128];
    va_list ap;
    int n;

    va_start(ap, fmt);
    n = vsnprintf(tmp, sizeof(tmp), fmt, ap);
    va_end(ap);
    ds_put(d, tmp, (size_t)n);
}

static void ds_free(dstr_t *d)
{
    free(d->b);
    memset(d, 0, sizeof(*d));
}

static void serialise(dstr_t *d, const resp_cmd_t *c)
{
    int i;

    assert_true(c->argc >= 1);
    ds_printf(d, "[%d", c->argc);
    for (i = 0; i < c->argc; i++) {
        /* Every argument is NUL-terminated past its length. */
        assert_int_equal(c->argv[i].ptr[c->argv[i].len], '\0');
        ds_printf(d, " %zu:", c->argv[i].len);
        ds_put(d, c->argv[i].ptr, c->argv[i].len);
    }
    ds_put(d, "]", 1);
}

/* Drains every ready command into d; returns next()'s last result. */
static int drain(resp_parser_t *p, dstr_t *d, int *count)
{
    resp_cmd_t *c;
    int rc;

    while ((rc = resp_parser_next(p, &c)) == 1) {
        serialise(d, c);
        if (count != NULL)
            (*count)++;
    }
    if (rc == 0)
        assert_null(c);
    return rc;
}

static resp_parser_t *new_parser(const resp_limits_t *lim)
{
    resp_parser_t *p = resp_parser_new(lim);

    assert_non_null(p);
    return p;
}

/* Feeds s in one piece, drains, and expects exactly one command whose
 * arguments are the NULL-terminated list of C strings. */
static void expect_cmd(const char *s, ...)
{
    resp_parser_t *p = new_parser(NULL);
    resp_cmd_t *c;
    va_list ap;
    const char *a;
    int i = 0;

    assert_int_equal(resp_parser_feed(p, s, strlen(s)), 0);
    assert_int_equal(resp_parser_next(p, &c), 1);
    va_start(ap, s);
    while ((a = va_arg(ap, const char *)) != NULL) {
        assert_true(i < c->argc);
        assert_int_equal(c->argv[i].len, strlen(a));
        assert_memory_equal(c->argv[i].ptr, a, strlen(a));
        i++;
    }
    va_end(ap);
    assert_int_equal(c->argc, i);
    assert_int_equal(resp_parser_next(p, &c), 0);
    assert_int_equal(resp_parser_pending(p), 0);
    resp_parser_free(p);
}

/* The reason (resp_parser_code()) that goes with an error's text: each
 * text has one, the byte named after "expected '$'" aside. */
static resp_perr_t code_of(const char *msg)
{
    static const struct {
        const char *text;
        resp_perr_t code;
    } codes[] = {
        {"Protocol error: invalid multibulk length", RESP_PERR_MBULK},
        {"Protocol error: invalid bulk length", RESP_PERR_BULK},
        {"Protocol error: too big inline request", RESP_PERR_INLINE},
        {"Protocol error: unbalanced quotes in request", RESP_PERR_QUOTES},
        {"Protocol error: too big mbulk count string", RESP_PERR_MBULK_BIG},
        {"Protocol error: too big bulk count string", RESP_PERR_BULK_BIG},
        {"Protocol error: query buffer limit exceeded", RESP_PERR_QUERYBUF},
    };
    for (size_t i = 0; i < sizeof(codes) / sizeof(codes[0]); i++)
        if (strcmp(msg, codes[i].text) == 0)
            return codes[i].code;
    assert_int_equal(strncmp(msg, "Protocol error: expected '$', got ", 34), 0);
    return RESP_PERR_BULK_START;
}

/* Feeds s (len bytes) in one piece and expects -EPROTO with msg and its
 * reason, from the feed itself or from the first resp_parser_next(). */
static void expect_error_len(const resp_limits_t *lim, const char *s,
                             size_t len, const char *msg)
{
    resp_parser_t *p = new_parser(lim);
    resp_cmd_t *c;
    assert_int_equal(resp_parser_code(p), RESP_PERR_NONE);
    int rc = resp_parser_feed(p, s, len);

    if (rc == 0)
        rc = resp_parser_next(p, &c);
    assert_int_equal(rc, -EPROTO);
    assert_non_null(resp_parser_error(p));
    assert_string_equal(resp_parser_error(p), msg);
    assert_int_equal(resp_parser_code(p), code_of(msg));
    /* Sticky. */
    assert_int_equal(resp_parser_next(p, &c), -EPROTO);
    assert_int_equal(resp_parser_feed(p, "PING\r\n", 6), -EPROTO);
    assert_int_equal(resp_parser_next(p, &c), -EPROTO);
    assert_string_equal(resp_parser_error(p), msg);
    assert_int_equal(resp_parser_code(p), code_of(msg));
    resp_parser_free(p);
}

static void expect_error(const char *s, const char *msg)
{
    expect_error_len(NULL, s, strlen(s), msg);
}

#define E_MBULK "Protocol error: invalid multibulk length"
#define E_BULK "Protocol error: invalid bulk length"
#define E_INLINE "Protocol error: too big inline request"
#define E_QUOTES "Protocol error: unbalanced quotes in request"

/* ---- well-formed input ---------------------------------------------- */

static void test_multibulk(void **state)
{
    expect_cmd("*1\r\n$4\r\nPING\r\n", "PING", NULL);
    expect_cmd("*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$0\r\n\r\n", "SET", "k", "",
               NULL);
}

static void test_limits_default(void **state)
{
    resp_limits_t l;

    resp_limits_default(&l);
    assert_int_equal(l.max_bulk_len, 512ull * 1024 * 1024);
    assert_int_equal(l.max_query_buf, 1024ull * 1024 * 1024);
    assert_int_equal(l.max_args, 1024 * 1024);
    assert_int_equal(l.max_inline_len, 64 * 1024);
}

static void test_binary_args(void **state)
{
    static const char in[] = "*2\r\n$5\r\na\0b\r\n\r\n$3\r\n\r\n\0\r\n";
    resp_parser_t *p = new_parser(NULL);
    resp_cmd_t *c;

    assert_int_equal(resp_parser_feed(p, in, sizeof(in) - 1), 0);
    assert_int_equal(resp_parser_next(p, &c), 1);
    assert_int_equal(c->argc, 2);
    assert_int_equal(c->argv[0].len, 5);
    assert_memory_equal(c->argv[0].ptr, "a\0b\r\n", 5);
    assert_int_equal(c->argv[0].ptr[5], '\0');
    assert_int_equal(c->argv[1].len, 3);
    assert_memory_equal(c->argv[1].ptr, "\r\n\0", 3);
    assert_int_equal(resp_parser_next(p, &c), 0);
    resp_parser_free(p);
}

static void test_inline_plain(void **state)
{
    expect_cmd("PING\r\n", "PING", NULL);
    expect_cmd("PING\n", "PING", NULL);
    expect_cmd("  SET   key\tvalue  \r\n", "SET", "key", "value", NULL);
    expect_cmd("\r\n\n   \r\nPING\r\n", "PING", NULL);
    /* A stray '\r' inside the line is a separator, as in sdssplitargs. */
    expect_cmd("A\rB\n", "A", "B", NULL);
    /* Everything after a NUL is ignored, as Redis's C-string split does. */
    {
        resp_parser_t *p = new_parser(NULL);
        resp_cmd_t *c;

        assert_int_equal(resp_parser_feed(p, "GET a\0b c\r\n", 11), 0);
        assert_int_equal(resp_parser_next(p, &c), 1);
        assert_int_equal(c->argc, 2);
        assert_string_equal(c->argv[1].ptr, "a");
        assert_int_equal(resp_parser_next(p, &c), 0);
        assert_int_equal(resp_parser_pending(p), 0);
        resp_parser_free(p);
    }
}

static void test_inline_quotes(void **state)
{
    expect_cmd("SET \"a b\" 'c d'\r\n", "SET", "a b", "c d", NULL);
    expect_cmd("ECHO \"\\x41\\x7a\\n\\r\\t\\b\\a\\\\\\\"\\q\"\n", "ECHO",
               "Az\n\r\t\b\a\\\"q", NULL);
    expect_cmd("ECHO 'it\\'s' 'a\\nb'\n", "ECHO", "it's", "a\\nb", NULL);
    expect_cmd("ECHO \"\" ''\n", "ECHO", "", "", NULL);
    expect_cmd("ECHO ab\"c d\"\n", "ECHO", "abc d", NULL);
    /* An incomplete \x escape is kept literally. */
    expect_cmd("ECHO \"\\x4g\"\n", "ECHO", "x4g", NULL);
    expect_cmd("ECHO \"a\"\t'b'\r\n", "ECHO", "a", "b", NULL);
    /* A quoted argument may hold an escaped NUL. */
    {
        resp_parser_t *p = new_parser(NULL);
        resp_cmd_t *c;

        assert_int_equal(resp_parser_feed(p, "E \"a\\x00b\"\n", 11), 0);
        assert_int_equal(resp_parser_next(p, &c), 1);
        assert_int_equal(c->argc, 2);
        assert_int_equal(c->argv[1].len, 3);
        assert_memory_equal(c->argv[1].ptr, "a\0b", 3);
        resp_parser_free(p);
    }
}

static void test_inline_unbalanced(void **state)
{
    expect_error("SET \"abc\r\n", E_QUOTES);
    expect_error("SET 'abc\n", E_QUOTES);
    expect_error("SET \"abc\"x\r\n", E_QUOTES);
    expect_error("SET 'abc'x\r\n", E_QUOTES);
    expect_error("SET \"abc\\\"\n", E_QUOTES);
}

static void test_empty_frames_skipped(void **state)
{
    resp_parser_t *p = new_parser(NULL);
    static const char in[] =
        "*0\r\n*-1\r\n*-5\r\n\r\n \n*1\r\n$1\r\nA\r\n*0\r\n";
    dstr_t d = {0};
    int n = 0;

    assert_int_equal(resp_parser_feed(p, in, sizeof(in) - 1), 0);
    assert_int_equal(drain(p, &d, &n), 0);
    assert_int_equal(n, 1);
    assert_string_equal(d.b, "[1 1:A]");
    assert_int_equal(resp_parser_pending(p), 0);
    ds_free(&d);
    resp_parser_free(p);
}

/* ---- framing errors ------------------------------------------------- */

static void test_invalid_multibulk_length(void **state)
{
    expect_error("*abc\r\n", E_MBULK);
    expect_error("*\r\n", E_MBULK);
    expect_error("*+1\r\n", E_MBULK);
    expect_error("*01\r\n", E_MBULK);
    expect_error("*-0\r\n", E_MBULK);
    expect_error("*1x\r\n", E_MBULK);
    expect_error("*1\rx\r\n", E_MBULK);
    expect_error("*99999999999999999999\r\n", E_MBULK);
    expect_error("*1048577\r\n", E_MBULK);
}

/* A whole frame waits in the parser's buffer, not in the reader's: a feed
 * before it is taken may move that buffer (here it grows from its first
 * 4 KB), and the command must still come out whole. */
static void test_ready_frame_then_feed(void **state)
{
    static const char first[] = "*2\r\n$6\r\nEXISTS\r\n$3\r\nkey\r\n";
    size_t big = 100000;
    char *second = malloc(big + 64);
    resp_parser_t *p = new_parser(NULL);
    resp_cmd_t *c;
    int n;

    (void)state;
    assert_non_null(second);
    n = snprintf(second, 64, "*2\r\n$4\r\nECHO\r\n$%zu\r\n", big);
    memset(second + n, 'x', big);
    memcpy(second + n + big, "\r\n", 2);
    assert_int_equal(resp_parser_feed(p, first, sizeof(first) - 1), 0);
    /* All but the last byte of the second frame. */
    assert_int_equal(resp_parser_feed(p, second, (size_t)n + big + 1), 0);
    assert_int_equal(resp_parser_next(p, &c), 1);
    assert_int_equal(c->argc, 2);
    assert_int_equal(c->argv[0].len, 6);
    assert_string_equal(c->argv[0].ptr, "EXISTS");
    assert_int_equal(c->argv[1].len, 3);
    assert_string_equal(c->argv[1].ptr, "key");
    assert_int_equal(resp_parser_next(p, &c), 0);
    assert_int_equal(resp_parser_feed(p, second + n + big + 1, 1), 0);
    assert_int_equal(resp_parser_next(p, &c), 1);
    assert_int_equal(c->argc, 2);
    assert_string_equal(c->argv[0].ptr, "ECHO");
    assert_int_equal(c->argv[1].len, big);
    assert_memory_equal(c->argv[1].ptr, second + n, big);
    assert_int_equal(c->argv[1].ptr[big], '\0');
    assert_int_equal(resp_parser_next(p, &c), 0);
    assert_int_equal(resp_parser_pending(p), 0);
    resp_parser_free(p);
    free(second);
}

/* Whole frames (the one-pass path) with lengths of one and two digits,
 * leading zeros and neighbours of the short forms: the same verdicts as
 * the byte-wise path. */
static void test_short_lengths_whole_frames(void **state)
{
    resp_parser_t *p = new_parser(NULL);
    resp_cmd_t *c;
    const char *ok = "*3\r\n$0\r\n\r\n$9\r\n123456789\r\n"
                     "$10\r\n0123456789\r\n"
                     "*1\r\n$99\r\n";
    char big[200];
    (void)state;
    assert_int_equal(resp_parser_feed(p, ok, strlen(ok)), 0);
    assert_int_equal(resp_parser_next(p, &c), 1);
    assert_int_equal(c->argc, 3);
    assert_int_equal(c->argv[0].len, 0);
    assert_string_equal(c->argv[0].ptr, "");
    assert_string_equal(c->argv[1].ptr, "123456789");
    assert_string_equal(c->argv[2].ptr, "0123456789");
    memset(big, 'q', 99);
    memcpy(big + 99, "\r\n", 2);
    assert_int_equal(resp_parser_feed(p, big, 101), 0);
    assert_int_equal(resp_parser_next(p, &c), 1);
    assert_int_equal(c->argv[0].len, 99);
    resp_parser_free(p);
    expect_error("*1\r\n$01\r\nx\r\n", E_BULK);
    expect_error("*1\r\n$00\r\n\r\n", E_BULK);
    expect_error("*1\r\n$09\r\n123456789\r\n", E_BULK);
    expect_error("*1\r\n$1:\r\nx\r\n", E_BULK);
    expect_error("*02\r\n$1\r\na\r\n$1\r\nb\r\n", E_MBULK);
    expect_error("*1\r\n$-1\r\n\r\n", E_BULK);
}

static void test_invalid_bulk_length(void **state)
{
    expect_error("*1\r\n$abc\r\n", E_BULK);
    expect_error("*1\r\n$-1\r\n", E_BULK);
    expect_error("*2\r\n$1\r\na\r\n$-5\r\n", E_BULK);
    expect_error("*1\r\n$\r\n", E_BULK);
    expect_error("*1\r\n$ 3\r\n", E_BULK);
    expect_error("*1\r\n$03\r\n", E_BULK);
    expect_error("*1\r\n$536870913\r\n", E_BULK);
}

static void test_expected_dollar(void **state)
{
    expect_error("*1\r\n:5\r\n", "Protocol error: expected '$', got ':'");
    expect_error("*2\r\n*1\r\n$1\r\na\r\n",
                 "Protocol error: expected '$', got '*'");
    expect_error("*1\r\n+OK\r\n", "Protocol error: expected '$', got '+'");
    expect_error("*2\r\n$1\r\na\r\nx", "Protocol error: expected '$', got 'x'");
    /* CR and LF cannot appear in an error reply. */
    expect_error("*1\r\n\r\n", "Protocol error: expected '$', got ' '");
}

static void test_too_big_inline(void **state)
{
    size_t n = 64 * 1024 + 1;
    char *s = malloc(n + 2);

    assert_non_null(s);
    memset(s, 'a', n);
    /* Without a newline: refused as soon as the cap is passed. */
    expect_error_len(NULL, s, n, E_INLINE);
    /* With one, the line is still too long. */
    s[n] = '\n';
    expect_error_len(NULL, s, n + 1, E_INLINE);
    /* Exactly at the cap is fine. */
    s[n - 1] = '\n';
    {
        resp_parser_t *p = new_parser(NULL);
        resp_cmd_t *c;

        assert_int_equal(resp_parser_feed(p, s, n), 0);
        assert_int_equal(resp_parser_next(p, &c), 1);
        assert_int_equal(c->argc, 1);
        assert_int_equal(c->argv[0].len, n - 1);
        resp_parser_free(p);
    }
    free(s);
}

static void test_too_big_count_strings(void **state)
{
    resp_limits_t lim;
    char buf[64];

    resp_limits_default(&lim);
    lim.max_inline_len = 16;
    memset(buf, '1', sizeof(buf));
    buf[0] = '*';
    expect_error_len(&lim, buf, 18,
                     "Protocol error: too big mbulk count string");
    memcpy(buf, "*1\r\n$", 5);
    expect_error_len(&lim, buf, 5 + 17,
                     "Protocol error: too big bulk count string");
    /* The default cap is 64 KB. */
    {
        size_t n = 64 * 1024 + 2;
        char *s = malloc(n);

        assert_non_null(s);
        memset(s, '1', n);
        s[0] = '*';
        expect_error_len(NULL, s, n,
                         "Protocol error: too big mbulk count string");
        free(s);
    }
}

static void test_multibulk_cap_no_allocation(void **state)
{
    resp_parser_t *p = new_parser(NULL);
    resp_cmd_t *c;
    size_t before;

    /* 13 bytes asking for 100M arguments: refused by the feed itself. */
    assert_int_equal(resp_parser_feed(p, "*100000000\r\n", 12), -EPROTO);
    assert_string_equal(resp_parser_error(p), E_MBULK);
    assert_int_equal(resp_parser_next(p, &c), -EPROTO);
    resp_parser_free(p);

    /* A count under the cap allocates nothing before its elements come. */
    p = new_parser(NULL);
    before = heap_in_use();
    assert_int_equal(resp_parser_feed(p, "*1000000\r\n$1\r\na\r\n", 17), 0);
    assert_int_equal(resp_parser_next(p, &c), 0);
    assert_true(heap_in_use() < before + 1024 * 1024);
    resp_parser_free(p);
}

static void test_max_args_limit(void **state)
{
    resp_limits_t lim;
    resp_parser_t *p;
    resp_cmd_t *c;

    resp_limits_default(&lim);
    lim.max_args = 2;
    p = new_parser(&lim);
    assert_int_equal(resp_parser_feed(p, "*2\r\n$1\r\na\r\n$1\r\nb\r\n", 18),
                     0);
    assert_int_equal(resp_parser_next(p, &c), 1);
    assert_int_equal(c->argc, 2);
    assert_int_equal(resp_parser_feed(p, "*3\r\n", 4), -EPROTO);
    assert_string_equal(resp_parser_error(p), E_MBULK);
    resp_parser_free(p);

    /* Limits change on a live parser. */
    p = new_parser(NULL);
    resp_parser_set_limits(p, &lim);
    assert_int_equal(resp_parser_feed(p, "*3\r\n", 4), -EPROTO);
    resp_parser_free(p);

    /* Raised, they are raised for hiredis's reader too (1.x has its own
     * bound on elements). */
    p = new_parser(&lim);
    lim.max_args = 3;
    resp_parser_set_limits(p, &lim);
    assert_int_equal(
        resp_parser_feed(p, "*3\r\n$1\r\na\r\n$1\r\nb\r\n$1\r\nc\r\n", 25), 0);
    assert_int_equal(resp_parser_next(p, &c), 1);
    assert_int_equal(c->argc, 3);
    assert_null(resp_parser_error(p));
    resp_parser_free(p);
}

static void test_bulk_limit_before_payload(void **state)
{
    resp_limits_t lim;
    resp_parser_t *p;
    resp_cmd_t *c;

    resp_limits_default(&lim);
    lim.max_bulk_len = 16;
    p = new_parser(&lim);
    /* Only the header has come: refused at once. */
    assert_int_equal(resp_parser_feed(p, "*1\r\n$17\r\n", 9), -EPROTO);
    assert_string_equal(resp_parser_error(p), E_BULK);
    assert_int_equal(resp_parser_pending(p), 0);
    resp_parser_free(p);

    p = new_parser(&lim);
    assert_int_equal(resp_parser_feed(p, "*1\r\n$16\r\n", 9), 0);
    assert_int_equal(resp_parser_feed(p, "0123456789abcdef\r\n", 18), 0);
    assert_int_equal(resp_parser_next(p, &c), 1);
    assert_int_equal(c->argv[0].len, 16);
    resp_parser_free(p);

    /* The default limit is 512 MB. */
    p = new_parser(NULL);
    assert_int_equal(resp_parser_feed(p, "*1\r\n$536870913\r\n", 17), -EPROTO);
    assert_string_equal(resp_parser_error(p), E_BULK);
    resp_parser_free(p);
}

static void test_query_buffer_limit(void **state)
{
    resp_limits_t lim;
    resp_parser_t *p;
    resp_cmd_t *c;
    char big[100];

    resp_limits_default(&lim);
    lim.max_query_buf = 64;
    p = new_parser(&lim);
    /* Complete commands drain the buffer, so the limit is per backlog. */
    for (int i = 0; i < 10; i++) {
        assert_int_equal(resp_parser_feed(p, "*1\r\n$4\r\nPING\r\n", 14), 0);
        assert_int_equal(resp_parser_next(p, &c), 1);
    }
    assert_int_equal(resp_parser_feed(p, "*1\r\n$50\r\n", 9), 0);
    memset(big, 'x', sizeof(big));
    assert_int_equal(resp_parser_feed(p, big, 40), 0);
    assert_int_equal(resp_parser_pending(p), 49);
    assert_int_equal(resp_parser_feed(p, big, 16), -EPROTO);
    assert_non_null(resp_parser_error(p));
    assert_int_equal(strncmp(resp_parser_error(p), "Protocol error: ", 16), 0);
    assert_int_equal(resp_parser_next(p, &c), -EPROTO);
    resp_parser_free(p);

    /* An inline line without newline is held to it as well. */
    p = new_parser(&lim);
    assert_int_equal(resp_parser_feed(p, big, 64), 0);
    assert_int_equal(resp_parser_feed(p, big, 1), -EPROTO);
    resp_parser_free(p);
}

static void test_commands_before_error(void **state)
{
    static const char in[] = "PING\r\n*1\r\n$3\r\nfoo\r\n*1\r\n:1\r\n";
    resp_parser_t *p = new_parser(NULL);
    resp_cmd_t *c;

    assert_int_equal(resp_parser_feed(p, in, sizeof(in) - 1), 0);
    assert_int_equal(resp_parser_next(p, &c), 1);
    assert_string_equal(c->argv[0].ptr, "PING");
    assert_int_equal(resp_parser_next(p, &c), 1);
    assert_string_equal(c->argv[0].ptr, "foo");
    assert_int_equal(resp_parser_next(p, &c), -EPROTO);
    assert_null(c);
    assert_string_equal(resp_parser_error(p),
                        "Protocol error: expected '$', got ':'");
    resp_parser_free(p);

    /* Unbalanced quotes after a good inline line. */
    p = new_parser(NULL);
    assert_int_equal(resp_parser_feed(p, "A\nB \"x\n*1\r\n$1\r\nC\r\n", 18), 0);
    assert_int_equal(resp_parser_next(p, &c), 1);
    assert_string_equal(c->argv[0].ptr, "A");
    assert_int_equal(resp_parser_next(p, &c), -EPROTO);
    assert_string_equal(resp_parser_error(p), E_QUOTES);
    assert_int_equal(resp_parser_next(p, &c), -EPROTO);
    resp_parser_free(p);

    /* A query buffer overflow behind a ready command. */
    {
        resp_limits_t lim;

        resp_limits_default(&lim);
        lim.max_query_buf = 20;
        p = new_parser(&lim);
        assert_int_equal(resp_parser_feed(p, "PING\r\n", 6), 0);
        assert_int_equal(resp_parser_feed(p, "0123456789abcdef", 16), 0);
        assert_int_equal(resp_parser_next(p, &c), 1);
        assert_string_equal(c->argv[0].ptr, "PING");
        assert_int_equal(resp_parser_next(p, &c), -EPROTO);
        resp_parser_free(p);
    }
}

static void test_error_free_midway(void **state)
{
    /* Freeing a parser holding half a frame in the reader must not leak. */
    resp_parser_t *p = new_parser(NULL);

    assert_int_equal(resp_parser_feed(p, "*3\r\n$1\r\na\r\n$5\r\nab", 18), 0);
    assert_int_equal(resp_parser_pending(p), 18);
    resp_parser_free(p);
    resp_parser_free(NULL);
}

/* ---- splitting and volume ------------------------------------------- */

static const char pipeline[] =
    "*3\r\n$3\r\nSET\r\n$3\r\nk\0y\r\n$5\r\nv\r\nal\r\n"
    "PING\r\n"
    "*0\r\n"
    "ECHO \"a b\\x41\" 'c'\n"
    "*1\r\n$0\r\n\r\n"
    "\r\n"
    "*-1\r\n"
    "*2\r\n$6\r\nCF.ADD\r\n$12\r\n\r\n\r\n\r\n\r\n\r\n\r\n"
    "QUIT\n";

static void test_split_every_boundary(void **state)
{
    size_t n = sizeof(pipeline) - 1;
    dstr_t ref = {0};
    resp_parser_t *p = new_parser(NULL);
    int count = 0;

    assert_int_equal(resp_parser_feed(p, pipeline, n), 0);
    assert_int_equal(drain(p, &ref, &count), 0);
    assert_int_equal(count, 6);
    resp_parser_free(p);

    for (size_t i = 0; i <= n; i++) {
        dstr_t d = {0};

        p = new_parser(NULL);
        assert_int_equal(resp_parser_feed(p, pipeline, i), 0);
        assert_int_equal(drain(p, &d, NULL), 0);
        assert_int_equal(resp_parser_feed(p, pipeline + i, n - i), 0);
        assert_int_equal(drain(p, &d, NULL), 0);
        assert_int_equal(d.len, ref.len);
        assert_memory_equal(d.b, ref.b, ref.len);
        assert_int_equal(resp_parser_pending(p), 0);
        resp_parser_free(p);
        ds_free(&d);
    }

    /* Byte by byte, and three-way splits. */
    {
        dstr_t d = {0};

        p = new_parser(NULL);
        for (size_t i = 0; i < n; i++) {
            assert_int_equal(resp_parser_feed(p, pipeline + i, 1), 0);
            assert_int_equal(drain(p, &d, NULL), 0);
        }
        assert_int_equal(d.len, ref.len);
        assert_memory_equal(d.b, ref.b, ref.len);
        resp_parser_free(p);
        ds_free(&d);
    }
    for (size_t i = 0; i <= n; i += 3) {
        for (size_t j = i; j <= n; j += 5) {
            dstr_t d = {0};

            p = new_parser(NULL);
            assert_int_equal(resp_parser_feed(p, pipeline, i), 0);
            assert_int_equal(resp_parser_feed(p, pipeline + i, j - i), 0);
            assert_int_equal(drain(p, &d, NULL), 0);
            assert_int_equal(resp_parser_feed(p, pipeline + j, n - j), 0);
            assert_int_equal(drain(p, &d, NULL), 0);
            assert_int_equal(d.len, ref.len);
            assert_memory_equal(d.b, ref.b, ref.len);
            resp_parser_free(p);
            ds_free(&d);
        }
    }
    ds_free(&ref);
}

static void test_error_split_every_boundary(void **state)
{
    static const char in[] = "*1\r\n$4\r\nPING\r\n*2\r\n$1\r\na\r\n:1\r\n";
    size_t n = sizeof(in) - 1;

    for (size_t i = 0; i <= n; i++) {
        resp_parser_t *p = new_parser(NULL);
        dstr_t d = {0};
        int rc;

        rc = resp_parser_feed(p, in, i);
        if (rc == 0)
            rc = drain(p, &d, NULL);
        /* Only a first part that holds the ':' fails at once. */
        assert_int_equal(rc, i > n - 4 ? -EPROTO : 0);
        if (rc == 0) {
            rc = resp_parser_feed(p, in + i, n - i);
            if (rc == 0)
                rc = drain(p, &d, NULL);
        }
        assert_int_equal(rc, -EPROTO);
        assert_string_equal(d.b, "[1 4:PING]");
        assert_string_equal(resp_parser_error(p),
                            "Protocol error: expected '$', got ':'");
        resp_parser_free(p);
        ds_free(&d);
    }
}

static void test_command_valid_across_feed(void **state)
{
    resp_parser_t *p = new_parser(NULL);
    resp_cmd_t *c;
    char junk[8192];

    assert_int_equal(resp_parser_feed(p, "*1\r\n$5\r\nhello\r\n", 15), 0);
    assert_int_equal(resp_parser_next(p, &c), 1);
    assert_int_equal(c->argc, 1);
    assert_string_equal(c->argv[0].ptr, "hello");
    /* More input before the next resp_parser_next() call (the command
     * above is no longer valid then), across several feeds. */
    memset(junk, 'z', sizeof(junk));
    assert_int_equal(resp_parser_feed(p, "*1\r\n$8192\r\n", 11), 0);
    assert_int_equal(resp_parser_feed(p, junk, sizeof(junk)), 0);
    assert_int_equal(resp_parser_feed(p, "\r\n", 2), 0);
    assert_int_equal(resp_parser_next(p, &c), 1);
    assert_int_equal(c->argv[0].len, 8192);
    assert_memory_equal(c->argv[0].ptr, junk, 8192);
    resp_parser_free(p);
}

/* Arguments are left where the reader holds them (no copy): each must
 * still be whole and NUL-terminated when its command is handed out, for
 * frames small and large (the reader discards consumed input past 1 KB),
 * binary payloads (CR, LF, NUL inside), fed at once or a byte at a time. */
static void test_args_in_place(void **state)
{
    enum { FRAMES = 40 };
    char *in = malloc(FRAMES * 4200);
    size_t len = 0;
    (void)state;
    assert_non_null(in);
    for (int i = 0; i < FRAMES; i++) {
        /* item j of frame i: (i * 7 + j) % 251 + 1 bytes of (i + j) */
        int nargs = 1 + i % 5;
        len += (size_t)sprintf(in + len, "*%d\r\n", nargs);
        for (int j = 0; j < nargs; j++) {
            size_t n = (size_t)((i * 7 + j * 97) % 1500);
            len += (size_t)sprintf(in + len, "$%zu\r\n", n);
            for (size_t k = 0; k < n; k++)
                in[len++] = (char)((i + j + k) % 7 == 0    ? '\r'
                                   : (i + j + k) % 11 == 0 ? '\0'
                                   : (i + j + k) % 13 == 0 ? '\n'
                                                           : 'a' + i % 26);
            in[len++] = '\r';
            in[len++] = '\n';
        }
    }
    for (int bytewise = 0; bytewise <= 1; bytewise++) {
        resp_parser_t *p = new_parser(NULL);
        resp_cmd_t *c;
        size_t off = 0;
        int got = 0;
        while (got < FRAMES) {
            int rc = resp_parser_next(p, &c);
            if (rc == 0) {
                size_t n = bytewise ? 1 : len - off;
                assert_true(off < len);
                assert_int_equal(resp_parser_feed(p, in + off, n), 0);
                off += n;
                continue;
            }
            assert_int_equal(rc, 1);
            int i = got++;
            assert_int_equal(c->argc, 1 + i % 5);
            for (int j = 0; j < c->argc; j++) {
                size_t n = (size_t)((i * 7 + j * 97) % 1500);
                assert_int_equal(c->argv[j].len, n);
                for (size_t k = 0; k < n; k++) {
                    char want = (char)((i + j + k) % 7 == 0    ? '\r'
                                       : (i + j + k) % 11 == 0 ? '\0'
                                       : (i + j + k) % 13 == 0 ? '\n'
                                                               : 'a' + i % 26);
                    assert_int_equal(c->argv[j].ptr[k], want);
                }
                assert_int_equal(c->argv[j].ptr[n], '\0');
            }
        }
        assert_int_equal(off, len);
        assert_int_equal(resp_parser_next(p, &c), 0);
        resp_parser_free(p);
    }
    free(in);
}

/* Peeking describes the buffered commands without consuming them, stops at
 * an incomplete or unusual frame, and follows what has been returned. */
static void test_peek(void **state)
{
    resp_parser_t *p = new_parser(NULL);
    const resp_peek_t *pk;
    resp_cmd_t *cmd;
    const char *in = "*3\r\n$9\r\nCF.EXISTS\r\n$1\r\nk\r\n$2\r\nab\r\n"
                     "*1\r\n$4\r\nPING\r\n"
                     "*4\r\n$6\r\nCF.ADD\r\n$1\r\nk\r\n$1\r\nx\r\n$1\r\ny\r\n"
                     "*2\r\n$4\r\nECHO\r\n$5\r\nhel"; /* incomplete */
    (void)state;

    assert_int_equal(resp_parser_peek(p, &pk, 8, 8), 0); /* nothing fed */
    assert_int_equal(resp_parser_feed(p, in, strlen(in)), 0);
    /* The first command is the one resp_parser_next() returns next (it
     * runs at once, nothing to fetch ahead for it): the look starts after
     * it. */
    assert_int_equal(resp_parser_peek(p, &pk, 8, 8), 2);
    assert_int_equal(pk[0].argc, 1);
    assert_memory_equal(pk[0].argv[0].ptr, "PING", 4);
    assert_int_equal(pk[1].argc, 4); /* only the first three described */
    assert_int_equal(pk[1].argv[0].len, 6);
    assert_memory_equal(pk[1].argv[0].ptr, "CF.ADD", 6);
    assert_memory_equal(pk[1].argv[1].ptr, "k", 1);
    assert_memory_equal(pk[1].argv[2].ptr, "x", 1);
    assert_int_equal(resp_parser_peek(p, &pk, 1, 8), 1); /* max respected */
    /* A frame with more elements than max_argc ends the look. */
    assert_int_equal(resp_parser_peek(p, &pk, 8, 3), 1);
    assert_int_equal(pk[0].argc, 1);
    assert_int_equal(resp_parser_peek(p, &pk, 8, 4), 2);

    /* Peeking consumed nothing: the commands still come, in order. */
    assert_int_equal(resp_parser_next(p, &cmd), 1);
    assert_int_equal(cmd->argc, 3);
    assert_memory_equal(cmd->argv[2].ptr, "ab", 3);
    assert_int_equal(resp_parser_next(p, &cmd), 1);
    assert_int_equal(cmd->argc, 1);
    assert_int_equal(resp_parser_next(p, &cmd), 1);
    assert_int_equal(cmd->argc, 4);
    assert_int_equal(resp_parser_peek(p, &pk, 8, 8), 0); /* ECHO incomplete */
    assert_int_equal(resp_parser_next(p, &cmd), 0);
    const char *more = "lo\r\nPING\r\n*1\r\n$4\r\nPING\r\n";
    assert_int_equal(resp_parser_feed(p, more, strlen(more)), 0);
    /* ECHO is next; then an inline command, which stops the look */
    assert_int_equal(resp_parser_peek(p, &pk, 8, 8), 0);
    assert_int_equal(resp_parser_next(p, &cmd), 1);
    assert_int_equal(cmd->argc, 2);
    assert_int_equal(resp_parser_next(p, &cmd), 1); /* inline PING */
    assert_int_equal(resp_parser_next(p, &cmd), 1); /* multibulk PING */
    assert_int_equal(resp_parser_next(p, &cmd), 0);
    resp_parser_free(p);
}

/* The frames a look walked are taken from what it kept: the same arguments
 * (NUL-terminated), in order; a change of limits or a feed in between
 * (which may move the buffer) makes the parser walk them afresh. */
static void test_peek_kept(void **state)
{
    resp_parser_t *p = new_parser(NULL);
    const resp_peek_t *pk;
    resp_cmd_t *cmd;
    const char *in = "*1\r\n$4\r\nPING\r\n"
                     "*3\r\n$9\r\nCF.EXISTS\r\n$1\r\nk\r\n$2\r\nab\r\n"
                     "*2\r\n$3\r\nGET\r\n$3\r\nkey\r\n"
                     "*2\r\n$4\r\nECHO\r\n$12\r\nabcdefghijkl\r\n";
    (void)state;

    assert_int_equal(resp_parser_feed(p, in, strlen(in)), 0);
    assert_int_equal(resp_parser_next(p, &cmd), 1); /* PING */
    assert_int_equal(resp_parser_peek(p, &pk, 8, 3), 3);
    assert_int_equal(resp_parser_next(p, &cmd), 1);
    assert_int_equal(cmd->argc, 3);
    assert_string_equal(cmd->argv[0].ptr, "CF.EXISTS");
    assert_string_equal(cmd->argv[2].ptr, "ab");
    assert_int_equal(cmd->argv[2].len, 2);
    assert_int_equal(resp_parser_next(p, &cmd), 1);
    assert_int_equal(cmd->argc, 2);
    assert_string_equal(cmd->argv[1].ptr, "key");
    /* Tighter limits now: the kept ECHO frame is checked against them. */
    resp_limits_t lim;
    resp_limits_default(&lim);
    lim.max_bulk_len = 10;
    resp_parser_set_limits(p, &lim);
    assert_int_equal(resp_parser_next(p, &cmd), -EPROTO);
    resp_parser_free(p);

    /* A feed between the look and the last kept frame: the taken frames'
     * bytes are moved out (the buffer shifts), and the buffer grows. */
    p = new_parser(NULL);
    assert_int_equal(resp_parser_feed(p, in, strlen(in)), 0);
    assert_int_equal(resp_parser_peek(p, &pk, 8, 3), 3);
    for (int i = 0; i < 3; i++)
        assert_int_equal(resp_parser_next(p, &cmd), 1);
    size_t big = 100000;
    char *more = malloc(big + 32);
    assert_non_null(more);
    int n = snprintf(more, 32, "*2\r\n$4\r\nECHO\r\n$%zu\r\n", big);
    memset(more + n, 'x', big);
    memcpy(more + n + big, "\r\n", 2);
    assert_int_equal(resp_parser_feed(p, more, (size_t)n + big + 2), 0);
    assert_int_equal(resp_parser_next(p, &cmd), 1);
    assert_int_equal(cmd->argc, 2);
    assert_string_equal(cmd->argv[0].ptr, "ECHO");
    assert_string_equal(cmd->argv[1].ptr, "abcdefghijkl");
    assert_int_equal(resp_parser_next(p, &cmd), 1);
    assert_string_equal(cmd->argv[0].ptr, "ECHO");
    assert_int_equal(cmd->argv[1].len, big);
    assert_int_equal(cmd->argv[1].ptr[big], '\0');
    assert_int_equal(resp_parser_next(p, &cmd), 0);
    assert_int_equal(resp_parser_pending(p), 0);
    free(more);
    resp_parser_free(p);
}

static void test_pipeline_10k(void **state)
{
    dstr_t in = {0};
    const int n = 10000;
    resp_parser_t *p;
    resp_cmd_t *c;
    int i;

    for (i = 0; i < n; i++) {
        if (i % 2)
            ds_printf(&in, "*2\r\n$9\r\nCF.EXISTS\r\n$%d\r\n%d\r\n",
                      snprintf(NULL, 0, "%d", i), i);
        else
            ds_printf(&in, "CF.EXISTS %d\r\n", i);
    }
    /* In one piece, then in 4 KB reads as a socket would give them. */
    for (size_t chunk = in.len; chunk >= 4096;
         chunk = chunk == 4096 ? 0 : 4096) {
        size_t off = 0;

        p = new_parser(NULL);
        i = 0;
        while (off < in.len) {
            size_t k = in.len - off < chunk ? in.len - off : chunk;
            int rc;

            assert_int_equal(resp_parser_feed(p, in.b + off, k), 0);
            off += k;
            while ((rc = resp_parser_next(p, &c)) == 1) {
                char num[16];

                snprintf(num, sizeof(num), "%d", i);
                assert_int_equal(c->argc, 2);
                assert_string_equal(c->argv[0].ptr, "CF.EXISTS");
                assert_string_equal(c->argv[1].ptr, num);
                i++;
            }
            assert_int_equal(rc, 0);
        }
        assert_int_equal(i, n);
        assert_int_equal(resp_parser_pending(p), 0);
        resp_parser_free(p);
    }
    ds_free(&in);
}

static void test_command_100k_args(void **state)
{
    dstr_t in = {0};
    const int n = 100000;
    resp_parser_t *p;
    resp_cmd_t *c;
    int i;

    ds_printf(&in, "*%d\r\n$9\r\nCF.INSERT\r\n", n + 1);
    for (i = 0; i < n; i++)
        ds_printf(&in, "$%d\r\nitem%d\r\n",
                  (int)strlen("item") + snprintf(NULL, 0, "%d", i), i);
    for (size_t chunk = in.len; chunk >= 16384;
         chunk = chunk == 16384 ? 0 : 16384) {
        size_t off = 0;

        p = new_parser(NULL);
        while (off < in.len) {
            size_t k = in.len - off < chunk ? in.len - off : chunk;

            assert_int_equal(resp_parser_feed(p, in.b + off, k), 0);
            off += k;
            if (off < in.len)
                assert_int_equal(resp_parser_next(p, &c), 0);
        }
        assert_int_equal(resp_parser_pending(p), in.len);
        assert_int_equal(resp_parser_next(p, &c), 1);
        assert_int_equal(c->argc, n + 1);
        for (i = 0; i < n; i++) {
            char item[24];

            snprintf(item, sizeof(item), "item%d", i);
            assert_int_equal(c->argv[i + 1].len, strlen(item));
            assert_string_equal(c->argv[i + 1].ptr, item);
        }
        assert_int_equal(resp_parser_next(p, &c), 0);
        assert_int_equal(resp_parser_pending(p), 0);
        /* A small command after the big one still parses. */
        assert_int_equal(resp_parser_feed(p, "PING\n", 5), 0);
        assert_int_equal(resp_parser_next(p, &c), 1);
        assert_int_equal(c->argc, 1);
        resp_parser_free(p);
    }
    ds_free(&in);
}

static void test_large_bulk(void **state)
{
    const size_t n = 4 * 1024 * 1024;
    char *payload = malloc(n);
    resp_parser_t *p = new_parser(NULL);
    resp_cmd_t *c;
    char hdr[32];
    size_t off;
    int len;

    assert_non_null(payload);
    for (off = 0; off < n; off++)
        payload[off] = (char)(off * 7);
    len = snprintf(hdr, sizeof(hdr), "*2\r\n$3\r\nSET\r\n$%zu\r\n", n);
    assert_int_equal(resp_parser_feed(p, hdr, (size_t)len), 0);
    for (off = 0; off < n; off += 65536) {
        assert_int_equal(resp_parser_feed(p, payload + off, 65536), 0);
        assert_int_equal(resp_parser_next(p, &c), 0);
    }
    assert_int_equal(resp_parser_feed(p, "\r\nPING\r\n", 8), 0);
    assert_int_equal(resp_parser_next(p, &c), 1);
    assert_int_equal(c->argc, 2);
    assert_int_equal(c->argv[1].len, n);
    assert_memory_equal(c->argv[1].ptr, payload, n);
    assert_int_equal(c->argv[1].ptr[n], '\0');
    /* Small commands after it reuse (or shrink) the buffers. */
    assert_int_equal(resp_parser_next(p, &c), 1);
    assert_string_equal(c->argv[0].ptr, "PING");
    assert_int_equal(resp_parser_feed(p, "*1\r\n$1\r\nx\r\n", 11), 0);
    assert_int_equal(resp_parser_next(p, &c), 1);
    assert_string_equal(c->argv[0].ptr, "x");
    assert_int_equal(resp_parser_next(p, &c), 0);
    assert_int_equal(resp_parser_pending(p), 0);
    resp_parser_free(p);
    free(payload);
}

static void test_pending(void **state)
{
    resp_parser_t *p = new_parser(NULL);
    resp_cmd_t *c;

    assert_int_equal(resp_parser_pending(p), 0);
    assert_int_equal(resp_parser_feed(p, "*1\r\n$4\r\nPI", 10), 0);
    assert_int_equal(resp_parser_pending(p), 10);
    assert_int_equal(resp_parser_feed(p, "NG\r\nPIN", 7), 0);
    assert_int_equal(resp_parser_pending(p), 17);
    assert_int_equal(resp_parser_next(p, &c), 1);
    assert_int_equal(resp_parser_pending(p), 3);
    assert_int_equal(resp_parser_next(p, &c), 0);
    assert_int_equal(resp_parser_feed(p, "G\n", 2), 0);
    assert_int_equal(resp_parser_next(p, &c), 1);
    assert_int_equal(resp_parser_pending(p), 0);
    assert_null(resp_parser_error(p));
    resp_parser_free(p);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_limits_default),
        cmocka_unit_test(test_multibulk),
        cmocka_unit_test(test_binary_args),
        cmocka_unit_test(test_inline_plain),
        cmocka_unit_test(test_inline_quotes),
        cmocka_unit_test(test_inline_unbalanced),
        cmocka_unit_test(test_empty_frames_skipped),
        cmocka_unit_test(test_invalid_multibulk_length),
        cmocka_unit_test(test_invalid_bulk_length),
        cmocka_unit_test(test_expected_dollar),
        cmocka_unit_test(test_too_big_inline),
        cmocka_unit_test(test_too_big_count_strings),
        cmocka_unit_test(test_multibulk_cap_no_allocation),
        cmocka_unit_test(test_max_args_limit),
        cmocka_unit_test(test_bulk_limit_before_payload),
        cmocka_unit_test(test_query_buffer_limit),
        cmocka_unit_test(test_commands_before_error),
        cmocka_unit_test(test_error_free_midway),
        cmocka_unit_test(test_split_every_boundary),
        cmocka_unit_test(test_error_split_every_boundary),
        cmocka_unit_test(test_command_valid_across_feed),
        cmocka_unit_test(test_pipeline_10k),
        cmocka_unit_test(test_command_100k_args),
        cmocka_unit_test(test_large_bulk),
        cmocka_unit_test(test_pending),
        cmocka_unit_test(test_peek),
        cmocka_unit_test(test_peek_kept),
        cmocka_unit_test(test_args_in_place),
        cmocka_unit_test(test_short_lengths_whole_frames),
        cmocka_unit_test(test_ready_frame_then_feed),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
