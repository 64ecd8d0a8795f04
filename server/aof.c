/*
 * aof.c - see aof.h. The write path follows Redis 7's
 * flushAppendOnlyFile(): commands accumulate in a buffer during a loop
 * iteration and are written before the loop sleeps (a prepare handle);
 * with everysec an fsync is queued to a thread of our own (Redis's bio) at
 * most once a second, and while one is still running a write waits, for
 * up to 2 s, then goes ahead (aof_delayed_fsync counts it). The replies
 * of a loop iteration are held (hold_replies) until the write before the
 * loop sleeps, as Redis sends them after flushAppendOnlyFile(): a crash
 * of the process alone then loses no acknowledged write, but what waits
 * behind a slow fsync (everysec; the replies go when the write is put
 * off). With always that write and one fdatasync cover them all, a group
 * commit across clients, and a write or fsync error exits, as Redis does:
 * an acknowledged write must never be missing. With everysec and no, a
 * failed write is retried from the cron and from each later flush; until
 * one succeeds write commands are refused with -MISCONF. A failed
 * background fsync refuses them the same way (Redis's
 * aof_bio_fsync_status): the fsync is tried again once a second, and
 * writes are accepted again when one succeeds.
 */
#include "aof_int.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "aofload.h"
#include "conn.h"
#include "keyspace.h"
#include "loadprog.h"
#include "log.h"
#include "persist.h"
#include "snapshot.h"

#define AOF_FSYNC_SLOW_MS 2000 /* a write waits this long for an fsync */
#define AOF_ERROR_LOG_SECS 30  /* as AOF_WRITE_LOG_ERROR_RATE */

int aof_init(server_t *s, aof_replay_fn *replay)
{
    struct aof *a = calloc(1, sizeof(*a));
    if (a == NULL)
        return -ENOMEM;
    a->fd = -1;
    a->sel_db = -1;
    a->replay = replay;
    pthread_mutex_init(&a->mu, NULL);
    pthread_cond_init(&a->cv, NULL);
    s->aof = a;
    return 0;
}

void aof_free(server_t *s)
{
    struct aof *a = s->aof;
    if (a == NULL)
        return;
    if (a->th_on) {
        pthread_mutex_lock(&a->mu);
        a->th_stop = true;
        pthread_cond_signal(&a->cv);
        pthread_mutex_unlock(&a->mu);
        pthread_join(a->th, NULL);
    }
    if (a->fd >= 0)
        close(a->fd);
    pthread_mutex_destroy(&a->mu);
    pthread_cond_destroy(&a->cv);
    aofman_free(&a->man);
    free(a->buf);
    free(a);
    s->aof = NULL;
}

/* ---- paths and files --------------------------------------------------- */

bool aof_path(const server_t *s, const char *name, char *out)
{
    int n = snprintf(out, AOF_PATH_MAX, "%s/%s", s->cfg->appenddirname, name);
    return n > 0 && n < AOF_PATH_MAX;
}

static bool manifest_path(const server_t *s, char *out, bool temp)
{
    int n =
        snprintf(out, AOF_PATH_MAX, "%s/%s%s.manifest", s->cfg->appenddirname,
                 temp ? "temp-" : "", s->cfg->appendfilename);
    return n > 0 && n < AOF_PATH_MAX;
}

static int write_all(int fd, const char *p, size_t n)
{
    while (n > 0) {
        ssize_t w = write(fd, p, n);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0)
            return w < 0 ? -errno : -EIO;
        p += w;
        n -= (size_t)w;
    }
    return 0;
}

int aof_write_manifest(server_t *s, const aofman_t *m)
{
    char tmp[AOF_PATH_MAX], path[AOF_PATH_MAX];
    char *text = aofman_format(m);
    int rc = 0, fd = -1;
    bool renamed = false;
    const char *step = "format";
    if (text == NULL) {
        rc = -ENOMEM;
        goto out;
    }
    /* A line the loader would refuse must not be written: the files
     * could not be found again. */
    for (const char *p = text, *nl; (nl = strchr(p, '\n')) != NULL; p = nl + 1)
        if (nl - p > AOFMAN_MAX_LINE - 1) {
            step = "a name too long for a manifest line (appendfilename)";
            rc = -ENAMETOOLONG;
            goto out;
        }
    if (!manifest_path(s, tmp, true) || !manifest_path(s, path, false)) {
        rc = -ENAMETOOLONG;
        goto out;
    }
    step = "open";
    fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd < 0) {
        rc = -errno;
        goto out;
    }
    step = "write";
    if ((rc = write_all(fd, text, strlen(text))) < 0)
        goto out;
    step = "fsync";
    if (fsync(fd) < 0) {
        rc = -errno;
        goto out;
    }
    close(fd);
    fd = -1;
    step = "rename";
    if (rename(tmp, path) < 0) {
        rc = -errno;
        goto out;
    }
    renamed = true;
    step = "fsync of the directory";
    rc = snap_fsync_dir(path);
