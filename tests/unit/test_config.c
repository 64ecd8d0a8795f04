/*
 * test_config.c - directives from text, file and command line, their errors,
 * CONFIG GET and CONFIG SET, and conf/cuckood.conf against the defaults.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "config.h"
#include "config_load.h"

static char err[1024];

static int setup(void **state)
{
    cfg_t *c = malloc(sizeof(*c));
    if (c == NULL || cfg_init(c) != 0)
        return -1;
    err[0] = '\0';
    *state = c;
    return 0;
}

static int teardown(void **state)
{
    cfg_free(*state);
    free(*state);
    return 0;
}

/* Loads text as the server does a config file: written to t.conf in the
 * working directory, then named on the command line. */
static int load(cfg_t *c, const char *text)
{
    char *argv[] = {"cuckood", "t.conf", NULL};
    FILE *f = fopen("t.conf", "w");
    assert_non_null(f);
    assert_int_equal(fputs(text, f) >= 0 || text[0] == '\0', 1);
    assert_int_equal(fclose(f), 0);
    err[0] = '\0';
    int rc = cfg_load_args(c, 2, argv, err, sizeof(err));
    unlink("t.conf");
    return rc;
}

/* ---- CONFIG GET helpers ---- */

#define GOT_MAX 96 /* more than the directives */
typedef struct got {
    char names[GOT_MAX][64];
    char values[GOT_MAX][1024];
    int n;
} got_t;

static void collect(void *ctx, const char *name, const char *value)
{
    got_t *g = ctx;
    assert_true(g->n < GOT_MAX);
    snprintf(g->names[g->n], sizeof(g->names[0]), "%s", name);
    snprintf(g->values[g->n], sizeof(g->values[0]), "%s", value);
    g->n++;
}

/* The value of one directive as CONFIG GET prints it. */
static const char *get(const cfg_t *c, const char *name)
{
    static got_t g;
    memset(&g, 0, sizeof(g));
    cfg_get(c, name, collect, &g);
    assert_int_equal(g.n, 1);
    assert_string_equal(g.names[0], name);
    return g.values[0];
}

/* Everything CONFIG GET * shows, as one string, to compare whole states. */
static char *dump(const cfg_t *c)
{
    static got_t g;
    size_t cap = 1 << 16, len = 0;
    char *out = malloc(cap);
    assert_non_null(out);
    memset(&g, 0, sizeof(g));
    cfg_get(c, "*", collect, &g);
    out[0] = '\0';
    for (int i = 0; i < g.n; i++)
        len += (size_t)snprintf(out + len, cap - len, "%s=%s\n", g.names[i],
                                g.values[i]);
    return out;
}

/* ---- defaults ---- */

static void test_defaults(void **state)
{
    cfg_t *c = *state;

    assert_null(c->config_file);
    assert_int_equal(c->port, 6379);
    assert_int_equal(c->nbind, 1);
    assert_string_equal(c->bind[0], "127.0.0.1");
    assert_null(c->unixsocket);
    assert_int_equal(c->unixsocketperm, 0);
    assert_true(c->protected_mode);
    assert_int_equal(c->tcp_backlog, 511);
    assert_int_equal(c->tcp_keepalive, 300);
    assert_int_equal(c->timeout, 0);
    assert_null(c->requirepass);
    assert_int_equal(c->maxclients, 10000);
    assert_int_equal(c->maxmemory, 0);
    assert_int_equal(c->proto_max_bulk_len, 512ull << 20);
    assert_int_equal(c->client_query_buffer_limit, 1ull << 30);
    assert_int_equal(c->cobl_hard, 0);
    assert_int_equal(c->cobl_soft, 0);
    assert_int_equal(c->cobl_soft_seconds, 0);
    assert_int_equal(c->databases, 16);
    assert_string_equal(c->dir, ".");
    assert_string_equal(c->dbfilename, "dump.cuckoo");
    assert_int_equal(c->nsave, 3);
    assert_string_equal(get(c, "save"), "3600 1 300 100 60 10000");
    assert_true(c->stop_writes_on_bgsave_error);
    assert_int_equal(c->loglevel, CFG_LOG_NOTICE);
    assert_string_equal(c->logfile, "");
    assert_null(c->pidfile);
    assert_false(c->daemonize);
    assert_int_equal(c->cf.bucket_size, 4);
    assert_int_equal(c->cf.fp_bits, 12);
    assert_true(c->cf.error_rate == 0);
    assert_int_equal(c->cf.max_iterations, 500);
    assert_int_equal(c->cf.expansion, 1);
    assert_int_equal(c->cf.max_expansions, 32);
    assert_int_equal(c->cf.initial_size, 1024);
}

/* Redis's wildcard forms: "*" for every IPv4 interface, "::*" for every
 * IPv6 one, "-" for an address that may be missing. */
static void test_bind_wildcards(void **state)
{
    cfg_t *c = *state;

    assert_int_equal(load(c, "bind * -::* -127.0.0.1 -::1\n"), 0);
    assert_int_equal(c->nbind, 4);
    assert_string_equal(c->bind[0], "*");
    assert_string_equal(c->bind[1], "-::*");
    assert_string_equal(c->bind[2], "-127.0.0.1");
    assert_string_equal(c->bind[3], "-::1");
    assert_null(c->bind[4]);
}

/* ---- every directive lands in its field ---- */

