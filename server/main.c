/*
 * main.c - cuckood [config] [--directive value...]: configuration, start-up
 * and shutdown of the event loop.
 */
#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "conn.h"
#include "log.h"
#include "server_int.h"

static void usage(FILE *fp)
{
    fprintf(fp,
            "Usage: cuckood [/path/to/cuckood.conf] [--directive value ...]\n"
            "       cuckood --ping [host:port | /path/to/socket]\n"
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

/* Waits for fd to be ready for events, at most ms milliseconds. */
static bool wait_fd(int fd, short events, int ms)
{
    struct pollfd p = {fd, events, 0};
    int rc;
    do
        rc = poll(&p, 1, ms);
    while (rc < 0 && errno == EINTR);
    return rc > 0;
}

static int probe_connect(const char *target)
{
    int fd = -1;
    if (target[0] == '/') {
        struct sockaddr_un a = {.sun_family = AF_UNIX};
        if (strlen(target) >= sizeof(a.sun_path))
            return -1;
        strcpy(a.sun_path, target);
        fd = socket(AF_UNIX, SOCK_STREAM, 0);
        if (fd >= 0 && connect(fd, (struct sockaddr *)&a, sizeof(a)) < 0) {
            close(fd);
            fd = -1;
        }
        return fd;
    }
    char host[256] = "127.0.0.1", port[16] = "6379";
    const char *colon = strrchr(target, ':');
    if (target[0] == '[') { /* [v6addr]:port */
        const char *end = strchr(target, ']');
        if (end == NULL || (size_t)(end - target - 1) >= sizeof(host))
            return -1;
        memcpy(host, target + 1, (size_t)(end - target - 1));
        host[end - target - 1] = '\0';
        if (end[1] == ':')
            snprintf(port, sizeof(port), "%s", end + 2);
    } else if (colon != NULL) {
        if ((size_t)(colon - target) >= sizeof(host))
            return -1;
        memcpy(host, target, (size_t)(colon - target));
        host[colon - target] = '\0';
        snprintf(port, sizeof(port), "%s", colon + 1);
    } else if (target[0] != '\0') {
        snprintf(host, sizeof(host), "%s", target);
    }
    struct addrinfo hints = {.ai_socktype = SOCK_STREAM}, *res, *ai;
    if (getaddrinfo(host, port, &hints, &res) != 0)
        return -1;
    for (ai = res; ai != NULL && fd < 0; ai = ai->ai_next) {
        fd = socket(ai->ai_family, ai->ai_socktype | SOCK_NONBLOCK,
                    ai->ai_protocol);
        if (fd < 0)
            continue;
        int rc = connect(fd, ai->ai_addr, ai->ai_addrlen);
        int soerr = 0;
        socklen_t len = sizeof(soerr);
        if (rc < 0 && errno == EINPROGRESS && wait_fd(fd, POLLOUT, 3000) &&
            getsockopt(fd, SOL_SOCKET, SO_ERROR, &soerr, &len) == 0 &&
            soerr == 0)
            rc = 0;
        if (rc < 0) {
            close(fd);
            fd = -1;
        }
    }
    freeaddrinfo(res);
    return fd;
}

/* cuckood --ping: a health probe needing nothing else installed. Exits 0
 * when the server answers PING (PONG, or NOAUTH from a server that wants a
 * password: it is up), 1 otherwise. */
static int probe(const char *target)
{
    int fd = probe_connect(target);
    if (fd < 0) {
        fprintf(stderr, "cuckood --ping: cannot connect to %s\n", target);
        return 1;
    }
    static const char req[] = "*1\r\n$4\r\nPING\r\n";
    char buf[256];
    size_t got = 0;
    if (send(fd, req, sizeof(req) - 1, MSG_NOSIGNAL) !=
        (ssize_t)(sizeof(req) - 1)) {
        close(fd);
        fprintf(stderr, "cuckood --ping: send failed\n");
        return 1;
    }
    while (got < sizeof(buf) - 1 && memchr(buf, '\n', got) == NULL &&
           wait_fd(fd, POLLIN, 3000)) {
        ssize_t n = recv(fd, buf + got, sizeof(buf) - 1 - got, 0);
        if (n <= 0)
            break;
        got += (size_t)n;
    }
    close(fd);
    buf[got] = '\0';
    char *eol = strpbrk(buf, "\r\n");
    if (eol != NULL)
        *eol = '\0';
    if (strcmp(buf, "+PONG") == 0 || strncmp(buf, "-NOAUTH", 7) == 0) {
        printf("%s\n", buf + 1);
        return 0;
    }
    fprintf(stderr, "cuckood --ping: unexpected reply '%s'\n", buf);
    return 1;
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
    setsid();
    int fd = open("/dev/null", O_RDWR);
    if (fd >= 0) {
        dup2(fd, STDIN_FILENO);
        dup2(fd, STDOUT_FILENO);
        dup2(fd, STDERR_FILENO);
        if (fd > STDERR_FILENO)
            close(fd);
    }
    return 0;
}

static void write_pidfile(const char *path)
{
    FILE *fp = fopen(path, "w");
    if (fp == NULL) {
        log_warning("Failed to write PID file %s: %s", path, strerror(errno));
        return;
    }
    fprintf(fp, "%d\n", (int)getpid());
    fclose(fp);
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

    if (argc >= 2 && strcmp(argv[1], "--ping") == 0)
        return probe(argc >= 3 ? argv[2] : "127.0.0.1:6379");

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

    signal(SIGPIPE, SIG_IGN);
    conn_fit_maxclients(&cfg);

    uv_loop_t *loop = uv_default_loop();
    static server_t srv;
    if (server_init(&srv, loop, &cfg) < 0) {
        log_warning("Out of memory initialising the server");
        cfg_free(&cfg);
        return 1;
    }
    log_notice("cuckood version=%s, pid=%d, just started", CUCKOOD_VERSION,
               (int)getpid());
    if (cfg.config_file != NULL)
        log_notice("Configuration loaded from %s", cfg.config_file);
    else
        log_warning("No config file specified, using the default config. "
                    "In order to specify a config file use cuckood "
                    "/path/to/cuckood.conf");
    if (persist_load(&srv) < 0) {
        server_free(&srv);
        cfg_free(&cfg);
        log_close();
        return 1;
    }
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
    persist_start(&srv);
    if (cfg.pidfile != NULL && cfg.pidfile[0] != '\0')
        write_pidfile(cfg.pidfile);
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
    if (cfg.pidfile != NULL && cfg.pidfile[0] != '\0')
        unlink(cfg.pidfile);
    log_notice("cuckood is now ready to exit, bye bye...");
    log_close();
    cfg_free(&cfg);
    return code;
}
