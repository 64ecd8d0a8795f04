/*
 * memstat.c - see memstat.h.
 */
#include "memstat.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "conn.h"
#include "conn_info.h"
#include "heap.h"
#include "keyspace.h"
#include "reply.h"

/* Below this much data the doctor has too little to judge by. */
#define MEMSTAT_DOCTOR_MIN ((uint64_t)5 << 20)
/* A ratio is a finding only with this many bytes behind it. */
#define MEMSTAT_DOCTOR_BYTES ((uint64_t)10 << 20)

typedef struct figures {
    uint64_t used, peak, rss, clients, keys, dataset, ks_overhead;
    uint64_t limit; /* what bounds the keyspace: maxmemory, else the
                       machine's or cgroup's memory; 0 when unknown */
    heap_stats_t heap;
} figures_t;

static int add_filter(void *ctx, const void *key, size_t len,
                      const cf_filter_t *f)
{
    *(uint64_t *)ctx += cf_size_bytes(f);
    return 0;
}

/* The keyspace's overhead needs the filters' own sum: a walk of every
 * key, done only for MEMORY STATS and DOCTOR. */
static void gather(server_t *s, figures_t *fg, bool walk)
{
    memset(fg, 0, sizeof(*fg));
    fg->used = server_used_memory(s);
    if (fg->used > s->peak_memory)
        s->peak_memory = fg->used;
    fg->peak = s->peak_memory;
    fg->rss = heap_rss();
    fg->clients = conn_clients_memory(s);
    if (walk)
        heap_stats(&fg->heap);
    else
        heap_stats_recent(&fg->heap);
    uint64_t max = s->cfg->maxmemory != 0 ? s->cfg->maxmemory : s->phys_memory;
    fg->limit = max != UINT64_MAX ? max : 0;
    for (int i = 0; i < s->ndbs; i++)
        fg->keys += ks_size(s->dbs[i]);
    if (walk) {
        for (int i = 0; i < s->ndbs; i++)
            ks_foreach(s->dbs[i], add_filter, &fg->dataset);
        fg->ks_overhead = fg->used > fg->dataset ? fg->used - fg->dataset : 0;
    }
}

static double ratio(uint64_t a, uint64_t b)
{
    return b > 0 ? (double)a / (double)b : 0.0;
}

/* Whether a exceeds b by more than num/den of b and by more than
 * MEMSTAT_DOCTOR_BYTES: what MEMORY DOCTOR calls worth a paragraph. */
static bool well_over(uint64_t a, uint64_t b, uint64_t num, uint64_t den)
{
    return a > b + b * num / den && a - b > MEMSTAT_DOCTOR_BYTES;
}

static int64_t diff(uint64_t a, uint64_t b)
{
    return a >= b ? (int64_t)(a - b) : -(int64_t)(b - a);
}

void memstat_info(server_t *s, sbuf_t *b)
{
    figures_t fg;
    char h[32];
    gather(s, &fg, false);
    human_bytes(h, sizeof(h), fg.rss);
    sb_printf(b,
              "used_memory_rss:%" PRIu64 "\r\n"
              "used_memory_rss_human:%s\r\n",
              fg.rss, h);
    if (fg.heap.known)
        sb_printf(b,
                  "allocator_allocated:%" PRIu64 "\r\n"
                  "allocator_active:%" PRIu64 "\r\n",
                  fg.heap.allocated, fg.heap.active);
    if (fg.heap.has_resident)
        sb_printf(b, "allocator_resident:%" PRIu64 "\r\n", fg.heap.resident);
    human_bytes(h, sizeof(h), fg.limit);
    sb_printf(b,
              "maxmemory_effective:%" PRIu64 "\r\n"
              "maxmemory_effective_human:%s\r\n",
              fg.limit, h);
    if (fg.heap.known)
        sb_printf(b,
                  "allocator_frag_ratio:%.2f\r\n"
                  "allocator_frag_bytes:%" PRId64 "\r\n",
                  ratio(fg.heap.active, fg.heap.allocated),
                  diff(fg.heap.active, fg.heap.allocated));
    if (fg.heap.has_resident)
        sb_printf(b,
                  "allocator_rss_ratio:%.2f\r\n"
                  "allocator_rss_bytes:%" PRId64 "\r\n",
                  ratio(fg.heap.resident, fg.heap.active),
                  diff(fg.heap.resident, fg.heap.active));
    sb_printf(b,
              "mem_fragmentation_ratio:%.2f\r\n"
              "mem_fragmentation_bytes:%" PRId64 "\r\n"
              "mem_allocator:%s\r\n",
              ratio(fg.rss, fg.used), diff(fg.rss, fg.used), heap_name());
}

