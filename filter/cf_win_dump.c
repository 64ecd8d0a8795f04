/*
 * cf_win_dump.c - the window kind's serialised form, validated on load.
 *
 * Header, little-endian, CF_WIN_HDR_LEN bytes:
 *   0  u32 magic "CKW1"     4  u16 version (1, 2)  6  u16 header length
 *   8  u32 max kicks       12  u8 slices (8)      13  u8 stamp bits (4)
 *  14  u16 reserved (0)
 *  16  u64 capacity        24  u64 buckets        32  u64 window ms
 *  40  u64 clock ms (the latest add's time)        48  u64 newest slice
 *  56  u64 deleted
 *  64  u64 sweep cursor    72  u64 kick state     80  u64 seed
 *  88  u64 XXH3-64 of the 88 bytes before it
 * followed by the data: the buckets, bucket 0 first. Version 2 (every
 * filter made now): 60 bits a bucket, packed end to end little-endian
 * (bucket b at bit 60 b; cf_win.c, "the table's two layouts"), in
 * ceil(7.5 buckets) bytes. Version 1 (filters made before, loaded and
 * kept in their form): 64 bits a bucket, four little-endian 16-bit slots
 * (cf_win.h). Times are absolute (unix ms), so
 * a filter loaded later, or by a replica, forgets at the same moments.
 * The per-stamp counts are not saved: they follow from the slots.
 */
#include <errno.h>

#include "cf_win.h"

#define W(f) ((f)->u.win)

void cf_win_header(const cf_filter_t *f, void *buf)
{
    const struct cf_win *w = W(f);
    uint8_t *p = buf;
    cf_win_settle(f);
    memset(p, 0, CF_WIN_HDR_LEN);
    le_store32(p, CF_WIN_MAGIC);
    le_store16(p + 4, w->wide ? CF_WIN_VERSION_WIDE : CF_WIN_VERSION);
    le_store16(p + 6, CF_WIN_HDR_LEN);
    le_store32(p + 8, w->max_kicks);
    p[12] = CF_WIN_SLICES;
    p[13] = CF_WIN_STAMP_BITS;
    le_store64(p + 16, w->capacity);
    le_store64(p + 24, w->nbuckets);
    le_store64(p + 32, w->window_ms);
    le_store64(p + 40, w->write_ms);
    le_store64(p + 48, w->newest);
    le_store64(p + 56, f->deleted);
    le_store64(p + 64, w->cursor);
    le_store64(p + 72, w->rng);
    le_store64(p + 80, f->seed);
    le_store64(p + 88, XXH3_64bits(p, CF_WIN_HDR_LEN - 8));
}

int cf_win_load_header(const void *buf, size_t len, const cf_limits_t *lim,
                       cf_filter_t **out, size_t *used)
{
    const uint8_t *p = buf;
    *out = NULL;
    uint16_t version = len < CF_WIN_HDR_LEN ? 0 : le_load16(p + 4);
    if (len < CF_WIN_HDR_LEN || le_load32(p) != CF_WIN_MAGIC ||
        (version != CF_WIN_VERSION && version != CF_WIN_VERSION_WIDE) ||
        le_load16(p + 6) != CF_WIN_HDR_LEN || p[12] != CF_WIN_SLICES ||
        p[13] != CF_WIN_STAMP_BITS || le_load16(p + 14) != 0 ||
        le_load64(p + 88) != XXH3_64bits(p, CF_WIN_HDR_LEN - 8))
        return -EINVAL;
    uint32_t kicks = le_load32(p + 8);
    uint64_t cap = le_load64(p + 16), nb = le_load64(p + 24);
    uint64_t window = le_load64(p + 32), clock = le_load64(p + 40);
    uint64_t newest = le_load64(p + 48), cursor = le_load64(p + 64);
    uint64_t rng = le_load64(p + 72);
    if (kicks < 1 || kicks > CF_MAX_KICKS || cap < 1 || cap > CF_MAX_CAPACITY ||
        window < 1 || window > CF_MAX_WINDOW_MS ||
        nb != cf_win_buckets_for(cap) || cursor >= nb || rng == 0)
        return -EINVAL;
    uint64_t slice = (window + CF_WIN_SLICES - 1) / CF_WIN_SLICES;
    if (newest > clock / slice)
        return -EINVAL;
    if (nb > CF_ABS_MAX_BYTES / 8 ||
        (lim != NULL && lim->max_bytes != 0 &&
         (version == CF_WIN_VERSION_WIDE ? nb * 8 : nb * 15 / 2) >
             lim->max_bytes))
        return -ENOMEM;
    cf_filter_t *f;
    int rc = cf_win_new(cap, window, 0, version == CF_WIN_VERSION_WIDE, &f);
    if (rc != 0)
        return rc;
    struct cf_win *w = W(f);
    f->seed = le_load64(p + 80);
    f->deleted = le_load64(p + 56);
    w->max_kicks = kicks;
    w->newest = newest;
    w->cursor = cursor;
    w->rng = rng;
    /* from clock 0 (as cf_win_new() made it) to the saved clock: the
     * stamps alive then follow from newest */
    cf_win_set_time(f, clock, clock);
    w->write_ms = clock;
    *out = f;
    *used = CF_WIN_HDR_LEN;
    return 0;
}

size_t cf_win_data_view(const cf_filter_t *f, uint64_t off, size_t max,
                        const void **p)
{
    uint64_t n = cf_win_data_len(f);
    cf_win_settle(f);
    if (off >= n)
        return 0;
    *p = (const uint8_t *)W(f)->t + off;
    return n - off < max ? (size_t)(n - off) : max;
}

int cf_win_load_data(cf_filter_t *f, uint64_t off, const void *p, size_t len)
{
    struct cf_win *w = W(f);
    uint64_t n = cf_win_data_len(f);
    if (off > n || len > n - off)
        return -EINVAL;
    if (len == 0)
        return 0;
    cf_win_settle(f);
    /* the counts follow the slots: the buckets touched come off, then
     * the new ones go on */
    cf_win_count_bytes(f, off, len, -1);
    memcpy(w->t + off, p, len);
    cf_win_count_bytes(f, off, len, 1);
    w->maybe_stale = true;
    return 0;
}
