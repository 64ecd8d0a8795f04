/*
 * tls.c - see tls.h.
 *
 * Each session talks to OpenSSL through one BIO of our own: its read side
 * hands out the ciphertext the connection just read (no copy into a memory
 * BIO first), its write side appends records to the session's output
 * buffer. The read side says "retry" once that input is used up, which is
 * how a handshake step or SSL_read learns to wait for the next socket read;
 * the write side always takes everything, so OpenSSL never waits to write.
 */
#include "tls.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include <openssl/err.h>
#include <openssl/ssl.h>
#include <openssl/x509.h>

#include "log.h"

/* Plaintext taken from OpenSSL per call: one TLS record at most. */
#define TLS_PLAIN_CHUNK 16384
#define TLS_SESSION_ID "cuckood"

struct tls {
    SSL_CTX *ctx; /* for new sessions; old ones hold their own reference */
    BIO_METHOD *bio_method;
    uint64_t connected; /* sessions open */
    uint64_t received;  /* sessions accepted */
    uint64_t failures;  /* handshakes that failed or timed out */
};

struct tls_conn {
    tls_t *t;
    SSL *ssl;
    const char *addr;
    const char *in; /* ciphertext not yet given to OpenSSL */
    size_t in_len;
    resp_out_t out; /* ciphertext for the socket */
    bool ready;     /* handshake finished */
    bool failed;    /* counted and logged once */
};

struct tls_client {
    SSL_CTX *ctx;
    SSL *ssl;
};

/* ---- errors ---------------------------------------------------------- */

/* The oldest error OpenSSL queued (the cause, not its consequences), or
 * fallback; empties the queue. */
static const char *ssl_reason(char *buf, size_t len, const char *fallback)
{
    unsigned long e = ERR_get_error();
    if (e == 0) {
        snprintf(buf, len, "%s", fallback);
    } else {
        const char *r = ERR_reason_error_string(e);
        if (r != NULL)
            snprintf(buf, len, "%s", r);
        else
            ERR_error_string_n(e, buf, len);
    }
    ERR_clear_error();
    return buf;
}

/* Empties the error queue before a call whose failure SSL_get_error() must
 * read. The queue is almost always empty already (every failure here
 * empties it), and ERR_clear_error() walks all its slots, so it is only
 * called when something is queued. */
static void err_clear_if_any(void)
{
    if (ERR_peek_error() != 0)
        ERR_clear_error();
}

/* 0 when path can be opened for reading, else -errno with err set. */
static int check_readable(const char *directive, const char *path, bool is_dir,
                          char *err, size_t errlen)
{
    int rc = 0;
    if (is_dir) {
        DIR *d = opendir(path);
        if (d == NULL)
            rc = -errno;
        else
            closedir(d);
    } else {
        FILE *f = fopen(path, "r");
        if (f == NULL)
            rc = -errno;
        else
            fclose(f);
    }
    if (rc < 0)
        snprintf(err, errlen, "%s %s: %s", directive, path, strerror(-rc));
    return rc;
}

/* ---- context ----------------------------------------------------------- */

static int pass_cb(char *buf, int size, int rwflag, void *u)
{
    const char *pass = u;
    if (pass == NULL || size <= 0)
        return 0;
    size_t n = strlen(pass);
    if (n > (size_t)size)
        n = (size_t)size;
    memcpy(buf, pass, n);
    return (int)n;
}

/* Parses tls-protocols ("TLSv1.2 TLSv1.3", any order and case) into the
 * versions to switch off. -EINVAL for an unknown or empty list. */