static void test_every_directive(void **state)
{
    cfg_t *c = *state;
    const char *text = "# a comment\n"
                       "\n"
                       "   \t\n"
                       "port 7000\n"
                       "bind 0.0.0.0 :: 10.1.2.3\n"
                       "unixsocket /run/cuckood.sock\n"
                       "unixsocketperm 770\n"
                       "protected-mode no\n"
                       "tcp-backlog 128\n"
                       "tcp-keepalive 60\n"
                       "timeout 30\n"
                       "requirepass s3cret\n"
                       "maxclients 5\n"
                       "maxmemory 2mb\n"
                       "proto-max-bulk-len 2mb\n"
                       "client-query-buffer-limit 3mb\n"
                       "client-output-buffer-limit normal 1mb 512kb 10\n"
                       "databases 4\n"
                       "dir /var/lib/cuckood\n"
                       "dbfilename f.cuckoo\n"
                       "save 10 2\n"
                       "stop-writes-on-bgsave-error no\n"
                       "loglevel warning\n"
                       "logfile /var/log/cuckood.log\n"
                       "pidfile /run/cuckood.pid\n"
                       "daemonize yes\n"
                       "cf-bucket-size 2\n"
                       "cf-fingerprint-bits 16\n"
                       "cf-max-iterations 20\n"
                       "cf-expansion-factor 2\n"
                       "cf-max-expansions 8\n"
                       "cf-initial-size 100\n";

    assert_int_equal(load(c, text), 0);
    assert_int_equal(c->port, 7000);
    assert_int_equal(c->nbind, 3);
    assert_string_equal(c->bind[0], "0.0.0.0");
    assert_string_equal(c->bind[1], "::");
    assert_string_equal(c->bind[2], "10.1.2.3");
    assert_null(c->bind[3]);
    assert_string_equal(c->unixsocket, "/run/cuckood.sock");
    assert_int_equal(c->unixsocketperm, 0770);
    assert_false(c->protected_mode);
    assert_int_equal(c->tcp_backlog, 128);
    assert_int_equal(c->tcp_keepalive, 60);
    assert_int_equal(c->timeout, 30);
    assert_string_equal(c->requirepass, "s3cret");
    assert_int_equal(c->maxclients, 5);
    assert_int_equal(c->maxmemory, 2 << 20);
    assert_int_equal(c->proto_max_bulk_len, 2 << 20);
    assert_int_equal(c->client_query_buffer_limit, 3 << 20);
    assert_int_equal(c->cobl_hard, 1 << 20);
    assert_int_equal(c->cobl_soft, 512 << 10);
    assert_int_equal(c->cobl_soft_seconds, 10);
    assert_int_equal(c->databases, 4);
    assert_string_equal(c->dir, "/var/lib/cuckood");
    assert_string_equal(c->dbfilename, "f.cuckoo");
    assert_int_equal(c->nsave, 1);
    assert_int_equal(c->save[0].seconds, 10);
    assert_int_equal(c->save[0].changes, 2);
    assert_false(c->stop_writes_on_bgsave_error);
    assert_int_equal(c->loglevel, CFG_LOG_WARNING);
    assert_string_equal(c->logfile, "/var/log/cuckood.log");
    assert_string_equal(c->pidfile, "/run/cuckood.pid");
    assert_true(c->daemonize);
    assert_int_equal(c->cf.bucket_size, 2);
    assert_int_equal(c->cf.fp_bits, 16);
    assert_int_equal(c->cf.max_iterations, 20);
    assert_int_equal(c->cf.expansion, 2);
    assert_int_equal(c->cf.max_expansions, 8);
    assert_int_equal(c->cf.initial_size, 100);

    /* Names are case-insensitive; empty strings clear nullable ones. */
    assert_int_equal(load(c, "PORT 1\nLogLevel DEBUG\nDaemonize NO\n"
                             "requirepass \"\"\nunixsocket ''\n"
                             "pidfile \"\"\nlogfile \"\"\n"),
                     0);
    assert_int_equal(c->port, 1);
    assert_int_equal(c->loglevel, CFG_LOG_DEBUG);
    assert_false(c->daemonize);
    assert_null(c->requirepass);
    assert_null(c->unixsocket);
    assert_null(c->pidfile);
    assert_string_equal(c->logfile, "");
    assert_int_equal(load(c, "loglevel verbose\nport 0\n"), 0);
    assert_int_equal(c->loglevel, CFG_LOG_VERBOSE);
    assert_int_equal(c->port, 0);
}

/* ---- errors ---- */

typedef struct bad {
    const char *text; /* the whole config text */
    const char *msg;  /* the exact message */
} bad_t;

