/*
 * test_propagate.c - what the write commands feed to the append-only file
 * (server/propagate.h), with the real dispatcher and command families: each
 * rule of the feed on its own (verbatim writes, nothing for reads and
 * refusals, the header of a new filter, absolute times, DEL for expiry,
 * transactions, FLUSHDB), and a random workload whose feed, replayed into
 * a fresh server, rebuilds the same bytes and times.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "aof_fixture.h"
#include "expire.h"

/* Replays a captured feed into dst as the loader does: SELECT when the
 * database changes, every command through the dispatcher, none refused. */
static void replay(const feed_t *fd, aof_fx_t *dst)
{
    int db = -1;
    dst->f.s.loading = true;
    for (size_t i = 0; i < fd->n; i++) {
        if (fd->dbnum[i] != db) {
            char n[16];
            snprintf(n, sizeof(n), "%d", fd->dbnum[i]);
            assert_string_equal(FX(dst, "SELECT", n), "+OK\r\n");
            db = fd->dbnum[i];
        }
        const char *r = fx_runv(dst, fd->cmd[i]->argc, fd->cmd[i]->v);
        if (r[0] == '-')
            fail_msg("replaying feed entry %zu: %s", i, r);
    }
    dst->f.s.loading = false;
}

static void replay_and_compare(aof_fx_t *src)
{
    aof_fx_t *dst = aof_fx_new(false);
    replay(src->feed, dst);
    assert_same_data(&src->f.s, &dst->f.s);
    aof_fx_free(dst);
}

static void test_verbatim_reads_refusals(void **state)
{
    (void)state;
    aof_fx_t *fx = aof_fx_new(true);
    FX(fx, "CF.RESERVE", "k", "100");
    feed_clear(fx->feed);
    assert_string_equal(FX(fx, "cf.add", "k", "a"), ":1\r\n");
    assert_int_equal(fx->feed->n, 1);
    assert_true(FEED_IS(fx->feed, 0, "cf.add", "k", "a"));
    feed_clear(fx->feed);
    /* reads, refusals and writes that changed nothing feed nothing */
    FX(fx, "CF.EXISTS", "k", "a");
    FX(fx, "CF.ADD", "k");
    FX(fx, "DEL", "missing");
    FX(fx, "CF.DEL", "k", "never-added");
    FX(fx, "PERSIST", "k");
    FX(fx, "nosuchcommand");
    assert_int_equal(fx->feed->n, 0);
    /* DEL, CF.DEL and PERSIST that changed something: verbatim */
    FX(fx, "PEXPIRE", "k", "100000");
    feed_clear(fx->feed);
    FX(fx, "PERSIST", "k");
    FX(fx, "CF.DEL", "k", "a");
    FX(fx, "DEL", "k");
    assert_int_equal(fx->feed->n, 3);
    assert_true(FEED_IS(fx->feed, 0, "PERSIST", "k"));
    assert_true(FEED_IS(fx->feed, 1, "CF.DEL", "k", "a"));
    assert_true(FEED_IS(fx->feed, 2, "DEL", "k"));
    aof_fx_free(fx);
}

/* A new filter is logged as its header first: replayed into a server with
 * another random seed, it gives the same bytes. */
static void test_created_filter_logs_header(void **state)
{
    (void)state;
    aof_fx_t *fx = aof_fx_new(true);
    /* the header and the command, together in a transaction, as Redis 7.0
     * wraps what one command feeds */
    FX(fx, "CF.ADD", "a", "x");
    assert_int_equal(fx->feed->n, 4);
    assert_true(FEED_IS(fx->feed, 0, "MULTI"));
    assert_true(arg_is(&fx->feed->cmd[1]->v[0], "cf.loadchunk"));
    assert_true(arg_is(&fx->feed->cmd[1]->v[2], "1"));
    assert_true(FEED_IS(fx->feed, 2, "CF.ADD", "a", "x"));
    assert_true(FEED_IS(fx->feed, 3, "EXEC"));
    feed_clear(fx->feed);
    FX(fx, "CF.RESERVE", "r", "1000", "BUCKETSIZE", "2", "EXPANSION", "1");
    assert_int_equal(fx->feed->n, 1);
    assert_int_equal(fx->feed->cmd[0]->argc, 4);
    assert_true(arg_is(&fx->feed->cmd[0]->v[0], "cf.loadchunk"));
    assert_true(arg_is(&fx->feed->cmd[0]->v[2], "1"));
    feed_clear(fx->feed);
    FX(fx, "CF.INSERT", "i", "CAPACITY", "50", "ITEMS", "p", "q");
    FX(fx, "CF.INSERTNX", "j", "ITEMS", "p", "q", "p");
    FX(fx, "CF.ADDNX", "n", "x");
    assert_int_equal(fx->feed->n, 12);
    /* and a filter already there is not re-created */
    feed_clear(fx->feed);
    FX(fx, "CF.ADD", "a", "y");
    assert_int_equal(fx->feed->n, 1);
    feed_clear(fx->feed);

    /* the whole history, replayed elsewhere */
    aof_fx_t *src = aof_fx_new(true);
    FX(src, "CF.ADD", "a", "x");
    FX(src, "CF.RESERVE", "r", "1000", "BUCKETSIZE", "2", "EXPANSION", "1");
    FX(src, "CF.INSERT", "i", "CAPACITY", "50", "ITEMS", "p", "q");
    FX(src, "CF.INSERTNX", "j", "ITEMS", "p", "q", "p");
    FX(src, "CF.ADDNX", "n", "x");
    FX(src, "CF.ADD", "r", "z");
    replay_and_compare(src);
    aof_fx_free(src);
    aof_fx_free(fx);
}

