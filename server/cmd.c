/*
 * cmd.c - see cmd.h.
 *
 * The index is an open-addressing hash table over the lower-cased names of
 * every top-level command, built once; each slot also carries the command's
 * call counters for INFO commandstats.
 */
#include "cmd.h"

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "acl.h"
#include "cmdclock.h"
#include "conn.h"
#include "errtext.h"
#include "latency.h"
#include "monitor.h"
#include "multi.h"
#include "propagate.h"
#include "reply.h"
#include "slowlog.h"
#include "util.h"

typedef struct cmd_entry {
    const cmd_def_t *def;
    uint64_t hash;
    uint64_t calls;
    uint64_t nsec; /* summed in ns: sub-microsecond calls must count */
    uint64_t rejected;
    uint64_t failed; /* called, and replied with an error */
    /* The command's ACL id, and that of its first subcommand (the others
     * follow in table order). */
    unsigned id, sub_base;
} cmd_entry_t;

struct cmd_index {
    cmd_entry_t *slots; /* power-of-two sized, open addressing */
    size_t nslots;
    const cmd_entry_t **order; /* table order, for COMMAND and INFO */
    size_t n;
    /* The entry found last: a pipeline mostly repeats one command, and
     * comparing its name is cheaper than hashing it. last_raw holds the
     * name as the client spelled it then (last_len bytes), so a repeat in
     * the same case is one memcmp without folding. */
    cmd_entry_t *last;
    size_t last_len;
    char last_raw[CMD_NAME_MAX];
    /* Every command and subcommand by ACL id, with its parent (NULL for a
     * top-level command). */
    const cmd_def_t **by_id, **parent_of;
    size_t nids;
};

/* ASCII lower case, without the locale lookup of tolower(). */
static inline unsigned char fold(unsigned char ch)
{
    return ch >= 'A' && ch <= 'Z' ? (unsigned char)(ch + ('a' - 'A')) : ch;
}

/* FNV-1a over the lower-cased bytes. */
static uint64_t name_hash(const char *s, size_t len)
{
    uint64_t h = 1469598103934665603ull;
    for (size_t i = 0; i < len; i++) {
        h ^= fold((unsigned char)s[i]);
        h *= 1099511628211ull;
    }
    return h;
}

static bool name_eq(const char *lower, const char *s, size_t len)
{
    for (size_t i = 0; i < len; i++)
        if (lower[i] == '\0' || lower[i] != (char)fold((unsigned char)s[i]))
            return false;
    return lower[len] == '\0';
}

/* Whether the len bytes at a and b are equal: short names (most) in two
 * overlapping loads each, without a call. */
static inline bool same_name(const char *a, const char *b, size_t len)
{
    uint64_t x, y, u, v;
    if (len >= 8 && len <= 16) {
        memcpy(&x, a, 8);
        memcpy(&y, b, 8);
        memcpy(&u, a + len - 8, 8);
        memcpy(&v, b + len - 8, 8);
        return ((x ^ y) | (u ^ v)) == 0;
    }
    if (len >= 4 && len < 8) {
        uint32_t p, q, r, t;
        memcpy(&p, a, 4);
        memcpy(&q, b, 4);
        memcpy(&r, a + len - 4, 4);
        memcpy(&t, b + len - 4, 4);
        return ((p ^ q) | (r ^ t)) == 0;
    }
    return memcmp(a, b, len) == 0;
}

static size_t table_len(const cmd_def_t *t)
{
    size_t n = 0;
    while (t != NULL && t[n].name != NULL)
        n++;
    return n;
}

static int index_add(cmd_index_t *ix, const cmd_def_t *d)
{
    /* A container without a proc of its own must take a subcommand, so
     * that admit() never returns a definition without a proc. */
    if (d->proc == NULL && (d->subcommands == NULL || d->arity > -2))
        return -EINVAL;
    uint64_t h = name_hash(d->name, strlen(d->name));
    size_t i = (size_t)h & (ix->nslots - 1);
    while (ix->slots[i].def != NULL) {
        if (strcmp(ix->slots[i].def->name, d->name) == 0)
            return -EEXIST;
        i = (i + 1) & (ix->nslots - 1);
    }
    ix->slots[i].def = d;
    ix->slots[i].hash = h;
    ix->order[ix->n++] = &ix->slots[i];
    ix->slots[i].id = (unsigned)ix->nids;
    ix->by_id[ix->nids] = d;
    ix->parent_of[ix->nids++] = NULL;
    ix->slots[i].sub_base = (unsigned)ix->nids;
    for (const cmd_def_t *sub = d->subcommands; sub != NULL && sub->name;
         sub++) {
        ix->by_id[ix->nids] = sub;
        ix->parent_of[ix->nids++] = d;
    }
    return 0;
}

