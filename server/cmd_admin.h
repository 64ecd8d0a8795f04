/*
 * cmd_admin.h - the server commands: INFO, TIME, CONFIG, MEMORY, SHUTDOWN.
 * The table also holds COMMAND's entry, which keeps its place in COMMAND's
 * and INFO's table order; cmd_command.h implements it.
 *
 * Contract: event loop thread only; main() registers the table.
 */
#ifndef CMD_ADMIN_H
#define CMD_ADMIN_H

#include <stdbool.h>

#include "server.h"
#include "util.h"

extern const cmd_def_t cmd_admin_table[]; /* NULL-name terminated */

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
