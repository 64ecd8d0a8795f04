/*
 * config.c - one table of directives drives the file parser, the command
 * line (config_load.c), CONFIG GET and CONFIG SET. Error texts follow Redis 7
 * where Redis has the same directive, so operators see familiar messages.
 */
#include "config.h"
#include "config_int.h"

#include "cfcmd.h"
#include "cmdarg.h"
#include "glob.h"
#include "resp.h"
#include "util.h"

#include <arpa/inet.h>
#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

/* Returned as a reason when an allocation failed: apply() maps it to
 * -ENOMEM. */
static const char oom[] = "out of memory";

static const char *const loglevel_names[] = {"debug", "verbose", "notice",
                                             "warning", NULL};
/* Indexed by CFG_TLS_AUTH_*. */
static const char *const tls_auth_names[] = {"no", "yes", "optional", NULL};
/* Indexed by CFG_ACL_PUBSUB_*. */
static const char *const pubsub_names[] = {"allchannels", "resetchannels",
                                           NULL};
/* Indexed by CFG_FSYNC_*. */
static const char *const fsync_names[] = {"everysec", "always", "no", NULL};
/* Indexed by CFG_DEBUG_*. */
static const char *const debug_names[] = {"no", "yes", "local", NULL};

/* Redis's defaults for the classes we accept but do not keep. */
static const char cobl_others[] =
    "slave 268435456 67108864 60 pubsub 33554432 8388608 60";

/* The cf-* directives are the command layer's options (cfcmd_opts): their
 * bounds, cross-checks and what a value implies are checked there, once
 * for both hosts, on a copy of cfg_t's defaults (nothing changes on a
 * refusal). */

#define OFF(f) offsetof(cfg_t, f)
/* One table row per line: clang-format would wrap these initializers in
 * braces on lines of their own. */
/* clang-format off */
#define NUM(n, t, fl, f, lo, hi)                                               \
    {.name = n, .type = t, .flags = fl, .off = OFF(f), .min = lo, .max = hi}
#define ENUM(n, fl, f, nm)                                                     \
    {.name = n, .type = T_ENUM, .flags = fl, .off = OFF(f), .names = nm}
/* A cf-* directive: cfcmd_opts holds its bounds (see apply_cf()). */
#define CFOPT(n, t, f)                                                         \
    {.name = n, .type = t, .flags = F_MUT | F_CF, .off = OFF(f)}
/* clang-format on */

