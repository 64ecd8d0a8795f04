/*
 * slowlog.h - the slow log, as Redis's: commands that ran for at least
 * slowlog-log-slower-than microseconds (negative: never; 0: every
 * command) are kept, newest first, up to slowlog-max-len entries, and
 * SLOWLOG GET [count] / LEN / RESET / HELP report them. An entry is Redis
 * 7's: id, unix time, duration in microseconds, the arguments (at most 32,
 * the last one then saying how many more there were; each cut at 128 bytes
 * with "... (N more bytes)"; passwords replaced by "(redacted)"), the
 * client's address and its name.
 *
 * Contract: event loop thread only. The entries are owned by the server's
 * slow log and freed by slowlog_free() (main()'s teardown, on every path out).
 */
#ifndef SLOWLOG_H
#define SLOWLOG_H

#include <stdint.h>

#include "server_int.h"

/* Records c's command cmd, which took us microseconds, when the slow log
 * wants it. addr is the client's address ("ip:port"). */
void slowlog_record(server_t *s, const client_t *c, const resp_cmd_t *cmd,
                    uint64_t us, const char *addr);

/* Frees every entry and the log itself. */
void slowlog_free(server_t *s);

/* The procs of SLOWLOG's subcommands (cmdtab.c lists them). */
cmd_proc_t slowlog_get_proc;
cmd_proc_t slowlog_help_proc;
cmd_proc_t slowlog_len_proc;
cmd_proc_t slowlog_reset_proc;

#endif /* SLOWLOG_H */
