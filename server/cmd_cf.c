/*
 * cmd_cf.c - the CF.* command family, RedisBloom-compatible in arguments,
 * reply shapes (RESP2 and RESP3) and error families.
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
 *  - cfg cf-max-expansions is the cap on sub-filters (RedisBloom's 32).
 *  - CF.INFO "Error rate" is the bound for one lookup over every sub-filter:
 *    nfilters * cf_error_bound(), capped at 1.
 *  - Memory: a new filter, a growth or a loaded header must fit in
 *    server_memory_headroom() (maxmemory, or the machine's physical memory
 *    when maxmemory is 0, less what the keyspace holds), checked before
 *    anything is allocated. Over maxmemory the reply is Redis's OOM error;
 *    over physical memory it is CF_ERR_RAM.
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "cf.h"
#include "server.h"

#define CF_ERR_OOM "OOM command not allowed when used memory > 'maxmemory'."
/* The same refusal without maxmemory: the machine's memory is the limit. */
#define CF_ERR_RAM "ERR capacity is too large for this machine's memory"

/* Items hashed, prefetched and probed together by CF.MEXISTS and CF.INSERT;
 * the per-window arrays live on the stack. */
#define CF_WINDOW 64

/* Largest data chunk one CF.SCANDUMP returns. */
#define CF_DUMP_CHUNK ((size_t)4 << 20)

/* ---- argument parsing ---------------------------------------------------- */

static bool arg_is(const resp_arg_t *a, const char *word)
{
    size_t n = strlen(word);
    return a->len == n && strncasecmp(a->ptr, word, n) == 0;
}

/* Strict unsigned decimal: digits only, no sign, no spaces, no overflow. */
static bool parse_u64(const resp_arg_t *a, uint64_t *out)
{
    uint64_t v = 0;

    if (a->len == 0 || a->len > 20)
        return false;
    for (size_t i = 0; i < a->len; i++) {
        unsigned d = (unsigned char)a->ptr[i] - '0';
        if (d > 9 || v > (UINT64_MAX - d) / 10)
            return false;
        v = v * 10 + d;
    }
    *out = v;
    return true;
}

/* Strict signed decimal that fits int64_t. */
static bool parse_i64(const resp_arg_t *a, int64_t *out)
{
    resp_arg_t digits = *a;
    bool neg = false;
    uint64_t v;

    if (a->len > 0 && a->ptr[0] == '-') {
        neg = true;
        digits.ptr++;
        digits.len--;
    }
    if (!parse_u64(&digits, &v))
        return false;
    if (neg) {
        if (v > (uint64_t)INT64_MAX + 1)
            return false;
        *out = v == (uint64_t)INT64_MAX + 1 ? INT64_MIN : -(int64_t)v;
    } else {
        if (v > INT64_MAX)
            return false;
        *out = (int64_t)v;
    }
    return true;
}

/* A false-positive rate strictly between 0 and 1, the whole argument. */
static bool parse_rate(const resp_arg_t *a, double *out)
{
    char buf[64];
    char *end;

    if (a->len == 0 || a->len >= sizeof(buf))
        return false;
    memcpy(buf, a->ptr, a->len);
    buf[a->len] = '\0';
    if (strlen(buf) != a->len || buf[0] == ' ' || buf[0] == '\t')
        return false;
    errno = 0;
    double d = strtod(buf, &end);
    if (end != buf + a->len || errno != 0 || !isfinite(d) || d <= 0 ||
        d >= 1)
        return false;
    *out = d;
    return true;
}

/* Parameters for a new filter from the cf-* directives. rate is set to the
 * configured error rate (0 when the fingerprint width is configured). */
static void params_from_cfg(const client_t *c, cf_params_t *p, double *rate)
{
    const cfg_t *cfg = server_cfg(c->srv);

    cf_params_default(p);
    if (cfg->cf_bucket_size != 0)
        p->bucket_size = cfg->cf_bucket_size;
    if (cfg->cf_fingerprint_bits != 0)
        p->fp_bits = cfg->cf_fingerprint_bits;
    if (cfg->cf_max_iterations != 0)
        p->max_kicks = cfg->cf_max_iterations;
    p->expansion = cfg->cf_expansion_factor;
    p->max_filters = cfg->cf_max_expansions;
    if (p->max_filters < 1)
        p->max_filters = 1;
    if (p->max_filters > CF_MAX_FILTERS)
        p->max_filters = CF_MAX_FILTERS;
    if (cfg->cf_initial_size != 0)
        p->capacity = cfg->cf_initial_size;
    *rate = cfg->cf_error_rate;
}