static int parse_protocols(const char *s, long *no_opts, int *min, int *max)
{
    static const struct {
        const char *name;
        int version;
        long no_opt;
    } known[] = {{"TLSv1", TLS1_VERSION, SSL_OP_NO_TLSv1},
                 {"TLSv1.1", TLS1_1_VERSION, SSL_OP_NO_TLSv1_1},
                 {"TLSv1.2", TLS1_2_VERSION, SSL_OP_NO_TLSv1_2},
                 {"TLSv1.3", TLS1_3_VERSION, SSL_OP_NO_TLSv1_3}};
    const size_t nknown = sizeof(known) / sizeof(known[0]);
    bool on[4] = {false, false, false, false};
    bool any = false;
    if (s == NULL || s[0] == '\0')
        s = "TLSv1.2 TLSv1.3";
    while (*s != '\0') {
        while (*s == ' ' || *s == '\t')
            s++;
        size_t n = strcspn(s, " \t");
        if (n == 0)
            break;
        size_t i;
        for (i = 0; i < nknown; i++)
            if (strlen(known[i].name) == n &&
                strncasecmp(known[i].name, s, n) == 0)
                break;
        if (i == nknown)
            return -EINVAL;
        on[i] = any = true;
        s += n;
    }
    if (!any)
        return -EINVAL;
    *no_opts = 0;
    *min = *max = 0;
    for (size_t i = 0; i < nknown; i++) {
        if (!on[i]) {
            *no_opts |= known[i].no_opt;
            continue;
        }
        if (*min == 0)
            *min = known[i].version;
        *max = known[i].version;
    }
    return 0;
}

/* Certificate, key (with its pass phrase) into ctx; err names the file. */
static int load_identity(SSL_CTX *ctx, const cfg_t *cfg, char *err,
                         size_t errlen)
{
    char why[256];
    int rc;
    if ((rc = check_readable("tls-cert-file", cfg->tls_cert_file, false, err,
                             errlen)) < 0 ||
        (rc = check_readable("tls-key-file", cfg->tls_key_file, false, err,
                             errlen)) < 0)
        return rc;
    SSL_CTX_set_default_passwd_cb(ctx, pass_cb);
    SSL_CTX_set_default_passwd_cb_userdata(ctx, cfg->tls_key_file_pass);
    rc = 0;
    if (SSL_CTX_use_certificate_chain_file(ctx, cfg->tls_cert_file) != 1) {
        snprintf(err, errlen, "tls-cert-file %s: %s", cfg->tls_cert_file,
                 ssl_reason(why, sizeof(why), "cannot load the certificate"));
        rc = -EINVAL;
    } else if (SSL_CTX_use_PrivateKey_file(ctx, cfg->tls_key_file,
                                           SSL_FILETYPE_PEM) != 1) {
        unsigned long e = ERR_peek_error();
        if (ERR_GET_LIB(e) == ERR_LIB_X509 &&
            ERR_GET_REASON(e) == X509_R_KEY_VALUES_MISMATCH)
            snprintf(err, errlen,
                     "tls-key-file %s does not match tls-cert-file %s",
                     cfg->tls_key_file, cfg->tls_cert_file);
        else
            snprintf(
                err, errlen, "tls-key-file %s: %s", cfg->tls_key_file,
                ssl_reason(why, sizeof(why), "cannot load the private key"));
        ERR_clear_error();
        rc = -EINVAL;
    } else if (SSL_CTX_check_private_key(ctx) != 1) {
        snprintf(err, errlen, "tls-key-file %s does not match tls-cert-file %s",
                 cfg->tls_key_file, cfg->tls_cert_file);
        ERR_clear_error();
        rc = -EINVAL;
    }
    /* The pass phrase is cfg's; later reloads set it again. */
    SSL_CTX_set_default_passwd_cb_userdata(ctx, NULL);
    return rc;
}

static int load_cas(SSL_CTX *ctx, const cfg_t *cfg, char *err, size_t errlen)
{
    const char *file = cfg->tls_ca_cert_file, *dir = cfg->tls_ca_cert_dir;
    char why[256];
    int rc;
    if (file == NULL && dir == NULL)
        return 0;
    if ((file != NULL && (rc = check_readable("tls-ca-cert-file", file, false,
                                              err, errlen)) < 0) ||
        (dir != NULL &&
         (rc = check_readable("tls-ca-cert-dir", dir, true, err, errlen)) < 0))
        return rc;
    if (SSL_CTX_load_verify_locations(ctx, file, dir) != 1) {
        snprintf(err, errlen, "%s %s: %s",
                 file != NULL ? "tls-ca-cert-file" : "tls-ca-cert-dir",
                 file != NULL ? file : dir,
                 ssl_reason(why, sizeof(why), "cannot load the CA"));
        return -EINVAL;
    }
    return 0;
}

