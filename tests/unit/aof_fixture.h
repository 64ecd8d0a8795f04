/*
 * aof_fixture.h - what the tests of the append-only file's feed and replay
 * share: a server with the command families that write (keys, timeouts,
 * transactions, CF.*, SELECT), a capture of its feed (on_propagate) as a
 * list of owned commands, a way to run commands as a client, and a
 * comparison of two servers' data: every key of every database, its
 * filter's whole encoding (DUMP's payload) and its expiry time. Include
 * after cmocka.h.
 */
#ifndef CUCKOOD_AOF_FIXTURE_H
#define CUCKOOD_AOF_FIXTURE_H

#include <strings.h>

#include "cfhost.h"
#include "cmdtab.h"
#include "dump.h"
#include "multi.h"
#include "propagate.h"
#include "unit_fixture.h"

#define FEED_MAX 200000

typedef struct feed {
    size_t n;
    int dbnum[FEED_MAX];
    argv_t *cmd[FEED_MAX];
} feed_t;

typedef struct aof_fx {
    srv_fixture_t f;
    client_t c;
    feed_t *feed; /* NULL: the feed is off */
} aof_fx_t;

static void fx_on_propagate(server_t *s, int dbnum, int argc,
                            const arg_t *argv);

/* The fixture whose feed is being captured (one server feeds at a time). */
static aof_fx_t *fx_capturing;

static void fx_on_propagate(server_t *s, int dbnum, int argc, const arg_t *argv)
{
    aof_fx_t *fx = fx_capturing;
    assert_non_null(fx);
    assert_ptr_equal(s, &fx->f.s);
    assert_true(fx->feed->n < FEED_MAX);
    fx->feed->dbnum[fx->feed->n] = dbnum;
    fx->feed->cmd[fx->feed->n] = argv_copy(argc, argv);
    assert_non_null(fx->feed->cmd[fx->feed->n]);
    fx->feed->n++;
}

static void feed_clear(feed_t *fd)
{
    for (size_t i = 0; i < fd->n; i++)
        argv_free(fd->cmd[i]);
    fd->n = 0;
}

/* A server of 16 databases; with capture, its feed is recorded. */
static aof_fx_t *aof_fx_new(bool capture)
{
    aof_fx_t *fx = calloc(1, sizeof(*fx));
    assert_non_null(fx);
    srv_fixture_init(&fx->f);
    srv_fixture_start(&fx->f);
    const cmd_def_t *tables[] = {cmd_conn_table, cmd_keys_table,
                                 cmd_expire_table, multi_table, cfhost_table()};
    const char *dup = NULL;
    assert_int_equal(cmd_index_build(&fx->f.s, tables,
                                     sizeof(tables) / sizeof(tables[0]), &dup),
                     0);
    fx->f.indexed = true;
    assert_int_equal(multi_init(&fx->f.s), 0);
    srv_fixture_client(&fx->f, &fx->c);
    if (capture) {
        fx->feed = calloc(1, sizeof(*fx->feed));
        assert_non_null(fx->feed);
        fx->f.s.on_propagate = fx_on_propagate;
        fx_capturing = fx;
    }
    return fx;
}

static void aof_fx_free(aof_fx_t *fx)
{
    if (fx->feed != NULL) {
        feed_clear(fx->feed);
        free(fx->feed);
    }
    if (fx_capturing == fx)
        fx_capturing = NULL;
    multi_client_free(&fx->c);
    resp_out_release(&fx->c.out);
    multi_free(&fx->f.s);
    propagate_free(&fx->f.s);
    assert_int_equal(srv_fixture_free(&fx->f), 0);
    free(fx);
}

/* Runs argc/argv as fx's client; returns the reply (static, valid until
 * the next call). */
static const char *fx_runv(aof_fx_t *fx, int argc, const arg_t *argv)
{
    static char *reply;
    resp_cmd_t cmd = {argc, (arg_t *)argv};
    assert_true(cmd_dispatch(&fx->c, &cmd));
    size_t len;
    free(reply);
    char *out = resp_out_take(&fx->c.out, &len);
    reply = malloc(len + 1);
    assert_non_null(reply);
    memcpy(reply, out != NULL ? out : "", len);
    reply[len] = '\0';
    free(out);
    return reply;
}

