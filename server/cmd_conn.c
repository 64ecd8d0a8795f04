/*
 * cmd_conn.c - the connection commands (cmd_conn_table): PING, ECHO, QUIT,
 * AUTH, HELLO, SELECT and CLIENT.
 */
#include "cmd_conn.h"

#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>
#include <sys/utsname.h>
#include <unistd.h>

#include "acl.h"
#include "cmd.h"
#include "cmd_client.h"
#include "conn.h"
#include "conn_info.h"
#include "errtext.h"
#include "glob.h"
#include "log.h"
#include "server_int.h"
#include "util.h"

/* ---- helpers ----------------------------------------------------------- */

/* Redis accepts names made of '!'..'~' only. */
static bool printable_token(const arg_t *a)
{
    for (size_t i = 0; i < a->len; i++)
        if (a->ptr[i] < '!' || a->ptr[i] > '~')
            return false;
    return true;
}

static void set_authenticated(client_t *c)
{
    if (!c->authenticated) {
        c->authenticated = true;
        conn_client_limits(c);
    }
}

static void reply_wrongpass(client_t *c)
{
    resp_add_error(&c->out, "WRONGPASS invalid username-password pair or "
                            "user is disabled.");
}

/* ---- connection commands ----------------------------------------------- */

static void ping_proc(client_t *c, int argc, const arg_t *argv)
{
    if (argc > 2) {
        reply_wrong_arity(c, "ping");
        return;
    }
    if (argc == 2)
        resp_add_bulk(&c->out, argv[1].ptr, argv[1].len);
    else
        resp_add_raw(&c->out, "+PONG\r\n", 7);
}

static void echo_proc(client_t *c, int argc, const arg_t *argv)
{
    resp_add_bulk(&c->out, argv[1].ptr, argv[1].len);
}

static void quit_proc(client_t *c, int argc, const arg_t *argv)
{
    reply_ok(c);
    c->close_after_reply = true;
}

static void auth_proc(client_t *c, int argc, const arg_t *argv)
{
    if (argc > 3) {
        reply_syntax_error(c);
        return;
    }
    if (argc == 2 && acl_default_nopass(c->srv)) {
        resp_add_error(&c->out,
                       "ERR AUTH <password> called without any password "
                       "configured for the default user. Are you sure your "
                       "configuration is correct?");
        return;
    }
    const arg_t *user = argc == 3 ? &argv[1] : NULL;
    if (!acl_authenticate(c, user, &argv[argc - 1], &argv[0])) {
        reply_wrongpass(c);
        return;
    }
    set_authenticated(c);
    reply_ok(c);
}

static bool setname(client_t *c, const arg_t *name)
{
    if (!printable_token(name)) {
        resp_add_error(&c->out, "ERR Client names cannot contain spaces, "
                                "newlines or special characters.");
        return false;
    }
    char *copy = NULL;
    if (name->len > 0 && (copy = strndup(name->ptr, name->len)) == NULL) {
        resp_add_error(&c->out, ERRTEXT_NOMEM);
        return false;
    }
    free(c->name);
    c->name = copy;
    return true;
}

