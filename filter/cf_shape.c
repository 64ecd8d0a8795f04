/*
 * cf_shape.c - the table of bucket shapes and the sizing rules.
 */
#include "cf_shape.h"

#include <math.h>
#include <string.h>

cf_shape_t cf_shapes[CF_NSHAPES];

static void shape_setup(cf_shape_t *s, uint32_t encoding, uint32_t b,
                        uint32_t fp_bits)
{
    memset(s, 0, sizeof(*s));
    s->b = b;
    s->fp_bits = fp_bits;
    s->encoding = encoding;
    s->fp_mask = (1u << fp_bits) - 1;
    s->ss = encoding == CF_ENC_SEMISORTED;
    uint32_t bits = cf_bucket_bits_of(encoding, b, fp_bits);
    s->bucket_bits = bits;
    s->swar = !s->ss && bits <= 64 && bits % 8 == 0;
    s->fast = s->swar || s->ss;
    /* Generic shapes: any bucket may cross a line, and the 16-bit slot
     * loads stay inside the table, but keep a word of slack. */
    s->pad = 8;
    if (!s->fast)
        return;
    s->bucket_bytes = bits / 8;
    /* A bucket is read (and a semi-sorted one rewritten) with one 64-bit
     * access at its start: the last bucket needs the rest of the word. */
    s->pad = 8 - (s->bucket_bytes < 8 ? s->bucket_bytes : 8);
    s->word_mask = bits == 64 ? ~0ull : (1ull << bits) - 1;
    uint32_t lane = s->ss ? fp_bits - CF_SS_PREFIX_BITS : fp_bits;
    uint32_t lanes_bits = b * lane;
    s->lane_bits = lane;
    s->lane_mask = (1u << lane) - 1;
    for (uint32_t j = 0; j < b; j++)
        s->lane_ones |= 1ull << (j * lane);
    s->lane_highs = s->lane_ones << (lane - 1);
    s->bucket_mask = lanes_bits == 64 ? ~0ull : (1ull << lanes_bits) - 1;
    s->lane_low = s->bucket_mask & ~s->lane_highs;
    for (uint32_t bit = 0; bit < 64; bit++)
        s->lane_of_bit[bit] = (uint8_t)(bit / lane);
}

/* Runs once when the program (or the module) is loaded, before any
 * thread could ask for a shape; nothing writes the table after it. */
__attribute__((constructor)) static void shapes_init(void)
{
#define CF_X(enc, fp, lane, bits)                                              \
    if ((enc) == CF_ENC_PLAIN)                                                 \
        for (uint32_t b = 1; b <= CF_MAX_BUCKET_SIZE; b++)                     \
            shape_setup(&cf_shapes[cf_shape_index((enc), b, (fp))], (enc), b,  \
                        (fp));                                                 \
    else                                                                       \
        shape_setup(&cf_shapes[cf_shape_index((enc), CF_SS_B, (fp))], (enc),   \
                    CF_SS_B, (fp));
    CF_WIDTHS(CF_X)
#undef CF_X
}

/* The load a bucket size reaches reliably with max kicks in the hundreds
 * and one-step lookahead (the paper's 50/84/95/98% for b = 1/2/4/8 with a
 * small margin where the walk gets help from the lookahead). */
static double target_load(uint32_t b)
{
    static const double load[] = {0,    0.50,  0.84, 0.90, 0.95,
                                  0.96, 0.965, 0.97, 0.98};
    return b < 9 ? load[b] : 0.98;
}

uint64_t cf_buckets_for(uint64_t capacity, uint32_t b)
{
    if (capacity > CF_MAX_CAPACITY)
        return 0;
    double nb = ceil((double)capacity / ((double)b * target_load(b)));
    if (nb < 1)
        nb = 1;
    return (uint64_t)nb;
}
