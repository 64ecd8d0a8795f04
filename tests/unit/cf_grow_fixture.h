/*
 * cf_grow_fixture.h - what the growable shape's unit tests share: a
 * generator and a growable filter (items come from cf_items.h, the
 * serialised form from cf_serial.h). Include after cmocka.h and cf.h.
 */
#ifndef CF_GROW_FIXTURE_H
#define CF_GROW_FIXTURE_H

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "cf_items.h"
#include "cf_serial.h"

static uint64_t rnd(uint64_t *s)
{
    *s ^= *s << 13;
    *s ^= *s >> 7;
    *s ^= *s << 17;
    return *s;
}

/* Every live item of ids below universe (cnt[id] copies) is found, and
 * counted at least as often as it was added and not deleted. */
static inline void check_counts(const cf_filter_t *f, const uint8_t *cnt,
                                uint64_t universe)
{
    for (uint64_t id = 0; id < universe; id++)
        if (cnt[id]) {
            assert_true(item_has(f, id));
            assert_true(item_count(f, id) >= cnt[id]);
        }
}

/* What random_ops() did: live items, ids used, deletes. */
typedef struct ops_tally {
    uint64_t live, next, dels;
} ops_tally_t;

/* Adds (mostly new items, some copies of live ones, at most 3 of one),
 * deletes of present items and lookups, against the exact counts cnt[]
 * of ids below universe, from seed s until live items reach until: no
 * false negative at any point, counts never below the truth. */
static inline ops_tally_t random_ops(cf_filter_t *f, uint8_t *cnt,
                                     uint64_t universe, uint64_t until,
                                     uint64_t s)
{
    ops_tally_t n = {0, 0, 0};
    for (uint64_t op = 0; n.live < until; op++) {
        uint64_t r = rnd(&s) % 100;
        if (r < 60 || n.live == 0) {
            uint64_t id =
                (r % 10 == 0 && n.next > 0) ? rnd(&s) % n.next : n.next++;
            if (id >= universe || cnt[id] >= 3)
                continue;
            assert_int_equal(item_add(f, id), 0);
            cnt[id]++;
            n.live++;
        } else if (r < 85) {
            uint64_t id = rnd(&s) % n.next;
            /* deleting what was never there would break the guarantee
             * (as in any cuckoo filter): only absent lookups then */
            if (cnt[id] == 0)
                continue;
            assert_int_equal(item_del(f, id), 1);
            cnt[id]--;
            n.live--;
            n.dels++;
        } else {
            uint64_t id = rnd(&s) % n.next;
            if (cnt[id]) {
                assert_true(item_has(f, id));
                assert_true(item_count(f, id) >= cnt[id]);
            }
        }
        if (op % 50000 == 0)
            check_counts(f, cnt, universe);
    }
    check_counts(f, cnt, universe);
    return n;
}

/* A filter of cf_params_t.growable `growable` reserved for cap,
 * expansion 2. */
static inline cf_filter_t *make_shaped(uint64_t cap, uint64_t seed,
                                       uint32_t growable)
{
    cf_params_t p = params_of(cap, 2, seed);
    p.growable = growable;
    cf_filter_t *f = NULL;
    assert_int_equal(cf_create(&p, &f), 0);
    return f;
}

/* A growable filter reserved for cap, expansion 2. */
static cf_filter_t *make(uint64_t cap, uint64_t seed)
{
    return make_shaped(cap, seed, 1);
}

/* A growable filter as made before the compact phase (version 4 of the
 * serialised form: 16-bit slots from the start, tag 0 kept), reserved for
 * cap at the split load; such filters still load and grow. Needs
 * cf_grow_int.h. */
#ifdef CF_GROW_INT_H
static cf_filter_t *make_whole(uint64_t cap, uint64_t seed)
{
    uint64_t per = 4 * CF_GROW_TARGET;
    gr_init_t in = {
        .n0 = (cap * 10000 + per - 1) / per,
        .target = CF_GROW_TARGET,
        .capacity = cap,
        .rng = seed * 0x9E3779B97F4A7C15ull | 1,
        .seed = seed,
        .max_kicks = 500,
        .expansion = 2,
        .max_filters = 32,
        .phase = GR_WHOLE,
    };
    cf_filter_t *f = NULL;
    assert_int_equal(gr_new(&in, &f), 0);
    return f;
}
#endif

#endif
