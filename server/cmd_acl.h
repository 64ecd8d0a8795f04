/*
 * cmd_acl.h - the ACL command (entry in cmdtab.c): SETUSER, GETUSER, DELUSER,
 * LIST, USERS, WHOAMI, CAT, GENPASS, DRYRUN, LOG, SAVE, LOAD and HELP, with
 * Redis 7.0's replies and errors.
 *
 * Contract: event loop thread only; the ACL module (acl.h) must be
 * initialised before the first command.
 */
#ifndef CMD_ACL_H
#define CMD_ACL_H

#include "server.h"

/* The procs of ACL's subcommands (cmdtab.c lists them). */
cmd_proc_t cmd_acl_cat_proc;
cmd_proc_t cmd_acl_deluser_proc;
cmd_proc_t cmd_acl_dryrun_proc;
cmd_proc_t cmd_acl_genpass_proc;
cmd_proc_t cmd_acl_getuser_proc;
cmd_proc_t cmd_acl_help_proc;
cmd_proc_t cmd_acl_list_proc;
cmd_proc_t cmd_acl_load_proc;
cmd_proc_t cmd_acl_log_proc;
cmd_proc_t cmd_acl_save_proc;
cmd_proc_t cmd_acl_setuser_proc;
cmd_proc_t cmd_acl_users_proc;
cmd_proc_t cmd_acl_whoami_proc;

#endif /* CMD_ACL_H */
