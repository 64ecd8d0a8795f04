/* Unit tests of the growable shape: random adds, deletes and lookups
 * against an exact multiset through more than ten doublings (no false
 * negative, counts never below the truth), the serialised form mid-growth
 * in chunks, byte-identical filters from the same operations, refusals of
 * lying headers and slots, the sizes a host counts, and the memory cap. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <xxhash.h>

#include "cf.h"
#include "cf_grow.h"
#include "cf_grow_int.h"
/* after cf_grow_int.h: make_whole() */
#include "cf_grow_fixture.h"

#define UNIVERSE (1u << 19)

/* Adds (a few items more than once), deletes of present items and
 * lookups, against exact counts, from 64 items to more than 1024 times
 * that: no false negative at any point. */
static void random_ops_through_ten_doublings(void **state)
{
    (void)state;
    cf_filter_t *f = make(64, 11);
    uint8_t *cnt = calloc(UNIVERSE, 1);
    assert_non_null(cnt);
    ops_tally_t n = random_ops(f, cnt, UNIVERSE, 100000, 0x1234567);
    cf_grow_info_t gi;
    cf_grow_info(f, &gi);
    /* 64 items reserve 19 buckets; 100,000 need more than ten doublings */
    assert_true(gi.level >= 10);
    cf_stats_t st;
    cf_stats(f, &st);
    assert_int_equal(st.nfilters, 1);
    assert_int_equal(st.nbuckets, gi.nbuckets);
    assert_int_equal(st.items, n.live);
    assert_int_equal(st.deleted, n.dels);
    assert_int_equal(st.form, CF_FORM_GROWABLE);
    /* the memory follows the items: about 16 / 0.85 bits each */
    assert_true(st.size_bytes * 8 < n.live * 24);
    /* and every item's two buckets are in the table */
    for (uint64_t id = 0; id < 1000; id++) {
        uint64_t k = key_of(id), b[2];
        cf_grow_buckets(f, &k, sizeof(k), b);
        assert_true(b[0] < gi.nbuckets && b[1] < gi.nbuckets);
    }
    /* deleting everything empties it */
    for (uint64_t id = 0; id < n.next && id < UNIVERSE; id++)
        while (cnt[id]) {
            assert_int_equal(item_del(f, id), 1);
            cnt[id]--;
        }
    cf_stats(f, &st);
    assert_int_equal(st.items, 0);
    cf_free(f);
    free(cnt);
}

/* A dump taken mid-growth (the split pointer inside a round) loads in
 * chunks of any size into the same bytes, answers the same, and goes on
 * growing exactly as the original does. */
static void round_trip_mid_growth(void **state)
{
    (void)state;
    cf_filter_t *f = make(100, 3);
    for (uint64_t id = 0; id < 20000; id++)
        assert_int_equal(item_add(f, id), 0);
    for (uint64_t id = 0; id < 20000; id += 3)
        assert_int_equal(item_del(f, id), 1);
    cf_grow_info_t gi;
    cf_grow_info(f, &gi);
    assert_true(gi.split > 0);
    size_t n;
    uint8_t *buf = serialised(f, 1000, NULL, &n);
    static const size_t chunks[] = {1, 7, 777, 4096, 1 << 20};
    for (size_t c = 0; c < sizeof(chunks) / sizeof(chunks[0]); c++) {
        cf_filter_t *g = loaded_in_chunks(buf, n, chunks[c]);
        assert_same_bytes(f, g);
        for (uint64_t id = 0; id < 20000; id++)
            if (id % 3 != 0)
                assert_true(item_has(g, id));
        cf_free(g);
    }
    cf_filter_t *g = loaded_in_chunks(buf, n, 1000);
    for (uint64_t id = 20000; id < 60000; id++) {
        assert_int_equal(item_add(f, id), 0);
        assert_int_equal(item_add(g, id), 0);
        if (id % 5 == 0 && id >= 21000) {
            assert_int_equal(item_del(f, id - 1000), 1);
            assert_int_equal(item_del(g, id - 1000), 1);
        }
    }
    assert_same_bytes(f, g);
    cf_free(g);
    cf_free(f);
    free(buf);
}

/* Two filters fed the same operations hold the same bytes: relocation
 * choices come from the filter's own state. */
static void same_ops_same_bytes(void **state)
{
    (void)state;
    cf_filter_t *a = make(50, 9), *b = make(50, 9);
    uint64_t s = 99;
    for (int i = 0; i < 30000; i++) {
        uint64_t id = rnd(&s) % 20000;
        if (i % 4 == 3) {
            assert_int_equal(item_del(a, id), item_del(b, id));
        } else {
            assert_int_equal(item_add(a, id), item_add(b, id));
        }
    }
    assert_same_bytes(a, b);
    /* the batched insert makes the same moves as one at a time */
    cf_filter_t *c = make(50, 9), *d = make(50, 9);
    enum { N = 5000 };
    static uint64_t keys[N];
    static const void *kp[N];
    static size_t lens[N];
    static int rc[N];
    for (int i = 0; i < N; i++) {
        keys[i] = key_of((uint64_t)i);
        kp[i] = &keys[i];
        lens[i] = 8;
        assert_int_equal(cf_add(c, &keys[i], 8), 0);
    }
    cf_add_many(d, N, kp, lens, false, NULL, rc);
    for (int i = 0; i < N; i++)
        assert_int_equal(rc[i], 0);
    assert_same_bytes(c, d);
    static bool out[N];
    cf_exists_many(d, N, kp, lens, out);
    for (int i = 0; i < N; i++)
        assert_true(out[i]);
    cf_free(a);
    cf_free(b);
    cf_free(c);
    cf_free(d);
}

