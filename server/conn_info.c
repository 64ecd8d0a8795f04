/*
 * conn_info.c - see conn_info.h.
 */
#include "conn_info.h"

#include <inttypes.h>
#include <stdio.h>
#include <sys/resource.h>

#include "conn_int.h"
#include "log.h"
#include "multi.h"
#include "resp.h"

/* Descriptors kept for the server itself beyond maxclients (listeners,
 * files, the client being turned away). */
#define CONN_RESERVED_FDS 32

size_t conn_describe(const client_t *cl, char *buf, size_t len)
{
    const conn_t *c = conn_of(cl);
    uint64_t now = server_now_ms(c->cl.srv);
    size_t qbuf = resp_parser_pending(c->parser);
    size_t omem = conn_out_queued(c);
    char cmd[80];
    if (cl->cmd == NULL)
        snprintf(cmd, sizeof(cmd), "NULL");
    else if (cl->sub != NULL)
        snprintf(cmd, sizeof(cmd), "%s|%s", cl->cmd->name, cl->sub->name);
    else
        snprintf(cmd, sizeof(cmd), "%s", cl->cmd->name);
    /* Redis's letters, in its order. */
    char flags[16], *f = flags;
    if (cl->monitor)
        *f++ = 'O';
    if (multi_count(cl) >= 0)
        *f++ = 'x';
    if (c->postponed != NULL)
        *f++ = 'b';
    if (cl->close_after_reply)
        *f++ = 'c';
    if (c->is_unix)
        *f++ = 'U';
    if (cl->no_evict)
        *f++ = 'e';
    if (cl->no_touch)
        *f++ = 'T';
    if (f == flags)
        *f++ = 'N';
    *f = '\0';
    int n = snprintf(
        buf, len,
        "id=%" PRIu64 " addr=%s laddr=%s fd=%d name=%s age=%" PRIu64
        " idle=%" PRIu64 " flags=%s db=%d sub=0 psub=0 ssub=0 multi=%ld "
        "qbuf=%zu qbuf-free=0 argv-mem=0 multi-mem=0 rbs=%d rbp=0 obl=0 "
        "oll=0 omem=%zu tot-mem=%zu events=r cmd=%s "
        "user=%s redir=-1 resp=%d lib-name=%s lib-ver=%s\n",
        c->cl.id, c->addr, c->laddr, c->fd,
        c->cl.name != NULL ? c->cl.name : "", (now - c->created_ms) / 1000,
        (now - c->last_ms) / 1000, flags, c->cl.dbnum, multi_count(cl), qbuf,
        SERVER_READ_SLAB, omem, omem + qbuf, cmd,
        cl->user_name != NULL ? cl->user_name : "default", c->cl.resp,
        cl->lib_name != NULL ? cl->lib_name : "",
        cl->lib_ver != NULL ? cl->lib_ver : "");
    if (n < 0)
        return 0;
    if ((size_t)n < len)
        return (size_t)n;
    /* Cut (a very long name): the line still ends the way readers expect. */
    buf[len - 2] = '\n';
    return len - 1;
}

uint64_t conn_clients_memory(const server_t *s)
{
    uint64_t sum = 0;
    for (const conn_t *c = s->clients; c != NULL; c = c->next)
        sum +=
            resp_parser_pending(c->parser) + c->cl.out.len + conn_out_queued(c);
    return sum;
}

void conn_fit_maxclients(cfg_t *cfg)
{
    struct rlimit rl;
    if (getrlimit(RLIMIT_NOFILE, &rl) < 0)
        return;
    rlim_t want = (rlim_t)cfg->maxclients + CONN_RESERVED_FDS;
    if (rl.rlim_cur >= want)
        return;
    rlim_t target = want;
    if (rl.rlim_max != RLIM_INFINITY && target > rl.rlim_max)
        target = rl.rlim_max;
    struct rlimit nrl = {target, rl.rlim_max};
    if (setrlimit(RLIMIT_NOFILE, &nrl) == 0)
        rl.rlim_cur = target;
    if (rl.rlim_cur >= want)
        return;
    uint64_t fit = rl.rlim_cur > CONN_RESERVED_FDS + 1
                       ? (uint64_t)(rl.rlim_cur - CONN_RESERVED_FDS)
                       : 1;
    log_warning("You requested maxclients of %llu requiring at least %llu "
                "max file descriptors; the limit is %llu, so maxclients is "
                "now %llu.",
                (unsigned long long)cfg->maxclients, (unsigned long long)want,
                (unsigned long long)rl.rlim_cur, (unsigned long long)fit);
    cfg->maxclients = fit;
}
