/*
 * probe.c - see probe.h.
 */
#include "probe.h"

#include <errno.h>
#include <netdb.h>
#include <poll.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "config_load.h"
#include "log.h"
#include "tls.h"

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
        snprintf(host, sizeof(host), "%.255s", target);
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

/* The probe's connection: a socket, with a TLS session on it or not. */
typedef struct probe_io {
    int fd;
    tls_client_t *tls;
} probe_io_t;

static bool probe_send(probe_io_t *io, const char *buf, size_t len)
{
    if (io->tls != NULL)
        return tls_client_send(io->tls, buf, len) == (ssize_t)len;
    return send(io->fd, buf, len, MSG_NOSIGNAL) == (ssize_t)len;
}

/* Reads from io into buf (len bytes, *have used) until it holds a whole
 * line. False on timeout, close or an overlong line. (A TLS socket is
 * blocking with a receive timeout, as OpenSSL may hold data poll cannot
 * see.) */
static bool probe_line(probe_io_t *io, char *buf, size_t len, size_t *have)
{
    char *eol;
    while ((eol = memchr(buf, '\n', *have)) == NULL) {
        if (*have >= len - 1)
            return false;
        ssize_t n;
        if (io->tls != NULL) {
            n = tls_client_recv(io->tls, buf + *have, len - 1 - *have);
        } else {
            if (!wait_fd(io->fd, POLLIN, 3000))
                return false;
            n = recv(io->fd, buf + *have, len - 1 - *have, 0);
        }
        if (n <= 0)
            return false;
        *have += (size_t)n;
    }
    return true;
}

/* Removes the first line from buf, leaving it as a C string in line. */
static void probe_take(char *buf, size_t *have, char *line, size_t len)
{
    char *eol = memchr(buf, '\n', *have);
    size_t n = (size_t)(eol - buf) + 1, keep = n - 1;
    if (keep > 0 && buf[keep - 1] == '\r')
        keep--;
    if (keep >= len)
        keep = len - 1;
    memcpy(line, buf, keep);
    line[keep] = '\0';
    memmove(buf, buf + n, *have - n);
    *have -= n;
}

/* cuckood --ping: a health probe needing nothing else installed. With a
 * password it sends AUTH first, so that a real PONG is checked. A target
 * "tls://host:port" is spoken to over TLS with cfg's certificates. Exits 0
 * when PING answers PONG, NOAUTH (a server that wants a password it was
 * not given is up) or NOPERM (one whose default user may not PING, as an
 * aclfile may have it), 1 otherwise. */
static int probe(const char *target, const cfg_t *cfg)
{
    const char *password =
        cfg->requirepass != NULL && cfg->requirepass[0] != '\0'
            ? cfg->requirepass
            : NULL;
    bool tls = strncmp(target, "tls://", 6) == 0;
    probe_io_t io = {probe_connect(tls ? target + 6 : target), NULL};
    int fd = io.fd;
    if (fd < 0) {
        fprintf(stderr, "cuckood --ping: cannot connect to %s\n", target);
        return 1;
    }
    char terr[512];
    if (tls &&
        tls_client_open(fd, cfg, 3000, &io.tls, terr, sizeof(terr)) < 0) {
        close(fd);
        fprintf(stderr, "cuckood --ping: %s: %s\n", target, terr);
        return 1;
    }
    static const char ping[] = "*1\r\n$4\r\nPING\r\n";
    size_t plen = password != NULL ? strlen(password) : 0;
    size_t reqlen = sizeof(ping) - 1 + (password != NULL ? plen + 48 : 0);
    char *req = malloc(reqlen);
    if (req == NULL) {
        tls_client_close(io.tls);
        close(fd);
        fprintf(stderr, "cuckood --ping: out of memory\n");
        return 1;
    }
    int n = 0;
    if (password != NULL)
        n = snprintf(req, reqlen, "*2\r\n$4\r\nAUTH\r\n$%zu\r\n", plen);
    if (password != NULL) {
        memcpy(req + n, password, plen);
        n += (int)plen;
        memcpy(req + n, "\r\n", 2);
        n += 2;
    }
    memcpy(req + n, ping, sizeof(ping) - 1);
    n += (int)(sizeof(ping) - 1);
    bool sent = probe_send(&io, req, (size_t)n);
    free(req);
    if (!sent) {
        tls_client_close(io.tls);
        close(fd);
        fprintf(stderr, "cuckood --ping: send failed\n");
        return 1;
    }
    char buf[1024], line[256] = "", auth[256] = "";
    size_t have = 0;
    bool ok = true;
    /* AUTH answers one line (+OK, -WRONGPASS, -ERR ...), then PING's. */
    if (password != NULL) {
        ok = probe_line(&io, buf, sizeof(buf), &have);
        if (ok)
            probe_take(buf, &have, auth, sizeof(auth));
    }
    if (ok && probe_line(&io, buf, sizeof(buf), &have))
        probe_take(buf, &have, line, sizeof(line));
    tls_client_close(io.tls);
    close(fd);
    if (strcmp(line, "+PONG") == 0 || strncmp(line, "-NOAUTH", 7) == 0 ||
        strncmp(line, "-NOPERM", 7) == 0) {
        if (auth[0] == '-')
            fprintf(stderr, "cuckood --ping: AUTH: %s\n", auth + 1);
        printf("%s\n", line + 1);
        return 0;
    }
    fprintf(stderr, "cuckood --ping: unexpected reply '%s'\n",
            line[0] != '\0' ? line : auth);
    return 1;
}

