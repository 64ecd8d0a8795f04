/*
 * cmd_expire.h - the timeout commands: EXPIRE, PEXPIRE, EXPIREAT,
 * PEXPIREAT (with NX, XX, GT, LT), TTL, PTTL, EXPIRETIME, PEXPIRETIME,
 * PERSIST.
 *
 * Contract: event loop thread only; the entries are cmdtab.c's.
 */
#ifndef CMD_EXPIRE_H
#define CMD_EXPIRE_H

#include "server.h"

/* The procs of the timeout commands (cmdtab.c lists them). */
cmd_proc_t cmd_expire_expire_proc;
cmd_proc_t cmd_expire_expireat_proc;
cmd_proc_t cmd_expire_expiretime_proc;
cmd_proc_t cmd_expire_persist_proc;
cmd_proc_t cmd_expire_pexpire_proc;
cmd_proc_t cmd_expire_pexpireat_proc;
cmd_proc_t cmd_expire_pexpiretime_proc;
cmd_proc_t cmd_expire_pttl_proc;
cmd_proc_t cmd_expire_ttl_proc;

#endif /* CMD_EXPIRE_H */