static int build_ctx(const cfg_t *cfg, SSL_CTX **out, char *err, size_t errlen)
{
    long no_opts;
    int min, max, rc;
    if (cfg->tls_cert_file == NULL) {
        snprintf(err, errlen, "tls-port is set but tls-cert-file is not");
        return -EINVAL;
    }
    if (cfg->tls_key_file == NULL) {
        snprintf(err, errlen, "tls-port is set but tls-key-file is not");
        return -EINVAL;
    }
    if (cfg->tls_auth_clients != CFG_TLS_AUTH_NO &&
        cfg->tls_ca_cert_file == NULL && cfg->tls_ca_cert_dir == NULL) {
        snprintf(err, errlen,
                 "Either tls-ca-cert-file or tls-ca-cert-dir must be "
                 "specified when tls-auth-clients is enabled");
        return -EINVAL;
    }
    if (parse_protocols(cfg->tls_protocols, &no_opts, &min, &max) < 0) {
        snprintf(err, errlen,
                 "tls-protocols '%s': expected words among "
                 "TLSv1 TLSv1.1 TLSv1.2 TLSv1.3",
                 cfg->tls_protocols != NULL ? cfg->tls_protocols : "");
        return -EINVAL;
    }
    ERR_clear_error();
    SSL_CTX *ctx = SSL_CTX_new(TLS_server_method());
    if (ctx == NULL) {
        snprintf(err, errlen, "cannot create a TLS context");
        return -ENOMEM;
    }
    /* No renegotiation: a write then never has to wait for a read. */
    SSL_CTX_set_options(ctx, SSL_OP_NO_COMPRESSION | SSL_OP_NO_RENEGOTIATION |
                                 no_opts);
    if (cfg->tls_prefer_server_ciphers)
        SSL_CTX_set_options(ctx, SSL_OP_CIPHER_SERVER_PREFERENCE);
    SSL_CTX_set_min_proto_version(ctx, min);
    SSL_CTX_set_max_proto_version(ctx, max);
    if (cfg->tls_session_caching) {
        SSL_CTX_set_session_cache_mode(ctx, SSL_SESS_CACHE_SERVER);
        SSL_CTX_sess_set_cache_size(ctx, cfg->tls_session_cache_size);
        SSL_CTX_set_timeout(ctx, (long)cfg->tls_session_cache_timeout);
        SSL_CTX_set_session_id_context(ctx,
                                       (const unsigned char *)TLS_SESSION_ID,
                                       sizeof(TLS_SESSION_ID) - 1);
    } else {
        SSL_CTX_set_session_cache_mode(ctx, SSL_SESS_CACHE_OFF);
        SSL_CTX_set_options(ctx, SSL_OP_NO_TICKET);
        SSL_CTX_set_num_tickets(ctx, 0);
    }
    char why[256];
    rc = load_identity(ctx, cfg, err, errlen);
    if (rc == 0)
        rc = load_cas(ctx, cfg, err, errlen);
    if (rc == 0 && cfg->tls_ciphers != NULL &&
        SSL_CTX_set_cipher_list(ctx, cfg->tls_ciphers) != 1) {
        snprintf(err, errlen, "tls-ciphers '%s': %s", cfg->tls_ciphers,
                 ssl_reason(why, sizeof(why), "no usable cipher"));
        rc = -EINVAL;
    }
    if (rc == 0 && cfg->tls_ciphersuites != NULL &&
        SSL_CTX_set_ciphersuites(ctx, cfg->tls_ciphersuites) != 1) {
        snprintf(err, errlen, "tls-ciphersuites '%s': %s",
                 cfg->tls_ciphersuites,
                 ssl_reason(why, sizeof(why), "no usable ciphersuite"));
        rc = -EINVAL;
    }
    if (rc < 0) {
        SSL_CTX_free(ctx);
        return rc;
    }
    switch (cfg->tls_auth_clients) {
    case CFG_TLS_AUTH_NO:
        SSL_CTX_set_verify(ctx, SSL_VERIFY_NONE, NULL);
        break;
    case CFG_TLS_AUTH_OPTIONAL:
        SSL_CTX_set_verify(ctx, SSL_VERIFY_PEER, NULL);
        break;
    default:
        SSL_CTX_set_verify(
            ctx, SSL_VERIFY_PEER | SSL_VERIFY_FAIL_IF_NO_PEER_CERT, NULL);
        break;
    }
    *out = ctx;
    return 0;
}

