/*
 * cmd_server.c - the server and generic commands (cmd_server_table):
 * connection handling, keyspace commands, INFO, CONFIG, COMMAND.
 */
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

#include "cmd.h"
#include "conn.h"
#include "glob.h"
#include "log.h"
#include "server_int.h"
#include "tls.h"

#define FILTER_TYPE "MBbloomCF"

/* ---- helpers ----------------------------------------------------------- */

/* Strict decimal integer, as Redis's string2ll: no spaces, no '+', no
 * leading zeros, no overflow. */
static bool parse_ll(const resp_arg_t *a, long long *out)
{
    const char *p = a->ptr;
    size_t len = a->len, i = 0;
    bool neg = false;
    unsigned long long v = 0;
    if (len == 0 || len > 20)
        return false;
    if (p[0] == '-') {
        neg = true;
        i = 1;
        if (len == 1)
            return false;
    }
    if (p[i] == '0' && len > i + 1)
        return false;
    for (; i < len; i++) {
        if (p[i] < '0' || p[i] > '9')
            return false;
        unsigned d = (unsigned)(p[i] - '0');
        if (v > (ULLONG_MAX - d) / 10)
            return false;
        v = v * 10 + d;
    }
    if (neg) {
        if (v > (unsigned long long)LLONG_MAX + 1)
            return false;
        *out =
            v == (unsigned long long)LLONG_MAX + 1 ? LLONG_MIN : -(long long)v;
    } else {
        if (v > (unsigned long long)LLONG_MAX)
            return false;
        *out = (long long)v;
    }
    return true;
}

static bool parse_u64(const resp_arg_t *a, uint64_t *out)
{
    uint64_t v = 0;
    if (a->len == 0 || a->len > 20)
        return false;
    for (size_t i = 0; i < a->len; i++) {
        char ch = a->ptr[i];
        if (ch < '0' || ch > '9')
            return false;
        unsigned d = (unsigned)(ch - '0');
        if (v > (UINT64_MAX - d) / 10)
            return false;
        v = v * 10 + d;
    }
    *out = v;
    return true;
}

static void reply_not_integer(client_t *c)
{
    resp_add_error(&c->out, "ERR value is not an integer or out of range");
}

/* Redis accepts names made of '!'..'~' only. */
static bool printable_token(const resp_arg_t *a)
{
    for (size_t i = 0; i < a->len; i++)
        if (a->ptr[i] < '!' || a->ptr[i] > '~')
            return false;
    return true;
}

/* Compares in time that depends on the length of the attempt only. */
static bool secret_eq(const char *secret, const resp_arg_t *a)
{
    size_t slen = strlen(secret);
    unsigned diff = (unsigned)(slen != a->len);
    for (size_t i = 0; i < a->len; i++) {
        unsigned char s = slen > 0 ? (unsigned char)secret[i % slen] : 0;
        diff |= (unsigned)(s ^ (unsigned char)a->ptr[i]);
    }
    return diff == 0;
}

static bool has_password(const server_t *s)
{
    return s->cfg->requirepass != NULL && s->cfg->requirepass[0] != '\0';
}

/* Checks user/pass against the default user. user may be NULL. */
static bool check_auth(const server_t *s, const resp_arg_t *user,
                       const resp_arg_t *pass)
{
    if (user != NULL && !cmd_arg_is(user, "default"))
        return false;
    if (!has_password(s))
        return true; /* the default user is "nopass" */
    return secret_eq(s->cfg->requirepass, pass);
}

static void set_authenticated(client_t *c)
{
    if (!c->authenticated) {
        c->authenticated = true;
        conn_apply_limits((conn_t *)c);
    }
}

static void reply_wrongpass(client_t *c)
{
    resp_add_error(&c->out, "WRONGPASS invalid username-password pair or "
                            "user is disabled.");
}

/* A growable text buffer for INFO and CLIENT LIST. */
typedef struct sbuf {
    char *p;
    size_t len, cap;
    bool failed;
} sbuf_t;

