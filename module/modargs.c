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
    cf_params_t p;
    cf_params_default(&p); /* the core's defaults, the daemon's too */
    memset(d, 0, sizeof(*d));
    d->bucket_size = p.bucket_size;
    d->fp_bits = p.fp_bits;
    d->max_iterations = p.max_kicks;
    d->expansion = p.expansion;
    d->max_expansions = p.max_filters;
    d->initial_size = p.capacity;
}

static int fail(char *why, size_t whylen, const arg_t *name,
                const char *msg)
{
    snprintf(why, whylen, "%.*s: %s", (int)(name->len < 64 ? name->len : 64),
             name->ptr, msg);
    return -EINVAL;
}

/* Parses an integer argument within lo..hi; false with the daemon's words
 * in msg otherwise (a negative number is out of range, not unparsable). */
static bool parse_range(const arg_t *v, uint64_t lo, uint64_t hi,
                        uint64_t *out, char *msg, size_t msglen)
{
    long long neg;
    if (!arg_u64(v, out) &&
        !(arg_ll(v, &neg) && neg < 0)) {
        snprintf(msg, msglen, "argument couldn't be parsed into an integer");
        return false;
    }
    if (!arg_u64(v, out) || *out < lo || *out > hi) {
        snprintf(msg, msglen,
                 "argument must be between %llu and %llu inclusive",
                 (unsigned long long)lo, (unsigned long long)hi);
        return false;
    }
    return true;
}

int modargs_parse(cfcmd_defaults_t *d, int argc, const arg_t *argv,
                  char *why, size_t whylen)
{
    char msg[160];
    if (argc % 2 != 0)
        return fail(why, whylen, &argv[argc - 1], "missing value");
    for (int i = 0; i < argc; i += 2) {
        const arg_t *n = &argv[i], *v = &argv[i + 1];
        uint64_t u = 0;
        if (arg_is(n, "cf-bucket-size")) {
            if (!parse_range(v, 1, CF_MAX_BUCKET_SIZE, &u, msg, sizeof(msg)))
                return fail(why, whylen, n, msg);
            if (u * 2 > d->initial_size) {
                snprintf(msg, sizeof(msg),
                         "cf-initial-size %llu must be at least twice the "
                         "bucket size",
                         (unsigned long long)d->initial_size);
                return fail(why, whylen, n, msg);
            }
            if (d->error_rate > 0 &&
                cfcmd_rate_fp_bits((uint32_t)u, d->error_rate) == 0) {
                snprintf(msg, sizeof(msg),
                         "cf-error-rate %g cannot be met with this bucket "
                         "size",
                         d->error_rate);
                return fail(why, whylen, n, msg);
            }
            d->bucket_size = (uint32_t)u;
            if (d->error_rate > 0)
                d->fp_bits = cfcmd_rate_fp_bits(d->bucket_size, d->error_rate);
        } else if (arg_is(n, "cf-fingerprint-bits")) {
            if (!parse_range(v, 8, 16, &u, msg, sizeof(msg)))
                return fail(why, whylen, n, msg);
            if (u != 8 && u != 12 && u != 16)
                return fail(why, whylen, n, "argument must be 8, 12 or 16");
            d->fp_bits = (uint32_t)u;
            d->error_rate = 0; /* an explicit width overrides a rate */
        } else if (arg_is(n, "cf-error-rate")) {
            double r;
            if (!arg_double(v, &r))
                return fail(why, whylen, n,
                            "argument couldn't be parsed into a number");
            if (r != 0 && !(r > 0 && r < 1))
                return fail(why, whylen, n,
                            "argument must be 0 (unset) or between 0 and 1");
            if (r > 0 && cfcmd_rate_fp_bits(d->bucket_size, r) == 0) {
                snprintf(msg, sizeof(msg),
                         "rate %g is below what the finest fingerprints "
                         "(17-bit semi-sorted at bucket size 4, else 16-bit) "
                         "give with bucket size %u",
                         r, (unsigned)d->bucket_size);
                return fail(why, whylen, n, msg);
            }
            d->error_rate = r;
            if (r > 0)
                d->fp_bits = cfcmd_rate_fp_bits(d->bucket_size, r);
        } else if (arg_is(n, "cf-max-iterations")) {
            if (!parse_range(v, 1, CF_MAX_KICKS, &u, msg, sizeof(msg)))
                return fail(why, whylen, n, msg);
            d->max_iterations = (uint32_t)u;
        } else if (arg_is(n, "cf-expansion-factor")) {
            if (!parse_range(v, 0, CF_MAX_EXPANSION, &u, msg, sizeof(msg)))
                return fail(why, whylen, n, msg);
            d->expansion = (uint32_t)u;
        } else if (arg_is(n, "cf-max-expansions")) {
            if (!parse_range(v, 1, CF_MAX_FILTERS, &u, msg, sizeof(msg)))
                return fail(why, whylen, n, msg);
            d->max_expansions = (uint32_t)u;
        } else if (arg_is(n, "cf-initial-size")) {
            if (!parse_range(v, 2, MODARGS_MAX_INITIAL_SIZE, &u, msg,
                             sizeof(msg)))
                return fail(why, whylen, n, msg);
            if (u < 2ull * d->bucket_size) {
                snprintf(msg, sizeof(msg),
                         "argument must be at least twice cf-bucket-size "
                         "(%u)",
                         (unsigned)d->bucket_size);
                return fail(why, whylen, n, msg);
            }
            d->initial_size = u;
        } else {
            return fail(why, whylen, n, "unknown module argument");
        }
    }
    return 0;
}
