/*
 * loadprog.c - the start-up load's progress, and the clients served while
 * it runs (loadprog.h).
 */
#include "loadprog.h"

#include <inttypes.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>
#include <uv.h>

#include "cmdclock.h"
#include "server_int.h"

void loadprog_begin(server_t *s)
{
    struct server_load *l = &s->load;
    *l = (struct server_load){
        .active = true, .start_time = time(NULL), .served_ns = uv_hrtime()};
}

void loadprog_expect(server_t *s, uint64_t n)
{
    s->load.total_bytes += n;
}

/* As Redis's debugDelay(): a negative delay -n sleeps 1 us once in n
 * calls, for delays shorter than a system call. */
static void key_delay(int64_t us)
{
    if (us < 0)
        us = rand() % (-us) == 0 ? 1 : 0;
    if (us > 0)
        usleep((useconds_t)(us > 1000000 ? 1000000 : us));
}

/* One round of the event loop without waiting. The clients served are
 * not the replay: the dispatcher checks them in full (s->loading is the
 * replaying client's mark) and refuses what may not run while loading. */
static void serve_clients(server_t *s)
{
    bool replaying = s->loading;
    s->loading = false;
    uv_run(s->loop, UV_RUN_NOWAIT);
    s->loading = replaying;
}

#define SERVE_EVERY_NS (50 * 1000 * 1000)

bool loadprog_step(server_t *s, uint64_t pos)
{
    struct server_load *l = &s->load;
    l->loaded_bytes = l->done_bytes + pos;
    if (s->cfg->key_load_delay != 0) {
        key_delay(s->cfg->key_load_delay);
        s->cmd_clock = cmdclock_now(); /* no replayed command's time */
    }
    if (!l->active)
        return true;
    /* As Redis: every 1024 steps from the first, and every so many bytes;
     * and, for steps slower than that (large filters, key-load-delay),
     * every 50 ms. */
    uint64_t k = l->steps++;
    bool due =
        k % 1024 == 0 || l->loaded_bytes - l->served_at >=
                             s->cfg->loading_process_events_interval_bytes;
    if (!due && k % 16 == 0 && uv_hrtime() - l->served_ns >= SERVE_EVERY_NS)
        due = true;
    if (due) {
        l->served_at = l->loaded_bytes;
        serve_clients(s);
        l->served_ns = uv_hrtime();
        s->cmd_clock = cmdclock_now(); /* nor is the clients' time */
    }
    return !s->shutting_down;
}

void loadprog_file_done(server_t *s, uint64_t n)
{
    s->load.done_bytes += n;
    s->load.loaded_bytes = s->load.done_bytes;
}

void loadprog_end(server_t *s)
{
    s->load.active = false;
}

void loadprog_info_head(const server_t *s, sbuf_t *b)
{
    sb_printf(b, "loading:%d\r\nasync_loading:0\r\n", s->load.active);
}

void loadprog_info_tail(const server_t *s, sbuf_t *b)
{
    const struct server_load *l = &s->load;
    if (!l->active)
        return;
    uint64_t loaded = l->loaded_bytes;
    uint64_t total = l->total_bytes > loaded ? l->total_bytes : loaded;
    double perc = total > 0 ? (double)loaded * 100.0 / (double)total : 0.0;
    int64_t elapsed = (int64_t)time(NULL) - l->start_time;
    /* as Redis: a fake second until there is something to go by */
    int64_t eta = elapsed <= 0 ? 1
                               : (int64_t)((double)elapsed *
                                           (double)(total - loaded + 1) /
                                           (double)(loaded + 1));
    sb_printf(b,
              "loading_start_time:%" PRId64 "\r\n"
              "loading_total_bytes:%" PRIu64 "\r\n"
              "loading_rdb_used_mem:0\r\n"
              "loading_loaded_bytes:%" PRIu64 "\r\n"
              "loading_loaded_perc:%.2f\r\n"
              "loading_eta_seconds:%" PRId64 "\r\n",
              l->start_time, total, loaded, perc, eta);
}
