/*
 * test_snapshot.c - the snapshot format: round trips, corrupt files of every
 * kind, failed saves that must leave the old file alone, stale temp files.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>
#include <xxhash.h>

#include "cf.h"
#include "cf_serial.h"
#include "snapshot.h"
#include "snapshot_int.h"

/* ------------------------------------------------------------------------ */
/* A keyspace for the writer and a collector for the loader.               */

typedef struct entry {
    int db;
    char key[64];
    size_t len;
    cf_filter_t *f;
    int64_t when; /* expiry time, -1 for none */
} entry_t;

typedef struct keyset {
    entry_t e[64];
    size_t n;
    int stop_at; /* iterator: fail with stop_rc at this index, -1 = never */
    int stop_rc;
} keyset_t;

static int ks_iter(void *src, snap_each_fn *each, void *ctx)
{
    keyset_t *ks = src;

    for (size_t i = 0; i < ks->n; i++) {
        int rc;
        if ((int)i == ks->stop_at)
            return ks->stop_rc;
        rc = each(ctx, ks->e[i].db, ks->e[i].key, ks->e[i].len, ks->e[i].f,
                  ks->e[i].when);
        if (rc != 0)
            return rc;
    }
    return 0;
}

static void ks_clear(keyset_t *ks)
{
    for (size_t i = 0; i < ks->n; i++)
        cf_free(ks->e[i].f);
    ks->n = 0;
}

static int collect(void *ctx, int db, const void *key, size_t len,
                   cf_filter_t *f, int64_t when)
{
    keyset_t *ks = ctx;
    entry_t *e;

    if (ks->stop_at >= 0 && (int)ks->n == ks->stop_at) {
        cf_free(f);
        return ks->stop_rc;
    }
    if (ks->n == sizeof(ks->e) / sizeof(ks->e[0]) || len > sizeof(e->key)) {
        cf_free(f);
        return -E2BIG;
    }
    e = &ks->e[ks->n++];
    e->db = db;
    memcpy(e->key, key, len);
    e->len = len;
    e->f = f;
    e->when = when;
    return 0;
}

static void add_entry(keyset_t *ks, int db, const void *key, size_t len,
                      cf_filter_t *f)
{
    assert_true(ks->n < sizeof(ks->e) / sizeof(ks->e[0]));
    assert_true(len <= sizeof(ks->e[0].key));
    ks->e[ks->n].db = db;
    memcpy(ks->e[ks->n].key, key, len);
    ks->e[ks->n].len = len;
    ks->e[ks->n].f = f;
    ks->e[ks->n].when = -1;
    ks->n++;
}

static void item(char *buf, size_t cap, size_t *len, const char *tag,
                 unsigned i)
{
    int n = snprintf(buf, cap, "%s:%u", tag, i);
    *len = (size_t)n;
}

static cf_filter_t *make_filter(uint64_t cap, uint32_t b, uint32_t fp,
                                uint32_t expansion, uint64_t seed,
                                unsigned nitems, const char *tag)
{
    cf_params_t p;
    cf_filter_t *f = NULL;
    char buf[64];
    size_t len;

    cf_params_default(&p);
    p.capacity = cap;
    p.bucket_size = b;
    p.fp_bits = fp;
    p.expansion = expansion;
    p.seed = seed;
    assert_int_equal(cf_create(&p, &f), 0);
    for (unsigned i = 0; i < nitems; i++) {
        item(buf, sizeof(buf), &len, tag, i);
        int rc = cf_add(f, buf, len);
        assert_true(rc == 0 || (expansion == 0 && rc == -ENOSPC));
    }
    /* A few deletions so the deleted counter is not zero. */
    for (unsigned i = 0; i < nitems / 10; i++) {
        item(buf, sizeof(buf), &len, tag, i);
        cf_del(f, buf, len);
    }
    return f;
}

static void assert_same_filter(const cf_filter_t *a, const cf_filter_t *b)
{
    cf_stats_t sa, sb;
    char buf[64];
    size_t len;

    cf_stats(a, &sa);
    cf_stats(b, &sb);
    assert_int_equal(sa.size_bytes, sb.size_bytes);
    assert_int_equal(sa.nbuckets, sb.nbuckets);
    assert_int_equal(sa.nfilters, sb.nfilters);
    assert_int_equal(sa.items, sb.items);
    assert_int_equal(sa.deleted, sb.deleted);
    assert_int_equal(sa.capacity, sb.capacity);
    assert_int_equal(sa.bucket_size, sb.bucket_size);
    assert_int_equal(sa.fp_bits, sb.fp_bits);
    assert_int_equal(sa.expansion, sb.expansion);
    assert_int_equal(sa.max_kicks, sb.max_kicks);
    assert_int_equal(sa.max_filters, sb.max_filters);
    assert_int_equal(sa.seed, sb.seed);

    /* The encodings are byte-identical. */
    assert_same_bytes(a, b);

    /* And so are the answers, for members and non-members alike. */
    for (unsigned i = 0; i < 3000; i++) {
        item(buf, sizeof(buf), &len, i % 2 ? "probe" : "t", i);
        assert_int_equal(cf_exists(a, buf, len), cf_exists(b, buf, len));
        assert_int_equal(cf_count(a, buf, len), cf_count(b, buf, len));
    }
}

/* ------------------------------------------------------------------------ */
/* Files                                                                    */

typedef struct fixture {
    char dir[256];
    char path[300];
    keyset_t src, got;
} fixture_t;

static int setup(void **state)
{
    fixture_t *fx = calloc(1, sizeof(*fx));
    const char *t = getenv("TMPDIR");

    if (fx == NULL)
        return -1;
    snprintf(fx->dir, sizeof(fx->dir), "%s/snaptest-XXXXXX",
             t != NULL && *t != '\0' ? t : "/tmp");
    if (mkdtemp(fx->dir) == NULL)
        return -1;
    snprintf(fx->path, sizeof(fx->path), "%s/dump.cuckoo", fx->dir);
    fx->src.stop_at = -1;
    fx->got.stop_at = -1;
    *state = fx;
    return 0;
}

