/*
 * aof_run.c - the loop's handles (the write before the loop sleeps, the
 * cron), BGREWRITEAOF, the automatic rewrite, CONFIG SET
 * appendonly, and INFO's aof_* fields (see aof.h), in Redis 7's way: at
 * the fork the parent opens a new increment and lists it in the manifest
 * at once (no rewrite buffer); the child (persist.c's) writes a snapshot
 * of its copy-on-write image as the next base; only on its success does
 * the manifest name the new base and move the increments before the fork
 * to the history, whose files are then deleted. A failed or killed child
 * changes nothing listed: the old base and every increment stay.
 */
#include "aof_int.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cmd.h"
#include "conn.h"
#include "log.h"
#include "persist.h"
#include "reply.h"

#define AOF_CRON_MS 100

/* Opens the next increment and makes it the one the feed goes to; in
 * AOF_ON it is listed in the manifest on disk before any command goes
 * into it. */
static int switch_incr(server_t *s)
{
    struct aof *a = s->aof;
    aofman_t m;
    if (a->fd >= 0) {
        aof_flush(s, true); /* the old increment ends whole */
        /* What could not be written belongs before the fork, not in the
         * new increment after the new base. */
        if (a->len > 0)
            return -EIO;
        /* The old increment must be durable before a manifest lists one
         * after it: only the last file may be cut short at a load, so a
         * power cut that tore its unsynced tail would leave files that do
         * not load (the power-cut suite found it under everysec). */
        if (fdatasync(a->fd) < 0) {
            int rc = -errno;
            log_warning("Can't fsync the AOF increment before a new one: "
                        "%s",
                        strerror(-rc));
            return rc;
        }
    }
    if (aofman_dup(&a->man, &m) < 0 ||
        aofman_new_incr(&m, s->cfg->appendfilename) < 0) {
        aofman_free(&m);
        return -ENOMEM;
    }
    int fd = aof_open_incr(s, aofman_last_incr(&m), true);
    if (fd < 0) {
        aofman_free(&m);
        return fd;
    }
    int rc = a->state == AOF_ON ? aof_write_manifest(s, &m) : 0;
    if (rc < 0) {
        close(fd);
        aofman_free(&m);
        return rc;
    }
    if (a->fd >= 0)
        aof_queue_fsync(a, a->fd, true);
    aofman_free(&a->man);
    a->man = m;
    a->fd = fd;
    a->sel_db = -1;
    a->incr_size = 0;
    return 0;
}

int aof_rewrite_start(server_t *s)
{
    struct aof *a = s->aof;
    char path[AOF_PATH_MAX];
    if (persist_child_kind(s) != 0)
        return -EBUSY;
    /* With the AOF off (BGREWRITEAOF) only a base is written, as Redis 7
     * does: every increment listed before goes to the history. */
    int rc = a->state == AOF_OFF ? aof_make_dir(s) : switch_incr(s);
    if (rc < 0) {
        log_warning("Can't open a new AOF increment for the rewrite: %s",
                    strerror(-rc));
        return rc;
    }
    int64_t seq = a->state == AOF_OFF ? a->man.incr_seq + 1 : a->man.incr_seq;
    char name[AOF_PATH_MAX];
    snprintf(name, sizeof(name), "%s.%" PRId64 ".base.rdb",
             s->cfg->appendfilename, a->man.base_seq + 1);
    if (!aof_path(s, name, path))
        return -ENAMETOOLONG;
    a->rewrite_scheduled = false;
    a->rewrite_start_ms = uv_now(s->loop);
    a->fork_incr_seq = seq;
    a->rewriting = true;
    if ((rc = persist_fork_aof(s, path)) < 0) {
        a->rewriting = false;
        return rc;
    }
    return 0;
}

static void delete_history(server_t *s)
{
    struct aof *a = s->aof;
    char path[AOF_PATH_MAX];
    if (a->man.nhist == 0)
        return;
    for (size_t i = 0; i < a->man.nhist; i++) {
        log_notice("Removing the history file %s", a->man.hist[i].name);
        if (aof_path(s, a->man.hist[i].name, path))
            unlink(path);
    }
    aofman_clear_history(&a->man);
    aof_write_manifest(s, &a->man); /* a failure leaves names of no file */
}