int cmd_index_build(server_t *s, const cmd_def_t *const *tables, size_t ntables,
                    const char **dup)
{
    size_t total = 0, ids = 0;
    int rc;
    *dup = NULL;
    for (size_t t = 0; t < ntables; t++) {
        total += table_len(tables[t]);
        for (size_t i = 0; i < table_len(tables[t]); i++)
            ids += 1 + table_len(tables[t][i].subcommands);
    }
    cmd_index_t *ix = calloc(1, sizeof(*ix));
    if (ix == NULL)
        return -ENOMEM;
    ix->nslots = 16;
    while (ix->nslots < total * 2)
        ix->nslots *= 2;
    ix->slots = calloc(ix->nslots, sizeof(ix->slots[0]));
    ix->order = calloc(total + 1, sizeof(ix->order[0]));
    ix->by_id = calloc(ids + 1, sizeof(ix->by_id[0]));
    ix->parent_of = calloc(ids + 1, sizeof(ix->parent_of[0]));
    if (ix->slots == NULL || ix->order == NULL || ix->by_id == NULL ||
        ix->parent_of == NULL) {
        free(ix->slots);
        free(ix->order);
        free(ix->by_id);
        free(ix->parent_of);
        free(ix);
        return -ENOMEM;
    }
    s->cmds = ix;
    for (size_t t = 0; t < ntables; t++)
        for (size_t i = 0; i < table_len(tables[t]); i++)
            if ((rc = index_add(ix, &tables[t][i])) < 0) {
                *dup = tables[t][i].name;
                cmd_index_free(s);
                return rc;
            }
    return 0;
}

void cmd_index_free(server_t *s)
{
    if (s->cmds == NULL)
        return;
    free(s->cmds->slots);
    free(s->cmds->order);
    free(s->cmds->by_id);
    free(s->cmds->parent_of);
    free(s->cmds);
    s->cmds = NULL;
}

static cmd_entry_t *lookup_entry(const server_t *s, const char *name,
                                 size_t len)
{
    cmd_index_t *ix = s->cmds;
    if (len == 0 || len > CMD_NAME_MAX)
        return NULL;
    if (len == ix->last_len && same_name(name, ix->last_raw, len))
        return ix->last;
    cmd_entry_t *e = NULL;
    if (ix->last != NULL && name_eq(ix->last->def->name, name, len)) {
        e = ix->last;
    } else {
        uint64_t h = name_hash(name, len);
        size_t i = (size_t)h & (ix->nslots - 1);
        while (ix->slots[i].def != NULL) {
            if (ix->slots[i].hash == h &&
                name_eq(ix->slots[i].def->name, name, len)) {
                e = &ix->slots[i];
                break;
            }
            i = (i + 1) & (ix->nslots - 1);
        }
        if (e == NULL)
            return NULL;
    }
    ix->last = e;
    ix->last_len = len;
    memcpy(ix->last_raw, name, len);
    return e;
}

const cmd_def_t *cmd_lookup(const server_t *s, const char *name, size_t len)
{
    cmd_entry_t *e = lookup_entry(s, name, len);
    return e != NULL ? e->def : NULL;
}

const cmd_def_t *cmd_find_sub(const cmd_def_t *parent, const char *name,
                              size_t len)
{
    for (const cmd_def_t *d = parent->subcommands; d != NULL && d->name; d++)
        if (name_eq(d->name, name, len))
            return d;
    return NULL;
}

/* The ACL id of e's command, or of its subcommand sub. */
static unsigned entry_id(const cmd_entry_t *e, const cmd_def_t *sub)
{
    return sub != NULL ? e->sub_base + (unsigned)(sub - e->def->subcommands)
                       : e->id;
}

static bool arity_ok(int arity, int argc)
{
    return arity >= 0 ? argc == arity : argc >= -arity;
}

/* The checks every command passes before it runs, in Redis's order: arity,
 * subcommand, authentication. The definition to run, or NULL after the
 * refusal's reply (the caller counts it). */
