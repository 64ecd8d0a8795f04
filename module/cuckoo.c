/*
 * cuckoo.c - the Redis/Valkey module: the CF.* command layer (commands/)
 * hosted by the server's keyspace, and a data type that persists filters in
 * the core's own encoding (filter/cf.h).
 *
 *   redis-server --loadmodule /path/cuckoo.so [cf-bucket-size 4 ...]
 *
 * Module name "cf" (MODULE LIST, COMMAND DOCS), data type "cuckoo-cf"
 * (TYPE), encoding version 1.
 *
 * Choices:
 *  - Memory: every byte of a filter comes from the server's allocator
 *    (cf_set_allocator with RedisModule_Alloc & co.), so used_memory,
 *    maxmemory and INFO see filters; large tables are not mapped apart.
 *    Blocks of 4 MiB and more are hinted for transparent huge pages
 *    (MADV_HUGEPAGE on the 2 MiB pages wholly inside them): a lookup in a
 *    table past the TLB's reach otherwise stalls on a page walk, which
 *    under a hypervisor costs as much as the cache miss itself. The price:
 *    during a BGSAVE the first write to a huge page copies 2 MiB, not 4 KiB
 *    (random inserts copy every page of a table either way).
 *  - Replication: writes are replicated verbatim; the core's relocations
 *    depend only on a filter's saved state, so a replica (or an AOF replay)
 *    makes the same moves. The one non-deterministic step is a new filter's
 *    random hash seed: a command that creates a filter replicates first the
 *    new, empty filter's header as CF.LOADCHUNK key 1 <header> (the header
 *    holds the seed and the shape), then itself (CF.RESERVE: nothing more).
 *  - Memory bounds: commands from the master or the AOF are never refused
 *    for maxmemory (Redis's own rule), only for the machine's memory.
 *  - RDB: the header as one string, then the data in strings of at most
 *    RDB_CHUNK bytes. A payload that does not parse is refused (NULL): the
 *    server then reports a corrupt value, never crashes on it.
 *  - Filters with a window: a timer every SWEEP_EVERY_MS gives them the
 *    time and sweeps (or reclaims, after a clock jump) at most
 *    SWEEP_BUCKETS of their buckets, walking the keyspace of every
 *    database with RedisModule_Scan, as the daemon's cron does; answers
 *    never wait for it. INFO's `cf_window` section counts its work.
 *    The load argument cf-window-clock-offset (ms, default 0, for tests,
 *    as the daemon's hidden directive) moves the module's clock.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/mman.h>
#include <sys/random.h>
#include <unistd.h>

#include "cfcmd.h"
#include "modargs.h"
#include "rm_abi.h"

#define MODULE_NAME "cf"
#define MODULE_VERSION 10000  /* 1.0.0 */
#define TYPE_NAME "cuckoo-cf" /* exactly 9 characters */
#define TYPE_ENCVER 1
/* Data strings in RDB and CF.LOADCHUNK commands in a rewritten AOF. */
#define RDB_CHUNK ((size_t)8 << 20)
#define AOF_CHUNK ((size_t)1 << 20)
/* How long a read of maxmemory and used_memory from INFO is reused. */
#define MEMINFO_MS 1000
/* Arguments converted on the stack up to this many; more are allocated. */
#define STACK_ARGS 64

static RedisModuleType *cf_type;
static cfcmd_defaults_t defaults;
static uint64_t seed_state;
static int64_t clock_offset_ms; /* cf-window-clock-offset */

/* The clock of filters with a window: the wall clock, moved by the
 * offset. */
static uint64_t window_now_ms(void)
{
    int64_t t = (int64_t)rm_Milliseconds() + clock_offset_ms;
    return t > 0 ? (uint64_t)t : 0;
}

/* ---- memory bounds -------------------------------------------------- */

/* The machine's memory, read once: sysconf(_SC_PHYS_PAGES) is a sysinfo()
 * system call, and asked on every write it took 40% of a pipelined CF.ADD.
 * Commands and loads run on the server's main thread only. */
static uint64_t phys_memory(void)
{
    static uint64_t bytes;
    if (bytes == 0) {
        long pages = sysconf(_SC_PHYS_PAGES), size = sysconf(_SC_PAGESIZE);
        bytes = pages <= 0 || size <= 0 ? UINT64_MAX
                                        : (uint64_t)pages * (uint64_t)size;
    }
    return bytes;
}

static struct {
    long long at; /* rm_Milliseconds() of the read, 0 = never */
    uint64_t maxmemory;
    uint64_t used;
} meminfo;

static void meminfo_refresh(RedisModuleCtx *ctx)
{
    RedisModuleServerInfoData *inf = rm_GetServerInfo(ctx, "memory");
    int err = 0;
    if (inf == NULL)
        return;
    uint64_t mm = rm_ServerInfoGetFieldUnsigned(inf, "maxmemory", &err);
    if (err == 0)
        meminfo.maxmemory = mm;
    uint64_t used = rm_ServerInfoGetFieldUnsigned(inf, "used_memory", &err);
    if (err == 0)
        meminfo.used = used;
    rm_FreeServerInfo(ctx, inf);
    meminfo.at = rm_Milliseconds();
}

