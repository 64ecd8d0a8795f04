/*
 * cmd_keys.c - the keyspace commands (entries in cmdtab.c): DEL, UNLINK,
 * EXISTS, TYPE, KEYS, SCAN, RENAME, DBSIZE, FLUSHDB, FLUSHALL, and COPY,
 * RENAMENX, MOVE, SWAPDB, DUMP, RESTORE, TOUCH, RANDOMKEY, WAIT (OBJECT's procs
 * are cmd_object.c's).
 */
#include "cmd_keys.h"

#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>
#include <unistd.h>

#include "cmd.h"
#include "conn.h"
#include "dump.h"
#include "errtext.h"
#include "expire.h"
#include "glob.h"
#include "lazyfree.h"
#include "log.h"
#include "persist.h"
#include "propagate.h"
#include "reply.h"
#include "server_int.h"

#define FILTER_TYPE "MBbloomCF"

/* ---- helpers ----------------------------------------------------------- */

/* The filter under key in database dbnum, or NULL; a key past its time
 * is deleted on the way (expire_lookup()), so every command here sees it
 * gone, as Redis's lookups do. */
static cf_filter_t *live(server_t *s, int dbnum, const arg_t *key)
{
    return expire_lookup(s, dbnum, key->ptr, key->len, NULL);
}

/* Gives key dst of database ddb the timeout key src of database sdb has,
 * after a COPY (RENAME, RENAMENX and MOVE keep the entry, and with it the
 * time). 0, or -ENOMEM. */
static int carry_ttl(server_t *s, int sdb, const arg_t *src, int ddb,
                     const arg_t *dst)
{
    int64_t when = expire_get(s, sdb, src->ptr, src->len);
    if (when < 0)
        return 0;
    return expire_set(s, ddb, dst->ptr, dst->len, when);
}

/* A database index argument, as Redis's getIntFromObjectOrReply() and
 * selectDb() take it: false after the error reply (notint when it is not
 * an int, or Redis's generic texts for NULL; out of range otherwise). */
static bool parse_db(client_t *c, const arg_t *a, const char *notint, int *db)
{
    long long v;
    if (!arg_ll(a, &v)) {
        resp_add_error(&c->out, notint != NULL ? notint : ERRTEXT_NOT_INTEGER);
        return false;
    }
    if (v < INT_MIN || v > INT_MAX) {
        resp_add_error(&c->out, notint != NULL
                                    ? notint
                                    : "ERR value is out of range, value "
                                      "must between -2147483648 and "
                                      "2147483647");
        return false;
    }
    if (v < 0 || v >= c->srv->ndbs) {
        resp_add_error(&c->out, "ERR DB index is out of range");
        return false;
    }
    *db = (int)v;
    return true;
}

static bool same_name(const arg_t *a, const arg_t *b)
{
    return a->len == b->len &&
           (a->len == 0 || memcmp(a->ptr, b->ptr, a->len) == 0);
}

/* The refusal of a filter that does not fit: Redis's OOM error under
 * maxmemory, ours when the machine's memory is the bound. */
static void reply_no_room(client_t *c)
{
    resp_add_error(&c->out, server_cfg(c->srv)->maxmemory != 0 ? ERRTEXT_OOM
                                                               : ERRTEXT_NOMEM);
}

/* The cap on the tables of a filter about to be made (COPY, RESTORE): what
 * the memory bound leaves. Returns false after an error reply when nothing
 * is left. */
static bool new_filter_limits(client_t *c, cf_limits_t *lim, uint64_t *room)
{
    *room = server_memory_headroom(c->srv);
    if (*room == 0) {
        reply_no_room(c);
        return false;
    }
    lim->max_bytes = *room == UINT64_MAX ? 0 : *room;
    return true;
}

/* ---- keyspace commands ------------------------------------------------- */

