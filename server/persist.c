/*
 * persist.c - see persist.h.
 *
 * The bookkeeping follows Redis's serverCron and rdb.c: a save point fires
 * a background save when dirty >= changes and more than seconds have passed
 * since the last successful save; after a failed background save the next
 * attempt waits PERSIST_RETRY_DELAY seconds. A successful background save
 * subtracts the changes counted when it forked (writes made while the child
 * ran still count) and sets the last save time to the fork time, which is
 * the moment its image shows.
 *
 * The child closes every socket (a killed parent must not leave its port
 * held by an orphan, and a client the parent closes must see it) and asks
 * to be killed with its parent, so a restarted server never races an
 * orphan's rename. It reports a failure's reason through a pipe, since only
 * the parent writes the log.
 */
#include "persist.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cmd.h"
#include "expire.h"
#include "keyspace.h"
#include "latency.h"
#include "loadprog.h"
#include "log.h"
#include "server_int.h"
#include "snapshot.h"
#include "util.h"

#define PERSIST_CRON_MS 100
#define PERSIST_RETRY_DELAY 5 /* seconds, as CONFIG_BGSAVE_RETRY_DELAY */
#define PERSIST_ERR_MAX 512

/* The write denial (server_deny_writes()) a failed background save sets;
 * a good save clears it. */
static const char persist_misconf_msg[] =
    "MISCONF Redis is configured to save RDB snapshots, but it's currently "
    "unable to persist to disk. Commands that may modify the data set are "
    "disabled, because this instance is configured to report errors during "
    "writes if RDB snapshotting fails (stop-writes-on-bgsave-error option). "
    "Please check the Redis logs for details about the RDB error.";

int persist_init(server_t *s)
{
    persist_t *p = calloc(1, sizeof(*p));
    if (p == NULL)
        return -ENOMEM;
    p->child_errfd = -1;
    s->persist = p;
    return 0;
}

void persist_free(server_t *s)
{
    persist_t *p = s->persist;
    if (p == NULL)
        return;
    /* A child still running (none after persist_on_shutdown()) keeps
     * running; only this process's view of it goes. */
    if (p->child_errfd >= 0)
        close(p->child_errfd);
    free(p->child_path);
    free(p);
    s->persist = NULL;
}

/* Records the outcome of a background save and sets the server's write
 * denial (MISCONF) to match. */
static void set_bgsave_err(server_t *s, persist_t *p, bool err)
{
    p->last_bgsave_err = err;
    server_deny_writes(s, err ? persist_misconf_msg : NULL);
}

/* ---- the keyspace as the snapshot writer sees it ----------------------- */

typedef struct walk {
    snap_each_fn *each;
    void *ctx;
    int db;
} walk_t;

static int walk_key(void *ctx, const void *key, size_t len,
                    const cf_filter_t *f)
{
    walk_t *w = ctx;
    return w->each(w->ctx, w->db, key, len, f, ks_when(f));
}

int persist_keyspace_iter(void *src, snap_each_fn *each, void *ctx)
{
    const server_t *s = src;
    walk_t w = {each, ctx, 0};
    for (int i = 0; i < s->ndbs; i++) {
        if (ks_size(s->dbs[i]) == 0)
            continue;
        w.db = i;
        int rc = ks_foreach(s->dbs[i], walk_key, &w);
        if (rc != 0)
            return rc;
    }
    return 0;
}

/* ---- loading ----------------------------------------------------------- */

typedef struct load_ctx {
    server_t *s;
    uint64_t keys;
    uint64_t expired; /* past their time: not loaded */
    uint64_t bytes;   /* the keys' and filters' sizes: the progress */
    int64_t now;
    char why[PERSIST_ERR_MAX];
} load_ctx_t;

static int load_key(void *ctx, int db, const void *key, size_t len,
                    cf_filter_t *f, int64_t when)
{
    load_ctx_t *l = ctx;
    l->bytes += len + cf_size_bytes(f);
    if (!loadprog_step(l->s, l->bytes)) {
        cf_free(f);
        return -ECANCELED; /* shutting down */
    }
    if (when >= 0 && when <= l->now) {
        /* as Redis: a key that expired while the server was down is not
         * loaded at all */
        cf_free(f);
        l->expired++;
        return 0;
    }
    if (db < 0 || db >= l->s->ndbs) {
        snprintf(l->why, sizeof(l->why),
                 "the snapshot holds database %d but only %d are configured "
                 "(databases)",
                 db, l->s->ndbs);
        cf_free(f);
        return -ERANGE;
    }
    int rc = ks_add(l->s->dbs[db], key, len, &f);
    if (rc < 0) {
        cf_free(f);
        snprintf(l->why, sizeof(l->why), "%s",
                 rc == -EEXIST ? "a key appears twice in one database"
                               : "out of memory");
        return rc;
    }
    if (when >= 0 && ks_set_expire(l->s->dbs[db], key, len, when) < 0) {
        snprintf(l->why, sizeof(l->why), "out of memory");
        return -ENOMEM;
    }
    l->keys++;
    return 0;
}

