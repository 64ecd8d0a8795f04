/*
 * heap.c - see heap.h.
 */
#include "heap.h"

#include <malloc.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cf.h"

#ifdef CUCKOOD_JEMALLOC
#include <jemalloc/jemalloc.h>
#endif

/* Tables of this size and more are mapped by the filter core: they keep
 * transparent huge pages (lookups in a large table miss the TLB
 * otherwise) and go back to the kernel the moment they are freed. */
#define HEAP_MAP_MIN ((size_t)2 << 20)
/* When the keyspace falls below a quarter of its size at the last purge
 * (and by 4 MiB at least), the freed pages go back at once. */
#define HEAP_PURGE_DROP ((uint64_t)4 << 20)
#define HEAP_PURGE_SHARE 4
/* Once the keyspace's size has not changed for this long, every freed page
 * goes back. Not sooner: giving a page back (madvise, a TLB shootdown) and
 * faulting it in again costs far more than reusing it, and a keyspace
 * that churns reuses what it freed a moment ago. */
#define HEAP_QUIET_NS ((uint64_t)1000000000)

/* heap_stats_recent()'s figures wait for a still keyspace, but no longer
 * than this. */
#define HEAP_STATS_STALE_NS ((uint64_t)10000000000)

static pthread_mutex_t recent_lock = PTHREAD_MUTEX_INITIALIZER;
static heap_stats_t recent; /* heap_stats_recent()'s figures */
static bool recent_taken;   /* recent holds figures */
static uint64_t recent_ns;  /* when the cron last asked for them */
static uint64_t purge_mark; /* keyspace bytes at the last purge, or peak */
static uint64_t last_used;  /* keyspace bytes at the last cron */
static uint64_t changed_ns; /* when it last changed; 0 once purged */

#ifdef CUCKOOD_JEMALLOC

/* Read by jemalloc when it initialises itself (before main()); the
 * MALLOC_CONF environment variable still overrides it. The cron drives the
 * decay (heap_decay()), so an idle server gives pages back without a
 * background thread, whose purges cost a TLB shootdown across CPUs each;
 * with muzzy_decay_ms 0 pages are returned with MADV_DONTNEED at once
 * rather than MADV_FREE, which leaves them in RSS until the kernel needs
 * them. */
const char *malloc_conf = "dirty_decay_ms:5000,muzzy_decay_ms:0";

static char name[48];

/* calloc() of a large size that reuses freed pages has jemalloc zero them
 * with madvise(MADV_DONTNEED), and each page faults in again: a TLB
 * shootdown and a fault per page where writing zeros costs a memset. The
 * tables are zeroed here instead. */
static void *table_calloc(size_t n, size_t size)
{
    if (size != 0 && n > SIZE_MAX / size)
        return NULL;
    void *p = malloc(n * size);
    if (p != NULL)
        memset(p, 0, n * size);
    return p;
}

void heap_init(void)
{
    static const cf_allocator_t je = {malloc, table_calloc, realloc, free};
    cf_set_allocator(&je);
    cf_set_map_min(HEAP_MAP_MIN);
    const char *v = NULL;
    size_t len = sizeof(v);
    if (mallctl("version", &v, &len, NULL, 0) != 0 || v == NULL)
        v = "?";
    /* "5.3.0-0-g54eaed1d..." -> "jemalloc-5.3.0", as Redis names it. */
    size_t n = strcspn(v, "-");
    snprintf(name, sizeof(name), "jemalloc-%.*s", (int)n, v);
}

const char *heap_name(void)
{
    return name[0] != '\0' ? name : "jemalloc";
}

static uint64_t stat_of(const char *what)
{
    size_t v = 0, len = sizeof(v);
    if (mallctl(what, &v, &len, NULL, 0) != 0)
        return 0;
    return v;
}

void heap_stats(heap_stats_t *st)
{
    uint64_t epoch = 1;
    size_t len = sizeof(epoch);
    memset(st, 0, sizeof(*st));
    /* The statistics are a snapshot taken when the epoch advances. */
    if (mallctl("epoch", &epoch, &len, &epoch, len) != 0)
        return;
    st->known = st->has_resident = true;
    st->allocated = stat_of("stats.allocated");
    st->active = stat_of("stats.active");
    st->resident = stat_of("stats.resident");
}

static void arenas_do(const char *what)
{
    char cmd[64];
    snprintf(cmd, sizeof(cmd), "arena.%u.%s", (unsigned)MALLCTL_ARENAS_ALL,
             what);
    (void)mallctl(cmd, NULL, NULL, NULL, 0);
}

void heap_purge(void)
{
    arenas_do("purge");
}

/* The decay's share of the pages freed since, purged from the cron on the
 * loop's own thread. */
static void heap_decay(void)
{
    arenas_do("decay");
}

typedef struct text {
    char *p;
    size_t len, cap;
    int failed;
} text_t;

