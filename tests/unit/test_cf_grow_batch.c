/* Unit tests of the growable shape's batched insert: cf_add_many() must
 * leave a filter byte for byte as the same items added one at a time in
 * the same order (an append-only file replays, and a replica re-runs,
 * CF.INSERT as the master ran it), with the same return code per item:
 * items that need relocation, duplicates up to and past the copy limit,
 * NX, a table that splits during a batch, and the memory limit running
 * out in the middle of one. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "cf.h"
#include "cf_grow.h"
#include "cf_grow_int.h"
/* after cf_grow_int.h: make_whole() */
#include "cf_grow_fixture.h"

/* The serialised bytes, and the state that is not serialised but steers
 * the next adds. */
static void assert_same(const cf_filter_t *a, const cf_filter_t *b)
{
    assert_same_bytes(a, b);
    struct cf_grow va, vb;
    const struct cf_grow *ga = gr_get(a, &va), *gb = gr_get(b, &vb);
    assert_int_equal(gr_inline(a), gr_inline(b));
    assert_int_equal(ga->nomem, gb->nomem);
    assert_int_equal(ga->cap, gb->cap);
    assert_int_equal(ga->steps, gb->steps);
    cf_grow_info_t ia, ib;
    cf_grow_info(a, &ia);
    cf_grow_info(b, &ib);
    assert_memory_equal(&ia, &ib, sizeof(ia));
    assert_int_equal(cf_size_bytes(a), cf_size_bytes(b));
}

enum { MAXN = 60000 };
static uint64_t keys[MAXN];
static const void *kp[MAXN];
static size_t lens[MAXN];
static int rc_one[MAXN], rc_many[MAXN];

/* The item ids of a run: mostly new, some repeats of a recent item, and
 * now and then one item many times in a row (past the 2b = 8 copies a
 * bucket pair holds). */
static size_t make_items(size_t n, uint64_t seed)
{
    uint64_t s = seed | 1, next = 0;
    size_t i = 0;
    while (i < n) {
        uint64_t r = rnd(&s) % 1000;
        if (r < 3 && i + 12 <= n) {
            uint64_t id = next++;
            for (int c = 0; c < 12; c++)
                keys[i++] = key_of(id);
        } else if (r < 80 && next > 0) {
            uint64_t back = 1 + rnd(&s) % (next < 64 ? next : 64);
            keys[i++] = key_of(next - back);
        } else {
            keys[i++] = key_of(next++);
        }
    }
    for (size_t k = 0; k < n; k++) {
        kp[k] = &keys[k];
        lens[k] = 8;
    }
    return n;
}

/* Adds items [0, n) to a one at a time (cf_grow_add(), the single-add
 * path) and to b in batches whose sizes cycle through sizes[], each side
 * with its own room of the same bytes (room 0: no limit); every rc and
 * the filters after every batch must agree. Returns the number of each
 * kind of rc seen, for the caller to check the run covered them. */
static void run(cf_filter_t *a, cf_filter_t *b, size_t n, bool nx,
                uint64_t room0, int *n_ok, int *n_refused, int *n_dup)
{
    static const size_t sizes[] = {1, 2, 100, 7, 16, 17, 1000, 33, 3, 5000};
    uint64_t room_a = room0 ? room0 : UINT64_MAX;
    uint64_t room_b = room_a;
    size_t at = 0, k = 0;
    *n_ok = *n_refused = *n_dup = 0;
    while (at < n) {
        size_t m = sizes[k++ % (sizeof(sizes) / sizeof(sizes[0]))];
        if (m > n - at)
            m = n - at;
        for (size_t i = at; i < at + m; i++)
            rc_one[i] = cf_grow_add(a, kp[i], lens[i], nx, &room_a);
        cf_add_many(b, m, kp + at, lens + at, nx, &room_b, rc_many + at);
        for (size_t i = at; i < at + m; i++) {
            if (rc_one[i] != rc_many[i])
                fail_msg("item %zu: one at a time %d, batched %d", i, rc_one[i],
                         rc_many[i]);
            if (rc_one[i] < 0)
                (*n_refused)++;
            else if (rc_one[i] == (nx ? 1 : 0))
                (*n_ok)++;
            else
                (*n_dup)++;
        }
        assert_int_equal(room_a, room_b);
        if (m >= 1000 || at + m == n)
            assert_same(a, b);
        at += m;
    }
}

/* A filter reserved for 1000 grows past 40 times that, splitting during
 * the batches; the load stays at the target, so items meet full bucket
 * pairs and relocate; items added 12 times in a row put their copies
 * past the bucket pair's 8 in the overflow. */
static void batched_as_single_growing(void **state)
{
    (void)state;
    for (uint64_t seed = 1; seed <= 3; seed++) {
        cf_filter_t *a = make(1000, seed), *b = make(1000, seed);
        size_t n = make_items(MAXN, seed * 77);
        int ok, refused, dup;
        run(a, b, n, false, 0, &ok, &refused, &dup);
        assert_true(ok > 40000);
        /* the copies past the pair's */
        assert_non_null(GR(a)->over);
        assert_true(GR(a)->over->used > 0);
        cf_grow_info_t gi;
        cf_grow_info(a, &gi);
        assert_true(gi.level >= 5);
        cf_free(a);
        cf_free(b);
    }
}

/* The same with NX: repeats answer 0 and are not stored. */
static void batched_as_single_nx(void **state)
{
    (void)state;
    cf_filter_t *a = make(500, 5), *b = make(500, 5);
    size_t n = make_items(30000, 5);
    int ok, refused, dup;
    run(a, b, n, true, 0, &ok, &refused, &dup);
    assert_true(ok > 20000);
    assert_true(dup > 1000);
    assert_int_equal(refused, 0);
    cf_free(a);
    cf_free(b);
}

