/*
 * aofload.c - see aofload.h.
 *
 * The file is mapped and fed to the connections' parser (protocol/resp.h)
 * in slices; the parser says how much input each command used, which
 * gives every command's byte range. Commands run through the dispatcher
 * as a client without a connection (Redis's fake AOF client) while the
 * server is flagged loading, with the feed switched off, so that nothing
 * replayed is logged again.
 *
 * What the loader accepts is what a log holds: write commands, SELECT,
 * MULTI and EXEC, each a RESP array (Redis refuses a line that does not
 * start with '*'). Anything else is damage: a connection command run for
 * a client that has no connection would have nothing to act on.
 */
#include "aofload.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cmd.h"
#include "loadprog.h"
#include "log.h"
#include "multi.h"

/* Input handed to the parser at a time: large enough that feeding costs
 * nothing per command, small enough that the parser's copy stays small. */
#define SLICE ((size_t)256 * 1024)

/* A mapped file read as a sequence of RESP commands. */
typedef struct scan {
    const char *path;
    const unsigned char *map;
    size_t size;
    size_t fed;
    resp_parser_t *p;
} scan_t;

enum { SCAN_CMD = 1, SCAN_END = 0, SCAN_TORN = -1, SCAN_BAD = -2 };

static void report(aofload_report_t *r, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

static void report(aofload_report_t *r, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(r->err, sizeof(r->err), fmt, ap);
    va_end(ap);
}

/* Opens and maps path. 0, or a negative errno with r->err set. */
static int scan_open(scan_t *sc, const char *path, aofload_report_t *r)
{
    memset(sc, 0, sizeof(*sc));
    sc->path = path;
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
        int rc = -errno;
        report(r, "Can't open the append only file %s: %s", path,
               strerror(errno));
        return rc;
    }
    struct stat st;
    if (fstat(fd, &st) < 0) {
        int rc = -errno;
        report(r, "Can't stat the append only file %s: %s", path,
               strerror(errno));
        close(fd);
        return rc;
    }
    sc->size = (size_t)st.st_size;
    r->file_bytes = sc->size;
    if (sc->size > 0) {
        void *m = mmap(NULL, sc->size, PROT_READ, MAP_PRIVATE, fd, 0);
        if (m == MAP_FAILED) {
            int rc = -errno;
            report(r, "Can't read the append only file %s: %s", path,
                   strerror(errno));
            close(fd);
            return rc;
        }
        madvise(m, sc->size, MADV_SEQUENTIAL);
        sc->map = m;
    }
    close(fd);
    /* A log holds what clients were allowed to send, and whole filters
     * (RESTORE, CF.LOADCHUNK) that may be larger: no bulk or buffer cap
     * beyond the file itself. */
    resp_limits_t lim;
    resp_limits_default(&lim);
    lim.max_bulk_len = sc->size;
    lim.max_query_buf = sc->size + SLICE;
    sc->p = resp_parser_new(&lim);
    if (sc->p == NULL) {
        report(r, "Out of memory reading the append only file %s", path);
        if (sc->map != NULL)
            munmap((void *)sc->map, sc->size);
        return -ENOMEM;
    }
    return 0;
}

static void scan_close(scan_t *sc)
{
    resp_parser_free(sc->p);
    if (sc->map != NULL)
        munmap((void *)sc->map, sc->size);
}

/* The next command: SCAN_CMD with *cmd and its byte range [*start, *end),
 * SCAN_END at a clean end, SCAN_TORN when the file ends inside a command
 * (*start: where it began), SCAN_BAD when the bytes at *start are not a
 * command (r->err says why). */
/* SCAN_BAD, with the damage at offset at named in r->err. */
static int bad(const scan_t *sc, uint64_t at, const char *why,
               aofload_report_t *r)
{
    report(r,
           "Bad file format reading the append only file %s at offset "
           "%" PRIu64 ": %s",
           sc->path, at, why);
    return SCAN_BAD;
}

static uint64_t digits(uint64_t n)
{
    uint64_t d = 1;
    while (n >= 10) {
        n /= 10;
        d++;
    }
    return d;
}

/* The bytes of cmd written as a log writes it: *N, then $len and the bytes
 * of each argument. A command that took more was not in that form (empty
 * frames or lines the parser skips before it, numbers with leading
 * zeros), which Redis's loader refuses too. */
static uint64_t canonical_len(const resp_cmd_t *cmd)
{
    uint64_t n = 1 + digits((uint64_t)cmd->argc) + 2;
    for (int i = 0; i < cmd->argc; i++)
        n += 1 + digits(cmd->argv[i].len) + 2 + cmd->argv[i].len + 2;
    return n;
}