static const char *fx_run(aof_fx_t *fx, const char *const *words)
{
    arg_t argv[64];
    int argc = 0;
    while (words[argc] != NULL) {
        assert_true(argc < 64);
        argv[argc].ptr = words[argc];
        argv[argc].len = strlen(words[argc]);
        argc++;
    }
    return fx_runv(fx, argc, argv);
}

#define FX(fx, ...) fx_run((fx), (const char *const[]){__VA_ARGS__, NULL})

/* Whether feed entry i is the command given by words (any case for the
 * name, exact bytes for the arguments). */
static bool feed_is(const feed_t *fd, size_t i, const char *const *words)
{
    if (i >= fd->n)
        return false;
    const argv_t *a = fd->cmd[i];
    int n = 0;
    while (words[n] != NULL)
        n++;
    if (a->argc != n || a->v[0].len != strlen(words[0]) ||
        strncasecmp(a->v[0].ptr, words[0], a->v[0].len) != 0)
        return false;
    for (int j = 1; j < n; j++)
        if (a->v[j].len != strlen(words[j]) ||
            memcmp(a->v[j].ptr, words[j], a->v[j].len) != 0)
            return false;
    return true;
}

#define FEED_IS(fd, i, ...)                                                    \
    feed_is((fd), (i), (const char *const[]){__VA_ARGS__, NULL})

/* One key of a server as the comparison sees it. */
typedef struct key_rec {
    int dbnum;
    char *name;
    size_t len;
    int64_t when;
    uint8_t *enc;
    size_t enc_len;
} key_rec_t;

typedef struct key_list {
    key_rec_t *v;
    size_t n, cap;
    int dbnum;
    const ks_db_t *db;
} key_list_t;

static int collect_key(void *ctx, const void *key, size_t len,
                       const cf_filter_t *f)
{
    key_list_t *l = ctx;
    int64_t when;
    assert_ptr_equal(ks_find(l->db, key, len, &when), f);
    if (l->n == l->cap) {
        l->cap = l->cap ? l->cap * 2 : 64;
        l->v = realloc(l->v, l->cap * sizeof(*l->v));
        assert_non_null(l->v);
    }
    key_rec_t *r = &l->v[l->n++];
    r->dbnum = l->dbnum;
    r->name = malloc(len + 1);
    assert_non_null(r->name);
    memcpy(r->name, key, len);
    r->len = len;
    r->when = when;
    assert_int_equal(dump_encode(f, &r->enc, &r->enc_len), 0);
    return 0;
}

static int key_cmp(const void *a, const void *b)
{
    const key_rec_t *x = a, *y = b;
    if (x->dbnum != y->dbnum)
        return x->dbnum - y->dbnum;
    size_t n = x->len < y->len ? x->len : y->len;
    int c = memcmp(x->name, y->name, n);
    return c != 0 ? c : (x->len > y->len) - (x->len < y->len);
}

static void keys_of(server_t *s, key_list_t *l)
{
    memset(l, 0, sizeof(*l));
    for (int i = 0; i < s->ndbs; i++) {
        l->dbnum = i;
        l->db = s->dbs[i];
        assert_int_equal(ks_foreach(s->dbs[i], collect_key, l), 0);
    }
    if (l->n > 1)
        qsort(l->v, l->n, sizeof(l->v[0]), key_cmp);
}

static void keys_free(key_list_t *l)
{
    for (size_t i = 0; i < l->n; i++) {
        free(l->v[i].name);
        free(l->v[i].enc);
    }
    free(l->v);
}

/* Asserts that a and b hold the same keys in the same databases, with the
 * same encodings and expiry times; returns the number of keys. */
static size_t assert_same_data(server_t *a, server_t *b)
{
    key_list_t x, y;
    keys_of(a, &x);
    keys_of(b, &y);
    assert_int_equal(x.n, y.n);
    for (size_t i = 0; i < x.n; i++) {
        assert_int_equal(x.v[i].dbnum, y.v[i].dbnum);
        assert_int_equal(x.v[i].len, y.v[i].len);
        assert_memory_equal(x.v[i].name, y.v[i].name, x.v[i].len);
        assert_int_equal(x.v[i].when, y.v[i].when);
        assert_int_equal(x.v[i].enc_len, y.v[i].enc_len);
        assert_memory_equal(x.v[i].enc, y.v[i].enc, x.v[i].enc_len);
    }
    size_t n = x.n;
    keys_free(&x);
    keys_free(&y);
    return n;
}

#endif
