/*
 * cfhost.h - the daemon as a host of the CF command layer (commands/): the
 * CF.* commands as entries of the daemon's command table, run against the
 * client's database, its reply buffer and the server's services.
 *
 * Contract: event loop thread only.
 */
#ifndef CFHOST_H
#define CFHOST_H

#include "server.h"

/* The CF.* entries (NULL-name terminated), built from cfcmd_table on the
 * first call into static storage; NULL if the family outgrew it. */
const cmd_def_t *cfhost_table(void);

#endif /* CFHOST_H */
