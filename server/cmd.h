/*
 * cmd.h - the dispatcher: command lookup by case-insensitive name over the
 * tables main() registers, the checks before a command runs, the prefetch
 * hook of pipelined commands, call counting, and read access to the index
 * for COMMAND (cmd_command.h). It knows no command family.
 *
 * Contract: event loop thread only. The index is built once per server.
 */
#ifndef CMD_H
#define CMD_H

#include "argv.h"
#include "server_int.h"
#include "util.h"

/* The daemon's own command flag, beside cmdarg.h's CMD_* (COMMAND INFO
 * does not show it): a command that runs at once inside MULTI instead of
 * being queued, as Redis runs QUIT and RESET (multi_runs_now()). */
#define CMD_MULTI_NOW (1u << 31)
/* Another: a command that may stand in an append-only file although it
 * writes nothing (MULTI, EXEC, SELECT: the feed writes them around the
 * logged commands); a replay takes it with the writes (aofload.c). */
#define CMD_AOF_LOGGED (1u << 30)

/* Builds s->cmds from ntables NULL-name terminated tables (the composition
 * root, main(), names them). 0; -ENOMEM; -EEXIST when two entries have
 * the same name, or -EINVAL for an entry without a proc that does not
 * require a subcommand; *dup then names it (the server must not start). */
int cmd_index_build(server_t *s, const cmd_def_t *const *tables, size_t ntables,
                    const char **dup);
void cmd_index_free(server_t *s);

/* Runs one parsed command for c, appending its reply to c->out: arity,
 * subcommand, NOAUTH, OOM (CMD_DENYOOM over maxmemory) and write denial
 * (CMD_WRITE while server_writes_denied()) are checked first. true when
 * the command ran or was refused; false, with nothing done or replied,
 * when it must wait for CLIENT PAUSE to end (s->pause_kind): the caller
 * keeps it and calls again later. */
bool cmd_dispatch(client_t *c, const resp_cmd_t *cmd);

/* A transaction's queued command, for EXEC (multi.c): cmd is the handle
 * the dispatcher queued it with (multi_queue()). The first runs it as an
 * admitted command is run (the call, its counters, the slow log), without
 * the admission checks, which it passed when queued; the second calls its
 * prefetch hook, if any. */
void cmd_run_queued(client_t *c, const void *cmd, const argv_t *a);
void cmd_prefetch_queued(client_t *c, const void *cmd, const argv_t *a);

/* Given a look at the next n commands of c's pipeline, calls the prefetch
 * hook of those that have one, pass their arity and that c may run. */
void cmd_prefetch(client_t *c, const resp_peek_t *next, size_t n);

/* Whether the command next looks at has a prefetch hook (c outside a
 * transaction): a pipeline whose next command has none is not looked at
 * further ahead. */
bool cmd_prefetches(client_t *c, const resp_peek_t *next);

/* Calls fn for every command that was called or rejected (INFO
 * commandstats). failed counts the calls that replied with an error. */
typedef void cmd_stat_fn(void *ctx, const char *name, uint64_t calls,
                         uint64_t usec, uint64_t rejected, uint64_t failed);
void cmd_stats_each(const server_t *s, cmd_stat_fn *fn, void *ctx);
void cmd_stats_reset(server_t *s);

/* The shared replies (reply.h) come with the dispatcher's header, which
 * every command module includes. */
#include "reply.h"

/* The longest command name the index looks up. */
#define CMD_NAME_MAX 64

/* The number of top-level commands, and the i-th of them (i < that
 * number) in the order of the tables (COMMAND, INFO commandstats). */
size_t cmd_count(const server_t *s);
const cmd_def_t *cmd_at(const server_t *s, size_t i);

/* ACL ids: every command and subcommand has one, 0 to cmd_id_count() - 1,
 * in table order with a command's subcommands after it. cmd_by_id() gives
 * the command of an id and its parent in *parent (NULL for a top-level
 * command; parent may be NULL), or NULL past the end; cmd_id_of() the id
 * of a command or subcommand entry of the index, or -1. */
size_t cmd_id_count(const server_t *s);
const cmd_def_t *cmd_by_id(const server_t *s, unsigned id,
                           const cmd_def_t **parent);
int cmd_id_of(const server_t *s, const cmd_def_t *d);

/* The top-level command named by the len bytes at name (any case), or
 * NULL. */
const cmd_def_t *cmd_lookup(const server_t *s, const char *name, size_t len);
/* parent's subcommand named by the len bytes at name (any case), or
 * NULL. */
const cmd_def_t *cmd_find_sub(const cmd_def_t *parent, const char *name,
                              size_t len);

/* d's ACL categories: those its entry names (d->acl) and those its flags
 * imply, as Redis's: CMD_WRITE @write, CMD_READONLY @read, CMD_ADMIN @admin
 * and @dangerous, CMD_FAST @fast, and @slow for what is not @fast. */
uint64_t cmd_acl_cats(const cmd_def_t *d);

/* Calls fn(ctx, i, flags) for each key argument i of an argc-argument call
 * of d, spec after spec (cmdarg.h's cmd_keyspec_each()), stopping at and
 * returning fn's first non-zero value, else 0. An entry without key specs
 * uses its legacy range (first_key, last_key, key_step) with flags 0. */
int cmd_keys_each(const cmd_def_t *d, int argc, cmd_key_fn *fn, void *ctx);

/* The terminator of a command table (CMD_ARG_END, of an argument-doc
 * table, is cmdarg.h's). */
/* clang-format off */
#define CMD_DEF_END {.name = NULL}
/* clang-format on */

#endif /* CMD_H */
