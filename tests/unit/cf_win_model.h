/*
 * cf_win_model.h - an exact model of a window filter, shared by the unit
 * test and the fuzz target: it drives a filter with adds, re-adds,
 * deletes and clock steps and checks every answer.
 *
 * Why it can be exact: in partial-key cuckoo hashing the alternate bucket
 * is a function of a bucket and the fingerprint alone, so every item with
 * a given fingerprint and a bucket in common has the same pair of buckets;
 * items of one class (fingerprint, pair) are one item to the filter, and a
 * lookup can only match entries of its own class. The window kind keeps at
 * most one live entry per class (an add refreshes it), so a class is
 * present exactly while its latest add is at most CF_WIN_SLICES slices
 * behind the clock and no delete took it since. The model keeps that per
 * class, and also checks the promise in milliseconds: an item is present
 * until window_ms after its own last add, and gone slack_ms after its
 * class's last add.
 *
 * The includer defines WM_CHECK(cond) (an assertion) before including,
 * and includes cf_win.h (for the hash).
 */
#ifndef CF_WIN_MODEL_H
#define CF_WIN_MODEL_H

#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "cf.h"
#include "cf_win.h"

#ifndef WM_UNIVERSE
#define WM_UNIVERSE 4096 /* items; an includer may choose fewer */
#endif

typedef struct wm {
    cf_filter_t *f;
    uint64_t window, slice, slack, now;
    /* per item: its class, and the time of its last add (0: none) */
    uint32_t cls[WM_UNIVERSE];
    uint64_t item_add[WM_UNIVERSE];
    /* per class: the time of its latest add, 0 when it has no entry */
    uint64_t *cls_add;
    uint32_t ncls;
    uint64_t adds, refused, dels, fps;
} wm_t;

static inline void wm_key(uint32_t i, char *buf, size_t *len)
{
    memcpy(buf, "item:", 5);
    for (int k = 0; k < 4; k++)
        buf[5 + k] = (char)('a' + ((i >> (4 * k)) & 15));
    *len = 9;
}

/* The item's class: fingerprint and unordered pair, as cf_win.c hashes. */
static inline uint64_t wm_class_key(const cf_filter_t *f, uint32_t i)
{
    char k[16];
    size_t len;
    wm_key(i, k, &len);
    uint64_t nb = f->u.win->nbuckets, h = key_hash(k, len, f->seed);
    uint32_t fp = (uint32_t)h & 0xFFFu;
    fp += fp == 0;
    uint64_t i1 = mulhi(h, nb), i2 = alt_of(nb, i1, fp);
    uint64_t lo = i1 < i2 ? i1 : i2;
    return lo << 12 | fp;
}

