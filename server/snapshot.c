/*
 * snapshot.c - the snapshot file format, its atomic writer and its
 * validating loader.
 *
 * File format, version 2. Every integer is little-endian.
 *
 *   head     8 bytes  magic "CUCKOOD\0"
 *            u32      format version (2; 1 still loads)
 *            u32      flags (0; any other value is refused)
 *   records  any number of, each starting with a u8 type:
 *            0x01 DB   u32 db number (< 10000, strictly ascending; a DB
 *                      record is followed by at least one KEY record)
 *            0x02 KEY  u32 name length, name bytes (binary),
 *                      u32 filter header length, header (cf_header_write),
 *                      u64 filter data length, data (cf_data_view)
 *            0x03 EXPIRE  u64 the absolute expiry time (unix milliseconds,
 *                      below 2^63) of the key of the KEY record that must
 *                      follow; a key without one has none (version 2 on)
 *            0xFF END  u64 number of KEY records in the file
 *   trailer  u64      XXH3-64 (seed 0) of every byte before the trailer
 *
 * Version 1 is version 2 without EXPIRE records; as Redis's RDB stores
 * an expiry as an opcode before its key, a file of keys without timeouts
 * differs from version 1 by its version number only.
 *
 * Only databases that hold keys have a DB record, so an empty keyspace is
 * head + END + trailer (33 bytes). Keys carry no count up front because the
 * writer streams the keyspace in one pass (as Redis's RDB does); the END
 * record's total and the checksum catch a short or padded file instead.
 *
 * Loading maps the file read-only and checks it in three passes before and
 * while handing filters over: (1) magic, version and the checksum of the
 * whole file; (2) a walk over every record checking each length against the
 * bytes that remain, the database order and the END total, without
 * allocating; (3) the same walk again, building each filter with
 * cf_load_header + cf_load_data and passing it to on_key. A file with a
 * valid checksum is thus only refused in pass 3 when a filter's own encoding
 * is bad or exceeds the limits; by then on_key may have received filters, and
 * the caller must discard everything it got from a load that failed.
 * Duplicate names within a database are not detected here: on_key sees them
 * and should refuse them (ks_add returns -EEXIST), which stops the load.
 *
 * The mapping is safe against SIGBUS because snapshots are only ever
 * replaced by rename(2), never truncated in place.
 *
 * Saving writes "<path>.tmp-<pid>-<n>" beside path through a 1 MiB buffer
 * (large filter tables go to write(2) straight from the filter), hashes as
 * it goes, fsyncs, renames over path and fsyncs the directory. It uses no
 * stdio, no mutexes and no libuv, so a forked child may call it. The writer
 * holds an flock(2) on its temporary file while it writes, so that another
 * instance sharing the directory can tell a live temporary file from one a
 * crash left, whatever pid namespace each runs in.
 */
#include "snapshot.h"
#include "snapshot_int.h"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "le.h"
#include "util.h"
#include <sys/file.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#include <xxhash.h>

#define SNAP_OP_DB 0x01
#define SNAP_OP_KEY 0x02
#define SNAP_OP_EXPIRE 0x03
#define SNAP_OP_END 0xFF

#define SNAP_BUF_SIZE (1u << 20)
/* Pieces at least this large bypass the buffer. */
#define SNAP_DIRECT_MIN (SNAP_BUF_SIZE / 2)
/* Largest single write(2); Linux caps one call just below 2 GiB anyway. */
#define SNAP_WRITE_MAX ((size_t)1 << 30)

#define SNAP_TMP_INFIX ".tmp-"

/* The checksum stored in the trailer of an image of len bytes (computed over
 * its first len - SNAP_TRAILER_LEN bytes). len must be >= SNAP_TRAILER_LEN. */
static uint64_t snap_checksum(const void *buf, size_t len)
{
    return XXH3_64bits(buf, len - SNAP_TRAILER_LEN);
}

/* ------------------------------------------------------------------------ */
/* Writer                                                                   */

typedef struct snap_writer {
    int fd;
    uint8_t *buf;
    size_t used;
    XXH3_state_t *xs;
    int err;         /* sticky: first negative errno */
    const char *why; /* what failed, for the message */
    int db;          /* database of the last DB record, -1 before any */
    uint64_t nkeys;
} snap_writer_t;

static int w_fail(snap_writer_t *w, int rc, const char *why)
{
    if (w->err == 0) {
        w->err = rc;
        w->why = why;
    }
    return w->err;
}

