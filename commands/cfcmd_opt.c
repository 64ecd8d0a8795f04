/*
 * cfcmd_opt.c - see cfcmd_opt.h.
 */
#include "cfcmd_opt.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

uint32_t cfcmd_rate_fp_bits(uint32_t bucket_size, double rate)
{
    cf_params_t p;
    cf_params_default(&p);
    p.bucket_size = bucket_size;
    if (cf_params_for_error_rate(&p, rate) != 0)
        return 0;
    uint32_t plain = cf_fp_bits_for_rate(bucket_size, rate);
    return plain != 0 ? plain : 16;
}

const cfcmd_opt_t cfcmd_opts[CFCMD_NOPTS] = {
    [CFCMD_OPT_BUCKET_SIZE] = {"cf-bucket-size", CFCMD_OPT_BUCKET_SIZE, false,
                               1, CF_MAX_BUCKET_SIZE},
    [CFCMD_OPT_FP_BITS] = {"cf-fingerprint-bits", CFCMD_OPT_FP_BITS, false, 8,
                           16},
    [CFCMD_OPT_ERROR_RATE] = {"cf-error-rate", CFCMD_OPT_ERROR_RATE, true, 0,
                              0},
    [CFCMD_OPT_MAX_ITERATIONS] = {"cf-max-iterations", CFCMD_OPT_MAX_ITERATIONS,
                                  false, 1, CF_MAX_KICKS},
    [CFCMD_OPT_EXPANSION] = {"cf-expansion-factor", CFCMD_OPT_EXPANSION, false,
                             0, CF_MAX_EXPANSION},
    [CFCMD_OPT_MAX_EXPANSIONS] = {"cf-max-expansions", CFCMD_OPT_MAX_EXPANSIONS,
                                  false, 1, CF_MAX_FILTERS},
    [CFCMD_OPT_INITIAL_SIZE] = {"cf-initial-size", CFCMD_OPT_INITIAL_SIZE,
                                false, 2, CFCMD_MAX_INITIAL_SIZE},
};

const cfcmd_opt_t *cfcmd_opt_find(const char *name, size_t len)
{
    for (size_t i = 0; i < CFCMD_NOPTS; i++)
        if (strlen(cfcmd_opts[i].name) == len &&
            strncasecmp(cfcmd_opts[i].name, name, len) == 0)
            return &cfcmd_opts[i];
    return NULL;
}

void cfcmd_defaults_init(cfcmd_defaults_t *d)
{
    cf_params_t p;
    cf_params_default(&p);
    memset(d, 0, sizeof(*d));
    d->bucket_size = p.bucket_size;
    d->fp_bits = p.fp_bits;
    d->max_iterations = p.max_kicks;
    d->expansion = p.expansion;
    d->max_expansions = p.max_filters;
    d->initial_size = p.capacity;
}

static int opt_refuse(char *why, size_t whylen, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static int opt_refuse(char *why, size_t whylen, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(why, whylen, fmt, ap);
    va_end(ap);
    return -EINVAL;
}

/* The cross-checks of cfcmd_opt_set(), for a value within o's bounds. */
static int opt_check(const cfcmd_defaults_t *d, const cfcmd_opt_t *o,
                     uint64_t v, double rate, char *why, size_t whylen)
{
    switch (o->id) {
    case CFCMD_OPT_BUCKET_SIZE:
        if (v * 2 > d->initial_size)
            return opt_refuse(why, whylen,
                              "cf-initial-size %llu must be at least twice "
                              "the bucket size",
                              (unsigned long long)d->initial_size);
        if (d->error_rate > 0 &&
            cfcmd_rate_fp_bits((uint32_t)v, d->error_rate) == 0)
            return opt_refuse(why, whylen,
                              "cf-error-rate %g cannot be met with this "
                              "bucket size",
                              d->error_rate);
        return 0;
    case CFCMD_OPT_FP_BITS:
        if (v != 8 && v != 12 && v != 16)
            return opt_refuse(why, whylen, "argument must be 8, 12 or 16");
        return 0;
    case CFCMD_OPT_ERROR_RATE:
        if (rate == 0)
            return 0;
        if (!(rate > 0 && rate < 1))
            return opt_refuse(why, whylen,
                              "argument must be 0 (unset) or between 0 and 1");
        if (cfcmd_rate_fp_bits(d->bucket_size, rate) == 0)
            return opt_refuse(why, whylen,
                              "rate %g is below what the finest fingerprints "
                              "(17-bit semi-sorted at bucket size 4, else "
                              "16-bit) give with bucket size %u",
                              rate, (unsigned)d->bucket_size);
        return 0;
    case CFCMD_OPT_INITIAL_SIZE:
        if (v < 2ull * d->bucket_size)
            return opt_refuse(why, whylen,
                              "argument must be at least twice "
                              "cf-bucket-size (%u)",
                              (unsigned)d->bucket_size);
        return 0;
    default:
        return 0;
    }
}

int cfcmd_opt_set(cfcmd_defaults_t *d, const cfcmd_opt_t *o, uint64_t v,
                  double rate, char *why, size_t whylen)
{
    if (!o->rate && (v < o->min || v > o->max))
        return opt_refuse(
            why, whylen, "argument must be between %llu and %llu inclusive",
            (unsigned long long)o->min, (unsigned long long)o->max);
    int rc = opt_check(d, o, v, rate, why, whylen);
    if (rc < 0)
        return rc;
    switch (o->id) {
    case CFCMD_OPT_BUCKET_SIZE:
        d->bucket_size = (uint32_t)v;
        break;
    case CFCMD_OPT_FP_BITS:
        d->fp_bits = (uint32_t)v;
        d->error_rate = 0; /* an explicit width overrides a rate */
        break;
    case CFCMD_OPT_ERROR_RATE:
        d->error_rate = rate;
        break;
    case CFCMD_OPT_MAX_ITERATIONS:
        d->max_iterations = (uint32_t)v;
        break;
    case CFCMD_OPT_EXPANSION:
        d->expansion = (uint32_t)v;
        break;
    case CFCMD_OPT_MAX_EXPANSIONS:
        d->max_expansions = (uint32_t)v;
        break;
    case CFCMD_OPT_INITIAL_SIZE:
        d->initial_size = v;
        break;
    default:
        break;
    }
    /* A rate stands for the width it needs at the (new) bucket size. */
    if (d->error_rate > 0 &&
        (o->id == CFCMD_OPT_BUCKET_SIZE || o->id == CFCMD_OPT_ERROR_RATE))
        d->fp_bits = cfcmd_rate_fp_bits(d->bucket_size, d->error_rate);
    return 0;
}
