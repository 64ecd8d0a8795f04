/*
 * conn_int.h - a connection's state (conn_t), private to the connection
 * module (conn.c, conn_info.c) and the daemon's client loops; the rest of
 * the server uses conn.h and conn_info.h.
 *
 * Contract: event loop thread only.
 */
#ifndef CONN_INT_H
#define CONN_INT_H

#include <stddef.h>
#include <stdint.h>
#include <uv.h>

#include "resp.h"
#include "server_int.h"

struct conn {
    client_t cl; /* first: a client_t * is a conn_t * */
    union {
        uv_handle_t handle;
        uv_stream_t stream;
        uv_tcp_t tcp;
        uv_pipe_t pipe;
    } h;
    resp_parser_t *parser;
    /* Why the parser refused the input, in its wording (the parser's
     * string, sticky as its error) and as its reason; NULL and
     * RESP_PERR_NONE while the input is good. */
    const char *proto_error;
    resp_perr_t proto_code;
    struct tls_conn *tls; /* NULL on a plain-text connection */
    conn_t *prev, *next;  /* server's client list */
    char addr[64];        /* "ip:port" or "/path:0" */
    char laddr[64];
    int fd;
    bool is_unix;
    bool closing;
    bool reading;
    bool held; /* commands wait in the parser until the output drains */
    /* not read again until the loop has polled the other clients */
    bool read_yield;
    bool spoke; /* has sent something */
    uint64_t created_ms;
    uint64_t last_ms;        /* last interaction, for timeout and idle= */
    uint64_t obl_soft_since; /* when the soft limit was first passed, or 0 */
    /* The command that waits for CLIENT PAUSE to end (the ones after it
     * wait in the parser), or NULL; postponed_seq orders the waiters. */
    struct argv *postponed;
    uint64_t postponed_seq;
    int writes_pending;
    bool await_log; /* replies held for the AOF's fsync (group commit) */
};

/* The connection that embeds client cl (first member of conn_t). */
static inline conn_t *conn_of(const client_t *cl)
{
    return (conn_t *)((char *)cl - offsetof(conn_t, cl));
}

/* Reply bytes the kernel has not taken yet (the output buffer). */
static inline size_t conn_out_queued(const conn_t *c)
{
    return uv_stream_get_write_queue_size(&c->h.stream);
}

#endif /* CONN_INT_H */
