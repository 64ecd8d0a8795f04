/*
 * expire.h - key timeouts: the lazy check every lookup makes, the API the
 * command families use to read, set and clear a key's absolute expiry time,
 * and active expiry (the cron's adaptive sampling). Times are unix
 * milliseconds (wall clock), as Redis stores them.
 *
 * A key past its time is gone for every command: a lookup through
 * expire_lookup() deletes it first. Each expiry (lazy or active) counts in
 * INFO's expired_keys and calls server_key_changed(); as in Redis it does
 * not count as a change for the save points (the snapshot's copy of the
 * key is dropped at load once it is past its time).
 *
 * Contract: event loop thread only. dbnum is a valid database number.
 */
#ifndef EXPIRE_H
#define EXPIRE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "server.h"
#include "util.h"

/* The wall clock in unix milliseconds. */
int64_t expire_now_ms(void);

/* The filter under key in database dbnum, or NULL: a key past its time is
 * deleted first (and then absent). *when (may be NULL) receives its expiry
 * time, -1 when it has none. */
cf_filter_t *expire_lookup(server_t *s, int dbnum, const void *key, size_t len,
                           int64_t *when);
/* As expire_lookup, for a caller that needs no filter: true when key
 * exists (and is not past its time). */
bool expire_exists(server_t *s, int dbnum, const void *key, size_t len);
/* key's expiry time after the lazy check: -2 when absent, -1 when it has
 * no timeout. */
int64_t expire_get(server_t *s, int dbnum, const void *key, size_t len);
/* Gives key the absolute time when (>= 0; a time already past is kept and
 * the key expires at its next lookup or cron step): 0, -ENOENT when
 * absent, -ENOMEM (nothing changed). Signals the key. It may move the key's
 * filter (ks_set_expire()). Counts nothing as dirty: the command does. */
int expire_set(server_t *s, int dbnum, const void *key, size_t len,
               int64_t when);
/* Removes key's timeout: 1 when it had one (and signals the key), 0 when it
 * had none or is absent, -ENOMEM. */
int expire_clear(server_t *s, int dbnum, const void *key, size_t len);

/* Active expiry, called by the cron: samples keys with a timeout in every
 * database within a time budget and deletes those past their time; while a
 * sample keeps finding many (more than a tenth) it goes on in short slices
 * on the loop, so a mass expiry neither waits for reads nor stalls
 * clients. */
void expire_cron(server_t *s);

/* The time filters with a window answer for: the wall clock moved by the
 * hidden cf-window-clock-offset. Read from the dispatcher's per-command
 * clock (s->cmd_clock) and the wall clock's distance to it, which the
 * cron measures, so a command pays no system call for it. */
int64_t expire_window_now_ms(const server_t *s);

/* Filters with a window, called by the cron: walks the keys a few at a
 * time and reclaims the slots of forgotten entries (cf_sweep()), at most
 * EXPIRE_WINDOW_BUCKETS buckets and half a millisecond per call, so that the
 * slots come back without a pause proportional to a filter and every table is
 * swept well within the slices its stamps can tell apart. Answers never depend
 * on it. */
#define EXPIRE_WINDOW_BUCKETS 65536
void expire_windows_cron(server_t *s);

/* INFO: the stats fields (expired_keys ...), and one database's
 * "expires=N,avg_ttl=MS". */
void expire_info_stats(const server_t *s, sbuf_t *b);
void expire_info_db(const server_t *s, int dbnum, sbuf_t *b);

#endif /* EXPIRE_H */
