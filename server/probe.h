/*
 * probe.h - the health probe (`cuckood [config] --ping [address]`): a tiny
 * RESP client that sends AUTH (when the configuration has requirepass) and
 * PING, and exits 0 only on PONG; and the address file a running server
 * leaves in its working directory so the probe finds it.
 *
 * Contract: no event loop; blocking I/O with bounded waits.
 */
#ifndef PROBE_H
#define PROBE_H

#include <stddef.h>

#include "config.h"

/* cuckood [config] [--directive value...] --ping [host:port |
 * tls://host:port | /socket] (over TLS with the configuration's tls-*
 * certificates when it is "tls://", or when only a tls-port is open),
 * with --ping at argv[at]: an explicit address wins; otherwise the one a
 * server running in the configuration's dir left in its address file, else
 * the configuration's own. Returns the process's exit code. */
int probe_main(int argc, char **argv, int at);

/* Writes the address of configuration c into the address file of the
 * working directory and into target (len bytes); target is "" when it
 * could not be written (logged). */
void probe_file_write(const cfg_t *c, char *target, size_t len);

/* Removes the address file if it still names target. */
void probe_file_remove(const char *target);

#endif /* PROBE_H */
