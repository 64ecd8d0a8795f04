/*
 * test_expire.c - server/expire.c: what an expiry and a timeout change
 * tell the server (the key-change signal, seen by WATCH; expired_keys; no
 * dirty), the lazy check, and active expiry reaching every database
 * without a read.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmdtab.h"
#include "expire.h"
#include "multi.h"
#include "server_int.h"
#include "unit_fixture.h"

/* WATCH is what hears a key change: each test client watches keys, and
 * its EXEC answers nil when one of them changed since. */
#define NCLIENTS 4

typedef struct fx {
    srv_fixture_t f;
    client_t c[NCLIENTS];
} fx_t;

static int setup(void **state)
{
    fx_t *fx = calloc(1, sizeof(*fx));
    assert_non_null(fx);
    srv_fixture_init(&fx->f);
    srv_fixture_start(&fx->f);
    assert_int_equal(multi_init(&fx->f.s), 0);
    for (int i = 0; i < NCLIENTS; i++)
        srv_fixture_client(&fx->f, &fx->c[i]);
    *state = fx;
    return 0;
}

static int teardown(void **state)
{
    fx_t *fx = *state;
    for (int i = 0; i < NCLIENTS; i++) {
        multi_client_free(&fx->c[i]);
        resp_out_release(&fx->c[i].out);
    }
    multi_free(&fx->f.s);
    assert_int_equal(srv_fixture_free(&fx->f), 0);
    free(fx);
    return 0;
}

static const cmd_def_t *multi_cmd(const char *name)
{
    for (const cmd_def_t *d = multi_table; d->name != NULL; d++)
        if (strcmp(d->name, name) == 0)
            return d;
    fail_msg("no %s in multi_table", name);
    return NULL;
}

/* c WATCHes key in database db. */
static void watch(client_t *c, int db, const char *key)
{
    arg_t argv[2] = {{"watch", 5}, {key, strlen(key)}};
    c->dbnum = db;
    c->db = c->srv->dbs[db];
    multi_cmd("watch")->proc(c, 2, argv);
    assert_int_equal(c->out.len, 5);
    assert_memory_equal(c->out.buf, "+OK\r\n", 5);
    c->out.len = 0;
}

/* MULTI, then EXEC of nothing: whether EXEC answered nil (a watched key
 * changed). Either way c watches nothing after it. */
static bool exec_fails(client_t *c)
{
    arg_t multi = {"multi", 5}, exec = {"exec", 4};
    multi_cmd("multi")->proc(c, 1, &multi);
    c->out.len = 0;
    multi_cmd("exec")->proc(c, 1, &exec);
    bool nil = c->out.len == 5 && memcmp(c->out.buf, "*-1\r\n", 5) == 0;
    assert_true(nil ||
                (c->out.len == 4 && memcmp(c->out.buf, "*0\r\n", 4) == 0));
    c->out.len = 0;
    return nil;
}

static void add_key(server_t *s, int db, const char *key)
{
    cf_params_t p;
    cf_params_default(&p);
    p.capacity = 8;
    cf_filter_t *f = NULL;
    assert_int_equal(cf_create(&p, &f), 0);
    assert_int_equal(ks_add(s->dbs[db], key, strlen(key), &f), 0);
}

static void test_set_clear_signal(void **state)
{
    fx_t *fx = *state;
    server_t *s = &fx->f.s;
    client_t *c = &fx->c[0], *other_db = &fx->c[1];
    int64_t later = expire_now_ms() + 100000;
    add_key(s, 0, "k");
    add_key(s, 1, "k");
    assert_int_equal(expire_get(s, 1, "k", 1), -1);
    assert_int_equal(expire_get(s, 1, "nope", 4), -2);
    watch(c, 1, "k");
    watch(c, 1, "nope");
    assert_int_equal(expire_set(s, 1, "nope", 4, later), -ENOENT);
    assert_false(exec_fails(c));
    watch(c, 1, "k");
    watch(other_db, 0, "k");
    assert_int_equal(expire_set(s, 1, "k", 1, later), 0);
    assert_true(exec_fails(c));
    assert_false(exec_fails(other_db)); /* the same name in another db */
    assert_int_equal(expire_get(s, 1, "k", 1), later);
    watch(c, 1, "k");
    assert_int_equal(expire_clear(s, 1, "k", 1), 1);
    assert_true(exec_fails(c));
    watch(c, 1, "k");
    assert_int_equal(expire_clear(s, 1, "k", 1), 0); /* nothing changed */
    assert_int_equal(expire_get(s, 1, "k", 1), -1);
    assert_true(expire_exists(s, 1, "k", 1));
    assert_false(exec_fails(c));   /* a lookup of a live key is silent */
    assert_int_equal(s->dirty, 0); /* the commands count, not the API */
}