static int64_t when_of(aof_fx_t *fx, const char *key)
{
    int64_t w;
    assert_non_null(ks_find(fx->f.s.dbs[fx->c.dbnum], key, strlen(key), &w));
    return w;
}

static bool feed_arg_is_ll(const feed_t *fd, size_t i, int j, int64_t v)
{
    long long x;
    return arg_ll(&fd->cmd[i]->v[j], &x) && x == v;
}

static void test_expire_absolute(void **state)
{
    (void)state;
    aof_fx_t *fx = aof_fx_new(true);
    FX(fx, "CF.ADD", "a", "x");
    FX(fx, "CF.ADD", "b", "x");
    FX(fx, "CF.ADD", "c", "x");
    feed_clear(fx->feed);
    FX(fx, "EXPIRE", "a", "100");
    FX(fx, "PEXPIRE", "b", "100000", "NX");
    FX(fx, "EXPIREAT", "c", "99999999999");
    assert_int_equal(fx->feed->n, 3);
    assert_int_equal(fx->feed->cmd[0]->argc, 3);
    assert_true(arg_is(&fx->feed->cmd[0]->v[0], "pexpireat"));
    assert_true(feed_arg_is_ll(fx->feed, 0, 2, when_of(fx, "a")));
    assert_int_equal(fx->feed->cmd[1]->argc, 4);
    assert_true(arg_is(&fx->feed->cmd[1]->v[0], "pexpireat"));
    assert_true(feed_arg_is_ll(fx->feed, 1, 2, when_of(fx, "b")));
    assert_true(arg_is(&fx->feed->cmd[1]->v[3], "nx"));
    assert_true(feed_arg_is_ll(fx->feed, 2, 2, 99999999999000ll));
    feed_clear(fx->feed);
    /* a time already past deletes: logged as DEL */
    assert_string_equal(FX(fx, "EXPIRE", "a", "-1"), ":1\r\n");
    assert_string_equal(FX(fx, "PEXPIREAT", "b", "1"), ":1\r\n");
    assert_int_equal(fx->feed->n, 2);
    assert_true(FEED_IS(fx->feed, 0, "DEL", "a"));
    assert_true(FEED_IS(fx->feed, 1, "DEL", "b"));
    aof_fx_free(fx);
}

/* Relative times and the timeouts COPY, RENAME and MOVE carry replay to the
 * same absolute times, later: the clock has moved on before the replay. */
static void test_times_replay_absolute(void **state)
{
    (void)state;
    aof_fx_t *fx = aof_fx_new(true);
    FX(fx, "CF.ADD", "a", "x");
    FX(fx, "CF.ADD", "b", "x");
    FX(fx, "EXPIRE", "a", "100");
    FX(fx, "PEXPIRE", "b", "123456");
    FX(fx, "COPY", "a", "c", "DB", "2");
    FX(fx, "RENAME", "b", "d");
    FX(fx, "MOVE", "d", "1");
    /* The replay must run at a later millisecond than the commands, or a
     * time kept relative would replay to the same absolute time: poll the
     * clock until it has moved on, with a bound. */
    int64_t ran = expire_now_ms();
    for (int i = 0; i < 10000 && expire_now_ms() <= ran + 1; i++)
        usleep(100);
    assert_true(expire_now_ms() > ran + 1);
    replay_and_compare(fx);
    aof_fx_free(fx);
}

