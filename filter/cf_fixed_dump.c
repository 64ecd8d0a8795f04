/*
 * cf_fixed_dump.c - the fixed kind's serialisation: the header and the
 * data of a filter, written and loaded in pieces, validated on load.
 *
 * Serialised form, little-endian, version 2 (3: the same with byte 15 set
 * to 1, a nested filter; see cf_core.h):
 *   0  u32 magic "CKF1"      4  u16 version      6  u16 header length
 *   8  u32 bucket size      12  u8 fp bits      13  u8 nfilters
 *  14  u8 encoding (CF_ENC_*)                    15  u8 flags (v3)
 *  16  u32 max kicks        20  u32 expansion   24  u32 max filters 28 u32 0
 *  32  u64 seed             40  u64 items       48  u64 deleted
 *  56  per table, 32 bytes: u64 nbuckets, u64 capacity, u64 victim bucket,
 *      u32 victim fingerprint, u8 victim used, 3 bytes 0
 *  ..  u64 XXH3-64 of all the header bytes before it
 * followed by the data: every table's bytes, oldest table first.
 * Version 4 is the growable form (cf_grow_dump.c).
 * Version 1 (still read) had byte 14 = 0 (plain, the only encoding then)
 * and per table a u16 victim fingerprint, u8 victim used, 5 bytes 0.
 */
#include <errno.h>

#include "cf_fixed.h"

#define CF_VERSION 3     /* the newest read; 2 is written unless nested */
#define CF_FLAG_NESTED 1 /* byte 15 of version 3 */
#define CF_HDR_FIXED 56  /* bytes before the table entries */
#define CF_HDR_TABLE 32  /* bytes of one table entry */
#define CF_HDR_SUM 8     /* the XXH3-64 after the entries */

_Static_assert(CF_HEADER_MAX ==
                   CF_HDR_FIXED + CF_MAX_FILTERS * CF_HDR_TABLE + CF_HDR_SUM,
               "cf.h's CF_HEADER_MAX must match the header layout");

size_t cf_fixed_header_len(const cf_filter_t *f)
{
    return CF_HDR_FIXED + (size_t)f->nfilters * CF_HDR_TABLE + CF_HDR_SUM;
}

void cf_fixed_header_write(const cf_filter_t *f, void *buf)
{
    uint8_t *p = buf;
    size_t len = cf_fixed_header_len(f);
    memset(p, 0, len);
    le_store32(p, CF_MAGIC);
    le_store16(p + 4, f->nested ? 3 : 2);
    le_store16(p + 6, (uint16_t)len);
    le_store32(p + 8, SH(f)->b);
    p[12] = (uint8_t)SH(f)->fp_bits;
    p[13] = (uint8_t)f->nfilters;
    p[14] = (uint8_t)SH(f)->encoding;
    p[15] = f->nested ? CF_FLAG_NESTED : 0;
    le_store32(p + 16, f->max_kicks);
    le_store32(p + 20, f->expansion);
    le_store32(p + 24, f->max_filters);
    le_store64(p + 32, f->seed);
    le_store64(p + 40, items_of(f));
    le_store64(p + 48, f->deleted);
    cf_table_t one;
    const cf_table_t *tabs = tabs_get(f, &one);
    for (uint32_t k = 0; k < f->nfilters; k++) {
        uint8_t *q = p + CF_HDR_FIXED + k * CF_HDR_TABLE;
        const cf_table_t *t = &tabs[k];
        le_store64(q, t->nbuckets);
        le_store64(q + 8, t->capacity);
        le_store64(q + 16, v_index(t));
        le_store32(q + 24, v_fp(t));
        q[28] = v_used(t);
    }
    le_store64(p + len - CF_HDR_SUM, XXH3_64bits(p, len - CF_HDR_SUM));
}

