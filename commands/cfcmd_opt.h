/*
 * cfcmd_opt.h - the defaults of the filters the CF.* commands create
 * without being told (the daemon's cf-* directives, the module's load
 * arguments): one table of names and bounds and one check for both hosts.
 * cfcmd.h includes it.
 *
 * Contract: pure functions over the caller's structs; no allocation, no
 * I/O. Implemented in cfcmd_opt.c.
 */
#ifndef CFCMD_OPT_H
#define CFCMD_OPT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "cf.h"

/* Defaults of filters that a command creates without being told (the
 * host's cf-* directives or module arguments). 0 in a field means the
 * core's default (cf_params_default()). */
typedef struct cfcmd_defaults {
    uint32_t bucket_size;
    uint32_t fp_bits;
    double error_rate; /* > 0: picks fp_bits from the rate */
    uint32_t max_iterations;
    uint32_t expansion;      /* used as given: 0 means "never grow" */
    uint32_t max_expansions; /* sub-filter cap, clamped to 1..CF_MAX_FILTERS */
    uint64_t initial_size;
} cfcmd_defaults_t;

/* The fingerprint width a configured default rate stands for (both hosts'
 * cf-error-rate): the rate is accepted when some encoding at this bucket
 * size meets it (cf_params_for_error_rate(): plain 8/12/16, and at bucket
 * size 4 semi-sorted 9/13/17, the smallest chosen when a filter is made);
 * the width kept is the smallest plain one that meets it, else 16, the
 * fallback of a CF.RESERVE whose own bucket size cannot meet the rate.
 * 0 when no encoding meets it. */
uint32_t cfcmd_rate_fp_bits(uint32_t bucket_size, double rate);

/* The cf-* defaults both hosts accept (the daemon's directives, the
 * module's load arguments): one table of names and bounds and one check, so
 * that a value one host accepts the other accepts too, refused in the same
 * words. */
typedef enum cfcmd_opt_id {
    CFCMD_OPT_BUCKET_SIZE,
    CFCMD_OPT_FP_BITS,
    CFCMD_OPT_ERROR_RATE,
    CFCMD_OPT_MAX_ITERATIONS,
    CFCMD_OPT_EXPANSION,
    CFCMD_OPT_MAX_EXPANSIONS,
    CFCMD_OPT_INITIAL_SIZE,
    CFCMD_NOPTS
} cfcmd_opt_id_t;

typedef struct cfcmd_opt {
    const char *name; /* lower case, e.g. "cf-bucket-size" */
    cfcmd_opt_id_t id;
    bool rate;         /* a number (0, or strictly between 0 and 1) */
    uint64_t min, max; /* an integer option's bounds, inclusive */
} cfcmd_opt_t;

/* CFCMD_NOPTS entries, indexed by id. */
extern const cfcmd_opt_t cfcmd_opts[CFCMD_NOPTS];

/* The largest cf-initial-size: the core takes more, but a default that
 * large would make every auto-created filter a big allocation. */
#define CFCMD_MAX_INITIAL_SIZE (1ull << 32)

/* The option named by the len bytes at name (any case), or NULL. */
const cfcmd_opt_t *cfcmd_opt_find(const char *name, size_t len);

/* The core's defaults (cf_params_default()), without a rate: what both
 * hosts start from. */
void cfcmd_defaults_init(cfcmd_defaults_t *d);

/* Sets option o of *d to v (an integer option) or rate (o->rate), checked
 * against o's bounds and against the other fields of *d: a bucket size
 * against the initial size and a set rate, a rate against the bucket size,
 * a width must be 8, 12 or 16, an initial size at least twice the bucket
 * size. Then updates what the value implies (a rate picks fp_bits, a width
 * clears the rate). Returns 0, or -EINVAL with the refusal in why (whylen
 * bytes; the words both hosts show after the option's name), *d being
 * unchanged then. */
int cfcmd_opt_set(cfcmd_defaults_t *d, const cfcmd_opt_t *o, uint64_t v,
                  double rate, char *why, size_t whylen);

#endif /* CFCMD_OPT_H */
