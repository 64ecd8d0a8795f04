/*
 * server.c - the server's state and the services of server.h. Listeners,
 * signals and the cron live in daemon.c; nothing here calls another module
 * of the daemon but the keyspace and the lazy free thread.
 */
#include "server_int.h"

#include "lazyfree.h"
#include "multi.h"
#include "sysmem.h"
#include "tls.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

int server_init(server_t *s, uv_loop_t *loop, cfg_t *cfg)
{
    memset(s, 0, sizeof(*s));
    s->loop = loop;
    s->cfg = cfg;
    /* The ACL module keeps it from the default user (acl.h); until then
     * requirepass decides. */
    s->auth_required = cfg->requirepass != NULL && cfg->requirepass[0] != '\0';
    s->ndbs = cfg->databases > 0 ? cfg->databases : 1;
    s->dbs = calloc((size_t)s->ndbs, sizeof(s->dbs[0]));
    s->read_slab = malloc(SERVER_READ_SLAB);
    if (s->dbs == NULL || s->read_slab == NULL)
        goto fail;
    for (int i = 0; i < s->ndbs; i++)
        if ((s->dbs[i] = ks_db_new()) == NULL)
            goto fail;
    if (getrandom(&s->seed_state, sizeof(s->seed_state), 0) !=
        (ssize_t)sizeof(s->seed_state))
        s->seed_state = (uint64_t)time(NULL) ^ ((uint64_t)getpid() << 32);
    /* As Redis's run_id: 160 random bits, a new one at every start. */
    unsigned char id[20];
    if (getrandom(id, sizeof(id), 0) != (ssize_t)sizeof(id))
        for (size_t i = 0; i < sizeof(id); i++)
            id[i] = (unsigned char)(server_seed(s) >> 56);
    for (size_t i = 0; i < sizeof(id); i++)
        snprintf(s->run_id + 2 * i, 3, "%02x", id[i]);
    s->phys_memory = sysmem_limit();
    s->start_time = time(NULL);
    s->start_ms = uv_now(loop);
    s->lastsave = s->start_time;
    /* Without the thread, lazy frees happen at once: slower, not wrong. */
    (void)lazyfree_start();
    return 0;
fail:
    server_free(s);
    return -ENOMEM;
}

void server_free(server_t *s)
{
    lazyfree_stop(); /* what it holds is freed before the process ends */
    if (s->dbs != NULL)
        for (int i = 0; i < s->ndbs; i++)
            ks_db_free(s->dbs[i]);
    free(s->dbs);
    free(s->read_slab);
    tls_free(s->tls);
    free(s->latency);
    /* Zeroed, so a second call (an error path after a failed init) frees
     * nothing twice. */
    memset(s, 0, sizeof(*s));
}

uint64_t server_now_ms(const server_t *s)
{
    return uv_now(s->loop) - s->start_ms;
}

/* ---- services of server.h ---------------------------------------------- */

const cfg_t *server_cfg(const server_t *s)
{
    return s->cfg;
}

void server_dirty(server_t *s, uint64_t n)
{
    s->dirty += n;
}

uint64_t server_used_memory(const server_t *s)
{
    /* what the lazy free thread has yet to free is still held */
    uint64_t sum = lazyfree_pending_bytes();
    for (int i = 0; i < s->ndbs; i++)
        sum += ks_bytes(s->dbs[i]);
    return sum;
}

static uint64_t mono_us(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000u + (uint64_t)ts.tv_nsec / 1000u;
}

int server_del_key(ks_db_t *db, const void *key, size_t len, bool lazy)
{
    if (!lazy)
        return ks_del(db, key, len);
    cf_filter_t *f = ks_remove(db, key, len);
    if (f == NULL)
        return 0;
    lazyfree_filter(f);
    return 1;
}