void aof_rewrite_done(server_t *s, bool ok)
{
    struct aof *a = s->aof;
    if (!a->rewriting)
        return;
    a->rewriting = false;
    a->rewrite_ran = true;
    a->last_rewrite_sec =
        (int64_t)((uv_now(s->loop) - a->rewrite_start_ms + 500) / 1000);
    aofman_t m;
    if (ok) {
        if (aofman_dup(&a->man, &m) < 0 ||
            aofman_new_base(&m, s->cfg->appendfilename) < 0 ||
            aofman_retire_incr(&m, a->fork_incr_seq - 1) < 0 ||
            aof_write_manifest(s, &m) < 0) {
            aofman_free(&m);
            ok = false;
        } else {
            aofman_free(&a->man);
            a->man = m;
        }
    }
    a->last_rewrite_err = !ok;
    if (!ok) {
        a->rewrite_failures++;
        /* Switching on needs a base: try again. */
        if (a->state == AOF_WAIT_REWRITE)
            a->rewrite_scheduled = true;
        return;
    }
    a->rewrites++;
    a->rewrite_failures = 0;
    if (a->state == AOF_WAIT_REWRITE) {
        a->state = AOF_ON;
        log_notice("Background AOF rewrite finished successfully");
    }
    delete_history(s);
    a->cur_size = a->base_size = aof_files_size(s);
}

void aof_rewrite_cron(server_t *s)
{
    struct aof *a = s->aof;
    if (a->state == AOF_OFF || persist_child_kind(s) != 0 || s->shutting_down)
        return;
    if (a->rewrite_scheduled) {
        aof_rewrite_start(s);
        return;
    }
    int pct = s->cfg->auto_aof_rewrite_percentage;
    if (a->state != AOF_ON || pct <= 0 ||
        a->cur_size < s->cfg->auto_aof_rewrite_min_size)
        return;
    uint64_t base = a->base_size ? a->base_size : 1;
    uint64_t growth = a->cur_size * 100 / base;
    if (growth < 100 + (uint64_t)pct)
        return;
    log_notice("Starting automatic rewriting of AOF on %" PRIu64 "%% growth",
               growth - 100);
    aof_rewrite_start(s);
}

/* ---- the loop's handles ------------------------------------------------ */

/* Before the loop sleeps: the commands of this iteration are written
 * (and with always fsynced), then the replies held for them go. */
static void on_prepare(uv_prepare_t *h)
{
    server_t *s = h->data;
    aof_flush(s, false);
    if (s->nheld > 0)
        conn_release_held(s);
}

static void on_cron(uv_timer_t *t)
{
    server_t *s = t->data;
    struct aof *a = s->aof;
    if (a->state != AOF_OFF) {
        /* A failed write is retried here too; an idle loop still gets
         * its once-a-second fsync. */
        aof_flush(s, false);
    }
    aof_rewrite_cron(s);
}

static int start_handles(server_t *s)
{
    struct aof *a = s->aof;
    int rc = uv_prepare_init(s->loop, &a->prep);
    if (rc < 0)
        return rc;
    if ((rc = uv_timer_init(s->loop, &a->cron)) < 0) {
        uv_close((uv_handle_t *)&a->prep, NULL);
        return rc;
    }
    a->prep.data = a->cron.data = s;
    a->handles_open = true;
    if ((rc = uv_prepare_start(&a->prep, on_prepare)) < 0 ||
        (rc = uv_timer_start(&a->cron, on_cron, AOF_CRON_MS, AOF_CRON_MS)) < 0)
        return rc;
    /* Neither keeps the loop alive on its own. */
    uv_unref((uv_handle_t *)&a->prep);
    uv_unref((uv_handle_t *)&a->cron);
    return 0;
}

int aof_start(server_t *s)
{
    s->persist->on_aof_done = aof_rewrite_done;
    int rc = start_handles(s);
    if (rc < 0) {
        log_warning("Cannot set up the AOF's handles: %s", uv_strerror(rc));
        return rc;
    }
    return s->cfg->appendonly ? aof_open_files(s) : 0;
}

void aof_on_shutdown(server_t *s)
{
    struct aof *a = s->aof;
    if (a == NULL)
        return;
    if (a->state != AOF_OFF) {
        log_notice("Calling fsync() on the AOF file.");
        aof_flush(s, true);
        if (a->fd >= 0)
            fdatasync(a->fd);
    }
    if (a->handles_open) {
        uv_close((uv_handle_t *)&a->prep, NULL);
        uv_close((uv_handle_t *)&a->cron, NULL);
        a->handles_open = false;
    }
}

/* ---- switching on and off ---------------------------------------------- */

