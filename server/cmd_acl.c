/*
 * cmd_acl.c - see cmd_acl.h.
 */
#include "cmd_acl.h"

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>

#include "acl.h"
#include "acl_file.h"
#include "acl_int.h"
#include "acl_log.h"
#include "cmd.h"
#include "server_int.h"

/* Redis cuts names it quotes in errors at 128 bytes. */
#define QUOTE_MAX 128

static int quoted(const arg_t *a)
{
    return (int)(a->len > QUOTE_MAX ? QUOTE_MAX : a->len);
}

/* Redis's addReplySubcommandSyntaxError(), for the subcommands whose
 * arity the ACL command checks itself. */
static void reply_sub_syntax(client_t *c, const arg_t *argv)
{
    char parent[CMD_NAME_MAX + 1];
    size_t n = argv[0].len < CMD_NAME_MAX ? argv[0].len : CMD_NAME_MAX;
    for (size_t i = 0; i < n; i++)
        parent[i] = (char)toupper((unsigned char)argv[0].ptr[i]);
    parent[n] = '\0';
    resp_add_errorf(&c->out,
                    "ERR unknown subcommand or wrong number of arguments for "
                    "'%.*s'. Try %s HELP.",
                    quoted(&argv[1]), argv[1].ptr, parent);
}

void cmd_acl_setuser_proc(client_t *c, int argc, const arg_t *argv)
{
    const arg_t *name = &argv[2];
    for (size_t i = 0; i < name->len; i++)
        if (isspace((unsigned char)name->ptr[i]) || name->ptr[i] == '\0') {
            resp_add_error(&c->out, "ERR Usernames can't contain spaces or "
                                    "null characters");
            return;
        }
    char err[512];
    if (acl_setuser(c->srv, name->ptr, name->len, argc - 3, argv + 3, err,
                    sizeof(err)) < 0) {
        resp_add_errorf(&c->out, "ERR %s", err);
        return;
    }
    reply_ok(c);
}

void cmd_acl_getuser_proc(client_t *c, int argc, const arg_t *argv)
{
    const acl_user_t *u = acl_find(c->srv, argv[2].ptr, argv[2].len);
    if (u == NULL)
        resp_add_null(&c->out);
    else
        acl_reply_user(c, u);
}

void cmd_acl_deluser_proc(client_t *c, int argc, const arg_t *argv)
{
    server_t *s = c->srv;
    for (int j = 2; j < argc; j++)
        if (argv[j].len == 7 && memcmp(argv[j].ptr, "default", 7) == 0) {
            resp_add_error(&c->out, "ERR The 'default' user cannot be "
                                    "removed");
            return;
        }
    int64_t deleted = 0;
    s->acl->running = c;
    for (int j = 2; j < argc; j++) {
        acl_user_t *u = acl_find(s, argv[j].ptr, argv[j].len);
        if (u != NULL) {
            acl_deluser(s, u);
            deleted++;
        }
    }
    s->acl->running = NULL;
    resp_add_int(&c->out, deleted);
}

void cmd_acl_list_proc(client_t *c, int argc, const arg_t *argv)
{
    server_t *s = c->srv;
    size_t n = acl_count(s);
    resp_add_array(&c->out, n);
    for (size_t i = 0; i < n; i++) {
        const acl_user_t *u = acl_at(s, i);
        char *d = acl_describe(s, u);
        if (d == NULL) {
            resp_add_null(&c->out);
            continue;
        }
        size_t nlen = strlen(acl_user_name(u)), dlen = strlen(d);
        char *line = malloc(5 + nlen + 1 + dlen + 1);
        if (line == NULL) {
            free(d);
            resp_add_null(&c->out);
            continue;
        }
        memcpy(line, "user ", 5);
        memcpy(line + 5, acl_user_name(u), nlen);
        line[5 + nlen] = ' ';
        memcpy(line + 6 + nlen, d, dlen);
        resp_add_bulk(&c->out, line, 6 + nlen + dlen);
        free(line);
        free(d);
    }
}

void cmd_acl_users_proc(client_t *c, int argc, const arg_t *argv)
{
    server_t *s = c->srv;
    size_t n = acl_count(s);
    resp_add_array(&c->out, n);
    for (size_t i = 0; i < n; i++)
        resp_add_cstr(&c->out, acl_user_name(acl_at(s, i)));
}

