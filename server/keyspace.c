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
 *
 * A key costs one allocation: the filter's. Its entry lives in the filter's
 * host bytes, which end where the filter starts (cf_resize_extra()), so the
 * entry shares the struct's cache line. Read from the filter's address
 * down, packed, every field read and written with memcpy or byte by byte:
 *
 *   f - 8     next     the next filter of the chain (cf_filter_t *)
 *   f - 9     tables   cf_nfilters() when the key was last counted (low
 *                      7 bits; CF_MAX_FILTERS is 64), and E_EXPIRES: the
 *                      key has a timeout
 *   f - 10 .. length   the key's length, LEB128 from f - 10 downwards (one
 *                      byte below 128)
 *   below it  key      the key's bytes (no NUL), in order
 *   below it  when     only with E_EXPIRES: the absolute expiry time, unix
 *                      milliseconds (int64_t), 8 bytes
 *   below it  pad      up to CF_EXTRA_ALIGN - 1 bytes (entry_size())
 *
 * A timeout lives in the entry rather than in a second table: a key without
 * one pays nothing, a key with one pays exactly 8 bytes (the entry stays a
 * multiple of CF_EXTRA_ALIGN, which is 8), and active expiry walks the
 * bucket array with the SCAN cursor, looking at keys with E_EXPIRES only.
 * A second table would cost a slot and a copy or pointer of the key each.
 *
 * There is no stored hash: a resize hashes every key again and a lookup
 * compares lengths and bytes. With a million small filters every byte of
 * the entry is a megabyte, and a resize is rare next to the lookups.
 *
 * A link is the address of a pointer slot: a bucket of the array or the
 * next field of an entry. Only ks_add and ks_rename resize host bytes, and
 * they store the filter's new address in the link that names it before
 * anything else reads it.
 */
#include "keyspace.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <xxhash.h>

#include "check.h"

#define KS_MIN_BUCKETS 4

/* Offsets of the entry's fields below the filter's address. */
#define E_NEXT 8
#define E_TABLES 9
#define E_LEN 10
#define E_LEN_MAX 5 /* LEB128 of UINT32_MAX */
#define E_WHEN 8    /* bytes of the expiry time */
#define E_EXPIRES 0x80u
#define E_TABLES_MASK 0x7Fu

struct ks_db {
    cf_filter_t **buckets;
    size_t nbuckets; /* power of two */
    size_t size;     /* keys */
    uint64_t bytes;  /* filters + entries + bucket array + this struct */
    uint64_t seed;
    size_t nexpires;        /* keys with E_EXPIRES */
    uint64_t expire_cursor; /* ks_expire_step()'s place in the walk */
    uint64_t avg_ttl;       /* ks_avg_ttl() */
    /* The filter ks_get() found last (a pipeline mostly asks for one key
     * again): its key is compared before hashing. Forgotten whenever a
     * filter is linked, unlinked or moved, so it is always linked. */
    cf_filter_t *hit;
};

/* 32 bits: the bucket array never has more than 2^32 buckets. */
static uint32_t ks_hash(const ks_db_t *db, const void *key, size_t len)
{
    return (uint32_t)XXH3_64bits_withSeed(key, len, db->seed);
}

static cf_filter_t *get_ptr(const void *p)
{
    cf_filter_t *f;
    memcpy(&f, p, sizeof(f));
    return f;
}

static void put_ptr(void *p, cf_filter_t *f)
{
    memcpy(p, &f, sizeof(f));
}

static size_t varint_len(size_t v)
{
    size_t n = 1;
    for (; v >= 0x80; v >>= 7)
        n++;
    return n;
}

/* Whether a key of len bytes can have an entry (keyspace.h's bound). */
static bool key_len_ok(size_t len)
{
    return len <= UINT32_MAX && len <= SIZE_MAX - E_LEN - E_LEN_MAX;
}

/* Host bytes of the entry of a key of len bytes (key_len_ok()), with room
 * for an expiry time when exp. */
static size_t entry_size(size_t len, bool exp)
{
    size_t n = E_LEN - 1 + varint_len(len) + len + (exp ? E_WHEN : 0);
    return (n + CF_EXTRA_ALIGN - 1) / CF_EXTRA_ALIGN * CF_EXTRA_ALIGN;
}

