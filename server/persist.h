/*
 * persist.h - persistence of the keyspace: loading the snapshot at start-up,
 * save points, SAVE / BGSAVE / LASTSAVE, the final save at shutdown and the
 * stop-writes-on-bgsave-error rule, as Redis does them for RDB files.
 *
 * A background save forks: the child writes the copy-on-write image of the
 * keyspace with snap_save() and _exits; the parent keeps serving and reaps
 * the child from a SIGCHLD handler and its cron timer.
 *
 * Contract: event loop thread only. The snapshot file is cfg->dbfilename
 * relative to the working directory (main() has made cfg->dir current).
 */
#ifndef PERSIST_H
#define PERSIST_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>
#include <time.h>
#include <uv.h>

#include "server_int.h"
#include "snapshot.h"
#include "util.h"

/* persist.c's state: persist_init() hangs it on the server (s->persist),
 * persist_free() releases it. Declared here for the unit tests. */
enum { PERSIST_CHILD_SNAPSHOT = 1, PERSIST_CHILD_AOF = 2 };

typedef struct persist {
    pid_t child;    /* background save in progress, or 0 */
    int child_kind; /* PERSIST_CHILD_*: whose it is */
    /* Called when an AOF rewrite child ends (ok: it exited 0, its file is
     * whole) or could not start; set by the AOF module. */
    void (*on_aof_done)(server_t *s, bool ok);
    char *child_path; /* the path the child writes */
    int child_errfd;  /* read end of the child's error pipe, or -1 */
    uint64_t dirty_at_fork;
    time_t child_start; /* wall clock at fork */
    uint64_t child_start_ms;
    bool bgsave_scheduled;   /* BGSAVE SCHEDULE waiting for the child */
    bool last_bgsave_err;    /* the last background save failed */
    bool bgsave_ran;         /* last_bgsave_sec is set */
    int64_t last_bgsave_sec; /* duration of the last one */
    time_t last_bgsave_try;
    uint64_t saves;       /* successful saves since start */
    bool shutdown_done;   /* the final save (or its skipping) happened */
    bool shutdown_failed; /* ... and failed: exit non-zero */
    uv_timer_t timer;
    uv_signal_t sigchld;
    bool handles_open;
} persist_t;

/* Allocates the persistence state, the state before anything happened.
 * Every other function here needs it. 0 or -ENOMEM. */
int persist_init(server_t *s);

/* Frees the state persist_init() allocated, once the loop has ended (the
 * handles persist_start() opened are closed by then). NULL-safe and
 * idempotent. */
void persist_free(server_t *s);

/* Loads the snapshot into the server's (empty) databases, before anything
 * listens: removes stale temporary files, then reads and verifies the file.
 * A missing file is an empty start. Returns 0, or a negative errno after
 * logging why (a corrupt file, a database index the configuration does not
 * have, an unreadable file): the server must not start then, and the file
 * is left as it was. */
int persist_load(server_t *s);

/* Starts the save point timer and the SIGCHLD handler. Returns 0, or a
 * negative errno (logged) with neither handle active: those it closed
 * finish closing on the loop's next run, which must come before
 * persist_free(). */
int persist_start(server_t *s);

/* The save a shutdown needs: with nosave nothing; with save, or when save
 * points are configured, a foreground save (after killing a background
 * one). 0 when the server may exit, a negative errno when the save failed
 * (logged) and force is false. With force a failed save only makes the exit
 * code non-zero. Done once: later calls return 0. */
int persist_shutdown_save(server_t *s, bool nosave, bool save, bool force);

/* The shutdown's part (daemon_shutdown() calls it): the final
 * save unless a SHUTDOWN already did it (a failure sets s->exit_code to 1),
 * then closes the handles. */
void persist_on_shutdown(server_t *s);

/* FLUSHALL's part (cmd_keys.c calls it), as Redis's: kills a running
 * background save (its image holds the flushed data), then, when save
 * points are configured, saves the now empty dataset in the foreground. A
 * failed save is logged; the command still succeeds, as in Redis. */
void persist_on_flushall(server_t *s);

/* Loads the snapshot file at path as persist_load() does, without the
 * sweep of temporary files: -ENOENT (nothing logged) when it is missing. */
int persist_load_path(server_t *s, const char *path);

/* The keyspace as snap_save() walks it (src is the server_t). */
int persist_keyspace_iter(void *src, snap_each_fn *each, void *ctx);

/* Starts a forked child writing a snapshot of the keyspace at path (the
 * AOF's new base), with the background save's machinery; p->on_aof_done
 * reports its end. 0, -EBUSY while any child runs, or a negative errno
 * (logged). */
int persist_fork_aof(server_t *s, const char *path);

/* PERSIST_CHILD_* of the running child, 0 when none. */
int persist_child_kind(const server_t *s);

/* Kills the running child, if any, and waits for it. */
void persist_kill_child(server_t *s);

/* Appends the fields of INFO persistence to b. */
void persist_info(const server_t *s, sbuf_t *b);

/* The procs of SAVE, BGSAVE, LASTSAVE (cmdtab.c lists them). */
cmd_proc_t persist_bgsave_proc;
cmd_proc_t persist_lastsave_proc;
cmd_proc_t persist_save_proc;

#endif /* PERSIST_H */