/* The largest filter a snapshot may hold: maxmemory, else the memory the
 * process may use (the file's own size bounds it further); 0 is no cap. */
static uint64_t load_cap(const server_t *s)
{
    if (s->cfg->maxmemory > 0)
        return s->cfg->maxmemory;
    return s->phys_memory != UINT64_MAX ? s->phys_memory : 0;
}

int persist_load(server_t *s)
{
    const char *path = s->cfg->dbfilename;
    int stale = snap_remove_stale(path);
    if (stale > 0)
        log_notice("Removed %d temporary snapshot file%s left by an "
                   "interrupted save",
                   stale, stale == 1 ? "" : "s");
    struct stat st;
    if (stat(path, &st) == 0)
        loadprog_expect(s, (uint64_t)st.st_size);
    int rc = persist_load_path(s, path);
    if (rc == -ENOENT) {
        log_notice("No snapshot file '%s': starting with an empty dataset",
                   path);
        return 0;
    }
    return rc;
}

int persist_load_path(server_t *s, const char *path)
{
    load_ctx_t l = {.s = s, .now = expire_now_ms()};
    char err[PERSIST_ERR_MAX] = "";
    cf_limits_t lim = {.max_bytes = load_cap(s)};
    uint64_t t0 = uv_hrtime();
    int rc = snap_load(path, &lim, load_key, &l, err, sizeof(err));
    if (rc == -ENOENT && l.keys == 0)
        return rc;
    if (rc < 0) {
        for (int i = 0; i < s->ndbs; i++)
            ks_flush(s->dbs[i]);
        if (rc == -ECANCELED)
            log_warning("Loading of %s stopped: the server is shutting down",
                        path);
        else if (l.why[0] != '\0')
            log_warning("Fatal error loading the snapshot %s: %s. Exiting.",
                        path, l.why);
        else if (err[0] != '\0') /* snap_load's reason names the file */
            log_warning("Fatal error loading the snapshot %s. Exiting.", err);
        else
            log_warning("Fatal error loading the snapshot %s: %s. Exiting.",
                        path, strerror(-rc));
        return rc;
    }
    double secs = (double)(uv_hrtime() - t0) / 1e9;
    struct stat st;
    uint64_t size = stat(path, &st) == 0 ? (uint64_t)st.st_size : 0;
    loadprog_file_done(s, size);
    log_notice("DB loaded from disk: %.3f seconds, %" PRIu64 " keys, %" PRIu64
               " bytes",
               secs, l.keys, size);
    if (l.expired > 0)
        log_notice("Done loading the snapshot: %" PRIu64
                   " expired keys skipped",
                   l.expired);
    return 0;
}

/* ---- saving ------------------------------------------------------------ */

/* A foreground save: 0 or a negative errno (logged, err filled). */
static int save_now(server_t *s, char *err, size_t errlen)
{
    persist_t *p = s->persist;
    uint64_t t0 = uv_hrtime();
    int rc =
        snap_save(s->cfg->dbfilename, persist_keyspace_iter, s, err, errlen);
    latency_add(s, "rdb-save", latency_ms_since(t0));
    if (rc < 0) {
        log_warning("Error saving DB on disk: %s", err);
        return rc;
    }
    log_notice("DB saved on disk (%.3f seconds)",
               (double)(uv_hrtime() - t0) / 1e9);
    snap_remove_stale(s->cfg->dbfilename);
    s->dirty = 0;
    s->lastsave = time(NULL);
    set_bgsave_err(s, p, false);
    p->saves++;
    return 0;
}

/* Keeps only the standard streams and errfd (moved to descriptor 3):
 * the listeners and the clients' sockets close with the parent alone. */