out:
    if (fd >= 0)
        close(fd);
    if (rc < 0) {
        if (!renamed && rc != -ENOMEM && rc != -ENAMETOOLONG)
            unlink(tmp);
        log_warning("Can't persist the AOF manifest %s (%s): %s",
                    s->cfg->appendfilename, step, strerror(-rc));
    }
    free(text);
    return rc;
}

int aof_open_incr(server_t *s, const char *name, bool fresh)
{
    char path[AOF_PATH_MAX];
    if (!aof_path(s, name, path)) {
        log_warning("The append-only file path for %s is too long", name);
        return -ENAMETOOLONG;
    }
    int fd = open(
        path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC | (fresh ? O_TRUNC : 0),
        0644);
    if (fd < 0) {
        int rc = -errno;
        log_warning("Can't open the append-only file %s: %s", name,
                    strerror(-rc));
        return rc;
    }
    return fd;
}

static uint64_t file_size(const server_t *s, const char *name)
{
    char path[AOF_PATH_MAX];
    struct stat st;
    if (!aof_path(s, name, path) || stat(path, &st) < 0)
        return 0;
    return (uint64_t)st.st_size;
}

uint64_t aof_files_size(const server_t *s)
{
    const aofman_t *m = &s->aof->man;
    uint64_t n = m->base != NULL ? file_size(s, m->base->name) : 0;
    for (size_t i = 0; i < m->nincr; i++)
        n += file_size(s, m->incr[i].name);
    return n;
}

/* ---- the fsync thread -------------------------------------------------- */

/* fdatasync(fd): 0, or the errno that says the data may not be on disk.
 * EINVAL (a file that cannot be synced) is not a failure, as in Redis's
 * bio. */
static int sync_fd(int fd)
{
    /* Linux's fdatasync covers what the file's size needs. */
    if (fdatasync(fd) == 0 || errno == EINVAL)
        return 0;
    return errno;
}

/* Under mu: the result of an fsync. Only a sync of the increment in use
 * clears an error: the last sync of a replaced one must not hide a
 * failure of the current one's. */
static void note_fsync(struct aof *a, int err, bool replaced)
{
    if (err != 0 || !replaced)
        a->fsync_errno = err;
}

static void *fsync_main(void *arg)
{
    struct aof *a = arg;
    pthread_mutex_lock(&a->mu);
    for (;;) {
        while (!a->th_stop && a->qlen == 0)
            pthread_cond_wait(&a->cv, &a->mu);
        if (a->qlen == 0)
            break; /* stopping, nothing left */
        aof_job_t j = a->q[a->qhead];
        pthread_mutex_unlock(&a->mu);
        int err = sync_fd(j.fd);
        if (j.close)
            close(j.fd);
        pthread_mutex_lock(&a->mu);
        note_fsync(a, err, j.close);
        a->qhead = (a->qhead + 1) % AOF_FSYNC_QUEUE;
        a->qlen--;
    }
    pthread_mutex_unlock(&a->mu);
    return NULL;
}

int aof_thread_start(struct aof *a)
{
    if (a->th_on)
        return 0;
    a->th_stop = false;
    int rc = pthread_create(&a->th, NULL, fsync_main, a);
    if (rc != 0)
        return -rc;
    a->th_on = true;
    return 0;
}

void aof_queue_fsync(struct aof *a, int fd, bool close_after)
{
    pthread_mutex_lock(&a->mu);
    if (!a->th_on || a->qlen == AOF_FSYNC_QUEUE) {
        pthread_mutex_unlock(&a->mu);
        int err = sync_fd(fd);
        if (close_after)
            close(fd);
        pthread_mutex_lock(&a->mu);
        note_fsync(a, err, close_after);
        pthread_mutex_unlock(&a->mu);
        return;
    }
    a->q[(a->qhead + a->qlen) % AOF_FSYNC_QUEUE] = (aof_job_t){fd, close_after};
    a->qlen++;
    pthread_cond_signal(&a->cv);
    pthread_mutex_unlock(&a->mu);
}