static void rm_rf(const char *dir)
{
    DIR *d = opendir(dir);
    struct dirent *de;
    char p[600];

    if (d == NULL)
        return;
    while ((de = readdir(d)) != NULL) {
        struct stat st;
        if (strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0)
            continue;
        snprintf(p, sizeof(p), "%s/%s", dir, de->d_name);
        if (lstat(p, &st) == 0 && S_ISDIR(st.st_mode)) {
            chmod(p, 0755);
            rm_rf(p);
        } else {
            unlink(p);
        }
    }
    closedir(d);
    rmdir(dir);
}

static int teardown(void **state)
{
    fixture_t *fx = *state;

    ks_clear(&fx->src);
    ks_clear(&fx->got);
    chmod(fx->dir, 0755);
    rm_rf(fx->dir);
    free(fx);
    return 0;
}

static uint8_t *read_all(const char *path, size_t *len)
{
    struct stat st;
    uint8_t *b;
    int fd = open(path, O_RDONLY);

    assert_true(fd >= 0);
    assert_int_equal(fstat(fd, &st), 0);
    b = malloc((size_t)st.st_size + 1);
    assert_non_null(b);
    assert_int_equal(read(fd, b, (size_t)st.st_size), st.st_size);
    close(fd);
    *len = (size_t)st.st_size;
    return b;
}

static void write_all_file(const char *path, const void *b, size_t len)
{
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);

    assert_true(fd >= 0);
    assert_int_equal(write(fd, b, len), (ssize_t)len);
    close(fd);
}

/* Number of directory entries other than . and .. */
static int count_files(const char *dir)
{
    DIR *d = opendir(dir);
    struct dirent *de;
    int n = 0;

    assert_non_null(d);
    while ((de = readdir(d)) != NULL)
        if (strcmp(de->d_name, ".") != 0 && strcmp(de->d_name, "..") != 0)
            n++;
    closedir(d);
    return n;
}

/* Rewrites the trailer so the checksum matches the (modified) image: the
 * format's XXH3-64 (seed 0) of every byte before the trailer. */
static void fix_trailer(uint8_t *b, size_t len)
{
    uint64_t h = XXH3_64bits(b, len - 8);

    for (int i = 0; i < 8; i++)
        b[len - 8 + i] = (uint8_t)(h >> (8 * i));
}

static void small_keyset(keyset_t *ks)
{
    add_entry(ks, 0, "a", 1, make_filter(20, 2, 8, 1, 1, 15, "t"));
    add_entry(ks, 2, "b\0c", 3, make_filter(10, 1, 16, 0, 2, 5, "t"));
}

static uint8_t *small_image(fixture_t *fx, size_t *len)
{
    char err[256] = "";

    small_keyset(&fx->src);
    assert_int_equal(snap_save(fx->path, ks_iter, &fx->src, err, sizeof(err)),
                     0);
    return read_all(fx->path, len);
}

/* ------------------------------------------------------------------------ */
/* Round trips                                                              */

static void test_round_trip_many(void **state)
{
    fixture_t *fx = *state;
    static const uint32_t bs[] = {1, 2, 4, 8};
    static const uint32_t fps[] = {8, 12, 16};
    char err[256] = "", key[64];
    int n = 0;

    /* Every bucket size and fingerprint width, in three databases. */
    n = 0;
    for (int db = 0; db < 16; db++) {
        if (db != 0 && db != 3 && db != 15)
            continue;
        for (size_t i = 0; i < 4; i++)
            for (size_t j = 0; j < 3; j++) {
                int len = snprintf(key, sizeof(key), "db%d-b%u-fp%u", db, bs[i],
                                   fps[j]);
                add_entry(&fx->src, db, key, (size_t)len,
                          make_filter(500, bs[i], fps[j], 1, (uint64_t)n * 7919,
                                      300, "t"));
                n++;
            }
        /* A grown filter with several sub-filters. */
        add_entry(&fx->src, db, "grown", 5,
                  make_filter(64, 4, 12, 2, 42, 2000, "t"));
        /* Binary names with NULs, and the empty name. */
        add_entry(&fx->src, db, "\0\0x\0", 4,
                  make_filter(100, 4, 8, 1, 3, 50, "t"));
        add_entry(&fx->src, db, "", 0, make_filter(1, 1, 8, 0, 0, 0, "t"));
    }
    cf_stats_t st;
    cf_stats(fx->src.e[12].f, &st);
    assert_true(st.nfilters >= 3); /* the grown one really grew */

    assert_int_equal(snap_save(fx->path, ks_iter, &fx->src, err, sizeof(err)),
                     0);
    assert_int_equal(count_files(fx->dir), 1);
    assert_int_equal(
        snap_load(fx->path, NULL, collect, &fx->got, err, sizeof(err)), 0);
    assert_int_equal(fx->got.n, fx->src.n);
    for (size_t i = 0; i < fx->src.n; i++) {
        assert_int_equal(fx->got.e[i].db, fx->src.e[i].db);
        assert_int_equal(fx->got.e[i].len, fx->src.e[i].len);
        assert_memory_equal(fx->got.e[i].key, fx->src.e[i].key,
                            fx->src.e[i].len);
        assert_same_filter(fx->src.e[i].f, fx->got.e[i].f);
    }

    /* A second save replaces the first and still leaves one file. */
    ks_clear(&fx->got);
    for (size_t i = 1; i < fx->src.n; i++)
        cf_free(fx->src.e[i].f);
    fx->src.n = 1;
    assert_int_equal(snap_save(fx->path, ks_iter, &fx->src, err, sizeof(err)),
                     0);
    assert_int_equal(count_files(fx->dir), 1);
    assert_int_equal(
        snap_load(fx->path, NULL, collect, &fx->got, err, sizeof(err)), 0);
    assert_int_equal(fx->got.n, 1);
    assert_same_filter(fx->src.e[0].f, fx->got.e[0].f);
}

