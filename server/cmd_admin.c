/*
 * cmd_admin.c - the server commands: INFO, TIME, CONFIG, MEMORY, SHUTDOWN
 * (cmdtab.c holds their entries).
 */
#include "cmd_admin.h"

#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/time.h>
#include <sys/utsname.h>
#include <unistd.h>

#include "acl.h"
#include "aof.h"
#include "cmd.h"
#include "conn.h"
#include "conn_info.h"
#include "daemon.h"
#include "errtext.h"
#include "expire.h"
#include "glob.h"
#include "lazyfree.h"
#include "loadprog.h"
#include "log.h"
#include "memstat.h"
#include "persist.h"
#include "reply.h"
#include "server_int.h"
#include "tls.h"
#include "util.h"

/* ---- server commands --------------------------------------------------- */

void cmd_admin_time_proc(client_t *c, int argc, const arg_t *argv)
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

/* ---- INFO --------------------------------------------------------------- */

static void info_server(server_t *s, sbuf_t *b)
{
    const cfg_t *cfg = s->cfg;
    uint64_t now_ms = server_now_ms(s);
    struct utsname un;
    struct timeval tv;
    gettimeofday(&tv, NULL);
    if (uname(&un) != 0)
        memset(&un, 0, sizeof(un));
    char exe[4096];
    size_t exelen = sizeof(exe);
    if (uv_exepath(exe, &exelen) != 0)
        exe[0] = '\0';
    sb_printf(b,
              "redis_version:" SERVER_REDIS_VERSION "\r\n"
              "cuckood_version:" CUCKOOD_VERSION "\r\n"
              "redis_mode:standalone\r\n"
              "run_id:%s\r\n"
              "os:%s %s %s\r\n"
              "arch_bits:%d\r\n"
              "multiplexing_api:libuv %s\r\n"
              "process_id:%d\r\n"
              "tcp_port:%d\r\n"
              "server_time_usec:%lld\r\n"
              "uptime_in_seconds:%" PRIu64 "\r\n"
              "uptime_in_days:%" PRIu64 "\r\n"
              "hz:%d\r\n"
              "executable:%s\r\n"
              "config_file:%s\r\n",
              s->run_id, un.sysname, un.release, un.machine,
              (int)(sizeof(void *) * 8), uv_version_string(), (int)getpid(),
              cfg->port, (long long)tv.tv_sec * 1000000 + tv.tv_usec,
              now_ms / 1000, now_ms / 86400000, 1000 / DAEMON_CRON_MS, exe,
              cfg->config_file != NULL ? cfg->config_file : "");
}

static void info_clients(server_t *s, sbuf_t *b)
{
    sb_printf(b,
              "connected_clients:%" PRIu64 "\r\n"
              "maxclients:%" PRIu64 "\r\n"
              "blocked_clients:0\r\n",
              s->nclients, s->cfg->maxclients);
}

static void info_memory(server_t *s, sbuf_t *b)
{
    const cfg_t *cfg = s->cfg;
    char h1[32], h2[32];
    uint64_t used = server_used_memory(s);
    if (used > s->peak_memory)
        s->peak_memory = used;
    human_bytes(h1, sizeof(h1), used);
    human_bytes(h2, sizeof(h2), s->peak_memory);
    sb_printf(b,
              "used_memory:%" PRIu64 "\r\n"
              "used_memory_human:%s\r\n"
              "used_memory_peak:%" PRIu64 "\r\n"
              "used_memory_peak_human:%s\r\n"
              "mem_clients_normal:%" PRIu64 "\r\n",
              used, h1, s->peak_memory, h2, conn_clients_memory(s));
    human_bytes(h1, sizeof(h1), cfg->maxmemory);
    sb_printf(b,
              "maxmemory:%" PRIu64 "\r\n"
              "maxmemory_human:%s\r\n"
              "maxmemory_policy:noeviction\r\n",
              cfg->maxmemory, h1);
    /* As Redis, the machine's memory; here the effective figure: the
     * cgroup (container) limit when it is lower, which is what bounds the
     * keyspace while maxmemory is 0. */
    uint64_t sys = s->phys_memory != UINT64_MAX ? s->phys_memory : 0;
    human_bytes(h1, sizeof(h1), sys);
    sb_printf(b,
              "total_system_memory:%" PRIu64 "\r\n"
              "total_system_memory_human:%s\r\n",
              sys, h1);
    memstat_info(s, b);
    /* both in the memory section, as Redis 7.0 has them */
    sb_printf(b,
              "lazyfree_pending_objects:%" PRIu64 "\r\n"
              "lazyfreed_objects:%" PRIu64 "\r\n",
              lazyfree_pending_objects(), lazyfree_freed_objects());
}

