/*
 * log.h - levelled, timestamped log lines, Redis's format
 * ("pid:M 22 Nov 2026 00:47:39.123 * message"), to stdout by default or to
 * the configured logfile.
 *
 * Contract: event loop thread only (no locking). Never fails the caller: a
 * log file that cannot be opened falls back to stdout.
 */
#ifndef LOG_H
#define LOG_H

#include "config.h"

/* Sets the threshold (CFG_LOG_*) and the destination (NULL or "" = stdout).
 * 0, or a negative errno when path cannot be opened (stdout is used then). */
int log_init(int level, const char *path);
void log_set_level(int level);
void log_close(void);

void log_msg(int level, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

#define log_debug(...) log_msg(CFG_LOG_DEBUG, __VA_ARGS__)
#define log_verbose(...) log_msg(CFG_LOG_VERBOSE, __VA_ARGS__)
#define log_notice(...) log_msg(CFG_LOG_NOTICE, __VA_ARGS__)
#define log_warning(...) log_msg(CFG_LOG_WARNING, __VA_ARGS__)

#endif /* LOG_H */