static const bad_t bads[] = {
    {"port 65536\n",
     "t.conf:1: 'port 65536': argument must be between 0 and 65535 "
     "inclusive"},
    {"# c\n\nport -1\n",
     "t.conf:3: 'port -1': argument must be between 0 and 65535 inclusive"},
    {"port 99999999999999999999999\n",
     "t.conf:1: 'port 99999999999999999999999': argument couldn't be parsed "
     "into an integer"},
    {"port 12a\n",
     "t.conf:1: 'port 12a': argument couldn't be parsed into an integer"},
    {"port +5\n",
     "t.conf:1: 'port +5': argument couldn't be parsed into an integer"},
    {"port\n", "t.conf:1: 'port': wrong number of arguments"},
    {"port 1 2\n", "t.conf:1: 'port 1 2': wrong number of arguments"},
    {"port 1 # comment\n",
     "t.conf:1: 'port 1 # comment': wrong number of arguments"},
    {"port 1\nnosuch 1\n",
     "t.conf:2: 'nosuch 1': Bad directive or wrong number of arguments"},
    {"protected-mode maybe\n",
     "t.conf:1: 'protected-mode maybe': argument must be 'yes' or 'no'"},
    {"daemonize 1\n",
     "t.conf:1: 'daemonize 1': argument must be 'yes' or 'no'"},
    {"loglevel loud\n",
     "t.conf:1: 'loglevel loud': argument(s) must be one of the following: "
     "debug, verbose, notice, warning"},
    {"tls-auth-clients maybe\n",
     "t.conf:1: 'tls-auth-clients maybe': argument(s) must be one of the "
     "following: no, yes, optional"},
    {"tls-port 65536\n",
     "t.conf:1: 'tls-port 65536': argument must be between 0 and 65535 "
     "inclusive"},
    {"tls-handshake-timeout 0\n",
     "t.conf:1: 'tls-handshake-timeout 0': argument must be between 1 and "
     "2147483647 inclusive"},
    {"unixsocketperm 789\n",
     "t.conf:1: 'unixsocketperm 789': argument couldn't be parsed as an octal "
     "number"},
    {"unixsocketperm 1000\n",
     "t.conf:1: 'unixsocketperm 1000': argument must be between 0 and 0777"},
    {"tcp-backlog 2147483648\n",
     "t.conf:1: 'tcp-backlog 2147483648': argument must be between 0 and "
     "2147483647 inclusive"},
    {"timeout 1.5\n",
     "t.conf:1: 'timeout 1.5': argument couldn't be parsed into an integer"},
    {"tcp-keepalive \"\"\n",
     "t.conf:1: 'tcp-keepalive \"\"': argument couldn't be parsed into an "
     "integer"},
    {"maxclients 0\n",
     "t.conf:1: 'maxclients 0': argument must be between 1 and 4294967295 "
     "inclusive"},
    {"maxmemory 1x\n", "t.conf:1: 'maxmemory 1x': argument must be a memory "
                       "value"},
    {"maxmemory -1\n", "t.conf:1: 'maxmemory -1': argument must be a memory "
                       "value"},
    {"maxmemory 1.5gb\n", "t.conf:1: 'maxmemory 1.5gb': argument must be a "
                          "memory value"},
    {"maxmemory 18446744073709551616\n",
     "t.conf:1: 'maxmemory 18446744073709551616': argument must be a memory "
     "value"},
    {"maxmemory 20000000000gb\n",
     "t.conf:1: 'maxmemory 20000000000gb': argument must be a memory value"},
    {"maxmemory gb\n", "t.conf:1: 'maxmemory gb': argument must be a memory "
                       "value"},
    {"proto-max-bulk-len 1000\n",
     "t.conf:1: 'proto-max-bulk-len 1000': argument must be between 1048576 "
     "and 9223372036854775807 inclusive"},
    {"client-query-buffer-limit 1k\n",
     "t.conf:1: 'client-query-buffer-limit 1k': argument must be between "
     "1048576 and 9223372036854775807 inclusive"},
    {"client-output-buffer-limit normal 1 2\n",
     "t.conf:1: 'client-output-buffer-limit normal 1 2': Wrong number of "
     "arguments in buffer limit configuration."},
    {"client-output-buffer-limit master 1 2 3\n",
     "t.conf:1: 'client-output-buffer-limit master 1 2 3': Invalid client "
     "class specified in buffer limit configuration."},
    {"client-output-buffer-limit normal 1 2 x\n",
     "t.conf:1: 'client-output-buffer-limit normal 1 2 x': Error in hard, "
     "soft or soft_seconds setting in buffer limit configuration."},
    {"databases 0\n", "t.conf:1: 'databases 0': argument must be between 1 "
                      "and 10000 inclusive"},
    {"databases 10001\n", "t.conf:1: 'databases 10001': argument must be "
                          "between 1 and 10000 inclusive"},
    {"dir \"\"\n", "t.conf:1: 'dir \"\"': argument can't be empty"},
    {"dbfilename a/b\n", "t.conf:1: 'dbfilename a/b': dbfilename can't be a "
                         "path, just a filename"},
    {"dbfilename ''\n", "t.conf:1: 'dbfilename ''': argument can't be "
                        "empty"},
    {"save 10\n", "t.conf:1: 'save 10': Invalid save parameters"},
    {"save 0 1\n", "t.conf:1: 'save 0 1': Invalid save parameters"},
    {"save 10 -1\n", "t.conf:1: 'save 10 -1': Invalid save parameters"},
    {"save x 1\n", "t.conf:1: 'save x 1': Invalid save parameters"},
    {"save 1 1 2 2 3 3 4 4 5 5 6 6 7 7 8 8 9 9 10 10 11 11 12 12 13 13 14 14 "
     "15 15 16 16 17 17\n",
     "t.conf:1: 'save 1 1 2 2 3 3 4 4 5 5 6 6 7 7 8 8 9 9 10 10 11 11 12 12 "
     "13 13 14 14 15 15 16 16 17 17': too many save points (at most 16)"},
    {"bind\n", "t.conf:1: 'bind': between 1 and 16 addresses expected"},
    {"bind 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17\n",
     "t.conf:1: 'bind 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17': between 1 "
     "and 16 addresses expected"},
    {"bind 127.0.0.1 localhost\n",
     "t.conf:1: 'bind 127.0.0.1 localhost': 'localhost' is not a numeric "
     "IPv4 or IPv6 address, '*' or '::*'"},
    {"bind 300.1.1.1\n", "t.conf:1: 'bind 300.1.1.1': '300.1.1.1' is not a "
                         "numeric IPv4 or IPv6 address, '*' or '::*'"},
    {"bind -\n", "t.conf:1: 'bind -': '-' is not a numeric IPv4 or IPv6 "
                 "address, '*' or '::*'"},
    {"bind **\n", "t.conf:1: 'bind **': '**' is not a numeric IPv4 or IPv6 "
                  "address, '*' or '::*'"},
    {"bind --::*\n", "t.conf:1: 'bind --::*': '--::*' is not a numeric IPv4 "
                     "or IPv6 address, '*' or '::*'"},
    {"cf-bucket-size 0\n", "t.conf:1: 'cf-bucket-size 0': argument must be "
                           "between 1 and 255 inclusive"},
    {"cf-bucket-size 256\n", "t.conf:1: 'cf-bucket-size 256': argument must "
                             "be between 1 and 255 inclusive"},
    {"cf-initial-size 4\ncf-bucket-size 4\n",
     "t.conf:1: 'cf-initial-size 4': argument must be at least twice "
     "cf-bucket-size (4)"},
    {"cf-initial-size 100\ncf-bucket-size 51\n",
     "t.conf:2: 'cf-bucket-size 51': cf-initial-size 100 must be at least "
     "twice the bucket size"},
    {"cf-initial-size 4294967297\n",
     "t.conf:1: 'cf-initial-size 4294967297': argument must be between 2 and "
     "4294967296 inclusive"},
    {"cf-fingerprint-bits 10\n", "t.conf:1: 'cf-fingerprint-bits 10': "
                                 "argument must be 8, 12 or 16"},
    {"cf-fingerprint-bits 32\n", "t.conf:1: 'cf-fingerprint-bits 32': "
                                 "argument must be between 8 and 16 "
                                 "inclusive"},
    {"cf-error-rate 1\n", "t.conf:1: 'cf-error-rate 1': argument must be 0 "
                          "(unset) or between 0 and 1"},
    {"cf-error-rate -0.1\n", "t.conf:1: 'cf-error-rate -0.1': argument must "
                             "be 0 (unset) or between 0 and 1"},
    {"cf-error-rate nan\n", "t.conf:1: 'cf-error-rate nan': argument "
                            "couldn't be parsed into a number"},
    {"cf-error-rate 0.1x\n", "t.conf:1: 'cf-error-rate 0.1x': argument "
                             "couldn't be parsed into a number"},
    {"cf-error-rate 0.00005\n",
     "t.conf:1: 'cf-error-rate 0.00005': rate 5e-05 is below what the finest "
     "fingerprints (17-bit semi-sorted at bucket size 4, else 16-bit) give "
     "with bucket size 4"},
    {"cf-error-rate 0.001\ncf-bucket-size 255\n",
     "t.conf:2: 'cf-bucket-size 255': cf-error-rate 0.001 cannot be met with "
     "this bucket size"},
    {"cf-max-iterations 0\n", "t.conf:1: 'cf-max-iterations 0': argument "
                              "must be between 1 and 65535 inclusive"},
    {"cf-max-iterations 65536\n", "t.conf:1: 'cf-max-iterations 65536': "
                                  "argument must be between 1 and 65535 "
                                  "inclusive"},
    {"cf-expansion-factor 32769\n", "t.conf:1: 'cf-expansion-factor 32769': "
                                    "argument must be between 0 and 32768 "
                                    "inclusive"},
    {"cf-max-expansions 0\n", "t.conf:1: 'cf-max-expansions 0': argument "
                              "must be between 1 and 64 inclusive"},
    {"cf-max-expansions 65\n", "t.conf:1: 'cf-max-expansions 65': argument "
                               "must be between 1 and 64 inclusive"},
    /* quoting errors */
    {"requirepass \"abc\n", "t.conf:1: 'requirepass \"abc': Unbalanced "
                            "quotes in configuration line"},
    {"requirepass 'abc\n", "t.conf:1: 'requirepass 'abc': Unbalanced quotes "
                           "in configuration line"},
    {"requirepass \"ab\"c\n", "t.conf:1: 'requirepass \"ab\"c': Unbalanced "
                              "quotes in configuration line"},
    {"requirepass \"a\\x00b\"\n", "t.conf:1: 'requirepass \"a\\x00b\"': "
                                  "Unbalanced quotes in configuration line"},
    {"\"\"\n", "t.conf:1: '\"\"': Bad directive or wrong number of "
               "arguments"},
};

static void test_bad_values(void **state)
{
    for (size_t i = 0; i < sizeof(bads) / sizeof(bads[0]); i++) {
        cfg_t c;
        assert_int_equal(cfg_init(&c), 0);
        int rc = load(&c, bads[i].text);
        if (rc != -EINVAL || strcmp(err, bads[i].msg) != 0)
            fail_msg("case %zu: rc %d, message\n  '%s'\nwanted\n  '%s'", i, rc,
                     err, bads[i].msg);
        cfg_free(&c);
    }
}