/* The checksum of a version 5 header (what a new filter writes). */
/* A default filter is its compact table until an add needs room past the
 * reserve: 12-bit entries, 6 bytes a bucket. The conversion that follows
 * is taken in steps; a dump taken at any step loads into the same bytes,
 * answers the same and goes on as the original; no item is missed
 * before, during or after it, deletes included. */
static void compact_then_converted(void **state)
{
    (void)state;
    enum { CAP = 100000 };
    cf_filter_t *f = make(CAP, 21);
    struct cf_grow *g = GR(f);
    assert_int_equal(g->phase, GR_COMPACT);
    uint64_t n0 = g->n0;
    assert_int_equal(n0, (CAP * 10000ull + 37599) / 37600);
    assert_int_equal(cf_size_bytes(f),
                     sizeof(cf_filter_t) + sizeof(struct cf_grow) + n0 * 6 + 2);
    cf_stats_t st;
    cf_stats(f, &st);
    assert_int_equal(st.fp_bits, 13);
    assert_int_equal(st.capacity, CAP);
    for (uint64_t id = 0; id < CAP; id++)
        assert_int_equal(item_add(f, id), 0);
    assert_int_equal(g->phase, GR_COMPACT); /* the reserve fits */
    for (uint64_t id = 0; id < CAP; id += 7)
        assert_int_equal(item_del(f, id), 1);
    for (uint64_t id = 0; id < CAP; id++)
        if (id % 7 != 0)
            assert_true(item_has(f, id));
    /* the compact batch answers as one lookup at a time */
    {
        enum { N = 5000 };
        static uint64_t keys[N];
        static const void *kp[N];
        static size_t lens[N];
        static bool out[N];
        for (int i = 0; i < N; i++) {
            keys[i] = key_of((uint64_t)i * 37);
            kp[i] = &keys[i];
            lens[i] = 8;
        }
        cf_exists_many(f, N, kp, lens, out);
        for (int i = 0; i < N; i++)
            assert_int_equal(out[i], cf_exists(f, kp[i], 8));
    }
    uint64_t id = CAP;
    while (g->entries < CAP)
        assert_int_equal(item_add(f, id++), 0);
    assert_int_equal(g->phase, GR_COMPACT);
    /* past the reserve: converting, then whole */
    int dumps = 0;
    while (g->phase != GR_WHOLE) {
        assert_int_equal(item_add(f, id++), 0);
        if (g->phase == GR_CONVERTING && g->conv > 0 && id % 97 == 0) {
            size_t n;
            uint8_t *buf = serialised(f, 777, NULL, &n);
            cf_filter_t *h = loaded_in_chunks(buf, n, 4096);
            assert_same_bytes(f, h);
            assert_int_equal(GR(h)->conv, g->conv);
            for (uint64_t k = 0; k < id; k++)
                assert_true(k % 7 == 0 && k < CAP ? true : item_has(h, k));
            /* the copy goes on as the original, conversion included
             * (deleting items added after the conversion started) */
            assert_true(id > CAP + 2000);
            for (uint64_t k = id; k < id + 3000; k++) {
                assert_int_equal(item_add(h, k), 0);
                if (k % 5 == 0)
                    assert_int_equal(item_del(h, k - 2000), 1);
            }
            assert_int_equal(GR(h)->phase, GR_WHOLE);
            for (uint64_t k = 0; k < id + 3000; k++) {
                bool gone = (k % 7 == 0 && k < CAP) ||
                            (k + 2000 >= id && k < id + 1000 && k % 5 == 0);
                if (!gone)
                    assert_true(item_has(h, k));
            }
            cf_free(h);
            free(buf);
            dumps++;
        }
        for (uint64_t k = id - 50; k < id; k++)
            assert_true(item_has(f, k));
    }
    assert_true(dumps > 3);
    assert_null(g->cmp);
    cf_stats(f, &st);
    assert_int_equal(st.fp_bits, 15);
    for (uint64_t k = 0; k < id; k++)
        assert_int_equal(item_has(f, k) || (k % 7 == 0 && k < CAP), true);
    /* the size is the 16-bit table's alone, and what each size event was
     * is still known */
    assert_int_equal(cf_size_bytes(f), cf_size_bytes_at(f, cf_nfilters(f)));
    cf_free(f);
}

/* A small default filter is inline: its compact table in its own block,
 * no growable state beside it, the size the two of them make. It adds,
 * deletes, dumps and loads (inline again) as any compact filter; its add
 * past the reserve makes it whole at once, every item still there, and
 * the size it had is still known by its generation. Host bytes before it
 * move it with its table. */
