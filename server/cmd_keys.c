/*
 * cmd_keys.c - the keyspace commands (cmd_keys_table): DEL, UNLINK, EXISTS,
 * TYPE, KEYS, SCAN, RENAME, DBSIZE, FLUSHDB, FLUSHALL.
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
#include <sys/time.h>
#include <sys/utsname.h>
#include <unistd.h>

#include "cmd.h"
#include "errtext.h"
#include "expire.h"
#include "glob.h"
#include "log.h"
#include "server_int.h"

#define FILTER_TYPE "MBbloomCF"

/* ---- helpers ----------------------------------------------------------- */

/* ---- keyspace commands ------------------------------------------------- */

static void del_proc(client_t *c, int argc, const arg_t *argv)
{
    int64_t n = 0;
    for (int i = 1; i < argc; i++)
        if (expire_exists(c->srv, c->dbnum, argv[i].ptr, argv[i].len) &&
            ks_del(c->db, argv[i].ptr, argv[i].len) > 0) {
            server_key_changed(c->srv, c->dbnum, argv[i].ptr, argv[i].len);
            n++;
        }
    if (n > 0)
        server_dirty(c->srv, (uint64_t)n);
    resp_add_int(&c->out, n);
}

static void exists_proc(client_t *c, int argc, const arg_t *argv)
{
    int64_t n = 0;
    for (int i = 1; i < argc; i++)
        n += expire_exists(c->srv, c->dbnum, argv[i].ptr, argv[i].len);
    resp_add_int(&c->out, n);
}

static void type_proc(client_t *c, int argc, const arg_t *argv)
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

static void keys_proc(client_t *c, int argc, const arg_t *argv)
{
    keylist_t kl = {.now = expire_now_ms()};
    /* "*" matches everything: skip the matcher. */
    if (!(argv[1].len == 1 && argv[1].ptr[0] == '*'))
        kl.pattern = &argv[1];
    ks_foreach(c->db, collect_key, &kl);
    reply_keylist(c, &kl);
}

static void scan_proc(client_t *c, int argc, const arg_t *argv)
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