int aof_pending_fsync(struct aof *a)
{
    pthread_mutex_lock(&a->mu);
    int n = a->qlen;
    pthread_mutex_unlock(&a->mu);
    return n;
}

/* ---- the feed ---------------------------------------------------------- */

/* Makes room for n more bytes in the buffer. */
static void buf_reserve(struct aof *a, size_t n)
{
    if (a->len + n > a->cap) {
        size_t cap = a->cap ? a->cap : 16384;
        while (cap < a->len + n)
            cap *= 2;
        char *nb = realloc(a->buf, cap);
        if (nb == NULL) {
            /* A command that cannot be logged must not be acknowledged
             * as if it were: as Redis on an allocation failure, exit. */
            log_warning("Out of memory for the AOF buffer. Exiting.");
            exit(1);
        }
        a->buf = nb;
        a->cap = cap;
    }
}

/* Writes "<c><n>\r\n" at p (at most 23 bytes); returns the end. Digits
 * by hand: snprintf's format parsing was an eighth of the server's CPU
 * under pipelined writes. */
static char *put_count(char *p, char c, uint64_t n)
{
    *p = c;
    if (n < 10) { /* counts and lengths are mostly this short */
        p[1] = (char)('0' + n);
        p[2] = '\r';
        p[3] = '\n';
        return p + 4;
    }
    if (n < 100) {
        p[1] = (char)('0' + n / 10);
        p[2] = (char)('0' + n % 10);
        p[3] = '\r';
        p[4] = '\n';
        return p + 5;
    }
    char d[20];
    size_t k = 0;
    do {
        d[k++] = (char)('0' + n % 10);
        n /= 10;
    } while (n != 0);
    *p++ = c;
    while (k > 0)
        *p++ = d[--k];
    *p++ = '\r';
    *p++ = '\n';
    return p;
}

static void put_command(struct aof *a, int argc, const arg_t *argv)
{
    size_t need = 23;
    for (int i = 0; i < argc; i++)
        need += 23 + argv[i].len + 2;
    buf_reserve(a, need);
    char *p = put_count(a->buf + a->len, '*', (uint64_t)argc);
    for (int i = 0; i < argc; i++) {
        p = put_count(p, '$', argv[i].len);
        if (argv[i].len > 0) /* an empty argument may have no bytes */
            memcpy(p, argv[i].ptr, argv[i].len);
        p += argv[i].len;
        *p++ = '\r';
        *p++ = '\n';
    }
    a->len = (size_t)(p - a->buf);
}

void aof_feed(server_t *s, int dbnum, int argc, const arg_t *argv)
{
    struct aof *a = s->aof;
    if (a->state == AOF_OFF || (a->state == AOF_WAIT_REWRITE && !a->rewriting))
        return;
    if (dbnum != a->sel_db) {
        char db[16];
        int n = snprintf(db, sizeof(db), "%d", dbnum);
        arg_t sel[2] = {{"SELECT", 6}, {db, (size_t)n}};
        put_command(a, 2, sel);
        a->sel_db = dbnum;
    }
    put_command(a, argc, argv);
}

/* ---- writing ----------------------------------------------------------- */

/* Refuses write commands with Redis's MISCONF for err. */
static void deny_writes(server_t *s, struct aof *a, int err)
{
    snprintf(a->deny_msg, sizeof(a->deny_msg),
             "MISCONF Errors writing to the AOF file: %s", strerror(err));
    server_deny_writes_aof(s, a->deny_msg);
}

/* Takes in what the fsync thread found: a failed fsync refuses writes
 * (and asks for another fsync, which the cron queues once a second); the
 * first one that succeeds lifts the refusal unless a write error stands. */
static void check_fsync(server_t *s, struct aof *a)
{
    pthread_mutex_lock(&a->mu);
    int err = a->fsync_errno;
    pthread_mutex_unlock(&a->mu);
    if (err != 0) {
        if (a->fsync_err == 0)
            log_warning("Fail to fsync the AOF file: %s", strerror(err));
        a->fsync_err = err;
        a->fsync_due = true;
        if (!a->write_err)
            deny_writes(s, a, err);
    } else if (a->fsync_err != 0) {
        a->fsync_err = 0;
        if (!a->write_err) {
            log_warning("AOF fsync error looks solved. Redis can write "
                        "again.");
            server_deny_writes_aof(s, NULL);
        }
    }
}

