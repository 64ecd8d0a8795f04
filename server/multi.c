/*
 * multi.c - see multi.h.
 *
 * The watched keys live in one hash table for the server, keyed by
 * database and key; each entry lists its watchers and each client lists
 * its watches, so that a change finds the clients of a key, and UNWATCH the
 * keys of a client, without a search. A table entry goes with its last
 * watcher.
 */
#include "multi.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <xxhash.h>

#include "argv.h"
#include "cmd.h"
#include "errtext.h"
#include "expire.h"
#include "reply.h"

/* Queued commands prefetched at a time by EXEC, as the read path looks
 * ahead in a pipeline. */
#define MULTI_PEEK 32
/* The longest refusal text EXEC's abort repeats (Redis cuts the names it
 * quotes near 128 bytes, so the refusals are shorter). */
#define MULTI_ABORT_MAX 512

#define EXECABORT_TEXT                                                         \
    "EXECABORT Transaction discarded because of previous errors."

typedef struct mkey mkey_t;

/* One client watching one key: in the key's list and in the client's. */
typedef struct mwatch {
    mkey_t *key;
    client_t *c;
    struct mwatch *kprev, *knext;
    struct mwatch *cnext;
} mwatch_t;

struct mkey {
    mkey_t *next; /* hash chain */
    uint64_t hash;
    int dbnum;
    mwatch_t *watchers;
    size_t len;
    char bytes[];
};

struct multi {
    mkey_t **slots;
    size_t nslots; /* a power of two */
    size_t nkeys;
};

typedef struct queued {
    const void *cmd; /* the dispatcher's handle */
    argv_t *a;       /* in the client's arena */
} queued_t;

/* The queued copies live in an arena per client: blocks that are freed
 * together when the transaction ends, so queuing a command costs no
 * allocation of its own but once per block. One block of the usual size
 * is kept for the next transaction. */
typedef struct qblock {
    struct qblock *next; /* the block filled before this one */
    size_t used, cap;    /* bytes of data */
    max_align_t data[];
} qblock_t;
#define QBLOCK_BYTES (16 * 1024 - sizeof(qblock_t))

struct multi_client {
    bool active;     /* between MULTI and EXEC/DISCARD */
    bool dirty_exec; /* a command was refused while queuing: EXECABORT */
    bool dirty_cas;  /* a watched key changed: EXEC answers nil */
    unsigned flags;  /* the OR of the queued commands' flags */
    queued_t *queue;
    size_t n, cap;
    size_t bytes;    /* of the queued copies */
    qblock_t *arena; /* the block being filled, or NULL */
    mwatch_t *watches;
};

/* ---- the watch table --------------------------------------------------- */

static uint64_t key_hash(int dbnum, const void *key, size_t len)
{
    return XXH3_64bits_withSeed(key, len, (uint64_t)dbnum);
}

static mkey_t **key_slot(struct multi *m, int dbnum, const void *key,
                         size_t len, uint64_t h)
{
    mkey_t **p = &m->slots[h & (m->nslots - 1)];
    while (*p != NULL &&
           !((*p)->hash == h && (*p)->dbnum == dbnum && (*p)->len == len &&
             memcmp((*p)->bytes, key, len) == 0))
        p = &(*p)->next;
    return p;
}

/* Doubles the table; on failure it stays as it is (chains grow longer). */
static void table_grow(struct multi *m)
{
    size_t n = m->nslots * 2;
    mkey_t **slots = calloc(n, sizeof(slots[0]));
    if (slots == NULL)
        return;
    for (size_t i = 0; i < m->nslots; i++) {
        mkey_t *k = m->slots[i], *next;
        for (; k != NULL; k = next) {
            next = k->next;
            k->next = slots[k->hash & (n - 1)];
            slots[k->hash & (n - 1)] = k;
        }
    }
    free(m->slots);
    m->slots = slots;
    m->nslots = n;
}

static void table_remove(struct multi *m, mkey_t *k)
{
    mkey_t **p = &m->slots[k->hash & (m->nslots - 1)];
    while (*p != k)
        p = &(*p)->next;
    *p = k->next;
    m->nkeys--;
    free(k);
}

/* Marks every client watching k: its EXEC will answer nil. */
static void key_touch(mkey_t *k)
{
    for (mwatch_t *w = k->watchers; w != NULL; w = w->knext)
        w->c->mstate->dirty_cas = true;
}

int multi_init(server_t *s)
{
    struct multi *m = calloc(1, sizeof(*m));
    if (m == NULL)
        return -ENOMEM;
    m->nslots = 16;
    if ((m->slots = calloc(m->nslots, sizeof(m->slots[0]))) == NULL) {
        free(m);
        return -ENOMEM;
    }
    s->multi = m;
    return 0;
}

