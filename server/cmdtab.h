/*
 * cmdtab.h - the daemon's command table: every server command's entry
 * (arity, flags, ACL categories, key specs, proc) with the documentation
 * COMMAND INFO and COMMAND DOCS report, in one file, cmdtab.c. The CF.*
 * family is commands/cfcmd_table.c's, which cfhost.c adapts.
 *
 * One NULL-name terminated array per family, so that a test, a fuzzer or a
 * benchmark can register only the families it drives; the composition
 * root, main(), registers them all in the order below, which is the order
 * COMMAND lists them in. The procs stay in their modules, whose headers
 * declare them.
 *
 * Contract: constant data; cmd_index_build() (cmd.h) reads it.
 */
#ifndef CMDTAB_H
#define CMDTAB_H

#include "server.h"

extern const cmd_def_t cmd_conn_table[];    /* PING ... SELECT, CLIENT */
extern const cmd_def_t cmd_client_table[];  /* RESET */
extern const cmd_def_t monitor_table[];     /* MONITOR */
extern const cmd_def_t cmd_keys_table[];    /* DEL ... OBJECT, WAIT */
extern const cmd_def_t cmd_expire_table[];  /* EXPIRE ... PERSIST */
extern const cmd_def_t multi_table[];       /* MULTI ... UNWATCH */
extern const cmd_def_t cmd_admin_table[];   /* COMMAND ... SHUTDOWN */
extern const cmd_def_t cmd_persist_table[]; /* SAVE, BGSAVE, LASTSAVE */
extern const cmd_def_t cmd_aof_table[];     /* BGREWRITEAOF */
extern const cmd_def_t latency_table[];     /* LATENCY */
extern const cmd_def_t slowlog_table[];     /* SLOWLOG */
extern const cmd_def_t cmd_acl_table[];     /* ACL */

/* Every family above, in the order main() registers them (the CF family,
 * made at run time by cfhost.c, goes after them): a new family is one
 * array here and one line in cmdtab.c's list. */
#define CMD_NFAMILIES 12
extern const cmd_def_t *const cmd_families[CMD_NFAMILIES];

#endif /* CMDTAB_H */
