/*
 * main.c - cuckood [config] [--directive value...]: configuration, start-up
 * and shutdown of the event loop.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#include "acl.h"
#include "acl_file.h"
#include "acl_log.h"
#include "aof.h"
#include "aof_check.h"
#include "aofload.h"
#include "cfhost.h"
#include "cmd.h"
#include "cmdtab.h"
#include "config_load.h"
#include "conn.h"
#include "conn_info.h"
#include "daemon.h"
#include "heap.h"
#include "latency.h"
#include "loadprog.h"
#include "log.h"
#include "monitor.h"
#include "multi.h"
#include "persist.h"
#include "probe.h"
#include "propagate.h"
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
            "       cuckood --check-aof [--fix] /path/to/file.aof\n"
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

static void close_walk_cb(uv_handle_t *h, void *arg)
{
    (void)arg;
    if (!uv_is_closing(h))
        uv_close(h, NULL);
}

/* Everything main() starts, so that one teardown releases whatever was
 * started, whichever phase stopped. */
typedef struct app {
    cfg_t cfg;
    bool cfg_ready;  /* cfg_init() succeeded: cfg_free() */
    bool log_open;   /* log_init() ran: log_close() */
    uv_loop_t *loop; /* set once the loop exists: it is run to its end */
    server_t srv;    /* zero until server_init(); every free is safe on it */
    bool running;    /* serving: the pid and address files exist */
    char probe_addr[1100];
} app_t;

/* --version, --help and --ping run instead of the server: true then, with
 * the exit code in *code. */
static bool one_shot(int argc, char **argv, int *code)
{
    *code = 0;
    if (argc >= 2 &&
        (strcmp(argv[1], "--version") == 0 || strcmp(argv[1], "-v") == 0)) {
        printf("cuckood v=%s (Redis protocol %s compatible) libuv=%s\n",
               CUCKOOD_VERSION, SERVER_REDIS_VERSION, uv_version_string());
        return true;
    }
    if (argc >= 2 &&
        (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0)) {
        usage(stdout);
        return true;
    }
    if (argc >= 2 && strcmp(argv[1], "--check-aof") == 0) {
        /* As redis-check-aof: [--fix] FILE; FILE --fix is taken too. A
         * manifest is checked with every file it names. */
        bool fix = argc == 4 && (strcmp(argv[2], "--fix") == 0 ||
                                 strcmp(argv[3], "--fix") == 0);
        if (argc != 3 && !fix) {
            fprintf(stderr, "Usage: cuckood --check-aof [--fix] "
                            "/path/to/file.aof|file.manifest\n");
            *code = 1;
            return true;
        }
        const char *path =
            argc == 3 || strcmp(argv[2], "--fix") != 0 ? argv[2] : argv[3];
        *code = aof_check_is_manifest(path)
                    ? aof_check_manifest(path, fix, aofload_check)
                    : aofload_check_main(path, fix);
        return true;
    }
    for (int i = 1; i < argc; i++)
        if (strcmp(argv[i], "--ping") == 0) {
            *code = probe_main(argc, argv, i);
            return true;
        }
    return false;
}

/* The composition root: the dispatcher learns the command families here.
 * 0, or -1 after logging why. */
static int wire(server_t *s)
{
    const cmd_def_t *cf = cfhost_table(); /* NULL when out of memory */
    const cmd_def_t *tables[CMD_NFAMILIES + 1];
    memcpy(tables, cmd_families, sizeof(cmd_families));
    tables[CMD_NFAMILIES] = cf;
    const char *dup = NULL;
    int rc = cf == NULL ? -ENOMEM
                        : cmd_index_build(s, tables, CMD_NFAMILIES + 1, &dup);
    if (rc < 0) {
        log_warning("Cannot build the command table: %s%s",
                    rc == -EEXIST   ? "duplicate command "
                    : rc == -EINVAL ? "malformed command "
                                    : "out of memory",
                    dup != NULL ? dup : "");
        return -1;
    }
    /* The transactions module's table of watched keys. */
    if (multi_init(s) < 0) {
        log_warning("Out of memory initialising the server");
        return -1;
    }
    /* ACL users, after the command table their rules name: the default
     * user, then the configuration's users or its aclfile. */
    if (acl_init(s) < 0) {
        log_warning("Out of memory initialising the server");
        return -1;
    }
    return acl_file_startup(s);
}

/* The configuration, the process around the server, the server's state
 * and its command table. 0, or -1 after saying why. */
static int init(app_t *a, int argc, char **argv)
{
    /* The allocator's settings and the filter core's hook, before any
     * filter exists. */
    heap_init();
    if (cfg_init(&a->cfg) < 0) {
        fprintf(stderr, "cuckood: out of memory\n");
        return -1;
    }
    a->cfg_ready = true;
    char err[512] = "";
    if (cfg_load_args(&a->cfg, argc, argv, err, sizeof(err)) < 0) {
        fprintf(stderr, "\n*** FATAL CONFIG FILE ERROR ***\n%s\n", err);
        return -1;
    }
    /* As redis-server does, "dir" is the working directory: snapshots,
     * relative log, pid and socket paths live there. */
    const char *dir = a->cfg.dir;
    if (dir != NULL && dir[0] != '\0' && chdir(dir) < 0) {
        fprintf(stderr, "Can't chdir to '%s': %s\n", dir, strerror(errno));
        return -1;
    }
    if (a->cfg.daemonize && daemonize() < 0) {
        fprintf(stderr, "cuckood: cannot daemonize: %s\n", strerror(errno));
        return -1;
    }
    a->log_open = true;
    if (log_init(a->cfg.loglevel, a->cfg.logfile) < 0)
        fprintf(stderr,
                "cuckood: cannot open log file %s, logging to "
                "stdout\n",
                a->cfg.logfile);

    /* As redis-server: a closed terminal (SIGHUP) must not kill the server
     * without its final save, and a vanished peer (SIGPIPE) is an error
     * return, not a signal. */
    signal(SIGPIPE, SIG_IGN);
    signal(SIGHUP, SIG_IGN);
    conn_fit_maxclients(&a->cfg);

    if ((a->loop = uv_default_loop()) == NULL) {
        log_warning("Cannot create the event loop");
        return -1;
    }
    /* The AOF's increments replay through aofload.h's aofload_file. */
    if (server_init(&a->srv, a->loop, &a->cfg) < 0 ||
        persist_init(&a->srv) < 0 || aof_init(&a->srv, aofload_file) < 0) {
        log_warning("Out of memory initialising the server");
        return -1;
    }
    return wire(&a->srv);
}

