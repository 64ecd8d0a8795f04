/*
 * keyspace.c - chained hash table with power-of-two bucket arrays, resized
 * incrementally as Redis's dict is.
 *
 * Growth doubles the array when the load reaches 1; shrinking goes to the
 * smallest power of two that holds the keys when the load falls under 1/8.
 * A resize never moves every key at once: it allocates the new array
 * (table 1) beside the old one (table 0) and moves the buckets of table 0
 * in order, a few per write (REHASH_STEP) and as many as the caller's
 * time allows in ks_rehash() (the cron). During the move a key whose
 * table 0 bucket is below db->rehash is in table 1, every other key is in
 * table 0 (inserts follow the same rule), so a lookup probes exactly one
 * chain. When the last bucket has moved, table 1 becomes table 0.
 *
 * The sizes are powers of two, which is what lets ks_scan use a
 * reverse-binary cursor: the cursor's low bits name a bucket, and
 * incrementing the reversed cursor visits buckets in an order where every
 * bucket of a bigger (or smaller) table maps to positions that are still
 * ahead of the cursor, so a resize between two calls cannot make the walk
 * miss a key (it may report some twice). During a move both tables are
 * walked: the smaller table's bucket, then every bucket of the bigger one
 * that it expands to (Redis's dictScan).
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
#include "lazyfree.h"

#define KS_MIN_BUCKETS 4
/* Buckets a write moves while a resize is under way; empty ones visited
 * count a tenth each (REHASH_EMPTY per bucket), so a sparse table moves
 * on too. */
#define REHASH_STEP 1
#define REHASH_EMPTY 10

/* Offsets of the entry's fields below the filter's address. */
#define E_NEXT 8
#define E_TABLES 9
#define E_LEN 10
#define E_LEN_MAX 5 /* LEB128 of UINT32_MAX */
#define E_WHEN 8    /* bytes of the expiry time */
#define E_EXPIRES 0x80u
#define E_TABLES_MASK 0x7Fu

/* One bucket array. */
typedef struct ks_table {
    cf_filter_t **b;
    size_t n; /* power of two; 0 for table 1 when no resize is under way */
} ks_table_t;

/* Whether resizes start and move on (ks_set_resizing()). */
static bool resizing_on = true;

struct ks_db {
    ks_table_t t[2]; /* t[1].b != NULL while a resize is under way */
    size_t rehash;   /* the next bucket of t[0] to move to t[1] */
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
    db->t[0].b = calloc(KS_MIN_BUCKETS, sizeof(db->t[0].b[0]));
    if (db->t[0].b == NULL) {
        free(db);
        return NULL;
    }
    db->t[0].n = KS_MIN_BUCKETS;
    db->bytes = sizeof(*db) + KS_MIN_BUCKETS * sizeof(db->t[0].b[0]);
    /* A per-table random seed keeps crafted key sets from piling into one
     * chain. Without getrandom the address is a weak but harmless fallback. */
    if (getrandom(&db->seed, sizeof(db->seed), GRND_NONBLOCK) !=
        (ssize_t)sizeof(db->seed))
        db->seed = (uint64_t)(uintptr_t)db * 0x9E3779B97F4A7C15ull;
    return db;
}

static bool rehashing(const ks_db_t *db)
{
    return db->t[1].b != NULL;
}

/* Frees every filter of t and empties its buckets. */
static void free_table(ks_table_t *t)
{
    for (size_t i = 0; i < t->n; i++) {
        cf_filter_t *f = t->b[i];
        while (f != NULL) {
            cf_filter_t *next = entry_next(f);
            free_filter(f);
            f = next;
        }
        t->b[i] = NULL;
    }
}

/* Frees every filter, and table 1's array: table 0 is left empty at its
 * size. */
static void free_chains(ks_db_t *db)
{
    db->hit = NULL;
    free_table(&db->t[0]);
    if (rehashing(db)) {
        free_table(&db->t[1]);
        free(db->t[1].b);
        db->bytes -= db->t[1].n * sizeof(db->t[1].b[0]);
        db->t[1] = (ks_table_t){NULL, 0};
        db->rehash = 0;
    }
}

