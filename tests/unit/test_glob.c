/*
 * test_glob.c - glob_match(): Redis's pattern semantics, binary safety, and
 * linear behaviour on patterns that make a recursive matcher explode.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <ctype.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "glob.h"

static bool m(const char *pat, const char *str)
{
    return glob_match(pat, strlen(pat), str, strlen(str), false);
}

static bool mi(const char *pat, const char *str)
{
    return glob_match(pat, strlen(pat), str, strlen(str), true);
}

typedef struct gcase {
    const char *pat, *str;
    bool nocase, want;
} gcase_t;

static const gcase_t cases[] = {
    /* literals and the empty cases */
    {"", "", false, true},
    {"", "a", false, false},
    {"a", "", false, false},
    {"abc", "abc", false, true},
    {"abc", "abd", false, false},
    {"abc", "ab", false, false},
    {"ab", "abc", false, false},
    /* '*' */
    {"*", "", false, true},
    {"*", "anything", false, true},
    {"**", "x", false, true},
    {"a*", "a", false, true},
    {"a*", "abc", false, true},
    {"a*", "ba", false, false},
    {"*c", "abc", false, true},
    {"*c", "abd", false, false},
    {"a*c", "ac", false, true},
    {"a*c", "abbbc", false, true},
    {"a*c", "abbbcd", false, false},
    {"a*b*c", "aXbYc", false, true},
    {"a*b*c", "aXcYb", false, false},
    {"*a*", "bab", false, true},
    {"h*llo", "hllo", false, true},
    {"h*llo", "heeeello", false, true},
    {"*ab*ab", "abxabab", false, true},
    {"*aab", "aaab", false, true},
    /* '?' */
    {"?", "a", false, true},
    {"?", "", false, false},
    {"?", "ab", false, false},
    {"h?llo", "hello", false, true},
    {"h?llo", "hllo", false, false},
    {"*?", "", false, false},
    {"*?", "a", false, true},
    /* classes */
    {"h[ae]llo", "hello", false, true},
    {"h[ae]llo", "hallo", false, true},
    {"h[ae]llo", "hillo", false, false},
    {"h[^e]llo", "hallo", false, true},
    {"h[^e]llo", "hello", false, false},
    {"h[a-b]llo", "hbllo", false, true},
    {"h[a-b]llo", "hcllo", false, false},
    {"[z-a]", "m", false, true}, /* reversed range */
    {"[0-9]*", "7up", false, true},
    {"[0-9]*", "up", false, false},
    {"[]", "a", false, false}, /* empty class matches nothing */
    {"[^]", "a", false, true},
    {"[", "a", false, false}, /* open class at the end */
    {"[^", "a", false, true},
    {"[ab", "b", false, true}, /* unterminated: runs to the end */
    {"[ab", "c", false, false},
    {"[a-", "-", false, true},
    {"[\\]]", "]", false, true},
    {"[\\^a]", "^", false, true},
    {"[a\\-z]", "-", false, true},
    {"[a\\-z]", "m", false, false},
    {"[-a]", "-", false, true},
    /* escapes */
    {"\\*", "*", false, true},
    {"\\*", "a", false, false},
    {"\\?", "?", false, true},
    {"\\?", "x", false, false},
    {"\\[a]", "[a]", false, true},
    {"a\\", "a\\", false, true}, /* trailing backslash is literal */
    {"\\a", "a", false, true},
    /* case */
    {"HELLO", "hello", false, false},
    {"HELLO", "hello", true, true},
    {"h[A-Z]llo", "hello", true, true},
    {"h[A-Z]llo", "hello", false, false},
    {"H[^E]LLO", "hello", true, false},
    {"cf-*", "CF-BUCKET-SIZE", true, true},
};

static void test_table(void **state)
{
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        const gcase_t *t = &cases[i];
        bool got = t->nocase ? mi(t->pat, t->str) : m(t->pat, t->str);
        if (got != t->want)
            fail_msg("glob '%s' vs '%s' (nocase %d): got %d", t->pat, t->str,
                     t->nocase, got);
    }
}

static void test_binary_safe(void **state)
{
    const char pat[] = {'a', '\0', '*', 'z'};
    const char yes[] = {'a', '\0', 'x', '\0', 'z'};
    const char no[] = {'a', 'x', 'z'};
    const char pat2[] = {'?', '\0'};
    const char str2[] = {'\0', '\0'};

    assert_true(glob_match(pat, sizeof(pat), yes, sizeof(yes), false));
    assert_false(glob_match(pat, sizeof(pat), no, sizeof(no), false));
    assert_true(glob_match(pat2, sizeof(pat2), str2, sizeof(str2), false));
    /* Bytes above 127 compare as bytes, also in ranges. */
    assert_true(m("\xe9*", "\xe9t\xe9"));
    assert_true(m("[\x80-\xff]", "\xc3"));
    assert_false(m("[\x80-\xff]", "c"));
    /* Only plen bytes of the pattern are read. */
    assert_true(glob_match("ab*", 2, "ab", 2, false));
    assert_true(glob_match("[abc]", 3, "b", 1, false));
    assert_false(glob_match("[abc]", 3, "c", 1, false));
}