static const cmd_def_t *admit(client_t *c, cmd_entry_t *e, int argc,
                              const arg_t *argv)
{
    const cmd_def_t *d = e->def;
    c->cmd = d;
    c->sub = NULL;
    if (!arity_ok(d->arity, argc)) {
        reply_wrong_arity(c, d->name);
        return NULL;
    }
    if (d->subcommands != NULL && argc >= 2) {
        const cmd_def_t *sub = cmd_find_sub(d, argv[1].ptr, argv[1].len);
        if (sub == NULL) {
            reply_unknown_subcommand(c, d->name, &argv[1]);
            return NULL;
        }
        if (!arity_ok(sub->arity, argc)) {
            char full[2 * CMD_NAME_MAX + 2];
            snprintf(full, sizeof(full), "%s|%s", d->name, sub->name);
            reply_wrong_arity(c, full);
            return NULL;
        }
        c->sub = sub;
        d = sub;
    }
    server_t *s = c->srv;
    if (!c->authenticated && s->auth_required && !(d->flags & CMD_NOAUTH)) {
        resp_add_error(&c->out, ERRTEXT_NOAUTH);
        return NULL;
    }
    /* As Redis: SAVE or SHUTDOWN cannot wait in a transaction's queue. */
    if ((d->flags & CMD_NO_MULTI) && c->mstate != NULL && multi_active(c)) {
        resp_add_error(&c->out, "ERR Command not allowed inside a transaction");
        return NULL;
    }
    /* As Redis's processCommand(): the user's permissions next, so that a
     * refused command is logged as a denial whatever later check would
     * have refused it. The replaying client of a file of commands has no
     * user, as Redis's AOF client: it may run everything. */
    if (s->acl != NULL && !s->loading &&
        !acl_allows(c, entry_id(e, c->sub), d, argc, argv,
                    c->mstate != NULL && multi_active(c) ? CMD_ACL_MULTI
                                                         : CMD_ACL_TOP))
        return NULL;
    return d;
}

/* Whether a command with flags d_flags waits for CLIENT PAUSE to end: as
 * Redis 7, PAUSE ALL holds every command, PAUSE WRITE those that may
 * write. */
static bool paused_for(const server_t *s, unsigned d_flags)
{
    if (s->pause_kind == 0 || server_now_ms(s) >= s->pause_end_ms)
        return false;
    return s->pause_kind == SERVER_PAUSE_ALL || (d_flags & CMD_WRITE);
}

/* After a call of a connection's command that took ns: the slow log,
 * MONITOR and the latency monitor's command events (Redis splits those by
 * the "fast" flag). A command replayed from a file is no client's (as
 * Redis's AOF client, never in the slow log or MONITOR), and a client
 * without a connection has no address to log. */
static void record_call(client_t *c, const resp_cmd_t *cmd, uint64_t ns)
{
    server_t *s = c->srv;
    if (s->loading || !c->is_conn)
        return;
    /* Most calls are recorded nowhere: nobody monitors, and the call took
     * less than both thresholds (the same tests the recorders make). */
    const cfg_t *cfg = s->cfg;
    if (s->nmonitors == 0 &&
        (cfg->slowlog_log_slower_than < 0 || cfg->slowlog_max_len == 0 ||
         ns / 1000 < (uint64_t)cfg->slowlog_log_slower_than) &&
        (cfg->latency_monitor_threshold == 0 ||
         ns / 1000000 < cfg->latency_monitor_threshold))
        return;
    const cmd_def_t *d = c->sub != NULL ? c->sub : c->cmd;
    /* EXEC's commands are logged one by one, not EXEC itself. */
    if (d == NULL || !(d->flags & CMD_SKIP_SLOWLOG))
        slowlog_record(s, c, cmd, ns / 1000, conn_addr(c));
    monitor_feed(c, cmd);
    latency_add(s,
                d != NULL && (d->flags & CMD_FAST) ? "fast-command" : "command",
                ns / 1000000);
}