/* A failed line stops the load at that line: later lines are not applied. */
static void test_stops_at_first_error(void **state)
{
    cfg_t *c = *state;

    assert_int_equal(load(c, "port 1\r\nport x\r\nport 3\n"), -EINVAL);
    assert_string_equal(err, "t.conf:2: 'port x': argument couldn't be "
                             "parsed into an integer");
    assert_int_equal(c->port, 1);
}

static void test_quotes(void **state)
{
    cfg_t *c = *state;

    assert_int_equal(load(c, "requirepass \"a b\\x41\\n\\t\\\"q\\\\\"\n"), 0);
    assert_string_equal(c->requirepass, "a bA\n\t\"q\\");
    assert_int_equal(load(c, "requirepass 'it\\'s \"x\"'\n"), 0);
    assert_string_equal(c->requirepass, "it's \"x\"");
    assert_int_equal(load(c, "dir \"/tmp/with space\"\n"), 0);
    assert_string_equal(c->dir, "/tmp/with space");
    /* A quote may open inside a word; a closing one must end it. */
    assert_int_equal(load(c, "requirepass pa\"ss wo\"\n"), 0);
    assert_string_equal(c->requirepass, "pass wo");
    assert_int_equal(load(c, "  \"port\"   '8000'  \n"), 0);
    assert_int_equal(c->port, 8000);
    assert_int_equal(load(c, "requirepass '#notacomment'\n"), 0);
    assert_string_equal(c->requirepass, "#notacomment");
    assert_int_equal(load(c, "save \"\"\n"), 0);
    assert_int_equal(c->nsave, 0);
    /* A file without a final newline. */
    assert_int_equal(load(c, "port 8001"), 0);
    assert_int_equal(c->port, 8001);
}

/* ---- save semantics (as Redis 7) ---- */

static void test_save(void **state)
{
    cfg_t *c = *state;

    /* The first save line replaces the defaults, later ones append. */
    assert_int_equal(load(c, "save 100 1\nsave 200 2 300 3\n"), 0);
    assert_string_equal(get(c, "save"), "100 1 200 2 300 3");
    /* A second load starts over. */
    assert_int_equal(load(c, "save 5 5\n"), 0);
    assert_string_equal(get(c, "save"), "5 5");
    /* save "" clears, even after other lines, and later lines append. */
    assert_int_equal(load(c, "save 1 1\nsave \"\"\n"), 0);
    assert_int_equal(c->nsave, 0);
    assert_string_equal(get(c, "save"), "");
    assert_int_equal(load(c, "save ''\nsave 7 8\n"), 0);
    assert_string_equal(get(c, "save"), "7 8");
    /* A bare save line disables saving too, as in Redis. */
    assert_int_equal(load(c, "save 1 1\nsave\n"), 0);
    assert_int_equal(c->nsave, 0);
    assert_int_equal(load(c, "save 7 8\n"), 0);
    /* No save line keeps what was there. */
    assert_int_equal(load(c, "port 1\n"), 0);
    assert_string_equal(get(c, "save"), "7 8");
    /* Appending past 16 points is refused. */
    assert_int_equal(load(c, "save 1 1 2 2 3 3 4 4 5 5 6 6 7 7 8 8\n"
                             "save 9 9 10 10 11 11 12 12 13 13 14 14 15 15 "
                             "16 16\nsave 17 17\n"),
                     -EINVAL);
    assert_string_equal(err, "t.conf:3: 'save 17 17': too many save points "
                             "(at most 16)");
    assert_int_equal(c->nsave, 16);
    /* Large values are kept exactly. */
    assert_int_equal(load(c, "save 9223372036854775807 0\n"), 0);
    assert_string_equal(get(c, "save"), "9223372036854775807 0");
    assert_int_equal(load(c, "save 9223372036854775808 0\n"), -EINVAL);
}

static void test_memory_units(void **state)
{
    static const struct {
        const char *v;
        uint64_t want;
    } units[] = {
        {"0", 0},
        {"123", 123},
        {"5b", 5},
        {"1k", 1000},
        {"1kb", 1024},
        {"1K", 1000},
        {"1KB", 1024},
        {"1kB", 1024},
        {"2m", 2000000},
        {"2mb", 2097152},
        {"3g", 3000000000ull},
        {"3gb", 3221225472ull},
        {"3Gb", 3221225472ull},
        {"18446744073709551615", UINT64_MAX},
        {"17179869183gb", 17179869183ull << 30},
    };
    cfg_t *c = *state;
    char line[128];

    for (size_t i = 0; i < sizeof(units) / sizeof(units[0]); i++) {
        snprintf(line, sizeof(line), "maxmemory %s\n", units[i].v);
        assert_int_equal(load(c, line), 0);
        assert_int_equal(c->maxmemory, units[i].want);
    }
    assert_int_equal(load(c, "maxmemory 17179869184gb\n"), -EINVAL);
    assert_int_equal(load(c, "maxmemory \"1 kb\"\n"), -EINVAL);
    assert_int_equal(load(c, "maxmemory 1kbb\n"), -EINVAL);
    assert_int_equal(load(c, "maxmemory 1t\n"), -EINVAL);
}

static void test_cf_error_rate(void **state)
{
    cfg_t *c = *state;

    /* b = 4: 8 bits give 8/255 = 0.031, 12 bits 8/4095 = 0.00195. */
    assert_int_equal(load(c, "cf-error-rate 0.05\n"), 0);
    assert_int_equal(c->cf.fp_bits, 8);
    assert_int_equal(load(c, "cf-error-rate 0.01\n"), 0);
    assert_int_equal(c->cf.fp_bits, 12);
    assert_true(c->cf.error_rate == 0.01);
    assert_string_equal(get(c, "cf-error-rate"), "0.01");
    assert_int_equal(load(c, "cf-error-rate 0.001\n"), 0);
    assert_int_equal(c->cf.fp_bits, 16);
    /* A smaller bucket size makes the rate easier to meet. */
    assert_int_equal(load(c, "cf-bucket-size 1\n"), 0);
    assert_int_equal(c->cf.fp_bits, 12);
    /* An explicit width clears the rate. */
    assert_int_equal(load(c, "cf-fingerprint-bits 8\n"), 0);
    assert_true(c->cf.error_rate == 0);
    assert_string_equal(get(c, "cf-error-rate"), "0");
    assert_int_equal(c->cf.fp_bits, 8);
    assert_int_equal(load(c, "cf-bucket-size 8\n"), 0);
    assert_int_equal(c->cf.fp_bits, 8);
    /* 0.0001 is met at b = 4 by semi-sorted 17-bit fingerprints only (the
     * filter picks them; the plain fallback width is 16), and at b = 2 by
     * plain 16 bits; at b = 8 by neither. */
    assert_int_equal(load(c, "cf-bucket-size 4\ncf-error-rate 1e-4\n"), 0);
    assert_int_equal(c->cf.fp_bits, 16);
    assert_int_equal(load(c, "cf-bucket-size 2\ncf-error-rate 1e-4\n"), 0);
    assert_int_equal(c->cf.fp_bits, 16);
    assert_string_equal(get(c, "cf-error-rate"), "0.0001");
    assert_int_equal(load(c, "cf-bucket-size 8\n"), -EINVAL);
    /* 0.00005 is out of reach with b = 4 but not with b = 1. */
    assert_int_equal(load(c, "cf-bucket-size 4\ncf-error-rate 5e-5\n"),
                     -EINVAL);
    assert_int_equal(load(c, "cf-bucket-size 1\ncf-error-rate 5e-5\n"), 0);
    assert_int_equal(c->cf.fp_bits, 16);
}

