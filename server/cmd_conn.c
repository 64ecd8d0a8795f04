/*
 * cmd_conn.c - the connection commands (entries in cmdtab.c): PING, ECHO, QUIT,
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

void cmd_conn_ping_proc(client_t *c, int argc, const arg_t *argv)
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

void cmd_conn_echo_proc(client_t *c, int argc, const arg_t *argv)
{
    resp_add_bulk(&c->out, argv[1].ptr, argv[1].len);
}

void cmd_conn_quit_proc(client_t *c, int argc, const arg_t *argv)
{
    reply_ok(c);
    c->close_after_reply = true;
}

void cmd_conn_auth_proc(client_t *c, int argc, const arg_t *argv)
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

void cmd_conn_hello_proc(client_t *c, int argc, const arg_t *argv)
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

void cmd_conn_select_proc(client_t *c, int argc, const arg_t *argv)
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

void cmd_conn_client_id_proc(client_t *c, int argc, const arg_t *argv)
{
    resp_add_int(&c->out, (int64_t)c->id);
}

void cmd_conn_client_getname_proc(client_t *c, int argc, const arg_t *argv)
{
    if (c->name != NULL)
        resp_add_cstr(&c->out, c->name);
    else
        resp_add_null(&c->out);
}

void cmd_conn_client_setname_proc(client_t *c, int argc, const arg_t *argv)
{
    if (setname(c, &argv[2]))
        reply_ok(c);
}

void cmd_conn_client_setinfo_proc(client_t *c, int argc, const arg_t *argv)
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

void cmd_conn_client_list_proc(client_t *c, int argc, const arg_t *argv)
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

void cmd_conn_client_info_proc(client_t *c, int argc, const arg_t *argv)
{
    char line[1024];
    size_t n = conn_describe(c, line, sizeof(line));
    resp_add_verbatim(&c->out, "txt", line, n);
}

void cmd_conn_client_help_proc(client_t *c, int argc, const arg_t *argv)
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