void multi_free(server_t *s)
{
    struct multi *m = s->multi;
    if (m == NULL)
        return;
    /* Clients are freed first, and each takes its watches with it. */
    for (size_t i = 0; i < m->nslots; i++) {
        mkey_t *k = m->slots[i], *next;
        for (; k != NULL; k = next) {
            next = k->next;
            free(k);
        }
    }
    free(m->slots);
    free(m);
    s->multi = NULL;
}

void multi_on_key_changed(server_t *s, int dbnum, const void *key, size_t len)
{
    struct multi *m = s->multi;
    if (m == NULL || m->nkeys == 0)
        return;
    mkey_t *k = *key_slot(m, dbnum, key, len, key_hash(dbnum, key, len));
    if (k != NULL)
        key_touch(k);
}

void multi_on_db_changing(server_t *s, int dbnum)
{
    struct multi *m = s->multi;
    if (m == NULL || m->nkeys == 0)
        return;
    /* As Redis: a flush touches only the watched keys that exist. */
    for (size_t i = 0; i < m->nslots; i++)
        for (mkey_t *k = m->slots[i]; k != NULL; k = k->next)
            if (k->dbnum == dbnum && ks_get(s->dbs[dbnum], k->bytes, k->len))
                key_touch(k);
}

void multi_on_dbs_swapping(server_t *s, int a, int b)
{
    struct multi *m = s->multi;
    if (m == NULL || m->nkeys == 0)
        return;
    /* A watched key of either database changes when it exists on either
     * side: it goes, or another value takes its place. */
    for (size_t i = 0; i < m->nslots; i++)
        for (mkey_t *k = m->slots[i]; k != NULL; k = k->next)
            if ((k->dbnum == a || k->dbnum == b) &&
                (ks_get(s->dbs[a], k->bytes, k->len) != NULL ||
                 ks_get(s->dbs[b], k->bytes, k->len) != NULL))
                key_touch(k);
}

/* ---- a client's state -------------------------------------------------- */

static struct multi_client *client_state(client_t *c)
{
    if (c->mstate == NULL)
        c->mstate = calloc(1, sizeof(*c->mstate));
    return c->mstate;
}

/* 0, or -ENOMEM. A key c watches already (in its database) is kept once. */
static int watch_key(client_t *c, struct multi_client *mc, const arg_t *key)
{
    for (mwatch_t *w = mc->watches; w != NULL; w = w->cnext)
        if (w->key->dbnum == c->dbnum && w->key->len == key->len &&
            memcmp(w->key->bytes, key->ptr, key->len) == 0)
            return 0;
    struct multi *m = c->srv->multi;
    mwatch_t *w = malloc(sizeof(*w));
    if (w == NULL)
        return -ENOMEM;
    uint64_t h = key_hash(c->dbnum, key->ptr, key->len);
    mkey_t **p = key_slot(m, c->dbnum, key->ptr, key->len, h);
    mkey_t *k = *p;
    if (k == NULL) {
        if ((k = malloc(sizeof(*k) + key->len + 1)) == NULL) {
            free(w);
            return -ENOMEM;
        }
        k->hash = h;
        k->dbnum = c->dbnum;
        k->watchers = NULL;
        k->len = key->len;
        memcpy(k->bytes, key->ptr, key->len);
        k->bytes[key->len] = '\0';
        k->next = NULL;
        *p = k;
        if (++m->nkeys > m->nslots)
            table_grow(m);
    }
    w->key = k;
    w->c = c;
    w->kprev = NULL;
    w->knext = k->watchers;
    if (k->watchers != NULL)
        k->watchers->kprev = w;
    k->watchers = w;
    w->cnext = mc->watches;
    mc->watches = w;
    return 0;
}

static void unwatch_all(client_t *c, struct multi_client *mc)
{
    struct multi *m = c->srv->multi;
    mwatch_t *w = mc->watches, *next;
    for (; w != NULL; w = next) {
        next = w->cnext;
        mkey_t *k = w->key;
        if (w->kprev != NULL)
            w->kprev->knext = w->knext;
        else
            k->watchers = w->knext;
        if (w->knext != NULL)
            w->knext->kprev = w->kprev;
        if (k->watchers == NULL)
            table_remove(m, k);
        free(w);
    }
    mc->watches = NULL;
}

/* size bytes from mc's arena, aligned for anything; NULL when out of
 * memory. */
static void *arena_alloc(struct multi_client *mc, size_t size)
{
    size_t align = sizeof(max_align_t);
    if (size > SIZE_MAX - align - sizeof(qblock_t))
        return NULL;
    size = (size + align - 1) / align * align;
    qblock_t *b = mc->arena;
    if (b == NULL || b->cap - b->used < size) {
        size_t cap = size > QBLOCK_BYTES ? size : QBLOCK_BYTES;
        qblock_t *nb = malloc(sizeof(*nb) + cap);
        if (nb == NULL)
            return NULL;
        nb->next = b;
        nb->used = 0;
        nb->cap = cap;
        mc->arena = b = nb;
    }
    void *p = (unsigned char *)b->data + b->used;
    b->used += size;
    return p;
}