static void inline_small_filters(void **state)
{
    (void)state;
    cf_filter_t *f = make(100, 7);
    assert_true(gr_inline(f));
    uint64_t n0 = gr_base_buckets(100);
    uint64_t small = sizeof(cf_filter_t) + gr_cmp_bytes(n0);
    assert_int_equal(cf_size_bytes(f), small);
    uint32_t gen0 = cf_nfilters(f);
    for (uint64_t id = 0; id < 100; id++)
        assert_int_equal(item_add(f, id), 0);
    for (uint64_t id = 0; id < 100; id += 4)
        assert_int_equal(item_del(f, id), 1);
    assert_true(gr_inline(f));
    cf_stats_t st;
    cf_stats(f, &st);
    assert_int_equal(st.items, 75);
    assert_int_equal(st.deleted, 25);
    assert_int_equal(st.fp_bits, 13);
    assert_int_equal(cf_size_bytes(f), small);
    /* the host's bytes before it: the table moves along */
    assert_int_equal(cf_resize_extra(&f, 0, 32), 0);
    for (uint64_t id = 0; id < 100; id++)
        if (id % 4 != 0)
            assert_true(item_has(f, id));
    /* dumped and loaded: inline again, the same bytes */
    size_t n;
    uint8_t *buf = serialised(f, 100, NULL, &n);
    cf_filter_t *g = loaded_in_chunks(buf, n, 37);
    assert_true(gr_inline(g));
    assert_same_bytes(f, g);
    assert_int_equal(cf_size_bytes(g), small);
    free(buf);
    /* past the reserve: whole at once, both alike */
    uint64_t id = 100;
    while (gr_inline(f)) {
        assert_int_equal(item_add(f, id), 0);
        assert_int_equal(item_add(g, id), 0);
        id++;
    }
    assert_false(gr_inline(g));
    assert_same_bytes(f, g);
    assert_int_equal(GR(f)->phase, GR_WHOLE);
    assert_null(GR(f)->cmp);
    cf_stats(f, &st);
    assert_int_equal(st.fp_bits, 15);
    for (uint64_t k = 0; k < id; k++)
        if (k >= 100 || k % 4 != 0)
            assert_true(item_has(f, k));
    /* the inline table stays in the block, counted */
    assert_int_equal(cf_size_bytes(f),
                     gr_size_of_cap(GR(f)->cap) + gr_cmp_bytes(n0));
    assert_int_equal(cf_size_bytes_at(f, gen0), small);
    assert_int_equal(cf_size_bytes_at(f, cf_nfilters(f)), cf_size_bytes(f));
    for (uint64_t k = id; k < id + 5000; k++)
        assert_int_equal(item_add(f, k), 0);
    assert_int_equal(cf_size_bytes_at(f, gen0), small);
    /* a copy holds the same bytes, the tail included */
    buf = serialised(f, 1000, NULL, &n);
    cf_filter_t *h = loaded_in_chunks(buf, n, 4096);
    assert_same_bytes(f, h);
    assert_int_equal(GR(h)->tail, gr_cmp_bytes(n0));
    assert_int_equal(cf_size_bytes(h), cf_size_bytes(f));
    cf_free(h);
    free(buf);
    assert_int_equal(cf_resize_extra(&f, 32, 8), 0);
    for (uint64_t k = 100; k < id + 5000; k++)
        assert_true(item_has(f, k));
    cf_free_extra(f, 8);
    cf_free(g);
    /* a room too small for the 16-bit table: refused, nothing changed */
    f = make(100, 8);
    for (uint64_t k = 0; k < 100; k++)
        assert_int_equal(item_add(f, k), 0);
    uint64_t room = 64, k = 100;
    assert_int_equal(cf_grow_add(f, &k, sizeof(k), false, &room), -ENOMEM);
    assert_true(gr_inline(f));
    assert_int_equal(room, 64);
    cf_free(f);
}

/* The compact bucket's codec and its two compares: a bucket of four
 * random entries (some empty) encoded and decoded holds the same entries,
 * and the compare in the encoding (cmp_holds()) answers as the 16-bit
 * lanes' (gr_match()) for entries there and for random ones. */
static void compact_forms_agree(void **state)
{
    (void)state;
    uint8_t buf[8] = {0};
    struct cf_grow g;
    memset(&g, 0, sizeof(g));
    g.cmp = buf;
    uint64_t s = 77;
    for (int round = 0; round < 200000; round++) {
        uint64_t w = 0, r = rnd(&s);
        for (uint32_t k = 0; k < 4; k++, r >>= 14) {
            if ((r & 3) == 0)
                continue; /* empty */
            uint32_t t = (uint32_t)(r >> 2) & 31, q = (uint32_t)(r >> 7) & 0xFF;
            if (t == 0 && q == 0)
                t = 31; /* never an entry (gr_tag_of()) */
            w |= (uint64_t)(t << 11 | 1u << 8 | q) << (16 * k);
        }
        uint64_t c = cmp_compress(w);
        assert_true(c < (1ull << 48));
        cmp_store(&g, 0, c);
        assert_int_equal(cmp_load(&g, 0), c);
        uint64_t back = cmp_expand(c);
        /* the same entries, perhaps in another order */
        uint32_t a[4], b2[4];
        for (uint32_t k = 0; k < 4; k++) {
            a[k] = (uint32_t)(w >> (16 * k)) & 0xFFFF;
            b2[k] = (uint32_t)(back >> (16 * k)) & 0xFFFF;
        }
        for (uint32_t k = 0; k < 4; k++) {
            int na = 0, nb = 0;
            for (uint32_t m = 0; m < 4; m++) {
                na += a[m] == a[k];
                nb += b2[m] == a[k];
            }
            assert_int_equal(na, nb);
        }
        for (uint32_t k = 0; k < 5; k++) {
            uint32_t t, q;
            if (k < 4 && a[k] != 0) {
                t = a[k] >> 11;
                q = a[k] & 0xFF;
            } else {
                uint64_t x = rnd(&s);
                t = 1 + (uint32_t)(x % 31);
                q = (uint32_t)(x >> 8) & 0xFF;
            }
            uint64_t stream = q | (rnd(&s) << 8); /* bits past 8 ignored */
            assert_int_equal(cmp_holds(&g, 0, t, stream),
                             gr_match(back, gr_want(t, stream)) != 0);
            if (k < 4 && a[k] != 0)
                assert_true(cmp_holds(&g, 0, t, stream));
        }
    }
}

/* A filter made before the compact phase (16-bit from the start, tag 0 its
 * own) still writes version 4 and grows as it did. */
static void whole_filters_keep_version_4(void **state)
{
    (void)state;
    cf_filter_t *f = make_whole(1000, 5);
    for (uint64_t id = 0; id < 5000; id++)
        assert_int_equal(item_add(f, id), 0);
    assert_int_equal(cf_header_len(f), CF_GROW_HDR_LEN);
    size_t n;
    uint8_t *buf = serialised(f, 1000, NULL, &n);
    assert_int_equal(buf[4], 4);
    cf_filter_t *g = loaded_in_chunks(buf, n, 333);
    assert_same_bytes(f, g);
    assert_int_equal(GR(g)->remap, 0);
    for (uint64_t id = 0; id < 5000; id++)
        assert_true(item_has(g, id));
    cf_free(g);
    cf_free(f);
    free(buf);
}

