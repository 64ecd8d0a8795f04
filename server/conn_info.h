/*
 * conn_info.h - what the rest of the server reads about its connections as
 * a whole: a client's CLIENT LIST line, the memory the clients' buffers
 * hold, and the descriptor limit that maxclients needs.
 *
 * Contract: event loop thread only (conn_fit_maxclients also at start-up,
 * before the loop runs).
 */
#ifndef CONN_INFO_H
#define CONN_INFO_H

#include <stddef.h>
#include <stdint.h>

#include "server_int.h"

/* Writes the CLIENT LIST line of c (ending in '\n') into buf, returns its
 * length (truncated to len-1). */
size_t conn_describe(const client_t *c, char *buf, size_t len);

/* Bytes the clients' buffers hold: unparsed input and unread replies
 * (INFO memory's mem_clients_normal). */
uint64_t conn_clients_memory(const server_t *s);

/* Raises the descriptor limit to fit cfg->maxclients plus the server's own
 * descriptors; where the system does not allow that, lowers maxclients to
 * what fits (with a warning), as redis-server does, so clients get "max
 * number of clients reached" instead of failed accepts. At start-up and
 * after CONFIG SET maxclients. */
void conn_fit_maxclients(cfg_t *cfg);

#endif /* CONN_INFO_H */