static void write_failed(server_t *s, struct aof *a, int err)
{
    if (s->cfg->appendfsync == CFG_FSYNC_ALWAYS) {
        log_warning("Can't recover from AOF write error when the AOF fsync "
                    "policy is 'always'. Exiting...");
        exit(1);
    }
    time_t now = time(NULL);
    if (!a->write_err || now - a->last_err_log >= AOF_ERROR_LOG_SECS) {
        log_warning("Error writing to the AOF file: %s", strerror(err));
        a->last_err_log = now;
    }
    a->write_err = true;
    a->write_errno = err;
    deny_writes(s, a, err);
}

/* Writes the buffer; false when it could not be written whole (the file
 * is cut back to the commands before it, or what was written is kept). */
static bool write_buffer(server_t *s, struct aof *a)
{
    ssize_t n;
    do
        n = write(a->fd, a->buf, a->len);
    while (n < 0 && errno == EINTR);
    if (n == (ssize_t)a->len) {
        a->incr_size += (uint64_t)n;
        a->cur_size += (uint64_t)n;
        a->len = 0;
        return true;
    }
    int err = n < 0 ? errno : ENOSPC;
    if (n > 0) {
        /* A torn command would stop the next load: cut it off, else keep
         * what went out and write the rest later. */
        if (ftruncate(a->fd, (off_t)a->incr_size) < 0) {
            a->incr_size += (uint64_t)n;
            a->cur_size += (uint64_t)n;
            memmove(a->buf, a->buf + n, a->len - (size_t)n);
            a->len -= (size_t)n;
        }
    }
    write_failed(s, a, err);
    return false;
}

static bool child_saving(const server_t *s)
{
    return persist_child_kind(s) != 0;
}

void aof_flush(server_t *s, bool force)
{
    struct aof *a = s->aof;
    if (a == NULL || a->fd < 0)
        return;
    uint64_t now = uv_now(s->loop);
    int mode = s->cfg->appendfsync;
    bool skip_fsync = s->cfg->no_appendfsync_on_rewrite && child_saving(s);
    check_fsync(s, a);
    if (a->len == 0) {
        if (mode == CFG_FSYNC_EVERYSEC && a->fsync_due && !skip_fsync &&
            now - a->last_fsync_ms >= 1000 && aof_pending_fsync(a) == 0) {
            aof_queue_fsync(a, a->fd, false);
            a->last_fsync_ms = now;
            a->fsync_due = false;
        }
        return;
    }
    if (mode == CFG_FSYNC_EVERYSEC && !force && aof_pending_fsync(a) > 0) {
        if (a->postponed_since == 0) {
            a->postponed_since = now;
            return;
        }
        if (now - a->postponed_since < AOF_FSYNC_SLOW_MS)
            return;
        a->delayed_fsync++;
        log_notice("Asynchronous AOF fsync is taking too long (disk is "
                   "busy?). Writing the AOF buffer without waiting for "
                   "fsync to complete, this may slow down Redis.");
    }
    a->postponed_since = 0;
    if (!write_buffer(s, a))
        return;
    if (a->write_err) {
        log_warning("AOF write error looks solved. Redis can write again.");
        a->write_err = false;
        if (a->fsync_err != 0)
            deny_writes(s, a, a->fsync_err);
        else
            server_deny_writes_aof(s, NULL);
    }
    a->fsync_due = true;
    if (skip_fsync)
        return;
    if (mode == CFG_FSYNC_ALWAYS) {
        if (fdatasync(a->fd) < 0) {
            log_warning("Can't persist AOF for fsync error when the AOF "
                        "fsync policy is 'always': %s. Exiting...",
                        strerror(errno));
            exit(1);
        }
        a->last_fsync_ms = now;
        a->fsync_due = false;
    } else if (mode == CFG_FSYNC_EVERYSEC && now - a->last_fsync_ms >= 1000 &&
               aof_pending_fsync(a) == 0) {
        aof_queue_fsync(a, a->fd, false);
        a->last_fsync_ms = now;
        a->fsync_due = false;
    }
}

bool aof_hold_replies(server_t *s, bool urgent)
{
    struct aof *a = s->aof;
    if (a == NULL || a->len == 0)
        return false;
    /* A write that failed, or is put off behind a slow fsync (everysec),
     * holds nothing: the replies go whether it was made or not, as Redis's
     * do, else they would wait for the disk. (With always a failure has
     * exited.) */
    if (a->write_err || a->postponed_since != 0)
        return false;
    if (!urgent)
        return true;
    aof_flush(s, true);
    return false;
}