static void test_round_trip_empty(void **state)
{
    fixture_t *fx = *state;
    char err[256] = "";
    size_t len;
    uint8_t *b;

    assert_int_equal(snap_save(fx->path, ks_iter, &fx->src, err, sizeof(err)),
                     0);
    b = read_all(fx->path, &len);
    assert_int_equal(len, SNAP_HEAD_LEN + 9 + SNAP_TRAILER_LEN);
    assert_memory_equal(b, "CUCKOOD\0", 8);
    free(b);
    assert_int_equal(
        snap_load(fx->path, NULL, collect, &fx->got, err, sizeof(err)), 0);
    assert_int_equal(fx->got.n, 0);
}

/* A filter far larger than the write buffer goes out in direct writes. */
static void test_round_trip_large(void **state)
{
    fixture_t *fx = *state;
    char err[256] = "";

    add_entry(&fx->src, 1, "big", 3,
              make_filter(1000000, 4, 16, 1, 9, 20000, "t"));
    add_entry(&fx->src, 1, "small", 5, make_filter(10, 4, 16, 1, 9, 5, "t"));
    assert_true(cf_data_len(fx->src.e[0].f) > 2u << 20);
    assert_int_equal(snap_save(fx->path, ks_iter, &fx->src, err, sizeof(err)),
                     0);
    assert_int_equal(
        snap_load(fx->path, NULL, collect, &fx->got, err, sizeof(err)), 0);
    assert_int_equal(fx->got.n, 2);
    assert_same_filter(fx->src.e[0].f, fx->got.e[0].f);
    assert_same_filter(fx->src.e[1].f, fx->got.e[1].f);
}

/* ------------------------------------------------------------------------ */
/* Corrupt files                                                            */

static void test_every_truncation(void **state)
{
    fixture_t *fx = *state;
    char err[256];
    size_t len;
    uint8_t *b = small_image(fx, &len);

    for (size_t n = 0; n < len; n++) {
        write_all_file(fx->path, b, n);
        err[0] = '\0';
        assert_int_equal(
            snap_load(fx->path, NULL, collect, &fx->got, err, sizeof(err)),
            -EINVAL);
        assert_int_equal(fx->got.n, 0);
        assert_non_null(strstr(err, fx->path));
        /* Without the checksum the structure itself refuses it too. */
        assert_int_equal(snap_parse(b, n, "x", false, NULL, collect, &fx->got,
                                    err, sizeof(err)),
                         -EINVAL);
        ks_clear(&fx->got);
    }
    /* ... and a truncated file is never touched. */
    size_t l2;
    uint8_t *b2 = read_all(fx->path, &l2);
    assert_int_equal(l2, len - 1);
    assert_memory_equal(b, b2, l2);
    free(b2);
    free(b);
}

static void test_random_flips(void **state)
{
    fixture_t *fx = *state;
    char err[256];
    size_t len;
    uint8_t *b = small_image(fx, &len);
    uint8_t *c = malloc(len);
    unsigned seed = 12345;

    assert_non_null(c);
    for (int i = 0; i < 2000; i++) {
        size_t at = (size_t)rand_r(&seed) % len;
        uint8_t x = (uint8_t)(1 + rand_r(&seed) % 255);
        memcpy(c, b, len);
        c[at] ^= x;
        assert_int_equal(snap_parse(c, len, "f", true, NULL, collect, &fx->got,
                                    err, sizeof(err)),
                         -EINVAL);
        assert_int_equal(fx->got.n, 0);
        if (i % 100 == 0) { /* and through the file, now and then */
            write_all_file(fx->path, c, len);
            assert_int_equal(
                snap_load(fx->path, NULL, collect, &fx->got, err, sizeof(err)),
                -EINVAL);
            assert_int_equal(fx->got.n, 0);
        }
    }
    free(c);
    free(b);
}

/* Flips with a recomputed checksum reach the parser: any verdict but a
 * crash (this test matters most under ASan). */
static void test_flips_fixed_checksum(void **state)
{
    fixture_t *fx = *state;
    char err[256];
    size_t len;
    uint8_t *b = small_image(fx, &len);
    uint8_t *c = malloc(len);
    unsigned seed = 777;
    int ok = 0, bad = 0;

    assert_non_null(c);
    for (int i = 0; i < 3000; i++) {
        int flips = 1 + (i % 3);
        memcpy(c, b, len);
        for (int k = 0; k < flips; k++)
            c[(size_t)rand_r(&seed) % (len - 8)] ^=
                (uint8_t)(1 + rand_r(&seed) % 255);
        fix_trailer(c, len);
        cf_limits_t lim = {.max_bytes = 1 << 20};
        int rc = snap_parse(c, len, "f", true, &lim, collect, &fx->got, err,
                            sizeof(err));
        assert_true(rc == 0 || rc == -EINVAL || rc == -ENOMEM);
        if (rc == 0)
            ok++;
        else
            bad++;
        ks_clear(&fx->got);
    }
    /* Flips in names and table bytes load; flips in lengths do not. */
    assert_true(ok > 0);
    assert_true(bad > 0);
    free(c);
    free(b);
}

/* A tiny image builder, to write each structural defect on purpose. */
typedef struct img {
    uint8_t b[4096];
    size_t n;
} img_t;

static void img_bytes(img_t *m, const void *p, size_t n)
{
    assert_true(m->n + n + 8 <= sizeof(m->b));
    memcpy(m->b + m->n, p, n);
    m->n += n;
}

static void img_u8(img_t *m, uint8_t v)
{
    img_bytes(m, &v, 1);
}

static void img_u32(img_t *m, uint32_t v)
{
    uint8_t x[4];
    for (int i = 0; i < 4; i++)
        x[i] = (uint8_t)(v >> (8 * i));
    img_bytes(m, x, 4);
}