/* Applies rate to p's fingerprint width. A rate the user asked for must be
 * achievable; one from the configuration falls back to its width. */
static bool apply_rate(cf_params_t *p, double rate, bool from_user)
{
    if (rate <= 0)
        return true;
    uint32_t bits = cf_fp_bits_for_rate(p->bucket_size, rate);
    if (bits == 0)
        return !from_user;
    p->fp_bits = bits;
    return true;
}

/* Parses "NAME value" for an integer option with RedisBloom's bounds. */
static bool parse_bounded(client_t *c, const char *name, const resp_arg_t *a,
                          uint64_t lo, uint64_t hi, uint32_t *out)
{
    uint64_t v;

    if (!parse_u64(a, &v) || v < lo || v > hi) {
        resp_add_errorf(&c->out,
                        "ERR %s: value must be an integer between %llu and "
                        "%llu, inclusive.",
                        name, (unsigned long long)lo, (unsigned long long)hi);
        return false;
    }
    *out = (uint32_t)v;
    return true;
}

static void reply_bad_rate(client_t *c)
{
    resp_add_error(&c->out, "ERR ERROR: rate must be a number between 0 and "
                            "1 that 16-bit fingerprints can meet");
}

/* ---- creating filters ---------------------------------------------------- */

/* The refusal of an allocation past server_memory_headroom(). */
static void reply_no_memory(client_t *c)
{
    resp_add_error(&c->out,
                   server_cfg(c->srv)->maxmemory != 0 ? CF_ERR_OOM
                                                      : CF_ERR_RAM);
}

/* Creates a filter with p under key. Replies the error itself and returns
 * NULL on failure; nothing is created then. */
static cf_filter_t *create_filter(client_t *c, const resp_arg_t *key,
                                  cf_params_t *p)
{
    cf_filter_t *f;
    uint64_t bytes;
    int rc;

    if (p->capacity < 2 * (uint64_t)p->bucket_size) {
        resp_add_error(&c->out,
                       "ERR Capacity must be at least (BucketSize * 2)");
        return NULL;
    }
    if (cf_params_check(p) != 0 || (bytes = cf_params_table_bytes(p)) == 0) {
        resp_add_error(&c->out, "ERR Bad capacity");
        return NULL;
    }
    /* The table alone first, then cf_create() checks the whole filter
     * (struct included) against the same room. */
    uint64_t room = server_memory_headroom(c->srv);
    if (bytes > room) {
        reply_no_memory(c);
        return NULL;
    }
    p->max_bytes = room == UINT64_MAX ? 0 : room;
    p->seed = server_seed(c->srv);
    rc = cf_create(p, &f);
    if (rc == -ENOMEM) {
        reply_no_memory(c);
        return NULL;
    }
    if (rc != 0) {
        resp_add_error(&c->out, "ERR Bad capacity");
        return NULL;
    }
    rc = ks_add(c->db, key->ptr, key->len, f);
    if (rc != 0) {
        cf_free(f);
        resp_add_error(&c->out,
                       rc == -EEXIST ? "ERR item exists" : CF_ERR_OOM);
        return NULL;
    }
    return f;
}

/* Lets f grow only into what maxmemory (or, without it, physical memory)
 * leaves server-wide, so an insert that would need a table past it fails
 * whole with reply_no_memory()'s error. */
static void cap_growth(client_t *c, cf_filter_t *f)
{
    uint64_t room = server_memory_headroom(c->srv);
    uint64_t size = cf_size_bytes(f);
    cf_set_max_bytes(f, room > UINT64_MAX - size ? 0 : size + room);
}

/* Reports growth of a stored filter to the keyspace's byte accounting. */
static void note_resize(client_t *c, const cf_filter_t *f, uint64_t before)
{
    uint64_t after = cf_size_bytes(f);
    if (after != before)
        ks_resized(c->db, (int64_t)(after - before));
}

