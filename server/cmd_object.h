/*
 * cmd_object.h - OBJECT's subcommands (ENCODING, FREQ, IDLETIME, REFCOUNT,
 * HELP), which cmdtab.c lists. A filter is one allocation that
 * nothing shares, so its encoding is what redis-server answers for a
 * module's value, "raw", and its reference count 1; no access time or
 * counter is kept.
 *
 * Contract: event loop thread only; called by the dispatcher with the
 * arity checked (argv[2] is the key).
 */
#ifndef CMD_OBJECT_H
#define CMD_OBJECT_H

#include "server.h"

void cmd_object_encoding(client_t *c, int argc, const arg_t *argv);
void cmd_object_refcount(client_t *c, int argc, const arg_t *argv);
void cmd_object_idletime(client_t *c, int argc, const arg_t *argv);
void cmd_object_freq(client_t *c, int argc, const arg_t *argv);
void cmd_object_help(client_t *c, int argc, const arg_t *argv);

#endif /* CMD_OBJECT_H */