static void info_persistence(server_t *s, sbuf_t *b)
{
    persist_info(s, b);
    aof_info(s, b);
    loadprog_info_tail(s, b);
}

static void info_stats(server_t *s, sbuf_t *b)
{
    sb_printf(b,
              "total_connections_received:%" PRIu64 "\r\n"
              "total_commands_processed:%" PRIu64 "\r\n"
              "instantaneous_ops_per_sec:%" PRIu64 "\r\n"
              "total_net_input_bytes:%" PRIu64 "\r\n"
              "total_net_output_bytes:%" PRIu64 "\r\n"
              "rejected_connections:%" PRIu64 "\r\n"
              "keyspace_hits:%" PRIu64 "\r\n"
              "keyspace_misses:%" PRIu64 "\r\n"
              "client_output_buffer_limit_disconnections:%" PRIu64 "\r\n",
              s->total_connections, s->total_commands, s->ops_per_sec,
              s->net_input_bytes, s->net_output_bytes, s->rejected_connections,
              s->keyspace_hits, s->keyspace_misses, s->cobl_disconnections);
    expire_info_stats(s, b);
    tls_info(s->tls, b);
    uint64_t denied[4];
    acl_denied_counts(s, denied);
    sb_printf(b,
              "acl_access_denied_auth:%" PRIu64 "\r\n"
              "acl_access_denied_cmd:%" PRIu64 "\r\n"
              "acl_access_denied_key:%" PRIu64 "\r\n"
              "acl_access_denied_channel:%" PRIu64 "\r\n",
              denied[0], denied[1], denied[2], denied[3]);
}

static void info_replication(server_t *s, sbuf_t *b)
{
    (void)s;
    sb_printf(b, "role:master\r\nconnected_slaves:0\r\n");
}

static void info_cpu(server_t *s, sbuf_t *b)
{
    (void)s;
    uv_rusage_t ru;
    if (uv_getrusage(&ru) == 0)
        sb_printf(b, "used_cpu_sys:%ld.%06ld\r\nused_cpu_user:%ld.%06ld\r\n",
                  (long)ru.ru_stime.tv_sec, (long)ru.ru_stime.tv_usec,
                  (long)ru.ru_utime.tv_sec, (long)ru.ru_utime.tv_usec);
}

static void info_commandstats(server_t *s, sbuf_t *b)
{
    cmd_stats_each(s, info_cmdstat, b);
}

static void info_keyspace(server_t *s, sbuf_t *b)
{
    for (int i = 0; i < s->ndbs; i++)
        if (ks_size(s->dbs[i]) > 0) {
            sb_printf(b, "db%d:keys=%zu,", i, ks_size(s->dbs[i]));
            expire_info_db(s, i, b);
            sb_printf(b, "\r\n");
        }
}

const cmd_admin_info_section_t cmd_admin_info_sections[] = {
    {"server", "Server", true, info_server},
    {"clients", "Clients", true, info_clients},
    {"memory", "Memory", true, info_memory},
    {"persistence", "Persistence", true, info_persistence},
    {"stats", "Stats", true, info_stats},
    {"replication", "Replication", true, info_replication},
    {"cpu", "CPU", true, info_cpu},
    {"commandstats", "Commandstats", false, info_commandstats},
    {"keyspace", "Keyspace", true, info_keyspace},
    {NULL, NULL, false, NULL},
};