static int write_all(int fd, const uint8_t *p, size_t n)
{
    while (n > 0) {
        ssize_t r = write(fd, p, n < SNAP_WRITE_MAX ? n : SNAP_WRITE_MAX);
        if (r < 0) {
            if (errno == EINTR)
                continue;
            return -errno;
        }
        if (r == 0)
            return -EIO;
        p += r;
        n -= (size_t)r;
    }
    return 0;
}

static int w_flush(snap_writer_t *w)
{
    int rc;

    if (w->err != 0 || w->used == 0)
        return w->err;
    XXH3_64bits_update(w->xs, w->buf, w->used);
    rc = write_all(w->fd, w->buf, w->used);
    w->used = 0;
    if (rc < 0)
        return w_fail(w, rc, "Write error saving DB on disk");
    return 0;
}

static int w_put(snap_writer_t *w, const void *p, size_t n)
{
    int rc;

    if (w->err != 0)
        return w->err;
    if (n >= SNAP_DIRECT_MIN) {
        if (w_flush(w) < 0)
            return w->err;
        XXH3_64bits_update(w->xs, p, n);
        rc = write_all(w->fd, p, n);
        if (rc < 0)
            return w_fail(w, rc, "Write error saving DB on disk");
        return 0;
    }
    if (w->used + n > SNAP_BUF_SIZE && w_flush(w) < 0)
        return w->err;
    memcpy(w->buf + w->used, p, n);
    w->used += n;
    return 0;
}

static int w_filter(snap_writer_t *w, const cf_filter_t *f)
{
    size_t hlen = cf_header_len(f);
    uint64_t dlen = cf_data_len(f), off = 0;
    uint8_t num[8];

    if (hlen == 0 || hlen > UINT32_MAX)
        return w_fail(w, -EINVAL, "Filter header of unsupported size");
    le_store32(num, (uint32_t)hlen);
    if (w_put(w, num, 4) < 0)
        return w->err;
    if (hlen < SNAP_DIRECT_MIN) {
        /* The header goes straight into the buffer: no copy of it. */
        if (w->used + hlen > SNAP_BUF_SIZE && w_flush(w) < 0)
            return w->err;
        cf_header_write(f, w->buf + w->used);
        w->used += hlen;
    } else {
        uint8_t *tmp = malloc(hlen);
        if (tmp == NULL)
            return w_fail(w, -ENOMEM, "Out of memory saving DB");
        cf_header_write(f, tmp);
        w_put(w, tmp, hlen);
        free(tmp);
    }
    le_store64(num, dlen);
    w_put(w, num, 8);
    while (w->err == 0 && off < dlen) {
        const void *p;
        size_t n = cf_data_view(f, off, SNAP_WRITE_MAX, &p);
        if (n == 0)
            return w_fail(w, -EINVAL, "Filter data shorter than announced");
        w_put(w, p, n);
        off += n;
    }
    return w->err;
}

static int w_each(void *ctx, int db, const void *key, size_t len,
                  const cf_filter_t *f, int64_t when)
{
    snap_writer_t *w = ctx;
    uint8_t rec[9];

    if (w->err != 0)
        return w->err;
    if (db < 0 || (unsigned)db >= SNAP_MAX_DB || db < w->db)
        return w_fail(w, -EINVAL, "Bad database number from the keyspace");
    if (f == NULL || (key == NULL && len > 0) || len > UINT32_MAX)
        return w_fail(w, -EINVAL, "Bad key from the keyspace");
    if (db != w->db) {
        rec[0] = SNAP_OP_DB;
        le_store32(rec + 1, (uint32_t)db);
        w_put(w, rec, 5);
        w->db = db;
    }
    if (when >= 0) {
        rec[0] = SNAP_OP_EXPIRE;
        le_store64(rec + 1, (uint64_t)when);
        w_put(w, rec, 9);
    }
    rec[0] = SNAP_OP_KEY;
    le_store32(rec + 1, (uint32_t)len);
    w_put(w, rec, 5);
    if (len > 0)
        w_put(w, key, len);
    w_filter(w, f);
    w->nkeys++;
    return w->err;
}

/* Directory part of path ("." when it has none), malloc'd. */
static char *dir_of(const char *path)
{
    const char *slash = strrchr(path, '/');
    size_t n;
    char *d;

    if (slash == NULL)
        return strdup(".");
    n = slash == path ? 1 : (size_t)(slash - path);
    d = malloc(n + 1);
    if (d != NULL) {
        memcpy(d, path, n);
        d[n] = '\0';
    }
    return d;
}

