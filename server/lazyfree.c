/*
 * lazyfree.c - see lazyfree.h.
 *
 * A job is a taken database or one removed filter, in a singly linked FIFO
 * under one mutex; the thread sleeps on a condition variable while it is
 * empty. The counters are atomics so that INFO and the memory checks read
 * them without the lock: pending counts go up before a job is queued and
 * down after it is freed, so used_memory never shows memory as given back
 * before it is.
 */
#include "lazyfree.h"

#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <time.h>

#include "heap.h"

typedef struct job {
    struct job *next;
    ks_db_t *db;      /* or */
    cf_filter_t *f;   /* one filter, or */
    void *block;      /* one block (all three NULL: heap work) */
    uint64_t objects; /* filters it holds */
    uint64_t bytes;   /* what they were counted as */
} job_t;

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t wake = PTHREAD_COND_INITIALIZER;
static job_t *head, *tail;
static bool running, stopping, held;
static pthread_t thread;

static _Atomic uint64_t pending_objects, pending_bytes, freed_objects;
static atomic_int heap_queued; /* HEAP_DUE_* bits the queued job runs */
/* The slowest job and purge (ms) since lazyfree_take_slowest(). */
static _Atomic uint64_t slowest_job_ms, slowest_purge_ms;

static uint64_t mono_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static void note_slowest(_Atomic uint64_t *slot, uint64_t ms)
{
    uint64_t was = atomic_load(slot);
    while (ms > was && !atomic_compare_exchange_weak(slot, &was, ms)) {
    }
}

static void run_job(job_t *j)
{
    uint64_t t0 = mono_ns();
    if (j->db != NULL) {
        ks_db_free(j->db);
    } else if (j->f != NULL) {
        ks_free_removed(j->f);
    } else if (j->block != NULL) {
        free(j->block);
    } else {
        int what = atomic_exchange(&heap_queued, 0);
        if (what & HEAP_DUE_STATS)
            heap_take_stats();
        if (what & HEAP_DUE_PURGE) {
            t0 = mono_ns();
            heap_purge();
            note_slowest(&slowest_purge_ms, (mono_ns() - t0) / 1000000);
        }
        return;
    }
    note_slowest(&slowest_job_ms, (mono_ns() - t0) / 1000000);
}

/* Takes a finished job off the counters. */
static void done(const job_t *j, bool counted_freed)
{
    atomic_fetch_sub(&pending_objects, j->objects);
    atomic_fetch_sub(&pending_bytes, j->bytes);
    if (counted_freed)
        atomic_fetch_add(&freed_objects, j->objects);
}

static void *lazyfree_main(void *arg)
{
    (void)arg;
    pthread_mutex_lock(&lock);
    for (;;) {
        while ((head == NULL || held) && !stopping)
            pthread_cond_wait(&wake, &lock);
        if (head == NULL)
            break; /* stopping, and everything is freed */
        job_t *j = head;
        head = j->next;
        if (head == NULL)
            tail = NULL;
        pthread_mutex_unlock(&lock);
        run_job(j);
        done(j, true);
        free(j);
        pthread_mutex_lock(&lock);
    }
    pthread_mutex_unlock(&lock);
    return NULL;
}

int lazyfree_start(void)
{
    if (running)
        return 0;
    stopping = false;
    int rc = pthread_create(&thread, NULL, lazyfree_main, NULL);
    if (rc != 0)
        return -rc;
    running = true;
    return 0;
}

void lazyfree_stop(void)
{
    if (!running)
        return;
    pthread_mutex_lock(&lock);
    stopping = true;
    pthread_cond_signal(&wake);
    pthread_mutex_unlock(&lock);
    pthread_join(thread, NULL);
    running = false;
}

/* Queues j, or runs it here when there is no thread or no memory for the
 * job. */
static void submit(job_t j)
{
    atomic_fetch_add(&pending_objects, j.objects);
    atomic_fetch_add(&pending_bytes, j.bytes);
    job_t *q = running ? malloc(sizeof(*q)) : NULL;
    if (q == NULL) {
        run_job(&j);
        done(&j, false);
        return;
    }
    *q = j;
    q->next = NULL;
    pthread_mutex_lock(&lock);
    if (tail != NULL)
        tail->next = q;
    else
        head = q;
    tail = q;
    pthread_cond_signal(&wake);
    pthread_mutex_unlock(&lock);
}

void lazyfree_db(ks_db_t *db)
{
    submit((job_t){.db = db, .objects = ks_size(db), .bytes = ks_bytes(db)});
}

bool lazyfree_filter(cf_filter_t *f)
{
    uint64_t bytes = ks_removed_bytes(f);
    if (bytes < LAZYFREE_MIN_BYTES || !running) {
        ks_free_removed(f);
        return false;
    }
    submit((job_t){.f = f, .objects = 1, .bytes = bytes});
    return true;
}

void lazyfree_block(void *p, uint64_t bytes)
{
    if (bytes < LAZYFREE_MIN_BYTES || !running) {
        free(p);
        return;
    }
    submit((job_t){.block = p, .bytes = bytes});
}

void lazyfree_hold(bool on)
{
    pthread_mutex_lock(&lock);
    held = on;
    pthread_cond_signal(&wake);
    pthread_mutex_unlock(&lock);
}

void lazyfree_heap(int due)
{
    if (due == 0 || atomic_fetch_or(&heap_queued, due) != 0)
        return; /* one is waiting: it does this too */
    submit((job_t){0});
}

void lazyfree_take_slowest(uint64_t *job_ms, uint64_t *purge_ms)
{
    *job_ms = atomic_exchange(&slowest_job_ms, 0);
    *purge_ms = atomic_exchange(&slowest_purge_ms, 0);
}

uint64_t lazyfree_pending_objects(void)
{
    return atomic_load(&pending_objects);
}

uint64_t lazyfree_pending_bytes(void)
{
    return atomic_load(&pending_bytes);
}

uint64_t lazyfree_freed_objects(void)
{
    return atomic_load(&freed_objects);
}

void lazyfree_reset_stats(void)
{
    atomic_store(&freed_objects, 0);
}
