/*
 * monitor.h - MONITOR: every command a client runs, shown to the clients
 * in monitor mode as Redis 7 shows it, one status line each:
 *
 *   +1700000000.123456 [0 127.0.0.1:12345] "SET" "k\x01" "v"
 *
 * (time, database after the command, the client's address or "unix:path",
 * the arguments quoted with Redis's escapes, secrets as "(redacted)").
 * Commands flagged admin are not shown; neither are those refused before
 * they ran. A monitor is a normal client for the output limits.
 *
 * Contract: event loop thread only.
 */
#ifndef MONITOR_H
#define MONITOR_H

#include "server_int.h"

/* Shows c's command cmd, which just ran, to every monitor (the dispatcher's
 * after-call hook calls this, through the composition root). */
void monitor_feed(client_t *c, const resp_cmd_t *cmd);
/* Takes c out of monitor mode (RESET); nothing when it is not in it. */
void monitor_leave(client_t *c);

/* The procs of MONITOR (cmdtab.c lists them). */
cmd_proc_t monitor_proc;

#endif /* MONITOR_H */
