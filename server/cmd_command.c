/*
 * cmd_command.c - COMMAND and its subcommands; see cmd_command.h. The
 * replies follow Redis 7's shapes (key specs, doc maps), which redis-cli
 * reads for its hints.
 */
#include "cmd_command.h"

#include <stdio.h>
#include <string.h>

#include "cmd.h"
#include "glob.h"
#include "reply.h"

/* A set of the names of the bits of flags, in the table's order. */
typedef struct flag_name {
    unsigned bit;
    const char *name;
} flag_name_t;

static void add_flag_set(resp_out_t *o, unsigned flags, const flag_name_t *t,
                         size_t nt)
{
    size_t n = 0;
    for (size_t i = 0; i < nt; i++)
        if (flags & t[i].bit)
            n++;
    resp_add_set(o, n);
    for (size_t i = 0; i < nt; i++)
        if (flags & t[i].bit)
            resp_add_simple(o, t[i].name);
}

/* Command flags, in the order Redis 7.0's COMMAND INFO lists them. */
static void add_flags(resp_out_t *o, unsigned flags)
{
    static const flag_name_t names[] = {
        {CMD_WRITE, "write"},
        {CMD_READONLY, "readonly"},
        {CMD_DENYOOM, "denyoom"},
        {CMD_ADMIN, "admin"},
        {CMD_NOSCRIPT, "noscript"},
        {CMD_LOADING, "loading"},
        {CMD_STALE, "stale"},
        {CMD_SKIP_SLOWLOG, "skip_slowlog"},
        {CMD_FAST, "fast"},
        {CMD_NOAUTH, "no_auth"},
        {CMD_NO_ASYNC_LOADING, "no_async_loading"},
        {CMD_NO_MULTI, "no_multi"},
        {CMD_ALLOW_BUSY, "allow_busy"},
    };
    add_flag_set(o, flags, names, sizeof(names) / sizeof(names[0]));
}

/* Key-spec flags, in Redis's order (COMMAND INFO, GETKEYSANDFLAGS). */
static void add_key_flags(resp_out_t *o, unsigned flags)
{
    static const flag_name_t names[] = {
        {KS_RO, "RO"},
        {KS_RW, "RW"},
        {KS_OW, "OW"},
        {KS_RM, "RM"},
        {KS_ACCESS, "access"},
        {KS_UPDATE, "update"},
        {KS_INSERT, "insert"},
        {KS_DELETE, "delete"},
        {KS_NOT_KEY, "not_key"},
        {KS_INCOMPLETE, "incomplete"},
        {KS_VARIABLE_FLAGS, "variable_flags"},
    };
    add_flag_set(o, flags, names, sizeof(names) / sizeof(names[0]));
}

/* The categories of cmd_acl_cats(), '@'-prefixed, in ACL CAT's order. */
static void add_acl_categories(resp_out_t *o, const cmd_def_t *d)
{
    uint64_t cats = cmd_acl_cats(d);
    resp_add_set(o, (size_t)__builtin_popcountll(cats));
    for (int i = 0; i < ACL_NCATS; i++)
        if (cats & ((uint64_t)1 << i)) {
            char name[32];
            snprintf(name, sizeof(name), "@%s", acl_cat_names[i]);
            resp_add_simple(o, name);
        }
}

/* The key specs of d: its own, or the legacy range without flags. */
static size_t keyspecs_of(const cmd_def_t *d, cmd_keyspec_t *out)
{
    size_t n = 0;
    while (n < CMD_MAX_KEYSPECS && d->keyspecs[n].begin != 0) {
        out[n] = d->keyspecs[n];
        n++;
    }
    if (n == 0 && d->first_key > 0) {
        out[0] = (cmd_keyspec_t)CMD_KS(
            0, d->first_key,
            d->last_key < 0 ? d->last_key : d->last_key - d->first_key,
            d->key_step);
        n = 1;
    }
    return n;
}

/* One key spec in Redis 7's shape: an index begin_search and a range
 * find_keys. */