/* ---- the BIO between OpenSSL and the connection ------------------------ */

static int bio_write_ex(BIO *b, const char *data, size_t len, size_t *written)
{
    tls_conn_t *tc = BIO_get_data(b);
    BIO_clear_retry_flags(b);
    resp_add_raw(&tc->out, data, len);
    if (resp_out_failed(&tc->out))
        return 0;
    *written = len;
    return 1;
}

static int bio_read_ex(BIO *b, char *data, size_t len, size_t *readbytes)
{
    tls_conn_t *tc = BIO_get_data(b);
    BIO_clear_retry_flags(b);
    if (tc->in_len == 0) {
        BIO_set_retry_read(b); /* not the end: wait for the socket */
        *readbytes = 0;
        return 0;
    }
    size_t n = len < tc->in_len ? len : tc->in_len;
    memcpy(data, tc->in, n);
    tc->in += n;
    tc->in_len -= n;
    *readbytes = n;
    return 1;
}

static long bio_ctrl(BIO *b, int cmd, long num, void *ptr)
{
    tls_conn_t *tc = BIO_get_data(b);
    switch (cmd) {
    case BIO_CTRL_FLUSH:
        return 1; /* the connection writes after every batch */
    case BIO_CTRL_PENDING:
        return tc != NULL ? (long)tc->in_len : 0;
    default:
        return 0;
    }
}

static int bio_create(BIO *b)
{
    BIO_set_init(b, 1);
    return 1;
}

/* ---- the server's state ------------------------------------------------ */

int tls_new(const cfg_t *cfg, tls_t **out, char *err, size_t errlen)
{
    tls_t *t = calloc(1, sizeof(*t));
    if (t == NULL) {
        snprintf(err, errlen, "out of memory");
        return -ENOMEM;
    }
    t->bio_method = BIO_meth_new(BIO_get_new_index() | BIO_TYPE_SOURCE_SINK,
                                 "cuckood connection");
    if (t->bio_method == NULL ||
        BIO_meth_set_write_ex(t->bio_method, bio_write_ex) != 1 ||
        BIO_meth_set_read_ex(t->bio_method, bio_read_ex) != 1 ||
        BIO_meth_set_ctrl(t->bio_method, bio_ctrl) != 1 ||
        BIO_meth_set_create(t->bio_method, bio_create) != 1) {
        tls_free(t);
        snprintf(err, errlen, "cannot set up OpenSSL");
        return -ENOMEM;
    }
    int rc = build_ctx(cfg, &t->ctx, err, errlen);
    if (rc < 0) {
        tls_free(t);
        return rc;
    }
    *out = t;
    return 0;
}

int tls_reload(tls_t *t, const cfg_t *cfg, char *err, size_t errlen)
{
    SSL_CTX *ctx;
    int rc = build_ctx(cfg, &ctx, err, errlen);
    if (rc < 0)
        return rc;
    SSL_CTX_free(t->ctx); /* open sessions keep a reference */
    t->ctx = ctx;
    return 0;
}

void tls_free(tls_t *t)
{
    if (t == NULL)
        return;
    SSL_CTX_free(t->ctx);
    if (t->bio_method != NULL)
        BIO_meth_free(t->bio_method);
    free(t);
}

void tls_info(const tls_t *t, sbuf_t *b)
{
    uint64_t zero = 0;
    sb_printf(b,
              "tls_connected_clients:%" PRIu64 "\r\n"
              "tls_connections_received:%" PRIu64 "\r\n"
              "tls_handshake_failures:%" PRIu64 "\r\n",
              t != NULL ? t->connected : zero, t != NULL ? t->received : zero,
              t != NULL ? t->failures : zero);
}

bool tls_looks_like_hello(const void *data, size_t len)
{
    const unsigned char *p = data;
    /* A handshake record (22) of a TLS 1.x / SSL 3 client (major 3). */
    return len >= 1 && p[0] == 0x16 && (len < 2 || p[1] == 0x03);
}