static void fix_sum(uint8_t *h)
{
    set_header_sum(h, CF_GROW_HDR5_LEN);
}

static void put(uint8_t *p, size_t at, uint64_t v, int bytes)
{
    for (int i = 0; i < bytes; i++)
        p[at + (size_t)i] = (uint8_t)(v >> (8 * i));
}

static uint64_t get(const uint8_t *p, size_t at, int bytes)
{
    uint64_t v = 0;
    for (int i = 0; i < bytes; i++)
        v |= (uint64_t)p[at + (size_t)i] << (8 * i);
    return v;
}

/* Every header field that could lie is checked: each lie is refused with
 * -EINVAL (or -ENOMEM for sizes past any limit), never a crash. */
static void lying_headers_refused(void **state)
{
    (void)state;
    cf_filter_t *f = make(1000, 5);
    for (uint64_t id = 0; id < 5000; id++)
        assert_int_equal(item_add(f, id), 0);
    uint8_t good[CF_GROW_HDR5_LEN];
    cf_header_write(f, good);
    uint64_t nb = get(good, 56, 8) << get(good, 64, 4);
    nb += get(good, 72, 8);
    static const struct {
        size_t at;
        int bytes;
        uint64_t v;
        int rc;
    } lies[] = {
        {4, 2, 6, -EINVAL},                  /* version */
        {4, 2, 4, -EINVAL},                  /* version 4, 136 bytes */
        {6, 2, 120, -EINVAL},                /* header length */
        {8, 4, 2, -EINVAL},                  /* bucket size */
        {12, 1, 4, -EINVAL},                 /* tag bits */
        {13, 1, 11, -EINVAL},                /* stored bits */
        {14, 1, 1, -EINVAL},                 /* encoding */
        {15, 1, 1, -EINVAL},                 /* flags */
        {15, 1, 2, -EINVAL},                 /* flags: version 4's */
        {15, 1, 2 | 4 | 8 | 16, -EINVAL},    /* flags: two phases */
        {15, 1, 2 | 4 | 32, -EINVAL},        /* flags: an unknown bit */
        {15, 1, 2 | 4 | 8, -EINVAL},         /* compact, but split */
        {120, 8, 1, -EINVAL},                /* converted, not converting */
        {128, 4, 1, -EINVAL},                /* a tail not a compact table */
        {132, 4, 1, -EINVAL},                /* reserved */
        {16, 4, 0, -EINVAL},                 /* max kicks */
        {16, 4, 65536, -EINVAL},             /* max kicks */
        {20, 4, 0, -EINVAL},                 /* expansion */
        {20, 4, 40000, -EINVAL},             /* expansion */
        {24, 4, 0, -EINVAL},                 /* max filters */
        {24, 4, 65, -EINVAL},                /* max filters */
        {28, 4, 4999, -EINVAL},              /* target load */
        {28, 4, 9501, -EINVAL},              /* target load */
        {56, 8, 0, -EINVAL},                 /* n0 */
        {56, 8, 1ull << 40, -ENOMEM},        /* n0 */
        {64, 4, 41, -EINVAL},                /* level */
        {64, 4, 35, -ENOMEM},                /* level: past any table */
        {68, 4, 1, -EINVAL},                 /* overflow slots */
        {68, 4, 8, -EINVAL},                 /* overflow slots: too few */
        {68, 4, 48, -EINVAL},                /* overflow slots: not 2^k */
        {68, 4, 1u << 31, -EINVAL},          /* overflow slots: past any */
        {72, 8, 1ull << 40, -EINVAL},        /* split past the round */
        {80, 8, 1ull << 40, -EINVAL},        /* entries past the slots */
        {40, 8, 1ull << 40, -EINVAL},        /* items past the entries */
        {88, 8, 0, -EINVAL},                 /* kick state */
        {104, 4, 0x10000, -EINVAL},          /* stash entry wider than a slot */
        {104, 4, 0xF800, -EINVAL},           /* stash entry without a marker */
        {96, 8, 5, -EINVAL},                 /* stash bucket, stash empty */
        {108, 4, 1, -EINVAL},                /* overflow used, no slots */
        {112, 8, 0, -EINVAL},                /* capacity */
        {112, 8, (1ull << 50) + 1, -EINVAL}, /* capacity */
    };
    for (size_t i = 0; i < sizeof(lies) / sizeof(lies[0]); i++) {
        uint8_t h[CF_GROW_HDR5_LEN];
        memcpy(h, good, sizeof(h));
        put(h, lies[i].at, lies[i].v, lies[i].bytes);
        fix_sum(h);
        cf_filter_t *g = NULL;
        size_t used = 0;
        int rc = cf_load_header(h, sizeof(h), NULL, &g, &used);
        if (rc != lies[i].rc)
            fail_msg("lie %zu (byte %zu = %llu): %d", i, lies[i].at,
                     (unsigned long long)lies[i].v, rc);
        assert_null(g);
    }
    /* overflow slots used past half, or with items past the entries */
    {
        uint8_t o[CF_GROW_HDR5_LEN];
        memcpy(o, good, sizeof(o));
        put(o, 68, 64, 4);
        put(o, 108, 33, 4);
        fix_sum(o);
        cf_filter_t *g = NULL;
        size_t used = 0;
        assert_int_equal(cf_load_header(o, sizeof(o), NULL, &g, &used),
                         -EINVAL);
        put(o, 108, 32, 4);
        put(o, 40, get(good, 80, 8) + 5, 8);
        fix_sum(o);
        assert_int_equal(cf_load_header(o, sizeof(o), NULL, &g, &used), 0);
        /* slots that lie (every one taken, keys anywhere): lookups and
         * deletes end, a new copy is refused, nothing crashes */
        uint8_t slots[64 * 16];
        for (size_t i = 0; i < sizeof(slots); i++)
            slots[i] = (uint8_t)(i * 7 + 1);
        assert_int_equal(cf_data_len(g), nb * 8 + sizeof(slots));
        assert_int_equal(cf_load_data(g, nb * 8, slots, sizeof(slots)), 0);
        assert_false(item_has(g, 1));
        assert_int_equal(item_del(g, 1), 0);
        for (int i = 0; i < 8; i++)
            (void)item_add(g, 1);
        assert_true(item_add(g, 1) < 0 || item_count(g, 1) >= 9);
        cf_free(g);
    }
    /* a stash in a bucket past the table */
    uint8_t h[CF_GROW_HDR5_LEN];
    memcpy(h, good, sizeof(h));
    put(h, 104, 0x0C00, 4);
    put(h, 96, nb, 8);
    fix_sum(h);
    cf_filter_t *g = NULL;
    size_t used;
    assert_int_equal(cf_load_header(h, sizeof(h), NULL, &g, &used), -EINVAL);
    /* a checksum that does not match, a short header */
    memcpy(h, good, sizeof(h));
    h[40] ^= 1;
    assert_int_equal(cf_load_header(h, sizeof(h), NULL, &g, &used), -EINVAL);
    assert_int_equal(cf_load_header(good, sizeof(good) - 1, NULL, &g, &used),
                     -EINVAL);
    /* a limit below the table */
    cf_limits_t lim = {.max_bytes = nb * 8 - 1};
    assert_int_equal(cf_load_header(good, sizeof(good), &lim, &g, &used),
                     -ENOMEM);
    lim.max_bytes = nb * 8;
    assert_int_equal(cf_load_header(good, sizeof(good), &lim, &g, &used), 0);
    /* a slot with a tag and no marker is refused and cleared; a range
     * outside the data is refused */
    uint8_t bad[8] = {0, 0xF8, 0x01, 0x00, 0, 0, 0, 0};
    assert_int_equal(cf_load_data(g, 0, bad, sizeof(bad)), -EINVAL);
    const void *p;
    assert_int_equal(cf_data_view(g, 0, 8, &p), 8);
    assert_int_equal(get(p, 0, 8), 0x0001ull << 16);
    assert_int_equal(cf_load_data(g, nb * 8 - 4, bad, sizeof(bad)), -EINVAL);
    /* the high byte of a slot alone, then its low byte: checked whole */
    assert_int_equal(cf_load_data(g, 9, "\x08", 1), -EINVAL);
    assert_int_equal(cf_load_data(g, 9, "\x00", 1), 0);
    assert_int_equal(cf_load_data(g, 8, "\x01", 1), 0);
    assert_int_equal(cf_load_data(g, 9, "\x08", 1), 0);
    cf_free(g);
    cf_free(f);
}

