/*
 * cf_items.h - what the filter's unit tests and fuzzers share: item i as
 * an 8-byte key, the core's calls on item i, the encoding of a fingerprint
 * width and the parameters most tests start from. Needs only cf.h (no
 * cmocka), so that a fuzzer can include it too.
 */
#ifndef CF_ITEMS_H
#define CF_ITEMS_H

#include <stdbool.h>
#include <stdint.h>

#include "cf.h"

/* Item i's key: splitmix64 of i, so that keys are distinct (a bijection
 * of i) and not sequential. */
static inline uint64_t key_of(uint64_t i)
{
    uint64_t z = i + 0x9E3779B97F4A7C15ull;
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

static inline int item_add(cf_filter_t *f, uint64_t i)
{
    uint64_t k = key_of(i);
    return cf_add(f, &k, sizeof(k));
}

static inline int item_del(cf_filter_t *f, uint64_t i)
{
    uint64_t k = key_of(i);
    return cf_del(f, &k, sizeof(k));
}

static inline bool item_has(const cf_filter_t *f, uint64_t i)
{
    uint64_t k = key_of(i);
    return cf_exists(f, &k, sizeof(k));
}

static inline uint64_t item_count(const cf_filter_t *f, uint64_t i)
{
    uint64_t k = key_of(i);
    return cf_count(f, &k, sizeof(k));
}

/* Fingerprint widths 9, 13 and 17 are semi-sorted, the others plain. */
static inline uint32_t enc_of(uint32_t fp)
{
    return fp == 9 || fp == 13 || fp == 17 ? CF_ENC_SEMISORTED : CF_ENC_PLAIN;
}

/* cf_params_default() with a capacity, an expansion and a seed. */
static inline cf_params_t params_of(uint64_t cap, uint32_t expansion,
                                    uint64_t seed)
{
    cf_params_t p;
    cf_params_default(&p);
    p.capacity = cap;
    p.expansion = expansion;
    p.seed = seed;
    return p;
}

#endif
