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

/* Called from a listener's connection callback. */
void conn_accept(server_t *s, uv_stream_t *listener, bool is_unix);
/* The same for the TLS listener: the client speaks TLS (s->tls). */
void conn_accept_tls(server_t *s, uv_stream_t *listener);

/* Closes c now (pending writes are cancelled). Idempotent. */
void conn_close(conn_t *c);

/* The accessors command modules use (CLIENT, AUTH): they see client_t only.
 */
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
/* Whether c is local: the unix socket or a loopback address. */
bool conn_is_local(const client_t *c);
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
/* Sends the replies held for the AOF (server_t.hold_replies); the AOF
 * calls it once what they acknowledge is written. */
void conn_release_held(server_t *s);

/* Periodic checks: idle timeout, output buffer soft limit. */
void conn_cron(server_t *s);

#endif /* CONN_H */
