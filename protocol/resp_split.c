/*
 * resp_split.c - resp_splitargs(), the one word splitter: inline commands
 * (resp_parse.c) and configuration lines (server/config.c) both use it.
 */
#include <errno.h>
#include <stdbool.h>
#include <string.h>

#include "resp.h"

/* isspace() in the C locale, without the locale lookup. */
static bool is_space(char c)
{
    return c == ' ' || c == '\t' || c == '\n' || c == '\v' || c == '\f' ||
           c == '\r';
}

static int hexval(char c)
{
    if (c >= '0' && c <= '9')
        return c - '0';
    if (c >= 'a' && c <= 'f')
        return c - 'a' + 10;
    if (c >= 'A' && c <= 'F')
        return c - 'A' + 10;
    return -1;
}

/* The escape after a backslash inside "...". */
static char unescape(char c)
{
    switch (c) {
    case 'n':
        return '\n';
    case 'r':
        return '\r';
    case 't':
        return '\t';
    case 'b':
        return '\b';
    case 'a':
        return '\a';
    default:
        return c;
    }
}

/* One word starting at *sp (not blank): its bytes go to *wp. Advances both.
 * 0, or -EPROTO for unbalanced quotes. */
static int split_word(const char **sp, const char *end, char **wp)
{
    const char *s = *sp;
    char *w = *wp;
    bool inq = false, insq = false;

    for (;;) {
        char c = s < end ? *s : '\0';

        if (inq) {
            if (c == '\0')
                return -EPROTO;
            if (c == '\\' && end - s >= 4 && s[1] == 'x' && hexval(s[2]) >= 0 &&
                hexval(s[3]) >= 0) {
                *w++ = (char)(hexval(s[2]) * 16 + hexval(s[3]));
                s += 4;
            } else if (c == '\\' && end - s >= 2) {
                *w++ = unescape(s[1]);
                s += 2;
            } else if (c == '"') {
                /* A closing quote must be followed by a space or the end. */
                if (++s < end && !is_space(*s))
                    return -EPROTO;
                break;
            } else {
                *w++ = c;
                s++;
            }
        } else if (insq) {
            if (c == '\0')
                return -EPROTO;
            if (c == '\\' && end - s >= 2 && s[1] == '\'') {
                *w++ = '\'';
                s += 2;
            } else if (c == '\'') {
                if (++s < end && !is_space(*s))
                    return -EPROTO;
                break;
            } else {
                *w++ = c;
                s++;
            }
        } else if (c == ' ' || c == '\n' || c == '\r' || c == '\t' ||
                   c == '\0') {
            if (s < end)
                s++;
            break;
        } else if (c == '"') {
            inq = true;
            s++;
        } else if (c == '\'') {
            insq = true;
            s++;
        } else {
            *w++ = c;
            s++;
        }
    }
    *sp = s;
    *wp = w;
    return 0;
}

int resp_splitargs(const char *s, size_t len, char *out, resp_word_fn *fn,
                   void *ctx)
{
    const char *end = s + len;
    const char *z = memchr(s, '\0', len);
    char *w = out;
    int rc;

    if (z != NULL)
        end = z;
    for (;;) {
        while (s < end && is_space(*s))
            s++;
        if (s == end)
            return 0;
        char *word = w;
        if ((rc = split_word(&s, end, &w)) < 0)
            return rc;
        *w = '\0';
        if ((rc = fn(ctx, word, (size_t)(w - word))) < 0)
            return rc;
        w++;
    }
}