static int close_fds_in_child(int errfd)
{
    if (errfd != 3 && dup2(errfd, 3) < 0)
        return errfd;
#ifdef SYS_close_range
    if (syscall(SYS_close_range, 4u, ~0u, 0u) == 0)
        return 3;
#endif
    long max = sysconf(_SC_OPEN_MAX);
    for (long fd = 4; fd < (max > 0 ? max : 1024); fd++)
        close((int)fd);
    return 3;
}

/* Gives the child the default action for every signal the daemon catches
 * (libuv's handlers would write into the parent's signal pipe, so a SIGTERM
 * aimed at the child could shut the server down). Ignored signals stay
 * ignored, as in Redis's child: SIGPIPE, and SIGHUP, which a closed terminal
 * sends to the whole process group and which must not fail the save. The
 * faults a sanitizer may catch (SIGSEGV...) keep their handlers. */
static void reset_signals_in_child(void)
{
    static const int faults[] = {SIGSEGV, SIGBUS, SIGFPE, SIGILL,
                                 SIGTRAP, SIGSYS, SIGABRT};
    for (int sig = 1; sig < NSIG; sig++) {
        struct sigaction sa;
        bool fault = false;
        for (size_t i = 0; i < sizeof(faults) / sizeof(faults[0]); i++)
            fault |= sig == faults[i];
        if (fault || sig == SIGKILL || sig == SIGSTOP ||
            sigaction(sig, NULL, &sa) < 0)
            continue;
        if (!(sa.sa_flags & SA_SIGINFO) &&
            (sa.sa_handler == SIG_DFL || sa.sa_handler == SIG_IGN))
            continue;
        memset(&sa, 0, sizeof(sa));
        sa.sa_handler = SIG_DFL;
        sigemptyset(&sa.sa_mask);
        sigaction(sig, &sa, NULL);
    }
}

/* Runs in the child with every signal blocked (bgsave_start); unblocks
 * them (old is the parent's mask) once the daemon's handlers are gone. */
static void child_main(server_t *s, const char *path, pid_t parent, int errfd,
                       const sigset_t *old)
{
    reset_signals_in_child();
    pthread_sigmask(SIG_SETMASK, old, NULL);
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (getppid() != parent)
        _exit(2);
    errfd = close_fds_in_child(errfd);
    /* Test-only: the integration tests hold a child where it starts
     * (stopped until they send SIGCONT), to act while one runs without
     * racing its end. */
    if (getenv("CUCKOOD_TEST_HOLD_CHILD") != NULL)
        raise(SIGSTOP);
    char err[PERSIST_ERR_MAX] = "";
    int rc = snap_save(path, persist_keyspace_iter, s, err, sizeof(err));
    if (rc < 0) {
        size_t n = strlen(err);
        if (n == 0)
            n = (size_t)snprintf(err, sizeof(err), "%s", strerror(-rc));
        ssize_t w = write(errfd, err, n);
        (void)w;
        _exit(1);
    }
    _exit(0);
}

/* The child's failure as the caller records it. */
static void child_failed(server_t *s, int kind)
{
    if (kind == PERSIST_CHILD_SNAPSHOT)
        set_bgsave_err(s, s->persist, true);
    else if (s->persist->on_aof_done != NULL)
        s->persist->on_aof_done(s, false);
}

/* Starts a child writing a snapshot of the keyspace at path (kind says
 * whose it is): 0, or a negative errno (logged). */