static void rename_proc(client_t *c, int argc, const arg_t *argv)
{
    /* an expired source is no key; an expired destination goes anyway */
    int rc = expire_exists(c->srv, c->dbnum, argv[1].ptr, argv[1].len)
                 ? ks_rename(c->db, argv[1].ptr, argv[1].len, argv[2].ptr,
                             argv[2].len)
                 : -ENOENT;
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

static void dbsize_proc(client_t *c, int argc, const arg_t *argv)
{
    resp_add_int(&c->out, (int64_t)ks_size(c->db));
}

static bool flush_args_ok(client_t *c, int argc, const arg_t *argv)
{
    if (argc > 2 || (argc == 2 && !arg_is(&argv[1], "async") &&
                     !arg_is(&argv[1], "sync"))) {
        reply_syntax_error(c);
        return false;
    }
    return true;
}

static void flushdb_proc(client_t *c, int argc, const arg_t *argv)
{
    if (!flush_args_ok(c, argc, argv))
        return;
    server_db_changing(c->srv, c->dbnum);
    server_dirty(c->srv, ks_size(c->db));
    ks_flush(c->db);
    reply_ok(c);
}

static void flushall_proc(client_t *c, int argc, const arg_t *argv)
{
    if (!flush_args_ok(c, argc, argv))
        return;
    server_t *s = c->srv;
    uint64_t n = 0;
    for (int i = 0; i < s->ndbs; i++) {
        server_db_changing(s, i);
        n += ks_size(s->dbs[i]);
        ks_flush(s->dbs[i]);
    }
    server_dirty(s, n);
    /* As Redis: a background save running now would write the old data
     * after the flush, and with save points the empty dataset is saved at
     * once, so a crash before the next save point cannot bring the flushed
     * filters back. FLUSHDB, like Redis's, saves nothing. */
    if (s->on_flushall != NULL)
        s->on_flushall(s);
    /* Redis counts a FLUSHALL as one change more, saved or not. */
    server_dirty(s, 1);
    reply_ok(c);
}

/* ---- the table --------------------------------------------------------- */

static const cmd_arg_t keys_multi[] = {
    {"key", "key", NULL, CMD_ARG_MULTIPLE, NULL}, CMD_ARG_END};
static const cmd_arg_t key_arg[] = {{"key", "key", NULL, 0, NULL}, CMD_ARG_END};
static const cmd_arg_t pattern_arg[] = {{"pattern", "pattern", NULL, 0, NULL},
                                        CMD_ARG_END};
static const cmd_arg_t scan_args[] = {
    {"cursor", "integer", NULL, 0, NULL},
    {"pattern", "pattern", "MATCH", CMD_ARG_OPTIONAL, NULL},
    {"count", "integer", "COUNT", CMD_ARG_OPTIONAL, NULL},
    {"type", "string", "TYPE", CMD_ARG_OPTIONAL, NULL},
    CMD_ARG_END};
static const cmd_arg_t rename_args[] = {{"key", "key", NULL, 0, NULL},
                                        {"newkey", "key", NULL, 0, NULL},
                                        CMD_ARG_END};
static const cmd_arg_t flush_mode[] = {
    {"async", "pure-token", "ASYNC", 0, NULL},
    {"sync", "pure-token", "SYNC", 0, NULL},
    CMD_ARG_END};
static const cmd_arg_t flush_args[] = {
    {"flush-type", "oneof", NULL, CMD_ARG_OPTIONAL, flush_mode}, CMD_ARG_END};

const cmd_def_t cmd_keys_table[] = {
    {.name = "del",
     .arity = -2,
     .flags = CMD_WRITE,
     .proc = del_proc,
     .first_key = 1,
     .last_key = -1,
     .key_step = 1,
     .group = "generic",
     .summary = "Deletes one or more keys.",
     .since = "1.0.0",
     .complexity = "O(N) where N is the number of keys that will be removed.",
     .args = keys_multi},
    {.name = "unlink",
     .arity = -2,
     .flags = CMD_WRITE | CMD_FAST,
     .proc = del_proc,
     .first_key = 1,
     .last_key = -1,
     .key_step = 1,
     .group = "generic",
     .summary = "Asynchronously deletes one or more keys.",
     .since = "4.0.0",
     .complexity = "O(1) for each key removed regardless of its size.",
     .args = keys_multi},
    {.name = "exists",
     .arity = -2,
     .flags = CMD_READONLY | CMD_FAST,
     .proc = exists_proc,
     .first_key = 1,
     .last_key = -1,
     .key_step = 1,
     .group = "generic",
     .summary = "Determines whether one or more keys exist.",
     .since = "1.0.0",
     .complexity = "O(N) where N is the number of keys to check.",
     .args = keys_multi},
    {.name = "type",
     .arity = 2,
     .flags = CMD_READONLY | CMD_FAST,
     .proc = type_proc,
     .first_key = 1,
     .last_key = 1,
     .key_step = 1,
     .group = "generic",
     .summary = "Determines the type of value stored at a key.",
     .since = "1.0.0",
     .complexity = "O(1)",
     .args = key_arg},
    {.name = "keys",
     .arity = 2,
     .flags = CMD_READONLY,
     .proc = keys_proc,
     .group = "generic",
     .summary = "Returns all key names that match a pattern.",
     .since = "1.0.0",
     .complexity = "O(N) with N being the number of keys in the database",
     .args = pattern_arg},
    {.name = "scan",
     .arity = -2,
     .flags = CMD_READONLY,
     .proc = scan_proc,
     .group = "generic",
     .summary = "Iterates over the key names in the database.",
     .since = "2.8.0",
     .complexity = "O(1) for every call. O(N) for a complete iteration.",
     .args = scan_args},
    {.name = "rename",
     .arity = 3,
     .flags = CMD_WRITE,
     .proc = rename_proc,
     .first_key = 1,
     .last_key = 2,
     .key_step = 1,
     .group = "generic",
     .summary = "Renames a key and overwrites the destination.",
     .since = "1.0.0",
     .complexity = "O(1)",
     .args = rename_args},
    {.name = "dbsize",
     .arity = 1,
     .flags = CMD_READONLY | CMD_FAST,
     .proc = dbsize_proc,
     .group = "server",
     .summary = "Returns the number of keys in the database.",
     .since = "1.0.0",
     .complexity = "O(1)"},
    {.name = "flushdb",
     .arity = -1,
     .flags = CMD_WRITE,
     .proc = flushdb_proc,
     .group = "server",
     .summary = "Removes all keys from the current database.",
     .since = "1.0.0",
     .complexity =
         "O(N) where N is the number of keys in the selected database",
     .args = flush_args},
    {.name = "flushall",
     .arity = -1,
     .flags = CMD_WRITE,
     .proc = flushall_proc,
     .group = "server",
     .summary = "Removes all keys from all databases.",
     .since = "1.0.0",
     .complexity = "O(N) where N is the total number of keys in all databases",
     .args = flush_args},
    CMD_DEF_END,
};
