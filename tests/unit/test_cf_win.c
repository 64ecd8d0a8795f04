/* Unit tests of the window kind: randomised adds, re-adds, deletes and
 * clock steps through many windows against an exact model (no false
 * negative inside the window, nothing present past the window and its
 * slack), clock jumps far past the stamps' range (reclaimed a few buckets
 * per call), the serialised form
 * with the clock moved between save and load, determinism, refusals of
 * damaged or lying headers, a full filter that loses nothing, and the
 * parameters. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#define WM_CHECK(cond) assert_true(cond)
#include "cf_serial.h"
#include "cf_win_model.h"

/* A start far from 0, as a unix time in ms is. */
#define T0 1700000000000ull

static uint64_t rnd(uint64_t *s)
{
    uint64_t x = *s;
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    return *s = x;
}

static void check_all(wm_t *m)
{
    for (uint32_t i = 0; i < WM_UNIVERSE; i++)
        wm_check(m, i);
    wm_check_counts(m);
}

static void random_ops_through_many_windows(void **state)
{
    (void)state;
    uint64_t rs = 0x1234567;
    wm_t *m = wm_new(1000, 8000, 42, T0);
    uint64_t windows_start = m->now;
    for (int op = 0; op < 300000; op++) {
        uint64_t r = rnd(&rs);
        uint32_t i = (uint32_t)(r >> 40) % WM_UNIVERSE;
        unsigned kind = (unsigned)(r % 1000);
        if (kind < 400) {
            wm_add(m, i, 0, false);
        } else if (kind < 450) { /* an add at a time in the past */
            uint64_t back = (r >> 20) % (3 * m->window);
            wm_add(m, i, m->now > back ? m->now - back : 1, false);
        } else if (kind < 550) {
            wm_add(m, i, 0, true);
        } else if (kind < 620) {
            wm_del(m, i);
        } else if (kind < 985) {
            wm_check(m, i);
        } else if (kind < 999) {
            wm_step(m, (r >> 16) % (2 * m->slice));
        } else {
            /* now and then a long step: 16 slices (a stamp's whole
             * range) or many windows at once */
            wm_step(m, (r & 0x10000) ? 16 * m->slice : 1000 * m->window);
        }
        if (op % 20000 == 0)
            check_all(m);
    }
    check_all(m);
    print_message("adds %llu refused %llu dels %llu windows %llu\n",
                  (unsigned long long)m->adds, (unsigned long long)m->refused,
                  (unsigned long long)m->dels,
                  (unsigned long long)((m->now - windows_start) / m->window));
    /* it ran through many windows and most adds fitted */
    assert_true(m->now - windows_start > 50 * m->window);
    assert_true(m->adds > 100000 && m->dels > 1000);
    assert_true(m->refused < m->adds / 100);
    wm_free(m);
}

/* The stamps name 16 slices; a filter no write touched while the clock
 * went 16, 17 or thousands of slices on must still forget, and the next
 * write must not read an old stamp as a new one. */
static void clock_jumps_past_the_stamps(void **state)
{
    (void)state;
    static const uint64_t jumps[] = {15, 16, 17, 31, 32, 33, 100000};
    for (size_t k = 0; k < sizeof(jumps) / sizeof(jumps[0]); k++) {
        wm_t *m = wm_new(200, 1600, 7, T0);
        for (uint32_t i = 0; i < 100; i++)
            wm_add(m, i, 0, false);
        wm_step(m, 3 * m->slice);
        for (uint32_t i = 100; i < 150; i++)
            wm_add(m, i, 0, false);
        check_all(m);
        wm_step(m, jumps[k] * m->slice);
        check_all(m);
        /* writes after the jump: new items live, old ones stay gone */
        for (uint32_t i = 140; i < 190; i++)
            wm_add(m, i, 0, false);
        check_all(m);
        wm_step(m, (CF_WIN_SLICES - 1) * m->slice);
        check_all(m);
        wm_free(m);
    }
}

