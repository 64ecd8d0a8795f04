/*
 * util.c - see util.h.
 */
#include "util.h"

#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

void set_err(char *err, size_t errlen, const char *fmt, ...)
{
    va_list ap;

    if (err == NULL || errlen == 0)
        return;
    va_start(ap, fmt);
    vsnprintf(err, errlen, fmt, ap);
    va_end(ap);
}

void sb_printf(sbuf_t *b, const char *fmt, ...)
{
    if (b->failed)
        return;
    for (;;) {
        va_list ap;
        va_start(ap, fmt);
        int n = vsnprintf(b->p != NULL ? b->p + b->len : NULL, b->cap - b->len,
                          fmt, ap);
        va_end(ap);
        if (n < 0) {
            b->failed = true;
            return;
        }
        if ((size_t)n < b->cap - b->len) {
            b->len += (size_t)n;
            return;
        }
        size_t ncap = b->cap * 2 + (size_t)n + 256;
        char *np = realloc(b->p, ncap);
        if (np == NULL) {
            b->failed = true;
            return;
        }
        b->p = np;
        b->cap = ncap;
    }
}

void human_bytes(char *buf, size_t len, uint64_t n)
{
    static const char units[] = "BKMGTP";
    double d = (double)n;
    int u = 0;
    while (d >= 1024 && u < 5) {
        d /= 1024;
        u++;
    }
    if (u == 0)
        snprintf(buf, len, "%" PRIu64 "B", n);
    else
        snprintf(buf, len, "%.2f%c", d, units[u]);
}
