/*
 * cmd_command.h - COMMAND [COUNT | DOCS name... | INFO name... | LIST
 * [FILTERBY ...]], built from the registered tables' docs through the
 * dispatcher's index (cmd.h).
 *
 * Contract: event loop thread only. cmd_admin_table holds the entry that
 * names these, so COMMAND keeps its place in the table order.
 */
#ifndef CMD_COMMAND_H
#define CMD_COMMAND_H

#include "server.h"

/* COMMAND without a subcommand: COMMAND INFO of every command. */
cmd_proc_t cmd_command_proc;

/* COUNT, DOCS, INFO and LIST; NULL-name terminated. */
extern const cmd_def_t cmd_command_subs[];

#endif /* CMD_COMMAND_H */