static const cfg_def_t defs[] = {
    NUM("port", T_INT, 0, port, 0, 65535),
    NUM("bind", T_BIND, 0, bind, 0, 0),
    NUM("tls-port", T_INT, 0, tls_port, 0, 65535),
    NUM("tls-cert-file", T_STR, F_MUT | F_NULLABLE, tls_cert_file, 0, 0),
    NUM("tls-key-file", T_STR, F_MUT | F_NULLABLE, tls_key_file, 0, 0),
    NUM("tls-key-file-pass", T_STR, F_MUT | F_NULLABLE, tls_key_file_pass, 0,
        0),
    NUM("tls-ca-cert-file", T_STR, F_MUT | F_NULLABLE, tls_ca_cert_file, 0, 0),
    NUM("tls-ca-cert-dir", T_STR, F_MUT | F_NULLABLE, tls_ca_cert_dir, 0, 0),
    ENUM("tls-auth-clients", F_MUT, tls_auth_clients, tls_auth_names),
    NUM("tls-protocols", T_STR, F_MUT | F_NULLABLE, tls_protocols, 0, 0),
    NUM("tls-ciphers", T_STR, F_MUT | F_NULLABLE, tls_ciphers, 0, 0),
    NUM("tls-ciphersuites", T_STR, F_MUT | F_NULLABLE, tls_ciphersuites, 0, 0),
    NUM("tls-prefer-server-ciphers", T_BOOL, F_MUT, tls_prefer_server_ciphers,
        0, 0),
    NUM("tls-session-caching", T_BOOL, F_MUT, tls_session_caching, 0, 0),
    NUM("tls-session-cache-size", T_INT, F_MUT, tls_session_cache_size, 0,
        INT_MAX),
    NUM("tls-session-cache-timeout", T_INT, F_MUT, tls_session_cache_timeout, 0,
        INT_MAX),
    NUM("tls-handshake-timeout", T_INT, F_MUT, tls_handshake_timeout, 1,
        INT_MAX),
    NUM("unixsocket", T_STR, F_NULLABLE, unixsocket, 0, 0),
    NUM("unixsocketperm", T_OCTAL, 0, unixsocketperm, 0, 0777),
    NUM("protected-mode", T_BOOL, F_MUT, protected_mode, 0, 0),
    NUM("tcp-backlog", T_INT, 0, tcp_backlog, 0, INT_MAX),
    ENUM("enable-debug-command", 0, enable_debug_command, debug_names),
    NUM("activerehashing", T_BOOL, F_MUT, activerehashing, 0, 0),
    NUM("lazyfree-lazy-eviction", T_BOOL, F_MUT, lazyfree_lazy_eviction, 0, 0),
    NUM("lazyfree-lazy-expire", T_BOOL, F_MUT, lazyfree_lazy_expire, 0, 0),
    NUM("lazyfree-lazy-server-del", T_BOOL, F_MUT, lazyfree_lazy_server_del, 0,
        0),
    NUM("lazyfree-lazy-user-del", T_BOOL, F_MUT, lazyfree_lazy_user_del, 0, 0),
    NUM("lazyfree-lazy-user-flush", T_BOOL, F_MUT, lazyfree_lazy_user_flush, 0,
        0),
    NUM("tcp-keepalive", T_INT, F_MUT, tcp_keepalive, 0, INT_MAX),
    NUM("timeout", T_INT, F_MUT, timeout, 0, INT_MAX),
    NUM("requirepass", T_STR, F_MUT | F_NULLABLE, requirepass, 0, 0),
    NUM("aclfile", T_STR, F_NULLABLE, aclfile, 0, 0),
    NUM("maxclients", T_U64, F_MUT, maxclients, 1, UINT32_MAX),
    NUM("maxmemory", T_MEM, F_MUT, maxmemory, 0, UINT64_MAX),
    NUM("proto-max-bulk-len", T_MEM, F_MUT, proto_max_bulk_len, 1 << 20,
        INT64_MAX),
    NUM("client-query-buffer-limit", T_MEM, F_MUT, client_query_buffer_limit,
        1 << 20, INT64_MAX),
    NUM("client-output-buffer-limit", T_COBL, F_MUT, cobl_hard, 0, 0),
    NUM("databases", T_INT, 0, databases, 1, 10000),
    NUM("dir", T_STR, F_NONEMPTY, dir, 0, 0),
    NUM("dbfilename", T_STR, F_MUT | F_NONEMPTY | F_NOPATH, dbfilename, 0, 0),
    NUM("save", T_SAVE, F_MUT, save, 0, 0),
    NUM("stop-writes-on-bgsave-error", T_BOOL, F_MUT,
        stop_writes_on_bgsave_error, 0, 0),
    NUM("appendonly", T_BOOL, F_MUT, appendonly, 0, 0),
    NUM("appenddirname", T_STR, F_NONEMPTY | F_NOPATH, appenddirname, 0, 0),
    NUM("appendfilename", T_STR, F_NONEMPTY | F_NOPATH, appendfilename, 0, 0),
    ENUM("appendfsync", F_MUT, appendfsync, fsync_names),
    NUM("no-appendfsync-on-rewrite", T_BOOL, F_MUT, no_appendfsync_on_rewrite,
        0, 0),
    NUM("auto-aof-rewrite-percentage", T_INT, F_MUT,
        auto_aof_rewrite_percentage, 0, INT_MAX),
    NUM("auto-aof-rewrite-min-size", T_MEM, F_MUT, auto_aof_rewrite_min_size, 0,
        INT64_MAX),
    NUM("aof-load-truncated", T_BOOL, F_MUT, aof_load_truncated, 0, 0),
    NUM("aof-timestamp-enabled", T_BOOL, F_MUT, aof_timestamp_enabled, 0, 0),
    NUM("aof-use-rdb-preamble", T_BOOL, F_MUT, aof_use_rdb_preamble, 0, 0),
    NUM("key-load-delay", T_I64, F_MUT | F_HIDDEN, key_load_delay, 0, 0),
    NUM("cf-window-clock-offset", T_I64, F_MUT | F_HIDDEN,
        cf_window_clock_offset, 0, 0),
    NUM("loading-process-events-interval-bytes", T_U64, F_MUT | F_HIDDEN,
        loading_process_events_interval_bytes, 1024, INT_MAX),
    NUM("slowlog-log-slower-than", T_I64, F_MUT, slowlog_log_slower_than, 0, 0),
    NUM("slowlog-max-len", T_U64, F_MUT, slowlog_max_len, 0, INT64_MAX),
    NUM("acllog-max-len", T_U64, F_MUT, acllog_max_len, 0, LONG_MAX),
    ENUM("acl-pubsub-default", F_MUT, acl_pubsub_default, pubsub_names),
    NUM("latency-monitor-threshold", T_U64, F_MUT, latency_monitor_threshold, 0,
        INT64_MAX),
    ENUM("loglevel", F_MUT, loglevel, loglevel_names),
    NUM("logfile", T_STR, 0, logfile, 0, 0),
    NUM("pidfile", T_STR, F_NULLABLE, pidfile, 0, 0),
    NUM("daemonize", T_BOOL, 0, daemonize, 0, 0),
    CFOPT("cf-bucket-size", T_U32, cf.bucket_size),
    CFOPT("cf-fingerprint-bits", T_U32, cf.fp_bits),
    CFOPT("cf-error-rate", T_DOUBLE, cf.error_rate),
    CFOPT("cf-max-iterations", T_U32, cf.max_iterations),
    CFOPT("cf-expansion-factor", T_U32, cf.expansion),
    CFOPT("cf-max-expansions", T_U32, cf.max_expansions),
    CFOPT("cf-initial-size", T_U64, cf.initial_size),
};