/* A clock jump on a big filter: no call passes the whole table. The
 * first write after it starts a reclaim pass; each write reclaims a few
 * buckets, a sweep at most its budget, and every answer stays exact while
 * the pass runs, through a second jump within the pass, and through a
 * copy made mid-pass. */
static void jump_reclaims_a_little_per_call(void **state)
{
    (void)state;
    wm_t *m = wm_new(100000, 8000, 3, T0);
    cf_stats_t st;
    cf_window_info_t wi;
    cf_stats(m->f, &st);
    assert_true(st.nbuckets > 20000);
    for (uint32_t i = 0; i < 3000; i++)
        wm_add(m, i, 0, false);
    wm_step(m, 2 * m->slice);
    for (uint32_t i = 3000; i < 3500; i++)
        wm_add(m, i, 0, false);
    wm_step(m, 1000 * m->window);
    check_all(m);
    /* writes: each reclaims at most a handful of buckets */
    for (uint32_t i = 3400; i < 3600; i++) {
        wm_add(m, i, 0, false);
        if (i % 50 == 0)
            check_all(m);
    }
    assert_true(cf_window_info(m->f, &wi));
    assert_true(wi.max_visit <= 8);
    assert_true(wi.stale > 2500); /* the pass has far to go */
    check_all(m);
    /* a copy made mid-pass answers the same (the form has no pass) */
    size_t hlen, n, used;
    uint8_t *buf = serialised(m->f, 1 << 20, &hlen, &n);
    cf_filter_t *g = NULL;
    assert_int_equal(cf_load_header(buf, n, NULL, &g, &used), 0);
    assert_int_equal(cf_load_data(g, 0, buf + hlen, n - hlen), 0);
    cf_set_time(g, m->now, m->now);
    cf_filter_t *orig = m->f;
    m->f = g;
    check_all(m);
    m->f = orig;
    cf_free(g);
    free(buf);
    /* a second jump: the write after it ends the first pass */
    wm_step(m, 3 * m->window);
    check_all(m);
    for (uint32_t i = 0; i < 100; i++)
        wm_add(m, i, 0, false);
    check_all(m);
    /* sweeps of a budget of 1000 buckets end the pass */
    for (int k = 0; k < 1000; k++) {
        cf_sweep(m->f, 1000);
        assert_true(cf_window_info(m->f, &wi));
        if (wi.stale == 0)
            break;
        if (k % 10 == 0)
            check_all(m);
    }
    assert_int_equal(wi.stale, 0);
    check_all(m);
    assert_true(wi.max_visit < st.nbuckets);
    wm_free(m);
}

/* A filter in version 1's layout (16-bit lanes as they are: what filters
 * saved before version 2 load into) answers as exactly through the same
 * random operations, saves as version 1 and loads back the same bytes. */
static void version_1_layout_kept(void **state)
{
    (void)state;
    uint64_t rs = 0x777;
    wm_t *m = wm_new(1000, 8000, 9, T0);
    cf_filter_t *g;
    assert_int_equal(cf_win_new(1000, 8000, 0, true, &g), 0);
    g->seed = m->f->seed;
    g->u.win->max_kicks = m->f->u.win->max_kicks;
    g->u.win->rng = m->f->u.win->rng;
    cf_set_time(g, m->now, m->now);
    cf_free(m->f);
    m->f = g;
    for (int op = 0; op < 100000; op++) {
        uint64_t r = rnd(&rs);
        uint32_t i = (uint32_t)(r >> 40) % WM_UNIVERSE;
        unsigned kind = (unsigned)(r % 100);
        if (kind < 45)
            wm_add(m, i, 0, kind < 10);
        else if (kind < 52)
            wm_del(m, i);
        else if (kind < 99)
            wm_check(m, i);
        else
            wm_step(m, (r >> 16) % (3 * m->slice));
    }
    check_all(m);
    size_t hlen, n, used;
    uint8_t *buf = serialised(m->f, 1000, &hlen, &n);
    assert_int_equal(le_load16(buf + 4), 1);
    assert_int_equal(n - hlen, 8 * m->f->u.win->nbuckets);
    assert_int_equal(cf_load_header(buf, n, NULL, &g, &used), 0);
    assert_int_equal(cf_load_data(g, 0, buf + hlen, n - hlen), 0);
    assert_same_bytes(m->f, g);
    cf_free(g);
    free(buf);
    wm_free(m);
}

