/*
 * bench_tls_path - the server's TLS work per request, without the network.
 *
 *   bench_tls_path CERTDIR [batches] [depth] [sessions]
 *                                   (default 20000 batches of 32, 50 sessions)
 *
 * CERTDIR holds ca.crt, server.crt/.key and client.crt/.key (as
 * tests/support/tls_certs.py makes them). A client session (OpenSSL over
 * memory BIOs, client certificate, the library's default TLS version and
 * cipher) finishes a handshake with a server session of the daemon's TLS
 * module; then every batch of `depth` "CF.EXISTS bench <12 digits>"
 * requests is encrypted by the client in one record, as redis-benchmark
 * sends a pipeline; the batches go round the sessions, as 50 clients of
 * redis-benchmark do, so that every session's buffers come and go from the
 * caches as in the server. Timed, on the thread's CPU clock: the server
 * side only,
 * i.e. tls_conn_input() of each batch's ciphertext (its plaintext copied
 * out as the parser would) and tls_conn_encrypt() of `depth` ":1" replies,
 * whose records are then dropped. Prints the best of several repetitions in
 * ns per batch and per request, since the machine may be shared.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <openssl/err.h>
#include <openssl/ssl.h>

#include "config.h"
#include "resp_out.h"
#include "tls.h"

#define REPS 5

static double now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return ts.tv_sec * 1e9 + ts.tv_nsec;
}

static void die(const char *what)
{
    fprintf(stderr, "bench_tls_path: %s\n", what);
    ERR_print_errors_fp(stderr);
    exit(1);
}

/* Plaintext the server session hands out, copied as the parser would. */
static char sink_buf[1 << 16];
static size_t sink_total;

static int sink(void *ctx, const char *plain, size_t len)
{
    (void)ctx;
    memcpy(sink_buf, plain, len < sizeof(sink_buf) ? len : sizeof(sink_buf));
    sink_total += len;
    return 0;
}

/* Moves what the client wrote into its memory BIO to the server, and what
 * the server wrote back to the client. */
static void shuttle(BIO *to_srv, BIO *to_cli, tls_conn_t *srv)
{
    char buf[16384];
    int n;
    while ((n = BIO_read(to_srv, buf, sizeof(buf))) > 0)
        if (tls_conn_input(srv, buf, (size_t)n, sink, NULL) < 0)
            die("server refused the handshake");
    resp_out_t *o = tls_conn_out(srv);
    if (o->len > 0) {
        BIO_write(to_cli, o->buf, (int)o->len);
        resp_out_consume(o, o->len);
    }
}