/* The listeners first, as Redis: while the files load, clients connect
 * and get -LOADING (loadprog.h). 0, or -1 (logged). */
static int listen_early(app_t *a)
{
    char err[512] = "";
    if (daemon_listen(&a->srv, err, sizeof(err)) < 0) {
        log_warning("%s", err);
        return -1;
    }
    return 0;
}

/* The AOF or the snapshot, the clients served meanwhile. 0, or -1
 * (logged; a shutdown asked for during the load is one too). */
static int load_files(app_t *a)
{
    log_notice("cuckood version=%s, pid=%d, just started", CUCKOOD_VERSION,
               (int)getpid());
    if (a->cfg.config_file != NULL)
        log_notice("Configuration loaded from %s", a->cfg.config_file);
    else
        log_warning("No config file specified, using the default config. "
                    "In order to specify a config file use cuckood "
                    "/path/to/cuckood.conf");
    /* As Redis 7: with appendonly yes the AOF is the truth and the
     * snapshot is not read. */
    if (a->cfg.appendonly)
        return aof_load(&a->srv) < 0 ? -1 : 0;
    if (aof_load_manifest(&a->srv) < 0)
        return -1;
    return persist_load(&a->srv) < 0 ? -1 : 0;
}

static int load(app_t *a)
{
    loadprog_begin(&a->srv);
    int rc = load_files(a);
    loadprog_end(&a->srv);
    return rc;
}

/* The AOF's files, the save points, then the files that say the server
 * is up. 0, or -1 (logged). */
static int listen_all(app_t *a)
{
    if (aof_start(&a->srv) < 0)
        return -1;
    if (persist_start(&a->srv) < 0)
        return -1;
    /* Only now: a start that failed has nothing new to save. */
    a->srv.started = true;
    a->running = true;
    const cfg_t *cfg = &a->cfg;
    if (cfg->pidfile != NULL && cfg->pidfile[0] != '\0')
        write_pidfile(cfg->pidfile);
    probe_file_write(cfg, a->probe_addr, sizeof(a->probe_addr));
    log_notice("Server initialized");
    if (cfg->port > 0)
        log_notice("Ready to accept connections tcp on port %d", cfg->port);
    if (cfg->tls_port > 0)
        log_notice("Ready to accept connections tls on port %d", cfg->tls_port);
    if (cfg->unixsocket != NULL && cfg->unixsocket[0] != '\0')
        log_notice("Ready to accept connections unix on %s", cfg->unixsocket);
    return 0;
}

/* The one cleanup ladder, for every phase's failure and for the end of the
 * run: closes what is open, then frees in the reverse order of start-up.
 * Returns the exit code: the server's once it ran, else code. */
static int teardown(app_t *a, int code)
{
    server_t *s = &a->srv;
    if (a->loop != NULL) {
        /* After a failed start the loop never ran: the shutdown closes the
         * listeners and handles opened so far (not started yet, so
         * nothing is saved). */
        if (s->loop != NULL && !s->shutting_down)
            daemon_shutdown(s, code);
        /* Handles still open (none expected) are closed so the loop can
         * end. */
        uv_walk(a->loop, close_walk_cb, NULL);
        uv_run(a->loop, UV_RUN_DEFAULT);
        if (uv_loop_close(a->loop) != 0)
            log_warning("Event loop did not close cleanly");
    }
    if (a->running)
        code = s->exit_code; /* SHUTDOWN's, or 1 after a failed final save */
    acl_free(s);
    acl_log_free(s);
    cmd_index_free(s);
    multi_free(s);
    propagate_free(s);
    slowlog_free(s);
    aof_free(s);
    persist_free(s);
    server_free(s);
    if (a->running) {
        if (a->cfg.pidfile != NULL && a->cfg.pidfile[0] != '\0')
            unlink(a->cfg.pidfile);
        probe_file_remove(a->probe_addr);
        log_notice("cuckood is now ready to exit, bye bye...");
    }
    if (a->log_open)
        log_close();
    if (a->cfg_ready)
        cfg_free(&a->cfg);
    return code;
}

int main(int argc, char **argv)
{
    int code;
    if (one_shot(argc, argv, &code))
        return code;
    app_t a = {0};
    if (init(&a, argc, argv) < 0 || listen_early(&a) < 0 || load(&a) < 0 ||
        listen_all(&a) < 0)
        /* a SHUTDOWN or SIGTERM while loading exits as asked */
        return teardown(&a, a.srv.shutting_down ? a.srv.exit_code : 1);
    uv_run(a.loop, UV_RUN_DEFAULT);
    return teardown(&a, 0);
}