/* ---- the command host ------------------------------------------------ */

typedef struct mod_call {
    RedisModuleCtx *ctx;
    RedisModuleString *keyname; /* argv[1] */
    RedisModuleKey *key;        /* opened by the first find() */
    const cfcmd_def_t *def;
    int flags; /* GetContextFlags(), -1 until asked */
    bool created, changed;
    /* A write to a filter with a window asked to be replicated with its
     * time (cfcmd_host_t.log_as): the command's name, the time, and how
     * many of the command's last arguments are its items. */
    bool timed;
    char timed_name[16];
    char timed_at[CFCMD_MS_LEN];
    size_t timed_at_len;
    int timed_items;
    RedisModuleString **argv;
    int argc;
    /* The header of a filter the command created, while still empty. */
    size_t hdr_len;
    unsigned char hdr[CF_HEADER_MAX];
} mod_call_t;

static int ctx_flags(mod_call_t *c)
{
    if (c->flags < 0)
        c->flags = rm_GetContextFlags(c->ctx);
    return c->flags;
}

static bool is_write(const mod_call_t *c)
{
    return (c->def->flags & CMD_WRITE) != 0;
}

static int h_find(void *h, const arg_t *key, bool read, cf_filter_t **out)
{
    mod_call_t *c = h;
    (void)key;  /* always argv[1]: the one key of every CF command */
    (void)read; /* OpenKey counts keyspace hits and misses itself */
    *out = NULL;
    if (c->key == NULL)
        c->key = rm_OpenKey(c->ctx, c->keyname,
                            is_write(c) ? RM_READ | RM_WRITE : RM_READ);
    if (c->key == NULL)
        return 0;
    int t = rm_KeyType(c->key);
    if (t == RM_KEYTYPE_EMPTY)
        return 0;
    if (t != RM_KEYTYPE_MODULE || rm_ModuleTypeGetType(c->key) != cf_type)
        return -EINVAL;
    *out = rm_ModuleTypeGetValue(c->key);
    return 0;
}

/* Redis keeps the value pointer as given: the filter never moves here. */
static int h_create(void *h, const arg_t *key, cf_filter_t **fp)
{
    mod_call_t *c = h;
    cf_filter_t *f = *fp;
    (void)key;
    if (c->key == NULL || !is_write(c))
        return -ENOMEM;
    /* Taken before the command stores anything: the empty filter. */
    c->hdr_len = cf_header_len(f);
    cf_header_write(f, c->hdr);
    if (rm_ModuleTypeSetValue(c->key, cf_type, f) != RM_OK)
        return -ENOMEM;
    c->created = true;
    return 0;
}

static void h_changed(void *h, const arg_t *key, cf_filter_t *f,
                      uint64_t changes)
{
    mod_call_t *c = h;
    (void)key;
    (void)f;
    (void)changes;
    c->changed = true;
}

static uint64_t h_headroom(void *h, bool *maxmemory)
{
    mod_call_t *c = h;
    uint64_t phys = phys_memory();
    *maxmemory = false;
    if (ctx_flags(c) & (RM_CTX_FLAGS_REPLICATED | RM_CTX_FLAGS_LOADING))
        return phys;
    /* The ratio is exact and cheap; maxmemory itself is read from INFO at
     * most once a MEMINFO_MS (and at once when it was set or unset). */
    float ratio = rm_GetUsedMemoryRatio();
    long long now = rm_Milliseconds();
    if (meminfo.at == 0 || now - meminfo.at >= MEMINFO_MS ||
        (ratio > 0) != (meminfo.maxmemory > 0))
        meminfo_refresh(c->ctx);
    if (ratio > 0 && meminfo.maxmemory > 0) {
        *maxmemory = true;
        double used = (double)ratio * (double)meminfo.maxmemory;
        if (used >= (double)meminfo.maxmemory)
            return 0;
        return meminfo.maxmemory - (uint64_t)used;
    }
    return phys > meminfo.used ? phys - meminfo.used : 0;
}