/* The address --ping uses for the configuration c, in the form probe()
 * takes: the Unix socket if there is one (made absolute against dir), else
 * the first bind address on port, loopback for a wildcard, else the same on
 * tls-port as "tls://host:port". -EINVAL when c listens nowhere,
 * -ENAMETOOLONG when buf is too small. */
static int probe_target(const cfg_t *c, const char *dir, char *buf, size_t len)
{
    int n;
    if (c->unixsocket != NULL && c->unixsocket[0] != '\0') {
        if (c->unixsocket[0] == '/' || dir == NULL || dir[0] == '\0')
            n = snprintf(buf, len, "%s", c->unixsocket);
        else
            n = snprintf(buf, len, "%s/%s", dir, c->unixsocket);
    } else if (c->port > 0 || c->tls_port > 0) {
        bool tls = c->port == 0;
        int port = tls ? c->tls_port : c->port;
        const char *host = c->nbind > 0 ? c->bind[0] : "127.0.0.1";
        if (host[0] == '-')
            host++;
        if (strcmp(host, "*") == 0 || strcmp(host, "0.0.0.0") == 0)
            host = "127.0.0.1";
        else if (strcmp(host, "::*") == 0 || strcmp(host, "::") == 0)
            host = "::1";
        if (strchr(host, ':') != NULL)
            n = snprintf(buf, len, "%s[%s]:%d", tls ? "tls://" : "", host,
                         port);
        else
            n = snprintf(buf, len, "%s%s:%d", tls ? "tls://" : "", host, port);
    } else {
        return -EINVAL;
    }
    return n < 0 || (size_t)n >= len ? -ENAMETOOLONG : 0;
}

/* Where a running server leaves the address it listens on, in its working
 * directory ("dir"): `cuckood [config] --ping` reads it, so that directives
 * given only to the server (docker run IMAGE --port 7000) reach the probe. */
#define PROBE_FILE "cuckood.addr"

void probe_file_write(const cfg_t *c, char *target, size_t len)
{
    char cwd[1024];
    if (getcwd(cwd, sizeof(cwd)) == NULL ||
        probe_target(c, cwd, target, len) < 0) {
        target[0] = '\0';
        return;
    }
    FILE *fp = fopen(PROBE_FILE ".tmp", "w");
    if (fp == NULL || fprintf(fp, "%s\n", target) < 0 || fclose(fp) != 0 ||
        rename(PROBE_FILE ".tmp", PROBE_FILE) < 0) {
        log_warning("Failed to write %s for --ping: %s", PROBE_FILE,
                    strerror(errno));
        target[0] = '\0';
    }
}

/* Removes the probe file if it still names this server's address. */
void probe_file_remove(const char *target)
{
    char line[1100] = "";
    FILE *fp = fopen(PROBE_FILE, "r");
    if (fp == NULL)
        return;
    if (fgets(line, sizeof(line), fp) == NULL)
        line[0] = '\0';
    fclose(fp);
    line[strcspn(line, "\r\n")] = '\0';
    if (target[0] != '\0' && strcmp(line, target) == 0)
        unlink(PROBE_FILE);
}

/* cuckood [config] [--directive value...] --ping [host:port | /socket]:
 * an explicit address wins; otherwise the one a server running in the
 * configuration's dir left in PROBE_FILE, else the configuration's own. The
 * configuration's requirepass is sent with AUTH. */
int probe_main(int argc, char **argv, int at)
{
    const char *explicit = NULL;
    char **rest = malloc(((size_t)argc + 1) * sizeof(*rest));
    int nrest = 0;
    if (rest == NULL) {
        fprintf(stderr, "cuckood --ping: out of memory\n");
        return 1;
    }
    for (int i = 0; i < argc; i++) {
        if (i == at)
            continue;
        if (i == at + 1 && strncmp(argv[i], "--", 2) != 0) {
            explicit = argv[i];
            continue;
        }
        rest[nrest++] = argv[i];
    }
    rest[nrest] = NULL;
    cfg_t cfg;
    char err[512] = "", target[1100] = "";
    if (cfg_init(&cfg) < 0) {
        free(rest);
        fprintf(stderr, "cuckood --ping: out of memory\n");
        return 1;
    }
    int rc = cfg_load_args(&cfg, nrest, rest, err, sizeof(err));
    free(rest);
    if (rc < 0) {
        fprintf(stderr, "cuckood --ping: %s\n", err);
        cfg_free(&cfg);
        return 1;
    }
    const char *dir = cfg.dir != NULL && cfg.dir[0] != '\0' ? cfg.dir : ".";
    if (explicit != NULL) {
        snprintf(target, sizeof(target), "%s", explicit);
    } else {
        char path[1100];
        FILE *fp = NULL;
        if (snprintf(path, sizeof(path), "%s/%s", dir, PROBE_FILE) <
            (int)sizeof(path))
            fp = fopen(path, "r");
        if (fp != NULL) {
            if (fgets(target, sizeof(target), fp) == NULL)
                target[0] = '\0';
            fclose(fp);
            target[strcspn(target, "\r\n")] = '\0';
        }
        if (target[0] == '\0' &&
            probe_target(&cfg, dir, target, sizeof(target)) < 0) {
            fprintf(stderr, "cuckood --ping: the configuration listens on "
                            "no port and no Unix socket\n");
            cfg_free(&cfg);
            return 1;
        }
    }
    rc = probe(target, &cfg);
    cfg_free(&cfg);
    return rc;
}