/* DEL and UNLINK: lazy frees the filters off the loop. */
static void del_keys(client_t *c, int argc, const arg_t *argv, bool lazy)
{
    int64_t n = 0;
    for (int i = 1; i < argc; i++)
        if (expire_exists(c->srv, c->dbnum, argv[i].ptr, argv[i].len) &&
            server_del_key(c->db, argv[i].ptr, argv[i].len, lazy) > 0) {
            server_key_changed(c->srv, c->dbnum, argv[i].ptr, argv[i].len);
            n++;
        }
    if (n > 0)
        server_dirty(c->srv, (uint64_t)n);
    resp_add_int(&c->out, n);
}

void cmd_keys_del_proc(client_t *c, int argc, const arg_t *argv)
{
    del_keys(c, argc, argv, c->srv->cfg->lazyfree_lazy_user_del);
}

void cmd_keys_unlink_proc(client_t *c, int argc, const arg_t *argv)
{
    del_keys(c, argc, argv, true);
}

void cmd_keys_exists_proc(client_t *c, int argc, const arg_t *argv)
{
    int64_t n = 0;
    for (int i = 1; i < argc; i++)
        n += expire_exists(c->srv, c->dbnum, argv[i].ptr, argv[i].len);
    resp_add_int(&c->out, n);
}

void cmd_keys_type_proc(client_t *c, int argc, const arg_t *argv)
{
    bool found = expire_exists(c->srv, c->dbnum, argv[1].ptr, argv[1].len);
    resp_add_simple(&c->out, found ? FILTER_TYPE : "none");
}

typedef struct keylist {
    const arg_t *pattern; /* or NULL */
    int64_t now;          /* keys past this time are left out */
    const void **keys;
    size_t *lens;
    size_t n, cap;
    bool failed;
} keylist_t;

static int collect_key(void *ctx, const void *key, size_t len,
                       const cf_filter_t *f)
{
    keylist_t *kl = ctx;
    if (kl->failed)
        return 0;
    int64_t when = ks_when(f);
    if (when >= 0 && when <= kl->now)
        return 0;
    if (kl->pattern != NULL &&
        !glob_match(kl->pattern->ptr, kl->pattern->len, key, len, false))
        return 0;
    if (kl->n == kl->cap) {
        size_t ncap = kl->cap ? kl->cap * 2 : 64;
        const void **nk = realloc(kl->keys, ncap * sizeof(*nk));
        if (nk != NULL)
            kl->keys = nk;
        size_t *nl = realloc(kl->lens, ncap * sizeof(*nl));
        if (nl != NULL)
            kl->lens = nl;
        if (nk == NULL || nl == NULL) {
            kl->failed = true;
            return 0;
        }
        kl->cap = ncap;
    }
    kl->keys[kl->n] = key;
    kl->lens[kl->n] = len;
    kl->n++;
    return 0;
}

static void reply_keylist(client_t *c, keylist_t *kl)
{
    if (kl->failed) {
        resp_add_error(&c->out, ERRTEXT_NOMEM);
    } else {
        resp_add_array(&c->out, kl->n);
        for (size_t i = 0; i < kl->n; i++)
            resp_add_bulk(&c->out, kl->keys[i], kl->lens[i]);
    }
    free(kl->keys);
    free(kl->lens);
}

void cmd_keys_keys_proc(client_t *c, int argc, const arg_t *argv)
{
    keylist_t kl = {.now = expire_now_ms()};
    /* "*" matches everything: skip the matcher. */
    if (!(argv[1].len == 1 && argv[1].ptr[0] == '*'))
        kl.pattern = &argv[1];
    ks_foreach(c->db, collect_key, &kl);
    reply_keylist(c, &kl);
}

