/*
 * ks_model.h - the keyspace against an exact model: a sequence of
 * operations read from bytes (adds, deletes, lookups, renames, moves
 * between two databases, timeouts, active expiry, RANDOMKEY's pick, SCAN
 * calls), with resizes forced, paused and moved on by random amounts
 * between them, so that every operation also runs in the middle of a
 * resize. After each operation the sizes and the looked-up key agree with
 * the model, and regularly every key is walked once exactly; a SCAN that
 * completes has reported every key present for its whole run.
 *
 * Shared by tests/unit/test_keyspace.c (random bytes from fixed seeds) and
 * fuzz/fuzz_keyspace.c (libFuzzer's bytes). The includer may define
 * KS_MODEL_CHECK(cond) (cmocka's assert_true); the default aborts.
 */
#ifndef KS_MODEL_H
#define KS_MODEL_H

#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cf.h"
#include "keyspace.h"

#ifndef KS_MODEL_CHECK
#define KS_MODEL_CHECK(c)                                                      \
    do {                                                                       \
        if (!(c))                                                              \
            abort();                                                           \
    } while (0)
#endif

#define KSM_KEYS 300 /* the key names the operations pick from */

typedef struct ksm {
    const uint8_t *in;
    size_t len, pos;
    ks_db_t *db[2];
    int8_t where[KSM_KEYS]; /* -1 absent, else the database */
    int64_t when[KSM_KEYS]; /* -1: no timeout */
    size_t size[2];
    int64_t now;
    /* the SCAN under way on db[0] */
    bool scanning;
    uint64_t cursor;
    bool throughout[KSM_KEYS]; /* present since the scan began */
    bool reported[KSM_KEYS];
    /* a walk's tally */
    unsigned seen[KSM_KEYS];
} ksm_t;

static uint32_t ksm_byte(ksm_t *m)
{
    return m->pos < m->len ? m->in[m->pos++] : 0;
}

static uint32_t ksm_u16(ksm_t *m)
{
    uint32_t v = ksm_byte(m);
    return v | ksm_byte(m) << 8;
}

static size_t ksm_name(int k, char *buf)
{
    return (size_t)snprintf(buf, 16, "k%d", k);
}

/* The model's index of a reported key name. */
static int ksm_index(const void *key, size_t len)
{
    char buf[16];
    KS_MODEL_CHECK(len > 1 && len < sizeof(buf));
    memcpy(buf, key, len);
    buf[len] = '\0';
    KS_MODEL_CHECK(buf[0] == 'k');
    int k = atoi(buf + 1);
    KS_MODEL_CHECK(k >= 0 && k < KSM_KEYS);
    return k;
}

static cf_filter_t *ksm_filter(void)
{
    cf_params_t p;
    cf_params_default(&p);
    p.capacity = 8;
    cf_filter_t *f = NULL;
    return cf_create(&p, &f) == 0 ? f : NULL;
}

/* Key k leaves the model (deleted, renamed away, moved, expired). */
static void ksm_gone(ksm_t *m, int k)
{
    m->size[m->where[k]]--;
    m->where[k] = -1;
    m->when[k] = -1;
    m->throughout[k] = false;
}

static int ksm_on_seen(void *ctx, const void *key, size_t len,
                       const cf_filter_t *f)
{
    ksm_t *m = ctx;
    (void)f;
    m->seen[ksm_index(key, len)]++;
    return 0;
}

static int ksm_on_scan(void *ctx, const void *key, size_t len,
                       const cf_filter_t *f)
{
    ksm_t *m = ctx;
    (void)f;
    int k = ksm_index(key, len);
    KS_MODEL_CHECK(m->where[k] == 0); /* only what is there */
    m->reported[k] = true;
    return 0;
}

static bool ksm_on_expired(void *ctx, const void *key, size_t len,
                           cf_filter_t *f)
{
    ksm_t *m = ctx;
    int k = ksm_index(key, len);
    KS_MODEL_CHECK(m->where[k] >= 0 && m->when[k] >= 0 && m->when[k] <= m->now);
    ksm_gone(m, k);
    if (k % 2 == 0)
        return false;
    ks_free_removed(f); /* taken, as lazy freeing does */
    return true;
}

