/*
 * cmdarg.h - the vocabulary every command host shares: an argument as a
 * byte view, the one string-to-integer parser (Redis's string2ll rules),
 * case-insensitive keyword matching, command flags and the argument
 * documentation that COMMAND DOCS reports.
 *
 * Contract: pure functions over the caller's bytes; no allocation, no I/O,
 * nothing from the hosts (server/, module/) or libuv.
 */
#ifndef CMDARG_H
#define CMDARG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* One argument of a command: len bytes at ptr, binary-safe. */
typedef struct cmdarg {
    const char *ptr;
    size_t len;
} cmdarg_t;

/* Parses the whole of s[0..len) as a signed 64-bit decimal with Redis's
 * string2ll() rules: an optional '-' then digits, no leading zeros (except
 * "0" itself), no '+', no spaces, no overflow. true and *out on success. */
bool cmdarg_ll(const char *s, size_t len, long long *out);

/* The same rules for an unsigned value (no '-'): 0 .. UINT64_MAX. */
bool cmdarg_u64(const char *s, size_t len, uint64_t *out);

/* Parses the whole of s[0..len) as a finite decimal number (strtod's
 * syntax, no leading white space, no embedded NUL). true and *out on
 * success. */
bool cmdarg_double(const char *s, size_t len, double *out);

/* true when the len bytes at s equal lower (NUL-terminated, lower case)
 * ignoring ASCII case. */
bool cmdarg_is(const char *s, size_t len, const char *lower);

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
};

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

#endif /* CMDARG_H */
