/*
 * cf_pair.c - the growable pair (cf_pair.h): two growable tables with
 * independent hashes, every item in both, present only when both say so.
 */
#include <errno.h>

#include "cf_alloc.h"
#include "cf_pair.h"
#include "cf_rb.h"
#include "check.h"

#define mem (*cf_mem_allocator())

/* The second table's seed is the first's, hashed with this salt: the two
 * hashes of an item are independent, and a copy loaded from a dump is
 * checked against it. */
#define PAIR_SALT 0x70616972u /* "pair" */

/* cf_nfilters() / cf_size_bytes_at() as the other kinds answer them: a
 * generation that changes whenever the pair's size does (1..GENS), and
 * for each of the last GENS the two tables' own generations then (each
 * table answers for its last GENS sizes, and changes no more often than
 * the pair does). */
#define GENS (CF_RB_GENS - 1)

struct cf_pair {
    cf_filter_t *b;
    uint32_t gen;
    uint8_t of[GENS][2]; /* of[gen - 1]: the tables' generations */
};

static uint64_t second_seed(uint64_t seed)
{
    uint8_t s[8];
    le_store64(s, seed);
    return XXH3_64bits_withSeed(s, sizeof(s), PAIR_SALT);
}

static struct cf_pair *P(const cf_filter_t *f)
{
    CK_ASSERT(cf_is_pair(f));
    return *cf_grow_pair_slot(f);
}

static const cf_filter_t *B(const cf_filter_t *f)
{
    return P(f)->b;
}

static uint64_t both_bytes(const cf_filter_t *f)
{
    return cf_grow_size_bytes(f) + cf_grow_size_bytes(B(f)) +
           sizeof(struct cf_pair);
}

/* After a write: a new generation when either table's size changed. */
static void note_size(cf_filter_t *f)
{
    struct cf_pair *pr = P(f);
    uint8_t a = (uint8_t)cf_grow_gen(f), b = (uint8_t)cf_grow_gen(pr->b);
    uint8_t *was = pr->of[pr->gen - 1];
    if (was[0] == a && was[1] == b)
        return;
    pr->gen = pr->gen % GENS + 1;
    pr->of[pr->gen - 1][0] = a;
    pr->of[pr->gen - 1][1] = b;
}

/* Joins a (the filter) and b into a pair; frees both on failure. */
static int join(cf_filter_t *a, cf_filter_t *b, cf_filter_t **out)
{
    struct cf_pair *pr = mem.calloc_fn(1, sizeof(*pr));
    if (pr == NULL) {
        cf_grow_free(a);
        cf_grow_free(b);
        return -ENOMEM;
    }
    pr->b = b;
    a->shape = CF_GROW_SHAPE_PAIR;
    *cf_grow_pair_slot(a) = pr;
    pr->gen = 1;
    pr->of[0][0] = (uint8_t)cf_grow_gen(a);
    pr->of[0][1] = (uint8_t)cf_grow_gen(b);
    *out = a;
    return 0;
}

int cf_pair_create(const cf_params_t *p, cf_filter_t **out)
{
    cf_params_t q = *p;
    *out = NULL;
    if (p->max_bytes != 0)
        q.max_bytes = p->max_bytes / 2;
    cf_filter_t *a, *b;
    int rc = cf_grow_create(&q, &a);
    if (rc < 0)
        return rc;
    q.seed = second_seed(p->seed);
    rc = cf_grow_create(&q, &b);
    if (rc < 0) {
        cf_grow_free(a);
        return rc;
    }
    return join(a, b, out);
}

void cf_pair_release(cf_filter_t *f)
{
    struct cf_pair **slot = cf_grow_pair_slot(f);
    if (*slot == NULL)
        return;
    cf_grow_free((*slot)->b);
    mem.free_fn(*slot);
    *slot = NULL;
}

/* ---- operations ---- */

/* Both tables hold every item, or neither does: an add the second table
 * refuses is taken back from the first. */
