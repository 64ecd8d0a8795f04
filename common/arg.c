/*
 * arg.c - see arg.h.
 */
#include "arg.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

/* The unsigned rule on raw bytes, shared by arg_u64() and arg_ll(). */
static bool u64_of(const char *s, size_t len, uint64_t *out)
{
    uint64_t v = 0;

    /* "0" alone, or a non-zero first digit: "007" and "" are refused. */
    if (len == 0 || len > 20 || (s[0] == '0' && len > 1))
        return false;
    for (size_t i = 0; i < len; i++) {
        unsigned d = (unsigned)((unsigned char)s[i] - '0');
        if (d > 9 || v > (UINT64_MAX - d) / 10)
            return false;
        v = v * 10 + d;
    }
    *out = v;
    return true;
}

bool arg_u64(const arg_t *a, uint64_t *out)
{
    return u64_of(a->ptr, a->len, out);
}

bool arg_ll(const arg_t *a, long long *out)
{
    const char *s = a->ptr;
    size_t len = a->len;
    uint64_t v;

    if (len > 0 && s[0] == '-') {
        /* "-0" is refused, as string2ll() does. */
        if (!u64_of(s + 1, len - 1, &v) || v == 0 ||
            v > (uint64_t)INT64_MAX + 1)
            return false;
        *out = v == (uint64_t)INT64_MAX + 1 ? INT64_MIN : -(long long)v;
        return true;
    }
    if (!u64_of(s, len, &v) || v > INT64_MAX)
        return false;
    *out = (long long)v;
    return true;
}

bool arg_is(const arg_t *a, const char *lower)
{
    const char *s = a->ptr;
    size_t len = a->len;
    for (size_t i = 0; i < len; i++) {
        unsigned char ch = (unsigned char)s[i];
        if (ch >= 'A' && ch <= 'Z')
            ch = (unsigned char)(ch + ('a' - 'A'));
        if (lower[i] == '\0' || (unsigned char)lower[i] != ch)
            return false;
    }
    return lower[len] == '\0';
}

bool arg_double(const arg_t *a, double *out)
{
    const char *s = a->ptr;
    size_t len = a->len;
    char buf[64];
    char *end;

    if (len == 0 || len >= sizeof(buf) || memchr(s, '\0', len) != NULL ||
        s[0] == ' ' || s[0] == '\t' || s[0] == '\n' || s[0] == '\r' ||
        s[0] == '\v' || s[0] == '\f')
        return false;
    memcpy(buf, s, len);
    buf[len] = '\0';
    errno = 0;
    double d = strtod(buf, &end);
    if (end != buf + len || errno != 0 || !isfinite(d))
        return false;
    *out = d;
    return true;
}