/* Entries in the table (the overflow holds the rest of the items). */
static uint64_t entries_of(const cf_filter_t *f)
{
    cf_grow_info_t gi;
    cf_grow_info(f, &gi);
    return gi.entries;
}

/* An item added more times than its two buckets hold: every add is taken,
 * as RedisBloom takes it into a new sub-filter. The copies past the
 * buckets are counted in the overflow (the table does not grow for them),
 * other items are added as before, deletes give every copy back, and a
 * dump loads with them, in chunks of any size. */
static void copies_of_one_item(void **state)
{
    (void)state;
    cf_filter_t *f = make(1000, 1);
    uint64_t size0 = cf_size_bytes(f);
    for (int i = 0; i < 8; i++)
        assert_int_equal(item_add(f, 42), 0);
    cf_stats_t st;
    cf_stats(f, &st);
    uint64_t nb = st.nbuckets, in_table = entries_of(f);
    assert_int_equal(cf_size_bytes(f), size0);
    for (int i = 8; i < 100; i++)
        assert_int_equal(item_add(f, 42), 0);
    assert_int_equal(item_count(f, 42), 100);
    cf_stats(f, &st);
    assert_int_equal(st.nbuckets, nb); /* no growth for copies */
    assert_int_equal(st.items, 100);
    assert_true(entries_of(f) <= in_table + 1); /* one may have moved in */
    assert_true(cf_size_bytes(f) > size0);      /* the overflow's slots */
    assert_int_equal(cf_add_nx(f, &(uint64_t){key_of(42)}, 8), 0);
    assert_int_equal(item_add(f, 43), 0);
    assert_true(item_has(f, 43));
    assert_int_equal(item_del(f, 43), 1);
    assert_int_equal(item_count(f, 42), 100);
    size_t n;
    uint8_t *buf = serialised(f, 1000, NULL, &n);
    assert_true(n > CF_GROW_HDR_LEN + nb * 8); /* the overflow is saved */
    static const size_t chunks[] = {1, 7, 16, 1000, 1 << 20};
    for (size_t c = 0; c < sizeof(chunks) / sizeof(chunks[0]); c++) {
        cf_filter_t *g = loaded_in_chunks(buf, n, chunks[c]);
        assert_same_bytes(f, g);
        assert_int_equal(cf_size_bytes(g), cf_size_bytes(f));
        assert_int_equal(item_count(g, 42), 100);
        for (int i = 0; i < 100; i++)
            assert_int_equal(item_del(g, 42), 1);
        assert_false(item_has(g, 42));
        cf_free(g);
    }
    free(buf);
    for (int i = 0; i < 100; i++)
        assert_int_equal(item_del(f, 42), 1);
    assert_int_equal(item_del(f, 42), 0);
    assert_false(item_has(f, 42));
    assert_int_equal(item_add(f, 43), 0);
    cf_free(f);
}

/* The same with the table at its target load, where a homeless entry may
 * force splits: each insert forces at most 64 (and makes at most one
 * for the load target); a copy that goes to the overflow forces none,
 * and other items are added as before. */
