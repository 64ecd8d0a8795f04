/*
 * cmd_client.h - the CLIENT subcommands that act on other clients or on
 * how a client is served (KILL, PAUSE, UNPAUSE, REPLY, NO-EVICT,
 * NO-TOUCH), as Redis 7, and RESET (cmd_client_table). cmd_conn.c's CLIENT
 * table names the procs.
 *
 * Contract: event loop thread only.
 */
#ifndef CMD_CLIENT_H
#define CMD_CLIENT_H

#include "server_int.h"

cmd_proc_t cmd_client_kill;
cmd_proc_t cmd_client_pause;
cmd_proc_t cmd_client_unpause;
cmd_proc_t cmd_client_reply;
cmd_proc_t cmd_client_no_evict;
cmd_proc_t cmd_client_no_touch;

/* RESET (main() registers the table). */
extern const cmd_def_t cmd_client_table[];

#endif /* CMD_CLIENT_H */
