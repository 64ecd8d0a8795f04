/*
 * test_expire.c - server/expire.c: what an expiry and a timeout change
 * tell the server (the key-change signal, expired_keys, no dirty), the
 * lazy check, and active expiry reaching every database without a read.
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

#include "expire.h"
#include "server_int.h"
#include "unit_fixture.h"

typedef struct fx {
    srv_fixture_t f;
    int signals; /* key-change signals heard */
    int last_db; /* and the last one's database and key */
    char last[32];
} fx_t;

static fx_t *current;

static void on_key_changed(server_t *s, int dbnum, const void *key, size_t len)
{
    (void)s;
    current->signals++;
    current->last_db = dbnum;
    snprintf(current->last, sizeof(current->last), "%.*s", (int)len,
             (const char *)key);
}

static int setup(void **state)
{
    fx_t *fx = calloc(1, sizeof(*fx));
    assert_non_null(fx);
    srv_fixture_init(&fx->f);
    srv_fixture_start(&fx->f);
    fx->f.s.on_key_changed = on_key_changed;
    current = fx;
    *state = fx;
    return 0;
}

static int teardown(void **state)
{
    fx_t *fx = *state;
    assert_int_equal(srv_fixture_free(&fx->f), 0);
    free(fx);
    return 0;
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
    int64_t later = expire_now_ms() + 100000;
    add_key(s, 1, "k");
    assert_int_equal(expire_get(s, 1, "k", 1), -1);
    assert_int_equal(expire_get(s, 1, "nope", 4), -2);
    assert_int_equal(expire_set(s, 1, "nope", 4, later), -ENOENT);
    assert_int_equal(fx->signals, 0);
    assert_int_equal(expire_set(s, 1, "k", 1, later), 0);
    assert_int_equal(fx->signals, 1);
    assert_int_equal(fx->last_db, 1);
    assert_string_equal(fx->last, "k");
    assert_int_equal(expire_get(s, 1, "k", 1), later);
    assert_int_equal(expire_clear(s, 1, "k", 1), 1);
    assert_int_equal(fx->signals, 2);
    assert_int_equal(expire_clear(s, 1, "k", 1), 0); /* nothing changed */
    assert_int_equal(fx->signals, 2);
    assert_int_equal(expire_get(s, 1, "k", 1), -1);
    assert_true(expire_exists(s, 1, "k", 1));
    assert_int_equal(fx->signals, 2); /* a lookup of a live key is silent */
    assert_int_equal(s->dirty, 0);    /* the commands count, not the API */
}

static void test_lazy_expiry(void **state)
{
    fx_t *fx = *state;
    server_t *s = &fx->f.s;
    add_key(s, 0, "old");
    add_key(s, 0, "young");
    uint64_t empty_bytes = ks_bytes(s->dbs[3]);
    add_key(s, 3, "old");
    assert_int_equal(expire_set(s, 0, "old", 3, expire_now_ms() - 1), 0);
    assert_int_equal(expire_set(s, 3, "old", 3, 0), 0);
    assert_int_equal(expire_set(s, 0, "young", 5, expire_now_ms() + 100000), 0);
    fx->signals = 0;
    /* still stored: nothing looked at it yet */
    assert_int_equal(ks_size(s->dbs[0]), 2);
    int64_t when = 5;
    assert_null(expire_lookup(s, 0, "old", 3, &when));
    assert_int_equal(when, -1);
    assert_int_equal(fx->signals, 1);
    assert_string_equal(fx->last, "old");
    assert_int_equal(s->expired_keys, 1);
    assert_int_equal(ks_size(s->dbs[0]), 1);
    assert_non_null(expire_lookup(s, 0, "young", 5, &when));
    assert_true(when > expire_now_ms());
    assert_int_equal(expire_get(s, 3, "old", 3), -2);
    assert_int_equal(fx->last_db, 3);
    assert_int_equal(s->expired_keys, 2);
    assert_int_equal(fx->signals, 2);
    assert_int_equal(ks_bytes(s->dbs[3]), empty_bytes);
    assert_int_equal(s->dirty, 0); /* as Redis: an expiry is no change */
}

/* Active expiry: keys nobody reads go from every database, cycle by
 * cycle, each signalled and counted once; live keys stay. */
static void test_active_expiry(void **state)
{
    fx_t *fx = *state;
    server_t *s = &fx->f.s;
    const int dbs[] = {0, 7, 15};
    char k[32];
    int64_t past = expire_now_ms() - 1, future = past + 1000000;
    for (int d = 0; d < 3; d++)
        for (int i = 0; i < 3000; i++) {
            snprintf(k, sizeof(k), "k%d", i);
            add_key(s, dbs[d], k);
            assert_int_equal(expire_set(s, dbs[d], k, strlen(k),
                                        i % 10 == 0 ? future : past),
                             0);
        }
    fx->signals = 0;
    int cycles = 0;
    while (s->expired_keys < 3 * 2700 && cycles < 100000) {
        expire_cron(s);
        cycles++;
    }
    assert_int_equal(s->expired_keys, 3 * 2700);
    assert_int_equal(fx->signals, 3 * 2700);
    for (int d = 0; d < 3; d++) {
        assert_int_equal(ks_size(s->dbs[dbs[d]]), 300);
        assert_int_equal(ks_expires(s->dbs[dbs[d]]), 300);
    }
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
