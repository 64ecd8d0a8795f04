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

#include "cmd.h"

#define SLOWLOG_MAX_ARGC 32    /* as Redis's SLOWLOG_ENTRY_MAX_ARGC */
#define SLOWLOG_MAX_STRING 128 /* as Redis's SLOWLOG_ENTRY_MAX_STRING */

typedef struct sl_entry {
    struct sl_entry *newer, *older;
    int64_t id, time;
    uint64_t us;
    char *addr, *name;
    int argc;
    resp_arg_t argv[]; /* each ptr malloc'd */
} sl_entry_t;

struct slowlog {
    sl_entry_t *newest, *oldest;
    uint64_t len;
    int64_t next_id; /* not reset by SLOWLOG RESET, as in Redis */
};

static void entry_free(sl_entry_t *e)
{
    for (int i = 0; i < e->argc; i++)
        free(e->argv[i].ptr);
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

/* Whether argument i of c's command is a secret (a password). */
static bool is_secret(const client_t *c, const resp_cmd_t *cmd, int i)
{
    const char *name = c->cmd != NULL ? c->cmd->name : "";
    if (strcmp(name, "auth") == 0)
        return i >= 1;
    if (strcmp(name, "hello") == 0)
        for (int j = 2; j < i && j < cmd->argc; j++)
            if (cmd_arg_is(&cmd->argv[j], "auth") && i - j <= 2)
                return true;
    if (strcmp(name, "config") == 0 && c->sub != NULL &&
        strcmp(c->sub->name, "set") == 0 && i >= 3 && (i - 3) % 2 == 0)
        return cmd_arg_is(&cmd->argv[i - 1], "requirepass");
    return false;
}

/* Copies argument i as the slow log keeps it into *out; false when out of
 * memory. */
static bool copy_arg(const client_t *c, const resp_cmd_t *cmd, int i,
                     int kept, resp_arg_t *out)
{
    char tail[64];
    const char *p = cmd->argv[i].ptr;
    size_t len = cmd->argv[i].len, tlen = 0;
    if (kept < cmd->argc && i == kept - 1) {
        tlen = (size_t)snprintf(tail, sizeof(tail), "... (%d more arguments)",
                                cmd->argc - kept + 1);
        len = 0;
    } else if (is_secret(c, cmd, i)) {
        tlen = (size_t)snprintf(tail, sizeof(tail), "(redacted)");
        len = 0;
    } else if (len > SLOWLOG_MAX_STRING) {
        tlen = (size_t)snprintf(tail, sizeof(tail), "... (%zu more bytes)",
                                len - SLOWLOG_MAX_STRING);
        len = SLOWLOG_MAX_STRING;
    }
    out->ptr = malloc(len + tlen + 1);
    if (out->ptr == NULL)
        return false;
    memcpy(out->ptr, p, len);
    memcpy(out->ptr + len, tail, tlen);
    out->ptr[len + tlen] = '\0';
    out->len = len + tlen;
    return true;
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
    sl_entry_t *e = calloc(1, sizeof(*e) + (size_t)kept * sizeof(e->argv[0]));
    if (e == NULL)
        return;
    e->addr = strdup(addr);
    e->name = strdup(c->name != NULL ? c->name : "");
    bool ok = e->addr != NULL && e->name != NULL;
    for (int i = 0; ok && i < kept; i++, e->argc++)
        ok = copy_arg(c, cmd, i, kept, &e->argv[i]);
    if (!ok) {
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

static void get_proc(client_t *c, int argc, const resp_arg_t *argv)
{
    const struct slowlog *l = c->srv->slowlog;
    long long count = 10;
    if (argc > 3) {
        reply_syntax_error(c);
        return;
    }
    if (argc == 3) {
        if (!cmd_arg_ll(&argv[2], &count)) {
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
        resp_add_array(&c->out, (size_t)e->argc);
        for (int j = 0; j < e->argc; j++)
            resp_add_bulk(&c->out, e->argv[j].ptr, e->argv[j].len);
        resp_add_cstr(&c->out, e->addr);
        resp_add_cstr(&c->out, e->name);
    }
}

static void len_proc(client_t *c, int argc, const resp_arg_t *argv)
{
    const struct slowlog *l = c->srv->slowlog;
    resp_add_int(&c->out, l != NULL ? (int64_t)l->len : 0);
}

static void reset_proc(client_t *c, int argc, const resp_arg_t *argv)
{
    slowlog_clear(c->srv->slowlog);
    reply_ok(c);
}

static void help_proc(client_t *c, int argc, const resp_arg_t *argv)
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
    cmd_reply_help(c, lines, sizeof(lines) / sizeof(lines[0]));
}

static const cmd_arg_t count_arg[] = {
    {"count", "integer", NULL, CMD_ARG_OPTIONAL, NULL}, CMD_ARG_END};

#define SL_FLAGS (CMD_ADMIN | CMD_LOADING | CMD_STALE)

static const cmd_def_t slowlog_subs[] = {
    {.name = "get",
     .arity = -2,
     .flags = SL_FLAGS,
     .proc = get_proc,
     .group = "server",
     .summary = "Returns the slow log's entries.",
     .since = "2.2.12",
     .complexity = "O(N) where N is the number of entries returned",
     .args = count_arg},
    {.name = "help",
     .arity = 2,
     .flags = CMD_LOADING | CMD_STALE,
     .proc = help_proc,
     .group = "server",
     .summary = "Show helpful text about the different subcommands",
     .since = "6.2.0",
     .complexity = "O(1)"},
    {.name = "len",
     .arity = 2,
     .flags = SL_FLAGS,
     .proc = len_proc,
     .group = "server",
     .summary = "Returns the number of entries in the slow log.",
     .since = "2.2.12",
     .complexity = "O(1)"},
    {.name = "reset",
     .arity = 2,
     .flags = SL_FLAGS,
     .proc = reset_proc,
     .group = "server",
     .summary = "Clears all entries from the slow log.",
     .since = "2.2.12",
     .complexity = "O(N) where N is the number of entries in the slowlog"},
    CMD_DEF_END,
};

const cmd_def_t slowlog_table[] = {
    {.name = "slowlog",
     .arity = -2,
     .group = "server",
     .summary = "A container for slow log commands.",
     .since = "2.2.12",
     .complexity = "Depends on subcommand.",
     .subcommands = slowlog_subs},
    CMD_DEF_END,
};
