/*
 * cf_kind.c - the public functions of cf.h that depend on a filter's kind:
 * one switch each, handing the filter to its kind's code (cf_fixed.h,
 * cf_grow.h, cf_rb.h, cf_win.h). Nothing else here; a new kind is a case in
 * each. The kinds never call back into these (they free their own half-made
 * filters), so the dispatch sits above them with no cycle.
 */
#include <errno.h>

#include "cf_fixed.h"
#include "cf_grow.h"
#include "cf_pair.h"
#include "cf_rb.h"
#include "cf_win.h"

#define mem (*cf_mem_allocator())

int cf_create(const cf_params_t *p, cf_filter_t **out)
{
    *out = NULL;
    if (cf_params_check(p) < 0)
        return -EINVAL;
    if (p->window_ms != 0)
        return cf_win_create(p, out);
    if (p->growable == CF_GROWABLE_PAIR)
        return cf_pair_create(p, out);
    return p->growable ? cf_grow_create(p, out) : cf_fixed_create(p, out);
}

void cf_free_extra(cf_filter_t *f, size_t have)
{
    if (f == NULL)
        return;
    switch ((cf_kind_t)f->kind) {
    case CF_KIND_FIXED:
        cf_fixed_release(f);
        break;
    case CF_KIND_GROW:
        if (cf_is_pair(f))
            cf_pair_release(f);
        cf_grow_release(f);
        break;
    case CF_KIND_RB:
        cf_rb_release(f);
        break;
    case CF_KIND_WIN:
        cf_win_release(f);
        break;
    }
    mem.free_fn((uint8_t *)f - have);
}

void cf_free(cf_filter_t *f)
{
    cf_free_extra(f, 0);
}

int cf_add(cf_filter_t *f, const void *key, size_t len)
{
    uint64_t room = UINT64_MAX;
    switch ((cf_kind_t)f->kind) {
    case CF_KIND_GROW:
        return cf_is_pair(f) ? cf_pair_add(f, key, len, false, &room)
                             : cf_grow_add(f, key, len, false, &room);
    case CF_KIND_RB:
        return cf_rb_add(f, key, len, false, &room);
    case CF_KIND_WIN:
        return cf_win_add(f, key, len, false);
    case CF_KIND_FIXED:
    default:
        return cf_fixed_add(f, key, len);
    }
}

int cf_add_nx(cf_filter_t *f, const void *key, size_t len)
{
    uint64_t room = UINT64_MAX;
    switch ((cf_kind_t)f->kind) {
    case CF_KIND_GROW:
        return cf_is_pair(f) ? cf_pair_add(f, key, len, true, &room)
                             : cf_grow_add(f, key, len, true, &room);
    case CF_KIND_RB:
        return cf_rb_add(f, key, len, true, &room);
    case CF_KIND_WIN:
        return cf_win_add(f, key, len, true);
    case CF_KIND_FIXED:
    default:
        return cf_fixed_add_nx(f, key, len);
    }
}

bool cf_exists(const cf_filter_t *f, const void *key, size_t len)
{
    switch ((cf_kind_t)f->kind) {
    case CF_KIND_GROW:
        return cf_is_pair(f) ? cf_pair_exists(f, key, len)
                             : cf_grow_exists(f, key, len);
    case CF_KIND_RB:
        return cf_rb_exists(f, key, len);
    case CF_KIND_WIN:
        return cf_win_exists(f, key, len);
    case CF_KIND_FIXED:
    default:
        return cf_fixed_exists(f, key, len);
    }
}

uint64_t cf_count(const cf_filter_t *f, const void *key, size_t len)
{
    switch ((cf_kind_t)f->kind) {
    case CF_KIND_GROW:
        return cf_is_pair(f) ? cf_pair_count(f, key, len)
                             : cf_grow_count(f, key, len);
    case CF_KIND_RB:
        return cf_rb_count(f, key, len);
    case CF_KIND_WIN:
        return cf_win_count(f, key, len);
    case CF_KIND_FIXED:
    default:
        return cf_fixed_count(f, key, len);
    }
}

