/*
 * cmd_command.h - COMMAND [COUNT | DOCS name... | INFO name... | LIST
 * [FILTERBY ...]], built from the registered tables' docs through the
 * dispatcher's index (cmd.h).
 *
 * Contract: event loop thread only. cmdtab.c's COMMAND entry, among the
 * server commands, names these, so COMMAND keeps its place in the table
 * order.
 */
#ifndef CMD_COMMAND_H
#define CMD_COMMAND_H

#include "server.h"

/* COMMAND without a subcommand: COMMAND INFO of every command. */
cmd_proc_t cmd_command_proc;

/* The procs of COMMAND's COUNT, DOCS, GETKEYS, GETKEYSANDFLAGS, INFO, LIST
 * (cmdtab.c lists them). */
cmd_proc_t cmd_command_count_proc;
cmd_proc_t cmd_command_docs_proc;
cmd_proc_t cmd_command_getkeys_proc;
cmd_proc_t cmd_command_getkeysandflags_proc;
cmd_proc_t cmd_command_info_proc;
cmd_proc_t cmd_command_list_proc;

#endif /* CMD_COMMAND_H */
