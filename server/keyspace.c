/*
 * keyspace.c - chained hash table with a power-of-two bucket array.
 *
 * Growth doubles the array when the load reaches 1 and shrinking halves it
 * when the load falls under 1/8, so resizing is amortized O(1) per change.
 * The array size is always a power of two, which is what lets ks_scan use a
 * reverse-binary cursor: the cursor's low bits name a bucket, and
 * incrementing the reversed cursor visits buckets in an order where every
 * bucket of a bigger (or smaller) table maps to positions that are still
 * ahead of the cursor, so a resize between two calls cannot make the walk
 * miss a key (it may report some twice).
 */
#include "keyspace.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <xxhash.h>

#define KS_MIN_BUCKETS 4

/* 32 bytes and the key: with a million small filters every byte of the
 * entry is a megabyte. */
typedef struct ks_entry {
    struct ks_entry *next;
    cf_filter_t *f;
    uint64_t counted; /* bytes this entry adds to db->bytes */
    uint32_t hash;    /* ks_hash(): picks the bucket, screens compares */
    uint32_t len;     /* keys are at most UINT32_MAX bytes */
    char key[];       /* len bytes, NUL-terminated for convenience */
} ks_entry_t;

struct ks_db {
    ks_entry_t **buckets;
    size_t nbuckets; /* power of two */
    size_t size;     /* keys */
    uint64_t bytes;  /* filters + entries + bucket array + this struct */
    uint64_t seed;
};

/* 32 bits: the bucket array never has more than 2^32 buckets. */
static uint32_t ks_hash(const ks_db_t *db, const void *key, size_t len)
{
    return (uint32_t)XXH3_64bits_withSeed(key, len, db->seed);
}

static uint64_t entry_bytes(size_t len)
{
    return sizeof(ks_entry_t) + len + 1;
}

ks_db_t *ks_db_new(void)
{
    ks_db_t *db = calloc(1, sizeof(*db));
    if (db == NULL)
        return NULL;
    db->buckets = calloc(KS_MIN_BUCKETS, sizeof(db->buckets[0]));
    if (db->buckets == NULL) {
        free(db);
        return NULL;
    }
    db->nbuckets = KS_MIN_BUCKETS;
    db->bytes = sizeof(*db) + KS_MIN_BUCKETS * sizeof(db->buckets[0]);
    /* A per-table random seed keeps crafted key sets from piling into one
     * chain. Without getrandom the address is a weak but harmless fallback. */
    if (getrandom(&db->seed, sizeof(db->seed), GRND_NONBLOCK) !=
        (ssize_t)sizeof(db->seed))
        db->seed = (uint64_t)(uintptr_t)db * 0x9E3779B97F4A7C15ull;
    return db;
}

static void free_entry(ks_entry_t *e)
{
    cf_free(e->f);
    free(e);
}

static void free_chains(ks_db_t *db)
{
    for (size_t i = 0; i < db->nbuckets; i++) {
        ks_entry_t *e = db->buckets[i];
        while (e != NULL) {
            ks_entry_t *next = e->next;
            free_entry(e);
            e = next;
        }
        db->buckets[i] = NULL;
    }
}

void ks_db_free(ks_db_t *db)
{
    if (db == NULL)
        return;
    free_chains(db);
    free(db->buckets);
    free(db);
}

/* Rebuilds the bucket array with n buckets; on allocation failure the table
 * keeps its current size (a too-full table is slower, not wrong). */
static void resize(ks_db_t *db, size_t n)
{
    ks_entry_t **nb = calloc(n, sizeof(nb[0]));
    if (nb == NULL)
        return;
    for (size_t i = 0; i < db->nbuckets; i++) {
        ks_entry_t *e = db->buckets[i];
        while (e != NULL) {
            ks_entry_t *next = e->next;
            size_t j = (size_t)e->hash & (n - 1);
            e->next = nb[j];
            nb[j] = e;
            e = next;
        }
    }
    free(db->buckets);
    db->bytes -= db->nbuckets * sizeof(db->buckets[0]);
    db->bytes += n * sizeof(nb[0]);
    db->buckets = nb;
    db->nbuckets = n;
}

