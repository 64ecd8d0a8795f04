/*
 * cmdarg.c - see cmdarg.h.
 */
#include "cmdarg.h"

#include <string.h>
#include <strings.h>

const char *const acl_cat_names[ACL_NCATS] = {
    "keyspace",  "read",     "write",     "set",        "sortedset",
    "list",      "hash",     "string",    "bitmap",     "hyperloglog",
    "geo",       "stream",   "pubsub",    "admin",      "fast",
    "slow",      "blocking", "dangerous", "connection", "transaction",
    "scripting", "cuckoo",
};

uint64_t cmd_acl_implied(unsigned flags, uint64_t acl)
{
    uint64_t c = acl;
    if (flags & CMD_WRITE)
        c |= ACL_CAT_WRITE;
    if ((flags & CMD_READONLY) && !(c & ACL_CAT_SCRIPTING))
        c |= ACL_CAT_READ;
    if (flags & CMD_ADMIN)
        c |= ACL_CAT_ADMIN | ACL_CAT_DANGEROUS;
    if (flags & CMD_FAST)
        c |= ACL_CAT_FAST;
    if (!(c & ACL_CAT_FAST))
        c |= ACL_CAT_SLOW;
    return c;
}

uint64_t cmd_acl_cat_find(const char *name, size_t len)
{
    for (int i = 0; i < ACL_NCATS; i++)
        if (strlen(acl_cat_names[i]) == len &&
            strncasecmp(acl_cat_names[i], name, len) == 0)
            return (uint64_t)1 << i;
    return 0;
}

int cmd_keyspec_each(const cmd_keyspec_t *spec, int argc, cmd_key_fn *fn,
                     void *ctx)
{
    int first = spec->begin;
    if (first < 1 || first >= argc)
        return 0;
    int last;
    if (spec->last >= 0)
        last = first + spec->last;
    else if (spec->limit > 1)
        last = first + (argc - first) / spec->limit + spec->last;
    else
        last = argc + spec->last;
    int step = spec->step > 0 ? spec->step : 1;
    for (int i = first; i <= last && i < argc; i += step) {
        int rc = fn(ctx, i, spec->flags);
        if (rc != 0)
            return rc;
    }
    return 0;
}