static int child_start(server_t *s, int kind, const char *cpath)
{
    persist_t *p = s->persist;
    const char *what = kind == PERSIST_CHILD_SNAPSHOT
                           ? "Can't save in background"
                           : "Can't rewrite append only file in background";
    int fds[2] = {-1, -1};
    p->last_bgsave_try = time(NULL);
    if (pipe(fds) < 0 || fcntl(fds[0], F_SETFD, FD_CLOEXEC) < 0 ||
        fcntl(fds[1], F_SETFD, FD_CLOEXEC) < 0 ||
        fcntl(fds[0], F_SETFL, O_NONBLOCK) < 0) {
        int rc = -errno;
        if (fds[0] >= 0) {
            close(fds[0]);
            close(fds[1]);
        }
        log_warning("%s: pipe: %s", what, strerror(-rc));
        child_failed(s, kind);
        return rc;
    }
    char *path = strdup(cpath);
    if (path == NULL) {
        close(fds[0]);
        close(fds[1]);
        log_warning("%s: out of memory", what);
        child_failed(s, kind);
        return -ENOMEM;
    }
    /* No handler may run in the child before it has reset them: signals
     * stay blocked across fork() (as libuv's uv_spawn does) and the parent
     * restores its mask at once. */
    sigset_t all, old;
    sigfillset(&all);
    pthread_sigmask(SIG_SETMASK, &all, &old);
    pid_t parent = getpid();
    uint64_t t0 = uv_hrtime();
    pid_t pid = fork();
    if (pid == 0) {
        close(fds[0]);
        child_main(s, path, parent, fds[1], &old);
    }
    int fork_errno = errno;
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    latency_add(s, "fork", latency_ms_since(t0));
    close(fds[1]);
    if (pid < 0) {
        int rc = -fork_errno;
        close(fds[0]);
        free(path);
        log_warning("%s: fork: %s", what, strerror(-rc));
        child_failed(s, kind);
        return rc;
    }
    p->child = pid;
    p->child_kind = kind;
    p->child_path = path;
    p->child_errfd = fds[0];
    p->dirty_at_fork = s->dirty;
    p->child_start = time(NULL);
    p->child_start_ms = uv_now(s->loop);
    if (kind == PERSIST_CHILD_SNAPSHOT) {
        p->bgsave_scheduled = false;
        log_notice("Background saving started by pid %d", (int)pid);
    } else {
        log_notice("Background append only file rewriting started by pid %d",
                   (int)pid);
    }
    return 0;
}

static int bgsave_start(server_t *s)
{
    return child_start(s, PERSIST_CHILD_SNAPSHOT, s->cfg->dbfilename);
}

int persist_fork_aof(server_t *s, const char *path)
{
    if (s->persist->child != 0)
        return -EBUSY;
    return child_start(s, PERSIST_CHILD_AOF, path);
}

int persist_child_kind(const server_t *s)
{
    return s->persist->child != 0 ? s->persist->child_kind : 0;
}

/* Removes the temporary file a killed or failed child left beside path
 * (a large file's unlink can take a while: a latency event). */
static void remove_temp(server_t *s, const char *path)
{
    uint64_t t0 = uv_hrtime();
    snap_remove_stale(path);
    latency_add(s, "rdb-unlink-temp-file", latency_ms_since(t0));
}

static void child_forget(persist_t *p)
{
    if (p->child_errfd >= 0)
        close(p->child_errfd);
    p->child_errfd = -1;
    free(p->child_path);
    p->child_path = NULL;
    p->child = 0;
    p->child_kind = 0;
}

/* Logs why the child failed (its exit status st, the reason it wrote to
 * its pipe) with the two formats given, and removes the temporary file a
 * killed child may leave. */
static void child_failure(server_t *s, int st, const char *by_signal,
                          const char *with_error)
{
    persist_t *p = s->persist;
    char why[PERSIST_ERR_MAX] = "";
    ssize_t n = read(p->child_errfd, why, sizeof(why) - 1);
    why[n > 0 ? n : 0] = '\0';
    if (WIFSIGNALED(st))
        log_warning(by_signal, WTERMSIG(st));
    else
        log_warning(with_error, why[0] ? why : "unknown error");
    remove_temp(s, p->child_path);
}

/* The rewrite child has exited with status st. */
static void rewrite_done(server_t *s, int st)
{
    persist_t *p = s->persist;
    bool ok = WIFEXITED(st) && WEXITSTATUS(st) == 0;
    if (ok)
        log_notice("Background AOF rewrite terminated with success");
    else
        child_failure(s, st, "Background AOF rewrite terminated by signal %d",
                      "Background AOF rewrite terminated with error: %s");
    child_forget(p);
    if (p->on_aof_done != NULL)
        p->on_aof_done(s, ok);
}

/* The child has exited with status st. */
static void bgsave_done(server_t *s, int st)
{
    persist_t *p = s->persist;
    if (p->child_kind == PERSIST_CHILD_AOF) {
        rewrite_done(s, st);
        return;
    }
    p->last_bgsave_sec =
        (int64_t)((uv_now(s->loop) - p->child_start_ms + 500) / 1000);
    p->bgsave_ran = true;
    if (WIFEXITED(st) && WEXITSTATUS(st) == 0) {
        log_notice("Background saving terminated with success");
        /* What the start-up sweep had to keep (its writer was still
         * alive, as a killed predecessor's child may be) goes now. */
        snap_remove_stale(p->child_path);
        s->dirty -= p->dirty_at_fork < s->dirty ? p->dirty_at_fork : s->dirty;
        s->lastsave = p->child_start;
        set_bgsave_err(s, p, false);
        p->saves++;
    } else {
        child_failure(s, st, "Background saving terminated by signal %d",
                      "Background saving error: %s");
        set_bgsave_err(s, p, true);
    }
    child_forget(p);
}