/* ---- sessions ---------------------------------------------------------- */

tls_conn_t *tls_conn_new(tls_t *t, const char *addr)
{
    tls_conn_t *tc = calloc(1, sizeof(*tc));
    if (tc == NULL)
        return NULL;
    tc->t = t;
    tc->addr = addr;
    resp_out_init(&tc->out, 2);
    tc->ssl = SSL_new(t->ctx);
    BIO *b = BIO_new(t->bio_method);
    if (tc->ssl == NULL || b == NULL) {
        BIO_free(b);
        SSL_free(tc->ssl);
        free(tc);
        ERR_clear_error();
        return NULL;
    }
    BIO_set_data(b, tc);
    SSL_set_bio(tc->ssl, b, b); /* the SSL owns b */
    /* OpenSSL takes all the input a read brought in one BIO call rather
     * than a record header and then its body. */
    SSL_set_read_ahead(tc->ssl, 1);
    SSL_set_accept_state(tc->ssl);
    t->received++;
    t->connected++;
    return tc;
}

void tls_conn_free(tls_conn_t *tc)
{
    if (tc == NULL)
        return;
    /* SSL_free sends nothing: no SSL_shutdown, so nothing is written. */
    SSL_free(tc->ssl);
    resp_out_release(&tc->out);
    tc->t->connected--;
    free(tc);
}

/* Counts and logs a failed session once. */
static void conn_failed(tls_conn_t *tc, const char *why)
{
    if (tc->failed)
        return;
    tc->failed = true;
    if (!tc->ready) {
        tc->t->failures++;
        log_verbose("Error accepting a client connection: %s (addr=%s)", why,
                    tc->addr);
    } else {
        log_verbose("TLS error on client %s: %s", tc->addr, why);
    }
}

/* After a failed call: the reason, with the certificate check's verdict
 * when that is what failed. */
static void conn_failed_ssl(tls_conn_t *tc, int ret)
{
    char why[256], full[512];
    int e = SSL_get_error(tc->ssl, ret);
    ssl_reason(why, sizeof(why),
               e == SSL_ERROR_SYSCALL ? "unexpected end of input"
                                      : "TLS protocol error");
    long vr = SSL_get_verify_result(tc->ssl);
    if (vr != X509_V_OK) {
        snprintf(full, sizeof(full), "%s: client certificate: %s", why,
                 X509_verify_cert_error_string(vr));
        conn_failed(tc, full);
    } else {
        conn_failed(tc, why);
    }
}

int tls_conn_input(tls_conn_t *tc, const char *in, size_t len,
                   tls_sink_fn *sink, void *ctx)
{
    if (tc->failed)
        return -EPROTO;
    tc->in = in;
    tc->in_len = len;
    int rc = 0;
    err_clear_if_any();
    if (!tc->ready) {
        int r = SSL_do_handshake(tc->ssl);
        if (r == 1) {
            tc->ready = true;
            log_debug("TLS handshake with %s done: %s, %s", tc->addr,
                      SSL_get_version(tc->ssl), SSL_get_cipher_name(tc->ssl));
        } else if (SSL_get_error(tc->ssl, r) != SSL_ERROR_WANT_READ) {
            conn_failed_ssl(tc, r);
            rc = -EPROTO;
        }
    }
    /* Once the input is used up and OpenSSL holds none of it, another
     * SSL_read_ex could only say "want read": the loop ends without it. */
    while (rc == 0 && tc->ready &&
           (tc->in_len > 0 || SSL_has_pending(tc->ssl))) {
        char plain[TLS_PLAIN_CHUNK];
        size_t n;
        int r = SSL_read_ex(tc->ssl, plain, sizeof(plain), &n);
        if (r == 1) {
            rc = sink(ctx, plain, n);
            continue;
        }
        int e = SSL_get_error(tc->ssl, r);
        if (e == SSL_ERROR_WANT_READ)
            break; /* all input used: wait for the socket */
        if (e == SSL_ERROR_ZERO_RETURN) {
            rc = 1;
        } else {
            conn_failed_ssl(tc, r);
            rc = -EPROTO;
        }
    }
    tc->in = NULL;
    tc->in_len = 0;
    if (rc == 0 && resp_out_failed(&tc->out))
        rc = -ENOMEM;
    return rc;
}