/* Every key of both databases walked once exactly, as the model has it. */
static void ksm_check_all(ksm_t *m)
{
    for (int d = 0; d < 2; d++) {
        memset(m->seen, 0, sizeof(m->seen));
        KS_MODEL_CHECK(ks_foreach(m->db[d], ksm_on_seen, m) == 0);
        size_t expires = 0;
        for (int k = 0; k < KSM_KEYS; k++) {
            KS_MODEL_CHECK(m->seen[k] == (m->where[k] == d ? 1u : 0u));
            expires += m->where[k] == d && m->when[k] >= 0;
        }
        KS_MODEL_CHECK(ks_size(m->db[d]) == m->size[d]);
        KS_MODEL_CHECK(ks_expires(m->db[d]) == expires);
    }
}

/* Forces, pauses or moves on a resize of db[0] or db[1]. */
static void ksm_resize_op(ksm_t *m, uint32_t b)
{
    ks_db_t *db = m->db[b & 1];
    switch ((b >> 1) % 4) {
    case 0: /* any size, any time: -EBUSY while one is under way */
        (void)ks_resize(db, (size_t)4 << (ksm_byte(m) % 9));
        break;
    case 1:
        ks_set_resizing((b >> 3) & 1);
        break;
    default:
        (void)ks_rehash(db, ksm_byte(m) % 8);
        break;
    }
}

static void ksm_op(ksm_t *m)
{
    uint32_t op = ksm_byte(m);
    int k = (int)(ksm_u16(m) % KSM_KEYS);
    int d = (int)(op >> 7); /* the database most operations use */
    char name[16], other[16];
    size_t len = ksm_name(k, name);
    ks_db_t *db = m->db[d];
    switch (op % 12) {
    case 0:
    case 1: {
        cf_filter_t *f = ksm_filter();
        KS_MODEL_CHECK(f != NULL);
        int rc = ks_add(db, name, len, &f);
        if (m->where[k] == d) {
            KS_MODEL_CHECK(rc == -EEXIST);
            cf_free(f);
        } else if (m->where[k] >= 0) {
            /* in the other database: leave the model single-homed */
            KS_MODEL_CHECK(rc == 0);
            KS_MODEL_CHECK(ks_del(db, name, len) == 1);
        } else {
            KS_MODEL_CHECK(rc == 0);
            m->where[k] = (int8_t)d;
            m->size[d]++;
        }
        break;
    }
    case 2: {
        int rc = ks_del(db, name, len);
        KS_MODEL_CHECK(rc == (m->where[k] == d));
        if (rc == 1)
            ksm_gone(m, k);
        break;
    }
    case 3: {
        int64_t when;
        cf_filter_t *f = ks_find(db, name, len, &when);
        KS_MODEL_CHECK((f != NULL) == (m->where[k] == d));
        KS_MODEL_CHECK(when == (f != NULL ? m->when[k] : -1));
        KS_MODEL_CHECK(ks_get(db, name, len) == f);
        break;
    }
    case 4: {
        int j = (int)(ksm_u16(m) % KSM_KEYS);
        size_t olen = ksm_name(j, other);
        int rc = ks_rename(db, name, len, other, olen);
        if (m->where[k] != d) {
            KS_MODEL_CHECK(rc == -ENOENT);
        } else if (j != k) {
            KS_MODEL_CHECK(rc == 0);
            /* to a SCAN, j is a new key and k a deleted one */
            int64_t when = m->when[k];
            ksm_gone(m, k);
            if (m->where[j] >= 0 && m->where[j] != d) /* single-homed */
                KS_MODEL_CHECK(ks_del(m->db[m->where[j]], other, olen) == 1);
            if (m->where[j] >= 0)
                ksm_gone(m, j);
            m->where[j] = (int8_t)d;
            m->size[d]++;
            m->when[j] = when;
        } else {
            KS_MODEL_CHECK(rc == 0);
        }
        break;
    }
    case 5: {
        int rc = ks_move(db, m->db[!d], name, len);
        if (m->where[k] != d) {
            KS_MODEL_CHECK(rc == -ENOENT);
        } else {
            KS_MODEL_CHECK(rc == 0);
            int64_t when = m->when[k];
            ksm_gone(m, k);
            m->where[k] = (int8_t)!d;
            m->size[!d]++;
            m->when[k] = when;
        }
        break;
    }
    case 6: {
        int64_t when = m->now + (int64_t)(ksm_byte(m) % 16);
        int rc = ks_set_expire(db, name, len, when);
        KS_MODEL_CHECK(rc == (m->where[k] == d ? 0 : -ENOENT));
        if (rc == 0)
            m->when[k] = when;
        break;
    }
    case 7: {
        int rc = ks_clear_expire(db, name, len);
        KS_MODEL_CHECK(rc == (m->where[k] == d && m->when[k] >= 0));
        if (rc == 1)
            m->when[k] = -1;
        break;
    }
    case 8: {
        m->now += ksm_byte(m) % 4;
        ks_expire_stats_t st;
        ks_expire_step(db, m->now, 1 + ksm_byte(m) % 16, 1 + ksm_byte(m) % 20,
                       ksm_on_expired, m, &st);
        KS_MODEL_CHECK(st.expired <= st.sampled);
        break;
    }
    case 9: {
        const void *key;
        size_t klen;
        uint64_t r = (uint64_t)ksm_u16(m) << 32 | ksm_u16(m) * 2654435761u;
        bool got = ks_random(db, r, &key, &klen);
        KS_MODEL_CHECK(got == (m->size[d] > 0));
        if (got)
            KS_MODEL_CHECK(m->where[ksm_index(key, klen)] == d);
        break;
    }
    case 10: /* one SCAN call on db[0], starting a scan if none runs */
        if (!m->scanning && (op & 0x40)) {
            /* a whole scan with nothing changing: every key, in whatever
             * state of a resize the table is */
            for (int i = 0; i < KSM_KEYS; i++)
                m->reported[i] = false;
            uint64_t c = 0;
            do
                c = ks_scan(m->db[0], c, 1 + ksm_byte(m) % 8, ksm_on_scan, m);
            while (c != 0);
            for (int i = 0; i < KSM_KEYS; i++)
                KS_MODEL_CHECK(m->reported[i] == (m->where[i] == 0));
            break;
        }
        if (!m->scanning) {
            m->scanning = true;
            m->cursor = 0;
            for (int i = 0; i < KSM_KEYS; i++) {
                m->throughout[i] = m->where[i] == 0;
                m->reported[i] = false;
            }
        }
        m->cursor =
            ks_scan(m->db[0], m->cursor, 1 + ksm_byte(m) % 8, ksm_on_scan, m);
        if (m->cursor == 0) {
            for (int i = 0; i < KSM_KEYS; i++)
                KS_MODEL_CHECK(!m->throughout[i] || m->reported[i]);
            m->scanning = false;
        }
        break;
    default:
        ksm_resize_op(m, ksm_byte(m));
        break;
    }
    KS_MODEL_CHECK(ks_size(m->db[0]) == m->size[0]);
    KS_MODEL_CHECK(ks_size(m->db[1]) == m->size[1]);
}