static void hello_proc(client_t *c, int argc, const arg_t *argv)
{
    long long ver = c->resp;
    int i = 1;
    if (argc >= 2) {
        if (!arg_ll(&argv[1], &ver)) {
            resp_add_error(&c->out, "ERR Protocol version is not an integer "
                                    "or out of range");
            return;
        }
        if (ver < 2 || ver > 3) {
            resp_add_error(&c->out, "NOPROTO unsupported protocol version");
            return;
        }
        i = 2;
    }
    const arg_t *user = NULL, *pass = NULL, *name = NULL;
    for (; i < argc; i++) {
        if (arg_is(&argv[i], "auth") && i + 2 < argc) {
            user = &argv[i + 1];
            pass = &argv[i + 2];
            i += 2;
        } else if (arg_is(&argv[i], "setname") && i + 1 < argc) {
            name = &argv[i + 1];
            i++;
        } else {
            char msg[200];
            snprintf(msg, sizeof(msg),
                     "ERR Syntax error in HELLO option "
                     "'%.*s'",
                     (int)(argv[i].len > 64 ? 64 : argv[i].len), argv[i].ptr);
            for (char *p = msg; *p; p++)
                if (*p == '\r' || *p == '\n')
                    *p = ' ';
            resp_add_error(&c->out, msg);
            return;
        }
    }
    if (user != NULL) {
        if (!acl_authenticate(c, user, pass, &argv[0])) {
            reply_wrongpass(c);
            return;
        }
        set_authenticated(c);
    }
    if (!c->authenticated && c->srv->auth_required) {
        resp_add_error(&c->out,
                       "NOAUTH HELLO must be called with the client already "
                       "authenticated, otherwise the HELLO <proto> AUTH "
                       "<user> <pass> option can be used to authenticate the "
                       "client and select the RESP protocol version at the "
                       "same time");
        return;
    }
    if (name != NULL && !setname(c, name))
        return;
    c->resp = (int)ver;
    c->out.proto = (int)ver;
    resp_out_t *o = &c->out;
    resp_add_map(o, 7);
    resp_add_cstr(o, "server");
    resp_add_cstr(o, "redis");
    resp_add_cstr(o, "version");
    resp_add_cstr(o, SERVER_REDIS_VERSION);
    resp_add_cstr(o, "proto");
    resp_add_int(o, ver);
    resp_add_cstr(o, "id");
    resp_add_int(o, (int64_t)c->id);
    resp_add_cstr(o, "mode");
    resp_add_cstr(o, "standalone");
    resp_add_cstr(o, "role");
    resp_add_cstr(o, "master");
    resp_add_cstr(o, "modules");
    resp_add_array(o, 0);
}

static void select_proc(client_t *c, int argc, const arg_t *argv)
{
    long long n;
    if (!arg_ll(&argv[1], &n)) {
        reply_not_integer(c);
        return;
    }
    if (n < 0 || n >= c->srv->ndbs) {
        resp_add_error(&c->out, "ERR DB index is out of range");
        return;
    }
    c->dbnum = (int)n;
    c->db = c->srv->dbs[n];
    reply_ok(c);
}

/* ---- CLIENT ------------------------------------------------------------ */

static void client_id_proc(client_t *c, int argc, const arg_t *argv)
{
    resp_add_int(&c->out, (int64_t)c->id);
}

static void client_getname_proc(client_t *c, int argc, const arg_t *argv)
{
    if (c->name != NULL)
        resp_add_cstr(&c->out, c->name);
    else
        resp_add_null(&c->out);
}

static void client_setname_proc(client_t *c, int argc, const arg_t *argv)
{
    if (setname(c, &argv[2]))
        reply_ok(c);
}

static void client_setinfo_proc(client_t *c, int argc, const arg_t *argv)
{
    char **slot;
    const char *attr;
    if (arg_is(&argv[2], "lib-name")) {
        slot = &c->lib_name;
        attr = "lib-name";
    } else if (arg_is(&argv[2], "lib-ver")) {
        slot = &c->lib_ver;
        attr = "lib-ver";
    } else {
        resp_add_errorf(&c->out, "ERR Unrecognized option '%.*s'",
                        (int)(argv[2].len > 64 ? 64 : argv[2].len),
                        printable_token(&argv[2]) ? argv[2].ptr : "?");
        return;
    }
    if (!printable_token(&argv[3])) {
        resp_add_errorf(&c->out,
                        "ERR %s cannot contain spaces, newlines or "
                        "special characters.",
                        attr);
        return;
    }
    char *copy = NULL;
    if (argv[3].len > 0 && (copy = strndup(argv[3].ptr, argv[3].len)) == NULL) {
        resp_add_error(&c->out, ERRTEXT_NOMEM);
        return;
    }
    free(*slot);
    *slot = copy;
    reply_ok(c);
}