int cf_del(cf_filter_t *f, const void *key, size_t len)
{
    switch ((cf_kind_t)f->kind) {
    case CF_KIND_GROW:
        return cf_is_pair(f) ? cf_pair_del(f, key, len)
                             : cf_grow_del(f, key, len);
    case CF_KIND_RB:
        return cf_rb_del(f, key, len);
    case CF_KIND_WIN:
        return cf_win_del(f, key, len);
    case CF_KIND_FIXED:
    default:
        return cf_fixed_del(f, key, len);
    }
}

void cf_prefetch(const cf_filter_t *f, const void *key, size_t len)
{
    switch ((cf_kind_t)f->kind) {
    case CF_KIND_GROW:
        if (cf_is_pair(f))
            cf_pair_prefetch(f, key, len);
        else
            cf_grow_prefetch(f, key, len);
        return;
    case CF_KIND_RB:
        cf_rb_prefetch(f, key, len);
        return;
    case CF_KIND_WIN:
        cf_win_prefetch(f, key, len);
        return;
    case CF_KIND_FIXED:
    default:
        cf_fixed_prefetch(f, key, len);
        return;
    }
}

void cf_prefetch_filter(const cf_filter_t *f)
{
    /* addresses, not pointers into f: the line before may not be f's */
    uintptr_t p = (uintptr_t)f;
    for (int line = -1; line < 4; line++)
        __builtin_prefetch((const void *)(p + (uintptr_t)(64 * line)));
}

void cf_exists_many(const cf_filter_t *f, size_t n, const void *const *keys,
                    const size_t *lens, bool *out)
{
    switch ((cf_kind_t)f->kind) {
    case CF_KIND_GROW:
        if (cf_is_pair(f))
            cf_pair_exists_many(f, n, keys, lens, out);
        else
            cf_grow_exists_many(f, n, keys, lens, out);
        return;
    case CF_KIND_RB:
        for (size_t i = 0; i < n; i++)
            cf_rb_prefetch(f, keys[i], lens[i]);
        for (size_t i = 0; i < n; i++)
            out[i] = cf_rb_exists(f, keys[i], lens[i]);
        return;
    case CF_KIND_WIN:
        cf_win_exists_many(f, n, keys, lens, out);
        return;
    case CF_KIND_FIXED:
    default:
        cf_fixed_exists_many(f, n, keys, lens, out);
        return;
    }
}

void cf_add_many(cf_filter_t *f, size_t n, const void *const *keys,
                 const size_t *lens, bool nx, uint64_t *room, int *rc)
{
    uint64_t none = UINT64_MAX;
    if (room == NULL)
        room = &none;
    switch ((cf_kind_t)f->kind) {
    case CF_KIND_GROW:
        if (cf_is_pair(f))
            cf_pair_add_many(f, n, keys, lens, nx, room, rc);
        else
            cf_grow_add_many(f, n, keys, lens, nx, room, rc);
        return;
    case CF_KIND_RB:
        for (size_t i = 0; i < n; i++)
            rc[i] = cf_rb_add(f, keys[i], lens[i], nx, room);
        return;
    case CF_KIND_WIN:
        cf_win_add_many(f, n, keys, lens, nx, rc);
        return;
    case CF_KIND_FIXED:
    default:
        cf_fixed_add_many(f, n, keys, lens, nx, room, rc);
        return;
    }
}

void cf_stats(const cf_filter_t *f, cf_stats_t *st)
{
    switch ((cf_kind_t)f->kind) {
    case CF_KIND_GROW:
        if (cf_is_pair(f))
            cf_pair_stats(f, st);
        else
            cf_grow_stats(f, st);
        return;
    case CF_KIND_RB:
        cf_rb_stats(f, st);
        return;
    case CF_KIND_WIN:
        cf_win_stats(f, st);
        return;
    case CF_KIND_FIXED:
    default:
        cf_fixed_stats(f, st);
        return;
    }
}

