/*
 * load_conn.c - the loader's connection (load_conn.h). Blocking I/O is
 * enough: the loader bounds what it has in flight (its window), so the
 * server's replies to it never back up far enough to stop the server
 * reading.
 */
#include "load_conn.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <openssl/err.h>
#include <openssl/ssl.h>
#include <openssl/x509v3.h>

struct load_conn {
    int fd;
    SSL_CTX *ctx;
    SSL *ssl;
    redisReader *reader;
    char err[256];
};

static void set_err(struct load_conn *c, const char *what)
{
    snprintf(c->err, sizeof(c->err), "%s", what);
}

static void ssl_err(char *err, size_t errlen, const char *what)
{
    unsigned long e = ERR_get_error();
    char buf[200] = "";
    if (e != 0)
        ERR_error_string_n(e, buf, sizeof(buf));
    snprintf(err, errlen, "%s%s%s", what, buf[0] ? ": " : "", buf);
    ERR_clear_error();
}

static int dial_unix(const char *path, char *err, size_t errlen)
{
    struct sockaddr_un sa;
    memset(&sa, 0, sizeof(sa));
    sa.sun_family = AF_UNIX;
    if (strlen(path) >= sizeof(sa.sun_path)) {
        snprintf(err, errlen, "socket path too long: %.100s", path);
        return -1;
    }
    strcpy(sa.sun_path, path);
    int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0 || connect(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0) {
        snprintf(err, errlen, "cannot connect to %.100s: %s", path,
                 strerror(errno));
        if (fd >= 0)
            close(fd);
        return -1;
    }
    return fd;
}

static int dial_tcp(const char *host, int port, char *err, size_t errlen)
{
    char ps[16];
    snprintf(ps, sizeof(ps), "%d", port);
    struct addrinfo hints, *res = NULL;
    memset(&hints, 0, sizeof(hints));
    hints.ai_socktype = SOCK_STREAM;
    int rc = getaddrinfo(host, ps, &hints, &res);
    if (rc != 0) {
        snprintf(err, errlen, "cannot resolve %.100s: %s", host,
                 gai_strerror(rc));
        return -1;
    }
    int fd = -1, e = 0;
    for (struct addrinfo *a = res; a != NULL; a = a->ai_next) {
        fd =
            socket(a->ai_family, a->ai_socktype | SOCK_CLOEXEC, a->ai_protocol);
        if (fd < 0) {
            e = errno;
            continue;
        }
        if (connect(fd, a->ai_addr, a->ai_addrlen) == 0)
            break;
        e = errno;
        close(fd);
        fd = -1;
    }
    freeaddrinfo(res);
    if (fd < 0) {
        snprintf(err, errlen, "cannot connect to %.100s:%d: %s", host, port,
                 strerror(e));
        return -1;
    }
    int one = 1;
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
    return fd;
}

static int start_tls(struct load_conn *c, const struct load_opts *o, char *err,
                     size_t errlen)
{
    c->ctx = SSL_CTX_new(TLS_client_method());
    if (c->ctx == NULL) {
        ssl_err(err, errlen, "TLS");
        return -1;
    }
    SSL_CTX_set_min_proto_version(c->ctx, TLS1_2_VERSION);
    if (!o->insecure) {
        SSL_CTX_set_verify(c->ctx, SSL_VERIFY_PEER, NULL);
        int ok =
            (o->cacert || o->cacertdir)
                ? SSL_CTX_load_verify_locations(c->ctx, o->cacert, o->cacertdir)
                : SSL_CTX_set_default_verify_paths(c->ctx);
        if (ok != 1) {
            ssl_err(err, errlen, "cannot load the CA certificates");
            return -1;
        }
    }
    if (o->cert != NULL) {
        if (SSL_CTX_use_certificate_chain_file(c->ctx, o->cert) != 1) {
            ssl_err(err, errlen, "cannot load --cert");
            return -1;
        }
        if (SSL_CTX_use_PrivateKey_file(c->ctx, o->key, SSL_FILETYPE_PEM) !=
            1) {
            ssl_err(err, errlen, "cannot load --key");
            return -1;
        }
    }
    c->ssl = SSL_new(c->ctx);
    if (c->ssl == NULL || SSL_set_fd(c->ssl, c->fd) != 1) {
        ssl_err(err, errlen, "TLS");
        return -1;
    }
    const char *name = o->sni != NULL ? o->sni : o->host;
    unsigned char ip[16];
    int is_ip =
        inet_pton(AF_INET, name, ip) == 1 || inet_pton(AF_INET6, name, ip) == 1;
    if (!is_ip)
        SSL_set_tlsext_host_name(c->ssl, name);
    if (!o->insecure) {
        X509_VERIFY_PARAM *vp = SSL_get0_param(c->ssl);
        int ok = is_ip ? X509_VERIFY_PARAM_set1_ip_asc(vp, name)
                       : X509_VERIFY_PARAM_set1_host(vp, name, 0);
        if (ok != 1) {
            ssl_err(err, errlen, "TLS host name");
            return -1;
        }
    }
    if (SSL_connect(c->ssl) != 1) {
        long v = SSL_get_verify_result(c->ssl);
        if (v != X509_V_OK) {
            snprintf(err, errlen, "TLS handshake: %s",
                     X509_verify_cert_error_string(v));
            ERR_clear_error();
        } else {
            ssl_err(err, errlen, "TLS handshake failed");
        }
        return -1;
    }
    return 0;
}

