/*
 * snapshot.h - the snapshot file: every database's filters in one file,
 * written atomically (temporary file in the same directory, fsync, rename,
 * fsync of the directory) and verified by an XXH3-64 checksum trailer before
 * anything it holds is handed over.
 *
 * Format (little-endian, version 2; version 1 files still load): see
 * snapshot.c. Each filter is stored with the core's own encoding
 * (cf_header_write + data), and with its key's absolute expiry time when
 * it has one.
 *
 * Contract: no libuv; safe to call in a forked child (no locks, no loop).
 * Returns 0 or a negative errno, with a human-readable reason in err.
 */
#ifndef SNAPSHOT_H
#define SNAPSHOT_H

#include <stddef.h>
#include <stdint.h>

#include "cf.h"

/* The writer asks the caller for its keys: for every database that has keys
 * (db ascending), iter calls each(ctx, db, key, len, filter, when) for each
 * key, and returns the first non-zero value each returned, else 0. when is
 * the key's expiry time (unix milliseconds, >= 0) or -1 for none. */
typedef int snap_each_fn(void *ctx, int db, const void *key, size_t len,
                         const cf_filter_t *f, int64_t when);
typedef int snap_iter_fn(void *src, snap_each_fn *each, void *ctx);

/* Writes the snapshot to path atomically. On failure the file at path is
 * untouched and no temporary file is left. */
int snap_save(const char *path, snap_iter_fn *iter, void *src, char *err,
              size_t errlen);

/* Loads path: on_key(ctx, db, key, len, f, when) receives each filter (and
 * owns it from then on, whatever it returns) with its key's expiry time as
 * stored (-1 for none; whether it is past is the caller's to decide); a
 * non-zero return stops the load with that value. The checksum of the whole
 * file is verified before the first on_key call. -ENOENT when the file does not
 * exist (an empty start); -EINVAL for a corrupt file (err names the file and
 * the problem); -ENOMEM when a filter is larger than lim allows. */
typedef int snap_key_fn(void *ctx, int db, const void *key, size_t len,
                        cf_filter_t *f, int64_t when);
int snap_load(const char *path, const cf_limits_t *lim, snap_key_fn *on_key,
              void *ctx, char *err, size_t errlen);

/* fsyncs the directory that holds path (a rename into it is then
 * durable); a file system that cannot sync a directory is no failure. 0 or
 * a negative errno. */
int snap_fsync_dir(const char *path);

/* Removes temporary files a crashed save left beside path. Returns how many
 * were removed. A file another save may still be writing is kept: its
 * writer holds its lock (snap_save takes one), or the pid in its name is a
 * live process other than the caller (a file named by the caller's own pid
 * and not locked is a former instance's; a zombie is not live). Such a file
 * goes at a later call, once its writer is gone. */
int snap_remove_stale(const char *path);

#endif /* SNAPSHOT_H */
