/*
 * aof.h - the append-only file, Redis 7's multi-part way: under
 * appenddirname a base (a snapshot, snapshot.h), increments of commands in
 * RESP and a manifest (aofman.h) that names them. This module is the sink
 * of the server's propagation feed (server_t.on_propagate), writes and
 * fsyncs the increment by appendfsync, loads the files at start-up, and
 * runs BGREWRITEAOF and the automatic rewrite through persist.c's child.
 *
 * Files: every manifest and base is written atomically (temporary file,
 * fsync, rename, fsync of the directory). A rewrite opens a new increment
 * at the fork and lists it at once; only the child's success replaces the
 * base in the manifest, so a crash or a killed child at any moment leaves
 * the old base and every increment listed.
 *
 * Contract: event loop thread only, except the fsync thread aof.c owns.
 * The directory is relative to the working directory (main() has made
 * cfg->dir current).
 */
#ifndef AOF_H
#define AOF_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "server_int.h"
#include "util.h"

/* How one increment file is replayed: aofload.h's aofload_file(), wired
 * by main(); r->err names the file and the offset of a damage. */
typedef struct aofload_report aofload_report_t;
typedef int aof_replay_fn(server_t *s, const char *path, bool last,
                          bool load_truncated, aofload_report_t *r);

/* Allocates the state (s->aof), off. 0 or -ENOMEM. */
int aof_init(server_t *s, aof_replay_fn *replay);
/* Frees it once the loop has ended. NULL-safe, idempotent. */
void aof_free(server_t *s);

/* Start-up, before anything listens, instead of persist_load() when
 * appendonly is yes (the snapshot is then ignored, as in Redis 7): loads
 * the base and the increments the manifest names. No directory or no
 * manifest is an empty start. Returns 0, or a negative errno after logging
 * why, naming the file (and offset): the server must not start, and no
 * file has changed. */
int aof_load(server_t *s);

/* Start-up with appendonly no, as Redis 7 does: reads the manifest when
 * there is one, so that switching the AOF on later continues its
 * numbering and retires its files. A damaged manifest stops start-up as
 * in aof_load(). */
int aof_load_manifest(server_t *s);

/* Once loaded: with appendonly yes creates the directory, a base of the
 * current data when the manifest has neither base nor increment, opens
 * the last increment (or a new one), writes the manifest, and feeds
 * s->on_propagate. Starts the handles (the write before the loop sleeps,
 * the cron) either way. 0 or a negative errno (logged): the server must
 * not start. */
int aof_start(server_t *s);

/* The propagation sink (server_t.on_propagate). */
void aof_feed(server_t *s, int dbnum, int argc, const arg_t *argv);

/* Writes what the buffer holds (and fsyncs by appendfsync); force writes
 * even while a background fsync is slow. */
void aof_flush(server_t *s, bool force);

/* The server's hold_replies hook: with commands not yet written, true
 * (the replies wait for the write, and with appendfsync always its fsync,
 * before the loop sleeps); with urgent the write (and fsync) happen now
 * and it answers false. */
bool aof_hold_replies(server_t *s, bool urgent);

/* CONFIG SET's part (daemon_config_commit() calls it for each directive
 * set; only appendonly matters here): appendonly yes starts a
 * rewrite that writes a base of the current data, the feed being kept in a
 * new increment meanwhile; appendonly no stops the AOF. */
int aof_config_set(server_t *s, const char *name, char *err, size_t errlen);

/* Shutdown: the last write and fsync, the handles closed; a running
 * rewrite child is killed by persist's shutdown. */
void aof_on_shutdown(server_t *s);

/* INFO persistence's aof_* fields. */
void aof_info(const server_t *s, sbuf_t *b);

/* The procs of BGREWRITEAOF (cmdtab.c lists them). */
cmd_proc_t aof_bgrewriteaof_proc;

#endif /* AOF_H */