/* Runs d (e's command or subcommand) and counts the call. */
static void call(client_t *c, cmd_entry_t *e, const cmd_def_t *d,
                 const resp_cmd_t *cmd)
{
    server_t *s = c->srv;
    size_t out_before = c->out.len;
    /* The call failed when its reply is an error: one that starts where
     * its reply does (a transaction's commands reply inside EXEC's). */
    c->out.error_at = RESP_OUT_NO_ERROR;
    if (!propagate_on(s)) {
        d->proc(c, cmd->argc, cmd->argv);
    } else {
        /* As Redis's call(): a write is logged when it changed data (the
         * dirty counter moved: a save resets it, hence the inequality). */
        prop_frame_t fr;
        uint64_t dirty = s->dirty;
        propagate_call_begin(c, cmd->argc, cmd->argv, &fr);
        d->proc(c, cmd->argc, cmd->argv);
        propagate_call_end(c, (d->flags & CMD_WRITE) && s->dirty != dirty,
                           multi_is_exec(e->def), &fr);
    }
    uint64_t now = cmdclock_now();
    uint64_t took = now - s->cmd_clock;
    e->nsec += took;
    s->cmd_clock = now;
    /* One clock reading per command: what recording takes counts towards
     * the next command (it only takes time when it records). */
    record_call(c, cmd, took);
    e->calls++;
    if (c->out.error_at == out_before)
        e->failed++;
    s->total_commands++;
}

/* A refusal whose reply starts at reply_at, counted on e (NULL for an
 * unknown command): in a transaction it dooms EXEC, and a refused EXEC
 * discards the transaction (multi.h). */
static void refused(client_t *c, cmd_entry_t *e, size_t reply_at)
{
    if (e != NULL)
        e->rejected++;
    if (c->mstate != NULL || (e != NULL && multi_is_exec(e->def)))
        multi_rejected(c, e != NULL ? e->def : NULL, reply_at);
}

bool cmd_dispatch(client_t *c, const resp_cmd_t *cmd)
{
    server_t *s = c->srv;
    size_t reply_at = c->out.len;
    cmd_entry_t *e = lookup_entry(s, cmd->argv[0].ptr, cmd->argv[0].len);
    if (e == NULL) {
        reply_unknown_command(c, cmd);
        refused(c, NULL, reply_at);
        return true;
    }
    const cmd_def_t *d = admit(c, e, cmd->argc, cmd->argv);
    if (d == NULL) {
        refused(c, e, reply_at);
        return true;
    }
    /* In a transaction every command but those that end it is queued;
     * EXEC stands for the flags of what it runs. */
    unsigned flags = d->flags;
    bool queue = false;
    if (c->mstate != NULL && multi_active(c)) {
        queue = !multi_runs_now(e->def);
        if (multi_is_exec(e->def))
            flags |= multi_queued_flags(c);
    }
    /* As Redis: queuing may take any amount of memory, so over maxmemory
     * a transaction takes nothing more (it can still end). */
    if (((flags & CMD_DENYOOM) || queue) && s->cfg->maxmemory > 0 &&
        !s->loading && server_used_memory(s) > s->cfg->maxmemory) {
        resp_add_error(&c->out, ERRTEXT_OOM);
        refused(c, e, reply_at);
        return true;
    }
    const char *denied;
    if ((flags & CMD_WRITE) && (denied = server_writes_denied(s)) &&
        !s->loading) {
        resp_add_error(&c->out, denied);
        refused(c, e, reply_at);
        return true;
    }
    /* As Redis while it loads its files at start-up: only what is flagged
     * `loading` runs for the clients (the replaying client is not one). */
    if (s->load.active && !s->loading && !(d->flags & CMD_LOADING)) {
        resp_add_error(&c->out, ERRTEXT_LOADING);
        refused(c, e, reply_at);
        return true;
    }
    /* Last of the checks, as in Redis: a command that would be refused is
     * refused at once, even during a pause; a command queued in a
     * transaction waits as the same command would outside it. */
    if (paused_for(s, flags) && !s->loading)
        return false;
    if (queue) {
        multi_queue(c, e, d->flags, cmd->argc, cmd->argv);
        return true;
    }
    call(c, e, d, cmd);
    return true;
}

void cmd_run_queued(client_t *c, const void *cmd, const argv_t *a)
{
    cmd_entry_t *e = (cmd_entry_t *)cmd;
    const cmd_def_t *d = e->def;
    c->cmd = d;
    c->sub = NULL;
    if (d->subcommands != NULL && a->argc >= 2 &&
        (c->sub = cmd_find_sub(d, a->v[1].ptr, a->v[1].len)) != NULL)
        d = c->sub;
    /* As Redis's EXEC: permissions changed since the command was queued
     * refuse it now, the rest of the transaction runs. */
    server_t *s = c->srv;
    if (s->acl != NULL && !s->loading &&
        !acl_allows(c, entry_id(e, c->sub), d, a->argc, a->v, CMD_ACL_EXEC))
        return;
    resp_cmd_t rc = {.argc = a->argc, .argv = (arg_t *)a->v};
    call(c, e, d, &rc);
}

