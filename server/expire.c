/*
 * expire.c - see expire.h. The times live in the keys' entries
 * (keyspace.h); this module decides when a key is past its time and what
 * an expiry tells the rest of the server.
 *
 * Active expiry follows Redis's adaptive cycle: take a sample of keys with
 * a timeout from one database, delete those past their time, and sample
 * the same database again while more than a tenth of the sample had
 * expired; then the next database. The cron gives a cycle a short time
 * budget; a cycle that ran out of time with expired keys still coming
 * continues in slices of the same budget every EXPIRE_SLICE_EVERY_MS,
 * with the loop serving clients between them, until a sample finds few.
 */
#include "expire.h"

#include <errno.h>
#include <inttypes.h>
#include <time.h>

#include "cmdclock.h"
#include "latency.h"
#include "lazyfree.h"
#include "propagate.h"
#include "server_int.h"

#define EXPIRE_SAMPLE 20      /* keys with a timeout per sample */
#define EXPIRE_BUCKETS 400    /* buckets one sample may visit */
#define EXPIRE_STALE_PERC 10  /* sample again above this share expired */
#define EXPIRE_BUDGET_US 1000 /* one cycle or slice */
#define EXPIRE_SLICE_EVERY_MS 2

int64_t expire_now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

typedef struct expired_ctx {
    server_t *s;
    int dbnum;
} expired_ctx_t;

static void on_expired(void *ctx, const void *key, size_t len)
{
    expired_ctx_t *e = ctx;
    e->s->expired_keys++;
    server_key_changed(e->s, e->dbnum, key, len);
    /* The log and a replay must lose the key at the same point. */
    propagate_deletion(e->s, e->dbnum, key, len);
}

/* Active expiry's: f goes to the lazy free thread under
 * lazyfree-lazy-expire, once key (in f's entry) is no longer needed. */
static bool on_active_expired(void *ctx, const void *key, size_t len,
                              cf_filter_t *f)
{
    expired_ctx_t *e = ctx;
    on_expired(ctx, key, len);
    if (!e->s->cfg->lazyfree_lazy_expire)
        return false;
    lazyfree_filter(f);
    return true;
}

cf_filter_t *expire_lookup(server_t *s, int dbnum, const void *key, size_t len,
                           int64_t *when)
{
    ks_db_t *db = s->dbs[dbnum];
    int64_t w;
    cf_filter_t *f = ks_find(db, key, len, &w);
    /* Nothing expires during a replay: the file deletes what expired in
     * its own time, and a key a later command of the file touches must
     * still be there. */
    if (f != NULL && w >= 0 && !s->loading && w <= expire_now_ms()) {
        /* Past its time it is absent either way; during a pause it stays
         * stored until the pause ends. */
        if (!server_writes_paused(s)) {
            if (s->cfg->lazyfree_lazy_expire)
                lazyfree_filter(ks_remove(db, key, len));
            else
                ks_del(db, key, len);
            on_expired(&(expired_ctx_t){s, dbnum}, key, len);
        }
        f = NULL;
        w = -1;
    }
    if (when != NULL)
        *when = w;
    return f;
}

bool expire_exists(server_t *s, int dbnum, const void *key, size_t len)
{
    return expire_lookup(s, dbnum, key, len, NULL) != NULL;
}

int64_t expire_get(server_t *s, int dbnum, const void *key, size_t len)
{
    int64_t when;
    if (expire_lookup(s, dbnum, key, len, &when) == NULL)
        return -2;
    return when;
}

int expire_set(server_t *s, int dbnum, const void *key, size_t len,
               int64_t when)
{
    if (when < 0)
        when = 0;
    int rc = ks_set_expire(s->dbs[dbnum], key, len, when);
    if (rc == 0)
        server_key_changed(s, dbnum, key, len);
    return rc;
}

int expire_clear(server_t *s, int dbnum, const void *key, size_t len)
{
    int rc = ks_clear_expire(s->dbs[dbnum], key, len);
    if (rc > 0)
        server_key_changed(s, dbnum, key, len);
    return rc;
}

/* One cycle within EXPIRE_BUDGET_US: true when it ran out of time with
 * expired keys still being found (more work is waiting). */