static int start_on(server_t *s, char *err, size_t errlen)
{
    struct aof *a = s->aof;
    if (aof_make_dir(s) < 0 || aof_thread_start(a) < 0)
        goto refuse;
    a->state = AOF_WAIT_REWRITE;
    s->on_propagate = aof_feed;
    s->hold_replies = aof_hold_replies;
    a->last_fsync_ms = uv_now(s->loop);
    int rc = aof_rewrite_start(s);
    if (rc == -EBUSY) {
        a->rewrite_scheduled = true;
        log_notice("AOF was enabled but there is already another background "
                   "operation. An AOF background was scheduled to start when "
                   "possible.");
        return 0;
    }
    if (rc < 0) {
        aof_stop(s);
        goto refuse;
    }
    return 0;
refuse:
    snprintf(err, errlen, "ERR Unable to turn on AOF. Check server logs.");
    return -EINVAL;
}

int aof_config_set(server_t *s, const char *name, char *err, size_t errlen)
{
    struct aof *a = s->aof;
    if (strcasecmp(name, "appendonly") != 0)
        return 0;
    /* A base written now would hold half the dataset: the files start
     * once the load is over (aof_start()), from what the config says. */
    if (s->load.active) {
        snprintf(err, errlen,
                 "the AOF cannot be switched while the "
                 "dataset is loading");
        return -EBUSY;
    }
    if (s->cfg->appendonly && a->state == AOF_OFF)
        return start_on(s, err, errlen);
    if (!s->cfg->appendonly && a->state != AOF_OFF)
        aof_stop(s);
    return 0;
}

/* ---- INFO and BGREWRITEAOF ---------------------------------------------- */

void aof_info(const server_t *s, sbuf_t *b)
{
    static struct aof never_started; /* a server without the module */
    struct aof *a = s->aof != NULL ? s->aof : &never_started;
    int64_t cur = -1;
    if (a->rewriting)
        cur = (int64_t)((uv_now(s->loop) - a->rewrite_start_ms) / 1000);
    sb_printf(b,
              "aof_enabled:%d\r\n"
              "aof_rewrite_in_progress:%d\r\n"
              "aof_rewrite_scheduled:%d\r\n"
              "aof_last_rewrite_time_sec:%" PRId64 "\r\n"
              "aof_current_rewrite_time_sec:%" PRId64 "\r\n"
              "aof_last_bgrewrite_status:%s\r\n"
              "aof_rewrites:%" PRIu64 "\r\n"
              "aof_rewrites_consecutive_failures:%" PRIu64 "\r\n"
              "aof_last_write_status:%s\r\n"
              "aof_last_cow_size:0\r\n"
              "module_fork_in_progress:0\r\n"
              "module_fork_last_cow_size:0\r\n",
              a->state != AOF_OFF, a->rewriting, a->rewrite_scheduled,
              a->rewrite_ran ? a->last_rewrite_sec : -1, cur,
              a->last_rewrite_err ? "err" : "ok", a->rewrites,
              a->rewrite_failures,
              a->write_err || a->fsync_err != 0 ? "err" : "ok");
    if (a->state == AOF_OFF)
        return;
    sb_printf(b,
              "aof_current_size:%" PRIu64 "\r\n"
              "aof_base_size:%" PRIu64 "\r\n"
              "aof_pending_rewrite:%d\r\n"
              "aof_buffer_length:%zu\r\n"
              "aof_pending_bio_fsync:%d\r\n"
              "aof_delayed_fsync:%" PRIu64 "\r\n",
              a->cur_size, a->base_size, a->rewrite_scheduled, a->len,
              aof_pending_fsync(a), a->delayed_fsync);
}

void aof_bgrewriteaof_proc(client_t *c, int argc, const arg_t *argv)
{
    (void)argc;
    (void)argv;
    server_t *s = c->srv;
    struct aof *a = s->aof;
    if (a->rewriting) {
        resp_add_error(&c->out, "ERR Background append only file rewriting "
                                "already in progress");
        return;
    }
    if (persist_child_kind(s) != 0) {
        a->rewrite_scheduled = true;
        resp_add_simple(&c->out,
                        "Background append only file rewriting scheduled");
        return;
    }
    if (aof_rewrite_start(s) < 0) {
        resp_add_error(&c->out, "ERR Can't execute an AOF background "
                                "rewriting. Please check the server logs "
                                "for more information.");
        return;
    }
    resp_add_simple(&c->out, "Background append only file rewriting started");
}
