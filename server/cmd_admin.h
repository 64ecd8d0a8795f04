/*
 * cmd_admin.h - the server commands: INFO, TIME, CONFIG, MEMORY, SHUTDOWN.
 * The table also holds COMMAND's entry, which keeps its place in COMMAND's
 * and INFO's table order; cmd_command.h implements it.
 *
 * Contract: event loop thread only; main() registers the table.
 */
#ifndef CMD_ADMIN_H
#define CMD_ADMIN_H

#include "server.h"

extern const cmd_def_t cmd_admin_table[]; /* NULL-name terminated */

#endif /* CMD_ADMIN_H */