/* Frees the blocks from b on, but keeps one of the usual size for the
 * next transaction: the block mc->arena then is, or NULL. */
static void arena_release(struct multi_client *mc, qblock_t *b)
{
    qblock_t *keep = NULL;
    while (b != NULL) {
        qblock_t *next = b->next;
        if (keep == NULL && b->cap == QBLOCK_BYTES && mc->arena == NULL) {
            keep = b;
            keep->next = NULL;
            keep->used = 0;
        } else {
            free(b);
        }
        b = next;
    }
    if (mc->arena == NULL)
        mc->arena = keep;
}

/* Leaves MULTI and forgets the watched keys (Redis's discardTransaction). */
static void discard(client_t *c, struct multi_client *mc)
{
    free(mc->queue);
    qblock_t *blocks = mc->arena;
    mc->arena = NULL;
    arena_release(mc, blocks);
    mc->queue = NULL;
    mc->n = mc->cap = mc->bytes = 0;
    mc->flags = 0;
    mc->active = mc->dirty_exec = mc->dirty_cas = false;
    unwatch_all(c, mc);
}

bool multi_active(const client_t *c)
{
    return c->mstate != NULL && c->mstate->active;
}

unsigned multi_queued_flags(const client_t *c)
{
    return c->mstate != NULL && c->mstate->active ? c->mstate->flags : 0;
}

void multi_queue(client_t *c, const void *cmd, unsigned flags, int argc,
                 const arg_t *argv)
{
    struct multi_client *mc = c->mstate;
    /* A transaction that cannot run keeps no memory. */
    if (!mc->dirty_exec && !mc->dirty_cas) {
        if (mc->n == mc->cap) {
            size_t cap = mc->cap ? mc->cap * 2 : 8;
            queued_t *q = realloc(mc->queue, cap * sizeof(q[0]));
            if (q == NULL) {
                resp_add_error(&c->out, ERRTEXT_NOMEM);
                mc->dirty_exec = true;
                return;
            }
            mc->queue = q;
            mc->cap = cap;
        }
        size_t size = argv_size(argc, argv);
        void *mem = size == 0 ? NULL : arena_alloc(mc, size);
        if (mem == NULL) {
            resp_add_error(&c->out, ERRTEXT_NOMEM);
            mc->dirty_exec = true;
            return;
        }
        argv_t *a = argv_place(mem, size, argc, argv);
        mc->queue[mc->n].cmd = cmd;
        mc->queue[mc->n++].a = a;
        mc->bytes += a->size;
        mc->flags |= flags;
    }
    resp_add_raw(&c->out, "+QUEUED\r\n", 9); /* the same in RESP3 */
}

void multi_rejected(client_t *c, const cmd_def_t *top, size_t reply_at)
{
    struct multi_client *mc = c->mstate;
    if (top != NULL && multi_is_exec(top)) {
        /* Redis's execCommandAbort(): the refusal, without its "ERR " code,
         * after the EXECABORT code; the transaction is gone. */
        const char *err = c->out.buf + reply_at;
        size_t len = c->out.len - reply_at;
        if (len >= 3 && err[0] == '-') {
            char text[MULTI_ABORT_MAX];
            err++;
            len -= 3; /* '-' and CRLF */
            if (len >= 4 && memcmp(err, "ERR ", 4) == 0) {
                err += 4;
                len -= 4;
            }
            if (len >= sizeof(text))
                len = sizeof(text) - 1;
            memcpy(text, err, len);
            text[len] = '\0';
            c->out.len = reply_at;
            resp_add_errorf(&c->out,
                            "EXECABORT Transaction discarded because of: %s",
                            text);
        }
        if (mc != NULL)
            discard(c, mc);
        return;
    }
    if (mc != NULL && mc->active)
        mc->dirty_exec = true;
}

size_t multi_queued_bytes(const client_t *c)
{
    return c->mstate != NULL ? c->mstate->bytes : 0;
}

long multi_count(const client_t *c)
{
    return multi_active(c) ? (long)c->mstate->n : -1;
}

void multi_reset(client_t *c)
{
    if (c->mstate != NULL)
        discard(c, c->mstate);
}

void multi_client_free(client_t *c)
{
    if (c->mstate == NULL)
        return;
    discard(c, c->mstate);
    free(c->mstate->arena); /* the block kept for the next one */
    free(c->mstate);
    c->mstate = NULL;
}

/* ---- commands ---------------------------------------------------------- */