int snap_fsync_dir(const char *path)
{
    char *dir = dir_of(path);
    int fd, rc = 0;

    if (dir == NULL)
        return -ENOMEM;
    fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    free(dir);
    if (fd < 0)
        return -errno;
    /* Some file systems cannot sync a directory; that is not a failure. */
    if (fsync(fd) < 0 && errno != EINVAL && errno != ENOTSUP)
        rc = -errno;
    close(fd);
    return rc;
}

static unsigned snap_tmp_counter;

int snap_save(const char *path, snap_iter_fn *iter, void *src, char *err,
              size_t errlen)
{
    snap_writer_t w = {.fd = -1, .db = -1};
    uint8_t head[SNAP_HEAD_LEN], tail[9];
    size_t tlen = strlen(path) + sizeof(SNAP_TMP_INFIX) + 48;
    char *tmp = malloc(tlen);
    int rc;

    if (tmp == NULL) {
        set_err(err, errlen, "Out of memory saving DB");
        return -ENOMEM;
    }
    snprintf(tmp, tlen, "%s" SNAP_TMP_INFIX "%ld-%u", path, (long)getpid(),
             __atomic_fetch_add(&snap_tmp_counter, 1, __ATOMIC_RELAXED));
    w.fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
    if (w.fd < 0) {
        rc = -errno;
        set_err(err, errlen, "Failed opening the temp file for saving: %s",
                strerror(-rc));
        free(tmp);
        return rc;
    }
    /* Tells snap_remove_stale() elsewhere that this file is being written.
     * A file system without flock() only leaves the pid in the name. */
    (void)flock(w.fd, LOCK_EX | LOCK_NB);
    w.buf = malloc(SNAP_BUF_SIZE);
    w.xs = XXH3_createState();
    if (w.buf == NULL || w.xs == NULL) {
        w_fail(&w, -ENOMEM, "Out of memory saving DB");
    } else {
        XXH3_64bits_reset(w.xs);
        memcpy(head, SNAP_MAGIC, 8);
        le_store32(head + 8, SNAP_VERSION);
        le_store32(head + 12, 0);
        w_put(&w, head, sizeof(head));
    }
    rc = w.err == 0 ? iter(src, w_each, &w) : w.err;
    if (rc != 0 && w.err == 0) {
        /* The iterator stopped for a reason of its own. */
        w_fail(&w, rc < 0 ? rc : -EIO, "Saving stopped by the keyspace");
    }
    if (w.err == 0) {
        tail[0] = SNAP_OP_END;
        le_store64(tail + 1, w.nkeys);
        w_put(&w, tail, 9);
        w_flush(&w);
    }
    if (w.err == 0) {
        le_store64(tail, XXH3_64bits_digest(w.xs));
        rc = write_all(w.fd, tail, SNAP_TRAILER_LEN);
        if (rc < 0)
            w_fail(&w, rc, "Write error saving DB on disk");
    }
    if (w.err == 0 && fsync(w.fd) < 0)
        w_fail(&w, -errno, "Write error saving DB on disk (fsync)");
    if (close(w.fd) < 0 && errno != EINTR)
        w_fail(&w, -errno, "Write error saving DB on disk (close)");
    free(w.buf);
    XXH3_freeState(w.xs);
    if (w.err == 0 && rename(tmp, path) < 0) {
        rc = -errno;
        set_err(err, errlen,
                "Error moving temp DB file %s on the final destination %s: %s",
                tmp, path, strerror(-rc));
        unlink(tmp);
        free(tmp);
        return rc;
    }
    if (w.err != 0) {
        set_err(err, errlen, "%s: %s", w.why, strerror(-w.err));
        unlink(tmp);
        free(tmp);
        return w.err;
    }
    free(tmp);
    /* The new file is in place; without this its name may not survive a
     * power loss, so the save is reported as failed. */
    rc = snap_fsync_dir(path);
    if (rc < 0)
        set_err(err, errlen, "Failed to fsync the directory of %s: %s", path,
                strerror(-rc));
    return rc;
}

/* ------------------------------------------------------------------------ */
/* Loader                                                                   */

typedef struct snap_reader {
    const uint8_t *base;
    const uint8_t *p;
    const uint8_t *end; /* start of the trailer */
    const char *name;
    char *err;
    size_t errlen;
    uint32_t version;
} snap_reader_t;

static size_t r_left(const snap_reader_t *r)
{
    return (size_t)(r->end - r->p);
}

static size_t r_off(const snap_reader_t *r)
{
    return (size_t)(r->p - r->base);
}