static int scan_next(scan_t *sc, resp_cmd_t **cmd, uint64_t *start,
                     uint64_t *end, aofload_report_t *r)
{
    static const char *not_array = "a command must be a RESP array";
    *start = sc->fed - resp_parser_pending(sc->p);
    for (;;) {
        int rc = resp_parser_next(sc->p, cmd);
        if (rc == 1) {
            *end = sc->fed - resp_parser_pending(sc->p);
            return sc->map[*start] == '*' &&
                           *end - *start == canonical_len(*cmd)
                       ? SCAN_CMD
                       : bad(sc, *start, not_array, r);
        }
        if (rc < 0) {
            const char *why = resp_parser_error(sc->p);
            return bad(sc, *start,
                       rc == -ENOMEM ? "out of memory"
                       : why != NULL ? why
                                     : "not RESP",
                       r);
        }
        if (sc->fed == sc->size)
            break;
        size_t n = sc->size - sc->fed < SLICE ? sc->size - sc->fed : SLICE;
        if (resp_parser_feed(sc->p, (const char *)sc->map + sc->fed, n) < 0)
            return bad(sc, *start, "a request over the parser's limits", r);
        sc->fed += n;
    }
    /* Nothing may have been skipped since the last command, and what
     * follows it must at least begin like a command to be a torn write;
     * anything else is damage. */
    uint64_t at = sc->fed - resp_parser_pending(sc->p);
    if (at == *start && at == sc->size)
        return SCAN_END;
    return at == *start && sc->map[*start] == '*'
               ? SCAN_TORN
               : bad(sc, *start, not_array, r);
}

/* ---- replay ------------------------------------------------------------ */

typedef struct replay {
    server_t *s;
    client_t c;
    bool in_multi;
    uint64_t multi_at; /* offset of the open transaction's MULTI */
} replay_t;

/* Runs one command of the file; false with r->err set when it is refused
 * or answers an error. */
static bool replay_one(replay_t *rp, const resp_cmd_t *cmd, uint64_t at,
                       const char *path, aofload_report_t *r)
{
    server_t *s = rp->s;
    const arg_t *name = &cmd->argv[0];
    int shown = name->len > 64 ? 64 : (int)name->len;
    const cmd_def_t *d = cmd_lookup(s, name->ptr, name->len);
    if (d == NULL) {
        report(r,
               "Unknown command '%.*s' reading the append only file %s at "
               "offset %" PRIu64,
               shown, name->ptr, path, at);
        return false;
    }
    if (!(d->flags & (CMD_WRITE | CMD_AOF_LOGGED))) {
        report(r,
               "Command '%.*s' cannot be replayed from the append only file "
               "%s at offset %" PRIu64 ": not a write",
               shown, name->ptr, path, at);
        return false;
    }
    rp->c.out.len = 0;
    rp->c.out.error_at = RESP_OUT_NO_ERROR;
    bool was_in_multi = multi_active(&rp->c);
    cmd_dispatch(&rp->c, cmd);
    const resp_out_t *o = &rp->c.out;
    if (o->failed || o->error_at == 0) { /* the reply is an error */
        int n = 0;
        while (n + 1 < (int)o->len && n < 200 && o->buf[n + 1] != '\r')
            n++;
        report(r,
               "Error replaying the append only file %s at offset %" PRIu64
               ": '%.*s' answered %.*s",
               path, at, shown, name->ptr, n,
               o->failed ? "out of memory" : o->buf + 1);
        return false;
    }
    rp->in_multi = multi_active(&rp->c);
    if (rp->in_multi && !was_in_multi)
        rp->multi_at = at;
    return true;
}

/* The torn tail (or open transaction) of the last file: dropped and cut
 * off the file when allowed, as Redis does with aof-load-truncated. */
static int torn_tail(const char *path, bool last, bool load_truncated,
                     aofload_report_t *r)
{
    if (!last || !load_truncated) {
        if (r->err[0] == '\0')
            report(r,
                   "Unexpected end of file reading the append only file %s "
                   "at offset %" PRIu64 "%s",
                   path, r->good_bytes,
                   last ? ": set aof-load-truncated yes, or fix the file with "
                          "cuckood --check-aof --fix"
                        : ": only the last file may be truncated");
        return -EINVAL;
    }
    log_warning("!!! Warning: short read while loading the AOF file %s!!!",
                path);
    log_warning("!!! Truncating the AOF %s at offset %" PRIu64 " !!!", path,
                r->good_bytes);
    if (truncate(path, (off_t)r->good_bytes) < 0) {
        int rc = -errno;
        report(r, "Error truncating the AOF file %s: %s", path,
               strerror(errno));
        return rc;
    }
    log_warning("AOF %s loaded anyway because aof-load-truncated is enabled",
                path);
    r->truncated = true;
    r->err[0] = '\0';
    return 0;
}

