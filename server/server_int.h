/*
 * server_int.h - the server's private state, shared by the modules of the
 * daemon itself (server.c, daemon.c, conn.c, cmd.c, the cmd_*.c families,
 * persist.c, main.c). A command family that needs no more uses server.h.
 *
 * Contract: event loop thread only.
 */
#ifndef SERVER_INT_H
#define SERVER_INT_H

#include <uv.h>

#include "server.h"

typedef struct conn conn_t;
typedef struct cmd_index cmd_index_t;
typedef struct tls tls_t;
struct persist;
struct aof;

#define SERVER_READ_SLAB (64 * 1024)
#define SERVER_PAUSE_WRITE 1
#define SERVER_PAUSE_ALL 2
/* The contexts of the ACL check (acl.h's acl_allows), as Redis's ACL LOG names
 * them: a command run at once, one queued in a transaction, one that EXEC
 * runs. */
#define CMD_ACL_TOP 0
#define CMD_ACL_MULTI 1
#define CMD_ACL_EXEC 2
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
    tls_t *tls; /* tls.c; NULL without a tls-port; server_free() frees it */
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
    char run_id[41]; /* 40 hex characters, new at each start */
    time_t start_time;
    uint64_t start_ms; /* uv_now at start */
    uint64_t dirty;
    uint64_t total_commands;
    uint64_t total_connections;
    uint64_t rejected_connections;
    uint64_t keyspace_hits, keyspace_misses;
    uint64_t net_input_bytes, net_output_bytes;
    uint64_t cobl_disconnections; /* closed for their output limits */
    /* expire.c's: its counters (INFO stats), the database its next cycle
     * starts with, and the timer of its slices (initialised and closed by
     * the daemon with the cron) */
    uint64_t expired_keys, expired_time_cap_reached, expire_cycle_us;
    double expired_stale_perc;
    int expire_db;
    uv_timer_t expire_timer;
    /* conn.c's: restarts, after the loop's poll, the reads of the clients
     * that filled a whole read slab (initialised and closed by the daemon
     * with the cron); read_yields counts those clients. */
    uv_check_t read_resume;
    uint64_t read_yields;
    /* the sweep of filters with a window (expire_windows_cron()): where
     * its walk of the keys is */
    uint64_t window_cursor;
    int window_db;
    /* the wall clock less cmdclock_now(), in ns, as the cron last saw
     * it: a command's wall time without a system call (0: not yet) */
    int64_t wall_minus_cmdclock;
    /* uv_hrtime() at the end of the last command dispatched, reset at each
     * read batch: one clock reading per command times them all. */
    uint64_t cmd_clock;
    uint64_t peak_memory;
    uint64_t ops_sample_cmds, ops_sample_ms;
    uint64_t ops_per_sec;
    time_t lastsave; /* for the persistence module to update */
    /* The subsystems' own state. Those above the server in the module graph
     * have their own free functions, which the composition root's teardown
     * calls before server_free(). */
    struct persist *persist;     /* persist_init() makes it, persist_free() */
    struct aof *aof;             /* aof_init() makes it, aof_free() */
    struct latency *latency;     /* latency.c's, allocated on first use; plain
                                    memory that server_free() frees */
    struct slowlog *slowlog;     /* slowlog.c's; slowlog_free() */
    struct multi *multi;         /* multi.c's watched keys; multi_free() */
    struct acl *acl;             /* acl.c's users; acl_free() */
    struct acl_log *acl_log;     /* acl_log.c's denials; acl_log_free() */
    const char *deny_writes_msg; /* server_deny_writes() */
    /* The append-only file's write denial (-MISCONF while it cannot be
     * written), apart from the snapshot's: server_deny_writes_aof(). */
    const char *deny_writes_aof;
    /* Group commit (appendfsync always): a connection about to send
     * replies asks hold_replies first; true means they wait until the
     * AOF has written and fsynced what they acknowledge, once for all the
     * connections of the loop iteration, and the AOF then sends every
     * held reply (conn_release_held()). With urgent (a connection's
     * replies pile up) the AOF syncs at once and answers false. Set by the
     * AOF while it is on, else NULL: the connections sit below the AOF and
     * ask it only through this pointer. */
    bool (*hold_replies)(server_t *s, bool urgent);
    uint64_t nheld; /* connections whose replies wait */
    /* The start-up ended well (main() sets it once the AOF and the save
     * points have started): from then on daemon_shutdown() makes the final
     * save and the AOF's last write. */
    bool started;
    /* The append-only file's feed: called once for each command to log,
     * in the order the changes were made, with its final form (what
     * replays into the same data) and the database it ran in; MULTI and
     * EXEC come through it around a transaction's commands. Set by main()
     * while the AOF is on, else NULL (propagate.h feeds it). */
    void (*on_propagate)(server_t *s, int dbnum, int argc, const arg_t *argv);
    /* Whether a new connection must authenticate: the default user has
     * passwords or is off (acl.c keeps it; without it requirepass). */
    bool auth_required;
    struct propagate *prop; /* propagate.c's; propagate_free() */
    /* A file of commands is being replayed (aofload.h): as Redis while
     * loading, nothing expires, a time already past is kept as given, and
     * the replaying client is never refused for maxmemory, write denial or
     * a pause. */
    bool loading;
    /* The start-up load, while the clients are served (loadprog.h). */
    struct server_load {
        bool active;          /* listening and loading: LOADING replies */
        int64_t start_time;   /* unix seconds */
        uint64_t total_bytes; /* of every file to load */
        uint64_t done_bytes;  /* of the files already loaded */
        uint64_t loaded_bytes;
        uint64_t served_at; /* loaded_bytes when the clients were served */
        uint64_t served_ns; /* uv_hrtime() then */
        uint64_t steps;
    } load;
    uint64_t nmonitors; /* clients with c->monitor set */
    /* CLIENT PAUSE: while server_now_ms() < pause_end_ms, commands of the
     * kind paused wait (SERVER_PAUSE_WRITE: those that may write;
     * SERVER_PAUSE_ALL: every one); conn_pause()/conn_unpause() set it. */
    int pause_kind;
    uint64_t pause_end_ms;
    bool pause_over;       /* unpaused: the waiting commands are to run */
    uint64_t postpone_seq; /* orders the clients that wait */
    uint64_t seed_state;
    /* The machine's physical memory or this process's cgroup memory limit,
     * whichever is lower (sysmem_limit()), read once at init: the bound on
     * the keyspace when maxmemory is 0. UINT64_MAX when neither is known. */
    uint64_t phys_memory;
    bool shutting_down;
    int exit_code;
};