/* ---- command line and files ---- */

static char tmpdir[256];

static int file_setup(void **state)
{
    const char *base = getenv("TMPDIR");
    snprintf(tmpdir, sizeof(tmpdir), "%s/cfgtestXXXXXX",
             base != NULL && base[0] != '\0' ? base : "/tmp");
    if (mkdtemp(tmpdir) == NULL)
        return -1;
    return setup(state);
}

static int file_teardown(void **state)
{
    char path[512];
    snprintf(path, sizeof(path), "%s/a.conf", tmpdir);
    unlink(path);
    snprintf(path, sizeof(path), "%s/nul.conf", tmpdir);
    unlink(path);
    rmdir(tmpdir);
    return teardown(state);
}

static void write_file(const char *path, const char *data, size_t len)
{
    FILE *f = fopen(path, "wb");
    assert_non_null(f);
    assert_int_equal(fwrite(data, 1, len, f), len);
    assert_int_equal(fclose(f), 0);
}

static int args(cfg_t *c, int argc, char **argv)
{
    err[0] = '\0';
    return cfg_load_args(c, argc, argv, err, sizeof(err));
}

static void test_command_line(void **state)
{
    cfg_t *c = *state;
    char path[512], want[1024];
    const char *text = "port 7000\nsave 100 1\nrequirepass file\n";

    snprintf(path, sizeof(path), "%s/a.conf", tmpdir);
    write_file(path, text, strlen(text));

    /* Overrides win over the file; --save appends to the file's save, as
     * redis-server does; an option takes words up to the next "--". */
    char *av1[] = {"cuckood", path,     "--port",    "7001",
                   "--save",  "60",     "1000",      "--requirepass",
                   "cli",     "--bind", "127.0.0.1", "::1"};
    assert_int_equal(args(c, 12, av1), 0);
    assert_int_equal(c->port, 7001);
    assert_string_equal(get(c, "save"), "100 1 60 1000");
    assert_string_equal(c->requirepass, "cli");
    assert_int_equal(c->nbind, 2);
    assert_string_equal(c->bind[1], "::1");
    assert_non_null(c->config_file);
    assert_true(c->config_file[0] == '/');
    assert_non_null(strstr(c->config_file, "/a.conf"));
    assert_int_equal(access(c->config_file, R_OK), 0);

    /* No file: options only; "--port 7002" may be one word; a value may be
     * empty or contain spaces; a bare --save disables saving. */
    cfg_t d;
    assert_int_equal(cfg_init(&d), 0);
    char *av2[] = {"cuckood", "--port 7002", "--requirepass", "a b",
                   "--save",  "--loglevel",  "debug"};
    assert_int_equal(args(&d, 7, av2), 0);
    assert_int_equal(d.port, 7002);
    assert_string_equal(d.requirepass, "a b");
    assert_int_equal(d.nsave, 0);
    assert_int_equal(d.loglevel, CFG_LOG_DEBUG);
    assert_null(d.config_file);
    char *av3[] = {"cuckood", "--requirepass", ""};
    assert_int_equal(args(&d, 3, av3), 0);
    assert_null(d.requirepass);
    cfg_free(&d);

    /* Errors name the option. */
    char *av4[] = {"cuckood", path, "--port", "99999"};
    assert_int_equal(args(c, 4, av4), -EINVAL);
    assert_string_equal(err, "command line: '--port 99999': argument must be "
                             "between 0 and 65535 inclusive");
    char *av5[] = {"cuckood", "--nosuch", "1"};
    assert_int_equal(args(c, 3, av5), -EINVAL);
    assert_string_equal(err, "command line: '--nosuch 1': Bad directive or "
                             "wrong number of arguments");
    char *av6[] = {"cuckood", "--port", "1", "2"};
    assert_int_equal(args(c, 4, av6), -EINVAL);
    assert_string_equal(err, "command line: '--port 1 2': wrong number of "
                             "arguments");
    char *av7[] = {"cuckood", "--port"};
    assert_int_equal(args(c, 2, av7), -EINVAL);
    assert_string_equal(err, "command line: '--port': wrong number of "
                             "arguments");
    char *av8[] = {"cuckood", path, "extra"};
    assert_int_equal(args(c, 3, av8), -EINVAL);
    assert_string_equal(err, "command line: 'extra': expected a --directive");
    char *av9[] = {"cuckood", "--"};
    assert_int_equal(args(c, 2, av9), -EINVAL);
    char *av10[] = {"cuckood", "--port \"1"};
    assert_int_equal(args(c, 2, av10), -EINVAL);
    assert_string_equal(err, "command line: '--port \"1': Unbalanced quotes");

    /* A bad line in the file names the file as given and the line. */
    text = "\nport 1\nmaxmemory lots\n";
    write_file(path, text, strlen(text));
    char *av11[] = {"cuckood", path};
    assert_int_equal(args(c, 2, av11), -EINVAL);
    snprintf(want, sizeof(want),
             "%s:3: 'maxmemory lots': argument must be a "
             "memory value",
             path);
    assert_string_equal(err, want);
}

static void test_bad_files(void **state)
{
    cfg_t *c = *state;
    char path[512], want[1024];

    snprintf(path, sizeof(path), "%s/missing.conf", tmpdir);
    char *av1[] = {"cuckood", path};
    assert_int_equal(args(c, 2, av1), -ENOENT);
    snprintf(want, sizeof(want), "%s: can't open the config file: %s", path,
             strerror(ENOENT));
    assert_string_equal(err, want);
    assert_null(c->config_file);

    /* A directory opens but cannot be read. */
    char *av2[] = {"cuckood", tmpdir};
    assert_true(args(c, 2, av2) < 0);
    assert_non_null(strstr(err, tmpdir));
    assert_non_null(strstr(err, strerror(EISDIR)));

    snprintf(path, sizeof(path), "%s/nul.conf", tmpdir);
    write_file(path, "port 1\n\0port 2\n", 15);
    char *av3[] = {"cuckood", path};
    assert_int_equal(args(c, 2, av3), -EINVAL);
    snprintf(want, sizeof(want), "%s: config file contains a NUL byte", path);
    assert_string_equal(err, want);
}

/* ---- conf/cuckood.conf ---- */

static void conf_path(char *buf, size_t n)
{
    /* This file is tests/unit/test_config.c; the sample is conf/. */
    const char *file = __FILE__;
    const char *cut = strstr(file, "tests/unit/test_config.c");
    assert_non_null(cut);
    snprintf(buf, n, "%.*sconf/cuckood.conf", (int)(cut - file), file);
}