void ks_db_free(ks_db_t *db)
{
    if (db == NULL)
        return;
    free_chains(db);
    free(db->t[0].b);
    free(db);
}

/* Starts a resize to n buckets (a power of two, not table 0's size); on
 * allocation failure the table keeps its size (a too-full table is slower,
 * not wrong). */
static void start_resize(ks_db_t *db, size_t n)
{
    CK_ASSERT(!rehashing(db) && n != db->t[0].n && (n & (n - 1)) == 0);
    cf_filter_t **nb = calloc(n, sizeof(nb[0]));
    if (nb == NULL)
        return;
    db->t[1] = (ks_table_t){nb, n};
    db->rehash = 0;
    db->bytes += n * sizeof(nb[0]);
}

/* Moves up to n non-empty buckets of table 0 to table 1, looking at no
 * more than REHASH_EMPTY * n empty ones, and ends the resize when the last
 * has moved: true when one is still under way. Filters stay where they
 * are (and linked, so db->hit stays good); only their links change. */
static bool rehash_buckets(ks_db_t *db, size_t n)
{
    if (!rehashing(db))
        return false;
    ks_table_t *t0 = &db->t[0], *t1 = &db->t[1];
    size_t empty = n > SIZE_MAX / REHASH_EMPTY ? SIZE_MAX : n * REHASH_EMPTY;
    size_t mask1 = t1->n - 1;
    while (n > 0 && db->rehash < t0->n) {
        cf_filter_t *f = t0->b[db->rehash];
        if (f == NULL) {
            db->rehash++;
            if (--empty == 0)
                break;
            continue;
        }
        while (f != NULL) {
            cf_filter_t *next = entry_next(f);
            size_t len;
            const uint8_t *key = entry_key(f, &len);
            size_t j = (size_t)ks_hash(db, key, len) & mask1;
            put_ptr(field(f, E_NEXT), t1->b[j]);
            t1->b[j] = f;
            f = next;
        }
        t0->b[db->rehash++] = NULL;
        n--;
    }
    if (db->rehash < t0->n)
        return true;
    /* 2M keys leave a 16 MiB array: its munmap() takes milliseconds. */
    lazyfree_block(t0->b, t0->n * sizeof(t0->b[0]));
    db->bytes -= t0->n * sizeof(t0->b[0]);
    *t0 = *t1;
    *t1 = (ks_table_t){NULL, 0};
    db->rehash = 0;
    return false;
}

/* Starts the resize the load asks for, if none is under way: doubling at
 * a load of 1, shrinking to the smallest power of two that holds the keys
 * under 1/8. */
static void maybe_resize(ks_db_t *db)
{
    if (rehashing(db) || !resizing_on)
        return;
    size_t n = db->t[0].n;
    if (db->size >= n && n < (1ull << 32) &&
        n <= SIZE_MAX / 2 / sizeof(cf_filter_t *)) {
        start_resize(db, n * 2);
    } else if (n > KS_MIN_BUCKETS && db->size < n / 8) {
        size_t m = KS_MIN_BUCKETS;
        while (m < db->size)
            m *= 2;
        start_resize(db, m);
    }
}

/* A write's share of the resize under way. */
static void step(ks_db_t *db)
{
    if (resizing_on)
        (void)rehash_buckets(db, REHASH_STEP);
}

void ks_set_resizing(bool on)
{
    resizing_on = on;
}

bool ks_rehash(ks_db_t *db, size_t n)
{
    if (!resizing_on)
        return rehashing(db);
    maybe_resize(db);
    if (rehash_buckets(db, n))
        return true;
    maybe_resize(db); /* the load may ask for the next one already */
    return rehashing(db);
}

int ks_resize(ks_db_t *db, size_t n)
{
    if (rehashing(db))
        return -EBUSY;
    if (n < KS_MIN_BUCKETS || (n & (n - 1)) != 0 || n > (1ull << 32) ||
        n > SIZE_MAX / sizeof(cf_filter_t *))
        return -EINVAL;
    if (n == db->t[0].n)
        return 0;
    start_resize(db, n);
    return rehashing(db) ? 0 : -ENOMEM;
}