static void client_list_proc(client_t *c, int argc, const arg_t *argv)
{
    bool only_ids = false;
    int ids_from = 0;
    bool none = false;
    for (int i = 2; i < argc; i++) {
        if (arg_is(&argv[i], "type") && i + 1 < argc) {
            const arg_t *t = &argv[++i];
            if (arg_is(t, "normal"))
                continue;
            if (arg_is(t, "master") || arg_is(t, "replica") ||
                arg_is(t, "slave") || arg_is(t, "pubsub")) {
                none = true;
                continue;
            }
            resp_add_errorf(&c->out, "ERR Unknown client type '%.*s'",
                            (int)(t->len > 64 ? 64 : t->len),
                            printable_token(t) ? t->ptr : "?");
            return;
        } else if (arg_is(&argv[i], "id") && i + 1 < argc) {
            only_ids = true;
            ids_from = i + 1;
            for (int j = ids_from; j < argc; j++) {
                long long v;
                if (!arg_ll(&argv[j], &v) || v <= 0) {
                    resp_add_error(&c->out, "ERR Invalid client ID");
                    return;
                }
            }
            break;
        } else {
            reply_syntax_error(c);
            return;
        }
    }
    sbuf_t b = {0};
    char line[1024];
    for (client_t *cn = conn_next_client(c->srv, NULL); cn != NULL && !none;
         cn = conn_next_client(c->srv, cn)) {
        if (only_ids) {
            bool want = false;
            for (int j = ids_from; j < argc && !want; j++) {
                long long v;
                want = arg_ll(&argv[j], &v) && (uint64_t)v == cn->id;
            }
            if (!want)
                continue;
        }
        conn_describe(cn, line, sizeof(line));
        sb_printf(&b, "%s", line);
    }
    reply_text(c, &b);
}

static void client_info_proc(client_t *c, int argc, const arg_t *argv)
{
    char line[1024];
    size_t n = conn_describe(c, line, sizeof(line));
    resp_add_verbatim(&c->out, "txt", line, n);
}

static void client_help_proc(client_t *c, int argc, const arg_t *argv)
{
    static const char *const lines[] = {
        "CLIENT <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
        "GETNAME",
        "    Return the name of the current connection.",
        "ID",
        "    Return the ID of the current connection.",
        "INFO",
        "    Return information about the current client connection.",
        "KILL <ip:port>",
        "    Kill connection made from <ip:port>.",
        "KILL <option> <value> [<option> <value> [...]]",
        "    Kill connections. Options are:",
        "    * ADDR (<ip:port>|<unixsocket>:0)",
        "      Kill connections made from the specified address",
        "    * LADDR (<ip:port>|<unixsocket>:0)",
        "      Kill connections made to specified local address",
        "    * TYPE (NORMAL|MASTER|REPLICA|PUBSUB)",
        "      Kill connections by type.",
        "    * USER <username>",
        "      Kill connections authenticated by <username>.",
        "    * SKIPME (YES|NO)",
        "      Skip killing current connection (default: yes).",
        "LIST [TYPE <type>] [ID <id> [<id> ...]]",
        "    Return information about client connections.",
        "UNPAUSE",
        "    Stop the current client pause, resuming traffic.",
        "PAUSE <timeout> [WRITE|ALL]",
        "    Suspend all, or just write, clients for <timeout> milliseconds.",
        "REPLY (ON|OFF|SKIP)",
        "    Control the replies sent to the current connection.",
        "SETINFO <option> <value>",
        "    Set client meta attr. Options are LIB-NAME and LIB-VER.",
        "SETNAME <name>",
        "    Assign the name <name> to the current connection.",
        "NO-EVICT (ON|OFF)",
        "    Protect current client connection from eviction.",
        "NO-TOUCH (ON|OFF)",
        "    Will not touch LRU/LFU stats when this mode is on.",
        "HELP",
        "    Print this help.",
    };
    reply_help(c, lines, sizeof(lines) / sizeof(lines[0]));
}

/* ---- the table --------------------------------------------------------- */

static const cmd_arg_t message_opt[] = {
    {"message", "string", NULL, CMD_ARG_OPTIONAL, NULL}, CMD_ARG_END};
static const cmd_arg_t message_arg[] = {{"message", "string", NULL, 0, NULL},
                                        CMD_ARG_END};
static const cmd_arg_t auth_args[] = {
    {"username", "string", NULL, CMD_ARG_OPTIONAL, NULL},
    {"password", "string", NULL, 0, NULL},
    CMD_ARG_END};
