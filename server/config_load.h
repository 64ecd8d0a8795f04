/*
 * config_load.h - the configuration at start-up: a redis.conf-style file
 * and "--directive value" overrides, applied through the directive table of
 * config.h in order, file first.
 *
 * Contract: start-up only, before the loop runs; not thread-safe.
 */
#ifndef CONFIG_LOAD_H
#define CONFIG_LOAD_H

#include <stddef.h>

#include "config.h"

/* Applies "cuckood [file] [--directive value...]": argv[1] is a file path
 * unless it starts with "--". 0 on success; otherwise a negative errno and a
 * message such as "cuckood.conf:12: 'port 99999': argument must be between
 * 0 and 65535" in err. --version and --help are the caller's to handle. */
int cfg_load_args(cfg_t *c, int argc, char **argv, char *err, size_t errlen);

#endif /* CONFIG_LOAD_H */
