/*
 * reply.c - see reply.h.
 */
#include "reply.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>

#include "errtext.h"

void reply_ok(client_t *c)
{
    resp_add_simple(&c->out, "OK");
}

void reply_syntax_error(client_t *c)
{
    resp_add_error(&c->out, ERRTEXT_SYNTAX);
}

void reply_not_integer(client_t *c)
{
    resp_add_error(&c->out, ERRTEXT_NOT_INTEGER);
}

void reply_wrong_arity(client_t *c, const char *cmd)
{
    resp_add_errorf(&c->out, ERRTEXT_ARITY_FMT, cmd);
}

/* Appends s (at most max bytes, stopping at a NUL as printf's %.*s does)
 * with CR and LF turned into spaces, as Redis sanitises error texts. */
static size_t append_clean(char *dst, size_t cap, size_t pos, const char *s,
                           size_t len, size_t max)
{
    for (size_t i = 0; i < len && i < max && s[i] != '\0'; i++) {
        if (pos + 1 >= cap)
            break;
        dst[pos++] = (s[i] == '\r' || s[i] == '\n') ? ' ' : s[i];
    }
    dst[pos] = '\0';
    return pos;
}

static size_t append_str(char *dst, size_t cap, size_t pos, const char *s)
{
    return append_clean(dst, cap, pos, s, strlen(s), (size_t)-1);
}

/* Redis 7's wording: the name cut at 128 bytes, then each argument quoted
 * while fewer than 128 bytes of them have been written, each cut so that
 * the list stops near 128. */
void reply_unknown_command(client_t *c, const resp_cmd_t *cmd)
{
    char msg[512];
    size_t pos = append_str(msg, sizeof(msg), 0, "ERR unknown command '");
    pos = append_clean(msg, sizeof(msg), pos, cmd->argv[0].ptr,
                       cmd->argv[0].len, 128);
    pos = append_str(msg, sizeof(msg), pos, "', with args beginning with: ");
    size_t args_start = pos;
    for (int i = 1; i < cmd->argc && pos - args_start < 128; i++) {
        size_t room = 128 - (pos - args_start);
        pos = append_str(msg, sizeof(msg), pos, "'");
        pos = append_clean(msg, sizeof(msg), pos, cmd->argv[i].ptr,
                           cmd->argv[i].len, room);
        pos = append_str(msg, sizeof(msg), pos, "' ");
    }
    resp_add_error(&c->out, msg);
}

void reply_unknown_subcommand(client_t *c, const char *parent, const arg_t *sub)
{
    char msg[300];
    size_t pos = append_str(msg, sizeof(msg), 0, "ERR unknown subcommand '");
    pos = append_clean(msg, sizeof(msg), pos, sub->ptr, sub->len, 128);
    pos = append_str(msg, sizeof(msg), pos, "'. Try ");
    for (const char *p = parent; *p && pos + 1 < sizeof(msg); p++)
        msg[pos++] = (char)toupper((unsigned char)*p);
    msg[pos] = '\0';
    append_str(msg, sizeof(msg), pos, " HELP.");
    resp_add_error(&c->out, msg);
}

void reply_text(client_t *c, sbuf_t *b)
{
    if (b->failed) {
        resp_add_error(&c->out, ERRTEXT_NOMEM);
    } else {
        resp_add_verbatim(&c->out, "txt", b->p != NULL ? b->p : "", b->len);
    }
    free(b->p);
}

void reply_help(client_t *c, const char *const *lines, size_t n)
{
    resp_add_array(&c->out, n);
    for (size_t i = 0; i < n; i++)
        resp_add_simple(&c->out, lines[i]);
}