/* The promise at its edges: present at exactly window ms after the add,
 * gone at window + slack. */
static void edges_of_the_window(void **state)
{
    (void)state;
    cf_params_t p;
    cf_filter_t *f;
    cf_params_default(&p);
    p.capacity = 100;
    p.window_ms = 10000;
    assert_int_equal(cf_create(&p, &f), 0);
    cf_window_info_t wi;
    assert_true(cf_window_info(f, &wi));
    assert_int_equal(wi.window_ms, 10000);
    assert_int_equal(wi.slice_ms, 1250);
    assert_int_equal(wi.slack_ms, 1250);
    /* every offset within a slice, each add long after the last one's
     * window (the clock never goes back) */
    for (uint64_t t = T0, k = 0; k < 1250; t += 100000 + 97, k += 97) {
        cf_set_time(f, t, t);
        assert_int_equal(cf_add(f, "x", 1), 0);
        cf_set_time(f, t + 10000, t + 10000);
        assert_true(cf_exists(f, "x", 1));
        cf_set_time(f, t + 10000 + 1250, t + 10000 + 1250);
        assert_false(cf_exists(f, "x", 1));
        assert_int_equal(cf_count(f, "x", 1), 0);
        assert_int_equal(cf_del(f, "x", 1), 0);
    }
    /* a re-add refreshes: present a window after the last add */
    uint64_t t = T0 + 100000000;
    cf_set_time(f, t, t);
    assert_int_equal(cf_add(f, "y", 1), 0);
    cf_set_time(f, t + 8000, t + 8000);
    assert_int_equal(cf_add_nx(f, "y", 1), 0);
    cf_set_time(f, t + 17000, t + 17000);
    assert_true(cf_exists(f, "y", 1));
    assert_int_equal(cf_count(f, "y", 1), 1);
    cf_set_time(f, t + 8000 + 11250, t + 8000 + 11250);
    assert_false(cf_exists(f, "y", 1));
    /* the clock never goes back */
    cf_set_time(f, t, t);
    assert_false(cf_exists(f, "y", 1));
    /* an add dated before the window is stored nowhere */
    cf_set_time(f, t + 100000, t + 100000 - 20000);
    assert_int_equal(cf_add_nx(f, "z", 1), 1);
    assert_false(cf_exists(f, "z", 1));
    cf_stats_t st;
    cf_stats(f, &st);
    assert_int_equal(st.form, CF_FORM_WINDOW);
    assert_int_equal(st.items, 0);
    cf_free(f);
}

/* Saved at one time, loaded (in chunks) and read at a later one: the same
 * answers as the original at that time, and as the model. */