bool cf_fixed_is_header_len(size_t len)
{
    if (len < CF_HDR_FIXED + CF_HDR_TABLE + CF_HDR_SUM)
        return false;
    size_t tables = len - CF_HDR_FIXED - CF_HDR_SUM;
    return tables % CF_HDR_TABLE == 0 &&
           tables / CF_HDR_TABLE <= CF_MAX_FILTERS;
}

uint64_t cf_fixed_data_len(const cf_filter_t *f)
{
    cf_table_t one;
    const cf_table_t *tabs = tabs_get(f, &one);
    uint64_t n = 0;
    for (uint32_t k = 0; k < f->nfilters; k++)
        n += tbytes(f, &tabs[k]);
    return n;
}

/* The table of tabs (f's) holding data offset *off; *off becomes the
 * offset inside it. */
static const cf_table_t *table_at(const cf_filter_t *f, const cf_table_t *tabs,
                                  uint64_t *off)
{
    for (uint32_t k = 0; k < f->nfilters; k++) {
        uint64_t n = tbytes(f, &tabs[k]);
        if (*off < n)
            return &tabs[k];
        *off -= n;
    }
    return NULL;
}

size_t cf_fixed_data_view(const cf_filter_t *f, uint64_t off, size_t max,
                          const void **p)
{
    cf_table_t one;
    const cf_table_t *t = table_at(f, tabs_get(f, &one), &off);
    if (t == NULL) {
        *p = NULL;
        return 0;
    }
    uint64_t n = tbytes(f, t) - off;
    *p = t->data + off;
    return n < max ? (size_t)n : max;
}

static bool zero(const uint8_t *p, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (p[i])
            return false;
    return true;
}

/* The victim fields of a table entry q of a header of version ver; false
 * when its reserved bytes are not zero. */
static bool victim_fields(const uint8_t *q, uint32_t ver, uint32_t *fp,
                          uint8_t *used)
{
    if (ver == 1) {
        *fp = le_load16(q + 24);
        *used = q[26];
        return zero(q + 27, 5);
    }
    *fp = le_load32(q + 24);
    *used = q[28];
    return zero(q + 29, 3);
}

