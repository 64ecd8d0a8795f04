/*
 * glob.c - Redis's stringmatchlen() semantics without its recursion.
 *
 * Every pattern token other than '*' consumes exactly one character of the
 * string, so a mismatch after a '*' only ever needs to retry from the most
 * recent '*' with one more character swallowed: earlier stars can never do
 * better than the latest one. That gives O(plen * slen) at worst.
 */
#include "glob.h"

#include <ctype.h>

static unsigned char fold(unsigned char c, bool nocase)
{
    return nocase ? (unsigned char)tolower(c) : c;
}

/* Matches the class starting at pat[*pp] == '[' against c and moves *pp past
 * the class. As in Redis: a leading '^' negates, "a-z" is a range (either
 * order), '\' escapes, and a class with no ']' runs to the end of the
 * pattern. */
static bool class_match(const unsigned char *pat, size_t plen, size_t *pp,
                        unsigned char c, bool nocase)
{
    size_t p = *pp + 1;
    bool neg = false, match = false;

    c = fold(c, nocase);
    if (p < plen && pat[p] == '^') {
        neg = true;
        p++;
    }
    while (p < plen) {
        if (pat[p] == '\\' && plen - p >= 2) {
            p++;
            if (fold(pat[p], nocase) == c)
                match = true;
        } else if (pat[p] == ']') {
            break;
        } else if (plen - p >= 3 && pat[p + 1] == '-') {
            unsigned char lo = fold(pat[p], nocase);
            unsigned char hi = fold(pat[p + 2], nocase);
            if (lo > hi) {
                unsigned char t = lo;
                lo = hi;
                hi = t;
            }
            if (c >= lo && c <= hi)
                match = true;
            p += 2;
        } else if (fold(pat[p], nocase) == c) {
            match = true;
        }
        p++;
    }
    *pp = p < plen ? p + 1 : plen;
    return neg ? !match : match;
}

/* Matches the single token at pat[*pp] (not '*') against c; moves *pp past
 * it. */
static bool token_match(const unsigned char *pat, size_t plen, size_t *pp,
                        unsigned char c, bool nocase)
{
    size_t p = *pp;

    switch (pat[p]) {
    case '?':
        *pp = p + 1;
        return true;
    case '[':
        return class_match(pat, plen, pp, c, nocase);
    case '\\':
        if (plen - p >= 2)
            p++;
        break;
    default:
        break;
    }
    *pp = p + 1;
    return fold(pat[p], nocase) == fold(c, nocase);
}

bool glob_match(const char *pattern, size_t plen, const char *string,
                size_t slen, bool nocase)
{
    const unsigned char *pat = (const unsigned char *)pattern;
    const unsigned char *str = (const unsigned char *)string;
    size_t p = 0, s = 0;
    size_t star_p = 0, star_s = 0;
    bool have_star = false;

    while (s < slen) {
        if (p < plen && pat[p] == '*') {
            while (p < plen && pat[p] == '*')
                p++;
            if (p == plen)
                return true;
            have_star = true;
            star_p = p;
            star_s = s;
            continue;
        }
        if (p < plen) {
            size_t next = p;
            if (token_match(pat, plen, &next, str[s], nocase)) {
                p = next;
                s++;
                continue;
            }
        }
        if (!have_star)
            return false;
        /* Let the last '*' swallow one more character and retry. */
        p = star_p;
        s = ++star_s;
    }
    while (p < plen && pat[p] == '*')
        p++;
    return p == plen;
}
