/*
 * multi.h - transactions as Redis 7 has them: MULTI, EXEC, DISCARD, WATCH
 * and UNWATCH (entries in cmdtab.c), a client's queue of commands (one argv_t
 * each), and the watched keys (database and key -> watching clients),
 * which the key-change signals of server.h invalidate.
 *
 * The dispatcher asks this module: whether a command is queued instead of
 * run, what a refusal means for a transaction, which flags EXEC stands
 * for. EXEC runs its queue through the dispatcher's own call path
 * (cmd_run_queued(), cmd_prefetch_queued()).
 *
 * Contract: event loop thread only. A client's transaction state hangs on
 * client_t.mstate (NULL until the client first uses MULTI or WATCH) and is
 * freed by multi_client_free() when the connection is freed.
 */
#ifndef MULTI_H
#define MULTI_H

#include <stdbool.h>
#include <stddef.h>

#include "argv.h"
#include "server_int.h"

/* The procs of MULTI, EXEC, DISCARD, WATCH, UNWATCH (cmdtab.c lists them). */
cmd_proc_t multi_discard_proc;
cmd_proc_t multi_exec_proc;
cmd_proc_t multi_proc;
cmd_proc_t multi_unwatch_proc;
cmd_proc_t multi_watch_proc;

/* Makes the server's watch table. 0 or -ENOMEM; multi_free() releases it
 * (idempotent, after every client is gone). */
int multi_init(server_t *s);
void multi_free(server_t *s);

/* The listeners of the key-change signals (server.h calls them): a change
 * to a watched key makes its watchers' EXEC answer nil; a flush touches the
 * watched keys that exist, a swap those that exist on either side. Each is
 * a no-op without multi_init() or while no key is watched. */
void multi_on_key_changed(server_t *s, int dbnum, const void *key, size_t len);
void multi_on_db_changing(server_t *s, int dbnum);
void multi_on_dbs_swapping(server_t *s, int a, int b);

/* Whether c is between MULTI and EXEC/DISCARD. */
bool multi_active(const client_t *c);

/* For a client in MULTI: whether top-level command d runs at once (EXEC,
 * DISCARD, MULTI, WATCH, QUIT, RESET) instead of being queued. */
bool multi_runs_now(const cmd_def_t *d);
/* Whether d is EXEC. */
bool multi_is_exec(const cmd_def_t *d);
/* The OR of the flags of the commands c has queued (EXEC counts as a write
 * or a deny-OOM command when it holds one). 0 outside MULTI. */
unsigned multi_queued_flags(const client_t *c);

/* Queues a copy of the command for c (in MULTI) and replies +QUEUED; cmd
 * is the dispatcher's handle of it and flags its flags. A transaction that
 * is already doomed keeps nothing; out of memory dooms it (EXEC then
 * aborts). */
void multi_queue(client_t *c, const void *cmd, unsigned flags, int argc,
                 const arg_t *argv);

/* The dispatcher refused a command of c, whose reply starts at byte
 * reply_at of c->out; top is the command (NULL for an unknown one). In
 * MULTI this dooms the transaction (EXECABORT at EXEC); a refused EXEC
 * turns its reply into Redis's EXECABORT and discards the transaction. */
void multi_rejected(client_t *c, const cmd_def_t *top, size_t reply_at);

/* Bytes c's queue holds, which count against client-query-buffer-limit
 * together with the unparsed input. */
size_t multi_queued_bytes(const client_t *c);
/* Commands queued, or -1 outside MULTI (CLIENT LIST multi=). */
long multi_count(const client_t *c);

/* RESET: leaves MULTI (the queue is discarded) and unwatches every key. */
void multi_reset(client_t *c);
/* Releases c's transaction state: its queue and its watches. */
void multi_client_free(client_t *c);

#endif /* MULTI_H */
