/*
 * cmd_admin.h - the server commands: INFO, TIME, CONFIG, MEMORY, SHUTDOWN
 * (entries in cmdtab.c).
 *
 * Contract: event loop thread only.
 */
#ifndef CMD_ADMIN_H
#define CMD_ADMIN_H

#include <stdbool.h>

#include "server.h"
#include "util.h"

/* The procs of INFO, TIME, CONFIG's subcommands, MEMORY USAGE, SHUTDOWN
 * (cmdtab.c lists them). */
cmd_proc_t cmd_admin_config_get_proc;
cmd_proc_t cmd_admin_config_resetstat_proc;
cmd_proc_t cmd_admin_config_set_proc;
cmd_proc_t cmd_admin_info_proc;
cmd_proc_t cmd_admin_memory_usage_proc;
cmd_proc_t cmd_admin_shutdown_proc;
cmd_proc_t cmd_admin_time_proc;

/* One section of INFO: its lines are appended to b by fn, after the
 * "# title" line INFO writes. */
typedef struct cmd_admin_info_section {
    const char *name;  /* what INFO takes, lower case: "server" */
    const char *title; /* its header: "Server" */
    bool in_default;   /* shown by INFO without arguments and "default" */
    void (*fn)(server_t *s, sbuf_t *b);
} cmd_admin_info_section_t;

/* INFO's sections in output order, NULL-name terminated; "all" and
 * "everything" show every one. */
extern const cmd_admin_info_section_t cmd_admin_info_sections[];

#endif /* CMD_ADMIN_H */