static void serialised_with_the_clock_moved(void **state)
{
    (void)state;
    uint64_t rs = 99;
    wm_t *m = wm_new(1000, 8000, 5, T0);
    for (int op = 0; op < 20000; op++) {
        uint64_t r = rnd(&rs);
        wm_add(m, (uint32_t)(r >> 40) % WM_UNIVERSE, 0, false);
        if (op % 200 == 0)
            wm_step(m, m->slice / 3);
    }
    size_t hlen, n;
    uint8_t *buf = serialised(m->f, 1000, &hlen, &n);
    assert_int_equal(hlen, CF_WIN_HDR_LEN);
    for (uint64_t later = 0; later <= 12; later += 3) {
        cf_filter_t *g = NULL;
        size_t used;
        assert_int_equal(cf_load_header(buf, n, NULL, &g, &used), 0);
        assert_int_equal(used, hlen);
        for (size_t off = 0; off < n - hlen; off += 777) {
            size_t len = n - hlen - off < 777 ? n - hlen - off : 777;
            assert_int_equal(cf_load_data(g, off, buf + hlen + off, len), 0);
        }
        if (later == 0)
            assert_same_bytes(m->f, g);
        cf_filter_t *orig = m->f;
        uint64_t t = m->now + later * m->slice;
        cf_set_time(g, t, t);
        m->f = g;
        uint64_t was = m->now;
        m->now = t;
        cf_set_time(orig, t, t);
        check_all(m);
        m->f = orig;
        m->now = was;
        cf_free(g);
    }
    free(buf);
    wm_free(m);
}

/* The same operations make the same bytes (a replica, a replay). */
static void deterministic(void **state)
{
    (void)state;
    wm_t *a = wm_new(500, 4000, 11, T0), *b = wm_new(500, 4000, 11, T0);
    uint64_t rs = 3;
    for (int op = 0; op < 30000; op++) {
        uint64_t r = rnd(&rs);
        uint32_t i = (uint32_t)(r >> 40) % WM_UNIVERSE;
        if (r % 10 == 0) {
            wm_del(a, i);
            wm_del(b, i);
        } else if (r % 97 == 0) {
            wm_step(a, a->slice);
            wm_step(b, b->slice);
        } else {
            wm_add(a, i, 0, false);
            wm_add(b, i, 0, false);
        }
    }
    assert_same_bytes(a->f, b->f);
    assert_int_equal(cf_sweep(a->f, 1000000), cf_sweep(b->f, 1000000));
    assert_same_bytes(a->f, b->f);
    wm_free(a);
    wm_free(b);
}

/* A header whose checksum or fields lie is refused; no byte of the data
 * can make a load fail or the counts lie. */
static void damaged_headers_are_refused(void **state)
{
    (void)state;
    wm_t *m = wm_new(300, 4000, 1, T0);
    for (uint32_t i = 0; i < 200; i++)
        wm_add(m, i, 0, false);
    size_t hlen, n;
    uint8_t *buf = serialised(m->f, 4096, &hlen, &n);
    cf_filter_t *g;
    size_t used;
    for (size_t k = 0; k < hlen; k++) {
        buf[k] ^= 0x10;
        assert_int_not_equal(cf_load_header(buf, n, NULL, &g, &used), 0);
        assert_null(g);
        buf[k] ^= 0x10;
    }
    /* fields that lie under a good checksum */
    static const struct {
        size_t off, width;
        uint64_t v;
    } lies[] = {
        {6, 2, 95},          {12, 1, 7},     {13, 1, 3},        {8, 4, 0},
        {14, 2, 1},          {16, 8, 0},     {24, 8, 1},        {32, 8, 0},
        {32, 8, 1ull << 50}, {48, 8, ~0ull}, {64, 8, 1u << 30}, {72, 8, 0},
        {4, 2, 0},           {4, 2, 3},
    };
    for (size_t k = 0; k < sizeof(lies) / sizeof(lies[0]); k++) {
        uint8_t h[CF_WIN_HDR_LEN];
        memcpy(h, buf, sizeof(h));
        for (size_t b = 0; b < lies[k].width; b++)
            h[lies[k].off + b] = (uint8_t)(lies[k].v >> (8 * b));
        le_store64(h + 88, XXH3_64bits(h, 88));
        assert_int_equal(cf_load_header(h, sizeof(h), NULL, &g, &used),
                         -EINVAL);
    }
    /* too large for the caller's limit */
    cf_limits_t lim = {.max_bytes = 64};
    assert_int_equal(cf_load_header(buf, n, &lim, &g, &used), -ENOMEM);
    /* garbage data loads; the counts follow the slots */
    assert_int_equal(cf_load_header(buf, n, NULL, &g, &used), 0);
    uint64_t rs = 5;
    for (uint64_t off = 0; off < cf_data_len(g); off += 3) {
        uint8_t junk[3] = {(uint8_t)rnd(&rs), (uint8_t)rnd(&rs),
                           (uint8_t)rnd(&rs)};
        size_t len = cf_data_len(g) - off < 3 ? cf_data_len(g) - off : 3;
        assert_int_equal(cf_load_data(g, off, junk, len), 0);
    }
    assert_int_equal(cf_load_data(g, cf_data_len(g), "x", 1), -EINVAL);
    cf_window_info_t wi;
    assert_true(cf_window_info(g, &wi));
    assert_int_equal(cf_sweep(g, UINT64_MAX), wi.stale);
    assert_true(cf_window_info(g, &wi));
    assert_int_equal(wi.stale, 0);
    cf_free(g);
    free(buf);
    wm_free(m);
}