static const cmd_arg_t hello_auth_block[] = {
    {"username", "string", NULL, 0, NULL},
    {"password", "string", NULL, 0, NULL},
    CMD_ARG_END};
static const cmd_arg_t hello_block[] = {
    {"protover", "integer", NULL, 0, NULL},
    {"auth", "block", "AUTH", CMD_ARG_OPTIONAL, hello_auth_block},
    {"clientname", "string", "SETNAME", CMD_ARG_OPTIONAL, NULL},
    CMD_ARG_END};
static const cmd_arg_t hello_args[] = {
    {"arguments", "block", NULL, CMD_ARG_OPTIONAL, hello_block}, CMD_ARG_END};
static const cmd_arg_t index_arg[] = {{"index", "integer", NULL, 0, NULL},
                                      CMD_ARG_END};
static const cmd_arg_t name_arg[] = {
    {"connection-name", "string", NULL, 0, NULL}, CMD_ARG_END};
static const cmd_arg_t setinfo_attr[] = {
    {"libname", "string", "LIB-NAME", 0, NULL},
    {"libver", "string", "LIB-VER", 0, NULL},
    CMD_ARG_END};
static const cmd_arg_t setinfo_args[] = {
    {"attr", "oneof", NULL, 0, setinfo_attr}, CMD_ARG_END};
static const cmd_arg_t client_type[] = {
    {"normal", "pure-token", "NORMAL", 0, NULL},
    {"master", "pure-token", "MASTER", 0, NULL},
    {"replica", "pure-token", "REPLICA", 0, NULL},
    {"pubsub", "pure-token", "PUBSUB", 0, NULL},
    CMD_ARG_END};
static const cmd_arg_t client_list_args[] = {
    {"client-type", "oneof", "TYPE", CMD_ARG_OPTIONAL, client_type},
    {"client-id", "integer", "ID", CMD_ARG_OPTIONAL | CMD_ARG_MULTIPLE, NULL},
    CMD_ARG_END};
static const cmd_arg_t kill_ip_port[] = {{"ip:port", "string", NULL, 0, NULL},
                                         CMD_ARG_END};
static const cmd_arg_t kill_skipme[] = {{"yes", "pure-token", "YES", 0, NULL},
                                        {"no", "pure-token", "NO", 0, NULL},
                                        CMD_ARG_END};
static const cmd_arg_t kill_filter[] = {
    {"client-id", "integer", "ID", CMD_ARG_OPTIONAL, NULL},
    {"client-type", "oneof", "TYPE", CMD_ARG_OPTIONAL, client_type},
    {"username", "string", "USER", CMD_ARG_OPTIONAL, NULL},
    {"addr", "string", "ADDR", CMD_ARG_OPTIONAL, NULL},
    {"laddr", "string", "LADDR", CMD_ARG_OPTIONAL, NULL},
    {"skipme", "oneof", "SKIPME", CMD_ARG_OPTIONAL, kill_skipme},
    CMD_ARG_END};
static const cmd_arg_t kill_forms[] = {
    {"old-format", "block", NULL, 0, kill_ip_port},
    {"new-format", "block", NULL, CMD_ARG_MULTIPLE, kill_filter},
    CMD_ARG_END};
static const cmd_arg_t kill_args[] = {{"filter", "oneof", NULL, 0, kill_forms},
                                      CMD_ARG_END};
static const cmd_arg_t pause_mode[] = {
    {"write", "pure-token", "WRITE", 0, NULL},
    {"all", "pure-token", "ALL", 0, NULL},
    CMD_ARG_END};
static const cmd_arg_t pause_args[] = {
    {"timeout", "integer", NULL, 0, NULL},
    {"mode", "oneof", NULL, CMD_ARG_OPTIONAL, pause_mode},
    CMD_ARG_END};
static const cmd_arg_t reply_mode[] = {{"on", "pure-token", "ON", 0, NULL},
                                       {"off", "pure-token", "OFF", 0, NULL},
                                       {"skip", "pure-token", "SKIP", 0, NULL},
                                       CMD_ARG_END};
static const cmd_arg_t reply_args[] = {{"action", "oneof", NULL, 0, reply_mode},
                                       CMD_ARG_END};
