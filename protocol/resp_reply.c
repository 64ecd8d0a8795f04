/*
 * resp_reply.c - reply encoding into a growable buffer.
 *
 * Every append reserves its whole size first and then copies, so a failed
 * allocation leaves the bytes before it intact and the buffer marked failed.
 * Integers are formatted by hand: they are on every reply's path, snprintf
 * is not needed for them.
 */
#include "resp_out.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* "-9223372036854775808" is 20 characters. */
#define RESP_INT_MAX_CHARS 20

void resp_out_init(resp_out_t *o, int proto)
{
    o->buf = NULL;
    o->len = 0;
    o->cap = 0;
    o->proto = proto == 3 ? 3 : 2;
    o->failed = false;
    o->error_at = RESP_OUT_NO_ERROR;
}

void resp_out_release(resp_out_t *o)
{
    free(o->buf);
    o->buf = NULL;
    o->len = 0;
    o->cap = 0;
}

char *resp_out_take(resp_out_t *o, size_t *len)
{
    char *b;

    if (o->failed || o->len == 0) {
        *len = 0;
        return NULL; /* an empty buffer stays for reuse */
    }
    b = o->buf;
    *len = o->len;
    o->buf = NULL;
    o->len = 0;
    o->cap = 0;
    return b;
}

void resp_out_consume(resp_out_t *o, size_t n)
{
    if (n >= o->len) {
        o->len = 0;
        if (o->cap > RESP_OUT_KEEP)
            resp_out_release(o);
        return;
    }
    memmove(o->buf, o->buf + n, o->len - n);
    o->len -= n;
}

bool resp_out_failed(const resp_out_t *o)
{
    return o->failed;
}

/* True (and the buffer failed) when a payload of len bytes plus framing
 * cannot be sized without overflow. */
static bool too_big(resp_out_t *o, size_t len)
{
    if (len > SIZE_MAX / 2) {
        o->failed = true;
        return true;
    }
    return false;
}

/* reserve()'s slow path: grows the buffer to room for n more bytes. */
static char *grow(resp_out_t *o, size_t n)
{
    if (o->failed)
        return NULL;
    {
        size_t need = o->len + n;
        size_t cap = o->cap < 256 ? 256 : o->cap;
        char *nb;

        if (need < o->len) {
            o->failed = true; /* size_t overflow */
            return NULL;
        }
        while (cap < need)
            cap = cap > SIZE_MAX / 2 ? need : cap * 2;
        nb = realloc(o->buf, cap);
        if (nb == NULL) {
            o->failed = true;
            return NULL;
        }
        o->buf = nb;
        o->cap = cap;
    }
    return o->buf + o->len;
}

/* Returns room for n more bytes at o->buf + o->len, or NULL (sticky);
 * inline, as the common case is two tests. */
static inline char *reserve(resp_out_t *o, size_t n)
{
    if (!o->failed && o->cap - o->len >= n)
        return o->buf + o->len;
    return grow(o, n);
}

/* Writes v in decimal at d; returns the number of characters. */
static size_t fmt_u64(char *d, uint64_t v)
{
    char tmp[RESP_INT_MAX_CHARS];
    size_t n = 0, i;

    do {
        tmp[n++] = (char)('0' + v % 10);
        v /= 10;
    } while (v != 0);
    for (i = 0; i < n; i++)
        d[i] = tmp[n - 1 - i];
    return n;
}

static size_t fmt_i64(char *d, int64_t v)
{
    if (v < 0) {
        d[0] = '-';
        return 1 + fmt_u64(d + 1, 0 - (uint64_t)v);
    }
    return fmt_u64(d, (uint64_t)v);
}

/* "<type><v>\r\n" */
static void put_header(resp_out_t *o, char type, int64_t v)
{
    char *d = reserve(o, 1 + RESP_INT_MAX_CHARS + 2);
    size_t n;

    if (d == NULL)
        return;
    d[0] = type;
    n = 1 + fmt_i64(d + 1, v);
    d[n++] = '\r';
    d[n++] = '\n';
    o->len += n;
}

static void put_count(resp_out_t *o, char type, size_t n)
{
    put_header(o, type, n > INT64_MAX ? INT64_MAX : (int64_t)n);
}

static void put(resp_out_t *o, const void *p, size_t len)
{
    char *d;

    if (too_big(o, len))
        return;
    d = reserve(o, len);
    if (d == NULL)
        return;
    if (len > 0)
        memcpy(d, p, len);
    o->len += len;
}

/* A simple string or error line cannot carry CR or LF: like Redis, turn
 * them into spaces rather than let a message break the framing. */
static void put_line(resp_out_t *o, char type, const char *s, size_t len)
{
    char *d = reserve(o, len + 3);
    size_t i;

    if (d == NULL)
        return;
    d[0] = type;
    for (i = 0; i < len; i++)
        d[1 + i] = (s[i] == '\r' || s[i] == '\n') ? ' ' : s[i];
    d[1 + len] = '\r';
    d[2 + len] = '\n';
    o->len += len + 3;
}

void resp_add_simple(resp_out_t *o, const char *s)
{
    put_line(o, '+', s, strlen(s));
}

void resp_add_error(resp_out_t *o, const char *s)
{
    size_t at = o->len;
    put_line(o, '-', s, strlen(s));
    if (!o->failed)
        o->error_at = at;
}