static void reap(server_t *s)
{
    persist_t *p = s->persist;
    int st;
    if (p->child == 0)
        return;
    pid_t r = waitpid(p->child, &st, WNOHANG);
    if (r == p->child) {
        bgsave_done(s, st);
    } else if (r < 0 && errno == ECHILD) {
        /* Reaped elsewhere: the outcome is unknown, so count it failed. */
        log_warning("Background child %d vanished", (int)p->child);
        int kind = p->child_kind;
        child_forget(p);
        child_failed(s, kind);
    }
}

/* Kills a running child and waits for it; its temporary file goes. */
static void bgsave_kill(server_t *s)
{
    persist_t *p = s->persist;
    if (p->child == 0)
        return;
    int kind = p->child_kind;
    log_warning(kind == PERSIST_CHILD_SNAPSHOT
                    ? "There is a child saving a snapshot. Killing it!"
                    : "Killing running AOF rewrite child: %d",
                (int)p->child);
    kill(p->child, SIGKILL);
    while (waitpid(p->child, NULL, 0) < 0 && errno == EINTR)
        ;
    remove_temp(s, p->child_path);
    child_forget(p);
    if (kind == PERSIST_CHILD_AOF && p->on_aof_done != NULL)
        p->on_aof_done(s, false);
}

void persist_kill_child(server_t *s)
{
    bgsave_kill(s);
}

static void on_cron(uv_timer_t *t)
{
    server_t *s = t->data;
    persist_t *p = s->persist;
    reap(s);
    if (p->child != 0 || s->shutting_down)
        return;
    time_t now = time(NULL);
    bool may_retry =
        !p->last_bgsave_err || now - p->last_bgsave_try > PERSIST_RETRY_DELAY;
    if (!may_retry)
        return;
    for (int i = 0; i < s->cfg->nsave; i++) {
        const cfg_save_point_t *sp = &s->cfg->save[i];
        if (s->dirty >= (uint64_t)sp->changes &&
            now - s->lastsave > sp->seconds) {
            log_notice("%" PRId64 " changes in %" PRId64 " seconds. Saving...",
                       sp->changes, sp->seconds);
            bgsave_start(s);
            return;
        }
    }
    if (p->bgsave_scheduled)
        bgsave_start(s);
}

static void on_sigchld(uv_signal_t *h, int signum)
{
    (void)signum;
    reap(h->data);
}

int persist_start(server_t *s)
{
    persist_t *p = s->persist;
    const char *what = "the save point timer";
    int rc = uv_timer_init(s->loop, &p->timer);
    if (rc < 0)
        goto fail;
    what = "the SIGCHLD handler";
    if ((rc = uv_signal_init(s->loop, &p->sigchld)) < 0) {
        uv_close((uv_handle_t *)&p->timer, NULL);
        goto fail;
    }
    p->timer.data = p->sigchld.data = s;
    what = "the save point timer or the SIGCHLD handler";
    if ((rc = uv_timer_start(&p->timer, on_cron, PERSIST_CRON_MS,
                             PERSIST_CRON_MS)) < 0 ||
        (rc = uv_signal_start(&p->sigchld, on_sigchld, SIGCHLD)) < 0) {
        uv_close((uv_handle_t *)&p->timer, NULL);
        uv_close((uv_handle_t *)&p->sigchld, NULL);
        goto fail;
    }
    p->handles_open = true;
    return 0;
fail:
    log_warning("Cannot set up %s: %s", what, uv_strerror(rc));
    return rc;
}

int persist_shutdown_save(server_t *s, bool nosave, bool save, bool force)
{
    persist_t *p = s->persist;
    if (p->shutdown_done)
        return 0;
    bgsave_kill(s);
    if (!nosave && (save || s->cfg->nsave > 0)) {
        char err[PERSIST_ERR_MAX];
        log_notice("Saving the final snapshot before exiting.");
        if (save_now(s, err, sizeof(err)) < 0) {
            if (!force) {
                log_warning("Error trying to save the DB, can't exit.");
                return -EIO;
            }
            log_warning("Error trying to save the DB; exiting anyway "
                        "(FORCE).");
            p->shutdown_failed = true;
        }
    }
    p->shutdown_done = true;
    return 0;
}