static const cmd_arg_t on_off[] = {{"on", "pure-token", "ON", 0, NULL},
                                   {"off", "pure-token", "OFF", 0, NULL},
                                   CMD_ARG_END};
static const cmd_arg_t enabled_args[] = {{"enabled", "oneof", NULL, 0, on_off},
                                         CMD_ARG_END};
static const cmd_def_t client_subs[] = {
    {.name = "kill",
     .arity = -3,
     .flags = CMD_ADMIN | CMD_NOSCRIPT | CMD_LOADING | CMD_STALE,
     .acl = ACL_CAT_CONNECTION,
     .proc = cmd_client_kill,
     .group = "connection",
     .summary = "Terminates open connections.",
     .since = "2.4.0",
     .complexity = "O(N) where N is the number of client connections",
     .args = kill_args},
    {.name = "pause",
     .arity = -3,
     .flags = CMD_ADMIN | CMD_NOSCRIPT | CMD_LOADING | CMD_STALE,
     .acl = ACL_CAT_CONNECTION,
     .proc = cmd_client_pause,
     .group = "connection",
     .summary = "Suspends commands processing.",
     .since = "3.0.0",
     .complexity = "O(1)",
     .args = pause_args},
    {.name = "unpause",
     .arity = 2,
     .flags = CMD_ADMIN | CMD_NOSCRIPT | CMD_LOADING | CMD_STALE,
     .acl = ACL_CAT_CONNECTION,
     .proc = cmd_client_unpause,
     .group = "connection",
     .summary = "Resumes processing commands from paused clients.",
     .since = "6.2.0",
     .complexity = "O(N) Where N is the number of paused clients"},
    {.name = "reply",
     .arity = 3,
     .flags = CMD_NOSCRIPT | CMD_LOADING | CMD_STALE,
     .acl = ACL_CAT_CONNECTION,
     .proc = cmd_client_reply,
     .group = "connection",
     .summary = "Instructs the server whether to reply to commands.",
     .since = "3.2.0",
     .complexity = "O(1)",
     .args = reply_args},
    {.name = "no-evict",
     .arity = 3,
     .flags = CMD_ADMIN | CMD_NOSCRIPT | CMD_LOADING | CMD_STALE,
     .acl = ACL_CAT_CONNECTION,
     .proc = cmd_client_no_evict,
     .group = "connection",
     .summary = "Sets the client eviction mode of the connection.",
     .since = "7.0.0",
     .complexity = "O(1)",
     .args = enabled_args},
    {.name = "no-touch",
     .arity = 3,
     .flags = CMD_NOSCRIPT | CMD_LOADING | CMD_STALE,
     .acl = ACL_CAT_CONNECTION,
     .proc = cmd_client_no_touch,
     .group = "connection",
     .summary = "Controls whether commands sent by the client affect the "
                "LRU/LFU of accessed keys.",
     .since = "7.2.0",
     .complexity = "O(1)",
     .args = enabled_args},
    {.name = "getname",
     .arity = 2,
     .flags = CMD_NOSCRIPT | CMD_LOADING | CMD_STALE,
     .acl = ACL_CAT_CONNECTION,
     .proc = client_getname_proc,
     .group = "connection",
     .summary = "Returns the name of the connection.",
     .since = "2.6.9",
     .complexity = "O(1)"},
    {.name = "id",
     .arity = 2,
     .flags = CMD_NOSCRIPT | CMD_LOADING | CMD_STALE,
     .acl = ACL_CAT_CONNECTION,
     .proc = client_id_proc,
     .group = "connection",
     .summary = "Returns the unique client ID of the connection.",
     .since = "5.0.0",
     .complexity = "O(1)"},
    {.name = "info",
     .arity = 2,
     .flags = CMD_NOSCRIPT | CMD_LOADING | CMD_STALE,
     .acl = ACL_CAT_CONNECTION,
     .proc = client_info_proc,
     .group = "connection",
     .summary = "Returns information about the connection.",
     .since = "6.2.0",
     .complexity = "O(1)"},
    {.name = "list",
     .arity = -2,
     .flags = CMD_ADMIN | CMD_NOSCRIPT | CMD_LOADING | CMD_STALE,
     .acl = ACL_CAT_CONNECTION,
     .proc = client_list_proc,
     .group = "connection",
     .summary = "Lists open connections.",
     .since = "2.4.0",
     .complexity = "O(N) where N is the number of client connections",
     .args = client_list_args},
    {.name = "setinfo",
     .arity = 4,
     .flags = CMD_NOSCRIPT | CMD_LOADING | CMD_STALE,
     .acl = ACL_CAT_CONNECTION,
     .proc = client_setinfo_proc,
     .group = "connection",
     .summary = "Sets information specific to the client or connection.",
     .since = "7.2.0",
     .complexity = "O(1)",
     .args = setinfo_args},
    {.name = "setname",
     .arity = 3,
     .flags = CMD_NOSCRIPT | CMD_LOADING | CMD_STALE,
     .acl = ACL_CAT_CONNECTION,
     .proc = client_setname_proc,
     .group = "connection",
     .summary = "Sets the connection name.",
     .since = "2.6.9",
     .complexity = "O(1)",
     .args = name_arg},
    {.name = "help",
     .arity = 2,
     .flags = CMD_LOADING | CMD_STALE,
     .acl = ACL_CAT_CONNECTION,
     .proc = client_help_proc,
     .group = "connection",
     .summary = "Returns helpful text about the different subcommands.",
     .since = "5.0.0",
     .complexity = "O(1)"},
    CMD_DEF_END,
};

