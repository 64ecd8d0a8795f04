/*
 * latency.c - see latency.h.
 *
 * One fixed block of memory: a few event series of 160 samples each, so
 * recording never allocates after the first event and server_free() can
 * release it with free().
 */
#include "latency.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cmd.h"
#include "log.h"
#include "reply.h"
#include "util.h"

#define LAT_SAMPLES 160 /* as Redis's LATENCY_TS_LEN */
#define LAT_EVENTS 16   /* more names than the daemon records */

typedef struct lat_sample {
    int64_t time; /* unix seconds; 0 = unused */
    uint32_t ms;
} lat_sample_t;

typedef struct lat_series {
    const char *name; /* static */
    int next;         /* where the next sample goes */
    uint32_t max;     /* all time */
    lat_sample_t samples[LAT_SAMPLES];
} lat_series_t;

struct latency {
    int n;
    lat_series_t ev[LAT_EVENTS];
};

uint64_t latency_ms_since(uint64_t t0)
{
    return (uv_hrtime() - t0) / 1000000;
}

static lat_series_t *find(const struct latency *l, const char *name, size_t len)
{
    if (l == NULL)
        return NULL;
    for (int i = 0; i < l->n; i++)
        if (strlen(l->ev[i].name) == len &&
            strncmp(l->ev[i].name, name, len) == 0)
            return (lat_series_t *)&l->ev[i];
    return NULL;
}

void latency_add(server_t *s, const char *event, uint64_t ms)
{
    uint64_t threshold = s->cfg->latency_monitor_threshold;
    if (threshold == 0 || ms < threshold)
        return;
    if (s->latency == NULL &&
        (s->latency = calloc(1, sizeof(*s->latency))) == NULL) {
        log_warning("Out of memory for the latency monitor");
        return;
    }
    struct latency *l = s->latency;
    lat_series_t *e = find(l, event, strlen(event));
    if (e == NULL) {
        if (l->n == LAT_EVENTS)
            return;
        e = &l->ev[l->n++];
        memset(e, 0, sizeof(*e));
        e->name = event;
    }
    uint32_t v = ms > UINT32_MAX ? UINT32_MAX : (uint32_t)ms;
    int64_t now = (int64_t)time(NULL);
    lat_sample_t *prev = &e->samples[(e->next + LAT_SAMPLES - 1) % LAT_SAMPLES];
    if (prev->time == now) {
        /* One sample per second: the worst of it. */
        if (v > prev->ms)
            prev->ms = v;
    } else {
        e->samples[e->next] = (lat_sample_t){now, v};
        e->next = (e->next + 1) % LAT_SAMPLES;
    }
    if (v > e->max)
        e->max = v;
}

static const lat_sample_t *last_sample(const lat_series_t *e)
{
    return &e->samples[(e->next + LAT_SAMPLES - 1) % LAT_SAMPLES];
}

/* ---- LATENCY ----------------------------------------------------------- */

void latency_latest_proc(client_t *c, int argc, const arg_t *argv)
{
    const struct latency *l = c->srv->latency;
    int n = l != NULL ? l->n : 0;
    resp_add_array(&c->out, (size_t)n);
    for (int i = 0; i < n; i++) {
        const lat_series_t *e = &l->ev[i];
        const lat_sample_t *last = last_sample(e);
        resp_add_array(&c->out, 4);
        resp_add_cstr(&c->out, e->name);
        resp_add_int(&c->out, last->time);
        resp_add_int(&c->out, last->ms);
        resp_add_int(&c->out, e->max);
    }
}

void latency_history_proc(client_t *c, int argc, const arg_t *argv)
{
    const lat_series_t *e = find(c->srv->latency, argv[2].ptr, argv[2].len);
    size_t n = 0;
    for (int i = 0; e != NULL && i < LAT_SAMPLES; i++)
        n += e->samples[i].time != 0;
    resp_add_array(&c->out, n);
    for (int i = 0; e != NULL && i < LAT_SAMPLES; i++) {
        const lat_sample_t *sm = &e->samples[(e->next + i) % LAT_SAMPLES];
        if (sm->time == 0)
            continue;
        resp_add_array(&c->out, 2);
        resp_add_int(&c->out, sm->time);
        resp_add_int(&c->out, sm->ms);
    }
}

void latency_reset_proc(client_t *c, int argc, const arg_t *argv)
{
    struct latency *l = c->srv->latency;
    int64_t reset = 0;
    if (l != NULL && argc == 2) {
        reset = l->n;
        l->n = 0;
    }
    for (int i = 2; l != NULL && i < argc; i++) {
        lat_series_t *e = find(l, argv[i].ptr, argv[i].len);
        if (e == NULL)
            continue;
        *e = l->ev[--l->n]; /* the order of the others does not matter */
        reset++;
    }
    resp_add_int(&c->out, reset);
}