/* c's state for a command that may not run inside MULTI, or NULL after
 * replying err (inside MULTI) or the out-of-memory error. */
static struct multi_client *outside_multi(client_t *c, const char *err)
{
    if (multi_active(c)) {
        resp_add_error(&c->out, err);
        return NULL;
    }
    struct multi_client *mc = client_state(c);
    if (mc == NULL)
        resp_add_error(&c->out, ERRTEXT_NOMEM);
    return mc;
}

void multi_proc(client_t *c, int argc, const arg_t *argv)
{
    struct multi_client *mc =
        outside_multi(c, "ERR MULTI calls can not be nested");
    if (mc == NULL)
        return;
    mc->active = true;
    reply_ok(c);
}

/* Runs the queue in one go: no other client's command can come between
 * two of its commands, since the loop runs one client at a time. */
void multi_exec_proc(client_t *c, int argc, const arg_t *argv)
{
    struct multi_client *mc = c->mstate;
    if (mc == NULL || !mc->active) {
        resp_add_error(&c->out, "ERR EXEC without MULTI");
        return;
    }
    /* A watched key that has passed its time since WATCH dooms EXEC, as in
     * Redis 7: the lookup reclaims it, and the reclaim touches the watch. */
    for (mwatch_t *w = mc->watches; w != NULL && !mc->dirty_cas; w = w->cnext)
        expire_lookup(c->srv, w->key->dbnum, w->key->bytes, w->key->len, NULL);
    if (mc->dirty_exec || mc->dirty_cas) {
        if (mc->dirty_exec)
            resp_add_error(&c->out, EXECABORT_TEXT);
        else
            resp_add_null_array(&c->out);
        discard(c, mc);
        return;
    }
    /* Watching ends before the commands run: their own changes must not
     * count against a later transaction. */
    unwatch_all(c, mc);
    queued_t *q = mc->queue;
    size_t n = mc->n;
    /* The queue and its copies leave mc while they run: a command run
     * here may end or start the client's state (and the client may be
     * closed, not freed, meanwhile). */
    qblock_t *blocks = mc->arena;
    mc->arena = NULL;
    mc->queue = NULL;
    mc->n = mc->cap = mc->bytes = 0;
    mc->flags = 0;
    const cmd_def_t *cmd = c->cmd, *sub = c->sub;
    resp_add_array(&c->out, n);
    for (size_t i = 0; i < n; i += MULTI_PEEK) {
        size_t ahead = n - i < MULTI_PEEK ? n - i : MULTI_PEEK;
        /* As in a pipeline: the next commands start loading what they
         * will touch before the first of them runs. */
        if (ahead > 1)
            for (size_t j = i; j < i + ahead; j++)
                cmd_prefetch_queued(c, q[j].cmd, q[j].a);
        for (size_t j = i; j < i + ahead; j++)
            cmd_run_queued(c, q[j].cmd, q[j].a);
    }
    free(q);
    arena_release(mc, blocks);
    c->cmd = cmd;
    c->sub = sub;
    mc->active = mc->dirty_exec = mc->dirty_cas = false;
}

void multi_discard_proc(client_t *c, int argc, const arg_t *argv)
{
    if (!multi_active(c)) {
        resp_add_error(&c->out, "ERR DISCARD without MULTI");
        return;
    }
    discard(c, c->mstate);
    reply_ok(c);
}

void multi_watch_proc(client_t *c, int argc, const arg_t *argv)
{
    struct multi_client *mc =
        outside_multi(c, "ERR WATCH inside MULTI is not allowed");
    if (mc == NULL)
        return;
    /* No point in watching more once a watched key has changed. A key
     * already past its time is reclaimed before it is watched: as Redis's
     * WATCH, a key that had expired when watched does not doom EXEC by
     * expiring. */
    for (int i = 1; i < argc && !mc->dirty_cas; i++) {
        expire_lookup(c->srv, c->dbnum, argv[i].ptr, argv[i].len, NULL);
        if (watch_key(c, mc, &argv[i]) < 0) {
            resp_add_error(&c->out, ERRTEXT_NOMEM);
            return;
        }
    }
    reply_ok(c);
}

void multi_unwatch_proc(client_t *c, int argc, const arg_t *argv)
{
    if (c->mstate != NULL) {
        unwatch_all(c, c->mstate);
        c->mstate->dirty_cas = false;
    }
    reply_ok(c);
}

bool multi_is_exec(const cmd_def_t *d)
{
    return d->proc == multi_exec_proc;
}

bool multi_runs_now(const cmd_def_t *d)
{
    return d->proc == multi_exec_proc || d->proc == multi_discard_proc ||
           d->proc == multi_proc || d->proc == multi_watch_proc ||
           (d->flags & CMD_MULTI_NOW);
}