void cmd_keys_scan_proc(client_t *c, int argc, const arg_t *argv)
{
    uint64_t cursor;
    if (!arg_u64(&argv[1], &cursor)) {
        resp_add_error(&c->out, "ERR invalid cursor");
        return;
    }
    keylist_t kl = {.now = expire_now_ms()};
    long long count = 10;
    bool type_mismatch = false;
    for (int i = 2; i < argc; i += 2) {
        if (i + 1 >= argc) {
            reply_syntax_error(c);
            return;
        }
        if (arg_is(&argv[i], "match")) {
            if (!(argv[i + 1].len == 1 && argv[i + 1].ptr[0] == '*'))
                kl.pattern = &argv[i + 1];
            else
                kl.pattern = NULL;
        } else if (arg_is(&argv[i], "count")) {
            if (!arg_ll(&argv[i + 1], &count)) {
                reply_not_integer(c);
                return;
            }
            if (count < 1) {
                reply_syntax_error(c);
                return;
            }
        } else if (arg_is(&argv[i], "type")) {
            type_mismatch = !arg_is(&argv[i + 1], "mbbloomcf");
        } else {
            reply_syntax_error(c);
            return;
        }
    }
    uint64_t next = ks_scan(c->db, cursor, (size_t)count, collect_key, &kl);
    if (type_mismatch)
        kl.n = 0;
    char buf[24];
    int n = snprintf(buf, sizeof(buf), "%" PRIu64, next);
    if (kl.failed) {
        reply_keylist(c, &kl);
        return;
    }
    resp_add_array(&c->out, 2);
    resp_add_bulk(&c->out, buf, (size_t)n);
    reply_keylist(c, &kl);
}

void cmd_keys_rename_proc(client_t *c, int argc, const arg_t *argv)
{
    /* an expired source is no key; an expired destination goes anyway */
    cf_filter_t *replaced = NULL;
    int rc = expire_exists(c->srv, c->dbnum, argv[1].ptr, argv[1].len)
                 ? ks_rename_take(c->db, argv[1].ptr, argv[1].len, argv[2].ptr,
                                  argv[2].len, &replaced)
                 : -ENOENT;
    /* The filter it replaced is a server-side deletion, as Redis's
     * RENAME deletes its destination first. */
    if (replaced != NULL) {
        if (c->srv->cfg->lazyfree_lazy_server_del)
            lazyfree_filter(replaced);
        else
            ks_free_removed(replaced);
    }
    if (rc == -ENOENT) {
        resp_add_error(&c->out, "ERR no such key");
        return;
    }
    if (rc < 0) {
        resp_add_error(&c->out, ERRTEXT_NOMEM);
        return;
    }
    server_key_changed(c->srv, c->dbnum, argv[1].ptr, argv[1].len);
    server_key_changed(c->srv, c->dbnum, argv[2].ptr, argv[2].len);
    server_dirty(c->srv, 1);
    reply_ok(c);
}

void cmd_keys_dbsize_proc(client_t *c, int argc, const arg_t *argv)
{
    resp_add_int(&c->out, (int64_t)ks_size(c->db));
}

/* FLUSHDB's and FLUSHALL's flag: 1 for ASYNC, 0 for SYNC, the
 * lazyfree-lazy-user-flush setting without one; -1 (replied) otherwise. */
static int flush_mode(client_t *c, int argc, const arg_t *argv)
{
    if (argc == 1)
        return c->srv->cfg->lazyfree_lazy_user_flush;
    if (argc == 2 && arg_is(&argv[1], "async"))
        return 1;
    if (argc == 2 && arg_is(&argv[1], "sync"))
        return 0;
    reply_syntax_error(c);
    return -1;
}

void cmd_keys_flushdb_proc(client_t *c, int argc, const arg_t *argv)
{
    int lazy = flush_mode(c, argc, argv);
    if (lazy < 0)
        return;
    server_db_changing(c->srv, c->dbnum);
    server_dirty(c->srv, server_flush(c->srv, c->dbnum, lazy));
    propagate_force(c->srv); /* logged even when empty, as Redis 7.0 */
    reply_ok(c);
}

void cmd_keys_flushall_proc(client_t *c, int argc, const arg_t *argv)
{
    int lazy = flush_mode(c, argc, argv);
    if (lazy < 0)
        return;
    server_t *s = c->srv;
    for (int i = 0; i < s->ndbs; i++)
        server_db_changing(s, i);
    server_dirty(s, server_flush(s, -1, lazy));
    /* As Redis: a background save running now would write the old data
     * after the flush, and with save points the empty dataset is saved at
     * once, so a crash before the next save point cannot bring the flushed
     * filters back. FLUSHDB, like Redis's, saves nothing. */
    if (s->persist != NULL)
        persist_on_flushall(s);
    /* Redis counts a FLUSHALL as one change more, saved or not. */
    server_dirty(s, 1);
    reply_ok(c);
}

