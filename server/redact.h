/*
 * redact.h - which arguments of a command are secrets (passwords) that the
 * slow log and MONITOR show as "(redacted)", as Redis does.
 *
 * Contract: pure; event loop thread only (it reads the client's command).
 */
#ifndef REDACT_H
#define REDACT_H

#include <stdbool.h>

#include "server.h"

/* Whether argument i of cmd, which c ran (c->cmd and c->sub name it), is a
 * secret: AUTH's arguments, HELLO's AUTH username and password, ACL
 * SETUSER's name and rules, CONFIG SET requirepass's value. */
bool redact_arg(const client_t *c, const resp_cmd_t *cmd, int i);

#endif /* REDACT_H */