static void assert_str_eq_null(const char *a, const char *b)
{
    if (a == NULL || b == NULL)
        assert_true(a == b);
    else
        assert_string_equal(a, b);
}

static void test_sample_conf_is_defaults(void **state)
{
    cfg_t *def = *state, c;
    char path[1024];

    conf_path(path, sizeof(path));
    assert_int_equal(cfg_init(&c), 0);
    /* Something else first, so that the file has to set every field. */
    assert_int_equal(load(&c, "port 1\nbind ::1 ::2\nunixsocket /s\n"
                              "unixsocketperm 777\nprotected-mode no\n"
                              "tcp-backlog 1\ntcp-keepalive 1\ntimeout 1\n"
                              "requirepass x\nmaxclients 1\nmaxmemory 1\n"
                              "proto-max-bulk-len 9mb\n"
                              "client-query-buffer-limit 9mb\n"
                              "client-output-buffer-limit normal 1 1 1\n"
                              "databases 1\ndir /d\ndbfilename f\n"
                              "save 1 1\nstop-writes-on-bgsave-error no\n"
                              "loglevel debug\nlogfile /l\npidfile /p\n"
                              "daemonize yes\ncf-bucket-size 8\n"
                              "cf-error-rate 0.01\ncf-max-iterations 1\n"
                              "cf-expansion-factor 0\ncf-max-expansions 1\n"
                              "cf-initial-size 99\n"
                              "tls-port 1\ntls-cert-file /c\n"
                              "tls-key-file /k\ntls-key-file-pass p\n"
                              "tls-ca-cert-file /a\ntls-ca-cert-dir /d\n"
                              "tls-auth-clients optional\n"
                              "tls-protocols TLSv1.3\ntls-ciphers x\n"
                              "tls-ciphersuites y\n"
                              "tls-prefer-server-ciphers yes\n"
                              "tls-session-caching no\n"
                              "tls-session-cache-size 1\n"
                              "tls-session-cache-timeout 1\n"
                              "tls-handshake-timeout 1\n"),
                     0);
    char *av[] = {"cuckood", path};
    if (args(&c, 2, av) != 0)
        fail_msg("%s", err);

    assert_non_null(c.config_file);
    assert_int_equal(c.port, def->port);
    assert_int_equal(c.nbind, def->nbind);
    for (int i = 0; i < CFG_MAX_BIND; i++)
        assert_str_eq_null(c.bind[i], def->bind[i]);
    assert_str_eq_null(c.unixsocket, def->unixsocket);
    assert_int_equal(c.unixsocketperm, def->unixsocketperm);
    assert_int_equal(c.protected_mode, def->protected_mode);
    assert_int_equal(c.tcp_backlog, def->tcp_backlog);
    assert_int_equal(c.tcp_keepalive, def->tcp_keepalive);
    assert_int_equal(c.timeout, def->timeout);
    assert_str_eq_null(c.requirepass, def->requirepass);
    assert_int_equal(c.maxclients, def->maxclients);
    assert_int_equal(c.maxmemory, def->maxmemory);
    assert_int_equal(c.proto_max_bulk_len, def->proto_max_bulk_len);
    assert_int_equal(c.client_query_buffer_limit,
                     def->client_query_buffer_limit);
    assert_int_equal(c.cobl_hard, def->cobl_hard);
    assert_int_equal(c.cobl_soft, def->cobl_soft);
    assert_int_equal(c.cobl_soft_seconds, def->cobl_soft_seconds);
    assert_int_equal(c.databases, def->databases);
    assert_str_eq_null(c.dir, def->dir);
    assert_str_eq_null(c.dbfilename, def->dbfilename);
    assert_int_equal(c.nsave, def->nsave);
    for (int i = 0; i < def->nsave; i++) {
        assert_int_equal(c.save[i].seconds, def->save[i].seconds);
        assert_int_equal(c.save[i].changes, def->save[i].changes);
    }
    assert_int_equal(c.stop_writes_on_bgsave_error,
                     def->stop_writes_on_bgsave_error);
    assert_int_equal(c.loglevel, def->loglevel);
    assert_str_eq_null(c.logfile, def->logfile);
    assert_str_eq_null(c.pidfile, def->pidfile);
    assert_int_equal(c.daemonize, def->daemonize);
    assert_int_equal(c.cf.bucket_size, def->cf.bucket_size);
    assert_int_equal(c.cf.fp_bits, def->cf.fp_bits);
    assert_true(c.cf.error_rate == def->cf.error_rate);
    assert_int_equal(c.cf.max_iterations, def->cf.max_iterations);
    assert_int_equal(c.cf.expansion, def->cf.expansion);
    assert_int_equal(c.cf.max_expansions, def->cf.max_expansions);
    assert_int_equal(c.cf.initial_size, def->cf.initial_size);
    assert_int_equal(c.tls_port, def->tls_port);
    assert_str_eq_null(c.tls_cert_file, def->tls_cert_file);
    assert_str_eq_null(c.tls_key_file, def->tls_key_file);
    assert_str_eq_null(c.tls_key_file_pass, def->tls_key_file_pass);
    assert_str_eq_null(c.tls_ca_cert_file, def->tls_ca_cert_file);
    assert_str_eq_null(c.tls_ca_cert_dir, def->tls_ca_cert_dir);
    assert_int_equal(c.tls_auth_clients, def->tls_auth_clients);
    assert_str_eq_null(c.tls_protocols, def->tls_protocols);
    assert_str_eq_null(c.tls_ciphers, def->tls_ciphers);
    assert_str_eq_null(c.tls_ciphersuites, def->tls_ciphersuites);
    assert_int_equal(c.tls_prefer_server_ciphers,
                     def->tls_prefer_server_ciphers);
    assert_int_equal(c.tls_session_caching, def->tls_session_caching);
    assert_int_equal(c.tls_session_cache_size, def->tls_session_cache_size);
    assert_int_equal(c.tls_session_cache_timeout,
                     def->tls_session_cache_timeout);
    assert_int_equal(c.tls_handshake_timeout, def->tls_handshake_timeout);

    /* And CONFIG GET sees the same everywhere. */
    char *a = dump(&c), *b = dump(def);
    assert_string_equal(a, b);
    free(a);
    free(b);
    cfg_free(&c);
}

/* Every directive of the table appears in the sample file. */
static void name_in_conf(void *ctx, const char *name, const char *value)
{
    const char *text = ctx;
    char needle[128];
    snprintf(needle, sizeof(needle), "\n%s ", name);
    if (strstr(text, needle) == NULL)
        fail_msg("conf/cuckood.conf lacks '%s'", name);
}

static void test_sample_conf_complete(void **state)
{
    char path[1024], *text;
    FILE *f;
    long n;

    conf_path(path, sizeof(path));
    f = fopen(path, "rb");
    assert_non_null(f);
    assert_int_equal(fseek(f, 0, SEEK_END), 0);
    n = ftell(f);
    assert_true(n > 0);
    rewind(f);
    text = calloc(1, (size_t)n + 1);
    assert_non_null(text);
    assert_int_equal(fread(text, 1, (size_t)n, f), (size_t)n);
    fclose(f);
    cfg_get(*state, "*", name_in_conf, text);
    free(text);
}

