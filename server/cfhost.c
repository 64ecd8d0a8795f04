/*
 * cfhost.c - see cfhost.h. The reply sink writes into the client's resp_out;
 * keys live in the client's SELECTed database; a change counts as dirty and
 * recounts the key's memory.
 */
#include "cfhost.h"

#include <stdlib.h>
#include <string.h>

#include "cfcmd.h"
#include "expire.h"
#include "propagate.h"
#include "server_int.h"

static int h_find(void *h, const arg_t *key, bool read, cf_filter_t **out)
{
    client_t *c = h;
    *out = expire_lookup(c->srv, c->dbnum, key->ptr, key->len, NULL);
    if (read)
        server_keyspace_hit(c->srv, *out != NULL);
    return 0; /* every key of the daemon is a filter */
}

/* A new filter's hash seed is random: the log carries it as the header
 * of the new, empty filter, CF.LOADCHUNK key 1 <header> (as the module
 * replicates it), before or instead of the command, as the command's
 * table entry says (cfcmd_created_t). */
static void log_created(client_t *c, const arg_t *key, const cf_filter_t *f)
{
    const cfcmd_def_t *d = c->cmd->data;
    if (d->created == CFCMD_CREATED_SELF)
        return;
    unsigned char hdr[CF_HEADER_MAX];
    size_t len = cf_header_len(f);
    cf_header_write(f, hdr);
    const arg_t argv[4] = {
        {"CF.LOADCHUNK", 12}, *key, {"1", 1}, {(const char *)hdr, len}};
    if (d->created == CFCMD_CREATED_INSTEAD)
        propagate_replace(c->srv, 4, argv);
    else
        propagate_also(c->srv, c->dbnum, 4, argv);
}

static int h_create(void *h, const arg_t *key, cf_filter_t **f)
{
    client_t *c = h;
    if (propagate_on(c->srv))
        log_created(c, key, *f);
    return ks_add(c->db, key->ptr, key->len, f);
}

static void h_changed(void *h, const arg_t *key, cf_filter_t *f,
                      uint64_t changes)
{
    client_t *c = h;
    (void)f;
    ks_recount(c->db, key->ptr, key->len);
    server_dirty(c->srv, changes);
    server_key_changed(c->srv, c->dbnum, key->ptr, key->len);
}

static uint64_t h_headroom(void *h, bool *maxmemory)
{
    client_t *c = h;
    /* A replay is bound by the machine only, as Redis's AOF client. */
    if (c->srv->loading) {
        uint64_t phys = c->srv->phys_memory, used = server_used_memory(c->srv);
        *maxmemory = false;
        return phys == UINT64_MAX ? phys : phys > used ? phys - used : 0;
    }
    *maxmemory = server_cfg(c->srv)->maxmemory != 0;
    return server_memory_headroom(c->srv);
}

static uint64_t h_seed(void *h)
{
    client_t *c = h;
    return server_seed(c->srv);
}

static const cfcmd_defaults_t *h_defaults(void *h)
{
    client_t *c = h;
    /* The live configuration's: CONFIG SET changes them in place. */
    return &server_cfg(c->srv)->cf;
}

static int h_proto(void *h)
{
    return ((client_t *)h)->out.proto;
}

static void h_int(void *h, long long v)
{
    resp_add_int(&((client_t *)h)->out, v);
}

static void h_bool(void *h, bool b)
{
    resp_add_bool(&((client_t *)h)->out, b);
}

static void h_simple(void *h, const char *s)
{
    resp_add_simple(&((client_t *)h)->out, s);
}

static void h_error(void *h, const char *s)
{
    resp_add_error(&((client_t *)h)->out, s);
}

static void h_bulk(void *h, const void *p, size_t len)
{
    resp_add_bulk(&((client_t *)h)->out, p, len);
}

static void h_null(void *h)
{
    resp_add_null(&((client_t *)h)->out);
}

static void h_double(void *h, double d)
{
    resp_add_double(&((client_t *)h)->out, d);
}

static void h_array(void *h, size_t n)
{
    resp_add_array(&((client_t *)h)->out, n);
}

static void h_map(void *h, size_t n)
{
    resp_add_map(&((client_t *)h)->out, n);
}

static void h_bools(void *h, const bool *v, size_t n)
{
    resp_add_bools(&((client_t *)h)->out, v, n);
}

/* The wall clock, moved by the hidden cf-window-clock-offset; none while
 * the AOF is replayed (its commands carry their times). */
static uint64_t h_now_ms(void *h)
{
    client_t *c = h;
    if (c->srv->loading)
        return CFCMD_NO_CLOCK;
    int64_t t = expire_window_now_ms(c->srv);
    return t > 0 ? (uint64_t)t : 0;
}

static void h_log_timed(void *h, bool nx, const arg_t *key, uint64_t at,
                        const arg_t *items, size_t nitems)
{
    client_t *c = h;
    if (!propagate_on(c->srv))
        return;
    char ms[CFCMD_MS_LEN];
    arg_t head[CFCMD_TIMED_HEAD];
    size_t nh = cfcmd_timed_form(nx, key, at, ms, head);
    size_t n = nh + nitems;
    arg_t *v = malloc(n * sizeof(*v));
    if (v == NULL)
        return; /* logged as sent: only its time is lost */
    memcpy(v, head, nh * sizeof(*v));
    memcpy(v + nh, items, nitems * sizeof(*v));
    propagate_replace(c->srv, (int)n, v);
    free(v);
}

static const cfcmd_host_t host = {
    CFCMD_HOST_INIT_FIELDS(h_),
    .reply_bools = h_bools,
    .now_ms = h_now_ms,
    .log_timed = h_log_timed,
};

static void cf_proc(client_t *c, int argc, const arg_t *argv)
{
    const cfcmd_def_t *d = c->cmd->data;
    d->proc(&host, c, argc, argv);
}

/* The dispatcher gives the first min(argc, 3) arguments of a command
 * ahead; the command layer's prefetch reads no more. */
static void cf_proc_prefetch(client_t *c, const cmd_def_t *def, int argc,
                             const arg_t *argv)
{
    const cfcmd_def_t *d = def->data;
    d->prefetch(&host, c, argc, argv);
}

const cmd_def_t *cfhost_table(void)
{
    static cmd_def_t table[32];
    static bool built;
    if (!built) {
        size_t n = 0;
        for (const cfcmd_def_t *d = cfcmd_table; d->name != NULL; d++) {
            if (n + 1 >= sizeof(table) / sizeof(table[0]))
                return NULL;
            table[n++] = (cmd_def_t){
                .name = d->name,
                .arity = d->arity,
                .flags = d->flags,
                .proc = cf_proc,
                .prefetch = d->prefetch != NULL ? cf_proc_prefetch : NULL,
                .data = d,
                .first_key = 1,
                .last_key = 1,
                .key_step = 1,
                .acl = d->acl,
                .group = CFCMD_GROUP,
                .summary = d->summary,
                .since = d->since,
                .complexity = d->complexity,
                .args = d->args,
            };
            memcpy(table[n - 1].keyspecs, d->keyspecs, sizeof(d->keyspecs));
        }
        table[n] = (cmd_def_t){.name = NULL};
        built = true;
    }
    return table;
}