/* ---- loading ----------------------------------------------------------- */

static int read_manifest(server_t *s, aofman_t *m, bool *found)
{
    char path[AOF_PATH_MAX], err[256];
    *found = false;
    memset(m, 0, sizeof(*m));
    if (!manifest_path(s, path, false))
        return -ENAMETOOLONG;
    FILE *f = fopen(path, "rb");
    if (f == NULL) {
        if (errno == ENOENT)
            return 0;
        int rc = -errno;
        log_warning("Fatal error: can't open the AOF manifest file %s for "
                    "reading: %s",
                    path, strerror(-rc));
        return rc;
    }
    sbuf_t b = {0};
    char chunk[4096];
    size_t n;
    while ((n = fread(chunk, 1, sizeof(chunk), f)) > 0 && !b.failed)
        sb_printf(&b, "%.*s", (int)n, chunk);
    /* a NUL byte ends sb_printf's copy: the parser sees it as bad format */
    bool rerr = ferror(f);
    fclose(f);
    if (rerr || b.failed) {
        free(b.p);
        log_warning("Fatal error: can't read the AOF manifest file %s", path);
        return -EIO;
    }
    int rc = aofman_parse(b.p != NULL ? b.p : "", b.len, m, err, sizeof(err));
    free(b.p);
    if (rc < 0) {
        log_warning("Fatal error: the AOF manifest file %s is damaged: %s",
                    path, err);
        return rc;
    }
    *found = true;
    return 0;
}

static int load_files(server_t *s, const aofman_t *m)
{
    char path[AOF_PATH_MAX];
    size_t total = m->nincr + (m->base != NULL);
    size_t k = 0;
    /* as Redis: the progress is over every file of the manifest */
    for (size_t i = 0; i < total; i++) {
        const char *name = i == 0 && m->base != NULL
                               ? m->base->name
                               : m->incr[i - (m->base != NULL)].name;
        struct stat st;
        if (aof_path(s, name, path) && stat(path, &st) == 0)
            loadprog_expect(s, (uint64_t)st.st_size);
    }
    if (m->base != NULL) {
        uint64_t t0 = uv_hrtime();
        if (!aof_path(s, m->base->name, path))
            return -ENAMETOOLONG;
        int rc = persist_load_path(s, path);
        if (rc == -ENOENT) {
            log_warning("Fatal error: the AOF base file %s named by the "
                        "manifest doesn't exist",
                        path);
            return rc;
        }
        if (rc < 0)
            return rc; /* logged, naming the file */
        /* persist_load_path() counted the base as a file done */
        log_notice("DB loaded from base file %s: %.3f seconds", m->base->name,
                   (double)(uv_hrtime() - t0) / 1e9);
        k++;
    }
    for (size_t i = 0; i < m->nincr; i++, k++) {
        uint64_t t0 = uv_hrtime();
        if (!aof_path(s, m->incr[i].name, path))
            return -ENAMETOOLONG;
        struct stat st;
        if (stat(path, &st) < 0) {
            log_warning("Fatal error: the AOF file %s named by the manifest "
                        "can't be read: %s",
                        path, strerror(errno));
            return -errno;
        }
        if (st.st_size == 0)
            continue;
        if (s->aof->replay == NULL) {
            log_warning("Fatal error: the AOF file %s holds commands and "
                        "this build cannot replay them",
                        path);
            return -ENOTSUP;
        }
        aofload_report_t r;
        memset(&r, 0, sizeof(r));
        int rc = s->aof->replay(s, path, k + 1 == total,
                                s->cfg->aof_load_truncated, &r);
        if (rc == -ECANCELED) {
            log_warning("Loading of %s stopped: the server is shutting down",
                        path);
            return rc;
        }
        if (rc < 0) {
            log_warning("Fatal error loading the AOF file %s: %s", path,
                        r.err[0] ? r.err : strerror(-rc));
            return rc;
        }
        loadprog_file_done(s, (uint64_t)st.st_size);
        log_notice("DB loaded from incr file %s: %.3f seconds", m->incr[i].name,
                   (double)(uv_hrtime() - t0) / 1e9);
    }
    return 0;
}

int aof_load_manifest(server_t *s)
{
    bool found;
    aofman_free(&s->aof->man);
    return read_manifest(s, &s->aof->man, &found);
}

