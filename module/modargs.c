/*
 * modargs.c - see modargs.h. The checks mirror the daemon's config
 * directives, so a value one host accepts the other accepts too.
 */
#include "modargs.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The daemon's cap on cf-initial-size. */
#define MODARGS_MAX_INITIAL_SIZE (1ull << 32)

void modargs_default(cfcmd_defaults_t *d)
{
    memset(d, 0, sizeof(*d));
    d->bucket_size = 4;
    d->fp_bits = 12;
    d->error_rate = 0;
    d->max_iterations = 500;
    d->expansion = 1;
    d->max_expansions = CF_DEFAULT_MAX_FILTERS;
    d->initial_size = 1024;
}

static int fail(char *why, size_t whylen, const cmdarg_t *name,
                const char *msg)
{
    snprintf(why, whylen, "%.*s: %s", (int)(name->len < 64 ? name->len : 64),
             name->ptr, msg);
    return -EINVAL;
}

int modargs_parse(cfcmd_defaults_t *d, int argc, const cmdarg_t *argv,
                  char *why, size_t whylen)
{
    char msg[128];
    if (argc % 2 != 0)
        return fail(why, whylen, &argv[argc - 1], "missing value");
    for (int i = 0; i < argc; i += 2) {
        const cmdarg_t *n = &argv[i], *v = &argv[i + 1];
        uint64_t u = 0;
        bool num = cmdarg_u64(v->ptr, v->len, &u);
        if (cmdarg_is(n->ptr, n->len, "cf-bucket-size")) {
            if (!num || u < 1 || u > CF_MAX_BUCKET_SIZE)
                return fail(why, whylen, n, "argument must be 1..255");
            if (u * 2 > d->initial_size) {
                snprintf(msg, sizeof(msg),
                         "cf-initial-size %llu must be at least twice the "
                         "bucket size",
                         (unsigned long long)d->initial_size);
                return fail(why, whylen, n, msg);
            }
            if (d->error_rate > 0 &&
                cf_fp_bits_for_rate((uint32_t)u, d->error_rate) == 0)
                return fail(why, whylen, n,
                            "cf-error-rate cannot be met with this bucket "
                            "size");
            d->bucket_size = (uint32_t)u;
            if (d->error_rate > 0)
                d->fp_bits = cf_fp_bits_for_rate(d->bucket_size,
                                                 d->error_rate);
        } else if (cmdarg_is(n->ptr, n->len, "cf-fingerprint-bits")) {
            if (!num || (u != 8 && u != 12 && u != 16))
                return fail(why, whylen, n, "argument must be 8, 12 or 16");
            d->fp_bits = (uint32_t)u;
            d->error_rate = 0; /* an explicit width overrides a rate */
        } else if (cmdarg_is(n->ptr, n->len, "cf-error-rate")) {
            double r;
            if (!cmdarg_double(v->ptr, v->len, &r))
                return fail(why, whylen, n, "argument must be a number");
            if (r != 0 && !(r > 0 && r < 1))
                return fail(why, whylen, n,
                            "argument must be 0 (unset) or between 0 and 1");
            if (r > 0 && cf_fp_bits_for_rate(d->bucket_size, r) == 0)
                return fail(why, whylen, n,
                            "rate is below what 16-bit fingerprints give "
                            "with this bucket size");
            d->error_rate = r;
            if (r > 0)
                d->fp_bits = cf_fp_bits_for_rate(d->bucket_size, r);
        } else if (cmdarg_is(n->ptr, n->len, "cf-max-iterations")) {
            if (!num || u < 1 || u > CF_MAX_KICKS)
                return fail(why, whylen, n, "argument must be 1..65535");
            d->max_iterations = (uint32_t)u;
        } else if (cmdarg_is(n->ptr, n->len, "cf-expansion-factor")) {
            if (!num || u > CF_MAX_EXPANSION)
                return fail(why, whylen, n, "argument must be 0..32768");
            d->expansion = (uint32_t)u;
        } else if (cmdarg_is(n->ptr, n->len, "cf-max-expansions")) {
            if (!num || u < 1 || u > CF_MAX_FILTERS)
                return fail(why, whylen, n, "argument must be 1..64");
            d->max_expansions = (uint32_t)u;
        } else if (cmdarg_is(n->ptr, n->len, "cf-initial-size")) {
            if (!num || u > MODARGS_MAX_INITIAL_SIZE)
                return fail(why, whylen, n, "argument must be 2..4294967296");
            if (u < 2ull * d->bucket_size)
                return fail(why, whylen, n,
                            "argument must be at least twice "
                            "cf-bucket-size");
            d->initial_size = u;
        } else {
            return fail(why, whylen, n, "unknown module argument");
        }
    }
    return 0;
}