static void reply_add_error(client_t *c, int rc)
{
    switch (rc) {
    case -ENOSPC:
        resp_add_error(&c->out, "ERR Filter is full");
        break;
    case -EOVERFLOW:
        resp_add_error(&c->out, "ERR Maximum expansions reached");
        break;
    case -ENOMEM:
        reply_no_memory(c);
        break;
    default:
        resp_add_errorf(&c->out, "ERR could not add item (%s)",
                        strerror(-rc));
        break;
    }
}

/* ---- commands ------------------------------------------------------------ */

/* CF.RESERVE key capacity [BUCKETSIZE b] [MAXITERATIONS m] [EXPANSION e]
 *            [ERROR rate] */
static void cmd_reserve(client_t *c, int argc, const resp_arg_t *argv)
{
    cf_params_t p;
    double rate;
    bool user_rate = false;

    if (argc % 2 == 0) {
        reply_wrong_arity(c, "cf.reserve");
        return;
    }
    params_from_cfg(c, &p, &rate);
    if (!parse_u64(&argv[2], &p.capacity) || p.capacity == 0) {
        resp_add_error(&c->out, "ERR Bad capacity");
        return;
    }
    for (int i = 3; i + 1 < argc; i += 2) {
        const resp_arg_t *opt = &argv[i], *val = &argv[i + 1];
        if (arg_is(opt, "BUCKETSIZE")) {
            if (!parse_bounded(c, "BUCKETSIZE", val, 1, CF_MAX_BUCKET_SIZE,
                               &p.bucket_size))
                return;
        } else if (arg_is(opt, "MAXITERATIONS")) {
            if (!parse_bounded(c, "MAXITERATIONS", val, 1, CF_MAX_KICKS,
                               &p.max_kicks))
                return;
        } else if (arg_is(opt, "EXPANSION")) {
            if (!parse_bounded(c, "EXPANSION", val, 0, CF_MAX_EXPANSION,
                               &p.expansion))
                return;
        } else if (arg_is(opt, "ERROR")) {
            if (!parse_rate(val, &rate)) {
                reply_bad_rate(c);
                return;
            }
            user_rate = true;
        } else {
            resp_add_error(&c->out, "ERR Unknown argument received");
            return;
        }
    }
    if (!apply_rate(&p, rate, user_rate)) {
        reply_bad_rate(c);
        return;
    }
    if (ks_get(c->db, argv[1].ptr, argv[1].len) != NULL) {
        resp_add_error(&c->out, "ERR item exists");
        return;
    }
    if (create_filter(c, &argv[1], &p) == NULL)
        return;
    server_dirty(c->srv, 1);
    reply_ok(c);
}

/* The filter under key, created with the configured defaults when missing.
 * *created tells which. NULL after an error reply. */
static cf_filter_t *get_or_create(client_t *c, const resp_arg_t *key,
                                  bool *created)
{
    cf_filter_t *f = ks_get(c->db, key->ptr, key->len);
    cf_params_t p;
    double rate;

    *created = false;
    if (f != NULL)
        return f;
    params_from_cfg(c, &p, &rate);
    apply_rate(&p, rate, false);
    f = create_filter(c, key, &p);
    *created = f != NULL;
    return f;
}

static void add_common(client_t *c, const resp_arg_t *argv, bool nx)
{
    bool created;
    cf_filter_t *f = get_or_create(c, &argv[1], &created);
    if (f == NULL)
        return;

    cap_growth(c, f);
    uint64_t before = cf_size_bytes(f);
    int rc = nx ? cf_add_nx(f, argv[2].ptr, argv[2].len)
                : cf_add(f, argv[2].ptr, argv[2].len);
    note_resize(c, f, before);
    uint64_t changes = (uint64_t)created + (rc == 0 && !nx) + (rc == 1);
    if (changes > 0)
        server_dirty(c->srv, changes);
    if (rc < 0)
        reply_add_error(c, rc);
    else
        resp_add_bool(&c->out, nx ? rc == 1 : true);
}

/* CF.ADD key item */
static void cmd_add(client_t *c, int argc, const resp_arg_t *argv)
{
    add_common(c, argv, false);
}

/* CF.ADDNX key item */
static void cmd_addnx(client_t *c, int argc, const resp_arg_t *argv)
{
    add_common(c, argv, true);
}