static void img_u64(img_t *m, uint64_t v)
{
    img_u32(m, (uint32_t)v);
    img_u32(m, (uint32_t)(v >> 32));
}

static void img_head(img_t *m, uint32_t version, uint32_t flags)
{
    m->n = 0;
    img_bytes(m, "CUCKOOD\0", 8);
    img_u32(m, version);
    img_u32(m, flags);
}

/* A KEY record of a real filter; hdr_delta/data_delta skew the lengths. */
static void img_key(img_t *m, const cf_filter_t *f, const char *name,
                    int64_t hdr_delta, int64_t data_delta)
{
    size_t hl = cf_header_len(f);
    uint64_t dl = cf_data_len(f), off = 0;
    uint8_t hdr[1024];

    assert_true(hl <= sizeof(hdr));
    img_u8(m, 0x02);
    img_u32(m, (uint32_t)strlen(name));
    img_bytes(m, name, strlen(name));
    img_u32(m, (uint32_t)((int64_t)hl + hdr_delta));
    cf_header_write(f, hdr);
    img_bytes(m, hdr, hl);
    img_u64(m, (uint64_t)((int64_t)dl + data_delta));
    while (off < dl) {
        const void *p;
        size_t k = cf_data_view(f, off, dl - off, &p);
        img_bytes(m, p, k);
        off += k;
    }
}

static void img_end(img_t *m, uint64_t nkeys)
{
    img_u8(m, 0xFF);
    img_u64(m, nkeys);
    m->n += 8;
    fix_trailer(m->b, m->n);
}

static int img_load(fixture_t *fx, img_t *m, char *err, size_t errlen)
{
    int rc;

    write_all_file(fx->path, m->b, m->n);
    err[0] = '\0';
    rc = snap_load(fx->path, NULL, collect, &fx->got, err, errlen);
    ks_clear(&fx->got);
    return rc;
}

/* Version 2 stores an expiry time as a record before its key: the times
 * come back exactly (0 and the largest included), keys without one get
 * -1, and the file says version 2. */
static void test_round_trip_expiry(void **state)
{
    fixture_t *fx = *state;
    char err[256] = "";
    const int64_t whens[] = {-1, 0, 1795616370123, INT64_MAX, -1};
    for (int i = 0; i < 5; i++) {
        char key[8];
        int n = snprintf(key, sizeof(key), "k%d", i);
        add_entry(&fx->src, i < 3 ? 0 : 4, key, (size_t)n,
                  make_filter(10, 4, 8, 1, 9, 5, "t"));
        fx->src.e[i].when = whens[i];
    }
    assert_int_equal(snap_save(fx->path, ks_iter, &fx->src, err, sizeof(err)),
                     0);
    size_t len;
    uint8_t *b = read_all(fx->path, &len);
    assert_int_equal(b[8], SNAP_VERSION);
    assert_int_equal(SNAP_VERSION, 2);
    free(b);
    assert_int_equal(
        snap_load(fx->path, NULL, collect, &fx->got, err, sizeof(err)), 0);
    assert_int_equal(fx->got.n, 5);
    for (int i = 0; i < 5; i++) {
        assert_int_equal(fx->got.e[i].when, whens[i]);
        assert_same_filter(fx->src.e[i].f, fx->got.e[i].f);
    }
}

/* A version 1 file (written before expiry times existed) still loads, its
 * keys without a timeout; in version 1 the EXPIRE record type is
 * unknown. */
static void img_db(img_t *m, uint32_t db)
{
    img_u8(m, 0x01);
    img_u32(m, db);
}

static void img_expire(img_t *m, uint64_t when)
{
    img_u8(m, 0x03);
    img_u64(m, when);
}

/* The image m is refused as corrupt, with what in the message. */
static void expect_bad(fixture_t *fx, img_t *m, const char *what)
{
    char err[256];
    assert_int_equal(img_load(fx, m, err, sizeof(err)), -EINVAL);
    assert_non_null(strstr(err, what));
}

static void test_version1_loads(void **state)
{
    fixture_t *fx = *state;
    cf_filter_t *f = make_filter(8, 2, 8, 0, 5, 4, "t");
    char err[256];
    img_t m;

    img_head(&m, 1, 0);
    img_db(&m, 2);
    img_key(&m, f, "old", 0, 0);
    img_key(&m, f, "older", 0, 0);
    img_end(&m, 2);
    write_all_file(fx->path, m.b, m.n);
    assert_int_equal(
        snap_load(fx->path, NULL, collect, &fx->got, err, sizeof(err)), 0);
    assert_int_equal(fx->got.n, 2);
    assert_int_equal(fx->got.e[0].db, 2);
    assert_int_equal(fx->got.e[0].when, -1);
    assert_int_equal(fx->got.e[1].when, -1);
    assert_same_filter(f, fx->got.e[1].f);
    ks_clear(&fx->got);

    img_head(&m, 1, 0);
    img_db(&m, 0);
    img_expire(&m, 5);
    img_key(&m, f, "k", 0, 0);
    img_end(&m, 1);
    expect_bad(fx, &m, "unknown record type");

    /* the same records as version 2 load, with the time */
    img_head(&m, 2, 0);
    img_db(&m, 0);
    img_expire(&m, 5);
    img_key(&m, f, "k", 0, 0);
    img_end(&m, 1);
    write_all_file(fx->path, m.b, m.n);
    assert_int_equal(
        snap_load(fx->path, NULL, collect, &fx->got, err, sizeof(err)), 0);
    assert_int_equal(fx->got.n, 1);
    assert_int_equal(fx->got.e[0].when, 5);
    cf_free(f);
}

