/*
 * latency.h - the latency monitor, as Redis's: events that took at least
 * latency-monitor-threshold milliseconds are recorded per event name (the
 * last 160 samples, one per second at most, keeping the worst of that
 * second, plus the all-time maximum), and LATENCY LATEST / HISTORY / RESET
 * / DOCTOR / HELP report them. A threshold of 0 turns it off: nothing is
 * recorded and the reports are empty.
 *
 * Event names (Redis's where Redis has the event): "command" and
 * "fast-command" (a command's execution, by its "fast" flag), "fork" (the
 * fork of a background save), "rdb-save" (a foreground snapshot write:
 * SAVE, FLUSHALL, shutdown), "rdb-unlink-temp-file" (removing a killed
 * save's temporary file), "server-cron" (the periodic work: client
 * timeouts and output limits, statistics), "expire-cycle" (an active
 * expiry cycle or slice), "rehash-cycle" (the cron's share of a keyspace
 * resize), "lazyfree-job" and "lazyfree-purge" (work of the lazy free
 * thread, which the loop does not wait for: freeing what was handed over,
 * and returning freed pages; recorded by the cron).
 *
 * Contract: event loop thread only. The state is plain memory hung on the
 * server (server_free() frees it). Calls nothing of the daemon but the
 * dispatcher's helpers for its commands.
 */
#ifndef LATENCY_H
#define LATENCY_H

#include <stdint.h>

#include "server_int.h"

/* Records that event took ms milliseconds, when the monitor is on and ms
 * reaches its threshold. event must be a static string. */
void latency_add(server_t *s, const char *event, uint64_t ms);

/* Milliseconds since t0 (a uv_hrtime() reading). */
uint64_t latency_ms_since(uint64_t t0);

/* The procs of LATENCY's subcommands (cmdtab.c lists them). */
cmd_proc_t latency_doctor_proc;
cmd_proc_t latency_help_proc;
cmd_proc_t latency_history_proc;
cmd_proc_t latency_latest_proc;
cmd_proc_t latency_reset_proc;

#endif /* LATENCY_H */
