/*
 * server_int.h - the server's private state, shared by the modules of the
 * daemon itself (server.c, conn.c, cmd.c, cmd_server.c, main.c). Command
 * modules of other areas use only server.h.
 *
 * Contract: event loop thread only.
 */
#ifndef SERVER_INT_H
#define SERVER_INT_H

#include <uv.h>

#include "persist.h"
#include "server.h"

typedef struct conn conn_t;
typedef struct cmd_index cmd_index_t;
typedef struct tls tls_t;

#define SERVER_READ_SLAB (64 * 1024)
#define SERVER_REDIS_VERSION "7.2.0" /* what clients see as redis_version */

struct server {
    uv_loop_t *loop;
    cfg_t *cfg;    /* not owned */
    ks_db_t **dbs; /* cfg->databases of them */
    int ndbs;
    cmd_index_t *cmds; /* cmd.c */

    /* listeners: port, then tls-port, on every bind address */
    uv_tcp_t *tcp[2 * CFG_MAX_BIND];
    int ntcp;
    tls_t *tls; /* tls.c; NULL without a tls-port */
    uv_pipe_t *unix_listener;
    uv_signal_t sig_term, sig_int;
    uv_timer_t cron;
    bool handles_open;

    /* clients: an intrusive doubly-linked list of conn_t */
    conn_t *clients;
    uint64_t nclients;
    uint64_t next_client_id;
    char *read_slab; /* one loop-wide read buffer */

    /* stats */
    time_t start_time;
    uint64_t start_ms; /* uv_now at start */
    uint64_t dirty;
    uint64_t total_commands;
    uint64_t total_connections;
    uint64_t rejected_connections;
    uint64_t keyspace_hits, keyspace_misses;
    uint64_t net_input_bytes, net_output_bytes;
    /* uv_hrtime() at the end of the last command dispatched, reset at each
     * read batch: one clock reading per command times them all. */
    uint64_t cmd_clock;
    uint64_t peak_memory;
    uint64_t ops_sample_cmds, ops_sample_ms;
    uint64_t ops_per_sec;
    time_t lastsave;   /* for the persistence module to update */
    persist_t persist; /* persist.c */

    uint64_t seed_state;
    /* The machine's physical memory, read once at init: the bound on the
     * keyspace when maxmemory is 0. UINT64_MAX when it cannot be read. */
    uint64_t phys_memory;
    bool shutting_down;
    int exit_code;
};

/* Initialises s for cfg (databases, command index, seed). 0 or -ENOMEM. */
int server_init(server_t *s, uv_loop_t *loop, cfg_t *cfg);
/* Opens the listeners, signal handlers and the cron timer. 0 or a negative
 * errno; err describes the failure. */
int server_listen(server_t *s, char *err, size_t errlen);
/* Stops listening, closes every client and every handle; the loop then
 * ends. Calls server_on_shutdown() first. */
void server_shutdown(server_t *s, int exit_code);
/* The hook for work at shutdown (the final snapshot goes here). main()
 * has made cfg->dir the working directory, as redis-server does, so the
 * snapshot file is cfg->dbfilename relative to it. */
void server_on_shutdown(server_t *s);
/* Frees what server_init allocated (after the loop has ended). */
void server_free(server_t *s);

/* Memory in use by the keyspaces (the figure maxmemory is checked against). */
uint64_t server_used_memory(const server_t *s);
/* Milliseconds since the loop started. */
uint64_t server_now_ms(const server_t *s);
/* Applies run-time effects of a CONFIG SET of name. */
void server_config_changed(server_t *s, const char *name);
/* Once every directive of one CONFIG SET (n names) is stored: applies the
 * effects that need them together and may fail (the tls-* directives
 * rebuild the TLS context, so a certificate and its key change at once).
 * 0, or -EINVAL with an error reply in err; the caller then restores the
 * old values. */
int server_config_commit(server_t *s, char *const *names, int n, char *err,
                         size_t errlen);

#endif /* SERVER_INT_H */
