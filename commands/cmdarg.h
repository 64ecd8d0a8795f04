/*
 * cmdarg.h - the vocabulary every command host shares beyond the argument
 * view (arg.h): command flags and the argument documentation that COMMAND
 * DOCS reports.
 *
 * Contract: pure functions over the caller's bytes; no allocation, no I/O,
 * nothing from the hosts (server/, module/) or libuv. Implemented in
 * cmdarg.c.
 */
#ifndef CMDARG_H
#define CMDARG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "arg.h"

/* Command flags, with Redis's meanings (COMMAND INFO spells them). */
enum {
    CMD_WRITE = 1 << 0, /* changes data: counted as a change, refused on
                           MISCONF */
    CMD_READONLY = 1 << 1,
    CMD_DENYOOM = 1 << 2, /* may allocate: refused over maxmemory */
    CMD_FAST = 1 << 3,
    CMD_NOAUTH = 1 << 4, /* allowed before AUTH */
    CMD_ADMIN = 1 << 5,
    CMD_LOADING = 1 << 6,
    CMD_STALE = 1 << 7,
    CMD_NOSCRIPT = 1 << 8, /* refused inside a script */
    /* Shown by COMMAND INFO as Redis 7.0 flags the same commands: */
    CMD_SKIP_SLOWLOG = 1 << 9,      /* not logged itself (EXEC) */
    CMD_NO_ASYNC_LOADING = 1 << 10, /* refused during an async load */
    CMD_NO_MULTI = 1 << 11,         /* refused inside MULTI */
    CMD_ALLOW_BUSY = 1 << 12,       /* allowed while a script is busy */
};

/* ACL categories, Redis 7's (ACL CAT lists them in this order), and
 * @cuckoo, which holds every CF command as current Redis files RedisBloom's.
 * A command's categories are those its table entry names plus those its
 * flags imply (cmd_acl_cats() in the daemon, as Redis's implicit ones). */
enum {
    ACL_CAT_KEYSPACE = 1 << 0,
    ACL_CAT_READ = 1 << 1,
    ACL_CAT_WRITE = 1 << 2,
    ACL_CAT_SET = 1 << 3,
    ACL_CAT_SORTEDSET = 1 << 4,
    ACL_CAT_LIST = 1 << 5,
    ACL_CAT_HASH = 1 << 6,
    ACL_CAT_STRING = 1 << 7,
    ACL_CAT_BITMAP = 1 << 8,
    ACL_CAT_HYPERLOGLOG = 1 << 9,
    ACL_CAT_GEO = 1 << 10,
    ACL_CAT_STREAM = 1 << 11,
    ACL_CAT_PUBSUB = 1 << 12,
    ACL_CAT_ADMIN = 1 << 13,
    ACL_CAT_FAST = 1 << 14,
    ACL_CAT_SLOW = 1 << 15,
    ACL_CAT_BLOCKING = 1 << 16,
    ACL_CAT_DANGEROUS = 1 << 17,
    ACL_CAT_CONNECTION = 1 << 18,
    ACL_CAT_TRANSACTION = 1 << 19,
    ACL_CAT_SCRIPTING = 1 << 20,
    ACL_CAT_CUCKOO = 1 << 21,
};
#define ACL_NCATS 22
/* The names, without '@', indexed by bit number: "keyspace" ... "cuckoo". */
extern const char *const acl_cat_names[ACL_NCATS];

/* The categories of a command whose entry names acl and whose flags are
 * flags, as Redis's setImplicitACLCategories() completes them: CMD_WRITE
 * adds @write, CMD_READONLY @read (unless @scripting), CMD_ADMIN @admin and
 * @dangerous, CMD_FAST @fast, and what is not @fast is @slow. Both hosts
 * file a command the same way through it. */
uint64_t cmd_acl_implied(unsigned flags, uint64_t acl);

/* The ACL_CAT_* bit of the category named by the len bytes at name (any
 * case, without '@'), or 0 for none. */
uint64_t cmd_acl_cat_find(const char *name, size_t len);

/* Key specs, as Redis 7's (COMMAND INFO reports them; ACL key patterns
 * check each key with its spec's access flags). */
enum {
    KS_RO = 1 << 0, /* read-only: the value is read, not changed */
    KS_RW = 1 << 1, /* read-write */
    KS_OW = 1 << 2, /* overwrite: written without being read */
    KS_RM = 1 << 3, /* deleted */
    KS_ACCESS = 1 << 4,
    KS_UPDATE = 1 << 5,
    KS_INSERT = 1 << 6,
    KS_DELETE = 1 << 7,
    KS_NOT_KEY = 1 << 8,
    KS_INCOMPLETE = 1 << 9,
    KS_VARIABLE_FLAGS = 1 << 10,
};
/* One key spec of Redis's "index" + "range" kind, the only one our
 * commands need: keys from argv[begin] to argv[last] (last < 0 counts from
 * the end: -1 the last argument) every step arguments. A table entry holds
 * at most CMD_MAX_KEYSPECS; begin 0 ends the list. */
typedef struct cmd_keyspec {
    unsigned flags; /* KS_* */
    int begin;      /* begin_search index, >= 1 */
    int last;       /* find_keys range lastkey, relative to begin as in
                       Redis: 0 the key at begin only, -1 up to the last
                       argument */
    int step;       /* keystep, >= 1 */
    int limit;      /* range limit: 0 none, n: 1/n of the remaining args */
} cmd_keyspec_t;
#define CMD_MAX_KEYSPECS 2

/* A cmd_keyspec_t initializer: flags, begin, last, step (limit 0). */
#define CMD_KS(fl, b, l, s)                                                    \
    {                                                                          \
        .flags = (fl), .begin = (b), .last = (l), .step = (s)                  \
    }

/* Calls fn(ctx, i, flags) for each argument index i of an argc-argument
 * command that spec names a key, in order; stops at and returns fn's first
 * non-zero value, else 0. Indexes past argc are never passed. */
typedef int cmd_key_fn(void *ctx, int i, unsigned flags);
int cmd_keyspec_each(const cmd_keyspec_t *spec, int argc, cmd_key_fn *fn,
                     void *ctx);

/* Argument documentation for COMMAND DOCS, as Redis 7 reports it. */
enum {
    CMD_ARG_OPTIONAL = 1 << 0,
    CMD_ARG_MULTIPLE = 1 << 1,
    CMD_ARG_MULTIPLE_TOKEN = 1 << 2,
};
typedef struct cmd_arg {
    const char *name;
    const char *type;  /* "key" "string" "integer" "double" "pattern"
                          "pure-token" "oneof" "block" */
    const char *token; /* or NULL */
    unsigned flags;
    const struct cmd_arg *sub; /* for oneof/block: NULL-name terminated */
} cmd_arg_t;

/* The terminator of an argument-doc table. */
/* clang-format off */
#define CMD_ARG_END {NULL, NULL, NULL, 0, NULL}
/* clang-format on */

/* An argument-doc table written where it is used, in a table entry
 * (.args = CMD_ARGS({"key", "key", NULL, 0, NULL})) or as the sub of a
 * oneof or block argument: the arguments given, then the terminator. At
 * file scope the array has static storage, as a named one would. */
#define CMD_ARGS(...) ((const cmd_arg_t[]){__VA_ARGS__, CMD_ARG_END})

#endif /* CMDARG_H */
