/*
 * fuzz_resp.c - libFuzzer harness for the request parser.
 *
 * The first input byte picks where the rest is split into two feeds, so a
 * frame cut anywhere is exercised; small limits make every cap reachable.
 * Each returned command is checked against the contract: argc >= 1 and
 * every argument NUL-terminated past its length. The same input fed whole
 * must give the same commands and the same error as the split feeds, and
 * so must it with looks ahead (resp_parser_peek) of varying depth between
 * the commands, whose frames the parser then takes from what it kept.
 */
#include <errno.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "resp.h"

/* FNV-1a over everything the parser returned. */
static uint64_t mix(uint64_t h, const void *p, size_t n)
{
    const unsigned char *b = p;

    for (size_t i = 0; i < n; i++)
        h = (h ^ b[i]) * 0x100000001b3ull;
    return h;
}

static uint64_t check_cmd(uint64_t h, const resp_cmd_t *c)
{
    if (c->argc < 1 || c->argv == NULL)
        abort();
    h = mix(h, &c->argc, sizeof(c->argc));
    for (int i = 0; i < c->argc; i++) {
        if (c->argv[i].ptr == NULL || c->argv[i].ptr[c->argv[i].len] != '\0')
            abort();
        h = mix(h, &c->argv[i].len, sizeof(c->argv[i].len));
        h = mix(h, c->argv[i].ptr, c->argv[i].len);
    }
    return h;
}

/* Returns next()'s last result after draining everything ready; with
 * peek, looks ahead now and then first (up to 1, 2, ... 5 frames). */
static int drain(resp_parser_t *p, uint64_t *h, bool peek)
{
    resp_cmd_t *c;
    size_t ahead = 0, n = 0;
    int rc;

    for (;;) {
        if (peek && ahead == 0) {
            const resp_peek_t *pk;
            size_t k = resp_parser_peek(p, &pk, 1 + n % 5, 3);
            for (size_t i = 0; i < k; i++)
                if (pk[i].argc < 1 || pk[i].argv[0].ptr == NULL)
                    abort();
            ahead = 1 + n % 3;
        }
        if ((rc = resp_parser_next(p, &c)) != 1)
            return rc;
        *h = check_cmd(*h, c);
        n++;
        if (ahead > 0)
            ahead--;
    }
}

static void check_error(resp_parser_t *p, int rc)
{
    resp_cmd_t *c;

    if (rc == 0)
        return;
    if (rc != -EPROTO && rc != -ENOMEM)
        abort();
    /* Sticky, with a message. */
    if (resp_parser_error(p) == NULL || resp_parser_next(p, &c) != rc ||
        resp_parser_feed(p, "PING\r\n", 6) != rc)
        abort();
}

static void set_limits(resp_limits_t *lim)
{
    resp_limits_default(lim);
    lim->max_bulk_len = 64;
    lim->max_query_buf = 4096;
    lim->max_args = 16;
    lim->max_inline_len = 128;
}

/* Feeds data in one piece, or two when cut < size; returns the last
 * result, the digest of the commands in *h and the error text in err. */
static int run(const uint8_t *data, size_t size, size_t cut, bool peek,
               uint64_t *h, char *err, size_t errlen)
{
    resp_limits_t lim;
    resp_parser_t *p;
    int rc;

    set_limits(&lim);
    p = resp_parser_new(&lim);
    if (p == NULL)
        abort();
    *h = 0xcbf29ce484222325ull;
    rc = resp_parser_feed(p, (const char *)data, cut);
    if (rc == 0)
        rc = drain(p, h, peek);
    if (rc == 0 && cut < size) {
        rc = resp_parser_feed(p, (const char *)data + cut, size - cut);
        if (rc == 0)
            rc = drain(p, h, peek);
    }
    check_error(p, rc);
    if (rc == 0 && resp_parser_pending(p) > size)
        abort();
    snprintf(err, errlen, "%s", rc != 0 ? resp_parser_error(p) : "");
    resp_parser_free(p);
    return rc;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char err1[128], err2[128];
    uint64_t h1, h2;
    size_t cut;
    int rc1, rc2;

    if (size < 1)
        return 0;
    cut = data[0];
    data++;
    size--;
    if (cut > size)
        cut = size;

    rc1 = run(data, size, cut, false, &h1, err1, sizeof(err1));
    rc2 = run(data, size, cut, true, &h2, err2, sizeof(err2));
    if (rc1 != rc2 || h1 != h2 || strcmp(err1, err2) != 0)
        abort();
    if (size > 4096)
        return 0; /* whole, it would pass the query buffer limit */
    rc2 = run(data, size, size, false, &h2, err2, sizeof(err2));
    if (rc1 != rc2 || h1 != h2 || strcmp(err1, err2) != 0)
        abort();
    return 0;
}