void cmd_acl_whoami_proc(client_t *c, int argc, const arg_t *argv)
{
    resp_add_cstr(&c->out, c->user_name != NULL ? c->user_name : "default");
}

void cmd_acl_cat_proc(client_t *c, int argc, const arg_t *argv)
{
    server_t *s = c->srv;
    if (argc > 3) {
        reply_sub_syntax(c, argv);
        return;
    }
    if (argc == 2) {
        resp_add_array(&c->out, ACL_NCATS);
        for (int i = 0; i < ACL_NCATS; i++)
            resp_add_cstr(&c->out, acl_cat_names[i]);
        return;
    }
    uint64_t cat = acl_cat_flag(argv[2].ptr, argv[2].len);
    if (cat == 0) {
        resp_add_errorf(&c->out, "ERR Unknown category '%.*s'",
                        quoted(&argv[2]), argv[2].ptr);
        return;
    }
    size_t n = cmd_id_count(s), count = 0;
    for (unsigned id = 0; id < n; id++)
        count += (cmd_acl_cats(cmd_by_id(s, id, NULL)) & cat) != 0;
    resp_add_array(&c->out, count);
    for (unsigned id = 0; id < n; id++) {
        const cmd_def_t *parent = NULL;
        const cmd_def_t *d = cmd_by_id(s, id, &parent);
        if (!(cmd_acl_cats(d) & cat))
            continue;
        char full[2 * CMD_NAME_MAX + 2];
        int len = parent != NULL ? snprintf(full, sizeof(full), "%s|%s",
                                            parent->name, d->name)
                                 : snprintf(full, sizeof(full), "%s", d->name);
        resp_add_bulk(&c->out, full, (size_t)len);
    }
}

void cmd_acl_genpass_proc(client_t *c, int argc, const arg_t *argv)
{
    enum { MAX_BITS = 4096 };
    long long bits = 256;
    if (argc > 3) {
        reply_sub_syntax(c, argv);
        return;
    }
    if (argc == 3 && !arg_ll(&argv[2], &bits)) {
        reply_not_integer(c);
        return;
    }
    if (bits <= 0 || bits > MAX_BITS) {
        resp_add_errorf(&c->out,
                        "ERR ACL GENPASS argument must be the number of bits "
                        "for the output password, a positive number up to %d",
                        MAX_BITS);
        return;
    }
    static const char digits[] = "0123456789abcdef";
    unsigned char raw[MAX_BITS / 8];
    char hex[MAX_BITS / 4];
    size_t chars = (size_t)(bits + 3) / 4, bytes = (chars + 1) / 2;
    size_t got = 0;
    while (got < bytes) {
        ssize_t n = getrandom(raw + got, bytes - got, 0);
        if (n <= 0 && errno != EINTR) {
            resp_add_error(&c->out, "ERR cannot read random bytes");
            return;
        }
        if (n > 0)
            got += (size_t)n;
    }
    for (size_t i = 0; i < chars; i++)
        hex[i] = digits[i % 2 == 0 ? raw[i / 2] >> 4 : raw[i / 2] & 15];
    resp_add_bulk(&c->out, hex, chars);
}

void cmd_acl_log_proc(client_t *c, int argc, const arg_t *argv)
{
    long long count = 10;
    if (argc > 3) {
        reply_sub_syntax(c, argv);
        return;
    }
    if (argc == 3) {
        if (arg_is(&argv[2], "reset")) {
            acl_log_reset(c->srv);
            reply_ok(c);
            return;
        }
        if (!arg_ll(&argv[2], &count)) {
            reply_not_integer(c);
            return;
        }
    }
    acl_log_reply(c, count);
}