/* An EXPIRE record must be followed by the KEY it belongs to. */
static void test_expiry_defects(void **state)
{
    fixture_t *fx = *state;
    cf_filter_t *f = make_filter(8, 2, 8, 0, 5, 4, "t");
    img_t m;

    img_head(&m, 2, 0); /* before any database */
    img_expire(&m, 5);
    img_db(&m, 0);
    img_key(&m, f, "k", 0, 0);
    img_end(&m, 1);
    expect_bad(fx, &m, "outside a database");

    img_head(&m, 2, 0); /* twice */
    img_db(&m, 0);
    img_expire(&m, 5);
    img_expire(&m, 6);
    img_key(&m, f, "k", 0, 0);
    img_end(&m, 1);
    expect_bad(fx, &m, "not followed by its key");

    img_head(&m, 2, 0); /* before the end */
    img_db(&m, 0);
    img_key(&m, f, "k", 0, 0);
    img_expire(&m, 5);
    img_end(&m, 1);
    expect_bad(fx, &m, "not followed by its key");

    img_head(&m, 2, 0); /* before a database record */
    img_db(&m, 0);
    img_key(&m, f, "k", 0, 0);
    img_expire(&m, 5);
    img_db(&m, 1);
    img_key(&m, f, "k", 0, 0);
    img_end(&m, 2);
    expect_bad(fx, &m, "not followed by its key");

    img_head(&m, 2, 0); /* a negative time */
    img_db(&m, 0);
    img_expire(&m, (uint64_t)INT64_MAX + 1);
    img_key(&m, f, "k", 0, 0);
    img_end(&m, 1);
    expect_bad(fx, &m, "expiry time out of range");

    img_head(&m, 2, 0); /* cut inside the time */
    img_db(&m, 0);
    img_u8(&m, 0x03);
    img_u32(&m, 5);
    m.n += 8;
    fix_trailer(m.b, m.n);
    expect_bad(fx, &m, "runs past");
    cf_free(f);
}

static void test_structure_defects(void **state)
{
    fixture_t *fx = *state;
    cf_filter_t *f = make_filter(8, 2, 8, 0, 5, 4, "t");
    char err[256];
    img_t m;

    /* The builder itself makes a valid file. */
    img_head(&m, 1, 0);
    img_u8(&m, 0x01);
    img_u32(&m, 0);
    img_key(&m, f, "k", 0, 0);
    img_u8(&m, 0x01);
    img_u32(&m, 9999);
    img_key(&m, f, "k", 0, 0);
    img_end(&m, 2);
    assert_int_equal(img_load(fx, &m, err, sizeof(err)), 0);

#define EXPECT_BAD(what)                                                       \
    do {                                                                       \
        assert_int_equal(img_load(fx, &m, err, sizeof(err)), -EINVAL);         \
        assert_non_null(strstr(err, what));                                    \
        assert_non_null(strstr(err, fx->path));                                \
    } while (0)

    img_head(&m, 1, 0); /* database number out of range */
    img_u8(&m, 0x01);
    img_u32(&m, 10000);
    img_key(&m, f, "k", 0, 0);
    img_end(&m, 1);
    EXPECT_BAD("out of range");

    img_head(&m, 1, 0); /* databases out of order */
    img_u8(&m, 0x01);
    img_u32(&m, 3);
    img_key(&m, f, "k", 0, 0);
    img_u8(&m, 0x01);
    img_u32(&m, 3);
    img_key(&m, f, "k", 0, 0);
    img_end(&m, 2);
    EXPECT_BAD("out of order");

    img_head(&m, 1, 0); /* a database without keys */
    img_u8(&m, 0x01);
    img_u32(&m, 1);
    img_end(&m, 0);
    EXPECT_BAD("without keys");

    img_head(&m, 1, 0); /* a key before any database */
    img_key(&m, f, "k", 0, 0);
    img_end(&m, 1);
    EXPECT_BAD("outside a database");

    img_head(&m, 1, 0); /* wrong total */
    img_u8(&m, 0x01);
    img_u32(&m, 0);
    img_key(&m, f, "k", 0, 0);
    img_end(&m, 2);
    EXPECT_BAD("key total");

    img_head(&m, 1, 0); /* an unknown record */
    img_u8(&m, 0x03);
    img_end(&m, 0);
    EXPECT_BAD("unknown record type");

    img_head(&m, 1, 0); /* bytes after the end marker */
    img_u8(&m, 0xFF);
    img_u64(&m, 0);
    img_u32(&m, 0);
    m.n += 8;
    fix_trailer(m.b, m.n);
    EXPECT_BAD("after the end marker");

    img_head(&m, 1, 0); /* no end marker */
    img_u8(&m, 0x01);
    img_u32(&m, 0);
    img_key(&m, f, "k", 0, 0);
    m.n += 8;
    fix_trailer(m.b, m.n);
    EXPECT_BAD("runs past the end");

    img_head(&m, 1, 0); /* data length larger than the file */
    img_u8(&m, 0x01);
    img_u32(&m, 0);
    img_key(&m, f, "k", 0, (int64_t)1 << 40);
    img_end(&m, 1);
    EXPECT_BAD("filter data runs past");

    img_head(&m, 1, 0); /* data length that wraps around */
    img_u8(&m, 0x01);
    img_u32(&m, 0);
    img_key(&m, f, "k", 0, -(int64_t)cf_data_len(f) - 1);
    img_end(&m, 1);
    EXPECT_BAD("filter data runs past");

    img_head(&m, 1, 0); /* data shorter than the filter needs */
    img_u8(&m, 0x01);
    img_u32(&m, 0);
    img_key(&m, f, "k", 0, -1);
    m.n--; /* and one byte less of it */
    img_end(&m, 1);
    EXPECT_BAD("bad encoding");

    img_head(&m, 1, 0); /* header longer than the filter's encoding */
    img_u8(&m, 0x01);
    img_u32(&m, 0);
    {
        /* Same record but with a spare byte kept inside the header. */
        size_t hl = cf_header_len(f);
        uint8_t hdr[1024];
        uint64_t dl = cf_data_len(f), off = 0;
        img_u8(&m, 0x02);
        img_u32(&m, 1);
        img_bytes(&m, "k", 1);
        img_u32(&m, (uint32_t)hl + 1);
        cf_header_write(f, hdr);
        img_bytes(&m, hdr, hl);
        img_u8(&m, 0);
        img_u64(&m, dl);
        while (off < dl) {
            const void *p;
            size_t k = cf_data_view(f, off, dl - off, &p);
            img_bytes(&m, p, k);
            off += k;
        }
    }
    img_end(&m, 1);
    EXPECT_BAD("bad encoding");

    img_head(&m, 1, 0); /* zero-length header */
    img_u8(&m, 0x01);
    img_u32(&m, 0);
    img_u8(&m, 0x02);
    img_u32(&m, 1);
    img_bytes(&m, "k", 1);
    img_u32(&m, 0);
    img_u64(&m, 0);
    img_end(&m, 1);
    EXPECT_BAD("empty filter header");

    img_head(&m, 1, 0); /* a header of garbage */
    img_u8(&m, 0x01);
    img_u32(&m, 0);
    img_u8(&m, 0x02);
    img_u32(&m, 1);
    img_bytes(&m, "k", 1);
    img_u32(&m, 16);
    img_bytes(&m,
              "\xff\xff\xff\xff\xff\xff\xff\xff"
              "\xff\xff\xff\xff\xff\xff\xff\xff",
              16);
    img_u64(&m, 0);
    img_end(&m, 1);
    EXPECT_BAD("bad encoding");

    img_head(&m, 1, 0); /* key name length beyond the file */
    img_u8(&m, 0x01);
    img_u32(&m, 0);
    img_u8(&m, 0x02);
    img_u32(&m, 0xFFFFFFFFu);
    img_end(&m, 1);
    EXPECT_BAD("key name runs past");

    img_head(&m, 1, 1); /* unknown flags */
    img_end(&m, 0);
    EXPECT_BAD("flags");

    img_head(&m, 3, 0); /* a later version */
    img_end(&m, 0);
    EXPECT_BAD("version 3");

    img_head(&m, 1, 0); /* bad magic */
    m.b[0] = 'X';
    img_end(&m, 0);
    EXPECT_BAD("bad magic");
#undef EXPECT_BAD
    cf_free(f);
}