#define NDEFS (sizeof(defs) / sizeof(defs[0]))

const cfg_def_t *cfg_def_find(const char *name)
{
    for (size_t i = 0; i < NDEFS; i++)
        if (strcasecmp(defs[i].name, name) == 0)
            return &defs[i];
    return NULL;
}

#define FIELD(c, d, type) ((type *)((char *)(c) + (d)->off))
#define CFIELD(c, d, type) ((const type *)((const char *)(c) + (d)->off))

/* ---- argument splitting: protocol's resp_splitargs() ---- */

typedef struct words {
    char **argv;
    int argc;
    bool nul; /* a word held a NUL byte (\x00) */
} words_t;

static int add_word(void *ctx, char *word, size_t len)
{
    words_t *w = ctx;
    w->nul |= memchr(word, '\0', len) != NULL;
    w->argv[w->argc++] = word;
    return 0;
}

int cfg_split_args(const char *line, char ***out, int *argc_out, char **buf_out)
{
    size_t len = strlen(line);
    char *buf = malloc(len + 1);
    words_t w = {calloc(len / 2 + 2, sizeof(char *)), 0, false};

    if (buf == NULL || w.argv == NULL) {
        free(buf);
        free(w.argv);
        return -ENOMEM;
    }
    if (resp_splitargs(line, len, buf, add_word, &w) < 0 || w.nul) {
        free(buf);
        free(w.argv);
        return -EINVAL;
    }
    *out = w.argv;
    *argc_out = w.argc;
    *buf_out = buf;
    return 0;
}

/* ---- value parsing ---- */

/* An unsigned decimal with Redis's string2ll rules (commands/cmdarg.h, the
 * one integer parser): digits only, no sign, space or leading zero. */
static bool parse_digits(const char *s, size_t n, uint64_t *out)
{
    return arg_u64(&(arg_t){s, n}, out);
}

/* Digits with an optional unit as Redis: k=1000, kb=1024, m, mb, g, gb, b. */
static bool parse_memory(const char *s, uint64_t *out)
{
    static const struct {
        const char *unit;
        uint64_t mul;
    } units[] = {{"", 1},           {"b", 1},
                 {"k", 1000},       {"kb", 1024},
                 {"m", 1000000},    {"mb", 1024 * 1024},
                 {"g", 1000000000}, {"gb", 1024ull * 1024 * 1024}};
    size_t n = 0;
    uint64_t v;

    while (s[n] >= '0' && s[n] <= '9')
        n++;
    if (!parse_digits(s, n, &v))
        return false;
    for (size_t i = 0; i < sizeof(units) / sizeof(units[0]); i++) {
        if (strcasecmp(s + n, units[i].unit) != 0)
            continue;
        if (v > UINT64_MAX / units[i].mul)
            return false;
        *out = v * units[i].mul;
        return true;
    }
    return false;
}

static const char *range_error(const cfg_def_t *d, char *why)
{
    snprintf(why, WHY_LEN, "argument must be between %llu and %llu inclusive",
             (unsigned long long)d->min, (unsigned long long)d->max);
    return why;
}