/* The bucket that holds (or would hold) a key of hash h: table 1's when
 * its table 0 bucket has moved. */
static cf_filter_t **bucket_of(const ks_db_t *db, uint32_t h)
{
    size_t i = (size_t)h & (db->t[0].n - 1);
    if (rehashing(db) && i < db->rehash)
        return &db->t[1].b[(size_t)h & (db->t[1].n - 1)];
    return &db->t[0].b[i];
}

/* The link that holds key's filter (or the chain's terminating NULL). */
static uint8_t *find_link(const ks_db_t *db, const void *key, size_t len,
                          uint32_t h)
{
    uint8_t *link = (uint8_t *)bucket_of(db, h);
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
    cf_filter_t **head = bucket_of(db, h);
    put_ptr(field(f, E_NEXT), *head);
    *head = f;
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
    step(db);
    uint32_t h = ks_hash(db, key, len);
    if (get_ptr(find_link(db, key, len, h)) != NULL)
        return -EEXIST;
    /* a filter that comes in has no host bytes (keyspace.h) */
    if (cf_resize_extra(f, 0, entry_size(len, false)) != 0)
        return -ENOMEM;
    entry_set_key(*f, key, len);
    link_filter(db, *f, h, false);
    maybe_resize(db);
    return 0;
}

int ks_rename(ks_db_t *db, const void *src, size_t slen, const void *dst,
              size_t dlen)
{
    cf_filter_t *replaced;
    int rc = ks_rename_take(db, src, slen, dst, dlen, &replaced);
    if (replaced != NULL)
        free_filter(replaced);
    return rc;
}

int ks_rename_take(ks_db_t *db, const void *src, size_t slen, const void *dst,
                   size_t dlen, cf_filter_t **replaced)
{
    *replaced = NULL;
    step(db);
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
        *replaced = unlink_filter(db, dlink);
    link_filter(db, f, dh, exp);
    maybe_resize(db);
    return 0;
}

int ks_move(ks_db_t *from, ks_db_t *to, const void *key, size_t len)
{
    step(from);
    step(to);
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
    maybe_resize(from);
    maybe_resize(to);
    return 0;
}

/* Bucket i of the buckets that can hold keys, numbered across both
 * tables: table 0's from db->rehash on, then all of table 1's. */
static cf_filter_t *live_bucket(const ks_db_t *db, size_t i)
{
    size_t n0 = db->t[0].n - db->rehash;
    return i < n0 ? db->t[0].b[db->rehash + i] : db->t[1].b[i - n0];
}

bool ks_random(const ks_db_t *db, uint64_t r, const void **key, size_t *len)
{
    if (db->size == 0)
        return false;
    /* The load is at least 1/8 but for a table at its smallest (and while
     * a resize started by a change of load is under way, both tables
     * together hold as many keys as one did), so a run of empty buckets
     * is short on average. */
    size_t live = db->t[0].n - db->rehash + db->t[1].n;
    /* Buckets drawn at random until one holds keys, as Redis's dict does:
     * walking on from an empty bucket to the next full one would favour
     * the keys after a run of empty ones, and mid-resize table 1 has long
     * runs of them (the buckets not yet moved into). The walk is only the
     * fallback of an unlucky run of draws. */
    size_t i = (size_t)(r % live);
    for (int tries = 0; live_bucket(db, i) == NULL && tries < 1000; tries++) {
        r ^= r << 13;
        r ^= r >> 7;
        r ^= r << 17;
        i = (size_t)(r % live);
    }
    while (live_bucket(db, i) == NULL)
        i = i + 1 == live ? 0 : i + 1;
    size_t n = 0;
    for (const cf_filter_t *f = live_bucket(db, i); f != NULL;
         f = entry_next(f))
        n++;
    const cf_filter_t *f = live_bucket(db, i);
    for (size_t k = (size_t)((r >> 32) % n); k > 0; k--)
        f = entry_next(f);
    *key = entry_key(f, len);
    return true;
}