static int r_corrupt(snap_reader_t *r, const char *what)
{
    set_err(r->err, r->errlen, "%s: %s at offset %zu (file corrupt)", r->name,
            what, r_off(r));
    return -EINVAL;
}

/* Reads n bytes of the field called what; NULL (and the message) when
 * fewer remain before the trailer. */
static const uint8_t *r_take(snap_reader_t *r, uint64_t n, const char *what,
                             int *rc)
{
    const uint8_t *p = r->p;
    char msg[96];

    if (n > r_left(r)) {
        snprintf(msg, sizeof(msg), "%s runs past the end of the file", what);
        *rc = r_corrupt(r, msg);
        return NULL;
    }
    r->p += n;
    return p;
}

/* A printable prefix of a binary key name for messages. */
static void key_label(char *out, size_t outlen, const uint8_t *key, size_t len)
{
    size_t i, n = 0, max = 32;

    for (i = 0; i < len && i < max && n + 1 < outlen; i++)
        out[n++] = isprint(key[i]) ? (char)key[i] : '?';
    if (i < len && n + 3 < outlen) {
        memcpy(out + n, "...", 3);
        n += 3;
    }
    out[n] = '\0';
}

static int load_filter(snap_reader_t *r, int db, const uint8_t *key,
                       size_t klen, const uint8_t *hdr, size_t hlen,
                       const uint8_t *data, uint64_t dlen,
                       const cf_limits_t *lim, cf_filter_t **out)
{
    cf_filter_t *f = NULL;
    size_t used = 0;
    char label[40];
    int rc;

    /* The caller's limit bounds what the header may ask for (growth later
     * is capped per command by the room the host passes). A header cannot
     * make the core allocate more than that limit (or the core's absolute
     * cap when there is none);
     * the tables are calloc'd and so untouched until cf_load_data, and a
     * header whose size disagrees with the data length is freed below
     * before any data is copied, so resident memory stays within what the
     * file holds. */
    rc = cf_load_header(hdr, hlen, lim, &f, &used);
    key_label(label, sizeof(label), key, klen);
    if (rc == -ENOMEM) {
        set_err(r->err, r->errlen,
                "%s: filter '%s' in db %d needs more memory than allowed",
                r->name, label, db);
        return -ENOMEM;
    }
    if (rc < 0 || used != hlen || cf_data_len(f) != dlen) {
        cf_free(f);
        set_err(r->err, r->errlen,
                "%s: filter '%s' in db %d has a bad encoding (file corrupt)",
                r->name, label, db);
        return -EINVAL;
    }
    if (dlen > 0 && cf_load_data(f, 0, data, (size_t)dlen) < 0) {
        cf_free(f);
        set_err(r->err, r->errlen,
                "%s: filter '%s' in db %d has bad data (file corrupt)", r->name,
                label, db);
        return -EINVAL;
    }
    *out = f;
    return 0;
}

/* Walks every record after the head. With load false it only validates the
 * structure; with load true it also builds and hands over the filters. */