/* What an event's spikes usually mean here, for DOCTOR. */
static const struct {
    const char *event, *advice;
} advice_table[] = {
    {"command", "Slow commands: see SLOWLOG GET. CF.INSERT / CF.MEXISTS with "
                "many items, KEYS, SAVE, FLUSHALL and CF.RESERVE of huge "
                "filters take time in proportion to their work."},
    {"fast-command", "Commands that should take microseconds were slow: the "
                     "machine is likely overloaded or the process was "
                     "swapped out or throttled."},
    {"expire-cycle", "An active expiry cycle was slow: it stops at its "
                     "time budget, so the machine is likely overloaded."},
    {"fork", "fork() of a background save copies the page tables: it grows "
             "with the dataset; transparent huge pages and virtualised "
             "hosts make it slower."},
    {"rdb-save", "A foreground save (SAVE, FLUSHALL with save points, "
                 "shutdown) blocks every client while it writes; prefer "
                 "BGSAVE."},
    {"rdb-unlink-temp-file", "Removing a large temporary snapshot file was "
                             "slow: the file system is busy."},
    {"lazyfree-job",
     "The lazy free thread took long to free what FLUSHALL ASYNC, UNLINK "
     "or a lazyfree-lazy-* directive gave it: clients did not wait for it, "
     "but the memory stayed in used_memory (and against maxmemory) until "
     "it was done. It grows with the keys freed."},
    {"lazyfree-purge",
     "Returning freed pages to the system took long on the lazy free "
     "thread: it grows with the memory returned. Clients did not wait."},
    {"rehash-cycle", "Moving a keyspace resize on in the cron was slow: "
                     "it stops after 1 ms, so the machine is likely "
                     "overloaded."},
    {"server-cron", "The periodic work (client timeouts and limits) was "
                    "slow: many clients, or an overloaded machine."},
};

static const char *advice(const char *event)
{
    for (size_t i = 0; i < sizeof(advice_table) / sizeof(advice_table[0]); i++)
        if (strcmp(event, advice_table[i].event) == 0)
            return advice_table[i].advice;
    return "";
}

void latency_doctor_proc(client_t *c, int argc, const arg_t *argv)
{
    const struct latency *l = c->srv->latency;
    uint64_t threshold = c->srv->cfg->latency_monitor_threshold;
    sbuf_t b = {0};
    if (threshold == 0 && (l == NULL || l->n == 0)) {
        sb_printf(&b, "Latency monitoring is disabled: no event is "
                      "recorded. Enable it with CONFIG SET "
                      "latency-monitor-threshold <milliseconds>.\n");
    } else if (l == NULL || l->n == 0) {
        sb_printf(&b,
                  "No event took %" PRIu64 " ms or more since the start "
                  "(or the last LATENCY RESET).\n",
                  threshold);
    } else {
        sb_printf(&b, "Latency events of at least %" PRIu64 " ms:\n\n",
                  threshold);
        for (int i = 0; i < l->n; i++) {
            const lat_series_t *e = &l->ev[i];
            uint64_t sum = 0, count = 0;
            int64_t first = 0, last = 0;
            for (int j = 0; j < LAT_SAMPLES; j++) {
                const lat_sample_t *sm =
                    &e->samples[(e->next + j) % LAT_SAMPLES];
                if (sm->time == 0)
                    continue;
                if (first == 0)
                    first = sm->time;
                last = sm->time;
                sum += sm->ms;
                count++;
            }
            sb_printf(&b,
                      "%d. %s: %" PRIu64 " spike%s in the last %" PRId64
                      " seconds, average %" PRIu64 " ms, worst ever %u "
                      "ms.\n   %s\n",
                      i + 1, e->name, count, count == 1 ? "" : "s",
                      last - first, count > 0 ? sum / count : 0, e->max,
                      advice(e->name));
        }
    }
    reply_text(c, &b);
}

void latency_help_proc(client_t *c, int argc, const arg_t *argv)
{
    static const char *const lines[] = {
        "LATENCY <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
        "DOCTOR",
        "    Return a human readable latency analysis report.",
        "HISTORY <event>",
        "    Return time-latency samples for the <event> class.",
        "LATEST",
        "    Return the latest latency samples for all events.",
        "RESET [<event> ...]",
        "    Reset latency data of one or more <event> classes.",
        "    (default: reset all data for all event classes)",
        "HELP",
        "    Print this help.",
    };
    reply_help(c, lines, sizeof(lines) / sizeof(lines[0]));
}