/* Parses a number of type d->type from s into *v; NULL or the reason. */
static const char *parse_number(const cfg_def_t *d, const char *s, cfg_val_t *v,
                                char *why)
{
    switch (d->type) {
    case T_MEM:
        if (!parse_memory(s, &v->u))
            return "argument must be a memory value";
        break;
    case T_OCTAL:
        v->u = 0;
        if (*s == '\0')
            return "argument couldn't be parsed as an octal number";
        for (const char *p = s; *p != '\0'; p++) {
            if (*p < '0' || *p > '7')
                return "argument couldn't be parsed as an octal number";
            if (v->u > d->max)
                break; /* already out of range; avoid overflow */
            v->u = v->u * 8 + (uint64_t)(*p - '0');
        }
        if (v->u > d->max) {
            snprintf(why, WHY_LEN, "argument must be between 0 and 0%llo",
                     (unsigned long long)d->max);
            return why;
        }
        return NULL;
    case T_I64: {
        long long ll;
        if (!arg_ll(&(arg_t){s, strlen(s)}, &ll))
            return "argument couldn't be parsed into an integer";
        v->u = (uint64_t)ll;
        return NULL;
    }
    case T_DOUBLE: {
        char *end;
        errno = 0;
        if (*s == '\0' || isspace((unsigned char)*s))
            return "argument couldn't be parsed into a number";
        v->d = strtod(s, &end);
        if (*end != '\0' || errno != 0 || !isfinite(v->d))
            return "argument couldn't be parsed into a number";
        return NULL;
    }
    default:
        if (s[0] == '-') {
            uint64_t mag;
            if (!parse_digits(s + 1, strlen(s + 1), &mag))
                return "argument couldn't be parsed into an integer";
            if (mag != 0)
                return range_error(d, why);
            v->u = 0;
        } else if (!parse_digits(s, strlen(s), &v->u)) {
            return "argument couldn't be parsed into an integer";
        }
        break;
    }
    if (v->u < d->min || v->u > d->max)
        return range_error(d, why);
    return NULL;
}

static void store_number(cfg_t *c, const cfg_def_t *d, cfg_val_t v)
{
    switch (d->type) {
    case T_INT:
        *FIELD(c, d, int) = (int)v.u;
        break;
    case T_U32:
        *FIELD(c, d, uint32_t) = (uint32_t)v.u;
        break;
    case T_OCTAL:
        *FIELD(c, d, unsigned) = (unsigned)v.u;
        break;
    case T_DOUBLE:
        *FIELD(c, d, double) = v.d;
        break;
    case T_I64:
        *FIELD(c, d, int64_t) = (int64_t)v.u;
        break;
    default:
        *FIELD(c, d, uint64_t) = v.u;
        break;
    }
}

/* Parses and sets a cf-* directive: the number as every directive's (a
 * negative integer is out of range, not unparsable), the bounds and
 * cross-checks from the command layer. NULL or the reason; c is unchanged
 * on a refusal. */
static const char *apply_cf(cfg_t *c, const cfg_def_t *d, const char *s,
                            char *why)
{
    const cfcmd_opt_t *o = cfcmd_opt_find(d->name, strlen(d->name));
    cfg_def_t bounded = *d;
    cfcmd_defaults_t cf;
    cfg_val_t v = {0};
    const char *reason;

    bounded.min = o->min;
    bounded.max = o->max;
    if ((reason = parse_number(&bounded, s, &v, why)) != NULL)
        return reason;
    cf = c->cf;
    if (cfcmd_opt_set(&cf, o, o->rate ? 0 : v.u, o->rate ? v.d : 0, why,
                      WHY_LEN) < 0)
        return why;
    c->cf = cf;
    return NULL;
}

static const char *set_save(cfg_t *c, char **argv, int argc, cfg_load_t *ld,
                            char *why)
{
    cfg_save_point_t pts[CFG_MAX_SAVE];
    int n = 0, base;

    if (argc == 1 && argv[0][0] == '\0')
        argc = 0; /* save "" */
    if (argc % 2 != 0)
        return "Invalid save parameters";
    for (int i = 0; i < argc; i += 2) {
        uint64_t sec, chg;
        if (!parse_digits(argv[i], strlen(argv[i]), &sec) || sec < 1 ||
            sec > INT64_MAX ||
            !parse_digits(argv[i + 1], strlen(argv[i + 1]), &chg) ||
            chg > INT64_MAX)
            return "Invalid save parameters";
        if (n == CFG_MAX_SAVE)
            goto too_many;
        pts[n].seconds = (int64_t)sec;
        pts[n].changes = (int64_t)chg;
        n++;
    }
    /* At run time and on the first line of a load, replace; later lines of
     * a load append, and save "" always clears. */
    base = (ld != NULL && ld->save_seen && argc > 0) ? c->nsave : 0;
    if (base + n > CFG_MAX_SAVE)
        goto too_many;
    memcpy(c->save + base, pts, (size_t)n * sizeof(pts[0]));
    c->nsave = base + n;
    if (ld != NULL)
        ld->save_seen = true;
    return NULL;

too_many:
    snprintf(why, WHY_LEN, "too many save points (at most %d)", CFG_MAX_SAVE);
    return why;
}