size_t ks_size(const ks_db_t *db)
{
    return db->size;
}

/* Makes db an empty table: nb (KS_MIN_BUCKETS buckets) as table 0, or
 * the table 0 it has (emptied) when nb is NULL; its old tables are freed
 * or taken by the caller. */
static void set_empty(ks_db_t *db, cf_filter_t **nb)
{
    if (nb != NULL)
        db->t[0] = (ks_table_t){nb, KS_MIN_BUCKETS};
    db->t[1] = (ks_table_t){NULL, 0};
    db->rehash = 0;
    db->size = 0;
    db->nexpires = 0;
    db->expire_cursor = 0;
    db->avg_ttl = 0;
    db->hit = NULL;
    db->bytes = sizeof(*db) + db->t[0].n * sizeof(db->t[0].b[0]);
}

void ks_flush(ks_db_t *db)
{
    free_chains(db);
    cf_filter_t **nb = calloc(KS_MIN_BUCKETS, sizeof(nb[0]));
    if (nb != NULL)
        free(db->t[0].b);
    set_empty(db, nb);
}

ks_db_t *ks_take_all(ks_db_t *db)
{
    ks_db_t *out = calloc(1, sizeof(*out));
    cf_filter_t **nb = calloc(KS_MIN_BUCKETS, sizeof(nb[0]));
    if (out == NULL || nb == NULL) {
        free(out);
        free(nb);
        return NULL;
    }
    *out = *db;
    out->hit = NULL;
    set_empty(db, nb);
    return out;
}

cf_filter_t *ks_remove(ks_db_t *db, const void *key, size_t len)
{
    step(db);
    uint8_t *link = find_link(db, key, len, ks_hash(db, key, len));
    if (get_ptr(link) == NULL)
        return NULL;
    cf_filter_t *f = unlink_filter(db, link);
    maybe_resize(db);
    return f;
}

uint64_t ks_removed_bytes(const cf_filter_t *f)
{
    return counted(f);
}

void ks_free_removed(cf_filter_t *f)
{
    free_filter(f);
}

int ks_del(ks_db_t *db, const void *key, size_t len)
{
    cf_filter_t *f = ks_remove(db, key, len);
    if (f == NULL)
        return 0;
    free_filter(f);
    return 1;
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
    return cf_size_bytes(f) + entry_bytes(f) + sizeof(cf_filter_t *);
}

bool ks_table_stats(const ks_db_t *db, int table, ks_table_stats_t *st)
{
    memset(st, 0, sizeof(*st));
    if (table < 0 || table > 1 || db->t[table].b == NULL)
        return false;
    const ks_table_t *t = &db->t[table];
    st->buckets = t->n;
    st->moved = table == 0 ? db->rehash : 0;
    for (size_t i = 0; i < t->n; i++) {
        size_t len = 0;
        for (const cf_filter_t *f = t->b[i]; f != NULL; f = entry_next(f))
            len++;
        st->keys += len;
        st->used += len > 0;
        if (len > st->max_chain)
            st->max_chain = len;
        st->chains[len < KS_CHAIN_STATS ? len : KS_CHAIN_STATS - 1]++;
    }
    return true;
}