int aof_load(server_t *s)
{
    struct aof *a = s->aof;
    uint64_t t0 = uv_hrtime();
    int rc = aof_load_manifest(s);
    if (rc < 0)
        return rc;
    if (a->man.base == NULL && a->man.nincr == 0)
        return 0; /* an empty start, the snapshot ignored, as Redis 7 */
    if ((rc = load_files(s, &a->man)) < 0) {
        for (int i = 0; i < s->ndbs; i++)
            ks_flush(s->dbs[i]);
        return rc;
    }
    log_notice("DB loaded from append only file: %.3f seconds",
               (double)(uv_hrtime() - t0) / 1e9);
    return 0;
}

/* ---- starting and stopping --------------------------------------------- */

int aof_make_dir(server_t *s)
{
    if (mkdir(s->cfg->appenddirname, 0755) < 0) {
        if (errno == EEXIST)
            return 0;
        int rc = -errno;
        log_warning("Can't open or create append-only dir %s: %s",
                    s->cfg->appenddirname, strerror(-rc));
        return rc;
    }
    /* The new directory's name is durable only once its parent is synced:
     * without this a power cut may take the directory, and every file the
     * manifest in it names, whatever was synced inside. */
    int rc = snap_fsync_dir(s->cfg->appenddirname);
    if (rc < 0)
        log_warning("Can't fsync the directory of the append-only dir %s: %s",
                    s->cfg->appenddirname, strerror(-rc));
    return rc;
}

/* A base of the current data, named m's next base, written now. */
static int write_base_now(server_t *s, aofman_t *m)
{
    char path[AOF_PATH_MAX], err[512] = "";
    if (aofman_new_base(m, s->cfg->appendfilename) < 0)
        return -ENOMEM;
    if (!aof_path(s, m->base->name, path))
        return -ENAMETOOLONG;
    int rc = snap_save(path, persist_keyspace_iter, s, err, sizeof(err));
    if (rc < 0)
        log_warning("Can't write the AOF base file %s: %s", path, err);
    return rc;
}

void aof_stop(server_t *s)
{
    struct aof *a = s->aof;
    if (a->state == AOF_OFF)
        return;
    if (a->rewriting)
        persist_kill_child(s); /* reports through aof_rewrite_done */
    aof_flush(s, true);
    if (a->fd >= 0) {
        if (fdatasync(a->fd) < 0)
            log_warning("Fail to fsync the AOF file: %s", strerror(errno));
        close(a->fd);
        a->fd = -1;
    }
    a->state = AOF_OFF;
    a->len = 0;
    a->sel_db = -1;
    a->rewrite_scheduled = false;
    a->write_err = false;
    a->fsync_err = 0;
    pthread_mutex_lock(&a->mu);
    a->fsync_errno = 0;
    pthread_mutex_unlock(&a->mu);
    server_deny_writes_aof(s, NULL);
    s->on_propagate = NULL;
    s->hold_replies = NULL;
    conn_release_held(s);
}

int aof_open_files(server_t *s)
{
    struct aof *a = s->aof;
    int rc;
    if ((rc = aof_make_dir(s)) < 0)
        return rc;
    aofman_t m;
    if (aofman_dup(&a->man, &m) < 0)
        return -ENOMEM;
    if (m.base == NULL && m.nincr == 0) {
        if ((rc = write_base_now(s, &m)) < 0)
            goto fail;
        log_notice("Creating AOF base file %s on server start", m.base->name);
    }
    bool fresh = m.nincr == 0;
    if (fresh && aofman_new_incr(&m, s->cfg->appendfilename) < 0) {
        rc = -ENOMEM;
        goto fail;
    }
    if ((rc = aof_open_incr(s, aofman_last_incr(&m), fresh)) < 0)
        goto fail;
    int fd = rc;
    if ((rc = aof_write_manifest(s, &m)) < 0 ||
        (rc = aof_thread_start(a)) < 0) {
        close(fd);
        goto fail;
    }
    aofman_free(&a->man);
    a->man = m;
    a->fd = fd;
    a->incr_size = file_size(s, aofman_last_incr(&m));
    a->cur_size = a->base_size = aof_files_size(s);
    a->state = AOF_ON;
    a->last_fsync_ms = uv_now(s->loop);
    s->on_propagate = aof_feed;
    s->hold_replies = aof_hold_replies;
    log_notice("%s AOF incr file %s on server start",
               fresh ? "Creating" : "Opening", aofman_last_incr(&m));
    return 0;
fail:
    aofman_free(&m);
    return rc;
}