/* A numeric IPv4 or IPv6 address, or Redis's wildcards "*" (every IPv4
 * interface) and "::*" (every IPv6 one), each optionally prefixed by "-"
 * (skipped without error when the address is not available). */
static bool valid_address(const char *s)
{
    unsigned char addr[16];

    if (s[0] == '-')
        s++;
    if (strcmp(s, "*") == 0 || strcmp(s, "::*") == 0)
        return true;
    return inet_pton(AF_INET, s, addr) == 1 ||
           inet_pton(AF_INET6, s, addr) == 1;
}

static const char *set_bind(cfg_t *c, char **argv, int argc, char *why)
{
    char *copy[CFG_MAX_BIND];

    if (argc < 1 || argc > CFG_MAX_BIND) {
        snprintf(why, WHY_LEN, "between 1 and %d addresses expected",
                 CFG_MAX_BIND);
        return why;
    }
    for (int i = 0; i < argc; i++) {
        if (!valid_address(argv[i])) {
            snprintf(why, WHY_LEN,
                     "'%.64s' is not a numeric IPv4 or IPv6 address, '*' or "
                     "'::*'",
                     argv[i]);
            return why;
        }
    }
    for (int i = 0; i < argc; i++) {
        copy[i] = strdup(argv[i]);
        if (copy[i] == NULL) {
            while (i-- > 0)
                free(copy[i]);
            return oom;
        }
    }
    for (int i = 0; i < c->nbind; i++)
        free(c->bind[i]);
    memcpy(c->bind, copy, (size_t)argc * sizeof(copy[0]));
    for (int i = argc; i < CFG_MAX_BIND; i++)
        c->bind[i] = NULL;
    c->nbind = argc;
    return NULL;
}

static const char *set_cobl(cfg_t *c, char **argv, int argc)
{
    uint64_t hard = c->cobl_hard, soft = c->cobl_soft, secs;
    int soft_seconds = c->cobl_soft_seconds;

    if (argc == 0 || argc % 4 != 0)
        return "Wrong number of arguments in buffer limit configuration.";
    for (int i = 0; i < argc; i += 4) {
        const char *cls = argv[i];
        uint64_t h, s;
        if (strcasecmp(cls, "normal") != 0 && strcasecmp(cls, "slave") != 0 &&
            strcasecmp(cls, "replica") != 0 && strcasecmp(cls, "pubsub") != 0)
            return "Invalid client class specified in buffer limit "
                   "configuration.";
        if (!parse_memory(argv[i + 1], &h) || !parse_memory(argv[i + 2], &s) ||
            !parse_digits(argv[i + 3], strlen(argv[i + 3]), &secs) ||
            secs > INT_MAX)
            return "Error in hard, soft or soft_seconds setting in buffer "
                   "limit configuration.";
        if (strcasecmp(cls, "normal") == 0) {
            hard = h;
            soft = s;
            soft_seconds = (int)secs;
        }
    }
    c->cobl_hard = hard;
    c->cobl_soft = soft;
    c->cobl_soft_seconds = soft_seconds;
    return NULL;
}

static const char *set_string(cfg_t *c, const cfg_def_t *d, const char *s)
{
    char **field = FIELD(c, d, char *);
    char *copy = NULL;

    if (s[0] == '\0' && (d->flags & F_NONEMPTY))
        return "argument can't be empty";
    if ((d->flags & F_NOPATH) && strchr(s, '/') != NULL)
        return strcmp(d->name, "appenddirname") == 0
                   ? "appenddirname can't be a path, just a dirname"
               : strcmp(d->name, "appendfilename") == 0
                   ? "appendfilename can't be a path, just a filename"
                   : "dbfilename can't be a path, just a filename";
    if (s[0] != '\0' || !(d->flags & F_NULLABLE)) {
        copy = strdup(s);
        if (copy == NULL)
            return oom;
    }
    free(*field);
    *field = copy;
    return NULL;
}

