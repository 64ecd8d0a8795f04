/*
 * redact.c - see redact.h.
 */
#include "redact.h"

#include <string.h>

bool redact_arg(const client_t *c, const resp_cmd_t *cmd, int i)
{
    const char *name = c->cmd != NULL ? c->cmd->name : "";
    if (strcmp(name, "auth") == 0)
        return i >= 1;
    if (strcmp(name, "hello") == 0)
        for (int j = 2; j < i && j < cmd->argc; j++)
            if (arg_is(&cmd->argv[j], "auth") && i - j <= 2)
                return true;
    /* As Redis's ACL SETUSER: the name and every rule, which may hold a
     * password (">pass") or its hash. */
    if (strcmp(name, "acl") == 0 && c->sub != NULL &&
        strcmp(c->sub->name, "setuser") == 0)
        return i >= 2;
    if (strcmp(name, "config") == 0 && c->sub != NULL &&
        strcmp(c->sub->name, "set") == 0 && i >= 3 && (i - 3) % 2 == 0)
        return arg_is(&cmd->argv[i - 1], "requirepass");
    return false;
}