static void maybe_grow(ks_db_t *db)
{
    if (db->size >= db->nbuckets && db->nbuckets < (1ull << 32) &&
        db->nbuckets <= SIZE_MAX / 2 / sizeof(ks_entry_t *))
        resize(db, db->nbuckets * 2);
}

static void maybe_shrink(ks_db_t *db)
{
    if (db->nbuckets > KS_MIN_BUCKETS && db->size < db->nbuckets / 8) {
        resize(db, db->nbuckets / 2);
    }
}

/* The link that points at key's entry (or the chain's terminating NULL). */
static ks_entry_t **find_link(const ks_db_t *db, const void *key, size_t len,
                              uint32_t h)
{
    ks_entry_t **link = &db->buckets[h & (db->nbuckets - 1)];
    while (*link != NULL) {
        ks_entry_t *e = *link;
        if (e->hash == h && e->len == len && memcmp(e->key, key, len) == 0)
            break;
        link = &e->next;
    }
    return link;
}

cf_filter_t *ks_get(const ks_db_t *db, const void *key, size_t len)
{
    ks_entry_t *e = *find_link(db, key, len, ks_hash(db, key, len));
    return e != NULL ? e->f : NULL;
}

static ks_entry_t *new_entry(const void *key, size_t len, uint32_t h,
                             cf_filter_t *f)
{
    if (len > UINT32_MAX || len > SIZE_MAX - sizeof(ks_entry_t) - 1)
        return NULL;
    ks_entry_t *e = malloc(sizeof(*e) + len + 1);
    if (e == NULL)
        return NULL;
    e->next = NULL;
    e->f = f;
    e->hash = h;
    e->len = (uint32_t)len;
    if (len > 0)
        memcpy(e->key, key, len);
    e->key[len] = '\0';
    return e;
}

static void link_entry(ks_db_t *db, ks_entry_t *e)
{
    size_t i = (size_t)e->hash & (db->nbuckets - 1);
    e->next = db->buckets[i];
    db->buckets[i] = e;
    db->size++;
    e->counted = entry_bytes(e->len) + cf_size_bytes(e->f);
    db->bytes += e->counted;
}

/* Unlinks *link's entry and takes it out of the accounting. */
static ks_entry_t *unlink_entry(ks_db_t *db, ks_entry_t **link)
{
    ks_entry_t *e = *link;
    *link = e->next;
    e->next = NULL;
    db->size--;
    db->bytes -= e->counted;
    return e;
}

int ks_add(ks_db_t *db, const void *key, size_t len, cf_filter_t *f)
{
    uint32_t h = ks_hash(db, key, len);
    if (*find_link(db, key, len, h) != NULL)
        return -EEXIST;
    ks_entry_t *e = new_entry(key, len, h, f);
    if (e == NULL)
        return -ENOMEM;
    link_entry(db, e);
    maybe_grow(db);
    return 0;
}

int ks_del(ks_db_t *db, const void *key, size_t len)
{
    ks_entry_t **link = find_link(db, key, len, ks_hash(db, key, len));
    if (*link == NULL)
        return 0;
    free_entry(unlink_entry(db, link));
    maybe_shrink(db);
    return 1;
}

int ks_rename(ks_db_t *db, const void *src, size_t slen, const void *dst,
              size_t dlen)
{
    uint32_t sh = ks_hash(db, src, slen);
    ks_entry_t **slink = find_link(db, src, slen, sh);
    if (*slink == NULL)
        return -ENOENT;
    if (slen == dlen && memcmp(src, dst, slen) == 0)
        return 0;
    /* Allocate first so a failure changes nothing. */
    uint32_t dh = ks_hash(db, dst, dlen);
    ks_entry_t *ne = new_entry(dst, dlen, dh, NULL);
    if (ne == NULL)
        return -ENOMEM;
    ks_entry_t *old = unlink_entry(db, slink);
    ne->f = old->f;
    free(old);
    ks_entry_t **dlink = find_link(db, dst, dlen, dh);
    if (*dlink != NULL)
        free_entry(unlink_entry(db, dlink));
    link_entry(db, ne);
    return 0;
}

