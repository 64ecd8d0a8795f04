/*
 * daemon.c - see daemon.h.
 */
#include "daemon.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#include "acl.h"
#include "acl_log.h"
#include "aof.h"
#include "cmdclock.h"
#include "conn.h"
#include "conn_info.h"
#include "conn_int.h"
#include "expire.h"
#include "heap.h"
#include "latency.h"
#include "lazyfree.h"
#include "log.h"
#include "persist.h"
#include "tls.h"

static void free_handle(uv_handle_t *h)
{
    free(h);
}

/* ---- listeners --------------------------------------------------------- */

static void daemon_on_connection(uv_stream_t *listener, int status)
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

static void daemon_on_tls_connection(uv_stream_t *listener, int status)
{
    server_t *s = listener->data;
    if (status < 0) {
        s->rejected_connections++;
        log_warning("Accepting TLS client connection: %s", uv_strerror(status));
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
    if ((rc = uv_tcp_init(s->loop, t)) < 0) {
        free(t);
        snprintf(err, errlen, "uv_tcp_init: %s", uv_strerror(rc));
        return rc;
    }
    t->data = s;
    unsigned flags = ss.ss_family == AF_INET6 ? UV_TCP_IPV6ONLY : 0;
    rc = uv_tcp_bind(t, (struct sockaddr *)&ss, flags);
    if (rc == 0)
        rc = uv_listen((uv_stream_t *)t, s->cfg->tcp_backlog,
                       tls ? daemon_on_tls_connection : daemon_on_connection);
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
    int rc = uv_pipe_init(s->loop, p, 0);
    if (rc < 0) {
        free(p);
        snprintf(err, errlen, "uv_pipe_init: %s", uv_strerror(rc));
        return rc;
    }
    p->data = s;
    unlink(path); /* a stale socket from an earlier run */
    rc = uv_pipe_bind(p, path);
    if (rc == 0 && s->cfg->unixsocketperm != 0 &&
        chmod(path, (mode_t)s->cfg->unixsocketperm) < 0)
        rc = -errno;
    if (rc == 0)
        rc = uv_listen((uv_stream_t *)p, s->cfg->tcp_backlog,
                       daemon_on_connection);
    if (rc < 0) {
        uv_close((uv_handle_t *)p, free_handle);
        snprintf(err, errlen, "Failed opening Unix socket %s: %s", path,
                 uv_strerror(rc));
        return rc;
    }
    s->unix_listener = p;
    return 0;
}

static void daemon_on_signal(uv_signal_t *h, int signum)
{
    server_t *s = h->data;
    log_warning("Received %s scheduling shutdown...",
                signum == SIGINT ? "SIGINT" : "SIGTERM");
    daemon_shutdown(s, 0);
}

static void daemon_on_cron(uv_timer_t *t)
{
    server_t *s = t->data;
    uint64_t t0 = uv_hrtime();
    cmdclock_calibrate();
    server_stats_sample(s);
    lazyfree_heap(
        heap_cron(server_used_memory(s), lazyfree_pending_objects() > 0));
    /* The thread's slowest work, which the loop did not wait for, beside
     * the loop's own events: how long memory stayed pending. */
    uint64_t job_ms, purge_ms;
    lazyfree_take_slowest(&job_ms, &purge_ms);
    latency_add(s, "lazyfree-job", job_ms);
    latency_add(s, "lazyfree-purge", purge_ms);
    expire_cron(s);
    uint64_t t1 = uv_hrtime();
    if (server_rehash_cron(s, DAEMON_REHASH_US))
        latency_add(s, "rehash-cycle", latency_ms_since(t1));
    expire_windows_cron(s);
    conn_cron(s);
    latency_add(s, "server-cron", latency_ms_since(t0));
}

int daemon_listen(server_t *s, char *err, size_t errlen)
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
    /* The five handles are initialised together, so one close path
     * (daemon_shutdown) serves them whatever fails after. */
    if ((rc = uv_signal_init(s->loop, &s->sig_term)) < 0 ||
        (rc = uv_signal_init(s->loop, &s->sig_int)) < 0 ||
        (rc = uv_timer_init(s->loop, &s->cron)) < 0 ||
        (rc = uv_timer_init(s->loop, &s->expire_timer)) < 0 ||
        (rc = uv_check_init(s->loop, &s->read_resume)) < 0) {
        snprintf(err, errlen, "Cannot set up signal handlers: %s",
                 uv_strerror(rc));
        goto fail;
    }
    s->handles_open = true;
    s->sig_term.data = s->sig_int.data = s->cron.data = s;
    if ((rc = uv_signal_start(&s->sig_term, daemon_on_signal, SIGTERM)) < 0 ||
        (rc = uv_signal_start(&s->sig_int, daemon_on_signal, SIGINT)) < 0 ||
        (rc = uv_timer_start(&s->cron, daemon_on_cron, DAEMON_CRON_MS,
                             DAEMON_CRON_MS)) < 0) {
        snprintf(err, errlen, "Cannot start signal handlers or the cron: %s",
                 uv_strerror(rc));
        goto fail;
    }
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

void daemon_shutdown(server_t *s, int exit_code)
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
    /* Once, after the listeners are closed and before the clients are:
     * the final save (a failed one sets s->exit_code to non-zero), then the
     * AOF's last write and fsync. A start that failed has nothing new to
     * save. */
    if (s->started) {
        persist_on_shutdown(s);
        aof_on_shutdown(s);
    }
    while (s->clients != NULL)
        conn_close(s->clients);
    if (s->handles_open) {
        uv_close((uv_handle_t *)&s->sig_term, NULL);
        uv_close((uv_handle_t *)&s->sig_int, NULL);
        uv_close((uv_handle_t *)&s->cron, NULL);
        uv_close((uv_handle_t *)&s->expire_timer, NULL);
        uv_close((uv_handle_t *)&s->read_resume, NULL);
        s->handles_open = false;
    }
}

int daemon_config_commit(server_t *s, const char *const *names, int n,
                         char *err, size_t errlen)
{
    const char *tls_name = NULL;
    for (int i = 0; i < n && s->aof != NULL; i++)
        if (aof_config_set(s, names[i], err, errlen) < 0)
            return -EINVAL;
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

void daemon_config_changed(server_t *s, const char *name)
{
    if (strcasecmp(name, "loglevel") == 0) {
        log_set_level(s->cfg->loglevel);
    } else if (strcasecmp(name, "requirepass") == 0) {
        /* As Redis: requirepass is the default user's password. Without
         * one every client is the (nopass) default user, also those that
         * connected while one was required. */
        acl_set_default_password(s, s->cfg->requirepass);
        if (s->cfg->requirepass == NULL || s->cfg->requirepass[0] == '\0')
            for (conn_t *c = s->clients; c != NULL; c = c->next)
                if (!c->cl.authenticated) {
                    c->cl.authenticated = true;
                    conn_apply_limits(c);
                }
    } else if (strcasecmp(name, "acllog-max-len") == 0) {
        acl_log_trim(s, s->cfg->acllog_max_len);
    } else if (strcasecmp(name, "maxclients") == 0) {
        conn_fit_maxclients(s->cfg);
    } else if (strcasecmp(name, "proto-max-bulk-len") == 0 ||
               strcasecmp(name, "client-query-buffer-limit") == 0) {
        for (conn_t *c = s->clients; c != NULL; c = c->next)
            conn_apply_limits(c);
    }
}
