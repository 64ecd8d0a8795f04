/*
 * dump.h - the DUMP/RESTORE payload of a filter, and a filter's deep copy
 * (COPY). A payload is the filter's own encoding (cf.h: header, then data)
 * behind a one-byte tag, followed, as Redis follows its RDB payload, by a
 * two-byte little-endian format version and an eight-byte little-endian
 * XXH64 of everything before it. Redis's payloads (RDB version + CRC64)
 * fail the check, as ours fail Redis's.
 *
 * Contract: pure functions over the caller's bytes; the filters they make
 * are the caller's (cf_free()). No I/O, no libuv, any thread.
 */
#ifndef DUMP_H
#define DUMP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "cf.h"

#define DUMP_VERSION 1
#define DUMP_TAG 0xCF
/* Tag, version and checksum: the bytes a payload has beyond the filter. */
#define DUMP_OVERHEAD (1 + 2 + 8)

/* The payload of f in a new buffer *out of *len bytes, which the caller
 * frees with free(). 0, or -ENOMEM (also when the size overflows). */
int dump_encode(const cf_filter_t *f, uint8_t **out, size_t *len);

/* Whether p (len bytes) carries our version and a checksum that matches. */
bool dump_verify(const void *p, size_t len);

/* Parses an untrusted payload into a new filter *out. 0; -EPROTO when the
 * version or the checksum is wrong (dump_verify()); -EINVAL when they are
 * right but the contents are not a filter; -ENOMEM when the filter's tables
 * would pass lim or allocation fails. Nothing is allocated on failure. */
int dump_decode(const void *p, size_t len, const cf_limits_t *lim,
                cf_filter_t **out);

/* A filter equal to src (parameters, seed, counters, tables) that shares
 * nothing with it, in *out. 0, or -ENOMEM when its tables would pass lim
 * or allocation fails. */
int dump_clone(const cf_filter_t *src, const cf_limits_t *lim,
               cf_filter_t **out);

#endif /* DUMP_H */
