/*
 * load_conn.h - cuckood-load's connection: one blocking socket (TCP, a
 * unix socket, or TLS over TCP through OpenSSL) with hiredis's reply
 * reader, the same code path for every transport.
 */
#ifndef LOAD_CONN_H
#define LOAD_CONN_H

#include <stddef.h>

#include <hiredis/hiredis.h>

#include "load_args.h"

struct load_conn;

/* Connects as *o says (TLS handshake included), then AUTH and SELECT
 * when asked for. NULL with err filled on failure. */
struct load_conn *load_conn_open(const struct load_opts *o, char *err,
                                 size_t errlen);
void load_conn_close(struct load_conn *c);

/* Writes all of buf: 0, or -1 with load_conn_error() set. */
int load_conn_write(struct load_conn *c, const void *buf, size_t len);

/* The next reply (the caller frees it with freeReplyObject), blocking
 * until it is complete; NULL when the connection ended or failed, with
 * load_conn_error() saying how. */
redisReply *load_conn_reply(struct load_conn *c);

/* Sends one command and returns its reply (NULL as load_conn_reply). */
redisReply *load_conn_command(struct load_conn *c, int argc, const char **argv,
                              const size_t *lens);

const char *load_conn_error(const struct load_conn *c);

#endif /* LOAD_CONN_H */
