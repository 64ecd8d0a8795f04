/*
 * tls.h - TLS on the wire, with OpenSSL as a pure byte transformer: the
 * connection module reads and writes the socket through libuv, hands the
 * ciphertext it read to tls_conn_input() and gets plaintext back through a
 * callback; replies are encrypted by tls_conn_encrypt() into a buffer the
 * connection writes out like any other. OpenSSL never touches a descriptor.
 *
 * Contract:
 *  - Event loop thread only (the probe client of the last section runs in
 *    the `--ping` process, which has no loop).
 *  - Nothing here blocks or waits for the peer: a handshake step or a read
 *    that needs more input returns and goes on at the next tls_conn_input().
 *    Writes never wait for input (renegotiation is refused), so there is no
 *    WANT_WRITE and no retry loop anywhere.
 *  - A forked child (the snapshot writer) must not call any of this: it
 *    leaves the parent's sessions alone and _exits, so no close_notify or
 *    session state ever leaves from it.
 *  - Errors are 0 / negative errno, with a message for the operator in err
 *    that names the directive and the file involved.
 */
#ifndef TLS_H
#define TLS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "config.h"
#include "resp_out.h"
#include "util.h"

typedef struct tls tls_t;           /* the server's TLS context and counters */
typedef struct tls_conn tls_conn_t; /* one connection's session */

/* Builds the server context from cfg's tls-* directives (certificate, key,
 * CAs, protocols, ciphers, session cache, client authentication). On
 * success *out is the caller's, freed with tls_free(). -EINVAL (or
 * -ENOMEM) with the reason in err otherwise. */
int tls_new(const cfg_t *cfg, tls_t **out, char *err, size_t errlen);

/* Builds a new context from cfg for the connections accepted from now on
 * (certificate rotation); sessions already open keep theirs. On failure the
 * old context stays in use and err says why. */
int tls_reload(tls_t *t, const cfg_t *cfg, char *err, size_t errlen);

/* Frees t; sessions still open keep their context alive until freed. */
void tls_free(tls_t *t);

/* Appends the INFO lines of t (tls_connected_clients,
 * tls_connections_received, tls_handshake_failures) to b. t may be NULL (no
 * TLS listener: zeros). */
void tls_info(const tls_t *t, sbuf_t *b);

/* True when data, the first bytes a client sent, start a TLS handshake
 * record (so a plain-text port can tell a TLS client from a RESP one). */
bool tls_looks_like_hello(const void *data, size_t len);

/* ---- one connection ---- */

/* A server-side session for a freshly accepted client. addr ("ip:port") is
 * used in log lines and must outlive the session. NULL when out of memory. */
tls_conn_t *tls_conn_new(tls_t *t, const char *addr);

/* Frees tc without a shutdown alert (the connection is closing anyway). */
void tls_conn_free(tls_conn_t *tc);

/* Receives plaintext from tls_conn_input(); a negative return stops the
 * input (the connection is closing). */
typedef int tls_sink_fn(void *ctx, const char *plain, size_t len);

/* Feeds len bytes of ciphertext read from the socket: advances the
 * handshake and passes every byte of plaintext they carry to sink. Every
 * input byte is consumed before it returns. Returns 0; 1 when the peer sent
 * close_notify; the sink's negative value; or -EPROTO when the handshake
 * or the record layer failed (logged, counted). Anything the session must
 * send (handshake messages, alerts, tickets) waits in tls_conn_out(). */
int tls_conn_input(tls_conn_t *tc, const char *in, size_t len,
                   tls_sink_fn *sink, void *ctx);

/* Encrypts everything plain holds into tls_conn_out() and empties plain.
 * Before the handshake has finished nothing is taken. 0, -ENOMEM or
 * -EPROTO. */
int tls_conn_encrypt(tls_conn_t *tc, resp_out_t *plain);

/* Ciphertext waiting to be written to the socket; the caller writes and
 * consumes it as it does a plain connection's replies. */
resp_out_t *tls_conn_out(tls_conn_t *tc);

/* True once the handshake has finished (and the client's certificate, when
 * one is required, was verified). */
bool tls_conn_ready(const tls_conn_t *tc);

/* Counts and logs a handshake that did not finish in time. */
void tls_conn_timed_out(tls_conn_t *tc);

/* ---- a blocking client, for the health probe ---- */

typedef struct tls_client tls_client_t;

/* Runs a client handshake on the connected descriptor fd (made blocking,
 * with timeout_ms on every send and receive). The server's certificate is
 * checked against cfg's tls-ca-cert-file / tls-ca-cert-dir when set, and
 * cfg's tls-cert-file / tls-key-file are offered as the client certificate
 * when set (as redis-server does for its own outgoing connections). fd
 * stays the caller's. */
int tls_client_open(int fd, const cfg_t *cfg, int timeout_ms,
                    tls_client_t **out, char *err, size_t errlen);
/* Bytes sent or received (0 on close), or -1. */
ssize_t tls_client_send(tls_client_t *tc, const void *buf, size_t len);
ssize_t tls_client_recv(tls_client_t *tc, void *buf, size_t len);
void tls_client_close(tls_client_t *tc);

#endif /* TLS_H */
