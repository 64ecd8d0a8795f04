/*
 * le.h - little-endian loads and stores of 16, 32 and 64-bit integers at
 * any (unaligned) address. Header-only; no state.
 *
 * Every file format and table layout of the project is little-endian. On a
 * little-endian host each of these is one plain load or store (memcpy of a
 * constant size compiles to a single move); on a big-endian host the value
 * is byte-swapped, so the bytes in memory are the same either way.
 */
#ifndef LE_H
#define LE_H

#include <stdint.h>
#include <string.h>

#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
#define LE_SWAP16(v) __builtin_bswap16(v)
#define LE_SWAP32(v) __builtin_bswap32(v)
#define LE_SWAP64(v) __builtin_bswap64(v)
#else
#define LE_SWAP16(v) (v)
#define LE_SWAP32(v) (v)
#define LE_SWAP64(v) (v)
#endif

static inline uint16_t le_load16(const void *p)
{
    uint16_t v;
    memcpy(&v, p, sizeof(v));
    return LE_SWAP16(v);
}

static inline uint32_t le_load32(const void *p)
{
    uint32_t v;
    memcpy(&v, p, sizeof(v));
    return LE_SWAP32(v);
}

static inline uint64_t le_load64(const void *p)
{
    uint64_t v;
    memcpy(&v, p, sizeof(v));
    return LE_SWAP64(v);
}

static inline void le_store16(void *p, uint16_t v)
{
    v = LE_SWAP16(v);
    memcpy(p, &v, sizeof(v));
}

static inline void le_store32(void *p, uint32_t v)
{
    v = LE_SWAP32(v);
    memcpy(p, &v, sizeof(v));
}

static inline void le_store64(void *p, uint64_t v)
{
    v = LE_SWAP64(v);
    memcpy(p, &v, sizeof(v));
}

#endif /* LE_H */
