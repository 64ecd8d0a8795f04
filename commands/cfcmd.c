/*
 * cfcmd.c - the CF.* command family, RedisBloom-compatible in arguments,
 * reply shapes (RESP2 and RESP3) and error families; see cfcmd.h.
 *
 * Choices where RedisBloom leaves room:
 *  - Our own error texts carry Redis's "ERR " prefix; the message content is
 *    RedisBloom's ("ERR Filter is full", "ERR Bad capacity", ...).
 *  - CF.INSERT/CF.INSERTNX try every item even after one did not fit (as
 *    RedisBloom does); each misfit answers -1 (RESP3 CF.INSERT: false).
 *  - CF.SCANDUMP always starts with the header chunk, even for a filter that
 *    holds nothing: the header carries the parameters (capacity, bucket size,
 *    fingerprint width, seed), so a dump of an empty reserved filter loads
 *    back as the same reserved filter. A filter never answers [0, nil] at
 *    iterator 0.
 *  - Iterators: 0 asks for the header, which is returned with iterator 1.
 *    A data chunk covering [off, end) is returned with iterator end + 1, and
 *    the next call asks for data from it - 1. CF.LOADCHUNK reads iterator 1 as
 *    the header and any other as the end of a data chunk:
 *    off = iterator - 1 - len(data).
 *  - The max_expansions default is the cap on sub-filters (RedisBloom's 32).
 *  - CF.INFO "Error rate" is the bound for one lookup over every sub-filter:
 *    nfilters * cf_error_bound(), capped at 1. A last field, ours,
 *    "Encoding", says "plain", "semi-sorted", "growable" (whose
 *    "Fingerprint bits" 15 and error rate are those of a new entry; older
 *    entries compare fewer bits, docs/growth.md), "growable pair" (two
 *    growable tables: the sum of their bits) or "window".
 *  - ERROR rate (ours) picks the encoding with the fewest bits per item
 *    whose bound meets the rate, plain or semi-sorted (cf.h); without it a
 *    filter is plain, with the configured width.
 *  - Memory: a new filter, a growth or a loaded header must fit in the
 *    host's headroom (maxmemory, or the machine's memory, less what is
 *    used), checked before anything is allocated. Over maxmemory the reply
 *    is Redis's OOM error; over the machine's memory it is CF_ERR_RAM.
 *  - A key of another type (only the module host has others): every
 *    command answers WRONGTYPE, reads too, as RedisBloom's do.
 *  - WINDOW ms (ours, CF.RESERVE and a CF.INSERT[NX] that creates): a
 *    filter whose items are forgotten a window after their last add
 *    (cf.h). It has bucket size 4 and 12-bit fingerprints and never
 *    grows (EXPANSION is not used; past its capacity an add answers
 *    "Filter is full"); an add of a present item refreshes it, CF.ADDNX's
 *    too. Every command gives such a filter the host's time first; a
 *    write is logged as CF.INSERT[NX] key AT ms ITEMS ... (AT, ours: the
 *    time of the adds, unix ms), so a replay stamps the same times.
 *    CF.INFO appends Window, Slack (ms), Live items and Stale items.
 */
#include "cfcmd.h"
#include "cfcmd_procs.h"

#include "check.h"
#include "errtext.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

/* ERRTEXT_OOM's refusal without maxmemory: the machine's memory is the
 * limit. */
#define CF_ERR_RAM "ERR capacity is too large for this machine's memory"
/* RedisBloom's refusal of a data chunk that does not fit its filter. */
#define CF_ERR_CHUNK "ERR Couldn't load chunk!"
/* RedisBloom's refusal of a capacity no filter can have. */
#define CF_ERR_NOMEM "ERR Insufficient memory to create filter"

/* Items handed to the core at once by CF.MEXISTS and CF.INSERT (the core
 * keeps its own prefetch window, CF_WINDOW, within a call; each call
 * starts it anew, so a command of up to this many items makes one call);
 * the per-batch arrays live on the stack. */
#define CFCMD_BATCH 128

/* Largest data chunk one CF.SCANDUMP returns. */
#define CF_DUMP_CHUNK ((size_t)4 << 20)

/* The call's host and context, passed down as one. */
typedef struct call {
    const cfcmd_host_t *host;
    void *h;
} call_t;

#define REPLY(c, fn, ...) (c)->host->reply_##fn((c)->h, __VA_ARGS__)

/* n boolean replies: in one call when the host can. */
static void reply_bools(const cfcmd_host_t *host, void *h, const bool *v,
                        size_t n)
{
    if (host->reply_bools != NULL) {
        host->reply_bools(h, v, n);
        return;
    }
    for (size_t j = 0; j < n; j++)
        host->reply_bool(h, v[j]);
}

static void reply_error(const call_t *c, const char *msg)
{
    c->host->reply_error(c->h, msg);
}

static void reply_arity(const call_t *c, const char *name)
{
    char msg[96];
    snprintf(msg, sizeof(msg), ERRTEXT_ARITY_FMT, name);
    reply_error(c, msg);
}

/* ---- argument parsing ---------------------------------------------------- */

