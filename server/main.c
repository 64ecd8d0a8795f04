/*
 * main.c - cuckood [config] [--directive value...]: configuration, start-up
 * and shutdown of the event loop.
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "log.h"
#include "server_int.h"

static void usage(FILE *fp)
{
    fprintf(fp,
            "Usage: cuckood [/path/to/cuckood.conf] [--directive value ...]\n"
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

static void close_walk_cb(uv_handle_t *h, void *arg)
{
    if (!uv_is_closing(h))
        uv_close(h, NULL);
}

int main(int argc, char **argv)
{
    if (argc >= 2 && (strcmp(argv[1], "--version") == 0 ||
                      strcmp(argv[1], "-v") == 0)) {
        printf("cuckood v=%s (Redis protocol %s compatible) libuv=%s\n",
               CUCKOOD_VERSION, SERVER_REDIS_VERSION, uv_version_string());
        return 0;
    }
    if (argc >= 2 && (strcmp(argv[1], "--help") == 0 ||
                      strcmp(argv[1], "-h") == 0)) {
        usage(stdout);
        return 0;
    }

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
    if (log_init(cfg.loglevel, cfg.logfile) < 0)
        fprintf(stderr, "cuckood: cannot open log file %s, logging to "
                "stdout\n", cfg.logfile);

    signal(SIGPIPE, SIG_IGN);

    uv_loop_t *loop = uv_default_loop();
    static server_t srv;
    if (server_init(&srv, loop, &cfg) < 0) {
        log_warning("Out of memory initialising the server");
        cfg_free(&cfg);
        return 1;
    }
    log_notice("cuckood version=%s, pid=%d, just started", CUCKOOD_VERSION,
               (int)getpid());
    if (cfg.config_file == NULL)
        log_warning("No config file specified, using the default config. "
                    "In order to specify a config file use cuckood "
                    "/path/to/cuckood.conf");
    if (server_listen(&srv, err, sizeof(err)) < 0) {
        log_warning("%s", err);
        server_free(&srv);
        uv_walk(loop, close_walk_cb, NULL);
        uv_run(loop, UV_RUN_DEFAULT);
        uv_loop_close(loop);
        cfg_free(&cfg);
        log_close();
        return 1;
    }
    log_notice("Server initialized");
    if (cfg.port > 0)
        log_notice("Ready to accept connections tcp on port %d", cfg.port);
    if (cfg.unixsocket != NULL && cfg.unixsocket[0] != '\0')
        log_notice("Ready to accept connections unix on %s", cfg.unixsocket);

    uv_run(loop, UV_RUN_DEFAULT);

    /* Handles still open (none expected) are closed so the loop can end. */
    uv_walk(loop, close_walk_cb, NULL);
    uv_run(loop, UV_RUN_DEFAULT);
    int code = srv.exit_code;
    if (uv_loop_close(loop) != 0)
        log_warning("Event loop did not close cleanly");
    server_free(&srv);
    log_notice("cuckood is now ready to exit, bye bye...");
    log_close();
    cfg_free(&cfg);
    return code;
}
