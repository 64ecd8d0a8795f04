/*
 * cmd_debug.h - DEBUG, with the subcommands that show and steer the
 * keyspace's resizing: HTSTATS <dbid> (Redis's text: each bucket array's
 * size, keys and chain lengths, table 1 while a resize is under way) and
 * DICT-RESIZING <0|1> (0 stops resizes from starting and the one under way
 * from moving on, for every database; 1 lets them go). As in Redis 7,
 * DEBUG answers only when enable-debug-command allows it (no, the default;
 * yes; local: the unix socket and loopback clients).
 *
 * Contract: event loop thread only; called by the dispatcher with the
 * arity checked (argv[1] is the subcommand).
 */
#ifndef CMD_DEBUG_H
#define CMD_DEBUG_H

#include "server.h"

void cmd_debug_proc(client_t *c, int argc, const arg_t *argv);

#endif /* CMD_DEBUG_H */