static int wm_cmp(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

/* A model around a new filter of capacity and window, at clock start. */
static inline wm_t *wm_new(uint64_t capacity, uint64_t window, uint64_t seed,
                           uint64_t start)
{
    wm_t *m = calloc(1, sizeof(*m));
    cf_params_t p;
    cf_params_default(&p);
    p.capacity = capacity;
    p.window_ms = window;
    p.seed = seed;
    WM_CHECK(m != NULL && cf_create(&p, &m->f) == 0);
    cf_window_info_t wi;
    WM_CHECK(cf_window_info(m->f, &wi));
    m->window = window;
    m->slice = wi.slice_ms;
    m->slack = wi.slack_ms;
    m->now = start;
    cf_set_time(m->f, start, start);
    /* classes: sort the keys, number the distinct ones */
    uint64_t keys[WM_UNIVERSE], sorted[WM_UNIVERSE];
    for (uint32_t i = 0; i < WM_UNIVERSE; i++)
        keys[i] = sorted[i] = wm_class_key(m->f, i);
    qsort(sorted, WM_UNIVERSE, sizeof(sorted[0]), wm_cmp);
    uint32_t n = 0;
    for (uint32_t i = 0; i < WM_UNIVERSE; i++)
        if (i == 0 || sorted[i] != sorted[i - 1])
            sorted[n++] = sorted[i];
    for (uint32_t i = 0; i < WM_UNIVERSE; i++) {
        uint64_t *hit = bsearch(&keys[i], sorted, n, sizeof(sorted[0]), wm_cmp);
        m->cls[i] = (uint32_t)(hit - sorted);
    }
    m->ncls = n;
    m->cls_add = calloc(n, sizeof(uint64_t));
    WM_CHECK(m->cls_add != NULL);
    return m;
}

static inline void wm_free(wm_t *m)
{
    cf_free(m->f);
    free(m->cls_add);
    free(m);
}

static inline bool wm_class_live(const wm_t *m, uint32_t c)
{
    uint64_t t = m->cls_add[c];
    return t != 0 && m->now / m->slice - t / m->slice <= CF_WIN_SLICES;
}

/* Checks item i's every answer against the model. */
static inline void wm_check(wm_t *m, uint32_t i)
{
    char k[16];
    size_t len;
    wm_key(i, k, &len);
    uint32_t c = m->cls[i];
    bool live = wm_class_live(m, c);
    WM_CHECK(cf_exists(m->f, k, len) == live);
    WM_CHECK(cf_count(m->f, k, len) == (uint64_t)live);
    /* the promise in milliseconds */
    if (m->item_add[i] != 0 && m->now - m->item_add[i] <= m->window &&
        m->cls_add[c] != 0)
        WM_CHECK(live);
    if (m->cls_add[c] != 0 && m->now - m->cls_add[c] >= m->window + m->slack)
        WM_CHECK(!live);
}

/* An add of item i at time at (<= now; now when at is 0). */
static inline void wm_add(wm_t *m, uint32_t i, uint64_t at, bool nx)
{
    char k[16];
    size_t len;
    wm_key(i, k, &len);
    if (at == 0 || at > m->now)
        at = m->now;
    uint32_t c = m->cls[i];
    bool was = wm_class_live(m, c);
    cf_set_time(m->f, m->now, at);
    int rc = nx ? cf_add_nx(m->f, k, len) : cf_add(m->f, k, len);
    bool expired = m->now / m->slice - at / m->slice > CF_WIN_SLICES;
    if (rc == -ENOSPC) {
        WM_CHECK(!was && !expired);
        m->refused++;
        return;
    }
    WM_CHECK(rc == (nx ? !was : 0));
    m->adds++;
    if (expired)
        return;
    if (!was || at > m->cls_add[c])
        m->cls_add[c] = at;
    if (at > m->item_add[i])
        m->item_add[i] = at;
}

static inline void wm_del(wm_t *m, uint32_t i)
{
    char k[16];
    size_t len;
    wm_key(i, k, &len);
    uint32_t c = m->cls[i];
    bool was = wm_class_live(m, c);
    cf_set_time(m->f, m->now, m->now);
    WM_CHECK(cf_del(m->f, k, len) == (int)was);
    if (was) {
        m->dels++;
        m->cls_add[c] = 0;
        /* every item of the class is gone with it */
        for (uint32_t j = 0; j < WM_UNIVERSE; j++)
            if (m->cls[j] == c)
                m->item_add[j] = 0;
    }
}

static inline void wm_step(wm_t *m, uint64_t ms)
{
    m->now += ms;
    cf_set_time(m->f, m->now, m->now);
}

/* The counts CF.INFO shows agree with the model's live classes. */
static inline void wm_check_counts(wm_t *m)
{
    cf_window_info_t wi;
    WM_CHECK(cf_window_info(m->f, &wi));
    uint64_t live = 0;
    for (uint32_t c = 0; c < m->ncls; c++)
        live += wm_class_live(m, c);
    WM_CHECK(wi.live == live);
}

#endif /* CF_WIN_MODEL_H */