uint64_t server_flush(server_t *s, int dbnum, bool lazy)
{
    uint64_t n = 0;
    for (int i = dbnum < 0 ? 0 : dbnum; i < (dbnum < 0 ? s->ndbs : dbnum + 1);
         i++) {
        n += ks_size(s->dbs[i]);
        ks_db_t *taken = lazy ? ks_take_all(s->dbs[i]) : NULL;
        if (taken != NULL)
            lazyfree_db(taken);
        else
            ks_flush(s->dbs[i]); /* or out of memory for a new table */
    }
    return n;
}

bool server_rehash_cron(server_t *s, uint64_t budget_us)
{
    if (!s->cfg->activerehashing)
        return false;
    uint64_t deadline = mono_us() + budget_us;
    bool worked = false;
    for (int i = 0; i < s->ndbs; i++) {
        /* Redis's incrementallyRehash: 100 buckets between clock reads */
        while (ks_rehash(s->dbs[i], 100)) {
            worked = true;
            if (mono_us() >= deadline)
                return true;
        }
    }
    return worked;
}

uint64_t server_memory_headroom(const server_t *s)
{
    /* Without maxmemory the machine (or the container's cgroup limit) is
     * the limit: past it a filter could only be paged or killed, and every
     * save would write it. */
    uint64_t max = s->cfg->maxmemory != 0 ? s->cfg->maxmemory : s->phys_memory;
    if (max == UINT64_MAX)
        return UINT64_MAX;
    uint64_t used = server_used_memory(s);
    return used >= max ? 0 : max - used;
}

/* splitmix64: a fresh, well-mixed seed per call from one random state. */
uint64_t server_seed(server_t *s)
{
    uint64_t z = (s->seed_state += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

void server_key_changed(server_t *s, int dbnum, const void *key, size_t len)
{
    multi_on_key_changed(s, dbnum, key, len);
}

void server_db_changing(server_t *s, int dbnum)
{
    multi_on_db_changing(s, dbnum);
}

void server_dbs_swapping(server_t *s, int a, int b)
{
    multi_on_dbs_swapping(s, a, b);
}

bool server_writes_paused(const server_t *s)
{
    return s->pause_kind != 0 && server_now_ms(s) < s->pause_end_ms;
}

void server_keyspace_hit(server_t *s, bool hit)
{
    if (hit)
        s->keyspace_hits++;
    else
        s->keyspace_misses++;
}

void server_deny_writes(server_t *s, const char *msg)
{
    s->deny_writes_msg = msg;
}

void server_deny_writes_aof(server_t *s, const char *msg)
{
    s->deny_writes_aof = msg;
}

const char *server_writes_denied(const server_t *s)
{
    if (s->deny_writes_aof != NULL)
        return s->deny_writes_aof;
    /* As Redis: only with stop-writes-on-bgsave-error and save points. */
    if (s->deny_writes_msg == NULL || !s->cfg->stop_writes_on_bgsave_error ||
        s->cfg->nsave == 0)
        return NULL;
    return s->deny_writes_msg;
}

void server_stats_sample(server_t *s)
{
    uint64_t now = server_now_ms(s);
    if (now - s->ops_sample_ms >= 1000) {
        uint64_t dt = now - s->ops_sample_ms;
        uint64_t done = s->total_commands - s->ops_sample_cmds;
        s->ops_per_sec = done * 1000 / dt;
        s->ops_sample_cmds = s->total_commands;
        s->ops_sample_ms = now;
    }
    uint64_t used = server_used_memory(s);
    if (used > s->peak_memory)
        s->peak_memory = used;
}

void server_stats_reset(server_t *s)
{
    s->total_commands = s->total_connections = 0;
    s->rejected_connections = 0;
    s->keyspace_hits = s->keyspace_misses = 0;
    s->net_input_bytes = s->net_output_bytes = 0;
    s->cobl_disconnections = 0;
    s->expired_keys = s->expired_time_cap_reached = s->expire_cycle_us = 0;
    s->expired_stale_perc = 0;
    s->peak_memory = server_used_memory(s);
    /* The sample restarts with the counter, so the next rate is measured
     * from here instead of from a count larger than the new total. */
    s->ops_sample_cmds = 0;
    s->ops_sample_ms = server_now_ms(s);
    s->ops_per_sec = 0;
}