static void test_limits(void **state)
{
    fixture_t *fx = *state;
    char err[256] = "";
    cf_limits_t lim = {.max_bytes = 4096};

    add_entry(&fx->src, 0, "small", 5, make_filter(10, 4, 8, 1, 1, 5, "t"));
    add_entry(&fx->src, 0, "big", 3, make_filter(100000, 4, 16, 1, 1, 5, "t"));
    assert_int_equal(snap_save(fx->path, ks_iter, &fx->src, err, sizeof(err)),
                     0);
    assert_int_equal(
        snap_load(fx->path, &lim, collect, &fx->got, err, sizeof(err)),
        -ENOMEM);
    assert_non_null(strstr(err, "big"));
    ks_clear(&fx->got);
    lim.max_bytes = 1 << 30;
    assert_int_equal(
        snap_load(fx->path, &lim, collect, &fx->got, err, sizeof(err)), 0);
    assert_int_equal(fx->got.n, 2);
}

static void test_on_key_stops(void **state)
{
    fixture_t *fx = *state;
    char err[256] = "";
    size_t len;
    uint8_t *b = small_image(fx, &len);

    free(b);
    fx->got.stop_at = 1;
    fx->got.stop_rc = -EEXIST;
    assert_int_equal(
        snap_load(fx->path, NULL, collect, &fx->got, err, sizeof(err)),
        -EEXIST);
    assert_int_equal(fx->got.n, 1);
}

static void test_bad_files(void **state)
{
    fixture_t *fx = *state;
    char err[256] = "";
    uint8_t junk[64];

    /* Missing: -ENOENT, an empty start. */
    assert_int_equal(
        snap_load(fx->path, NULL, collect, &fx->got, err, sizeof(err)),
        -ENOENT);

    /* Zero bytes is corrupt, and stays there. */
    write_all_file(fx->path, "", 0);
    assert_int_equal(
        snap_load(fx->path, NULL, collect, &fx->got, err, sizeof(err)),
        -EINVAL);
    assert_non_null(strstr(err, "empty"));
    assert_non_null(strstr(err, fx->path));
    struct stat st;
    assert_int_equal(stat(fx->path, &st), 0);
    assert_int_equal(st.st_size, 0);

    /* Something else entirely. */
    memset(junk, 'A', sizeof(junk));
    write_all_file(fx->path, junk, sizeof(junk));
    assert_int_equal(
        snap_load(fx->path, NULL, collect, &fx->got, err, sizeof(err)),
        -EINVAL);
    assert_non_null(strstr(err, "bad magic"));

    /* A valid head with a wrong version. */
    size_t len;
    uint8_t *b;
    unlink(fx->path);
    b = small_image(fx, &len);
    b[8] = 7;
    write_all_file(fx->path, b, len);
    assert_int_equal(
        snap_load(fx->path, NULL, collect, &fx->got, err, sizeof(err)),
        -EINVAL);
    assert_non_null(strstr(err, "version 7"));
    /* The checksum fixed too: still the version that is refused. */
    fix_trailer(b, len);
    write_all_file(fx->path, b, len);
    assert_int_equal(
        snap_load(fx->path, NULL, collect, &fx->got, err, sizeof(err)),
        -EINVAL);
    assert_non_null(strstr(err, "version 7"));
    assert_int_equal(fx->got.n, 0);
    free(b);

    /* A directory is not a snapshot. */
    assert_int_equal(
        snap_load(fx->dir, NULL, collect, &fx->got, err, sizeof(err)), -EINVAL);
    assert_non_null(strstr(err, "regular"));
}

/* ------------------------------------------------------------------------ */
/* Failed saves                                                             */