/* ---- CONFIG GET ---- */

static void test_get(void **state)
{
    cfg_t *c = *state;
    got_t *g = calloc(1, sizeof(*g));

    assert_non_null(g);
    cfg_get(c, "*", collect, g);
    assert_int_equal(g->n, 68); /* 55, the ACL's 3, the AOF's 10 */
    g->n = 0;
    cfg_get(c, "tls-*", collect, g);
    assert_int_equal(g->n, 15);
    g->n = 0;
    cfg_get(c, "cf-*", collect, g);
    assert_int_equal(g->n, 7);
    for (int i = 0; i < g->n; i++)
        assert_memory_equal(g->names[i], "cf-", 3);
    g->n = 0;
    cfg_get(c, "*MAX*", collect, g);
    /* maxclients maxmemory proto-max-bulk-len slowlog-max-len
     * acllog-max-len cf-max-iterations cf-max-expansions */
    assert_int_equal(g->n, 7);
    g->n = 0;
    cfg_get(c, "nomatch", collect, g);
    assert_int_equal(g->n, 0);
    g->n = 0;
    cfg_get(c, "PORT", collect, g);
    assert_int_equal(g->n, 1);
    assert_string_equal(g->names[0], "port");
    assert_string_equal(g->values[0], "6379");
    g->n = 0;
    cfg_get(c, "*-siz[a-e]", collect, g);
    assert_int_equal(g->n, 4);
    assert_string_equal(g->names[0], "tls-session-cache-size");
    assert_string_equal(g->names[1], "auto-aof-rewrite-min-size");
    assert_string_equal(g->names[2], "cf-bucket-size");
    assert_string_equal(g->names[3], "cf-initial-size");
    g->n = 0;
    cfg_get(c, "d[^a]*", collect, g);
    assert_int_equal(g->n, 2); /* dir, dbfilename; not databases */
    free(g);

    assert_string_equal(get(c, "bind"), "127.0.0.1");
    assert_string_equal(get(c, "unixsocket"), "");
    assert_string_equal(get(c, "unixsocketperm"), "0");
    assert_string_equal(get(c, "protected-mode"), "yes");
    assert_string_equal(get(c, "daemonize"), "no");
    assert_string_equal(get(c, "requirepass"), "");
    assert_string_equal(get(c, "maxmemory"), "0");
    assert_string_equal(get(c, "proto-max-bulk-len"), "536870912");
    assert_string_equal(get(c, "client-query-buffer-limit"), "1073741824");
    assert_string_equal(get(c, "client-output-buffer-limit"),
                        "normal 0 0 0 slave 268435456 67108864 60 pubsub "
                        "33554432 8388608 60");
    assert_string_equal(get(c, "loglevel"), "notice");
    assert_string_equal(get(c, "logfile"), "");
    assert_string_equal(get(c, "pidfile"), "");
    assert_string_equal(get(c, "dir"), ".");
    assert_string_equal(get(c, "dbfilename"), "dump.cuckoo");
    assert_string_equal(get(c, "cf-error-rate"), "0");
    assert_string_equal(get(c, "cf-initial-size"), "1024");
    assert_string_equal(get(c, "slowlog-log-slower-than"), "10000");
    assert_string_equal(get(c, "slowlog-max-len"), "128");
    assert_string_equal(get(c, "latency-monitor-threshold"), "0");

    assert_int_equal(load(c, "unixsocketperm 0700\nbind 0.0.0.0 ::\n"
                             "maxmemory 1gb\n"
                             "client-output-buffer-limit normal 1mb 2k 3 "
                             "pubsub 1 1 1\n"),
                     0);
    /* The slow log's threshold is signed: negative turns it off. */
    assert_int_equal(load(c, "slowlog-log-slower-than -1\n"), 0);
    assert_int_equal(c->slowlog_log_slower_than, -1);
    assert_string_equal(get(c, "slowlog-log-slower-than"), "-1");
    assert_int_equal(load(c, "slowlog-log-slower-than "
                             "-9223372036854775808\n"),
                     0);
    assert_true(load(c, "slowlog-log-slower-than 1.5\n") < 0);
    assert_true(load(c, "slowlog-log-slower-than "
                        "9223372036854775808\n") < 0);
    assert_true(load(c, "slowlog-max-len -1\n") < 0);
    assert_true(load(c, "latency-monitor-threshold -1\n") < 0);
    assert_int_equal(load(c, "latency-monitor-threshold 100\n"), 0);
    assert_int_equal(c->latency_monitor_threshold, 100);
    assert_string_equal(get(c, "unixsocketperm"), "700");
    assert_string_equal(get(c, "bind"), "0.0.0.0 ::");
    assert_string_equal(get(c, "maxmemory"), "1073741824");
    assert_string_equal(get(c, "client-output-buffer-limit"),
                        "normal 1048576 2000 3 slave 268435456 67108864 60 "
                        "pubsub 33554432 8388608 60");

    /* Long values are not cut: 16 IPv6 addresses of full length. */
    char text[2048] = "bind", want[2048] = "";
    for (int i = 0; i < 16; i++) {
        strcat(text, " ffff:ffff:ffff:ffff:ffff:ffff:255.255.255.255");
        strcat(want, i > 0 ? " " : "");
        strcat(want, "ffff:ffff:ffff:ffff:ffff:ffff:255.255.255.255");
    }
    strcat(text, "\n");
    assert_int_equal(load(c, text), 0);
    assert_string_equal(get(c, "bind"), want);
}

/* ---- CONFIG SET ---- */