/* One bit per cmd_admin_info_sections entry. */
typedef uint32_t info_want_t;
#define INFO_NSECTIONS                                                         \
    (sizeof(cmd_admin_info_sections) / sizeof(cmd_admin_info_sections[0]) - 1)
_Static_assert(INFO_NSECTIONS <= sizeof(info_want_t) * 8,
               "one bit per INFO section");

/* The sections argument a asks for: a section's name, "default", or "all"
 * and "everything" (the same here: no module sections). Unknown names ask
 * for nothing, as in Redis. */
static info_want_t info_select(const arg_t *a)
{
    bool all = arg_is(a, "all") || arg_is(a, "everything");
    bool dflt = arg_is(a, "default");
    info_want_t want = 0;
    for (size_t i = 0; cmd_admin_info_sections[i].name != NULL; i++)
        if (all || (dflt && cmd_admin_info_sections[i].in_default) ||
            arg_is(a, cmd_admin_info_sections[i].name))
            want |= (info_want_t)1 << i;
    return want;
}

void cmd_admin_info_proc(client_t *c, int argc, const arg_t *argv)
{
    static const arg_t dflt = {"default", 7};
    info_want_t want = argc == 1 ? info_select(&dflt) : 0;
    for (int i = 1; i < argc; i++)
        want |= info_select(&argv[i]);
    sbuf_t b = {0};
    bool first = true;
    for (size_t i = 0; cmd_admin_info_sections[i].name != NULL; i++) {
        if (!(want & ((info_want_t)1 << i)))
            continue;
        sb_printf(&b, "%s# %s\r\n", first ? "" : "\r\n",
                  cmd_admin_info_sections[i].title);
        first = false;
        cmd_admin_info_sections[i].fn(c->srv, &b);
    }
    reply_text(c, &b);
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

void cmd_admin_config_get_proc(client_t *c, int argc, const arg_t *argv)
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
        resp_add_error(&c->out, ERRTEXT_NOMEM);
    } else {
        resp_add_map(&c->out, p.n / 2);
        for (size_t i = 0; i < p.n; i++)
            resp_add_cstr(&c->out, p.kv[i]);
    }
    for (size_t i = 0; i < p.n; i++)
        free(p.kv[i]);
    free(p.kv);
}

/* Keeps the first value cfg_get() reports (the name is exact). */
static void keep_value(void *ctx, const char *name, const char *value)
{
    char **out = ctx;
    if (*out == NULL)
        *out = strdup(value);
}

static void config_set_error(client_t *c, const arg_t *name, const char *why)
{
    resp_add_errorf(&c->out,
                    "ERR CONFIG SET failed (possibly related to argument "
                    "'%.*s') - %s",
                    (int)(name->len > 128 ? 128 : name->len), name->ptr, why);
}