int tls_conn_encrypt(tls_conn_t *tc, resp_out_t *plain)
{
    if (plain->len == 0 || !tc->ready)
        return 0;
    if (tc->failed)
        return -EPROTO;
    size_t written = 0;
    err_clear_if_any();
    /* Partial writes are off and the BIO takes everything: all or error. */
    int r = SSL_write_ex(tc->ssl, plain->buf, plain->len, &written);
    if (r != 1) {
        if (resp_out_failed(&tc->out))
            return -ENOMEM;
        conn_failed_ssl(tc, r);
        return -EPROTO;
    }
    resp_out_consume(plain, written);
    return resp_out_failed(&tc->out) ? -ENOMEM : 0;
}

resp_out_t *tls_conn_out(tls_conn_t *tc)
{
    return &tc->out;
}

bool tls_conn_ready(const tls_conn_t *tc)
{
    return tc->ready;
}

void tls_conn_timed_out(tls_conn_t *tc)
{
    conn_failed(tc, "TLS handshake timed out");
}

/* ---- the probe's client ------------------------------------------------ */

int tls_client_open(int fd, const cfg_t *cfg, int timeout_ms,
                    tls_client_t **out, char *err, size_t errlen)
{
    char why[256];
    int flags = fcntl(fd, F_GETFL);
    struct timeval tv = {timeout_ms / 1000, (timeout_ms % 1000) * 1000};
    if (flags < 0 || fcntl(fd, F_SETFL, flags & ~O_NONBLOCK) < 0 ||
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv)) < 0 ||
        setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv)) < 0) {
        snprintf(err, errlen, "socket options: %s", strerror(errno));
        return -errno;
    }
    tls_client_t *tc = calloc(1, sizeof(*tc));
    if (tc == NULL || (tc->ctx = SSL_CTX_new(TLS_client_method())) == NULL) {
        free(tc);
        snprintf(err, errlen, "out of memory");
        return -ENOMEM;
    }
    int rc = 0;
    if (cfg->tls_ca_cert_file != NULL || cfg->tls_ca_cert_dir != NULL) {
        rc = load_cas(tc->ctx, cfg, err, errlen);
        SSL_CTX_set_verify(tc->ctx, SSL_VERIFY_PEER, NULL);
    }
    if (rc == 0 && cfg->tls_cert_file != NULL && cfg->tls_key_file != NULL)
        rc = load_identity(tc->ctx, cfg, err, errlen);
    if (rc == 0 && (tc->ssl = SSL_new(tc->ctx)) == NULL) {
        snprintf(err, errlen, "out of memory");
        rc = -ENOMEM;
    }
    if (rc == 0 &&
        (SSL_set_fd(tc->ssl, fd) != 1 || SSL_connect(tc->ssl) != 1)) {
        long vr = SSL_get_verify_result(tc->ssl);
        snprintf(err, errlen, "TLS handshake: %s%s%s",
                 ssl_reason(why, sizeof(why), "failed"),
                 vr != X509_V_OK ? ": server certificate: " : "",
                 vr != X509_V_OK ? X509_verify_cert_error_string(vr) : "");
        rc = -EPROTO;
    }
    if (rc < 0) {
        tls_client_close(tc);
        return rc;
    }
    *out = tc;
    return 0;
}

ssize_t tls_client_send(tls_client_t *tc, const void *buf, size_t len)
{
    size_t n = 0;
    return SSL_write_ex(tc->ssl, buf, len, &n) == 1 ? (ssize_t)n : -1;
}

ssize_t tls_client_recv(tls_client_t *tc, void *buf, size_t len)
{
    size_t n = 0;
    int r = SSL_read_ex(tc->ssl, buf, len, &n);
    if (r == 1)
        return (ssize_t)n;
    return SSL_get_error(tc->ssl, r) == SSL_ERROR_ZERO_RETURN ? 0 : -1;
}

void tls_client_close(tls_client_t *tc)
{
    if (tc == NULL)
        return;
    SSL_free(tc->ssl);
    SSL_CTX_free(tc->ctx);
    free(tc);
}
