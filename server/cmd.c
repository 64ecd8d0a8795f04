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

#include "cmdclock.h"
#include "errtext.h"
#include "glob.h"
#include "reply.h"
#include "util.h"

#define CMD_NAME_MAX 64

typedef struct cmd_entry {
    const cmd_def_t *def;
    uint64_t hash;
    uint64_t calls;
    uint64_t nsec; /* summed in ns: sub-microsecond calls must count */
    uint64_t rejected;
    uint64_t failed; /* called, and replied with an error */
} cmd_entry_t;

struct cmd_index {
    cmd_entry_t *slots; /* power-of-two sized, open addressing */
    size_t nslots;
    const cmd_entry_t **order; /* table order, for COMMAND and INFO */
    size_t n;
    /* The entry found last: a pipeline mostly repeats one command, and
     * comparing its name is cheaper than hashing it. */
    cmd_entry_t *last;
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
    return 0;
}

int cmd_index_build(server_t *s, const cmd_def_t *const *tables, size_t ntables,
                    const char **dup)
{
    size_t total = 0;
    int rc;
    *dup = NULL;
    for (size_t t = 0; t < ntables; t++)
        total += table_len(tables[t]);
    cmd_index_t *ix = calloc(1, sizeof(*ix));
    if (ix == NULL)
        return -ENOMEM;
    ix->nslots = 16;
    while (ix->nslots < total * 2)
        ix->nslots *= 2;
    ix->slots = calloc(ix->nslots, sizeof(ix->slots[0]));
    ix->order = calloc(total + 1, sizeof(ix->order[0]));
    if (ix->slots == NULL || ix->order == NULL) {
        free(ix->slots);
        free(ix->order);
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
    free(s->cmds);
    s->cmds = NULL;
}

static cmd_entry_t *lookup_entry(const server_t *s, const char *name,
                                 size_t len)
{
    cmd_index_t *ix = s->cmds;
    if (len == 0 || len > CMD_NAME_MAX)
        return NULL;
    if (ix->last != NULL && name_eq(ix->last->def->name, name, len))
        return ix->last;
    uint64_t h = name_hash(name, len);
    size_t i = (size_t)h & (ix->nslots - 1);
    while (ix->slots[i].def != NULL) {
        if (ix->slots[i].hash == h &&
            name_eq(ix->slots[i].def->name, name, len))
            return ix->last = &ix->slots[i];
        i = (i + 1) & (ix->nslots - 1);
    }
    return NULL;
}

static const cmd_def_t *cmd_lookup(const server_t *s, const char *name, size_t len)
{
    cmd_entry_t *e = lookup_entry(s, name, len);
    return e != NULL ? e->def : NULL;
}

static const cmd_def_t *cmd_find_sub(const cmd_def_t *parent, const char *name,
                              size_t len)
{
    for (const cmd_def_t *d = parent->subcommands; d != NULL && d->name; d++)
        if (name_eq(d->name, name, len))
            return d;
    return NULL;
}

static bool arity_ok(int arity, int argc)
{
    return arity >= 0 ? argc == arity : argc >= -arity;
}

/* The checks every command passes before it runs, in Redis's order: arity,
 * subcommand, authentication. The definition to run, or NULL after the
 * refusal's reply (counted on e). */
static const cmd_def_t *admit(client_t *c, cmd_entry_t *e, int argc,
                              const arg_t *argv)
{
    const cmd_def_t *d = e->def;
    c->cmd = d;
    c->sub = NULL;
    if (!arity_ok(d->arity, argc)) {
        reply_wrong_arity(c, d->name);
        e->rejected++;
        return NULL;
    }
    if (d->subcommands != NULL && argc >= 2) {
        const cmd_def_t *sub = cmd_find_sub(d, argv[1].ptr, argv[1].len);
        if (sub == NULL) {
            reply_unknown_subcommand(c, d->name, &argv[1]);
            e->rejected++;
            return NULL;
        }
        if (!arity_ok(sub->arity, argc)) {
            char full[2 * CMD_NAME_MAX + 2];
            snprintf(full, sizeof(full), "%s|%s", d->name, sub->name);
            reply_wrong_arity(c, full);
            e->rejected++;
            return NULL;
        }
        c->sub = sub;
        d = sub;
    }
    if (!c->authenticated && !(d->flags & CMD_NOAUTH)) {
        resp_add_error(&c->out, ERRTEXT_NOAUTH);
        e->rejected++;
        return NULL;
    }
    return d;
}

void cmd_dispatch(client_t *c, const resp_cmd_t *cmd)
{
    server_t *s = c->srv;
    cmd_entry_t *e = lookup_entry(s, cmd->argv[0].ptr, cmd->argv[0].len);
    if (e == NULL) {
        reply_unknown_command(c, cmd);
        return;
    }
    const cmd_def_t *d = admit(c, e, cmd->argc, cmd->argv);
    if (d == NULL)
        return;
    if ((d->flags & CMD_DENYOOM) && s->cfg->maxmemory > 0 &&
        server_used_memory(s) > s->cfg->maxmemory) {
        resp_add_error(&c->out, ERRTEXT_OOM);
        e->rejected++;
        return;
    }
    const char *denied;
    if ((d->flags & CMD_WRITE) && (denied = server_writes_denied(s))) {
        resp_add_error(&c->out, denied);
        e->rejected++;
        return;
    }
    size_t out_before = c->out.len;
    d->proc(c, cmd->argc, cmd->argv);
    uint64_t now = cmdclock_now();
    uint64_t took = now - s->cmd_clock;
    e->nsec += took;
    s->cmd_clock = now;
    /* One clock reading per command: what the hook takes counts towards
     * the next command (it only takes time when it records). */
    if (s->on_call != NULL)
        s->on_call(c, cmd, took);
    e->calls++;
    if (c->out.len > out_before && c->out.buf[out_before] == '-')
        e->failed++;
    s->total_commands++;
}

void cmd_prefetch(client_t *c, const resp_peek_t *next, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        const resp_peek_t *pk = &next[i];
        const cmd_entry_t *e =
            lookup_entry(c->srv, pk->argv[0].ptr, pk->argv[0].len);
        if (e == NULL || e->def->prefetch == NULL ||
            !arity_ok(e->def->arity, pk->argc))
            continue;
        /* A client that may not run the command must not make the server
         * touch its key's memory either. */
        if (!c->authenticated && !(e->def->flags & CMD_NOAUTH))
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

/* ---- COMMAND ----------------------------------------------------------- */

static void add_flags(resp_out_t *o, unsigned flags)
{
    static const struct {
        unsigned bit;
        const char *name;
    } names[] = {
        {CMD_WRITE, "write"},     {CMD_READONLY, "readonly"},
        {CMD_DENYOOM, "denyoom"}, {CMD_ADMIN, "admin"},
        {CMD_NOAUTH, "no_auth"},  {CMD_LOADING, "loading"},
        {CMD_STALE, "stale"},     {CMD_FAST, "fast"},
    };
    size_t n = 0;
    for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
        if (flags & names[i].bit)
            n++;
    resp_add_set(o, n);
    for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
        if (flags & names[i].bit)
            resp_add_simple(o, names[i].name);
}

static void add_acl_categories(resp_out_t *o, const cmd_def_t *d)
{
    const char *cats[6];
    size_t n = 0;
    if (d->flags & CMD_WRITE)
        cats[n++] = "@write";
    if (d->flags & CMD_READONLY)
        cats[n++] = "@read";
    if (d->flags & CMD_FAST)
        cats[n++] = "@fast";
    else
        cats[n++] = "@slow";
    if (d->flags & CMD_ADMIN)
        cats[n++] = "@admin";
    if (d->group != NULL && strcmp(d->group, "connection") == 0)
        cats[n++] = "@connection";
    resp_add_set(o, n);
    for (size_t i = 0; i < n; i++)
        resp_add_simple(o, cats[i]);
}

static size_t def_count(const cmd_def_t *t)
{
    return table_len(t);
}

static void add_info(resp_out_t *o, const cmd_def_t *d, const char *parent)
{
    char full[2 * CMD_NAME_MAX + 2];
    if (parent != NULL)
        snprintf(full, sizeof(full), "%s|%s", parent, d->name);
    else
        snprintf(full, sizeof(full), "%s", d->name);
    resp_add_array(o, 10);
    resp_add_cstr(o, full);
    resp_add_int(o, d->arity);
    add_flags(o, d->flags);
    resp_add_int(o, d->first_key);
    resp_add_int(o, d->last_key);
    resp_add_int(o, d->key_step);
    add_acl_categories(o, d);
    resp_add_array(o, 0); /* tips */
    if (d->first_key > 0) {
        /* One key spec in Redis 7's shape: keys from first_key to last_key
         * with key_step. */
        resp_add_array(o, 1);
        resp_add_map(o, 3);
        resp_add_cstr(o, "flags");
        resp_add_set(o, 0);
        resp_add_cstr(o, "begin_search");
        resp_add_map(o, 2);
        resp_add_cstr(o, "type");
        resp_add_cstr(o, "index");
        resp_add_cstr(o, "spec");
        resp_add_map(o, 1);
        resp_add_cstr(o, "index");
        resp_add_int(o, d->first_key);
        resp_add_cstr(o, "find_keys");
        resp_add_map(o, 2);
        resp_add_cstr(o, "type");
        resp_add_cstr(o, "range");
        resp_add_cstr(o, "spec");
        resp_add_map(o, 3);
        resp_add_cstr(o, "lastkey");
        resp_add_int(o, d->last_key < 0 ? d->last_key
                                        : d->last_key - d->first_key);
        resp_add_cstr(o, "keystep");
        resp_add_int(o, d->key_step);
        resp_add_cstr(o, "limit");
        resp_add_int(o, 0);
    } else {
        resp_add_array(o, 0);
    }
    size_t nsub = def_count(d->subcommands);
    resp_add_array(o, nsub);
    for (size_t i = 0; i < nsub; i++)
        add_info(o, &d->subcommands[i], d->name);
}

static void add_args(resp_out_t *o, const cmd_arg_t *args);

static void add_arg(resp_out_t *o, const cmd_arg_t *a)
{
    size_t nflags = !!(a->flags & CMD_ARG_OPTIONAL) +
                    !!(a->flags & CMD_ARG_MULTIPLE) +
                    !!(a->flags & CMD_ARG_MULTIPLE_TOKEN);
    bool is_key = a->type != NULL && strcmp(a->type, "key") == 0;
    size_t n =
        2 + (a->token != NULL) + (nflags > 0) + (a->sub != NULL) + is_key;
    resp_add_map(o, n);
    resp_add_cstr(o, "name");
    resp_add_cstr(o, a->name);
    resp_add_cstr(o, "type");
    resp_add_cstr(o, a->type != NULL ? a->type : "string");
    if (is_key) {
        resp_add_cstr(o, "key_spec_index");
        resp_add_int(o, 0);
    }
    if (a->token != NULL) {
        resp_add_cstr(o, "token");
        resp_add_cstr(o, a->token);
    }
    if (nflags > 0) {
        resp_add_cstr(o, "flags");
        resp_add_set(o, nflags);
        if (a->flags & CMD_ARG_OPTIONAL)
            resp_add_simple(o, "optional");
        if (a->flags & CMD_ARG_MULTIPLE)
            resp_add_simple(o, "multiple");
        if (a->flags & CMD_ARG_MULTIPLE_TOKEN)
            resp_add_simple(o, "multiple_token");
    }
    if (a->sub != NULL) {
        resp_add_cstr(o, "arguments");
        add_args(o, a->sub);
    }
}

static void add_args(resp_out_t *o, const cmd_arg_t *args)
{
    size_t n = 0;
    while (args[n].name != NULL)
        n++;
    resp_add_array(o, n);
    for (size_t i = 0; i < n; i++)
        add_arg(o, &args[i]);
}

/* One COMMAND DOCS entry: the doc map (the name is the caller's). All texts
 * are bulk strings and flags simple strings, as redis-cli asserts. */
static void add_doc(resp_out_t *o, const cmd_def_t *d, const char *parent)
{
    size_t n = 1 + (d->summary != NULL) + (d->since != NULL) +
               (d->complexity != NULL) + (d->args != NULL) +
               (d->subcommands != NULL);
    resp_add_map(o, n);
    if (d->summary != NULL) {
        resp_add_cstr(o, "summary");
        resp_add_cstr(o, d->summary);
    }
    if (d->since != NULL) {
        resp_add_cstr(o, "since");
        resp_add_cstr(o, d->since);
    }
    resp_add_cstr(o, "group");
    resp_add_cstr(o, d->group != NULL ? d->group : "generic");
    if (d->complexity != NULL) {
        resp_add_cstr(o, "complexity");
        resp_add_cstr(o, d->complexity);
    }
    if (d->args != NULL) {
        resp_add_cstr(o, "arguments");
        add_args(o, d->args);
    }
    if (d->subcommands != NULL) {
        size_t nsub = def_count(d->subcommands);
        resp_add_cstr(o, "subcommands");
        resp_add_map(o, nsub);
        for (size_t i = 0; i < nsub; i++) {
            char full[2 * CMD_NAME_MAX + 2];
            snprintf(full, sizeof(full), "%s|%s", d->name,
                     d->subcommands[i].name);
            resp_add_cstr(o, full);
            add_doc(o, &d->subcommands[i], d->name);
        }
    }
    (void)parent;
}

void cmd_command_proc(client_t *c, int argc, const arg_t *argv)
{
    const cmd_index_t *ix = c->srv->cmds;
    resp_add_array(&c->out, ix->n);
    for (size_t i = 0; i < ix->n; i++)
        add_info(&c->out, ix->order[i]->def, NULL);
}

void cmd_command_count_proc(client_t *c, int argc, const arg_t *argv)
{
    resp_add_int(&c->out, (int64_t)c->srv->cmds->n);
}

/* Whether d belongs to ACL category cat ("write", "fast", ...). */
static bool in_category(const cmd_def_t *d, const arg_t *cat)
{
    if (arg_is(cat, "all"))
        return true;
    if (arg_is(cat, "write"))
        return d->flags & CMD_WRITE;
    if (arg_is(cat, "read"))
        return d->flags & CMD_READONLY;
    if (arg_is(cat, "fast"))
        return d->flags & CMD_FAST;
    if (arg_is(cat, "slow"))
        return !(d->flags & CMD_FAST);
    if (arg_is(cat, "admin"))
        return d->flags & CMD_ADMIN;
    if (arg_is(cat, "connection"))
        return d->group != NULL && strcmp(d->group, "connection") == 0;
    return false;
}

void cmd_command_list_proc(client_t *c, int argc, const arg_t *argv)
{
    const cmd_index_t *ix = c->srv->cmds;
    const arg_t *pattern = NULL, *cat = NULL;
    bool none = false;
    if (argc == 5 && arg_is(&argv[2], "filterby")) {
        if (arg_is(&argv[3], "pattern"))
            pattern = &argv[4];
        else if (arg_is(&argv[3], "aclcat"))
            cat = &argv[4];
        else if (arg_is(&argv[3], "module"))
            none = true; /* no modules here */
        else {
            reply_syntax_error(c);
            return;
        }
    } else if (argc != 2) {
        reply_syntax_error(c);
        return;
    }
    size_t n = 0;
    for (size_t i = 0; i < ix->n && !none; i++) {
        const cmd_def_t *d = ix->order[i]->def;
        if ((pattern == NULL || glob_match(pattern->ptr, pattern->len, d->name,
                                           strlen(d->name), true)) &&
            (cat == NULL || in_category(d, cat)))
            n++;
    }
    resp_add_array(&c->out, n);
    for (size_t i = 0; i < ix->n && n > 0; i++) {
        const cmd_def_t *d = ix->order[i]->def;
        if ((pattern == NULL || glob_match(pattern->ptr, pattern->len, d->name,
                                           strlen(d->name), true)) &&
            (cat == NULL || in_category(d, cat)))
            resp_add_cstr(&c->out, d->name);
    }
}

/* Resolves "name" or "parent|sub". */
static const cmd_def_t *lookup_full(const server_t *s, const arg_t *a,
                                    const cmd_def_t **parent)
{
    const char *bar = memchr(a->ptr, '|', a->len);
    *parent = NULL;
    if (bar == NULL)
        return cmd_lookup(s, a->ptr, a->len);
    const cmd_def_t *p = cmd_lookup(s, a->ptr, (size_t)(bar - a->ptr));
    if (p == NULL)
        return NULL;
    *parent = p;
    return cmd_find_sub(p, bar + 1, a->len - (size_t)(bar - a->ptr) - 1);
}

void cmd_command_info_proc(client_t *c, int argc, const arg_t *argv)
{
    if (argc == 2) {
        cmd_command_proc(c, argc, argv);
        return;
    }
    resp_add_array(&c->out, (size_t)(argc - 2));
    for (int i = 2; i < argc; i++) {
        const cmd_def_t *p;
        const cmd_def_t *d = lookup_full(c->srv, &argv[i], &p);
        if (d == NULL)
            resp_add_null_array(&c->out);
        else
            add_info(&c->out, d, p != NULL ? p->name : NULL);
    }
}

void cmd_command_docs_proc(client_t *c, int argc, const arg_t *argv)
{
    const cmd_index_t *ix = c->srv->cmds;
    if (argc == 2) {
        resp_add_map(&c->out, ix->n);
        for (size_t i = 0; i < ix->n; i++) {
            resp_add_cstr(&c->out, ix->order[i]->def->name);
            add_doc(&c->out, ix->order[i]->def, NULL);
        }
        return;
    }
    /* Unknown names are left out, as Redis does. */
    size_t found = 0;
    for (int i = 2; i < argc; i++) {
        const cmd_def_t *p;
        if (lookup_full(c->srv, &argv[i], &p) != NULL)
            found++;
    }
    resp_add_map(&c->out, found);
    for (int i = 2; i < argc; i++) {
        const cmd_def_t *p;
        const cmd_def_t *d = lookup_full(c->srv, &argv[i], &p);
        if (d == NULL)
            continue;
        char full[2 * CMD_NAME_MAX + 2];
        if (p != NULL)
            snprintf(full, sizeof(full), "%s|%s", p->name, d->name);
        else
            snprintf(full, sizeof(full), "%s", d->name);
        resp_add_cstr(&c->out, full);
        add_doc(&c->out, d, p != NULL ? p->name : NULL);
    }
}
