/*
 * cmdarg.c - see cmdarg.h.
 */
#include "cmdarg.h"

const char *const acl_cat_names[ACL_NCATS] = {
    "keyspace",  "read",     "write",     "set",        "sortedset",
    "list",      "hash",     "string",    "bitmap",     "hyperloglog",
    "geo",       "stream",   "pubsub",    "admin",      "fast",
    "slow",      "blocking", "dangerous", "connection", "transaction",
    "scripting", "cuckoo",
};

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