/* Saves into a path that cannot be written and checks that the old file is
 * byte-identical and nothing was left in dir. */
static void expect_failed_save(fixture_t *fx, const char *path, int files)
{
    char err[256] = "";
    size_t l1, l2;
    uint8_t *before = read_all(fx->path, &l1), *after;
    int rc = snap_save(path, ks_iter, &fx->src, err, sizeof(err));

    assert_true(rc < 0);
    assert_true(strlen(err) > 0);
    after = read_all(fx->path, &l2);
    assert_int_equal(l1, l2);
    assert_memory_equal(before, after, l1);
    assert_int_equal(count_files(fx->dir), files);
    free(before);
    free(after);
}

static void test_save_failures(void **state)
{
    fixture_t *fx = *state;
    char err[256] = "", p[400];
    size_t len;

    free(small_image(fx, &len));
    add_entry(&fx->src, 5, "more", 4, make_filter(100, 4, 12, 1, 1, 50, "t"));

    /* The target is a directory. */
    snprintf(p, sizeof(p), "%s/sub", fx->dir);
    assert_int_equal(mkdir(p, 0755), 0);
    expect_failed_save(fx, p, 2);
    assert_int_equal(snap_save(p, ks_iter, &fx->src, err, sizeof(err)),
                     -EISDIR);
    assert_int_equal(count_files(p), 0);
    rmdir(p);

    /* The directory does not exist. */
    snprintf(p, sizeof(p), "%s/nodir/dump.cuckoo", fx->dir);
    assert_int_equal(snap_save(p, ks_iter, &fx->src, err, sizeof(err)),
                     -ENOENT);
    assert_non_null(strstr(err, "Failed opening the temp file"));
    expect_failed_save(fx, p, 1);

    /* A read-only directory (root is not denied, so only as a user). */
    if (geteuid() != 0) {
        assert_int_equal(chmod(fx->dir, 0555), 0);
        assert_int_equal(
            snap_save(fx->path, ks_iter, &fx->src, err, sizeof(err)), -EACCES);
        assert_non_null(strstr(err, "Permission denied"));
        expect_failed_save(fx, fx->path, 1);
        assert_int_equal(chmod(fx->dir, 0755), 0);
    }

    /* The keyspace stops the walk half way. */
    fx->src.stop_at = 2;
    fx->src.stop_rc = -EIO;
    expect_failed_save(fx, fx->path, 1);
    fx->src.stop_at = -1;

    /* Bad input from the keyspace: databases out of order, out of range. */
    fx->src.e[2].db = 1;
    expect_failed_save(fx, fx->path, 1);
    fx->src.e[2].db = 10000;
    expect_failed_save(fx, fx->path, 1);
    fx->src.e[2].db = 5;
}

/* A write error in the middle of the file (the file size limit makes write
 * fail as a full disk would), in a child so the limit stays there. */
static void test_save_write_error(void **state)
{
    fixture_t *fx = *state;
    size_t l1, l2;
    uint8_t *before, *after;
    int status;
    pid_t pid;

    before = small_image(fx, &l1);
    add_entry(&fx->src, 7, "big", 3,
              make_filter(200000, 4, 16, 1, 1, 100, "t"));
    pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        struct rlimit rl = {.rlim_cur = 64 * 1024, .rlim_max = 64 * 1024};
        char err[256] = "";
        int rc;
        signal(SIGXFSZ, SIG_IGN);
        if (setrlimit(RLIMIT_FSIZE, &rl) != 0)
            _exit(10);
        rc = snap_save(fx->path, ks_iter, &fx->src, err, sizeof(err));
        if (rc != -EFBIG)
            _exit(11);
        if (strstr(err, "Write error saving DB on disk") == NULL)
            _exit(12);
        _exit(0);
    }
    assert_int_equal(waitpid(pid, &status, 0), pid);
    assert_true(WIFEXITED(status));
    assert_int_equal(WEXITSTATUS(status), 0);
    after = read_all(fx->path, &l2);
    assert_int_equal(l1, l2);
    assert_memory_equal(before, after, l1);
    assert_int_equal(count_files(fx->dir), 1);
    free(before);
    free(after);
}

/* ------------------------------------------------------------------------ */
/* Stale temporary files                                                    */

/* A pid no process can have: above the kernel's pid_max (at most 2^22). */
static long dead_pid(void)
{
    long max = 4194304;
    FILE *fp = fopen("/proc/sys/kernel/pid_max", "r");

    if (fp != NULL) {
        if (fscanf(fp, "%ld", &max) != 1)
            max = 4194304;
        fclose(fp);
    }
    return max + 1;
}

static void tmp_name(const fixture_t *fx, char *p, size_t len, long pid,
                     unsigned n)
{
    snprintf(p, len, "%s.tmp-%ld-%u", fx->path, pid, n);
}

static void test_remove_stale(void **state)
{
    fixture_t *fx = *state;
    static const char *keep[] = {
        "dump.cuckoo",          "dump.cuckoo.tmp-",      "dump.cuckoo.tmp-12",
        "dump.cuckoo.tmp-1-2x", "dump.cuckoo.tmp-1-2-3", "other.cuckoo.tmp-1-2",
        "dump.cuckoo.tmp--1",   "xdump.cuckoo.tmp-1-2",  "dump.cuckoo.tmp-1-",
    };
    /* Left by processes that are gone, by this process (a former instance
     * with the same pid, as pid 1 in a container), by no process at all. */
    long stale_pids[] = {dead_pid(), (long)getpid(), 0, 99999999999999999L};
    size_t nstale = sizeof(stale_pids) / sizeof(stale_pids[0]);
    char p[400];

    for (size_t i = 0; i < nstale; i++) {
        tmp_name(fx, p, sizeof(p), stale_pids[i], (unsigned)i);
        write_all_file(p, "x", 1);
    }
    for (size_t i = 0; i < sizeof(keep) / sizeof(keep[0]); i++) {
        snprintf(p, sizeof(p), "%s/%s", fx->dir, keep[i]);
        write_all_file(p, "x", 1);
    }
    assert_int_equal(snap_remove_stale(fx->path), (int)nstale);
    for (size_t i = 0; i < nstale; i++) {
        tmp_name(fx, p, sizeof(p), stale_pids[i], (unsigned)i);
        assert_int_equal(access(p, F_OK), -1);
    }
    for (size_t i = 0; i < sizeof(keep) / sizeof(keep[0]); i++) {
        snprintf(p, sizeof(p), "%s/%s", fx->dir, keep[i]);
        assert_int_equal(access(p, F_OK), 0);
    }
    assert_int_equal(snap_remove_stale(fx->path), 0);
    /* A missing directory is nothing to remove. */
    snprintf(p, sizeof(p), "%s/nodir/dump.cuckoo", fx->dir);
    assert_int_equal(snap_remove_stale(p), 0);
}