/* Applies one directive. 0, or -EINVAL with the reason in why, or -ENOMEM.
 * Nothing changes unless it returns 0. ld is NULL at run time. */
static int apply_words(cfg_t *c, const cfg_def_t *d, char **argv, int argc,
                       cfg_load_t *ld, char *why);

static bool multi_arg(const cfg_def_t *d)
{
    return d->type == T_SAVE || d->type == T_BIND || d->type == T_COBL;
}

/* As redis-server 7 does for its multi-argument directives (save, bind,
 * client-output-buffer-limit), one non-empty word is split at spaces:
 * `--save "3600 1 300 100"` from a compose command list, or `save "60
 * 1000"` in a file, mean the same as the words given apart. */
int cfg_apply(cfg_t *c, const cfg_def_t *d, char **argv, int argc,
              cfg_load_t *ld, char *why)
{
    if (!multi_arg(d) || argc != 1 || argv[0][0] == '\0' ||
        strchr(argv[0], ' ') == NULL)
        return apply_words(c, d, argv, argc, ld, why);
    size_t len = strlen(argv[0]);
    char *copy = strdup(argv[0]);
    char **words = calloc(len / 2 + 2, sizeof(*words));
    int n = 0, rc;
    if (copy == NULL || words == NULL) {
        free(copy);
        free(words);
        snprintf(why, WHY_LEN, "out of memory");
        return -ENOMEM;
    }
    for (char *tok = strtok(copy, " "); tok != NULL; tok = strtok(NULL, " "))
        words[n++] = tok;
    rc = apply_words(c, d, words, n, ld, why);
    free(words);
    free(copy);
    return rc;
}

static int apply_words(cfg_t *c, const cfg_def_t *d, char **argv, int argc,
                       cfg_load_t *ld, char *why)
{
    const char *reason = NULL;
    cfg_val_t v;

    switch (d->type) {
    case T_SAVE:
        reason = set_save(c, argv, argc, ld, why);
        break;
    case T_BIND:
        reason = set_bind(c, argv, argc, why);
        break;
    case T_COBL:
        reason = set_cobl(c, argv, argc);
        break;
    default:
        if (argc != 1) {
            reason = "wrong number of arguments";
            break;
        }
        if (d->type == T_STR) {
            reason = set_string(c, d, argv[0]);
        } else if (d->type == T_BOOL) {
            if (strcasecmp(argv[0], "yes") == 0 &&
                strcmp(d->name, "aof-timestamp-enabled") == 0)
                /* The increments carry no "#TS:" annotations: refused
                 * rather than accepted and ignored. */
                reason = "timestamp annotations in the append-only file are "
                         "not supported";
            else if (strcasecmp(argv[0], "yes") == 0)
                *FIELD(c, d, bool) = true;
            else if (strcasecmp(argv[0], "no") == 0)
                *FIELD(c, d, bool) = false;
            else
                reason = "argument must be 'yes' or 'no'";
        } else if (d->type == T_ENUM) {
            size_t i;
            for (i = 0; d->names[i] != NULL; i++)
                if (strcasecmp(argv[0], d->names[i]) == 0)
                    break;
            if (d->names[i] == NULL) {
                size_t len = (size_t)snprintf(
                    why, WHY_LEN, "argument(s) must be one of the following: ");
                for (size_t j = 0; d->names[j] != NULL && len < WHY_LEN; j++)
                    len += (size_t)snprintf(why + len, WHY_LEN - len, "%s%s",
                                            j > 0 ? ", " : "", d->names[j]);
                reason = why;
            } else {
                *FIELD(c, d, int) = (int)i;
            }
        } else {
            reason = (d->flags & F_CF) ? apply_cf(c, d, argv[0], why)
                                       : parse_number(d, argv[0], &v, why);
            if (reason == NULL && !(d->flags & F_CF))
                store_number(c, d, v);
        }
        break;
    }
    if (reason == NULL)
        return 0;
    if (reason != why)
        snprintf(why, WHY_LEN, "%s", reason);
    return reason == oom ? -ENOMEM : -EINVAL;
}

/* ---- defaults and loading ---- */

