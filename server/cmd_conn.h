/*
 * cmd_conn.h - the connection commands: PING, ECHO, QUIT, AUTH, HELLO, SELECT,
 * CLIENT.
 *
 * Contract: event loop thread only; main() registers the table.
 */
#ifndef CMD_CONN_H
#define CMD_CONN_H

#include "server.h"

extern const cmd_def_t cmd_conn_table[]; /* NULL-name terminated */

#endif /* CMD_CONN_H */
