/*
 * propagate.h - what a write means for the append-only file's feed
 * (server_int.h's on_propagate), as Redis's call() / alsoPropagate() /
 * propagatePendingCommands() decide it.
 *
 * The dispatcher brackets every command it runs with propagate_call_begin()
 * and propagate_call_end(); a write command that changed data (s->dirty
 * moved) is fed as it was sent unless it said otherwise during its run:
 *  - propagate_rewrite_arg() / propagate_replace(): feed another form of
 *    it (a relative EXPIRE as PEXPIREAT, a RESTORE's ttl as ABSTTL, ...);
 *  - propagate_also(): feed another command first (the header of a filter
 *    the command created, a key deleted by expiry on the way);
 *  - propagate_none(): feed nothing of it (what it means went through
 *    propagate_also());
 *  - propagate_force(): feed it even though nothing changed (FLUSHDB of an
 *    empty database, as Redis 7.0).
 * What one top-level command produced (EXEC: the commands of its
 * transaction) is fed when it ends: alone when it is one command, else
 * wrapped in MULTI ... EXEC, as Redis 7.0 does. Outside a command (active
 * expiry) each command is fed at once.
 *
 * Every function is a no-op costing one test while s->on_propagate is
 * NULL (the AOF is off, or a file is being replayed).
 *
 * Contract: event loop thread only. The views given are copied; nothing
 * here keeps a pointer into the caller's arguments past the call, except
 * the command's own argv between begin and end. propagate_free() releases
 * the state (idempotent), before server_free().
 */
#ifndef PROPAGATE_H
#define PROPAGATE_H

#include <stdbool.h>
#include <stddef.h>

#include "argv.h"
#include "server_int.h"

/* The dispatcher's bracket of one command (nested calls are EXEC's). */
typedef struct prop_frame {
    int mode;
    int dbnum;
    int argc;
    const arg_t *argv;
    argv_t *own;
} prop_frame_t;

static inline bool propagate_on(const server_t *s)
{
    return s->on_propagate != NULL;
}

/* Starts c's command (argc/argv, valid until the end); *saved keeps the
 * state of an enclosing call. */
void propagate_call_begin(client_t *c, int argc, const arg_t *argv,
                          prop_frame_t *saved);
/* Ends it: changed tells whether it changed data, exec that it is EXEC
 * (which is never fed itself: its commands are). */
void propagate_call_end(client_t *c, bool changed, bool exec,
                        const prop_frame_t *saved);

/* For a running command: argument i (0 is the name; i == argc appends one)
 * of what is fed becomes v. */
void propagate_rewrite_arg(server_t *s, int i, const arg_t *v);
/* For a running command: it is fed as argc/argv instead. */
void propagate_replace(server_t *s, int argc, const arg_t *argv);
void propagate_none(server_t *s);
void propagate_force(server_t *s);
/* Feeds argc/argv for database dbnum: before the running command's own
 * form, or at once outside a command. */
void propagate_also(server_t *s, int dbnum, int argc, const arg_t *argv);
/* A key deleted by expiry (lazy or active): DEL key. */
void propagate_deletion(server_t *s, int dbnum, const void *key, size_t len);

void propagate_free(server_t *s);

#endif /* PROPAGATE_H */
