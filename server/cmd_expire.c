/*
 * cmd_expire.c - the timeout commands (entries in cmdtab.c), with Redis 7's
 * replies and errors: options are checked before the time, the time is
 * checked for overflow before the key is looked up, and a time already
 * past deletes the key.
 */
#include "cmd_expire.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>

#include "cmd.h"
#include "errtext.h"
#include "expire.h"
#include "propagate.h"
#include "reply.h"
#include "server_int.h"

enum { EX_NX = 1, EX_XX = 2, EX_GT = 4, EX_LT = 8 };

/* The unit and the base of a command's time argument, and whether its
 * TTL-like reply is in milliseconds or absolute. */
typedef struct expire_kind {
    bool ms;       /* the argument or the reply is in milliseconds */
    bool absolute; /* a unix time, not one relative to now */
} expire_kind_t;

static void reply_bad_time(client_t *c)
{
    char msg[80];
    snprintf(msg, sizeof(msg), "ERR invalid expire time in '%s' command",
             c->cmd->name);
    resp_add_error(&c->out, msg);
}

/* Parses NX|XX|GT|LT into *flags; replies and returns false on an error. */
static bool parse_flags(client_t *c, int argc, const arg_t *argv, int *flags)
{
    *flags = 0;
    for (int i = 3; i < argc; i++) {
        if (arg_is(&argv[i], "nx")) {
            *flags |= EX_NX;
        } else if (arg_is(&argv[i], "xx")) {
            *flags |= EX_XX;
        } else if (arg_is(&argv[i], "gt")) {
            *flags |= EX_GT;
        } else if (arg_is(&argv[i], "lt")) {
            *flags |= EX_LT;
        } else {
            char msg[96];
            int n = argv[i].len > 64 ? 64 : (int)argv[i].len;
            snprintf(msg, sizeof(msg), "ERR Unsupported option %.*s", n,
                     argv[i].ptr);
            resp_add_error(&c->out, msg);
            return false;
        }
    }
    if ((*flags & EX_NX) && (*flags & (EX_XX | EX_GT | EX_LT))) {
        resp_add_error(&c->out, "ERR NX and XX, GT or LT options at the same "
                                "time are not compatible");
        return false;
    }
    if ((*flags & EX_GT) && (*flags & EX_LT)) {
        resp_add_error(&c->out,
                       "ERR GT and LT options at the same time are not "
                       "compatible");
        return false;
    }
    return true;
}

/* Whether the flags let a key whose current time is cur (-1: none) get
 * the time when. */
static bool flags_allow(int flags, int64_t cur, int64_t when)
{
    if ((flags & EX_NX) && cur != -1)
        return false;
    if ((flags & EX_XX) && cur == -1)
        return false;
    /* no timeout is an infinite one: never less than when */
    if ((flags & EX_GT) && (cur == -1 || when <= cur))
        return false;
    if ((flags & EX_LT) && cur != -1 && when >= cur)
        return false;
    return true;
}