static void add_keyspec(resp_out_t *o, const cmd_keyspec_t *k)
{
    resp_add_map(o, 3);
    resp_add_cstr(o, "flags");
    add_key_flags(o, k->flags);
    resp_add_cstr(o, "begin_search");
    resp_add_map(o, 2);
    resp_add_cstr(o, "type");
    resp_add_cstr(o, "index");
    resp_add_cstr(o, "spec");
    resp_add_map(o, 1);
    resp_add_cstr(o, "index");
    resp_add_int(o, k->begin);
    resp_add_cstr(o, "find_keys");
    resp_add_map(o, 2);
    resp_add_cstr(o, "type");
    resp_add_cstr(o, "range");
    resp_add_cstr(o, "spec");
    resp_add_map(o, 3);
    resp_add_cstr(o, "lastkey");
    resp_add_int(o, k->last);
    resp_add_cstr(o, "keystep");
    resp_add_int(o, k->step > 0 ? k->step : 1);
    resp_add_cstr(o, "limit");
    resp_add_int(o, k->limit);
}

/* The entries of a NULL-name terminated table (none for NULL). */
static size_t def_count(const cmd_def_t *t)
{
    size_t n = 0;
    while (t != NULL && t[n].name != NULL)
        n++;
    return n;
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
    cmd_keyspec_t ks[CMD_MAX_KEYSPECS];
    size_t nks = keyspecs_of(d, ks);
    resp_add_array(o, nks);
    for (size_t i = 0; i < nks; i++)
        add_keyspec(o, &ks[i]);
    size_t nsub = def_count(d->subcommands);
    resp_add_array(o, nsub);
    for (size_t i = 0; i < nsub; i++)
        add_info(o, &d->subcommands[i], d->name);
}

static void add_args(resp_out_t *o, const cmd_arg_t *args, int *nkeys);

/* One argument's doc; *nkeys counts the key arguments so far, the index of
 * this one's key spec when it is a key (Redis's key_spec_index). */
static void add_arg(resp_out_t *o, const cmd_arg_t *a, int *nkeys)
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
        resp_add_int(o, (*nkeys)++);
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
        add_args(o, a->sub, nkeys);
    }
}

static void add_args(resp_out_t *o, const cmd_arg_t *args, int *nkeys)
{
    size_t n = 0;
    while (args[n].name != NULL)
        n++;
    resp_add_array(o, n);
    for (size_t i = 0; i < n; i++)
        add_arg(o, &args[i], nkeys);
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
        int nkeys = 0;
        add_args(o, d->args, &nkeys);
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
    size_t n = cmd_count(c->srv);
    resp_add_array(&c->out, n);
    for (size_t i = 0; i < n; i++)
        add_info(&c->out, cmd_at(c->srv, i), NULL);
}

void cmd_command_count_proc(client_t *c, int argc, const arg_t *argv)
{
    resp_add_int(&c->out, (int64_t)cmd_count(c->srv));
}

/* COMMAND LIST's filter: at most one of pattern (matched against the full
 * name, any case) and cats (a category's bit; 0 matches nothing) is set;
 * none set for MODULE, which matches nothing here. */
typedef struct list_filter {
    const arg_t *pattern;
    uint64_t cats;
    bool all;
} list_filter_t;

static bool list_match(const list_filter_t *f, const cmd_def_t *d,
                       const char *full)
{
    if (f->all)
        return true;
    if (f->pattern != NULL)
        return glob_match(f->pattern->ptr, f->pattern->len, full, strlen(full),
                          true);
    return (cmd_acl_cats(d) & f->cats) != 0;
}

/* Replies with (add) or counts the names of the commands and subcommands
 * that match f, as Redis lists them: each command, then its subcommands
 * as "parent|sub". */
