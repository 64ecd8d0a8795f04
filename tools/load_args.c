/*
 * load_args.c - cuckood-load's command line (load_args.h). Flags are
 * redis-cli's where redis-cli has one (-h -p -s -n -a --user --pass --tls
 * --cacert --cacertdir --cert --key --sni --insecure); the rest are the
 * loader's own. Numbers are checked whole: "10x", "-1" and overflow are
 * errors, never a silent default.
 */
#include "load_args.h"

#include <errno.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const char load_args_help[] =
    "NAME\n"
    "    cuckood-load - bulk-load items into a cuckoo filter of cuckood or\n"
    "    of Redis with the cuckoo or RedisBloom module\n"
    "\n"
    "SYNOPSIS\n"
    "    cuckood-load [-h host] [-p port] [-s socket] [-n db] [-a password]\n"
    "                 [--user name --pass password]\n"
    "                 [--tls [--cacert file] [--cacertdir dir] [--cert file\n"
    "                  --key file] [--sni name] [--insecure]]\n"
    "                 [--reserve N] [--count N] [--batch B] [--window W]\n"
    "                 [--format lines|nul|csv|copy] [--column C]\n"
    "                 [--verify K] [--swap] [--quiet] KEY [FILE]\n"
    "\n"
    "DESCRIPTION\n"
    "    Reads items from FILE (or standard input when FILE is absent or -)\n"
    "    and adds them to the filter KEY with pipelined CF.INSERT commands,\n"
    "    B items each, at most W commands awaiting their replies. Every\n"
    "    reply is checked: an error reply, or an item the filter refused\n"
    "    (full), stops the load with a message naming the input line, and\n"
    "    the exit status is 1. When the connection drops, it says how many\n"
    "    items the server had acknowledged.\n"
    "\n"
    "    On a terminal, standard error shows a progress line (items, rate,\n"
    "    and the time left when the input's size or --count is known); a\n"
    "    summary line follows the load unless --quiet.\n"
    "\n"
    "INPUT\n"
    "    --format lines   one item a line (the default); a \\r before the\n"
    "                     \\n is dropped\n"
    "    --format nul     items separated by NUL bytes: any bytes at all\n"
    "                     (find -print0, xargs -0)\n"
    "    --format csv     one column of CSV (RFC 4180: quoted fields may\n"
    "                     hold commas, quotes as \"\" and newlines)\n"
    "    --format copy    one column of PostgreSQL's COPY ... TO STDOUT\n"
    "                     text format (tab-separated, backslash escapes)\n"
    "    --column C       the column for csv and copy: a number from 1 (the\n"
    "                     default), or for csv a name, looked up in the\n"
    "                     first record, the header\n"
    "    Empty items are skipped (an empty line, an empty field, COPY's\n"
    "    \\N for NULL), so are blank lines; line numbers in messages count\n"
    "    them. A record longer than 4 MiB is an error.\n"
    "\n"
    "LOADING\n"
    "    --reserve N      the capacity of the filter when the load creates\n"
    "                     it (CF.INSERT's CAPACITY); an existing filter is\n"
    "                     loaded as it is\n"
    "    --count N        the number of items expected: the progress line's\n"
    "                     time left, and the capacity when --reserve is not\n"
    "                     given\n"
    "    --batch B        items per CF.INSERT (default 1000, at most 100000)\n"
    "    --window W       CF.INSERTs in flight (default 16, at most 1024)\n"
    "    --verify K       at the end, CF.MEXISTS of K items picked at random\n"
    "                     from those loaded; any answer 0 is an error\n"
    "    --swap           load into a new key beside KEY (the same hash tag,\n"
    "                     so the same cluster slot) and RENAME it over KEY\n"
    "                     when every item is in: readers see the old filter\n"
    "                     until then, never a half-loaded one. A failed load\n"
    "                     deletes the new key and leaves KEY alone\n"
    "    --quiet          no progress or summary, errors only\n"
    "\n"
    "CONNECTION\n"
    "    -h host          server host (default 127.0.0.1)\n"
    "    -p port          server port (default 6379)\n"
    "    -s socket        a unix socket instead of host and port\n"
    "    -n db            database number (SELECT)\n"
    "    -a password      AUTH password (default user)\n"
    "    --user name      ACL user, with --pass\n"
    "    --pass password  the ACL user's password (as -a)\n"
    "    --tls            TLS; --cacert/--cacertdir verify the server\n"
    "                     (default: the system's CAs), --cert and --key\n"
    "                     give a client certificate, --sni the server name\n"
    "                     to send, --insecure skips verification\n"
    "    --help           this text\n"
    "\n"
    "EXIT STATUS\n"
    "    0 every item was acknowledged (and verified); 1 a server error, a\n"
    "    refused item, a dropped connection or bad input; 2 a usage error.\n"
    "\n"
    "EXAMPLES\n"
    "    cuckood-load --reserve 10000000 users ids.txt\n"
    "    psql -c \"COPY users(id) TO STDOUT\" | cuckood-load --format copy \\\n"
    "        --swap --count 1000000 users\n"
    "    find /srv -print0 | cuckood-load --format nul paths\n";