static int walk(snap_reader_t *r, bool load, const cf_limits_t *lim,
                snap_key_fn *on_key, void *ctx)
{
    int64_t db = -1;
    int64_t when = -1; /* of the next KEY record */
    bool db_empty = false;
    uint64_t nkeys = 0;
    int rc = 0;

    for (;;) {
        const uint8_t *p;
        uint8_t op;

        if ((p = r_take(r, 1, "record type", &rc)) == NULL)
            return rc;
        op = *p;
        if (when >= 0 && op != SNAP_OP_KEY)
            return r_corrupt(r, "expiry time not followed by its key");
        if (op == SNAP_OP_EXPIRE && r->version >= 2) {
            if (db < 0)
                return r_corrupt(r, "expiry time outside a database section");
            if ((p = r_take(r, 8, "expiry time", &rc)) == NULL)
                return rc;
            if (le_load64(p) > INT64_MAX)
                return r_corrupt(r, "expiry time out of range");
            when = (int64_t)le_load64(p);
        } else if (op == SNAP_OP_DB) {
            uint32_t n;
            if ((p = r_take(r, 4, "database number", &rc)) == NULL)
                return rc;
            n = le_load32(p);
            if (db_empty)
                return r_corrupt(r, "database section without keys");
            if (n >= SNAP_MAX_DB)
                return r_corrupt(r, "database number out of range");
            if ((int64_t)n <= db)
                return r_corrupt(r, "databases out of order");
            db = n;
            db_empty = true;
        } else if (op == SNAP_OP_KEY) {
            const uint8_t *key, *hdr, *data;
            uint32_t klen, hlen;
            uint64_t dlen;
            if (db < 0)
                return r_corrupt(r, "key outside a database section");
            if ((p = r_take(r, 4, "key name length", &rc)) == NULL)
                return rc;
            klen = le_load32(p);
            if ((key = r_take(r, klen, "key name", &rc)) == NULL)
                return rc;
            if ((p = r_take(r, 4, "filter header length", &rc)) == NULL)
                return rc;
            hlen = le_load32(p);
            if (hlen == 0)
                return r_corrupt(r, "empty filter header");
            if ((hdr = r_take(r, hlen, "filter header", &rc)) == NULL)
                return rc;
            if ((p = r_take(r, 8, "filter data length", &rc)) == NULL)
                return rc;
            dlen = le_load64(p);
            if ((data = r_take(r, dlen, "filter data", &rc)) == NULL)
                return rc;
            db_empty = false;
            nkeys++;
            int64_t key_when = when;
            when = -1;
            if (load) {
                cf_filter_t *f;
                rc = load_filter(r, (int)db, key, klen, hdr, hlen, data, dlen,
                                 lim, &f);
                if (rc < 0)
                    return rc;
                rc = on_key(ctx, (int)db, key, klen, f, key_when);
                if (rc != 0) {
                    set_err(r->err, r->errlen,
                            "%s: loading stopped in db %d: %s", r->name,
                            (int)db, strerror(rc < 0 ? -rc : rc));
                    return rc;
                }
            }
        } else if (op == SNAP_OP_END) {
            if (db_empty)
                return r_corrupt(r, "database section without keys");
            if ((p = r_take(r, 8, "key total", &rc)) == NULL)
                return rc;
            if (le_load64(p) != nkeys)
                return r_corrupt(r, "key total does not match the keys");
            if (r->p != r->end)
                return r_corrupt(r, "data after the end marker");
            return 0;
        } else {
            r->p--;
            return r_corrupt(r, "unknown record type");
        }
    }
}

int snap_parse(const void *buf, size_t len, const char *name, bool verify,
               const cf_limits_t *lim, snap_key_fn *on_key, void *ctx,
               char *err, size_t errlen)
{
    const uint8_t *b = buf;
    snap_reader_t r = {.base = b, .name = name, .err = err, .errlen = errlen};
    uint32_t version, flags;
    int rc;

    if (len == 0) {
        set_err(err, errlen, "%s: empty file (0 bytes; file corrupt)", name);
        return -EINVAL;
    }
    if (memcmp(b, SNAP_MAGIC, len < 8 ? len : 8) != 0) {
        set_err(err, errlen, "%s: not a cuckood snapshot (bad magic)", name);
        return -EINVAL;
    }
    if (len < SNAP_HEAD_LEN + 9 + SNAP_TRAILER_LEN) {
        set_err(err, errlen, "%s: truncated file (%zu bytes; file corrupt)",
                name, len);
        return -EINVAL;
    }
    version = le_load32(b + 8);
    flags = le_load32(b + 12);
    if (version < SNAP_VERSION_MIN || version > SNAP_VERSION) {
        set_err(err, errlen,
                "%s: unsupported snapshot format version %u (this build "
                "reads versions %u to %u)",
                name, version, SNAP_VERSION_MIN, SNAP_VERSION);
        return -EINVAL;
    }
    if (verify &&
        snap_checksum(b, len) != le_load64(b + len - SNAP_TRAILER_LEN)) {
        set_err(err, errlen,
                "%s: checksum mismatch (file corrupt or truncated)", name);
        return -EINVAL;
    }
    if (flags != 0) {
        set_err(err, errlen, "%s: unsupported snapshot flags 0x%x", name,
                flags);
        return -EINVAL;
    }
    r.version = version;
    r.end = b + len - SNAP_TRAILER_LEN;
    r.p = b + SNAP_HEAD_LEN;
    rc = walk(&r, false, lim, on_key, ctx);
    if (rc != 0)
        return rc;
    r.p = b + SNAP_HEAD_LEN;
    return walk(&r, true, lim, on_key, ctx);
}