/* Runs the operations in[0..len) against two fresh databases. */
static void ksm_run(const uint8_t *in, size_t len)
{
    ksm_t *m = calloc(1, sizeof(*m));
    KS_MODEL_CHECK(m != NULL);
    m->in = in;
    m->len = len;
    m->db[0] = ks_db_new();
    m->db[1] = ks_db_new();
    KS_MODEL_CHECK(m->db[0] != NULL && m->db[1] != NULL);
    memset(m->where, -1, sizeof(m->where));
    for (int i = 0; i < KSM_KEYS; i++)
        m->when[i] = -1;
    ks_set_resizing(true);
    for (unsigned n = 0; m->pos < m->len; n++) {
        ksm_op(m);
        if (n % 64 == 63)
            ksm_check_all(m);
    }
    ksm_check_all(m);
    ks_set_resizing(true);
    /* settled, the walks still agree, and the memory is all given back */
    for (int d = 0; d < 2; d++)
        while (ks_rehash(m->db[d], SIZE_MAX))
            ;
    ksm_check_all(m);
    /* emptied key by key and settled, each is back to a new one's size */
    ks_db_t *fresh = ks_db_new();
    KS_MODEL_CHECK(fresh != NULL);
    char name[16];
    for (int k = 0; k < KSM_KEYS; k++)
        if (m->where[k] >= 0)
            KS_MODEL_CHECK(
                ks_del(m->db[m->where[k]], name, ksm_name(k, name)) == 1);
    for (int d = 0; d < 2; d++) {
        while (ks_rehash(m->db[d], SIZE_MAX))
            ;
        KS_MODEL_CHECK(ks_size(m->db[d]) == 0);
        KS_MODEL_CHECK(ks_bytes(m->db[d]) == ks_bytes(fresh));
    }
    ks_db_free(fresh);
    ks_db_free(m->db[0]);
    ks_db_free(m->db[1]);
    free(m);
}

#endif /* KS_MODEL_H */
