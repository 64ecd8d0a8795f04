/* libFuzzer harness: RedisBloom's CF.SCANDUMP chunks, untrusted. The input
 * is a header chunk (CF_RB_HEADER_LEN bytes) followed by data chunks, each
 * as a little-endian u32 iterator, a u32 length and that many bytes. An
 * accepted header gets every chunk (refused ones change nothing), then the
 * filter is queried, written to, compacted, dumped in its own encoding and
 * loaded back. Nothing may crash, and the reloaded filter must hold the
 * same data. */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "cf.h"

static uint32_t u32_at(const uint8_t *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 |
           (uint32_t)p[3] << 24;
}

/* The filter's header and data in its own encoding, loaded back. */
static void roundtrip(const cf_filter_t *f)
{
    uint8_t hdr[CF_HEADER_MAX];
    size_t hlen = cf_header_len(f), used = 0;
    cf_header_write(f, hdr);
    cf_filter_t *g = NULL;
    if (cf_load_header(hdr, hlen, NULL, &g, &used) != 0 || used != hlen)
        abort();
    const void *p;
    size_t n;
    for (uint64_t off = 0; (n = cf_data_view(f, off, 1u << 16, &p)) > 0;
         off += n) {
        const void *q;
        if (cf_load_data(g, off, p, n) != 0 ||
            cf_data_view(g, off, n, &q) != n || memcmp(p, q, n) != 0)
            abort();
    }
    cf_free(g);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    cf_limits_t lim = {.max_bytes = 16u << 20};
    cf_filter_t *f = NULL;
    if (size < CF_RB_HEADER_LEN ||
        cf_load_rb_header(data, CF_RB_HEADER_LEN, &lim, &f) != 0)
        return 0;
    size_t at = CF_RB_HEADER_LEN;
    while (size - at >= 8) {
        uint32_t it = u32_at(data + at), len = u32_at(data + at + 4);
        at += 8;
        if (len > size - at)
            len = (uint32_t)(size - at);
        (void)cf_load_rb_chunk(f, (long long)it, data + at, len);
        at += len;
    }
    uint64_t room = 16u << 20;
    for (size_t i = 0; i + 4 <= size && i < 512; i += 4) {
        const void *k = data + i;
        size_t kl = 4;
        int rc;
        (void)cf_exists(f, k, kl);
        (void)cf_count(f, k, kl);
        cf_add_many(f, 1, &k, &kl, (i & 4) != 0, &room, &rc);
        if (i % 12 == 0)
            (void)cf_del(f, data + i + 1, 3);
    }
    cf_stats_t st;
    cf_stats(f, &st);
    if (st.form != CF_FORM_REDISBLOOM)
        abort();
    if (size & 1)
        cf_compact(f);
    roundtrip(f);
    cf_free(f);
    return 0;
}