/* The address of a field of f's entry, off bytes below f. */
static uint8_t *field(const cf_filter_t *f, size_t off)
{
    return (uint8_t *)(uintptr_t)f - off;
}

/* f's key: its bytes, and its length in *len. */
static const uint8_t *entry_key(const cf_filter_t *f, size_t *len)
{
    const uint8_t *p = field(f, E_LEN);
    size_t v = 0;
    unsigned shift = 0;
    uint8_t b;
    do {
        b = *p--;
        v |= (size_t)(b & 0x7F) << shift;
        shift += 7;
    } while (b & 0x80);
    *len = v;
    return p + 1 - v;
}

static bool entry_expires(const cf_filter_t *f)
{
    return (*field(f, E_TABLES) & E_EXPIRES) != 0;
}

static uint8_t entry_tables(const cf_filter_t *f)
{
    return (uint8_t)(*field(f, E_TABLES) & E_TABLES_MASK);
}

/* The host bytes f has: its entry with the pad. */
static size_t entry_bytes(const cf_filter_t *f)
{
    size_t len;
    (void)entry_key(f, &len);
    return entry_size(len, entry_expires(f));
}

/* Where f's expiry time is (entry_expires(f) must hold). */
static uint8_t *entry_when_at(const cf_filter_t *f)
{
    size_t len;
    return (uint8_t *)(uintptr_t)entry_key(f, &len) - E_WHEN;
}

static int64_t entry_when(const cf_filter_t *f)
{
    int64_t when;
    memcpy(&when, entry_when_at(f), sizeof(when));
    return when;
}

static void entry_set_when(cf_filter_t *f, int64_t when)
{
    memcpy(entry_when_at(f), &when, sizeof(when));
}

/* Writes the length and the key into f's entry (sized by entry_size()). */
static void entry_set_key(cf_filter_t *f, const void *key, size_t len)
{
    uint8_t *p = field(f, E_LEN);
    size_t v = len;
    while (v >= 0x80) {
        *p-- = (uint8_t)(v | 0x80);
        v >>= 7;
    }
    *p = (uint8_t)v;
    if (len > 0)
        memcpy(p - len, key, len);
}

static cf_filter_t *entry_next(const cf_filter_t *f)
{
    return get_ptr(field(f, E_NEXT));
}

/* What f adds to db->bytes: its size when it had the tables it was counted
 * with (tables are only ever added, so this never changes), and its entry. */
static uint64_t counted(const cf_filter_t *f)
{
    return cf_size_bytes_at(f, entry_tables(f)) + entry_bytes(f);
}