/* A false-positive rate strictly between 0 and 1, the whole argument. */
static bool parse_rate(const arg_t *a, double *out)
{
    double d;
    if (!arg_double(a, &d) || d <= 0 || d >= 1)
        return false;
    *out = d;
    return true;
}

/* Parameters for a new filter from the host's defaults. rate is set to the
 * configured error rate (0 when the fingerprint width is configured). */
static void params_default(const call_t *c, cf_params_t *p, double *rate)
{
    const cfcmd_defaults_t *d = c->host->defaults(c->h);

    cf_params_default(p);
    if (d->bucket_size != 0)
        p->bucket_size = d->bucket_size;
    if (d->fp_bits != 0)
        p->fp_bits = d->fp_bits;
    if (d->max_iterations != 0)
        p->max_kicks = d->max_iterations;
    p->expansion = d->expansion;
    /* Defaults a host filled in without cfcmd_opt_set() are held to its
     * bounds all the same. */
    const cfcmd_opt_t *mx = &cfcmd_opts[CFCMD_OPT_MAX_EXPANSIONS];
    p->max_filters = d->max_expansions;
    if (p->max_filters < mx->min)
        p->max_filters = (uint32_t)mx->min;
    if (p->max_filters > mx->max)
        p->max_filters = (uint32_t)mx->max;
    if (d->initial_size != 0)
        p->capacity = d->initial_size;
    *rate = d->error_rate;
}

/* The growable shape (cf.h, docs/growth.md) for every filter that may
 * grow: EXPANSION 1 or more, bucket size 4 (given or by default), and
 * either no ERROR rate asked for in the command and a configured
 * fingerprint width of at most the default 12 bits (plain), or an ERROR
 * rate of at least CF_GROW_MIN_RATE that the fixed shapes would serve
 * with 12 bits or more (so the compact table costs no more at the
 * reserve): a compact table compares 13 bits (about 0.09% at its
 * capacity) and its rate after a 1000x growth is 0.23-0.24%
 * (docs/growth.md), so it keeps such a rate as it grows. A rate under
 * CF_GROW_MIN_RATE makes the growable pair (cf.h's CF_GROWABLE_PAIR: two
 * such tables, the product of their rates, 6e-6 after 1000x), which keeps
 * every rate the fixed shapes serve. Everything else keeps the fixed
 * shapes, with the nested chain when it grows: a larger rate (fewer bits,
 * less memory), a bucket size or a width the growable slot does not offer
 * is served exactly at the reserve. */
#define CF_GROW_MIN_RATE 0.005

static void choose_shape(cf_params_t *p, bool user_rate, double rate)
{
    bool may = p->expansion >= 1 && p->bucket_size == 4;
    if (user_rate && rate < CF_GROW_MIN_RATE) {
        p->growable = may ? CF_GROWABLE_PAIR : 0;
        return;
    }
    bool fits = user_rate ? p->fp_bits >= 12
                          : p->encoding == CF_ENC_PLAIN && p->fp_bits <= 12;
    p->growable = may && fits;
}

/* Applies rate to p's encoding and fingerprint width: the smallest, plain
 * or semi-sorted, whose bound meets it (cf_params_for_error_rate), then
 * chooses the shape (choose_shape()). A rate the user asked for must be
 * achievable; one from the defaults falls back to their (plain) width. */
static bool apply_rate(cf_params_t *p, double rate, bool from_user)
{
    bool ok = rate <= 0 || cf_params_for_error_rate(p, rate) == 0 || !from_user;
    choose_shape(p, from_user, rate);
    return ok;
}

/* Parses "NAME value" for an integer option with RedisBloom's bounds
 * (hi at most INT64_MAX). */
static bool parse_range(const call_t *c, const char *name, const arg_t *a,
                        uint64_t lo, uint64_t hi, uint64_t *out)
{
    long long v;
    char msg[128];

    /* As RedisBloom: what is not an integer at all (string2ll's rules) is
     * not parsed; an integer out of range gets the range. */
    if (!arg_ll(a, &v)) {
        snprintf(msg, sizeof(msg), "ERR Couldn't parse %s", name);
        reply_error(c, msg);
        return false;
    }
    if (v < 0 || (uint64_t)v < lo || (uint64_t)v > hi) {
        snprintf(msg, sizeof(msg),
                 "ERR %s: value must be an integer between %llu and %llu, "
                 "inclusive.",
                 name, (unsigned long long)lo, (unsigned long long)hi);
        reply_error(c, msg);
        return false;
    }
    *out = (uint64_t)v;
    return true;
}

/* parse_range() of an option that fits 32 bits (hi <= UINT32_MAX). */
static bool parse_bounded(const call_t *c, const char *name, const arg_t *a,
                          uint64_t lo, uint64_t hi, uint32_t *out)
{
    uint64_t v;
    if (!parse_range(c, name, a, lo, hi, &v))
        return false;
    *out = (uint32_t)v;
    return true;
}

/* Makes p a filter with a window of window ms (0: leaves p alone): bucket
 * size 4 (a BUCKETSIZE given must be 4) and 12-bit fingerprints, whose
 * bound an ERROR rate given must allow. false after the error reply. */
