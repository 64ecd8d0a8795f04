/*
 * aofload.h - replaying a file of commands in RESP (an append-only file's
 * increment, or a whole Redis-style single AOF) into the server's
 * databases, and checking such a file (cuckood --check-aof).
 *
 * Contract: event loop thread, before anything listens (start-up loading)
 * or while the server replays for itself. Returns 0 or a negative errno
 * with a human-readable reason in the report.
 */
#ifndef AOFLOAD_H
#define AOFLOAD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "server_int.h"

typedef struct aofload_report {
    uint64_t commands;   /* commands replayed */
    uint64_t good_bytes; /* the prefix made of whole commands (and whole
                            transactions) */
    uint64_t file_bytes;
    bool truncated; /* a torn tail was dropped (aofload_file) or found */
    char err[512];  /* names the file and the byte offset of a damage */
} aofload_report_t;

/* Replays the commands of the file at path. A torn last command (or a
 * transaction without its EXEC at the end of the file) is dropped with a
 * warning when last && load_truncated, and the file is truncated to the
 * whole commands before it; anything else that does not parse, or a
 * command that is refused, stops the load with -EINVAL naming the file
 * and the offset, and no file is changed. -ENOENT when it does not exist. */
int aofload_file(server_t *s, const char *path, bool last, bool load_truncated,
                 aofload_report_t *r);

/* Checks the file at path without loading it: 0 when it holds only whole
 * commands, -EINVAL otherwise with r->good_bytes the length of its longest
 * loadable prefix; with fix, truncates it to that prefix. */
int aofload_check(const char *path, bool fix, aofload_report_t *r);

/* cuckood --check-aof FILE [--fix] for one file of commands (an increment
 * or a single Redis-style AOF), as redis-check-aof words it on standard
 * output: the analysis, then valid, not valid, or truncated with --fix.
 * Returns the process's exit code: 0 when valid or fixed, 1 otherwise. */
int aofload_check_main(const char *path, bool fix);

#endif /* AOFLOAD_H */