/* A filter reserved at its final size, filled to it and past the target
 * load in one go: relocations without splits first, then splits. */
static void batched_as_single_full(void **state)
{
    (void)state;
    cf_filter_t *a = make(40000, 11), *b = make(40000, 11);
    size_t n = make_items(MAXN, 11);
    int ok, refused, dup;
    run(a, b, n, false, 0, &ok, &refused, &dup);
    assert_true(ok > 50000);
    cf_free(a);
    cf_free(b);
}

/* The memory limit runs out during a batch: the same items are refused
 * with -ENOMEM, the same bytes taken off the room, and the filters stay
 * alike after it (the stash, splits that found no memory). */
static void batched_as_single_room(void **state)
{
    (void)state;
    for (uint64_t room = 1024; room <= 65536; room *= 8) {
        cf_filter_t *a = make(1000, 21), *b = make(1000, 21);
        size_t n = make_items(MAXN, 21);
        int ok, refused, dup;
        run(a, b, n, false, room, &ok, &refused, &dup);
        assert_true(refused > 1000);
        int nomem = 0;
        for (size_t i = 0; i < n; i++)
            nomem += rc_one[i] == -ENOMEM;
        assert_true(nomem > 0);
        cf_free(a);
        cf_free(b);
    }
}

/* The entries a filter holds before its next add must split buckets
 * (add_item(): (entries + 1) * 10000 > target * buckets * 4). */
static uint64_t entries_to_split(const cf_filter_t *f)
{
    const struct cf_grow *g = GR(f);
    return gr_target_entries(g) - g->entries;
}

/* Adds m fresh items (ids from *id on) to a one at a time and to b in
 * one batch: the same rc per item, and the filters alike after. */
static void add_alike(cf_filter_t *a, cf_filter_t *b, size_t m, uint64_t *id)
{
    uint64_t room = UINT64_MAX;
    for (size_t i = 0; i < m; i++) {
        keys[i] = key_of((*id)++);
        kp[i] = &keys[i];
        lens[i] = 8;
        rc_one[i] = cf_grow_add(a, kp[i], 8, false, &room);
    }
    cf_add_many(b, m, kp, lens, false, NULL, rc_many);
    assert_memory_equal(rc_one, rc_many, m * sizeof(int));
    assert_int_equal(GR(a)->nb, GR(b)->nb);
    assert_same(a, b);
}

/* Batches that end just before, at and just past the load where the next
 * add splits: a batch must split where the single adds split, not place
 * an item on the table as it was before (both filters compared after
 * every batch, the bucket count included). Then a refusal for memory
 * pending (a split found none) when a batch starts: its first add clears
 * it, as a single add does. */
static void batched_as_single_at_the_split(void **state)
{
    (void)state;
    uint64_t id = 0, room = UINT64_MAX;
    for (uint64_t d = 1; d <= 6; d++) {
        for (int past = -1; past <= 1; past++) {
            cf_filter_t *a = make_whole(2000, 31 + d),
                        *b = make_whole(2000, 31 + d);
            while (entries_to_split(a) > d) {
                uint64_t k = key_of(id++);
                assert_int_equal(cf_grow_add(a, &k, 8, false, &room), 0);
                assert_int_equal(cf_grow_add(b, &k, 8, false, &room), 0);
            }
            assert_int_equal(entries_to_split(b), d);
            add_alike(a, b, (size_t)((int)d + past), &id);
            cf_free(a);
            cf_free(b);
        }
    }
    cf_filter_t *a = make_whole(2000, 41), *b = make_whole(2000, 41);
    GR(a)->nomem = 1;
    GR(b)->nomem = 1;
    add_alike(a, b, 10, &id);
    assert_int_equal(GR(a)->nomem, 0);
    cf_free(a);
    cf_free(b);
}

/* Grows a and b alike (single adds of ids from *id) until the split
 * pointer is at 0 (whole) or past a third of the level's buckets, at
 * level 1 or more; then deletes every third item added, so that the load
 * drops under the target, and adds a batch to b and the same items one at
 * a time to a: the batch's addressing from a grown table, with and
 * without a split under way. */
static void batch_after_growth(bool whole, uint64_t seed)
{
    cf_filter_t *a = make(200, seed), *b = make(200, seed);
    uint64_t room = UINT64_MAX, id = 0;
    for (;;) {
        uint64_t k = key_of(id++);
        assert_int_equal(cf_grow_add(a, &k, 8, false, &room), 0);
        assert_int_equal(cf_grow_add(b, &k, 8, false, &room), 0);
        struct cf_grow vt;
        const struct cf_grow *g = gr_get(a, &vt);
        if (g->level >= 1 &&
            (whole ? g->split == 0 : g->split > 0 && g->split * 3 > g->nbig))
            break;
        assert_true(id < 100000);
    }
    for (uint64_t i = 0; i < id; i += 3) {
        uint64_t k = key_of(i);
        assert_int_equal(cf_grow_del(a, &k, 8), 1);
        assert_int_equal(cf_grow_del(b, &k, 8), 1);
    }
    assert_true(entries_to_split(b) > 100);
    add_alike(a, b, 100, &id);
    cf_free(a);
    cf_free(b);
}

static void batched_as_single_grown(void **state)
{
    (void)state;
    for (uint64_t seed = 51; seed < 54; seed++) {
        batch_after_growth(true, seed);
        batch_after_growth(false, seed);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(batched_as_single_growing),
        cmocka_unit_test(batched_as_single_nx),
        cmocka_unit_test(batched_as_single_full),
        cmocka_unit_test(batched_as_single_room),
        cmocka_unit_test(batched_as_single_at_the_split),
        cmocka_unit_test(batched_as_single_grown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