void cmd_prefetch_queued(client_t *c, const void *cmd, const argv_t *a)
{
    const cmd_def_t *d = ((const cmd_entry_t *)cmd)->def;
    if (d->prefetch != NULL)
        d->prefetch(c, d, a->argc, a->v);
}

bool cmd_prefetches(client_t *c, const resp_peek_t *next)
{
    if (c->mstate != NULL && multi_active(c))
        return false;
    const cmd_entry_t *e =
        lookup_entry(c->srv, next->argv[0].ptr, next->argv[0].len);
    return e != NULL && e->def->prefetch != NULL;
}

void cmd_prefetch(client_t *c, const resp_peek_t *next, size_t n)
{
    /* What a transaction queues is prefetched when EXEC runs it. */
    if (c->mstate != NULL && multi_active(c))
        return;
    for (size_t i = 0; i < n; i++) {
        const resp_peek_t *pk = &next[i];
        const cmd_entry_t *e =
            lookup_entry(c->srv, pk->argv[0].ptr, pk->argv[0].len);
        if (e == NULL || e->def->prefetch == NULL ||
            !arity_ok(e->def->arity, pk->argc))
            continue;
        /* A client that may not run the command must not make the server
         * touch its key's memory either. */
        if (!c->authenticated && c->srv->auth_required &&
            !(e->def->flags & CMD_NOAUTH))
            continue;
        e->def->prefetch(c, e->def, pk->argc, pk->argv);
    }
}

void cmd_stats_each(const server_t *s, cmd_stat_fn *fn, void *ctx)
{
    const cmd_index_t *ix = s->cmds;
    for (size_t i = 0; i < ix->n; i++)
        if (ix->order[i]->calls > 0 || ix->order[i]->rejected > 0)
            fn(ctx, ix->order[i]->def->name, ix->order[i]->calls,
               ix->order[i]->nsec / 1000, ix->order[i]->rejected,
               ix->order[i]->failed);
}

void cmd_stats_reset(server_t *s)
{
    const cmd_index_t *ix = s->cmds;
    for (size_t i = 0; i < ix->n; i++) {
        cmd_entry_t *e = (cmd_entry_t *)ix->order[i];
        e->calls = e->nsec = e->rejected = e->failed = 0;
    }
}

size_t cmd_id_count(const server_t *s)
{
    return s->cmds->nids;
}

const cmd_def_t *cmd_by_id(const server_t *s, unsigned id,
                           const cmd_def_t **parent)
{
    if (id >= s->cmds->nids)
        return NULL;
    if (parent != NULL)
        *parent = s->cmds->parent_of[id];
    return s->cmds->by_id[id];
}

int cmd_id_of(const server_t *s, const cmd_def_t *d)
{
    for (size_t i = 0; i < s->cmds->nids; i++)
        if (s->cmds->by_id[i] == d)
            return (int)i;
    return -1;
}

size_t cmd_count(const server_t *s)
{
    return s->cmds->n;
}

const cmd_def_t *cmd_at(const server_t *s, size_t i)
{
    return s->cmds->order[i]->def;
}

uint64_t cmd_acl_cats(const cmd_def_t *d)
{
    return cmd_acl_implied(d->flags, d->acl);
}

int cmd_keys_each(const cmd_def_t *d, int argc, cmd_key_fn *fn, void *ctx)
{
    if (d->keyspecs[0].begin == 0) {
        if (d->first_key <= 0)
            return 0;
        /* The legacy range in a spec's terms. */
        cmd_keyspec_t legacy = {
            .begin = d->first_key,
            .last = d->last_key < 0 ? d->last_key : d->last_key - d->first_key,
            .step = d->key_step,
        };
        return cmd_keyspec_each(&legacy, argc, fn, ctx);
    }
    for (int k = 0; k < CMD_MAX_KEYSPECS && d->keyspecs[k].begin != 0; k++) {
        int rc = cmd_keyspec_each(&d->keyspecs[k], argc, fn, ctx);
        if (rc != 0)
            return rc;
    }
    return 0;
}