/* CF.INSERT[NX] key [CAPACITY c] [ERROR rate] [NOCREATE] ITEMS item... */
static void insert_common(client_t *c, int argc, const resp_arg_t *argv,
                          bool nx, const char *name)
{
    cf_params_t p;
    double rate;
    bool user_rate = false, nocreate = false, created = false;
    int first = -1;

    params_from_cfg(c, &p, &rate);
    for (int i = 2; i < argc; i++) {
        const resp_arg_t *opt = &argv[i];
        if (arg_is(opt, "ITEMS")) {
            first = i + 1;
            break;
        } else if (arg_is(opt, "NOCREATE")) {
            nocreate = true;
        } else if (arg_is(opt, "CAPACITY") && i + 1 < argc) {
            if (!parse_u64(&argv[++i], &p.capacity) || p.capacity == 0) {
                resp_add_error(&c->out, "ERR Bad capacity");
                return;
            }
        } else if (arg_is(opt, "ERROR") && i + 1 < argc) {
            if (!parse_rate(&argv[++i], &rate)) {
                reply_bad_rate(c);
                return;
            }
            user_rate = true;
        } else {
            resp_add_error(&c->out, "ERR Unknown argument received");
            return;
        }
    }
    if (first < 0 || first >= argc) {
        reply_wrong_arity(c, name);
        return;
    }
    if (!apply_rate(&p, rate, user_rate)) {
        reply_bad_rate(c);
        return;
    }

    cf_filter_t *f = ks_get(c->db, argv[1].ptr, argv[1].len);
    if (f == NULL) {
        if (nocreate) {
            resp_add_error(&c->out, "ERR not found");
            return;
        }
        f = create_filter(c, &argv[1], &p);
        if (f == NULL)
            return;
        created = true;
    }

    size_t n = (size_t)(argc - first);
    const void *keys[CF_WINDOW];
    size_t lens[CF_WINDOW];
    int rcs[CF_WINDOW];
    cap_growth(c, f);
    uint64_t before = cf_size_bytes(f), changes = created;

    resp_add_array(&c->out, n);
    for (size_t i = 0; i < n;) {
        size_t m = n - i < CF_WINDOW ? n - i : CF_WINDOW;
        for (size_t j = 0; j < m; j++) {
            keys[j] = argv[first + i + j].ptr;
            lens[j] = argv[first + i + j].len;
        }
        cf_add_many(f, m, keys, lens, nx, rcs);
        for (size_t j = 0; j < m; j++) {
            int rc = rcs[j];
            if (nx) {
                changes += rc == 1;
                resp_add_int(&c->out, rc < 0 ? -1 : rc);
            } else if (rc == 0) {
                changes++;
                resp_add_bool(&c->out, true);
            } else if (c->out.proto >= 3) {
                resp_add_bool(&c->out, false);
            } else {
                resp_add_int(&c->out, -1);
            }
        }
        i += m;
    }
    note_resize(c, f, before);
    if (changes > 0)
        server_dirty(c->srv, changes);
}

static void cmd_insert(client_t *c, int argc, const resp_arg_t *argv)
{
    insert_common(c, argc, argv, false, "cf.insert");
}

static void cmd_insertnx(client_t *c, int argc, const resp_arg_t *argv)
{
    insert_common(c, argc, argv, true, "cf.insertnx");
}

/* The filter under argv[1] for a read, counted as a keyspace hit or miss. */
static const cf_filter_t *lookup(client_t *c, const resp_arg_t *argv)
{
    const cf_filter_t *f = ks_get(c->db, argv[1].ptr, argv[1].len);
    server_keyspace_hit(c->srv, f != NULL);
    return f;
}

/* CF.EXISTS key item */
static void cmd_exists(client_t *c, int argc, const resp_arg_t *argv)
{
    const cf_filter_t *f = lookup(c, argv);
    resp_add_bool(&c->out,
                  f != NULL && cf_exists(f, argv[2].ptr, argv[2].len));
}