/* A lazy expiry removes the key and signals it: EXEC finds the key gone
 * (nothing left for its own check to reclaim) and still answers nil. */
static void test_lazy_expiry(void **state)
{
    fx_t *fx = *state;
    server_t *s = &fx->f.s;
    client_t *old0 = &fx->c[0], *young = &fx->c[1], *old3 = &fx->c[2];
    add_key(s, 0, "old");
    add_key(s, 0, "young");
    uint64_t empty_bytes = ks_bytes(s->dbs[3]);
    add_key(s, 3, "old");
    /* Watched first (WATCH reclaims a key already past its time), then
     * given their times through the keyspace, which signals nothing. */
    watch(old0, 0, "old");
    watch(young, 0, "young");
    watch(old3, 3, "old");
    assert_int_equal(ks_set_expire(s->dbs[0], "old", 3, expire_now_ms() - 1),
                     0);
    assert_int_equal(ks_set_expire(s->dbs[3], "old", 3, 0), 0);
    assert_int_equal(
        ks_set_expire(s->dbs[0], "young", 5, expire_now_ms() + 100000), 0);
    /* still stored: nothing looked at it yet */
    assert_int_equal(ks_size(s->dbs[0]), 2);
    int64_t when = 5;
    assert_null(expire_lookup(s, 0, "old", 3, &when));
    assert_int_equal(when, -1);
    assert_int_equal(s->expired_keys, 1);
    assert_int_equal(ks_size(s->dbs[0]), 1);
    assert_true(exec_fails(old0));
    assert_non_null(expire_lookup(s, 0, "young", 5, &when));
    assert_true(when > expire_now_ms());
    assert_false(exec_fails(young));
    assert_int_equal(expire_get(s, 3, "old", 3), -2);
    assert_int_equal(s->expired_keys, 2);
    assert_int_equal(ks_size(s->dbs[3]), 0);
    assert_true(exec_fails(old3));
    assert_int_equal(s->expired_keys, 2);
    assert_int_equal(ks_bytes(s->dbs[3]), empty_bytes);
    assert_int_equal(s->dirty, 0); /* as Redis: an expiry is no change */
}

/* Active expiry: keys nobody reads go from every database, cycle by
 * cycle, each signalled and counted once; live keys stay. */
static void test_active_expiry(void **state)
{
    fx_t *fx = *state;
    server_t *s = &fx->f.s;
    client_t *live = &fx->c[3];
    const int dbs[] = {0, 7, 15};
    char k[32];
    int64_t past = expire_now_ms() - 1, future = past + 1000000;
    for (int d = 0; d < 3; d++) {
        for (int i = 0; i < 3000; i++) {
            snprintf(k, sizeof(k), "k%d", i);
            add_key(s, dbs[d], k);
        }
        watch(&fx->c[d], dbs[d], "k2999"); /* expires */
        watch(live, dbs[d], "k2990");      /* stays */
        for (int i = 0; i < 3000; i++) {
            snprintf(k, sizeof(k), "k%d", i);
            assert_int_equal(ks_set_expire(s->dbs[dbs[d]], k, strlen(k),
                                           i % 10 == 0 ? future : past),
                             0);
        }
    }
    int cycles = 0;
    while (s->expired_keys < 3 * 2700 && cycles < 100000) {
        expire_cron(s);
        cycles++;
    }
    assert_int_equal(s->expired_keys, 3 * 2700);
    for (int d = 0; d < 3; d++) {
        assert_int_equal(ks_size(s->dbs[dbs[d]]), 300);
        assert_int_equal(ks_expires(s->dbs[dbs[d]]), 300);
        assert_true(exec_fails(&fx->c[d]));
    }
    assert_false(exec_fails(live));
    assert_int_equal(s->expired_keys, 3 * 2700);
    assert_true(s->expired_stale_perc > 0);
    /* bounded: more cycles take nothing live */
    for (int i = 0; i < 100; i++)
        expire_cron(s);
    assert_int_equal(s->expired_keys, 3 * 2700);
    assert_int_equal(s->dirty, 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_set_clear_signal, setup, teardown),
        cmocka_unit_test_setup_teardown(test_lazy_expiry, setup, teardown),
        cmocka_unit_test_setup_teardown(test_active_expiry, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
