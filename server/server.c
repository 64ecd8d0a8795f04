/*
 * server.c - the server's state, listeners, signals, cron and the services
 * of server.h.
 */
#include "server_int.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "cmd.h"
#include "conn.h"
#include "log.h"
#include "tls.h"

#define SERVER_CRON_MS 100

static void free_handle(uv_handle_t *h)
{
    free(h);
}

/* Physical memory in bytes, UINT64_MAX when the system does not say. */
static uint64_t phys_memory(void)
{
    long pages = sysconf(_SC_PHYS_PAGES), psize = sysconf(_SC_PAGESIZE);
    if (pages <= 0 || psize <= 0 ||
        (uint64_t)pages > UINT64_MAX / (uint64_t)psize)
        return UINT64_MAX;
    return (uint64_t)pages * (uint64_t)psize;
}

int server_init(server_t *s, uv_loop_t *loop, cfg_t *cfg)
{
    memset(s, 0, sizeof(*s));
    s->loop = loop;
    s->cfg = cfg;
    s->ndbs = cfg->databases > 0 ? cfg->databases : 1;
    s->dbs = calloc((size_t)s->ndbs, sizeof(s->dbs[0]));
    s->read_slab = malloc(SERVER_READ_SLAB);
    if (s->dbs == NULL || s->read_slab == NULL)
        goto fail;
    for (int i = 0; i < s->ndbs; i++)
        if ((s->dbs[i] = ks_db_new()) == NULL)
            goto fail;
    if (cmd_index_build(s) < 0)
        goto fail;
    if (getrandom(&s->seed_state, sizeof(s->seed_state), 0) !=
        (ssize_t)sizeof(s->seed_state))
        s->seed_state = (uint64_t)time(NULL) ^ ((uint64_t)getpid() << 32);
    s->phys_memory = phys_memory();
    s->start_time = time(NULL);
    s->start_ms = uv_now(loop);
    s->lastsave = s->start_time;
    return 0;
fail:
    server_free(s);
    return -ENOMEM;
}

void server_free(server_t *s)
{
    if (s->dbs != NULL)
        for (int i = 0; i < s->ndbs; i++)
            ks_db_free(s->dbs[i]);
    free(s->dbs);
    s->dbs = NULL;
    free(s->read_slab);
    s->read_slab = NULL;
    tls_free(s->tls);
    s->tls = NULL;
    cmd_index_free(s);
}

uint64_t server_now_ms(const server_t *s)
{
    return uv_now(s->loop) - s->start_ms;
}

/* ---- services of server.h ---------------------------------------------- */

const cfg_t *server_cfg(const server_t *s)
{
    return s->cfg;
}

void server_dirty(server_t *s, uint64_t n)
{
    s->dirty += n;
}

uint64_t server_used_memory(const server_t *s)
{
    uint64_t sum = 0;
    for (int i = 0; i < s->ndbs; i++)
        sum += ks_bytes(s->dbs[i]);
    return sum;
}

bool server_over_maxmemory(const server_t *s, uint64_t extra)
{
    uint64_t max = s->cfg->maxmemory;
    if (max == 0)
        return false;
    uint64_t used = server_used_memory(s);
    return used > max || extra > max - used;
}

uint64_t server_memory_headroom(const server_t *s)
{
    /* Without maxmemory the machine is the limit: past its memory a filter
     * could only be paged or killed, and every save would write it. */
    uint64_t max = s->cfg->maxmemory != 0 ? s->cfg->maxmemory
                                          : s->phys_memory;
    if (max == UINT64_MAX)
        return UINT64_MAX;
    uint64_t used = server_used_memory(s);
    return used >= max ? 0 : max - used;
}

