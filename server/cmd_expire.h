/*
 * cmd_expire.h - the timeout commands: EXPIRE, PEXPIRE, EXPIREAT,
 * PEXPIREAT (with NX, XX, GT, LT), TTL, PTTL, EXPIRETIME, PEXPIRETIME,
 * PERSIST.
 *
 * Contract: event loop thread only; main() registers the table.
 */
#ifndef CMD_EXPIRE_H
#define CMD_EXPIRE_H

#include "server.h"

extern const cmd_def_t cmd_expire_table[]; /* NULL-name terminated */

#endif /* CMD_EXPIRE_H */