/* A command that must answer +OK (AUTH, SELECT). */
static int expect_ok(struct load_conn *c, int argc, const char **argv,
                     char *err, size_t errlen)
{
    redisReply *r = load_conn_command(c, argc, argv, NULL);
    if (r == NULL) {
        snprintf(err, errlen, "%s: %s", argv[0], c->err);
        return -1;
    }
    int ok = r->type == REDIS_REPLY_STATUS;
    if (!ok)
        snprintf(err, errlen, "%s: %.200s", argv[0],
                 r->type == REDIS_REPLY_ERROR ? r->str : "unexpected reply");
    freeReplyObject(r);
    return ok ? 0 : -1;
}

struct load_conn *load_conn_open(const struct load_opts *o, char *err,
                                 size_t errlen)
{
    struct load_conn *c = calloc(1, sizeof(*c));
    if (c == NULL) {
        snprintf(err, errlen, "out of memory");
        return NULL;
    }
    c->fd = o->socket ? dial_unix(o->socket, err, errlen)
                      : dial_tcp(o->host, o->port, err, errlen);
    c->reader = redisReaderCreate();
    if (c->fd < 0 || c->reader == NULL ||
        (o->tls && start_tls(c, o, err, errlen) < 0))
        goto fail;
    if (o->pass != NULL) {
        const char *user[] = {"AUTH", o->user, o->pass};
        const char *dflt[] = {"AUTH", o->pass};
        if (o->user != NULL ? expect_ok(c, 3, user, err, errlen)
                            : expect_ok(c, 2, dflt, err, errlen))
            goto fail;
    }
    if (o->db != 0) {
        char db[16];
        snprintf(db, sizeof(db), "%d", o->db);
        const char *sel[] = {"SELECT", db};
        if (expect_ok(c, 2, sel, err, errlen) < 0)
            goto fail;
    }
    return c;
fail:
    load_conn_close(c);
    return NULL;
}

void load_conn_close(struct load_conn *c)
{
    if (c == NULL)
        return;
    if (c->ssl != NULL)
        SSL_free(c->ssl);
    if (c->ctx != NULL)
        SSL_CTX_free(c->ctx);
    if (c->fd >= 0)
        close(c->fd);
    if (c->reader != NULL)
        redisReaderFree(c->reader);
    free(c);
}

const char *load_conn_error(const struct load_conn *c)
{
    return c->err;
}

int load_conn_write(struct load_conn *c, const void *buf, size_t len)
{
    const char *p = buf;
    while (len > 0) {
        ssize_t n;
        if (c->ssl != NULL) {
            size_t w = 0;
            if (SSL_write_ex(c->ssl, p, len, &w) != 1) {
                ssl_err(c->err, sizeof(c->err), "connection lost (TLS)");
                return -1;
            }
            n = (ssize_t)w;
        } else {
            n = send(c->fd, p, len, MSG_NOSIGNAL);
            if (n < 0 && errno == EINTR)
                continue;
            if (n < 0) {
                snprintf(c->err, sizeof(c->err), "connection lost: %s",
                         strerror(errno));
                return -1;
            }
        }
        p += n;
        len -= (size_t)n;
    }
    return 0;
}

redisReply *load_conn_reply(struct load_conn *c)
{
    for (;;) {
        void *r = NULL;
        if (redisReaderGetReply(c->reader, &r) != REDIS_OK) {
            snprintf(c->err, sizeof(c->err), "protocol error: %s",
                     c->reader->errstr);
            return NULL;
        }
        if (r != NULL)
            return r;
        char buf[64 * 1024];
        ssize_t n;
        if (c->ssl != NULL) {
            size_t got = 0;
            if (SSL_read_ex(c->ssl, buf, sizeof(buf), &got) != 1) {
                int e = SSL_get_error(c->ssl, 0);
                if (e == SSL_ERROR_ZERO_RETURN)
                    set_err(c, "connection closed by the server");
                else
                    ssl_err(c->err, sizeof(c->err), "connection lost (TLS)");
                return NULL;
            }
            n = (ssize_t)got;
        } else {
            n = recv(c->fd, buf, sizeof(buf), 0);
            if (n < 0 && errno == EINTR)
                continue;
            if (n < 0) {
                snprintf(c->err, sizeof(c->err), "connection lost: %s",
                         strerror(errno));
                return NULL;
            }
            if (n == 0) {
                set_err(c, "connection closed by the server");
                return NULL;
            }
        }
        if (redisReaderFeed(c->reader, buf, (size_t)n) != REDIS_OK) {
            set_err(c, "protocol error");
            return NULL;
        }
    }
}

redisReply *load_conn_command(struct load_conn *c, int argc, const char **argv,
                              const size_t *lens)
{
    size_t cap = 32;
    for (int i = 0; i < argc; i++)
        cap += 32 + (lens ? lens[i] : strlen(argv[i]));
    char *buf = malloc(cap);
    if (buf == NULL) {
        set_err(c, "out of memory");
        return NULL;
    }
    size_t n = (size_t)snprintf(buf, cap, "*%d\r\n", argc);
    for (int i = 0; i < argc; i++) {
        size_t l = lens ? lens[i] : strlen(argv[i]);
        n += (size_t)snprintf(buf + n, cap - n, "$%zu\r\n", l);
        memcpy(buf + n, argv[i], l);
        n += l;
        buf[n++] = '\r';
        buf[n++] = '\n';
    }
    int rc = load_conn_write(c, buf, n);
    free(buf);
    return rc < 0 ? NULL : load_conn_reply(c);
}