int snap_load(const char *path, const cf_limits_t *lim, snap_key_fn *on_key,
              void *ctx, char *err, size_t errlen)
{
    struct stat st;
    void *map = NULL;
    int fd, rc;

    fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
        rc = -errno;
        set_err(err, errlen, "%s: %s", path, strerror(-rc));
        return rc;
    }
    if (fstat(fd, &st) < 0) {
        rc = -errno;
        set_err(err, errlen, "%s: %s", path, strerror(-rc));
        close(fd);
        return rc;
    }
    if (!S_ISREG(st.st_mode)) {
        set_err(err, errlen, "%s: not a regular file", path);
        close(fd);
        return -EINVAL;
    }
    if ((uint64_t)st.st_size > SIZE_MAX) {
        set_err(err, errlen, "%s: too large to map", path);
        close(fd);
        return -EFBIG;
    }
    if (st.st_size > 0) {
        /* No MAP_POPULATE: the pages are read in as the parse walks the
         * file (sequential advice below), instead of all of the file being
         * made resident next to the filters built from it. */
        map = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
        if (map == MAP_FAILED) {
            rc = -errno;
            set_err(err, errlen, "%s: cannot map the file: %s", path,
                    strerror(-rc));
            close(fd);
            return rc;
        }
        madvise(map, (size_t)st.st_size, MADV_SEQUENTIAL);
    }
    close(fd);
    rc = snap_parse(map, (size_t)st.st_size, path, true, lim, on_key, ctx, err,
                    errlen);
    if (map != NULL)
        munmap(map, (size_t)st.st_size);
    return rc;
}

/* ------------------------------------------------------------------------ */
/* Stale temporary files                                                    */

/* Whether name is base + ".tmp-" + digits + "-" + digits; *pid is the
 * first number (LLONG_MAX when it overflows). */
static bool is_tmp_of(const char *name, const char *base, long long *pid)
{
    size_t bl = strlen(base), il = strlen(SNAP_TMP_INFIX);
    const char *s;
    int groups = 0;

    if (strncmp(name, base, bl) != 0 ||
        strncmp(name + bl, SNAP_TMP_INFIX, il) != 0)
        return false;
    s = name + bl + il;
    *pid = 0;
    for (;;) {
        const char *d = s;
        while (*s >= '0' && *s <= '9') {
            if (groups == 0)
                *pid = *pid > (LLONG_MAX - 9) / 10 ? LLONG_MAX
                                                   : *pid * 10 + (*s - '0');
            s++;
        }
        if (s == d)
            return false;
        groups++;
        if (*s == '\0')
            return groups == 2;
        if (*s != '-' || groups == 2)
            return false;
        s++;
    }
}

/* Whether pid has exited and waits to be reaped (a killed save's child
 * whose new parent does not reap it): it writes nothing any more. */
static bool is_zombie(pid_t pid)
{
    char path[64], buf[512];
    snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return false;
    ssize_t n = read(fd, buf, sizeof(buf) - 1);
    close(fd);
    if (n <= 0)
        return false;
    buf[n] = '\0';
    /* "pid (comm) state ...": comm may hold spaces and parentheses. */
    const char *r = strrchr(buf, ')');
    return r != NULL && r[1] == ' ' && (r[2] == 'Z' || r[2] == 'X');
}

/* Whether the temporary file name (of a writer with that pid) may be in
 * use: its writer holds the file's lock, or the pid is a live process other
 * than this one. A file named by this process's pid and not locked is left
 * over (by a former instance that had the same pid, as pid 1 in a
 * container, or by a save of ours that was killed). */
static bool tmp_in_use(int dfd, const char *name, long long pid)
{
    int fd = openat(dfd, name, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);
    if (fd >= 0) {
        bool locked = flock(fd, LOCK_EX | LOCK_NB) < 0 && errno == EWOULDBLOCK;
        close(fd);
        if (locked)
            return true;
    }
    if (pid <= 0 || pid > INT_MAX || pid == (long long)getpid())
        return false;
    if (kill((pid_t)pid, 0) < 0 && errno != EPERM)
        return false;
    return !is_zombie((pid_t)pid);
}

int snap_remove_stale(const char *path)
{
    const char *slash = strrchr(path, '/');
    const char *base = slash != NULL ? slash + 1 : path;
    char *dir = dir_of(path);
    struct dirent *de;
    long long pid;
    DIR *d;
    int n = 0;

    if (dir == NULL)
        return 0;
    d = opendir(dir);
    free(dir);
    if (d == NULL)
        return 0;
    while ((de = readdir(d)) != NULL) {
        if (is_tmp_of(de->d_name, base, &pid) &&
            !tmp_in_use(dirfd(d), de->d_name, pid) &&
            unlinkat(dirfd(d), de->d_name, 0) == 0)
            n++;
    }
    closedir(d);
    return n;
}
