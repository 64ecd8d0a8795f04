/*
 * cf_params.c - parameters: defaults, validation, sizes, error rates.
 */
#include <errno.h>
#include <math.h>
#include <string.h>

#include "cf_grow.h"
#include "cf_shape.h"
#include "cf_win.h"

void cf_params_default(cf_params_t *p)
{
    memset(p, 0, sizeof(*p));
    p->capacity = 1024;
    p->bucket_size = 4;
    p->fp_bits = 12;
    p->max_kicks = 500;
    p->expansion = 1;
    p->max_filters = CF_DEFAULT_MAX_FILTERS;
}

int cf_params_check(const cf_params_t *p)
{
    if (p == NULL || p->capacity < 1 || p->bucket_size < 1 ||
        p->bucket_size > CF_MAX_BUCKET_SIZE ||
        !cf_encoding_valid(p->encoding, p->bucket_size, p->fp_bits) ||
        p->max_kicks < 1 || p->max_kicks > CF_MAX_KICKS ||
        p->expansion > CF_MAX_EXPANSION || p->max_filters < 1 ||
        p->max_filters > CF_MAX_FILTERS ||
        (p->growable != 0 &&
         (p->growable > CF_GROWABLE_PAIR || p->bucket_size != 4)) ||
        (p->window_ms != 0 && (p->window_ms > CF_MAX_WINDOW_MS ||
                               p->bucket_size != 4 || p->growable != 0)))
        return -EINVAL;
    return 0;
}

uint64_t cf_params_table_bytes(const cf_params_t *p)
{
    if (cf_params_check(p) < 0)
        return 0;
    if (p->window_ms != 0)
        return cf_win_table_bytes(p);
    if (p->growable)
        return cf_grow_initial_bytes(p) *
               (p->growable == CF_GROWABLE_PAIR ? 2 : 1);
    uint64_t nb = cf_buckets_for(p->capacity, p->bucket_size);
    const cf_shape_t *sh = cf_shape_of(p->encoding, p->bucket_size, p->fp_bits);
    uint64_t bytes = cf_table_bytes(nb, sh->bucket_bits);
    return bytes ? bytes + sh->pad : 0;
}

double cf_error_bound(uint32_t bucket_size, uint32_t fp_bits)
{
    if (fp_bits == 0 || fp_bits > 32)
        return 1.0;
    double e = 2.0 * bucket_size / (ldexp(1.0, (int)fp_bits) - 1.0);
    return e > 1.0 ? 1.0 : e;
}

/* Every encoding, by bits per slot, plain first among equals. */
static const struct {
    uint32_t encoding, fp_bits;
} encs[] = {
#define CF_X(enc, fp, lane, bits) {(enc), (fp)},
    CF_WIDTHS(CF_X)
#undef CF_X
};

uint32_t cf_fp_bits_for_rate(uint32_t bucket_size, double rate)
{
    if (!(rate > 0.0 && rate < 1.0))
        return 0;
    for (size_t i = 0; i < sizeof(encs) / sizeof(encs[0]); i++)
        if (encs[i].encoding == CF_ENC_PLAIN &&
            cf_error_bound(bucket_size, encs[i].fp_bits) <= rate)
            return encs[i].fp_bits;
    return 0;
}

int cf_params_for_error_rate(cf_params_t *p, double rate)
{
    if (!(rate > 0.0 && rate < 1.0) || p->bucket_size < 1 ||
        p->bucket_size > CF_MAX_BUCKET_SIZE)
        return -EINVAL;
    for (size_t i = 0; i < sizeof(encs) / sizeof(encs[0]); i++) {
        if (!cf_encoding_valid(encs[i].encoding, p->bucket_size,
                               encs[i].fp_bits))
            continue;
        if (cf_error_bound(p->bucket_size, encs[i].fp_bits) <= rate) {
            p->fp_bits = encs[i].fp_bits;
            p->encoding = encs[i].encoding;
            return 0;
        }
    }
    return -EINVAL;
}

uint32_t cf_slot_bits(uint32_t encoding, uint32_t fp_bits)
{
    return encoding == CF_ENC_SEMISORTED ? fp_bits - 1 : fp_bits;
}

const char *cf_encoding_name(uint32_t encoding)
{
    switch (encoding) {
    case CF_ENC_PLAIN:
        return "plain";
    case CF_ENC_SEMISORTED:
        return "semi-sorted";
    default:
        return "unknown";
    }
}