/* CF.MEXISTS key item... */
static void cmd_mexists(client_t *c, int argc, const resp_arg_t *argv)
{
    const cf_filter_t *f = lookup(c, argv);
    size_t n = (size_t)(argc - 2);
    const void *keys[CF_WINDOW];
    size_t lens[CF_WINDOW];
    bool found[CF_WINDOW];

    resp_add_array(&c->out, n);
    for (size_t i = 0; i < n;) {
        size_t m = n - i < CF_WINDOW ? n - i : CF_WINDOW;
        if (f == NULL) {
            memset(found, 0, sizeof(found));
        } else {
            for (size_t j = 0; j < m; j++) {
                keys[j] = argv[2 + i + j].ptr;
                lens[j] = argv[2 + i + j].len;
            }
            cf_exists_many(f, m, keys, lens, found);
        }
        for (size_t j = 0; j < m; j++)
            resp_add_bool(&c->out, found[j]);
        i += m;
    }
}

/* CF.DEL key item */
static void cmd_del(client_t *c, int argc, const resp_arg_t *argv)
{
    cf_filter_t *f = ks_get(c->db, argv[1].ptr, argv[1].len);
    if (f == NULL) {
        resp_add_error(&c->out, "ERR Not found");
        return;
    }
    int rc = cf_del(f, argv[2].ptr, argv[2].len);
    if (rc == 1)
        server_dirty(c->srv, 1);
    resp_add_bool(&c->out, rc == 1);
}

/* CF.COUNT key item */
static void cmd_count(client_t *c, int argc, const resp_arg_t *argv)
{
    const cf_filter_t *f = lookup(c, argv);
    uint64_t n = f != NULL ? cf_count(f, argv[2].ptr, argv[2].len) : 0;
    resp_add_int(&c->out, n > INT64_MAX ? INT64_MAX : (int64_t)n);
}

static void info_field(client_t *c, const char *name, uint64_t v)
{
    resp_add_cstr(&c->out, name);
    resp_add_int(&c->out, v > INT64_MAX ? INT64_MAX : (int64_t)v);
}

/* CF.INFO key */
static void cmd_info(client_t *c, int argc, const resp_arg_t *argv)
{
    const cf_filter_t *f = lookup(c, argv);
    cf_stats_t st;

    if (f == NULL) {
        resp_add_error(&c->out, "ERR not found");
        return;
    }
    cf_stats(f, &st);
    double err = cf_error_bound(st.bucket_size, st.fp_bits) *
                 (double)(st.nfilters > 0 ? st.nfilters : 1);
    resp_add_map(&c->out, 11);
    info_field(c, "Size", st.size_bytes);
    info_field(c, "Number of buckets", st.nbuckets);
    info_field(c, "Number of filters", st.nfilters);
    info_field(c, "Number of items inserted", st.items);
    info_field(c, "Number of items deleted", st.deleted);
    info_field(c, "Bucket size", st.bucket_size);
    info_field(c, "Expansion rate", st.expansion);
    info_field(c, "Max iterations", st.max_kicks);
    info_field(c, "Fingerprint bits", st.fp_bits);
    info_field(c, "Capacity", st.capacity);
    resp_add_cstr(&c->out, "Error rate");
    resp_add_double(&c->out, err < 1 ? err : 1);
}

/* CF.SCANDUMP key iterator */
static void cmd_scandump(client_t *c, int argc, const resp_arg_t *argv)
{
    const cf_filter_t *f = lookup(c, argv);
    int64_t it;

    if (f == NULL) {
        resp_add_error(&c->out, "ERR not found");
        return;
    }
    if (!parse_i64(&argv[2], &it) || it < 0) {
        resp_add_error(&c->out, "ERR Invalid position");
        return;
    }
    if (it == 0) {
        unsigned char hdr[CF_HEADER_MAX];
        size_t len = cf_header_len(f);
        cf_header_write(f, hdr);
        resp_add_array(&c->out, 2);
        resp_add_int(&c->out, 1);
        resp_add_bulk(&c->out, hdr, len);
        return;
    }

    const void *p = NULL;
    uint64_t off = (uint64_t)it - 1;
    size_t n = cf_data_view(f, off, CF_DUMP_CHUNK, &p);
    resp_add_array(&c->out, 2);
    if (n == 0) {
        resp_add_int(&c->out, 0);
        resp_add_null(&c->out);
        return;
    }
    resp_add_int(&c->out, (int64_t)(off + n + 1));
    resp_add_bulk(&c->out, p, n);
}