/* The payload of DUMP key, from fx (malloc'd). */
static uint8_t *dump_of(aof_fx_t *fx, const char *key, size_t *len)
{
    const cf_filter_t *f =
        ks_find(fx->f.s.dbs[0], key, strlen(key), &(int64_t){0});
    assert_non_null(f);
    uint8_t *p;
    assert_int_equal(dump_encode(f, &p, len), 0);
    return p;
}

static void test_restore_absttl(void **state)
{
    (void)state;
    aof_fx_t *fx = aof_fx_new(true);
    FX(fx, "CF.ADD", "a", "x");
    size_t len;
    uint8_t *p = dump_of(fx, "a", &len);
    feed_clear(fx->feed);
    arg_t r[] = {{"RESTORE", 7}, {"b", 1}, {"60000", 5}, {(char *)p, len}};
    assert_string_equal(fx_runv(fx, 4, r), "+OK\r\n");
    assert_int_equal(fx->feed->n, 1);
    const argv_t *a = fx->feed->cmd[0];
    assert_int_equal(a->argc, 5);
    assert_true(feed_arg_is_ll(fx->feed, 0, 2, when_of(fx, "b")));
    assert_true(arg_is(&a->v[4], "absttl"));
    assert_memory_equal(a->v[3].ptr, p, len);
    feed_clear(fx->feed);
    /* replacing with a time already past deletes: logged as DEL */
    arg_t r2[] = {{"RESTORE", 7},   {"b", 1},       {"1", 1},
                  {(char *)p, len}, {"REPLACE", 7}, {"ABSTTL", 6}};
    assert_string_equal(fx_runv(fx, 6, r2), "+OK\r\n");
    assert_int_equal(fx->feed->n, 1);
    assert_true(FEED_IS(fx->feed, 0, "DEL", "b"));
    free(p);
    aof_fx_free(fx);
}

/* A key found past its time by a command is logged as DEL before the
 * command, the two in a transaction (Redis 7.0); one reclaimed by active
 * expiry as a DEL alone. */
static void test_expiry_logs_del(void **state)
{
    (void)state;
    aof_fx_t *fx = aof_fx_new(true);
    FX(fx, "CF.ADD", "a", "x");
    FX(fx, "CF.ADD", "b", "x");
    int64_t past = expire_now_ms() - 1000;
    assert_int_equal(ks_set_expire(fx->f.s.dbs[0], "a", 1, past), 0);
    assert_int_equal(ks_set_expire(fx->f.s.dbs[0], "b", 1, past), 0);
    feed_clear(fx->feed);
    FX(fx, "CF.ADD", "a", "y");
    assert_int_equal(fx->feed->n, 5);
    assert_true(FEED_IS(fx->feed, 0, "MULTI"));
    assert_true(FEED_IS(fx->feed, 1, "DEL", "a"));
    assert_true(arg_is(&fx->feed->cmd[2]->v[0], "cf.loadchunk"));
    assert_true(FEED_IS(fx->feed, 3, "CF.ADD", "a", "y"));
    assert_true(FEED_IS(fx->feed, 4, "EXEC"));
    /* a read that reclaims: the DEL alone */
    feed_clear(fx->feed);
    assert_int_equal(ks_set_expire(fx->f.s.dbs[0], "a", 1, past), 0);
    FX(fx, "CF.EXISTS", "a", "y");
    assert_int_equal(fx->feed->n, 1);
    assert_true(FEED_IS(fx->feed, 0, "DEL", "a"));
    feed_clear(fx->feed);
    expire_cron(&fx->f.s);
    assert_int_equal(fx->feed->n, 1);
    assert_true(FEED_IS(fx->feed, 0, "DEL", "b"));
    assert_int_equal(ks_size(fx->f.s.dbs[0]), 0);
    aof_fx_free(fx);
}

