/*
 * cmd_client.c - see cmd_client.h.
 */
#include "cmd_client.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "acl.h"
#include "cmd.h"
#include "conn.h"
#include "monitor.h"
#include "multi.h"

/* The longest part of an argument quoted back in an error. */
#define CLIENT_ERR_ARG 128

/* CLIENT KILL's filters; NULL/0 match every client. */
typedef struct kill_filter {
    const arg_t *addr, *laddr;
    uint64_t id;
    bool skipme;
    bool none; /* TYPE master, replica or pubsub: no client here is one */
    bool by_user;
    const struct acl_user *user; /* USER: its clients (NULL: default's) */
} kill_filter_t;

static bool same_text(const arg_t *a, const char *s)
{
    return strlen(s) == a->len && memcmp(s, a->ptr, a->len) == 0;
}

static bool kill_matches(const kill_filter_t *f, const client_t *v,
                         const client_t *self)
{
    if (f->none || (f->skipme && v == self))
        return false;
    if (f->id != 0 && v->id != f->id)
        return false;
    if (f->by_user && v->user != f->user)
        return false;
    if (f->addr != NULL && !same_text(f->addr, conn_addr(v)))
        return false;
    return f->laddr == NULL || same_text(f->laddr, conn_laddr(v));
}

/* Parses the filter form "<option> <value> ..." from argv[2]; false after
 * replying Redis's error. */
static bool kill_parse(client_t *c, int argc, const arg_t *argv,
                       kill_filter_t *f)
{
    for (int i = 2; i < argc; i += 2) {
        if (i + 1 >= argc) {
            reply_syntax_error(c);
            return false;
        }
        const arg_t *opt = &argv[i], *val = &argv[i + 1];
        if (arg_is(opt, "id")) {
            long long id;
            if (!arg_ll(val, &id) || id < 1) {
                resp_add_error(&c->out,
                               "ERR client-id should be greater than 0");
                return false;
            }
            f->id = (uint64_t)id;
        } else if (arg_is(opt, "type")) {
            if (arg_is(val, "master") || arg_is(val, "replica") ||
                arg_is(val, "slave") || arg_is(val, "pubsub")) {
                f->none = true;
            } else if (!arg_is(val, "normal")) {
                resp_add_errorf(&c->out, "ERR Unknown client type '%.*s'",
                                (int)(val->len > CLIENT_ERR_ARG ? CLIENT_ERR_ARG
                                                                : val->len),
                                val->ptr);
                return false;
            }
        } else if (arg_is(opt, "addr")) {
            f->addr = val;
        } else if (arg_is(opt, "laddr")) {
            f->laddr = val;
        } else if (arg_is(opt, "user")) {
            acl_user_t *u = acl_find(c->srv, val->ptr, val->len);
            f->by_user = true;
            f->user = u == acl_find(c->srv, "default", 7) ? NULL : u;
            if (u == NULL) {
                resp_add_errorf(&c->out, "ERR No such user '%.*s'",
                                (int)(val->len > CLIENT_ERR_ARG ? CLIENT_ERR_ARG
                                                                : val->len),
                                val->ptr);
                return false;
            }
        } else if (arg_is(opt, "skipme")) {
            if (arg_is(val, "yes")) {
                f->skipme = true;
            } else if (arg_is(val, "no")) {
                f->skipme = false;
            } else {
                reply_syntax_error(c);
                return false;
            }
        } else {
            reply_syntax_error(c);
            return false;
        }
    }
    return true;
}

void cmd_client_kill(client_t *c, int argc, const arg_t *argv)
{
    /* CLIENT KILL ip:port (which may be the caller itself), or the
     * filter form, which skips the caller unless SKIPME no. */
    kill_filter_t f = {.skipme = argc > 3};
    if (argc == 3)
        f.addr = &argv[2];
    else if (!kill_parse(c, argc, argv, &f))
        return;
    int64_t killed = 0;
    client_t *next;
    for (client_t *v = conn_next_client(c->srv, NULL); v != NULL; v = next) {
        next = conn_next_client(c->srv, v); /* closing unlinks v */
        if (!kill_matches(&f, v, c))
            continue;
        conn_kill(v, c);
        killed++;
    }
    if (argc > 3)
        resp_add_int(&c->out, killed);
    else if (killed == 0)
        resp_add_error(&c->out, "ERR No such client");
    else
        reply_ok(c);
}

void cmd_client_pause(client_t *c, int argc, const arg_t *argv)
{
    if (argc > 4) {
        resp_add_errorf(&c->out,
                        "ERR unknown subcommand or wrong number of "
                        "arguments for '%.*s'. Try CLIENT HELP.",
                        (int)argv[1].len, argv[1].ptr);
        return;
    }
    long long ms;
    if (!arg_ll(&argv[2], &ms)) {
        resp_add_error(&c->out,
                       "ERR timeout is not an integer or out of range");
        return;
    }
    if (ms < 0) {
        resp_add_error(&c->out, "ERR timeout is negative");
        return;
    }
    bool all = true;
    if (argc == 4) {
        if (arg_is(&argv[3], "write")) {
            all = false;
        } else if (!arg_is(&argv[3], "all")) {
            resp_add_error(&c->out, "ERR CLIENT PAUSE mode must be WRITE or "
                                    "ALL");
            return;
        }
    }
    conn_pause(c->srv, (uint64_t)ms, all);
    reply_ok(c);
}

void cmd_client_unpause(client_t *c, int argc, const arg_t *argv)
{
    conn_unpause(c->srv);
    reply_ok(c);
}

void cmd_client_reply(client_t *c, int argc, const arg_t *argv)
{
    if (arg_is(&argv[2], "on")) {
        c->reply_off = c->reply_skip = c->reply_skip_next = false;
        reply_ok(c);
    } else if (arg_is(&argv[2], "off")) {
        c->reply_off = true;
    } else if (arg_is(&argv[2], "skip")) {
        if (!c->reply_off)
            c->reply_skip_next = true;
    } else {
        reply_syntax_error(c);
    }
}

/* "on" or "off" into *flag, replying OK, or a syntax error. */
static void set_switch(client_t *c, const arg_t *arg, bool *flag)
{
    if (arg_is(arg, "on")) {
        *flag = true;
    } else if (arg_is(arg, "off")) {
        *flag = false;
    } else {
        reply_syntax_error(c);
        return;
    }
    reply_ok(c);
}

void cmd_client_no_evict(client_t *c, int argc, const arg_t *argv)
{
    set_switch(c, &argv[2], &c->no_evict);
}

void cmd_client_no_touch(client_t *c, int argc, const arg_t *argv)
{
    set_switch(c, &argv[2], &c->no_touch);
}

/* RESET: the connection as it was when it was accepted, as Redis's
 * clearClientConnectionState() leaves it (the library name and version,
 * and NO-EVICT, stay). */
void cmd_client_reset_proc(client_t *c, int argc, const arg_t *argv)
{
    server_t *s = c->srv;
    monitor_leave(c);
    multi_reset(c); /* ends MULTI and forgets WATCHed keys */
    c->reply_off = c->reply_skip_next = false;
    c->no_touch = false;
    c->dbnum = 0;
    c->db = s->dbs[0];
    c->resp = 2;
    c->out.proto = 2;
    free(c->name);
    c->name = NULL;
    /* As Redis's RESET: the default user, authenticated only when it
     * needs no password. */
    c->user = NULL;
    c->user_name = NULL;
    bool nopass = !s->auth_required;
    if (c->authenticated != nopass) {
        c->authenticated = nopass;
        conn_client_limits(c);
    }
    resp_add_simple(&c->out, "RESET");
}
