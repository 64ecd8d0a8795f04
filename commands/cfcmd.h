/*
 * cfcmd.h - the CF.* command family (RedisBloom's CF.RESERVE ... CF.LOADCHUNK),
 * written once against a small host interface. The daemon (server/) and the
 * Redis/Valkey module (module/) are its hosts: each supplies the keyspace,
 * a reply sink, change notification and the memory left to grow into, and
 * registers cfcmd_table in its own command table.
 *
 * Argument parsing, bounds, error wording, RESP2/RESP3 reply shapes and the
 * COMMAND DOCS text of the family live here and nowhere else.
 *
 * Contract: one call at a time per host context; nothing here keeps state
 * between calls. Includes filter/ and nothing of the hosts or libuv.
 */
#ifndef CFCMD_H
#define CFCMD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "cf.h"
#include "cfcmd_host.h"
#include "cfcmd_opt.h"
#include "cmdarg.h"

/* The thirteen commands, NULL-name terminated. */
extern const cfcmd_def_t cfcmd_table[];

/* Group name for COMMAND DOCS / redis-cli `help @cf`. */
#define CFCMD_GROUP "cf"

/* The form a write to a filter with a window is logged and replicated in
 * (cfcmd_host_t.log_timed): fills head with CF.INSERT[NX] key AT at ITEMS
 * (at written into ms, which must outlive head) and returns how many
 * arguments that is; the command's items follow them. */
#define CFCMD_TIMED_HEAD 5
#define CFCMD_MS_LEN 24
size_t cfcmd_timed_form(bool nx, const arg_t *key, uint64_t at,
                        char ms[CFCMD_MS_LEN], arg_t head[CFCMD_TIMED_HEAD]);

#endif /* CFCMD_H */