void cmd_acl_dryrun_proc(client_t *c, int argc, const arg_t *argv)
{
    server_t *s = c->srv;
    const acl_user_t *u = acl_find(s, argv[2].ptr, argv[2].len);
    if (u == NULL) {
        resp_add_errorf(&c->out, "ERR User '%.*s' not found", (int)argv[2].len,
                        argv[2].ptr);
        return;
    }
    const arg_t *cargv = argv + 3;
    int cargc = argc - 3;
    const cmd_def_t *d = cmd_lookup(s, cargv[0].ptr, cargv[0].len);
    const cmd_def_t *parent = NULL;
    if (d != NULL && d->subcommands != NULL && cargc >= 2) {
        parent = d;
        d = cmd_find_sub(d, cargv[1].ptr, cargv[1].len);
    }
    if (d == NULL) {
        resp_add_errorf(&c->out, "ERR Command '%.*s' not found",
                        (int)cargv[0].len, cargv[0].ptr);
        return;
    }
    char full[2 * CMD_NAME_MAX + 2];
    if (parent != NULL)
        snprintf(full, sizeof(full), "%s|%s", parent->name, d->name);
    else
        snprintf(full, sizeof(full), "%s", d->name);
    if ((d->arity > 0 && d->arity != cargc) || cargc < -d->arity) {
        resp_add_errorf(&c->out,
                        "ERR wrong number of arguments for '%s' command", full);
        return;
    }
    int pos = 0;
    int rc = acl_check(s, u, (unsigned)cmd_id_of(s, d), d, cargc, cargv, &pos);
    if (rc == ACL_OK) {
        reply_ok(c);
        return;
    }
    char msg[600];
    int n = rc == ACL_DENIED_CMD
                ? snprintf(msg, sizeof(msg),
                           "This user has no permissions to run the '%s' "
                           "command",
                           full)
                : snprintf(msg, sizeof(msg),
                           "This user has no permissions to access the "
                           "'%.*s' key",
                           (int)cargv[pos].len, cargv[pos].ptr);
    resp_add_bulk(&c->out, msg, n < 0 ? 0 : (size_t)n);
}

static const char no_file[] =
    "ERR This Redis instance is not configured to use an ACL file. You may "
    "want to specify users via the ACL SETUSER command and then issue a "
    "CONFIG REWRITE (assuming you have a Redis configuration file set) in "
    "order to store users in the Redis configuration.";

static bool has_file(client_t *c)
{
    const char *f = c->srv->cfg->aclfile;
    if (f != NULL && f[0] != '\0')
        return true;
    resp_add_error(&c->out, no_file);
    return false;
}

void cmd_acl_load_proc(client_t *c, int argc, const arg_t *argv)
{
    if (!has_file(c))
        return;
    char err[1024];
    c->srv->acl->running = c;
    int rc = acl_file_load(c->srv, c->srv->cfg->aclfile, err, sizeof(err));
    c->srv->acl->running = NULL;
    if (rc < 0)
        resp_add_errorf(&c->out, "ERR %s", err);
    else
        reply_ok(c);
}

void cmd_acl_save_proc(client_t *c, int argc, const arg_t *argv)
{
    if (!has_file(c))
        return;
    if (acl_file_save(c->srv, c->srv->cfg->aclfile) < 0)
        resp_add_error(&c->out, "ERR There was an error trying to save the "
                                "ACLs. Please check the server logs for more "
                                "information");
    else
        reply_ok(c);
}

void cmd_acl_help_proc(client_t *c, int argc, const arg_t *argv)
{
    static const char *const lines[] = {
        "ACL <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
        "CAT [<category>]",
        "    List all commands that belong to <category>, or all command "
        "categories",
        "    when no category is specified.",
        "DELUSER <username> [<username> ...]",
        "    Delete a list of users.",
        "DRYRUN <username> <command> [<arg> ...]",
        "    Returns whether the user can execute the given command without "
        "executing the command.",
        "GETUSER <username>",
        "    Get the user's details.",
        "GENPASS [<bits>]",
        "    Generate a secure 256-bit user password. The optional `bits` "
        "argument can",
        "    be used to specify a different size.",
        "LIST",
        "    Show users details in config file format.",
        "LOAD",
        "    Reload users from the ACL file.",
        "LOG [<count> | RESET]",
        "    Show the ACL log entries.",
        "SAVE",
        "    Save the current config to the ACL file.",
        "SETUSER <username> <attribute> [<attribute> ...]",
        "    Create or modify a user with the specified attributes.",
        "USERS",
        "    List all the registered usernames.",
        "WHOAMI",
        "    Return the current connection username.",
        "HELP",
        "    Prints this help.",
    };
    reply_help(c, lines, sizeof(lines) / sizeof(lines[0]));
}
