/*
 * dump.c - the DUMP/RESTORE payload and filter copies; see dump.h.
 */
#include "dump.h"

#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <xxhash.h>

#include "le.h"

/* Copies every byte of src's data into dst at dst's data offset off. */
static void copy_data(const cf_filter_t *src, uint8_t *dst)
{
    uint64_t off = 0, total = cf_data_len(src);
    while (off < total) {
        const void *p;
        size_t n = cf_data_view(src, off, SIZE_MAX, &p);
        memcpy(dst + off, p, n);
        off += n;
    }
}

int dump_encode(const cf_filter_t *f, uint8_t **out, size_t *len)
{
    size_t hlen = cf_header_len(f);
    uint64_t dlen = cf_data_len(f);
    if (dlen > SIZE_MAX - hlen - DUMP_OVERHEAD)
        return -ENOMEM;
    size_t n = (size_t)dlen + hlen + DUMP_OVERHEAD;
    uint8_t *buf = malloc(n);
    if (buf == NULL)
        return -ENOMEM;
    buf[0] = DUMP_TAG;
    cf_header_write(f, buf + 1);
    copy_data(f, buf + 1 + hlen);
    le_store16(buf + n - 10, DUMP_VERSION);
    le_store64(buf + n - 8, XXH64(buf, n - 8, 0));
    *out = buf;
    *len = n;
    return 0;
}

bool dump_verify(const void *p, size_t len)
{
    const uint8_t *b = p;
    if (len < DUMP_OVERHEAD)
        return false;
    if (le_load16(b + len - 10) != DUMP_VERSION)
        return false;
    return XXH64(b, len - 8, 0) == le_load64(b + len - 8);
}

int dump_decode(const void *p, size_t len, const cf_limits_t *lim,
                cf_filter_t **out)
{
    const uint8_t *b = p;
    if (!dump_verify(p, len))
        return -EPROTO;
    if (b[0] != DUMP_TAG)
        return -EINVAL;
    size_t body = len - DUMP_OVERHEAD, used;
    cf_filter_t *f;
    int rc = cf_load_header(b + 1, body, lim, &f, &used);
    if (rc != 0)
        return rc == -ENOMEM ? -ENOMEM : -EINVAL;
    /* The data must fill the tables the header declared, exactly. */
    if (cf_data_len(f) != body - used ||
        (body > used && cf_load_data(f, 0, b + 1 + used, body - used) != 0)) {
        cf_free(f);
        return -EINVAL;
    }
    *out = f;
    return 0;
}

int dump_clone(const cf_filter_t *src, const cf_limits_t *lim,
               cf_filter_t **out)
{
    uint8_t hdr[CF_HEADER_MAX];
    size_t hlen = cf_header_len(src), used;
    cf_filter_t *f;
    cf_header_write(src, hdr);
    /* A header of ours always loads: only the memory can fail. */
    if (cf_load_header(hdr, hlen, lim, &f, &used) != 0)
        return -ENOMEM;
    uint64_t off = 0, total = cf_data_len(src);
    while (off < total) {
        const void *p;
        size_t n = cf_data_view(src, off, SIZE_MAX, &p);
        (void)cf_load_data(f, off, p, n);
        off += n;
    }
    *out = f;
    return 0;
}