static size_t list_names(client_t *c, const list_filter_t *f, bool add)
{
    size_t n = 0, total = cmd_count(c->srv);
    for (size_t i = 0; i < total; i++) {
        const cmd_def_t *d = cmd_at(c->srv, i);
        if (list_match(f, d, d->name)) {
            n++;
            if (add)
                resp_add_cstr(&c->out, d->name);
        }
        for (size_t j = 0; j < def_count(d->subcommands); j++) {
            const cmd_def_t *sub = &d->subcommands[j];
            char full[2 * CMD_NAME_MAX + 2];
            snprintf(full, sizeof(full), "%s|%s", d->name, sub->name);
            if (list_match(f, sub, full)) {
                n++;
                if (add)
                    resp_add_cstr(&c->out, full);
            }
        }
    }
    return n;
}

void cmd_command_list_proc(client_t *c, int argc, const arg_t *argv)
{
    list_filter_t f = {.all = argc == 2};
    if (argc == 5 && arg_is(&argv[2], "filterby")) {
        if (arg_is(&argv[3], "pattern"))
            f.pattern = &argv[4];
        else if (arg_is(&argv[3], "aclcat"))
            f.cats = cmd_acl_cat_find(argv[4].ptr, argv[4].len);
        else if (!arg_is(&argv[3], "module")) {
            reply_syntax_error(c);
            return;
        }
    } else if (argc != 2) {
        reply_syntax_error(c);
        return;
    }
    resp_add_array(&c->out, list_names(c, &f, false));
    list_names(c, &f, true);
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
    if (argc == 2) {
        size_t n = cmd_count(c->srv);
        resp_add_map(&c->out, n);
        for (size_t i = 0; i < n; i++) {
            resp_add_cstr(&c->out, cmd_at(c->srv, i)->name);
            add_doc(&c->out, cmd_at(c->srv, i), NULL);
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

/* COMMAND GETKEYS / GETKEYSANDFLAGS: the keys of the command in argv[2..],
 * found by its key specs as the ACL check finds them. */
typedef struct getkeys {
    client_t *c;
    const arg_t *argv; /* the command's own arguments */
    bool flags;
    bool count;
    size_t n;
} getkeys_t;

static int getkeys_one(void *ctx, int i, unsigned flags)
{
    getkeys_t *g = ctx;
    g->n++;
    if (g->count)
        return 0;
    if (g->flags)
        resp_add_array(&g->c->out, 2);
    resp_add_bulk(&g->c->out, g->argv[i].ptr, g->argv[i].len);
    if (g->flags)
        add_key_flags(&g->c->out, flags);
    return 0;
}

static void getkeys_common(client_t *c, int argc, const arg_t *argv,
                           bool with_flags)
{
    const arg_t *cargv = &argv[2];
    int cargc = argc - 2;
    /* Redis's lookup: a container with an argument names its subcommand,
     * else the command itself. */
    const cmd_def_t *d = cmd_lookup(c->srv, cargv[0].ptr, cargv[0].len);
    if (d != NULL && d->subcommands != NULL && cargc > 1)
        d = cmd_find_sub(d, cargv[1].ptr, cargv[1].len);
    cmd_keyspec_t ks[CMD_MAX_KEYSPECS];
    if (d == NULL) {
        resp_add_error(&c->out, "ERR Invalid command specified");
        return;
    }
    if (keyspecs_of(d, ks) == 0) {
        resp_add_error(&c->out, "ERR The command has no key arguments");
        return;
    }
    if ((d->arity > 0 && d->arity != cargc) || cargc < -d->arity) {
        resp_add_error(&c->out,
                       "ERR Invalid number of arguments specified for command");
        return;
    }
    getkeys_t g = {.c = c, .argv = cargv, .flags = with_flags, .count = true};
    cmd_keys_each(d, cargc, getkeys_one, &g);
    if (g.n == 0) {
        resp_add_error(&c->out, "ERR Invalid arguments specified for command");
        return;
    }
    resp_add_array(&c->out, g.n);
    g.count = false;
    cmd_keys_each(d, cargc, getkeys_one, &g);
}

void cmd_command_getkeys_proc(client_t *c, int argc, const arg_t *argv)
{
    getkeys_common(c, argc, argv, false);
}

void cmd_command_getkeysandflags_proc(client_t *c, int argc, const arg_t *argv)
{
    getkeys_common(c, argc, argv, true);
}