/* Initialises s for cfg (databases, seed). The command index is built
 * separately (cmd_index_build) from the tables main() registers. 0 or
 * -ENOMEM. */
int server_init(server_t *s, uv_loop_t *loop, cfg_t *cfg);
/* Frees what server_init allocated, the TLS context and the latency
 * monitor's state, after the loop has ended; last of the teardown, after
 * cmd_index_free(), persist_free() and slowlog_free(). Idempotent. */
void server_free(server_t *s);

/* Memory in use by the keyspaces (the figure maxmemory is checked against). */
uint64_t server_used_memory(const server_t *s);
/* Milliseconds since the loop started. */
uint64_t server_now_ms(const server_t *s);
/* Samples instantaneous_ops_per_sec and the memory peak (from the cron). */
void server_stats_sample(server_t *s);
/* The cron's share of the keyspace resizes (activerehashing): moves
 * buckets of the databases' resizes under way, 100 at a time, until
 * budget_us microseconds have passed or none is left. true when it did
 * some work. */
bool server_rehash_cron(server_t *s, uint64_t budget_us);
/* Deletes key from db: 1 when it was there, else 0. Its filter is freed
 * off the loop when lazy (and big enough to be worth it: lazyfree.h). */
int server_del_key(ks_db_t *db, const void *key, size_t len, bool lazy);
/* Empties database dbnum (all of them for -1), freeing the filters off
 * the loop when lazy; returns the number of keys removed. */
uint64_t server_flush(server_t *s, int dbnum, bool lazy);
/* CONFIG RESETSTAT: zeroes the server's counters and the ops sample
 * together (the per-command counters are cmd_stats_reset()'s). */
void server_stats_reset(server_t *s);

#endif /* SERVER_INT_H */