int cf_pair_add(cf_filter_t *f, const void *key, size_t len, bool nx,
                uint64_t *room)
{
    if (nx && cf_pair_exists(f, key, len))
        return 0;
    int rc = cf_grow_add(f, key, len, false, room);
    if (rc >= 0) {
        int rb = cf_grow_add(P(f)->b, key, len, false, room);
        if (rb < 0) {
            cf_grow_del(f, key, len);
            rc = rb;
        }
    }
    note_size(f);
    return rc < 0 ? rc : nx ? 1 : 0;
}

bool cf_pair_exists(const cf_filter_t *f, const void *key, size_t len)
{
    return cf_grow_exists(f, key, len) && cf_grow_exists(B(f), key, len);
}

uint64_t cf_pair_count(const cf_filter_t *f, const void *key, size_t len)
{
    uint64_t a = cf_grow_count(f, key, len);
    if (a == 0)
        return 0;
    uint64_t b = cf_grow_count(B(f), key, len);
    return a < b ? a : b;
}

/* An item both tables hold: one of its entries out of each. */
int cf_pair_del(cf_filter_t *f, const void *key, size_t len)
{
    if (!cf_pair_exists(f, key, len))
        return 0;
    int rc = cf_grow_del(f, key, len);
    CK_ASSERT(rc == 1);
    rc = cf_grow_del(P(f)->b, key, len);
    CK_ASSERT(rc == 1);
    note_size(f);
    return rc;
}

void cf_pair_prefetch(const cf_filter_t *f, const void *key, size_t len)
{
    cf_grow_prefetch(f, key, len);
    cf_grow_prefetch(B(f), key, len);
}

/* The first table answers every item, batched; the second only those the
 * first holds, batched in runs of WAY. */
#define WAY 64

void cf_pair_exists_many(const cf_filter_t *f, size_t n,
                         const void *const *keys, const size_t *lens, bool *out)
{
    cf_grow_exists_many(f, n, keys, lens, out);
    const void *k[WAY];
    size_t l[WAY], at[WAY];
    bool got[WAY];
    size_t m = 0;
    for (size_t i = 0; i <= n; i++) {
        if (m == WAY || (i == n && m > 0)) {
            cf_grow_exists_many(B(f), m, k, l, got);
            for (size_t j = 0; j < m; j++)
                out[at[j]] = got[j];
            m = 0;
        }
        if (i < n && out[i]) {
            k[m] = keys[i];
            l[m] = lens[i];
            at[m++] = i;
        }
    }
}

/* Batched into each table in turn, in runs of WAY: the second takes
 * what the first took, and what it refuses is taken back from the first.
 * NX one at a time (an item may come twice in one batch). */
void cf_pair_add_many(cf_filter_t *f, size_t n, const void *const *keys,
                      const size_t *lens, bool nx, uint64_t *room, int *rc)
{
    if (nx) {
        for (size_t i = 0; i < n; i++)
            rc[i] = cf_pair_add(f, keys[i], lens[i], true, room);
        return;
    }
    const void *k[WAY];
    size_t l[WAY], at[WAY];
    int rb[WAY];
    for (size_t s = 0; s < n; s += WAY) {
        size_t w = n - s < WAY ? n - s : WAY, m = 0;
        cf_grow_add_many(f, w, keys + s, lens + s, false, room, rc + s);
        for (size_t i = s; i < s + w; i++)
            if (rc[i] == 0) {
                k[m] = keys[i];
                l[m] = lens[i];
                at[m++] = i;
            }
        cf_grow_add_many(P(f)->b, m, k, l, false, room, rb);
        for (size_t j = 0; j < m; j++)
            if (rb[j] < 0) {
                cf_grow_del(f, k[j], l[j]);
                rc[at[j]] = rb[j];
            }
        note_size(f);
    }
}

/* The first table's figures; the memory and the fingerprint bits of
 * both. */
