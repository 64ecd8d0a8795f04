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
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"

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
        static const char *const valued[] = {
            "-h",       "-p",       "-s",        "-n",          "-a",
            "--pass",   "--user",   "--cacert",  "--cacertdir", "--cert",
            "--key",    "--sni",    "--reserve", "--count",     "--batch",
            "--window", "--verify", "--format",  "--column"};
        size_t k = 0;
        while (k < sizeof(valued) / sizeof(valued[0]) &&
               strcmp(a, valued[k]) != 0)
            k++;
        if (k == sizeof(valued) / sizeof(valued[0]))
            return bad(err, errlen, "unknown option '%.60s'", a);
        if (i + 1 >= argc)
            return bad(err, errlen, "%.60s needs a value", a);
        const char *v = argv[++i];
        uint64_t n;
        if (strcmp(a, "-h") == 0) {
            o->host = v;
        } else if (strcmp(a, "-p") == 0) {
            if (number(v, 1, 65535, &n) < 0)
                return bad(err, errlen, "-p: '%.60s' is not a port", v);
            o->port = (int)n;
        } else if (strcmp(a, "-s") == 0) {
            o->socket = v;
        } else if (strcmp(a, "-n") == 0) {
            if (number(v, 0, 1000000, &n) < 0)
                return bad(err, errlen, "-n: '%.60s' is not a database", v);
            o->db = (int)n;
        } else if (strcmp(a, "-a") == 0 || strcmp(a, "--pass") == 0) {
            o->pass = v;
        } else if (strcmp(a, "--user") == 0) {
            o->user = v;
        } else if (strcmp(a, "--cacert") == 0) {
            o->cacert = v;
        } else if (strcmp(a, "--cacertdir") == 0) {
            o->cacertdir = v;
        } else if (strcmp(a, "--cert") == 0) {
            o->cert = v;
        } else if (strcmp(a, "--key") == 0) {
            o->key = v;
        } else if (strcmp(a, "--sni") == 0) {
            o->sni = v;
        } else if (strcmp(a, "--reserve") == 0) {
            if (number(v, 1, UINT64_MAX, &n) < 0)
                return bad(err, errlen, "--reserve: '%.60s' is not a capacity",
                           v);
            o->reserve = n;
        } else if (strcmp(a, "--count") == 0) {
            if (number(v, 1, UINT64_MAX, &n) < 0)
                return bad(err, errlen, "--count: '%.60s' is not a count", v);
            o->count = n;
        } else if (strcmp(a, "--batch") == 0) {
            if (number(v, 1, LOAD_MAX_BATCH, &n) < 0)
                return bad(err, errlen, "--batch: must be 1 to %u",
                           LOAD_MAX_BATCH);
            o->batch = (unsigned)n;
        } else if (strcmp(a, "--window") == 0) {
            if (number(v, 1, LOAD_MAX_WINDOW, &n) < 0)
                return bad(err, errlen, "--window: must be 1 to %u",
                           LOAD_MAX_WINDOW);
            o->window = (unsigned)n;
        } else if (strcmp(a, "--verify") == 0) {
            if (number(v, 0, LOAD_MAX_VERIFY, &n) < 0)
                return bad(err, errlen, "--verify: must be 0 to %u",
                           LOAD_MAX_VERIFY);
            o->verify = (unsigned)n;
        } else if (strcmp(a, "--format") == 0) {
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
        } else if (strcmp(a, "--column") == 0) {
            column = v;
        } else {
            CK_ASSERT(0); /* every name of valued[] has its branch */
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