/* COPY source destination [DB destination-db] [REPLACE] */
void cmd_keys_copy_proc(client_t *c, int argc, const arg_t *argv)
{
    int dbnum = c->dbnum;
    bool replace = false;
    for (int i = 3; i < argc; i++) {
        if (arg_is(&argv[i], "replace")) {
            replace = true;
        } else if (arg_is(&argv[i], "db") && i + 1 < argc) {
            if (!parse_db(c, &argv[++i], NULL, &dbnum))
                return;
        } else {
            reply_syntax_error(c);
            return;
        }
    }
    ks_db_t *dst = c->srv->dbs[dbnum];
    if (dst == c->db && same_name(&argv[1], &argv[2])) {
        resp_add_error(&c->out,
                       "ERR source and destination objects are the same");
        return;
    }
    const cf_filter_t *src = live(c->srv, c->dbnum, &argv[1]);
    if (src == NULL || (!replace && live(c->srv, dbnum, &argv[2]) != NULL)) {
        resp_add_int(&c->out, 0);
        return;
    }
    cf_limits_t lim;
    uint64_t room;
    cf_filter_t *f = NULL;
    if (!new_filter_limits(c, &lim, &room))
        return;
    if (dump_clone(src, &lim, &f) != 0 || cf_size_bytes(f) > room) {
        cf_free(f);
        reply_no_room(c);
        return;
    }
    server_del_key(dst, argv[2].ptr, argv[2].len,
                   c->srv->cfg->lazyfree_lazy_server_del);
    if (ks_add(dst, argv[2].ptr, argv[2].len, &f) != 0) {
        cf_free(f);
        resp_add_error(&c->out, ERRTEXT_NOMEM);
        return;
    }
    if (carry_ttl(c->srv, c->dbnum, &argv[1], dbnum, &argv[2]) != 0) {
        ks_del(dst, argv[2].ptr, argv[2].len);
        resp_add_error(&c->out, ERRTEXT_NOMEM);
        return;
    }
    server_key_changed(c->srv, dbnum, argv[2].ptr, argv[2].len);
    server_dirty(c->srv, 1);
    resp_add_int(&c->out, 1);
}

void cmd_keys_renamenx_proc(client_t *c, int argc, const arg_t *argv)
{
    if (live(c->srv, c->dbnum, &argv[1]) == NULL) {
        resp_add_error(&c->out, "ERR no such key");
        return;
    }
    /* Redis answers 0 for the same name too: the key exists. */
    if (live(c->srv, c->dbnum, &argv[2]) != NULL) {
        resp_add_int(&c->out, 0);
        return;
    }
    int rc =
        ks_rename(c->db, argv[1].ptr, argv[1].len, argv[2].ptr, argv[2].len);
    if (rc != 0) {
        resp_add_error(&c->out, ERRTEXT_NOMEM);
        return;
    }
    server_key_changed(c->srv, c->dbnum, argv[1].ptr, argv[1].len);
    server_key_changed(c->srv, c->dbnum, argv[2].ptr, argv[2].len);
    server_dirty(c->srv, 1);
    resp_add_int(&c->out, 1);
}

void cmd_keys_move_proc(client_t *c, int argc, const arg_t *argv)
{
    int dbnum;
    if (!parse_db(c, &argv[2], NULL, &dbnum))
        return;
    if (dbnum == c->dbnum) {
        resp_add_error(&c->out,
                       "ERR source and destination objects are the same");
        return;
    }
    ks_db_t *dst = c->srv->dbs[dbnum];
    if (live(c->srv, c->dbnum, &argv[1]) == NULL ||
        live(c->srv, dbnum, &argv[1]) != NULL) {
        resp_add_int(&c->out, 0);
        return;
    }
    if (ks_move(c->db, dst, argv[1].ptr, argv[1].len) != 0) {
        resp_add_int(&c->out, 0);
        return;
    }
    server_key_changed(c->srv, c->dbnum, argv[1].ptr, argv[1].len);
    server_key_changed(c->srv, dbnum, argv[1].ptr, argv[1].len);
    server_dirty(c->srv, 1);
    resp_add_int(&c->out, 1);
}

