/*
 * load_args.h - cuckood-load's command line: what to connect to, how the
 * input is read and how it is loaded. A pure parser (no I/O), so that the
 * fuzzer can feed it any argv.
 */
#ifndef LOAD_ARGS_H
#define LOAD_ARGS_H

#include <stddef.h>
#include <stdint.h>

#include "load_input.h"

#define LOAD_DEFAULT_BATCH 1000
#define LOAD_DEFAULT_WINDOW 16
#define LOAD_MAX_BATCH 100000
#define LOAD_MAX_WINDOW 1024
#define LOAD_MAX_VERIFY 1000000

struct load_opts {
    const char *host;      /* -h, default 127.0.0.1 */
    int port;              /* -p, default 6379 */
    const char *socket;    /* -s: a unix socket instead of host:port */
    int db;                /* -n, default 0 */
    const char *user;      /* --user (with --pass) */
    const char *pass;      /* -a or --pass */
    int tls;               /* --tls */
    const char *cacert;    /* --cacert */
    const char *cacertdir; /* --cacertdir */
    const char *cert;      /* --cert */
    const char *key;       /* --key */
    const char *sni;       /* --sni */
    int insecure;          /* --insecure: no verification of the server */
    uint64_t reserve;      /* --reserve N: capacity of a new filter, 0 none */
    uint64_t count;        /* --count N: items expected (ETA, capacity) */
    unsigned batch;        /* --batch B: items per CF.INSERT */
    unsigned window;       /* --window W: batches in flight */
    enum load_format format;
    unsigned column;         /* --column C as a number (1-based), else 0 */
    const char *column_name; /* --column C as a CSV header name */
    unsigned verify;         /* --verify K */
    int swap;                /* --swap */
    int quiet;               /* --quiet */
    const char *key_name;    /* KEY */
    const char *file;        /* FILE, NULL or "-" for standard input */
};

enum load_args_result {
    LOAD_ARGS_OK,    /* *o filled */
    LOAD_ARGS_HELP,  /* --help asked for */
    LOAD_ARGS_ERROR, /* err says what is wrong */
};

/* Parses argv[1..argc-1] into *o (defaults first). Pointers in *o point
 * into argv. On LOAD_ARGS_ERROR err holds one line (no newline). */
enum load_args_result load_args_parse(int argc, char **argv,
                                      struct load_opts *o, char *err,
                                      size_t errlen);

/* The man-style help text. */
extern const char load_args_help[];

#endif /* LOAD_ARGS_H */