static void test_pathological(void **state)
{
    size_t n = 100000;
    char *s = malloc(n + 1);
    char pat[256];

    assert_non_null(s);
    memset(s, 'a', n);
    s[n] = '\0';
    /* A recursive matcher needs time exponential in the number of stars
     * here; this one finishes in O(plen * slen). The test's timeout is the
     * only limit: there is no timed assertion. */
    assert_false(m("a*a*a*a*a*a*a*a*b", s));
    strcpy(pat, "");
    for (int i = 0; i < 40; i++)
        strcat(pat, "*a");
    strcat(pat, "*b");
    assert_false(m(pat, s));
    assert_false(mi(pat, s));
    pat[strlen(pat) - 1] = 'a';
    assert_true(m(pat, s));
    s[n - 1] = 'b';
    assert_true(m("a*a*a*a*a*a*a*a*b", s));
    assert_false(m("*[^a]*[^a]", s));
    assert_true(m("*?[^a]", s));
    free(s);
}

/* A deliberately naive reference: Redis's recursive algorithm, written
 * again, used to cross-check the linear matcher on small random inputs. */
static bool ref_match(const char *p, size_t pl, const char *s, size_t sl)
{
    if (pl == 0)
        return sl == 0;
    if (p[0] == '*') {
        for (size_t k = 0; k <= sl; k++)
            if (ref_match(p + 1, pl - 1, s + k, sl - k))
                return true;
        return false;
    }
    if (sl == 0)
        return false;
    if (p[0] == '?')
        return ref_match(p + 1, pl - 1, s + 1, sl - 1);
    if (p[0] == '[') {
        size_t i = 1;
        bool neg = false, hit = false;
        if (i < pl && p[i] == '^') {
            neg = true;
            i++;
        }
        for (;;) {
            if (i >= pl)
                break;
            if (p[i] == '\\' && pl - i >= 2) {
                i++;
                hit |= p[i] == s[0];
            } else if (p[i] == ']') {
                break;
            } else if (pl - i >= 3 && p[i + 1] == '-') {
                unsigned char a = (unsigned char)p[i];
                unsigned char b = (unsigned char)p[i + 2];
                unsigned char c = (unsigned char)s[0];
                if (a > b) {
                    unsigned char t = a;
                    a = b;
                    b = t;
                }
                hit |= c >= a && c <= b;
                i += 2;
            } else {
                hit |= p[i] == s[0];
            }
            i++;
        }
        if (neg)
            hit = !hit;
        if (!hit)
            return false;
        i = i < pl ? i + 1 : pl;
        return ref_match(p + i, pl - i, s + 1, sl - 1);
    }
    if (p[0] == '\\' && pl >= 2) {
        if (p[1] != s[0])
            return false;
        return ref_match(p + 2, pl - 2, s + 1, sl - 1);
    }
    if (p[0] != s[0])
        return false;
    return ref_match(p + 1, pl - 1, s + 1, sl - 1);
}

static void test_against_reference(void **state)
{
    static const char palpha[] = "ab*?[]^-\\";
    static const char salpha[] = "ab-]^*";
    char p[9], s[9];
    unsigned seed = 12345;

    for (int iter = 0; iter < 200000; iter++) {
        size_t pl, sl;
        seed = seed * 1103515245u + 12345u;
        pl = (seed >> 16) % 9;
        for (size_t i = 0; i < pl; i++) {
            seed = seed * 1103515245u + 12345u;
            p[i] = palpha[(seed >> 16) % (sizeof(palpha) - 1)];
        }
        seed = seed * 1103515245u + 12345u;
        sl = (seed >> 16) % 9;
        for (size_t i = 0; i < sl; i++) {
            seed = seed * 1103515245u + 12345u;
            s[i] = salpha[(seed >> 16) % (sizeof(salpha) - 1)];
        }
        bool want = ref_match(p, pl, s, sl);
        bool got = glob_match(p, pl, s, sl, false);
        if (got != want)
            fail_msg("pattern '%.*s' string '%.*s': got %d want %d", (int)pl, p,
                     (int)sl, s, got, want);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_table),
        cmocka_unit_test(test_binary_safe),
        cmocka_unit_test(test_pathological),
        cmocka_unit_test(test_against_reference),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