static uint64_t h_seed(void *h)
{
    (void)h;
    /* splitmix64 over a state drawn from the kernel at load time */
    uint64_t z = (seed_state += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

static const cfcmd_defaults_t *h_defaults(void *h)
{
    (void)h;
    return &defaults;
}

static int h_proto(void *h)
{
    return (ctx_flags(h) & RM_CTX_FLAGS_RESP3) ? 3 : 2;
}

static void h_int(void *h, long long v)
{
    rm_ReplyWithLongLong(((mod_call_t *)h)->ctx, v);
}

static void h_bool(void *h, bool b)
{
    rm_ReplyWithBool(((mod_call_t *)h)->ctx, b);
}

static void h_simple(void *h, const char *s)
{
    rm_ReplyWithSimpleString(((mod_call_t *)h)->ctx, s);
}

static void h_error(void *h, const char *s)
{
    rm_ReplyWithError(((mod_call_t *)h)->ctx, s);
}

static void h_bulk(void *h, const void *p, size_t len)
{
    rm_ReplyWithStringBuffer(((mod_call_t *)h)->ctx, p, len);
}

static void h_null(void *h)
{
    rm_ReplyWithNull(((mod_call_t *)h)->ctx);
}

static void h_double(void *h, double d)
{
    rm_ReplyWithDouble(((mod_call_t *)h)->ctx, d);
}

static void h_array(void *h, size_t n)
{
    rm_ReplyWithArray(((mod_call_t *)h)->ctx, (long)n);
}

static void h_map(void *h, size_t n)
{
    rm_ReplyWithMap(((mod_call_t *)h)->ctx, (long)n);
}

/* The bulk commands' items: one call from the command layer per
 * command, not an indirect call and h_bool() per item. */
static void h_bools(void *h, const bool *v, size_t n)
{
    RedisModuleCtx *ctx = ((mod_call_t *)h)->ctx;
    for (size_t i = 0; i < n; i++)
        rm_ReplyWithBool(ctx, v[i]);
}

/* The wall clock, or none for a replica's stream and an AOF's replay:
 * their commands carry the primary's times, so a replica forgets at the
 * same moments and holds the same bytes. */
static uint64_t h_now_ms(void *h)
{
    mod_call_t *c = h;
    if (ctx_flags(c) & (RM_CTX_FLAGS_REPLICATED | RM_CTX_FLAGS_LOADING))
        return CFCMD_NO_CLOCK;
    return window_now_ms();
}

/* The items are the command's own last arguments: the replica gets the
 * strings as they came, after cfcmd_timed_form()'s head. */
static void h_log_timed(void *h, bool nx, const arg_t *key, uint64_t at,
                        const arg_t *items, size_t nitems)
{
    mod_call_t *c = h;
    (void)items;
    if (nitems > (size_t)c->argc - 2)
        return; /* not the command's own items: replicated verbatim */
    arg_t head[CFCMD_TIMED_HEAD];
    cfcmd_timed_form(nx, key, at, c->timed_at, head);
    memcpy(c->timed_name, head[0].ptr, head[0].len);
    c->timed_name[head[0].len] = '\0';
    c->timed_at_len = head[3].len;
    c->timed_items = (int)nitems;
    c->timed = true;
}

static const cfcmd_host_t host = {
    CFCMD_HOST_INIT_FIELDS(h_),
    .reply_bools = h_bools,
    .now_ms = h_now_ms,
    .log_timed = h_log_timed,
};

static void replicate(mod_call_t *c)
{
    if (!c->changed)
        return;
    /* What the table entry says a created filter gets (cfcmd_created_t),
     * as the daemon's log does. */
    if (c->created && c->def->created != CFCMD_CREATED_SELF) {
        rm_Replicate(c->ctx, "CF.LOADCHUNK", "slb", c->keyname, 1LL,
                     (const char *)c->hdr, c->hdr_len);
        if (c->def->created == CFCMD_CREATED_INSTEAD)
            return;
    }
    if (c->timed) {
        rm_Replicate(c->ctx, c->timed_name, "sbbbv", c->keyname, "AT", 2ul,
                     c->timed_at, c->timed_at_len, "ITEMS", 5ul,
                     c->argv + (c->argc - c->timed_items),
                     (size_t)c->timed_items);
        return;
    }
    rm_ReplicateVerbatim(c->ctx);
}

static int run(RedisModuleCtx *ctx, RedisModuleString **argv, int argc,
               const cfcmd_def_t *def)
{
    arg_t stack[STACK_ARGS];
    arg_t *a = stack;
    if (argc > STACK_ARGS) {
        a = rm_Alloc((size_t)argc * sizeof(*a));
    }
    for (int i = 0; i < argc; i++)
        a[i].ptr = rm_StringPtrLen(argv[i], &a[i].len);
    /* Field by field, not "= {...}": that would zero hdr's 2 KB on every
     * call (a tenth of a CF.EXISTS's own time), and hdr is written before
     * it is read, by the one call that creates a filter. */
    mod_call_t c;
    c.ctx = ctx;
    c.keyname = argc > 1 ? argv[1] : NULL;
    c.key = NULL;
    c.def = def;
    c.flags = -1;
    c.created = c.changed = false;
    c.timed = false;
    c.argv = argv;
    c.argc = argc;
    c.hdr_len = 0;
    if (c.keyname == NULL) {
        /* The server checks arity first; this is only a guard. */
        rm_ReplyWithError(ctx, "ERR wrong number of arguments");
    } else {
        def->proc(&host, &c, argc, a);
        replicate(&c);
    }
    if (c.key != NULL)
        rm_CloseKey(c.key);
    if (a != stack)
        rm_Free(a);
    return RM_OK;
}

/* One entry point per command (the module API passes no user data). */
#define MAX_CMDS 16
static const cfcmd_def_t *cmd_defs[MAX_CMDS];
#define TRAMPOLINE(i)                                                          \
    static int cmd_##i(RedisModuleCtx *ctx, RedisModuleString **argv,          \
                       int argc)                                               \
    {                                                                          \
        return run(ctx, argv, argc, cmd_defs[i]);                              \
    }
TRAMPOLINE(0)
TRAMPOLINE(1)
TRAMPOLINE(2)
TRAMPOLINE(3)
TRAMPOLINE(4)
TRAMPOLINE(5)
TRAMPOLINE(6)
TRAMPOLINE(7)
TRAMPOLINE(8)
TRAMPOLINE(9)
TRAMPOLINE(10)
TRAMPOLINE(11)
TRAMPOLINE(12)
TRAMPOLINE(13)
TRAMPOLINE(14)
TRAMPOLINE(15)
static const rm_cmd_fn trampolines[MAX_CMDS] = {
    cmd_0, cmd_1, cmd_2,  cmd_3,  cmd_4,  cmd_5,  cmd_6,  cmd_7,
    cmd_8, cmd_9, cmd_10, cmd_11, cmd_12, cmd_13, cmd_14, cmd_15,
};

/* ---- the data type ----------------------------------------------------- */

/* A filter rebuilt from header bytes and a data source; NULL if the header
 * does not parse. */
static cf_filter_t *load_header_bytes(const void *hdr, size_t len)
{
    cf_limits_t lim = {.max_bytes = phys_memory()};
    cf_filter_t *f = NULL;
    size_t used = 0;
    if (cf_load_header(hdr, len, &lim, &f, &used) != 0)
        return NULL;
    if (used != len) {
        cf_free(f);
        return NULL;
    }
    return f;
}

static void *t_rdb_load(RedisModuleIO *io, int encver)
{
    if (encver != TYPE_ENCVER) {
        rm_LogIOError(io, "warning",
                      "cuckoo-cf: encoding version %d is not known (this "
                      "module writes %d)",
                      encver, TYPE_ENCVER);
        return NULL;
    }
    size_t len = 0;
    char *hdr = rm_LoadStringBuffer(io, &len);
    if (rm_IsIOError(io) || hdr == NULL) {
        if (hdr != NULL)
            rm_Free(hdr);
        return NULL;
    }
    cf_filter_t *f = load_header_bytes(hdr, len);
    rm_Free(hdr);
    if (f == NULL) {
        rm_LogIOError(io, "warning", "cuckoo-cf: invalid filter header");
        return NULL;
    }
    uint64_t total = cf_data_len(f), off = 0;
    while (off < total) {
        char *p = rm_LoadStringBuffer(io, &len);
        bool bad = rm_IsIOError(io) || p == NULL || len == 0 ||
                   cf_load_data(f, off, p, len) != 0;
        if (p != NULL)
            rm_Free(p);
        if (bad) {
            rm_LogIOError(io, "warning", "cuckoo-cf: invalid filter data");
            cf_free(f);
            return NULL;
        }
        off += len;
    }
    return f;
}

static void t_rdb_save(RedisModuleIO *io, void *value)
{
    const cf_filter_t *f = value;
    unsigned char hdr[CF_HEADER_MAX];
    cf_header_write(f, hdr);
    rm_SaveStringBuffer(io, (const char *)hdr, cf_header_len(f));
    const void *p;
    size_t n;
    for (uint64_t off = 0; (n = cf_data_view(f, off, RDB_CHUNK, &p)) > 0;
         off += n)
        rm_SaveStringBuffer(io, p, n);
}

/* The filter as the CF.LOADCHUNK commands of a dump: the header at
 * iterator 1, then each data chunk at its end offset + 1. */
static void t_aof_rewrite(RedisModuleIO *aof, RedisModuleString *key,
                          void *value)
{
    const cf_filter_t *f = value;
    unsigned char hdr[CF_HEADER_MAX];
    cf_header_write(f, hdr);
    rm_EmitAOF(aof, "CF.LOADCHUNK", "slb", key, 1LL, (const char *)hdr,
               cf_header_len(f));
    const void *p;
    size_t n;
    for (uint64_t off = 0; (n = cf_data_view(f, off, AOF_CHUNK, &p)) > 0;
         off += n)
        rm_EmitAOF(aof, "CF.LOADCHUNK", "slb", key, (long long)(off + n + 1),
                   (const char *)p, n);
}

static size_t t_mem_usage(const void *value)
{
    return (size_t)cf_size_bytes(value);
}

static void t_digest(RedisModuleDigest *md, void *value)
{
    const cf_filter_t *f = value;
    unsigned char hdr[CF_HEADER_MAX];
    cf_header_write(f, hdr);
    rm_DigestAddStringBuffer(md, (const char *)hdr, cf_header_len(f));
    const void *p;
    size_t n;
    for (uint64_t off = 0; (n = cf_data_view(f, off, RDB_CHUNK, &p)) > 0;
         off += n)
        rm_DigestAddStringBuffer(md, p, n);
    rm_DigestEndSequence(md);
}

static void t_free(void *value)
{
    cf_free(value);
}

/* Freeing unmaps whole tables, which costs in proportion to their pages:
 * the server frees values whose effort passes 64 in a background thread
 * (UNLINK, FLUSHALL ASYNC, lazyfree-*), i.e. filters of 4 MB and more. */
static size_t t_free_effort(RedisModuleString *key, const void *value)
{
    (void)key;
    return (size_t)(cf_size_bytes(value) >> 16) + 1;
}

static void *t_copy(RedisModuleString *from, RedisModuleString *to,
                    const void *value)
{
    const cf_filter_t *f = value;
    unsigned char hdr[CF_HEADER_MAX];
    (void)from;
    (void)to;
    cf_header_write(f, hdr);
    cf_filter_t *g = load_header_bytes(hdr, cf_header_len(f));
    if (g == NULL)
        return NULL;
    const void *p;
    size_t n;
    for (uint64_t off = 0; (n = cf_data_view(f, off, RDB_CHUNK, &p)) > 0;
         off += n)
        (void)cf_load_data(g, off, p, n);
    return g;
}

/* ---- the sweep of filters with a window ---------------------------- */

#define SWEEP_EVERY_MS 100
/* Buckets per tick, over all filters: 163,840 a second, so a filter of
 * 10M items (2.9M buckets) is swept in about 18 s. */
#define SWEEP_BUCKETS 16384
/* Scan steps per tick (a step reads a hash bucket of the keyspace), so
 * that a keyspace of many keys and few filters also costs a bounded
 * time. */
#define SWEEP_STEPS 256
/* Databases tried beyond the last that exists: SelectDb fails there. */
#define SWEEP_MAX_DB 1024

static struct {
    RedisModuleScanCursor *cursor;
    int db;
    uint64_t ticks, buckets, freed, max_visit;
} sweeper;

typedef struct sweep_tick {
    uint64_t now, budget;
} sweep_tick_t;

static void sweep_on_key(RedisModuleCtx *ctx, RedisModuleString *keyname,
                         RedisModuleKey *key, void *privdata)
{
    sweep_tick_t *t = privdata;
    (void)ctx;
    (void)keyname;
    if (key == NULL || t->budget == 0 || rm_KeyType(key) != RM_KEYTYPE_MODULE ||
        rm_ModuleTypeGetType(key) != cf_type)
        return;
    cf_filter_t *f = rm_ModuleTypeGetValue(key);
    if (f == NULL || !cf_is_window(f))
        return;
    cf_stats_t st;
    cf_window_info_t wi;
    cf_stats(f, &st);
    uint64_t n = st.nbuckets < t->budget ? st.nbuckets : t->budget;
    cf_set_time(f, t->now, t->now);
    sweeper.freed += cf_sweep(f, n);
    sweeper.buckets += n;
    t->budget -= n;
    if (cf_window_info(f, &wi) && wi.max_visit > sweeper.max_visit)
        sweeper.max_visit = wi.max_visit;
}

static void sweep_on_timer(RedisModuleCtx *ctx, void *data)
{
    (void)data;
    rm_CreateTimer(ctx, SWEEP_EVERY_MS, sweep_on_timer, NULL);
    if (rm_GetContextFlags(ctx) & RM_CTX_FLAGS_LOADING)
        return;
    sweeper.ticks++;
    sweep_tick_t t = {window_now_ms(), SWEEP_BUCKETS};
    int wraps = 0;
    for (int step = 0; step < SWEEP_STEPS && t.budget > 0 && wraps < 2;
         step++) {
        if (rm_SelectDb(ctx, sweeper.db) != RM_OK) {
            /* past the last database: back to the first */
            sweeper.db = 0;
            rm_ScanCursorRestart(sweeper.cursor);
            wraps++;
            continue;
        }
        if (!rm_Scan(ctx, sweeper.cursor, sweep_on_key, &t)) {
            rm_ScanCursorRestart(sweeper.cursor);
            sweeper.db = sweeper.db + 1 < SWEEP_MAX_DB ? sweeper.db + 1 : 0;
        }
    }
}

static void sweep_on_info(RedisModuleInfoCtx *ctx, int for_crash_report)
{
    (void)for_crash_report;
    rm_InfoAddSection(ctx, "window");
    rm_InfoAddFieldULongLong(ctx, "window_sweep_ticks", sweeper.ticks);
    rm_InfoAddFieldULongLong(ctx, "window_swept_buckets", sweeper.buckets);
    rm_InfoAddFieldULongLong(ctx, "window_swept_entries", sweeper.freed);
    rm_InfoAddFieldULongLong(ctx, "window_most_buckets_per_call",
                             sweeper.max_visit);
}

/* Takes cf-window-clock-offset out of the load arguments (the rest go to
 * modargs_parse()); false with a message in why when its value is bad. */
static bool take_clock_offset(arg_t *a, int *argc, char *why, size_t wlen)
{
    int n = 0;
    for (int i = 0; i < *argc; i++) {
        if (i + 1 < *argc && a[i].len == 22 &&
            strncasecmp(a[i].ptr, "cf-window-clock-offset", 22) == 0) {
            char buf[32], *end;
            size_t len =
                a[i + 1].len < sizeof(buf) - 1 ? a[i + 1].len : sizeof(buf) - 1;
            memcpy(buf, a[i + 1].ptr, len);
            buf[len] = '\0';
            errno = 0;
            long long v = strtoll(buf, &end, 10);
            if (len == 0 || len != a[i + 1].len || *end != '\0' || errno != 0) {
                snprintf(why, wlen,
                         "cf-window-clock-offset: not an integer (ms)");
                return false;
            }
            clock_offset_ms = v;
            i++;
            continue;
        }
        a[n++] = a[i];
    }
    *argc = n;
    return true;
}

/* ---- registration ---------------------------------------------------------
 */

static int arg_type(const char *t)
{
    static const struct {
        const char *name;
        int type;
    } types[] = {
        {"string", RM_ARG_TYPE_STRING},
        {"integer", RM_ARG_TYPE_INTEGER},
        {"double", RM_ARG_TYPE_DOUBLE},
        {"key", RM_ARG_TYPE_KEY},
        {"pattern", RM_ARG_TYPE_PATTERN},
        {"pure-token", RM_ARG_TYPE_PURE_TOKEN},
        {"oneof", RM_ARG_TYPE_ONEOF},
        {"block", RM_ARG_TYPE_BLOCK},
    };
    for (size_t i = 0; i < sizeof(types) / sizeof(types[0]); i++)
        if (strcmp(t, types[i].name) == 0)
            return types[i].type;
    return RM_ARG_TYPE_STRING;
}

/* Frees what convert_args() made (NULL is fine). */
static void free_args(rm_command_arg_t *args)
{
    if (args == NULL)
        return;
    for (size_t i = 0; args[i].name != NULL; i++)
        free_args(args[i].subargs);
    free(args);
}

/* The command layer's argument docs in the module API's form: a
 * zero-terminated array; the caller frees it with free_args() once the
 * server has copied it (SetCommandInfo copies everything it keeps). */
static rm_command_arg_t *convert_args(const cmd_arg_t *args)
{
    size_t n = 0;
    while (args[n].name != NULL)
        n++;
    rm_command_arg_t *out = calloc(n + 1, sizeof(*out));
    if (out == NULL)
        return NULL;
    for (size_t i = 0; i < n; i++) {
        const cmd_arg_t *a = &args[i];
        out[i].name = a->name;
        out[i].type = arg_type(a->type);
        out[i].key_spec_index = out[i].type == RM_ARG_TYPE_KEY ? 0 : -1;
        out[i].token = a->token;
        out[i].flags =
            ((a->flags & CMD_ARG_OPTIONAL) ? RM_CMD_ARG_OPTIONAL : 0) |
            ((a->flags & CMD_ARG_MULTIPLE) ? RM_CMD_ARG_MULTIPLE : 0) |
            ((a->flags & CMD_ARG_MULTIPLE_TOKEN) ? RM_CMD_ARG_MULTIPLE_TOKEN
                                                 : 0);
        if (a->sub != NULL && (out[i].subargs = convert_args(a->sub)) == NULL) {
            free_args(out);
            return NULL;
        }
    }
    return out;
}

/* A key spec's flags (cmdarg.h's KS_*) as the module API spells them. */
static uint64_t key_flags(unsigned ks)
{
    static const struct {
        unsigned ks;
        uint64_t rm;
    } map[] = {
        {KS_RO, RM_CMD_KEY_RO},
        {KS_RW, RM_CMD_KEY_RW},
        {KS_OW, RM_CMD_KEY_OW},
        {KS_RM, RM_CMD_KEY_RM},
        {KS_ACCESS, RM_CMD_KEY_ACCESS},
        {KS_UPDATE, RM_CMD_KEY_UPDATE},
        {KS_INSERT, RM_CMD_KEY_INSERT},
        {KS_DELETE, RM_CMD_KEY_DELETE},
        {KS_NOT_KEY, RM_CMD_KEY_NOT_KEY},
        {KS_INCOMPLETE, RM_CMD_KEY_INCOMPLETE},
        {KS_VARIABLE_FLAGS, RM_CMD_KEY_VARIABLE_FLAGS},
    };
    uint64_t out = 0;
    for (size_t i = 0; i < sizeof(map) / sizeof(map[0]); i++)
        if (ks & map[i].ks)
            out |= map[i].rm;
    return out;
}

/* Whether the commands are filed in ACL categories (the server has
 * SetCommandACLCategories), and whether @cuckoo is among them (it has
 * AddACLCategory too, or another module made the category). */
static bool acl_cats_on, acl_cuckoo_on;

/* Makes @cuckoo where the server can file module commands in categories;
 * says once at load what a server that cannot means. */
static void acl_setup(RedisModuleCtx *ctx)
{
    if (rm_SetCommandACLCategories == NULL) {
        rm_Log(ctx, "notice",
               "cuckoo: this server cannot file module commands in ACL "
               "categories (RedisModule_SetCommandACLCategories, Redis 7.2+ "
               "and Valkey 8): the CF commands belong to none, so +@read, "
               "+@write and +@cuckoo do not grant them; grant them by name "
               "(+cf.exists) or with +@all. Key patterns (%%R~, %%W~) apply "
               "to them through their key specs.");
        return;
    }
    acl_cats_on = true;
    if (rm_AddACLCategory == NULL) {
        rm_Log(ctx, "notice",
               "cuckoo: this server cannot add ACL categories "
               "(RedisModule_AddACLCategory, Redis 7.4+ and Valkey 8): the CF "
               "commands are filed in @read, @write, @fast or @slow, and "
               "there is no @cuckoo.");
        return;
    }
    /* EBUSY: another module (RedisBloom) made it; the commands join it. */
    acl_cuckoo_on = rm_AddACLCategory(ctx, "cuckoo") == RM_OK || errno == EBUSY;
    if (!acl_cuckoo_on)
        rm_Log(ctx, "warning",
               "cuckoo: cannot add the ACL category cuckoo (%s); the CF "
               "commands keep their other categories",
               strerror(errno));
}

/* Files d's command in the categories the daemon gives it: those its flags
 * imply, as Redis does for its own commands (module commands get none
 * implied), and @cuckoo. */
static void set_categories(RedisModuleCtx *ctx, RedisModuleCommand *cmd,
                           const cfcmd_def_t *d)
{
    if (!acl_cats_on)
        return;
    uint64_t cats = cmd_acl_implied(d->flags, d->acl);
    if (!acl_cuckoo_on)
        cats &= ~(uint64_t)ACL_CAT_CUCKOO;
    char buf[256] = "";
    size_t len = 0;
    for (int i = 0; i < ACL_NCATS; i++)
        if (cats & ((uint64_t)1 << i))
            len += (size_t)snprintf(buf + len, sizeof(buf) - len, "%s%s",
                                    len ? " " : "", acl_cat_names[i]);
    if (rm_SetCommandACLCategories(cmd, buf) != RM_OK)
        rm_Log(ctx, "warning", "cuckoo: cannot file %s in ACL categories %s",
               d->name, buf);
}

static int register_command(RedisModuleCtx *ctx, const cfcmd_def_t *d,
                            rm_cmd_fn fn)
{
    static const rm_command_info_version_t version = {
        .version = 1,
        .sizeof_historyentry = sizeof(rm_command_history_t),
        .sizeof_keyspec = sizeof(rm_key_spec_t),
        .sizeof_arg = sizeof(rm_command_arg_t),
    };
    char flags[64] = "";
    if (d->flags & CMD_WRITE)
        strcat(flags, "write ");
    if (d->flags & CMD_READONLY)
        strcat(flags, "readonly ");
    if (d->flags & CMD_DENYOOM)
        strcat(flags, "deny-oom ");
    if (d->flags & CMD_FAST)
        strcat(flags, "fast ");
    size_t fl = strlen(flags);
    if (fl > 0)
        flags[fl - 1] = '\0';
    if (rm_CreateCommand(ctx, d->name, fn, flags, 1, 1, 1) != RM_OK)
        return RM_ERR;
    RedisModuleCommand *cmd = rm_GetCommand(ctx, d->name);
    if (cmd == NULL)
        return RM_ERR;
    set_categories(ctx, cmd, d);
    rm_key_spec_t *specs = calloc(CMD_MAX_KEYSPECS + 1, sizeof(*specs));
    rm_command_arg_t *args = d->args ? convert_args(d->args) : NULL;
    if (specs == NULL || (d->args != NULL && args == NULL)) {
        free(specs);
        free_args(args);
        return RM_ERR;
    }
    for (int k = 0; k < CMD_MAX_KEYSPECS && d->keyspecs[k].begin != 0; k++) {
        const cmd_keyspec_t *ks = &d->keyspecs[k];
        specs[k].flags = key_flags(ks->flags);
        specs[k].begin_search_type = RM_KSPEC_BS_INDEX;
        specs[k].bs.index.pos = ks->begin;
        specs[k].find_keys_type = RM_KSPEC_FK_RANGE;
        specs[k].fk.range.lastkey = ks->last;
        specs[k].fk.range.keystep = ks->step > 0 ? ks->step : 1;
        specs[k].fk.range.limit = ks->limit;
    }
    rm_command_info_t info = {
        .version = &version,
        .summary = d->summary,
        .complexity = d->complexity,
        .since = d->since,
        .arity = d->arity,
        .key_specs = specs,
        .args = args,
    };
    int rc = rm_SetCommandInfo(cmd, &info);
    free(specs);
    free_args(args);
    return rc;
}

/* Blocks from this size up (a big filter's table, a growable filter's
 * 2 MiB segment) are hinted for transparent huge pages: a lookup's random
 * probes into a table far larger than the TLB's reach otherwise pay a page
 * walk each. The hint covers the 2 MiB-aligned pages the block touches,
 * its edges included: the allocator does not align 2 MiB blocks to 2 MiB,
 * so the pages wholly inside one are often none, while the segments of one
 * filter lie side by side. The pages at the edges may also hold the
 * allocator's other blocks; the hint lets the kernel back them with huge
 * pages too, nothing else. The memory stays the allocator's (the server
 * counts it) (THP "madvise" mode; a server that disabled THP for itself
 * ignores it). */
#define HUGE_MIN ((size_t)2 << 20)
#define HUGE_PAGE ((uintptr_t)2 << 20)

static void *huge_hint(void *p, size_t n)
{
#ifdef MADV_HUGEPAGE
    if (p != NULL && n >= HUGE_MIN) {
        uintptr_t a = (uintptr_t)p & ~(HUGE_PAGE - 1);
        uintptr_t e = ((uintptr_t)p + n + HUGE_PAGE - 1) & ~(HUGE_PAGE - 1);
        (void)madvise((void *)a, e - a, MADV_HUGEPAGE);
    }
#else
    (void)n;
#endif
    return p;
}

/* The server's allocator, for every byte of every filter. */
static void *a_malloc(size_t n)
{
    return huge_hint(rm_Alloc(n), n);
}
static void *a_calloc(size_t n, size_t size)
{
    return huge_hint(rm_Calloc(n, size), n * size);
}
static void *a_realloc(void *p, size_t n)
{
    return huge_hint(rm_Realloc(p, n), n);
}
static void a_free(void *p)
{
    rm_Free(p);
}

__attribute__((visibility("default"))) int
RedisModule_OnLoad(RedisModuleCtx *ctx, RedisModuleString **argv, int argc);

int RedisModule_OnLoad(RedisModuleCtx *ctx, RedisModuleString **argv, int argc)
{
    if (rm_init(ctx, MODULE_NAME, MODULE_VERSION) != RM_OK)
        return RM_ERR;

    modargs_default(&defaults);
    if (argc > 0) {
        arg_t a[32];
        char why[192];
        if (argc > 32) {
            rm_Log(ctx, "warning", "cuckoo: too many module arguments");
            return RM_ERR;
        }
        for (int i = 0; i < argc; i++)
            a[i].ptr = rm_StringPtrLen(argv[i], &a[i].len);
        if (!take_clock_offset(a, &argc, why, sizeof(why)) ||
            modargs_parse(&defaults, argc, a, why, sizeof(why)) != 0) {
            rm_Log(ctx, "warning", "cuckoo: bad module argument %s", why);
            return RM_ERR;
        }
    }
    if (getrandom(&seed_state, sizeof(seed_state), 0) !=
        (ssize_t)sizeof(seed_state))
        seed_state = (uint64_t)rm_Milliseconds() ^ (uint64_t)getpid() << 32;

    static const cf_allocator_t server_alloc = {a_malloc, a_calloc, a_realloc,
                                                a_free};
    cf_set_allocator(&server_alloc);
    rm_SetModuleOptions(ctx, RM_OPTIONS_HANDLE_IO_ERRORS);

    static rm_type_methods_t tm = {
        .version = RM_TYPE_METHOD_VERSION,
        .rdb_load = t_rdb_load,
        .rdb_save = t_rdb_save,
        .aof_rewrite = t_aof_rewrite,
        .mem_usage = t_mem_usage,
        .digest = t_digest,
        .free = t_free,
        .free_effort = t_free_effort,
        .copy = t_copy,
        /* no unlink: a filter holds no references to detach */
    };
    cf_type = rm_CreateDataType(ctx, TYPE_NAME, TYPE_ENCVER, &tm);
    if (cf_type == NULL) {
        rm_Log(ctx, "warning", "cuckoo: cannot register type %s", TYPE_NAME);
        return RM_ERR;
    }

    acl_setup(ctx);
    size_t n = 0;
    for (const cfcmd_def_t *d = cfcmd_table; d->name != NULL; d++, n++) {
        if (n >= MAX_CMDS)
            return RM_ERR;
        cmd_defs[n] = d;
        if (register_command(ctx, d, trampolines[n]) != RM_OK) {
            rm_Log(ctx, "warning", "cuckoo: cannot register %s", d->name);
            return RM_ERR;
        }
    }
    sweeper.cursor = rm_ScanCursorCreate();
    if (sweeper.cursor == NULL ||
        rm_RegisterInfoFunc(ctx, sweep_on_info) != RM_OK) {
        rm_Log(ctx, "warning", "cuckoo: cannot set up the window sweep");
        return RM_ERR;
    }
    rm_CreateTimer(ctx, SWEEP_EVERY_MS, sweep_on_timer, NULL);
    rm_Log(ctx, "notice",
           "cuckoo filters loaded: type %s, %zu CF commands, bucket size %u, "
           "fingerprint bits %u",
           TYPE_NAME, n, defaults.bucket_size, defaults.fp_bits);
    return RM_OK;
}