/* splitmix64: a fresh, well-mixed seed per call from one random state. */
uint64_t server_seed(server_t *s)
{
    uint64_t z = (s->seed_state += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

void server_keyspace_hit(server_t *s, bool hit)
{
    if (hit)
        s->keyspace_hits++;
    else
        s->keyspace_misses++;
}

void reply_wrong_arity(client_t *c, const char *cmd)
{
    resp_add_errorf(&c->out, "ERR wrong number of arguments for '%s' command",
                    cmd);
}

void reply_syntax_error(client_t *c)
{
    resp_add_error(&c->out, "ERR syntax error");
}

void reply_ok(client_t *c)
{
    resp_add_simple(&c->out, "OK");
}

/* ---- listeners --------------------------------------------------------- */

static void server_on_connection(uv_stream_t *listener, int status)
{
    server_t *s = listener->data;
    if (status < 0) {
        /* libuv already drained the backlog with its reserve descriptor
         * when descriptors ran out (EMFILE), so this cannot spin. */
        s->rejected_connections++;
        log_warning("Accepting client connection: %s", uv_strerror(status));
        return;
    }
    conn_accept(s, listener, listener->type == UV_NAMED_PIPE);
}

static void server_on_tls_connection(uv_stream_t *listener, int status)
{
    server_t *s = listener->data;
    if (status < 0) {
        s->rejected_connections++;
        log_warning("Accepting TLS client connection: %s",
                    uv_strerror(status));
        return;
    }
    conn_accept_tls(s, listener);
}

static int listen_tcp(server_t *s, const char *addr, int port, bool tls,
                      char *err, size_t errlen)
{
    struct sockaddr_storage ss;
    int rc;
    const char *host = addr;
    bool optional = false;
    /* Redis's "-::*" form: an address that may be missing (no IPv6). */
    if (host[0] == '-') {
        optional = true;
        host++;
    }
    if (strchr(host, ':') != NULL)
        rc = uv_ip6_addr(strcmp(host, "::*") == 0 ? "::" : host, port,
                         (struct sockaddr_in6 *)&ss);
    else
        rc = uv_ip4_addr(strcmp(host, "*") == 0 ? "0.0.0.0" : host, port,
                         (struct sockaddr_in *)&ss);
    if (rc < 0) {
        snprintf(err, errlen, "Invalid bind address '%s'", addr);
        return rc;
    }
    uv_tcp_t *t = malloc(sizeof(*t));
    if (t == NULL)
        return -ENOMEM;
    uv_tcp_init(s->loop, t);
    t->data = s;
    unsigned flags = ss.ss_family == AF_INET6 ? UV_TCP_IPV6ONLY : 0;
    rc = uv_tcp_bind(t, (struct sockaddr *)&ss, flags);
    if (rc == 0)
        rc = uv_listen((uv_stream_t *)t, s->cfg->tcp_backlog,
                       tls ? server_on_tls_connection : server_on_connection);
    if (rc < 0) {
        uv_close((uv_handle_t *)t, free_handle);
        if (optional) {
            log_notice("Skipping optional bind address %s: %s", host,
                       uv_strerror(rc));
            return 0;
        }
        snprintf(err, errlen,
                 "Could not create server %s listening socket "
                 "%s:%d: %s",
                 tls ? "TLS" : "TCP", host, port, uv_strerror(rc));
        return rc;
    }
    s->tcp[s->ntcp++] = t;
    return 0;
}

static int listen_unix(server_t *s, char *err, size_t errlen)
{
    const char *path = s->cfg->unixsocket;
    uv_pipe_t *p = malloc(sizeof(*p));
    if (p == NULL)
        return -ENOMEM;
    uv_pipe_init(s->loop, p, 0);
    p->data = s;
    unlink(path); /* a stale socket from an earlier run */
    int rc = uv_pipe_bind(p, path);
    if (rc == 0 && s->cfg->unixsocketperm != 0 &&
        chmod(path, (mode_t)s->cfg->unixsocketperm) < 0)
        rc = -errno;
    if (rc == 0)
        rc = uv_listen((uv_stream_t *)p, s->cfg->tcp_backlog,
                       server_on_connection);
    if (rc < 0) {
        uv_close((uv_handle_t *)p, free_handle);
        snprintf(err, errlen, "Failed opening Unix socket %s: %s", path,
                 uv_strerror(rc));
        return rc;
    }
    s->unix_listener = p;
    return 0;
}

static void server_on_signal(uv_signal_t *h, int signum)
{
    server_t *s = h->data;
    log_warning("Received %s scheduling shutdown...",
                signum == SIGINT ? "SIGINT" : "SIGTERM");
    server_shutdown(s, 0);
}

static void server_on_cron(uv_timer_t *t)
{
    server_t *s = t->data;
    uint64_t now = server_now_ms(s);
    if (now - s->ops_sample_ms >= 1000) {
        uint64_t dt = now - s->ops_sample_ms;
        s->ops_per_sec = (s->total_commands - s->ops_sample_cmds) * 1000 / dt;
        s->ops_sample_cmds = s->total_commands;
        s->ops_sample_ms = now;
    }
    uint64_t used = server_used_memory(s);
    if (used > s->peak_memory)
        s->peak_memory = used;
    conn_cron(s);
}

int server_listen(server_t *s, char *err, size_t errlen)
{
    int rc;
    if (s->cfg->port > 0)
        for (int i = 0; i < s->cfg->nbind; i++)
            if ((rc = listen_tcp(s, s->cfg->bind[i], s->cfg->port, false, err,
                                 errlen)) < 0)
                goto fail;
    if (s->cfg->tls_port > 0) {
        char why[512];
        if ((rc = tls_new(s->cfg, &s->tls, why, sizeof(why))) < 0) {
            snprintf(err, errlen, "Failed to configure TLS: %s", why);
            goto fail;
        }
        for (int i = 0; i < s->cfg->nbind; i++)
            if ((rc = listen_tcp(s, s->cfg->bind[i], s->cfg->tls_port, true,
                                 err, errlen)) < 0)
                goto fail;
    }
    if (s->cfg->unixsocket != NULL && s->cfg->unixsocket[0] != '\0')
        if ((rc = listen_unix(s, err, errlen)) < 0)
            goto fail;
    if (s->ntcp == 0 && s->unix_listener == NULL) {
        snprintf(err, errlen, "Configured to not listen anywhere, exiting.");
        rc = -EINVAL;
        goto fail;
    }
    uv_signal_init(s->loop, &s->sig_term);
    uv_signal_init(s->loop, &s->sig_int);
    s->sig_term.data = s->sig_int.data = s;
    uv_signal_start(&s->sig_term, server_on_signal, SIGTERM);
    uv_signal_start(&s->sig_int, server_on_signal, SIGINT);
    uv_timer_init(s->loop, &s->cron);
    s->cron.data = s;
    uv_timer_start(&s->cron, server_on_cron, SERVER_CRON_MS, SERVER_CRON_MS);
    s->handles_open = true;
    return 0;
fail:
    for (int i = 0; i < s->ntcp; i++)
        uv_close((uv_handle_t *)s->tcp[i], free_handle);
    s->ntcp = 0;
    if (s->unix_listener != NULL)
        uv_close((uv_handle_t *)s->unix_listener, free_handle);
    s->unix_listener = NULL;
    return rc;
}

void server_on_shutdown(server_t *s)
{
    /* Runs once, after the listeners are closed and before the clients
     * are; a failed final save sets s->exit_code to non-zero. */
    persist_on_shutdown(s);
}

void server_shutdown(server_t *s, int exit_code)
{
    if (s->shutting_down)
        return;
    s->shutting_down = true;
    s->exit_code = exit_code;
    for (int i = 0; i < s->ntcp; i++)
        uv_close((uv_handle_t *)s->tcp[i], free_handle);
    s->ntcp = 0;
    if (s->unix_listener != NULL) {
        uv_close((uv_handle_t *)s->unix_listener, free_handle);
        unlink(s->cfg->unixsocket);
        s->unix_listener = NULL;
    }
    server_on_shutdown(s);
    while (s->clients != NULL)
        conn_close(s->clients);
    if (s->handles_open) {
        uv_close((uv_handle_t *)&s->sig_term, NULL);
        uv_close((uv_handle_t *)&s->sig_int, NULL);
        uv_close((uv_handle_t *)&s->cron, NULL);
        s->handles_open = false;
    }
}

int server_config_commit(server_t *s, char *const *names, int n, char *err,
                         size_t errlen)
{
    const char *tls_name = NULL;
    for (int i = 0; i < n && tls_name == NULL; i++)
        if (strncasecmp(names[i], "tls-", 4) == 0)
            tls_name = names[i];
    /* Without a TLS listener the values are only stored, for nothing
     * reads them. */
    if (tls_name == NULL || s->tls == NULL)
        return 0;
    char why[512];
    if (tls_reload(s->tls, s->cfg, why, sizeof(why)) < 0) {
        log_warning("Failed to update TLS configuration: %s", why);
        snprintf(err, errlen,
                 "ERR CONFIG SET failed (possibly related to argument '%s') "
                 "- Unable to update TLS configuration: %s",
                 tls_name, why);
        return -EINVAL;
    }
    log_notice("TLS configuration updated for new connections");
    return 0;
}

void server_config_changed(server_t *s, const char *name)
{
    if (strcasecmp(name, "loglevel") == 0) {
        log_set_level(s->cfg->loglevel);
    } else if (strcasecmp(name, "requirepass") == 0) {
        /* Without a password every client is the (nopass) default user,
         * also those that connected while one was required. */
        if (s->cfg->requirepass == NULL || s->cfg->requirepass[0] == '\0')
            for (conn_t *c = s->clients; c != NULL; c = c->next)
                if (!c->cl.authenticated) {
                    c->cl.authenticated = true;
                    conn_apply_limits(c);
                }
    } else if (strcasecmp(name, "maxclients") == 0) {
        conn_fit_maxclients(s->cfg);
    } else if (strcasecmp(name, "proto-max-bulk-len") == 0 ||
               strcasecmp(name, "client-query-buffer-limit") == 0) {
        for (conn_t *c = s->clients; c != NULL; c = c->next)
            conn_apply_limits(c);
    }
}