int ks_foreach(const ks_db_t *db, ks_each_fn *fn, void *ctx)
{
    for (int t = 0; t < 2; t++)
        for (size_t i = 0; i < db->t[t].n; i++)
            for (const cf_filter_t *f = db->t[t].b[i]; f != NULL;
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

/* The cursor after v for a table of mask+1 buckets: the bits under mask
 * incremented in reverse order (the bits above it set, so that the carry
 * falls through them). */
static uint64_t next_cursor(uint64_t v, uint64_t mask)
{
    return rev64(rev64(v | ~mask) + 1);
}

/* Calls visit on the head of every bucket cursor v names (one when no
 * resize is under way; during one, the smaller table's bucket and every
 * bucket of the bigger one it expands to) and returns the next cursor.
 * visit may unlink filters of the bucket it is given, nothing else. */
typedef void visit_fn(void *ctx, uint8_t *head);
static uint64_t visit_cursor(const ks_db_t *db, uint64_t v, visit_fn *visit,
                             void *ctx)
{
    const ks_table_t *small = &db->t[0], *big = &db->t[1];
    if (!rehashing(db)) {
        visit(ctx, (uint8_t *)&small->b[v & (small->n - 1)]);
        return next_cursor(v, small->n - 1);
    }
    if (small->n > big->n) {
        small = &db->t[1];
        big = &db->t[0];
    }
    uint64_t m0 = small->n - 1, m1 = big->n - 1;
    visit(ctx, (uint8_t *)&small->b[v & m0]);
    /* the bigger table's buckets whose low bits are v's under m0 */
    do {
        visit(ctx, (uint8_t *)&big->b[v & m1]);
        v = next_cursor(v, m1);
    } while ((v & (m0 ^ m1)) != 0);
    return v;
}

typedef struct scan_ctx {
    ks_each_fn *fn;
    void *ctx;
    size_t seen;
} scan_ctx_t;

static void scan_bucket(void *ctx, uint8_t *head)
{
    scan_ctx_t *sc = ctx;
    for (const cf_filter_t *f = get_ptr(head); f != NULL; f = entry_next(f)) {
        size_t len;
        const uint8_t *key = entry_key(f, &len);
        sc->fn(sc->ctx, key, len, f);
        sc->seen++;
    }
}

uint64_t ks_scan(const ks_db_t *db, uint64_t cursor, size_t count,
                 ks_each_fn *fn, void *ctx)
{
    scan_ctx_t sc = {fn, ctx, 0};
    /* Empty buckets cost work too: bound them so one call stays short. */
    size_t budget =
        count == 0 ? 10 : (count > SIZE_MAX / 10 ? SIZE_MAX : count * 10);
    if (count == 0)
        count = 1;
    do {
        cursor = visit_cursor(db, cursor, scan_bucket, &sc);
        budget--;
    } while (cursor != 0 && sc.seen < count && budget > 0);
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
    step(db);
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
    step(db);
    uint8_t *link = find_link(db, key, len, ks_hash(db, key, len));
    cf_filter_t *f = get_ptr(link);
    if (f == NULL || !entry_expires(f))
        return 0;
    int rc = reshape(db, link, key, len, false, -1);
    return rc < 0 ? rc : 1;
}

typedef struct expire_ctx {
    ks_db_t *db;
    int64_t now;
    ks_expired_fn *fn;
    void *ctx;
    ks_expire_stats_t *st;
} expire_ctx_t;

static void expire_bucket(void *ctx, uint8_t *link)
{
    expire_ctx_t *e = ctx;
    cf_filter_t *f;
    /* every bucket counts: during a resize one cursor step visits a
     * bucket of the smaller table and all its expansions in the bigger */
    e->st->buckets++;
    while ((f = get_ptr(link)) != NULL) {
        if (!entry_expires(f)) {
            link = field(f, E_NEXT);
            continue;
        }
        int64_t when = entry_when(f);
        e->st->sampled++;
        if (when > e->now) {
            e->st->ttl_sum += (uint64_t)(when - e->now);
            link = field(f, E_NEXT);
            continue;
        }
        /* unlinked but not yet freed: the key bytes are still there
         * for fn, and link now names the next filter */
        unlink_filter(e->db, link);
        size_t klen;
        const uint8_t *k = entry_key(f, &klen);
        if (!e->fn(e->ctx, k, klen, f))
            free_filter(f);
        e->st->expired++;
    }
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
    expire_ctx_t e = {db, now, fn, ctx, st};
    uint64_t cursor = db->expire_cursor;
    do {
        cursor = visit_cursor(db, cursor, expire_bucket, &e);
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
    maybe_resize(db);
}

uint64_t ks_avg_ttl(const ks_db_t *db)
{
    return db->nexpires == 0 ? 0 : db->avg_ttl;
}
