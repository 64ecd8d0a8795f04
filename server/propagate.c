/*
 * propagate.c - see propagate.h. The pending commands of the running
 * top-level command are owned copies (argv.h): the views a command is
 * given die with the read buffer, and a transaction's commands are fed
 * only once EXEC ends.
 */
#include "propagate.h"

#include <stdlib.h>
#include <string.h>

#include "log.h"

enum { MODE_VERBATIM = 0, MODE_NONE = 1, MODE_FORCE = 2 };

typedef struct prop_op {
    int dbnum;
    argv_t *a;
} prop_op_t;

struct propagate {
    prop_op_t *ops;
    size_t n, cap;
    int depth;        /* calls under way: EXEC and the commands it runs */
    prop_frame_t cur; /* the innermost running command */
};

static const arg_t ARG_MULTI = {"MULTI", 5};
static const arg_t ARG_EXEC = {"EXEC", 4};
static const arg_t ARG_DEL = {"DEL", 3};

static struct propagate *state(server_t *s)
{
    if (s->prop == NULL)
        s->prop = calloc(1, sizeof(*s->prop));
    return s->prop;
}

/* A write that cannot be logged would be lost at the next start: as
 * Redis, which aborts when it cannot allocate, the server says so loudly
 * (it cannot reply an error for a command that already ran). */
static void lost(const arg_t *name)
{
    log_warning("Out of memory: the command '%.*s' could not be fed to the "
                "append only file",
                (int)(name->len > 64 ? 64 : name->len), name->ptr);
}

static void push(struct propagate *p, int dbnum, argv_t *a)
{
    if (p->n == p->cap) {
        size_t cap = p->cap ? p->cap * 2 : 8;
        prop_op_t *ops = realloc(p->ops, cap * sizeof(*ops));
        if (ops == NULL) {
            lost(&a->v[0]);
            argv_free(a);
            return;
        }
        p->ops = ops;
        p->cap = cap;
    }
    p->ops[p->n++] = (prop_op_t){dbnum, a};
}

static void feed(server_t *s, int dbnum, int argc, const arg_t *argv)
{
    s->on_propagate(s, dbnum, argc, argv);
}

/* Feeds what the top-level command produced, as Redis 7.0's
 * propagatePendingCommands(): more than one command goes in a
 * transaction, so that a replay applies all of it or none. A feed switched
 * off meanwhile (CONFIG SET appendonly no) gets nothing more. */
static void flush(server_t *s, struct propagate *p)
{
    if (p->n == 0)
        return;
    bool wrap = p->n > 1;
    if (wrap && s->on_propagate != NULL)
        feed(s, p->ops[0].dbnum, 1, &ARG_MULTI);
    for (size_t i = 0; i < p->n; i++) {
        /* The sink may be switched off by a feed (a write error): what
         * remains is freed, not fed. */
        if (s->on_propagate != NULL)
            feed(s, p->ops[i].dbnum, p->ops[i].a->argc, p->ops[i].a->v);
        argv_free(p->ops[i].a);
    }
    if (wrap && s->on_propagate != NULL)
        feed(s, p->ops[p->n - 1].dbnum, 1, &ARG_EXEC);
    p->n = 0;
}

void propagate_call_begin(client_t *c, int argc, const arg_t *argv,
                          prop_frame_t *saved)
{
    struct propagate *p = state(c->srv);
    if (p == NULL) {
        saved->mode = -1;
        return;
    }
    *saved = p->cur;
    p->cur = (prop_frame_t){MODE_VERBATIM, c->dbnum, argc, argv, NULL};
    p->depth++;
}

void propagate_call_end(client_t *c, bool changed, bool exec,
                        const prop_frame_t *saved)
{
    server_t *s = c->srv;
    struct propagate *p = s->prop;
    if (saved->mode < 0 || p == NULL)
        return;
    prop_frame_t *f = &p->cur;
    bool logged =
        !exec && f->mode != MODE_NONE && (changed || f->mode == MODE_FORCE);
    if (logged && p->depth == 1 && p->n == 0) {
        /* The common case, a top-level command that produced nothing
         * else: fed alone, at once, from the views it ran with (no copy);
         * a feed switched off meanwhile gets nothing. */
        if (s->on_propagate != NULL)
            feed(s, f->dbnum, f->own != NULL ? f->own->argc : f->argc,
                 f->own != NULL ? f->own->v : f->argv);
    } else if (logged) {
        argv_t *a = f->own != NULL ? f->own : argv_copy(f->argc, f->argv);
        f->own = NULL;
        if (a == NULL)
            lost(&f->argv[0]);
        else
            push(p, f->dbnum, a);
    }
    argv_free(f->own);
    p->cur = *saved;
    if (--p->depth == 0)
        flush(s, p);
}

/* The running command's frame, or NULL outside a command or with the feed
 * off. */
static prop_frame_t *running(server_t *s)
{
    if (s->on_propagate == NULL || s->prop == NULL || s->prop->depth == 0)
        return NULL;
    return &s->prop->cur;
}

void propagate_rewrite_arg(server_t *s, int i, const arg_t *v)
{
    prop_frame_t *f = running(s);
    if (f == NULL || i < 0)
        return;
    int argc = f->own != NULL ? f->own->argc : f->argc;
    const arg_t *src = f->own != NULL ? f->own->v : f->argv;
    if (i > argc)
        return;
    int n = i == argc ? argc + 1 : argc;
    arg_t *tmp = malloc((size_t)n * sizeof(*tmp));
    argv_t *a = NULL;
    if (tmp != NULL) {
        memcpy(tmp, src, (size_t)argc * sizeof(*tmp));
        tmp[i] = *v;
        a = argv_copy(n, tmp);
        free(tmp);
    }
    if (a == NULL) {
        lost(&src[0]);
        return;
    }
    argv_free(f->own);
    f->own = a;
}

void propagate_replace(server_t *s, int argc, const arg_t *argv)
{
    prop_frame_t *f = running(s);
    if (f == NULL)
        return;
    argv_t *a = argv_copy(argc, argv);
    if (a == NULL) {
        lost(&argv[0]);
        return;
    }
    argv_free(f->own);
    f->own = a;
}

void propagate_none(server_t *s)
{
    prop_frame_t *f = running(s);
    if (f != NULL)
        f->mode = MODE_NONE;
}

void propagate_force(server_t *s)
{
    prop_frame_t *f = running(s);
    if (f != NULL && f->mode == MODE_VERBATIM)
        f->mode = MODE_FORCE;
}

void propagate_also(server_t *s, int dbnum, int argc, const arg_t *argv)
{
    if (s->on_propagate == NULL)
        return;
    struct propagate *p = state(s);
    if (p == NULL || p->depth == 0) {
        feed(s, dbnum, argc, argv);
        return;
    }
    argv_t *a = argv_copy(argc, argv);
    if (a == NULL)
        lost(&argv[0]);
    else
        push(p, dbnum, a);
}

void propagate_deletion(server_t *s, int dbnum, const void *key, size_t len)
{
    if (s->on_propagate == NULL)
        return;
    const arg_t argv[2] = {ARG_DEL, {key, len}};
    propagate_also(s, dbnum, 2, argv);
}

void propagate_free(server_t *s)
{
    struct propagate *p = s->prop;
    if (p == NULL)
        return;
    for (size_t i = 0; i < p->n; i++)
        argv_free(p->ops[i].a);
    free(p->ops);
    argv_free(p->cur.own);
    free(p);
    s->prop = NULL;
}