static void copies_of_one_item_at_load(void **state)
{
    (void)state;
    cf_filter_t *f = make(1000, 4);
    for (uint64_t id = 1000; id < 6000; id++)
        assert_int_equal(item_add(f, id), 0);
    cf_stats_t st;
    cf_stats(f, &st);
    uint64_t nb0 = st.nbuckets;
    for (int i = 0; i < 8; i++)
        assert_int_equal(item_add(f, 7), 0);
    cf_stats(f, &st);
    uint64_t nb1 = st.nbuckets;
    assert_true(nb1 <= nb0 + 9 * (64 + 1));
    for (int i = 8; i < 100; i++)
        assert_int_equal(item_add(f, 7), 0);
    cf_stats(f, &st);
    /* at most the one split of the load target the first of them made
     * before it found the item's buckets full */
    assert_true(st.nbuckets <= nb1 + 1);
    nb1 = st.nbuckets;
    for (uint64_t id = 6000; id < 6100; id++)
        assert_int_equal(item_add(f, id), 0);
    cf_stats(f, &st);
    assert_true(st.nbuckets <= nb1 + 100 + 64); /* the load target's */
    assert_int_equal(item_count(f, 7), 100);
    for (uint64_t id = 1000; id < 6000; id++)
        assert_true(item_has(f, id));
    cf_free(f);
}

/* Two items whose entries the table cannot tell apart (same tag, same
 * stored bits, same two buckets): the second one's copies all go to the
 * overflow while the first one's fill the buckets. Deleting the first one
 * empties the table of them, and the second is still found and counted
 * (from the overflow alone), one at a time and batched. */
static void copies_behind_another_items_entries(void **state)
{
    (void)state;
    cf_filter_t *f = make(4, 9);
    uint64_t a = 0, b = 0;
    int copies = 0;
    /* a's copies until the table stops taking them */
    for (a = 1; a < 50 && copies == 0; a++) {
        uint64_t before = entries_of(f);
        for (int i = 0; i < 12; i++)
            assert_int_equal(item_add(f, a), 0);
        if (entries_of(f) < before + 12)
            copies = 12;
        else
            for (int i = 0; i < 12; i++)
                assert_int_equal(item_del(f, a), 1);
    }
    a--;
    assert_int_equal(copies, 12);
    /* b: an item the table counts as often as a's entries there */
    uint64_t in_table = entries_of(f);
    for (b = 1000; b < 20000000; b++)
        if (item_count(f, b) >= in_table && item_count(f, b) >= 8)
            break;
    assert_true(b < 20000000);
    uint64_t e0 = entries_of(f);
    for (int i = 0; i < 3; i++)
        assert_int_equal(item_add(f, b), 0);
    assert_int_equal(entries_of(f), e0); /* all three in the overflow */
    for (int i = 0; i < 12; i++)
        assert_int_equal(item_del(f, a), 1);
    assert_true(item_has(f, b));
    assert_int_equal(item_count(f, b), 3);
    uint64_t k = key_of(b);
    const void *keys[1] = {&k};
    size_t lens[1] = {sizeof(k)};
    bool out[1] = {false};
    cf_exists_many(f, 1, keys, lens, out);
    assert_true(out[0]);
    for (int i = 0; i < 3; i++)
        assert_int_equal(item_del(f, b), 1);
    assert_int_equal(item_count(f, b), 0);
    cf_free(f);
}

/* Many items past their buckets: the overflow's slot table doubles, each
 * doubling is a size generation whose size stays answerable, a byte cap
 * refuses the copy that would need a larger table (and changes nothing),
 * and deletes find every copy after the moves. */
static void overflow_sizes_and_room(void **state)
{
    (void)state;
    cf_filter_t *f = make(100000, 3);
    uint32_t gen0 = cf_nfilters(f);
    uint64_t size0 = cf_size_bytes(f);
    const int items = 200, per = 11;
    for (int r = 0; r < per; r++)
        for (uint64_t id = 0; id < (uint64_t)items; id++)
            assert_int_equal(item_add(f, id), 0);
    uint32_t gen1 = cf_nfilters(f);
    uint64_t size1 = cf_size_bytes(f);
    assert_true(gen1 != gen0);
    assert_true(size1 > size0 + (uint64_t)items * 16);
    assert_int_equal(cf_size_bytes_at(f, gen0), size0);
    assert_int_equal(cf_size_bytes_at(f, gen1), size1);
    for (uint64_t id = 0; id < (uint64_t)items; id++)
        assert_int_equal(item_count(f, id), (uint64_t)per);
    /* no room: new items past their buckets are refused once the slot
     * table would have to double, and store nothing */
    uint64_t room = 0;
    int refused = 0;
    for (uint64_t id = 1000; id < 3000 && refused == 0; id++) {
        uint64_t k = key_of(id);
        const void *keys[9];
        size_t lens[9];
        int rc[9];
        for (int i = 0; i < 9; i++) {
            keys[i] = &k;
            lens[i] = sizeof(k);
        }
        cf_add_many(f, 9, keys, lens, false, &room, rc);
        for (int i = 0; i < 8; i++)
            assert_int_equal(rc[i], 0);
        if (rc[8] == -ENOMEM) {
            refused++;
            assert_int_equal(item_count(f, id), 8);
        } else {
            assert_int_equal(rc[8], 0);
        }
    }
    assert_int_equal(refused, 1);
    assert_int_equal(cf_size_bytes_at(f, gen1), size1);
    for (int r = 0; r < per; r++)
        for (uint64_t id = 0; id < (uint64_t)items; id++)
            assert_int_equal(item_del(f, id), 1);
    for (uint64_t id = 0; id < (uint64_t)items; id++)
        assert_int_equal(item_count(f, id), 0);
    cf_free(f);
}

