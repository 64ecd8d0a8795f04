/*
 * slowlog.c - see slowlog.h.
 *
 * A doubly linked list, newest first, trimmed from the oldest end after
 * each entry; an entry's texts are copied, since the command's arguments
 * die with its read batch.
 */
#include "slowlog.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "argv.h"
#include "cmd.h"
#include "redact.h"
#include "reply.h"

#define SLOWLOG_MAX_ARGC 32    /* as Redis's SLOWLOG_ENTRY_MAX_ARGC */
#define SLOWLOG_MAX_STRING 128 /* as Redis's SLOWLOG_ENTRY_MAX_STRING */

typedef struct sl_entry {
    struct sl_entry *newer, *older;
    int64_t id, time;
    uint64_t us;
    char *addr, *name;
    argv_t *cmd; /* the command as the slow log shows it */
} sl_entry_t;

struct slowlog {
    sl_entry_t *newest, *oldest;
    uint64_t len;
    int64_t next_id; /* not reset by SLOWLOG RESET, as in Redis */
};

static void entry_free(sl_entry_t *e)
{
    argv_free(e->cmd);
    free(e->addr);
    free(e->name);
    free(e);
}

static void drop_oldest(struct slowlog *l)
{
    sl_entry_t *e = l->oldest;
    l->oldest = e->newer;
    if (l->oldest != NULL)
        l->oldest->older = NULL;
    else
        l->newest = NULL;
    l->len--;
    entry_free(e);
}

/* Room for a shown argument that is not the command's own bytes: at most
 * SLOWLOG_MAX_STRING of them and a note. */
typedef char shown_buf_t[SLOWLOG_MAX_STRING + 64];

/* Argument i as the slow log shows it: a view of the command's bytes, or
 * of buf when it is cut short, redacted or stands for the rest. */
static arg_t shown_arg(const client_t *c, const resp_cmd_t *cmd, int i,
                       int kept, shown_buf_t buf)
{
    const arg_t *a = &cmd->argv[i];
    int n;
    if (kept < cmd->argc && i == kept - 1)
        n = snprintf(buf, sizeof(shown_buf_t), "... (%d more arguments)",
                     cmd->argc - kept + 1);
    else if (redact_arg(c, cmd, i))
        n = snprintf(buf, sizeof(shown_buf_t), "(redacted)");
    else if (a->len > SLOWLOG_MAX_STRING) {
        memcpy(buf, a->ptr, SLOWLOG_MAX_STRING);
        n = SLOWLOG_MAX_STRING +
            snprintf(buf + SLOWLOG_MAX_STRING,
                     sizeof(shown_buf_t) - SLOWLOG_MAX_STRING,
                     "... (%zu more bytes)", a->len - SLOWLOG_MAX_STRING);
    } else
        return *a;
    return (arg_t){buf, (size_t)n};
}

void slowlog_record(server_t *s, const client_t *c, const resp_cmd_t *cmd,
                    uint64_t us, const char *addr)
{
    const cfg_t *cfg = s->cfg;
    if (cfg->slowlog_log_slower_than < 0 || cfg->slowlog_max_len == 0 ||
        us < (uint64_t)cfg->slowlog_log_slower_than)
        return;
    if (s->slowlog == NULL &&
        (s->slowlog = calloc(1, sizeof(*s->slowlog))) == NULL)
        return;
    struct slowlog *l = s->slowlog;
    int kept = cmd->argc < SLOWLOG_MAX_ARGC ? cmd->argc : SLOWLOG_MAX_ARGC;
    shown_buf_t bufs[SLOWLOG_MAX_ARGC];
    arg_t shown[SLOWLOG_MAX_ARGC];
    for (int i = 0; i < kept; i++)
        shown[i] = shown_arg(c, cmd, i, kept, bufs[i]);
    sl_entry_t *e = calloc(1, sizeof(*e));
    if (e == NULL)
        return;
    e->addr = strdup(addr);
    e->name = strdup(c->name != NULL ? c->name : "");
    e->cmd = argv_copy(kept, shown);
    if (e->addr == NULL || e->name == NULL || e->cmd == NULL) {
        entry_free(e); /* a slow log entry is not worth failing over */
        return;
    }
    e->id = l->next_id++;
    e->time = (int64_t)time(NULL);
    e->us = us;
    e->older = l->newest;
    if (l->newest != NULL)
        l->newest->newer = e;
    else
        l->oldest = e;
    l->newest = e;
    l->len++;
    while (l->len > cfg->slowlog_max_len)
        drop_oldest(l);
}

static void slowlog_clear(struct slowlog *l)
{
    while (l != NULL && l->oldest != NULL)
        drop_oldest(l);
}

void slowlog_free(server_t *s)
{
    slowlog_clear(s->slowlog);
    free(s->slowlog);
    s->slowlog = NULL;
}

/* ---- SLOWLOG ----------------------------------------------------------- */

void slowlog_get_proc(client_t *c, int argc, const arg_t *argv)
{
    const struct slowlog *l = c->srv->slowlog;
    long long count = 10;
    if (argc > 3) {
        reply_syntax_error(c);
        return;
    }
    if (argc == 3) {
        if (!arg_ll(&argv[2], &count)) {
            reply_not_integer(c);
            return;
        }
        if (count < -1) {
            resp_add_error(&c->out,
                           "ERR count should be greater than or equal to -1");
            return;
        }
    }
    uint64_t len = l != NULL ? l->len : 0;
    uint64_t n = count == -1 || (uint64_t)count > len ? len : (uint64_t)count;
    resp_add_array(&c->out, (size_t)n);
    const sl_entry_t *e = l != NULL ? l->newest : NULL;
    for (uint64_t i = 0; i < n; i++, e = e->older) {
        resp_add_array(&c->out, 6);
        resp_add_int(&c->out, e->id);
        resp_add_int(&c->out, e->time);
        resp_add_int(&c->out, (int64_t)e->us);
        resp_add_array(&c->out, (size_t)e->cmd->argc);
        for (int j = 0; j < e->cmd->argc; j++)
            resp_add_bulk(&c->out, e->cmd->v[j].ptr, e->cmd->v[j].len);
        resp_add_cstr(&c->out, e->addr);
        resp_add_cstr(&c->out, e->name);
    }
}

void slowlog_len_proc(client_t *c, int argc, const arg_t *argv)
{
    const struct slowlog *l = c->srv->slowlog;
    resp_add_int(&c->out, l != NULL ? (int64_t)l->len : 0);
}

void slowlog_reset_proc(client_t *c, int argc, const arg_t *argv)
{
    slowlog_clear(c->srv->slowlog);
    reply_ok(c);
}

void slowlog_help_proc(client_t *c, int argc, const arg_t *argv)
{
    static const char *const lines[] = {
        "SLOWLOG <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
        "GET [<count>]",
        "    Return top <count> entries from the slowlog (default: 10, -1 "
        "mean all).",
        "    Entries are made of:",
        "    id, timestamp, time in microseconds, arguments array, client "
        "IP and port,",
        "    client name",
        "LEN",
        "    Return the length of the slowlog.",
        "RESET",
        "    Reset the slowlog.",
        "HELP",
        "    Print this help.",
    };
    reply_help(c, lines, sizeof(lines) / sizeof(lines[0]));
}