void resp_add_errorf(resp_out_t *o, const char *fmt, ...)
{
    char small[256];
    char *msg = small;
    va_list ap;
    int n;

    if (o->failed)
        return;
    va_start(ap, fmt);
    n = vsnprintf(small, sizeof(small), fmt, ap);
    va_end(ap);
    if (n < 0) {
        small[0] = '\0';
        n = 0;
    } else if ((size_t)n >= sizeof(small)) {
        msg = malloc((size_t)n + 1);
        if (msg == NULL) {
            o->failed = true;
            return;
        }
        va_start(ap, fmt);
        vsnprintf(msg, (size_t)n + 1, fmt, ap);
        va_end(ap);
    }
    size_t at = o->len;
    put_line(o, '-', msg, (size_t)n);
    if (!o->failed)
        o->error_at = at;
    if (msg != small)
        free(msg);
}

void resp_add_int(resp_out_t *o, int64_t v)
{
    put_header(o, ':', v);
}

/* Writes len bytes of p and CRLF at d + n; returns the new length. */
static size_t put_payload(char *d, size_t n, const void *p, size_t len)
{
    if (len > 0)
        memcpy(d + n, p, len);
    n += len;
    d[n++] = '\r';
    d[n++] = '\n';
    return n;
}

void resp_add_bulk(resp_out_t *o, const void *p, size_t len)
{
    char *d;
    size_t n;

    if (too_big(o, len))
        return;
    d = reserve(o, 1 + RESP_INT_MAX_CHARS + 2 + len + 2);
    if (d == NULL)
        return;
    d[0] = '$';
    n = 1 + fmt_u64(d + 1, len);
    d[n++] = '\r';
    d[n++] = '\n';
    o->len += put_payload(d, n, p, len);
}

void resp_add_cstr(resp_out_t *o, const char *s)
{
    if (s == NULL)
        resp_add_null(o);
    else
        resp_add_bulk(o, s, strlen(s));
}

void resp_add_null(resp_out_t *o)
{
    if (o->proto == 3)
        put(o, "_\r\n", 3);
    else
        put(o, "$-1\r\n", 5);
}

void resp_add_null_array(resp_out_t *o)
{
    if (o->proto == 3)
        put(o, "_\r\n", 3);
    else
        put(o, "*-1\r\n", 5);
}

void resp_add_array(resp_out_t *o, size_t n)
{
    put_count(o, '*', n);
}

void resp_add_map(resp_out_t *o, size_t npairs)
{
    if (o->proto == 3)
        put_count(o, '%', npairs);
    else
        put_count(o, '*', npairs > SIZE_MAX / 2 ? SIZE_MAX : npairs * 2);
}

void resp_add_set(resp_out_t *o, size_t n)
{
    put_count(o, o->proto == 3 ? '~' : '*', n);
}

void resp_add_bool(resp_out_t *o, bool b)
{
    if (o->proto == 3)
        put(o, b ? "#t\r\n" : "#f\r\n", 4);
    else
        put(o, b ? ":1\r\n" : ":0\r\n", 4);
}

void resp_add_bools(resp_out_t *o, const bool *v, size_t n)
{
    /* Each reply is 4 bytes whose second byte alone says which. */
    const char *enc = o->proto == 3 ? "#f\r\n#t\r\n" : ":0\r\n:1\r\n";
    char *d;

    if (n > SIZE_MAX / 8) {
        o->failed = true;
        return;
    }
    if ((d = reserve(o, 4 * n)) == NULL)
        return;
    for (size_t i = 0; i < n; i++)
        memcpy(d + 4 * i, enc + (v[i] ? 4 : 0), 4);
    o->len += 4 * n;
}

/* Redis 7 prints inf, -inf and nan by name and finite values in the
 * shortest form that reads back to the same double. */
static size_t fmt_double(char *d, size_t cap, double v)
{
    int prec, n = 0;

    if (isnan(v))
        return (size_t)snprintf(d, cap, "nan");
    if (isinf(v))
        return (size_t)snprintf(d, cap, v > 0 ? "inf" : "-inf");
    for (prec = 15; prec <= 17; prec++) {
        n = snprintf(d, cap, "%.*g", prec, v);
        if (strtod(d, NULL) == v)
            break;
    }
    return (size_t)n;
}

void resp_add_double(resp_out_t *o, double v)
{
    char num[40];
    size_t n = fmt_double(num, sizeof(num), v);

    if (o->proto == 3) {
        char *d = reserve(o, n + 3);

        if (d == NULL)
            return;
        d[0] = ',';
        memcpy(d + 1, num, n);
        d[n + 1] = '\r';
        d[n + 2] = '\n';
        o->len += n + 3;
    } else {
        resp_add_bulk(o, num, n);
    }
}

void resp_add_verbatim(resp_out_t *o, const char *fmt, const void *p,
                       size_t len)
{
    char *d;
    size_t n;

    if (o->proto != 3) {
        resp_add_bulk(o, p, len);
        return;
    }
    if (fmt == NULL || strlen(fmt) != 3)
        fmt = "txt"; /* the format is exactly three characters */
    if (too_big(o, len))
        return;
    d = reserve(o, 1 + RESP_INT_MAX_CHARS + 2 + 4 + len + 2);
    if (d == NULL)
        return;
    d[0] = '=';
    n = 1 + fmt_u64(d + 1, (uint64_t)len + 4);
    d[n++] = '\r';
    d[n++] = '\n';
    memcpy(d + n, fmt, 3);
    n += 3;
    d[n++] = ':';
    o->len += put_payload(d, n, p, len);
}

void resp_add_raw(resp_out_t *o, const void *p, size_t len)
{
    put(o, p, len);
}
