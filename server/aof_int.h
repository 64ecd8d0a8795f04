/*
 * aof_int.h - the append-only file's state, shared by aof.c (files, feed,
 * writes, fsync thread) and aof_run.c (the loop's handles, BGREWRITEAOF, the
 * automatic rewrite, switching on at run time, INFO). The server uses aof.h.
 *
 * Contract: event loop thread, except the fields under mu.
 */
#ifndef AOF_INT_H
#define AOF_INT_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <time.h>
#include <uv.h>

#include "aof.h"
#include "aofman.h"

enum { AOF_OFF, AOF_ON, AOF_WAIT_REWRITE };

#define AOF_FSYNC_QUEUE 16
#define AOF_PATH_MAX 4096

typedef struct aof_job {
    int fd;
    bool close; /* close it once synced (an increment that was replaced) */
} aof_job_t;

struct aof {
    int state; /* AOF_* */
    aof_replay_fn *replay;
    aofman_t man; /* what the manifest on disk says (or will, in
                     AOF_WAIT_REWRITE) */
    int fd;       /* the last increment, O_APPEND; -1 when off */
    char *buf;    /* commands not yet written */
    size_t len, cap;
    int sel_db;         /* the database the file is in, -1 for none yet */
    uint64_t incr_size; /* bytes in the current increment */
    uint64_t cur_size;  /* base and increments */
    uint64_t base_size; /* cur_size after the last rewrite or the start */
    uint64_t last_fsync_ms;
    bool fsync_due;           /* written since the last fsync was queued */
    uint64_t postponed_since; /* a write waits for a slow fsync, or 0 */
    uint64_t delayed_fsync;
    /* write errors */
    bool write_err;
    int write_errno;
    int fsync_err; /* a failed fsync's errno the loop refuses for, or 0 */
    time_t last_err_log;
    char deny_msg[160];
    /* rewrites */
    bool rewriting; /* our child runs */
    bool rewrite_scheduled;
    bool rewrite_ran, last_rewrite_err;
    int64_t last_rewrite_sec;
    uint64_t rewrites, rewrite_failures;
    uint64_t rewrite_start_ms;
    int64_t fork_incr_seq; /* the increment opened at the fork */
    /* the fsync thread */
    pthread_t th;
    pthread_mutex_t mu;
    pthread_cond_t cv;
    bool th_on, th_stop;
    aof_job_t q[AOF_FSYNC_QUEUE];
    int qhead, qlen; /* under mu; qlen counts the running job too */
    int fsync_errno; /* under mu: the last fsync's error, 0 when it worked */
    /* handles */
    uv_prepare_t prep;
    uv_timer_t cron;
    bool handles_open;
};

/* dir/name in out (AOF_PATH_MAX); false when it does not fit. */
bool aof_path(const server_t *s, const char *name, char *out);

/* Creates appenddirname when missing. 0 or a negative errno (logged). */
int aof_make_dir(server_t *s);

/* Writes the manifest m atomically. 0 or a negative errno (logged). */
int aof_write_manifest(server_t *s, const aofman_t *m);

/* Opens the increment name, new (truncated) or to append to. The fd, or
 * a negative errno (logged). */
int aof_open_incr(server_t *s, const char *name, bool fresh);

/* Queues an fsync (and a close) of fd on the fsync thread; done inline
 * when the queue is full. */
void aof_queue_fsync(struct aof *a, int fd, bool close_after);

/* Jobs queued or running on the fsync thread. */
int aof_pending_fsync(struct aof *a);

/* Starts the fsync thread if it is not running. 0 or a negative errno. */
int aof_thread_start(struct aof *a);

/* The sum of the sizes of the base and the increments of the manifest. */
uint64_t aof_files_size(const server_t *s);

/* With appendonly yes, at start: the directory, a base when the
 * manifest names no file, the last increment opened, the manifest
 * written, the feed set. 0 or a negative errno (logged). */
int aof_open_files(server_t *s);

/* Starts a rewrite (BGREWRITEAOF, the cron, CONFIG SET appendonly yes).
 * 0, -EBUSY while another child runs, or a negative errno (logged). */
int aof_rewrite_start(server_t *s);

/* Switches the AOF off: the last write and fsync, the file closed. */
void aof_stop(server_t *s);

/* The rewrite cron: a scheduled or automatic rewrite, if due. */
void aof_rewrite_cron(server_t *s);

/* persist.c's on_aof_done. */
void aof_rewrite_done(server_t *s, bool ok);

#endif /* AOF_INT_H */