static bool apply_window(const call_t *c, cf_params_t *p, uint64_t window,
                         bool bucket_given, double rate, bool user_rate)
{
    if (window == 0)
        return true;
    if (bucket_given && p->bucket_size != 4) {
        reply_error(c, "ERR WINDOW: a filter with a window has BUCKETSIZE 4");
        return false;
    }
    if (user_rate && rate < cf_error_bound(4, 12)) {
        reply_error(c, "ERR ERROR: a filter with a window has 12-bit "
                       "fingerprints, a rate of 0.002");
        return false;
    }
    p->window_ms = window;
    p->bucket_size = 4;
    p->fp_bits = 12;
    p->encoding = CF_ENC_PLAIN;
    p->growable = 0;
    return true;
}

/* RedisBloom's default bucket size: without BUCKETSIZE, a capacity is
 * refused below twice it. */
#define RB_DEFAULT_BUCKET 2

/* A capacity argument as RedisBloom reads it: "ERR Bad capacity" when it
 * is not an integer; its bound waits for the bucket size
 * (capacity_fits()). false after the error reply. */
static bool parse_capacity(const call_t *c, const arg_t *a, long long *out)
{
    if (!arg_ll(a, out)) {
        reply_error(c, "ERR Bad capacity");
        return false;
    }
    return true;
}

/* RedisBloom's bound: at least twice the bucket size (zero and negatives
 * never pass). bucket is the BUCKETSIZE given, or RedisBloom's default
 * when there is none, whatever our own default is (tiny_bucket()). false
 * after the error reply. */
static bool capacity_fits(const call_t *c, long long cap, uint32_t bucket)
{
    if (cap < 2 * (long long)bucket) {
        reply_error(c, "ERR Capacity must be at least (BucketSize * 2)");
        return false;
    }
    return true;
}

/* A capacity RedisBloom accepts with its default bucket must be accepted:
 * without a BUCKETSIZE, a filter too small for two of the default buckets
 * takes RedisBloom's bucket of 2 (CF.INFO says so). */
static void tiny_bucket(cf_params_t *p)
{
    if (p->capacity < 2 * (uint64_t)p->bucket_size &&
        p->capacity >= 2 * RB_DEFAULT_BUCKET)
        p->bucket_size = RB_DEFAULT_BUCKET;
}

static void reply_bad_rate(const call_t *c)
{
    reply_error(c, "ERR ERROR: rate must be a number between 0 and 1 that "
                   "the finest fingerprints can meet (17-bit semi-sorted at "
                   "bucket size 4, 16-bit otherwise)");
}

/* ---- finding and creating filters ---------------------------------------- */