int cfg_init(cfg_t *c)
{
    static const cfg_save_point_t save_defaults[] = {
        {3600, 1}, {300, 100}, {60, 10000}};

    memset(c, 0, sizeof(*c));
    c->port = 6379;
    c->nbind = 1;
    c->bind[0] = strdup("127.0.0.1");
    c->protected_mode = true;
    c->activerehashing = true;
    c->tcp_backlog = 511;
    c->tcp_keepalive = 300;
    c->maxclients = 10000;
    c->proto_max_bulk_len = 512ull << 20;
    c->client_query_buffer_limit = 1ull << 30;
    c->databases = 16;
    c->dir = strdup(".");
    c->dbfilename = strdup("dump.cuckoo");
    memcpy(c->save, save_defaults, sizeof(save_defaults));
    c->nsave = 3;
    c->stop_writes_on_bgsave_error = true;
    c->appenddirname = strdup("appendonlydir");
    c->appendfilename = strdup("appendonly.aof");
    c->appendfsync = CFG_FSYNC_EVERYSEC;
    c->auto_aof_rewrite_percentage = 100;
    c->auto_aof_rewrite_min_size = 64ull << 20;
    c->aof_load_truncated = true;
    c->loading_process_events_interval_bytes = 2 << 20;
    c->aof_use_rdb_preamble = true;
    c->slowlog_log_slower_than = 10000;
    c->slowlog_max_len = 128;
    c->acllog_max_len = 128;
    c->acl_pubsub_default = CFG_ACL_PUBSUB_RESET;
    c->loglevel = CFG_LOG_NOTICE;
    c->logfile = strdup("");
    c->tls_auth_clients = CFG_TLS_AUTH_YES;
    c->tls_protocols = strdup("TLSv1.2 TLSv1.3");
    c->tls_session_caching = true;
    c->tls_session_cache_size = 20480;
    c->tls_session_cache_timeout = 300;
    c->tls_handshake_timeout = 10000;
    cfcmd_defaults_init(&c->cf); /* the module's defaults too */
    if (c->bind[0] == NULL || c->dir == NULL || c->dbfilename == NULL ||
        c->logfile == NULL || c->tls_protocols == NULL ||
        c->appenddirname == NULL || c->appendfilename == NULL) {
        cfg_free(c);
        return -ENOMEM;
    }
    return 0;
}

void cfg_free(cfg_t *c)
{
    for (int i = 0; i < CFG_MAX_BIND; i++)
        free(c->bind[i]);
    free(c->config_file);
    free(c->unixsocket);
    free(c->requirepass);
    free(c->aclfile);
    for (int i = 0; i < c->nusers; i++) {
        for (int j = 0; j < c->users[i].argc; j++)
            free(c->users[i].argv[j]);
        free(c->users[i].argv);
    }
    free(c->users);
    free(c->dir);
    free(c->dbfilename);
    free(c->appenddirname);
    free(c->appendfilename);
    free(c->logfile);
    free(c->pidfile);
    free(c->tls_cert_file);
    free(c->tls_key_file);
    free(c->tls_key_file_pass);
    free(c->tls_ca_cert_file);
    free(c->tls_ca_cert_dir);
    free(c->tls_protocols);
    free(c->tls_ciphers);
    free(c->tls_ciphersuites);
    memset(c, 0, sizeof(*c));
}

int cfg_add_user(cfg_t *c, char **argv, int argc)
{
    cfg_user_t *grown =
        realloc(c->users, (size_t)(c->nusers + 1) * sizeof(c->users[0]));
    if (grown == NULL)
        return -ENOMEM;
    c->users = grown;
    cfg_user_t *u = &c->users[c->nusers];
    u->argc = 0;
    if ((u->argv = calloc((size_t)argc + 1, sizeof(char *))) == NULL)
        return -ENOMEM;
    for (int i = 0; i < argc; i++) {
        if ((u->argv[i] = strdup(argv[i])) == NULL) {
            for (int j = 0; j < i; j++)
                free(u->argv[j]);
            free(u->argv);
            return -ENOMEM;
        }
        u->argc = i + 1;
    }
    c->nusers++;
    return 0;
}

/* ---- CONFIG GET / SET ---- */

static void fmt_double(double v, char *buf, size_t n)
{
    /* The shortest text that reads back as the same double. */
    for (int prec = 1; prec <= 17; prec++) {
        snprintf(buf, n, "%.*g", prec, v);
        if (strtod(buf, NULL) == v)
            return;
    }
}

static void append(char *buf, size_t n, size_t *len, const char *fmt, ...)
{
    va_list ap;
    int w;

    if (*len >= n)
        return;
    va_start(ap, fmt);
    w = vsnprintf(buf + *len, n - *len, fmt, ap);
    va_end(ap);
    if (w > 0)
        *len += (size_t)w;
}