/* Past its capacity a filter refuses (-ENOSPC) and loses nothing. */
static void full_filter_loses_nothing(void **state)
{
    (void)state;
    wm_t *m = wm_new(400, 60000, 9, T0);
    for (uint32_t i = 0; i < WM_UNIVERSE; i++)
        wm_add(m, i, 0, false);
    assert_true(m->refused > 0);
    cf_window_info_t wi;
    assert_true(cf_window_info(m->f, &wi));
    /* it holds its capacity and the slack's share */
    assert_true(wi.live >= 400 + 400 / CF_WIN_SLICES);
    check_all(m);
    /* once the window has passed, the slots come back */
    wm_step(m, m->window + m->slack);
    for (uint32_t i = 0; i < 400; i++)
        wm_add(m, i, 0, false);
    check_all(m);
    wm_free(m);
}

static void params(void **state)
{
    (void)state;
    cf_params_t p;
    cf_filter_t *f;
    cf_params_default(&p);
    p.window_ms = 1000;
    p.bucket_size = 2;
    assert_int_equal(cf_params_check(&p), -EINVAL);
    p.bucket_size = 4;
    p.growable = 1;
    assert_int_equal(cf_params_check(&p), -EINVAL);
    p.growable = 0;
    p.window_ms = CF_MAX_WINDOW_MS + 1;
    assert_int_equal(cf_create(&p, &f), -EINVAL);
    p.window_ms = 1;
    p.capacity = 1000;
    /* 60 bits a bucket, and a word of padding */
    assert_int_equal(cf_params_table_bytes(&p),
                     (cf_win_buckets_for(1000) * 15 + 1) / 2 + 8);
    p.max_bytes = 100;
    assert_int_equal(cf_create(&p, &f), -ENOMEM);
    p.max_bytes = 0;
    assert_int_equal(cf_create(&p, &f), 0);
    cf_window_info_t wi;
    assert_true(cf_window_info(f, &wi));
    assert_int_equal(wi.slice_ms, 1);
    assert_int_equal(cf_size_bytes(f), cf_size_bytes_at(f, cf_nfilters(f)));
    cf_free(f);
    /* other kinds: no window, nothing to sweep */
    p.window_ms = 0;
    assert_int_equal(cf_create(&p, &f), 0);
    assert_false(cf_window_info(f, &wi));
    assert_int_equal(cf_sweep(f, 100), 0);
    cf_free(f);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(random_ops_through_many_windows),
        cmocka_unit_test(clock_jumps_past_the_stamps),
        cmocka_unit_test(jump_reclaims_a_little_per_call),
        cmocka_unit_test(version_1_layout_kept),
        cmocka_unit_test(edges_of_the_window),
        cmocka_unit_test(serialised_with_the_clock_moved),
        cmocka_unit_test(deterministic),
        cmocka_unit_test(damaged_headers_are_refused),
        cmocka_unit_test(full_filter_loses_nothing),
        cmocka_unit_test(params),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