void cf_pair_stats(const cf_filter_t *f, cf_stats_t *st)
{
    cf_stats_t sb;
    cf_grow_stats(f, st);
    cf_grow_stats(B(f), &sb);
    st->size_bytes = both_bytes(f);
    st->nbuckets += sb.nbuckets;
    st->fp_bits += sb.fp_bits;
    st->form = CF_FORM_GROWABLE_PAIR;
}

uint64_t cf_pair_size_bytes(const cf_filter_t *f)
{
    return both_bytes(f);
}

uint32_t cf_pair_gen(const cf_filter_t *f)
{
    return P(f)->gen;
}

uint64_t cf_pair_size_at(const cf_filter_t *f, uint32_t gen)
{
    const struct cf_pair *pr = P(f);
    if (gen < 1 || gen > GENS || pr->of[gen - 1][0] == 0)
        return both_bytes(f);
    return cf_grow_size_at(f, pr->of[gen - 1][0]) +
           cf_grow_size_at(pr->b, pr->of[gen - 1][1]) + sizeof(*pr);
}

const cf_filter_t *cf_pair_second(const cf_filter_t *f)
{
    return B(f);
}

/* ---- serialised form ---- */

void cf_pair_header(const cf_filter_t *f, void *buf)
{
    CK_ASSERT(cf_grow_header_len(f) == CF_GROW_HDR5_LEN &&
              cf_grow_header_len(B(f)) == CF_GROW_HDR5_LEN);
    cf_grow_header(f, buf);
    cf_grow_header(B(f), (uint8_t *)buf + CF_GROW_HDR5_LEN);
}

int cf_pair_load_header(const void *buf, size_t len, const cf_limits_t *lim,
                        cf_filter_t **out, size_t *used)
{
    const uint8_t *p = buf;
    cf_limits_t half = {0};
    *out = NULL;
    if (len < CF_PAIR_HDR_LEN)
        return -EINVAL;
    if (lim != NULL) {
        half = *lim;
        half.max_bytes /= 2;
    }
    cf_filter_t *a, *b;
    size_t ua, ub;
    int rc = cf_grow_load_part(p, CF_GROW_HDR5_LEN, lim ? &half : NULL,
                               CF_GROW_FIRST, &a, &ua);
    if (rc < 0)
        return rc;
    rc = cf_grow_load_part(p + CF_GROW_HDR5_LEN, CF_GROW_HDR5_LEN,
                           lim ? &half : NULL, CF_GROW_SECOND, &b, &ub);
    if (rc < 0) {
        cf_grow_free(a);
        return rc;
    }
    /* the second table is the first's twin: its seed, its reserve */
    cf_stats_t sa, sb;
    cf_grow_stats(a, &sa);
    cf_grow_stats(b, &sb);
    if (sb.seed != second_seed(sa.seed) || sa.expansion != sb.expansion ||
        sa.max_kicks != sb.max_kicks) {
        cf_grow_free(a);
        cf_grow_free(b);
        return -EINVAL;
    }
    rc = join(a, b, out);
    if (rc == 0)
        *used = ua + ub;
    return rc;
}

uint64_t cf_pair_data_len(const cf_filter_t *f)
{
    return cf_grow_data_len(f) + cf_grow_data_len(B(f));
}

size_t cf_pair_data_view(const cf_filter_t *f, uint64_t off, size_t max,
                         const void **p)
{
    uint64_t la = cf_grow_data_len(f);
    if (off < la)
        return cf_grow_data_view(f, off, max, p);
    return cf_grow_data_view(B(f), off - la, max, p);
}

int cf_pair_load_data(cf_filter_t *f, uint64_t off, const void *p, size_t len)
{
    uint64_t la = cf_grow_data_len(f);
    int rc = 0;
    if (off < la) {
        size_t n = la - off < len ? (size_t)(la - off) : len;
        rc = cf_grow_load_data(f, off, p, n);
        p = (const uint8_t *)p + n;
        len -= n;
        off = la;
    }
    if (rc == 0 && len > 0)
        rc = cf_grow_load_data(P(f)->b, off - la, p, len);
    note_size(f);
    return rc;
}
