/*
 * monitor.c - see monitor.h.
 *
 * The monitors are the clients with c->monitor set; the server counts them
 * (the connection module uncounts one that closes), so that a server
 * without monitors pays one test per command.
 */
#include "monitor.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/time.h>

#include "cmd.h"
#include "conn.h"
#include "redact.h"
#include "util.h"

/* Appends the len bytes at p to b quoted as Redis's sdscatrepr() does,
 * through a stack buffer: one format call per few hundred bytes. */
static void quote_arg(sbuf_t *b, const char *p, size_t len)
{
    char tmp[512];
    size_t n = 0;
    tmp[n++] = '"';
    for (size_t i = 0; i < len; i++) {
        if (n > sizeof(tmp) - 8) {
            sb_printf(b, "%.*s", (int)n, tmp);
            n = 0;
        }
        unsigned char ch = (unsigned char)p[i];
        const char *esc = NULL;
        switch (ch) {
        case '\\':
            esc = "\\\\";
            break;
        case '"':
            esc = "\\\"";
            break;
        case '\n':
            esc = "\\n";
            break;
        case '\r':
            esc = "\\r";
            break;
        case '\t':
            esc = "\\t";
            break;
        case '\a':
            esc = "\\a";
            break;
        case '\b':
            esc = "\\b";
            break;
        default:
            break;
        }
        if (esc != NULL) {
            tmp[n++] = esc[0];
            tmp[n++] = esc[1];
        } else if (ch >= 0x20 && ch <= 0x7e) {
            tmp[n++] = (char)ch;
        } else {
            static const char hex[] = "0123456789abcdef";
            tmp[n++] = '\\';
            tmp[n++] = 'x';
            tmp[n++] = hex[ch >> 4];
            tmp[n++] = hex[ch & 15];
        }
    }
    tmp[n++] = '"';
    sb_printf(b, "%.*s", (int)n, tmp);
}

void monitor_feed(client_t *c, const resp_cmd_t *cmd)
{
    server_t *s = c->srv;
    if (s->nmonitors == 0)
        return;
    const cmd_def_t *d = c->sub != NULL ? c->sub : c->cmd;
    if (d == NULL || (d->flags & CMD_ADMIN))
        return; /* as Redis: admin commands are too revealing */
    struct timeval tv;
    gettimeofday(&tv, NULL);
    sbuf_t b = {0};
    sb_printf(&b, "+%ld.%06ld ", (long)tv.tv_sec, (long)tv.tv_usec);
    if (conn_is_unix(c))
        sb_printf(&b, "[%d unix:%s] ", c->dbnum,
                  s->cfg->unixsocket != NULL ? s->cfg->unixsocket : "");
    else
        sb_printf(&b, "[%d %s] ", c->dbnum, conn_addr(c));
    for (int i = 0; i < cmd->argc; i++) {
        if (i > 0)
            sb_printf(&b, " ");
        if (redact_arg(c, cmd, i))
            sb_printf(&b, "\"(redacted)\"");
        else
            quote_arg(&b, cmd->argv[i].ptr, cmd->argv[i].len);
    }
    sb_printf(&b, "\r\n");
    if (b.failed) {
        free(b.p);
        return;
    }
    client_t *next;
    for (client_t *m = conn_next_client(s, NULL); m != NULL; m = next) {
        next = conn_next_client(s, m); /* the push may close m */
        if (!m->monitor)
            continue;
        resp_add_raw(&m->out, b.p, b.len);
        /* The running client's replies leave at the end of its batch,
         * this line after them. */
        if (m != c)
            conn_push(m);
    }
    free(b.p);
}

void monitor_leave(client_t *c)
{
    if (c->monitor) {
        c->monitor = false;
        c->srv->nmonitors--;
    }
}

void monitor_proc(client_t *c, int argc, const arg_t *argv)
{
    if (c->monitor)
        return; /* Redis answers nothing to a second MONITOR */
    c->monitor = true;
    c->srv->nmonitors++;
    reply_ok(c);
}