int cf_fixed_load_header(const void *buf, size_t len, const cf_limits_t *lim,
                         cf_filter_t **out, size_t *used)
{
    const uint8_t *p = buf;
    if (len < CF_HDR_FIXED + CF_HDR_TABLE + CF_HDR_SUM)
        return -EINVAL;
    uint32_t ver = le_load16(p + 4);
    if (le_load32(p) != CF_MAGIC || ver < 1 || ver > CF_VERSION)
        return -EINVAL;
    uint32_t nf = p[13];
    size_t hlen = CF_HDR_FIXED + (size_t)nf * CF_HDR_TABLE + CF_HDR_SUM;
    if (nf < 1 || nf > CF_MAX_FILTERS || le_load16(p + 6) != hlen || len < hlen)
        return -EINVAL;
    if (le_load64(p + hlen - CF_HDR_SUM) != XXH3_64bits(p, hlen - CF_HDR_SUM))
        return -EINVAL;
    cf_params_t prm = {
        .capacity = 1,
        .bucket_size = le_load32(p + 8),
        .fp_bits = p[12],
        .max_kicks = le_load32(p + 16),
        .expansion = le_load32(p + 20),
        .max_filters = le_load32(p + 24),
        .encoding = ver == 1 ? CF_ENC_PLAIN : p[14],
    };
    if (cf_params_check(&prm) < 0 || nf > prm.max_filters ||
        (ver == 1 && p[14] != 0) || le_load32(p + 28) != 0)
        return -EINVAL;
    /* Version 3 is the nested form and only that; its expansion is a power
     * of two and every table exactly that many times the one before. */
    bool nested = ver == 3;
    if (p[15] != (nested ? CF_FLAG_NESTED : 0) ||
        (nested &&
         (prm.expansion < 2 || (prm.expansion & (prm.expansion - 1)) != 0)))
        return -EINVAL;

    /* Validate every table before allocating any. */
    uint64_t total = 0, slots = 0;
    uint32_t fpmask = (1u << prm.fp_bits) - 1;
    uint32_t bbits =
        cf_bucket_bits_of(prm.encoding, prm.bucket_size, prm.fp_bits);
    for (uint32_t k = 0; k < nf; k++) {
        const uint8_t *q = p + CF_HDR_FIXED + k * CF_HDR_TABLE;
        uint64_t nb = le_load64(q), cap = le_load64(q + 8);
        uint64_t vi = le_load64(q + 16);
        uint32_t vfp;
        uint8_t vused;
        if (!victim_fields(q, ver, &vfp, &vused) || nb == 0 || cap < 1 ||
            cap > CF_MAX_CAPACITY || vused > 1)
            return -EINVAL;
        if (nested && k > 0 &&
            (nb % prm.expansion != 0 ||
             nb / prm.expansion != le_load64(q - CF_HDR_TABLE)))
            return -EINVAL;
        uint64_t bytes = cf_table_bytes(nb, bbits);
        if (bytes == 0)
            return -ENOMEM; /* larger than anything we would allocate */
        if (vused ? (vi >= nb || vfp == 0 || vfp > fpmask)
                  : (vi != 0 || vfp != 0))
            return -EINVAL;
        total += bytes + cf_shapes[cf_shape_index(prm.encoding, prm.bucket_size,
                                                  prm.fp_bits)]
                             .pad;
        slots += nb * prm.bucket_size + 1;
        if (total > CF_ABS_MAX_BYTES)
            return -ENOMEM;
    }
    if (le_load64(p + 40) > slots)
        return -EINVAL;
    if (lim != NULL && lim->max_bytes && total > lim->max_bytes)
        return -ENOMEM;

    prm.capacity = le_load64(p + CF_HDR_FIXED + 8);
    prm.seed = le_load64(p + 32);
    cf_filter_t *f = cf_filter_new(&prm, le_load64(p + CF_HDR_FIXED));
    if (f == NULL)
        return -ENOMEM;
    f->nested = nested;
    /* the whole shape was checked against the limit: no cap while the
     * tables are made */
    uint64_t room = UINT64_MAX;
    cf_table_t one;
    for (uint32_t k = 1; k < nf; k++) {
        const uint8_t *q = p + CF_HDR_FIXED + k * CF_HDR_TABLE;
        if (cf_table_alloc(f, tabs_get(f, &one), le_load64(q), le_load64(q + 8),
                           &room) < 0) {
            cf_fixed_free(f);
            return -ENOMEM;
        }
    }
    cf_table_t *tabs = tabs_get(f, &one);
    for (uint32_t k = 0; k < nf; k++) {
        const uint8_t *q = p + CF_HDR_FIXED + k * CF_HDR_TABLE;
        uint32_t vfp;
        uint8_t vused;
        (void)victim_fields(q, ver, &vfp, &vused);
        if (vused)
            v_set(&tabs[k], le_load64(q + 16), vfp);
    }
    tabs_put(f, tabs);
    items_set(f, le_load64(p + 40));
    f->deleted = le_load64(p + 48);
    *out = f;
    *used = hlen;
    return 0;
}

int cf_fixed_load_data(cf_filter_t *f, uint64_t off, const void *p, size_t len)
{
    uint64_t total = cf_fixed_data_len(f);
    if (off > total || len > total - off)
        return -EINVAL;
    const uint8_t *src = p;
    cf_table_t one;
    const cf_table_t *tabs = tabs_get(f, &one);
    while (len > 0) {
        uint64_t in = off;
        const cf_table_t *t = table_at(f, tabs, &in);
        uint64_t n = tbytes(f, t) - in;
        if (n > len)
            n = len;
        memcpy(t->data + in, src, (size_t)n);
        src += n;
        off += n;
        len -= (size_t)n;
    }
    return 0;
}
