/*
 * cmd_acl.h - the ACL command (cmd_acl_table): SETUSER, GETUSER, DELUSER,
 * LIST, USERS, WHOAMI, CAT, GENPASS, DRYRUN, LOG, SAVE, LOAD and HELP, with
 * Redis 7.0's replies and errors.
 *
 * Contract: event loop thread only; the ACL module (acl.h) must be
 * initialised before the first command.
 */
#ifndef CMD_ACL_H
#define CMD_ACL_H

#include "server.h"

extern const cmd_def_t cmd_acl_table[];

#endif /* CMD_ACL_H */