static bool cycle(server_t *s)
{
    uint64_t t0 = uv_hrtime(), deadline = t0 + EXPIRE_BUDGET_US * 1000ull;
    size_t sampled = 0, expired = 0;
    bool capped = false;
    int64_t now = expire_now_ms();
    for (int n = 0; n < s->ndbs && !capped; n++) {
        int dbnum = s->expire_db;
        ks_db_t *db = s->dbs[dbnum];
        expired_ctx_t e = {s, dbnum};
        for (;;) {
            ks_expire_stats_t st;
            ks_expire_step(db, now, EXPIRE_BUCKETS, EXPIRE_SAMPLE,
                           on_active_expired, &e, &st);
            sampled += st.sampled;
            expired += st.expired;
            if (st.sampled == 0 ||
                st.expired * 100 <= st.sampled * EXPIRE_STALE_PERC)
                break;
            if (uv_hrtime() >= deadline) {
                capped = true;
                break;
            }
        }
        if (!capped)
            s->expire_db = (dbnum + 1) % s->ndbs;
    }
    if (capped)
        s->expired_time_cap_reached++;
    s->expire_cycle_us += (uv_hrtime() - t0) / 1000;
    latency_add(s, "expire-cycle", latency_ms_since(t0));
    if (sampled > 0) {
        double perc = (double)expired * 100.0 / (double)sampled;
        s->expired_stale_perc = perc * 0.05 + s->expired_stale_perc * 0.95;
    }
    return capped;
}

static void expire_on_slice(uv_timer_t *t)
{
    server_t *s = t->data;
    /* A pause that began while slices ran stops them too; the cron starts
     * them again once it ends. */
    if (server_writes_paused(s) || !cycle(s))
        uv_timer_stop(t);
}

void expire_cron(server_t *s)
{
    if (uv_is_active((uv_handle_t *)&s->expire_timer))
        return; /* the slices are at work */
    if (server_writes_paused(s))
        return; /* as Redis 7: no active expiry during CLIENT PAUSE */
    if (s->load.active)
        return; /* nothing expires before the whole dataset is loaded */
    /* the timer is the daemon's, open once it listens */
    if (cycle(s) && s->handles_open && !s->shutting_down) {
        s->expire_timer.data = s;
        uv_timer_start(&s->expire_timer, expire_on_slice, EXPIRE_SLICE_EVERY_MS,
                       EXPIRE_SLICE_EVERY_MS);
    }
}

static int64_t wall_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

int64_t expire_window_now_ms(const server_t *s)
{
    int64_t off = s->cfg->cf_window_clock_offset;
    if (s->wall_minus_cmdclock == 0)
        return expire_now_ms() + off;
    return ((int64_t)s->cmd_clock + s->wall_minus_cmdclock) / 1000000 + off;
}

typedef struct window_ctx {
    uint64_t now, budget;
} window_ctx_t;

static int on_window_key(void *ctx, const void *key, size_t len,
                         const cf_filter_t *cf)
{
    window_ctx_t *w = ctx;
    (void)key;
    (void)len;
    if (!cf_is_window(cf) || w->budget == 0)
        return 0;
    /* The keyspace owns the filter and the loop thread is its only user:
     * the sweep is a write to it, like a command's. */
    cf_filter_t *f = (cf_filter_t *)(uintptr_t)cf;
    cf_stats_t st;
    cf_stats(f, &st);
    uint64_t n = st.nbuckets < w->budget ? st.nbuckets : w->budget;
    cf_set_time(f, w->now, w->now);
    cf_sweep(f, n);
    w->budget -= n;
    return 0;
}

void expire_windows_cron(server_t *s)
{
    s->wall_minus_cmdclock = wall_ns() - (int64_t)cmdclock_now();
    if (s->load.active)
        return;
    int64_t now = expire_now_ms() + s->cfg->cf_window_clock_offset;
    window_ctx_t w = {now > 0 ? (uint64_t)now : 0, EXPIRE_WINDOW_BUCKETS};
    /* scan steps until the buckets or the time are spent, or every
     * database was walked to its end once in this call */
    uint64_t deadline = uv_hrtime() + EXPIRE_BUDGET_US * 500ull;
    int ends = 0;
    while (w.budget > 0 && ends <= s->ndbs && uv_hrtime() < deadline) {
        ks_db_t *db = s->dbs[s->window_db];
        s->window_cursor = ks_size(db) > 0 ? ks_scan(db, s->window_cursor, 64,
                                                     on_window_key, &w)
                                           : 0;
        if (s->window_cursor == 0) {
            s->window_db = (s->window_db + 1) % s->ndbs;
            ends++;
        }
    }
}

void expire_info_stats(const server_t *s, sbuf_t *b)
{
    sb_printf(b,
              "expired_keys:%" PRIu64 "\r\n"
              "expired_stale_perc:%.2f\r\n"
              "expired_time_cap_reached_count:%" PRIu64 "\r\n"
              "expire_cycle_cpu_milliseconds:%" PRIu64 "\r\n",
              s->expired_keys, s->expired_stale_perc,
              s->expired_time_cap_reached, s->expire_cycle_us / 1000);
}

void expire_info_db(const server_t *s, int dbnum, sbuf_t *b)
{
    const ks_db_t *db = s->dbs[dbnum];
    sb_printf(b, "expires=%zu,avg_ttl=%" PRIu64, ks_expires(db),
              ks_avg_ttl(db));
}