/* Another instance sharing the directory may be writing its temporary file
 * right now: one named by a live process that is not this one is kept, and
 * so is one whose writer holds its lock, whatever pid it names (instances
 * in other pid namespaces, such as two containers that are both pid 1). */
static void test_stale_keeps_live_files(void **state)
{
    fixture_t *fx = *state;
    char live[400], locked[400], dead[400];
    int fd;

    tmp_name(fx, live, sizeof(live), (long)getppid(), 7);
    tmp_name(fx, locked, sizeof(locked), (long)getpid(), 8);
    tmp_name(fx, dead, sizeof(dead), dead_pid(), 9);
    write_all_file(live, "x", 1);
    write_all_file(dead, "x", 1);
    fd = open(locked, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
    assert_true(fd >= 0);
    assert_int_equal(flock(fd, LOCK_EX | LOCK_NB), 0);

    assert_int_equal(snap_remove_stale(fx->path), 1);
    assert_int_equal(access(live, F_OK), 0);
    assert_int_equal(access(locked, F_OK), 0);
    assert_int_equal(access(dead, F_OK), -1);
    /* A writer that has exited but is not reaped yet writes nothing. */
    pid_t z = fork();
    assert_true(z >= 0);
    if (z == 0)
        _exit(0);
    char zombie[400];
    tmp_name(fx, zombie, sizeof(zombie), (long)z, 10);
    write_all_file(zombie, "x", 1);
    siginfo_t si;
    assert_int_equal(waitid(P_PID, (id_t)z, &si, WEXITED | WNOWAIT), 0);
    assert_int_equal(snap_remove_stale(fx->path), 1);
    assert_int_equal(access(zombie, F_OK), -1);
    assert_int_equal(waitpid(z, NULL, 0), z);
    /* Once its writer is gone, the file is stale. */
    close(fd);
    assert_int_equal(snap_remove_stale(fx->path), 1);
    assert_int_equal(access(locked, F_OK), -1);
    assert_int_equal(access(live, F_OK), 0);
    unlink(live);
}

/* The temp file a save is writing is one snap_remove_stale recognises by
 * name, and keeps while the save runs; once the writer is gone, a file of
 * that name is removed. */
static int ks_iter_sweep(void *src, snap_each_fn *each, void *ctx)
{
    fixture_t *fx = src;
    int rc = ks_iter(&fx->src, each, ctx);
    DIR *d = opendir(fx->dir);
    struct dirent *de;

    fx->got.stop_rc = snap_remove_stale(fx->path);
    fx->got.n = 0;
    while (d != NULL && (de = readdir(d)) != NULL)
        if (strstr(de->d_name, ".tmp-") != NULL &&
            strlen(de->d_name) < sizeof(fx->got.e[0].key)) {
            strcpy(fx->got.e[0].key, de->d_name);
            fx->got.n++;
        }
    if (d != NULL)
        closedir(d);
    return rc;
}

static void test_tmp_name_matches(void **state)
{
    fixture_t *fx = *state;
    char err[256] = "", p[400];
    size_t l1;
    uint8_t *before = small_image(fx, &l1);

    assert_int_equal(snap_save(fx->path, ks_iter_sweep, fx, err, sizeof(err)),
                     0);
    assert_int_equal(fx->got.stop_rc, 0);
    assert_int_equal(fx->got.n, 1);
    assert_int_equal(count_files(fx->dir), 1);
    snprintf(p, sizeof(p), "%s/%s", fx->dir, fx->got.e[0].key);
    fx->got.n = 0;
    write_all_file(p, "x", 1);
    assert_int_equal(snap_remove_stale(fx->path), 1);
    assert_int_equal(count_files(fx->dir), 1);
    free(before);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_round_trip_many, setup, teardown),
        cmocka_unit_test_setup_teardown(test_round_trip_empty, setup, teardown),
        cmocka_unit_test_setup_teardown(test_round_trip_large, setup, teardown),
        cmocka_unit_test_setup_teardown(test_every_truncation, setup, teardown),
        cmocka_unit_test_setup_teardown(test_random_flips, setup, teardown),
        cmocka_unit_test_setup_teardown(test_flips_fixed_checksum, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_round_trip_expiry, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_version1_loads, setup, teardown),
        cmocka_unit_test_setup_teardown(test_expiry_defects, setup, teardown),
        cmocka_unit_test_setup_teardown(test_structure_defects, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_limits, setup, teardown),
        cmocka_unit_test_setup_teardown(test_on_key_stops, setup, teardown),
        cmocka_unit_test_setup_teardown(test_bad_files, setup, teardown),
        cmocka_unit_test_setup_teardown(test_save_failures, setup, teardown),
        cmocka_unit_test_setup_teardown(test_save_write_error, setup, teardown),
        cmocka_unit_test_setup_teardown(test_remove_stale, setup, teardown),
        cmocka_unit_test_setup_teardown(test_stale_keeps_live_files, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_tmp_name_matches, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