/* The time window filters answer for: the host's, or the wall clock. */
static uint64_t now_ms(const call_t *c)
{
    if (c->host->now_ms != NULL)
        return c->host->now_ms(c->h);
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

/* Gives a filter with a window the time (nothing for other filters): the
 * host's clock now, the following adds at `at` (UINT64_MAX: the filter's
 * clock, which a host's clock set back does not move back). Returns the
 * time of the adds. */
static uint64_t give_time(const call_t *c, cf_filter_t *f, uint64_t at)
{
    if (f == NULL || !cf_is_window(f))
        return 0;
    uint64_t now = now_ms(c);
    if (now == CFCMD_NO_CLOCK) /* a replay: the command's own time */
        now = at != UINT64_MAX ? at : 0;
    if (at != UINT64_MAX && at > now)
        at = now;
    return cf_set_time(f, now, at);
}

/* A write to a window filter, logged with its time (cfcmd.h). */
static void log_timed(const call_t *c, bool nx, const arg_t *key, uint64_t at,
                      const arg_t *items, size_t n)
{
    if (c->host->log_timed != NULL)
        c->host->log_timed(c->h, nx, key, at, items, n);
}

size_t cfcmd_timed_form(bool nx, const arg_t *key, uint64_t at,
                        char ms[CFCMD_MS_LEN], arg_t head[CFCMD_TIMED_HEAD])
{
    int len = snprintf(ms, CFCMD_MS_LEN, "%llu", (unsigned long long)at);
    head[0] = nx ? (arg_t){"CF.INSERTNX", 11} : (arg_t){"CF.INSERT", 9};
    head[1] = *key;
    head[2] = (arg_t){"AT", 2};
    head[3] = (arg_t){ms, (size_t)len};
    head[4] = (arg_t){"ITEMS", 5};
    return CFCMD_TIMED_HEAD;
}

/* The filter under key for a read: 0 with *out (NULL when absent), or -1
 * after a WRONGTYPE reply. */
static int find_read(const call_t *c, const arg_t *key, const cf_filter_t **out)
{
    cf_filter_t *f = NULL;
    *out = NULL;
    if (c->host->find(c->h, key, true, &f) != 0) {
        reply_error(c, ERRTEXT_WRONGTYPE);
        return -1;
    }
    give_time(c, f, UINT64_MAX);
    *out = f;
    return 0;
}

/* The filter under key for a write: 0 with *out (NULL when absent), or -1
 * after a WRONGTYPE reply. */
static int find_write(const call_t *c, const arg_t *key, cf_filter_t **out)
{
    *out = NULL;
    if (c->host->find(c->h, key, false, out) != 0) {
        reply_error(c, ERRTEXT_WRONGTYPE);
        return -1;
    }
    return 0;
}

/* The room left to allocate in; *text is the refusal to give past it and
 * *maxmemory whether that bound is the host's maxmemory. */
static uint64_t room_left(const call_t *c, const char **text, bool *maxmemory)
{
    *maxmemory = false;
    uint64_t room = c->host->headroom(c->h, maxmemory);
    *text = *maxmemory ? ERRTEXT_OOM : CF_ERR_RAM;
    return room;
}

static uint64_t headroom(const call_t *c, const char **text)
{
    bool maxmemory;
    return room_left(c, text, &maxmemory);
}

/* Creates a filter with p under key (absent). Replies the error itself and
 * returns NULL on failure; nothing is created then. */
static cf_filter_t *create_filter(const call_t *c, const arg_t *key,
                                  cf_params_t *p)
{
    cf_filter_t *f;
    uint64_t bytes;
    const char *oom;
    int rc;

    if (p->capacity < 2 * (uint64_t)p->bucket_size) {
        reply_error(c, "ERR Capacity must be at least (BucketSize * 2)");
        return NULL;
    }
    if (cf_params_check(p) != 0 || (bytes = cf_params_table_bytes(p)) == 0) {
        reply_error(c, CF_ERR_NOMEM);
        return NULL;
    }
    /* The table alone first, then cf_create() checks the whole filter
     * (struct included) against the same room. */
    uint64_t room = headroom(c, &oom);
    if (bytes > room) {
        reply_error(c, oom);
        return NULL;
    }
    p->max_bytes = room == UINT64_MAX ? 0 : room;
    p->seed = c->host->seed(c->h);
    rc = cf_create(p, &f);
    if (rc != 0) {
        reply_error(c, rc == -ENOMEM ? oom : CF_ERR_NOMEM);
        return NULL;
    }
    /* before the host logs its header: a new filter's clock is now */
    give_time(c, f, UINT64_MAX);
    if (c->host->create(c->h, key, &f) != 0) {
        cf_free(f);
        reply_error(c, ERRTEXT_OOM);
        return NULL;
    }
    return f; /* the stored address: create() may have moved it */
}

/* What a filter may grow into during one command: what the host's memory
 * bound leaves, so an insert that would need a table past it fails whole
 * with the OOM refusal. */
static uint64_t growth_room(const call_t *c)
{
    const char *oom;
    return headroom(c, &oom);
}

static void reply_add_error(const call_t *c, int rc)
{
    const char *oom;
    char msg[96];

    switch (rc) {
    case -ENOSPC:
        reply_error(c, "ERR Filter is full");
        break;
    case -EOVERFLOW:
        reply_error(c, "ERR Maximum expansions reached");
        break;
    case -ENOMEM:
        (void)headroom(c, &oom);
        reply_error(c, oom);
        break;
    default:
        snprintf(msg, sizeof(msg), "ERR could not add item (%s)",
                 strerror(-rc));
        reply_error(c, msg);
        break;
    }
}

/* ---- commands ------------------------------------------------------------ */

/* CF.RESERVE key capacity [BUCKETSIZE b] [MAXITERATIONS m] [EXPANSION e]
 *            [ERROR rate] [WINDOW ms] */
void cfcmd_reserve(const cfcmd_host_t *host, void *h, int argc,
                   const arg_t *argv)
{
    const call_t c = {host, h};
    cf_params_t p;
    cf_filter_t *f;
    double rate;
    bool user_rate = false;

    if (argc % 2 == 0) {
        reply_arity(&c, "cf.reserve");
        return;
    }
    bool bucket_given = false;
    long long cap;
    uint64_t window = 0;
    params_default(&c, &p, &rate);
    if (!parse_capacity(&c, &argv[2], &cap))
        return;
    for (int i = 3; i + 1 < argc; i += 2) {
        const arg_t *opt = &argv[i], *val = &argv[i + 1];
        if (arg_is(opt, "bucketsize")) {
            if (!parse_bounded(&c, "BUCKETSIZE", val, 1, CF_MAX_BUCKET_SIZE,
                               &p.bucket_size))
                return;
            bucket_given = true;
        } else if (arg_is(opt, "maxiterations")) {
            if (!parse_bounded(&c, "MAXITERATIONS", val, 1, CF_MAX_KICKS,
                               &p.max_kicks))
                return;
        } else if (arg_is(opt, "expansion")) {
            if (!parse_bounded(&c, "EXPANSION", val, 0, CF_MAX_EXPANSION,
                               &p.expansion))
                return;
        } else if (arg_is(opt, "error")) {
            if (!parse_rate(val, &rate)) {
                reply_bad_rate(&c);
                return;
            }
            user_rate = true;
        } else if (arg_is(opt, "window")) {
            if (!parse_range(&c, "WINDOW", val, 1, CF_MAX_WINDOW_MS, &window))
                return;
        } else {
            reply_error(&c, "ERR Unknown argument received");
            return;
        }
    }
    /* As RedisBloom, after the options: the bound is the given bucket's. */
    if (!capacity_fits(&c, cap,
                       bucket_given ? p.bucket_size : RB_DEFAULT_BUCKET))
        return;
    p.capacity = (uint64_t)cap;
    if (!bucket_given)
        tiny_bucket(&p);
    if (!apply_rate(&p, rate, user_rate)) {
        reply_bad_rate(&c);
        return;
    }
    if (!apply_window(&c, &p, window, bucket_given, rate, user_rate))
        return;
    if (find_write(&c, &argv[1], &f) != 0)
        return;
    if (f != NULL) {
        reply_error(&c, "ERR item exists");
        return;
    }
    if ((f = create_filter(&c, &argv[1], &p)) == NULL)
        return;
    host->changed(h, &argv[1], f, 1);
    host->reply_simple(h, "OK");
}

/* The filter under key, created with the defaults when missing. *created
 * tells which. NULL after an error reply. */
static cf_filter_t *get_or_create(const call_t *c, const arg_t *key,
                                  bool *created)
{
    cf_filter_t *f;
    cf_params_t p;
    double rate;

    *created = false;
    if (find_write(c, key, &f) != 0)
        return NULL;
    if (f != NULL)
        return f;
    params_default(c, &p, &rate);
    apply_rate(&p, rate, false);
    f = create_filter(c, key, &p);
    *created = f != NULL;
    return f;
}

static void add_common(const call_t *c, const arg_t *argv, bool nx)
{
    bool created;
    cf_filter_t *f = get_or_create(c, &argv[1], &created);
    if (f == NULL)
        return;

    uint64_t room = growth_room(c);
    const void *item = argv[2].ptr;
    size_t len = argv[2].len;
    int rc;
    bool win = cf_is_window(f);
    uint64_t at = win ? give_time(c, f, UINT64_MAX) : 0;
    cf_add_many(f, 1, &item, &len, nx, &room, &rc);
    uint64_t changes = (uint64_t)created + (rc == 0 && !nx) + (rc == 1);
    /* a window filter's add of a present item refreshes it: a change */
    changes += win && nx && rc == 0;
    if (changes > 0)
        c->host->changed(c->h, &argv[1], f, changes);
    if (win && changes > (uint64_t)created)
        log_timed(c, nx, &argv[1], at, &argv[2], 1);
    if (rc < 0)
        reply_add_error(c, rc);
    else
        REPLY(c, bool, nx ? rc == 1 : true);
}

/* CF.ADD key item */
void cfcmd_add(const cfcmd_host_t *host, void *h, int argc, const arg_t *argv)
{
    const call_t c = {host, h};
    add_common(&c, argv, false);
}

/* CF.ADDNX key item */
void cfcmd_addnx(const cfcmd_host_t *host, void *h, int argc, const arg_t *argv)
{
    const call_t c = {host, h};
    add_common(&c, argv, true);
}

/* Replies to the items of one CF.INSERT[NX] window; returns the changes. */
static uint64_t reply_inserted(const call_t *c, const int *rcs, size_t m,
                               bool nx, bool resp3)
{
    uint64_t changes = 0;
    if (!nx) {
        /* CF.INSERT answers true per item stored; a failure is false in
         * RESP3, -1 in RESP2 (not a boolean: the items go one by one). */
        bool ok[CFCMD_BATCH], all = true;
        for (size_t j = 0; j < m; j++) {
            ok[j] = rcs[j] == 0;
            all &= ok[j];
            changes += ok[j];
        }
        if (all || resp3) {
            reply_bools(c->host, c->h, ok, m);
            return changes;
        }
        changes = 0;
    }
    for (size_t j = 0; j < m; j++) {
        int rc = rcs[j];
        if (nx) {
            changes += rc == 1;
            REPLY(c, int, rc < 0 ? -1 : rc);
        } else if (rc == 0) {
            changes++;
            REPLY(c, bool, true);
        } else if (resp3) {
            REPLY(c, bool, false);
        } else {
            REPLY(c, int, -1);
        }
    }
    return changes;
}

/* CF.INSERT[NX] key [CAPACITY c] [ERROR rate] [NOCREATE] [WINDOW ms]
 *              [AT unix-ms] ITEMS item... */
static void insert_common(const call_t *c, int argc, const arg_t *argv, bool nx,
                          const char *name)
{
    cf_params_t p;
    double rate;
    bool user_rate = false, nocreate = false, created = false;
    int first = -1;
    uint64_t window = 0, at = UINT64_MAX;

    params_default(c, &p, &rate);
    for (int i = 2; i < argc; i++) {
        const arg_t *opt = &argv[i];
        if (arg_is(opt, "items")) {
            first = i + 1;
            break;
        } else if (arg_is(opt, "nocreate")) {
            nocreate = true;
        } else if (arg_is(opt, "capacity") && i + 1 < argc) {
            /* checked even when the key exists, as RedisBloom does; no
             * BUCKETSIZE here, so RedisBloom's default bucket bounds it */
            long long cap;
            if (!parse_capacity(c, &argv[++i], &cap) ||
                !capacity_fits(c, cap, RB_DEFAULT_BUCKET))
                return;
            p.capacity = (uint64_t)cap;
        } else if (arg_is(opt, "error") && i + 1 < argc) {
            if (!parse_rate(&argv[++i], &rate)) {
                reply_bad_rate(c);
                return;
            }
            user_rate = true;
        } else if (arg_is(opt, "window") && i + 1 < argc) {
            if (!parse_range(c, "WINDOW", &argv[++i], 1, CF_MAX_WINDOW_MS,
                             &window))
                return;
        } else if (arg_is(opt, "at") && i + 1 < argc) {
            if (!parse_range(c, "AT", &argv[++i], 0, INT64_MAX, &at))
                return;
        } else {
            reply_error(c, "ERR Unknown argument received");
            return;
        }
    }
    if (first < 0 || first >= argc) {
        reply_arity(c, name);
        return;
    }
    tiny_bucket(&p);
    if (!apply_rate(&p, rate, user_rate)) {
        reply_bad_rate(c);
        return;
    }
    if (!apply_window(c, &p, window, false, rate, user_rate))
        return;

    cf_filter_t *f;
    if (find_write(c, &argv[1], &f) != 0)
        return;
    if (f == NULL) {
        if (nocreate) {
            reply_error(c, "ERR not found");
            return;
        }
        if ((f = create_filter(c, &argv[1], &p)) == NULL)
            return;
        created = true;
    }

    /* RedisBloom refuses the whole command once its chain is at its cap */
    cf_stats_t st;
    cf_stats(f, &st);
    if (st.form == CF_FORM_REDISBLOOM && st.nfilters >= st.max_filters) {
        reply_error(c, "ERR Maximum expansions reached");
        return;
    }
    size_t n = (size_t)(argc - first);
    const void *keys[CFCMD_BATCH];
    size_t lens[CFCMD_BATCH];
    int rcs[CFCMD_BATCH];
    bool resp3 = c->host->proto(c->h) >= 3;
    uint64_t changes = created;

    uint64_t room = growth_room(c);
    uint64_t at_used = give_time(c, f, at);
    bool win = cf_is_window(f);
    c->host->reply_array(c->h, n);
    for (size_t i = 0; i < n;) {
        size_t m = n - i < CFCMD_BATCH ? n - i : CFCMD_BATCH;
        for (size_t j = 0; j < m; j++) {
            keys[j] = argv[first + i + j].ptr;
            lens[j] = argv[first + i + j].len;
        }
        cf_add_many(f, m, keys, lens, nx, &room, rcs);
        changes += reply_inserted(c, rcs, m, nx, resp3);
        /* a window filter's CF.INSERTNX of a present item refreshes it */
        for (size_t j = 0; win && nx && j < m; j++)
            changes += rcs[j] == 0;
        i += m;
    }
    if (changes > 0)
        c->host->changed(c->h, &argv[1], f, changes);
    if (win && changes > (uint64_t)created)
        log_timed(c, nx, &argv[1], at_used, &argv[first], n);
}

void cfcmd_insert(const cfcmd_host_t *host, void *h, int argc,
                  const arg_t *argv)
{
    const call_t c = {host, h};
    insert_common(&c, argc, argv, false, "cf.insert");
}

void cfcmd_insertnx(const cfcmd_host_t *host, void *h, int argc,
                    const arg_t *argv)
{
    const call_t c = {host, h};
    insert_common(&c, argc, argv, true, "cf.insertnx");
}

/* CF.EXISTS key item */
void cfcmd_exists(const cfcmd_host_t *host, void *h, int argc,
                  const arg_t *argv)
{
    const call_t c = {host, h};
    const cf_filter_t *f;
    if (find_read(&c, &argv[1], &f) != 0)
        return;
    host->reply_bool(h, f != NULL && cf_exists(f, argv[2].ptr, argv[2].len));
}

/* CF.MEXISTS key item... */
void cfcmd_mexists(const cfcmd_host_t *host, void *h, int argc,
                   const arg_t *argv)
{
    const call_t c = {host, h};
    const cf_filter_t *f;
    if (find_read(&c, &argv[1], &f) != 0)
        return;
    size_t n = (size_t)(argc - 2);
    const void *keys[CFCMD_BATCH];
    size_t lens[CFCMD_BATCH];
    bool found[CFCMD_BATCH];

    host->reply_array(h, n);
    for (size_t i = 0; i < n;) {
        size_t m = n - i < CFCMD_BATCH ? n - i : CFCMD_BATCH;
        if (f == NULL) {
            memset(found, 0, sizeof(found));
        } else {
            for (size_t j = 0; j < m; j++) {
                keys[j] = argv[2 + i + j].ptr;
                lens[j] = argv[2 + i + j].len;
            }
            cf_exists_many(f, m, keys, lens, found);
        }
        reply_bools(host, h, found, m);
        i += m;
    }
}

/* CF.DEL key item */
void cfcmd_del(const cfcmd_host_t *host, void *h, int argc, const arg_t *argv)
{
    const call_t c = {host, h};
    cf_filter_t *f;

    if (find_write(&c, &argv[1], &f) != 0)
        return;
    if (f == NULL) {
        reply_error(&c, "ERR Not found");
        return;
    }
    give_time(&c, f, UINT64_MAX);
    int rc = cf_del(f, argv[2].ptr, argv[2].len);
    if (rc == 1)
        host->changed(h, &argv[1], f, 1);
    host->reply_bool(h, rc == 1);
}

/* CF.COUNT key item */
void cfcmd_count(const cfcmd_host_t *host, void *h, int argc, const arg_t *argv)
{
    const call_t c = {host, h};
    const cf_filter_t *f;
    if (find_read(&c, &argv[1], &f) != 0)
        return;
    uint64_t n = f != NULL ? cf_count(f, argv[2].ptr, argv[2].len) : 0;
    host->reply_int(h, n > INT64_MAX ? INT64_MAX : (long long)n);
}

/* A CF.INFO field: its name a simple string, as RedisBloom sends it
 * (redis-cli prints it unquoted, a RESP3 map key included). */
static void info_field(const call_t *c, const char *name, uint64_t v)
{
    REPLY(c, simple, name);
    REPLY(c, int, v > INT64_MAX ? INT64_MAX : (long long)v);
}

/* CF.INFO key */
void cfcmd_info(const cfcmd_host_t *host, void *h, int argc, const arg_t *argv)
{
    const call_t c = {host, h};
    const cf_filter_t *f;
    if (find_read(&c, &argv[1], &f) != 0)
        return;
    cf_stats_t st;

    if (f == NULL) {
        reply_error(&c, "ERR not found");
        return;
    }
    cf_stats(f, &st);
    double err = cf_error_bound(st.bucket_size, st.fp_bits) *
                 (double)(st.nfilters > 0 ? st.nfilters : 1);
    /* an imported filter answers RedisBloom's fields, and only those */
    bool rb = st.form == CF_FORM_REDISBLOOM;
    cf_window_info_t wi;
    bool win = cf_window_info(f, &wi);
    host->reply_map(h, rb ? 8 : win ? 16 : 12);
    info_field(&c, "Size", st.size_bytes);
    info_field(&c, "Number of buckets", st.nbuckets);
    info_field(&c, "Number of filters", st.nfilters);
    info_field(&c, "Number of items inserted", st.items);
    info_field(&c, "Number of items deleted", st.deleted);
    info_field(&c, "Bucket size", st.bucket_size);
    info_field(&c, "Expansion rate", st.expansion);
    info_field(&c, "Max iterations", st.max_kicks);
    if (rb)
        return;
    info_field(&c, "Fingerprint bits", st.fp_bits);
    info_field(&c, "Capacity", st.capacity);
    host->reply_simple(h, "Error rate");
    host->reply_double(h, err < 1 ? err : 1);
    /* ours, after RedisBloom's fields */
    const char *enc = st.form == CF_FORM_GROWABLE        ? "growable"
                      : st.form == CF_FORM_GROWABLE_PAIR ? "growable pair"
                      : win                              ? "window"
                            : cf_encoding_name(st.encoding);
    host->reply_simple(h, "Encoding");
    host->reply_bulk(h, enc, strlen(enc));
    if (!win)
        return;
    info_field(&c, "Window", wi.window_ms);
    info_field(&c, "Slack", wi.slack_ms);
    info_field(&c, "Live items", wi.live);
    info_field(&c, "Stale items", wi.stale);
}

/* CF.DEBUG key: RedisBloom's debugging line, CF.INFO's first figures in
 * RedisBloom's words. */
void cfcmd_debug(const cfcmd_host_t *host, void *h, int argc, const arg_t *argv)
{
    const call_t c = {host, h};
    const cf_filter_t *f;
    (void)argc;
    if (find_read(&c, &argv[1], &f) != 0)
        return;
    if (f == NULL) {
        reply_error(&c, "ERR not found");
        return;
    }
    cf_stats_t st;
    cf_stats(f, &st);
    char line[200];
    int n =
        snprintf(line, sizeof(line),
                 "bktsize:%u buckets:%llu items:%llu deletes:%llu "
                 "filters:%llu max_iterations:%u expansion:%u",
                 st.bucket_size, (unsigned long long)st.nbuckets,
                 (unsigned long long)st.items, (unsigned long long)st.deleted,
                 (unsigned long long)st.nfilters, st.max_kicks, st.expansion);
    CK_ASSERT(n > 0 && (size_t)n < sizeof(line));
    host->reply_bulk(h, line, (size_t)n);
}

/* An iterator argument: a non-negative integer with string2ll's rules. */
static bool parse_iterator(const arg_t *a, long long *it)
{
    return arg_ll(a, it) && *it >= 0;
}

/* CF.SCANDUMP key iterator */
void cfcmd_scandump(const cfcmd_host_t *host, void *h, int argc,
                    const arg_t *argv)
{
    const call_t c = {host, h};
    const cf_filter_t *f;
    if (find_read(&c, &argv[1], &f) != 0)
        return;
    long long it;

    if (f == NULL) {
        reply_error(&c, "ERR not found");
        return;
    }
    if (!parse_iterator(&argv[2], &it)) {
        reply_error(&c, "ERR Invalid position");
        return;
    }
    host->reply_array(h, 2);
    cf_stats_t st;
    cf_stats(f, &st);
    bool rb = st.form == CF_FORM_REDISBLOOM;
    if (rb && st.items == 0) { /* RedisBloom's end, even at iterator 0 */
        host->reply_int(h, 0);
        host->reply_null(h);
        return;
    }
    if (it == 0) {
        unsigned char hdr[CF_HEADER_MAX];
        size_t len = rb ? CF_RB_HEADER_LEN : cf_header_len(f);
        if (rb)
            cf_rb_header(f, hdr);
        else
            cf_header_write(f, hdr);
        host->reply_int(h, 1);
        host->reply_bulk(h, hdr, len);
        return;
    }

    const void *p = NULL;
    uint64_t off = (uint64_t)it - 1;
    size_t n = cf_data_view(f, off, rb ? CF_RB_CHUNK_MAX : CF_DUMP_CHUNK, &p);
    if (n == 0) {
        host->reply_int(h, 0);
        host->reply_null(h);
        return;
    }
    host->reply_int(h, (long long)(off + n + 1));
    host->reply_bulk(h, p, n);
}

static void load_header(const call_t *c, const arg_t *key, const arg_t *data)
{
    const char *oom;
    cf_filter_t *f;
    size_t used = 0;
    bool maxmemory;
    int rc;

    if (find_write(c, key, &f) != 0)
        return;
    if (f != NULL) {
        reply_error(c, "ERR item exists");
        return;
    }
    /* The header is untrusted: what it asks for is checked against what is
     * left (not against all of memory, per key) before any allocation. */
    uint64_t room = room_left(c, &oom, &maxmemory);
    cf_limits_t lim = {.max_bytes = room == UINT64_MAX ? 0 : room};
    if (room == 0) {
        reply_error(c, oom);
        return;
    }
    /* RedisBloom's header chunk is shorter than any of ours */
    bool rb = data->len == CF_RB_HEADER_LEN;
    used = data->len;
    rc = rb ? cf_load_rb_header(data->ptr, data->len, &lim, &f)
            : cf_load_header(data->ptr, data->len, &lim, &f, &used);
    if (rc == -ENOMEM) {
        reply_error(c, maxmemory ? oom
                       : rb      ? "ERR Couldn't create filter!"
                            : "ERR Invalid header: the filter is too large");
        return;
    }
    if (rc != 0) {
        /* As RedisBloom: a chunk of a header's length is a header, whose
         * numbers (a zeroed magic included) could not make a filter. */
        reply_error(c, cf_is_header_len(data->len)
                           ? "ERR Couldn't create filter!"
                           : "ERR Invalid header");
        return;
    }
    if (used != data->len) {
        cf_free(f);
        reply_error(c, "ERR Invalid header");
        return;
    }
    /* The tables were checked; this counts the struct too. */
    if (cf_size_bytes(f) > room) {
        cf_free(f);
        reply_error(c, oom);
        return;
    }
    if (c->host->create(c->h, key, &f) != 0) {
        cf_free(f);
        reply_error(c, ERRTEXT_OOM);
        return;
    }
    c->host->changed(c->h, key, f, 1);
    c->host->reply_simple(c->h, "OK");
}

/* CF.LOADCHUNK key iterator data */
void cfcmd_loadchunk(const cfcmd_host_t *host, void *h, int argc,
                     const arg_t *argv)
{
    const call_t c = {host, h};
    cf_filter_t *f;
    long long it;

    /* As RedisBloom: a non-number or 0 is an invalid position; anything
     * else that does not place the chunk inside the filter is refused
     * as a chunk that cannot load. */
    if (!arg_ll(&argv[2], &it) || it == 0) {
        reply_error(&c, "ERR Invalid position");
        return;
    }
    if (it == 1) {
        load_header(&c, &argv[1], &argv[3]);
        return;
    }
    if (find_write(&c, &argv[1], &f) != 0)
        return;
    if (f == NULL) {
        reply_error(&c, "ERR not found");
        return;
    }
    if (cf_is_redisbloom(f)) {
        if (cf_load_rb_chunk(f, it, argv[3].ptr, argv[3].len) != 0) {
            reply_error(&c, CF_ERR_CHUNK);
            return;
        }
        host->changed(h, &argv[1], f, 1);
        host->reply_simple(h, "OK");
        return;
    }
    uint64_t end = (uint64_t)it - 1, len = argv[3].len;
    if (it < 0 || len == 0 || len > end ||
        cf_load_data(f, end - len, argv[3].ptr, argv[3].len) != 0) {
        reply_error(&c, CF_ERR_CHUNK);
        return;
    }
    host->changed(h, &argv[1], f, 1);
    host->reply_simple(h, "OK");
}

/* CF.COMPACT key: RedisBloom's compaction of an imported filter's chain;
 * the core's own filters have nothing to compact. */
void cfcmd_compact(const cfcmd_host_t *host, void *h, int argc,
                   const arg_t *argv)
{
    const call_t c = {host, h};
    cf_filter_t *f;
    (void)argc;
    if (find_write(&c, &argv[1], &f) != 0)
        return;
    if (f == NULL) {
        reply_error(&c, "ERR Cuckoo filter was not found");
        return;
    }
    cf_compact(f);
    host->changed(h, &argv[1], f, 1);
    host->reply_simple(h, "OK");
}

/* Single-item commands: the buckets of argv[2] in argv[1]'s filter. */
void cfcmd_prefetch_item(const cfcmd_host_t *host, void *h, int argc,
                         const arg_t *argv)
{
    cf_filter_t *f = NULL;
    if (argc == 3 && host->find(h, &argv[1], false, &f) == 0 && f != NULL)
        cf_prefetch(f, argv[2].ptr, argv[2].len);
}
