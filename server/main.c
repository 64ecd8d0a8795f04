/*
 * main.c - cuckood [config] [--directive value...]: configuration, start-up
 * and shutdown of the event loop.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#include "cfhost.h"
#include "cmd.h"
#include "cmd_admin.h"
#include "cmd_conn.h"
#include "cmd_keys.h"
#include "conn.h"
#include "daemon.h"
#include "heap.h"
#include "latency.h"
#include "log.h"
#include "persist.h"
#include "probe.h"
#include "server_int.h"
#include "slowlog.h"

static void usage(FILE *fp)
{
    fprintf(fp,
            "Usage: cuckood [/path/to/cuckood.conf] [--directive value ...]\n"
            "       cuckood [/path/to/cuckood.conf] [--directive value ...] "
            "--ping\n"
            "       cuckood --ping [host:port | tls://host:port | "
            "/path/to/socket]\n"
            "       cuckood --version\n"
            "       cuckood --help\n"
            "\n"
            "Examples:\n"
            "       cuckood                      (embedded defaults: "
            "127.0.0.1:6379)\n"
            "       cuckood /etc/cuckood.conf\n"
            "       cuckood --port 7777 --requirepass s3cret\n"
            "       cuckood /etc/cuckood.conf --loglevel verbose\n");
}

/* Detaches from the terminal as redis-server does: the parent exits, the
 * child leads a new session with its standard streams on /dev/null. */
static int daemonize(void)
{
    pid_t pid = fork();
    if (pid < 0)
        return -errno;
    if (pid > 0)
        _exit(0);
    if (setsid() < 0)
        return -errno;
    int fd = open("/dev/null", O_RDWR);
    if (fd < 0)
        return -errno;
    int rc = 0;
    if (dup2(fd, STDIN_FILENO) < 0 || dup2(fd, STDOUT_FILENO) < 0 ||
        dup2(fd, STDERR_FILENO) < 0)
        rc = -errno;
    if (fd > STDERR_FILENO)
        close(fd);
    return rc;
}

static void write_pidfile(const char *path)
{
    FILE *fp = fopen(path, "w");
    if (fp == NULL) {
        log_warning("Failed to write PID file %s: %s", path, strerror(errno));
        return;
    }
    /* A short or failed write leaves a file that names no process. */
    if (fprintf(fp, "%d\n", (int)getpid()) < 0 || fclose(fp) != 0) {
        log_warning("Failed to write PID file %s: %s", path, strerror(errno));
        unlink(path);
    }
}

/* The dispatcher's after-call hook: the slow log and the latency
 * monitor's command events (Redis splits those by the "fast" flag). */
static void on_call(client_t *c, const resp_cmd_t *cmd, uint64_t ns)
{
    slowlog_record(c->srv, c, cmd, ns / 1000, conn_addr(c));
    const cmd_def_t *d = c->sub != NULL ? c->sub : c->cmd;
    latency_add(c->srv,
                d != NULL && (d->flags & CMD_FAST) ? "fast-command"
                                                   : "command",
                ns / 1000000);
}

static void close_walk_cb(uv_handle_t *h, void *arg)
{
    if (!uv_is_closing(h))
        uv_close(h, NULL);
}

