/*
 * aof_check.h - cuckood --check-aof on a manifest: every file it names is
 * checked as redis-check-aof does for a multi-part AOF (the base through
 * the snapshot loader's verification, each increment through a checker
 * main() wires: aofload.h's aofload_check), with its output and exit
 * status. With fix, only the last increment may be truncated to its last
 * whole command; damage anywhere else is reported and left alone.
 *
 * Contract: a one-shot command run instead of the server; prints to
 * stdout; no libuv.
 */
#ifndef AOF_CHECK_H
#define AOF_CHECK_H

#include <stdbool.h>

typedef struct aofload_report aofload_report_t;
/* Checks one increment: 0 when whole, -EINVAL with r->good_bytes, and the
 * file truncated to it with fix; another negative errno when it cannot be
 * read. */
typedef int aof_check_fn(const char *path, bool fix, aofload_report_t *r);

/* true when path names a manifest (by its suffix, as redis-check-aof
 * decides). */
bool aof_check_is_manifest(const char *path);

/* Checks the manifest at path and its files (in the manifest's
 * directory). The exit status: 0 when all are valid (or fixed), 1
 * otherwise. */
int aof_check_manifest(const char *path, bool fix, aof_check_fn *check);

#endif /* AOF_CHECK_H */
