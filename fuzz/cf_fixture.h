/*
 * cf_fixture.h - what the filter fuzzers share: untrusted bytes given a
 * valid header checksum, so that the fuzzer reaches the checks behind it,
 * and the batched paths run on a loaded filter.
 */
#ifndef FUZZ_CF_FIXTURE_H
#define FUZZ_CF_FIXTURE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <xxhash.h>

#include "cf.h"

/* When buf's bytes 6-7 give a plausible header length, writes the XXH3
 * checksum of the header into its last 8 bytes, as the core expects. */
static inline void fuzz_fix_header_sum(uint8_t *buf, size_t size)
{
    if (size < 8)
        return;
    size_t hlen = (size_t)buf[6] | (size_t)buf[7] << 8;
    if (hlen < 16 || hlen > size)
        return;
    uint64_t sum = XXH3_64bits(buf, hlen - 8);
    for (int i = 0; i < 8; i++)
        buf[hlen - 8 + i] = (uint8_t)(sum >> (8 * i));
}

/* A filter of buf's header (its checksum fixed first), as much data as
 * buf and the header allow at buf + *used, *rest bytes of it; NULL when
 * the header is refused. Filters are capped at 16 MiB. */
static inline cf_filter_t *fuzz_load_header(uint8_t *buf, size_t size,
                                            size_t *used, size_t *rest)
{
    cf_limits_t lim = {.max_bytes = 16u << 20};
    cf_filter_t *f = NULL;
    fuzz_fix_header_sum(buf, size);
    *used = 0;
    if (cf_load_header(buf, size, &lim, &f, used) != 0)
        return NULL;
    uint64_t total = cf_data_len(f);
    *rest = size - *used;
    if (*rest > total)
        *rest = (size_t)total;
    return f;
}

/* An untrusted serialised filter: data copied into *bufp (the caller
 * frees it, also when NULL is returned), its header loaded
 * (fuzz_load_header()) and its data in two pieces, split inside a slot
 * when it can be. NULL when the header is refused or memory is short. */
static inline cf_filter_t *fuzz_load_split(const uint8_t *data, size_t size,
                                           uint8_t **bufp)
{
    uint8_t *buf = *bufp = malloc(size + 1);
    if (buf == NULL)
        return NULL;
    memcpy(buf, data, size);
    size_t used, rest;
    cf_filter_t *f = fuzz_load_header(buf, size, &used, &rest);
    if (f == NULL)
        return NULL;
    size_t half = rest / 2 | 1;
    if (half > rest)
        half = rest;
    (void)cf_load_data(f, 0, buf + used, half);
    (void)cf_load_data(f, half, buf + used + half, rest - half);
    return f;
}

/* The batched paths on keys of 4 bytes from buf (at most 64): a lookup
 * of all, then an add of all (nx as given), growth capped by *room as a
 * host caps it: a header may declare one bucket and a huge capacity,
 * whose next table would be huge. */
static inline void fuzz_batched(cf_filter_t *f, const uint8_t *buf, size_t size,
                                bool nx, uint64_t *room)
{
    const void *keys[64];
    size_t lens[64];
    bool out[64];
    int rc[64];
    size_t n = 0;
    for (size_t i = 0; i + 4 <= size && n < 64; i += 4, n++) {
        keys[n] = buf + i;
        lens[n] = 4;
    }
    cf_exists_many(f, n, keys, lens, out);
    cf_add_many(f, n, keys, lens, nx, room, rc);
}

#endif
