/*
 * cmd_conn.h - the connection commands: PING, ECHO, QUIT, AUTH, HELLO, SELECT,
 * CLIENT.
 *
 * Contract: event loop thread only; the entries are cmdtab.c's.
 */
#ifndef CMD_CONN_H
#define CMD_CONN_H

#include "server.h"

/* The procs of PING, ECHO, QUIT, HELLO, AUTH, SELECT and CLIENT's GETNAME, ID,
 * INFO, LIST, SETINFO, SETNAME, HELP (cmdtab.c lists them). */
cmd_proc_t cmd_conn_auth_proc;
cmd_proc_t cmd_conn_client_getname_proc;
cmd_proc_t cmd_conn_client_help_proc;
cmd_proc_t cmd_conn_client_id_proc;
cmd_proc_t cmd_conn_client_info_proc;
cmd_proc_t cmd_conn_client_list_proc;
cmd_proc_t cmd_conn_client_setinfo_proc;
cmd_proc_t cmd_conn_client_setname_proc;
cmd_proc_t cmd_conn_echo_proc;
cmd_proc_t cmd_conn_hello_proc;
cmd_proc_t cmd_conn_ping_proc;
cmd_proc_t cmd_conn_quit_proc;
cmd_proc_t cmd_conn_select_proc;

#endif /* CMD_CONN_H */
