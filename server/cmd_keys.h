/*
 * cmd_keys.h - the keyspace commands: DEL, UNLINK, EXISTS, TYPE, KEYS, SCAN,
 * RENAME, DBSIZE, FLUSHDB, FLUSHALL.
 *
 * Contract: event loop thread only; main() registers the table.
 */
#ifndef CMD_KEYS_H
#define CMD_KEYS_H

#include "server.h"

extern const cmd_def_t cmd_keys_table[]; /* NULL-name terminated */

#endif /* CMD_KEYS_H */
