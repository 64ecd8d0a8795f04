/*
 * cf_shape.h - bucket shapes of the cuckoo core (private to filter/).
 *
 * A shape is a bucket size, a fingerprint width and an encoding. Everything
 * filters of one shape have in common (masks, lane tables, sizes) is in one
 * read-only table, set up when the program (or the module) is loaded; a
 * filter holds an index into it. Also the sizing rules that follow from a
 * shape: buckets for a capacity, bytes for a table.
 */
#ifndef CF_SHAPE_H
#define CF_SHAPE_H

#include <stdbool.h>
#include <stdint.h>

#include "cf.h"

/* Symbols shared between the files of the core, never exported from a
 * shared object that links it (the module host): direct PC-relative
 * access, no GOT load on the hot paths. */
#define CF_HIDDEN __attribute__((visibility("hidden")))

/* Every fingerprint width of both encodings, by bits per slot and the plain
 * encoding first among equals, with the lane and bucket bits of its bucket
 * at b = 4 (a plain lane is a fingerprint, a semi-sorted lane a suffix):
 * X(encoding, fp_bits, lane_bits, bucket_bits). Widths are unique across
 * the encodings, so fp_bits alone names one of these at b = 4. */
#define CF_WIDTHS(X)                                                           \
    X(CF_ENC_PLAIN, 8, 8, 32)                                                  \
    X(CF_ENC_SEMISORTED, 9, 5, 32)                                             \
    X(CF_ENC_PLAIN, 12, 12, 48)                                                \
    X(CF_ENC_SEMISORTED, 13, 9, 48)                                            \
    X(CF_ENC_PLAIN, 16, 16, 64)                                                \
    X(CF_ENC_SEMISORTED, 17, 13, 64)

/* The only bucket size of the semi-sorted encoding, and the one the
 * per-shape code paths (CF_WIDTHS) are compiled for. */
#define CF_SS_B 4

/* Semi-sorted bucket word, from bit 0: the rank of the multiset of its four
 * 4-bit prefixes among all 3,876 (cf_ss_table.h), in 12 bits, then the
 * four suffixes. */
#define CF_SS_IDX_BITS 12
#define CF_SS_IDX_MASK 0xFFFu /* (1 << CF_SS_IDX_BITS) - 1 */
#define CF_SS_PREFIX_BITS 4   /* the top bits of a fingerprint */
#define CF_SS_PREFIX_MASK 0xFu

/* The largest capacity of one table we make or load: far past what
 * CF_ABS_MAX_BYTES of table lets us allocate, and small enough that a
 * capacity times an expansion (<= CF_MAX_EXPANSION) cannot overflow and
 * the double arithmetic of sizing stays exact. */
#define CF_MAX_CAPACITY (1ull << 50)

/* Nothing we load may ask for more than 1 TiB of tables, whatever the caller
 * allows: sizes beyond it are garbage, and the arithmetic stays far from
 * overflow. */
#define CF_ABS_MAX_BYTES (1ull << 40)

/* What every filter of one shape shares. swar: a plain bucket of one word;
 * ss: semi-sorted; fast: either, so the lanes are set and per-slot marks
 * exist. The lanes are the fingerprints of a plain bucket, the suffixes of
 * a semi-sorted one (in the bucket word shifted right by CF_SS_IDX_BITS). */
typedef struct cf_shape {
    uint64_t lane_ones, lane_highs, lane_low, bucket_mask, word_mask;
    uint32_t b, fp_bits, encoding, fp_mask;
    uint32_t bucket_bits;  /* b * fp_bits, or 4 * fp_bits - 4 when ss */
    uint32_t bucket_bytes; /* when fast */
    uint32_t pad;          /* zeroed bytes a table needs after its end */
    uint32_t lane_bits, lane_mask;
    bool swar, ss, fast;
    uint8_t lane_of_bit[64]; /* when fast: slot of the lane a bit is in */
} cf_shape_t;

/* Plain shapes at [(fp_bits / 4 - 2) * CF_PLAIN_STRIDE + b] (fp_bits 8, 12,
 * 16), then the three semi-sorted ones (b = 4; 9, 13, 17 bits). */
#define CF_PLAIN_STRIDE (CF_MAX_BUCKET_SIZE + 1)
#define CF_NSHAPES (3 * CF_PLAIN_STRIDE + 3)
extern CF_HIDDEN cf_shape_t cf_shapes[CF_NSHAPES];

static inline uint32_t cf_shape_index(uint32_t encoding, uint32_t b,
                                      uint32_t fp_bits)
{
    if (encoding == CF_ENC_SEMISORTED)
        return 3 * CF_PLAIN_STRIDE + (fp_bits - 9) / 4;
    return (fp_bits / 4 - 2) * CF_PLAIN_STRIDE + b;
}

static inline const cf_shape_t *cf_shape_of(uint32_t encoding, uint32_t b,
                                            uint32_t fp_bits)
{
    return &cf_shapes[cf_shape_index(encoding, b, fp_bits)];
}

/* Whether (encoding, b, fp_bits) names a shape: a width of CF_WIDTHS, at
 * any bucket size when plain, at CF_SS_B when semi-sorted. */
static inline bool cf_encoding_valid(uint32_t encoding, uint32_t b,
                                     uint32_t fp_bits)
{
#define CF_X(enc, fp, lane, bits)                                              \
    if (encoding == (enc) && fp_bits == (fp))                                  \
        return (enc) == CF_ENC_PLAIN || b == CF_SS_B;
    CF_WIDTHS(CF_X)
#undef CF_X
    return false;
}

static inline uint32_t cf_bucket_bits_of(uint32_t encoding, uint32_t b,
                                         uint32_t fp_bits)
{
    return encoding == CF_ENC_SEMISORTED ? 4 * fp_bits - 4 : b * fp_bits;
}

/* Serialised bytes of a table of buckets of bucket_bits, or 0 when it
 * passes CF_ABS_MAX_BYTES. */
static inline uint64_t cf_table_bytes(uint64_t nbuckets, uint32_t bucket_bits)
{
    if (nbuckets == 0 || nbuckets > (CF_ABS_MAX_BYTES * 8) / bucket_bits)
        return 0;
    return (nbuckets * bucket_bits + 7) / 8;
}

/* Buckets for capacity items at bucket size b; 0 if absurdly large (past
 * CF_MAX_CAPACITY). */
CF_HIDDEN uint64_t cf_buckets_for(uint64_t capacity, uint32_t b);

#endif /* CF_SHAPE_H */