void cmd_keys_swapdb_proc(client_t *c, int argc, const arg_t *argv)
{
    int a, b;
    if (!parse_db(c, &argv[1], "ERR invalid first DB index", &a) ||
        !parse_db(c, &argv[2], "ERR invalid second DB index", &b))
        return;
    server_t *s = c->srv;
    if (a != b) {
        server_dbs_swapping(s, a, b);
        ks_db_t *t = s->dbs[a];
        s->dbs[a] = s->dbs[b];
        s->dbs[b] = t;
        /* A client keeps its number: it sees the other contents now. */
        for (client_t *cl = conn_next_client(s, NULL); cl != NULL;
             cl = conn_next_client(s, cl))
            cl->db = s->dbs[cl->dbnum];
        c->db = s->dbs[c->dbnum];
    }
    server_dirty(s, 1);
    reply_ok(c);
}

void cmd_keys_dump_proc(client_t *c, int argc, const arg_t *argv)
{
    const cf_filter_t *f = live(c->srv, c->dbnum, &argv[1]);
    uint8_t *p;
    size_t len;
    if (f == NULL) {
        resp_add_null(&c->out);
        return;
    }
    if (dump_encode(f, &p, &len) != 0) {
        resp_add_error(&c->out, ERRTEXT_NOMEM);
        return;
    }
    resp_add_bulk(&c->out, p, len);
    free(p);
}

/* A RESTORE with a relative ttl is logged with the absolute time it gave
 * and ABSTTL, as Redis logs it. */
static void log_absttl(client_t *c, int argc, int64_t at)
{
    if (!propagate_on(c->srv))
        return;
    char buf[24];
    int n = snprintf(buf, sizeof(buf), "%lld", (long long)at);
    propagate_rewrite_arg(c->srv, 2, &(arg_t){buf, (size_t)n});
    propagate_rewrite_arg(c->srv, argc, &(arg_t){"ABSTTL", 6});
}

/* RESTORE key ttl serialized-value [REPLACE] [ABSTTL] [IDLETIME seconds]
 * [FREQ frequency], checked in Redis's order. IDLETIME and FREQ are
 * checked and dropped: no access time or frequency is kept per key. */
