/*
 * cmd.h - the dispatcher: command lookup by case-insensitive name over
 * cmd_server_table and cmd_cf_table, arity and authentication checks, call
 * counting, and the COMMAND command built from the tables' docs.
 *
 * Contract: event loop thread only. The index is built once per server.
 */
#ifndef CMD_H
#define CMD_H

#include "server_int.h"

/* Builds s->cmds from the command tables. 0 or -ENOMEM. */
int cmd_index_build(server_t *s);
void cmd_index_free(server_t *s);

/* The command named by name (any case), or NULL. */
const cmd_def_t *cmd_lookup(const server_t *s, const char *name, size_t len);

/* Runs one parsed command for c, appending its reply to c->out. */
void cmd_dispatch(client_t *c, const resp_cmd_t *cmd);

/* Calls fn for every command that was called or rejected (INFO
 * commandstats). failed counts the calls that replied with an error. */
typedef void cmd_stat_fn(void *ctx, const char *name, uint64_t calls,
                         uint64_t usec, uint64_t rejected, uint64_t failed);
void cmd_stats_each(const server_t *s, cmd_stat_fn *fn, void *ctx);
void cmd_stats_reset(server_t *s);

/* The subcommand of parent named by name (any case), or NULL. */
const cmd_def_t *cmd_find_sub(const cmd_def_t *parent, const char *name,
                              size_t len);

/* Replies "ERR unknown subcommand 'x'. Try PARENT HELP." */
void cmd_reply_unknown_sub(client_t *c, const char *parent,
                           const resp_arg_t *sub);

/* COMMAND [COUNT | INFO name... | LIST | DOCS name...] (cmd_server_table). */
cmd_proc_t cmd_command_proc;
cmd_proc_t cmd_command_count_proc;
cmd_proc_t cmd_command_info_proc;
cmd_proc_t cmd_command_list_proc;
cmd_proc_t cmd_command_docs_proc;

/* true when a and b (b NUL-terminated, lower case) are equal ignoring case. */
bool cmd_arg_is(const resp_arg_t *a, const char *lower);

#endif /* CMD_H */
