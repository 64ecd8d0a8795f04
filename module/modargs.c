/*
 * modargs.c - see modargs.h. The names, bounds and cross-checks are the
 * command layer's (cfcmd_opt_set()), the daemon's too; only the parsing of
 * the words is the module's.
 */
#include "modargs.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void modargs_default(cfcmd_defaults_t *d)
{
    cfcmd_defaults_init(d); /* the core's defaults, the daemon's too */
}

static int fail(char *why, size_t whylen, const arg_t *name, const char *msg)
{
    snprintf(why, whylen, "%.*s: %s", (int)(name->len < 64 ? name->len : 64),
             name->ptr, msg);
    return -EINVAL;
}

/* Parses an integer argument; false with the daemon's words in msg
 * otherwise. A negative number parses, as the range check of
 * cfcmd_opt_set() refuses it (out of range, not unparsable): it becomes
 * UINT64_MAX here, above every option's bound. */
static bool parse_integer(const arg_t *v, uint64_t *out, char *msg,
                          size_t msglen)
{
    long long neg;
    if (arg_u64(v, out))
        return true;
    if (arg_ll(v, &neg) && neg < 0) {
        *out = UINT64_MAX;
        return true;
    }
    snprintf(msg, msglen, "argument couldn't be parsed into an integer");
    return false;
}

int modargs_parse(cfcmd_defaults_t *d, int argc, const arg_t *argv, char *why,
                  size_t whylen)
{
    char msg[160];
    if (argc % 2 != 0)
        return fail(why, whylen, &argv[argc - 1], "missing value");
    for (int i = 0; i < argc; i += 2) {
        const arg_t *n = &argv[i], *v = &argv[i + 1];
        const cfcmd_opt_t *o = cfcmd_opt_find(n->ptr, n->len);
        uint64_t u = 0;
        double r = 0;
        if (o == NULL)
            return fail(why, whylen, n, "unknown module argument");
        if (o->rate) {
            if (!arg_double(v, &r))
                return fail(why, whylen, n,
                            "argument couldn't be parsed into a number");
        } else if (!parse_integer(v, &u, msg, sizeof(msg))) {
            return fail(why, whylen, n, msg);
        }
        if (cfcmd_opt_set(d, o, u, r, msg, sizeof(msg)) < 0)
            return fail(why, whylen, n, msg);
    }
    return 0;
}