static void load_header(client_t *c, const resp_arg_t *key,
                        const resp_arg_t *data)
{
    /* The header is untrusted: what it asks for is checked against what is
     * left (not against all of memory, per key) before any allocation. */
    uint64_t room = server_memory_headroom(c->srv);
    cf_limits_t lim = {.max_bytes = room == UINT64_MAX ? 0 : room};
    cf_filter_t *f;
    size_t used = 0;
    int rc;

    if (ks_get(c->db, key->ptr, key->len) != NULL) {
        resp_add_error(&c->out, "ERR item exists");
        return;
    }
    if (room == 0) {
        reply_no_memory(c);
        return;
    }
    rc = cf_load_header(data->ptr, data->len, &lim, &f, &used);
    if (rc == -ENOMEM && server_cfg(c->srv)->maxmemory != 0) {
        resp_add_error(&c->out, CF_ERR_OOM);
        return;
    }
    if (rc == -ENOMEM) {
        resp_add_error(&c->out,
                       "ERR Invalid header: the filter is too large");
        return;
    }
    if (rc != 0) {
        resp_add_error(&c->out, "ERR Invalid header");
        return;
    }
    if (used != data->len) {
        cf_free(f);
        resp_add_error(&c->out, "ERR Invalid header");
        return;
    }
    /* The tables were checked; this counts the struct too. */
    if (cf_size_bytes(f) > room) {
        cf_free(f);
        reply_no_memory(c);
        return;
    }
    rc = ks_add(c->db, key->ptr, key->len, f);
    if (rc != 0) {
        cf_free(f);
        resp_add_error(&c->out, CF_ERR_OOM);
        return;
    }
    server_dirty(c->srv, 1);
    reply_ok(c);
}

/* CF.LOADCHUNK key iterator data */
static void cmd_loadchunk(client_t *c, int argc, const resp_arg_t *argv)
{
    int64_t it;

    if (!parse_i64(&argv[2], &it) || it < 1) {
        resp_add_error(&c->out, "ERR Invalid position");
        return;
    }
    if (it == 1) {
        load_header(c, &argv[1], &argv[3]);
        return;
    }

    cf_filter_t *f = ks_get(c->db, argv[1].ptr, argv[1].len);
    if (f == NULL) {
        resp_add_error(&c->out, "ERR not found");
        return;
    }
    uint64_t end = (uint64_t)it - 1, len = argv[3].len;
    if (len == 0 || len > end ||
        cf_load_data(f, end - len, argv[3].ptr, argv[3].len) != 0) {
        resp_add_error(&c->out, "ERR Invalid position");
        return;
    }
    server_dirty(c->srv, 1);
    reply_ok(c);
}

/* ---- the table ----------------------------------------------------------- */

#define ARG_END {NULL, NULL, NULL, 0, NULL}
#define OPT CMD_ARG_OPTIONAL
#define MULTI CMD_ARG_MULTIPLE

static const cmd_arg_t args_reserve[] = {
    {"key", "key", NULL, 0, NULL},
    {"capacity", "integer", NULL, 0, NULL},
    {"bucketsize", "integer", "BUCKETSIZE", OPT, NULL},
    {"maxiterations", "integer", "MAXITERATIONS", OPT, NULL},
    {"expansion", "integer", "EXPANSION", OPT, NULL},
    {"rate", "double", "ERROR", OPT, NULL},
    ARG_END,
};

static const cmd_arg_t args_key_item[] = {
    {"key", "key", NULL, 0, NULL},
    {"item", "string", NULL, 0, NULL},
    ARG_END,
};

static const cmd_arg_t args_key_items[] = {
    {"key", "key", NULL, 0, NULL},
    {"item", "string", NULL, MULTI, NULL},
    ARG_END,
};

static const cmd_arg_t args_insert[] = {
    {"key", "key", NULL, 0, NULL},
    {"capacity", "integer", "CAPACITY", OPT, NULL},
    {"rate", "double", "ERROR", OPT, NULL},
    {"nocreate", "pure-token", "NOCREATE", OPT, NULL},
    {"item", "string", "ITEMS", MULTI, NULL},
    ARG_END,
};

static const cmd_arg_t args_key[] = {
    {"key", "key", NULL, 0, NULL},
    ARG_END,
};

static const cmd_arg_t args_scandump[] = {
    {"key", "key", NULL, 0, NULL},
    {"iterator", "integer", NULL, 0, NULL},
    ARG_END,
};