int aofload_file(server_t *s, const char *path, bool last, bool load_truncated,
                 aofload_report_t *r)
{
    memset(r, 0, sizeof(*r));
    scan_t sc;
    int rc = scan_open(&sc, path, r);
    if (rc < 0)
        return rc;
    replay_t rp = {.s = s};
    rp.c.srv = s;
    rp.c.db = s->dbs[0];
    rp.c.resp = 2;
    rp.c.authenticated = true;
    rp.c.id = UINT64_MAX;
    resp_out_init(&rp.c.out, 2);
    /* Nothing replayed is fed again, and the data is taken as it was
     * (server_int.h's loading). */
    void (*feed)(server_t *, int, int, const arg_t *) = s->on_propagate;
    bool was_loading = s->loading;
    s->on_propagate = NULL;
    s->loading = true;

    resp_cmd_t *cmd;
    uint64_t start, end;
    int st;
    rc = 0;
    while ((st = scan_next(&sc, &cmd, &start, &end, r)) == SCAN_CMD) {
        if (!replay_one(&rp, cmd, start, path, r)) {
            rc = -EINVAL;
            break;
        }
        r->commands++;
        if (!rp.in_multi)
            r->good_bytes = end;
        if (!loadprog_step(s, end)) {
            snprintf(r->err, sizeof(r->err), "the server is shutting down");
            rc = -ECANCELED;
            break;
        }
    }
    if (rc == 0 && st == SCAN_BAD)
        rc = -EINVAL;
    if (rc == 0 && (st == SCAN_TORN || rp.in_multi)) {
        if (st != SCAN_TORN)
            log_warning("Revert incomplete MULTI/EXEC transaction in AOF "
                        "file %s",
                        path);
        rc = torn_tail(path, last, load_truncated, r);
    }
    /* An open transaction's queue is dropped, never run. */
    multi_client_free(&rp.c);
    resp_out_release(&rp.c.out);
    s->on_propagate = feed;
    s->loading = was_loading;
    scan_close(&sc);
    return rc;
}

/* ---- check ------------------------------------------------------------- */

int aofload_check(const char *path, bool fix, aofload_report_t *r)
{
    memset(r, 0, sizeof(*r));
    scan_t sc;
    int rc = scan_open(&sc, path, r);
    if (rc < 0)
        return rc;
    resp_cmd_t *cmd;
    uint64_t start, end, multi_at = 0;
    bool in_multi = false;
    int st;
    while ((st = scan_next(&sc, &cmd, &start, &end, r)) == SCAN_CMD) {
        const arg_t *name = &cmd->argv[0];
        if (arg_is(name, "multi")) {
            if (in_multi) {
                report(r,
                       "Unexpected MULTI in the append only file %s at "
                       "offset %" PRIu64,
                       path, start);
                st = SCAN_BAD;
                break;
            }
            in_multi = true;
            multi_at = start;
        } else if (arg_is(name, "exec")) {
            if (!in_multi) {
                report(r,
                       "Unexpected EXEC in the append only file %s at "
                       "offset %" PRIu64,
                       path, start);
                st = SCAN_BAD;
                break;
            }
            in_multi = false;
        }
        r->commands++;
        if (!in_multi)
            r->good_bytes = end;
    }
    scan_close(&sc);
    if (st == SCAN_END && !in_multi)
        return 0;
    if (st == SCAN_TORN || (st == SCAN_END && in_multi)) {
        r->truncated = true;
        report(r, "%s in the append only file %s at offset %" PRIu64,
               st == SCAN_TORN ? "Torn command" : "MULTI without EXEC", path,
               st == SCAN_TORN ? start : multi_at);
    }
    if (fix && truncate(path, (off_t)r->good_bytes) < 0) {
        rc = -errno;
        report(r, "Error truncating the AOF file %s: %s", path,
               strerror(errno));
        return rc;
    }
    return -EINVAL;
}

int aofload_check_main(const char *path, bool fix)
{
    aofload_report_t r;
    int rc = aofload_check(path, fix, &r);
    if (rc != 0 && rc != -EINVAL) {
        printf("%s, aborting...\n", r.err);
        return 1;
    }
    if (rc == -EINVAL)
        printf("%s\n", r.err);
    printf("AOF analyzed: filename=%s, size=%" PRIu64 ", ok_up_to=%" PRIu64
           ", diff=%" PRIu64 "\n",
           path, r.file_bytes, r.good_bytes, r.file_bytes - r.good_bytes);
    if (rc == 0) {
        printf("RESP AOF %s is valid\n", path);
        return 0;
    }
    if (!fix) {
        printf("AOF %s is not valid. Use the --fix option to try fixing it.\n",
               path);
        return 1;
    }
    printf("Successfully truncated AOF %s\n", path);
    return 0;
}