void cmd_keys_restore_proc(client_t *c, int argc, const arg_t *argv)
{
    bool replace = false, absttl = false, idle = false, freq = false;
    long long ttl, v;
    for (int i = 4; i < argc; i++) {
        bool more = i + 1 < argc;
        if (arg_is(&argv[i], "replace")) {
            replace = true;
        } else if (arg_is(&argv[i], "absttl")) {
            absttl = true;
        } else if (arg_is(&argv[i], "idletime") && more && !freq) {
            if (!arg_ll(&argv[++i], &v)) {
                reply_not_integer(c);
                return;
            }
            if (v < 0) {
                resp_add_error(&c->out,
                               "ERR Invalid IDLETIME value, must be >= 0");
                return;
            }
            idle = true;
        } else if (arg_is(&argv[i], "freq") && more && !idle) {
            if (!arg_ll(&argv[++i], &v)) {
                reply_not_integer(c);
                return;
            }
            if (v < 0 || v > 255) {
                resp_add_error(
                    &c->out, "ERR Invalid FREQ value, must be >= 0 and <= 255");
                return;
            }
            freq = true;
        } else {
            reply_syntax_error(c);
            return;
        }
    }
    if (!replace && live(c->srv, c->dbnum, &argv[1]) != NULL) {
        resp_add_error(&c->out, "BUSYKEY Target key name already exists.");
        return;
    }
    if (!arg_ll(&argv[2], &ttl)) {
        reply_not_integer(c);
        return;
    }
    if (ttl < 0) {
        resp_add_error(&c->out, "ERR Invalid TTL value, must be >= 0");
        return;
    }
    if (!dump_verify(argv[3].ptr, argv[3].len)) {
        resp_add_error(&c->out,
                       "ERR DUMP payload version or checksum are wrong");
        return;
    }
    cf_limits_t lim;
    uint64_t room;
    cf_filter_t *f = NULL;
    if (!new_filter_limits(c, &lim, &room))
        return;
    int rc = dump_decode(argv[3].ptr, argv[3].len, &lim, &f);
    if (rc == 0 && cf_size_bytes(f) > room) {
        cf_free(f);
        rc = -ENOMEM;
    }
    if (rc != 0) {
        if (rc == -ENOMEM)
            reply_no_room(c);
        else
            resp_add_error(&c->out, "ERR Bad data format");
        return;
    }
    bool deleted =
        replace && server_del_key(c->db, argv[1].ptr, argv[1].len,
                                  c->srv->cfg->lazyfree_lazy_server_del) > 0;
    /* A relative ttl past INT64_MAX from now wraps in Redis and so counts
     * as a time already past; here it is that without the overflow. */
    int64_t now = expire_now_ms(), at = ttl;
    bool past = !absttl && ttl > INT64_MAX - now;
    if (ttl != 0 && !absttl && !past)
        at = now + ttl;
    /* A timeout already past: the key is not made, but one it replaced is
     * gone (Redis counts that as a change and a DEL). */
    if ((past || (at != 0 && at <= now)) && !c->srv->loading) {
        cf_free(f);
        if (deleted) {
            server_key_changed(c->srv, c->dbnum, argv[1].ptr, argv[1].len);
            server_dirty(c->srv, 1);
            propagate_replace(c->srv, 2, (const arg_t[]){{"DEL", 3}, argv[1]});
        }
        reply_ok(c);
        return;
    }
    if (ks_add(c->db, argv[1].ptr, argv[1].len, &f) != 0) {
        cf_free(f);
        if (deleted) {
            server_key_changed(c->srv, c->dbnum, argv[1].ptr, argv[1].len);
            server_dirty(c->srv, 1);
        }
        resp_add_error(&c->out, ERRTEXT_NOMEM);
        return;
    }
    if (at != 0 &&
        expire_set(c->srv, c->dbnum, argv[1].ptr, argv[1].len, at) != 0) {
        ks_del(c->db, argv[1].ptr, argv[1].len);
        resp_add_error(&c->out, ERRTEXT_NOMEM);
        return;
    }
    if (at != 0 && !absttl)
        log_absttl(c, argc, at);
    server_key_changed(c->srv, c->dbnum, argv[1].ptr, argv[1].len);
    server_dirty(c->srv, 1);
    reply_ok(c);
}

void cmd_keys_randomkey_proc(client_t *c, int argc, const arg_t *argv)
{
    const void *key;
    size_t len;
    /* A key past its time is deleted when drawn and another is drawn, as
     * Redis's dbRandomKey() does: each miss removes a key, so this ends.
     * During CLIENT PAUSE nothing is deleted, so after 100 misses the last
     * key drawn is the answer, as Redis 7.2 answers then. */
    for (int misses = 0; ks_random(c->db, server_seed(c->srv), &key, &len);
         misses++) {
        arg_t k = {key, len};
        if (live(c->srv, c->dbnum, &k) != NULL ||
            (misses >= 100 && server_writes_paused(c->srv))) {
            resp_add_bulk(&c->out, key, len);
            return;
        }
    }
    resp_add_null(&c->out);
}

/* WAIT numreplicas timeout: there are no replicas, so none acknowledges,
 * at once. */
void cmd_keys_wait_proc(client_t *c, int argc, const arg_t *argv)
{
    long long n, timeout;
    if (!arg_ll(&argv[1], &n)) {
        reply_not_integer(c);
        return;
    }
    if (!arg_ll(&argv[2], &timeout)) {
        resp_add_error(&c->out,
                       "ERR timeout is not an integer or out of range");
        return;
    }
    if (timeout < 0) {
        resp_add_error(&c->out, "ERR timeout is negative");
        return;
    }
    resp_add_int(&c->out, 0);
}
