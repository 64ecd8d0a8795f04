/*
 * cmd_client.h - the CLIENT subcommands that act on other clients or on
 * how a client is served (KILL, PAUSE, UNPAUSE, REPLY, NO-EVICT,
 * NO-TOUCH), as Redis 7, and RESET; cmdtab.c lists them with CLIENT's
 * other subcommands.
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

/* The procs of RESET (cmdtab.c lists them). */
cmd_proc_t cmd_client_reset_proc;

#endif /* CMD_CLIENT_H */