int main(int argc, char **argv)
{
    if (argc >= 2 &&
        (strcmp(argv[1], "--version") == 0 || strcmp(argv[1], "-v") == 0)) {
        printf("cuckood v=%s (Redis protocol %s compatible) libuv=%s\n",
               CUCKOOD_VERSION, SERVER_REDIS_VERSION, uv_version_string());
        return 0;
    }
    if (argc >= 2 &&
        (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0)) {
        usage(stdout);
        return 0;
    }

    for (int i = 1; i < argc; i++)
        if (strcmp(argv[i], "--ping") == 0)
            return probe_main(argc, argv, i);

    /* The allocator's settings and the filter core's hook, before any
     * filter exists. */
    heap_init();
    cfg_t cfg;
    char err[512] = "";
    if (cfg_init(&cfg) < 0) {
        fprintf(stderr, "cuckood: out of memory\n");
        return 1;
    }
    if (cfg_load_args(&cfg, argc, argv, err, sizeof(err)) < 0) {
        fprintf(stderr, "\n*** FATAL CONFIG FILE ERROR ***\n%s\n", err);
        cfg_free(&cfg);
        return 1;
    }
    /* As redis-server does, "dir" is the working directory: snapshots,
     * relative log, pid and socket paths live there. */
    if (cfg.dir != NULL && cfg.dir[0] != '\0' && chdir(cfg.dir) < 0) {
        fprintf(stderr, "Can't chdir to '%s': %s\n", cfg.dir, strerror(errno));
        cfg_free(&cfg);
        return 1;
    }
    if (cfg.daemonize && daemonize() < 0) {
        fprintf(stderr, "cuckood: cannot daemonize: %s\n", strerror(errno));
        cfg_free(&cfg);
        return 1;
    }
    if (log_init(cfg.loglevel, cfg.logfile) < 0)
        fprintf(stderr,
                "cuckood: cannot open log file %s, logging to "
                "stdout\n",
                cfg.logfile);

    /* As redis-server: a closed terminal (SIGHUP) must not kill the server
     * without its final save, and a vanished peer (SIGPIPE) is an error
     * return, not a signal. */
    signal(SIGPIPE, SIG_IGN);
    signal(SIGHUP, SIG_IGN);
    conn_fit_maxclients(&cfg);

    uv_loop_t *loop = uv_default_loop();
    static server_t srv;
    if (server_init(&srv, loop, &cfg) < 0 || persist_init(&srv) < 0) {
        persist_free(&srv);
        server_free(&srv);
        log_warning("Out of memory initialising the server");
        cfg_free(&cfg);
        return 1;
    }
    /* The composition root: the dispatcher learns the command families
     * here, the daemon's shutdown hook is the final save, FLUSHALL's hook
     * saves the emptied dataset, and the dispatcher's after-call hook
     * feeds the slow log and the latency monitor. */
    const cmd_def_t *tables[] = {cmd_conn_table,    cmd_keys_table,
                                 cmd_admin_table,   cmd_persist_table,
                                 latency_table,     slowlog_table,
                                 cfhost_table()};
    const char *dup = NULL;
    int irc = tables[6] == NULL
                  ? -ENOMEM
                  : cmd_index_build(&srv, tables,
                                    sizeof(tables) / sizeof(tables[0]), &dup);
    if (irc < 0) {
        log_warning("Cannot build the command table: %s%s%s",
                    irc == -EEXIST   ? "duplicate command "
                    : irc == -EINVAL ? "malformed command "
                                     : "out of memory",
                    dup != NULL ? dup : "", "");
        cmd_index_free(&srv);
        persist_free(&srv);
        server_free(&srv);
        cfg_free(&cfg);
        return 1;
    }
    srv.on_shutdown = persist_on_shutdown;
    srv.on_flushall = persist_on_flushall;
    srv.on_call = on_call;
    log_notice("cuckood version=%s, pid=%d, just started", CUCKOOD_VERSION,
               (int)getpid());
    if (cfg.config_file != NULL)
        log_notice("Configuration loaded from %s", cfg.config_file);
    else
        log_warning("No config file specified, using the default config. "
                    "In order to specify a config file use cuckood "
                    "/path/to/cuckood.conf");
    if (persist_load(&srv) < 0) {
        cmd_index_free(&srv);
        persist_free(&srv);
        server_free(&srv);
        cfg_free(&cfg);
        log_close();
        return 1;
    }
    if (daemon_listen(&srv, err, sizeof(err)) < 0) {
        log_warning("%s", err);
        cmd_index_free(&srv);
        persist_free(&srv);
        server_free(&srv);
        uv_walk(loop, close_walk_cb, NULL);
        uv_run(loop, UV_RUN_DEFAULT);
        uv_loop_close(loop);
        cfg_free(&cfg);
        log_close();
        return 1;
    }
    if (persist_start(&srv) < 0) {
        srv.on_shutdown = NULL; /* nothing has run: nothing to save */
        daemon_shutdown(&srv, 1);
        uv_run(loop, UV_RUN_DEFAULT);
        uv_loop_close(loop);
        cmd_index_free(&srv);
        persist_free(&srv);
        server_free(&srv);
        cfg_free(&cfg);
        log_close();
        return 1;
    }
    if (cfg.pidfile != NULL && cfg.pidfile[0] != '\0')
        write_pidfile(cfg.pidfile);
    char probe_addr[1100];
    probe_file_write(&cfg, probe_addr, sizeof(probe_addr));
    log_notice("Server initialized");
    if (cfg.port > 0)
        log_notice("Ready to accept connections tcp on port %d", cfg.port);
    if (cfg.tls_port > 0)
        log_notice("Ready to accept connections tls on port %d",
                   cfg.tls_port);
    if (cfg.unixsocket != NULL && cfg.unixsocket[0] != '\0')
        log_notice("Ready to accept connections unix on %s", cfg.unixsocket);

    uv_run(loop, UV_RUN_DEFAULT);

    /* Handles still open (none expected) are closed so the loop can end. */
    uv_walk(loop, close_walk_cb, NULL);
    uv_run(loop, UV_RUN_DEFAULT);
    int code = srv.exit_code;
    if (uv_loop_close(loop) != 0)
        log_warning("Event loop did not close cleanly");
    cmd_index_free(&srv);
    slowlog_free(&srv);
    persist_free(&srv);
    server_free(&srv);
    if (cfg.pidfile != NULL && cfg.pidfile[0] != '\0')
        unlink(cfg.pidfile);
    probe_file_remove(probe_addr);
    log_notice("cuckood is now ready to exit, bye bye...");
    log_close();
    cfg_free(&cfg);
    return code;
}
