/* libFuzzer harness of the window kind, two ways by the first byte:
 *
 *  even: a sequence of adds, re-adds, dated adds, deletes and clock steps
 *        (long ones too) on a small filter, every answer checked against
 *        the exact model of tests/unit/cf_win_model.h (no false negative
 *        inside the window, nothing present past it and its slack); at
 *        the end the filter dumped and loaded answers the same. A failed
 *        check aborts.
 *  odd:  the rest is an untrusted serialised window filter (its header
 *        checksum fixed, so the field checks are explored); when accepted
 *        it is given times, queried, written to, swept. Nothing may crash.
 */
#include <errno.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "cf_fixture.h"

#define WM_CHECK(cond)                                                         \
    do {                                                                       \
        if (!(cond))                                                           \
            abort();                                                           \
    } while (0)
#define WM_UNIVERSE 512 /* few items: many runs, many collisions */
#include "cf_win_model.h"

#define T0 1700000000000ull

static void ops(const uint8_t *data, size_t size)
{
    uint64_t cap = size > 1 ? 8 + data[1] % 200 : 8;
    uint64_t window = size > 2 ? 1 + (uint64_t)data[2] * 37 : 1;
    wm_t *m = wm_new(cap, window, size > 3 ? data[3] : 0, T0);
    for (size_t i = 4; i + 2 < size; i += 3) {
        uint32_t id =
            ((uint32_t)data[i + 1] | (uint32_t)data[i + 2] << 8) % WM_UNIVERSE;
        switch (data[i] % 8) {
        case 0:
        case 1:
            wm_add(m, id, 0, false);
            break;
        case 2:
            wm_add(m, id, 0, true);
            break;
        case 3: /* dated: up to two windows back */
            wm_add(m, id, m->now - (data[i + 2] * 2 * window) / 255, false);
            break;
        case 4:
            wm_del(m, id);
            break;
        case 5: /* a step of up to two slices */
            wm_step(m, (data[i + 1] * 2 * m->slice) / 255);
            break;
        case 6: /* a long step: whole ranges of stamps */
            wm_step(m, (uint64_t)(data[i + 1] % 40) * m->slice);
            break;
        default:
            wm_check(m, id);
            break;
        }
    }
    for (uint32_t id = 0; id < WM_UNIVERSE; id += 7)
        wm_check(m, id);
    wm_check_counts(m);
    /* dumped and loaded: the same answers */
    size_t h = cf_header_len(m->f);
    uint64_t d = cf_data_len(m->f);
    uint8_t *buf = malloc(h + (size_t)d);
    WM_CHECK(buf != NULL);
    cf_header_write(m->f, buf);
    for (uint64_t off = 0; off < d;) {
        const void *p;
        size_t got = cf_data_view(m->f, off, 333, &p);
        WM_CHECK(got > 0);
        memcpy(buf + h + off, p, got);
        off += got;
    }
    cf_filter_t *g = NULL;
    size_t used;
    WM_CHECK(cf_load_header(buf, h + (size_t)d, NULL, &g, &used) == 0);
    WM_CHECK(cf_load_data(g, 0, buf + used, (size_t)d) == 0);
    cf_filter_t *orig = m->f;
    m->f = g;
    cf_set_time(g, m->now, m->now);
    for (uint32_t id = 0; id < WM_UNIVERSE; id += 5)
        wm_check(m, id);
    wm_check_counts(m);
    m->f = orig;
    cf_free(g);
    free(buf);
    wm_free(m);
}

static void load(const uint8_t *data, size_t size)
{
    uint8_t *buf;
    cf_filter_t *f = fuzz_load_split(data, size, &buf);
    if (f != NULL && cf_is_window(f)) {
        uint64_t t = T0;
        for (size_t i = 0; i + 4 <= size && i < 256; i += 4) {
            t += (uint64_t)buf[i] * 1000;
            cf_set_time(f, t, t - buf[i + 1] * 100);
            (void)cf_exists(f, buf + i, 4);
            (void)cf_count(f, buf + i, 4);
            (void)cf_del(f, buf + i, 2);
            (void)cf_add(f, buf + i, 3);
            (void)cf_add_nx(f, buf + i + 1, 3);
            (void)cf_sweep(f, buf[i + 2]);
        }
        cf_window_info_t wi;
        WM_CHECK(cf_window_info(f, &wi));
        cf_stats_t st;
        cf_stats(f, &st);
        WM_CHECK(st.items == wi.live);
    }
    cf_free(f);
    free(buf);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size == 0)
        return 0;
    if (data[0] & 1)
        load(data + 1, size - 1);
    else
        ops(data, size);
    return 0;
}