static void expire_generic(client_t *c, int argc, const arg_t *argv,
                           expire_kind_t k)
{
    int flags;
    long long when;
    if (!parse_flags(c, argc, argv, &flags))
        return;
    if (!arg_ll(&argv[2], &when)) {
        reply_not_integer(c);
        return;
    }
    if (!k.ms) {
        if (when > LLONG_MAX / 1000 || when < LLONG_MIN / 1000) {
            reply_bad_time(c);
            return;
        }
        when *= 1000;
    }
    int64_t now = expire_now_ms();
    if (!k.absolute) {
        if (when > LLONG_MAX - now) {
            reply_bad_time(c);
            return;
        }
        when += now;
    }
    const arg_t *key = &argv[1];
    int64_t cur;
    if (expire_lookup(c->srv, c->dbnum, key->ptr, key->len, &cur) == NULL) {
        resp_add_int(&c->out, 0);
        return;
    }
    if (!flags_allow(flags, cur, when)) {
        resp_add_int(&c->out, 0);
        return;
    }
    if (when <= now && !c->srv->loading) {
        /* a time in the past deletes the key, as DEL would (and is logged
         * as one); a replay keeps it, as Redis does while loading */
        server_del_key(c->db, key->ptr, key->len,
                       c->srv->cfg->lazyfree_lazy_expire);
        server_key_changed(c->srv, c->dbnum, key->ptr, key->len);
        propagate_replace(c->srv, 2, (const arg_t[]){{"DEL", 3}, *key});
    } else if (expire_set(c->srv, c->dbnum, key->ptr, key->len, when) < 0) {
        resp_add_error(&c->out, ERRTEXT_NOMEM);
        return;
    } else if (propagate_on(c->srv)) {
        /* logged as an absolute time, options kept, as Redis does */
        char buf[24];
        int n = snprintf(buf, sizeof(buf), "%lld", (long long)when);
        propagate_rewrite_arg(c->srv, 0, &(arg_t){"PEXPIREAT", 9});
        propagate_rewrite_arg(c->srv, 2, &(arg_t){buf, (size_t)n});
    }
    server_dirty(c->srv, 1);
    resp_add_int(&c->out, 1);
}

void cmd_expire_expire_proc(client_t *c, int argc, const arg_t *argv)
{
    expire_generic(c, argc, argv, (expire_kind_t){false, false});
}

void cmd_expire_pexpire_proc(client_t *c, int argc, const arg_t *argv)
{
    expire_generic(c, argc, argv, (expire_kind_t){true, false});
}

void cmd_expire_expireat_proc(client_t *c, int argc, const arg_t *argv)
{
    expire_generic(c, argc, argv, (expire_kind_t){false, true});
}

void cmd_expire_pexpireat_proc(client_t *c, int argc, const arg_t *argv)
{
    expire_generic(c, argc, argv, (expire_kind_t){true, true});
}

static void ttl_generic(client_t *c, const arg_t *key, expire_kind_t k)
{
    int64_t when = expire_get(c->srv, c->dbnum, key->ptr, key->len);
    if (when < 0) {
        resp_add_int(&c->out, when);
        return;
    }
    int64_t t = k.absolute ? when : when - expire_now_ms();
    if (t < 0)
        t = 0;
    /* (t + 500) / 1000 without its overflow near INT64_MAX, where
     * redis-server answers the rounded value too (t >= 0 here). */
    int64_t sec = t / 1000 + (t % 1000 + 500) / 1000;
    resp_add_int(&c->out, k.ms ? t : sec);
}

void cmd_expire_ttl_proc(client_t *c, int argc, const arg_t *argv)
{
    (void)argc;
    ttl_generic(c, &argv[1], (expire_kind_t){false, false});
}

void cmd_expire_pttl_proc(client_t *c, int argc, const arg_t *argv)
{
    (void)argc;
    ttl_generic(c, &argv[1], (expire_kind_t){true, false});
}

void cmd_expire_expiretime_proc(client_t *c, int argc, const arg_t *argv)
{
    (void)argc;
    ttl_generic(c, &argv[1], (expire_kind_t){false, true});
}

void cmd_expire_pexpiretime_proc(client_t *c, int argc, const arg_t *argv)
{
    (void)argc;
    ttl_generic(c, &argv[1], (expire_kind_t){true, true});
}

void cmd_expire_persist_proc(client_t *c, int argc, const arg_t *argv)
{
    (void)argc;
    if (expire_lookup(c->srv, c->dbnum, argv[1].ptr, argv[1].len, NULL) ==
        NULL) {
        resp_add_int(&c->out, 0);
        return;
    }
    int rc = expire_clear(c->srv, c->dbnum, argv[1].ptr, argv[1].len);
    if (rc < 0) {
        resp_add_error(&c->out, ERRTEXT_NOMEM);
        return;
    }
    if (rc > 0)
        server_dirty(c->srv, 1);
    resp_add_int(&c->out, rc);
}