static void test_set_mutable(void **state)
{
    static const struct {
        const char *name, *value, *shown;
    } sets[] = {
        {"maxmemory", "100mb", "104857600"},
        {"maxclients", "7", "7"},
        {"timeout", "9", "9"},
        {"tcp-keepalive", "0", "0"},
        {"requirepass", "p w", "p w"},
        {"save", "100 1 200 2", "100 1 200 2"},
        {"save", "", ""},
        {"stop-writes-on-bgsave-error", "no", "no"},
        {"loglevel", "WARNING", "warning"},
        {"proto-max-bulk-len", "1mb", "1048576"},
        {"client-query-buffer-limit", "2mb", "2097152"},
        {"client-output-buffer-limit", "normal 10 20 30 slave 1 2 3",
         "normal 10 20 30 slave 268435456 67108864 60 pubsub 33554432 "
         "8388608 60"},
        {"protected-mode", "no", "no"},
        {"dbfilename", "x.cuckoo", "x.cuckoo"},
        {"tls-cert-file", "/x.crt", "/x.crt"},
        {"tls-cert-file", "", ""},
        {"tls-auth-clients", "OPTIONAL", "optional"},
        {"tls-auth-clients", "no", "no"},
        {"tls-protocols", "TLSv1.3", "TLSv1.3"},
        {"tls-session-cache-size", "5", "5"},
        {"tls-handshake-timeout", "250", "250"},
        {"cf-bucket-size", "8", "8"},
        {"cf-fingerprint-bits", "16", "16"},
        {"cf-max-iterations", "100", "100"},
        {"cf-expansion-factor", "0", "0"},
        {"cf-max-expansions", "64", "64"},
        {"cf-initial-size", "4096", "4096"},
        {"cf-error-rate", "0.05", "0.05"},
        {"CF-Initial-Size", "16", NULL},
    };
    cfg_t *c = *state;

    for (size_t i = 0; i < sizeof(sets) / sizeof(sets[0]); i++) {
        err[0] = '\0';
        if (cfg_set(c, sets[i].name, sets[i].value, err, sizeof(err)) != 0)
            fail_msg("CONFIG SET %s %s: %s", sets[i].name, sets[i].value, err);
        if (sets[i].shown != NULL)
            assert_string_equal(get(c, sets[i].name), sets[i].shown);
    }
    assert_int_equal(c->cf.initial_size, 16);
    /* 0.05 with b = 8: 16/255 = 0.063 > 0.05, 16/4095 fits. */
    assert_int_equal(c->cf.fp_bits, 12);
    assert_int_equal(c->maxmemory, 100 << 20);
    assert_int_equal(c->nsave, 0);
    assert_int_equal(c->cobl_soft_seconds, 30);
    /* CONFIG SET save replaces, it never appends. */
    assert_int_equal(cfg_set(c, "save", "1 2", err, sizeof(err)), 0);
    assert_int_equal(cfg_set(c, "save", "3 4", err, sizeof(err)), 0);
    assert_string_equal(get(c, "save"), "3 4");
    /* requirepass "" removes the password. */
    assert_int_equal(cfg_set(c, "requirepass", "", err, sizeof(err)), 0);
    assert_null(c->requirepass);
}

static void test_set_errors_change_nothing(void **state)
{
    static const struct {
        const char *name, *value, *msg;
    } bad[] = {
        {"nosuch", "1",
         "ERR Unknown option or number of arguments for CONFIG SET - "
         "'nosuch'"},
        {"port", "7000",
         "ERR CONFIG SET failed (possibly related to argument "
         "'port') - can't set immutable config"},
        {"bind", "0.0.0.0", NULL},
        {"unixsocket", "/s", NULL},
        {"unixsocketperm", "777", NULL},
        {"databases", "4", NULL},
        {"daemonize", "yes", NULL},
        {"pidfile", "/p", NULL},
        {"logfile", "/l", NULL},
        {"tcp-backlog", "5", NULL},
        {"dir", "/d", NULL},
        {"maxmemory", "1x",
         "ERR CONFIG SET failed (possibly related to "
         "argument 'maxmemory') - argument must be a "
         "memory value"},
        {"maxclients", "0",
         "ERR CONFIG SET failed (possibly related to "
         "argument 'maxclients') - argument must be "
         "between 1 and 4294967295 inclusive"},
        {"timeout", "abc",
         "ERR CONFIG SET failed (possibly related to "
         "argument 'timeout') - argument couldn't be "
         "parsed into an integer"},
        /* string2ll's rules, as every integer argument: no leading zero,
         * no sign, no space. */
        {"timeout", "007",
         "ERR CONFIG SET failed (possibly related to "
         "argument 'timeout') - argument couldn't be "
         "parsed into an integer"},
        {"timeout", "+7", NULL},
        {"timeout", " 7", NULL},
        {"save", "1 2 3",
         "ERR CONFIG SET failed (possibly related to "
         "argument 'save') - Invalid save parameters"},
        {"save", "0 1", NULL},
        {"save", "100 1 \"x",
         "ERR CONFIG SET failed (possibly related to "
         "argument 'save') - Unbalanced quotes"},
        {"loglevel", "xx", NULL},
        {"protected-mode", "maybe", NULL},
        {"stop-writes-on-bgsave-error", "", NULL},
        {"client-output-buffer-limit", "foo 1 2 3",
         "ERR CONFIG SET failed (possibly related to argument "
         "'client-output-buffer-limit') - Invalid client class specified in "
         "buffer limit configuration."},
        /* a good class before a bad one must not be applied */
        {"client-output-buffer-limit", "normal 5 5 5 pubsub x 1 1", NULL},
        {"client-output-buffer-limit", "", NULL},
        {"proto-max-bulk-len", "10", NULL},
        {"dbfilename", "a/b", NULL},
        {"dbfilename", "", NULL},
        {"cf-bucket-size", "0", NULL},
        {"cf-bucket-size", "600", NULL},
        {"cf-bucket-size", "513", NULL},
        {"cf-fingerprint-bits", "9", NULL},
        {"cf-error-rate", "0.00001", NULL},
        {"cf-error-rate", "2", NULL},
        {"cf-initial-size", "7", NULL},
        {"cf-max-iterations", "70000", NULL},
        {"cf-expansion-factor", "-1", NULL},
        {"cf-max-expansions", "65", NULL},
        {"tcp-keepalive", "-5", NULL},
    };
    static const char set_failed[] =
        "ERR CONFIG SET failed (possibly related to argument '";
    cfg_t *c = *state;
    char *before = dump(c);

    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        err[0] = '\0';
        int rc = cfg_set(c, bad[i].name, bad[i].value, err, sizeof(err));
        if (rc != -EINVAL)
            fail_msg("CONFIG SET %s '%s' gave %d", bad[i].name, bad[i].value,
                     rc);
        if (bad[i].msg != NULL)
            assert_string_equal(err, bad[i].msg);
        else
            assert_true(strncmp(err, set_failed, strlen(set_failed)) == 0);
        char *after = dump(c);
        if (strcmp(before, after) != 0)
            fail_msg("CONFIG SET %s '%s' changed the state", bad[i].name,
                     bad[i].value);
        free(after);
    }
    free(before);
    assert_int_equal(cfg_set(c, "daemonize", "yes", err, sizeof(err)), -EINVAL);
    assert_string_equal(err, "ERR CONFIG SET failed (possibly related to "
                             "argument 'daemonize') - can't set immutable "
                             "config");
    assert_int_equal(cfg_set(c, "tls-port", "6380", err, sizeof(err)), -EINVAL);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_defaults, setup, teardown),
        cmocka_unit_test_setup_teardown(test_bind_wildcards, setup, teardown),
        cmocka_unit_test_setup_teardown(test_every_directive, setup, teardown),
        cmocka_unit_test(test_bad_values),
        cmocka_unit_test_setup_teardown(test_stops_at_first_error, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_quotes, setup, teardown),
        cmocka_unit_test_setup_teardown(test_save, setup, teardown),
        cmocka_unit_test_setup_teardown(test_memory_units, setup, teardown),
        cmocka_unit_test_setup_teardown(test_cf_error_rate, setup, teardown),
        cmocka_unit_test_setup_teardown(test_command_line, file_setup,
                                        file_teardown),
        cmocka_unit_test_setup_teardown(test_bad_files, file_setup,
                                        file_teardown),
        cmocka_unit_test_setup_teardown(test_sample_conf_is_defaults, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_sample_conf_complete, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_get, setup, teardown),
        cmocka_unit_test_setup_teardown(test_set_mutable, setup, teardown),
        cmocka_unit_test_setup_teardown(test_set_errors_change_nothing, setup,
                                        teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