size_t ks_size(const ks_db_t *db)
{
    return db->size;
}

void ks_flush(ks_db_t *db)
{
    free_chains(db);
    db->size = 0;
    ks_entry_t **nb = calloc(KS_MIN_BUCKETS, sizeof(nb[0]));
    if (nb != NULL) {
        free(db->buckets);
        db->buckets = nb;
        db->nbuckets = KS_MIN_BUCKETS;
    }
    db->bytes = sizeof(*db) + db->nbuckets * sizeof(db->buckets[0]);
}

uint64_t ks_bytes(const ks_db_t *db)
{
    return db->bytes;
}

void ks_recount(ks_db_t *db, const void *key, size_t len)
{
    ks_entry_t *e = *find_link(db, key, len, ks_hash(db, key, len));
    if (e == NULL)
        return;
    uint64_t now = entry_bytes(e->len) + cf_size_bytes(e->f);
    db->bytes = db->bytes - e->counted + now;
    e->counted = now;
}

uint64_t ks_usage(const ks_db_t *db, const void *key, size_t len)
{
    ks_entry_t *e = *find_link(db, key, len, ks_hash(db, key, len));
    if (e == NULL)
        return 0;
    return entry_bytes(e->len) + cf_size_bytes(e->f) + sizeof(db->buckets[0]);
}

int ks_foreach(const ks_db_t *db, ks_each_fn *fn, void *ctx)
{
    for (size_t i = 0; i < db->nbuckets; i++)
        for (const ks_entry_t *e = db->buckets[i]; e != NULL; e = e->next) {
            int rc = fn(ctx, e->key, e->len, e->f);
            if (rc != 0)
                return rc;
        }
    return 0;
}

static uint64_t rev64(uint64_t v)
{
    v = ((v >> 1) & 0x5555555555555555ull) | ((v & 0x5555555555555555ull) << 1);
    v = ((v >> 2) & 0x3333333333333333ull) | ((v & 0x3333333333333333ull) << 2);
    v = ((v >> 4) & 0x0F0F0F0F0F0F0F0Full) | ((v & 0x0F0F0F0F0F0F0F0Full) << 4);
    v = ((v >> 8) & 0x00FF00FF00FF00FFull) | ((v & 0x00FF00FF00FF00FFull) << 8);
    v = ((v >> 16) & 0x0000FFFF0000FFFFull) |
        ((v & 0x0000FFFF0000FFFFull) << 16);
    return (v >> 32) | (v << 32);
}

uint64_t ks_scan(const ks_db_t *db, uint64_t cursor, size_t count,
                 ks_each_fn *fn, void *ctx)
{
    uint64_t mask = db->nbuckets - 1;
    size_t seen = 0;
    /* Empty buckets cost work too: bound them so one call stays short. */
    size_t budget =
        count == 0 ? 10 : (count > SIZE_MAX / 10 ? SIZE_MAX : count * 10);
    if (count == 0)
        count = 1;
    do {
        for (const ks_entry_t *e = db->buckets[cursor & mask]; e != NULL;
             e = e->next) {
            fn(ctx, e->key, e->len, e->f);
            seen++;
        }
        /* Increment the bits above the mask's complement, reversed: set the
         * unmasked high bits so the carry falls through them. */
        cursor |= ~mask;
        cursor = rev64(cursor);
        cursor++;
        cursor = rev64(cursor);
        budget--;
    } while (cursor != 0 && seen < count && budget > 0);
    return cursor;
}
