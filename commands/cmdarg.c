/*
 * cmdarg.c - see cmdarg.h.
 */
#include "cmdarg.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

bool cmdarg_u64(const char *s, size_t len, uint64_t *out)
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

bool cmdarg_ll(const char *s, size_t len, long long *out)
{
    uint64_t v;

    if (len > 0 && s[0] == '-') {
        /* "-0" is refused, as string2ll() does. */
        if (!cmdarg_u64(s + 1, len - 1, &v) || v == 0 ||
            v > (uint64_t)INT64_MAX + 1)
            return false;
        *out = v == (uint64_t)INT64_MAX + 1 ? INT64_MIN : -(long long)v;
        return true;
    }
    if (!cmdarg_u64(s, len, &v) || v > INT64_MAX)
        return false;
    *out = (long long)v;
    return true;
}

bool cmdarg_is(const char *s, size_t len, const char *lower)
{
    for (size_t i = 0; i < len; i++) {
        unsigned char ch = (unsigned char)s[i];
        if (ch >= 'A' && ch <= 'Z')
            ch = (unsigned char)(ch + ('a' - 'A'));
        if (lower[i] == '\0' || (unsigned char)lower[i] != ch)
            return false;
    }
    return lower[len] == '\0';
}

bool cmdarg_double(const char *s, size_t len, double *out)
{
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