static const cmd_arg_t args_loadchunk[] = {
    {"key", "key", NULL, 0, NULL},
    {"iterator", "integer", NULL, 0, NULL},
    {"data", "string", NULL, 0, NULL},
    ARG_END,
};

#define CF_W (CMD_WRITE | CMD_DENYOOM)
#define CF_R (CMD_READONLY | CMD_FAST)
#define CF_CMD(name, arity, flags, proc, summary, complexity, args)           \
    {name, arity, flags, proc, 1, 1, 1, "cf", summary, "1.0.0", complexity,   \
     args, NULL}

/* The single-item commands whose buckets are worth fetching ahead. */
static bool prefetchable(const resp_arg_t *name)
{
    static const char *const names[] = {"cf.exists", "cf.add", "cf.addnx",
                                        "cf.del", "cf.count"};
    for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
        if (name->len == strlen(names[i]) &&
            strncasecmp(name->ptr, names[i], name->len) == 0)
            return true;
    return false;
}

void cmd_cf_prefetch(client_t *c, const resp_peek_t *next, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        const resp_peek_t *pk = &next[i];
        if (pk->argc != 3 || !prefetchable(&pk->argv[0]))
            continue;
        const cf_filter_t *f =
            ks_get(c->db, pk->argv[1].ptr, pk->argv[1].len);
        if (f != NULL)
            cf_prefetch(f, pk->argv[2].ptr, pk->argv[2].len);
    }
}

const cmd_def_t cmd_cf_table[] = {
    CF_CMD("cf.reserve", -3, CF_W, cmd_reserve,
           "Creates a new Cuckoo Filter", "O(1)", args_reserve),
    CF_CMD("cf.add", 3, CF_W | CMD_FAST, cmd_add,
           "Adds an item to a Cuckoo Filter",
           "O(k + i), where k is the number of sub-filters and i is "
           "maxIterations",
           args_key_item),
    CF_CMD("cf.addnx", 3, CF_W | CMD_FAST, cmd_addnx,
           "Adds an item to a Cuckoo Filter if the item did not exist "
           "previously.",
           "O(k + i), where k is the number of sub-filters and i is "
           "maxIterations",
           args_key_item),
    CF_CMD("cf.insert", -4, CF_W, cmd_insert,
           "Adds one or more items to a Cuckoo Filter. A filter will be "
           "created if it does not exist",
           "O(n * (k + i)), where n is the number of items, k is the number "
           "of sub-filters and i is maxIterations",
           args_insert),
    CF_CMD("cf.insertnx", -4, CF_W, cmd_insertnx,
           "Adds one or more items to a Cuckoo Filter if the items did not "
           "exist previously. A filter will be created if it does not exist",
           "O(n * (k + i)), where n is the number of items, k is the number "
           "of sub-filters and i is maxIterations",
           args_insert),
    CF_CMD("cf.exists", 3, CF_R, cmd_exists,
           "Checks whether one or more items exist in a Cuckoo Filter",
           "O(k), where k is the number of sub-filters", args_key_item),
    CF_CMD("cf.mexists", -3, CF_R, cmd_mexists,
           "Checks whether one or more items exist in a Cuckoo Filter",
           "O(k * n), where k is the number of sub-filters and n is the "
           "number of items",
           args_key_items),
    CF_CMD("cf.del", 3, CMD_WRITE | CMD_FAST, cmd_del,
           "Deletes an item from a Cuckoo Filter",
           "O(k), where k is the number of sub-filters", args_key_item),
    CF_CMD("cf.count", 3, CF_R, cmd_count,
           "Return the number of times an item might be in a Cuckoo Filter",
           "O(k), where k is the number of sub-filters", args_key_item),
    CF_CMD("cf.info", 2, CF_R, cmd_info,
           "Returns information about a Cuckoo Filter", "O(1)", args_key),
    CF_CMD("cf.scandump", 3, CMD_READONLY, cmd_scandump,
           "Begins an incremental save of the bloom filter",
           "O(n), where n is the capacity", args_scandump),
    CF_CMD("cf.loadchunk", 4, CF_W, cmd_loadchunk,
           "Restores a filter previously saved using SCANDUMP",
           "O(n), where n is the capacity", args_loadchunk),
    {NULL, 0, 0, NULL, 0, 0, 0, NULL, NULL, NULL, NULL, NULL, NULL},
};