/* CONFIG SET name value [name value ...]: all or nothing, as Redis 7. */
void cmd_admin_config_set_proc(client_t *c, int argc, const arg_t *argv)
{
    if ((argc - 2) % 2 != 0) {
        reply_wrong_arity(c, "config|set");
        return;
    }
    int n = (argc - 2) / 2;
    for (int i = 0; i < n; i++) {
        const arg_t *name = &argv[2 + 2 * i], *val = name + 1;
        /* A C string cannot hold it: refused, not cut at the NUL. */
        if (strlen(name->ptr) != name->len || strlen(val->ptr) != val->len) {
            config_set_error(c, name, "value contains a NUL byte");
            return;
        }
        for (int j = 0; j < i; j++)
            if (strcasecmp(argv[2 + 2 * j].ptr, name->ptr) == 0) {
                config_set_error(c, name, "duplicate parameter");
                return;
            }
    }
    char **old = calloc((size_t)n, sizeof(*old));
    if (old == NULL) {
        resp_add_error(&c->out, ERRTEXT_NOMEM);
        return;
    }
    char err[768] = "";
    int done = 0;
    for (; done < n; done++) {
        const char *name = argv[2 + 2 * done].ptr;
        cfg_get(c->srv->cfg, name, keep_value, &old[done]);
        if (cfg_set(c->srv->cfg, name, argv[3 + 2 * done].ptr, err,
                    sizeof(err)) < 0)
            break;
    }
    /* Directives that take effect together (a TLS certificate and its
     * key) are checked once all are stored; a failure undoes them all. */
    int undo = done; /* how many to put back */
    if (done == n && n > 0) {
        const char **names = malloc((size_t)n * sizeof(*names));
        for (int i = 0; names != NULL && i < n; i++)
            names[i] = argv[2 + 2 * i].ptr;
        if (names == NULL) {
            snprintf(err, sizeof(err), ERRTEXT_NOMEM);
            done = 0;
        } else if (daemon_config_commit(c->srv, names, n, err, sizeof(err)) <
                   0) {
            done = 0;
        }
        free(names);
    }
    if (done < n) {
        /* Put back what was applied before the failure, newest first. */
        for (int i = undo - 1; i >= 0; i--)
            if (old[i] == NULL ||
                cfg_set(c->srv->cfg, argv[2 + 2 * i].ptr, old[i], NULL, 0) < 0)
                log_warning("CONFIG SET: could not restore '%s'",
                            argv[2 + 2 * i].ptr);
        for (char *p = err; *p; p++)
            if (*p == '\r' || *p == '\n')
                *p = ' ';
        resp_add_error(&c->out, err[0] ? err : "ERR CONFIG SET failed");
    } else {
        for (int i = 0; i < n; i++)
            daemon_config_changed(c->srv, argv[2 + 2 * i].ptr);
        reply_ok(c);
    }
    for (int i = 0; i < n; i++)
        free(old[i]);
    free(old);
}

void cmd_admin_config_resetstat_proc(client_t *c, int argc, const arg_t *argv)
{
    cmd_stats_reset(c->srv);
    server_stats_reset(c->srv);
    lazyfree_reset_stats();
    reply_ok(c);
}

void cmd_admin_shutdown_proc(client_t *c, int argc, const arg_t *argv)
{
    bool nosave = false, save = false, force = false;
    for (int i = 1; i < argc; i++) {
        if (arg_is(&argv[i], "nosave"))
            nosave = true;
        else if (arg_is(&argv[i], "save"))
            save = true;
        else if (arg_is(&argv[i], "force"))
            force = true;
        else if (!arg_is(&argv[i], "now")) {
            reply_syntax_error(c);
            return;
        }
    }
    if (nosave && save) {
        reply_syntax_error(c);
        return;
    }
    /* As Redis: a half-loaded dataset is never saved over the files. */
    if (c->srv->load.active) {
        nosave = true;
        save = false;
    }
    log_warning("User requested shutdown...");
    if (persist_shutdown_save(c->srv, nosave, save, force) < 0) {
        resp_add_error(&c->out, "ERR Errors trying to SHUTDOWN. Check logs.");
        return;
    }
    c->close_after_reply = true;
    daemon_shutdown(c->srv, 0);
}

void cmd_admin_memory_usage_proc(client_t *c, int argc, const arg_t *argv)
{
    if (argc != 3 && !(argc == 5 && arg_is(&argv[3], "samples"))) {
        reply_syntax_error(c);
        return;
    }
    uint64_t n = expire_exists(c->srv, c->dbnum, argv[2].ptr, argv[2].len)
                     ? ks_usage(c->db, argv[2].ptr, argv[2].len)
                     : 0;
    if (n == 0)
        resp_add_null(&c->out);
    else
        resp_add_int(&c->out, (int64_t)n);
}