static void text_add(void *ctx, const char *s)
{
    text_t *t = ctx;
    size_t n = strlen(s);
    if (t->failed)
        return;
    if (t->len + n + 1 > t->cap) {
        size_t cap = t->cap ? t->cap : 4096;
        while (cap < t->len + n + 1)
            cap *= 2;
        char *p = realloc(t->p, cap);
        if (p == NULL) {
            t->failed = 1;
            return;
        }
        t->p = p;
        t->cap = cap;
    }
    memcpy(t->p + t->len, s, n + 1);
    t->len += n;
}

char *heap_malloc_stats(void)
{
    text_t t = {0};
    malloc_stats_print(text_add, &t, NULL);
    if (t.failed || t.p == NULL) {
        free(t.p);
        return NULL;
    }
    return t.p;
}

#else /* glibc's malloc */

/* Allocations of this size and more are mapped on their own and unmapped
 * when freed. Fixing it also stops glibc from raising it after each large
 * free (up to 32 MiB), which is what moved mid-size tables into the heap,
 * where a long-lived neighbour pins the freed ones. */
#define HEAP_MMAP_THRESHOLD (64 << 10)

void heap_init(void)
{
    (void)mallopt(M_MMAP_THRESHOLD, HEAP_MMAP_THRESHOLD);
    /* Fixed as well (setting it also stops its adjustment): free space at
     * the top of the heap beyond 1 MiB goes back at once. */
    (void)mallopt(M_TRIM_THRESHOLD, 1 << 20);
    /* No fastbins: a freed small chunk merges with its free neighbours at
     * once (tcache still serves the hot sizes without a lock). With
     * fastbins, the 2M small filters of a FLUSHALL ASYNC sit unmerged on
     * their lists until some call walks them all at once on whichever
     * thread makes it: the next large malloc (malloc_consolidate()),
     * malloc_trim() or mallinfo2(), each a pause of a second on the loop
     * while the thread frees. */
    (void)mallopt(M_MXFAST, 0);
    cf_set_allocator(NULL);
    cf_set_map_min(HEAP_MAP_MIN);
}

const char *heap_name(void)
{
    return "libc";
}

void heap_stats(heap_stats_t *st)
{
    memset(st, 0, sizeof(*st));
    /* Under a sanitizer glibc's heap is not the one in use, and these
     * figures are near zero: the sanitizer builds are not for reading
     * memory figures. */
    struct mallinfo2 mi = mallinfo2();
    st->known = true;
    st->allocated = (uint64_t)mi.uordblks + (uint64_t)mi.hblkhd;
    st->active = (uint64_t)mi.arena + (uint64_t)mi.hblkhd;
}

void heap_purge(void)
{
    /* Also gives back whole free pages inside the heap, not only its
     * top. */
    (void)malloc_trim(0);
}

char *heap_malloc_stats(void)
{
    return NULL;
}

static void heap_decay(void)
{
}

#endif

uint64_t heap_rss(void)
{
    FILE *fp = fopen("/proc/self/statm", "re");
    unsigned long long size = 0, res = 0;
    if (fp == NULL)
        return 0;
    int n = fscanf(fp, "%llu %llu", &size, &res);
    fclose(fp);
    long page = sysconf(_SC_PAGESIZE);
    if (n != 2 || page <= 0)
        return 0;
    return (uint64_t)res * (uint64_t)page;
}

static uint64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

void heap_take_stats(void)
{
    heap_stats_t st;
    heap_stats(&st);
    pthread_mutex_lock(&recent_lock);
    recent = st;
    recent_taken = true;
    pthread_mutex_unlock(&recent_lock);
}

void heap_stats_recent(heap_stats_t *st)
{
    pthread_mutex_lock(&recent_lock);
    bool taken = recent_taken;
    *st = recent;
    pthread_mutex_unlock(&recent_lock);
    if (!taken) {
        heap_take_stats();
        heap_stats_recent(st);
    }
}

int heap_cron(uint64_t used, bool freeing)
{
    uint64_t now = now_ns();
    int due = 0;
    heap_decay();
    if (freeing)
        return 0;
    /* Both walks wait for a still keyspace: while keys are being deleted
     * (an expiry sweep, a mass DEL) the heap is full of small holes to
     * walk, under the lock the loop's next free takes. */
    bool still = used == last_used;
    uint64_t age = now - recent_ns;
    if (age >= (uint64_t)HEAP_STATS_EVERY_MS * 1000000u &&
        (still || age >= HEAP_STATS_STALE_NS)) {
        due |= HEAP_DUE_STATS;
        recent_ns = now;
    }
    if (!still) {
        last_used = used;
        changed_ns = now;
    }
    if (used > purge_mark)
        purge_mark = used;
    bool quiet = changed_ns != 0 && now - changed_ns >= HEAP_QUIET_NS;
    bool fell = still && purge_mark - used >= HEAP_PURGE_DROP &&
                used < purge_mark / HEAP_PURGE_SHARE;
    if (quiet || fell) {
        due |= HEAP_DUE_PURGE;
        purge_mark = used;
        changed_ns = 0;
    }
    return due;
}
