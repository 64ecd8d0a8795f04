/*
 * cfcmd.h - the CF.* command family (RedisBloom's CF.RESERVE ... CF.LOADCHUNK),
 * written once against a small host interface. The daemon (server/) and the
 * Redis/Valkey module (module/) are its hosts: each supplies the keyspace,
 * a reply sink, change notification and the memory left to grow into, and
 * registers cfcmd_table in its own command table.
 *
 * Argument parsing, bounds, error wording, RESP2/RESP3 reply shapes and the
 * COMMAND DOCS text of the family live here and nowhere else.
 *
 * Contract: one call at a time per host context; nothing here keeps state
 * between calls. Includes filter/ and nothing of the hosts or libuv.
 */
#ifndef CFCMD_H
#define CFCMD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "cf.h"
#include "cmdarg.h"

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

/* What a host gives the commands. Every function gets the host's per-call
 * context h (for the daemon, the client). */
typedef struct cfcmd_host {
    /* The filter under key, or NULL when the key is absent. Returns
     * -EINVAL when the key holds another type (the command answers
     * WRONGTYPE), else 0. A lookup for a read counts a keyspace hit or
     * miss; prefetch lookups pass read = false and count nothing. */
    int (*find)(void *h, const arg_t *key, bool read, cf_filter_t **out);
    /* Stores *f, a new filter, under key (absent: find() said so). The host
     * takes the filter on 0 and may have moved it: *f is then its address
     * (the one passed is stale). -ENOMEM leaves *f unchanged and the
     * filter to the caller. */
    int (*create)(void *h, const arg_t *key, cf_filter_t **f);
    /* The filter under key changed: changes counts the writes (the host's
     * dirty counter, replication), and the filter's size may have changed
     * (the host recounts its memory). Called once per command that
     * changed something, after the change. */
    void (*changed)(void *h, const arg_t *key, cf_filter_t *f,
                    uint64_t changes);
    /* Bytes that may still be allocated (UINT64_MAX: no known bound). With
     * *maxmemory set the bound is the host's maxmemory (the refusal is
     * Redis's OOM error), else the machine's memory. */
    uint64_t (*headroom)(void *h, bool *maxmemory);
    /* A seed for a new filter's hash. */
    uint64_t (*seed)(void *h);
    /* The defaults for filters created without parameters. */
    const cfcmd_defaults_t *(*defaults)(void *h);

    /* The reply sink. proto() is 2 or 3 (HELLO); the shapes follow it. */
    int (*proto)(void *h);
    void (*reply_int)(void *h, long long v);
    void (*reply_bool)(void *h, bool b); /* RESP2 :1/:0 */
    void (*reply_simple)(void *h, const char *s);
    void (*reply_error)(void *h, const char *s); /* the whole text */
    void (*reply_bulk)(void *h, const void *p, size_t len);
    void (*reply_null)(void *h);
    void (*reply_double)(void *h, double d);
    void (*reply_array)(void *h, size_t n);
    void (*reply_map)(void *h, size_t npairs); /* RESP2: a 2n array */
    /* Optional, NULL when the host has none (CFCMD_HOST_INIT leaves it
     * so): n reply_bool()s in one call, for the bulk commands' items. */
    void (*reply_bools)(void *h, const bool *v, size_t n);
} cfcmd_host_t;

/* The initializer of a host whose functions are named P##find,
 * P##create, ... P##map (P##int for reply_int, and so on). */
#define CFCMD_HOST_INIT(P)                                                     \
    {                                                                          \
        .find = P##find, .create = P##create, .changed = P##changed,           \
        .headroom = P##headroom, .seed = P##seed, .defaults = P##defaults,     \
        .proto = P##proto, .reply_int = P##int, .reply_bool = P##bool,         \
        .reply_simple = P##simple, .reply_error = P##error,                    \
        .reply_bulk = P##bulk, .reply_null = P##null,                          \
        .reply_double = P##double, .reply_array = P##array,                    \
        .reply_map = P##map,                                                   \
    }

typedef void cfcmd_proc_t(const cfcmd_host_t *host, void *h, int argc,
                          const arg_t *argv);

/* One command of the family, with what a host's table and COMMAND DOCS
 * need. Keys: argument 1 only (first = last = step = 1). */
typedef struct cfcmd_def {
    const char *name; /* lower case, e.g. "cf.add" */
    int arity;        /* N exact, -N at least N (name included) */
    unsigned flags;   /* CMD_* of cmdarg.h */
    cfcmd_proc_t *proc;
    /* Starts loading what the command will probe (argv holds at least the
     * name, key and first item), so that the cache misses of the commands
     * of a pipeline overlap. NULL when not worth it. */
    cfcmd_proc_t *prefetch;
    const char *summary;
    const char *since;
    const char *complexity;
    const cmd_arg_t *args; /* NULL-name terminated */
} cfcmd_def_t;

/* The thirteen commands, NULL-name terminated. */
extern const cfcmd_def_t cfcmd_table[];

/* Group name for COMMAND DOCS / redis-cli `help @cf`. */
#define CFCMD_GROUP "cf"

#endif /* CFCMD_H */