uint32_t cf_nfilters(const cf_filter_t *f)
{
    switch ((cf_kind_t)f->kind) {
    case CF_KIND_GROW:
        return cf_is_pair(f) ? cf_pair_gen(f) : cf_grow_gen(f);
    case CF_KIND_RB:
        return cf_rb_gen(f);
    case CF_KIND_WIN:
        return 1; /* its size never changes */
    case CF_KIND_FIXED:
    default:
        return f->nfilters;
    }
}

uint64_t cf_size_bytes_at(const cf_filter_t *f, uint32_t n)
{
    switch ((cf_kind_t)f->kind) {
    case CF_KIND_GROW:
        return cf_is_pair(f) ? cf_pair_size_at(f, n) : cf_grow_size_at(f, n);
    case CF_KIND_RB:
        return cf_rb_size_at(f, n);
    case CF_KIND_WIN:
        return cf_win_size_bytes(f);
    case CF_KIND_FIXED:
    default:
        return cf_fixed_size_bytes_at(f, n);
    }
}

uint64_t cf_size_bytes(const cf_filter_t *f)
{
    switch ((cf_kind_t)f->kind) {
    case CF_KIND_GROW:
        return cf_is_pair(f) ? cf_pair_size_bytes(f) : cf_grow_size_bytes(f);
    case CF_KIND_RB:
        return cf_rb_size_bytes(f);
    case CF_KIND_WIN:
        return cf_win_size_bytes(f);
    case CF_KIND_FIXED:
    default:
        return cf_fixed_size_bytes_at(f, f->nfilters);
    }
}

int cf_resize_extra(cf_filter_t **fp, size_t have, size_t n)
{
    cf_filter_t *f = *fp;
    if (have % CF_EXTRA_ALIGN != 0 || n % CF_EXTRA_ALIGN != 0)
        return -EINVAL;
    if (n == have)
        return 0;
    /* What moves with the struct: a fixed filter's first table, or a
     * growable filter's inline table, can follow it in its allocation. */
    bool fixed = f->kind == CF_KIND_FIXED;
    size_t own = fixed                     ? cf_fixed_own_bytes(f)
                 : f->kind == CF_KIND_GROW ? (size_t)cf_grow_own_bytes(f)
                                           : sizeof(*f);
    if (n > SIZE_MAX - own)
        return -ENOMEM;
    bool inl = fixed && cf_fixed_has_inline(f);
    uint8_t *base = (uint8_t *)f - have, *nb;
    if (n < have) {
        /* A block of its own: shrinking in place would move the struct
         * over the host bytes first, and a failed realloc would leave
         * them overwritten. */
        nb = mem.malloc_fn(n + own);
        if (nb == NULL)
            return -ENOMEM;
        memcpy(nb + n, f, own);
        mem.free_fn(base);
    } else {
        nb = mem.realloc_fn(base, n + own);
        if (nb == NULL)
            return -ENOMEM;
        memmove(nb + n, nb + have, own);
    }
    cf_filter_t *g = (cf_filter_t *)(void *)(nb + n);
    if (inl)
        cf_fixed_moved(g);
    *fp = g;
    return 0;
}

size_t cf_header_len(const cf_filter_t *f)
{
    switch ((cf_kind_t)f->kind) {
    case CF_KIND_GROW:
        return cf_is_pair(f) ? CF_PAIR_HDR_LEN : cf_grow_header_len(f);
    case CF_KIND_RB:
        return CF_RB_WRAP_LEN;
    case CF_KIND_WIN:
        return CF_WIN_HDR_LEN;
    case CF_KIND_FIXED:
    default:
        return cf_fixed_header_len(f);
    }
}

void cf_header_write(const cf_filter_t *f, void *buf)
{
    switch ((cf_kind_t)f->kind) {
    case CF_KIND_GROW:
        if (cf_is_pair(f))
            cf_pair_header(f, buf);
        else
            cf_grow_header(f, buf);
        return;
    case CF_KIND_RB:
        cf_rb_header_wrap(f, buf);
        return;
    case CF_KIND_WIN:
        cf_win_header(f, buf);
        return;
    case CF_KIND_FIXED:
    default:
        cf_fixed_header_write(f, buf);
        return;
    }
}

