/*
 * cmd_keys.h - the keyspace commands: DEL, UNLINK, EXISTS, TYPE, KEYS, SCAN,
 * RENAME, DBSIZE, FLUSHDB, FLUSHALL, COPY, RENAMENX, MOVE, SWAPDB, DUMP,
 * RESTORE, TOUCH, RANDOMKEY, WAIT.
 *
 * Contract: event loop thread only; the entries are cmdtab.c's.
 */
#ifndef CMD_KEYS_H
#define CMD_KEYS_H

#include "server.h"

/* The procs of the keyspace commands (cmdtab.c lists them). */
cmd_proc_t cmd_keys_copy_proc;
cmd_proc_t cmd_keys_dbsize_proc;
cmd_proc_t cmd_keys_del_proc;
cmd_proc_t cmd_keys_unlink_proc;
cmd_proc_t cmd_keys_dump_proc;
cmd_proc_t cmd_keys_exists_proc;
cmd_proc_t cmd_keys_flushall_proc;
cmd_proc_t cmd_keys_flushdb_proc;
cmd_proc_t cmd_keys_keys_proc;
cmd_proc_t cmd_keys_move_proc;
cmd_proc_t cmd_keys_randomkey_proc;
cmd_proc_t cmd_keys_rename_proc;
cmd_proc_t cmd_keys_renamenx_proc;
cmd_proc_t cmd_keys_restore_proc;
cmd_proc_t cmd_keys_scan_proc;
cmd_proc_t cmd_keys_swapdb_proc;
cmd_proc_t cmd_keys_type_proc;
cmd_proc_t cmd_keys_wait_proc;

#endif /* CMD_KEYS_H */