/* What a host counted for a generation stays what the filter answers for
 * it; growth under a byte cap takes no more than the cap. */
/* Filters reserved at 64 under random adds (at most 3 copies of an item),
 * deletes and lookups, 1,500 seeds: no add is ever refused. A small table
 * can fill a bucket pair with entries of several items while it is half
 * empty, a pair no split at the pointer reaches soon; about 2% of these
 * filters refused an add before forced splits were allowed there, and
 * some in a thousand while an entry waited in the stash and the next
 * item's buckets were full (its kicks are now tried, and undone when they
 * find no room). */
static void small_reserves_never_refuse(void **state)
{
    (void)state;
    enum { FRESH = 3000 };
    static uint8_t cnt[FRESH];
    static uint32_t live[FRESH];
    uint64_t r = 88172645463325252ull;
    for (int sd = 0; sd < 1500; sd++) {
        cf_filter_t *f = make(64, key_of((uint64_t)sd));
        uint32_t nl = 0, fresh = 0;
        memset(cnt, 0, sizeof(cnt));
        while (fresh < FRESH) {
            rnd(&r);
            uint32_t op = (uint32_t)(r % 100);
            uint32_t at = nl ? (uint32_t)((r >> 32) % nl) : 0;
            if (op < 55 || nl == 0) {
                assert_int_equal(item_add(f, fresh), 0);
                cnt[fresh] = 1;
                live[nl++] = fresh++;
            } else if (op < 65) {
                if (cnt[live[at]] >= 3)
                    continue;
                assert_int_equal(item_add(f, live[at]), 0);
                cnt[live[at]]++;
            } else if (op < 85) {
                assert_int_equal(item_del(f, live[at]), 1);
                if (--cnt[live[at]] == 0)
                    live[at] = live[--nl];
            } else {
                assert_true(item_has(f, live[at]));
            }
        }
        cf_free(f);
    }
}

static void sizes_and_room(void **state)
{
    (void)state;
    cf_filter_t *f = make(10, 2);
    uint64_t sizes[128] = {0};
    uint32_t gen = cf_nfilters(f);
    sizes[gen] = cf_size_bytes(f);
    for (uint64_t id = 0; id < 200000; id++) {
        assert_int_equal(item_add(f, id), 0);
        uint32_t g2 = cf_nfilters(f);
        if (g2 != gen) {
            assert_true(g2 >= 1 && g2 < 128);
            assert_true(cf_size_bytes_at(f, gen) == sizes[gen]);
            gen = g2;
            sizes[gen] = cf_size_bytes(f);
        }
        assert_int_equal(cf_size_bytes_at(f, gen), cf_size_bytes(f));
    }
    cf_free(f);

    f = make(1000, 2);
    enum { N = 20000 };
    static uint64_t keys[N];
    static const void *kp[N];
    static size_t lens[N];
    static int rc[N];
    for (int i = 0; i < N; i++) {
        keys[i] = key_of((uint64_t)i);
        kp[i] = &keys[i];
        lens[i] = 8;
    }
    uint64_t before = cf_size_bytes(f), room = 4096;
    cf_add_many(f, N, kp, lens, false, &room, rc);
    assert_true(cf_size_bytes(f) - before <= 4096);
    assert_int_equal(cf_size_bytes(f) - before, 4096 - room);
    int refused = 0;
    for (int i = 0; i < N; i++) {
        assert_true(rc[i] == 0 || rc[i] == -ENOMEM);
        refused += rc[i] != 0;
        if (rc[i] == 0)
            assert_true(cf_exists(f, &keys[i], 8));
    }
    assert_true(refused > 0);
    cf_free(f);
}

/* The parameters: bucket size 4 only; the reserve's size. */
static void params(void **state)
{
    (void)state;
    cf_params_t p;
    cf_params_default(&p);
    p.capacity = 100000;
    p.growable = 1;
    assert_int_equal(cf_params_check(&p), 0);
    uint64_t bytes = cf_params_table_bytes(&p);
    /* the compact table: 6 bytes a bucket at 0.94, 2 bytes of padding */
    assert_int_equal(bytes, 6 * ((100000 * 10000 + 4 * 9400 - 1) / 37600) + 2);
    p.bucket_size = 2;
    assert_int_equal(cf_params_check(&p), -EINVAL);
    p.bucket_size = 4;
    p.growable = CF_GROWABLE_PAIR + 1;
    assert_int_equal(cf_params_check(&p), -EINVAL);
    p.growable = 1;
    p.max_bytes = 100;
    cf_filter_t *f = NULL;
    assert_int_equal(cf_create(&p, &f), -ENOMEM);
    assert_null(f);
    p.max_bytes = 0;
    assert_int_equal(cf_create(&p, &f), 0);
    cf_stats_t st;
    cf_stats(f, &st);
    assert_int_equal(st.capacity, 100000);
    assert_int_equal(st.bucket_size, 4);
    assert_int_equal(st.expansion, 1);
    assert_int_equal(st.size_bytes, cf_size_bytes(f));
    /* host bytes before a growable filter */
    assert_int_equal(cf_resize_extra(&f, 0, 64), 0);
    uint64_t k = 1;
    assert_int_equal(cf_add(f, &k, 8), 0);
    assert_true(cf_exists(f, &k, 8));
    cf_free_extra(f, 64);
}

/* One lane by the rule itself: used, the same tag, and the stored bits
 * below the marker equal to want's low bits. */
static bool lane_matches(uint32_t v, uint32_t want)
{
    uint32_t var = v & GR_VAR_MASK;
    if (var == 0 || (v >> GR_VAR_BITS) != (want >> GR_VAR_BITS))
        return false;
    uint32_t len = 31u - (uint32_t)__builtin_clz(var);
    return ((v ^ want) & ((1u << len) - 1)) == 0;
}