static enum load_args_result bad(char *err, size_t errlen, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err, errlen, fmt, ap);
    va_end(ap);
    return LOAD_ARGS_ERROR;
}

/* A whole decimal number in [lo, hi]. */
static int number(const char *s, uint64_t lo, uint64_t hi, uint64_t *out)
{
    if (s[0] < '0' || s[0] > '9')
        return -1;
    errno = 0;
    char *end;
    unsigned long long v = strtoull(s, &end, 10);
    if (errno != 0 || *end != '\0' || v < lo || v > hi)
        return -1;
    *out = v;
    return 0;
}

/* The options that take a value, and where it goes in load_opts. */
enum opt_kind { OPT_TEXT, OPT_INT, OPT_UINT, OPT_U64, OPT_FORMAT };

struct valued {
    const char *name;
    enum opt_kind kind;
    size_t offset;
    uint64_t lo, hi;  /* numbers */
    const char *what; /* "is not <what>", else "must be lo to hi" */
};

#define AT(f) offsetof(struct load_opts, f)

static const struct valued valued_options[] = {
    {"-h", OPT_TEXT, AT(host), 0, 0, NULL},
    {"-p", OPT_INT, AT(port), 1, 65535, "a port"},
    {"-s", OPT_TEXT, AT(socket), 0, 0, NULL},
    {"-n", OPT_INT, AT(db), 0, 1000000, "a database"},
    {"-a", OPT_TEXT, AT(pass), 0, 0, NULL},
    {"--pass", OPT_TEXT, AT(pass), 0, 0, NULL},
    {"--user", OPT_TEXT, AT(user), 0, 0, NULL},
    {"--cacert", OPT_TEXT, AT(cacert), 0, 0, NULL},
    {"--cacertdir", OPT_TEXT, AT(cacertdir), 0, 0, NULL},
    {"--cert", OPT_TEXT, AT(cert), 0, 0, NULL},
    {"--key", OPT_TEXT, AT(key), 0, 0, NULL},
    {"--sni", OPT_TEXT, AT(sni), 0, 0, NULL},
    {"--reserve", OPT_U64, AT(reserve), 1, UINT64_MAX, "a capacity"},
    {"--count", OPT_U64, AT(count), 1, UINT64_MAX, "a count"},
    {"--batch", OPT_UINT, AT(batch), 1, LOAD_MAX_BATCH, NULL},
    {"--window", OPT_UINT, AT(window), 1, LOAD_MAX_WINDOW, NULL},
    {"--verify", OPT_UINT, AT(verify), 0, LOAD_MAX_VERIFY, NULL},
    {"--format", OPT_FORMAT, AT(format), 0, 0, NULL},
    {"--column", OPT_TEXT, AT(column_name), 0, 0, NULL},
};

static const struct valued *valued_option(const char *name)
{
    for (size_t k = 0; k < sizeof(valued_options) / sizeof(valued_options[0]);
         k++)
        if (strcmp(name, valued_options[k].name) == 0)
            return &valued_options[k];
    return NULL;
}

