/*
 * cf_fixture.h - what the filter fuzzers share: untrusted bytes given a
 * valid header checksum, so that the fuzzer reaches the checks behind it.
 */
#ifndef FUZZ_CF_FIXTURE_H
#define FUZZ_CF_FIXTURE_H

#include <stddef.h>
#include <stdint.h>
#include <xxhash.h>

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

#endif