void persist_on_shutdown(server_t *s)
{
    persist_t *p = s->persist;
    if (!p->shutdown_done)
        persist_shutdown_save(s, false, false, true);
    if (p->shutdown_failed) {
        log_warning("The final save failed: exiting with an error.");
        s->exit_code = 1;
    }
    if (p->handles_open) {
        uv_close((uv_handle_t *)&p->timer, NULL);
        uv_close((uv_handle_t *)&p->sigchld, NULL);
        p->handles_open = false;
    }
}

void persist_on_flushall(server_t *s)
{
    /* As Redis's killRDBChild(): an AOF rewrite goes on (the FLUSHALL is
     * in the increment after its base). */
    if (s->persist->child_kind == PERSIST_CHILD_SNAPSHOT)
        bgsave_kill(s);
    if (s->cfg->nsave > 0) {
        char err[PERSIST_ERR_MAX] = "";
        (void)save_now(s, err, sizeof(err)); /* logged there */
    }
}

void persist_info(const server_t *s, sbuf_t *b)
{
    const persist_t *p = s->persist;
    int64_t cur = -1;
    if (p->child != 0)
        cur = (int64_t)((uv_now(s->loop) - p->child_start_ms) / 1000);
    loadprog_info_head(s, b);
    sb_printf(b,
              "rdb_changes_since_last_save:%" PRIu64 "\r\n"
              "rdb_bgsave_in_progress:%d\r\n"
              "rdb_last_save_time:%lld\r\n"
              "rdb_last_bgsave_status:%s\r\n"
              "rdb_last_bgsave_time_sec:%" PRId64 "\r\n"
              "rdb_current_bgsave_time_sec:%" PRId64 "\r\n"
              "rdb_saves:%" PRIu64 "\r\n",
              s->dirty, p->child != 0, (long long)s->lastsave,
              p->last_bgsave_err ? "err" : "ok",
              p->bgsave_ran ? p->last_bgsave_sec : -1, cur, p->saves);
}

/* ---- commands ---------------------------------------------------------- */

void persist_save_proc(client_t *c, int argc, const arg_t *argv)
{
    (void)argc;
    (void)argv;
    server_t *s = c->srv;
    char err[PERSIST_ERR_MAX] = "";
    /* As Redis: only a background save stops SAVE, not an AOF rewrite. */
    if (s->persist->child != 0 &&
        s->persist->child_kind == PERSIST_CHILD_SNAPSHOT) {
        resp_add_error(&c->out, "ERR Background save already in progress");
        return;
    }
    if (save_now(s, err, sizeof(err)) < 0) {
        for (char *q = err; *q; q++)
            if (*q == '\r' || *q == '\n')
                *q = ' ';
        resp_add_errorf(&c->out, "ERR %s", err);
        return;
    }
    reply_ok(c);
}

void persist_bgsave_proc(client_t *c, int argc, const arg_t *argv)
{
    server_t *s = c->srv;
    bool schedule = false;
    if (argc == 2) {
        if (!arg_is(&argv[1], "schedule")) {
            reply_syntax_error(c);
            return;
        }
        schedule = true;
    } else if (argc > 2) {
        reply_syntax_error(c);
        return;
    }
    if (s->persist->child != 0 && s->persist->child_kind == PERSIST_CHILD_AOF &&
        !schedule) {
        resp_add_error(&c->out,
                       "ERR Another child process is active (AOF?): can't "
                       "BGSAVE right now. Use BGSAVE SCHEDULE in order to "
                       "schedule a BGSAVE whenever possible.");
        return;
    }
    if (s->persist->child != 0) {
        if (schedule) {
            s->persist->bgsave_scheduled = true;
            resp_add_simple(&c->out, "Background saving scheduled");
        } else {
            resp_add_error(&c->out, "ERR Background save already in progress");
        }
        return;
    }
    if (bgsave_start(s) < 0) {
        resp_add_error(&c->out, "ERR Background save failed to start: check "
                                "the logs");
        return;
    }
    resp_add_simple(&c->out, "Background saving started");
}

void persist_lastsave_proc(client_t *c, int argc, const arg_t *argv)
{
    (void)argc;
    (void)argv;
    resp_add_int(&c->out, (int64_t)c->srv->lastsave);
}
