/*
 * conn.h - client connections: accept, read -> parse -> dispatch, one write
 * per read batch (or per few megabytes of replies), close.
 *
 * Contract: event loop thread only. A conn_t is freed in its handle's close
 * callback, after every pending write callback has run.
 */
#ifndef CONN_H
#define CONN_H

#include <uv.h>

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
     * string, sticky as its error); NULL while the input is good. */
    const char *proto_error;
    struct tls_conn *tls; /* NULL on a plain-text connection */
    conn_t *prev, *next;  /* server's client list */
    char addr[64];        /* "ip:port" or "/path:0" */
    char laddr[64];
    int fd;
    bool is_unix;
    bool closing;
    bool reading;
    bool held;  /* commands wait in the parser until the output drains */
    bool spoke; /* has sent something */
    uint64_t created_ms;
    uint64_t last_ms;        /* last interaction, for timeout and idle= */
    uint64_t obl_soft_since; /* when the soft limit was first passed, or 0 */
    /* The command that waits for CLIENT PAUSE to end (the ones after it
     * wait in the parser), or NULL; postponed_seq orders the waiters. */
    struct argv *postponed;
    uint64_t postponed_seq;
    int writes_pending;
};

/* Called from a listener's connection callback. */
void conn_accept(server_t *s, uv_stream_t *listener, bool is_unix);
/* The same for the TLS listener: the client speaks TLS (s->tls). */
void conn_accept_tls(server_t *s, uv_stream_t *listener);

/* Closes c now (pending writes are cancelled). Idempotent. */
void conn_close(conn_t *c);

/* The accessors command modules use (CLIENT, AUTH): they see client_t only.
 *
 * Writes the CLIENT LIST line of c (ending in '\n') into buf, returns its
 * length (truncated to len-1). */
size_t conn_describe(const client_t *c, char *buf, size_t len);
/* The client after prev in the server's list (the first for NULL), or
 * NULL at the end. */
client_t *conn_next_client(const server_t *s, const client_t *prev);
/* c's peer address, "ip:port" ("path:0" on the unix socket). */
const char *conn_addr(const client_t *c);
/* Applies the limits that follow c's state (after authentication). */
void conn_client_limits(client_t *c);
/* c's local address, as conn_addr(). */
const char *conn_laddr(const client_t *c);
/* Whether c came through the unix socket. */
bool conn_is_unix(const client_t *c);
/* CLIENT KILL: closes victim now, or after this reply when victim is by,
 * the client running the command. */
void conn_kill(client_t *victim, const client_t *by);
/* Writes what c->out holds now rather than at the end of a read batch
 * (MONITOR feeds another client); the output limits apply as on every
 * write, so this may close c. Not for the client whose command runs. */
void conn_push(client_t *c);
/* CLIENT PAUSE for ms milliseconds, of writes or of all commands; with a
 * pause already on, the longer end and the stricter kind hold. */
void conn_pause(server_t *s, uint64_t ms, bool all);
/* CLIENT UNPAUSE: ends the pause; the commands that waited run, in the
 * order they came, once the running command has finished. */
void conn_unpause(server_t *s);

/* Applies the current limits (CONFIG SET) to c's parser. */
void conn_apply_limits(conn_t *c);

/* Bytes the clients' buffers hold: unparsed input and unread replies
 * (INFO memory's mem_clients_normal). */
uint64_t conn_clients_memory(const server_t *s);

/* Periodic checks: idle timeout, output buffer soft limit. */
void conn_cron(server_t *s);

/* Raises the descriptor limit to fit cfg->maxclients plus the server's own
 * descriptors; where the system does not allow that, lowers maxclients to
 * what fits (with a warning), as redis-server does, so clients get "max
 * number of clients reached" instead of failed accepts. At start-up and
 * after CONFIG SET maxclients. */
void conn_fit_maxclients(cfg_t *cfg);

#endif /* CONN_H */