/* ---- MEMORY STATS ------------------------------------------------------ */

static void kv_int(client_t *c, const char *k, int64_t v)
{
    resp_add_cstr(&c->out, k);
    resp_add_int(&c->out, v);
}

static void kv_double(client_t *c, const char *k, double v)
{
    resp_add_cstr(&c->out, k);
    resp_add_double(&c->out, v);
}

void memstat_stats_proc(client_t *c, int argc, const arg_t *argv)
{
    server_t *s = c->srv;
    figures_t fg;
    gather(s, &fg, true);
    int dbs = 0;
    for (int i = 0; i < s->ndbs; i++)
        dbs += ks_size(s->dbs[i]) > 0;
    /* Redis's fields in Redis's order, a map in RESP3 and a flat list in
     * RESP2; what this server has none of (replication, scripts, AOF) is
     * 0. The allocator figures are 0 where the allocator does not tell. */
    resp_add_map(&c->out, 27 + (size_t)dbs);
    kv_int(c, "peak.allocated", (int64_t)fg.peak);
    kv_int(c, "total.allocated", (int64_t)fg.used);
    kv_int(c, "startup.allocated", 0);
    kv_int(c, "replication.backlog", 0);
    kv_int(c, "clients.slaves", 0);
    kv_int(c, "clients.normal", (int64_t)fg.clients);
    kv_int(c, "cluster.links", 0);
    kv_int(c, "aof.buffer", 0);
    kv_int(c, "lua.caches", 0);
    kv_int(c, "functions.caches", 0);
    for (int i = 0; i < s->ndbs; i++) {
        if (ks_size(s->dbs[i]) == 0)
            continue;
        char name[24];
        uint64_t fsum = 0;
        ks_foreach(s->dbs[i], add_filter, &fsum);
        uint64_t all = ks_bytes(s->dbs[i]);
        snprintf(name, sizeof(name), "db.%d", i);
        resp_add_cstr(&c->out, name);
        resp_add_map(&c->out, 2);
        kv_int(c, "overhead.hashtable.main",
               (int64_t)(all > fsum ? all - fsum : 0));
        kv_int(c, "overhead.hashtable.expires", 0);
    }
    kv_int(c, "overhead.total", (int64_t)(fg.ks_overhead + fg.clients));
    kv_int(c, "keys.count", (int64_t)fg.keys);
    kv_int(c, "keys.bytes-per-key",
           fg.keys > 0 ? (int64_t)(fg.used / fg.keys) : 0);
    kv_int(c, "dataset.bytes", (int64_t)fg.dataset);
    kv_double(c, "dataset.percentage", 100.0 * ratio(fg.dataset, fg.used));
    kv_double(c, "peak.percentage", 100.0 * ratio(fg.used, fg.peak));
    const heap_stats_t *h = &fg.heap;
    kv_int(c, "allocator.allocated", (int64_t)h->allocated);
    kv_int(c, "allocator.active", (int64_t)h->active);
    kv_int(c, "allocator.resident", (int64_t)h->resident);
    kv_double(c, "allocator-fragmentation.ratio",
              ratio(h->active, h->allocated));
    kv_int(c, "allocator-fragmentation.bytes", diff(h->active, h->allocated));
    kv_double(c, "allocator-rss.ratio", ratio(h->resident, h->active));
    kv_int(c, "allocator-rss.bytes",
           h->has_resident ? diff(h->resident, h->active) : 0);
    /* With the tables mapped outside the allocator, this overhead holds
     * the large filters' tables. */
    kv_double(c, "rss-overhead.ratio", ratio(fg.rss, h->resident));
    kv_int(c, "rss-overhead.bytes",
           h->has_resident ? diff(fg.rss, h->resident) : 0);
    kv_double(c, "fragmentation", ratio(fg.rss, fg.used));
    kv_int(c, "fragmentation.bytes", diff(fg.rss, fg.used));
}

/* ---- MEMORY DOCTOR ----------------------------------------------------- */

