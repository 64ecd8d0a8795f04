/*
 * cmdarg.h - the vocabulary every command host shares beyond the argument
 * view (arg.h): command flags and the argument documentation that COMMAND
 * DOCS reports.
 *
 * Contract: pure functions over the caller's bytes; no allocation, no I/O,
 * nothing from the hosts (server/, module/) or libuv.
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

/* The terminator of an argument-doc table. */
/* clang-format off */
#define CMD_ARG_END {NULL, NULL, NULL, 0, NULL}
/* clang-format on */

#endif /* CMDARG_H */