static void test_transactions(void **state)
{
    (void)state;
    aof_fx_t *fx = aof_fx_new(true);
    FX(fx, "CF.RESERVE", "a", "100");
    FX(fx, "CF.RESERVE", "b", "100");
    feed_clear(fx->feed);
    FX(fx, "MULTI");
    FX(fx, "CF.ADD", "a", "x");
    FX(fx, "CF.EXISTS", "a", "x");
    FX(fx, "SELECT", "3");
    FX(fx, "CF.ADD", "b", "y");
    FX(fx, "EXEC");
    assert_int_equal(fx->feed->n, 5);
    assert_true(FEED_IS(fx->feed, 0, "MULTI"));
    assert_int_equal(fx->feed->dbnum[0], 0);
    assert_true(FEED_IS(fx->feed, 1, "CF.ADD", "a", "x"));
    assert_int_equal(fx->feed->dbnum[1], 0);
    assert_true(arg_is(&fx->feed->cmd[2]->v[0], "cf.loadchunk"));
    assert_int_equal(fx->feed->dbnum[2], 3);
    assert_true(FEED_IS(fx->feed, 3, "CF.ADD", "b", "y"));
    assert_true(FEED_IS(fx->feed, 4, "EXEC"));
    assert_int_equal(fx->feed->dbnum[4], 3);
    /* one write: alone, as Redis 7.0 feeds it; none: nothing */
    feed_clear(fx->feed);
    FX(fx, "SELECT", "0");
    FX(fx, "MULTI");
    FX(fx, "CF.ADD", "a", "z");
    FX(fx, "CF.EXISTS", "a", "z");
    FX(fx, "EXEC");
    FX(fx, "MULTI");
    FX(fx, "CF.EXISTS", "a", "z");
    FX(fx, "EXEC");
    FX(fx, "MULTI");
    FX(fx, "CF.ADD", "a", "w");
    FX(fx, "DISCARD");
    assert_int_equal(fx->feed->n, 1);
    assert_true(FEED_IS(fx->feed, 0, "CF.ADD", "a", "z"));
    aof_fx_free(fx);
}

static void test_flushes(void **state)
{
    (void)state;
    aof_fx_t *fx = aof_fx_new(true);
    FX(fx, "FLUSHDB");
    FX(fx, "CF.ADD", "a", "x");
    feed_clear(fx->feed);
    FX(fx, "FLUSHALL");
    FX(fx, "FLUSHDB", "SYNC");
    assert_int_equal(fx->feed->n, 2);
    assert_true(FEED_IS(fx->feed, 0, "FLUSHALL"));
    assert_true(FEED_IS(fx->feed, 1, "FLUSHDB", "SYNC"));
    aof_fx_free(fx);
}

/* ---- a random workload ---------------------------------------------- */

static uint64_t rng = 0x243F6A8885A308D3ull;

static unsigned rnd(unsigned n)
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return (unsigned)(rng % n);
}

/* CF.SCANDUMP key it in fx, its reply parsed: the next iterator (0 at the
 * end) and the chunk (malloc'd into *data). */
static long long scandump(aof_fx_t *fx, const char *key, long long it,
                          char **data, size_t *len)
{
    char its[24];
    snprintf(its, sizeof(its), "%lld", it);
    arg_t argv[3] = {{"CF.SCANDUMP", 11}, {key, strlen(key)}, {its, 0}};
    argv[2].len = strlen(its);
    const char *r = fx_runv(fx, 3, argv); /* NUL-terminated */
    long long next;
    int used = 0;
    assert_int_equal(sscanf(r, "*2\r\n:%lld\r\n%n", &next, &used), 1);
    const char *b = r + used;
    *data = NULL;
    *len = 0;
    if (b[0] == '$' && b[1] != '-') {
        char *end;
        *len = strtoull(b + 1, &end, 10);
        *data = malloc(*len + 1);
        assert_non_null(*data);
        memcpy(*data, end + 2, *len);
    }
    return next;
}

/* Copies filter src to dst through CF.SCANDUMP / CF.LOADCHUNK. */
static void copy_by_chunks(aof_fx_t *fx, const char *src, const char *dst)
{
    long long it = 0;
    char *data;
    size_t len;
    while ((it = scandump(fx, src, it, &data, &len)) != 0) {
        char its[24];
        snprintf(its, sizeof(its), "%lld", it);
        arg_t argv[4] = {{"CF.LOADCHUNK", 12},
                         {dst, strlen(dst)},
                         {its, strlen(its)},
                         {data, len}};
        assert_string_equal(fx_runv(fx, 4, argv), "+OK\r\n");
        free(data);
    }
}

/* A filter made by CF.LOADCHUNK is its own record: the chunks are logged
 * as they came, with no header before them. */
static void test_loadchunk_logs_itself(void **state)
{
    (void)state;
    aof_fx_t *fx = aof_fx_new(true);
    FX(fx, "CF.RESERVE", "src", "1000");
    FX(fx, "CF.ADD", "src", "x");
    feed_clear(fx->feed);
    copy_by_chunks(fx, "src", "dst");
    assert_true(fx->feed->n >= 2); /* the header chunk and the data */
    for (size_t i = 0; i < fx->feed->n; i++) {
        assert_int_equal(fx->feed->cmd[i]->argc, 4);
        assert_true(arg_is(&fx->feed->cmd[i]->v[0], "cf.loadchunk"));
        assert_true(arg_is(&fx->feed->cmd[i]->v[1], "dst"));
    }
    assert_true(arg_is(&fx->feed->cmd[0]->v[2], "1"));
    aof_fx_free(fx);
}