void memstat_doctor_proc(client_t *c, int argc, const arg_t *argv)
{
    server_t *s = c->srv;
    figures_t fg;
    sbuf_t b = {0};
    char h1[32], h2[32];
    gather(s, &fg, false);
    if (fg.used < MEMSTAT_DOCTOR_MIN) {
        human_bytes(h1, sizeof(h1), fg.used);
        sb_printf(&b,
                  "This instance is empty or holds very little data "
                  "(used_memory %s): there is not enough to diagnose. "
                  "Store some filters and ask again.\n",
                  h1);
        reply_text(c, &b);
        return;
    }
    sbuf_t f = {0}; /* the findings */
    int n = 0;
    if (fg.peak > fg.used + fg.used / 2) {
        human_bytes(h1, sizeof(h1), fg.peak);
        human_bytes(h2, sizeof(h2), fg.used);
        sb_printf(&f,
                  " * Peak memory: the keyspace once took %s, %.1fx what "
                  "it takes now (%s). The figures below show whether the "
                  "process gave the difference back; CONFIG RESETSTAT "
                  "resets the peak.\n\n",
                  h1, ratio(fg.peak, fg.used), h2);
        n++;
    }
    if (well_over(fg.rss, fg.used, 2, 5)) {
        human_bytes(h1, sizeof(h1), fg.rss);
        human_bytes(h2, sizeof(h2), fg.rss - fg.used);
        sb_printf(&f,
                  " * High fragmentation: the process holds %s in RAM, "
                  "%.2fx the keyspace (%s more). MEMORY PURGE returns the "
                  "pages the allocator keeps; what remains is in use by "
                  "the allocator's partly filled pages or by the server "
                  "itself (clients, buffers).\n\n",
                  h1, ratio(fg.rss, fg.used), h2);
        n++;
    }
    const heap_stats_t *h = &fg.heap;
    if (h->known && well_over(h->active, h->allocated, 1, 10)) {
        human_bytes(h1, sizeof(h1), h->active - h->allocated);
        sb_printf(&f,
                  " * Allocator fragmentation: %s in the allocator's "
                  "active pages hold nothing (allocator_frag_ratio %.2f). "
                  "Pages freed by deleting filters are reused by new "
                  "ones.\n\n",
                  h1, ratio(h->active, h->allocated));
        n++;
    }
    if (h->has_resident && well_over(h->resident, h->active, 1, 10)) {
        human_bytes(h1, sizeof(h1), h->resident - h->active);
        sb_printf(&f,
                  " * Allocator RSS overhead: the allocator keeps %s of "
                  "freed pages resident (allocator_rss_ratio %.2f). They "
                  "go back within seconds; MEMORY PURGE returns them "
                  "now.\n\n",
                  h1, ratio(h->resident, h->active));
        n++;
    }
    if (s->nclients > 0 && fg.clients / s->nclients > (200u << 10)) {
        human_bytes(h1, sizeof(h1), fg.clients / s->nclients);
        sb_printf(&f,
                  " * Client buffers: connected clients hold %s each on "
                  "average in query and output buffers. CLIENT LIST shows "
                  "which ones; client-output-buffer-limit and "
                  "client-query-buffer-limit bound them.\n\n",
                  h1);
        n++;
    }
    if (fg.limit > 0 && fg.rss > fg.limit / 10 * 9) {
        human_bytes(h1, sizeof(h1), fg.rss);
        human_bytes(h2, sizeof(h2), fg.limit);
        sb_printf(&f,
                  " * Near the limit: the process holds %s of the %s it "
                  "may use (maxmemory, or the machine's or container's "
                  "memory).\n\n",
                  h1, h2);
        n++;
    }
    if (f.failed) {
        free(f.p);
        b.failed = true;
    } else if (n == 0) {
        sb_printf(&b, "No memory problems found: the process holds what "
                      "the keyspace uses, and the allocator keeps little "
                      "aside.\n");
    } else {
        sb_printf(&b, "Memory problems found (%d):\n\n%s", n, f.p);
        free(f.p);
    }
    reply_text(c, &b);
}

/* ---- MEMORY PURGE, MALLOC-STATS, HELP ------------------------------- */

void memstat_purge_proc(client_t *c, int argc, const arg_t *argv)
{
    heap_purge();
    reply_ok(c);
}

void memstat_malloc_stats_proc(client_t *c, int argc, const arg_t *argv)
{
    char *text = heap_malloc_stats();
    sbuf_t b = {0};
    sb_printf(&b, "%s",
              text != NULL ? text
                           : "Stats not supported for the current allocator");
    free(text);
    reply_text(c, &b);
}

void memstat_help_proc(client_t *c, int argc, const arg_t *argv)
{
    static const char *const lines[] = {
        "MEMORY <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
        "DOCTOR",
        "    Return a report of memory problems.",
        "MALLOC-STATS",
        "    Return the memory allocator's internal statistics.",
        "PURGE",
        "    Return the pages the allocator holds freed to the system.",
        "STATS",
        "    Return figures about the server's memory.",
        "USAGE <key> [SAMPLES <count>]",
        "    Return the bytes <key> and its filter take.",
        "HELP",
        "    Print this help.",
    };
    reply_help(c, lines, sizeof(lines) / sizeof(lines[0]));
}