/* The value of d as Redis's CONFIG GET prints it; buf is scratch space. */
static const char *format_value(const cfg_t *c, const cfg_def_t *d, char *buf,
                                size_t n)
{
    size_t len = 0;

    buf[0] = '\0';
    switch (d->type) {
    case T_INT:
    case T_ENUM: {
        int v = *CFIELD(c, d, int);
        if (d->type == T_ENUM)
            return d->names[v];
        snprintf(buf, n, "%d", v);
        break;
    }
    case T_U32:
        snprintf(buf, n, "%u", (unsigned)*CFIELD(c, d, uint32_t));
        break;
    case T_I64:
        snprintf(buf, n, "%lld", (long long)*CFIELD(c, d, int64_t));
        break;
    case T_U64:
    case T_MEM:
        snprintf(buf, n, "%llu", (unsigned long long)*CFIELD(c, d, uint64_t));
        break;
    case T_OCTAL:
        snprintf(buf, n, "%o", *CFIELD(c, d, unsigned));
        break;
    case T_BOOL:
        return *CFIELD(c, d, bool) ? "yes" : "no";
    case T_STR: {
        const char *s = *CFIELD(c, d, char *);
        return s != NULL ? s : "";
    }
    case T_DOUBLE:
        fmt_double(*CFIELD(c, d, double), buf, n);
        break;
    case T_SAVE:
        for (int i = 0; i < c->nsave; i++)
            append(buf, n, &len, "%s%lld %lld", i > 0 ? " " : "",
                   (long long)c->save[i].seconds,
                   (long long)c->save[i].changes);
        break;
    case T_BIND:
        for (int i = 0; i < c->nbind; i++)
            append(buf, n, &len, "%s%s", i > 0 ? " " : "", c->bind[i]);
        break;
    case T_COBL:
        snprintf(buf, n, "normal %llu %llu %d %s",
                 (unsigned long long)c->cobl_hard,
                 (unsigned long long)c->cobl_soft, c->cobl_soft_seconds,
                 cobl_others);
        break;
    }
    return buf;
}

void cfg_get(const cfg_t *c, const char *pattern, cfg_get_fn *fn, void *ctx)
{
    /* 16 addresses of at most 45 characters, or 16 save points. */
    char buf[1024];
    size_t plen = strlen(pattern);

    for (size_t i = 0; i < NDEFS; i++) {
        const cfg_def_t *d = &defs[i];
        bool hit = (d->flags & F_HIDDEN) ? strcasecmp(pattern, d->name) == 0
                                         : glob_match(pattern, plen, d->name,
                                                      strlen(d->name), true);
        if (hit)
            fn(ctx, d->name, format_value(c, d, buf, sizeof(buf)));
    }
}

int cfg_set(cfg_t *c, const char *name, const char *value, char *err,
            size_t errlen)
{
    const cfg_def_t *d = cfg_def_find(name);
    char why[WHY_LEN];
    char **argv = NULL, *buf = NULL;
    char *one[1];
    int argc, rc;

    if (d == NULL) {
        set_err(err, errlen,
                "ERR Unknown option or number of arguments for CONFIG SET - "
                "'%s'",
                name);
        return -EINVAL;
    }
    if (!(d->flags & F_MUT)) {
        set_err(err, errlen,
                "ERR CONFIG SET failed (possibly related to argument '%s') - "
                "can't set immutable config",
                name);
        return -EINVAL;
    }
    if (d->type == T_SAVE || d->type == T_COBL) {
        /* Several words in one value, as Redis splits them. */
        rc = cfg_split_args(value, &argv, &argc, &buf);
        if (rc == -ENOMEM) {
            set_err(err, errlen,
                    "ERR CONFIG SET failed (possibly related to "
                    "argument '%s') - out of memory",
                    name);
            return rc;
        }
        if (rc < 0) {
            snprintf(why, sizeof(why), "Unbalanced quotes");
            goto fail;
        }
    } else {
        one[0] = (char *)value;
        argv = one;
        argc = 1;
    }
    rc = cfg_apply(c, d, argv, argc, NULL, why);
    if (argv != one)
        free(argv);
    free(buf);
    if (rc == 0)
        return 0;
fail:
    set_err(err, errlen,
            "ERR CONFIG SET failed (possibly related to argument '%s') - %s",
            name, why);
    return rc < 0 ? rc : -EINVAL;
}
