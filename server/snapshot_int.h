/*
 * snapshot_int.h - internals of snapshot.c shared with its tests and its
 * fuzz harness only; the server uses snapshot.h.
 */
#ifndef SNAPSHOT_INT_H
#define SNAPSHOT_INT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "snapshot.h"

#define SNAP_MAGIC "CUCKOOD" /* 8 bytes with its NUL */
#define SNAP_VERSION 2u      /* what snap_save() writes */
#define SNAP_VERSION_MIN 1u  /* the oldest snap_load() reads */
#define SNAP_MAX_DB 10000u

/* Bytes of the file head (magic, version, flags) and of the trailer. */
#define SNAP_HEAD_LEN 16u
#define SNAP_TRAILER_LEN 8u

/* Parses a whole snapshot image held in memory, exactly as snap_load() does
 * after mapping the file; name is used in error messages. When verify is
 * false the checksum in the trailer is not compared (the fuzz harness uses
 * this to reach the parser with any input). Returns as snap_load(). */
int snap_parse(const void *buf, size_t len, const char *name, bool verify,
               const cf_limits_t *lim, snap_key_fn *on_key, void *ctx,
               char *err, size_t errlen);

#endif /* SNAPSHOT_INT_H */