uint64_t cf_data_len(const cf_filter_t *f)
{
    switch ((cf_kind_t)f->kind) {
    case CF_KIND_GROW:
        return cf_is_pair(f) ? cf_pair_data_len(f) : cf_grow_data_len(f);
    case CF_KIND_RB:
        return cf_rb_data_len(f);
    case CF_KIND_WIN:
        return cf_win_data_len(f);
    case CF_KIND_FIXED:
    default:
        return cf_fixed_data_len(f);
    }
}

size_t cf_data_view(const cf_filter_t *f, uint64_t off, size_t max,
                    const void **p)
{
    switch ((cf_kind_t)f->kind) {
    case CF_KIND_GROW:
        return cf_is_pair(f) ? cf_pair_data_view(f, off, max, p)
                             : cf_grow_data_view(f, off, max, p);
    case CF_KIND_RB:
        return cf_rb_data_view(f, off, max, p);
    case CF_KIND_WIN:
        return cf_win_data_view(f, off, max, p);
    case CF_KIND_FIXED:
    default:
        return cf_fixed_data_view(f, off, max, p);
    }
}

int cf_load_header(const void *buf, size_t len, const cf_limits_t *lim,
                   cf_filter_t **out, size_t *used)
{
    const uint8_t *p = buf;
    *out = NULL;
    if (len >= 4 && le_load32(p) == CF_RB_MAGIC)
        return cf_rb_load_wrap(buf, len, lim, out, used);
    if (len >= 4 && le_load32(p) == CF_WIN_MAGIC)
        return cf_win_load_header(buf, len, lim, out, used);
    if (len >= 6 && le_load32(p) == CF_MAGIC &&
        (le_load16(p + 4) == CF_GROW_VERSION ||
         le_load16(p + 4) == CF_GROW_VERSION5))
        return len >= 16 && cf_grow_is_pair_header(p)
                   ? cf_pair_load_header(buf, len, lim, out, used)
                   : cf_grow_load_header(buf, len, lim, out, used);
    return cf_fixed_load_header(buf, len, lim, out, used);
}

bool cf_is_header_len(size_t len)
{
    return len == CF_RB_HEADER_LEN || len == CF_RB_WRAP_LEN ||
           len == CF_GROW_HDR_LEN || len == CF_GROW_HDR5_LEN ||
           len == CF_PAIR_HDR_LEN || len == CF_WIN_HDR_LEN ||
           cf_fixed_is_header_len(len);
}

int cf_load_data(cf_filter_t *f, uint64_t off, const void *p, size_t len)
{
    switch ((cf_kind_t)f->kind) {
    case CF_KIND_GROW:
        return cf_is_pair(f) ? cf_pair_load_data(f, off, p, len)
                             : cf_grow_load_data(f, off, p, len);
    case CF_KIND_RB:
        return cf_rb_load_data(f, off, p, len);
    case CF_KIND_WIN:
        return cf_win_load_data(f, off, p, len);
    case CF_KIND_FIXED:
    default:
        return cf_fixed_load_data(f, off, p, len);
    }
}

bool cf_is_redisbloom(const cf_filter_t *f)
{
    return f->kind == CF_KIND_RB;
}

void cf_compact(cf_filter_t *f)
{
    if (f->kind == CF_KIND_RB)
        cf_rb_compact(f);
}

uint64_t cf_set_time(cf_filter_t *f, uint64_t now_ms, uint64_t add_ms)
{
    return f->kind == CF_KIND_WIN ? cf_win_set_time(f, now_ms, add_ms) : 0;
}

bool cf_is_window(const cf_filter_t *f)
{
    return f->kind == CF_KIND_WIN;
}

bool cf_window_info(const cf_filter_t *f, cf_window_info_t *wi)
{
    if (f->kind != CF_KIND_WIN)
        return false;
    cf_win_info(f, wi);
    return true;
}

uint64_t cf_sweep(cf_filter_t *f, uint64_t buckets)
{
    return f->kind == CF_KIND_WIN ? cf_win_sweep(f, buckets) : 0;
}
