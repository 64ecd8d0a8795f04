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
    if (strcmp(name, "config") == 0 && c->sub != NULL &&
        strcmp(c->sub->name, "set") == 0 && i >= 3 && (i - 3) % 2 == 0)
        return arg_is(&cmd->argv[i - 1], "requirepass");
    return false;
}
