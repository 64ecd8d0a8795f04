/*
 * daemon.h - the running daemon around the server's state: TCP and unix
 * listeners, SIGTERM/SIGINT, the cron timer, shutdown, and the run-time
 * effects of CONFIG SET.
 *
 * Contract: event loop thread only. Once the server has started
 * (server_t.started), daemon_shutdown() makes the final save and the AOF's
 * last write once, between closing the listeners and closing the clients.
 */
#ifndef DAEMON_H
#define DAEMON_H

#include <stddef.h>

#include "server_int.h"

/* The cron timer's period (INFO's hz is its rate). */
#define DAEMON_CRON_MS 100
/* The cron's time for moving keyspace resizes on, per run (Redis's
 * incrementallyRehash: 1 ms). */
#define DAEMON_REHASH_US 1000

/* Opens the listeners, signal handlers and the cron timer. 0 or a negative
 * errno; err describes the failure. */
int daemon_listen(server_t *s, char *err, size_t errlen);

/* Stops listening, makes the final save and the AOF's last write (once
 * started), closes every client and every handle; the loop then ends.
 * Idempotent. */
void daemon_shutdown(server_t *s, int exit_code);

/* Applies run-time effects of a CONFIG SET of name. */
void daemon_config_changed(server_t *s, const char *name);

/* Once every directive of one CONFIG SET (n names) is stored: applies the
 * effects that need them together and may fail (the tls-* directives
 * rebuild the TLS context, so a certificate and its key change at once).
 * 0, or -EINVAL with an error reply in err; the caller then restores the
 * old values. */
int daemon_config_commit(server_t *s, const char *const *names, int n,
                         char *err, size_t errlen);

#endif /* DAEMON_H */
