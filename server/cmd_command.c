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

static void add_flags(resp_out_t *o, unsigned flags)
{
    static const struct {
        unsigned bit;
        const char *name;
    } names[] = {
        {CMD_WRITE, "write"},       {CMD_READONLY, "readonly"},
        {CMD_DENYOOM, "denyoom"},   {CMD_ADMIN, "admin"},
        {CMD_NOSCRIPT, "noscript"}, {CMD_NOAUTH, "no_auth"},
        {CMD_LOADING, "loading"},   {CMD_STALE, "stale"},
        {CMD_FAST, "fast"},
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
    if (d->group != NULL && strcmp(d->group, "transactions") == 0)
        cats[n++] = "@transaction";
    resp_add_set(o, n);
    for (size_t i = 0; i < n; i++)
        resp_add_simple(o, cats[i]);
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
    size_t n = cmd_count(c->srv);
    resp_add_array(&c->out, n);
    for (size_t i = 0; i < n; i++)
        add_info(&c->out, cmd_at(c->srv, i), NULL);
}

static void count_proc(client_t *c, int argc, const arg_t *argv)
{
    resp_add_int(&c->out, (int64_t)cmd_count(c->srv));
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
    if (arg_is(cat, "transaction"))
        return d->group != NULL && strcmp(d->group, "transactions") == 0;
    return false;
}

static void list_proc(client_t *c, int argc, const arg_t *argv)
{
    size_t total = cmd_count(c->srv);
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
    for (size_t i = 0; i < total && !none; i++) {
        const cmd_def_t *d = cmd_at(c->srv, i);
        if ((pattern == NULL || glob_match(pattern->ptr, pattern->len, d->name,
                                           strlen(d->name), true)) &&
            (cat == NULL || in_category(d, cat)))
            n++;
    }
    resp_add_array(&c->out, n);
    for (size_t i = 0; i < total && n > 0; i++) {
        const cmd_def_t *d = cmd_at(c->srv, i);
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

static void info_proc(client_t *c, int argc, const arg_t *argv)
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

static void docs_proc(client_t *c, int argc, const arg_t *argv)
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

/* ---- the table ----------------------------------------------------------- */

static const cmd_arg_t command_names[] = {
    {"command-name", "string", NULL, CMD_ARG_OPTIONAL | CMD_ARG_MULTIPLE, NULL},
    CMD_ARG_END};
static const cmd_arg_t filterby_opts[] = {
    {"module-name", "string", "MODULE", 0, NULL},
    {"category", "string", "ACLCAT", 0, NULL},
    {"pattern", "pattern", "PATTERN", 0, NULL},
    CMD_ARG_END};
static const cmd_arg_t list_args[] = {
    {"filterby", "oneof", "FILTERBY", CMD_ARG_OPTIONAL, filterby_opts},
    CMD_ARG_END};

const cmd_def_t cmd_command_subs[] = {
    {.name = "count",
     .arity = 2,
     .proc = count_proc,
     .group = "server",
     .summary = "Returns a count of commands.",
     .since = "2.8.13",
     .complexity = "O(1)"},
    {.name = "docs",
     .arity = -2,
     .proc = docs_proc,
     .group = "server",
     .summary =
         "Returns documentary information about one, multiple or all commands.",
     .since = "7.0.0",
     .complexity = "O(N) where N is the number of commands to look up",
     .args = command_names},
    {.name = "info",
     .arity = -2,
     .proc = info_proc,
     .group = "server",
     .summary = "Returns information about one, multiple or all commands.",
     .since = "2.8.13",
     .complexity = "O(N) where N is the number of commands to look up",
     .args = command_names},
    {.name = "list",
     .arity = -2,
     .proc = list_proc,
     .group = "server",
     .summary = "Returns a list of command names.",
     .since = "7.0.0",
     .complexity = "O(N) where N is the total number of commands",
     .args = list_args},
    CMD_DEF_END,
};