/* A lane for want: empty, another tag, any bits, or an entry of want's
 * tag whose stored bits (0 to 10 of them) differ from want's in one bit
 * or agree (about one lane in six matches). */
static uint64_t lane_near(uint64_t *rs, uint32_t want)
{
    uint64_t r = rnd(rs);
    uint32_t len = (uint32_t)(r % (GR_VAR_BITS));
    uint32_t t = want >> GR_VAR_BITS;
    switch ((r >> 8) % 12) {
    case 0:
        return 0;
    case 1:
    case 2:
    case 3:
    case 4:
        t ^= 1u + (uint32_t)((r >> 16) % (GR_TAGS - 1));
        break;
    case 5:
    case 6:
    case 7:
    case 8:
        if (len > 0)
            want ^= 1u << ((r >> 24) % len);
        break;
    case 9:
        return (r >> 32) & 0xFFFF; /* anything, even a lying slot */
    default:                       /* a match */
        break;
    }
    return t << GR_VAR_BITS | 1u << len | (want & ((1u << len) - 1));
}

/* The two-bucket compare of the batched lookups (vector form where the
 * target has one) against the one-bucket SWAR form and the rule. */
static void lane_compare_forms_agree(void **state)
{
    (void)state;
    uint64_t rs = 99;
    uint64_t hits = 0;
    for (int i = 0; i < 2000000; i++) {
        uint32_t want[2], any[2] = {0, 0};
        uint64_t w[2] = {0, 0};
        for (int k = 0; k < 2; k++) {
            uint64_t r = rnd(&rs);
            want[k] = (uint32_t)(r & 0x7FFF) & ~(1u << (GR_VAR_BITS - 1));
            for (int l = 0; l < GR_B; l++) {
                uint64_t lane = lane_near(&rs, want[k]);
                w[k] |= lane << (16 * l);
                any[k] |= lane_matches((uint32_t)lane, want[k]);
                assert_int_equal(lane_matches((uint32_t)lane, want[k]),
                                 (gr_match(w[k], want[k]) >> (16 * l)) & 1);
            }
        }
        bool two = gr_match2(w[0], w[1], want[0] | want[1] << 16);
        assert_int_equal(two, any[0] || any[1]);
        hits += two;
    }
    /* both answers occur often */
    assert_true(hits > 400000 && hits < 1800000);
}

/* cf_exists_many() answers as cf_exists() for every item, present or
 * not, at every size while the filter grows, with the stash empty and
 * held, for batches shorter and longer than the prefetch window. */
static void batched_lookups_agree(void **state)
{
    (void)state;
    enum { N = 3000 };
    static uint64_t keys[N];
    static const void *kp[N];
    static size_t lens[N];
    static bool out[N];
    for (uint64_t seed = 1; seed <= 2; seed++) {
        cf_filter_t *f = make(100, seed);
        uint64_t next = 0, positives = 0;
        for (int round = 0; round < 14; round++) {
            for (uint64_t end = next + (100ull << round); next < end; next++)
                assert_int_equal(item_add(f, next), 0);
            if (round == 12) { /* a level part split */
                cf_grow_info_t gi;
                cf_grow_info(f, &gi);
                assert_true(gi.split > 0);
            }
            if (round == 13) {
                /* copies past their buckets (the overflow), then, with no
                 * room to grow, items until one waits in the stash */
                for (int i = 0; i < 100; i++)
                    assert_int_equal(item_add(f, 7), 0);
                cf_grow_info_t gi;
                cf_grow_info(f, &gi);
                uint64_t st0 = gi.stashed, room = 0;
                for (int i = 0; i < 1000000 && gi.stashed == st0; i++) {
                    uint64_t k = key_of(next++);
                    const void *k1 = &k;
                    size_t l1 = sizeof(k);
                    int rc;
                    cf_add_many(f, 1, &k1, &l1, false, &room, &rc);
                    cf_grow_info(f, &gi);
                }
                assert_true(gi.stashed > st0);
            }
            for (size_t i = 0; i < N; i++) {
                /* every third absent: hits there are false positives */
                keys[i] = key_of(i % 3 ? (rnd(&seed) % next) : next + i);
                kp[i] = &keys[i];
                lens[i] = 8;
            }
            size_t sizes[] = {1, 7, 16, 17, 1000, N};
            for (size_t si = 0; si < sizeof(sizes) / sizeof(sizes[0]); si++) {
                for (size_t at = 0; at < N; at += sizes[si]) {
                    size_t m = N - at < sizes[si] ? N - at : sizes[si];
                    cf_exists_many(f, m, kp + at, lens + at, out + at);
                }
                for (size_t i = 0; i < N; i++) {
                    assert_int_equal(out[i], cf_exists(f, kp[i], 8));
                    positives += out[i];
                }
            }
        }
        cf_grow_info_t gi;
        cf_grow_info(f, &gi);
        assert_true(gi.level >= 10);
        assert_true(positives >= 14 * 6 * (N * 2 / 3));
        cf_free(f);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(random_ops_through_ten_doublings),
        cmocka_unit_test(round_trip_mid_growth),
        cmocka_unit_test(compact_then_converted),
        cmocka_unit_test(whole_filters_keep_version_4),
        cmocka_unit_test(compact_forms_agree),
        cmocka_unit_test(inline_small_filters),
        cmocka_unit_test(same_ops_same_bytes),
        cmocka_unit_test(lying_headers_refused),
        cmocka_unit_test(copies_of_one_item),
        cmocka_unit_test(copies_of_one_item_at_load),
        cmocka_unit_test(copies_behind_another_items_entries),
        cmocka_unit_test(overflow_sizes_and_room),
        cmocka_unit_test(small_reserves_never_refuse),
        cmocka_unit_test(sizes_and_room),
        cmocka_unit_test(params),
        cmocka_unit_test(lane_compare_forms_agree),
        cmocka_unit_test(batched_lookups_agree),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