/* Adds refused by a full filter (EXPANSION 0, the stash taken). */
static unsigned full_seen;

static void random_step(aof_fx_t *fx, int step)
{
    char k[8], k2[8], item[16], n[24], db[4];
    snprintf(k, sizeof(k), "k%u", rnd(12));
    snprintf(k2, sizeof(k2), "k%u", rnd(12));
    snprintf(item, sizeof(item), "i%u", rnd(3000));
    snprintf(db, sizeof(db), "%u", rnd(3));
    /* Mostly small filters, so that tables fill, kick, stash and grow. */
    unsigned op = rnd(40);
    if (op >= 19 && rnd(4) != 0 &&
        !expire_exists(&fx->f.s, fx->c.dbnum, k, strlen(k)))
        op = 0;
    switch (op) {
    case 0:
        snprintf(n, sizeof(n), "%u", 4 + rnd(60));
        FX(fx, "CF.RESERVE", k, n, "BUCKETSIZE", rnd(2) ? "1" : "4",
           "MAXITERATIONS", rnd(2) ? "3" : "20", "EXPANSION",
           rnd(3) == 0 ? "0"
           : rnd(2)    ? "1"
                       : "2");
        break;
    case 1:
        FX(fx, "CF.INSERTNX", k, "CAPACITY", "16", "ITEMS", item, "x", "y");
        break;
    case 2:
        FX(fx, "CF.INSERT", k, "ITEMS", item, item, "z");
        break;
    case 3:
    case 4:
    case 5:
    case 6:
        FX(fx, "CF.DEL", k, item);
        break;
    case 7:
        FX(fx, "EXPIRE", k, "1000");
        break;
    case 8:
        FX(fx, "PERSIST", k);
        break;
    case 9:
        FX(fx, "COPY", k, k2, "DB", db, "REPLACE");
        break;
    case 10:
        FX(fx, "RENAME", k, k2);
        break;
    case 11:
        FX(fx, "MOVE", k, db);
        break;
    case 12:
        FX(fx, "SELECT", db);
        break;
    case 13:
        if (step % 7 == 0)
            FX(fx, "SWAPDB", "0", db);
        break;
    case 14:
        FX(fx, "DEL", k);
        break;
    case 15:
        if (expire_lookup(&fx->f.s, fx->c.dbnum, k, strlen(k), NULL) &&
            strcmp(k, k2) != 0) {
            FX(fx, "DEL", k2);
            copy_by_chunks(fx, k, k2);
        }
        break;
    case 16:
        FX(fx, "MULTI");
        FX(fx, "CF.ADD", k, item);
        FX(fx, "CF.ADDNX", k2, item);
        FX(fx, "CF.DEL", k, "i1");
        FX(fx, "EXEC");
        break;
    case 17:
        FX(fx, "RENAMENX", k, k2);
        break;
    case 18:
        FX(fx, "PEXPIRE", k, "500000", "GT");
        break;
    case 19:
        FX(fx, "CF.COMPACT", k);
        break;
    default:
        if (strstr(FX(fx, rnd(4) == 0 ? "CF.ADDNX" : "CF.ADD", k, item),
                   "Filter is full") != NULL)
            full_seen++;
        break;
    }
}

static void test_random_workload_replays(void **state)
{
    (void)state;
    aof_fx_t *fx = aof_fx_new(true);
    for (int i = 0; i < 30000; i++)
        random_step(fx, i);
    FX(fx, "SELECT", "0");
    /* the workload did reach full tables, and grown filters */
    assert_true(full_seen > 0);
    size_t grown = 0;
    for (int d = 0; d < 3; d++)
        for (int i = 0; i < 12; i++) {
            char k[8];
            snprintf(k, sizeof(k), "k%d", i);
            const cf_filter_t *f =
                ks_find(fx->f.s.dbs[d], k, strlen(k), &(int64_t){0});
            grown += f != NULL && cf_nfilters(f) > 1;
        }
    assert_true(grown > 0);
    replay_and_compare(fx);
    aof_fx_free(fx);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_verbatim_reads_refusals),
        cmocka_unit_test(test_created_filter_logs_header),
        cmocka_unit_test(test_loadchunk_logs_itself),
        cmocka_unit_test(test_expire_absolute),
        cmocka_unit_test(test_times_replay_absolute),
        cmocka_unit_test(test_restore_absttl),
        cmocka_unit_test(test_expiry_logs_del),
        cmocka_unit_test(test_transactions),
        cmocka_unit_test(test_flushes),
        cmocka_unit_test(test_random_workload_replays),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