/* Frees f and its entry. */
static void free_filter(cf_filter_t *f)
{
    cf_free_extra(f, entry_bytes(f));
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

static void free_chains(ks_db_t *db)
{
    db->hit = NULL;
    for (size_t i = 0; i < db->nbuckets; i++) {
        cf_filter_t *f = db->buckets[i];
        while (f != NULL) {
            cf_filter_t *next = entry_next(f);
            free_filter(f);
            f = next;
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
    db->hit = NULL;
    cf_filter_t **nb = calloc(n, sizeof(nb[0]));
    if (nb == NULL)
        return;
    size_t keys = 0, expires = 0; /* the walk checks the counts */
    for (size_t i = 0; i < db->nbuckets; i++) {
        cf_filter_t *f = db->buckets[i];
        while (f != NULL) {
            cf_filter_t *next = entry_next(f);
            keys++;
            expires += entry_expires(f);
            size_t len;
            const uint8_t *key = entry_key(f, &len);
            size_t j = (size_t)ks_hash(db, key, len) & (n - 1);
            put_ptr(field(f, E_NEXT), nb[j]);
            nb[j] = f;
            f = next;
        }
    }
    CK_ASSERT(keys == db->size && expires == db->nexpires);
    (void)keys;
    (void)expires;
    free(db->buckets);
    db->bytes -= db->nbuckets * sizeof(db->buckets[0]);
    db->bytes += n * sizeof(nb[0]);
    db->buckets = nb;
    db->nbuckets = n;
}

static void maybe_grow(ks_db_t *db)
{
    if (db->size >= db->nbuckets && db->nbuckets < (1ull << 32) &&
        db->nbuckets <= SIZE_MAX / 2 / sizeof(cf_filter_t *))
        resize(db, db->nbuckets * 2);
}

static void maybe_shrink(ks_db_t *db)
{
    if (db->nbuckets > KS_MIN_BUCKETS && db->size < db->nbuckets / 8) {
        resize(db, db->nbuckets / 2);
    }
}

/* The link that holds key's filter (or the chain's terminating NULL). */
static uint8_t *find_link(const ks_db_t *db, const void *key, size_t len,
                          uint32_t h)
{
    uint8_t *link = (uint8_t *)&db->buckets[h & (db->nbuckets - 1)];
    cf_filter_t *f;
    while ((f = get_ptr(link)) != NULL) {
        /* its struct says where its entry is, and the entry lies past
         * its table: fetch them together */
        cf_prefetch_filter(f);
        size_t klen;
        const uint8_t *k = entry_key(f, &klen);
        if (klen == len && (len == 0 || memcmp(k, key, len) == 0))
            break;
        link = field(f, E_NEXT);
    }
    return link;
}

cf_filter_t *ks_get(const ks_db_t *db, const void *key, size_t len)
{
    cf_filter_t *f = db->hit;
    if (f != NULL) {
        size_t klen;
        const uint8_t *k = entry_key(f, &klen);
        if (klen == len && (len == 0 || memcmp(k, key, len) == 0))
            return f;
    }
    f = get_ptr(find_link(db, key, len, ks_hash(db, key, len)));
    if (f != NULL)
        ((ks_db_t *)db)->hit = f; /* a cache: the table is not changed */
    return f;
}

/* Puts f (its entry written but for next and tables, its expiry time
 * written when exp) at the head of bucket h and counts it with the tables
 * it has now. */
static void link_filter(ks_db_t *db, cf_filter_t *f, uint32_t h, bool exp)
{
    db->hit = NULL;
    size_t i = (size_t)h & (db->nbuckets - 1);
    put_ptr(field(f, E_NEXT), db->buckets[i]);
    db->buckets[i] = f;
    *field(f, E_TABLES) = (uint8_t)(cf_nfilters(f) | (exp ? E_EXPIRES : 0));
    db->size++;
    db->nexpires += exp;
    db->bytes += counted(f);
    CK_ASSERT(db->nexpires <= db->size);
}

/* Unlinks link's filter and takes it out of the accounting. */
static cf_filter_t *unlink_filter(ks_db_t *db, uint8_t *link)
{
    db->hit = NULL;
    cf_filter_t *f = get_ptr(link);
    CK_ASSERT(f != NULL && db->size > 0 && db->bytes >= counted(f));
    CK_ASSERT(db->nexpires >= (size_t)entry_expires(f));
    put_ptr(link, entry_next(f));
    db->size--;
    db->nexpires -= entry_expires(f);
    db->bytes -= counted(f);
    return f;
}

int ks_add(ks_db_t *db, const void *key, size_t len, cf_filter_t **f)
{
    if (!key_len_ok(len))
        return -ENOMEM;
    uint32_t h = ks_hash(db, key, len);
    if (get_ptr(find_link(db, key, len, h)) != NULL)
        return -EEXIST;
    /* a filter that comes in has no host bytes (keyspace.h) */
    if (cf_resize_extra(f, 0, entry_size(len, false)) != 0)
        return -ENOMEM;
    entry_set_key(*f, key, len);
    link_filter(db, *f, h, false);
    maybe_grow(db);
    return 0;
}

int ks_del(ks_db_t *db, const void *key, size_t len)
{
    uint8_t *link = find_link(db, key, len, ks_hash(db, key, len));
    if (get_ptr(link) == NULL)
        return 0;
    free_filter(unlink_filter(db, link));
    maybe_shrink(db);
    return 1;
}

int ks_rename(ks_db_t *db, const void *src, size_t slen, const void *dst,
              size_t dlen)
{
    uint8_t *slink = find_link(db, src, slen, ks_hash(db, src, slen));
    cf_filter_t *f = get_ptr(slink);
    if (f == NULL)
        return -ENOENT;
    if (slen == dlen && (slen == 0 || memcmp(src, dst, slen) == 0))
        return 0;
    if (!key_len_ok(dlen))
        return -ENOMEM;
    /* Resize first so a failure changes nothing. The host bytes are not
     * kept by a resize: next and tables are read before and written
     * again, and the filter's old address leaves slink at once. */
    uint64_t was = counted(f);
    cf_filter_t *next = entry_next(f);
    uint8_t tables = *field(f, E_TABLES);
    bool exp = entry_expires(f);
    int64_t when = exp ? entry_when(f) : -1;
    db->hit = NULL; /* f may move */
    if (cf_resize_extra(&f, entry_bytes(f), entry_size(dlen, exp)) != 0)
        return -ENOMEM;
    put_ptr(slink, next);
    db->size--;
    db->nexpires -= exp;
    db->bytes -= was;
    entry_set_key(f, dst, dlen);
    *field(f, E_TABLES) = tables;
    if (exp)
        entry_set_when(f, when);
    uint32_t dh = ks_hash(db, dst, dlen);
    uint8_t *dlink = find_link(db, dst, dlen, dh);
    if (get_ptr(dlink) != NULL)
        free_filter(unlink_filter(db, dlink));
    link_filter(db, f, dh, exp);
    return 0;
}

int ks_move(ks_db_t *from, ks_db_t *to, const void *key, size_t len)
{
    uint8_t *slink = find_link(from, key, len, ks_hash(from, key, len));
    if (get_ptr(slink) == NULL)
        return -ENOENT;
    uint32_t h = ks_hash(to, key, len);
    if (get_ptr(find_link(to, key, len, h)) != NULL)
        return -EEXIST;
    /* The entry keeps its size, so the filter does not move; it is counted
     * again in to with the tables it has now, and keeps its expiry time
     * (MOVE carries a timeout, as Redis's does). */
    cf_filter_t *f = unlink_filter(from, slink);
    link_filter(to, f, h, entry_expires(f));
    maybe_shrink(from);
    maybe_grow(to);
    return 0;
}

bool ks_random(const ks_db_t *db, uint64_t r, const void **key, size_t *len)
{
    if (db->size == 0)
        return false;
    /* The load is at least 1/8 but for a table at its smallest, so a run of
     * empty buckets is short on average. */
    size_t i = (size_t)(r & (db->nbuckets - 1));
    while (db->buckets[i] == NULL)
        i = (i + 1) & (db->nbuckets - 1);
    size_t n = 0;
    for (const cf_filter_t *f = db->buckets[i]; f != NULL; f = entry_next(f))
        n++;
    const cf_filter_t *f = db->buckets[i];
    for (size_t k = (size_t)((r >> 32) % n); k > 0; k--)
        f = entry_next(f);
    *key = entry_key(f, len);
    return true;
}

size_t ks_size(const ks_db_t *db)
{
    return db->size;
}

void ks_flush(ks_db_t *db)
{
    free_chains(db);
    db->size = 0;
    db->nexpires = 0;
    db->expire_cursor = 0;
    db->avg_ttl = 0;
    cf_filter_t **nb = calloc(KS_MIN_BUCKETS, sizeof(nb[0]));
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
    cf_filter_t *f = get_ptr(find_link(db, key, len, ks_hash(db, key, len)));
    if (f == NULL)
        return;
    db->bytes -= counted(f);
    *field(f, E_TABLES) =
        (uint8_t)(cf_nfilters(f) | (*field(f, E_TABLES) & E_EXPIRES));
    db->bytes += counted(f);
}

uint64_t ks_usage(const ks_db_t *db, const void *key, size_t len)
{
    cf_filter_t *f = get_ptr(find_link(db, key, len, ks_hash(db, key, len)));
    if (f == NULL)
        return 0;
    return cf_size_bytes(f) + entry_bytes(f) + sizeof(db->buckets[0]);
}

int ks_foreach(const ks_db_t *db, ks_each_fn *fn, void *ctx)
{
    for (size_t i = 0; i < db->nbuckets; i++)
        for (const cf_filter_t *f = db->buckets[i]; f != NULL;
             f = entry_next(f)) {
            size_t len;
            const uint8_t *key = entry_key(f, &len);
            int rc = fn(ctx, key, len, f);
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
        for (const cf_filter_t *f = db->buckets[cursor & mask]; f != NULL;
             f = entry_next(f)) {
            size_t len;
            const uint8_t *key = entry_key(f, &len);
            fn(ctx, key, len, f);
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

/* ---- expiry times ------------------------------------------------------- */

cf_filter_t *ks_find(const ks_db_t *db, const void *key, size_t len,
                     int64_t *when)
{
    cf_filter_t *f = ks_get(db, key, len);
    *when = f != NULL && entry_expires(f) ? entry_when(f) : -1;
    return f;
}

int64_t ks_when(const cf_filter_t *f)
{
    return entry_expires(f) ? entry_when(f) : -1;
}

size_t ks_expires(const ks_db_t *db)
{
    return db->nexpires;
}

/* Resizes the entry of link's filter for exp and writes it again: the host
 * bytes do not survive a resize (cf_resize_extra()). */
static int reshape(ks_db_t *db, uint8_t *link, const void *key, size_t len,
                   bool exp, int64_t when)
{
    cf_filter_t *f = get_ptr(link);
    uint64_t was = counted(f);
    cf_filter_t *next = entry_next(f);
    uint8_t tables = entry_tables(f);
    db->hit = NULL; /* f may move */
    if (cf_resize_extra(&f, entry_bytes(f), entry_size(len, exp)) != 0)
        return -ENOMEM;
    put_ptr(link, f);
    put_ptr(field(f, E_NEXT), next);
    *field(f, E_TABLES) = (uint8_t)(tables | (exp ? E_EXPIRES : 0));
    entry_set_key(f, key, len);
    if (exp) {
        entry_set_when(f, when);
        db->nexpires++;
    } else {
        db->nexpires--;
    }
    db->bytes -= was;
    db->bytes += counted(f);
    return 0;
}

int ks_set_expire(ks_db_t *db, const void *key, size_t len, int64_t when)
{
    uint8_t *link = find_link(db, key, len, ks_hash(db, key, len));
    cf_filter_t *f = get_ptr(link);
    if (f == NULL)
        return -ENOENT;
    if (entry_expires(f)) {
        entry_set_when(f, when);
        return 0;
    }
    return reshape(db, link, key, len, true, when);
}

int ks_clear_expire(ks_db_t *db, const void *key, size_t len)
{
    uint8_t *link = find_link(db, key, len, ks_hash(db, key, len));
    cf_filter_t *f = get_ptr(link);
    if (f == NULL || !entry_expires(f))
        return 0;
    int rc = reshape(db, link, key, len, false, -1);
    return rc < 0 ? rc : 1;
}

void ks_expire_step(ks_db_t *db, int64_t now, size_t max_buckets,
                    size_t max_sample, ks_expired_fn *fn, void *ctx,
                    ks_expire_stats_t *st)
{
    memset(st, 0, sizeof(*st));
    if (db->nexpires == 0) {
        db->avg_ttl = 0;
        return;
    }
    uint64_t cursor = db->expire_cursor;
    uint64_t mask = db->nbuckets - 1;
    do {
        uint8_t *link = (uint8_t *)&db->buckets[cursor & mask];
        cf_filter_t *f;
        while ((f = get_ptr(link)) != NULL) {
            if (!entry_expires(f)) {
                link = field(f, E_NEXT);
                continue;
            }
            int64_t when = entry_when(f);
            st->sampled++;
            if (when > now) {
                st->ttl_sum += (uint64_t)(when - now);
                link = field(f, E_NEXT);
                continue;
            }
            /* unlinked but not yet freed: the key bytes are still there
             * for fn, and link now names the next filter */
            unlink_filter(db, link);
            size_t klen;
            const uint8_t *k = entry_key(f, &klen);
            fn(ctx, k, klen);
            free_filter(f);
            st->expired++;
        }
        cursor |= ~mask;
        cursor = rev64(cursor);
        cursor++;
        cursor = rev64(cursor);
        st->buckets++;
        if (cursor == 0)
            st->wrapped = true;
    } while (cursor != 0 && st->buckets < max_buckets &&
             st->sampled < max_sample && db->nexpires > 0);
    db->expire_cursor = cursor;
    /* Redis's running average: each sample weighs 1/50. */
    if (st->sampled > st->expired) {
        uint64_t avg = st->ttl_sum / (st->sampled - st->expired);
        db->avg_ttl = db->avg_ttl == 0 ? avg : db->avg_ttl / 50 * 49 + avg / 50;
    }
    maybe_shrink(db);
}

uint64_t ks_avg_ttl(const ks_db_t *db)
{
    return db->nexpires == 0 ? 0 : db->avg_ttl;
}