enum load_args_result load_args_parse(int argc, char **argv,
                                      struct load_opts *o, char *err,
                                      size_t errlen)
{
    memset(o, 0, sizeof(*o));
    o->host = "127.0.0.1";
    o->port = 6379;
    o->batch = LOAD_DEFAULT_BATCH;
    o->window = LOAD_DEFAULT_WINDOW;
    o->format = LOAD_LINES;
    const char *column = NULL;
    int npos = 0, only_pos = 0;
    if (errlen > 0)
        err[0] = '\0';

    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (only_pos || a[0] != '-' || strcmp(a, "-") == 0) {
            if (npos == 0)
                o->key_name = a;
            else if (npos == 1)
                o->file = a;
            else
                return bad(err, errlen, "unexpected argument '%.60s'", a);
            npos++;
            continue;
        }
        if (strcmp(a, "--") == 0) {
            only_pos = 1;
            continue;
        }
        if (strcmp(a, "--help") == 0)
            return LOAD_ARGS_HELP;
        if (strcmp(a, "--tls") == 0) {
            o->tls = 1;
            continue;
        }
        if (strcmp(a, "--insecure") == 0) {
            o->insecure = 1;
            continue;
        }
        if (strcmp(a, "--swap") == 0) {
            o->swap = 1;
            continue;
        }
        if (strcmp(a, "--quiet") == 0 || strcmp(a, "-q") == 0) {
            o->quiet = 1;
            continue;
        }
        /* Every other option takes a value. */
        const struct valued *opt = valued_option(a);
        if (opt == NULL)
            return bad(err, errlen, "unknown option '%.60s'", a);
        if (i + 1 >= argc)
            return bad(err, errlen, "%.60s needs a value", a);
        const char *v = argv[++i];
        char *field = (char *)o + opt->offset;
        uint64_t n = 0;
        if (opt->kind != OPT_TEXT && opt->kind != OPT_FORMAT &&
            number(v, opt->lo, opt->hi, &n) < 0) {
            if (opt->what != NULL)
                return bad(err, errlen, "%s: '%.60s' is not %s", a, v,
                           opt->what);
            return bad(err, errlen, "%s: must be %llu to %llu", a,
                       (unsigned long long)opt->lo,
                       (unsigned long long)opt->hi);
        }
        switch (opt->kind) {
        case OPT_TEXT:
            if (strcmp(a, "--column") == 0)
                column = v; /* read once the format is known */
            else
                memcpy(field, &v, sizeof(v));
            break;
        case OPT_INT: {
            int x = (int)n;
            memcpy(field, &x, sizeof(x));
            break;
        }
        case OPT_UINT: {
            unsigned x = (unsigned)n;
            memcpy(field, &x, sizeof(x));
            break;
        }
        case OPT_U64:
            memcpy(field, &n, sizeof(n));
            break;
        case OPT_FORMAT:
            if (strcmp(v, "lines") == 0)
                o->format = LOAD_LINES;
            else if (strcmp(v, "nul") == 0)
                o->format = LOAD_NUL;
            else if (strcmp(v, "csv") == 0)
                o->format = LOAD_CSV;
            else if (strcmp(v, "copy") == 0)
                o->format = LOAD_COPY;
            else
                return bad(err, errlen,
                           "--format: '%.60s' is not lines, nul, csv or copy",
                           v);
            break;
        }
    }

    if (o->key_name == NULL)
        return bad(err, errlen, "no KEY given");
    if (o->key_name[0] == '\0')
        return bad(err, errlen, "KEY is empty");
    if (o->file != NULL && strcmp(o->file, "-") == 0)
        o->file = NULL;
    if (column != NULL) {
        if (o->format != LOAD_CSV && o->format != LOAD_COPY)
            return bad(err, errlen, "--column needs --format csv or copy");
        uint64_t n;
        if (number(column, 1, 100000, &n) == 0)
            o->column = (unsigned)n;
        else if (o->format == LOAD_CSV && column[0] != '\0' &&
                 (column[0] < '0' || column[0] > '9'))
            o->column_name = column;
        else
            return bad(err, errlen,
                       "--column: '%.60s' is not a column number%s", column,
                       o->format == LOAD_CSV ? " or name" : "");
    }
    if (o->user != NULL && o->pass == NULL)
        return bad(err, errlen, "--user needs --pass");
    if ((o->cert == NULL) != (o->key == NULL))
        return bad(err, errlen, "--cert and --key go together");
    if (!o->tls &&
        (o->cacert || o->cacertdir || o->cert || o->sni || o->insecure))
        return bad(err, errlen, "TLS options need --tls");
    if (o->tls && o->socket != NULL)
        return bad(err, errlen, "--tls does not go with -s");
    return LOAD_ARGS_OK;
}