static char *path(const char *dir, const char *file)
{
    size_t n = strlen(dir) + strlen(file) + 2;
    char *p = malloc(n);
    if (p == NULL)
        die("out of memory");
    snprintf(p, n, "%s/%s", dir, file);
    return p;
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: bench_tls_path CERTDIR [batches] [depth]\n");
        return 2;
    }
    const char *dir = argv[1];
    size_t batches = argc > 2 ? strtoul(argv[2], NULL, 10) : 20000;
    size_t depth = argc > 3 ? strtoul(argv[3], NULL, 10) : 32;
    size_t nsess = argc > 4 ? strtoul(argv[4], NULL, 10) : 50;
    if (batches == 0 || depth == 0 || nsess == 0)
        die("batches, depth and sessions must be positive");

    cfg_t cfg;
    char err[512];
    if (cfg_init(&cfg) < 0)
        die("cfg_init");
    cfg.tls_cert_file = path(dir, "server.crt");
    cfg.tls_key_file = path(dir, "server.key");
    cfg.tls_ca_cert_file = path(dir, "ca.crt");
    tls_t *t;
    if (tls_new(&cfg, &t, err, sizeof(err)) < 0)
        die(err);

    SSL_CTX *cctx = SSL_CTX_new(TLS_client_method());
    char *ca = path(dir, "ca.crt"), *cc = path(dir, "client.crt"),
         *ck = path(dir, "client.key");
    if (cctx == NULL || SSL_CTX_load_verify_locations(cctx, ca, NULL) != 1 ||
        SSL_CTX_use_certificate_chain_file(cctx, cc) != 1 ||
        SSL_CTX_use_PrivateKey_file(cctx, ck, SSL_FILETYPE_PEM) != 1)
        die("client context");
    SSL **clis = calloc(nsess, sizeof(*clis));
    BIO **to_srvs = calloc(nsess, sizeof(*to_srvs));
    tls_conn_t **srvs = calloc(nsess, sizeof(*srvs));
    if (clis == NULL || to_srvs == NULL || srvs == NULL)
        die("out of memory");
    for (size_t k = 0; k < nsess; k++) {
        SSL *cli = clis[k] = SSL_new(cctx);
        BIO *to_srv = to_srvs[k] = BIO_new(BIO_s_mem()),
            *to_cli = BIO_new(BIO_s_mem());
        if (cli == NULL || to_srv == NULL || to_cli == NULL)
            die("client session");
        SSL_set_bio(cli, to_cli, to_srv);
        SSL_set_connect_state(cli);

        tls_conn_t *srv = srvs[k] = tls_conn_new(t, "bench");
        if (srv == NULL)
            die("server session");
        for (int i = 0;
             i < 100 && !(SSL_is_init_finished(cli) && tls_conn_ready(srv));
             i++) {
            (void)SSL_do_handshake(cli);
            shuttle(to_srv, to_cli, srv);
        }
        if (!tls_conn_ready(srv) || !SSL_is_init_finished(cli))
            die("no handshake");
        /* The client takes the session tickets. */
        char junk[256];
        size_t got;
        (void)SSL_read_ex(cli, junk, sizeof(junk), &got);
        ERR_clear_error();
    }

    /* Every batch's record, as the client sent it. */
    size_t reqlen = 0, bytes_plain = 0;
    char *plain = malloc(depth * 64);
    if (plain == NULL)
        die("out of memory");
    size_t *off = malloc((batches + 1) * sizeof(*off));
    size_t cap = batches * (depth * 64 + 256), used = 0;
    char *wire = malloc(cap);
    if (off == NULL || wire == NULL)
        die("out of memory");
    for (size_t b = 0; b < batches; b++) {
        reqlen = 0;
        for (size_t i = 0; i < depth; i++)
            reqlen += (size_t)snprintf(
                plain + reqlen, 64,
                "*3\r\n$9\r\nCF.EXISTS\r\n$5\r\nbench\r\n$12\r\n%012zu\r\n",
                (b * depth + i) * 7919 % 100000000u);
        bytes_plain += reqlen;
        size_t w;
        if (SSL_write_ex(clis[b % nsess], plain, reqlen, &w) != 1)
            die("client write");
        off[b] = used;
        int n = BIO_read(to_srvs[b % nsess], wire + used, (int)(cap - used));
        if (n <= 0)
            die("no record");
        used += (size_t)n;
    }
    off[batches] = used;

    resp_out_t replies;
    resp_out_init(&replies, 2);
    double best = 0;
    size_t bytes_in = used;
    for (int rep = 0; rep < REPS; rep++) {
        /* A record can be decrypted once only (sequence numbers): the
         * repetitions take consecutive slices of the recorded stream. */
        size_t from = batches * (size_t)rep / REPS,
               to = batches * (size_t)(rep + 1) / REPS;
        double t0 = now_ns();
        for (size_t b = from; b < to; b++) {
            tls_conn_t *srv = srvs[b % nsess];
            if (tls_conn_input(srv, wire + off[b], off[b + 1] - off[b], sink,
                               NULL) != 0)
                die("server input");
            for (size_t i = 0; i < depth; i++)
                resp_add_raw(&replies, ":1\r\n", 4);
            if (tls_conn_encrypt(srv, &replies) != 0)
                die("server encrypt");
            resp_out_t *o = tls_conn_out(srv);
            resp_out_consume(o, o->len);
        }
        double ns = (now_ns() - t0) / (double)(to - from);
        if (rep == 0 || ns < best)
            best = ns;
    }
    if (sink_total != bytes_plain)
        die("the plaintext did not all come out");
    printf("TLS server path, %s, %zu sessions, %zu-request batches of "
           "%zu B (%zu B on the wire): %.0f ns per batch, %.1f ns per "
           "request\n",
           SSL_get_cipher_name(clis[0]), nsess, depth, reqlen,
           bytes_in / batches, best, best / (double)depth);
    resp_out_release(&replies);
    for (size_t k = 0; k < nsess; k++) {
        tls_conn_free(srvs[k]);
        SSL_free(clis[k]);
    }
    free(clis);
    free(to_srvs);
    free(srvs);
    SSL_CTX_free(cctx);
    tls_free(t);
    cfg_free(&cfg); /* and the paths set above */
    free(off);
    free(wire);
    free(plain);
    free(ca);
    free(cc);
    free(ck);
    return 0;
}
