/*
 * fuzz_acl.c - libFuzzer harness for the ACL rule parser: the input's
 * lines are ACL SETUSER rules (with selectors spread over words) applied to
 * one user, all or nothing. A user that took them is described (ACL LIST),
 * and the description of a user without selectors must set back into the
 * same description; every command is then checked against the user with a
 * key from the input.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "acl_fixture.h"

#define MAX_RULES 64

/* Splits text at sep into at most max words (empty ones included). */
static int split(const char *p, size_t len, char sep, arg_t *out, int max)
{
    int n = 0;
    const char *end = p + len;
    while (n < max) {
        const char *e = memchr(p, sep, (size_t)(end - p));
        if (e == NULL)
            e = end;
        out[n++] = (arg_t){.ptr = p, .len = (size_t)(e - p)};
        if (e == end)
            break;
        p = e + 1;
    }
    return n;
}

static void round_trip(server_t *s, const acl_user_t *u)
{
    char *d = acl_describe(s, u);
    if (d == NULL)
        return;
    arg_t words[1024];
    int n = split(d, strlen(d), ' ', words, 1024);
    char err[512];
    acl_user_t *old = acl_find(s, "copy", 4);
    if (old != NULL)
        acl_deluser(s, old);
    if (acl_setuser(s, "copy", 4, n, words, err, sizeof(err)) != 0)
        abort(); /* our own description must parse */
    char *d2 = acl_describe(s, acl_find(s, "copy", 4));
    if (d2 != NULL && strcmp(d, d2) != 0)
        abort(); /* and mean the same */
    free(d2);
    free(d);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    server_t *s = acl_fixture();
    arg_t rules[MAX_RULES];
    int n = split((const char *)data, size, '\n', rules, MAX_RULES);
    char err[512];
    acl_user_t *u = acl_find(s, "fuzz", 4);
    if (u != NULL)
        acl_deluser(s, u);
    if (acl_setuser(s, "fuzz", 4, n, rules, err, sizeof(err)) != 0)
        return 0;
    u = acl_find(s, "fuzz", 4);
    if (u == NULL)
        abort();
    char *d = acl_describe(s, u);
    bool plain = d != NULL && strchr(d, '(') == NULL;
    free(d);
    if (plain)
        round_trip(s, u);
    arg_t argv[4];
    for (int i = 0; i < 4; i++)
        argv[i] = rules[i % n];
    size_t ids = cmd_id_count(s);
    for (unsigned id = 0; id < ids; id++) {
        const cmd_def_t *parent = NULL;
        const cmd_def_t *c = cmd_by_id(s, id, &parent);
        int pos = 0;
        (void)acl_check(s, u, id, c, 4, argv, &pos);
        if (pos < 0 || pos >= 4)
            abort();
    }
    return 0;
}