static void sb_printf(sbuf_t *b, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

static void sb_printf(sbuf_t *b, const char *fmt, ...)
{
    if (b->failed)
        return;
    for (;;) {
        va_list ap;
        va_start(ap, fmt);
        int n = vsnprintf(b->p != NULL ? b->p + b->len : NULL, b->cap - b->len,
                          fmt, ap);
        va_end(ap);
        if (n < 0) {
            b->failed = true;
            return;
        }
        if ((size_t)n < b->cap - b->len) {
            b->len += (size_t)n;
            return;
        }
        size_t ncap = b->cap * 2 + (size_t)n + 256;
        char *np = realloc(b->p, ncap);
        if (np == NULL) {
            b->failed = true;
            return;
        }
        b->p = np;
        b->cap = ncap;
    }
}

static void sb_reply_verbatim(client_t *c, sbuf_t *b)
{
    if (b->failed) {
        resp_add_error(&c->out, "ERR out of memory");
    } else {
        resp_add_verbatim(&c->out, "txt", b->p != NULL ? b->p : "", b->len);
    }
    free(b->p);
}

/* ---- connection commands ----------------------------------------------- */

static void ping_proc(client_t *c, int argc, const resp_arg_t *argv)
{
    if (argc > 2) {
        reply_wrong_arity(c, "ping");
        return;
    }
    if (argc == 2)
        resp_add_bulk(&c->out, argv[1].ptr, argv[1].len);
    else
        resp_add_simple(&c->out, "PONG");
}

static void echo_proc(client_t *c, int argc, const resp_arg_t *argv)
{
    resp_add_bulk(&c->out, argv[1].ptr, argv[1].len);
}

static void quit_proc(client_t *c, int argc, const resp_arg_t *argv)
{
    reply_ok(c);
    c->close_after_reply = true;
}

static void auth_proc(client_t *c, int argc, const resp_arg_t *argv)
{
    if (argc > 3) {
        reply_syntax_error(c);
        return;
    }
    if (argc == 2 && !has_password(c->srv)) {
        resp_add_error(&c->out,
                       "ERR AUTH <password> called without any password "
                       "configured for the default user. Are you sure your "
                       "configuration is correct?");
        return;
    }
    const resp_arg_t *user = argc == 3 ? &argv[1] : NULL;
    if (!check_auth(c->srv, user, &argv[argc - 1])) {
        reply_wrongpass(c);
        return;
    }
    set_authenticated(c);
    reply_ok(c);
}

static bool setname(client_t *c, const resp_arg_t *name)
{
    if (!printable_token(name)) {
        resp_add_error(&c->out, "ERR Client names cannot contain spaces, "
                                "newlines or special characters.");
        return false;
    }
    char *copy = NULL;
    if (name->len > 0 && (copy = strndup(name->ptr, name->len)) == NULL) {
        resp_add_error(&c->out, "ERR out of memory");
        return false;
    }
    free(c->name);
    c->name = copy;
    return true;
}

static void hello_proc(client_t *c, int argc, const resp_arg_t *argv)
{
    long long ver = c->resp;
    int i = 1;
    if (argc >= 2) {
        if (!parse_ll(&argv[1], &ver)) {
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
    const resp_arg_t *user = NULL, *pass = NULL, *name = NULL;
    for (; i < argc; i++) {
        if (cmd_arg_is(&argv[i], "auth") && i + 2 < argc) {
            user = &argv[i + 1];
            pass = &argv[i + 2];
            i += 2;
        } else if (cmd_arg_is(&argv[i], "setname") && i + 1 < argc) {
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
        if (!check_auth(c->srv, user, pass)) {
            reply_wrongpass(c);
            return;
        }
        set_authenticated(c);
    }
    if (!c->authenticated) {
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

static void select_proc(client_t *c, int argc, const resp_arg_t *argv)
{
    long long n;
    if (!parse_ll(&argv[1], &n)) {
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

static void client_id_proc(client_t *c, int argc, const resp_arg_t *argv)
{
    resp_add_int(&c->out, (int64_t)c->id);
}

static void client_getname_proc(client_t *c, int argc, const resp_arg_t *argv)
{
    if (c->name != NULL)
        resp_add_cstr(&c->out, c->name);
    else
        resp_add_null(&c->out);
}

static void client_setname_proc(client_t *c, int argc, const resp_arg_t *argv)
{
    if (setname(c, &argv[2]))
        reply_ok(c);
}

static void client_setinfo_proc(client_t *c, int argc, const resp_arg_t *argv)
{
    conn_t *cn = (conn_t *)c;
    char **slot;
    const char *attr;
    if (cmd_arg_is(&argv[2], "lib-name")) {
        slot = &cn->lib_name;
        attr = "lib-name";
    } else if (cmd_arg_is(&argv[2], "lib-ver")) {
        slot = &cn->lib_ver;
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
        resp_add_error(&c->out, "ERR out of memory");
        return;
    }
    free(*slot);
    *slot = copy;
    reply_ok(c);
}

static void client_list_proc(client_t *c, int argc, const resp_arg_t *argv)
{
    bool only_ids = false;
    int ids_from = 0;
    bool none = false;
    for (int i = 2; i < argc; i++) {
        if (cmd_arg_is(&argv[i], "type") && i + 1 < argc) {
            const resp_arg_t *t = &argv[++i];
            if (cmd_arg_is(t, "normal"))
                continue;
            if (cmd_arg_is(t, "master") || cmd_arg_is(t, "replica") ||
                cmd_arg_is(t, "slave") || cmd_arg_is(t, "pubsub")) {
                none = true;
                continue;
            }
            resp_add_errorf(&c->out, "ERR Unknown client type '%.*s'",
                            (int)(t->len > 64 ? 64 : t->len),
                            printable_token(t) ? t->ptr : "?");
            return;
        } else if (cmd_arg_is(&argv[i], "id") && i + 1 < argc) {
            only_ids = true;
            ids_from = i + 1;
            for (int j = ids_from; j < argc; j++) {
                long long v;
                if (!parse_ll(&argv[j], &v) || v <= 0) {
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
    for (conn_t *cn = c->srv->clients; cn != NULL && !none; cn = cn->next) {
        if (only_ids) {
            bool want = false;
            for (int j = ids_from; j < argc && !want; j++) {
                long long v;
                want = parse_ll(&argv[j], &v) && (uint64_t)v == cn->cl.id;
            }
            if (!want)
                continue;
        }
        conn_describe(cn, line, sizeof(line));
        sb_printf(&b, "%s", line);
    }
    sb_reply_verbatim(c, &b);
}

static void client_info_proc(client_t *c, int argc, const resp_arg_t *argv)
{
    char line[1024];
    size_t n = conn_describe((conn_t *)c, line, sizeof(line));
    resp_add_verbatim(&c->out, "txt", line, n);
}

static void client_help_proc(client_t *c, int argc, const resp_arg_t *argv)
{
    static const char *lines[] = {
        "CLIENT <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
        "GETNAME",
        "    Return the name of the current connection.",
        "ID",
        "    Return the ID of the current connection.",
        "INFO",
        "    Return information about the current client connection.",
        "LIST [TYPE <type>] [ID <id> [<id> ...]]",
        "    Return information about client connections.",
        "SETINFO <option> <value>",
        "    Set client meta attr. Options are LIB-NAME and LIB-VER.",
        "SETNAME <name>",
        "    Assign the name <name> to the current connection.",
        "HELP",
        "    Print this help.",
    };
    size_t n = sizeof(lines) / sizeof(lines[0]);
    resp_add_array(&c->out, n);
    for (size_t i = 0; i < n; i++)
        resp_add_simple(&c->out, lines[i]);
}

/* ---- keyspace commands ------------------------------------------------- */

static void del_proc(client_t *c, int argc, const resp_arg_t *argv)
{
    int64_t n = 0;
    for (int i = 1; i < argc; i++)
        n += ks_del(c->db, argv[i].ptr, argv[i].len);
    if (n > 0)
        server_dirty(c->srv, (uint64_t)n);
    resp_add_int(&c->out, n);
}

static void exists_proc(client_t *c, int argc, const resp_arg_t *argv)
{
    int64_t n = 0;
    for (int i = 1; i < argc; i++)
        n += ks_get(c->db, argv[i].ptr, argv[i].len) != NULL;
    resp_add_int(&c->out, n);
}

static void type_proc(client_t *c, int argc, const resp_arg_t *argv)
{
    bool found = ks_get(c->db, argv[1].ptr, argv[1].len) != NULL;
    resp_add_simple(&c->out, found ? FILTER_TYPE : "none");
}

typedef struct keylist {
    const resp_arg_t *pattern; /* or NULL */
    const void **keys;
    size_t *lens;
    size_t n, cap;
    bool failed;
} keylist_t;

static int collect_key(void *ctx, const void *key, size_t len,
                       const cf_filter_t *f)
{
    keylist_t *kl = ctx;
    if (kl->failed)
        return 0;
    if (kl->pattern != NULL &&
        !glob_match(kl->pattern->ptr, kl->pattern->len, key, len, false))
        return 0;
    if (kl->n == kl->cap) {
        size_t ncap = kl->cap ? kl->cap * 2 : 64;
        const void **nk = realloc(kl->keys, ncap * sizeof(*nk));
        if (nk != NULL)
            kl->keys = nk;
        size_t *nl = realloc(kl->lens, ncap * sizeof(*nl));
        if (nl != NULL)
            kl->lens = nl;
        if (nk == NULL || nl == NULL) {
            kl->failed = true;
            return 0;
        }
        kl->cap = ncap;
    }
    kl->keys[kl->n] = key;
    kl->lens[kl->n] = len;
    kl->n++;
    return 0;
}

static void reply_keylist(client_t *c, keylist_t *kl)
{
    if (kl->failed) {
        resp_add_error(&c->out, "ERR out of memory");
    } else {
        resp_add_array(&c->out, kl->n);
        for (size_t i = 0; i < kl->n; i++)
            resp_add_bulk(&c->out, kl->keys[i], kl->lens[i]);
    }
    free(kl->keys);
    free(kl->lens);
}

static void keys_proc(client_t *c, int argc, const resp_arg_t *argv)
{
    keylist_t kl = {0};
    /* "*" matches everything: skip the matcher. */
    if (!(argv[1].len == 1 && argv[1].ptr[0] == '*'))
        kl.pattern = &argv[1];
    ks_foreach(c->db, collect_key, &kl);
    reply_keylist(c, &kl);
}

static void scan_proc(client_t *c, int argc, const resp_arg_t *argv)
{
    uint64_t cursor;
    if (!parse_u64(&argv[1], &cursor)) {
        resp_add_error(&c->out, "ERR invalid cursor");
        return;
    }
    keylist_t kl = {0};
    long long count = 10;
    bool type_mismatch = false;
    for (int i = 2; i < argc; i += 2) {
        if (i + 1 >= argc) {
            reply_syntax_error(c);
            return;
        }
        if (cmd_arg_is(&argv[i], "match")) {
            if (!(argv[i + 1].len == 1 && argv[i + 1].ptr[0] == '*'))
                kl.pattern = &argv[i + 1];
            else
                kl.pattern = NULL;
        } else if (cmd_arg_is(&argv[i], "count")) {
            if (!parse_ll(&argv[i + 1], &count)) {
                reply_not_integer(c);
                return;
            }
            if (count < 1) {
                reply_syntax_error(c);
                return;
            }
        } else if (cmd_arg_is(&argv[i], "type")) {
            type_mismatch = !cmd_arg_is(&argv[i + 1], "mbbloomcf");
        } else {
            reply_syntax_error(c);
            return;
        }
    }
    uint64_t next = ks_scan(c->db, cursor, (size_t)count, collect_key, &kl);
    if (type_mismatch)
        kl.n = 0;
    char buf[24];
    int n = snprintf(buf, sizeof(buf), "%" PRIu64, next);
    if (kl.failed) {
        reply_keylist(c, &kl);
        return;
    }
    resp_add_array(&c->out, 2);
    resp_add_bulk(&c->out, buf, (size_t)n);
    reply_keylist(c, &kl);
}

static void rename_proc(client_t *c, int argc, const resp_arg_t *argv)
{
    int rc =
        ks_rename(c->db, argv[1].ptr, argv[1].len, argv[2].ptr, argv[2].len);
    if (rc == -ENOENT) {
        resp_add_error(&c->out, "ERR no such key");
        return;
    }
    if (rc < 0) {
        resp_add_error(&c->out, "ERR out of memory");
        return;
    }
    server_dirty(c->srv, 1);
    reply_ok(c);
}

static void dbsize_proc(client_t *c, int argc, const resp_arg_t *argv)
{
    resp_add_int(&c->out, (int64_t)ks_size(c->db));
}

static bool flush_args_ok(client_t *c, int argc, const resp_arg_t *argv)
{
    if (argc > 2 || (argc == 2 && !cmd_arg_is(&argv[1], "async") &&
                     !cmd_arg_is(&argv[1], "sync"))) {
        reply_syntax_error(c);
        return false;
    }
    return true;
}

static void flushdb_proc(client_t *c, int argc, const resp_arg_t *argv)
{
    if (!flush_args_ok(c, argc, argv))
        return;
    server_dirty(c->srv, ks_size(c->db));
    ks_flush(c->db);
    reply_ok(c);
}

static void flushall_proc(client_t *c, int argc, const resp_arg_t *argv)
{
    if (!flush_args_ok(c, argc, argv))
        return;
    server_t *s = c->srv;
    uint64_t n = 0;
    for (int i = 0; i < s->ndbs; i++) {
        n += ks_size(s->dbs[i]);
        ks_flush(s->dbs[i]);
    }
    /* Redis counts a FLUSHALL as at least one change so it is saved. */
    server_dirty(s, n + 1);
    reply_ok(c);
}

/* ---- server commands --------------------------------------------------- */

static void time_proc(client_t *c, int argc, const resp_arg_t *argv)
{
    struct timeval tv;
    char buf[24];
    gettimeofday(&tv, NULL);
    resp_add_array(&c->out, 2);
    int n = snprintf(buf, sizeof(buf), "%lld", (long long)tv.tv_sec);
    resp_add_bulk(&c->out, buf, (size_t)n);
    n = snprintf(buf, sizeof(buf), "%lld", (long long)tv.tv_usec);
    resp_add_bulk(&c->out, buf, (size_t)n);
}

static void human_bytes(char *buf, size_t len, uint64_t n)
{
    static const char units[] = "BKMGTP";
    double d = (double)n;
    int u = 0;
    while (d >= 1024 && u < 5) {
        d /= 1024;
        u++;
    }
    if (u == 0)
        snprintf(buf, len, "%" PRIu64 "B", n);
    else
        snprintf(buf, len, "%.2f%c", d, units[u]);
}

static void info_cmdstat(void *ctx, const char *name, uint64_t calls,
                         uint64_t usec, uint64_t rejected, uint64_t failed)
{
    sbuf_t *b = ctx;
    sb_printf(b,
              "cmdstat_%s:calls=%" PRIu64 ",usec=%" PRIu64
              ",usec_per_call=%.2f,rejected_calls=%" PRIu64
              ",failed_calls=%" PRIu64 "\r\n",
              name, calls, usec, calls > 0 ? (double)usec / (double)calls : 0.0,
              rejected, failed);
}

enum {
    INFO_SERVER = 1 << 0,
    INFO_CLIENTS = 1 << 1,
    INFO_MEMORY = 1 << 2,
    INFO_PERSISTENCE = 1 << 3,
    INFO_STATS = 1 << 4,
    INFO_REPLICATION = 1 << 5,
    INFO_CPU = 1 << 6,
    INFO_COMMANDSTATS = 1 << 7,
    INFO_KEYSPACE = 1 << 8,
    INFO_DEFAULT = INFO_SERVER | INFO_CLIENTS | INFO_MEMORY | INFO_PERSISTENCE |
                   INFO_STATS | INFO_REPLICATION | INFO_CPU | INFO_KEYSPACE,
    INFO_ALL = INFO_DEFAULT | INFO_COMMANDSTATS,
};

static unsigned info_section(const resp_arg_t *a)
{
    static const struct {
        const char *name;
        unsigned bit;
    } names[] = {
        {"server", INFO_SERVER},     {"clients", INFO_CLIENTS},
        {"memory", INFO_MEMORY},     {"persistence", INFO_PERSISTENCE},
        {"stats", INFO_STATS},       {"replication", INFO_REPLICATION},
        {"cpu", INFO_CPU},           {"commandstats", INFO_COMMANDSTATS},
        {"keyspace", INFO_KEYSPACE}, {"default", INFO_DEFAULT},
        {"all", INFO_ALL},           {"everything", INFO_ALL},
    };
    for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
        if (cmd_arg_is(a, names[i].name))
            return names[i].bit;
    return 0; /* unknown sections are ignored, as in Redis */
}

static void info_proc(client_t *c, int argc, const resp_arg_t *argv)
{
    server_t *s = c->srv;
    const cfg_t *cfg = s->cfg;
    unsigned want = argc == 1 ? INFO_DEFAULT : 0;
    for (int i = 1; i < argc; i++)
        want |= info_section(&argv[i]);
    sbuf_t b = {0};
    char h1[32], h2[32];
    bool first = true;
#define SECTION(bit, title)                                                    \
    if ((want & (bit)) &&                                                      \
        (sb_printf(&b, "%s# " title "\r\n", first ? "" : "\r\n"),              \
         first = false, true))

    uint64_t now_ms = server_now_ms(s);
    SECTION(INFO_SERVER, "Server")
    {
        struct utsname un;
        struct timeval tv;
        gettimeofday(&tv, NULL);
        if (uname(&un) != 0)
            memset(&un, 0, sizeof(un));
        char exe[4096];
        size_t exelen = sizeof(exe);
        if (uv_exepath(exe, &exelen) != 0)
            exe[0] = '\0';
        sb_printf(&b,
                  "redis_version:" SERVER_REDIS_VERSION "\r\n"
                  "cuckood_version:" CUCKOOD_VERSION "\r\n"
                  "redis_mode:standalone\r\n"
                  "os:%s %s %s\r\n"
                  "arch_bits:%d\r\n"
                  "multiplexing_api:libuv %s\r\n"
                  "process_id:%d\r\n"
                  "tcp_port:%d\r\n"
                  "server_time_usec:%lld\r\n"
                  "uptime_in_seconds:%" PRIu64 "\r\n"
                  "uptime_in_days:%" PRIu64 "\r\n"
                  "hz:10\r\n"
                  "executable:%s\r\n"
                  "config_file:%s\r\n",
                  un.sysname, un.release, un.machine, (int)(sizeof(void *) * 8),
                  uv_version_string(), (int)getpid(), cfg->port,
                  (long long)tv.tv_sec * 1000000 + tv.tv_usec, now_ms / 1000,
                  now_ms / 86400000, exe,
                  cfg->config_file != NULL ? cfg->config_file : "");
    }
    SECTION(INFO_CLIENTS, "Clients")
    {
        sb_printf(&b,
                  "connected_clients:%" PRIu64 "\r\n"
                  "maxclients:%" PRIu64 "\r\n"
                  "blocked_clients:0\r\n",
                  s->nclients, cfg->maxclients);
    }
    SECTION(INFO_MEMORY, "Memory")
    {
        uint64_t used = server_used_memory(s);
        if (used > s->peak_memory)
            s->peak_memory = used;
        human_bytes(h1, sizeof(h1), used);
        human_bytes(h2, sizeof(h2), s->peak_memory);
        sb_printf(&b,
                  "used_memory:%" PRIu64 "\r\n"
                  "used_memory_human:%s\r\n"
                  "used_memory_peak:%" PRIu64 "\r\n"
                  "used_memory_peak_human:%s\r\n",
                  used, h1, s->peak_memory, h2);
        human_bytes(h1, sizeof(h1), cfg->maxmemory);
        sb_printf(&b,
                  "maxmemory:%" PRIu64 "\r\n"
                  "maxmemory_human:%s\r\n"
                  "maxmemory_policy:noeviction\r\n",
                  cfg->maxmemory, h1);
    }
    SECTION(INFO_PERSISTENCE, "Persistence")
    {
        char pbuf[512];
        persist_info(s, pbuf, sizeof(pbuf));
        sb_printf(&b, "%saof_enabled:0\r\n", pbuf);
    }
    SECTION(INFO_STATS, "Stats")
    {
        sb_printf(&b,
                  "total_connections_received:%" PRIu64 "\r\n"
                  "total_commands_processed:%" PRIu64 "\r\n"
                  "instantaneous_ops_per_sec:%" PRIu64 "\r\n"
                  "total_net_input_bytes:%" PRIu64 "\r\n"
                  "total_net_output_bytes:%" PRIu64 "\r\n"
                  "rejected_connections:%" PRIu64 "\r\n"
                  "keyspace_hits:%" PRIu64 "\r\n"
                  "keyspace_misses:%" PRIu64 "\r\n",
                  s->total_connections, s->total_commands, s->ops_per_sec,
                  s->net_input_bytes, s->net_output_bytes,
                  s->rejected_connections, s->keyspace_hits,
                  s->keyspace_misses);
        char tbuf[256];
        tls_info(s->tls, tbuf, sizeof(tbuf));
        sb_printf(&b, "%s", tbuf);
    }
    SECTION(INFO_REPLICATION, "Replication")
    {
        sb_printf(&b, "role:master\r\nconnected_slaves:0\r\n");
    }
    SECTION(INFO_CPU, "CPU")
    {
        uv_rusage_t ru;
        if (uv_getrusage(&ru) == 0)
            sb_printf(&b,
                      "used_cpu_sys:%ld.%06ld\r\nused_cpu_user:%ld.%06ld\r\n",
                      (long)ru.ru_stime.tv_sec, (long)ru.ru_stime.tv_usec,
                      (long)ru.ru_utime.tv_sec, (long)ru.ru_utime.tv_usec);
    }
    SECTION(INFO_COMMANDSTATS, "Commandstats")
    {
        cmd_stats_each(s, info_cmdstat, &b);
    }
    SECTION(INFO_KEYSPACE, "Keyspace")
    {
        for (int i = 0; i < s->ndbs; i++)
            if (ks_size(s->dbs[i]) > 0)
                sb_printf(&b, "db%d:keys=%zu,expires=0,avg_ttl=0\r\n", i,
                          ks_size(s->dbs[i]));
    }
#undef SECTION
    sb_reply_verbatim(c, &b);
}

/* ---- CONFIG ------------------------------------------------------------ */

typedef struct cfg_pairs {
    char **kv; /* name, value, name, value... */
    size_t n, cap;
    bool failed;
} cfg_pairs_t;

static void collect_cfg(void *ctx, const char *name, const char *value)
{
    cfg_pairs_t *p = ctx;
    if (p->failed)
        return;
    for (size_t i = 0; i < p->n; i += 2)
        if (strcmp(p->kv[i], name) == 0)
            return; /* several patterns may match one directive */
    if (p->n + 2 > p->cap) {
        size_t ncap = p->cap ? p->cap * 2 : 32;
        char **nkv = realloc(p->kv, ncap * sizeof(*nkv));
        if (nkv == NULL) {
            p->failed = true;
            return;
        }
        p->kv = nkv;
        p->cap = ncap;
    }
    char *k = strdup(name), *v = strdup(value);
    if (k == NULL || v == NULL) {
        free(k);
        free(v);
        p->failed = true;
        return;
    }
    p->kv[p->n++] = k;
    p->kv[p->n++] = v;
}

static void config_get_proc(client_t *c, int argc, const resp_arg_t *argv)
{
    /* Directives we do not have but tools read (redis-benchmark asks for
     * appendonly), with the value that describes us. */
    static const char *const compat[][2] = {{"appendonly", "no"}};
    cfg_pairs_t p = {0};
    for (int i = 2; i < argc; i++) {
        cfg_get(c->srv->cfg, argv[i].ptr, collect_cfg, &p);
        for (size_t j = 0; j < sizeof(compat) / sizeof(compat[0]); j++)
            if (glob_match(argv[i].ptr, argv[i].len, compat[j][0],
                           strlen(compat[j][0]), true))
                collect_cfg(&p, compat[j][0], compat[j][1]);
    }
    if (p.failed) {
        resp_add_error(&c->out, "ERR out of memory");
    } else {
        resp_add_map(&c->out, p.n / 2);
        for (size_t i = 0; i < p.n; i++)
            resp_add_cstr(&c->out, p.kv[i]);
    }
    for (size_t i = 0; i < p.n; i++)
        free(p.kv[i]);
    free(p.kv);
}

/* Puts back the values CONFIG SET changed (n of them) after a failure. */
static void config_restore(server_t *s, char **names, char **old, int n)
{
    char err[256];
    for (int i = n - 1; i >= 0; i--)
        if (old[i] != NULL)
            (void)cfg_set(s->cfg, names[i], old[i], err, sizeof(err));
}

static void config_set_proc(client_t *c, int argc, const resp_arg_t *argv)
{
    if ((argc - 2) % 2 != 0) {
        reply_wrong_arity(c, "config|set");
        return;
    }
    int n = (argc - 2) / 2, done = 0;
    char **names = calloc((size_t)n, sizeof(*names));
    char **old = calloc((size_t)n, sizeof(*old));
    char err[768];
    err[0] = '\0';
    if (names == NULL || old == NULL) {
        resp_add_error(&c->out, "ERR out of memory");
        goto out;
    }
    for (int i = 0; i < n; i++, done++) {
        names[i] = argv[2 + 2 * i].ptr;
        old[i] = cfg_get_value(c->srv->cfg, names[i]);
        if (cfg_set(c->srv->cfg, names[i], argv[3 + 2 * i].ptr, err,
                    sizeof(err)) < 0)
            break;
    }
    /* Directives that take effect together (a TLS certificate and its
     * key) are checked once all are stored; a failure undoes them all. */
    if (done == n &&
        server_config_commit(c->srv, names, n, err, sizeof(err)) == 0) {
        for (int i = 0; i < n; i++)
            server_config_changed(c->srv, names[i]);
        reply_ok(c);
        goto out;
    }
    config_restore(c->srv, names, old, done);
    for (char *p = err; *p; p++)
        if (*p == '\r' || *p == '\n')
            *p = ' ';
    resp_add_error(&c->out, err[0] ? err : "ERR CONFIG SET failed");
out:
    if (old != NULL)
        for (int i = 0; i < n; i++)
            free(old[i]);
    free(old);
    free(names);
}

static void config_resetstat_proc(client_t *c, int argc, const resp_arg_t *argv)
{
    server_t *s = c->srv;
    cmd_stats_reset(s);
    s->total_commands = s->total_connections = 0;
    s->rejected_connections = 0;
    s->keyspace_hits = s->keyspace_misses = 0;
    s->net_input_bytes = s->net_output_bytes = 0;
    s->peak_memory = server_used_memory(s);
    reply_ok(c);
}

static void shutdown_proc(client_t *c, int argc, const resp_arg_t *argv)
{
    bool nosave = false, save = false, force = false;
    for (int i = 1; i < argc; i++) {
        if (cmd_arg_is(&argv[i], "nosave"))
            nosave = true;
        else if (cmd_arg_is(&argv[i], "save"))
            save = true;
        else if (cmd_arg_is(&argv[i], "force"))
            force = true;
        else if (!cmd_arg_is(&argv[i], "now")) {
            reply_syntax_error(c);
            return;
        }
    }
    if (nosave && save) {
        reply_syntax_error(c);
        return;
    }
    log_warning("User requested shutdown...");
    if (persist_shutdown_save(c->srv, nosave, save, force) < 0) {
        resp_add_error(&c->out, "ERR Errors trying to SHUTDOWN. Check logs.");
        return;
    }
    c->close_after_reply = true;
    server_shutdown(c->srv, 0);
}

static void memory_usage_proc(client_t *c, int argc, const resp_arg_t *argv)
{
    if (argc != 3 && !(argc == 5 && cmd_arg_is(&argv[3], "samples"))) {
        reply_syntax_error(c);
        return;
    }
    const cf_filter_t *f = ks_get(c->db, argv[2].ptr, argv[2].len);
    if (f == NULL) {
        resp_add_null(&c->out);
        return;
    }
    /* The filter's exact size plus what the key takes in the table. */
    resp_add_int(&c->out, (int64_t)(cf_size_bytes(f) + argv[2].len + 1 + 40));
}

/* ---- the table --------------------------------------------------------- */

#define END                                                                    \
    {                                                                          \
        NULL, NULL, NULL, 0, NULL                                              \
    }

static const cmd_arg_t message_opt[] = {
    {"message", "string", NULL, CMD_ARG_OPTIONAL, NULL}, END};
static const cmd_arg_t message_arg[] = {{"message", "string", NULL, 0, NULL},
                                        END};
static const cmd_arg_t auth_args[] = {
    {"username", "string", NULL, CMD_ARG_OPTIONAL, NULL},
    {"password", "string", NULL, 0, NULL},
    END};
static const cmd_arg_t hello_auth_block[] = {
    {"username", "string", NULL, 0, NULL},
    {"password", "string", NULL, 0, NULL},
    END};
static const cmd_arg_t hello_block[] = {
    {"protover", "integer", NULL, 0, NULL},
    {"auth", "block", "AUTH", CMD_ARG_OPTIONAL, hello_auth_block},
    {"clientname", "string", "SETNAME", CMD_ARG_OPTIONAL, NULL},
    END};
static const cmd_arg_t hello_args[] = {
    {"arguments", "block", NULL, CMD_ARG_OPTIONAL, hello_block}, END};
static const cmd_arg_t index_arg[] = {{"index", "integer", NULL, 0, NULL}, END};
static const cmd_arg_t keys_multi[] = {
    {"key", "key", NULL, CMD_ARG_MULTIPLE, NULL}, END};
static const cmd_arg_t key_arg[] = {{"key", "key", NULL, 0, NULL}, END};
static const cmd_arg_t pattern_arg[] = {{"pattern", "pattern", NULL, 0, NULL},
                                        END};
static const cmd_arg_t scan_args[] = {
    {"cursor", "integer", NULL, 0, NULL},
    {"pattern", "pattern", "MATCH", CMD_ARG_OPTIONAL, NULL},
    {"count", "integer", "COUNT", CMD_ARG_OPTIONAL, NULL},
    {"type", "string", "TYPE", CMD_ARG_OPTIONAL, NULL},
    END};
static const cmd_arg_t rename_args[] = {
    {"key", "key", NULL, 0, NULL}, {"newkey", "key", NULL, 0, NULL}, END};
static const cmd_arg_t flush_mode[] = {
    {"async", "pure-token", "ASYNC", 0, NULL},
    {"sync", "pure-token", "SYNC", 0, NULL},
    END};
static const cmd_arg_t flush_args[] = {
    {"flush-type", "oneof", NULL, CMD_ARG_OPTIONAL, flush_mode}, END};
static const cmd_arg_t section_args[] = {
    {"section", "string", NULL, CMD_ARG_OPTIONAL | CMD_ARG_MULTIPLE, NULL},
    END};
static const cmd_arg_t name_arg[] = {
    {"connection-name", "string", NULL, 0, NULL}, END};
static const cmd_arg_t setinfo_attr[] = {
    {"libname", "string", "LIB-NAME", 0, NULL},
    {"libver", "string", "LIB-VER", 0, NULL},
    END};
static const cmd_arg_t setinfo_args[] = {
    {"attr", "oneof", NULL, 0, setinfo_attr}, END};
static const cmd_arg_t client_type[] = {
    {"normal", "pure-token", "NORMAL", 0, NULL},
    {"master", "pure-token", "MASTER", 0, NULL},
    {"replica", "pure-token", "REPLICA", 0, NULL},
    {"pubsub", "pure-token", "PUBSUB", 0, NULL},
    END};
static const cmd_arg_t client_list_args[] = {
    {"client-type", "oneof", "TYPE", CMD_ARG_OPTIONAL, client_type},
    {"client-id", "integer", "ID", CMD_ARG_OPTIONAL | CMD_ARG_MULTIPLE, NULL},
    END};
static const cmd_arg_t command_names[] = {
    {"command-name", "string", NULL, CMD_ARG_OPTIONAL | CMD_ARG_MULTIPLE, NULL},
    END};
static const cmd_arg_t filterby_opts[] = {
    {"module-name", "string", "MODULE", 0, NULL},
    {"category", "string", "ACLCAT", 0, NULL},
    {"pattern", "pattern", "PATTERN", 0, NULL},
    END};
static const cmd_arg_t command_list_args[] = {
    {"filterby", "oneof", "FILTERBY", CMD_ARG_OPTIONAL, filterby_opts}, END};
static const cmd_arg_t config_get_args[] = {
    {"parameter", "string", NULL, CMD_ARG_MULTIPLE, NULL}, END};
static const cmd_arg_t config_pair[] = {{"parameter", "string", NULL, 0, NULL},
                                        {"value", "string", NULL, 0, NULL},
                                        END};
static const cmd_arg_t config_set_args[] = {
    {"data", "block", NULL, CMD_ARG_MULTIPLE, config_pair}, END};
static const cmd_arg_t shutdown_save[] = {
    {"nosave", "pure-token", "NOSAVE", 0, NULL},
    {"save", "pure-token", "SAVE", 0, NULL},
    END};
static const cmd_arg_t shutdown_args[] = {
    {"save-selector", "oneof", NULL, CMD_ARG_OPTIONAL, shutdown_save},
    {"now", "pure-token", "NOW", CMD_ARG_OPTIONAL, NULL},
    {"force", "pure-token", "FORCE", CMD_ARG_OPTIONAL, NULL},
    END};

#define CMD_END                                                                \
    {                                                                          \
        NULL, 0, 0, NULL, 0, 0, 0, NULL, NULL, NULL, NULL, NULL, NULL          \
    }

static const cmd_arg_t memory_usage_args[] = {
    {"key", "key", NULL, 0, NULL},
    {"count", "integer", "SAMPLES", CMD_ARG_OPTIONAL, NULL},
    END};

static const cmd_def_t memory_subs[] = {
    {"usage", -3, CMD_READONLY, memory_usage_proc, 2, 2, 1, "server",
     "Estimates the memory usage of a key.", "4.0.0", "O(1)", memory_usage_args,
     NULL},
    CMD_END,
};

static const cmd_def_t client_subs[] = {
    {"getname", 2, CMD_FAST, client_getname_proc, 0, 0, 0, "connection",
     "Returns the name of the connection.", "2.6.9", "O(1)", NULL, NULL},
    {"id", 2, CMD_FAST, client_id_proc, 0, 0, 0, "connection",
     "Returns the unique client ID of the connection.", "5.0.0", "O(1)", NULL,
     NULL},
    {"info", 2, 0, client_info_proc, 0, 0, 0, "connection",
     "Returns information about the connection.", "6.2.0", "O(1)", NULL, NULL},
    {"list", -2, CMD_ADMIN, client_list_proc, 0, 0, 0, "connection",
     "Lists open connections.", "2.4.0",
     "O(N) where N is the number of "
     "client connections",
     client_list_args, NULL},
    {"setinfo", 4, 0, client_setinfo_proc, 0, 0, 0, "connection",
     "Sets information specific to the client or connection.", "7.2.0", "O(1)",
     setinfo_args, NULL},
    {"setname", 3, 0, client_setname_proc, 0, 0, 0, "connection",
     "Sets the connection name.", "2.6.9", "O(1)", name_arg, NULL},
    {"help", 2, 0, client_help_proc, 0, 0, 0, "connection",
     "Returns helpful text about the different subcommands.", "5.0.0", "O(1)",
     NULL, NULL},
    CMD_END,
};

static const cmd_def_t command_subs[] = {
    {"count", 2, 0, cmd_command_count_proc, 0, 0, 0, "server",
     "Returns a count of commands.", "2.8.13", "O(1)", NULL, NULL},
    {"docs", -2, 0, cmd_command_docs_proc, 0, 0, 0, "server",
     "Returns documentary information about one, multiple or all commands.",
     "7.0.0", "O(N) where N is the number of commands to look up",
     command_names, NULL},
    {"info", -2, 0, cmd_command_info_proc, 0, 0, 0, "server",
     "Returns information about one, multiple or all commands.", "2.8.13",
     "O(N) where N is the number of commands to look up", command_names, NULL},
    {"list", -2, 0, cmd_command_list_proc, 0, 0, 0, "server",
     "Returns a list of command names.", "7.0.0",
     "O(N) where N is the total number of commands", command_list_args, NULL},
    CMD_END,
};

static const cmd_def_t config_subs[] = {
    {"get", -3, CMD_ADMIN, config_get_proc, 0, 0, 0, "server",
     "Returns the effective values of configuration parameters.", "2.0.0",
     "O(N) when N is the number of configuration parameters provided",
     config_get_args, NULL},
    {"set", -4, CMD_ADMIN, config_set_proc, 0, 0, 0, "server",
     "Sets configuration parameters in-flight.", "2.0.0",
     "O(N) when N is the number of configuration parameters provided",
     config_set_args, NULL},
    {"resetstat", 2, CMD_ADMIN, config_resetstat_proc, 0, 0, 0, "server",
     "Resets the server's statistics.", "2.0.0", "O(1)", NULL, NULL},
    CMD_END,
};

const cmd_def_t cmd_server_table[] = {
    {"ping", -1, CMD_FAST, ping_proc, 0, 0, 0, "connection",
     "Returns the server's liveliness response.", "1.0.0", "O(1)", message_opt,
     NULL},
    {"echo", 2, CMD_FAST, echo_proc, 0, 0, 0, "connection",
     "Returns the given string.", "1.0.0", "O(1)", message_arg, NULL},
    {"quit", -1, CMD_FAST | CMD_NOAUTH | CMD_LOADING | CMD_STALE, quit_proc, 0,
     0, 0, "connection", "Closes the connection.", "1.0.0", "O(1)", NULL, NULL},
    {"hello", -1, CMD_FAST | CMD_NOAUTH | CMD_LOADING | CMD_STALE, hello_proc,
     0, 0, 0, "connection", "Handshakes with the server.", "6.0.0", "O(1)",
     hello_args, NULL},
    {"auth", -2, CMD_FAST | CMD_NOAUTH | CMD_LOADING | CMD_STALE, auth_proc, 0,
     0, 0, "connection", "Authenticates the connection.", "1.0.0",
     "O(N) where N is the number of passwords defined for the user", auth_args,
     NULL},
    {"select", 2, CMD_FAST | CMD_LOADING | CMD_STALE, select_proc, 0, 0, 0,
     "connection", "Changes the selected database.", "1.0.0", "O(1)", index_arg,
     NULL},
    {"client", -2, 0, NULL, 0, 0, 0, "connection",
     "A container for client connection commands.", "2.4.0",
     "Depends on subcommand.", NULL, client_subs},
    {"command", -1, CMD_LOADING | CMD_STALE, cmd_command_proc, 0, 0, 0,
     "server", "Returns detailed information about all commands.", "2.8.13",
     "O(N) where N is the total number of Redis commands", NULL, command_subs},
    {"del", -2, CMD_WRITE, del_proc, 1, -1, 1, "generic",
     "Deletes one or more keys.", "1.0.0",
     "O(N) where N is the number of keys that will be removed.", keys_multi,
     NULL},
    {"unlink", -2, CMD_WRITE | CMD_FAST, del_proc, 1, -1, 1, "generic",
     "Asynchronously deletes one or more keys.", "4.0.0",
     "O(1) for each key removed regardless of its size.", keys_multi, NULL},
    {"exists", -2, CMD_READONLY | CMD_FAST, exists_proc, 1, -1, 1, "generic",
     "Determines whether one or more keys exist.", "1.0.0",
     "O(N) where N is the number of keys to check.", keys_multi, NULL},
    {"type", 2, CMD_READONLY | CMD_FAST, type_proc, 1, 1, 1, "generic",
     "Determines the type of value stored at a key.", "1.0.0", "O(1)", key_arg,
     NULL},
    {"keys", 2, CMD_READONLY, keys_proc, 0, 0, 0, "generic",
     "Returns all key names that match a pattern.", "1.0.0",
     "O(N) with N being the number of keys in the database", pattern_arg, NULL},
    {"scan", -2, CMD_READONLY, scan_proc, 0, 0, 0, "generic",
     "Iterates over the key names in the database.", "2.8.0",
     "O(1) for every call. O(N) for a complete iteration.", scan_args, NULL},
    {"rename", 3, CMD_WRITE, rename_proc, 1, 2, 1, "generic",
     "Renames a key and overwrites the destination.", "1.0.0", "O(1)",
     rename_args, NULL},
    {"dbsize", 1, CMD_READONLY | CMD_FAST, dbsize_proc, 0, 0, 0, "server",
     "Returns the number of keys in the database.", "1.0.0", "O(1)", NULL,
     NULL},
    {"flushdb", -1, CMD_WRITE, flushdb_proc, 0, 0, 0, "server",
     "Removes all keys from the current database.", "1.0.0",
     "O(N) where N is the number of keys in the selected database", flush_args,
     NULL},
    {"flushall", -1, CMD_WRITE, flushall_proc, 0, 0, 0, "server",
     "Removes all keys from all databases.", "1.0.0",
     "O(N) where N is the total number of keys in all databases", flush_args,
     NULL},
    {"info", -1, CMD_LOADING | CMD_STALE, info_proc, 0, 0, 0, "server",
     "Returns information and statistics about the server.", "1.0.0", "O(1)",
     section_args, NULL},
    {"time", 1, CMD_FAST | CMD_LOADING | CMD_STALE, time_proc, 0, 0, 0,
     "server", "Returns the server time.", "2.6.0", "O(1)", NULL, NULL},
    {"config", -2, 0, NULL, 0, 0, 0, "server",
     "A container for server configuration commands.", "2.0.0",
     "Depends on subcommand.", NULL, config_subs},
    {"memory", -2, 0, NULL, 0, 0, 0, "server",
     "A container for memory diagnostics commands.", "4.0.0",
     "Depends on subcommand.", NULL, memory_subs},
    {"shutdown", -1, CMD_ADMIN | CMD_LOADING | CMD_STALE, shutdown_proc, 0, 0,
     0, "server",
     "Synchronously saves the database(s) to disk and shuts down the "
     "server.",
     "1.0.0",
     "O(N) when saving, where N is the total number of "
     "keys in all databases",
     shutdown_args, NULL},
    CMD_END,
};