const cmd_def_t cmd_conn_table[] = {
    {.name = "ping",
     .arity = -1,
     .flags = CMD_FAST,
     .acl = ACL_CAT_CONNECTION,
     .proc = ping_proc,
     .group = "connection",
     .summary = "Returns the server's liveliness response.",
     .since = "1.0.0",
     .complexity = "O(1)",
     .args = message_opt},
    {.name = "echo",
     .arity = 2,
     .flags = CMD_LOADING | CMD_STALE | CMD_FAST,
     .acl = ACL_CAT_CONNECTION,
     .proc = echo_proc,
     .group = "connection",
     .summary = "Returns the given string.",
     .since = "1.0.0",
     .complexity = "O(1)",
     .args = message_arg},
    {.name = "quit",
     .arity = -1,
     .flags = CMD_NOSCRIPT | CMD_LOADING | CMD_STALE | CMD_FAST | CMD_NOAUTH |
              CMD_ALLOW_BUSY | CMD_MULTI_NOW,
     .acl = ACL_CAT_CONNECTION,
     .proc = quit_proc,
     .group = "connection",
     .summary = "Closes the connection.",
     .since = "1.0.0",
     .complexity = "O(1)"},
    {.name = "hello",
     .arity = -1,
     .flags = CMD_NOSCRIPT | CMD_LOADING | CMD_STALE | CMD_FAST | CMD_NOAUTH |
              CMD_ALLOW_BUSY,
     .acl = ACL_CAT_CONNECTION,
     .proc = hello_proc,
     .group = "connection",
     .summary = "Handshakes with the server.",
     .since = "6.0.0",
     .complexity = "O(1)",
     .args = hello_args},
    {.name = "auth",
     .arity = -2,
     .flags = CMD_NOSCRIPT | CMD_LOADING | CMD_STALE | CMD_FAST | CMD_NOAUTH |
              CMD_ALLOW_BUSY,
     .acl = ACL_CAT_CONNECTION,
     .proc = auth_proc,
     .group = "connection",
     .summary = "Authenticates the connection.",
     .since = "1.0.0",
     .complexity =
         "O(N) where N is the number of passwords defined for the user",
     .args = auth_args},
    {.name = "select",
     .arity = 2,
     .flags = CMD_LOADING | CMD_STALE | CMD_FAST,
     .acl = ACL_CAT_CONNECTION,
     .proc = select_proc,
     .group = "connection",
     .summary = "Changes the selected database.",
     .since = "1.0.0",
     .complexity = "O(1)",
     .args = index_arg},
    {.name = "client",
     .arity = -2,
     .group = "connection",
     .summary = "A container for client connection commands.",
     .since = "2.4.0",
     .complexity = "Depends on subcommand.",
     .subcommands = client_subs},
    CMD_DEF_END,
};
