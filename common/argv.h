/*
 * argv.h - one owned copy of a parsed command: the argument array and every
 * argument's bytes in a single allocation. What outlives the read buffer a
 * command was parsed from (a transaction's queue, an append-only file
 * writer, a log of slow commands) keeps this form; the hot path keeps using
 * the parser's views.
 *
 * Contract: argv_copy() returns a new copy the caller owns and releases
 * with argv_free(); each argument's bytes are followed by a NUL that len
 * does not count (arguments may hold NULs themselves). A copy is immutable
 * and has no pointers outside its own allocation, so it may move between
 * threads. No I/O, nothing else of ours, no libuv.
 */
#ifndef ARGV_H
#define ARGV_H

#include <stddef.h>

#include "arg.h"

typedef struct argv {
    int argc;    /* as given to argv_copy(); 0 is allowed */
    size_t size; /* bytes of the one allocation, for memory accounting */
    arg_t v[];   /* argc views into the same allocation */
} argv_t;

/* A copy of argc arguments (argc >= 0; args may be NULL when argc is 0).
 * NULL when out of memory or when the total size would overflow size_t. */
argv_t *argv_copy(int argc, const arg_t *args);

/* The size argv_copy() would allocate for these arguments, or 0 when it
 * would overflow; lets a caller check a limit before copying. */
size_t argv_size(int argc, const arg_t *args);

void argv_free(argv_t *a); /* NULL is fine */

/* The copy argv_copy() makes, written into mem: total bytes from
 * argv_size() (non-zero), aligned for argv_t. Returns mem as the copy; it
 * is freed with mem's own memory, never with argv_free() (a transaction's
 * queue keeps its copies in an arena this way). */
argv_t *argv_place(void *mem, size_t total, int argc, const arg_t *args);

#endif /* ARGV_H */
